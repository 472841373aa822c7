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
 *    so do UDP datagrams and control requests.
 */
#define _GNU_SOURCE
#include <sched.h>
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

static void set_asleep(struct emu_wait *w, uint32_t v)
{
	__atomic_store_n(&w->status->daemon_asleep, v, __ATOMIC_SEQ_CST);
}

static void spin(struct emu_wait *w)
{
	if (!w->spinning) {
		uv_idle_start(&w->idle, on_idle);
		w->spinning = true;
	}
}

bool emu_wait_contended(struct emu_wait *w, uint64_t start_us, uint64_t end_us)
{
	const unsigned keep = EMU_WAIT_CONTENDED_YIELDS - 1;
	uint64_t oldest = w->long_yield_us[keep - 1];
	unsigned i;

	if (end_us - start_us < EMU_WAIT_CONTENDED_US)
		return false;
	for (i = keep - 1; i > 0; i--)
		w->long_yield_us[i] = w->long_yield_us[i - 1];
	w->long_yield_us[0] = end_us;
	return oldest && end_us - oldest <= EMU_WAIT_CONTENDED_WINDOW_US;
}

/*
 * Give the CPU to whoever else wants it. If something kept taking it for
 * whole scheduler slices (several long yields in a short while), a
 * CPU-bound process shares our cores: a spinning daemon then only delays
 * the process it waits for (which a wake-up would have preempted in
 * favour of a sleeping daemon), so spinning stops for a while.
 */
static void yield(struct emu_wait *w, uint64_t now)
{
	uint64_t after;

	sched_yield();
	after = emu_wait_now_us();
	if (emu_wait_contended(w, now, after))
		w->backoff_until_us = after + EMU_WAIT_BACKOFF_US;
}

static void on_prepare(uv_prepare_t *h)
{
	struct emu_wait *w = h->data;
	unsigned work = w->poll(w->arg);
	uint64_t now = emu_wait_now_us();
	int64_t tmo;

	if (work)
		w->last_work_us = now;
	if (emu_wait_decide(now, w->last_work_us, w->spin_us, w->backoff_until_us,
			    w->next_deadline(w->arg), &tmo) == EMU_WAIT_SPIN) {
		spin(w);
		if (!work)
			yield(w, now);
		return;
	}
	/* Publish "asleep", then look once more (pairs with shim_doorbell). */
	set_asleep(w, 1);
	uroce_fence();
	if (w->poll(w->arg)) {
		set_asleep(w, 0);
		w->last_work_us = emu_wait_now_us();
		spin(w);
		return;
	}
	if (w->spinning) {
		uv_idle_stop(&w->idle);
		w->spinning = false;
	}
	if (tmo >= 0)
		uv_timer_start(&w->timer, on_timer, (uint64_t)tmo, 0);
	else
		uv_timer_stop(&w->timer);
	if (w->sleeps)
		(*w->sleeps)++;
}

static void on_check(uv_check_t *h)
{
	struct emu_wait *w = h->data;

	if (__atomic_load_n(&w->status->daemon_asleep, __ATOMIC_RELAXED))
		set_asleep(w, 0);
}

void emu_wait_note_work(struct emu_wait *w)
{
	w->last_work_us = emu_wait_now_us();
}

void emu_wait_start(struct emu_wait *w, uv_loop_t *loop, struct uroce_status_page *status)
{
	w->loop = loop;
	w->status = status;
	w->spinning = false;
	uv_idle_init(loop, &w->idle);
	uv_timer_init(loop, &w->timer);
	uv_prepare_init(loop, &w->prepare);
	w->prepare.data = w;
	uv_prepare_start(&w->prepare, on_prepare);
	uv_check_init(loop, &w->check);
	w->check.data = w;
	uv_check_start(&w->check, on_check);
	/* None of them alone keeps the loop alive. */
	uv_unref((uv_handle_t *)&w->prepare);
	uv_unref((uv_handle_t *)&w->check);
	uv_unref((uv_handle_t *)&w->timer);
}
