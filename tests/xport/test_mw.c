/* SPDX-License-Identifier: MIT */
/*
 * Memory-window work through the engine (req.c local operations, resp.c
 * SEND with Invalidate) over a lossless or scripted fake network: BIND_MW
 * and LOCAL_INV execute once, put nothing on the wire and complete in
 * order with the WRs around them, also when go-back-N resends what
 * surrounds them; a failed bind completes with IBV_WC_MW_BIND_ERR and
 * moves the QP to Error; SEND with Invalidate carries the IETH on its last
 * packet, invalidates the key at the responder (which completes the
 * receive with IBV_WC_WITH_INV and the key) so that the next WRITE through
 * it fails with a Remote Access Error NAK; an R_Key that cannot be
 * invalidated is NAKed Invalid Request. The fake's windows stand in for
 * the daemon's (dp/mw.c has the rules; tests/dp/test_dma.c checks them).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/opcode.h>
#include "fake.h"

static struct fake_env *env;

static void teardown(void)
{
	if (env && getenv("FAKE_DUMP"))
		fake_dump(&env->net);
	if (env)
		fake_env_free(env);
	env = NULL;
}

/* A window of n bytes on host h: valid (alive) or free (dead, to be bound). */
static struct fake_mr *window(struct fake_host *h, size_t n, bool alive)
{
	struct fake_mr *m = fake_mr_reg(h, n, FAKE_ALL_ACCESS);

	m->window = true;
	m->dead = !alive;
	return m;
}

static void local_wqe(struct xport_wqe *w, uint64_t wr_id, uint32_t opcode, uint32_t rkey)
{
	fake_wqe(w, wr_id, opcode, UROCE_SEND_SIGNALED, NULL, 0, 0);
	w->imm_data = rkey;
}

static void bind_wqe(struct xport_wqe *w, uint64_t wr_id, struct fake_host *h,
		     const struct fake_mr *m, uint32_t new_rkey)
{
	local_wqe(w, wr_id, UROCE_WR_BIND_MW, 0);
	w->bind.mw_handle = (uint32_t)(m - h->mr) + 1;
	w->bind.rkey = new_rkey;
	w->bind.access = UROCE_ACCESS_REMOTE_WRITE;
	w->bind.length = m->len;
}

static int aeth_nak(uint8_t code)
{
	return wire_aeth_syndrome(WIRE_AETH_NAK, code);
}

/* SEND, BIND_MW, LOCAL_INV, SEND: two packets, four completions in order. */
START_TEST(test_local_ops_in_order)
{
	struct fake_mr *wa;
	struct xport_wqe w;

	env = fake_env_new(1, UROCE_QPT_RC, NULL);
	wa = window(&env->a, 4096, false);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_post_recv(env->qb, 2, env->mb, 4096, 4096);
	fake_wqe(&w, 10, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_post(env->qa, &w);
	bind_wqe(&w, 11, &env->a, wa, 0x4242);
	fake_post(env->qa, &w);
	local_wqe(&w, 12, UROCE_WR_LOCAL_INV, 0x4242);
	fake_post(env->qa, &w);
	fake_wqe(&w, 13, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 200);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_SEND_ONLY), 2);
	ck_assert_uint_eq(env->qa->nscq, 4);
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(env->qa->scq[i].wr_id, 10 + i);
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_SUCCESS);
	}
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_SEND);
	ck_assert_uint_eq(env->qa->scq[1].opcode, UROCE_WC_BIND_MW);
	ck_assert_uint_eq(env->qa->scq[2].opcode, UROCE_WC_LOCAL_INV);
	ck_assert_uint_eq(env->qa->scq[3].opcode, UROCE_WC_SEND);
	ck_assert_uint_eq(env->a.binds, 1);
	ck_assert_uint_eq(env->a.invals, 1);
	ck_assert(!env->a.last_inv_remote);
	ck_assert(wa->dead);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_MW_BIND], 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_INV_LOCAL], 1);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

/*
 * A WRITE through B's window, a 3-packet SEND with Invalidate of its key
 * (IETH on SEND Last), then a WRITE through the dead key: NAK Remote
 * Access Error, IBV_WC_REM_ACCESS_ERR.
 */
