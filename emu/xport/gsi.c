// SPDX-License-Identifier: MIT
/*
 * QP1, the general services interface (GSI) QP that every RNIC port has and
 * owns itself (IBA 13.5.1): management datagrams arrive on it as UD SENDs
 * with the GSI Q_Key and leave from it the same way. The engine checks what
 * arrives like any UD request and hands the MAD to the daemon (ops
 * gsi_recv); what the MADs mean (the Communication Manager) is the
 * daemon's business, emu/daemon/cm. No receive queue, no completions: QP1
 * is not an application's QP.
 */
#include <errno.h>
#include <string.h>

#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/mad.h>
#include "xport_int.h"

void xport__gsi_recv(struct xport_dev *dev, const struct xport_pkt *pkt)
{
	const struct wire_deth *deth;
	struct xport_gsi_mad m;

	if (!dev->ops->gsi_recv) {
		xport__drop(dev, NULL, XPORT_DROP_NO_QP);
		return;
	}
	/* QP1 is a UD QP: only UD SENDs reach it. */
	if (wire_opcode_transport(pkt->opcode) != WIRE_TRANSPORT_UD ||
	    !(pkt->mask & WIRE_SEND_MASK)) {
		xport__drop(dev, NULL, XPORT_DROP_QP_TYPE);
		return;
	}
	/* IBA 13.5.1: QP1 accepts every P_Key of the port (only the default here)... */
	if (!xport__recv_pkey_ok(pkt->pkey, WIRE_DEFAULT_PKEY)) {
		xport__drop(dev, NULL, XPORT_DROP_BAD_PKEY);
		return;
	}
	/* ...and only the GSI Q_Key (IBA 10.2.5). */
	deth = (const struct wire_deth *)(pkt->buf + pkt->info->offset[WIRE_HDR_DETH]);
	if (wire_deth_get_qkey(deth) != WIRE_GSI_QKEY) {
		xport__drop(dev, NULL, XPORT_DROP_BAD_QKEY);
		return;
	}
	m.rt = pkt->rt;
	m.mad = pkt->payload;
	m.len = pkt->paylen;
	m.src_qpn = wire_deth_get_srcqp(deth);
	m.pkey = pkt->pkey;
	dev->cnt[XPORT_CNT_GSI_RX]++;
	dev->ops->gsi_recv(dev->ctx, &m);
}

int xport_gsi_send(struct xport_dev *dev, const struct xport_route *rt, uint32_t dest_qpn,
		   uint16_t pkey, const void *mad, size_t len)
{
	uint8_t pkt[WIRE_BTH_BYTES + WIRE_DETH_BYTES + WIRE_MAD_BYTES + XPORT_ICRC_BYTES];
	struct wire_bth *bth = (struct wire_bth *)pkt;
	struct wire_deth *deth = (struct wire_deth *)(pkt + WIRE_BTH_BYTES);
	size_t hdr = WIRE_BTH_BYTES + WIRE_DETH_BYTES;
	int rc;

	if (len > WIRE_MAD_BYTES)
		return -EMSGSIZE;
	memset(pkt, 0, hdr);
	wire_bth_set_opcode(bth, WIRE_OP_UD_SEND_ONLY);
	wire_bth_set_padcnt(bth, wire_pad_bytes(len));
	wire_bth_set_pkey(bth, pkey);
	wire_bth_set_destqp(bth, dest_qpn);
	/* As Linux's GSI QP sends them (the real rxe captures): AckReq set. */
	wire_bth_set_ackreq(bth, 1);
	wire_bth_set_psn(bth, dev->gsi_psn);
	dev->gsi_psn = (dev->gsi_psn + 1) & WIRE_PSN_MASK;
	wire_deth_set_qkey(deth, WIRE_GSI_QKEY);
	wire_deth_set_srcqp(deth, WIRE_GSI_QPN);
	memcpy(pkt + hdr, mad, len);
	len = xport__seal(rt, pkt, hdr + len, (uint32_t)len);
	rc = dev->ops->send_packet(dev->ctx, NULL, rt, pkt, len);
	if (!rc)
		dev->cnt[XPORT_CNT_GSI_TX]++;
	return rc;
}
