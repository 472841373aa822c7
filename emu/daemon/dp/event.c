// SPDX-License-Identifier: MIT
/*
 * What the data path reports upwards: completions written to CQ rings (and
 * the completion channel woken when the CQ is armed for them), asynchronous
 * events queued on a context's event pipe, and the QP and SRQ state changes
 * that the transport, a CQ overrun or a corrupt ring cause
 * (IBV_EVENT_QP_FATAL, CQ_ERR, LAST_WQE_REACHED, SQ_DRAINED, COMM_EST,
 * SRQ_LIMIT_REACHED). An application that does not read its events loses
 * them: they are counted, and logged at a limited rate. These live in
 * the data path because the data path raises them; the control path
 * (emu/daemon/verbs) calls the same functions when a verb causes the event.
 * This file does not decide anything about the transport: the engine does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"

void emu_event_async(struct emu_ctx *ctx, uint32_t type, uint32_t handle)
{
	struct uroce_async_event ev = {.event_type = type, .handle = handle};
	struct emu_dev *dev = ctx->dev;

	if (ctx->async_wfd < 0)
		return;
	/* The completions before the event are visible when it arrives
	 * (SQ_DRAINED after the last send's CQE, a fatal error after the
	 * completions of what did complete). */
	emu_dma_before_reveal(dev);
	if (write(ctx->async_wfd, &ev, sizeof(ev)) != sizeof(ev)) {
		/* EPIPE: the process is gone and its context about to be
		 * released; nobody will miss the event. */
		if (errno == EPIPE) {
			emu_dbg("context %u: async event %u for a closed "
				"process",
				ctx->handle, type);
			return;
		}
		/* An application that does not read its events: count them;
		 * one line at the first, the total when the context closes. */
		dev->dcnt[EMU_DCNT_ASYNC_LOST]++;
		if (!ctx->async_lost++)
			emu_warn("context %u of pid %d: async event %u lost (%s): the "
				 "application does not read its events; further losses are "
				 "only counted (async_lost)",
				 ctx->handle, (int)ctx->pid, type, strerror(errno));
	}
}

/*
 * An affiliated event of a QP, to its owner and, for an XRC target QP, to
 * every context that opened it, each under its own handle (as the
 * kernel's shared QP event handler tells every opener).
 */
static void qp_event(struct emu_qp *qp, uint32_t type)
{
	struct emu_list *pos, *tmp;

	emu_event_async(qp->obj.ctx, type, qp->obj.hnode.key);
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &qp->opens)
	{
		struct emu_qp_open *op = EMU_CONTAINER_OF(pos, struct emu_qp_open, link);

		emu_event_async(op->obj.ctx, type, op->obj.hnode.key);
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
	/*
	 * IBA 11.6.3 (affiliated asynchronous events): a QP on an SRQ that enters Error reports
	 * Last WQE Reached once it will take no more WQEs from the SRQ, and
	 * an XRC target QP, which only ever takes WQEs from XRC SRQs (the one
	 * each message names), does the same, to every context that opened it
	 * (as Linux's shared QP event handler), whether or not a message has
	 * named an SRQ yet.
	 */
	if (qp->last_wqe_sent || (!qp->srq && qp->type != UROCE_QPT_XRC_RECV))
		return;
	qp->last_wqe_sent = 1;
	qp_event(qp, UROCE_EVENT_QP_LAST_WQE_REACHED);
}

void emu_event_qp_fatal(struct emu_qp *qp, const char *why)
{
	struct emu_ctx *ctx = qp->obj.ctx;
	struct emu_dev *dev = ctx->dev;

	if (qp->state == UROCE_QPS_ERR)
		return;
	qp->state = UROCE_QPS_ERR;
	emu_event_qp_state(qp);
	emu_list_add_tail(&dev->flush_qps, &qp->flush_link);
	emu_log_rl(&dev->rl[EMU_RL_QP_ERROR], EMU_LOG_INFO,
		   "QP 0x%x of pid %d: moved to ERR (%s), IBV_EVENT_QP_FATAL; %llu so far "
		   "(counter qp_fatal)",
		   qp->qpn, (int)ctx->pid, why, (unsigned long long)dev->dcnt[EMU_DCNT_QP_FATAL]);
	qp_event(qp, UROCE_EVENT_QP_FATAL);
	emu_event_last_wqe(qp);
}

