/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's asynchronous-event callbacks against the fake
 * network: comm_est once on the first request a connected QP receives in
 * RTR (not for packets it drops, not in RTS, again only after a reset), and
 * sq_drained exactly once per move into SQD, only after every message
 * started before the move has completed (its CQE pushed), with SENDs and a
 * READ held in flight by a lost acknowledgement or response.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <wire/opcode.h>
#include <wire/psn.h>
#include "fake.h"

static struct fake_env *env;

/* Drop the first packet from host `from` with opcode `op` and PSN `psn`. */
static struct {
	int from, op;
	uint32_t psn;
	unsigned dropped;
} hold;

static int hold_filter(struct fake_net *net, const struct fake_log *e, void *arg)
{
	(void)net;
	(void)arg;
	if (!hold.dropped && e->from == hold.from && e->opcode == hold.op && e->psn == hold.psn) {
		hold.dropped++;
		return FAKE_DROP;
	}
	return 0;
}

static void hold_first(int from, int op, uint32_t psn)
{
	hold.from = from;
	hold.op = op;
	hold.psn = psn;
	hold.dropped = 0;
	env->net.filter = hold_filter;
}

static void teardown(void)
{
	if (env)
		fake_env_free(env);
	env = NULL;
}

static void set_state(struct fake_qp *q, uint32_t state)
{
	struct xport_qp_attr a = {.state = state};

	ck_assert_int_eq(xport_modify(&q->x, &a, UROCE_QP_STATE), 0);
}

/* B back to RTR (its path, PSNs and limits stay as fake_connect set them). */
static void b_to(uint32_t state)
{
	set_state(env->qb, UROCE_QPS_RESET);
	set_state(env->qb, UROCE_QPS_INIT);
	if (state == UROCE_QPS_RTR)
		set_state(env->qb, UROCE_QPS_RTR);
}

static void post_send(struct fake_qp *q, uint64_t wr_id)
{
	struct xport_wqe w;

	fake_wqe(&w, wr_id, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	ck_assert_int_eq(fake_post(q, &w), 0);
}

START_TEST(test_comm_est_rtr)
{
	env = fake_env_new(31, _i ? UROCE_QPT_UC : UROCE_QPT_RC, NULL);
	b_to(UROCE_QPS_RTR);
	for (int i = 0; i < 4; i++)
		fake_post_recv(env->qb, (uint64_t)i, env->mb, 64 * (size_t)i, 64);
	ck_assert_uint_eq(env->qb->comm_est, 0);
	post_send(env->qa, 1);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->comm_est, 1);
	/* Once: later packets in RTR, then in RTS, raise nothing. */
	post_send(env->qa, 2);
	fake_run(&env->net, 1000);
	set_state(env->qb, UROCE_QPS_RTS);
	post_send(env->qa, 3);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qb->nrcq, 3);
	ck_assert_uint_eq(env->qb->comm_est, 1);
	/* The requester only ever received responses, in RTS. */
	ck_assert_uint_eq(env->qa->comm_est, 0);
}
END_TEST

START_TEST(test_comm_est_not_dropped)
{
	env = fake_env_new(32, UROCE_QPT_RC, NULL);
	b_to(UROCE_QPS_INIT);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	post_send(env->qa, 1);
	/* INIT drops requests: not established. */
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(env->qb->comm_est, 0);
	ck_assert_uint_eq(env->qb->nrcq, 0);
	set_state(env->qb, UROCE_QPS_RTR);
	ck_assert_uint_eq(env->qb->comm_est, 0);
	/* The retransmission reaches B in RTR. */
	fake_run(&env->net, 1000);
	ck_assert_uint_ge(env->net.timers_fired, 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->comm_est, 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
}
END_TEST

START_TEST(test_comm_est_after_reset)
{
	env = fake_env_new(33, UROCE_QPT_RC, NULL);
	b_to(UROCE_QPS_RTR);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	fake_post_recv(env->qb, 2, env->mb, 64, 64);
	post_send(env->qa, 1);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qb->comm_est, 1);
	/* A new connection on both sides: established again. */
	set_state(env->qa, UROCE_QPS_RESET);
	set_state(env->qa, UROCE_QPS_INIT);
	set_state(env->qa, UROCE_QPS_RTR);
	set_state(env->qa, UROCE_QPS_RTS);
	b_to(UROCE_QPS_RTR);
	post_send(env->qa, 2);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->qb->comm_est, 2);
}
END_TEST

