/* SPDX-License-Identifier: MIT */
/*
 * ctl_verbs: an ordinary verbs program (linked against rdma-core's
 * libibverbs, run on uroce under `uroce run`) that checks the control path
 * of a device the way an application sees it: the errno of every bad input
 * is the one hardware gives, the QP state machine accepts exactly the masks
 * ibv_modify_qp(3) documents, posting validates work requests, a QP moved
 * to the error state flushes its queues, completion channels and the async
 * event fd are real pollable fds, and the device keeps serving afterwards.
 *
 *   ctl_verbs check DEV_A DEV_B   run every check; exit 0 when all pass
 *   ctl_verbs hold DEV            create PD, MR, CQ, QP, SRQ, AH (with a
 *                                 GRH to its own GID 0), channel, a memory
 *                                 window bound to the MR, device memory, an
 *                                 XRC domain with a target QP and a second
 *                                 handle of that QP (ibv_open_qp), print
 *                                 "ready" and wait to be killed
 */
#include <infiniband/verbs.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static int checks;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok)
		return;
	failures++;
	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* Expect a call that returns NULL with errno == want. */
#define EXPECT_NULL_ERRNO(expr, want, what)                                               \
	do {                                                                              \
		void *p_ = (void *)(expr);                                                \
		int e_ = errno;                                                           \
		check(!p_ && e_ == (want), "%s: got %p errno %d (%s), want %s", what, p_, \
		      p_ ? 0 : e_, p_ ? "-" : strerror(e_), #want);                       \
	} while (0)

#define EXPECT_RET(expr, want, what)                                           \
	do {                                                                   \
		int r_ = (expr);                                               \
		check(r_ == (want), "%s: returned %d (%s), want %s", what, r_, \
		      r_ > 0 ? strerror(r_) : "", #want);                      \
	} while (0)

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		fprintf(stderr, "cannot open %s\n", name);
	return ctx;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .srq = srq,
	    .qp_type = type,
	    .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2},
	};

	return ibv_create_qp(pd, &a);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
				.qkey = 0x11111111};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static int to_rtr(struct ibv_qp *qp, uint32_t dest_qpn, union ibv_gid *gid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
				.path_mtu = IBV_MTU_1024,
				.dest_qp_num = dest_qpn,
				.rq_psn = 0x1234,
				.max_dest_rd_atomic = 16,
				.min_rnr_timer = 12};

	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS,
				.timeout = 14,
				.retry_cnt = 7,
				.rnr_retry = 7,
				.sq_psn = 0x1234,
				.max_rd_atomic = 16};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int set_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = {.qp_state = s};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* Poll until n completions arrived or 5 s passed. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			break;
		if (!r)
			usleep(1000);
	}
	return got;
}

