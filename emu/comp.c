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
 * (PROTOCOL.md 7). It never sends packets itself: retries go through
 * req.c's go-back-N.
 */
#include <errno.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/ext.h>
#include <wire/psn.h>
#include "xport.h"

enum emu_comp_psn emu_comp_check_psn(uint32_t psn, uint32_t comp_psn, uint32_t last_psn,
				     bool all_sent, bool rd_atomic)
{
	int32_t d;

	/* PROTOCOL.md 7, rxe check_psn. */
	if (wire_psn_cmp(psn, last_psn) > 0) {
		if (!all_sent)
			return EMU_COMP_PSN_BOGUS;
		return rd_atomic ? EMU_COMP_PSN_IMPLIED_NAK : EMU_COMP_PSN_COMPLETE_PREV;
	}
	d = wire_psn_cmp(psn, comp_psn);
	if (d < 0)
		return EMU_COMP_PSN_STALE;
	if (d > 0 && rd_atomic)
		return EMU_COMP_PSN_GAP;
	return EMU_COMP_PSN_PROCESS;
}

void emu_comp_reset(struct emu_xqp *qp)
{
	memset(&qp->comp, 0, sizeof(qp->comp));
	qp->comp.psn = qp->attr.sq_psn;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
}

static uint32_t comp_wc_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case EMU_XWR_RDMA_WRITE:
	case EMU_XWR_RDMA_WRITE_WITH_IMM:
		return EMU_XWC_OP_RDMA_WRITE;
	case EMU_XWR_RDMA_READ:
		return EMU_XWC_OP_RDMA_READ;
	case EMU_XWR_ATOMIC_CMP_AND_SWP:
		return EMU_XWC_OP_COMP_SWAP;
	case EMU_XWR_ATOMIC_FETCH_AND_ADD:
		return EMU_XWC_OP_FETCH_ADD;
	default:
		return EMU_XWC_OP_SEND;
	}
}

/* Outstanding = the oldest WQE has packets on the wire. */
static bool comp_outstanding(const struct emu_xqp *qp)
{
	const struct emu_xswqe *w;

	if (qp->comp.idx == qp->sq_tail)
		return false;
	w = emu_xport_sq_at(qp, qp->comp.idx);
	return w->state == EMU_XWQE_PROCESSING || w->state == EMU_XWQE_PENDING;
}

void emu_comp_rearm(struct emu_xqp *qp)
{
	uint64_t t = emu_xport_timeout_us(qp->attr.timeout);

	if (t && comp_outstanding(qp) && !qp->req.wait_rnr)
		qp->comp.retrans_deadline = qp->dev->ops->now_us(qp->dev->ctx) + t;
	else
		qp->comp.retrans_deadline = 0;
	emu_xport_timer_update(qp);
}

/*
 * Complete the oldest WQE. A CQE is pushed when the WR was signaled, the QP
 * signals all, or it failed (rxe do_complete: error completions are never
 * suppressed). Returns false when the QP went to ERR.
 */
static bool comp_one(struct emu_xqp *qp, struct emu_xswqe *w, uint32_t status)
{
	struct emu_xdev *dev = qp->dev;

	if (qp->sq_sig_all || w->wr.flags & EMU_XSEND_SIGNALED || status != EMU_XWC_SUCCESS) {
		struct emu_xcqe cqe = {
		    .wr_id = w->wr.wr_id,
		    .status = status,
		    .opcode = comp_wc_opcode(w->wr.opcode),
		    .byte_len = status == EMU_XWC_SUCCESS ? w->length : 0,
		    .qp_num = qp->qpn,
		};

		dev->ops->push_cqe(dev->ctx, qp, false, &cqe);
		emu_xport_count(qp, EMU_XCNT_SEND_CQE, 1);
	}
	if (w->state == EMU_XWQE_PENDING && emu_xport_is_rd_atomic(w->wr.opcode) &&
	    qp->req.rd_atomic)
		qp->req.rd_atomic--;
	w->state = EMU_XWQE_POSTED;
	qp->comp.idx++;
	if ((int32_t)(qp->req.idx - qp->comp.idx) < 0)
		qp->req.idx = qp->comp.idx;
	if (status != EMU_XWC_SUCCESS) {
		emu_xport_error(qp);
		return false;
	}
	return true;
}

