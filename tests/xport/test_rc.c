/* SPDX-License-Identifier: MIT */
/*
 * RC operations end to end through the engine and a lossless fake network:
 * every packet of every exchange is checked (opcode, PSN, AckReq, payload
 * length, AETH), and so are the completions and the bytes in memory. SEND
 * at each path MTU with 1 B / PMTU / 3xPMTU+1, WRITE and WRITE with
 * immediate, multi-packet READ, both atomics, inline data, multi-SGE
 * gather/scatter, signaling, solicited events, the AckReq spacing and the
 * 128-PSN window, fences, initiator depth, PSN wrap, UC and UD.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/opcode.h>
#include <wire/psn.h>
#include "fake.h"

#define ACK_SYN 0x1f /* ACK, unlimited credits */

static struct fake_env *env;

static void teardown(void)
{
	if (env && getenv("FAKE_DUMP"))
		fake_dump(&env->net);
	if (env)
		fake_env_free(env);
	env = NULL;
}

/* No drop counted anywhere. */
static void assert_no_drops(void)
{
	for (unsigned i = 0; i < XPORT_DROP_COUNT; i++) {
		ck_assert_msg(env->a.dev.drops[i] == 0, "A dropped %s", xport_drop_name(i));
		ck_assert_msg(env->b.dev.drops[i] == 0, "B dropped %s", xport_drop_name(i));
	}
}

static const struct fake_log *pkt_at(int from, unsigned n)
{
	int i = fake_find(&env->net, from, -1, n);

	ck_assert_int_ge(i, 0);
	return &env->net.log[i];
}

static uint32_t psn(uint32_t base, uint32_t n)
{
	return wire_psn_add(base, n);
}

/* ---- SEND at every MTU ----------------------------------------------------- */

static void check_send(uint8_t mtu, uint32_t len)
{
	struct fake_conn c;
	uint32_t pmtu = xport_mtu_bytes(mtu), n = xport__req_npkts(len, pmtu);
	struct xport_wqe w;
	const struct fake_log *e;

	fake_conn_defaults(&c);
	c.mtu = mtu;
	env = fake_env_new(mtu * 1000 + len, UROCE_QPT_RC, &c);
	fake_pattern(env->ma->buf, len, len);
	fake_post_recv(env->qb, 77, env->mb, 0, 4 * 4096 + 100);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, len);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 10000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), n);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t want = n == 1	    ? WIRE_OP_RC_SEND_ONLY
			       : i == 0	    ? WIRE_OP_RC_SEND_FIRST
			       : i == n - 1 ? WIRE_OP_RC_SEND_LAST
					    : WIRE_OP_RC_SEND_MIDDLE;

		e = pkt_at(0, i);
		ck_assert_uint_eq(e->opcode, want);
		ck_assert_uint_eq(e->psn, psn(c.psn_a, i));
		ck_assert_uint_eq(e->qpn, 0x22);
		ck_assert_int_eq(e->ackreq, i == n - 1);
		ck_assert_uint_eq(e->paylen, i == n - 1 ? len - i * pmtu : pmtu);
	}
	/* One ACK for the whole message, for its last PSN, MSN 1. */
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 1);
	e = pkt_at(1, 0);
	ck_assert_uint_eq(e->opcode, WIRE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(e->psn, psn(c.psn_a, n - 1));
	ck_assert_int_eq(e->syndrome, ACK_SYN);
	ck_assert_uint_eq(e->msn, 1);
	ck_assert_uint_eq(e->qpn, 0x11);

	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].wr_id, 77);
	ck_assert_uint_eq(env->qb->rcq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qb->rcq[0].opcode, UROCE_WC_RECV);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, len);
	ck_assert_uint_eq(env->qb->rcq[0].qp_num, 0x22);
	ck_assert_uint_eq(env->qb->rcq[0].wc_flags, 0);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, len);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_SEND);
	ck_assert_uint_eq(env->qa->scq[0].byte_len, len);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_TX_PKTS], n);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_TX_BYTES], len);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_RX_BYTES], len);
	ck_assert_uint_eq(env->qa->x.cnt[XPORT_CNT_RETX_PKTS], 0);
	/* Every packet was built where the device's tx_buf put it (scribbled on first). */
	ck_assert_uint_eq(env->a.tx_in_place, n);
	/* Nothing left armed: the world is idle. */
	ck_assert_uint_eq(env->qa->timer, 0);
	ck_assert_uint_eq(env->net.timers_fired, 0);
	assert_no_drops();
	teardown();
}

START_TEST(test_send_every_mtu)
{
	for (uint8_t mtu = 1; mtu <= 5; mtu++) {
		uint32_t pmtu = xport_mtu_bytes(mtu);

		check_send(mtu, 1);
		check_send(mtu, pmtu);
		check_send(mtu, 3 * pmtu + 1);
	}
	check_send(3, 0);
}
END_TEST

START_TEST(test_send_imm_solicited)
{
	struct xport_wqe w;

	env = fake_env_new(1, UROCE_QPT_RC, NULL);
	fake_pattern(env->ma->buf, 2000, 5);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 9, UROCE_WR_SEND_WITH_IMM, UROCE_SEND_SIGNALED | UROCE_SEND_SOLICITED, env->ma,
		 0, 2000);
	w.imm_data = 0x78563412; /* stays as the bytes 12 34 56 78 */
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	ck_assert_uint_eq(pkt_at(0, 0)->opcode, WIRE_OP_RC_SEND_FIRST);
	ck_assert(!pkt_at(0, 0)->se);
	ck_assert_uint_eq(pkt_at(0, 1)->opcode, WIRE_OP_RC_SEND_LAST_IMM);
	ck_assert(pkt_at(0, 1)->se);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].imm_data, 0x78563412);
	ck_assert_uint_eq(env->qb->rcq[0].wc_flags, UROCE_WC_WITH_IMM);
	ck_assert(env->qb->rcq[0].flags & UROCE_CQE_SOLICITED);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 2000);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 2000);
	assert_no_drops();
}
END_TEST

START_TEST(test_write)
{
	struct xport_wqe w;
	uint32_t len = 2 * 1024 + 513;

	env = fake_env_new(2, UROCE_QPT_RC, NULL);
	fake_pattern(env->ma->buf, len, 11);
	fake_wqe(&w, 5, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, len);
	fake_wqe_remote(&w, env->mb, 4096);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 3);
	ck_assert_uint_eq(pkt_at(0, 0)->opcode, WIRE_OP_RC_RDMA_WRITE_FIRST);
	ck_assert_uint_eq(pkt_at(0, 0)->dmalen, len);
	ck_assert_uint_eq(pkt_at(0, 0)->va, (uint64_t)(uintptr_t)(env->mb->buf + 4096));
	ck_assert_uint_eq(pkt_at(0, 1)->opcode, WIRE_OP_RC_RDMA_WRITE_MIDDLE);
	ck_assert_uint_eq(pkt_at(0, 2)->opcode, WIRE_OP_RC_RDMA_WRITE_LAST);
	ck_assert_uint_eq(pkt_at(0, 2)->paylen, 513);
	ck_assert(pkt_at(0, 2)->ackreq);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 1);
	ck_assert_uint_eq(pkt_at(1, 0)->psn, psn(env->conn.psn_a, 2));
	ck_assert_mem_eq(env->mb->buf + 4096, env->ma->buf, len);
	/* A WRITE consumes no receive WQE and makes no receive completion. */
	ck_assert_uint_eq(env->qb->nrcq, 0);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_RDMA_WRITE);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	assert_no_drops();
}
END_TEST

/*
 * The cost profile's ICRC time (xport_dev.prof, the daemon's --profile): the
 * clock is read around each ICRC computed (each packet sent) and checked
 * (each received), and only then. The fake clock moves FAKE_TICK per read.
 */
START_TEST(test_prof_icrc)
{
	struct xport_wqe w;

	env = fake_env_new(4, UROCE_QPT_RC, NULL);
	env->a.dev.prof = true;
	fake_wqe(&w, 5, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 2 * 1024 + 513);
	fake_wqe_remote(&w, env->mb, 4096);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	/* A sent three packets and received one ACK: four ICRCs, two reads each. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 3);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 1);
	ck_assert_uint_eq(env->a.dev.prof_icrc_ticks, 4 * FAKE_TICK);
	ck_assert_uint_eq(env->a.ticks, 8 * FAKE_TICK);
	/* B does not profile: its clock is never read. */
	ck_assert_uint_eq(env->b.dev.prof_icrc_ticks, 0);
	ck_assert_uint_eq(env->b.ticks, 0);
	assert_no_drops();
}
END_TEST

