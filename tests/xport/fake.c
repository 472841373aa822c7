/* SPDX-License-Identifier: MIT */
/*
 * The fake world of tests/xport (see fake.h): the engine's ops implemented
 * over plain heap memory and an in-process packet queue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/bth.h>
#include <wire/crc32.h>
#include <wire/ext.h>
#include <wire/icrc.h>
#include <wire/validate.h>
#include "fake.h"

static uint64_t fake_rand(struct fake_net *net)
{
	/* xorshift64*: deterministic per seed. */
	uint64_t x = net->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	net->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static bool fake_chance(struct fake_net *net, unsigned pm)
{
	return pm && fake_rand(net) % 1000 < pm;
}

/* The seeded faults of one packet, in per mille each, as FAKE_* bits. */
static int fake_draw(struct fake_net *net, unsigned drop, unsigned dup, unsigned reorder,
		     unsigned corrupt)
{
	int fate = 0;

	if (fake_chance(net, drop))
		fate |= FAKE_DROP;
	if (fake_chance(net, dup))
		fate |= FAKE_DUP;
	if (fake_chance(net, reorder))
		fate |= FAKE_REORDER;
	if (fake_chance(net, corrupt))
		fate |= FAKE_CORRUPT;
	return fate;
}

void fake_pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
}

/* ---- ops ---------------------------------------------------------------- */

static struct fake_host *fake_host_by_gid(struct fake_net *net, const uint8_t *gid)
{
	for (int i = 0; i < 2; i++)
		if (net->host[i] && !memcmp(net->host[i]->gid, gid, XPORT_GID_BYTES))
			return net->host[i];
	return NULL;
}

static void fake_log_pkt(struct fake_log *e, const uint8_t *buf, size_t len)
{
	struct wire_pkt p;
	const struct wire_bth *bth = (const struct wire_bth *)buf;

	memset(e, 0, sizeof(*e));
	e->crc = wire_crc32(buf, len);
	e->syndrome = -1;
	e->srqn = -1;
	e->feth_plt = e->feth_sel = -1;
	e->opcode = wire_bth_get_opcode(bth);
	e->psn = wire_bth_get_psn(bth);
	e->qpn = wire_bth_get_destqp(bth);
	e->ackreq = wire_bth_get_ackreq(bth);
	e->se = wire_bth_get_se(bth);
	if (wire_validate(buf, len, &p) != WIRE_R_OK)
		return;
	e->paylen = (uint32_t)p.payload_len;
	if (wire_pkt_aeth(&p)) {
		e->syndrome = wire_aeth_get_syndrome(wire_pkt_aeth(&p));
		e->msn = wire_aeth_get_msn(wire_pkt_aeth(&p));
	}
	if (wire_pkt_reth(&p)) {
		e->dmalen = wire_reth_get_dmalen(wire_pkt_reth(&p));
		e->va = wire_reth_get_va(wire_pkt_reth(&p));
	}
	if (wire_pkt_atmeth(&p))
		e->va = wire_atmeth_get_va(wire_pkt_atmeth(&p));
	if (wire_pkt_xrceth(&p))
		e->srqn = (int)wire_xrceth_get_srqn(wire_pkt_xrceth(&p));
	if (wire_pkt_feth(&p)) {
		e->feth_plt = (int)wire_feth_get_plt(wire_pkt_feth(&p));
		e->feth_sel = (int)wire_feth_get_sel(wire_pkt_feth(&p));
		e->rkey = wire_reth_get_rkey(wire_pkt_reth(&p));
	}
}

static void fake_enqueue(struct fake_net *net, struct fake_host *to, const struct xport_route *rt,
			 const void *pkt, size_t len, bool reorder)
{
	struct fake_inflight *f;
	unsigned pos;

	if (net->qlen == net->qcap) {
		unsigned ncap = net->qcap ? net->qcap * 2 : 16;
		struct fake_inflight *nq = malloc(ncap * sizeof(*nq));

		for (unsigned i = 0; i < net->qlen; i++)
			nq[i] = net->q[(net->qhead + i) % net->qcap];
		free(net->q);
		net->q = nq;
		net->qhead = 0;
		net->qcap = ncap;
	}
	pos = net->qlen;
	f = &net->q[(net->qhead + pos) % net->qcap];
	f->to = to;
	f->rt = *rt;
	f->len = len;
	memcpy(f->buf, pkt, len);
	net->qlen++;
	if (reorder && net->qlen > 1) {
		/* Swap with a random earlier packet still queued: it overtakes it. */
		unsigned j = (unsigned)(fake_rand(net) % (net->qlen - 1));
		struct fake_inflight tmp = net->q[(net->qhead + j) % net->qcap];

		net->q[(net->qhead + j) % net->qcap] = *f;
		*f = tmp;
	}
}

