/* SPDX-License-Identifier: MIT */
/*
 * The device-wide in-flight budget (emu/xport/flow.c) on the fake network:
 * three RC QP pairs between hosts A and B. What A has unacknowledged never
 * exceeds the budget; QPs waiting for it start their messages in FIFO
 * order, one message per turn, so none starves; a message larger than the
 * budget still goes when nothing else is in flight; retransmissions are
 * never held back; a QP that fails or is reset gives its share back; with
 * no budget (the default) nothing waits. Every case ends with every byte
 * written and the budget's books balanced (nothing in flight, nothing
 * granted, nobody waiting).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <wire/opcode.h>
#include "fake.h"

#define NPAIRS 3
#define MTU_BYTES 1024 /* fake_conn_defaults: MTU 1024 */
#define MSG_BYTES (8 * MTU_BYTES)

static struct fake_env *env;
static struct fake_qp *qa[NPAIRS], *qb[NPAIRS];
static uint64_t budget_seen_max;

static void setup(void)
{
	env = fake_env_new(7, UROCE_QPT_RC, NULL);
	qa[0] = env->qa;
	qb[0] = env->qb;
	for (int i = 1; i < NPAIRS; i++) {
		qa[i] = fake_qp_create(&env->a, UROCE_QPT_RC, 0x11 + (uint32_t)i, 256, false);
		qb[i] = fake_qp_create(&env->b, UROCE_QPT_RC, 0x22 + (uint32_t)i, 256, false);
		fake_connect(qa[i], qb[i], &env->conn);
	}
	budget_seen_max = 0;
}

static void teardown(void)
{
	fake_env_free(env);
	env = NULL;
}

/* The filter sees every packet as it is sent: record A's peak in flight. */
static int watch_inflight(struct fake_net *net, const struct fake_log *e, void *arg)
{
	(void)net;
	(void)arg;
	if (e->from == 0 && env->a.dev.flow.inflight > budget_seen_max)
		budget_seen_max = env->a.dev.flow.inflight;
	return 0;
}

/* A WRITE of len bytes from A's MR at off to B's MR at the same offset. */
static void post_write(struct fake_qp *q, uint64_t wr_id, size_t off, uint32_t len)
{
	struct xport_wqe w;

	fake_wqe(&w, wr_id, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, off, len);
	fake_wqe_remote(&w, env->mb, off);
	ck_assert_int_eq(fake_post(q, &w), 0);
}

static void expect_books_balanced(void)
{
	const struct xport_flow *f = &env->a.dev.flow;

	ck_assert_uint_eq(f->inflight, 0);
	ck_assert_uint_eq(f->granted, 0);
	ck_assert_ptr_null(f->head);
	ck_assert_ptr_null(f->tail);
}

static void expect_all_written(size_t bytes)
{
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, bytes);
}

/* The destination QP (on B) of the n-th WRITE First packet from A. */
static uint32_t nth_start_qpn(unsigned n)
{
	int i = fake_find(&env->net, 0, WIRE_OP_RC_RDMA_WRITE_FIRST, n);

	ck_assert_int_ge(i, 0);
	return env->net.log[i].qpn;
}

START_TEST(test_budget_bounds_and_fifo)
{
	const uint64_t budget = MSG_BYTES; /* one message at a time */

	xport_flow_set_budget(&env->a.dev, budget);
	env->net.filter = watch_inflight;
	fake_pattern(env->ma->buf, NPAIRS * 2 * MSG_BYTES, 3);
	/* Two messages per QP, QP 0's first. */
	for (int m = 0; m < 2; m++)
		for (int i = 0; i < NPAIRS; i++)
			post_write(qa[i], (uint64_t)(m * NPAIRS + i),
				   (size_t)(m * NPAIRS + i) * MSG_BYTES, MSG_BYTES);
	/* Before any ACK: only QP 0's first message is out, the others wait. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), MSG_BYTES / MTU_BYTES);
	ck_assert_uint_eq(env->a.dev.flow.inflight, budget);
	ck_assert_uint_eq(env->a.dev.cnt[XPORT_CNT_FLOW_WAIT], NPAIRS);
	fake_run(&env->net, 100000);

	ck_assert_uint_le(budget_seen_max, budget);
	for (int i = 0; i < NPAIRS; i++) {
		ck_assert_uint_eq(qa[i]->nscq, 2);
		ck_assert_int_eq(qa[i]->scq[0].status, UROCE_WC_SUCCESS);
		ck_assert_int_eq(qa[i]->scq[1].status, UROCE_WC_SUCCESS);
	}
	/* Round robin: each QP's second message comes after every first. */
	for (unsigned n = 0; n < 2 * NPAIRS; n++)
		ck_assert_uint_eq(nth_start_qpn(n), qb[n % NPAIRS]->x.qpn);
	ck_assert_uint_eq(env->net.dropped, 0);
	ck_assert_uint_eq(env->a.dev.cnt[XPORT_CNT_RETX_PKTS], 0);
	expect_all_written(NPAIRS * 2 * MSG_BYTES);
	expect_books_balanced();
}
END_TEST

