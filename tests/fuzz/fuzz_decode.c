/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for everything in wire/ that reads untrusted bytes:
 * framing parse (as an Ethernet frame and as a raw IP packet), validation of
 * a bare IB packet, the describer in text and JSON form (into a roomy and a
 * tiny buffer), the ICRC over whatever the parse found, the IPv4 ID solve and
 * the GSO segment-size search.
 * Besides the sanitizers, it checks the library's own promises and traps
 * when one is broken.
 */
#include <stdint.h>
#include <string.h>
#include <wire/wire.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROMISE(cond)                     \
	do {                              \
		if (!(cond))              \
			__builtin_trap(); \
	} while (0)

static void describe_both(const struct wire_decoded *d)
{
	static char big[8192], tiny[7];
	int n;

	n = wire_describe(big, sizeof(big), d);
	PROMISE(n >= 0 && (size_t)n == strlen(big));
	PROMISE(wire_describe(tiny, sizeof(tiny), d) == n && strlen(tiny) <= sizeof(tiny) - 1);
	n = wire_describe_json(big, sizeof(big), d);
	PROMISE(n >= 0 && (size_t)n == strlen(big) && big[0] == '{' && big[n - 1] == '}');
	PROMISE(wire_describe_json(tiny, sizeof(tiny), d) == n);
	PROMISE(wire_describe(NULL, 0, d) == wire_describe(big, sizeof(big), d));
}

static void check_decoded(const uint8_t *data, size_t size, const struct wire_decoded *d,
			  enum wire_reason r)
{
	PROMISE(r == d->reason && (unsigned)r < WIRE_R_COUNT);
	if (r == WIRE_R_OK) {
		const struct wire_pkt *p = &d->pkt;

		PROMISE(d->frame.ib_off + d->frame.ib_len <= size);
		PROMISE(p->ib == data + d->frame.ib_off && p->info != NULL);
		PROMISE(p->payload_off + p->payload_len + p->pad + WIRE_ICRC_BYTES == p->len);
		PROMISE(d->icrc == WIRE_ICRC_OK || d->icrc == WIRE_ICRC_BAD);
	}
	describe_both(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_decoded d;
	struct wire_pkt pkt;
	enum wire_reason r;

	r = wire_decode_eth(data, size, &d);
	check_decoded(data, size, &d, r);
	if (r == WIRE_R_OK && d.frame.ip_version == 4 && d.pkt.len >= WIRE_ICRC_BYTES) {
		uint16_t id;
		size_t ib_len = d.pkt.len - WIRE_ICRC_BYTES;

		/* The solve must find the real ID whenever the ICRC is good. */
		if (wire_icrc_solve_ipv4_id(d.frame.src, d.frame.dst, d.frame.ip_frag,
					    d.frame.sport, d.frame.dport, d.pkt.ib, ib_len,
					    d.pkt.icrc, &id) == 0)
			PROMISE(d.icrc == WIRE_ICRC_BAD || d.frame.ip_hdr_len != 20 ||
				id == d.frame.ip_id);
		else
			PROMISE(d.icrc == WIRE_ICRC_BAD || d.frame.ip_hdr_len != 20);
	}
	r = wire_decode_ip(data, size, &d);
	check_decoded(data, size, &d, r);
	/* The same bytes as a whole GSO datagram: a size found cuts it evenly. */
	if (d.frame.ip_version && d.frame.udp_off && d.frame.ib_off &&
	    d.frame.ip_off + d.frame.ip_hdr_len <= d.frame.udp_off &&
	    d.frame.ib_off + d.frame.ib_len <= size) {
		size_t s = wire_gso_seg_size(data + d.frame.ip_off, d.frame.ip_hdr_len,
					     data + d.frame.udp_off, data + d.frame.ib_off,
					     d.frame.ib_len);

		PROMISE(!s || (s >= WIRE_GSO_MIN_SEG && d.frame.ib_len % s == 0 &&
			       d.frame.ib_len / s >= 2 && d.frame.ib_len / s <= WIRE_GSO_MAX_SEGS));
	}

	/* The bytes as a bare IB packet. */
	memset(&d, 0, sizeof(d));
	r = wire_validate(data, size, &pkt);
	PROMISE((unsigned)r < WIRE_R_COUNT);
	if (r == WIRE_R_OK)
		PROMISE(pkt.payload_off + pkt.payload_len + pkt.pad + WIRE_ICRC_BYTES == size);
	d.pkt = pkt;
	d.reason = r;
	describe_both(&d);

	/* Framing the bytes as an IB packet must round-trip through the parser. */
	if (size >= WIRE_BTH_BYTES + WIRE_ICRC_BYTES && size <= 2048) {
		static uint8_t frame[4096];
		struct wire_frame_params p = {.ip_version = (data[0] & 1) ? 6 : 4,
					      .src = {10, 0, 0, 1},
					      .dst = {10, 0, 0, 2},
					      .fill_icrc = 1};
		int n = wire_frame_build_eth(frame, sizeof(frame), &p, data, size);

		PROMISE(n > 0);
		r = wire_decode_eth(frame, (size_t)n, &d);
		PROMISE(d.frame.ib_len == size && d.icrc == WIRE_ICRC_OK);
		PROMISE(r == wire_validate(data, size, &pkt));
	}
	return 0;
}
