/* SPDX-License-Identifier: MIT */
/*
 * ring_abuse: a client that speaks the daemon's interface directly
 * (emu/include/uroce/uapi.h, as the shim does) and then writes into its
 * shared rings what no honest shim would: unknown opcodes, SGE counts and
 * inline lengths beyond the slot, keys that do not exist, receive WQEs with
 * impossible SGE counts, producer indices far beyond the ring, rounds
 * of random bytes, and send doorbell bits of QPs that do not exist. The RNIC must complete what it
 * can with the error a NIC gives, move the QP to the error state, and keep serving: a valid
 * SEND/receive on a fresh QP works afterwards.
 *
 *   ring_abuse SOCKET_PATH [ROUNDS]
 *
 * Exit status 0 when every check passed. One line per check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uroce/uapi.h"

#define BUF_BYTES 65536
#define CQ_ENTRIES 256
#define SQ_WR 16
#define RQ_WR 16

static int ctl_fd, db_fd, async_fd;
static struct uroce_sq_doorbells *sq_db;
static uint32_t seq;
static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	if (!ok)
		failures++;
}

/* One request (with send_fd unless -1), one response (with up to 4 fds).
 * 0 or the daemon's -errno. */
static int call_fd(void *req, size_t req_len, int send_fd, void *resp, size_t resp_len, int *fds,
		   int *nfds)
{
	struct uroce_msg_hdr *h = req;
	union {
		size_t align;
		char b[CMSG_SPACE(sizeof(int) * UROCE_MSG_MAX_FDS)];
	} cbuf;
	uint8_t in[UROCE_MSG_MAX_BYTES];
	struct iovec iov = {.iov_base = in, .iov_len = sizeof(in)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.b,
			    .msg_controllen = sizeof(cbuf.b)};
	struct uroce_msg_hdr rh;
	struct cmsghdr *c;
	ssize_t n;

	h->len = (uint32_t)req_len;
	h->seq = ++seq;
	h->status = 0;
	{
		struct iovec out = {.iov_base = req, .iov_len = req_len};
		struct msghdr om = {.msg_iov = &out, .msg_iovlen = 1};

		if (send_fd >= 0) {
			memset(&cbuf, 0, sizeof(cbuf));
			om.msg_control = cbuf.b;
			om.msg_controllen = CMSG_SPACE(sizeof(int));
			c = CMSG_FIRSTHDR(&om);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
		}
		if (sendmsg(ctl_fd, &om, MSG_NOSIGNAL) != (ssize_t)req_len)
			return -EIO;
	}
	n = recvmsg(ctl_fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < (ssize_t)sizeof(rh))
		return -EIO;
	if (nfds)
		*nfds = 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && fds) {
			*nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)*nfds);
		}
	memcpy(&rh, in, sizeof(rh));
	if (rh.status)
		return rh.status;
	if ((size_t)n != resp_len)
		return -EPROTO;
	memcpy(resp, in, resp_len);
	return 0;
}

static int call(void *req, size_t req_len, void *resp, size_t resp_len, int *fds, int *nfds)
{
	return call_fd(req, req_len, -1, resp, resp_len, fds, nfds);
}

