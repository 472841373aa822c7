/* SPDX-License-Identifier: MIT */
/*
 * The receive ICRC check and the per-sender IPv4 ID tracker (emu/xport/
 * icrc.c), with packets whose ICRCs wire/ computes over a real IPv4 header
 * with a given ID, delivered as a UDP socket would (ID not shown): IDs
 * counting up are accepted, a jump after a pause within the window too, a
 * far ID is rejected and starts a new sequence only when the next packet
 * follows it, the ID wraps at 65535, an ID-0 sender keeps all 32 bits, the
 * table stays bounded under a flood of sources, and the number of IDs any
 * state accepts matches the strength docs/transport.md states.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <wire/gso.h>
#include <wire/bth.h>
#include <wire/icrc.h>
#include <wire/inet.h>
#include <wire/opcode.h>
#include "fake.h"

static struct fake_env *env;
static struct xport_dev *dev;
static size_t paylen = 24; /* payload bytes of the packets pkt() builds */

static void setup(void)
{
	env = fake_env_new(5, UROCE_QPT_RC, NULL);
	dev = &env->b.dev;
	dev->icrc_mode = XPORT_ICRC_TRACKED;
	env->net.now = 1000000;
	paylen = 24;
}

static void teardown(void)
{
	fake_env_free(env);
	env = NULL;
}

/* Packet BTH..ICRC (an RC SEND Only to QP 0x22, paylen payload bytes) sent
 * from src with IPv4 ID `id` and DF; its route as a UDP socket reports it. */
static size_t pkt(uint8_t *buf, const uint8_t src[4], uint16_t id, uint32_t psn,
		  struct xport_route *rt)
{
	struct wire_bth *b = (struct wire_bth *)buf;
	size_t n = WIRE_BTH_BYTES + paylen;

	memset(buf, 0, n + 4);
	wire_bth_set_opcode(b, WIRE_OP_RC_SEND_ONLY);
	wire_bth_set_pkey(b, 0xffff);
	wire_bth_set_destqp(b, 0x22);
	wire_bth_set_psn(b, psn);
	fake_pattern(buf + WIRE_BTH_BYTES, paylen, psn);
	memset(rt, 0, sizeof(*rt));
	memcpy(rt->sgid, env->a.gid, 16);
	memcpy(rt->sgid + 12, src, 4);
	memcpy(rt->dgid, env->b.gid, 16);
	rt->sport = 0xc123;
	rt->dport = XPORT_ROCE_PORT;
	rt->hop_limit = 64;
	wire_icrc_put(buf + n, wire_icrc_end(wire_icrc_add_ib(
				   wire_icrc_begin_udp4(src, env->b.gid + 12, id, WIRE_IPV4_DF,
							rt->sport, rt->dport, n),
				   0, buf, n)));
	return n + 4;
}

static const uint8_t rxe[4] = {10, 0, 0, 1};

/* Is a packet from src with this ID accepted now? */
static bool check(const uint8_t src[4], uint16_t id)
{
	uint8_t buf[4200];
	struct xport_route rt;
	size_t n = pkt(buf, src, id, 7, &rt);

	return xport__recv_icrc_ok(dev, &rt, buf, n);
}

START_TEST(test_window)
{
	ck_assert_uint_eq(xport__idtrack_window(0), 7);
	ck_assert_uint_eq(xport__idtrack_window(999), 7);
	ck_assert_uint_eq(xport__idtrack_window(1000), 8);
	ck_assert_uint_eq(xport__idtrack_window(250000), 257);
	ck_assert_uint_eq(xport__idtrack_window(60000000), 7 + 1024);
}
END_TEST

START_TEST(test_counting_up)
{
	/* First packet of an unknown sender: any ID. */
	ck_assert(check(rxe, 1000));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_FIRST], 1);
	for (uint16_t id = 1001; id <= 1100; id++) {
		env->net.now += 10;
		ck_assert(check(rxe, id));
	}
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 100);
	/* Up to 7 ahead with no pause (lost packets); the same ID again. */
	env->net.now += 10;
	ck_assert(check(rxe, 1107));
	ck_assert(check(rxe, 1107));
	/* 8 ahead with no pause: too far. */
	ck_assert(!check(rxe, 1115));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 102);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 1);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_FIRST], 1);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID0], 0);
}
END_TEST

