/* SPDX-License-Identifier: MIT */
/*
 * The engine's toolbox for the protocol files: what req.c, resp.c and
 * comp.c call to build and send a packet (the QP's UDP source port and
 * path, the BTH, the ICRC over the path's pseudo header, pad and
 * send_packet with the TX counters) and to move a payload between a packet
 * and the memory an SGE list describes (gather for sending, scatter for
 * received data and READ responses). recv.c uses the ICRC to check one. It
 * decides nothing: no state changes, no scheduling, no completions (those
 * are xport.c's, the hub's), and it never receives.
 */
#include <errno.h>
#include <string.h>

#include <wire/bth.h>
#include <wire/icrc.h>
#include "xport_int.h"

uint16_t xport__udp_sport(uint32_t qpn)
{
	/* rxe's choice of range: 0xC000 + a 14-bit hash, fixed per QP, and
	 * above 4791 so tshark always decodes it as RoCEv2 (PROTOCOL.md 1). */
	uint32_t h = (qpn & WIRE_QPN_MASK) * 0x9e3779b1u;

	return (uint16_t)(0xc000u | (h >> 18));
}

void xport__bth(const struct xport_qp *qp, uint8_t *pkt, uint8_t opcode, uint32_t psn, bool ackreq,
		uint32_t paylen)
{
	struct wire_bth *bth = (struct wire_bth *)pkt;

	memset(bth, 0, sizeof(*bth));
	wire_bth_set_opcode(bth, opcode);
	wire_bth_set_padcnt(bth, wire_pad_bytes(paylen));
	wire_bth_set_pkey(bth, qp->attr.pkey);
	wire_bth_set_destqp(bth, qp->attr.dest_qpn);
	wire_bth_set_ackreq(bth, ackreq);
	wire_bth_set_psn(bth, psn);
}

void xport__route(const struct xport_qp *qp, struct xport_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	memcpy(rt->sgid, qp->attr.av.sgid, sizeof(rt->sgid));
	memcpy(rt->dgid, qp->attr.av.dgid, sizeof(rt->dgid));
	rt->sport = qp->sport;
	rt->dport = qp->dport;
	rt->tclass = qp->attr.av.tclass;
	rt->hop_limit = qp->attr.av.hop_limit;
}

bool xport__gid_is_v4(const uint8_t gid[XPORT_GID_BYTES])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

/* The ICRC state after the pseudo header of an IB packet of ib_len bytes on rt. */
static uint32_t icrc_begin(const struct xport_route *rt, size_t ib_len)
{
	if (xport__gid_is_v4(rt->sgid)) {
		uint16_t id = rt->ip_id_known ? rt->ip_id : rt->ip_id_guess;
		uint16_t frag = rt->ip_id_known && !rt->ip_df ? 0 : WIRE_IPV4_DF;

		return wire_icrc_begin_udp4(rt->sgid + 12, rt->dgid + 12, id, frag, rt->sport,
					    rt->dport, ib_len);
	}
	return wire_icrc_begin_udp6(rt->sgid, rt->dgid, rt->sport, rt->dport, ib_len);
}

uint32_t xport__icrc(const struct xport_route *rt, const uint8_t *ib, size_t ib_len)
{
	if (xport__gid_is_v4(rt->sgid))
		return wire_icrc_end(wire_icrc_add_ib(icrc_begin(rt, ib_len), 0, ib, ib_len));
	return wire_icrc_udp6(rt->sgid, rt->dgid, rt->sport, rt->dport, ib, ib_len);
}

bool xport__can_fold(const struct xport_qp *qp, uint32_t paylen)
{
	/* A short payload costs less copied and then covered by the one CRC
	 * over the whole packet than folded in a CRC call of its own. */
	return paylen >= XPORT_FOLD_MIN && qp->dev->ops->dma_read_crc != NULL;
}

uint32_t xport__icrc_headers(struct xport_qp *qp, const struct xport_route *rt, const uint8_t *pkt,
			     size_t hdr_len, uint32_t paylen)
{
	uint64_t t = xport__prof_start(qp->dev);
	size_t ib_len = hdr_len + paylen + wire_pad_bytes(paylen);
	uint32_t st = wire_icrc_add_ib(icrc_begin(rt, ib_len), 0, pkt, hdr_len);

	xport__prof_icrc(qp->dev, t);
	return st;
}

