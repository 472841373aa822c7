/* SPDX-License-Identifier: MIT */
/*
 * Tests of wire/icrc.h: PROTOCOL.md's worked vectors (IPv4 0xB7B89E2E, IPv6
 * 0xB7AE598E), variant fields masked and invariant ones covered, the
 * incremental form split anywhere, the pseudo-header forms against a
 * materialised header, and the IPv4 ID solve.
 */
#include <errno.h>
#include <string.h>
#include <wire/build.h>
#include <wire/bytes.h>
#include <wire/frame.h>
#include <wire/gso.h>
#include <wire/opcode.h>
#include <wire/crc32.h>
#include <wire/icrc.h>

#include "suites.h"
#include "vectors.h"

static uint32_t icrc_of(const uint8_t *frame, size_t len, size_t ip_hdr_len)
{
	uint32_t icrc = 0;

	ck_assert_int_eq(wire_icrc_compute(frame + VEC_ETH, ip_hdr_len, len - VEC_ETH - 4, &icrc),
			 0);
	return icrc;
}

START_TEST(test_icrc_vector_ipv4)
{
	ck_assert_uint_eq(icrc_of(vec_hello_v4, sizeof(vec_hello_v4), 20), VEC_HELLO_V4_ICRC);
	ck_assert_uint_eq(wire_icrc_get(vec_hello_v4 + sizeof(vec_hello_v4) - 4),
			  VEC_HELLO_V4_ICRC);
}
END_TEST

START_TEST(test_icrc_vector_ipv6)
{
	ck_assert_uint_eq(icrc_of(vec_hello_v6, sizeof(vec_hello_v6), 40), VEC_HELLO_V6_ICRC);
	ck_assert_uint_eq(wire_icrc_get(vec_hello_v6 + sizeof(vec_hello_v6) - 4),
			  VEC_HELLO_V6_ICRC);
}
END_TEST

START_TEST(test_icrc_trailer_byte_order)
{
	uint8_t t[4];

	wire_icrc_put(t, 0xB7B89E2Eu);
	ck_assert_uint_eq(t[0], 0x2e);
	ck_assert_uint_eq(t[1], 0x9e);
	ck_assert_uint_eq(t[2], 0xb8);
	ck_assert_uint_eq(t[3], 0xb7);
}
END_TEST

/* Which bytes of the IPv4 vector are variant (masked): TOS, TTL, IP csum, UDP csum, BTH[4]. */
static int v4_variant(size_t i)
{
	size_t ip = i - VEC_ETH;

	return ip == 1 || ip == 8 || ip == 10 || ip == 11 || ip == 26 || ip == 27 || ip == 32;
}

/* IPv6: traffic class + flow label (bits of bytes 0-3 except the version), hop limit. */
static int v6_variant_bits(size_t i, uint8_t *mask)
{
	size_t ip = i - VEC_ETH;

	*mask = 0xff;
	if (ip == 0) {
		*mask = 0x0f;
		return 1;
	}
	return ip == 1 || ip == 2 || ip == 3 || ip == 7 || ip == 46 || ip == 47 || ip == 52;
}

START_TEST(test_icrc_variant_and_invariant_ipv4)
{
	uint8_t f[sizeof(vec_hello_v4)];

	for (size_t i = VEC_ETH; i < sizeof(f) - 4; i++) {
		memcpy(f, vec_hello_v4, sizeof(f));
		f[i] ^= 0x5a;
		if (i == VEC_ETH)
			f[i] ^= 0x5a ^ 0x01; /* keep version 4 and IHL sane: flip only a bit */
		if (v4_variant(i))
			ck_assert_msg(icrc_of(f, sizeof(f), 20) == VEC_HELLO_V4_ICRC,
				      "byte %zu should be masked", i - VEC_ETH);
		else if (i != VEC_ETH)
			ck_assert_msg(icrc_of(f, sizeof(f), 20) != VEC_HELLO_V4_ICRC,
				      "byte %zu should be covered", i - VEC_ETH);
	}
}
END_TEST