START_TEST(test_jump_after_idle)
{
	ck_assert(check(rxe, 2000));
	/* 300 ms later Linux may have jumped by up to ~300. */
	env->net.now += 300000;
	ck_assert(check(rxe, 2000 + 250));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 1);
	/* ...but not right after that again. */
	env->net.now += 10;
	ck_assert(!check(rxe, 2250 + 300));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 1);
	/* A jump beyond the 1024 cap after a long pause is rejected... */
	env->net.now += 10000000;
	ck_assert(!check(rxe, 2250 + 5000));
	/* ...and the next packet that follows it starts a new sequence. */
	env->net.now += 10;
	ck_assert(check(rxe, 2250 + 5001));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_RESYNC], 1);
	env->net.now += 10;
	ck_assert(check(rxe, 2250 + 5002));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 2);
}
END_TEST

START_TEST(test_far_rejected_and_dropped)
{
	uint8_t buf[128];
	struct xport_route rt;
	size_t n;

	fake_post_recv(env->qb, 1, env->mb, 0, 64);
	fake_post_recv(env->qb, 2, env->mb, 64, 64);
	/* From the QP's peer address, as a Linux rxe peer sends. */
	n = pkt(buf, env->a.gid + 12, 40000, env->conn.psn_a, &rt);
	xport_recv_packet(dev, &rt, buf, n);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	/* A far ID (a corrupted packet that happened to solve): dropped as
	 * bad ICRC before anything else looks at it. */
	env->net.now += 20;
	n = pkt(buf, env->a.gid + 12, 40000 + 20000, env->conn.psn_a + 1, &rt);
	xport_recv_packet(dev, &rt, buf, n);
	ck_assert_uint_eq(dev->drops[XPORT_DROP_BAD_ICRC], 1);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 1);
	ck_assert_uint_eq(env->qb->nrcq, 1);
	/* The sender's real next packet is still accepted. */
	n = pkt(buf, env->a.gid + 12, 40001, env->conn.psn_a + 1, &rt);
	xport_recv_packet(dev, &rt, buf, n);
	ck_assert_uint_eq(env->qb->nrcq, 2);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 1);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_RESYNC], 0);
}
END_TEST

START_TEST(test_wrap)
{
	ck_assert(check(rxe, 65530));
	for (uint32_t id = 65531; id <= 65535; id++) {
		env->net.now += 5;
		ck_assert(check(rxe, (uint16_t)id));
	}
	/* ID 0 matches the ID-0 check; the sender keeps counting. */
	env->net.now += 5;
	ck_assert(check(rxe, 0));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID0], 1);
	for (uint16_t id = 1; id <= 3; id++) {
		env->net.now += 5;
		ck_assert(check(rxe, id));
	}
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 5 + 3);
	/* Across the wrap without passing 0: 65534 -> 2. */
	ck_assert(check((const uint8_t[4]){10, 0, 0, 9}, 65534));
	env->net.now += 5;
	ck_assert(check((const uint8_t[4]){10, 0, 0, 9}, 2));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 9);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 0);
}
END_TEST

