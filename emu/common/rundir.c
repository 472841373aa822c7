/* SPDX-License-Identifier: MIT */
/*
 * The rundir rule (see rundir.h): resolution of the directory,
 * its creation with safe permissions, socket paths, and liveness probes.
 */
#define _GNU_SOURCE
#include "rundir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int common_rundir_resolve(const char *explicit_dir, char *buf, size_t len)
{
	const char *env;
	int n;

	if (explicit_dir && *explicit_dir)
		n = snprintf(buf, len, "%s", explicit_dir);
	else if ((env = getenv("UROCE_RUNDIR")) && *env)
		n = snprintf(buf, len, "%s", env);
	else if ((env = getenv("XDG_RUNTIME_DIR")) && *env)
		n = snprintf(buf, len, "%s/uroce", env);
	else
		n = snprintf(buf, len, "/tmp/uroce-%u", (unsigned)getuid());
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* Strip trailing slashes, but keep "/". */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return 0;
}

static int check_dir(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != getuid() && st.st_uid != 0)
		return -EPERM;
	if (common_rundir_unsafe_mode(st.st_mode))
		return -EPERM;
	return 0;
}

int common_rundir_unsafe_mode(unsigned mode)
{
	/*
	 * Others who may write here could put their socket in place of ours
	 * (clients check every daemon's uid, but would lose the device). A
	 * shared directory must be sticky, as /tmp is: then only a file's
	 * owner removes or renames it.
	 */
	return (mode & (S_IWGRP | S_IWOTH)) && !(mode & S_ISVTX);
}

int common_rundir_prepare(const char *dir)
{
	char path[256];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	/* Create missing parents (0700 like the leaf: they are ours). */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	return check_dir(path);
}

int common_rundir_sock_path(const char *dir, const char *name, char *buf, size_t len)
{
	struct sockaddr_un sun;
	int n = snprintf(buf, len, "%s/%s.sock", dir, name);

	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int common_rundir_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= 64 || name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

int common_rundir_connect(const char *sock_path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(sock_path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		int err = -errno;

		close(fd);
		return err;
	}
	/*
	 * Trust only a daemon of our own user or root: a program opening a
	 * device lets the daemon read and write its memory (PR_SET_PTRACER),
	 * so a socket another user put in a shared directory is not a device.
	 */
	{
		struct ucred cred;
		socklen_t len = sizeof(cred);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
		    (cred.uid != getuid() && cred.uid != 0)) {
			close(fd);
			return -EPERM;
		}
	}
	return fd;
}

int common_rundir_probe(const char *sock_path)
{
	int fd = common_rundir_connect(sock_path);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (fd == -EPERM) /* live, but another user's */
		return 1;
	if (fd == -ECONNREFUSED || fd == -ENOENT)
		return 0;
	return fd;
}
