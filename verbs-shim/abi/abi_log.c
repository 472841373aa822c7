/* SPDX-License-Identifier: MIT */
/*
 * abi_log.c: __verbs_log(), the printf-style logger behind rdma-core's
 * verbs_log() macros (IBVERBS_PRIVATE_34; providers such as libefa import
 * it, and the shim may use it too). Configured once per process from the
 * environment, as rdma-core does:
 *   VERBS_LOG_LEVEL  0 none (default), 1 error, 2 warn, 3 info, 4 debug
 *                    (strtol base 0, so "0x3" works too)
 *   VERBS_LOG_FILE   file to append to
 * A message is written when its level is <= VERBS_LOG_LEVEL. Without
 * VERBS_LOG_FILE, or if it cannot be opened, messages go to stderr (this is
 * rdma-core's debug-build behaviour; its release build drops them, which
 * would make VERBS_LOG_LEVEL alone useless). errno is preserved.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "abi.h"

static uint32_t shim_log_level = VERBS_LOG_LEVEL_NONE;
static FILE *shim_log_fp;
static pthread_once_t shim_log_once = PTHREAD_ONCE_INIT;

static void shim_log_init(void)
{
	const char *level = getenv("VERBS_LOG_LEVEL");
	const char *file;
	long v;

	if (!level)
		return;
	v = strtol(level, NULL, 0);
	if (v <= VERBS_LOG_LEVEL_NONE)
		return;
	file = getenv("VERBS_LOG_FILE");
	shim_log_fp = file ? fopen(file, "ae") : NULL;
	if (!shim_log_fp)
		shim_log_fp = stderr;
	shim_log_level = (uint32_t)v;
}

/*
 * Print @fmt to the verbs log if @level is enabled. @ctx is not used (the
 * verbs_log() macros put the device name into @fmt). Never fails; errno is
 * left as the caller had it.
 */
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	int saved_errno = errno;
	va_list args;

	(void)ctx;
	pthread_once(&shim_log_once, shim_log_init);
	if (level != VERBS_LOG_LEVEL_NONE && level <= shim_log_level) {
		va_start(args, fmt);
		vfprintf(shim_log_fp, fmt, args);
		va_end(args);
		fflush(shim_log_fp);
	}
	errno = saved_errno;
}
