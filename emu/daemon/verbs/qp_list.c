/* SPDX-License-Identifier: MIT */
/*
 * The QP_LIST control operation (uapi.h), what `uroce qp` shows, as
 * `rdma resource show qp` does for a kernel device: every live QP of the
 * device with its peer, type and state, the transport's PSNs and retry
 * counts as they are now, its outstanding work, and the process that owns
 * it (pid and /proc/PID/comm). It reads the QP table and the engine's QP
 * state; it changes nothing. The owner's name and the paging of MRs and CQs
 * are in res_list.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs.h"

static uint32_t ring_used(const struct emu_ring *r)
{
	int64_t n;

	if (!r->hdr)
		return 0;
	n = (int64_t)(uint32_t)(uroce_load_acquire(&r->hdr->prod) - r->cons);
	return n > r->entries ? r->entries : (uint32_t)n;
}

static void fill_info(const struct emu_qp *qp, struct uroce_qp_info *i)
{
	const struct xport_qp *x = &qp->x;
	struct xport_qp_attr a;

	xport_query(x, &a);
	i->qpn = qp->qpn;
	i->dest_qpn = a.dest_qpn;
	i->qp_type = qp->type;
	i->qp_state = qp->state;
	i->sq_psn = a.sq_psn;
	i->rq_psn = a.rq_psn;
	/* Beyond xport_query: the completer's and responder's own state,
	 * public in xport.h for the daemon to read. */
	i->unacked_psn = x->comp.psn;
	i->msn = x->resp.msn;
	i->retry_left = x->comp.retry_left;
	i->rnr_left = x->comp.rnr_left;
	i->rd_atomic = x->req.rd_atomic;
	/* The SQ ring's consumer index moves when a WR completes. */
	i->sq_wrs = ring_used(&qp->sq);
	i->rq_wrs = ring_used(&qp->rq);
	i->max_send_wr = qp->cap.max_send_wr;
	i->max_recv_wr = qp->cap.max_recv_wr;
	i->retry_cnt = a.retry_cnt;
	i->rnr_retry = a.rnr_retry;
	i->timeout = a.timeout;
	i->min_rnr_timer = a.min_rnr_timer;
	i->path_mtu = a.path_mtu;
	i->max_rd_atomic = a.max_rd_atomic;
	i->max_dest_rd_atomic = a.max_dest_rd_atomic;
	i->has_srq = qp->srq != NULL;
	i->pid = (uint32_t)qp->obj.ctx->pid;
	i->ctx_handle = qp->obj.ctx->handle;
	emu_read_comm(qp->obj.ctx->pid, i->comm, sizeof(i->comm));
	if (qp->type != UROCE_QPT_UD)
		memcpy(i->dgid, a.av.dgid, sizeof(i->dgid));
}

/* The QP with the smallest number >= from (NULL: none). */
static struct emu_qp *next_qp(struct emu_dev *dev, uint32_t from)
{
	struct emu_qp *best = NULL;
	struct emu_list *c, *o;

	for (c = dev->ctxs.next; c != &dev->ctxs; c = c->next) {
		struct emu_ctx *ctx = EMU_CONTAINER_OF(c, struct emu_ctx, link);

		for (o = ctx->objs[EMU_OBJ_QP].next; o != &ctx->objs[EMU_OBJ_QP]; o = o->next) {
			struct emu_qp *qp = EMU_CONTAINER_OF(o, struct emu_qp, obj.link);

			if (qp->qpn >= from && (!best || qp->qpn < best->qpn))
				best = qp;
		}
	}
	return best;
}

int emu_qp_list(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_qp_list_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct uroce_qp_list_resp *o;
	struct emu_qp *qp;
	uint32_t from = r->qpn;

	if (r->flags & ~UROCE_QP_LIST_ONE)
		return -EINVAL;
	if (r->flags & UROCE_QP_LIST_ONE) {
		qp = r->qpn <= 0xffffffu ? emu_dev_qp_by_qpn(dev, r->qpn) : NULL;
		if (!qp)
			return -ENOENT;
		o = EMU_REPLY(rep, struct uroce_qp_list_resp);
		o->nqps = dev->counts.qp;
		fill_info(qp, &o->qps[o->count++]);
		return 0;
	}
	o = EMU_REPLY(rep, struct uroce_qp_list_resp);
	o->nqps = dev->counts.qp;
	while (o->count < UROCE_QP_LIST_MAX && (qp = next_qp(dev, from))) {
		fill_info(qp, &o->qps[o->count++]);
		from = qp->qpn + 1;
	}
	qp = o->count == UROCE_QP_LIST_MAX ? next_qp(dev, from) : NULL;
	o->next_qpn = qp ? qp->qpn : 0;
	return 0;
}
