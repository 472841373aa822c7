/* SPDX-License-Identifier: MIT */
/*
 * The data path: what connects the shared rings of the verbs shim to the
 * transport engine (xport.h) and the engine to the rest of the daemon.
 *
 *  - The engine's ops: packets go to net.c, memory accesses to dma.c,
 *    timers to timer.c; receive WQEs are popped from the RQ/SRQ ring
 *    (copied and validated by wqe.c); completions are written to the CQ
 *    ring (cq.c signals the channel when the CQ is armed, solicited-only
 *    arming included); the engine's own moves to Error raise the async
 *    event.
 *  - One pass (emu_dp_poll, run by wait.c on every loop iteration): fire
 *    expired timers, hand new SQ ring entries to the engine (validated;
 *    only of the QPs whose doorbells rang or that the data path queued,
 *    doorbell.c), flush receive WQEs posted to QPs in Error, run the QPs the
 *    engine scheduled, in the order it scheduled them, send what is
 *    batched. How much a pass sends is bounded by the engine's in-flight
 *    budget (xport flow.c), which net.c sets from the receive buffer.
 *
 * Ring slots. A send WQE's slot is released (the consumer index published
 * to the shim) only when the engine completed the WQE, signaled or not, so
 * an SQ holds at most max_send_wr outstanding WRs as on a NIC; the engine
 * keeps its own copy, so the release happens before the CQE is written
 * (a program that posts again as soon as it polls a completion finds the
 * slot free). A receive WQE's slot is released when the engine takes it
 * (it keeps a copy), so "posted" means "not yet taken", which is also what
 * the SRQ limit counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "dp.h"

static struct emu_qp *qp_of(struct xport_qp *x)
{
	return EMU_CONTAINER_OF(x, struct emu_qp, x);
}

/*
 * Publish the SQ consumer index: every handed WQE the engine no longer
 * holds is complete. `finishing` counts the WQE whose completion is being
 * pushed right now (still held by the engine).
 */
static void sq_release(struct emu_qp *qp, uint32_t finishing)
{
	uint32_t held = qp->x.sq_tail - qp->x.comp.idx;
	uint32_t cons = qp->sq_handed - held + finishing;

	if (cons != qp->sq.cons) {
		qp->sq.cons = cons;
		uroce_store_release(&qp->sq.hdr->cons, cons);
	}
}

/* ------------------------------------------------------------------------ */
/* Engine ops.                                                               */

static int op_send_packet(void *ctx, struct xport_qp *x, const struct xport_route *rt,
			  const void *pkt, size_t len)
{
	(void)x;
	return emu_net_send(ctx, rt, pkt, len);
}

static void *op_tx_buf(void *ctx)
{
	return emu_net_tx_buf(ctx);
}

static struct xport_qp *op_lookup_qp(void *ctx, uint32_t qpn)
{
	struct emu_qp *qp = emu_dev_qp_by_qpn(ctx, qpn);

	return qp ? &qp->x : NULL;
}

static int op_dma_lkey(void *ctx, struct xport_qp *x, uint32_t lkey, uint64_t addr, void *buf,
		       size_t len, uint32_t access, enum xport_dma dir)
{
	(void)ctx;
	return emu_dma_lkey(qp_of(x), lkey, addr, buf, len, access, dir);
}

static int op_dma_rkey(void *ctx, struct xport_qp *x, uint32_t rkey, uint64_t va, void *buf,
		       size_t len, uint32_t access, enum xport_dma dir)
{
	(void)ctx;
	return emu_dma_rkey(qp_of(x), rkey, va, buf, len, access, dir);
}

static int op_dma_read_crc(void *ctx, struct xport_qp *x, uint32_t key, bool remote, uint64_t addr,
			   void *buf, size_t len, uint32_t access, uint32_t *crc)
{
	(void)ctx;
	return emu_dma_read_crc(qp_of(x), key, remote, addr, buf, len, access, crc);
}

static int op_atomic(void *ctx, struct xport_qp *x, uint32_t rkey, uint64_t va,
		     enum xport_atomic_op op, uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	(void)ctx;
	return emu_dma_atomic(qp_of(x), rkey, va, op, compare_add, swap, orig);
}

