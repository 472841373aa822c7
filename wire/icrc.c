/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 ICRC (PROTOCOL.md section 6): variant fields are masked in small
 * stack copies of the IP, UDP and BTH headers, everything else is fed to the
 * CRC straight from the caller's buffers. Also the pseudo-header forms for a
 * sender behind a UDP socket (section 12) and the IPv4 ID solve for a
 * receiver behind one.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <wire/bth.h>
#include <wire/crc32.h>
#include <wire/frame.h>
#include <wire/icrc.h>
#include <wire/inet.h>

/*
 * IBA 7.8.1 / A17.3.3: the LRH of a RoCEv2 packet counts as 8 bytes of ones.
 * This is the CRC register after them (PROTOCOL.md 6: rxe's seed 0xDEBB20E3).
 */
#define WIRE_ICRC_LRH_STATE 0xdebb20e3u

/* Offset of BTH byte 4 (FECN, BECN, resv6), masked in the ICRC. */
#define WIRE_BTH_RESV8A_OFF 4

const char *wire_icrc_status_name(enum wire_icrc_status s)
{
	switch (s) {
	case WIRE_ICRC_OK:
		return "ok";
	case WIRE_ICRC_BAD:
		return "bad";
	case WIRE_ICRC_UNCHECKED:
	default:
		return "unchecked";
	}
}

/*
 * Masked copies. Each writes n bytes of src to dst with the variant fields
 * that fall inside the first n bytes set to all ones.
 */
static void wire_icrc_mask_ipv4(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
	if (n > 1)
		dst[1] = 0xff; /* TOS (DSCP + ECN) */
	if (n > 8)
		dst[8] = 0xff; /* TTL */
	if (n > 10)
		dst[10] = 0xff; /* header checksum */
	if (n > 11)
		dst[11] = 0xff;
}

static void wire_icrc_mask_ipv6(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
	/* Version stays; traffic class and flow label become all ones. */
	if (n > 0)
		dst[0] |= 0x0f;
	for (size_t i = 1; i < 4 && i < n; i++)
		dst[i] = 0xff;
	if (n > 7)
		dst[7] = 0xff; /* hop limit */
}

static void wire_icrc_mask_udp(uint8_t *dst, const uint8_t *src)
{
	memcpy(dst, src, WIRE_UDP_BYTES);
	dst[6] = 0xff; /* checksum */
	dst[7] = 0xff;
}

uint32_t wire_icrc_begin(void)
{
	return WIRE_ICRC_LRH_STATE;
}

uint32_t wire_icrc_add_ipv4(uint32_t st, const uint8_t *iph, size_t hdr_len)
{
	uint8_t fixed[WIRE_IPV4_BYTES];
	size_t n = hdr_len < WIRE_IPV4_BYTES ? hdr_len : WIRE_IPV4_BYTES;

	wire_icrc_mask_ipv4(fixed, iph, n);
	st = wire_crc32_update(st, fixed, n);
	/* Options are invariant and included as sent. */
	return wire_crc32_update(st, iph + n, hdr_len - n);
}

uint32_t wire_icrc_add_ipv6(uint32_t st, const uint8_t *ip6h, size_t hdr_len)
{
	uint8_t fixed[WIRE_IPV6_BYTES];
	size_t n = hdr_len < WIRE_IPV6_BYTES ? hdr_len : WIRE_IPV6_BYTES;

	wire_icrc_mask_ipv6(fixed, ip6h, n);
	st = wire_crc32_update(st, fixed, n);
	return wire_crc32_update(st, ip6h + n, hdr_len - n);
}

uint32_t wire_icrc_add_udp(uint32_t st, const uint8_t *udph)
{
	uint8_t u[WIRE_UDP_BYTES];

	wire_icrc_mask_udp(u, udph);
	return wire_crc32_update(st, u, sizeof(u));
}

uint32_t wire_icrc_add_ib(uint32_t st, size_t ib_off, const void *buf, size_t len)
{
	static const uint8_t ones = 0xff;
	const uint8_t *p = buf;

	if (ib_off <= WIRE_BTH_RESV8A_OFF && WIRE_BTH_RESV8A_OFF < ib_off + len) {
		size_t before = WIRE_BTH_RESV8A_OFF - ib_off;

		st = wire_crc32_update(st, p, before);
		st = wire_crc32_update(st, &ones, 1);
		p += before + 1;
		len -= before + 1;
	}
	return wire_crc32_update(st, p, len);
}

