// SPDX-License-Identifier: MIT
/*
 * flush INITIATOR TARGET: IBA A19 FLUSH between two RNICs through the verbs
 * ABI that a program built against rdma-core 45 or later uses. rdma-core 44's
 * headers, which this program is built with, have no ibv_wr_flush: 45 added
 * it as a member of struct ibv_qp_ex right after wr_atomic_write (44's last
 * member), with IBV_QP_EX_WITH_FLUSH (1 << 11), IBV_WR_FLUSH (14),
 * IBV_WC_FLUSH (8), the placement types IBV_FLUSH_GLOBAL/PERSISTENT, the
 * selectivity levels IBV_FLUSH_RANGE/MR, the MR access bits
 * IBV_ACCESS_FLUSH_GLOBAL/PERSISTENT and the device capabilities
 * IB_UVERBS_DEVICE_FLUSH_GLOBAL/PERSISTENT (bits 38/39 of
 * device_cap_flags_ex). struct qp_ex45 below restates that layout; calling
 * through it is exactly what 45's inline ibv_wr_flush() compiles to.
 *
 * Checks: the capability (global visibility offered, persistence not), MR
 * registration with the flush bits (persistent refused with EOPNOTSUPP, as
 * the kernel refuses a placement type the device lacks), send_ops_flags
 * (FLUSH on RC, refused on UD), a WRITE of 64 KiB then a FLUSH of its range
 * whose completion (IBV_WC_FLUSH) comes with the data in the target's
 * memory, a FLUSH of the whole MR, of an ODP MR, ibv_post_send refusing IBV_WR_FLUSH (no
 * place for type and level in ibv_send_wr), a malformed ibv_wr_flush
 * refused at ibv_wr_complete, and the remote errors, each on a fresh pair:
 * an MR without flush access, a range beyond the MR, persistence, a target
 * QP whose access flags lack the flush bit.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_test.h"

/* rdma-core 45's values (libibverbs/verbs.h, kernel-headers/rdma/ib_user_verbs.h). */
#define V45_QP_EX_WITH_FLUSH (1ull << 11)
#define V45_WR_FLUSH 14
#define V45_WC_FLUSH 8
#define V45_FLUSH_GLOBAL 1
#define V45_FLUSH_PERSISTENT 2
#define V45_FLUSH_RANGE 0
#define V45_FLUSH_MR 1
#define V45_ACCESS_FLUSH_GLOBAL (1 << 8)
#define V45_ACCESS_FLUSH_PERSISTENT (1 << 9)
#define V45_DEVICE_FLUSH_GLOBAL (1ull << 38)
#define V45_DEVICE_FLUSH_PERSISTENT (1ull << 39)
/* enum ibv_odp_transport_cap_bits of rdma-core 50. */
#define V50_ODP_SUPPORT_FLUSH (1 << 6)

/* rdma-core 45's struct ibv_qp_ex: 44's, then wr_flush. */
struct qp_ex45 {
	struct ibv_qp_ex base;
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
			 uint8_t type, uint8_t level);
};

/* What rdma-core 45's ibv_wr_flush() is. */
static void wr_flush45(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, size_t len, uint8_t type,
		       uint8_t level)
{
	((struct qp_ex45 *)(void *)qx)->wr_flush(qx, rkey, addr, len, type, level);
}

#define BYTES (64 * 1024)

static struct ibv_context *ictx, *tctx;
static struct ibv_pd *ipd, *tpd;
static union ibv_gid igid, tgid;
static char *src, *dst;
static struct ibv_mr *smr;

/* RESET -> INIT -> RTR -> RTS towards QP dest at GID g. */
static int connect_qp(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *g, int access)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access};

	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *g;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

struct pair {
	struct ibv_cq *cq, *tcq;
	struct ibv_qp *qp, *tqp;
	struct ibv_qp_ex *x;
};

/* An initiator QP with the ibv_wr_* API (WRITE, FLUSH) and a target QP
 * whose access flags are taccess. 0 or -1. */
static int pair_make(struct pair *p, int taccess)
{
	struct ibv_qp_init_attr_ex qa = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 16, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1},
	    .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	    .pd = ipd,
	    .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | V45_QP_EX_WITH_FLUSH};
	struct ibv_qp_init_attr ta = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1}};

	memset(p, 0, sizeof(*p));
	p->cq = ibv_create_cq(ictx, 32, NULL, NULL, 0);
	p->tcq = ibv_create_cq(tctx, 8, NULL, NULL, 0);
	if (!p->cq || !p->tcq)
		return -1;
	qa.send_cq = qa.recv_cq = p->cq;
	ta.send_cq = ta.recv_cq = p->tcq;
	p->qp = ibv_create_qp_ex(ictx, &qa);
	p->tqp = ibv_create_qp(tpd, &ta);
	p->x = p->qp ? ibv_qp_to_qp_ex(p->qp) : NULL;
	if (!p->x || !p->tqp)
		return -1;
	return connect_qp(p->qp, p->tqp->qp_num, &tgid, 0) ||
		       connect_qp(p->tqp, p->qp->qp_num, &igid, taccess)
		   ? -1
		   : 0;
}

