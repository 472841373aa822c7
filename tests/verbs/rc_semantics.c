/* SPDX-License-Identifier: MIT */
/*
 * rc_semantics: an ordinary verbs program (linked against rdma-core's libibverbs) that checks
 * the reliable-connected semantics of two RNICs byte for byte: RDMA WRITE, READ, SEND with
 * immediate, WRITE with immediate, both atomics, gather/scatter over several SGEs, and the
 * error paths (bad rkey, range outside the MR, missing remote access flag, a vanished peer,
 * no receive posted), and memory windows: type 1 and 2 binds, WRITE/READ through a window,
 * zero-based windows, invalidation by LOCAL_INV and by SEND with Invalidate with the next
 * access failing, and the bind and invalidation rules of IBA 10.6.7. It opens two devices in one
 * process, connects one QP on each, and runs every case on a fresh pair. It knows nothing about
 * uroce: run it under the shim.
 *
 *   rc_semantics DEV_A DEV_B [CASE...]
 *
 * Exit status 0 when every case passes, 1 otherwise. One line per case.
 */
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs_test.h"

#define BUF_BYTES (1 << 20)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

struct conn_opts {
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t timeout;
	uint8_t min_rnr_timer;
	enum ibv_mtu mtu;
};

static char failure[512];

static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(failure, sizeof(failure), fmt, ap);
	va_end(ap);
	return -1;
}

static int end_init(struct end *e, struct ibv_context *ctx, int mr_access)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4, .max_recv_sge = 4},
	};

	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->pd = ibv_alloc_pd(ctx);
	if (!e->pd)
		return fail("ibv_alloc_pd: %s", strerror(errno));
	e->buf = aligned_alloc(4096, BUF_BYTES);
	if (!e->buf)
		return fail("out of memory");
	memset(e->buf, 0, BUF_BYTES);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_BYTES, mr_access);
	if (!e->mr)
		return fail("ibv_reg_mr: %s", strerror(errno));
	e->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!e->cq)
		return fail("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	if (!e->qp)
		return fail("ibv_create_qp: %s", strerror(errno));
	if (ibv_query_gid(ctx, 1, 0, &e->gid))
		return fail("ibv_query_gid: %s", strerror(errno));
	return 0;
}

static void end_fini(struct end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* RESET -> INIT -> RTR -> RTS for e, talking to the QP of peer. */
static int qp_connect(struct end *e, const struct end *peer, const struct conn_opts *o)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qp_access_flags =
	    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	ret = ibv_modify_qp(e->qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return fail("modify to INIT: %s", strerror(ret));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = o->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = o->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(e->qp, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return fail("modify to RTR: %s", strerror(ret));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.max_rd_atomic = 16;
	ret = ibv_modify_qp(e->qp, &a,
			    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return fail("modify to RTS: %s", strerror(ret));
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Waits up to secs for one completion on cq. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now_s() + secs;

	while (now_s() < end) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return fail("ibv_poll_cq: %d", n);
		if (n == 1)
			return 0;
	}
	return fail("no completion within %.0f s", secs);
}

static int expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
		     struct ibv_wc *out, double secs)
{
	struct ibv_wc wc = {0};

	if (poll_one(cq, &wc, secs))
		return -1;
	if (wc.wr_id != wr_id || wc.status != status)
		return fail(
		    "completion wr_id %" PRIu64 " status %s, expected wr_id %" PRIu64 " status %s",
		    wc.wr_id, ibv_wc_status_str(wc.status), wr_id, ibv_wc_status_str(status));
	if (out)
		*out = wc;
	return 0;
}

static int post(struct end *e, enum ibv_wr_opcode op, uint64_t wr_id, struct ibv_sge *sg, int nsge,
		uint64_t raddr, uint32_t rkey, uint32_t imm_be)
{
	struct ibv_send_wr wr =
			       {
				   .wr_id = wr_id,
				   .sg_list = sg,
				   .num_sge = nsge,
				   .opcode = op,
				   .send_flags = IBV_SEND_SIGNALED,
				   .imm_data = imm_be,
			       },
			   *bad;
	int ret;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(e->qp, &wr, &bad);
	return ret ? fail("ibv_post_send: %s", strerror(ret)) : 0;
}

static int post_atomic(struct end *e, enum ibv_wr_opcode op, uint64_t wr_id, void *local,
		       uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sg = {.addr = (uintptr_t)local, .length = 8, .lkey = e->mr->lkey};
	struct ibv_send_wr wr =
			       {
				   .wr_id = wr_id,
				   .sg_list = &sg,
				   .num_sge = 1,
				   .opcode = op,
				   .send_flags = IBV_SEND_SIGNALED,
			       },
			   *bad;
	int ret;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	ret = ibv_post_send(e->qp, &wr, &bad);
	return ret ? fail("ibv_post_send (atomic): %s", strerror(ret)) : 0;
}

static int post_recv(struct end *e, uint64_t wr_id, struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = sg, .num_sge = nsge}, *bad;
	int ret = ibv_post_recv(e->qp, &wr, &bad);

	return ret ? fail("ibv_post_recv: %s", strerror(ret)) : 0;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static int check_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			return fail("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i],
				    want[i]);
	return 0;
}

