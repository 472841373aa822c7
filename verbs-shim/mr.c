/* SPDX-License-Identifier: MIT */
/*
 * Memory registration: ibv_reg_mr, ibv_reg_mr_iova, ibv_reg_mr_iova2,
 * ibv_rereg_mr and ibv_dereg_mr. The daemon checks the range against the
 * process's mappings (EFAULT for unmapped memory, as pinning fails on
 * hardware) and the access flags, and allocates the keys. Memory windows:
 * ibv_alloc_mw and ibv_dealloc_mw (through ops.alloc_mw/dealloc_mw; their
 * binds are work requests, qp.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif

/*
 * The daemon's DMA engine (process_vm_readv/writev) pins and releases the
 * application's pages one by one on every transfer, so its cost grows with
 * the number of distinct pages a workload cycles through (ib_write_bw -q
 * 1000 walks 128 MB of buffers). A registered buffer backed by transparent
 * huge pages costs one pin per 2 MiB folio instead of 512. So, as a DMA
 * engine that works best on huge pages would ask, registration collapses
 * the 2 MiB-aligned part of an MR's range into huge pages (MADV_COLLAPSE):
 * the contents stay as they are, the application's own setting for the
 * range stays as it is (a range it marked MADV_NOHUGEPAGE is left alone by
 * the kernel), and only pages already present are collapsed (no memory is
 * populated that the application did not touch, up to the rest of a 2 MiB
 * block it uses part of). Best effort: a kernel without MADV_COLLAPSE, a
 * system whose THP setting is "never", memory that cannot be collapsed and
 * UROCE_MR_HUGEPAGES=0 leave the range as it is. On-demand-paging MRs are
 * never touched (their point is that nothing is populated up front), nor
 * are MRs whose pages the daemon maps (mr_share.c: no pinning at all).
 */
static size_t collapse_unit;

static void collapse_init(void)
{
	const char *env = getenv("UROCE_MR_HUGEPAGES");
	char line[128] = "";
	unsigned long unit = 0;
	FILE *f;

	if (env && !strcmp(env, "0"))
		return;
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	if (!f)
		return;
	if (!fgets(line, sizeof(line), f) || strstr(line, "[never]")) {
		fclose(f);
		return;
	}
	fclose(f);
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");
	if (f) {
		if (fscanf(f, "%lu", &unit) != 1)
			unit = 0;
		fclose(f);
	}
	/* a power of two, or none */
	if (unit && !(unit & (unit - 1)))
		collapse_unit = unit;
}

static void mr_collapse(void *addr, size_t length)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uintptr_t start, end;
	int saved = errno;

	pthread_once(&once, collapse_init);
	if (!collapse_unit || !addr || length < collapse_unit)
		return;
	start = ((uintptr_t)addr + collapse_unit - 1) & ~(uintptr_t)(collapse_unit - 1);
	end = ((uintptr_t)addr + length) & ~(uintptr_t)(collapse_unit - 1);
	if (end > start && madvise((void *)start, end - start, MADV_COLLAPSE))
		errno = saved; /* EINVAL, EAGAIN, ENOMEM: the range stays as it is */
}

/*
 * The L_Key table: which memory of the process stands behind an L_Key, for
 * qp.c's snapshot of small send payloads. Only plain MRs are in it: an
 * on-demand MR's memory need not be there, device memory is not the
 * process's, and an MR whose IOVA differs from its address would need the
 * translation. A lookup takes the read lock (posts), a change the write
 * lock (registration, deregistration).
 */
static struct shim_lkey **lkey_bucket(struct shim_context *ctx, uint32_t lkey)
{
	return &ctx->lkeys[(lkey * 2654435769u >> 8) % SHIM_LKEY_BUCKETS];
}

