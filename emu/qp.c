/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: creation (capabilities checked against the device limits,
 * send and receive rings handed out), modification through the state
 * machine of qp_state.c with the attribute value checks hardware applies,
 * query, destruction, multicast attachment, and the control-path duty of
 * flushing: a QP in the error state completes every outstanding and every
 * newly posted WQE with IBV_WC_WR_FLUSH_ERR (IBA 10.3.1.10, C10-30). The
 * protocol engine (requester/responder/completer) is not here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu.h"

#define PSN_MASK 0xffffffu
#define QPN_MASK 0xffffffu

#define KNOWN_QP_ATTRS                                                                          \
	(UROCE_QP_STATE | UROCE_QP_CUR_STATE | UROCE_QP_EN_SQD_ASYNC_NOTIFY |                   \
	 UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_QKEY |          \
	 UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |              \
	 UROCE_QP_RNR_RETRY | UROCE_QP_RQ_PSN | UROCE_QP_MAX_QP_RD_ATOMIC | UROCE_QP_ALT_PATH | \
	 UROCE_QP_MIN_RNR_TIMER | UROCE_QP_SQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC |               \
	 UROCE_QP_PATH_MIG_STATE | UROCE_QP_CAP | UROCE_QP_DEST_QPN | UROCE_QP_RATE_LIMIT)

#define QP_ACCESS_FLAGS                                                                    \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_MW_BIND)

static struct emu_qp *find_qp(struct emu_ctx *ctx, uint32_t handle)
{
	struct emu_obj *obj = emu_dev_obj_find(ctx, handle, EMU_OBJ_QP);

	return obj ? EMU_CONTAINER_OF(obj, struct emu_qp, obj) : NULL;
}

struct emu_qp *emu_qp_by_qpn(struct emu_dev *dev, uint32_t qpn)
{
	struct emu_hnode *n = emu_htab_find(&dev->qpns, qpn);

	return n ? EMU_CONTAINER_OF(n, struct emu_qp, qpn_node) : NULL;
}

static int alloc_qpn(struct emu_dev *dev, struct emu_qp *qp)
{
	uint32_t qpn;
	uint32_t tries = 0;

	do {
		qpn = dev->next_qpn++ & QPN_MASK;
		if (dev->next_qpn > QPN_MASK - 1) /* 0xffffff is multicast */
			dev->next_qpn = 0x11;
		if (++tries > QPN_MASK)
			return -ENOMEM;
	} while (qpn < 2 || emu_htab_find(&dev->qpns, qpn));
	if (emu_htab_insert(&dev->qpns, &qp->qpn_node, qpn))
		return -ENOMEM;
	qp->qpn = qpn;
	return 0;
}

