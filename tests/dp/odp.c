// SPDX-License-Identifier: MIT
/*
 * odp DEVICE: on-demand paging as ODP hardware behaves, on two RC QPs of
 * one device (verbs_pair.c), through the shim:
 * - the device advertises ODP (general, implicit, RC send/recv/write/read/atomic);
 * - an ODP MR over memory that is not mapped yet registers (a pinning MR
 *   over the same range fails with EFAULT); once the application maps the
 *   memory, RDMA WRITE from it and into it move the data;
 * - after the application unmaps it again, a WRITE from it fails with
 *   IBV_WC_LOC_PROT_ERR and one into it with IBV_WC_REM_ACCESS_ERR on the
 *   requester; the QPs are in error, nothing else breaks (a fresh pair
 *   works);
 * - an implicit ODP MR (NULL, SIZE_MAX) serves a SEND from any buffer, a
 *   stack buffer included, and an atomic into the heap;
 * - ibv_advise_mr: prefetch (with FLUSH) of a mapped range succeeds, of an
 *   unmapped one fails with EFAULT; a pinning MR or a bad key: EFAULT;
 *   PREFETCH_WRITE of an MR without write access: EPERM; unknown flags:
 *   EINVAL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_pair.h"

#define REGION (64 * 1024)

static struct ibv_wc wait_one(struct side *s)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	for (long i = 0; i < 50000000; i++)
		if (ibv_poll_cq(s->cq, 1, &wc) == 1)
			return wc;
	check(0, "no completion");
	return wc;
}

static int post_rdma(struct side *s, enum ibv_wr_opcode op, void *laddr, uint32_t lkey,
		     uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)laddr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

/* Connected, each QP open to remote writes, reads and atomics. */
static int connect_pair(struct side *a, struct side *b)
{
	struct ibv_qp_attr at = {.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC};

	return qp_to_rtr(a->qp, b->qp->qp_num) || qp_to_rtr(b->qp, a->qp->qp_num) ||
	       qp_to_rts(a->qp) || qp_to_rts(b->qp) ||
	       ibv_modify_qp(a->qp, &at, IBV_QP_ACCESS_FLAGS) ||
	       ibv_modify_qp(b->qp, &at, IBV_QP_ACCESS_FLAGS);
}

/* Both QPs back to RESET (their CQs drained), then connected again. */
static int reset_pair(struct side *a, struct side *b)
{
	struct ibv_qp_attr at = {.qp_state = IBV_QPS_RESET};
	struct ibv_wc wc;

	if (ibv_modify_qp(a->qp, &at, IBV_QP_STATE) || ibv_modify_qp(b->qp, &at, IBV_QP_STATE))
		return -1;
	while (ibv_poll_cq(a->cq, 1, &wc) > 0 || ibv_poll_cq(b->cq, 1, &wc) > 0)
		;
	return connect_pair(a, b);
}

static int advise(struct ibv_mr *m, void *addr, uint32_t len, enum ibv_advise_mr_advice adv,
		  uint32_t flags)
{
	struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = m->lkey};

	return ibv_advise_mr(pd, adv, flags, &sge, 1);
}