static int readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* --- the QP state machine and its masks ---------------------------------- */
static void check_state_machine(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = make_qp(pd, cq, IBV_QPT_RC, NULL);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	union ibv_gid gid;

	check(qp != NULL, "create RC QP: %s", strerror(errno));
	if (!qp)
		return;
	check(qp->state == IBV_QPS_RESET, "new QP state %d", qp->state);
	ibv_query_gid(ctx, 1, 0, &gid);

	/* RESET -> INIT without the required PORT (IBA 10.3.1, table 94). */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.qp_access_flags = 0;
	EXPECT_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS),
		   EINVAL, "RESET->INIT without IBV_QP_PORT");
	/* ... with an attribute that transition does not allow. */
	a.port_num = 1;
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS |
				     IBV_QP_PORT | IBV_QP_SQ_PSN),
		   EINVAL, "RESET->INIT with IBV_QP_SQ_PSN");
	/* RC QPs have no Q_Key. */
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS |
				     IBV_QP_PORT | IBV_QP_QKEY),
		   EINVAL, "RC RESET->INIT with IBV_QP_QKEY");
	EXPECT_RET(set_state(qp, IBV_QPS_RTS), EINVAL, "RESET->RTS");
	EXPECT_RET(set_state(qp, IBV_QPS_ERR), EINVAL, "RESET->ERR (not a legal transition)");
	/* Bad attribute values. */
	a.port_num = 2;
	EXPECT_RET(
	    ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT),
	    EINVAL, "RESET->INIT on port 2");
	a.port_num = 1;
	a.pkey_index = 5;
	EXPECT_RET(
	    ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT),
	    EINVAL, "RESET->INIT with P_Key index 5");
	check(qp->state == IBV_QPS_RESET, "failed modifies changed state");

	EXPECT_RET(to_init(qp), 0, "RESET->INIT");
	EXPECT_RET(to_rts(qp), EINVAL, "INIT->RTS");
	/* INIT -> RTR without DEST_QPN. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.port_num = 1;
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_RQ_PSN |
				     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
		   EINVAL, "INIT->RTR without IBV_QP_DEST_QPN");
	a.max_dest_rd_atomic = 200; /* beyond max_qp_rd_atom */
	a.dest_qp_num = qp->qp_num;
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER),
		   EINVAL, "INIT->RTR with max_dest_rd_atomic 200");
	/* RoCE address vectors need a GRH, a populated source GID index and
	 * port 1 (the Linux core's rdma_check_ah_attr on a RoCE port). */
	a.max_dest_rd_atomic = 16;
	a.ah_attr.is_global = 0;
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER),
		   EINVAL, "INIT->RTR with an address vector without a GRH");
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 1;
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER),
		   EINVAL, "INIT->RTR with source GID index 1 (empty)");
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.port_num = 2;
	EXPECT_RET(ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER),
		   EINVAL, "INIT->RTR with an address vector on port 2");
	memset(&a, 0, sizeof(a));
	memset(&ia, 0, sizeof(ia));
	EXPECT_RET(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0, "query QP after refused RTR");
	check(a.qp_state == IBV_QPS_INIT && qp->state == IBV_QPS_INIT,
	      "refused INIT->RTR changed the state to %d/%d", a.qp_state, qp->state);
	EXPECT_RET(to_rtr(qp, qp->qp_num, &gid), 0, "INIT->RTR");
	/* RTR -> RTS for RC requires TIMEOUT, RETRY_CNT, RNR_RETRY,... */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	EXPECT_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL,
		   "RC RTR->RTS with only IBV_QP_SQ_PSN");
	EXPECT_RET(to_rts(qp), 0, "RTR->RTS");
	/* The current-state hint must be right. */
	a.cur_qp_state = IBV_QPS_RTR;
	EXPECT_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL,
		   "RTS->RTS claiming current state RTR");
	a.cur_qp_state = IBV_QPS_RTS;
	a.min_rnr_timer = 3;
	EXPECT_RET(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_MIN_RNR_TIMER), 0,
		   "RTS->RTS with MIN_RNR_TIMER");
	EXPECT_RET(set_state(qp, IBV_QPS_SQD), 0, "RTS->SQD");
	EXPECT_RET(set_state(qp, IBV_QPS_RTS), 0, "SQD->RTS");
	EXPECT_RET(set_state(qp, IBV_QPS_SQE), EINVAL, "RTS->SQE");

	memset(&a, 0, sizeof(a));
	EXPECT_RET(ibv_query_qp(qp, &a,
				IBV_QP_STATE | IBV_QP_CAP | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN,
				&ia),
		   0, "query QP");
	check(a.qp_state == IBV_QPS_RTS, "queried state %d", a.qp_state);
	check(a.min_rnr_timer == 3, "queried min_rnr_timer %d", a.min_rnr_timer);
	check(a.sq_psn == 0x1234, "queried sq_psn 0x%x", a.sq_psn);
	check(ia.cap.max_send_wr >= 8 && ia.cap.max_send_sge >= 2, "queried caps %u/%u",
	      ia.cap.max_send_wr, ia.cap.max_send_sge);

	EXPECT_RET(set_state(qp, IBV_QPS_ERR), 0, "RTS->ERR");
	EXPECT_RET(set_state(qp, IBV_QPS_RTS), EINVAL, "ERR->RTS");
	EXPECT_RET(set_state(qp, IBV_QPS_RESET), 0, "ERR->RESET");
	EXPECT_RET(to_init(qp), 0, "RESET->INIT again");
	EXPECT_RET(ibv_destroy_qp(qp), 0, "destroy QP");
}

/* --- address handles ------------------------------------------------------ */
static void check_ah(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	union ibv_gid gid;

	check(ibv_query_gid(ctx, 1, 0, &gid) == 0, "query GID 0");
	/* LID-only: RoCE has no destination without a GRH. */
	memset(&aa, 0, sizeof(aa));
	aa.dlid = 1;
	aa.port_num = 1;
	EXPECT_NULL_ERRNO(ibv_create_ah(pd, &aa), EINVAL, "AH without a GRH");
	aa.is_global = 1;
	aa.grh.dgid = gid;
	aa.grh.hop_limit = 64;
	aa.grh.sgid_index = 1;
	EXPECT_NULL_ERRNO(ibv_create_ah(pd, &aa), EINVAL, "AH with source GID index 1 (empty)");
	aa.grh.sgid_index = 200;
	EXPECT_NULL_ERRNO(ibv_create_ah(pd, &aa), EINVAL, "AH with source GID index 200");
	aa.grh.sgid_index = 0;
	aa.port_num = 2;
	EXPECT_NULL_ERRNO(ibv_create_ah(pd, &aa), EINVAL, "AH on port 2");
	aa.port_num = 0;
	EXPECT_NULL_ERRNO(ibv_create_ah(pd, &aa), EINVAL, "AH on port 0");
	aa.port_num = 1;
	ah = ibv_create_ah(pd, &aa);
	check(ah != NULL, "AH with a GRH: %s", strerror(errno));
	if (ah)
		EXPECT_RET(ibv_destroy_ah(ah), 0, "destroy AH");
}

/* --- objects of another context ------------------------------------------ */
static void check_cross_context(struct ibv_context *a, struct ibv_pd *pd_a, struct ibv_cq *cq_a,
				struct ibv_context *b)
{
	struct ibv_pd *pd_b = ibv_alloc_pd(b);
	struct ibv_cq *cq_b = ibv_create_cq(b, 4, NULL, NULL, 0);

