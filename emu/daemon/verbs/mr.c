/* SPDX-License-Identifier: MIT */
/*
 * Memory regions: registration, re-registration and deregistration, with
 * the checks hardware applies when it pins memory (the whole range must be
 * mapped in the owner's address space, writable when the access flags let
 * anybody write: otherwise EFAULT), the access-flag rules of IBA 10.6.3
 * (remote write or atomic needs local write: EINVAL), and key allocation.
 * MRs with memory windows bound to them (IBV_ACCESS_MW_BIND) are neither
 * re-registered nor deregistered (EINVAL, as Linux rxe). The MR table is
 * what the DMA engine (process_vm_readv/writev in the transport) consults:
 * emu_dev_mr_by_key().
 *
 * On-demand paging (IBV_ACCESS_ON_DEMAND) is what this DMA engine does
 * anyway: it reaches memory at the moment of each access and pins nothing.
 * An ODP MR is therefore not checked against the mappings at registration
 * (the application may map the memory later, or unmap it), an access to
 * memory not mapped at that moment fails that WR with a protection or
 * access error (EFAULT from the copy), and an implicit ODP MR (address 0,
 * length SIZE_MAX) covers the whole address space. ibv_advise_mr prefetch
 * faults the range in by reading it (emu_mr_advise).
 *
 * Mapped pages (MAP_MR, emu_mr_map): after registration the shim may make
 * the whole pages of a plain MR a shared mapping of a memfd and pass the
 * memfd; the daemon maps it too and the DMA engine then copies to and from
 * those pages with memcpy (dma.c). The daemon maps only what it can check:
 * a memfd sealed against shrinking (so no access through the mapping can
 * fault), at least as long as the pages, and mapped at exactly those
 * addresses in the owner (its /proc/PID/maps lines name the memfd's device
 * and inode at the matching offsets). The mapping lives as long as the MR
 * (a deregistration, a re-registration of its translation or the owner's
 * exit unmaps it), so, as on hardware, the MR's pages stay what the RNIC
 * reaches even if the program unmaps them while they are registered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "procmaps.h"
#include "verbs.h"

#define KNOWN_ACCESS                                                                       \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_MW_BIND | UROCE_ACCESS_ZERO_BASED |     \
	 UROCE_ACCESS_ON_DEMAND | UROCE_ACCESS_HUGETLB | UROCE_ACCESS_FLUSH_GLOBAL |       \
	 UROCE_ACCESS_FLUSH_PERSISTENT | UROCE_ACCESS_OPTIONAL_MASK)

/* Access flags that let the device write the memory (the kernel's
 * ib_access_writable()). */
#define WRITABLE_ACCESS                                                                      \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC | \
	 UROCE_ACCESS_MW_BIND)

