/* SPDX-License-Identifier: MIT */
/*
 * XRC through the engine over the fake network: an XRC initiator QP on A
 * (XRC_SEND, QPN 0x11) connected to an XRC target QP on B (XRC_RECV, QPN
 * 0x22, XRC domain 1), and on B XRC SRQ 5 in domain 1 and XRC SRQ 6 in
 * domain 2. Known answers: every request goes out with the XRC opcode and
 * an XRCETH naming the WR's SRQ, the target answers with XRC ACKs, READ
 * responses and Atomic Acknowledges (no XRCETH); a SEND lands in the SRQ its
 * XRCETH names and completes on that SRQ's CQ, whatever QP carried it; an
 * SRQ of another XRC domain is NAKed Remote Access Error and an SRQ number
 * that names none (or changes inside a message) Invalid Request, the
 * initiator's WR completing with IBV_WC_REM_ACCESS_ERR or
 * IBV_WC_REM_INV_REQ_ERR and the target QP moving to Error; an XRC request
 * to an initiator QP, or a response to a target QP, is dropped as the
 * wrong QP type.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/opcode.h>
#include "fake.h"

struct xrc_env {
	struct fake_net net;
	struct fake_host a, b;
	struct fake_qp *ini, *tgt;
	struct fake_mr *ma, *mb;
	struct fake_srq *s5, *s6;
};

static struct xrc_env *env;

static void setup(void)
{
	static const uint8_t ipa[4] = {10, 0, 0, 1}, ipb[4] = {10, 0, 0, 2};
	struct fake_conn c;

	env = calloc(1, sizeof(*env));
	fake_net_init(&env->net, 7);
	fake_host_init(&env->a, &env->net, 0, ipa);
	fake_host_init(&env->b, &env->net, 1, ipb);
	env->ini = fake_qp_create(&env->a, UROCE_QPT_XRC_SEND, 0x11, 64, true);
	env->tgt = fake_qp_create(&env->b, UROCE_QPT_XRC_RECV, 0x22, 1, false);
	ck_assert_ptr_nonnull(env->ini);
	ck_assert_ptr_nonnull(env->tgt);
	env->tgt->xrc_domain = 1;
	env->ma = fake_mr_reg(&env->a, 1u << 20, FAKE_ALL_ACCESS);
	env->mb = fake_mr_reg(&env->b, 1u << 20, FAKE_ALL_ACCESS);
	env->s5 = fake_srq_create(&env->b, 5, 1);
	env->s6 = fake_srq_create(&env->b, 6, 2);
	fake_conn_defaults(&c);
	fake_connect(env->ini, env->tgt, &c);
}

static void teardown(void)
{
	if (getenv("FAKE_DUMP"))
		fake_dump(&env->net);
	fake_host_fini(&env->a);
	fake_host_fini(&env->b);
	fake_net_fini(&env->net);
	free(env);
	env = NULL;
}

static void post(uint64_t wr_id, uint32_t opcode, uint32_t len, uint32_t srqn)
{
	struct xport_wqe w;

	fake_wqe(&w, wr_id, opcode, UROCE_SEND_SIGNALED, env->ma, 0, len);
	w.xrc_srqn = srqn;
	if (uroce_wr_flags(opcode) & (UROCE_WR_F_RDMA | UROCE_WR_F_ATOMIC))
		fake_wqe_remote(&w, env->mb, 0);
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
}

static const struct fake_log *pkt(int from, unsigned nth)
{
	int i = -1;

	for (unsigned k = 0; k <= nth; k++) {
		unsigned j = (unsigned)(i + 1);

		i = -1;
		for (; j < env->net.nlog; j++)
			if (env->net.log[j].from == from) {
				i = (int)j;
				break;
			}
		if (i < 0)
			return NULL;
	}
	return &env->net.log[i];
}

/* A 3-packet SEND to SRQ 5: XRC SEND First/Middle/Last with XRCETH 5, an XRC ACK. */
START_TEST(test_send_lands_in_named_srq)
{
	fake_pattern(env->ma->buf, 3000, 1);
	fake_srq_post_recv(env->s5, 50, env->mb, 0, 4096);
	fake_srq_post_recv(env->s6, 60, env->mb, 8192, 4096);
	post(1, UROCE_WR_SEND, 3000, 5);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 3);
	ck_assert_uint_eq(pkt(0, 0)->opcode, WIRE_OP_XRC_SEND_FIRST);
	ck_assert_uint_eq(pkt(0, 1)->opcode, WIRE_OP_XRC_SEND_MIDDLE);
	ck_assert_uint_eq(pkt(0, 2)->opcode, WIRE_OP_XRC_SEND_LAST);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(pkt(0, i)->srqn, 5);
		ck_assert_uint_eq(pkt(0, i)->qpn, 0x22);
	}
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 1);
	ck_assert_uint_eq(pkt(1, 0)->opcode, WIRE_OP_XRC_ACKNOWLEDGE);
	ck_assert_int_eq(pkt(1, 0)->srqn, -1);
	ck_assert_uint_eq(pkt(1, 0)->qpn, 0x11);

	ck_assert_uint_eq(env->ini->nscq, 1);
	ck_assert_uint_eq(env->ini->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->ini->scq[0].opcode, UROCE_WC_SEND);
	/* The receive completes on SRQ 5's CQ, none on the QP's or SRQ 6's. */
	ck_assert_uint_eq(env->s5->ncq, 1);
	ck_assert_uint_eq(env->s5->cq[0].wr_id, 50);
	ck_assert_uint_eq(env->s5->cq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->s5->cq[0].opcode, UROCE_WC_RECV);
	ck_assert_uint_eq(env->s5->cq[0].byte_len, 3000);
	ck_assert_uint_eq(env->s5->cq[0].qp_num, 0x22);
	ck_assert_uint_eq(env->s5->cq[0].src_qp, 0x11);
	ck_assert_uint_eq(env->s6->ncq, 0);
	ck_assert_uint_eq(env->s6->rq_head, 0);
	ck_assert_uint_eq(env->tgt->nrcq, 0);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 3000);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

