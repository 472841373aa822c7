/* SPDX-License-Identifier: MIT */
/*
 * Protection domains; thread domains and parent domains; and XRC domains
 * (ibv_open_xrcd, ibv_close_xrcd): the daemon keeps one domain per file,
 * found by the inode of the descriptor given (verbs/xrcd.c), so processes
 * that open the same file share it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "shim.h"

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct uroce_msg_hdr req = {.op = UROCE_OP_ALLOC_PD};
	struct uroce_handle_resp resp;
	struct shim_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return shim_fail_null(-ENOMEM);
	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(pd);
		return shim_fail_null(err);
	}
	pd->pd.context = context;
	pd->pd.handle = resp.handle;
	return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct shim_pd *p = SHIM_CONTAINER_OF(pd, struct shim_pd, pd);
	int err;

	if (p->wraps) {
		__atomic_fetch_sub(&p->wraps->parents, 1, __ATOMIC_RELAXED);
		if (p->td)
			__atomic_fetch_sub(&p->td->parents, 1, __ATOMIC_RELAXED);
		free(p);
		return 0;
	}
	/* A PD that parent domains wrap is in use (as the kernel's usecnt). */
	if (__atomic_load_n(&p->parents, __ATOMIC_RELAXED))
		return EBUSY;
	err = shim_call_simple(shim_ctx(pd->context), UROCE_OP_DEALLOC_PD, pd->handle);
	if (err)
		return -err;
	free(p);
	return 0;
}

/*
 * Thread domains: a promise that the objects of a parent domain made with
 * this TD are used by one thread at a time. The shim's locks do not depend
 * on it, so a TD is an object with a use count and nothing more.
 */
struct ibv_td *shim_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct shim_td *td;

	if (!attr || attr->comp_mask)
		return shim_fail_null(-EINVAL);
	td = calloc(1, sizeof(*td));
	if (!td)
		return shim_fail_null(-ENOMEM);
	td->td.context = context;
	return &td->td;
}

int shim_dealloc_td(struct ibv_td *td)
{
	struct shim_td *t = SHIM_CONTAINER_OF(td, struct shim_td, td);

	if (__atomic_load_n(&t->parents, __ATOMIC_RELAXED))
		return EBUSY;
	free(t);
	return 0;
}

/*
 * Parent domains: a PD (and optionally a TD) under another ibv_pd, with
 * custom allocators a provider may use for the buffers of the QPs, CQs and
 * SRQs made with it. uroce's queue buffers are memory shared with the RNIC
 * (the daemon maps them), which no user allocator can provide, so the
 * allocators are accepted and not called: every resource type gets
 * uroce's own memory, as if each call had answered IBV_ALLOCATOR_USE_DEFAULT.
 */
struct ibv_pd *shim_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct shim_pd *p, *under;

	if (!attr || !attr->pd || attr->pd->context != context || (attr->comp_mask & ~known) ||
	    (attr->td && attr->td->context != context))
		return shim_fail_null(-EINVAL);
	under = SHIM_CONTAINER_OF(attr->pd, struct shim_pd, pd);
	if (under->wraps) /* a parent domain of a parent domain */
		return shim_fail_null(-EINVAL);
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free))
		return shim_fail_null(-EINVAL);
	p = calloc(1, sizeof(*p));
	if (!p)
		return shim_fail_null(-ENOMEM);
	p->pd.context = context;
	p->pd.handle = under->pd.handle;
	p->wraps = under;
	__atomic_fetch_add(&under->parents, 1, __ATOMIC_RELAXED);
	if (attr->td) {
		p->td = SHIM_CONTAINER_OF(attr->td, struct shim_td, td);
		__atomic_fetch_add(&p->td->parents, 1, __ATOMIC_RELAXED);
	}
	return &p->pd;
}

bool shim_pd_is_parent(const struct ibv_pd *pd)
{
	return SHIM_CONTAINER_OF(pd, const struct shim_pd, pd)->wraps != NULL;
}

struct ibv_xrcd *shim_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct uroce_open_xrcd_req req = {.hdr.op = UROCE_OP_OPEN_XRCD};
	struct uroce_handle_resp resp;
	struct shim_xrcd *x;
	int err;

	/* rdma-core's ibv_cmd_open_xrcd: unknown bits, then both attributes. */
	if (attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED)
		return shim_fail_null(-EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS))
		return shim_fail_null(-EINVAL);
	req.fd = attr->fd;
	req.oflags = (uint32_t)attr->oflags;
	x = calloc(1, sizeof(*x));
	if (!x)
		return shim_fail_null(-ENOMEM);
	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(x);
		return shim_fail_null(err);
	}
	x->xrcd.context = context;
	x->handle = resp.handle;
	return &x->xrcd;
}

int shim_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct shim_xrcd *x = shim_xrcd(xrcd);
	int err = shim_call_simple(shim_ctx(xrcd->context), UROCE_OP_CLOSE_XRCD, x->handle);

	if (err)
		return -err;
	free(x);
	return 0;
}
