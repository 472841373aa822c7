/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: creation (ibv_create_qp, and ibv_create_qp_ex through the
 * extended context, with the ibv_wr_* send API when send_ops_flags asks for
 * it), modify, query and destroy through the daemon, and the data path:
 * ibv_post_send / ibv_post_recv validate each work request, write it as a
 * WQE into the shared ring, publish the producer index with a release store
 * and ring the doorbell only if the daemon sleeps. Errors follow the verbs
 * conventions: positive errno and *bad_wr pointing at the first WR not
 * posted (ENOMEM for a full queue, EINVAL for a malformed WR or a QP state
 * that does not accept WRs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

/* The uapi restates verbs values; they must not drift. */
#define SAME(a, b) ((long)(a) == (long)(b))
_Static_assert(SAME(UROCE_QPT_RC, IBV_QPT_RC) && SAME(UROCE_QPT_UC, IBV_QPT_UC) &&
		   SAME(UROCE_QPT_UD, IBV_QPT_UD) &&
		   SAME(UROCE_QPT_RAW_PACKET, IBV_QPT_RAW_PACKET) &&
		   SAME(UROCE_QPT_XRC_SEND, IBV_QPT_XRC_SEND),
	       "QP type values");
_Static_assert(SAME(UROCE_QPS_ERR, IBV_QPS_ERR) && SAME(UROCE_QPS_SQE, IBV_QPS_SQE) &&
		   SAME(UROCE_QPS_RTS, IBV_QPS_RTS),
	       "QP state values");
_Static_assert(SAME(UROCE_QP_DEST_QPN, IBV_QP_DEST_QPN) && SAME(UROCE_QP_CAP, IBV_QP_CAP) &&
		   SAME(UROCE_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC) &&
		   SAME(UROCE_QP_RATE_LIMIT, IBV_QP_RATE_LIMIT),
	       "QP attribute mask values");
#define WR_SAME(sym, val, ...) _Static_assert(SAME(UROCE_WR_##sym, IBV_WR_##sym), "WR " #sym);
UROCE_WR_LIST(WR_SAME)
#undef WR_SAME
_Static_assert(SAME(UROCE_SEND_INLINE, IBV_SEND_INLINE) &&
		   SAME(UROCE_SEND_SIGNALED, IBV_SEND_SIGNALED) &&
		   SAME(UROCE_SEND_SOLICITED, IBV_SEND_SOLICITED),
	       "send flag values");
_Static_assert(SAME(UROCE_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC) &&
		   SAME(UROCE_ACCESS_OPTIONAL_MASK, IBV_ACCESS_OPTIONAL_RANGE),
	       "access flag values");
_Static_assert(SAME(UROCE_EVENT_QP_LAST_WQE_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED) &&
		   SAME(UROCE_EVENT_GID_CHANGE, IBV_EVENT_GID_CHANGE),
	       "event type values");
_Static_assert(SAME(UROCE_REREG_CHANGE_ACCESS, IBV_REREG_MR_CHANGE_ACCESS), "rereg flag values");
_Static_assert(SAME(UROCE_WC_FLUSH, IBV_WC_FLUSH) &&
		   SAME(UROCE_ACCESS_FLUSH_GLOBAL, IBV_ACCESS_FLUSH_GLOBAL) &&
		   SAME(UROCE_ACCESS_FLUSH_PERSISTENT, IBV_ACCESS_FLUSH_PERSISTENT) &&
		   SAME(UROCE_FLUSH_GLOBAL, IBV_FLUSH_GLOBAL) &&
		   SAME(UROCE_FLUSH_PERSISTENT, IBV_FLUSH_PERSISTENT) &&
		   SAME(UROCE_FLUSH_RANGE, IBV_FLUSH_RANGE) && SAME(UROCE_FLUSH_MR, IBV_FLUSH_MR),
	       "FLUSH values (rdma-core 45)");
#undef SAME
/* rdma-core 45's ibv_qp_ex is 44's with wr_flush appended (shim.h). */
_Static_assert(offsetof(struct shim_qp, wr_flush) ==
		   offsetof(struct shim_qp, qpx) + sizeof(struct ibv_qp_ex),
	       "wr_flush right after rdma-core 44's struct ibv_qp_ex");

/*
 * ibv_qp_cap and uroce_qp_cap, and the fields of ibv_qp_attr that
 * uroce_qp_attr carries under the same name (the enums and the address
 * vectors are converted apart), copied either way.
 */
#define QP_CAP_COPY(dst, src)                                  \
	do {                                                   \
		(dst).max_send_wr = (src).max_send_wr;         \
		(dst).max_recv_wr = (src).max_recv_wr;         \
		(dst).max_send_sge = (src).max_send_sge;       \
		(dst).max_recv_sge = (src).max_recv_sge;       \
		(dst).max_inline_data = (src).max_inline_data; \
	} while (0)
#define QP_ATTR_FIELDS(X)      \
	X(qkey)                \
	X(rq_psn)              \
	X(sq_psn)              \
	X(dest_qp_num)         \
	X(qp_access_flags)     \
	X(rate_limit)          \
	X(pkey_index)          \
	X(alt_pkey_index)      \
	X(en_sqd_async_notify) \
	X(sq_draining)         \
	X(max_rd_atomic)       \
	X(max_dest_rd_atomic)  \
	X(min_rnr_timer)       \
	X(port_num)            \
	X(timeout)             \
	X(retry_cnt)           \
	X(rnr_retry)           \
	X(alt_port_num)        \
	X(alt_timeout)
#define QP_ATTR_COPY(f) o->f = a->f;

/*
 * What each WR opcode is and which QP types carry it is UROCE_WR_LIST
 * (uroce/wr_opcode.h): the posting checks below look it up. The
 * ibv_qp_create_send_ops_flags bit of each opcode of the list:
 */
static const uint64_t op_bits[] = {
#define OP_BIT(sym, val, ...) [val] = IBV_QP_EX_WITH_##sym,
    UROCE_WR_LIST(OP_BIT)
#undef OP_BIT
};

/* The ibv_wr_* operations offered on a QP type: those of the opcodes it carries. */
static uint64_t ops_of_type(enum ibv_qp_type t)
{
	uint64_t ops = 0;

	for (uint32_t op = 0; op < sizeof(op_bits) / sizeof(op_bits[0]); op++)
		if (uroce_wr_ok(t, op))
			ops |= op_bits[op];
	return ops;
}

/* The send_ops_flags bit of a WR opcode (0: not in the list). */
static uint64_t op_bit(uint32_t opcode)
{
	return opcode < sizeof(op_bits) / sizeof(op_bits[0]) ? op_bits[opcode] : 0;
}

/* Only what carries a payload (SENDs, WRITEs) can be inline. */
static int can_inline(uint32_t opcode)
{
	return uroce_wr_flags(opcode) & UROCE_WR_F_INLINE;
}

int shim_wq_map(struct shim_wq *wq, int fd, size_t bytes)
{
	struct uroce_ring_hdr *h = shim_map_ring(fd, bytes);

	if (!h)
		return -errno;
	if (h->magic != UROCE_RING_MAGIC) {
		munmap(h, bytes);
		return -EPROTO;
	}
	wq->ring = h;
	wq->bytes = bytes;
	wq->entries = h->entries;
	wq->stride = h->stride;
	wq->max_sge = h->max_sge;
	wq->max_inline = h->max_inline;
	wq->prod = h->prod;
	wq->cons_seen = uroce_load_acquire(&h->cons);
	wq->db_index = h->db_index < UROCE_SQ_DB_BITS ? h->db_index : UINT32_MAX;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

void shim_wq_unmap(struct shim_wq *wq)
{
	if (!wq->ring)
		return;
	munmap(wq->ring, wq->bytes);
	pthread_spin_destroy(&wq->lock);
	wq->ring = NULL;
}

static uint32_t wq_state(const struct shim_wq *wq)
{
	return __atomic_load_n(&wq->ring->qp_state, __ATOMIC_ACQUIRE);
}

/* Room for one more WQE? Re-reads the consumer index only when the one last
 * seen shows none (under wq->lock). */
static int wq_full(struct shim_wq *wq, uint32_t prod)
{
	if (prod - wq->cons_seen < wq->entries)
		return 0;
	wq->cons_seen = uroce_load_acquire(&wq->ring->cons);
	return prod - wq->cons_seen >= wq->entries;
}

/* ------------------------------------------------------------------------ */
/* Posting.                                                                  */

/*
 * The bind of a BIND_MW WR into w: window and MR of this context (the
 * daemon checks the rest when the bind executes, IBA 10.6.7.3). A type 1
 * window is bound with ibv_bind_mw only (type1 set), a type 2 one with
 * IBV_WR_BIND_MW or ibv_wr_bind_mw.
 */
static int fill_bind(struct shim_qp *qp, struct ibv_mw *mw, uint32_t rkey,
		     const struct ibv_mw_bind_info *bi, int type1, struct uroce_send_wqe *w)
{
	struct ibv_context *c = qp->qpx.qp_base.context;

	if (!mw || mw->context != c || mw->type != (type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
		return EINVAL;
	if (bi->mr && bi->mr->context != c)
		return EINVAL;
	w->wr.bind.mw_handle = mw->handle;
	w->wr.bind.rkey = rkey;
	w->wr.bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
	w->wr.bind.access = bi->mw_access_flags;
	w->wr.bind.addr = bi->addr;
	w->wr.bind.length = bi->length;
	return 0;
}

/*
 * A snapshot of a small send payload, taken at the post: the NIC may read a
 * send buffer at any time between the post and the completion, and now is
 * one of them. It saves the daemon a process_vm_readv (a system call of a
 * microsecond or more in a virtual machine) on the path of every small
 * message, which is what a latency test measures. Only where it is safe
 * and fits: a WR that carries a payload, every SGE inside memory that an
 * L_Key of a plain MR of this context covers (so reading it cannot fault;
 * mr.c), the bytes after the SGEs within the slot and within what the
 * daemon keeps in their place (max_sge SGEs' worth, or the inline room).
 * The daemon still checks the SGEs, and completes the WR with the error a
 * read would give if they fail. 1 when copied to dst.
 */
static int preread(struct shim_qp *qp, const struct ibv_send_wr *wr, uint64_t total, uint8_t *dst)
{
	struct shim_context *ctx = shim_ctx(qp->qpx.qp_base.context);
	uint64_t off = 0;

	if (!total || total > uroce_sq_data_bytes(qp->sq.max_sge, qp->sq.max_inline) ||
	    !can_inline(wr->opcode) ||
	    UROCE_SEND_WQE_BYTES + wr->num_sge * sizeof(struct uroce_sge) + total > qp->sq.stride)
		return 0;
	for (int i = 0; i < wr->num_sge; i++)
		if (wr->sg_list[i].length &&
		    !shim_lkey_covers(ctx, wr->sg_list[i].lkey, wr->sg_list[i].addr,
				      wr->sg_list[i].length))
			return 0;
	for (int i = 0; i < wr->num_sge; i++) {
		memcpy(dst + off, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
	return 1;
}

static int fill_send_wqe(struct shim_qp *qp, const struct ibv_send_wr *wr,
			 struct uroce_send_wqe *slot, int type1)
{
	struct ibv_qp *ibqp = &qp->qpx.qp_base;
	struct uroce_send_wqe w;
	uint8_t *data = (uint8_t *)slot + UROCE_SEND_WQE_BYTES;
	uint64_t total = 0;

	if (!uroce_wr_ok(ibqp->qp_type, wr->opcode))
		return EINVAL;
	/* ibv_send_wr has no place for ATOMIC WRITE's 8 bytes nor for FLUSH's
	 * placement type and selectivity level: ibv_wr_atomic_write and
	 * ibv_wr_flush only, as with rdma-core's rxe provider. */
	if (uroce_wr_flags(wr->opcode) & (UROCE_WR_F_ATOMIC_WRITE | UROCE_WR_F_FLUSH))
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.opcode = wr->opcode;
	w.send_flags = wr->send_flags & ~(uint32_t)UROCE_SEND_PREREAD;
	if (qp->sq_sig_all)
		w.send_flags |= IBV_SEND_SIGNALED;
	w.imm_data = wr->imm_data; /* or invalidate_rkey, the same bits */

	if (uroce_wr_flags(wr->opcode) & UROCE_WR_F_LOCAL) {
		/* BIND_MW, LOCAL_INV: no buffers, nothing inline. */
		int err = 0;

		w.send_flags &= ~(uint32_t)IBV_SEND_INLINE;
		if (wr->opcode == IBV_WR_BIND_MW)
			err = fill_bind(qp, wr->bind_mw.mw, wr->bind_mw.rkey,
					&wr->bind_mw.bind_info, type1, &w);
		if (err)
			return err;
	} else if ((wr->send_flags & IBV_SEND_INLINE) && can_inline(wr->opcode)) {
		for (int i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > qp->sq.max_inline)
			return EINVAL;
		for (int i = 0, off = 0; i < wr->num_sge; i++) {
			memcpy(data + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += (int)wr->sg_list[i].length;
		}
		w.inline_len = (uint32_t)total;
	} else {
		w.send_flags &= ~(uint32_t)IBV_SEND_INLINE;
		if ((uint32_t)wr->num_sge > qp->sq.max_sge)
			return EINVAL;
		for (int i = 0; i < wr->num_sge; i++) {
			struct uroce_sge s = {.addr = wr->sg_list[i].addr,
					      .length = wr->sg_list[i].length,
					      .lkey = wr->sg_list[i].lkey};

			memcpy(data + i * sizeof(s), &s, sizeof(s));
			total += s.length;
		}
		w.num_sge = (uint32_t)wr->num_sge;
		if (preread(qp, wr, total, data + wr->num_sge * sizeof(struct uroce_sge))) {
			w.send_flags |= UROCE_SEND_PREREAD;
			w.inline_len = (uint32_t)total;
		}
	}

	if (uroce_wr_flags(wr->opcode) & UROCE_WR_F_RDMA) {
		w.wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w.wr.rdma.rkey = wr->wr.rdma.rkey;
	} else if (uroce_wr_flags(wr->opcode) & UROCE_WR_F_ATOMIC) {
		/* IBA 9.4.5: one 8-byte local buffer, aligned target. */
		if (total != 8 || (wr->wr.atomic.remote_addr & 7))
			return EINVAL;
		w.wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w.wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w.wr.atomic.swap = wr->wr.atomic.swap;
		w.wr.atomic.rkey = wr->wr.atomic.rkey;
	}
	if (ibqp->qp_type == IBV_QPT_XRC_SEND)
		w.xrc_remote_srqn = wr->qp_type.xrc.remote_srqn & 0xffffffu;
	if (ibqp->qp_type == IBV_QPT_UD) {
		struct ibv_ah *ah = wr->wr.ud.ah;

		if (!ah || ah->context != ibqp->context)
			return EINVAL;
		w.ud.ah_handle = ah->handle;
		w.ud.remote_qpn = wr->wr.ud.remote_qpn;
		w.ud.remote_qkey = wr->wr.ud.remote_qkey;
	}
	memcpy(slot, &w, sizeof(w));
	return 0;
}

static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
		     int type1)
{
	struct shim_qp *qp = shim_qp(ibqp);
	struct shim_wq *wq = &qp->sq;
	uint32_t start, state;
	int err = 0;

	/* A QP opened with ibv_open_qp (an XRC target) has no send queue here. */
	if (!wq->ring) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&wq->lock);
	state = wq_state(wq);
	/* The RNIC is gone (fatal.c): nothing can be sent. */
	if (shim_dead(shim_ctx(ibqp->context))) {
		err = EIO;
		*bad_wr = wr;
		goto out;
	}
	/* IBA 10.8.2 / rxe: no send WRs before RTS. */
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR) {
		err = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	start = wq->prod;
	for (; wr; wr = wr->next) {
		if (wq_full(wq, wq->prod)) {
			/* Full because nobody consumes any more? */
			err = shim_fatal_check(shim_ctx(ibqp->context)) ? EIO : ENOMEM;
			break;
		}
		err = fill_send_wqe(
		    qp, wr, uroce_ring_entry(wq->ring, wq->entries, wq->stride, wq->prod), type1);
		if (err)
			break;
		wq->prod++;
	}
	if (err)
		*bad_wr = wr;
	if (wq->prod != start) {
		uroce_store_release(&wq->ring->prod, wq->prod);
		shim_sq_doorbell(shim_ctx(ibqp->context), wq);
	}
out:
	pthread_spin_unlock(&wq->lock);
	return err;
}

int shim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return post_send(ibqp, wr, bad_wr, 0);
}

/* The key variant (low byte) after the next bind (rdma-core's ibv_inc_rkey). */
static uint32_t inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

int shim_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *bi = &mw_bind->bind_info;
	struct ibv_send_wr wr, *bad;
	uint32_t rkey = inc_rkey(mw->rkey);
	int err;

	/* The provider's checks (rdma-core rxe): a type 1 window is never
	 * zero based and lies inside its MR. */
	if (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	if (bi->mr && (bi->addr < (uintptr_t)bi->mr->addr || bi->length > bi->mr->length ||
		       bi->addr - (uintptr_t)bi->mr->addr > bi->mr->length - bi->length))
		return EINVAL;
	if (ibqp->context != mw->context)
		return EINVAL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = *bi;
	err = post_send(ibqp, &wr, &bad, 1);
	if (err)
		return err;
	/* The new R_Key is the window's from now on; a bind that then fails
	 * (IBV_WC_MW_BIND_ERR) leaves the application to restore it, as
	 * with rdma-core's providers. */
	mw->rkey = rkey;
	return 0;
}

int shim_post_recv_ring(struct shim_context *ctx, struct shim_wq *wq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&wq->lock);
	start = wq->prod;
	for (; wr; wr = wr->next) {
		uint8_t *slot;
		struct uroce_recv_wqe w = {.wr_id = wr->wr_id};

		if (shim_dead(ctx)) {
			err = EIO; /* the RNIC is gone (fatal.c) */
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			err = EINVAL;
			break;
		}
		if (wq_full(wq, wq->prod)) {
			err = shim_fatal_check(ctx) ? EIO : ENOMEM;
			break;
		}
		slot = uroce_ring_entry(wq->ring, wq->entries, wq->stride, wq->prod);
		w.num_sge = (uint32_t)wr->num_sge;
		memcpy(slot, &w, sizeof(w));
		for (int i = 0; i < wr->num_sge; i++) {
			struct uroce_sge s = {.addr = wr->sg_list[i].addr,
					      .length = wr->sg_list[i].length,
					      .lkey = wr->sg_list[i].lkey};

			memcpy(slot + UROCE_RECV_WQE_BYTES + i * sizeof(s), &s, sizeof(s));
		}
		wq->prod++;
	}
	if (err)
		*bad_wr = wr;
	if (wq->prod != start) {
		uroce_store_release(&wq->ring->prod, wq->prod);
		shim_doorbell(ctx);
	}
	pthread_spin_unlock(&wq->lock);
	return err;
}

int shim_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct shim_qp *qp = shim_qp(ibqp);

	/* A QP attached to an SRQ has no receive queue of its own. */
	if (!qp->rq.ring || wq_state(&qp->sq) == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return shim_post_recv_ring(shim_ctx(ibqp->context), &qp->rq, wr, bad_wr);
}

/* ------------------------------------------------------------------------ */
/* The ibv_wr_* API (struct ibv_qp_ex).                                      */

static struct shim_qp *qpx_to_qp(struct ibv_qp_ex *qpx)
{
	return SHIM_CONTAINER_OF(qpx, struct shim_qp, qpx);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = qpx_to_qp(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_prod = qp->sq.prod;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static struct uroce_send_wqe *wr_begin(struct shim_qp *qp, uint32_t opcode)
{
	struct shim_wq *wq = &qp->sq;
	struct uroce_send_wqe *w;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (!(op_bit(opcode) & qp->send_ops_flags)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (wq_full(wq, qp->wr_prod)) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	w = uroce_ring_entry(wq->ring, wq->entries, wq->stride, qp->wr_prod);
	memset(w, 0, UROCE_SEND_WQE_BYTES);
	w->wr_id = qp->qpx.wr_id;
	w->opcode = opcode;
	w->send_flags = qp->qpx.wr_flags & ~(uint32_t)IBV_SEND_INLINE;
	if (qp->sq_sig_all)
		w->send_flags |= IBV_SEND_SIGNALED;
	qp->wr_prod++;
	qp->wr_cur = w;
	return w;
}

static void wr_rdma(struct ibv_qp_ex *qpx, uint32_t opcode, uint32_t rkey, uint64_t remote_addr,
		    __be32 imm)
{
	struct uroce_send_wqe *w = wr_begin(qpx_to_qp(qpx), opcode);

	if (!w)
		return;
	w->wr.rdma.rkey = rkey;
	w->wr.rdma.remote_addr = remote_addr;
	w->imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_begin(qpx_to_qp(qpx), IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct uroce_send_wqe *w = wr_begin(qpx_to_qp(qpx), IBV_WR_SEND_WITH_IMM);

	if (w)
		w->imm_data = imm;
}

static void wr_atomic(struct ibv_qp_ex *qpx, uint32_t opcode, uint32_t rkey, uint64_t remote_addr,
		      uint64_t compare_add, uint64_t swap)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w;

	if (remote_addr & 7) {
		if (!qp->wr_err)
			qp->wr_err = EINVAL;
		qp->wr_cur = NULL;
		return;
	}
	w = wr_begin(qp, opcode);
	if (!w)
		return;
	w->wr.atomic.rkey = rkey;
	w->wr.atomic.remote_addr = remote_addr;
	w->wr.atomic.compare_add = compare_add;
	w->wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

/* A setter called with no WR begun (or after an error) poisons the batch. */
static struct uroce_send_wqe *wr_cur(struct shim_qp *qp)
{
	if (!qp->wr_cur && !qp->wr_err)
		qp->wr_err = EINVAL;
	return qp->wr_cur;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w = wr_cur(qp);
	uint8_t *data;

	if (!w)
		return;
	if (num_sge > qp->sq.max_sge) {
		qp->wr_err = EINVAL;
		return;
	}
	data = (uint8_t *)w + UROCE_SEND_WQE_BYTES;
	for (size_t i = 0; i < num_sge; i++) {
		struct uroce_sge s = {
		    .addr = sg_list[i].addr, .length = sg_list[i].length, .lkey = sg_list[i].lkey};

		memcpy(data + i * sizeof(s), &s, sizeof(s));
	}
	w->num_sge = (uint32_t)num_sge;
	w->inline_len = 0;
	w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge s = {.addr = addr, .length = length, .lkey = lkey};

	wr_set_sge_list(qpx, 1, &s);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w = wr_cur(qp);
	uint8_t *data;
	size_t total = 0;

	if (!w)
		return;
	if (!can_inline(w->opcode)) {
		qp->wr_err = EINVAL;
		return;
	}
	for (size_t i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	if (total > qp->sq.max_inline) {
		qp->wr_err = EINVAL;
		return;
	}
	data = (uint8_t *)w + UROCE_SEND_WQE_BYTES;
	for (size_t i = 0, off = 0; i < num_buf; i++) {
		memcpy(data + off, buf_list[i].addr, buf_list[i].length);
		off += buf_list[i].length;
	}
	w->inline_len = (uint32_t)total;
	w->num_sge = 0;
	w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};

	wr_set_inline_data_list(qpx, 1, &b);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w = wr_cur(qp);

	if (!w)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah || ah->context != qpx->qp_base.context) {
		qp->wr_err = EINVAL;
		return;
	}
	w->ud.ah_handle = ah->handle;
	w->ud.remote_qpn = remote_qpn;
	w->ud.remote_qkey = remote_qkey;
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w = wr_cur(qp);

	if (!w)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		qp->wr_err = EINVAL;
		return;
	}
	w->xrc_remote_srqn = remote_srqn & 0xffffffu;
}

static void wr_unsupported(struct shim_qp *qp)
{
	qp->wr_cur = NULL;
	qp->wr_err = EOPNOTSUPP;
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w = wr_begin(qp, IBV_WR_BIND_MW);
	int err;

	if (!w)
		return;
	err = fill_bind(qp, mw, rkey, info, 0, w);
	if (err) {
		qp->wr_err = err;
		qp->wr_cur = NULL;
	}
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct uroce_send_wqe *w = wr_begin(qpx_to_qp(qpx), IBV_WR_LOCAL_INV);

	if (w)
		w->imm_data = rkey;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct uroce_send_wqe *w = wr_begin(qpx_to_qp(qpx), IBV_WR_SEND_WITH_INV);

	if (w)
		w->imm_data = rkey;
}

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	wr_unsupported(qpx_to_qp(qpx));
}

/* ATOMIC WRITE: the 8 bytes at atomic_wr are taken now, into the WQE. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			    const void *atomic_wr)
{
	struct uroce_send_wqe *w = wr_begin(qpx_to_qp(qpx), IBV_WR_ATOMIC_WRITE);

	if (!w)
		return;
	w->wr.atomic.remote_addr = remote_addr;
	w->wr.atomic.rkey = rkey;
	memcpy(&w->wr.atomic.compare_add, atomic_wr, 8);
}

/*
 * FLUSH (rdma-core 45's ibv_wr_flush): the range or the whole MR, for the
 * placement types asked for. An unknown type or level, no type, or a range
 * longer than a RETH can say poisons the batch (EINVAL at wr_complete).
 */
static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, size_t len,
		     uint8_t type, uint8_t level)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct uroce_send_wqe *w;

	if (!type || type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT) || level > IBV_FLUSH_MR ||
	    (level == IBV_FLUSH_RANGE && len > UINT32_MAX)) {
		if (!qp->wr_err)
			qp->wr_err = EINVAL;
		qp->wr_cur = NULL;
		return;
	}
	w = wr_begin(qp, IBV_WR_FLUSH);
	if (!w)
		return;
	w->wr.flush.remote_addr = remote_addr;
	w->wr.flush.rkey = rkey;
	w->wr.flush.length = level == IBV_FLUSH_RANGE ? (uint32_t)len : 0;
	w->wr.flush.type = type;
	w->wr.flush.level = level;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = qpx_to_qp(qpx);
	struct shim_wq *wq = &qp->sq;
	uint32_t state = wq_state(wq);
	int err = qp->wr_err;

	if (!err && shim_dead(shim_ctx(qpx->qp_base.context)))
		err = EIO; /* the RNIC is gone (fatal.c) */
	if (!err && (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR))
		err = EINVAL;
	if (!err && qp->wr_prod != wq->prod) {
		wq->prod = qp->wr_prod;
		uroce_store_release(&wq->ring->prod, wq->prod);
		shim_sq_doorbell(shim_ctx(qpx->qp_base.context), wq);
	}
	/* On error nothing of the batch is published. */
	qp->wr_cur = NULL;
	pthread_spin_unlock(&wq->lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct shim_qp *qp = qpx_to_qp(qpx);

	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static void set_wr_ops(struct shim_qp *qp)
{
	struct ibv_qp_ex *q = &qp->qpx;

	qp->wr_flush = wr_flush;
	q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	q->wr_atomic_fetch_add = wr_atomic_fetch_add;
	q->wr_bind_mw = wr_bind_mw;
	q->wr_local_inv = wr_local_inv;
	q->wr_rdma_read = wr_rdma_read;
	q->wr_rdma_write = wr_rdma_write;
	q->wr_rdma_write_imm = wr_rdma_write_imm;
	q->wr_send = wr_send;
	q->wr_send_imm = wr_send_imm;
	q->wr_send_inv = wr_send_inv;
	q->wr_send_tso = wr_send_tso;
	q->wr_set_ud_addr = wr_set_ud_addr;
	q->wr_set_xrc_srqn = wr_set_xrc_srqn;
	q->wr_set_inline_data = wr_set_inline_data;
	q->wr_set_inline_data_list = wr_set_inline_data_list;
	q->wr_set_sge = wr_set_sge;
	q->wr_set_sge_list = wr_set_sge_list;
	q->wr_start = wr_start;
	q->wr_complete = wr_complete;
	q->wr_abort = wr_abort;
	q->wr_atomic_write = wr_atomic_write;
}

/* ------------------------------------------------------------------------ */
/* Creation, modify, query, destroy.                                         */

#define KNOWN_INIT_MASK                                                                            \
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS |             \
	 IBV_QP_INIT_ATTR_MAX_TSO_HEADER | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH | \
	 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

struct ibv_qp *shim_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct shim_context *c = shim_ctx(context);
	struct uroce_create_qp_req req = {.hdr.op = UROCE_OP_CREATE_QP};
	struct uroce_create_qp_resp resp;
	uint64_t ops = 0;
	struct shim_qp *qp;
	int fds[2], nfds, err;

	bool tgt = attr->qp_type == IBV_QPT_XRC_RECV, ini = attr->qp_type == IBV_QPT_XRC_SEND;

	if (attr->comp_mask & ~(uint32_t)KNOWN_INIT_MASK)
		return shim_fail_null(-EINVAL);
	if (attr->comp_mask & (IBV_QP_INIT_ATTR_MAX_TSO_HEADER | IBV_QP_INIT_ATTR_IND_TABLE |
			       IBV_QP_INIT_ATTR_RX_HASH))
		return shim_fail_null(-EOPNOTSUPP);
	if (tgt) {
		/* An XRC target QP is made in an XRC domain, nothing else. */
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
		    attr->xrcd->context != context)
			return shim_fail_null(-EINVAL);
		if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
			return shim_fail_null(-EOPNOTSUPP); /* it sends nothing */
		req.xrcd_handle = shim_xrcd(attr->xrcd)->handle;
		goto call;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return shim_fail_null(-EINVAL);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (!ops)
			return shim_fail_null(-EINVAL);
		if (ops & ~ops_of_type(attr->qp_type))
			return shim_fail_null(-EOPNOTSUPP);
	}
	/* Every object must belong to this context (the kernel's per-file
	 * handle tables give EINVAL too; the daemon checks again). */
	if (attr->pd->context != context || !attr->send_cq || attr->send_cq->context != context)
		return shim_fail_null(-EINVAL);
	/* An XRC initiator QP has only a send queue: its receive CQ and SRQ are ignored. */
	if (!ini && (!attr->recv_cq || attr->recv_cq->context != context ||
		     (attr->srq && attr->srq->context != context)))
		return shim_fail_null(-EINVAL);

	req.pd_handle = attr->pd->handle;
	req.send_cq_handle = attr->send_cq->handle;
	if (!ini) {
		req.recv_cq_handle = attr->recv_cq->handle;
		req.srq_handle = attr->srq ? attr->srq->handle : 0;
	}
call:
	req.qp_type = attr->qp_type;
	req.sq_sig_all = (uint32_t)attr->sq_sig_all;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS)
		req.create_flags = attr->create_flags;
	QP_CAP_COPY(req.cap, attr->cap);

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return shim_fail_null(-ENOMEM);
	err = shim_call(c, &req, sizeof(req), &resp, sizeof(resp), fds, 2, &nfds);
	if (!err && nfds != (attr->srq || tgt || ini ? 1 : 2)) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		err = -EPROTO;
	}
	if (err) {
		free(qp);
		return shim_fail_null(err);
	}
	err = shim_wq_map(&qp->sq, fds[0], resp.sq_bytes);
	if (!err && nfds == 2)
		err = shim_wq_map(&qp->rq, fds[1], resp.rq_bytes);
	else if (nfds == 2)
		close(fds[1]);
	if (!err)
		err = shim_obj_add(c, resp.handle, SHIM_OBJ_QP, qp);
	if (err) {
		shim_wq_unmap(&qp->sq);
		shim_wq_unmap(&qp->rq);
		shim_call_simple(c, UROCE_OP_DESTROY_QP, resp.handle);
		free(qp);
		return shim_fail_null(err);
	}

	struct ibv_qp *q = &qp->qpx.qp_base;

	q->context = context;
	q->qp_context = attr->qp_context;
	/*
	 * An XRC target QP has none of these, an initiator no receive side;
	 * a target keeps a PD the caller gave all the same, as rdma-core's
	 * set_qp() does (librdmacm takes the id's PD from it for the XRC SRQ
	 * it makes next).
	 */
	q->pd = tgt && !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? NULL : attr->pd;
	q->send_cq = tgt ? NULL : attr->send_cq;
	q->recv_cq = tgt || ini ? NULL : attr->recv_cq;
	q->srq = tgt || ini ? NULL : attr->srq;
	q->handle = resp.handle;
	q->qp_num = resp.qpn;
	q->state = IBV_QPS_RESET;
	q->qp_type = attr->qp_type;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	qp->sq_sig_all = !!attr->sq_sig_all;
	if (ops) {
		qp->send_ops_flags = ops;
		qp->qpx.comp_mask = 0;
		set_wr_ops(qp);
	}
	/* What the QP really got (>= what was asked), as providers report. */
	QP_CAP_COPY(attr->cap, resp.cap);
	return q;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	ex.qp_context = qp_init_attr->qp_context;
	ex.send_cq = qp_init_attr->send_cq;
	ex.recv_cq = qp_init_attr->recv_cq;
	ex.srq = qp_init_attr->srq;
	ex.cap = qp_init_attr->cap;
	ex.qp_type = qp_init_attr->qp_type;
	ex.sq_sig_all = qp_init_attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = shim_create_qp_ex(pd->context, &ex);
	if (qp)
		qp_init_attr->cap = ex.cap;
	return qp;
}

