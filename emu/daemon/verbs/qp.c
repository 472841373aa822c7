/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: creation (capabilities checked against the device limits,
 * send and receive rings handed out), modification through the state
 * machine of qp_state.c with the attribute value checks hardware applies,
 * query, destruction and multicast attachment. Every state change and
 * every transport attribute also goes to the QP's transport engine
 * (xport_modify, after the state table of qp_state.c accepted it), and
 * queries read the current PSNs from it. In the error state the engine
 * flushes the WQEs it holds and the receive queue; the SQ ring entries it
 * was not yet given are handed to it and flushed too (IBA 10.3.1.10,
 * C10-30). The engine's own moves to Error (retries exhausted, NAKs...)
 * come back here as an async event. The protocol itself is not here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"

#define PSN_MASK 0xffffffu
#define QPN_MASK 0xffffffu

#define KNOWN_QP_ATTRS                                                                          \
	(UROCE_QP_STATE | UROCE_QP_CUR_STATE | UROCE_QP_EN_SQD_ASYNC_NOTIFY |                   \
	 UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_QKEY |          \
	 UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |              \
	 UROCE_QP_RNR_RETRY | UROCE_QP_RQ_PSN | UROCE_QP_MAX_QP_RD_ATOMIC | UROCE_QP_ALT_PATH | \
	 UROCE_QP_MIN_RNR_TIMER | UROCE_QP_SQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |               \
	 UROCE_QP_PATH_MIG_STATE | UROCE_QP_CAP | UROCE_QP_DEST_QPN | UROCE_QP_RATE_LIMIT)

/* Only the remote bits matter to a QP; the kernel lets MR bits through
 * too (programs pass an MR's flags, e.g. IBV_ACCESS_ON_DEMAND). The flush
 * bits say which FLUSH placement types the QP accepts (as Linux rxe). */
#define QP_ACCESS_FLAGS                                                                    \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_MW_BIND | UROCE_ACCESS_ON_DEMAND |      \
	 UROCE_ACCESS_FLUSH_GLOBAL | UROCE_ACCESS_FLUSH_PERSISTENT)

static struct emu_qp *find_qp(struct emu_ctx *ctx, uint32_t handle)
{
	struct emu_obj *obj = emu_dev_obj_find(ctx, handle, EMU_OBJ_QP);

	return obj ? EMU_CONTAINER_OF(obj, struct emu_qp, obj) : NULL;
}

/* The QP a handle names: the context's own, or an XRC target QP it opened (*op set). */
static struct emu_qp *find_any_qp(struct emu_ctx *ctx, uint32_t handle, struct emu_qp_open **op)
{
	struct emu_qp *qp = find_qp(ctx, handle);
	struct emu_obj *obj;

	*op = NULL;
	if (qp)
		return qp;
	obj = emu_dev_obj_find(ctx, handle, EMU_OBJ_QP_OPEN);
	if (!obj)
		return NULL;
	*op = EMU_CONTAINER_OF(obj, struct emu_qp_open, obj);
	return (*op)->qp;
}

/*
 * A QPN nobody can guess (emu_dev_random: a forger who does not know the
 * QPN cannot aim at the QP), unique on the device, never 0 or 1 (QP0 and
 * QP1, the special QPs) nor 0xFFFFFF (multicast).
 */
static int alloc_qpn(struct emu_dev *dev, struct emu_qp *qp)
{
	uint32_t qpn = 0;
	uint32_t tries = 0;

	do {
		/* Random draws, then (a nearly full space) the next free one. */
		if (tries < 64)
			qpn = emu_dev_random(dev) & QPN_MASK;
		else
			qpn = (qpn + 1) & QPN_MASK;
		if (++tries > QPN_MASK + 64)
			return -ENOMEM;
	} while (qpn < 2 || qpn == QPN_MASK || emu_htab_find(&dev->qpns, qpn));
	if (emu_htab_insert(&dev->qpns, &qp->qpn_node, qpn))
		return -ENOMEM;
	qp->qpn = qpn;
	return 0;
}

