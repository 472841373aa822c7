/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/wqe.c: send and receive WQEs read from ring slots are
 * copied field by field, and every malformed slot (unknown or unsupported
 * opcode, opcode of another QP type, too many SGEs for the ring, inline
 * data longer than the ring allows, inline READ/atomic) becomes a WQE that
 * the transport engine itself fails with the status the daemon promised.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"

#define MAX_SGE 4
#define MAX_INLINE 64

static uint8_t slot[1024];
static struct emu_wqe_geom geom;

static void setup(void)
{
	memset(slot, 0xa5, sizeof(slot)); /* garbage beyond what is written */
	geom.max_sge = MAX_SGE;
	geom.max_inline = MAX_INLINE;
	geom.stride = uroce_sq_stride(MAX_SGE, MAX_INLINE);
}

static struct uroce_send_wqe *send_hdr(uint32_t opcode, uint32_t flags)
{
	struct uroce_send_wqe *w = (struct uroce_send_wqe *)slot;

	memset(w, 0, sizeof(*w));
	w->wr_id = 0x1122334455667788ull;
	w->opcode = opcode;
	w->send_flags = flags;
	w->imm_data = 0xdeadbeef;
	return w;
}

static void put_sge(unsigned i, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct uroce_sge s = {.addr = addr, .length = len, .lkey = lkey};

	memcpy(slot + UROCE_SEND_WQE_BYTES + i * sizeof(s), &s, sizeof(s));
}

/* What the engine itself says about w (0 = it will carry it). */
static uint32_t engine_status(uint32_t qp_type, const struct xport_wqe *w)
{
	uint32_t len;

	return xport_check_wqe(qp_type, w, &len);
}

START_TEST(test_rdma_write_sges)
{
	struct uroce_send_wqe *s =
	    send_hdr(UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED | UROCE_SEND_FENCE);
	struct xport_wqe w;
	uint32_t ah = 99;

	s->num_sge = 3;
	s->wr.rdma.remote_addr = 0x7000;
	s->wr.rdma.rkey = 0x1234;
	put_sge(0, 0x1000, 10, 0x100);
	put_sge(1, 0x2000, 20, 0x200);
	put_sge(2, 0x3000, 30, 0x300);
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(w.wr_id, 0x1122334455667788ull);
	ck_assert_uint_eq(w.opcode, UROCE_WR_RDMA_WRITE);
	ck_assert_uint_eq(w.flags, UROCE_SEND_SIGNALED | UROCE_SEND_FENCE);
	ck_assert_uint_eq(w.remote_addr, 0x7000);
	ck_assert_uint_eq(w.rkey, 0x1234);
	ck_assert_uint_eq(w.num_sge, 3);
	ck_assert_uint_eq(w.sge[1].addr, 0x2000);
	ck_assert_uint_eq(w.sge[1].length, 20);
	ck_assert_uint_eq(w.sge[2].lkey, 0x300);
	ck_assert_uint_eq(ah, 0);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_atomic_fields)
{
	struct uroce_send_wqe *s = send_hdr(UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_SEND_SIGNALED);
	struct xport_wqe w;
	uint32_t ah;

	s->num_sge = 1;
	s->wr.atomic.remote_addr = 0x8008;
	s->wr.atomic.compare_add = 5;
	s->wr.atomic.swap = 6;
	s->wr.atomic.rkey = 0x77;
	put_sge(0, 0x1000, 8, 0x100);
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(w.remote_addr, 0x8008);
	ck_assert_uint_eq(w.compare_add, 5);
	ck_assert_uint_eq(w.swap, 6);
	ck_assert_uint_eq(w.rkey, 0x77);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_SUCCESS);
}
END_TEST

/*
 * FLUSH (rdma-core 45's ibv_wr_flush): the range and the FETH come from the
 * WQE's flush part; a placement type of unknown bits or none, a reserved
 * selectivity level or a buffer is malformed (LOC_QP_OP_ERR), as the
 * engine agrees; a range longer than a message is LOC_LEN_ERR.
 */