	check(pd_b && cq_b, "PD/CQ on the second context");
	if (!pd_b || !cq_b)
		return;
	/* PD of context B, CQs of context A. */
	EXPECT_NULL_ERRNO(make_qp(pd_b, cq_a, IBV_QPT_RC, NULL), EINVAL,
			  "QP on a PD of another context");
	EXPECT_NULL_ERRNO(make_qp(pd_a, cq_b, IBV_QPT_RC, NULL), EINVAL,
			  "QP with a CQ of another context");
	(void)a;
	ibv_destroy_cq(cq_b);
	ibv_dealloc_pd(pd_b);
}

/* --- memory registration -------------------------------------------------- */
static void check_mr(struct ibv_pd *pd)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	check(p != MAP_FAILED, "mmap");
	if (p == MAP_FAILED)
		return;
	mr = ibv_reg_mr(pd, p, 4 * pg, IBV_ACCESS_LOCAL_WRITE);
	check(mr && mr->lkey && mr->addr == p && mr->length == (size_t)(4 * pg) &&
		  mr->context == pd->context,
	      "reg_mr over mapped memory: %s", strerror(errno));
	if (mr) {
		/* Re-register onto a hole: rejected, the MR stays as it was. */
		munmap(p + 2 * pg, pg);
		check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, p + pg, 2 * pg, 0) ==
			      IBV_REREG_MR_ERR_CMD &&
			  errno == EFAULT,
		      "rereg_mr over a hole: errno %d", errno);
		EXPECT_RET(ibv_dereg_mr(mr), 0, "dereg_mr");
	} else {
		munmap(p + 2 * pg, pg);
	}
	/* The hole in the middle of the range (EFAULT: pinning fails). */
	EXPECT_NULL_ERRNO(ibv_reg_mr(pd, p, 4 * pg, IBV_ACCESS_LOCAL_WRITE), EFAULT,
			  "reg_mr over unmapped memory");
	EXPECT_NULL_ERRNO(ibv_reg_mr(pd, (void *)(uintptr_t)pg, pg, IBV_ACCESS_LOCAL_WRITE), EFAULT,
			  "reg_mr at address 0x1000");
	/* Read-only memory: only a registration nobody writes through. */
	mprotect(p, pg, PROT_READ);
	EXPECT_NULL_ERRNO(ibv_reg_mr(pd, p, pg, IBV_ACCESS_LOCAL_WRITE), EFAULT,
			  "writable reg_mr over read-only memory");
	mr = ibv_reg_mr(pd, p, pg, IBV_ACCESS_REMOTE_READ);
	check(mr != NULL, "read-only reg_mr over read-only memory: %s", strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mprotect(p + 3 * pg, pg, PROT_NONE);
	EXPECT_NULL_ERRNO(ibv_reg_mr(pd, p + 3 * pg, pg, 0), EFAULT,
			  "reg_mr over PROT_NONE memory");
	/* IBA 10.6.3.1: remote write/atomic need local write. */
	EXPECT_NULL_ERRNO(ibv_reg_mr(pd, p + pg, pg, IBV_ACCESS_REMOTE_WRITE), EINVAL,
			  "reg_mr REMOTE_WRITE without LOCAL_WRITE");
	EXPECT_NULL_ERRNO(ibv_reg_mr(pd, p + pg, pg, IBV_ACCESS_REMOTE_ATOMIC), EINVAL,
			  "reg_mr REMOTE_ATOMIC without LOCAL_WRITE");
	/* ODP: no pinning, so unmapped memory registers too (tests/dp/odp.c). */
	mr = ibv_reg_mr(pd, p + 2 * pg, pg, IBV_ACCESS_ON_DEMAND);
	check(mr != NULL, "reg_mr ON_DEMAND over unmapped memory: %s", mr ? "ok" : strerror(errno));
	if (mr)
		EXPECT_RET(ibv_dereg_mr(mr), 0, "dereg the ODP MR");
	/* Optional access bits are ignored, as rdma-core does. */
	mr = ibv_reg_mr_iova2(pd, p + pg, pg, 0x10000,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	check(mr != NULL, "reg_mr_iova2 with RELAXED_ORDERING: %s", strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	munmap(p, 4 * pg);
}

/*
 * The daemon checks a registration against /proc/<pid>/maps, whose lines
 * end with the mapped file's path: a path long enough to be read in pieces
 * must not pass for a mapping line of its own. A file mapped for one page,
 * renamed so that its maps line reads "0-ffffffffffffffff rw-p" from
 * offset 511 on: registering that page and the unmapped page after it must
 * still fail with EFAULT.
 */
static void check_mr_long_path(struct ibv_pd *pd)
{
	static const char fake[] = "0-ffffffffffffffff rw-p";
	long pg = sysconf(_SC_PAGESIZE);
	char dir[] = "/tmp/uroce-mapsXXXXXX", mid[256], sub[512], from[1024], to[1024], line[4096];
	char key[64], *hit;
	size_t prefix = 0, k;
	uint8_t *p = NULL;
	FILE *f;
	int fd;

	if (!mkdtemp(dir)) {
		check(0, "long path: mkdtemp: %s", strerror(errno));
		return;
	}
	/* Two long directories, so that the name holds the piece at 511. */
	snprintf(mid, sizeof(mid), "%s/%0150d", dir, 0);
	snprintf(sub, sizeof(sub), "%s/%0150d", mid, 0);
	snprintf(from, sizeof(from), "%s/x", sub);
	fd = mkdir(mid, 0700) || mkdir(sub, 0700) ? -1 : open(from, O_RDWR | O_CREAT, 0600);
	if (fd >= 0 && ftruncate(fd, pg) == 0) {
		p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED &&
		    mmap(p, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == p)
			munmap(p + pg, pg);
		else
			p = NULL;
	}
	/* Where the path starts in this mapping's line. */
	snprintf(key, sizeof(key), "%lx-", (unsigned long)(uintptr_t)p);
	f = fopen("/proc/self/maps", "re");
	while (p && f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && (hit = strstr(line, from))) {
			prefix = (size_t)(hit - line);
			break;
		}
	if (f)
		fclose(f);
	k = 511 - prefix - strlen(sub) - 1;
	if (!p || !prefix || prefix + strlen(sub) + 1 > 511 || k + sizeof(fake) > 255) {
		check(0, "long path: setup (mapping %p, path at %zu)", (void *)p, prefix);
	} else {
		snprintf(to, sizeof(to), "%s/%0*d%s", sub, (int)k, 0, fake);
		check(rename(from, to) == 0, "long path: rename: %s", strerror(errno));
		struct ibv_mr *mr = ibv_reg_mr(pd, p, 2 * pg, IBV_ACCESS_LOCAL_WRITE);

		check(!mr && errno == EFAULT,
		      "reg_mr over a file with a long path and a hole: %p, errno %d", (void *)mr,
		      mr ? 0 : errno);
		if (mr)
			ibv_dereg_mr(mr);
		unlink(to);
	}
	if (p)
		munmap(p, pg);
	if (fd >= 0)
		close(fd);
	unlink(from);
	rmdir(sub);
	rmdir(mid);
	rmdir(dir);
}

/* --- limits ------------------------------------------------------------- */
static void check_limits(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_device_attr da;
	struct ibv_qp_init_attr a = {
	    .send_cq = cq,
	    .recv_cq = cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_port_attr pa;

	EXPECT_RET(ibv_query_device(ctx, &da), 0, "query_device");
	check(da.max_qp_rd_atom >= 16 && da.max_qp_init_rd_atom >= 16 &&
		  da.atomic_cap == IBV_ATOMIC_HCA && da.max_pkeys == 1,
	      "device limits");
	EXPECT_RET(ibv_query_port(ctx, 1, &pa), 0, "query_port 1");
	check(pa.state == IBV_PORT_ACTIVE && pa.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "port active, Ethernet");
	EXPECT_RET(ibv_query_port(ctx, 2, &pa), EINVAL, "query_port 2");
	EXPECT_NULL_ERRNO(ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0), EINVAL,
			  "CQ beyond max_cqe");
	EXPECT_NULL_ERRNO(ibv_create_cq(ctx, 1, NULL, NULL, 1), EINVAL, "CQ on comp_vector 1");
	a.cap.max_send_wr = (uint32_t)da.max_qp_wr + 1;
	EXPECT_NULL_ERRNO(ibv_create_qp(pd, &a), EINVAL, "QP beyond max_qp_wr");
	a.cap.max_send_wr = 1;
	a.cap.max_recv_sge = (uint32_t)da.max_sge + 1;
	EXPECT_NULL_ERRNO(ibv_create_qp(pd, &a), EINVAL, "QP beyond max_sge");
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = 1 << 20;
	EXPECT_NULL_ERRNO(ibv_create_qp(pd, &a), EINVAL, "QP with 1 MiB inline");
	a.cap.max_inline_data = 0;
	a.qp_type = IBV_QPT_RAW_PACKET;
	EXPECT_NULL_ERRNO(ibv_create_qp(pd, &a), EOPNOTSUPP, "RAW_PACKET QP");
	a.qp_type = IBV_QPT_RC;
	a.send_cq = NULL;
	EXPECT_NULL_ERRNO(ibv_create_qp(pd, &a), EINVAL, "QP without send CQ");
}

/* --- posting, flushing, channels, async events ---------------------------- */
static void check_data_path(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *ev_cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	static uint8_t buf[4096];
	struct ibv_sge sge[40];
	struct ibv_recv_wr rwr[9], *bad_r;
	struct ibv_send_wr swr[2], *bad_s;
	struct ibv_wc wc[16];
	union ibv_gid gid;
	void *ev_ctx;
	int n, flushed_recv = 0, flushed_send = 0;
	uint32_t max_send_sge = 0, max_recv_sge = 0;

	check(ch != NULL, "create_comp_channel: %s", strerror(errno));
	if (!ch)
		return;
	cq = ibv_create_cq(ctx, 16, (void *)0x5eed, ch, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	qp = cq ? make_qp(pd, cq, IBV_QPT_RC, NULL) : NULL;
	check(cq && mr && qp, "CQ/MR/QP for the data path");
	if (!cq || !mr || !qp)
		return;
	EXPECT_RET(ibv_destroy_comp_channel(ch), EBUSY, "destroy channel in use");
	for (int i = 0; i < 40; i++)
		sge[i] = (struct ibv_sge){
		    .addr = (uintptr_t)buf + 64 * i, .length = 64, .lkey = mr->lkey};
	memset(rwr, 0, sizeof(rwr));
	for (int i = 0; i < 9; i++) {
		rwr[i].wr_id = 100 + i;
		rwr[i].sg_list = sge;
		rwr[i].num_sge = 1;
		rwr[i].next = i < 8 ? &rwr[i + 1] : NULL;
	}
	memset(swr, 0, sizeof(swr));
	for (int i = 0; i < 2; i++) {
		swr[i].wr_id = 200 + i;
		swr[i].sg_list = sge;
		swr[i].num_sge = 1;
		swr[i].opcode = IBV_WR_SEND;
		swr[i].send_flags = IBV_SEND_SIGNALED;
		swr[i].next = i < 1 ? &swr[i + 1] : NULL;
	}

	/* RESET accepts neither receives nor sends. */
	bad_r = NULL;
	EXPECT_RET(ibv_post_recv(qp, rwr, &bad_r), EINVAL, "post_recv in RESET");
	check(bad_r == rwr, "bad_wr of post_recv in RESET");
	to_init(qp);
	bad_s = NULL;
	EXPECT_RET(ibv_post_send(qp, swr, &bad_s), EINVAL, "post_send in INIT");
	check(bad_s == swr, "bad_wr of post_send in INIT");

	/* Receive queue of 8: the ninth WR does not fit. */
	bad_r = NULL;
	EXPECT_RET(ibv_post_recv(qp, rwr, &bad_r), ENOMEM, "post 9 receives on 8 slots");
	check(bad_r == &rwr[8], "bad_wr of the full receive queue (%ld)",
	      bad_r ? (long)(bad_r - rwr) : -1L);

	ibv_query_gid(ctx, 1, 0, &gid);
	/* Connected to a QP number nobody has: the sends go out and are
	 * dropped by the receiver, so nothing completes before the move to
	 * ERR flushes it (a QP connected to itself would really deliver). */
	to_rtr(qp, 0xfffffe, &gid);
	to_rts(qp);
	swr[1].opcode = (enum ibv_wr_opcode)42;
	bad_s = NULL;
	EXPECT_RET(ibv_post_send(qp, swr, &bad_s), EINVAL, "post_send with a bad opcode");
	check(bad_s == &swr[1], "bad_wr at the bad opcode");
	swr[1].opcode = IBV_WR_SEND;
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;

		ibv_query_qp(qp, &qa, IBV_QP_CAP, &qia);
		max_send_sge = qa.cap.max_send_sge;
		max_recv_sge = qa.cap.max_recv_sge;
	}
	check(max_send_sge >= 2 && max_send_sge < 40 && max_recv_sge >= 2 && max_recv_sge < 40,
	      "SGE caps %u/%u", max_send_sge, max_recv_sge);
	swr[0].num_sge = (int)max_send_sge + 1;
	bad_s = NULL;
	EXPECT_RET(ibv_post_send(qp, swr, &bad_s), EINVAL, "post_send beyond max_send_sge");
	check(bad_s == swr, "bad_wr at the SGE overflow");
	swr[0].num_sge = 1;
	swr[1].next = NULL;
	swr[0].next = NULL;
	EXPECT_RET(ibv_post_send(qp, swr, &bad_s), 0, "post one send in RTS");

	/* Arm, then ERR: the flush completions wake the channel. */
	EXPECT_RET(ibv_req_notify_cq(cq, 0), 0, "req_notify_cq");
	EXPECT_RET(set_state(qp, IBV_QPS_ERR), 0, "RTS->ERR");
	/* 8 receives, the send before the bad opcode, the single send. */
	n = poll_n(cq, wc, 10);
	n += ibv_poll_cq(cq, 1, wc + n); /* nothing more */
	for (int i = 0; i < n; i++) {
		check(wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].qp_num == qp->qp_num,
		      "flush completion %d: status %d", i, wc[i].status);
		if (wc[i].wr_id >= 100 && wc[i].wr_id < 108)
			flushed_recv++;
		if (wc[i].wr_id == 200)
			flushed_send++;
	}
	check(n == 10 && flushed_recv == 8 && flushed_send == 2,
	      "flushed %d completions (%d recv, %d send), want 8 + 2", n, flushed_recv,
	      flushed_send);
	check(readable(ch->fd, 2000), "completion channel readable");
	ev_cq = NULL;
	EXPECT_RET(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0, "get_cq_event");
	check(ev_cq == cq && ev_ctx == (void *)0x5eed, "event names our CQ and its context");
	ibv_ack_cq_events(cq, 1);

	/* A receive posted in ERR is flushed too (through the doorbell). */
	rwr[0].next = NULL;
	rwr[0].num_sge = (int)max_recv_sge + 1;
	bad_r = NULL;
	EXPECT_RET(ibv_post_recv(qp, rwr, &bad_r), EINVAL, "post_recv beyond max_recv_sge");
	check(bad_r == rwr, "bad_wr at the SGE overflow");
	rwr[0].num_sge = 1;
	EXPECT_RET(ibv_post_recv(qp, rwr, &bad_r), 0, "post_recv in ERR");
	n = poll_n(cq, wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].wr_id == 100,
	      "receive posted in ERR flushed (%d)", n);

	EXPECT_RET(ibv_destroy_cq(cq), EBUSY, "destroy CQ in use");
	EXPECT_RET(ibv_dealloc_pd(pd), EBUSY, "dealloc PD in use");
	EXPECT_RET(ibv_destroy_qp(qp), 0, "destroy QP");
	EXPECT_RET(ibv_destroy_cq(cq), 0, "destroy CQ");
	EXPECT_RET(ibv_destroy_comp_channel(ch), 0, "destroy channel");
	ibv_dereg_mr(mr);
}

