/* SPDX-License-Identifier: MIT */
/*
 * The responder: executes incoming requests. For RC it checks the PSN (one
 * PSN Sequence Error NAK per gap, then silence until the expected PSN comes;
 * duplicates are acknowledged again but never re-executed, C9-105), the
 * opcode sequence, the QP's remote access flags and the packet lengths; it
 * takes a receive WQE for SEND and WRITE with immediate (RNR NAK when there
 * is none), scatters SEND payloads over the WQE's SGEs, writes RDMA WRITE
 * data through the R_Key, answers READs with segmented READ responses and
 * atomics with an Atomic Acknowledge, keeping both in a ring of
 * max_dest_rd_atomic responder resources so that duplicates are replayed
 * rather than executed again. It sends an Acknowledge only for requests with
 * AckReq (rxe's coalescing) and NAKs class-C errors before moving the QP to
 * Error. UC and UD never answer: bad packets are dropped and counted.
 * A request with nothing ahead of it is executed where recv.c parsed it;
 * one that has to wait (behind a READ stream or earlier requests, or for a
 * receive WQE) is copied into the QP's queue (qp->resp_q), which the
 * responder drains in arrival order, from xport_run while READ responses
 * stream, so that no ACK overtakes them (rxe rxe_resp_queue_pkt).
 * The checks that need no responder state (ICRC, header sizes, P_Key,
 * addresses) are done once, in recv.c; the QP state is checked again when
 * a queued request's turn comes.
 */
#include <errno.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/inet.h>
#include <wire/psn.h>
#include "xport_int.h"

bool xport__resp_seq_ok(uint32_t prev, uint32_t mask)
{
	/* rxe check_op_seq: inside a SEND only SEND Middle/Last, inside a WRITE only WRITE ones. */
	if (prev & WIRE_SEND_MASK)
		return (mask & WIRE_SEND_MASK) && !(mask & WIRE_START_MASK);
	if (prev & WIRE_WRITE_MASK)
		return (mask & WIRE_WRITE_MASK) && !(mask & WIRE_START_MASK);
	return mask & WIRE_START_MASK;
}

bool xport__resp_len_ok(uint32_t mask, uint32_t paylen, uint32_t pmtu)
{
	if (!(mask & WIRE_PAYLOAD_MASK))
		return paylen == 0;
	if (mask & WIRE_MIDDLE_MASK || (mask & WIRE_ONLY_MASK) == WIRE_START_MASK)
		return paylen == pmtu; /* First, Middle: exactly one PMTU (PROTOCOL.md 5) */
	if ((mask & WIRE_ONLY_MASK) == WIRE_END_MASK)
		return paylen >= 1 && paylen <= pmtu; /* Last */
	return paylen <= pmtu;			      /* Only */
}

void xport__resp_reset(struct xport_qp *qp)
{
	struct xport_res *res = qp->resp.res;

	xport__resp_unlist_ack(qp);
	if (res)
		memset(res, 0, qp->res_cap * sizeof(*res));
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->resp.res = res;
	qp->resp.psn = qp->attr.rq_psn;
	xport__pktq_clear(&qp->resp_q);
	xport__held_clear(qp);
}

void xport__resp_flush_wqe(struct xport_qp *qp, uint32_t status)
{
	struct uroce_cqe cqe = {0};

	if (!qp->resp.has_wqe)
		return;
	qp->resp.has_wqe = false;
	cqe.wr_id = qp->resp.wqe.wr_id;
	cqe.status = status;
	cqe.opcode = UROCE_WC_RECV;
	cqe.qp_num = qp->qpn;
	qp->dev->ops->push_cqe(qp->dev->ctx, qp, true, &cqe);
	xport__count(qp, XPORT_CNT_RECV_CQE, 1);
	if (status == UROCE_WC_WR_FLUSH_ERR)
		xport__count(qp, XPORT_CNT_FLUSHED, 1);
}

/* ---- sending acknowledgements ---------------------------------------- */

/*
 * The opcode of a response (ACK, READ response, Atomic Acknowledge) given
 * as its RC opcode: an XRC target answers with the XRC one (transport bits
 * 101, no XRCETH: IBA 9.3.9).
 */
static uint8_t resp_op(const struct xport_qp *qp, uint8_t rc_op)
{
	if (qp->type == UROCE_QPT_XRC_RECV)
		return (uint8_t)(WIRE_TRANSPORT_XRC << 5 | (rc_op & 0x1f));
	return rc_op;
}

/* Acknowledge / NAK / RNR NAK with this syndrome for psn (PROTOCOL.md 8). */
static void resp_xmit_aeth(struct xport_qp *qp, uint8_t syndrome, uint32_t psn)
{
	uint8_t pkt[WIRE_BTH_BYTES + WIRE_AETH_BYTES + XPORT_ICRC_BYTES];
	struct wire_aeth *aeth = (struct wire_aeth *)(pkt + WIRE_BTH_BYTES);
	struct xport_route rt;

	xport__bth(qp, pkt, resp_op(qp, WIRE_OP_RC_ACKNOWLEDGE), psn, false, 0);
	wire_aeth_set_syndrome(aeth, syndrome);
	wire_aeth_set_msn(aeth, qp->resp.msn);
	xport__route(qp, &rt);
	xport__xmit(qp, &rt, pkt, WIRE_BTH_BYTES + WIRE_AETH_BYTES, 0);
}

/*
 * ACKs are coalesced per drain (IBA 9.7.5.1: an ACK acknowledges every
 * request up to its PSN): resp_ack only notes the PSN, and the ACK goes
 * out when the responder has nothing more to execute right now, or before
 * anything else it sends, so it never overtakes nor follows a later
 * response out of order. A request processed alone is answered at once, as
 * before; a run executed together (the requests held behind a gap that the
 * resend of the missing one filled) is answered once, for the last SEND or
 * WRITE of the run, so that the requester learns at once how far the
 * responder really is.
 */
static void resp_flush_ack(struct xport_qp *qp)
{
	if (!qp->resp.ack_pending)
		return;
	qp->resp.ack_pending = false;
	xport__count(qp, XPORT_CNT_ACK_SENT, 1);
	resp_xmit_aeth(qp, wire_aeth_syndrome(WIRE_AETH_ACK, WIRE_AETH_CREDITS_INVALID),
		       qp->resp.ack_psn);
}

static void resp_ack(struct xport_qp *qp, uint32_t psn)
{
	if (!qp->resp.ack_pending || wire_psn_cmp(psn, qp->resp.ack_psn) > 0)
		qp->resp.ack_psn = psn;
	qp->resp.ack_pending = true;
}

/* A NAK or RNR NAK: after the ACK it may have to follow. */
static void resp_send_ack(struct xport_qp *qp, uint8_t syndrome, uint32_t psn)
{
	resp_flush_ack(qp);
	resp_xmit_aeth(qp, syndrome, psn);
}

