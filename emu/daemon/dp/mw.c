/* SPDX-License-Identifier: MIT */
/*
 * Memory windows in the data path (IBA 10.6.7): the bind a BIND_MW work
 * request executes (type 1 through ibv_bind_mw, type 2 through
 * IBV_WR_BIND_MW), the invalidation LOCAL_INV and a received SEND with
 * Invalidate execute. The check of a window's R_Key on every remote access
 * is dma.c's (emu_dma_check_mw). The windows themselves are allocated and freed by the control
 * path (verbs/mw.c), which calls emu_mw_unbind_all when a QP or an MR goes
 * away. Memory regions registered with ibv_reg_mr cannot be invalidated
 * (only fast-registered ones can, and uroce has none): their keys are
 * refused like unknown ones.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "dp.h"

/* The access rights a window may grant (LOCAL_WRITE and MW_BIND mean
 * nothing for a window and are ignored, as rxe does). */
#define MW_REMOTE_ACCESS \
	(UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC)

/* Forget what the window covers (it stays allocated, its key unchanged). */
static void mw_clear(struct emu_mw *mw)
{
	if (mw->mr)
		mw->mr->nmw--;
	mw->mr = NULL;
	mw->qp = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->valid = mw->type == 1; /* a type 1 window is always valid, bound or not */
}

void emu_mw_unbind(struct emu_mw *mw)
{
	mw_clear(mw);
}

void emu_mw_unbind_all(struct emu_ctx *ctx, const struct emu_qp *qp, const struct emu_mr *mr)
{
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &ctx->objs[EMU_OBJ_MW])
	{
		struct emu_mw *mw = EMU_CONTAINER_OF(pos, struct emu_mw, obj.link);

		if ((qp && mw->qp == qp) || (mr && mw->mr == mr))
			mw_clear(mw);
	}
}

int emu_mw_bind(struct emu_qp *qp, const struct xport_bind *b)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_obj *o = emu_dev_obj_find(qp->obj.ctx, b->mw_handle, EMU_OBJ_MW);
	uint32_t access = b->access & (MW_REMOTE_ACCESS | UROCE_ACCESS_ZERO_BASED);
	struct emu_mr *mr = NULL;
	struct emu_mw *mw;

	if (!o)
		return -EINVAL;
	mw = EMU_CONTAINER_OF(o, struct emu_mw, obj);
	/* C10-72: the QP and the window belong to the same PD. */
	if (mw->pd != qp->pd)
		return -EINVAL;
	/* The key index is the window's; only the variant (low byte) changes. */
	if ((b->rkey >> 8) != (mw->rkey >> 8))
		return -EINVAL;
	if (b->access & ~(MW_REMOTE_ACCESS | UROCE_ACCESS_ZERO_BASED | UROCE_ACCESS_LOCAL_WRITE |
			  UROCE_ACCESS_MW_BIND))
		return -EINVAL;
	if (mw->type == 1) {
		/* o10-36.2.2: a type 1 window is never zero based. */
		if (access & UROCE_ACCESS_ZERO_BASED)
			return -EINVAL;
	} else {
		/* o10-37.2.30: only a free (invalidated) type 2 window is bound. */
		if (mw->valid)
			return -EINVAL;
		/* o10-37.2.40: a type 2 bind covers some memory. */
		if (!b->mr_lkey || !b->length)
			return -EINVAL;
	}
	if (b->mr_lkey) {
		mr = emu_dev_mr_by_key(dev, b->mr_lkey);
		if (!mr || mr->pd != qp->pd)
			return -EINVAL;
		/* C10-73: the MR was registered with IBV_ACCESS_MW_BIND. */
		if (!(mr->access & UROCE_ACCESS_MW_BIND))
			return -EACCES;
		/* C10-74: remote write or atomic through the window needs local write on the MR. */
		if (access & (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC) &&
		    !(mr->access & UROCE_ACCESS_LOCAL_WRITE))
			return -EACCES;
		/* C10-75: the window lies inside the MR. */
		if (b->addr < mr->iova || b->addr - mr->iova > mr->length ||
		    b->length > mr->length - (b->addr - mr->iova))
			return -ERANGE;
	} else if (b->addr || b->length) {
		return -EINVAL;
	}
	mw_clear(mw);
	mw->rkey = b->rkey;
	if (mr && b->length) { /* a zero-length window holds no MR */
		mw->mr = mr;
		mr->nmw++;
	}
	mw->qp = mw->type == 2 ? qp : NULL; /* type 2B: usable through this QP only */
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = access;
	mw->valid = true;
	return 0;
}

int emu_mw_invalidate(struct emu_qp *qp, uint32_t rkey, bool remote)
{
	struct emu_mw *mw = emu_dev_mw_by_index(qp->obj.ctx->dev, rkey);

	/* No such window (an MR key: ibv_reg_mr MRs cannot be invalidated). */
	if (!mw || mw->rkey != rkey || !mw->valid)
		return -EINVAL;
	/* o10-37.2.26: a type 1 window is not invalidated. */
	if (mw->type == 1)
		return -EINVAL;
	if (mw->pd != qp->pd)
		return -EINVAL;
	/* The peer reaches a type 2B window only through its QP (IBA 10.6.7.2.4;
	 * for a window bound through an XRC initiator QP: emu_mw_reaches). */
	if (remote && !emu_mw_reaches(mw, qp))
		return -EINVAL;
	mw_clear(mw);
	return 0;
}
