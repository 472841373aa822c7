/* SPDX-License-Identifier: MIT */
/*
 * Send doorbells: which send queues a pass looks at.
 *
 * A pass used to read the producer index of every QP's SQ ring, so its
 * cost grew with the number of QPs whether they sent or not: with 1000 RC
 * QPs that walk (a cache miss or more per QP, each ring in its own
 * mapping) took close to half of the daemon's CPU time. Now each context
 * has a page of bits (struct uroce_sq_doorbells, uapi.h), one per QP, that
 * the shim sets after it publishes new send WQEs, as a program rings a
 * NIC's doorbell; the pass collects the bits and looks only at those QPs,
 * plus the ones the data path itself queued (emu_dp_sq_kick): a QP that
 * entered a state that sends, or whose sends completed (its ring slots are
 * released and, if the engine was full, the rest of the ring is handed).
 *
 * The bits are hints from an untrusted process: a bit that names no QP of
 * the context is ignored, and a bit of a QP with nothing new costs one
 * look at its ring. A program that never rings only delays its own QPs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dp.h"

int emu_sq_db_open(struct emu_ctx *ctx, int *fd_out)
{
	ctx->sq_db = emu_shm_create("uroce-sq-doorbells", sizeof(*ctx->sq_db), fd_out);
	return ctx->sq_db ? 0 : -errno;
}

void emu_sq_db_close(struct emu_ctx *ctx)
{
	if (ctx->sq_db)
		munmap(ctx->sq_db, sizeof(*ctx->sq_db));
	ctx->sq_db = NULL;
	free(ctx->db_qps);
	ctx->db_qps = NULL;
	ctx->db_cap = 0;
}

int emu_sq_db_attach(struct emu_qp *qp)
{
	struct emu_ctx *ctx = qp->obj.ctx;
	uint32_t i;

	if (!ctx->sq_db)
		return 0; /* a connection without OPEN_CTX has no QPs */
	/* The lowest free bit: the summary words stay few. */
	for (i = 0; i < ctx->db_cap && ctx->db_qps[i]; i++)
		;
	if (i == ctx->db_cap) {
		uint32_t cap = ctx->db_cap ? ctx->db_cap * 2 : 64;
		struct emu_qp **n;

		if (cap > UROCE_SQ_DB_BITS)
			cap = UROCE_SQ_DB_BITS;
		if (i >= cap)
			return -ENOSPC;
		n = realloc(ctx->db_qps, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + ctx->db_cap, 0, (cap - ctx->db_cap) * sizeof(*n));
		ctx->db_qps = n;
		ctx->db_cap = cap;
	}
	ctx->db_qps[i] = qp;
	qp->db_index = i;
	qp->sq.hdr->db_index = i;
	return 0;
}

void emu_sq_db_detach(struct emu_qp *qp)
{
	struct emu_ctx *ctx = qp->obj.ctx;

	if (qp->db_index < ctx->db_cap && ctx->db_qps[qp->db_index] == qp)
		ctx->db_qps[qp->db_index] = NULL;
	qp->db_index = UINT32_MAX;
}

void emu_dp_sq_kick(struct emu_qp *qp)
{
	if (emu_list_empty(&qp->sq_link))
		emu_list_add_tail(&qp->obj.ctx->dev->sq_qps, &qp->sq_link);
}

/* Queue the QPs of one context whose doorbells rang. */
static void collect_ctx(struct emu_ctx *ctx)
{
	struct uroce_sq_doorbells *d = ctx->sq_db;

	for (uint32_t s = 0; s < UROCE_SQ_DB_SUMMARY_WORDS; s++) {
		uint64_t sum;

		if (!__atomic_load_n(&d->summary[s], __ATOMIC_RELAXED))
			continue;
		/* Summary first, then the leaves (uapi.h). */
		sum = __atomic_exchange_n(&d->summary[s], 0, __ATOMIC_SEQ_CST);
		while (sum) {
			uint32_t w = s * 64 + (uint32_t)__builtin_ctzll(sum);
			uint64_t bits = __atomic_exchange_n(&d->leaf[w], 0, __ATOMIC_SEQ_CST);

			sum &= sum - 1;
			while (bits) {
				uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);

				bits &= bits - 1;
				if (i < ctx->db_cap && ctx->db_qps[i])
					emu_dp_sq_kick(ctx->db_qps[i]);
			}
		}
	}
}

void emu_sq_db_collect(struct emu_dev *dev)
{
	for (struct emu_list *c = dev->ctxs.next; c != &dev->ctxs; c = c->next) {
		struct emu_ctx *ctx = EMU_CONTAINER_OF(c, struct emu_ctx, link);

		if (ctx->sq_db && !ctx->closing)
			collect_ctx(ctx);
	}
}
