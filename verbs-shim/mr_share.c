/* SPDX-License-Identifier: MIT */
/*
 * Registered memory the daemon maps. The DMA engine reaches application
 * memory with process_vm_readv/writev: a system call, page pinning and a
 * kernel copy on every access. A NIC instead reaches the pages themselves.
 * So after ibv_reg_mr the whole pages of a plain MR become a shared mapping
 * of a memfd, and the daemon maps the same memfd (MAP_MR, emu/daemon/verbs/
 * mr.c) and copies with memcpy (emu/daemon/dp/dma.c):
 *
 *  1. the pages are copied into a new memfd, which is sealed against
 *     shrinking and growing (a mapping the daemon holds can never fault),
 *     and mapped over them (MAP_FIXED: the range is replaced in one step,
 *     same addresses, same contents, same protection);
 *  2. the memfd goes to the daemon with MAP_MR, which checks in
 *     /proc/PID/maps that it is what backs those addresses, maps it and
 *     closes it; this process keeps no descriptor.
 *
 * Only what can be replaced without a program noticing is: private
 * anonymous read-write memory (the heap, anonymous mmaps) or pages shared
 * by an earlier registration here; not the stack, files, huge pages
 * (hugetlbfs or SysV shm, already pinned in one piece), on-demand-paging
 * MRs, device memory. Only pages that lie inside the MR whole; the partial
 * pages at its ends stay private and go through process_vm_*. And only
 * when no other live MR of this process reaches those pages: the daemon
 * may be writing them through process_vm_* at this moment, and such a
 * write between the copy and the replacement would be lost.
 *
 * What changes for the program:
 *  - registration copies the MR's pages once (hardware pins them);
 *  - a thread that writes into the MR's pages while another registers them
 *    may lose that write (it lands in the copy's source between the copy
 *    and the replacement); real programs fill buffers before or after
 *    registering them;
 *  - after fork() the child gets private copies of every shared page (the
 *    handler below), so parent and child share nothing, as with private
 *    memory (what rdma-core offers on fork-safe kernels); a child made
 *    with vfork() or posix_spawn() shares the parent's memory anyway until
 *    it execs;
 *  - after deregistration the pages stay a mapping of their memfd, now
 *    only this process's (the daemon unmapped it): memory like any other.
 *
 * A daemon maps at most its --map-budget per RNIC. The shim asks first
 * (MAP_MR_PROBE), so pages are copied only when the daemon will map them; a
 * refusal after the copy (another program took the budget since) puts
 * private memory back.
 *
 * UROCE_MAP_MR=0 leaves every MR private (process_vm_* for all DMA).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procmaps.h"
#include "shim.h"

#define SHARE_NAME "uroce-mr-pages"
/* How /proc/self/maps names the memfd's mappings. */
#define SHARE_PATH "/memfd:" SHARE_NAME " (deleted)"

/* The byte ranges of this process's live MRs (all contexts), for the rule
 * that pages another MR reaches are left alone. */
struct span {
	uintptr_t start, end;
	const struct ibv_mr *mr;
};

static pthread_mutex_t span_lock = PTHREAD_MUTEX_INITIALIZER;
static struct span *spans;
static size_t nspans, cap_spans;

static bool share_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *env = getenv("UROCE_MAP_MR");

		on = !(env && !strcmp(env, "0"));
	}
	return on;
}

static void span_add(const struct ibv_mr *mr)
{
	if (nspans == cap_spans) {
		size_t cap = cap_spans ? 2 * cap_spans : 64;
		struct span *n = realloc(spans, cap * sizeof(*n));

		if (!n)
			return; /* then it is not known: shares stay possible, losses too */
		spans = n;
		cap_spans = cap;
	}
	spans[nspans].start = (uintptr_t)mr->addr;
	spans[nspans].end = (uintptr_t)mr->addr + mr->length;
	spans[nspans].mr = mr;
	nspans++;
}

static void span_del(const struct ibv_mr *mr)
{
	for (size_t i = 0; i < nspans; i++)
		if (spans[i].mr == mr) {
			spans[i] = spans[--nspans];
			return;
		}
}

/* Whether a live MR other than mr reaches [start, end). */
static bool span_overlaps(const struct ibv_mr *mr, uintptr_t start, uintptr_t end)
{
	for (size_t i = 0; i < nspans; i++)
		if (spans[i].mr != mr && spans[i].start < end && start < spans[i].end)
			return true;
	return false;
}

/*
 * A mapping a share may replace: read-write and not executable, private
 * anonymous (no file; the heap) or an earlier share's.
 */
