/* SPDX-License-Identifier: MIT */
/*
 * Decode one captured frame completely: framing (wire/frame.h), structural
 * validation of the IB packet (wire/validate.h) and the ICRC verdict
 * (wire/icrc.h), into one struct the describer and the CLI use. Total on any
 * input: never reads outside the buffer, never fails other than by reason.
 */
#ifndef WIRE_DECODE_H
#define WIRE_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <wire/frame.h>
#include <wire/icrc.h>
#include <wire/reason.h>
#include <wire/validate.h>

struct wire_decoded {
	struct wire_frame frame;
	struct wire_pkt pkt;
	enum wire_reason reason;    /* WIRE_R_OK, WIRE_R_NOT_ROCE, or why it is malformed */
	enum wire_icrc_status icrc; /* computed whenever IP/UDP framing is sound */
	uint32_t icrc_calc;	    /* the ICRC we computed (valid unless UNCHECKED) */
};

/*
 * Decode an Ethernet frame / a raw IP packet. Returns d->reason:
 * WIRE_R_OK for a well-formed RoCEv2 packet (then d->icrc is OK or BAD),
 * WIRE_R_NOT_ROCE for frames that are not RoCEv2 (skip them), any other
 * reason for a malformed RoCEv2 packet (d->icrc may still be set when the
 * IP and UDP headers were sound).
 */
enum wire_reason wire_decode_eth(const uint8_t *buf, size_t len, struct wire_decoded *d);
enum wire_reason wire_decode_ip(const uint8_t *buf, size_t len, struct wire_decoded *d);

#endif /* WIRE_DECODE_H */
