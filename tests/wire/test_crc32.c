/* SPDX-License-Identifier: MIT */
/* Tests of wire/crc32.h: the standard check value, slice-by-8 against bytewise. */
#include <stdio.h>
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

/*
 * Each folding engine the CPU has, on its own, against the bytewise reference:
 * every length from below its threshold to well past a few of its steps, at
 * several alignments and incoming registers. Engines the CPU lacks are named.
 */
START_TEST(test_crc32_each_engine)
{
	static uint8_t buf[9000];
	static const unsigned engines[] = {WIRE_CRC32_ENGINE_CLMUL, WIRE_CRC32_ENGINE_VPCLMUL,
					   WIRE_CRC32_ENGINE_VPCLMUL256};
	static const char *const names[] = {"PCLMULQDQ", "AVX-512 VPCLMULQDQ", "AVX2 VPCLMULQDQ"};
	uint32_t seed = 4242;

	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	ck_assert(wire_crc32_engines() & WIRE_CRC32_ENGINE_SLICE8);
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		if (!(wire_crc32_engines() & engines[e])) {
			fprintf(stderr, "crc32: this CPU has no %s engine; not tested here\n",
				names[e]);
			continue;
		}
		for (size_t len = 0; len < 2200; len++) {
			size_t align = len % 13;
			uint32_t r = 0x9e3779b9u * (uint32_t)len;

			ck_assert_msg(wire_crc32_update_engine(engines[e], r, buf + align, len) ==
					  wire_crc32_update_bytewise(r, buf + align, len),
				      "%s len %zu align %zu", names[e], len, align);
		}
		for (size_t len = 4096; len <= 8192 + 48; len += 4096 / 4 + 16)
			ck_assert_uint_eq(
			    wire_crc32_update_engine(engines[e], WIRE_CRC32_INIT, buf + 3, len),
			    wire_crc32_update_bytewise(WIRE_CRC32_INIT, buf + 3, len));
		/* split anywhere: the register carries between engines' calls */
		for (size_t split = 0; split <= 1500; split += 37) {
			uint32_t part =
			    wire_crc32_update_engine(engines[e], WIRE_CRC32_INIT, buf, split);

			part =
			    wire_crc32_update_engine(engines[e], part, buf + split, 3000 - split);
			ck_assert_uint_eq(part,
					  wire_crc32_update_slice8(WIRE_CRC32_INIT, buf, 3000));
		}
	}
}
END_TEST

/* The name a daemon logs is the engine wire_crc32_update takes for long buffers. */
START_TEST(test_crc32_engine_name)
{
	const unsigned e = wire_crc32_engines();
	const char *n = wire_crc32_engine_name();

	if (e & WIRE_CRC32_ENGINE_VPCLMUL)
		ck_assert_str_eq(n, "AVX-512 VPCLMULQDQ (512-bit folds)");
	else if (e & WIRE_CRC32_ENGINE_VPCLMUL256)
		ck_assert_str_eq(n, "AVX2 VPCLMULQDQ (256-bit folds)");
	else if (e & WIRE_CRC32_ENGINE_CLMUL)
		ck_assert_str_eq(n, "PCLMULQDQ (128-bit folds)");
	else
		ck_assert_str_eq(n, "slice-by-8 tables");
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

/*
 * The copying form: for every engine mask, every length from 0 past a few
 * steps of the widest engine and at unrelated alignments of source and
 * destination, the register is the tables' (checked against the bytewise
 * reference above), the copy is exact,
 * and nothing around it is touched.
 */
START_TEST(test_crc32_update_copy)
{
	static uint8_t src[9000], dst[9000 + 64];
	static const unsigned masks[] = {WIRE_CRC32_ENGINE_ALL, WIRE_CRC32_ENGINE_SLICE8,
					 WIRE_CRC32_ENGINE_CLMUL, WIRE_CRC32_ENGINE_VPCLMUL256,
					 WIRE_CRC32_ENGINE_VPCLMUL};
	uint32_t seed = 99;

	for (size_t i = 0; i < sizeof(src); i++) {
		seed = seed * 1103515245u + 12345u;
		src[i] = (uint8_t)(seed >> 16);
	}
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		for (size_t len = 0; len <= 8200; len += len < 600 ? 1 : 211) {
			size_t sa = len % 7, da = 1 + len % 11;
			uint32_t r = 0x9e3779b9u * (uint32_t)(len + 1);
			uint32_t got;

			memset(dst, 0xa5, sizeof(dst));
			got = wire_crc32_update_copy_engine(masks[m], r, dst + da, src + sa, len);
			ck_assert_msg(got == wire_crc32_update_slice8(r, src + sa, len),
				      "mask 0x%x len %zu", masks[m], len);
			ck_assert_msg(!memcmp(dst + da, src + sa, len), "mask 0x%x len %zu copy",
				      masks[m], len);
			size_t outside = 0; /* (one check: each ck_assert costs a pipe write) */

			for (size_t i = 0; i < sizeof(dst); i++)
				outside += (i < da || i >= da + len) && dst[i] != 0xa5;
			ck_assert_msg(!outside, "mask 0x%x len %zu: %zu bytes around the copy",
				      masks[m], len, outside);
		}
	}
	ck_assert_uint_eq(~wire_crc32_update_copy(WIRE_CRC32_INIT, dst, "123456789", 9),
			  0xcbf43926u);
}
END_TEST

Suite *crc32_suite(void)
{
	Suite *s = suite_create("crc32");
	TCase *tc = tcase_create("crc32");

	tcase_add_test(tc, test_crc32_check_value);
	tcase_add_test(tc, test_crc32_slice_matches_bytewise);
	tcase_add_test(tc, test_crc32_long_buffers);
	tcase_add_test(tc, test_crc32_each_engine);
	tcase_add_test(tc, test_crc32_engine_name);
	tcase_add_test(tc, test_crc32_update_copy);
	suite_add_tcase(s, tc);
	return s;
}