uint32_t wire_icrc_end(uint32_t st)
{
	return ~st;
}

/*
 * The common case in one block: IP header (up to 60 bytes), UDP and BTH are
 * masked into one stack buffer so the CRC runs over two pieces, the header
 * block and the rest of the packet, instead of half a dozen small ones.
 */
#define WIRE_ICRC_BLOCK_IP_MAX 60

static uint32_t wire_icrc_blocks(uint32_t st, const uint8_t *hdr_block, size_t hdr_len,
				 const uint8_t *ib, size_t ib_len)
{
	uint8_t blk[WIRE_ICRC_BLOCK_IP_MAX + WIRE_UDP_BYTES + WIRE_BTH_BYTES];
	size_t bth = ib_len < WIRE_BTH_BYTES ? ib_len : WIRE_BTH_BYTES;

	/* hdr_block: already masked IP + UDP, hdr_len bytes */
	memcpy(blk, hdr_block, hdr_len);
	memcpy(blk + hdr_len, ib, bth);
	if (bth > WIRE_BTH_RESV8A_OFF)
		blk[hdr_len + WIRE_BTH_RESV8A_OFF] = 0xff;
	st = wire_crc32_update(st, blk, hdr_len + bth);
	return wire_crc32_update(st, ib + bth, ib_len - bth);
}

int wire_icrc_compute(const uint8_t *ip, size_t ip_hdr_len, size_t len, uint32_t *icrc)
{
	uint8_t hdr[WIRE_ICRC_BLOCK_IP_MAX + WIRE_UDP_BYTES];
	unsigned version;
	const uint8_t *ib;
	size_t ib_len;

	if (!ip || len < ip_hdr_len || len - ip_hdr_len < WIRE_UDP_BYTES + WIRE_BTH_BYTES)
		return -EINVAL;
	version = ip[0] >> 4;
	ib = ip + ip_hdr_len + WIRE_UDP_BYTES;
	ib_len = len - ip_hdr_len - WIRE_UDP_BYTES;
	if (version == 4 && ip_hdr_len >= WIRE_IPV4_BYTES && ip_hdr_len <= 60) {
		wire_icrc_mask_ipv4(hdr, ip, ip_hdr_len);
	} else if (version == 6 && ip_hdr_len == WIRE_IPV6_BYTES) {
		wire_icrc_mask_ipv6(hdr, ip, ip_hdr_len);
	} else if (version == 6 && ip_hdr_len > WIRE_IPV6_BYTES) {
		/* extension headers: piece by piece */
		uint32_t st = wire_icrc_add_ipv6(wire_icrc_begin(), ip, ip_hdr_len);

		st = wire_icrc_add_udp(st, ip + ip_hdr_len);
		*icrc = wire_icrc_end(wire_icrc_add_ib(st, 0, ib, ib_len));
		return 0;
	} else {
		return -EINVAL;
	}
	wire_icrc_mask_udp(hdr + ip_hdr_len, ip + ip_hdr_len);
	*icrc = wire_icrc_end(
	    wire_icrc_blocks(WIRE_ICRC_LRH_STATE, hdr, ip_hdr_len + WIRE_UDP_BYTES, ib, ib_len));
	return 0;
}

/* Masked IPv4 + UDP headers of a RoCEv2 packet with ib_len bytes before the ICRC. */
static void wire_icrc_pseudo4(uint8_t h[WIRE_IPV4_BYTES + WIRE_UDP_BYTES], const uint8_t src[4],
			      const uint8_t dst[4], uint16_t ip_id, uint16_t frag, uint16_t sport,
			      uint16_t dport, size_t ib_len)
{
	struct wire_ipv4_params ip = {
	    .tos = 0xff, /* masked */
	    .total_len = (uint16_t)(WIRE_IPV4_BYTES + WIRE_UDP_BYTES + ib_len + WIRE_ICRC_BYTES),
	    .id = ip_id,
	    .frag = frag,
	    .ttl = 0xff, /* masked */
	    .proto = WIRE_IPPROTO_UDP,
	};

	memcpy(ip.src, src, 4);
	memcpy(ip.dst, dst, 4);
	wire_ipv4_put(h, &ip);
	wire_put_be16(h + 10, 0xffff); /* header checksum, masked */
	wire_udp_put(h + WIRE_IPV4_BYTES, sport, dport,
		     (uint16_t)(WIRE_UDP_BYTES + ib_len + WIRE_ICRC_BYTES), 0xffff /* masked */);
}

