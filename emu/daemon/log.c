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
 *
 * A log line never makes the daemon wait. Where stderr is a pipe or a
 * terminal, the daemon writes through a descriptor of its own opened on it
 * (/proc/self/fd/2) with O_NONBLOCK, so the flag does not reach the file
 * description it shares with whoever started it; on a socket (journald's
 * stream) each line is sent with MSG_DONTWAIT; a regular file is written as
 * it is. A line that does not fit (a reader that stopped reading: a parent
 * that kept stderr as a pipe and never reads it, a terminal stopped with ^S)
 * is dropped and counted, and the next line that fits is preceded by how
 * many were dropped, in the same write: the data path goes on meanwhile.
 * Writes are shorter than PIPE_BUF, so a pipe takes each whole or not at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

static enum emu_log_level log_level = EMU_LOG_INFO;
static char log_name[UROCE_NAME_MAX] = "-";
static int log_fd = STDERR_FILENO;
static bool log_socket;
static unsigned long log_dropped; /* lines dropped since the last one written */

/* A whole line, or nothing: the line and the dropped ones before it. */
#define LOG_LINE_MAX 1024
_Static_assert(LOG_LINE_MAX <= PIPE_BUF, "a log line must fit a pipe's atomic write");

void emu_log_open(void)
{
	struct stat st;
	int fd;

	if (fstat(STDERR_FILENO, &st))
		return;
	if (S_ISSOCK(st.st_mode)) {
		log_socket = true;
		return;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
		return;
	fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		log_fd = fd;
}

static bool log_write(const char *buf, size_t len)
{
	ssize_t r;

	do
		r = log_socket ? send(log_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL)
			       : write(log_fd, buf, len);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

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
	unsigned long dropped = __atomic_load_n(&log_dropped, __ATOMIC_RELAXED);
	char buf[LOG_LINE_MAX];
	int n = 0;

	/* The note and the line in one write: both arrive, or neither. */
	if (dropped)
		n = snprintf(buf, sizeof(buf),
			     "uroced[%s]: warning: %lu log line%s dropped: stderr was not being "
			     "read\n",
			     log_name, dropped, dropped == 1 ? "" : "s");
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "uroced[%s]: %s: %s%s\n", log_name,
		      names[level], line, tail);
	if (n >= (int)sizeof(buf)) {
		n = (int)sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	if (!log_write(buf, (size_t)n))
		__atomic_add_fetch(&log_dropped, 1, __ATOMIC_RELAXED);
	else if (dropped)
		__atomic_sub_fetch(&log_dropped, dropped, __ATOMIC_RELAXED);
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