/* ---- the timed network: a min-heap of packets on their arrival time ---- */

static bool fake_timed_before(const struct fake_timed *a, const struct fake_timed *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void fake_heap_push(struct fake_net *net, struct fake_timed *t)
{
	unsigned i;

	if (net->nheap == net->capheap) {
		net->capheap = net->capheap ? net->capheap * 2 : 256;
		net->heap = realloc(net->heap, net->capheap * sizeof(*net->heap));
	}
	i = net->nheap++;
	while (i && fake_timed_before(t, net->heap[(i - 1) / 2])) {
		net->heap[i] = net->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	net->heap[i] = t;
}

static struct fake_timed *fake_heap_pop(struct fake_net *net)
{
	struct fake_timed *top = net->heap[0], *last;
	unsigned i = 0;

	last = net->heap[--net->nheap];
	for (;;) {
		unsigned c = 2 * i + 1;

		if (c >= net->nheap)
			break;
		if (c + 1 < net->nheap && fake_timed_before(net->heap[c + 1], net->heap[c]))
			c++;
		if (!fake_timed_before(net->heap[c], last))
			break;
		net->heap[i] = net->heap[c];
		i = c;
	}
	if (net->nheap)
		net->heap[i] = last;
	return top;
}

void fake_net_timed(struct fake_net *net, const struct fake_link *a_to_b,
		    const struct fake_link *b_to_a)
{
	net->timed = true;
	net->link[0] = *a_to_b;
	net->link[1] = *b_to_a;
	net->link[0].busy_until = net->link[1].busy_until = 0;
}

/* Put one packet on host from's link: it arrives after serialisation, delay and jitter. */
static void fake_timed_send(struct fake_net *net, int from, struct fake_host *to,
			    const struct xport_route *rt, const void *pkt, size_t len, bool reorder)
{
	struct fake_link *l = &net->link[from];
	struct fake_timed *t = malloc(sizeof(*t));
	uint64_t start = l->busy_until > net->now ? l->busy_until : net->now;
	int64_t at;

	if (l->rate_bpus)
		start += (len + l->rate_bpus - 1) / l->rate_bpus;
	l->busy_until = start;
	at = (int64_t)(start + l->delay_us);
	if (l->jitter_us)
		at += (int64_t)(fake_rand(net) % (2ull * l->jitter_us + 1)) - (int64_t)l->jitter_us;
	if (reorder)
		at += l->reorder_us;
	t->at = at < (int64_t)net->now ? net->now : (uint64_t)at;
	t->seq = net->seq++;
	t->f.to = to;
	t->f.rt = *rt;
	t->f.len = len;
	memcpy(t->f.buf, pkt, len);
	fake_heap_push(net, t);
}

/* Queue a packet on the FIFO or the timed network. */
static void fake_put(struct fake_net *net, int from, struct fake_host *to,
		     const struct xport_route *rt, const void *pkt, size_t len, bool reorder)
{
	if (net->timed)
		fake_timed_send(net, from, to, rt, pkt, len, reorder);
	else
		fake_enqueue(net, to, rt, pkt, len, reorder);
}

static int fake_send_packet(void *ctx, struct xport_qp *qp, const struct xport_route *rt,
			    const void *pkt, size_t len)
{
	struct fake_host *h = ctx;
	struct fake_net *net = h->net;
	struct fake_host *to = fake_host_by_gid(net, rt->dgid);
	struct fake_log *e, scratch;
	int fate = 0;

	(void)qp;
	if (pkt == h->tx_buf)
		h->tx_in_place++;
	if (net->nolog) {
		e = &scratch;
	} else {
		if (net->nlog == net->caplog) {
			net->caplog = net->caplog ? net->caplog * 2 : 1024;
			net->log = realloc(net->log, net->caplog * sizeof(*net->log));
		}
		e = &net->log[net->nlog++];
	}
	net->logged++;
	fake_log_pkt(e, pkt, len);
	e->from = h->id;
	if (net->filter)
		fate |= net->filter(net, e, net->filter_arg);
	fate |= fake_draw(net, net->drop_pm, net->dup_pm, net->reorder_pm, net->corrupt_pm);
	if (net->timed) {
		const struct fake_link *l = &net->link[h->id];

		fate |= fake_draw(net, l->drop_pm, l->dup_pm, l->reorder_pm, l->corrupt_pm);
	}
	e->fate = fate;
	if (!to || fate & FAKE_DROP) {
		net->dropped++;
		return 0;
	}
	if (fate & FAKE_CORRUPT) {
		uint8_t copy[XPORT_MAX_PKT_BYTES];

		size_t at = fake_rand(net) % len;

		memcpy(copy, pkt, len);
		copy[at] ^= (uint8_t)(1u << (fake_rand(net) % 8));
		net->corrupted++;
		if (at == 4)
			net->corrupted_masked++;
		fake_put(net, h->id, to, rt, copy, len, fate & FAKE_REORDER);
	} else {
		fake_put(net, h->id, to, rt, pkt, len, fate & FAKE_REORDER);
	}
	if (fate & FAKE_REORDER)
		net->reordered++;
	if (fate & FAKE_DUP) {
		net->duplicated++;
		fake_put(net, h->id, to, rt, pkt, len, false);
	}
	return 0;
}

static struct xport_qp *fake_lookup_qp(void *ctx, uint32_t qpn)
{
	struct fake_host *h = ctx;

	for (int i = 0; i < h->nqp; i++)
		if (h->qp[i]->x.qpn == qpn)
			return &h->qp[i]->x;
	return NULL;
}

static int fake_mr_find(struct fake_host *h, uint32_t key, uint64_t addr, size_t len,
			uint32_t access, struct fake_mr **out)
{
	/* One PD per fake host: which PD a receive WQE's key belongs to
	 * (XPORT_ACCESS_RECV_WQE) makes no difference here. */
	access &= ~XPORT_ACCESS_RECV_WQE;
	for (int i = 0; i < h->nmr; i++) {
		struct fake_mr *m = &h->mr[i];
		uint64_t base = (uint64_t)(uintptr_t)m->buf;

		if (m->key != key || m->dead)
			continue;
		if (addr < base || len > m->len || addr - base > m->len - len)
			return -ERANGE;
		if ((m->access & access) != access)
			return -EACCES;
		*out = m;
		return 0;
	}
	return -ENOENT;
}

/* With crc, a read folds the bytes into *crc as it copies them (dma_read_crc). */
static int fake_dma(struct fake_host *h, uint32_t key, uint64_t addr, void *buf, size_t len,
		    uint32_t access, enum xport_dma dir, uint32_t *crc)
{
	struct fake_mr *m;
	int rc = fake_mr_find(h, key, addr, len, access, &m);

	h->dma_calls++;
	if (rc)
		return rc;
	if (dir == XPORT_DMA_TO_BUF && crc)
		*crc = wire_crc32_update_copy(*crc, buf, (const void *)(uintptr_t)addr, len);
	else if (dir == XPORT_DMA_TO_BUF)
		memcpy(buf, (void *)(uintptr_t)addr, len);
	else if (dir == XPORT_DMA_FROM_BUF)
		memcpy((void *)(uintptr_t)addr, buf, len);
	return 0;
}

static int fake_dma_lkey(void *ctx, struct xport_qp *qp, uint32_t lkey, uint64_t addr, void *buf,
			 size_t len, uint32_t access, enum xport_dma dir)
{
	(void)qp;
	return fake_dma(ctx, lkey, addr, buf, len, access, dir, NULL);
}

static int fake_dma_rkey(void *ctx, struct xport_qp *qp, uint32_t rkey, uint64_t va, void *buf,
			 size_t len, uint32_t access, enum xport_dma dir)
{
	(void)qp;
	return fake_dma(ctx, rkey, va, buf, len, access, dir, NULL);
}

static int fake_dma_read_crc(void *ctx, struct xport_qp *qp, uint32_t key, bool remote,
			     uint64_t addr, void *buf, size_t len, uint32_t access, uint32_t *crc)
{
	struct fake_host *h = ctx;

	(void)qp;
	(void)remote;
	h->dma_folds++;
	return fake_dma(h, key, addr, buf, len, access, XPORT_DMA_TO_BUF, crc);
}

static int fake_atomic(void *ctx, struct xport_qp *qp, uint32_t rkey, uint64_t va,
		       enum xport_atomic_op op, uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	struct fake_host *h = ctx;
	struct fake_mr *m;
	uint64_t v;
	int rc = fake_mr_find(
	    h, rkey, va, 8,
	    op == XPORT_ATOMIC_WRITE ? UROCE_ACCESS_REMOTE_WRITE : UROCE_ACCESS_REMOTE_ATOMIC, &m);

	(void)qp;
	if (rc)
		return rc;
	if (op == XPORT_ATOMIC_WRITE) {
		memcpy((void *)(uintptr_t)va, &compare_add, 8); /* the bytes as sent */
		h->atomics++;
		return 0;
	}
	memcpy(&v, (void *)(uintptr_t)va, 8);
	*orig = v;
	if (op == XPORT_ATOMIC_CMP_SWP) {
		if (v == compare_add)
			v = swap;
	} else {
		v += compare_add;
	}
	memcpy((void *)(uintptr_t)va, &v, 8);
	h->atomics++;
	return 0;
}

/* FLUSH: key, flush access and range (the whole MR with whole_mr) as the daemon checks them. */
static int fake_flush(void *ctx, struct xport_qp *qp, uint32_t rkey, uint64_t va, uint32_t len,
		      uint32_t access, bool whole_mr)
{
	struct fake_host *h = ctx;
	struct fake_mr *m;
	int rc;

	(void)qp;
	h->flush_va = va;
	h->flush_len = len;
	h->flush_access = access;
	h->flush_whole = whole_mr;
	if (whole_mr) {
		for (int i = 0; i < h->nmr; i++)
			if (h->mr[i].key == rkey && !h->mr[i].dead) {
				va = (uint64_t)(uintptr_t)h->mr[i].buf;
				len = (uint32_t)h->mr[i].len;
				break;
			}
	}
	rc = fake_mr_find(h, rkey, va, len, access, &m);
	if (!rc)
		h->flushes++;
	return rc;
}

static int fake_bind_mw(void *ctx, struct xport_qp *qp, const struct xport_wqe *wqe)
{
	struct fake_host *h = ctx;
	uint32_t i = wqe->bind.mw_handle - 1;

	(void)qp;
	if (i >= (uint32_t)h->nmr || !h->mr[i].window || !h->mr[i].dead) {
		h->failed_mw_ops++;
		return -EINVAL;
	}
	h->mr[i].key = wqe->bind.rkey;
	h->mr[i].dead = false;
	h->binds++;
	return 0;
}

static int fake_invalidate(void *ctx, struct xport_qp *qp, uint32_t rkey, bool remote)
{
	struct fake_host *h = ctx;

	(void)qp;
	h->last_inv_remote = remote;
	for (int i = 0; i < h->nmr; i++) {
		if (h->mr[i].key == rkey && h->mr[i].window && !h->mr[i].dead) {
			h->mr[i].dead = true;
			h->invals++;
			return 0;
		}
	}
	h->failed_mw_ops++;
	return -EINVAL;
}

static int fake_get_recv_wqe(void *ctx, struct xport_qp *qp, struct xport_recv_wqe *wqe)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	(void)ctx;
	if (qp->type == UROCE_QPT_XRC_RECV) {
		struct fake_srq *s = q->xrc_srq;

		if (!s || s->rq_head == s->rq_tail)
			return -EAGAIN;
		*wqe = s->rq[s->rq_head++ % 64];
		return 0;
	}
	if (q->rq_head == q->rq_tail)
		return -EAGAIN;
	*wqe = q->rq[q->rq_head++ % FAKE_RQ_SIZE];
	return 0;
}

static void fake_push_cqe(void *ctx, struct xport_qp *qp, bool recv, const struct uroce_cqe *cqe)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	struct uroce_cqe **arr = recv ? &q->rcq : &q->scq;
	unsigned *n = recv ? &q->nrcq : &q->nscq, *cap = recv ? &q->cap_rcq : &q->cap_scq;

	(void)ctx;
	if (recv && qp->type == UROCE_QPT_XRC_RECV) {
		/* The CQ of the SRQ the message named. */
		if (q->xrc_srq && q->xrc_srq->ncq < 64)
			q->xrc_srq->cq[q->xrc_srq->ncq++] = *cqe;
		return;
	}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*arr = realloc(*arr, *cap * sizeof(**arr));
	}
	(*arr)[(*n)++] = *cqe;
}

