/* SPDX-License-Identifier: MIT */
/*
 * The opcode table for the RoCEv2 transports uroce speaks: RC, UC, UD, XRC
 * and the congestion notification packet (CNP, 0x81). One X-macro list
 * (WIRE_OPCODE_LIST) generates the opcode enum, the names and the table:
 * per opcode the name exactly as tshark prints it (both the opcode field's
 * value string and the operation word of its Info column), a property mask
 * (which extended headers follow, payload or not, first/middle/last/only,
 * request or response, operation class) and the offset of every header.
 * Code asks `info->mask & WIRE_RETH_MASK` instead of switching on opcodes.
 * RD (0x40-0x5F) is deliberately absent: Wireshark decodes those values as
 * Mellanox DCT and uroce never emits them.
 */
#ifndef WIRE_OPCODE_H
#define WIRE_OPCODE_H

#include <stdint.h>
#include <stddef.h>
#include <wire/bth.h>
#include <wire/ext.h>

/* Transport: the top three bits of the opcode (IBA 9.2 table 38). */
enum wire_transport {
	WIRE_TRANSPORT_RC = 0,
	WIRE_TRANSPORT_UC = 1,
	WIRE_TRANSPORT_RD = 2,
	WIRE_TRANSPORT_UD = 3,
	WIRE_TRANSPORT_CNP = 4,
	WIRE_TRANSPORT_XRC = 5,
};

static inline enum wire_transport wire_opcode_transport(uint8_t opcode)
{
	return (enum wire_transport)(opcode >> 5);
}

/*
 * Extended header slots, in the order they follow the BTH. Request and
 * response headers never occur together, so one linear order covers every
 * opcode: XRCETH, DETH, FETH, RETH or AtomicETH, AETH, AtomicAckETH, ImmDt or
 * IETH, the CNP's reserved bytes. WIRE_HDR_PAYLOAD is where the payload starts.
 */
enum wire_hdr {
	WIRE_HDR_BTH,
	WIRE_HDR_XRCETH,
	WIRE_HDR_DETH,
	WIRE_HDR_FETH,
	WIRE_HDR_RETH,
	WIRE_HDR_ATMETH,
	WIRE_HDR_AETH,
	WIRE_HDR_ATMACK,
	WIRE_HDR_IMMDT,
	WIRE_HDR_IETH,
	WIRE_HDR_CNP,
	WIRE_HDR_PAYLOAD,
	WIRE_HDR_COUNT
};

/* Property bits of wire_opcode_info.mask. Header bits are 1 << WIRE_HDR_x. */
enum {
	WIRE_XRCETH_MASK = 1u << WIRE_HDR_XRCETH,
	WIRE_DETH_MASK = 1u << WIRE_HDR_DETH,
	WIRE_FETH_MASK = 1u << WIRE_HDR_FETH,
	WIRE_RETH_MASK = 1u << WIRE_HDR_RETH,
	WIRE_ATMETH_MASK = 1u << WIRE_HDR_ATMETH,
	WIRE_AETH_MASK = 1u << WIRE_HDR_AETH,
	WIRE_ATMACK_MASK = 1u << WIRE_HDR_ATMACK,
	WIRE_IMMDT_MASK = 1u << WIRE_HDR_IMMDT,
	WIRE_IETH_MASK = 1u << WIRE_HDR_IETH,
	WIRE_CNP_MASK = 1u << WIRE_HDR_CNP,	    /* 16 reserved bytes follow the BTH */
	WIRE_PAYLOAD_MASK = 1u << WIRE_HDR_PAYLOAD, /* the opcode may carry payload */

