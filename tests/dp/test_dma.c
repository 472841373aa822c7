/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/dma.c: the MR checks (key of another PD, range, access
 * flags, IOVA translation), the memory-window checks of an R_Key (key
 * variant, QP, PD, rights, bounds, zero based) and real process_vm_readv/writev copies into
 * this test's own memory, standing in for an application that registered
 * it: reads, writes, faults on unmapped memory, both atomics, and the
 * batching (staged writes, read-ahead, the reveal gate that writes them
 * out, and hazards), including that a datagram batch passes the gate.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp.h"

/* The MR table dma.c consults (mr.c in the daemon). */
#define NMR 4
static struct emu_mr mrs[NMR];

struct emu_mr *emu_dev_mr_by_key(struct emu_dev *dev, uint32_t key)
{
	(void)dev;
	for (int i = 0; i < NMR; i++)
		if (mrs[i].lkey && mrs[i].lkey == key)
			return &mrs[i];
	return NULL;
}

/* The memory windows dma.c consults for R_Keys (dev.c in the daemon). */
#define NMW 2
static struct emu_mw mws[NMW];

struct emu_mw *emu_dev_mw_by_index(struct emu_dev *dev, uint32_t key)
{
	(void)dev;
	for (int i = 0; i < NMW; i++)
		if (mws[i].rkey && mws[i].rkey >> 8 == key >> 8)
			return &mws[i];
	return NULL;
}

static struct emu_dev dev;
static struct emu_ctx ctx;
static struct emu_pd pd, other_pd;
static struct emu_qp qp;
static uint64_t *mem; /* 4 pages, registered as mrs[0] with iova 0x10000 */
#define MEM_BYTES 16384
#define IOVA 0x10000ull

static void setup(void)
{
	memset(&dev, 0, sizeof(dev));
	memset(&ctx, 0, sizeof(ctx));
	memset(mrs, 0, sizeof(mrs));
	memset(mws, 0, sizeof(mws));
	emu_list_init(&dev.pub_cqs); /* the gate publishes CQEs (none here) */
	ctx.dev = &dev;
	ctx.pid = getpid();
	pd.obj.ctx = &ctx;
	other_pd.obj.ctx = &ctx;
	qp.obj.ctx = &ctx;
	qp.pd = &pd;
	mem = mmap(NULL, MEM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mem != MAP_FAILED);
	for (unsigned i = 0; i < MEM_BYTES / 8; i++)
		mem[i] = i;
	mrs[0] = (struct emu_mr){.obj.ctx = &ctx,
				 .pd = &pd,
				 .addr = (uintptr_t)mem,
				 .length = MEM_BYTES,
				 .iova = IOVA,
				 .access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_READ |
					   UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC,
				 .lkey = 0x100 | 1,
				 .rkey = 0x100 | 1};
	/* Read-only, no remote access. */
	mrs[1] = mrs[0];
	mrs[1].access = 0;
	mrs[1].lkey = mrs[1].rkey = 0x200 | 2;
	/* Another PD. */
	mrs[2] = mrs[0];
	mrs[2].pd = &other_pd;
	mrs[2].lkey = mrs[2].rkey = 0x300 | 3;
}

static void teardown(void)
{
	munmap(mem, MEM_BYTES);
}

