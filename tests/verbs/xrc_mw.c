// SPDX-License-Identifier: MIT
/*
 * xrc_mw A B: memory windows and invalidation over XRC between two RNICs.
 * Each RNIC gets an XRC domain, an XRC SRQ, an XRC target QP and an XRC
 * initiator QP; A's initiator talks to B's target and B's initiator to A's
 * target. On B a type 2 window over an MR is bound through B's initiator
 * QP (ibv_wr_bind_mw, IBV_WC_BIND_MW), A WRITEs through it into B's memory
 * (A's initiator, B's target, the XRCETH naming B's SRQ), B invalidates it
 * with IBV_WR_LOCAL_INV on its initiator QP, binds it again under the next
 * key, A WRITEs again, then A sends a SEND with Invalidate of that key
 * (XRC SEND Only with Invalidate) that arrives on B's SRQ with
 * IBV_WC_WITH_INV and the key, and A's next WRITE through the dead key
 * fails with IBV_WC_REM_ACCESS_ERR. B's target QP, moved to Error by that
 * access error, reports IBV_EVENT_QP_FATAL and IBV_EVENT_QP_LAST_WQE_REACHED;
 * A's target QP, moved to Error with ibv_modify_qp, reports
 * IBV_EVENT_QP_LAST_WQE_REACHED too. Plain libibverbs: runs under the shim.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_test.h"

#define BYTES 8192


/* One RNIC's XRC objects. */
struct node {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	uint32_t srqn;
	struct ibv_qp *tgt, *ini;
	struct ibv_qp_ex *x;
	union ibv_gid gid;
	char *buf;
	struct ibv_mr *mr;
};

