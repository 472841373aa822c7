/* SPDX-License-Identifier: MIT */
/*
 * abi_sysfs.c: libibverbs' sysfs helpers. The helpers are generic and
 * callers use them on their own paths: librdmacm reads
 * <sysfs>/class/misc/rdma_cm/abi_version with them, ibv_devinfo reads
 * <ibdev_path>/board_id. So they really read files, and a missing file
 * gives -1 exactly as with rdma-core. A uroce device's ibdev_path is in the
 * sysfs view (sysview.c), which ibv_read_sysfs_file reaches itself, so that
 * it works in the drop-in library too, where no libc call is hooked.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "shim.h"

static const char *shim_sysfs_path;
static pthread_once_t shim_sysfs_once = PTHREAD_ONCE_INIT;

static void shim_sysfs_path_init(void)
{
	const char *env = NULL;
	char *dup;
	size_t len;

	/* Follow the environment only when not running set-uid. */
	if (getuid() == geteuid())
		env = getenv("SYSFS_PATH");
	if (!env) {
		shim_sysfs_path = "/sys";
		return;
	}
	dup = strndup(env, IBV_SYSFS_PATH_MAX);
	if (!dup)
		return;
	len = strlen(dup);
	while (len > 0 && dup[len - 1] == '/')
		dup[--len] = '\0';
	shim_sysfs_path = dup;
}

/*
 * Root of sysfs: $SYSFS_PATH without trailing slashes when set (ignored in
 * set-uid programs), else "/sys". Computed once per process; the string
 * lives until exit. NULL only if that first computation ran out of memory.
 */
const char *ibv_get_sysfs_path(void)
{
	pthread_once(&shim_sysfs_once, shim_sysfs_path_init);
	return shim_sysfs_path;
}

/*
 * Read the file @dir/@file into @buf (@size bytes). A trailing newline is
 * replaced by NUL; otherwise the text is NUL-terminated if it fits. Returns
 * the string length, or -1 (errno set) if the file cannot be opened or
 * read, or if its content fills @buf with no room for the terminator.
 */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char *path, view[PATH_MAX];
	const char *real;
	ssize_t len;
	int fd;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	real = shim_sysview_path(path, view, sizeof(view));
	fd = real ? open(real, O_RDONLY | O_CLOEXEC) : -1;
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);

	if (len > 0) {
		if (buf[len - 1] == '\n') {
			buf[--len] = '\0';
		} else if ((size_t)len < size) {
			buf[len] = '\0';
		} else {
			errno = EOVERFLOW;
			return -1;
		}
	}
	return (int)len;
}

/*
 * Provider helper: read a file below the sysfs directory of a provider's
 * device. uroce registers no providers, so no struct verbs_sysfs_dev is ever
 * handed out and none can be valid here: -1 with errno EINVAL for NULL (as
 * rdma-core) and ENODEV otherwise.
 */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
{
	(void)buf;
	(void)size;
	(void)fnfmt;
	errno = sysfs_dev ? ENODEV : EINVAL;
	return -1;
}
