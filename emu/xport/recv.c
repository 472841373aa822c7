/* SPDX-License-Identifier: MIT */
/*
 * Receive: validate an incoming RoCEv2 packet and queue it (rxe_recv.c). It
 * applies the checks of PROTOCOL.md section 10 once, in order (structure
 * via wire_validate, ICRC (icrc.c, which decides how without the IPv4
 * header), destination QP,
 * transport vs QP type, QP state, the QP's path addresses and its peer's
 * UDP source port, P_Key, Q_Key for UD), counts every drop by reason on the device and, once the QP
 * is known, on the QP, and queues a copy of the parsed packet on the QP's responder queue
 * (requests) or completer queue (responses); it also implements those queues and the store of
 * requests the responder holds beyond a gap. It executes nothing itself, never answers a packet,
 * and is not called again for a queued one: what must be re-checked when a queued packet's turn
 * comes (PSN, QP state) is the responder's and completer's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/icrc.h>
#include <wire/psn.h>
#include <wire/validate.h>
#include "xport_int.h"

/* Map wire_validate's verdicts onto the engine's drop reasons. */
static enum xport_drop recv_reason(enum wire_reason r)
{
	switch (r) {
	case WIRE_R_BAD_TVER:
		return XPORT_DROP_BAD_TVER;
	case WIRE_R_UNKNOWN_OPCODE:
		return XPORT_DROP_BAD_OPCODE;
	case WIRE_R_PAD_INCONSISTENT:
	case WIRE_R_LENGTH_FOR_OPCODE:
	case WIRE_R_NOT_MULTIPLE_OF_4:
		return XPORT_DROP_BAD_PAD;
	default:
		return XPORT_DROP_SHORT;
	}
}

/*
 * Parse buf (BTH .. ICRC) into pkt: opcode, headers, payload; the only
 * parse a packet gets. Returns 0, or -1 - reason (an enum xport_drop) when
 * it is malformed.
 */
static int recv_parse(const uint8_t *buf, size_t len, const struct xport_route *rt,
		      struct xport_pkt *pkt)
{
	struct wire_pkt wp;
	enum wire_reason r = wire_validate(buf, len, &wp);
	const struct wire_bth *bth = (const struct wire_bth *)buf;

	memset(pkt, 0, sizeof(*pkt));
	if (r != WIRE_R_OK)
		return -1 - (int)recv_reason(r);
	pkt->buf = buf;
	pkt->len = len - WIRE_ICRC_BYTES;
	pkt->info = wp.info;
	pkt->mask = wp.info->mask;
	pkt->opcode = wp.opcode;
	pkt->pad = (uint8_t)wp.pad;
	pkt->ackreq = wire_bth_get_ackreq(bth);
	pkt->se = wire_bth_get_se(bth);
	pkt->pkey = wire_bth_get_pkey(bth);
	pkt->psn = wire_bth_get_psn(bth);
	pkt->qpn = wire_bth_get_destqp(bth);
	pkt->payload = buf + wp.payload_off;
	pkt->paylen = (uint32_t)wp.payload_len;
	pkt->rt = rt;
	return 0;
}

bool xport__recv_pkey_ok(uint16_t a, uint16_t b)
{
	/* PROTOCOL.md 10: same 15-bit key, and not both limited members. */
	return (a & 0x7fff) == (b & 0x7fff) && (a & 0x7fff) && ((a | b) & 0x8000);
}

static bool recv_type_ok(uint32_t qp_type, uint8_t opcode)
{
	switch (wire_opcode_transport(opcode)) {
	case WIRE_TRANSPORT_RC:
		return qp_type == UROCE_QPT_RC;
	case WIRE_TRANSPORT_UC:
		return qp_type == UROCE_QPT_UC;
	case WIRE_TRANSPORT_UD:
		return qp_type == UROCE_QPT_UD;
	case WIRE_TRANSPORT_XRC:
		/* Requests go to target QPs, responses to initiators. */
		return qp_type == ((wire_opcode_info(opcode)->mask & WIRE_REQ_MASK)
				       ? UROCE_QPT_XRC_RECV
				       : UROCE_QPT_XRC_SEND);
	default:
		return false;
	}
}

