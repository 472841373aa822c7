/* SPDX-License-Identifier: MIT */
/*
 * xrc_domain DEVICE FILE: the control path of XRC as two processes see it,
 * linked against rdma-core's libibverbs like any program and run on uroce
 * through the shim (tests/e2e/xrc.sh). A parent and a forked child, each
 * with its own context on DEVICE, share the XRC domain of FILE:
 *  - ibv_open_xrcd follows the kernel's O_CREAT rules: no domain for the
 *    file yet and no O_CREAT is EAGAIN, O_CREAT | O_EXCL on a file that has
 *    one is EINVAL, a bad descriptor EBADF, missing attributes EINVAL,
 *    unknown ones EOPNOTSUPP; a second open of the same file is the same
 *    domain, also from the other process, which needs no O_CREAT then;
 *  - XRC SRQs need their domain and CQ, XRC target QPs their domain (and
 *    send nothing), initiator QPs have no receive queue;
 *  - ibv_open_qp gives the child a handle of the parent's target QP through
 *    the shared domain, not through a domain of its own or for a QP that is
 *    not a target QP; the QP lives on after the parent destroys its handle,
 *    until the child destroys the last;
 *  - ibv_close_xrcd is EBUSY while SRQs or QPs use the handle;
 *  - on the wire (a connection on DEVICE itself): a SEND lands in the SRQ
 *    its XRCETH names and completes on that SRQ's CQ; naming an SRQ of
 *    another domain fails with IBV_WC_REM_ACCESS_ERR, naming none with
 *    IBV_WC_REM_INV_REQ_ERR.
 * Prints one "ok:" or "FAIL:" line per check and exits 0 when all pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
static const char *who = "parent";

/* COND is evaluated once (it may be the call under test). */
#define CHECK(cond, ...)                                      \
	do {                                                  \
		int ok_ = !!(cond), errno_ = errno;           \
		printf("%s: %s: ", ok_ ? "ok" : "FAIL", who); \
		printf(__VA_ARGS__);                          \
		printf(" (errno %d)\n", errno_);              \
		fflush(stdout);                               \
		if (!ok_)                                     \
			failures++;                           \
	} while (0)

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "xrc_domain: cannot open %s\n", name);
		exit(1);
	}
	return ctx;
}

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags, uint32_t mask)
{
	struct ibv_xrcd_init_attr a = {.comp_mask = mask, .fd = fd, .oflags = oflags};

	errno = 0;
	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_qp *qp_open(struct ibv_context *ctx, struct ibv_xrcd *x, uint32_t qpn,
			      enum ibv_qp_type type)
{
	struct ibv_qp_open_attr a = {
	    .comp_mask = IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_TYPE,
	    .xrcd = x,
	    .qp_num = qpn,
	    .qp_type = type,
	};

	errno = 0;
	return ibv_open_qp(ctx, &a);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state) - 1;
	return a.qp_state;
}

/* One line of the pipe: a number, or -1 at end of file. */
static long get(int fd)
{
	char buf[32];
	ssize_t n = 0;

	while (n < (ssize_t)sizeof(buf) - 1 && read(fd, buf + n, 1) == 1 && buf[n] != '\n')
		n++;
	buf[n] = 0;
	return n ? strtol(buf, NULL, 0) : -1;
}

static void put(int fd, long v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", v);

	if (write(fd, buf, (size_t)n) != n)
		exit(1);
}