static struct ibv_context *ctx_a, *ctx_b;

#define FULL_ACCESS                                                                  \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC)

/* A pair of connected QPs, one per device; B's MR gets b_access. */
static int pair_up(struct end *a, struct end *b, int b_access, const struct conn_opts *o)
{
	if (end_init(a, ctx_a, FULL_ACCESS) || end_init(b, ctx_b, b_access))
		return -1;
	if (qp_connect(a, b, o) || qp_connect(b, a, o))
		return -1;
	return 0;
}

static int case_write(struct end *a, struct end *b)
{
	const size_t len = 100000;
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey};

	fill(a->buf, len, 1);
	if (post(a, IBV_WR_RDMA_WRITE, 1, &sg, 1, (uintptr_t)b->buf + 4096, b->mr->rkey, 0) ||
	    expect_wc(a->cq, 1, IBV_WC_SUCCESS, NULL, 10))
		return -1;
	if (check_bytes(b->buf + 4096, a->buf, len, "written data"))
		return -1;
	/* bytes around the target are untouched */
	for (size_t i = 0; i < 4096; i++)
		if (b->buf[i] || b->buf[4096 + len + i])
			return fail("WRITE touched bytes outside its range");
	return 0;
}

static int case_read(struct end *a, struct end *b)
{
	const size_t len = 70001;
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf + 8, .length = len, .lkey = a->mr->lkey};
	struct ibv_wc wc = {0};

	fill(b->buf, BUF_BYTES, 2);
	if (post(a, IBV_WR_RDMA_READ, 2, &sg, 1, (uintptr_t)b->buf + 333, b->mr->rkey, 0) ||
	    expect_wc(a->cq, 2, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.opcode != IBV_WC_RDMA_READ)
		return fail("READ completion opcode %d", wc.opcode);
	return check_bytes(a->buf + 8, b->buf + 333, len, "read data");
}