static void check_async(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp = (cq && srq) ? make_qp(pd, cq, IBV_QPT_RC, srq) : NULL;
	struct ibv_async_event ev;

	check(cq && srq && qp, "CQ, SRQ, QP on the SRQ: %s", strerror(errno));
	if (!qp)
		return;
	check(sa.attr.max_wr >= 4, "SRQ max_wr written back");
	to_init(qp);
	EXPECT_RET(set_state(qp, IBV_QPS_ERR), 0, "INIT->ERR");
	check(readable(ctx->async_fd, 2000), "async fd readable");
	EXPECT_RET(ibv_get_async_event(ctx, &ev), 0, "get_async_event");
	check(ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == qp,
	      "LAST_WQE_REACHED for our QP (type %d)", ev.event_type);
	ibv_ack_async_event(&ev);
	EXPECT_RET(ibv_destroy_srq(srq), EBUSY, "destroy SRQ in use");
	EXPECT_RET(ibv_destroy_qp(qp), 0, "destroy QP on SRQ");
	EXPECT_RET(ibv_destroy_srq(srq), 0, "destroy SRQ");
	ibv_destroy_cq(cq);
}

/* --- fork: a child opens its own context from the parent's device list
 * (qperf forks per test before opening the device) ------------------------ */
static void check_fork(const char *name)
{
	struct ibv_device **list;
	int n, status = -1;
	pid_t pid;

	list = ibv_get_device_list(&n);
	check(list && n >= 1, "device list before fork");
	if (!list)
		return;
	pid = fork();
	if (pid == 0) {
		struct ibv_context *ctx = NULL;
		struct ibv_device_attr da;
		struct ibv_pd *pd;

		for (int i = 0; i < n; i++)
			if (!strcmp(ibv_get_device_name(list[i]), name))
				ctx = ibv_open_device(list[i]);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		_exit(!ctx || !pd || ibv_query_device(ctx, &da) || ibv_dealloc_pd(pd) ||
		      ibv_close_device(ctx));
	}
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0,
	      "child opened the device from the parent's list (status %d)", status);
	ibv_free_device_list(list);
}

