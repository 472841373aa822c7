/* SPDX-License-Identifier: MIT */
/* Tests of wire/aeth.h: syndrome encode/decode, credit and RNR tables, NAK names. */
#include <wire/aeth.h>

#include "suites.h"

/* PROTOCOL.md 8.1 (rdmavt credit_table, IBA table 45). */
static const int32_t want_credits[32] = {
    0,	 1,   2,   3,	4,    6,    8,	  12,	16,   24,   32,	  48,	 64,	96,    128,   192,
    256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, -1,
};

/* PROTOCOL.md 8.2 in microseconds (IBA table 46; rxe's 61.41 ms typo corrected). */
static const uint32_t want_rnr_usec[32] = {
    655360, 10,	   20,	  30,	 40,	60,	80,	120,	160,	240,	320,
    480,    640,   960,	  1280,	 1920,	2560,	3840,	5120,	7680,	10240,	15360,
    20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

START_TEST(test_aeth_syndrome_roundtrip)
{
	for (unsigned t = 0; t < 4; t++) {
		for (unsigned v = 0; v < 32; v++) {
			uint8_t s = wire_aeth_syndrome((enum wire_aeth_type)t, v);

			ck_assert_uint_eq(s, t << 5 | v);
			ck_assert_uint_eq(wire_aeth_syndrome_type(s), t);
			ck_assert_uint_eq(wire_aeth_syndrome_value(s), v);
		}
	}
	/* known syndromes: rxe ACK 0x1f, NAK PSN 0x60, RNR 1.28 ms 0x2e */
	ck_assert_uint_eq(wire_aeth_syndrome(WIRE_AETH_ACK, WIRE_AETH_CREDITS_INVALID), 0x1f);
	ck_assert_uint_eq(wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR), 0x60);
	ck_assert_uint_eq(wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_REMOTE_OP_ERR), 0x63);
	ck_assert_uint_eq(wire_aeth_syndrome(WIRE_AETH_RNR_NAK, 14), 0x2e);
	/* the reserved bit 7 is ignored when decoding the type */
	ck_assert_uint_eq(wire_aeth_syndrome_type(0xe0), WIRE_AETH_NAK);
	/* out-of-range values are masked, not spilled into the type */
	ck_assert_uint_eq(wire_aeth_syndrome(WIRE_AETH_ACK, 0x3f), 0x1f);
}
END_TEST

START_TEST(test_aeth_credit_table)
{
	for (unsigned c = 0; c < 32; c++)
		ck_assert_int_eq(wire_aeth_credits(c), want_credits[c]);
	ck_assert_int_eq(wire_aeth_credits(32), -1);
	ck_assert_int_eq(wire_aeth_credits(1000), -1);
	/* encode: the largest code not above the count */
	for (unsigned c = 0; c < 31; c++)
		ck_assert_uint_eq(wire_aeth_credit_code((uint32_t)want_credits[c]), c);
	ck_assert_uint_eq(wire_aeth_credit_code(5), 4);
	ck_assert_uint_eq(wire_aeth_credit_code(7), 5);
	ck_assert_uint_eq(wire_aeth_credit_code(1000000), 30);
}
END_TEST

START_TEST(test_aeth_rnr_table)
{
	for (unsigned c = 0; c < 32; c++)
		ck_assert_uint_eq(wire_aeth_rnr_usec(c), want_rnr_usec[c]);
	ck_assert_uint_eq(wire_aeth_rnr_usec(32), 0);
	for (unsigned c = 1; c < 32; c++)
		ck_assert_uint_eq(wire_aeth_rnr_code(want_rnr_usec[c]), c);
	ck_assert_uint_eq(wire_aeth_rnr_code(11), 2);	  /* round up: 20 us */
	ck_assert_uint_eq(wire_aeth_rnr_code(1000), 14);  /* 1.28 ms */
	ck_assert_uint_eq(wire_aeth_rnr_code(500000), 0); /* beyond 491.52 ms: code 0 */
	ck_assert_uint_eq(wire_aeth_rnr_code(655360), 0);
}
END_TEST

START_TEST(test_aeth_names)
{
	ck_assert_str_eq(wire_aeth_nak_name(0), "PSN Sequence Error");
	ck_assert_str_eq(wire_aeth_nak_name(1), "Invalid Request");
	ck_assert_str_eq(wire_aeth_nak_name(2), "Remote Access Error");
	ck_assert_str_eq(wire_aeth_nak_name(3), "Remote Operational Error");
	ck_assert_str_eq(wire_aeth_nak_name(4), "Invalid RD Request");
	ck_assert_str_eq(wire_aeth_nak_name(5), "Reserved");
	ck_assert_str_eq(wire_aeth_nak_name(31), "Reserved");
	ck_assert_str_eq(wire_aeth_type_name(WIRE_AETH_ACK), "ACK");
	ck_assert_str_eq(wire_aeth_type_name(WIRE_AETH_RNR_NAK), "RNR NAK");
	ck_assert_str_eq(wire_aeth_type_name(WIRE_AETH_NAK), "NAK");
	ck_assert_str_eq(wire_aeth_type_name(WIRE_AETH_RESERVED), "Reserved");
}
END_TEST

Suite *aeth_suite(void)
{
	Suite *s = suite_create("aeth");
	TCase *tc = tcase_create("aeth");

	tcase_add_test(tc, test_aeth_syndrome_roundtrip);
	tcase_add_test(tc, test_aeth_credit_table);
	tcase_add_test(tc, test_aeth_rnr_table);
	tcase_add_test(tc, test_aeth_names);
	suite_add_tcase(s, tc);
	return s;
}