void emu_comp_drain(struct emu_xqp *qp)
{
	while (qp->comp.idx != qp->sq_tail && qp->attr.state != EMU_XQPS_ERR) {
		struct emu_xswqe *w = emu_xport_sq_at(qp, qp->comp.idx);

		if (w->state == EMU_XWQE_DONE_LOCAL)
			comp_one(qp, w, EMU_XWC_SUCCESS);
		else if (w->state == EMU_XWQE_ERROR)
			comp_one(qp, w, w->status);
		else
			break;
	}
}

void emu_comp_complete(struct emu_xqp *qp, struct emu_xswqe *w, uint32_t status)
{
	if (comp_one(qp, w, status))
		emu_comp_drain(qp);
}

/* Forward progress: fresh retry budgets (rxe reset_retry_counters). */
static void comp_progress(struct emu_xqp *qp, uint32_t next_psn)
{
	qp->comp.psn = next_psn;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.retried = false;
}

/*
 * Retry from comp.psn (go-back-N), spending one of retry_cnt; at zero the
 * oldest WQE fails with IBV_WC_RETRY_EXC_ERR. With `once`, a NAK or implied
 * NAK does not retry again for a PSN already retried: the responder answers
 * a gap only once, so later signals about the same gap are echoes.
 */
static void comp_retry(struct emu_xqp *qp, struct emu_xswqe *w, enum emu_xcnt why, bool once)
{
	if (once && qp->comp.retried && qp->comp.retried_psn == qp->comp.psn)
		return;
	if (!qp->comp.retry_left) {
		emu_comp_complete(qp, w, EMU_XWC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_left--;
	emu_xport_count(qp, why, 1);
	qp->comp.retried = true;
	qp->comp.retried_psn = qp->comp.psn;
	qp->req.need_retry = true;
	qp->comp.retrans_deadline = 0;
	emu_comp_rearm(qp);
}

static uint32_t comp_nak_status(unsigned code)
{
	switch (code) {
	case WIRE_NAK_INVALID_REQUEST:
		return EMU_XWC_REM_INV_REQ_ERR;
	case WIRE_NAK_REMOTE_ACCESS_ERR:
		return EMU_XWC_REM_ACCESS_ERR;
	default:
		/* Remote operational error, and any code we do not know (rxe). */
		return EMU_XWC_REM_OP_ERR;
	}
}

/* Acknowledge: ACK, RNR NAK or NAK for a SEND/WRITE (or a NAK for anything). */
static void comp_ack(struct emu_xqp *qp, struct emu_xswqe *w, const struct emu_xpkt *pkt)
{
	const struct wire_aeth *aeth =
	    (const struct wire_aeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_AETH]);
	uint8_t syn = wire_aeth_get_syndrome(aeth);
	unsigned value = wire_aeth_syndrome_value(syn);
	uint64_t now;

	switch (wire_aeth_syndrome_type(syn)) {
	case WIRE_AETH_ACK:
		emu_xport_count(qp, EMU_XCNT_ACK_RCVD, 1);
		if (emu_xport_is_rd_atomic(w->wr.opcode)) {
			/* Only its own responses complete a READ/atomic. */
			emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_BAD);
			return;
		}
		comp_progress(qp, wire_psn_add(pkt->psn, 1));
		if (pkt->psn == w->last_psn && w->state == EMU_XWQE_PENDING)
			emu_comp_complete(qp, w, EMU_XWC_SUCCESS);
		emu_comp_rearm(qp);
		return;
	case WIRE_AETH_RNR_NAK:
		/* Implicitly acks everything before psn; wait, then resend (PROTOCOL.md 7). */
		emu_xport_count(qp, EMU_XCNT_RNR_NAK_RCVD, 1);
		qp->comp.psn = pkt->psn;
		qp->comp.retried = false;
		if (!qp->comp.rnr_left) {
			emu_comp_complete(qp, w, EMU_XWC_RNR_RETRY_EXC_ERR);
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
		emu_xport_timer_update(qp);
		return;
	case WIRE_AETH_NAK:
		if (value == WIRE_NAK_PSN_SEQ_ERR) {
			emu_xport_count(qp, EMU_XCNT_SEQ_NAK_RCVD, 1);
			if (qp->req.wait_rnr && pkt->psn == qp->comp.psn) {
				/* The responder saw our pipelined packets after its RNR NAK. */
				emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_RNR_WAIT);
				return;
			}
			/* Everything before the expected PSN arrived (rxe check_ack). */
			if (wire_psn_cmp(pkt->psn, qp->comp.psn) > 0) {
				qp->comp.psn = pkt->psn;
				qp->comp.retry_left = qp->attr.retry_cnt;
				qp->comp.rnr_left = qp->attr.rnr_retry;
			}
			comp_retry(qp, w, EMU_XCNT_RETRY_NAK_SEQ, true);
			return;
		}
		emu_xport_count(qp, EMU_XCNT_ERR_NAK_RCVD, 1);
		emu_comp_complete(qp, w, comp_nak_status(value));
		return;
	default:
		emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_BAD);
		return;
	}
}