static int case_send_imm(struct end *a, struct end *b)
{
	const size_t len = 5000;
	struct ibv_sge rs = {.addr = (uintptr_t)b->buf, .length = 8192, .lkey = b->mr->lkey};
	struct ibv_sge ss = {.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey};
	struct ibv_wc wc = {0};

	fill(a->buf, len, 3);
	if (post_recv(b, 77, &rs, 1) ||
	    post(a, IBV_WR_SEND_WITH_IMM, 3, &ss, 1, 0, 0, htonl(0x12345678)) ||
	    expect_wc(a->cq, 3, IBV_WC_SUCCESS, NULL, 10) ||
	    expect_wc(b->cq, 77, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.opcode != IBV_WC_RECV || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
	    wc.imm_data != htonl(0x12345678) || wc.byte_len != len || wc.qp_num != b->qp->qp_num)
		return fail("receive completion: opcode %d flags 0x%x imm 0x%x len %u qp %u",
			    wc.opcode, wc.wc_flags, ntohl(wc.imm_data), wc.byte_len, wc.qp_num);
	return check_bytes(b->buf, a->buf, len, "received data");
}

static int case_write_imm(struct end *a, struct end *b)
{
	const size_t len = 3000;
	struct ibv_sge rs = {.addr = (uintptr_t)b->buf, .length = 16, .lkey = b->mr->lkey};
	struct ibv_sge ss = {.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey};
	struct ibv_wc wc = {0};

	fill(a->buf, len, 4);
	if (post_recv(b, 78, &rs, 1) ||
	    post(a, IBV_WR_RDMA_WRITE_WITH_IMM, 4, &ss, 1, (uintptr_t)b->buf + 65536, b->mr->rkey,
		 htonl(0xabcdef01)) ||
	    expect_wc(a->cq, 4, IBV_WC_SUCCESS, NULL, 10) ||
	    expect_wc(b->cq, 78, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
	    wc.imm_data != htonl(0xabcdef01))
		return fail("WRITE_WITH_IMM completion: opcode %d flags 0x%x imm 0x%x", wc.opcode,
			    wc.wc_flags, ntohl(wc.imm_data));
	return check_bytes(b->buf + 65536, a->buf, len, "written data");
}

static int case_atomics(struct end *a, struct end *b)
{
	uint64_t *target = (uint64_t *)(b->buf + 128);
	uint64_t *result = (uint64_t *)(a->buf + 256);
	uint64_t raddr = (uintptr_t)target;

	*target = 100;
	if (post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 5, result, raddr, b->mr->rkey, 100, 200) ||
	    expect_wc(a->cq, 5, IBV_WC_SUCCESS, NULL, 10))
		return -1;
	if (*result != 100 || *target != 200)
		return fail("CMP_AND_SWP (match): returned %" PRIu64 ", memory %" PRIu64, *result,
			    *target);
	if (post_atomic(a, IBV_WR_ATOMIC_CMP_AND_SWP, 6, result, raddr, b->mr->rkey, 100, 300) ||
	    expect_wc(a->cq, 6, IBV_WC_SUCCESS, NULL, 10))
		return -1;
	if (*result != 200 || *target != 200)
		return fail("CMP_AND_SWP (mismatch): returned %" PRIu64 ", memory %" PRIu64,
			    *result, *target);
	if (post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 7, result, raddr, b->mr->rkey, 5, 0) ||
	    expect_wc(a->cq, 7, IBV_WC_SUCCESS, NULL, 10))
		return -1;
	if (*result != 200 || *target != 205)
		return fail("FETCH_AND_ADD: returned %" PRIu64 ", memory %" PRIu64, *result,
			    *target);
	return 0;
}

static int case_sge(struct end *a, struct end *b)
{
	struct ibv_sge ss[3] = {
	    {.addr = (uintptr_t)a->buf + 10, .length = 1000, .lkey = a->mr->lkey},
	    {.addr = (uintptr_t)a->buf + 50000, .length = 3000, .lkey = a->mr->lkey},
	    {.addr = (uintptr_t)a->buf + 9000, .length = 7, .lkey = a->mr->lkey},
	};
	struct ibv_sge rs[2] = {
	    {.addr = (uintptr_t)b->buf + 100, .length = 2500, .lkey = b->mr->lkey},
	    {.addr = (uintptr_t)b->buf + 200000, .length = 5000, .lkey = b->mr->lkey},
	};
	uint8_t want[4007];
	struct ibv_wc wc = {0};

	fill(a->buf, 60000, 5);
	memcpy(want, a->buf + 10, 1000);
	memcpy(want + 1000, a->buf + 50000, 3000);
	memcpy(want + 4000, a->buf + 9000, 7);
	if (post_recv(b, 79, rs, 2) || post(a, IBV_WR_SEND, 8, ss, 3, 0, 0, 0) ||
	    expect_wc(a->cq, 8, IBV_WC_SUCCESS, NULL, 10) ||
	    expect_wc(b->cq, 79, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.byte_len != sizeof(want))
		return fail("byte_len %u, expected %zu", wc.byte_len, sizeof(want));
	if (check_bytes(b->buf + 100, want, 2500, "first receive SGE") ||
	    check_bytes(b->buf + 200000, want + 2500, sizeof(want) - 2500, "second receive SGE"))
		return -1;
	return 0;
}

/* After an error completion: QP in ERR, the next WR flushes. */
static int expect_error_then_flush(struct end *a, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 8, .lkey = a->mr->lkey};

	if (expect_wc(a->cq, wr_id, st, NULL, 30))
		return -1;
	if (ibv_query_qp(a->qp, &qa, IBV_QP_STATE, &qia))
		return fail("ibv_query_qp: %s", strerror(errno));
	if (qa.qp_state != IBV_QPS_ERR)
		return fail("QP state %d after %s, expected ERR", qa.qp_state,
			    ibv_wc_status_str(st));
	if (post(a, IBV_WR_SEND, wr_id + 1, &sg, 1, 0, 0, 0))
		return -1;
	return expect_wc(a->cq, wr_id + 1, IBV_WC_WR_FLUSH_ERR, NULL, 10);
}