START_TEST(test_icrc_variant_and_invariant_ipv6)
{
	uint8_t f[sizeof(vec_hello_v6)];

	for (size_t i = VEC_ETH; i < sizeof(f) - 4; i++) {
		uint8_t m;
		int variant = v6_variant_bits(i, &m);

		memcpy(f, vec_hello_v6, sizeof(f));
		f[i] ^= variant ? (uint8_t)(0xa5 & m) : 0xa5;
		if (variant)
			ck_assert_msg(icrc_of(f, sizeof(f), 40) == VEC_HELLO_V6_ICRC,
				      "byte %zu should be masked", i - VEC_ETH);
		else
			ck_assert_msg(icrc_of(f, sizeof(f), 40) != VEC_HELLO_V6_ICRC,
				      "byte %zu should be covered", i - VEC_ETH);
	}
	/* the version nibble is covered */
	memcpy(f, vec_hello_v6, sizeof(f));
	f[VEC_ETH] ^= 0x10;
	{
		uint32_t icrc;
		int ret = wire_icrc_compute(f + VEC_ETH, 40, sizeof(f) - VEC_ETH - 4, &icrc);

		/* version 7 is rejected outright */
		ck_assert_int_eq(ret, -EINVAL);
	}
}
END_TEST

/* Incremental: split the IB part at every position, including around BTH byte 4. */
START_TEST(test_icrc_incremental_split)
{
	const uint8_t *ip = vec_hello_v4 + VEC_ETH;
	const uint8_t *ib = ip + 28;
	size_t ib_len = sizeof(vec_hello_v4) - VEC_ETH - 28 - 4;

	for (size_t a = 0; a <= ib_len; a++) {
		for (size_t b = a; b <= ib_len; b++) {
			uint32_t st = wire_icrc_begin();

			st = wire_icrc_add_ipv4(st, ip, 20);
			st = wire_icrc_add_udp(st, ip + 20);
			st = wire_icrc_add_ib(st, 0, ib, a);
			st = wire_icrc_add_ib(st, a, ib + a, b - a);
			st = wire_icrc_add_ib(st, b, ib + b, ib_len - b);
			ck_assert_uint_eq(wire_icrc_end(st), VEC_HELLO_V4_ICRC);
		}
	}
}
END_TEST

/* Pseudo-header form == compute() over a real header with ID 0, DF, any TOS/TTL. */
START_TEST(test_icrc_pseudo_header_ipv4)
{
	uint8_t f[sizeof(vec_hello_v4)];
	const uint8_t *ib = vec_hello_v4 + VEC_ETH + 28;
	const size_t ib_len = 20;
	uint32_t st;

	memcpy(f, vec_hello_v4, sizeof(f));
	f[VEC_ETH + 4] = 0; /* ID 0 */
	f[VEC_ETH + 5] = 0;
	f[VEC_ETH + 1] = 0xb8; /* some DSCP: masked anyway */
	ck_assert_uint_eq(
	    wire_icrc_udp4(f + VEC_ETH + 12, f + VEC_ETH + 16, 0xc123, 4791, ib, ib_len),
	    icrc_of(f, sizeof(f), 20));
	/* with the real ID 0x1234 the vector's ICRC comes out */
	st = wire_icrc_begin_udp4(vec_hello_v4 + VEC_ETH + 12, vec_hello_v4 + VEC_ETH + 16, 0x1234,
				  WIRE_IPV4_DF, 0xc123, 4791, ib_len);
	ck_assert_uint_eq(wire_icrc_end(wire_icrc_add_ib(st, 0, ib, ib_len)), VEC_HELLO_V4_ICRC);
}
END_TEST

START_TEST(test_icrc_pseudo_header_ipv6)
{
	const uint8_t *ip = vec_hello_v6 + VEC_ETH;

	ck_assert_uint_eq(wire_icrc_udp6(ip + 8, ip + 24, 0xc123, 4791, ip + 48, 20),
			  VEC_HELLO_V6_ICRC);
}
END_TEST

