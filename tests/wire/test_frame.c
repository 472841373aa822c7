/* SPDX-License-Identifier: MIT */
/*
 * Tests of wire/frame.h: parsing the worked vectors, padding/FCS, VLAN tags,
 * IPv4 options, IPv6 extension headers, what is skipped and what is broken,
 * and building frames that parse back with the headers a RoCEv2 NIC sends.
 */
#include <errno.h>
#include <string.h>
#include <wire/decode.h>
#include <wire/frame.h>

#include "suites.h"
#include "vectors.h"

static uint8_t f[256];

static size_t load(const uint8_t *src, size_t len)
{
	memcpy(f, src, len);
	return len;
}

START_TEST(test_frame_parse_v4)
{
	struct wire_frame fr;
	static const uint8_t src[4] = {192, 168, 1, 1}, dst[4] = {192, 168, 1, 2};

	ck_assert_int_eq(wire_frame_parse_eth(vec_hello_v4, sizeof(vec_hello_v4), &fr), WIRE_R_OK);
	ck_assert_uint_eq(fr.has_eth, 1);
	ck_assert_uint_eq(fr.ethertype, 0x0800);
	ck_assert_uint_eq(fr.ip_version, 4);
	ck_assert_uint_eq(fr.ip_off, 14);
	ck_assert_uint_eq(fr.ip_hdr_len, 20);
	ck_assert_uint_eq(fr.ip_len, 52);
	ck_assert_mem_eq(fr.src, src, 4);
	ck_assert_mem_eq(fr.dst, dst, 4);
	ck_assert_uint_eq(fr.ip_id, 0x1234);
	ck_assert_uint_eq(fr.ip_frag, 0x4000);
	ck_assert_uint_eq(fr.ttl, 64);
	ck_assert_uint_eq(fr.ip_csum_ok, 1);
	ck_assert_uint_eq(fr.sport, 49443);
	ck_assert_uint_eq(fr.dport, 4791);
	ck_assert_uint_eq(fr.udp_len, 32);
	ck_assert_uint_eq(fr.ib_off, 42);
	ck_assert_uint_eq(fr.ib_len, 24);
	/* the same packet without the Ethernet header */
	ck_assert_int_eq(wire_frame_parse_ip(vec_hello_v4 + 14, sizeof(vec_hello_v4) - 14, &fr),
			 WIRE_R_OK);
	ck_assert_uint_eq(fr.has_eth, 0);
	ck_assert_uint_eq(fr.ib_off, 28);
	ck_assert_uint_eq(fr.ib_len, 24);
}
END_TEST

START_TEST(test_frame_parse_v6)
{
	struct wire_frame fr;

	ck_assert_int_eq(wire_frame_parse_eth(vec_hello_v6, sizeof(vec_hello_v6), &fr), WIRE_R_OK);
	ck_assert_uint_eq(fr.ip_version, 6);
	ck_assert_uint_eq(fr.ip_hdr_len, 40);
	ck_assert_uint_eq(fr.ip_len, 72);
	ck_assert_uint_eq(fr.ttl, 64);
	ck_assert_uint_eq(fr.src[0], 0xfe);
	ck_assert_uint_eq(fr.dst[15], 0x02);
	ck_assert_uint_eq(fr.udp_csum, 0x48aa);
	ck_assert_uint_eq(fr.ib_off, 62);
	ck_assert_uint_eq(fr.ib_len, 24);
}
END_TEST

/* Ethernet minimum-size padding and a captured FCS do not change the IB packet. */
START_TEST(test_frame_trailer_ignored)
{
	struct wire_frame fr;
	size_t n = load(vec_hello_v4, sizeof(vec_hello_v4));

	memset(f + n, 0xee, 8);
	ck_assert_int_eq(wire_frame_parse_eth(f, n + 8, &fr), WIRE_R_OK);
	ck_assert_uint_eq(fr.ib_len, 24);
}
END_TEST

