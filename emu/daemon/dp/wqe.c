/* SPDX-License-Identifier: MIT */
/*
 * Work queue entries read from shared memory. An application can write
 * anything into its rings, at any time, so a WQE is first copied out of the
 * ring (one snapshot, never re-read) and then validated against the ring's
 * geometry the daemon keeps (stride, SGE and inline capacity) and the QP
 * type before it becomes one of the transport engine's WQEs. A send WQE
 * that fails validation is still handed over, in order, but in a form the
 * engine completes with the error status (xport_check_wqe rejects it), as
 * a NIC completes a malformed WQE with a local error and moves the QP to
 * Error. Pure: no I/O, no allocation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "dp.h"

#define SEND_FLAGS_KNOWN                                                                     \
	(UROCE_SEND_FENCE | UROCE_SEND_SIGNALED | UROCE_SEND_SOLICITED | UROCE_SEND_INLINE | \
	 UROCE_SEND_IP_CSUM)

void emu_wqe_poison(struct xport_wqe *w, uint32_t status)
{
	/* Forms xport_check_wqe() rejects with exactly this status. */
	w->num_sge = 0;
	w->inline_len = 0;
	if (status == UROCE_WC_LOC_LEN_ERR) {
		w->opcode = UROCE_WR_SEND;
		w->flags |= UROCE_SEND_INLINE;
		w->inline_len = XPORT_MAX_INLINE_BYTES + 1;
	} else {
		w->opcode = EMU_WQE_BAD_OPCODE;
		w->flags &= ~(uint32_t)UROCE_SEND_INLINE;
	}
}

/*
 * The bytes after the fixed part that parsing reads, as the fixed part
 * says. Every bound emu_wqe_send and emu_wqe_preread (emu_wqe_recv) apply
 * lies within them, so a snapshot of just these bytes parses exactly as a
 * snapshot of the whole slot would.
 */
static uint64_t send_used(const void *fixed)
{
	const struct uroce_send_wqe *s = fixed;
	uint64_t n;

	if (s->send_flags & UROCE_SEND_INLINE)
		return s->inline_len;
	n = s->num_sge * (uint64_t)sizeof(struct uroce_sge);
	if (s->send_flags & UROCE_SEND_PREREAD)
		n += s->inline_len;
	return n;
}

static uint64_t recv_used(const void *fixed)
{
	const struct uroce_recv_wqe *r = fixed;

	return r->num_sge * (uint64_t)sizeof(struct uroce_sge);
}

/* The fixed part, then what used() says of it, at most the slot's rest. */
static uint32_t snapshot(void *slot, const void *ring_slot, uint32_t bytes, uint32_t fixed,
			 uint64_t (*used)(const void *fixed))
{
	uint64_t n;

	if (bytes <= fixed) {
		memcpy(slot, ring_slot, bytes);
		return bytes;
	}
	memcpy(slot, ring_slot, fixed);
	n = used(slot);
	if (n > bytes - fixed)
		n = bytes - fixed;
	memcpy((uint8_t *)slot + fixed, (const uint8_t *)ring_slot + fixed, n);
	return fixed + (uint32_t)n;
}

uint32_t emu_wqe_send_snapshot(void *slot, const void *ring_slot, uint32_t bytes)
{
	return snapshot(slot, ring_slot, bytes, UROCE_SEND_WQE_BYTES, send_used);
}

uint32_t emu_wqe_recv_snapshot(void *slot, const void *ring_slot, uint32_t bytes)
{
	return snapshot(slot, ring_slot, bytes, UROCE_RECV_WQE_BYTES, recv_used);
}

uint32_t emu_wqe_send(const void *slot, const struct emu_wqe_geom *g, uint32_t qp_type,
		      struct xport_wqe *w, uint32_t *ah_handle)
{
	const uint8_t *data = (const uint8_t *)slot + UROCE_SEND_WQE_BYTES;
	uint32_t room = g->stride - UROCE_SEND_WQE_BYTES;
	struct uroce_send_wqe s;
	uint32_t status = UROCE_WC_SUCCESS;
	uint32_t wr_flags;

