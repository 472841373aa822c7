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

int cli_counters_query(const char *path, uint32_t qpn, struct uroce_query_counters_resp *resp)
{
	struct uroce_query_counters_req req = {
	    .hdr = {.op = UROCE_OP_QUERY_COUNTERS, .len = sizeof(req), .seq = 1},
	    .qpn = qpn,
	};
	int err = cli_common_request(path, &req, sizeof(req), resp, sizeof(*resp));

	if (err)
		return err;
	if ((uint64_t)resp->ndrop + resp->nevent + resp->ndaemon > UROCE_COUNTERS_MAX)
		return -EPROTO;
	return 0;
}

static void each_group(const char *group, const char *const *names, size_t nnames,
		       const uint64_t *v, uint32_t n, int all,
		       void (*fn)(void *, const char *, const char *, unsigned, uint64_t),
		       void *arg)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] || all)
			fn(arg, group, i < nnames ? names[i] : NULL, i, v[i]);
}

void cli_counters_each(const struct uroce_query_counters_resp *r, int all,
		       void (*fn)(void *, const char *, const char *, unsigned, uint64_t),
		       void *arg)
{
	each_group("drop", drop_names, sizeof(drop_names) / sizeof(drop_names[0]), r->values,
		   r->ndrop, all, fn, arg);
	each_group("xport", event_names, sizeof(event_names) / sizeof(event_names[0]),
		   r->values + r->ndrop, r->nevent, all, fn, arg);
	each_group("daemon", daemon_names, sizeof(daemon_names) / sizeof(daemon_names[0]),
		   r->values + r->ndrop + r->nevent, r->ndaemon, all, fn, arg);
}

static void print_one(void *arg, const char *group, const char *name, unsigned index,
		      uint64_t value)
{
	(void)arg;
	if (name)
		printf("%s.%-20s %" PRIu64 "\n", group, name, value);
	else
		printf("%s.%-20u %" PRIu64 "\n", group, index, value);
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
	char path[512];
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
	rc = cli_common_device_path("counters", argv[optind], explicit_dir, path, sizeof(path));
	if (rc)
		return rc;
	rc = cli_counters_query(path, (uint32_t)qpn, &resp);
	if (rc == -ENOENT && qpn) {
		fprintf(stderr, "uroce counters: %s has no QP 0x%lx\n", argv[optind], qpn);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "uroce counters: %s: %s\n", argv[optind], cli_common_strerror(rc));
		return 1;
	}
	if (qpn)
		printf("# %s QP 0x%06lx\n", argv[optind], qpn);
	else
		printf("# %s\n", argv[optind]);
	cli_counters_each(&resp, all, print_one, NULL);
	return 0;
}