/*
 * Thread and parent domains: a parent domain stands for its PD (an MR and
 * an RC QP made with it; a CQ naming it), a wrapped PD and a used TD
 * cannot be freed before it (EBUSY), bad attributes fail with EINVAL.
 */
static void check_parent_domain(struct ibv_context *c, struct ibv_context *other)
{
	struct ibv_td_init_attr ta = {0};
	struct ibv_td *td = ibv_alloc_td(c, &ta);
	struct ibv_pd *pd = ibv_alloc_pd(c), *pd2 = ibv_alloc_pd(other), *par;
	struct ibv_parent_domain_init_attr pa = {0};
	struct ibv_cq_init_attr_ex cqa = {0};
	struct ibv_qp_init_attr qa = {0};
	struct ibv_cq_ex *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	static char buf[4096];

	check(td && pd && pd2, "TD and PDs");
	if (!td || !pd || !pd2)
		return;
	ta.comp_mask = 1;
	EXPECT_NULL_ERRNO(ibv_alloc_td(c, &ta), EINVAL, "TD with an unknown comp_mask");
	EXPECT_NULL_ERRNO(ibv_alloc_parent_domain(c, &pa), EINVAL, "parent domain without a PD");
	pa.pd = pd2;
	EXPECT_NULL_ERRNO(ibv_alloc_parent_domain(c, &pa), EINVAL,
			  "parent domain of another context's PD");
	pa.pd = pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	EXPECT_NULL_ERRNO(ibv_alloc_parent_domain(c, &pa), EINVAL,
			  "allocators announced, none given");
	pa.comp_mask = 0;
	pa.td = td;
	par = ibv_alloc_parent_domain(c, &pa);
	check(par != NULL, "parent domain of a PD and a TD: %s", par ? "ok" : strerror(errno));
	if (!par)
		return;
	EXPECT_RET(ibv_dealloc_pd(pd), EBUSY, "dealloc of a PD a parent domain wraps");
	EXPECT_RET(ibv_dealloc_td(td), EBUSY, "dealloc of a TD a parent domain uses");
	mr = ibv_reg_mr(par, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	check(mr != NULL, "MR through the parent domain: %s", mr ? "ok" : strerror(errno));
	cqa.cqe = 16;
	cqa.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	cqa.parent_domain = pd;
	EXPECT_NULL_ERRNO(ibv_create_cq_ex(c, &cqa), EINVAL, "CQ naming a PD that is no parent domain");
	cqa.parent_domain = par;
	cq = ibv_create_cq_ex(c, &cqa);
	check(cq != NULL, "CQ naming its parent domain: %s", cq ? "ok" : strerror(errno));
	if (cq) {
		qa.qp_type = IBV_QPT_RC;
		qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cq);
		qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		qp = ibv_create_qp(par, &qa);
		check(qp != NULL, "RC QP in the parent domain: %s", qp ? "ok" : strerror(errno));
		if (qp)
			EXPECT_RET(ibv_destroy_qp(qp), 0, "destroy that QP");
		EXPECT_RET(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0, "destroy that CQ");
	}
	if (mr)
		EXPECT_RET(ibv_dereg_mr(mr), 0, "dereg that MR");
	EXPECT_RET(ibv_dealloc_pd(par), 0, "dealloc the parent domain");
	EXPECT_RET(ibv_dealloc_td(td), 0, "dealloc the TD after it");
	EXPECT_RET(ibv_dealloc_pd(pd), 0, "dealloc the PD after it");
	EXPECT_RET(ibv_dealloc_pd(pd2), 0, "dealloc the other context's PD");
}

