/* SPDX-License-Identifier: MIT */
/*
 * Packet construction from field values, driven by the opcode table: every
 * header the opcode carries is written through its accessors at the offset
 * the table gives. Used by `uroce sample`, the tests and the fuzz corpus.
 */
#include <errno.h>
#include <string.h>
#include <wire/build.h>
#include <wire/icrc.h>
#include <wire/opcode.h>
#include <wire/validate.h>

int wire_build_ib(uint8_t *buf, size_t size, const struct wire_build *b, const void *payload,
		  size_t payload_len)
{
	const struct wire_opcode_info *info = wire_opcode_info(b->opcode);
	struct wire_bth *bth = (struct wire_bth *)buf;
	unsigned pad = wire_pad_bytes(payload_len);
	size_t len;
	uint32_t m;

	if (!info || !buf || payload_len > WIRE_MAX_PMTU || (payload_len && !payload))
		return -EINVAL;
	m = info->mask;
	if (payload_len && !(m & WIRE_PAYLOAD_MASK))
		return -EINVAL;
	len = info->hdr_bytes + payload_len + pad + WIRE_ICRC_BYTES;
	if (size < len)
		return -ENOSPC;
	memset(buf, 0, info->hdr_bytes);
	wire_bth_set_opcode(bth, b->opcode);
	wire_bth_set_se(bth, b->se);
	wire_bth_set_mig(bth, b->mig);
	wire_bth_set_padcnt(bth, pad);
	wire_bth_set_pkey(bth, b->pkey ? b->pkey : WIRE_DEFAULT_PKEY);
	wire_bth_set_fecn(bth, b->fecn);
	wire_bth_set_becn(bth, b->becn);
	wire_bth_set_destqp(bth, b->destqp);
	wire_bth_set_ackreq(bth, b->ackreq);
	wire_bth_set_psn(bth, b->psn);
	if (m & WIRE_XRCETH_MASK)
		wire_xrceth_set_srqn((struct wire_xrceth *)(buf + info->offset[WIRE_HDR_XRCETH]),
				     b->srqn);
	if (m & WIRE_DETH_MASK) {
		struct wire_deth *h = (struct wire_deth *)(buf + info->offset[WIRE_HDR_DETH]);

		wire_deth_set_qkey(h, b->qkey);
		wire_deth_set_srcqp(h, b->srcqp);
	}
	if (m & WIRE_FETH_MASK) {
		struct wire_feth *h = (struct wire_feth *)(buf + info->offset[WIRE_HDR_FETH]);

		wire_feth_set_sel(h, b->feth_sel);
		wire_feth_set_plt(h, b->feth_plt);
	}
	if (m & WIRE_RETH_MASK) {
		struct wire_reth *h = (struct wire_reth *)(buf + info->offset[WIRE_HDR_RETH]);

		wire_reth_set_va(h, b->va);
		wire_reth_set_rkey(h, b->rkey);
		wire_reth_set_dmalen(h, b->dmalen);
	}
	if (m & WIRE_ATMETH_MASK) {
		struct wire_atmeth *h = (struct wire_atmeth *)(buf + info->offset[WIRE_HDR_ATMETH]);

		wire_atmeth_set_va(h, b->va);
		wire_atmeth_set_rkey(h, b->rkey);
		wire_atmeth_set_swap_add(h, b->swap_add);
		wire_atmeth_set_compare(h, b->compare);
	}
	if (m & WIRE_AETH_MASK) {
		struct wire_aeth *h = (struct wire_aeth *)(buf + info->offset[WIRE_HDR_AETH]);

		wire_aeth_set_syndrome(h, b->syndrome);
		wire_aeth_set_msn(h, b->msn);
	}
	if (m & WIRE_ATMACK_MASK)
		wire_atmack_set_orig((struct wire_atmack *)(buf + info->offset[WIRE_HDR_ATMACK]),
				     b->orig);
	if (m & WIRE_IMMDT_MASK)
		wire_immdt_set_imm((struct wire_immdt *)(buf + info->offset[WIRE_HDR_IMMDT]),
				   b->imm);
	if (m & WIRE_IETH_MASK)
		wire_ieth_set_rkey((struct wire_ieth *)(buf + info->offset[WIRE_HDR_IETH]),
				   b->ieth_rkey);
	if (payload_len)
		memmove(buf + info->hdr_bytes, payload, payload_len);
	memset(buf + info->hdr_bytes + payload_len, 0, pad + WIRE_ICRC_BYTES);
	return (int)len;
}
