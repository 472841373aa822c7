// SPDX-License-Identifier: MIT
/*
 * atomic_write DEVICE [PEER]: IBA 1.5 ATOMIC WRITE through rdma-core's
 * extended QP API (ibv_wr_atomic_write), between two RC QPs of one RNIC (or
 * from DEVICE to the RNIC PEER, whose memory it writes): the capability
 * (IB_UVERBS_DEVICE_ATOMIC_WRITE in device_cap_flags_ex, the send_ops_flags
 * bit on RC only), the 8 bytes landing as given with an IBV_WC_ATOMIC_WRITE
 * completion, a reader thread that never sees anything but one of the two
 * values written while 2000 alternate, in a page of its own that the target's
 * daemon maps (checked in /proc/self/maps): there the daemon makes one 8-byte
 * store; memory it does not map (a small MR in .bss, as target[] below) is
 * written with process_vm_writev, which promises no store width (see
 * emu/daemon/dp/dma.c, dma_atomic_write), ibv_post_send refusing the opcode
 * (ibv_send_wr has no place for the data), and the misuse errors: a
 * misaligned address IBV_WC_REM_INV_REQ_ERR, memory without remote write
 * IBV_WC_REM_ACCESS_ERR, nothing written.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_pair.h"

/* rdma/ib_user_verbs.h of rdma-core 44 (not in every installed copy). */
#define DEVICE_ATOMIC_WRITE (1ull << 40)
#define ROUNDS 2000

static const uint64_t val_a = 0x0123456789abcdefull, val_b = 0xfedcba9876543210ull;
static uint64_t target[4] __attribute__((aligned(64)));
static uint64_t *word; /* the reader's: in a page the daemon maps */
static int done;
static unsigned long torn, reads;

static void *reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		uint64_t v = __atomic_load_n(word, __ATOMIC_RELAXED);

		if (v != 0 && v != val_a && v != val_b)
			torn++;
		reads++;
	}
	return NULL;
}

struct pair {
	struct ibv_cq *cq, *rcq;
	struct ibv_qp *sq, *rq;
	struct ibv_qp_ex *x;
};

/* The target side: this RNIC, or PEER (its own context, PD and GID). */
static struct ibv_context *tctx;
static struct ibv_pd *tpd;
static union ibv_gid tgid;

/* qp_to_rtr towards the GID g (verbs_pair's helper aims at its own gid). */
static int to_rtr(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *g)
{
	union ibv_gid own = gid;
	int rc;

	gid = *g;
	rc = qp_to_rtr(qp, dest);
	gid = own;
	return rc;
}

static int pair_make(struct pair *p)
{
	struct ibv_qp_init_attr_ex qa = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 64, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1},
	    .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	    .pd = pd,
	    .send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE};
	struct ibv_qp_init_attr ra = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1}};

	p->cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	p->rcq = ibv_create_cq(tctx, 8, NULL, NULL, 0);
	if (!p->cq || !p->rcq)
		return -1;
	qa.send_cq = qa.recv_cq = p->cq;
	ra.send_cq = ra.recv_cq = p->rcq;
	p->sq = ibv_create_qp_ex(ctx, &qa);
	p->rq = ibv_create_qp(tpd, &ra);
	p->x = p->sq ? ibv_qp_to_qp_ex(p->sq) : NULL;
	if (!p->x || !p->rq)
		return -1;
	return to_rtr(p->sq, p->rq->qp_num, &tgid) || to_rtr(p->rq, p->sq->qp_num, &gid) ||
		       qp_to_rts(p->sq) || qp_to_rts(p->rq)
		   ? -1
		   : 0;
}

