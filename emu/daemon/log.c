/* SPDX-License-Identifier: MIT */
/*
 * Logging of the daemon: one line per message on stderr, prefixed with
 * "uroced[<device>]:" and the level. The level and the device name are the
 * only process-wide state of the daemon. errno is preserved across calls so
 * that callers can log and then return -errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

static enum emu_log_level log_level = EMU_LOG_INFO;
static char log_name[UROCE_NAME_MAX] = "-";

void emu_log_set_level(enum emu_log_level level)
{
	log_level = level;
}

void emu_log_set_name(const char *name)
{
	snprintf(log_name, sizeof(log_name), "%s", name);
}

void emu_log(enum emu_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	int saved = errno;
	char line[512];
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "uroced[%s]: %s: %s\n", log_name, names[level], line);
	errno = saved;
}