static int case_bad_rkey(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 64, .lkey = a->mr->lkey};

	if (post(a, IBV_WR_RDMA_WRITE, 10, &sg, 1, (uintptr_t)b->buf, b->mr->rkey ^ 0x5a5a00, 0))
		return -1;
	return expect_error_then_flush(a, 10, IBV_WC_REM_ACCESS_ERR);
}

static int case_out_of_range(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 4096, .lkey = a->mr->lkey};

	if (post(a, IBV_WR_RDMA_READ, 20, &sg, 1, (uintptr_t)b->buf + BUF_BYTES - 100, b->mr->rkey,
		 0))
		return -1;
	return expect_error_then_flush(a, 20, IBV_WC_REM_ACCESS_ERR);
}

static int case_no_remote_write(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 64, .lkey = a->mr->lkey};

	if (post(a, IBV_WR_RDMA_WRITE, 30, &sg, 1, (uintptr_t)b->buf, b->mr->rkey, 0))
		return -1;
	if (expect_error_then_flush(a, 30, IBV_WC_REM_ACCESS_ERR))
		return -1;
	for (int i = 0; i < 64; i++)
		if (b->buf[i])
			return fail("WRITE without REMOTE_WRITE access changed memory");
	return 0;
}

static int case_peer_gone(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 64, .lkey = a->mr->lkey};
	double t0;

	/* The peer's QP disappears: its RNIC drops every packet for the unknown QPN. */
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
	t0 = now_s();
	if (post(a, IBV_WR_RDMA_WRITE, 40, &sg, 1, (uintptr_t)b->buf, b->mr->rkey, 0))
		return -1;
	if (expect_error_then_flush(a, 40, IBV_WC_RETRY_EXC_ERR))
		return -1;
	/* retry_cnt 2, timeout 12 (16.8 ms): three transmissions, at least ~50 ms */
	if (now_s() - t0 < 0.045)
		return fail("RETRY_EXC_ERR after %.1f ms: fewer retries than retry_cnt allows",
			    (now_s() - t0) * 1e3);
	return 0;
}

static int case_rnr(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 64, .lkey = a->mr->lkey};

	(void)b; /* b posts no receive */
	if (post(a, IBV_WR_SEND, 50, &sg, 1, 0, 0, 0))
		return -1;
	return expect_error_then_flush(a, 50, IBV_WC_RNR_RETRY_EXC_ERR);
}

/* ---- memory windows (IBA 10.6.7) ------------------------------------------------ */

#define MW_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)

/* rdma-core's ibv_inc_rkey: the next key variant of an R_Key. */
static uint32_t next_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