START_TEST(test_id0_sender_keeps_32_bits)
{
	const uint8_t peer[4] = {10, 0, 0, 7};

	/* A uroce peer: ID 0, checked at full strength. */
	for (int i = 0; i < 10; i++) {
		env->net.now += 5;
		ck_assert(check(peer, 0));
	}
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID0], 10);
	/* A packet of it that only matches for another ID (what a corruption
	 * that happens to be solvable looks like) is rejected, even with an
	 * ID close after 0; only the one right after the last accepted ID
	 * passes (below). */
	env->net.now += 5;
	ck_assert(!check(peer, 3));
	env->net.now += 5;
	ck_assert(check(peer, 0));
	env->net.now += 5;
	ck_assert(!check(peer, 2));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 2);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_FIRST], 0);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_GSO], 0);
	/* A GSO datagram of it that the path cut: IDs 0, 1, ..., 14, each one
	 * after the last; no 16th segment; then the next datagram from 0. */
	for (int round = 0; round < 2; round++) {
		env->net.now += 5;
		ck_assert(check(peer, 0));
		for (uint16_t id = 1; id < WIRE_GSO_MAX_SEGS; id++) {
			env->net.now += 5;
			ck_assert_msg(check(peer, id), "segment %u", id);
		}
	}
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_GSO], 2 * (WIRE_GSO_MAX_SEGS - 1));
	env->net.now += 5;
	ck_assert(!check(peer, WIRE_GSO_MAX_SEGS));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 3);
	/* A lost segment: the ones after it no longer follow. */
	env->net.now += 5;
	ck_assert(check(peer, 0));
	env->net.now += 5;
	ck_assert(!check(peer, 2));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 4);
	/* The address now sends counting IDs (rxe took it over): the second
	 * consistent packet starts the sequence. */
	env->net.now += 5;
	ck_assert(!check(peer, 0x4000));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW], 5);
	env->net.now += 5;
	ck_assert(check(peer, 0x4001));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_RESYNC], 1);
	env->net.now += 5;
	ck_assert(check(peer, 0x4002));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 1);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_FIRST], 0);
}
END_TEST

START_TEST(test_bounded_table)
{
	uint8_t src[4] = {172, 16, 0, 0};

	ck_assert(check(rxe, 100));
	/* A flood of 10000 spoofed sources within half a second. */
	for (unsigned i = 0; i < 10000; i++) {
		src[2] = (uint8_t)(i >> 8);
		src[3] = (uint8_t)i;
		env->net.now += 50;
		ck_assert(check(src, (uint16_t)(i * 7 + 1)));
	}
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_FIRST], 10001);
	ck_assert_uint_gt(dev->cnt[XPORT_CNT_ICRC_ID_UNTRACKED], 10000 - XPORT_IDTRACK_SLOTS);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_EVICTED], 0);
	/* The active sender was not pushed out: it is still tracked. */
	ck_assert(check(rxe, 101));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 1);
	ck_assert(!check(rxe, 30000));
	/* A second later idle slots are given to newcomers. */
	env->net.now += 2000000;
	src[0] = 192;
	ck_assert(check(src, 5));
	env->net.now += 5;
	ck_assert(check(src, 6));
	ck_assert_uint_ge(dev->cnt[XPORT_CNT_ICRC_ID_EVICTED], 1);
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 2);
}
END_TEST

/* How many of the 65536 IDs the tracker would accept in a given state. */
static unsigned accepted_ids(const struct xport_idtrack *t, uint64_t now)
{
	unsigned n = 0;

	for (uint32_t id = 1; id <= 0xffff; id++) {
		struct xport_idtrack copy = *t;
		bool ev;
		enum xport_idtrack_verdict v =
		    xport__idtrack_solved(&copy, rxe, (uint16_t)id, now, &ev);

		n += v != XPORT_IDT_REJECT;
	}
	return n;
}

