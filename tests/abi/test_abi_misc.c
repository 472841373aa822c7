/* SPDX-License-Identifier: MIT */
/*
 * test_abi_misc.c: verbs-shim/abi_fork.c, abi_unsupported.c and
 * abi_compat.c. Fork calls succeed and report IBV_FORK_UNNEEDED; verbs uroce
 * lacks answer like rdma-core without provider support (NULL/EOPNOTSUPP);
 * the compat symbols are reachable by their exact versions
 * (name@IBVERBS_1.0, ibv_register_driver@IBVERBS_1.1) inside the shim and
 * fail with EOPNOTSUPP as documented.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"

START_TEST(test_fork)
{
	char buf[64];

	ck_assert_int_eq(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	ck_assert_int_eq(ibv_fork_init(), 0);
	ck_assert_int_eq(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
	ck_assert_int_eq(ibv_dontfork_range(buf, sizeof(buf)), 0);
	ck_assert_int_eq(ibv_dofork_range(buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(test_unsupported)
{
	struct ibv_ece ece = {.vendor_id = 0x15b3};
	uint8_t mac[ETHERNET_LL_SIZE] = {1, 2, 3, 4, 5, 6};
	struct ibv_ah_attr ah = {0};
	uint16_t vid = 77;

#define EXPECT_NULL_EOPNOTSUPP(call)                 \
	do {                                         \
		errno = 0;                           \
		ck_assert_ptr_null(call);            \
		ck_assert_int_eq(errno, EOPNOTSUPP); \
	} while (0)

	EXPECT_NULL_EOPNOTSUPP(ibv_import_device(3));
	EXPECT_NULL_EOPNOTSUPP(ibv_import_pd(NULL, 1));
	EXPECT_NULL_EOPNOTSUPP(ibv_import_mr(NULL, 1));
	EXPECT_NULL_EOPNOTSUPP(ibv_import_dm(NULL, 1));
	EXPECT_NULL_EOPNOTSUPP(ibv_reg_dmabuf_mr(NULL, 0, 4096, 0, 5, IBV_ACCESS_LOCAL_WRITE));
	ibv_unimport_pd(NULL);
	ibv_unimport_mr(NULL);
	ibv_unimport_dm(NULL);

	ck_assert_int_eq(ibv_query_ece(NULL, &ece), EOPNOTSUPP);
	ck_assert_int_eq(ibv_set_ece(NULL, &ece), EOPNOTSUPP);

	ck_assert_int_eq(ibv_resolve_eth_l2_from_gid(NULL, &ah, mac, &vid), -EOPNOTSUPP);
	ck_assert_uint_eq(mac[0], 1);
	ck_assert_uint_eq(vid, 77);
}
END_TEST

/* The shim's definition of @name@@@version, checked to live in the shim. */
static void *shim_sym(const char *name, const char *version)
{
	Dl_info info;
	void *p = dlvsym(RTLD_DEFAULT, name, version);

	ck_assert_msg(p != NULL, "%s@%s not found: %s", name, version, dlerror());
	ck_assert(dladdr(p, &info));
	ck_assert_msg(strstr(info.dli_fname, "liburoce") || strstr(info.dli_fname, "ibverbs"),
		      "%s@%s resolved in %s", name, version, info.dli_fname);
	return p;
}

START_TEST(test_compat_1_0)
{
	void *(*open_device)(void *) = shim_sym("ibv_open_device", "IBVERBS_1.0");
	void *(*get_list)(int *) = shim_sym("ibv_get_device_list", "IBVERBS_1.0");
	void (*free_list)(void *) = shim_sym("ibv_free_device_list", "IBVERBS_1.0");
	int (*close_device)(void *) = shim_sym("ibv_close_device", "IBVERBS_1.0");
	int (*query_device)(void *, struct ibv_device_attr *) =
	    shim_sym("ibv_query_device", "IBVERBS_1.0");
	int (*query_gid)(void *, uint8_t, int, union ibv_gid *) =
	    shim_sym("ibv_query_gid", "IBVERBS_1.0");
	void *(*create_cq)(void *, int, void *, void *, int) =
	    shim_sym("ibv_create_cq", "IBVERBS_1.0");
	int (*get_cq_event)(void *, void **, void **) = shim_sym("ibv_get_cq_event", "IBVERBS_1.0");
	void (*ack_cq_events)(void *, unsigned int) = shim_sym("ibv_ack_cq_events", "IBVERBS_1.0");
	struct ibv_device_attr attr;
	union ibv_gid gid;
	void *cq, *cq_ctx;
	int num = 42;

	errno = 0;
	ck_assert_ptr_null(get_list(&num));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	free_list(NULL);
	errno = 0;
	ck_assert_ptr_null(open_device(NULL));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(close_device(NULL), -1);
	ck_assert_int_eq(query_device(NULL, &attr), EOPNOTSUPP);
	ck_assert_int_eq(query_gid(NULL, 1, 0, &gid), -1);
	ck_assert_ptr_null(create_cq(NULL, 16, NULL, NULL, 0));
	ck_assert_int_eq(get_cq_event(NULL, &cq, &cq_ctx), -1);
	ack_cq_events(NULL, 1);
}
END_TEST

START_TEST(test_compat_all_present)
{
	static const char *const names[] = {
	    "ack_async_event",	"ack_cq_events",   "alloc_pd",	   "attach_mcast",
	    "close_device",	"create_ah",	   "create_cq",	   "create_qp",
	    "create_srq",	"dealloc_pd",	   "dereg_mr",	   "destroy_ah",
	    "destroy_cq",	"destroy_qp",	   "destroy_srq",  "detach_mcast",
	    "free_device_list", "get_async_event", "get_cq_event", "get_device_guid",
	    "get_device_list",	"get_device_name", "modify_qp",	   "modify_srq",
	    "open_device",	"query_device",	   "query_gid",	   "query_pkey",
	    "query_port",	"query_qp",	   "query_srq",	   "reg_mr",
	    "resize_cq",
	};
	char name[64];

	ck_assert_uint_eq(sizeof(names) / sizeof(names[0]), 33);
	for (unsigned i = 0; i < 33; i++) {
		snprintf(name, sizeof(name), "ibv_%s", names[i]);
		shim_sym(name, "IBVERBS_1.0");
	}
}
END_TEST

START_TEST(test_register_driver_1_1)
{
	void (*reg)(const char *, void *) = shim_sym("ibv_register_driver", "IBVERBS_1.1");

	reg("usnic", NULL);
}
END_TEST

static Suite *misc_suite(void)
{
	Suite *s = suite_create("abi_misc");
	TCase *tc = tcase_create("fork");

	tcase_add_test(tc, test_fork);
	suite_add_tcase(s, tc);

	tc = tcase_create("unsupported");
	tcase_add_test(tc, test_unsupported);
	suite_add_tcase(s, tc);

	tc = tcase_create("compat");
	tcase_add_test(tc, test_compat_1_0);
	tcase_add_test(tc, test_compat_all_present);
	tcase_add_test(tc, test_register_driver_1_1);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(misc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
