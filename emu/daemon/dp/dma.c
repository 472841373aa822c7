/* SPDX-License-Identifier: MIT */
/*
 * The DMA engine: the transport's memory accesses (dma_lkey, dma_rkey and
 * atomic ops) land in the registered memory of the process that owns the
 * MR, through process_vm_readv / process_vm_writev, and only after the MR
 * table allowed them: the key names an MR of the QP's protection domain,
 * [addr, addr+len) lies inside the MR's IOVA range, and the MR's access
 * flags grant what is asked (local write for receive buffers and READ
 * response targets, remote read, write or atomic for R_Key accesses). An
 * R_Key may also name a memory window (IBA 10.6.7.2): then the window's
 * key variant, state, PD, QP (type 2), rights and bounds are checked, and
 * the access lands in the MR it covers.
 *
 * Pages the program shares with the daemon (MAP_MR, verbs/mr.c: the shim
 * makes the whole pages of a registered buffer a memfd mapping) are reached
 * through the daemon's own mapping of them instead: a memcpy, no system
 * call, nothing staged or read ahead (dma_mapped). The rest (the partial
 * pages at an MR's ends, memory the shim left private: file-backed, huge
 * pages, on-demand paging) goes through process_vm_*, as follows.
 *
 * Few, large copies (LIMITS.md: a process_vm call costs about as much as
 * copying 4 KiB, most of it the access checks done per call):
 *  - writes are staged: the data is copied into a staging area (or, when
 *    it is a received packet's payload, left where it is until the batch's
 *    end) and all the writes of one engine entry (a received batch, a pass)
 *    go to the process in one process_vm_writev (writes that land back to
 *    back in its memory share a remote iovec, so their pages are pinned once). They are
 *    written out at the reveal gate (emu_dma_before_reveal, below) and
 *    before any read or atomic. The checks (key, PD, range, access) are
 *    done when the write is staged; a write that still fails (memory the
 *    program unmapped while it was registered, or a program that exited)
 *    is counted as dma_faults and logged, since its completion may already
 *    be decided;
 *  - reads of at least DMA_RA_MIN bytes read ahead, up to DMA_RA_BYTES
 *    within the same MR, and later reads are served from that copy (the
 *    next packets of a message, READ response bursts) until the next gate,
 *    write or atomic.
 *
 * Atomics are a read, a computation and a write done by the daemon's one
 * thread: atomic with respect to every other RDMA operation of this RNIC
 * (one daemon = one thread), as IBA requires (IBV_ATOMIC_HCA). They are NOT
 * atomic with respect to the application's own CPU stores to the same
 * location, exactly like real HCAs that do not use PCIe atomics; programs
 * must not mix CPU writes and RDMA atomics on one word. On mapped pages
 * and device memory they are single atomic instructions, atomic for the
 * program's CPUs too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <wire/crc32.h>

#include "dp.h"

/* Access bits the transport asks for (same values as ibv_access_flags). */
#define DMA_ACCESS_BITS                                                                    \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC | UROCE_ACCESS_FLUSH_GLOBAL | UROCE_ACCESS_FLUSH_PERSISTENT)

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

/* The rights a window grants (its LOCAL_WRITE/MW_BIND bits mean nothing). */
#define DMA_MW_ACCESS \
	(UROCE_ACCESS_REMOTE_READ | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC)

int emu_dma_check_mw(const struct emu_mw *mw, const struct emu_qp *qp, uint32_t rkey, uint64_t va,
		     uint64_t len, uint32_t access, uint64_t *host_addr)
{
	uint64_t off;

	/* The key variant is the one of the last bind; a window bound to nothing grants nothing. */
	if (mw->rkey != rkey || !mw->valid || !mw->mr || mw->pd != qp->pd)
		return -ENOENT;
	/* Type 2B: only the QP it was bound through (IBA 10.6.7.2.4; XRC: mw.c). */
	if (!emu_mw_reaches(mw, qp))
		return -ENOENT;
	if (access & DMA_MW_ACCESS & ~mw->access)
		return -EACCES;
	/* A zero-based window is addressed from 0, another by the MR's IOVAs. */
	if (mw->access & UROCE_ACCESS_ZERO_BASED) {
		off = va;
	} else {
		if (va < mw->addr)
			return -ERANGE;
		off = va - mw->addr;
	}
	if (len && (off >= mw->length || len > mw->length - off))
		return -ERANGE;
	/* The window's rights were checked against the MR's at the bind (C10-74). */
	return emu_dma_check(mw->mr, mw->pd, mw->addr + off, len, 0, host_addr);
}