static int fake_xrc_srq(void *ctx, struct xport_qp *qp, uint32_t srqn)
{
	struct fake_host *h = ctx;
	struct fake_qp *q = (struct fake_qp *)qp;

	for (int i = 0; i < h->nsrq; i++) {
		if (h->srq[i].num != srqn)
			continue;
		if (h->srq[i].domain != q->xrc_domain)
			return -EACCES;
		q->xrc_srq = &h->srq[i];
		return 0;
	}
	return -ENOENT;
}

static uint64_t fake_now_us(void *ctx)
{
	struct fake_host *h = ctx;

	h->clock_reads++;
	return h->net->now;
}

static uint64_t fake_ticks(void *ctx)
{
	struct fake_host *h = ctx;

	return h->ticks += FAKE_TICK;
}

static void fake_arm_timer(void *ctx, struct xport_qp *qp, uint64_t deadline)
{
	(void)ctx;
	((struct fake_qp *)qp)->timer = deadline;
}

static void fake_schedule(void *ctx, struct xport_qp *qp)
{
	(void)ctx;
	((struct fake_qp *)qp)->scheduled = true;
}

static void fake_qp_error(void *ctx, struct xport_qp *qp)
{
	(void)ctx;
	((struct fake_qp *)qp)->qp_errors++;
}

