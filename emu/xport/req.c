/* SPDX-License-Identifier: MIT */
/*
 * The requester: turns send WQEs into request packets. It picks each
 * packet's opcode from a table (First/Middle/Last/Only per WR opcode),
 * segments messages by the path MTU, gathers the payload from inline data or
 * the SGE list, sets AckReq on the last packet of a message, on every half
 * window (64 packets at most) without one and where the window fills, and
 * stops at the adaptive window (cc.c, 128 unacknowledged PSNs at most), at a
 * fence behind outstanding READ/atomics, at the initiator depth
 * (max_rd_atomic), during an RNR wait, and before a new message while the
 * device's in-flight budget is used up (flow.c). A retry (go-back-N)
 * rewinds to the completer's oldest unacknowledged PSN, and an ACK beyond
 * what is being sent again moves it forward; a READ retried mid-way asks
 * only for the missing part. Completions, ACK handling and timers are in
 * comp.c.
 */
#include <errno.h>
#include <string.h>

#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/psn.h>
#include "xport_int.h"

/*
 * The BTH opcode of each packet position, per WR opcode: the wire columns of
 * UROCE_WR_LIST (wr_opcode.h) pasted onto wire/'s names. RC opcodes double
 * as the low five bits of UC's; UD has only single packets. A position the
 * WR has no packet for (NONE) becomes REQ_NO_OP, through the placeholder
 * test of Linux's kconfig.h (__is_defined): REQ_PROBE_NONE expands to a
 * comma, which shifts REQ_NO_OP into the place REQ_SECOND picks.
 */
#define REQ_NO_OP 0xffu
#define REQ_PROBE_NONE ~, REQ_NO_OP
#define REQ_SECOND(a, b, ...) b
#define REQ_PICK(...) REQ_SECOND(__VA_ARGS__)
#define REQ_WIRE_OP(prefix, tok) REQ_PICK(REQ_PROBE_##tok, prefix##tok, ~)

struct req_ops {
	uint8_t first, middle, last, only; /* RC opcodes */
	uint8_t ud;			   /* UD opcode of a message of one packet */
};

static const struct req_ops req_ops_table[] = {
#define REQ_OPS(sym, val, qpts, flags, wc, first, middle, last, only, ud)           \
	[val] = {REQ_WIRE_OP(WIRE_OP_RC_, first), REQ_WIRE_OP(WIRE_OP_RC_, middle), \
		 REQ_WIRE_OP(WIRE_OP_RC_, last), REQ_WIRE_OP(WIRE_OP_RC_, only),    \
		 REQ_WIRE_OP(WIRE_OP_UD_, ud)},
    UROCE_WR_LIST(REQ_OPS)
#undef REQ_OPS
};

int xport__req_opcode(uint32_t qp_type, uint32_t wr_opcode, bool first, bool last)
{
	const struct req_ops *ops;
	uint8_t op;
	const struct wire_opcode_info *info;

	if (!uroce_wr_ok(qp_type, wr_opcode))
		return -EINVAL;
	ops = &req_ops_table[wr_opcode];
	if (qp_type == UROCE_QPT_UD)
		op = first && last ? ops->ud : REQ_NO_OP;
	else
		op = first ? (last ? ops->only : ops->first) : (last ? ops->last : ops->middle);
	if (op == REQ_NO_OP)
		return -EINVAL;
	if (qp_type == UROCE_QPT_UC)
		op = (uint8_t)(WIRE_TRANSPORT_UC << 5 | op);
	else if (qp_type == UROCE_QPT_XRC_SEND)
		op = (uint8_t)(WIRE_TRANSPORT_XRC << 5 | op);
	/* Defence in depth: wire/'s table knows it as a request (test_wr_opcode.c checks). */
	info = wire_opcode_info(op);
	if (!info || !(info->mask & WIRE_REQ_MASK))
		return -EINVAL;
	return op;
}

uint32_t xport__req_npkts(uint32_t len, uint32_t pmtu)
{
	if (!len)
		return 1;
	return (uint32_t)(((uint64_t)len + pmtu - 1) / pmtu);
}

bool xport__req_ackreq(bool last, uint32_t noack, uint32_t every)
{
	return last || noack + 1 >= every;
}