/* RC-like XRC QP types: they have neither a receive CQ nor a receive queue. */
static bool is_xrc(uint32_t type)
{
	return type == UROCE_QPT_XRC_SEND || type == UROCE_QPT_XRC_RECV;
}

/*
 * Take (n = 1) or drop (n = -1) the QP's use counts of its PD, CQs and SRQ.
 * An XRC target QP holds none: the ones it points at while a message runs
 * are the XRC SRQ's, which holds them.
 */
static void qp_hold(struct emu_qp *qp, int n)
{
	if (qp->type == UROCE_QPT_XRC_RECV)
		return;
	if (qp->pd)
		qp->pd->obj.usecnt += (uint32_t)n;
	if (qp->send_cq)
		qp->send_cq->obj.usecnt += (uint32_t)n;
	if (qp->recv_cq)
		qp->recv_cq->obj.usecnt += (uint32_t)n;
	if (qp->srq)
		qp->srq->obj.usecnt += (uint32_t)n;
}

static int check_type(uint32_t type)
{
	switch (type) {
	case UROCE_QPT_RC:
	case UROCE_QPT_UC:
	case UROCE_QPT_UD:
		return 0;
	case UROCE_QPT_XRC_SEND: /* initiator: a send queue only */
	case UROCE_QPT_XRC_RECV: /* target: in an XRC domain, no queues of its own */
		return 0;
	case UROCE_QPT_RAW_PACKET:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

int emu_qp_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_create_qp_req *r = req;
	const struct emu_limits *lim = &ctx->dev->lim;
	struct emu_dev *dev = ctx->dev;
	struct emu_obj *pdo = NULL, *scq = NULL, *rcq = NULL, *srqo = NULL;
	struct uroce_create_qp_resp *o;
	uint32_t sq_entries, sq_stride, rq_entries, rq_stride, data;
	int err, sq_fd = -1, rq_fd = -1;
	struct emu_xrcd *xrcd = NULL;
	struct uroce_qp_cap cap = r->cap;
	bool tgt = r->qp_type == UROCE_QPT_XRC_RECV, has_rq;
	struct emu_qp *qp;

	err = check_type(r->qp_type);
	if (err)
		return err;
	if (r->create_flags)
		return -EOPNOTSUPP;
	if (tgt) {
		/* An XRC target QP has an XRC domain and nothing else (uverbs
		 * ignores its PD, CQs, SRQ and capabilities). */
		xrcd = emu_xrcd_find(ctx, r->xrcd_handle);
		if (!xrcd)
			return -EINVAL;
		memset(&cap, 0, sizeof(cap));
	} else {
		pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
		scq = emu_dev_obj_find(ctx, r->send_cq_handle, EMU_OBJ_CQ);
		if (!pdo || !scq)
			return -EINVAL;
	}
	/* An XRC initiator has a send queue only: no receive CQ, RQ or SRQ. */
	if (!is_xrc(r->qp_type)) {
		rcq = emu_dev_obj_find(ctx, r->recv_cq_handle, EMU_OBJ_CQ);
		if (!rcq)
			return -EINVAL;
		if (r->srq_handle) {
			srqo = emu_dev_obj_find(ctx, r->srq_handle, EMU_OBJ_SRQ);
			if (!srqo)
				return -EINVAL;
		}
	} else {
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
	}
	has_rq = !srqo && !is_xrc(r->qp_type);
	if (cap.max_send_wr > lim->max_qp_wr || cap.max_send_sge > lim->max_sge ||
	    cap.max_inline_data > lim->max_inline_data)
		return -EINVAL;
	if (has_rq && (cap.max_recv_wr > lim->max_qp_wr || cap.max_recv_sge > lim->max_sge))
		return -EINVAL;
	if (dev->counts.qp >= lim->max_qp)
		return -ENOMEM;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->type = r->qp_type; /* before qp_hold */
	emu_list_init(&qp->flush_link);
	emu_list_init(&qp->rnr_link);
	emu_list_init(&qp->mcast);
	emu_list_init(&qp->sq_link);
	qp->db_index = UINT32_MAX;
	emu_list_init(&qp->run_link);
	emu_list_init(&qp->timer_link);
	emu_list_init(&qp->xrc_link);
	emu_list_init(&qp->opens);
	if (emu_dev_obj_add(ctx, &qp->obj, EMU_OBJ_QP))
		goto err_free;
	if (alloc_qpn(dev, qp))
		goto err_obj;

	sq_entries = emu_pow2_roundup(cap.max_send_wr ? cap.max_send_wr : 1);
	sq_stride = uroce_sq_stride(cap.max_send_sge ? cap.max_send_sge : 1, cap.max_inline_data);
	err = emu_ring_create(&qp->sq, UROCE_RING_SQ, sq_entries, sq_stride, qp->obj.hnode.key,
			      qp->qpn, &sq_fd);
	if (err)
		goto err_qpn;
	/* An XRC target QP never sends: no doorbell. */
	if (!tgt && (err = emu_sq_db_attach(qp)))
		goto err_sq;
	data = sq_stride - UROCE_SEND_WQE_BYTES;
	qp->cap.max_send_wr = sq_entries;
	qp->cap.max_send_sge = data / (uint32_t)sizeof(struct uroce_sge);
	if (qp->cap.max_send_sge > lim->max_sge)
		qp->cap.max_send_sge = lim->max_sge;
	qp->cap.max_inline_data = data < lim->max_inline_data ? data : lim->max_inline_data;
	qp->sq.max_sge = qp->cap.max_send_sge;
	qp->sq.max_inline = qp->cap.max_inline_data;
	qp->sq.hdr->max_sge = qp->sq.max_sge;
	qp->sq.hdr->max_inline = qp->sq.max_inline;

	if (has_rq) {
		rq_entries = emu_pow2_roundup(cap.max_recv_wr ? cap.max_recv_wr : 1);
		rq_stride = uroce_rq_stride(cap.max_recv_sge ? cap.max_recv_sge : 1);
		err = emu_ring_create(&qp->rq, UROCE_RING_RQ, rq_entries, rq_stride,
				      qp->obj.hnode.key, qp->qpn, &rq_fd);
		if (err)
			goto err_sq;
		qp->cap.max_recv_wr = rq_entries;
		qp->cap.max_recv_sge =
		    (rq_stride - UROCE_RECV_WQE_BYTES) / (uint32_t)sizeof(struct uroce_sge);
		if (qp->cap.max_recv_sge > lim->max_sge)
			qp->cap.max_recv_sge = lim->max_sge;
		qp->rq.max_sge = qp->cap.max_recv_sge;
		qp->rq.hdr->max_sge = qp->rq.max_sge;
	}

	if (tgt) {
		/* Its queue of sends is never used: it only answers. */
		qp->cap.max_send_wr = 0;
		qp->cap.max_send_sge = 0;
		qp->cap.max_inline_data = 0;
	}
	qp->pd = pdo ? EMU_CONTAINER_OF(pdo, struct emu_pd, obj) : NULL;
	qp->send_cq = scq ? EMU_CONTAINER_OF(scq, struct emu_cq, obj) : NULL;
	qp->recv_cq = rcq ? EMU_CONTAINER_OF(rcq, struct emu_cq, obj) : NULL;
	qp->srq = srqo ? EMU_CONTAINER_OF(srqo, struct emu_srq, obj) : NULL;
	qp_hold(qp, 1);
	if (xrcd) {
		qp->xrcd = xrcd;
		xrcd->obj.usecnt++;
		xrcd->dom->refs++;
		emu_list_add_tail(&xrcd->dom->tgt_qps, &qp->xrc_link);
	}
	qp->sq_sig_all = !!r->sq_sig_all;
	qp->state = UROCE_QPS_RESET;
	emu_event_qp_state(qp);

	/* The engine holds as many WRs as the SQ ring has slots, each with
	 * the SGEs and inline bytes the QP's ring holds (no more: memory for
	 * thousands of QPs). */
	err = xport_qp_init(&dev->x, &qp->x,
			    &(struct xport_qp_init){
				.type = qp->type,
				.qpn = qp->qpn,
				.max_send_wr = sq_entries,
				.max_sge = qp->cap.max_send_sge,
				.max_inline = qp->cap.max_inline_data,
				.sq_sig_all = qp->sq_sig_all,
				.srq = !has_rq,
			    });
	if (err)
		goto err_refs;
	/* One socket sends every packet: its port is every QP's source
	 * port (net.c explains the choice). */
	qp->x.sport = dev->udp_port;
	/* Peers listen on the port we do (4791 unless --port said else). */
	qp->x.dport = dev->udp_port;

	o = EMU_REPLY(rep, struct uroce_create_qp_resp);
	o->handle = qp->obj.hnode.key;
	o->qpn = qp->qpn;
	o->cap = qp->cap;
	o->sq_bytes = qp->sq.bytes;
	o->rq_bytes = qp->rq.bytes;
	emu_reply_add_fd(rep, sq_fd);
	o->nfds = 1;
	if (rq_fd >= 0) {
		emu_reply_add_fd(rep, rq_fd);
		o->nfds = 2;
	}
	return 0;

err_refs:
	qp_hold(qp, -1);
	if (xrcd) {
		emu_list_del(&qp->xrc_link);
		xrcd->obj.usecnt--;
		emu_xrcd_dom_put(xrcd->dom);
	}
	emu_ring_destroy(&qp->rq);
	if (rq_fd >= 0)
		close(rq_fd);
err_sq:
	emu_sq_db_detach(qp);
	emu_ring_destroy(&qp->sq);
	close(sq_fd);
err_qpn:
	emu_htab_remove(&dev->qpns, &qp->qpn_node);
err_obj:
	emu_dev_obj_del(&qp->obj);
err_free:
	free(qp);
	return err ? err : -ENOMEM;
}

/* Attribute values, checked like hardware (and rxe_qp_chk_attr) does. */
static int check_attr_values(struct emu_qp *qp, uint32_t mask, const struct uroce_qp_attr *a)
{
	const struct emu_dev *dev = qp->obj.ctx->dev;

	if ((mask & UROCE_QP_PORT) && a->port_num != UROCE_PORT_NUM)
		return -EINVAL;
	if ((mask & UROCE_QP_PKEY_INDEX) && a->pkey_index >= UROCE_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & UROCE_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~(uint32_t)QP_ACCESS_FLAGS))
		return -EINVAL;
	if ((mask & UROCE_QP_AV) && emu_dev_check_ah(dev, &a->ah_attr))
		return -EINVAL;
	/* Alternate paths (APM) exist only on IB link layers. */
	if (mask & UROCE_QP_ALT_PATH)
		return -EINVAL;
	if ((mask & UROCE_QP_PATH_MTU) && (a->path_mtu < 1 || a->path_mtu > 5))
		return -EINVAL;
	if ((mask & UROCE_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & UROCE_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & UROCE_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & UROCE_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & UROCE_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > dev->lim.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & UROCE_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > dev->lim.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & UROCE_QP_DEST_QPN) && a->dest_qp_num > QPN_MASK)
		return -EINVAL;
	if ((mask & UROCE_QP_PATH_MIG_STATE) && a->path_mig_state > 2)
		return -EINVAL;
	return 0;
}

