/* SPDX-License-Identifier: MIT */
/*
 * One captured frame to one wire_decoded: framing, then structural
 * validation, then the ICRC verdict. The ICRC is computed whenever the IP
 * and UDP headers are sound, even for a packet that fails validation, so a
 * describer can show both; the reason decides whether the packet counts as
 * malformed.
 */
#include <string.h>
#include <wire/decode.h>

static enum wire_reason wire_decode_finish(const uint8_t *buf, enum wire_reason r,
					   struct wire_decoded *d)
{
	const struct wire_frame *f = &d->frame;

	d->reason = r;
	if (r != WIRE_R_OK)
		return r;
	r = wire_validate(buf + f->ib_off, f->ib_len, &d->pkt);
	if (f->ib_len >= WIRE_BTH_BYTES + WIRE_ICRC_BYTES) {
		uint32_t calc;
		size_t ip_bytes = f->ib_off + f->ib_len - WIRE_ICRC_BYTES - f->ip_off;

		if (wire_icrc_compute(buf + f->ip_off, f->ip_hdr_len, ip_bytes, &calc) == 0) {
			d->icrc_calc = calc;
			d->icrc = calc == d->pkt.icrc ? WIRE_ICRC_OK : WIRE_ICRC_BAD;
		}
	}
	d->reason = r;
	return r;
}

enum wire_reason wire_decode_eth(const uint8_t *buf, size_t len, struct wire_decoded *d)
{
	memset(d, 0, sizeof(*d));
	return wire_decode_finish(buf, wire_frame_parse_eth(buf, len, &d->frame), d);
}

enum wire_reason wire_decode_ip(const uint8_t *buf, size_t len, struct wire_decoded *d)
{
	memset(d, 0, sizeof(*d));
	return wire_decode_finish(buf, wire_frame_parse_ip(buf, len, &d->frame), d);
}