/* Writes staged per flush, staging bytes, read-ahead. */
#define DMA_WRITE_IOV 256
#define DMA_WRITE_STAGE (512 * 1024)
#define DMA_RA_MIN 1024
#define DMA_RA_BYTES (64 * 1024)
/* A shorter read reads the aligned block around it: small SENDs and
 * WRITEs of one buffer, or of one page cycled through (perftest), then
 * cost one call per pass instead of one each. */
#define DMA_RA_SMALL 4096

struct emu_dma {
	pid_t wpid;
	unsigned nw;	/* wlocal entries */
	unsigned nr;	/* wremote entries */
	size_t wused;	/* bytes the staged writes write */
	size_t wstaged; /* bytes of wstage they use (the rest they reference) */
	struct iovec wlocal[DMA_WRITE_IOV];
	struct iovec wremote[DMA_WRITE_IOV];
	pid_t rpid;
	uint64_t rstart; /* host address of rbuf[0] */
	size_t rlen;	 /* 0: nothing cached */
	uint8_t rbuf[DMA_RA_BYTES];
	uint8_t wstage[DMA_WRITE_STAGE];
};

int emu_dma_init(struct emu_dev *dev)
{
	dev->dma = calloc(1, sizeof(*dev->dma));
	return dev->dma ? 0 : -ENOMEM;
}

/* Write the staged writes out (one process_vm_writev); forget the
 * read-ahead copy unless keep_ra. The mechanism; emu_dma_before_reveal is
 * the rule. */
static void dma_write_out(struct emu_dev *dev, bool keep_ra)
{
	struct emu_dma *d = dev->dma;
	uint64_t t;
	ssize_t n;

	if (!d)
		return;
	if (!keep_ra)
		d->rlen = 0;
	if (!d->nw)
		return;
	dev->dcnt[EMU_DCNT_DMA_CALLS]++;
	t = emu_prof_start(dev);
	n = process_vm_writev(d->wpid, d->wlocal, d->nw, d->wremote, d->nr, 0);
	emu_prof_add(dev, EMU_DCNT_TIME_DMA_NS, t);
	if (n != (ssize_t)d->wused) {
		/* Checked when staged: the memory went away since. */
		dev->dcnt[EMU_DCNT_DMA_FAULTS]++;
		emu_warn("DMA: %zu of %zu bytes written to pid %d (%s): the program unmapped "
			 "registered memory or exited",
			 n < 0 ? (size_t)0 : (size_t)n, d->wused, (int)d->wpid,
			 n < 0 ? strerror(errno) : "short copy");
	} else {
		dev->dcnt[EMU_DCNT_DMA_BYTES] += d->wused;
	}
	d->nw = 0;
	d->nr = 0;
	d->wused = 0;
	d->wstaged = 0;
}

static void dma_flush(struct emu_dev *dev)
{
	dma_write_out(dev, false);
}

/*
 * The reveal gate. The rule it owns: application memory is written before
 * anything that leaves the daemon can reveal it. Four things leave: a
 * batch of datagrams (net.c emu_net_flush, the only sendmmsg: an ACK or a
 * READ response must not overtake the data it acknowledges), a CQE (a
 * completion announces its data: CQEs are written to their rings at once
 * but published here, after the writes, by emu_event_cq_publish), an
 * asynchronous event (event.c emu_event_async: the completions before it
 * are visible when it arrives) and a control reply (ctl.c send_reply).
 * Each comes after this;
 * nothing else in the daemon writes staged data out (dma.c itself does,
 * earlier, when its buffers fill and before a read or atomic, which is
 * always allowed).
 *
 * The gate also forgets the read-ahead copy, so a copy serves reads only
 * between two gates. Every entry into the engine that can read application
 * memory ends at one: a pass (emu_dp_poll) ends by sending its batch, even
 * an empty one, each received batch (net.c's net_receive) at the gate itself
 * (its datagrams leave with the next pass), and a
 * control request that ran the engine (a modify that restarts a send
 * queue, ibv_resize_cq's pass) by its reply. So no copy outlives the
 * program's next chance to change its memory: after a completion, after a
 * reply, or while the daemon waits for work.
 */