START_TEST(test_frame_vlan)
{
	struct wire_frame fr;
	struct wire_decoded d;
	size_t n = sizeof(vec_hello_v4);

	memcpy(f, vec_hello_v4, 12);
	f[12] = 0x81, f[13] = 0x00, f[14] = 0x20, f[15] = 0x07; /* PCP 1, VID 7 */
	memcpy(f + 16, vec_hello_v4 + 12, n - 12);
	ck_assert_int_eq(wire_frame_parse_eth(f, n + 4, &fr), WIRE_R_OK);
	ck_assert_uint_eq(fr.vlan_count, 1);
	ck_assert_uint_eq(fr.vlan_tci[0], 0x2007);
	ck_assert_uint_eq(fr.ethertype, 0x0800);
	ck_assert_uint_eq(fr.ib_off, 46);
	ck_assert_int_eq(wire_decode_eth(f, n + 4, &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	/* QinQ: 0x88a8 then 0x8100 */
	memcpy(f, vec_hello_v4, 12);
	f[12] = 0x88, f[13] = 0xa8, f[14] = 0x00, f[15] = 0x64;
	f[16] = 0x81, f[17] = 0x00, f[18] = 0x00, f[19] = 0x07;
	memcpy(f + 20, vec_hello_v4 + 12, n - 12);
	ck_assert_int_eq(wire_decode_eth(f, n + 8, &d), WIRE_R_OK);
	ck_assert_uint_eq(d.frame.vlan_count, 2);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
}
END_TEST

/* IHL 6: 4 option bytes. The ICRC covers them; the packet still decodes. */
START_TEST(test_frame_ipv4_options)
{
	struct wire_decoded d;
	size_t n = sizeof(vec_hello_v4);
	uint32_t icrc;

	memcpy(f, vec_hello_v4, 34);
	f[14] = 0x46;
	f[17] = 0x38;						/* total length 56 */
	f[34] = 0x01, f[35] = 0x01, f[36] = 0x01, f[37] = 0x00; /* NOP NOP NOP EOL */
	memcpy(f + 38, vec_hello_v4 + 34, n - 34);
	f[24] = f[25] = 0;
	{
		uint16_t c = wire_inet_csum(f + 14, 24);

		f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
	}
	ck_assert_int_eq(wire_icrc_compute(f + 14, 24, 56 - 4, &icrc), 0);
	wire_icrc_put(f + n + 4 - 4, icrc);
	ck_assert_int_eq(wire_decode_eth(f, n + 4, &d), WIRE_R_OK);
	ck_assert_uint_eq(d.frame.ip_hdr_len, 24);
	ck_assert_uint_eq(d.frame.ip_csum_ok, 1);
	ck_assert_uint_eq(d.frame.ib_off, 46);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	/* the options are covered: change one and the ICRC fails */
	f[35] = 0x00;
	ck_assert_int_eq(wire_decode_eth(f, n + 4, &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_BAD);
}
END_TEST

/* IPv6 with a hop-by-hop options header (8 bytes) before UDP. */
START_TEST(test_frame_ipv6_ext)
{
	struct wire_decoded d;
	size_t n = sizeof(vec_hello_v6);
	uint32_t icrc;

	memcpy(f, vec_hello_v6, 54);
	f[14 + 5] = 0x28; /* payload length 40 */
	f[14 + 6] = 0;	  /* next header: hop-by-hop */
	f[54] = 17, f[55] = 0, f[56] = 1, f[57] = 4, f[58] = f[59] = f[60] = f[61] = 0; /* PadN */
	memcpy(f + 62, vec_hello_v6 + 54, n - 54);
	ck_assert_int_eq(wire_icrc_compute(f + 14, 48, 48 + 8 + 24 - 4, &icrc), 0);
	wire_icrc_put(f + n + 8 - 4, icrc);
	ck_assert_int_eq(wire_decode_eth(f, n + 8, &d), WIRE_R_OK);
	ck_assert_uint_eq(d.frame.ip_hdr_len, 48);
	ck_assert_uint_eq(d.frame.ib_off, 70);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	/* an unknown next header is not RoCEv2 */
	f[14 + 6] = 59; /* no next header */
	ck_assert_int_eq(wire_decode_eth(f, n + 8, &d), WIRE_R_NOT_ROCE);
}
END_TEST

START_TEST(test_frame_not_roce)
{
	struct wire_frame fr;
	size_t n;

	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 20 + 3] = 0xb6; /* dport 4790 */
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_NOT_ROCE);
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 9] = 6; /* TCP */
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_NOT_ROCE);
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[12] = 0x08, f[13] = 0x06; /* ARP */
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_NOT_ROCE);
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 6] = 0x20, f[14 + 7] = 0x10; /* fragment offset 16: no UDP header */
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_NOT_ROCE);
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14] = 0x65; /* ethertype IPv4 but version 6 */
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(wire_frame_parse_eth(NULL, 0, &fr), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(wire_frame_parse_ip(vec_hello_v4, 0, &fr), WIRE_R_NOT_ROCE);
}
END_TEST

