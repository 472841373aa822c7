/* SPDX-License-Identifier: MIT */
/*
 * The rundir rule shared by the daemon and the CLI: where device sockets
 * live, how a socket path is built from a device name, and how to tell a
 * live device from a stale socket file. The shim applies the same rule
 * (verbs-shim/client.c) without linking this file.
 */
#ifndef UROCE_COMMON_RUNDIR_H
#define UROCE_COMMON_RUNDIR_H

#include <stddef.h>

/*
 * Resolve the run directory into buf: explicit (may be NULL), else
 * $UROCE_RUNDIR, else $XDG_RUNTIME_DIR/uroce, else /tmp/uroce-<uid>.
 * Returns 0, or -ENAMETOOLONG.
 */
int common_rundir_resolve(const char *explicit_dir, char *buf, size_t len);

/*
 * Create the run directory (mode 0700, parents as needed) or check the
 * existing one: it must be a directory (not a symlink) owned by us or by
 * root, and not writable by others unless sticky (common_rundir_unsafe_mode).
 * 0 or -errno (-EPERM for a foreign or unsafe one).
 */
int common_rundir_prepare(const char *dir);

/* 1 when a directory of this st_mode lets others replace our files: group-
 * or world-writable without the sticky bit. */
int common_rundir_unsafe_mode(unsigned mode);

/* Build "<dir>/<name>.sock" into buf. 0 or -ENAMETOOLONG (sun_path is 108). */
int common_rundir_sock_path(const char *dir, const char *name, char *buf, size_t len);

/* 1 if name is a valid device name: 1..63 of [A-Za-z0-9_.-], no leading '.'. */
int common_rundir_valid_name(const char *name);

/*
 * Probe a socket path: 1 when a daemon accepts connections there (live,
 * also another user's),
 * 0 when nothing listens (absent or stale file), -errno on other errors.
 */
int common_rundir_probe(const char *sock_path);

/* Connect a SOCK_SEQPACKET|SOCK_CLOEXEC socket to path. fd or -errno;
 * -EPERM when the daemon there is neither of our user nor root (it is not
 * trusted with the memory of the programs that would open it). */
int common_rundir_connect(const char *sock_path);

#endif