START_TEST(test_check_pure)
{
	uint64_t host = 0;

	ck_assert_int_eq(emu_dma_check(NULL, &pd, IOVA, 8, 0, &host), -ENOENT);
	ck_assert_int_eq(emu_dma_check(&mrs[2], &pd, IOVA, 8, 0, &host), -ENOENT);
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA + 8, 8, 0, &host), 0);
	ck_assert_uint_eq(host, (uintptr_t)mem + 8);
	/* Exactly the last byte, one beyond, below the IOVA, wrapping. */
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA + MEM_BYTES - 1, 1, 0, &host), 0);
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA + MEM_BYTES - 1, 2, 0, &host), -ERANGE);
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA + MEM_BYTES, 1, 0, &host), -ERANGE);
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA - 1, 2, 0, &host), -ERANGE);
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA + 8, UINT64_MAX, 0, &host), -ERANGE);
	/* Zero length: no range to check. */
	ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, 0, 0, 0, &host), 0);
	/* Access flags. */
	for (uint32_t a = UROCE_ACCESS_LOCAL_WRITE; a <= UROCE_ACCESS_REMOTE_ATOMIC; a <<= 1) {
		ck_assert_int_eq(emu_dma_check(&mrs[1], &pd, IOVA, 8, a, &host), -EACCES);
		ck_assert_int_eq(emu_dma_check(&mrs[0], &pd, IOVA, 8, a, &host), 0);
	}
	ck_assert_int_eq(emu_dma_check(&mrs[1], &pd, IOVA, 8, 0, &host), 0);
}
END_TEST

/*
 * A type 2 window over the second page of mrs[0] (IOVA+4096, 4096 bytes),
 * bound to qp with remote write: its R_Key on every access (IBA 10.6.7.2).
 */
static struct emu_qp other_qp;

static struct emu_mw *bind_window(uint32_t type, uint32_t access)
{
	mws[0] = (struct emu_mw){.obj.ctx = &ctx,
				 .pd = &pd,
				 .type = type,
				 .rkey = 0x500 | 7,
				 .valid = true,
				 .mr = &mrs[0],
				 .qp = type == 2 ? &qp : NULL,
				 .addr = IOVA + 4096,
				 .length = 4096,
				 .access = access};
	other_qp = qp;
	return &mws[0];
}

START_TEST(test_window_checks)
{
	struct emu_mw *mw = bind_window(2, UROCE_ACCESS_REMOTE_WRITE);
	const uint32_t wr = UROCE_ACCESS_REMOTE_WRITE;
	uint64_t host = 0;

	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 4096 + 8, 8, wr, &host), 0);
	ck_assert_uint_eq(host, (uintptr_t)mem + 4096 + 8);
	/* The window's bounds, not the MR's. */
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 8192 - 8, 8, wr, &host), 0);
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 8192 - 8, 9, wr, &host),
			 -ERANGE);
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 8, 8, wr, &host), -ERANGE);
	/* The window's rights, not the MR's (which has them all). */
	ck_assert_int_eq(
	    emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 4096, 8, UROCE_ACCESS_REMOTE_READ, &host),
	    -EACCES);
	/* A stale key variant, another QP (type 2B), another PD, invalidated, unbound. */
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey ^ 1, IOVA + 4096, 8, wr, &host),
			 -ENOENT);
	ck_assert_int_eq(emu_dma_check_mw(mw, &other_qp, mw->rkey, IOVA + 4096, 8, wr, &host),
			 -ENOENT);
	other_qp.pd = &other_pd;
	mw->type = 1; /* type 1: any QP of its PD */
	ck_assert_int_eq(emu_dma_check_mw(mw, &other_qp, mw->rkey, IOVA + 4096, 8, wr, &host),
			 -ENOENT);
	other_qp.pd = &pd;
	ck_assert_int_eq(emu_dma_check_mw(mw, &other_qp, mw->rkey, IOVA + 4096, 8, wr, &host), 0);
	mw->type = 2;
	mw->valid = false;
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 4096, 8, wr, &host), -ENOENT);
	mw->valid = true;
	mw->mr = NULL;
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, IOVA + 4096, 8, wr, &host), -ENOENT);
	/* Zero based: addressed from 0. */
	mw = bind_window(2, wr | UROCE_ACCESS_ZERO_BASED);
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, 16, 8, wr, &host), 0);
	ck_assert_uint_eq(host, (uintptr_t)mem + 4096 + 16);
	ck_assert_int_eq(emu_dma_check_mw(mw, &qp, mw->rkey, 4096, 1, wr, &host), -ERANGE);
}
END_TEST

