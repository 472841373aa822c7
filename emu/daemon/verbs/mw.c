/* SPDX-License-Identifier: MIT */
/*
 * Memory windows (IBA 10.6.7): allocation in a PD (type 1, valid at once
 * and bound later by ibv_bind_mw; type 2, free until a BIND_MW work request
 * binds it to a QP), with an R_Key whose index shares the MR index space,
 * and deallocation, which unbinds the window: its R_Key is dead from then
 * on. Binding and invalidation are work requests the data path executes
 * (dp/mw.c); this file only owns the objects' lifetimes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "verbs.h"

int emu_mw_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_alloc_mw_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct uroce_alloc_mw_resp *o;
	struct emu_obj *pdo;
	struct emu_mw *mw;

	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	if (!pdo)
		return -EINVAL;
	/* IBV_MW_TYPE_1 and IBV_MW_TYPE_2 (2B: bound to a QP) only. */
	if (r->type != 1 && r->type != 2)
		return -EINVAL;
	if (dev->counts.mw >= dev->lim.max_mw)
		return -ENOMEM;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	if (emu_mr_new_key(dev, &mw->rkey) ||
	    emu_htab_insert(&dev->mw_keys, &mw->key_node, mw->rkey >> 8)) {
		free(mw);
		return -ENOMEM;
	}
	if (emu_dev_obj_add(ctx, &mw->obj, EMU_OBJ_MW)) {
		emu_htab_remove(&dev->mw_keys, &mw->key_node);
		free(mw);
		return -ENOMEM;
	}
	mw->type = r->type;
	mw->pd = EMU_CONTAINER_OF(pdo, struct emu_pd, obj);
	mw->pd->obj.usecnt++;
	emu_mw_unbind(mw); /* the state of a new window: type 1 valid, type 2 free */

	o = EMU_REPLY(rep, struct uroce_alloc_mw_resp);
	o->handle = mw->obj.hnode.key;
	o->rkey = mw->rkey;
	return 0;
}

int emu_mw_dealloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_MW);

	(void)rep;
	if (!obj)
		return -EINVAL;
	emu_mw_free(EMU_CONTAINER_OF(obj, struct emu_mw, obj));
	return 0;
}

void emu_mw_free(struct emu_mw *mw)
{
	struct emu_dev *dev = mw->obj.ctx->dev;

	emu_mw_unbind(mw);
	emu_htab_remove(&dev->mw_keys, &mw->key_node);
	mw->pd->obj.usecnt--;
	emu_dev_obj_del(&mw->obj);
	free(mw);
}