bool xport__recv_state_ok(uint32_t state, uint32_t mask)
{
	/* rxe check_type_state: who may receive what. */
	if (mask & WIRE_REQ_MASK)
		return state == UROCE_QPS_RTR || state == UROCE_QPS_RTS || state == UROCE_QPS_SQD ||
		       state == UROCE_QPS_SQE;
	/* Responses answer our requests: only once we could have sent any. */
	return state == UROCE_QPS_RTS || state == UROCE_QPS_SQD || state == UROCE_QPS_SQE;
}

bool xport__recv_sport_ok(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	/*
	 * A connected QP hears only its peer QP, and RC/UC packets name no
	 * source QP: the peer's UDP source port stands for it. RoCEv2
	 * senders pick it per QP (rxe: a hash of the QPN, for ECMP), a uroce
	 * peer sends from the port its daemon holds, so it is learned, never
	 * assumed. Without it anyone who can send UDP from the peer's
	 * address (any local user on a shared host) could forge requests
	 * and ACKs knowing only the QPN and a PSN.
	 */
	if (qp->type == UROCE_QPT_UD || !qp->peer_sport || pkt->rt->sport == qp->peer_sport)
		return true;
	xport__drop(qp->dev, qp, XPORT_DROP_BAD_SPORT);
	return false;
}

void xport__recv_sport_learn(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	if (qp->peer_sport || qp->type == UROCE_QPT_UD || !pkt->rt->sport)
		return;
	qp->peer_sport = pkt->rt->sport;
	xport__count(qp, XPORT_CNT_SPORT_LEARNED, 1);
}

/* The per-QP checks of PROTOCOL.md 10, then queue the packet for its handler. */
static void recv_dispatch(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	struct xport_dev *dev = qp->dev;

	if (!recv_type_ok(qp->type, pkt->opcode)) {
		xport__drop(dev, qp, XPORT_DROP_QP_TYPE);
		return;
	}
	if (!xport__recv_state_ok(qp->attr.state, pkt->mask)) {
		xport__drop(dev, qp, XPORT_DROP_QP_STATE);
		return;
	}
	/* Connected QPs only talk to the peer of their address vector. */
	if (qp->type != UROCE_QPT_UD &&
	    (memcmp(pkt->rt->sgid, qp->attr.av.dgid, XPORT_GID_BYTES) ||
	     memcmp(pkt->rt->dgid, qp->attr.av.sgid, XPORT_GID_BYTES))) {
		xport__drop(dev, qp, XPORT_DROP_BAD_ADDR);
		return;
	}
	if (!xport__recv_sport_ok(qp, pkt))
		return;
	if (!xport__recv_pkey_ok(pkt->pkey, qp->attr.pkey)) {
		xport__drop(dev, qp, XPORT_DROP_BAD_PKEY);
		return;
	}
	if (pkt->mask & WIRE_DETH_MASK) {
		const struct wire_deth *deth =
		    (const struct wire_deth *)(pkt->buf + pkt->info->offset[WIRE_HDR_DETH]);

		/* PROTOCOL.md 10: the Q_Key must match. */
		if (wire_deth_get_qkey(deth) != qp->attr.qkey) {
			xport__drop(dev, qp, XPORT_DROP_BAD_QKEY);
			return;
		}
	}
	if (pkt->mask & WIRE_REQ_MASK)
		xport__resp_queue_pkt(qp, pkt);
	else if (qp->type == UROCE_QPT_RC || qp->type == UROCE_QPT_XRC_SEND)
		xport__comp_queue_pkt(qp, pkt);
	else
		xport__drop(dev, qp, XPORT_DROP_QP_TYPE);
}

/* A multicast GID: IPv6 ff00::/8, or IPv4-mapped 224.0.0.0/4. */
static bool recv_gid_is_mcast(const uint8_t gid[XPORT_GID_BYTES])
{
	return gid[0] == 0xff || (xport__gid_is_v4(gid) && (gid[12] & 0xf0) == 0xe0);
}

/* One attached QP's copy of a multicast packet (the ops' mcast_each). */
static void recv_mcast_one(struct xport_qp *qp, void *arg)
{
	const struct xport_pkt *pkt = arg;

	qp->cnt[XPORT_CNT_RX_PKTS]++;
	recv_dispatch(qp, pkt);
}

