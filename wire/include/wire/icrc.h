/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 invariant CRC (IBA 7.8.1, Annex A17.3.3; PROTOCOL.md section 6):
 * CRC-32 over 8 bytes of 0xFF (the masked LRH), the IP header with its
 * variant fields set to all ones (IPv4 TOS, TTL, header checksum; IPv6
 * traffic class, flow label, hop limit), the UDP header with the checksum set
 * to all ones, the BTH with byte 4 (FECN, BECN, resv6) set to all ones, and
 * everything after it up to the ICRC. The 32-bit result is stored on the wire
 * least-significant byte first.
 *
 * Three ways in: over a captured IP packet (wire_icrc_compute), over a
 * pseudo-header for a daemon that sends through a UDP socket and never holds
 * the IP header (wire_icrc_udp4/6: IPv4 ID 0 and DF, PROTOCOL.md section 12),
 * and an incremental form (begin, add pieces, end) for scattered buffers.
 * No input is modified; variant fields are masked in a small local copy.
 */
#ifndef WIRE_ICRC_H
#define WIRE_ICRC_H

#include <stddef.h>
#include <stdint.h>
#include <wire/bytes.h>
#include <wire/inet.h>

#define WIRE_ICRC_BYTES 4

/* Verdict of an ICRC check. */
enum wire_icrc_status {
	WIRE_ICRC_UNCHECKED = 0, /* not computed (frame too broken to tell) */
	WIRE_ICRC_OK,
	WIRE_ICRC_BAD,
};

/* "unchecked", "ok" or "bad". */
const char *wire_icrc_status_name(enum wire_icrc_status s);

/* Read / write the 4-byte ICRC trailer (least-significant byte first). */
static inline uint32_t wire_icrc_get(const uint8_t *trailer)
{
	return wire_get_le32(trailer);
}

static inline void wire_icrc_put(uint8_t *trailer, uint32_t icrc)
{
	wire_put_le32(trailer, icrc);
}

/*
 * Incremental form. A state is a raw CRC register.
 *   st = wire_icrc_begin();
 *   st = wire_icrc_add_ipv4(st, iph, ihl_bytes);  or  wire_icrc_add_ipv6(...)
 *   st = wire_icrc_add_udp(st, udph);
 *   st = wire_icrc_add_ib(st, 0, bth_and_more, n); st = wire_icrc_add_ib(st, n, rest, m); ...
 *   icrc = wire_icrc_end(st);
 */

/* The state after the 8 masked LRH bytes. */
uint32_t wire_icrc_begin(void);

/* Add an IPv4 header of hdr_len bytes (20..60, options included as sent). */
uint32_t wire_icrc_add_ipv4(uint32_t st, const uint8_t *iph, size_t hdr_len);

/*
 * Add an IPv6 header: the 40 fixed bytes (traffic class, flow label, hop
 * limit masked) and any extension headers after them, hdr_len bytes in all.
 */
uint32_t wire_icrc_add_ipv6(uint32_t st, const uint8_t *ip6h, size_t hdr_len);

/* Add the 8-byte UDP header (checksum masked). */
uint32_t wire_icrc_add_udp(uint32_t st, const uint8_t *udph);

/*
 * Add len bytes of the IB packet that start at byte ib_off of the IB packet
 * (BTH = offset 0). BTH byte 4 is masked if it falls inside the piece, so
 * pieces may be split anywhere. Do not add the ICRC trailer itself.
 */
uint32_t wire_icrc_add_ib(uint32_t st, size_t ib_off, const void *buf, size_t len);

/* The ICRC value of a finished state. */
uint32_t wire_icrc_end(uint32_t st);

/*
 * ICRC of a whole IP packet held in memory: ip points at the IPv4 or IPv6
 * header (version taken from the first nibble), ip_hdr_len is its length
 * (IPv4 IHL*4, IPv6 40 plus extension headers), the UDP header follows, and
 * len counts the bytes from the IP header up to but not including the ICRC.
 * Returns 0 and stores the ICRC in *icrc, or -EINVAL when the lengths cannot
 * hold IP + UDP + BTH or the version is neither 4 nor 6.
 */
int wire_icrc_compute(const uint8_t *ip, size_t ip_hdr_len, size_t len, uint32_t *icrc);

