/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's internal header: functions and inline helpers that
 * the engine's own files (xport.c, xmit.c, req.c, resp.c, comp.c, recv.c)
 * share, grouped by defining file (rxe_loc.h). Nothing outside emu/xport/
 * includes it, except the engine's unit tests (tests/xport), which test
 * the pure decisions directly. The daemon uses xport.h only.
 */
#ifndef UROCE_XPORT_INT_H
#define UROCE_XPORT_INT_H

#if !defined(XPORT_INTERNAL)
#error "xport_int.h is private to emu/xport (and its unit tests): include xport.h"
#endif

#include "xport.h"

/* ---- Cross-file functions inside the engine -------------------------- */

/*
 * The reliable connected transports: RC, and XRC, whose initiator QP is an
 * RC requester and whose target QP is an RC responder. Acknowledged,
 * retransmitted and PSN-checked alike.
 */
static inline bool xport__reliable_type(uint32_t type)
{
	return type == UROCE_QPT_RC || type == UROCE_QPT_XRC_SEND || type == UROCE_QPT_XRC_RECV;
}

static inline bool xport__reliable(const struct xport_qp *qp)
{
	return xport__reliable_type(qp->type);
}

/* xport.c */

/* Count an event on the QP and its device. */
static inline void xport__count(struct xport_qp *qp, enum xport_cnt c, uint64_t n)
{
	qp->cnt[c] += n;
	qp->dev->cnt[c] += n;
}

/* Count a dropped packet on the device and, when known, on the QP. */
static inline void xport__drop(struct xport_dev *dev, struct xport_qp *qp, enum xport_drop r)
{
	dev->drops[r]++;
	dev->last_drop = r;
	if (qp)
		qp->drops[r]++;
}

/* The send queue slot of index i (slots are qp->sq_stride bytes apart). */
static inline struct xport_swqe *xport__sq_at(const struct xport_qp *qp, uint32_t i)
{
	return (struct xport_swqe *)(void *)((char *)qp->sq +
					     (size_t)(i % qp->sq_size) * qp->sq_stride);
}
/* Does the WR complete with a CQE of its own when it succeeds? */
static inline bool xport__signaled(const struct xport_qp *qp, const struct xport_swqe *w)
{
	return qp->sq_sig_all || w->wr.flags & UROCE_SEND_SIGNALED;
}
/* Ask the daemon to call xport_run (once until it does). */
void xport__schedule(struct xport_qp *qp);
/* Recompute the QP's timer from the retransmission and RNR deadlines. */
void xport__timer_update(struct xport_qp *qp);
/*
 * Move to ERR and flush: every send WQE from the oldest uncompleted one
 * (IBV_WC_WR_FLUSH_ERR), the held receive WQE and, without SRQ, the RQ;
 * packets still queued for the responder or completer are dropped.
 */
void xport__flush(struct xport_qp *qp);
/*
 * The transport hit a fatal error: move to ERR, flush every send WQE from
 * the oldest uncompleted one, the held receive WQE and (no SRQ) the RQ, and
 * tell the daemon through ops->qp_error. Idempotent.
 */
void xport__error(struct xport_qp *qp);

/* xmit.c */

/* The UDP source port of a QP: 0xC000 + 14-bit hash of the QPN. */
uint16_t xport__udp_sport(uint32_t qpn);
/* The path of the QP's RC/UC packets (source = us). */
void xport__route(const struct xport_qp *qp, struct xport_route *rt);
/*
 * Fill the BTH at pkt for an RC/UC packet of qp to its dest QP (UD callers
 * overwrite destqp). pad is set from paylen.
 */
void xport__bth(const struct xport_qp *qp, uint8_t *pkt, uint8_t opcode, uint32_t psn, bool ackreq,
		uint32_t paylen);
/* Is a GID an IPv4-mapped address (::ffff:a.b.c.d)? */
bool xport__gid_is_v4(const uint8_t gid[XPORT_GID_BYTES]);
/*
 * ICRC of an IB packet (BTH..pad, ib_len bytes) on path rt: IPv4 with the
 * route's IP ID and DF when known, else ID 0 and DF (what a uroce sender's
 * kernel emits, PROTOCOL.md 12); IPv6 otherwise.
 */