/* RDMA READ response: place the payload, complete on the last one. */
static void comp_read_resp(struct emu_xqp *qp, struct emu_xswqe *w, const struct emu_xpkt *pkt)
{
	uint32_t pos = wire_psn_sub(pkt->psn, w->first_psn);
	bool start = pkt->mask & WIRE_START_MASK, end = pkt->mask & WIRE_END_MASK;
	uint64_t off = (uint64_t)pos * qp->pmtu;
	uint64_t want;
	int rc;

	if (w->wr.opcode != EMU_XWR_RDMA_READ) {
		/* rxe: a READ response for another request is fatal. */
		emu_comp_complete(qp, w, EMU_XWC_FATAL_ERR);
		return;
	}
	/* First/Only at the READ's first PSN, Last/Only at its last (rxe check_ack). */
	if (start != (pos == 0) || end != (pkt->psn == w->last_psn) || off > w->length) {
		emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_BAD);
		return;
	}
	want = end ? w->length - off : qp->pmtu;
	if (pkt->paylen != want) {
		emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_BAD);
		return;
	}
	if (pkt->mask & WIRE_AETH_MASK) {
		const struct wire_aeth *aeth =
		    (const struct wire_aeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_AETH]);

		if (wire_aeth_syndrome_type(wire_aeth_get_syndrome(aeth)) != WIRE_AETH_ACK) {
			emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_BAD);
			return;
		}
	}
	rc = emu_xport_sge_copy(qp, w->wr.sge, w->wr.num_sge, (uint32_t)off, (void *)pkt->payload,
				pkt->paylen, EMU_XACCESS_LOCAL_WRITE, EMU_XDMA_FROM_BUF);
	if (rc) {
		emu_comp_complete(qp, w, EMU_XWC_LOC_PROT_ERR);
		return;
	}
	comp_progress(qp, wire_psn_add(pkt->psn, 1));
	if (end)
		emu_comp_complete(qp, w, EMU_XWC_SUCCESS);
	emu_comp_rearm(qp);
}

static void comp_atomic_ack(struct emu_xqp *qp, struct emu_xswqe *w, const struct emu_xpkt *pkt)
{
	const struct wire_aeth *aeth =
	    (const struct wire_aeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_AETH]);
	const struct wire_atmack *ack =
	    (const struct wire_atmack *)(pkt->buf + pkt->info->offset[WIRE_HDR_ATMACK]);
	uint64_t orig;
	int rc;

	if (w->wr.opcode != EMU_XWR_ATOMIC_CMP_AND_SWP &&
	    w->wr.opcode != EMU_XWR_ATOMIC_FETCH_AND_ADD) {
		emu_comp_complete(qp, w, EMU_XWC_FATAL_ERR);
		return;
	}
	if (wire_aeth_syndrome_type(wire_aeth_get_syndrome(aeth)) != WIRE_AETH_ACK) {
		emu_xport_drop(qp->dev, qp, EMU_XDROP_RESP_BAD);
		return;
	}
	/* The original value lands in the local buffer in host order, like the target's. */
	orig = wire_atmack_get_orig(ack);
	rc = emu_xport_sge_copy(qp, w->wr.sge, w->wr.num_sge, 0, &orig, sizeof(orig),
				EMU_XACCESS_LOCAL_WRITE, EMU_XDMA_FROM_BUF);
	if (rc) {
		emu_comp_complete(qp, w, EMU_XWC_LOC_PROT_ERR);
		return;
	}
	comp_progress(qp, wire_psn_add(pkt->psn, 1));
	emu_comp_complete(qp, w, EMU_XWC_SUCCESS);
	emu_comp_rearm(qp);
}

