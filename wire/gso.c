/* SPDX-License-Identifier: MIT */
/* Finding the packets of a whole UDP GSO datagram (wire/gso.h). */
#include <string.h>

#include <wire/bth.h>
#include <wire/bytes.h>
#include <wire/gso.h>
#include <wire/icrc.h>
#include <wire/inet.h>
#include <wire/opcode.h>
#include <wire/validate.h>

#define GSO_ICRC_BYTES 4u
#define GSO_MAX_IP_HDR 128u

/* A BTH that may start a packet of s bytes, with segment 0's P_Key. */
static int gso_bth_ok(const uint8_t *p, size_t s, uint16_t pkey)
{
	const struct wire_bth *b = (const struct wire_bth *)p;
	const struct wire_opcode_info *oi = wire_opcode_info(wire_bth_get_opcode(b));

	return oi && wire_bth_get_tver(b) == 0 && wire_bth_get_pkey(b) == pkey &&
	       (size_t)oi->hdr_bytes + GSO_ICRC_BYTES <= s;
}

/*
 * Is ib[0, s) a packet whose ICRC holds for the datagram's headers cut to s
 * bytes, as segment i (IPv4: the datagram's ID + i)?
 */
static int gso_icrc_ok(const uint8_t *ip, size_t ip_hdr_len, const uint8_t *udp, const uint8_t *ib,
		       size_t s, unsigned i)
{
	uint8_t h[GSO_MAX_IP_HDR], u[WIRE_UDP_BYTES];
	uint32_t st = wire_icrc_begin();

	memcpy(h, ip, ip_hdr_len);
	memcpy(u, udp, sizeof(u));
	wire_put_be16(u + 4, (uint16_t)(WIRE_UDP_BYTES + s));
	if ((ip[0] >> 4) == 4) {
		wire_put_be16(h + 2, (uint16_t)(ip_hdr_len + WIRE_UDP_BYTES + s));
		wire_put_be16(h + 4, (uint16_t)(wire_get_be16(ip + 4) + i));
		st = wire_icrc_add_ipv4(st, h, ip_hdr_len);
	} else {
		wire_put_be16(h + 4, (uint16_t)(ip_hdr_len - WIRE_IPV6_BYTES + WIRE_UDP_BYTES + s));
		st = wire_icrc_add_ipv6(st, h, ip_hdr_len);
	}
	st = wire_icrc_add_udp(st, u);
	st = wire_icrc_add_ib(st, 0, ib, s - GSO_ICRC_BYTES);
	return wire_icrc_end(st) == wire_icrc_get(ib + s - GSO_ICRC_BYTES);
}

/* What may end such a run shorter: a message's last packet, or a Middle
 * (after a First with a longer header) of exactly mtu bytes of payload. */
static int gso_tail_ok(const uint8_t *p, size_t s, size_t mtu)
{
	const struct wire_opcode_info *oi =
	    wire_opcode_info(wire_bth_get_opcode((const struct wire_bth *)p));

	return oi && ((oi->mask & WIRE_END_MASK) ||
		      ((oi->mask & WIRE_MIDDLE_MASK) && s == oi->hdr_bytes + mtu + GSO_ICRC_BYTES));
}

/* The opcode of the packet at ib when it is a First or Middle, else NULL. */
static const struct wire_opcode_info *gso_mtu_info(const uint8_t *ib)
{
	const struct wire_opcode_info *oi =
	    wire_opcode_info(wire_bth_get_opcode((const struct wire_bth *)ib));

	if (!oi || !(oi->mask & (WIRE_MIDDLE_MASK | WIRE_START_MASK)) || (oi->mask & WIRE_END_MASK))
		return NULL;
	return oi;
}

int wire_gso_mtu_sized(const uint8_t *ib)
{
	return gso_mtu_info(ib) != NULL;
}

/*
 * A First or Middle packet carries exactly a path MTU of payload (IBA
 * 9.7.3.1.2), so the size of a run that starts with one is its headers, one
 * of the five MTUs and the ICRC: for each, the pieces at s, 2s, ... start
 * with a BTH of the P_Key, the last piece (shorter) too and is a Last, an
 * Only or a Middle of that MTU (gso_tail_ok), and the first or second
 * packet ends in its ICRC. The size, or 0.
 */
