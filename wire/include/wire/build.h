/* SPDX-License-Identifier: MIT */
/*
 * Building one IB transport packet from field values: the BTH, whichever
 * extended headers the opcode carries (positions from the opcode table), the
 * payload, zero pad bytes with PadCnt set to match, and 4 ICRC bytes left
 * zero (the ICRC depends on the IP header: see wire/icrc.h and
 * wire_frame_build_eth()). Fields the opcode does not carry are ignored.
 */
#ifndef WIRE_BUILD_H
#define WIRE_BUILD_H

#include <stddef.h>
#include <stdint.h>

struct wire_build {
	uint8_t opcode;
	unsigned se, mig, ackreq, fecn, becn;
	uint16_t pkey; /* 0 means WIRE_DEFAULT_PKEY (0xffff) */
	uint32_t destqp, psn;
	uint64_t va;		     /* RETH or AtomicETH */
	uint32_t rkey;		     /* RETH or AtomicETH */
	uint32_t dmalen;	     /* RETH */
	uint64_t swap_add, compare;  /* AtomicETH */
	uint8_t syndrome;	     /* AETH */
	uint32_t msn;		     /* AETH */
	uint64_t orig;		     /* AtomicAckETH */
	uint32_t qkey, srcqp;	     /* DETH */
	uint32_t imm;		     /* ImmDt, host order (written big-endian) */
	uint32_t ieth_rkey;	     /* IETH */
	uint32_t srqn;		     /* XRCETH */
	unsigned feth_sel, feth_plt; /* FETH */
};

/*
 * Write the packet into buf (size bytes). Returns its length including pad
 * and the 4 zero ICRC bytes, or -EINVAL (unknown opcode, payload on an opcode
 * without payload, payload_len > 4096) or -ENOSPC. payload may be NULL when
 * payload_len is 0.
 */
int wire_build_ib(uint8_t *buf, size_t size, const struct wire_build *b, const void *payload,
		  size_t payload_len);

#endif /* WIRE_BUILD_H */