void xport_recv_packet(struct xport_dev *dev, const struct xport_route *rt, const void *buf,
		       size_t len)
{
	const uint8_t *p = buf;
	struct xport_pkt pkt;
	struct xport_qp *qp;
	uint64_t t;
	bool ok;
	int rc;

	dev->cnt[XPORT_CNT_RX_PKTS]++;
	if (len < WIRE_BTH_BYTES + WIRE_ICRC_BYTES) {
		xport__drop(dev, NULL, XPORT_DROP_SHORT);
		return;
	}
	/* First, so that nothing below ever acts on a corrupted field. */
	t = xport__prof_start(dev);
	ok = xport__recv_icrc_ok(dev, rt, p, len);
	xport__prof_icrc(dev, t);
	if (!ok) {
		xport__drop(dev, NULL, XPORT_DROP_BAD_ICRC);
		return;
	}
	rc = recv_parse(p, len, rt, &pkt);
	if (rc < 0) {
		xport__drop(dev, NULL, (enum xport_drop)(-1 - rc));
		return;
	}
	if (pkt.mask & WIRE_CNP_OP_MASK) {
		xport__drop(dev, NULL, XPORT_DROP_CNP);
		return;
	}
	/*
	 * IBA 10.5: a multicast packet is a UD SEND to QP 0xFFFFFF, and QP
	 * 0xFFFFFF means multicast; each attached QP then applies its own
	 * checks (state, P_Key, Q_Key) to its copy, the sender's own QP too
	 * when it is attached (the RNIC loops the group's packets back to its
	 * port, as hardware does unless told to block that).
	 */
	if ((pkt.qpn == WIRE_QPN_MASK) != recv_gid_is_mcast(rt->dgid) ||
	    (pkt.qpn == WIRE_QPN_MASK &&
	     (!dev->ops->mcast_each || wire_opcode_transport(pkt.opcode) != WIRE_TRANSPORT_UD))) {
		xport__drop(dev, NULL, XPORT_DROP_MULTICAST);
		return;
	}
	if (pkt.qpn == WIRE_QPN_MASK) {
		dev->ops->mcast_each(dev->ctx, rt->dgid, recv_mcast_one, &pkt);
		return;
	}
	if (pkt.qpn == WIRE_GSI_QPN) {
		xport__gsi_recv(dev, &pkt);
		return;
	}
	qp = pkt.qpn ? dev->ops->lookup_qp(dev->ctx, pkt.qpn) : NULL;
	if (!qp) {
		xport__drop(dev, NULL, XPORT_DROP_NO_QP);
		return;
	}
	qp->cnt[XPORT_CNT_RX_PKTS]++;
	recv_dispatch(qp, &pkt);
}

/* ---- the per-QP packet queues ----------------------------------------- */

/*
 * Copy a parsed packet and its path into storage of its own (buf holds
 * pkt->len bytes): the copy keeps the parse, same offsets, pointers into
 * the copy, so the packet is never parsed again.
 */
static void recv_copy_pkt(struct xport_pkt *to, struct xport_route *rt, uint8_t *buf,
			  const struct xport_pkt *pkt)
{
	memcpy(buf, pkt->buf, pkt->len);
	*rt = *pkt->rt;
	*to = *pkt;
	to->buf = buf;
	to->payload = buf + (pkt->payload - pkt->buf);
	to->rt = rt;
}

int xport__pktq_push(struct xport_pktq *q, const struct xport_pkt *pkt)
{
	uint32_t i = (q->head + q->n) % XPORT_MAX_DEFERRED;
	struct xport_qpkt *e;

	if (q->n == XPORT_MAX_DEFERRED)
		return -ENOBUFS;
	/* wire_validate caps the payload at 4096 bytes: every packet fits. */
	if (pkt->len > XPORT_MAX_PKT_BYTES)
		return -EMSGSIZE;
	if (!q->slot[i]) {
		q->slot[i] = malloc(sizeof(*q->slot[i]));
		if (!q->slot[i])
			return -ENOMEM;
	}
	e = q->slot[i];
	recv_copy_pkt(&e->pkt, &e->rt, e->buf, pkt);
	q->n++;
	return 0;
}

