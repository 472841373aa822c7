/* SPDX-License-Identifier: MIT */
/*
 * Logging of the daemon: one line per message on stderr, prefixed with
 * "uroced[<device>]:" and the level. The level and the device name are the
 * only process-wide state of the daemon. errno is preserved across calls so
 * that callers can log and then return -errno. Messages that a peer or an
 * application can cause at packet rate go through a rate limit (one per
 * kind of message, kept by the device): a burst of lines per interval, the
 * rest only counted and reported with the next line let through, as the
 * kernel's printk_ratelimit; the events themselves have counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static void log_line(enum emu_log_level level, const char *line, const char *tail)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};

	fprintf(stderr, "uroced[%s]: %s: %s%s\n", log_name, names[level], line, tail);
}

void emu_log(enum emu_log_level level, const char *fmt, ...)
{
	int saved = errno;
	char line[512];
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_line(level, line, "");
	errno = saved;
}

bool emu_log_rl(struct emu_ratelimit *rl, enum emu_log_level level, const char *fmt, ...)
{
	int saved = errno;
	struct timespec ts;
	char line[512], tail[64] = "";
	uint64_t now;
	va_list ap;

	if (level > log_level)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	if (!rl->begin_us || now - rl->begin_us >= EMU_LOG_RL_INTERVAL_US) {
		rl->begin_us = now;
		rl->printed = 0;
	}
	if (rl->printed >= EMU_LOG_RL_BURST) {
		rl->missed++;
		errno = saved;
		return false;
	}
	rl->printed++;
	if (rl->missed)
		snprintf(tail, sizeof(tail), " (%llu more like it not logged)",
			 (unsigned long long)rl->missed);
	rl->missed = 0;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_line(level, line, tail);
	errno = saved;
	return true;
}
