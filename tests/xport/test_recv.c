/* SPDX-License-Identifier: MIT */
/*
 * The receive-side checks (PROTOCOL.md section 10) with hand-built packets:
 * every drop reason is provoked once and counted on the device and, where
 * the QP is known, on the QP; the ICRC catches a flipped bit anywhere but
 * in the masked BTH byte 4; IPv4 ID recovery is opt-in; a multicast UD
 * SEND reaches each attached QP once, under each one's own checks.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <wire/bth.h>
#include <wire/icrc.h>
#include <wire/opcode.h>
#include "fake.h"

static struct fake_env *env;

static void teardown(void)
{
	if (env)
		fake_env_free(env);
	env = NULL;
}

static void setup(void)
{
	env = fake_env_new(3, UROCE_QPT_RC, NULL);
}

/* Build a packet BTH..pad (no ICRC) with paylen payload bytes; returns its length. */
static size_t build(uint8_t *buf, uint8_t opcode, uint32_t qpn, uint32_t psn, uint16_t pkey,
		    uint32_t paylen)
{
	const struct wire_opcode_info *info = wire_opcode_info(opcode);
	struct wire_bth *b = (struct wire_bth *)buf;
	size_t hdr = info ? info->hdr_bytes : WIRE_BTH_BYTES;
	uint32_t pad = (0u - paylen) & 3;

	memset(buf, 0, hdr + paylen + pad + 4);
	wire_bth_set_opcode(b, opcode);
	wire_bth_set_padcnt(b, pad);
	wire_bth_set_pkey(b, pkey);
	wire_bth_set_destqp(b, qpn);
	wire_bth_set_ackreq(b, 1);
	wire_bth_set_psn(b, psn);
	fake_pattern(buf + hdr, paylen, paylen);
	return hdr + paylen + pad;
}

static void route(struct xport_route *rt, const struct fake_host *from, const struct fake_host *to)
{
	memset(rt, 0, sizeof(*rt));
	memcpy(rt->sgid, from->gid, 16);
	memcpy(rt->dgid, to->gid, 16);
	rt->sport = 0xc123;
	rt->dport = XPORT_ROCE_PORT;
	rt->hop_limit = 64;
}

/* Append the right ICRC for rt and hand the packet to B. */
static void inject_rt(const struct xport_route *rt, uint8_t *buf, size_t ib_len)
{
	wire_icrc_put(buf + ib_len, xport__icrc(rt, buf, ib_len));
	xport_recv_packet(&env->b.dev, rt, buf, ib_len + 4);
}

static void inject(uint8_t *buf, size_t ib_len)
{
	struct xport_route rt;

	route(&rt, &env->a, &env->b);
	inject_rt(&rt, buf, ib_len);
}

static uint64_t drops_total(const uint64_t *d)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < XPORT_DROP_COUNT; i++)
		n += d[i];
	return n;
}

START_TEST(test_good_packet_accepted)
{
	uint8_t buf[256];
	size_t n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 5);

	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	inject(buf, n);
	ck_assert_uint_eq(drops_total(env->b.dev.drops), 0);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->rcq[0].byte_len, 5);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_RX_PKTS], 1);
}
END_TEST

START_TEST(test_icrc_every_byte)
{
	uint8_t buf[256], copy[256];
	struct xport_route rt;
	size_t n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 13);
	uint64_t bad = 0;

	route(&rt, &env->a, &env->b);
	wire_icrc_put(buf + n, xport__icrc(&rt, buf, n));
	for (size_t i = 0; i < n + 4; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(copy, buf, n + 4);
			copy[i] ^= (uint8_t)(1u << bit);
			xport_recv_packet(&env->b.dev, &rt, copy, n + 4);
			/* Byte 4 (FECN, BECN, resv6) is outside the ICRC (IBA 7.8.1). */
			if (i != 4)
				bad++;
			ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_ICRC], bad);
		}
	}
	/* The path is covered too: another source port or address fails. */
	rt.sport++;
	xport_recv_packet(&env->b.dev, &rt, buf, n + 4);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_ICRC], bad + 1);
	/* ICRC drops happen before the QP is known. */
	ck_assert_uint_eq(drops_total(env->qb->x.drops) - env->qb->x.drops[XPORT_DROP_RNR] -
			      env->qb->x.drops[XPORT_DROP_OUT_OF_SEQ],
			  0);
}
END_TEST