void shim_lkey_add(struct shim_context *ctx, uint32_t lkey, const void *addr, size_t len)
{
	struct shim_lkey *e = malloc(sizeof(*e));
	struct shim_lkey **b;

	if (!e)
		return; /* the sends from it are read by the daemon, as any */
	e->lkey = lkey;
	e->start = (uintptr_t)addr;
	e->end = (uintptr_t)addr + len;
	pthread_rwlock_wrlock(&ctx->lkey_lock);
	b = lkey_bucket(ctx, lkey);
	e->next = *b;
	*b = e;
	pthread_rwlock_unlock(&ctx->lkey_lock);
}

void shim_lkey_del(struct shim_context *ctx, uint32_t lkey)
{
	struct shim_lkey **p, *e;

	pthread_rwlock_wrlock(&ctx->lkey_lock);
	for (p = lkey_bucket(ctx, lkey); (e = *p); p = &e->next)
		if (e->lkey == lkey) {
			*p = e->next;
			free(e);
			break;
		}
	pthread_rwlock_unlock(&ctx->lkey_lock);
}

bool shim_lkey_covers(struct shim_context *ctx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	const struct shim_lkey *e;
	bool ok = false;

	pthread_rwlock_rdlock(&ctx->lkey_lock);
	for (e = *lkey_bucket(ctx, lkey); e; e = e->next)
		if (e->lkey == lkey) {
			ok = addr >= e->start && addr <= e->end && len <= e->end - addr;
			break;
		}
	pthread_rwlock_unlock(&ctx->lkey_lock);
	return ok;
}

void shim_lkey_free_all(struct shim_context *ctx)
{
	for (int i = 0; i < SHIM_LKEY_BUCKETS; i++)
		while (ctx->lkeys[i]) {
			struct shim_lkey *e = ctx->lkeys[i];

			ctx->lkeys[i] = e->next;
			free(e);
		}
}

/*
 * Put a plain MR's L_Key in the table (see above). UROCE_PREREAD=0 keeps
 * every L_Key out of it, so no payload is copied at the post: for a program
 * that unmaps registered memory and still sends from it (a NIC would send
 * the bytes of the pages it pinned; the copy would fault).
 */
static void mr_note_lkey(struct ibv_mr *mr)
{
	static int off = -1;
	const struct shim_mr *m = SHIM_CONTAINER_OF(mr, struct shim_mr, mr);

	if (off < 0) {
		const char *env = getenv("UROCE_PREREAD");

		off = env && !strcmp(env, "0");
	}
	if (!off && !(m->access & IBV_ACCESS_ON_DEMAND) && mr->addr &&
	    m->iova == (uintptr_t)mr->addr)
		shim_lkey_add(shim_ctx(mr->context), mr->lkey, mr->addr, mr->length);
}

/*
 * After a registration or a new translation: the MR's pages shared with
 * the daemon (mr_share.c), or else, unless on-demand, collapsed into huge
 * pages (pages the daemon maps need none).
 */
static void mr_place(struct ibv_mr *mr)
{
	if (!shim_mr_share(mr) && !(((struct shim_mr *)mr)->access & IBV_ACCESS_ON_DEMAND))
		mr_collapse(mr->addr, mr->length);
}