static void wire_icrc_pseudo6(uint8_t h[WIRE_IPV6_BYTES + WIRE_UDP_BYTES], const uint8_t src[16],
			      const uint8_t dst[16], uint16_t sport, uint16_t dport, size_t ib_len)
{
	uint16_t udp_len = (uint16_t)(WIRE_UDP_BYTES + ib_len + WIRE_ICRC_BYTES);
	/* Traffic class, flow label and hop limit masked. */
	struct wire_ipv6_params ip = {.tclass = 0xff,
				      .flow = 0xfffff,
				      .payload_len = udp_len,
				      .next = WIRE_IPPROTO_UDP,
				      .hop_limit = 0xff};

	memcpy(ip.src, src, 16);
	memcpy(ip.dst, dst, 16);
	wire_ipv6_put(h, &ip);
	wire_udp_put(h + WIRE_IPV6_BYTES, sport, dport, udp_len, 0xffff /* masked */);
}

/*
 * The state after the pseudo header depends only on its fields, and a
 * stream repeats them packet after packet (one path each way, MTU-sized
 * packets) except the IPv4 ID, which differs in every packet. The CRC is
 * linear in its input, so the state for ID i is the state for ID 0 XOR
 * what i's bits do (id_hi[i >> 8] ^ id_lo[i & 0xff], the same for every
 * pseudo header): the states for ID 0 of the last few headers are
 * remembered, per thread, so that a packet costs only the CRC over its own
 * bytes and two table loads.
 */
#define ICRC_BEGIN4_MEMO 4

/* A pseudo header without its ID, as two words built in registers (a key
 * assembled in memory and compared with memcmp stalls on the store
 * forwarding of its piecewise writes). */
struct icrc_begin4_key {
	uint64_t addrs; /* src, dst */
	uint64_t rest;	/* frag, sport, dport */
	uint32_t ib_len;
};

static __thread struct {
	struct icrc_begin4_key key[ICRC_BEGIN4_MEMO];
	uint32_t state[ICRC_BEGIN4_MEMO];
	bool used[ICRC_BEGIN4_MEMO];
	unsigned next;
	bool id_ready;
	uint32_t id_hi[256], id_lo[256];
} icrc_begin4_memo;

static uint32_t begin4_direct(const uint8_t src[4], const uint8_t dst[4], uint16_t ip_id,
			      uint16_t frag, uint16_t sport, uint16_t dport, size_t ib_len)
{
	uint8_t h[WIRE_IPV4_BYTES + WIRE_UDP_BYTES];

	wire_icrc_pseudo4(h, src, dst, ip_id, frag, sport, dport, ib_len);
	return wire_crc32_update(WIRE_ICRC_LRH_STATE, h, sizeof(h));
}

/* What each ID byte value does to the state: the ID basis of a packet with
 * nothing after the pseudo header (wire_icrc_id_basis, defined below). */
static void begin4_id_tables(void)
{
	uint32_t basis[16];

	wire_icrc_id_basis(0, basis);
	for (unsigned v = 0; v < 256; v++) {
		icrc_begin4_memo.id_lo[v] = wire_icrc_id_delta(basis, (uint16_t)v);
		icrc_begin4_memo.id_hi[v] = wire_icrc_id_delta(basis, (uint16_t)(v << 8));
	}
	icrc_begin4_memo.id_ready = true;
}

