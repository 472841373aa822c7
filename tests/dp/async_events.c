/* SPDX-License-Identifier: MIT */
/*
 * async_events: an ordinary verbs program checking QP asynchronous events
 * with real traffic between two RC QPs of one device:
 * IBV_EVENT_COMM_EST once, for the QP in RTR that receives its first
 * packet (not for the requester in RTS, not again for later packets), and
 * IBV_EVENT_SQ_DRAINED once per move to SQD with en_sqd_async_notify,
 * raised after the completions of the SENDs posted before the move, with
 * sq_draining clear once it is raised; none without en_sqd_async_notify.
 * Run it under the shim:
 *
 *   async_events DEVICE
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <infiniband/verbs.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH 16

static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok)
		failures++;
}

struct side {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned unacked;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char buf[8192];
static union ibv_gid gid;

static int side_init(struct side *s)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = DEPTH,
		    .max_recv_wr = DEPTH,
		    .max_send_sge = 1,
		    .max_recv_sge = 1},
	};

	s->ch = ibv_create_comp_channel(ctx);
	s->cq = s->ch ? ibv_create_cq(ctx, 64, NULL, s->ch, 0) : NULL;
	if (!s->cq)
		return -1;
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	return s->qp ? 0 : -1;
}

/* RESET -> INIT -> RTR, connected to QP dest of this device. */
static int to_rtr(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS,
				.timeout = 14,
				.retry_cnt = 7,
				.rnr_retry = 7,
				.max_rd_atomic = 1};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		check(0, "post_recv: %s", strerror(errno));
}

static void post_send(struct side *s, enum ibv_wr_opcode op, unsigned flags)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 2,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = flags},
			   *bad;

	wr.imm_data = 0x01020304;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(s->qp, &wr, &bad))
		check(0, "post_send: %s", strerror(errno));
}

/* Poll n completions (busy, up to 5 s); returns how many. */
static int poll_n(struct side *s, int n)
{
	struct ibv_wc wc;
	int got = 0;

	for (long i = 0; i < 50000000 && got < n; i++) {
		int r = ibv_poll_cq(s->cq, 1, &wc);

		if (r < 0)
			return got;
		if (r == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				check(0, "completion status %s", ibv_wc_status_str(wc.status));
			got++;
		}
	}
	return got;
}

/* The next async event within ms: its type (acknowledged), or -1. */
static int async_event(int ms, struct ibv_qp **qp)
{
	struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
	struct ibv_async_event ev;
	int type;

	if (poll(&p, 1, ms) != 1 || ibv_get_async_event(ctx, &ev))
		return -1;
	type = (int)ev.event_type;
	*qp = ev.element.qp;
	ibv_ack_async_event(&ev);
	return type;
}

static int set_sqd(struct ibv_qp *qp, int notify)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD, .en_sqd_async_notify = (uint8_t)notify};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
}

static int set_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_qp *who = NULL;
	struct ibv_wc wc[4];
	struct side a, b;
	int n, t;

	if (argc != 2) {
		fprintf(stderr, "usage: async_events DEVICE\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "async_events: no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
		: NULL;
	/* a: RTS; b: RTR only, as a passive side before its RTU. */
	if (!mr || ibv_query_gid(ctx, 1, 0, &gid) || side_init(&a) || side_init(&b) ||
	    to_rtr(a.qp, b.qp->qp_num) || to_rts(a.qp) || to_rtr(b.qp, a.qp->qp_num)) {
		fprintf(stderr, "async_events: setup failed: %s\n", strerror(errno));
		return 1;
	}

	/* IBV_EVENT_COMM_EST (IBA 11.6.3.1). */
	check(async_event(100, &who) < 0, "no async event before any traffic");
	for (int i = 0; i < 3; i++)
		post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "SEND to a QP in RTR completes");
	t = async_event(5000, &who);
	check(t == IBV_EVENT_COMM_EST && who == b.qp,
	      "IBV_EVENT_COMM_EST for the receiver in RTR (event %d)", t);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 2) == 2 && poll_n(&a, 2) == 2, "two more SENDs complete");
	t = async_event(200, &who);
	check(t < 0, "COMM_EST only once (next event %d)", t);
	check(to_rts(b.qp) == 0, "receiver RTR -> RTS");

	/* IBV_EVENT_SQ_DRAINED (IBA 11.6.3.1, 10.3.1.2). */
	for (int i = 0; i < 3; i++)
		post_recv(&b);
	for (int i = 0; i < 3; i++)
		post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(set_sqd(a.qp, 1) == 0, "RTS -> SQD with en_sqd_async_notify, 3 SENDs posted");
	t = async_event(5000, &who);
	check(t == IBV_EVENT_SQ_DRAINED && who == a.qp, "IBV_EVENT_SQ_DRAINED (event %d)", t);
	/* The completions come before the event. */
	n = ibv_poll_cq(a.cq, 4, wc);
	check(n == 3, "the 3 send completions are there when it arrives (%d)", n);
	check(poll_n(&b, 3) == 3, "3 receive completions");
	memset(&qa, 0xff, sizeof(qa));
	n = ibv_query_qp(a.qp, &qa, IBV_QP_STATE | IBV_QP_CUR_STATE, &ia);
	check(n == 0 && qa.qp_state == IBV_QPS_SQD && !qa.sq_draining,
	      "query: SQD, sq_draining %d (ret %d)", qa.sq_draining, n);
	t = async_event(200, &who);
	check(t < 0, "SQ_DRAINED only once (next event %d)", t);
	check(set_rts(a.qp) == 0, "SQD -> RTS");
	/* Without en_sqd_async_notify: no event. */
	check(set_sqd(a.qp, 0) == 0, "RTS -> SQD without en_sqd_async_notify");
	t = async_event(200, &who);
	check(t < 0, "no SQ_DRAINED without en_sqd_async_notify (event %d)", t);
	check(set_rts(a.qp) == 0, "SQD -> RTS");
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "traffic again after SQD");

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	printf("%s: async_events, %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
