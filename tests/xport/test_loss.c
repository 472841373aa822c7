/* SPDX-License-Identifier: MIT */
/*
 * Loss, duplication and error handling of the RC transport, with scripted
 * faults on the fake network and exact packet sequences: PSN sequence NAK
 * and go-back-N, retransmission timeout, duplicates acknowledged but not
 * executed, READ resumed from the first missing response, atomics replayed
 * from the responder resources, RNR NAK and rnr_retry, retry_cnt
 * exhaustion, implied NAK, remote access / invalid request / remote
 * operational errors, local protection errors, and the flush of every WQE
 * after an error.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/opcode.h>
#include <wire/psn.h>
#include "fake.h"

static struct fake_env *env;

/* Scripted faults: apply `fate` to the nth packet from `from` with `opcode`. */
struct rule {
	int from;
	int opcode; /* -1: any */
	int nth;    /* -1: every one */
	int fate;
	int seen;
};

static struct rule rules[8];
static unsigned nrules;

static int rule_filter(struct fake_net *net, const struct fake_log *e, void *arg)
{
	int fate = 0;

	(void)net;
	(void)arg;
	for (unsigned i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];

		if (e->from != r->from || (r->opcode >= 0 && e->opcode != r->opcode))
			continue;
		if (r->nth < 0 || r->seen == r->nth)
			fate |= r->fate;
		r->seen++;
	}
	return fate;
}

static void add_rule(int from, int opcode, int nth, int fate)
{
	rules[nrules++] = (struct rule){from, opcode, nth, fate, 0};
	env->net.filter = rule_filter;
}

static void setup_env(const struct fake_conn *c)
{
	nrules = 0;
	env = fake_env_new(42, UROCE_QPT_RC, c);
}

static void teardown(void)
{
	if (env && getenv("FAKE_DUMP"))
		fake_dump(&env->net);
	if (env)
		fake_env_free(env);
	env = NULL;
}

static const struct fake_log *pkt_at(int from, unsigned n)
{
	int i = fake_find(&env->net, from, -1, n);

	ck_assert_msg(i >= 0, "no packet %u from %d", n, from);
	return &env->net.log[i];
}

static void expect(int from, unsigned n, uint8_t opcode, uint32_t psn)
{
	const struct fake_log *e = pkt_at(from, n);

	ck_assert_msg(e->opcode == opcode && e->psn == psn,
		      "packet %u from %d: opcode 0x%02x psn 0x%x, want 0x%02x 0x%x", n, from,
		      e->opcode, e->psn, opcode, psn);
}

#define P(n) wire_psn_add(env->conn.psn_a, (n))
#define NAK(code) (0x60 | (code))

START_TEST(test_lost_middle)
{
	struct xport_wqe w;

	setup_env(NULL);
	add_rule(0, WIRE_OP_RC_SEND_MIDDLE, 0, FAKE_DROP);
	fake_pattern(env->ma->buf, 4096, 1);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 4096);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 6);
	expect(0, 0, WIRE_OP_RC_SEND_FIRST, P(0));
	expect(0, 1, WIRE_OP_RC_SEND_MIDDLE, P(1)); /* lost */
	expect(0, 2, WIRE_OP_RC_SEND_MIDDLE, P(2));
	expect(0, 3, WIRE_OP_RC_SEND_LAST, P(3));
	/* Go-back-N from the NAKed PSN, one probe of XPORT_RETX_PROBE packets. */
	expect(0, 4, WIRE_OP_RC_SEND_MIDDLE, P(1));
	expect(0, 5, WIRE_OP_RC_SEND_MIDDLE, P(2));
	ck_assert(!pkt_at(0, 2)->ackreq);
	ck_assert(pkt_at(0, 3)->ackreq);
	ck_assert(pkt_at(0, 4)->ackreq);
	ck_assert(pkt_at(0, 5)->ackreq);
	/*
	 * One NAK for the gap (carrying the expected PSN), then silence; the
	 * responder held P2 and P3, so the resent P1 completes the message:
	 * one ACK for the run up to P3, one for the duplicate P2 (it asks).
	 */
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 3);
	expect(1, 0, WIRE_OP_RC_ACKNOWLEDGE, P(1));
	ck_assert_int_eq(pkt_at(1, 0)->syndrome, NAK(WIRE_NAK_PSN_SEQ_ERR));
	expect(1, 1, WIRE_OP_RC_ACKNOWLEDGE, P(3));
	ck_assert_int_eq(pkt_at(1, 1)->syndrome, 0x1f);
	expect(1, 2, WIRE_OP_RC_ACKNOWLEDGE, P(3));
	ck_assert_int_eq(pkt_at(1, 2)->syndrome, 0x1f);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_OUT_OF_SEQ], 0);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_HELD], 2);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_ACKED], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_SEQ_NAK_SENT], 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_NAK_SEQ], 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETX_PKTS], 2);
	ck_assert_uint_eq(env->net.timers_fired, 0);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 4096);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 4096);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_lost_ack_send)
{
	struct xport_wqe w;
	uint64_t t0;

	setup_env(NULL);
	add_rule(1, WIRE_OP_RC_ACKNOWLEDGE, 0, FAKE_DROP);
	fake_post_recv(env->qb, 1, env->mb, 0, 100);
	fake_post_recv(env->qb, 2, env->mb, 100, 100);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 50);
	t0 = env->net.now;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	expect(0, 0, WIRE_OP_RC_SEND_ONLY, P(0));
	expect(0, 1, WIRE_OP_RC_SEND_ONLY, P(0));
	expect(1, 0, WIRE_OP_RC_ACKNOWLEDGE, P(0)); /* lost */
	expect(1, 1, WIRE_OP_RC_ACKNOWLEDGE, P(0)); /* for the duplicate (C9-105) */
	/* Exactly one timeout of 4.096 us * 2^14. */
	ck_assert_uint_eq(env->net.now - t0, xport_timeout_us(14));
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT], 1);
	/* The duplicate was acknowledged, not executed: one receive, one message. */
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_REQ], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_ACKED], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_MSG_RCVD], 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rq_head, 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->timer, 0);
}
END_TEST