START_TEST(test_write_imm)
{
	struct xport_wqe w;

	env = fake_env_new(3, UROCE_QPT_RC, NULL);
	fake_pattern(env->ma->buf, 3000, 12);
	fake_post_recv(env->qb, 40, env->mb, 0, 0); /* WRITE with immediate needs no buffer */
	fake_post_recv(env->qb, 41, env->mb, 0, 0);
	fake_wqe(&w, 6, UROCE_WR_RDMA_WRITE_WITH_IMM, UROCE_SEND_SIGNALED, env->ma, 0, 100);
	fake_wqe_remote(&w, env->mb, 8192);
	w.imm_data = 0xdeadbeef;
	fake_post(env->qa, &w);
	fake_wqe(&w, 7, UROCE_WR_RDMA_WRITE_WITH_IMM, UROCE_SEND_SIGNALED, env->ma, 100, 2900);
	fake_wqe_remote(&w, env->mb, 16384);
	w.imm_data = 0x01020304;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 4);
	ck_assert_uint_eq(pkt_at(0, 0)->opcode, WIRE_OP_RC_RDMA_WRITE_ONLY_IMM);
	ck_assert_uint_eq(pkt_at(0, 1)->opcode, WIRE_OP_RC_RDMA_WRITE_FIRST);
	ck_assert_uint_eq(pkt_at(0, 2)->opcode, WIRE_OP_RC_RDMA_WRITE_MIDDLE);
	ck_assert_uint_eq(pkt_at(0, 3)->opcode, WIRE_OP_RC_RDMA_WRITE_LAST_IMM);
	ck_assert_mem_eq(env->mb->buf + 8192, env->ma->buf, 100);
	ck_assert_mem_eq(env->mb->buf + 16384, env->ma->buf + 100, 2900);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->qb->rcq[0].wr_id, 40);
	ck_assert_uint_eq(env->qb->rcq[0].opcode, UROCE_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(env->qb->rcq[0].imm_data, 0xdeadbeef);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 100);
	ck_assert_uint_eq(env->qb->rcq[1].wr_id, 41);
	ck_assert_uint_eq(env->qb->rcq[1].imm_data, 0x01020304);
	ck_assert_uint_eq(env->qb->rcq[1].byte_len, 2900);
	ck_assert_uint_eq(env->qb->rcq[1].wc_flags, UROCE_WC_WITH_IMM);
	ck_assert_uint_eq(env->qa->nscq, 2);
	assert_no_drops();
}
END_TEST

START_TEST(test_read_multi)
{
	struct xport_wqe w;
	uint32_t len = 3 * 1024 + 5;

	env = fake_env_new(4, UROCE_QPT_RC, NULL);
	fake_pattern(env->mb->buf + 1000, len, 13);
	fake_wqe(&w, 8, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 64, len);
	fake_wqe_remote(&w, env->mb, 1000);
	fake_post(env->qa, &w);
	/* The next request's PSN comes after all READ response PSNs. */
	fake_wqe(&w, 9, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	ck_assert_uint_eq(pkt_at(0, 0)->opcode, WIRE_OP_RC_RDMA_READ_REQUEST);
	ck_assert_uint_eq(pkt_at(0, 0)->psn, env->conn.psn_a);
	ck_assert_uint_eq(pkt_at(0, 0)->dmalen, len);
	ck_assert(pkt_at(0, 0)->ackreq);
	ck_assert_uint_eq(pkt_at(0, 1)->opcode, WIRE_OP_RC_SEND_ONLY);
	ck_assert_uint_eq(pkt_at(0, 1)->psn, psn(env->conn.psn_a, 4));

	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 5);
	ck_assert_uint_eq(pkt_at(1, 0)->opcode, WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST);
	ck_assert_uint_eq(pkt_at(1, 1)->opcode, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	ck_assert_uint_eq(pkt_at(1, 2)->opcode, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	ck_assert_uint_eq(pkt_at(1, 3)->opcode, WIRE_OP_RC_RDMA_READ_RESPONSE_LAST);
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(pkt_at(1, i)->psn, psn(env->conn.psn_a, i));
		ck_assert_int_eq(pkt_at(1, i)->syndrome, i == 1 || i == 2 ? -1 : ACK_SYN);
		ck_assert_uint_eq(pkt_at(1, i)->paylen, i == 3 ? 5 : 1024);
	}
	ck_assert_uint_eq(pkt_at(1, 0)->msn, 1);
	ck_assert_uint_eq(pkt_at(1, 4)->opcode, WIRE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(pkt_at(1, 4)->psn, psn(env->conn.psn_a, 4));
	ck_assert_uint_eq(pkt_at(1, 4)->msn, 2);
	ck_assert_mem_eq(env->ma->buf + 64, env->mb->buf + 1000, len);
	/* The requests and the READ responses were built in place; the ACK was not. */
	ck_assert_uint_eq(env->a.tx_in_place, 2);
	ck_assert_uint_eq(env->b.tx_in_place, 4);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 8);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_RDMA_READ);
	ck_assert_uint_eq(env->qa->scq[0].byte_len, len);
	ck_assert_uint_eq(env->qa->scq[1].wr_id, 9);
	assert_no_drops();
}
END_TEST

START_TEST(test_read_zero_and_only)
{
	struct xport_wqe w;

	env = fake_env_new(5, UROCE_QPT_RC, NULL);
	fake_pattern(env->mb->buf, 512, 3);
	fake_wqe(&w, 1, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 0, 512);
	fake_wqe_remote(&w, env->mb, 0);
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, NULL, 0, 0);
	w.remote_addr = 0x1234; /* zero length: no key, no range check */
	w.rkey = 0xbad;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 2);
	ck_assert_uint_eq(pkt_at(1, 1)->paylen, 0);
	ck_assert_uint_eq(pkt_at(0, 1)->psn, psn(env->conn.psn_a, 1));
	ck_assert_mem_eq(env->ma->buf, env->mb->buf, 512);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	assert_no_drops();
}
END_TEST

START_TEST(test_atomics)
{
	struct xport_wqe w;
	uint64_t v = 100, got;

	env = fake_env_new(6, UROCE_QPT_RC, NULL);
	memcpy(env->mb->buf + 64, &v, 8);
	fake_wqe(&w, 1, UROCE_WR_ATOMIC_FETCH_AND_ADD, UROCE_SEND_SIGNALED, env->ma, 0, 8);
	fake_wqe_remote(&w, env->mb, 64);
	w.compare_add = 5;
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_SEND_SIGNALED, env->ma, 8, 8);
	fake_wqe_remote(&w, env->mb, 64);
	w.compare_add = 105;
	w.swap = 7;
	fake_post(env->qa, &w);
	fake_wqe(&w, 3, UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_SEND_SIGNALED, env->ma, 16, 8);
	fake_wqe_remote(&w, env->mb, 64);
	w.compare_add = 1; /* does not match: no swap */
	w.swap = 9;
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_FETCH_ADD), 1);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_COMPARE_SWAP), 2);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ATOMIC_ACKNOWLEDGE), 3);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(pkt_at(0, i)->psn, psn(env->conn.psn_a, i));
		ck_assert(pkt_at(0, i)->ackreq);
		ck_assert_uint_eq(pkt_at(1, i)->psn, psn(env->conn.psn_a, i));
		ck_assert_uint_eq(pkt_at(1, i)->msn, i + 1);
	}
	memcpy(&got, env->ma->buf, 8);
	ck_assert_uint_eq(got, 100);
	memcpy(&got, env->ma->buf + 8, 8);
	ck_assert_uint_eq(got, 105);
	memcpy(&got, env->ma->buf + 16, 8);
	ck_assert_uint_eq(got, 7);
	memcpy(&got, env->mb->buf + 64, 8);
	ck_assert_uint_eq(got, 7);
	ck_assert_uint_eq(env->b.atomics, 3);
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_FETCH_ADD);
	ck_assert_uint_eq(env->qa->scq[1].opcode, UROCE_WC_COMP_SWAP);
	ck_assert_uint_eq(env->qa->scq[2].status, UROCE_WC_SUCCESS);
	assert_no_drops();
}
END_TEST

/*
 * ATOMIC WRITE (IBA 1.5): RETH + the WQE's 8 bytes, stored as sent,
 * answered by a zero-length READ Response Only (rxe), completing as
 * IBV_WC_ATOMIC_WRITE; a duplicate gets the answer again and is not
 * executed twice.
 */
