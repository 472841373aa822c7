// SPDX-License-Identifier: MIT
/*
 * The Communication Manager (see cm.h): CM ids, listeners keyed by service
 * ID, the connection state machine of IBA 12.9 (REQ -> REP -> RTU, REJ,
 * DREQ/DREP, MRA) with response timeouts and retries, service ID resolution
 * for UD (IBA 12.11: SIDR_REQ -> SIDR_REP), and the RDMA CM's IP
 * addressing (Annex A11: service IDs of the IP port spaces, the IP header at
 * the start of a REQ's private data). Every MAD goes through the engine's
 * QP1 (xport_gsi_send), so it is in the capture, and is counted. Events go
 * to the owning channel's event socket. Without a listener it answers as
 * the IB CM does: REJ (invalid service ID) to a REQ, DREP to a DREQ of an
 * unknown connection, SIDR_REP "unsupported" to a SIDR_REQ. Ids are few:
 * plain lists, linear lookups.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wire/mad.h>

#include "cm.h"

/* X-macro: the states of a CM id (IBA 12.9.6 names where one applies). */
#define CM_STATE_LIST(X) \
	X(IDLE)          \
	X(LISTEN)        \
	X(REQ_SENT)      \
	X(REQ_RCVD)      \
	X(REP_SENT)      \
	X(REP_RCVD)      \
	X(ESTABLISHED)   \
	X(DREQ_SENT)     \
	X(DREQ_RCVD)     \
	X(SIDR_SENT)     \
	X(SIDR_RCVD)     \
	X(MCAST)         \
	X(CLOSED)

enum cm_state {
#define CM_STATE_ENUM(s) CM_##s,
	CM_STATE_LIST(CM_STATE_ENUM)
#undef CM_STATE_ENUM
};

static const char *const cm_state_names[] = {
#define CM_STATE_NAME(s) #s,
    CM_STATE_LIST(CM_STATE_NAME)
#undef CM_STATE_NAME
};

/* The ACK timeout a connection's QPs get unless the id set one (4.096 us * 2^19, ~2 s). */
#define CM_DEFAULT_ACK_TIMEOUT 19
#define CM_HOP_LIMIT 64
/* The path rate a route has unless a path record says otherwise: 10 Gb/s,
 * as the shim's route (QUERY_ROUTE) reports it. */
#define CM_DEFAULT_RATE 3
/* IBA 12.7.29: what the responder's ACKs may lag by (as Linux rxe reports). */
#define CM_TARGET_ACK_DELAY 15
#define CM_UDP_QKEY 0x01234567u /* RDMA_UDP_QKEY */

struct emu_cm_chan {
	struct emu_list link; /* in cm->chans */
	struct emu_ctx *ctx;
	int evfd; /* the daemon's end of the event socket */
	struct emu_list ids;
};

struct cm_id {
	struct emu_list link;	   /* in cm->ids */
	struct emu_list chan_link; /* in chan->ids; self-linked for an orphan */
	struct emu_cm_chan *chan;  /* NULL: orphan, freed when its protocol is done */
	struct emu_dev *dev;
	uint32_t handle;
	enum cm_state state;
	uint16_t ps;
	uint8_t qp_type;
	bool wildcard;
	uint64_t service_id;
	uint32_t listener; /* a child's listener (handle) */
	struct uroce_cm_addr local, remote;
	uint32_t local_comm_id, remote_comm_id;
	uint32_t local_qpn, remote_qpn;
	uint32_t psn;	     /* this side's starting PSN, in its REQ/REP: its QP's rq_psn */
	uint32_t remote_psn; /* the peer's: its QP's sq_psn */
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count, flow_control, srq;
	uint8_t tos, ack_timeout, path_mtu;
	uint8_t sl, rate; /* the primary path's SL and rate (IBA rate code) */
	uint64_t tid;
	/* The request last sent, resent when no answer comes in time. */
	uint8_t mad[WIRE_MAD_BYTES];
	unsigned retries_left;
	uint64_t timeout_ms;
	uv_timer_t timer;
	bool timer_on;
	struct emu_mcg *mcg; /* MCAST: the group it joined (NULL: send-only) */
};

/*
 * A ConnectRequest that found no listener is not rejected at once: it is
 * held for CM_LISTEN_GRACE_MS in case a listen for its service comes in
 * that time. A program that tells its peer its port and then listens (qperf's
 * server does, perftest -R listens again for its test connection) races
 * with the peer's connect; a kernel CM loses that race rarely, uroce's
 * listen (a request to the daemon) more often on a loaded machine. Held or
 * not, the answer is the one IBA 12.6.7 gives: the listener's REP, or the
 * REJ with reason 8, here at most CM_LISTEN_GRACE_MS later, well inside the
 * REQ's remote CM response timeout. Bounded: beyond CM_MAX_HELD_REQS the
 * REJ goes at once.
 */
#define CM_LISTEN_GRACE_MS 200
#define CM_MAX_HELD_REQS 32

struct cm_held_req {
	struct emu_list link;
	struct xport_route rt;
	uint8_t mad[WIRE_MAD_BYTES];
	uint32_t len, src_qpn;
	uint16_t pkey;
	uint64_t service_id;
	uint32_t comm_id; /* the sender's communication ID: a retry has it too */
	uint8_t dst[16];  /* the address it was sent to (a listener's, or any) */
	uint64_t until;	  /* uv_now() deadline */
};

struct emu_cm {
	struct emu_list ids;
	struct emu_list chans;
	uint32_t next_handle;
	struct emu_list held; /* struct cm_held_req, oldest first */
	unsigned nheld;
	uv_timer_t held_timer; /* set up with the first held request (the loop runs then) */
	bool held_timer_init;
};

static struct cm_id *id_of(struct emu_list *l)
{
	return EMU_CONTAINER_OF(l, struct cm_id, link);
}

static uint32_t cm_random(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)random();
	return v;
}

/* ------------------------------------------------------------------------ */
/* Sending.                                                                  */

static void cm_route(const struct emu_dev *dev, const uint8_t dgid[16], uint8_t tclass,
		     struct xport_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	memcpy(rt->sgid, dev->gid, sizeof(rt->sgid));
	memcpy(rt->dgid, dgid, sizeof(rt->dgid));
	rt->sport = dev->udp_port;
	rt->dport = dev->udp_port;
	rt->tclass = tclass;
	rt->hop_limit = CM_HOP_LIMIT;
}

static void cm_send_to(struct emu_dev *dev, const uint8_t dgid[16], uint8_t tclass,
		       const uint8_t *mad)
{
	struct xport_route rt;

	cm_route(dev, dgid, tclass, &rt);
	if (xport_gsi_send(&dev->x, &rt, WIRE_GSI_QPN, WIRE_DEFAULT_PKEY, mad, WIRE_MAD_BYTES))
		dev->dcnt[EMU_DCNT_CM_TX_ERR]++;
	else
		dev->dcnt[EMU_DCNT_CM_TX]++;
}

/* A reply to the sender of m (an id-less answer). */
static void cm_send_reply(struct emu_dev *dev, const struct xport_gsi_mad *m, const uint8_t *mad)
{
	struct xport_route rt;

	cm_route(dev, m->rt->sgid, m->rt->tclass, &rt);
	if (xport_gsi_send(&dev->x, &rt, m->src_qpn, m->pkey, mad, WIRE_MAD_BYTES))
		dev->dcnt[EMU_DCNT_CM_TX_ERR]++;
	else
		dev->dcnt[EMU_DCNT_CM_TX]++;
}

static void cm_send(struct cm_id *id, const uint8_t *mad)
{
	cm_send_to(id->dev, id->remote.gid, id->tos, mad);
}

/* 4.096 us * 2^exp in milliseconds, at least 1 (IBA 12.7.34 timeouts). */
static uint64_t cm_exp_ms(unsigned exp)
{
	uint64_t ns = 4096ull << (exp > 31 ? 31 : exp);

	return ns / 1000000 ? ns / 1000000 : 1;
}

static void cm_timer_stop(struct cm_id *id)
{
	if (id->timer_on)
		uv_timer_stop(&id->timer);
	id->timer_on = false;
}

static void on_cm_timeout(uv_timer_t *t);

/* Send id->mad and wait for its answer: resend after the timeout, up to the
 * device's retries (IBA 12.4: Max CM Retries). */
static void cm_send_wait(struct cm_id *id)
{
	cm_send(id, id->mad);
	id->timer_on = true;
	uv_timer_start(&id->timer, on_cm_timeout, id->timeout_ms, 0);
}

/* ------------------------------------------------------------------------ */
/* Ids and events.                                                           */

static struct cm_id *cm_find(struct emu_dev *dev, uint32_t handle)
{
	struct emu_list *p, *t;

	EMU_LIST_FOR_EACH_SAFE(p, t, &dev->cm->ids)
	{
		if (id_of(p)->handle == handle)
			return id_of(p);
	}
	return NULL;
}

/* The id of ctx's channel with this handle, or NULL. */
static struct cm_id *cm_find_own(struct emu_ctx *ctx, uint32_t handle)
{
	struct cm_id *id = cm_find(ctx->dev, handle);