static int child(const char *dev, const char *file, int in, int out)
{
	struct ibv_context *ctx;
	struct ibv_xrcd *x, *other;
	struct ibv_qp *oq;
	uint32_t qpn;
	int fd;

	who = "child";
	qpn = (uint32_t)get(in);
	ctx = open_dev(dev);
	fd = open(file, O_RDONLY);
	/* The parent made the file's domain: no O_CREAT needed to join it. */
	x = xrcd_open(ctx, fd, 0, IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS);
	CHECK(x != NULL, "ibv_open_xrcd of the parent's file without O_CREAT joins its domain");
	oq = qp_open(ctx, x, qpn, IBV_QPT_XRC_RECV);
	CHECK(oq != NULL && oq->qp_num == qpn && oq->qp_type == IBV_QPT_XRC_RECV && !oq->pd,
	      "ibv_open_qp of the parent's target QP 0x%x", qpn);
	CHECK(oq && qp_state(oq) == IBV_QPS_INIT, "it is in INIT, as the parent left it");
	other = xrcd_open(ctx, -1, O_CREAT, IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS);
	CHECK(other != NULL, "ibv_open_xrcd with fd -1: a domain of its own");
	CHECK(!qp_open(ctx, other, qpn, IBV_QPT_XRC_RECV) && errno == EINVAL,
	      "ibv_open_qp through another domain: EINVAL");
	errno = 0;
	CHECK(ibv_close_xrcd(x) == EBUSY, "ibv_close_xrcd while an opened QP uses it: EBUSY");
	put(out, 1);
	/* The parent destroyed its handle of the QP: this one keeps it alive. */
	get(in);
	CHECK(oq && qp_state(oq) == IBV_QPS_INIT,
	      "the QP lives on after its creator's handle went");
	if (oq) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};

		CHECK(ibv_modify_qp(oq, &a, IBV_QP_STATE) == 0, "modify of the opened QP to RESET");
		CHECK(ibv_destroy_qp(oq) == 0, "ibv_destroy_qp of the last handle");
	}
	CHECK(ibv_close_xrcd(x) == 0, "ibv_close_xrcd once nothing uses it");
	CHECK(ibv_close_xrcd(other) == 0, "ibv_close_xrcd of its own domain");
	put(out, 2);
	ibv_close_device(ctx);
	close(fd);
	return failures ? 1 : 0;
}