/* Post a type 2 bind on e's QP (IBV_WR_BIND_MW); 0 or the posting error. */
static int post_bind2(struct end *e, uint64_t wr_id, struct ibv_mw *mw, uint32_t rkey,
		      struct ibv_mr *mr, uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = {.wr_id = wr_id,
				 .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	return ibv_post_send(e->qp, &wr, &bad);
}

static int post_inv(struct end *e, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t rkey,
		    struct ibv_sge *sg, int nsge)
{
	struct ibv_send_wr wr = {.wr_id = wr_id,
				 .sg_list = sg,
				 .num_sge = nsge,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .invalidate_rkey = rkey},
			   *bad;
	int ret = ibv_post_send(e->qp, &wr, &bad);

	return ret ? fail("ibv_post_send (%s): %s",
			  op == IBV_WR_LOCAL_INV ? "LOCAL_INV" : "SEND_INV", strerror(ret))
		   : 0;
}

/*
 * A type 2 window over part of an MR without remote access: WRITE and READ
 * through it land in the window; dereg of its MR is refused while it is
 * bound; SEND with Invalidate of its key completes on B with
 * IBV_WC_WITH_INV and the key; the next WRITE through it fails with
 * IBV_WC_REM_ACCESS_ERR and changes nothing.
 */
static int case_mw_type2(struct end *a, struct end *b)
{
	const size_t off = 4096, wlen = 65536, len = 10000;
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey};
	struct ibv_sge rs = {.addr = (uintptr_t)b->buf + 200000, .length = 64, .lkey = b->mr->lkey};
	struct ibv_sge rd = {
	    .addr = (uintptr_t)a->buf + 300000, .length = 512, .lkey = a->mr->lkey};
	uint64_t base = (uintptr_t)b->buf + off;
	struct ibv_device_attr da;
	struct ibv_mw *mw;
	struct ibv_wc wc = {0};
	uint32_t rkey;
	int ret;

	if (ibv_query_device(b->ctx, &da))
		return fail("ibv_query_device: %s", strerror(errno));
	if (!(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) ||
	    !(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) || da.max_mw < 1)
		return fail("device caps 0x%x max_mw %d: no type 2B memory windows",
			    da.device_cap_flags, da.max_mw);
	mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	if (!mw)
		return fail("ibv_alloc_mw: %s", strerror(errno));
	rkey = next_rkey(mw->rkey);
	ret = post_bind2(b, 100, mw, rkey, b->mr, base, wlen,
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (ret)
		return fail("bind: %s", strerror(ret));
	if (expect_wc(b->cq, 100, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.opcode != IBV_WC_BIND_MW)
		return fail("bind completion opcode %d", wc.opcode);
	ret = ibv_dereg_mr(b->mr);
	if (ret != EINVAL)
		return fail("ibv_dereg_mr of an MR with a bound window: %s, expected EINVAL",
			    strerror(ret));
	fill(a->buf, len, 9);
	if (post(a, IBV_WR_RDMA_WRITE, 101, &sg, 1, base + 1000, rkey, 0) ||
	    expect_wc(a->cq, 101, IBV_WC_SUCCESS, NULL, 10) ||
	    check_bytes(b->buf + off + 1000, a->buf, len, "written through the window"))
		return -1;
	if (post(a, IBV_WR_RDMA_READ, 102, &rd, 1, base + 1000, rkey, 0) ||
	    expect_wc(a->cq, 102, IBV_WC_SUCCESS, NULL, 10) ||
	    check_bytes(a->buf + 300000, a->buf, 512, "read through the window"))
		return -1;
	sg.length = 64;
	if (post_recv(b, 103, &rs, 1) || post_inv(a, IBV_WR_SEND_WITH_INV, 104, rkey, &sg, 1) ||
	    expect_wc(a->cq, 104, IBV_WC_SUCCESS, NULL, 10) ||
	    expect_wc(b->cq, 103, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.opcode != IBV_WC_RECV || !(wc.wc_flags & IBV_WC_WITH_INV) ||
	    wc.invalidated_rkey != rkey || wc.byte_len != 64)
		return fail(
		    "SEND_WITH_INV receive: opcode %d flags 0x%x rkey 0x%x (want 0x%x) len %u",
		    wc.opcode, wc.wc_flags, wc.invalidated_rkey, rkey, wc.byte_len);
	/* The window is dead: nothing is written, and the QPs go to ERR. */
	memset(b->buf + off, 0, 64);
	if (post(a, IBV_WR_RDMA_WRITE, 105, &sg, 1, base, rkey, 0) ||
	    expect_error_then_flush(a, 105, IBV_WC_REM_ACCESS_ERR))
		return -1;
	for (int i = 0; i < 64; i++)
		if (b->buf[off + i])
			return fail("a WRITE through an invalidated window changed memory");
	if ((ret = ibv_dealloc_mw(mw)))
		return fail("ibv_dealloc_mw: %s", strerror(ret));
	return 0;
}

/*
 * Type 1: bound by ibv_bind_mw, which rolls the key variant; a WRITE
 * through it works, a rebind to zero length leaves a window that grants
 * nothing (IBV_WC_REM_ACCESS_ERR), and the old key variant is dead.
 */
static int case_mw_type1(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 4096, .lkey = a->mr->lkey};
	struct ibv_mw_bind bind = {.wr_id = 110, .send_flags = IBV_SEND_SIGNALED};
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_1);
	uint32_t before;
	struct ibv_wc wc = {0};
	int ret;

	if (!mw)
		return fail("ibv_alloc_mw: %s", strerror(errno));
	before = mw->rkey;
	bind.bind_info.mr = b->mr;
	bind.bind_info.addr = (uintptr_t)b->buf;
	bind.bind_info.length = BUF_BYTES;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if ((ret = ibv_bind_mw(b->qp, mw, &bind)))
		return fail("ibv_bind_mw: %s", strerror(ret));
	if (mw->rkey != next_rkey(before))
		return fail("rkey 0x%x after the bind, expected 0x%x", mw->rkey, next_rkey(before));
	if (expect_wc(b->cq, 110, IBV_WC_SUCCESS, &wc, 10))
		return -1;
	if (wc.opcode != IBV_WC_BIND_MW)
		return fail("bind completion opcode %d", wc.opcode);
	fill(a->buf, 4096, 10);
	if (post(a, IBV_WR_RDMA_WRITE, 111, &sg, 1, (uintptr_t)b->buf + 8, mw->rkey, 0) ||
	    expect_wc(a->cq, 111, IBV_WC_SUCCESS, NULL, 10) ||
	    check_bytes(b->buf + 8, a->buf, 4096, "written through the type 1 window"))
		return -1;
	/* Rebind to nothing (pyverbs' way of invalidating a type 1 window). */
	before = mw->rkey;
	bind.wr_id = 112;
	bind.bind_info.length = 0;
	bind.bind_info.mw_access_flags = 0;
	if ((ret = ibv_bind_mw(b->qp, mw, &bind)) ||
	    expect_wc(b->cq, 112, IBV_WC_SUCCESS, NULL, 10))
		return ret ? fail("ibv_bind_mw (length 0): %s", strerror(ret)) : -1;
	if (mw->rkey != next_rkey(before))
		return fail("rkey not rolled by the rebind");
	if (post(a, IBV_WR_RDMA_WRITE, 113, &sg, 1, (uintptr_t)b->buf + 8, mw->rkey, 0) ||
	    expect_error_then_flush(a, 113, IBV_WC_REM_ACCESS_ERR))
		return -1;
	if ((ret = ibv_dealloc_mw(mw)))
		return fail("ibv_dealloc_mw: %s", strerror(ret));
	return 0;
}

/* A zero-based type 2 window: the remote address is an offset into it. */
static int case_mw_zero_based(struct end *a, struct end *b)
{
	struct ibv_sge sg = {.addr = (uintptr_t)a->buf, .length = 3000, .lkey = a->mr->lkey};
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	uint32_t rkey;
	int ret;

	if (!mw)
		return fail("ibv_alloc_mw: %s", strerror(errno));
	rkey = next_rkey(mw->rkey);
	if ((ret = post_bind2(b, 120, mw, rkey, b->mr, (uintptr_t)b->buf + 8192, 8192,
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED)))
		return fail("bind: %s", strerror(ret));
	if (expect_wc(b->cq, 120, IBV_WC_SUCCESS, NULL, 10))
		return -1;
	fill(a->buf, 3000, 11);
	if (post(a, IBV_WR_RDMA_WRITE, 121, &sg, 1, 100, rkey, 0) ||
	    expect_wc(a->cq, 121, IBV_WC_SUCCESS, NULL, 10) ||
	    check_bytes(b->buf + 8192 + 100, a->buf, 3000, "written at offset 100 of the window"))
		return -1;
	/* LOCAL_INV on B, then the key is dead. */
	if (post_inv(b, IBV_WR_LOCAL_INV, 122, rkey, NULL, 0) ||
	    expect_wc(b->cq, 122, IBV_WC_SUCCESS, NULL, 10))
		return -1;
	if (post(a, IBV_WR_RDMA_WRITE, 123, &sg, 1, 100, rkey, 0) ||
	    expect_error_then_flush(a, 123, IBV_WC_REM_ACCESS_ERR))
		return -1;
	return ibv_dealloc_mw(mw) ? fail("ibv_dealloc_mw") : 0;
}

/* Back to RTS after an error completion moved the QP to ERR. */
static int requeue(struct end *e, struct end *peer)
{
	static const struct conn_opts o = {7, 7, 14, 1, IBV_MTU_1024};
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_RESET};
	int ret = ibv_modify_qp(e->qp, &qa, IBV_QP_STATE);

	return ret ? fail("modify to RESET: %s", strerror(ret)) : qp_connect(e, peer, &o);
}