void emu_dma_before_reveal(struct emu_dev *dev)
{
	dma_flush(dev);
	emu_event_cq_publish(dev);
}

/*
 * A send batch that filled up in the middle of an engine entry leaves with
 * the writes before it, but the read-ahead copy stays: nothing the program
 * can act on has happened since it was read (the entry's received batch
 * came before it, the entry's completions and replies come at its end).
 */
void emu_dma_before_send(struct emu_dev *dev)
{
	dma_write_out(dev, true);
}

/*
 * New send WQEs were seen: the read-ahead copy may predate their data (the
 * program wrote the buffer, then posted, after the copy was taken for
 * another QP's WQE), so it serves none of them.
 */
void emu_dma_forget_reads(struct emu_dev *dev)
{
	if (dev->dma)
		dev->dma->rlen = 0;
}

void emu_dma_fini(struct emu_dev *dev)
{
	dma_flush(dev);
	free(dev->dma);
	dev->dma = NULL;
}

/* Append [base, base + len) to v[0..*n), extending the last entry when it ends there. */
static void iov_append(struct iovec *v, unsigned *n, void *base, size_t len)
{
	struct iovec *last = *n ? &v[*n - 1] : NULL;

	if (last && (char *)last->iov_base + last->iov_len == (char *)base) {
		last->iov_len += len;
		return;
	}
	v[*n].iov_base = base;
	v[*n].iov_len = len;
	(*n)++;
}

/*
 * Stage a write of len bytes (len <= DMA_WRITE_STAGE). Data in a received
 * datagram (net.c's receive buffers, which the batch's end writes out
 * before they are used again: emu_net_rx_holds) is written from where it
 * is; anything else is copied into the staging area first.
 */
static void dma_stage(struct emu_dev *dev, pid_t pid, uint64_t host, const void *buf, size_t len)
{
	struct emu_dma *d = dev->dma;
	bool in_place = emu_net_rx_holds(dev, buf, len);
	void *local;

	d->rlen = 0;
	if (d->nw && (d->wpid != pid || d->nw == DMA_WRITE_IOV || d->nr == DMA_WRITE_IOV ||
		      (!in_place && d->wstaged + len > DMA_WRITE_STAGE)))
		dma_flush(dev);
	if (in_place) {
		local = (void *)(uintptr_t)buf;
		dev->dcnt[EMU_DCNT_DMA_IN_PLACE] += len;
	} else {
		local = d->wstage + d->wstaged;
		memcpy(local, buf, len);
		d->wstaged += len;
	}
	/*
	 * The two sides are merged separately: process_vm_writev takes the
	 * local and the remote iovecs as two byte streams whose boundaries
	 * need not meet. The payloads of a message's packets lie apart in the
	 * receive buffer (headers between them) but land back to back in the
	 * program's memory, so the message is one remote iovec, and the
	 * kernel pins its pages in one go instead of one page per packet.
	 */
	iov_append(d->wlocal, &d->nw, local, len);
	iov_append(d->wremote, &d->nr, (void *)(uintptr_t)host, len);
	d->wpid = pid;
	d->wused += len;
}

/* A read's bytes into buf; with crc, folded into *crc on the way. */
static void read_out(void *buf, const void *src, size_t len, uint32_t *crc)
{
	if (crc)
		*crc = wire_crc32_update_copy(*crc, buf, src, len);
	else
		memcpy(buf, src, len);
}

/*
 * Serve a read from the read-ahead copy, or fill it. 0, or -1 to read
 * directly. With crc, the bytes are folded into *crc as they are copied
 * out of the read-ahead copy (and only when it returns 0).
 */