START_TEST(test_atomic_write)
{
	static const char bytes[8] = "ABCDEFGH";
	struct xport_wqe w;
	uint8_t again[8] = "ZZZZZZZZ";

	env = fake_env_new(61, UROCE_QPT_RC, NULL);
	fake_wqe(&w, 1, UROCE_WR_ATOMIC_WRITE, UROCE_SEND_SIGNALED, NULL, 0, 0);
	fake_wqe_remote(&w, env->mb, 64);
	memcpy(&w.compare_add, bytes, 8);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_ATOMIC_WRITE), 1);
	ck_assert_uint_eq(pkt_at(0, 0)->paylen, 8);
	ck_assert_uint_eq(pkt_at(0, 0)->dmalen, 8);
	ck_assert(pkt_at(0, 0)->ackreq);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 1);
	ck_assert_uint_eq(pkt_at(1, 0)->paylen, 0);
	ck_assert_uint_eq(pkt_at(1, 0)->psn, env->conn.psn_a);
	ck_assert_uint_eq(pkt_at(1, 0)->msn, 1);
	ck_assert_mem_eq(env->mb->buf + 64, bytes, 8);
	ck_assert_uint_eq(env->b.atomics, 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_ATOMIC_WRITE);
	assert_no_drops();

	/* The same PSN again, other bytes: answered, not executed (C9-105). */
	fake_send_req(env->qa, WIRE_OP_RC_ATOMIC_WRITE, env->conn.psn_a, true, again, 8,
		      (uint64_t)(uintptr_t)env->mb->buf + 64, env->mb->key, 8);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 2);
	ck_assert_mem_eq(env->mb->buf + 64, bytes, 8);
	ck_assert_uint_eq(env->b.atomics, 1);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_RTS);
}
END_TEST

/* Misuse: a VA not 8-byte aligned is an invalid request (rxe), memory
 * without remote write a remote access error; nothing is written. */
static void check_atomic_write_error(size_t off, uint32_t access, uint32_t want)
{
	struct xport_wqe w;
	struct fake_mr *m;
	uint64_t v = 0x1122334455667788ull, zero = 0;

	env = fake_env_new(62 + off, UROCE_QPT_RC, NULL);
	m = access == FAKE_ALL_ACCESS ? env->mb : fake_mr_reg(&env->b, 64, access);
	fake_wqe(&w, 1, UROCE_WR_ATOMIC_WRITE, UROCE_SEND_SIGNALED, NULL, 0, 0);
	fake_wqe_remote(&w, m, off);
	w.compare_add = v;
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, want);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_ATOMIC_WRITE);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 0);
	ck_assert_uint_eq(env->b.atomics, 0);
	ck_assert_mem_eq(m->buf + (off & ~(size_t)7), &zero, 8);
	teardown();
}

START_TEST(test_atomic_write_errors)
{
	check_atomic_write_error(65, FAKE_ALL_ACCESS, UROCE_WC_REM_INV_REQ_ERR);
	check_atomic_write_error(8, UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC,
				 UROCE_WC_REM_ACCESS_ERR);
}
END_TEST

/* ---- FLUSH (IBA A19) -------------------------------------------------------- */

#define FLUSH_MR_ACCESS \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_FLUSH_GLOBAL)

/* A pair whose QPs accept FLUSH for global visibility (rxe's QP access rule). */
static void flush_env(uint64_t seed, uint32_t qp_access, uint8_t depth)
{
	struct fake_conn c;

	fake_conn_defaults(&c);
	c.access |= qp_access;
	if (depth)
		c.max_rd_atomic = c.max_dest_rd_atomic = depth;
	env = fake_env_new(seed, UROCE_QPT_RC, &c);
}

static void flush_wqe(struct xport_wqe *w, uint64_t wr_id, struct fake_mr *m, size_t off,
		      uint32_t len, uint8_t type, uint8_t level)
{
	fake_wqe(w, wr_id, UROCE_WR_FLUSH, UROCE_SEND_SIGNALED, NULL, 0, 0);
	fake_wqe_remote(w, m, off);
	w->flush_len = len;
	w->flush_type = type;
	w->flush_level = level;
}

/*
 * A WRITE then a FLUSH of its range, then a FLUSH of the whole MR: each
 * FLUSH is one packet (FETH with the placement type and selectivity level,
 * RETH with the range) answered by a zero-length READ Response Only, and
 * completes as IBV_WC_FLUSH; the responder asked its flush op for the
 * flush access of the type over the range, or the whole MR.
 */
START_TEST(test_flush)
{
	struct xport_wqe w;
	struct fake_mr *m;
	int i;

	flush_env(71, UROCE_ACCESS_FLUSH_GLOBAL, 0);
	m = fake_mr_reg(&env->b, 8192, FLUSH_MR_ACCESS);
	fake_pattern(env->ma->buf, 4096, 3);
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 4096);
	fake_wqe_remote(&w, m, 1024);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	flush_wqe(&w, 2, m, 1024, 4096, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_FLUSH), 1);
	i = fake_find(&env->net, 0, WIRE_OP_RC_FLUSH, 0);
	ck_assert_int_eq(env->net.log[i].feth_plt, UROCE_FLUSH_GLOBAL);
	ck_assert_int_eq(env->net.log[i].feth_sel, UROCE_FLUSH_RANGE);
	ck_assert_uint_eq(env->net.log[i].va, (uint64_t)(uintptr_t)m->buf + 1024);
	ck_assert_uint_eq(env->net.log[i].dmalen, 4096);
	ck_assert_uint_eq(env->net.log[i].rkey, m->key);
	ck_assert_uint_eq(env->net.log[i].paylen, 0);
	ck_assert(env->net.log[i].ackreq);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 1);
	i = fake_find(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0);
	ck_assert_uint_eq(env->net.log[i].paylen, 0);
	ck_assert_uint_eq(env->net.log[i].msn, 2);
	ck_assert_mem_eq(m->buf + 1024, env->ma->buf, 4096);
	ck_assert_uint_eq(env->b.flushes, 1);
	ck_assert_uint_eq(env->b.flush_access, UROCE_ACCESS_FLUSH_GLOBAL);
	ck_assert(!env->b.flush_whole);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_RDMA_WRITE);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[1].opcode, UROCE_WC_FLUSH);
	ck_assert_uint_eq(env->qa->scq[1].wr_id, 2);
	ck_assert_uint_eq(env->qa->scq[1].byte_len, 0);

	/* Selectivity MR: the RETH's range is not looked at. */
	flush_wqe(&w, 3, m, 0, 0, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_MR);
	w.remote_addr = 0;
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);
	i = fake_find(&env->net, 0, WIRE_OP_RC_FLUSH, 1);
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(env->net.log[i].feth_sel, UROCE_FLUSH_MR);
	ck_assert_uint_eq(env->b.flushes, 2);
	ck_assert(env->b.flush_whole);
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qa->scq[2].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(env->qa->scq[2].opcode, UROCE_WC_FLUSH);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_FLUSH_EXECUTED], 2);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_RTS);
	assert_no_drops();
}
END_TEST

/* FLUSH holds initiator depth like a READ: with depth 1 the second waits for the first's answer. */
START_TEST(test_flush_depth)
{
	struct xport_wqe w;
	struct fake_mr *m;
	int r0, f1;

	flush_env(72, UROCE_ACCESS_FLUSH_GLOBAL, 1);
	m = fake_mr_reg(&env->b, 4096, FLUSH_MR_ACCESS);
	flush_wqe(&w, 1, m, 0, 64, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	flush_wqe(&w, 2, m, 64, 64, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_FLUSH), 2);
	r0 = fake_find(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0);
	f1 = fake_find(&env->net, 0, WIRE_OP_RC_FLUSH, 1);
	ck_assert_int_ge(r0, 0);
	ck_assert_int_gt(f1, r0); /* sent after the first answer */
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	assert_no_drops();
}
END_TEST

/*
 * Misuse, each on a fresh pair: the requester completes with want, the
 * responder flushed nothing and went to Error (class C), no answer but a NAK.
 */
static void check_flush_error(uint64_t seed, uint32_t qp_access, uint32_t mr_access, size_t off,
			      uint32_t len, uint8_t type, uint8_t level, uint32_t want)
{
	struct xport_wqe w;
	struct fake_mr *m;

	flush_env(seed, qp_access, 0);
	m = fake_mr_reg(&env->b, 4096, mr_access);
	flush_wqe(&w, 1, m, off, len, type, level);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_FLUSH), 1);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 0);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_msg(env->qa->scq[0].status == want, "status %u, want %u", env->qa->scq[0].status,
		      want);
	ck_assert_uint_eq(env->qa->scq[0].opcode, UROCE_WC_FLUSH);
	ck_assert_uint_eq(env->b.flushes, 0);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_FLUSH_EXECUTED], 0);
	ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_ERR);
	teardown();
}

START_TEST(test_flush_errors)
{
	/* The MR has no flush access: NAK Remote Access Error. */
	check_flush_error(73, UROCE_ACCESS_FLUSH_GLOBAL,
			  UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE, 0, 64,
			  UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, UROCE_WC_REM_ACCESS_ERR);
	/* ... nor for the whole MR. */
	check_flush_error(74, UROCE_ACCESS_FLUSH_GLOBAL,
			  UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE, 0, 0,
			  UROCE_FLUSH_GLOBAL, UROCE_FLUSH_MR, UROCE_WC_REM_ACCESS_ERR);
	/* A range beyond the MR's end: Remote Access Error. */
	check_flush_error(75, UROCE_ACCESS_FLUSH_GLOBAL, FLUSH_MR_ACCESS, 4000, 200,
			  UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, UROCE_WC_REM_ACCESS_ERR);
	/* Persistence asked of an MR flushable for visibility only. */
	check_flush_error(76, UROCE_ACCESS_FLUSH_GLOBAL | UROCE_ACCESS_FLUSH_PERSISTENT,
			  FLUSH_MR_ACCESS, 0, 64, UROCE_FLUSH_PERSISTENT, UROCE_FLUSH_RANGE,
			  UROCE_WC_REM_ACCESS_ERR);
	/* The QP's access flags do not allow the placement type: Invalid Request (rxe). */
	check_flush_error(77, 0, FLUSH_MR_ACCESS, 0, 64, UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE,
			  UROCE_WC_REM_INV_REQ_ERR);
}
END_TEST