static int op_flush(void *ctx, struct xport_qp *x, uint32_t rkey, uint64_t va, uint32_t len,
		    uint32_t access, bool whole_mr)
{
	(void)ctx;
	return emu_dma_flush(qp_of(x), rkey, va, len, access, whole_mr);
}

static int op_bind_mw(void *ctx, struct xport_qp *x, const struct xport_wqe *wqe)
{
	(void)ctx;
	return emu_mw_bind(qp_of(x), &wqe->bind);
}

static int op_invalidate(void *ctx, struct xport_qp *x, uint32_t rkey, bool remote)
{
	(void)ctx;
	return emu_mw_invalidate(qp_of(x), rkey, remote);
}

static int op_get_recv_wqe(void *ctx, struct xport_qp *x, struct xport_recv_wqe *wqe)
{
	struct emu_dev *dev = ctx;
	struct emu_qp *qp = qp_of(x);
	struct emu_ring *r = qp->srq ? &qp->srq->ring : &qp->rq;
	struct emu_wqe_geom g;
	uint8_t slot[UROCE_RECV_WQE_BYTES + XPORT_MAX_SGE * sizeof(struct uroce_sge)];
	int64_t n;

	if (!r->hdr)
		return -EAGAIN;
	n = emu_ring_ready(r);
	if (n < 0) {
		dev->dcnt[EMU_DCNT_RING_CORRUPT]++;
		emu_warn("QP 0x%x: %s producer index out of range, dropping "
			 "its entries",
			 qp->qpn, qp->srq ? "SRQ" : "RQ");
		emu_ring_drain(r);
		if (!qp->srq) {
			/* Dropped, not completed: finished all the same. */
			qp->rq_done = r->cons;
			uroce_store_release(&r->hdr->done, qp->rq_done);
		}
		return -EAGAIN;
	}
	if (!n)
		return -EAGAIN;
	g.max_sge = r->max_sge;
	g.max_inline = 0;
	/* One snapshot of the slot's used bytes; never read twice. */
	g.stride =
	    emu_wqe_recv_snapshot(slot, uroce_ring_entry(r->hdr, r->entries, r->stride, r->cons),
				  r->stride < sizeof(slot) ? r->stride : (uint32_t)sizeof(slot));
	if (emu_wqe_recv(slot, &g, wqe))
		dev->dcnt[EMU_DCNT_BAD_RECV_WQE]++;
	emu_ring_consume(r);
	dev->dcnt[EMU_DCNT_RQ_WQES]++;
	if (qp->srq)
		emu_event_srq_limit(qp->srq);
	return 0;
}

/* Completed WQEs: their slots are released, and an engine that was full
 * takes more of the ring, at the next look. */
static void op_sq_done(void *ctx, struct xport_qp *x)
{
	(void)ctx;
	emu_dp_sq_kick(qp_of(x));
}

static void op_push_cqe(void *ctx, struct xport_qp *x, bool recv, const struct uroce_cqe *c)
{
	struct emu_dev *dev = ctx;
	struct emu_qp *qp = qp_of(x);

	/* The CQE becomes visible at the next reveal gate, after the data it
	 * announces (emu_event_cqe). */
	if (dev->capture)
		emu_capture_cqe(dev, recv, c);
	if (!recv)
		/* A CQE pushed while the engine holds WQEs is for the oldest
		 * one (completions are in order); with none held it is a WR
		 * flushed on arrival. */
		sq_release(qp, x->comp.idx != x->sq_tail);
	else if (qp->rq.hdr)
		/* Receive WQEs of a QP's own RQ complete in the order they
		 * were taken: one more is finished (uapi.h, done). */
		uroce_store_release(&qp->rq.hdr->done, ++qp->rq_done);
	if (c->status != UROCE_WC_SUCCESS && c->status != UROCE_WC_WR_FLUSH_ERR) {
		/* Retries exhausted, a NAK, a local error: say which QP, why. */
		qp->err_status = c->status;
		dev->dcnt[EMU_DCNT_WC_ERRORS]++;
		emu_log_rl(&dev->rl[EMU_RL_WC_ERROR], EMU_LOG_WARN,
			   "QP 0x%x of pid %d: %s WR 0x%llx completed with %s (status %u)", qp->qpn,
			   (int)qp->obj.ctx->pid, recv ? "receive" : "send",
			   (unsigned long long)c->wr_id, xport_wc_status_name(c->status),
			   c->status);
	}
	if (!(recv ? qp->recv_cq : qp->send_cq)) {
		/* An XRC target QP whose SRQ was destroyed under the message. */
		dev->dcnt[EMU_DCNT_CQE_NO_CQ]++;
		return;
	}
	if (emu_event_cqe(recv ? qp->recv_cq : qp->send_cq, c))
		dev->dcnt[EMU_DCNT_CQ_OVERFLOW]++;
	else
		dev->dcnt[EMU_DCNT_CQES]++;
}

