/* SPDX-License-Identifier: MIT */
/*
 * Pure decisions of the transport engine, without any network: requester
 * opcode choice, packet counts, AckReq spacing, WR validation, the
 * completer's PSN classification, the responder's sequence and length rules,
 * P_Key matching, timer values, and that every enum mirroring libibverbs has
 * the same numeric values as <infiniband/verbs.h>.
 */
#include <check.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/opcode.h>
#include "xport_int.h"

START_TEST(test_verbs_values)
{
	ck_assert_int_eq(UROCE_QPT_RC, IBV_QPT_RC);
	ck_assert_int_eq(UROCE_QPT_UC, IBV_QPT_UC);
	ck_assert_int_eq(UROCE_QPT_UD, IBV_QPT_UD);
	ck_assert_int_eq(UROCE_QPS_RESET, IBV_QPS_RESET);
	ck_assert_int_eq(UROCE_QPS_INIT, IBV_QPS_INIT);
	ck_assert_int_eq(UROCE_QPS_RTR, IBV_QPS_RTR);
	ck_assert_int_eq(UROCE_QPS_RTS, IBV_QPS_RTS);
	ck_assert_int_eq(UROCE_QPS_SQD, IBV_QPS_SQD);
	ck_assert_int_eq(UROCE_QPS_SQE, IBV_QPS_SQE);
	ck_assert_int_eq(UROCE_QPS_ERR, IBV_QPS_ERR);
	ck_assert_int_eq(UROCE_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
	ck_assert_int_eq(UROCE_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
	ck_assert_int_eq(UROCE_WR_SEND, IBV_WR_SEND);
	ck_assert_int_eq(UROCE_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
	ck_assert_int_eq(UROCE_WR_RDMA_READ, IBV_WR_RDMA_READ);
	ck_assert_int_eq(UROCE_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
	ck_assert_int_eq(UROCE_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
#define X_CHECK(sym, val, name) ck_assert_int_eq(UROCE_WC_##sym, IBV_WC_##sym);
	UROCE_WC_STATUS_LIST(X_CHECK)
#undef X_CHECK
#ifdef RC_HAVE_IBVERBS
	for (unsigned s = 0; s <= UROCE_WC_GENERAL_ERR; s++)
		ck_assert_str_eq(xport_wc_status_name(s), ibv_wc_status_str(s));
#endif
	ck_assert_int_eq(UROCE_WC_SEND, IBV_WC_SEND);
	ck_assert_int_eq(UROCE_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
	ck_assert_int_eq(UROCE_WC_RDMA_READ, IBV_WC_RDMA_READ);
	ck_assert_int_eq(UROCE_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
	ck_assert_int_eq(UROCE_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
	ck_assert_int_eq(UROCE_WC_RECV, IBV_WC_RECV);
	ck_assert_int_eq(UROCE_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_int_eq(UROCE_WC_GRH, IBV_WC_GRH);
	ck_assert_int_eq(UROCE_WC_WITH_IMM, IBV_WC_WITH_IMM);
	ck_assert_int_eq(UROCE_SEND_FENCE, IBV_SEND_FENCE);
	ck_assert_int_eq(UROCE_SEND_SIGNALED, IBV_SEND_SIGNALED);
	ck_assert_int_eq(UROCE_SEND_SOLICITED, IBV_SEND_SOLICITED);
	ck_assert_int_eq(UROCE_SEND_INLINE, IBV_SEND_INLINE);
	ck_assert_int_eq(UROCE_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(UROCE_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
	ck_assert_int_eq(UROCE_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
	ck_assert_int_eq(UROCE_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC);
	ck_assert_int_eq(UROCE_QP_STATE, IBV_QP_STATE);
	ck_assert_int_eq(UROCE_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
	ck_assert_int_eq(UROCE_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
	ck_assert_int_eq(UROCE_QP_QKEY, IBV_QP_QKEY);
	ck_assert_int_eq(UROCE_QP_AV, IBV_QP_AV);
	ck_assert_int_eq(UROCE_QP_PATH_MTU, IBV_QP_PATH_MTU);
	ck_assert_int_eq(UROCE_QP_TIMEOUT, IBV_QP_TIMEOUT);
	ck_assert_int_eq(UROCE_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
	ck_assert_int_eq(UROCE_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
	ck_assert_int_eq(UROCE_QP_RQ_PSN, IBV_QP_RQ_PSN);
	ck_assert_int_eq(UROCE_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
	ck_assert_int_eq(UROCE_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
	ck_assert_int_eq(UROCE_QP_SQ_PSN, IBV_QP_SQ_PSN);
	ck_assert_int_eq(UROCE_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
	ck_assert_int_eq(UROCE_QP_DEST_QPN, IBV_QP_DEST_QPN);
	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_256), 256);
	ck_assert_uint_eq(xport_mtu_bytes(IBV_MTU_4096), 4096);
	ck_assert_uint_eq(xport_mtu_bytes(0), 0);
	ck_assert_uint_eq(xport_mtu_bytes(6), 0);
}
END_TEST

START_TEST(test_opcode_choice)
{
	/* RC SEND: First, Middle, Last, Only; with immediate only Last/Only differ. */
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND, true, false), 0x00);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND, false, false), 0x01);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND, false, true), 0x02);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND, true, true), 0x04);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND_WITH_IMM, true, false),
			 0x00);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND_WITH_IMM, false, true),
			 0x03);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_SEND_WITH_IMM, true, true), 0x05);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_WRITE, true, false), 0x06);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_WRITE, false, false), 0x07);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_WRITE, false, true), 0x08);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_WRITE, true, true), 0x0a);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_WRITE_WITH_IMM, false, true),
			 0x09);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_WRITE_WITH_IMM, true, true),
			 0x0b);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_READ, true, true), 0x0c);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_ATOMIC_CMP_AND_SWP, true, true),
			 0x13);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_ATOMIC_FETCH_AND_ADD, true, true),
			 0x14);
	/* A READ is never segmented on the request side. */
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_RC, UROCE_WR_RDMA_READ, true, false), 0);
	/* UC: same low bits, no READ/atomics. */
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_UC, UROCE_WR_SEND, true, false), 0x20);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_UC, UROCE_WR_RDMA_WRITE_WITH_IMM, true, true),
			 0x2b);
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_UC, UROCE_WR_RDMA_READ, true, true), 0);
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_UC, UROCE_WR_ATOMIC_FETCH_AND_ADD, true, true),
			 0);
	/* UD: SEND Only (with immediate) and nothing else. */
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_UD, UROCE_WR_SEND, true, true), 0x64);
	ck_assert_int_eq(xport__req_opcode(UROCE_QPT_UD, UROCE_WR_SEND_WITH_IMM, true, true), 0x65);
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_UD, UROCE_WR_SEND, true, false), 0);
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_UD, UROCE_WR_RDMA_WRITE, true, true), 0);
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_RC, 7, true, true), 0);
	ck_assert_int_lt(xport__req_opcode(UROCE_QPT_RC, 0xffffffffu, true, true), 0);
}
END_TEST