/* WRITE, READ, CmpSwap and FetchAdd over XRC: XRC opcodes both ways. */
START_TEST(test_write_read_atomics)
{
	uint64_t v = 41;
	struct xport_wqe w;
	int i;

	fake_pattern(env->ma->buf, 2048, 2);
	post(1, UROCE_WR_RDMA_WRITE, 2048, 5);
	fake_run(&env->net, 1000);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 2048);
	memset(env->ma->buf, 0, 2048);
	post(2, UROCE_WR_RDMA_READ, 2048, 5);
	fake_run(&env->net, 1000);
	ck_assert_mem_eq(env->ma->buf, env->mb->buf, 2048);
	memcpy(env->mb->buf, &v, 8);
	fake_wqe(&w, 3, UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 0);
	w.compare_add = 1;
	w.xrc_srqn = 5;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(env->ini->nscq, 3);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(env->ini->scq[i].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->ini->scq[1].opcode, UROCE_WC_RDMA_READ);
	ck_assert_uint_eq(env->ini->scq[2].opcode, UROCE_WC_FETCH_ADD);
	/* The old value came back to A's buffer; B's is one more. */
	memcpy(&v, env->ma->buf, 8);
	ck_assert_uint_eq(v, 41);
	memcpy(&v, env->mb->buf, 8);
	ck_assert_uint_eq(v, 42);

	i = fake_find(&env->net, 0, WIRE_OP_XRC_RDMA_WRITE_FIRST, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].srqn, 5);
	i = fake_find(&env->net, 0, WIRE_OP_XRC_RDMA_READ_REQUEST, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].srqn, 5);
	ck_assert_uint_eq(env->net.log[i].dmalen, 2048);
	ck_assert_int_ge(fake_find(&env->net, 1, WIRE_OP_XRC_RDMA_READ_RESPONSE_FIRST, 0), 0);
	ck_assert_int_ge(fake_find(&env->net, 1, WIRE_OP_XRC_RDMA_READ_RESPONSE_LAST, 0), 0);
	i = fake_find(&env->net, 0, WIRE_OP_XRC_FETCH_ADD, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].srqn, 5);
	ck_assert_int_ge(fake_find(&env->net, 1, WIRE_OP_XRC_ATOMIC_ACKNOWLEDGE, 0), 0);
	/* Nothing of RC on the wire, no receive WQE used. */
	for (unsigned k = 0; k < env->net.nlog; k++)
		ck_assert_uint_eq(env->net.log[k].opcode >> 5, WIRE_TRANSPORT_XRC);
	ck_assert_uint_eq(env->s5->ncq, 0);
	ck_assert_uint_eq(env->b.atomics, 1);
}
END_TEST

