/* SPDX-License-Identifier: MIT */
/*
 * The extended transport headers that follow the BTH (IBA 9.3): RETH, AETH,
 * AtomicETH, AtomicAckETH, DETH, ImmDt, IETH, XRCETH and FETH. Each is a plain
 * byte layout with a size assert and one get/set accessor pair per field;
 * byte order and masks live only inside the accessors. Which headers a given
 * opcode carries, and where, is in wire/opcode.h.
 */
#ifndef WIRE_EXT_H
#define WIRE_EXT_H

#include <stdint.h>
#include <wire/bytes.h>

#define WIRE_RETH_BYTES 16
#define WIRE_AETH_BYTES 4
#define WIRE_ATMETH_BYTES 28
#define WIRE_ATMACK_BYTES 8
#define WIRE_DETH_BYTES 8
#define WIRE_IMMDT_BYTES 4
#define WIRE_IETH_BYTES 4
#define WIRE_XRCETH_BYTES 4
#define WIRE_FETH_BYTES 4
/* A CNP carries 16 reserved bytes after the BTH (RoCEv2 Annex A17.9). */
#define WIRE_CNP_RESV_BYTES 16

/* The general services QP (QP1) and its Q_Key (IBA 13.5.1, 10.2.5). */
#define WIRE_GSI_QPN 1u
#define WIRE_GSI_QKEY 0x80010000u

/* RDMA Extended Transport Header: IBA 9.3.3. */
struct wire_reth {
	uint8_t va[8];
	uint8_t rkey[4];
	uint8_t dmalen[4];
};
_Static_assert(sizeof(struct wire_reth) == WIRE_RETH_BYTES, "RETH is 16 bytes");

/* ACK Extended Transport Header: IBA 9.3.5; syndrome helpers in wire/aeth.h. */
struct wire_aeth {
	uint8_t syndrome;
	uint8_t msn[3];
};
_Static_assert(sizeof(struct wire_aeth) == WIRE_AETH_BYTES, "AETH is 4 bytes");

/* Atomic Extended Transport Header: IBA 9.3.4. Not 8-byte aligned in a packet. */
struct wire_atmeth {
	uint8_t va[8];
	uint8_t rkey[4];
	uint8_t swap_add[8];
	uint8_t compare[8];
};
_Static_assert(sizeof(struct wire_atmeth) == WIRE_ATMETH_BYTES, "AtomicETH is 28 bytes");

/* Atomic ACK Extended Transport Header: IBA 9.3.6. */
struct wire_atmack {
	uint8_t orig[8];
};
_Static_assert(sizeof(struct wire_atmack) == WIRE_ATMACK_BYTES, "AtomicAckETH is 8 bytes");

/* Datagram Extended Transport Header: IBA 9.3.2. */
struct wire_deth {
	uint8_t qkey[4];
	uint8_t resv;
	uint8_t srcqp[3];
};
_Static_assert(sizeof(struct wire_deth) == WIRE_DETH_BYTES, "DETH is 8 bytes");

/* Immediate Data: IBA 9.3.7. */
struct wire_immdt {
	uint8_t imm[4];
};
_Static_assert(sizeof(struct wire_immdt) == WIRE_IMMDT_BYTES, "ImmDt is 4 bytes");

/* Invalidate Extended Transport Header: IBA 9.3.8. */
struct wire_ieth {
	uint8_t rkey[4];
};
_Static_assert(sizeof(struct wire_ieth) == WIRE_IETH_BYTES, "IETH is 4 bytes");

/* XRC Extended Transport Header: IBA 9.3.9 (XRC annex). */
struct wire_xrceth {
	uint8_t resv;
	uint8_t srqn[3];
};
_Static_assert(sizeof(struct wire_xrceth) == WIRE_XRCETH_BYTES, "XRCETH is 4 bytes");

/* FLUSH Extended Transport Header (IBTA 1.5 memory placement extensions). */
struct wire_feth {
	uint8_t bits[4];
};
_Static_assert(sizeof(struct wire_feth) == WIRE_FETH_BYTES, "FETH is 4 bytes");

enum {
	WIRE_FETH_PLT_MASK = 0x0f, /* placement type, low bits of byte 3 */
	WIRE_FETH_SEL_MASK = 0x30, /* selectivity level, bits 5..4 of byte 3 */
};

/* RETH: virtual address, R_Key, DMA length (whole message length). */
static inline uint64_t wire_reth_get_va(const struct wire_reth *h)
{
	return wire_get_be64(h->va);
}

static inline void wire_reth_set_va(struct wire_reth *h, uint64_t v)
{
	wire_put_be64(h->va, v);
}

static inline uint32_t wire_reth_get_rkey(const struct wire_reth *h)
{
	return wire_get_be32(h->rkey);
}

static inline void wire_reth_set_rkey(struct wire_reth *h, uint32_t v)
{
	wire_put_be32(h->rkey, v);
}

static inline uint32_t wire_reth_get_dmalen(const struct wire_reth *h)
{
	return wire_get_be32(h->dmalen);
}

static inline void wire_reth_set_dmalen(struct wire_reth *h, uint32_t v)
{
	wire_put_be32(h->dmalen, v);
}

/* AETH: syndrome byte and 24-bit MSN. */
static inline uint8_t wire_aeth_get_syndrome(const struct wire_aeth *h)
{
	return h->syndrome;
}