	WIRE_REQ_MASK = 1u << 12,	   /* sent by a requester */
	WIRE_RESP_MASK = 1u << 13,	   /* sent by a responder (ACK, read response) */
	WIRE_START_MASK = 1u << 14,	   /* first packet of a message (First or Only) */
	WIRE_MIDDLE_MASK = 1u << 15,	   /* Middle packet */
	WIRE_END_MASK = 1u << 16,	   /* last packet of a message (Last or Only) */
	WIRE_SEND_MASK = 1u << 17,	   /* SEND, any variant */
	WIRE_WRITE_MASK = 1u << 18,	   /* RDMA WRITE, any variant */
	WIRE_READ_MASK = 1u << 19,	   /* RDMA READ request */
	WIRE_READ_RESP_MASK = 1u << 20,	   /* RDMA READ response, any segment */
	WIRE_ATOMIC_MASK = 1u << 21,	   /* CmpSwap or FetchAdd */
	WIRE_ACK_MASK = 1u << 22,	   /* Acknowledge or Atomic Acknowledge */
	WIRE_FLUSH_MASK = 1u << 23,	   /* FLUSH (IBTA 1.5) */
	WIRE_ATOMIC_WRITE_MASK = 1u << 24, /* ATOMIC WRITE (IBTA 1.5), 8-byte payload */
	WIRE_CNP_OP_MASK = 1u << 25,	   /* congestion notification */

	WIRE_ONLY_MASK = WIRE_START_MASK | WIRE_END_MASK,
	WIRE_FIRST_MASK = WIRE_START_MASK,
	WIRE_LAST_MASK = WIRE_END_MASK,
};

/* Property groups used in the list below. */
#define WIRE__RQ (WIRE_REQ_MASK)
#define WIRE__RS (WIRE_RESP_MASK)
#define WIRE__P (WIRE_PAYLOAD_MASK)
#define WIRE__ONLY (WIRE_START_MASK | WIRE_END_MASK)

/*
 * The operations common to several transports: X(op, low bits, tshark value
 * string suffix, tshark Info word, mask). The transport-specific lists below
 * select from them so each name is written once.
 */
#define WIRE__OP_SEND_FIRST(X, T, B, P, TN, TS)                       \
	X(T##_SEND_FIRST, B + 0x00, TN "SEND First", TS "Send First", \
	  P | WIRE__RQ | WIRE__P | WIRE_START_MASK | WIRE_SEND_MASK)
#define WIRE__OP_SEND_MIDDLE(X, T, B, P, TN, TS)                         \
	X(T##_SEND_MIDDLE, B + 0x01, TN "SEND Middle", TS "Send Middle", \
	  P | WIRE__RQ | WIRE__P | WIRE_MIDDLE_MASK | WIRE_SEND_MASK)
#define WIRE__OP_SEND_LAST(X, T, B, P, TN, TS)                     \
	X(T##_SEND_LAST, B + 0x02, TN "SEND Last", TS "Send Last", \
	  P | WIRE__RQ | WIRE__P | WIRE_END_MASK | WIRE_SEND_MASK)
#define WIRE__OP_SEND_LAST_IMM(X, T, B, P, TN, TS)                                              \
	X(T##_SEND_LAST_IMM, B + 0x03, TN "SEND Last with Immediate", TS "Send Last Immediate", \
	  P | WIRE__RQ | WIRE__P | WIRE_END_MASK | WIRE_SEND_MASK | WIRE_IMMDT_MASK)
#define WIRE__OP_SEND_ONLY(X, T, B, P, TN, TS)                     \
	X(T##_SEND_ONLY, B + 0x04, TN "SEND Only", TS "Send Only", \
	  P | WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_SEND_MASK)
#define WIRE__OP_SEND_ONLY_IMM(X, T, B, P, TN, TS)                                              \
	X(T##_SEND_ONLY_IMM, B + 0x05, TN "SEND Only with Immediate", TS "Send Only Immediate", \
	  P | WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_SEND_MASK | WIRE_IMMDT_MASK)
#define WIRE__OP_WRITE_FIRST(X, T, B, P, TN, TS)                                        \
	X(T##_RDMA_WRITE_FIRST, B + 0x06, TN "RDMA WRITE First", TS "RDMA Write First", \
	  P | WIRE__RQ | WIRE__P | WIRE_START_MASK | WIRE_WRITE_MASK | WIRE_RETH_MASK)