struct ibv_mr *shim_mr_register(struct ibv_pd *pd, void *req, size_t req_len, void *addr,
				size_t length)
{
	struct uroce_reg_mr_resp resp;
	struct shim_mr *mr;
	int err;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return shim_fail_null(-ENOMEM);
	err = shim_call(shim_ctx(pd->context), req, req_len, &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(mr);
		return shim_fail_null(err);
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = resp.handle;
	mr->mr.lkey = resp.lkey;
	mr->mr.rkey = resp.rkey;
	return &mr->mr;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct uroce_reg_mr_req req = {.hdr.op = UROCE_OP_REG_MR,
				       .pd_handle = pd->handle,
				       .access = access,
				       .addr = (uintptr_t)addr,
				       .length = length,
				       .iova = iova};
	struct ibv_mr *mr = shim_mr_register(pd, &req, sizeof(req), addr, length);

	if (!mr)
		return NULL;
	((struct shim_mr *)mr)->access = access;
	((struct shim_mr *)mr)->iova = iova;
	mr_place(mr);
	mr_note_lkey(mr);
	return mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	struct uroce_rereg_mr_req req = {.hdr.op = UROCE_OP_REREG_MR,
					 .handle = mr->handle,
					 .flags = (uint32_t)flags,
					 .access = (uint32_t)access,
					 .addr = (uintptr_t)addr,
					 .length = length,
					 .iova = (uintptr_t)addr};
	struct uroce_reg_mr_resp resp;
	int err;

	/* Input checks of rdma-core's ibv_rereg_mr. */
	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr || length)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!pd || pd->context != mr->context) {
			errno = EINVAL;
			return IBV_REREG_MR_ERR_INPUT;
		}
		req.pd_handle = pd->handle;
	}
	/* Out of the table while it changes: a send posted meanwhile is read
	 * by the daemon, which knows the MR as it is. */
	shim_lkey_del(shim_ctx(mr->context), mr->lkey);
	err =
	    shim_call(shim_ctx(mr->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		mr_note_lkey(mr); /* unchanged */
		errno = -err;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		((struct shim_mr *)mr)->access = (unsigned int)access;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		/* The daemon unmapped the old pages; the new ones may be shared. */
		shim_mr_unshare(mr);
		mr->addr = addr;
		mr->length = length;
		((struct shim_mr *)mr)->iova = (uintptr_t)addr;
		mr_place(mr);
	}
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	mr_note_lkey(mr);
	return 0;
}

/*
 * ibv_advise_mr (the verbs_context op): the daemon checks every SGE against
 * the ODP MRs of the PD and prefetches; a list longer than one request holds
 * goes in several, in order, stopping at the first error.
 */
int shim_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		   struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct uroce_advise_mr_req req;
	struct uroce_msg_hdr resp;
	uint32_t done = 0;

	if (!num_sge || !sg_list)
		return EINVAL;
	while (done < num_sge) {
		uint32_t n = num_sge - done < UROCE_ADVISE_MAX_SGE ? num_sge - done
								    : UROCE_ADVISE_MAX_SGE;
		int err;

		memset(&req, 0, sizeof(req));
		req.hdr.op = UROCE_OP_ADVISE_MR;
		req.pd_handle = pd->handle;
		req.advice = (uint32_t)advice;
		req.flags = flags;
		req.num_sge = n;
		for (uint32_t i = 0; i < n; i++) {
			req.sge[i].addr = sg_list[done + i].addr;
			req.sge[i].length = sg_list[done + i].length;
			req.sge[i].lkey = sg_list[done + i].lkey;
		}
		err = shim_call(shim_ctx(pd->context), &req, sizeof(req), &resp, sizeof(resp), NULL,
				0, NULL);
		if (err)
			return -err;
		done += n;
	}
	return 0;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	int err;

	shim_lkey_del(shim_ctx(mr->context), mr->lkey);
	err = shim_call_simple(shim_ctx(mr->context), UROCE_OP_DEREG_MR, mr->handle);
	if (err) {
		/* Still registered (a memory window bound to it, say). */
		mr_note_lkey(mr);
		return -err;
	}
	shim_mr_unshare(mr);
	free(SHIM_CONTAINER_OF(mr, struct shim_mr, mr));
	return 0;
}

struct ibv_mw *shim_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct uroce_alloc_mw_req req = {
	    .hdr.op = UROCE_OP_ALLOC_MW, .pd_handle = pd->handle, .type = (uint32_t)type};
	struct uroce_alloc_mw_resp resp;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return shim_fail_null(-ENOMEM);
	err =
	    shim_call(shim_ctx(pd->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(mw);
		return shim_fail_null(err);
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = resp.rkey;
	mw->handle = resp.handle;
	mw->type = type;
	return mw;
}

int shim_dealloc_mw(struct ibv_mw *mw)
{
	int err = shim_call_simple(shim_ctx(mw->context), UROCE_OP_DEALLOC_MW, mw->handle);

	if (err)
		return -err;
	free(mw);
	return 0;
}
