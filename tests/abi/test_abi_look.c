/* SPDX-License-Identifier: MIT */
/*
 * test_abi_look.c: verbs-shim/look.h, how ibv_get_cq_event chooses between
 * looking for an event before blocking and blocking at once. Fed with
 * waits at given moments of the clock, a channel must look, then block, in
 * the two trials at the start of every period, then go the way whose
 * median wait in those trials was shorter (blocking by a sixteenth), keep
 * its choice when a trial had too few waits, count only waits that began
 * and ended in the trial of their way, start over each period, keep
 * outliers from deciding, let the last waits of a trial decide, and let one
 * thread record at a time.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "look.h"

#define US 1000ull
#define MS 1000000ull
#define P SHIM_LOOK_PERIOD_NS
#define T SHIM_LOOK_TRIAL_NS

/* `n` waits of `ns` each, back to back from `at`, each going the way the
 * channel says; returns the moment after the last. */
static uint64_t waits(struct shim_look *l, uint64_t at, unsigned n, uint64_t ns)
{
	for (unsigned i = 0; i < n; i++) {
		enum shim_look_way way = shim_look_way(l, at);

		shim_look_done(l, way, at, at + ns);
		at += ns;
	}
	return at;
}

/* One period from its start: trials with these waits, then the run. */
static void period(struct shim_look *l, uint64_t k, uint64_t look_ns, uint64_t block_ns)
{
	ck_assert_int_eq(shim_look_way(l, k * P), SHIM_LOOK_LOOK);
	waits(l, k * P, 20, look_ns);
	ck_assert_int_eq(shim_look_way(l, k * P + T), SHIM_LOOK_BLOCK);
	waits(l, k * P + T, 20, block_ns);
}

START_TEST(test_look_trials_then_run)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	/* Before any trial: looking. */
	ck_assert_int_eq(shim_look_way(&l, 3 * P + 2 * T), SHIM_LOOK_LOOK);
	/* Both ways looking and blocking in their trials, whatever the run. */
	ck_assert_int_eq(shim_look_trial(5 * P), SHIM_LOOK_LOOK);
	ck_assert_int_eq(shim_look_trial(5 * P + T - 1), SHIM_LOOK_LOOK);
	ck_assert_int_eq(shim_look_trial(5 * P + T), SHIM_LOOK_BLOCK);
	ck_assert_int_eq(shim_look_trial(5 * P + 2 * T - 1), SHIM_LOOK_BLOCK);
	ck_assert_int_eq(shim_look_trial(5 * P + 2 * T), -1);
	ck_assert_int_eq(shim_look_trial(6 * P - 1), -1);
}
END_TEST

START_TEST(test_look_block_faster)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	period(&l, 7, 45 * US, 37 * US);
	ck_assert_int_eq(shim_look_way(&l, 7 * P + 2 * T), SHIM_LOOK_BLOCK);
	ck_assert_int_eq(shim_look_way(&l, 8 * P - 1), SHIM_LOOK_BLOCK);
	/* The next period's trials still look first, then decide again. */
	period(&l, 8, 20 * US, 30 * US);
	ck_assert_int_eq(shim_look_way(&l, 8 * P + 2 * T), SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_margin)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	/* Blocking shorter, but by less than a sixteenth: keep looking. */
	period(&l, 1, 32 * US, 31 * US);
	ck_assert_int_eq(shim_look_way(&l, P + 2 * T), SHIM_LOOK_LOOK);
	/* By more: block. */
	period(&l, 2, 32 * US, 29 * US);
	ck_assert_int_eq(shim_look_way(&l, 2 * P + 2 * T), SHIM_LOOK_BLOCK);
	/* A tie: look. */
	period(&l, 3, 32 * US, 32 * US);
	ck_assert_int_eq(shim_look_way(&l, 3 * P + 2 * T), SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_too_few_keeps)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	period(&l, 1, 50 * US, 20 * US);
	ck_assert_int_eq(shim_look_way(&l, P + 2 * T), SHIM_LOOK_BLOCK);
	/* Next period: plenty of looking, too few blocking waits (long ones). */
	waits(&l, 2 * P, 20, 10 * US);
	waits(&l, 2 * P + T, SHIM_LOOK_MIN_SAMPLES - 1, 100 * US);
	ck_assert_int_eq(shim_look_way(&l, 2 * P + 2 * T), SHIM_LOOK_BLOCK);
	/* A period without any wait in its trials keeps it too. */
	ck_assert_int_eq(shim_look_way(&l, 4 * P + 2 * T), SHIM_LOOK_BLOCK);
}
END_TEST

