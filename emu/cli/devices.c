/* SPDX-License-Identifier: MIT */
/*
 * `uroce devices`: list the live devices of a run directory, each with its
 * address, UDP port, MTU, daemon pid and the resources its clients hold
 * (contexts, PDs, MRs, CQs, QPs, SRQs, AHs, completion channels), as the
 * daemon counts them. Stale socket files are skipped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_ctl.h"
#include "rundir.h"
#include "uroce/uapi.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce devices [--rundir DIR]\n"
		   "\n"
		   "List the live uroce devices (running uroced daemons) with "
		   "their addresses and\n"
		   "the resources their clients hold: contexts, PDs, MRs, CQs, QPs, SRQs, AHs,\n"
		   "completion channels, memory windows, device memory allocations, XRC domain\n"
		   "handles (XRCD) and handles of XRC target QPs opened with ibv_open_qp (OQP).\n"
		   "\n" CLI_COMMON_HELP);
}

/* HELLO exchange with one daemon. 0 or -errno. */
static int hello(const char *path, struct uroce_hello_resp *resp)
{
	struct uroce_hello_req req = {.hdr = {.op = UROCE_OP_HELLO, .len = sizeof(req), .seq = 1},
				      .version = UROCE_UAPI_VERSION};
	size_t n;
	int err = cli_common_call(path, &req, sizeof(req), resp, sizeof(*resp), &n);

	if (err)
		return err;
	if (n != sizeof(*resp) || resp->hdr.op != UROCE_OP_HELLO)
		return -EPROTO;
	if (resp->hdr.status)
		return resp->hdr.status;
	resp->name[sizeof(resp->name) - 1] = '\0';
	resp->addr[sizeof(resp->addr) - 1] = '\0';
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct uroce_hello_resp *)a)->name,
		      ((const struct uroce_hello_resp *)b)->name);
}

int cli_devices_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"rundir", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct uroce_hello_resp *devs = NULL;
	const char *explicit_dir = NULL;
	char rundir[256], path[512];
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *dir;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
		rc = cli_common_opt(c, optarg, &explicit_dir, usage);
		if (rc >= 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "uroce devices: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (common_rundir_resolve(explicit_dir, rundir, sizeof(rundir))) {
		fprintf(stderr, "uroce devices: run directory name too long\n");
		return 1;
	}
	dir = opendir(rundir);
	if (!dir) {
		if (errno == ENOENT) {
			printf("no uroce devices (%s does not exist)\n", rundir);
			return 0;
		}
		fprintf(stderr, "uroce devices: %s: %s\n", rundir, strerror(errno));
		return 1;
	}
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);
		struct uroce_hello_resp r;

		if (len <= 5 || e->d_name[0] == '.' ||
		    strcmp(e->d_name + len - 5, UROCE_SOCK_SUFFIX))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", rundir, e->d_name) >= 108)
			continue;
		if (hello(path, &r))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			void *p = realloc(devs, ncap * sizeof(*devs));

			if (!p)
				break;
			devs = p;
			cap = ncap;
		}
		devs[n++] = r;
	}
	closedir(dir);
	if (!n) {
		printf("no uroce devices in %s\n", rundir);
		free(devs);
		return 0;
	}
	qsort(devs, n, sizeof(*devs), by_name);
	printf("%-12s %-24s %5s %5s %8s %4s %4s %5s %4s %4s %4s %4s %5s %5s %4s %4s %4s\n",
	       "DEVICE", "ADDRESS", "PORT", "MTU", "PID", "CTX", "PD", "MR", "CQ", "QP", "SRQ",
	       "AH", "CHAN", "MW", "DM", "XRCD", "OQP");
	for (size_t i = 0; i < n; i++) {
		const struct uroce_hello_resp *d = &devs[i];

		printf("%-12s %-24s %5u %5u %8u %4u %4u %5u %4u %4u %4u %4u "
		       "%5u %5u %4u %4u %4u\n",
		       d->name, d->addr, d->udp_port,
		       d->active_mtu >= 1 && d->active_mtu <= 5 ? 128u << d->active_mtu : 0,
		       d->daemon_pid, d->counts.ctx, d->counts.pd, d->counts.mr, d->counts.cq,
		       d->counts.qp, d->counts.srq, d->counts.ah, d->counts.channel, d->counts.mw,
		       d->counts.dm, d->counts.xrcd, d->counts.qp_open);
	}
	free(devs);
	return 0;
}