	return id && id->chan && id->chan->ctx == ctx ? id : NULL;
}

/* The id whose local communication ID is comm_id (an answer's remote comm ID). */
static struct cm_id *cm_find_comm(struct emu_dev *dev, uint32_t comm_id)
{
	struct emu_list *p, *t;

	if (!comm_id)
		return NULL;
	EMU_LIST_FOR_EACH_SAFE(p, t, &dev->cm->ids)
	{
		struct cm_id *id = id_of(p);

		if (id->state != CM_LISTEN && id->local_comm_id == comm_id)
			return id;
	}
	return NULL;
}

/* A fresh local communication ID: unpredictable, non-zero, unused here. */
static uint32_t cm_new_comm_id(struct emu_dev *dev)
{
	uint32_t v;

	do
		v = cm_random();
	while (!v || cm_find_comm(dev, v));
	return v;
}

static struct cm_id *cm_id_new(struct emu_dev *dev, struct emu_cm_chan *chan)
{
	struct cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	id->dev = dev;
	id->chan = chan;
	do
		id->handle = ++dev->cm->next_handle;
	while (!id->handle || cm_find(dev, id->handle));
	id->state = CM_IDLE;
	id->path_mtu = (uint8_t)dev->active_mtu;
	id->rate = CM_DEFAULT_RATE;
	id->ack_timeout = CM_DEFAULT_ACK_TIMEOUT;
	id->timeout_ms = cm_exp_ms(dev->cm_timeout);
	uv_timer_init(dev->loop, &id->timer);
	id->timer.data = id;
	emu_list_add_tail(&dev->cm->ids, &id->link);
	if (chan)
		emu_list_add_tail(&chan->ids, &id->chan_link);
	else
		emu_list_init(&id->chan_link);
	return id;
}

static void on_timer_closed(uv_handle_t *h)
{
	free(h->data);
}

/* Forget the id (its timer closes, then it is freed). */
static void cm_id_free(struct cm_id *id)
{
	cm_timer_stop(id);
	emu_list_del(&id->link);
	emu_list_del(&id->chan_link);
	id->chan = NULL;
	uv_close((uv_handle_t *)&id->timer, on_timer_closed);
}

/* Detach the id from its channel: it lives on only to finish a protocol
 * exchange (a DREQ waiting for its DREP). */
static void cm_id_orphan(struct cm_id *id)
{
	emu_list_del(&id->chan_link);
	id->chan = NULL;
}

static void cm_event(struct cm_id *id, uint32_t handle, enum uroce_cm_event_type type,
		     int32_t status, const struct uroce_cm_event *extra)
{
	struct uroce_cm_event ev;
	ssize_t n;

	if (!id->chan)
		return;
	if (extra)
		ev = *extra;
	else
		memset(&ev, 0, sizeof(ev));
	ev.handle = handle;
	ev.event = type;
	ev.status = status;
	n = send(id->chan->evfd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(ev)) {
		id->dev->dcnt[EMU_DCNT_CM_EVENTS_LOST]++;
		emu_warn("CM: event %u for id %u lost: %s", type, handle,
			 n < 0 ? strerror(errno) : "short send");
	}
	emu_dbg("CM: id %u: event %u status %d", handle, type, status);
}

static void cm_set_state(struct cm_id *id, enum cm_state s)
{
	emu_dbg("CM: id %u: %s -> %s", id->handle, cm_state_names[id->state], cm_state_names[s]);
	id->state = s;
}

/* Private data of an event: len bytes of the MAD's field f. */
static void cm_event_pdata(struct uroce_cm_event *ev, const uint8_t *mad, enum wire_cm_field f,
			   size_t skip)
{
	size_t len = wire_cm_field_bytes(f) - skip;

	if (len > sizeof(ev->p.private_data))
		len = sizeof(ev->p.private_data);
	memcpy(ev->p.private_data, wire_cm_field_ptr(mad, f) + skip, len);
	ev->p.private_data_len = (uint8_t)len;
}

/* ------------------------------------------------------------------------ */
/* Building messages.                                                        */

static void cm_build_rej(uint8_t *mad, uint64_t tid, uint32_t local, uint32_t remote,
			 unsigned msg_rejected, uint16_t reason, const uint8_t *pdata,
			 size_t pdata_len)
{
	wire_cm_init(mad, WIRE_CM_ATTR_REJ, tid);
	wire_cm_set(mad, WIRE_CM_REJ_LOCAL_COMM_ID, local);
	wire_cm_set(mad, WIRE_CM_REJ_REMOTE_COMM_ID, remote);
	wire_cm_set(mad, WIRE_CM_REJ_MESSAGE_REJECTED, msg_rejected);
	wire_cm_set(mad, WIRE_CM_REJ_REASON, reason);
	if (pdata_len > wire_cm_field_bytes(WIRE_CM_REJ_PRIVATE_DATA))
		pdata_len = wire_cm_field_bytes(WIRE_CM_REJ_PRIVATE_DATA);
	if (pdata_len)
		memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REJ_PRIVATE_DATA), pdata,
		       pdata_len);
}

/* Send a REJ for the id's REQ (msg 0) or REP (msg 1) and count it. */
static void cm_send_rej(struct cm_id *id, unsigned msg, uint16_t reason, const uint8_t *pdata,
			size_t len)
{
	uint8_t mad[WIRE_MAD_BYTES];

	cm_build_rej(mad, id->tid, id->local_comm_id, id->remote_comm_id, msg, reason, pdata, len);
	cm_send(id, mad);
	id->dev->dcnt[EMU_DCNT_CM_REJ_SENT]++;
}

static void cm_send_dreq(struct cm_id *id)
{
	id->tid = ((uint64_t)cm_random() << 32) | cm_random();
	wire_cm_init(id->mad, WIRE_CM_ATTR_DREQ, id->tid);
	wire_cm_set(id->mad, WIRE_CM_DREQ_LOCAL_COMM_ID, id->local_comm_id);
	wire_cm_set(id->mad, WIRE_CM_DREQ_REMOTE_COMM_ID, id->remote_comm_id);
	wire_cm_set(id->mad, WIRE_CM_DREQ_REMOTE_QPN, id->remote_qpn);
	id->retries_left = id->dev->cm_retries;
	cm_set_state(id, CM_DREQ_SENT);
	cm_send_wait(id);
	id->dev->dcnt[EMU_DCNT_CM_DREQ_SENT]++;
}

static void cm_send_drep(struct emu_dev *dev, const uint8_t dgid[16], uint8_t tclass, uint64_t tid,
			 uint32_t local, uint32_t remote)
{
	uint8_t mad[WIRE_MAD_BYTES];

	wire_cm_init(mad, WIRE_CM_ATTR_DREP, tid);
	wire_cm_set(mad, WIRE_CM_DREP_LOCAL_COMM_ID, local);
	wire_cm_set(mad, WIRE_CM_DREP_REMOTE_COMM_ID, remote);
	cm_send_to(dev, dgid, tclass, mad);
	dev->dcnt[EMU_DCNT_CM_DREP_SENT]++;
}

static void cm_send_rtu(struct cm_id *id)
{
	uint8_t mad[WIRE_MAD_BYTES];

	wire_cm_init(mad, WIRE_CM_ATTR_RTU, id->tid);
	wire_cm_set(mad, WIRE_CM_RTU_LOCAL_COMM_ID, id->local_comm_id);
	wire_cm_set(mad, WIRE_CM_RTU_REMOTE_COMM_ID, id->remote_comm_id);
	cm_send(id, mad);
	id->dev->dcnt[EMU_DCNT_CM_RTU_SENT]++;
}

/* ------------------------------------------------------------------------ */
/* Timeouts.                                                                 */