static void fake_sq_drained(void *ctx, struct xport_qp *qp)
{
	struct fake_qp *q = (struct fake_qp *)qp;

	(void)ctx;
	q->drained++;
	q->nscq_at_drained = q->nscq;
}

static void fake_comm_est(void *ctx, struct xport_qp *qp)
{
	(void)ctx;
	((struct fake_qp *)qp)->comm_est++;
}

static void fake_mcast_each(void *ctx, const uint8_t gid[XPORT_GID_BYTES],
			    void (*fn)(struct xport_qp *qp, void *arg), void *arg)
{
	struct fake_host *h = ctx;

	h->mcast_calls++;
	if (memcmp(gid, h->mcast_gid, XPORT_GID_BYTES))
		return;
	for (int i = 0; i < h->nqp; i++)
		if (h->qp[i]->mcast)
			fn(&h->qp[i]->x, arg);
}

/* Headers and the start of the payload: what a packet builder could forget. */
#define FAKE_SCRIBBLE_BYTES 256

static void *fake_tx_buf(void *ctx)
{
	struct fake_host *h = ctx;

	memset(h->tx_buf, 0xa5, FAKE_SCRIBBLE_BYTES);
	return h->tx_buf;
}

static const struct xport_ops fake_ops = {
    .send_packet = fake_send_packet,
    .tx_buf = fake_tx_buf,
    .lookup_qp = fake_lookup_qp,
    .dma_lkey = fake_dma_lkey,
    .dma_rkey = fake_dma_rkey,
    .atomic = fake_atomic,
    .flush = fake_flush,
    .bind_mw = fake_bind_mw,
    .invalidate = fake_invalidate,
    .get_recv_wqe = fake_get_recv_wqe,
    .push_cqe = fake_push_cqe,
    .now_us = fake_now_us,
    .ticks = fake_ticks,
    .arm_timer = fake_arm_timer,
    .schedule = fake_schedule,
    .qp_error = fake_qp_error,
    .sq_drained = fake_sq_drained,
    .comm_est = fake_comm_est,
    .mcast_each = fake_mcast_each,
    .xrc_srq = fake_xrc_srq,
};