static void pair_free(struct pair *p)
{
	if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->tqp)
		ibv_destroy_qp(p->tqp);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->tcq)
		ibv_destroy_cq(p->tcq);
}

static struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	for (long i = 0; i < 200000000; i++)
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
	check(0, "no completion");
	return wc;
}

/* One signaled FLUSH; ibv_wr_complete's answer. */
static int flush(struct pair *p, uint32_t rkey, void *addr, size_t len, uint8_t type, uint8_t level,
		 uint64_t wr_id)
{
	ibv_wr_start(p->x);
	p->x->wr_id = wr_id;
	p->x->wr_flags = IBV_SEND_SIGNALED;
	wr_flush45(p->x, rkey, (uintptr_t)addr, len, type, level);
	return ibv_wr_complete(p->x);
}

/* A FLUSH that the target refuses: the initiator's completion has status want. */
static void flush_refused(const char *what, int taccess, struct ibv_mr *m, size_t off, size_t len,
			  uint8_t type, uint8_t level, enum ibv_wc_status want)
{
	struct pair p;
	struct ibv_wc wc;

	if (pair_make(&p, taccess)) {
		check(0, "%s: pair: %s", what, strerror(errno));
		pair_free(&p);
		return;
	}
	check(!flush(&p, m->rkey, (char *)m->addr + off, len, type, level, 9), "%s: posted", what);
	wc = wait_wc(p.cq);
	check(wc.status == want && wc.opcode == V45_WC_FLUSH, "%s: %s, opcode %d (want %s, %d)",
	      what, ibv_wc_status_str(wc.status), wc.opcode, ibv_wc_status_str(want), V45_WC_FLUSH);
	pair_free(&p);
}

