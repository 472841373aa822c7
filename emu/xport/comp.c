/* SPDX-License-Identifier: MIT */
/*
 * The completer: turns responses (Acknowledge, NAKs, RNR NAKs, READ
 * responses, Atomic Acknowledge) into send completions. ACKs are
 * cumulative: a response beyond a finished SEND/WRITE completes it (ACK
 * coalescing), while a response beyond a READ/atomic whose own response
 * never came is an implied NAK and triggers a retry. It places READ
 * response payloads and atomic results in local memory, runs the
 * retransmission timer (4.096 us x 2^timeout, retry_cnt) and the RNR wait
 * (rnr_retry, 7 = forever), and maps every NAK to its IBV_WC_* status
 * (PROTOCOL.md 7). A response is completed where recv.c parsed it; one
 * that finds others still waiting in the QP's queue (qp->comp_q) is copied
 * there and completed in arrival order (rxe rxe_comp_queue_pkt); the QP
 * state is checked again when a queued response's turn comes. It never sends
 * packets itself: retries go through req.c's go-back-N.
 */
#include <errno.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/ext.h>
#include <wire/psn.h>
#include "xport_int.h"

enum xport__comp_psn xport__comp_check_psn(uint32_t psn, uint32_t comp_psn, uint32_t last_psn,
					   bool all_sent, bool rd_atomic)
{
	int32_t d;

	/* PROTOCOL.md 7, rxe check_psn. */
	if (wire_psn_cmp(psn, last_psn) > 0) {
		if (!all_sent)
			return XPORT__COMP_PSN_BOGUS;
		return rd_atomic ? XPORT__COMP_PSN_IMPLIED_NAK : XPORT__COMP_PSN_COMPLETE_PREV;
	}
	d = wire_psn_cmp(psn, comp_psn);
	if (d < 0)
		return XPORT__COMP_PSN_STALE;
	if (d > 0 && rd_atomic)
		return XPORT__COMP_PSN_GAP;
	return XPORT__COMP_PSN_PROCESS;
}

void xport__comp_reset(struct xport_qp *qp)
{
	xport__pktq_clear(&qp->comp_q);
	memset(&qp->comp, 0, sizeof(qp->comp));
	qp->comp.psn = qp->attr.sq_psn;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
}

/* The completion opcode of a send WQE (wr_opcode.h); a value outside the
 * list (a WQE the daemon poisoned) completes, with its error, as a SEND. */
static uint32_t comp_wc_opcode(uint32_t wr_opcode)
{
	const struct uroce_wr_info *info = uroce_wr_info(wr_opcode);

	return info ? info->wc_opcode : UROCE_WC_SEND;
}

/* Outstanding = the oldest WQE has packets on the wire. */
static bool comp_outstanding(const struct xport_qp *qp)
{
	const struct xport_swqe *w;

	if (qp->comp.idx == qp->sq_tail)
		return false;
	w = xport__sq_at(qp, qp->comp.idx);
	return w->state == XPORT_WQE_PROCESSING || w->state == XPORT_WQE_PENDING;
}

/*
 * Two timers share the QP's one: the IBA timeout (4.096 us x 2^timeout,
 * IBA 9.7.6.1: restarted by progress and by each retry it causes; its
 * expiries alone spend retry_cnt) and the adaptive timer (cc.c, a few round
 * trips; its expiries resend without spending a retry). retrans_deadline
 * is the earlier of the two.
 */
static void comp_set_timers(struct xport_qp *qp, uint64_t now, bool restart_iba)
{
	uint64_t t = xport_timeout_us(qp->attr.timeout), fast;

	if (!t || !comp_outstanding(qp) || qp->req.wait_rnr) {
		qp->comp.retrans_deadline = 0;
		qp->comp.iba_deadline = 0;
	} else {
		if (restart_iba || !qp->comp.iba_deadline)
			qp->comp.iba_deadline = now + t;
		fast = now + xport__cc_rto_us(qp);
		qp->comp.retrans_deadline =
		    fast < qp->comp.iba_deadline ? fast : qp->comp.iba_deadline;
	}
	xport__timer_update(qp);
}