uint32_t xport__icrc(const struct xport_route *rt, const uint8_t *ib, size_t ib_len);
/* Around an ICRC: its time goes to prof_icrc_ticks while dev->prof is set. */
static inline uint64_t xport__prof_start(const struct xport_dev *dev)
{
	return dev->prof && dev->ops->ticks ? dev->ops->ticks(dev->ctx) : 0;
}
static inline void xport__prof_icrc(struct xport_dev *dev, uint64_t t0)
{
	if (dev->prof && dev->ops->ticks)
		dev->prof_icrc_ticks += dev->ops->ticks(dev->ctx) - t0;
}
/*
 * Where to build the next packet: in place in the device's send batch
 * when it offers that (ops->tx_buf), else in fallback (XPORT_MAX_PKT_BYTES).
 */
static inline uint8_t *xport__pkt_buf(struct xport_dev *dev, uint8_t *fallback)
{
	uint8_t *b = dev->ops->tx_buf ? dev->ops->tx_buf(dev->ctx) : NULL;

	return b ? b : fallback;
}

/*
 * Zero the pad after a payload of paylen bytes that ends at pkt+len and
 * append the ICRC for path rt (pkt must have room for 3 + 4 more bytes).
 * Returns the packet's length with pad and ICRC.
 */
size_t xport__seal(const struct xport_route *rt, uint8_t *pkt, size_t len, uint32_t paylen);
/*
 * xport__seal the packet of qp and send it. Counts TX_PKTS/TX_BYTES
 * (paylen) or TX_ERR. Returns what send_packet returned.
 */
int xport__xmit(struct xport_qp *qp, const struct xport_route *rt, uint8_t *pkt, size_t len,
		uint32_t paylen);
/*
 * A packet whose payload is folded into its ICRC as it is gathered, when
 * the device can (xport__can_fold: ops->dma_read_crc, and a payload of
 * XPORT_FOLD_MIN bytes or more): st =
 * xport__icrc_headers over the finished headers (hdr_len bytes at pkt, a
 * payload of paylen to follow), then xport__sge_gather or dma_read_crc for
 * the payload, then xport__xmit_folded, which pads, seals and sends as
 * xport__xmit does. The same bytes on the wire as xport__xmit.
 */
#define XPORT_FOLD_MIN 256 /* payload bytes from which folding pays */
bool xport__can_fold(const struct xport_qp *qp, uint32_t paylen);
uint32_t xport__icrc_headers(struct xport_qp *qp, const struct xport_route *rt, const uint8_t *pkt,
			     size_t hdr_len, uint32_t paylen);
int xport__xmit_folded(struct xport_qp *qp, const struct xport_route *rt, uint8_t *pkt, size_t len,
		       uint32_t paylen, uint32_t st);
/*
 * Copy len bytes between buf and the memory the SGE list describes,
 * starting offset bytes into it. Returns 0, -ENOSPC when the list is
 * shorter than offset+len, or the first dma_lkey error.
 */
int xport__sge_copy(struct xport_qp *qp, const struct xport_sge *sge, uint32_t nsge,
		    uint32_t offset, void *buf, uint32_t len, uint32_t access, enum xport_dma dir);
/* The same for a packet's payload (read access), folded into *st (ops->dma_read_crc). */
int xport__sge_gather(struct xport_qp *qp, const struct xport_sge *sge, uint32_t nsge,
		      uint32_t offset, void *buf, uint32_t len, uint32_t *st);

/* req.c */

/*
 * Pure: the BTH opcode of a packet of a message of wr_opcode on a QP of
 * type, given whether it is the message's first and last packet, from the
 * wire columns of UROCE_WR_LIST (wr_opcode.h). Returns the opcode, or
 * -EINVAL when the transport cannot carry the WR or the WR has no such packet
 * (a READ/atomic request or a UD message is one packet).
 */
int xport__req_opcode(uint32_t qp_type, uint32_t wr_opcode, bool first, bool last);
/* Pure: packets (= PSNs) of a message of len bytes at pmtu: max(1, ceil). */
uint32_t xport__req_npkts(uint32_t len, uint32_t pmtu);
/*
 * Pure: does a packet carry AckReq? Always on the message's last packet,
 * and on every every-th packet sent without one (noack = packets since the
 * last AckReq before this one; every = xport__cc_ack_every()). The
 * requester also sets it on the packet that fills the window.
 */