/* Through dma.c: a window's R_Key reaches its MR; it is no L_Key. */
START_TEST(test_window_copies)
{
	struct emu_mw *mw = bind_window(2, UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_ATOMIC);
	uint64_t in = 0x1234, orig = 0;

	ck_assert_int_eq(emu_dma_rkey(&qp, mw->rkey, IOVA + 4096, &in, 8, UROCE_ACCESS_REMOTE_WRITE,
				      XPORT_DMA_FROM_BUF),
			 0);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(mem[512], 0x1234);
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mw->rkey, IOVA + 4096, XPORT_ATOMIC_FETCH_ADD, 1, 0, &orig), 0);
	ck_assert_uint_eq(orig, 0x1234);
	ck_assert_uint_eq(mem[512], 0x1235);
	ck_assert_int_eq(emu_dma_rkey(&qp, mw->rkey, IOVA + 4096, &in, 8, UROCE_ACCESS_REMOTE_READ,
				      XPORT_DMA_TO_BUF),
			 -EACCES);
	ck_assert_int_eq(emu_dma_lkey(&qp, mw->rkey, IOVA + 4096, &in, 8, 0, XPORT_DMA_TO_BUF),
			 -ENOENT);
	mw->valid = false;
	ck_assert_int_eq(emu_dma_rkey(&qp, mw->rkey, IOVA + 4096, &in, 8, UROCE_ACCESS_REMOTE_WRITE,
				      XPORT_DMA_FROM_BUF),
			 -ENOENT);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_KEY_ERRORS], 3);
}
END_TEST

START_TEST(test_copies)
{
	uint64_t buf[4] = {0}, in[2] = {0xaaaa, 0xbbbb};

	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 16, buf, 16, 0, XPORT_DMA_TO_BUF),
			 0);
	ck_assert_uint_eq(buf[0], 2);
	ck_assert_uint_eq(buf[1], 3);
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA + 800, in, 16,
				      UROCE_ACCESS_REMOTE_WRITE, XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_uint_eq(mem[100], 0xaaaa);
	ck_assert_uint_eq(mem[101], 0xbbbb);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 2);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_BYTES], 32);
	/* A check copies nothing. */
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA, NULL, MEM_BYTES,
				      UROCE_ACCESS_REMOTE_READ, XPORT_DMA_CHECK),
			 0);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 2);
}
END_TEST

START_TEST(test_refusals)
{
	uint64_t v = 1;

	/* Writing through an L_Key needs local write, whatever was asked. */
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[1].lkey, IOVA, &v, 8, 0, XPORT_DMA_FROM_BUF),
			 -EACCES);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[1].lkey, IOVA, &v, 8, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_int_eq(
	    emu_dma_rkey(&qp, mrs[1].rkey, IOVA, &v, 8, UROCE_ACCESS_REMOTE_READ, XPORT_DMA_TO_BUF),
	    -EACCES);
	ck_assert_int_eq(
	    emu_dma_rkey(&qp, mrs[2].rkey, IOVA, &v, 8, UROCE_ACCESS_REMOTE_READ, XPORT_DMA_TO_BUF),
	    -ENOENT);
	ck_assert_int_eq(
	    emu_dma_rkey(&qp, 0x999, IOVA, &v, 8, UROCE_ACCESS_REMOTE_READ, XPORT_DMA_TO_BUF),
	    -ENOENT);
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA + MEM_BYTES, &v, 8,
				      UROCE_ACCESS_REMOTE_READ, XPORT_DMA_TO_BUF),
			 -ERANGE);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_KEY_ERRORS], 5);
}
END_TEST