void xport__comp_rearm(struct xport_qp *qp)
{
	comp_set_timers(qp, qp->dev->ops->now_us(qp->dev->ctx), true);
}

void xport__comp_arm(struct xport_qp *qp)
{
	if (!qp->comp.retrans_deadline)
		xport__comp_rearm(qp);
}

/*
 * Complete the oldest WQE. A CQE is pushed when the WR was signaled, the QP
 * signals all, or it failed (rxe do_complete: error completions are never
 * suppressed). Returns false when the QP went to ERR.
 */
static bool comp_one(struct xport_qp *qp, struct xport_swqe *w, uint32_t status)
{
	struct xport_dev *dev = qp->dev;

	if (xport__signaled(qp, w) || status != UROCE_WC_SUCCESS) {
		struct uroce_cqe cqe = {
		    .wr_id = w->wr.wr_id,
		    .status = status,
		    .opcode = comp_wc_opcode(w->wr.opcode),
		    .byte_len = status == UROCE_WC_SUCCESS ? w->length : 0,
		    .qp_num = qp->qpn,
		};

		dev->ops->push_cqe(dev->ctx, qp, false, &cqe);
		xport__count(qp, XPORT_CNT_SEND_CQE, 1);
	}
	if (w->state == XPORT_WQE_PENDING && uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_RD_ATOMIC &&
	    qp->req.rd_atomic)
		qp->req.rd_atomic--;
	w->state = XPORT_WQE_POSTED;
	qp->comp.idx++;
	if ((int32_t)(qp->req.idx - qp->comp.idx) < 0)
		qp->req.idx = qp->comp.idx;
	if (dev->ops->sq_done)
		dev->ops->sq_done(dev->ctx, qp);
	if (status != UROCE_WC_SUCCESS) {
		xport__error(qp);
		return false;
	}
	return true;
}

void xport__comp_drain(struct xport_qp *qp)
{
	while (qp->comp.idx != qp->sq_tail && qp->attr.state != UROCE_QPS_ERR) {
		struct xport_swqe *w = xport__sq_at(qp, qp->comp.idx);

		if (w->state == XPORT_WQE_DONE_LOCAL)
			comp_one(qp, w, UROCE_WC_SUCCESS);
		else if (w->state == XPORT_WQE_ERROR)
			comp_one(qp, w, w->status);
		else
			break;
	}
}

void xport__comp_complete(struct xport_qp *qp, struct xport_swqe *w, uint32_t status)
{
	if (comp_one(qp, w, status))
		xport__comp_drain(qp);
}

/*
 * Forward progress: the responder has everything below next_psn. Fresh
 * retry budgets (IBA 9.7.6.1: the retry counter counts retries without
 * progress; rxe reset_retry_counters, hfi1 do_rc_ack), and the end of a
 * loss recovery once the acknowledged PSN passes its recovery point.
 */
static void comp_progress(struct xport_qp *qp, uint32_t next_psn)
{
	uint64_t now = qp->dev->ops->now_us(qp->dev->ctx);

	if (wire_psn_cmp(next_psn, qp->comp.psn) > 0) {
		/*
		 * The first progress after a NAK rewind: if it came sooner
		 * than any resend could be answered, the original got through
		 * (it was late, not lost) and the window keeps its size (cc.c).
		 */
		if (qp->comp.judge) {
			qp->comp.judge = false;
			if (xport__cc_judge(qp, now - qp->comp.rewind_at))
				xport__count(qp, XPORT_CNT_RETRY_SPURIOUS, 1);
		}
		xport__cc_acked(qp, qp->comp.psn, next_psn, now);
	}
	qp->comp.psn = next_psn;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	if (qp->comp.recovering && wire_psn_cmp(next_psn, qp->comp.recover_psn) >= 0) {
		qp->comp.recovering = false;
		qp->comp.probing = false;
	}
}

/*
 * Has the retransmission of the last rewind had time to reach the
 * responder and be answered? Until then a sequence NAK or an implied NAK
 * inside the rewound range is an echo of the loss being repaired: the
 * responder NAKs each new gap once, and a gap that originals still on the
 * way open (reordering) is closed by the packets already sent again.
 */