START_TEST(test_structural_drops)
{
	uint8_t buf[256];
	size_t n;

	/* Shorter than BTH + ICRC. */
	memset(buf, 0, sizeof(buf));
	xport_recv_packet(&env->b.dev, NULL, buf, 10);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_SHORT], 1);
	/* TVer 1 with a good ICRC. */
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 4);
	wire_bth_set_tver((struct wire_bth *)buf, 1);
	inject(buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_TVER], 1);
	/* Unknown opcode, and an RD opcode uroce never speaks. */
	n = build(buf, 0x1f, 0x22, env->conn.psn_a, 0xffff, 0);
	inject(buf, n);
	n = build(buf, 0x44, 0x22, env->conn.psn_a, 0xffff, 0);
	inject(buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_OPCODE], 2);
	/* A RETH opcode cut short. */
	n = build(buf, WIRE_OP_RC_RDMA_WRITE_ONLY, 0x22, env->conn.psn_a, 0xffff, 0);
	inject(buf, WIRE_BTH_BYTES + 8);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_SHORT], 2);
	/* Pad count larger than the payload. */
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 0);
	wire_bth_set_padcnt((struct wire_bth *)buf, 3);
	inject(buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_PAD], 1);
	/* A SEND First that is not one path MTU long. */
	n = build(buf, WIRE_OP_RC_SEND_FIRST, 0x22, env->conn.psn_a, 0xffff, 100);
	inject(buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_PAD], 2);
	ck_assert_uint_eq(drops_total(env->qb->x.drops), 0);
}
END_TEST

START_TEST(test_multicast)
{
	static const uint8_t group[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 3};
	struct xport_qp_attr at = {.qkey = 0x11111111, .pkey = 0xffff};
	struct fake_qp *q[3];
	struct xport_route rt;
	uint8_t buf[256];
	size_t n;

	memcpy(env->b.mcast_gid, group, 16);
	for (int i = 0; i < 3; i++) {
		q[i] = fake_qp_create(&env->b, UROCE_QPT_UD, 0x41 + (uint32_t)i, 16, false);
		at.state = UROCE_QPS_INIT;
		at.qkey = i == 1 ? 0x22222222 : 0x11111111;
		xport_modify(&q[i]->x, &at, UROCE_QP_STATE | UROCE_QP_QKEY | UROCE_QP_PKEY_INDEX);
		at.state = UROCE_QPS_RTR;
		xport_modify(&q[i]->x, &at, UROCE_QP_STATE);
		fake_post_recv(q[i], 1, env->mb, 4096 * (size_t)(i + 1), 2000);
	}
	q[0]->mcast = q[1]->mcast = true; /* q[1] with another Q_Key, q[2] not attached */
	route(&rt, &env->a, &env->b);
	memcpy(rt.dgid, group, 16);
	n = build(buf, WIRE_OP_UD_SEND_ONLY, 0xffffff, 0, 0xffff, 12);
	wire_deth_set_qkey((struct wire_deth *)(buf + WIRE_BTH_BYTES), 0x11111111);
	wire_deth_set_srcqp((struct wire_deth *)(buf + WIRE_BTH_BYTES), 0x99);
	inject_rt(&rt, buf, n);
	ck_assert_uint_eq(env->b.mcast_calls, 1);
	ck_assert_uint_eq(q[0]->nrcq, 1);
	ck_assert_uint_eq(q[0]->rcq[0].byte_len, 40 + 12);
	ck_assert_uint_eq(q[0]->rcq[0].src_qp, 0x99);
	ck_assert_uint_eq(q[1]->nrcq, 0);
	ck_assert_uint_eq(q[1]->x.drops[XPORT_DROP_BAD_QKEY], 1);
	ck_assert_uint_eq(q[2]->nrcq, 0);
	ck_assert_uint_eq(drops_total(q[2]->x.drops), 0);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_MULTICAST], 0);
	/* To a group, but not to QP 0xFFFFFF; an RC opcode to the group. */
	n = build(buf, WIRE_OP_UD_SEND_ONLY, 0x41, 0, 0xffff, 12);
	wire_deth_set_qkey((struct wire_deth *)(buf + WIRE_BTH_BYTES), 0x11111111);
	inject_rt(&rt, buf, n);
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0xffffff, 0, 0xffff, 12);
	inject_rt(&rt, buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_MULTICAST], 2);
	ck_assert_uint_eq(env->b.mcast_calls, 1);
	ck_assert_uint_eq(q[0]->nrcq, 1);
}
END_TEST