START_TEST(test_lost_ack_write_not_reexecuted)
{
	struct xport_wqe w;

	setup_env(NULL);
	add_rule(1, WIRE_OP_RC_ACKNOWLEDGE, 0, FAKE_DROP);
	memset(env->ma->buf, 0x11, 3000);
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 3000);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(env->mb->buf[2999], 0x11);
	/* The target application overwrites the data before the retransmission. */
	memset(env->mb->buf, 0xee, 3000);
	fake_run(&env->net, 1000);
	/*
	 * After the timeout the window is XPORT_CWND_MIN (2) packets, each
	 * asking for an ACK: the First and Middle go again, and the first
	 * answer, ACK(P2), covers the whole WRITE, so the Last is not resent.
	 */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 5);
	expect(0, 3, WIRE_OP_RC_RDMA_WRITE_FIRST, P(0));
	expect(0, 4, WIRE_OP_RC_RDMA_WRITE_MIDDLE, P(1));
	ck_assert(pkt_at(0, 3)->ackreq && pkt_at(0, 4)->ackreq);
	for (int i = 0; i < 3000; i++)
		ck_assert_uint_eq(env->mb->buf[i], 0xee);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_REQ], 2);
	/* Each duplicate asks for an ACK: the last in-order PSN (C9-105). */
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 3);
	expect(1, 1, WIRE_OP_RC_ACKNOWLEDGE, P(2));
	ck_assert_int_eq(pkt_at(1, 1)->syndrome, 0x1f);
	expect(1, 2, WIRE_OP_RC_ACKNOWLEDGE, P(2));
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_ACKED], 2);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_SILENT], 0);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT], 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_lost_read_response)
{
	struct xport_wqe w;
	uint32_t len = 4 * 1024 - 100;

	setup_env(NULL);
	add_rule(1, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 0, FAKE_DROP);
	fake_pattern(env->mb->buf + 7, len, 5);
	fake_wqe(&w, 1, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, len);
	fake_wqe_remote(&w, env->mb, 7);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	/* The READ is asked again from the first missing response only. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	expect(0, 0, WIRE_OP_RC_RDMA_READ_REQUEST, P(0));
	expect(0, 1, WIRE_OP_RC_RDMA_READ_REQUEST, P(1));
	ck_assert_uint_eq(pkt_at(0, 1)->va, (uint64_t)(uintptr_t)env->mb->buf + 7 + 1024);
	ck_assert_uint_eq(pkt_at(0, 1)->dmalen, len - 1024);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 7);
	expect(1, 0, WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, P(0));
	expect(1, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, P(1)); /* lost */
	expect(1, 2, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, P(2));
	expect(1, 3, WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, P(3));
	expect(1, 4, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, P(1)); /* replayed from memory */
	expect(1, 5, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, P(2));
	expect(1, 6, WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, P(3));
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_READ_REPLAYED], 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_IMPLIED], 1);
	ck_assert_uint_eq(env->qa->x.drops[XPORT_DROP_RESP_GAP], 2);
	ck_assert_uint_eq(env->net.timers_fired, 0);
	ck_assert_mem_eq(env->ma->buf, env->mb->buf + 7, len);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_lost_read_last_timeout)
{
	struct xport_wqe w;
	uint32_t len = 4 * 1024;

	setup_env(NULL);
	add_rule(1, WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 0, FAKE_DROP);
	fake_pattern(env->mb->buf, len, 6);
	fake_wqe(&w, 1, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, len);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	/* Nothing signals the loss but the timer; the retry asks for the last part. */
	ck_assert_uint_eq(env->net.timers_fired, 1);
	expect(0, 1, WIRE_OP_RC_RDMA_READ_REQUEST, P(3));
	ck_assert_uint_eq(pkt_at(0, 1)->dmalen, 1024);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 5);
	expect(1, 4, WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, P(3));
	ck_assert_mem_eq(env->ma->buf, env->mb->buf, len);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

/*
 * FLUSH whose answer is lost: the requester's timer sends it again, and
 * the responder answers the duplicate from its responder resource without
 * executing it again (rxe process_flush: oA19-14, oA19-15).
 */
START_TEST(test_dup_flush)
{
	struct fake_conn c;
	struct xport_wqe w;
	struct fake_mr *m;

	fake_conn_defaults(&c);
	c.access |= UROCE_ACCESS_FLUSH_GLOBAL;
	setup_env(&c);
	m = fake_mr_reg(&env->b, 4096,
			UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE |
			    UROCE_ACCESS_FLUSH_GLOBAL);
	add_rule(1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, FAKE_DROP);
	fake_wqe(&w, 1, UROCE_WR_FLUSH, UROCE_SEND_SIGNALED, NULL, 0, 0);
	fake_wqe_remote(&w, m, 0);
	w.flush_len = 4096;
	w.flush_type = UROCE_FLUSH_GLOBAL;
	w.flush_level = UROCE_FLUSH_RANGE;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->net.timers_fired, 1);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_FLUSH), 2);
	expect(0, 1, WIRE_OP_RC_FLUSH, P(0));
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 2);
	ck_assert_uint_eq(env->b.flushes, 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_FLUSH_EXECUTED], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_FLUSH_REPLAYED], 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_FLUSH);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