/* A bind or invalidation the RNIC refuses: IBV_WC_MW_BIND_ERR, QP to ERR. */
static int expect_mw_err(struct end *b, struct end *a, uint64_t wr_id, const char *what)
{
	struct ibv_wc wc = {0};

	if (poll_one(b->cq, &wc, 10))
		return -1;
	if (wc.wr_id != wr_id || wc.status != IBV_WC_MW_BIND_ERR)
		return fail("%s: wr_id %" PRIu64 " status %s, expected memory management error",
			    what, wc.wr_id, ibv_wc_status_str(wc.status));
	return requeue(b, a);
}

/* The rules of IBA 10.6.7 that refuse a bind or an invalidation, and the verbs' errors. */
static int case_mw_rules(struct end *a, struct end *b)
{
	struct ibv_mr *nobind = b->mr, *nolocal;
	struct ibv_mw *mw2 = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = ibv_alloc_mw(b->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {.wr_id = 1};
	struct ibv_mr *mr;
	int ret;

	if (!mw1 || !mw2)
		return fail("ibv_alloc_mw: %s", strerror(errno));
	if (ibv_alloc_mw(b->pd, (enum ibv_mw_type)3) || errno != EINVAL)
		return fail("ibv_alloc_mw of type 3: %s, expected EINVAL", strerror(errno));
	mr = ibv_reg_mr(b->pd, b->buf, 65536, MW_MR_ACCESS);
	nolocal = ibv_reg_mr(b->pd, b->buf + 65536, 65536, IBV_ACCESS_MW_BIND);
	if (!mr || !nolocal)
		return fail("ibv_reg_mr with MW_BIND: %s", strerror(errno));
	/* C10-73: the MR must allow MW_BIND. */
	if ((ret = post_bind2(b, 130, mw2, next_rkey(mw2->rkey), nobind, (uintptr_t)b->buf, 4096,
			      IBV_ACCESS_REMOTE_WRITE)) ||
	    expect_mw_err(b, a, 130, "bind over an MR without MW_BIND"))
		return ret ? fail("post: %s", strerror(ret)) : -1;
	/* C10-74: remote write through a window needs local write on the MR. */
	if ((ret = post_bind2(b, 131, mw2, next_rkey(mw2->rkey), nolocal, (uintptr_t)b->buf + 65536,
			      4096, IBV_ACCESS_REMOTE_WRITE)) ||
	    expect_mw_err(b, a, 131, "remote write window over an MR without local write"))
		return ret ? fail("post: %s", strerror(ret)) : -1;
	/* C10-75: inside the MR. */
	if ((ret = post_bind2(b, 132, mw2, next_rkey(mw2->rkey), mr, (uintptr_t)b->buf + 65000,
			      4096, IBV_ACCESS_REMOTE_WRITE)) ||
	    expect_mw_err(b, a, 132, "window beyond its MR"))
		return ret ? fail("post: %s", strerror(ret)) : -1;
	/* The key index is the window's. */
	if ((ret = post_bind2(b, 133, mw2, mw2->rkey + 0x100, mr, (uintptr_t)b->buf, 4096,
			      IBV_ACCESS_REMOTE_WRITE)) ||
	    expect_mw_err(b, a, 133, "bind with another window's key index"))
		return ret ? fail("post: %s", strerror(ret)) : -1;
	/* o10-37.2.26: a type 1 window is not invalidated; nor is an ibv_reg_mr MR. */
	if (post_inv(b, IBV_WR_LOCAL_INV, 134, mw1->rkey, NULL, 0) ||
	    expect_mw_err(b, a, 134, "LOCAL_INV of a type 1 window"))
		return -1;
	if (post_inv(b, IBV_WR_LOCAL_INV, 135, mr->rkey, NULL, 0) ||
	    expect_mw_err(b, a, 135, "LOCAL_INV of an MR"))
		return -1;
	/* Refused when posted: a type 1 window through IBV_WR_BIND_MW, a type 2
	 * one through ibv_bind_mw, a zero-based type 1 window. */
	if ((ret = post_bind2(b, 136, mw1, next_rkey(mw1->rkey), mr, (uintptr_t)b->buf, 4096, 0)) !=
	    EINVAL)
		return fail("IBV_WR_BIND_MW of a type 1 window: %s, expected EINVAL",
			    strerror(ret));
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)b->buf;
	bind.bind_info.length = 4096;
	if ((ret = ibv_bind_mw(b->qp, mw2, &bind)) != EINVAL)
		return fail("ibv_bind_mw of a type 2 window: %s, expected EINVAL", strerror(ret));
	bind.bind_info.mw_access_flags = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_REMOTE_READ;
	if ((ret = ibv_bind_mw(b->qp, mw1, &bind)) != EINVAL)
		return fail("zero-based type 1 bind: %s, expected EINVAL", strerror(ret));
	/* A bound window holds its MR: dereg is EINVAL until the window goes. */
	if ((ret = post_bind2(b, 137, mw2, next_rkey(mw2->rkey), mr, (uintptr_t)b->buf, 4096,
			      IBV_ACCESS_REMOTE_READ)) ||
	    expect_wc(b->cq, 137, IBV_WC_SUCCESS, NULL, 10))
		return ret ? fail("post: %s", strerror(ret)) : -1;
	/* o10-37.2.30: a bound type 2 window is not bound again before invalidation. */
	if ((ret = post_bind2(b, 138, mw2, next_rkey(next_rkey(mw2->rkey)), mr, (uintptr_t)b->buf,
			      4096, IBV_ACCESS_REMOTE_READ)) ||
	    expect_mw_err(b, a, 138, "second bind of a bound type 2 window"))
		return ret ? fail("post: %s", strerror(ret)) : -1;
	if ((ret = ibv_dereg_mr(mr)) != EINVAL)
		return fail("ibv_dereg_mr with a bound window: %s, expected EINVAL", strerror(ret));
	if ((ret = ibv_dealloc_mw(mw2)) || (ret = ibv_dereg_mr(mr)) ||
	    (ret = ibv_dereg_mr(nolocal)) || (ret = ibv_dealloc_mw(mw1)))
		return fail("release: %s", strerror(ret));
	return 0;
}