/*
 * XRC target QP: the message that starts names XRC SRQ srqn. Its receive
 * WQEs, its PD (every key the message presents) and its CQ are the SRQ's
 * from now on; the QP holds no use counts of them (verbs/xrcd.c clears
 * them when the SRQ goes).
 */
static int op_xrc_srq(void *ctx, struct xport_qp *x, uint32_t srqn)
{
	struct emu_qp *qp = qp_of(x);
	struct emu_srq *srq = emu_dev_xrc_srq_by_num(ctx, srqn);

	if (!srq || !qp->xrcd)
		return -ENOENT;
	if (srq->xrcd->dom != qp->xrcd->dom)
		return -EACCES;
	qp->srq = srq;
	qp->pd = srq->pd;
	qp->recv_cq = srq->cq;
	return 0;
}

/* QP1's MADs go up to the daemon's CM, which registered for them. */
static void op_gsi_recv(void *ctx, const struct xport_gsi_mad *m)
{
	struct emu_dev *dev = ctx;

	if (dev->gsi_recv)
		dev->gsi_recv(dev, m);
	else
		dev->dcnt[EMU_DCNT_CM_UNMATCHED]++;
}

static uint64_t op_ticks(void *ctx)
{
	(void)ctx;
	return emu_prof_ticks();
}

static uint64_t op_now_us(void *ctx)
{
	(void)ctx;
	return emu_wait_now_us();
}

static void op_arm_timer(void *ctx, struct xport_qp *x, uint64_t deadline)
{
	(void)ctx;
	emu_timer_arm(qp_of(x), deadline);
}

static void op_schedule(void *ctx, struct xport_qp *x)
{
	struct emu_dev *dev = ctx;
	struct emu_qp *qp = qp_of(x);

	if (emu_list_empty(&qp->run_link))
		emu_list_add_tail(&dev->run_qps, &qp->run_link);
}

static void op_rnr_wait(void *ctx, struct xport_qp *x)
{
	struct emu_dev *dev = ctx;
	struct emu_qp *qp = qp_of(x);

	if (emu_list_empty(&qp->rnr_link))
		emu_list_add_tail(&dev->rnr_qps, &qp->rnr_link);
}

static void op_qp_error(void *ctx, struct xport_qp *x)
{
	struct emu_dev *dev = ctx;
	struct emu_qp *qp = qp_of(x);

	dev->dcnt[EMU_DCNT_QP_FATAL]++;
	/* Not from here: SQ ring entries not yet handed over are flushed by
	 * the next pass (the engine must not be re-entered). */
	emu_dp_sq_kick(qp);
	/* The engine completed the failing WR just before (its status says
	 * why), unless the error was the responder's own (a NAK it sent). */
	emu_event_qp_fatal(qp, qp->err_status ? xport_wc_status_name(qp->err_status)
					      : "the responder refused a request");
}

static void op_sq_drained(void *ctx, struct xport_qp *x)
{
	(void)ctx;
	emu_event_sq_drained(qp_of(x));
}

static void op_comm_est(void *ctx, struct xport_qp *x)
{
	(void)ctx;
	emu_event_comm_est(qp_of(x));
}

static void op_mcast_each(void *ctx, const uint8_t gid[XPORT_GID_BYTES],
			  void (*fn)(struct xport_qp *qp, void *arg), void *arg)
{
	emu_mcast_each(ctx, gid, fn, arg);
}