static int check_access(uint32_t access)
{
	if (access & ~KNOWN_ACCESS)
		return -EINVAL;
	/*
	 * FLUSH placement types: only global visibility is offered
	 * (IB_UVERBS_DEVICE_FLUSH_GLOBAL; docs/transport.md), and the kernel's
	 * ib_check_mr_access refuses a flush bit the device does not offer
	 * with EOPNOTSUPP.
	 */
	if (access & UROCE_ACCESS_FLUSH_PERSISTENT)
		return -EOPNOTSUPP;
	/* IBA 10.6.3.1: remote write/atomic require local write. */
	if ((access & (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & UROCE_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static bool readable(const struct common_maps_line *m, uint64_t cur, const void *need_write)
{
	(void)cur;
	return m->perms[0] == 'r' && (!*(const int *)need_write || m->perms[1] == 'w');
}

int emu_mr_check_mapped(pid_t pid, uint64_t addr, uint64_t len, int need_write)
{
	return common_maps_walk(pid, addr, len, readable, &need_write);
}

/* What MAP_MR's range must be mapped from: a file, from the range's start at offset 0. */
struct backing {
	dev_t dev;
	ino_t ino;
	uint64_t addr;
};

static bool backed(const struct common_maps_line *m, uint64_t cur, const void *arg)
{
	const struct backing *b = arg;

	return m->perms[3] == 's' && makedev(m->maj, m->min) == b->dev && m->inode == b->ino &&
	       m->off + (cur - m->lo) == cur - b->addr;
}

static void mr_unmap(struct emu_mr *mr)
{
	if (!mr->map)
		return;
	munmap(mr->map, mr->map_len);
	mr->obj.ctx->dev->map_bytes -= mr->map_len;
	mr->map = NULL;
	mr->map_addr = 0;
	mr->map_len = 0;
}

int emu_mr_map(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_map_mr_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_MR);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct emu_mr *mr;
	struct stat st;
	void *map;
	int seals, err;

	(void)rep;
	if (!obj || ctx->req_pid != ctx->pid || (r->flags & ~UROCE_MAP_MR_PROBE))
		return -EINVAL;
	mr = EMU_CONTAINER_OF(obj, struct emu_mr, obj);
	/* Plain memory only: device memory is the daemon's own, ODP memory may come and go. */
	if (mr->dm || (mr->access & UROCE_ACCESS_ON_DEMAND) || mr->map)
		return -EINVAL;
	if (!r->length || (r->addr | r->length) & (page - 1) || r->addr < mr->addr ||
	    r->addr - mr->addr > mr->length || r->length > mr->length - (r->addr - mr->addr))
		return -EINVAL;
	if (r->length > ctx->dev->map_budget - ctx->dev->map_bytes) {
		ctx->dev->dcnt[EMU_DCNT_MR_MAPS_OVER_BUDGET]++;
		return -ENOSPC;
	}
	if (r->flags & UROCE_MAP_MR_PROBE)
		return 0; /* it would (the shim asks before it copies the pages) */
	if (ctx->req_fd < 0)
		return -EINVAL;
	seals = fcntl(ctx->req_fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(ctx->req_fd, &st))
		return -EINVAL;
	if ((uint64_t)st.st_size < r->length)
		return -EINVAL;
	err = common_maps_walk(
	    ctx->pid, r->addr, r->length, backed,
	    &(struct backing){.dev = st.st_dev, .ino = st.st_ino, .addr = r->addr});
	if (err)
		return err == -EFAULT ? -EINVAL : err;
	map = mmap(NULL, r->length, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->req_fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	mr->map = map;
	mr->map_addr = r->addr;
	mr->map_len = r->length;
	ctx->dev->map_bytes += r->length;
	return 0;
}

int emu_mr_new_key(struct emu_dev *dev, uint32_t *key)
{
	uint32_t idx = 0, tries = 0;

	/*
	 * MRs and memory windows share the index space: an R_Key names one.
	 * The index (the upper 24 bits) is drawn at random as QPNs are
	 * (qp.c), then, in a nearly full space, the next free one; the low
	 * byte is a "key" that changes between registrations, also random
	 * (as rxe's is). A forger who knows one key learns nothing of the
	 * next MR's, and a stale key is unlikely to hit a new MR.
	 */
	do {
		if (tries < 64)
			idx = emu_dev_random(dev) & 0xffffff;
		else
			idx = (idx + 1) & 0xffffff;
		if (++tries > 0xffffff + 64)
			return -ENOMEM;
	} while (idx == 0 || emu_htab_find(&dev->mr_keys, idx) || emu_htab_find(&dev->mw_keys, idx));
	*key = idx << 8 | (emu_dev_random(dev) & 0xff);
	return 0;
}

static int alloc_key(struct emu_dev *dev, struct emu_mr *mr)
{
	uint32_t key;

	if (emu_mr_new_key(dev, &key) || emu_htab_insert(&dev->mr_keys, &mr->key_node, key >> 8))
		return -ENOMEM;
	mr->lkey = key;
	mr->rkey = mr->lkey;
	return 0;
}

/* An implicit ODP MR: the whole address space (ibv_reg_mr(pd, NULL, SIZE_MAX, ...ON_DEMAND)). */
static bool is_implicit(uint64_t addr, uint64_t len, uint32_t access)
{
	return (access & UROCE_ACCESS_ON_DEMAND) && addr == 0 && len == UINT64_MAX;
}

static int check_range(struct emu_ctx *ctx, uint64_t addr, uint64_t len, uint32_t access)
{
	/*
	 * A process registers only its own memory: DMA goes to the process
	 * that opened the context, so a child that inherited the connection
	 * across fork() (or a process it was passed to) may not name
	 * addresses, which would be its parent's.
	 */
	if (ctx->req_pid != ctx->pid)
		return -EPERM;
	if (is_implicit(addr, len, access))
		return 0;
	if (len == 0 || len > ctx->dev->lim.max_mr_size || addr + len < addr)
		return -EINVAL;
	/* ODP: memory is reached at each access, mapped or not now. */
	if (access & UROCE_ACCESS_ON_DEMAND)
		return 0;
	return emu_mr_check_mapped(ctx->pid, addr, len, !!(access & WRITABLE_ACCESS));
}

/* A new MR of the PD with keys and the access flags (without the optional
 * ones), in the context's objects; NULL when the device has no room. */
static struct emu_mr *mr_new(struct emu_ctx *ctx, struct emu_obj *pdo, uint32_t access)
{
	struct emu_dev *dev = ctx->dev;
	struct emu_mr *mr;

	if (dev->counts.mr >= dev->lim.max_mr)
		return NULL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	if (alloc_key(dev, mr)) {
		free(mr);
		return NULL;
	}
	if (emu_dev_obj_add(ctx, &mr->obj, EMU_OBJ_MR)) {
		emu_htab_remove(&dev->mr_keys, &mr->key_node);
		free(mr);
		return NULL;
	}
	mr->pd = EMU_CONTAINER_OF(pdo, struct emu_pd, obj);
	mr->pd->obj.usecnt++;
	mr->access = access & ~(uint32_t)UROCE_ACCESS_OPTIONAL_MASK;
	return mr;
}

int emu_mr_reg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_reg_mr_req *r = req;
	struct uroce_reg_mr_resp *o;
	struct emu_obj *pdo;
	struct emu_mr *mr;
	int err;

	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	if (!pdo)
		return -EINVAL;
	err = check_access(r->access);
	if (err)
		return err;
	err = check_range(ctx, r->addr, r->length, r->access);
	if (err)
		return err;
	mr = mr_new(ctx, pdo, r->access);
	if (!mr)
		return -ENOMEM;
	mr->addr = r->addr;
	mr->length = r->length;
	mr->iova = r->iova;

	o = EMU_REPLY(rep, struct uroce_reg_mr_resp);
	o->handle = mr->obj.hnode.key;
	o->lkey = mr->lkey;
	o->rkey = mr->rkey;
	return 0;
}

/*
 * ibv_reg_dm_mr: a zero-based MR over [offset, offset+length) of device
 * memory (dm.c). libibverbs already refused one without ZERO_BASED; the
 * daemon checks it again, the range (EINVAL past the DM) and the access
 * rules of any MR.
 */
int emu_mr_reg_dm(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_reg_dm_mr_req *r = req;
	struct uroce_reg_mr_resp *o;
	struct emu_obj *pdo, *dmo;
	struct emu_dm *dm;
	struct emu_mr *mr;
	int err;

	pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	dmo = emu_dev_obj_find(ctx, r->dm_handle, EMU_OBJ_DM);
	if (!pdo || !dmo)
		return -EINVAL;
	dm = EMU_CONTAINER_OF(dmo, struct emu_dm, obj);
	if (!(r->access & UROCE_ACCESS_ZERO_BASED) ||
	    (r->access & (UROCE_ACCESS_ON_DEMAND | UROCE_ACCESS_HUGETLB)))
		return -EINVAL;
	err = check_access(r->access);
	if (err)
		return err;
	/* A zero-length MR is allowed, as the kernel allows it. */
	if (r->offset > dm->length || r->length > dm->length - r->offset)
		return -EINVAL;
	mr = mr_new(ctx, pdo, r->access);
	if (!mr)
		return -ENOMEM;
	mr->dm = dm;
	dm->obj.usecnt++;
	mr->addr = r->offset; /* in the DM */
	mr->length = r->length;
	mr->iova = 0;

	o = EMU_REPLY(rep, struct uroce_reg_mr_resp);
	o->handle = mr->obj.hnode.key;
	o->lkey = mr->lkey;
	o->rkey = mr->rkey;
	return 0;
}

int emu_mr_rereg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_rereg_mr_req *r = req;
	const uint32_t known =
	    UROCE_REREG_CHANGE_TRANSLATION | UROCE_REREG_CHANGE_PD | UROCE_REREG_CHANGE_ACCESS;
	struct uroce_reg_mr_resp *o;
	struct emu_pd *new_pd = NULL;
	struct emu_obj *obj;
	struct emu_mr *mr;
	uint64_t addr, len;
	uint32_t access;
	int err;

	obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_MR);
	if (!obj)
		return -EINVAL;
	mr = EMU_CONTAINER_OF(obj, struct emu_mr, obj);
	if (!r->flags || (r->flags & ~known))
		return -EINVAL;
	if (mr->dm) /* device memory is registered with ibv_reg_dm_mr only */
		return -EINVAL;
	/* IBA 10.6.7.2.6: not while memory windows are bound to it (EINVAL as rxe). */
	if (mr->nmw)
		return -EINVAL;
	if (r->flags & UROCE_REREG_CHANGE_PD) {
		obj = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
		if (!obj)
			return -EINVAL;
		new_pd = EMU_CONTAINER_OF(obj, struct emu_pd, obj);
	}
	access = mr->access;
	if (r->flags & UROCE_REREG_CHANGE_ACCESS) {
		err = check_access(r->access);
		if (err)
			return err;
		access = r->access & ~(uint32_t)UROCE_ACCESS_OPTIONAL_MASK;
	}
	addr = mr->addr;
	len = mr->length;
	if (r->flags & UROCE_REREG_CHANGE_TRANSLATION) {
		addr = r->addr;
		len = r->length;
	}
	/* Re-check the range whenever it or the writability changes. */
	if (r->flags & (UROCE_REREG_CHANGE_TRANSLATION | UROCE_REREG_CHANGE_ACCESS)) {
		err = check_range(ctx, addr, len, access);
		if (err)
			return err;
	}
	if (new_pd) {
		mr->pd->obj.usecnt--;
		mr->pd = new_pd;
		new_pd->obj.usecnt++;
	}
	mr->access = access;
	if (r->flags & UROCE_REREG_CHANGE_TRANSLATION) {
		mr_unmap(mr); /* the pages it had; the new ones are reached with process_vm_* */
		mr->addr = addr;
		mr->length = len;
		mr->iova = r->iova;
	}
	o = EMU_REPLY(rep, struct uroce_reg_mr_resp);
	o->handle = mr->obj.hnode.key;
	o->lkey = mr->lkey;
	o->rkey = mr->rkey;
	return 0;
}

int emu_mr_dereg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_MR);

	(void)rep;
	if (!obj)
		return -EINVAL;
	/* IBA 10.6.7.2.6: not while memory windows are bound to it (EINVAL as rxe). */
	if (EMU_CONTAINER_OF(obj, struct emu_mr, obj)->nmw)
		return -EINVAL;
	emu_mr_free(EMU_CONTAINER_OF(obj, struct emu_mr, obj));
	return 0;
}