static void apply_attrs(struct emu_qp *qp, uint32_t mask, const struct uroce_qp_attr *a)
{
	struct uroce_qp_attr *s = &qp->attr;

	if (mask & UROCE_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (mask & UROCE_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & UROCE_QP_PORT)
		s->port_num = a->port_num;
	if (mask & UROCE_QP_QKEY)
		s->qkey = a->qkey;
	if (mask & UROCE_QP_AV)
		s->ah_attr = a->ah_attr;
	if (mask & UROCE_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (mask & UROCE_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & UROCE_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & UROCE_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
	if (mask & UROCE_QP_RQ_PSN)
		s->rq_psn = a->rq_psn & PSN_MASK;
	if (mask & UROCE_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & UROCE_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & UROCE_QP_SQ_PSN)
		s->sq_psn = a->sq_psn & PSN_MASK;
	if (mask & UROCE_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & UROCE_QP_PATH_MIG_STATE)
		s->path_mig_state = a->path_mig_state;
	if (mask & UROCE_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
	if (mask & UROCE_QP_EN_SQD_ASYNC_NOTIFY)
		s->en_sqd_async_notify = a->en_sqd_async_notify;
}

/* IBA 11.6.3.1: a QP on an SRQ reports once that no more WQEs will be
 * taken from the SRQ for it. */

/* Transport attributes of a modify, in the engine's terms. */
static uint32_t to_xattr(const struct emu_qp *qp, uint32_t mask, const struct uroce_qp_attr *a,
			 struct xport_qp_attr *x)
{
	const uint32_t engine_mask = UROCE_QP_STATE | UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX |
				     UROCE_QP_QKEY | UROCE_QP_AV | UROCE_QP_PATH_MTU |
				     UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
				     UROCE_QP_RQ_PSN | UROCE_QP_MAX_QP_RD_ATOMIC |
				     UROCE_QP_MIN_RNR_TIMER | UROCE_QP_SQ_PSN |
				     UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_DEST_QPN;

	memset(x, 0, sizeof(*x));
	x->state = a->qp_state;
	x->access = a->qp_access_flags;
	x->pkey_index = a->pkey_index;
	x->pkey = UROCE_DEFAULT_PKEY; /* the one P_Key table entry */
	x->qkey = a->qkey;
	emu_dp_av(qp->obj.ctx->dev, &a->ah_attr, &x->av);
	x->path_mtu = (uint8_t)a->path_mtu;
	x->timeout = a->timeout;
	x->retry_cnt = a->retry_cnt;
	x->rnr_retry = a->rnr_retry;
	x->min_rnr_timer = a->min_rnr_timer;
	x->max_rd_atomic = a->max_rd_atomic;
	x->max_dest_rd_atomic = a->max_dest_rd_atomic;
	x->rq_psn = a->rq_psn & PSN_MASK;
	x->sq_psn = a->sq_psn & PSN_MASK;
	x->dest_qpn = a->dest_qp_num & QPN_MASK;
	return mask & engine_mask;
}

static void enter_state(struct emu_qp *qp, enum uroce_qp_state next)
{
	enum uroce_qp_state prev = qp->state;
	struct emu_ctx *ctx = qp->obj.ctx;

	qp->state = next;
	emu_event_qp_state(qp);
	if (next != UROCE_QPS_ERR)
		emu_list_del(&qp->flush_link);

	switch (next) {
	case UROCE_QPS_RESET:
		/* IBA 10.3.1.1: the work queues are emptied, no completions
		 * (the engine forgot its copies). */
		emu_ring_drain(&qp->sq);
		qp->sq_handed = qp->sq.cons;
		if (qp->rq.hdr) {
			emu_ring_drain(&qp->rq);
			qp->rq_done = qp->rq.cons;
			uroce_store_release(&qp->rq.hdr->done, qp->rq_done);
		}
		qp->last_wqe_sent = 0;
		qp->err_status = 0;
		break;
	case UROCE_QPS_ERR:
		if (prev != UROCE_QPS_ERR)
			emu_list_add_tail(&ctx->dev->flush_qps, &qp->flush_link);
		/* The engine flushed what it held and the RQ; the SQ ring
		 * entries it never saw are flushed through it now. */
		emu_dp_sq(qp);
		emu_event_last_wqe(qp);
		break;
	default:
		/* SQD: the engine reports the drain (emu_event_sq_drained). */
		break;
	}
	/* The states that send (emu_dp_sq's): WQEs posted before the move are
	 * looked at now (their doorbell rang before); ERR flushed them above. */
	if (next == UROCE_QPS_RTS || next == UROCE_QPS_SQD || next == UROCE_QPS_SQE)
		emu_dp_sq_kick(qp);
}

/*
 * A path MTU above the port's active MTU is clamped to it. Packets larger
 * than the link carries would leave with DF set and be dropped, so the QP
 * would retry until IBV_WC_RETRY_EXC_ERR. rxe refuses only a path MTU
 * above the port's max_mtu (rxe_qp_chk_attr, EINVAL; here 1..5 is checked
 * too) and otherwise uses what it is given; the RDMA CM chooses
 * min(active MTU, netdev MTU) for RoCE paths and perftest caps -m at the
 * active MTU. uroce clamps at the QP, as the programs that choose it
 * themselves expect of the link, and ibv_query_qp reports the MTU used.
 */
static void clamp_path_mtu(struct emu_qp *qp, uint32_t mask, struct uroce_qp_attr *a)
{
	struct emu_dev *dev = qp->obj.ctx->dev;

	if (!(mask & UROCE_QP_PATH_MTU) || a->path_mtu <= dev->active_mtu)
		return;
	dev->dcnt[EMU_DCNT_MTU_CLAMPED]++;
	emu_log_rl(&dev->rl[EMU_RL_MTU_CLAMPED], EMU_LOG_INFO,
		   "QP 0x%x of pid %d: path MTU %u above the active MTU, clamped to %u", qp->qpn,
		   (int)qp->obj.ctx->pid, 128u << a->path_mtu, 128u << dev->active_mtu);
	a->path_mtu = dev->active_mtu;
}

/*
 * May the client set a controlled Q_Key? Linux lets only a process with
 * CAP_NET_RAW do it (ib_uverbs modify_qp, unless the administrator allows
 * everyone): read from its effective capabilities.
 */
static bool may_use_controlled_qkey(const struct emu_ctx *ctx)
{
	char path[64], line[128];
	unsigned long long caps = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)ctx->pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &caps) == 1;
	fclose(f);
	return found && (caps >> 13 & 1); /* CAP_NET_RAW */
}

int emu_qp_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_modify_qp_req *r = req;
	const struct uroce_qp_attr *a = &r->attr;
	uint32_t mask = r->attr_mask, cur, next, xmask;
	struct emu_qp_open *op;
	struct emu_qp *qp = find_any_qp(ctx, r->handle, &op);
	struct xport_qp_attr xa;
	struct uroce_qp_attr saved, attr;
	int err;

	(void)rep;
	if (!qp)
		return -EINVAL;
	if (mask & ~(uint32_t)KNOWN_QP_ATTRS)
		return -EINVAL;
	mask = emu_qp_state_user_mask(qp->type, mask);
	cur = qp->state;
	if (mask & UROCE_QP_CUR_STATE) {
		/* The consumer's idea of the current state must be right. */
		if (a->cur_qp_state >= UROCE_QPS_COUNT || a->cur_qp_state != cur)
			return -EINVAL;
	}
	next = cur;
	if (mask & UROCE_QP_STATE) {
		if (a->qp_state >= UROCE_QPS_COUNT)
			return -EINVAL;
		next = a->qp_state;
	}
	err = emu_qp_state_check(qp->type, cur, next, mask);
	if (err) {
		emu_dbg("QP 0x%x: %s -> %s with mask 0x%x refused", qp->qpn, emu_qp_state_name(cur),
			emu_qp_state_name(next), mask);
		return err;
	}
	err = check_attr_values(qp, mask, a);
	if (err)
		return err;
	/* IBA 10.2.5: a consumer may not choose a controlled Q_Key (high bit
	 * set) unless privileged, or it could pose as a management agent. */
	if ((mask & UROCE_QP_QKEY) && (a->qkey & 0x80000000u) && !may_use_controlled_qkey(ctx))
		return -EPERM;
	attr = *a;
	clamp_path_mtu(qp, mask, &attr);
	a = &attr;
	/*
	 * The WQEs posted before this call come first, as a doorbell reaches
	 * an RNIC before a later modify: into SQD, the messages they start
	 * belong to the drain (IBA 10.3.1.2).
	 */
	if (cur == UROCE_QPS_RTS && next == UROCE_QPS_SQD)
		emu_dp_sq(qp);
	/* Attributes first: the engine may report an SQ drain at once. */
	saved = qp->attr;
	apply_attrs(qp, mask, a);
	xmask = to_xattr(qp, mask, a, &xa);
	err = xport_modify(&qp->x, &xa, xmask);
	if (err) {
		/* -ENOMEM for the responder resources: nothing changed. */
		qp->attr = saved;
		return err;
	}
	if (next != cur || next == UROCE_QPS_ERR)
		enter_state(qp, (enum uroce_qp_state)next);
	emu_dbg("QP 0x%x: %s -> %s", qp->qpn, emu_qp_state_name(cur), emu_qp_state_name(next));
	return 0;
}

int emu_qp_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_query_qp_req *r = req;
	struct emu_qp_open *op;
	struct emu_qp *qp = find_any_qp(ctx, r->handle, &op);
	struct uroce_query_qp_resp *o;
	struct xport_qp_attr xa;

	if (!qp)
		return -EINVAL;
	xport_query(&qp->x, &xa);
	o = EMU_REPLY(rep, struct uroce_query_qp_resp);
	o->attr = qp->attr;
	o->attr.qp_state = qp->state;
	o->attr.cur_qp_state = qp->state;
	o->attr.cap = qp->cap;
	/* The next PSNs, as the transport has them now. */
	o->attr.sq_psn = xa.sq_psn;
	o->attr.rq_psn = xa.rq_psn;
	/* Draining until the engine reported the drain (IBA 11.2.5.2). */
	o->attr.sq_draining = qp->state == UROCE_QPS_SQD && !qp->x.req.drained_told;
	o->init_cap = qp->cap;
	o->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int emu_qp_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_qp_open *op;
	struct emu_qp *qp = find_any_qp(ctx, r->handle, &op);

	(void)rep;
	if (!qp)
		return -EINVAL;
	if (op)
		emu_qp_open_free(op); /* the QP stays with its owner */
	else
		emu_qp_free(qp);
	return 0;
}