/* A FLUSH as another requester might build it: FETH PLT/SEL as given, RETH over m. */
static void send_flush_req(uint32_t psn, unsigned plt, unsigned sel, struct fake_mr *m)
{
	const struct wire_opcode_info *info = wire_opcode_info(WIRE_OP_RC_FLUSH);
	uint8_t pkt[XPORT_MAX_PKT_BYTES];
	struct wire_feth *feth = (struct wire_feth *)(pkt + info->offset[WIRE_HDR_FETH]);
	struct wire_reth *reth = (struct wire_reth *)(pkt + info->offset[WIRE_HDR_RETH]);
	struct xport_route rt;

	xport__bth(&env->qa->x, pkt, WIRE_OP_RC_FLUSH, psn, true, 0);
	memset(feth, 0, sizeof(*feth));
	wire_feth_set_plt(feth, plt);
	wire_feth_set_sel(feth, sel);
	wire_reth_set_va(reth, (uint64_t)(uintptr_t)m->buf);
	wire_reth_set_rkey(reth, m->key);
	wire_reth_set_dmalen(reth, 64);
	xport__route(&env->qa->x, &rt);
	xport__xmit(&env->qa->x, &rt, pkt, info->hdr_bytes, 0);
}

/*
 * A FETH no uroce requester sends: no placement type, an unknown type bit,
 * a reserved selectivity level. Each is NAKed Invalid Request and executes
 * nothing, on a fresh pair.
 */
START_TEST(test_flush_bad_feth)
{
	static const unsigned cases[][2] = {{0, UROCE_FLUSH_RANGE},
					    {4, UROCE_FLUSH_RANGE},
					    {UROCE_FLUSH_GLOBAL, 2},
					    {UROCE_FLUSH_GLOBAL, 3}};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_mr *m;
		int a;

		flush_env(80 + i, UROCE_ACCESS_FLUSH_GLOBAL, 0);
		m = fake_mr_reg(&env->b, 4096, FLUSH_MR_ACCESS);
		send_flush_req(env->conn.psn_a, cases[i][0], cases[i][1], m);
		fake_run(&env->net, 1000);
		a = fake_find(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE, 0);
		ck_assert_int_ge(a, 0);
		ck_assert_int_eq(env->net.log[a].syndrome,
				 wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_INVALID_REQUEST));
		ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY), 0);
		ck_assert_uint_eq(env->b.flushes, 0);
		ck_assert_uint_eq(env->qb->x.attr.state, UROCE_QPS_ERR);
		teardown();
	}
}
END_TEST

/* A malformed FLUSH WR fails locally, nothing is sent. */
START_TEST(test_flush_bad_wr)
{
	struct xport_wqe w;

	flush_env(78, UROCE_ACCESS_FLUSH_GLOBAL, 0);
	flush_wqe(&w, 1, env->mb, 0, 64, 0, UROCE_FLUSH_RANGE);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_FLUSH), 0);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].status, UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(test_inline)
{
	struct xport_wqe w;

	env = fake_env_new(7, UROCE_QPT_RC, NULL);
	fake_post_recv(env->qb, 1, env->mb, 0, 256);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED | UROCE_SEND_INLINE, NULL, 0, 0);
	w.inline_len = 200;
	fake_pattern(w.inline_data, 200, 99);
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED | UROCE_SEND_INLINE, NULL, 0, 0);
	fake_wqe_remote(&w, env->mb, 1000);
	w.inline_len = 33;
	memset(w.inline_data, 0x5a, 33);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	ck_assert_uint_eq(pkt_at(0, 0)->paylen, 200);
	ck_assert_uint_eq(pkt_at(0, 1)->paylen, 33);
	fake_pattern(env->ma->buf, 200, 99);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 200);
	for (int i = 0; i < 33; i++)
		ck_assert_uint_eq(env->mb->buf[1000 + i], 0x5a);
	ck_assert_uint_eq(env->mb->buf[1033], 0);
	/* Inline data never touches local memory keys. */
	ck_assert_uint_eq(env->a.dma_calls, 0);
	ck_assert_uint_eq(env->qa->nscq, 2);
	assert_no_drops();
}
END_TEST

/* w: a signaled SEND (wr_id 1) of three SGEs of A's MR, at loff, lens bytes. */
static void send_three_sges(struct xport_wqe *w, const size_t loff[3], const uint32_t lens[3])
{
	fake_wqe(w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, NULL, 0, 0);
	w->num_sge = 3;
	for (int i = 0; i < 3; i++) {
		w->sge[i].addr = (uint64_t)(uintptr_t)(env->ma->buf + loff[i]);
		w->sge[i].length = lens[i];
		w->sge[i].lkey = env->ma->key;
	}
}

START_TEST(test_multi_sge)
{
	struct xport_wqe w;
	struct xport_recv_wqe *r;
	uint8_t want[2137];
	uint32_t lens[3] = {100, 2000, 37}, rlens[3] = {500, 1000, 1000};
	size_t loff[3] = {5000, 9000, 20000}, roff[3] = {300, 7000, 3000};
	uint32_t at = 0;

	env = fake_env_new(8, UROCE_QPT_RC, NULL);
	fake_pattern(env->ma->buf, FAKE_MR_BYTES, 21);
	send_three_sges(&w, loff, lens);
	for (int i = 0; i < 3; i++) {
		memcpy(want + at, env->ma->buf + loff[i], lens[i]);
		at += lens[i];
	}
	r = &env->qb->rq[env->qb->rq_tail++ % FAKE_RQ_SIZE];
	memset(r, 0, sizeof(*r));
	r->wr_id = 5;
	r->num_sge = 3;
	for (int i = 0; i < 3; i++) {
		r->sge[i].addr = (uint64_t)(uintptr_t)(env->mb->buf + roff[i]);
		r->sge[i].length = rlens[i];
		r->sge[i].lkey = env->mb->key;
	}
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 3);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 2137);
	/* Scattered: 500 + 1000 + the remaining 637. */
	ck_assert_mem_eq(env->mb->buf + 300, want, 500);
	ck_assert_mem_eq(env->mb->buf + 7000, want + 500, 1000);
	ck_assert_mem_eq(env->mb->buf + 3000, want + 1500, 637);
	ck_assert_uint_eq(env->mb->buf[3637], 0);
	assert_no_drops();
}
END_TEST

/*
 * A device that folds payloads into the ICRC as it gathers them (ops
 * ->dma_read_crc, as the daemon does) puts the same bytes on the wire as one
 * that copies them first: a SEND from three SGEs with odd lengths (pad),
 * a WRITE and a READ (whose responses the responder folds), run once each
 * way and compared packet by packet. The receiver checks every ICRC.
 */
#define FOLD_MAX_PKTS 64

static unsigned fold_scenario(bool fold, uint32_t *crcs, uint64_t folds[2])
{
	struct xport_wqe w;
	uint32_t lens[3] = {100, 2000, 37};
	size_t loff[3] = {5000, 9000, 20000};
	unsigned n;

	fake_fold = fold;
	env = fake_env_new(31, UROCE_QPT_RC, NULL);
	fake_fold = false;
	fake_pattern(env->ma->buf, FAKE_MR_BYTES, 41);
	fake_pattern(env->mb->buf, FAKE_MR_BYTES, 43);
	send_three_sges(&w, loff, lens);
	fake_post_recv(env->qb, 5, env->mb, 30000, 4096);
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 333, 3001);
	fake_wqe_remote(&w, env->mb, 8191);
	fake_post(env->qa, &w);
	fake_wqe(&w, 3, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 40000, 2999);
	fake_wqe_remote(&w, env->mb, 50001);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(env->qa->nscq, 3);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_SUCCESS);
	ck_assert_mem_eq(env->mb->buf + 8191, env->ma->buf + 333, 3001);
	ck_assert_mem_eq(env->ma->buf + 40000, env->mb->buf + 50001, 2999);
	assert_no_drops();
	n = env->net.nlog;
	ck_assert_uint_le(n, FOLD_MAX_PKTS);
	for (unsigned i = 0; i < n; i++)
		crcs[i] = env->net.log[i].crc;
	folds[0] = env->a.dma_folds;
	folds[1] = env->b.dma_folds;
	teardown();
	return n;
}

