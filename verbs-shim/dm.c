/* SPDX-License-Identifier: MIT */
/*
 * Device memory: ibv_alloc_dm, ibv_free_dm, ibv_memcpy_to_dm/from_dm and
 * ibv_reg_dm_mr. The daemon owns the memory (a memfd, emu/daemon/verbs/dm.c)
 * and hands its fd over; the process maps it, so the copies are plain
 * copies, with the rules of device memory: offset and length multiples of
 * 4 bytes (EINVAL), inside the allocation (EFAULT). Import (ibv_import_dm)
 * is not offered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

struct shim_dm {
	struct ibv_dm dm;
	uint8_t *base;
	uint64_t length;
	uint64_t map_bytes;
};

static int dm_check(const struct shim_dm *d, uint64_t offset, size_t length)
{
	if ((offset | length) & 3)
		return EINVAL;
	if (offset > d->length || length > d->length - offset)
		return EFAULT;
	return 0;
}

static int dm_to(struct ibv_dm *dm, uint64_t offset, const void *host, size_t length)
{
	struct shim_dm *d = SHIM_CONTAINER_OF(dm, struct shim_dm, dm);
	int err = dm_check(d, offset, length);

	if (err)
		return err;
	memcpy(d->base + offset, host, length);
	/* Visible to the RNIC before anything the caller posts next. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 0;
}

static int dm_from(void *host, struct ibv_dm *dm, uint64_t offset, size_t length)
{
	struct shim_dm *d = SHIM_CONTAINER_OF(dm, struct shim_dm, dm);
	int err = dm_check(d, offset, length);

	if (err)
		return err;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(host, d->base + offset, length);
	return 0;
}

struct ibv_dm *shim_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct uroce_alloc_dm_req req = {.hdr.op = UROCE_OP_ALLOC_DM,
					 .length = attr->length,
					 .log_align_req = attr->log_align_req,
					 .comp_mask = attr->comp_mask};
	struct uroce_alloc_dm_resp resp;
	struct shim_dm *d;
	int fd, nfds, err;

	d = calloc(1, sizeof(*d));
	if (!d)
		return shim_fail_null(-ENOMEM);
	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), &fd, 1, &nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (err) {
		free(d);
		return shim_fail_null(err);
	}
	d->base = mmap(NULL, resp.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (d->base == MAP_FAILED) {
		err = -errno;
		shim_call_simple(shim_ctx(context), UROCE_OP_FREE_DM, resp.handle);
		free(d);
		return shim_fail_null(err);
	}
	d->length = attr->length;
	d->map_bytes = resp.map_bytes;
	d->dm.context = context;
	d->dm.handle = resp.handle;
	d->dm.memcpy_to_dm = dm_to;
	d->dm.memcpy_from_dm = dm_from;
	return &d->dm;
}

int shim_free_dm(struct ibv_dm *dm)
{
	struct shim_dm *d = SHIM_CONTAINER_OF(dm, struct shim_dm, dm);
	int err = shim_call_simple(shim_ctx(dm->context), UROCE_OP_FREE_DM, dm->handle);

	if (err)
		return -err;
	munmap(d->base, d->map_bytes);
	free(d);
	return 0;
}

struct ibv_mr *shim_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
			      unsigned int access)
{
	struct uroce_reg_dm_mr_req req = {.hdr.op = UROCE_OP_REG_DM_MR,
					  .pd_handle = pd->handle,
					  .dm_handle = dm->handle,
					  .offset = offset,
					  .length = length,
					  .access = access};

	if (dm->context != pd->context)
		return shim_fail_null(-EINVAL);
	return shim_mr_register(pd, &req, sizeof(req), NULL, length); /* zero based */
}