START_TEST(test_npkts_ackreq)
{
	ck_assert_uint_eq(xport__req_npkts(0, 256), 1);
	ck_assert_uint_eq(xport__req_npkts(1, 256), 1);
	ck_assert_uint_eq(xport__req_npkts(256, 256), 1);
	ck_assert_uint_eq(xport__req_npkts(257, 256), 2);
	ck_assert_uint_eq(xport__req_npkts(3 * 4096 + 1, 4096), 4);
	ck_assert_uint_eq(xport__req_npkts(0x80000000u, 256), 0x800000u);
	ck_assert(xport__req_ackreq(true, 0, XPORT_MAX_PKT_PER_ACK));
	ck_assert(!xport__req_ackreq(false, 0, XPORT_MAX_PKT_PER_ACK));
	ck_assert(!xport__req_ackreq(false, 62, XPORT_MAX_PKT_PER_ACK));
	/* The 64th packet without AckReq carries it. */
	ck_assert(xport__req_ackreq(false, 63, XPORT_MAX_PKT_PER_ACK));
	/* A narrower spacing: every 16th; 1 means every packet. */
	ck_assert(!xport__req_ackreq(false, 14, 16));
	ck_assert(xport__req_ackreq(false, 15, 16));
	ck_assert(xport__req_ackreq(false, 0, 1));
	/* The spacing is half the window, 1..64. */
	ck_assert_uint_eq(xport__cc_ack_every(XPORT_MAX_UNACKED_PSNS), XPORT_MAX_PKT_PER_ACK);
	ck_assert_uint_eq(xport__cc_ack_every(XPORT_CWND_INIT), XPORT_CWND_INIT / 2);
	ck_assert_uint_eq(xport__cc_ack_every(3), 1);
	ck_assert_uint_eq(xport__cc_ack_every(1), 1);
	ck_assert_uint_eq(xport__cc_ack_every(1000), XPORT_MAX_PKT_PER_ACK);
}
END_TEST

