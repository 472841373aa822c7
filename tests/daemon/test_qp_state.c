/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/verbs/qp_state.c: the QP state machine and the required and
 * optional attribute masks of every transition (IBA 10.3.1, 11.2.5.2 table
 * 94, ibv_modify_qp(3)), per QP type.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "verbs.h"

#define A(x) UROCE_QP_##x
#define S(x) UROCE_QPS_##x

static const uint32_t types[] = {UROCE_QPT_RC, UROCE_QPT_UC, UROCE_QPT_UD, UROCE_QPT_XRC_SEND,
				 UROCE_QPT_XRC_RECV};

/* Transitions that exist for every supported type (IBA figure 124). */
static int legal(uint32_t type, uint32_t cur, uint32_t next)
{
	if (next == S(RESET))
		return 1;
	if (next == S(ERR))
		return cur != S(RESET);
	switch (cur) {
	case S(RESET):
		return next == S(INIT);
	case S(INIT):
		return next == S(INIT) || next == S(RTR);
	case S(RTR):
		return next == S(RTS);
	case S(RTS):
		return next == S(RTS) || next == S(SQD);
	case S(SQD):
		return next == S(RTS) || next == S(SQD);
	case S(SQE):
		/* RC and XRC have no SQE state (IBA 10.3.1.9). */
		return next == S(RTS) && (type == UROCE_QPT_UC || type == UROCE_QPT_UD);
	default:
		return 0;
	}
}

START_TEST(test_transition_graph)
{
	for (unsigned t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (uint32_t c = 0; c < UROCE_QPS_COUNT; c++)
			for (uint32_t n = 0; n < UROCE_QPS_COUNT; n++) {
				uint32_t req, opt;
				int v = emu_qp_state_masks(types[t], c, n, &req, &opt);

				ck_assert_msg(v == legal(types[t], c, n),
					      "type %u %s->%s: valid %d", types[t],
					      emu_qp_state_name(c), emu_qp_state_name(n), v);
			}
}
END_TEST

START_TEST(test_reset_to_init)
{
	uint32_t rc_req = A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS);
	uint32_t ud_req = A(STATE) | A(PKEY_INDEX) | A(PORT) | A(QKEY);

	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(RESET), S(INIT), rc_req), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UC, S(RESET), S(INIT), rc_req), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UD, S(RESET), S(INIT), ud_req), 0);
	/* Each required bit is required. */
	for (int b = 1; b < 32; b++) {
		uint32_t bit = 1u << b;

		if (rc_req & bit)
			ck_assert_int_eq(
			    emu_qp_state_check(UROCE_QPT_RC, S(RESET), S(INIT), rc_req & ~bit),
			    -EINVAL);
		if (ud_req & bit)
			ck_assert_int_eq(
			    emu_qp_state_check(UROCE_QPT_UD, S(RESET), S(INIT), ud_req & ~bit),
			    -EINVAL);
	}
	/* Nothing beyond them: a Q_Key on RC, access flags on UD. */
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(RESET), S(INIT), rc_req | A(QKEY)),
			 -EINVAL);
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_UD, S(RESET), S(INIT), ud_req | A(ACCESS_FLAGS)), -EINVAL);
}
END_TEST

START_TEST(test_init_to_rtr)
{
	uint32_t rc = A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
		      A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER);
	uint32_t uc = A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN);

	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(INIT), S(RTR), rc), 0);
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_RC, S(INIT), S(RTR), rc | A(PKEY_INDEX) | A(ACCESS_FLAGS)),
	    0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(INIT), S(RTR), uc), -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UC, S(INIT), S(RTR), uc), 0);
	/* UC has no RDMA READ responder resources. */
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_UC, S(INIT), S(RTR), uc | A(MAX_DEST_RD_ATOMIC)), -EINVAL);
	/* UD needs nothing but the state. */
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UD, S(INIT), S(RTR), A(STATE)), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UD, S(INIT), S(RTR), A(STATE) | A(AV)),
			 -EINVAL);
}
END_TEST

START_TEST(test_rtr_to_rts)
{
	uint32_t rc =
	    A(STATE) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) | A(MAX_QP_RD_ATOMIC);

	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(RTR), S(RTS), rc), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(RTR), S(RTS), A(STATE) | A(SQ_PSN)),
			 -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UC, S(RTR), S(RTS), A(STATE) | A(SQ_PSN)), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UD, S(RTR), S(RTS),
					    A(STATE) | A(SQ_PSN) | A(QKEY) | A(CUR_STATE)),
			 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UD, S(RTR), S(RTS), A(STATE)), -EINVAL);
	/* Rate limits are for raw packet QPs only. */
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(RTR), S(RTS), rc | A(RATE_LIMIT)),
			 -EINVAL);
}
END_TEST

START_TEST(test_cur_state_hint)
{
	/* IB_QP_CUR_STATE only from RTR, RTS, SQD, SQE. */
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(RTS), S(RTS), A(STATE) | A(CUR_STATE)),
			 0);
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_RC, S(INIT), S(INIT), A(STATE) | A(CUR_STATE)), -EINVAL);
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_RC, S(RESET), S(RESET), A(STATE) | A(CUR_STATE)), -EINVAL);
}
END_TEST

