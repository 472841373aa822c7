/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues: creation (a receive ring shared by the QPs that
 * name it), modify (arming the limit event, resizing into a new ring),
 * query, destruction (EBUSY while QPs use it), and the limit check the
 * responder calls after taking a WQE. An XRC SRQ (IBV_SRQT_XRC) belongs to
 * an XRC domain and has a CQ of its own; the XRC target QPs of its domain
 * reach it by its number (the XRCETH), so it is in dev->srqns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"

static struct emu_srq *find_srq(struct emu_ctx *ctx, uint32_t handle)
{
	struct emu_obj *obj = emu_dev_obj_find(ctx, handle, EMU_OBJ_SRQ);

	return obj ? EMU_CONTAINER_OF(obj, struct emu_srq, obj) : NULL;
}

int emu_srq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_create_srq_req *r = req;
	const struct emu_limits *lim = &ctx->dev->lim;
	struct uroce_create_srq_resp *o;
	struct emu_obj *pdo, *cqo = NULL;
	struct emu_xrcd *xrcd = NULL;
	struct emu_srq *srq;
	uint32_t entries, stride;
	int err, fd;

	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	if (!pdo)
		return -EINVAL;
	if (r->srq_type == UROCE_SRQT_XRC) {
		xrcd = emu_xrcd_find(ctx, r->xrcd_handle);
		cqo = emu_dev_obj_find(ctx, r->cq_handle, EMU_OBJ_CQ);
		if (!xrcd || !cqo)
			return -EINVAL;
	} else if (r->srq_type != UROCE_SRQT_BASIC) {
		return -EOPNOTSUPP; /* tag matching */
	}
	if (r->max_wr < 1 || r->max_wr > lim->max_srq_wr || r->max_sge > lim->max_srq_sge)
		return -EINVAL;
	entries = emu_pow2_roundup(r->max_wr);
	if (r->srq_limit > entries)
		return -EINVAL;
	if (ctx->dev->counts.srq >= lim->max_srq)
		return -ENOMEM;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	if (emu_dev_obj_add(ctx, &srq->obj, EMU_OBJ_SRQ)) {
		free(srq);
		return -ENOMEM;
	}
	do
		srq->srq_num = ctx->dev->next_srq_num++ & 0xffffff;
	while (!srq->srq_num || emu_dev_xrc_srq_by_num(ctx->dev, srq->srq_num));
	if (xrcd && emu_htab_insert(&ctx->dev->srqns, &srq->num_node, srq->srq_num)) {
		emu_dev_obj_del(&srq->obj);
		free(srq);
		return -ENOMEM;
	}
	stride = uroce_rq_stride(r->max_sge ? r->max_sge : 1);
	err = emu_ring_create(&srq->ring, UROCE_RING_SRQ, entries, stride, srq->obj.hnode.key,
			      srq->srq_num, &fd);
	if (err) {
		if (xrcd)
			emu_htab_remove(&ctx->dev->srqns, &srq->num_node);
		emu_dev_obj_del(&srq->obj);
		free(srq);
		return err;
	}
	srq->max_wr = entries;
	srq->max_sge = (stride - UROCE_RECV_WQE_BYTES) / (uint32_t)sizeof(struct uroce_sge);
	if (srq->max_sge > lim->max_srq_sge)
		srq->max_sge = lim->max_srq_sge;
	srq->ring.max_sge = srq->max_sge;
	srq->ring.hdr->max_sge = srq->max_sge;
	srq->srq_limit = r->srq_limit;
	srq->pd = EMU_CONTAINER_OF(pdo, struct emu_pd, obj);
	srq->pd->obj.usecnt++;
	if (xrcd) {
		srq->xrcd = xrcd;
		xrcd->obj.usecnt++;
		xrcd->dom->refs++;
		srq->cq = EMU_CONTAINER_OF(cqo, struct emu_cq, obj);
		srq->cq->obj.usecnt++;
	}

	o = EMU_REPLY(rep, struct uroce_create_srq_resp);
	o->handle = srq->obj.hnode.key;
	o->srq_num = srq->srq_num;
	o->max_wr = srq->max_wr;
	o->max_sge = srq->max_sge;
	o->ring_bytes = srq->ring.bytes;
	emu_reply_add_fd(rep, fd);
	return 0;
}

/*
 * Resize (IBV_SRQ_MAX_WR), as Linux rxe does: a new ring of the new size
 * (rounded up to a power of two) into which the WQEs posted and not yet
 * taken are copied at the same free-running indices, so they stay posted
 * in order. Nothing can be taken twice or lost across the swap: the daemon
 * takes SRQ WQEs only on this thread, so none is taken between the copy and
 * the swap, and a WQE taken before it is no longer in [cons, prod); the
 * shim holds the SRQ's producer lock from before the request until it has
 * mapped the new ring, so no WQE is posted into the old ring after the copy
 * read its producer index. *nr is the new ring, *fd its memfd.
 */
