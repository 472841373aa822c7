/* SPDX-License-Identifier: MIT */
/* Tests of wire/crc32.h: the standard check value, slice-by-8 against bytewise. */
#include <stdlib.h>
#include <string.h>
#include <wire/crc32.h>

#include "suites.h"

START_TEST(test_crc32_check_value)
{
	/* The CRC-32/ISO-HDLC check value (zlib crc32 of "123456789"). */
	ck_assert_uint_eq(wire_crc32("123456789", 9), 0xcbf43926u);
	ck_assert_uint_eq(wire_crc32("", 0), 0);
	ck_assert_uint_eq(wire_crc32("a", 1), 0xe8b7be43u);
	ck_assert_uint_eq(wire_crc32("The quick brown fox jumps over the lazy dog", 43),
			  0x414fa339u);
}
END_TEST

/* Every length 0..300 at every alignment 0..7, and split anywhere. */
START_TEST(test_crc32_slice_matches_bytewise)
{
	static uint8_t buf[320];
	uint32_t seed = 12345;

	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (size_t align = 0; align < 8; align++) {
		for (size_t len = 0; len + align <= 300; len++) {
			uint32_t a = wire_crc32_update(WIRE_CRC32_INIT, buf + align, len);
			uint32_t b = wire_crc32_update_bytewise(WIRE_CRC32_INIT, buf + align, len);

			ck_assert_msg(a == b, "align %zu len %zu: 0x%08x != 0x%08x", align, len, a,
				      b);
		}
	}
	for (size_t split = 0; split <= 300; split++) {
		uint32_t whole = wire_crc32_update(WIRE_CRC32_INIT, buf, 300);
		uint32_t part = wire_crc32_update(WIRE_CRC32_INIT, buf, split);

		part = wire_crc32_update(part, buf + split, 300 - split);
		ck_assert_uint_eq(part, whole);
	}
}
END_TEST

/* Long buffers (the folding engine on CPUs that have it) against both table engines. */
START_TEST(test_crc32_long_buffers)
{
	static uint8_t buf[70000];
	uint32_t seed = 777;

	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (size_t len = 120; len < 1100; len += 7) {
		for (size_t align = 0; align < 16; align += 3) {
			uint32_t r = 0x12345678u ^ (uint32_t)len; /* any incoming register */
			uint32_t a = wire_crc32_update(r, buf + align, len);

			ck_assert_uint_eq(a, wire_crc32_update_bytewise(r, buf + align, len));
			ck_assert_uint_eq(a, wire_crc32_update_slice8(r, buf + align, len));
		}
	}
	{
		static const size_t lens[] = {4096, 4096 + 28, 9000, 65536, 69999};

		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			ck_assert_uint_eq(
			    wire_crc32_update(WIRE_CRC32_INIT, buf + 1, lens[i]),
			    wire_crc32_update_bytewise(WIRE_CRC32_INIT, buf + 1, lens[i]));
	}
	/* zlib.crc32(bytes(4096)) */
	memset(buf, 0, 4096);
	ck_assert_uint_eq(wire_crc32(buf, 4096), 0xc71c0011u);
}
END_TEST

Suite *crc32_suite(void)
{
	Suite *s = suite_create("crc32");
	TCase *tc = tcase_create("crc32");

	tcase_add_test(tc, test_crc32_check_value);
	tcase_add_test(tc, test_crc32_slice_matches_bytewise);
	tcase_add_test(tc, test_crc32_long_buffers);
	suite_add_tcase(s, tc);
	return s;
}