static int node_init(struct node *n, const char *dev)
{
	struct ibv_xrcd_init_attr xa = {.comp_mask =
					    IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					.fd = -1,
					.oflags = O_CREAT};
	struct ibv_srq_init_attr_ex sa = {0};
	struct ibv_qp_init_attr_ex qa = {0};

	n->ctx = open_dev(dev);
	n->pd = n->ctx ? ibv_alloc_pd(n->ctx) : NULL;
	n->cq = n->pd ? ibv_create_cq(n->ctx, 64, NULL, NULL, 0) : NULL;
	n->xrcd = n->cq ? ibv_open_xrcd(n->ctx, &xa) : NULL;
	n->buf = calloc(1, BYTES);
	if (!n->xrcd || !n->buf || ibv_query_gid(n->ctx, 1, 0, &n->gid))
		return -1;
	n->mr = ibv_reg_mr(n->pd, n->buf, BYTES,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ |
		       IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = n->xrcd;
	sa.cq = n->cq;
	sa.pd = n->pd;
	n->srq = n->mr ? ibv_create_srq_ex(n->ctx, &sa) : NULL;
	if (!n->srq || ibv_get_srq_num(n->srq, &n->srqn))
		return -1;
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = n->xrcd;
	n->tgt = ibv_create_qp_ex(n->ctx, &qa);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.pd = n->pd;
	qa.send_cq = n->cq;
	qa.cap.max_send_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
			    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_LOCAL_INV |
			    IBV_QP_EX_WITH_BIND_MW;
	n->ini = ibv_create_qp_ex(n->ctx, &qa);
	check(n->ini != NULL,
	      "%s: an XRC initiator QP with SEND_WITH_INV, LOCAL_INV and BIND_MW send ops: %s", dev,
	      n->ini ? "created" : strerror(errno));
	n->x = n->ini ? ibv_qp_to_qp_ex(n->ini) : NULL;
	return n->tgt && n->x ? 0 : -1;
}

/* INIT, RTR (and RTS for an initiator) towards QP dest at GID g. */
static int bring_up(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *g, int tgt)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	a.qp_access_flags = tgt ? IBV_ACCESS_REMOTE_WRITE : 0;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *g;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN |
			      (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		return -1;
	if (tgt)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc = {.status = (enum ibv_wc_status) - 1};

	for (int i = 0; i < 10000 && ibv_poll_cq(cq, 1, &wc) == 0; i++)
		usleep(500);
	return wc;
}

/* A's WRITE of 256 bytes through rkey into B's buf + off, to B's SRQ. */
static int write_to(struct node *a, struct node *b, uint32_t rkey, size_t off, uint64_t wr_id)
{
	ibv_wr_start(a->x);
	a->x->wr_id = wr_id;
	a->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(a->x, rkey, (uintptr_t)b->buf + off);
	ibv_wr_set_xrc_srqn(a->x, b->srqn);
	ibv_wr_set_sge(a->x, a->mr->lkey, (uintptr_t)a->buf + off, 256);
	return ibv_wr_complete(a->x);
}

/* B binds window mw over its buf under key rkey through its initiator QP. */
static int bind(struct node *b, struct ibv_mw *mw, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_mw_bind_info bi = {.mr = b->mr,
				      .addr = (uintptr_t)b->buf,
				      .length = BYTES,
				      .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};

	ibv_wr_start(b->x);
	b->x->wr_id = wr_id;
	b->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(b->x, mw, rkey, &bi);
	return ibv_wr_complete(b->x);
}

/* The next async events of ctx within ms, until one of type want for qp: 1 if it came. */
static int event_for(struct ibv_context *ctx, struct ibv_qp *qp, enum ibv_event_type want, int ms)
{
	struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};

	while (poll(&pfd, 1, ms) == 1) {
		struct ibv_async_event ev;
		int hit;

		if (ibv_get_async_event(ctx, &ev))
			return 0;
		hit = ev.event_type == want && ev.element.qp == qp;
		ibv_ack_async_event(&ev);
		if (hit)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct node a, b;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t k1, k2;
	int fl;

	if (argc != 3) {
		fprintf(stderr, "usage: xrc_mw A B\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (node_init(&a, argv[1]) || node_init(&b, argv[2])) {
		fprintf(stderr, "xrc_mw: set-up failed: %s\n", strerror(errno));
		return 1;
	}
	/* The async fds are polled with a timeout. */
	fl = fcntl(a.ctx->async_fd, F_GETFL);
	fcntl(a.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	fl = fcntl(b.ctx->async_fd, F_GETFL);
	fcntl(b.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	if (bring_up(b.tgt, a.ini->qp_num, &a.gid, 1) ||
	    bring_up(a.ini, b.tgt->qp_num, &b.gid, 0) ||
	    bring_up(a.tgt, b.ini->qp_num, &b.gid, 1) ||
	    bring_up(b.ini, a.tgt->qp_num, &a.gid, 0)) {
		fprintf(stderr, "xrc_mw: connecting failed: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < BYTES; i++)
		a.buf[i] = (char)(i * 13 + 1);

	/* A type 2 window of B, bound through B's XRC initiator QP. */
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	check(mw != NULL, "ibv_alloc_mw type 2 on B");
	if (!mw)
		return 1;
	k1 = ibv_inc_rkey(mw->rkey);
	check(!bind(&b, mw, k1, 1), "ibv_wr_bind_mw on B's XRC initiator QP posted");
	wc = wait_wc(b.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
	      "the bind completes: %s, opcode %d (IBV_WC_BIND_MW)", ibv_wc_status_str(wc.status),
	      wc.opcode);

	check(!write_to(&a, &b, k1, 0, 2), "A's WRITE through the window posted");
	wc = wait_wc(a.cq);
	check(wc.status == IBV_WC_SUCCESS && !memcmp(b.buf, a.buf, 256),
	      "WRITE through the window into B (XRC target QP): %s, data there",
	      ibv_wc_status_str(wc.status));

	/* LOCAL_INV on B's initiator QP, then a new bind under the next key. */
	ibv_wr_start(b.x);
	b.x->wr_id = 3;
	b.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(b.x, k1);
	check(!ibv_wr_complete(b.x), "ibv_wr_local_inv on B's XRC initiator QP posted");
	wc = wait_wc(b.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV,
	      "LOCAL_INV completes: %s, opcode %d (IBV_WC_LOCAL_INV)", ibv_wc_status_str(wc.status),
	      wc.opcode);
	k2 = ibv_inc_rkey(k1);
	check(!bind(&b, mw, k2, 4), "bound again under the next key");
	wc = wait_wc(b.cq);
	check(wc.status == IBV_WC_SUCCESS, "the second bind completes: %s",
	      ibv_wc_status_str(wc.status));
	check(!write_to(&a, &b, k2, 256, 5), "A's WRITE under the new key posted");
	wc = wait_wc(a.cq);
	check(wc.status == IBV_WC_SUCCESS && !memcmp(b.buf + 256, a.buf + 256, 256),
	      "WRITE under the new key: %s", ibv_wc_status_str(wc.status));

	/* SEND with Invalidate from A, arriving on B's SRQ. */
	{
		struct ibv_sge sge = {
		    .addr = (uintptr_t)b.buf + 4096, .length = 4096, .lkey = b.mr->lkey};
		struct ibv_recv_wr rwr = {.wr_id = 77, .sg_list = &sge, .num_sge = 1}, *bad;

		check(!ibv_post_srq_recv(b.srq, &rwr, &bad), "a receive on B's XRC SRQ");
	}
	ibv_wr_start(a.x);
	a.x->wr_id = 6;
	a.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(a.x, k2);
	ibv_wr_set_xrc_srqn(a.x, b.srqn);
	ibv_wr_set_sge(a.x, a.mr->lkey, (uintptr_t)a.buf + 1024, 100);
	check(!ibv_wr_complete(a.x), "ibv_wr_send_inv on A's XRC initiator QP posted");
	wc = wait_wc(a.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND,
	      "SEND with Invalidate completes on A: %s", ibv_wc_status_str(wc.status));
	wc = wait_wc(b.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 77 &&
		  wc.byte_len == 100 && (wc.wc_flags & IBV_WC_WITH_INV) &&
		  wc.invalidated_rkey == k2 && !memcmp(b.buf + 4096, a.buf + 1024, 100),
	      "B's SRQ receives it: %s, wr_id %llu, %u bytes, IBV_WC_WITH_INV %s, rkey 0x%x (want "
	      "0x%x)",
	      ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id, wc.byte_len,
	      wc.wc_flags & IBV_WC_WITH_INV ? "set" : "not set", wc.invalidated_rkey, k2);

	/* The key is dead: the next WRITE fails, B's target QP goes to Error. */
	check(!write_to(&a, &b, k2, 512, 8), "A's WRITE through the invalidated key posted");
	wc = wait_wc(a.cq);
	check(wc.status == IBV_WC_REM_ACCESS_ERR, "it fails: %s (want %s)",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	check(b.buf[512] == 0, "nothing written");
	check(event_for(b.ctx, b.tgt, IBV_EVENT_QP_FATAL, 3000),
	      "B's XRC target QP, moved to Error by the access error: IBV_EVENT_QP_FATAL");
	check(event_for(b.ctx, b.tgt, IBV_EVENT_QP_LAST_WQE_REACHED, 3000),
	      "B's XRC target QP, moved to Error by the access error: "
	      "IBV_EVENT_QP_LAST_WQE_REACHED");

	/* A's target QP moved to Error by the application. */
	{
		struct ibv_qp_attr at = {.qp_state = IBV_QPS_ERR};

		check(!ibv_modify_qp(a.tgt, &at, IBV_QP_STATE), "A's XRC target QP to Error");
		check(event_for(a.ctx, a.tgt, IBV_EVENT_QP_LAST_WQE_REACHED, 3000),
		      "A's XRC target QP: IBV_EVENT_QP_LAST_WQE_REACHED");
	}

	ibv_destroy_qp(a.ini);
	ibv_destroy_qp(b.ini);
	check(!ibv_dealloc_mw(mw), "ibv_dealloc_mw");
	ibv_destroy_qp(a.tgt);
	ibv_destroy_qp(b.tgt);
	ibv_destroy_srq(a.srq);
	ibv_destroy_srq(b.srq);
	check(!ibv_close_xrcd(a.xrcd) && !ibv_close_xrcd(b.xrcd), "XRC domains closed");
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
