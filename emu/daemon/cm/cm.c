// SPDX-License-Identifier: MIT
/*
 * The Communication Manager's MAD handling (see cm.h): parse what QP1
 * received (wire/mad.h), count it, and answer as the IB CM answers when no
 * application listens: REJ to a REQ, DREP to a DREQ, SIDR_REP to a
 * SIDR_REQ. Answers go back to the sender's GID and QP on the device's own
 * address and port, with the request's transaction ID, so that the sender
 * matches them (IBA 13.4.6.4). Connection state (listeners, comm IDs,
 * timeouts, retries) is not kept yet: nothing here needs it.
 */
#define _GNU_SOURCE
#include <string.h>

#include <wire/mad.h>

#include "cm.h"

/* The route back to a MAD's sender, from this device's address and port. */
static void cm_reply_route(const struct emu_dev *dev, const struct xport_gsi_mad *m,
			   struct xport_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	memcpy(rt->sgid, dev->gid, sizeof(rt->sgid));
	memcpy(rt->dgid, m->rt->sgid, sizeof(rt->dgid));
	rt->sport = dev->udp_port;
	rt->dport = dev->udp_port;
	rt->tclass = m->rt->tclass;
}

static void cm_send(struct emu_dev *dev, const struct xport_gsi_mad *m, const uint8_t *mad)
{
	struct xport_route rt;

	cm_reply_route(dev, m, &rt);
	if (xport_gsi_send(&dev->x, &rt, m->src_qpn, m->pkey, mad, WIRE_MAD_BYTES))
		dev->dcnt[EMU_DCNT_CM_TX_ERR]++;
	else
		dev->dcnt[EMU_DCNT_CM_TX]++;
}

/*
 * IBA 12.6.7: a REQ for a service ID nobody listens on is rejected with
 * reason 8 (invalid service ID), naming the REQ as the message rejected;
 * there is no local communication ID yet, so it is 0 (as Linux sends it).
 */
static void cm_reject_req(struct emu_dev *dev, const struct xport_gsi_mad *m,
			  const struct wire_cm_msg *req)
{
	uint8_t mad[WIRE_MAD_BYTES];

	wire_cm_init(mad, WIRE_CM_ATTR_REJ, req->tid);
	wire_cm_set(mad, WIRE_CM_REJ_LOCAL_COMM_ID, 0);
	wire_cm_set(mad, WIRE_CM_REJ_REMOTE_COMM_ID, req->local_comm_id);
	wire_cm_set(mad, WIRE_CM_REJ_MESSAGE_REJECTED, 0); /* the REQ */
	wire_cm_set(mad, WIRE_CM_REJ_REASON, WIRE_CM_REJ_INVALID_SERVICE_ID);
	emu_dbg("CM: ConnectRequest 0x%08x for service 0x%016llx: no listener, rejected",
		req->local_comm_id, (unsigned long long)req->service_id);
	cm_send(dev, m, mad);
	dev->dcnt[EMU_DCNT_CM_REJ_SENT]++;
}

/*
 * IBA 12.9.8 (disconnect): a DREQ for a connection this CM does not know is
 * answered with a DREP all the same, so that the sender's disconnect
 * completes (Linux's cm_issue_drep does the same).
 */
static void cm_reply_dreq(struct emu_dev *dev, const struct xport_gsi_mad *m,
			  const struct wire_cm_msg *dreq)
{
	uint8_t mad[WIRE_MAD_BYTES];

	wire_cm_init(mad, WIRE_CM_ATTR_DREP, dreq->tid);
	wire_cm_set(mad, WIRE_CM_DREP_LOCAL_COMM_ID, dreq->remote_comm_id);
	wire_cm_set(mad, WIRE_CM_DREP_REMOTE_COMM_ID, dreq->local_comm_id);
	cm_send(dev, m, mad);
	dev->dcnt[EMU_DCNT_CM_DREP_SENT]++;
}

/* IBA 12.11: a SIDR_REQ for a service nobody offers gets status 1 (not supported). */
static void cm_reply_sidr(struct emu_dev *dev, const struct xport_gsi_mad *m,
			  const struct wire_cm_msg *req)
{
	uint8_t mad[WIRE_MAD_BYTES];

	wire_cm_init(mad, WIRE_CM_ATTR_SIDR_REP, req->tid);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_REQUEST_ID, req->local_comm_id);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_STATUS, 1);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_SERVICE_ID, req->service_id);
	cm_send(dev, m, mad);
	dev->dcnt[EMU_DCNT_CM_SIDR_REP_SENT]++;
}

static void cm_recv(struct emu_dev *dev, const struct xport_gsi_mad *m)
{
	struct wire_cm_msg msg;
	enum wire_reason r = wire_cm_parse(m->mad, m->len, &msg);

	if (r != WIRE_R_OK) {
		dev->dcnt[EMU_DCNT_CM_RX_MALFORMED]++;
		emu_dbg("CM: MAD from QP 0x%x dropped: %s", m->src_qpn, wire_reason_desc(r));
		return;
	}
	dev->dcnt[EMU_DCNT_CM_RX]++;
	/* Responses (method bit 7) are never answered. */
	if (msg.method != WIRE_MAD_METHOD_SEND) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	switch (msg.attr_id) {
	case WIRE_CM_ATTR_REQ:
		cm_reject_req(dev, m, &msg);
		break;
	case WIRE_CM_ATTR_DREQ:
		cm_reply_dreq(dev, m, &msg);
		break;
	case WIRE_CM_ATTR_SIDR_REQ:
		cm_reply_sidr(dev, m, &msg);
		break;
	default: /* REP, RTU, REJ, MRA, DREP, SIDR_REP, LAP, APR: no such connection */
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		break;
	}
}

void emu_cm_start(struct emu_dev *dev)
{
	dev->gsi_recv = cm_recv;
}
