/* SPDX-License-Identifier: MIT */
/*
 * `uroce qp DEVICE [QPN] [--json]`: looking inside the RNIC, as
 * `rdma resource show qp` does for a kernel device. One line per live QP
 * (QP_LIST control operation, uapi.h): local and remote QPN, type, state,
 * the requester's next PSN and oldest unacknowledged one, the responder's
 * expected PSN, outstanding send and receive WRs, READs and atomics in
 * flight, retries and RNR retries left, and the owning pid and command.
 * With a QPN: that QP in detail with its counters (QUERY_COUNTERS). With
 * --json: a JSON array of objects with the same fields. Exit status 0, 1
 * when there is no such QP, 2 for bad usage or a device that does not
 * exist.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_ctl.h"
#include "uroce/uapi.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce qp DEVICE [QPN] [--json] [--rundir DIR]\n"
		   "\n"
		   "List the live QPs of the uroce device DEVICE with their transport "
		   "state: PSNs,\n"
		   "outstanding work, retries left and the owning process. With QPN, "
		   "that QP in\n"
		   "detail with its counters.\n"
		   "\n"
		   "  -j, --json         a JSON array of objects\n" CLI_COMMON_HELP);
}

/* The textual address of a GID (dotted quad for IPv4-mapped ones). */
static void gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[16];

	if (!memcmp(gid, zero, 16))
		snprintf(buf, len, "-");
	else if (!memcmp(gid, v4, 12))
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