START_TEST(test_dup_atomic)
{
	struct xport_wqe w;
	uint64_t v = 1000, got;

	setup_env(NULL);
	add_rule(0, WIRE_OP_RC_FETCH_ADD, 0, FAKE_DUP);
	memcpy(env->mb->buf + 8, &v, 8);
	fake_wqe(&w, 1, UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 8);
	w.compare_add = 1;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->b.atomics, 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_ATOMIC_EXECUTED], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_ATOMIC_REPLAYED], 1);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ATOMIC_ACKNOWLEDGE), 2);
	memcpy(&got, env->mb->buf + 8, 8);
	ck_assert_uint_eq(got, 1001);
	memcpy(&got, env->ma->buf, 8);
	ck_assert_uint_eq(got, 1000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	/* The replayed answer found nothing left to complete. */
	ck_assert_uint_eq(env->qa->x.drops[XPORT_DROP_RESP_NO_WQE], 1);
}
END_TEST

START_TEST(test_lost_atomic_ack)
{
	struct xport_wqe w;
	uint64_t v = 7, got;

	setup_env(NULL);
	add_rule(1, WIRE_OP_RC_ATOMIC_ACKNOWLEDGE, 0, FAKE_DROP);
	memcpy(env->mb->buf, &v, 8);
	fake_wqe(&w, 1, UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 0);
	w.compare_add = 7;
	w.swap = 8;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->net.timers_fired, 1);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_COMPARE_SWAP), 2);
	/* Executed once: a second execution would have failed the compare. */
	ck_assert_uint_eq(env->b.atomics, 1);
	memcpy(&got, env->ma->buf, 8);
	ck_assert_uint_eq(got, 7);
	memcpy(&got, env->mb->buf, 8);
	ck_assert_uint_eq(got, 8);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_rnr_exhausted)
{
	struct fake_conn c;
	struct xport_wqe w;
	uint64_t t0;

	fake_conn_defaults(&c);
	c.rnr_retry = 3;
	c.min_rnr_timer = 1; /* 10 us */
	setup_env(&c);
	fake_wqe(&w, 1, UROCE_WR_SEND, 0, env->ma, 0, 10);
	t0 = env->net.now;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 4);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 4);
	for (unsigned i = 0; i < 4; i++) {
		expect(0, i, WIRE_OP_RC_SEND_ONLY, P(0));
		expect(1, i, WIRE_OP_RC_ACKNOWLEDGE, P(0));
		ck_assert_int_eq(pkt_at(1, i)->syndrome, 0x20 | 1);
	}
	ck_assert_uint_eq(env->net.now - t0, 3 * 10);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_RNR_RETRY_EXC_ERR);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 1);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qa->qp_errors, 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_RNR_NAK_SENT], 4);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RNR_NAK_RCVD], 4);
	ck_assert_uint_eq(env->qa->timer, 0);
	/* The responder is fine. */
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

START_TEST(test_rnr_recovers)
{
	struct xport_wqe w;

	setup_env(NULL);
	fake_pattern(env->ma->buf, 20, 1);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 10, 10);
	fake_post(env->qa, &w);
	fake_deliver_all(&env->net);
	/* RNR NAK for the first, PSN NAK for the pipelined second: the latter is ignored. */
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 2);
	ck_assert_int_eq(pkt_at(1, 0)->syndrome, 0x21);
	ck_assert_int_eq(pkt_at(1, 1)->syndrome, NAK(WIRE_NAK_PSN_SEQ_ERR));
	ck_assert_uint_eq(env->qa->x.drops[XPORT_DROP_RESP_RNR_WAIT], 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_NAK_SEQ], 0);
	fake_post_recv(env->qb, 1, env->mb, 0, 10);
	fake_post_recv(env->qb, 2, env->mb, 10, 10);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_RNR], 1);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 20);
	ck_assert_uint_eq(env->qa->x.comp.retry_left, 7);
}
END_TEST

START_TEST(test_retry_exhausted)
{
	struct fake_conn c;
	struct xport_wqe w;
	uint64_t t0;

	fake_conn_defaults(&c);
	c.retry_cnt = 2;
	setup_env(&c);
	add_rule(0, -1, -1, FAKE_DROP); /* the peer is gone */
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	t0 = env->net.now;
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_RDMA_WRITE, 0, env->ma, 0, 10); /* unsignaled */
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	/* Exactly three transmissions of each: the first and two retries. */
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_SEND_ONLY), 3);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_RDMA_WRITE_ONLY), 3);
	ck_assert_uint_eq(env->net.now - t0, 3 * xport_timeout_us(14));
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(env->qa->scq[1].wr_id, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qa->qp_errors, 1);
	ck_assert_uint_eq(env->qa->timer, 0);
	/* Posting to a QP in error completes at once, flushed. */
	fake_wqe(&w, 3, UROCE_WR_SEND, 0, env->ma, 0, 10);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->scq[2].status, UROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 6);
}
END_TEST