bool xport__req_ackreq(bool last, uint32_t noack, uint32_t every);
/* Send what the window, fences and initiator depth allow. */
void xport__req_run(struct xport_qp *qp);
/* Reset requester state (RESET, or new sq_psn). */
void xport__req_reset(struct xport_qp *qp);

/* cc.c */

/* Initial window and no round-trip sample (RESET, RTR). */
void xport__cc_reset(struct xport_qp *qp);
/* Packets that may be unacknowledged now (<= XPORT_MAX_UNACKED_PSNS). */
uint32_t xport__cc_window(const struct xport_qp *qp);
/* Pure: AckReq spacing for a window: half of it, 1..XPORT_MAX_PKT_PER_ACK. */
uint32_t xport__cc_ack_every(uint32_t cwnd);
/*
 * The adaptive retransmission timeout in us: srtt + 4 rttvar (at least
 * XPORT_RTO_MIN_US) doubled per expiry without progress, capped at the
 * IBA timeout; the IBA timeout itself before the first sample; 0 when the
 * QP has no timer (timeout 0).
 */
uint64_t xport__cc_rto_us(const struct xport_qp *qp);
/* How long a retransmission may take to be answered: srtt + 4 rttvar, or the IBA timeout. */
uint64_t xport__cc_loss_delay_us(const struct xport_qp *qp);
/* A packet with psn went out (fresh: never sent before); times one AckReq packet. */
void xport__cc_sent(struct xport_qp *qp, uint32_t psn, bool fresh, bool ackreq);
/* Progress from old_psn to new_psn: grow the window, take the RTT sample, end backoff. */
void xport__cc_acked(struct xport_qp *qp, uint32_t old_psn, uint32_t new_psn, uint64_t now);
/* A loss signalled by a NAK or implied NAK: halve the window. */
void xport__cc_loss(struct xport_qp *qp);
/* A first expiry of the adaptive timer: halve as for a loss, back the timer off. */
void xport__cc_expired(struct xport_qp *qp);
/* A retransmission timeout: window to XPORT_CWND_MIN, back the timer off. */
void xport__cc_timeout(struct xport_qp *qp);
/*
 * The first progress after a NAK rewind `since` us ago: was the rewind
 * spurious? An answer that comes back sooner than the shortest round trip
 * seen answers the original, not the resend: the reduction is undone and
 * the path counts as reordering; an answer in due time confirms the loss.
 * Returns true when spurious.
 */
bool xport__cc_judge(struct xport_qp *qp, uint64_t since);

/* comp.c */

/* What the completer does with a response, given its PSN (pure decision). */
enum xport__comp_psn {
	XPORT__COMP_PSN_COMPLETE_PREV, /* beyond a finished SEND/WRITE: coalesced ACK completes it
					*/
	XPORT__COMP_PSN_IMPLIED_NAK,   /* beyond a READ/atomic: its response was skipped, retry */
	XPORT__COMP_PSN_STALE,	       /* older than comp.psn: duplicate, ignore */
	XPORT__COMP_PSN_GAP,	       /* READ/atomic response beyond comp.psn: one was lost */
	XPORT__COMP_PSN_BOGUS,	       /* beyond anything sent: ignore */
	XPORT__COMP_PSN_PROCESS,       /* acknowledges this WQE */
};
enum xport__comp_psn xport__comp_check_psn(uint32_t psn, uint32_t comp_psn, uint32_t last_psn,
					   bool all_sent, bool rd_atomic);
/*
 * Queue a validated response (ACK, NAK, READ response, atomic ACK) for an
 * RC QP on qp->comp_q (a copy; the drop is counted when it is full) and
 * drain the queue.
 */
void xport__comp_queue_pkt(struct xport_qp *qp, const struct xport_pkt *pkt);
/* Process every queued response in arrival order (rxe rxe_completer). */
void xport__comp_run(struct xport_qp *qp);
/* Timer work: RNR wait over, retransmission timeout. */
void xport__comp_timeout(struct xport_qp *qp, uint64_t now);
/*
 * Complete the oldest WQE with status (CQE if signaled or failed), then
 * complete any following WQEs that are already finished locally (UC/UD) or
 * failed; a failure moves the QP to ERR.
 */