int main(int argc, char **argv)
{
	const int fl = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_init_attr_ex ud = {
	    .qp_type = IBV_QPT_UD,
	    .cap = {.max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1},
	    .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	    .send_ops_flags = V45_QP_EX_WITH_FLUSH};
	struct ibv_device_attr_ex dx;
	struct ibv_mr *tmr, *plain, *pmr;
	struct ibv_qp *q;
	struct ibv_wc wc;
	struct pair p;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: flush INITIATOR TARGET\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ictx = open_dev(argv[1]);
	tctx = open_dev(argv[2]);
	ipd = ictx ? ibv_alloc_pd(ictx) : NULL;
	tpd = tctx ? ibv_alloc_pd(tctx) : NULL;
	src = malloc(BYTES);
	dst = calloc(1, BYTES);
	if (!ipd || !tpd || !src || !dst || ibv_query_gid(ictx, 1, 0, &igid) ||
	    ibv_query_gid(tctx, 1, 0, &tgid)) {
		fprintf(stderr, "flush: set-up on %s and %s failed\n", argv[1], argv[2]);
		return 1;
	}
	for (int i = 0; i < BYTES; i++)
		src[i] = (char)(i * 7 + 3);
	smr = ibv_reg_mr(ipd, src, BYTES, IBV_ACCESS_LOCAL_WRITE);

	memset(&dx, 0, sizeof(dx));
	check(!ibv_query_device_ex(tctx, NULL, &dx) &&
		  dx.device_cap_flags_ex & V45_DEVICE_FLUSH_GLOBAL &&
		  !(dx.device_cap_flags_ex & V45_DEVICE_FLUSH_PERSISTENT),
	      "IB_UVERBS_DEVICE_FLUSH_GLOBAL offered, _PERSISTENT not (device_cap_flags_ex 0x%llx)",
	      (unsigned long long)dx.device_cap_flags_ex);

	/* MR registration with the flush bits. */
	pmr = ibv_reg_mr(tpd, dst, BYTES, fl | V45_ACCESS_FLUSH_PERSISTENT);
	check(!pmr && errno == EOPNOTSUPP, "ibv_reg_mr with IBV_ACCESS_FLUSH_PERSISTENT: %s",
	      pmr ? "registered" : strerror(errno));
	tmr = ibv_reg_mr(tpd, dst, BYTES, fl | V45_ACCESS_FLUSH_GLOBAL);
	plain = ibv_reg_mr(tpd, dst, BYTES, fl);
	check(tmr && plain && smr, "ibv_reg_mr with IBV_ACCESS_FLUSH_GLOBAL, and without: %s",
	      tmr && plain ? "ok" : strerror(errno));
	if (!tmr || !plain || !smr)
		return 1;

	ud.pd = ipd;
	ud.send_cq = ud.recv_cq = ibv_create_cq(ictx, 4, NULL, NULL, 0);
	q = ibv_create_qp_ex(ictx, &ud);
	check(!q && errno == EOPNOTSUPP, "a UD QP with IBV_QP_EX_WITH_FLUSH: %s",
	      q ? "created" : strerror(errno));

	rc = pair_make(&p, fl | V45_ACCESS_FLUSH_GLOBAL);
	check(!rc, "RC pair with IBV_QP_EX_WITH_FLUSH, target QP with IBV_ACCESS_FLUSH_GLOBAL");
	if (rc)
		return 1;

	/* A WRITE (unsignaled) and a FLUSH of its range: the data is there when the FLUSH
	 * completes. */
	ibv_wr_start(p.x);
	p.x->wr_id = 1;
	p.x->wr_flags = 0;
	ibv_wr_rdma_write(p.x, tmr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(p.x, smr->lkey, (uintptr_t)src, BYTES);
	p.x->wr_id = 2;
	p.x->wr_flags = IBV_SEND_SIGNALED;
	wr_flush45(p.x, tmr->rkey, (uintptr_t)dst, BYTES, V45_FLUSH_GLOBAL, V45_FLUSH_RANGE);
	check(!ibv_wr_complete(p.x), "WRITE + FLUSH (range, global) posted");
	wc = wait_wc(p.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == V45_WC_FLUSH && wc.wr_id == 2,
	      "FLUSH completes: %s, opcode %d (IBV_WC_FLUSH %d), wr_id %llu",
	      ibv_wc_status_str(wc.status), wc.opcode, V45_WC_FLUSH, (unsigned long long)wc.wr_id);
	check(!memcmp(dst, src, BYTES), "the WRITE's %d bytes are in the target's memory", BYTES);

	/* The whole MR: the range is not looked at. */
	check(!flush(&p, tmr->rkey, NULL, 0, V45_FLUSH_GLOBAL, V45_FLUSH_MR, 3),
	      "FLUSH (MR, global) posted");
	wc = wait_wc(p.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == V45_WC_FLUSH && wc.wr_id == 3,
	      "FLUSH of the whole MR completes: %s", ibv_wc_status_str(wc.status));

	/* An ODP MR (IBV_ODP_SUPPORT_FLUSH in the RC ODP caps) is flushed like any other. */
	{
		struct ibv_mr *omr = ibv_reg_mr(
		    tpd, dst, BYTES, fl | IBV_ACCESS_ON_DEMAND | V45_ACCESS_FLUSH_GLOBAL);

		check(dx.odp_caps.per_transport_caps.rc_odp_caps & V50_ODP_SUPPORT_FLUSH,
		      "IBV_ODP_SUPPORT_FLUSH in rc_odp_caps (0x%x)",
		      dx.odp_caps.per_transport_caps.rc_odp_caps);
		check(omr &&
			  !flush(&p, omr->rkey, dst, 4096, V45_FLUSH_GLOBAL, V45_FLUSH_RANGE, 10),
		      "FLUSH of an ODP MR posted");
		wc = wait_wc(p.cq);
		check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 10, "and completes: %s",
		      ibv_wc_status_str(wc.status));
		if (omr)
			ibv_dereg_mr(omr);
	}

	/* Local misuse: nothing posted. */
	rc = flush(&p, tmr->rkey, dst, 64, 0, V45_FLUSH_RANGE, 4);
	check(rc == EINVAL, "ibv_wr_flush with no placement type: ibv_wr_complete %d (EINVAL)", rc);
	rc = flush(&p, tmr->rkey, dst, 64, V45_FLUSH_GLOBAL, 7, 4);
	check(rc == EINVAL, "ibv_wr_flush with selectivity level 7: ibv_wr_complete %d (EINVAL)",
	      rc);
	{
		struct ibv_send_wr wr = {.opcode = V45_WR_FLUSH, .send_flags = IBV_SEND_SIGNALED},
				   *bw = NULL;

		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = tmr->rkey;
		check(ibv_post_send(p.qp, &wr, &bw) == EINVAL && bw == &wr,
		      "ibv_post_send with IBV_WR_FLUSH: EINVAL");
	}
	check(ibv_poll_cq(p.cq, 1, &wc) == 0, "nothing completed for them");
	/* Still usable after the refusals. */
	check(!flush(&p, tmr->rkey, dst + 100, 100, V45_FLUSH_GLOBAL, V45_FLUSH_RANGE, 5),
	      "FLUSH posted after them");
	wc = wait_wc(p.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 5, "and completes: %s",
	      ibv_wc_status_str(wc.status));
	pair_free(&p);

	/* Remote errors, each a class C error that ends its pair. */
	flush_refused("an MR without IBV_ACCESS_FLUSH_GLOBAL", fl | V45_ACCESS_FLUSH_GLOBAL, plain,
		      0, 64, V45_FLUSH_GLOBAL, V45_FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR);
	flush_refused("a range beyond the MR", fl | V45_ACCESS_FLUSH_GLOBAL, tmr, BYTES - 8, 64,
		      V45_FLUSH_GLOBAL, V45_FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR);
	flush_refused("persistence (no MR can have it)",
		      fl | V45_ACCESS_FLUSH_GLOBAL | V45_ACCESS_FLUSH_PERSISTENT, tmr, 0, 64,
		      V45_FLUSH_PERSISTENT, V45_FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR);
	flush_refused("a target QP without the flush access bit", fl, tmr, 0, 64, V45_FLUSH_GLOBAL,
		      V45_FLUSH_RANGE, IBV_WC_REM_INV_REQ_ERR);

	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
