/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the WR opcode table (UROCE_WR_LIST, emu/include/uroce/
 * wr_opcode.h) and of the engine's expansion of its wire columns
 * (xport__req_opcode, emu/xport/req.c). Known answers: which QP types carry
 * each opcode, its properties and completion opcode, and that everything
 * outside the list (and every opcode uroce does not support) is refused.
 * Agreement with wire/: every BTH opcode the requester picks for a first,
 * middle, last or only packet is a request of the QP's transport whose masks
 * in wire/'s opcode table (start/middle/end, payload, RETH, AtomicETH, ImmDt,
 * DETH, operation class) say what the WR's row says; every packet it has no
 * opcode for is one the WR cannot have.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include <wire/opcode.h>
#include "xport_int.h"

#define PAY UROCE_WR_F_PAYLOAD
#define INL UROCE_WR_F_INLINE
#define IMM UROCE_WR_F_IMM
#define RDMA UROCE_WR_F_RDMA
#define ATOM UROCE_WR_F_ATOMIC
#define RDAT UROCE_WR_F_RD_ATOMIC
#define LOC UROCE_WR_F_LOCAL
#define INV UROCE_WR_F_INV
#define ATW UROCE_WR_F_ATOMIC_WRITE
#define FLU UROCE_WR_F_FLUSH

/* Known answers, one row per opcode of the list. */
static const struct {
	uint32_t op;
	const char *name;
	bool rc, uc, ud, xrc; /* xrc: the XRC initiator QP (XRC_SEND) */
	uint32_t flags;
	uint32_t wc;
} expect[] = {
    {UROCE_WR_RDMA_WRITE, "RDMA_WRITE", true, true, false, true, PAY | INL | RDMA,
     UROCE_WC_RDMA_WRITE},
    {UROCE_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", true, true, false, true,
     PAY | INL | RDMA | IMM, UROCE_WC_RDMA_WRITE},
    {UROCE_WR_SEND, "SEND", true, true, true, true, PAY | INL, UROCE_WC_SEND},
    {UROCE_WR_SEND_WITH_IMM, "SEND_WITH_IMM", true, true, true, true, PAY | INL | IMM,
     UROCE_WC_SEND},
    {UROCE_WR_RDMA_READ, "RDMA_READ", true, false, false, true, RDMA | RDAT, UROCE_WC_RDMA_READ},
    {UROCE_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP", true, false, false, true, ATOM | RDAT,
     UROCE_WC_COMP_SWAP},
    {UROCE_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD", true, false, false, true, ATOM | RDAT,
     UROCE_WC_FETCH_ADD},
    /*
     * Local operations (no packet) on connected QPs and XRC initiator QPs
     * (as mlx5: its XRC send ops are its RC ones); the IETH only on RC and
     * XRC, the transports that have SEND with Invalidate opcodes (IBA 9.2).
     */
    {UROCE_WR_LOCAL_INV, "LOCAL_INV", true, true, false, true, LOC, UROCE_WC_LOCAL_INV},
    {UROCE_WR_BIND_MW, "BIND_MW", true, true, false, true, LOC, UROCE_WC_BIND_MW},
    {UROCE_WR_SEND_WITH_INV, "SEND_WITH_INV", true, false, false, true, PAY | INL | INV,
     UROCE_WC_SEND},
    /* IBA A19 FLUSH (rdma-core 45's value 14): RC only (as rxe), answered like a READ. */
    {UROCE_WR_FLUSH, "FLUSH", true, false, false, false, RDMA | RDAT | FLU, UROCE_WC_FLUSH},
    /* IBA 1.5 ATOMIC WRITE: RC only (as rxe), answered like a READ. */
    {UROCE_WR_ATOMIC_WRITE, "ATOMIC_WRITE", true, false, false, false, RDMA | RDAT | ATW,
     UROCE_WC_ATOMIC_WRITE},
};
#define N_EXPECT (sizeof(expect) / sizeof(expect[0]))

/* The QP types that carry anything, and the transport of their packets. */
static const struct {
	uint32_t qpt;
	enum wire_transport transport;
} carriers[] = {
    {UROCE_QPT_RC, WIRE_TRANSPORT_RC},
    {UROCE_QPT_UC, WIRE_TRANSPORT_UC},
    {UROCE_QPT_UD, WIRE_TRANSPORT_UD},
    {UROCE_QPT_XRC_SEND, WIRE_TRANSPORT_XRC},
};

/* QP types that carry nothing: the others of the list and garbage. */
static const uint32_t non_carriers[] = {
    UROCE_QPT_RAW_PACKET, UROCE_QPT_XRC_RECV, 0, 1, 5, 15, 16, 31, 32, 0xffffffffu};