static int dma_read_ahead(struct emu_dev *dev, pid_t pid, uint64_t host, void *buf, size_t len,
			  uint64_t base, uint64_t limit, uint32_t *crc)
{
	struct emu_dma *d = dev->dma;
	uint64_t host_ra, end;
	size_t want;
	ssize_t n;

	if (d->rlen && d->rpid == pid && host >= d->rstart && host - d->rstart <= d->rlen &&
	    len <= d->rlen - (host - d->rstart)) {
		read_out(buf, d->rbuf + (host - d->rstart), len, crc);
		return 0;
	}
	if (len > DMA_RA_BYTES)
		return -1;
	/* [host, host + len) lies in [base, limit) (dma_resolve checked it). */
	if (len < DMA_RA_MIN) {
		/* The aligned block around it, and all of the read. */
		host_ra = host & ~(uint64_t)(DMA_RA_SMALL - 1);
		if (host_ra < base)
			host_ra = base;
		end = host_ra + DMA_RA_SMALL;
		if (end < host + len)
			end = host + len;
	} else {
		host_ra = host;
		end = host + DMA_RA_BYTES;
	}
	if (end > limit)
		end = limit;
	want = (size_t)(end - host_ra);
	{
		struct iovec local = {.iov_base = d->rbuf, .iov_len = want};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)host_ra, .iov_len = want};

		dev->dcnt[EMU_DCNT_DMA_CALLS]++;
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	}
	if (n < (ssize_t)(len + (host - host_ra))) {
		d->rlen = 0;
		return -1; /* let the direct read report the fault */
	}
	dev->dcnt[EMU_DCNT_DMA_BYTES] += (size_t)n;
	d->rpid = pid;
	d->rstart = host_ra;
	d->rlen = (size_t)n;
	read_out(buf, d->rbuf + (host - host_ra), len, crc);
	return 0;
}

/* Copy between buf and [host, host+len) of process pid. */
static int dma_copy(struct emu_dev *dev, pid_t pid, uint64_t host, void *buf, size_t len,
		    enum xport_dma dir)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)host, .iov_len = len};
	uint64_t t;
	ssize_t n;

	if (dir == XPORT_DMA_CHECK || !len)
		return 0;
	dev->dcnt[EMU_DCNT_DMA_CALLS]++;
	t = emu_prof_start(dev);
	if (dir == XPORT_DMA_TO_BUF)
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	else
		n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	emu_prof_add(dev, EMU_DCNT_TIME_DMA_NS, t);
	if (n != (ssize_t)len) {
		/* Unmapped since registration, or the process is gone. */
		dev->dcnt[EMU_DCNT_DMA_FAULTS]++;
		emu_dbg("DMA %s pid %d 0x%llx+%zu: %s", dir == XPORT_DMA_TO_BUF ? "read" : "write",
			(int)pid, (unsigned long long)host, len,
			n < 0 ? strerror(errno) : "short copy");
		return -EFAULT;
	}
	dev->dcnt[EMU_DCNT_DMA_BYTES] += len;
	return 0;
}

/*
 * A copy that faults on ODP memory (unmapped at this moment) is an access
 * error of the key, as on ODP hardware (a remote access error NAK, a local
 * protection error); on pinned memory it stays -EFAULT.
 */
static int odp_fault(const struct emu_mr *mr, int rc)
{
	return rc == -EFAULT && (mr->access & UROCE_ACCESS_ON_DEMAND) ? -EACCES : rc;
}

/*
 * The MR and host address of [addr, addr+len) under key for QP qp, every
 * check done: an L_Key names an MR; an R_Key (remote) names an MR or a
 * memory window (mw.c resolves it to the MR it covers). 0 or the check's
 * error, counted as key_errors.
 */
static int dma_resolve(struct emu_qp *qp, uint32_t key, bool remote, uint64_t addr, uint64_t len,
		       uint32_t access, struct emu_mr **mr, uint64_t *host)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_mw *mw = remote ? emu_dev_mw_by_index(dev, key) : NULL;
	int rc;

	if (mw) {
		*mr = mw->mr;
		rc = emu_dma_check_mw(mw, qp, key, addr, len, access, host);
	} else {
		/* A receive WQE of an SRQ scatters under the SRQ's PD. */
		const struct emu_pd *pd =
		    (access & XPORT_ACCESS_RECV_WQE) && qp->srq ? qp->srq->pd : qp->pd;

		*mr = emu_dev_mr_by_key(dev, key);
		rc = emu_dma_check(*mr, pd, addr, len, access & ~XPORT_ACCESS_RECV_WQE, host);
	}
	if (rc)
		dev->dcnt[EMU_DCNT_KEY_ERRORS]++;
	return rc;
}