static void resp_atomic_ack(struct xport_qp *qp, uint32_t psn, uint64_t orig)
{
	uint8_t pkt[WIRE_BTH_BYTES + WIRE_AETH_BYTES + WIRE_ATMACK_BYTES + XPORT_ICRC_BYTES];
	struct wire_aeth *aeth = (struct wire_aeth *)(pkt + WIRE_BTH_BYTES);
	struct wire_atmack *ack = (struct wire_atmack *)(pkt + WIRE_BTH_BYTES + WIRE_AETH_BYTES);
	struct xport_route rt;

	resp_flush_ack(qp);
	xport__bth(qp, pkt, resp_op(qp, WIRE_OP_RC_ATOMIC_ACKNOWLEDGE), psn, false, 0);
	wire_aeth_set_syndrome(aeth, wire_aeth_syndrome(WIRE_AETH_ACK, WIRE_AETH_CREDITS_INVALID));
	wire_aeth_set_msn(aeth, qp->resp.msn);
	wire_atmack_set_orig(ack, orig);
	xport__route(qp, &rt);
	xport__xmit(qp, &rt, pkt, sizeof(pkt) - XPORT_ICRC_BYTES, 0);
}

/*
 * A class C error (invalid request, remote access, remote operational;
 * PROTOCOL.md 7): NAK the request, fail the receive WQE held for the
 * message with wqe_status, and move the QP to Error.
 */
static void resp_fatal(struct xport_qp *qp, const struct xport_pkt *pkt, unsigned nak,
		       uint32_t wqe_status)
{
	xport__drop(qp->dev, qp, XPORT_DROP_REQ_ERR);
	if (xport__reliable(qp)) {
		xport__count(qp, XPORT_CNT_ERR_NAK_SENT, 1);
		resp_send_ack(qp, wire_aeth_syndrome(WIRE_AETH_NAK, nak), pkt->psn);
	}
	xport__resp_flush_wqe(qp, wqe_status);
	xport__error(qp);
}

/* NAK code for a failed R_Key access (dma_rkey/atomic error). */
static unsigned resp_rkey_nak(int rc)
{
	return rc == -EFAULT ? WIRE_NAK_REMOTE_OP_ERR : WIRE_NAK_REMOTE_ACCESS_ERR;
}

/* ---- READ responses --------------------------------------------------- */

/*
 * XRC target: make srqn the SRQ whose PD (and receive queue and CQ) the
 * daemon's operations use from now on (ops->xrc_srq). Returns its answer.
 */
static int resp_xrc_use(struct xport_qp *qp, uint32_t srqn)
{
	int rc = qp->dev->ops->xrc_srq ? qp->dev->ops->xrc_srq(qp->dev->ctx, qp, srqn) : -ENOENT;

	if (!rc)
		qp->resp.xrc_srqn = srqn;
	return rc;
}

/*
 * Send up to budget READ response packets of the streaming resource.
 * Returns true while more remain (rxe read_reply).
 */
static bool resp_stream_burst(struct xport_qp *qp, unsigned budget);

static bool resp_stream(struct xport_qp *qp, unsigned budget)
{
	uint32_t cur = qp->resp.xrc_srqn;
	bool more;

	/*
	 * XRC: a READ replayed later reads through the PD of the SRQ its
	 * first execution named, whatever message is in progress now; that
	 * one's SRQ is restored after.
	 */
	if (qp->type != UROCE_QPT_XRC_RECV || !qp->resp.stream || qp->resp.stream->xrc_srqn == cur)
		return resp_stream_burst(qp, budget);
	if (resp_xrc_use(qp, qp->resp.stream->xrc_srqn)) {
		struct xport_pkt fake = {.psn = qp->resp.stream->cur_psn};

		qp->resp.stream = NULL;
		resp_fatal(qp, &fake, WIRE_NAK_REMOTE_ACCESS_ERR, UROCE_WC_WR_FLUSH_ERR);
		return false;
	}
	more = resp_stream_burst(qp, budget);
	if (qp->attr.state != UROCE_QPS_ERR)
		resp_xrc_use(qp, cur);
	return more;
}

static bool resp_stream_burst(struct xport_qp *qp, unsigned budget)
{
	uint8_t buf[XPORT_MAX_PKT_BYTES];
	struct xport_res *res = qp->resp.stream;
	struct xport_route rt;

	resp_flush_ack(qp);
	xport__route(qp, &rt);
	while (res && budget--) {
		uint32_t pay = res->resid < qp->pmtu ? res->resid : qp->pmtu;
		bool last = pay == res->resid;
		uint8_t *pkt = xport__pkt_buf(qp->dev, buf);
		uint8_t op;
		const struct wire_opcode_info *info;
		uint32_t st = 0;
		bool fold;
		int rc;

		if (!res->started)
			op = last ? WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY
				  : WIRE_OP_RC_RDMA_READ_RESPONSE_FIRST;
		else
			op = last ? WIRE_OP_RC_RDMA_READ_RESPONSE_LAST
				  : WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
		op = resp_op(qp, op);
		info = wire_opcode_info(op);
		xport__bth(qp, pkt, op, res->cur_psn, false, pay);
		if (info->mask & WIRE_AETH_MASK) {
			struct wire_aeth *aeth =
			    (struct wire_aeth *)(pkt + info->offset[WIRE_HDR_AETH]);

			wire_aeth_set_syndrome(
			    aeth, wire_aeth_syndrome(WIRE_AETH_ACK, WIRE_AETH_CREDITS_INVALID));
			wire_aeth_set_msn(aeth, qp->resp.msn);
		}
		fold = xport__can_fold(qp, pay);
		if (fold)
			st = xport__icrc_headers(qp, &rt, pkt, info->hdr_bytes, pay);
		if (pay) {
			if (fold)
				rc = qp->dev->ops->dma_read_crc(qp->dev->ctx, qp, res->rkey, true,
								res->va, pkt + info->hdr_bytes, pay,
								UROCE_ACCESS_REMOTE_READ, &st);
			else
				rc = qp->dev->ops->dma_rkey(
				    qp->dev->ctx, qp, res->rkey, res->va, pkt + info->hdr_bytes,
				    pay, UROCE_ACCESS_REMOTE_READ, XPORT_DMA_TO_BUF);
			if (rc) {
				/* The MR went away under the READ. */
				struct xport_pkt fake = {.psn = res->cur_psn};

				qp->resp.stream = NULL;
				resp_fatal(qp, &fake, resp_rkey_nak(rc), UROCE_WC_WR_FLUSH_ERR);
				return false;
			}
		}
		if (fold)
			xport__xmit_folded(qp, &rt, pkt, info->hdr_bytes + pay, pay, st);
		else
			xport__xmit(qp, &rt, pkt, info->hdr_bytes + pay, pay);
		xport__count(qp, XPORT_CNT_READ_RESP_SENT, 1);
		res->started = true;
		res->cur_psn = wire_psn_add(res->cur_psn, 1);
		res->va += pay;
		res->resid -= pay;
		if (last) {
			qp->resp.stream = NULL;
			return false;
		}
	}
	return res != NULL;
}

static void resp_start_stream(struct xport_qp *qp, struct xport_res *res)
{
	qp->resp.stream = res;
	if (resp_stream(qp, XPORT_READ_BURST))
		xport__schedule(qp);
}

static struct xport_res *resp_res_alloc(struct xport_qp *qp)
{
	struct xport_res *res = &qp->resp.res[qp->resp.res_head];

	/* A ring: the oldest saved response is recycled (rxe). */
	qp->resp.res_head = (qp->resp.res_head + 1) % qp->attr.max_dest_rd_atomic;
	memset(res, 0, sizeof(*res));
	return res;
}

