/* SPDX-License-Identifier: MIT */
/*
 * Tests of wire/inet.h against known answers: the RFC 1071 example, IPv4,
 * IPv6 and UDP headers captured from Linux (AF_PACKET on lo) rebuilt byte
 * for byte, and IPv6 UDP checksums computed independently. The Python
 * that computed each expected checksum is in the comment above it, over
 *
 *   def s(b):                    # RFC 1071 sum, folded
 *       b += b'\0' * (len(b) % 2)
 *       t = sum(b[i] << 8 | b[i + 1] for i in range(0, len(b), 2))
 *       while t >> 16: t = (t & 0xffff) + (t >> 16)
 *       return t
 *   def c(b): return ~s(b) & 0xffff
 *   def u6(src, dst, udp):       # RFC 8200 8.1 pseudo-header
 *       return c(src + dst + len(udp).to_bytes(4, 'big') + bytes([0, 0, 0, 17]) + udp)
 */
#include <stdio.h>
#include <string.h>
#include <wire/inet.h>

#include "suites.h"
#include "vectors.h"

static const uint8_t v6_lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

/* RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2, checksum 220d. */
START_TEST(test_inet_rfc1071)
{
	static const uint8_t b[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	uint32_t sum = wire_inet_sum(0, b, sizeof(b));

	ck_assert_uint_eq(wire_inet_fold(sum), 0x220d);
	ck_assert_uint_eq(wire_inet_csum(b, sizeof(b)), 0x220d);
	/* Chained in even pieces: the same sum. */
	sum = wire_inet_sum(wire_inet_sum(wire_inet_sum(0, b, 2), b + 2, 4), b + 6, 2);
	ck_assert_uint_eq(wire_inet_fold(sum), 0x220d);
	/* The receiver's check: data plus its checksum sums to all ones. */
	{
		static const uint8_t csum[2] = {0x22, 0x0d};

		ck_assert_uint_eq(wire_inet_fold(wire_inet_sum(sum, csum, 2)), 0);
	}
}
END_TEST

START_TEST(test_inet_odd_and_long)
{
	static uint8_t ones[65535];

	/* An odd last byte is the high half of a word. */
	ck_assert_uint_eq(wire_inet_csum((const uint8_t *)"\x01", 1), 0xfeff);
	ck_assert_uint_eq(
	    wire_inet_fold(wire_inet_sum(wire_inet_sum(0, (const uint8_t *)"\x12\x34", 2),
					 (const uint8_t *)"\x56", 1)),
	    (uint16_t) ~(0x1234 + 0x5600));
	ck_assert_uint_eq(wire_inet_csum(NULL, 0), 0xffff);
	/* No carry lost over the longest datagram: c(b'\xff' * 65535) = 0x00ff. */
	memset(ones, 0xff, sizeof(ones));
	ck_assert_uint_eq(wire_inet_csum(ones, sizeof(ones)), 0x00ff);
	/* Nor past a running sum's 32 bits: 0xfffffff0 is 0xfff0 (2^32 = 1 mod 0xffff),
	 * plus 0x0020 is 0x0011, checksum 0xffee (a plain 32-bit wrap gives 0xffef). */
	ck_assert_uint_eq(
	    wire_inet_fold(wire_inet_sum(0xfffffff0u, (const uint8_t *)"\x00\x20", 2)), 0xffee);
}
END_TEST

/* 2n hex digits into n bytes. */
static void unhex(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

/* IPv4 headers as they were sent; wire_ipv4_put rebuilds each exactly. */
START_TEST(test_inet_ipv4_put)
{
	static const struct {
		const char *hdr;
		struct wire_ipv4_params p;
	} v[] = {
	    /* Linux, sendto 127.0.0.1 with IP_TOS 2, captured on lo: ID 0xad8b, DF, TTL 64. */
	    {"45020021ad8b400040118f3c7f0000017f000001",
	     {.tos = 0x02,
	      .total_len = 0x21,
	      .id = 0xad8b,
	      .frag = WIRE_IPV4_DF,
	      .ttl = 64,
	      .proto = WIRE_IPPROTO_UDP,
	      .src = {127, 0, 0, 1},
	      .dst = {127, 0, 0, 1}}},
	    /* A widely quoted worked example, 192.168.0.1 -> .199: c() with the checksum
	     * field zeroed = 0xb861. */
	    {"45000073000040004011b861c0a80001c0a800c7",
	     {.total_len = 0x73,
	      .frag = WIRE_IPV4_DF,
	      .ttl = 64,
	      .proto = WIRE_IPPROTO_UDP,
	      .src = {192, 168, 0, 1},
	      .dst = {192, 168, 0, 199}}},
	    /* PROTOCOL.md 6's worked vector (vectors.h): ID 0x1234, DF. */
	    {"45000034123440004011a531c0a80101c0a80102",
	     {.total_len = 0x34,
	      .id = 0x1234,
	      .frag = WIRE_IPV4_DF,
	      .ttl = 64,
	      .proto = WIRE_IPPROTO_UDP,
	      .src = {192, 168, 1, 1},
	      .dst = {192, 168, 1, 2}}},
	    /* A GRH area's header for a sender with IDs and no DF:
	     * c(bytes([0x45,0xb8,0,60,0x12,0x34,0,0,1,17,0,0,10,0,0,1,10,0,0,2])) = 0x92c3 */
	    {"45b8003c12340000011192c30a0000010a000002",
	     {.tos = 0xb8,
	      .total_len = 60,
	      .id = 0x1234,
	      .ttl = 1,
	      .proto = WIRE_IPPROTO_UDP,
	      .src = {10, 0, 0, 1},
	      .dst = {10, 0, 0, 2}}},
	};
	uint8_t want[20], out[20];

	unhex(v[2].hdr, want, sizeof(want));
	ck_assert_mem_eq(want, vec_hello_v4 + VEC_ETH, 20);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unhex(v[i].hdr, want, sizeof(want));
		ck_assert_uint_eq(wire_inet_csum(want, 20), 0);
		memset(out, 0xee, sizeof(out));
		wire_ipv4_put(out, &v[i].p);
		ck_assert_msg(!memcmp(out, want, 20), "vector %zu", i);
	}
}
END_TEST

START_TEST(test_inet_ipv6_put)
{
	/* sendto ::1 from ::1, captured on lo: flow label 0xbb752, payload 18, hop 64. */
	static const uint8_t lo[8] = {0x60, 0x0b, 0xb7, 0x52, 0x00, 0x12, 0x11, 0x40};
	struct wire_ipv6_params p = {.tclass = 0,
				     .flow = 0xbb752,
				     .payload_len = 18,
				     .next = WIRE_IPPROTO_UDP,
				     .hop_limit = 64};
	uint8_t out[40];

	memcpy(p.src, v6_lo, 16);
	memcpy(p.dst, v6_lo, 16);
	wire_ipv6_put(out, &p);
	ck_assert_mem_eq(out, lo, 8);
	ck_assert_mem_eq(out + 8, v6_lo, 16);
	ck_assert_mem_eq(out + 24, v6_lo, 16);
	/* The traffic class straddles bytes 0 and 1; the flow label has 20 bits. */
	p.tclass = 0xa5;
	p.flow = 0xfff12345;
	wire_ipv6_put(out, &p);
	ck_assert_uint_eq(out[0], 0x6a);
	ck_assert_uint_eq(out[1], 0x51);
	ck_assert_uint_eq(out[2], 0x23);
	ck_assert_uint_eq(out[3], 0x45);
	/* PROTOCOL.md 6's IPv6 vector. */
	memset(&p, 0, sizeof(p));
	p.payload_len = 32;
	p.next = WIRE_IPPROTO_UDP;
	p.hop_limit = 64;
	memcpy(p.src, vec_hello_v6 + VEC_ETH + 8, 16);
	memcpy(p.dst, vec_hello_v6 + VEC_ETH + 24, 16);
	wire_ipv6_put(out, &p);
	ck_assert_mem_eq(out, vec_hello_v6 + VEC_ETH, 40);
}
END_TEST

START_TEST(test_inet_udp_put)
{
	/* The UDP header of the IPv4 capture above: 47912 -> 47913, 13 bytes. */
	static const uint8_t want[8] = {0xbb, 0x28, 0xbb, 0x29, 0x00, 0x0d, 0xfe, 0x20};
	uint8_t out[8];

	wire_udp_put(out, 47912, 47913, 13, 0xfe20);
	ck_assert_mem_eq(out, want, 8);
	wire_udp_put(out, 49443, 4791, 32, 0x48aa);
	ck_assert_mem_eq(out, vec_hello_v6 + VEC_ETH + 40, 8);
}
END_TEST

/* wire_udp6_csum over the UDP datagram of udp (checksum field zeroed). */
static uint16_t udp6(const uint8_t *src, const uint8_t *dst, const uint8_t *udp, size_t len)
{
	uint8_t d[64];

	ck_assert_uint_le(len, sizeof(d));
	memcpy(d, udp, len);
	d[6] = d[7] = 0;
	return wire_udp6_csum(src, dst, d, len);
}

START_TEST(test_inet_udp6_csum)
{
	const uint8_t *h6 = vec_hello_v6 + VEC_ETH;
	uint8_t src[16] = {0xfd}, dst[16] = {0xfd}, udp[8 + 21];
	uint32_t sum;

	/* PROTOCOL.md 6's IPv6 vector carries 0x48aa; u6(fe80::1, fe80::2, udp) = 0x48aa. */
	ck_assert_uint_eq(udp6(h6 + 8, h6 + 24, h6 + 40, 32), 0x48aa);

	/* Odd length (padded): u6(fd00::1, fd00::2, 4791 -> 4791, len 29, bytes 1..21) = 0x66d3 */
	src[15] = 1;
	dst[15] = 2;
	memset(udp, 0, sizeof(udp));
	wire_udp_put(udp, 4791, 4791, sizeof(udp), 0);
	for (unsigned i = 0; i < 21; i++)
		udp[8 + i] = (uint8_t)(i + 1);
	ck_assert_uint_eq(wire_udp6_csum(src, dst, udp, sizeof(udp)), 0x66d3);
	/* With it filled in, the receiver's sum over pseudo-header and datagram is all ones. */
	udp[6] = 0x66;
	udp[7] = 0xd3;
	sum = wire_inet_sum(wire_inet_sum(0, src, 16), dst, 16);
	sum += (uint32_t)sizeof(udp) + WIRE_IPPROTO_UDP;
	ck_assert_uint_eq(wire_inet_fold(wire_inet_sum(sum, udp, sizeof(udp))), 0);

	/* The IPv6 capture above, "uroce wire" ::1 -> ::1: u6(::1, ::1, udp) = 0x55b1. (The
	 * captured field holds 0x0025, the pseudo-header sum lo's checksum offload leaves.) */
	{
		static const uint8_t d[18] = {0xbb, 0x28, 0xbb, 0x29, 0x00, 0x12, 0x00, 0x25, 'u',
					      'r',  'o',  'c',	'e',  ' ',  'w',  'i',	'r',  'e'};

		ck_assert_uint_eq(udp6(v6_lo, v6_lo, d, sizeof(d)), 0x55b1);
	}

	/* A datagram whose checksum computes to 0 is sent with 0xffff (RFC 768):
	 * payload da 6a makes u6(::1, ::1, 4791 -> 4791, len 10) = 0. */
	{
		static const uint8_t d[10] = {0x12, 0xb7, 0x12, 0xb7, 0x00, 0x0a, 0, 0, 0xda, 0x6a};

		ck_assert_uint_eq(udp6(v6_lo, v6_lo, d, sizeof(d)), 0xffff);
	}
}
END_TEST

Suite *inet_suite(void)
{
	Suite *s = suite_create("inet");
	TCase *tc = tcase_create("inet");

	tcase_add_test(tc, test_inet_rfc1071);
	tcase_add_test(tc, test_inet_odd_and_long);
	tcase_add_test(tc, test_inet_ipv4_put);
	tcase_add_test(tc, test_inet_ipv6_put);
	tcase_add_test(tc, test_inet_udp_put);
	tcase_add_test(tc, test_inet_udp6_csum);
	suite_add_tcase(s, tc);
	return s;
}
