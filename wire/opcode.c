/* SPDX-License-Identifier: MIT */
/*
 * The opcode table, generated from WIRE_OPCODE_LIST (wire/opcode.h): one
 * static const entry per known opcode, indexed by opcode value, with header
 * offsets computed at compile time from the property mask. Lookup only; the
 * meaning of each property is documented in the header.
 */
#include <wire/opcode.h>

/* Extended header sizes, by slot. */
#define WIRE__SZ_XRCETH WIRE_XRCETH_BYTES
#define WIRE__SZ_DETH WIRE_DETH_BYTES
#define WIRE__SZ_FETH WIRE_FETH_BYTES
#define WIRE__SZ_RETH WIRE_RETH_BYTES
#define WIRE__SZ_ATMETH WIRE_ATMETH_BYTES
#define WIRE__SZ_AETH WIRE_AETH_BYTES
#define WIRE__SZ_ATMACK WIRE_ATMACK_BYTES
#define WIRE__SZ_IMMDT WIRE_IMMDT_BYTES
#define WIRE__SZ_IETH WIRE_IETH_BYTES
#define WIRE__SZ_CNP WIRE_CNP_RESV_BYTES

/* Bytes the header in slot `h` takes when mask m has it, else 0. */
#define WIRE__IF(m, h) (((m)&WIRE_##h##_MASK) ? WIRE__SZ_##h : 0)

/* Offset of each slot: BTH plus every present header before it. */
#define WIRE__OFF_XRCETH(m) (WIRE_BTH_BYTES)
#define WIRE__OFF_DETH(m) (WIRE__OFF_XRCETH(m) + WIRE__IF(m, XRCETH))
#define WIRE__OFF_FETH(m) (WIRE__OFF_DETH(m) + WIRE__IF(m, DETH))
#define WIRE__OFF_RETH(m) (WIRE__OFF_FETH(m) + WIRE__IF(m, FETH))
#define WIRE__OFF_ATMETH(m) (WIRE__OFF_RETH(m) + WIRE__IF(m, RETH))
#define WIRE__OFF_AETH(m) (WIRE__OFF_ATMETH(m) + WIRE__IF(m, ATMETH))
#define WIRE__OFF_ATMACK(m) (WIRE__OFF_AETH(m) + WIRE__IF(m, AETH))
#define WIRE__OFF_IMMDT(m) (WIRE__OFF_ATMACK(m) + WIRE__IF(m, ATMACK))
#define WIRE__OFF_IETH(m) (WIRE__OFF_IMMDT(m) + WIRE__IF(m, IMMDT))
#define WIRE__OFF_CNP(m) (WIRE__OFF_IETH(m) + WIRE__IF(m, IETH))
#define WIRE__OFF_PAYLOAD(m) (WIRE__OFF_CNP(m) + WIRE__IF(m, CNP))

#define WIRE__AT(m, h) (((m)&WIRE_##h##_MASK) ? WIRE__OFF_##h(m) : 0)

#define WIRE__OP_ENTRY(sym_, val, name_, info_, mask_)             \
	[val] = {                                                  \
	    .name = name_,                                         \
	    .info_name = info_,                                    \
	    .sym = #sym_,                                          \
	    .mask = (mask_),                                       \
	    .opcode = (val),                                       \
	    .hdr_bytes = WIRE__OFF_PAYLOAD(mask_),                 \
	    .offset =                                              \
		{                                                  \
		    [WIRE_HDR_BTH] = 0,                            \
		    [WIRE_HDR_XRCETH] = WIRE__AT(mask_, XRCETH),   \
		    [WIRE_HDR_DETH] = WIRE__AT(mask_, DETH),       \
		    [WIRE_HDR_FETH] = WIRE__AT(mask_, FETH),       \
		    [WIRE_HDR_RETH] = WIRE__AT(mask_, RETH),       \
		    [WIRE_HDR_ATMETH] = WIRE__AT(mask_, ATMETH),   \
		    [WIRE_HDR_AETH] = WIRE__AT(mask_, AETH),       \
		    [WIRE_HDR_ATMACK] = WIRE__AT(mask_, ATMACK),   \
		    [WIRE_HDR_IMMDT] = WIRE__AT(mask_, IMMDT),     \
		    [WIRE_HDR_IETH] = WIRE__AT(mask_, IETH),       \
		    [WIRE_HDR_CNP] = WIRE__AT(mask_, CNP),         \
		    [WIRE_HDR_PAYLOAD] = WIRE__OFF_PAYLOAD(mask_), \
		},                                                 \
	},