static void on_cm_timeout(uv_timer_t *t)
{
	struct cm_id *id = t->data;
	struct emu_dev *dev = id->dev;

	id->timer_on = false;
	if (id->retries_left) {
		id->retries_left--;
		dev->dcnt[EMU_DCNT_CM_RESENT]++;
		emu_dbg("CM: id %u: no answer in %s, resending (%u left)", id->handle,
			cm_state_names[id->state], id->retries_left);
		cm_send_wait(id);
		return;
	}
	dev->dcnt[EMU_DCNT_CM_TIMEOUTS]++;
	emu_info("CM: id %u: no answer to %s after the retries", id->handle,
		 cm_state_names[id->state]);
	switch (id->state) {
	case CM_REQ_SENT: /* IBA 12.9.6.1: the active side gives up; REJ reason timeout */
		cm_send_rej(id, 0, WIRE_CM_REJ_TIMEOUT, NULL, 0);
		cm_set_state(id, CM_CLOSED);
		cm_event(id, id->handle, UROCE_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	case CM_REP_SENT: /* no RTU */
		cm_send_rej(id, 1, WIRE_CM_REJ_TIMEOUT, NULL, 0);
		cm_set_state(id, CM_CLOSED);
		cm_event(id, id->handle, UROCE_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	case CM_DREQ_SENT: /* IBA 12.9.6.4: no DREP: the connection is gone anyway */
		cm_set_state(id, CM_CLOSED);
		cm_event(id, id->handle, UROCE_CM_EVENT_DISCONNECTED, 0, NULL);
		break;
	case CM_SIDR_SENT: /* IBA 12.11.2: no SIDR_REP */
		cm_set_state(id, CM_CLOSED);
		cm_event(id, id->handle, UROCE_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	default:
		break;
	}
	if (!id->chan)
		cm_id_free(id);
}

/* ------------------------------------------------------------------------ */
/* Receiving.                                                                */

/* IBA 12.6.7: a REQ for a service ID nobody listens on gets reason 8; there
 * is no local communication ID yet, so it is 0 (as Linux sends it). */
static void cm_reject_unknown(struct emu_dev *dev, const struct xport_gsi_mad *m,
			      const struct wire_cm_msg *req, uint16_t reason)
{
	uint8_t mad[WIRE_MAD_BYTES];

	cm_build_rej(mad, req->tid, 0, req->local_comm_id, 0, reason, NULL, 0);
	emu_dbg("CM: ConnectRequest 0x%08x for service 0x%016llx rejected: %s", req->local_comm_id,
		(unsigned long long)req->service_id, wire_cm_rej_name(reason));
	cm_send_reply(dev, m, mad);
	dev->dcnt[EMU_DCNT_CM_REJ_SENT]++;
}

/* The listener of this device for a service ID and destination address. */
static struct cm_id *cm_find_listener(struct emu_dev *dev, uint64_t sid, const uint8_t dst[16])
{
	struct emu_list *p, *t;

	EMU_LIST_FOR_EACH_SAFE(p, t, &dev->cm->ids)
	{
		struct cm_id *id = id_of(p);

		if (id->state == CM_LISTEN && id->service_id == sid &&
		    (id->wildcard || !memcmp(id->local.gid, dst, 16)))
			return id;
	}
	return NULL;
}

static void cm_addr_from_ip(struct uroce_cm_addr *a, const struct wire_cm_ip_hdr *ip,
			    const uint8_t *addr, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->ipv = (uint8_t)wire_cm_ip_get_ipv(ip);
	memcpy(a->gid, addr, 16);
	if (a->ipv == 4) { /* IPv4 in the last four bytes: as a mapped GID */
		memset(a->gid, 0, 10);
		a->gid[10] = a->gid[11] = 0xff;
	}
	a->port = port;
}

static void cm_recv_req(struct emu_dev *dev, const struct xport_gsi_mad *m,
			const struct wire_cm_msg *req);

/* The held request h as the MAD it came as, and its parse. */
static bool cm_held_msg(const struct cm_held_req *h, struct xport_gsi_mad *m,
			struct wire_cm_msg *msg)
{
	m->rt = &h->rt;
	m->mad = h->mad;
	m->len = h->len;
	m->src_qpn = h->src_qpn;
	m->pkey = h->pkey;
	return wire_cm_parse(h->mad, h->len, msg) == WIRE_R_OK;
}

static void cm_held_free(struct emu_cm *cm, struct cm_held_req *h)
{
	emu_list_del(&h->link);
	cm->nheld--;
	free(h);
}

static void on_held_timeout(uv_timer_t *t);

/* The timer for the oldest held request's deadline (none: stopped). */
static void cm_held_arm(struct emu_dev *dev)
{
	struct emu_cm *cm = dev->cm;
	uint64_t now = uv_now(dev->loop), until;

	if (!cm->held_timer_init) {
		if (emu_list_empty(&cm->held))
			return;
		uv_timer_init(dev->loop, &cm->held_timer);
		cm->held_timer.data = dev;
		/* A held request never keeps the daemon from exiting. */
		uv_unref((uv_handle_t *)&cm->held_timer);
		cm->held_timer_init = true;
	}
	if (emu_list_empty(&cm->held)) {
		uv_timer_stop(&cm->held_timer);
		return;
	}
	until = EMU_CONTAINER_OF(cm->held.next, struct cm_held_req, link)->until;
	uv_timer_start(&cm->held_timer, on_held_timeout, until > now ? until - now : 0, 0);
}

/* Held requests whose time is up and that no listen took: REJ, reason 8. */
static void on_held_timeout(uv_timer_t *t)
{
	struct emu_dev *dev = t->data;
	struct emu_cm *cm = dev->cm;
	uint64_t now = uv_now(dev->loop);

	while (!emu_list_empty(&cm->held)) {
		struct cm_held_req *h = EMU_CONTAINER_OF(cm->held.next, struct cm_held_req, link);
		struct xport_gsi_mad m;
		struct wire_cm_msg msg;

		if (h->until > now)
			break;
		if (cm_held_msg(h, &m, &msg))
			cm_reject_unknown(dev, &m, &msg, WIRE_CM_REJ_INVALID_SERVICE_ID);
		cm_held_free(cm, h);
	}
	cm_held_arm(dev);
}

/* Hold a REQ that found no listener (CM_LISTEN_GRACE_MS above); false
 * when it cannot be held (the table is full): the caller rejects it. */
static bool cm_hold_req(struct emu_dev *dev, const struct xport_gsi_mad *m,
			const struct wire_cm_msg *req, const uint8_t dst[16])
{
	struct emu_cm *cm = dev->cm;
	struct emu_list *p, *t;
	struct cm_held_req *h;

	EMU_LIST_FOR_EACH_SAFE(p, t, &cm->held)
	{
		h = EMU_CONTAINER_OF(p, struct cm_held_req, link);
		if (h->comm_id == req->local_comm_id && !memcmp(h->rt.sgid, m->rt->sgid, 16)) {
			dev->dcnt[EMU_DCNT_CM_DUPLICATES]++; /* the peer's retry: one answer */
			return true;
		}
	}
	if (cm->nheld >= CM_MAX_HELD_REQS || m->len > sizeof(h->mad) || !(h = calloc(1, sizeof(*h))))
		return false;
	h->rt = *m->rt;
	memcpy(h->mad, m->mad, m->len);
	h->len = m->len;
	h->src_qpn = m->src_qpn;
	h->pkey = m->pkey;
	h->service_id = req->service_id;
	h->comm_id = req->local_comm_id;
	memcpy(h->dst, dst, 16);
	h->until = uv_now(dev->loop) + CM_LISTEN_GRACE_MS;
	emu_list_add_tail(&cm->held, &h->link);
	cm->nheld++;
	dev->dcnt[EMU_DCNT_CM_REQ_HELD]++;
	emu_dbg("CM: ConnectRequest 0x%08x for service 0x%016llx: no listener yet, held %u ms",
		req->local_comm_id, (unsigned long long)req->service_id, CM_LISTEN_GRACE_MS);
	cm_held_arm(dev);
	return true;
}

/* A listen came: the held requests it would have taken go to it now. */
static void cm_held_listen(struct emu_dev *dev)
{
	struct emu_cm *cm = dev->cm;
	struct emu_list *p, *t;

	EMU_LIST_FOR_EACH_SAFE(p, t, &cm->held)
	{
		struct cm_held_req *h = EMU_CONTAINER_OF(p, struct cm_held_req, link);
		struct xport_gsi_mad m;
		struct wire_cm_msg msg;

		if (!cm_find_listener(dev, h->service_id, h->dst))
			continue;
		/* (it finds the listener: nothing here is held again) */
		if (cm_held_msg(h, &m, &msg)) {
			dev->dcnt[EMU_DCNT_CM_REQ_HELD_TAKEN]++;
			cm_recv_req(dev, &m, &msg);
		}
		cm_held_free(cm, h);
	}
	cm_held_arm(dev);
}

/* The QP type a ConnectRequest asks the passive side for; 0 for none we have. */
static uint8_t cm_req_qp_type(const uint8_t *mad)
{
	switch (wire_cm_get(mad, WIRE_CM_REQ_TRANSPORT_SERVICE_TYPE)) {
	case 0:
		return UROCE_QPT_RC;
	case 1:
		return UROCE_QPT_UC;
	case 3:
		return wire_cm_get(mad, WIRE_CM_REQ_EXTENDED_TRANSPORT_TYPE) == 1
			   ? UROCE_QPT_XRC_RECV
			   : 0;
	default:
		return 0;
	}
}

static void cm_recv_req(struct emu_dev *dev, const struct xport_gsi_mad *m,
			const struct wire_cm_msg *req)
{
	const uint8_t *mad = m->mad;
	struct uroce_cm_event ev;
	struct cm_id *l, *id;
	struct emu_list *p, *t;
	uint8_t dst[16], qp_type;

	/* A REQ again (our REP was lost or is late): answer with the REP again. */
	EMU_LIST_FOR_EACH_SAFE(p, t, &dev->cm->ids)
	{
		id = id_of(p);
		if (id->state == CM_LISTEN || id->state == CM_CLOSED ||
		    memcmp(id->remote.gid, m->rt->sgid, 16))
			continue;
		if (id->remote_comm_id == req->local_comm_id) {
			dev->dcnt[EMU_DCNT_CM_DUPLICATES]++;
			if (id->state == CM_REP_SENT)
				cm_send(id, id->mad);
			return;
		}
		/* IBA 12.9.8.1: the remote QP already has a connection here
		 * under another comm ID: the new REQ is for a stale one. */
		if (id->state != CM_REQ_SENT && id->remote_qpn == req->qpn) {
			cm_reject_unknown(dev, m, req, WIRE_CM_REJ_STALE_CONN);
			return;
		}
	}
	if (!req->has_ip ||
	    (wire_cm_ip_get_ipv(req->ip) != 4 && wire_cm_ip_get_ipv(req->ip) != 6)) {
		cm_reject_unknown(dev, m, req, WIRE_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	memset(dst, 0, sizeof(dst));
	{
		struct uroce_cm_addr a;

		cm_addr_from_ip(&a, req->ip, req->ip->dst, 0);
		memcpy(dst, a.gid, 16);
	}
	l = cm_find_listener(dev, req->service_id, dst);
	if (!l) {
		if (!cm_hold_req(dev, m, req, dst))
			cm_reject_unknown(dev, m, req, WIRE_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	/*
	 * IBA 12.6.5: the transport service type of an RC (0) or UC (1) QP, or
	 * 3 with the extended transport type 1 for an XRC initiator (annex
	 * A14), whose target here is an XRC_RECV QP. As the kernel's RDMA CM
	 * (cma_check_req_qp_type), an XRC listener takes nothing else and no
	 * other listener takes XRC.
	 */
	qp_type = cm_req_qp_type(mad);
	if (!qp_type || (qp_type == UROCE_QPT_XRC_RECV) != (l->qp_type == UROCE_QPT_XRC_RECV)) {
		cm_reject_unknown(dev, m, req, WIRE_CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	id = cm_id_new(dev, l->chan);
	if (!id) {
		cm_reject_unknown(dev, m, req, WIRE_CM_REJ_NO_RESOURCES);
		return;
	}
	id->ps = l->ps;
	id->qp_type = qp_type;
	id->listener = l->handle;
	id->service_id = req->service_id;
	id->tid = req->tid;
	id->remote_comm_id = req->local_comm_id;
	id->remote_qpn = req->qpn;
	id->remote_psn = req->starting_psn;
	/* Ours now: librdmacm moves the QP to RTR (rq_psn) before it accepts. */
	id->local_comm_id = cm_new_comm_id(dev);
	id->psn = cm_random() & 0xffffff;
	/* The REQ's resources are the active side's: its responder resources
	 * bound our initiator depth and the other way round (IBA 12.7.8-9). */
	id->initiator_depth = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_RESPONDER_RESOURCES);
	id->responder_resources = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_INITIATOR_DEPTH);
	id->retry_count = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_RETRY_COUNT);
	id->rnr_retry_count = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_RNR_RETRY_COUNT);
	id->flow_control = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_END_TO_END_FLOW_CONTROL);
	id->srq = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_SRQ);
	id->ack_timeout = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT);
	id->tos = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_PRIMARY_TRAFFIC_CLASS);
	id->sl = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_PRIMARY_SL);
	id->rate = (uint8_t)wire_cm_get(mad, WIRE_CM_REQ_PRIMARY_PACKET_RATE);
	{
		unsigned mtu = (unsigned)wire_cm_get(mad, WIRE_CM_REQ_PATH_MTU);

		id->path_mtu = (uint8_t)(mtu >= 1 && mtu < dev->active_mtu ? mtu : dev->active_mtu);
	}
	/* IBA 12.7.34: our REP waits as long as the active side says it takes
	 * to answer, plus the way there and back (IBA counts the packet life
	 * time twice): not less than our own response timeout, and not more
	 * than 4.096 us * 2^24 (69 s). */
	id->timeout_ms =
	    cm_exp_ms((unsigned)wire_cm_get(mad, WIRE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT));
	if (id->timeout_ms < cm_exp_ms(dev->cm_timeout))
		id->timeout_ms = cm_exp_ms(dev->cm_timeout);
	if (id->timeout_ms > cm_exp_ms(24))
		id->timeout_ms = cm_exp_ms(24);
	cm_addr_from_ip(&id->local, req->ip, req->ip->dst, (uint16_t)(req->service_id & 0xffff));
	cm_addr_from_ip(&id->remote, req->ip, req->ip->src, wire_cm_ip_get_sport(req->ip));
	/* The path is the one the REQ came on (RoCE: the sender's GID). */
	memcpy(id->remote.gid, m->rt->sgid, 16);
	cm_set_state(id, CM_REQ_RCVD);
	dev->dcnt[EMU_DCNT_CM_REQ_RCVD]++;

	memset(&ev, 0, sizeof(ev));
	ev.child = id->handle;
	ev.local = id->local;
	ev.remote = id->remote;
	ev.p.qp_num = id->remote_qpn;
	ev.p.responder_resources = id->responder_resources;
	ev.p.initiator_depth = id->initiator_depth;
	ev.p.flow_control = id->flow_control;
	ev.p.retry_count = id->retry_count;
	ev.p.rnr_retry_count = id->rnr_retry_count;
	ev.p.srq = id->srq;
	/* The consumer's private data follows the IP header (Annex A11). */
	cm_event_pdata(&ev, mad, WIRE_CM_REQ_PRIVATE_DATA, WIRE_CM_IP_HDR_BYTES);
	cm_event(l, l->handle, UROCE_CM_EVENT_CONNECT_REQUEST, 0, &ev);
}

