/* SPDX-License-Identifier: MIT */
/*
 * Tests of wire/describe.h: the exact text and JSON of the worked vector,
 * every header's fields for every opcode, malformed packets, IPv6 address
 * text, and snprintf-style truncation.
 */
#include <stdio.h>
#include <string.h>
#include <wire/wire.h>

#include "pkt_util.h"
#include "suites.h"
#include "vectors.h"

static char line[4096];

START_TEST(test_describe_vector_text)
{
	struct wire_decoded d;

	ck_assert_int_eq(wire_decode_eth(vec_hello_v4, sizeof(vec_hello_v4), &d), WIRE_R_OK);
	wire_describe(line, sizeof(line), &d);
	ck_assert_str_eq(line, "192.168.1.1:49443 > 192.168.1.2:4791 RC Send Only QP=0x000011 "
			       "PSN=256 A=1 SE=0 M=0 pad=3 len=5 icrc=ok");
	ck_assert_int_eq(wire_decode_eth(vec_hello_v6, sizeof(vec_hello_v6), &d), WIRE_R_OK);
	wire_describe(line, sizeof(line), &d);
	ck_assert_str_eq(line, "[fe80::1]:49443 > [fe80::2]:4791 RC Send Only QP=0x000011 "
			       "PSN=256 A=1 SE=0 M=0 pad=3 len=5 icrc=ok");
}
END_TEST

START_TEST(test_describe_vector_json)
{
	struct wire_decoded d;

	ck_assert_int_eq(wire_decode_eth(vec_hello_v4, sizeof(vec_hello_v4), &d), WIRE_R_OK);
	wire_describe_json(line, sizeof(line), &d);
	ck_assert_str_eq(line,
			 "{\"malformed\":false,\"reason\":\"ok\",\"ip_version\":4,"
			 "\"src\":\"192.168.1.1\",\"dst\":\"192.168.1.2\",\"sport\":49443,"
			 "\"dport\":4791,\"ip_csum_ok\":true,\"opcode\":4,"
			 "\"opcode_name\":\"Reliable Connection (RC) - SEND Only\","
			 "\"info_name\":\"RC Send Only\",\"destqp\":17,\"psn\":256,\"ackreq\":1,"
			 "\"se\":0,\"mig\":0,\"padcnt\":3,\"tver\":0,\"pkey\":65535,\"fecn\":0,"
			 "\"becn\":0,\"payload_len\":5,\"icrc\":\"ok\",\"icrc_wire\":3082329646,"
			 "\"icrc_calc\":3082329646}");
}
END_TEST

