/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/wait.c: the pure spin-or-sleep decision (spin window,
 * contention back-off, transport deadlines and the sleep timeout), and the
 * event-loop glue on a real libuv loop: it spins while work is recent,
 * publishes "asleep" before its last look at the rings, stays awake when
 * that last look finds work, and clears the flag after waking (in an I/O
 * callback's first step, before the work); and for a daemon hosting several
 * RNICs on one loop, one decision for all of them.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dp.h"

#define SPIN EMU_WAIT_SPIN_US
#define LONG_SPIN 20000

START_TEST(test_spin_while_recent)
{
	int64_t tmo = 123;

	ck_assert_int_eq(emu_wait_decide(1000, 1000, SPIN, 0, 0, &tmo), EMU_WAIT_SPIN);
	ck_assert_int_eq(emu_wait_decide(1000 + SPIN - 1, 1000, SPIN, 0, 0, &tmo), EMU_WAIT_SPIN);
	ck_assert_int_eq(emu_wait_decide(1000 + SPIN, 1000, SPIN, 0, 0, &tmo), EMU_WAIT_SLEEP);
	ck_assert_int_eq(tmo, -1); /* no deadline: until woken */
	/* A spin window of 0: always sleep when idle. */
	ck_assert_int_eq(emu_wait_decide(1000, 1000, 0, 0, 0, &tmo), EMU_WAIT_SLEEP);
}
END_TEST

START_TEST(test_backoff)
{
	int64_t tmo;

	/* Recent work, but the CPUs were found oversubscribed. */
	ck_assert_int_eq(emu_wait_decide(1000, 1000, SPIN, 5000, 0, &tmo), EMU_WAIT_SLEEP);
	ck_assert_int_eq(emu_wait_decide(5000, 5000, SPIN, 5000, 0, &tmo), EMU_WAIT_SPIN);
	/* A close deadline is still waited for by spinning. */
	ck_assert_int_eq(emu_wait_decide(1000, 1000, SPIN, 5000, 1010, &tmo), EMU_WAIT_SPIN);
}
END_TEST

START_TEST(test_contended)
{
	const uint64_t L = EMU_WAIT_CONTENDED_US, W = EMU_WAIT_CONTENDED_WINDOW_US;
	struct emu_wait_loop w;
	uint64_t t = 1000000;
	unsigned i;

	_Static_assert(EMU_WAIT_CONTENDED_YIELDS == 3, "the cases below count three");
	memset(&w, 0, sizeof(w));
	/* Short yields never count, however many. */
	for (i = 0; i < 1000; i++, t += 10)
		ck_assert(!emu_wait_contended(&w, t, t + L - 1));
	/* A program of uroce's own that keeps the CPU between two looks at its
	 * CQs (perftest posting to 1000 QPs: 100-500 us, back to back) is not
	 * a CPU-bound neighbour: backing off there made every datagram to the
	 * daemon a wake-up. */
	for (i = 0; i < 1000; i++, t += 600)
		ck_assert(!emu_wait_contended(&w, t, t + 480));
	/* Long yields far apart (a busy moment now and then): no back-off. */
	for (i = 0; i < 10; i++, t += W)
		ck_assert(!emu_wait_contended(&w, t, t + L));
	/* A neighbour's slices: the third long yield within the window. */
	t += 10 * W;
	ck_assert(!emu_wait_contended(&w, t, t + 3000));
	ck_assert(!emu_wait_contended(&w, t + 3000, t + 6000));
	ck_assert(emu_wait_contended(&w, t + 6000, t + 9000));
	/* Short ones in between neither count nor reset it. */
	ck_assert(!emu_wait_contended(&w, t + 9000, t + 9001));
	ck_assert(emu_wait_contended(&w, t + 9001, t + 12000));
	/* Just past the window: the oldest of the three is too old. */
	t += 10 * W;
	ck_assert(!emu_wait_contended(&w, t, t + L));
	ck_assert(!emu_wait_contended(&w, t + L, t + 2 * L));
	ck_assert(!emu_wait_contended(&w, t + W, t + W + L + 1));
}
END_TEST

START_TEST(test_deadlines)
{
	uint64_t now = 1000000;
	int64_t tmo;

	/* Closer than the timer resolution allows: spin for it. */
	ck_assert_int_eq(emu_wait_decide(now, 0, SPIN, 0, now + EMU_WAIT_TIMER_SPIN_US, &tmo),
			 EMU_WAIT_SPIN);
	/* Already past: spin (the pass fires it). */
	ck_assert_int_eq(emu_wait_decide(now, 0, SPIN, 0, now - 5, &tmo), EMU_WAIT_SPIN);
	/* Farther: sleep with the timeout rounded up to whole ms. */
	ck_assert_int_eq(emu_wait_decide(now, 0, SPIN, 0, now + EMU_WAIT_TIMER_SPIN_US + 1, &tmo),
			 EMU_WAIT_SLEEP);
	ck_assert_int_eq(tmo, 1);
	ck_assert_int_eq(emu_wait_decide(now, 0, SPIN, 0, now + 67109, &tmo), EMU_WAIT_SLEEP);
	ck_assert_int_eq(tmo, 68);
	ck_assert_int_eq(emu_wait_decide(now, 0, SPIN, 0, now + 2000, &tmo), EMU_WAIT_SLEEP);
	ck_assert_int_eq(tmo, 2);
}
END_TEST

/* A fake data path: `work` passes find work; the flag seen by each pass is
 * recorded. */
struct fake {
	struct uroce_status_page status;
	unsigned work;
	unsigned recheck_work; /* work found only while "asleep" is set */
	unsigned passes;
	unsigned passes_asleep;
	uint64_t deadline;
	uint64_t sleeps;
};

static unsigned fake_poll(void *arg)
{
	struct fake *f = arg;

	f->passes++;
	if (__atomic_load_n(&f->status.daemon_asleep, __ATOMIC_SEQ_CST)) {
		f->passes_asleep++;
		if (f->recheck_work) {
			f->recheck_work--;
			return 1;
		}
		return 0;
	}
	if (f->work) {
		f->work--;
		return 1;
	}
	return 0;
}

static uint64_t fake_deadline(void *arg)
{
	return ((struct fake *)arg)->deadline;
}

static void close_cb(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void loop_fini(uv_loop_t *loop)
{
	uv_walk(loop, close_cb, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(loop), 0);
}

/* Keeps a test loop alive, as the daemon's sockets keep its own. */
static uv_async_t keepalive;

static void member_init(struct emu_wait *w, struct fake *f)
{
	memset(w, 0, sizeof(*w));
	memset(f, 0, sizeof(*f));
	w->poll = fake_poll;
	w->next_deadline = fake_deadline;
	w->arg = f;
	w->sleeps = &f->sleeps;
	w->spin_us = SPIN;
}

static void loop_init(struct emu_wait_loop *wl, uv_loop_t *loop)
{
	ck_assert_int_eq(uv_loop_init(loop), 0);
	ck_assert_int_eq(uv_async_init(loop, &keepalive, NULL), 0);
	emu_wait_loop_init(wl, loop);
}

static void wait_init(struct emu_wait_loop *wl, struct emu_wait *w, struct fake *f, uv_loop_t *loop)
{
	member_init(w, f);
	loop_init(wl, loop);
	emu_wait_start(w, wl, &f->status);
}

static void spin_past_window(void)
{
	uint64_t t0 = emu_wait_now_us();

	while (emu_wait_now_us() < t0 + SPIN + 10)
		;
}

START_TEST(test_loop_spins_then_sleeps)
{
	struct emu_wait_loop wl;
	struct emu_wait w;
	struct fake f;
	uv_loop_t loop;

	wait_init(&wl, &w, &f, &loop);
	f.work = 3;
	/* Work found: the loop must not block (NOWAIT returns at once
	 * either way; the idle handle is what a blocking run would see). */
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert(wl.spinning);
	ck_assert_uint_eq(f.sleeps, 0);
	ck_assert_uint_eq(f.status.daemon_asleep, 0);
	while (f.work)
		uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert(wl.spinning);
	ck_assert_uint_eq(f.passes_asleep, 0);
	ck_assert_uint_eq(wl.yields, 0); /* every pass had work */

	/* Idle for longer than the spin window: publish asleep, look once
	 * more with the flag set, then block. */
	spin_past_window();
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(f.passes_asleep, 1);
	ck_assert(!wl.spinning);
	ck_assert_uint_eq(f.sleeps, 1);
	/* After the wake-up (the check phase) the flag is down again. */
	ck_assert_uint_eq(f.status.daemon_asleep, 0);
	loop_fini(&loop);
}
END_TEST

START_TEST(test_loop_recheck_finds_work)
{
	struct emu_wait_loop wl;
	struct emu_wait w;
	struct fake f;
	uv_loop_t loop;

	wait_init(&wl, &w, &f, &loop);
	/* Nothing on the first look; a producer published just before the
	 * flag went up: the second look finds it and the daemon stays up. */
	f.recheck_work = 1;
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(f.passes_asleep, 1);
	ck_assert(wl.spinning);
	ck_assert_uint_eq(f.sleeps, 0);
	ck_assert_uint_eq(f.status.daemon_asleep, 0);
	loop_fini(&loop);
}
END_TEST

START_TEST(test_loop_sleep_timer)
{
	struct emu_wait_loop wl;
	struct emu_wait w;
	struct fake f;
	uv_loop_t loop;
	uint64_t t0;

	wait_init(&wl, &w, &f, &loop);
	/* A deadline 20 ms away: the loop blocks until then, not forever. */
	t0 = emu_wait_now_us();
	f.deadline = t0 + 20000;
	uv_run(&loop, UV_RUN_ONCE);
	ck_assert_uint_eq(f.sleeps, 1);
	ck_assert_uint_ge(emu_wait_now_us(), t0 + 19000);
	ck_assert_uint_lt(emu_wait_now_us(), t0 + 2000000);
	loop_fini(&loop);
}
END_TEST

START_TEST(test_note_work)
{
	struct emu_wait_loop wl;
	struct emu_wait w;
	uint64_t t0 = emu_wait_now_us();

	memset(&wl, 0, sizeof(wl));
	memset(&w, 0, sizeof(w));
	emu_wait_note_work(&w); /* not started: nothing to note it in */
	w.wl = &wl;
	emu_wait_note_work(&w);
	ck_assert_uint_ge(wl.last_work_us, t0);
	ck_assert_uint_le(wl.last_work_us, emu_wait_now_us());
}
END_TEST

/*
 * Two RNICs on one loop (a daemon hosting both): every iteration passes
 * over both, twice when the first pass found work; while one has work the loop spins without
 * yielding, although the other is idle; the loop sleeps only when both are idle, both flags go up
 * before the last look and both come down after the wake-up; a deadline of either decides the
 * timer.
 */
START_TEST(test_loop_two_rnics)
{
	struct emu_wait_loop wl;
	struct emu_wait w0, w1;
	struct fake f0, f1;
	uv_loop_t loop;
	uint64_t t0;

	member_init(&w0, &f0);
	member_init(&w1, &f1);
	/* The longest window counts; a long one keeps a preempted test
	 * inside it. */
	w1.spin_us = LONG_SPIN;
	loop_init(&wl, &loop);
	emu_wait_start(&w0, &wl, &f0.status);
	emu_wait_start(&w1, &wl, &f1.status);
	ck_assert_uint_eq(wl.spin_us, LONG_SPIN);

	/* Only the second RNIC is busy: no yield in between its passes, and
	 * an iteration whose pass found work passes over both once more at
	 * once (what one RNIC sent the other is read there, net.c). */
	f1.work = 10;
	for (unsigned i = 0; i < 5; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(f0.passes, 10);
	ck_assert_uint_eq(f1.passes, 10);
	ck_assert_uint_eq(f1.work, 0);
	ck_assert_uint_eq(wl.yields, 0);
	ck_assert(wl.spinning);
	/* Both idle, within the window: one yield per iteration, not two. */
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(wl.yields, 1);
	ck_assert_uint_eq(f0.sleeps + f1.sleeps, 0);

	/* Past the window: both flags up for the last look of each, both
	 * counted as a sleep once, both down after the wake-up. */
	t0 = emu_wait_now_us();
	while (emu_wait_now_us() < t0 + LONG_SPIN + 10)
		;
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(f0.passes_asleep, 1);
	ck_assert_uint_eq(f1.passes_asleep, 1);
	ck_assert_uint_eq(f0.sleeps, 1);
	ck_assert_uint_eq(f1.sleeps, 1);
	ck_assert(!wl.spinning);
	ck_assert_uint_eq(f0.status.daemon_asleep, 0);
	ck_assert_uint_eq(f1.status.daemon_asleep, 0);

	/* The last look finds work on the second only: both stay awake. */
	f1.recheck_work = 1;
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(f0.passes_asleep, 2);
	ck_assert_uint_eq(f1.passes_asleep, 2);
	ck_assert(wl.spinning);
	ck_assert_uint_eq(f0.sleeps + f1.sleeps, 2);

	/* Idle again, the first has no deadline, the second one 20 ms away:
	 * the loop blocks until then, not forever. (The first iteration
	 * stops spinning; libuv's UV_RUN_ONCE blocks only in an iteration
	 * that starts with no idle handle active.) */
	t0 = emu_wait_now_us();
	while (emu_wait_now_us() < t0 + LONG_SPIN + 10)
		;
	t0 = emu_wait_now_us();
	f1.deadline = t0 + 20000;
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert(!wl.spinning);
	uv_run(&loop, UV_RUN_ONCE);
	ck_assert_uint_eq(f0.sleeps, 3);
	ck_assert_uint_eq(f1.sleeps, 3);
	ck_assert_uint_ge(emu_wait_now_us(), t0 + 19000);
	ck_assert_uint_lt(emu_wait_now_us(), t0 + 2000000);
	loop_fini(&loop);
}
END_TEST

/*
 * A wake-up by I/O (a doorbell, a datagram): the callback runs before the
 * check phase, while the flags still say "asleep", and every producer that
 * posts meanwhile would ring its doorbell again (a system call per post).
 * emu_wait_awake, the callback's first step, takes down the flags of every
 * RNIC of the loop at once.
 */
struct io_probe {
	struct emu_wait *w;
	struct fake *f[2];
	int fd;
	unsigned calls;
	uint32_t flag_at_entry[2];
	uint32_t flag_after[2];
};

static void on_probe(uv_poll_t *h, int status, int events)
{
	struct io_probe *p = h->data;
	uint64_t v;

	(void)status;
	(void)events;
	ck_assert_int_eq(read(p->fd, &v, sizeof(v)), sizeof(v));
	for (int i = 0; i < 2; i++)
		p->flag_at_entry[i] =
		    __atomic_load_n(&p->f[i]->status.daemon_asleep, __ATOMIC_SEQ_CST);
	emu_wait_awake(p->w);
	for (int i = 0; i < 2; i++)
		p->flag_after[i] =
		    __atomic_load_n(&p->f[i]->status.daemon_asleep, __ATOMIC_SEQ_CST);
	p->calls++;
}

START_TEST(test_loop_awake_in_io_callback)
{
	struct emu_wait_loop wl;
	struct emu_wait w0, w1;
	struct fake f0, f1;
	struct io_probe probe = {.w = &w1, .f = {&f0, &f1}};
	uv_loop_t loop;
	uv_poll_t poll;
	uint64_t one = 1;
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	probe.fd = fd;
	member_init(&w0, &f0);
	member_init(&w1, &f1);
	loop_init(&wl, &loop);
	emu_wait_start(&w0, &wl, &f0.status);
	emu_wait_start(&w1, &wl, &f1.status);
	ck_assert_int_eq(uv_poll_init(&loop, &poll, fd), 0);
	poll.data = &probe;
	ck_assert_int_eq(uv_poll_start(&poll, UV_READABLE, on_probe), 0);

	/* Idle past the window; the producer rings after the flags went up
	 * (here: before the iteration, which sees the fd readable at once). */
	spin_past_window();
	ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
	uv_run(&loop, UV_RUN_ONCE);
	ck_assert_uint_eq(probe.calls, 1);
	ck_assert_uint_eq(f0.sleeps, 1);
	ck_assert_uint_eq(f1.sleeps, 1);
	ck_assert_uint_eq(probe.flag_at_entry[0], 1);
	ck_assert_uint_eq(probe.flag_at_entry[1], 1);
	ck_assert_uint_eq(probe.flag_after[0], 0);
	ck_assert_uint_eq(probe.flag_after[1], 0);

	/* Awake already: nothing changes, and a member not started is left
	 * alone. */
	emu_wait_awake(&w0);
	ck_assert_uint_eq(f0.status.daemon_asleep, 0);
	memset(&w0, 0, sizeof(w0));
	emu_wait_awake(&w0);
	uv_close((uv_handle_t *)&poll, NULL);
	loop_fini(&loop);
	close(fd);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dp_wait");
	TCase *tc = tcase_create("decide");
	TCase *tl = tcase_create("loop");

	tcase_add_test(tc, test_spin_while_recent);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_contended);
	tcase_add_test(tc, test_deadlines);
	tcase_add_test(tc, test_note_work);
	suite_add_tcase(s, tc);
	tcase_add_test(tl, test_loop_spins_then_sleeps);
	tcase_add_test(tl, test_loop_recheck_finds_work);
	tcase_add_test(tl, test_loop_sleep_timer);
	tcase_add_test(tl, test_loop_two_rnics);
	tcase_add_test(tl, test_loop_awake_in_io_callback);
	suite_add_tcase(s, tl);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
