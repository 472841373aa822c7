/* SPDX-License-Identifier: MIT */
/*
 * The AETH syndrome (IBA 9.7.5.1): encode and decode the type (ACK, RNR NAK,
 * NAK), the ACK credit count table, the RNR timer table (in microseconds) and
 * the NAK codes with their names (X-macro WIRE_NAK_LIST). The header layout
 * itself is in wire/ext.h.
 */
#ifndef WIRE_AETH_H
#define WIRE_AETH_H

#include <stdint.h>

/* Syndrome byte: bit 7 reserved, bits 6..5 type, bits 4..0 value. */
#define WIRE_AETH_TYPE_MASK 0x60
#define WIRE_AETH_VALUE_MASK 0x1f
#define WIRE_AETH_RESV_MASK 0x80
/* ACK credit code meaning "invalid / unlimited credits" (rxe always sends it). */
#define WIRE_AETH_CREDITS_INVALID 0x1f
/* The syndrome rxe puts in every ACK: ACK with credit code 0x1f. */
#define WIRE_AETH_ACK_UNLIMITED 0x1f

enum wire_aeth_type {
	WIRE_AETH_ACK = 0,     /* 0x00-0x1f: value = credit code */
	WIRE_AETH_RNR_NAK = 1, /* 0x20-0x3f: value = RNR timer code */
	WIRE_AETH_RESERVED = 2,
	WIRE_AETH_NAK = 3, /* 0x60-0x7f: value = NAK code */
};

/* NAK codes (IBA table 44): X(enum suffix, code, name as tshark prints it). */
#define WIRE_NAK_LIST(X)                                \
	X(PSN_SEQ_ERR, 0, "PSN Sequence Error")         \
	X(INVALID_REQUEST, 1, "Invalid Request")        \
	X(REMOTE_ACCESS_ERR, 2, "Remote Access Error")  \
	X(REMOTE_OP_ERR, 3, "Remote Operational Error") \
	X(INVALID_RD_REQUEST, 4, "Invalid RD Request")

enum wire_nak_code {
#define WIRE__NAK_ENUM(sym, code, name) WIRE_NAK_##sym = (code),
	WIRE_NAK_LIST(WIRE__NAK_ENUM)
#undef WIRE__NAK_ENUM
};

/* Build a syndrome from a type and a 5-bit value. */
static inline uint8_t wire_aeth_syndrome(enum wire_aeth_type type, unsigned value)
{
	return (uint8_t)(((unsigned)type << 5 & WIRE_AETH_TYPE_MASK) |
			 (value & WIRE_AETH_VALUE_MASK));
}

static inline enum wire_aeth_type wire_aeth_syndrome_type(uint8_t syndrome)
{
	return (enum wire_aeth_type)((syndrome & WIRE_AETH_TYPE_MASK) >> 5);
}

static inline unsigned wire_aeth_syndrome_value(uint8_t syndrome)
{
	return syndrome & WIRE_AETH_VALUE_MASK;
}

/* "ACK", "RNR NAK", "Reserved" or "NAK". */
const char *wire_aeth_type_name(enum wire_aeth_type type);

/*
 * Receive credits a credit code (0..31) stands for (IBA table 45): 0, 1, 2,
 * 3, 4, 6, 8, 12, ... 32768; -1 for code 31 ("invalid": no credit limit) and
 * for codes above 31.
 */
int32_t wire_aeth_credits(unsigned code);

/* The largest credit code whose count does not exceed credits (0..30). */
unsigned wire_aeth_credit_code(uint32_t credits);

/*
 * The RNR NAK timer (IBA table 46) of a timer code 0..31 in microseconds:
 * 1 -> 10, 14 -> 1280, 31 -> 491520, 0 -> 655360. Codes above 31 give 0.
 */
uint32_t wire_aeth_rnr_usec(unsigned code);

/* The smallest timer code whose delay is at least usec (0 = 655.36 ms, the longest). */
unsigned wire_aeth_rnr_code(uint32_t usec);

/* Name of a NAK code ("PSN Sequence Error", ...), "Reserved" for 5..31. */
const char *wire_aeth_nak_name(unsigned code);

#endif /* WIRE_AETH_H */