START_TEST(test_implied_nak)
{
	struct xport_wqe w;

	setup_env(NULL);
	add_rule(1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0, FAKE_DROP);
	fake_pattern(env->mb->buf, 100, 9);
	fake_wqe(&w, 1, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_post_recv(env->qb, 1, env->mb, 4096, 100);
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 200, 10);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	/* The ACK of the SEND passes the READ: retry at once, no timer. */
	ck_assert_uint_eq(env->net.timers_fired, 0);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_IMPLIED], 1);
	expect(0, 2, WIRE_OP_RC_RDMA_READ_REQUEST, P(0));
	expect(0, 3, WIRE_OP_RC_SEND_ONLY, P(1));
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_READ_REPLAYED], 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_mem_eq(env->ma->buf, env->mb->buf, 100);
}
END_TEST

START_TEST(test_lost_nak)
{
	struct xport_wqe w;

	setup_env(NULL);
	add_rule(0, WIRE_OP_RC_SEND_MIDDLE, 0, FAKE_DROP);
	add_rule(1, WIRE_OP_RC_ACKNOWLEDGE, 0, FAKE_DROP);
	fake_pattern(env->ma->buf, 3000, 3);
	fake_post_recv(env->qb, 1, env->mb, 0, 3000);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 3000);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->net.timers_fired, 1);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 6);
	expect(0, 3, WIRE_OP_RC_SEND_FIRST, P(0));
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 3000);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

/*
 * The responder's side of a gap, with hand-built packets of one 8-packet
 * WRITE (P0 First .. P7 Last, AckReq only on P7 and on one duplicate): P3
 * and P5 are missing at first. One PSN Sequence Error NAK per gap, carrying
 * the expected PSN (rxe check_psn; IBA 9.7.5.2), then silence until that
 * PSN arrives: the later packets are held, not answered; duplicates are
 * answered only when they ask (C9-105, coalesced): silence for two, ACK(P2)
 * for the one with AckReq. P3 closes the first gap; the held P4 runs, and
 * the held P6 and P7 show the next gap at once: NAK(P5). P5 closes it; P6
 * and P7 run and one ACK(P7) answers the whole run. The data lands once,
 * in order.
 */
START_TEST(test_nak_once_then_silent)
{
	const uint8_t *src;
	uint64_t va;
	uint32_t len = 8 * 1024;
	static const int order[] = {0, 1, 2, 4, 6, 7, 1, 2, -2, 3, 5};

	setup_env(NULL);
	src = env->ma->buf;
	va = (uint64_t)(uintptr_t)env->mb->buf;
	fake_pattern(env->ma->buf, len, 12);
	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int n = order[i] < 0 ? -order[i] : order[i];
		uint8_t op = n == 0   ? WIRE_OP_RC_RDMA_WRITE_FIRST
			     : n == 7 ? WIRE_OP_RC_RDMA_WRITE_LAST
				      : WIRE_OP_RC_RDMA_WRITE_MIDDLE;

		fake_send_req(env->qa, op, P(n), n == 7 || order[i] < 0, src + n * 1024, 1024, va,
			      env->mb->key, len);
		fake_deliver_all(&env->net);
	}
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 4);
	expect(1, 0, WIRE_OP_RC_ACKNOWLEDGE, P(3));
	ck_assert_int_eq(pkt_at(1, 0)->syndrome, NAK(WIRE_NAK_PSN_SEQ_ERR));
	expect(1, 1, WIRE_OP_RC_ACKNOWLEDGE, P(2));
	ck_assert_int_eq(pkt_at(1, 1)->syndrome, 0x1f);
	expect(1, 2, WIRE_OP_RC_ACKNOWLEDGE, P(5));
	ck_assert_int_eq(pkt_at(1, 2)->syndrome, NAK(WIRE_NAK_PSN_SEQ_ERR));
	expect(1, 3, WIRE_OP_RC_ACKNOWLEDGE, P(7));
	ck_assert_int_eq(pkt_at(1, 3)->syndrome, 0x1f);
	ck_assert_uint_eq(pkt_at(1, 3)->msn, 1);
	/* The NAKs answer the first packet beyond each gap (P4, then the held P6). */
	ck_assert_uint_eq(fake_find(&env->net, 1, -1, 0), 4);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_SEQ_NAK_SENT], 2);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_HELD], 3);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_OUT_OF_SEQ], 0);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_REQ], 3);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_SILENT], 2);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DUP_ACKED], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_MSG_RCVD], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_RX_BYTES], len);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, len);
	ck_assert_uint_eq(env->qb->x.held.n, 0);
	ck_assert_uint_eq(env->b.dev.held_bytes, 0);
}
END_TEST

/*
 * One rewind per loss. On a timed network (10 us one way, 1 us per packet,
 * no faults but these): P1's first transmission is lost and the original
 * P4 is held back 21 us. The responder holds P2, P3, P5 and NAKs P1 (the
 * NAK is duplicated on the way). The requester rewinds once and sends a
 * probe of two packets, P1 and P2; the responder runs P1..P3 and answers
 * ACK(P3), then NAK(P4) for the gap the late P4 leaves. The requester has
 * already sent P4 and P5 again on ACK(P3) (the next probe of the same
 * recovery), so NAK(P4), like the duplicate NAK(P1), is an echo: no second
 * rewind. The late original P4 closes the gap: ACK(P5), then one ACK(P5)
 * per duplicate that asks. Exactly 4 packets are sent again.
 */