#define WIRE__OP_WRITE_MIDDLE(X, T, B, P, TN, TS)                                          \
	X(T##_RDMA_WRITE_MIDDLE, B + 0x07, TN "RDMA WRITE Middle", TS "RDMA Write Middle", \
	  P | WIRE__RQ | WIRE__P | WIRE_MIDDLE_MASK | WIRE_WRITE_MASK)
#define WIRE__OP_WRITE_LAST(X, T, B, P, TN, TS)                                      \
	X(T##_RDMA_WRITE_LAST, B + 0x08, TN "RDMA WRITE Last", TS "RDMA Write Last", \
	  P | WIRE__RQ | WIRE__P | WIRE_END_MASK | WIRE_WRITE_MASK)
#define WIRE__OP_WRITE_LAST_IMM(X, T, B, P, TN, TS)                               \
	X(T##_RDMA_WRITE_LAST_IMM, B + 0x09, TN "RDMA WRITE Last with Immediate", \
	  TS "RDMA Write Last Immediate",                                         \
	  P | WIRE__RQ | WIRE__P | WIRE_END_MASK | WIRE_WRITE_MASK | WIRE_IMMDT_MASK)
#define WIRE__OP_WRITE_ONLY(X, T, B, P, TN, TS)                                      \
	X(T##_RDMA_WRITE_ONLY, B + 0x0a, TN "RDMA WRITE Only", TS "RDMA Write Only", \
	  P | WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_WRITE_MASK | WIRE_RETH_MASK)
#define WIRE__OP_WRITE_ONLY_IMM(X, T, B, P, TN, TS)                                \
	X(T##_RDMA_WRITE_ONLY_IMM, B + 0x0b, TN "RDMA WRITE Only with Immediate",  \
	  TS "RDMA Write Only Immediate",                                          \
	  P | WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_WRITE_MASK | WIRE_RETH_MASK | \
	      WIRE_IMMDT_MASK)
#define WIRE__OP_READ_REQ(X, T, B, P, TN, TS)                                              \
	X(T##_RDMA_READ_REQUEST, B + 0x0c, TN "RDMA READ Request", TS "RDMA Read Request", \
	  P | WIRE__RQ | WIRE__ONLY | WIRE_READ_MASK | WIRE_RETH_MASK)
#define WIRE__OP_READ_RESP_FIRST(X, T, B, P, TN, TS)                             \
	X(T##_RDMA_READ_RESPONSE_FIRST, B + 0x0d, TN "RDMA READ response First", \
	  TS "RDMA Read Response First",                                         \
	  P | WIRE__RS | WIRE__P | WIRE_START_MASK | WIRE_READ_RESP_MASK | WIRE_AETH_MASK)
#define WIRE__OP_READ_RESP_MIDDLE(X, T, B, P, TN, TS)                              \
	X(T##_RDMA_READ_RESPONSE_MIDDLE, B + 0x0e, TN "RDMA READ response Middle", \
	  TS "RDMA Read Response Middle",                                          \
	  P | WIRE__RS | WIRE__P | WIRE_MIDDLE_MASK | WIRE_READ_RESP_MASK)
#define WIRE__OP_READ_RESP_LAST(X, T, B, P, TN, TS)                            \
	X(T##_RDMA_READ_RESPONSE_LAST, B + 0x0f, TN "RDMA READ response Last", \
	  TS "RDMA Read Response Last",                                        \
	  P | WIRE__RS | WIRE__P | WIRE_END_MASK | WIRE_READ_RESP_MASK | WIRE_AETH_MASK)
