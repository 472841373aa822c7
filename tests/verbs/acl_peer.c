/* SPDX-License-Identifier: MIT */
/*
 * acl_peer: a verbs program for the access-control tests (tests/e2e/acl.sh).
 *
 *   acl_peer numbers DEVICE NQP NMR
 *       creates NQP RC QPs and registers NMR MRs on DEVICE and prints one
 *       line per object, "qpn 0x%06x" and "rkey 0x%08x", in creation order
 *       (the test compares the numbering of two daemons and two seeds).
 *   acl_peer target DEV_A DEV_B
 *       connects an RC QP on DEV_A with one on DEV_B, each with a 4 KiB MR
 *       that allows remote writes and a posted receive; writes once each
 *       way so that both sides have heard their peer; then prints
 *       "ready qpn=0x.. psn=0x.. rkey=0x.. va=0x.." for A's QP (its next
 *       expected PSN, its MR) and waits for a line on stdin. Then it reports
 *       whether A's MR still holds what B wrote ("intact" or "overwritten")
 *       and whether A's receive completed ("no receive" or "received"),
 *       writes and sends once more from B ("peer write ok", "peer send ok":
 *       the real peer is still served) and exits 0 when all of that holds.
 *   acl_peer fork_reg DEVICE
 *       opens DEVICE and a PD, forks; the child's ibv_reg_mr on the
 *       inherited context must fail with EPERM ("child reg_mr: ..."), the
 *       parent's succeed afterwards ("parent reg_mr: registered").
 *   acl_peer qkey DEVICE QKEY
 *       moves a UD QP to INIT with QKEY and prints "qkey QKEY: ok" or the
 *       error (a controlled Q_Key needs CAP_NET_RAW).
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verbs_test.h"

#define BUF_BYTES 4096
#define PSN_A 0x4a11 /* A's first send PSN (= B's rq_psn) */
#define PSN_B 0x7b22 /* B's first send PSN (= A's rq_psn) */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
};

static int fail(const char *what)
{
	fprintf(stderr, "acl_peer: %s\n", what);
	return 1;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &ia);
}

static int numbers(const char *dev, int nqp, int nmr)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	static char buf[64 * 1024];

	if (!ctx)
		return fail("no such device");
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq)
		return fail("PD or CQ");
	for (int i = 0; i < nqp; i++) {
		struct ibv_qp *qp = rc_qp(pd, cq);

		if (!qp)
			return fail("create QP");
		printf("qpn 0x%06x\n", qp->qp_num);
	}
	for (int i = 0; i < nmr; i++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
					       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

		if (!mr)
			return fail("reg MR");
		printf("rkey 0x%08x\n", mr->rkey);
	}
	return 0; /* the daemon releases everything when we exit */
}

static int setup(struct end *e, const char *dev)
{
	e->ctx = open_dev(dev);
	if (!e->ctx)
		return fail("no such device");
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 32, NULL, NULL, 0) : NULL;
	e->qp = e->cq ? rc_qp(e->pd, e->cq) : NULL;
	e->buf = aligned_alloc(4096, BUF_BYTES);
	if (!e->qp || !e->buf)
		return fail("PD, CQ, QP or buffer");
	memset(e->buf, 0, BUF_BYTES);
	e->mr =
	    ibv_reg_mr(e->pd, e->buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr || ibv_query_gid(e->ctx, 1, 0, &e->gid))
		return fail("MR or GID");
	return 0;
}

static int connect_qp(struct end *e, const struct end *peer, uint32_t sq_psn, uint32_t rq_psn)
{
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_INIT,
	    .port_num = 1,
	    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("RTS");
	return 0;
}

/* One signaled WRITE (or SEND when rkey is 0) of len bytes at off, completed. */
static int post_wait(struct end *from, const struct end *to, size_t off, size_t len,
		     enum ibv_wr_opcode op)
{
	struct ibv_sge sge = {(uintptr_t)from->buf + off, (uint32_t)len, from->mr->lkey};
	struct ibv_send_wr wr =
			       {
				   .wr_id = 1,
				   .sg_list = &sge,
				   .num_sge = 1,
				   .opcode = op,
				   .send_flags = IBV_SEND_SIGNALED,
			       },
			   *bad;
	struct ibv_wc wc;
	time_t end = time(NULL) + 10;
	int n;

