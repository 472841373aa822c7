/* SPDX-License-Identifier: MIT */
/*
 * Soak: thousands of mixed RC operations (SEND of random sizes, WRITE,
 * READ, FetchAdd, CmpSwap) in both directions over a fake network that
 * drops, duplicates and reorders 10% of the packets each and corrupts 1%,
 * deterministically per seed. Every message must arrive exactly once and
 * in order: receive completions in posting order with the right bytes,
 * every WRITE and READ byte-exact, FetchAdd results consecutive (an atomic
 * executed twice or out of order would break the sequence), no QP error.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

#define ROUND_OPS 48
#define SLOT 16384 /* bytes per operation in each area */
/* Areas of each side's MR, one slot per operation of a round. */
#define AREA(n) ((size_t)(n)*ROUND_OPS * SLOT)
#define AREA_SRC AREA(0)   /* SEND / WRITE sources (local) */
#define AREA_RECV AREA(1)  /* receive buffers for the peer's SENDs */
#define AREA_WRITE AREA(2) /* WRITE targets of the peer */
#define AREA_READ AREA(3)  /* READ sources for the peer */
#define AREA_LOCAL AREA(4) /* READ destinations and atomic results (local) */
#define COUNTER_OFF (FAKE_MR_BYTES - 4096)
#define CAS_OFF (FAKE_MR_BYTES - 4096 + 64)

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33) % n;
}

struct side {
	struct fake_qp *q, *peer;
	struct fake_mr *m, *pm;
	uint32_t pmtu;
	/* what we expect */
	unsigned sends, recv_seen, send_cqe_seen;
	uint64_t fetch_next; /* the value the next FetchAdd must return */
	uint64_t cas_value;  /* current value of the CmpSwap word on the peer */
	unsigned ops;
};

/* Per-op bookkeeping to check the results of one round. */
struct op {
	uint32_t opcode, len, seed;
	size_t loff, roff;
	uint64_t expect_orig;
};

static void run_round(struct side *s, struct op *ops, unsigned nops)
{
	struct xport_wqe w;

	for (unsigned i = 0; i < nops; i++) {
		struct op *o = &ops[i];
		uint32_t kind = rnd(100);

		memset(o, 0, sizeof(*o));
		o->seed = s->ops++ * 7919u + s->q->x.qpn;
		if (kind < 40) {
			o->opcode = UROCE_WR_SEND;
			o->len = rnd(3 * s->pmtu + 2);
			o->loff = AREA_SRC + (size_t)i * SLOT;
			fake_pattern(s->m->buf + o->loff, o->len, o->seed);
			fake_post_recv(s->peer, s->sends++, s->pm, AREA_RECV + (size_t)i * SLOT,
				       SLOT);
			fake_wqe(&w, i, UROCE_WR_SEND, UROCE_SEND_SIGNALED, s->m, o->loff, o->len);
		} else if (kind < 65) {
			o->opcode = UROCE_WR_RDMA_WRITE;
			o->len = 1 + rnd(SLOT < 4 * s->pmtu ? SLOT : 4 * s->pmtu);
			o->loff = AREA_SRC + (size_t)i * SLOT;
			o->roff = AREA_WRITE + (size_t)i * SLOT;
			fake_pattern(s->m->buf + o->loff, o->len, o->seed);
			fake_wqe(&w, i, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, s->m, o->loff,
				 o->len);
			fake_wqe_remote(&w, s->pm, o->roff);
		} else if (kind < 85) {
			o->opcode = UROCE_WR_RDMA_READ;
			o->len = rnd(SLOT - 1 < 4 * s->pmtu ? SLOT - 1 : 4 * s->pmtu);
			o->loff = AREA_LOCAL + (size_t)i * SLOT;
			o->roff = AREA_READ + (size_t)i * SLOT;
			fake_pattern(s->pm->buf + o->roff, o->len, o->seed);
			memset(s->m->buf + o->loff, 0, SLOT);
			fake_wqe(&w, i, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, s->m, o->loff,
				 o->len);
			fake_wqe_remote(&w, s->pm, o->roff);
		} else if (kind < 95) {
			o->opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD;
			o->loff = AREA_LOCAL + (size_t)i * SLOT;
			o->expect_orig = s->fetch_next++;
			fake_wqe(&w, i, UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_SEND_SIGNALED, s->m,
				 o->loff, 8);
			fake_wqe_remote(&w, s->pm, COUNTER_OFF);
			w.compare_add = 1;
		} else {
			o->opcode = UROCE_WR_ATOMIC_CMP_AND_SWP;
			o->loff = AREA_LOCAL + (size_t)i * SLOT;
			o->expect_orig = s->cas_value;
			fake_wqe(&w, i, UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_SEND_SIGNALED, s->m,
				 o->loff, 8);
			fake_wqe_remote(&w, s->pm, CAS_OFF);
			w.compare_add = s->cas_value;
			w.swap = s->cas_value + 3;
			s->cas_value += 3;
		}
		ck_assert_int_eq(fake_post(s->q, &w), 0);
	}
}