static int atomic_write(struct pair *p, uint32_t rkey, void *addr, uint64_t v, uint64_t wr_id)
{
	ibv_wr_start(p->x);
	p->x->wr_id = wr_id;
	p->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(p->x, rkey, (uintptr_t)addr, &v);
	return ibv_wr_complete(p->x);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dx;
	struct ibv_qp_init_attr_ex ud = {
	    .qp_type = IBV_QPT_UD,
	    .cap = {.max_send_wr = 1, .max_send_sge = 1, .max_recv_wr = 1, .max_recv_sge = 1},
	    .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	    .send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE};
	struct ibv_mr *tmr, *romr;
	struct ibv_qp *q;
	struct ibv_wc wc;
	struct pair p;
	struct side a, b;
	pthread_t th;
	int bad = 0;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: atomic_write DEVICE [PEER]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open("atomic_write", argv[1], &a, &b))
		return 1;
	tctx = argc == 3 ? open_dev(argv[2]) : ctx;
	tpd = argc == 3 && tctx ? ibv_alloc_pd(tctx) : pd;
	if (!tpd || ibv_query_gid(tctx, 1, 0, &tgid)) {
		fprintf(stderr, "atomic_write: no peer %s\n", argv[2]);
		return 1;
	}
	memset(&dx, 0, sizeof(dx));
	if (ibv_query_device_ex(ctx, NULL, &dx))
		check(0, "ibv_query_device_ex: %s", strerror(errno));
	check(!!(dx.device_cap_flags_ex & DEVICE_ATOMIC_WRITE),
	      "IB_UVERBS_DEVICE_ATOMIC_WRITE in device_cap_flags_ex (0x%llx)",
	      (unsigned long long)dx.device_cap_flags_ex);
	ud.pd = pd;
	ud.send_cq = ud.recv_cq = a.cq;
	q = ibv_create_qp_ex(ctx, &ud);
	check(!q && errno == EOPNOTSUPP, "a UD QP with IBV_QP_EX_WITH_ATOMIC_WRITE: %s",
	      q ? "created" : strerror(errno));
	tmr = ibv_reg_mr(tpd, target, sizeof(target),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	check(tmr && !pair_make(&p), "RC pair with IBV_QP_EX_WITH_ATOMIC_WRITE: %s",
	      tmr ? "ok" : strerror(errno));
	if (!tmr || !p.x)
		return 1;

	check(!atomic_write(&p, tmr->rkey, &target[1], 0x1122334455667788ull, 7),
	      "ibv_wr_atomic_write posted");
	wc = wait_wc(p.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 7,
	      "completes: %s, opcode %d (IBV_WC_ATOMIC_WRITE %d)", ibv_wc_status_str(wc.status),
	      wc.opcode, IBV_WC_ATOMIC_WRITE);
	check(target[1] == 0x1122334455667788ull, "the 8 bytes landed (0x%llx)",
	      (unsigned long long)target[1]);

	/* Many alternating values under a concurrent reader, into a page of
	 * its own that the daemon maps. */
	{
		long pgsz = sysconf(_SC_PAGESIZE);
		void *page = mmap(NULL, (size_t)pgsz, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct ibv_mr *pmr =
		    page == MAP_FAILED
			? NULL
			: ibv_reg_mr(tpd, page, (size_t)pgsz,
				     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		uintptr_t lo, hi;
		int shared = 0;
		int err = pmr ? 0 : errno;

		if (pmr && maps_at(page, &lo, &hi, &shared))
			shared = 0;
		check(pmr && shared, "a page-sized MR the daemon maps (%s)",
		      !pmr     ? strerror(err)
		      : shared ? "shared"
			       : "still private");
		if (!pmr)
			return 1;
		word = page;
		if (pthread_create(&th, NULL, reader, NULL))
			return 1;
		for (int i = 0; i < ROUNDS && !bad; i++) {
			if (atomic_write(&p, pmr->rkey, word, i & 1 ? val_b : val_a, (uint64_t)i))
				bad++;
			wc = wait_wc(p.cq);
			if (wc.status != IBV_WC_SUCCESS)
				bad++;
		}
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		check(!bad && *word == val_b, "%d atomic writes under a reader thread", ROUNDS);
		check(!torn, "the reader saw no torn value in %lu reads (%lu torn)", reads, torn);
	}

	{
		struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
		struct ibv_send_wr wr = {.opcode = IBV_WR_ATOMIC_WRITE,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bw;

		wr.wr.rdma.remote_addr = (uintptr_t)&target[2];
		wr.wr.rdma.rkey = tmr->rkey;
		check(ibv_post_send(p.sq, &wr, &bw) == EINVAL && bw == &wr,
		      "ibv_post_send with IBV_WR_ATOMIC_WRITE: EINVAL");
	}

	/* Misaligned: invalid request; the QP is then in error. */
	check(!atomic_write(&p, tmr->rkey, (char *)&target[2] + 4, val_a, 8), "misaligned posted");
	wc = wait_wc(p.cq);
	check(wc.status == IBV_WC_REM_INV_REQ_ERR, "misaligned address: %s (want %s)",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
	check(!target[2] && !target[3], "nothing written");

	romr = ibv_reg_mr(tpd, &target[2], 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check(romr && !pair_make(&p), "a fresh pair, an MR without remote write");
	if (!romr || !p.x)
		return 1;
	check(!atomic_write(&p, romr->rkey, &target[2], val_a, 9), "posted");
	wc = wait_wc(p.cq);
	check(wc.status == IBV_WC_REM_ACCESS_ERR, "no IBV_ACCESS_REMOTE_WRITE: %s (want %s)",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	check(!target[2], "nothing written");
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