	wr.wr.rdma.remote_addr = (uintptr_t)to->buf + off;
	wr.wr.rdma.rkey = to->mr->rkey;
	if (ibv_post_send(from->qp, &wr, &bad))
		return fail("post_send");
	while ((n = ibv_poll_cq(from->cq, 1, &wc)) == 0 && time(NULL) < end)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		return fail("send completion");
	return 0;
}

static int post_recv(struct end *e, size_t off)
{
	struct ibv_sge sge = {(uintptr_t)e->buf + off, 256, e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(e->qp, &wr, &bad) ? fail("post_recv") : 0;
}

static int target(const char *dev_a, const char *dev_b)
{
	struct end a = {0}, b = {0};
	struct ibv_wc wc;
	char line[64];
	int ok = 1, n;

	if (setup(&a, dev_a) || setup(&b, dev_b) || connect_qp(&a, &b, PSN_A, PSN_B) ||
	    connect_qp(&b, &a, PSN_B, PSN_A) || post_recv(&a, 2048) || post_recv(&b, 2048))
		return 1;
	memset(a.buf, 'a', 1024);
	if (post_wait(&a, &b, 0, 1024, IBV_WR_RDMA_WRITE))
		return 1;
	memset(b.buf, 'b', 1024);
	if (post_wait(&b, &a, 0, 1024, IBV_WR_RDMA_WRITE))
		return 1;
	/* B's WRITE Only took one PSN: A expects PSN_B + 1 next. */
	printf("ready qpn=0x%06x psn=0x%06x rkey=0x%08x va=0x%llx\n", a.qp->qp_num,
	       (PSN_B + 1) & 0xffffff, a.mr->rkey, (unsigned long long)(uintptr_t)a.buf);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return fail("stdin closed");
	for (int i = 0; i < 1024; i++)
		if (a.buf[i] != 'b') {
			ok = 0;
			break;
		}
	printf("%s\n", ok ? "intact" : "overwritten");
	n = ibv_poll_cq(a.cq, 1, &wc);
	printf("%s\n", n == 0 ? "no receive" : "received");
	ok = ok && n == 0;
	memset(b.buf, 'c', 1024);
	if (post_wait(&b, &a, 0, 1024, IBV_WR_RDMA_WRITE) || a.buf[0] != 'c' || a.buf[1023] != 'c')
		return fail("the peer's WRITE after the forgery");
	printf("peer write ok\n");
	if (post_wait(&b, &a, 0, 64, IBV_WR_SEND))
		return fail("the peer's SEND after the forgery");
	n = 0;
	for (time_t end = time(NULL) + 10; n == 0 && time(NULL) < end;)
		n = ibv_poll_cq(a.cq, 1, &wc);
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV)
		return fail("A's receive of the peer's SEND");
	printf("peer send ok\n");
	fflush(stdout);
	return ok ? 0 : 1;
}

/*
 * A child forked after ibv_open_device shares the parent's connection: its
 * ibv_reg_mr must fail (EPERM), since the daemon's DMA would reach the
 * parent's memory at those addresses; the parent's own still works.
 */
static int fork_reg(const char *dev)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	static char buf[8192];
	struct ibv_mr *mr;
	int status = 0;
	pid_t pid;

	if (!pd)
		return fail("device or PD");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		errno = 0;
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		printf("child reg_mr: %s\n", mr ? "registered" : strerror(errno));
		fflush(stdout);
		_exit(!mr && errno == EPERM ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return fail("waitpid");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	printf("parent reg_mr: %s\n", mr ? "registered" : strerror(errno));
	return mr && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/*
 * A UD QP to INIT with Q_Key qkey: prints "qkey 0x%08x: ok" or the error
 * (a controlled Q_Key, high bit set, needs CAP_NET_RAW: EPERM otherwise).
 */
static int qkey(const char *dev, uint32_t qkey)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr ia = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_UD,
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &ia) : NULL;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey};
	int ret;

	if (!qp)
		return fail("device, PD, CQ or UD QP");
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	printf("qkey 0x%08x: %s\n", qkey, ret ? strerror(ret) : "ok");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "qkey"))
		return qkey(argv[2], (uint32_t)strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "fork_reg"))
		return fork_reg(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "numbers"))
		return numbers(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "target"))
		return target(argv[2], argv[3]);
	fprintf(stderr, "usage: acl_peer numbers DEVICE NQP NMR | target DEV_A DEV_B | "
			"fork_reg DEVICE | qkey DEVICE QKEY\n");
	return 2;
}