static unsigned mtu_bytes(unsigned mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

static void print_header(void)
{
	printf("%-10s %-8s %-8s %-4s %-5s %-8s %-8s %-8s %5s %5s %3s %5s %5s %7s %s\n", "DEVICE",
	       "LQPN", "RQPN", "TYPE", "STATE", "SQ-PSN", "UNACKED", "RQ-PSN", "SQ-WR", "RQ-WR",
	       "RD", "RETRY", "RNR", "PID", "COMM");
}

static void print_line(const char *dev, const void *entry)
{
	const struct uroce_qp_info *q = entry;

	printf("%-10s 0x%06x 0x%06x %-4s %-5s 0x%06x 0x%06x 0x%06x %5u %5u %3u %3u/%u %3u/%u %7u "
	       "%s\n",
	       dev, q->qpn, q->dest_qpn, uroce_qp_type_str(q->qp_type),
	       uroce_qp_state_str(q->qp_state), q->sq_psn, q->unacked_psn, q->rq_psn, q->sq_wrs,
	       q->rq_wrs, q->rd_atomic, q->retry_left, q->retry_cnt, q->rnr_left, q->rnr_retry,
	       q->pid, q->comm);
}

static void print_detail(const char *dev, const struct uroce_qp_info *q)
{
	char peer[INET6_ADDRSTRLEN];

	gid_str(q->dgid, peer, sizeof(peer));
	printf("QP 0x%06x of %s, pid %u (%s)\n", q->qpn, dev, q->pid, q->comm);
	printf("  type %s  state %s  remote QPN 0x%06x at %s\n", uroce_qp_type_str(q->qp_type),
	       uroce_qp_state_str(q->qp_state), q->dest_qpn, peer);
	printf("  sq-psn 0x%06x  unacked-psn 0x%06x  rq-psn 0x%06x  msn %u\n", q->sq_psn,
	       q->unacked_psn, q->rq_psn, q->msn);
	printf("  send WRs %u of %u  receive WRs %u of %u%s  READ/atomic %u (max %u, dest %u)\n",
	       q->sq_wrs, q->max_send_wr, q->rq_wrs, q->max_recv_wr, q->has_srq ? " (SRQ)" : "",
	       q->rd_atomic, q->max_rd_atomic, q->max_dest_rd_atomic);
	printf(
	    "  retries left %u of %u  RNR retries left %u of %u%s  timeout %u  min-rnr-timer %u  "
	    "mtu %u\n",
	    q->retry_left, q->retry_cnt, q->rnr_left, q->rnr_retry,
	    q->rnr_retry == 7 ? " (7: without end)" : "", q->timeout, q->min_rnr_timer,
	    mtu_bytes(q->path_mtu));
}

static void print_json(const char *dev, const void *entry)
{
	const struct uroce_qp_info *q = entry;
	char peer[INET6_ADDRSTRLEN];

	gid_str(q->dgid, peer, sizeof(peer));
	printf("{\"dev\":");
	cli_common_json_string(stdout, dev);
	printf(",\"lqpn\":%u,\"rqpn\":%u,\"type\":\"%s\",\"state\":\"%s\",\"sq-psn\":%u,"
	       "\"unacked-psn\":%u,\"rq-psn\":%u,\"msn\":%u,\"sq-wr\":%u,\"max-send-wr\":%u,"
	       "\"rq-wr\":%u,\"max-recv-wr\":%u,\"srq\":%s,\"rd-atomic\":%u,\"max-rd-atomic\":%u,"
	       "\"max-dest-rd-atomic\":%u,\"retry-left\":%u,\"retry-cnt\":%u,\"rnr-left\":%u,"
	       "\"rnr-retry\":%u,\"timeout\":%u,\"min-rnr-timer\":%u,\"mtu\":%u,\"peer\":",
	       q->qpn, q->dest_qpn, uroce_qp_type_str(q->qp_type), uroce_qp_state_str(q->qp_state),
	       q->sq_psn, q->unacked_psn, q->rq_psn, q->msn, q->sq_wrs, q->max_send_wr, q->rq_wrs,
	       q->max_recv_wr, q->has_srq ? "true" : "false", q->rd_atomic, q->max_rd_atomic,
	       q->max_dest_rd_atomic, q->retry_left, q->retry_cnt, q->rnr_left, q->rnr_retry,
	       q->timeout, q->min_rnr_timer, mtu_bytes(q->path_mtu));
	cli_common_json_string(stdout, peer);
	printf(",\"pid\":%u,\"comm\":", q->pid);
	cli_common_json_string(stdout, q->comm);
}

struct counter_out {
	int json;
	int n;
};

static void counter_one(void *arg, const char *group, const char *name, unsigned index,
			uint64_t value)
{
	struct counter_out *o = arg;
	char key[64];

	if (name)
		snprintf(key, sizeof(key), "%s.%s", group, name);
	else
		snprintf(key, sizeof(key), "%s.%u", group, index);
	if (o->json) {
		printf("%s", o->n ? "," : "");
		cli_common_json_string(stdout, key);
		printf(":%" PRIu64, value);
	} else {
		printf("  %-28s %" PRIu64 "\n", key, value);
	}
	o->n++;
}

static const struct cli_list qp_list =
    CLI_LIST_INIT("qp", "QPs", UROCE_OP_QP_LIST, struct uroce_qp_list_resp, qps,
		  struct uroce_qp_info, UROCE_QP_LIST_MAX);

/* One QP in detail with its counters. */
static int show_one(const char *dev, const char *path, uint32_t qpn, int json)
{
	struct uroce_query_counters_resp cnt;
	struct uroce_qp_list_resp resp;
	struct counter_out o = {.json = json};
	uint32_t count, next;
	int rc = cli_common_list_page(&qp_list, path, qpn, UROCE_QP_LIST_ONE, &resp, &count, &next);

	if (!rc && count != 1)
		rc = -EPROTO;
	if (!rc)
		rc = cli_counters_query(path, qpn, &cnt);
	if (rc == -ENOENT && !cli_common_list_page(&qp_list, path, 0, 0, &resp, &count, &next)) {
		fprintf(stderr, "uroce qp: %s has no QP 0x%x\n", dev, qpn);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "uroce qp: %s: %s\n", dev, cli_common_strerror(rc));
		return rc == -ENOENT || rc == -ECONNREFUSED ? 2 : 1;
	}
	if (json) {
		printf("[");
		print_json(dev, &resp.qps[0]);
		printf(",\"counters\":{");
		cli_counters_each(&cnt, 0, counter_one, &o);
		printf("}}]\n");
		return 0;
	}
	print_detail(dev, &resp.qps[0]);
	printf("counters (non-zero):\n");
	cli_counters_each(&cnt, 0, counter_one, &o);
	return 0;
}

int cli_qp_main(int argc, char **argv)
{
	const char *explicit_dir = NULL;
	unsigned long qpn = 0;
	char path[512], *end;
	int rc, json = 0;

	rc = cli_common_json_opts(argc, argv, &json, &explicit_dir, usage);
	if (rc >= 0)
		return rc;
	if (optind == argc || argc - optind > 2) {
		usage(stderr);
		return 2;
	}
	if (argc - optind == 2) {
		errno = 0;
		qpn = strtoul(argv[optind + 1], &end, 0);
		if (errno || *end || end == argv[optind + 1] || !qpn || qpn > 0xffffff) {
			fprintf(stderr, "uroce qp: %s: need a QP number 1..0xffffff\n",
				argv[optind + 1]);
			return 2;
		}
	}
	rc = cli_common_device_path("qp", argv[optind], explicit_dir, path, sizeof(path));
	if (rc)
		return rc;
	if (qpn)
		return show_one(argv[optind], path, (uint32_t)qpn, json);
	return cli_common_list_show(&qp_list, argv[optind], path, json);
}