START_TEST(test_strength)
{
	struct xport_idtrack t;
	bool ev;

	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(xport__idtrack_solved(&t, rxe, 500, 1000, &ev), XPORT_IDT_FIRST);
	/*
	 * In a stream: IDs 500..507 (8). With ID 0 (checked first) 9 of 2^32
	 * CRC values pass for a corrupted packet, whose solved ID is uniform.
	 */
	ck_assert_uint_eq(accepted_ids(&t, 1100), 8);
	/* With a candidate pending: 7 more, 16 in all with ID 0: 28 bits. */
	ck_assert_int_eq(xport__idtrack_solved(&t, rxe, 9000, 1200, &ev), XPORT_IDT_REJECT);
	ck_assert_uint_eq(accepted_ids(&t, 1300), 8 + 7);
	/* After a pause of t ms: one more per ms on each side. */
	ck_assert_uint_eq(accepted_ids(&t, 1200 + 100000), (8 + 100) + (7 + 100));
	/* At most (8 + 1024) + (7 + 1024): 2064 with ID 0, >= 20.9 bits. */
	ck_assert_uint_eq(accepted_ids(&t, 1200 + 100000000), (8 + 1024) + (7 + 1024));
	/* An ID-0 sender: besides ID 0 (checked first), only the next GSO
	 * segment's ID: 2 of 2^32 values, 31 bits; after the 15th segment of
	 * a datagram none (32 bits). */
	memset(&t, 0, sizeof(t));
	ck_assert_int_eq(xport__idtrack_solved(&t, rxe, 500, 1000, &ev), XPORT_IDT_FIRST);
	xport__idtrack_zero(&t, rxe, 1100, &ev);
	ck_assert_uint_eq(accepted_ids(&t, 1200), 1);
	for (uint16_t id = 1; id < WIRE_GSO_MAX_SEGS; id++)
		ck_assert_int_eq(xport__idtrack_solved(&t, rxe, id, 1200 + id, &ev), XPORT_IDT_GSO);
	ck_assert_uint_eq(accepted_ids(&t, 1300), 0);
}
END_TEST

START_TEST(test_modes)
{
	uint8_t buf[128];
	struct xport_route rt;
	size_t n;

	/* ID0: a non-zero ID never passes. */
	dev->icrc_mode = XPORT_ICRC_ID0;
	ck_assert(!check(rxe, 77));
	ck_assert(check(rxe, 0));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID0], 1);
	/* ANY: every solved ID passes, counted as guessed. */
	dev->icrc_mode = XPORT_ICRC_ANY;
	ck_assert(check(rxe, 77));
	ck_assert(check(rxe, 40000));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_GUESSED], 2);
	/* A header seen by the net layer is checked exactly, in any mode. */
	n = pkt(buf, rxe, 1234, 9, &rt);
	rt.ip_id_known = true;
	rt.ip_df = true;
	rt.ip_id = 1234;
	ck_assert(xport__recv_icrc_ok(dev, &rt, buf, n));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_EXACT], 1);
	rt.ip_id = 1235;
	ck_assert(!xport__recv_icrc_ok(dev, &rt, buf, n));
	rt.ip_id = 1234;
	rt.ip_df = false;
	ck_assert(!xport__recv_icrc_ok(dev, &rt, buf, n));
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_GUESSED], 2);
	/* A corrupted byte is caught whatever the mode. */
	n = pkt(buf, rxe, 78, 9, &rt);
	buf[WIRE_BTH_BYTES + 3] ^= 0x10;
	dev->icrc_mode = XPORT_ICRC_TRACKED;
	ck_assert(!xport__recv_icrc_ok(dev, &rt, buf, n));
}
END_TEST

START_TEST(test_many_lengths)
{
	/* More packet lengths than the engine keeps solvers for, interleaved:
	 * every ID is still solved right (and no other would pass). */
	static const size_t lens[] = {0, 4, 24, 256, 1024, 4096, 100};
	uint16_t id = 7000;

	ck_assert(check(rxe, id));
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			paylen = lens[i];
			env->net.now += 10;
			ck_assert(check(rxe, ++id));
			ck_assert(!check(rxe, (uint16_t)(id + 100)));
			ck_assert(check(rxe, ++id));
		}
	ck_assert_uint_eq(dev->cnt[XPORT_CNT_ICRC_ID_TRACKED], 3 * 7 * 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("xport_icrc");
	TCase *tc = tcase_create("icrc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_counting_up);
	tcase_add_test(tc, test_jump_after_idle);
	tcase_add_test(tc, test_far_rejected_and_dropped);
	tcase_add_test(tc, test_wrap);
	tcase_add_test(tc, test_id0_sender_keeps_32_bits);
	tcase_add_test(tc, test_bounded_table);
	tcase_add_test(tc, test_strength);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_many_lengths);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
