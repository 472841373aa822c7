/* SPDX-License-Identifier: MIT */
/*
 * Tests of wire/validate.h and wire/reason.h: one packet per validation
 * reason, every opcode's valid packet accepted, and arbitrary bytes never
 * crash and never give an inconsistent result.
 */
#include <string.h>
#include <wire/wire.h>

#include "pkt_util.h"
#include "suites.h"

static uint8_t buf[8400];

/* Build opcode with payload_len bytes into buf; returns the IB length. */
static size_t mk(uint8_t opcode, size_t payload_len)
{
	struct wire_build b = pkt_fields(opcode);
	uint8_t payload[4096];
	int n;

	memset(payload, 'p', sizeof(payload));
	n = wire_build_ib(buf, sizeof(buf), &b, payload, payload_len);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

static enum wire_reason check(size_t len)
{
	struct wire_pkt pkt;

	return wire_validate(buf, len, &pkt);
}

START_TEST(test_validate_every_opcode_ok)
{
	const struct wire_opcode_info *info = wire_opcode_at((unsigned)_i);
	size_t len = mk(info->opcode, pkt_payload_len(info));
	struct wire_pkt pkt;

	ck_assert_int_eq(wire_validate(buf, len, &pkt), WIRE_R_OK);
	ck_assert_uint_eq(pkt.payload_off + pkt.payload_len + pkt.pad + 4, len);
}
END_TEST

START_TEST(test_validate_reasons)
{
	size_t len;
	struct wire_pkt pkt;

	ck_assert_int_eq(wire_validate(NULL, 100, &pkt), WIRE_R_TOO_SHORT);
	len = mk(WIRE_OP_RC_SEND_ONLY, 0);
	ck_assert_int_eq(check(len), WIRE_R_OK);
	ck_assert_int_eq(check(15), WIRE_R_TOO_SHORT);
	ck_assert_int_eq(check(0), WIRE_R_TOO_SHORT);

	len = mk(WIRE_OP_RC_SEND_ONLY, 8);
	ck_assert_int_eq(check(len - 2), WIRE_R_NOT_MULTIPLE_OF_4);

	len = mk(WIRE_OP_RC_SEND_ONLY, 8);
	buf[1] |= 0x01; /* TVer 1 */
	ck_assert_int_eq(check(len), WIRE_R_BAD_TVER);

	len = mk(WIRE_OP_RC_SEND_ONLY, 8);
	for (unsigned op = 0; op < 256; op++) {
		buf[0] = (uint8_t)op;
		if (!wire_opcode_info((uint8_t)op))
			ck_assert_int_eq(check(len), WIRE_R_UNKNOWN_OPCODE);
	}

	/* WRITE Only needs RETH: 12 + 16 + 4 = 32 bytes at least */
	len = mk(WIRE_OP_RC_RDMA_WRITE_ONLY, 0);
	ck_assert_int_eq(len, 32);
	ck_assert_int_eq(check(28), WIRE_R_SHORT_FOR_OPCODE);
	/* CNP: exactly 16 reserved bytes */
	len = mk(WIRE_OP_CNP, 0);
	ck_assert_int_eq(len, 32);
	ck_assert_int_eq(check(len), WIRE_R_OK);
	ck_assert_int_eq(check(28), WIRE_R_SHORT_FOR_OPCODE);
	memset(buf + 32, 0, 4);
	ck_assert_int_eq(check(36), WIRE_R_LENGTH_FOR_OPCODE);

	/* pad count larger than what follows the headers */
	len = mk(WIRE_OP_RC_SEND_ONLY, 0);
	buf[1] |= 0x30;
	ck_assert_int_eq(check(len), WIRE_R_PAD_INCONSISTENT);

	/* ACK with stray bytes */
	len = mk(WIRE_OP_RC_ACKNOWLEDGE, 0);
	ck_assert_int_eq(check(len), WIRE_R_OK);
	ck_assert_int_eq(check(len + 4), WIRE_R_LENGTH_FOR_OPCODE);
	/* READ request with payload */
	len = mk(WIRE_OP_RC_RDMA_READ_REQUEST, 0);
	ck_assert_int_eq(check(len + 8), WIRE_R_LENGTH_FOR_OPCODE);

	/* First / Middle: exactly a path MTU, no pad */
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_FIRST, 256)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_FIRST, 4096)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_MIDDLE, 1024)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 2048)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_FIRST, 100)), WIRE_R_LENGTH_FOR_OPCODE);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_RDMA_WRITE_MIDDLE, 768)), WIRE_R_LENGTH_FOR_OPCODE);
	ck_assert_int_eq(check(mk(WIRE_OP_UC_SEND_MIDDLE, 0)), WIRE_R_LENGTH_FOR_OPCODE);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_FIRST, 255)), WIRE_R_PAD_INCONSISTENT);
	/* 8192 bytes is no path MTU */
	len = mk(WIRE_OP_RC_SEND_FIRST, 4096);
	memset(buf + 12, 'p', 8192);
	ck_assert_int_eq(check(12 + 8192 + 4), WIRE_R_LENGTH_FOR_OPCODE);

	/* Last with nothing in it */
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_LAST, 1)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_SEND_LAST, 0)), WIRE_R_LENGTH_FOR_OPCODE);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_RDMA_WRITE_LAST_IMM, 0)), WIRE_R_LENGTH_FOR_OPCODE);
	/* Only may be empty */
	ck_assert_int_eq(check(mk(WIRE_OP_RC_RDMA_WRITE_ONLY, 0)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0)), WIRE_R_OK);
	/* Only larger than the largest path MTU */
	len = mk(WIRE_OP_RC_SEND_ONLY, 4096);
	ck_assert_int_eq(check(len + 4), WIRE_R_LENGTH_FOR_OPCODE);
	/* ATOMIC WRITE carries exactly 8 bytes */
	ck_assert_int_eq(check(mk(WIRE_OP_RC_ATOMIC_WRITE, 8)), WIRE_R_OK);
	ck_assert_int_eq(check(mk(WIRE_OP_RC_ATOMIC_WRITE, 16)), WIRE_R_LENGTH_FOR_OPCODE);
}
END_TEST

