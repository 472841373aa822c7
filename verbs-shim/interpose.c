/* SPDX-License-Identifier: MIT */
/*
 * interpose.c: libc path interposition, in liburoce.so and in the drop-in
 * libibverbs.so.1 (reached there when it comes before libc in the program's
 * lookup scope; docs/abi.md, "Drop-in mode"). Each hook
 * below has libc's name and signature; a path of the sysfs view
 * (/sys/class/infiniband..., /sys/devices/uroce..., and
 * /sys/class/misc/rdma_cm... with the CM device emulation; see sysview.c) is
 * rewritten to this process's tree, every other path goes unchanged to the
 * next definition (libc's, found with dlsym(RTLD_NEXT)) after a five-byte
 * prefix compare. The open family first offers the path to the RDMA CM
 * device emulation, shim_ucm_open(), when that is linked in.
 *
 * Relative paths are not rewritten: a program that changes into a view
 * directory (chdir is hooked) is inside the real tree, so its relative
 * names resolve there by themselves. The hooks for write, close and fstat
 * belong to the CM device emulation, not to this file.
 */
#define _GNU_SOURCE
/* The hooks define libc's own names: no fortify wrappers, no 64-bit
 * redirections of the plain names. */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "shim.h"

/* Every hook is exported under libc's name, unversioned (the preload
 * library's version script leaves them so; ABI notes in docs/abi.md). */
#define HOOK __attribute__((visibility("default")))

/*
 * The definition after this library's of a libc function: the next one in
 * the lookup scope (dlsym(RTLD_NEXT): libc's, or a later interposer's). When
 * this library is reached from an object loaded with RTLD_DEEPBIND (the
 * real librdmacm under the drop-in librdmacm.so.1, rdmacm_fwd.c), it may
 * itself come after libc in the global scope, or not be in it at all: then
 * nothing follows it there, and libc's own definition is the next.
 */
static void *next_sym(const char *name)
{
	static void *libc; /* atomic */
	void *fn = dlsym(RTLD_NEXT, name);
	void *h;

	if (fn)
		return fn;
	h = __atomic_load_n(&libc, __ATOMIC_RELAXED);
	if (!h) {
		h = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
		__atomic_store_n(&libc, h, __ATOMIC_RELAXED);
	}
	return h ? dlsym(h, name) : NULL;
}

/* The next definition of a libc function, looked up once. */
#define NEXT(name)                                                                      \
	({                                                                              \
		static __typeof__(&name) next_##name;                                   \
		__typeof__(&name) fn = __atomic_load_n(&next_##name, __ATOMIC_RELAXED); \
		if (!fn) {                                                              \
			fn = (__typeof__(&name))next_sym(#name);                        \
			__atomic_store_n(&next_##name, fn, __ATOMIC_RELAXED);           \
		}                                                                       \
		fn;                                                                     \
	})

/* Rewrite @p into the local buffer @b when it is in the view; on a path too
 * long for the view, fail the call with ENAMETOOLONG (value @fail). */
#define VIEW(p, b, fail)                                                                  \
	do {                                                                              \
		if (shim_sysview_maybe(p) && !((p) = shim_sysview_path(p, b, sizeof(b)))) \
			return fail;                                                      \
	} while (0)

/* The mode argument of the open family, present with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)                         \
	do {                                           \
		if ((flags) & (O_CREAT | O_TMPFILE)) { \
			va_list ap;                    \
			va_start(ap, flags);           \
			mode = va_arg(ap, mode_t);     \
			va_end(ap);                    \
		}                                      \
	} while (0)

/* Offer the path to the CM device emulation: its answer, or -2. */
static int ucm_open(const char *path, int flags)
{
	if (!shim_ucm_open || !path)
		return -2;
	return shim_ucm_open(path, flags);
}

/* ---- the open family ---------------------------------------------------- */

HOOK int open(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(open)(path, flags, mode);
}

HOOK int open64(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(open64)(path, flags, mode);
}

HOOK int openat(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(openat)(dirfd, path, flags, mode);
}

HOOK int openat64(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	int fd;

	OPEN_MODE(flags, mode);
	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(openat64)(dirfd, path, flags, mode);
}

/* The _FORTIFY_SOURCE entry points (no mode: O_CREAT is refused by them). */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

HOOK int __open_2(const char *path, int flags)
{
	char buf[PATH_MAX];
	int fd;

	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(__open_2)(path, flags);
}

HOOK int __open64_2(const char *path, int flags)
{
	char buf[PATH_MAX];
	int fd;

	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(__open64_2)(path, flags);
}

HOOK int __openat_2(int dirfd, const char *path, int flags)
{
	char buf[PATH_MAX];
	int fd;

	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(__openat_2)(dirfd, path, flags);
}

HOOK int __openat64_2(int dirfd, const char *path, int flags)
{
	char buf[PATH_MAX];
	int fd;

	if ((fd = ucm_open(path, flags)) != -2)
		return fd;
	VIEW(path, buf, -1);
	return NEXT(__openat64_2)(dirfd, path, flags);
}

/* open(2) flags of an fopen mode ("r", "w+", "re", ...). */
static int fopen_flags(const char *mode)
{
	int flags;

	switch (mode[0]) {
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		flags = O_RDONLY;
		break;
	}
	for (const char *m = mode + 1; *m && *m != ','; m++) {
		if (*m == '+')
			flags = (flags & ~(O_RDONLY | O_WRONLY)) | O_RDWR;
		else if (*m == 'e')
			flags |= O_CLOEXEC;
		else if (*m == 'x')
			flags |= O_EXCL;
	}
	return flags;
}

/* fopen through the CM device emulation: a stream on its fd, or NULL with
 * errno; *mine is false when the path is not the emulation's. */
static FILE *ucm_fopen(const char *path, const char *mode, int *mine)
{
	FILE *f;
	int fd;

	*mine = 0;
	if (!mode || (fd = ucm_open(path, fopen_flags(mode))) == -2)
		return NULL;
	*mine = 1;
	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

HOOK FILE *fopen(const char *path, const char *mode)
{
	char buf[PATH_MAX];
	int mine;
	FILE *f = ucm_fopen(path, mode, &mine);

	if (mine)
		return f;
	VIEW(path, buf, NULL);
	return NEXT(fopen)(path, mode);
}

HOOK FILE *fopen64(const char *path, const char *mode)
{
	char buf[PATH_MAX];
	int mine;
	FILE *f = ucm_fopen(path, mode, &mine);

	if (mine)
		return f;
	VIEW(path, buf, NULL);
	return NEXT(fopen64)(path, mode);
}

HOOK FILE *freopen(const char *path, const char *mode, FILE *stream)
{
	char buf[PATH_MAX];

	VIEW(path, buf, NULL);
	return NEXT(freopen)(path, mode, stream);
}

HOOK FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
	char buf[PATH_MAX];

	VIEW(path, buf, NULL);
	return NEXT(freopen64)(path, mode, stream);
}

/* ---- directories -------------------------------------------------------- */

HOOK DIR *opendir(const char *path)
{
	char buf[PATH_MAX];

	VIEW(path, buf, NULL);
	return NEXT(opendir)(path);
}

HOOK int scandir(const char *path, struct dirent ***list, int (*sel)(const struct dirent *),
		 int (*cmp)(const struct dirent **, const struct dirent **))
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(scandir)(path, list, sel, cmp);
}

HOOK int scandir64(const char *path, struct dirent64 ***list, int (*sel)(const struct dirent64 *),
		   int (*cmp)(const struct dirent64 **, const struct dirent64 **))
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(scandir64)(path, list, sel, cmp);
}

HOOK int chdir(const char *path)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(chdir)(path);
}

