/* SPDX-License-Identifier: MIT */
/*
 * Congestion control of the RC requester: the adaptive send window and the
 * round-trip estimate behind the adaptive retransmission timer. The window
 * (cwnd, in packets = PSNs) starts at XPORT_CWND_INIT, so that the first
 * burst of a large message is paced by the ACKs it draws (slow start, and
 * again after the QP was idle for longer than a retransmission timeout),
 * doubles per round trip up to ssthresh, then grows by one packet per
 * window (AIMD, RFC 5681), never beyond XPORT_MAX_UNACKED_PSNS. A loss
 * signalled by a NAK or a first expiry of the adaptive timer halves it,
 * more expiries in a row and IBA timeouts shrink it to XPORT_CWND_MIN; a
 * reduction that proves spurious (the answer came back sooner than any
 * retransmission could have) is undone, and a path where that keeps
 * happening reorders: NAKs stop shrinking the window there. The round-trip time is sampled on
 * one AckReq packet at a time, never on a retransmitted one (Karn), as
 * RFC 6298 describes, and gives the adaptive timeout srtt + 4 rttvar
 * (at least XPORT_RTO_MIN_US, doubled per expiry without progress, never
 * longer than the QP's IBA timeout). None of this is visible on the wire
 * as anything but a valid RC stream: it only decides when the requester
 * sends, which packets carry AckReq (req.c) and when it sends again
 * (comp.c); the retry counter and the IBA timeout are comp.c's.
 */
#include <wire/psn.h>
#include "xport_int.h"

void xport__cc_reset(struct xport_qp *qp)
{
	struct xport_cc *cc = &qp->cc;

	*cc = (struct xport_cc){0};
	cc->cwnd = XPORT_CWND_INIT;
	cc->ssthresh = XPORT_MAX_UNACKED_PSNS;
}

uint32_t xport__cc_window(const struct xport_qp *qp)
{
	return qp->cc.cwnd;
}

uint32_t xport__cc_ack_every(uint32_t cwnd)
{
	uint32_t every = cwnd / 2;

	if (every < 1)
		every = 1;
	return every < XPORT_MAX_PKT_PER_ACK ? every : XPORT_MAX_PKT_PER_ACK;
}

/* srtt + 4 rttvar, at least XPORT_RTO_MIN_US; 0 without a sample. */
static uint64_t cc_rtt_rto(const struct xport_cc *cc)
{
	uint64_t rto;

	if (!cc->rtt_valid)
		return 0;
	rto = (uint64_t)cc->srtt_us + 4ull * cc->rttvar_us;
	return rto > XPORT_RTO_MIN_US ? rto : XPORT_RTO_MIN_US;
}

uint64_t xport__cc_rto_us(const struct xport_qp *qp)
{
	uint64_t t = xport_timeout_us(qp->attr.timeout), rto = cc_rtt_rto(&qp->cc);

	if (!t)
		return 0;
	if (!rto)
		return t; /* nothing measured yet: the IBA timeout itself */
	rto <<= qp->cc.backoff;
	return rto < t ? rto : t;
}

uint64_t xport__cc_loss_delay_us(const struct xport_qp *qp)
{
	uint64_t rto = cc_rtt_rto(&qp->cc);

	return rto ? rto : xport_timeout_us(qp->attr.timeout);
}

void xport__cc_sent(struct xport_qp *qp, uint32_t psn, bool fresh, bool ackreq)
{
	struct xport_cc *cc = &qp->cc;
	bool restart, probe;
	uint64_t now;

	if (!fresh) {
		/* Karn: an answer to a packet sent twice times neither sending. */
		if (cc->probing && wire_psn_cmp(psn, cc->rtt_psn) <= 0)
			cc->probing = false;
		return;
	}
	/* The clock is read only for a packet that needs it: most packets of
	 * a stream neither start a burst nor time a round trip. */
	restart =
	    psn == qp->comp.psn && cc->last_ack_at && cc_rtt_rto(cc) && cc->cwnd > XPORT_CWND_INIT;
	probe = ackreq && !cc->probing;
	if (!restart && !probe)
		return;
	now = qp->dev->ops->now_us(qp->dev->ctx);
	/*
	 * A new packet while nothing is outstanding after a quiet spell: the
	 * path may have changed, start the burst small again (RFC 5681 4.1).
	 */
	if (restart && now - cc->last_ack_at > cc_rtt_rto(cc))
		cc->cwnd = XPORT_CWND_INIT;
	if (probe) {
		cc->probing = true;
		cc->rtt_psn = psn;
		cc->rtt_at = now;
	}
}