/* A corrupted ICRC shows both values. */
START_TEST(test_describe_bad_icrc)
{
	uint8_t f[sizeof(vec_hello_v4)];
	struct wire_decoded d;

	memcpy(f, vec_hello_v4, sizeof(f));
	f[sizeof(f) - 1] = 0x48;
	ck_assert_int_eq(wire_decode_eth(f, sizeof(f), &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_BAD);
	wire_describe(line, sizeof(line), &d);
	ck_assert_ptr_nonnull(strstr(line, " icrc=bad (wire 0x48b89e2e, computed 0xb7b89e2e)"));
	ck_assert_ptr_null(strstr(line, "ip-checksum"));
	wire_describe_json(line, sizeof(line), &d);
	ck_assert_ptr_nonnull(strstr(line, "\"icrc\":\"bad\""));
	ck_assert_ptr_nonnull(strstr(line, "\"ip_csum_ok\":true"));
	/* a damaged IPv4 header checksum: masked in the ICRC, so said separately */
	memcpy(f, vec_hello_v4, sizeof(f));
	f[14 + 11] ^= 0x01;
	ck_assert_int_eq(wire_decode_eth(f, sizeof(f), &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	wire_describe(line, sizeof(line), &d);
	ck_assert_ptr_nonnull(strstr(line, "len=5 ip-checksum=bad icrc=ok"));
	wire_describe_json(line, sizeof(line), &d);
	ck_assert_ptr_nonnull(strstr(line, "\"ip_csum_ok\":false"));
}
END_TEST

/* Every opcode: the line names it as tshark does and prints every header's fields. */
START_TEST(test_describe_every_opcode)
{
	const struct wire_opcode_info *info = wire_opcode_at((unsigned)_i);
	struct wire_build b = pkt_fields(info->opcode);
	uint8_t frame[4200];
	size_t n = pkt_frame(frame, sizeof(frame), &b, pkt_payload_len(info));
	struct wire_decoded d;
	char want[256];
	uint32_t m = info->mask;

	ck_assert_int_eq(wire_decode_eth(frame, n, &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	wire_describe(line, sizeof(line), &d);
	snprintf(want, sizeof(want),
		 "127.0.0.1:49169 > 127.0.0.2:4791 %s QP=0xabcdef PSN=16702650 A=1 SE=1 M=1 pad=%u",
		 info->info_name, (unsigned)(-pkt_payload_len(info) & 3));
	ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%s\nwant prefix %s", line, want);
	ck_assert_msg(strstr(line, " icrc=ok") == line + strlen(line) - 8, "%s", line);
#define HAS(cond, s) ck_assert_msg(!!(cond) == !!strstr(line, s), "%s: '%s'", line, s)
	HAS(m & WIRE_RETH_MASK, " RETH va=0x0102030405060708 rkey=0x11223344 dmalen=349799");
	HAS(m & WIRE_ATMETH_MASK, " AtomicETH va=0x0102030405060708 rkey=0x11223344 "
				  "swap_add=0x8877665544332211 compare=0x1020304050607080");
	HAS(m & WIRE_AETH_MASK, " AETH syndrome=0x2e RNR-NAK timer=1280us msn=3430008");
	HAS(m & WIRE_ATMACK_MASK, " AtomicAckETH orig=0xf0e0d0c0b0a09080");
	HAS(m & WIRE_DETH_MASK, " DETH qkey=0x80010000 srcqp=0x0a0b0c");
	HAS(m & WIRE_IMMDT_MASK, " ImmDt=0xcafef00d");
	HAS(m & WIRE_IETH_MASK, " IETH rkey=0x55667788");
	HAS(m & WIRE_XRCETH_MASK, " XRCETH srqn=0x0d0e0f");
	HAS(m & WIRE_FETH_MASK, " FETH sel=2 plt=5");
	HAS(m & WIRE_PAYLOAD_MASK, " len=");
	wire_describe_json(line, sizeof(line), &d);
#undef HAS
#define HAS(cond, s) ck_assert_msg(!!(cond) == !!strstr(line, s), "%s: '%s'", line, s)
	HAS(m & WIRE_RETH_MASK, ",\"reth\":{\"va\":\"0x0102030405060708\",\"rkey\":287454020,"
				"\"dmalen\":349799}");
	HAS(m & WIRE_ATMETH_MASK,
	    ",\"atomiceth\":{\"va\":\"0x0102030405060708\",\"rkey\":287454020,"
	    "\"swap_add\":\"0x8877665544332211\",\"compare\":\"0x1020304050607080\"}");
	HAS(m & WIRE_AETH_MASK,
	    ",\"aeth\":{\"syndrome\":46,\"type\":\"RNR NAK\",\"value\":14,\"msn\":3430008}");
	HAS(m & WIRE_ATMACK_MASK, ",\"atomicacketh\":{\"orig\":\"0xf0e0d0c0b0a09080\"}");
	HAS(m & WIRE_DETH_MASK, ",\"deth\":{\"qkey\":2147549184,\"srcqp\":658188}");
	HAS(m & WIRE_IMMDT_MASK, ",\"immdt\":3405705229");
	HAS(m & WIRE_IETH_MASK, ",\"ieth\":1432778632");
	HAS(m & WIRE_XRCETH_MASK, ",\"xrceth\":{\"srqn\":855567}");
	HAS(m & WIRE_FETH_MASK, ",\"feth\":{\"sel\":2,\"plt\":5}");
	HAS(1, ",\"destqp\":11259375,\"psn\":16702650,\"ackreq\":1,\"se\":1,\"mig\":1");
	snprintf(want, sizeof(want), "\"opcode\":%u,\"opcode_name\":\"%s\"", info->opcode,
		 info->name);
	HAS(1, want);
#undef HAS
}
END_TEST

START_TEST(test_describe_syndromes)
{
	static const struct {
		uint8_t syn;
		const char *text;
	} cases[] = {
	    {0x1f, "AETH syndrome=0x1f ACK credits=unlimited msn="},
	    {0x06, "AETH syndrome=0x06 ACK credits=8 msn="},
	    {0x00, "AETH syndrome=0x00 ACK credits=0 msn="},
	    {0x20, "AETH syndrome=0x20 RNR-NAK timer=655360us msn="},
	    {0x60, "AETH syndrome=0x60 NAK \"PSN Sequence Error\" msn="},
	    {0x62, "AETH syndrome=0x62 NAK \"Remote Access Error\" msn="},
	    {0x7f, "AETH syndrome=0x7f NAK \"Reserved\" msn="},
	    {0x45, "AETH syndrome=0x45 reserved-type value=5 msn="},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wire_build b = pkt_fields(WIRE_OP_RC_ACKNOWLEDGE);
		uint8_t frame[256];
		struct wire_decoded d;
		size_t n;

		b.syndrome = cases[i].syn;
		n = pkt_frame(frame, sizeof(frame), &b, 0);
		ck_assert_int_eq(wire_decode_eth(frame, n, &d), WIRE_R_OK);
		wire_describe(line, sizeof(line), &d);
		ck_assert_msg(strstr(line, cases[i].text) != NULL, "%s", line);
	}
}
END_TEST

START_TEST(test_describe_malformed)
{
	struct wire_build b = pkt_fields(WIRE_OP_RC_SEND_ONLY);
	uint8_t frame[256];
	struct wire_decoded d;
	size_t n = pkt_frame(frame, sizeof(frame), &b, 4);

	frame[42 + 1] |= 0x02; /* TVer 2 */
	ck_assert_int_eq(wire_decode_eth(frame, n, &d), WIRE_R_BAD_TVER);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_BAD); /* computed anyway: the header changed */
	wire_describe(line, sizeof(line), &d);
	ck_assert_msg(strstr(line, "RC Send Only QP=0xabcdef PSN=16702650 A=1 SE=1 M=1 pad=0 "
				   "malformed: TVer not 0 icrc=bad") != NULL,
		      "%s", line);
	wire_describe_json(line, sizeof(line), &d);
	ck_assert_ptr_nonnull(strstr(line, "{\"malformed\":true,\"reason\":\"bad_tver\""));
	ck_assert_ptr_null(strstr(line, "payload_len"));
	/* an IB packet too short for a BTH: addresses, no BTH fields */
	frame[14 + 3] = 20 + 8 + 8; /* IP length 36 */
	frame[14 + 20 + 5] = 16;    /* UDP length 16 */
	frame[14 + 10] = frame[14 + 11] = 0;
	{
		uint16_t c = wire_inet_csum(frame + 14, 20);

		frame[14 + 10] = (uint8_t)(c >> 8);
		frame[14 + 11] = (uint8_t)c;
	}
	ck_assert_int_eq(wire_decode_eth(frame, 14 + 36, &d), WIRE_R_TOO_SHORT);
	wire_describe(line, sizeof(line), &d);
	ck_assert_str_eq(line, "127.0.0.1:49169 > 127.0.0.2:4791 malformed: too short for BTH and "
			       "ICRC icrc=unchecked");
	wire_describe_json(line, sizeof(line), &d);
	ck_assert_ptr_null(strstr(line, "\"opcode\""));
	ck_assert_ptr_nonnull(strstr(line, "\"icrc\":\"unchecked\"}"));
}
END_TEST

/* RFC 5952 text for IPv6 addresses, via a not-RoCE frame description. */
START_TEST(test_describe_ipv6_text)
{
	static const struct {
		uint8_t a[16];
		const char *text;
	} cases[] = {
	    {{0}, "::"},
	    {{[15] = 1}, "::1"},
	    {{0xfd, 0x00, [15] = 2}, "fd00::2"},
	    {{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}, "2001:db8::1:0:0:1"},
	    {{0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}, "1:0:0:2::3"},
	    {{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}, "1:2:3:4:5:6:7:8"},
	    {{0, 1, 0, 0, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}, "1:0:3:4:5:6:7:8"},
	    {{0xfe, 0x80, [14] = 0xab, [15] = 0xcd}, "fe80::abcd"},
	    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}, "::ffff:127.0.0.1"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wire_decoded d;
		char want[128];

		memset(&d, 0, sizeof(d));
		d.reason = WIRE_R_NOT_ROCE;
		d.frame.ip_version = 6;
		memcpy(d.frame.src, cases[i].a, 16);
		memcpy(d.frame.dst, cases[i].a, 16);
		d.frame.sport = 1;
		d.frame.dport = 2;
		wire_describe(line, sizeof(line), &d);
		snprintf(want, sizeof(want), "[%s]:1 > [%s]:2 not RoCEv2", cases[i].text,
			 cases[i].text);
		ck_assert_str_eq(line, want);
	}
}
END_TEST

/* snprintf semantics: full length returned, output cut and terminated. */
START_TEST(test_describe_truncation)
{
	struct wire_decoded d;
	char full[512], small[17];
	int n, m;

	ck_assert_int_eq(wire_decode_eth(vec_hello_v4, sizeof(vec_hello_v4), &d), WIRE_R_OK);
	n = wire_describe(full, sizeof(full), &d);
	ck_assert_int_eq(n, (int)strlen(full));
	memset(small, 'Z', sizeof(small));
	m = wire_describe(small, sizeof(small), &d);
	ck_assert_int_eq(m, n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert(strncmp(small, full, sizeof(small) - 1) == 0);
	ck_assert_int_eq(wire_describe(NULL, 0, &d), n);
	n = wire_describe_json(full, sizeof(full), &d);
	ck_assert_int_eq(n, (int)strlen(full));
	ck_assert_int_eq(wire_describe_json(small, sizeof(small), &d), n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(wire_describe_json(NULL, 0, &d), n);
}
END_TEST

Suite *describe_suite(void)
{
	Suite *s = suite_create("describe");
	TCase *tc = tcase_create("describe");

	tcase_add_test(tc, test_describe_vector_text);
	tcase_add_test(tc, test_describe_vector_json);
	tcase_add_test(tc, test_describe_bad_icrc);
	tcase_add_loop_test(tc, test_describe_every_opcode, 0, WIRE_OPCODE_COUNT);
	tcase_add_test(tc, test_describe_syndromes);
	tcase_add_test(tc, test_describe_malformed);
	tcase_add_test(tc, test_describe_ipv6_text);
	tcase_add_test(tc, test_describe_truncation);
	suite_add_tcase(s, tc);
	return s;
}