static const struct wire_opcode_info wire_opcode_table[256] = {WIRE_OPCODE_LIST(WIRE__OP_ENTRY)};

/* The known opcode values in ascending order (the list is written in order). */
static const uint8_t wire_opcode_order[WIRE_OPCODE_COUNT] = {
#define WIRE__OP_VALUE(sym, val, name, info, mask) (val),
    WIRE_OPCODE_LIST(WIRE__OP_VALUE)
#undef WIRE__OP_VALUE
};

const struct wire_opcode_info *wire_opcode_info(uint8_t opcode)
{
	const struct wire_opcode_info *info = &wire_opcode_table[opcode];

	return info->name ? info : NULL;
}

const struct wire_opcode_info *wire_opcode_at(unsigned n)
{
	if (n >= WIRE_OPCODE_COUNT)
		return NULL;
	return &wire_opcode_table[wire_opcode_order[n]];
}

const char *wire_opcode_name(uint8_t opcode)
{
	const struct wire_opcode_info *info = wire_opcode_info(opcode);

	return info ? info->name : "Unknown";
}

static const uint8_t wire_hdr_size[WIRE_HDR_COUNT] = {
    [WIRE_HDR_BTH] = WIRE_BTH_BYTES,	  [WIRE_HDR_XRCETH] = WIRE_XRCETH_BYTES,
    [WIRE_HDR_DETH] = WIRE_DETH_BYTES,	  [WIRE_HDR_FETH] = WIRE_FETH_BYTES,
    [WIRE_HDR_RETH] = WIRE_RETH_BYTES,	  [WIRE_HDR_ATMETH] = WIRE_ATMETH_BYTES,
    [WIRE_HDR_AETH] = WIRE_AETH_BYTES,	  [WIRE_HDR_ATMACK] = WIRE_ATMACK_BYTES,
    [WIRE_HDR_IMMDT] = WIRE_IMMDT_BYTES,  [WIRE_HDR_IETH] = WIRE_IETH_BYTES,
    [WIRE_HDR_CNP] = WIRE_CNP_RESV_BYTES, [WIRE_HDR_PAYLOAD] = 0,
};

static const char *const wire_hdr_names[WIRE_HDR_COUNT] = {
    [WIRE_HDR_BTH] = "BTH",   [WIRE_HDR_XRCETH] = "XRCETH",	  [WIRE_HDR_DETH] = "DETH",
    [WIRE_HDR_FETH] = "FETH", [WIRE_HDR_RETH] = "RETH",		  [WIRE_HDR_ATMETH] = "AtomicETH",
    [WIRE_HDR_AETH] = "AETH", [WIRE_HDR_ATMACK] = "AtomicAckETH", [WIRE_HDR_IMMDT] = "ImmDt",
    [WIRE_HDR_IETH] = "IETH", [WIRE_HDR_CNP] = "CNP reserved",	  [WIRE_HDR_PAYLOAD] = "payload",
};

size_t wire_hdr_bytes(enum wire_hdr h)
{
	return (unsigned)h < WIRE_HDR_COUNT ? wire_hdr_size[h] : 0;
}

const char *wire_hdr_name(enum wire_hdr h)
{
	return (unsigned)h < WIRE_HDR_COUNT ? wire_hdr_names[h] : "invalid";
}