static size_t gso_full_run(const uint8_t *ip, size_t ip_hdr_len, const uint8_t *udp,
			   const uint8_t *ib, size_t len, uint16_t pkey)
{
	const struct wire_opcode_info *oi = gso_mtu_info(ib);

	if (!oi)
		return 0;
	for (size_t mtu = WIRE_MIN_PMTU; mtu <= WIRE_MAX_PMTU; mtu *= 2) {
		size_t s = oi->hdr_bytes + mtu + GSO_ICRC_BYTES, off, rest = len % s;
		int ok = 1;

		/* Equal pieces were tried already; the last must be a packet. */
		if (s >= len || rest < WIRE_GSO_MIN_SEG || len / s + 1 > WIRE_GSO_MAX_SEGS)
			continue;
		for (off = s; ok && off < len; off += s)
			ok = gso_bth_ok(ib + off, len - off < s ? len - off : s, pkey);
		if (!ok || !gso_tail_ok(ib + len - rest, rest, mtu))
			continue;
		if (gso_icrc_ok(ip, ip_hdr_len, udp, ib, s, 0) ||
		    gso_icrc_ok(ip, ip_hdr_len, udp, ib + s, len - s < s ? len - s : s, 1))
			return s;
	}
	return 0;
}

size_t wire_gso_seg_size(const uint8_t *ip, size_t ip_hdr_len, const uint8_t *udp,
			 const uint8_t *ib, size_t len)
{
	unsigned v = ip[0] >> 4, most;
	uint16_t pkey;

	if ((v != 4 && v != 6) || ip_hdr_len > GSO_MAX_IP_HDR ||
	    ip_hdr_len < (v == 4 ? WIRE_IPV4_BYTES : WIRE_IPV6_BYTES) ||
	    len < 2 * WIRE_GSO_MIN_SEG || len > WIRE_GSO_MAX_BYTES)
		return 0;
	pkey = wire_bth_get_pkey((const struct wire_bth *)ib);
	/* n from most to fewest segments (s from smallest to largest), no more
	 * than pieces as short as the shortest packet. */
	most = len / WIRE_GSO_MIN_SEG < WIRE_GSO_MAX_SEGS ? (unsigned)(len / WIRE_GSO_MIN_SEG)
							  : WIRE_GSO_MAX_SEGS;
	for (unsigned n = most; n >= 2; n--) {
		size_t s = len / n;

		if (len % n)
			continue;
		/* One damaged packet of the two must not hide the others. */
		if (gso_bth_ok(ib, s, pkey) && gso_bth_ok(ib + s, s, pkey) &&
		    (gso_icrc_ok(ip, ip_hdr_len, udp, ib, s, 0) ||
		     gso_icrc_ok(ip, ip_hdr_len, udp, ib + s, s, 1)))
			return s;
	}
	/* Packets of a path MTU's payload (a First or Middle first), then a
	 * shorter last one: a message's last packet, or the next message's. */
	{
		size_t s = gso_full_run(ip, ip_hdr_len, udp, ib, len, pkey);

		if (s)
			return s;
	}
	/* A packet and, last and shorter, an ACK (a request with the ACK it
	 * carries back in a ping-pong). */
	{
		size_t s = len - WIRE_GSO_MIN_SEG;
		const uint8_t *ack = ib + s;

		/* (an Atomic Acknowledge does not fit WIRE_GSO_MIN_SEG bytes) */
		if (s > WIRE_GSO_MIN_SEG && gso_bth_ok(ib, s, pkey) &&
		    gso_bth_ok(ack, WIRE_GSO_MIN_SEG, pkey) &&
		    wire_opcode_info(wire_bth_get_opcode((const struct wire_bth *)ack))->mask &
			WIRE_ACK_MASK &&
		    (gso_icrc_ok(ip, ip_hdr_len, udp, ib, s, 0) ||
		     gso_icrc_ok(ip, ip_hdr_len, udp, ack, WIRE_GSO_MIN_SEG, 1)))
			return s;
	}
	return 0;
}