static void qp_attr_to_uapi(const struct ibv_qp_attr *a, struct uroce_qp_attr *o)
{
	memset(o, 0, sizeof(*o));
	o->qp_state = a->qp_state;
	o->cur_qp_state = a->cur_qp_state;
	o->path_mtu = a->path_mtu;
	o->path_mig_state = a->path_mig_state;
	QP_CAP_COPY(o->cap, a->cap);
	shim_ah_to_uapi(&a->ah_attr, &o->ah_attr);
	shim_ah_to_uapi(&a->alt_ah_attr, &o->alt_ah_attr);
	QP_ATTR_FIELDS(QP_ATTR_COPY)
}

static void qp_attr_from_uapi(const struct uroce_qp_attr *a, struct ibv_qp_attr *o)
{
	memset(o, 0, sizeof(*o));
	o->qp_state = (enum ibv_qp_state)a->qp_state;
	o->cur_qp_state = (enum ibv_qp_state)a->cur_qp_state;
	o->path_mtu = (enum ibv_mtu)a->path_mtu;
	o->path_mig_state = (enum ibv_mig_state)a->path_mig_state;
	QP_CAP_COPY(o->cap, a->cap);
	shim_ah_from_uapi(&a->ah_attr, &o->ah_attr);
	shim_ah_from_uapi(&a->alt_ah_attr, &o->alt_ah_attr);
	QP_ATTR_FIELDS(QP_ATTR_COPY)
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct uroce_modify_qp_req req = {
	    .hdr.op = UROCE_OP_MODIFY_QP, .handle = qp->handle, .attr_mask = (uint32_t)attr_mask};
	struct uroce_msg_hdr resp;
	int err;

	qp_attr_to_uapi(attr, &req.attr);
	err =
	    shim_call(shim_ctx(qp->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err)
		return -err;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	/* A QP reset forgets its completions still in the CQs, as mlx5's
	 * provider does: a QP restated from the error state must not find
	 * the flushes of its previous life. */
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		if (qp->send_cq)
			shim_cq_clean(shim_cq(qp->send_cq), qp->qp_num);
		if (qp->recv_cq && qp->recv_cq != qp->send_cq)
			shim_cq_clean(shim_cq(qp->recv_cq), qp->qp_num);
	}
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct uroce_query_qp_req req = {
	    .hdr.op = UROCE_OP_QUERY_QP, .handle = qp->handle, .attr_mask = (uint32_t)attr_mask};
	struct uroce_query_qp_resp resp;
	int err;

	err =
	    shim_call(shim_ctx(qp->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err)
		return -err;
	qp_attr_from_uapi(&resp.attr, attr);
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = (int)resp.sq_sig_all;
		QP_CAP_COPY(init_attr->cap, resp.init_cap);
	}
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct shim_qp *qp = shim_qp(ibqp);
	struct shim_context *c = shim_ctx(ibqp->context);
	int err;

	err = shim_call_simple(c, UROCE_OP_DESTROY_QP, ibqp->handle);
	if (err)
		return -err;
	shim_obj_del(c, ibqp->handle);
	pthread_mutex_lock(&ibqp->mutex);
	while (ibqp->events_completed != qp->events_reported)
		pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
	pthread_mutex_unlock(&ibqp->mutex);
	/* Unpolled completions of a destroyed QP disappear (providers clean
	 * their CQs the same way). */
	if (ibqp->send_cq)
		shim_cq_clean(shim_cq(ibqp->send_cq), ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		shim_cq_clean(shim_cq(ibqp->recv_cq), ibqp->qp_num);
	shim_wq_unmap(&qp->sq);
	shim_wq_unmap(&qp->rq);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp);
	return 0;
}