static const struct xport_ops dp_ops = {
    .send_packet = op_send_packet,
    .tx_buf = op_tx_buf,
    .lookup_qp = op_lookup_qp,
    .dma_lkey = op_dma_lkey,
    .dma_rkey = op_dma_rkey,
    .dma_read_crc = op_dma_read_crc,
    .atomic = op_atomic,
    .flush = op_flush,
    .bind_mw = op_bind_mw,
    .invalidate = op_invalidate,
    .get_recv_wqe = op_get_recv_wqe,
    .push_cqe = op_push_cqe,
    .gsi_recv = op_gsi_recv,
    .now_us = op_now_us,
    .ticks = op_ticks,
    .arm_timer = op_arm_timer,
    .schedule = op_schedule,
    .qp_error = op_qp_error,
    .sq_drained = op_sq_drained,
    .comm_est = op_comm_est,
    .mcast_each = op_mcast_each,
    .xrc_srq = op_xrc_srq,
    .rnr_wait = op_rnr_wait,
    .sq_done = op_sq_done,
};

/* ------------------------------------------------------------------------ */
/* Send queues.                                                              */

/* The AH named by a UD WQE, as the engine's destination. */
static int ud_av(struct emu_qp *qp, uint32_t ah_handle, struct xport_av *av)
{
	struct emu_obj *obj = emu_dev_obj_find(qp->obj.ctx, ah_handle, EMU_OBJ_AH);
	struct emu_ah *ah;

	if (!obj)
		return -EINVAL;
	ah = EMU_CONTAINER_OF(obj, struct emu_ah, obj);
	if (ah->pd != qp->pd)
		return -EINVAL;
	emu_dp_av(qp->obj.ctx->dev, &ah->attr, av);
	return 0;
}

/*
 * A small send whose payload the shim copied into the WQE at the post
 * (UROCE_SEND_PREREAD): the SGEs are checked as the read would check them
 * (L_Key, PD, range; zero-length SGEs are not read, so not checked), and
 * the WQE becomes one with that payload inline, which saves the
 * process_vm_readv. A failing check leaves the WQE as it was: the engine
 * reads it, fails the same way, and completes it with the error.
 */
static void dp_preread(struct emu_qp *qp, const void *slot, struct xport_wqe *w)
{
	const uint8_t *data = emu_wqe_preread(slot, w);
	uint32_t len = w->inline_len;

	if (!data)
		return; /* none (and an inline WQE's inline_len is its own) */
	/* Where the engine keeps it: the SGEs' place, or the inline room. */
	if (len > xport_sq_data_bytes(qp->x.max_sge, qp->x.max_inline))
		goto read_it;
	for (uint32_t i = 0; i < w->num_sge; i++)
		if (w->sge[i].length && emu_dma_lkey(qp, w->sge[i].lkey, w->sge[i].addr, NULL,
						     w->sge[i].length, 0, XPORT_DMA_CHECK))
			goto read_it;
	/* inline_data shares its place with sge[]: checked, then replaced.
	 * num_sge stays, for what the capture notes say of the WR. */
	memcpy(w->inline_data, data, len);
	w->flags |= UROCE_SEND_INLINE;
	qp->obj.ctx->dev->dcnt[EMU_DCNT_SQ_PREREAD]++;
	return;

read_it: /* as without a snapshot */
	w->flags &= ~(uint32_t)UROCE_SEND_PREREAD;
	w->inline_len = 0;
}

