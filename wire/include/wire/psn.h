/* SPDX-License-Identifier: MIT */
/*
 * 24-bit packet sequence number arithmetic (IBA 9.7.2). PSNs wrap modulo
 * 2^24; comparison uses the window rule `(s32)((a - b) << 8)`, so a PSN is
 * "after" another when it lies less than 2^23 ahead of it.
 */
#ifndef WIRE_PSN_H
#define WIRE_PSN_H

#include <stdint.h>
#include <wire/bth.h>

/* psn + n modulo 2^24. */
static inline uint32_t wire_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & WIRE_PSN_MASK;
}

/* The forward distance from b to a modulo 2^24: b + result == a. */
static inline uint32_t wire_psn_sub(uint32_t a, uint32_t b)
{
	return (a - b) & WIRE_PSN_MASK;
}

/*
 * Compare two PSNs: < 0 when a is before b, 0 when equal, > 0 when a is after
 * b (within the 2^23 window). The value is the signed distance times 256.
 */
static inline int32_t wire_psn_cmp(uint32_t a, uint32_t b)
{
	uint32_t d = (a - b) << 8;

	/* Two's-complement reinterpretation without implementation-defined casts. */
	return d & 0x80000000u ? -(int32_t)(~d) - 1 : (int32_t)d;
}

/* The signed distance from b to a in packets: -2^23 .. 2^23-1. */
static inline int32_t wire_psn_diff(uint32_t a, uint32_t b)
{
	return wire_psn_cmp(a, b) / 256;
}

#endif /* WIRE_PSN_H */