START_TEST(test_send_inv_then_access_fails)
{
	struct fake_mr *wb;
	struct xport_wqe w;
	uint32_t key;
	int i;

	env = fake_env_new(2, UROCE_QPT_RC, NULL);
	wb = window(&env->b, 8192, true);
	key = wb->key;
	fake_pattern(env->ma->buf, 8192, 3);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 20, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 1000);
	fake_wqe_remote(&w, wb, 0);
	fake_post(env->qa, &w);
	fake_wqe(&w, 21, UROCE_WR_SEND_WITH_INV, UROCE_SEND_SIGNALED, env->ma, 0, 2500);
	w.imm_data = key;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_mem_eq(wb->buf, env->ma->buf, 1000);
	ck_assert_int_ge(fake_find(&env->net, 0, WIRE_OP_RC_SEND_FIRST, 0), 0);
	ck_assert_int_ge(fake_find(&env->net, 0, WIRE_OP_RC_SEND_LAST_INV, 0), 0);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_SEND_ONLY_INV), 0);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qb->rcq[0].opcode, UROCE_WC_RECV);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 2500);
	ck_assert_uint_eq(env->qb->rcq[0].wc_flags, UROCE_WC_WITH_INV);
	ck_assert_uint_eq(env->qb->rcq[0].imm_data, key);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 2500);
	ck_assert(wb->dead);
	ck_assert(env->b.last_inv_remote);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_INV_REMOTE], 1);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[1].opcode, UROCE_WC_SEND);

	fake_wqe(&w, 22, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, wb, 0);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	i = fake_find(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE, fake_count(&env->net, 1, -1) - 1);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].syndrome, aeth_nak(WIRE_NAK_REMOTE_ACCESS_ERR));
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->scq[2].wr_id, 22);
	ck_assert_uint_eq(env->qa->scq[2].status, UROCE_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_ERR);
}
END_TEST

/* An R_Key the responder cannot invalidate: NAK Invalid Request on both sides. */
START_TEST(test_send_inv_bad_key)
{
	struct xport_wqe w;

	env = fake_env_new(3, UROCE_QPT_RC, NULL);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 30, UROCE_WR_SEND_WITH_INV, UROCE_SEND_SIGNALED, env->ma, 0, 64);
	w.imm_data = env->mb->key; /* an MR, not a window */
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_SEND_ONLY_INV), 1);
	ck_assert_int_eq(env->net.log[fake_find(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE, 0)].syndrome,
			 aeth_nak(WIRE_NAK_INVALID_REQUEST));
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].status, UROCE_WC_REM_INV_REQ_ERR);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_INV_REFUSED], 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_REM_INV_REQ_ERR);
}
END_TEST

/* A bind that fails: IBV_WC_MW_BIND_ERR, QP to Error, the WR behind it flushed. */
START_TEST(test_bind_fails)
{
	struct fake_mr *wa;
	struct xport_wqe w;

	env = fake_env_new(4, UROCE_QPT_RC, NULL);
	wa = window(&env->a, 4096, true); /* already bound: the fake refuses */
	bind_wqe(&w, 40, &env->a, wa, 0x99);
	w.flags = 0; /* unsignaled: an error completes anyway */
	fake_post(env->qa, &w);
	fake_wqe(&w, 41, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 0);
	ck_assert_uint_eq(env->a.failed_mw_ops, 1);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 40);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_MW_BIND_ERR);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_BIND_MW);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_ERR);
	ck_assert_uint_eq(env->qa->qp_errors, 1);
}
END_TEST

/* Drop the first transmission of WRITE 1's last packet and of WRITE 2's first. */
static int drop_write1_last(struct fake_net *net, const struct fake_log *e, void *arg)
{
	unsigned *n = arg;

	(void)net;
	if (e->from == 0 && e->opcode == WIRE_OP_RC_RDMA_WRITE_LAST && (*n)++ == 0)
		return FAKE_DROP;
	if (e->from == 0 && e->opcode == WIRE_OP_RC_RDMA_WRITE_FIRST && e->dmalen == 3001 &&
	    n[1]++ == 0)
		return FAKE_DROP;
	return 0;
}