#define WIRE__OP_READ_RESP_ONLY(X, T, B, P, TN, TS)                            \
	X(T##_RDMA_READ_RESPONSE_ONLY, B + 0x10, TN "RDMA READ response Only", \
	  TS "RDMA Read Response Only",                                        \
	  P | WIRE__RS | WIRE__P | WIRE__ONLY | WIRE_READ_RESP_MASK | WIRE_AETH_MASK)
#define WIRE__OP_ACK(X, T, B, P, TN, TS)                                 \
	X(T##_ACKNOWLEDGE, B + 0x11, TN "Acknowledge", TS "Acknowledge", \
	  WIRE__RS | WIRE__ONLY | WIRE_ACK_MASK | WIRE_AETH_MASK)
#define WIRE__OP_ATOMIC_ACK(X, T, B, P, TN, TS)                                               \
	X(T##_ATOMIC_ACKNOWLEDGE, B + 0x12, TN "ATOMIC Acknowledge", TS "Atomic Acknowledge", \
	  WIRE__RS | WIRE__ONLY | WIRE_ACK_MASK | WIRE_AETH_MASK | WIRE_ATMACK_MASK)
#define WIRE__OP_CMP_SWAP(X, T, B, P, TN, TS)                          \
	X(T##_COMPARE_SWAP, B + 0x13, TN "CmpSwap", TS "Compare Swap", \
	  P | WIRE__RQ | WIRE__ONLY | WIRE_ATOMIC_MASK | WIRE_ATMETH_MASK)
#define WIRE__OP_FETCH_ADD(X, T, B, P, TN, TS)                    \
	X(T##_FETCH_ADD, B + 0x14, TN "FetchAdd", TS "Fetch Add", \
	  P | WIRE__RQ | WIRE__ONLY | WIRE_ATOMIC_MASK | WIRE_ATMETH_MASK)
#define WIRE__OP_SEND_LAST_INV(X, T, B, P, TN, TS)                                                \
	X(T##_SEND_LAST_INV, B + 0x16, TN "SEND Last with Invalidate", TS "Send Last Invalidate", \
	  P | WIRE__RQ | WIRE__P | WIRE_END_MASK | WIRE_SEND_MASK | WIRE_IETH_MASK)
#define WIRE__OP_SEND_ONLY_INV(X, T, B, P, TN, TS)                                                \
	X(T##_SEND_ONLY_INV, B + 0x17, TN "SEND Only with Invalidate", TS "Send Only Invalidate", \
	  P | WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_SEND_MASK | WIRE_IETH_MASK)

#define WIRE__RC_TN "Reliable Connection (RC) - "
#define WIRE__UC_TN "Unreliable Connection (UC) - "
#define WIRE__UD_TN "Unreliable Datagram (UD) - "
#define WIRE__XRC_TN "Extended Reliable Connection (XRC) - "

/* Operations a connected transport (RC, XRC) has, in opcode order. */
#define WIRE__CONNECTED_OPS(X, T, B, P, TN, TS)       \
	WIRE__OP_SEND_FIRST(X, T, B, P, TN, TS)       \
	WIRE__OP_SEND_MIDDLE(X, T, B, P, TN, TS)      \
	WIRE__OP_SEND_LAST(X, T, B, P, TN, TS)        \
	WIRE__OP_SEND_LAST_IMM(X, T, B, P, TN, TS)    \
	WIRE__OP_SEND_ONLY(X, T, B, P, TN, TS)        \
	WIRE__OP_SEND_ONLY_IMM(X, T, B, P, TN, TS)    \
	WIRE__OP_WRITE_FIRST(X, T, B, P, TN, TS)      \
	WIRE__OP_WRITE_MIDDLE(X, T, B, P, TN, TS)     \
	WIRE__OP_WRITE_LAST(X, T, B, P, TN, TS)       \
	WIRE__OP_WRITE_LAST_IMM(X, T, B, P, TN, TS)   \
	WIRE__OP_WRITE_ONLY(X, T, B, P, TN, TS)       \
	WIRE__OP_WRITE_ONLY_IMM(X, T, B, P, TN, TS)   \
	WIRE__OP_READ_REQ(X, T, B, P, TN, TS)         \
	WIRE__OP_READ_RESP_FIRST(X, T, B, P, TN, TS)  \
	WIRE__OP_READ_RESP_MIDDLE(X, T, B, P, TN, TS) \
	WIRE__OP_READ_RESP_LAST(X, T, B, P, TN, TS)   \
	WIRE__OP_READ_RESP_ONLY(X, T, B, P, TN, TS)   \
	WIRE__OP_ACK(X, T, B, P, TN, TS)              \
	WIRE__OP_ATOMIC_ACK(X, T, B, P, TN, TS)       \
	WIRE__OP_CMP_SWAP(X, T, B, P, TN, TS)         \
	WIRE__OP_FETCH_ADD(X, T, B, P, TN, TS)        \
	WIRE__OP_SEND_LAST_INV(X, T, B, P, TN, TS)    \
	WIRE__OP_SEND_ONLY_INV(X, T, B, P, TN, TS)