/* fake_ops with payloads folded into the ICRC as they are gathered (fake_fold). */
static const struct xport_ops *fake_ops_folding(void)
{
	static struct xport_ops ops;

	ops = fake_ops;
	ops.dma_read_crc = fake_dma_read_crc;
	return &ops;
}

bool fake_fold;

/* ---- set-up -------------------------------------------------------------- */

/*
 * The packet ring of the last network torn down, kept for the next one (the
 * fuzz target sets up a network per input; each entry is 4 KiB and more).
 * Entries are written by fake_enqueue before they are read.
 */
static struct fake_inflight *fake_spare_q;
static unsigned fake_spare_qcap;

void fake_net_init(struct fake_net *net, uint64_t seed)
{
	memset(net, 0, sizeof(*net));
	net->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	net->now = 1000000;
	net->q = fake_spare_q;
	net->qcap = fake_spare_qcap;
	fake_spare_q = NULL;
	fake_spare_qcap = 0;
}

void fake_net_fini(struct fake_net *net)
{
	while (net->nheap)
		free(fake_heap_pop(net));
	free(net->heap);
	if (net->qcap > fake_spare_qcap) {
		free(fake_spare_q);
		fake_spare_q = net->q;
		fake_spare_qcap = net->qcap;
	} else {
		free(net->q);
	}
	free(net->log);
	memset(net, 0, sizeof(*net));
}

void fake_host_init(struct fake_host *h, struct fake_net *net, int id, const uint8_t ip[4])
{
	memset(h, 0, sizeof(*h));
	h->net = net;
	h->id = id;
	h->gid[10] = 0xff;
	h->gid[11] = 0xff;
	memcpy(h->gid + 12, ip, 4);
	net->host[id] = h;
	xport_dev_init(&h->dev, fake_fold ? fake_ops_folding() : &fake_ops, h);
}