static void resp_read(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	const struct wire_reth *reth =
	    (const struct wire_reth *)(pkt->buf + pkt->info->offset[WIRE_HDR_RETH]);
	uint64_t va = wire_reth_get_va(reth);
	uint32_t rkey = wire_reth_get_rkey(reth), len = wire_reth_get_dmalen(reth);
	struct xport_res *res;
	int rc;

	/* No responder resources at all: NAK Invalid Request (PROTOCOL.md 7). */
	if (!qp->attr.max_dest_rd_atomic || len > XPORT_MAX_MSG_BYTES) {
		resp_fatal(qp, pkt, WIRE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR);
		return;
	}
	/* Zero-length READs carry no key to check (rxe check_rkey). */
	if (len) {
		rc = qp->dev->ops->dma_rkey(qp->dev->ctx, qp, rkey, va, NULL, len,
					    UROCE_ACCESS_REMOTE_READ, XPORT_DMA_CHECK);
		if (rc) {
			resp_fatal(qp, pkt, resp_rkey_nak(rc), UROCE_WC_REM_ACCESS_ERR);
			return;
		}
	}
	res = resp_res_alloc(qp);
	res->type = XPORT_RES_READ;
	res->first_psn = pkt->psn;
	res->last_psn = wire_psn_add(pkt->psn, xport__req_npkts(len, qp->pmtu) - 1);
	res->va_org = va;
	res->rkey = rkey;
	res->length = len;
	res->va = va;
	res->resid = len;
	res->cur_psn = pkt->psn;
	res->xrc_srqn = qp->resp.xrc_srqn;
	/* C9-148: the MSN counts a READ when it is accepted. */
	qp->resp.psn = wire_psn_add(res->last_psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & 0xffffffu;
	xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
	resp_start_stream(qp, res);
}

static void resp_atomic(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	const struct wire_atmeth *a =
	    (const struct wire_atmeth *)(pkt->buf + pkt->info->offset[WIRE_HDR_ATMETH]);
	uint64_t va = wire_atmeth_get_va(a), orig = 0;
	bool cas = (pkt->opcode & 0x1f) == (WIRE_OP_RC_COMPARE_SWAP & 0x1f); /* RC or XRC */
	struct xport_res *res;
	int rc;

	/* 8-byte aligned target, and resources to replay it from (PROTOCOL.md 7). */
	if (!qp->attr.max_dest_rd_atomic || va & 7) {
		resp_fatal(qp, pkt, WIRE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR);
		return;
	}
	rc = qp->dev->ops->atomic(qp->dev->ctx, qp, wire_atmeth_get_rkey(a), va,
				  cas ? XPORT_ATOMIC_CMP_SWP : XPORT_ATOMIC_FETCH_ADD,
				  cas ? wire_atmeth_get_compare(a) : wire_atmeth_get_swap_add(a),
				  cas ? wire_atmeth_get_swap_add(a) : 0, &orig);
	if (rc) {
		resp_fatal(qp, pkt, resp_rkey_nak(rc), UROCE_WC_REM_ACCESS_ERR);
		return;
	}
	xport__count(qp, XPORT_CNT_ATOMIC_EXECUTED, 1);
	res = resp_res_alloc(qp);
	res->type = XPORT_RES_ATOMIC;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->orig = orig;
	qp->resp.psn = wire_psn_add(pkt->psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & 0xffffffu;
	xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
	resp_atomic_ack(qp, pkt->psn, orig);
}

/*
 * ATOMIC WRITE (IBA 1.5; rxe atomic_write_reply): the 8 bytes of payload
 * stored at an 8-byte aligned VA of memory with remote write access
 * (ops->atomic, XPORT_ATOMIC_WRITE), answered as rxe answers it, by a
 * zero-length RDMA READ Response Only. The answer is kept in a responder
 * resource, as a READ's, so a duplicate is answered again and never
 * executed twice (C9-105). A misaligned VA or a DMA length other than 8 is
 * NAKed Invalid Request (rxe: RESPST_ERR_MISALIGNED_ATOMIC), a key without
 * remote write Remote Access Error.
 */
static void resp_atomic_write(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	const struct wire_reth *reth =
	    (const struct wire_reth *)(pkt->buf + pkt->info->offset[WIRE_HDR_RETH]);
	uint64_t va = wire_reth_get_va(reth), val, orig;
	uint32_t rkey = wire_reth_get_rkey(reth);
	struct xport_res *res;
	int rc;

	if (!qp->attr.max_dest_rd_atomic || va & 7 || wire_reth_get_dmalen(reth) != 8 ||
	    pkt->paylen != 8) {
		resp_fatal(qp, pkt, WIRE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR);
		return;
	}
	memcpy(&val, pkt->payload, 8); /* the bytes as sent, stored as they are */
	rc = qp->dev->ops->atomic(qp->dev->ctx, qp, rkey, va, XPORT_ATOMIC_WRITE, val, 0, &orig);
	if (rc) {
		resp_fatal(qp, pkt, resp_rkey_nak(rc), UROCE_WC_REM_ACCESS_ERR);
		return;
	}
	xport__count(qp, XPORT_CNT_ATOMIC_EXECUTED, 1);
	res = resp_res_alloc(qp);
	res->type = XPORT_RES_READ; /* its answer is a READ response of no data */
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->va_org = va;
	res->rkey = rkey;
	res->va = va;
	res->cur_psn = pkt->psn;
	res->xrc_srqn = qp->resp.xrc_srqn;
	qp->resp.psn = wire_psn_add(pkt->psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & 0xffffffu;
	xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
	resp_start_stream(qp, res);
}

/*
 * FLUSH (IBA A19; rxe process_flush): the FETH asks for a placement type
 * (global visibility, persistence; at least one, no unknown bit) and a
 * selectivity level (the RETH's range, or the whole MR its R_Key names).
 * The R_Key must grant the flush access of every type asked for
 * (IBV_ACCESS_FLUSH_GLOBAL/_PERSISTENT) over the range (ops->flush),
 * else NAK Remote Access Error; a reserved PLT or SEL, or no responder
 * resources, is NAKed Invalid Request. The op places every earlier write
 * first. Answered, as rxe answers it, by a zero-length RDMA READ Response
 * Only kept in a responder resource, so a duplicate is answered again
 * without being executed again (rxe: oA19-14, oA19-15).
 */
static void resp_flush(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	const struct wire_feth *feth =
	    (const struct wire_feth *)(pkt->buf + pkt->info->offset[WIRE_HDR_FETH]);
	const struct wire_reth *reth =
	    (const struct wire_reth *)(pkt->buf + pkt->info->offset[WIRE_HDR_RETH]);
	unsigned plt = wire_feth_get_plt(feth), sel = wire_feth_get_sel(feth);
	uint32_t rkey = wire_reth_get_rkey(reth), access = 0;
	struct xport_res *res;
	int rc;

	if (!qp->attr.max_dest_rd_atomic || !qp->dev->ops->flush || !plt ||
	    plt & ~(unsigned)(UROCE_FLUSH_GLOBAL | UROCE_FLUSH_PERSISTENT) ||
	    sel > UROCE_FLUSH_MR) {
		resp_fatal(qp, pkt, WIRE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR);
		return;
	}
	if (plt & UROCE_FLUSH_GLOBAL)
		access |= UROCE_ACCESS_FLUSH_GLOBAL;
	if (plt & UROCE_FLUSH_PERSISTENT)
		access |= UROCE_ACCESS_FLUSH_PERSISTENT;
	rc = qp->dev->ops->flush(qp->dev->ctx, qp, rkey, wire_reth_get_va(reth),
				 wire_reth_get_dmalen(reth), access, sel == UROCE_FLUSH_MR);
	if (rc) {
		resp_fatal(qp, pkt, resp_rkey_nak(rc), UROCE_WC_REM_ACCESS_ERR);
		return;
	}
	xport__count(qp, XPORT_CNT_FLUSH_EXECUTED, 1);
	res = resp_res_alloc(qp);
	res->type = XPORT_RES_READ; /* its answer is a READ response of no data */
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->va_org = wire_reth_get_va(reth);
	res->rkey = rkey;
	res->va = res->va_org;
	res->cur_psn = pkt->psn;
	res->xrc_srqn = qp->resp.xrc_srqn;
	qp->resp.psn = wire_psn_add(pkt->psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & 0xffffffu;
	xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
	resp_start_stream(qp, res);
}

/* ---- duplicates ------------------------------------------------------- */

static struct xport_res *resp_find_res(struct xport_qp *qp, uint32_t psn, uint8_t type)
{
	for (uint32_t i = 0; i < qp->attr.max_dest_rd_atomic; i++) {
		struct xport_res *r = &qp->resp.res[i];

		if (r->type != type)
			continue;
		if (wire_psn_cmp(psn, r->first_psn) >= 0 && wire_psn_cmp(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

/* A request with a PSN before the expected one (C9-105, rxe duplicate_request). */
static void resp_duplicate(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	struct xport_res *res;

	xport__count(qp, XPORT_CNT_DUP_REQ, 1);
	if (pkt->mask & (WIRE_SEND_MASK | WIRE_WRITE_MASK)) {
		/*
		 * C9-105: never execute again; acknowledge the last PSN in
		 * order, coalesced as for new requests (IBA 9.7.5.1: a
		 * responder may coalesce acknowledgements): only a duplicate
		 * that asks for an ACK gets one. A requester that retransmits
		 * sets AckReq at least where it stops, so it is answered once
		 * per retransmission instead of once per packet (hfi1 and qib
		 * rc_rcv_error do the same). This keeps the responder silent
		 * after a sequence NAK until the expected PSN arrives, apart
		 * from those ACKs.
		 */
		if (!pkt->ackreq) {
			xport__count(qp, XPORT_CNT_DUP_SILENT, 1);
			return;
		}
		xport__count(qp, XPORT_CNT_DUP_ACKED, 1);
		resp_ack(qp, wire_psn_sub(qp->resp.psn, 1));
		return;
	}
	if (pkt->mask & WIRE_READ_MASK) {
		const struct wire_reth *reth =
		    (const struct wire_reth *)(pkt->buf + pkt->info->offset[WIRE_HDR_RETH]);
		uint64_t va = wire_reth_get_va(reth);
		uint32_t len = wire_reth_get_dmalen(reth);
		uint64_t pos;

		res = resp_find_res(qp, pkt->psn, XPORT_RES_READ);
		if (!res) {
			xport__drop(qp->dev, qp, XPORT_DROP_DUP_NO_RES);
			return;
		}
		/*
		 * The retried READ must ask for (a part of) the same data,
		 * starting at the byte its PSN stands for.
		 */
		pos = (uint64_t)wire_psn_sub(pkt->psn, res->first_psn) * qp->pmtu;
		if (wire_reth_get_rkey(reth) != res->rkey || va != res->va_org + pos ||
		    pos > res->length || len > res->length - pos) {
			xport__drop(qp->dev, qp, XPORT_DROP_DUP_OTHER);
			return;
		}
		xport__count(qp, XPORT_CNT_READ_REPLAYED, 1);
		res->va = va;
		res->resid = len;
		res->cur_psn = pkt->psn;
		res->started = pkt->psn != res->first_psn;
		resp_start_stream(qp, res);
		return;
	}
	if (pkt->mask & (WIRE_ATOMIC_WRITE_MASK | WIRE_FLUSH_MASK)) {
		res = resp_find_res(qp, pkt->psn, XPORT_RES_READ);
		if (!res || res->length || res->first_psn != pkt->psn) {
			xport__drop(qp->dev, qp, XPORT_DROP_DUP_NO_RES);
			return;
		}
		/* Executed once: only its (empty) answer is sent again. */
		xport__count(qp,
			     pkt->mask & WIRE_FLUSH_MASK ? XPORT_CNT_FLUSH_REPLAYED
							 : XPORT_CNT_ATOMIC_REPLAYED,
			     1);
		res->va = res->va_org;
		res->resid = 0;
		res->cur_psn = pkt->psn;
		res->started = false;
		resp_start_stream(qp, res);
		return;
	}
	if (pkt->mask & WIRE_ATOMIC_MASK) {
		res = resp_find_res(qp, pkt->psn, XPORT_RES_ATOMIC);
		if (!res) {
			xport__drop(qp->dev, qp, XPORT_DROP_DUP_NO_RES);
			return;
		}
		/* Never execute an atomic twice: send the saved result. */
		xport__count(qp, XPORT_CNT_ATOMIC_REPLAYED, 1);
		resp_atomic_ack(qp, pkt->psn, res->orig);
		return;
	}
	xport__drop(qp->dev, qp, XPORT_DROP_DUP_OTHER);
}

/* ---- SEND and WRITE --------------------------------------------------- */

/* Do the QP's access flags allow every placement type a FLUSH asks for? */
static bool resp_flush_allowed(const struct xport_qp *qp, const struct xport_pkt *pkt)
{
	unsigned plt = wire_feth_get_plt(
	    (const struct wire_feth *)(pkt->buf + pkt->info->offset[WIRE_HDR_FETH]));

	if (plt & UROCE_FLUSH_GLOBAL && !(qp->attr.access & UROCE_ACCESS_FLUSH_GLOBAL))
		return false;
	return !(plt & UROCE_FLUSH_PERSISTENT) || qp->attr.access & UROCE_ACCESS_FLUSH_PERSISTENT;
}

/* Is this operation enabled on the QP (ibv qp_access_flags)? */
static bool resp_op_allowed(const struct xport_qp *qp, const struct xport_pkt *pkt)
{
	uint32_t mask = pkt->mask;

	if (mask & WIRE_SEND_MASK)
		/* IETH: RC and XRC only (the opcodes exist for them alone, IBA 9.2) */
		return !(mask & WIRE_IETH_MASK) || qp->type == UROCE_QPT_RC ||
		       qp->type == UROCE_QPT_XRC_RECV;
	if (mask & WIRE_WRITE_MASK)
		return qp->attr.access & UROCE_ACCESS_REMOTE_WRITE;
	if (mask & WIRE_READ_MASK)
		return qp->attr.access & UROCE_ACCESS_REMOTE_READ;
	if (mask & WIRE_ATOMIC_MASK)
		return qp->attr.access & UROCE_ACCESS_REMOTE_ATOMIC;
	/* ATOMIC WRITE: RC only, as the WR (rxe: RC only). */
	if (mask & WIRE_ATOMIC_WRITE_MASK)
		return qp->type == UROCE_QPT_RC && qp->attr.access & UROCE_ACCESS_REMOTE_WRITE;
	/*
	 * FLUSH: RC only (the opcode exists for RC alone), and, as Linux rxe
	 * (check_qp_attr_access), the QP's access flags must allow each
	 * placement type the FETH asks for (a FETH asking for none is
	 * refused later, by resp_flush).
	 */
	if (mask & WIRE_FLUSH_MASK)
		return qp->type == UROCE_QPT_RC && resp_flush_allowed(qp, pkt);
	return false;
}

/* Does this packet need a receive WQE (SEND, or the end of a WRITE with immediate)? */
static bool resp_needs_wqe(uint32_t mask)
{
	if (mask & WIRE_SEND_MASK)
		return true;
	return (mask & WIRE_WRITE_MASK) && (mask & WIRE_IMMDT_MASK);
}

/* The R_Key of a packet's IETH (SEND Last/Only with Invalidate). */
static uint32_t resp_ieth_rkey(const struct xport_pkt *pkt)
{
	return wire_ieth_get_rkey(
	    (const struct wire_ieth *)(pkt->buf + pkt->info->offset[WIRE_HDR_IETH]));
}

/*
 * Complete the held receive WQE for the message that pkt ends: the caller
 * has set the opcode, byte_len, src_qp and wc_flags; this adds what every
 * receive completion carries (WR ID, QP, P_Key index, immediate data,
 * solicited flag) and pushes it.
 */
static void resp_push_recv_cqe(struct xport_qp *qp, const struct xport_pkt *pkt,
			       struct uroce_cqe *cqe)
{
	cqe->wr_id = qp->resp.wqe.wr_id;
	cqe->status = UROCE_WC_SUCCESS;
	cqe->qp_num = qp->qpn;
	cqe->pkey_index = qp->attr.pkey_index;
	cqe->flags = pkt->se ? UROCE_CQE_SOLICITED : 0;
	if (pkt->mask & WIRE_IMMDT_MASK) {
		memcpy(&cqe->imm_data, pkt->buf + pkt->info->offset[WIRE_HDR_IMMDT],
		       WIRE_IMMDT_BYTES);
		cqe->wc_flags |= UROCE_WC_WITH_IMM;
	}
	qp->resp.has_wqe = false;
	qp->dev->ops->push_cqe(qp->dev->ctx, qp, true, cqe);
	xport__count(qp, XPORT_CNT_RECV_CQE, 1);
}

static void resp_complete_recv(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	struct uroce_cqe cqe = {0};

	cqe.src_qp = qp->attr.dest_qpn;
	if (pkt->mask & WIRE_SEND_MASK) {
		cqe.opcode = UROCE_WC_RECV;
		cqe.byte_len = qp->resp.wqe_off;
		if (pkt->mask & WIRE_IETH_MASK) {
			/* The R_Key it invalidated, host order (ibv_wc.invalidated_rkey). */
			cqe.wc_flags |= UROCE_WC_WITH_INV;
			cqe.imm_data = resp_ieth_rkey(pkt);
		}
	} else {
		/* WRITE with immediate: byte_len is the RDMA length (rxe, mlx5). */
		cqe.opcode = UROCE_WC_RECV_RDMA_WITH_IMM;
		cqe.byte_len = qp->resp.write_len;
	}
	resp_push_recv_cqe(qp, pkt, &cqe);
}

/*
 * SEND with Invalidate, at its last packet, its data placed (IBA 9.4.1.4,
 * 10.6.7.2.3): invalidate the R_Key of its IETH before the receive
 * completes. Returns 0, or the NAK code with *wqe_status set when the key
 * cannot be invalidated by this QP (no such MR or window, a type 1 window,
 * a window bound to another QP or of another PD): NAK Invalid Request, the
 * receive WQE completes with IBV_WC_REM_INV_REQ_ERR (as Linux rxe).
 */
static int resp_invalidate(struct xport_qp *qp, const struct xport_pkt *pkt, uint32_t *wqe_status)
{
	int rc = -EINVAL;

	if (qp->dev->ops->invalidate)
		rc = qp->dev->ops->invalidate(qp->dev->ctx, qp, resp_ieth_rkey(pkt), true);
	if (!rc) {
		xport__count(qp, XPORT_CNT_INV_REMOTE, 1);
		return 0;
	}
	xport__count(qp, XPORT_CNT_INV_REFUSED, 1);
	*wqe_status = UROCE_WC_REM_INV_REQ_ERR;
	return WIRE_NAK_INVALID_REQUEST;
}

/*
 * Place one SEND/WRITE packet. Returns 0, or the NAK code with *wqe_status
 * set for a class C error (the caller decides what UC does instead).
 */
static int resp_place(struct xport_qp *qp, const struct xport_pkt *pkt, uint32_t *wqe_status)
{
	uint32_t mask = pkt->mask;
	int rc;

	if (mask & WIRE_WRITE_MASK) {
		if (mask & WIRE_RETH_MASK) {
			const struct wire_reth *reth =
			    (const struct wire_reth *)(pkt->buf + pkt->info->offset[WIRE_HDR_RETH]);

			qp->resp.va = wire_reth_get_va(reth);
			qp->resp.rkey = wire_reth_get_rkey(reth);
			qp->resp.resid = wire_reth_get_dmalen(reth);
			qp->resp.write_len = qp->resp.resid;
			if (qp->resp.resid > XPORT_MAX_MSG_BYTES) {
				*wqe_status = UROCE_WC_REM_INV_REQ_ERR;
				return WIRE_NAK_INVALID_REQUEST;
			}
			if (qp->resp.resid) {
				/* Check the whole range at the first packet (rxe check_rkey). */
				rc = qp->dev->ops->dma_rkey(
				    qp->dev->ctx, qp, qp->resp.rkey, qp->resp.va, NULL,
				    qp->resp.resid, UROCE_ACCESS_REMOTE_WRITE, XPORT_DMA_CHECK);
				if (rc) {
					*wqe_status = UROCE_WC_REM_ACCESS_ERR;
					return (int)resp_rkey_nak(rc);
				}
			}
		}
		/* The packets must add up to the RETH DMA length exactly (rxe check_rkey). */
		if (pkt->paylen > qp->resp.resid ||
		    ((mask & WIRE_END_MASK) ? pkt->paylen != qp->resp.resid
					    : pkt->paylen == qp->resp.resid)) {
			*wqe_status = UROCE_WC_REM_INV_REQ_ERR;
			return WIRE_NAK_INVALID_REQUEST;
		}
		if (pkt->paylen) {
			rc = qp->dev->ops->dma_rkey(qp->dev->ctx, qp, qp->resp.rkey, qp->resp.va,
						    (void *)pkt->payload, pkt->paylen,
						    UROCE_ACCESS_REMOTE_WRITE, XPORT_DMA_FROM_BUF);
			if (rc) {
				*wqe_status = UROCE_WC_REM_ACCESS_ERR;
				return (int)resp_rkey_nak(rc);
			}
		}
		qp->resp.va += pkt->paylen;
		qp->resp.resid -= pkt->paylen;
		return 0;
	}
	/* SEND: scatter over the receive WQE. */
	if (qp->resp.wqe.malformed) {
		*wqe_status = UROCE_WC_LOC_QP_OP_ERR;
		return WIRE_NAK_REMOTE_OP_ERR;
	}
	rc = xport__sge_copy(qp, qp->resp.wqe.sge, qp->resp.wqe.num_sge, qp->resp.wqe_off,
			     (void *)pkt->payload, pkt->paylen,
			     UROCE_ACCESS_LOCAL_WRITE | XPORT_ACCESS_RECV_WQE, XPORT_DMA_FROM_BUF);
	if (rc == -ENOSPC) {
		/* Message longer than the receive buffers. */
		*wqe_status = UROCE_WC_LOC_LEN_ERR;
		return WIRE_NAK_INVALID_REQUEST;
	}
	if (rc) {
		/*
		 * The receive WQE's buffers do not reference memory valid for
		 * the write (lkey, PD, range, access, or pages gone): a local
		 * protection error (IBA 11.6.2; as mlx5 reports it, where rxe
		 * says local QP operation error), and for the sender a remote
		 * operation error.
		 */
		*wqe_status = UROCE_WC_LOC_PROT_ERR;
		return WIRE_NAK_REMOTE_OP_ERR;
	}
	qp->resp.wqe_off += pkt->paylen;
	return 0;
}

/* Take a receive WQE; false when there is none. */
static bool resp_take_wqe(struct xport_qp *qp)
{
	if (qp->resp.has_wqe)
		return true;
	if (qp->dev->ops->get_recv_wqe(qp->dev->ctx, qp, &qp->resp.wqe))
		return false;
	qp->resp.has_wqe = true;
	qp->resp.wqe_off = 0;
	return true;
}

/*
 * Receiver not ready, for a moment. The request at the head of the queue is
 * the expected one of an RC QP in RTR/RTS and needs a receive WQE, and there
 * is none: with dev->rnr_hold_us set, the responder waits that long for the
 * program to post one (the daemon runs the QP again when its RQ or SRQ has
 * one: ops->rnr_wait; the QP's timer ends the wait), before it answers with
 * the RNR NAK. A responder may take its time over a
 * request; one whose program is a time slice away from reposting saves the
 * requester an RNR timer (min_rnr_timer: 0.64 ms for perftest) and the
 * resend of everything behind the request. Requests that arrive meanwhile
 * wait behind it, in order. True while it waits.
 */
static bool resp_rnr_hold_pkt(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	uint64_t now;

	if (!qp->dev->rnr_hold_us || qp->type != UROCE_QPT_RC)
		return false;
	if (!pkt || pkt->psn != qp->resp.psn || !resp_needs_wqe(pkt->mask) ||
	    (qp->attr.state != UROCE_QPS_RTR && qp->attr.state != UROCE_QPS_RTS) ||
	    resp_take_wqe(qp)) {
		if (qp->resp.rnr_hold_until && pkt && pkt->psn == qp->resp.psn && qp->resp.has_wqe)
			xport__count(qp, XPORT_CNT_RNR_HELD_TAKEN, 1);
		qp->resp.rnr_hold_until = 0;
		return false;
	}
	now = qp->dev->ops->now_us(qp->dev->ctx);
	if (!qp->resp.rnr_hold_until) {
		qp->resp.rnr_hold_until = now + qp->dev->rnr_hold_us;
		xport__count(qp, XPORT_CNT_RNR_HELD, 1);
		xport__timer_update(qp);
		if (qp->dev->ops->rnr_wait)
			qp->dev->ops->rnr_wait(qp->dev->ctx, qp);
	} else if (now >= qp->resp.rnr_hold_until) {
		qp->resp.rnr_hold_until = 0;
		return false; /* resp_rcv answers it with the RNR NAK */
	}
	return true;
}

static bool resp_rnr_hold(struct xport_qp *qp)
{
	return resp_rnr_hold_pkt(qp, xport__pktq_peek(&qp->resp_q));
}

/*
 * A gap before the expected PSN: one PSN Sequence Error NAK carrying the
 * expected PSN, then silence until that PSN arrives (rxe check_psn;
 * IBA 9.7.5.2: the responder NAKs a sequence error once and ignores new
 * requests until the expected one).
 */
static void resp_nak_gap(struct xport_qp *qp)
{
	if (qp->resp.sent_psn_nak)
		return;
	qp->resp.sent_psn_nak = true;
	xport__count(qp, XPORT_CNT_SEQ_NAK_SENT, 1);
	resp_send_ack(qp, wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR), qp->resp.psn);
}

/*
 * XRC target: the XRCETH of a request names the XRC SRQ its message is
 * for. At the first packet of a message the SRQ must exist and belong to
 * the QP's XRC domain; the other packets of the message must name the same
 * one. Returns 0, or the NAK code with *wqe_status set (the class C NAKs of
 * IBA 9.7.5.2): Remote Access Error for an SRQ of another XRC domain (the
 * domain is XRC's protection boundary, as the PD is an R_Key's), Invalid
 * Request for an SRQ number that names no XRC SRQ or that changes inside a
 * message.
 */
static int resp_xrc_srq(struct xport_qp *qp, const struct xport_pkt *pkt, uint32_t *wqe_status)
{
	uint32_t srqn = wire_xrceth_get_srqn(
	    (const struct wire_xrceth *)(pkt->buf + pkt->info->offset[WIRE_HDR_XRCETH]));
	int rc;

	if (qp->resp.last_mask) {
		if (srqn == qp->resp.xrc_srqn)
			return 0;
		rc = -EINVAL;
	} else {
		rc = resp_xrc_use(qp, srqn);
		if (!rc)
			return 0;
	}
	xport__count(qp, XPORT_CNT_XRC_SRQ_REFUSED, 1);
	*wqe_status = rc == -EACCES ? UROCE_WC_REM_ACCESS_ERR : UROCE_WC_REM_INV_REQ_ERR;
	return rc == -EACCES ? WIRE_NAK_REMOTE_ACCESS_ERR : WIRE_NAK_INVALID_REQUEST;
}

static void resp_rc(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	int32_t d = wire_psn_cmp(pkt->psn, qp->resp.psn);
	uint32_t mask = pkt->mask, status = 0;
	int nak;

	if (d > 0) {
		/*
		 * Beyond the expected PSN: held, when there is room, to be
		 * executed in order once the gap is filled, so that a packet
		 * that was only late does not cost the requester the whole
		 * window again (it resends from the gap; what it resends that
		 * was held is a duplicate then). The wire sees what IBA
		 * requires either way (IBA 9.7.5.2): one NAK per gap.
		 */
		if (xport__held_put(qp, pkt) == 0)
			xport__count(qp, XPORT_CNT_HELD, 1);
		else
			xport__drop(qp->dev, qp, XPORT_DROP_OUT_OF_SEQ);
		resp_nak_gap(qp);
		return;
	}
	if (d < 0) {
		resp_duplicate(qp, pkt);
		return;
	}
	qp->resp.sent_psn_nak = false;
	/* The expected PSN: this is the peer (its port is learned here). */
	xport__recv_sport_learn(qp, pkt);
	if (qp->type == UROCE_QPT_XRC_RECV) {
		nak = resp_xrc_srq(qp, pkt, &status);
		if (nak) {
			resp_fatal(qp, pkt, (unsigned)nak, status);
			return;
		}
	}
	if (!xport__resp_seq_ok(qp->resp.last_mask, mask) || !resp_op_allowed(qp, pkt) ||
	    !xport__resp_len_ok(mask, pkt->paylen, qp->pmtu)) {
		resp_fatal(qp, pkt, WIRE_NAK_INVALID_REQUEST, UROCE_WC_REM_INV_REQ_ERR);
		return;
	}
	if (mask & WIRE_READ_MASK) {
		resp_read(qp, pkt);
		return;
	}
	if (mask & WIRE_ATOMIC_MASK) {
		resp_atomic(qp, pkt);
		return;
	}
	if (mask & WIRE_ATOMIC_WRITE_MASK) {
		resp_atomic_write(qp, pkt);
		return;
	}
	if (mask & WIRE_FLUSH_MASK) {
		resp_flush(qp, pkt);
		return;
	}
	if (resp_needs_wqe(mask) && !resp_take_wqe(qp)) {
		/* Receiver not ready: RNR NAK, the PSN stays expected (PROTOCOL.md 7). */
		xport__drop(qp->dev, qp, XPORT_DROP_RNR);
		xport__count(qp, XPORT_CNT_RNR_NAK_SENT, 1);
		resp_send_ack(qp, wire_aeth_syndrome(WIRE_AETH_RNR_NAK, qp->attr.min_rnr_timer),
			      pkt->psn);
		return;
	}
	nak = resp_place(qp, pkt, &status);
	if (!nak && mask & WIRE_IETH_MASK)
		nak = resp_invalidate(qp, pkt, &status);
	if (nak) {
		resp_fatal(qp, pkt, (unsigned)nak, status);
		return;
	}
	qp->resp.psn = wire_psn_add(qp->resp.psn, 1);
	qp->resp.last_mask = mask & WIRE_END_MASK ? 0 : mask;
	xport__count(qp, XPORT_CNT_RX_BYTES, pkt->paylen);
	if (mask & WIRE_END_MASK) {
		qp->resp.msn = (qp->resp.msn + 1) & 0xffffffu;
		xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
		if (resp_needs_wqe(mask))
			resp_complete_recv(qp, pkt);
	}
	/* Once an ACK is owed, it covers every request executed with it. */
	if (pkt->ackreq || qp->resp.ack_pending)
		resp_ack(qp, pkt->psn);
}

/* UC: no ACK, no NAK; a lost packet costs the whole message (rxe check_psn). */
static void resp_uc(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	uint32_t mask = pkt->mask, status = 0;
	int nak;

	if (pkt->psn != qp->resp.psn || qp->resp.uc_drop) {
		/* Resynchronise on the first packet of a new message. */
		if (qp->resp.last_mask || qp->resp.uc_drop) {
			qp->resp.last_mask = 0;
			qp->resp.wqe_off = 0;
		}
		if (!(mask & WIRE_START_MASK)) {
			qp->resp.uc_drop = true;
			qp->resp.psn = wire_psn_add(pkt->psn, 1);
			xport__drop(qp->dev, qp, XPORT_DROP_UC_MSG);
			return;
		}
		qp->resp.uc_drop = false;
		qp->resp.psn = pkt->psn;
	}
	/* UC has no PSN handshake: the first packet taken names the peer. */
	xport__recv_sport_learn(qp, pkt);
	if (!xport__resp_seq_ok(qp->resp.last_mask, mask) || !resp_op_allowed(qp, pkt) ||
	    !xport__resp_len_ok(mask, pkt->paylen, qp->pmtu))
		goto drop_msg;
	if (resp_needs_wqe(mask) && !resp_take_wqe(qp)) {
		xport__drop(qp->dev, qp, XPORT_DROP_NO_RECV_WQE);
		goto drop_msg_counted;
	}
	nak = resp_place(qp, pkt, &status);
	if (nak) {
		if (status == UROCE_WC_LOC_LEN_ERR || status == UROCE_WC_LOC_PROT_ERR ||
		    status == UROCE_WC_LOC_QP_OP_ERR) {
			/* The receive WQE itself is at fault: complete it in error. */
			xport__resp_flush_wqe(qp, status);
			xport__error(qp);
			return;
		}
		goto drop_msg;
	}
	qp->resp.psn = wire_psn_add(qp->resp.psn, 1);
	qp->resp.last_mask = mask & WIRE_END_MASK ? 0 : mask;
	xport__count(qp, XPORT_CNT_RX_BYTES, pkt->paylen);
	if (mask & WIRE_END_MASK) {
		xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
		if (resp_needs_wqe(mask))
			resp_complete_recv(qp, pkt);
	}
	return;
drop_msg:
	xport__drop(qp->dev, qp, XPORT_DROP_UC_MSG);
drop_msg_counted:
	/* Keep any receive WQE for the next message, from its start. */
	qp->resp.wqe_off = 0;
	qp->resp.last_mask = 0;
	qp->resp.uc_drop = !(mask & WIRE_END_MASK);
	qp->resp.psn = wire_psn_add(pkt->psn, 1);
}

/*
 * The 40-byte GRH area of a UD receive buffer (Annex A17.4.5.2, PROTOCOL.md 1):
 * for IPv4 the IP header of the packet in its last 20 bytes, for IPv6 the
 * IPv6 header, both as they were on the wire (wire/inet.h builds them).
 * Returns which of the two it is, as the completion's sl says it.
 */
static enum uroce_cqe_l3 resp_grh(const struct xport_pkt *pkt, uint8_t grh[40])
{
	const struct xport_route *rt = pkt->rt;
	/* Lengths as on the wire: IB packet (with ICRC) + UDP header. */
	uint32_t udp_len = WIRE_UDP_BYTES + (uint32_t)pkt->len + XPORT_ICRC_BYTES;

	memset(grh, 0, 40);
	if (xport__gid_is_v4(rt->sgid)) {
		struct wire_ipv4_params ip = {
		    .tos = rt->tclass,
		    .total_len = (uint16_t)(WIRE_IPV4_BYTES + udp_len),
		    .id = rt->ip_id_known ? rt->ip_id : 0,
		    .frag = rt->ip_id_known && !rt->ip_df ? 0 : WIRE_IPV4_DF,
		    .ttl = rt->hop_limit,
		    .proto = WIRE_IPPROTO_UDP,
		};

		memcpy(ip.src, rt->sgid + 12, 4);
		memcpy(ip.dst, rt->dgid + 12, 4);
		wire_ipv4_put(grh + 40 - WIRE_IPV4_BYTES, &ip);
		return UROCE_CQE_L3_IPV4;
	} else {
		struct wire_ipv6_params ip = {.tclass = rt->tclass,
					      .payload_len = (uint16_t)udp_len,
					      .next = WIRE_IPPROTO_UDP,
					      .hop_limit = rt->hop_limit};

		memcpy(ip.src, rt->sgid, 16);
		memcpy(ip.dst, rt->dgid, 16);
		wire_ipv6_put(grh, &ip);
		return UROCE_CQE_L3_IPV6;
	}
}

/* UD: one packet per message, DETH already checked (Q_Key) in recv.c. */
static void resp_ud(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	const struct wire_deth *deth =
	    (const struct wire_deth *)(pkt->buf + pkt->info->offset[WIRE_HDR_DETH]);
	struct uroce_cqe cqe = {0};
	enum uroce_cqe_l3 l3;
	uint8_t grh[40];
	int rc;

	if (!resp_take_wqe(qp)) {
		xport__drop(qp->dev, qp, XPORT_DROP_NO_RECV_WQE);
		return;
	}
	if (qp->resp.wqe.malformed) {
		xport__resp_flush_wqe(qp, UROCE_WC_LOC_QP_OP_ERR);
		xport__error(qp);
		return;
	}
	l3 = resp_grh(pkt, grh);
	rc = xport__sge_copy(qp, qp->resp.wqe.sge, qp->resp.wqe.num_sge, 0, grh, sizeof(grh),
			     UROCE_ACCESS_LOCAL_WRITE | XPORT_ACCESS_RECV_WQE, XPORT_DMA_FROM_BUF);
	if (!rc)
		rc = xport__sge_copy(qp, qp->resp.wqe.sge, qp->resp.wqe.num_sge, sizeof(grh),
				     (void *)pkt->payload, pkt->paylen,
				     UROCE_ACCESS_LOCAL_WRITE | XPORT_ACCESS_RECV_WQE,
				     XPORT_DMA_FROM_BUF);
	if (rc == -ENOSPC) {
		/* The message is lost for this WQE; a UD QP stays usable. */
		xport__drop(qp->dev, qp, XPORT_DROP_UD_TOO_LONG);
		xport__resp_flush_wqe(qp, UROCE_WC_LOC_LEN_ERR);
		return;
	}
	if (rc) {
		/* Buffers not valid for the write, as resp_place says. */
		xport__resp_flush_wqe(qp, UROCE_WC_LOC_PROT_ERR);
		xport__error(qp);
		return;
	}
	cqe.opcode = UROCE_WC_RECV;
	cqe.byte_len = (uint32_t)sizeof(grh) + pkt->paylen;
	cqe.src_qp = wire_deth_get_srcqp(deth);
	cqe.wc_flags = UROCE_WC_GRH;
	cqe.sl = l3;
	resp_push_recv_cqe(qp, pkt, &cqe);
	xport__count(qp, XPORT_CNT_MSG_RCVD, 1);
	xport__count(qp, XPORT_CNT_RX_BYTES, pkt->paylen);
}

/*
 * IBA 11.6.3.1 (o11-5.1.1): the first packet received on a connected QP
 * in RTR establishes communication; not reported for UD QPs.
 */
static void resp_comm_est(struct xport_qp *qp)
{
	if (qp->type == UROCE_QPT_UD || qp->attr.state != UROCE_QPS_RTR || qp->resp.comm_est_told)
		return;
	qp->resp.comm_est_told = true;
	if (qp->dev->ops->comm_est)
		qp->dev->ops->comm_est(qp->dev->ctx, qp);
}

/* One request, in its turn (RC/UC/UD). */
static void resp_rcv(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	resp_comm_est(qp);
	switch (qp->type) {
	case UROCE_QPT_RC:
	case UROCE_QPT_XRC_RECV:
		resp_rc(qp, pkt);
		break;
	case UROCE_QPT_UC:
		resp_uc(qp, pkt);
		break;
	case UROCE_QPT_UD:
		resp_ud(qp, pkt);
		break;
	}
}

/* ---- the responder's queue -------------------------------------------- */

/*
 * Process queued requests in arrival order. Requests wait while READ
 * responses stream, so that no ACK or later response overtakes them.
 */
static bool resp_rnr_hold(struct xport_qp *qp);

/*
 * Execute what can be executed: first, when given, a request that was not
 * queued (nothing was ahead of it), then the held request the responder
 * expects and the queue, until a READ stream or a wait for a receive WQE
 * stops it; then the NAK or the ACK that is owed.
 */
static void resp_drain(struct xport_qp *qp, const struct xport_pkt *first)
{
	const struct xport_pkt *pkt;

	while (!qp->resp.stream) {
		/* The held request the responder expects goes first. */
		pkt = first ? first : qp->held.n ? xport__held_take(qp, qp->resp.psn) : NULL;
		first = NULL;
		if (!pkt) {
			if (resp_rnr_hold(qp))
				break;
			pkt = xport__pktq_pop(&qp->resp_q);
		}
		if (!pkt)
			break;
		/* recv.c checked the state on arrival; it may have changed since. */
		if (!xport__recv_state_ok(qp->attr.state, pkt->mask)) {
			xport__drop(qp->dev, qp, XPORT_DROP_QP_STATE);
			continue;
		}
		/* Queued or held before the peer's port was learned. */
		if (!xport__recv_sport_ok(qp, pkt))
			continue;
		resp_rcv(qp, pkt);
	}
	xport__held_release(qp);
	/*
	 * The gap closed but requests held further on show the next one: NAK
	 * it as if they had just arrived (not while READ responses stream,
	 * which the NAK would overtake).
	 */
	if (!qp->resp.stream && qp->held.n && xport__reliable(qp) &&
	    qp->attr.state != UROCE_QPS_ERR && xport__held_ahead(qp))
		resp_nak_gap(qp);
	if (qp->dev->rx_batch && qp->resp.ack_pending) {
		if (!qp->resp.ack_listed) {
			qp->resp.ack_listed = true;
			qp->resp.ack_next = qp->dev->ack_list;
			qp->dev->ack_list = qp;
		}
		return;
	}
	resp_flush_ack(qp);
}

void xport_rx_batch_begin(struct xport_dev *dev)
{
	dev->rx_batch = true;
}

void xport_rx_batch_end(struct xport_dev *dev)
{
	dev->rx_batch = false;
	while (dev->ack_list) {
		struct xport_qp *qp = dev->ack_list;

		dev->ack_list = qp->resp.ack_next;
		qp->resp.ack_listed = false;
		qp->resp.ack_next = NULL;
		resp_flush_ack(qp);
	}
}

/* A QP that goes away (or is reset) inside a batch leaves the list. */
void xport__resp_unlist_ack(struct xport_qp *qp)
{
	struct xport_qp **pp;

	if (!qp->resp.ack_listed || !qp->dev)
		return;
	for (pp = &qp->dev->ack_list; *pp; pp = &(*pp)->resp.ack_next)
		if (*pp == qp) {
			*pp = qp->resp.ack_next;
			break;
		}
	qp->resp.ack_listed = false;
	qp->resp.ack_next = NULL;
}

void xport__resp_queue_pkt(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	/* Behind a READ stream or earlier requests: it has to wait its turn. */
	bool held = qp->resp.stream || qp->resp_q.n;

	/*
	 * Nothing ahead of it (nor held beyond a gap, which may be the one
	 * the responder expects) and no wait for a receive WQE: executed in
	 * place, without a copy.
	 */
	if (!held && !qp->held.n && !resp_rnr_hold_pkt(qp, pkt)) {
		resp_drain(qp, pkt);
		return;
	}
	if (xport__pktq_push(&qp->resp_q, pkt)) {
		xport__drop(qp->dev, qp, XPORT_DROP_RESP_BUSY);
		return;
	}
	if (held)
		xport__count(qp, XPORT_CNT_DEFERRED, 1);
	resp_drain(qp, NULL);
}

bool xport__resp_run(struct xport_qp *qp)
{
	if (qp->resp.stream && resp_stream(qp, XPORT_READ_BURST))
		return true;
	resp_drain(qp, NULL);
	return qp->resp.stream || qp->resp_q.n;
}