START_TEST(test_flush_fields)
{
	static const struct {
		uint8_t type, level;
		uint32_t len;
		uint32_t num_sge;
		uint32_t want;
	} cases[] = {
	    {UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, 4096, 0, UROCE_WC_SUCCESS},
	    {UROCE_FLUSH_GLOBAL, UROCE_FLUSH_MR, 0xffffffffu, 0, UROCE_WC_SUCCESS},
	    {UROCE_FLUSH_PERSISTENT | UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, 8, 0,
	     UROCE_WC_SUCCESS},
	    {0, UROCE_FLUSH_RANGE, 8, 0, UROCE_WC_LOC_QP_OP_ERR},
	    {4, UROCE_FLUSH_RANGE, 8, 0, UROCE_WC_LOC_QP_OP_ERR},
	    {UROCE_FLUSH_GLOBAL, 2, 8, 0, UROCE_WC_LOC_QP_OP_ERR},
	    {UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, 8, 1, UROCE_WC_LOC_QP_OP_ERR},
	    {UROCE_FLUSH_GLOBAL, UROCE_FLUSH_RANGE, 0x80000001u, 0, UROCE_WC_LOC_LEN_ERR},
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uroce_send_wqe *s = send_hdr(UROCE_WR_FLUSH, UROCE_SEND_SIGNALED);
		struct xport_wqe w;
		uint32_t ah, st;

		s->wr.flush.remote_addr = 0x9000;
		s->wr.flush.rkey = 0x1234;
		s->wr.flush.length = cases[i].len;
		s->wr.flush.type = cases[i].type;
		s->wr.flush.level = cases[i].level;
		s->num_sge = cases[i].num_sge;
		put_sge(0, 0x1000, 8, 0x100);
		st = emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah);
		if (cases[i].want == UROCE_WC_SUCCESS || cases[i].want == UROCE_WC_LOC_LEN_ERR ||
		    !cases[i].num_sge) {
			/* Read as given; the engine's check decides. */
			ck_assert_uint_eq(st, UROCE_WC_SUCCESS);
			ck_assert_uint_eq(w.remote_addr, 0x9000);
			ck_assert_uint_eq(w.rkey, 0x1234);
			ck_assert_uint_eq(w.flush_len, cases[i].len);
			ck_assert_uint_eq(w.flush_type, cases[i].type);
			ck_assert_uint_eq(w.flush_level, cases[i].level);
		} else {
			ck_assert_uint_eq(st, cases[i].want);
		}
		ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), cases[i].want);
		/* RC only. */
		ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_UC, &w, &ah),
				  UROCE_WC_LOC_QP_OP_ERR);
	}
}
END_TEST