static bool expected_on(unsigned row, uint32_t qpt)
{
	return qpt == UROCE_QPT_RC	   ? expect[row].rc
	       : qpt == UROCE_QPT_UC	   ? expect[row].uc
	       : qpt == UROCE_QPT_XRC_SEND ? expect[row].xrc
					   : expect[row].ud;
}

/* The operation class of wire/'s table a completion opcode stands for. */
static uint32_t class_of_wc(uint32_t wc)
{
	switch (wc) {
	case UROCE_WC_SEND:
		return WIRE_SEND_MASK;
	case UROCE_WC_RDMA_WRITE:
		return WIRE_WRITE_MASK;
	case UROCE_WC_RDMA_READ:
		return WIRE_READ_MASK;
	case UROCE_WC_COMP_SWAP:
	case UROCE_WC_FETCH_ADD:
		return WIRE_ATOMIC_MASK;
	case UROCE_WC_ATOMIC_WRITE:
		return WIRE_ATOMIC_WRITE_MASK;
	case UROCE_WC_FLUSH:
		return WIRE_FLUSH_MASK;
	}
	return 0;
}

/* Every row of the list against the known answers, and nothing more. */
START_TEST(test_rows)
{
	unsigned rows = 0;

#define COUNT_ROW(sym, ...) rows++;
	UROCE_WR_LIST(COUNT_ROW)
#undef COUNT_ROW
	ck_assert_uint_eq(rows, N_EXPECT);
	for (unsigned i = 0; i < N_EXPECT; i++) {
		const struct uroce_wr_info *info = uroce_wr_info(expect[i].op);

		ck_assert_ptr_nonnull(info);
		ck_assert_str_eq(info->name, expect[i].name);
		ck_assert_str_eq(xport_wr_opcode_name(expect[i].op), expect[i].name);
		ck_assert_uint_eq(info->flags, expect[i].flags);
		ck_assert_uint_eq(uroce_wr_flags(expect[i].op), expect[i].flags);
		ck_assert_uint_eq(info->wc_opcode, expect[i].wc);
		for (unsigned t = 0; t < sizeof(carriers) / sizeof(carriers[0]); t++)
			ck_assert_int_eq(uroce_wr_ok(carriers[t].qpt, expect[i].op),
					 expected_on(i, carriers[t].qpt));
		for (unsigned t = 0; t < sizeof(non_carriers) / sizeof(non_carriers[0]); t++)
			ck_assert(!uroce_wr_ok(non_carriers[t], expect[i].op));
	}
}
END_TEST

/*
 * Values the list does not have (TSO 10, DRIVER1 11, 12, 13, garbage) and every opcode on the QP
 * types that carry none: refused everywhere, by the lookups and by the engine.
 */
START_TEST(test_refused)
{
	/* TSO, DRIVER1, 12, 13, 16, garbage. */
	static const uint32_t outside[] = {10, 11, 12, 13, 16, 42, 0xff, 0xffffffffu};

	for (unsigned i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		ck_assert_ptr_null(uroce_wr_info(outside[i]));
		ck_assert_uint_eq(uroce_wr_flags(outside[i]), 0);
		ck_assert_str_eq(xport_wr_opcode_name(outside[i]), "?");
		for (unsigned t = 0; t < sizeof(carriers) / sizeof(carriers[0]); t++) {
			ck_assert(!uroce_wr_ok(carriers[t].qpt, outside[i]));
			for (int pos = 0; pos < 4; pos++)
				ck_assert_int_eq(xport__req_opcode(carriers[t].qpt, outside[i],
								   pos & 1, pos & 2),
						 -EINVAL);
		}
	}
	for (unsigned i = 0; i < N_EXPECT; i++)
		for (unsigned t = 0; t < sizeof(non_carriers) / sizeof(non_carriers[0]); t++)
			for (int pos = 0; pos < 4; pos++)
				ck_assert_int_eq(xport__req_opcode(non_carriers[t], expect[i].op,
								   pos & 1, pos & 2),
						 -EINVAL);
}
END_TEST

