/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the send doorbells' protocol between the shim's side
 * (uroce_sq_db_ring, uapi.h) and the daemon's (emu_sq_db_collect,
 * emu/daemon/dp/doorbell.c), on two cores at once: posting threads publish
 * a producer index and ring their QP's bit, each then waiting until the
 * collector has read that index, while the main thread collects as the
 * daemon does and reads the producer index of every QP the bits named. The
 * QPs share leaf and summary words, so a ring that skips a bit it must set
 * (one set for another QP, or set by its own earlier post but already
 * swapped) leaves a post unseen, and its thread times out.
 */
#define _GNU_SOURCE
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"

#define POSTERS 4
#define POSTS 200000
#define WAIT_US (10u * 1000u * 1000u)

/* Two QPs in one leaf word, one in another leaf of the same summary word,
 * one in a leaf of the next summary word. */
static const uint32_t db_index[POSTERS] = {3, 40, 64 * 5 + 1, 4096 + 7};

static struct emu_dev dev;
static struct emu_ctx ctx;
static struct emu_qp qps[POSTERS];
static uint32_t prod[POSTERS]; /* what each poster published */
static uint32_t seen[POSTERS]; /* what the collector read after a bit */
static int poster_failed;

static void *poster(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;

	for (uint32_t k = 1; k <= POSTS; k++) {
		uint64_t start;

		__atomic_store_n(&prod[i], k, __ATOMIC_RELEASE);
		uroce_sq_db_ring(ctx.sq_db, db_index[i]);
		/* Bursts of a few posts, as a program posts a window. */
		if (k % 4)
			continue;
		start = emu_wait_now_us();
		while (__atomic_load_n(&seen[i], __ATOMIC_ACQUIRE) < k) {
			if (emu_wait_now_us() - start > WAIT_US) {
				__atomic_store_n(&poster_failed, 1, __ATOMIC_RELAXED);
				return NULL;
			}
			sched_yield();
		}
	}
	return NULL;
}

static bool all_seen(void)
{
	for (unsigned i = 0; i < POSTERS; i++)
		if (__atomic_load_n(&seen[i], __ATOMIC_RELAXED) < POSTS)
			return false;
	return true;
}

START_TEST(test_no_post_unseen)
{
	pthread_t t[POSTERS];
	unsigned long collects = 0;
	int fd;

	emu_list_init(&dev.ctxs);
	emu_list_init(&dev.sq_qps);
	ctx.dev = &dev;
	emu_list_add_tail(&dev.ctxs, &ctx.link);
	ck_assert_int_eq(emu_sq_db_open(&ctx, &fd), 0);
	close(fd);
	ctx.db_cap = 4096 + 64;
	ctx.db_qps = calloc(ctx.db_cap, sizeof(*ctx.db_qps));
	ck_assert_ptr_nonnull(ctx.db_qps);
	for (unsigned i = 0; i < POSTERS; i++) {
		qps[i].obj.ctx = &ctx;
		emu_list_init(&qps[i].sq_link);
		ctx.db_qps[db_index[i]] = &qps[i];
	}
	for (unsigned i = 0; i < POSTERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, poster, (void *)(uintptr_t)i), 0);
	while (!all_seen() && !__atomic_load_n(&poster_failed, __ATOMIC_RELAXED)) {
		emu_sq_db_collect(&dev);
		collects++;
		/* Read the producer index of each QP named, as emu_dp_sq does. */
		while (!emu_list_empty(&dev.sq_qps)) {
			struct emu_qp *qp =
			    EMU_CONTAINER_OF(dev.sq_qps.next, struct emu_qp, sq_link);
			unsigned i = (unsigned)(qp - qps);

			emu_list_del(&qp->sq_link);
			__atomic_store_n(&seen[i], __atomic_load_n(&prod[i], __ATOMIC_ACQUIRE),
					 __ATOMIC_RELEASE);
		}
	}
	for (unsigned i = 0; i < POSTERS; i++)
		pthread_join(t[i], NULL);
	ck_assert_msg(!poster_failed, "a post was not seen within %u s after %lu collections",
		      WAIT_US / 1000000u, collects);
	for (unsigned i = 0; i < POSTERS; i++)
		ck_assert_uint_eq(seen[i], POSTS);
	/* Nothing left ringing once everything was seen and collected. */
	emu_sq_db_collect(&dev);
	for (uint32_t w = 0; w < UROCE_SQ_DB_SUMMARY_WORDS; w++)
		ck_assert_uint_eq(ctx.sq_db->summary[w], 0);
	for (uint32_t w = 0; w < UROCE_SQ_DB_LEAF_WORDS; w++)
		ck_assert_uint_eq(ctx.sq_db->leaf[w], 0);
	emu_sq_db_close(&ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sq_db");
	TCase *tc = tcase_create("ring_collect");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_no_post_unseen);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