void xport__comp_complete(struct xport_qp *qp, struct xport_swqe *wqe, uint32_t status);
/* Complete leading WQEs that need no response (UC/UD sent, local errors). */
void xport__comp_drain(struct xport_qp *qp);
/* Reset completer state from the current attributes; drops queued responses. */
void xport__comp_reset(struct xport_qp *qp);
/*
 * Progress or a retry: restart the IBA timeout and the adaptive timer if
 * packets are outstanding, else stop both.
 */
void xport__comp_rearm(struct xport_qp *qp);
/* Packets went out: start the timers unless they run. */
void xport__comp_arm(struct xport_qp *qp);

/* resp.c */

/* Pure: may a request with opcode mask `mask` follow one with `prev` (0 = boundary)? */
bool xport__resp_seq_ok(uint32_t prev, uint32_t mask);
/* Pure: is paylen right for a request packet with this mask at pmtu (PROTOCOL.md 5)? */
bool xport__resp_len_ok(uint32_t mask, uint32_t paylen, uint32_t pmtu);
/*
 * Queue a validated request packet (RC/UC/UD) on qp->resp_q (a copy; the
 * drop is counted when it is full) and process the queue unless READ
 * responses are streaming.
 */
void xport__resp_queue_pkt(struct xport_qp *qp, const struct xport_pkt *pkt);
/*
 * Continue streaming READ responses, then process queued requests in
 * arrival order. Returns true while responses or requests remain.
 */
bool xport__resp_run(struct xport_qp *qp);
/* Drop every responder state and queued request (RESET); keeps the allocations. */
void xport__resp_reset(struct xport_qp *qp);
void xport__resp_unlist_ack(struct xport_qp *qp);
/* Complete the held receive WQE (if any) with status. */
void xport__resp_flush_wqe(struct xport_qp *qp, uint32_t status);

/* flow.c */

/*
 * May the requester start message w now? True when there is no budget, for
 * UC/UD, for a retransmission, and when the device's budget has room and
 * no QP waits before this one (or this QP was woken for its turn); then the
 * message's PSNs (up to one window) are charged. Otherwise the QP joins
 * the FIFO (once) and is scheduled when its turn comes.
 */
bool xport__flow_admit(struct xport_qp *qp, const struct xport_swqe *w);
/* Would xport__flow_admit let w start now? The same answer, changing nothing. */
bool xport__flow_would_admit(const struct xport_qp *qp, const struct xport_swqe *w);
/* Recount what the QP has in flight (after ACKs, sends, state changes). */
void xport__flow_sync(struct xport_qp *qp);
/* The QP leaves flow control (error, reset, destruction): charge, grant
 * and place in the FIFO are given up and waiters woken. */
void xport__flow_forget(struct xport_qp *qp);

/* icrc.c */

/*
 * Check the ICRC of buf (BTH .. ICRC, len >= BTH + ICRC bytes) as received
 * on path rt, as the device's icrc_mode says when the IPv4 header was not
 * seen; every outcome is counted (XPORT_CNT_ICRC_*). True: accept.
 */
bool xport__recv_icrc_ok(struct xport_dev *dev, const struct xport_route *rt, const uint8_t *buf,
			 size_t len);

/* The tracker's verdict on a solved, non-zero IPv4 ID. */
enum xport_idtrack_verdict {
	XPORT_IDT_TRACKED,   /* follows the sender's last ID: accept */
	XPORT_IDT_FIRST,     /* a sender not seen before: accept, remembered */
	XPORT_IDT_UNTRACKED, /* unknown, and no slot free or idle: accept, not remembered */
	XPORT_IDT_RESYNC,    /* follows an ID rejected before: accept, new sequence */
	XPORT_IDT_GSO,	     /* an ID-0 sender's next GSO segment (last + 1): accept */
	XPORT_IDT_REJECT,    /* outside the window: drop (remembered as candidate) */
};