static void check_round(struct side *s, struct op *ops, unsigned nops)
{
	unsigned send_i = 0;

	ck_assert_msg(s->q->x.attr.state == UROCE_QPS_RTS, "QP %x in %s", s->q->x.qpn,
		      xport_qp_state_name(s->q->x.attr.state));
	ck_assert_uint_eq(s->q->nscq, s->send_cqe_seen + nops);
	for (unsigned i = 0; i < nops; i++) {
		const struct uroce_cqe *c = &s->q->scq[s->send_cqe_seen + i];
		struct op *o = &ops[i];
		uint64_t got;

		ck_assert_uint_eq(c->wr_id, i);
		ck_assert_msg(c->status == UROCE_WC_SUCCESS, "op %u status %s", i,
			      xport_wc_status_name(c->status));
		switch (o->opcode) {
		case UROCE_WR_SEND: {
			const struct uroce_cqe *r = &s->peer->rcq[s->recv_seen + send_i];

			ck_assert_uint_eq(r->status, UROCE_WC_SUCCESS);
			ck_assert_uint_eq(r->wr_id, s->recv_seen + send_i);
			ck_assert_uint_eq(r->byte_len, o->len);
			ck_assert_mem_eq(s->pm->buf + AREA_RECV + (size_t)i * SLOT,
					 s->m->buf + o->loff, o->len);
			send_i++;
			break;
		}
		case UROCE_WR_RDMA_WRITE:
			ck_assert_mem_eq(s->pm->buf + o->roff, s->m->buf + o->loff, o->len);
			break;
		case UROCE_WR_RDMA_READ:
			ck_assert_mem_eq(s->m->buf + o->loff, s->pm->buf + o->roff, o->len);
			ck_assert_uint_eq(s->m->buf[o->loff + o->len], 0);
			break;
		default:
			memcpy(&got, s->m->buf + o->loff, 8);
			ck_assert_uint_eq(got, o->expect_orig);
			break;
		}
	}
	ck_assert_uint_eq(s->peer->nrcq, s->recv_seen + send_i);
	s->recv_seen += send_i;
	s->send_cqe_seen += nops;
}

