/* SPDX-License-Identifier: MIT */
/*
 * abi_unsupported.c: exported verbs whose feature uroce does not have, each
 * answering exactly as rdma-core 44 does when the device's provider lacks
 * the operation (its "dummy ops"): NULL with errno EOPNOTSUPP for
 * constructors, EOPNOTSUPP for the int-returning calls, nothing for the void
 * ones. Why uroce lacks them:
 *  - import/unimport (device, PD, MR, DM) shares kernel objects between
 *    processes through a uverbs command fd; uroce objects live in uroced and
 *    have no such fd.
 *  - ECE (enhanced connection establishment) is a Mellanox vendor extension
 *    negotiated over rdma_cm; uroce has no vendor options to offer.
 *  - dma-buf MRs need a device that can DMA from a dma-buf fd; uroced reads
 *    memory by virtual address of the registering process only.
 *  - L2 address resolution: uroced sends RoCEv2 as UDP datagrams through the
 *    host's IP stack, which resolves MAC addresses and VLANs itself; no verbs
 *    consumer needs a MAC for a uroce device.
 */
#include <errno.h>
#include <stddef.h>

#include "abi.h"

/* NULL, errno EOPNOTSUPP: there are no uverbs command fds to import. */
struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

/* NULL, errno EOPNOTSUPP: PDs cannot be shared between processes. */
struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Nothing to do: no PD is ever imported. */
void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

/* NULL, errno EOPNOTSUPP: MRs cannot be shared between processes. */
struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Nothing to do: no MR is ever imported. */
void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

/* NULL, errno EOPNOTSUPP: uroce has no device memory to import. */
struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

/* Nothing to do: no DM is ever imported. */
void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* EOPNOTSUPP (errno set too): no ECE options. */
int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* EOPNOTSUPP (errno set too), as rdma-core for vendor_id 0 or no support. */
int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* NULL, errno EOPNOTSUPP: memory is registered by virtual address only. */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * -EOPNOTSUPP (this call returns negative errno values): the host IP stack
 * owns L2 resolution for uroce. @eth_mac and @vid are not written.
 */
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	(void)context;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}