START_TEST(test_inline_send_ud)
{
	struct uroce_send_wqe *s =
	    send_hdr(UROCE_WR_SEND_WITH_IMM, UROCE_SEND_INLINE | UROCE_SEND_SOLICITED);
	struct xport_wqe w;
	uint32_t ah = 0;

	s->inline_len = 5;
	s->num_sge = 77; /* ignored with inline data */
	s->ud.ah_handle = 42;
	s->ud.remote_qpn = 0xff123456; /* high byte is not part of a QPN */
	s->ud.remote_qkey = 0x11111111;
	memcpy(slot + UROCE_SEND_WQE_BYTES, "hello", 5);
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_UD, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(ah, 42);
	ck_assert_uint_eq(w.ud_remote_qpn, 0x123456);
	ck_assert_uint_eq(w.ud_remote_qkey, 0x11111111);
	ck_assert_uint_eq(w.inline_len, 5);
	ck_assert_uint_eq(w.num_sge, 0);
	ck_assert_uint_eq(w.imm_data, 0xdeadbeef);
	ck_assert(!memcmp(w.inline_data, "hello", 5));
	ck_assert_uint_eq(w.flags, UROCE_SEND_INLINE | UROCE_SEND_SOLICITED);
	ck_assert_uint_eq(engine_status(UROCE_QPT_UD, &w), UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_unknown_flags_dropped)
{
	struct xport_wqe w;
	uint32_t ah;

	send_hdr(UROCE_WR_SEND, 0xffffff00u | UROCE_SEND_SIGNALED | UROCE_SEND_IP_CSUM);
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(w.flags, UROCE_SEND_SIGNALED);
}
END_TEST

/* Every (QP type, opcode) pair: accepted iff the type carries it, and a
 * refused one fails in the engine with LOC_QP_OP_ERR. */
START_TEST(test_opcode_per_type)
{
	static const uint32_t types[] = {UROCE_QPT_RC, UROCE_QPT_UC, UROCE_QPT_UD};

	for (unsigned t = 0; t < 3; t++)
		for (uint32_t op = 0; op < 16; op++) {
			struct uroce_send_wqe *s = send_hdr(op, 0);
			struct xport_wqe w;
			uint32_t ah, st;
			/* A local operation (BIND_MW, LOCAL_INV), an ATOMIC WRITE
			 * (its data is in the WQE) or a FLUSH with a buffer is
			 * malformed. */
			uint32_t no_buf =
			    UROCE_WR_F_LOCAL | UROCE_WR_F_ATOMIC_WRITE | UROCE_WR_F_FLUSH;
			bool ok = uroce_wr_ok(types[t], op) && !(uroce_wr_flags(op) & no_buf);

			s->num_sge = 1;
			put_sge(0, 0x1000, 8, 0x100);
			st = emu_wqe_send(slot, &geom, types[t], &w, &ah);
			ck_assert_uint_eq(st, ok ? UROCE_WC_SUCCESS : UROCE_WC_LOC_QP_OP_ERR);
			ck_assert_uint_eq(engine_status(types[t], &w), st);
		}
	ck_assert(uroce_wr_ok(UROCE_QPT_RC, UROCE_WR_RDMA_READ));
	ck_assert(!uroce_wr_ok(UROCE_QPT_UC, UROCE_WR_RDMA_READ));
	ck_assert(!uroce_wr_ok(UROCE_QPT_UD, UROCE_WR_RDMA_WRITE));
	ck_assert(uroce_wr_ok(UROCE_QPT_RC, UROCE_WR_SEND_WITH_INV));
	ck_assert(!uroce_wr_ok(UROCE_QPT_UC, UROCE_WR_SEND_WITH_INV));
	ck_assert(uroce_wr_ok(UROCE_QPT_UC, UROCE_WR_LOCAL_INV));
	ck_assert(!uroce_wr_ok(UROCE_QPT_UD, UROCE_WR_BIND_MW));
}
END_TEST

/* A BIND_MW WQE: the bind reaches the engine as written; LOCAL_INV's R_Key in imm_data. */
START_TEST(test_bind_and_inv)
{
	struct uroce_send_wqe *s = send_hdr(UROCE_WR_BIND_MW, UROCE_SEND_SIGNALED);
	struct xport_wqe w;
	uint32_t ah;

	s->wr.bind.mw_handle = 77;
	s->wr.bind.rkey = 0x1234ab;
	s->wr.bind.mr_lkey = 0x5601;
	s->wr.bind.access = UROCE_ACCESS_REMOTE_WRITE;
	s->wr.bind.addr = 0x10000;
	s->wr.bind.length = 4096;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(w.bind.mw_handle, 77);
	ck_assert_uint_eq(w.bind.rkey, 0x1234ab);
	ck_assert_uint_eq(w.bind.mr_lkey, 0x5601);
	ck_assert_uint_eq(w.bind.access, UROCE_ACCESS_REMOTE_WRITE);
	ck_assert_uint_eq(w.bind.addr, 0x10000);
	ck_assert_uint_eq(w.bind.length, 4096);
	ck_assert_uint_eq(w.num_sge, 0);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_SUCCESS);
	/* Not on UD; never with inline data. */
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_UD, &w, &ah), UROCE_WC_LOC_QP_OP_ERR);
	s = send_hdr(UROCE_WR_LOCAL_INV, UROCE_SEND_INLINE);
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_LOC_QP_OP_ERR);
	s = send_hdr(UROCE_WR_LOCAL_INV, 0);
	s->imm_data = 0xabcdef01;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_UC, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(w.imm_data, 0xabcdef01);
}
END_TEST