int main(int argc, char **argv)
{
	const unsigned rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_device_attr_ex ax;
	struct side a, b;
	struct ibv_mr *odp, *pinned, *ro, *imp;
	struct ibv_wc wc;
	char *region, *src;
	char stackbuf[64];
	uint64_t *word;

	if (argc != 2) {
		fprintf(stderr, "usage: odp DEVICE\n");
		return 2;
	}
	if (pair_open("odp", argv[1], &a, &b))
		return 1;
	check(!ibv_query_device_ex(ctx, NULL, &ax) &&
		      (ax.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
		      (ax.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) &&
		      (ax.odp_caps.per_transport_caps.rc_odp_caps &
		       (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC)) == 0x1f,
	      "ODP advertised: general 0x%llx, RC 0x%x", (unsigned long long)ax.odp_caps.general_caps,
	      ax.odp_caps.per_transport_caps.rc_odp_caps);
	check(!connect_pair(&a, &b), "QPs connected");

	/* A range that is not mapped (mapped once to find a free one). */
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(REGION);
	if (region == MAP_FAILED || !src)
		return 1;
	munmap(region, REGION);
	pinned = ibv_reg_mr(pd, region, REGION, rw);
	check(!pinned && errno == EFAULT, "a pinning MR over unmapped memory fails with EFAULT (%s)",
	      pinned ? "registered" : strerror(errno));
	odp = ibv_reg_mr(pd, region, REGION, rw | IBV_ACCESS_ON_DEMAND);
	check(odp != NULL, "an ODP MR over unmapped memory registers (%s)",
	      odp ? "ok" : strerror(errno));
	if (!odp)
		return 1;
	check(advise(odp, region, 4096, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH) ==
		  EFAULT,
	      "prefetch of the unmapped range: EFAULT");

	/* The application maps it now. */
	check(mmap(region, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		   -1, 0) == region,
	      "the range mapped after registration");
	check(advise(odp, region, REGION, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		     IBV_ADVISE_MR_FLAG_FLUSH) == 0,
	      "prefetch (write, flush) of the mapped range");
	memset(region, 0x5a, 4096);
	pinned = ibv_reg_mr(pd, src, REGION, rw);
	check(pinned != NULL, "a pinning MR over the source buffer");
	if (!pinned)
		return 1;
	check(!post_rdma(&a, IBV_WR_RDMA_WRITE, region, odp->lkey, 4096, (uintptr_t)src,
			 pinned->rkey),
	      "post WRITE from the ODP MR");
	wc = wait_one(&a);
	check(wc.status == IBV_WC_SUCCESS && src[0] == 0x5a && src[4095] == 0x5a,
	      "WRITE from memory mapped after registration: %s, data %s",
	      ibv_wc_status_str(wc.status), src[4095] == 0x5a ? "arrived" : "missing");
	memset(src, 0xa5, 8192);
	check(!post_rdma(&a, IBV_WR_RDMA_WRITE, src, pinned->lkey, 8192,
			 (uintptr_t)region + 8192, odp->rkey),
	      "post WRITE into the ODP MR");
	wc = wait_one(&a);
	check(wc.status == IBV_WC_SUCCESS && (unsigned char)region[8192] == 0xa5 &&
		  (unsigned char)region[16383] == 0xa5,
	      "WRITE into it: %s", ibv_wc_status_str(wc.status));
	check(advise(pinned, src, 4096, IBV_ADVISE_MR_ADVICE_PREFETCH, 0) == EFAULT,
	      "advise on a pinning MR: EFAULT");
	{
		struct ibv_sge bad = {.addr = (uintptr_t)region, .length = 16, .lkey = odp->lkey ^ 0x100};

		check(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &bad, 1) == EFAULT,
		      "advise with a bad L_Key: EFAULT");
	}
	check(advise(odp, region, 16, IBV_ADVISE_MR_ADVICE_PREFETCH, 0x80) == EINVAL,
	      "advise with unknown flags: EINVAL");
	ro = ibv_reg_mr(pd, region, 4096, IBV_ACCESS_ON_DEMAND);
	check(ro && advise(ro, region, 16, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0) == EPERM &&
		  advise(ro, region, 16, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0) == 0,
	      "PREFETCH_WRITE of a read-only ODP MR: EPERM; NO_FAULT: 0");

	/* Implicit ODP: the whole address space, any buffer. */
	imp = ibv_reg_mr(pd, NULL, SIZE_MAX, rw | IBV_ACCESS_ON_DEMAND);
	check(imp != NULL, "an implicit ODP MR (NULL, SIZE_MAX) registers (%s)",
	      imp ? "ok" : strerror(errno));
	if (imp) {
		memset(stackbuf, 0x33, sizeof(stackbuf));
		check(!post_rdma(&a, IBV_WR_RDMA_WRITE, stackbuf, imp->lkey, sizeof(stackbuf),
				 (uintptr_t)src + 100, imp->rkey),
		      "post WRITE stack -> heap through the implicit MR");
		wc = wait_one(&a);
		check(wc.status == IBV_WC_SUCCESS && src[100] == 0x33 && src[163] == 0x33,
		      "WRITE through the implicit MR: %s", ibv_wc_status_str(wc.status));
		word = (uint64_t *)(void *)(src + 256);
		*word = 40;
		{
			struct ibv_sge sge = {.addr = (uintptr_t)stackbuf, .length = 8,
					      .lkey = imp->lkey};
			struct ibv_send_wr wr = {.wr_id = 8, .sg_list = &sge, .num_sge = 1,
						 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
						 .send_flags = IBV_SEND_SIGNALED};
			struct ibv_send_wr *bad;

			wr.wr.atomic.remote_addr = (uintptr_t)word;
			wr.wr.atomic.compare_add = 2;
			wr.wr.atomic.rkey = imp->rkey;
			check(!ibv_post_send(a.qp, &wr, &bad), "post fetch-and-add via the implicit MR");
			wc = wait_one(&a);
			check(wc.status == IBV_WC_SUCCESS && *word == 42,
			      "fetch-and-add through the implicit MR: %s, word %llu",
			      ibv_wc_status_str(wc.status), (unsigned long long)*word);
		}
	}

	/* Unmapped again: the WR fails, nothing else does. */
	munmap(region, REGION);
	check(!post_rdma(&a, IBV_WR_RDMA_WRITE, region, odp->lkey, 4096, (uintptr_t)src,
			 pinned->rkey),
	      "post WRITE from the unmapped ODP range");
	wc = wait_one(&a);
	check(wc.status == IBV_WC_LOC_PROT_ERR, "WRITE from unmapped ODP memory: %s (want %s)",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_LOC_PROT_ERR));
	check(!reset_pair(&a, &b), "the QPs reset and connect again");
	check(!post_rdma(&a, IBV_WR_RDMA_WRITE, src, pinned->lkey, 4096, (uintptr_t)region,
			 odp->rkey),
	      "post WRITE into the unmapped ODP range");
	wc = wait_one(&a);
	check(wc.status == IBV_WC_REM_ACCESS_ERR, "WRITE into unmapped ODP memory: %s (want %s)",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	check(!reset_pair(&a, &b), "the QPs reset and connect again");
	memset(stackbuf, 0x77, sizeof(stackbuf));
	check(!post_rdma(&a, IBV_WR_RDMA_WRITE, stackbuf, imp->lkey, sizeof(stackbuf),
			 (uintptr_t)src, pinned->rkey),
	      "post WRITE after the errors");
	wc = wait_one(&a);
	check(wc.status == IBV_WC_SUCCESS && src[0] == 0x77,
	      "a WRITE after the errors works: %s", ibv_wc_status_str(wc.status));
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