uint32_t xport_check_wqe(uint32_t qp_type, const struct xport_wqe *wqe, uint32_t *length)
{
	uint64_t len = 0;
	bool is_inline = wqe->flags & UROCE_SEND_INLINE;
	uint32_t wr_flags = uroce_wr_flags(wqe->opcode);

	*length = 0;
	if (!uroce_wr_ok(qp_type, wqe->opcode))
		return UROCE_WC_LOC_QP_OP_ERR;
	/* A local operation moves no data: it has no buffers. */
	if (wr_flags & UROCE_WR_F_LOCAL)
		return is_inline || wqe->num_sge ? UROCE_WC_LOC_QP_OP_ERR : UROCE_WC_SUCCESS;
	/* ATOMIC WRITE carries its 8 bytes in the WQE: no buffers either. */
	if (wr_flags & UROCE_WR_F_ATOMIC_WRITE)
		return is_inline || wqe->num_sge ? UROCE_WC_LOC_QP_OP_ERR : UROCE_WC_SUCCESS;
	/*
	 * FLUSH: no buffers; a placement type of known bits, at least one
	 * (the FETH's PLT), and a selectivity level of range or MR (SEL); a
	 * range no longer than a message (its length is the RETH's).
	 */
	if (wr_flags & UROCE_WR_F_FLUSH) {
		if (is_inline || wqe->num_sge || !wqe->flush_type ||
		    wqe->flush_type & ~(UROCE_FLUSH_GLOBAL | UROCE_FLUSH_PERSISTENT) ||
		    wqe->flush_level > UROCE_FLUSH_MR)
			return UROCE_WC_LOC_QP_OP_ERR;
		if (wqe->flush_level == UROCE_FLUSH_RANGE && wqe->flush_len > XPORT_MAX_MSG_BYTES)
			return UROCE_WC_LOC_LEN_ERR;
		return UROCE_WC_SUCCESS;
	}
	if (wqe->num_sge > XPORT_MAX_SGE)
		return UROCE_WC_LOC_QP_OP_ERR;
	/* Inline data only makes sense for what carries a payload. */
	if (is_inline && !(wr_flags & UROCE_WR_F_INLINE))
		return UROCE_WC_LOC_QP_OP_ERR;
	if (is_inline) {
		if (wqe->inline_len > XPORT_MAX_INLINE_BYTES)
			return UROCE_WC_LOC_LEN_ERR;
		len = wqe->inline_len;
	} else {
		for (uint32_t i = 0; i < wqe->num_sge; i++)
			len += wqe->sge[i].length;
	}
	if (len > XPORT_MAX_MSG_BYTES)
		return UROCE_WC_LOC_LEN_ERR;
	/* The original value comes back into an 8-byte local buffer. */
	if (wr_flags & UROCE_WR_F_ATOMIC && len != 8)
		return UROCE_WC_LOC_LEN_ERR;
	*length = (uint32_t)len;
	return UROCE_WC_SUCCESS;
}

void xport__req_reset(struct xport_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
	qp->req.psn = qp->attr.sq_psn;
	qp->req.hw_psn = qp->attr.sq_psn;
}

/*
 * Go-back-N (PROTOCOL.md 7, rxe req_retry, hfi1 reset_psn): send again from
 * the completer's oldest unacknowledged PSN, after a retry or when an ACK
 * showed that the responder already has what was about to be sent again.
 * The oldest WQE resumes where the acknowledged part ends; every later WQE
 * that had packets out is sent again from its start. WQEs keep the PSNs
 * they were given when they started, so an answer to a packet of an
 * earlier pass still finds its WQE.
 */
static void req_seek(struct xport_qp *qp)
{
	uint32_t i;

	qp->req.need_retry = false;
	qp->req.idx = qp->comp.idx;
	qp->req.psn = qp->comp.psn;
	qp->req.noack_pkts = 0;
	qp->req.rd_atomic = 0;
	for (i = qp->comp.idx; i != qp->sq_tail; i++) {
		struct xport_swqe *w = xport__sq_at(qp, i);

		/* A local operation was executed once and is never redone. */
		if (w->state == XPORT_WQE_DONE_LOCAL &&
		    uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_LOCAL)
			continue;
		if (w->state != XPORT_WQE_PROCESSING && w->state != XPORT_WQE_PENDING)
			break;
		w->state = XPORT_WQE_PROCESSING;
		w->offset = 0;
		if (i == qp->comp.idx && wire_psn_cmp(qp->comp.psn, w->first_psn) > 0)
			w->offset = wire_psn_sub(qp->comp.psn, w->first_psn) * qp->pmtu;
	}
}