/* The engine's BTH opcode for each packet position agrees with wire/'s masks. */
START_TEST(test_wire_agrees)
{
	unsigned checked = 0;

	for (unsigned i = 0; i < N_EXPECT; i++) {
		uint32_t op = expect[i].op, f = expect[i].flags;

		for (unsigned t = 0; t < sizeof(carriers) / sizeof(carriers[0]); t++) {
			uint32_t qpt = carriers[t].qpt;
			/* READ/atomic requests and UD messages are one packet (PROTOCOL.md 5). */
			bool single = f & RDAT || qpt == UROCE_QPT_UD;

			for (int pos = 0; pos < 4; pos++) {
				bool first = pos & 1, last = pos & 2;
				int bth = xport__req_opcode(qpt, op, first, last);
				const struct wire_opcode_info *w;
				uint32_t m;

				/* A local operation puts nothing on the wire. */
				if (!expected_on(i, qpt) || f & LOC ||
				    (single && !(first && last))) {
					ck_assert_int_eq(bth, -EINVAL);
					continue;
				}
				ck_assert_int_ge(bth, 0);
				w = wire_opcode_info((uint8_t)bth);
				ck_assert_ptr_nonnull(w);
				m = w->mask;
				ck_assert_int_eq(wire_opcode_transport((uint8_t)bth),
						 carriers[t].transport);
				ck_assert(m & WIRE_REQ_MASK);
				ck_assert(!(m & WIRE_RESP_MASK));
				ck_assert_int_eq(!!(m & WIRE_START_MASK), first);
				ck_assert_int_eq(!!(m & WIRE_END_MASK), last);
				ck_assert_int_eq(!!(m & WIRE_MIDDLE_MASK), !first && !last);
				/* ATOMIC WRITE's 8 bytes come from the WQE, not buffers. */
				ck_assert_int_eq(!!(m & WIRE_PAYLOAD_MASK), !!(f & (PAY | ATW)));
				ck_assert_int_eq(!!(m & WIRE_ATOMIC_WRITE_MASK), !!(f & ATW));
				/* FLUSH: the FETH, on its one request. */
				ck_assert_int_eq(!!(m & WIRE_FETH_MASK), !!(f & FLU));
				/* WRITE: RETH on First/Only; READ: on its one request. */
				ck_assert_int_eq(!!(m & WIRE_RETH_MASK), (f & RDMA) && first);
				ck_assert_int_eq(!!(m & WIRE_ATMETH_MASK), !!(f & ATOM));
				ck_assert_int_eq(!!(m & WIRE_IMMDT_MASK), (f & IMM) && last);
				ck_assert_int_eq(!!(m & WIRE_DETH_MASK), qpt == UROCE_QPT_UD);
				ck_assert_int_eq(!!(m & WIRE_IETH_MASK), (f & INV) && last);
				/* Every XRC request names the SRQ at the target. */
				ck_assert_int_eq(!!(m & WIRE_XRCETH_MASK),
						 qpt == UROCE_QPT_XRC_SEND);
				ck_assert_uint_eq(m & (WIRE_SEND_MASK | WIRE_WRITE_MASK |
						       WIRE_READ_MASK | WIRE_ATOMIC_MASK |
						       WIRE_ATOMIC_WRITE_MASK | WIRE_FLUSH_MASK),
						  class_of_wc(expect[i].wc));
				checked++;
			}
		}
	}
	/*
	 * RC: 5 SEND/WRITE kinds x 4 positions + READ + 2 atomics + FLUSH +
	 * ATOMIC WRITE; UC: 4 x 4; UD: 2 SEND kinds, Only; XRC: 5 x 4 + READ
	 * + 2 atomics.
	 */
	ck_assert_uint_eq(checked, 20 + 5 + 16 + 2 + 20 + 3);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_ATOMIC_WRITE, true, true),
			 WIRE_OP_RC_ATOMIC_WRITE);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_FLUSH, true, true),
			 WIRE_OP_RC_FLUSH);
	/* CmpSwap and FetchAdd are told apart by opcode, not by mask. */
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_ATOMIC_CMP_AND_SWP, true, true),
			 WIRE_OP_RC_COMPARE_SWAP);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_ATOMIC_FETCH_AND_ADD, true, true),
			 WIRE_OP_RC_FETCH_ADD);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND_WITH_INV, true, true),
			 WIRE_OP_RC_SEND_ONLY_INV);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND_WITH_INV, false, true),
			 WIRE_OP_RC_SEND_LAST_INV);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_XRC_SEND, UROCE_WR_SEND, true, true),
			 WIRE_OP_XRC_SEND_ONLY);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_XRC_SEND, UROCE_WR_SEND_WITH_INV, true, true),
			 WIRE_OP_XRC_SEND_ONLY_INV);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_XRC_SEND, UROCE_WR_SEND_WITH_INV, false, true),
			 WIRE_OP_XRC_SEND_LAST_INV);
	ck_assert_int_eq(
	    xport__req_opcode(UROCE_QPT_XRC_SEND, UROCE_WR_ATOMIC_CMP_AND_SWP, true, true),
	    WIRE_OP_XRC_COMPARE_SWAP);
}
END_TEST

static Suite *wr_opcode_suite(void)
{
	Suite *s = suite_create("wr_opcode");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_wire_agrees);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wr_opcode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