/*
 * Receive rings are FAKE_RQ_SIZE entries (half a MiB): kept for the next
 * QP instead of freed, so that a program creating QPs over and over (the
 * fuzz target: ten per input) does not map and fault them in each time.
 * A ring's entries are written by a post before they are read.
 */
#define FAKE_RQ_POOL 16
static struct xport_recv_wqe *fake_rq_pool[FAKE_RQ_POOL];
static unsigned fake_rq_pooled;

static struct xport_recv_wqe *fake_rq_get(void)
{
	if (fake_rq_pooled)
		return fake_rq_pool[--fake_rq_pooled];
	return malloc(FAKE_RQ_SIZE * sizeof(struct xport_recv_wqe));
}

static void fake_rq_put(struct xport_recv_wqe *rq)
{
	if (rq && fake_rq_pooled < FAKE_RQ_POOL)
		fake_rq_pool[fake_rq_pooled++] = rq;
	else
		free(rq);
}

void fake_host_fini(struct fake_host *h)
{
	for (int i = 0; i < h->nqp; i++) {
		xport_qp_fini(&h->qp[i]->x);
		free(h->qp[i]->scq);
		free(h->qp[i]->rcq);
		fake_rq_put(h->qp[i]->rq);
		free(h->qp[i]);
	}
	for (int i = 0; i < h->nmr; i++)
		free(h->mr[i].buf);
	h->nqp = 0;
	h->nmr = 0;
}

struct fake_mr *fake_mr_reg(struct fake_host *h, size_t len, uint32_t access)
{
	struct fake_mr *m = &h->mr[h->nmr];

	m->key = 0x100u * (uint32_t)(h->id + 1) + (uint32_t)h->nmr;
	m->buf = calloc(1, len ? len : 1);
	m->len = len;
	m->access = access;
	h->nmr++;
	return m;
}

struct fake_qp *fake_qp_create(struct fake_host *h, uint32_t type, uint32_t qpn,
			       uint32_t max_send_wr, bool sq_sig_all)
{
	return fake_qp_create_caps(h, type, qpn, max_send_wr, sq_sig_all, 0, 0);
}

struct fake_qp *fake_qp_create_caps(struct fake_host *h, uint32_t type, uint32_t qpn,
				    uint32_t max_send_wr, bool sq_sig_all, uint32_t max_sge,
				    uint32_t max_inline)
{
	struct fake_qp *q = calloc(1, sizeof(*q));
	struct xport_qp_init init = {
	    .type = type,
	    .qpn = qpn,
	    .max_send_wr = max_send_wr,
	    .sq_sig_all = sq_sig_all,
	    .max_sge = max_sge,
	    .max_inline = max_inline,
	};

	q->rq = fake_rq_get();
	if (!q->rq || xport_qp_init(&h->dev, &q->x, &init)) {
		fake_rq_put(q->rq);
		free(q);
		return NULL;
	}
	q->host = h;
	h->qp[h->nqp++] = q;
	return q;
}

void fake_conn_defaults(struct fake_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->mtu = 3;
	c->timeout = 14;
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 1;
	c->max_rd_atomic = 16;
	c->max_dest_rd_atomic = 16;
	c->access =
	    UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_ATOMIC;
	c->psn_a = 100;
	c->psn_b = 5000;
}

static void fake_bring_up(struct fake_qp *q, struct fake_qp *peer, const struct fake_conn *c,
			  uint32_t sq_psn, uint32_t rq_psn)
{
	struct xport_qp_attr a = {0};

	a.state = UROCE_QPS_INIT;
	a.access = c->access;
	a.pkey = 0xffff;
	a.pkey_index = 0;
	xport_modify(&q->x, &a, UROCE_QP_STATE | UROCE_QP_ACCESS_FLAGS | UROCE_QP_PKEY_INDEX);

	a.state = UROCE_QPS_RTR;
	memcpy(a.av.sgid, q->host->gid, XPORT_GID_BYTES);
	memcpy(a.av.dgid, peer->host->gid, XPORT_GID_BYTES);
	a.av.hop_limit = 64;
	a.path_mtu = c->mtu;
	a.dest_qpn = peer->x.qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = c->max_dest_rd_atomic;
	a.min_rnr_timer = c->min_rnr_timer;
	xport_modify(&q->x, &a,
		     UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			 UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER);

	a.state = UROCE_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = c->max_rd_atomic;
	xport_modify(&q->x, &a,
		     UROCE_QP_STATE | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT | UROCE_QP_RNR_RETRY |
			 UROCE_QP_SQ_PSN | UROCE_QP_MAX_QP_RD_ATOMIC);
}