static bool replaceable_line(const struct common_maps_line *m, uint64_t cur, const void *arg)
{
	(void)cur;
	(void)arg;
	if (m->perms[0] != 'r' || m->perms[1] != 'w' || m->perms[2] != '-')
		return false;
	return (m->perms[3] == 'p' && m->inode == 0 && (!*m->path || !strcmp(m->path, "[heap]"))) ||
	       (m->perms[3] == 's' && !strcmp(m->path, SHARE_PATH));
}

/* Whether /proc/self/maps shows [start, end) as such mappings, without a hole. */
static bool replaceable(uintptr_t start, uintptr_t end)
{
	return !common_maps_walk(0, start, end - start, replaceable_line, NULL);
}

/* [start, start+len) becomes private anonymous memory with the same
 * contents, in one step (mremap over it). 0, or -1 when it stays as it is. */
static int privatise(uintptr_t start, size_t len)
{
	void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (copy == MAP_FAILED)
		return -1;
	memcpy(copy, (void *)start, len);
	if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) == MAP_FAILED) {
		munmap(copy, len);
		return -1;
	}
	return 0;
}

/* After fork(), in the child: every shared page becomes a private copy. */
static void share_child(void)
{
	struct {
		uintptr_t lo, hi;
	} *r = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	bool line_start = true, at_start;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	/* Collect first: the maps file is not to be read while it changes. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		at_start = line_start;
		line_start = strchr(line, '\n') != NULL;
		if (!at_start || !strstr(line, SHARE_PATH) ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (n == cap) {
			void *nr = realloc(r, (cap = cap ? 2 * cap : 16) * sizeof(*r));

			if (!nr)
				break;
			r = nr;
		}
		r[n].lo = lo;
		r[n].hi = hi;
		n++;
	}
	fclose(f);
	for (size_t i = 0; i < n; i++)
		privatise(r[i].lo, r[i].hi - r[i].lo); /* failing: still shared with the parent */
	free(r);
	/* The parent's MRs are not this process's. */
	pthread_mutex_init(&span_lock, NULL);
	nspans = 0;
}

static void share_once(void)
{
	pthread_atfork(NULL, NULL, share_child);
}

/* Replace [start, end) by a shared mapping of a new memfd with its
 * contents; the memfd, or -1 when the range stays as it was. */
static int share_pages(uintptr_t start, size_t len)
{
	int fd = memfd_create(SHARE_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *copy;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return -1;
	}
	copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (copy == MAP_FAILED) {
		close(fd);
		return -1;
	}
	memcpy(copy, (void *)start, len);
	if (mmap((void *)start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		/*
		 * Out of mappings (vm.max_map_count), where the kernel may
		 * have unmapped the old pages already: private memory with
		 * the contents goes back (the same if the old pages are there).
		 */
		if (mmap((void *)start, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
			memcpy((void *)start, copy, len);
		munmap(copy, len);
		close(fd);
		return -1;
	}
	munmap(copy, len);
	return fd;
}

bool shim_mr_share(struct ibv_mr *mr)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const struct shim_mr *m = SHIM_CONTAINER_OF(mr, struct shim_mr, mr);
	struct shim_context *ctx = shim_ctx(mr->context);
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)mr->addr + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)mr->addr + mr->length) & ~(page - 1);
	struct uroce_map_mr_req req = {.hdr.op = UROCE_OP_MAP_MR, .handle = mr->handle};
	struct uroce_msg_hdr resp;
	int saved = errno, fd, err = -1;

	pthread_mutex_lock(&span_lock);
	req.addr = start;
	req.length = end - start;
	req.flags = UROCE_MAP_MR_PROBE;
	if (share_enabled() && mr->addr && !(m->access & IBV_ACCESS_ON_DEMAND) && end > start &&
	    !span_overlaps(mr, start, end) && replaceable(start, end) &&
	    /* Whether the daemon would map them, before they are copied. */
	    !(err = shim_call(ctx, &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL))) {
		pthread_once(&once, share_once);
		fd = share_pages(start, end - start);
		err = -1;
		if (fd >= 0) {
			req.flags = 0;
			err = shim_call_fd(ctx, &req, sizeof(req), fd, &resp, sizeof(resp));
			close(fd);
			/* Refused after all (another program took the budget
			 * since the probe): the pages go back to private memory. */
			if (err)
				privatise(start, end - start);
		}
	}
	span_add(mr);
	pthread_mutex_unlock(&span_lock);
	errno = saved;
	return !err;
}

void shim_mr_unshare(struct ibv_mr *mr)
{
	pthread_mutex_lock(&span_lock);
	span_del(mr);
	pthread_mutex_unlock(&span_lock);
}