START_TEST(test_no_budget_nothing_waits)
{
	fake_pattern(env->ma->buf, NPAIRS * MSG_BYTES, 4);
	for (int i = 0; i < NPAIRS; i++)
		post_write(qa[i], (uint64_t)i, (size_t)i * MSG_BYTES, MSG_BYTES);
	/* Everything leaves at once. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), NPAIRS * MSG_BYTES / MTU_BYTES);
	fake_run(&env->net, 100000);
	ck_assert_uint_eq(env->a.dev.cnt[XPORT_CNT_FLOW_WAIT], 0);
	expect_all_written(NPAIRS * MSG_BYTES);
	expect_books_balanced();
}
END_TEST

START_TEST(test_message_larger_than_budget)
{
	/* A budget of two PSNs and messages of eight: one at a time. */
	xport_flow_set_budget(&env->a.dev, 2 * MTU_BYTES);
	fake_pattern(env->ma->buf, 2 * MSG_BYTES, 5);
	post_write(qa[0], 1, 0, MSG_BYTES);
	post_write(qa[1], 2, MSG_BYTES, MSG_BYTES);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), MSG_BYTES / MTU_BYTES);
	fake_run(&env->net, 100000);
	ck_assert_uint_eq(qa[0]->nscq, 1);
	ck_assert_uint_eq(qa[1]->nscq, 1);
	expect_all_written(2 * MSG_BYTES);
	expect_books_balanced();
}
END_TEST

START_TEST(test_retransmission_not_held)
{
	/* 5 % loss each way: go-back-N retries run while other QPs wait. */
	xport_flow_set_budget(&env->a.dev, 2 * MSG_BYTES);
	env->net.drop_pm = 50;
	fake_pattern(env->ma->buf, NPAIRS * 4 * MSG_BYTES, 6);
	for (int m = 0; m < 4; m++)
		for (int i = 0; i < NPAIRS; i++)
			post_write(qa[i], (uint64_t)(m * NPAIRS + i),
				   (size_t)(m * NPAIRS + i) * MSG_BYTES, MSG_BYTES);
	fake_run(&env->net, 1000000);
	ck_assert_uint_gt(env->net.dropped, 0);
	ck_assert_uint_gt(env->a.dev.cnt[XPORT_CNT_RETX_PKTS], 0);
	for (int i = 0; i < NPAIRS; i++) {
		ck_assert_uint_eq(qa[i]->nscq, 4);
		for (int m = 0; m < 4; m++)
			ck_assert_int_eq(qa[i]->scq[m].status, UROCE_WC_SUCCESS);
	}
	expect_all_written(NPAIRS * 4 * MSG_BYTES);
	expect_books_balanced();
}
END_TEST

START_TEST(test_error_and_reset_give_back)
{
	struct xport_qp_attr a = {.state = UROCE_QPS_ERR};

	xport_flow_set_budget(&env->a.dev, MSG_BYTES);
	fake_pattern(env->ma->buf, 3 * MSG_BYTES, 8);
	/* B never answers: QP 0 holds the budget, QPs 1 and 2 wait. */
	env->net.drop_pm = 1000;
	post_write(qa[0], 1, 0, MSG_BYTES);
	post_write(qa[1], 2, MSG_BYTES, MSG_BYTES);
	post_write(qa[2], 3, 2 * MSG_BYTES, MSG_BYTES);
	ck_assert_uint_eq(env->a.dev.flow.inflight, MSG_BYTES);
	ck_assert_ptr_eq(env->a.dev.flow.head, &qa[1]->x);
	/* QP 0 fails: its charge goes, QP 1 is woken with the grant. */
	ck_assert_int_eq(xport_modify(&qa[0]->x, &a, UROCE_QP_STATE), 0);
	ck_assert_uint_eq(env->a.dev.flow.inflight, 0);
	ck_assert_uint_eq(env->a.dev.flow.granted, MSG_BYTES);
	ck_assert(qa[1]->scheduled);
	/* QP 2 is reset while it waits: it leaves the queue. */
	a.state = UROCE_QPS_RESET;
	ck_assert_int_eq(xport_modify(&qa[2]->x, &a, UROCE_QP_STATE), 0);
	ck_assert_ptr_null(env->a.dev.flow.head);
	env->net.drop_pm = 0;
	fake_run(&env->net, 100000);
	ck_assert_uint_eq(qa[1]->nscq, 1);
	ck_assert_int_eq(qa[1]->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_mem_eq(env->mb->buf + MSG_BYTES, env->ma->buf + MSG_BYTES, MSG_BYTES);
	expect_books_balanced();
}
END_TEST

static Suite *flow_suite(void)
{
	Suite *s = suite_create("flow");
	TCase *tc = tcase_create("budget");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_budget_bounds_and_fifo);
	tcase_add_test(tc, test_no_budget_nothing_waits);
	tcase_add_test(tc, test_message_larger_than_budget);
	tcase_add_test(tc, test_retransmission_not_held);
	tcase_add_test(tc, test_error_and_reset_give_back);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(flow_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
