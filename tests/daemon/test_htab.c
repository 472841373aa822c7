/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/htab.c, the table behind handles, QP numbers and memory
 * keys: insert, find, remove, growth, and that nothing is lost on the way.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>

#include "daemon.h"

#define N 5000

START_TEST(test_insert_find_remove)
{
	static struct emu_hnode nodes[N];
	struct emu_htab t;

	ck_assert_int_eq(emu_htab_init(&t), 0);
	ck_assert_ptr_null(emu_htab_find(&t, 1));
	for (uint32_t i = 0; i < N; i++)
		ck_assert_int_eq(emu_htab_insert(&t, &nodes[i], i * 7 + 1), 0);
	ck_assert_uint_eq(t.count, N);
	ck_assert_uint_ge(t.nbuckets, N); /* grew */
	for (uint32_t i = 0; i < N; i++)
		ck_assert_ptr_eq(emu_htab_find(&t, i * 7 + 1), &nodes[i]);
	ck_assert_ptr_null(emu_htab_find(&t, 3));
	/* Remove every other node. */
	for (uint32_t i = 0; i < N; i += 2)
		emu_htab_remove(&t, &nodes[i]);
	ck_assert_uint_eq(t.count, N / 2);
	for (uint32_t i = 0; i < N; i++) {
		struct emu_hnode *f = emu_htab_find(&t, i * 7 + 1);

		if (i % 2)
			ck_assert_ptr_eq(f, &nodes[i]);
		else
			ck_assert_ptr_null(f);
	}
	/* Keys that collide in the low bits still resolve. */
	for (uint32_t i = 0; i < N; i += 2)
		ck_assert_int_eq(emu_htab_insert(&t, &nodes[i], 0x80000000u | (i << 12)), 0);
	for (uint32_t i = 0; i < N; i += 2)
		ck_assert_ptr_eq(emu_htab_find(&t, 0x80000000u | (i << 12)), &nodes[i]);
	emu_htab_free(&t);
	ck_assert_ptr_null(emu_htab_find(&t, 1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("htab");
	TCase *tc = tcase_create("htab");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_insert_find_remove);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
