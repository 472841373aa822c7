// SPDX-License-Identifier: MIT
/*
 * What the data path reports upwards: completions written to CQ rings (and
 * the completion channel woken when the CQ is armed for them), asynchronous
 * events queued on a context's event pipe, and the QP and SRQ state changes
 * that the transport or a corrupt ring cause (IBV_EVENT_QP_FATAL,
 * LAST_WQE_REACHED, SQ_DRAINED, COMM_EST, SRQ_LIMIT_REACHED). These live in
 * the data path because the data path raises them; the control path
 * (emu/daemon/verbs) calls the same functions when a verb causes the event.
 * This file does not decide anything about the transport: the engine does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"

void emu_event_async(struct emu_ctx *ctx, uint32_t type, uint32_t handle)
{
	struct uroce_async_event ev = {.event_type = type, .handle = handle};

	if (ctx->async_wfd < 0)
		return;
	if (write(ctx->async_wfd, &ev, sizeof(ev)) != sizeof(ev)) {
		/* EPIPE: the process is gone and its context about to be
		 * released; nobody will miss the event. */
		if (errno == EPIPE)
			emu_dbg("context %u: async event %u for a closed "
				"process",
				ctx->handle, type);
		else
			emu_warn("context %u: async event %u lost (%s)", ctx->handle, type,
				 strerror(errno));
	}
}

void emu_event_qp_state(struct emu_qp *qp)
{
	uroce_store_release(&qp->sq.hdr->qp_state, qp->state);
	if (qp->rq.hdr)
		uroce_store_release(&qp->rq.hdr->qp_state, qp->state);
}

void emu_event_last_wqe(struct emu_qp *qp)
{
	if (qp->srq && !qp->last_wqe_sent) {
		qp->last_wqe_sent = 1;
		emu_event_async(qp->obj.ctx, UROCE_EVENT_QP_LAST_WQE_REACHED,
				    qp->obj.hnode.key);
	}
}

void emu_event_qp_fatal(struct emu_qp *qp)
{
	struct emu_ctx *ctx = qp->obj.ctx;

	if (qp->state == UROCE_QPS_ERR)
		return;
	qp->state = UROCE_QPS_ERR;
	emu_event_qp_state(qp);
	emu_list_add_tail(&ctx->dev->flush_qps, &qp->flush_link);
	emu_info("QP 0x%x: moved to ERR by the transport (IBV_EVENT_QP_FATAL)", qp->qpn);
	emu_event_async(ctx, UROCE_EVENT_QP_FATAL, qp->obj.hnode.key);
	emu_event_last_wqe(qp);
}

void emu_event_ring_fault(struct emu_qp *qp)
{
	struct xport_qp_attr a = {.state = UROCE_QPS_ERR};

	xport_modify(&qp->x, &a, UROCE_QP_STATE);
	emu_event_qp_fatal(qp);
	/* Nothing in the ring can be trusted any more. */
	emu_ring_drain(&qp->sq);
	qp->sq_handed = qp->sq.cons;
}

void emu_event_sq_drained(struct emu_qp *qp)
{
	if (qp->attr.en_sqd_async_notify)
		emu_event_async(qp->obj.ctx, UROCE_EVENT_SQ_DRAINED, qp->obj.hnode.key);
}

void emu_event_comm_est(struct emu_qp *qp)
{
	emu_dbg("QP 0x%x: first packet in RTR (IBV_EVENT_COMM_EST)", qp->qpn);
	emu_event_async(qp->obj.ctx, UROCE_EVENT_COMM_EST, qp->obj.hnode.key);
}

static void notify_channel(struct emu_cq *cq)
{
	struct uroce_comp_event ev = {.cq_handle = cq->obj.hnode.key};
	struct emu_channel *ch = cq->channel;

	cq->events++;
	if (!ch)
		return;
	if (write(ch->wfd, &ev, sizeof(ev)) == sizeof(ev)) {
		ch->events++;
	} else {
		ch->dropped++;
		emu_warn("CQ %u: completion event lost (%s)", cq->obj.hnode.key, strerror(errno));
	}
}

int emu_event_cqe(struct emu_cq *cq, const struct uroce_cqe *cqe)
{
	struct emu_ring *r = &cq->ring;
	uint32_t cons, arm;
	int fire;

	if (cq->overflowed)
		return -ENOSPC;
	cons = uroce_load_acquire(&r->hdr->cons);
	if (r->prod - cons >= r->entries) {
		/* CQ overrun (IBA 11.4.2.1): the CQ is in error. */
		cq->overflowed = 1;
		uroce_store_release(&r->hdr->overflow, 1);
		emu_warn("CQ %u overflowed (%u entries)", cq->obj.hnode.key, r->entries);
		emu_event_async(cq->obj.ctx, UROCE_EVENT_CQ_ERR, cq->obj.hnode.key);
		return -ENOSPC;
	}
	memcpy(uroce_ring_entry(r->hdr, r->entries, r->stride, r->prod), cqe, sizeof(*cqe));
	r->prod++;
	uroce_store_release(&r->hdr->prod, r->prod);

	/* Pairs with the fence in the shim's req_notify: either it sees
	 * this CQE when it polls after arming, or we see the arm. */
	uroce_fence();
	arm = __atomic_load_n(&r->hdr->arm, __ATOMIC_ACQUIRE);
	fire = arm == UROCE_CQ_ARM_NEXT ||
	       (arm == UROCE_CQ_ARM_SOLICITED &&
		((cqe->flags & UROCE_CQE_SOLICITED) || cqe->status != UROCE_WC_SUCCESS));
	if (fire && __atomic_compare_exchange_n(&r->hdr->arm, &arm, UROCE_CQ_ARM_NONE, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		notify_channel(cq);
	return 0;
}

void emu_event_srq_limit(struct emu_srq *srq)
{
	int64_t n;

	if (!srq->srq_limit)
		return;
	n = emu_ring_pending(&srq->ring);
	if (n >= 0 && (uint64_t)n < srq->srq_limit) {
		srq->srq_limit = 0; /* one event per arming */
		emu_event_async(srq->obj.ctx, UROCE_EVENT_SRQ_LIMIT_REACHED,
				    srq->obj.hnode.key);
	}
}