START_TEST(test_fault)
{
	uint64_t v;

	/* The application unmapped part of a registered range. */
	ck_assert_int_eq(munmap((char *)mem + 4096, 4096), 0);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096, &v, 8, 0, XPORT_DMA_TO_BUF),
			 -EFAULT);
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA + 4090, &v, 8,
				      UROCE_ACCESS_REMOTE_WRITE, XPORT_DMA_FROM_BUF),
			 -EFAULT);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_FAULTS], 2);
	/* The rest still works. */
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192, &v, 8, 0, XPORT_DMA_TO_BUF),
			 0);
	ck_assert_uint_eq(v, 1024);
}
END_TEST

START_TEST(test_atomics)
{
	uint64_t orig = 0;

	mem[10] = 100;
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mrs[0].rkey, IOVA + 80, XPORT_ATOMIC_FETCH_ADD, 5, 0, &orig), 0);
	ck_assert_uint_eq(orig, 100);
	ck_assert_uint_eq(mem[10], 105);
	/* Compare fails: nothing written. */
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mrs[0].rkey, IOVA + 80, XPORT_ATOMIC_CMP_SWP, 1, 7, &orig), 0);
	ck_assert_uint_eq(orig, 105);
	ck_assert_uint_eq(mem[10], 105);
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mrs[0].rkey, IOVA + 80, XPORT_ATOMIC_CMP_SWP, 105, 7, &orig), 0);
	ck_assert_uint_eq(orig, 105);
	ck_assert_uint_eq(mem[10], 7);
	/* Wraps modulo 2^64. */
	mem[11] = UINT64_MAX;
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mrs[0].rkey, IOVA + 88, XPORT_ATOMIC_FETCH_ADD, 2, 0, &orig), 0);
	ck_assert_uint_eq(mem[11], 1);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_ATOMICS], 4);
	/* No REMOTE_ATOMIC on the MR; beyond the end. */
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mrs[1].rkey, IOVA, XPORT_ATOMIC_FETCH_ADD, 1, 0, &orig), -EACCES);
	ck_assert_int_eq(emu_dma_atomic(&qp, mrs[0].rkey, IOVA + MEM_BYTES - 4,
					XPORT_ATOMIC_FETCH_ADD, 1, 0, &orig),
			 -ERANGE);
}
END_TEST

/* With the staging and read-ahead buffers (as the daemon runs). */
START_TEST(test_staged_writes)
{
	uint64_t a = 0x1111, b = 0x2222, c = 0x3333, v = 0;

	ck_assert_int_eq(emu_dma_init(&dev), 0);
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA + 8, &a, 8, UROCE_ACCESS_REMOTE_WRITE,
				      XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA + 16, &b, 8, UROCE_ACCESS_REMOTE_WRITE,
				      XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4000, &c, 8, 0, XPORT_DMA_FROM_BUF),
			 0);
	/* Staged, not yet in memory, and the buffers may be reused at once. */
	a = b = c = 0;
	ck_assert_uint_eq(mem[1], 1);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 0);
	/* Checks are not deferred. */
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[1].lkey, IOVA, &v, 8, 0, XPORT_DMA_FROM_BUF),
			 -EACCES);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(mem[1], 0x1111);
	ck_assert_uint_eq(mem[2], 0x2222);
	ck_assert_uint_eq(mem[500], 0x3333);
	/* One call for all three (two of them contiguous). */
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 1);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_BYTES], 24);
	emu_dma_fini(&dev);
}
END_TEST

START_TEST(test_read_sees_staged_write)
{
	uint64_t a = 0xabcd, v = 0;

	ck_assert_int_eq(emu_dma_init(&dev), 0);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 64, &a, 8, 0, XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 64, &v, 8, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(v, 0xabcd);
	mem[20] = 77;
	ck_assert_int_eq(
	    emu_dma_atomic(&qp, mrs[0].rkey, IOVA + 160, XPORT_ATOMIC_FETCH_ADD, 1, 0, &v), 0);
	ck_assert_uint_eq(v, 77);
	ck_assert_uint_eq(mem[20], 78);
	emu_dma_fini(&dev);
}
END_TEST

