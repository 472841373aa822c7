/* SPDX-License-Identifier: MIT */
/*
 * Tests of the opcode table against PROTOCOL.md section 4 (IBA 9.2 table 38,
 * rxe_opcode.c): which opcodes exist, which headers each carries and where,
 * properties that must agree with each other, and the tshark names.
 */
#include <string.h>
#include <wire/opcode.h>

#include "suites.h"

#define H(x) WIRE_##x##_MASK
#define HDR_BITS                                                                                \
	(H(XRCETH) | H(DETH) | H(FETH) | H(RETH) | H(ATMETH) | H(AETH) | H(ATMACK) | H(IMMDT) | \
	 H(IETH) | H(CNP))

/* Extended headers by operation (low 5 bits), for RC/UC/XRC (before XRCETH). */
static uint32_t expected_hdrs_by_op(unsigned op)
{
	switch (op) {
	case 0x03:
	case 0x05:
	case 0x09:
		return H(IMMDT);
	case 0x06:
	case 0x0a:
	case 0x0c:
		return H(RETH);
	case 0x0b:
		return H(RETH) | H(IMMDT);
	case 0x0d:
	case 0x0f:
	case 0x10:
	case 0x11:
		return H(AETH);
	case 0x12:
		return H(AETH) | H(ATMACK);
	case 0x13:
	case 0x14:
		return H(ATMETH);
	case 0x16:
	case 0x17:
		return H(IETH);
	default:
		return 0;
	}
}

/* -1 when the opcode must not exist, else its expected header mask. */
static int64_t expected_hdrs(unsigned opcode)
{
	unsigned op = opcode & 0x1f;

	switch (opcode >> 5) {
	case 0: /* RC */
		if (op == 0x1c)
			return H(FETH) | H(RETH);
		if (op == 0x1d)
			return H(RETH);
		if (op <= 0x14 || op == 0x16 || op == 0x17)
			return expected_hdrs_by_op(op);
		return -1;
	case 1: /* UC */
		return op <= 0x0b ? (int64_t)expected_hdrs_by_op(op) : -1;
	case 3: /* UD */
		if (op == 0x04)
			return H(DETH);
		if (op == 0x05)
			return H(DETH) | H(IMMDT);
		return -1;
	case 4: /* CNP */
		return op == 0x01 ? H(CNP) : -1;
	case 5: /* XRC: requests carry XRCETH */
		if (op <= 0x14 || op == 0x16 || op == 0x17) {
			uint32_t m = expected_hdrs_by_op(op);

			return (op >= 0x0d && op <= 0x12) ? m : m | H(XRCETH);
		}
		return -1;
	default: /* RD, reserved, vendor */
		return -1;
	}
}

START_TEST(test_opcode_presence_and_headers)
{
	unsigned opcode = (unsigned)_i;
	const struct wire_opcode_info *info = wire_opcode_info((uint8_t)opcode);
	int64_t want = expected_hdrs(opcode);

	if (want < 0) {
		ck_assert_msg(info == NULL, "opcode 0x%02x should be unknown", opcode);
		ck_assert_str_eq(wire_opcode_name((uint8_t)opcode), "Unknown");
		return;
	}
	ck_assert_msg(info != NULL, "opcode 0x%02x missing", opcode);
	ck_assert_uint_eq(info->opcode, opcode);
	ck_assert_msg((info->mask & HDR_BITS) == (uint32_t)want,
		      "opcode 0x%02x headers 0x%x, want 0x%x", opcode, info->mask & HDR_BITS,
		      (unsigned)want);
}
END_TEST

/* Offsets follow the fixed header order, hdr_bytes adds up. */
START_TEST(test_opcode_offsets)
{
	const struct wire_opcode_info *info = wire_opcode_at((unsigned)_i);
	size_t expect = WIRE_BTH_BYTES;

	ck_assert_ptr_nonnull(info);
	ck_assert_uint_eq(info->offset[WIRE_HDR_BTH], 0);
	for (int h = WIRE_HDR_XRCETH; h < WIRE_HDR_PAYLOAD; h++) {
		if (info->mask & (1u << h)) {
			ck_assert_msg(info->offset[h] == expect, "%s: %s at %u, want %zu",
				      info->sym, wire_hdr_name((enum wire_hdr)h), info->offset[h],
				      expect);
			expect += wire_hdr_bytes((enum wire_hdr)h);
		} else {
			ck_assert_uint_eq(info->offset[h], 0);
		}
	}
	ck_assert_uint_eq(info->hdr_bytes, expect);
	ck_assert_uint_eq(info->offset[WIRE_HDR_PAYLOAD], expect);
	ck_assert_uint_eq(info->hdr_bytes % 4, 0);
}
END_TEST