/*
 * Completion timestamps: the device clock is 1 GHz and 64 bits wide,
 * ibv_query_rt_values_ex reads it (going forward), and an extended CQ can
 * carry both timestamps.
 */
static void check_timestamps(struct ibv_context *c)
{
	struct ibv_device_attr_ex ax = {0};
	struct ibv_values_ex v1 = {.comp_mask = IBV_VALUES_MASK_RAW_CLOCK}, v2 = v1;
	struct ibv_cq_init_attr_ex ca = {.cqe = 8,
					 .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
						     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK};
	struct ibv_cq_ex *cq;

	check(!ibv_query_device_ex(c, NULL, &ax) && ax.hca_core_clock == 1000000 &&
		      ax.completion_timestamp_mask == UINT64_MAX,
	      "hca_core_clock %llu kHz, completion_timestamp_mask 0x%llx",
	      (unsigned long long)ax.hca_core_clock,
	      (unsigned long long)ax.completion_timestamp_mask);
	EXPECT_RET(ibv_query_rt_values_ex(c, &v1), 0, "ibv_query_rt_values_ex");
	EXPECT_RET(ibv_query_rt_values_ex(c, &v2), 0, "ibv_query_rt_values_ex again");
	check(v2.raw_clock.tv_sec > v1.raw_clock.tv_sec ||
		      (v2.raw_clock.tv_sec == v1.raw_clock.tv_sec &&
		       v2.raw_clock.tv_nsec >= v1.raw_clock.tv_nsec),
	      "the raw clock goes forward");
	cq = ibv_create_cq_ex(c, &ca);
	check(cq && cq->read_completion_ts && cq->read_completion_wallclock_ns,
	      "extended CQ with both completion timestamps: %s", cq ? "ok" : strerror(errno));
	if (cq)
		EXPECT_RET(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0, "destroy it");
}