/* May the requester start this WQE now? */
static bool req_may_start(const struct xport_qp *qp, const struct xport_swqe *w)
{
	/* IBV_SEND_FENCE: wait until prior READ/atomics completed (ibv_post_send(3)). */
	if (w->wr.flags & UROCE_SEND_FENCE && qp->req.rd_atomic)
		return false;
	if (uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_RD_ATOMIC &&
	    qp->req.rd_atomic >= qp->attr.max_rd_atomic)
		return false;
	return true;
}

/* Unacknowledged PSNs (RC), counting the packet at req.psn when `next`. */
static uint32_t req_in_flight(const struct xport_qp *qp, bool next)
{
	return wire_psn_sub(qp->req.psn, qp->comp.psn) + (next ? 1 : 0);
}

/* The window: the adaptive one (cc.c), or the probe after a NAK (comp.c). */
static uint32_t req_window(const struct xport_qp *qp)
{
	uint32_t w = xport__cc_window(qp);

	return qp->comp.probing && w > XPORT_RETX_PROBE ? XPORT_RETX_PROBE : w;
}

/* The window is full: nothing more until ACKs come. */
static bool req_window_full(const struct xport_qp *qp)
{
	return xport__reliable(qp) && req_in_flight(qp, false) >= req_window(qp);
}

/*
 * Will the WR behind w start right after w's last packet, in this same run
 * of the requester? The checks xport__req_run makes before it starts a
 * message, with w's last packet counted as sent, changing nothing. Only a
 * SEND/WRITE kind counts, and only in RTS (an SQD starts nothing new); a
 * local WR, a READ or atomic at its limit or behind a fence, a full window
 * or a device budget without room say no.
 */
static bool req_next_starts(struct xport_qp *qp)
{
	uint32_t next = qp->req.idx + 1;
	const struct xport_swqe *n;

	if (next == qp->sq_tail || qp->attr.state != UROCE_QPS_RTS || qp->req.wait_rnr)
		return false;
	n = xport__sq_at(qp, next);
	if (n->state != XPORT_WQE_POSTED || uroce_wr_flags(n->wr.opcode) & UROCE_WR_F_LOCAL)
		return false;
	if (uroce_wr_flags(n->wr.opcode) & UROCE_WR_F_RD_ATOMIC && !qp->attr.max_rd_atomic)
		return false;
	return req_may_start(qp, n) && req_in_flight(qp, true) < req_window(qp) &&
	       xport__flow_would_admit(qp, n);
}

/* Account one PSN range [psn, psn+n) as sent; ackreq: the packet asks for an ACK. */
static void req_sent_psns(struct xport_qp *qp, uint32_t psn, uint32_t n, bool ackreq)
{
	uint32_t end = wire_psn_add(psn, n);
	bool fresh = wire_psn_cmp(psn, qp->req.hw_psn) >= 0;

	if (!fresh)
		xport__count(qp, XPORT_CNT_RETX_PKTS, 1);
	if (xport__reliable(qp))
		xport__cc_sent(qp, psn, fresh, ackreq);
	if (wire_psn_cmp(end, qp->req.hw_psn) > 0)
		qp->req.hw_psn = end;
	qp->req.psn = end;
}

/*
 * Say what the packet about to be sent at psn is for (xport_tx_info): its
 * WR, and whether it is sent again and why. Before req_sent_psns.
 */
static void req_note(struct xport_qp *qp, const struct xport_swqe *w, uint32_t psn)
{
	struct xport_tx_info *t = &qp->dev->tx_info;

	t->request = true;
	t->retx_why = wire_psn_cmp(psn, qp->req.hw_psn) >= 0 ? 0 : qp->req.retx_why;
	t->wr_opcode = w->wr.opcode;
	t->wr_id = w->wr.wr_id;
	t->length = w->length;
	t->num_sge = w->wr.flags & UROCE_SEND_INLINE && !(w->wr.flags & UROCE_SEND_PREREAD)
			 ? 0
			 : w->wr.num_sge;
	t->psn = psn;
}

