/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's hub: device and QP set-up, modify-QP hooks,
 * posting send WRs, the run/timer entry points that drive the requester,
 * responder and completer, scheduling, the move to the Error state with its
 * flushes, and the names of counters and enums. The protocol itself lives
 * in req.c (WQE to packets), resp.c (requests to memory), comp.c (responses
 * to completions) and recv.c (checks and queueing); the helpers they share
 * to build and send packets and to copy SGEs are in xmit.c. This file does
 * not own the daemon's QP object, rings or sockets; it is reached only
 * through the entry points declared in xport.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <wire/bth.h>
#include <wire/psn.h>
#include "xport_int.h"

static const char *const xport_drop_names[] = {
#define X_NAME(sym, name, doc) name,
    XPORT_DROP_LIST(X_NAME)
#undef X_NAME
};

static const char *const xport_cnt_names[] = {
#define X_NAME(sym, name, doc) name,
    XPORT_CNT_LIST(X_NAME)
#undef X_NAME
};

const char *xport_drop_name(unsigned reason)
{
	return reason < XPORT_DROP_COUNT ? xport_drop_names[reason] : "?";
}

const char *xport_cnt_name(unsigned cnt)
{
	return cnt < XPORT_CNT_COUNT ? xport_cnt_names[cnt] : "?";
}

const char *xport_wc_status_name(unsigned status)
{
	switch (status) {
#define X_CASE(sym, val, name) \
	case val:              \
		return name;
		UROCE_WC_STATUS_LIST(X_CASE)
#undef X_CASE
	}
	return "?";
}

const char *xport_qp_state_name(unsigned state)
{
	return uroce_qp_state_str(state);
}

const char *xport_wr_opcode_name(unsigned opcode)
{
	const struct uroce_wr_info *info = uroce_wr_info(opcode);

	return info ? info->name : "?";
}

