/* SPDX-License-Identifier: MIT */
/*
 * The Base Transport Header (BTH, 12 bytes, IBA 9.2): layout, size and one
 * get/set accessor pair per field. The struct is a plain byte layout (no
 * alignment requirement), so a pointer into any received buffer may be cast
 * to it. Byte order and bit masks live only inside the accessors; setters
 * touch nothing but their own field. Setters take the field value in host
 * order and silently keep only the field's width (e.g. 24 bits of a PSN).
 */
#ifndef WIRE_BTH_H
#define WIRE_BTH_H

#include <stddef.h>
#include <stdint.h>
#include <wire/bytes.h>

#define WIRE_BTH_BYTES 12

struct wire_bth {
	uint8_t opcode;	 /* transport (bits 7..5) + operation (bits 4..0) */
	uint8_t flags;	 /* SE | M | PadCnt(2) | TVer(4) */
	uint8_t pkey[2]; /* partition key */
	uint8_t resv8a;	 /* FECN | BECN | resv6; masked in the ICRC */
	uint8_t qpn[3];	 /* destination QP */
	uint8_t apsn[4]; /* AckReq | resv7 | PSN(24) */
};
_Static_assert(sizeof(struct wire_bth) == WIRE_BTH_BYTES, "BTH is 12 bytes");

/* Bits of BTH byte 1 and byte 4 and of the AckReq/PSN word (IBA 9.2). */
enum {
	WIRE_BTH_SE_MASK = 0x80,
	WIRE_BTH_MIG_MASK = 0x40,
	WIRE_BTH_PAD_MASK = 0x30,
	WIRE_BTH_TVER_MASK = 0x0f,
	WIRE_BTH_FECN_MASK = 0x80,
	WIRE_BTH_BECN_MASK = 0x40,
	WIRE_BTH_RESV6_MASK = 0x3f,
	WIRE_BTH_ACK_MASK = 0x80,
	WIRE_BTH_RESV7_MASK = 0x7f,
};

#define WIRE_QPN_MASK 0xffffffu
#define WIRE_PSN_MASK 0xffffffu
#define WIRE_DEFAULT_PKEY 0xffff

static inline uint8_t wire_bth_get_opcode(const struct wire_bth *h)
{
	return h->opcode;
}

static inline void wire_bth_set_opcode(struct wire_bth *h, uint8_t v)
{
	h->opcode = v;
}

/* Solicited Event: 0 or 1. */
static inline unsigned wire_bth_get_se(const struct wire_bth *h)
{
	return !!(h->flags & WIRE_BTH_SE_MASK);
}

static inline void wire_bth_set_se(struct wire_bth *h, unsigned v)
{
	h->flags = (uint8_t)((h->flags & ~WIRE_BTH_SE_MASK) | (v ? WIRE_BTH_SE_MASK : 0));
}

/* MigReq: 0 or 1. */
static inline unsigned wire_bth_get_mig(const struct wire_bth *h)
{
	return !!(h->flags & WIRE_BTH_MIG_MASK);
}

static inline void wire_bth_set_mig(struct wire_bth *h, unsigned v)
{
	h->flags = (uint8_t)((h->flags & ~WIRE_BTH_MIG_MASK) | (v ? WIRE_BTH_MIG_MASK : 0));
}

/* The pad a payload of len bytes needs to end on a 4-byte boundary (its PadCnt). */
static inline unsigned wire_pad_bytes(size_t len)
{
	return (unsigned)(0u - len) & 3u;
}

/* Pad count: 0..3 bytes of pad between payload and ICRC. */
static inline unsigned wire_bth_get_padcnt(const struct wire_bth *h)
{
	return (h->flags & WIRE_BTH_PAD_MASK) >> 4;
}

static inline void wire_bth_set_padcnt(struct wire_bth *h, unsigned v)
{
	h->flags = (uint8_t)((h->flags & ~WIRE_BTH_PAD_MASK) | ((v << 4) & WIRE_BTH_PAD_MASK));
}

