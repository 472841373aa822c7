/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps, walked over a range: the daemon's registration checks
 * (emu/daemon/verbs/mr.c) and the shim's choice of pages to share with the
 * daemon (verbs-shim/mr_share.c) read it the same way.
 */
#ifndef UROCE_COMMON_PROCMAPS_H
#define UROCE_COMMON_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of a maps file. */
struct common_maps_line {
	uint64_t lo, hi, off, inode;
	unsigned maj, min;
	char perms[8];
	const char *path; /* "" for none; the start of a path that did not fit the line buffer */
};

/*
 * Whether [addr, addr+len) of process pid (0: this process) is covered by
 * mappings without a hole, each of which ok(line, start of the part of the
 * range it covers, arg) accepts: 0, -EFAULT (a hole or a mapping refused),
 * -ESRCH (no such process) or another -errno of opening the file.
 */
int common_maps_walk(pid_t pid, uint64_t addr, uint64_t len,
		     bool (*ok)(const struct common_maps_line *m, uint64_t cur, const void *arg),
		     const void *arg);

#endif
