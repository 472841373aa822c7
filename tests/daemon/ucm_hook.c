/* SPDX-License-Identifier: MIT */
/*
 * ucm_hook: the contract between the shim's libc hooks (interpose.c) and
 * the RDMA CM device emulation (ucm.c), checked on the real emulation. Run
 * under LD_PRELOAD=liburoce.so with one live device: every open-family call
 * (open, open64, openat, openat64, the four _FORTIFY_SOURCE entry points,
 * fopen and fopen64) of /dev/infiniband/rdma_cm gives an event channel fd,
 * which fstat calls a character device (as librdmacm's open_cdev checks),
 * with the open(2) flags applied (O_CLOEXEC, O_NONBLOCK); a channel needs
 * O_RDWR (else -1/EACCES); other paths go on to libc; and the sysfs view has
 * class/misc/rdma_cm/abi_version (RDMA_USER_CM_ABI_VERSION), readable with
 * open and with the shim's ibv_read_sysfs_file as librdmacm reads it.
 * Prints one "ok:" or "FAIL:" line per check; exit 1 when one failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#define UCM_PATH "/dev/infiniband/rdma_cm"

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static int fails;

static void check(int cond, const char *what)
{
	printf("%s: %s\n", cond ? "ok" : "FAIL", what);
	if (!cond)
		fails++;
}

/* Is fd an event channel with these flags? (fstat: a character device.) */
static void check_open(const char *what, int fd, int cloexec, int nonblock)
{
	struct stat st;
	char msg[160];
	int ok = fd >= 0 && !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
		 !!(fcntl(fd, F_GETFD) & FD_CLOEXEC) == cloexec &&
		 !!(fcntl(fd, F_GETFL) & O_NONBLOCK) == nonblock;

	snprintf(msg, sizeof(msg), "%s(" UCM_PATH "): a character device, flags applied", what);
	check(ok, msg);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	int (*read_sysfs)(const char *, const char *, char *, size_t);
	const char *(*sysfs_path)(void);
	char buf[32], want[32];
	FILE *f;
	int fd, n;

	check_open("open", open(UCM_PATH, O_RDWR | O_CLOEXEC), 1, 0);
	check_open("open64", open64(UCM_PATH, O_RDWR | O_NONBLOCK), 0, 1);
	check_open("openat", openat(AT_FDCWD, UCM_PATH, O_RDWR), 0, 0);
	check_open("openat64", openat64(AT_FDCWD, UCM_PATH, O_RDWR | O_CLOEXEC), 1, 0);
	check_open("__open_2", __open_2(UCM_PATH, O_RDWR), 0, 0);
	check_open("__open64_2", __open64_2(UCM_PATH, O_RDWR), 0, 0);
	check_open("__openat_2", __openat_2(AT_FDCWD, UCM_PATH, O_RDWR), 0, 0);
	check_open("__openat64_2", __openat64_2(AT_FDCWD, UCM_PATH, O_RDWR), 0, 0);
	f = fopen(UCM_PATH, "r+e");
	check_open("fopen", f ? fileno(f) : -1, 1, 0);
	/* (fileno's fd was closed by check_open: the FILE is dropped unclosed.) */
	f = fopen64(UCM_PATH, "r+");
	check_open("fopen64", f ? fileno(f) : -1, 0, 0);

	errno = 0;
	fd = open(UCM_PATH, O_RDONLY);
	check(fd == -1 && errno == EACCES, "a channel opened read-only: -1/EACCES");
	errno = 0;
	f = fopen(UCM_PATH, "r");
	check(!f && errno == EACCES, "fopen(\"r\") of the channel: NULL/EACCES");

	fd = open("/etc/hostname", O_RDONLY);
	check(fd >= 0 && read(fd, buf, 1) == 1, "another path goes on to libc");
	if (fd >= 0)
		close(fd);

	/* The view has the rdma_cm class with the emulation. */
	snprintf(want, sizeof(want), "%d\n", RDMA_USER_CM_ABI_VERSION);
	fd = open("/sys/class/misc/rdma_cm/abi_version", O_RDONLY);
	n = fd >= 0 ? (int)read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	check(n > 0 && !strcmp(buf, want), "/sys/class/misc/rdma_cm/abi_version in the view");
	if (fd >= 0)
		close(fd);
	read_sysfs = (int (*)(const char *, const char *, char *, size_t))dlsym(
	    RTLD_DEFAULT, "ibv_read_sysfs_file");
	sysfs_path = (const char *(*)(void))dlsym(RTLD_DEFAULT, "ibv_get_sysfs_path");
	n = read_sysfs && sysfs_path
		? read_sysfs(sysfs_path(), "class/misc/rdma_cm/abi_version", buf, sizeof(buf))
		: -1;
	want[strlen(want) - 1] = '\0';
	check(n > 0 && !strcmp(buf, want),
	      "ibv_read_sysfs_file(class/misc/rdma_cm/abi_version), as librdmacm reads it");
	return fails ? 1 : 0;
}