START_TEST(test_too_many_sges)
{
	struct uroce_send_wqe *s = send_hdr(UROCE_WR_SEND, 0);
	struct xport_wqe w;
	uint32_t ah;

	/* More than the ring's max_sge, though within the engine's 32. */
	s->num_sge = MAX_SGE + 1;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_uint_eq(w.wr_id, 0x1122334455667788ull);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_LOC_QP_OP_ERR);
	/* A huge count must not make anything read beyond the slot. */
	s->num_sge = 0xffffffffu;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_uint_eq(w.num_sge, 0);
	/* A stride smaller than the SGEs claimed, even under max_sge. */
	geom.stride = UROCE_SEND_WQE_BYTES + 16;
	s->num_sge = 2;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(test_inline_too_long)
{
	struct uroce_send_wqe *s = send_hdr(UROCE_WR_SEND, UROCE_SEND_INLINE);
	struct xport_wqe w;
	uint32_t ah;

	s->inline_len = MAX_INLINE + 1;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_LOC_LEN_ERR);
	s->inline_len = 0x7fffffff;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_LEN_ERR);
	s->inline_len = MAX_INLINE;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_SUCCESS);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_SUCCESS);
}
END_TEST

START_TEST(test_inline_read_refused)
{
	struct uroce_send_wqe *s = send_hdr(UROCE_WR_RDMA_READ, UROCE_SEND_INLINE);
	struct xport_wqe w;
	uint32_t ah;

	s->inline_len = 8;
	ck_assert_uint_eq(emu_wqe_send(slot, &geom, UROCE_QPT_RC, &w, &ah), UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_LOC_QP_OP_ERR);
}
END_TEST

START_TEST(test_poison_statuses)
{
	struct xport_wqe w;

	memset(&w, 0, sizeof(w));
	w.opcode = UROCE_WR_RDMA_READ;
	emu_wqe_poison(&w, UROCE_WC_LOC_QP_OP_ERR);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_LOC_QP_OP_ERR);
	emu_wqe_poison(&w, UROCE_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(engine_status(UROCE_QPT_RC, &w), UROCE_WC_LOC_LEN_ERR);
	ck_assert_uint_eq(engine_status(UROCE_QPT_UD, &w), UROCE_WC_LOC_LEN_ERR);
}
END_TEST

START_TEST(test_recv_ok)
{
	struct uroce_recv_wqe r = {.wr_id = 7, .num_sge = 2};
	struct uroce_sge s[2] = {{0x1000, 100, 0x101}, {0x2000, 200, 0x202}};
	struct xport_recv_wqe w;
	struct emu_wqe_geom g = {.stride = uroce_rq_stride(2), .max_sge = 2};

	memcpy(slot, &r, sizeof(r));
	memcpy(slot + UROCE_RECV_WQE_BYTES, s, sizeof(s));
	ck_assert_int_eq(emu_wqe_recv(slot, &g, &w), 0);
	ck_assert_uint_eq(w.wr_id, 7);
	ck_assert_uint_eq(w.num_sge, 2);
	ck_assert_uint_eq(w.sge[1].addr, 0x2000);
	ck_assert_uint_eq(w.sge[1].length, 200);
	ck_assert_uint_eq(w.sge[1].lkey, 0x202);
	ck_assert(!w.malformed);
	r.num_sge = 0;
	memcpy(slot, &r, sizeof(r));
	ck_assert_int_eq(emu_wqe_recv(slot, &g, &w), 0);
	ck_assert_uint_eq(w.num_sge, 0);
}
END_TEST

START_TEST(test_recv_bad)
{
	struct uroce_recv_wqe r = {.wr_id = 9, .num_sge = 3};
	struct xport_recv_wqe w;
	struct emu_wqe_geom g = {.stride = uroce_rq_stride(2), .max_sge = 2};

	memcpy(slot, &r, sizeof(r));
	ck_assert_int_eq(emu_wqe_recv(slot, &g, &w), -EINVAL);
	/* Kept (its completion carries the wr_id) but unusable. */
	ck_assert_uint_eq(w.wr_id, 9);
	ck_assert_uint_eq(w.num_sge, 1);
	ck_assert_uint_eq(w.sge[0].lkey, EMU_WQE_BAD_LKEY);
	ck_assert(w.malformed);
	r.num_sge = 0x80000000u;
	memcpy(slot, &r, sizeof(r));
	ck_assert_int_eq(emu_wqe_recv(slot, &g, &w), -EINVAL);
	ck_assert(w.malformed);
}
END_TEST