	memcpy(&s, slot, sizeof(s));
	wr_flags = uroce_wr_flags(s.opcode);
	memset(w, 0, offsetof(struct xport_wqe, sge));
	w->wr_id = s.wr_id;
	w->opcode = s.opcode;
	w->flags = s.send_flags & SEND_FLAGS_KNOWN & ~(uint32_t)UROCE_SEND_IP_CSUM;
	w->imm_data = s.imm_data;
	*ah_handle = 0;

	/* The opcode's facts are UROCE_WR_LIST's (wr_opcode.h). */
	if (!uroce_wr_ok(qp_type, s.opcode)) {
		status = UROCE_WC_LOC_QP_OP_ERR;
		goto bad;
	}
	if (wr_flags & UROCE_WR_F_ATOMIC_WRITE) {
		/* The 8 bytes travel in the WQE, taken now (as rxe copies them). */
		w->remote_addr = s.wr.atomic.remote_addr;
		w->rkey = s.wr.atomic.rkey;
		w->compare_add = s.wr.atomic.compare_add;
		if (s.num_sge || w->flags & UROCE_SEND_INLINE) {
			status = UROCE_WC_LOC_QP_OP_ERR;
			goto bad;
		}
	} else if (wr_flags & UROCE_WR_F_FLUSH) {
		/* The range and the FETH travel in the WQE; xport_check_wqe checks them. */
		w->remote_addr = s.wr.flush.remote_addr;
		w->rkey = s.wr.flush.rkey;
		w->flush_len = s.wr.flush.length;
		w->flush_type = s.wr.flush.type;
		w->flush_level = s.wr.flush.level;
		if (s.num_sge || w->flags & UROCE_SEND_INLINE) {
			status = UROCE_WC_LOC_QP_OP_ERR;
			goto bad;
		}
	} else if (wr_flags & UROCE_WR_F_RDMA) {
		w->remote_addr = s.wr.rdma.remote_addr;
		w->rkey = s.wr.rdma.rkey;
	} else if (wr_flags & UROCE_WR_F_ATOMIC) {
		w->remote_addr = s.wr.atomic.remote_addr;
		w->rkey = s.wr.atomic.rkey;
		w->compare_add = s.wr.atomic.compare_add;
		w->swap = s.wr.atomic.swap;
	} else if (s.opcode == UROCE_WR_BIND_MW) {
		/* Checked when the bind executes (mw.c), against the objects then. */
		w->bind.mw_handle = s.wr.bind.mw_handle;
		w->bind.rkey = s.wr.bind.rkey;
		w->bind.mr_lkey = s.wr.bind.mr_lkey;
		w->bind.access = s.wr.bind.access;
		w->bind.addr = s.wr.bind.addr;
		w->bind.length = s.wr.bind.length;
	}
	if (wr_flags & UROCE_WR_F_LOCAL) {
		/* BIND_MW, LOCAL_INV move no data: a buffer makes the WQE malformed. */
		if (s.num_sge || w->flags & UROCE_SEND_INLINE) {
			status = UROCE_WC_LOC_QP_OP_ERR;
			goto bad;
		}
		return UROCE_WC_SUCCESS;
	}
	if (qp_type == UROCE_QPT_XRC_SEND)
		w->xrc_srqn = s.xrc_remote_srqn & 0xffffffu;
	if (qp_type == UROCE_QPT_UD) {
		*ah_handle = s.ud.ah_handle;
		w->ud_remote_qpn = s.ud.remote_qpn & 0xffffffu;
		w->ud_remote_qkey = s.ud.remote_qkey;
	}

