/* SPDX-License-Identifier: MIT */
/*
 * Completion queues and completion channels. A CQ is a ring the daemon
 * produces CQEs into and the shim polls without system calls; arming
 * (ibv_req_notify_cq) is a flag in the ring header that the daemon consumes
 * when it produces a matching CQE, and then writes one event record to the
 * CQ's completion channel, a pipe whose read end the application holds
 * (and can poll(2)); while a thread of the application waits in
 * ibv_get_cq_event, the event goes into the channel's word in the context's
 * doorbell page instead (uapi.h, chan_event[]; event.c). A CQ that
 * overflows enters the error state, its owner gets IBV_EVENT_CQ_ERR (IBA
 * 11.4.2.1) and the QPs completing into it go to Error (event.c, IBA
 * 11.6.3.2).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"

/* A free event word of the context's doorbell page, or UROCE_CHAN_NO_SLOT. */
static uint32_t chan_slot_take(struct emu_ctx *ctx)
{
	if (!ctx->sq_db)
		return UROCE_CHAN_NO_SLOT;
	for (uint32_t w = 0; w < UROCE_CHAN_EVENT_SLOTS / 64; w++) {
		if (ctx->chan_slots[w] != UINT64_MAX) {
			uint32_t b = (uint32_t)__builtin_ctzll(~ctx->chan_slots[w]);
			uint32_t slot = w * 64 + b;

			ctx->chan_slots[w] |= 1ull << b;
			__atomic_store_n(&ctx->sq_db->chan_event[slot].piped, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&ctx->sq_db->chan_event[slot].word, UROCE_CHAN_EV_IDLE,
					 __ATOMIC_RELEASE);
			return slot;
		}
	}
	return UROCE_CHAN_NO_SLOT;
}

int emu_cq_create_channel(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	struct uroce_channel_resp *o;
	struct emu_channel *ch;
	int pfd[2];

	(void)req;
	if (ctx->dev->counts.channel >= ctx->dev->lim.max_channels)
		return -EMFILE;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		int err = -errno;

		free(ch);
		return err;
	}
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
	if (emu_dev_obj_add(ctx, &ch->obj, EMU_OBJ_CHANNEL)) {
		close(pfd[0]);
		close(pfd[1]);
		free(ch);
		return -ENOMEM;
	}
	ch->wfd = pfd[1];
	ch->event_slot = chan_slot_take(ctx);
	o = EMU_REPLY(rep, struct uroce_channel_resp);
	o->handle = ch->obj.hnode.key;
	o->event_slot = ch->event_slot;
	emu_reply_add_fd(rep, pfd[0]);
	return 0;
}

int emu_cq_destroy_channel(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_CHANNEL);

	(void)rep;
	if (!obj)
		return -EINVAL;
	if (obj->usecnt)
		return -EBUSY;
	emu_cq_channel_free(EMU_CONTAINER_OF(obj, struct emu_channel, obj));
	return 0;
}

void emu_cq_channel_free(struct emu_channel *ch)
{
	struct emu_ctx *ctx = ch->obj.ctx;

	/* The word and count are reset when the slot is next taken. */
	if (ch->event_slot != UROCE_CHAN_NO_SLOT && ctx)
		ctx->chan_slots[ch->event_slot / 64] &= ~(1ull << (ch->event_slot % 64));
	close(ch->wfd);
	emu_dev_obj_del(&ch->obj);
	free(ch);
}

static int check_cqe(const struct emu_dev *dev, uint32_t cqe)
{
	/* ibv_create_cq(3): cqe >= 1 and within the device's max_cqe. */
	if (cqe < 1 || cqe > dev->lim.max_cqe)
		return -EINVAL;
	return 0;
}

/* A CQ ring of at least cqe entries (a power of two), named after the CQ. */
static int cq_ring_create(const struct emu_cq *cq, uint32_t cqe, struct emu_ring *ring, int *fd)
{
	return emu_ring_create(ring, UROCE_RING_CQ, emu_pow2_roundup(cqe), UROCE_CQE_BYTES,
			       cq->obj.hnode.key, 0, fd);
}

