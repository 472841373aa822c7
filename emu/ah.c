/* SPDX-License-Identifier: MIT */
/*
 * Address handles: creation with the checks hardware applies to an address
 * vector (port, source GID index, static rate), and release. Both RoCE
 * style (GRH with a destination GID) and LID-only vectors are accepted, the
 * latter because unmodified tools such as ibv_ud_pingpong without -g and
 * qperf use them (ABI.md section 4).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "emu.h"

int emu_ah_check_attr(const struct emu_dev *dev, const struct uroce_ah_attr *a)
{
	(void)dev;
	if (a->port_num != UROCE_PORT_NUM)
		return -EINVAL;
	/* Only GID index 0 is populated. */
	if (a->is_global && a->sgid_index != 0)
		return -EINVAL;
	if (a->static_rate > 22) /* IBV_RATE_600_GBPS is the largest */
		return -EINVAL;
	return 0;
}

int emu_ah_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_create_ah_req *r = req;
	struct uroce_handle_resp *o;
	struct emu_obj *pdo;
	struct emu_ah *ah;

	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	if (!pdo || emu_ah_check_attr(ctx->dev, &r->attr))
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
