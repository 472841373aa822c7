/* SPDX-License-Identifier: MIT */
/*
 * How the daemon waits for work: the whole strategy is in this file.
 *
 * A sleeping thread costs ~45 us one way to wake on another core, a
 * spinning one nothing (LIMITS.md), but two daemons and two applications
 * share two cores, so nobody may spin forever. The event loop therefore
 * spins (polls the rings, the UDP socket and the timers without blocking)
 * while work is recent, and sleeps otherwise:
 *
 *  - every loop iteration runs one data-path pass (the poll callback) just
 *    before libuv would block;
 *  - while the last work is less than EMU_WAIT_SPIN_US old, or a transport
 *    deadline is less than EMU_WAIT_TIMER_SPIN_US away (libuv timers only
 *    have millisecond resolution), an idle handle keeps the loop from
 *    blocking; a pass that found nothing yields the CPU (sched_yield) so a
 *    spinning daemon never starves the process it waits for;
 *  - when such yields let another process run for EMU_WAIT_CONTENDED_US
 *    or more EMU_WAIT_CONTENDED_YIELDS times within
 *    EMU_WAIT_CONTENDED_WINDOW_US, something that does not yield keeps
 *    taking the CPU for whole scheduler slices (a CPU-bound neighbour;
 *    one long yield alone is a program's busy moment, an interrupt or the
 *    hypervisor, a few a second in a latency test): the scheduler then serves a
 *    woken sleeper at once but a spinner only when its time slice comes
 *    (milliseconds), so the daemon stops spinning for EMU_WAIT_BACKOFF_US
 *    and sleeps whenever it has nothing to do. The threads of uroce itself
 *    do not trigger it: programs polling their CQs through the shim yield
 *    every few dozen empty polls (verbs-shim/cq.c) and daemons whenever a
 *    pass is idle, so with two daemons and two polling programs on two
 *    cores a yield comes back within tens of microseconds, and backing
 *    off there would only put a wake-up into every hop;
 *  - otherwise the daemon publishes "asleep" in the status page, makes a
 *    full fence and looks at the rings once more (a producer that published
 *    work before it could see the flag is caught there: the shim's doorbell
 *    makes the mirror-image store, fence, load), and only then blocks, with
 *    one libuv timer for the earliest transport deadline. Producers that
 *    see the flag ring their context's doorbell eventfd, which wakes it;
 *    so do UDP datagrams and control requests. The flag comes down in the
 *    first step of the callback that handles the wake-up
 *    (emu_wait_awake), before its work: a receive callback can run for
 *    hundreds of microseconds, and a producer that still saw "asleep"
 *    would make a system call for every post meanwhile.
 *
 * A daemon that hosts several RNICs runs them on one loop and one thread,
 * and decides for all of them at once (struct emu_wait_loop): each
 * iteration passes over every RNIC, yields at most once and only when none
 * had work, and sleeps only when all are idle, with every status page
 * saying so. Deciding per RNIC would yield in the middle of a hop between
 * two RNICs of the process, whenever the one not yet reached was idle.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <time.h>

#include "dp.h"

uint64_t emu_wait_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

enum emu_wait_action emu_wait_decide(uint64_t now_us, uint64_t last_work_us, uint64_t spin_us,
				     uint64_t backoff_until_us, uint64_t deadline_us,
				     int64_t *timeout_ms)
{
	*timeout_ms = -1;
	if (now_us < last_work_us + spin_us && now_us >= backoff_until_us)
		return EMU_WAIT_SPIN;
	if (!deadline_us)
		return EMU_WAIT_SLEEP;
	if (deadline_us <= now_us + EMU_WAIT_TIMER_SPIN_US)
		return EMU_WAIT_SPIN;
	/* Round up: waking before the deadline would only spin again. */
	*timeout_ms = (int64_t)((deadline_us - now_us + 999) / 1000);
	return EMU_WAIT_SLEEP;
}

static void on_idle(uv_idle_t *h)
{
	(void)h; /* its being active is what keeps the loop from blocking */
}

static void on_timer(uv_timer_t *h)
{
	(void)h; /* the pass after the wake-up fires the transport timers */
}

static void set_asleep(struct emu_wait_loop *wl, uint32_t v)
{
	for (struct emu_wait *m = wl->members; m; m = m->next)
		__atomic_store_n(&m->status->daemon_asleep, v, __ATOMIC_SEQ_CST);
}

static void spin(struct emu_wait_loop *wl)
{
	if (!wl->spinning) {
		uv_idle_start(&wl->idle, on_idle);
		wl->spinning = true;
	}
}

/* One pass over every member's data path: the work they found. */
static unsigned poll_all(struct emu_wait_loop *wl)
{
	unsigned work = 0;

	for (struct emu_wait *m = wl->members; m; m = m->next)
		work += m->poll(m->arg);
	return work;
}

/* The earliest transport deadline of any member (0: none). */
static uint64_t next_deadline(struct emu_wait_loop *wl)
{
	uint64_t first = 0;

	for (struct emu_wait *m = wl->members; m; m = m->next) {
		uint64_t d = m->next_deadline(m->arg);

		if (d && (!first || d < first))
			first = d;
	}
	return first;
}