/* One side of a connection to QP dest on this RNIC: INIT, RTR, RTS (RTR only with rtr_only). */
static int bring_up_to(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *gid, int tgt,
		       int rtr_only)
{
	struct ibv_qp_attr a;
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	int rts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = tgt ? IBV_ACCESS_REMOTE_WRITE : 0;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 100;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  rtr | (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		return -1;
	if (rtr_only)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	return ibv_modify_qp(
	    qp, &a,
	    rts | (tgt ? 0 : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

static int bring_up(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *gid, int tgt)
{
	return bring_up_to(qp, dest, gid, tgt, 0);
}

/* The first completion of cq within 5 s; status -1 when none came. */
static struct ibv_wc poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc = {.status = (enum ibv_wc_status) - 1};

	for (int i = 0; i < 5000 && ibv_poll_cq(cq, 1, &wc) == 0; i++)
		usleep(1000);
	return wc;
}

/*
 * A SEND from a fresh initiator QP to a fresh target QP of domain x on this
 * RNIC, naming SRQ srqn: the status of the send completion.
 */
static enum ibv_wc_status send_to(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr,
				  struct ibv_xrcd *x, struct ibv_cq *scq, uint32_t srqn)
{
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *ini, *tgt;
	struct ibv_sge sge = {.addr = (uintptr_t)mr->addr, .length = 64, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	union ibv_gid gid;
	struct ibv_wc wc;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	tgt = ibv_create_qp_ex(ctx, &qa);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	qa.send_cq = scq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	ini = ibv_create_qp_ex(ctx, &qa);
	if (!tgt || !ini || ibv_query_gid(ctx, 1, 0, &gid) || bring_up(tgt, ini->qp_num, &gid, 1) ||
	    bring_up(ini, tgt->qp_num, &gid, 0))
		return (enum ibv_wc_status) - 2;
	wr.qp_type.xrc.remote_srqn = srqn;
	if (ibv_post_send(ini, &wr, &bad))
		return (enum ibv_wc_status) - 3;
	wc = poll_one(scq);
	ibv_destroy_qp(ini);
	ibv_destroy_qp(tgt);
	return wc.status;
}

/*
 * The first request a target QP in RTR receives establishes communication:
 * IBV_EVENT_COMM_EST reaches its creator's handle and the handle opened
 * with ibv_open_qp (here both in this context). Returns how many of the two
 * arrived, each once, less any other event.
 */
static int comm_est_to_openers(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr,
			       struct ibv_xrcd *x, struct ibv_cq *scq, uint32_t srqn)
{
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *ini, *tgt, *op;
	struct ibv_sge sge = {.addr = (uintptr_t)mr->addr, .length = 8, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 8,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};
	union ibv_gid gid;
	int got_tgt = 0, got_op = 0, other = 0;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = x;
	tgt = ibv_create_qp_ex(ctx, &qa);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	qa.send_cq = scq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	ini = ibv_create_qp_ex(ctx, &qa);
	if (!tgt || !ini || ibv_query_gid(ctx, 1, 0, &gid) ||
	    bring_up_to(tgt, ini->qp_num, &gid, 1, 1) || bring_up(ini, tgt->qp_num, &gid, 0))
		return -1;
	op = qp_open(ctx, x, tgt->qp_num, IBV_QPT_XRC_RECV);
	wr.qp_type.xrc.remote_srqn = srqn;
	if (!op || ibv_post_send(ini, &wr, &bad) || poll_one(scq).status != IBV_WC_SUCCESS)
		return -1;
	while (poll(&pfd, 1, 2000) == 1) {
		struct ibv_async_event ev;

		if (ibv_get_async_event(ctx, &ev))
			break;
		if (ev.event_type == IBV_EVENT_COMM_EST && ev.element.qp == tgt)
			got_tgt++;
		else if (ev.event_type == IBV_EVENT_COMM_EST && ev.element.qp == op)
			got_op++;
		else
			other++;
		ibv_ack_async_event(&ev);
		if (got_tgt + got_op + other >= 2)
			break;
	}
	ibv_destroy_qp(op);
	ibv_destroy_qp(ini);
	ibv_destroy_qp(tgt);
	return (got_tgt == 1) + (got_op == 1) - other;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_xrcd *x, *x2;
	struct ibv_srq *srq;
	struct ibv_qp *tgt, *ini, *q;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp_attr ma;
	struct ibv_recv_wr rwr = {0}, *bad;
	uint32_t srqn = 0, tgt_qpn;
	int to_child[2], from_child[2], fd, st;
	const uint32_t both = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	pid_t pid;

	if (argc != 3) {
		fprintf(stderr, "usage: xrc_domain DEVICE FILE\n");
		return 2;
	}
	if (pipe(to_child) || pipe(from_child))
		return 1;
	/* The child opens its own context (contexts do not cross fork). */
	pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		return child(argv[1], argv[2], to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);

	ctx = open_dev(argv[1]);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	fd = open(argv[2], O_RDONLY | O_CREAT, 0600);
	if (!pd || !cq || fd < 0)
		return 1;

	CHECK(!xrcd_open(ctx, fd, 0, both) && errno == EAGAIN,
	      "ibv_open_xrcd of a file with no domain, without O_CREAT: EAGAIN");
	x = xrcd_open(ctx, fd, O_CREAT, both);
	CHECK(x != NULL, "ibv_open_xrcd with O_CREAT");
	CHECK(!xrcd_open(ctx, fd, O_CREAT | O_EXCL, both) && errno == EINVAL,
	      "O_CREAT | O_EXCL on a file that has a domain: EINVAL");
	x2 = xrcd_open(ctx, fd, 0, both);
	CHECK(x2 != NULL, "a second ibv_open_xrcd of the file");
	CHECK(!xrcd_open(ctx, fd, O_CREAT, IBV_XRCD_INIT_ATTR_FD) && errno == EINVAL,
	      "without IBV_XRCD_INIT_ATTR_OFLAGS: EINVAL");
	CHECK(!xrcd_open(ctx, fd, O_CREAT, both | IBV_XRCD_INIT_ATTR_RESERVED) &&
		  errno == EOPNOTSUPP,
	      "an unknown comp_mask bit: EOPNOTSUPP");
	CHECK(!xrcd_open(ctx, 1000, O_CREAT, both) && errno == EBADF, "a bad descriptor: EBADF");
	if (!x)
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = x;
	sa.pd = pd;
	errno = 0;
	CHECK(!ibv_create_srq_ex(ctx, &sa) && errno == EINVAL, "an XRC SRQ without a CQ: EINVAL");
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	sa.cq = cq;
	srq = ibv_create_srq_ex(ctx, &sa);
	CHECK(srq != NULL && ibv_get_srq_num(srq, &srqn) == 0 && srqn != 0,
	      "an XRC SRQ, SRQ number %u", srqn);

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EINVAL,
	      "an XRC target QP without its domain: EINVAL");
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.xrcd = x;
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &qa) && errno == EOPNOTSUPP,
	      "an XRC target QP with send operations: EOPNOTSUPP");
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	tgt = ibv_create_qp_ex(ctx, &qa);
	CHECK(tgt != NULL && !tgt->pd && !tgt->send_cq && !tgt->recv_cq,
	      "an XRC target QP (no PD, no CQs)");
	if (!srq || !tgt)
		return 1;
	tgt_qpn = tgt->qp_num;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	qa.send_cq = cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	ini = ibv_create_qp_ex(ctx, &qa);
	CHECK(ini != NULL && !ini->recv_cq, "an XRC initiator QP (no receive CQ)");
	CHECK(ini && ibv_post_recv(ini, &rwr, &bad) == EINVAL,
	      "ibv_post_recv on it: EINVAL (no receive queue)");

	memset(&ma, 0, sizeof(ma));
	ma.qp_state = IBV_QPS_INIT;
	ma.port_num = 1;
	CHECK(ibv_modify_qp(tgt, &ma, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL,
	      "RESET -> INIT without the access flags: EINVAL");
	ma.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	CHECK(ibv_modify_qp(tgt, &ma,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
		  0,
	      "the target QP to INIT");

	q = qp_open(ctx, x2, tgt_qpn, IBV_QPT_XRC_RECV);
	CHECK(q != NULL, "ibv_open_qp of it through the second handle of the domain");
	CHECK(q && ibv_destroy_qp(q) == 0, "... destroyed again");
	CHECK(ini && !qp_open(ctx, x, ini->qp_num, IBV_QPT_XRC_RECV) && errno == EINVAL,
	      "ibv_open_qp of an initiator QP: EINVAL");
	CHECK(!qp_open(ctx, x, tgt_qpn, IBV_QPT_XRC_SEND) && errno == EINVAL,
	      "ibv_open_qp with type XRC_SEND: EINVAL");
	errno = 0;
	CHECK(ibv_close_xrcd(x) == EBUSY, "ibv_close_xrcd while its SRQ and QP exist: EBUSY");
	CHECK(ibv_close_xrcd(x2) == 0, "ibv_close_xrcd of the unused second handle");

	put(to_child[1], tgt_qpn);
	get(from_child[0]);
	CHECK(ibv_destroy_qp(tgt) == 0, "ibv_destroy_qp of the creator's handle");
	put(to_child[1], 1);
	get(from_child[0]);
	CHECK(!qp_open(ctx, x, tgt_qpn, IBV_QPT_XRC_RECV) && errno == EINVAL,
	      "after the child's last handle, the target QP is gone: ibv_open_qp EINVAL");
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child passed");

	/* Traffic on this RNIC: the SRQ an XRCETH names, checked at the target. */
	{
		struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		char *buf = calloc(1, 8192);
		struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE) : NULL;
		struct ibv_xrcd *y = xrcd_open(ctx, -1, O_CREAT, both);
		struct ibv_srq *ysrq = NULL;
		struct ibv_sge sge = {.addr = (uintptr_t)buf + 4096, .length = 4096};
		struct ibv_recv_wr r = {.wr_id = 55, .sg_list = &sge, .num_sge = 1};
		uint32_t ysrqn = 0;
		enum ibv_wc_status s;
		struct ibv_wc wc;

		if (!scq || !mr || !y)
			return 1;
		sge.lkey = mr->lkey;
		sa.xrcd = y;
		ysrq = ibv_create_srq_ex(ctx, &sa);
		if (!ysrq || ibv_get_srq_num(ysrq, &ysrqn) || ibv_post_srq_recv(srq, &r, &bad) ||
		    ibv_post_srq_recv(ysrq, &r, &bad))
			return 1;
		strcpy(buf, "xrc");
		s = send_to(ctx, pd, mr, x, scq, srqn);
		wc = poll_one(cq);
		CHECK(s == IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS && wc.wr_id == 55 &&
			  wc.opcode == IBV_WC_RECV && wc.byte_len == 64 &&
			  !strcmp(buf + 4096, "xrc"),
		      "a SEND naming the SRQ of the target QP's domain lands there (send %d, recv "
		      "%d)",
		      s, wc.status);
		s = send_to(ctx, pd, mr, x, scq, ysrqn);
		CHECK(s == IBV_WC_REM_ACCESS_ERR,
		      "naming an SRQ of another XRC domain: IBV_WC_REM_ACCESS_ERR (got %d)", s);
		s = send_to(ctx, pd, mr, x, scq, 0xabcdef);
		CHECK(s == IBV_WC_REM_INV_REQ_ERR,
		      "naming no XRC SRQ: IBV_WC_REM_INV_REQ_ERR (got %d)", s);
		CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "nothing else completed on the SRQ's CQ");
		r.wr_id = 56;
		CHECK(ibv_post_srq_recv(srq, &r, &bad) == 0 &&
			  comm_est_to_openers(ctx, pd, mr, x, scq, srqn) == 2,
		      "IBV_EVENT_COMM_EST of a target QP reaches its creator and its opener");
		wc = poll_one(cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 56, "... and its SEND landed");
		ibv_destroy_srq(ysrq);
		ibv_close_xrcd(y);
		ibv_dereg_mr(mr);
		ibv_destroy_cq(scq);
		free(buf);
	}
	CHECK(ibv_destroy_qp(ini) == 0 && ibv_destroy_srq(srq) == 0 && ibv_close_xrcd(x) == 0,
	      "everything released");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	close(fd);
	return failures ? 1 : 0;
}