static void cm_recv_rep(struct emu_dev *dev, const struct wire_cm_msg *msg, const uint8_t *mad)
{
	struct cm_id *id = cm_find_comm(dev, msg->remote_comm_id);
	struct uroce_cm_event ev;

	if (!id) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	if (id->state == CM_ESTABLISHED && id->remote_comm_id == msg->local_comm_id) {
		/* IBA 12.9.6.2: our RTU was lost: send it again. */
		dev->dcnt[EMU_DCNT_CM_DUPLICATES]++;
		cm_send_rtu(id);
		return;
	}
	if (id->state != CM_REQ_SENT) {
		dev->dcnt[EMU_DCNT_CM_DUPLICATES]++;
		return;
	}
	cm_timer_stop(id);
	id->remote_comm_id = msg->local_comm_id;
	/* An XRC target's QPN comes in the EE context's field (annex A14). */
	id->remote_qpn = id->qp_type == UROCE_QPT_XRC_SEND ? msg->eecn : msg->qpn;
	id->remote_psn = msg->starting_psn;
	/* What the passive side accepted bounds what we use. */
	{
		uint8_t rr = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_INITIATOR_DEPTH);
		uint8_t id_ = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_RESPONDER_RESOURCES);

		if (rr < id->responder_resources)
			id->responder_resources = rr;
		if (id_ < id->initiator_depth)
			id->initiator_depth = id_;
	}
	id->rnr_retry_count = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_RNR_RETRY_COUNT);
	cm_set_state(id, CM_REP_RCVD);
	dev->dcnt[EMU_DCNT_CM_REP_RCVD]++;
	memset(&ev, 0, sizeof(ev));
	ev.p.qp_num = id->remote_qpn;
	ev.p.responder_resources = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_INITIATOR_DEPTH);
	ev.p.initiator_depth = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_RESPONDER_RESOURCES);
	ev.p.flow_control = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_END_TO_END_FLOW_CONTROL);
	ev.p.rnr_retry_count = id->rnr_retry_count;
	ev.p.srq = (uint8_t)wire_cm_get(mad, WIRE_CM_REP_SRQ);
	cm_event_pdata(&ev, mad, WIRE_CM_REP_PRIVATE_DATA, 0);
	cm_event(id, id->handle, UROCE_CM_EVENT_CONNECT_RESPONSE, 0, &ev);
}

static void cm_recv_rtu(struct emu_dev *dev, const struct wire_cm_msg *msg)
{
	struct cm_id *id = cm_find_comm(dev, msg->remote_comm_id);

	if (!id || id->remote_comm_id != msg->local_comm_id) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	if (id->state != CM_REP_SENT) {
		dev->dcnt[EMU_DCNT_CM_DUPLICATES]++;
		return;
	}
	cm_timer_stop(id);
	cm_set_state(id, CM_ESTABLISHED);
	dev->dcnt[EMU_DCNT_CM_ESTABLISHED]++;
	cm_event(id, id->handle, UROCE_CM_EVENT_ESTABLISHED, 0, NULL);
}

static void cm_recv_rej(struct emu_dev *dev, const struct wire_cm_msg *msg, const uint8_t *mad)
{
	struct cm_id *id = cm_find_comm(dev, msg->remote_comm_id);
	struct uroce_cm_event ev;

	if (!id ||
	    (id->state != CM_REQ_SENT && id->state != CM_REP_SENT && id->state != CM_REP_RCVD)) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	cm_timer_stop(id);
	cm_set_state(id, CM_CLOSED);
	memset(&ev, 0, sizeof(ev));
	cm_event_pdata(&ev, mad, WIRE_CM_REJ_PRIVATE_DATA, 0);
	/* The kernel's rdma_cm reports a REJ's reason as the event status. */
	if (id->chan)
		cm_event(id, id->handle, UROCE_CM_EVENT_REJECTED, msg->rej_reason, &ev);
	else
		cm_id_free(id);
}