void fake_connect(struct fake_qp *a, struct fake_qp *b, const struct fake_conn *c)
{
	fake_bring_up(a, b, c, c->psn_a, c->psn_b);
	fake_bring_up(b, a, c, c->psn_b, c->psn_a);
}

struct fake_srq *fake_srq_create(struct fake_host *h, uint32_t num, int domain)
{
	struct fake_srq *s = &h->srq[h->nsrq++];

	memset(s, 0, sizeof(*s));
	s->num = num;
	s->domain = domain;
	return s;
}

void fake_srq_post_recv(struct fake_srq *s, uint64_t wr_id, struct fake_mr *mr, size_t off,
			uint32_t len)
{
	struct xport_recv_wqe *w = &s->rq[s->rq_tail++ % 64];

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->sge[0].addr = (uint64_t)(uintptr_t)(mr->buf + off);
	w->sge[0].length = len;
	w->sge[0].lkey = mr->key;
}

void fake_post_recv(struct fake_qp *q, uint64_t wr_id, struct fake_mr *mr, size_t off, uint32_t len)
{
	struct xport_recv_wqe *w = &q->rq[q->rq_tail++ % FAKE_RQ_SIZE];

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->sge[0].addr = (uint64_t)(uintptr_t)(mr->buf + off);
	w->sge[0].length = len;
	w->sge[0].lkey = mr->key;
}

void fake_wqe(struct xport_wqe *w, uint64_t wr_id, uint32_t opcode, uint32_t flags,
	      struct fake_mr *mr, size_t off, uint32_t len)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = flags;
	if (mr) {
		w->num_sge = 1;
		w->sge[0].addr = (uint64_t)(uintptr_t)(mr->buf + off);
		w->sge[0].length = len;
		w->sge[0].lkey = mr->key;
	}
}

void fake_wqe_remote(struct xport_wqe *w, struct fake_mr *rmr, size_t roff)
{
	w->remote_addr = (uint64_t)(uintptr_t)(rmr->buf + roff);
	w->rkey = rmr->key;
}

int fake_post(struct fake_qp *q, const struct xport_wqe *w)
{
	return xport_post_send(&q->x, w);
}

void fake_send_req(struct fake_qp *q, uint8_t opcode, uint32_t psn, bool ackreq,
		   const uint8_t *payload, uint32_t paylen, uint64_t rva, uint32_t rkey,
		   uint32_t dmalen)
{
	const struct wire_opcode_info *info = wire_opcode_info(opcode);
	uint8_t pkt[XPORT_MAX_PKT_BYTES];
	struct xport_route rt;

	xport__bth(&q->x, pkt, opcode, psn, ackreq, paylen);
	if (info->mask & WIRE_RETH_MASK) {
		struct wire_reth *r = (struct wire_reth *)(pkt + info->offset[WIRE_HDR_RETH]);

		wire_reth_set_va(r, rva);
		wire_reth_set_rkey(r, rkey);
		wire_reth_set_dmalen(r, dmalen);
	}
	memcpy(pkt + info->hdr_bytes, payload, paylen);
	xport__route(&q->x, &rt);
	xport__xmit(&q->x, &rt, pkt, info->hdr_bytes + paylen, paylen);
}

void fake_send_xrc_req(struct fake_qp *q, uint8_t opcode, uint32_t psn, bool ackreq,
		       const uint8_t *payload, uint32_t paylen, uint32_t srqn)
{
	const struct wire_opcode_info *info = wire_opcode_info(opcode);
	uint8_t pkt[XPORT_MAX_PKT_BYTES];
	struct xport_route rt;

	xport__bth(&q->x, pkt, opcode, psn, ackreq, paylen);
	if (info->mask & WIRE_XRCETH_MASK) {
		struct wire_xrceth *x = (struct wire_xrceth *)(pkt + info->offset[WIRE_HDR_XRCETH]);

		wire_xrceth_set_resv(x, 0);
		wire_xrceth_set_srqn(x, srqn);
	}
	memcpy(pkt + info->hdr_bytes, payload, paylen);
	xport__route(&q->x, &rt);
	xport__xmit(&q->x, &rt, pkt, info->hdr_bytes + paylen, paylen);
}

/* ---- running ----------------------------------------------------------- */

static bool fake_run_scheduled(struct fake_net *net)
{
	bool any = false;

	for (int i = 0; i < 2; i++) {
		struct fake_host *h = net->host[i];

		for (int j = 0; h && j < h->nqp; j++) {
			if (!h->qp[j]->scheduled)
				continue;
			h->qp[j]->scheduled = false;
			xport_run(&h->qp[j]->x);
			any = true;
		}
	}
	return any;
}