START_TEST(test_one_rewind_per_loss)
{
	struct fake_link l = {.rate_bpus = 1100, .delay_us = 10, .reorder_us = 21};
	static const uint32_t resent[] = {1, 2, 4, 5};
	static const struct {
		uint32_t psn;
		int syndrome;
	} answers[] = {{1, NAK(WIRE_NAK_PSN_SEQ_ERR)},
		       {3, 0x1f},
		       {4, NAK(WIRE_NAK_PSN_SEQ_ERR)},
		       {5, 0x1f},
		       {5, 0x1f},
		       {5, 0x1f},
		       {5, 0x1f}};
	struct xport_wqe w;

	setup_env(NULL);
	fake_net_timed(&env->net, &l, &l);
	add_rule(0, WIRE_OP_RC_RDMA_WRITE_MIDDLE, 0, FAKE_DROP);    /* P1 */
	add_rule(0, WIRE_OP_RC_RDMA_WRITE_MIDDLE, 3, FAKE_REORDER); /* P4 */
	add_rule(1, WIRE_OP_RC_ACKNOWLEDGE, 0, FAKE_DUP);	    /* NAK(P1) twice */
	fake_pattern(env->ma->buf, 6 * 1024, 9);
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 6 * 1024);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 10);
	for (unsigned i = 0; i < 6; i++)
		expect(0, i,
		       i == 0	? WIRE_OP_RC_RDMA_WRITE_FIRST
		       : i == 5 ? WIRE_OP_RC_RDMA_WRITE_LAST
				: WIRE_OP_RC_RDMA_WRITE_MIDDLE,
		       P(i));
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(pkt_at(0, 6 + i)->psn, P(resent[i]));
		ck_assert(pkt_at(0, 6 + i)->ackreq);
	}
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETX_PKTS], 4);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 7);
	for (unsigned i = 0; i < 7; i++) {
		expect(1, i, WIRE_OP_RC_ACKNOWLEDGE, P(answers[i].psn));
		ck_assert_int_eq(pkt_at(1, i)->syndrome, answers[i].syndrome);
	}
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_SEQ_NAK_SENT], 2);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_HELD], 3);
	/* One rewind; the duplicate NAK(P1) and NAK(P4) are echoes. */
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_SEQ_NAK_RCVD], 3);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_NAK_SEQ], 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_NAK_ECHO], 2);
	ck_assert_uint_eq(env->qa->x.comp.retry_left, 7);
	ck_assert_uint_eq(env->net.timers_fired, 0);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 6 * 1024);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->timer, 0);
}
END_TEST

/* Drop every other SEND Only: each first transmission, not its retry. */
static int drop_first_tries(struct fake_net *net, const struct fake_log *e, void *arg)
{
	unsigned *n = arg;

	(void)net;
	if (e->from != 0 || e->opcode != WIRE_OP_RC_SEND_ONLY)
		return 0;
	return (*n)++ % 2 == 0 ? FAKE_DROP : 0;
}

/*
 * The retry counter counts retries without progress (IBA 9.7.6.1; rxe
 * reset_retry_counters): with retry_cnt 1, four SENDs whose first
 * transmission is always lost each need one timeout retry, and every ACK
 * that advances reloads the counter, so all four succeed. Then a SEND whose
 * retry is lost too makes no progress: exactly two IBA timeouts later it
 * fails with IBV_WC_RETRY_EXC_ERR. Timeout 1 (9 us) is below the adaptive
 * timer's floor, so every expiry here is an IBA timeout.
 */
START_TEST(test_retry_counter_progress)
{
	struct fake_conn c;
	struct xport_wqe w;
	unsigned n = 0;
	uint64_t t0;

	fake_conn_defaults(&c);
	c.retry_cnt = 1;
	c.timeout = 1;
	setup_env(&c);
	env->net.filter = drop_first_tries;
	env->net.filter_arg = &n;
	for (unsigned i = 0; i < 4; i++) {
		fake_post_recv(env->qb, i, env->mb, 64 * i, 64);
		fake_wqe(&w, i, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
		t0 = env->net.now;
		fake_post(env->qa, &w);
		fake_run(&env->net, 1000);
		ck_assert_uint_eq(env->net.now - t0, xport_timeout_us(1));
		ck_assert_uint_eq(env->qa->nscq, i + 1);
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_SUCCESS);
		ck_assert_uint_eq(env->qa->x.comp.retry_left, 1);
	}
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT], 4);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_FAST], 0);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 8);
	/* No progress: the first try and the one retry are lost. */
	add_rule(0, WIRE_OP_RC_SEND_ONLY, -1, FAKE_DROP);
	fake_wqe(&w, 9, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	t0 = env->net.now;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->net.now - t0, 2 * xport_timeout_us(1));
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 10);
	ck_assert_uint_eq(env->qa->nscq, 5);
	ck_assert_uint_eq(env->qa->scq[4].wr_id, 9);
	ck_assert_uint_eq(env->qa->scq[4].status, UROCE_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/*
 * The adaptive timer resends early but spends no retry: once a round trip
 * was measured (here 0 us on the instant fake network, so the timer is its
 * floor, XPORT_RTO_MIN_US, doubling per expiry), a peer that goes away is
 * probed again and again, yet the QP fails exactly after (retry_cnt + 1) x
 * the IBA timeout without progress, with IBV_WC_RETRY_EXC_ERR: what
 * retry_cnt x timeout promises the application (IBA 9.7.6.1).
 */
START_TEST(test_fast_retry_spends_nothing)
{
	struct fake_conn c;
	struct xport_wqe w;
	uint64_t t0, t = xport_timeout_us(10);

	fake_conn_defaults(&c);
	c.retry_cnt = 2;
	c.timeout = 10; /* 4.2 ms */
	setup_env(&c);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert(env->qa->x.cc.rtt_valid);
	add_rule(0, -1, -1, FAKE_DROP); /* the peer is gone */
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	t0 = env->net.now;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->net.now - t0, 3 * t);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT], 2);
	/*
	 * Before the first IBA timeout: 250, 500, 1000 and 2000 us apart;
	 * after it the doubled timer is as long as the IBA one.
	 */
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_FAST], 4);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1),
			  2 + env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT] +
			      env->qa->x.cnt[XPORT_CNT_RETRY_FAST]);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_RETRY_EXC_ERR);
	ck_assert_uint_eq(env->qa->qp_errors, 1);
}
END_TEST