void emu_qp_free(struct emu_qp *qp)
{
	struct emu_dev *dev = qp->obj.ctx->dev;

	/* An XRC target QP lives while any context has a handle of it. */
	if (qp->type == UROCE_QPT_XRC_RECV && emu_xrc_tgt_pass(qp))
		return;
	emu_mcast_detach_all(qp);
	emu_list_del(&qp->flush_link);
	/* Type 2 windows bound to it die with it (their R_Keys name it). */
	emu_mw_unbind_all(qp->obj.ctx, qp, NULL);
	/* Timer and run list first: nothing may reach the engine's QP
	 * after this. */
	emu_dp_qp_release(qp);
	xport_qp_fini(&qp->x);
	emu_htab_remove(&dev->qpns, &qp->qpn_node);
	qp_hold(qp, -1);
	if (qp->xrcd) {
		emu_list_del(&qp->xrc_link);
		qp->xrcd->obj.usecnt--;
		emu_xrcd_dom_put(qp->xrcd->dom);
	}
	emu_ring_destroy(&qp->sq);
	emu_ring_destroy(&qp->rq);
	emu_dev_obj_del(&qp->obj);
	free(qp);
}

/* ibv_attach_mcast / ibv_detach_mcast: the data path keeps the groups
 * (dp/mcast.c), and its errors are the kernel's (EINVAL, ENOMEM). */
int emu_qp_attach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_mcast_req *r = req;
	struct emu_qp *qp = find_qp(ctx, r->qp_handle);

	(void)rep;
	if (!qp)
		return -EINVAL;
	return emu_mcast_attach(qp, r->gid, r->lid);
}

int emu_qp_detach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_mcast_req *r = req;
	struct emu_qp *qp = find_qp(ctx, r->qp_handle);

	(void)rep;
	if (!qp)
		return -EINVAL;
	return emu_mcast_detach(qp, r->gid, r->lid);
}
