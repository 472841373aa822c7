/* SPDX-License-Identifier: MIT */
/*
 * The shim's side of the control protocol (uroce/uapi.h): where devices
 * live (the rundir rule), connecting to a daemon, and one request/response
 * exchange with descriptor passing. Nothing here runs before the first
 * verbs call: no constructor, no global connection. Each context owns its
 * own connection, opened by ibv_open_device in the process that calls it,
 * so a child after fork() simply opens its own (as with real devices).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shim.h"
#include "rundir.h"

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* Send a request, with send_fd attached (SCM_RIGHTS) unless it is -1. */
static ssize_t send_req(int fd, void *req, size_t req_len, int send_fd)
{
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct iovec iov = {.iov_base = req, .iov_len = req_len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (send_fd >= 0) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.b;
		mh.msg_controllen = sizeof(cbuf.b);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

static int exchange(int fd, uint32_t seq, void *req, size_t req_len, int send_fd, void *resp,
		    size_t resp_len, int *fds, int max_fds, int *nfds)
{
	struct uroce_msg_hdr *h = req;
	union {
		struct uroce_msg_hdr hdr;
		uint8_t b[UROCE_MSG_MAX_BYTES];
	} in;
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(int) * UROCE_MSG_MAX_FDS)];
	} cbuf;
	int got[UROCE_MSG_MAX_FDS], ngot = 0;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;

	if (nfds)
		*nfds = 0;
	h->len = (uint32_t)req_len;
	h->seq = seq;
	h->status = 0;
	n = send_req(fd, req, req_len, send_fd);
	if (n < 0)
		return (errno == EPIPE || errno == ECONNRESET) ? -EIO : -errno;

	iov.iov_base = in.b;
	iov.iov_len = sizeof(in.b);
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.b;
	mh.msg_controllen = sizeof(cbuf.b);
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -EIO : -errno;
	if (n == 0)
		return -EIO; /* the daemon went away */

	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			if (k > UROCE_MSG_MAX_FDS - ngot)
				k = UROCE_MSG_MAX_FDS - ngot;
			memcpy(&got[ngot], CMSG_DATA(c), sizeof(int) * k);
			ngot += k;
		}
	}
	if ((size_t)n < sizeof(in.hdr) || in.hdr.op != h->op || in.hdr.seq != seq ||
	    in.hdr.len != (uint32_t)n) {
		close_fds(got, ngot);
		return -EPROTO;
	}
	if (in.hdr.status) {
		close_fds(got, ngot);
		return in.hdr.status < 0 ? in.hdr.status : -EPROTO;
	}
	if ((size_t)n != resp_len || ngot > max_fds) {
		close_fds(got, ngot);
		return -EPROTO;
	}
	memcpy(resp, in.b, resp_len);
	for (int i = 0; i < ngot; i++)
		fds[i] = got[i];
	if (nfds)
		*nfds = ngot;
	return 0;
}

int shim_exchange(int fd, uint32_t seq, void *req, size_t req_len, void *resp, size_t resp_len,
		  int *fds, int max_fds, int *nfds)
{
	return exchange(fd, seq, req, req_len, -1, resp, resp_len, fds, max_fds, nfds);
}

static int call(struct shim_context *ctx, void *req, size_t req_len, int send_fd, void *resp,
		size_t resp_len, int *fds, int max_fds, int *nfds)
{
	int ret;

	if (shim_dead(ctx))
		return -EIO;
	if (pthread_mutex_lock(&ctx->call->lock) == EOWNERDEAD) {
		/* A process sharing the context (a child after fork) died in
		 * an exchange: drop its answer, if it came, and go on. */
		char junk[UROCE_MSG_MAX_BYTES];

		while (recv(ctx->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
		pthread_mutex_consistent(&ctx->call->lock);
	}
	ret = exchange(ctx->fd, ++ctx->call->seq, req, req_len, send_fd, resp, resp_len, fds,
		       max_fds, nfds);
	pthread_mutex_unlock(&ctx->call->lock);
	if (ret == -EIO)
		shim_fatal_mark(ctx); /* the daemon went away (fatal.c) */
	return ret;
}

int shim_call(struct shim_context *ctx, void *req, size_t req_len, void *resp, size_t resp_len,
	      int *fds, int max_fds, int *nfds)
{
	return call(ctx, req, req_len, -1, resp, resp_len, fds, max_fds, nfds);
}

int shim_call_fd(struct shim_context *ctx, void *req, size_t req_len, int send_fd, void *resp,
		 size_t resp_len)
{
	return call(ctx, req, req_len, send_fd, resp, resp_len, NULL, 0, NULL);
}

struct shim_call_page *shim_call_page_new(void)
{
	struct shim_call_page *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_t a;

	if (p == MAP_FAILED)
		return NULL;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&p->lock, &a);
	pthread_mutexattr_destroy(&a);
	p->seq = 1;
	return p;
}

void shim_call_page_free(struct shim_call_page *p)
{
	pthread_mutex_destroy(&p->lock);
	munmap(p, sizeof(*p));
}

/* The requests that release an object. */
static bool is_release(uint32_t op)
{
	switch (op) {
	case UROCE_OP_DEALLOC_PD:
	case UROCE_OP_DEREG_MR:
	case UROCE_OP_DESTROY_CHANNEL:
	case UROCE_OP_DESTROY_CQ:
	case UROCE_OP_DESTROY_QP:
	case UROCE_OP_DESTROY_SRQ:
	case UROCE_OP_DESTROY_AH:
	case UROCE_OP_CLOSE_XRCD:
		return true;
	default:
		return false;
	}
}

int shim_call_simple(struct shim_context *ctx, uint32_t op, uint32_t handle)
{
	struct uroce_handle_req req = {.hdr.op = op, .handle = handle};
	struct uroce_msg_hdr resp;
	int ret = shim_call(ctx, &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);

	/* The daemon is gone and its objects with it: releasing one
	 * succeeds, so that the application can clean up (fatal.c). */
	if (ret == -EIO && is_release(op))
		return 0;
	return ret;
}

void *shim_map_ring(int fd, size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = errno;

	close(fd);
	if (p == MAP_FAILED) {
		errno = err;
		return NULL;
	}
	return p;
}

/* Wake the daemon if it said it sleeps; the caller made a full fence since
 * it published its work. */
static void ring_if_asleep(struct shim_context *ctx)
{
	static const uint64_t one = 1;

	if (__atomic_load_n(&ctx->status->daemon_asleep, __ATOMIC_RELAXED)) {
		ssize_t n = write(ctx->doorbell_fd, &one, sizeof(one));

		(void)n; /* a full counter still wakes the daemon */
	}
}

void shim_doorbell(struct shim_context *ctx)
{
	/* Pairs with the daemon's fence between setting "asleep" and its
	 * last look at the rings (emu/daemon/dp/wait.c, on_prepare). */
	uroce_fence();
	ring_if_asleep(ctx);
}

void shim_sq_doorbell(struct shim_context *ctx, const struct shim_wq *sq)
{
	/* The bit, then the daemon_asleep check; ringing the bit begins with
	 * the full fence. */
	if (sq->db_index == UINT32_MAX) {
		shim_doorbell(ctx);
		return;
	}
	uroce_sq_db_ring(ctx->sq_db, sq->db_index);
	ring_if_asleep(ctx);
}

void *shim_fail_null(int neg_errno)
{
	errno = -neg_errno;
	return NULL;
}