static inline void wire_aeth_set_syndrome(struct wire_aeth *h, uint8_t v)
{
	h->syndrome = v;
}

static inline uint32_t wire_aeth_get_msn(const struct wire_aeth *h)
{
	return wire_get_be24(h->msn);
}

static inline void wire_aeth_set_msn(struct wire_aeth *h, uint32_t v)
{
	wire_put_be24(h->msn, v & 0xffffffu);
}

/* AtomicETH: VA, R_Key, swap (CmpSwap) or add (FetchAdd) data, compare data. */
static inline uint64_t wire_atmeth_get_va(const struct wire_atmeth *h)
{
	return wire_get_be64(h->va);
}

static inline void wire_atmeth_set_va(struct wire_atmeth *h, uint64_t v)
{
	wire_put_be64(h->va, v);
}

static inline uint32_t wire_atmeth_get_rkey(const struct wire_atmeth *h)
{
	return wire_get_be32(h->rkey);
}

static inline void wire_atmeth_set_rkey(struct wire_atmeth *h, uint32_t v)
{
	wire_put_be32(h->rkey, v);
}

static inline uint64_t wire_atmeth_get_swap_add(const struct wire_atmeth *h)
{
	return wire_get_be64(h->swap_add);
}

static inline void wire_atmeth_set_swap_add(struct wire_atmeth *h, uint64_t v)
{
	wire_put_be64(h->swap_add, v);
}

static inline uint64_t wire_atmeth_get_compare(const struct wire_atmeth *h)
{
	return wire_get_be64(h->compare);
}

static inline void wire_atmeth_set_compare(struct wire_atmeth *h, uint64_t v)
{
	wire_put_be64(h->compare, v);
}

/* AtomicAckETH: the original remote data. */
static inline uint64_t wire_atmack_get_orig(const struct wire_atmack *h)
{
	return wire_get_be64(h->orig);
}

static inline void wire_atmack_set_orig(struct wire_atmack *h, uint64_t v)
{
	wire_put_be64(h->orig, v);
}

/* DETH: Q_Key, reserved byte, 24-bit source QP. */
static inline uint32_t wire_deth_get_qkey(const struct wire_deth *h)
{
	return wire_get_be32(h->qkey);
}

static inline void wire_deth_set_qkey(struct wire_deth *h, uint32_t v)
{
	wire_put_be32(h->qkey, v);
}

static inline uint8_t wire_deth_get_resv(const struct wire_deth *h)
{
	return h->resv;
}

static inline void wire_deth_set_resv(struct wire_deth *h, uint8_t v)
{
	h->resv = v;
}

static inline uint32_t wire_deth_get_srcqp(const struct wire_deth *h)
{
	return wire_get_be24(h->srcqp);
}

static inline void wire_deth_set_srcqp(struct wire_deth *h, uint32_t v)
{
	wire_put_be24(h->srcqp, v & 0xffffffu);
}

/*
 * ImmDt: the immediate value as a host-order integer read big-endian from the
 * wire, which is how tshark prints it. Verbs' imm_data (__be32) holds the same
 * four bytes in wire order: copy them with memcpy to/from h->imm instead.
 */
static inline uint32_t wire_immdt_get_imm(const struct wire_immdt *h)
{
	return wire_get_be32(h->imm);
}

static inline void wire_immdt_set_imm(struct wire_immdt *h, uint32_t v)
{
	wire_put_be32(h->imm, v);
}

/* IETH: the R_Key to invalidate. */
static inline uint32_t wire_ieth_get_rkey(const struct wire_ieth *h)
{
	return wire_get_be32(h->rkey);
}

static inline void wire_ieth_set_rkey(struct wire_ieth *h, uint32_t v)
{
	wire_put_be32(h->rkey, v);
}

/* XRCETH: reserved byte and 24-bit XRC SRQ number. */
static inline uint8_t wire_xrceth_get_resv(const struct wire_xrceth *h)
{
	return h->resv;
}

static inline void wire_xrceth_set_resv(struct wire_xrceth *h, uint8_t v)
{
	h->resv = v;
}

static inline uint32_t wire_xrceth_get_srqn(const struct wire_xrceth *h)
{
	return wire_get_be24(h->srqn);
}

static inline void wire_xrceth_set_srqn(struct wire_xrceth *h, uint32_t v)
{
	wire_put_be24(h->srqn, v & 0xffffffu);
}

/* FETH: placement type (4 bits) and selectivity level (2 bits). */
static inline unsigned wire_feth_get_plt(const struct wire_feth *h)
{
	return h->bits[3] & WIRE_FETH_PLT_MASK;
}

static inline void wire_feth_set_plt(struct wire_feth *h, unsigned v)
{
	h->bits[3] = (uint8_t)((h->bits[3] & ~WIRE_FETH_PLT_MASK) | (v & WIRE_FETH_PLT_MASK));
}

static inline unsigned wire_feth_get_sel(const struct wire_feth *h)
{
	return (h->bits[3] & WIRE_FETH_SEL_MASK) >> 4;
}

static inline void wire_feth_set_sel(struct wire_feth *h, unsigned v)
{
	h->bits[3] =
	    (uint8_t)((h->bits[3] & ~WIRE_FETH_SEL_MASK) | ((v << 4) & WIRE_FETH_SEL_MASK));
}

#endif /* WIRE_EXT_H */
