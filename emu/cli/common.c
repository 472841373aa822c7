/* SPDX-License-Identifier: MIT */
/*
 * What the CLI subcommands that talk to daemons share: the options every
 * one of them takes (--rundir, --help) and one request/response exchange
 * with a daemon over its control socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli_ctl.h"
#include "rundir.h"

int cli_common_opt(int c, char *arg, const char **rundir, void (*usage)(FILE *f))
{
	switch (c) {
	case 'r':
		*rundir = arg;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
}

int cli_common_call(const char *path, const void *req, size_t req_len, void *resp, size_t resp_len,
		    size_t *got)
{
	struct timeval tv = {.tv_sec = 2};
	ssize_t n;
	int fd = common_rundir_connect(path);

	*got = 0;
	if (fd < 0)
		return fd;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (send(fd, req, req_len, MSG_NOSIGNAL) != (ssize_t)req_len) {
		close(fd);
		return -EIO;
	}
	n = recv(fd, resp, resp_len, 0);
	close(fd);
	if (n > 0)
		*got = (size_t)n;
	return 0;
}
