// SPDX-License-Identifier: MIT
/*
 * Unit tests of wire/mad.c: the CM field table (fields of one message never
 * overlap, all inside the MAD data), bit-exact get/set of every numeric
 * field on a random background (neighbour bits untouched), fields read off
 * the bytes of a real Linux rxe ConnectRequest, the RDMA CM service ID and
 * IP header helpers, names, and the parser's verdicts on bad MADs.
 */
#include <stdlib.h>
#include <string.h>

#include <wire/mad.h>

#include "suites.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

START_TEST(test_table_layout)
{
	/* Per message, a bitmap of the MAD data: no bit claimed twice. */
	static const uint16_t msgs[] = {
	    WIRE_CM_ATTR_REQ,  WIRE_CM_ATTR_MRA,      WIRE_CM_ATTR_REJ,
	    WIRE_CM_ATTR_REP,  WIRE_CM_ATTR_RTU,      WIRE_CM_ATTR_DREQ,
	    WIRE_CM_ATTR_DREP, WIRE_CM_ATTR_SIDR_REQ, WIRE_CM_ATTR_SIDR_REP};

	for (size_t m = 0; m < sizeof(msgs) / sizeof(msgs[0]); m++) {
		uint8_t used[WIRE_MAD_DATA_BYTES * 8] = {0};
		unsigned nfields = 0;

		for (unsigned f = 0; f < WIRE_CM_FIELD_COUNT; f++) {
			const struct wire_cm_field_info *fi = wire_cm_field((enum wire_cm_field)f);

			ck_assert_ptr_nonnull(fi);
			ck_assert_ptr_nonnull(fi->name);
			ck_assert_int_lt(fi->bit, 8);
			ck_assert_int_gt(fi->width, 0);
			/* Wide fields are whole bytes (GIDs, private data). */
			if (fi->width > 64)
				ck_assert(fi->bit == 0 && fi->width % 8 == 0);
			if (fi->attr_id != msgs[m])
				continue;
			nfields++;
			for (unsigned b = 0; b < fi->width; b++) {
				unsigned pos = fi->byte * 8u + fi->bit + b;

				ck_assert_uint_lt(pos, sizeof(used));
				ck_assert_msg(!used[pos], "%s overlaps another field", fi->name);
				used[pos] = 1;
			}
		}
		ck_assert_uint_gt(nfields, 1);
	}
	ck_assert_ptr_null(wire_cm_field(WIRE_CM_FIELD_COUNT));
}
END_TEST

START_TEST(test_get_set_every_field)
{
	for (int round = 0; round < 16; round++) {
		for (unsigned f = 0; f < WIRE_CM_FIELD_COUNT; f++) {
			const struct wire_cm_field_info *fi = wire_cm_field((enum wire_cm_field)f);
			uint8_t mad[WIRE_MAD_BYTES], before[WIRE_MAD_BYTES];
			uint64_t v = rng(), mask;

			if (fi->width > 64)
				continue;
			mask = fi->width == 64 ? ~0ull : (1ull << fi->width) - 1;
			for (size_t i = 0; i < sizeof(mad); i++)
				mad[i] = (uint8_t)rng();
			memcpy(before, mad, sizeof(mad));
			wire_cm_set(mad, (enum wire_cm_field)f, v);
			ck_assert_msg(wire_cm_get(mad, (enum wire_cm_field)f) == (v & mask), "%s",
				      fi->name);
			/* Only the field's own bits changed. */
			for (unsigned pos = 0; pos < WIRE_MAD_BYTES * 8; pos++) {
				unsigned first = (WIRE_MAD_HDR_BYTES + fi->byte) * 8u + fi->bit;
				uint8_t bit = (uint8_t)(0x80u >> (pos % 8));

				if (pos >= first && pos < first + fi->width)
					continue;
				if ((mad[pos / 8] & bit) != (before[pos / 8] & bit))
					ck_abort_msg("%s touched bit %u", fi->name, pos);
			}
		}
	}
}
END_TEST