START_TEST(test_error_and_reset)
{
	for (unsigned t = 0; t < 3; t++) {
		for (uint32_t c = S(INIT); c <= S(ERR); c++) {
			if (types[t] == UROCE_QPT_RC && c == S(SQE))
				continue;
			ck_assert_int_eq(emu_qp_state_check(types[t], c, S(ERR), A(STATE)), 0);
			ck_assert_int_eq(emu_qp_state_check(types[t], c, S(RESET), A(STATE)), 0);
			/* Only the state: ERR and RESET take no attributes. */
			ck_assert_int_eq(
			    emu_qp_state_check(types[t], c, S(ERR), A(STATE) | A(QKEY)), -EINVAL);
		}
		ck_assert_int_eq(emu_qp_state_check(types[t], S(ERR), S(RTS), A(STATE)), -EINVAL);
	}
}
END_TEST

START_TEST(test_sqd)
{
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_RC, S(RTS), S(SQD), A(STATE) | A(EN_SQD_ASYNC_NOTIFY)), 0);
	/* SQD -> SQD may change the path of an RC QP. */
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(SQD), S(SQD),
					    A(STATE) | A(AV) | A(TIMEOUT) | A(PORT)),
			 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_UD, S(SQD), S(SQD), A(STATE) | A(AV)),
			 -EINVAL);
}
END_TEST

START_TEST(test_unsupported_types)
{
	uint32_t req, opt;

	ck_assert_int_eq(emu_qp_state_masks(UROCE_QPT_RAW_PACKET, S(RESET), S(INIT), &req, &opt),
			 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RAW_PACKET, S(RESET), S(INIT),
					    A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS)),
			 -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, 7, S(INIT), A(STATE)), -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_RC, S(INIT), 99, A(STATE)), -EINVAL);
}
END_TEST

/*
 * The XRC columns (Linux's XRC_INI and XRC_TGT), with the masks
 * ibv_xsrq_pingpong uses: the target needs the responder attributes at RTR
 * and only TIMEOUT and SQ_PSN at RTS, the initiator the requester ones.
 */
START_TEST(test_xrc)
{
	const uint32_t init = A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS);
	const uint32_t rtr_ini = A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN);
	const uint32_t rtr_tgt = rtr_ini | A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER);
	const uint32_t rts_tgt = A(STATE) | A(TIMEOUT) | A(SQ_PSN);
	const uint32_t rts_ini = rts_tgt | A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC);

	for (int x = 0; x < 2; x++) {
		uint32_t t = x ? UROCE_QPT_XRC_RECV : UROCE_QPT_XRC_SEND;

		ck_assert_int_eq(emu_qp_state_check(t, S(RESET), S(INIT), init), 0);
		ck_assert_int_eq(emu_qp_state_check(t, S(RESET), S(INIT), init & ~A(ACCESS_FLAGS)),
				 -EINVAL);
		ck_assert_int_eq(emu_qp_state_check(t, S(RESET), S(INIT), init | A(QKEY)), -EINVAL);
	}
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_SEND, S(INIT), S(RTR), rtr_ini), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_SEND, S(INIT), S(RTR), rtr_tgt), -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_RECV, S(INIT), S(RTR), rtr_tgt), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_RECV, S(INIT), S(RTR), rtr_ini), -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_SEND, S(RTR), S(RTS), rts_ini), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_SEND, S(RTR), S(RTS), rts_tgt), -EINVAL);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_RECV, S(RTR), S(RTS), rts_tgt), 0);
	ck_assert_int_eq(emu_qp_state_check(UROCE_QPT_XRC_RECV, S(RTR), S(RTS), rts_ini), -EINVAL);
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_XRC_RECV, S(RTS), S(RTS), A(STATE) | A(MIN_RNR_TIMER)), 0);
	ck_assert_int_eq(
	    emu_qp_state_check(UROCE_QPT_XRC_SEND, S(RTS), S(RTS), A(STATE) | A(MIN_RNR_TIMER)),
	    -EINVAL);
	/* What uverbs drops before the check: RC masks pass for both halves. */
	ck_assert_uint_eq(emu_qp_state_user_mask(UROCE_QPT_XRC_SEND, rtr_tgt), rtr_ini);
	ck_assert_uint_eq(emu_qp_state_user_mask(UROCE_QPT_XRC_RECV, rts_ini), rts_tgt);
	ck_assert_uint_eq(emu_qp_state_user_mask(UROCE_QPT_RC, rts_ini), rts_ini);
	ck_assert_uint_eq(emu_qp_state_user_mask(UROCE_QPT_XRC_RECV, rtr_tgt), rtr_tgt);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(emu_qp_state_name(S(RESET)), "RESET");
	ck_assert_str_eq(emu_qp_state_name(S(SQE)), "SQE");
	ck_assert_str_eq(emu_qp_state_name(S(ERR)), "ERR");
	ck_assert_str_eq(emu_qp_state_name(42), "INVALID");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qp_state");
	TCase *tc = tcase_create("table");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_transition_graph);
	tcase_add_test(tc, test_reset_to_init);
	tcase_add_test(tc, test_init_to_rtr);
	tcase_add_test(tc, test_rtr_to_rts);
	tcase_add_test(tc, test_cur_state_hint);
	tcase_add_test(tc, test_error_and_reset);
	tcase_add_test(tc, test_sqd);
	tcase_add_test(tc, test_unsupported_types);
	tcase_add_test(tc, test_xrc);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