START_TEST(test_qp_drops)
{
	uint8_t buf[256];
	struct xport_route rt;
	struct fake_qp *idle;
	struct xport_qp_attr a = {.state = UROCE_QPS_INIT, .pkey = 0xffff};
	size_t n;

	/* Unknown QP, QP 0, multicast. */
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x99, 0, 0xffff, 4);
	inject(buf, n);
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0, 0, 0xffff, 4);
	inject(buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_NO_QP], 2);
	n = build(buf, WIRE_OP_UD_SEND_ONLY, 0xffffff, 0, 0xffff, 4);
	inject(buf, n); /* QP 0xFFFFFF to a unicast GID */
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_MULTICAST], 1);
	ck_assert_uint_eq(env->b.mcast_calls, 0);
	/* UC opcode to an RC QP. */
	n = build(buf, WIRE_OP_UC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 4);
	inject(buf, n);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_QP_TYPE], 1);
	/* A QP still in INIT takes nothing. */
	idle = fake_qp_create(&env->b, UROCE_QPT_RC, 0x33, 16, false);
	xport_modify(&idle->x, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX);
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x33, 0, 0xffff, 4);
	inject(buf, n);
	ck_assert_uint_eq(idle->x.drops[XPORT_DROP_QP_STATE], 1);
	/* Another peer than the QP's address vector. */
	route(&rt, &env->a, &env->b);
	rt.sgid[15] = 9;
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 4);
	inject_rt(&rt, buf, n);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_BAD_ADDR], 1);
	/* P_Key of another partition; a limited member of ours is fine. */
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0x8123, 4);
	inject(buf, n);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_BAD_PKEY], 1);
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0x7fff, 4);
	inject(buf, n);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	/* A CNP is counted, not acted on. */
	n = build(buf, WIRE_OP_CNP, 0x22, 0, 0xffff, 0);
	inject(buf, n);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_CNP], 1);
	/* Device totals include every per-QP drop. */
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_QP_TYPE], 1);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_PKEY], 1);
	ck_assert_uint_eq(drops_total(env->b.dev.drops), 8);
}
END_TEST

START_TEST(test_response_state)
{
	uint8_t buf[256];
	struct fake_qp *rtr;
	struct xport_qp_attr a = {.state = UROCE_QPS_INIT, .pkey = 0xffff};
	size_t n;

	/* An ACK for a QP that has not reached RTS is not a response to anything. */
	rtr = fake_qp_create(&env->b, UROCE_QPT_RC, 0x34, 16, false);
	xport_modify(&rtr->x, &a, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX);
	a.state = UROCE_QPS_RTR;
	memcpy(a.av.sgid, env->b.gid, 16);
	memcpy(a.av.dgid, env->a.gid, 16);
	xport_modify(&rtr->x, &a, UROCE_QP_STATE | UROCE_QP_AV);
	n = build(buf, WIRE_OP_RC_ACKNOWLEDGE, 0x34, 0, 0xffff, 0);
	buf[WIRE_BTH_BYTES] = 0x1f;
	inject(buf, n);
	ck_assert_uint_eq(rtr->x.drops[XPORT_DROP_QP_STATE], 1);
	/* An ACK in RTS with nothing outstanding. */
	n = build(buf, WIRE_OP_RC_ACKNOWLEDGE, 0x22, env->conn.psn_b, 0xffff, 0);
	buf[WIRE_BTH_BYTES] = 0x1f;
	inject(buf, n);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_RESP_BAD], 1);
}
END_TEST