/*
 * Where [host, host+len) of an MR's owner lies in the daemon's mapping of
 * the MR's pages (MAP_MR, verbs/mr.c), or NULL when it does not lie there
 * whole (the MR has no mapping, or the range reaches into its partial
 * first or last page, which stay the program's private memory).
 */
static uint8_t *dma_mapped_ptr(const struct emu_mr *mr, uint64_t host, uint64_t len)
{
	if (!mr->map || host < mr->map_addr || host - mr->map_addr > mr->map_len ||
	    len > mr->map_len - (host - mr->map_addr))
		return NULL;
	return mr->map + (host - mr->map_addr);
}

/*
 * Before an access through the mapping. Another MR of the program may reach
 * the same bytes through process_vm_* (one registered over those pages
 * before or after they were shared), so what is staged is written out
 * first and, before a write, a read-ahead copy is forgotten: the accesses
 * land in the order the transport made them.
 */
static void dma_mapped_enter(struct emu_dev *dev, bool writes)
{
	struct emu_dma *d = dev->dma;

	if (!d)
		return;
	if (d->nw)
		dma_flush(dev);
	if (writes)
		d->rlen = 0;
}

/* A copy through the mapping; a read with crc folds the bytes on the way. */
static int dma_mapped(struct emu_dev *dev, uint8_t *p, void *buf, size_t len, enum xport_dma dir,
		      uint32_t *crc)
{
	uint64_t t;

	dma_mapped_enter(dev, dir == XPORT_DMA_FROM_BUF);
	t = emu_prof_start(dev);
	if (dir == XPORT_DMA_TO_BUF)
		read_out(buf, p, len, crc);
	else
		memcpy(p, buf, len);
	emu_prof_add(dev, EMU_DCNT_TIME_DMA_NS, t);
	dev->dcnt[EMU_DCNT_DMA_MAPPED_BYTES] += len;
	return 0;
}

/* A copy to or from device memory (verbs/dm.c): the bounds are the MR's, checked. */
static int dm_copy(struct emu_dev *dev, const struct emu_dm *dm, uint64_t off, void *buf,
		   size_t len, enum xport_dma dir)
{
	if (dir == XPORT_DMA_CHECK || !len)
		return 0;
	if (dir == XPORT_DMA_TO_BUF)
		memcpy(buf, dm->base + off, len);
	else
		memcpy(dm->base + off, buf, len);
	dev->dcnt[EMU_DCNT_DM_BYTES] += len;
	return 0;
}

/*
 * With crc (a read for a packet's payload), the bytes read are folded into
 * *crc: as they are copied where the memory is mapped or the read-ahead
 * copy holds them (*folded set), else by dma_key after the copy.
 */
static int dma_key_copy(struct emu_qp *qp, uint32_t key, bool remote, uint64_t addr, void *buf,
			size_t len, uint32_t access, enum xport_dma dir, uint32_t *crc,
			bool *folded)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_mr *mr;
	uint64_t host, t;
	int rc;

	/* Writing through an L_Key always needs local write. */
	if (dir == XPORT_DMA_FROM_BUF &&
	    !(access & (UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC)))
		access |= UROCE_ACCESS_LOCAL_WRITE;
	rc = dma_resolve(qp, key, remote, addr, len, access, &mr, &host);
	if (rc)
		return rc;
	if (mr->dm) /* device memory: the daemon's own, host is the offset */
		return dm_copy(dev, mr->dm, host, buf, len, dir);
	if (dir != XPORT_DMA_CHECK && len) {
		uint8_t *p = dma_mapped_ptr(mr, host, len);

		if (p) {
			*folded = crc && dir == XPORT_DMA_TO_BUF;
			return dma_mapped(dev, p, buf, len, dir, crc);
		}
	}
	if (!dev->dma || dir == XPORT_DMA_CHECK || !len)
		return odp_fault(mr, dma_copy(dev, mr->obj.ctx->pid, host, buf, len, dir));
	if (dir == XPORT_DMA_FROM_BUF) {
		/* ODP memory may be unmapped at any time: its writes are done
		 * at once, so that a fault fails this access (a staged write
		 * would fail after the answer went out). */
		if (len > DMA_WRITE_STAGE || (mr->access & UROCE_ACCESS_ON_DEMAND)) {
			dma_flush(dev);
			return odp_fault(mr, dma_copy(dev, mr->obj.ctx->pid, host, buf, len, dir));
		}
		dma_stage(dev, mr->obj.ctx->pid, host, buf, len);
		return 0;
	}
	/* A read sees every write staged before it. */
	if (dev->dma->nw)
		dma_flush(dev);
	t = emu_prof_start(dev);
	rc = dma_read_ahead(dev, mr->obj.ctx->pid, host, buf, len, mr->addr, mr->addr + mr->length,
			    crc);
	emu_prof_add(dev, EMU_DCNT_TIME_DMA_NS, t);
	if (!rc) {
		*folded = crc != NULL;
		return 0;
	}
	return odp_fault(mr, dma_copy(dev, mr->obj.ctx->pid, host, buf, len, dir));
}