static void cm_recv_mra(struct emu_dev *dev, const struct wire_cm_msg *msg, const uint8_t *mad)
{
	struct cm_id *id = cm_find_comm(dev, msg->remote_comm_id);
	unsigned exp = (unsigned)wire_cm_get(mad, WIRE_CM_MRA_SERVICE_TIMEOUT);

	if (!id || !id->timer_on || (id->state != CM_REQ_SENT && id->state != CM_REP_SENT)) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	/* IBA 12.6.6: the peer needs longer; wait that long before resending. */
	uv_timer_stop(&id->timer);
	uv_timer_start(&id->timer, on_cm_timeout, id->timeout_ms + cm_exp_ms(exp), 0);
}

static void cm_recv_dreq(struct emu_dev *dev, const struct xport_gsi_mad *m,
			 const struct wire_cm_msg *msg)
{
	struct cm_id *id = cm_find_comm(dev, msg->remote_comm_id);

	if (!id || id->remote_comm_id != msg->local_comm_id) {
		/* IBA 12.9.8: a DREQ for a connection this CM does not know
		 * is answered all the same, so that the sender completes. */
		uint8_t mad[WIRE_MAD_BYTES];

		wire_cm_init(mad, WIRE_CM_ATTR_DREP, msg->tid);
		wire_cm_set(mad, WIRE_CM_DREP_LOCAL_COMM_ID, msg->remote_comm_id);
		wire_cm_set(mad, WIRE_CM_DREP_REMOTE_COMM_ID, msg->local_comm_id);
		cm_send_reply(dev, m, mad);
		dev->dcnt[EMU_DCNT_CM_DREP_SENT]++;
		return;
	}
	id->tid = msg->tid;
	switch (id->state) {
	case CM_REP_SENT: /* the RTU was lost, the DREQ says the connection was up */
	case CM_ESTABLISHED:
		cm_timer_stop(id);
		cm_set_state(id, CM_DREQ_RCVD);
		cm_event(id, id->handle, UROCE_CM_EVENT_DISCONNECTED, 0, NULL);
		if (!id->chan) { /* nobody to call rdma_disconnect: answer now */
			cm_send_drep(dev, id->remote.gid, id->tos, id->tid, id->local_comm_id,
				     id->remote_comm_id);
			cm_id_free(id);
		}
		break;
	case CM_DREQ_SENT: /* both sides disconnect at once (IBA 12.9.6.4) */
		cm_send_drep(dev, id->remote.gid, id->tos, msg->tid, id->local_comm_id,
			     id->remote_comm_id);
		break;
	case CM_CLOSED: /* our DREP was lost */
		cm_send_drep(dev, id->remote.gid, id->tos, msg->tid, id->local_comm_id,
			     id->remote_comm_id);
		dev->dcnt[EMU_DCNT_CM_DUPLICATES]++;
		break;
	default:
		dev->dcnt[EMU_DCNT_CM_DUPLICATES]++;
		break;
	}
}

static void cm_recv_drep(struct emu_dev *dev, const struct wire_cm_msg *msg)
{
	struct cm_id *id = cm_find_comm(dev, msg->remote_comm_id);

	if (!id || id->state != CM_DREQ_SENT) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	cm_timer_stop(id);
	cm_set_state(id, CM_CLOSED);
	if (id->chan)
		cm_event(id, id->handle, UROCE_CM_EVENT_DISCONNECTED, 0, NULL);
	else
		cm_id_free(id);
}

static void cm_sidr_rep(struct emu_dev *dev, const uint8_t dgid[16], uint8_t tclass, uint64_t tid,
			uint32_t request_id, uint8_t status, uint64_t sid, uint32_t qpn,
			uint32_t qkey, const uint8_t *pdata, size_t len)
{
	uint8_t mad[WIRE_MAD_BYTES];

	wire_cm_init(mad, WIRE_CM_ATTR_SIDR_REP, tid);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_REQUEST_ID, request_id);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_STATUS, status);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_SERVICE_ID, sid);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_QPN, qpn);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_QKEY, qkey);
	if (len > wire_cm_field_bytes(WIRE_CM_SIDR_REP_PRIVATE_DATA))
		len = wire_cm_field_bytes(WIRE_CM_SIDR_REP_PRIVATE_DATA);
	if (len)
		memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_SIDR_REP_PRIVATE_DATA), pdata,
		       len);
	cm_send_to(dev, dgid, tclass, mad);
	dev->dcnt[EMU_DCNT_CM_SIDR_REP_SENT]++;
}

/*
 * IBA 12.11: service ID resolution for UD. A SIDR_REQ for a UD listener
 * becomes a CONNECT_REQUEST (the application answers with rdma_accept:
 * status 0, its QPN and Q_Key; or rdma_reject: status 2); for a service
 * nobody offers it gets status 1 (not supported).
 */
static void cm_recv_sidr_req(struct emu_dev *dev, const struct xport_gsi_mad *m,
			     const struct wire_cm_msg *req)
{
	struct uroce_cm_event ev;
	struct cm_id *l = NULL, *id;
	struct emu_list *p, *t;

	EMU_LIST_FOR_EACH_SAFE(p, t, &dev->cm->ids)
	{
		id = id_of(p);
		if (id->state == CM_SIDR_RCVD && id->remote_comm_id == req->local_comm_id &&
		    !memcmp(id->remote.gid, m->rt->sgid, 16)) {
			dev->dcnt[EMU_DCNT_CM_DUPLICATES]++; /* the application has not answered yet
							      */
			return;
		}
	}
	if (req->has_ip && (wire_cm_ip_get_ipv(req->ip) == 4 || wire_cm_ip_get_ipv(req->ip) == 6)) {
		struct uroce_cm_addr a;

		cm_addr_from_ip(&a, req->ip, req->ip->dst, 0);
		l = cm_find_listener(dev, req->service_id, a.gid);
	}
	if (!l || (l->ps != UROCE_CM_PS_UDP && l->ps != UROCE_CM_PS_IPOIB) ||
	    !(id = cm_id_new(dev, l->chan))) {
		cm_sidr_rep(dev, m->rt->sgid, m->rt->tclass, req->tid, req->local_comm_id, 1,
			    req->service_id, 0, 0, NULL, 0);
		return;
	}
	id->ps = l->ps;
	id->qp_type = UROCE_QPT_UD;
	id->listener = l->handle;
	id->service_id = req->service_id;
	id->tid = req->tid;
	id->remote_comm_id = req->local_comm_id;
	id->tos = m->rt->tclass;
	cm_addr_from_ip(&id->local, req->ip, req->ip->dst, (uint16_t)(req->service_id & 0xffff));
	cm_addr_from_ip(&id->remote, req->ip, req->ip->src, wire_cm_ip_get_sport(req->ip));
	memcpy(id->remote.gid, m->rt->sgid, 16);
	cm_set_state(id, CM_SIDR_RCVD);
	dev->dcnt[EMU_DCNT_CM_REQ_RCVD]++;
	memset(&ev, 0, sizeof(ev));
	ev.child = id->handle;
	ev.local = id->local;
	ev.remote = id->remote;
	cm_event_pdata(&ev, m->mad, WIRE_CM_SIDR_REQ_PRIVATE_DATA, WIRE_CM_IP_HDR_BYTES);
	cm_event(l, l->handle, UROCE_CM_EVENT_CONNECT_REQUEST, 0, &ev);
}

/* IBA 12.11.2: the answer to our SIDR_REQ. */
static void cm_recv_sidr_rep(struct emu_dev *dev, const struct wire_cm_msg *msg, const uint8_t *mad)
{
	struct cm_id *id = cm_find_comm(dev, msg->local_comm_id);
	struct uroce_cm_event ev;

	if (!id || id->state != CM_SIDR_SENT) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	cm_timer_stop(id);
	cm_set_state(id, CM_CLOSED);
	memset(&ev, 0, sizeof(ev));
	cm_event_pdata(&ev, mad, WIRE_CM_SIDR_REP_PRIVATE_DATA, 0);
	if (msg->sidr_status) { /* as Linux's rdma_cm: UNREACHABLE, the status as is */
		cm_event(id, id->handle, UROCE_CM_EVENT_UNREACHABLE, msg->sidr_status, &ev);
		return;
	}
	ev.remote = id->remote;
	ev.p.qp_num = msg->qpn;
	ev.p.qkey = (uint32_t)wire_cm_get(mad, WIRE_CM_SIDR_REP_QKEY);
	dev->dcnt[EMU_DCNT_CM_ESTABLISHED]++;
	cm_event(id, id->handle, UROCE_CM_EVENT_ESTABLISHED, 0, &ev);
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
	/* CM messages are all Sends; responses (method bit 7) are never answered. */
	if (msg.method != WIRE_MAD_METHOD_SEND) {
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		return;
	}
	switch (msg.attr_id) {
	case WIRE_CM_ATTR_REQ:
		cm_recv_req(dev, m, &msg);
		break;
	case WIRE_CM_ATTR_REP:
		cm_recv_rep(dev, &msg, m->mad);
		break;
	case WIRE_CM_ATTR_RTU:
		cm_recv_rtu(dev, &msg);
		break;
	case WIRE_CM_ATTR_REJ:
		cm_recv_rej(dev, &msg, m->mad);
		break;
	case WIRE_CM_ATTR_MRA:
		cm_recv_mra(dev, &msg, m->mad);
		break;
	case WIRE_CM_ATTR_DREQ:
		cm_recv_dreq(dev, m, &msg);
		break;
	case WIRE_CM_ATTR_DREP:
		cm_recv_drep(dev, &msg);
		break;
	case WIRE_CM_ATTR_SIDR_REQ:
		cm_recv_sidr_req(dev, m, &msg);
		break;
	case WIRE_CM_ATTR_SIDR_REP:
		cm_recv_sidr_rep(dev, &msg, m->mad);
		break;
	default: /* LAP, APR, ClassPortInfo: nothing asked for them */
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
		break;
	}
}

