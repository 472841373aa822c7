// SPDX-License-Identifier: MIT
/*
 * mr_hugepages DEVICE on|off: registration collapses the 2 MiB-aligned part
 * of an MR's range into transparent huge pages (verbs-shim/mr.c), so that
 * the daemon's DMA engine pins one folio per 2 MiB instead of 512 pages.
 *
 *  on:  a populated 10 MiB buffer is mostly huge pages after ibv_reg_mr,
 *       with its contents intact, and RDMA WRITE and READ through a QP of
 *       the device reach it; an on-demand-paging MR over memory of which
 *       only a few pages were touched populates nothing; a range the
 *       program marked MADV_NOHUGEPAGE stays in small pages;
 *  off: (run with UROCE_MR_HUGEPAGES=0) the buffer stays in small pages.
 *
 * Prints "skip: ..." and exits 0 when this kernel cannot collapse memory
 * of the program's own (no MADV_COLLAPSE, THP "never", no free huge page)
 * or gives fresh memory huge pages by itself (THP "always"), where there is
 * nothing to tell apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_pair.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define MIB (1024u * 1024u)
#define BIG (10 * MIB)

/* "Rss" or "AnonHugePages" of the mapping that starts at addr, in kB; -1 if none. */
static long smaps_kb(const void *addr, const char *field)
{
	char line[256], want[64];
	FILE *f = fopen("/proc/self/smaps", "re");
	int in = 0;
	long kb = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%s:", field);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = lo == (uintptr_t)addr;
			continue;
		}
		if (in && !strncmp(line, want, strlen(want))) {
			kb = strtol(line + strlen(want), NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* len bytes of anonymous memory in a mapping of its own: a PROT_NONE page
 * on each side keeps the kernel from merging it with a neighbour. */
static char *own_mapping(size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len + 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p, (size_t)pg, PROT_NONE) || mprotect(p + pg + len, (size_t)pg, PROT_NONE))
		return NULL;
	return p + pg;
}

static void fill(char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(i * 7 + i / 4096);
}

static int intact(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (char)(i * 7 + i / 4096))
			return 0;
	return 1;
}

/* Can this kernel collapse at all? Tried on memory of our own. */
static const char *cannot_collapse(void)
{
	char *p = own_mapping(4 * MIB);
	int err;

	if (!p)
		return "no memory";
	memset(p, 1, 4 * MIB);
	if (smaps_kb(p, "AnonHugePages") > 0)
		return "the kernel gave fresh memory huge pages by itself (THP \"always\")";
	err = madvise(p, 4 * MIB, MADV_COLLAPSE) ? errno : 0;
	munmap(p - sysconf(_SC_PAGESIZE), 4 * MIB + 2 * (size_t)sysconf(_SC_PAGESIZE));
	if (err == EINVAL)
		return "this kernel has no MADV_COLLAPSE or THP is \"never\"";
	if (err)
		return err == EAGAIN || err == ENOMEM ? "the kernel found no free huge page"
						      : "MADV_COLLAPSE failed";
	return NULL;
}

