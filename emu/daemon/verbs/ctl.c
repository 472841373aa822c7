/* SPDX-License-Identifier: MIT */
/*
 * The control server: the Unix socket <rundir>/<name>.sock (SOCK_SEQPACKET),
 * peer credential checks, reading one request per datagram, dispatching it
 * through the operation table, and sending the response with its file
 * descriptors (SCM_RIGHTS). Requests are handled to completion one at a time
 * on the event loop; a client that sends garbage is disconnected, which
 * releases everything it created (ctx.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rundir.h"
#include "verbs.h"

void *emu_reply_body(struct emu_reply *rep, size_t len)
{
	if (len > sizeof(rep->u.buf))
		len = sizeof(rep->u.buf); /* not reached: sizes are static */
	memset(rep->u.buf + sizeof(rep->u.hdr), 0, len - sizeof(rep->u.hdr));
	rep->len = len;
	return rep->u.buf;
}

void emu_reply_add_fd(struct emu_reply *rep, int fd)
{
	if (rep->nfds < UROCE_MSG_MAX_FDS)
		rep->fds[rep->nfds++] = fd;
	else
		close(fd);
}

static void reply_close_fds(struct emu_reply *rep)
{
	for (int i = 0; i < rep->nfds; i++)
		close(rep->fds[i]);
	rep->nfds = 0;
}

/* ------------------------------------------------------------------------ */
/* Small handlers: identity and queries.                                     */

static int op_hello(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_hello_req *r = req;
	struct uroce_hello_resp *o;
	struct emu_dev *dev = ctx->dev;

	if (r->version != UROCE_UAPI_VERSION)
		return -EPROTO;
	o = EMU_REPLY(rep, struct uroce_hello_resp);
	o->version = UROCE_UAPI_VERSION;
	o->daemon_pid = (uint32_t)getpid();
	o->node_guid = dev->node_guid;
	snprintf(o->name, sizeof(o->name), "%s", dev->name);
	snprintf(o->addr, sizeof(o->addr), "%s", dev->addr_str);
	o->udp_port = dev->udp_port;
	o->node_type = 1;      /* IBV_NODE_CA */
	o->transport_type = 0; /* IBV_TRANSPORT_IB */
	o->active_mtu = dev->active_mtu;
	o->counts = dev->counts;
	return 0;
}

static int op_open_ctx(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_open_ctx_req *r = req;

	if (r->version != UROCE_UAPI_VERSION)
		return -EPROTO;
	if (ctx->opened)
		return -EBUSY;
	if (ctx->cm_chan) /* a CM channel is not a verbs context */
		return -EPROTO;
	return emu_ctx_open(ctx, rep);
}

static int op_query_device(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	struct uroce_query_device_resp *o;

	(void)req;
	o = EMU_REPLY(rep, struct uroce_query_device_resp);
	emu_dev_fill_attr(ctx->dev, &o->attr);
	return 0;
}

static int op_query_port(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_query_port_req *r = req;
	struct uroce_query_port_resp *o;

	if (r->port_num != UROCE_PORT_NUM)
		return -EINVAL;
	o = EMU_REPLY(rep, struct uroce_query_port_resp);
	emu_dev_fill_port(ctx->dev, &o->attr);
	return 0;
}

static int op_query_gid(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_query_port_req *r = req;
	struct uroce_query_gid_resp *o;

	if (r->port_num != UROCE_PORT_NUM || r->index >= UROCE_GID_TBL_LEN)
		return -EINVAL;
	o = EMU_REPLY(rep, struct uroce_query_gid_resp);
	if (r->index == 0) {
		memcpy(o->gid, ctx->dev->gid, 16);
		o->gid_type = UROCE_GID_TYPE_ROCE_V2;
		o->valid = 1;
		o->ndev_ifindex = (uint32_t)ctx->dev->ifindex;
	}
	return 0;
}