struct ibv_qp *shim_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	struct shim_context *c = shim_ctx(context);
	struct uroce_open_qp_req req = {.hdr.op = UROCE_OP_OPEN_QP};
	struct uroce_handle_resp resp;
	struct shim_qp *qp;
	struct ibv_qp *q;
	int err;

	/* rdma-core's ibv_cmd_open_qp: unknown bits, then the three needed. */
	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED)
		return shim_fail_null(-EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_QP_OPEN_ATTR_XRCD) ||
	    !(attr->comp_mask & IBV_QP_OPEN_ATTR_NUM) ||
	    !(attr->comp_mask & IBV_QP_OPEN_ATTR_TYPE) || !attr->xrcd ||
	    attr->xrcd->context != context)
		return shim_fail_null(-EINVAL);
	req.xrcd_handle = shim_xrcd(attr->xrcd)->handle;
	req.qpn = attr->qp_num;
	req.qp_type = attr->qp_type;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return shim_fail_null(-ENOMEM);
	err = shim_call(c, &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(qp);
		return shim_fail_null(err);
	}
	err = shim_obj_add(c, resp.handle, SHIM_OBJ_QP, qp);
	if (err) {
		shim_call_simple(c, UROCE_OP_DESTROY_QP, resp.handle);
		free(qp);
		return shim_fail_null(err);
	}
	/* As rdma-core fills an opened QP: no PD, CQs, SRQ or queues. */
	q = &qp->qpx.qp_base;
	q->context = context;
	q->qp_context = attr->qp_context;
	q->handle = resp.handle;
	q->qp_num = attr->qp_num;
	q->qp_type = attr->qp_type;
	q->state = IBV_QPS_UNKNOWN;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	return q;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct shim_qp *s = shim_qp(qp);

	return s->send_ops_flags ? &s->qpx : NULL;
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	/* What libibverbs answers for a provider that makes no promise:
	 * data may be written out of order. */
	return 0;
}