/*
 * State after the masked LRH, an IPv4 header that is not materialised and the
 * UDP header: addresses src/dst (4 bytes, network order), the given IP ID and
 * flags/fragment word (a uroce daemon uses 0 and WIRE_IPV4_DF), protocol UDP,
 * no options, and lengths derived from ib_len (BTH..pad, without ICRC):
 * IP total length = 20 + 8 + ib_len + 4, UDP length = 8 + ib_len + 4.
 * Continue with wire_icrc_add_ib() and wire_icrc_end().
 */
uint32_t wire_icrc_begin_udp4(const uint8_t src[4], const uint8_t dst[4], uint16_t ip_id,
			      uint16_t frag, uint16_t sport, uint16_t dport, size_t ib_len);

/* The IPv6 equivalent: payload length = 8 + ib_len + 4, next header UDP. */
uint32_t wire_icrc_begin_udp6(const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
			      uint16_t dport, size_t ib_len);

/*
 * One-shot ICRC of an IB packet (ib: BTH..pad, ib_len bytes, no ICRC) sent
 * through a UDP socket over IPv4 with ID 0 and DF, as the kernel sends it
 * from an unconnected socket with IP_PMTUDISC_DO (PROTOCOL.md section 12).
 */
uint32_t wire_icrc_udp4(const uint8_t src[4], const uint8_t dst[4], uint16_t sport, uint16_t dport,
			const void *ib, size_t ib_len);

/* One-shot ICRC over IPv6. */
uint32_t wire_icrc_udp6(const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
			uint16_t dport, const void *ib, size_t ib_len);

/*
 * Recover the IPv4 ID of a packet received through a UDP socket (which hides
 * the IP header): given everything else of the header (frag = flags and
 * fragment offset word, usually WIRE_IPV4_DF), find the one 16-bit ID for
 * which the ICRC of the packet equals `icrc`. The CRC is linear in the ID, so
 * this is a small solve, not a search. Returns 0 and stores the ID, or
 * -ENOENT when no ID matches (the packet is corrupt beyond the ID). Such a
 * check keeps only 16 bits of strength; callers should count it separately.
 */
int wire_icrc_solve_ipv4_id(const uint8_t src[4], const uint8_t dst[4], uint16_t frag,
			    uint16_t sport, uint16_t dport, const void *ib, size_t ib_len,
			    uint32_t icrc, uint16_t *ip_id);

/*
 * The ID solve in two halves, for receivers that solve often: the solver
 * depends only on ib_len (the CRC difference an ID makes does not depend on
 * the rest of the packet), so it can be kept per length. `delta` is the
 * received ICRC XOR the ICRC computed with ID 0 (same frag word).
 */
struct wire_icrc_id_solver {
	size_t ib_len;	   /* the length it was made for */
	uint32_t row[16];  /* reduced CRC differences, one pivot bit each */
	uint16_t comb[16]; /* the ID bits each row stands for */
	uint8_t pivot[16];
	uint8_t rank;
};

/*
 * What each IPv4 ID bit does to the ICRC of an IB packet (BTH..pad) of
 * ib_len bytes: basis[b] is the ICRC with ID bit b set XOR the ICRC with ID
 * 0 (everything else equal). The CRC is linear, so the ICRC for any ID is
 * the one for ID 0 XOR wire_icrc_id_delta(basis, id): a sender that knows
 * which ID the kernel will give a packet (the segments of one UDP GSO send
 * get consecutive IDs) adjusts a sealed packet without a second pass.
 */
void wire_icrc_id_basis(size_t ib_len, uint32_t basis[16]);

/* The ICRC difference that ID id makes against ID 0, from a basis. */
uint32_t wire_icrc_id_delta(const uint32_t basis[16], uint16_t id);

/* Prepare the solver for IB packets (BTH..pad) of ib_len bytes. */
void wire_icrc_id_solver_init(struct wire_icrc_id_solver *sv, size_t ib_len);

/* The one ID whose CRC difference is delta: 0 and *ip_id, or -ENOENT. */
int wire_icrc_id_solve(const struct wire_icrc_id_solver *sv, uint32_t delta, uint16_t *ip_id);

#endif /* WIRE_ICRC_H */