/* 4 KiB from buf to remote (WRITE) or from remote to buf + 4096 (READ). */
static int rdma(struct side *s, enum ibv_wr_opcode op, struct ibv_mr *big, char *remote)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(op == IBV_WR_RDMA_READ ? buf + 4096 : buf),
			      .length = 4096,
			      .lkey = mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = (uintptr_t)remote, .rkey = big->rkey}},
			   *bad;
	struct ibv_wc wc;

	if (ibv_post_send(s->qp, &wr, &bad))
		return -1;
	wc = wait_wc(s->cq);
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct side a, b;
	struct ibv_device_attr_ex ax;
	const char *why;
	struct ibv_mr *big;
	char *p, *q;
	long huge, rss;
	int on;

	if (argc != 3 || (strcmp(argv[2], "on") && strcmp(argv[2], "off"))) {
		fprintf(stderr, "usage: mr_hugepages DEVICE on|off\n");
		return 2;
	}
	on = !strcmp(argv[2], "on");
	why = cannot_collapse();
	if (why) {
		printf("skip: %s\n", why);
		return 0;
	}
	if (pair_open("mr_hugepages", argv[1], &a, &b))
		return 1;
	p = own_mapping(BIG);
	check(p != NULL, "a 10 MiB mapping of its own");
	if (!p)
		return 1;
	fill(p, BIG);
	check(smaps_kb(p, "AnonHugePages") == 0, "populated, it is in small pages");
	big = ibv_reg_mr(pd, p, BIG,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	check(big != NULL, "ibv_reg_mr of 10 MiB");
	if (!big)
		return 1;
	huge = smaps_kb(p, "AnonHugePages");
	if (!on) {
		check(huge == 0, "UROCE_MR_HUGEPAGES=0: registration left it in small pages (%ld kB huge)",
		      huge);
		check(intact(p, BIG), "its contents are intact");
		return failures ? 1 : 0;
	}
	/* At least four aligned 2 MiB blocks lie inside 10 MiB; collapse may
	 * fail for want of free huge pages, which a test machine has. */
	check(huge >= 8192, "after ibv_reg_mr %ld kB of it are huge pages (>= 8192)", huge);
	check(intact(p, BIG), "its contents are intact");

	check(!qp_to_rtr(a.qp, b.qp->qp_num) && !qp_to_rts(a.qp) &&
		  !qp_to_rtr(b.qp, a.qp->qp_num) && !qp_to_rts(b.qp),
	      "a loopback RC pair");
	check(!ibv_modify_qp(b.qp,
			     &(struct ibv_qp_attr){.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
								      IBV_ACCESS_REMOTE_READ},
			     IBV_QP_ACCESS_FLAGS),
	      "its responder takes RDMA READs");
	for (int i = 0; i < 4096; i++)
		buf[i] = (char)(0x5a ^ i);
	q = p + 5 * MIB + 123; /* inside a huge page, across no boundary */
	check(!rdma(&a, IBV_WR_RDMA_WRITE, big, q) && !memcmp(q, buf, 4096),
	      "an RDMA WRITE lands in a huge page");
	memset(buf + 4096, 0, 4096);
	q = p + 4 * MIB - 2048; /* across a 2 MiB boundary */
	check(!rdma(&a, IBV_WR_RDMA_READ, big, q) && !memcmp(buf + 4096, q, 4096),
	      "an RDMA READ across a 2 MiB boundary returns the memory");
	check(!ibv_dereg_mr(big), "ibv_dereg_mr");

	/* A range the program keeps out of huge pages stays so. */
	q = own_mapping(BIG);
	check(q && !madvise(q, BIG, MADV_NOHUGEPAGE), "a 10 MiB mapping marked MADV_NOHUGEPAGE");
	if (q) {
		fill(q, BIG);
		big = ibv_reg_mr(pd, q, BIG, IBV_ACCESS_LOCAL_WRITE);
		huge = smaps_kb(q, "AnonHugePages");
		check(big && huge == 0, "registered, it stays in small pages (%ld kB huge)", huge);
		check(intact(q, BIG), "its contents are intact");
		if (big)
			ibv_dereg_mr(big);
	}

	/* On-demand paging populates nothing up front. */
	if (!ibv_query_device_ex(ctx, NULL, &ax) &&
	    (ax.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		q = own_mapping(BIG);
		check(q != NULL, "another 10 MiB mapping");
		if (!q)
			return 1;
		for (size_t off = 0; off < BIG; off += 2 * MIB)
			q[off] = 1; /* five pages */
		big = ibv_reg_mr(pd, q, BIG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
		huge = smaps_kb(q, "AnonHugePages");
		rss = smaps_kb(q, "Rss");
		check(big && huge == 0 && rss >= 0 && rss <= 64,
		      "an ODP MR over it populates nothing (Rss %ld kB, %ld kB huge)", rss, huge);
		if (big)
			ibv_dereg_mr(big);
	}
	printf("%s\n", failures ? "mr_hugepages: FAILED" : "mr_hugepages: all ok");
	return failures ? 1 : 0;
}
