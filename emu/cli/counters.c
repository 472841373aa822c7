/* SPDX-License-Identifier: MIT */
/*
 * `uroce counters NAME [--qp QPN] [--all]`: the counters of one live device
 * (or of one of its QPs): every reason the transport dropped a packet, the
 * transport's events (packets, retries, NAKs, completions...) and the
 * daemon's own counters (datagrams, DMA, rings, CQs, capture, sleeps), by
 * name, one per line. Zero counters are left out unless --all is given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_ctl.h"
#include "rundir.h"
#include <uroce/dev_counters.h>
#include "uroce/uapi.h"
#include <uroce/counters.h>

static const char *const drop_names[] = {
#define X_NAME(sym, name, doc) name,
    XPORT_DROP_LIST(X_NAME)
#undef X_NAME
};
static const char *const event_names[] = {
#define X_NAME(sym, name, doc) name,
    XPORT_CNT_LIST(X_NAME)
#undef X_NAME
};
static const char *const daemon_names[] = {
#define X_NAME(sym, name, doc) name,
    EMU_DCNT_LIST(X_NAME)
#undef X_NAME
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce counters NAME [--qp QPN] [--all] [--rundir DIR]\n"
		   "\n"
		   "Print the counters of the live uroce device NAME: packets "
		   "dropped by reason\n"
		   "(drop.*), transport events (xport.*) and the daemon's own "
		   "counters (daemon.*).\n"
		   "\n"
		   "  -q, --qp QPN       the counters of one QP (decimal or 0x hex)\n"
		   "  -a, --all          also print counters that are zero\n" CLI_COMMON_HELP);
}

static int query(const char *path, uint32_t qpn, struct uroce_query_counters_resp *resp)
{
	struct uroce_query_counters_req req = {
	    .hdr = {.op = UROCE_OP_QUERY_COUNTERS, .len = sizeof(req), .seq = 1},
	    .qpn = qpn,
	};
	size_t n;
	int err = cli_common_call(path, &req, sizeof(req), resp, sizeof(*resp), &n);

	if (err)
		return err;
	if (n < sizeof(resp->hdr) || resp->hdr.op != UROCE_OP_QUERY_COUNTERS)
		return -EPROTO;
	if (resp->hdr.status)
		return resp->hdr.status;
	if (n != sizeof(*resp) ||
	    (uint64_t)resp->ndrop + resp->nevent + resp->ndaemon > UROCE_COUNTERS_MAX)
		return -EPROTO;
	return 0;
}

static void print_group(const char *prefix, const char *const *names, size_t nnames,
			const uint64_t *v, uint32_t n, int all)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!v[i] && !all)
			continue;
		if (i < nnames)
			printf("%s.%-20s %" PRIu64 "\n", prefix, names[i], v[i]);
		else
			printf("%s.%-20u %" PRIu64 "\n", prefix, i, v[i]);
	}
}

int cli_counters_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"qp", required_argument, NULL, 'q'},
	    {"all", no_argument, NULL, 'a'},
	    {"rundir", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct uroce_query_counters_resp resp;
	const char *explicit_dir = NULL;
	char rundir[256], path[512];
	unsigned long qpn = 0;
	int c, all = 0, rc;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "q:ar:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			errno = 0;
			qpn = strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg || !qpn || qpn > 0xffffff) {
				fprintf(stderr,
					"uroce counters: --qp %s: need a QP "
					"number 1..0xffffff\n",
					optarg);
				return 2;
			}
			break;
		case 'a':
			all = 1;
			break;
		default:
			rc = cli_common_opt(c, optarg, &explicit_dir, usage);
			if (rc >= 0)
				return rc;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (!common_rundir_valid_name(argv[optind])) {
		fprintf(stderr, "uroce counters: '%s' is not a device name\n", argv[optind]);
		return 2;
	}
	if (common_rundir_resolve(explicit_dir, rundir, sizeof(rundir)) ||
	    common_rundir_sock_path(rundir, argv[optind], path, sizeof(path))) {
		fprintf(stderr, "uroce counters: run directory name too long\n");
		return 2;
	}
	rc = query(path, (uint32_t)qpn, &resp);
	if (rc == -ENOENT && qpn) {
		fprintf(stderr, "uroce counters: %s has no QP 0x%lx\n", argv[optind], qpn);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "uroce counters: %s: %s\n", argv[optind],
			rc == -ENOENT || rc == -ECONNREFUSED ? "no such live device"
							     : strerror(-rc));
		return 1;
	}
	if (qpn)
		printf("# %s QP 0x%06lx\n", argv[optind], qpn);
	else
		printf("# %s\n", argv[optind]);
	print_group("drop", drop_names, sizeof(drop_names) / sizeof(drop_names[0]), resp.values,
		    resp.ndrop, all);
	print_group("xport", event_names, sizeof(event_names) / sizeof(event_names[0]),
		    resp.values + resp.ndrop, resp.nevent, all);
	print_group("daemon", daemon_names, sizeof(daemon_names) / sizeof(daemon_names[0]),
		    resp.values + resp.ndrop + resp.nevent, resp.ndaemon, all);
	return 0;
}