/*
 * The BTH of a request packet and, for XRC, the XRCETH after it: every XRC
 * request names the XRC SRQ at the target that its message is for, the
 * WR's remote_srqn (IBA 9.3.9).
 */
static void req_bth(const struct xport_qp *qp, const struct xport_swqe *w, uint8_t *pkt,
		    const struct wire_opcode_info *info, uint32_t psn, bool ackreq, uint32_t paylen)
{
	xport__bth(qp, pkt, info->opcode, psn, ackreq, paylen);
	if (info->mask & WIRE_XRCETH_MASK) {
		struct wire_xrceth *x = (struct wire_xrceth *)(pkt + info->offset[WIRE_HDR_XRCETH]);

		wire_xrceth_set_resv(x, 0);
		wire_xrceth_set_srqn(x, w->wr.xrc_srqn);
	}
}

/* READ request: one packet, consumes one PSN per response packet (PROTOCOL.md 7). */
static int req_send_read(struct xport_qp *qp, struct xport_swqe *w, uint8_t *pkt)
{
	uint32_t resid = w->length - w->offset;
	uint32_t psn = qp->req.psn;
	struct xport_route rt;
	int op = xport__req_opcode(qp->type, w->wr.opcode, true, true);
	const struct wire_opcode_info *info;
	struct wire_reth *reth;

	if (op < 0)
		return UROCE_WC_LOC_QP_OP_ERR;
	info = wire_opcode_info((uint8_t)op);
	reth = (struct wire_reth *)(pkt + info->offset[WIRE_HDR_RETH]);
	req_bth(qp, w, pkt, info, psn, true, 0);
	wire_reth_set_va(reth, w->wr.remote_addr + w->offset);
	wire_reth_set_rkey(reth, w->wr.rkey);
	wire_reth_set_dmalen(reth, resid);
	req_note(qp, w, psn);
	req_sent_psns(qp, psn, xport__req_npkts(resid, qp->pmtu), true);
	qp->req.noack_pkts = 0;
	qp->req.rd_atomic++;
	w->state = XPORT_WQE_PENDING;
	qp->req.idx++;
	xport__route(qp, &rt);
	xport__xmit(qp, &rt, pkt, info->hdr_bytes, 0);
	return 0;
}

/*
 * ATOMIC WRITE (IBA 1.5): one packet, RETH (DMA length 8) and the 8 bytes
 * the WR gave, taken into the WQE when it was posted; answered, as rxe
 * does, by a zero-length RDMA READ Response Only, so it waits like a READ.
 */
static int req_send_atomic_write(struct xport_qp *qp, struct xport_swqe *w, uint8_t *pkt)
{
	uint32_t psn = qp->req.psn;
	struct xport_route rt;
	int op = xport__req_opcode(qp->type, w->wr.opcode, true, true);
	const struct wire_opcode_info *info;
	struct wire_reth *reth;

	if (op < 0)
		return UROCE_WC_LOC_QP_OP_ERR;
	info = wire_opcode_info((uint8_t)op);
	reth = (struct wire_reth *)(pkt + info->offset[WIRE_HDR_RETH]);
	req_bth(qp, w, pkt, info, psn, true, 8);
	wire_reth_set_va(reth, w->wr.remote_addr);
	wire_reth_set_rkey(reth, w->wr.rkey);
	wire_reth_set_dmalen(reth, 8);
	memcpy(pkt + info->hdr_bytes, &w->wr.compare_add, 8);
	req_note(qp, w, psn);
	req_sent_psns(qp, psn, 1, true);
	qp->req.noack_pkts = 0;
	qp->req.rd_atomic++;
	w->state = XPORT_WQE_PENDING;
	qp->req.idx++;
	xport__route(qp, &rt);
	xport__xmit(qp, &rt, pkt, info->hdr_bytes + 8, 8);
	return 0;
}

/*
 * FLUSH (IBA A19; rxe's requester): one packet, FETH (placement type and
 * selectivity level) and RETH (the range; with selectivity MR only the
 * R_Key matters) and no payload; answered, as Linux rxe answers it, by a
 * zero-length RDMA READ Response Only, so it waits like a READ and holds
 * initiator depth.
 */