/* Post a WRITE that fails remotely, a SEND behind it; check the aftermath. */
static void check_remote_error(struct xport_wqe *w, uint32_t want_status, uint8_t want_nak)
{
	struct xport_wqe s;

	fake_post_recv(env->qb, 50, env->mb, 0, 64);
	fake_post_recv(env->qb, 51, env->mb, 64, 64);
	fake_post(env->qa, w);
	fake_wqe(&s, 99, UROCE_WR_SEND, 0, env->ma, 0, 10); /* unsignaled */
	fake_post(env->qa, &s);
	fake_run(&env->net, 1000);
	expect(1, 0, WIRE_OP_RC_ACKNOWLEDGE, P(0));
	ck_assert_int_eq(pkt_at(1, 0)->syndrome, NAK(want_nak));
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 1);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, w->wr_id);
	ck_assert_uint_eq(env->qa->scq[0].status, want_status);
	ck_assert_uint_eq(env->qa->scq[1].wr_id, 99);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qa->qp_errors, 1);
	ck_assert_uint_eq(env->qb->qp_errors, 1);
	/* The responder's posted receives are flushed. */
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->qb->rcq[0].wr_id, 50);
	ck_assert_uint_eq(env->qb->rcq[0].status, UROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(env->qb->rcq[1].status, UROCE_WC_WR_FLUSH_ERR);
	/* The SEND that was already in flight met a QP in error. */
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_QP_STATE], 1);
	teardown();
}

START_TEST(test_remote_access_errors)
{
	struct xport_wqe w;
	struct fake_mr *ro;

	/* Bad R_Key. */
	setup_env(NULL);
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, env->mb, 0);
	w.rkey = 0xbad;
	check_remote_error(&w, UROCE_WC_REM_ACCESS_ERR, WIRE_NAK_REMOTE_ACCESS_ERR);
	/* Range outside the MR. */
	setup_env(NULL);
	fake_wqe(&w, 2, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, env->mb, FAKE_MR_BYTES - 50);
	check_remote_error(&w, UROCE_WC_REM_ACCESS_ERR, WIRE_NAK_REMOTE_ACCESS_ERR);
	/* MR without remote write access. */
	setup_env(NULL);
	ro = fake_mr_reg(&env->b, 4096, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_READ);
	fake_wqe(&w, 3, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, ro, 0);
	check_remote_error(&w, UROCE_WC_REM_ACCESS_ERR, WIRE_NAK_REMOTE_ACCESS_ERR);
	/* READ of an MR without remote read access. */
	setup_env(NULL);
	ro = fake_mr_reg(&env->b, 4096, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	fake_wqe(&w, 4, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, ro, 0);
	check_remote_error(&w, UROCE_WC_REM_ACCESS_ERR, WIRE_NAK_REMOTE_ACCESS_ERR);
	/* Atomic on an MR without remote atomic access. */
	setup_env(NULL);
	ro = fake_mr_reg(&env->b, 4096, UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE);
	fake_wqe(&w, 5, UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, ro, 0);
	check_remote_error(&w, UROCE_WC_REM_ACCESS_ERR, WIRE_NAK_REMOTE_ACCESS_ERR);
}
END_TEST

START_TEST(test_invalid_requests)
{
	struct fake_conn c;
	struct xport_wqe w;

	/* Misaligned atomic. */
	setup_env(NULL);
	fake_wqe(&w, 1, UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 4);
	check_remote_error(&w, UROCE_WC_REM_INV_REQ_ERR, WIRE_NAK_INVALID_REQUEST);
	/* RDMA WRITE to a QP that does not allow it. */
	fake_conn_defaults(&c);
	c.access = UROCE_ACCESS_REMOTE_READ;
	setup_env(&c);
	fake_wqe(&w, 2, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 0);
	check_remote_error(&w, UROCE_WC_REM_INV_REQ_ERR, WIRE_NAK_INVALID_REQUEST);
	/* No responder resources: READ is an invalid request. */
	fake_conn_defaults(&c);
	c.max_dest_rd_atomic = 0;
	setup_env(&c);
	fake_wqe(&w, 3, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 0);
	check_remote_error(&w, UROCE_WC_REM_INV_REQ_ERR, WIRE_NAK_INVALID_REQUEST);
}
END_TEST