/* The state after the pseudo header, for every ID, two lengths and both
 * fragment words, equals the one made from a real header field by field
 * (the remembered ID-0 state and the ID tables must agree with it), also
 * when the IDs come in an order that keeps hitting the remembered state. */
START_TEST(test_icrc_begin_udp4_every_id)
{
	static const size_t lens[2] = {20, 4096 + 12};
	static const uint16_t frags[2] = {0, WIRE_IPV4_DF};
	const uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {192, 168, 7, 200};

	for (int l = 0; l < 2; l++)
		for (int f = 0; f < 2; f++)
			for (uint32_t id = 0; id <= 0xffff; id++) {
				uint8_t ip[WIRE_IPV4_BYTES] = {0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17};
				uint8_t udp[WIRE_UDP_BYTES];
				uint32_t want;

				wire_put_be16(ip + 2, (uint16_t)(28 + lens[l] + 4));
				wire_put_be16(ip + 4, (uint16_t)id);
				wire_put_be16(ip + 6, frags[f]);
				memcpy(ip + 12, src, 4);
				memcpy(ip + 16, dst, 4);
				wire_put_be16(udp, 0xc001);
				wire_put_be16(udp + 2, 4791);
				wire_put_be16(udp + 4, (uint16_t)(8 + lens[l] + 4));
				wire_put_be16(udp + 6, 0);
				want = wire_icrc_add_udp(
				    wire_icrc_add_ipv4(wire_icrc_begin(), ip, sizeof(ip)), udp);
				ck_assert_uint_eq(wire_icrc_begin_udp4(src, dst, (uint16_t)id,
								       frags[f], 0xc001, 4791,
								       lens[l]),
						  want);
			}
}
END_TEST

/* The reference: the pseudo header written out and fed to the CRC field by field. */
static uint32_t begin4_ref(const uint8_t src[4], const uint8_t dst[4], uint16_t id, uint16_t frag,
			   uint16_t sport, uint16_t dport, size_t ib_len)
{
	uint8_t ip[WIRE_IPV4_BYTES] = {0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17};
	uint8_t udp[WIRE_UDP_BYTES];

	wire_put_be16(ip + 2, (uint16_t)(28 + ib_len + 4));
	wire_put_be16(ip + 4, id);
	wire_put_be16(ip + 6, frag);
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	wire_put_be16(udp, sport);
	wire_put_be16(udp + 2, dport);
	wire_put_be16(udp + 4, (uint16_t)(8 + ib_len + 4));
	wire_put_be16(udp + 6, 0);
	return wire_icrc_add_udp(wire_icrc_add_ipv4(wire_icrc_begin(), ip, sizeof(ip)), udp);
}

/*
 * Pseudo headers that differ in one field each, taken in turns (more of
 * them than the sender remembers, so remembered states are also evicted):
 * each one's state is its own, whether it was remembered or not.
 */