static bool comp_retx_overdue(const struct xport_qp *qp, uint64_t now)
{
	uint64_t t = xport__cc_loss_delay_us(qp);

	return !t || now - qp->comp.rewind_at >= t;
}

/*
 * Go back to comp.psn and remember the loss (see struct xport_comp); after
 * a NAK (probe) send only XPORT_RETX_PROBE packets until the answer. A new
 * episode (not a further gap of the one being repaired) sets the recovery
 * point to everything sent so far.
 */
static void comp_rewind(struct xport_qp *qp, uint64_t now, bool probe, bool episode)
{
	if (episode || !qp->comp.recovering)
		qp->comp.recover_psn = qp->req.hw_psn;
	qp->comp.recovering = true;
	qp->comp.probing = probe;
	qp->comp.judge = probe;
	qp->comp.rewind_psn = qp->comp.psn;
	qp->comp.rewind_at = now;
	qp->req.need_retry = true;
}

/*
 * A loss at comp.psn: retry from there (go-back-N), spending one of
 * retry_cnt; at zero the oldest WQE fails with IBV_WC_RETRY_EXC_ERR. For a
 * NAK or implied NAK (`nak`) the rewind happens at most once per loss: a
 * signal about a PSN inside the recovery (rewind_psn .. recover_psn) that
 * the requester has already sent again is an echo and changes nothing until
 * that resend is overdue. A further gap inside the recovery that was not
 * sent again yet (the responder held what came after it) is repaired at
 * once but is the same loss episode: the window shrinks once per episode
 * (RFC 5681 fast recovery), again only when a resend was lost. A timeout
 * always retries and starts a new episode.
 */