START_TEST(test_recv_too_small)
{
	struct xport_wqe w;

	setup_env(NULL);
	fake_post_recv(env->qb, 7, env->mb, 0, 10);
	fake_post_recv(env->qb, 8, env->mb, 100, 10);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 20);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_int_eq(pkt_at(1, 0)->syndrome, NAK(WIRE_NAK_INVALID_REQUEST));
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->qb->rcq[0].wr_id, 7);
	ck_assert_uint_eq(env->qb->rcq[0].status, UROCE_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(env->qb->rcq[1].wr_id, 8);
	ck_assert_uint_eq(env->qb->rcq[1].status, UROCE_WC_WR_FLUSH_ERR);
}
END_TEST

/*
 * A SEND into B's only receive WQE, spoiled by spoil: the sender sees NAK
 * Remote Operational Error (REM_OP_ERR), the WQE completes with want.
 */
static void recv_wqe_error(void (*spoil)(struct xport_recv_wqe *r), uint32_t want)
{
	struct xport_wqe w;

	setup_env(NULL);
	fake_post_recv(env->qb, 7, env->mb, 0, 100);
	spoil(&env->qb->rq[0]);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 20);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_int_eq(pkt_at(1, 0)->syndrome, NAK(WIRE_NAK_REMOTE_OP_ERR));
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_REM_OP_ERR);
	ck_assert_uint_eq(env->qb->rcq[0].status, want);
	ck_assert_uint_eq(env->qb->rcq[0].wr_id, 7);
}

static void bad_lkey(struct xport_recv_wqe *r)
{
	r->sge[0].lkey = 0xbad;
}

static void malformed(struct xport_recv_wqe *r)
{
	r->malformed = true;
}

/* Buffers that reference no valid memory: a local protection error (IBA
 * 11.6.2, as mlx5 reports it). */
START_TEST(test_recv_bad_lkey)
{
	recv_wqe_error(bad_lkey, UROCE_WC_LOC_PROT_ERR);
}
END_TEST

/* A malformed receive WQE (the device marks it so: too many SGEs) is a
 * local QP operation error, not a protection error. */
START_TEST(test_recv_malformed)
{
	recv_wqe_error(malformed, UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(test_local_errors)
{
	struct xport_wqe w;

	setup_env(NULL);
	fake_post_recv(env->qb, 1, env->mb, 0, 100);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_SEND, 0, env->ma, 0, 10); /* unsignaled, bad lkey */
	w.sge[0].lkey = 0xbad;
	fake_post(env->qa, &w);
	fake_wqe(&w, 3, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	/* Only the good SEND went out; the bad one fails in order, even unsignaled. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 1);
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[1].wr_id, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(env->qa->scq[2].status, UROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(env->qa->qp_errors, 1);
	teardown();

	/* An invalid WR (READ on more SGEs than the engine carries). */
	setup_env(NULL);
	fake_wqe(&w, 4, UROCE_WR_RDMA_READ, 0, env->ma, 0, 10);
	w.num_sge = XPORT_MAX_SGE + 1;
	fake_post(env->qa, &w);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 0);
	teardown();

	/* Initiator depth 0 cannot issue a READ. */
	{
		struct fake_conn c;

		fake_conn_defaults(&c);
		c.max_rd_atomic = 0;
		setup_env(&c);
	}
	fake_wqe(&w, 5, UROCE_WR_RDMA_READ, 0, env->ma, 0, 10);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

/*
 * A WRITE whose SGE runs past the end of its MR fails locally before any
 * packet goes out (the gather list is checked when the WQE starts), even
 * though its first 32 packets could be read.
 */
START_TEST(test_bad_sge_nothing_sent)
{
	struct xport_wqe w;
	struct fake_mr *small;

	setup_env(NULL);
	small = fake_mr_reg(&env->a, 64 * 1024, FAKE_ALL_ACCESS);
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, 0, small, 0, 200 * 1024);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 0);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

/*
 * Post a one-packet WRITE of 100 bytes of env->ma and len2 bytes at byte
 * 200 of a 256-byte MR, on a fresh pair of QPs, and run it.
 */
static void write_two_sges(uint64_t wr_id, uint32_t flags, uint32_t len2)
{
	struct xport_wqe w;
	struct fake_mr *small;

	setup_env(NULL);
	small = fake_mr_reg(&env->a, 256, FAKE_ALL_ACCESS);
	fake_wqe(&w, wr_id, UROCE_WR_RDMA_WRITE, flags, env->ma, 0, 100);
	w.num_sge = 2;
	w.sge[1].addr = (uint64_t)(uintptr_t)(small->buf + 200);
	w.sge[1].length = len2;
	w.sge[1].lkey = small->key;
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
}

/*
 * The same for a message of one packet, whose SGEs are checked by the
 * gather that builds its packet: the first SGE is readable, the second runs
 * one byte past its MR, and nothing goes out.
 */
START_TEST(test_bad_sge_one_packet)
{
	write_two_sges(1, 0, 57);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 0);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_RTS);
	teardown();

	/* One byte less fits: the WRITE goes out as one packet and completes. */
	write_two_sges(2, UROCE_SEND_SIGNALED, 56);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_read_resp_local_prot)
{
	struct xport_wqe w;
	struct fake_mr *ro;

	setup_env(NULL);
	/* READ into a local MR without local write access. */
	ro = fake_mr_reg(&env->a, 4096, UROCE_ACCESS_REMOTE_READ);
	fake_wqe(&w, 1, UROCE_WR_RDMA_READ, 0, ro, 0, 100);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_LOC_PROT_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

START_TEST(test_modify_to_err_flushes)
{
	struct xport_wqe w;
	struct xport_qp_attr a = {.state = UROCE_QPS_ERR};

	setup_env(NULL);
	add_rule(0, -1, -1, FAKE_DROP);
	fake_post_recv(env->qa, 1, env->ma, 0, 100);
	fake_post_recv(env->qa, 2, env->ma, 0, 100);
	for (int i = 0; i < 3; i++) {
		fake_wqe(&w, 10 + i, UROCE_WR_SEND, 0, env->ma, 0, 10);
		fake_post(env->qa, &w);
	}
	xport_modify(&env->qa->x, &a, UROCE_QP_STATE);
	ck_assert_uint_eq(env->qa->nscq, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(env->qa->scq[i].wr_id, 10 + i);
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_WR_FLUSH_ERR);
	}
	ck_assert_uint_eq(env->qa->nrcq, 2);
	ck_assert_uint_eq(env->qa->rcq[1].status, UROCE_WC_WR_FLUSH_ERR);
	/* Asked for by the application: no fatal-error callback. */
	ck_assert_uint_eq(env->qa->qp_errors, 0);
	ck_assert_uint_eq(env->qa->timer, 0);
	fake_post_recv(env->qa, 3, env->ma, 0, 100);
	ck_assert_uint_eq(xport_flush_recv(&env->qa->x), 1);
	ck_assert_uint_eq(env->qa->nrcq, 3);
	/* Back to RESET and up again: a fresh start. */
	a.state = UROCE_QPS_RESET;
	xport_modify(&env->qa->x, &a, UROCE_QP_STATE);
	ck_assert_uint_eq(xport_sq_free(&env->qa->x), 256);
}
END_TEST