bool emu_wait_contended(struct emu_wait_loop *wl, uint64_t start_us, uint64_t end_us)
{
	const unsigned keep = EMU_WAIT_CONTENDED_YIELDS - 1;
	uint64_t oldest = wl->long_yield_us[keep - 1];
	unsigned i;

	if (end_us - start_us < EMU_WAIT_CONTENDED_US)
		return false;
	for (i = keep - 1; i > 0; i--)
		wl->long_yield_us[i] = wl->long_yield_us[i - 1];
	wl->long_yield_us[0] = end_us;
	return oldest && end_us - oldest <= EMU_WAIT_CONTENDED_WINDOW_US;
}

/*
 * Give the CPU to whoever else wants it. If something kept taking it for
 * whole scheduler slices (several long yields in a short while), a
 * CPU-bound process shares our cores: a spinning daemon then only delays
 * the process it waits for (which a wake-up would have preempted in
 * favour of a sleeping daemon), so spinning stops for a while.
 */
static void yield(struct emu_wait_loop *wl, uint64_t now)
{
	uint64_t after;

	sched_yield();
	wl->yields++;
	after = emu_wait_now_us();
	if (emu_wait_contended(wl, now, after))
		wl->backoff_until_us = after + EMU_WAIT_BACKOFF_US;
}

/*
 * Every loop iteration, just before libuv would block: one pass over every
 * RNIC, then one decision for all of them. A daemon hosting several RNICs
 * thus yields at most once per iteration, and only when none of them found
 * work (a pass of one RNIC that is idle while the other is busy must not
 * hand the CPU away in the middle of a hop between them), and it sleeps
 * only when all of them are idle.
 */
static void on_prepare(uv_prepare_t *h)
{
	struct emu_wait_loop *wl = h->data;
	unsigned work = poll_all(wl);
	uint64_t now;
	int64_t tmo;

	/* What one RNIC of the daemon just sent another that the loop passed
	 * already (or itself) is read by a second pass, not after an epoll. */
	if (work)
		work += poll_all(wl);
	now = emu_wait_now_us();

	if (work)
		wl->last_work_us = now;
	if (emu_wait_decide(now, wl->last_work_us, wl->spin_us, wl->backoff_until_us,
			    next_deadline(wl), &tmo) == EMU_WAIT_SPIN) {
		spin(wl);
		if (!work)
			yield(wl, now);
		return;
	}
	/* Publish "asleep", then look once more (pairs with shim_doorbell). */
	set_asleep(wl, 1);
	uroce_fence();
	if (poll_all(wl)) {
		set_asleep(wl, 0);
		wl->last_work_us = emu_wait_now_us();
		spin(wl);
		return;
	}
	if (wl->spinning) {
		uv_idle_stop(&wl->idle);
		wl->spinning = false;
	}
	if (tmo >= 0)
		uv_timer_start(&wl->timer, on_timer, (uint64_t)tmo, 0);
	else
		uv_timer_stop(&wl->timer);
	for (struct emu_wait *m = wl->members; m; m = m->next)
		if (m->sleeps)
			(*m->sleeps)++;
}

/* The flags go up together and come down together. */
static void awake(struct emu_wait_loop *wl)
{
	if (wl->members && __atomic_load_n(&wl->members->status->daemon_asleep, __ATOMIC_RELAXED))
		set_asleep(wl, 0);
}

/* After any wake-up (a timer, a control request), at the latest. */
static void on_check(uv_check_t *h)
{
	awake(h->data);
}

/*
 * An I/O callback's first step after a sleep: the flag comes down before
 * the work, not after it (on_check), so that producers stop ringing
 * doorbells while the daemon is plainly awake. Safe: the daemon looks at
 * every ring again before it next blocks (on_prepare).
 */
void emu_wait_awake(struct emu_wait *w)
{
	if (w->wl)
		awake(w->wl);
}

void emu_wait_note_work(struct emu_wait *w)
{
	if (w->wl)
		w->wl->last_work_us = emu_wait_now_us();
}

void emu_wait_loop_init(struct emu_wait_loop *wl, uv_loop_t *loop)
{
	memset(wl, 0, sizeof(*wl));
	wl->loop = loop;
	uv_idle_init(loop, &wl->idle);
	uv_timer_init(loop, &wl->timer);
	uv_prepare_init(loop, &wl->prepare);
	wl->prepare.data = wl;
	uv_prepare_start(&wl->prepare, on_prepare);
	uv_check_init(loop, &wl->check);
	wl->check.data = wl;
	uv_check_start(&wl->check, on_check);
	/* None of them alone keeps the loop alive. */
	uv_unref((uv_handle_t *)&wl->prepare);
	uv_unref((uv_handle_t *)&wl->check);
	uv_unref((uv_handle_t *)&wl->timer);
}

void emu_wait_start(struct emu_wait *w, struct emu_wait_loop *wl, struct uroce_status_page *status)
{
	struct emu_wait **tail = &wl->members;

	w->wl = wl;
	w->status = status;
	w->next = NULL;
	while (*tail)
		tail = &(*tail)->next;
	*tail = w;
	if (w->spin_us > wl->spin_us)
		wl->spin_us = w->spin_us;
	/* A member that joins a sleeping loop starts with the others' flag. */
	if (wl->members != w)
		__atomic_store_n(
		    &status->daemon_asleep,
		    __atomic_load_n(&wl->members->status->daemon_asleep, __ATOMIC_SEQ_CST),
		    __ATOMIC_SEQ_CST);
}