START_TEST(test_icrc_begin_udp4_memo)
{
	struct {
		uint8_t src[4], dst[4];
		uint16_t frag, sport, dport;
		size_t len;
	} h[] = {
	    {{10, 0, 0, 1}, {10, 0, 0, 2}, WIRE_IPV4_DF, 4791, 4791, 76},
	    {{10, 0, 0, 2}, {10, 0, 0, 1}, WIRE_IPV4_DF, 4791, 4791, 76},   /* swapped */
	    {{10, 0, 0, 1}, {10, 0, 0, 3}, WIRE_IPV4_DF, 4791, 4791, 76},   /* dst */
	    {{10, 0, 0, 1}, {10, 0, 0, 2}, 0, 4791, 4791, 76},		    /* frag */
	    {{10, 0, 0, 1}, {10, 0, 0, 2}, WIRE_IPV4_DF, 0xc001, 4791, 76}, /* sport */
	    {{10, 0, 0, 1}, {10, 0, 0, 2}, WIRE_IPV4_DF, 4791, 0xc001, 76}, /* dport */
	    {{10, 0, 0, 1}, {10, 0, 0, 2}, WIRE_IPV4_DF, 4791, 4791, 16},   /* length */
	    {{10, 0, 0, 1}, {10, 0, 0, 2}, WIRE_IPV4_DF, 4791, 4791, 4108},
	};
	const unsigned n = sizeof(h) / sizeof(h[0]);

	for (unsigned round = 0; round < 3 * n; round++) {
		/* Two at a time (remembered) and all in turn (evicted). */
		unsigned i = round < n ? round % 2 : round % n;
		uint16_t id = (uint16_t)(round * 977u);

		ck_assert_uint_eq(wire_icrc_begin_udp4(h[i].src, h[i].dst, id, h[i].frag,
						       h[i].sport, h[i].dport, h[i].len),
				  begin4_ref(h[i].src, h[i].dst, id, h[i].frag, h[i].sport,
					     h[i].dport, h[i].len));
	}
}
END_TEST

/*
 * wire_icrc_add_ib against a masked copy through the bytewise CRC, for every
 * packet length up to 200 bytes and pieces that start before, at and after
 * the masked BTH byte (the CRC engines take the pieces around it, their
 * tails included).
 */
START_TEST(test_icrc_add_ib_lengths)
{
	uint8_t pkt[200], masked[200];

	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)(i * 37 + 11);
	memcpy(masked, pkt, sizeof(pkt));
	masked[4] = 0xff;
	for (size_t off = 0; off <= 6; off += 3)
		for (size_t len = 0; off + len <= sizeof(pkt); len++) {
			uint32_t st = 0x12345678u ^ (uint32_t)len;

			ck_assert_msg(wire_icrc_add_ib(st, off, pkt + off, len) ==
					  wire_crc32_update_bytewise(st, masked + off, len),
				      "ib_off %zu len %zu", off, len);
		}
}
END_TEST

START_TEST(test_icrc_solve_id)
{
	const uint8_t *ip = vec_hello_v4 + VEC_ETH;
	uint8_t ib[20];
	uint16_t id = 0;

	ck_assert_int_eq(wire_icrc_solve_ipv4_id(ip + 12, ip + 16, WIRE_IPV4_DF, 0xc123, 4791,
						 ip + 28, 20, VEC_HELLO_V4_ICRC, &id),
			 0);
	ck_assert_uint_eq(id, 0x1234);
	/* every ID from a sweep comes back */
	for (uint32_t want = 0; want < 0x10000; want += 0x0fed) {
		uint32_t st = wire_icrc_begin_udp4(ip + 12, ip + 16, (uint16_t)want, WIRE_IPV4_DF,
						   0xc123, 4791, 20);
		uint32_t icrc = wire_icrc_end(wire_icrc_add_ib(st, 0, ip + 28, 20));

		ck_assert_int_eq(wire_icrc_solve_ipv4_id(ip + 12, ip + 16, WIRE_IPV4_DF, 0xc123,
							 4791, ip + 28, 20, icrc, &id),
				 0);
		ck_assert_uint_eq(id, want);
	}
	/* a corrupted payload has no matching ID */
	memcpy(ib, ip + 28, sizeof(ib));
	ib[13] ^= 0x01;
	ck_assert_int_eq(wire_icrc_solve_ipv4_id(ip + 12, ip + 16, WIRE_IPV4_DF, 0xc123, 4791, ib,
						 20, VEC_HELLO_V4_ICRC, &id),
			 -ENOENT);
}
END_TEST

