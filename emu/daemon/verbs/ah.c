/* SPDX-License-Identifier: MIT */
/*
 * Address handles: creation with the checks a RoCE device applies to an
 * address vector (port, GRH present, source GID index, static rate), and
 * release. The same check guards a QP's primary path (modify with
 * IBV_QP_AV). On RoCE the destination is the GID, so a vector without a GRH
 * is refused with EINVAL, as the Linux core's rdma_check_ah_attr() does
 * for every RoCE port: tools run without a GID index (ibv_*_pingpong
 * without -g, qperf without -cm1) fail at address resolution here exactly
 * as they do on RoCE hardware.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "verbs.h"

int emu_ah_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_create_ah_req *r = req;
	struct uroce_handle_resp *o;
	struct emu_obj *pdo;
	struct emu_ah *ah;

	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	if (!pdo || emu_dev_check_ah(ctx->dev, &r->attr))
		return -EINVAL;
	if (ctx->dev->counts.ah >= ctx->dev->lim.max_ah)
		return -ENOMEM;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -ENOMEM;
	if (emu_dev_obj_add(ctx, &ah->obj, EMU_OBJ_AH)) {
		free(ah);
		return -ENOMEM;
	}
	ah->attr = r->attr;
	ah->pd = EMU_CONTAINER_OF(pdo, struct emu_pd, obj);
	ah->pd->obj.usecnt++;
	o = EMU_REPLY(rep, struct uroce_handle_resp);
	o->handle = ah->obj.hnode.key;
	return 0;
}

int emu_ah_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_AH);

	(void)rep;
	if (!obj)
		return -EINVAL;
	emu_ah_free(EMU_CONTAINER_OF(obj, struct emu_ah, obj));
	return 0;
}

void emu_ah_free(struct emu_ah *ah)
{
	ah->pd->obj.usecnt--;
	emu_dev_obj_del(&ah->obj);
	free(ah);
}