uint32_t wire_icrc_begin_udp4(const uint8_t src[4], const uint8_t dst[4], uint16_t ip_id,
			      uint16_t frag, uint16_t sport, uint16_t dport, size_t ib_len)
{
	struct icrc_begin4_key k;
	uint32_t a, b;
	uint32_t st;
	unsigned i;

	if (ib_len > UINT32_MAX) /* no packet: not remembered */
		return begin4_direct(src, dst, ip_id, frag, sport, dport, ib_len);
	if (!icrc_begin4_memo.id_ready)
		begin4_id_tables();
	memcpy(&a, src, 4);
	memcpy(&b, dst, 4);
	k.addrs = (uint64_t)a | (uint64_t)b << 32;
	k.rest = (uint64_t)frag | (uint64_t)sport << 16 | (uint64_t)dport << 32;
	k.ib_len = (uint32_t)ib_len;
	for (i = 0; i < ICRC_BEGIN4_MEMO; i++)
		if (icrc_begin4_memo.used[i] && icrc_begin4_memo.key[i].addrs == k.addrs &&
		    icrc_begin4_memo.key[i].rest == k.rest &&
		    icrc_begin4_memo.key[i].ib_len == k.ib_len)
			break;
	if (i < ICRC_BEGIN4_MEMO) {
		st = icrc_begin4_memo.state[i];
	} else {
		st = begin4_direct(src, dst, 0, frag, sport, dport, ib_len);
		i = icrc_begin4_memo.next++ % ICRC_BEGIN4_MEMO;
		icrc_begin4_memo.key[i] = k;
		icrc_begin4_memo.state[i] = st;
		icrc_begin4_memo.used[i] = true;
	}
	return st ^ icrc_begin4_memo.id_hi[ip_id >> 8] ^ icrc_begin4_memo.id_lo[ip_id & 0xff];
}

uint32_t wire_icrc_begin_udp6(const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
			      uint16_t dport, size_t ib_len)
{
	uint8_t h[WIRE_IPV6_BYTES + WIRE_UDP_BYTES];

	wire_icrc_pseudo6(h, src, dst, sport, dport, ib_len);
	return wire_crc32_update(WIRE_ICRC_LRH_STATE, h, sizeof(h));
}

uint32_t wire_icrc_udp4(const uint8_t src[4], const uint8_t dst[4], uint16_t sport, uint16_t dport,
			const void *ib, size_t ib_len)
{
	uint8_t h[WIRE_IPV4_BYTES + WIRE_UDP_BYTES];

	wire_icrc_pseudo4(h, src, dst, 0, WIRE_IPV4_DF, sport, dport, ib_len);
	return wire_icrc_end(wire_icrc_blocks(WIRE_ICRC_LRH_STATE, h, sizeof(h), ib, ib_len));
}

uint32_t wire_icrc_udp6(const uint8_t src[16], const uint8_t dst[16], uint16_t sport,
			uint16_t dport, const void *ib, size_t ib_len)
{
	uint8_t h[WIRE_IPV6_BYTES + WIRE_UDP_BYTES];

	wire_icrc_pseudo6(h, src, dst, sport, dport, ib_len);
	return wire_icrc_end(wire_icrc_blocks(WIRE_ICRC_LRH_STATE, h, sizeof(h), ib, ib_len));
}

/*
 * GF(2) linear algebra for the ID solve. Advancing the CRC register over n
 * zero bytes is a linear map M^n; a change d of the register at some point
 * changes the final register by M^n d. Matrices are 32 columns of 32 bits
 * (column i = image of bit i), as in zlib's crc32_combine.
 */
static uint32_t wire_gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (int i = 0; vec; i++, vec >>= 1)
		if (vec & 1)
			sum ^= mat[i];
	return sum;
}

static void wire_gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int i = 0; i < 32; i++)
		sq[i] = wire_gf2_times(mat, mat[i]);
}

/* Apply the "feed nbytes zero bytes" map (no init/final XOR) to each of n vectors. */
static void wire_crc32_shift(uint32_t *vec, int n, size_t nbytes)
{
	uint32_t odd[32], even[32];

	odd[0] = 0xedb88320u; /* one zero bit */
	for (int i = 1; i < 32; i++)
		odd[i] = 1u << (i - 1);
	wire_gf2_square(even, odd); /* 2 bits */
	wire_gf2_square(odd, even); /* 4 bits; each squaring below doubles */
	while (nbytes) {
		wire_gf2_square(even, odd);
		if (nbytes & 1)
			for (int i = 0; i < n; i++)
				vec[i] = wire_gf2_times(even, vec[i]);
		nbytes >>= 1;
		if (!nbytes)
			break;
		wire_gf2_square(odd, even);
		if (nbytes & 1)
			for (int i = 0; i < n; i++)
				vec[i] = wire_gf2_times(odd, vec[i]);
		nbytes >>= 1;
	}
}