static void soak(uint64_t seed, uint8_t mtu, unsigned rounds)
{
	struct fake_conn c;
	struct fake_env *env;
	struct side sa = {0}, sb = {0};
	struct op *opa = calloc(ROUND_OPS, sizeof(*opa)), *opb = calloc(ROUND_OPS, sizeof(*opb));
	uint64_t v;

	rng_state = seed;
	fake_conn_defaults(&c);
	c.mtu = mtu;
	c.timeout = 10;
	env = fake_env_new(seed, UROCE_QPT_RC, &c);
	env->net.drop_pm = 100;
	env->net.dup_pm = 100;
	env->net.reorder_pm = 100;
	env->net.corrupt_pm = 10;
	sa = (struct side){.q = env->qa, .peer = env->qb, .m = env->ma, .pm = env->mb};
	sb = (struct side){.q = env->qb, .peer = env->qa, .m = env->mb, .pm = env->ma};
	sa.pmtu = sb.pmtu = xport_mtu_bytes(mtu);
	for (unsigned r = 0; r < rounds; r++) {
		unsigned nb = r % 3 == 0 ? ROUND_OPS / 2 : 0;

		run_round(&sa, opa, ROUND_OPS);
		run_round(&sb, opb, nb);
		fake_run(&env->net, 10000000);
		check_round(&sa, opa, ROUND_OPS);
		check_round(&sb, opb, nb);
	}
	/* Executed exactly once each: the counters agree with what was asked. */
	memcpy(&v, env->mb->buf + COUNTER_OFF, 8);
	ck_assert_uint_eq(v, sa.fetch_next);
	memcpy(&v, env->ma->buf + COUNTER_OFF, 8);
	ck_assert_uint_eq(v, sb.fetch_next);
	memcpy(&v, env->mb->buf + CAS_OFF, 8);
	ck_assert_uint_eq(v, sa.cas_value);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_MSG_RCVD], sa.ops);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_MSG_RCVD], sb.ops);
	ck_assert_uint_eq(env->qa->qp_errors + env->qb->qp_errors, 0);
	/* The faults really happened, and were recovered from. */
	ck_assert_uint_gt(env->net.dropped, 100);
	ck_assert_uint_gt(env->net.duplicated, 100);
	ck_assert_uint_gt(env->net.reordered, 100);
	ck_assert_uint_gt(env->net.corrupted, 10);
	ck_assert_uint_gt(env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT] +
			      env->qa->x.cnt[XPORT_CNT_RETRY_NAK_SEQ] +
			      env->qa->x.cnt[XPORT_CNT_RETRY_IMPLIED],
			  10);
	ck_assert_uint_gt(env->qb->x.cnt[XPORT_CNT_DUP_REQ], 10);
	/* Every corruption is caught, except in BTH byte 4, which the ICRC does not cover. */
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_ICRC] +
			      env->a.dev.drops[XPORT_DROP_BAD_ICRC],
			  env->net.corrupted - env->net.corrupted_masked);
	printf("soak seed %llu mtu %u: %u ops, %u pkts sent, %u dropped, %u dup, %u reordered, "
	       "%u corrupted, %u timer expiries, A retries %llu/%llu/%llu, B dup %llu\n",
	       (unsigned long long)seed, xport_mtu_bytes(mtu), sa.ops + sb.ops, env->net.nlog,
	       env->net.dropped, env->net.duplicated, env->net.reordered, env->net.corrupted,
	       env->net.timers_fired, (unsigned long long)env->qa->x.cnt[XPORT_CNT_RETRY_TIMEOUT],
	       (unsigned long long)env->qa->x.cnt[XPORT_CNT_RETRY_NAK_SEQ],
	       (unsigned long long)env->qa->x.cnt[XPORT_CNT_RETRY_IMPLIED],
	       (unsigned long long)env->qb->x.cnt[XPORT_CNT_DUP_REQ]);
	fake_env_free(env);
	free(opa);
	free(opb);
}

START_TEST(test_soak_256)
{
	soak(1, 1, 60);
}
END_TEST

START_TEST(test_soak_1024)
{
	soak(2, 3, 40);
}
END_TEST

START_TEST(test_soak_4096)
{
	soak(3, 5, 20);
}
END_TEST

static Suite *soak_suite(void)
{
	Suite *s = suite_create("soak");
	TCase *tc = tcase_create("soak");

	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_soak_256);
	tcase_add_test(tc, test_soak_1024);
	tcase_add_test(tc, test_soak_4096);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(soak_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
