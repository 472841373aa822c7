/* SPDX-License-Identifier: MIT */
/*
 * test_abi_rate.c: verbs-shim/abi_rate.c. Known answers for every enum
 * ibv_rate value in both directions (multiple of 2.5 Gb/s and Mb/s, values
 * of rdma-core 44), rejection of values that are not in the table, and,
 * when Debian's real libibverbs is installed, a comparison with it over
 * ranges covering every table entry.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "real_lib.h"

struct rate_case {
	enum ibv_rate rate;
	int mult;
	int mbps;
};

static const struct rate_case rate_cases[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},	{IBV_RATE_5_GBPS, 2, 5000},
    {IBV_RATE_10_GBPS, 4, 10000},	{IBV_RATE_20_GBPS, 8, 20000},
    {IBV_RATE_30_GBPS, 12, 30000},	{IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},	{IBV_RATE_80_GBPS, 32, 80000},
    {IBV_RATE_120_GBPS, 48, 120000},	{IBV_RATE_14_GBPS, -1, 14062},
    {IBV_RATE_56_GBPS, -1, 56250},	{IBV_RATE_112_GBPS, -1, 112500},
    {IBV_RATE_168_GBPS, -1, 168750},	{IBV_RATE_25_GBPS, -1, 25781},
    {IBV_RATE_100_GBPS, -1, 103125},	{IBV_RATE_200_GBPS, -1, 206250},
    {IBV_RATE_300_GBPS, -1, 309375},	{IBV_RATE_28_GBPS, 11, 28125},
    {IBV_RATE_50_GBPS, 20, 53125},	{IBV_RATE_400_GBPS, 160, 425000},
    {IBV_RATE_600_GBPS, 240, 637500},	{IBV_RATE_800_GBPS, 320, 850000},
    {IBV_RATE_1200_GBPS, 480, 1275000},
};

#define NRATES ((int)(sizeof(rate_cases) / sizeof(rate_cases[0])))

START_TEST(test_rate_known)
{
	const struct rate_case *c = &rate_cases[_i];

	ck_assert_int_eq(ibv_rate_to_mult(c->rate), c->mult);
	ck_assert_int_eq(ibv_rate_to_mbps(c->rate), c->mbps);
	ck_assert_int_eq(mbps_to_ibv_rate(c->mbps), c->rate);
	if (c->mult > 0)
		ck_assert_int_eq(mult_to_ibv_rate(c->mult), c->rate);
}
END_TEST

START_TEST(test_rate_not_in_table)
{
	/* IBV_RATE_MAX (0), the unused 1, and values past the last rate. */
	static const int bad_rates[] = {-1, 0, 1, 25, 26, 1000};
	/* Multiples with no rate, and "nearly" values of Mb/s. */
	static const int bad_mults[] = {-1, 0, 3, 5, 6, 10, 64, 100, 1000};
	static const int bad_mbps[] = {-1, 0, 1, 2499, 2501, 14000, 25000, 25782, 50000, 100000};

	for (unsigned i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++) {
		ck_assert_int_eq(ibv_rate_to_mult((enum ibv_rate)bad_rates[i]), -1);
		ck_assert_int_eq(ibv_rate_to_mbps((enum ibv_rate)bad_rates[i]), -1);
	}
	for (unsigned i = 0; i < sizeof(bad_mults) / sizeof(bad_mults[0]); i++)
		ck_assert_int_eq(mult_to_ibv_rate(bad_mults[i]), IBV_RATE_MAX);
	for (unsigned i = 0; i < sizeof(bad_mbps) / sizeof(bad_mbps[0]); i++)
		ck_assert_int_eq(mbps_to_ibv_rate(bad_mbps[i]), IBV_RATE_MAX);
}
END_TEST

START_TEST(test_rate_same_as_real)
{
	void *h = real_lib_open();
	int (*r2mult)(enum ibv_rate), (*r2mbps)(enum ibv_rate);
	enum ibv_rate (*mult2r)(int), (*mbps2r)(int);

	if (!h)
		return;
	r2mult = real_lib_sym(h, "ibv_rate_to_mult", "IBVERBS_1.0");
	mult2r = real_lib_sym(h, "mult_to_ibv_rate", "IBVERBS_1.0");
	r2mbps = real_lib_sym(h, "ibv_rate_to_mbps", "IBVERBS_1.1");
	mbps2r = real_lib_sym(h, "mbps_to_ibv_rate", "IBVERBS_1.1");
	ck_assert(r2mult && mult2r && r2mbps && mbps2r);
	ck_assert_ptr_ne((void *)r2mult, (void *)ibv_rate_to_mult);

	for (int r = -16; r < 64; r++) {
		ck_assert_int_eq(ibv_rate_to_mult((enum ibv_rate)r), r2mult((enum ibv_rate)r));
		ck_assert_int_eq(ibv_rate_to_mbps((enum ibv_rate)r), r2mbps((enum ibv_rate)r));
	}
	for (int m = -16; m < 1024; m++)
		ck_assert_int_eq(mult_to_ibv_rate(m), mult2r(m));
	/* Every Mb/s value of the table and its neighbours. */
	for (int i = 0; i < NRATES; i++)
		for (int d = -1; d <= 1; d++) {
			int mb = rate_cases[i].mbps + d;

			ck_assert_int_eq(mbps_to_ibv_rate(mb), mbps2r(mb));
		}
	dlclose(h);
}
END_TEST

static Suite *rate_suite(void)
{
	Suite *s = suite_create("abi_rate");
	TCase *tc = tcase_create("known_answers");

	tcase_add_loop_test(tc, test_rate_known, 0, NRATES);
	tcase_add_test(tc, test_rate_not_in_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("real_libibverbs");
	tcase_add_test(tc, test_rate_same_as_real);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rate_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