static int op_query_pkey(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_query_port_req *r = req;
	struct uroce_query_pkey_resp *o;

	(void)ctx;
	if (r->port_num != UROCE_PORT_NUM || r->index >= UROCE_PKEY_TBL_LEN)
		return -EINVAL;
	o = EMU_REPLY(rep, struct uroce_query_pkey_resp);
	o->pkey = UROCE_DEFAULT_PKEY;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Operation table.                                                          */

typedef int (*emu_op_cb)(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);

struct op_desc {
	const char *name;
	size_t req_len; /* exact request size */
	emu_op_cb handler;
	int before_open; /* allowed before OPEN_CTX */
};

#define OPD(op, type, fn, pre) [UROCE_OP_##op] = {#op, sizeof(type), fn, pre}

static const struct op_desc ops[] = {
    OPD(HELLO, struct uroce_hello_req, op_hello, 1),
    OPD(OPEN_CTX, struct uroce_open_ctx_req, op_open_ctx, 1),
    OPD(QUERY_DEVICE, struct uroce_msg_hdr, op_query_device, 0),
    OPD(QUERY_PORT, struct uroce_query_port_req, op_query_port, 0),
    OPD(QUERY_GID, struct uroce_query_port_req, op_query_gid, 0),
    OPD(QUERY_PKEY, struct uroce_query_port_req, op_query_pkey, 0),
    OPD(ALLOC_PD, struct uroce_msg_hdr, emu_pd_alloc, 0),
    OPD(DEALLOC_PD, struct uroce_handle_req, emu_pd_dealloc, 0),
    OPD(REG_MR, struct uroce_reg_mr_req, emu_mr_reg, 0),
    OPD(REREG_MR, struct uroce_rereg_mr_req, emu_mr_rereg, 0),
    OPD(DEREG_MR, struct uroce_handle_req, emu_mr_dereg, 0),
    OPD(MAP_MR, struct uroce_map_mr_req, emu_mr_map, 0),
    OPD(ALLOC_MW, struct uroce_alloc_mw_req, emu_mw_alloc, 0),
    OPD(DEALLOC_MW, struct uroce_handle_req, emu_mw_dealloc, 0),
    OPD(ADVISE_MR, struct uroce_advise_mr_req, emu_mr_advise, 0),
    OPD(ALLOC_DM, struct uroce_alloc_dm_req, emu_dm_alloc, 0),
    OPD(FREE_DM, struct uroce_handle_req, emu_dm_free_req, 0),
    OPD(REG_DM_MR, struct uroce_reg_dm_mr_req, emu_mr_reg_dm, 0),
    OPD(CREATE_CHANNEL, struct uroce_msg_hdr, emu_cq_create_channel, 0),
    OPD(DESTROY_CHANNEL, struct uroce_handle_req, emu_cq_destroy_channel, 0),
    OPD(CREATE_CQ, struct uroce_create_cq_req, emu_cq_create, 0),
    OPD(RESIZE_CQ, struct uroce_resize_cq_req, emu_cq_resize, 0),
    OPD(DESTROY_CQ, struct uroce_handle_req, emu_cq_destroy, 0),
    OPD(CREATE_QP, struct uroce_create_qp_req, emu_qp_create, 0),
    OPD(MODIFY_QP, struct uroce_modify_qp_req, emu_qp_modify, 0),
    OPD(QUERY_QP, struct uroce_query_qp_req, emu_qp_query, 0),
    OPD(DESTROY_QP, struct uroce_handle_req, emu_qp_destroy, 0),
    OPD(CREATE_SRQ, struct uroce_create_srq_req, emu_srq_create, 0),
    OPD(MODIFY_SRQ, struct uroce_modify_srq_req, emu_srq_modify, 0),
    OPD(QUERY_SRQ, struct uroce_handle_req, emu_srq_query, 0),
    OPD(DESTROY_SRQ, struct uroce_handle_req, emu_srq_destroy, 0),
    OPD(CREATE_AH, struct uroce_create_ah_req, emu_ah_create, 0),
    OPD(DESTROY_AH, struct uroce_handle_req, emu_ah_destroy, 0),
    OPD(ATTACH_MCAST, struct uroce_mcast_req, emu_qp_attach_mcast, 0),
    OPD(DETACH_MCAST, struct uroce_mcast_req, emu_qp_detach_mcast, 0),
    OPD(QUERY_COUNTERS, struct uroce_query_counters_req, emu_counters_query, 1),
    OPD(FAULT, struct uroce_fault_req, emu_fault_ctl, 1),
    OPD(QP_LIST, struct uroce_qp_list_req, emu_qp_list, 1),
    OPD(MR_LIST, struct uroce_res_list_req, emu_mr_list, 1),
    OPD(CQ_LIST, struct uroce_res_list_req, emu_cq_list, 1),
    OPD(CM_OPEN, struct uroce_msg_hdr, emu_cm_ctl_open, 1),
    OPD(CM_LISTEN, struct uroce_cm_listen_req, emu_cm_ctl_listen, 1),
    OPD(CM_CONNECT, struct uroce_cm_connect_req, emu_cm_ctl_connect, 1),
    OPD(CM_ACCEPT, struct uroce_cm_accept_req, emu_cm_ctl_accept, 1),
    OPD(CM_REJECT, struct uroce_cm_reject_req, emu_cm_ctl_reject, 1),
    OPD(CM_DISCONNECT, struct uroce_handle_req, emu_cm_ctl_disconnect, 1),
    OPD(CM_DESTROY, struct uroce_handle_req, emu_cm_ctl_destroy, 1),
    OPD(CM_INIT_QP_ATTR, struct uroce_cm_init_qp_attr_req, emu_cm_ctl_init_qp_attr, 1),
    OPD(CM_MIGRATE, struct uroce_handle_req, emu_cm_ctl_migrate, 1),
    OPD(CM_JOIN_MCAST, struct uroce_cm_join_req, emu_cm_ctl_join_mcast, 1),
    OPD(OPEN_XRCD, struct uroce_open_xrcd_req, emu_xrcd_open, 0),
    OPD(CLOSE_XRCD, struct uroce_handle_req, emu_xrcd_close, 0),
    OPD(OPEN_QP, struct uroce_open_qp_req, emu_qp_open, 0),
    OPD(CM_NOTIFY, struct uroce_cm_notify_req, emu_cm_ctl_notify, 1),
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* ------------------------------------------------------------------------ */
/* Client I/O.                                                               */

static int send_reply(struct emu_ctx *ctx, struct emu_reply *rep)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * UROCE_MSG_MAX_FDS)];
	} cbuf;
	struct iovec iov = {.iov_base = rep->u.buf, .iov_len = rep->len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	/* A reply reveals too: memory first, and no read-ahead copy outlives it. */
	emu_dma_before_reveal(ctx->dev);
	rep->u.hdr.len = (uint32_t)rep->len;
	if (rep->nfds) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * rep->nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * rep->nfds);
		memcpy(CMSG_DATA(c), rep->fds, sizeof(int) * rep->nfds);
	}
	n = sendmsg(ctx->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	reply_close_fds(rep);
	if (n < 0)
		return -errno;
	return 0;
}