static int dma_key(struct emu_qp *qp, uint32_t key, bool remote, uint64_t addr, void *buf,
		   size_t len, uint32_t access, enum xport_dma dir, uint32_t *crc)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	bool folded = false;
	int rc = dma_key_copy(qp, key, remote, addr, buf, len, access, dir, crc, &folded);

	if (!rc && crc && !folded) {
		uint64_t t = emu_prof_start(dev);

		*crc = wire_crc32_update(*crc, buf, len);
		emu_prof_add(dev, EMU_DCNT_TIME_ICRC_NS, t);
	}
	return rc;
}

int emu_dma_lkey(struct emu_qp *qp, uint32_t lkey, uint64_t addr, void *buf, size_t len,
		 uint32_t access, enum xport_dma dir)
{
	return dma_key(qp, lkey, false, addr, buf, len, access, dir, NULL);
}

int emu_dma_rkey(struct emu_qp *qp, uint32_t rkey, uint64_t va, void *buf, size_t len,
		 uint32_t access, enum xport_dma dir)
{
	return dma_key(qp, rkey, true, va, buf, len, access, dir, NULL);
}

int emu_dma_read_crc(struct emu_qp *qp, uint32_t key, bool remote, uint64_t addr, void *buf,
		     size_t len, uint32_t access, uint32_t *crc)
{
	return dma_key(qp, key, remote, addr, buf, len, access, XPORT_DMA_TO_BUF, crc);
}

/*
 * ATOMIC WRITE: the 8 bytes of val (as they came) stored at host, 8-byte
 * aligned (the engine checked the VA). What "one store" means here:
 * - device memory (mr->dm) is the daemon's own shared mapping: one
 *   __atomic_store_n, a single 8-byte store that a CPU reader in any
 *   process sees whole or not at all;
 * - mapped pages (MAP_MR) likewise;
 * - other application memory is reached only through process_vm_writev, which
 *   promises no store width: the kernel copies with copy_from_user into
 *   the page, on x86-64 `rep movsb` where the CPU has FSRM/ERMS, whose
 *   store granularity is not architecturally defined. So a CPU thread of
 *   the application reading the word concurrently is not guaranteed to
 *   see it whole. With respect to the RNIC it is one store: every access
 *   of this device (READ, atomic, another ATOMIC WRITE) runs on the
 *   daemon's one thread, before or after it, never during it - the same
 *   guarantee as the device's other atomics (IBV_ATOMIC_HCA).
 */
static int dma_atomic_write(struct emu_dev *dev, struct emu_mr *mr, uint64_t host, uint64_t val)
{
	uint8_t *p = mr->dm ? mr->dm->base + host : dma_mapped_ptr(mr, host, sizeof(val));
	int rc;

	if (p) {
		/* Device memory or mapped pages: one 8-byte store, after what was staged. */
		if (!mr->dm)
			dma_mapped_enter(dev, true);
		__atomic_store_n((uint64_t *)(void *)p, val, __ATOMIC_SEQ_CST);
		dev->dcnt[EMU_DCNT_ATOMICS]++;
		return 0;
	}
	/* Written at once, after what was staged before it. */
	dma_flush(dev);
	rc = dma_copy(dev, mr->obj.ctx->pid, host, &val, sizeof(val), XPORT_DMA_FROM_BUF);
	if (rc)
		return odp_fault(mr, rc);
	dev->dcnt[EMU_DCNT_ATOMICS]++;
	return 0;
}

