/* SPDX-License-Identifier: MIT */
/*
 * The send work request opcodes and everything uroce knows about each, in
 * one X-macro list (UROCE_WR_LIST), in the spirit of Linux rxe's
 * rxe_wr_opcode_info[]: per opcode its value (that of rdma-core's
 * <infiniband/verbs.h>), the QP types that carry it, its properties (payload,
 * inline, immediate, RDMA or atomic target, READ/atomic that consumes
 * initiator depth), the completion opcode it completes as, and the BTH
 * opcodes it becomes on the wire. The enum, the names, the lookups below, the
 * shim's posting checks, the daemon's WQE reader and the engine's requester
 * and completer are all generated from it or look it up; nothing restates it.
 *
 * Why the list lives here, in the uapi, with the wire opcodes as bare tokens:
 * the shim may include only emu/include/uroce/ (it links neither wire/ nor
 * the engine) and needs the QP-type and property columns to refuse a WR at
 * ibv_post_send time, while the BTH opcodes are wire/'s business. So every
 * column is given symbolically: QP types and properties as the constants
 * below, the completion opcode as a UROCE_WC_ suffix, and the wire opcodes as
 * tokens that only the engine (emu/xport/req.c) pastes onto WIRE_OP_RC_ (RC,
 * and UC and XRC with their transport bits) and WIRE_OP_UD_; NONE means "no such
 * packet". A consumer that does not know wire/ simply ignores those columns,
 * and nothing here depends on wire/. The local operations (BIND_MW,
 * LOCAL_INV) put nothing on the wire: the requester executes them itself
 * when their turn comes (UROCE_WR_F_LOCAL). An opcode uroce does not
 * support would have a row with no QP type, so every check refuses it;
 * values beyond the list (TSO, DRIVER1, garbage) have no row and are refused
 * the same way. FLUSH (14) and ATOMIC WRITE (15) are rdma-core 45's and 44's
 * numbers; rdma-core 44's <infiniband/verbs.h> has no IBV_WR_FLUSH (the shim
 * names it itself).
 *
 * Included by enums.h (at its end, after the QP type and completion enums the
 * lookups use); include enums.h or uapi.h rather than this file.
 */
#ifndef UROCE_WR_OPCODE_H
#define UROCE_WR_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "enums.h"

/* Properties of a WR opcode (the list's properties column). */
enum uroce_wr_flags {
	UROCE_WR_F_PAYLOAD = 1 << 0,   /* the local buffers are the message, sent as payload */
	UROCE_WR_F_INLINE = 1 << 1,    /* IBV_SEND_INLINE may carry that payload */
	UROCE_WR_F_IMM = 1 << 2,       /* carries imm_data (the Last/Only packet has ImmDt) */
	UROCE_WR_F_RDMA = 1 << 3,      /* wr.rdma names the remote buffer (RETH) */
	UROCE_WR_F_ATOMIC = 1 << 4,    /* wr.atomic; one 8-byte local buffer gets the old value */
	UROCE_WR_F_RD_ATOMIC = 1 << 5, /* READ or atomic: one request packet, consumes initiator
					* depth (max_rd_atomic), answered by responses */
	UROCE_WR_F_LOCAL = 1 << 6,     /* executed by the RNIC itself, no packet (IBA 10.6.7) */
	UROCE_WR_F_INV = 1 << 7,       /* imm_data is an R_Key the peer invalidates (IETH) */
	UROCE_WR_F_ATOMIC_WRITE = 1 << 8, /* ATOMIC WRITE (IBA 1.5): 8 bytes carried in the WQE
					   * (wr.atomic.compare_add, as bytes), no buffers */
	UROCE_WR_F_FLUSH = 1 << 9,	  /* FLUSH (IBA A19): RETH + FETH, placement type and
					   * selectivity level carried in the WQE, no buffers */
};

/* The QP-type bit of the list's QP types column (types are below 16). */
#define UROCE_WR_QPT(t) (1u << UROCE_QPT_##t)

/* Groups used in the list. */
#define UROCE_WR__RC UROCE_WR_QPT(RC)
/* What the reliable transports carry: RC, and XRC from its initiator QP. */
#define UROCE_WR__REL (UROCE_WR_QPT(RC) | UROCE_WR_QPT(XRC_SEND))
#define UROCE_WR__CONN (UROCE_WR_QPT(RC) | UROCE_WR_QPT(UC))
#define UROCE_WR__DATA_QPS (UROCE_WR__CONN | UROCE_WR_QPT(XRC_SEND))
#define UROCE_WR__ALL (UROCE_WR__DATA_QPS | UROCE_WR_QPT(UD))
#define UROCE_WR__DATA (UROCE_WR_F_PAYLOAD | UROCE_WR_F_INLINE)
#define UROCE_WR__READ (UROCE_WR_F_RDMA | UROCE_WR_F_RD_ATOMIC)
#define UROCE_WR__ATOM (UROCE_WR_F_ATOMIC | UROCE_WR_F_RD_ATOMIC)
/* ATOMIC WRITE: a remote target (RETH), answered by a (zero-length) READ
 * response; it holds a responder resource, so it counts as a READ/atomic. */
#define UROCE_WR__ATOMW (UROCE_WR_F_RDMA | UROCE_WR_F_RD_ATOMIC | UROCE_WR_F_ATOMIC_WRITE)
/* FLUSH: a remote target (RETH), answered like ATOMIC WRITE by a zero-length
 * READ response from a responder resource: it counts as a READ/atomic too. */
#define UROCE_WR__FLUSH (UROCE_WR_F_RDMA | UROCE_WR_F_RD_ATOMIC | UROCE_WR_F_FLUSH)