const struct xport_pkt *xport__pktq_pop(struct xport_pktq *q)
{
	const struct xport_qpkt *e;

	if (!q->n)
		return NULL;
	e = q->slot[q->head];
	q->head = (q->head + 1) % XPORT_MAX_DEFERRED;
	/* Empty again: start over at the first entry, the only one most QPs need. */
	if (!--q->n)
		q->head = 0;
	return &e->pkt;
}

const struct xport_pkt *xport__pktq_peek(const struct xport_pktq *q)
{
	return q->n ? &q->slot[q->head]->pkt : NULL;
}

void xport__pktq_clear(struct xport_pktq *q)
{
	q->head = 0;
	q->n = 0;
}

void xport__pktq_free(struct xport_pktq *q)
{
	for (uint32_t i = 0; i < XPORT_MAX_DEFERRED; i++) {
		free(q->slot[i]);
		q->slot[i] = NULL;
	}
	xport__pktq_clear(q);
}

/* ---- requests held beyond a gap (the responder decides what to hold) ---- */

static void held_free(struct xport_qp *qp, struct xport_held_pkt *h)
{
	if (!h)
		return;
	qp->dev->held_bytes -= h->bytes;
	free(h);
}

int xport__held_put(struct xport_qp *qp, const struct xport_pkt *pkt)
{
	struct xport_held *hs = &qp->held;
	uint32_t ahead = wire_psn_sub(pkt->psn, qp->resp.psn), i = pkt->psn % XPORT_HELD_SLOTS;
	size_t bytes = sizeof(struct xport_held_pkt) + pkt->len;
	struct xport_held_pkt *h;

	if (!ahead || ahead >= XPORT_HELD_SLOTS)
		return -ERANGE;
	if (!hs->slot) {
		hs->slot = calloc(XPORT_HELD_SLOTS, sizeof(*hs->slot));
		if (!hs->slot)
			return -ENOMEM;
	}
	if (hs->slot[i]) {
		if (hs->slot[i]->pkt.psn == pkt->psn)
			return -EEXIST;
		/* Left behind the expected PSN: make room. */
		held_free(qp, hs->slot[i]);
		hs->slot[i] = NULL;
		hs->n--;
	}
	if (qp->dev->held_bytes + bytes > XPORT_HELD_MAX_BYTES)
		return -ENOBUFS;
	h = malloc(bytes);
	if (!h)
		return -ENOMEM;
	recv_copy_pkt(&h->pkt, &h->rt, h->buf, pkt);
	h->bytes = (uint32_t)bytes;
	qp->dev->held_bytes += bytes;
	hs->slot[i] = h;
	hs->n++;
	return 0;
}

void xport__held_release(struct xport_qp *qp)
{
	held_free(qp, qp->held.cur);
	qp->held.cur = NULL;
}

const struct xport_pkt *xport__held_take(struct xport_qp *qp, uint32_t psn)
{
	struct xport_held *hs = &qp->held;
	uint32_t i = psn % XPORT_HELD_SLOTS;
	struct xport_held_pkt *h;

	xport__held_release(qp);
	if (!hs->n || !hs->slot[i])
		return NULL;
	h = hs->slot[i];
	hs->slot[i] = NULL;
	hs->n--;
	if (h->pkt.psn != psn) {
		/* Behind the expected PSN: nothing will ask for it again. */
		held_free(qp, h);
		return NULL;
	}
	hs->cur = h;
	return &h->pkt;
}

bool xport__held_ahead(struct xport_qp *qp)
{
	struct xport_held *hs = &qp->held;

	for (uint32_t i = 0; hs->n && i < XPORT_HELD_SLOTS; i++) {
		struct xport_held_pkt *h = hs->slot[i];
		uint32_t ahead;

		if (!h)
			continue;
		ahead = wire_psn_sub(h->pkt.psn, qp->resp.psn);
		if (!ahead)
			continue; /* the expected one: the responder takes it next */
		if (ahead < XPORT_HELD_SLOTS)
			return true;
		held_free(qp, h);
		hs->slot[i] = NULL;
		hs->n--;
	}
	return false;
}

void xport__held_clear(struct xport_qp *qp)
{
	struct xport_held *hs = &qp->held;

	for (uint32_t i = 0; hs->slot && i < XPORT_HELD_SLOTS; i++)
		held_free(qp, hs->slot[i]);
	held_free(qp, hs->cur);
	free(hs->slot);
	*hs = (struct xport_held){0};
}