/* xorshift64: the same slots every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/* A length field: small and plausible, at a bound, or anything. */
static uint32_t rnd_count(uint32_t plausible)
{
	switch (rnd() % 4) {
	case 0:
		return rnd();
	case 1:
		return plausible + rnd() % 3;
	default:
		return rnd() % (plausible + 1);
	}
}

/* Parse one private slot of `stride` bytes: the status (top bit: a payload
 * snapshot was kept), *w, *ah and that payload in pre (zeros without). */
static uint32_t parse(const uint8_t *priv, uint32_t stride, struct xport_wqe *w, uint32_t *ah,
		      uint8_t *pre)
{
	struct emu_wqe_geom g = geom;
	const uint8_t *p;
	uint32_t st;

	g.stride = stride;
	memset(w, 0x5a, sizeof(*w));
	st = emu_wqe_send(priv, &g, UROCE_QPT_RC, w, ah);
	p = emu_wqe_preread(priv, w);
	memset(pre, 0, XPORT_MAX_INLINE_BYTES);
	if (p)
		memcpy(pre, p, w->inline_len);
	return p ? st | 0x80000000u : st;
}

/* Parse `src` (one ring slot of geom.stride bytes) after copying it with
 * emu_wqe_send_snapshot into a private slot prefilled with `fill`. */
static uint32_t parse_snapshot(const uint8_t *src, uint8_t fill, struct xport_wqe *w, uint32_t *ah,
			       uint8_t *pre, uint32_t *copied)
{
	static uint8_t priv[sizeof(slot)];

	memset(priv, fill, sizeof(priv));
	*copied = emu_wqe_send_snapshot(priv, src, geom.stride);
	return parse(priv, *copied, w, ah, pre);
}

/*
 * A snapshot of only the bytes a WQE uses parses exactly as the whole slot:
 * random fixed parts (flags, SGE counts and lengths at and past every
 * bound), whatever the private slot held beyond the copied bytes.
 */
START_TEST(test_snapshot_parses_as_whole)
{
	static const uint32_t flag_bits[] = {UROCE_SEND_INLINE, UROCE_SEND_PREREAD,
					     UROCE_SEND_SIGNALED, UROCE_SEND_FENCE};
	static const uint32_t opcodes[] = {
	    UROCE_WR_SEND,	UROCE_WR_SEND_WITH_IMM,	     UROCE_WR_RDMA_WRITE,
	    UROCE_WR_RDMA_READ, UROCE_WR_ATOMIC_CMP_AND_SWP, UROCE_WR_LOCAL_INV};
	unsigned shorter = 0;

	geom.max_inline = 256;
	geom.stride = uroce_sq_stride(MAX_SGE, geom.max_inline);
	ck_assert_uint_le(geom.stride, sizeof(slot));
	for (unsigned n = 0; n < 20000; n++) {
		struct uroce_send_wqe *s;
		struct xport_wqe w_all, w_a, w_b;
		uint8_t pre_all[XPORT_MAX_INLINE_BYTES], pre_a[XPORT_MAX_INLINE_BYTES],
		    pre_b[XPORT_MAX_INLINE_BYTES];
		uint32_t ah_all = 0, ah_a = 0, ah_b = 0, st_all, st_a, st_b, ca, cb, flags = 0;

		for (unsigned i = 0; i < geom.stride; i++)
			slot[i] = (uint8_t)rnd();
		for (unsigned i = 0; i < 4; i++)
			if (rnd() % 2)
				flags |= flag_bits[i];
		s = send_hdr(opcodes[rnd() % 6], flags);
		s->num_sge = rnd_count(MAX_SGE);
		s->inline_len = rnd_count(geom.max_inline);
		for (unsigned i = 0; i < MAX_SGE; i++)
			put_sge(i, 0x1000 * (i + 1), rnd() % 64, 0x100 + i);

		st_all = parse(slot, geom.stride, &w_all, &ah_all, pre_all);
		st_a = parse_snapshot(slot, 0x00, &w_a, &ah_a, pre_a, &ca);
		st_b = parse_snapshot(slot, 0xff, &w_b, &ah_b, pre_b, &cb);

		ck_assert_uint_eq(ca, cb);
		ck_assert_uint_le(ca, geom.stride);
		ck_assert_uint_ge(ca, UROCE_SEND_WQE_BYTES);
		shorter += ca < geom.stride;
		ck_assert_uint_eq(st_a, st_all);
		ck_assert_uint_eq(st_b, st_all);
		ck_assert_uint_eq(ah_a, ah_all);
		ck_assert_uint_eq(ah_b, ah_all);
		ck_assert_mem_eq(&w_a, &w_all, sizeof(w_all));
		ck_assert_mem_eq(&w_b, &w_all, sizeof(w_all));
		ck_assert_mem_eq(pre_a, pre_all, sizeof(pre_all));
		ck_assert_mem_eq(pre_b, pre_all, sizeof(pre_all));
	}
	/* Most WQEs use less than the slot: the snapshot is shorter. */
	ck_assert_uint_gt(shorter, 10000);
}
END_TEST

