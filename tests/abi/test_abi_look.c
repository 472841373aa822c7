/* SPDX-License-Identifier: MIT */
/*
 * test_abi_look.c: verbs-shim/look.h, how ibv_get_cq_event chooses between
 * looking for an event before blocking and blocking at once. Fed with wait
 * times, a channel's state must take the way whose median wait was shorter
 * for a whole run, start over after it, keep outliers from deciding, drop
 * samples of waits that began under the other way, and let one thread
 * record at a time.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "look.h"

#define US 1000u

/* Feed one trial's waits: `ns` each for the way the state asks for. */
static void trial(struct shim_look *l, enum shim_look_way want, uint64_t ns)
{
	for (unsigned i = 0; i < SHIM_LOOK_TRIAL; i++) {
		ck_assert_int_eq(shim_look_way(l), want);
		shim_look_done(l, want, ns);
	}
}

/* The run: SHIM_LOOK_RUN waits, all the way `want`. */
static void run(struct shim_look *l, enum shim_look_way want)
{
	for (unsigned i = 0; i < SHIM_LOOK_RUN; i++) {
		ck_assert_int_eq(shim_look_way(l), want);
		shim_look_done(l, want, 7 * US);
	}
}

START_TEST(test_look_fresh_looks)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	/* A new channel looks first, as before any measurement. */
	ck_assert_int_eq(shim_look_way(&l), SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_block_faster)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	trial(&l, SHIM_LOOK_LOOK, 45 * US);
	trial(&l, SHIM_LOOK_BLOCK, 33 * US);
	ck_assert_uint_eq(l.median[SHIM_LOOK_LOOK], 45 * US);
	ck_assert_uint_eq(l.median[SHIM_LOOK_BLOCK], 33 * US);
	run(&l, SHIM_LOOK_BLOCK);
	/* Then the cycle starts over, with a trial of looking. */
	trial(&l, SHIM_LOOK_LOOK, 20 * US);
	trial(&l, SHIM_LOOK_BLOCK, 30 * US);
	run(&l, SHIM_LOOK_LOOK);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(test_look_look_faster)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	trial(&l, SHIM_LOOK_LOOK, 19 * US);
	trial(&l, SHIM_LOOK_BLOCK, 27 * US);
	run(&l, SHIM_LOOK_LOOK);
	/* A tie keeps looking. */
	trial(&l, SHIM_LOOK_LOOK, 27 * US);
	trial(&l, SHIM_LOOK_BLOCK, 27 * US);
	run(&l, SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_median_not_mean)
{
	struct shim_look l;
	unsigned i;

	memset(&l, 0, sizeof(l));
	/* Looking: mostly 20 us, a few waits of seconds (a peer that went
	 * quiet); its mean is far above blocking's, its median below. */
	for (i = 0; i < SHIM_LOOK_TRIAL; i++)
		shim_look_done(&l, SHIM_LOOK_LOOK, i % 8 == 3 ? 5000000000ull : 20 * US);
	ck_assert_uint_eq(l.median[SHIM_LOOK_LOOK], 20 * US);
	/* Blocking: the samples in every order, the median is the middle one. */
	for (i = 0; i < SHIM_LOOK_TRIAL; i++)
		shim_look_done(&l, SHIM_LOOK_BLOCK,
			       (uint64_t)((i * 13) % SHIM_LOOK_TRIAL + 10) * US);
	ck_assert_uint_eq(l.median[SHIM_LOOK_BLOCK], (SHIM_LOOK_TRIAL / 2 + 10) * US);
	run(&l, SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_long_wait_capped)
{
	struct shim_look l;
	unsigned i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < SHIM_LOOK_TRIAL; i++)
		shim_look_done(&l, SHIM_LOOK_LOOK, 1ull << 40);
	ck_assert_uint_eq(l.median[SHIM_LOOK_LOOK], UINT32_MAX);
	trial(&l, SHIM_LOOK_BLOCK, 1ull << 33);
	ck_assert_uint_eq(l.median[SHIM_LOOK_BLOCK], UINT32_MAX);
	run(&l, SHIM_LOOK_LOOK); /* equal: keep looking */
}
END_TEST

START_TEST(test_look_other_way_dropped)
{
	struct shim_look l;
	unsigned i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < SHIM_LOOK_TRIAL; i++)
		shim_look_done(&l, SHIM_LOOK_LOOK, 50 * US);
	/* A wait that looked, begun before the trial changed ways, ends in the
	 * blocking trial: not a sample of blocking, and no step. */
	shim_look_done(&l, SHIM_LOOK_LOOK, 1 * US);
	ck_assert_uint_eq(l.n, SHIM_LOOK_TRIAL);
	trial(&l, SHIM_LOOK_BLOCK, 40 * US);
	ck_assert_uint_eq(l.median[SHIM_LOOK_BLOCK], 40 * US);
	/* In the run, a wait of either way counts as a step and is no sample. */
	shim_look_done(&l, SHIM_LOOK_LOOK, 1 * US);
	ck_assert_uint_eq(l.n, 2 * SHIM_LOOK_TRIAL + 1);
	ck_assert_uint_eq(l.median[SHIM_LOOK_BLOCK], 40 * US);
	for (i = 1; i < SHIM_LOOK_RUN; i++)
		shim_look_done(&l, SHIM_LOOK_BLOCK, 1 * US);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(test_look_busy_skips)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	shim_look_done(&l, SHIM_LOOK_LOOK, 10 * US);
	ck_assert_uint_eq(l.n, 1);
	/* Another thread records: this sample is skipped, nothing changes. */
	l.busy = 1;
	shim_look_done(&l, SHIM_LOOK_LOOK, 99 * US);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.sample[1], 0);
	l.busy = 0;
	shim_look_done(&l, SHIM_LOOK_LOOK, 11 * US);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.sample[1], 11 * US);
	ck_assert_uint_eq(l.busy, 0);
}
END_TEST

static Suite *look_suite(void)
{
	Suite *s = suite_create("abi_look");
	TCase *tc = tcase_create("choice");

	tcase_add_test(tc, test_look_fresh_looks);
	tcase_add_test(tc, test_look_block_faster);
	tcase_add_test(tc, test_look_look_faster);
	tcase_add_test(tc, test_look_median_not_mean);
	tcase_add_test(tc, test_look_long_wait_capped);
	tcase_add_test(tc, test_look_other_way_dropped);
	tcase_add_test(tc, test_look_busy_skips);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(look_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
