/* SPDX-License-Identifier: MIT */
/*
 * test_abi_marshall.c: verbs-shim/abi_marshall.c. Each kernel structure is
 * filled with a distinct value per field, converted, and every destination
 * field is checked by name; fields the conversion must not touch keep a
 * canary. Path records also make the round trip verbs -> kernel -> verbs.
 */
#define _GNU_SOURCE /* be16toh */
#include <check.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"

static void fill_kern_ah(struct ib_uverbs_ah_attr *a, uint8_t base)
{
	for (int i = 0; i < 16; i++)
		a->grh.dgid[i] = (uint8_t)(base + i);
	a->grh.flow_label = 0x12345u + base;
	a->grh.sgid_index = (uint8_t)(base + 20);
	a->grh.hop_limit = (uint8_t)(base + 21);
	a->grh.traffic_class = (uint8_t)(base + 22);
	a->dlid = (uint16_t)(0x4321 + base);
	a->sl = (uint8_t)(base + 23);
	a->src_path_bits = (uint8_t)(base + 24);
	a->static_rate = (uint8_t)(base + 25);
	a->is_global = 1;
	a->port_num = (uint8_t)(base + 26);
}

static void check_ah(const struct ibv_ah_attr *d, uint8_t base)
{
	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(d->grh.dgid.raw[i], (uint8_t)(base + i));
	ck_assert_uint_eq(d->grh.flow_label, 0x12345u + base);
	ck_assert_uint_eq(d->grh.sgid_index, (uint8_t)(base + 20));
	ck_assert_uint_eq(d->grh.hop_limit, (uint8_t)(base + 21));
	ck_assert_uint_eq(d->grh.traffic_class, (uint8_t)(base + 22));
	ck_assert_uint_eq(d->dlid, (uint16_t)(0x4321 + base));
	ck_assert_uint_eq(d->sl, (uint8_t)(base + 23));
	ck_assert_uint_eq(d->src_path_bits, (uint8_t)(base + 24));
	ck_assert_uint_eq(d->static_rate, (uint8_t)(base + 25));
	ck_assert_uint_eq(d->is_global, 1);
	ck_assert_uint_eq(d->port_num, (uint8_t)(base + 26));
}

START_TEST(test_ah_attr_from_kern)
{
	struct ib_uverbs_ah_attr k;
	struct ibv_ah_attr d;

	memset(&k, 0, sizeof(k));
	memset(&d, 0xa5, sizeof(d));
	fill_kern_ah(&k, 0x10);
	ibv_copy_ah_attr_from_kern(&d, &k);
	check_ah(&d, 0x10);
}
END_TEST