unsigned emu_dp_sq(struct emu_qp *qp)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_ring *r = &qp->sq;
	struct emu_wqe_geom g = {
	    .stride = r->stride, .max_sge = r->max_sge, .max_inline = r->max_inline};
	uint32_t prod;
	unsigned n = 0;

	switch (qp->state) {
	case UROCE_QPS_RTS:
	case UROCE_QPS_SQD:
	case UROCE_QPS_SQE:
	case UROCE_QPS_ERR:
		break;
	default:
		return 0; /* the shim posts nothing before RTS */
	}
	sq_release(qp, 0);
	prod = uroce_load_acquire(&r->hdr->prod);
	if (prod - r->cons > r->entries || prod - qp->sq_handed > r->entries) {
		dev->dcnt[EMU_DCNT_RING_CORRUPT]++;
		if (qp->state != UROCE_QPS_ERR)
			emu_warn("QP 0x%x: SQ producer index out of range, moving the "
				 "QP to the error state",
				 qp->qpn);
		emu_event_ring_fault(qp);
		return 1;
	}
	if (qp->sq_handed != prod)
		emu_dma_forget_reads(dev);
	while (qp->sq_handed != prod) {
		uint8_t slot[UROCE_SEND_WQE_BYTES + XPORT_MAX_INLINE_BYTES +
			     XPORT_MAX_SGE * sizeof(struct uroce_sge)];
		struct xport_wqe w;
		uint32_t ah = 0, status;
		uint32_t bytes = r->stride < sizeof(slot) ? r->stride : (uint32_t)sizeof(slot);
		int rc;

		g.stride = emu_wqe_send_snapshot(
		    slot, uroce_ring_entry(r->hdr, r->entries, r->stride, qp->sq_handed), bytes);
		status = emu_wqe_send(slot, &g, qp->type, &w, &ah);
		if (status == UROCE_WC_SUCCESS && qp->type == UROCE_QPT_UD &&
		    ud_av(qp, ah, &w.ud_av)) {
			status = UROCE_WC_LOC_QP_OP_ERR;
			emu_wqe_poison(&w, status);
		}
		if (status != UROCE_WC_SUCCESS)
			dev->dcnt[EMU_DCNT_BAD_SEND_WQE]++;
		else
			dp_preread(qp, slot, &w);
		/* Counted as handed before the engine sees it: a WR flushed
		 * on arrival releases its slot inside the call. */
		qp->sq_handed++;
		rc = xport_post_send_queue(&qp->x, &w);
		if (rc) {
			qp->sq_handed--; /* -EAGAIN: the engine is full */
			break;
		}
		dev->dcnt[EMU_DCNT_SQ_WQES]++;
		n++;
	}
	/* All that was posted is in the engine before it sends: each message
	 * is sent knowing whether another follows (xport_post_send_queue). */
	if (n)
		xport_post_send_run(&qp->x);
	sq_release(qp, 0);
	return n;
}

/* ------------------------------------------------------------------------ */
/* The pass.                                                                 */