/* ------------------------------------------------------------------------ */
/* Operations.                                                               */

static int cm_ps_ok(uint16_t ps)
{
	return ps == UROCE_CM_PS_TCP || ps == UROCE_CM_PS_UDP || ps == UROCE_CM_PS_IPOIB ||
	       ps == UROCE_CM_PS_IB;
}

int emu_cm_listen(struct emu_ctx *ctx, const struct uroce_cm_listen_req *req, uint32_t *handle)
{
	struct emu_dev *dev = ctx->dev;
	struct emu_cm_chan *ch = ctx->cm_chan;
	uint64_t sid = wire_cm_ip_service_id((uint8_t)(req->ps & 0xff), req->addr.port);
	struct emu_list *p, *t;
	struct cm_id *id;

	if (!ch)
		return -EPROTO;
	if (!cm_ps_ok(req->ps) || !req->addr.port)
		return -EINVAL;
	if (!req->wildcard && memcmp(req->addr.gid, dev->gid, 16))
		return -EADDRNOTAVAIL;
	EMU_LIST_FOR_EACH_SAFE(p, t, &dev->cm->ids)
	{
		struct cm_id *o = id_of(p);

		if (o->state == CM_LISTEN && o->service_id == sid &&
		    (o->wildcard || req->wildcard || !memcmp(o->local.gid, req->addr.gid, 16)))
			return -EADDRINUSE;
	}
	id = cm_id_new(dev, ch);
	if (!id)
		return -ENOMEM;
	id->ps = req->ps;
	id->qp_type = req->qp_type;
	id->service_id = sid;
	id->wildcard = req->wildcard;
	id->local = req->addr;
	cm_set_state(id, CM_LISTEN);
	emu_info("CM: pid %d listens on service 0x%016llx (%s port %u)", (int)ctx->pid,
		 (unsigned long long)sid, req->wildcard ? "any address," : "the device's address,",
		 req->addr.port);
	*handle = id->handle;
	cm_held_listen(dev);
	return 0;
}

int emu_cm_connect(struct emu_ctx *ctx, const struct uroce_cm_connect_req *req, uint32_t *handle)
{
	struct emu_dev *dev = ctx->dev;
	const struct uroce_cm_conn_param *cp = &req->p;
	struct wire_cm_ip_hdr ip;
	size_t max_pd = wire_cm_field_bytes(WIRE_CM_REQ_PRIVATE_DATA) - WIRE_CM_IP_HDR_BYTES;
	struct cm_id *id;
	uint8_t *mad;

	if (!ctx->cm_chan)
		return -EPROTO;
	if (req->qp_type == UROCE_QPT_UD)
		max_pd = wire_cm_field_bytes(WIRE_CM_SIDR_REQ_PRIVATE_DATA) - WIRE_CM_IP_HDR_BYTES;
	if (!cm_ps_ok(req->ps) ||
	    (req->qp_type != UROCE_QPT_RC && req->qp_type != UROCE_QPT_UC &&
	     req->qp_type != UROCE_QPT_UD && req->qp_type != UROCE_QPT_XRC_SEND) ||
	    cp->private_data_len > max_pd || (req->dst.ipv != 4 && req->dst.ipv != 6) ||
	    !req->dst.port)
		return -EINVAL;
	if (memcmp(req->src.gid, dev->gid, 16))
		return -EADDRNOTAVAIL;
	id = cm_id_new(dev, ctx->cm_chan);
	if (!id)
		return -ENOMEM;
	id->ps = req->ps;
	id->qp_type = req->qp_type;
	id->local = req->src;
	id->remote = req->dst;
	id->service_id = wire_cm_ip_service_id((uint8_t)(req->ps & 0xff), req->dst.port);
	id->local_comm_id = cm_new_comm_id(dev);
	id->local_qpn = cp->qp_num & 0xffffff;
	id->psn = cm_random() & 0xffffff;
	id->responder_resources = cp->responder_resources;
	id->initiator_depth = cp->initiator_depth;
	id->retry_count = cp->retry_count > 7 ? 7 : cp->retry_count;
	id->rnr_retry_count = cp->rnr_retry_count > 7 ? 7 : cp->rnr_retry_count;
	id->flow_control = cp->flow_control;
	id->srq = cp->srq;
	id->tos = req->tos;
	if (req->ack_timeout)
		id->ack_timeout = req->ack_timeout;
	/* A path record's MTU, never above the port's (as modify_qp would
	 * refuse it), its SL and rate; they go into the REQ's primary path. */
	if (req->path_mtu)
		id->path_mtu = (uint8_t)(req->path_mtu < dev->active_mtu ? req->path_mtu
									: dev->active_mtu);
	id->sl = req->path_sl & 0xf;
	if (req->path_rate)
		id->rate = req->path_rate & 0x3f;
	id->tid = ((uint64_t)cm_random() << 32) | cm_random();
	/* Annex A11: the IP addressing header, then the consumer's data. */
	memset(&ip, 0, sizeof(ip));
	wire_cm_ip_set_ipv(&ip, req->dst.ipv);
	wire_cm_ip_set_sport(&ip, req->src.port);
	memcpy(ip.src, req->src.gid, 16);
	memcpy(ip.dst, req->dst.gid, 16);
	if (req->dst.ipv == 4) { /* IPv4: the address alone, in the last four bytes */
		memset(ip.src, 0, 12);
		memset(ip.dst, 0, 12);
	}
	mad = id->mad;
	if (id->qp_type == UROCE_QPT_UD) { /* IBA 12.11.1 and table 119: SIDR_REQ */
		wire_cm_init(mad, WIRE_CM_ATTR_SIDR_REQ, id->tid);
		wire_cm_set(mad, WIRE_CM_SIDR_REQ_REQUEST_ID, id->local_comm_id);
		wire_cm_set(mad, WIRE_CM_SIDR_REQ_PKEY, WIRE_DEFAULT_PKEY);
		wire_cm_set(mad, WIRE_CM_SIDR_REQ_SERVICE_ID, id->service_id);
		memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_SIDR_REQ_PRIVATE_DATA), &ip,
		       sizeof(ip));
		memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_SIDR_REQ_PRIVATE_DATA) +
			   sizeof(ip),
		       cp->private_data, cp->private_data_len);
		id->retries_left = dev->cm_retries;
		cm_set_state(id, CM_SIDR_SENT);
		cm_send_wait(id);
		dev->dcnt[EMU_DCNT_CM_REQ_SENT]++;
		*handle = id->handle;
		return 0;
	}

	/* IBA 12.6.5 and table 106; values as Linux's CM fills them for RoCE. */
	wire_cm_init(mad, WIRE_CM_ATTR_REQ, id->tid);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_COMM_ID, id->local_comm_id);
	wire_cm_set(mad, WIRE_CM_REQ_SERVICE_ID, id->service_id);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_CA_GUID, be64toh(dev->node_guid));
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_QPN, id->local_qpn);
	wire_cm_set(mad, WIRE_CM_REQ_INITIATOR_DEPTH, id->initiator_depth);
	wire_cm_set(mad, WIRE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, dev->cm_timeout);
	wire_cm_set(mad, WIRE_CM_REQ_END_TO_END_FLOW_CONTROL, id->flow_control);
	wire_cm_set(mad, WIRE_CM_REQ_STARTING_PSN, id->psn);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, dev->cm_timeout);
	wire_cm_set(mad, WIRE_CM_REQ_PKEY, WIRE_DEFAULT_PKEY);
	wire_cm_set(mad, WIRE_CM_REQ_PATH_MTU, id->path_mtu);
	wire_cm_set(mad, WIRE_CM_REQ_MAX_CM_RETRIES, dev->cm_retries);
	if (id->qp_type == UROCE_QPT_XRC_SEND) {
		/*
		 * Annex A14: an XRC initiator; its target has no responder
		 * resources, retries or SRQ flag to ask for (the target's
		 * receive queue is an XRC SRQ), so these stay 0, as Linux
		 * sends them.
		 */
		wire_cm_set(mad, WIRE_CM_REQ_TRANSPORT_SERVICE_TYPE, 3);
		wire_cm_set(mad, WIRE_CM_REQ_EXTENDED_TRANSPORT_TYPE, 1);
	} else {
		wire_cm_set(mad, WIRE_CM_REQ_TRANSPORT_SERVICE_TYPE, id->qp_type == UROCE_QPT_UC);
		wire_cm_set(mad, WIRE_CM_REQ_RESPONDER_RESOURCES, id->responder_resources);
		wire_cm_set(mad, WIRE_CM_REQ_RETRY_COUNT, id->retry_count);
		wire_cm_set(mad, WIRE_CM_REQ_RNR_RETRY_COUNT, id->rnr_retry_count);
		wire_cm_set(mad, WIRE_CM_REQ_SRQ, id->srq);
	}
	/* RoCE has no LIDs: the permissive LID, as Linux sends. */
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_LOCAL_LID, 0xffff);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_REMOTE_LID, 0xffff);
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIMARY_LOCAL_GID), dev->gid, 16);
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIMARY_REMOTE_GID), id->remote.gid,
	       16);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_PACKET_RATE, id->rate);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_SL, id->sl);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_TRAFFIC_CLASS, id->tos);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_HOP_LIMIT, CM_HOP_LIMIT);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, id->ack_timeout);
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIVATE_DATA), &ip, sizeof(ip));
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIVATE_DATA) + sizeof(ip),
	       cp->private_data, cp->private_data_len);

	id->retries_left = dev->cm_retries;
	cm_set_state(id, CM_REQ_SENT);
	cm_send_wait(id);
	dev->dcnt[EMU_DCNT_CM_REQ_SENT]++;
	*handle = id->handle;
	return 0;
}

