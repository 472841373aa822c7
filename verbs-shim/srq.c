/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues: ibv_create_srq and ibv_create_srq_ex (basic and
 * XRC SRQs; tag matching is not offered), modify, query, destroy, SRQ
 * numbers (what an XRC sender puts in its XRCETH), and ibv_post_srq_recv
 * into the shared ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "shim.h"

/* An SRQ; xrcd and cq only for an XRC SRQ (both of this context). */
static struct ibv_srq *create_srq(struct ibv_context *context, struct ibv_pd *pd, void *srq_context,
				  struct ibv_srq_attr *attr, struct ibv_xrcd *xrcd,
				  struct ibv_cq *cq)
{
	struct shim_context *c = shim_ctx(context);
	struct uroce_create_srq_req req = {.hdr.op = UROCE_OP_CREATE_SRQ};
	struct uroce_create_srq_resp resp;
	struct shim_srq *srq;
	int fd, nfds, err;

	if (!pd || pd->context != context)
		return shim_fail_null(-EINVAL);
	if (xrcd) {
		if (xrcd->context != context || !cq || cq->context != context)
			return shim_fail_null(-EINVAL);
		req.srq_type = UROCE_SRQT_XRC;
		req.xrcd_handle = shim_xrcd(xrcd)->handle;
		req.cq_handle = cq->handle;
	}
	req.pd_handle = pd->handle;
	req.max_wr = attr->max_wr;
	req.max_sge = attr->max_sge;
	req.srq_limit = attr->srq_limit;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return shim_fail_null(-ENOMEM);
	err = shim_call(c, &req, sizeof(req), &resp, sizeof(resp), &fd, 1, &nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (err) {
		free(srq);
		return shim_fail_null(err);
	}
	err = shim_wq_map(&srq->wq, fd, resp.ring_bytes);
	if (!err)
		err = shim_obj_add(c, resp.handle, SHIM_OBJ_SRQ, srq);
	if (err) {
		shim_wq_unmap(&srq->wq);
		shim_call_simple(c, UROCE_OP_DESTROY_SRQ, resp.handle);
		free(srq);
		return shim_fail_null(err);
	}
	srq->srq_num = resp.srq_num;
	srq->srq.context = context;
	srq->srq.srq_context = srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = resp.handle;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	return &srq->srq;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	return create_srq(pd->context, pd, srq_init_attr->srq_context, &srq_init_attr->attr, NULL,
			  NULL);
}

struct ibv_srq *shim_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;

	enum ibv_srq_type type =
	    attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ? attr->srq_type : IBV_SRQT_BASIC;

	if (attr->comp_mask & ~known)
		return shim_fail_null(-EINVAL);
	if (type == IBV_SRQT_TM || (attr->comp_mask & IBV_SRQ_INIT_ATTR_TM))
		return shim_fail_null(-EOPNOTSUPP); /* no tag matching */
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)
		return shim_fail_null(-EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD))
		return shim_fail_null(-EINVAL);
	/* An XRC SRQ needs its domain and its CQ (rdma-core ibv_cmd_create_srq_ex). */
	if (type == IBV_SRQT_XRC && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
				     !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))
		return shim_fail_null(-EINVAL);
	return create_srq(context, attr->pd, attr->srq_context, &attr->attr,
			  type == IBV_SRQT_XRC ? attr->xrcd : NULL,
			  type == IBV_SRQT_XRC ? attr->cq : NULL);
}

/*
 * A resize (IBV_SRQ_MAX_WR) moves the SRQ to a new ring that the daemon
 * fills with the WQEs posted and not yet taken (emu/daemon/verbs/srq.c).
 * The producer lock is held from before the request until the new ring is
 * in place, so that no receive is posted into the old ring after the daemon
 * copied it (it would be lost) and none is copied that a post could still
 * rewrite; posting threads wait for the round trip. The daemon takes WQEs
 * and swaps rings on one thread, so none is taken twice.
 */
int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	struct shim_srq *srq = shim_srq(ibsrq);
	struct shim_wq *wq = &srq->wq;
	struct uroce_modify_srq_req req = {.hdr.op = UROCE_OP_MODIFY_SRQ,
					   .handle = ibsrq->handle,
					   .attr_mask = (uint32_t)srq_attr_mask,
					   .max_wr = srq_attr->max_wr,
					   .srq_limit = srq_attr->srq_limit};
	struct uroce_modify_srq_resp resp;
	struct uroce_ring_hdr *h;
	bool resize = srq_attr_mask & IBV_SRQ_MAX_WR;
	int fd = -1, nfds = 0, err;

	if (!resize)
		return -shim_call(shim_ctx(ibsrq->context), &req, sizeof(req), &resp, sizeof(resp),
				  NULL, 0, NULL);
	pthread_spin_lock(&wq->lock);
	err = shim_call(shim_ctx(ibsrq->context), &req, sizeof(req), &resp, sizeof(resp), &fd, 1,
			&nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (err)
		goto out_unlock;
	h = shim_map_ring(fd, resp.ring_bytes);
	if (!h || h->magic != UROCE_RING_MAGIC || h->kind != UROCE_RING_SRQ ||
	    h->stride != wq->stride || h->prod != wq->prod) {
		/* The daemon already reads the new ring: posting into the old
		 * one would lose receives, so this SRQ takes no more (as an
		 * SRQ whose resize failed on hardware, it is unusable). */
		err = h ? -EPROTO : -errno;
		if (h)
			munmap(h, resp.ring_bytes);
		wq->max_sge = 0;
		wq->entries = 0;
		goto out_unlock;
	}
	munmap(wq->ring, wq->bytes);
	wq->ring = h;
	wq->bytes = resp.ring_bytes;
	wq->entries = h->entries;
	/* Ask the daemon to look: the moved WQEs may be waited for. */
	shim_doorbell(shim_ctx(ibsrq->context));
out_unlock:
	pthread_spin_unlock(&wq->lock);
	return -err;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	struct uroce_handle_req req = {.hdr.op = UROCE_OP_QUERY_SRQ, .handle = srq->handle};
	struct uroce_query_srq_resp resp;
	int err;

	err = shim_call(shim_ctx(srq->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0,
			NULL);
	if (err)
		return -err;
	srq_attr->max_wr = resp.max_wr;
	srq_attr->max_sge = resp.max_sge;
	srq_attr->srq_limit = resp.srq_limit;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shim_srq *srq = shim_srq(ibsrq);
	struct shim_context *c = shim_ctx(ibsrq->context);
	int err;

	err = shim_call_simple(c, UROCE_OP_DESTROY_SRQ, ibsrq->handle);
	if (err)
		return -err;
	shim_obj_del(c, ibsrq->handle);
	pthread_mutex_lock(&ibsrq->mutex);
	while (ibsrq->events_completed != srq->events_reported)
		pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
	pthread_mutex_unlock(&ibsrq->mutex);
	shim_wq_unmap(&srq->wq);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(srq);
	return 0;
}

int shim_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = shim_srq(srq)->srq_num;
	return 0;
}

int shim_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return shim_post_recv_ring(shim_ctx(srq->context), &shim_srq(srq)->wq, wr, bad_wr);
}