struct rc_case {
	const char *name;
	int (*run)(struct end *a, struct end *b);
	int b_access;
	struct conn_opts opts;
};

int main(int argc, char **argv)
{
	static const struct rc_case cases[] = {
	    {"write", case_write, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"read", case_read, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_4096}},
	    {"send_imm", case_send_imm, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_256}},
	    {"write_imm", case_write_imm, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_512}},
	    {"atomics", case_atomics, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"sge", case_sge, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"bad_rkey", case_bad_rkey, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"out_of_range", case_out_of_range, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"no_remote_write",
	     case_no_remote_write,
	     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	     {7, 7, 14, 1, IBV_MTU_1024}},
	    {"peer_gone", case_peer_gone, FULL_ACCESS, {2, 7, 12, 1, IBV_MTU_1024}},
	    /* Timeout 18 (1.07 s), not 14 (67 ms): a machine that stalls the
	     * responder for a while (a loaded CI host) must not turn the lone
	     * SEND into retransmissions by timeout before its RNR NAKs come. */
	    {"rnr", case_rnr, FULL_ACCESS, {7, 2, 18, 1, IBV_MTU_1024}},
	    {"mw_type2", case_mw_type2, MW_MR_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"mw_type1", case_mw_type1, MW_MR_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"mw_zero_based", case_mw_zero_based, MW_MR_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	    {"mw_rules", case_mw_rules, FULL_ACCESS, {7, 7, 14, 1, IBV_MTU_1024}},
	};
	int failed = 0, ran = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV_A DEV_B [CASE...]\n", argv[0]);
		return 2;
	}
	ctx_a = open_dev(argv[1]);
	ctx_b = open_dev(argv[2]);
	if (!ctx_a || !ctx_b) {
		fprintf(stderr, "%s: cannot open %s and %s\n", argv[0], argv[1], argv[2]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rc_case *c = &cases[i];
		struct end a, b;
		int wanted = argc == 3, ret;

		for (int j = 3; j < argc; j++)
			wanted |= !strcmp(argv[j], c->name);
		if (!wanted)
			continue;
		failure[0] = 0;
		ret = pair_up(&a, &b, c->b_access, &c->opts);
		if (!ret)
			ret = c->run(&a, &b);
		printf("%-16s %s%s%s\n", c->name, ret ? "FAIL" : "ok", ret ? ": " : "", failure);
		fflush(stdout);
		failed += ret != 0;
		ran++;
		end_fini(&a);
		end_fini(&b);
	}
	ibv_close_device(ctx_a);
	ibv_close_device(ctx_b);
	printf("%d of %d cases passed\n", ran - failed, ran);
	return failed ? 1 : 0;
}
