// SPDX-License-Identifier: MIT
/*
 * mr_share DEVICE on|off: registered memory the daemon maps
 * (verbs-shim/mr_share.c, MAP_MR).
 *
 *  on:  after ibv_reg_mr the whole pages of the MR are one shared mapping
 *       of the shim's memfd with their contents intact, and the partial
 *       pages at its ends stay private; RDMA WRITE, READ, SEND and both
 *       atomics over the whole MR (both kinds of page) give the right
 *       bytes; a second MR over the same pages leaves them as they are and
 *       its accesses and the first MR's see each other in order; after
 *       fork() the child has private pages with the parent's contents, and
 *       what it writes the parent does not see; the parent's MR still
 *       works; the pages are shared again by a new registration after
 *       deregistration, and a re-registration to new memory shares the new
 *       pages and no longer reaches the old;
 *  off: (run with UROCE_MAP_MR=0) nothing is shared; the same accesses
 *       give the same bytes.
 *
 * Which path the daemon took is its counters' business (datapath.sh reads
 * dma_mapped_bytes around each run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_pair.h"

#define PAGES 16

static size_t pg;

/* How many mappings of /proc/self/maps are shares. */
static int shares(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, SHARE_PATH) != NULL;
	fclose(f);
	return n;
}

/* PAGES pages of anonymous memory in a mapping of its own (PROT_NONE
 * guards), filled from seed. */
static char *region(unsigned seed)
{
	char *p = mmap(NULL, (PAGES + 2) * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED || mprotect(p, pg, PROT_NONE) ||
	    mprotect(p + (PAGES + 1) * pg, pg, PROT_NONE))
		return NULL;
	p += pg;
	for (size_t i = 0; i < PAGES * pg; i++)
		p[i] = (char)(i * seed + i / 4093);
	return p;
}

static int post_wait(struct side *s, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(s->qp, wr, &bad))
		return -1;
	wc = wait_wc(s->cq);
	if (wc.status != IBV_WC_SUCCESS)
		printf("completion: %s\n", ibv_wc_status_str(wc.status));
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* len bytes from local (under lmr) to remote (under rmr), or back. */
static int rdma(struct side *s, enum ibv_wr_opcode op, char *local, struct ibv_mr *lmr,
		char *remote, struct ibv_mr *rmr, size_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)local, .length = (uint32_t)len, .lkey = lmr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .wr.rdma = {.remote_addr = (uintptr_t)remote, .rkey = rmr->rkey}};

	return post_wait(s, &wr);
}

/* An atomic on the 8 bytes at remote; the old value lands at local. */
static int atomic(struct side *s, enum ibv_wr_opcode op, uint64_t *local, struct ibv_mr *lmr,
		  char *remote, struct ibv_mr *rmr, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = {.addr = (uintptr_t)local, .length = 8, .lkey = lmr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op};

	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = rmr->rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return post_wait(s, &wr);
}

static void expect_layout(int on, char *r, const char *when)
{
	uintptr_t lo, hi;
	int sh = 0, first_sh = 1, last_sh = 1;

	if (!on) {
		check(shares() == 0, "%s: no page is shared (%d mappings)", when, shares());
		return;
	}
	check(!maps_at(r + pg, &lo, &hi, &sh) && sh && lo == (uintptr_t)(r + pg) &&
		  hi == (uintptr_t)(r + (PAGES - 1) * pg),
	      "%s: the MR's whole pages are one share (%s)", when, sh ? "shared" : "private");
	check(!maps_at(r, &lo, &hi, &first_sh) && !first_sh &&
		  !maps_at(r + (PAGES - 1) * pg, &lo, &hi, &last_sh) && !last_sh,
	      "%s: its partial first and last pages stay private", when);
}

