/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dev.c: the active-MTU rule (largest IB MTU whose
 * payload plus 80 header bytes fits the interface MTU, as rxe), the device
 * identity derived from the address (RoCEv2 GID, EUI-64 node GUID), and the
 * attributes reported for the port and the device.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

START_TEST(test_ib_mtu_rule)
{
	ck_assert_uint_eq(emu_dev_ib_mtu_for(65536), 5); /* lo */
	ck_assert_uint_eq(emu_dev_ib_mtu_for(9000), 5);
	ck_assert_uint_eq(emu_dev_ib_mtu_for(4176), 5); /* 4096 + 80 */
	ck_assert_uint_eq(emu_dev_ib_mtu_for(4175), 4);
	ck_assert_uint_eq(emu_dev_ib_mtu_for(1500), 3); /* Ethernet: 1024 */
	ck_assert_uint_eq(emu_dev_ib_mtu_for(1104), 3);
	ck_assert_uint_eq(emu_dev_ib_mtu_for(1103), 2);
	ck_assert_uint_eq(emu_dev_ib_mtu_for(576), 1);
	ck_assert_uint_eq(emu_dev_ib_mtu_for(100), 1); /* never below 256 */
}
END_TEST

START_TEST(test_loopback_identity)
{
	static const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
	static const uint8_t guid[8] = {0, 0, 0x7f, 0xff, 0xfe, 0, 0, 1};
	struct emu_opts o = {.name = "t0", .addr = "127.0.0.1", .port = 4791};
	struct emu_dev *dev = calloc(1, sizeof(*dev));
	struct uroce_device_attr a;
	struct uroce_port_attr p;

	ck_assert_int_eq(emu_dev_setup(dev, &o), 0);
	ck_assert_mem_eq(dev->gid, gid, 16);
	ck_assert_mem_eq(&dev->node_guid, guid, 8);
	ck_assert_uint_eq(dev->active_mtu, 5);
	ck_assert_str_eq(dev->ifname, "lo");

	emu_dev_fill_port(dev, &p);
	ck_assert_uint_eq(p.state, 4);	    /* IBV_PORT_ACTIVE */
	ck_assert_uint_eq(p.link_layer, 2); /* Ethernet */
	ck_assert_uint_eq(p.active_mtu, 5);
	ck_assert_uint_eq(p.gid_tbl_len, UROCE_GID_TBL_LEN);
	ck_assert_uint_eq(p.pkey_tbl_len, 1);
	emu_dev_fill_attr(dev, &a);
	ck_assert_mem_eq(&a.node_guid, guid, 8);
	ck_assert_uint_ge(a.max_qp_rd_atom, 16);
	ck_assert_uint_ge(a.max_qp_init_rd_atom, 16);
	ck_assert_uint_eq(a.atomic_cap, 1); /* IBV_ATOMIC_HCA */
	ck_assert_uint_eq(a.max_pkeys, 1);
	ck_assert_uint_eq(a.phys_port_cnt, 1);
	emu_dev_close(dev);
	free(dev);
}
END_TEST

START_TEST(test_explicit_mtu_and_subnet)
{
	/* 127.0.0.9 is not assigned, but lo's 127.0.0.0/8 owns it. */
	struct emu_opts o = {.name = "t1", .addr = "127.0.0.9", .port = 4791, .mtu_bytes = 1024};
	struct emu_dev *dev = calloc(1, sizeof(*dev));

	ck_assert_int_eq(emu_dev_setup(dev, &o), 0);
	ck_assert_uint_eq(dev->active_mtu, 3);
	ck_assert_str_eq(dev->ifname, "lo");
	emu_dev_close(dev);
	free(dev);
}
END_TEST

START_TEST(test_bad_addresses)
{
	const char *bad[] = {"nonsense", "0.0.0.0", "224.0.0.1", "::", "198.51.100.7"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct emu_opts o = {.name = "t2", .addr = bad[i], .port = 1};
		struct emu_dev *dev = calloc(1, sizeof(*dev));

		ck_assert_msg(emu_dev_setup(dev, &o) == -1, "%s accepted", bad[i]);
		emu_dev_close(dev);
		free(dev);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dev");
	TCase *tc = tcase_create("dev");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_ib_mtu_rule);
	tcase_add_test(tc, test_loopback_identity);
	tcase_add_test(tc, test_explicit_mtu_and_subnet);
	tcase_add_test(tc, test_bad_addresses);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
