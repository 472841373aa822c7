/* SPDX-License-Identifier: MIT */
/*
 * Structural validation of one IB transport packet (BTH through ICRC), the
 * checks a receiver makes before it looks at any field: long enough, a
 * multiple of 4 bytes, TVer 0, a known opcode, room for the opcode's headers,
 * a pad count that fits, payload only where the opcode allows it, First and
 * Middle payloads a whole path MTU, CNPs exactly 16 reserved bytes. Never
 * reads outside [ib, ib+len) and never fails on any input: it returns the
 * reason. On success, wire_pkt says where every header and the payload are.
 * The ICRC is not checked here (it needs the IP header; see wire/icrc.h and
 * wire/decode.h).
 */
#ifndef WIRE_VALIDATE_H
#define WIRE_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/opcode.h>
#include <wire/reason.h>

/* A validated IB packet: views into the caller's buffer, nothing copied. */
struct wire_pkt {
	const uint8_t *ib;		     /* BTH */
	size_t len;			     /* BTH .. ICRC inclusive */
	const struct wire_opcode_info *info; /* NULL if the opcode is unknown */
	uint8_t opcode;
	size_t payload_off; /* from the BTH */
	size_t payload_len; /* without pad */
	unsigned pad;	    /* BTH PadCnt */
	uint32_t icrc;	    /* the trailer as received (wire_icrc_get) */
};

/* Smallest and largest path MTU (IBA 9.7.7: 256, 512, 1024, 2048, 4096). */
#define WIRE_MIN_PMTU 256
#define WIRE_MAX_PMTU 4096

/*
 * Validate len bytes at ib (BTH first, ICRC last). Returns WIRE_R_OK and
 * fills *pkt, or the first rule broken (WIRE_R_TOO_SHORT, _NOT_MULTIPLE_OF_4,
 * _BAD_TVER, _UNKNOWN_OPCODE, _SHORT_FOR_OPCODE, _PAD_INCONSISTENT,
 * _LENGTH_FOR_OPCODE); *pkt is then filled as far as the checks got (ib,
 * len, opcode and info when known).
 */
enum wire_reason wire_validate(const uint8_t *ib, size_t len, struct wire_pkt *pkt);

/* 1 if n is a valid path MTU value in bytes (256..4096, power of two). */
int wire_is_pmtu(size_t n);

/* Header views of a validated packet; NULL when the opcode has no such header. */
static inline const void *wire_pkt_hdr(const struct wire_pkt *p, enum wire_hdr h)
{
	if (!p->info || !(p->info->mask & (1u << h)))
		return NULL;
	return p->ib + p->info->offset[h];
}

static inline const struct wire_bth *wire_pkt_bth(const struct wire_pkt *p)
{
	return (const struct wire_bth *)p->ib;
}

static inline const struct wire_reth *wire_pkt_reth(const struct wire_pkt *p)
{
	return (const struct wire_reth *)wire_pkt_hdr(p, WIRE_HDR_RETH);
}

static inline const struct wire_aeth *wire_pkt_aeth(const struct wire_pkt *p)
{
	return (const struct wire_aeth *)wire_pkt_hdr(p, WIRE_HDR_AETH);
}

static inline const struct wire_atmeth *wire_pkt_atmeth(const struct wire_pkt *p)
{
	return (const struct wire_atmeth *)wire_pkt_hdr(p, WIRE_HDR_ATMETH);
}

static inline const struct wire_atmack *wire_pkt_atmack(const struct wire_pkt *p)
{
	return (const struct wire_atmack *)wire_pkt_hdr(p, WIRE_HDR_ATMACK);
}

static inline const struct wire_deth *wire_pkt_deth(const struct wire_pkt *p)
{
	return (const struct wire_deth *)wire_pkt_hdr(p, WIRE_HDR_DETH);
}

static inline const struct wire_immdt *wire_pkt_immdt(const struct wire_pkt *p)
{
	return (const struct wire_immdt *)wire_pkt_hdr(p, WIRE_HDR_IMMDT);
}

static inline const struct wire_ieth *wire_pkt_ieth(const struct wire_pkt *p)
{
	return (const struct wire_ieth *)wire_pkt_hdr(p, WIRE_HDR_IETH);
}

static inline const struct wire_xrceth *wire_pkt_xrceth(const struct wire_pkt *p)
{
	return (const struct wire_xrceth *)wire_pkt_hdr(p, WIRE_HDR_XRCETH);
}

static inline const struct wire_feth *wire_pkt_feth(const struct wire_pkt *p)
{
	return (const struct wire_feth *)wire_pkt_hdr(p, WIRE_HDR_FETH);
}

static inline const uint8_t *wire_pkt_payload(const struct wire_pkt *p)
{
	return p->ib + p->payload_off;
}

#endif /* WIRE_VALIDATE_H */