START_TEST(test_qp_attr_from_kern)
{
	struct ib_uverbs_qp_attr k;
	struct ibv_qp_attr d;

	memset(&k, 0, sizeof(k));
	k.qp_attr_mask = 0xffffffff;
	k.qp_state = IBV_QPS_RTS;
	k.cur_qp_state = IBV_QPS_RTR;
	k.path_mtu = IBV_MTU_4096;
	k.path_mig_state = IBV_MIG_REARM;
	k.qkey = 0x11111111;
	k.rq_psn = 0x222222;
	k.sq_psn = 0x333333;
	k.dest_qp_num = 0x444444;
	k.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	fill_kern_ah(&k.ah_attr, 0x20);
	fill_kern_ah(&k.alt_ah_attr, 0x40);
	k.max_send_wr = 101;
	k.max_recv_wr = 102;
	k.max_send_sge = 103;
	k.max_recv_sge = 104;
	k.max_inline_data = 105;
	k.pkey_index = 106;
	k.alt_pkey_index = 107;
	k.en_sqd_async_notify = 1;
	k.sq_draining = 1;
	k.max_rd_atomic = 108;
	k.max_dest_rd_atomic = 109;
	k.min_rnr_timer = 110;
	k.port_num = 111;
	k.timeout = 112;
	k.retry_cnt = 113;
	k.rnr_retry = 114;
	k.alt_port_num = 115;
	k.alt_timeout = 116;

	memset(&d, 0, sizeof(d));
	d.qp_state = IBV_QPS_SQE; /* canary: not part of the conversion */
	ibv_copy_qp_attr_from_kern(&d, &k);

	ck_assert_int_eq(d.qp_state, IBV_QPS_SQE);
	ck_assert_int_eq(d.cur_qp_state, IBV_QPS_RTR);
	ck_assert_int_eq(d.path_mtu, IBV_MTU_4096);
	ck_assert_int_eq(d.path_mig_state, IBV_MIG_REARM);
	ck_assert_uint_eq(d.qkey, 0x11111111);
	ck_assert_uint_eq(d.rq_psn, 0x222222);
	ck_assert_uint_eq(d.sq_psn, 0x333333);
	ck_assert_uint_eq(d.dest_qp_num, 0x444444);
	ck_assert_int_eq(d.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	check_ah(&d.ah_attr, 0x20);
	check_ah(&d.alt_ah_attr, 0x40);
	ck_assert_uint_eq(d.cap.max_send_wr, 101);
	ck_assert_uint_eq(d.cap.max_recv_wr, 102);
	ck_assert_uint_eq(d.cap.max_send_sge, 103);
	ck_assert_uint_eq(d.cap.max_recv_sge, 104);
	ck_assert_uint_eq(d.cap.max_inline_data, 105);
	ck_assert_uint_eq(d.pkey_index, 106);
	ck_assert_uint_eq(d.alt_pkey_index, 107);
	ck_assert_uint_eq(d.en_sqd_async_notify, 1);
	ck_assert_uint_eq(d.sq_draining, 1);
	ck_assert_uint_eq(d.max_rd_atomic, 108);
	ck_assert_uint_eq(d.max_dest_rd_atomic, 109);
	ck_assert_uint_eq(d.min_rnr_timer, 110);
	ck_assert_uint_eq(d.port_num, 111);
	ck_assert_uint_eq(d.timeout, 112);
	ck_assert_uint_eq(d.retry_cnt, 113);
	ck_assert_uint_eq(d.rnr_retry, 114);
	ck_assert_uint_eq(d.alt_port_num, 115);
	ck_assert_uint_eq(d.alt_timeout, 116);
}
END_TEST

static void fill_kern_path(struct ib_user_path_rec *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 16; i++) {
		k->dgid[i] = (uint8_t)(0x80 + i);
		k->sgid[i] = (uint8_t)(0xc0 + i);
	}
	k->dlid = htobe16(0x1234);
	k->slid = htobe16(0x5678);
	k->raw_traffic = 1;
	k->flow_label = htobe32(0xabcde);
	k->reversible = 1;
	k->mtu = IBV_MTU_2048;
	k->pkey = htobe16(0xffff);
	k->hop_limit = 64;
	k->traffic_class = 3;
	k->numb_path = 7;
	k->sl = 5;
	k->mtu_selector = 2;
	k->rate_selector = 2;
	k->rate = IBV_RATE_100_GBPS;
	k->packet_life_time_selector = 1;
	k->packet_life_time = 18;
	k->preference = 9;
}

START_TEST(test_path_rec_from_kern)
{
	struct ib_user_path_rec k;
	struct ibv_sa_path_rec d;

	fill_kern_path(&k);
	memset(&d, 0x5a, sizeof(d));
	ibv_copy_path_rec_from_kern(&d, &k);

	ck_assert_mem_eq(d.dgid.raw, k.dgid, 16);
	ck_assert_mem_eq(d.sgid.raw, k.sgid, 16);
	ck_assert_uint_eq(be16toh(d.dlid), 0x1234);
	ck_assert_uint_eq(be16toh(d.slid), 0x5678);
	ck_assert_int_eq(d.raw_traffic, 1);
	ck_assert_uint_eq(be32toh(d.flow_label), 0xabcde);
	ck_assert_int_eq(d.reversible, 1);
	ck_assert_uint_eq(d.mtu, IBV_MTU_2048);
	ck_assert_uint_eq(be16toh(d.pkey), 0xffff);
	ck_assert_uint_eq(d.hop_limit, 64);
	ck_assert_uint_eq(d.traffic_class, 3);
	ck_assert_uint_eq(d.numb_path, 7);
	ck_assert_uint_eq(d.sl, 5);
	ck_assert_uint_eq(d.mtu_selector, 2);
	ck_assert_uint_eq(d.rate_selector, 2);
	ck_assert_uint_eq(d.rate, IBV_RATE_100_GBPS);
	ck_assert_uint_eq(d.packet_life_time_selector, 1);
	ck_assert_uint_eq(d.packet_life_time, 18);
	ck_assert_uint_eq(d.preference, 9);
}
END_TEST

START_TEST(test_path_rec_round_trip)
{
	struct ib_user_path_rec k, back;
	struct ibv_sa_path_rec d;

	fill_kern_path(&k);
	memset(&back, 0xee, sizeof(back));
	ibv_copy_path_rec_from_kern(&d, &k);
	ibv_copy_path_rec_to_kern(&back, &d);
	/* The kernel layout has no padding: every byte must come back. */
	ck_assert_mem_eq(&back, &k, sizeof(k));
}
END_TEST

static Suite *marshall_suite(void)
{
	Suite *s = suite_create("abi_marshall");
	TCase *tc = tcase_create("field_by_field");

	tcase_add_test(tc, test_ah_attr_from_kern);
	tcase_add_test(tc, test_qp_attr_from_kern);
	tcase_add_test(tc, test_path_rec_from_kern);
	tcase_add_test(tc, test_path_rec_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(marshall_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
