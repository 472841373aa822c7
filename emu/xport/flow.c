/* SPDX-License-Identifier: MIT */
/*
 * Flow control between RNICs: a device-wide budget of RC request data in
 * flight, and the queue of QPs that wait for it.
 *
 * RoCEv2 over UDP has no link-level flow control (no PFC on a loopback or a
 * plain Ethernet path): whatever the senders put in flight beyond what the
 * receiving socket buffer holds is dropped by the kernel and comes back as
 * retransmissions. One QP never exceeds its window (128 PSNs), but a
 * thousand QPs each filling their window put half a gigabyte in flight.
 * So the device keeps one budget, in bytes of PSNs (path MTU per PSN, as
 * the peer's receive buffer is charged per datagram): a QP may start a new
 * message only while the unacknowledged PSNs of all its QPs, plus the
 * message's own (up to one window), stay within the budget. A message once
 * started is never held back by the budget (its packets beyond the
 * reservation count as they are sent), and neither is a retransmission
 * (already counted), so the retry machinery of req.c and comp.c is
 * untouched. READ requests count the PSNs of their responses, which come
 * back into this device's receive buffer.
 *
 * Fairness: when the budget is exhausted, QPs queue in FIFO order; when
 * acknowledgements free budget, the QPs at the head are woken (scheduled)
 * with a grant for the message they wait to start, one message per turn,
 * and a QP that is not at the head waits even when budget is free. So each
 * QP gets a turn per round of the queue and none starves, whatever the
 * order in which the daemon runs them.
 *
 * The daemon sets the budget from its receive buffer (xport_flow_set_budget);
 * 0 means no limit (the default, and what the engine's unit tests run
 * with). UC and UD are not flow-controlled: nothing acknowledges them.
 */
#include <wire/psn.h>
#include "xport_int.h"

/* Does the QP's state let its requester have anything in flight? */
static bool flow_sending(const struct xport_qp *qp)
{
	uint32_t s = qp->attr.state;

	return xport__reliable(qp) &&
	       (s == UROCE_QPS_RTS || s == UROCE_QPS_SQD || s == UROCE_QPS_SQE);
}

static void flow_unlink(struct xport_qp *qp)
{
	struct xport_flow *f = &qp->dev->flow;

	if (!qp->flow.waiting)
		return;
	if (qp->flow.prev)
		qp->flow.prev->flow.next = qp->flow.next;
	else
		f->head = qp->flow.next;
	if (qp->flow.next)
		qp->flow.next->flow.prev = qp->flow.prev;
	else
		f->tail = qp->flow.prev;
	qp->flow.next = qp->flow.prev = NULL;
	qp->flow.waiting = false;
}

static void flow_enqueue(struct xport_qp *qp, uint64_t need)
{
	struct xport_flow *f = &qp->dev->flow;

	qp->flow.need = need;
	qp->flow.waiting = true;
	qp->flow.next = NULL;
	qp->flow.prev = f->tail;
	if (f->tail)
		f->tail->flow.next = qp;
	else
		f->head = qp;
	f->tail = qp;
	xport__count(qp, XPORT_CNT_FLOW_WAIT, 1);
}

/* Give up a turn that was granted and not used; true when there was one. */
static bool flow_drop_turn(struct xport_qp *qp)
{
	if (!qp->flow.turn)
		return false;
	qp->flow.turn = false;
	qp->dev->flow.granted -= qp->flow.need;
	return true;
}

/*
 * Wake waiters, oldest first, while the budget has room for the message
 * each waits to start (a message larger than the whole budget goes when
 * nothing else is in flight or granted).
 */
static void flow_wake(struct xport_dev *dev)
{
	struct xport_flow *f = &dev->flow;
	struct xport_qp *q;

	while ((q = f->head)) {
		uint64_t used = f->inflight + f->granted;

		if (used && used + q->flow.need > f->budget)
			break;
		flow_unlink(q);
		q->flow.turn = true;
		f->granted += q->flow.need;
		xport__schedule(q);
	}
}

void xport_flow_set_budget(struct xport_dev *dev, uint64_t bytes)
{
	dev->flow.budget = bytes;
	flow_wake(dev);
}

void xport__flow_sync(struct xport_qp *qp)
{
	struct xport_flow *f = &qp->dev->flow;
	uint64_t old = qp->flow.charge, charge = 0;
	uint32_t end = qp->flow.end_psn;
	bool dropped = false;

	/* A reservation lies at most one window beyond the highest PSN sent;
	 * anything else is left over from before a reset or a new SQ PSN. */
	if (wire_psn_cmp(end, qp->req.hw_psn) < 0 ||
	    wire_psn_sub(end, qp->req.hw_psn) > XPORT_MAX_UNACKED_PSNS)
		end = qp->req.hw_psn;
	qp->flow.end_psn = end;
	if (flow_sending(qp) && wire_psn_cmp(end, qp->comp.psn) > 0)
		charge = (uint64_t)wire_psn_sub(end, qp->comp.psn) * qp->pmtu;
	/* Only RTS starts messages: a turn is of no use elsewhere. */
	if (qp->attr.state != UROCE_QPS_RTS)
		dropped = flow_drop_turn(qp);
	qp->flow.charge = charge;
	f->inflight = f->inflight - old + charge;
	if (charge < old || dropped)
		flow_wake(qp->dev);
}

/* Budget a message of w's PSNs needs (up to one window's). */
static uint64_t flow_need(const struct xport_qp *qp, const struct xport_swqe *w)
{
	uint32_t n = uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_ATOMIC
			 ? 1
			 : xport__req_npkts(w->length, qp->pmtu);

	if (n > XPORT_MAX_UNACKED_PSNS)
		n = XPORT_MAX_UNACKED_PSNS;
	return (uint64_t)n * qp->pmtu;
}

/* Budget that is not the QP's to take: others wait first, or it is used up. */
static bool flow_blocked(const struct xport_flow *f, uint64_t need)
{
	return f->head || (f->inflight + f->granted && f->inflight + f->granted + need > f->budget);
}

/* Nothing to decide: no budget, UC/UD, or PSNs sent before (a retransmission). */
static bool flow_exempt(const struct xport_qp *qp)
{
	return !qp->dev->flow.budget || !xport__reliable(qp) ||
	       wire_psn_cmp(qp->req.psn, qp->req.hw_psn) < 0;
}

bool xport__flow_admit(struct xport_qp *qp, const struct xport_swqe *w)
{
	uint64_t need;

	if (flow_exempt(qp))
		return true;
	need = flow_need(qp, w);
	if (qp->flow.turn) {
		flow_drop_turn(qp);
	} else if (qp->flow.waiting) {
		return false;
	} else if (flow_blocked(&qp->dev->flow, need)) {
		flow_enqueue(qp, need);
		return false;
	}
	qp->flow.end_psn = wire_psn_add(qp->req.psn, (uint32_t)(need / qp->pmtu));
	xport__flow_sync(qp);
	return true;
}

bool xport__flow_would_admit(const struct xport_qp *qp, const struct xport_swqe *w)
{
	if (flow_exempt(qp) || qp->flow.turn)
		return true;
	return !qp->flow.waiting && !flow_blocked(&qp->dev->flow, flow_need(qp, w));
}

void xport__flow_forget(struct xport_qp *qp)
{
	struct xport_flow *f = &qp->dev->flow;

	flow_unlink(qp);
	flow_drop_turn(qp);
	f->inflight -= qp->flow.charge;
	qp->flow.charge = 0;
	qp->flow.end_psn = qp->req.hw_psn;
	flow_wake(qp->dev);
}
