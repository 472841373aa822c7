/* SPDX-License-Identifier: MIT */
/*
 * cq_events: an ordinary verbs program checking completion events with real
 * traffic between two QPs of one device: a CQ armed for the next completion
 * gets an event for any completion; one armed solicited-only gets none for
 * a SEND without IBV_SEND_SOLICITED and one for a SEND with it (and for a
 * RDMA WRITE with immediate and IBV_SEND_SOLICITED); an unarmed CQ gets
 * none. Run it under the shim:
 *
 *   cq_events DEVICE
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

static int connect_qp(struct ibv_qp *qp, uint32_t dest)
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
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
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

/* An event on the side's channel within ms? (acknowledged) */
static int event(struct side *s, int ms)
{
	struct pollfd p = {.fd = s->ch->fd, .events = POLLIN};
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(s->ch, &cq, &cq_ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	return cq == s->cq;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct side a, b;
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: cq_events DEVICE\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "cq_events: no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
		: NULL;
	if (!mr || ibv_query_gid(ctx, 1, 0, &gid) || side_init(&a) || side_init(&b) ||
	    connect_qp(a.qp, b.qp->qp_num) || connect_qp(b.qp, a.qp->qp_num)) {
		fprintf(stderr, "cq_events: setup failed: %s\n", strerror(errno));
		return 1;
	}

	/* Unarmed: completions, no event. */
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "SEND completes on both sides");
	check(!event(&b, 100), "no event on an unarmed CQ");

	/* Armed for the next completion: any completion. */
	ibv_req_notify_cq(b.cq, 0);
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(event(&b, 5000), "event for a SEND on a CQ armed for the next completion");
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");
	check(!event(&b, 100), "one event per arming");

	/* Solicited-only: not for an unsolicited SEND... */
	ibv_req_notify_cq(b.cq, 1);
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "unsolicited SEND completes");
	check(!event(&b, 200), "no event for it on a CQ armed solicited-only");
	/* ...but for a solicited one (still armed)... */
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	check(event(&b, 5000), "event for a solicited SEND");
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");
	/* ...and for a solicited RDMA WRITE with immediate. */
	ibv_req_notify_cq(b.cq, 1);
	post_recv(&b);
	post_send(&a, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	check(event(&b, 5000), "event for a solicited RDMA WRITE with immediate");
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");

	/* The requester's own CQ armed solicited-only: a send completion is
	 * not solicited. */
	ibv_req_notify_cq(a.cq, 1);
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&a, 1) == 1 && poll_n(&b, 1) == 1, "SEND completes");
	check(!event(&a, 200), "no event for a send completion on a CQ armed solicited-only");

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_destroy_cq(a.cq);
	ibv_destroy_cq(b.cq);
	ibv_destroy_comp_channel(a.ch);
	ibv_destroy_comp_channel(b.ch);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