/* ---- stat and access ---------------------------------------------------- */

HOOK int stat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(stat)(path, st);
}

HOOK int stat64(const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(stat64)(path, st);
}

HOOK int lstat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(lstat)(path, st);
}

HOOK int lstat64(const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(lstat64)(path, st);
}

HOOK int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(fstatat)(dirfd, path, st, flags);
}

HOOK int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(fstatat64)(dirfd, path, st, flags);
}

/* The stat entry points of programs built before glibc 2.33. */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);

HOOK int __xstat(int ver, const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(__xstat)(ver, path, st);
}

HOOK int __xstat64(int ver, const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(__xstat64)(ver, path, st);
}

HOOK int __lxstat(int ver, const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(__lxstat)(ver, path, st);
}

HOOK int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(__lxstat64)(ver, path, st);
}

HOOK int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(__fxstatat)(ver, dirfd, path, st, flags);
}

HOOK int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(__fxstatat64)(ver, dirfd, path, st, flags);
}

HOOK int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(statx)(dirfd, path, flags, mask, stx);
}

HOOK int access(const char *path, int mode)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(access)(path, mode);
}

HOOK int faccessat(int dirfd, const char *path, int mode, int flags)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(faccessat)(dirfd, path, mode, flags);
}

HOOK int euidaccess(const char *path, int mode)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(euidaccess)(path, mode);
}

HOOK int eaccess(const char *path, int mode)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(eaccess)(path, mode);
}

/* ---- links and names ---------------------------------------------------- */

HOOK ssize_t readlink(const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(readlink)(path, out, len);
}

HOOK ssize_t readlinkat(int dirfd, const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(readlinkat)(dirfd, path, out, len);
}

/* The canonical name of a view path is its place in the tree (a real
 * directory the program can go on using). */
HOOK char *realpath(const char *path, char *resolved)
{
	char buf[PATH_MAX];

	VIEW(path, buf, NULL);
	return NEXT(realpath)(path, resolved);
}

char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);

HOOK char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
	char buf[PATH_MAX];

	VIEW(path, buf, NULL);
	return NEXT(__realpath_chk)(path, resolved, resolvedlen);
}

HOOK char *canonicalize_file_name(const char *path)
{
	char buf[PATH_MAX];

	VIEW(path, buf, NULL);
	return NEXT(canonicalize_file_name)(path);
}

/* ---- extended attributes (ls -l asks for ACLs and security labels) ----- */

HOOK ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(getxattr)(path, name, value, size);
}

HOOK ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(lgetxattr)(path, name, value, size);
}

HOOK ssize_t listxattr(const char *path, char *list, size_t size)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(listxattr)(path, list, size);
}

HOOK ssize_t llistxattr(const char *path, char *list, size_t size)
{
	char buf[PATH_MAX];

	VIEW(path, buf, -1);
	return NEXT(llistxattr)(path, list, size);
}