	if (w->flags & UROCE_SEND_INLINE) {
		/* Inline data is only for what carries a payload. */
		if (!(wr_flags & UROCE_WR_F_INLINE)) {
			status = UROCE_WC_LOC_QP_OP_ERR;
			goto bad;
		}
		if (s.inline_len > g->max_inline || s.inline_len > room ||
		    s.inline_len > XPORT_MAX_INLINE_BYTES) {
			status = UROCE_WC_LOC_LEN_ERR;
			goto bad;
		}
		w->inline_len = s.inline_len;
		memcpy(w->inline_data, data, s.inline_len);
		return UROCE_WC_SUCCESS;
	}
	if (s.num_sge > g->max_sge || s.num_sge > XPORT_MAX_SGE ||
	    s.num_sge * (uint64_t)sizeof(struct uroce_sge) > room) {
		status = UROCE_WC_LOC_QP_OP_ERR;
		goto bad;
	}
	for (uint32_t i = 0; i < s.num_sge; i++) {
		struct uroce_sge e;

		memcpy(&e, data + i * sizeof(e), sizeof(e));
		w->sge[i].addr = e.addr;
		w->sge[i].length = e.length;
		w->sge[i].lkey = e.lkey;
	}
	w->num_sge = s.num_sge;
	/* The shim's snapshot of a small payload, after the SGEs: kept (flag
	 * and length) for the data path, which checks the SGEs before it
	 * takes the bytes (emu_wqe_preread). Anything inconsistent: ignored,
	 * the payload is read from the program's memory as without it. */
	if ((s.send_flags & UROCE_SEND_PREREAD) && (wr_flags & UROCE_WR_F_INLINE)) {
		uint64_t total = 0;

		for (uint32_t i = 0; i < s.num_sge; i++)
			total += w->sge[i].length;
		if (total && total == s.inline_len && total <= XPORT_MAX_INLINE_BYTES &&
		    s.num_sge * (uint64_t)sizeof(struct uroce_sge) + total <= room) {
			w->flags |= UROCE_SEND_PREREAD;
			w->inline_len = s.inline_len;
		}
	}
	return UROCE_WC_SUCCESS;

bad:
	emu_wqe_poison(w, status);
	return status;
}

const uint8_t *emu_wqe_preread(const void *slot, const struct xport_wqe *w)
{
	if (!(w->flags & UROCE_SEND_PREREAD) || (w->flags & UROCE_SEND_INLINE))
		return NULL;
	return (const uint8_t *)slot + UROCE_SEND_WQE_BYTES + w->num_sge * sizeof(struct uroce_sge);
}

int emu_wqe_recv(const void *slot, const struct emu_wqe_geom *g, struct xport_recv_wqe *w)
{
	const uint8_t *data = (const uint8_t *)slot + UROCE_RECV_WQE_BYTES;
	uint32_t room = g->stride - UROCE_RECV_WQE_BYTES;
	struct uroce_recv_wqe r;

	memcpy(&r, slot, sizeof(r));
	w->wr_id = r.wr_id;
	w->malformed = false;
	if (r.num_sge > g->max_sge || r.num_sge > XPORT_MAX_SGE ||
	    r.num_sge * (uint64_t)sizeof(struct uroce_sge) > room) {
		/*
		 * Marked malformed, with one SGE no L_Key matches: a message
		 * placed into it fails with a local QP operation error (the
		 * responder answers NAK Remote Operational Error), as on a
		 * NIC that finds a malformed receive WQE.
		 */
		w->malformed = true;
		w->num_sge = 1;
		w->sge[0].addr = 0;
		w->sge[0].length = UINT32_MAX;
		w->sge[0].lkey = EMU_WQE_BAD_LKEY;
		return -EINVAL;
	}
	for (uint32_t i = 0; i < r.num_sge; i++) {
		struct uroce_sge e;

		memcpy(&e, data + i * sizeof(e), sizeof(e));
		w->sge[i].addr = e.addr;
		w->sge[i].length = e.length;
		w->sge[i].lkey = e.lkey;
	}
	w->num_sge = r.num_sge;
	return 0;
}
