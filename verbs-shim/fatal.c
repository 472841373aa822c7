/* SPDX-License-Identifier: MIT */
/*
 * A daemon that dies under its applications: the RNIC is gone, as a NIC
 * that fails, and every verbs call must say so rather than wait forever.
 *
 * Noticing costs nothing on the fast path. The kernel closes the daemon's
 * end of each context's control socket when the daemon exits or is killed,
 * so the socket reports a hang-up; the shim looks (one poll(2), timeout 0)
 * only when something is already slow or failing: when a CQ has been found
 * empty many times in a row and some milliseconds have passed since the
 * last look, when a work queue is full, and when a control request finds
 * the connection closed. From then on the context is dead:
 *  - posting fails with EIO (*bad_wr = the first WR);
 *  - each CQ, once its last real CQEs are polled, returns an
 *    IBV_WC_WR_FLUSH_ERR completion for every WR still outstanding on the
 *    QPs that complete into it: send WRs between the SQ's consumer index
 *    (the daemon releases a slot when the WR completes) and what was
 *    posted, receive WRs between the RQ's done index (uapi.h) and what was
 *    posted, oldest first, as IBA 10.3.1 flushes the work queues of a QP in
 *    Error. WRs posted to an SRQ stay with the SRQ, as there;
 *  - destroying objects succeeds (they died with the daemon, as the kernel
 *    releases a disassociated device's), so the application can clean up;
 *  - the async event pipe reports end of file, which ibv_get_async_event
 *    turns into IBV_EVENT_DEVICE_FATAL (async.c; IBA 11.6.3.3, Local
 *    Catastrophic Error, the unaffiliated asynchronous error).
 * This file does not restart anything: a restarted daemon serves new
 * contexts, and the application opens one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"
#include "uroce/wr_opcode.h"

/* Empty polls of a CQ between two looks at the clock, and the time between
 * two looks at the socket. */
#define FATAL_POLLS 1024u
#define FATAL_CHECK_NS 10000000ull

void shim_fatal_mark(struct shim_context *ctx)
{
	__atomic_store_n(&ctx->dead, 1, __ATOMIC_RELEASE);
}

bool shim_fatal_check(struct shim_context *ctx)
{
	struct pollfd p = {.fd = ctx->fd, .events = POLLIN | POLLRDHUP};

	if (shim_dead(ctx))
		return true;
	if (poll(&p, 1, 0) == 1 && p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)) {
		shim_fatal_mark(ctx);
		return true;
	}
	return false;
}

bool shim_fatal_poll_due(struct shim_cq *cq)
{
	struct shim_context *ctx = shim_ctx(cq->cqx.context);
	struct timespec ts;
	uint64_t now;

	if (shim_dead(ctx))
		return true;
	if (++cq->idle_polls % FATAL_POLLS)
		return false;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now < cq->next_check_ns)
		return false;
	cq->next_check_ns = now + FATAL_CHECK_NS;
	return shim_fatal_check(ctx);
}

static int flush_push(struct shim_cq *cq, const struct uroce_cqe *e)
{
	if (cq->nflush == cq->flush_cap) {
		uint32_t cap = cq->flush_cap ? 2 * cq->flush_cap : 64;
		struct uroce_cqe *p = realloc(cq->flush, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		cq->flush = p;
		cq->flush_cap = cap;
	}
	cq->flush[cq->nflush++] = *e;
	return 0;
}

/*
 * Queue a flush completion for every WR of work queue wq of qp from ring
 * index *from (the daemon's: the SQ's consumer index, the RQ's done index)
 * to what was posted, oldest first. Send and receive WQEs both begin with
 * the wr_id.
 */
static void flush_wq(struct shim_cq *cq, struct shim_qp *qp, struct shim_wq *wq,
		     const uint32_t *from, bool send)
{
	pthread_spin_lock(&wq->lock);
	for (uint32_t i = uroce_load_acquire(from); i != wq->prod; i++) {
		const void *slot = uroce_ring_entry(wq->ring, wq->entries, wq->stride, i);
		struct uroce_cqe e = {
		    .wr_id = ((const struct uroce_recv_wqe *)slot)->wr_id,
		    .status = UROCE_WC_WR_FLUSH_ERR,
		    .opcode = UROCE_WC_RECV,
		    .qp_num = qp->qpx.qp_base.qp_num,
		};

		if (send) {
			const struct uroce_wr_info *info =
			    uroce_wr_info(((const struct uroce_send_wqe *)slot)->opcode);

			e.opcode = info ? info->wc_opcode : UROCE_WC_SEND;
		}
		if (flush_push(cq, &e))
			break;
	}
	pthread_spin_unlock(&wq->lock);
}

static void flush_qp(void *obj, void *arg)
{
	struct shim_qp *qp = obj;
	struct shim_cq *cq = arg;
	struct ibv_qp *ibqp = &qp->qpx.qp_base;

	if (ibqp->send_cq && shim_cq(ibqp->send_cq) == cq)
		flush_wq(cq, qp, &qp->sq, &qp->sq.ring->cons, true);
	if (ibqp->recv_cq && shim_cq(ibqp->recv_cq) == cq && qp->rq.ring)
		flush_wq(cq, qp, &qp->rq, &qp->rq.ring->done, false);
}

void shim_fatal_flush_cq(struct shim_cq *cq)
{
	if (cq->flush_built)
		return;
	cq->flush_built = 1;
	shim_obj_each(shim_ctx(cq->cqx.context), SHIM_OBJ_QP, flush_qp, cq);
}

void shim_fatal_forget_qp(struct shim_cq *cq, uint32_t qpn)
{
	uint32_t dst = cq->flush_head;

	for (uint32_t src = cq->flush_head; src < cq->nflush; src++)
		if (cq->flush[src].qp_num != qpn)
			cq->flush[dst++] = cq->flush[src];
	cq->nflush = dst;
}
