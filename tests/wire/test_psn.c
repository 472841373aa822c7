/* SPDX-License-Identifier: MIT */
/* Tests of wire/psn.h: 24-bit wrap, distance, the (s32)((a-b)<<8) window rule. */
#include <wire/psn.h>

#include "suites.h"

START_TEST(test_psn_add_sub)
{
	ck_assert_uint_eq(wire_psn_add(0, 1), 1);
	ck_assert_uint_eq(wire_psn_add(0xffffff, 1), 0);
	ck_assert_uint_eq(wire_psn_add(0xfffffe, 5), 3);
	ck_assert_uint_eq(wire_psn_add(5, 0xffffff), 4); /* + (2^24 - 1) == - 1 */
	ck_assert_uint_eq(wire_psn_sub(3, 0xfffffe), 5);
	ck_assert_uint_eq(wire_psn_sub(0xfffffe, 3), 0xfffffb);
	ck_assert_uint_eq(wire_psn_sub(7, 7), 0);
	for (uint32_t a = 0; a < 0x1000000; a += 0x7fff1)
		for (uint32_t n = 0; n < 0x1000000; n += 0x9ffd3)
			ck_assert_uint_eq(wire_psn_sub(wire_psn_add(a, n), a), n);
}
END_TEST

START_TEST(test_psn_cmp)
{
	ck_assert_int_eq(wire_psn_cmp(5, 5), 0);
	ck_assert_int_gt(wire_psn_cmp(6, 5), 0);
	ck_assert_int_lt(wire_psn_cmp(5, 6), 0);
	/* across the wrap: 0 is after 0xffffff */
	ck_assert_int_gt(wire_psn_cmp(0, 0xffffff), 0);
	ck_assert_int_lt(wire_psn_cmp(0xffffff, 0), 0);
	ck_assert_int_gt(wire_psn_cmp(10, 0xfffff0), 0);
	/* the window edge: 2^23 - 1 ahead is after, 2^23 ahead counts as before */
	ck_assert_int_gt(wire_psn_cmp(0x7fffff, 0), 0);
	ck_assert_int_lt(wire_psn_cmp(0x800000, 0), 0);
	ck_assert_int_eq(wire_psn_cmp(0x800000, 0), INT32_MIN);
	/* the value is the signed distance times 256 */
	ck_assert_int_eq(wire_psn_cmp(3, 1), 2 * 256);
	ck_assert_int_eq(wire_psn_cmp(1, 3), -2 * 256);
	ck_assert_int_eq(wire_psn_diff(2, 0xfffffe), 4);
	ck_assert_int_eq(wire_psn_diff(0xfffffe, 2), -4);
	/* high bits above 24 are ignored, as on the wire */
	ck_assert_int_eq(wire_psn_cmp(0x01000005, 5), 0);
}
END_TEST

/* Antisymmetry and agreement with the distance over a sweep. */
START_TEST(test_psn_cmp_sweep)
{
	for (uint32_t a = 0; a < 0x1000000; a += 0x3ffd1) {
		for (uint32_t d = 1; d < 0x800000; d += 0x1fff7) {
			uint32_t b = wire_psn_add(a, d);

			ck_assert_int_gt(wire_psn_cmp(b, a), 0);
			ck_assert_int_lt(wire_psn_cmp(a, b), 0);
			ck_assert_int_eq(wire_psn_diff(b, a), (int32_t)d);
		}
	}
}
END_TEST

Suite *psn_suite(void)
{
	Suite *s = suite_create("psn");
	TCase *tc = tcase_create("psn");

	tcase_add_test(tc, test_psn_add_sub);
	tcase_add_test(tc, test_psn_cmp);
	tcase_add_test(tc, test_psn_cmp_sweep);
	suite_add_tcase(s, tc);
	return s;
}