/* Properties that must agree with each other and with the name. */
START_TEST(test_opcode_properties)
{
	const struct wire_opcode_info *info = wire_opcode_at((unsigned)_i);
	uint32_t m = info->mask;
	const char *n = info->name;

	if (m & WIRE_CNP_OP_MASK) {
		ck_assert(!(m & (WIRE_REQ_MASK | WIRE_RESP_MASK | WIRE_PAYLOAD_MASK)));
	} else {
		ck_assert_msg(!!(m & WIRE_REQ_MASK) != !!(m & WIRE_RESP_MASK), "%s", info->sym);
	}
	if (m & WIRE_MIDDLE_MASK)
		ck_assert(!(m & (WIRE_START_MASK | WIRE_END_MASK)));
	else
		ck_assert(m & (WIRE_START_MASK | WIRE_END_MASK));
	ck_assert_uint_eq(!!strstr(n, " First"), (m & WIRE_ONLY_MASK) == WIRE_START_MASK);
	ck_assert_uint_eq(!!strstr(n, " Middle"), !!(m & WIRE_MIDDLE_MASK));
	ck_assert_uint_eq(!!strstr(n, " Last"), (m & WIRE_ONLY_MASK) == WIRE_END_MASK);
	ck_assert_uint_eq(!!strstr(n, "Immediate"), !!(m & WIRE_IMMDT_MASK));
	ck_assert_uint_eq(!!strstr(n, "Invalidate"), !!(m & WIRE_IETH_MASK));
	ck_assert_uint_eq(!!strstr(n, "SEND"), !!(m & WIRE_SEND_MASK));
	ck_assert_uint_eq(!!strstr(n, "RDMA WRITE"), !!(m & WIRE_WRITE_MASK));
	ck_assert_uint_eq(!!strstr(n, "READ Request"), !!(m & WIRE_READ_MASK));
	ck_assert_uint_eq(!!strstr(n, "READ response"), !!(m & WIRE_READ_RESP_MASK));
	ck_assert_uint_eq(!!strstr(n, "Acknowledge"), !!(m & WIRE_ACK_MASK));
	/* payload: SEND, WRITE, read responses, ATOMIC WRITE; never ACKs, requests for data */
	ck_assert_uint_eq(!!(m & WIRE_PAYLOAD_MASK),
			  !!(m & (WIRE_SEND_MASK | WIRE_WRITE_MASK | WIRE_READ_RESP_MASK |
				  WIRE_ATOMIC_WRITE_MASK)));
	/* RETH exactly on WRITE First/Only, READ request, FLUSH, ATOMIC WRITE */
	ck_assert_uint_eq(!!(m & WIRE_RETH_MASK),
			  ((m & WIRE_WRITE_MASK) && (m & WIRE_START_MASK)) ||
			      (m & (WIRE_READ_MASK | WIRE_FLUSH_MASK | WIRE_ATOMIC_WRITE_MASK)));
}
END_TEST

START_TEST(test_opcode_order_and_count)
{
	unsigned n = 0, prev = 0;

	for (unsigned op = 0; op < 256; op++)
		n += wire_opcode_info((uint8_t)op) != NULL;
	ck_assert_uint_eq(n, WIRE_OPCODE_COUNT);
	/* RC 23 + FLUSH + ATOMIC WRITE, UC 12, UD 2, CNP 1, XRC 23 */
	ck_assert_uint_eq(WIRE_OPCODE_COUNT, 25 + 12 + 2 + 1 + 23);
	for (unsigned i = 0; i < WIRE_OPCODE_COUNT; i++) {
		const struct wire_opcode_info *info = wire_opcode_at(i);

		if (i)
			ck_assert_uint_gt(info->opcode, prev);
		prev = info->opcode;
	}
	ck_assert_ptr_null(wire_opcode_at(WIRE_OPCODE_COUNT));
}
END_TEST