/*
 * ibv_advise_mr: every SGE must name a range inside an ODP MR of the PD
 * (ibv_advise_mr(3): EFAULT for a bad key or range, EPERM for
 * PREFETCH_WRITE on an MR that cannot be written). PREFETCH and
 * PREFETCH_WRITE fault the pages in by reading them (the owner's kernel
 * maps them, as on ODP hardware; they are not pinned, nor written);
 * NO_FAULT has nothing to make present. With or without FLUSH the work is
 * done before the answer; without FLUSH its failure is not reported (the
 * advice is best effort).
 */
#define ADVISE_CHUNK (64 * 1024)
int emu_mr_advise(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_advise_mr_req *r = req;
	struct emu_obj *pdo = emu_dev_obj_find(ctx, r->pd_handle, EMU_OBJ_PD);
	static uint8_t scratch[ADVISE_CHUNK];
	uint64_t host[UROCE_ADVISE_MAX_SGE];
	int err = 0;

	(void)rep;
	if (!pdo)
		return -EINVAL;
	if (r->advice > UROCE_ADVISE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if ((r->flags & ~(uint32_t)UROCE_ADVISE_FLAG_FLUSH) || r->num_sge > UROCE_ADVISE_MAX_SGE)
		return -EINVAL;
	for (uint32_t i = 0; i < r->num_sge; i++) {
		struct emu_mr *mr = emu_dev_mr_by_key(ctx->dev, r->sge[i].lkey);

		if (!mr || mr->lkey != r->sge[i].lkey || mr->obj.ctx != ctx ||
		    !(mr->access & UROCE_ACCESS_ON_DEMAND))
			return -EFAULT;
		if (emu_dma_check(mr, EMU_CONTAINER_OF(pdo, struct emu_pd, obj), r->sge[i].addr,
				  r->sge[i].length, 0, &host[i]))
			return -EFAULT;
		if (r->advice == UROCE_ADVISE_PREFETCH_WRITE && !(mr->access & WRITABLE_ACCESS))
			return -EPERM;
	}
	if (r->advice == UROCE_ADVISE_PREFETCH_NO_FAULT)
		return 0;
	for (uint32_t i = 0; i < r->num_sge && !err; i++) {
		uint64_t done = 0;

		while (done < r->sge[i].length) {
			size_t n = r->sge[i].length - done < ADVISE_CHUNK
				       ? (size_t)(r->sge[i].length - done)
				       : ADVISE_CHUNK;
			struct iovec local = {.iov_base = scratch, .iov_len = n};
			struct iovec remote = {.iov_base = (void *)(uintptr_t)(host[i] + done),
					       .iov_len = n};

			if (process_vm_readv(ctx->pid, &local, 1, &remote, 1, 0) != (ssize_t)n) {
				err = -EFAULT;
				break;
			}
			done += n;
		}
	}
	ctx->dev->dcnt[EMU_DCNT_ODP_PREFETCH]++;
	return r->flags & UROCE_ADVISE_FLAG_FLUSH ? err : 0;
}

void emu_mr_free(struct emu_mr *mr)
{
	struct emu_dev *dev = mr->obj.ctx->dev;

	if (mr->nmw) /* the context goes away: its windows first */
		emu_mw_unbind_all(mr->obj.ctx, NULL, mr);
	emu_htab_remove(&dev->mr_keys, &mr->key_node);
	mr->pd->obj.usecnt--;
	if (mr->dm)
		mr->dm->obj.usecnt--;
	mr_unmap(mr);
	emu_dev_obj_del(&mr->obj);
	free(mr);
}