static int check_type(uint32_t type)
{
	switch (type) {
	case UROCE_QPT_RC:
	case UROCE_QPT_UC:
	case UROCE_QPT_UD:
		return 0;
	case UROCE_QPT_RAW_PACKET:
	case UROCE_QPT_XRC_SEND:
	case UROCE_QPT_XRC_RECV:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

static void set_ring_state(struct emu_qp *qp)
{
	uroce_store_release(&qp->sq.hdr->qp_state, qp->state);
	if (qp->rq.hdr)
		uroce_store_release(&qp->rq.hdr->qp_state, qp->state);
}

int emu_qp_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_create_qp_req *r = req;
	const struct emu_limits *lim = &ctx->dev->lim;
	struct emu_dev *dev = ctx->dev;
	struct emu_obj *pdo, *scq, *rcq, *srqo = NULL;
	struct uroce_create_qp_resp *o;
	uint32_t sq_entries, sq_stride, rq_entries, rq_stride, data;
	int err, sq_fd = -1, rq_fd = -1;
	struct emu_qp *qp;

	err = check_type(r->qp_type);
	if (err)
		return err;
	if (r->create_flags)
		return -EOPNOTSUPP;
	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	scq = emu_dev_obj_find(ctx, r->send_cq_handle, EMU_OBJ_CQ);
	rcq = emu_dev_obj_find(ctx, r->recv_cq_handle, EMU_OBJ_CQ);
	if (!pdo || !scq || !rcq)
		return -EINVAL;
	if (r->srq_handle) {
		srqo = emu_dev_obj_find(ctx, r->srq_handle, EMU_OBJ_SRQ);
		if (!srqo)
			return -EINVAL;
	}
	if (r->cap.max_send_wr > lim->max_qp_wr || r->cap.max_send_sge > lim->max_sge ||
	    r->cap.max_inline_data > lim->max_inline_data)
		return -EINVAL;
	if (!srqo && (r->cap.max_recv_wr > lim->max_qp_wr || r->cap.max_recv_sge > lim->max_sge))
		return -EINVAL;
	if (dev->counts.qp >= lim->max_qp)
		return -ENOMEM;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	emu_list_init(&qp->flush_link);
	emu_list_init(&qp->mcast);
	if (emu_dev_obj_add(ctx, &qp->obj, EMU_OBJ_QP))
		goto err_free;
	if (alloc_qpn(dev, qp))
		goto err_obj;

	sq_entries = emu_pow2_roundup(r->cap.max_send_wr ? r->cap.max_send_wr : 1);
	sq_stride =
	    uroce_sq_stride(r->cap.max_send_sge ? r->cap.max_send_sge : 1, r->cap.max_inline_data);
	err = emu_ring_create(&qp->sq, UROCE_RING_SQ, sq_entries, sq_stride, qp->obj.hnode.key,
			      qp->qpn, &sq_fd);
	if (err)
		goto err_qpn;
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

	if (!srqo) {
		rq_entries = emu_pow2_roundup(r->cap.max_recv_wr ? r->cap.max_recv_wr : 1);
		rq_stride = uroce_rq_stride(r->cap.max_recv_sge ? r->cap.max_recv_sge : 1);
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

	qp->pd = EMU_CONTAINER_OF(pdo, struct emu_pd, obj);
	qp->send_cq = EMU_CONTAINER_OF(scq, struct emu_cq, obj);
	qp->recv_cq = EMU_CONTAINER_OF(rcq, struct emu_cq, obj);
	qp->srq = srqo ? EMU_CONTAINER_OF(srqo, struct emu_srq, obj) : NULL;
	qp->pd->obj.usecnt++;
	qp->send_cq->obj.usecnt++;
	qp->recv_cq->obj.usecnt++;
	if (qp->srq)
		qp->srq->obj.usecnt++;
	qp->type = r->qp_type;
	qp->sq_sig_all = !!r->sq_sig_all;
	qp->state = UROCE_QPS_RESET;
	set_ring_state(qp);

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

err_sq:
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
	if ((mask & UROCE_QP_AV) && emu_ah_check_attr(dev, &a->ah_attr))
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

static void enter_state(struct emu_qp *qp, enum uroce_qp_state next)
{
	enum uroce_qp_state prev = qp->state;
	struct emu_ctx *ctx = qp->obj.ctx;

	qp->state = next;
	set_ring_state(qp);
	if (next != UROCE_QPS_ERR)
		emu_list_del(&qp->flush_link);

	switch (next) {
	case UROCE_QPS_RESET:
		/* IBA 10.3.1.1: the work queues are emptied, no completions. */
		emu_ring_drain(&qp->sq);
		if (qp->rq.hdr)
			emu_ring_drain(&qp->rq);
		qp->last_wqe_sent = 0;
		break;
	case UROCE_QPS_ERR:
		if (prev != UROCE_QPS_ERR)
			emu_list_add_tail(&ctx->dev->flush_qps, &qp->flush_link);
		emu_qp_flush(qp);
		/* IBA 11.6.3.1: QPs on an SRQ report that no more WQEs
		 * will be taken from it. */
		if (qp->srq && !qp->last_wqe_sent) {
			qp->last_wqe_sent = 1;
			emu_ctx_async_event(ctx, UROCE_EVENT_QP_LAST_WQE_REACHED,
					    qp->obj.hnode.key);
		}
		break;
	case UROCE_QPS_SQD:
		/* Nothing is in flight on the wire without the transport's
		 * outstanding WQEs: the SQ is drained at once. */
		if (prev == UROCE_QPS_RTS && qp->attr.en_sqd_async_notify)
			emu_ctx_async_event(ctx, UROCE_EVENT_SQ_DRAINED, qp->obj.hnode.key);
		break;
	default:
		break;
	}
}

int emu_qp_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_modify_qp_req *r = req;
	const struct uroce_qp_attr *a = &r->attr;
	uint32_t mask = r->attr_mask, cur, next;
	struct emu_qp *qp = find_qp(ctx, r->handle);
	int err;

	(void)rep;
	if (!qp)
		return -EINVAL;
	if (mask & ~(uint32_t)KNOWN_QP_ATTRS)
		return -EINVAL;
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
	apply_attrs(qp, mask, a);
	if (next != cur || next == UROCE_QPS_ERR)
		enter_state(qp, (enum uroce_qp_state)next);
	emu_dbg("QP 0x%x: %s -> %s", qp->qpn, emu_qp_state_name(cur), emu_qp_state_name(next));
	return 0;
}

int emu_qp_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_query_qp_req *r = req;
	struct emu_qp *qp = find_qp(ctx, r->handle);
	struct uroce_query_qp_resp *o;

	if (!qp)
		return -EINVAL;
	o = EMU_REPLY(rep, struct uroce_query_qp_resp);
	o->attr = qp->attr;
	o->attr.qp_state = qp->state;
	o->attr.cur_qp_state = qp->state;
	o->attr.cap = qp->cap;
	o->attr.sq_draining = 0;
	o->init_cap = qp->cap;
	o->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int emu_qp_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_qp *qp = find_qp(ctx, r->handle);

	(void)rep;
	if (!qp)
		return -EINVAL;
	emu_qp_free(qp);
	return 0;
}

void emu_qp_free(struct emu_qp *qp)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &qp->mcast)
	{
		emu_list_del(pos);
		free(EMU_CONTAINER_OF(pos, struct emu_mcast, link));
	}
	emu_list_del(&qp->flush_link);
	emu_htab_remove(&dev->qpns, &qp->qpn_node);
	qp->pd->obj.usecnt--;
	qp->send_cq->obj.usecnt--;
	qp->recv_cq->obj.usecnt--;
	if (qp->srq)
		qp->srq->obj.usecnt--;
	emu_ring_destroy(&qp->sq);
	emu_ring_destroy(&qp->rq);
	emu_dev_obj_del(&qp->obj);
	free(qp);
}

