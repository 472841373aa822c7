/* SPDX-License-Identifier: MIT */
/*
 * Protection domains: allocation, use counting by the objects created in
 * them (MRs, QPs, SRQs, AHs), and release (EBUSY while in use, as the
 * kernel answers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "verbs.h"

int emu_pd_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	struct uroce_handle_resp *o;
	struct emu_pd *pd;

	(void)req;
	if (ctx->dev->counts.pd >= ctx->dev->lim.max_pd)
		return -ENOMEM;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	if (emu_dev_obj_add(ctx, &pd->obj, EMU_OBJ_PD)) {
		free(pd);
		return -ENOMEM;
	}
	o = EMU_REPLY(rep, struct uroce_handle_resp);
	o->handle = pd->obj.hnode.key;
	return 0;
}

int emu_pd_dealloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_PD);

	(void)rep;
	if (!obj)
		return -EINVAL;
	if (obj->usecnt)
		return -EBUSY;
	emu_pd_free(EMU_CONTAINER_OF(obj, struct emu_pd, obj));
	return 0;
}

void emu_pd_free(struct emu_pd *pd)
{
	emu_dev_obj_del(&pd->obj);
	free(pd);
}