int main(int argc, char **argv)
{
	int on = argc > 2 && !strcmp(argv[2], "on");
	struct side a, b;
	struct ibv_mr *m1, *m2, *ms, *mt;
	char *r, *src, *dst, *snap;
	size_t len;
	uint64_t *old;
	int status;
	pid_t child;

	if (argc != 3 || (!on && strcmp(argv[2], "off"))) {
		fprintf(stderr, "usage: mr_share DEVICE on|off\n");
		return 2;
	}
	pg = (size_t)sysconf(_SC_PAGESIZE);
	len = PAGES * pg - 200;
	if (pair_open("mr_share", argv[1], &a, &b) || qp_connect(a.qp, b.qp))
		return 1;
	{
		/* READ and atomics too (qp_connect allows remote writes only). */
		struct ibv_qp_attr qa = {.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
							    IBV_ACCESS_REMOTE_READ |
							    IBV_ACCESS_REMOTE_ATOMIC};

		if (ibv_modify_qp(a.qp, &qa, IBV_QP_ACCESS_FLAGS) ||
		    ibv_modify_qp(b.qp, &qa, IBV_QP_ACCESS_FLAGS)) {
			check(0, "QP access flags: %s", strerror(errno));
			return 1;
		}
	}
	r = region(7);
	src = region(13);
	dst = region(3);
	snap = malloc(PAGES * pg);
	if (!r || !src || !dst || !snap)
		return 1;
	memcpy(snap, r, PAGES * pg);
	/* An MR that starts and ends inside a page. */
	m1 = ibv_reg_mr(pd, r + 100, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC);
	ms = ibv_reg_mr(pd, src, PAGES * pg, IBV_ACCESS_LOCAL_WRITE);
	mt = ibv_reg_mr(pd, dst, PAGES * pg, IBV_ACCESS_LOCAL_WRITE);
	if (!m1 || !ms || !mt) {
		check(0, "ibv_reg_mr: %s", strerror(errno));
		return 1;
	}
	expect_layout(on, r, "registered");
	check(!memcmp(r, snap, PAGES * pg), "registration keeps the contents");

	/* Every kind of access, across the partial and the whole pages. */
	check(!rdma(&a, IBV_WR_RDMA_WRITE, src + 100, ms, r + 100, m1, len) &&
		  !memcmp(r + 100, src + 100, len) && !memcmp(r, snap, 100),
	      "RDMA WRITE of %zu bytes over the whole MR", len);
	memset(dst, 0, PAGES * pg);
	check(!rdma(&a, IBV_WR_RDMA_READ, dst + 100, mt, r + 100, m1, len) &&
		  !memcmp(dst + 100, r + 100, len),
	      "RDMA READ of the whole MR");
	{
		struct ibv_sge rs = {
		    .addr = (uintptr_t)r + pg - 50, .length = 3 * (uint32_t)pg, .lkey = m1->lkey};
		struct ibv_recv_wr rw = {.sg_list = &rs, .num_sge = 1}, *rbad;
		struct ibv_send_wr sw = {.opcode = IBV_WR_SEND, .num_sge = 1};
		struct ibv_sge ss = {
		    .addr = (uintptr_t)dst, .length = 3 * (uint32_t)pg, .lkey = mt->lkey};
		struct ibv_wc wc;

		for (size_t i = 0; i < 3 * pg; i++)
			dst[i] = (char)(i ^ 0x55);
		sw.sg_list = &ss;
		check(!ibv_post_recv(b.qp, &rw, &rbad) && !post_wait(&a, &sw) &&
			  (wc = wait_wc(b.cq)).status == IBV_WC_SUCCESS &&
			  !memcmp(r + pg - 50, dst, 3 * pg),
		      "SEND into a receive buffer that starts in a private page");
	}
	old = (uint64_t *)(void *)dst;
	memcpy(r + 2 * pg, &(uint64_t){40}, 8);
	memcpy(r + (PAGES - 1) * pg + 8, &(uint64_t){7}, 8);
	check(!atomic(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, old, mt, r + 2 * pg, m1, 2, 0) &&
		  *old == 40 && *(uint64_t *)(void *)(r + 2 * pg) == 42,
	      "FETCH_AND_ADD on a shared page: old %" PRIu64 ", now %" PRIu64, *old,
	      *(uint64_t *)(void *)(r + 2 * pg));
	check(!atomic(&a, IBV_WR_ATOMIC_CMP_AND_SWP, old, mt, r + (PAGES - 1) * pg + 8, m1, 7, 9) &&
		  *old == 7 && *(uint64_t *)(void *)(r + (PAGES - 1) * pg + 8) == 9,
	      "CMP_AND_SWP on the private last page: old %" PRIu64, *old);

	/* A second MR over the same pages: nothing changes, accesses stay in order. */
	m2 = ibv_reg_mr(pd, r + 2 * pg, 4 * pg,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	check(m2 != NULL, "a second MR over the same pages");
	if (!m2)
		return 1;
	expect_layout(on, r, "after a second MR");
	memset(dst, 0, PAGES * pg);
	check(!rdma(&a, IBV_WR_RDMA_WRITE, src, ms, r + 2 * pg, m2, 4 * pg) &&
		  !rdma(&a, IBV_WR_RDMA_READ, dst, mt, r + 2 * pg, m1, 4 * pg) &&
		  !memcmp(dst, src, 4 * pg),
	      "a WRITE through the second MR, then a READ through the first: the same bytes");

	/* fork: the child's pages are its own. */
	memcpy(snap, r, PAGES * pg);
	child = fork();
	if (child == 0) {
		int bad = shares() != 0 || memcmp(r, snap, PAGES * pg);

		memset(r + pg, 0xee, 2 * pg);
		_exit(bad);
	}
	check(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0,
	      "after fork() the child has private pages with the parent's contents");
	check(!memcmp(r, snap, PAGES * pg), "what the child wrote the parent does not see");
	expect_layout(on, r, "after fork()");
	check(!rdma(&a, IBV_WR_RDMA_WRITE, src + 3000, ms, r + 3000, m1, 5 * pg) &&
		  !memcmp(r + 3000, src + 3000, 5 * pg),
	      "the parent's MR works after fork()");

	/* Deregistered and registered again: shared again. */
	check(!ibv_dereg_mr(m2) && !ibv_dereg_mr(m1), "deregistration");
	m1 = ibv_reg_mr(pd, r + 100, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	check(m1 != NULL, "registered again");
	if (!m1)
		return 1;
	expect_layout(on, r, "registered again");
	for (size_t i = 0; i < PAGES * pg; i++)
		src[i] = (char)(i * 31);
	check(!rdma(&a, IBV_WR_RDMA_WRITE, src + 100, ms, r + 100, m1, len) &&
		  !memcmp(r + 100, src + 100, len),
	      "RDMA WRITE into the MR registered again");

	/* A new translation: the new pages are shared, and the old ones are
	 * no longer what the MR reaches. */
	{
		char *n = region(5), *before = malloc(PAGES * pg);

		if (!n || !before)
			return 1;
		memcpy(before, r, PAGES * pg);
		check(!ibv_rereg_mr(m1, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, n + 100, len,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ),
		      "ibv_rereg_mr to new memory");
		expect_layout(on, n, "re-registered");
		for (size_t i = 0; i < PAGES * pg; i++)
			src[i] = (char)(i * 11 + 3);
		check(!rdma(&a, IBV_WR_RDMA_WRITE, src + 100, ms, n + 100, m1, len) &&
			  !memcmp(n + 100, src + 100, len) && !memcmp(r, before, PAGES * pg),
		      "RDMA WRITE after ibv_rereg_mr lands in the new memory only");
		free(before);
	}
	ibv_dereg_mr(m1);
	ibv_dereg_mr(ms);
	ibv_dereg_mr(mt);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