/* Handle one datagram. Returns 0, or -errno to disconnect the client. */
static int handle_request(struct emu_ctx *ctx, const uint8_t *buf, size_t n)
{
	struct uroce_msg_hdr hdr;
	struct emu_reply rep;
	const struct op_desc *d = NULL;
	int ret;

	if (n < sizeof(hdr))
		return -EPROTO;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.len != n)
		return -EPROTO;

	memset(&rep.u.hdr, 0, sizeof(rep.u.hdr));
	rep.u.hdr.op = hdr.op;
	rep.u.hdr.seq = hdr.seq;
	rep.len = sizeof(rep.u.hdr);
	rep.nfds = 0;

	if (hdr.op < NOPS && ops[hdr.op].handler)
		d = &ops[hdr.op];
	if (!d) {
		ret = -EOPNOTSUPP;
	} else if (n != d->req_len) {
		emu_dbg("client %d: %s request of %zu bytes, expected %zu", (int)ctx->pid, d->name,
			n, d->req_len);
		ret = -EINVAL;
	} else if (!ctx->opened && !d->before_open) {
		ret = -EPROTO;
	} else {
		/* Copy into an aligned buffer before handing it out. */
		union {
			struct uroce_msg_hdr h;
			uint64_t align;
			uint8_t b[UROCE_MSG_MAX_BYTES];
		} req;

		memcpy(req.b, buf, n);
		ret = d->handler(ctx, req.b, &rep);
		emu_dbg("client %d: %s -> %d", (int)ctx->pid, d->name, ret);
	}
	if (ret) {
		reply_close_fds(&rep);
		rep.len = sizeof(rep.u.hdr);
		rep.u.hdr.status = ret;
	}
	return send_reply(ctx, &rep);
}

static void on_client(uv_poll_t *h, int status, int events)
{
	struct emu_ctx *ctx = h->data;
	uint8_t buf[UROCE_MSG_MAX_BYTES];
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(int) * UROCE_MSG_MAX_FDS) +
		       CMSG_SPACE(sizeof(struct ucred))];
	} cbuf;

	if (status < 0 || (events & UV_DISCONNECT)) {
		emu_ctx_destroy(ctx);
		return;
	}
	for (;;) {
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf.b,
				    .msg_controllen = sizeof(cbuf.b)};
		ssize_t n = recvmsg(ctx->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		struct cmsghdr *c;
		int ret;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			emu_dbg("client %d: recv: %s", (int)ctx->pid, strerror(errno));
			emu_ctx_destroy(ctx);
			return;
		}
		if (n == 0) { /* orderly close: the process exited or closed */
			emu_ctx_destroy(ctx);
			return;
		}
		/* Who sent it (SO_PASSCRED: the kernel says, the sender cannot lie). */
		ctx->req_pid = 0;
		/* One descriptor is kept for the request (MAP_MR's memfd) and
		 * closed after it; any other is closed at once. */
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
				ctx->req_pid = uc.pid;
			}
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int nf = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				int fds[UROCE_MSG_MAX_FDS];

				if (nf > UROCE_MSG_MAX_FDS)
					nf = UROCE_MSG_MAX_FDS;
				memcpy(fds, CMSG_DATA(c), sizeof(int) * nf);
				for (int i = 0; i < nf; i++) {
					if (ctx->req_fd < 0)
						ctx->req_fd = fds[i];
					else
						close(fds[i]);
				}
			}
		}
		if (mh.msg_flags & MSG_TRUNC)
			ret = -EMSGSIZE;
		else
			ret = handle_request(ctx, buf, (size_t)n);
		if (ctx->req_fd >= 0) {
			close(ctx->req_fd);
			ctx->req_fd = -1;
		}
		if (ret) {
			emu_warn("client pid %d: %s, disconnecting", (int)ctx->pid, strerror(-ret));
			emu_ctx_destroy(ctx);
			return;
		}
	}
}