START_TEST(test_folded_icrc_same_bytes)
{
	uint32_t copied[FOLD_MAX_PKTS], folded[FOLD_MAX_PKTS];
	uint64_t fc[2], ff[2];
	unsigned n = fold_scenario(false, copied, fc);

	ck_assert_uint_eq(fold_scenario(true, folded, ff), n);
	ck_assert_uint_ge(n, 10);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(copied[i] == folded[i], "packet %u differs", i);
	/* Folded: the SEND's three SGEs and the WRITE's packets on A, the
	 * READ responses on B; copied: none. */
	ck_assert_uint_eq(fc[0] + fc[1], 0);
	ck_assert_uint_ge(ff[0], 3 + 3);
	ck_assert_uint_ge(ff[1], 3);
}
END_TEST

START_TEST(test_signaling)
{
	struct xport_wqe w;

	env = fake_env_new(9, UROCE_QPT_RC, NULL);
	for (int i = 0; i < 4; i++)
		fake_post_recv(env->qb, 100 + i, env->mb, 64 * i, 64);
	for (int i = 0; i < 4; i++) {
		fake_wqe(&w, i, UROCE_WR_SEND, i == 3 ? UROCE_SEND_SIGNALED : 0, env->ma, 0, 10);
		fake_post(env->qa, &w);
	}
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qb->nrcq, 4);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 3);
	ck_assert_uint_eq(xport_sq_free(&env->qa->x), 256);
	assert_no_drops();
	teardown();

	/* sq_sig_all: every WR completes visibly. */
	env = fake_env_new(9, UROCE_QPT_RC, NULL);
	env->qa->x.sq_sig_all = true;
	for (int i = 0; i < 3; i++) {
		fake_post_recv(env->qb, 100 + i, env->mb, 64 * i, 64);
		fake_wqe(&w, i, UROCE_WR_SEND, 0, env->ma, 0, 10);
		fake_post(env->qa, &w);
	}
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 3);
}
END_TEST


/*
 * Receive batches (xport_rx_batch_begin/end): the ACKs the requests of one
 * batch owe go out once per QP, at its end, for the last request (IBA
 * 9.7.5.1.1); outside a batch every request with AckReq gets its own. An
 * ACK owed when something else must be sent (a READ response) goes first.
 */
START_TEST(test_ack_coalescing)
{
	uint8_t p[16] = {0};
	uint32_t psn;
	int ack, rsp;

	env = fake_env_new(71, UROCE_QPT_RC, NULL);
	psn = env->conn.psn_a;
	for (int i = 0; i < 8; i++)
		fake_post_recv(env->qb, (uint64_t)i, env->mb, 64u * (unsigned)i, 64);

	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, psn, true, p, 16, 0, 0, 0);
	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, wire_psn_add(psn, 1), true, p, 16, 0, 0, 0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 2);

	xport_rx_batch_begin(&env->b.dev);
	for (uint32_t i = 2; i < 5; i++)
		fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, wire_psn_add(psn, i), true, p, 16, 0, 0,
			      0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(env->qb->nrcq, 5);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 2);
	xport_rx_batch_end(&env->b.dev);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 3);
	ack = fake_find(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE, 2);
	ck_assert_uint_eq(env->net.log[ack].psn, wire_psn_add(psn, 4));
	ck_assert_uint_eq(env->net.log[ack].msn, 5);

	/* A SEND, then a READ in the same batch: ACK 5 before the response. */
	xport_rx_batch_begin(&env->b.dev);
	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, wire_psn_add(psn, 5), true, p, 16, 0, 0, 0);
	fake_send_req(env->qa, WIRE_OP_RC_RDMA_READ_REQUEST, wire_psn_add(psn, 6), true, p, 0,
		      (uint64_t)(uintptr_t)env->mb->buf, env->mb->key, 8);
	fake_deliver_all(&env->net);
	xport_rx_batch_end(&env->b.dev);
	fake_run(&env->net, 1000);
	ack = fake_find(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE, 3);
	rsp = fake_find(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0);
	ck_assert_int_ge(ack, 0);
	ck_assert_int_gt(rsp, ack);
	ck_assert_uint_eq(env->net.log[ack].psn, wire_psn_add(psn, 5));
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 4);
	ck_assert_uint_eq(env->qb->nrcq, 6);
}
END_TEST

/*
 * dev->rnr_hold_us: a SEND that finds no receive WQE waits for one instead
 * of the RNR NAK; a WQE posted in time serves it (ACK, completion), and
 * when the wait runs out the QP's timer sends the RNR NAK as before.
 */
START_TEST(test_rnr_hold)
{
	uint8_t p[16] = {0};
	uint32_t psn;

	env = fake_env_new(73, UROCE_QPT_RC, NULL);
	env->b.dev.rnr_hold_us = 200;
	psn = env->conn.psn_a;

	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, psn, true, p, 16, 0, 0, 0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 0);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_HELD], 1);
	ck_assert_uint_eq(env->qb->x.resp.rnr_hold_until, env->net.now + 200);
	/* The program posts a WQE: the daemon runs the QP (ops.rnr_wait). */
	fake_post_recv(env->qb, 9, env->mb, 0, 64);
	xport_run(&env->qb->x);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].wr_id, 9);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 1);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_HELD_TAKEN], 1);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_NAK_SENT], 0);
	ck_assert_uint_eq(env->qb->x.resp.rnr_hold_until, 0);

	/* None comes: at the deadline the timer answers RNR NAK. */
	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, wire_psn_add(psn, 1), true, p, 16, 0, 0, 0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_HELD], 2);
	env->net.now += 100;
	xport_timeout(&env->qb->x);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_NAK_SENT], 0);
	env->net.now += 100;
	xport_timeout(&env->qb->x);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_NAK_SENT], 1);
	ck_assert_uint_eq(env->qb->x.resp.rnr_hold_until, 0);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->x.resp.psn, wire_psn_add(psn, 1));

	/* A QP that goes to Error while a request waits forgets the wait. */
	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, wire_psn_add(psn, 1), true, p, 16, 0, 0, 0);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_HELD], 3);
	{
		struct xport_qp_attr attr = {.state = UROCE_QPS_ERR};

		ck_assert_int_eq(xport_modify(&env->qb->x, &attr, UROCE_QP_STATE), 0);
	}
	ck_assert_uint_eq(env->qb->x.resp.rnr_hold_until, 0);
	env->net.now += 300;
	xport_timeout(&env->qb->x);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RNR_NAK_SENT], 1);
}
END_TEST

/* A QP reset inside a batch leaves the list of ACKs owed (no ACK, no crash). */
START_TEST(test_ack_coalescing_reset)
{
	uint8_t p[16] = {0};
	struct xport_qp_attr attr = {.state = UROCE_QPS_RESET};

	env = fake_env_new(72, UROCE_QPT_RC, NULL);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	xport_rx_batch_begin(&env->b.dev);
	fake_send_req(env->qa, WIRE_OP_RC_SEND_ONLY, env->conn.psn_a, true, p, 16, 0, 0, 0);
	fake_deliver_all(&env->net);
	ck_assert_ptr_eq(env->b.dev.ack_list, &env->qb->x);
	ck_assert_int_eq(xport_modify(&env->qb->x, &attr, UROCE_QP_STATE), 0);
	ck_assert_ptr_null(env->b.dev.ack_list);
	xport_rx_batch_end(&env->b.dev);
	ck_assert_uint_eq(fake_count(&env->net, 1, WIRE_OP_RC_ACKNOWLEDGE), 0);
}
END_TEST

/*
 * A 200-packet SEND (MTU 256): the first burst is the initial window, then
 * slow start opens it by one packet per packet acknowledged, up to 128
 * (cc.c). AckReq goes on every half window without one and on the packet
 * that fills the window, so the fake network (which delivers a whole burst
 * before the ACKs come back) sees exactly:
 *   burst 1, window 32: PSN 0..31, AckReq at 15 (half) and 31 (edge);
 *   ACK 15 -> window 48: 32..63, at 55 (24 after 31) and 63 (edge);
 *   ACK 31 -> window 64: 64..95, at 95 (edge, also 32 after 63);
 *   ACK 55 -> window 88: 96..143, at 139 (44 after 95) and 143 (edge);
 *   ACK 63 -> window 96: 144..159, at 159 (edge);
 *   ACK 95 -> window 128: 160..199, at 199 (the last packet).
 * Every AckReq is answered by one ACK for its PSN; MSN 1 only at the end.
 */