/*
 * X(symbol, value, QP types, properties, completion opcode (UROCE_WC_ suffix),
 *   RC/UC packets: first, middle, last, only (WIRE_OP_RC_ suffixes),
 *   UD packet (WIRE_OP_UD_ suffix)).
 * A message of one packet is sent as "only", of more as first, middle...,
 * last (PROTOCOL.md 5); READ and atomic requests are one packet whatever the
 * length (the READ responses are segmented), UD has only single packets.
 */
#define UROCE_WR_LIST(X)                                                                           \
	X(RDMA_WRITE, 0, UROCE_WR__DATA_QPS, UROCE_WR__DATA | UROCE_WR_F_RDMA, RDMA_WRITE,         \
	  RDMA_WRITE_FIRST, RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST, RDMA_WRITE_ONLY, NONE)             \
	X(RDMA_WRITE_WITH_IMM, 1, UROCE_WR__DATA_QPS,                                              \
	  UROCE_WR__DATA | UROCE_WR_F_RDMA | UROCE_WR_F_IMM, RDMA_WRITE, RDMA_WRITE_FIRST,         \
	  RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST_IMM, RDMA_WRITE_ONLY_IMM, NONE)                       \
	X(SEND, 2, UROCE_WR__ALL, UROCE_WR__DATA, SEND, SEND_FIRST, SEND_MIDDLE, SEND_LAST,        \
	  SEND_ONLY, SEND_ONLY)                                                                    \
	X(SEND_WITH_IMM, 3, UROCE_WR__ALL, UROCE_WR__DATA | UROCE_WR_F_IMM, SEND, SEND_FIRST,      \
	  SEND_MIDDLE, SEND_LAST_IMM, SEND_ONLY_IMM, SEND_ONLY_IMM)                                \
	X(RDMA_READ, 4, UROCE_WR__REL, UROCE_WR__READ, RDMA_READ, NONE, NONE, NONE,                \
	  RDMA_READ_REQUEST, NONE)                                                                 \
	X(ATOMIC_CMP_AND_SWP, 5, UROCE_WR__REL, UROCE_WR__ATOM, COMP_SWAP, NONE, NONE, NONE,       \
	  COMPARE_SWAP, NONE)                                                                      \
	X(ATOMIC_FETCH_AND_ADD, 6, UROCE_WR__REL, UROCE_WR__ATOM, FETCH_ADD, NONE, NONE, NONE,     \
	  FETCH_ADD, NONE)                                                                         \
	X(LOCAL_INV, 7, UROCE_WR__DATA_QPS, UROCE_WR_F_LOCAL, LOCAL_INV, NONE, NONE, NONE, NONE,   \
	  NONE)                                                                                    \
	X(BIND_MW, 8, UROCE_WR__DATA_QPS, UROCE_WR_F_LOCAL, BIND_MW, NONE, NONE, NONE, NONE, NONE) \
	X(SEND_WITH_INV, 9, UROCE_WR__REL, UROCE_WR__DATA | UROCE_WR_F_INV, SEND, SEND_FIRST,      \
	  SEND_MIDDLE, SEND_LAST_INV, SEND_ONLY_INV, NONE)                                         \
	X(FLUSH, 14, UROCE_WR__RC, UROCE_WR__FLUSH, FLUSH, NONE, NONE, NONE, FLUSH, NONE)          \
	X(ATOMIC_WRITE, 15, UROCE_WR__RC, UROCE_WR__ATOMW, ATOMIC_WRITE, NONE, NONE, NONE,         \
	  ATOMIC_WRITE, NONE)

enum uroce_wr_opcode {
#define UROCE_WR_ENUM(name, val, ...) UROCE_WR_##name = val,
	UROCE_WR_LIST(UROCE_WR_ENUM)
#undef UROCE_WR_ENUM
};

/* The symbolic columns of one row. */
struct uroce_wr_info {
	const char *name;  /* the symbol, e.g. "RDMA_READ" */
	uint16_t qp_types; /* UROCE_WR_QPT() bits of the QP types that carry it; 0: none */
	uint16_t flags;	   /* UROCE_WR_F_* */
	uint8_t wc_opcode; /* enum uroce_wc_opcode of its send completion */
};

/*
 * The row of a WR opcode, or NULL for a value the list does not have. Pure;
 * the table is static const (one copy in each file that looks it up).
 */
static inline const struct uroce_wr_info *uroce_wr_info(uint32_t opcode)
{
	static const struct uroce_wr_info table[] = {
#define UROCE_WR_INFO(sym, val, qpts, flags, wc, ...) [val] = {#sym, qpts, flags, UROCE_WC_##wc},
	    UROCE_WR_LIST(UROCE_WR_INFO)
#undef UROCE_WR_INFO
	};

	if (opcode >= sizeof(table) / sizeof(table[0]) || !table[opcode].name)
		return NULL;
	return &table[opcode];
}

/* The UROCE_WR_F_* properties of a WR opcode; 0 for a value not in the list. */
static inline uint32_t uroce_wr_flags(uint32_t opcode)
{
	const struct uroce_wr_info *i = uroce_wr_info(opcode);

	return i ? i->flags : 0;
}

/* Does a QP of qp_type (enum uroce_qp_type) carry WRs of this opcode? */
static inline bool uroce_wr_ok(uint32_t qp_type, uint32_t opcode)
{
	const struct uroce_wr_info *i = uroce_wr_info(opcode);

	return i && qp_type < 16 && (i->qp_types >> qp_type & 1u);
}

#endif /* UROCE_WR_OPCODE_H */