static void on_accept(uv_poll_t *h, int status, int events)
{
	struct emu_dev *dev = h->data;

	(void)events;
	if (status < 0)
		return;
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct emu_ctx *ctx;
		int fd = accept4(dev->ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0 && (errno == EMFILE || errno == ENFILE) && dev->ctl_spare_fd >= 0) {
			/*
			 * Out of descriptors: the connection would stay in the
			 * backlog and the socket readable, and the loop would
			 * spin on it. Give up the spare fd to accept and close
			 * it: the client sees the connection closed.
			 */
			int err = errno;

			close(dev->ctl_spare_fd);
			fd = accept4(dev->ctl_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				close(fd);
			dev->ctl_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (dev->ctl_fd_refusals++ % 1000 == 0)
				emu_warn("out of file descriptors (%s): refused a client "
					 "(%" PRIu64 " so far)",
					 strerror(err), dev->ctl_fd_refusals);
			if (fd < 0)
				return;
			continue;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				emu_warn("accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			emu_warn("SO_PEERCRED: %s", strerror(errno));
			close(fd);
			continue;
		}
		/* Same user or root: a NIC is not shared across users. */
		if (cred.uid != getuid() && cred.uid != 0) {
			emu_warn("refusing client pid %d of uid %u", (int)cred.pid,
				 (unsigned)cred.uid);
			close(fd);
			continue;
		}
		/* Inherited from the listener already; set again for sure. */
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &(int){1}, sizeof(int));
		ctx = emu_ctx_new(dev, fd, cred.pid, cred.uid);
		if (!ctx)
			continue;
		uv_poll_init(dev->loop, &ctx->poll, fd);
		ctx->poll.data = ctx;
		uv_poll_start(&ctx->poll, UV_READABLE | UV_DISCONNECT, on_client);
	}
}

int emu_ctl_listen(struct emu_dev *dev)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int err, fd;

	err =
	    common_rundir_sock_path(dev->rundir, dev->name, dev->sock_path, sizeof(dev->sock_path));
	if (err) {
		fprintf(stderr, "uroced: socket path %s/%s.sock is too long\n", dev->rundir,
			dev->name);
		return -1;
	}
	err = common_rundir_probe(dev->sock_path);
	if (err == 1) {
		fprintf(stderr, "uroced: device name '%s' is already in use in %s\n", dev->name,
			dev->rundir);
		return -1;
	}
	if (err == 0 && unlink(dev->sock_path) == 0)
		emu_info("removed stale socket %s", dev->sock_path);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "uroced: socket: %s\n", strerror(errno));
		return -1;
	}
	strcpy(sun.sun_path, dev->sock_path);
	/* Every request carries its sender's pid (mr.c: only the process
	 * that opened a context registers memory in it); accepted sockets
	 * inherit it, so even a client's first message has it. */
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &(int){1}, sizeof(int));
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr, "uroced: cannot bind %s: %s\n", dev->sock_path, strerror(errno));
		close(fd);
		return -1;
	}
	chmod(dev->sock_path, 0600);
	if (listen(fd, 128)) {
		fprintf(stderr, "uroced: listen: %s\n", strerror(errno));
		close(fd);
		unlink(dev->sock_path);
		return -1;
	}
	dev->ctl_fd = fd;
	dev->ctl_spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	uv_poll_init(dev->loop, &dev->ctl_poll, fd);
	dev->ctl_poll.data = dev;
	uv_poll_start(&dev->ctl_poll, UV_READABLE, on_accept);
	return 0;
}

void emu_ctl_close(struct emu_dev *dev)
{
	if (dev->ctl_fd < 0)
		return;
	/* Remove the name first so that no new client finds us. */
	unlink(dev->sock_path);
	uv_close((uv_handle_t *)&dev->ctl_poll, NULL);
	close(dev->ctl_fd); /* uv_close already took it out of epoll */
	dev->ctl_fd = -1;
	if (dev->ctl_spare_fd >= 0)
		close(dev->ctl_spare_fd);
	dev->ctl_spare_fd = -1;
}