static uint32_t wc_opcode_of(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case UROCE_WR_RDMA_WRITE:
	case UROCE_WR_RDMA_WRITE_WITH_IMM:
		return UROCE_WC_RDMA_WRITE;
	case UROCE_WR_RDMA_READ:
		return UROCE_WC_RDMA_READ;
	case UROCE_WR_ATOMIC_CMP_AND_SWP:
		return UROCE_WC_COMP_SWAP;
	case UROCE_WR_ATOMIC_FETCH_AND_ADD:
		return UROCE_WC_FETCH_ADD;
	case UROCE_WR_LOCAL_INV:
		return UROCE_WC_LOCAL_INV;
	case UROCE_WR_BIND_MW:
		return UROCE_WC_BIND_MW;
	default:
		return UROCE_WC_SEND;
	}
}

/* Complete every published WQE of one ring with WR_FLUSH_ERR. Error
 * completions are generated for unsignaled WQEs too (IBA 10.8.3). */
static unsigned flush_ring(struct emu_qp *qp, struct emu_ring *r, struct emu_cq *cq, int is_send)
{
	int64_t n = emu_ring_pending(r);
	unsigned done = 0;

	if (n < 0) {
		emu_warn("QP 0x%x: %s producer index is corrupt, dropping "
			 "the queue",
			 qp->qpn, is_send ? "SQ" : "RQ");
		emu_ring_drain(r);
		return 0;
	}
	for (; n > 0; n--) {
		const void *e = uroce_ring_entry(r->hdr, r->entries, r->stride, r->cons);
		struct uroce_cqe cqe = {.status = UROCE_WC_WR_FLUSH_ERR, .qp_num = qp->qpn};

		if (is_send) {
			struct uroce_send_wqe w;

			memcpy(&w, e, sizeof(w));
			cqe.wr_id = w.wr_id;
			cqe.opcode = wc_opcode_of(w.opcode);
		} else {
			struct uroce_recv_wqe w;

			memcpy(&w, e, sizeof(w));
			cqe.wr_id = w.wr_id;
			cqe.opcode = UROCE_WC_RECV;
		}
		/* A full CQ is a CQ error (reported by emu_cq_push); the
		 * WQE is gone either way. */
		emu_cq_push(cq, &cqe);
		emu_ring_consume(r);
		done++;
	}
	return done;
}

