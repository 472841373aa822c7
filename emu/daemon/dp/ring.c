/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory rings (layout in uroce/uapi.h): creation of the memfd and
 * its mapping on the daemon side, and the consumer-side index operations
 * with the validation the daemon owes to memory that a client can scribble
 * on. The daemon keeps its own copy of the geometry and of the indices it
 * owns, and only ever reads the client's index.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp.h"

uint32_t emu_pow2_roundup(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

void *emu_shm_create(const char *name, size_t bytes, int *fd_out)
{
	void *p;
	int fd, err;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes))
		goto err_fd;
	/* The client gets this fd: memory it could shrink would fault the
	 * daemon (SIGBUS) on its next access. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto err_fd;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err_fd;
	*fd_out = fd;
	return p;

err_fd:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

int emu_ring_create(struct emu_ring *r, enum uroce_ring_kind kind, uint32_t entries,
		    uint32_t stride, uint32_t handle, uint32_t qpn, int *fd_out)
{
	uint64_t bytes = uroce_ring_bytes(entries, stride);
	struct uroce_ring_hdr *h = emu_shm_create("uroce-ring", bytes, fd_out);

	if (!h)
		return -errno;
	h->magic = UROCE_RING_MAGIC;
	h->kind = kind;
	h->entries = entries;
	h->stride = stride;
	h->handle = handle;
	h->qpn = qpn;
	h->db_index = UINT32_MAX; /* none until emu_sq_db_attach */
	r->hdr = h;
	r->bytes = bytes;
	r->entries = entries;
	r->stride = stride;
	r->cons = 0;
	r->ready = 0;
	r->prod = 0;
	return 0;
}

void emu_ring_destroy(struct emu_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->bytes);
	memset(r, 0, sizeof(*r));
}

int64_t emu_ring_pending(const struct emu_ring *r)
{
	uint32_t prod = uroce_load_acquire(&r->hdr->prod);
	uint32_t n = prod - r->cons;

	if (n > r->entries)
		return -EINVAL; /* the producer index is garbage */
	return n;
}

/*
 * The producer's line moves to the reader's core every time the program
 * posts, so it is read only when what an earlier read showed is used up:
 * a program that posts receives while the daemon takes them costs one
 * transfer of the line per batch, not one per WQE.
 */
int64_t emu_ring_ready(struct emu_ring *r)
{
	int64_t n;

	if (r->ready)
		return r->ready;
	n = emu_ring_pending(r);
	if (n > 0)
		r->ready = (uint32_t)n;
	return n;
}

void emu_ring_consume(struct emu_ring *r)
{
	if (r->ready)
		r->ready--;
	r->cons++;
	uroce_store_release(&r->hdr->cons, r->cons);
}

void emu_ring_drain(struct emu_ring *r)
{
	r->cons = uroce_load_acquire(&r->hdr->prod);
	r->ready = 0;
	uroce_store_release(&r->hdr->cons, r->cons);
}