START_TEST(test_frame_broken)
{
	struct wire_frame fr;
	size_t n;

	/* first fragment of a fragmented RoCEv2 datagram */
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 6] = 0x20; /* MF, no DF */
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_IP_FRAGMENT);
	/* IP total length shorter than IP + UDP */
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 3] = 0x1a;
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_IP_BAD_LENGTH);
	/* IP total length disagrees with UDP length */
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 3] = 0x30;
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_UDP_BAD_LENGTH);
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 20 + 5] = 0x1c;
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_UDP_BAD_LENGTH);
	/* IP length says more than was captured */
	n = load(vec_hello_v4, sizeof(vec_hello_v4));
	f[14 + 3] = 0x38;
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_FRAME_TRUNCATED);
	/* IPv6 payload length 0 (jumbogram) */
	n = load(vec_hello_v6, sizeof(vec_hello_v6));
	f[14 + 5] = 0;
	ck_assert_int_eq(wire_frame_parse_eth(f, n, &fr), WIRE_R_IP_BAD_LENGTH);
}
END_TEST

/* Cut the frame at every length: unknown until the port is visible, then truncated. */
START_TEST(test_frame_truncated_everywhere)
{
	struct wire_frame fr;

	for (size_t len = 0; len < sizeof(vec_hello_v4); len++) {
		enum wire_reason r = wire_frame_parse_eth(vec_hello_v4, len, &fr);

		if (len < 14 + 20 + 4)
			ck_assert_msg(r == WIRE_R_NOT_ROCE, "len %zu: %s", len,
				      wire_reason_name(r));
		else
			ck_assert_msg(r == WIRE_R_FRAME_TRUNCATED, "len %zu: %s", len,
				      wire_reason_name(r));
	}
	for (size_t len = 0; len < sizeof(vec_hello_v6); len++) {
		enum wire_reason r = wire_frame_parse_eth(vec_hello_v6, len, &fr);

		ck_assert_msg(r == (len < 14 + 40 + 4 ? WIRE_R_NOT_ROCE : WIRE_R_FRAME_TRUNCATED),
			      "v6 len %zu: %s", len, wire_reason_name(r));
	}
}
END_TEST

START_TEST(test_frame_inet_csum)
{
	uint8_t h[20];

	memcpy(h, vec_hello_v4 + 14, 20);
	ck_assert_uint_eq(wire_inet_csum(h, 20), 0); /* a valid header sums to 0 */
	h[10] = h[11] = 0;
	ck_assert_uint_eq(wire_inet_csum(h, 20), 0xa531);
	ck_assert_uint_eq(wire_inet_csum((const uint8_t *)"\x01", 1), 0xfeff);
}
END_TEST