START_TEST(test_ackreq_window)
{
	static const uint32_t want[] = {15, 31, 55, 63, 95, 139, 143, 159, 199};
	struct fake_conn c;
	struct xport_wqe w;
	uint32_t len = 200 * 256;
	unsigned acks = 0, n = 0;

	fake_conn_defaults(&c);
	c.mtu = 1;
	env = fake_env_new(10, UROCE_QPT_RC, &c);
	fake_pattern(env->ma->buf, len, 1);
	fake_post_recv(env->qb, 1, env->mb, 0, len);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, len);
	fake_post(env->qa, &w);
	/* Nothing answered yet: exactly the initial window went out. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), XPORT_CWND_INIT);
	fake_run(&env->net, 10000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 200);
	for (unsigned i = 0; i < 200; i++) {
		bool ack = n < sizeof(want) / sizeof(want[0]) && i == want[n];

		ck_assert_uint_eq(pkt_at(0, i)->psn, psn(c.psn_a, i));
		ck_assert_msg(pkt_at(0, i)->ackreq == ack, "packet %u AckReq %d", i,
			      pkt_at(0, i)->ackreq);
		n += ack;
	}
	for (unsigned i = 0; i < env->net.nlog; i++) {
		if (env->net.log[i].from != 1)
			continue;
		ck_assert_uint_eq(env->net.log[i].opcode, WIRE_OP_RC_ACKNOWLEDGE);
		ck_assert_uint_eq(env->net.log[i].psn, psn(c.psn_a, want[acks]));
		ck_assert_uint_eq(env->net.log[i].msn, acks == 8 ? 1 : 0);
		acks++;
	}
	ck_assert_uint_eq(acks, 9);
	ck_assert_uint_eq(env->qa->x.cc.cwnd, XPORT_MAX_UNACKED_PSNS);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, len);
	assert_no_drops();
}
END_TEST

/*
 * An unsignaled message whose successor starts right behind it asks for no
 * ACK of its own. Five 2-packet WRITEs queued before the requester runs
 * (xport_post_send_queue, as the daemon hands what a pass finds): AckReq
 * only on the signaled third's end (PSN 5) and on the last's (9). Then a
 * READ, an unsignaled WRITE and one fenced behind the READ: the WRITE
 * before the fence asks (12: its successor cannot start), and the last
 * (14). Two unsignaled WRITEs posted one at a time (xport_post_send) each
 * ask (16, 18): nothing follows when each leaves. Every WRITE lands and
 * every WR completes, with CQEs for the signaled ones only.
 */
START_TEST(test_ackreq_unsignaled)
{
	static const uint32_t want[] = {5, 9, 10, 12, 14, 16, 18};
	static const uint32_t flags[] = {0, 0, UROCE_SEND_SIGNALED, 0, 0};
	struct xport_wqe w;
	uint32_t len = 1500, n = 0;

	env = fake_env_new(12, UROCE_QPT_RC, NULL);
	fake_pattern(env->ma->buf, 16 * 2048, 12);
	fake_pattern(env->mb->buf + 14 * 2048, 100, 13);
	for (unsigned i = 0; i < 5; i++) {
		fake_wqe(&w, 1 + i, UROCE_WR_RDMA_WRITE, flags[i], env->ma, i * 2048, len);
		fake_wqe_remote(&w, env->mb, i * 2048);
		ck_assert_int_eq(xport_post_send_queue(&env->qa->x, &w), 0);
	}
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 0);
	xport_post_send_run(&env->qa->x);
	fake_run(&env->net, 1000);
	fake_wqe(&w, 6, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 5 * 2048, 100);
	fake_wqe_remote(&w, env->mb, 14 * 2048);
	ck_assert_int_eq(xport_post_send_queue(&env->qa->x, &w), 0);
	for (unsigned i = 6; i < 8; i++) {
		fake_wqe(&w, 1 + i, UROCE_WR_RDMA_WRITE, i == 7 ? UROCE_SEND_FENCE : 0, env->ma,
			 i * 2048, len);
		fake_wqe_remote(&w, env->mb, i * 2048);
		ck_assert_int_eq(xport_post_send_queue(&env->qa->x, &w), 0);
	}
	xport_post_send_run(&env->qa->x);
	fake_run(&env->net, 1000);
	for (unsigned i = 8; i < 10; i++) {
		fake_wqe(&w, 1 + i, UROCE_WR_RDMA_WRITE, 0, env->ma, i * 2048, len);
		fake_wqe_remote(&w, env->mb, i * 2048);
		ck_assert_int_eq(fake_post(env->qa, &w), 0);
	}
	fake_run(&env->net, 1000);

	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 19);
	for (uint32_t i = 0; i < 19; i++) {
		bool ack = n < sizeof(want) / sizeof(want[0]) && i == want[n];

		ck_assert_uint_eq(pkt_at(0, i)->psn, psn(env->conn.psn_a, i));
		ck_assert_msg(pkt_at(0, i)->ackreq == ack, "PSN +%u AckReq %d", i,
			      pkt_at(0, i)->ackreq);
		n += ack;
	}
	/* The fenced WRITE left only after the READ's response. */
	ck_assert_uint_eq(pkt_at(0, 13)->opcode, WIRE_OP_RC_RDMA_WRITE_FIRST);
	for (unsigned i = 0; i < 10; i++)
		if (i != 5)
			ck_assert_mem_eq(env->mb->buf + i * 2048, env->ma->buf + i * 2048, len);
	ck_assert_mem_eq(env->ma->buf + 5 * 2048, env->mb->buf + 14 * 2048, 100);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[0].wr_id, 3);
	ck_assert_uint_eq(env->qa->scq[1].wr_id, 6);
	ck_assert_uint_eq(env->qa->x.comp.idx, env->qa->x.sq_tail);
	assert_no_drops();
}
END_TEST

/*
 * The first burst of a large message is paced also after a quiet spell:
 * on a timed network (50 us one way) a 200-packet SEND opens the window to
 * 128; after 20 ms with nothing outstanding (longer than the adaptive
 * timeout) the next 200-packet SEND starts again with XPORT_CWND_INIT
 * packets, which is all that goes out before the first ACK can be back.
 * Each burst reads the clock for the packets that need the time (the one
 * that starts it after a quiet spell, the AckReq packet timed), not for
 * each packet (clock_gettime is 30 ns or more, and a stream sends hundreds
 * of thousands of packets a second).
 */
START_TEST(test_first_burst_after_idle)
{
	struct fake_link l = {.delay_us = 50};
	struct fake_conn c;
	struct xport_wqe w;
	uint32_t len = 200 * 256;
	unsigned before;
	uint64_t reads;

	fake_conn_defaults(&c);
	c.mtu = 1;
	env = fake_env_new(11, UROCE_QPT_RC, &c);
	fake_net_timed(&env->net, &l, &l);
	fake_post_recv(env->qb, 1, env->mb, 0, len);
	fake_post_recv(env->qb, 2, env->mb, len, len);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, len);
	reads = env->a.clock_reads;
	fake_post(env->qa, &w);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), XPORT_CWND_INIT);
	ck_assert_uint_le(env->a.clock_reads - reads, 3);
	fake_run(&env->net, 10000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qa->x.cc.cwnd, XPORT_MAX_UNACKED_PSNS);
	env->net.now += 20000;
	before = fake_count(&env->net, 0, -1);
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, len);
	reads = env->a.clock_reads;
	fake_post(env->qa, &w);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1) - before, XPORT_CWND_INIT);
	ck_assert_uint_le(env->a.clock_reads - reads, 3);
	fake_run(&env->net, 10000);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_mem_eq(env->mb->buf + len, env->ma->buf, len);
	assert_no_drops();
}
END_TEST

START_TEST(test_fence_and_depth)
{
	struct fake_conn c;
	struct xport_wqe w;

	fake_conn_defaults(&c);
	c.max_rd_atomic = 2;
	env = fake_env_new(11, UROCE_QPT_RC, &c);
	for (int i = 0; i < 4; i++) {
		fake_wqe(&w, i, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 100 * i, 100);
		fake_wqe_remote(&w, env->mb, 100 * i);
		fake_post(env->qa, &w);
	}
	fake_post_recv(env->qb, 1, env->mb, 8192, 64);
	fake_wqe(&w, 9, UROCE_WR_SEND, UROCE_SEND_SIGNALED | UROCE_SEND_FENCE, env->ma, 0, 10);
	fake_post(env->qa, &w);
	/* Initiator depth 2: two READs out, the rest (and the fenced SEND) wait. */
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
	fake_deliver_all(&env->net);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_RDMA_READ_REQUEST), 4);
	ck_assert_uint_eq(fake_count(&env->net, 0, WIRE_OP_RC_SEND_ONLY), 1);
	/* The fenced SEND left only after the last READ completed. */
	ck_assert_int_gt(fake_find(&env->net, 0, WIRE_OP_RC_SEND_ONLY, 0),
			 fake_find(&env->net, 1, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 3));
	ck_assert_uint_eq(env->qa->nscq, 5);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_uint_eq(env->qa->scq[i].status, UROCE_WC_SUCCESS);
	assert_no_drops();
}
END_TEST