START_TEST(test_icrc_id_delta)
{
	/* a 4 KiB-MTU packet: the ICRC for any ID is ID 0's XOR the delta */
	static uint8_t ib[4108];
	const uint8_t src[4] = {127, 0, 0, 2}, dst[4] = {127, 0, 0, 1};
	uint32_t basis[16], icrc0;

	for (size_t i = 0; i < sizeof(ib); i++)
		ib[i] = (uint8_t)(i * 7 + 3);
	wire_icrc_id_basis(sizeof(ib), basis);
	icrc0 = wire_icrc_end(wire_icrc_add_ib(
	    wire_icrc_begin_udp4(src, dst, 0, WIRE_IPV4_DF, 4791, 4791, sizeof(ib)), 0, ib,
	    sizeof(ib)));
	ck_assert_uint_eq(wire_icrc_id_delta(basis, 0), 0);
	for (uint32_t id = 1; id < 0x10000; id += id < 64 ? 1 : 0x0fed) {
		uint32_t want = wire_icrc_end(
		    wire_icrc_add_ib(wire_icrc_begin_udp4(src, dst, (uint16_t)id, WIRE_IPV4_DF,
							  4791, 4791, sizeof(ib)),
				     0, ib, sizeof(ib)));

		ck_assert_uint_eq(icrc0 ^ wire_icrc_id_delta(basis, (uint16_t)id), want);
	}
}
END_TEST

/* ib (n bytes, built by wire_build_ib) as the IPv4 datagram of segment id
 * of a GSO send, into ip; the packet's length. */
static size_t gso_frame(uint8_t *ip, size_t size, const uint8_t *ib, int n, uint16_t id)
{
	struct wire_frame_params p = {.ip_version = 4,
				      .src = {127, 0, 0, 2},
				      .dst = {127, 0, 0, 1},
				      .sport = 4791,
				      .fill_icrc = 1,
				      .ip_hdr_known = 1,
				      .ip_id = id,
				      .ip_frag = WIRE_IPV4_DF};

	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wire_frame_build_ip(ip, size, &p, ib, (size_t)n), 28 + n);
	return (size_t)n;
}

/*
 * One IPv4 RoCEv2 packet of b over 127.0.0.2 -> 127.0.0.1 with IP ID id and
 * its ICRC, as a GSO send's segment gets it: ip (20 + 8 + ib bytes) holds
 * the IP and UDP headers and the packet; returns the packet's length.
 */
static size_t gso_seg(uint8_t *ip, size_t size, const struct wire_build *b, const char *pay,
		      uint16_t id)
{
	uint8_t ib[128];

	return gso_frame(ip, size, ib, wire_build_ib(ib, sizeof(ib), b, pay, pay ? strlen(pay) : 0),
			 id);
}

/* The datagram a GSO send of the two makes: a's headers (ID 0), then both. */
static size_t gso_join(uint8_t *d, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	memcpy(d, a, 28 + alen);
	memcpy(d + 28 + alen, b + 28, blen);
	wire_put_be16(d + 2, (uint16_t)(28 + alen + blen));
	wire_put_be16(d + 24, (uint16_t)(8 + alen + blen));
	return alen + blen;
}