/* Transport header version: 0 is the only valid value. */
static inline unsigned wire_bth_get_tver(const struct wire_bth *h)
{
	return h->flags & WIRE_BTH_TVER_MASK;
}

static inline void wire_bth_set_tver(struct wire_bth *h, unsigned v)
{
	h->flags = (uint8_t)((h->flags & ~WIRE_BTH_TVER_MASK) | (v & WIRE_BTH_TVER_MASK));
}

static inline uint16_t wire_bth_get_pkey(const struct wire_bth *h)
{
	return wire_get_be16(h->pkey);
}

static inline void wire_bth_set_pkey(struct wire_bth *h, uint16_t v)
{
	wire_put_be16(h->pkey, v);
}

/* Forward explicit congestion notification: 0 or 1. */
static inline unsigned wire_bth_get_fecn(const struct wire_bth *h)
{
	return !!(h->resv8a & WIRE_BTH_FECN_MASK);
}

static inline void wire_bth_set_fecn(struct wire_bth *h, unsigned v)
{
	h->resv8a = (uint8_t)((h->resv8a & ~WIRE_BTH_FECN_MASK) | (v ? WIRE_BTH_FECN_MASK : 0));
}

/* Backward explicit congestion notification: 0 or 1 (set in a CNP). */
static inline unsigned wire_bth_get_becn(const struct wire_bth *h)
{
	return !!(h->resv8a & WIRE_BTH_BECN_MASK);
}

static inline void wire_bth_set_becn(struct wire_bth *h, unsigned v)
{
	h->resv8a = (uint8_t)((h->resv8a & ~WIRE_BTH_BECN_MASK) | (v ? WIRE_BTH_BECN_MASK : 0));
}

/* The 6 reserved bits of byte 4 (sent 0; some hardware sets them). */
static inline unsigned wire_bth_get_resv6(const struct wire_bth *h)
{
	return h->resv8a & WIRE_BTH_RESV6_MASK;
}

static inline void wire_bth_set_resv6(struct wire_bth *h, unsigned v)
{
	h->resv8a = (uint8_t)((h->resv8a & ~WIRE_BTH_RESV6_MASK) | (v & WIRE_BTH_RESV6_MASK));
}

/* Destination QP number, 24 bits. */
static inline uint32_t wire_bth_get_destqp(const struct wire_bth *h)
{
	return wire_get_be24(h->qpn);
}

static inline void wire_bth_set_destqp(struct wire_bth *h, uint32_t v)
{
	wire_put_be24(h->qpn, v & WIRE_QPN_MASK);
}

/* AckReq: 0 or 1. */
static inline unsigned wire_bth_get_ackreq(const struct wire_bth *h)
{
	return !!(h->apsn[0] & WIRE_BTH_ACK_MASK);
}

static inline void wire_bth_set_ackreq(struct wire_bth *h, unsigned v)
{
	h->apsn[0] = (uint8_t)((h->apsn[0] & ~WIRE_BTH_ACK_MASK) | (v ? WIRE_BTH_ACK_MASK : 0));
}

/* The 7 reserved bits after AckReq (sent 0, covered by the ICRC). */
static inline unsigned wire_bth_get_resv7(const struct wire_bth *h)
{
	return h->apsn[0] & WIRE_BTH_RESV7_MASK;
}

static inline void wire_bth_set_resv7(struct wire_bth *h, unsigned v)
{
	h->apsn[0] = (uint8_t)((h->apsn[0] & ~WIRE_BTH_RESV7_MASK) | (v & WIRE_BTH_RESV7_MASK));
}

/* Packet sequence number, 24 bits. */
static inline uint32_t wire_bth_get_psn(const struct wire_bth *h)
{
	return wire_get_be24(h->apsn + 1);
}

static inline void wire_bth_set_psn(struct wire_bth *h, uint32_t v)
{
	wire_put_be24(h->apsn + 1, v & WIRE_PSN_MASK);
}

#endif /* WIRE_BTH_H */