static void *map_fd(int fd, size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

struct ring {
	struct uroce_ring_hdr *h;
	uint32_t prod;
};

struct qp {
	uint32_t handle, qpn;
	struct ring sq, rq;
};

static uint32_t pd, mr_lkey, mr_handle, cq_handle;
static struct ring cq;
static uint32_t cq_cons;
static uint8_t gid[16];
static uint8_t *buf;

static int open_all(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct uroce_open_ctx_req o = {.hdr.op = UROCE_OP_OPEN_CTX, .version = UROCE_UAPI_VERSION};
	struct uroce_open_ctx_resp or ;
	struct uroce_msg_hdr a = {.op = UROCE_OP_ALLOC_PD};
	struct uroce_handle_resp hr;
	struct uroce_reg_mr_req m = {.hdr.op = UROCE_OP_REG_MR};
	struct uroce_reg_mr_resp mr;
	struct uroce_create_cq_req cr = {.hdr.op = UROCE_OP_CREATE_CQ, .cqe = CQ_ENTRIES};
	struct uroce_cq_resp cresp;
	struct uroce_query_port_req g = {.hdr.op = UROCE_OP_QUERY_GID, .port_num = 1};
	struct uroce_query_gid_resp gr;
	int fds[UROCE_MSG_MAX_FDS], nfds, rc;

	ctl_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (ctl_fd < 0 || connect(ctl_fd, (struct sockaddr *)&sun, sizeof(sun)))
		return -errno;
	rc = call(&o, sizeof(o), & or, sizeof(or), fds, &nfds);
	if (rc || nfds != 4 || or.sq_doorbells_bytes != sizeof(*sq_db))
		return rc ? rc : -EPROTO;
	db_fd = fds[0];
	async_fd = fds[1];
	close(fds[2]);
	sq_db = map_fd(fds[3], sizeof(*sq_db));
	if (!sq_db)
		return -errno;
	/* The daemon's DMA engine reads and writes this process. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if ((rc = call(&a, sizeof(a), &hr, sizeof(hr), NULL, NULL)))
		return rc;
	pd = hr.handle;
	buf = aligned_alloc(4096, BUF_BYTES);
	memset(buf, 0, BUF_BYTES);
	m.pd_handle = pd;
	m.access = UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ;
	m.addr = (uintptr_t)buf;
	m.length = BUF_BYTES;
	m.iova = (uintptr_t)buf;
	if ((rc = call(&m, sizeof(m), &mr, sizeof(mr), NULL, NULL)))
		return rc;
	mr_lkey = mr.lkey;
	mr_handle = mr.handle;
	rc = call(&cr, sizeof(cr), &cresp, sizeof(cresp), fds, &nfds);
	if (rc || nfds != 1)
		return rc ? rc : -EPROTO;
	cq_handle = cresp.handle;
	cq.h = map_fd(fds[0], cresp.ring_bytes);
	if ((rc = call(&g, sizeof(g), &gr, sizeof(gr), NULL, NULL)))
		return rc;
	memcpy(gid, gr.gid, 16);
	return cq.h ? 0 : -ENOMEM;
}

static int modify(struct qp *q, uint32_t mask, struct uroce_qp_attr *a)
{
	struct uroce_modify_qp_req r = {
	    .hdr.op = UROCE_OP_MODIFY_QP, .handle = q->handle, .attr_mask = mask, .attr = *a};
	struct uroce_msg_hdr h;

	return call(&r, sizeof(r), &h, sizeof(h), NULL, NULL);
}

/* A new RC QP connected to itself (real packets to our own address). */
static int qp_new(struct qp *q)
{
	struct uroce_create_qp_req r = {.hdr.op = UROCE_OP_CREATE_QP,
					.pd_handle = pd,
					.send_cq_handle = cq_handle,
					.recv_cq_handle = cq_handle,
					.qp_type = UROCE_QPT_RC,
					.cap = {.max_send_wr = SQ_WR,
						.max_recv_wr = RQ_WR,
						.max_send_sge = 2,
						.max_recv_sge = 2,
						.max_inline_data = 64}};
	struct uroce_create_qp_resp o;
	struct uroce_qp_attr a;
	int fds[UROCE_MSG_MAX_FDS], nfds, rc;

	memset(q, 0, sizeof(*q));
	rc = call(&r, sizeof(r), &o, sizeof(o), fds, &nfds);
	if (rc || nfds != 2)
		return rc ? rc : -EPROTO;
	q->handle = o.handle;
	q->qpn = o.qpn;
	q->sq.h = map_fd(fds[0], o.sq_bytes);
	q->rq.h = map_fd(fds[1], o.rq_bytes);
	memset(&a, 0, sizeof(a));
	a.qp_state = UROCE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ;
	if ((rc = modify(
		 q, UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT | UROCE_QP_ACCESS_FLAGS,
		 &a)))
		return rc;
	a.qp_state = UROCE_QPS_RTR;
	a.path_mtu = 3;
	a.dest_qp_num = q->qpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.hop_limit = 64;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.dgid, gid, 16);
	if ((rc = modify(q,
			 UROCE_QP_STATE | UROCE_QP_AV | UROCE_QP_PATH_MTU | UROCE_QP_DEST_QPN |
			     UROCE_QP_RQ_PSN | UROCE_QP_MAX_DEST_RD_ATOMIC | UROCE_QP_MIN_RNR_TIMER,
			 &a)))
		return rc;
	a.qp_state = UROCE_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = 10; /* 4 ms */
	a.retry_cnt = 2;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	return modify(q,
		      UROCE_QP_STATE | UROCE_QP_SQ_PSN | UROCE_QP_TIMEOUT | UROCE_QP_RETRY_CNT |
			  UROCE_QP_RNR_RETRY | UROCE_QP_MAX_QP_RD_ATOMIC,
		      &a);
}

static void qp_destroy(struct qp *q)
{
	struct uroce_handle_req r = {.hdr.op = UROCE_OP_DESTROY_QP, .handle = q->handle};
	struct uroce_msg_hdr h;

	call(&r, sizeof(r), &h, sizeof(h), NULL, NULL);
	munmap(q->sq.h, uroce_ring_bytes(q->sq.h->entries, q->sq.h->stride));
	munmap(q->rq.h, uroce_ring_bytes(q->rq.h->entries, q->rq.h->stride));
}

static void *slot(struct ring *r, uint32_t i)
{
	return uroce_ring_entry(r->h, r->h->entries, r->h->stride, i);
}

static void publish(struct ring *r)
{
	static const uint64_t one = 1;

	uroce_store_release(&r->h->prod, r->prod);
	if (r->h->kind == UROCE_RING_SQ && r->h->db_index < UROCE_SQ_DB_BITS)
		uroce_sq_db_ring(sq_db, r->h->db_index);
	/* Always ring: the test does not care whether the daemon sleeps. */
	if (write(db_fd, &one, sizeof(one)) != sizeof(one))
		perror("doorbell");
}

static void post_send(struct qp *q, uint32_t opcode, uint64_t wr_id, uint32_t len, uint32_t lkey)
{
	struct uroce_send_wqe w = {
	    .wr_id = wr_id, .opcode = opcode, .send_flags = UROCE_SEND_SIGNALED, .num_sge = 1};
	struct uroce_sge s = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
	uint8_t *p = slot(&q->sq, q->sq.prod++);

	memcpy(p, &w, sizeof(w));
	memcpy(p + UROCE_SEND_WQE_BYTES, &s, sizeof(s));
	publish(&q->sq);
}

static void post_recv(struct qp *q, uint64_t wr_id, uint32_t nsge)
{
	struct uroce_recv_wqe w = {.wr_id = wr_id, .num_sge = nsge};
	struct uroce_sge s = {.addr = (uintptr_t)buf + 32768, .length = 4096, .lkey = mr_lkey};
	uint8_t *p = slot(&q->rq, q->rq.prod++);

	memcpy(p, &w, sizeof(w));
	memcpy(p + UROCE_RECV_WQE_BYTES, &s, sizeof(s));
	publish(&q->rq);
}

/* Poll up to want CQEs of qpn for at most ms; returns how many. */
static int poll_cq(uint32_t qpn, struct uroce_cqe *out, int want, int ms)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		while (got < want && cq_cons != uroce_load_acquire(&cq.h->prod)) {
			struct uroce_cqe e;

			memcpy(&e, uroce_ring_entry(cq.h, cq.h->entries, UROCE_CQE_BYTES, cq_cons),
			       sizeof(e));
			cq_cons++;
			uroce_store_release(&cq.h->cons, cq_cons);
			if (e.qp_num == qpn)
				out[got++] = e;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (got == want ||
		    (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return got;
		usleep(200);
	}
}

static uint32_t qp_state(struct qp *q)
{
	return uroce_load_acquire(&q->sq.h->qp_state);
}

/* An async event of this type for this QP within ms. */
static int async_event(uint32_t type, uint32_t handle, int ms)
{
	struct pollfd p = {.fd = async_fd, .events = POLLIN};
	struct uroce_async_event ev;

	while (poll(&p, 1, ms) == 1) {
		if (read(async_fd, &ev, sizeof(ev)) != sizeof(ev))
			return 0;
		if (ev.event_type == type && ev.handle == handle)
			return 1;
	}
	return 0;
}

static void test_valid(void)
{
	struct uroce_cqe e[2];
	struct qp q;
	int n;

	check(qp_new(&q) == 0, "QP connected to itself");
	memset(buf, 0x5a, 512);
	post_recv(&q, 7, 1);
	post_send(&q, UROCE_WR_SEND, 8, 512, mr_lkey);
	n = poll_cq(q.qpn, e, 2, 5000);
	check(n == 2 && e[0].status == 0 && e[1].status == 0 && buf[32768 + 511] == 0x5a,
	      "SEND to itself completes (%d CQEs, statuses %u %u)", n, n > 0 ? e[0].status : 99,
	      n > 1 ? e[1].status : 99);
	qp_destroy(&q);
}

/*
 * The MR's pages put over a memfd (the contents copied) at file offset off;
 * sealed against shrinking if sealed. The memfd, or -1.
 */
static int share_buf(bool sealed, off_t off)
{
	int fd = memfd_create("abuse", MFD_CLOEXEC | (sealed ? MFD_ALLOW_SEALING : 0));
	uint8_t *copy = malloc(BUF_BYTES);

	if (fd < 0 || !copy || ftruncate(fd, BUF_BYTES + off) ||
	    (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK))) {
		free(copy);
		return -1;
	}
	memcpy(copy, buf, BUF_BYTES);
	if (mmap(buf, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off) ==
	    MAP_FAILED) {
		free(copy);
		close(fd);
		return -1;
	}
	memcpy(buf, copy, BUF_BYTES);
	free(copy);
	return fd;
}

/*
 * The daemon reaches the memfd's pages it mapped, not what this process
 * maps at those addresses later (as a NIC reaches the pages it pinned):
 * with fresh memory over buf, a SEND to itself takes its payload from the
 * memfd and lands there; buf's new memory is not touched. Then the memfd
 * goes back over buf.
 */
static void map_mr_dma(int fd)
{
	uint8_t *view = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct uroce_cqe e[2];
	struct qp q;
	int n;

	if (view == MAP_FAILED ||
	    mmap(buf, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED) {
		check(0, "mappings for the mapped-MR SEND: %s", strerror(errno));
		return;
	}
	memset(view, 0x3c, 512);
	memset(view + 32768, 0, 512);
	memset(buf, 0x5a, 512);
	check(qp_new(&q) == 0, "QP connected to itself (mapped MR)");
	post_recv(&q, 17, 1);
	post_send(&q, UROCE_WR_SEND, 18, 512, mr_lkey);
	n = poll_cq(q.qpn, e, 2, 5000);
	check(n == 2 && e[0].status == 0 && e[1].status == 0 && view[32768 + 511] == 0x3c &&
		  buf[32768 + 511] == 0,
	      "SEND through a mapped MR reads and writes the memfd's pages (%d CQEs, memfd "
	      "0x%02x, the memory now at buf 0x%02x)",
	      n, view[32768 + 511], buf[32768 + 511]);
	qp_destroy(&q);
	if (mmap(buf, BUF_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED)
		check(0, "the memfd back over buf: %s", strerror(errno));
	munmap(view, BUF_BYTES);
}

static int map_mr_flags(int fd, uint64_t addr, uint64_t len, uint32_t flags)
{
	struct uroce_map_mr_req m = {.hdr.op = UROCE_OP_MAP_MR,
				     .handle = mr_handle,
				     .flags = flags,
				     .addr = addr,
				     .length = len};
	struct uroce_msg_hdr r;

	return call_fd(&m, sizeof(m), fd, &r, sizeof(r), NULL, NULL);
}

static int map_mr(int fd, uint64_t addr, uint64_t len)
{
	return map_mr_flags(fd, addr, len, 0);
}

/*
 * MAP_MR (the daemon maps an MR's pages from a memfd, verbs/mr.c): the
 * daemon maps only a memfd that cannot shrink under it and that is what
 * backs the MR's pages in this process, at the right offsets, inside the
 * MR, page aligned, once. Then DMA goes through its mapping.
 */
static void test_map_mr(void)
{
	uintptr_t a = (uintptr_t)buf;
	int unsealed = share_buf(false, 0), other, fd, rc;

	check(map_mr(-1, a, BUF_BYTES) == -EINVAL, "MAP_MR without a memfd: EINVAL");
	check(map_mr_flags(-1, a, BUF_BYTES, UROCE_MAP_MR_PROBE) == 0,
	      "MAP_MR_PROBE of the MR's pages: 0 (it would map them)");
	check(map_mr_flags(-1, a, 2 * BUF_BYTES, UROCE_MAP_MR_PROBE) == -EINVAL,
	      "MAP_MR_PROBE beyond the MR: EINVAL");
	check(map_mr_flags(-1, a, BUF_BYTES, 0x80) == -EINVAL,
	      "MAP_MR with an unknown flag: EINVAL");
	rc = map_mr(unsealed, a, BUF_BYTES);
	check(unsealed >= 0 && rc == -EINVAL, "MAP_MR of a memfd that can shrink: EINVAL (%d)", rc);
	other = memfd_create("other", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (other >= 0 && (ftruncate(other, BUF_BYTES) || fcntl(other, F_ADD_SEALS, F_SEAL_SHRINK)))
		check(0, "a sealed memfd: %s", strerror(errno));
	rc = map_mr(other, a, BUF_BYTES);
	check(rc == -EINVAL, "MAP_MR of a memfd that does not back the MR: EINVAL (%d)", rc);
	fd = share_buf(true, 4096);
	rc = map_mr(fd, a, BUF_BYTES);
	check(fd >= 0 && rc == -EINVAL, "MAP_MR of a memfd mapped at another offset: EINVAL (%d)",
	      rc);
	close(fd);
	fd = share_buf(true, 0);
	check(map_mr(fd, a + 100, 4096) == -EINVAL, "MAP_MR of an unaligned range: EINVAL");
	check(map_mr(fd, a, 2 * BUF_BYTES) == -EINVAL, "MAP_MR beyond the MR: EINVAL");
	rc = map_mr(fd, a, BUF_BYTES);
	check(rc == 0, "MAP_MR of the sealed memfd that backs the MR (%d)", rc);
	check(map_mr(fd, a, BUF_BYTES) == -EINVAL, "a second MAP_MR of the MR: EINVAL");
	if (!rc)
		map_mr_dma(fd);
	close(fd);
	close(other);
	close(unsealed);
}

/* One malformed send WQE: completes with status, QP in ERR, QP_FATAL. */
static void bad_send(const char *what, struct uroce_send_wqe *w, const void *data, size_t dlen,
		     uint32_t want)
{
	struct uroce_cqe e[2];
	struct qp q;
	uint8_t *p;
	int n;

	if (qp_new(&q)) {
		check(0, "%s: QP", what);
		return;
	}
	p = slot(&q.sq, q.sq.prod++);
	memcpy(p, w, sizeof(*w));
	if (dlen)
		memcpy(p + UROCE_SEND_WQE_BYTES, data, dlen);
	publish(&q.sq);
	/* A valid WR behind it is flushed. */
	post_send(&q, UROCE_WR_RDMA_WRITE, 99, 8, mr_lkey);
	n = poll_cq(q.qpn, e, 2, 5000);
	check(n == 2 && e[0].wr_id == w->wr_id && e[0].status == want &&
		  e[1].status == UROCE_WC_WR_FLUSH_ERR && qp_state(&q) == UROCE_QPS_ERR &&
		  async_event(UROCE_EVENT_QP_FATAL, q.handle, 2000),
	      "%s: status %u (want %u), next WR %u, QP state %u", what, n ? e[0].status : 99, want,
	      n > 1 ? e[1].status : 99, qp_state(&q));
	qp_destroy(&q);
}

static void test_bad_sends(void)
{
	struct uroce_send_wqe w = {.wr_id = 1, .send_flags = UROCE_SEND_SIGNALED};
	struct uroce_sge s = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr_lkey};

	w.opcode = 0x77;
	w.num_sge = 1;
	bad_send("unknown opcode", &w, &s, sizeof(s), UROCE_WC_LOC_QP_OP_ERR);
	w.opcode = UROCE_WR_BIND_MW;
	bad_send("BIND_MW with a buffer", &w, &s, sizeof(s), UROCE_WC_LOC_QP_OP_ERR);
	/* A well-formed bind of a window that does not exist, and an
	 * invalidation of an R_Key that is no window's (an MR's: ibv_reg_mr
	 * MRs cannot be invalidated). */
	w.num_sge = 0;
	w.wr.bind.mw_handle = 0x7fffffff;
	bad_send("BIND_MW of no window", &w, NULL, 0, UROCE_WC_MW_BIND_ERR);
	memset(&w.wr, 0, sizeof(w.wr));
	w.opcode = UROCE_WR_LOCAL_INV;
	w.imm_data = mr_lkey;
	bad_send("LOCAL_INV of an MR", &w, NULL, 0, UROCE_WC_MW_BIND_ERR);
	w.imm_data = 0;
	w.num_sge = 1;
	w.opcode = UROCE_WR_SEND;
	w.num_sge = 1000000;
	bad_send("a million SGEs", &w, &s, sizeof(s), UROCE_WC_LOC_QP_OP_ERR);
	w.num_sge = 0;
	w.send_flags |= UROCE_SEND_INLINE;
	w.inline_len = 0x10000;
	bad_send("64 KiB inline", &w, NULL, 0, UROCE_WC_LOC_LEN_ERR);
	w.send_flags = UROCE_SEND_SIGNALED;
	w.opcode = UROCE_WR_RDMA_WRITE;
	w.num_sge = 1;
	s.lkey = 0x12345600;
	bad_send("L_Key of no MR", &w, &s, sizeof(s), 4 /* IBV_WC_LOC_PROT_ERR */);
	s.lkey = mr_lkey;
	s.length = BUF_BYTES + 1;
	bad_send("SGE beyond the MR", &w, &s, sizeof(s), 4 /* IBV_WC_LOC_PROT_ERR */);
}

static void test_bad_recv(void)
{
	struct uroce_cqe e[2];
	struct qp q;
	int n;

	if (qp_new(&q)) {
		check(0, "bad receive: QP");
		return;
	}
	post_recv(&q, 5, 0x40000000);
	post_send(&q, UROCE_WR_SEND, 6, 64, mr_lkey);
	n = poll_cq(q.qpn, e, 2, 5000);
	/*
	 * Responder: IBV_WC_LOC_QP_OP_ERR for the receive. The QP is its own
	 * peer, so the responder's move to ERR flushes the SEND before the
	 * NAK (Remote Operational Error) comes back: either status is right.
	 */
	if (n == 2 && e[0].wr_id != 5) {
		struct uroce_cqe t = e[0];

		e[0] = e[1];
		e[1] = t;
	}
	check(n == 2 && qp_state(&q) == UROCE_QPS_ERR && e[0].wr_id == 5 && e[0].status == 2 &&
		  (e[1].status == 11 || e[1].status == UROCE_WC_WR_FLUSH_ERR),
	      "receive WQE with 2^30 SGEs: receive %u, SEND %u, QP state %u", n ? e[0].status : 99,
	      n > 1 ? e[1].status : 99, qp_state(&q));
	qp_destroy(&q);
}

static void test_bad_index(void)
{
	struct uroce_cqe e[1];
	struct qp q;

	if (qp_new(&q)) {
		check(0, "bad index: QP");
		return;
	}
	q.sq.prod = q.sq.h->entries * 3 + 1;
	publish(&q.sq);
	check(async_event(UROCE_EVENT_QP_FATAL, q.handle, 3000) && qp_state(&q) == UROCE_QPS_ERR,
	      "SQ producer index 3 rings ahead: QP state %u", qp_state(&q));
	/* Receives posted now are flushed. */
	q.rq.prod = 0;
	post_recv(&q, 42, 1);
	check(poll_cq(q.qpn, e, 1, 3000) == 1 && e[0].wr_id == 42 &&
		  e[0].status == UROCE_WC_WR_FLUSH_ERR,
	      "receive posted to the QP in ERR is flushed");
	qp_destroy(&q);
}

/* Ring fds a client could shrink would fault the daemon (SIGBUS): refused. */
static void test_shrink(void)
{
	struct uroce_create_cq_req cr = {.hdr.op = UROCE_OP_CREATE_CQ, .cqe = 16};
	struct uroce_cq_resp co;
	struct uroce_create_qp_req qr = {
	    .hdr.op = UROCE_OP_CREATE_QP,
	    .qp_type = UROCE_QPT_RC,
	    .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct uroce_create_qp_resp qo;
	struct uroce_handle_req d = {.hdr.op = UROCE_OP_DESTROY_QP};
	struct uroce_msg_hdr h;
	int fds[UROCE_MSG_MAX_FDS], nfds = 0, rc;

	rc = call(&cr, sizeof(cr), &co, sizeof(co), fds, &nfds);
	if (rc || nfds != 1) {
		check(0, "shrink: CQ (%d)", rc);
		return;
	}
	check(ftruncate(fds[0], 0) < 0 && ftruncate(fds[0], (off_t)co.ring_bytes * 2) < 0,
	      "CQ ring fd cannot be shrunk or grown");
	close(fds[0]);
	qr.pd_handle = pd;
	qr.send_cq_handle = co.handle;
	qr.recv_cq_handle = co.handle;
	rc = call(&qr, sizeof(qr), &qo, sizeof(qo), fds, &nfds);
	if (rc || nfds != 2) {
		check(0, "shrink: QP (%d)", rc);
		return;
	}
	check(ftruncate(fds[0], 0) < 0 && ftruncate(fds[1], 0) < 0,
	      "SQ and RQ ring fds cannot be shrunk");
	close(fds[0]);
	close(fds[1]);
	d.handle = qo.handle;
	check(call(&d, sizeof(d), &h, sizeof(h), NULL, NULL) == 0, "shrink: QP destroyed");
	d.hdr.op = UROCE_OP_DESTROY_CQ;
	d.handle = co.handle;
	check(call(&d, sizeof(d), &h, sizeof(h), NULL, NULL) == 0, "shrink: CQ destroyed");
}

/*
 * The DMA engine reaches a context's memory by the pid of the process that
 * connected. When that process exits while a child it forked still holds
 * the socket, the pid can be reused by an unrelated process: the daemon
 * must release the context then (the child sees the socket close), not
 * keep it for a pid that names someone else.
 */
static void test_owner_exit(const char *path)
{
	int res[2], got = -1;
	pid_t a;

	if (pipe(res)) {
		check(0, "owner exit: pipe");
		return;
	}
	a = fork();
	if (a == 0) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		struct uroce_open_ctx_req o = {.hdr.op = UROCE_OP_OPEN_CTX,
					       .version = UROCE_UAPI_VERSION};
		struct uroce_open_ctx_resp or ;
		struct uroce_msg_hdr pa = {.op = UROCE_OP_ALLOC_PD};
		struct uroce_handle_resp hr;
		int fds[UROCE_MSG_MAX_FDS], nfds = 0;

		close(res[0]);
		ctl_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		if (ctl_fd < 0 || connect(ctl_fd, (struct sockaddr *)&sun, sizeof(sun)) ||
		    call(&o, sizeof(o), & or, sizeof(or), fds, &nfds) ||
		    call(&pa, sizeof(pa), &hr, sizeof(hr), NULL, NULL))
			_exit(1);
		if (fork() == 0) {
			/* The child: holds the socket, waits for it to close. */
			struct pollfd p = {.fd = ctl_fd, .events = POLLIN};
			char c, r;

			r = poll(&p, 1, 3000) == 1 && recv(ctl_fd, &c, 1, 0) == 0 ? 1 : 0;
			if (write(res[1], &r, 1) != 1)
				_exit(1);
			_exit(0);
		}
		_exit(0); /* the owner exits */
	}
	close(res[1]);
	if (a > 0) {
		char r;

		waitpid(a, NULL, 0);
		if (read(res[0], &r, 1) == 1)
			got = r;
	}
	close(res[0]);
	check(got == 1,
	      "context released when its process exits while a forked child holds "
	      "the socket (child saw %s)",
	      got == 1	 ? "the close"
	      : got == 0 ? "no close"
			 : "nothing");
}

/* Every send doorbell bit set, of QPs that exist and of ones that do not:
 * the daemon looks at what exists, ignores the rest, and keeps serving. */
static void test_doorbell_garbage(void)
{
	struct uroce_cqe e[2];
	struct qp q;
	int n;

	if (qp_new(&q)) {
		check(0, "doorbell garbage: QP");
		return;
	}
	check(q.sq.h->db_index < UROCE_SQ_DB_BITS, "SQ ring names its doorbell bit (%u)",
	      q.sq.h->db_index);
	memset(sq_db, 0xff, sizeof(*sq_db));
	post_recv(&q, 5, 1);
	post_send(&q, UROCE_WR_SEND, 6, 64, mr_lkey);
	n = poll_cq(q.qpn, e, 2, 5000);
	check(n == 2 && e[0].status == 0 && e[1].status == 0,
	      "every doorbell bit set: a SEND still completes (%d CQEs)", n);
	qp_destroy(&q);
}

static void test_random(unsigned rounds)
{
	unsigned seed = (unsigned)time(NULL);

	printf("random rounds: seed %u\n", seed);
	srand(seed);
	for (unsigned r = 0; r < rounds; r++) {
		struct uroce_cqe e[64];
		struct qp q;
		unsigned n = 1 + (unsigned)rand() % SQ_WR;

		if (qp_new(&q)) {
			check(0, "random round %u: QP", r);
			return;
		}
		for (unsigned i = 0; i < n; i++) {
			uint8_t *p = slot(&q.sq, q.sq.prod++);

			for (uint32_t b = 0; b < q.sq.h->stride; b++)
				p[b] = (uint8_t)rand();
			/* Sometimes a plausible opcode, so that more paths run. */
			if (rand() % 2)
				((struct uroce_send_wqe *)p)->opcode = (uint32_t)rand() % 7;
		}
		for (unsigned i = 0; i < 4; i++) {
			uint8_t *p = slot(&q.rq, q.rq.prod++);

			for (uint32_t b = 0; b < q.rq.h->stride; b++)
				p[b] = (uint8_t)rand();
		}
		publish(&q.rq);
		publish(&q.sq);
		/* Whatever happened, every send WR gets a CQE or none are left
		 * in flight once the retries are over; just drain. */
		poll_cq(q.qpn, e, 64, 300);
		qp_destroy(&q);
	}
	check(1, "%u rounds of random send and receive WQEs", rounds);
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 50;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: ring_abuse SOCKET_PATH [ROUNDS]\n");
		return 2;
	}
	rc = open_all(argv[1]);
	if (rc) {
		fprintf(stderr, "ring_abuse: cannot open %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	test_valid();
	test_bad_sends();
	test_bad_recv();
	test_bad_index();
	test_shrink();
	test_owner_exit(argv[1]);
	test_doorbell_garbage();
	/* From here on the MR's pages are the daemon's mapping (the checks
	 * after it use them). */
	test_map_mr();
	test_valid();
	test_random(rounds);
	/* After all of it the device still works. */
	test_valid();
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