void emu_qp_flush(struct emu_qp *qp)
{
	flush_ring(qp, &qp->sq, qp->send_cq, 1);
	if (qp->rq.hdr)
		flush_ring(qp, &qp->rq, qp->recv_cq, 0);
}

unsigned emu_qp_flush_all(struct emu_dev *dev)
{
	struct emu_list *pos, *tmp;
	unsigned n = 0;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &dev->flush_qps)
	{
		struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, flush_link);

		n += flush_ring(qp, &qp->sq, qp->send_cq, 1);
		if (qp->rq.hdr)
			n += flush_ring(qp, &qp->rq, qp->recv_cq, 0);
	}
	return n;
}

void emu_qp_set_error(struct emu_qp *qp)
{
	if (qp->state != UROCE_QPS_ERR)
		enter_state(qp, UROCE_QPS_ERR);
}

static int is_mcast_gid(const uint8_t *gid)
{
	static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (gid[0] == 0xff)
		return 1;
	return !memcmp(gid, v4_prefix, 12) && (gid[12] & 0xf0) == 0xe0;
}

static struct emu_mcast *find_mcast(struct emu_qp *qp, const struct uroce_mcast_req *r)
{
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &qp->mcast)
	{
		struct emu_mcast *m = EMU_CONTAINER_OF(pos, struct emu_mcast, link);

		if (!memcmp(m->gid, r->gid, 16) && m->lid == r->lid)
			return m;
	}
	return NULL;
}

int emu_qp_attach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_mcast_req *r = req;
	struct emu_qp *qp = find_qp(ctx, r->qp_handle);
	struct emu_mcast *m;

	(void)rep;
	if (!qp || qp->type != UROCE_QPT_UD || !is_mcast_gid(r->gid))
		return -EINVAL;
	if (find_mcast(qp, r))
		return 0;
	if (qp->nmcast >= ctx->dev->lim.max_mcast_qp_attach)
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	memcpy(m->gid, r->gid, 16);
	m->lid = r->lid;
	emu_list_add_tail(&qp->mcast, &m->link);
	qp->nmcast++;
	return 0;
}

int emu_qp_detach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_mcast_req *r = req;
	struct emu_qp *qp = find_qp(ctx, r->qp_handle);
	struct emu_mcast *m;

	(void)rep;
	if (!qp)
		return -EINVAL;
	m = find_mcast(qp, r);
	if (!m)
		return -EINVAL;
	emu_list_del(&m->link);
	free(m);
	qp->nmcast--;
	return 0;
}
