/* SPDX-License-Identifier: MIT */
/*
 * The MR_LIST and CQ_LIST control operations (uapi.h), what `uroce mr` and
 * `uroce cq` show, as `rdma resource show mr|cq` does for a kernel device:
 * every live MR of the device with its keys, range, access and PD, every
 * live CQ with its capacity, the CQEs not yet polled, its arm state,
 * overrun and channel, each with the process that owns it. Also the helpers
 * the QP listing (qp_list.c) shares: the owner's command name and the next
 * object of a type in handle order. They read the objects; they change
 * nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"

void emu_read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, len - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(comm, len, "?");
		return;
	}
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

struct emu_obj *emu_obj_next(struct emu_dev *dev, enum emu_obj_type type, uint32_t from)
{
	struct emu_obj *best = NULL;
	struct emu_list *c, *o;

	for (c = dev->ctxs.next; c != &dev->ctxs; c = c->next) {
		struct emu_ctx *ctx = EMU_CONTAINER_OF(c, struct emu_ctx, link);

		for (o = ctx->objs[type].next; o != &ctx->objs[type]; o = o->next) {
			struct emu_obj *obj = EMU_CONTAINER_OF(o, struct emu_obj, link);

			if (obj->hnode.key >= from && (!best || obj->hnode.key < best->hnode.key))
				best = obj;
		}
	}
	return best;
}

/* The owner of obj into pid, ctx_handle and comm. */
static void fill_owner(const struct emu_obj *obj, uint32_t *pid, uint32_t *ctx_handle,
		       char comm[UROCE_COMM_BYTES])
{
	*pid = (uint32_t)obj->ctx->pid;
	*ctx_handle = obj->ctx->handle;
	emu_read_comm(obj->ctx->pid, comm, UROCE_COMM_BYTES);
}

static void fill_mr(const struct emu_obj *obj, void *entry)
{
	const struct emu_mr *mr = EMU_CONTAINER_OF(obj, struct emu_mr, obj);
	struct uroce_mr_info *i = entry;

	i->handle = obj->hnode.key;
	i->pd_handle = mr->pd->obj.hnode.key;
	i->lkey = mr->lkey;
	i->rkey = mr->rkey;
	i->access = mr->access;
	i->addr = mr->addr;
	i->length = mr->length;
	i->iova = mr->iova;
	i->map_pages = (uint32_t)(mr->map_len / (uint64_t)sysconf(_SC_PAGESIZE));
	fill_owner(obj, &i->pid, &i->ctx_handle, i->comm);
}

static void fill_cq(const struct emu_obj *obj, void *entry)
{
	const struct emu_cq *cq = EMU_CONTAINER_OF(obj, struct emu_cq, obj);
	struct uroce_cq_info *i = entry;
	uint32_t used = 0;

	if (cq->ring.hdr) {
		/* The daemon produces, the shim consumes (and arms). */
		used = cq->ring.prod - uroce_load_acquire(&cq->ring.hdr->cons);
		i->arm = uroce_load_acquire(&cq->ring.hdr->arm);
	}
	i->handle = obj->hnode.key;
	i->cqe = cq->ring.entries;
	i->cqe_requested = cq->cqe_requested;
	i->unpolled = used > cq->ring.entries ? cq->ring.entries : used;
	i->overflowed = cq->overflowed != 0;
	i->channel = cq->channel ? cq->channel->obj.hnode.key : 0;
	i->comp_vector = cq->comp_vector;
	i->events = cq->events;
	i->lost = cq->lost;
	fill_owner(obj, &i->pid, &i->ctx_handle, i->comm);
}

/*
 * One page of a list answer: the head (count, next, total; the layout the
 * list answers share, uapi.h) and up to max entries of entry_size bytes at
 * entries, the objects of type whose handle is from or more.
 */
static int list_page(struct emu_ctx *ctx, const void *req, struct emu_reply *rep,
		     enum emu_obj_type type, uint32_t total, size_t resp_size, size_t entries_off,
		     size_t entry_size, uint32_t max, void (*fill)(const struct emu_obj *, void *))
{
	const struct uroce_res_list_req *r = req;
	struct uroce_mr_list_resp *head; /* only the shared head is used */
	struct emu_obj *obj;
	uint32_t from = r->from;
	uint8_t *base;

	if (r->flags)
		return -EINVAL;
	base = emu_reply_body(rep, resp_size);
	head = (struct uroce_mr_list_resp *)base;
	head->total = total;
	while (head->count < max && (obj = emu_obj_next(ctx->dev, type, from))) {
		fill(obj, base + entries_off + head->count++ * entry_size);
		from = obj->hnode.key + 1;
	}
	obj = head->count == max ? emu_obj_next(ctx->dev, type, from) : NULL;
	head->next = obj ? obj->hnode.key : 0;
	return 0;
}

int emu_mr_list(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	return list_page(ctx, req, rep, EMU_OBJ_MR, ctx->dev->counts.mr,
			 sizeof(struct uroce_mr_list_resp),
			 offsetof(struct uroce_mr_list_resp, mrs), sizeof(struct uroce_mr_info),
			 UROCE_MR_LIST_MAX, fill_mr);
}

int emu_cq_list(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	return list_page(ctx, req, rep, EMU_OBJ_CQ, ctx->dev->counts.cq,
			 sizeof(struct uroce_cq_list_resp),
			 offsetof(struct uroce_cq_list_resp, cqs), sizeof(struct uroce_cq_info),
			 UROCE_CQ_LIST_MAX, fill_cq);
}