START_TEST(test_icrc_gso_request_and_ack)
{
	struct wire_build w = {.opcode = WIRE_OP_RC_RDMA_WRITE_ONLY,
			       .ackreq = 1,
			       .pkey = 0xffff,
			       .destqp = 0x12,
			       .psn = 5,
			       .va = 0x1000,
			       .rkey = 0x77,
			       .dmalen = 2};
	struct wire_build a = {
	    .opcode = WIRE_OP_RC_ACKNOWLEDGE, .pkey = 0xffff, .destqp = 0x34, .psn = 9, .msn = 3};
	uint8_t sw[128], sa[128], sa0[128], d[256];
	size_t lw = gso_seg(sw, sizeof(sw), &w, "hi", 0), la = gso_seg(sa, sizeof(sa), &a, NULL, 1);
	size_t n;

	ck_assert_uint_eq(lw, 36);
	ck_assert_uint_eq(la, WIRE_GSO_MIN_SEG);
	/* a WRITE Only and, last and shorter, an ACK: cut after the WRITE */
	n = gso_join(d, sw, lw, sa, la);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), lw);
	/* one damaged ICRC of the two still finds the cut */
	d[28 + lw - 1] ^= 1;
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), lw);
	d[28 + n - 1] ^= 1;
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);
	/* the ACK sealed for ID 0, not 1: not the second segment of a send */
	gso_seg(sa0, sizeof(sa0), &a, NULL, 0);
	n = gso_join(d, sw, lw, sa0, la);
	d[28 + lw - 1] ^= 1;
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);
	/* the last piece must be an ACK of the same P_Key */
	a.pkey = 0x8001;
	gso_seg(sa, sizeof(sa), &a, NULL, 1);
	n = gso_join(d, sw, lw, sa, la);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);
	/* two ACKs of one size: cut in the middle, as before */
	a.pkey = 0xffff;
	gso_seg(sa0, sizeof(sa0), &a, NULL, 0);
	gso_seg(sa, sizeof(sa), &a, NULL, 1);
	n = gso_join(d, sa0, la, sa, la);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), la);
}
END_TEST

/* The same with paylen bytes of payload (a fixed pattern). */
static size_t gso_seg_pay(uint8_t *ip, size_t size, const struct wire_build *b, size_t paylen,
			  uint16_t id)
{
	uint8_t ib[512], pay[300];

	ck_assert_uint_le(paylen, sizeof(pay));
	for (size_t i = 0; i < paylen; i++)
		pay[i] = (uint8_t)(i * 7 + 1);
	return gso_frame(ip, size, ib, wire_build_ib(ib, sizeof(ib), b, pay, paylen), id);
}

/*
 * Packets of a First's or Middle's size (a path MTU of payload, here 256)
 * and a shorter last one: the cut is at the first packet's size, found
 * from its opcode and the MTUs.
 */
START_TEST(test_icrc_gso_shorter_last)
{
	struct wire_build f = {.opcode = WIRE_OP_RC_RDMA_WRITE_FIRST,
			       .pkey = 0xffff,
			       .destqp = 0x12,
			       .psn = 5,
			       .va = 0x1000,
			       .rkey = 0x77,
			       .dmalen = 356};
	struct wire_build l = {.opcode = WIRE_OP_RC_RDMA_WRITE_LAST,
			       .ackreq = 1,
			       .pkey = 0xffff,
			       .destqp = 0x12,
			       .psn = 6};
	struct wire_build sf = {.opcode = WIRE_OP_RC_SEND_FIRST, .pkey = 0xffff, .destqp = 0x12};
	struct wire_build sm = {.opcode = WIRE_OP_RC_SEND_MIDDLE, .pkey = 0xffff, .destqp = 0x12};
	struct wire_build sl = {.opcode = WIRE_OP_RC_SEND_LAST, .pkey = 0xffff, .destqp = 0x12};
	struct wire_build o = {.opcode = WIRE_OP_RC_SEND_ONLY, .pkey = 0xffff, .destqp = 0x12};
	uint8_t a[600], b[600], c[600], d[1200], e[1200];
	size_t la = gso_seg_pay(a, sizeof(a), &f, 256, 0),
	       lb = gso_seg_pay(b, sizeof(b), &l, 100, 1);
	size_t n, m, lc;

	/* a WRITE First (RETH: 12 + 16 + 256 + 4 bytes) and its shorter Last */
	ck_assert_uint_eq(la, 288);
	n = gso_join(d, a, la, b, lb);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), la);
	/* one damaged ICRC of the two still finds it, both do not */
	d[28 + la - 1] ^= 1;
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), la);
	d[28 + n - 1] ^= 1;
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);
	d[28 + la - 1] ^= 1;
	d[28 + n - 1] ^= 1;
	/* the Last of another P_Key: not one send */
	l.pkey = 0x8001;
	gso_seg_pay(b, sizeof(b), &l, 100, 1);
	n = gso_join(d, a, la, b, lb);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);

	/* SEND First, Middle (12 + 256 + 4) and a Last of 60 bytes: IDs 0, 1, 2 */
	la = gso_seg_pay(a, sizeof(a), &sf, 256, 0);
	lb = gso_seg_pay(b, sizeof(b), &sm, 256, 1);
	lc = gso_seg_pay(c, sizeof(c), &sl, 60, 2);
	ck_assert_uint_eq(la, 272);
	n = gso_join(d, a, la, b, lb);
	m = gso_join(e, d, n, c, lc);
	ck_assert_uint_eq(wire_gso_seg_size(e, 20, e + 20, e + 28, m), la);
	/* a Middle first (a run that a WRITE's First did not join) */
	la = gso_seg_pay(a, sizeof(a), &sm, 256, 0);
	lb = gso_seg_pay(b, sizeof(b), &sl, 60, 1);
	n = gso_join(d, a, la, b, lb);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), la);

	/* a Middle shorter than the MTU cannot end it: no packet */
	lb = gso_seg_pay(b, sizeof(b), &sm, 60, 1);
	n = gso_join(d, a, la, b, lb);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);

	/* an Only of 256 bytes is no MTU-sized packet: its size says nothing */
	la = gso_seg_pay(a, sizeof(a), &o, 256, 0);
	lb = gso_seg_pay(b, sizeof(b), &o, 60, 1);
	n = gso_join(d, a, la, b, lb);
	ck_assert_uint_eq(wire_gso_seg_size(d, 20, d + 20, d + 28, n), 0);
}
END_TEST