uint32_t xport_mtu_bytes(unsigned mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

uint64_t xport_timeout_us(unsigned timeout)
{
	/* PROTOCOL.md 7: 4.096 us * 2^timeout; 0 means wait forever. */
	if (timeout == 0 || timeout > 31)
		return 0;
	return ((4096ull << timeout) + 999) / 1000;
}

void xport_dev_init(struct xport_dev *dev, const struct xport_ops *ops, void *ctx)
{
	memset(dev, 0, sizeof(*dev));
	dev->ops = ops;
	dev->ctx = ctx;
}

/*
 * Bytes of one send queue slot: the swqe up to the WR's SGE/inline tail,
 * then as much tail as the QP's WRs may use, rounded to the alignment of
 * the struct.
 */
static size_t sq_stride(uint32_t max_sge, uint32_t max_inline)
{
	size_t tail = xport_sq_data_bytes(max_sge, max_inline);
	size_t a = _Alignof(struct xport_swqe);

	return (offsetof(struct xport_swqe, wr) + offsetof(struct xport_wqe, sge) + tail + a - 1) /
	       a * a;
}

int xport_qp_init(struct xport_dev *dev, struct xport_qp *qp, const struct xport_qp_init *init)
{
	uint32_t cap = init->max_send_wr ? init->max_send_wr : 1, size = 1;
	bool dflt = !init->max_sge && !init->max_inline;
	uint32_t max_sge = dflt ? XPORT_MAX_SGE : init->max_sge;
	uint32_t max_inline = dflt ? XPORT_MAX_INLINE_BYTES : init->max_inline;

	if (!xport__reliable_type(init->type) && init->type != UROCE_QPT_UC &&
	    init->type != UROCE_QPT_UD)
		return -EINVAL;
	if (cap > (1u << 20) || max_sge > XPORT_MAX_SGE || max_inline > XPORT_MAX_INLINE_BYTES)
		return -EINVAL;
	while (size < cap)
		size <<= 1;
	memset(qp, 0, sizeof(*qp));
	qp->sq_stride = sq_stride(max_sge, max_inline);
	qp->max_sge = max_sge;
	qp->max_inline = max_inline;
	/*
	 * Not zeroed: a slot is written whole when a WR is posted into it
	 * and read only while it holds one, so the pages of a queue are
	 * touched only as deep as the QP uses it (thousands of QPs, most
	 * never filling their queues, in tens of MiB).
	 */
	qp->sq = malloc((size_t)size * qp->sq_stride);
	if (!qp->sq)
		return -ENOMEM;
	/* The responder resources come with max_dest_rd_atomic (xport_modify). */
	qp->dev = dev;
	qp->type = init->type;
	qp->qpn = init->qpn & WIRE_QPN_MASK;
	qp->sq_sig_all = init->sq_sig_all;
	qp->srq = init->srq;
	qp->sq_size = size;
	qp->sq_cap = cap;
	qp->sport = xport__udp_sport(qp->qpn);
	qp->dport = XPORT_ROCE_PORT;
	qp->attr.state = UROCE_QPS_RESET;
	qp->attr.pkey = WIRE_DEFAULT_PKEY;
	/* UD never gets a path MTU attribute: default to the largest. */
	qp->attr.path_mtu = init->type == UROCE_QPT_UD ? 5 : 3;
	qp->pmtu = xport_mtu_bytes(qp->attr.path_mtu);
	qp->attr.av.hop_limit = 64;
	xport__cc_reset(qp);
	return 0;
}

void xport_qp_fini(struct xport_qp *qp)
{
	if (qp->dev) {
		xport__flow_forget(qp);
		xport__resp_unlist_ack(qp);
	}
	free(qp->sq);
	free(qp->resp.res);
	xport__pktq_free(&qp->resp_q);
	xport__pktq_free(&qp->comp_q);
	xport__held_clear(qp);
	qp->sq = NULL;
	qp->resp.res = NULL;
}

uint32_t xport_sq_free(const struct xport_qp *qp)
{
	return qp->sq_cap - (qp->sq_tail - qp->comp.idx);
}

/* Forget every send WQE without completing it (RESET). */
static void xport_reset(struct xport_qp *qp)
{
	qp->sq_tail = 0;
	xport__req_reset(qp);
	xport__comp_reset(qp);
	xport__cc_reset(qp);
	xport__resp_reset(qp);
	qp->resp.has_wqe = false;
	qp->peer_sport = 0;
	xport__flow_forget(qp);
	xport__timer_update(qp);
}

/*
 * A responder resource ring of n entries (max_dest_rd_atomic), forgetting
 * the saved responses; the allocation only grows. 0 or -ENOMEM.
 */
static int xport_res_ring(struct xport_qp *qp, uint32_t n)
{
	if (n > qp->res_cap) {
		struct xport_res *r = realloc(qp->resp.res, n * sizeof(*r));

		if (!r)
			return -ENOMEM;
		qp->resp.res = r;
		qp->res_cap = n;
	}
	if (qp->resp.res)
		memset(qp->resp.res, 0, qp->res_cap * sizeof(*qp->resp.res));
	qp->resp.res_head = 0;
	qp->resp.stream = NULL;
	return 0;
}

static int xport_check_attr(const struct xport_qp_attr *a, uint32_t mask)
{
	if (mask & UROCE_QP_PATH_MTU && !xport_mtu_bytes(a->path_mtu))
		return -EINVAL;
	if (mask & UROCE_QP_TIMEOUT && a->timeout > 31)
		return -EINVAL;
	if (mask & UROCE_QP_RETRY_CNT && a->retry_cnt > 7)
		return -EINVAL;
	if (mask & UROCE_QP_RNR_RETRY && a->rnr_retry > 7)
		return -EINVAL;
	if (mask & UROCE_QP_MIN_RNR_TIMER && a->min_rnr_timer > 31)
		return -EINVAL;
	if (mask & UROCE_QP_MAX_QP_RD_ATOMIC && a->max_rd_atomic > XPORT_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & UROCE_QP_MAX_DEST_RD_ATOMIC && a->max_dest_rd_atomic > XPORT_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & UROCE_QP_STATE && a->state > UROCE_QPS_ERR)
		return -EINVAL;
	return 0;
}

int xport_modify(struct xport_qp *qp, const struct xport_qp_attr *a, uint32_t mask)
{
	uint32_t old = qp->attr.state;
	int rc = xport_check_attr(a, mask);

	if (rc)
		return rc;
	/* First, so that a failure leaves the QP as it was. */
	if (mask & UROCE_QP_MAX_DEST_RD_ATOMIC &&
	    a->max_dest_rd_atomic != qp->attr.max_dest_rd_atomic) {
		/* The ring changes size: forget saved responses. */
		rc = xport_res_ring(qp, a->max_dest_rd_atomic);
		if (rc)
			return rc;
		qp->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	}
	if (mask & UROCE_QP_ACCESS_FLAGS)
		qp->attr.access = a->access;
	if (mask & UROCE_QP_PKEY_INDEX) {
		qp->attr.pkey_index = a->pkey_index;
		qp->attr.pkey = a->pkey;
	}
	if (mask & UROCE_QP_QKEY)
		qp->attr.qkey = a->qkey;
	if (mask & UROCE_QP_AV) {
		/* Another path may be another peer: learn its port again. */
		if (memcmp(qp->attr.av.dgid, a->av.dgid, XPORT_GID_BYTES))
			qp->peer_sport = 0;
		qp->attr.av = a->av;
	}
	if (mask & UROCE_QP_PATH_MTU) {
		qp->attr.path_mtu = a->path_mtu;
		qp->pmtu = xport_mtu_bytes(a->path_mtu);
	}
	if (mask & UROCE_QP_TIMEOUT)
		qp->attr.timeout = a->timeout;
	if (mask & UROCE_QP_RETRY_CNT) {
		qp->attr.retry_cnt = a->retry_cnt;
		qp->comp.retry_left = a->retry_cnt;
	}
	if (mask & UROCE_QP_RNR_RETRY) {
		qp->attr.rnr_retry = a->rnr_retry;
		qp->comp.rnr_left = a->rnr_retry;
	}
	if (mask & UROCE_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = a->min_rnr_timer;
	if (mask & UROCE_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = a->max_rd_atomic;
	if (mask & UROCE_QP_DEST_QPN)
		qp->attr.dest_qpn = a->dest_qpn & WIRE_QPN_MASK;
	if (mask & UROCE_QP_RQ_PSN) {
		qp->attr.rq_psn = a->rq_psn & WIRE_PSN_MASK;
		qp->resp.psn = qp->attr.rq_psn;
	}
	if (mask & UROCE_QP_SQ_PSN) {
		qp->attr.sq_psn = a->sq_psn & WIRE_PSN_MASK;
		qp->req.psn = qp->attr.sq_psn;
		qp->req.hw_psn = qp->attr.sq_psn;
		qp->comp.psn = qp->attr.sq_psn;
	}
	if (!(mask & UROCE_QP_STATE))
		return 0;

	qp->attr.state = a->state;
	switch (a->state) {
	case UROCE_QPS_RESET:
		xport_reset(qp);
		break;
	case UROCE_QPS_ERR:
		if (old != UROCE_QPS_ERR) {
			qp->attr.state = old;
			/* Asked for by the application: flush, but no fatal event. */
			xport__flush(qp);
		}
		break;
	case UROCE_QPS_RTS:
		qp->req.drained_told = false;
		xport__req_run(qp);
		break;
	case UROCE_QPS_SQD:
		/* One report per move into SQD (SQD -> SQD only changes the path). */
		if (old != UROCE_QPS_SQD)
			qp->req.drained_told = false;
		/* Reports the drain at once when nothing is outstanding. */
		xport__req_run(qp);
		break;
	default:
		break;
	}
	return 0;
}

void xport_query(const struct xport_qp *qp, struct xport_qp_attr *attr)
{
	*attr = qp->attr;
	attr->sq_psn = qp->req.psn;
	attr->rq_psn = qp->resp.psn;
}

int xport_post_send(struct xport_qp *qp, const struct xport_wqe *wqe)
{
	int rc = xport_post_send_queue(qp, wqe);

	if (!rc)
		xport_post_send_run(qp);
	return rc;
}

void xport_post_send_run(struct xport_qp *qp)
{
	if (qp->attr.state != UROCE_QPS_RESET && qp->attr.state != UROCE_QPS_ERR)
		xport__req_run(qp);
}

int xport_post_send_queue(struct xport_qp *qp, const struct xport_wqe *wqe)
{
	struct xport_swqe *s;
	uint32_t status, length = 0;

	if (qp->attr.state == UROCE_QPS_RESET)
		return -EINVAL;
	if (qp->attr.state == UROCE_QPS_ERR) {
		struct uroce_cqe cqe = {
		    .wr_id = wqe->wr_id,
		    .status = UROCE_WC_WR_FLUSH_ERR,
		    .qp_num = qp->qpn,
		};

		qp->dev->ops->push_cqe(qp->dev->ctx, qp, false, &cqe);
		xport__count(qp, XPORT_CNT_SEND_CQE, 1);
		xport__count(qp, XPORT_CNT_FLUSHED, 1);
		return 0;
	}
	if (!xport_sq_free(qp))
		return -EAGAIN;
	s = xport__sq_at(qp, qp->sq_tail);
	memset(s, 0, qp->sq_stride);
	status = xport_check_wqe(qp->type, wqe, &length);
	/* The slot holds only what this QP's WRs may carry. A payload the
	 * net layer took from the WQE for its SGEs (UROCE_SEND_PREREAD) may
	 * use the SGEs' place too. */
	if (status == UROCE_WC_SUCCESS && wqe->flags & UROCE_SEND_INLINE &&
	    wqe->inline_len > (wqe->flags & UROCE_SEND_PREREAD
				   ? xport_sq_data_bytes(qp->max_sge, qp->max_inline)
				   : qp->max_inline))
		status = UROCE_WC_LOC_LEN_ERR;
	if (status == UROCE_WC_SUCCESS && !(wqe->flags & UROCE_SEND_INLINE) &&
	    wqe->num_sge > qp->max_sge)
		status = UROCE_WC_LOC_QP_OP_ERR;
	memcpy(&s->wr, wqe, offsetof(struct xport_wqe, sge));
	s->length = length;
	if (status != UROCE_WC_SUCCESS) {
		s->state = XPORT_WQE_ERROR;
		s->status = status;
		/* Do not carry what cannot be used. */
		s->wr.num_sge = 0;
		s->wr.inline_len = 0;
	} else {
		if (wqe->flags & UROCE_SEND_INLINE) {
			/* Inline: no SGEs, but a payload taken from them says how
			 * many it had (trace notes only: sge[] is not there). */
			s->wr.num_sge = wqe->flags & UROCE_SEND_PREREAD ? wqe->num_sge : 0;
			memcpy(s->wr.inline_data, wqe->inline_data, wqe->inline_len);
		} else {
			s->wr.inline_len = 0;
			memcpy(s->wr.sge, wqe->sge, wqe->num_sge * sizeof(wqe->sge[0]));
		}
		s->state = XPORT_WQE_POSTED;
	}
	qp->sq_tail++;
	return 0;
}

void xport__schedule(struct xport_qp *qp)
{
	if (qp->scheduled || !qp->dev->ops->schedule)
		return;
	qp->scheduled = true;
	qp->dev->ops->schedule(qp->dev->ctx, qp);
}

bool xport_run(struct xport_qp *qp)
{
	bool more;

	qp->scheduled = false;
	more = xport__resp_run(qp);
	xport__comp_run(qp);
	xport__req_run(qp);
	if (more)
		xport__schedule(qp);
	return more;
}

void xport__timer_update(struct xport_qp *qp)
{
	uint64_t a = qp->comp.retrans_deadline, b = qp->comp.rnr_deadline;
	uint64_t c = qp->resp.rnr_hold_until;
	uint64_t d = !a ? b : !b ? a : a < b ? a : b;

	if (c && (!d || c < d))
		d = c;

	if (d == qp->comp.armed)
		return;
	qp->comp.armed = d;
	qp->dev->ops->arm_timer(qp->dev->ctx, qp, d);
}

void xport_timeout(struct xport_qp *qp)
{
	/* The daemon's timer is no longer armed, whatever comes next. */
	qp->comp.armed = 0;
	if (qp->attr.state != UROCE_QPS_ERR && qp->attr.state != UROCE_QPS_RESET) {
		uint64_t now = qp->dev->ops->now_us(qp->dev->ctx);

		xport__comp_timeout(qp, now);
		/* A request that waited for a receive WQE in vain: the RNR NAK. */
		if (qp->resp.rnr_hold_until && now >= qp->resp.rnr_hold_until) {
			if (xport__resp_run(qp))
				xport__schedule(qp);
			/* Never a deadline in the past left armed (it would fire forever). */
			if (qp->resp.rnr_hold_until && now >= qp->resp.rnr_hold_until)
				qp->resp.rnr_hold_until = 0;
		}
	} else {
		qp->resp.rnr_hold_until = 0;
	}
	xport__timer_update(qp);
}

unsigned xport_flush_recv(struct xport_qp *qp)
{
	struct xport_recv_wqe w;
	unsigned n = 0;

	if (qp->srq || qp->attr.state != UROCE_QPS_ERR)
		return 0;
	while (qp->dev->ops->get_recv_wqe(qp->dev->ctx, qp, &w) == 0) {
		struct uroce_cqe cqe = {
		    .wr_id = w.wr_id,
		    .status = UROCE_WC_WR_FLUSH_ERR,
		    .opcode = UROCE_WC_RECV,
		    .qp_num = qp->qpn,
		};

		qp->dev->ops->push_cqe(qp->dev->ctx, qp, true, &cqe);
		xport__count(qp, XPORT_CNT_RECV_CQE, 1);
		xport__count(qp, XPORT_CNT_FLUSHED, 1);
		n++;
	}
	return n;
}

void xport__flush(struct xport_qp *qp)
{
	struct xport_dev *dev = qp->dev;

	qp->attr.state = UROCE_QPS_ERR;
	/* Every send WQE not yet completed, oldest first (PROTOCOL.md 7). */
	while (qp->comp.idx != qp->sq_tail) {
		struct xport_swqe *w = xport__sq_at(qp, qp->comp.idx);
		struct uroce_cqe cqe = {
		    .wr_id = w->wr.wr_id,
		    .status = UROCE_WC_WR_FLUSH_ERR,
		    .qp_num = qp->qpn,
		};

		dev->ops->push_cqe(dev->ctx, qp, false, &cqe);
		xport__count(qp, XPORT_CNT_SEND_CQE, 1);
		xport__count(qp, XPORT_CNT_FLUSHED, 1);
		qp->comp.idx++;
	}
	qp->req.idx = qp->comp.idx;
	qp->req.rd_atomic = 0;
	qp->req.need_retry = false;
	qp->req.wait_rnr = false;
	qp->comp.retrans_deadline = 0;
	qp->comp.iba_deadline = 0;
	qp->comp.rnr_deadline = 0;
	qp->resp.rnr_hold_until = 0; /* the request it held for goes with the queue */
	xport__resp_flush_wqe(qp, UROCE_WC_WR_FLUSH_ERR);
	qp->resp.stream = NULL;
	/* Queued packets are dropped with the QP's work (rxe drains its queues). */
	xport__pktq_clear(&qp->resp_q);
	xport__pktq_clear(&qp->comp_q);
	xport__held_clear(qp);
	xport_flush_recv(qp);
	xport__flow_forget(qp);
	xport__timer_update(qp);
}

void xport__error(struct xport_qp *qp)
{
	if (qp->attr.state == UROCE_QPS_ERR)
		return;
	xport__count(qp, XPORT_CNT_QP_ERROR, 1);
	xport__flush(qp);
	if (qp->dev->ops->qp_error)
		qp->dev->ops->qp_error(qp->dev->ctx, qp);
}
