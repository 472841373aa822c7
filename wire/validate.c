/* SPDX-License-Identifier: MIT */
/*
 * Structural validation of an IB transport packet (BTH..ICRC). The checks run
 * in a fixed order and the first failure is the reason; nothing is read
 * before its bounds are known. Header positions come from the opcode table.
 */
#include <string.h>
#include <wire/icrc.h>
#include <wire/validate.h>

int wire_is_pmtu(size_t n)
{
	return n >= WIRE_MIN_PMTU && n <= WIRE_MAX_PMTU && (n & (n - 1)) == 0;
}

enum wire_reason wire_validate(const uint8_t *ib, size_t len, struct wire_pkt *pkt)
{
	const struct wire_bth *bth = (const struct wire_bth *)ib;
	const struct wire_opcode_info *info;
	size_t body;
	uint32_t mask;

	memset(pkt, 0, sizeof(*pkt));
	pkt->ib = ib;
	pkt->len = len;
	if (!ib || len < WIRE_BTH_BYTES + WIRE_ICRC_BYTES)
		return WIRE_R_TOO_SHORT;
	pkt->opcode = wire_bth_get_opcode(bth);
	pkt->pad = wire_bth_get_padcnt(bth);
	pkt->icrc = wire_icrc_get(ib + len - WIRE_ICRC_BYTES);
	info = wire_opcode_info(pkt->opcode);
	pkt->info = info;
	/* IBA 9.2: every transport packet is a whole number of 4-byte words. */
	if (len % 4)
		return WIRE_R_NOT_MULTIPLE_OF_4;
	/* IBA C9-... / rxe: transport header version must be 0. */
	if (wire_bth_get_tver(bth) != 0)
		return WIRE_R_BAD_TVER;
	if (!info)
		return WIRE_R_UNKNOWN_OPCODE;
	mask = info->mask;
	if (len < (size_t)info->hdr_bytes + WIRE_ICRC_BYTES)
		return WIRE_R_SHORT_FOR_OPCODE;
	body = len - info->hdr_bytes - WIRE_ICRC_BYTES; /* payload + pad */
	pkt->payload_off = info->hdr_bytes;
	if (pkt->pad > body)
		return WIRE_R_PAD_INCONSISTENT;
	pkt->payload_len = body - pkt->pad;
	if (!(mask & WIRE_PAYLOAD_MASK)) {
		/* No payload: nothing but headers and ICRC, and no pad. */
		if (body != 0)
			return WIRE_R_LENGTH_FOR_OPCODE;
		return WIRE_R_OK;
	}
	/* IBA C9-95..: First and Middle packets carry exactly one path MTU, no pad. */
	if (mask & WIRE_MIDDLE_MASK || (mask & WIRE_ONLY_MASK) == WIRE_START_MASK) {
		if (pkt->pad)
			return WIRE_R_PAD_INCONSISTENT;
		if (!wire_is_pmtu(pkt->payload_len))
			return WIRE_R_LENGTH_FOR_OPCODE;
	}
	/* Last packets carry at least one byte (rxe check_length). */
	if ((mask & WIRE_ONLY_MASK) == WIRE_END_MASK && pkt->payload_len == 0)
		return WIRE_R_LENGTH_FOR_OPCODE;
	if (mask & WIRE_ATOMIC_WRITE_MASK && pkt->payload_len != 8)
		return WIRE_R_LENGTH_FOR_OPCODE;
	if (pkt->payload_len > WIRE_MAX_PMTU)
		return WIRE_R_LENGTH_FOR_OPCODE;
	return WIRE_R_OK;
}