void emu_event_qp_error(struct emu_qp *qp, const char *why)
{
	struct xport_qp_attr a = {.state = UROCE_QPS_ERR};

	if (qp->state == UROCE_QPS_ERR)
		return;
	qp->obj.ctx->dev->dcnt[EMU_DCNT_QP_FATAL]++;
	/* Flushes what the engine holds (into CQs that may be in error). */
	xport_modify(&qp->x, &a, UROCE_QP_STATE);
	emu_event_qp_fatal(qp, why);
}

void emu_event_ring_fault(struct emu_qp *qp)
{
	emu_event_qp_error(qp, "SQ producer index out of range");
	/* Nothing in the ring can be trusted any more. */
	emu_ring_drain(&qp->sq);
	qp->sq_handed = qp->sq.cons;
}

void emu_event_sq_drained(struct emu_qp *qp)
{
	if (qp->attr.en_sqd_async_notify)
		qp_event(qp, UROCE_EVENT_SQ_DRAINED);
}

void emu_event_comm_est(struct emu_qp *qp)
{
	emu_dbg("QP 0x%x: first packet in RTR (IBV_EVENT_COMM_EST)", qp->qpn);
	qp_event(qp, UROCE_EVENT_COMM_EST);
}

static void notify_channel(struct emu_cq *cq)
{
	struct uroce_comp_event ev = {.cq_handle = cq->obj.hnode.key};
	struct emu_channel *ch = cq->channel;
	struct uroce_chan_event *ce = NULL;

	cq->events++;
	if (!ch)
		return;
	/*
	 * A thread of the program waits for this channel's next event and
	 * looks at its word (uapi.h, chan_event[]): hand the event over there,
	 * without a write to the pipe and the read that follows. The word
	 * not WATCHED (nobody waits, or an event already waits there): the pipe.
	 */
	if (ch->event_slot != UROCE_CHAN_NO_SLOT && cq->obj.ctx->sq_db)
		ce = &cq->obj.ctx->sq_db->chan_event[ch->event_slot];
	if (ce) {
		uint64_t watched = UROCE_CHAN_EV_WATCHED;

		if (__atomic_compare_exchange_n(&ce->word, &watched,
						UROCE_CHAN_EV_MAKE_FIRED(ev.cq_handle), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			ch->events++;
			cq->obj.ctx->dev->dcnt[EMU_DCNT_COMP_EVENTS_MEM]++;
			return;
		}
	}
	if (write(ch->wfd, &ev, sizeof(ev)) == sizeof(ev)) {
		ch->events++;
		/* After the write: a reader that sees the count finds the record. */
		if (ce)
			__atomic_store_n(&ce->piped, ++ch->piped, __ATOMIC_RELEASE);
	} else {
		struct emu_dev *dev = cq->obj.ctx->dev;

		ch->dropped++;
		dev->dcnt[EMU_DCNT_COMP_EVENTS_LOST]++;
		emu_log_rl(&dev->rl[EMU_RL_CHANNEL_LOST], EMU_LOG_WARN,
			   "CQ %u: completion event lost (%s); %llu so far (counter "
			   "comp_events_lost)",
			   cq->obj.hnode.key, strerror(errno),
			   (unsigned long long)dev->dcnt[EMU_DCNT_COMP_EVENTS_LOST]);
	}
}

int emu_event_cqe(struct emu_cq *cq, const struct uroce_cqe *cqe)
{
	struct emu_ring *r = &cq->ring;
	uint32_t cons;

	if (cq->overflowed) {
		cq->lost++;
		return -ENOSPC;
	}
	cons = uroce_load_acquire(&r->hdr->cons);
	if (r->prod - cons >= r->entries) {
		struct emu_dev *dev = cq->obj.ctx->dev;

		/*
		 * CQ overrun (IBA 11.4.2.1): the CQ is in error and takes no
		 * more CQEs; its owner gets the affiliated asynchronous error
		 * CQ Error (IBV_EVENT_CQ_ERR), and every work queue that
		 * completes into it a Local Work Queue Catastrophic Error: its
		 * QP enters Error, IBV_EVENT_QP_FATAL (IBA 11.6.3.2). The
		 * engine must not be re-entered from here (this runs inside
		 * it): the next data-path pass moves the QPs
		 * (emu_event_cq_errors).
		 */
		/* The CQEs before the overrun become visible first. */
		emu_dma_before_reveal(dev);
		cq->overflowed = 1;
		cq->lost = 1;
		uroce_store_release(&r->hdr->overflow, 1);
		dev->dcnt[EMU_DCNT_CQ_OVERRUNS]++;
		emu_log_rl(&dev->rl[EMU_RL_CQ_OVERRUN], EMU_LOG_WARN,
			   "CQ %u of pid %d overran (all %u entries unpolled): IBV_EVENT_CQ_ERR, "
			   "its QPs go to ERR; %llu overruns so far (counter cq_overruns)",
			   cq->obj.hnode.key, (int)cq->obj.ctx->pid, r->entries,
			   (unsigned long long)dev->dcnt[EMU_DCNT_CQ_OVERRUNS]);
		emu_event_async(cq->obj.ctx, UROCE_EVENT_CQ_ERR, cq->obj.hnode.key);
		if (emu_list_empty(&cq->err_link))
			emu_list_add_tail(&dev->err_cqs, &cq->err_link);
		return -ENOSPC;
	}
	{
		struct uroce_cqe *e = uroce_ring_entry(r->hdr, r->entries, r->stride, r->prod);

		memcpy(e, cqe, sizeof(*cqe));
		/* Completion timestamps, for a CQ that asked for them
		 * (UROCE_CQ_TIMESTAMPS): the moment the CQE becomes visible. */
		if (cq->timestamps) {
			struct timespec mono, wall;

			clock_gettime(CLOCK_MONOTONIC, &mono);
			clock_gettime(CLOCK_REALTIME, &wall);
			e->timestamp_ns =
			    (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
			e->wallclock_ns =
			    (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
		}
	}
	r->prod++;
	/* Visible at the next reveal gate (emu_event_cq_publish). */
	if (cqe->flags & UROCE_CQE_SOLICITED || cqe->status != UROCE_WC_SUCCESS)
		cq->pub_fire = true;
	if (emu_list_empty(&cq->pub_link))
		emu_list_add_tail(&cq->obj.ctx->dev->pub_cqs, &cq->pub_link);
	return 0;
}

/*
 * Completions are written to the ring at once but published (the producer
 * index stored, the channel signalled) only here, called by the reveal gate
 * (dma.c) right after the staged writes went out: so a batch of received
 * messages costs one process_vm_writev for all their data, not one per
 * completion, and one look at the arm state per CQ.
 */
void emu_event_cq_publish(struct emu_dev *dev)
{
	while (!emu_list_empty(&dev->pub_cqs)) {
		struct emu_cq *cq = EMU_CONTAINER_OF(dev->pub_cqs.next, struct emu_cq, pub_link);
		struct emu_ring *r = &cq->ring;
		uint32_t arm;
		bool fire;

		emu_list_del(&cq->pub_link);
		uroce_store_release(&r->hdr->prod, r->prod);
		/* Pairs with the fence in the shim's req_notify: either it sees
		 * these CQEs when it polls after arming, or we see the arm. */
		uroce_fence();
		arm = __atomic_load_n(&r->hdr->arm, __ATOMIC_ACQUIRE);
		emu_place_note_poller(dev->place,
				      __atomic_load_n(&r->hdr->poller, __ATOMIC_RELAXED));
		fire = arm == UROCE_CQ_ARM_NEXT || (arm == UROCE_CQ_ARM_SOLICITED && cq->pub_fire);
		cq->pub_fire = false;
		if (fire && __atomic_compare_exchange_n(&r->hdr->arm, &arm, UROCE_CQ_ARM_NONE, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			notify_channel(cq);
	}
}

unsigned emu_event_cq_errors(struct emu_dev *dev)
{
	unsigned n = 0;

	while (!emu_list_empty(&dev->err_cqs)) {
		struct emu_cq *cq = EMU_CONTAINER_OF(dev->err_cqs.next, struct emu_cq, err_link);
		struct emu_list *pos, *tmp;

		emu_list_del(&cq->err_link);
		/* A QP uses only CQs of its own context. */
		EMU_LIST_FOR_EACH_SAFE(pos, tmp, &cq->obj.ctx->objs[EMU_OBJ_QP])
		{
			struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, obj.link);

			if ((qp->send_cq != cq && qp->recv_cq != cq) ||
			    qp->state == UROCE_QPS_RESET || qp->state == UROCE_QPS_ERR)
				continue;
			emu_event_qp_error(qp, "its CQ overran");
			n++;
		}
	}
	return n;
}

void emu_event_srq_limit(struct emu_srq *srq)
{
	int64_t n;

	if (!srq->srq_limit)
		return;
	n = emu_ring_pending(&srq->ring);
	if (n >= 0 && (uint64_t)n < srq->srq_limit) {
		srq->srq_limit = 0; /* one event per arming */
		emu_event_async(srq->obj.ctx, UROCE_EVENT_SRQ_LIMIT_REACHED, srq->obj.hnode.key);
	}
}