START_TEST(test_icrc_compute_rejects)
{
	uint32_t icrc;

	ck_assert_int_eq(wire_icrc_compute(vec_hello_v4 + VEC_ETH, 20, 20 + 8 + 11, &icrc),
			 -EINVAL);
	ck_assert_int_eq(wire_icrc_compute(vec_hello_v4 + VEC_ETH, 16, 48, &icrc), -EINVAL);
	ck_assert_int_eq(wire_icrc_compute(vec_hello_v4 + VEC_ETH, 64, 100, &icrc), -EINVAL);
	ck_assert_int_eq(wire_icrc_compute(NULL, 20, 48, &icrc), -EINVAL);
	ck_assert_str_eq(wire_icrc_status_name(WIRE_ICRC_OK), "ok");
	ck_assert_str_eq(wire_icrc_status_name(WIRE_ICRC_BAD), "bad");
	ck_assert_str_eq(wire_icrc_status_name(WIRE_ICRC_UNCHECKED), "unchecked");
}
END_TEST

Suite *icrc_suite(void)
{
	Suite *s = suite_create("icrc");
	TCase *tc = tcase_create("icrc");

	tcase_add_test(tc, test_icrc_vector_ipv4);
	tcase_add_test(tc, test_icrc_vector_ipv6);
	tcase_add_test(tc, test_icrc_trailer_byte_order);
	tcase_add_test(tc, test_icrc_variant_and_invariant_ipv4);
	tcase_add_test(tc, test_icrc_variant_and_invariant_ipv6);
	tcase_add_test(tc, test_icrc_incremental_split);
	tcase_add_test(tc, test_icrc_pseudo_header_ipv4);
	tcase_add_test(tc, test_icrc_pseudo_header_ipv6);
	tcase_add_test(tc, test_icrc_begin_udp4_every_id);
	tcase_add_test(tc, test_icrc_begin_udp4_memo);
	tcase_add_test(tc, test_icrc_add_ib_lengths);
	tcase_add_test(tc, test_icrc_solve_id);
	tcase_add_test(tc, test_icrc_id_delta);
	tcase_add_test(tc, test_icrc_gso_request_and_ack);
	tcase_add_test(tc, test_icrc_gso_shorter_last);
	tcase_add_test(tc, test_icrc_compute_rejects);
	suite_add_tcase(s, tc);
	return s;
}