/*
 * Device memory: limits (ENOMEM past max_dm_size, EINVAL for comp_mask),
 * copies (4-byte rules: EINVAL; bounds: EFAULT; the data round-trips), a
 * zero-based MR over it (non-zero-based: EINVAL; past the DM: EINVAL), and
 * a DM with an MR cannot be freed (EBUSY).
 */
static void check_dm(struct ibv_context *c, struct ibv_pd *pd)
{
	struct ibv_device_attr_ex ax = {0};
	struct ibv_alloc_dm_attr da = {.length = 4096};
	uint8_t in[256], out[256];
	struct ibv_dm *dm;
	struct ibv_mr *mr;

	check(!ibv_query_device_ex(c, NULL, &ax) && ax.max_dm_size >= 4096, "max_dm_size %llu",
	      (unsigned long long)ax.max_dm_size);
	da.length = ax.max_dm_size + 1;
	EXPECT_NULL_ERRNO(ibv_alloc_dm(c, &da), ENOMEM, "alloc_dm past max_dm_size");
	da.length = 4096;
	da.comp_mask = 1;
	EXPECT_NULL_ERRNO(ibv_alloc_dm(c, &da), EINVAL, "alloc_dm with an unknown comp_mask");
	da.comp_mask = 0;
	dm = ibv_alloc_dm(c, &da);
	check(dm != NULL, "alloc_dm of 4096 bytes: %s", dm ? "ok" : strerror(errno));
	if (!dm)
		return;
	for (unsigned i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 1);
	EXPECT_RET(ibv_memcpy_to_dm(dm, 1024, in, sizeof(in)), 0, "memcpy_to_dm");
	EXPECT_RET(ibv_memcpy_from_dm(out, dm, 1024, sizeof(out)), 0, "memcpy_from_dm");
	check(!memcmp(in, out, sizeof(in)), "device memory keeps what was written");
	EXPECT_RET(ibv_memcpy_to_dm(dm, 1, in, 4), EINVAL, "memcpy_to_dm at an odd offset");
	EXPECT_RET(ibv_memcpy_from_dm(out, dm, 0, 6), EINVAL, "memcpy_from_dm of 6 bytes");
	EXPECT_RET(ibv_memcpy_to_dm(dm, 4096, in, 4), EFAULT, "memcpy_to_dm past the end");
	EXPECT_NULL_ERRNO(ibv_reg_dm_mr(pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE), EINVAL,
			  "reg_dm_mr without ZERO_BASED");
	EXPECT_NULL_ERRNO(ibv_reg_dm_mr(pd, dm, 4092, 8,
					IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE),
			  EINVAL, "reg_dm_mr past the DM");
	mr = ibv_reg_dm_mr(pd, dm, 1024, 2048,
			   IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	check(mr != NULL, "reg_dm_mr: %s", mr ? "ok" : strerror(errno));
	if (mr) {
		EXPECT_RET(ibv_free_dm(dm), EBUSY, "free_dm with an MR over it");
		EXPECT_RET(ibv_dereg_mr(mr), 0, "dereg the DM MR");
	}
	EXPECT_RET(ibv_free_dm(dm), 0, "free_dm");
}

static int cmd_check(const char *dev_a, const char *dev_b)
{
	struct ibv_context *a = open_dev(dev_a), *a2 = open_dev(dev_a);
	struct ibv_context *b = open_dev(dev_b);
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	if (!a || !a2 || !b)
		return 2;
	pd = ibv_alloc_pd(a);
	cq = ibv_create_cq(a, 32, NULL, NULL, 0);
	check(pd && cq, "PD and CQ");
	if (!pd || !cq)
		return 1;
	check_state_machine(a, pd, cq);
	check_cross_context(a, pd, cq, a2); /* same device, other context */
	check_cross_context(a, pd, cq, b);  /* other device */
	check_mr(pd);
	check_mr_long_path(pd);
	check_ah(a, pd);
	check_limits(a, pd, cq);
	check_data_path(a, pd);
	check_async(a, pd);
	check_fork(dev_b);
	check_parent_domain(a, b);
	check_timestamps(a);
	check_dm(a, pd);
	ibv_destroy_cq(cq);
	EXPECT_RET(ibv_dealloc_pd(pd), 0, "dealloc PD");
	ibv_close_device(a);
	ibv_close_device(a2);
	ibv_close_device(b);

	/* After all that, the device still serves a new client. */
	a = open_dev(dev_a);
	check(a && ibv_query_device(a, &da) == 0, "device serves after the bad inputs");
	if (a)
		ibv_close_device(a);
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}

static int cmd_hold(const char *dev)
{
	static uint8_t buf[65536];
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_ah_attr aa = {.port_num = 1};
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_ah *ah;
	struct ibv_mw *mw;
	struct ibv_mw_bind bind = {.wr_id = 1, .send_flags = IBV_SEND_SIGNALED};
	struct ibv_alloc_dm_attr dma = {.length = 4096};
	struct ibv_xrcd_init_attr xa = {.comp_mask =
					    IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
					.fd = -1,
					.oflags = O_CREAT};
	struct ibv_qp_init_attr_ex ta = {.qp_type = IBV_QPT_XRC_RECV,
					 .comp_mask = IBV_QP_INIT_ATTR_XRCD};
	struct ibv_qp_open_attr oa = {.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
						   IBV_QP_OPEN_ATTR_TYPE,
				      .qp_type = IBV_QPT_XRC_RECV};
	struct ibv_xrcd *xrcd;
	struct ibv_qp *tgt, *opened;
	struct ibv_wc wc;
	int n = 0;

	if (!ctx)
		return 2;
	aa.is_global = 1;
	aa.grh.hop_limit = 64;
	if (ibv_query_gid(ctx, 1, 0, &aa.grh.dgid)) {
		fprintf(stderr, "hold: cannot query GID 0: %s\n", strerror(errno));
		return 1;
	}
	ch = ibv_create_comp_channel(ctx);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)
		: NULL;
	cq = ibv_create_cq(ctx, 64, NULL, ch, 0);
	qp = (pd && cq) ? make_qp(pd, cq, IBV_QPT_RC, NULL) : NULL;
	srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	ah = pd ? ibv_create_ah(pd, &aa) : NULL;
	if (!ch || !mr || !qp || !srq || !ah) {
		fprintf(stderr, "hold: cannot create resources: %s\n", strerror(errno));
		return 1;
	}
	/* A type 1 window bound to the MR through the QP (connected to itself). */
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf;
	bind.bind_info.length = sizeof(buf);
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (!mw || to_init(qp) || to_rtr(qp, qp->qp_num, &aa.grh.dgid) || to_rts(qp) ||
	    ibv_bind_mw(qp, mw, &bind)) {
		fprintf(stderr, "hold: cannot bind a memory window: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < 1000000 && n == 0; i++)
		n = ibv_poll_cq(cq, 1, &wc);
	if (n != 1 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "hold: the bind did not complete\n");
		return 1;
	}
	/* Device memory, and an XRC domain whose target QP has a second handle. */
	xrcd = ibv_open_xrcd(ctx, &xa);
	ta.xrcd = xrcd;
	tgt = xrcd ? ibv_create_qp_ex(ctx, &ta) : NULL;
	oa.xrcd = xrcd;
	oa.qp_num = tgt ? tgt->qp_num : 0;
	opened = tgt ? ibv_open_qp(ctx, &oa) : NULL;
	if (!ibv_alloc_dm(ctx, &dma) || !opened) {
		fprintf(stderr, "hold: cannot allocate device memory or an XRC domain: %s\n",
			strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "check"))
		return cmd_check(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return cmd_hold(argv[2]);
	fprintf(stderr, "usage: ctl_verbs check DEV_A DEV_B | hold DEV\n");
	return 2;
}
