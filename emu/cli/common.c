/* SPDX-License-Identifier: MIT */
/*
 * What the CLI subcommands share: the options every one of them that talks
 * to daemons takes (--rundir, --help), finding a device's control socket,
 * one request/response exchange with a daemon over it, and JSON strings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli_ctl.h"
#include "rundir.h"
#include "uroce/uapi.h"

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

int cli_common_json_opts(int argc, char **argv, int *json, const char **rundir,
			 void (*usage)(FILE *f))
{
	static const struct option longopts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"rundir", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc;

	optind = 1;
	/* Options may follow the operands (uroce qp DEV --json). */
	while ((c = getopt_long(argc, argv, "jr:h", longopts, NULL)) != -1) {
		if (c == 'j') {
			*json = 1;
			continue;
		}
		rc = cli_common_opt(c, optarg, rundir, usage);
		if (rc >= 0)
			return rc;
	}
	return -1;
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

int cli_common_device_path(const char *cmd, const char *name, const char *explicit_dir, char *path,
			   size_t len)
{
	char rundir[256];

	if (!common_rundir_valid_name(name)) {
		fprintf(stderr, "uroce %s: '%s' is not a device name\n", cmd, name);
		return 2;
	}
	if (common_rundir_resolve(explicit_dir, rundir, sizeof(rundir)) ||
	    common_rundir_sock_path(rundir, name, path, len)) {
		fprintf(stderr, "uroce %s: run directory name too long\n", cmd);
		return 2;
	}
	return 0;
}

int cli_common_request(const char *path, const void *req, size_t req_len, void *resp,
		       size_t resp_len)
{
	const struct uroce_msg_hdr *q = req;
	struct uroce_msg_hdr *a = resp;
	size_t n;
	int err = cli_common_call(path, req, req_len, resp, resp_len, &n);

	if (err)
		return err;
	if (n < sizeof(*a) || a->op != q->op || a->seq != q->seq)
		return -EPROTO;
	if (a->status)
		return a->status < 0 ? a->status : -EPROTO;
	return n == resp_len ? 0 : -EPROTO;
}

const char *cli_common_strerror(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED ? "no such live device" : strerror(-err);
}

void cli_common_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}