/*
 * WRITE, BIND_MW, WRITE with a loss in each WRITE: the first sequence NAK
 * makes go-back-N send both WRITEs' packets from the first loss on, past
 * the bind (not executed again), and the three complete in order.
 */
START_TEST(test_retry_across_bind)
{
	struct fake_mr *wa;
	struct xport_wqe w;
	unsigned n[2] = {0, 0};

	env = fake_env_new(5, UROCE_QPT_RC, NULL);
	env->net.filter = drop_write1_last;
	env->net.filter_arg = n;
	wa = window(&env->a, 4096, false);
	fake_pattern(env->ma->buf, 6001, 9);
	fake_wqe(&w, 50, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 3000);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	bind_wqe(&w, 51, &env->a, wa, 0x77);
	fake_post(env->qa, &w);
	fake_wqe(&w, 52, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 3000, 3001);
	fake_wqe_remote(&w, env->mb, 3000);
	fake_post(env->qa, &w);
	fake_run(&env->net, 100000);

	ck_assert_uint_ge(n[0], 3); /* both WRITE Lasts, then the lost one again */
	ck_assert_uint_eq(n[1], 2);
	/* Rewound past the bind at once: WRITE 2's First right behind WRITE 1's Last. */
	ck_assert_int_eq(fake_find(&env->net, 0, WIRE_OP_RC_RDMA_WRITE_FIRST, 2),
			 fake_find(&env->net, 0, WIRE_OP_RC_RDMA_WRITE_LAST, 2) + 1);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT], 0);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 6001);
	ck_assert_uint_eq(env->a.binds, 1);
	ck_assert_uint_eq(env->qa->nscq, 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(env->qa->scq[i].wr_id, 50 + i);
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_SUCCESS);
	}
	ck_assert_uint_eq(env->qa->scq[1].opcode, UROCE_WC_BIND_MW);
	ck_assert_uint_eq(env->qa->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

/* UC: a bind between two SENDs completes between them, nothing on the wire for it. */
START_TEST(test_uc_bind)
{
	struct fake_mr *wa;
	struct xport_wqe w;

	env = fake_env_new(6, UROCE_QPT_UC, NULL);
	wa = window(&env->a, 4096, false);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_post_recv(env->qb, 2, env->mb, 4096, 4096);
	fake_wqe(&w, 60, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	bind_wqe(&w, 61, &env->a, wa, 0x55);
	fake_post(env->qa, &w);
	fake_wqe(&w, 62, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 20);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	ck_assert_uint_eq(env->qa->nscq, 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(env->qa->scq[i].wr_id, 60 + i);
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_SUCCESS);
	}
	ck_assert_uint_eq(env->qa->scq[1].opcode, UROCE_WC_BIND_MW);
	ck_assert_uint_eq(wa->key, 0x55);
	ck_assert(!wa->dead);
	ck_assert_uint_eq(env->qb->nrcq, 2);
}
END_TEST

/* A local operation with a buffer is a malformed WQE; none on UD. */
START_TEST(test_check_wqe)
{
	struct xport_wqe w;
	uint32_t len;

	fake_wqe(&w, 1, UROCE_WR_LOCAL_INV, 0, NULL, 0, 0);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_UC, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_UD, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
	w.num_sge = 1;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
	/* XRC initiator QPs carry local operations too (as mlx5's). */
	w.num_sge = 0;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_XRC_SEND, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_XRC_RECV, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
	fake_wqe(&w, 1, UROCE_WR_SEND_WITH_INV, 0, NULL, 0, 0);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_XRC_SEND, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_UC, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

static Suite *mw_suite(void)
{
	Suite *s = suite_create("mw");
	TCase *tc = tcase_create("engine");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_local_ops_in_order);
	tcase_add_test(tc, test_send_inv_then_access_fails);
	tcase_add_test(tc, test_send_inv_bad_key);
	tcase_add_test(tc, test_bind_fails);
	tcase_add_test(tc, test_retry_across_bind);
	tcase_add_test(tc, test_uc_bind);
	tcase_add_test(tc, test_check_wqe);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mw_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
