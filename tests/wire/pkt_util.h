/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: distinctive field values for every opcode, and one call to
 * build an IB packet (wire_build_ib) and frame it over IPv4 with a correct
 * ICRC (wire_frame_build_eth).
 */
#ifndef TESTS_WIRE_PKT_UTIL_H
#define TESTS_WIRE_PKT_UTIL_H

#include <check.h>
#include <string.h>
#include <wire/wire.h>

/* Field values no two fields share, so a mix-up shows. */
static inline struct wire_build pkt_fields(uint8_t opcode)
{
	struct wire_build b = {
	    .opcode = opcode,
	    .se = 1,
	    .mig = 1,
	    .ackreq = 1,
	    .pkey = 0x8001,
	    .destqp = 0xabcdef,
	    .psn = 0xfedcba,
	    .va = 0x0102030405060708ull,
	    .rkey = 0x11223344,
	    .dmalen = 0x00055667,
	    .swap_add = 0x8877665544332211ull,
	    .compare = 0x1020304050607080ull,
	    .syndrome = 0x2e,
	    .msn = 0x345678,
	    .orig = 0xf0e0d0c0b0a09080ull,
	    .qkey = 0x80010000,
	    .srcqp = 0x0a0b0c,
	    .imm = 0xcafef00d,
	    .ieth_rkey = 0x55667788,
	    .srqn = 0x0d0e0f,
	    .feth_sel = 2,
	    .feth_plt = 5,
	};
	return b;
}

/* A valid payload length for the opcode: PMTU for First/Middle, 8 for ATOMIC WRITE. */
static inline size_t pkt_payload_len(const struct wire_opcode_info *info)
{
	uint32_t m = info->mask;

	if (!(m & WIRE_PAYLOAD_MASK))
		return 0;
	if (m & WIRE_MIDDLE_MASK || (m & WIRE_ONLY_MASK) == WIRE_START_MASK)
		return 256;
	if (m & WIRE_ATOMIC_WRITE_MASK)
		return 8;
	return 5; /* pad 3 */
}

/* Frame b (with payload_len bytes of 'x') into out; returns the frame length. */
static inline size_t pkt_frame(uint8_t *out, size_t size, const struct wire_build *b,
			       size_t payload_len)
{
	uint8_t ib[4200], payload[4096];
	struct wire_frame_params p = {.ip_version = 4,
				      .src = {127, 0, 0, 1},
				      .dst = {127, 0, 0, 2},
				      .sport = 0xc011,
				      .fill_icrc = 1};
	int n;

	memset(payload, 'x', sizeof(payload));
	n = wire_build_ib(ib, sizeof(ib), b, payload, payload_len);
	ck_assert_int_gt(n, 0);
	n = wire_frame_build_eth(out, size, &p, ib, (size_t)n);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

#endif