/*
 * Pure: how many IDs past the previous one a sender may be after a pause of
 * elapsed_us (7, plus one per millisecond, at most 1024 more).
 */
uint32_t xport__idtrack_window(uint64_t elapsed_us);
/*
 * Pure (but for t): a packet from IPv4 source addr matched its ICRC only
 * with IP ID `id` at time now_us; decide and update the sender's state.
 * *evicted: an idle sender's slot was taken for this one.
 */
enum xport_idtrack_verdict xport__idtrack_solved(struct xport_idtrack *t, const uint8_t addr[4],
						 uint16_t id, uint64_t now_us, bool *evicted);
/* A packet from addr matched with ID 0 at now_us: remember it. */
void xport__idtrack_zero(struct xport_idtrack *t, const uint8_t addr[4], uint64_t now_us,
			 bool *evicted);

/* recv.c */

/* Pure: does packet P_Key a match QP P_Key b (PROTOCOL.md 10)? */
bool xport__recv_pkey_ok(uint16_t a, uint16_t b);
/*
 * Pure: does QP state accept a packet with opcode mask `mask` (rxe
 * check_type_state)? Checked on arrival, and again by the responder and
 * completer when they take a queued packet.
 */
bool xport__recv_state_ok(uint32_t state, uint32_t mask);
/*
 * Is pkt from the UDP source port of the connected QP's peer? True for UD,
 * and while the port is not learned yet. Counts a mismatch as bad_sport.
 */
bool xport__recv_sport_ok(struct xport_qp *qp, const struct xport_pkt *pkt);
/*
 * pkt (from the QP's peer address) passed the PSN check of the responder or
 * completer: the first such packet sets the peer's source port (RC/UC).
 */
void xport__recv_sport_learn(struct xport_qp *qp, const struct xport_pkt *pkt);
/*
 * Append a copy of the validated pkt (its bytes, path and parsed offsets)
 * to q. Returns 0, -ENOBUFS when q holds XPORT_MAX_DEFERRED packets,
 * -EMSGSIZE (longer than XPORT_MAX_PKT_BYTES, which wire_validate rules
 * out) or -ENOMEM; the caller counts the drop.
 */
int xport__pktq_push(struct xport_pktq *q, const struct xport_pkt *pkt);
/*
 * Take the oldest packet off q; NULL when it is empty. The packet stays
 * valid until the next push (the engine never re-enters while it works).
 */
const struct xport_pkt *xport__pktq_pop(struct xport_pktq *q);
/* The packet pop would return, left in the queue; NULL when empty. */
const struct xport_pkt *xport__pktq_peek(const struct xport_pktq *q);
/* Forget every queued packet; keeps the entries for reuse. */
void xport__pktq_clear(struct xport_pktq *q);
/* Free the entries (xport_qp_fini). */
void xport__pktq_free(struct xport_pktq *q);
/*
 * Hold a copy of the RC request pkt, which lies beyond the responder's
 * expected PSN, until the gap before it is filled. Returns 0, -EEXIST (that
 * PSN is held already), -ERANGE (XPORT_HELD_SLOTS or more ahead), -ENOBUFS
 * (the device holds XPORT_HELD_MAX_BYTES) or -ENOMEM; the caller counts.
 */
int xport__held_put(struct xport_qp *qp, const struct xport_pkt *pkt);
/*
 * The held request with this PSN, taken out of the store; NULL when there
 * is none. It stays valid until the next take or clear. Held requests left
 * behind the expected PSN are freed on the way.
 */
const struct xport_pkt *xport__held_take(struct xport_qp *qp, uint32_t psn);
/* Free the request xport__held_take returned last (it has been processed). */
void xport__held_release(struct xport_qp *qp);
/* Is a request held beyond the expected PSN (so that a gap is open)? */
bool xport__held_ahead(struct xport_qp *qp);
/* Free every held request and the slots (RESET, ERR, xport_qp_fini). */
void xport__held_clear(struct xport_qp *qp);

/* gsi.c */

/* A packet for QP1 that passed the device-wide checks: the GSI QP's checks, then the daemon. */
void xport__gsi_recv(struct xport_dev *dev, const struct xport_pkt *pkt);

#endif /* UROCE_XPORT_INT_H */