size_t xport__seal(const struct xport_route *rt, uint8_t *pkt, size_t len, uint32_t paylen)
{
	size_t pad = wire_pad_bytes(paylen);

	memset(pkt + len, 0, pad);
	len += pad;
	wire_icrc_put(pkt + len, xport__icrc(rt, pkt, len));
	return len + XPORT_ICRC_BYTES;
}

/* Send the sealed packet of len bytes and count it. */
static int xmit_sealed(struct xport_qp *qp, const struct xport_route *rt, uint8_t *pkt, size_t len,
		       uint32_t paylen)
{
	struct xport_dev *dev = qp->dev;
	int rc;

	rc = dev->ops->send_packet(dev->ctx, qp, rt, pkt, len);
	dev->tx_info.request = false; /* the requester sets it for each of its packets */
	if (rc) {
		xport__count(qp, XPORT_CNT_TX_ERR, 1);
		return rc;
	}
	xport__count(qp, XPORT_CNT_TX_PKTS, 1);
	xport__count(qp, XPORT_CNT_TX_BYTES, paylen);
	return 0;
}

int xport__xmit(struct xport_qp *qp, const struct xport_route *rt, uint8_t *pkt, size_t len,
		uint32_t paylen)
{
	uint64_t t = xport__prof_start(qp->dev);

	len = xport__seal(rt, pkt, len, paylen);
	xport__prof_icrc(qp->dev, t);
	return xmit_sealed(qp, rt, pkt, len, paylen);
}

int xport__xmit_folded(struct xport_qp *qp, const struct xport_route *rt, uint8_t *pkt, size_t len,
		       uint32_t paylen, uint32_t st)
{
	size_t pad = wire_pad_bytes(paylen);

	memset(pkt + len, 0, pad);
	st = wire_icrc_add_ib(st, len, pkt + len, pad);
	len += pad;
	wire_icrc_put(pkt + len, wire_icrc_end(st));
	return xmit_sealed(qp, rt, pkt, len + XPORT_ICRC_BYTES, paylen);
}

/* xport__sge_copy and xport__sge_gather: with st, reads folded into it. */
static int sge_copy(struct xport_qp *qp, const struct xport_sge *sge, uint32_t nsge,
		    uint32_t offset, void *buf, uint32_t len, uint32_t access, enum xport_dma dir,
		    uint32_t *st);

int xport__sge_copy(struct xport_qp *qp, const struct xport_sge *sge, uint32_t nsge,
		    uint32_t offset, void *buf, uint32_t len, uint32_t access, enum xport_dma dir)
{
	return sge_copy(qp, sge, nsge, offset, buf, len, access, dir, NULL);
}

int xport__sge_gather(struct xport_qp *qp, const struct xport_sge *sge, uint32_t nsge,
		      uint32_t offset, void *buf, uint32_t len, uint32_t *st)
{
	return sge_copy(qp, sge, nsge, offset, buf, len, 0, XPORT_DMA_TO_BUF, st);
}

static int sge_copy(struct xport_qp *qp, const struct xport_sge *sge, uint32_t nsge,
		    uint32_t offset, void *buf, uint32_t len, uint32_t access, enum xport_dma dir,
		    uint32_t *st)
{
	struct xport_dev *dev = qp->dev;
	uint8_t *p = buf;
	uint32_t i = 0;

	while (len) {
		uint32_t n;
		int rc;

		if (i >= nsge)
			return -ENOSPC;
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			i++;
			continue;
		}
		n = sge[i].length - offset;
		if (n > len)
			n = len;
		if (st)
			rc = dev->ops->dma_read_crc(dev->ctx, qp, sge[i].lkey, false,
						    sge[i].addr + offset, p, n, access, st);
		else
			rc = dev->ops->dma_lkey(dev->ctx, qp, sge[i].lkey, sge[i].addr + offset, p,
						n, access, dir);
		if (rc)
			return rc;
		p += n;
		len -= n;
		offset = 0;
		i++;
	}
	return 0;
}