/*
 * The first 96 data bytes of the ConnectRequest of a real rping between two
 * Linux rxe hosts (10.77.0.3 -> 10.77.0.2), as the capture holds them; the
 * values below are what IBA table 106 makes of them (tshark agrees on all
 * but the flow label and packet rate, see tests/cli/cm_tshark_test.py).
 */
static const uint8_t rxe_req_data[96] = {
    0x45, 0xcd, 0xb6, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x1c, 0x06,
    0x50, 0x54, 0x00, 0xff, 0xfe, 0x77, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x11, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xa0, 0x85, 0x72, 0x11, 0xa7,
    0xff, 0xff, 0x37, 0xf0, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xff, 0x0a, 0x4d, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0xff, 0xff, 0x0a, 0x4d, 0x00, 0x02, 0x68, 0xda, 0xe0, 0x00, 0x00, 0x40, 0x00, 0x98};
_Static_assert(sizeof(rxe_req_data) == 96, "96 bytes of REQ data");

/* The RDMA CM IP header of the same REQ (private data): IPv4, 47448 -> 7174. */
static const uint8_t rxe_req_ip[WIRE_CM_IP_HDR_BYTES] = {
    0x00, 0x40, 0xb9, 0x58, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	0,    0x0a, 0x4d,
    0x00, 0x03, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0x4d, 0x00, 0x02};

static void rxe_req(uint8_t mad[WIRE_MAD_BYTES])
{
	wire_cm_init(mad, WIRE_CM_ATTR_REQ, 0x0000000203b6cd45ull);
	memcpy(mad + WIRE_MAD_HDR_BYTES, rxe_req_data, sizeof(rxe_req_data));
	memcpy(mad + WIRE_MAD_HDR_BYTES + 140, rxe_req_ip, sizeof(rxe_req_ip));
}

START_TEST(test_rxe_req_fields)
{
	static const struct {
		enum wire_cm_field f;
		uint64_t v;
	} want[] = {
	    {WIRE_CM_REQ_LOCAL_COMM_ID, 0x45cdb603},
	    {WIRE_CM_REQ_SERVICE_ID, 0x0000000001061c06ull},
	    {WIRE_CM_REQ_LOCAL_CA_GUID, 0x505400fffe770003ull},
	    {WIRE_CM_REQ_LOCAL_QKEY, 0},
	    {WIRE_CM_REQ_LOCAL_QPN, 0x11},
	    {WIRE_CM_REQ_RESPONDER_RESOURCES, 1},
	    {WIRE_CM_REQ_INITIATOR_DEPTH, 1},
	    {WIRE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, 0x14},
	    {WIRE_CM_REQ_TRANSPORT_SERVICE_TYPE, 0},
	    {WIRE_CM_REQ_STARTING_PSN, 0x857211},
	    {WIRE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, 0x14},
	    {WIRE_CM_REQ_RETRY_COUNT, 7},
	    {WIRE_CM_REQ_PKEY, 0xffff},
	    {WIRE_CM_REQ_PATH_MTU, 3},
	    {WIRE_CM_REQ_RDC_EXISTS, 0},
	    {WIRE_CM_REQ_RNR_RETRY_COUNT, 7},
	    {WIRE_CM_REQ_MAX_CM_RETRIES, 15},
	    {WIRE_CM_REQ_SRQ, 0},
	    {WIRE_CM_REQ_PRIMARY_LOCAL_LID, 0xffff},
	    {WIRE_CM_REQ_PRIMARY_REMOTE_LID, 0xffff},
	    /* Byte 88: 68 da e0 00 -> 20-bit flow label, 6 reserved, 6-bit rate. */
	    {WIRE_CM_REQ_PRIMARY_FLOW_LABEL, 0x68dae},
	    {WIRE_CM_REQ_PRIMARY_PACKET_RATE, 0},
	    {WIRE_CM_REQ_PRIMARY_TRAFFIC_CLASS, 0},
	    {WIRE_CM_REQ_PRIMARY_HOP_LIMIT, 0x40},
	    {WIRE_CM_REQ_PRIMARY_SL, 0},
	    {WIRE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, 0x13},
	};
	static const uint8_t gid_local[16] = {0, 0, 0,	  0,	0,  0,	0, 0,
					      0, 0, 0xff, 0xff, 10, 77, 0, 3};
	uint8_t mad[WIRE_MAD_BYTES];
	struct wire_cm_msg m;

	rxe_req(mad);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(wire_cm_get(mad, want[i].f) == want[i].v, "%s = 0x%llx, want 0x%llx",
			      wire_cm_field(want[i].f)->name,
			      (unsigned long long)wire_cm_get(mad, want[i].f),
			      (unsigned long long)want[i].v);
	ck_assert_mem_eq(wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIMARY_LOCAL_GID), gid_local, 16);
	ck_assert_uint_eq(wire_cm_field_bytes(WIRE_CM_REQ_PRIVATE_DATA), 92);

	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_OK);
	ck_assert_str_eq(m.attr_name, "ConnectRequest");
	ck_assert_uint_eq(m.method, WIRE_MAD_METHOD_SEND);
	ck_assert_uint_eq(m.tid, 0x0000000203b6cd45ull);
	ck_assert_uint_eq(m.local_comm_id, 0x45cdb603);
	ck_assert_uint_eq(m.qpn, 0x11);
	ck_assert_uint_eq(m.starting_psn, 0x857211);
	ck_assert(m.has_ip);
	ck_assert_uint_eq(wire_cm_ip_get_ipv(m.ip), 4);
	ck_assert_uint_eq(wire_cm_ip_get_sport(m.ip), 47448);
	ck_assert_mem_eq(m.ip->dst + 12, ((const uint8_t[]){10, 77, 0, 2}), 4);
}
END_TEST

