/* SPDX-License-Identifier: MIT */
/* Tests of wire/build.h: every opcode builds, validates, and reads back its fields. */
#include <errno.h>
#include <wire/wire.h>

#include "pkt_util.h"
#include "suites.h"

START_TEST(test_build_every_opcode)
{
	const struct wire_opcode_info *info = wire_opcode_at((unsigned)_i);
	struct wire_build b = pkt_fields(info->opcode);
	size_t plen = pkt_payload_len(info);
	uint8_t buf[512], pattern[256];
	struct wire_pkt pkt;
	const struct wire_bth *bth = (const struct wire_bth *)buf;
	int n;

	memset(pattern, 'x', sizeof(pattern));
	n = wire_build_ib(buf, sizeof(buf), &b, pattern, plen);

	ck_assert_int_eq(n, (int)(info->hdr_bytes + plen + ((-plen) & 3) + 4));
	ck_assert_int_eq(wire_validate(buf, (size_t)n, &pkt), WIRE_R_OK);
	ck_assert_ptr_eq(pkt.info, info);
	ck_assert_uint_eq(pkt.payload_len, plen);
	ck_assert_uint_eq(pkt.pad, (-plen) & 3);
	ck_assert_uint_eq(wire_bth_get_opcode(bth), info->opcode);
	ck_assert_uint_eq(wire_bth_get_se(bth), 1);
	ck_assert_uint_eq(wire_bth_get_mig(bth), 1);
	ck_assert_uint_eq(wire_bth_get_pkey(bth), 0x8001);
	ck_assert_uint_eq(wire_bth_get_destqp(bth), 0xabcdef);
	ck_assert_uint_eq(wire_bth_get_ackreq(bth), 1);
	ck_assert_uint_eq(wire_bth_get_psn(bth), 0xfedcba);
	ck_assert_uint_eq(wire_bth_get_tver(bth), 0);
	if (wire_pkt_reth(&pkt)) {
		ck_assert_uint_eq(wire_reth_get_va(wire_pkt_reth(&pkt)), b.va);
		ck_assert_uint_eq(wire_reth_get_rkey(wire_pkt_reth(&pkt)), b.rkey);
		ck_assert_uint_eq(wire_reth_get_dmalen(wire_pkt_reth(&pkt)), b.dmalen);
	}
	if (wire_pkt_atmeth(&pkt)) {
		ck_assert_uint_eq(wire_atmeth_get_va(wire_pkt_atmeth(&pkt)), b.va);
		ck_assert_uint_eq(wire_atmeth_get_rkey(wire_pkt_atmeth(&pkt)), b.rkey);
		ck_assert_uint_eq(wire_atmeth_get_swap_add(wire_pkt_atmeth(&pkt)), b.swap_add);
		ck_assert_uint_eq(wire_atmeth_get_compare(wire_pkt_atmeth(&pkt)), b.compare);
	}
	if (wire_pkt_aeth(&pkt)) {
		ck_assert_uint_eq(wire_aeth_get_syndrome(wire_pkt_aeth(&pkt)), b.syndrome);
		ck_assert_uint_eq(wire_aeth_get_msn(wire_pkt_aeth(&pkt)), b.msn);
	}
	if (wire_pkt_atmack(&pkt))
		ck_assert_uint_eq(wire_atmack_get_orig(wire_pkt_atmack(&pkt)), b.orig);
	if (wire_pkt_deth(&pkt)) {
		ck_assert_uint_eq(wire_deth_get_qkey(wire_pkt_deth(&pkt)), b.qkey);
		ck_assert_uint_eq(wire_deth_get_srcqp(wire_pkt_deth(&pkt)), b.srcqp);
	}
	if (wire_pkt_immdt(&pkt))
		ck_assert_uint_eq(wire_immdt_get_imm(wire_pkt_immdt(&pkt)), b.imm);
	if (wire_pkt_ieth(&pkt))
		ck_assert_uint_eq(wire_ieth_get_rkey(wire_pkt_ieth(&pkt)), b.ieth_rkey);
	if (wire_pkt_xrceth(&pkt))
		ck_assert_uint_eq(wire_xrceth_get_srqn(wire_pkt_xrceth(&pkt)), b.srqn);
	if (wire_pkt_feth(&pkt)) {
		ck_assert_uint_eq(wire_feth_get_sel(wire_pkt_feth(&pkt)), b.feth_sel);
		ck_assert_uint_eq(wire_feth_get_plt(wire_pkt_feth(&pkt)), b.feth_plt);
	}
	/* payload, then zero pad, then 4 zero ICRC bytes */
	ck_assert_uint_eq(pkt.payload_off, info->hdr_bytes);
	for (size_t i = 0; i < plen; i++)
		ck_assert_uint_eq(buf[pkt.payload_off + i], 'x');
	for (size_t i = pkt.payload_off + plen; i < (size_t)n; i++)
		ck_assert_uint_eq(buf[i], 0);
}
END_TEST

START_TEST(test_build_errors)
{
	struct wire_build b = pkt_fields(WIRE_OP_RC_ACKNOWLEDGE);
	uint8_t buf[64];

	ck_assert_int_eq(wire_build_ib(buf, sizeof(buf), &b, "x", 1), -EINVAL); /* no payload */
	ck_assert_int_eq(wire_build_ib(buf, 19, &b, NULL, 0), -ENOSPC);
	ck_assert_int_eq(wire_build_ib(buf, 20, &b, NULL, 0), 20);
	b.opcode = 0x15;
	ck_assert_int_eq(wire_build_ib(buf, sizeof(buf), &b, NULL, 0), -EINVAL);
	b.opcode = WIRE_OP_RC_SEND_ONLY;
	ck_assert_int_eq(wire_build_ib(buf, sizeof(buf), &b, NULL, 4097), -EINVAL);
	ck_assert_int_eq(wire_build_ib(buf, sizeof(buf), &b, NULL, 3), -EINVAL); /* NULL payload */
	b.pkey = 0;
	ck_assert_int_eq(wire_build_ib(buf, sizeof(buf), &b, NULL, 0), 16);
	ck_assert_uint_eq(wire_bth_get_pkey((struct wire_bth *)buf), 0xffff); /* default */
}
END_TEST

Suite *build_suite(void)
{
	Suite *s = suite_create("build");
	TCase *tc = tcase_create("build");

	tcase_add_loop_test(tc, test_build_every_opcode, 0, WIRE_OPCODE_COUNT);
	tcase_add_test(tc, test_build_errors);
	suite_add_tcase(s, tc);
	return s;
}