/*
 * The list: X(enum suffix, value, tshark value string, tshark Info words, mask).
 * XRC requests carry an XRCETH; XRC responses do not (IBA 19.2.3, rxe).
 */
#define WIRE_OPCODE_LIST(X)                                                                    \
	WIRE__CONNECTED_OPS(X, RC, 0x00, 0, WIRE__RC_TN, "RC ")                                \
	X(RC_FLUSH, 0x1c, WIRE__RC_TN "FLUSH", "RC Flush",                                     \
	  WIRE__RQ | WIRE__ONLY | WIRE_FLUSH_MASK | WIRE_FETH_MASK | WIRE_RETH_MASK)           \
	X(RC_ATOMIC_WRITE, 0x1d, WIRE__RC_TN "ATOMIC WRITE", "RC Atomic Write",                \
	  WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_ATOMIC_WRITE_MASK | WIRE_RETH_MASK)           \
	WIRE__OP_SEND_FIRST(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                                \
	WIRE__OP_SEND_MIDDLE(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                               \
	WIRE__OP_SEND_LAST(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                                 \
	WIRE__OP_SEND_LAST_IMM(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                             \
	WIRE__OP_SEND_ONLY(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                                 \
	WIRE__OP_SEND_ONLY_IMM(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                             \
	WIRE__OP_WRITE_FIRST(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                               \
	WIRE__OP_WRITE_MIDDLE(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                              \
	WIRE__OP_WRITE_LAST(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                                \
	WIRE__OP_WRITE_LAST_IMM(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                            \
	WIRE__OP_WRITE_ONLY(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                                \
	WIRE__OP_WRITE_ONLY_IMM(X, UC, 0x20, 0, WIRE__UC_TN, "UC ")                            \
	X(UD_SEND_ONLY, 0x64, WIRE__UD_TN "SEND only", "UD Send Only",                         \
	  WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_SEND_MASK | WIRE_DETH_MASK)                   \
	X(UD_SEND_ONLY_IMM, 0x65, WIRE__UD_TN "SEND only with Immediate",                      \
	  "UD Send Only Immediate",                                                            \
	  WIRE__RQ | WIRE__P | WIRE__ONLY | WIRE_SEND_MASK | WIRE_DETH_MASK | WIRE_IMMDT_MASK) \
	X(CNP, 0x81, "CNP", "CNP", WIRE__ONLY | WIRE_CNP_OP_MASK | WIRE_CNP_MASK)              \
	WIRE__XRC_OPS(X)

/* XRC: requests carry an XRCETH, responses do not. */
#define WIRE__XRC_OPS(X)                                                              \
	WIRE__OP_SEND_FIRST(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")     \
	WIRE__OP_SEND_MIDDLE(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")    \
	WIRE__OP_SEND_LAST(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")      \
	WIRE__OP_SEND_LAST_IMM(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")  \
	WIRE__OP_SEND_ONLY(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")      \
	WIRE__OP_SEND_ONLY_IMM(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")  \
	WIRE__OP_WRITE_FIRST(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")    \
	WIRE__OP_WRITE_MIDDLE(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")   \
	WIRE__OP_WRITE_LAST(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")     \
	WIRE__OP_WRITE_LAST_IMM(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ") \
	WIRE__OP_WRITE_ONLY(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")     \
	WIRE__OP_WRITE_ONLY_IMM(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ") \
	WIRE__OP_READ_REQ(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")       \
	WIRE__OP_READ_RESP_FIRST(X, XRC, 0xa0, 0, WIRE__XRC_TN, "XRC ")               \
	WIRE__OP_READ_RESP_MIDDLE(X, XRC, 0xa0, 0, WIRE__XRC_TN, "XRC ")              \
	WIRE__OP_READ_RESP_LAST(X, XRC, 0xa0, 0, WIRE__XRC_TN, "XRC ")                \
	WIRE__OP_READ_RESP_ONLY(X, XRC, 0xa0, 0, WIRE__XRC_TN, "XRC ")                \
	WIRE__OP_ACK(X, XRC, 0xa0, 0, WIRE__XRC_TN, "XRC ")                           \
	WIRE__OP_ATOMIC_ACK(X, XRC, 0xa0, 0, WIRE__XRC_TN, "XRC ")                    \
	WIRE__OP_CMP_SWAP(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")       \
	WIRE__OP_FETCH_ADD(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")      \
	WIRE__OP_SEND_LAST_INV(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")  \
	WIRE__OP_SEND_ONLY_INV(X, XRC, 0xa0, WIRE_XRCETH_MASK, WIRE__XRC_TN, "XRC ")

/* WIRE_OP_RC_SEND_FIRST = 0x00, ..., WIRE_OP_CNP = 0x81, ... */
enum wire_opcode {
#define WIRE__OP_ENUM(sym, val, name, info, mask) WIRE_OP_##sym = (val),
	WIRE_OPCODE_LIST(WIRE__OP_ENUM)
#undef WIRE__OP_ENUM
};

/* How many opcodes the table knows. */
enum {
#define WIRE__OP_COUNT(sym, val, name, info, mask) +1
	WIRE_OPCODE_COUNT = 0 WIRE_OPCODE_LIST(WIRE__OP_COUNT)
#undef WIRE__OP_COUNT
};

struct wire_opcode_info {
	const char *name; /* tshark's value string, e.g. "Reliable Connection (RC) - SEND First" */
	const char *info_name; /* tshark's Info column words, e.g. "RC Send First" */
	const char *sym;       /* the enum suffix, e.g. "RC_SEND_FIRST" */
	uint32_t mask;	       /* WIRE_*_MASK properties */
	uint8_t opcode;
	uint8_t hdr_bytes;		/* BTH + every extended header (= payload offset) */
	uint8_t offset[WIRE_HDR_COUNT]; /* byte offset of each header from the BTH; 0 if absent */
};

/*
 * Look an opcode up. Returns the table entry, or NULL for an opcode uroce does
 * not know (RD, reserved, vendor values). The entries are static const.
 */
const struct wire_opcode_info *wire_opcode_info(uint8_t opcode);

/*
 * The n-th known opcode in ascending order, for iterating over the table;
 * NULL when n >= WIRE_OPCODE_COUNT.
 */
const struct wire_opcode_info *wire_opcode_at(unsigned n);

/* The tshark value string of an opcode, or "Unknown" when not in the table. */
const char *wire_opcode_name(uint8_t opcode);

/* Size in bytes of the extended header in slot h (WIRE_HDR_x); 0 for PAYLOAD. */
size_t wire_hdr_bytes(enum wire_hdr h);

/* Name of a header slot, e.g. "RETH". */
const char *wire_hdr_name(enum wire_hdr h);

#endif /* WIRE_OPCODE_H */