static void comp_retry(struct xport_qp *qp, struct xport_swqe *w, enum xport_cnt why, bool nak)
{
	uint64_t now = qp->dev->ops->now_us(qp->dev->ctx);
	bool inside = nak && qp->comp.recovering &&
		      wire_psn_cmp(qp->comp.psn, qp->comp.rewind_psn) >= 0 &&
		      wire_psn_cmp(qp->comp.psn, qp->comp.recover_psn) < 0;
	bool overdue = inside && comp_retx_overdue(qp, now);

	if (inside && !overdue && wire_psn_cmp(qp->comp.psn, qp->req.psn) < 0) {
		xport__count(qp, XPORT_CNT_NAK_ECHO, 1);
		return;
	}
	if (!qp->comp.retry_left) {
		xport__comp_complete(qp, w, UROCE_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	xport__count(qp, why, 1);
	if (!nak)
		xport__cc_timeout(qp);
	else if (!inside || overdue)
		xport__cc_loss(qp);
	qp->req.retx_why = (uint8_t)why;
	comp_rewind(qp, now, nak, !inside || overdue);
	comp_set_timers(qp, now, true);
}

/*
 * The adaptive timer expired before the IBA timeout: nothing was
 * acknowledged for a few round trips, so the resend of a loss was lost too
 * or the tail of a burst went missing. Resend from comp.psn at once
 * (go-back-N) without spending retry_cnt: that counts IBA timeouts only, so
 * a QP still fails after (retry_cnt + 1) x the IBA timeout without
 * progress, as the application asked.
 */
static void comp_fast_retry(struct xport_qp *qp, uint64_t now)
{
	xport__count(qp, XPORT_CNT_RETRY_FAST, 1);
	/*
	 * The first expiry is one lost answer or resend (an ACK late on a
	 * path that reorders looks the same): halve, as for a NAK; a second
	 * one in a row means the path is gone for now: the smallest window.
	 */
	if (qp->cc.backoff)
		xport__cc_timeout(qp);
	else
		xport__cc_expired(qp);
	qp->req.retx_why = XPORT_CNT_RETRY_FAST;
	comp_rewind(qp, now, false, true);
	comp_set_timers(qp, now, false);
}

static uint32_t comp_nak_status(unsigned code)
{
	switch (code) {
	case WIRE_NAK_INVALID_REQUEST:
		return UROCE_WC_REM_INV_REQ_ERR;
	case WIRE_NAK_REMOTE_ACCESS_ERR:
		return UROCE_WC_REM_ACCESS_ERR;
	default:
		/* Remote operational error, and any code we do not know (rxe). */
		return UROCE_WC_REM_OP_ERR;
	}
}

/* Acknowledge: ACK, RNR NAK or NAK for a SEND/WRITE (or a NAK for anything). */
static void comp_ack(struct xport_qp *qp, struct xport_swqe *w, const struct xport_pkt *pkt)
{
	const struct wire_aeth *aeth =
	    (const struct wire_aeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_AETH]);
	uint8_t syn = wire_aeth_get_syndrome(aeth);
	unsigned value = wire_aeth_syndrome_value(syn);
	uint64_t now;

	switch (wire_aeth_syndrome_type(syn)) {
	case WIRE_AETH_ACK:
		xport__count(qp, XPORT_CNT_ACK_RCVD, 1);
		if (uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_RD_ATOMIC) {
			/* Only its own responses complete a READ/atomic. */
			xport__drop(qp->dev, qp, XPORT_DROP_RESP_BAD);
			return;
		}
		comp_progress(qp, wire_psn_add(pkt->psn, 1));
		/* Also while it is being sent again: the responder has all of it. */
		if (pkt->psn == w->last_psn)
			xport__comp_complete(qp, w, UROCE_WC_SUCCESS);
		xport__comp_rearm(qp);
		return;
	case WIRE_AETH_RNR_NAK:
		/* Implicitly acks everything before psn; wait, then resend (PROTOCOL.md 7). */
		xport__count(qp, XPORT_CNT_RNR_NAK_RCVD, 1);
		qp->comp.psn = pkt->psn;
		qp->comp.recovering = false;
		qp->comp.probing = false;
		qp->comp.judge = false;
		if (!qp->comp.rnr_left) {
			xport__comp_complete(qp, w, UROCE_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->comp.rnr_left != 7)
			qp->comp.rnr_left--;
		now = qp->dev->ops->now_us(qp->dev->ctx);
		qp->req.wait_rnr = true;
		qp->comp.rnr_deadline = now + wire_aeth_rnr_usec(value);
		if (qp->comp.rnr_deadline == now)
			qp->comp.rnr_deadline++;
		qp->comp.retrans_deadline = 0;
		qp->comp.iba_deadline = 0;
		xport__timer_update(qp);
		return;
	case WIRE_AETH_NAK:
		if (value == WIRE_NAK_PSN_SEQ_ERR) {
			xport__count(qp, XPORT_CNT_SEQ_NAK_RCVD, 1);
			if (qp->req.wait_rnr && pkt->psn == qp->comp.psn) {
				/* The responder saw our pipelined packets after its RNR NAK. */
				xport__drop(qp->dev, qp, XPORT_DROP_RESP_RNR_WAIT);
				return;
			}
			/* Everything before the expected PSN arrived (rxe check_ack). */
			if (wire_psn_cmp(pkt->psn, qp->comp.psn) > 0) {
				qp->comp.psn = pkt->psn;
				qp->comp.retry_left = qp->attr.retry_cnt;
				qp->comp.rnr_left = qp->attr.rnr_retry;
			}
			comp_retry(qp, w, XPORT_CNT_RETRY_NAK_SEQ, true);
			return;
		}
		xport__count(qp, XPORT_CNT_ERR_NAK_RCVD, 1);
		xport__comp_complete(qp, w, comp_nak_status(value));
		return;
	default:
		xport__drop(qp->dev, qp, XPORT_DROP_RESP_BAD);
		return;
	}
}

/* RDMA READ response: place the payload, complete on the last one. */
static void comp_read_resp(struct xport_qp *qp, struct xport_swqe *w, const struct xport_pkt *pkt)
{
	uint32_t pos = wire_psn_sub(pkt->psn, w->first_psn);
	bool start = pkt->mask & WIRE_START_MASK, end = pkt->mask & WIRE_END_MASK;
	uint64_t off = (uint64_t)pos * qp->pmtu;
	uint64_t want;
	int rc;

	if (w->wr.opcode != UROCE_WR_RDMA_READ &&
	    !(uroce_wr_flags(w->wr.opcode) & (UROCE_WR_F_ATOMIC_WRITE | UROCE_WR_F_FLUSH))) {
		/* rxe: a READ response for another request is fatal (an
		 * ATOMIC WRITE or a FLUSH is answered by one of no data). */
		xport__comp_complete(qp, w, UROCE_WC_FATAL_ERR);
		return;
	}
	/* First/Only at the READ's first PSN, Last/Only at its last (rxe check_ack). */
	if (start != (pos == 0) || end != (pkt->psn == w->last_psn) || off > w->length) {
		xport__drop(qp->dev, qp, XPORT_DROP_RESP_BAD);
		return;
	}
	want = end ? w->length - off : qp->pmtu;
	if (pkt->paylen != want) {
		xport__drop(qp->dev, qp, XPORT_DROP_RESP_BAD);
		return;
	}
	if (pkt->mask & WIRE_AETH_MASK) {
		const struct wire_aeth *aeth =
		    (const struct wire_aeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_AETH]);

		if (wire_aeth_syndrome_type(wire_aeth_get_syndrome(aeth)) != WIRE_AETH_ACK) {
			xport__drop(qp->dev, qp, XPORT_DROP_RESP_BAD);
			return;
		}
	}
	rc = xport__sge_copy(qp, w->wr.sge, w->wr.num_sge, (uint32_t)off, (void *)pkt->payload,
			     pkt->paylen, UROCE_ACCESS_LOCAL_WRITE, XPORT_DMA_FROM_BUF);
	if (rc) {
		xport__comp_complete(qp, w, UROCE_WC_LOC_PROT_ERR);
		return;
	}
	comp_progress(qp, wire_psn_add(pkt->psn, 1));
	if (end)
		xport__comp_complete(qp, w, UROCE_WC_SUCCESS);
	xport__comp_rearm(qp);
}

static void comp_atomic_ack(struct xport_qp *qp, struct xport_swqe *w, const struct xport_pkt *pkt)
{
	const struct wire_aeth *aeth =
	    (const struct wire_aeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_AETH]);
	const struct wire_atmack *ack =
	    (const struct wire_atmack *)(pkt->buf + pkt->info->offset[WIRE_HDR_ATMACK]);
	uint64_t orig;
	int rc;

	if (!(uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_ATOMIC)) {
		xport__comp_complete(qp, w, UROCE_WC_FATAL_ERR);
		return;
	}
	if (wire_aeth_syndrome_type(wire_aeth_get_syndrome(aeth)) != WIRE_AETH_ACK) {
		xport__drop(qp->dev, qp, XPORT_DROP_RESP_BAD);
		return;
	}
	/* The original value lands in the local buffer in host order, like the target's. */
	orig = wire_atmack_get_orig(ack);
	rc = xport__sge_copy(qp, w->wr.sge, w->wr.num_sge, 0, &orig, sizeof(orig),
			     UROCE_ACCESS_LOCAL_WRITE, XPORT_DMA_FROM_BUF);
	if (rc) {
		xport__comp_complete(qp, w, UROCE_WC_LOC_PROT_ERR);
		return;
	}
	comp_progress(qp, wire_psn_add(pkt->psn, 1));
	xport__comp_complete(qp, w, UROCE_WC_SUCCESS);
	xport__comp_rearm(qp);
}