/* A send with one SGE: its fixed part and one SGE are copied, not the slot. */
START_TEST(test_snapshot_one_sge)
{
	static uint8_t priv[sizeof(slot)];
	struct uroce_send_wqe *s = send_hdr(UROCE_WR_SEND, UROCE_SEND_SIGNALED);

	s->num_sge = 1;
	put_sge(0, 0x1000, 64, 0x100);
	ck_assert_uint_eq(emu_wqe_send_snapshot(priv, slot, geom.stride),
			  UROCE_SEND_WQE_BYTES + sizeof(struct uroce_sge));
	ck_assert_uint_eq(emu_wqe_send_snapshot(priv, slot, 40), 40);
}
END_TEST

/* Receive slots: the fixed part and num_sge SGEs, at most the slot. */
START_TEST(test_recv_snapshot)
{
	static uint8_t priv[sizeof(slot)];
	struct uroce_recv_wqe *r = (struct uroce_recv_wqe *)slot;
	uint32_t stride = UROCE_RECV_WQE_BYTES + MAX_SGE * sizeof(struct uroce_sge);

	for (uint32_t n = 0; n <= MAX_SGE + 2; n++) {
		struct xport_recv_wqe a, b;
		struct emu_wqe_geom g = geom;
		int ra, rb;

		r->wr_id = n;
		r->num_sge = n;
		for (unsigned i = 0; i < MAX_SGE; i++)
			memcpy(slot + UROCE_RECV_WQE_BYTES + i * sizeof(struct uroce_sge),
			       &(struct uroce_sge){.addr = 0x1000 * i, .length = 8, .lkey = 7},
			       sizeof(struct uroce_sge));
		memset(priv, 0xee, sizeof(priv));
		g.stride = emu_wqe_recv_snapshot(priv, slot, stride);
		ck_assert_uint_eq(g.stride, UROCE_RECV_WQE_BYTES + (n < MAX_SGE ? n : MAX_SGE) *
								       sizeof(struct uroce_sge));
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = emu_wqe_recv(priv, &g, &a);
		g.stride = stride;
		rb = emu_wqe_recv(slot, &g, &b);
		ck_assert_int_eq(ra, rb);
		ck_assert_mem_eq(&a, &b, sizeof(a));
	}
}
END_TEST
static Suite *suite(void)
{
	Suite *s = suite_create("dp_wqe");
	TCase *tc = tcase_create("wqe");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_rdma_write_sges);
	tcase_add_test(tc, test_atomic_fields);
	tcase_add_test(tc, test_flush_fields);
	tcase_add_test(tc, test_inline_send_ud);
	tcase_add_test(tc, test_unknown_flags_dropped);
	tcase_add_test(tc, test_opcode_per_type);
	tcase_add_test(tc, test_bind_and_inv);
	tcase_add_test(tc, test_too_many_sges);
	tcase_add_test(tc, test_inline_too_long);
	tcase_add_test(tc, test_inline_read_refused);
	tcase_add_test(tc, test_poison_statuses);
	tcase_add_test(tc, test_recv_ok);
	tcase_add_test(tc, test_recv_bad);
	tcase_add_test(tc, test_snapshot_parses_as_whole);
	tcase_add_test(tc, test_snapshot_one_sge);
	tcase_add_test(tc, test_recv_snapshot);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