START_TEST(test_psn_wrap)
{
	struct fake_conn c;
	struct xport_wqe w;

	fake_conn_defaults(&c);
	c.psn_a = 0xfffffe;
	c.psn_b = 0xffffff;
	env = fake_env_new(12, UROCE_QPT_RC, &c);
	fake_pattern(env->ma->buf, 4000, 2);
	fake_pattern(env->mb->buf + 50000, 3000, 3);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 4000);
	fake_post(env->qa, &w);
	fake_wqe(&w, 2, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, env->ma, 10000, 3000);
	fake_wqe_remote(&w, env->mb, 50000);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(pkt_at(0, 0)->psn, 0xfffffe);
	ck_assert_uint_eq(pkt_at(0, 1)->psn, 0xffffff);
	ck_assert_uint_eq(pkt_at(0, 2)->psn, 0);
	ck_assert_uint_eq(pkt_at(0, 3)->psn, 1);
	ck_assert_uint_eq(pkt_at(0, 4)->psn, 2); /* the READ */
	ck_assert_uint_eq(env->qa->x.req.psn, 5);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 4000);
	ck_assert_mem_eq(env->ma->buf + 10000, env->mb->buf + 50000, 3000);
	assert_no_drops();
}
END_TEST

START_TEST(test_both_directions)
{
	struct xport_wqe w;

	env = fake_env_new(13, UROCE_QPT_RC, NULL);
	fake_pattern(env->ma->buf, 5000, 1);
	fake_pattern(env->mb->buf + 500000, 5000, 2);
	for (int i = 0; i < 3; i++) {
		fake_post_recv(env->qa, i, env->ma, 100000 + 8192 * i, 8192);
		fake_post_recv(env->qb, i, env->mb, 100000 + 8192 * i, 8192);
	}
	for (int i = 0; i < 3; i++) {
		fake_wqe(&w, i, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 5000);
		fake_post(env->qa, &w);
		fake_wqe(&w, i, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->mb, 500000, 5000);
		fake_post(env->qb, &w);
	}
	fake_run(&env->net, 10000);
	ck_assert_uint_eq(env->qa->nscq, 3);
	ck_assert_uint_eq(env->qb->nscq, 3);
	ck_assert_uint_eq(env->qa->nrcq, 3);
	ck_assert_uint_eq(env->qb->nrcq, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_mem_eq(env->mb->buf + 100000 + 8192 * i, env->ma->buf, 5000);
		ck_assert_mem_eq(env->ma->buf + 100000 + 8192 * i, env->mb->buf + 500000, 5000);
	}
	assert_no_drops();
}
END_TEST

START_TEST(test_sqd)
{
	struct xport_wqe w;
	struct xport_qp_attr a = {.state = UROCE_QPS_SQD};

	env = fake_env_new(14, UROCE_QPT_RC, NULL);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	fake_post_recv(env->qb, 2, env->mb, 64, 64);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	xport_modify(&env->qa->x, &a, UROCE_QP_STATE);
	/* Posted while draining: waits for RTS. */
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 10);
	fake_post(env->qa, &w);
	ck_assert_uint_eq(env->qa->drained, 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->drained, 1);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 1);
	a.state = UROCE_QPS_RTS;
	xport_modify(&env->qa->x, &a, UROCE_QP_STATE);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qb->nrcq, 2);
}
END_TEST

START_TEST(test_uc)
{
	struct xport_wqe w;

	env = fake_env_new(15, UROCE_QPT_UC, NULL);
	fake_pattern(env->ma->buf, 3000, 4);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 3000);
	fake_post(env->qa, &w);
	/* UC completes as soon as the last packet is out. */
	ck_assert_uint_eq(env->qa->nscq, 1);
	fake_wqe(&w, 2, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, env->ma, 0, 1500);
	fake_wqe_remote(&w, env->mb, 10000);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 5);
	ck_assert_uint_eq(pkt_at(0, 0)->opcode, WIRE_OP_UC_SEND_FIRST);
	ck_assert_uint_eq(pkt_at(0, 2)->opcode, WIRE_OP_UC_SEND_LAST);
	ck_assert(!pkt_at(0, 2)->ackreq);
	ck_assert_uint_eq(pkt_at(0, 3)->opcode, WIRE_OP_UC_RDMA_WRITE_FIRST);
	ck_assert_uint_eq(fake_count(&env->net, 1, -1), 0);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 3000);
	ck_assert_mem_eq(env->mb->buf + 10000, env->ma->buf, 1500);
	ck_assert_uint_eq(env->qa->nscq, 2);
	ck_assert_uint_eq(env->qa->timer, 0);
	assert_no_drops();
}
END_TEST

START_TEST(test_uc_loss_drops_message)
{
	struct xport_wqe w;

	env = fake_env_new(16, UROCE_QPT_UC, NULL);
	fake_pattern(env->ma->buf, 3000, 4);
	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 1, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 3000);
	env->net.drop_pm = 0;
	fake_post(env->qa, &w);
	/* Lose the middle packet of the first message. */
	{
		struct fake_inflight *f = &env->net.q[(env->net.qhead + 1) % env->net.qcap];

		f->buf[0] = 0xff; /* corrupt the opcode: the ICRC catches it */
	}
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 500);
	fake_post(env->qa, &w);
	fake_run(&env->net, 1000);
	/* The first message is gone, the second lands in the same receive WQE. */
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 500);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 500);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_ICRC], 1);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_UC_MSG], 1);
}
END_TEST