int emu_cm_accept(struct emu_ctx *ctx, const struct uroce_cm_accept_req *req)
{
	struct cm_id *id = cm_find_own(ctx, req->handle);
	struct emu_dev *dev = ctx->dev;
	const struct uroce_cm_conn_param *cp = &req->p;
	uint8_t *mad;

	if (!id)
		return -EINVAL;
	if (id->state == CM_REP_RCVD) { /* the active side: RTU */
		cm_send_rtu(id);
		cm_set_state(id, CM_ESTABLISHED);
		dev->dcnt[EMU_DCNT_CM_ESTABLISHED]++;
		return 0;
	}
	if (id->state == CM_SIDR_RCVD) { /* IBA 12.11.2: SIDR_REP, status 0 */
		if (cp->private_data_len > wire_cm_field_bytes(WIRE_CM_SIDR_REP_PRIVATE_DATA))
			return -EINVAL;
		id->local_qpn = cp->qp_num & 0xffffff;
		cm_sidr_rep(dev, id->remote.gid, id->tos, id->tid, id->remote_comm_id, 0,
			    id->service_id, id->local_qpn, cp->qkey ? cp->qkey : CM_UDP_QKEY,
			    cp->private_data, cp->private_data_len);
		cm_set_state(id, CM_CLOSED);
		return 0;
	}
	if (id->state != CM_REQ_RCVD)
		return -EINVAL;
	if (cp->private_data_len > wire_cm_field_bytes(WIRE_CM_REP_PRIVATE_DATA))
		return -EINVAL;
	id->local_qpn = cp->qp_num & 0xffffff;
	if (cp->responder_resources < id->responder_resources)
		id->responder_resources = cp->responder_resources;
	if (cp->initiator_depth < id->initiator_depth)
		id->initiator_depth = cp->initiator_depth;
	mad = id->mad;
	/* IBA 12.6.8 and table 110; the REP answers the REQ's transaction. */
	wire_cm_init(mad, WIRE_CM_ATTR_REP, id->tid);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_COMM_ID, id->local_comm_id);
	wire_cm_set(mad, WIRE_CM_REP_REMOTE_COMM_ID, id->remote_comm_id);
	wire_cm_set(mad, WIRE_CM_REP_STARTING_PSN, id->psn);
	wire_cm_set(mad, WIRE_CM_REP_RESPONDER_RESOURCES, id->responder_resources);
	wire_cm_set(mad, WIRE_CM_REP_TARGET_ACK_DELAY, CM_TARGET_ACK_DELAY);
	wire_cm_set(mad, WIRE_CM_REP_RNR_RETRY_COUNT,
		    cp->rnr_retry_count > 7 ? 7 : cp->rnr_retry_count);
	if (id->qp_type == UROCE_QPT_XRC_RECV) {
		/* Annex A14: an XRC target's QPN goes where an EE context's
		 * would (the initiator reads it there), and it always
		 * receives through an SRQ; as Linux's CM. */
		wire_cm_set(mad, WIRE_CM_REP_LOCAL_EECN, id->local_qpn);
		wire_cm_set(mad, WIRE_CM_REP_SRQ, 1);
	} else {
		wire_cm_set(mad, WIRE_CM_REP_LOCAL_QPN, id->local_qpn);
		wire_cm_set(mad, WIRE_CM_REP_INITIATOR_DEPTH, id->initiator_depth);
		wire_cm_set(mad, WIRE_CM_REP_END_TO_END_FLOW_CONTROL, cp->flow_control);
		wire_cm_set(mad, WIRE_CM_REP_SRQ, cp->srq);
	}
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_CA_GUID, be64toh(dev->node_guid));
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REP_PRIVATE_DATA), cp->private_data,
	       cp->private_data_len);
	id->retries_left = dev->cm_retries;
	cm_set_state(id, CM_REP_SENT);
	cm_send_wait(id);
	dev->dcnt[EMU_DCNT_CM_REP_SENT]++;
	return 0;
}

int emu_cm_reject(struct emu_ctx *ctx, const struct uroce_cm_reject_req *req)
{
	struct cm_id *id = cm_find_own(ctx, req->handle);

	if (id && id->state == CM_SIDR_RCVD) { /* IBA 12.11.2: status 2, rejected */
		cm_sidr_rep(id->dev, id->remote.gid, id->tos, id->tid, id->remote_comm_id, 2,
			    id->service_id, 0, 0, req->private_data, req->private_data_len);
		cm_set_state(id, CM_CLOSED);
		return 0;
	}
	if (!id || (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD))
		return -EINVAL;
	cm_send_rej(id, id->state == CM_REQ_RCVD ? 0 : 1,
		    req->reason ? req->reason : WIRE_CM_REJ_CONSUMER_REJECT, req->private_data,
		    req->private_data_len);
	cm_set_state(id, CM_CLOSED);
	return 0;
}

int emu_cm_disconnect(struct emu_ctx *ctx, uint32_t handle)
{
	struct cm_id *id = cm_find_own(ctx, handle);

	if (!id)
		return -EINVAL;
	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT: /* IBA 12.9.6.3: the passive side may disconnect before the RTU */
		cm_timer_stop(id);
		cm_send_dreq(id);
		return 0;
	case CM_DREQ_RCVD:
		cm_send_drep(id->dev, id->remote.gid, id->tos, id->tid, id->local_comm_id,
			     id->remote_comm_id);
		cm_set_state(id, CM_CLOSED);
		return 0;
	case CM_DREQ_SENT:
	case CM_CLOSED:
		return 0; /* already disconnecting or gone (the kernel's answer too) */
	default:
		return -EINVAL;
	}
}

/*
 * The QP's communication established event stands for the RTU where the
 * data came first (IBA 11.6.3 COMM_EST, 12.9.6.3: the passive side in
 * REP_SENT goes to ESTABLISHED on it): the REP's resends stop, the
 * application gets ESTABLISHED, and the RTU that may still come is a
 * duplicate. Path migration has no alternate path to move to here: nothing
 * changes, and it succeeds as on Linux (ib_cm_notify).
 */
int emu_cm_notify(struct emu_ctx *ctx, uint32_t handle, uint32_t event)
{
	struct cm_id *id = cm_find_own(ctx, handle);

	if (!id)
		return -EINVAL;
	if (event == UROCE_EVENT_PATH_MIG)
		return 0;
	if (event != UROCE_EVENT_COMM_EST)
		return -EINVAL;
	if (id->state == CM_ESTABLISHED)
		return -EISCONN;
	if (id->state != CM_REP_SENT)
		return -EINVAL;
	cm_timer_stop(id);
	cm_set_state(id, CM_ESTABLISHED);
	id->dev->dcnt[EMU_DCNT_CM_ESTABLISHED]++;
	cm_event(id, id->handle, UROCE_CM_EVENT_ESTABLISHED, 0, NULL);
	return 0;
}

/* Destroy id: end what its state leaves open, as the IB CM does when its
 * consumer destroys a connection (Linux cm_destroy_id). */