/* One pass of the RNIC's data path; how much work it found. */
static unsigned dp_pass(struct emu_dev *dev)
{
	struct emu_list *pos, *tmp, run, look;
	unsigned work = 0;

	/* QPs of CQs that overran during the last pass go to ERR. */
	work += emu_event_cq_errors(dev);

	/* The socket is read here only when this process just sent the RNIC
	 * a datagram (another RNIC of the daemon, or itself: net.c's hint):
	 * otherwise libuv's look at every descriptor (epoll), which each loop
	 * iteration makes just after this pass, calls net.c's reader when
	 * datagrams wait, and the next pass follows it before the loop can
	 * block. A recvmmsg here would find nothing most of the time, and a
	 * system call is a microsecond or more in a virtual machine: it
	 * delayed every hop while the daemon spins. */
	work += emu_net_receive_hinted(dev);

	/* An answer waiting in the socket is not a loss: read it first. Nor
	 * is one still in this RNIC's send batch: a QP's peer on the same
	 * RNIC answered in the receive above, and its ACK leaves only at the
	 * end of the pass. Send the batch, then read (its datagrams to this
	 * RNIC are in the socket when sendmmsg returns). */
	if (emu_timer_due(dev, emu_wait_now_us())) {
		work += emu_net_flush(dev);
		work += emu_net_receive_before_timers(dev);
	}
	work += emu_timer_expire(dev, emu_wait_now_us());

	/* The send queues with something new: doorbells the programs rang,
	 * and the QPs the data path queued (emu_dp_sq_kick), in the order
	 * they came; idle QPs cost nothing (doorbell.c). */
	emu_sq_db_collect(dev);
	emu_list_take_all(&look, &dev->sq_qps);
	while (!emu_list_empty(&look)) {
		struct emu_qp *qp = EMU_CONTAINER_OF(look.next, struct emu_qp, sq_link);

		emu_list_del(&qp->sq_link);
		dev->dcnt[EMU_DCNT_SQ_LOOKS]++;
		work += emu_dp_sq(qp);
	}

	/* A request that waits for a receive WQE goes on once there is one
	 * (xport_ops.rnr_wait); looking costs no work, so a daemon that only
	 * waits for the program still yields and sleeps. */
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &dev->rnr_qps)
	{
		struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, rnr_link);
		struct emu_ring *rq = qp->srq ? &qp->srq->ring : &qp->rq;

		if (!qp->x.resp.rnr_hold_until) {
			emu_list_del(&qp->rnr_link);
		} else if (rq->hdr && emu_ring_ready(rq) > 0) {
			emu_list_del(&qp->rnr_link);
			xport_run(&qp->x);
			work++;
		}
	}

	/* Receives posted to QPs in Error complete at once (flushed). */
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &dev->flush_qps)
	{
		struct emu_qp *qp = EMU_CONTAINER_OF(pos, struct emu_qp, flush_link);

		if (qp->rq.hdr && emu_ring_ready(&qp->rq) > 0)
			work += xport_flush_recv(&qp->x);
	}

	/* Run what was scheduled before this pass; what the runs schedule
	 * waits for the next one. */
	emu_list_take_all(&run, &dev->run_qps);
	while (!emu_list_empty(&run)) {
		struct emu_qp *qp = EMU_CONTAINER_OF(run.next, struct emu_qp, run_link);

		emu_list_del(&qp->run_link);
		xport_run(&qp->x);
		work++;
	}

	/* Always, even with nothing to send: the pass ends at the reveal gate
	 * (dma.c emu_dma_before_reveal). */
	work += emu_net_flush(dev);
	return work;
}

unsigned emu_dp_poll(void *arg)
{
	struct emu_dev *dev = arg;
	uint64_t t = emu_prof_start(dev);
	unsigned work = dp_pass(dev);

	emu_prof_add(dev, work ? EMU_DCNT_TIME_WORK_NS : EMU_DCNT_TIME_IDLE_NS, t);
	return work;
}

/* The earliest transport timer, or the end of an ACK batch's hold. */
static uint64_t dp_next_deadline(void *arg)
{
	uint64_t t = emu_timer_next(arg), h = emu_net_hold_deadline(arg);

	return !t || (h && h < t) ? h : t;
}

void emu_dp_av(const struct emu_dev *dev, const struct uroce_ah_attr *a, struct xport_av *av)
{
	memset(av, 0, sizeof(*av));
	memcpy(av->sgid, dev->gid, sizeof(av->sgid));
	/* emu_dev_check_ah admitted only vectors with a GRH. */
	memcpy(av->dgid, a->dgid, sizeof(av->dgid));
	av->tclass = a->traffic_class;
	av->hop_limit = a->hop_limit;
}

void emu_dp_init(struct emu_dev *dev)
{
	emu_list_init(&dev->sq_qps);
	emu_list_init(&dev->run_qps);
	emu_list_init(&dev->timer_qps);
	emu_list_init(&dev->err_cqs);
	emu_list_init(&dev->pub_cqs);
	xport_dev_init(&dev->x, &dp_ops, dev);
	dev->wait.poll = emu_dp_poll;
	dev->wait.next_deadline = dp_next_deadline;
	dev->wait.arg = dev;
	dev->wait.sleeps = &dev->dcnt[EMU_DCNT_SLEEPS];
	dev->wait.spin_us = EMU_WAIT_SPIN_US;
	dev->ack_hold_us = EMU_NET_ACK_HOLD_US;
	dev->map_budget = EMU_MAP_BUDGET_DEFAULT;
}

void emu_dp_qp_release(struct emu_qp *qp)
{
	emu_sq_db_detach(qp);
	emu_timer_cancel(qp);
	emu_list_del(&qp->run_link);
	emu_list_del(&qp->sq_link);
	emu_list_del(&qp->rnr_link);
}