/* One response, in its turn. */
static void comp_rcv(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	struct xport_dev *dev = qp->dev;

	/* Nothing at or beyond the highest PSN sent can be a real response. */
	if (wire_psn_cmp(pkt->psn, qp->req.hw_psn) >= 0) {
		xport__drop(dev, qp, XPORT_DROP_RESP_BAD);
		return;
	}
	for (;;) {
		struct xport_swqe *w;
		bool rd_atomic;

		if (qp->attr.state == UROCE_QPS_ERR)
			return;
		if (qp->comp.idx == qp->sq_tail) {
			xport__drop(dev, qp, XPORT_DROP_RESP_NO_WQE);
			break;
		}
		w = xport__sq_at(qp, qp->comp.idx);
		if (w->state != XPORT_WQE_PROCESSING && w->state != XPORT_WQE_PENDING) {
			/* Not started: nothing of it was sent, nothing answers it. */
			xport__drop(dev, qp, XPORT_DROP_RESP_NO_WQE);
			break;
		}
		rd_atomic = uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_RD_ATOMIC;
		/* "All sent" = every PSN of it went out once, rewound or not. */
		switch (xport__comp_check_psn(pkt->psn, qp->comp.psn, w->last_psn,
					      wire_psn_cmp(w->last_psn, qp->req.hw_psn) < 0,
					      rd_atomic)) {
		case XPORT__COMP_PSN_COMPLETE_PREV:
			xport__recv_sport_learn(qp, pkt);
			comp_progress(qp, wire_psn_add(w->last_psn, 1));
			xport__comp_complete(qp, w, UROCE_WC_SUCCESS);
			continue;
		case XPORT__COMP_PSN_IMPLIED_NAK:
			comp_retry(qp, w, XPORT_CNT_RETRY_IMPLIED, true);
			break;
		case XPORT__COMP_PSN_STALE:
			xport__drop(dev, qp, XPORT_DROP_RESP_DUP);
			break;
		case XPORT__COMP_PSN_GAP:
			xport__drop(dev, qp, XPORT_DROP_RESP_GAP);
			comp_retry(qp, w, XPORT_CNT_RETRY_IMPLIED, true);
			break;
		case XPORT__COMP_PSN_BOGUS:
			xport__drop(dev, qp, XPORT_DROP_RESP_BAD);
			break;
		case XPORT__COMP_PSN_PROCESS:
			/* It answers what is outstanding: the peer's port is learned. */
			xport__recv_sport_learn(qp, pkt);
			/*
			 * Also an answer to a packet of an earlier pass that a
			 * rewind would send again: the requester then continues
			 * after it instead (req.c req_seek).
			 */
			if (pkt->mask & WIRE_READ_RESP_MASK)
				comp_read_resp(qp, w, pkt);
			else if (pkt->mask & WIRE_ATMACK_MASK)
				comp_atomic_ack(qp, w, pkt);
			else
				comp_ack(qp, w, pkt);
			break;
		}
		break;
	}
	/* Window, fence or initiator depth may have opened. */
	xport__req_run(qp);
}