/* Names exactly as tshark 4.0 prints them (opcode value string, Info column). */
START_TEST(test_opcode_names)
{
	static const struct {
		uint8_t op;
		const char *name, *info;
	} want[] = {
	    {0x00, "Reliable Connection (RC) - SEND First", "RC Send First"},
	    {0x05, "Reliable Connection (RC) - SEND Only with Immediate", "RC Send Only Immediate"},
	    {0x0e, "Reliable Connection (RC) - RDMA READ response Middle",
	     "RC RDMA Read Response Middle"},
	    {0x11, "Reliable Connection (RC) - Acknowledge", "RC Acknowledge"},
	    {0x12, "Reliable Connection (RC) - ATOMIC Acknowledge", "RC Atomic Acknowledge"},
	    {0x13, "Reliable Connection (RC) - CmpSwap", "RC Compare Swap"},
	    {0x14, "Reliable Connection (RC) - FetchAdd", "RC Fetch Add"},
	    {0x2b, "Unreliable Connection (UC) - RDMA WRITE Only with Immediate",
	     "UC RDMA Write Only Immediate"},
	    {0x64, "Unreliable Datagram (UD) - SEND only", "UD Send Only"},
	    {0x65, "Unreliable Datagram (UD) - SEND only with Immediate", "UD Send Only Immediate"},
	    {0xb7, "Extended Reliable Connection (XRC) - SEND Only with Invalidate",
	     "XRC Send Only Invalidate"},
	    {0x81, "CNP", "CNP"},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct wire_opcode_info *info = wire_opcode_info(want[i].op);

		ck_assert_ptr_nonnull(info);
		ck_assert_str_eq(info->name, want[i].name);
		ck_assert_str_eq(info->info_name, want[i].info);
		ck_assert_str_eq(wire_opcode_name(want[i].op), want[i].name);
	}
	ck_assert_int_eq(WIRE_OP_RC_SEND_FIRST, 0x00);
	ck_assert_int_eq(WIRE_OP_RC_ACKNOWLEDGE, 0x11);
	ck_assert_int_eq(WIRE_OP_UD_SEND_ONLY, 0x64);
	ck_assert_int_eq(WIRE_OP_CNP, 0x81);
	ck_assert_int_eq(WIRE_OP_XRC_FETCH_ADD, 0xb4);
	ck_assert_int_eq(WIRE_OP_RC_SEND_ONLY_INV, 0x17);
	ck_assert_str_eq(wire_hdr_name(WIRE_HDR_RETH), "RETH");
	ck_assert_uint_eq(wire_hdr_bytes(WIRE_HDR_ATMETH), 28);
	ck_assert_str_eq(wire_hdr_name((enum wire_hdr)99), "invalid");
}
END_TEST

/* Concrete layouts from PROTOCOL.md section 3 and rxe_opcode.c. */
START_TEST(test_opcode_known_layouts)
{
	const struct wire_opcode_info *i;

	i = wire_opcode_info(WIRE_OP_RC_RDMA_WRITE_ONLY_IMM);
	ck_assert_uint_eq(i->offset[WIRE_HDR_RETH], 12);
	ck_assert_uint_eq(i->offset[WIRE_HDR_IMMDT], 28);
	ck_assert_uint_eq(i->hdr_bytes, 32);
	i = wire_opcode_info(WIRE_OP_UD_SEND_ONLY_IMM);
	ck_assert_uint_eq(i->offset[WIRE_HDR_DETH], 12);
	ck_assert_uint_eq(i->offset[WIRE_HDR_IMMDT], 20);
	ck_assert_uint_eq(i->hdr_bytes, 24);
	i = wire_opcode_info(WIRE_OP_XRC_COMPARE_SWAP);
	ck_assert_uint_eq(i->offset[WIRE_HDR_XRCETH], 12);
	ck_assert_uint_eq(i->offset[WIRE_HDR_ATMETH], 16);
	ck_assert_uint_eq(i->hdr_bytes, 44);
	i = wire_opcode_info(WIRE_OP_RC_ATOMIC_ACKNOWLEDGE);
	ck_assert_uint_eq(i->offset[WIRE_HDR_AETH], 12);
	ck_assert_uint_eq(i->offset[WIRE_HDR_ATMACK], 16);
	ck_assert_uint_eq(i->hdr_bytes, 24);
	i = wire_opcode_info(WIRE_OP_RC_FLUSH);
	ck_assert_uint_eq(i->offset[WIRE_HDR_FETH], 12);
	ck_assert_uint_eq(i->offset[WIRE_HDR_RETH], 16);
	ck_assert_uint_eq(i->hdr_bytes, 32);
	i = wire_opcode_info(WIRE_OP_CNP);
	ck_assert_uint_eq(i->hdr_bytes, 28);
	ck_assert_uint_eq(wire_opcode_transport(0xa3), WIRE_TRANSPORT_XRC);
	ck_assert_uint_eq(wire_opcode_transport(0x81), WIRE_TRANSPORT_CNP);
	ck_assert_uint_eq(wire_opcode_transport(0x64), WIRE_TRANSPORT_UD);
}
END_TEST

Suite *opcode_suite(void)
{
	Suite *s = suite_create("opcode");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_opcode_presence_and_headers, 0, 256);
	tcase_add_loop_test(tc, test_opcode_offsets, 0, WIRE_OPCODE_COUNT);
	tcase_add_loop_test(tc, test_opcode_properties, 0, WIRE_OPCODE_COUNT);
	tcase_add_test(tc, test_opcode_order_and_count);
	tcase_add_test(tc, test_opcode_names);
	tcase_add_test(tc, test_opcode_known_layouts);
	suite_add_tcase(s, tc);
	return s;
}
