/* SPDX-License-Identifier: MIT */
/*
 * What the CLI subcommands share: the options every one of them that talks
 * to daemons takes (--rundir, --help), finding a device's control socket,
 * one request/response exchange with a daemon over it, the pager and
 * printer of the object listings (uroce qp, mr, cq), access flags as words
 * and JSON strings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
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

int cli_common_list_page(const struct cli_list *l, const char *path, uint32_t from, uint32_t flags,
			 void *resp, uint32_t *count, uint32_t *next)
{
	struct uroce_res_list_req req = {
	    .hdr = {.op = l->op, .len = sizeof(req), .seq = 1},
	    .from = from,
	    .flags = flags,
	};
	int rc = cli_common_request(path, &req, sizeof(req), resp, l->resp_size);

	if (rc)
		return rc;
	memcpy(count, (uint8_t *)resp + offsetof(struct uroce_qp_list_resp, count), sizeof(*count));
	memcpy(next, (uint8_t *)resp + offsetof(struct uroce_qp_list_resp, next_qpn),
	       sizeof(*next));
	if (*count > l->max)
		return -EPROTO;
	for (uint32_t i = 0; i < *count; i++)
		((char *)resp)[l->entries_off + i * l->entry_size + l->comm_off + UROCE_COMM_BYTES -
			       1] = '\0';
	return 0;
}

const void *cli_common_list_entry(const struct cli_list *l, const void *resp, uint32_t i)
{
	return (const uint8_t *)resp + l->entries_off + i * l->entry_size;
}

int cli_common_list_show(const struct cli_list *l, const char *dev, const char *path, int json)
{
	union {
		struct uroce_msg_hdr hdr;
		uint8_t buf[UROCE_MSG_MAX_BYTES];
	} resp;
	uint32_t from = 0, count, next;
	unsigned shown = 0;
	int rc;

	if (l->resp_size > sizeof(resp))
		return 1;
	do {
		rc = cli_common_list_page(l, path, from, 0, &resp, &count, &next);
		if (rc) {
			fprintf(stderr, "uroce %s: %s: %s\n", l->cmd, dev, cli_common_strerror(rc));
			return rc == -ENOENT || rc == -ECONNREFUSED ? 2 : 1;
		}
		for (uint32_t i = 0; i < count; i++, shown++) {
			const void *e = cli_common_list_entry(l, &resp, i);

			if (json) {
				printf("%s", shown ? "," : "[");
				l->json(dev, e);
				printf("}");
				continue;
			}
			if (!shown)
				l->header();
			l->line(dev, e);
		}
		from = next;
	} while (from && count);
	if (json)
		printf("%s]\n", shown ? "" : "[");
	else if (!shown)
		printf("%s has no %s\n", dev, l->noun);
	return 0;
}

int cli_common_list_main(const struct cli_list *l, int argc, char **argv, void (*usage)(FILE *f))
{
	const char *explicit_dir = NULL;
	char path[512];
	int rc, json = 0;

	rc = cli_common_json_opts(argc, argv, &json, &explicit_dir, usage);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	rc = cli_common_device_path(l->cmd, argv[optind], explicit_dir, path, sizeof(path));
	if (rc)
		return rc;
	return cli_common_list_show(l, argv[optind], path, json);
}

void cli_common_access_str(uint32_t access, const char *sep, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
	    {UROCE_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
	    {UROCE_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
	    {UROCE_ACCESS_REMOTE_READ, "REMOTE_READ"},
	    {UROCE_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
	    {UROCE_ACCESS_MW_BIND, "MW_BIND"},
	    {UROCE_ACCESS_ZERO_BASED, "ZERO_BASED"},
	    {UROCE_ACCESS_ON_DEMAND, "ON_DEMAND"},
	    {UROCE_ACCESS_HUGETLB, "HUGETLB"},
	};
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(access & names[i].bit))
			continue;
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
					off ? sep : "", names[i].name);
		access &= ~names[i].bit;
	}
	if (access)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s0x%x",
					off ? sep : "", access);
	if (!off)
		snprintf(buf, len, "-");
}