START_TEST(test_read_ahead)
{
	uint64_t buf[512];
	uint64_t calls;

	ck_assert_int_eq(emu_dma_init(&dev), 0);
	/* A 4 KiB read reads ahead to the end of the MR (16 KiB)... */
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[511], 511);
	calls = dev.dcnt[EMU_DCNT_DMA_CALLS];
	/* ...so the next 4 KiB come from the copy, */
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[0], 512);
	ck_assert_uint_eq(buf[511], 1023);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], calls);
	/* but not after the gate: the program may have changed its memory. */
	mem[1024] = 0x77;
	emu_dma_before_reveal(&dev);
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[0], 0x77);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], calls + 1);
	/* Nor after a write into it. */
	{
		uint64_t w = 0x99;

		ck_assert_int_eq(
		    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192, &w, 8, 0, XPORT_DMA_FROM_BUF), 0);
		ck_assert_int_eq(
		    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
		ck_assert_uint_eq(buf[0], 0x99);
	}
	/* A small read reads the aligned 4 KiB around it: the next small
	 * reads of that block (a SEND buffer cycled through) are copies. */
	emu_dma_before_reveal(&dev);
	calls = dev.dcnt[EMU_DCNT_DMA_CALLS];
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096 + 64, buf, 64, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[0], 520);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], calls + 1);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096, buf, 64, 0, XPORT_DMA_TO_BUF),
			 0);
	ck_assert_uint_eq(buf[0], 512);
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192 - 64, buf, 64, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[7], 1023);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], calls + 1);
	/* New WQEs seen (emu_dp_sq): their data may be newer than the copy. */
	mem[513] = 0x88;
	emu_dma_forget_reads(&dev);
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096 + 8, buf, 8, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[0], 0x88);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], calls + 2);
	/* The MR's last bytes: the block ends where the MR does. */
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 16384 - 8, buf, 8, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[0], 2047);
	emu_dma_fini(&dev);
}
END_TEST

START_TEST(test_staged_fault)
{
	uint64_t a = 5, v, page[512];

	ck_assert_int_eq(emu_dma_init(&dev), 0);
	/* Read-ahead stops at an unmapped page; a read beyond it faults. */
	ck_assert_int_eq(munmap((char *)mem + 8192, 4096), 0);
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096, page, 4096, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(page[0], 512);
	ck_assert_uint_eq(page[511], 1023);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192, &v, 8, 0, XPORT_DMA_TO_BUF),
			 -EFAULT);
	/* A staged write into it passes the checks and fails at the flush. */
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 8192, &a, 8, 0, XPORT_DMA_FROM_BUF),
			 0);
	v = dev.dcnt[EMU_DCNT_DMA_FAULTS];
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_FAULTS], v + 1);
	emu_dma_fini(&dev);
}
END_TEST

/* The reveal gate: what was staged is in memory after it, the read-ahead
 * copy is gone, and with nothing staged it costs no process_vm call. */
START_TEST(test_reveal_gate)
{
	uint64_t a = 0x4444, buf[512];

	/* Without the buffers every write is direct: nothing to do. */
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 0);
	ck_assert_int_eq(emu_dma_init(&dev), 0);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 0);
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 24, &a, 8, 0, XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_uint_eq(mem[3], 3);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(mem[3], 0x4444);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_DMA_CALLS], 1);
	/* A 4 KiB read reads ahead; the program then changes its memory. */
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
	mem[600] = 0x55;
	/* Until the gate the copy serves (the program has not been told anything)... */
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[600 - 512], 600);
	/* ...after it, memory does. */
	emu_dma_before_reveal(&dev);
	ck_assert_int_eq(
	    emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 4096, buf, 4096, 0, XPORT_DMA_TO_BUF), 0);
	ck_assert_uint_eq(buf[600 - 512], 0x55);
	emu_dma_fini(&dev);
}
END_TEST

/* Sending a batch passes the gate, even an empty batch (a pass with nothing
 * to send still ends at the gate) and even before the network is up. */