START_TEST(test_validate_pkt_fields)
{
	size_t len = mk(WIRE_OP_RC_RDMA_WRITE_ONLY_IMM, 13);
	struct wire_pkt pkt;

	ck_assert_int_eq(wire_validate(buf, len, &pkt), WIRE_R_OK);
	ck_assert_ptr_eq(pkt.ib, buf);
	ck_assert_uint_eq(pkt.len, len);
	ck_assert_uint_eq(pkt.opcode, WIRE_OP_RC_RDMA_WRITE_ONLY_IMM);
	ck_assert_uint_eq(pkt.payload_off, 32);
	ck_assert_uint_eq(pkt.payload_len, 13);
	ck_assert_uint_eq(pkt.pad, 3);
	ck_assert_ptr_eq(wire_pkt_payload(&pkt), buf + 32);
	ck_assert_ptr_eq(wire_pkt_reth(&pkt), buf + 12);
	ck_assert_ptr_eq(wire_pkt_immdt(&pkt), buf + 28);
	ck_assert_ptr_null(wire_pkt_aeth(&pkt));
	ck_assert_ptr_null(wire_pkt_deth(&pkt));
	buf[len - 4] = 0x78, buf[len - 3] = 0x56, buf[len - 2] = 0x34, buf[len - 1] = 0x12;
	ck_assert_int_eq(wire_validate(buf, len, &pkt), WIRE_R_OK);
	ck_assert_uint_eq(pkt.icrc, 0x12345678);
	/* a failed validation still says what it knew */
	buf[0] = 0x15;
	ck_assert_int_eq(wire_validate(buf, len, &pkt), WIRE_R_UNKNOWN_OPCODE);
	ck_assert_ptr_null(pkt.info);
	ck_assert_uint_eq(pkt.opcode, 0x15);
	ck_assert_ptr_null(wire_pkt_reth(&pkt));
}
END_TEST

START_TEST(test_validate_pmtu)
{
	ck_assert(wire_is_pmtu(256));
	ck_assert(wire_is_pmtu(512));
	ck_assert(wire_is_pmtu(1024));
	ck_assert(wire_is_pmtu(2048));
	ck_assert(wire_is_pmtu(4096));
	ck_assert(!wire_is_pmtu(0));
	ck_assert(!wire_is_pmtu(128));
	ck_assert(!wire_is_pmtu(1500));
	ck_assert(!wire_is_pmtu(8192));
}
END_TEST

START_TEST(test_reason_names)
{
	for (int r = 0; r < WIRE_R_COUNT; r++) {
		ck_assert_ptr_nonnull(wire_reason_name((enum wire_reason)r));
		ck_assert_uint_gt(strlen(wire_reason_desc((enum wire_reason)r)), 1);
		for (int q = 0; q < r; q++)
			ck_assert_str_ne(wire_reason_name((enum wire_reason)r),
					 wire_reason_name((enum wire_reason)q));
	}
	ck_assert_int_eq(WIRE_R_OK, 0);
	ck_assert_str_eq(wire_reason_name(WIRE_R_OK), "ok");
	ck_assert_str_eq(wire_reason_name(WIRE_R_BAD_TVER), "bad_tver");
	ck_assert_str_eq(wire_reason_desc(WIRE_R_BAD_TVER), "TVer not 0");
	ck_assert_str_eq(wire_reason_desc(WIRE_R_TOO_SHORT), "too short for BTH and ICRC");
	ck_assert_str_eq(wire_reason_name(WIRE_R_COUNT), "invalid");
	ck_assert_str_eq(wire_reason_name((enum wire_reason) - 1), "invalid");
}
END_TEST

/* Arbitrary bytes: the result is always a valid reason and consistent. */
START_TEST(test_validate_random)
{
	uint32_t seed = 0x12345678;
	static uint8_t rnd[300];

	for (int iter = 0; iter < 20000; iter++) {
		size_t len;
		struct wire_pkt pkt;
		enum wire_reason r;

		for (size_t i = 0; i < sizeof(rnd); i++) {
			seed = seed * 1664525u + 1013904223u;
			rnd[i] = (uint8_t)(seed >> 24);
		}
		/* bias towards plausible packets: TVer 0, known opcodes */
		if (iter & 1)
			rnd[1] &= 0xf0;
		if (iter & 2)
			rnd[0] = wire_opcode_at((unsigned)(seed % WIRE_OPCODE_COUNT))->opcode;
		len = (seed >> 4) % sizeof(rnd);
		r = wire_validate(rnd, len, &pkt);
		ck_assert_int_lt(r, WIRE_R_COUNT);
		if (r == WIRE_R_OK) {
			ck_assert_ptr_nonnull(pkt.info);
			ck_assert_uint_eq(pkt.payload_off + pkt.payload_len + pkt.pad + 4, len);
		}
	}
}
END_TEST

Suite *validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("validate");

	tcase_add_loop_test(tc, test_validate_every_opcode_ok, 0, WIRE_OPCODE_COUNT);
	tcase_add_test(tc, test_validate_reasons);
	tcase_add_test(tc, test_validate_pkt_fields);
	tcase_add_test(tc, test_validate_pmtu);
	tcase_add_test(tc, test_reason_names);
	tcase_add_test(tc, test_validate_random);
	suite_add_tcase(s, tc);
	return s;
}