/*
 * FLUSH as responder (the engine's flush op). The R_Key must name an MR of
 * the QP's PD whose access has the flush bits asked for, over [va, va+len)
 * or, with whole_mr, the whole MR. A memory window's R_Key is refused
 * (-EACCES): a bind cannot grant flush access here (mw.c refuses the
 * bits), so no window has it. Then the staged writes are written out: the
 * data of every WRITE executed before the FLUSH is in the target's memory,
 * visible to its CPUs (process_vm_writev has returned), before the answer
 * is built. Nothing more is possible for persistence, which is why the
 * device offers only IB_UVERBS_DEVICE_FLUSH_GLOBAL and MRs cannot be
 * registered with IBV_ACCESS_FLUSH_PERSISTENT (mr.c).
 */
int emu_dma_flush(struct emu_qp *qp, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access,
		  bool whole_mr)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_mr *mr;
	uint64_t host;
	int rc;

	if (emu_dev_mw_by_index(dev, rkey)) {
		dev->dcnt[EMU_DCNT_KEY_ERRORS]++;
		return -EACCES;
	}
	mr = emu_dev_mr_by_key(dev, rkey);
	if (whole_mr && mr) {
		va = mr->iova;
		len = 0; /* the MR's own range: nothing to check */
	}
	rc = emu_dma_check(mr, qp->pd, va, len, access, &host);
	if (rc) {
		dev->dcnt[EMU_DCNT_KEY_ERRORS]++;
		return rc;
	}
	dma_flush(dev);
	return 0;
}

int emu_dma_atomic(struct emu_qp *qp, uint32_t rkey, uint64_t va, enum xport_atomic_op op,
		   uint64_t compare_add, uint64_t swap, uint64_t *orig)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	struct emu_mr *mr;
	uint64_t host, old, val;
	uint8_t *p;
	pid_t pid;
	int rc;

	rc = dma_resolve(qp, rkey, true, va, sizeof(old),
			 op == XPORT_ATOMIC_WRITE ? UROCE_ACCESS_REMOTE_WRITE
						  : UROCE_ACCESS_REMOTE_ATOMIC,
			 &mr, &host);
	if (rc)
		return rc;
	if (op == XPORT_ATOMIC_WRITE)
		return dma_atomic_write(dev, mr, host, compare_add);
	p = mr->dm ? mr->dm->base + host : dma_mapped_ptr(mr, host, sizeof(old));
	if (p) {
		/* Device memory or mapped pages: one atomic instruction on the
		 * shared mapping, atomic for the program's CPUs too. */
		uint64_t *w = (uint64_t *)(void *)p;

		if (!mr->dm)
			dma_mapped_enter(dev, true);

		if (op == XPORT_ATOMIC_CMP_SWP) {
			old = compare_add;
			__atomic_compare_exchange_n(w, &old, swap, false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			old = __atomic_fetch_add(w, compare_add, __ATOMIC_SEQ_CST);
		}
		dev->dcnt[EMU_DCNT_ATOMICS]++;
		*orig = old;
		return 0;
	}
	pid = mr->obj.ctx->pid;
	dma_flush(dev);
	/* Read, modify, write: nothing else of this RNIC runs in between. */
	rc = dma_copy(dev, pid, host, &old, sizeof(old), XPORT_DMA_TO_BUF);
	if (rc)
		return rc;
	if (op == XPORT_ATOMIC_CMP_SWP)
		val = old == compare_add ? swap : old;
	else
		val = old + compare_add;
	if (val != old) {
		rc = dma_copy(dev, pid, host, &val, sizeof(val), XPORT_DMA_FROM_BUF);
		if (rc)
			return rc;
	}
	dev->dcnt[EMU_DCNT_ATOMICS]++;
	*orig = old;
	return 0;
}