/*
 * A connected QP takes packets only from its peer's UDP source port,
 * learned from the first packet that also had the expected PSN: a forger
 * on the peer's address but another port is dropped (bad_sport), before
 * and after its packets were queued, and RESET forgets the port.
 */
START_TEST(test_peer_sport)
{
	uint8_t buf[256];
	struct xport_route rt, forged;
	uint32_t psn = env->conn.psn_a;
	size_t n;

	route(&rt, &env->a, &env->b);
	forged = rt;
	forged.sport = 0xc999;
	ck_assert_uint_eq(env->qb->x.peer_sport, 0);
	/* Beyond the expected PSN from the forger: held, teaches nothing. */
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, psn + 1, 0xffff, 4);
	inject_rt(&forged, buf, n);
	ck_assert_uint_eq(env->qb->x.peer_sport, 0);
	/* The peer's packet at the expected PSN teaches its port... */
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	fake_post_recv(env->qb, 2, env->mb, 64, 64);
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, psn, 0xffff, 5);
	inject_rt(&rt, buf, n);
	ck_assert_uint_eq(env->qb->x.peer_sport, rt.sport);
	ck_assert_uint_eq(env->qb->x.cnt[XPORT_CNT_SPORT_LEARNED], 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	/* ...and the forger's held request is dropped when its turn comes. */
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_BAD_SPORT], 1);
	/* A forged request at the expected PSN: dropped on arrival, no CQE. */
	n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, psn + 1, 0xffff, 6);
	inject_rt(&forged, buf, n);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_BAD_SPORT], 2);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_SPORT], 2);
	ck_assert_uint_eq(env->b.dev.last_drop, XPORT_DROP_BAD_SPORT);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	/* The peer's own next request still lands. */
	inject_rt(&rt, buf, n);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->qb->rcq[1].byte_len, 6);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_BAD_SPORT], 2);
	/* A forged ACK is not the peer's either. */
	n = build(buf, WIRE_OP_RC_ACKNOWLEDGE, 0x22, env->conn.psn_b, 0xffff, 0);
	buf[WIRE_BTH_BYTES] = 0x1f;
	inject_rt(&forged, buf, n);
	ck_assert_uint_eq(env->qb->x.drops[XPORT_DROP_BAD_SPORT], 3);
	/* RESET forgets the peer's port. */
	xport_modify(&env->qb->x, &(struct xport_qp_attr){.state = UROCE_QPS_RESET},
		     UROCE_QP_STATE);
	ck_assert_uint_eq(env->qb->x.peer_sport, 0);
}
END_TEST