START_TEST(test_look_spanning_dropped)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	/* Looking waits that end in the blocking trial, blocking waits that
	 * end after it, waits of the wrong way: none is a sample. */
	for (unsigned i = 0; i < 20; i++) {
		shim_look_done(&l, SHIM_LOOK_LOOK, P + T - 10 * US, P + T + 5 * US);
		shim_look_done(&l, SHIM_LOOK_BLOCK, P + 2 * T - 10 * US, P + 2 * T + 5 * US);
		shim_look_done(&l, SHIM_LOOK_BLOCK, P + 1 * MS, P + 1 * MS + 5 * US);
		shim_look_done(&l, SHIM_LOOK_LOOK, P + T + 1 * MS, P + T + 1 * MS + 5 * US);
		shim_look_done(&l, SHIM_LOOK_LOOK, P + 3 * T, P + 3 * T + 5 * US);
	}
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 0);
	ck_assert_uint_eq(l.count[SHIM_LOOK_BLOCK], 0);
	ck_assert_int_eq(shim_look_way(&l, P + 2 * T), SHIM_LOOK_LOOK);
	/* The samples of one period do not carry into the next. */
	waits(&l, 5 * P, 20, 50 * US);
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 20);
	waits(&l, 6 * P + T, 20, 10 * US);
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 0);
	ck_assert_uint_eq(l.count[SHIM_LOOK_BLOCK], 20);
	ck_assert_int_eq(shim_look_way(&l, 6 * P + 2 * T), SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_median_not_mean)
{
	struct shim_look l;
	uint64_t at = 9 * P;

	memset(&l, 0, sizeof(l));
	/* Looking: mostly 20 us, a few waits of seconds capped; its mean is
	 * far above blocking's, its median below. */
	for (unsigned i = 0; i < 32; i++) {
		uint64_t ns = i % 8 == 3 ? 5000 * MS : 20 * US;

		shim_look_done(&l, SHIM_LOOK_LOOK, at, at + (ns > T / 2 ? T / 2 : ns));
	}
	waits(&l, 9 * P + T, 32, 25 * US);
	ck_assert_int_eq(shim_look_way(&l, 9 * P + 2 * T), SHIM_LOOK_LOOK);
}
END_TEST

START_TEST(test_look_last_samples)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	/* The first waits of a trial still feel the other way: of more waits
	 * than it keeps, the last SHIM_LOOK_SAMPLES decide. Here looking
	 * starts slow and settles fast, blocking the other way round. */
	waits(&l, 10 * P, SHIM_LOOK_SAMPLES, 90 * US);
	waits(&l, 10 * P + 6 * MS, SHIM_LOOK_SAMPLES, 30 * US);
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 2 * SHIM_LOOK_SAMPLES);
	waits(&l, 10 * P + T, SHIM_LOOK_SAMPLES, 10 * US);
	waits(&l, 10 * P + T + 1 * MS, SHIM_LOOK_SAMPLES, 40 * US);
	ck_assert_int_eq(shim_look_way(&l, 10 * P + 2 * T), SHIM_LOOK_LOOK);
	/* And the other way round. */
	waits(&l, 11 * P, SHIM_LOOK_SAMPLES, 30 * US);
	waits(&l, 11 * P + 2 * MS, SHIM_LOOK_SAMPLES, 50 * US);
	waits(&l, 11 * P + T, SHIM_LOOK_SAMPLES, 60 * US);
	waits(&l, 11 * P + T + 4 * MS, SHIM_LOOK_SAMPLES, 20 * US);
	ck_assert_int_eq(shim_look_way(&l, 11 * P + 2 * T), SHIM_LOOK_BLOCK);
}
END_TEST

START_TEST(test_look_busy_skips)
{
	struct shim_look l;

	memset(&l, 0, sizeof(l));
	shim_look_done(&l, SHIM_LOOK_LOOK, P, P + 10 * US);
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 1);
	/* Another thread records: this sample is skipped, and so is a choice. */
	l.busy = 1;
	shim_look_done(&l, SHIM_LOOK_LOOK, P + 1 * MS, P + 1 * MS + 99 * US);
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 1);
	ck_assert_int_eq(shim_look_way(&l, P + 2 * T), SHIM_LOOK_LOOK);
	ck_assert(!l.decided);
	l.busy = 0;
	shim_look_done(&l, SHIM_LOOK_LOOK, P + 2 * MS, P + 2 * MS + 11 * US);
	ck_assert_uint_eq(l.count[SHIM_LOOK_LOOK], 2);
	ck_assert_uint_eq(l.sample[SHIM_LOOK_LOOK][1], 11 * US);
	ck_assert_uint_eq(l.busy, 0);
}
END_TEST

static Suite *look_suite(void)
{
	Suite *s = suite_create("abi_look");
	TCase *tc = tcase_create("choice");

	tcase_add_test(tc, test_look_trials_then_run);
	tcase_add_test(tc, test_look_block_faster);
	tcase_add_test(tc, test_look_margin);
	tcase_add_test(tc, test_look_too_few_keeps);
	tcase_add_test(tc, test_look_spanning_dropped);
	tcase_add_test(tc, test_look_median_not_mean);
	tcase_add_test(tc, test_look_last_samples);
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