/* One round-trip sample (RFC 6298 2.2, 2.3). */
static void cc_sample(struct xport_cc *cc, uint64_t r64)
{
	uint32_t r = r64 > UINT32_MAX ? UINT32_MAX : (uint32_t)r64;

	if (!cc->rtt_valid) {
		cc->rtt_valid = true;
		cc->srtt_us = r;
		cc->rttvar_us = r / 2;
		cc->min_rtt_us = r;
		return;
	}
	cc->rttvar_us =
	    (3 * cc->rttvar_us + (cc->srtt_us > r ? cc->srtt_us - r : r - cc->srtt_us)) / 4;
	cc->srtt_us = (7 * cc->srtt_us + r) / 8;
	if (r < cc->min_rtt_us)
		cc->min_rtt_us = r;
}

void xport__cc_acked(struct xport_qp *qp, uint32_t old_psn, uint32_t new_psn, uint64_t now)
{
	struct xport_cc *cc = &qp->cc;
	uint32_t n = wire_psn_sub(new_psn, old_psn);

	if (cc->probing && wire_psn_cmp(new_psn, cc->rtt_psn) > 0) {
		cc->probing = false;
		cc_sample(cc, now - cc->rtt_at);
	}
	cc->backoff = 0;
	cc->last_ack_at = now;
	if (cc->cwnd < cc->ssthresh) {
		/* Slow start: one more packet per packet acknowledged. */
		cc->cwnd += n;
	} else {
		/* Congestion avoidance: one more per window acknowledged. */
		cc->acked += n;
		while (cc->acked >= cc->cwnd) {
			cc->acked -= cc->cwnd;
			cc->cwnd++;
		}
	}
	if (cc->cwnd > XPORT_MAX_UNACKED_PSNS)
		cc->cwnd = XPORT_MAX_UNACKED_PSNS;
}

/* Remember the window before a reduction. */
static void cc_reduce(struct xport_cc *cc)
{
	cc->undo_cwnd = cc->cwnd;
	cc->undo_ssthresh = cc->ssthresh;
	cc->ssthresh = cc->cwnd / 2 > XPORT_CWND_MIN ? cc->cwnd / 2 : XPORT_CWND_MIN;
	cc->acked = 0;
}

void xport__cc_loss(struct xport_qp *qp)
{
	/*
	 * On a path that reorders, a NAK is mostly a late packet, not a sign
	 * of congestion (RFC 4015, Linux's tcp_reordering): the resend goes
	 * out all the same, the window stays; timeouts still shrink it.
	 */
	if (qp->cc.reorder >= XPORT_REORDER_TRUST)
		return;
	cc_reduce(&qp->cc);
	qp->cc.cwnd = qp->cc.ssthresh;
}

void xport__cc_expired(struct xport_qp *qp)
{
	xport__cc_loss(qp);
	if (qp->cc.backoff < XPORT_RTO_MAX_BACKOFF)
		qp->cc.backoff++;
}

void xport__cc_timeout(struct xport_qp *qp)
{
	cc_reduce(&qp->cc);
	qp->cc.cwnd = XPORT_CWND_MIN;
	if (qp->cc.backoff < XPORT_RTO_MAX_BACKOFF)
		qp->cc.backoff++;
}

bool xport__cc_judge(struct xport_qp *qp, uint64_t since)
{
	struct xport_cc *cc = &qp->cc;

	if (!cc->rtt_valid)
		return false;
	if (since >= cc->min_rtt_us) {
		/* Answered in due time: the resend repaired a real loss. */
		if (cc->reorder)
			cc->reorder--;
		cc->undo_cwnd = 0;
		cc->undo_ssthresh = 0;
		return false;
	}
	if (cc->reorder < XPORT_REORDER_MAX)
		cc->reorder++;
	if (cc->undo_cwnd > cc->cwnd)
		cc->cwnd = cc->undo_cwnd;
	if (cc->undo_ssthresh > cc->ssthresh)
		cc->ssthresh = cc->undo_ssthresh;
	cc->undo_cwnd = 0;
	cc->undo_ssthresh = 0;
	return true;
}