/* Two engines learn each other's per-QP source ports from real traffic. */
START_TEST(test_peer_sport_exchange)
{
	struct xport_wqe w;

	fake_post_recv(env->qb, 1, env->mb, 0, 4096);
	fake_wqe(&w, 7, UROCE_WR_SEND, UROCE_SEND_SIGNALED, env->ma, 0, 3000);
	ck_assert_int_eq(fake_post(env->qa, &w), 0);
	fake_run(&env->net, 10000);
	ck_assert_uint_eq(env->qa->nscq, 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(env->qb->x.peer_sport, env->qa->x.sport);
	ck_assert_uint_eq(env->qa->x.peer_sport, env->qb->x.sport);
	ck_assert_uint_eq(
	    env->qa->x.drops[XPORT_DROP_BAD_SPORT] + env->qb->x.drops[XPORT_DROP_BAD_SPORT], 0);
}
END_TEST

START_TEST(test_foreign_ip_id)
{
	uint8_t buf[256];
	struct xport_route rt;
	size_t n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 8);

	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	/* A sender whose kernel used IP ID 0x1234 (rxe style), seen through a UDP socket. */
	route(&rt, &env->a, &env->b);
	rt.ip_id_known = true;
	rt.ip_df = true;
	rt.ip_id = 0x1234;
	wire_icrc_put(buf + n, xport__icrc(&rt, buf, n));
	rt.ip_id_known = false;
	xport_recv_packet(&env->b.dev, &rt, buf, n + 4);
	ck_assert_uint_eq(env->b.dev.drops[XPORT_DROP_BAD_ICRC], 1);
	ck_assert_uint_eq(env->qb->nrcq, 0);
	env->b.dev.icrc_mode = XPORT_ICRC_ANY;
	xport_recv_packet(&env->b.dev, &rt, buf, n + 4);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_ICRC_ID_GUESSED], 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	/* A net layer that saw the real header checks it exactly. */
	rt.ip_id_known = true;
	rt.ip_id = 0x1234;
	env->b.dev.icrc_mode = XPORT_ICRC_ID0;
	wire_bth_set_psn((struct wire_bth *)buf, env->conn.psn_a + 1);
	wire_icrc_put(buf + n, xport__icrc(&rt, buf, n));
	fake_post_recv(env->qb, 2, env->mb, 64, 64);
	xport_recv_packet(&env->b.dev, &rt, buf, n + 4);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(env->b.dev.cnt[XPORT_CNT_ICRC_ID_GUESSED], 1);
}
END_TEST

START_TEST(test_ipv6_path)
{
	uint8_t buf[256];
	struct xport_route rt;
	size_t n = build(buf, WIRE_OP_RC_SEND_ONLY, 0x22, env->conn.psn_a, 0xffff, 8);
	struct xport_qp_attr a;

	/* Re-point the QP at IPv6 addresses. */
	memset(&a, 0, sizeof(a));
	a.av.sgid[0] = 0xfe;
	a.av.sgid[1] = 0x80;
	a.av.sgid[15] = 2;
	a.av.dgid[0] = 0xfe;
	a.av.dgid[1] = 0x80;
	a.av.dgid[15] = 1;
	xport_modify(&env->qb->x, &a, UROCE_QP_AV);
	memset(&rt, 0, sizeof(rt));
	memcpy(rt.sgid, a.av.dgid, 16);
	memcpy(rt.dgid, a.av.sgid, 16);
	rt.sport = 0xc000;
	rt.dport = XPORT_ROCE_PORT;
	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	inject_rt(&rt, buf, n);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	ck_assert_uint_eq(drops_total(env->b.dev.drops), 0);
	/* The IPv6 ICRC differs from the IPv4 one of the same bytes. */
	ck_assert_uint_ne(wire_icrc_get(buf + n),
			  wire_icrc_udp4(rt.sgid + 12, rt.dgid + 12, rt.sport, rt.dport, buf, n));
}
END_TEST

static Suite *recv_suite(void)
{
	Suite *s = suite_create("recv");
	TCase *tc = tcase_create("checks");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_good_packet_accepted);
	tcase_add_test(tc, test_icrc_every_byte);
	tcase_add_test(tc, test_structural_drops);
	tcase_add_test(tc, test_qp_drops);
	tcase_add_test(tc, test_multicast);
	tcase_add_test(tc, test_response_state);
	tcase_add_test(tc, test_peer_sport);
	tcase_add_test(tc, test_peer_sport_exchange);
	tcase_add_test(tc, test_foreign_ip_id);
	tcase_add_test(tc, test_ipv6_path);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(recv_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
