/* SPDX-License-Identifier: MIT */
/*
 * The transport's timers: each QP has at most one deadline (the engine's
 * arm_timer op: retransmission or RNR wait), kept in the device's list of
 * armed QPs. Every data-path pass fires the expired ones with microsecond
 * precision while the daemon spins; before it sleeps, wait.c asks for the
 * earliest deadline and sets one libuv timer (millisecond resolution, the
 * engine tolerates a late or early call). A QP's deadline is cancelled
 * before the QP is freed.
 *
 * With many QPs armed (one per QP with packets in flight: a thousand under
 * ib_write_bw -q 1000) a pass must not walk them all: dev->timer_min is a
 * lower bound of the deadlines (exact after each walk, lowered by an earlier
 * arming, left as it is by a later one or a cancel), and the list is walked
 * only once the clock passes it.
 *
 * Before timers fire, the pass reads what waits in the socket
 * (datapath.c, net.c emu_net_receive_before_timers): a daemon that was
 * descheduled or stopped for longer than a retransmission timeout finds
 * the ACKs that came meanwhile there, and they, not a resend, settle the
 * QPs they answer.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "dp.h"

void emu_timer_arm(struct emu_qp *qp, uint64_t deadline_us)
{
	struct emu_dev *dev = qp->obj.ctx->dev;

	qp->deadline_us = deadline_us;
	if (!deadline_us) {
		emu_list_del(&qp->timer_link);
		return;
	}
	if (emu_list_empty(&qp->timer_link))
		emu_list_add_tail(&dev->timer_qps, &qp->timer_link);
	if (!dev->timer_min || deadline_us < dev->timer_min)
		dev->timer_min = deadline_us;
}

/* Has the clock passed the bound? (else no timer can be due) */
static bool timer_bound_passed(const struct emu_dev *dev, uint64_t now_us)
{
	return dev->timer_min && dev->timer_min <= now_us;
}

/* The exact earliest deadline, which becomes the bound. */
static uint64_t timer_walk(struct emu_dev *dev)
{
	const struct emu_list *pos;
	uint64_t min = 0;

	for (pos = dev->timer_qps.next; pos != &dev->timer_qps; pos = pos->next) {
		const struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, timer_link);

		if (!min || qp->deadline_us < min)
			min = qp->deadline_us;
	}
	dev->timer_min = min;
	return min;
}

bool emu_timer_due(struct emu_dev *dev, uint64_t now_us)
{
	/* The bound passed: is a deadline really due, or did they all move on? */
	return timer_bound_passed(dev, now_us) && timer_walk(dev) && dev->timer_min <= now_us;
}

void emu_timer_cancel(struct emu_qp *qp)
{
	qp->deadline_us = 0;
	emu_list_del(&qp->timer_link);
}

unsigned emu_timer_expire(struct emu_dev *dev, uint64_t now_us)
{
	struct emu_list due, *pos, *tmp;
	uint64_t min = 0;
	unsigned n = 0;

	if (!timer_bound_passed(dev, now_us))
		return 0;
	/* Collect first: firing one may re-arm it (with a later deadline,
	 * which lowers timer_min again if it is the earliest). */
	emu_list_init(&due);
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &dev->timer_qps)
	{
		struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, timer_link);

		if (qp->deadline_us <= now_us) {
			emu_list_del(&qp->timer_link);
			emu_list_add_tail(&due, &qp->timer_link);
		} else if (!min || qp->deadline_us < min) {
			min = qp->deadline_us;
		}
	}
	dev->timer_min = min;
	while (!emu_list_empty(&due)) {
		struct emu_qp *qp = EMU_CONTAINER_OF(due.next, struct emu_qp, timer_link);

		emu_list_del(&qp->timer_link);
		qp->deadline_us = 0;
		dev->dcnt[EMU_DCNT_TIMER_FIRES]++;
		xport_timeout(&qp->x);
		n++;
	}
	return n;
}

uint64_t emu_timer_next(struct emu_dev *dev)
{
	/* Before a sleep: the exact earliest, which also tightens the bound. */
	return timer_walk(dev);
}