static int req_send_flush(struct xport_qp *qp, struct xport_swqe *w, uint8_t *pkt)
{
	uint32_t psn = qp->req.psn;
	struct xport_route rt;
	int op = xport__req_opcode(qp->type, w->wr.opcode, true, true);
	const struct wire_opcode_info *info;
	struct wire_feth *feth;
	struct wire_reth *reth;

	if (op < 0)
		return UROCE_WC_LOC_QP_OP_ERR;
	info = wire_opcode_info((uint8_t)op);
	feth = (struct wire_feth *)(pkt + info->offset[WIRE_HDR_FETH]);
	reth = (struct wire_reth *)(pkt + info->offset[WIRE_HDR_RETH]);
	req_bth(qp, w, pkt, info, psn, true, 0);
	memset(feth, 0, sizeof(*feth));
	wire_feth_set_plt(feth, w->wr.flush_type);
	wire_feth_set_sel(feth, w->wr.flush_level);
	wire_reth_set_va(reth, w->wr.remote_addr);
	wire_reth_set_rkey(reth, w->wr.rkey);
	wire_reth_set_dmalen(reth, w->wr.flush_len);
	req_note(qp, w, psn);
	req_sent_psns(qp, psn, 1, true);
	qp->req.noack_pkts = 0;
	qp->req.rd_atomic++;
	w->state = XPORT_WQE_PENDING;
	qp->req.idx++;
	xport__route(qp, &rt);
	xport__xmit(qp, &rt, pkt, info->hdr_bytes, 0);
	return 0;
}

static int req_send_atomic(struct xport_qp *qp, struct xport_swqe *w, uint8_t *pkt)
{
	bool cas = w->wr.opcode == UROCE_WR_ATOMIC_CMP_AND_SWP;
	uint32_t psn = qp->req.psn;
	struct xport_route rt;
	int op = xport__req_opcode(qp->type, w->wr.opcode, true, true);
	const struct wire_opcode_info *info;
	struct wire_atmeth *a;

	if (op < 0)
		return UROCE_WC_LOC_QP_OP_ERR;
	info = wire_opcode_info((uint8_t)op);
	a = (struct wire_atmeth *)(pkt + info->offset[WIRE_HDR_ATMETH]);
	req_bth(qp, w, pkt, info, psn, true, 0);
	wire_atmeth_set_va(a, w->wr.remote_addr);
	wire_atmeth_set_rkey(a, w->wr.rkey);
	/* CmpSwap: swap data + compare data; FetchAdd: the addend, compare unused. */
	wire_atmeth_set_swap_add(a, cas ? w->wr.swap : w->wr.compare_add);
	wire_atmeth_set_compare(a, cas ? w->wr.compare_add : 0);
	req_note(qp, w, psn);
	req_sent_psns(qp, psn, 1, true);
	qp->req.noack_pkts = 0;
	qp->req.rd_atomic++;
	w->state = XPORT_WQE_PENDING;
	qp->req.idx++;
	xport__route(qp, &rt);
	xport__xmit(qp, &rt, pkt, info->hdr_bytes, 0);
	return 0;
}