static void cm_id_destroy(struct cm_id *id)
{
	struct emu_dev *dev = id->dev;

	switch (id->state) {
	case CM_REQ_SENT:
	case CM_REP_SENT:
		cm_timer_stop(id);
		cm_send_rej(id, id->state == CM_REQ_SENT ? 0 : 1, WIRE_CM_REJ_TIMEOUT, NULL, 0);
		break;
	case CM_REQ_RCVD:
	case CM_REP_RCVD:
		cm_send_rej(id, id->state == CM_REQ_RCVD ? 0 : 1, WIRE_CM_REJ_CONSUMER_REJECT, NULL,
			    0);
		break;
	case CM_ESTABLISHED:
		/* The peer must see the disconnect: DREQ, retried as an orphan. */
		cm_send_dreq(id);
		cm_id_orphan(id);
		return;
	case CM_DREQ_SENT:
		cm_id_orphan(id); /* its DREP or the timeout frees it */
		return;
	case CM_DREQ_RCVD:
		cm_send_drep(dev, id->remote.gid, id->tos, id->tid, id->local_comm_id,
			     id->remote_comm_id);
		break;
	case CM_MCAST: /* leave: the RNIC leaves the group with its last member */
		if (id->mcg)
			emu_mcast_put(id->mcg);
		id->mcg = NULL;
		break;
	case CM_SIDR_RCVD: /* never answered: rejected */
		cm_sidr_rep(dev, id->remote.gid, id->tos, id->tid, id->remote_comm_id, 2,
			    id->service_id, 0, 0, NULL, 0);
		break;
	default:
		break;
	}
	cm_id_free(id);
}

int emu_cm_join_mcast(struct emu_ctx *ctx, const struct uroce_cm_join_req *req, uint32_t *handle)
{
	struct emu_dev *dev = ctx->dev;
	struct uroce_cm_event ev;
	uint8_t group[16];
	struct cm_id *id;
	int err;

	if (!ctx->cm_chan || emu_mcast_group_gid(dev, req->addr.gid, group) ||
	    req->join_flags > UROCE_CM_JOIN_SENDONLY)
		return -EINVAL;
	id = cm_id_new(dev, ctx->cm_chan);
	if (!id)
		return -ENOMEM;
	id->state = CM_MCAST;
	id->ps = UROCE_CM_PS_UDP;
	id->qp_type = UROCE_QPT_UD;
	memcpy(id->local.gid, group, 16);
	id->local.ipv = dev->family == AF_INET ? 4 : 6;
	id->remote = id->local;
	/* A send-only member needs no membership (no IGMP join), as the
	 * kernel's RDMA CM does for RoCE. */
	if (req->join_flags != UROCE_CM_JOIN_SENDONLY) {
		err = emu_mcast_get(dev, group, &id->mcg);
		if (err) {
			cm_id_free(id);
			return err;
		}
	}
	*handle = id->handle;
	/* The group's UD parameters (the kernel's cma_make_mc_event): the
	 * address vector to the group, QP 0xFFFFFF, the RDMA CM's Q_Key. */
	memset(&ev, 0, sizeof(ev));
	ev.remote = id->remote;
	ev.p.qp_num = 0xffffff;
	ev.p.qkey = CM_UDP_QKEY;
	cm_event(id, id->handle, UROCE_CM_EVENT_MULTICAST_JOIN, 0, &ev);
	emu_info("CM: pid %d joins multicast group (id %u%s)", (int)ctx->pid, id->handle,
		 id->mcg ? "" : ", send-only");
	return 0;
}

int emu_cm_destroy(struct emu_ctx *ctx, uint32_t handle)
{
	struct cm_id *id = cm_find_own(ctx, handle);

	if (!id)
		return -EINVAL;
	cm_id_destroy(id);
	return 0;
}

int emu_cm_migrate(struct emu_ctx *ctx, uint32_t handle)
{
	struct cm_id *id = cm_find(ctx->dev, handle);

	/* Only between channels of one process, as rdma_migrate_id moves an
	 * id between the event channels of one application. */
	if (!ctx->cm_chan || !id || !id->chan || id->chan->ctx->pid != ctx->pid)
		return -EINVAL;
	if (id->chan == ctx->cm_chan)
		return 0;
	emu_list_del(&id->chan_link);
	id->chan = ctx->cm_chan;
	emu_list_add_tail(&id->chan->ids, &id->chan_link);
	return 0;
}

int emu_cm_init_qp_attr(struct emu_ctx *ctx, uint32_t handle, uint32_t qp_state,
			struct uroce_cm_qp_attr *a)
{
	struct cm_id *id = cm_find_own(ctx, handle);
	bool connected;

	if (!id)
		return -EINVAL;
	connected = id->state == CM_REQ_RCVD || id->state == CM_REP_SENT ||
		    id->state == CM_REP_RCVD || id->state == CM_ESTABLISHED;
	memset(a, 0, sizeof(*a));
	a->qp_state = qp_state;
	switch (qp_state) {
	case UROCE_QPS_INIT:
		a->mask = UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT;
		a->port_num = UROCE_PORT_NUM;
		if (id->ps == UROCE_CM_PS_UDP || id->ps == UROCE_CM_PS_IPOIB) {
			a->mask |= UROCE_QP_QKEY;
			a->qkey = CM_UDP_QKEY;
			break;
		}
		/* IBA 12.7.8: remote reads and atomics only with responder resources. */
		a->mask |= UROCE_QP_ACCESS_FLAGS;
		a->qp_access_flags = UROCE_ACCESS_REMOTE_WRITE;
		if (id->responder_resources)
			a->qp_access_flags |= UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
		break;
	case UROCE_QPS_RTR:
		if (!connected)
			return -EINVAL;
		a->mask = UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			  UROCE_QP_RQ_PSN;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->psn;
		a->path_mtu = id->path_mtu;
		a->port_num = UROCE_PORT_NUM;
		a->is_global = 1;
		memcpy(a->dgid, id->remote.gid, 16);
		a->sgid_index = 0;
		a->hop_limit = CM_HOP_LIMIT;
		a->traffic_class = id->tos;
		a->sl = id->sl;
		a->static_rate = id->rate;
		/* As Linux's CM (cm_init_qp_rtr_attr): a QP that answers requests. */
		if (id->qp_type == UROCE_QPT_RC || id->qp_type == UROCE_QPT_XRC_RECV) {
			a->mask |= UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER;
			a->max_dest_rd_atomic = id->responder_resources;
			a->min_rnr_timer = 0; /* as Linux's CM: 655 ms */
		}
		break;
	case UROCE_QPS_RTS:
		if (!connected)
			return -EINVAL;
		a->mask = UROCE_QP_STATE | UROCE_QP_SQ_PSN;
		a->sq_psn = id->remote_psn;
		/* As Linux's CM (cm_init_qp_rts_attr): a QP that sends requests
		 * retries them; an XRC target only times its responses. */
		if (id->qp_type == UROCE_QPT_RC || id->qp_type == UROCE_QPT_XRC_SEND) {
			a->mask |=
			    UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC;
			a->retry_cnt = id->retry_count;
			a->rnr_retry = id->rnr_retry_count;
			a->max_rd_atomic = id->initiator_depth;
		}
		if (id->qp_type == UROCE_QPT_RC || id->qp_type == UROCE_QPT_XRC_SEND ||
		    id->qp_type == UROCE_QPT_XRC_RECV) {
			a->mask |= UROCE_QP_TIMEOUT;
			a->timeout = id->ack_timeout;
		}
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Channels.                                                                 */

int emu_cm_chan_open(struct emu_ctx *ctx, int *evfd)
{
	struct emu_cm_chan *ch;
	int sv[2];

	if (ctx->cm_chan)
		return -EBUSY;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		return -errno;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	ch->ctx = ctx;
	ch->evfd = sv[0];
	emu_list_init(&ch->ids);
	emu_list_add_tail(&ctx->dev->cm->chans, &ch->link);
	ctx->cm_chan = ch;
	*evfd = sv[1];
	return 0;
}

void emu_cm_chan_close(struct emu_ctx *ctx)
{
	struct emu_cm_chan *ch = ctx->cm_chan;
	unsigned n = 0;

	if (!ch)
		return;
	while (!emu_list_empty(&ch->ids)) {
		struct cm_id *id = EMU_CONTAINER_OF(ch->ids.next, struct cm_id, chan_link);

		cm_id_destroy(id);
		n++;
	}
	if (n)
		emu_info("CM channel of pid %d closed: %u ids destroyed", (int)ctx->pid, n);
	close(ch->evfd);
	emu_list_del(&ch->link);
	free(ch);
	ctx->cm_chan = NULL;
}

void emu_cm_stop(struct emu_dev *dev)
{
	struct emu_cm *cm = dev->cm;

	if (!cm)
		return;
	while (!emu_list_empty(&cm->held))
		cm_held_free(cm, EMU_CONTAINER_OF(cm->held.next, struct cm_held_req, link));
	/* ids whose contexts are gone, still finishing a disconnect: their
	 * timers were closed with the loop */
	while (!emu_list_empty(&cm->ids)) {
		struct cm_id *id = id_of(cm->ids.next);

		emu_list_del(&id->link);
		free(id);
	}
	free(cm);
	dev->cm = NULL;
	dev->gsi_recv = NULL;
}

void emu_cm_start(struct emu_dev *dev)
{
	dev->cm = calloc(1, sizeof(*dev->cm));
	if (!dev->cm) {
		emu_warn("CM: out of memory: QP1's MADs are dropped");
		return;
	}
	emu_list_init(&dev->cm->ids);
	emu_list_init(&dev->cm->chans);
	emu_list_init(&dev->cm->held);
	dev->gsi_recv = cm_recv;
}