static int srq_resize(struct emu_srq *srq, uint32_t max_wr, struct emu_ring *nr, int *fd)
{
	struct emu_ring *old = &srq->ring;
	int64_t pending = emu_ring_pending(old);
	uint32_t prod;
	int err;

	if (pending < 0)
		return -EINVAL; /* the producer index is garbage */
	/* What is posted must fit (rxe_queue_resize). */
	if ((uint64_t)pending > max_wr)
		return -EINVAL;
	prod = old->cons + (uint32_t)pending;
	err = emu_ring_create(nr, UROCE_RING_SRQ, emu_pow2_roundup(max_wr), old->stride,
			      srq->obj.hnode.key, srq->srq_num, fd);
	if (err)
		return err;
	for (uint32_t i = old->cons; i != prod; i++)
		memcpy(uroce_ring_entry(nr->hdr, nr->entries, nr->stride, i),
		       uroce_ring_entry(old->hdr, old->entries, old->stride, i), old->stride);
	nr->max_sge = old->max_sge;
	nr->hdr->max_sge = old->max_sge;
	nr->cons = old->cons;
	nr->hdr->cons = old->cons;
	uroce_store_release(&nr->hdr->prod, prod);
	return 0;
}

int emu_srq_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_modify_srq_req *r = req;
	struct emu_srq *srq = find_srq(ctx, r->handle);
	const struct emu_limits *lim = &ctx->dev->lim;
	struct uroce_modify_srq_resp *o;
	uint32_t max_wr, limit;
	struct emu_ring nr;
	int err, fd = -1;

	if (!srq)
		return -EINVAL;
	if (!r->attr_mask || (r->attr_mask & ~(uint32_t)(UROCE_SRQ_MAX_WR | UROCE_SRQ_LIMIT)))
		return -EINVAL;
	max_wr = srq->max_wr;
	limit = r->attr_mask & UROCE_SRQ_LIMIT ? r->srq_limit : srq->srq_limit;
	if (r->attr_mask & UROCE_SRQ_MAX_WR) {
		/* rxe_srq_chk_attr: 1..max_srq_wr, and not below an armed limit. */
		if (r->max_wr < 1 || r->max_wr > lim->max_srq_wr || limit > r->max_wr)
			return -EINVAL;
		max_wr = emu_pow2_roundup(r->max_wr);
	}
	if (limit > max_wr)
		return -EINVAL;
	if (r->attr_mask & UROCE_SRQ_MAX_WR) {
		err = srq_resize(srq, r->max_wr, &nr, &fd);
		if (err)
			return err;
		emu_ring_destroy(&srq->ring);
		srq->ring = nr;
		srq->max_wr = nr.entries;
	}
	srq->srq_limit = limit;
	o = EMU_REPLY(rep, struct uroce_modify_srq_resp);
	o->max_wr = srq->max_wr;
	if (r->attr_mask & UROCE_SRQ_MAX_WR) {
		o->ring_bytes = srq->ring.bytes;
		emu_reply_add_fd(rep, fd);
	}
	return 0;
}

int emu_srq_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_srq *srq = find_srq(ctx, r->handle);
	struct uroce_query_srq_resp *o;

	if (!srq)
		return -EINVAL;
	o = EMU_REPLY(rep, struct uroce_query_srq_resp);
	o->max_wr = srq->max_wr;
	o->max_sge = srq->max_sge;
	o->srq_limit = srq->srq_limit;
	return 0;
}

int emu_srq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_srq *srq = find_srq(ctx, r->handle);

	(void)rep;
	if (!srq)
		return -EINVAL;
	if (srq->obj.usecnt)
		return -EBUSY;
	emu_srq_free(srq);
	return 0;
}

void emu_srq_free(struct emu_srq *srq)
{
	if (srq->xrcd) {
		/* No target QP of the domain may still take from it. */
		emu_xrc_srq_gone(srq);
		emu_htab_remove(&srq->obj.ctx->dev->srqns, &srq->num_node);
		srq->cq->obj.usecnt--;
		srq->xrcd->obj.usecnt--;
		emu_xrcd_dom_put(srq->xrcd->dom);
	}
	srq->pd->obj.usecnt--;
	emu_ring_destroy(&srq->ring);
	emu_dev_obj_del(&srq->obj);
	free(srq);
}