START_TEST(test_sqd_waits_for_last_ack)
{
	uint32_t last;

	env = fake_env_new(34, UROCE_QPT_RC, NULL);
	last = wire_psn_add(env->conn.psn_a, 2);
	for (int i = 0; i < 3; i++)
		fake_post_recv(env->qb, (uint64_t)i, env->mb, 64 * (size_t)i, 64);
	/* Three SENDs on the wire; the ACK of the third is lost once. */
	hold_first(1, WIRE_OP_RC_ACKNOWLEDGE, last);
	for (int i = 0; i < 3; i++)
		post_send(env->qa, (uint64_t)i);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 3);
	set_state(env->qa, UROCE_QPS_SQD);
	ck_assert_uint_eq(env->qa->drained, 0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(hold.dropped, 1);
	ck_assert_uint_eq(env->qb->nrcq, 3);
	ck_assert_uint_lt(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->drained, 0);
	/* Timeout, the third SEND again, its ACK: drained, once, after the CQE. */
	fake_run(&env->net, 1000);
	ck_assert_uint_ge(env->net.timers_fired, 1);
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->drained, 1);
	ck_assert_uint_eq(env->qa->nscq_at_drained, 3);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->drained, 1);
}
END_TEST

START_TEST(test_sqd_waits_for_read)
{
	struct xport_wqe w;

	env = fake_env_new(35, UROCE_QPT_RC, NULL);
	fake_wqe(&w, 7, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, env->mb, 0);
	/* The READ response is lost once: the READ stays outstanding. */
	hold_first(1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, env->conn.psn_a);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	set_state(env->qa, UROCE_QPS_SQD);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(hold.dropped, 1);
	ck_assert_uint_eq(env->qa->nscq, 0);
	ck_assert_uint_eq(env->qa->drained, 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->drained, 1);
	ck_assert_uint_eq(env->qa->nscq_at_drained, 1);
}
END_TEST

START_TEST(test_sqd_once_per_move)
{
	env = fake_env_new(36, UROCE_QPT_RC, NULL);
	/* Nothing outstanding: drained at the move. */
	set_state(env->qa, UROCE_QPS_SQD);
	ck_assert_uint_eq(env->qa->drained, 1);
	/* SQD -> SQD (a path change) is not a new drain. */
	set_state(env->qa, UROCE_QPS_SQD);
	ck_assert_uint_eq(env->qa->drained, 1);
	/* A WQE posted in SQD waits, and does not undo the drain. */
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	post_send(env->qa, 1);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 0);
	ck_assert_uint_eq(env->qa->drained, 1);
	set_state(env->qa, UROCE_QPS_RTS);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	/* Back to SQD: a new move, a new report. */
	set_state(env->qa, UROCE_QPS_SQD);
	ck_assert_uint_eq(env->qa->drained, 2);
}
END_TEST

static Suite *events_suite(void)
{
	Suite *s = suite_create("rc_events");
	TCase *tc = tcase_create("events");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, test_comm_est_rtr, 0, 2);
	tcase_add_test(tc, test_comm_est_not_dropped);
	tcase_add_test(tc, test_comm_est_after_reset);
	tcase_add_test(tc, test_sqd_waits_for_last_ack);
	tcase_add_test(tc, test_sqd_waits_for_read);
	tcase_add_test(tc, test_sqd_once_per_move);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(events_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
