/* SPDX-License-Identifier: MIT */
/*
 * ucm_hook: the contract between the shim's libc hooks (interpose.c) and
 * the RDMA CM device emulation, checked with a stand-in for the emulation.
 * This program defines shim_ucm_open() itself and exports it, so the weak
 * reference in the preloaded liburoce.so finds it, as it will find the real
 * emulation. Run under LD_PRELOAD=liburoce.so with one live device: every
 * open-family call offers its path first (open, open64, openat, openat64,
 * the four _FORTIFY_SOURCE entry points, fopen and fopen64, with the open(2)
 * flags of the fopen mode); an fd or -1/errno from the emulation is the
 * call's result; -2 lets the call go on to libc; and the sysfs view gains
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
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#define UCM_PATH "/dev/infiniband/rdma_cm"
#define DENIED_PATH "/dev/infiniband/denied"

__attribute__((visibility("default"))) int shim_ucm_open(const char *path, int flags);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static int calls, last_flags, fails;
static char last_path[256];

/* The stand-in: an eventfd for UCM_PATH, EACCES for DENIED_PATH, -2 for
 * every other path. */
int shim_ucm_open(const char *path, int flags)
{
	calls++;
	last_flags = flags;
	snprintf(last_path, sizeof(last_path), "%s", path);
	if (!strcmp(path, UCM_PATH))
		return eventfd(0, EFD_CLOEXEC);
	if (!strcmp(path, DENIED_PATH)) {
		errno = EACCES;
		return -1;
	}
	return -2;
}

static void check(int cond, const char *what)
{
	printf("%s: %s\n", cond ? "ok" : "FAIL", what);
	if (!cond)
		fails++;
}

/* Is fd one of the stand-in's eventfds? */
static int is_ucm_fd(int fd)
{
	uint64_t one = 1, back = 0;

	return fd >= 0 && write(fd, &one, sizeof(one)) == sizeof(one) &&
	       read(fd, &back, sizeof(back)) == sizeof(back) && back == 1;
}

static void check_open(const char *what, int fd, int want_flags)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "%s(" UCM_PATH ") is the emulation's fd, flags passed", what);
	check(is_ucm_fd(fd) && last_flags == want_flags && !strcmp(last_path, UCM_PATH), msg);
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

	check_open("open", open(UCM_PATH, O_RDWR | O_CLOEXEC), O_RDWR | O_CLOEXEC);
	check_open("open64", open64(UCM_PATH, O_RDWR), O_RDWR);
	check_open("openat", openat(AT_FDCWD, UCM_PATH, O_RDWR), O_RDWR);
	check_open("openat64", openat64(AT_FDCWD, UCM_PATH, O_RDONLY), O_RDONLY);
	check_open("__open_2", __open_2(UCM_PATH, O_RDWR), O_RDWR);
	check_open("__open64_2", __open64_2(UCM_PATH, O_RDWR), O_RDWR);
	check_open("__openat_2", __openat_2(AT_FDCWD, UCM_PATH, O_RDWR), O_RDWR);
	check_open("__openat64_2", __openat64_2(AT_FDCWD, UCM_PATH, O_RDWR), O_RDWR);
	f = fopen(UCM_PATH, "r+e");
	check_open("fopen", f ? dup(fileno(f)) : -1, O_RDWR | O_CLOEXEC);
	if (f)
		fclose(f);
	f = fopen64(UCM_PATH, "w");
	check_open("fopen64", f ? dup(fileno(f)) : -1, O_WRONLY | O_CREAT | O_TRUNC);
	if (f)
		fclose(f);

	errno = 0;
	fd = open(DENIED_PATH, O_RDWR);
	check(fd == -1 && errno == EACCES, "the emulation's -1/EACCES is open's result");
	errno = 0;
	f = fopen(DENIED_PATH, "r");
	check(!f && errno == EACCES, "the emulation's -1/EACCES is fopen's result");

	calls = 0;
	fd = open("/etc/hostname", O_RDONLY);
	check(fd >= 0 && calls == 1 && read(fd, buf, 1) == 1,
	      "-2 (not mine): the call goes on to libc");
	if (fd >= 0)
		close(fd);

	/* The view has the rdma_cm class only with the emulation. */
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