START_TEST(test_build_rep_rej)
{
	uint8_t mad[WIRE_MAD_BYTES];
	struct wire_cm_msg m;

	/* wire_cm_init starts from nothing: whatever was there is cleared. */
	memset(mad, 0xa5, sizeof(mad));
	wire_cm_init(mad, WIRE_CM_ATTR_REP, 42);
	for (size_t i = WIRE_MAD_HDR_BYTES; i < sizeof(mad); i++)
		ck_assert_uint_eq(mad[i], 0);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_COMM_ID, 0x1935cee1);
	wire_cm_set(mad, WIRE_CM_REP_REMOTE_COMM_ID, 0x45cdb603);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_QPN, 0x123456);
	wire_cm_set(mad, WIRE_CM_REP_STARTING_PSN, 0xabcdef);
	wire_cm_set(mad, WIRE_CM_REP_RNR_RETRY_COUNT, 7);
	wire_cm_set(mad, WIRE_CM_REP_SRQ, 1);
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_OK);
	ck_assert_str_eq(m.attr_name, "ConnectReply");
	ck_assert_uint_eq(m.local_comm_id, 0x1935cee1);
	ck_assert_uint_eq(m.remote_comm_id, 0x45cdb603);
	ck_assert_uint_eq(m.qpn, 0x123456);
	ck_assert_uint_eq(m.starting_psn, 0xabcdef);
	/* Byte 27 of the data: RNR retry count in the 3 high bits, SRQ next. */
	ck_assert_uint_eq(mad[WIRE_MAD_HDR_BYTES + 27], 0xf0);
	ck_assert(!m.has_ip);
	ck_assert_uint_eq(m.eecn, 0);
	/* An XRC target's REP (annex A14): its QPN in the local EECN (data bytes 16-18). */
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_QPN, 0);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_EECN, 0x8562d8);
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_OK);
	ck_assert_uint_eq(m.qpn, 0);
	ck_assert_uint_eq(m.eecn, 0x8562d8);
	ck_assert_uint_eq(mad[WIRE_MAD_HDR_BYTES + 16], 0x85);

	wire_cm_init(mad, WIRE_CM_ATTR_REJ, 7);
	wire_cm_set(mad, WIRE_CM_REJ_REMOTE_COMM_ID, 0xa803637c);
	wire_cm_set(mad, WIRE_CM_REJ_REASON, WIRE_CM_REJ_INVALID_SERVICE_ID);
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_OK);
	ck_assert_uint_eq(m.rej_reason, 8);
	ck_assert_str_eq(wire_cm_rej_name(m.rej_reason), "invalid service ID");
	ck_assert_str_eq(wire_cm_rej_name(WIRE_CM_REJ_CONSUMER_REJECT), "consumer reject");
	ck_assert_ptr_null(wire_cm_rej_name(0));
	ck_assert_ptr_null(wire_cm_rej_name(34));
}
END_TEST