START_TEST(test_deferred_while_streaming)
{
	struct fake_conn c;
	struct xport_wqe w;
	uint32_t len = 300 * 256;
	int last;

	fake_conn_defaults(&c);
	c.mtu = 1;
	setup_env(&c);
	add_rule(0, WIRE_OP_RC_RDMA_READ_REQUEST, 0, FAKE_DUP);
	fake_pattern(env->mb->buf, len, 4);
	fake_wqe(&w, 1, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, len);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 100000);
	/* The duplicate waited until all 300 responses were out, then replayed them. */
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_DEFERRED], 1);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_READ_REPLAYED], 1);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 600);
	for (unsigned i = 0; i < 600; i++)
		ck_assert_uint_eq(pkt_at(1, i)->psn, P(i % 300));
	last = fake_find(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_LAST, 0);
	ck_assert_int_lt(last, fake_find(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST, 1));
	ck_assert_mem_eq(env->ma->buf, env->mb->buf, len);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_rnr_forever_and_no_timer)
{
	struct fake_conn c;
	struct xport_wqe w;

	/* rnr_retry 7: RNR NAKs never exhaust it. */
	setup_env(NULL);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	fake_run(&env->net, 300);
	ck_assert_uint_gt(env->qa->x.cnt[XPORT_CNT_RNR_NAK_RCVD], 50);
	ck_assert_uint_eq(env->qa->nscq, 0);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_RTS);
	fake_post_recv(env->qb, 1, env->mb, 0, 10);
	fake_run(&env->net, 300);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	teardown();

	/* timeout 0: no retransmission timer at all, the WR just waits. */
	fake_conn_defaults(&c);
	c.timeout = 0;
	setup_env(&c);
	add_rule(0, -1, 0, FAKE_DROP);
	fake_post_recv(env->qb, 1, env->mb, 0, 10);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	ck_assert_uint_eq(env->qa->timer, 0);
	fake_run(&env->net, 300);
	ck_assert_uint_eq(env->net.timers_fired, 0);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 1);
	ck_assert_uint_eq(env->qa->nscq, 0);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

static Suite *loss_suite(void)
{
	Suite *s = suite_create("loss");
	TCase *tc = tcase_create("faults");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_lost_middle);
	tcase_add_test(tc, test_lost_ack_send);
	tcase_add_test(tc, test_lost_ack_write_not_reexecuted);
	tcase_add_test(tc, test_lost_read_response);
	tcase_add_test(tc, test_lost_read_last_timeout);
	tcase_add_test(tc, test_dup_atomic);
	tcase_add_test(tc, test_dup_flush);
	tcase_add_test(tc, test_lost_atomic_ack);
	tcase_add_test(tc, test_rnr_exhausted);
	tcase_add_test(tc, test_rnr_recovers);
	tcase_add_test(tc, test_retry_exhausted);
	tcase_add_test(tc, test_rnr_forever_and_no_timer);
	tcase_add_test(tc, test_implied_nak);
	tcase_add_test(tc, test_lost_nak);
	tcase_add_test(tc, test_nak_once_then_silent);
	tcase_add_test(tc, test_one_rewind_per_loss);
	tcase_add_test(tc, test_retry_counter_progress);
	tcase_add_test(tc, test_fast_retry_spends_nothing);
	tcase_add_test(tc, test_remote_access_errors);
	tcase_add_test(tc, test_invalid_requests);
	tcase_add_test(tc, test_recv_too_small);
	tcase_add_test(tc, test_recv_bad_lkey);
	tcase_add_test(tc, test_recv_malformed);
	tcase_add_test(tc, test_local_errors);
	tcase_add_test(tc, test_read_resp_local_prot);
	tcase_add_test(tc, test_bad_sge_nothing_sent);
	tcase_add_test(tc, test_bad_sge_one_packet);
	tcase_add_test(tc, test_modify_to_err_flushes);
	tcase_add_test(tc, test_deferred_while_streaming);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(loss_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