START_TEST(test_send_passes_gate)
{
	uint64_t a = 0x6666;

	ck_assert_int_eq(emu_dma_init(&dev), 0);
	ck_assert_int_eq(emu_dma_rkey(&qp, mrs[0].rkey, IOVA + 32, &a, 8, UROCE_ACCESS_REMOTE_WRITE,
				      XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_uint_eq(mem[4], 4);
	ck_assert_uint_eq(emu_net_flush(&dev), 0);
	ck_assert_uint_eq(mem[4], 0x6666);
	emu_dma_fini(&dev);
}
END_TEST

/* CQEs are written at once and published by the reveal gate, after the
 * data they announce; an armed CQ's channel is told then, once. */
START_TEST(test_gate_publishes_cqes)
{
	static union {
		struct uroce_ring_hdr hdr;
		uint8_t bytes[UROCE_RING_HDR_BYTES + 4 * UROCE_CQE_BYTES];
	} ring;
	struct emu_cq cq;
	struct uroce_cqe c = {.wr_id = 7};
	uint64_t a = 0x7777;

	memset(&ring, 0, sizeof(ring));
	memset(&cq, 0, sizeof(cq));
	emu_list_init(&cq.err_link);
	emu_list_init(&cq.pub_link);
	cq.obj.ctx = &ctx;
	cq.ring.hdr = &ring.hdr;
	cq.ring.entries = 4;
	cq.ring.stride = UROCE_CQE_BYTES;
	ck_assert_int_eq(emu_dma_init(&dev), 0);

	ring.hdr.arm = UROCE_CQ_ARM_NEXT;
	ck_assert_int_eq(emu_dma_lkey(&qp, mrs[0].lkey, IOVA + 40, &a, 8, 0, XPORT_DMA_FROM_BUF),
			 0);
	ck_assert_int_eq(emu_event_cqe(&cq, &c), 0);
	ck_assert_int_eq(emu_event_cqe(&cq, &c), 0);
	ck_assert_uint_eq(ring.hdr.prod, 0);
	ck_assert_uint_eq(cq.events, 0);
	ck_assert_uint_eq(mem[5], 5);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(mem[5], 0x7777);
	ck_assert_uint_eq(ring.hdr.prod, 2);
	ck_assert_uint_eq(cq.events, 1);
	ck_assert_uint_eq(ring.hdr.arm, UROCE_CQ_ARM_NONE);
	ck_assert(emu_list_empty(&dev.pub_cqs));

	/* Solicited only: an unsolicited CQE wakes nobody, a solicited one does. */
	ring.hdr.arm = UROCE_CQ_ARM_SOLICITED;
	ck_assert_int_eq(emu_event_cqe(&cq, &c), 0);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(ring.hdr.prod, 3);
	ck_assert_uint_eq(cq.events, 1);
	c.flags = UROCE_CQE_SOLICITED;
	ck_assert_int_eq(emu_event_cqe(&cq, &c), 0);
	emu_dma_before_reveal(&dev);
	ck_assert_uint_eq(ring.hdr.prod, 4);
	ck_assert_uint_eq(cq.events, 2);
	ck_assert_uint_eq(ring.hdr.arm, UROCE_CQ_ARM_NONE);
	emu_dma_fini(&dev);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dp_dma");
	TCase *tc = tcase_create("dma");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_check_pure);
	tcase_add_test(tc, test_copies);
	tcase_add_test(tc, test_window_checks);
	tcase_add_test(tc, test_window_copies);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_fault);
	tcase_add_test(tc, test_atomics);
	tcase_add_test(tc, test_staged_writes);
	tcase_add_test(tc, test_read_sees_staged_write);
	tcase_add_test(tc, test_read_ahead);
	tcase_add_test(tc, test_gate_publishes_cqes);
	tcase_add_test(tc, test_staged_fault);
	tcase_add_test(tc, test_reveal_gate);
	tcase_add_test(tc, test_send_passes_gate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