static void comp_serve(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	/* recv.c checked the state on arrival; it may have changed since. */
	if (!xport__recv_state_ok(qp->attr.state, pkt->mask)) {
		xport__drop(qp->dev, qp, XPORT_DROP_QP_STATE);
		return;
	}
	if (xport__recv_sport_ok(qp, pkt))
		comp_rcv(qp, pkt);
}

void xport__comp_run(struct xport_qp *qp)
{
	const struct xport_pkt *pkt;

	while ((pkt = xport__pktq_pop(&qp->comp_q)))
		comp_serve(qp, pkt);
}

void xport__comp_queue_pkt(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	/* Nothing ahead of it: completed where recv.c parsed it, without a copy. */
	if (!qp->comp_q.n) {
		comp_serve(qp, pkt);
		return;
	}
	if (xport__pktq_push(&qp->comp_q, pkt)) {
		xport__drop(qp->dev, qp, XPORT_DROP_COMP_BUSY);
		return;
	}
	xport__comp_run(qp);
}

void xport__comp_timeout(struct xport_qp *qp, uint64_t now)
{
	if (qp->comp.rnr_deadline && now >= qp->comp.rnr_deadline) {
		qp->comp.rnr_deadline = 0;
		qp->req.wait_rnr = false;
		qp->req.need_retry = true;
		qp->req.retx_why = XPORT_CNT_RETRY_RNR;
		xport__count(qp, XPORT_CNT_RETRY_RNR, 1);
		xport__req_run(qp);
	}
	if (qp->comp.retrans_deadline && now >= qp->comp.retrans_deadline) {
		qp->comp.retrans_deadline = 0;
		if (!comp_outstanding(qp)) {
			qp->comp.iba_deadline = 0;
		} else if (now >= qp->comp.iba_deadline) {
			comp_retry(qp, xport__sq_at(qp, qp->comp.idx), XPORT_CNT_RETRY_TIMEOUT,
				   false);
			xport__req_run(qp);
		} else {
			comp_fast_retry(qp, now);
			xport__req_run(qp);
		}
	}
}
