/* SPDX-License-Identifier: MIT */
/*
 * The DMA engine: the transport's memory accesses (dma_lkey, dma_rkey and
 * atomic ops) land in the registered memory of the process that owns the
 * MR, through process_vm_readv / process_vm_writev, and only after the MR
 * table allowed them: the key names an MR of the QP's protection domain,
 * [addr, addr+len) lies inside the MR's IOVA range, and the MR's access
 * flags grant what is asked (local write for receive buffers and READ
 * response targets, remote read, write or atomic for R_Key accesses).
 *
 * Atomics are a read, a computation and a write done by the daemon's one
 * thread: atomic with respect to every other RDMA operation of this RNIC
 * (one daemon = one thread), as IBA requires (IBV_ATOMIC_HCA). They are NOT
 * atomic with respect to the application's own CPU stores to the same
 * location, exactly like real HCAs that do not use PCIe atomics; programs
 * must not mix CPU writes and RDMA atomics on one word.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "emu.h"

/* Access bits the transport asks for (same values as ibv_access_flags). */
#define DMA_ACCESS_BITS                                                                 \
	(EMU_XACCESS_LOCAL_WRITE | EMU_XACCESS_REMOTE_WRITE | EMU_XACCESS_REMOTE_READ | \
	 EMU_XACCESS_REMOTE_ATOMIC)

_Static_assert((int)EMU_XACCESS_LOCAL_WRITE == (int)UROCE_ACCESS_LOCAL_WRITE &&
		   (int)EMU_XACCESS_REMOTE_WRITE == (int)UROCE_ACCESS_REMOTE_WRITE &&
		   (int)EMU_XACCESS_REMOTE_READ == (int)UROCE_ACCESS_REMOTE_READ &&
		   (int)EMU_XACCESS_REMOTE_ATOMIC == (int)UROCE_ACCESS_REMOTE_ATOMIC,
	       "access flag values");

int emu_dma_check(const struct emu_mr *mr, const struct emu_pd *pd, uint64_t addr, uint64_t len,
		  uint32_t access, uint64_t *host_addr)
{
	uint64_t off;

	/* Keys are per PD: a key of another PD (or context) is no key. */
	if (!mr || mr->pd != pd)
		return -ENOENT;
	off = addr - mr->iova;
	if (len && (addr < mr->iova || off >= mr->length || len > mr->length - off))
		return -ERANGE;
	if (access & DMA_ACCESS_BITS & ~mr->access)
		return -EACCES;
	*host_addr = mr->addr + off;
	return 0;
}

/* Copy between buf and [host, host+len) of process pid. */
static int dma_copy(struct emu_dev *dev, pid_t pid, uint64_t host, void *buf, size_t len,
		    enum emu_xdma dir)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)host, .iov_len = len};
	ssize_t n;

	if (dir == EMU_XDMA_CHECK || !len)
		return 0;
	dev->dcnt[EMU_DCNT_DMA_CALLS]++;
	if (dir == EMU_XDMA_TO_BUF)
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	else
		n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (n != (ssize_t)len) {
		/* Unmapped since registration, or the process is gone. */
		dev->dcnt[EMU_DCNT_DMA_FAULTS]++;
		emu_dbg("DMA %s pid %d 0x%llx+%zu: %s", dir == EMU_XDMA_TO_BUF ? "read" : "write",
			(int)pid, (unsigned long long)host, len,
			n < 0 ? strerror(errno) : "short copy");
		return -EFAULT;
	}
	dev->dcnt[EMU_DCNT_DMA_BYTES] += len;
	return 0;
}

static int dma_key(struct emu_qp *qp, uint32_t key, uint64_t addr, void *buf, size_t len,
		   uint32_t access, enum emu_xdma dir)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_mr *mr = emu_mr_by_key(dev, key);
	uint64_t host;
	int rc;

	/* Writing through an L_Key always needs local write. */
	if (dir == EMU_XDMA_FROM_BUF &&
	    !(access & (EMU_XACCESS_REMOTE_WRITE | EMU_XACCESS_REMOTE_ATOMIC)))
		access |= EMU_XACCESS_LOCAL_WRITE;
	rc = emu_dma_check(mr, qp->pd, addr, len, access, &host);
	if (rc) {
		dev->dcnt[EMU_DCNT_KEY_ERRORS]++;
		return rc;
	}
	return dma_copy(dev, mr->obj.ctx->pid, host, buf, len, dir);
}

int emu_dma_lkey(struct emu_qp *qp, uint32_t lkey, uint64_t addr, void *buf, size_t len,
		 uint32_t access, enum emu_xdma dir)
{
	return dma_key(qp, lkey, addr, buf, len, access, dir);
}

int emu_dma_rkey(struct emu_qp *qp, uint32_t rkey, uint64_t va, void *buf, size_t len,
		 uint32_t access, enum emu_xdma dir)
{
	return dma_key(qp, rkey, va, buf, len, access, dir);
}

int emu_dma_atomic(struct emu_qp *qp, uint32_t rkey, uint64_t va, enum emu_xatomic_op op,
		   uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_mr *mr = emu_mr_by_key(dev, rkey);
	uint64_t host, old, val;
	pid_t pid;
	int rc;

	rc = emu_dma_check(mr, qp->pd, va, sizeof(old), EMU_XACCESS_REMOTE_ATOMIC, &host);
	if (rc) {
		dev->dcnt[EMU_DCNT_KEY_ERRORS]++;
		return rc;
	}
	pid = mr->obj.ctx->pid;
	/* Read, modify, write: nothing else of this RNIC runs in between. */
	rc = dma_copy(dev, pid, host, &old, sizeof(old), EMU_XDMA_TO_BUF);
	if (rc)
		return rc;
	if (op == EMU_XATOMIC_CMP_SWP)
		val = old == compare_add ? swap : old;
	else
		val = old + compare_add;
	if (val != old) {
		rc = dma_copy(dev, pid, host, &val, sizeof(val), EMU_XDMA_FROM_BUF);
		if (rc)
			return rc;
	}
	dev->dcnt[EMU_DCNT_ATOMICS]++;
	*orig = old;
	return 0;
}