void wire_icrc_id_basis(size_t ib_len, uint32_t basis[16])
{
	/* Bytes that follow the ID field in the CRC input: rest of IPv4 + UDP + IB. */
	const size_t after = (WIRE_IPV4_BYTES - 6) + WIRE_UDP_BYTES + ib_len;
	static const uint8_t zero_id[2] = {0, 0};
	/* Any register before the ID will do: the difference does not depend on it. */
	const uint32_t reg0 = wire_icrc_begin();
	const uint32_t r0 = wire_crc32_update(reg0, zero_id, 2);

	/* Each ID bit's effect on the final CRC: register delta then shifted. */
	for (int bit = 0; bit < 16; bit++) {
		uint8_t id[2];

		wire_put_be16(id, (uint16_t)(1u << bit));
		basis[bit] = wire_crc32_update(reg0, id, 2) ^ r0;
	}
	wire_crc32_shift(basis, 16, after);
}

uint32_t wire_icrc_id_delta(const uint32_t basis[16], uint16_t id)
{
	uint32_t d = 0;

	for (int bit = 0; id; bit++, id >>= 1)
		if (id & 1)
			d ^= basis[bit];
	return d;
}

void wire_icrc_id_solver_init(struct wire_icrc_id_solver *sv, size_t ib_len)
{
	uint32_t *vec = sv->row;
	uint16_t *comb = sv->comb;
	int rank = 0;

	wire_icrc_id_basis(ib_len, vec);
	for (int bit = 0; bit < 16; bit++)
		comb[bit] = (uint16_t)(1u << bit);
	/* Gauss-Jordan elimination over GF(2), pivot = highest set bit: every
	 * row keeps its pivot bit and no other row's. */
	for (int bit = 31; bit >= 0 && rank < 16; bit--) {
		int piv = -1;

		for (int i = rank; i < 16; i++)
			if (vec[i] >> bit & 1) {
				piv = i;
				break;
			}
		if (piv < 0)
			continue;
		uint32_t tv = vec[piv];
		uint16_t tc = comb[piv];

		vec[piv] = vec[rank];
		comb[piv] = comb[rank];
		vec[rank] = tv;
		comb[rank] = tc;
		for (int i = 0; i < 16; i++)
			if (i != rank && vec[i] >> bit & 1) {
				vec[i] ^= vec[rank];
				comb[i] ^= comb[rank];
			}
		sv->pivot[rank] = (uint8_t)bit;
		rank++;
	}
	sv->rank = (uint8_t)rank;
	sv->ib_len = ib_len;
}

int wire_icrc_id_solve(const struct wire_icrc_id_solver *sv, uint32_t delta, uint16_t *ip_id)
{
	uint16_t sol = 0;

	for (int r = 0; r < sv->rank; r++)
		if (delta >> sv->pivot[r] & 1) {
			delta ^= sv->row[r];
			sol ^= sv->comb[r];
		}
	if (delta != 0)
		return -ENOENT;
	*ip_id = sol;
	return 0;
}

int wire_icrc_solve_ipv4_id(const uint8_t src[4], const uint8_t dst[4], uint16_t frag,
			    uint16_t sport, uint16_t dport, const void *ib, size_t ib_len,
			    uint32_t icrc, uint16_t *ip_id)
{
	uint32_t base = wire_icrc_end(wire_icrc_add_ib(
	    wire_icrc_begin_udp4(src, dst, 0, frag, sport, dport, ib_len), 0, ib, ib_len));
	struct wire_icrc_id_solver sv;

	wire_icrc_id_solver_init(&sv, ib_len);
	return wire_icrc_id_solve(&sv, base ^ icrc, ip_id);
}
