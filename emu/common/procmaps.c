/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "procmaps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int common_maps_walk(pid_t pid, uint64_t addr, uint64_t len,
		     bool (*ok)(const struct common_maps_line *m, uint64_t cur, const void *arg),
		     const void *arg)
{
	char path[64], line[512];
	uint64_t cur = addr, end = addr + len;
	bool line_start = true, at_start;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	/* Mappings are listed in address order; walk them while they cover
	 * [cur, end) without a hole. */
	while (cur < end && fgets(line, sizeof(line), f)) {
		struct common_maps_line m;
		int n = 0;

		/* A line longer than the buffer (a long file path) comes in
		 * pieces: only a piece that starts a line is a mapping, or a
		 * path the program chose could read as one. */
		at_start = line_start;
		line_start = strchr(line, '\n') != NULL;
		if (!at_start)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 "%n",
			   &m.lo, &m.hi, m.perms, &m.off, &m.maj, &m.min, &m.inode, &n) != 7)
			continue;
		m.path = line + n + strspn(line + n, " ");
		if (m.hi <= cur)
			continue;
		if (m.lo > cur || !ok(&m, cur, arg))
			break; /* a hole, or a mapping refused */
		cur = m.hi;
	}
	fclose(f);
	return cur >= end ? 0 : -EFAULT;
}
