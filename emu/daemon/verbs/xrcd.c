/* SPDX-License-Identifier: MIT */
/*
 * XRC domains and the sharing of XRC objects between contexts: opening and
 * closing a domain (ibv_open_xrcd, ibv_close_xrcd), opening another
 * context's XRC target QP (ibv_open_qp), and the lifetimes that sharing
 * brings. A domain opened through a file is one daemon object for every
 * process that opens that file, found by the file's inode as the kernel's
 * uverbs finds it: the daemon looks at the caller's descriptor through
 * /proc/<pid>/fd, so the shim sends only its number. A domain lives while
 * handles, XRC SRQs or target QPs refer to it; a target QP lives while any
 * handle of it does, passing from its creator's context to one that opened
 * it when the creator's handle goes. The XRC data path (the SRQ an XRCETH
 * names) is datapath.c's; XRC SRQs and QPs are made in srq.c and qp.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "verbs.h"

struct emu_xrcd *emu_xrcd_find(struct emu_ctx *ctx, uint32_t handle)
{
	struct emu_obj *obj = emu_dev_obj_find(ctx, handle, EMU_OBJ_XRCD);

	return obj ? EMU_CONTAINER_OF(obj, struct emu_xrcd, obj) : NULL;
}

static struct emu_xrcd_dom *dom_by_inode(struct emu_dev *dev, const struct stat *st)
{
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &dev->xrcd_doms)
	{
		struct emu_xrcd_dom *d = EMU_CONTAINER_OF(pos, struct emu_xrcd_dom, link);

		if (d->has_inode && d->st_dev == (uint64_t)st->st_dev &&
		    d->st_ino == (uint64_t)st->st_ino)
			return d;
	}
	return NULL;
}

void emu_xrcd_dom_put(struct emu_xrcd_dom *dom)
{
	if (--dom->refs)
		return;
	emu_list_del(&dom->link);
	free(dom);
}

int emu_xrcd_open(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_open_xrcd_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct emu_xrcd_dom *dom = NULL;
	struct uroce_handle_resp *o;
	struct emu_xrcd *x;
	struct stat st;
	bool fresh = false;

	if (r->oflags & ~(uint32_t)(O_CREAT | O_EXCL))
		return -EINVAL;
	if (r->fd != -1) {
		char path[64];

		if (r->fd < 0)
			return -EBADF;
		/* The caller's descriptor, as the kernel's fdget() sees it. */
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)ctx->pid, (int)r->fd);
		if (stat(path, &st))
			return -EBADF;
		dom = dom_by_inode(dev, &st);
		/* ib_uverbs_open_xrcd: no domain yet needs O_CREAT; one with O_EXCL exists. */
		if (!dom && !(r->oflags & O_CREAT))
			return -EAGAIN;
		if (dom && (r->oflags & O_EXCL))
			return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	if (!dom) {
		dom = calloc(1, sizeof(*dom));
		if (!dom) {
			free(x);
			return -ENOMEM;
		}
		fresh = true;
		emu_list_init(&dom->tgt_qps);
		if (r->fd != -1) {
			dom->has_inode = true;
			dom->st_dev = (uint64_t)st.st_dev;
			dom->st_ino = (uint64_t)st.st_ino;
		}
	}
	if (emu_dev_obj_add(ctx, &x->obj, EMU_OBJ_XRCD)) {
		if (fresh)
			free(dom);
		free(x);
		return -ENOMEM;
	}
	if (fresh)
		emu_list_add_tail(&dev->xrcd_doms, &dom->link);
	dom->refs++;
	x->dom = dom;
	o = EMU_REPLY(rep, struct uroce_handle_resp);
	o->handle = x->obj.hnode.key;
	return 0;
}

void emu_xrcd_free(struct emu_xrcd *x)
{
	emu_xrcd_dom_put(x->dom);
	emu_dev_obj_del(&x->obj);
	free(x);
}

int emu_xrcd_close(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_xrcd *x = emu_xrcd_find(ctx, r->handle);

	(void)rep;
	if (!x)
		return -EINVAL;
	/* SRQs and QPs made or opened through this handle hold it (uverbs: EBUSY). */
	if (x->obj.usecnt)
		return -EBUSY;
	emu_xrcd_free(x);
	return 0;
}

int emu_qp_open(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_open_qp_req *r = req;
	struct emu_xrcd *x = emu_xrcd_find(ctx, r->xrcd_handle);
	struct uroce_handle_resp *o;
	struct emu_qp_open *op;
	struct emu_qp *qp;

	if (!x || r->qp_type != UROCE_QPT_XRC_RECV)
		return -EINVAL;
	/* Only a target QP of the same domain can be opened (ib_open_qp). */
	qp = emu_dev_qp_by_qpn(ctx->dev, r->qpn & 0xffffffu);
	if (!qp || qp->type != UROCE_QPT_XRC_RECV || qp->xrcd->dom != x->dom)
		return -EINVAL;
	if (ctx->dev->counts.qp_open >= ctx->dev->lim.max_qp)
		return -ENOMEM;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	if (emu_dev_obj_add(ctx, &op->obj, EMU_OBJ_QP_OPEN)) {
		free(op);
		return -ENOMEM;
	}
	op->qp = qp;
	op->xrcd = x;
	x->obj.usecnt++;
	emu_list_add_tail(&qp->opens, &op->link);
	o = EMU_REPLY(rep, struct uroce_handle_resp);
	o->handle = op->obj.hnode.key;
	return 0;
}

void emu_qp_open_free(struct emu_qp_open *op)
{
	emu_list_del(&op->link);
	op->xrcd->obj.usecnt--;
	emu_dev_obj_del(&op->obj);
	free(op);
}

bool emu_xrc_tgt_pass(struct emu_qp *qp)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_qp_open *op;
	uint32_t handle;

	if (emu_list_empty(&qp->opens))
		return false;
	op = EMU_CONTAINER_OF(qp->opens.next, struct emu_qp_open, link);
	emu_list_del(&op->link);
	/* The opener's handle now names the QP itself, in the opener's context. */
	handle = op->obj.hnode.key;
	emu_htab_remove(&dev->handles, &op->obj.hnode);
	emu_list_del(&op->obj.link);
	dev->counts.qp_open--;
	emu_htab_remove(&dev->handles, &qp->obj.hnode);
	emu_list_del(&qp->obj.link);
	/* Two entries out, one in: the table cannot need to grow. */
	(void)emu_htab_insert(&dev->handles, &qp->obj.hnode, handle);
	qp->obj.ctx = op->obj.ctx;
	emu_list_add_tail(&qp->obj.ctx->objs[EMU_OBJ_QP], &qp->obj.link);
	/* Its domain handle is the opener's from now on (which it holds). */
	qp->xrcd->obj.usecnt--;
	qp->xrcd = op->xrcd;
	emu_info("XRC target QP 0x%x passes to context %u (pid %d): its creator's handle closed",
		 qp->qpn, qp->obj.ctx->handle, (int)qp->obj.ctx->pid);
	free(op);
	return true;
}

void emu_xrc_srq_gone(struct emu_srq *srq)
{
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &srq->xrcd->dom->tgt_qps)
	{
		struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, xrc_link);

		if (qp->srq != srq)
			continue;
		qp->srq = NULL;
		qp->pd = NULL;
		qp->recv_cq = NULL;
	}
}