/* One SEND/WRITE packet: the next segment of the message. */
static int req_send_data(struct xport_qp *qp, struct xport_swqe *w, uint8_t *pkt)
{
	uint32_t resid = w->length - w->offset;
	uint32_t pay = resid < qp->pmtu ? resid : qp->pmtu;
	bool first = w->offset == 0, last = pay == resid;
	int op = xport__req_opcode(qp->type, w->wr.opcode, first, last);
	const struct wire_opcode_info *info;
	bool ack = false, fold;
	uint32_t psn = qp->req.psn, st = 0;
	struct xport_route rt;
	int rc;

	if (qp->type == UROCE_QPT_UD && !last) {
		/*
		 * A UD message must fit one packet. rxe (C10-93.1.1 as PROTOCOL.md 5
		 * quotes it) completes it without sending anything.
		 */
		xport__count(qp, XPORT_CNT_UD_OVERSIZE, 1);
		w->offset = w->length;
		w->state = XPORT_WQE_DONE_LOCAL;
		qp->req.idx++;
		return 0;
	}
	if (op < 0)
		return UROCE_WC_LOC_QP_OP_ERR;
	info = wire_opcode_info((uint8_t)op);
	/*
	 * AckReq at the end of a message, every half window, and where the
	 * window fills: the responder acknowledges only what asks for it. An
	 * unsignaled message whose successor starts right behind it leaves
	 * its ACK to a later packet (a signaled end, the half window, the
	 * window's fill, or the last message the run sends): nothing waits
	 * for its completion alone, and the ACK that comes covers it.
	 */
	if (xport__reliable(qp))
		ack = xport__req_ackreq(last && (xport__signaled(qp, w) || !req_next_starts(qp)),
					qp->req.noack_pkts, xport__cc_ack_every(req_window(qp))) ||
		      req_in_flight(qp, true) >= req_window(qp);
	req_bth(qp, w, pkt, info, psn, ack, pay);
	/* SE only on the last packet of a solicited SEND / WRITE with immediate (PROTOCOL.md 5). */
	if (last && w->wr.flags & UROCE_SEND_SOLICITED &&
	    (info->mask & WIRE_SEND_MASK || info->mask & WIRE_IMMDT_MASK))
		wire_bth_set_se((struct wire_bth *)pkt, 1);
	if (info->mask & WIRE_DETH_MASK) {
		struct wire_deth *d = (struct wire_deth *)(pkt + info->offset[WIRE_HDR_DETH]);
		/* A WR Q_Key with the high bit set means "use the QP's" (ibv_post_send(3)). */
		uint32_t qkey =
		    w->wr.ud_remote_qkey & 0x80000000u ? qp->attr.qkey : w->wr.ud_remote_qkey;

		wire_bth_set_destqp((struct wire_bth *)pkt, w->wr.ud_remote_qpn);
		wire_deth_set_qkey(d, qkey);
		wire_deth_set_srcqp(d, qp->qpn);
	}
	if (info->mask & WIRE_RETH_MASK) {
		struct wire_reth *r = (struct wire_reth *)(pkt + info->offset[WIRE_HDR_RETH]);

		wire_reth_set_va(r, w->wr.remote_addr);
		wire_reth_set_rkey(r, w->wr.rkey);
		wire_reth_set_dmalen(r, w->length);
	}
	if (info->mask & WIRE_IMMDT_MASK)
		memcpy(pkt + info->offset[WIRE_HDR_IMMDT], &w->wr.imm_data, WIRE_IMMDT_BYTES);
	/* SEND with Invalidate: the R_Key (host order in the WR) in the IETH of the Last/Only. */
	if (info->mask & WIRE_IETH_MASK)
		wire_ieth_set_rkey((struct wire_ieth *)(pkt + info->offset[WIRE_HDR_IETH]),
				   w->wr.imm_data);
	if (qp->type == UROCE_QPT_UD) {
		memset(&rt, 0, sizeof(rt));
		memcpy(rt.sgid, w->wr.ud_av.sgid, sizeof(rt.sgid));
		memcpy(rt.dgid, w->wr.ud_av.dgid, sizeof(rt.dgid));
		rt.sport = qp->sport;
		rt.dport = qp->dport;
		rt.tclass = w->wr.ud_av.tclass;
		rt.hop_limit = w->wr.ud_av.hop_limit;
	} else {
		xport__route(qp, &rt);
	}
	/* The headers are final: the payload is folded into the ICRC as it
	 * is gathered, where the device can. */
	fold = !(w->wr.flags & UROCE_SEND_INLINE) && xport__can_fold(qp, pay);
	if (fold)
		st = xport__icrc_headers(qp, &rt, pkt, info->hdr_bytes, pay);
	if (w->wr.flags & UROCE_SEND_INLINE) {
		memcpy(pkt + info->hdr_bytes, w->wr.inline_data + w->offset, pay);
	} else {
		if (fold)
			rc = xport__sge_gather(qp, w->wr.sge, w->wr.num_sge, w->offset,
					       pkt + info->hdr_bytes, pay, &st);
		else
			rc = xport__sge_copy(qp, w->wr.sge, w->wr.num_sge, w->offset,
					     pkt + info->hdr_bytes, pay, 0, XPORT_DMA_TO_BUF);
		if (rc)
			return UROCE_WC_LOC_PROT_ERR;
	}
	qp->req.noack_pkts = ack ? 0 : qp->req.noack_pkts + 1;
	req_note(qp, w, psn);
	req_sent_psns(qp, psn, 1, ack);
	w->offset += pay;
	if (last) {
		w->state = xport__reliable(qp) ? XPORT_WQE_PENDING : XPORT_WQE_DONE_LOCAL;
		qp->req.idx++;
	}
	if (fold)
		xport__xmit_folded(qp, &rt, pkt, info->hdr_bytes + pay, pay, st);
	else
		xport__xmit(qp, &rt, pkt, info->hdr_bytes + pay, pay);
	return 0;
}