START_TEST(test_frame_build_v4)
{
	struct wire_frame_params p = {.ip_version = 4,
				      .src = {10, 0, 0, 1},
				      .dst = {10, 0, 0, 2},
				      .eth_src = {2, 0, 0, 0, 0, 1},
				      .eth_dst = {2, 0, 0, 0, 0, 2},
				      .tos = 0x02,
				      .fill_icrc = 1};
	const uint8_t *ib = vec_hello_v4 + 42;
	uint8_t out[128];
	struct wire_decoded d;
	int n = wire_frame_build_eth(out, sizeof(out), &p, ib, 24);

	ck_assert_int_eq(n, 66);
	ck_assert_uint_eq(wire_frame_hdr_bytes(&p), 42);
	ck_assert_int_eq(wire_decode_eth(out, (size_t)n, &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	ck_assert_uint_eq(d.frame.ip_csum_ok, 1);
	ck_assert_uint_eq(d.frame.ip_id, 0);
	ck_assert_uint_eq(d.frame.ip_frag, WIRE_IPV4_DF);
	ck_assert_uint_eq(d.frame.ttl, 64);
	ck_assert_uint_eq(d.frame.tos, 0x02);
	ck_assert_uint_eq(d.frame.udp_csum, 0);
	ck_assert_uint_eq(d.frame.sport, 0xc000); /* default: above 4791 */
	ck_assert_uint_eq(d.frame.dport, 4791);
	ck_assert_mem_eq(out, p.eth_dst, 6);
	ck_assert_mem_eq(out + 6, p.eth_src, 6);
	/* the ICRC equals the socket sender's pseudo-header computation */
	ck_assert_uint_eq(d.pkt.icrc, wire_icrc_udp4(p.src, p.dst, 0xc000, 4791, ib, 20));
	/* without fill_icrc the given trailer is kept (the vector's, now wrong) */
	p.fill_icrc = 0;
	n = wire_frame_build_eth(out, sizeof(out), &p, ib, 24);
	ck_assert_int_eq(wire_decode_eth(out, (size_t)n, &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_BAD);
	ck_assert_uint_eq(d.pkt.icrc, VEC_HELLO_V4_ICRC);
	/* raw IP form */
	p.fill_icrc = 1;
	n = wire_frame_build_ip(out, sizeof(out), &p, ib, 24);
	ck_assert_int_eq(n, 52);
	ck_assert_int_eq(wire_decode_ip(out, (size_t)n, &d), WIRE_R_OK);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	/* errors */
	ck_assert_int_eq(wire_frame_build_eth(out, 65, &p, ib, 24), -ENOSPC);
	ck_assert_int_eq(wire_frame_build_eth(out, 10, &p, ib, 24), -ENOSPC);
	ck_assert_int_eq(wire_frame_build_eth(out, sizeof(out), &p, ib, 3), -EINVAL);
	p.ip_version = 5;
	ck_assert_int_eq(wire_frame_build_eth(out, sizeof(out), &p, ib, 24), -EINVAL);
}
END_TEST

START_TEST(test_frame_build_v6)
{
	struct wire_frame_params p = {.ip_version = 6,
				      .src = {0xfe, 0x80, [15] = 1},
				      .dst = {0xfe, 0x80, [15] = 2},
				      .sport = 49443,
				      .tos = 0xa4,
				      .flow = 0x12345,
				      .fill_icrc = 1};
	uint8_t out[128];
	struct wire_decoded d;
	int n = wire_frame_build_eth(out, sizeof(out), &p, vec_hello_v6 + 62, 24);

	ck_assert_int_eq(n, 86);
	ck_assert_int_eq(wire_decode_eth(out, (size_t)n, &d), WIRE_R_OK);
	ck_assert_uint_eq(d.frame.tos, 0xa4);
	ck_assert_uint_eq(d.frame.flow, 0x12345);
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	/* traffic class and flow label are masked: same ICRC as the vector */
	ck_assert_uint_eq(d.pkt.icrc, VEC_HELLO_V6_ICRC);
	/* building in place (ib already at its final offset) */
	memmove(out + 62, vec_hello_v6 + 62, 24);
	n = wire_frame_build_eth(out, sizeof(out), &p, out + 62, 24);
	ck_assert_int_eq(wire_decode_eth(out, (size_t)n, &d), WIRE_R_OK);
	ck_assert_uint_eq(d.pkt.icrc, VEC_HELLO_V6_ICRC);
}
END_TEST

Suite *frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("frame");

	tcase_add_test(tc, test_frame_parse_v4);
	tcase_add_test(tc, test_frame_parse_v6);
	tcase_add_test(tc, test_frame_trailer_ignored);
	tcase_add_test(tc, test_frame_vlan);
	tcase_add_test(tc, test_frame_ipv4_options);
	tcase_add_test(tc, test_frame_ipv6_ext);
	tcase_add_test(tc, test_frame_not_roce);
	tcase_add_test(tc, test_frame_broken);
	tcase_add_test(tc, test_frame_truncated_everywhere);
	tcase_add_test(tc, test_frame_inet_csum);
	tcase_add_test(tc, test_frame_build_v4);
	tcase_add_test(tc, test_frame_build_v6);
	suite_add_tcase(s, tc);
	return s;
}