/* Timed mode: the next packet, if it has arrived by `by`. */
static bool fake_timed_deliver(struct fake_net *net, uint64_t by)
{
	struct fake_timed *t;

	if (!net->nheap || net->heap[0]->at > by)
		return false;
	t = fake_heap_pop(net);
	if (t->at > net->now)
		net->now = t->at;
	net->delivered++;
	xport_recv_packet(&t->f.to->dev, &t->f.rt, t->f.buf, t->f.len);
	free(t);
	return true;
}

static bool fake_deliver_one(struct fake_net *net)
{
	struct fake_inflight *f;

	if (net->timed)
		return fake_timed_deliver(net, net->now);
	if (!net->qlen)
		return false;
	f = &net->q[net->qhead];
	net->qhead = (net->qhead + 1) % net->qcap;
	net->qlen--;
	net->delivered++;
	xport_recv_packet(&f->to->dev, &f->rt, f->buf, f->len);
	return true;
}

unsigned fake_deliver_all(struct fake_net *net)
{
	unsigned n = 0;

	while (fake_deliver_one(net) || fake_run_scheduled(net) ||
	       (net->timed && fake_timed_deliver(net, UINT64_MAX)))
		n++;
	return n;
}

unsigned fake_run(struct fake_net *net, unsigned max_events)
{
	unsigned n = 0;

	while (n < max_events) {
		struct fake_qp *first = NULL;

		if (fake_deliver_one(net) || fake_run_scheduled(net)) {
			n++;
			continue;
		}
		/* Idle: jump to the earliest timer or (timed) the next arrival. */
		for (int i = 0; i < 2; i++) {
			struct fake_host *h = net->host[i];

			for (int j = 0; h && j < h->nqp; j++) {
				struct fake_qp *q = h->qp[j];

				if (q->timer && (!first || q->timer < first->timer))
					first = q;
			}
		}
		if (net->timed && net->nheap && (!first || net->heap[0]->at < first->timer)) {
			fake_timed_deliver(net, UINT64_MAX);
			n++;
			continue;
		}
		if (!first)
			break;
		if (first->timer > net->now)
			net->now = first->timer;
		first->timer = 0;
		net->timers_fired++;
		xport_timeout(&first->x);
		n++;
	}
	return n;
}

void fake_dump(const struct fake_net *net)
{
	for (unsigned i = 0; i < net->nlog; i++) {
		const struct fake_log *e = &net->log[i];

		fprintf(stderr, "%4u %c op 0x%02x psn %u%s syn %d len %u%s\n", i, "AB"[e->from & 1],
			e -> opcode, e -> psn, e -> ackreq ? " A" : "", e->syndrome, e->paylen,
			e->fate &FAKE_DROP ? " DROP" : "");
	}
}

unsigned fake_count(const struct fake_net *net, int from, int opcode)
{
	unsigned n = 0;

	for (unsigned i = 0; i < net->nlog; i++)
		if (net->log[i].from == from && (opcode < 0 || net->log[i].opcode == opcode))
			n++;
	return n;
}

int fake_find(const struct fake_net *net, int from, int opcode, unsigned nth)
{
	for (unsigned i = 0; i < net->nlog; i++) {
		if (net->log[i].from != from || (opcode >= 0 && net->log[i].opcode != opcode))
			continue;
		if (!nth--)
			return (int)i;
	}
	return -1;
}

struct fake_env *fake_env_new(uint64_t seed, uint32_t type, const struct fake_conn *c)
{
	static const uint8_t ipa[4] = {10, 0, 0, 1}, ipb[4] = {10, 0, 0, 2};
	struct fake_env *e = calloc(1, sizeof(*e));

	fake_net_init(&e->net, seed);
	fake_host_init(&e->a, &e->net, 0, ipa);
	fake_host_init(&e->b, &e->net, 1, ipb);
	if (c)
		e->conn = *c;
	else
		fake_conn_defaults(&e->conn);
	e->qa = fake_qp_create(&e->a, type, 0x11, 256, false);
	e->qb = fake_qp_create(&e->b, type, 0x22, 256, false);
	e->ma = fake_mr_reg(&e->a, FAKE_MR_BYTES, FAKE_ALL_ACCESS);
	e->mb = fake_mr_reg(&e->b, FAKE_MR_BYTES, FAKE_ALL_ACCESS);
	fake_connect(e->qa, e->qb, &e->conn);
	return e;
}

void fake_env_free(struct fake_env *e)
{
	fake_host_fini(&e->a);
	fake_host_fini(&e->b);
	fake_net_fini(&e->net);
	free(e);
}