void emu_comp_rcv(struct emu_xqp *qp, const struct emu_xpkt *pkt)
{
	struct emu_xdev *dev = qp->dev;

	/* Nothing at or beyond the highest PSN sent can be a real response. */
	if (wire_psn_cmp(pkt->psn, qp->req.hw_psn) >= 0) {
		emu_xport_drop(dev, qp, EMU_XDROP_RESP_BAD);
		return;
	}
	for (;;) {
		struct emu_xswqe *w;
		bool rd_atomic;

		if (qp->attr.state == EMU_XQPS_ERR)
			return;
		if (qp->comp.idx == qp->sq_tail) {
			emu_xport_drop(dev, qp, EMU_XDROP_RESP_NO_WQE);
			break;
		}
		w = emu_xport_sq_at(qp, qp->comp.idx);
		if (w->state != EMU_XWQE_PROCESSING && w->state != EMU_XWQE_PENDING) {
			/* Not (re)sent yet after a rewind: its answers will come again. */
			emu_xport_drop(dev, qp, EMU_XDROP_RESP_NO_WQE);
			break;
		}
		rd_atomic = emu_xport_is_rd_atomic(w->wr.opcode);
		switch (emu_comp_check_psn(pkt->psn, qp->comp.psn, w->last_psn,
					   w->state == EMU_XWQE_PENDING, rd_atomic)) {
		case EMU_COMP_PSN_COMPLETE_PREV:
			comp_progress(qp, wire_psn_add(w->last_psn, 1));
			emu_comp_complete(qp, w, EMU_XWC_SUCCESS);
			continue;
		case EMU_COMP_PSN_IMPLIED_NAK:
			comp_retry(qp, w, EMU_XCNT_RETRY_IMPLIED, true);
			break;
		case EMU_COMP_PSN_STALE:
			emu_xport_drop(dev, qp, EMU_XDROP_RESP_DUP);
			break;
		case EMU_COMP_PSN_GAP:
			emu_xport_drop(dev, qp, EMU_XDROP_RESP_GAP);
			comp_retry(qp, w, EMU_XCNT_RETRY_IMPLIED, true);
			break;
		case EMU_COMP_PSN_BOGUS:
			emu_xport_drop(dev, qp, EMU_XDROP_RESP_BAD);
			break;
		case EMU_COMP_PSN_PROCESS:
			if (w->state == EMU_XWQE_PROCESSING &&
			    wire_psn_cmp(pkt->psn, qp->req.psn) >= 0) {
				/* Answers a packet of the first pass not yet re-sent. */
				emu_xport_drop(dev, qp, EMU_XDROP_RESP_DUP);
				break;
			}
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
	emu_req_run(qp);
}

void emu_comp_timeout(struct emu_xqp *qp, uint64_t now)
{
	if (qp->comp.rnr_deadline && now >= qp->comp.rnr_deadline) {
		qp->comp.rnr_deadline = 0;
		qp->req.wait_rnr = false;
		qp->req.need_retry = true;
		emu_xport_count(qp, EMU_XCNT_RETRY_RNR, 1);
		emu_req_run(qp);
	}
	if (qp->comp.retrans_deadline && now >= qp->comp.retrans_deadline) {
		qp->comp.retrans_deadline = 0;
		if (comp_outstanding(qp)) {
			comp_retry(qp, emu_xport_sq_at(qp, qp->comp.idx), EMU_XCNT_RETRY_TIMEOUT,
				   false);
			emu_req_run(qp);
		}
	}
}