START_TEST(test_ud)
{
	static const uint8_t ipa[4] = {10, 0, 0, 1}, ipb[4] = {10, 0, 0, 2};
	struct fake_net net;
	struct fake_host a, b;
	struct fake_qp *qa, *qb;
	struct fake_mr *ma, *mb;
	struct xport_qp_attr at = {0};
	struct xport_wqe w;
	uint64_t grh_ip;

	fake_net_init(&net, 17);
	fake_host_init(&a, &net, 0, ipa);
	fake_host_init(&b, &net, 1, ipb);
	qa = fake_qp_create(&a, UROCE_QPT_UD, 0x31, 16, true);
	qb = fake_qp_create(&b, UROCE_QPT_UD, 0x32, 16, true);
	ma = fake_mr_reg(&a, 8192, FAKE_ALL_ACCESS);
	mb = fake_mr_reg(&b, 8192, FAKE_ALL_ACCESS);
	at.state = UROCE_QPS_INIT;
	at.qkey = 0x11111111;
	at.pkey = 0xffff;
	xport_modify(&qa->x, &at, UROCE_QP_STATE | UROCE_QP_QKEY | UROCE_QP_PKEY_INDEX);
	xport_modify(&qb->x, &at, UROCE_QP_STATE | UROCE_QP_QKEY | UROCE_QP_PKEY_INDEX);
	at.state = UROCE_QPS_RTR;
	xport_modify(&qa->x, &at, UROCE_QP_STATE);
	xport_modify(&qb->x, &at, UROCE_QP_STATE);
	at.state = UROCE_QPS_RTS;
	xport_modify(&qa->x, &at, UROCE_QP_STATE);

	fake_pattern(ma->buf, 1000, 8);
	fake_post_recv(qb, 3, mb, 0, 2000);
	fake_wqe(&w, 1, UROCE_WR_SEND_WITH_IMM, 0, ma, 0, 1000);
	memcpy(w.ud_av.sgid, a.gid, 16);
	memcpy(w.ud_av.dgid, b.gid, 16);
	w.ud_av.hop_limit = 64;
	w.ud_remote_qpn = 0x32;
	w.ud_remote_qkey = 0x11111111;
	w.imm_data = 42;
	xport_post_send(&qa->x, &w);
	ck_assert_uint_eq(qa->nscq, 1);
	fake_run(&net, 100);
	ck_assert_uint_eq(fake_count(&net, 0, -1), 1);
	ck_assert_uint_eq(net.log[0].opcode, WIRE_OP_UD_SEND_ONLY_IMM);
	ck_assert_uint_eq(net.log[0].qpn, 0x32);
	ck_assert_uint_eq(qb->nrcq, 1);
	ck_assert_uint_eq(qb->rcq[0].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(qb->rcq[0].byte_len, 1040);
	ck_assert_uint_eq(qb->rcq[0].src_qp, 0x31);
	ck_assert_uint_eq(qb->rcq[0].wc_flags, UROCE_WC_GRH | UROCE_WC_WITH_IMM);
	/* sl: the packet came in an IPv4 header (A17.4.5.1; mlx5's code). */
	ck_assert_uint_eq(qb->rcq[0].sl, UROCE_CQE_L3_IPV4);
	ck_assert_uint_eq(qb->rcq[0].imm_data, 42);
	/* GRH: IPv4 header in its second 20 bytes. */
	ck_assert_uint_eq(mb->buf[20], 0x45);
	ck_assert_mem_eq(mb->buf + 32, ipa, 4);
	ck_assert_mem_eq(mb->buf + 36, ipb, 4);
	memcpy(&grh_ip, mb->buf, 8);
	ck_assert_uint_eq(grh_ip, 0);
	ck_assert_mem_eq(mb->buf + 40, ma->buf, 1000);

	/* Wrong Q_Key: dropped and counted on the QP. */
	fake_post_recv(qb, 4, mb, 4096, 2000);
	w.ud_remote_qkey = 0x22222222;
	xport_post_send(&qa->x, &w);
	fake_run(&net, 100);
	ck_assert_uint_eq(qb->nrcq, 1);
	ck_assert_uint_eq(qb->x.drops[XPORT_DROP_BAD_QKEY], 1);

	/* Longer than the (UD) MTU: completed without a packet, as rxe does. */
	fake_wqe(&w, 5, UROCE_WR_SEND, 0, ma, 0, 4097);
	w.ud_remote_qkey = 0x11111111;
	xport_post_send(&qa->x, &w);
	ck_assert_uint_eq(qa->nscq, 3);
	ck_assert_uint_eq(qa->scq[2].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(qa->x.cnt[XPORT_CNT_UD_OVERSIZE], 1);
	ck_assert_uint_eq(fake_count(&net, 0, -1), 2);

	/* A WR's Q_Key with the high bit set sends the QP's own (IBA 10.2.5):
	 * 0x80000000 is not on the wire, 0x11111111 is, and it is taken. */
	fake_post_recv(qb, 6, mb, 4096, 2000);
	fake_wqe(&w, 6, UROCE_WR_SEND, 0, ma, 0, 100);
	memcpy(w.ud_av.sgid, a.gid, 16);
	memcpy(w.ud_av.dgid, b.gid, 16);
	w.ud_av.hop_limit = 64;
	w.ud_remote_qpn = 0x32;
	w.ud_remote_qkey = 0x80000000u;
	xport_post_send(&qa->x, &w);
	fake_run(&net, 100);
	ck_assert_uint_eq(fake_count(&net, 0, -1), 3);
	ck_assert_uint_eq(qb->nrcq, 2);
	ck_assert_uint_eq(qb->rcq[1].status, UROCE_WC_SUCCESS);
	ck_assert_uint_eq(qb->rcq[1].byte_len, 140);
	ck_assert_uint_eq(qb->x.drops[XPORT_DROP_BAD_QKEY], 1);
	fake_host_fini(&a);
	fake_host_fini(&b);
	fake_net_fini(&net);
}
END_TEST

START_TEST(test_sq_ring)
{
	struct fake_qp *q;
	struct xport_wqe w;
	unsigned posted = 0;

	env = fake_env_new(18, UROCE_QPT_RC, NULL);
	/* A second pair with a 3-deep send queue whose indices are about to wrap. */
	q = fake_qp_create(&env->a, UROCE_QPT_RC, 0x12, 3, true);
	{
		struct fake_qp *peer = fake_qp_create(&env->b, UROCE_QPT_RC, 0x23, 3, false);

		fake_connect(q, peer, &env->conn);
		for (int i = 0; i < 40; i++)
			fake_post_recv(peer, i, env->mb, 64 * i, 64);
	}
	q->x.sq_tail = q->x.comp.idx = q->x.req.idx = q->x.req.hw_idx = 0xfffffff0u;
	ck_assert_uint_eq(xport_sq_free(&q->x), 3);
	while (posted < 40) {
		int rc;

		fake_wqe(&w, posted, UROCE_WR_SEND, 0, env->ma, posted, 1);
		rc = fake_post(q, &w);
		if (rc == -EAGAIN) {
			ck_assert_uint_eq(xport_sq_free(&q->x), 0);
			fake_run(&env->net, 1000);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		posted++;
	}
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(q->nscq, 40);
	for (unsigned i = 0; i < 40; i++) {
		ck_assert_uint_eq(q->scq[i].wr_id, i);
		ck_assert_uint_eq(q->scq[i].status, UROCE_WC_SUCCESS);
	}
	ck_assert_uint_eq(env->b.qp[1]->nrcq, 40);
	ck_assert_uint_eq(q->x.sq_tail, 0xfffffff0u + 40);
	assert_no_drops();
}
END_TEST

/* The engine's copy of a WR holds what the QP allows, and no more. */
START_TEST(test_sq_copy_caps)
{
	struct fake_qp *q, *peer;
	struct xport_wqe w;

	env = fake_env_new(19, UROCE_QPT_RC, NULL);
	q = fake_qp_create_caps(&env->a, UROCE_QPT_RC, 0x12, 4, true, 2, 16);
	peer = fake_qp_create(&env->b, UROCE_QPT_RC, 0x23, 4, false);
	fake_connect(q, peer, &env->conn);
	/* A slot: the WR's fixed part and two SGEs, not 32 SGEs or 256 bytes. */
	ck_assert_uint_lt(q->x.sq_stride, env->qa->x.sq_stride / 2);
	fake_pattern(env->ma->buf, 64, 20);
	fake_post_recv(peer, 1, env->mb, 0, 64);
	fake_post_recv(peer, 2, env->mb, 64, 64);
	/* Two SGEs and 16 inline bytes fit and arrive whole... */
	fake_wqe(&w, 1, UROCE_WR_SEND, 0, env->ma, 0, 10);
	w.num_sge = 2;
	w.sge[1] = w.sge[0];
	w.sge[1].addr += 10;
	w.sge[1].length = 20;
	ck_assert_int_eq(fake_post(q, &w), 0);
	fake_wqe(&w, 2, UROCE_WR_SEND, UROCE_SEND_INLINE, NULL, 0, 0);
	w.inline_len = 16;
	memcpy(w.inline_data, env->ma->buf + 30, 16);
	ck_assert_int_eq(fake_post(q, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(q->nscq, 2);
	ck_assert_uint_eq(q->scq[1].status, UROCE_WC_SUCCESS);
	ck_assert_mem_eq(env->mb->buf, env->ma->buf, 30);
	ck_assert_mem_eq(env->mb->buf + 64, env->ma->buf + 30, 16);
	/* ...a third SGE fails as a bad WQE, 17 inline bytes as too long. */
	fake_wqe(&w, 3, UROCE_WR_SEND, 0, env->ma, 0, 1);
	w.num_sge = 3;
	w.sge[1] = w.sge[2] = w.sge[0];
	ck_assert_int_eq(fake_post(q, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(q->nscq, 3);
	ck_assert_uint_eq(q->scq[2].status, UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_int_eq(q->x.attr.state, UROCE_QPS_ERR);
	q = fake_qp_create_caps(&env->a, UROCE_QPT_RC, 0x13, 4, true, 2, 16);
	peer = fake_qp_create(&env->b, UROCE_QPT_RC, 0x24, 4, false);
	fake_connect(q, peer, &env->conn);
	fake_wqe(&w, 4, UROCE_WR_SEND, UROCE_SEND_INLINE, NULL, 0, 0);
	w.inline_len = 17;
	ck_assert_int_eq(fake_post(q, &w), 0);
	fake_run(&env->net, 1000);
	ck_assert_uint_eq(q->nscq, 1);
	ck_assert_uint_eq(q->scq[0].status, UROCE_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(fake_count(&env->net, 0, -1), 2);
}
END_TEST

static Suite *rc_suite(void)
{
	Suite *s = suite_create("rc");
	TCase *tc = tcase_create("ops");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_send_every_mtu);
	tcase_add_test(tc, test_send_imm_solicited);
	tcase_add_test(tc, test_write);
	tcase_add_test(tc, test_prof_icrc);
	tcase_add_test(tc, test_write_imm);
	tcase_add_test(tc, test_read_multi);
	tcase_add_test(tc, test_read_zero_and_only);
	tcase_add_test(tc, test_atomics);
	tcase_add_test(tc, test_atomic_write);
	tcase_add_test(tc, test_atomic_write_errors);
	tcase_add_test(tc, test_flush);
	tcase_add_test(tc, test_flush_depth);
	tcase_add_test(tc, test_flush_errors);
	tcase_add_test(tc, test_flush_bad_wr);
	tcase_add_test(tc, test_flush_bad_feth);
	tcase_add_test(tc, test_inline);
	tcase_add_test(tc, test_multi_sge);
	tcase_add_test(tc, test_folded_icrc_same_bytes);
	tcase_add_test(tc, test_signaling);
	tcase_add_test(tc, test_ackreq_window);
	tcase_add_test(tc, test_ackreq_unsignaled);
	tcase_add_test(tc, test_ack_coalescing);
	tcase_add_test(tc, test_ack_coalescing_reset);
	tcase_add_test(tc, test_rnr_hold);
	tcase_add_test(tc, test_first_burst_after_idle);
	tcase_add_test(tc, test_fence_and_depth);
	tcase_add_test(tc, test_psn_wrap);
	tcase_add_test(tc, test_both_directions);
	tcase_add_test(tc, test_sqd);
	tcase_add_test(tc, test_uc);
	tcase_add_test(tc, test_uc_loss_drops_message);
	tcase_add_test(tc, test_ud);
	tcase_add_test(tc, test_sq_ring);
	tcase_add_test(tc, test_sq_copy_caps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
