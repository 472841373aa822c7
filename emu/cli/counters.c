/* SPDX-License-Identifier: MIT */
/*
 * `uroce counters NAME [--qp QPN] [--all]`: the counters of one live device
 * (or of one of its QPs): every reason the transport dropped a packet, the
 * transport's events (packets, retries, NAKs, completions...) and the
 * daemon's own counters (datagrams, DMA, rings, CQs, capture, sleeps), by
 * name, one per line. Zero counters are left out unless --all is given.
 * With --watch [SECONDS]: every interval (default 1 s) the counters that
 * changed since the last report, with the change and its rate per second,
 * until interrupted (SIGINT, SIGTERM) or, with --count N, after N reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>

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
	fprintf(f, "Usage: uroce counters NAME [--qp QPN] [--all] [--watch [SECONDS] [--count N]]\n"
		   "                      [--rundir DIR]\n"
		   "\n"
		   "Print the counters of the live uroce device NAME: packets "
		   "dropped by reason\n"
		   "(drop.*), transport events (xport.*) and the daemon's own "
		   "counters (daemon.*).\n"
		   "\n"
		   "  -q, --qp QPN       the counters of one QP (decimal or 0x hex)\n"
		   "  -a, --all          also print counters that are zero\n"
		   "  -w, --watch [S]    every S seconds (default 1) the counters that "
		   "changed, with\n"
		   "                     their rate per second, until interrupted\n"
		   "  -c, --count N      with --watch: stop after N reports\n" CLI_COMMON_HELP);
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

static volatile sig_atomic_t watch_stop;

static void on_stop(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct watch_out {
	const struct uroce_query_counters_resp *prev;
	double secs;
	unsigned changed;
};

/* Print one counter of a watch report if it changed since the last one. */
static void watch_one(void *arg, const char *group, const char *name, unsigned index,
		      uint64_t value)
{
	struct watch_out *o = arg;
	const struct uroce_query_counters_resp *p = o->prev;
	uint32_t off = !strcmp(group, "drop")	 ? 0
		       : !strcmp(group, "xport") ? p->ndrop
						 : p->ndrop + p->nevent;
	uint64_t before = p->values[off + index];
	char key[64];

	if (value == before)
		return;
	if (name)
		snprintf(key, sizeof(key), "%s.%s", group, name);
	else
		snprintf(key, sizeof(key), "%s.%u", group, index);
	printf("  %-28s %14" PRIu64 " %+12" PRId64 " %12.1f/s\n", key, value,
	       (int64_t)(value - before), (double)(int64_t)(value - before) / o->secs);
	o->changed++;
}

/* --watch: a report every interval until stopped or count reports (0: no end). */
static int watch(const char *dev, const char *path, uint32_t qpn, double interval,
		 unsigned long count)
{
	struct uroce_query_counters_resp prev, cur;
	struct sigaction sa = {.sa_handler = on_stop};
	double t0, t, last;
	unsigned long n = 0;
	int rc = cli_counters_query(path, qpn, &prev);

	if (rc) {
		fprintf(stderr, "uroce counters: %s: %s\n", dev, cli_common_strerror(rc));
		return rc == -ENOENT && !qpn ? 2 : 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = last = now_s();
	printf("# %s%s: counters that changed every %.3g s (value, change, rate)\n", dev,
	       qpn ? " QP" : "", interval);
	fflush(stdout);
	while (!watch_stop && (!count || n < count)) {
		struct timespec ts = {.tv_sec = (time_t)interval,
				      .tv_nsec =
					  (long)((interval - (double)(time_t)interval) * 1e9)};
		struct watch_out o = {.prev = &prev};

		if (nanosleep(&ts, NULL) && watch_stop)
			break;
		rc = cli_counters_query(path, qpn, &cur);
		if (rc) {
			fprintf(stderr, "uroce counters: %s: %s\n", dev, cli_common_strerror(rc));
			return 1;
		}
		if (cur.ndrop != prev.ndrop || cur.nevent != prev.nevent ||
		    cur.ndaemon != prev.ndaemon)
			return 1; /* not reached: the lists are fixed per daemon */
		t = now_s();
		o.secs = t - last > 1e-6 ? t - last : 1e-6;
		printf("# %s at %.2f s\n", dev, t - t0);
		cli_counters_each(&cur, 0, watch_one, &o);
		if (!o.changed)
			printf("  (no change)\n");
		fflush(stdout);
		prev = cur;
		last = t;
		n++;
	}
	return 0;
}

int cli_counters_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"qp", required_argument, NULL, 'q'},
	    {"all", no_argument, NULL, 'a'},
	    {"watch", no_argument, NULL, 'w'},
	    {"count", required_argument, NULL, 'c'},
	    {"rundir", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct uroce_query_counters_resp resp;
	const char *explicit_dir = NULL;
	char path[512];
	unsigned long qpn = 0, count = 0;
	int c, all = 0, rc, watching = 0;
	double interval = 1;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "q:awc:r:h", longopts, NULL)) != -1) {
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
		case 'w':
			watching = 1;
			break;
		case 'c':
			errno = 0;
			count = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || !count) {
				fprintf(stderr,
					"uroce counters: --count %s: need a positive number\n",
					optarg);
				return 2;
			}
			break;
		default:
			rc = cli_common_opt(c, optarg, &explicit_dir, usage);
			if (rc >= 0)
				return rc;
		}
	}
	/* --watch SECONDS: the interval is an operand after the name. */
	if (watching && optind == argc - 2) {
		errno = 0;
		interval = strtod(argv[optind + 1], &end);
		if (errno || *end || end == argv[optind + 1] || !(interval >= 0.01) ||
		    interval > 86400) {
			fprintf(stderr, "uroce counters: --watch %s: need seconds 0.01..86400\n",
				argv[optind + 1]);
			return 2;
		}
		argc--;
	}
	if (optind != argc - 1 || (count && !watching)) {
		usage(stderr);
		return 2;
	}
	rc = cli_common_device_path("counters", argv[optind], explicit_dir, path, sizeof(path));
	if (rc)
		return rc;
	if (watching)
		return watch(argv[optind], path, (uint32_t)qpn, interval, count);
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
