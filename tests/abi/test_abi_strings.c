/* SPDX-License-Identifier: MIT */
/*
 * test_abi_strings.c: verbs-shim/abi_strings.c. Known answers for every
 * value of the four enum-to-string helpers (taken from rdma-core 44), the
 * "unknown" answer around and between the tables, and, when Debian's real
 * libibverbs is installed, a value-by-value comparison with it over a range
 * wider than every table.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "real_lib.h"

struct str_case {
	int value;
	const char *text;
};

static const struct str_case wc_cases[] = {
    {IBV_WC_SUCCESS, "success"},
    {IBV_WC_LOC_LEN_ERR, "local length error"},
    {IBV_WC_LOC_QP_OP_ERR, "local QP operation error"},
    {IBV_WC_LOC_EEC_OP_ERR, "local EE context operation error"},
    {IBV_WC_LOC_PROT_ERR, "local protection error"},
    {IBV_WC_WR_FLUSH_ERR, "Work Request Flushed Error"},
    {IBV_WC_MW_BIND_ERR, "memory management operation error"},
    {IBV_WC_BAD_RESP_ERR, "bad response error"},
    {IBV_WC_LOC_ACCESS_ERR, "local access error"},
    {IBV_WC_REM_INV_REQ_ERR, "remote invalid request error"},
    {IBV_WC_REM_ACCESS_ERR, "remote access error"},
    {IBV_WC_REM_OP_ERR, "remote operation error"},
    {IBV_WC_RETRY_EXC_ERR, "transport retry counter exceeded"},
    {IBV_WC_RNR_RETRY_EXC_ERR, "RNR retry counter exceeded"},
    {IBV_WC_LOC_RDD_VIOL_ERR, "local RDD violation error"},
    {IBV_WC_REM_INV_RD_REQ_ERR, "remote invalid RD request"},
    {IBV_WC_REM_ABORT_ERR, "aborted error"},
    {IBV_WC_INV_EECN_ERR, "invalid EE context number"},
    {IBV_WC_INV_EEC_STATE_ERR, "invalid EE context state"},
    {IBV_WC_FATAL_ERR, "fatal error"},
    {IBV_WC_RESP_TIMEOUT_ERR, "response timeout error"},
    {IBV_WC_GENERAL_ERR, "general error"},
    {IBV_WC_TM_ERR, "TM error"},
    {IBV_WC_TM_RNDV_INCOMPLETE, "TM software rendezvous"},
    {24, "unknown"},
    {-1, "unknown"},
    {1000, "unknown"},
};

static const struct str_case event_cases[] = {
    {IBV_EVENT_CQ_ERR, "CQ error"},
    {IBV_EVENT_QP_FATAL, "local work queue catastrophic error"},
    {IBV_EVENT_QP_REQ_ERR, "invalid request local work queue error"},
    {IBV_EVENT_QP_ACCESS_ERR, "local access violation work queue error"},
    {IBV_EVENT_COMM_EST, "communication established"},
    {IBV_EVENT_SQ_DRAINED, "send queue drained"},
    {IBV_EVENT_PATH_MIG, "path migrated"},
    {IBV_EVENT_PATH_MIG_ERR, "path migration request error"},
    {IBV_EVENT_DEVICE_FATAL, "local catastrophic error"},
    {IBV_EVENT_PORT_ACTIVE, "port active"},
    {IBV_EVENT_PORT_ERR, "port error"},
    {IBV_EVENT_LID_CHANGE, "LID change"},
    {IBV_EVENT_PKEY_CHANGE, "P_Key change"},
    {IBV_EVENT_SM_CHANGE, "SM change"},
    {IBV_EVENT_SRQ_ERR, "SRQ catastrophic error"},
    {IBV_EVENT_SRQ_LIMIT_REACHED, "SRQ limit reached"},
    {IBV_EVENT_QP_LAST_WQE_REACHED, "last WQE reached"},
    {IBV_EVENT_CLIENT_REREGISTER, "client reregistration"},
    {IBV_EVENT_GID_CHANGE, "GID table change"},
    {IBV_EVENT_WQ_FATAL, "WQ fatal"},
    {20, "unknown"},
    {-1, "unknown"},
};

static const struct str_case node_cases[] = {
    {IBV_NODE_UNKNOWN, "unknown"},
    {0, "unknown"},
    {IBV_NODE_CA, "InfiniBand channel adapter"},
    {IBV_NODE_SWITCH, "InfiniBand switch"},
    {IBV_NODE_ROUTER, "InfiniBand router"},
    {IBV_NODE_RNIC, "iWARP NIC"},
    {IBV_NODE_USNIC, "usNIC"},
    {IBV_NODE_USNIC_UDP, "usNIC UDP"},
    {IBV_NODE_UNSPECIFIED, "unspecified"},
    {8, "unknown"},
};

static const struct str_case port_cases[] = {
    {IBV_PORT_NOP, "no state change (NOP)"},
    {IBV_PORT_DOWN, "down"},
    {IBV_PORT_INIT, "init"},
    {IBV_PORT_ARMED, "armed"},
    {IBV_PORT_ACTIVE, "active"},
    {IBV_PORT_ACTIVE_DEFER, "active defer"},
    {6, "unknown"},
    {-1, "unknown"},
};

#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

START_TEST(test_wc_status_str)
{
	const struct str_case *c = &wc_cases[_i];

	ck_assert_str_eq(ibv_wc_status_str((enum ibv_wc_status)c->value), c->text);
}
END_TEST

START_TEST(test_event_type_str)
{
	const struct str_case *c = &event_cases[_i];

	ck_assert_str_eq(ibv_event_type_str((enum ibv_event_type)c->value), c->text);
}
END_TEST

START_TEST(test_node_type_str)
{
	const struct str_case *c = &node_cases[_i];

	ck_assert_str_eq(ibv_node_type_str((enum ibv_node_type)c->value), c->text);
}
END_TEST

START_TEST(test_port_state_str)
{
	const struct str_case *c = &port_cases[_i];

	ck_assert_str_eq(ibv_port_state_str((enum ibv_port_state)c->value), c->text);
}
END_TEST

/* Same text as the real library for every value in [-64, 256). */
#define COMPARE_WITH_REAL(h, fn, type)                                                      \
	do {                                                                                \
		const char *(*theirs)(type) = real_lib_sym(h, #fn, "IBVERBS_1.1");          \
		ck_assert_msg(theirs != NULL, #fn "@IBVERBS_1.1 not in the real library");  \
		ck_assert_ptr_ne((void *)theirs, (void *)fn);                               \
		for (int v = -64; v < 256; v++)                                             \
			ck_assert_msg(strcmp(fn((type)v), theirs((type)v)) == 0,            \
				      #fn "(%d): shim \"%s\", real \"%s\"", v, fn((type)v), \
				      theirs((type)v));                                     \
	} while (0)

START_TEST(test_same_as_real)
{
	void *h = real_lib_open();

	if (!h)
		return;
	COMPARE_WITH_REAL(h, ibv_wc_status_str, enum ibv_wc_status);
	COMPARE_WITH_REAL(h, ibv_event_type_str, enum ibv_event_type);
	COMPARE_WITH_REAL(h, ibv_node_type_str, enum ibv_node_type);
	COMPARE_WITH_REAL(h, ibv_port_state_str, enum ibv_port_state);
	dlclose(h);
}
END_TEST

static Suite *strings_suite(void)
{
	Suite *s = suite_create("abi_strings");
	TCase *tc = tcase_create("known_answers");

	tcase_add_loop_test(tc, test_wc_status_str, 0, NCASES(wc_cases));
	tcase_add_loop_test(tc, test_event_type_str, 0, NCASES(event_cases));
	tcase_add_loop_test(tc, test_node_type_str, 0, NCASES(node_cases));
	tcase_add_loop_test(tc, test_port_state_str, 0, NCASES(port_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("real_libibverbs");
	tcase_add_test(tc, test_same_as_real);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(strings_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
