/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/ring.c as the daemon consumes a receive ring:
 * emu_ring_ready takes what one read of the producer index showed without
 * reading it again (the line lives on the program's core), reads it again
 * once that is used up, and reports a producer index out of range then;
 * every consume publishes the consumer index; a drain starts over.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <unistd.h>

#include "dp.h"

static struct emu_ring r;
static int fd = -1;

static void setup(void)
{
	ck_assert_int_eq(emu_ring_create(&r, UROCE_RING_RQ, 8, 64, 1, 2, &fd), 0);
}

static void teardown(void)
{
	emu_ring_destroy(&r);
	close(fd);
}

/* The program publishes n more entries. */
static void post(uint32_t n)
{
	uroce_store_release(&r.hdr->prod, r.hdr->prod + n);
}

START_TEST(test_ready_once_per_batch)
{
	ck_assert_int_eq(emu_ring_ready(&r), 0);
	post(3);
	ck_assert_int_eq(emu_ring_ready(&r), 3);
	/* From now on the producer index is not read while entries are left:
	 * a garbage index written meanwhile is not seen... */
	r.hdr->prod = r.cons + 1000;
	for (int left = 3; left > 0; left--) {
		ck_assert_int_eq(emu_ring_ready(&r), left);
		emu_ring_consume(&r);
		ck_assert_uint_eq(r.hdr->cons, r.cons); /* published at once */
	}
	/* ...until they are used up: then it is read, and refused. */
	ck_assert_int_eq(emu_ring_ready(&r), -EINVAL);
	/* The exact count reads it every time. */
	ck_assert_int_eq(emu_ring_pending(&r), -EINVAL);
}
END_TEST

START_TEST(test_ready_sees_more_later)
{
	post(2);
	ck_assert_int_eq(emu_ring_ready(&r), 2);
	post(4); /* not looked at while the first two last */
	ck_assert_int_eq(emu_ring_ready(&r), 2);
	emu_ring_consume(&r);
	emu_ring_consume(&r);
	ck_assert_int_eq(emu_ring_ready(&r), 4);
	ck_assert_int_eq(emu_ring_pending(&r), 4);
	/* A full ring is fine... */
	post(4);
	ck_assert_int_eq(emu_ring_pending(&r), 8);
	emu_ring_consume(&r);
	ck_assert_int_eq(emu_ring_ready(&r), 3); /* what the last read showed */
	/* ...one more than the ring holds is not. */
	post(2);
	ck_assert_int_eq(emu_ring_pending(&r), -EINVAL);
}
END_TEST

START_TEST(test_drain_starts_over)
{
	post(5);
	ck_assert_int_eq(emu_ring_ready(&r), 5);
	emu_ring_drain(&r);
	ck_assert_uint_eq(r.cons, 5);
	ck_assert_uint_eq(r.hdr->cons, 5);
	ck_assert_int_eq(emu_ring_ready(&r), 0);
	post(1);
	ck_assert_int_eq(emu_ring_ready(&r), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dp_ring");
	TCase *tc = tcase_create("ring");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ready_once_per_batch);
	tcase_add_test(tc, test_ready_sees_more_later);
	tcase_add_test(tc, test_drain_starts_over);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