START_TEST(test_check_wqe)
{
	struct xport_wqe w;
	uint32_t len;

	memset(&w, 0, sizeof(w));
	w.opcode = UROCE_WR_SEND;
	w.num_sge = 2;
	w.sge[0].length = 10;
	w.sge[1].length = 20;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(len, 30);
	w.num_sge = XPORT_MAX_SGE + 1;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
	w.num_sge = 2;
	w.sge[0].length = 0x80000000u;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_LEN_ERR);
	w.sge[0].length = 10;
	w.opcode = UROCE_WR_RDMA_READ;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_UC, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
	w.flags = UROCE_SEND_INLINE;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
	w.opcode = UROCE_WR_SEND;
	w.inline_len = XPORT_MAX_INLINE_BYTES + 1;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_LEN_ERR);
	w.inline_len = 5;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(len, 5);
	w.flags = 0;
	w.opcode = UROCE_WR_ATOMIC_FETCH_AND_ADD;
	w.num_sge = 1;
	w.sge[0].length = 4;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_LEN_ERR);
	w.sge[0].length = 8;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_SUCCESS);
	w.opcode = 99;
	ck_assert_uint_eq(xport_check_wqe(UROCE_QPT_RC, &w, &len), UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(test_comp_check_psn)
{
	/* WQE PSNs 10..12, oldest unacked 10. */
	ck_assert_int_eq(xport__comp_check_psn(10, 10, 12, true, false), XPORT__COMP_PSN_PROCESS);
	ck_assert_int_eq(xport__comp_check_psn(12, 10, 12, true, false), XPORT__COMP_PSN_PROCESS);
	ck_assert_int_eq(xport__comp_check_psn(11, 10, 12, true, true), XPORT__COMP_PSN_GAP);
	ck_assert_int_eq(xport__comp_check_psn(9, 10, 12, true, false), XPORT__COMP_PSN_STALE);
	ck_assert_int_eq(xport__comp_check_psn(13, 10, 12, true, false),
			 XPORT__COMP_PSN_COMPLETE_PREV);
	ck_assert_int_eq(xport__comp_check_psn(13, 10, 12, true, true),
			 XPORT__COMP_PSN_IMPLIED_NAK);
	ck_assert_int_eq(xport__comp_check_psn(13, 10, 12, false, false), XPORT__COMP_PSN_BOGUS);
	/* Across the 24-bit wrap. */
	ck_assert_int_eq(xport__comp_check_psn(0x000001, 0xfffffe, 0x000002, true, false),
			 XPORT__COMP_PSN_PROCESS);
	ck_assert_int_eq(xport__comp_check_psn(0xfffffd, 0xfffffe, 0x000002, true, false),
			 XPORT__COMP_PSN_STALE);
	ck_assert_int_eq(xport__comp_check_psn(0x000003, 0xfffffe, 0x000002, true, true),
			 XPORT__COMP_PSN_IMPLIED_NAK);
}
END_TEST

START_TEST(test_resp_rules)
{
	const struct wire_opcode_info *first = wire_opcode_info(WIRE_OP_RC_SEND_FIRST);
	const struct wire_opcode_info *mid = wire_opcode_info(WIRE_OP_RC_SEND_MIDDLE);
	const struct wire_opcode_info *last = wire_opcode_info(WIRE_OP_RC_SEND_LAST);
	const struct wire_opcode_info *only = wire_opcode_info(WIRE_OP_RC_SEND_ONLY);
	const struct wire_opcode_info *wfirst = wire_opcode_info(WIRE_OP_RC_RDMA_WRITE_FIRST);
	const struct wire_opcode_info *wlast = wire_opcode_info(WIRE_OP_RC_RDMA_WRITE_LAST);
	const struct wire_opcode_info *read = wire_opcode_info(WIRE_OP_RC_RDMA_READ_REQUEST);

	ck_assert(xport__resp_seq_ok(0, first->mask));
	ck_assert(xport__resp_seq_ok(0, only->mask));
	ck_assert(xport__resp_seq_ok(0, read->mask));
	ck_assert(!xport__resp_seq_ok(0, mid->mask));
	ck_assert(!xport__resp_seq_ok(0, last->mask));
	ck_assert(xport__resp_seq_ok(first->mask, mid->mask));
	ck_assert(xport__resp_seq_ok(mid->mask, last->mask));
	ck_assert(!xport__resp_seq_ok(first->mask, only->mask));
	ck_assert(!xport__resp_seq_ok(first->mask, wlast->mask));
	ck_assert(!xport__resp_seq_ok(wfirst->mask, last->mask));
	ck_assert(xport__resp_seq_ok(wfirst->mask, wlast->mask));
	ck_assert(!xport__resp_seq_ok(wfirst->mask, read->mask));

	ck_assert(xport__resp_len_ok(first->mask, 1024, 1024));
	ck_assert(!xport__resp_len_ok(first->mask, 1020, 1024));
	ck_assert(!xport__resp_len_ok(mid->mask, 2048, 1024));
	ck_assert(xport__resp_len_ok(last->mask, 1, 1024));
	ck_assert(!xport__resp_len_ok(last->mask, 0, 1024));
	ck_assert(!xport__resp_len_ok(last->mask, 1025, 1024));
	ck_assert(xport__resp_len_ok(only->mask, 0, 1024));
	ck_assert(!xport__resp_len_ok(only->mask, 2048, 1024));
	ck_assert(xport__resp_len_ok(read->mask, 0, 256));
}
END_TEST

START_TEST(test_pkey_timers_names)
{
	ck_assert(xport__recv_pkey_ok(0xffff, 0xffff));
	ck_assert(xport__recv_pkey_ok(0x7fff, 0xffff));
	ck_assert(!xport__recv_pkey_ok(0x7fff, 0x7fff));
	ck_assert(!xport__recv_pkey_ok(0x8001, 0xffff));
	ck_assert(!xport__recv_pkey_ok(0x8000, 0x8000));
	ck_assert_uint_eq(xport_timeout_us(0), 0);
	ck_assert_uint_eq(xport_timeout_us(1), 9);		/* 8.192 us, rounded up */
	ck_assert_uint_eq(xport_timeout_us(14), 67109);		/* 67.108864 ms */
	ck_assert_uint_eq(xport_timeout_us(31), 8796093023ull); /* 2.4 hours */
	ck_assert_uint_eq(wire_aeth_rnr_usec(1), 10);
	ck_assert_uint_eq(wire_aeth_rnr_usec(0), 655360);
	for (unsigned p = 0; p < 0x1000000; p += 0x10001) {
		uint16_t s = xport__udp_sport(p);

		ck_assert_uint_ge(s, 0xc000);
	}
	for (unsigned i = 0; i < XPORT_DROP_COUNT; i++) {
		ck_assert(strlen(xport_drop_name(i)) > 0);
		for (unsigned j = 0; j < i; j++)
			ck_assert_str_ne(xport_drop_name(i), xport_drop_name(j));
	}
	for (unsigned i = 0; i < XPORT_CNT_COUNT; i++)
		for (unsigned j = 0; j < i; j++)
			ck_assert_str_ne(xport_cnt_name(i), xport_cnt_name(j));
	ck_assert_str_eq(xport_drop_name(XPORT_DROP_COUNT), "?");
	ck_assert_str_eq(xport_qp_state_name(UROCE_QPS_RTS), "RTS");
	ck_assert_str_eq(xport_wr_opcode_name(UROCE_WR_RDMA_READ), "RDMA_READ");
}
END_TEST

static Suite *req_suite(void)
{
	Suite *s = suite_create("req");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_verbs_values);
	tcase_add_test(tc, test_opcode_choice);
	tcase_add_test(tc, test_npkts_ackreq);
	tcase_add_test(tc, test_check_wqe);
	tcase_add_test(tc, test_comp_check_psn);
	tcase_add_test(tc, test_resp_rules);
	tcase_add_test(tc, test_pkey_timers_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(req_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