START_TEST(test_service_id)
{
	uint64_t sid = wire_cm_ip_service_id(WIRE_CM_PS_TCP, 7174);

	ck_assert_uint_eq(sid, 0x0000000001061c06ull);
	ck_assert(wire_cm_service_id_is_ip(sid));
	ck_assert(wire_cm_service_id_is_ip(wire_cm_ip_service_id(WIRE_CM_PS_UDP, 0)));
	ck_assert(!wire_cm_service_id_is_ip(0x0000000002061c06ull));
	ck_assert(!wire_cm_service_id_is_ip(0x1000000001061c06ull));
}
END_TEST

START_TEST(test_parse_errors)
{
	uint8_t mad[WIRE_MAD_BYTES];
	struct wire_cm_msg m;

	rxe_req(mad);
	ck_assert_int_eq(wire_cm_parse(mad, WIRE_MAD_BYTES - 4, &m), WIRE_R_MAD_SHORT);
	ck_assert_int_eq(wire_cm_parse(mad, 0, &m), WIRE_R_MAD_SHORT);
	mad[0] = 2;
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_MAD_VERSION);
	rxe_req(mad);
	mad[1] = 0x03; /* subnet administration */
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_MAD_CLASS);
	rxe_req(mad);
	mad[2] = 1;
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_MAD_VERSION);
	rxe_req(mad);
	wire_mad_set_attr_id((struct wire_mad_hdr *)mad, 0x0020);
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_MAD_ATTR);
	ck_assert_ptr_null(m.attr_name);
	/* A non-IP service ID carries no RDMA CM header. */
	rxe_req(mad);
	wire_cm_set(mad, WIRE_CM_REQ_SERVICE_ID, 0x0002c90300001234ull);
	ck_assert_int_eq(wire_cm_parse(mad, sizeof(mad), &m), WIRE_R_OK);
	ck_assert(!m.has_ip);
}
END_TEST

START_TEST(test_attr_names)
{
	ck_assert_str_eq(wire_cm_attr_name(0x0010), "ConnectRequest");
	ck_assert_str_eq(wire_cm_attr_name(0x0012), "ConnectReject");
	ck_assert_str_eq(wire_cm_attr_name(0x0016), "DisconnectReply");
	ck_assert_str_eq(wire_cm_attr_name(0x0018), "ServiceIDResReqResp");
	ck_assert_ptr_null(wire_cm_attr_name(0x0000));
	ck_assert_ptr_null(wire_cm_attr_name(0x001b));
}
END_TEST

Suite *mad_suite(void)
{
	Suite *s = suite_create("mad");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_table_layout);
	tcase_add_test(tc, test_get_set_every_field);
	tcase_add_test(tc, test_rxe_req_fields);
	tcase_add_test(tc, test_build_rep_rej);
	tcase_add_test(tc, test_service_id);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_attr_names);
	suite_add_tcase(s, tc);
	return s;
}
