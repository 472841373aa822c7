/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/prof.c, the cost profile's clock: the
 * conversion of ticks to nanoseconds by the ratio of two clocks (exact,
 * without overflow for a day of a 5 GHz counter), and the real clock
 * against CLOCK_MONOTONIC over an interval of 20 ms.
 */
#define _GNU_SOURCE
#include <check.h>
#include <time.h>

#include "dp.h"

START_TEST(test_scale)
{
	/* 2.5 ticks per ns. */
	ck_assert_uint_eq(emu_prof_scale(2500, 1000000, 400000), 1000);
	ck_assert_uint_eq(emu_prof_scale(0, 1000000, 400000), 0);
	/* One tick per ns is the identity. */
	ck_assert_uint_eq(emu_prof_scale(123456789, 1000, 1000), 123456789);
	/* A clock that has not moved converts nothing (no division by 0). */
	ck_assert_uint_eq(emu_prof_scale(1000, 0, 0), 0);
	/* A day of a 5 GHz counter: the product passes 2^64, the result is exact. */
	ck_assert_uint_eq(emu_prof_scale(432000000000000ull, 432000000000000ull, 86400000000000ull),
			  86400000000000ull);
	ck_assert_uint_eq(emu_prof_scale(5000000000ull, 432000000000000ull, 86400000000000ull),
			  1000000000ull);
}
END_TEST

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What the clock measures over 20 ms, converted, is what CLOCK_MONOTONIC
 * measures over the same interval, within 2 %. */
START_TEST(test_clock)
{
	struct timespec d = {.tv_sec = 0, .tv_nsec = 20000000};
	uint64_t t0, t1, m0, m1, ns;

	emu_prof_init();
	m0 = mono_ns();
	t0 = emu_prof_ticks();
	nanosleep(&d, NULL);
	t1 = emu_prof_ticks();
	m1 = mono_ns();
	ns = emu_prof_ns(t1 - t0);
	ck_assert_uint_ge(m1 - m0, 20000000);
	ck_assert_uint_ge(ns, (m1 - m0) * 98 / 100);
	ck_assert_uint_le(ns, (m1 - m0) * 102 / 100);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dp_prof");
	TCase *tc = tcase_create("prof");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_scale);
	tcase_add_test(tc, test_clock);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