/* The CREATE_CQ / RESIZE_CQ reply: the CQ's handle and ring, the ring's fd. */
static int cq_reply(const struct emu_cq *cq, int fd, struct emu_reply *rep)
{
	struct uroce_cq_resp *o = EMU_REPLY(rep, struct uroce_cq_resp);

	o->handle = cq->obj.hnode.key;
	o->entries = cq->ring.entries;
	o->ring_bytes = cq->ring.bytes;
	emu_reply_add_fd(rep, fd);
	return 0;
}

int emu_cq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_create_cq_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct emu_channel *ch = NULL;
	struct emu_cq *cq;
	int err, fd;

	err = check_cqe(dev, r->cqe);
	if (err)
		return err;
	if (r->comp_vector >= UROCE_NUM_COMP_VECTORS || (r->flags & ~(uint32_t)UROCE_CQ_TIMESTAMPS))
		return -EINVAL;
	if (r->channel_handle) {
		struct emu_obj *obj = emu_dev_obj_find(ctx, r->channel_handle, EMU_OBJ_CHANNEL);

		if (!obj)
			return -EINVAL;
		ch = EMU_CONTAINER_OF(obj, struct emu_channel, obj);
	}
	if (dev->counts.cq >= dev->lim.max_cq)
		return -ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	emu_list_init(&cq->err_link);
	emu_list_init(&cq->pub_link);
	if (emu_dev_obj_add(ctx, &cq->obj, EMU_OBJ_CQ)) {
		free(cq);
		return -ENOMEM;
	}
	err = cq_ring_create(cq, r->cqe, &cq->ring, &fd);
	if (err) {
		emu_dev_obj_del(&cq->obj);
		free(cq);
		return err;
	}
	cq->channel = ch;
	if (ch)
		ch->obj.usecnt++;
	cq->comp_vector = r->comp_vector;
	cq->cqe_requested = r->cqe;
	cq->timestamps = !!(r->flags & UROCE_CQ_TIMESTAMPS);

	return cq_reply(cq, fd, rep);
}

int emu_cq_resize(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_resize_cq_req *r = req;
	struct emu_ring nr, *old;
	struct emu_obj *obj;
	struct emu_cq *cq;
	uint32_t cons, used;
	int err, fd;

	obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_CQ);
	if (!obj)
		return -EINVAL;
	cq = EMU_CONTAINER_OF(obj, struct emu_cq, obj);
	old = &cq->ring;
	err = check_cqe(ctx->dev, r->cqe);
	if (err)
		return err;
	/* The resize is ordered after the work requests posted before it: take
	 * them from the rings first, so that the completions they produce at
	 * once (UD and UC sends, local errors) count against the new size. */
	emu_dp_poll(ctx->dev);
	cons = uroce_load_acquire(&old->hdr->cons);
	used = old->prod - cons;
	if (used > old->entries)
		return -EINVAL; /* consumer index is garbage */
	/* The CQEs not yet polled must fit (ibv_resize_cq(3)). */
	if (used > r->cqe)
		return -EINVAL;
	err = cq_ring_create(cq, r->cqe, &nr, &fd);
	if (err)
		return err;
	for (uint32_t i = cons; i != old->prod; i++)
		memcpy(uroce_ring_entry(nr.hdr, nr.entries, nr.stride, i),
		       uroce_ring_entry(old->hdr, old->entries, old->stride, i), UROCE_CQE_BYTES);
	nr.prod = old->prod;
	nr.hdr->prod = old->prod;
	nr.hdr->cons = cons;
	nr.hdr->overflow = old->hdr->overflow;
	nr.hdr->arm = __atomic_load_n(&old->hdr->arm, __ATOMIC_ACQUIRE);
	emu_ring_destroy(old);
	cq->ring = nr;
	cq->cqe_requested = r->cqe;

	return cq_reply(cq, fd, rep);
}

int emu_cq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_CQ);

	(void)rep;
	if (!obj)
		return -EINVAL;
	if (obj->usecnt)
		return -EBUSY; /* QPs or SRQs still use it */
	emu_cq_free(EMU_CONTAINER_OF(obj, struct emu_cq, obj));
	return 0;
}

void emu_cq_free(struct emu_cq *cq)
{
	emu_list_del(&cq->err_link);
	emu_list_del(&cq->pub_link);
	if (cq->channel)
		cq->channel->obj.usecnt--;
	emu_ring_destroy(&cq->ring);
	emu_dev_obj_del(&cq->obj);
	free(cq);
}
