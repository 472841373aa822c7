/* SPDX-License-Identifier: MIT */
/*
 * Tests of wire/decode.h: the vectors decode with a good ICRC, every single
 * bit flip in a covered byte is caught, variant bytes are ignored, and a
 * malformed packet still gets its ICRC computed.
 */
#include <string.h>
#include <wire/wire.h>

#include "suites.h"
#include "vectors.h"

START_TEST(test_decode_vectors)
{
	struct wire_decoded d;

	ck_assert_int_eq(wire_decode_eth(vec_hello_v4, sizeof(vec_hello_v4), &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	ck_assert_uint_eq(d.icrc_calc, VEC_HELLO_V4_ICRC);
	ck_assert_uint_eq(d.pkt.opcode, WIRE_OP_RC_SEND_ONLY);
	ck_assert_uint_eq(d.pkt.payload_len, 5);
	ck_assert_mem_eq(wire_pkt_payload(&d.pkt), "Hello", 5);
	ck_assert_int_eq(wire_decode_eth(vec_hello_v6, sizeof(vec_hello_v6), &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	ck_assert_uint_eq(d.icrc_calc, VEC_HELLO_V6_ICRC);
	ck_assert_int_eq(wire_decode_ip(vec_hello_v4 + 14, sizeof(vec_hello_v4) - 14, &d),
			 WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	/* something else entirely */
	ck_assert_int_eq(wire_decode_eth((const uint8_t *)"hello", 5, &d), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_UNCHECKED);
}
END_TEST

/* Flip every bit of the IP, UDP and IB bytes: covered ones break the ICRC or the frame. */
START_TEST(test_decode_every_bit_flip)
{
	uint8_t f[sizeof(vec_hello_v4)];
	/* IP offsets whose change is masked: TOS, TTL, IP checksum, UDP checksum, BTH[4] */
	static const size_t masked[] = {1, 8, 10, 11, 26, 27, 32};

	for (size_t i = 14; i < sizeof(f); i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct wire_decoded d;
			enum wire_reason r;
			int is_masked = 0;

			for (size_t k = 0; k < sizeof(masked) / sizeof(masked[0]); k++)
				is_masked |= i - 14 == masked[k];
			memcpy(f, vec_hello_v4, sizeof(f));
			f[i] ^= (uint8_t)(1u << bit);
			r = wire_decode_eth(f, sizeof(f), &d);
			if (is_masked) {
				ck_assert_int_eq(r, WIRE_R_OK);
				ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
			} else {
				/* either the frame is no longer valid RoCEv2, or the ICRC says so
				 */
				ck_assert_msg(r != WIRE_R_OK || d.icrc == WIRE_ICRC_BAD,
					      "flip byte %zu bit %d went unnoticed", i - 14, bit);
			}
		}
	}
}
END_TEST

START_TEST(test_decode_malformed_still_checked)
{
	uint8_t f[sizeof(vec_hello_v4)];
	struct wire_decoded d;

	memcpy(f, vec_hello_v4, sizeof(f));
	f[42] = 0x15; /* reserved opcode */
	ck_assert_int_eq(wire_decode_eth(f, sizeof(f), &d), WIRE_R_UNKNOWN_OPCODE);
	ck_assert_int_eq(d.reason, WIRE_R_UNKNOWN_OPCODE);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_BAD);
	/* a malformed packet whose ICRC matches (built that way by its sender) */
	{
		uint32_t icrc;

		ck_assert_int_eq(wire_icrc_compute(f + 14, 20, sizeof(f) - 14 - 4, &icrc), 0);
		wire_icrc_put(f + sizeof(f) - 4, icrc);
	}
	ck_assert_int_eq(wire_decode_eth(f, sizeof(f), &d), WIRE_R_UNKNOWN_OPCODE);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
}
END_TEST

Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("decode");

	tcase_add_test(tc, test_decode_vectors);
	tcase_add_test(tc, test_decode_every_bit_flip);
	tcase_add_test(tc, test_decode_malformed_still_checked);
	suite_add_tcase(s, tc);
	return s;
}
