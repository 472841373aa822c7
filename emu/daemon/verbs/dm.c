/* SPDX-License-Identifier: MIT */
/*
 * Device memory (ibv_alloc_dm, ibv_free_dm, ibv_reg_dm_mr): on an RNIC,
 * memory on the adapter that the host reaches by MMIO and the RNIC without
 * crossing PCIe; here, memory the daemon owns - a memfd that the daemon and
 * the owning process both map, so ibv_memcpy_to_dm/from_dm are plain copies
 * in the process and the data path copies to and from it without a system
 * call (dp/dma.c). Each allocation is at most lim.max_dm_size bytes and the
 * device's all together lim.max_dm_total (ENOMEM past either, as on-chip
 * memory runs out). An MR over it is zero based (IBV_ACCESS_ZERO_BASED, as
 * libibverbs requires): its addresses are offsets from its start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs.h"

int emu_dm_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_alloc_dm_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct uroce_alloc_dm_resp *o;
	long pg = sysconf(_SC_PAGESIZE);
	struct emu_dm *dm;
	uint64_t bytes;
	int fd;

	if (r->comp_mask || r->log_align_req > 12)
		return -EINVAL;
	if (!r->length || r->length > dev->lim.max_dm_size)
		return -ENOMEM;
	bytes = (r->length + (uint64_t)pg - 1) & ~((uint64_t)pg - 1);
	if (dev->dm_bytes + bytes > dev->lim.max_dm_total)
		return -ENOMEM;
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return -ENOMEM;
	fd = memfd_create("uroce-dm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		if (fd >= 0)
			close(fd);
		free(dm);
		return -ENOMEM;
	}
	dm->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (dm->base == MAP_FAILED) {
		close(fd);
		free(dm);
		return -ENOMEM;
	}
	dm->length = r->length;
	dm->map_bytes = bytes;
	if (emu_dev_obj_add(ctx, &dm->obj, EMU_OBJ_DM)) {
		munmap(dm->base, bytes);
		close(fd);
		free(dm);
		return -ENOMEM;
	}
	dev->dm_bytes += bytes;
	o = EMU_REPLY(rep, struct uroce_alloc_dm_resp);
	o->handle = dm->obj.hnode.key;
	o->map_bytes = bytes;
	emu_reply_add_fd(rep, fd);
	return 0;
}

int emu_dm_free_req(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_handle_req *r = req;
	struct emu_obj *obj = emu_dev_obj_find(ctx, r->handle, EMU_OBJ_DM);

	(void)rep;
	if (!obj)
		return -EINVAL;
	if (obj->usecnt)
		return -EBUSY; /* MRs over it */
	emu_dm_free(EMU_CONTAINER_OF(obj, struct emu_dm, obj));
	return 0;
}

void emu_dm_free(struct emu_dm *dm)
{
	struct emu_dev *dev = dm->obj.ctx->dev;

	dev->dm_bytes -= dm->map_bytes;
	munmap(dm->base, dm->map_bytes);
	emu_dev_obj_del(&dm->obj);
	free(dm);
}