/*
 * Before a SEND/WRITE puts its first packet on the wire: every SGE it
 * gathers from must be a valid L_Key of the QP's PD covering the SGE, as a
 * NIC checks its gather list when it starts the WQE. A message that cannot
 * be read whole fails at once with IBV_WC_LOC_PROT_ERR instead of after
 * part of it went out (when the window is small, the peer's answer to
 * that part could otherwise overtake the local error). A message of one
 * packet needs no separate check: building that packet gathers every SGE
 * through the same checks before anything goes out, and a failure there
 * completes it with the same status (req_send_data). Returns 0 or the
 * first dma_lkey error.
 */
static int req_check_sges(struct xport_qp *qp, const struct xport_swqe *w)
{
	if (w->wr.flags & UROCE_SEND_INLINE ||
	    uroce_wr_flags(w->wr.opcode) & UROCE_WR_F_RD_ATOMIC || w->length <= qp->pmtu)
		return 0;
	for (uint32_t i = 0; i < w->wr.num_sge; i++) {
		const struct xport_sge *sge = &w->wr.sge[i];
		int rc;

		if (!sge->length)
			continue;
		rc = qp->dev->ops->dma_lkey(qp->dev->ctx, qp, sge->lkey, sge->addr, NULL,
					    sge->length, 0, XPORT_DMA_CHECK);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * A local operation (UROCE_WR_F_LOCAL: BIND_MW, LOCAL_INV), executed when
 * the requester reaches it, so after every WR posted before it has started
 * and before any posted after it (IBA 10.6.7.3.1, 10.8.3.4: in order with
 * the send queue); nothing goes on the wire. Returns 0 or the completion
 * status: a failed bind or invalidation is a Memory Management Operation
 * Error (IBA 11.6.2, IBV_WC_MW_BIND_ERR).
 */
static uint32_t req_local(struct xport_qp *qp, struct xport_swqe *w)
{
	const struct xport_ops *ops = qp->dev->ops;
	int rc = -EOPNOTSUPP;

	if (w->wr.opcode == UROCE_WR_BIND_MW) {
		if (ops->bind_mw)
			rc = ops->bind_mw(qp->dev->ctx, qp, &w->wr);
	} else if (ops->invalidate) {
		rc = ops->invalidate(qp->dev->ctx, qp, w->wr.imm_data, false);
	}
	if (rc)
		return UROCE_WC_MW_BIND_ERR;
	xport__count(qp, w->wr.opcode == UROCE_WR_BIND_MW ? XPORT_CNT_MW_BIND : XPORT_CNT_INV_LOCAL,
		     1);
	return UROCE_WC_SUCCESS;
}

/* The WQE failed locally: it completes with status once it is the oldest. */
static void req_fail(struct xport_qp *qp, struct xport_swqe *w, uint32_t status)
{
	w->state = XPORT_WQE_ERROR;
	w->status = status;
	xport__comp_drain(qp);
}

void xport__req_run(struct xport_qp *qp)
{
	uint8_t pkt[XPORT_MAX_PKT_BYTES];

	/* ACKs since the last run may have freed device budget (flow.c). */
	xport__flow_sync(qp);
	for (;;) {
		uint32_t state = qp->attr.state;
		struct xport_swqe *w;
		uint32_t wr_flags;
		uint8_t *p;
		int rc;

		if (state != UROCE_QPS_RTS && state != UROCE_QPS_SQD)
			return;
		if (qp->req.wait_rnr)
			return;
		/* A retry, or the responder is ahead of what would be sent again. */
		if (qp->req.need_retry ||
		    (xport__reliable(qp) && wire_psn_cmp(qp->comp.psn, qp->req.psn) > 0))
			req_seek(qp);
		if (qp->req.idx == qp->sq_tail)
			break;
		w = xport__sq_at(qp, qp->req.idx);
		wr_flags = uroce_wr_flags(w->wr.opcode);
		if (w->state == XPORT_WQE_ERROR) {
			/* Nothing behind a failed WQE goes out: the QP is about to fail. */
			xport__comp_drain(qp);
			return;
		}
		if (w->state == XPORT_WQE_POSTED) {
			/*
			 * SQD: finish messages in flight (also those a retry
			 * rewound), start no new one.
			 */
			if (state == UROCE_QPS_SQD && (int32_t)(qp->req.idx - qp->req.hw_idx) >= 0)
				break;
			if (wr_flags & UROCE_WR_F_LOCAL) {
				uint32_t status;

				if (!req_may_start(qp, w))
					return;
				status = req_local(qp, w);
				if (status) {
					req_fail(qp, w, status);
					return;
				}
				w->length = 0;
				w->state = XPORT_WQE_DONE_LOCAL;
				if ((int32_t)(qp->req.idx - qp->req.hw_idx) >= 0)
					qp->req.hw_idx = qp->req.idx + 1;
				qp->req.idx++;
				xport__comp_drain(qp);
				continue;
			}
			if (wr_flags & UROCE_WR_F_RD_ATOMIC && !qp->attr.max_rd_atomic) {
				/* Initiator depth 0 can never issue it: fail instead of hanging. */
				req_fail(qp, w, UROCE_WC_LOC_QP_OP_ERR);
				return;
			}
			if (!req_may_start(qp, w) || req_window_full(qp) ||
			    !xport__flow_admit(qp, w))
				return;
			if (req_check_sges(qp, w)) {
				req_fail(qp, w, UROCE_WC_LOC_PROT_ERR);
				return;
			}
			w->first_psn = qp->req.psn;
			w->last_psn = wire_psn_add(qp->req.psn,
						   (wr_flags & UROCE_WR_F_ATOMIC
							? 1
							: xport__req_npkts(w->length, qp->pmtu)) -
						       1);
			w->offset = 0;
			w->state = XPORT_WQE_PROCESSING;
			if ((int32_t)(qp->req.idx - qp->req.hw_idx) >= 0)
				qp->req.hw_idx = qp->req.idx + 1;
		} else if (w->state != XPORT_WQE_PROCESSING) {
			/* Already sent (cannot normally be at req.idx): move on. */
			qp->req.idx++;
			continue;
		} else if (req_window_full(qp)) {
			return;
		}
		p = xport__pkt_buf(qp->dev, pkt);
		if (w->wr.opcode == UROCE_WR_RDMA_READ)
			rc = req_send_read(qp, w, p);
		else if (wr_flags & UROCE_WR_F_ATOMIC_WRITE)
			rc = req_send_atomic_write(qp, w, p);
		else if (wr_flags & UROCE_WR_F_FLUSH)
			rc = req_send_flush(qp, w, p);
		else if (wr_flags & UROCE_WR_F_ATOMIC)
			rc = req_send_atomic(qp, w, p);
		else
			rc = req_send_data(qp, w, p);
		if (rc) {
			/* req.idx stays on it: nothing behind it may go out. */
			req_fail(qp, w, (uint32_t)rc);
			return;
		}
		if (xport__reliable(qp))
			xport__comp_arm(qp);
		else if (w->state == XPORT_WQE_DONE_LOCAL)
			xport__comp_drain(qp);
	}
	/* Drained: every message started before SQD is complete. */
	if (qp->attr.state == UROCE_QPS_SQD && qp->comp.idx == qp->req.idx &&
	    (qp->req.idx == qp->sq_tail ||
	     xport__sq_at(qp, qp->req.idx)->state == XPORT_WQE_POSTED) &&
	    !qp->req.drained_told) {
		qp->req.drained_told = true;
		if (qp->dev->ops->sq_drained)
			qp->dev->ops->sq_drained(qp->dev->ctx, qp);
	}
}