/* An SRQ of another XRC domain: NAK Remote Access Error, IBV_WC_REM_ACCESS_ERR. */
START_TEST(test_srq_of_other_domain)
{
	int i;

	fake_srq_post_recv(env->s6, 60, env->mb, 0, 4096);
	post(1, UROCE_WR_SEND, 100, 6);
	fake_run(&env->net, 1000);

	i = fake_find(&env->net, 1, WIRE_OP_XRC_ACKNOWLEDGE, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].syndrome,
			 wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_REMOTE_ACCESS_ERR));
	ck_assert_uint_eq(env->ini->nscq, 1);
	ck_assert_uint_eq(env->ini->scq[0].status, UROCE_WC_REM_ACCESS_ERR);
	/* Nothing was taken from, or completed on, the other domain's SRQ. */
	ck_assert_uint_eq(env->s6->rq_head, 0);
	ck_assert_uint_eq(env->s6->ncq, 0);
	ck_assert_uint_eq(env->tgt->x.cnt[XPORT_CNT_XRC_SRQ_REFUSED], 1);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->ini->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/* An SRQ number that names no XRC SRQ: NAK Invalid Request, IBV_WC_REM_INV_REQ_ERR. */
START_TEST(test_no_such_srq)
{
	int i;

	post(1, UROCE_WR_SEND, 100, 77);
	fake_run(&env->net, 1000);

	i = fake_find(&env->net, 1, WIRE_OP_XRC_ACKNOWLEDGE, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].syndrome,
			 wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_INVALID_REQUEST));
	ck_assert_uint_eq(env->ini->nscq, 1);
	ck_assert_uint_eq(env->ini->scq[0].status, UROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(env->tgt->x.cnt[XPORT_CNT_XRC_SRQ_REFUSED], 1);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/* No receive WQE in the named SRQ: RNR NAK, and the retry lands once one is posted. */
START_TEST(test_rnr_then_delivery)
{
	post(1, UROCE_WR_SEND, 100, 5);
	fake_deliver_all(&env->net);
	fake_deliver_all(&env->net);
	ck_assert_int_ge(fake_find(&env->net, 1, WIRE_OP_XRC_ACKNOWLEDGE, 0), 0);
	ck_assert_uint_eq(env->tgt->x.cnt[XPORT_CNT_RNR_NAK_SENT], 1);
	fake_srq_post_recv(env->s5, 50, env->mb, 0, 4096);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->s5->ncq, 1);
	ck_assert_uint_eq(env->s5->cq[0].byte_len, 100);
	ck_assert_uint_eq(env->ini->nscq, 1);
	ck_assert_uint_eq(env->ini->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

/* The XRCETH changes inside a message: NAK Invalid Request at that packet. */
START_TEST(test_srqn_changes_inside_message)
{
	uint8_t data[1024] = {0};
	int i;

	fake_srq_post_recv(env->s5, 50, env->mb, 0, 4096);
	fake_send_xrc_req(env->ini, WIRE_OP_XRC_SEND_FIRST, 100, false, data, 1024, 5);
	fake_send_xrc_req(env->ini, WIRE_OP_XRC_SEND_LAST, 101, true, data, 10, 6);
	fake_deliver_all(&env->net);

	i = fake_find(&env->net, 1, WIRE_OP_XRC_ACKNOWLEDGE, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(env->net.log[i].psn, 101);
	ck_assert_int_eq(env->net.log[i].syndrome,
			 wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_INVALID_REQUEST));
	/* The receive WQE of SRQ 5 that the message had taken fails. */
	ck_assert_uint_eq(env->s5->ncq, 1);
	ck_assert_uint_eq(env->s5->cq[0].status, UROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/* Drop the first READ response the target sends. */
static int drop_first_read_resp(struct fake_net *net, const struct fake_log *e, void *arg)
{
	unsigned *n = arg;

	(void)net;
	if (e->from != 1 || e->opcode != WIRE_OP_XRC_RDMA_READ_RESPONSE_ONLY)
		return 0;
	return (*n)++ == 0 ? FAKE_DROP : 0;
}

/*
 * A READ for SRQ 5's domain whose response is lost, then a SEND to SRQ 7:
 * the retried READ is a duplicate at the target, replayed from its
 * responder resource (through SRQ 5 again), while the SEND lands in SRQ 7.
 */
START_TEST(test_read_replay_after_other_srq)
{
	struct fake_srq *s7 = fake_srq_create(&env->b, 7, 1);
	unsigned n = 0;

	env->net.filter = drop_first_read_resp;
	env->net.filter_arg = &n;
	fake_pattern(env->mb->buf, 512, 3);
	fake_srq_post_recv(s7, 70, env->mb, 8192, 4096);
	post(1, UROCE_WR_RDMA_READ, 512, 5);
	post(2, UROCE_WR_SEND, 100, 7);
	fake_run(&env->net, 10000);

	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(env->tgt->x.cnt[XPORT_CNT_READ_REPLAYED], 1);
	ck_assert_uint_eq(env->ini->nscq, 2);
	ck_assert_uint_eq(env->ini->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->ini->scq[0].opcode, UROCE_WC_RDMA_READ);
	ck_assert_uint_eq(env->ini->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_mem_eq(env->ma->buf, env->mb->buf, 512);
	ck_assert_uint_eq(s7->ncq, 1);
	ck_assert_uint_eq(s7->cq[0].wr_id, 70);
	ck_assert_uint_eq(env->s5->ncq, 0);
	ck_assert_uint_eq(env->tgt->x.resp.xrc_srqn, 7);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

/* Requests go to target QPs only, responses to initiators only. */
START_TEST(test_wrong_direction_dropped)
{
	uint8_t data[8] = {0};

	/* The target sends an XRC request: the initiator drops it. */
	fake_send_xrc_req(env->tgt, WIRE_OP_XRC_SEND_ONLY, 5000, true, data, 8, 1);
	/* An RC request to the target QP: dropped too. */
	fake_send_req(env->ini, WIRE_OP_RC_SEND_ONLY, 100, true, data, 8, 0, 0, 0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(env->ini->x.drops[XPORT_DROP_QP_TYPE], 1);
	ck_assert_uint_eq(env->tgt->x.drops[XPORT_DROP_QP_TYPE], 1);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 1);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 1);
	ck_assert_uint_eq(env->s5->ncq, 0);
}
END_TEST

/* ---- memory windows and invalidation on XRC QPs ---------------------------- */

/* A window of n bytes on host h (the fake's stand-in): valid, or free to be bound. */
static struct fake_mr *xrc_window(struct fake_host *h, size_t n, bool alive)
{
	struct fake_mr *m = fake_mr_reg(h, n, FAKE_ALL_ACCESS);

	m->window = true;
	m->dead = !alive;
	return m;
}

/*
 * A WRITE through a window of B, then a 2-packet SEND with Invalidate of its
 * key to SRQ 5: XRC SEND First, XRC SEND Last with Invalidate (XRCETH, then
 * the IETH with the key), the target invalidating the key as a remote
 * invalidation and completing on SRQ 5's CQ with IBV_WC_WITH_INV; a WRITE
 * through the dead key is then NAKed Remote Access Error.
 */
START_TEST(test_send_inv)
{
	struct fake_mr *wb = xrc_window(&env->b, 8192, true);
	uint32_t key = wb->key;
	struct xport_wqe w;
	int i;

	fake_pattern(env->ma->buf, 8192, 4);
	fake_srq_post_recv(env->s5, 50, env->mb, 0, 4096);
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 500);
	fake_wqe_remote(&w, wb, 0);
	w.xrc_srqn = 5;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	fake_wqe(&w, 2, UROCE_WR_SEND_WITH_INV, UROCE_SEND_SIGNALED, env->ma, 0, 1500);
	w.imm_data = key;
	w.xrc_srqn = 5;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	fake_run(&env->net, 1000);

	ck_assert_mem_eq(wb->buf, env->ma->buf, 500);
	i = fake_find(&env->net, 0, WIRE_OP_XRC_SEND_LAST_INV, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].srqn, 5);
	ck_assert_int_ge(fake_find(&env->net, 0, WIRE_OP_XRC_SEND_FIRST, 0), 0);
	ck_assert_uint_eq(env->s5->ncq, 1);
	ck_assert_uint_eq(env->s5->cq[0].wr_id, 50);
	ck_assert_uint_eq(env->s5->cq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->s5->cq[0].opcode, UROCE_WC_RECV);
	ck_assert_uint_eq(env->s5->cq[0].byte_len, 1500);
	ck_assert_uint_eq(env->s5->cq[0].wc_flags, UROCE_WC_WITH_INV);
	ck_assert_uint_eq(env->s5->cq[0].imm_data, key);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 1500);
	ck_assert(wb->dead);
	ck_assert(env->b.last_inv_remote);
	ck_assert_uint_eq(env->tgt->x.cnt[XPORT_CNT_INV_REMOTE], 1);
	ck_assert_uint_eq(env->ini->nscq, 2);
	ck_assert_uint_eq(env->ini->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->ini->scq[1].opcode, UROCE_WC_SEND);

	fake_wqe(&w, 3, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, wb, 0);
	w.xrc_srqn = 5;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->ini->nscq, 3);
	ck_assert_uint_eq(env->ini->scq[2].status, UROCE_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/* A key the target cannot invalidate: NAK Invalid Request, the SRQ's WQE in error. */
START_TEST(test_send_inv_refused)
{
	struct xport_wqe w;

	fake_srq_post_recv(env->s5, 50, env->mb, 0, 4096);
	fake_wqe(&w, 1, UROCE_WR_SEND_WITH_INV, UROCE_SEND_SIGNALED, env->ma, 0, 64);
	w.imm_data = env->mb->key; /* an MR's key, not a window's */
	w.xrc_srqn = 5;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_int_ge(fake_find(&env->net, 0, WIRE_OP_XRC_SEND_ONLY_INV, 0), 0);
	ck_assert_uint_eq(env->tgt->x.cnt[XPORT_CNT_INV_REFUSED], 1);
	ck_assert_uint_eq(env->s5->ncq, 1);
	ck_assert_uint_eq(env->s5->cq[0].status, UROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(env->ini->nscq, 1);
	ck_assert_uint_eq(env->ini->scq[0].status, UROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(env->tgt->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/* BIND_MW and LOCAL_INV on the XRC initiator QP: executed in order, nothing on the wire. */
START_TEST(test_local_ops)
{
	struct fake_mr *wa = xrc_window(&env->a, 4096, false);
	struct xport_wqe w;

	fake_srq_post_recv(env->s5, 50, env->mb, 0, 4096);
	fake_wqe(&w, 10, UROCE_WR_BIND_MW, UROCE_SEND_SIGNALED, NULL, 0, 0);
	w.bind.mw_handle = (uint32_t)(wa - env->a.mr) + 1;
	w.bind.rkey = 0x4343;
	w.bind.access = UROCE_ACCESS_REMOTE_WRITE;
	w.bind.length = wa->len;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	fake_wqe(&w, 11, UROCE_WR_LOCAL_INV, UROCE_SEND_SIGNALED, NULL, 0, 0);
	w.imm_data = 0x4343;
	ck_assert_int_eq(fake_post(env->ini, &w), 0);
	post(12, UROCE_WR_SEND, 100, 5);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 1);
	ck_assert_uint_eq(pkt(0, 0)->opcode, WIRE_OP_XRC_SEND_ONLY);
	ck_assert_uint_eq(env->ini->nscq, 3);
	ck_assert_uint_eq(env->ini->scq[0].opcode, UROCE_WC_BIND_MW);
	ck_assert_uint_eq(env->ini->scq[1].opcode, UROCE_WC_LOCAL_INV);
	ck_assert_uint_eq(env->ini->scq[2].opcode, UROCE_WC_SEND);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(env->ini->scq[i].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->a.binds, 1);
	ck_assert_uint_eq(env->a.invals, 1);
	ck_assert(!env->a.last_inv_remote);
	ck_assert(wa->dead);
	ck_assert_uint_eq(env->ini->x.cnt[XPORT_CNT_MW_BIND], 1);
	ck_assert_uint_eq(env->ini->x.cnt[XPORT_CNT_INV_LOCAL], 1);
}
END_TEST

static Suite *xrc_suite(void)
{
	Suite *s = suite_create("xrc");
	TCase *tc = tcase_create("xrc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_send_lands_in_named_srq);
	tcase_add_test(tc, test_write_read_atomics);
	tcase_add_test(tc, test_srq_of_other_domain);
	tcase_add_test(tc, test_no_such_srq);
	tcase_add_test(tc, test_rnr_then_delivery);
	tcase_add_test(tc, test_srqn_changes_inside_message);
	tcase_add_test(tc, test_read_replay_after_other_srq);
	tcase_add_test(tc, test_wrong_direction_dropped);
	tcase_add_test(tc, test_send_inv);
	tcase_add_test(tc, test_send_inv_refused);
	tcase_add_test(tc, test_local_ops);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(xrc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
