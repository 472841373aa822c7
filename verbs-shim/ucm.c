/* SPDX-License-Identifier: MIT */
/*
 * The kernel's user-space RDMA CM interface, /dev/infiniband/rdma_cm (the
 * rdma_ucm write() command ABI, version 4), given from user space, so that
 * rdma-core's own unmodified librdmacm.so.1 runs on uroce RNICs
 * (docs/cm.md). An event channel is an fd the application sees as that
 * character device: an epoll fd watching one event socket per uroce daemon
 * the channel uses, plus an eventfd for the events this file makes itself
 * (address and route resolution), so that it is readable iff an event is
 * pending. write() on it runs one command; the connection commands go to
 * the daemon of the id's device (CM_* ops in uroce/uapi.h), which speaks
 * the IB CM on the wire. Only the IP commands exist: AF_IB is refused as a
 * kernel without it refuses it, so librdmacm keeps to the IP path.
 * Multicast joins (JOIN_IP_MCAST, JOIN_MCAST, LEAVE_MCAST) are CM ids of
 * their own in the daemon, which joins the IP group on the RNIC's
 * interface. GET_OPTION has no handler (ENOSYS), as in the kernel.
 *
 * The libc hooks here (write, close, fstat, fstat64) pass every other fd
 * straight to the kernel; the open of the device path comes through
 * shim_ucm_open, which the open-family hooks call.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "shim.h"
#include "rundir.h"

#define UCM_DEV_PATH "/dev/infiniband/rdma_cm"
/* The misc device's numbers on Linux (major 10; the minor is dynamic there). */
#define UCM_DEV_MAJOR 10
#define UCM_DEV_MINOR 58

/* ------------------------------------------------------------------------ */
/* The command ABI (rdma-core kernel-headers/rdma/rdma_user_cm.h), restated. */

enum {
	UCM_CMD_CREATE_ID,
	UCM_CMD_DESTROY_ID,
	UCM_CMD_BIND_IP,
	UCM_CMD_RESOLVE_IP,
	UCM_CMD_RESOLVE_ROUTE,
	UCM_CMD_QUERY_ROUTE,
	UCM_CMD_CONNECT,
	UCM_CMD_LISTEN,
	UCM_CMD_ACCEPT,
	UCM_CMD_REJECT,
	UCM_CMD_DISCONNECT,
	UCM_CMD_INIT_QP_ATTR,
	UCM_CMD_GET_EVENT,
	UCM_CMD_GET_OPTION,
	UCM_CMD_SET_OPTION,
	UCM_CMD_NOTIFY,
	UCM_CMD_JOIN_IP_MCAST,
	UCM_CMD_LEAVE_MCAST,
	UCM_CMD_MIGRATE_ID,
	UCM_CMD_QUERY,
	UCM_CMD_BIND,
	UCM_CMD_RESOLVE_ADDR,
	UCM_CMD_JOIN_MCAST,
};

struct ucm_hdr {
	uint32_t cmd;
	uint16_t in;
	uint16_t out;
};

struct ucm_create_id {
	uint64_t uid;
	uint64_t response;
	uint16_t ps;
	uint8_t qp_type;
	uint8_t reserved[5];
};

struct ucm_destroy_id {
	uint64_t response;
	uint32_t id;
	uint32_t reserved;
};

struct ucm_bind_ip {
	uint64_t response;
	struct sockaddr_in6 addr;
	uint32_t id;
};

struct ucm_resolve_ip {
	struct sockaddr_in6 src_addr;
	struct sockaddr_in6 dst_addr;
	uint32_t id;
	uint32_t timeout_ms;
};

struct ucm_resolve_route {
	uint32_t id;
	uint32_t timeout_ms;
};

struct ucm_query {
	uint64_t response;
	uint32_t id;
	uint32_t option;
};

struct ucm_query_route_resp {
	uint64_t node_guid;
	struct ib_user_path_rec ib_route[2];
	struct sockaddr_in6 src_addr;
	struct sockaddr_in6 dst_addr;
	uint32_t num_paths;
	uint8_t port_num;
	uint8_t reserved[3];
	uint32_t ibdev_index;
	uint32_t reserved1;
};

struct ucm_conn_param {
	uint32_t qp_num;
	uint32_t qkey;
	uint8_t private_data[256];
	uint8_t private_data_len;
	uint8_t srq;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t valid;
};

struct ucm_ud_param {
	uint32_t qp_num;
	uint32_t qkey;
	struct ib_uverbs_ah_attr ah_attr;
	uint8_t private_data[256];
	uint8_t private_data_len;
	uint8_t reserved[7];
};

struct ucm_ece {
	uint32_t vendor_id;
	uint32_t attr_mod;
};

struct ucm_connect {
	struct ucm_conn_param conn_param;
	uint32_t id;
	uint32_t reserved;
	struct ucm_ece ece;
};

struct ucm_listen {
	uint32_t id;
	uint32_t backlog;
};

struct ucm_accept {
	uint64_t uid;
	struct ucm_conn_param conn_param;
	uint32_t id;
	uint32_t reserved;
	struct ucm_ece ece;
};

struct ucm_reject {
	uint32_t id;
	uint8_t private_data_len;
	uint8_t reason;
	uint8_t reserved[2];
	uint8_t private_data[256];
};

struct ucm_id_only {
	uint32_t id;
};

struct ucm_init_qp_attr {
	uint64_t response;
	uint32_t id;
	uint32_t qp_state;
};

struct ucm_get_event {
	uint64_t response;
};

struct ucm_event_resp {
	uint64_t uid;
	uint32_t id;
	uint32_t event;
	uint32_t status;
	union {
		struct ucm_conn_param conn;
		struct ucm_ud_param ud;
	} param;
	uint32_t reserved;
	struct ucm_ece ece;
};

struct ucm_migrate_id {
	uint64_t response;
	uint32_t id;
	uint32_t fd;
};

struct ucm_join_ip_mcast {
	uint64_t response;
	uint64_t uid;
	struct sockaddr_in6 addr;
	uint32_t id;
};

struct ucm_join_mcast {
	uint64_t response;
	uint64_t uid;
	uint32_t id;
	uint16_t addr_size;
	uint16_t join_flags;
	struct sockaddr_storage addr;
};

struct ucm_notify {
	uint32_t id;
	uint32_t event;
};

struct ucm_set_option {
	uint64_t optval;
	uint32_t id;
	uint32_t level;
	uint32_t optname;
	uint32_t optlen;
};

_Static_assert(sizeof(struct ucm_hdr) == 8, "rdma_ucm_cmd_hdr");
_Static_assert(sizeof(struct ucm_create_id) == 24, "rdma_ucm_create_id");
_Static_assert(sizeof(struct ucm_bind_ip) == 40, "rdma_ucm_bind_ip");
_Static_assert(sizeof(struct ucm_resolve_ip) == 64, "rdma_ucm_resolve_ip");
_Static_assert(sizeof(struct ucm_query_route_resp) == 208, "rdma_ucm_query_route_resp");
_Static_assert(sizeof(struct ucm_conn_param) == 272, "rdma_ucm_conn_param");
_Static_assert(sizeof(struct ucm_connect) == 288, "rdma_ucm_connect");
_Static_assert(sizeof(struct ucm_accept) == 296, "rdma_ucm_accept");
_Static_assert(sizeof(struct ucm_event_resp) == 336, "rdma_ucm_event_resp");
_Static_assert(sizeof(struct ucm_set_option) == 24, "rdma_ucm_set_option");
_Static_assert(sizeof(struct uroce_cm_conn_param) == sizeof(struct ucm_conn_param),
	       "the uapi's conn param carries the same fields");

#if __has_include(<rdma/rdma_user_cm.h>)
/* Where the kernel's header is installed (librdmacm-dev), hold the
 * restatement to it. */
#include <rdma/rdma_user_cm.h>
#define UCM_SAME(ours, theirs)                                                 \
	_Static_assert(sizeof(struct ours) == sizeof(struct theirs), #theirs); \
	_Static_assert(_Alignof(struct ours) == _Alignof(struct theirs), #theirs " alignment")
UCM_SAME(ucm_hdr, rdma_ucm_cmd_hdr);
UCM_SAME(ucm_create_id, rdma_ucm_create_id);
UCM_SAME(ucm_destroy_id, rdma_ucm_destroy_id);
UCM_SAME(ucm_bind_ip, rdma_ucm_bind_ip);
UCM_SAME(ucm_resolve_ip, rdma_ucm_resolve_ip);
UCM_SAME(ucm_resolve_route, rdma_ucm_resolve_route);
UCM_SAME(ucm_query, rdma_ucm_query);
UCM_SAME(ucm_query_route_resp, rdma_ucm_query_route_resp);
UCM_SAME(ucm_conn_param, rdma_ucm_conn_param);
UCM_SAME(ucm_ud_param, rdma_ucm_ud_param);
UCM_SAME(ucm_connect, rdma_ucm_connect);
UCM_SAME(ucm_listen, rdma_ucm_listen);
UCM_SAME(ucm_accept, rdma_ucm_accept);
UCM_SAME(ucm_reject, rdma_ucm_reject);
UCM_SAME(ucm_id_only, rdma_ucm_disconnect);
UCM_SAME(ucm_init_qp_attr, rdma_ucm_init_qp_attr);
UCM_SAME(ucm_get_event, rdma_ucm_get_event);
UCM_SAME(ucm_event_resp, rdma_ucm_event_resp);
UCM_SAME(ucm_set_option, rdma_ucm_set_option);
UCM_SAME(ucm_migrate_id, rdma_ucm_migrate_id);
UCM_SAME(ucm_join_ip_mcast, rdma_ucm_join_ip_mcast);
UCM_SAME(ucm_join_mcast, rdma_ucm_join_mcast);
_Static_assert(offsetof(struct ucm_event_resp, param) ==
		   offsetof(struct rdma_ucm_event_resp, param),
	       "event param");
_Static_assert(offsetof(struct ucm_query_route_resp, ibdev_index) ==
		   offsetof(struct rdma_ucm_query_route_resp, ibdev_index),
	       "ibdev_index");
_Static_assert((int)UCM_CMD_JOIN_MCAST == (int)RDMA_USER_CM_CMD_JOIN_MCAST, "command numbers");
_Static_assert(RDMA_USER_CM_ABI_VERSION == 4, "ABI version 4");
#undef UCM_SAME
#endif

/* Option levels and names (rdma_user_cm.h). */
enum { UCM_OPTION_ID = 0, UCM_OPTION_IB = 1 };
enum {
	UCM_OPTION_ID_TOS = 0,
	UCM_OPTION_ID_REUSEADDR = 1,
	UCM_OPTION_ID_AFONLY = 2,
	UCM_OPTION_ID_ACK_TIMEOUT = 3,
};
enum { UCM_OPTION_IB_PATH = 1 };

/* ------------------------------------------------------------------------ */
/* Channels, the daemons they use, ids.                                     */

struct ucm_dev {
	struct ucm_dev *next;
	char sock_path[108];
	uint64_t guid; /* network order */
	uint8_t gid[16];
	uint32_t active_mtu;
	int fd;	  /* CM_OPEN connection: commands */
	int evfd; /* its event socket, watched by the channel's epoll fd */
	int dead; /* the daemon went away */
	uint32_t seq;
	pthread_mutex_t lock; /* one exchange at a time on fd */
};

/* One listen of a wildcard id: a daemon and its handle. */
struct ucm_listen_on {
	struct ucm_dev *dev;
	uint32_t handle;
};

#define UCM_MAX_DEVS 64

struct ucm_id {
	struct ucm_id *next;
	uint32_t handle; /* what librdmacm knows it by */
	uint64_t uid;
	uint16_t ps;
	uint8_t qp_type;
	int bound, addr_resolved, route_resolved, listening;
	struct sockaddr_storage src, dst;
	struct ucm_dev *dev; /* the RNIC it lives on, once known */
	uint32_t dh;	     /* its daemon-side id (0: none yet) */
	struct ucm_listen_on *ls;
	int nls;
	uint32_t events_reported;
	uint8_t tos, ack_timeout;
	/* A route set by RDMA_OPTION_IB_PATH (path_set): the record's MTU
	 * (already no more than the port's), SL, rate and packet lifetime;
	 * its traffic class went into tos. */
	int path_set;
	uint8_t path_mtu, path_sl, path_rate, path_life;
	/* An id of a connection request (the passive side): its route is the
	 * REQ's primary path, which the daemon's CM holds (passive_route). */
	int passive;
	int reuseaddr;
	/* RDMA_OPTION_ID_AFONLY, when set (afonly_set): a wildcard listener
	 * takes requests of its own family only. Unset, as in the kernel's
	 * rdma_bind_addr: on for 0.0.0.0, off for [::] (bindv6only 0). */
	int afonly, afonly_set;
};

/* A multicast join of an id (rdma_join_multicast): a CM id of its own in
 * the daemon (dh), known to librdmacm by handle and uid. */
struct ucm_mc {
	struct ucm_mc *next;
	uint32_t handle;
	uint64_t uid;
	struct ucm_id *id;
	struct ucm_dev *dev;
	uint32_t dh;
	uint32_t events_reported;
};

struct ucm_local_ev {
	struct ucm_local_ev *next;
	struct uroce_cm_event ev; /* handle: the ucm_id's */
};

struct ucm_chan {
	struct ucm_chan *next;
	int fd;	 /* what the application sees: an epoll fd */
	int efd; /* eventfd: readable iff the local queue has events */
	pthread_mutex_t lock;
	struct ucm_dev *devs;
	struct ucm_id *ids;
	struct ucm_mc *mcs;
	struct ucm_local_ev *lq, **lq_tail;
	/* Under ucm_lock: calls in progress on the channel, and whether the
	 * application closed it. As with a kernel file, a close while another
	 * thread waits in GET_EVENT frees the channel only when that call
	 * returns (it goes on waiting); new calls on the fd fail with EBADF. */
	int users;
	int closed;
};

static pthread_mutex_t ucm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ucm_chan *ucm_chans;
static int ucm_nchans; /* atomic: the hooks' fast path */
/* Id handles are the process's, as the kernel's are the system's: an id
 * keeps its handle when it moves to another channel (MIGRATE_ID). */
static uint32_t ucm_next_handle; /* atomic */

/* One byte per fd below this: set while the fd is a channel, so that the
 * hooks pass every other fd on with one load (doorbells are write()s). */
#define UCM_FD_MARKS 65536
static uint8_t ucm_fd_mark[UCM_FD_MARKS]; /* atomic */

static struct ucm_chan *ucm_chan_of(int fd)
{
	struct ucm_chan *c;

	if (fd < 0 || !__atomic_load_n(&ucm_nchans, __ATOMIC_ACQUIRE))
		return NULL;
	if (fd < UCM_FD_MARKS && !__atomic_load_n(&ucm_fd_mark[fd], __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&ucm_lock);
	for (c = ucm_chans; c && c->fd != fd; c = c->next)
		;
	pthread_mutex_unlock(&ucm_lock);
	return c;
}

static int ucm_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

/* The channel of fd with a reference (ucm_chan_put), or NULL. */
static struct ucm_chan *ucm_chan_get(int fd)
{
	struct ucm_chan *c;

	if (!ucm_chan_of(fd))
		return NULL;
	pthread_mutex_lock(&ucm_lock);
	for (c = ucm_chans; c && c->fd != fd; c = c->next)
		;
	if (c)
		c->users++;
	pthread_mutex_unlock(&ucm_lock);
	return c;
}

static void ucm_chan_free(struct ucm_chan *c);

static void ucm_chan_put(struct ucm_chan *c)
{
	int last;

	pthread_mutex_lock(&ucm_lock);
	last = --c->users == 0 && c->closed;
	pthread_mutex_unlock(&ucm_lock);
	if (last)
		ucm_chan_free(c);
}

static int gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t z[16];

	return !memcmp(gid, z, 16);
}

/* A socket address as a GID and port. 0, or -EAFNOSUPPORT. */
static int sa_to_gid(const struct sockaddr_storage *ss, uint8_t gid[16], uint16_t *port,
		     uint8_t *ipv)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		memset(gid, 0, 16);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &s->sin_addr, 4);
		if (!s->sin_addr.s_addr)
			memset(gid, 0, 16); /* the wildcard */
		*port = ntohs(s->sin_port);
		*ipv = 4;
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;

		memcpy(gid, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		*ipv = 6;
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* The size of the sockaddr of ss's family (AF_INET or AF_INET6). */
static socklen_t sa_size(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

static void sa_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static uint16_t sa_port(const struct sockaddr_storage *ss)
{
	uint8_t gid[16], ipv;
	uint16_t port = 0;

	sa_to_gid(ss, gid, &port, &ipv);
	return port;
}

/* An endpoint from the daemon as a socket address of the family it is. */
static void addr_to_sa(const struct uroce_cm_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->ipv == 4) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, a->gid + 12, 4);
		s->sin_port = htons(a->port);
	} else {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, a->gid, 16);
		s->sin6_port = htons(a->port);
	}
}

static void sa_to_addr(const struct sockaddr_storage *ss, struct uroce_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	sa_to_gid(ss, a->gid, &a->port, &a->ipv);
}

/* An ephemeral port, as the kernel's would be (ip_local_port_range). */
static uint16_t ucm_ephemeral_port(void)
{
	uint16_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint16_t)rand();
	return (uint16_t)(32768 + v % (60999 - 32768 + 1));
}

/* A uroce RNIC: the daemon's socket, GUID and address. */
struct ucm_rnic {
	char sock_path[108];
	uint64_t guid;
	uint8_t gid[16];
	uint32_t active_mtu;
};

/* The uroce RNICs now running (at most max). */
static int ucm_rnics(struct ucm_rnic *out, int max)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int n = 0;

	if (!list)
		return 0;
	for (int i = 0; list[i] && n < max; i++) {
		struct shim_device *d = SHIM_CONTAINER_OF(list[i], struct shim_device, dev);
		struct ucm_rnic *r = &out[n];
		struct in_addr a4;

		memset(r, 0, sizeof(*r));
		if (inet_pton(AF_INET, d->addr, &a4) == 1) {
			r->gid[10] = r->gid[11] = 0xff;
			memcpy(r->gid + 12, &a4, 4);
		} else if (inet_pton(AF_INET6, d->addr, r->gid) != 1) {
			continue;
		}
		snprintf(r->sock_path, sizeof(r->sock_path), "%s", d->sock_path);
		r->guid = d->guid;
		r->active_mtu = d->active_mtu;
		n++;
	}
	ibv_free_device_list(list);
	return n;
}

static int ucm_rnic_by_gid(const uint8_t gid[16], struct ucm_rnic *out)
{
	struct ucm_rnic r[UCM_MAX_DEVS];
	int n = ucm_rnics(r, UCM_MAX_DEVS);

	for (int i = 0; i < n; i++) {
		if (!memcmp(r[i].gid, gid, 16)) {
			*out = r[i];
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

/* The channel's connection to an RNIC's daemon, opened (CM_OPEN) on first use.
 * Under the channel's lock. */
static struct ucm_dev *ucm_dev_get(struct ucm_chan *c, const struct ucm_rnic *r, int *err)
{
	struct uroce_msg_hdr req = {.op = UROCE_OP_CM_OPEN};
	struct uroce_cm_open_resp resp;
	struct epoll_event ee = {.events = EPOLLIN};
	struct ucm_dev *d;
	int fds[1], nfds = 0, fd, e;

	for (d = c->devs; d; d = d->next)
		if (!strcmp(d->sock_path, r->sock_path) && !d->dead)
			return d;
	fd = common_rundir_connect(r->sock_path);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	e = shim_exchange(fd, 1, &req, sizeof(req), &resp, sizeof(resp), fds, 1, &nfds);
	if (!e && nfds != 1)
		e = -EPROTO;
	if (e) {
		ucm_sys_close(fd);
		*err = e;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		ucm_sys_close(fds[0]);
		ucm_sys_close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(d->sock_path, sizeof(d->sock_path), "%s", r->sock_path);
	d->guid = r->guid;
	memcpy(d->gid, r->gid, 16);
	d->active_mtu = r->active_mtu;
	d->fd = fd;
	d->evfd = fds[0];
	d->seq = 1;
	pthread_mutex_init(&d->lock, NULL);
	ee.data.ptr = d;
	if (epoll_ctl(c->fd, EPOLL_CTL_ADD, d->evfd, &ee)) {
		*err = -errno;
		ucm_sys_close(d->evfd);
		ucm_sys_close(fd);
		free(d);
		return NULL;
	}
	d->next = c->devs;
	c->devs = d;
	return d;
}

static int ucm_call(struct ucm_dev *d, void *req, size_t req_len, void *resp, size_t resp_len)
{
	int ret;

	if (d->dead)
		return -ENODEV;
	pthread_mutex_lock(&d->lock);
	ret = shim_exchange(d->fd, ++d->seq, req, req_len, resp, resp_len, NULL, 0, NULL);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

static int ucm_call_handle(struct ucm_dev *d, uint32_t op, uint32_t handle)
{
	struct uroce_handle_req req = {.hdr.op = op, .handle = handle};
	struct uroce_msg_hdr resp;

	return ucm_call(d, &req, sizeof(req), &resp, sizeof(resp));
}

static struct ucm_id *ucm_id_find(struct ucm_chan *c, uint32_t handle)
{
	struct ucm_id *id;

	for (id = c->ids; id && id->handle != handle; id = id->next)
		;
	return id;
}

static struct ucm_id *ucm_id_new(struct ucm_chan *c)
{
	struct ucm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	do
		id->handle = __atomic_add_fetch(&ucm_next_handle, 1, __ATOMIC_RELAXED);
	while (!id->handle);
	id->next = c->ids;
	c->ids = id;
	return id;
}

static void ucm_local_event(struct ucm_chan *c, struct ucm_id *id, uint32_t event, int32_t status)
{
	struct ucm_local_ev *e = calloc(1, sizeof(*e));
	static const uint64_t one = 1;

	if (!e)
		return;
	e->ev.handle = id->handle;
	e->ev.event = event;
	e->ev.status = status;
	*c->lq_tail = e;
	c->lq_tail = &e->next;
	if (syscall(SYS_write, c->efd, &one, sizeof(one)) < 0)
		return; /* a full counter is readable all the same */
}

/* ------------------------------------------------------------------------ */
/* Commands.                                                                 */

static int cmd_create_id(struct ucm_chan *c, const void *in)
{
	const struct ucm_create_id *cmd = in;
	uint32_t *resp = (uint32_t *)(uintptr_t)cmd->response;
	struct ucm_id *id;

	switch (cmd->ps) {
	case UROCE_CM_PS_TCP:
	case UROCE_CM_PS_UDP:
	case UROCE_CM_PS_IPOIB:
	case UROCE_CM_PS_IB:
		break;
	default:
		return -EINVAL;
	}
	id = ucm_id_new(c);
	if (!id)
		return -ENOMEM;
	id->uid = cmd->uid;
	id->ps = cmd->ps;
	id->qp_type = cmd->qp_type;
	*resp = id->handle;
	return 0;
}

static void ucm_id_unlink(struct ucm_chan *c, struct ucm_id *id)
{
	struct ucm_id **pp;
	struct ucm_local_ev **ep;

	for (pp = &c->ids; *pp; pp = &(*pp)->next) {
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	}
	/* Its events still queued here go with it. */
	for (ep = &c->lq; *ep;) {
		if ((*ep)->ev.handle == id->handle) {
			struct ucm_local_ev *e = *ep;

			*ep = e->next;
			free(e);
		} else {
			ep = &(*ep)->next;
		}
	}
	c->lq_tail = &c->lq;
	while (*c->lq_tail)
		c->lq_tail = &(*c->lq_tail)->next;
}

/* Leave (CM_DESTROY in the daemon) and forget the channel's joins of id
 * (NULL: all of them). */
static void ucm_mc_release(struct ucm_chan *c, struct ucm_id *id)
{
	for (struct ucm_mc **pp = &c->mcs; *pp;) {
		struct ucm_mc *mc = *pp;

		if (id && mc->id != id) {
			pp = &mc->next;
			continue;
		}
		*pp = mc->next;
		if (id)
			ucm_call_handle(mc->dev, UROCE_OP_CM_DESTROY, mc->dh);
		free(mc);
	}
}

static void ucm_id_release(struct ucm_id *id)
{
	if (id->dh && id->dev)
		ucm_call_handle(id->dev, UROCE_OP_CM_DESTROY, id->dh);
	for (int i = 0; i < id->nls; i++)
		ucm_call_handle(id->ls[i].dev, UROCE_OP_CM_DESTROY, id->ls[i].handle);
	free(id->ls);
	free(id);
}

static int cmd_destroy_id(struct ucm_chan *c, const void *in)
{
	const struct ucm_destroy_id *cmd = in;
	uint32_t *resp = (uint32_t *)(uintptr_t)cmd->response;
	struct ucm_id *id = ucm_id_find(c, cmd->id);

	if (!id)
		return -EINVAL;
	*resp = id->events_reported;
	ucm_mc_release(c, id);
	ucm_id_unlink(c, id);
	ucm_id_release(id);
	return 0;
}

/* Copy an address of the ABI's sockaddr_in6-sized field, checking its family. */
static int take_addr(const struct sockaddr_in6 *in, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (in->sin6_family == AF_INET)
		memcpy(out, in, sizeof(struct sockaddr_in));
	else if (in->sin6_family == AF_INET6)
		memcpy(out, in, sizeof(struct sockaddr_in6));
	else
		return -EAFNOSUPPORT;
	return 0;
}

/*
 * Why no RNIC has the address, as the kernel's RDMA CM tells: an address of
 * this host (one a UDP socket may bind to) that no RDMA device holds is
 * ENODEV (rdma_bind_addr finds its interface, then no device port with that
 * GID), any other EADDRNOTAVAIL (no interface has it).
 */
static int ucm_no_rnic_errno(const struct sockaddr_storage *ss)
{
	struct sockaddr_storage a = *ss;
	int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int local;

	if (fd < 0)
		return -EADDRNOTAVAIL;
	sa_set_port(&a, 0);
	local = bind(fd, (struct sockaddr *)&a, sa_size(&a)) == 0;
	ucm_sys_close(fd);
	return local ? -ENODEV : -EADDRNOTAVAIL;
}

/* Bind id to a source address: a uroce RNIC's own, or the wildcard. */
static int ucm_bind(struct ucm_chan *c, struct ucm_id *id, const struct sockaddr_storage *ss)
{
	struct ucm_rnic r;
	uint8_t gid[16], ipv;
	uint16_t port;
	int err = sa_to_gid(ss, gid, &port, &ipv);

	if (err)
		return err;
	id->dev = NULL;
	if (!gid_is_zero(gid)) {
		if (ucm_rnic_by_gid(gid, &r))
			return ucm_no_rnic_errno(ss);
		id->dev = ucm_dev_get(c, &r, &err);
		if (!id->dev)
			return err;
	} else {
		/*
		 * The wildcard: connect to every RNIC's daemon now, so that
		 * rdma_listen is one request per RNIC. Programs (qperf) send
		 * their port to the peer right after binding, and the peer's
		 * REQ must find the listener.
		 */
		struct ucm_rnic all[UCM_MAX_DEVS];
		int n = ucm_rnics(all, UCM_MAX_DEVS);

		for (int i = 0; i < n; i++)
			ucm_dev_get(c, &all[i], &err);
	}
	id->src = *ss;
	if (!port)
		sa_set_port(&id->src, ucm_ephemeral_port());
	id->bound = 1;
	return 0;
}

static int cmd_bind_ip(struct ucm_chan *c, const void *in)
{
	const struct ucm_bind_ip *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct sockaddr_storage ss;
	int err;

	if (!id)
		return -EINVAL;
	if (id->bound || id->listening)
		return -EINVAL;
	err = take_addr(&cmd->addr, &ss);
	return err ? err : ucm_bind(c, id, &ss);
}

/* The source address the kernel's routing picks for dst (a connected UDP socket). */
static int route_source(const struct sockaddr_storage *dst, struct sockaddr_storage *src)
{
	struct sockaddr_storage d = *dst;
	socklen_t len = sizeof(*src);
	int fd = socket(d.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (!sa_port(&d))
		sa_set_port(&d, 4791);
	if (connect(fd, (struct sockaddr *)&d, sa_size(&d)) ||
	    getsockname(fd, (struct sockaddr *)src, &len))
		err = -errno;
	ucm_sys_close(fd);
	return err;
}

/*
 * Address resolution: the source RNIC is the one the id is bound to, else
 * the one whose address is src, else (nothing given) the destination's own
 * RNIC when dst is a local uroce address (client and server on one RNIC),
 * else the RNIC whose address the kernel's route to dst starts from.
 * Nothing found: ADDR_ERROR, as for a destination a real RNIC cannot reach.
 */
static int cmd_resolve_ip(struct ucm_chan *c, const void *in)
{
	const struct ucm_resolve_ip *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct sockaddr_storage dst, src;
	uint8_t gid[16], ipv;
	uint16_t port;
	struct ucm_rnic r;
	int err, found = 0;

	if (!id)
		return -EINVAL;
	if (id->listening || id->dh)
		return -EINVAL;
	err = take_addr(&cmd->dst_addr, &dst);
	if (err)
		return err;
	err = sa_to_gid(&dst, gid, &port, &ipv);
	if (err)
		return err;
	if (gid_is_zero(gid))
		return -EINVAL;
	if (!id->bound &&
	    (cmd->src_addr.sin6_family == AF_INET || cmd->src_addr.sin6_family == AF_INET6)) {
		err = take_addr(&cmd->src_addr, &src);
		if (!err)
			err = ucm_bind(c, id, &src);
		if (err)
			return err;
	}
	id->dst = dst;
	if (id->dev) {
		found = 1;
	} else {
		uint16_t keep = id->bound ? sa_port(&id->src) : 0;

		if (!ucm_rnic_by_gid(gid, &r)) {
			found = 1; /* loopback to an RNIC of this host */
		} else if (!route_source(&dst, &src)) {
			uint8_t sg[16], sipv;
			uint16_t sp;

			found = !sa_to_gid(&src, sg, &sp, &sipv) && !ucm_rnic_by_gid(sg, &r);
		}
		if (found) {
			id->dev = ucm_dev_get(c, &r, &err);
			if (!id->dev)
				return err;
			memset(&id->src, 0, sizeof(id->src));
			if (ipv == 4) {
				struct sockaddr_in *s = (void *)&id->src;

				s->sin_family = AF_INET;
				memcpy(&s->sin_addr, r.gid + 12, 4);
			} else {
				struct sockaddr_in6 *s = (void *)&id->src;

				s->sin6_family = AF_INET6;
				memcpy(&s->sin6_addr, r.gid, 16);
			}
			sa_set_port(&id->src, keep ? keep : ucm_ephemeral_port());
			id->bound = 1;
		}
	}
	if (!found) {
		ucm_local_event(c, id, UROCE_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH);
		return 0;
	}
	id->addr_resolved = 1;
	ucm_local_event(c, id, UROCE_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

static int cmd_resolve_route(struct ucm_chan *c, const void *in)
{
	const struct ucm_resolve_route *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);

	if (!id || !id->addr_resolved || id->dh)
		return -EINVAL;
	/* RoCE: the path is the GIDs of the two addresses (no SA to ask). */
	id->route_resolved = 1;
	ucm_local_event(c, id, UROCE_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

/*
 * The passive side's route is the ConnectRequest's primary path, as the
 * kernel's CM gives the new id (cma_ib_new_conn_id): its MTU, SL, rate and
 * traffic class, which the daemon's CM took from the REQ and gives the QP's
 * RTR attributes. Asked once and kept (path_set), so the route stays what
 * the REQ said after the connection is gone. A UD id (SIDR) has no path to
 * take; a daemon that cannot answer leaves the RNIC's defaults.
 */
static void passive_route(struct ucm_id *id)
{
	struct uroce_cm_init_qp_attr_req req = {
	    .hdr.op = UROCE_OP_CM_INIT_QP_ATTR, .handle = id->dh, .qp_state = UROCE_QPS_RTR};
	struct uroce_cm_init_qp_attr_resp r;

	if (!id->passive || id->path_set || id->qp_type == IBV_QPT_UD || !id->dh ||
	    ucm_call(id->dev, &req, sizeof(req), &r, sizeof(r)))
		return;
	if (r.attr.mask & UROCE_QP_PATH_MTU)
		id->path_mtu = r.attr.path_mtu;
	else
		id->path_mtu = (uint8_t)id->dev->active_mtu;
	id->path_sl = r.attr.sl;
	id->path_rate = r.attr.static_rate;
	id->tos = r.attr.traffic_class;
	id->path_set = 1;
}

static int cmd_query_route(struct ucm_chan *c, const void *in, uint16_t out)
{
	const struct ucm_query *cmd = in;
	struct ucm_query_route_resp *resp = (void *)(uintptr_t)cmd->response;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct ib_user_path_rec *p;
	uint8_t gid[16], ipv;
	uint16_t port;

	if (!id)
		return -EINVAL;
	if (out < sizeof(*resp))
		return -ENOSPC;
	memset(resp, 0, sizeof(*resp));
	resp->ibdev_index = (uint32_t)-1; /* librdmacm then matches by GUID */
	memcpy(&resp->src_addr, &id->src, sizeof(resp->src_addr));
	memcpy(&resp->dst_addr, &id->dst, sizeof(resp->dst_addr));
	if (!id->dev)
		return 0;
	passive_route(id);
	resp->node_guid = id->dev->guid;
	resp->port_num = UROCE_PORT_NUM;
	p = &resp->ib_route[0];
	memcpy(p->sgid, id->dev->gid, 16);
	if (id->dst.ss_family && !sa_to_gid(&id->dst, gid, &port, &ipv))
		memcpy(p->dgid, gid, 16);
	p->pkey = htobe16(UROCE_DEFAULT_PKEY);
	if (id->route_resolved) {
		resp->num_paths = 1;
		p->mtu = id->path_set ? id->path_mtu : id->dev->active_mtu;
		p->mtu_selector = 2; /* exactly */
		p->hop_limit = 64;
		p->traffic_class = id->tos;
		p->reversible = 1;
		p->numb_path = 1;
		p->sl = id->path_set ? id->path_sl : 0;
		p->rate_selector = 2;
		p->rate = id->path_set && id->path_rate ? id->path_rate : 3; /* 10 Gb/s */
		p->packet_life_time_selector = 2;
		p->packet_life_time = id->path_set && id->path_life ? id->path_life : 18;
	}
	return 0;
}

static void conn_param_in(const struct ucm_conn_param *in, struct uroce_cm_conn_param *out)
{
	memset(out, 0, sizeof(*out));
	out->qp_num = in->qp_num;
	out->qkey = in->qkey;
	memcpy(out->private_data, in->private_data, sizeof(out->private_data));
	out->private_data_len = in->private_data_len;
	out->srq = in->srq;
	out->responder_resources = in->responder_resources;
	out->initiator_depth = in->initiator_depth;
	out->flow_control = in->flow_control;
	out->retry_count = in->retry_count;
	out->rnr_retry_count = in->rnr_retry_count;
}

static int cmd_connect(struct ucm_chan *c, const void *in)
{
	const struct ucm_connect *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct uroce_cm_connect_req req;
	struct uroce_handle_resp resp;
	int err;

	if (!id || !id->route_resolved || id->dh || !id->dev)
		return -EINVAL;
	if (id->qp_type != IBV_QPT_RC && id->qp_type != IBV_QPT_UC && id->qp_type != IBV_QPT_UD &&
	    id->qp_type != IBV_QPT_XRC_SEND)
		return -EOPNOTSUPP;
	memset(&req, 0, sizeof(req));
	req.hdr.op = UROCE_OP_CM_CONNECT;
	sa_to_addr(&id->src, &req.src);
	sa_to_addr(&id->dst, &req.dst);
	req.ps = id->ps;
	req.qp_type = id->qp_type;
	req.tos = id->tos;
	req.ack_timeout = id->ack_timeout;
	if (id->path_set) {
		req.path_mtu = id->path_mtu;
		req.path_sl = id->path_sl;
		req.path_rate = id->path_rate;
	}
	conn_param_in(&cmd->conn_param, &req.p);
	err = ucm_call(id->dev, &req, sizeof(req), &resp, sizeof(resp));
	if (err)
		return err;
	id->dh = resp.handle;
	return 0;
}

static int ucm_listen_one(struct ucm_id *id, struct ucm_dev *d, int wildcard, uint32_t backlog,
			  uint32_t *handle)
{
	struct uroce_cm_listen_req req;
	struct uroce_handle_resp resp;
	int err;

	memset(&req, 0, sizeof(req));
	req.hdr.op = UROCE_OP_CM_LISTEN;
	sa_to_addr(&id->src, &req.addr);
	if (!wildcard)
		memcpy(req.addr.gid, d->gid, 16);
	req.ps = id->ps;
	req.wildcard = (uint8_t)wildcard;
	req.reuseaddr = (uint8_t)id->reuseaddr;
	req.backlog = backlog;
	req.qp_type = id->qp_type;
	err = ucm_call(d, &req, sizeof(req), &resp, sizeof(resp));
	if (!err)
		*handle = resp.handle;
	return err;
}

/* Does id's wildcard listen leave d alone, an RNIC of the other family
 * (IPv4 RNICs: IPv4-mapped GIDs) while the id takes its own family only? */
static int ucm_afonly_skips(const struct ucm_id *id, const struct ucm_dev *d)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	int v4 = !memcmp(d->gid, v4mapped, 12);
	int only = id->afonly_set ? id->afonly : id->src.ss_family == AF_INET;

	return only && (id->src.ss_family == AF_INET6 ? v4 : !v4);
}

static int cmd_listen(struct ucm_chan *c, const void *in)
{
	const struct ucm_listen *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	int n, skipped, err = 0;

	if (!id || id->listening || id->addr_resolved || id->dh)
		return -EINVAL;
	if (!id->bound) { /* as the kernel: bind to the IPv4 wildcard first */
		struct sockaddr_storage any;

		memset(&any, 0, sizeof(any));
		any.ss_family = AF_INET;
		err = ucm_bind(c, id, &any);
		if (err)
			return err;
	}
	if (id->dev) {
		err = ucm_listen_one(id, id->dev, 0, cmd->backlog, &id->dh);
		if (!err)
			id->listening = 1;
		return err;
	}
	/* A wildcard: listen on every RNIC (the channel connected to each at
	 * bind); an IPv6 one with AFONLY set on the IPv6 RNICs only. */
	n = skipped = 0;
	for (struct ucm_dev *d = c->devs; d; d = d->next) {
		skipped += !d->dead && ucm_afonly_skips(id, d);
		n += !d->dead && !ucm_afonly_skips(id, d);
	}
	if (!n && skipped) { /* no RNIC of its family: it listens, and nothing reaches it */
		id->listening = 1;
		return 0;
	}
	if (!n)
		return -ENODEV;
	id->ls = calloc((size_t)n, sizeof(*id->ls));
	if (!id->ls)
		return -ENOMEM;
	for (struct ucm_dev *d = c->devs; d && !err && id->nls < n; d = d->next) {
		if (d->dead || ucm_afonly_skips(id, d))
			continue;
		err = ucm_listen_one(id, d, 1, cmd->backlog, &id->ls[id->nls].handle);
		if (!err)
			id->ls[id->nls++].dev = d;
	}
	if (err) {
		for (int i = 0; i < id->nls; i++)
			ucm_call_handle(id->ls[i].dev, UROCE_OP_CM_DESTROY, id->ls[i].handle);
		free(id->ls);
		id->ls = NULL;
		id->nls = 0;
		return err;
	}
	id->listening = 1;
	return 0;
}

static int cmd_accept(struct ucm_chan *c, const void *in)
{
	const struct ucm_accept *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct uroce_cm_accept_req req;
	struct uroce_msg_hdr resp;
	int err;

	if (!id || !id->dh || id->listening)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.hdr.op = UROCE_OP_CM_ACCEPT;
	req.handle = id->dh;
	conn_param_in(&cmd->conn_param, &req.p);
	err = ucm_call(id->dev, &req, sizeof(req), &resp, sizeof(resp));
	if (!err && cmd->uid)
		id->uid = cmd->uid;
	return err;
}

static int cmd_reject(struct ucm_chan *c, const void *in)
{
	const struct ucm_reject *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct uroce_cm_reject_req req;
	struct uroce_msg_hdr resp;

	if (!id || !id->dh || id->listening)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.hdr.op = UROCE_OP_CM_REJECT;
	req.handle = id->dh;
	req.reason = cmd->reason;
	req.private_data_len = cmd->private_data_len;
	memcpy(req.private_data, cmd->private_data, sizeof(req.private_data));
	return ucm_call(id->dev, &req, sizeof(req), &resp, sizeof(resp));
}

static int cmd_disconnect(struct ucm_chan *c, const void *in)
{
	const struct ucm_id_only *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);

	if (!id || !id->dh || id->listening)
		return -EINVAL;
	return ucm_call_handle(id->dev, UROCE_OP_CM_DISCONNECT, id->dh);
}

/* rdma_notify: an id without a connection in the daemon has nothing to tell
 * (EINVAL, as the kernel's ucma without a device or an IB CM id). */
static int cmd_notify(struct ucm_chan *c, const void *in)
{
	const struct ucm_notify *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct uroce_cm_notify_req req;
	struct uroce_msg_hdr resp;

	if (!id)
		return -ENOENT;
	if (!id->dev || !id->dh || id->listening)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.hdr.op = UROCE_OP_CM_NOTIFY;
	req.handle = id->dh;
	req.event = cmd->event;
	return ucm_call(id->dev, &req, sizeof(req), &resp, sizeof(resp));
}

static void qp_attr_out(const struct uroce_cm_qp_attr *a, struct ib_uverbs_qp_attr *o)
{
	memset(o, 0, sizeof(*o));
	o->qp_attr_mask = a->mask;
	o->qp_state = a->qp_state;
	o->path_mtu = a->path_mtu;
	o->qkey = a->qkey;
	o->rq_psn = a->rq_psn;
	o->sq_psn = a->sq_psn;
	o->dest_qp_num = a->dest_qp_num;
	o->qp_access_flags = a->qp_access_flags;
	memcpy(o->ah_attr.grh.dgid, a->dgid, 16);
	o->ah_attr.grh.flow_label = a->flow_label;
	o->ah_attr.grh.sgid_index = a->sgid_index;
	o->ah_attr.grh.hop_limit = a->hop_limit;
	o->ah_attr.grh.traffic_class = a->traffic_class;
	o->ah_attr.is_global = a->is_global;
	o->ah_attr.sl = a->sl;
	o->ah_attr.static_rate = a->static_rate;
	o->ah_attr.port_num = a->port_num;
	o->pkey_index = a->pkey_index;
	o->max_rd_atomic = a->max_rd_atomic;
	o->max_dest_rd_atomic = a->max_dest_rd_atomic;
	o->min_rnr_timer = a->min_rnr_timer;
	o->port_num = a->port_num;
	o->timeout = a->timeout;
	o->retry_cnt = a->retry_cnt;
	o->rnr_retry = a->rnr_retry;
}

static int cmd_init_qp_attr(struct ucm_chan *c, const void *in, uint16_t out)
{
	const struct ucm_init_qp_attr *cmd = in;
	struct ib_uverbs_qp_attr *resp = (void *)(uintptr_t)cmd->response;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	struct uroce_cm_qp_attr a;

	if (!id || !id->dev)
		return -EINVAL;
	if (out < sizeof(*resp))
		return -ENOSPC;
	if (id->dh && !id->listening) {
		struct uroce_cm_init_qp_attr_req req = {.hdr.op = UROCE_OP_CM_INIT_QP_ATTR,
							.handle = id->dh,
							.qp_state = cmd->qp_state};
		struct uroce_cm_init_qp_attr_resp r;
		int err = ucm_call(id->dev, &req, sizeof(req), &r, sizeof(r));

		if (err)
			return err;
		a = r.attr;
	} else {
		/* Before any connection: only the INIT attributes (as the
		 * kernel's rdma_cm gives them: no remote access yet). */
		if (cmd->qp_state != UROCE_QPS_INIT)
			return -EINVAL;
		memset(&a, 0, sizeof(a));
		a.qp_state = UROCE_QPS_INIT;
		a.mask = UROCE_QP_STATE | UROCE_QP_PKEY_INDEX | UROCE_QP_PORT;
		a.port_num = UROCE_PORT_NUM;
		if (id->qp_type == IBV_QPT_UD) {
			a.mask |= UROCE_QP_QKEY;
			a.qkey = 0x01234567; /* RDMA_UDP_QKEY */
		} else {
			a.mask |= UROCE_QP_ACCESS_FLAGS;
		}
	}
	qp_attr_out(&a, resp);
	return 0;
}

/*
 * rdma_join_multicast: the id must have its RNIC (bound or address
 * resolved) and be a UD id, as the kernel's RDMA CM requires; the daemon
 * joins the group on the RNIC's interface and queues MULTICAST_JOIN, which
 * librdmacm answers by attaching the id's QP (ibv_attach_mcast).
 */
static int ucm_join(struct ucm_chan *c, uint32_t idh, uint64_t uid,
		    const struct sockaddr_storage *ss, uint16_t flags, uint32_t *resp)
{
	struct uroce_cm_join_req req = {.hdr.op = UROCE_OP_CM_JOIN_MCAST, .join_flags = flags};
	struct uroce_handle_resp r;
	struct ucm_id *id = ucm_id_find(c, idh);
	struct ucm_mc *mc;
	uint16_t port;
	int err;

	if (!id || !id->dev || id->qp_type != IBV_QPT_UD)
		return -EINVAL;
	if (flags > UROCE_CM_JOIN_SENDONLY)
		return -EINVAL;
	err = sa_to_gid(ss, req.addr.gid, &port, &req.addr.ipv);
	if (err)
		return err;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	err = ucm_call(id->dev, &req, sizeof(req), &r, sizeof(r));
	if (err) {
		free(mc);
		return err;
	}
	do
		mc->handle = __atomic_add_fetch(&ucm_next_handle, 1, __ATOMIC_RELAXED);
	while (!mc->handle);
	mc->uid = uid;
	mc->id = id;
	mc->dev = id->dev;
	mc->dh = r.handle;
	mc->next = c->mcs;
	c->mcs = mc;
	*resp = mc->handle;
	return 0;
}

static int cmd_join_ip_mcast(struct ucm_chan *c, const void *in)
{
	const struct ucm_join_ip_mcast *cmd = in;
	struct sockaddr_storage ss;
	int err = take_addr(&cmd->addr, &ss);

	if (err)
		return err;
	return ucm_join(c, cmd->id, cmd->uid, &ss, 0, (uint32_t *)(uintptr_t)cmd->response);
}

static int cmd_join_mcast(struct ucm_chan *c, const void *in)
{
	const struct ucm_join_mcast *cmd = in;
	struct sockaddr_storage ss;

	if (cmd->addr.ss_family == AF_INET && cmd->addr_size >= sizeof(struct sockaddr_in)) {
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &cmd->addr, sizeof(struct sockaddr_in));
	} else if (cmd->addr.ss_family == AF_INET6 &&
		   cmd->addr_size >= sizeof(struct sockaddr_in6)) {
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &cmd->addr, sizeof(struct sockaddr_in6));
	} else {
		return cmd->addr.ss_family == AF_IB ? -EAFNOSUPPORT : -EINVAL;
	}
	return ucm_join(c, cmd->id, cmd->uid, &ss, cmd->join_flags,
			(uint32_t *)(uintptr_t)cmd->response);
}

/* rdma_leave_multicast: the join's handle; the answer is how many events
 * were reported for it (librdmacm waits until it has acked them). */
static int cmd_leave_mcast(struct ucm_chan *c, const void *in)
{
	const struct ucm_destroy_id *cmd = in;
	uint32_t *resp = (uint32_t *)(uintptr_t)cmd->response;
	struct ucm_mc **pp, *mc;

	for (pp = &c->mcs; *pp && (*pp)->handle != cmd->id; pp = &(*pp)->next)
		;
	mc = *pp;
	if (!mc)
		return -ENOENT;
	*pp = mc->next;
	ucm_call_handle(mc->dev, UROCE_OP_CM_DESTROY, mc->dh);
	*resp = mc->events_reported;
	free(mc);
	return 0;
}

/*
 * RDMA_OPTION_IB_PATH: the route given as path records (ib_path_rec_data,
 * as ibacm's rdma_getaddrinfo returns them) instead of RESOLVE_ROUTE. As
 * the kernel (ucma_set_ib_path): the records a whole number, one of them
 * the primary bidirectional GMP path, the id's address resolved and its
 * route not; then ROUTE_RESOLVED. A RoCE route here is the two addresses'
 * GIDs, so the path must join exactly those (its SGID the RNIC's, its DGID
 * the destination's; EINVAL otherwise). The record's MTU (never above the
 * port's active MTU: a larger one is taken as the port's, as ibv_modify_qp
 * would refuse it), SL, rate, packet lifetime and traffic class are the
 * route's from then on: QUERY_ROUTE reports them, the ConnectRequest's
 * primary path carries them and rdma_init_qp_attr gives them to the QP, as
 * the kernel's CM takes a path record's. Its hop limit is not taken (the
 * CM's 64 applies) nor its flow label.
 */
static int ucm_set_ib_path(struct ucm_chan *c, struct ucm_id *id, const void *val, uint32_t len)
{
	const struct ib_path_rec_data *p = val;
	const uint8_t *rec;
	uint8_t dgid[16], ipv;
	uint16_t port;

	if (len % sizeof(*p))
		return -EINVAL;
	for (; len; len -= sizeof(*p), p++)
		if (p->flags == (IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL))
			break;
	if (!len || !id->dev || !id->addr_resolved || id->route_resolved || id->dh)
		return -EINVAL;
	rec = (const uint8_t *)p->path_rec; /* IBA 15.2.5.16 PathRecord: DGID at 8, SGID at 24 */
	if (sa_to_gid(&id->dst, dgid, &port, &ipv) || memcmp(rec + 8, dgid, 16) ||
	    memcmp(rec + 24, id->dev->gid, 16))
		return -EINVAL;
	/* PathRecord bytes (IBA 15.2.5.16, struct ibv_path_record): TClass 48,
	 * SL the low 4 bits of 52-53, MTU 54, rate 55, packet lifetime 56,
	 * each of the last three below a 2-bit selector. */
	id->path_mtu = rec[54] & 0x3f;
	if (!id->path_mtu || id->path_mtu > id->dev->active_mtu)
		id->path_mtu = (uint8_t)id->dev->active_mtu;
	id->path_sl = rec[53] & 0xf;
	id->path_rate = rec[55] & 0x3f;
	id->path_life = rec[56] & 0x3f;
	id->tos = rec[48];
	id->path_set = 1;
	id->route_resolved = 1;
	ucm_local_event(c, id, UROCE_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

static int cmd_set_option(struct ucm_chan *c, const void *in)
{
	const struct ucm_set_option *cmd = in;
	struct ucm_id *id = ucm_id_find(c, cmd->id);
	const void *val = (const void *)(uintptr_t)cmd->optval;

	if (!id)
		return -EINVAL;
	if (cmd->level == UCM_OPTION_IB)
		return cmd->optname == UCM_OPTION_IB_PATH ? ucm_set_ib_path(c, id, val, cmd->optlen)
							  : -ENOSYS;
	if (cmd->level != UCM_OPTION_ID)
		return -ENOSYS;
	switch (cmd->optname) {
	case UCM_OPTION_ID_TOS:
		if (cmd->optlen != sizeof(uint8_t))
			return -EINVAL;
		id->tos = *(const uint8_t *)val;
		return 0;
	case UCM_OPTION_ID_REUSEADDR: {
		int on;

		if (cmd->optlen != sizeof(int))
			return -EINVAL;
		/* As the kernel (rdma_set_reuseaddr): set in any state but
		 * listening, cleared only before the id has an address. */
		on = *(const int *)val ? 1 : 0;
		if (on ? id->listening
		       : (id->bound || id->addr_resolved || id->listening || id->dh))
			return -EINVAL;
		id->reuseaddr = on;
		return 0;
	}
	case UCM_OPTION_ID_AFONLY:
		if (cmd->optlen != sizeof(int))
			return -EINVAL;
		/* Before the id resolves, listens or connects (rdma_set_afonly:
		 * idle or bound). */
		if (id->addr_resolved || id->listening || id->dh)
			return -EINVAL;
		id->afonly = *(const int *)val ? 1 : 0;
		id->afonly_set = 1;
		return 0;
	case UCM_OPTION_ID_ACK_TIMEOUT:
		if (cmd->optlen != sizeof(uint8_t))
			return -EINVAL;
		/* rdma_set_ack_timeout: RC or XRC only */
		if (id->qp_type != IBV_QPT_RC && id->qp_type != IBV_QPT_XRC_SEND)
			return -EINVAL;
		id->ack_timeout = *(const uint8_t *)val;
		if (id->ack_timeout > 31)
			id->ack_timeout = 31;
		return 0;
	default:
		return -ENOSYS;
	}
}

/* c's connection to the daemon of another channel's connection od. */
static struct ucm_dev *ucm_dev_like(struct ucm_chan *c, const struct ucm_dev *od, int *err)
{
	struct ucm_rnic r;

	snprintf(r.sock_path, sizeof(r.sock_path), "%s", od->sock_path);
	r.guid = od->guid;
	memcpy(r.gid, od->gid, 16);
	r.active_mtu = od->active_mtu;
	return ucm_dev_get(c, &r, err);
}

/*
 * MIGRATE_ID, written on the new channel c: the id of the channel whose fd
 * the command names moves to c, in the daemons too (CM_MIGRATE on c's
 * connections), with its handle and its event count.
 */
static int cmd_migrate_id(struct ucm_chan *c, const void *in)
{
	const struct ucm_migrate_id *cmd = in;
	uint32_t *resp = (uint32_t *)(uintptr_t)cmd->response;
	struct ucm_chan *old = ucm_chan_get((int)cmd->fd);
	struct ucm_id *id;
	int err = 0;

	if (!old)
		return -EINVAL;
	if (old == c) {
		ucm_chan_put(old);
		id = ucm_id_find(c, cmd->id);
		if (!id)
			return -EINVAL;
		*resp = id->events_reported;
		return 0;
	}
	pthread_mutex_lock(&old->lock);
	id = ucm_id_find(old, cmd->id);
	if (!id) {
		pthread_mutex_unlock(&old->lock);
		ucm_chan_put(old);
		return -EINVAL;
	}
	/* The daemons first: each daemon-side id moves to c's connection. */
	if (id->dev) {
		struct ucm_dev *d = ucm_dev_like(c, id->dev, &err);

		if (d && id->dh)
			err = ucm_call_handle(d, UROCE_OP_CM_MIGRATE, id->dh);
		if (!err)
			id->dev = d;
	}
	for (int i = 0; !err && i < id->nls; i++) {
		struct ucm_dev *d = ucm_dev_like(c, id->ls[i].dev, &err);

		if (d)
			err = ucm_call_handle(d, UROCE_OP_CM_MIGRATE, id->ls[i].handle);
		if (!err)
			id->ls[i].dev = d;
	}
	/* Its multicast joins move with it (their daemon-side ids too). */
	for (struct ucm_mc **pp = &old->mcs; !err && *pp;) {
		struct ucm_mc *mc = *pp;
		struct ucm_dev *d;

		if (mc->id != id) {
			pp = &mc->next;
			continue;
		}
		d = ucm_dev_like(c, mc->dev, &err);
		if (d)
			err = ucm_call_handle(d, UROCE_OP_CM_MIGRATE, mc->dh);
		if (err)
			break;
		mc->dev = d;
		*pp = mc->next;
		mc->next = c->mcs;
		c->mcs = mc;
	}
	if (err) {
		pthread_mutex_unlock(&old->lock);
		ucm_chan_put(old);
		return err;
	}
	/* Its events still queued on the old channel here are dropped with the
	 * unlink; the ones already in a daemon's socket stay there (not moved). */
	ucm_id_unlink(old, id);
	pthread_mutex_unlock(&old->lock);
	ucm_chan_put(old);
	id->next = c->ids;
	c->ids = id;
	*resp = id->events_reported;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Events.                                                                   */

static void conn_param_out(const struct uroce_cm_conn_param *in, struct ucm_conn_param *out)
{
	memset(out, 0, sizeof(*out));
	out->qp_num = in->qp_num;
	out->qkey = in->qkey;
	memcpy(out->private_data, in->private_data, sizeof(out->private_data));
	out->private_data_len = in->private_data_len;
	out->srq = in->srq;
	out->responder_resources = in->responder_resources;
	out->initiator_depth = in->initiator_depth;
	out->flow_control = in->flow_control;
	out->retry_count = in->retry_count;
	out->rnr_retry_count = in->rnr_retry_count;
}

/* A UD event's parameters: the peer's QPN and Q_Key (SIDR_REP), the address
 * vector to the peer (its GID, from the event's remote endpoint). */
static void ud_param_out(const struct uroce_cm_event *ev, uint8_t tos, struct ucm_ud_param *out)
{
	memset(out, 0, sizeof(*out));
	out->qp_num = ev->p.qp_num;
	out->qkey = ev->p.qkey;
	memcpy(out->private_data, ev->p.private_data, sizeof(out->private_data));
	out->private_data_len = ev->p.private_data_len;
	if (gid_is_zero(ev->remote.gid))
		return;
	memcpy(out->ah_attr.grh.dgid, ev->remote.gid, 16);
	out->ah_attr.grh.sgid_index = 0;
	out->ah_attr.grh.hop_limit = 64;
	out->ah_attr.grh.traffic_class = tos;
	out->ah_attr.is_global = 1;
	out->ah_attr.port_num = UROCE_PORT_NUM;
}

/* The id of a daemon's event. */
static struct ucm_id *ucm_id_of_event(struct ucm_chan *c, struct ucm_dev *d, uint32_t dh)
{
	for (struct ucm_id *id = c->ids; id; id = id->next) {
		if (id->dev == d && id->dh == dh)
			return id;
		for (int i = 0; i < id->nls; i++)
			if (id->ls[i].dev == d && id->ls[i].handle == dh)
				return id;
	}
	return NULL;
}

/* Fill the kernel's event record; 0, or -ENOENT to drop the event. */
static int ucm_event_out(struct ucm_chan *c, struct ucm_id *id, struct ucm_dev *d,
			 const struct uroce_cm_event *ev, struct ucm_event_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->uid = id->uid;
	r->id = id->handle;
	r->event = ev->event;
	r->status = (uint32_t)ev->status;
	if (id->qp_type == IBV_QPT_UD)
		ud_param_out(ev, id->tos, &r->param.ud);
	else
		conn_param_out(&ev->p, &r->param.conn);
	if (ev->event == UROCE_CM_EVENT_CONNECT_REQUEST) {
		struct ucm_id *child = ucm_id_new(c);

		if (!child) {
			ucm_call_handle(d, UROCE_OP_CM_DESTROY, ev->child);
			return -ENOENT;
		}
		child->ps = id->ps;
		child->qp_type = id->qp_type;
		child->dev = d;
		child->dh = ev->child;
		addr_to_sa(&ev->local, &child->src);
		addr_to_sa(&ev->remote, &child->dst);
		child->bound = child->addr_resolved = child->route_resolved = 1;
		child->passive = 1;
		child->tos = id->tos;
		r->id = child->handle; /* uid stays the listener's */
	}
	id->events_reported++;
	return 0;
}

/* One event, if one is pending. 0, -EAGAIN, or -errno. Under c->lock. */
static int ucm_try_event(struct ucm_chan *c, struct ucm_event_resp *r)
{
	uint64_t drain;

	while (c->lq) {
		struct ucm_local_ev *e = c->lq;
		struct ucm_id *id;

		c->lq = e->next;
		if (!c->lq) {
			c->lq_tail = &c->lq;
			if (syscall(SYS_read, c->efd, &drain, sizeof(drain)) < 0)
				drain = 0; /* EAGAIN: already drained */
		}
		id = ucm_id_find(c, e->ev.handle);
		if (id) {
			memset(r, 0, sizeof(*r));
			r->uid = id->uid;
			r->id = id->handle;
			r->event = e->ev.event;
			r->status = (uint32_t)e->ev.status;
			id->events_reported++;
			free(e);
			return 0;
		}
		free(e);
	}
	for (struct ucm_dev *d = c->devs; d; d = d->next) {
		struct uroce_cm_event ev;
		ssize_t n;

		if (d->dead)
			continue;
		for (;;) {
			n = recv(d->evfd, &ev, sizeof(ev), MSG_DONTWAIT);
			if (n == (ssize_t)sizeof(ev)) {
				struct ucm_id *id = ucm_id_of_event(c, d, ev.handle);
				struct ucm_mc *mc;

				for (mc = c->mcs; mc && (mc->dev != d || mc->dh != ev.handle);
				     mc = mc->next)
					;
				if (mc) {
					/* A join's event: librdmacm knows it by the join's uid. */
					memset(r, 0, sizeof(*r));
					r->uid = mc->uid;
					r->id = mc->handle;
					r->event = ev.event;
					r->status = (uint32_t)ev.status;
					ud_param_out(&ev, mc->id->tos, &r->param.ud);
					mc->events_reported++;
					mc->id->events_reported++;
					return 0;
				}
				if (id && !ucm_event_out(c, id, d, &ev, r))
					return 0;
				continue; /* for an id already destroyed */
			}
			break;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* The daemon went away: its ids' RNIC is gone. */
			d->dead = 1;
			epoll_ctl(c->fd, EPOLL_CTL_DEL, d->evfd, NULL);
			for (struct ucm_id *id = c->ids; id; id = id->next)
				if (id->dev == d)
					ucm_local_event(c, id, UROCE_CM_EVENT_DEVICE_REMOVAL, 0);
			return ucm_try_event(c, r);
		}
	}
	return -EAGAIN;
}

static int cmd_get_event(struct ucm_chan *c, const void *in, uint16_t out)
{
	const struct ucm_get_event *cmd = in;
	struct ucm_event_resp *resp = (void *)(uintptr_t)cmd->response;
	struct ucm_event_resp r;
	int nonblock = fcntl(c->fd, F_GETFL) & O_NONBLOCK;

	if (out < sizeof(r))
		return -ENOSPC;
	for (;;) {
		struct epoll_event ee;
		int err;

		pthread_mutex_lock(&c->lock);
		err = ucm_try_event(c, &r);
		pthread_mutex_unlock(&c->lock);
		if (!err) {
			memcpy(resp, &r, sizeof(r));
			return 0;
		}
		if (err != -EAGAIN)
			return err;
		if (nonblock)
			return -EAGAIN;
		if (epoll_wait(c->fd, &ee, 1, -1) < 0 && errno != EINTR)
			return -errno;
	}
}

/* ------------------------------------------------------------------------ */
/* The device file.                                                          */

struct ucm_cmd_desc {
	size_t in; /* the command's size */
	int (*fn)(struct ucm_chan *c, const void *in);
	int (*fn_out)(struct ucm_chan *c, const void *in, uint16_t out);
	int locked; /* runs under the channel's lock (all but GET_EVENT) */
};

static int cmd_refuse_af_ib(struct ucm_chan *c, const void *in)
{
	(void)c;
	(void)in;
	return -EAFNOSUPPORT; /* a kernel built without AF_IB */
}

static const struct ucm_cmd_desc ucm_cmds[] = {
    [UCM_CMD_CREATE_ID] = {sizeof(struct ucm_create_id), cmd_create_id, NULL, 1},
    [UCM_CMD_DESTROY_ID] = {sizeof(struct ucm_destroy_id), cmd_destroy_id, NULL, 1},
    [UCM_CMD_BIND_IP] = {sizeof(struct ucm_bind_ip), cmd_bind_ip, NULL, 1},
    [UCM_CMD_RESOLVE_IP] = {sizeof(struct ucm_resolve_ip), cmd_resolve_ip, NULL, 1},
    [UCM_CMD_RESOLVE_ROUTE] = {sizeof(struct ucm_resolve_route), cmd_resolve_route, NULL, 1},
    [UCM_CMD_QUERY_ROUTE] = {sizeof(struct ucm_query), NULL, cmd_query_route, 1},
    [UCM_CMD_CONNECT] = {sizeof(struct ucm_connect), cmd_connect, NULL, 1},
    [UCM_CMD_LISTEN] = {sizeof(struct ucm_listen), cmd_listen, NULL, 1},
    [UCM_CMD_ACCEPT] = {sizeof(struct ucm_accept), cmd_accept, NULL, 1},
    [UCM_CMD_REJECT] = {sizeof(struct ucm_reject), cmd_reject, NULL, 1},
    [UCM_CMD_DISCONNECT] = {sizeof(struct ucm_id_only), cmd_disconnect, NULL, 1},
    [UCM_CMD_INIT_QP_ATTR] = {sizeof(struct ucm_init_qp_attr), NULL, cmd_init_qp_attr, 1},
    [UCM_CMD_GET_EVENT] = {sizeof(struct ucm_get_event), NULL, cmd_get_event, 0},
    [UCM_CMD_SET_OPTION] = {sizeof(struct ucm_set_option), cmd_set_option, NULL, 1},
    [UCM_CMD_NOTIFY] = {sizeof(struct ucm_notify), cmd_notify, NULL, 1},
    [UCM_CMD_MIGRATE_ID] = {sizeof(struct ucm_migrate_id), cmd_migrate_id, NULL, 1},
    [UCM_CMD_JOIN_IP_MCAST] = {sizeof(struct ucm_join_ip_mcast), cmd_join_ip_mcast, NULL, 1},
    [UCM_CMD_LEAVE_MCAST] = {sizeof(struct ucm_destroy_id), cmd_leave_mcast, NULL, 1},
    [UCM_CMD_JOIN_MCAST] = {sizeof(struct ucm_join_mcast), cmd_join_mcast, NULL, 1},
    [UCM_CMD_BIND] = {8, cmd_refuse_af_ib, NULL, 1},
    [UCM_CMD_RESOLVE_ADDR] = {8, cmd_refuse_af_ib, NULL, 1},
};

static ssize_t ucm_write(struct ucm_chan *c, const void *buf, size_t len)
{
	struct ucm_hdr h;
	const struct ucm_cmd_desc *d = NULL;
	union {
		uint64_t align;
		uint8_t b[512];
	} in;
	int err;

	if (len < sizeof(h)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.in + sizeof(h) > len) {
		errno = EINVAL;
		return -1;
	}
	if (h.cmd >= sizeof(ucm_cmds) / sizeof(ucm_cmds[0])) {
		errno = EINVAL;
		return -1;
	}
	d = &ucm_cmds[h.cmd];
	if (!d->fn && !d->fn_out) {
		errno = ENOSYS; /* GET_OPTION (no handler in the kernel either), QUERY */
		return -1;
	}
	if (h.in < d->in || d->in > sizeof(in.b)) {
		errno = EINVAL;
		return -1;
	}
	memset(&in, 0, sizeof(in));
	memcpy(in.b, (const uint8_t *)buf + sizeof(h), d->in);
	if (d->locked)
		pthread_mutex_lock(&c->lock);
	err = d->fn ? d->fn(c, in.b) : d->fn_out(c, in.b, h.out);
	if (d->locked)
		pthread_mutex_unlock(&c->lock);
	if (err) {
		errno = -err;
		return -1;
	}
	return (ssize_t)len;
}

int shim_ucm_open(const char *path, int flags)
{
	struct epoll_event ee = {.events = EPOLLIN};
	struct ucm_chan *c;

	if (!path || strcmp(path, UCM_DEV_PATH))
		return -2;
	if ((flags & O_ACCMODE) != O_RDWR) {
		errno = EACCES;
		return -1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return -1;
	}
	c->fd = epoll_create1((flags & O_CLOEXEC) ? EPOLL_CLOEXEC : 0);
	c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->fd < 0 || c->efd < 0) {
		int e = errno;

		if (c->fd >= 0)
			ucm_sys_close(c->fd);
		if (c->efd >= 0)
			ucm_sys_close(c->efd);
		free(c);
		errno = e;
		return -1;
	}
	if (flags & O_NONBLOCK)
		fcntl(c->fd, F_SETFL, O_NONBLOCK);
	ee.data.ptr = NULL;
	epoll_ctl(c->fd, EPOLL_CTL_ADD, c->efd, &ee);
	pthread_mutex_init(&c->lock, NULL);
	c->lq_tail = &c->lq;
	pthread_mutex_lock(&ucm_lock);
	c->next = ucm_chans;
	ucm_chans = c;
	if (c->fd < UCM_FD_MARKS)
		__atomic_store_n(&ucm_fd_mark[c->fd], 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ucm_nchans, ucm_nchans + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ucm_lock);
	return c->fd;
}

/*
 * The fds of the last channels closed stay open a while, empty: a thread
 * that calls GET_EVENT on its channel just after another thread closed it
 * then waits forever, as it does on a kernel that it entered a moment
 * sooner (rping's event thread does, while its main thread closes the
 * channel and exits), instead of failing with EBADF. The oldest is closed
 * for real when a ninth goes there.
 */
#define UCM_GRAVES 8
static int ucm_graves[UCM_GRAVES] = {-1, -1, -1, -1, -1, -1, -1, -1}; /* under ucm_lock */
static unsigned ucm_next_grave;

static void ucm_bury(int fd)
{
	int old;

	pthread_mutex_lock(&ucm_lock);
	old = ucm_graves[ucm_next_grave];
	__atomic_store_n(&ucm_graves[ucm_next_grave], fd, __ATOMIC_RELEASE);
	ucm_next_grave = (ucm_next_grave + 1) % UCM_GRAVES;
	pthread_mutex_unlock(&ucm_lock);
	if (old >= 0)
		ucm_sys_close(old);
}

/* Is fd a closed channel's? (No lock: the hooks' path for every fd.) */
static int ucm_buried_fast(int fd)
{
	if (fd < 0)
		return 0;
	for (unsigned i = 0; i < UCM_GRAVES; i++)
		if (__atomic_load_n(&ucm_graves[i], __ATOMIC_ACQUIRE) == fd)
			return 1;
	return 0;
}

/* Is fd a closed channel's? Then take it out when forget is set (the
 * application closes it again: EBADF for it, then really closed). */
static int ucm_buried(int fd, int forget)
{
	int found = 0;

	pthread_mutex_lock(&ucm_lock);
	for (unsigned i = 0; i < UCM_GRAVES; i++) {
		if (ucm_graves[i] == fd && fd >= 0) {
			found = 1;
			if (forget)
				__atomic_store_n(&ucm_graves[i], -1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&ucm_lock);
	return found;
}

/* Free a closed channel nobody uses any more: its daemon connections close,
 * and the daemons destroy its ids (the connected ones disconnect). */
static void ucm_chan_free(struct ucm_chan *c)
{
	ucm_mc_release(c, NULL); /* the daemons leave when the channel closes */
	while (c->ids) {
		struct ucm_id *id = c->ids;

		c->ids = id->next;
		free(id->ls);
		free(id);
	}
	while (c->lq) {
		struct ucm_local_ev *e = c->lq;

		c->lq = e->next;
		free(e);
	}
	while (c->devs) {
		struct ucm_dev *d = c->devs;

		c->devs = d->next;
		ucm_sys_close(d->evfd);
		ucm_sys_close(d->fd);
		pthread_mutex_destroy(&d->lock);
		free(d);
	}
	ucm_sys_close(c->efd);
	ucm_bury(c->fd); /* an epoll fd with nothing left to watch */
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* The application closes the channel's fd (c referenced by the caller). */
static void ucm_chan_close(struct ucm_chan *c)
{
	struct ucm_chan **pp;

	pthread_mutex_lock(&ucm_lock);
	for (pp = &ucm_chans; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->fd < UCM_FD_MARKS)
		__atomic_store_n(&ucm_fd_mark[c->fd], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&ucm_nchans, ucm_nchans - 1, __ATOMIC_RELEASE);
	c->closed = 1;
	pthread_mutex_unlock(&ucm_lock);
	ucm_chan_put(c);
}

/* ------------------------------------------------------------------------ */
/* libc hooks: our fds here, every other fd straight to the kernel.         */

ssize_t write(int fd, const void *buf, size_t len)
{
	struct ucm_chan *c = ucm_chan_get(fd);
	ssize_t n;
	int err;

	if (!c && ucm_buried_fast(fd)) { /* a channel closed a moment ago */
		struct epoll_event ee;

		if (len < sizeof(struct ucm_hdr) ||
		    ((const struct ucm_hdr *)buf)->cmd != UCM_CMD_GET_EVENT) {
			errno = EBADF;
			return -1;
		}
		for (;;) /* no event ever comes (see ucm_bury) */
			epoll_wait(fd, &ee, 1, -1);
	}
	if (!c)
		return syscall(SYS_write, fd, buf, len);
	n = ucm_write(c, buf, len);
	err = errno;
	ucm_chan_put(c);
	errno = err;
	return n;
}

int close(int fd)
{
	struct ucm_chan *c = ucm_chan_get(fd);

	if (!c) {
		if (ucm_buried_fast(fd) && ucm_buried(fd, 1)) { /* closed before: EBADF */
			ucm_sys_close(fd);
			errno = EBADF;
			return -1;
		}
		return ucm_sys_close(fd);
	}
	ucm_chan_close(c); /* the fd closes when its last call returns */
	return 0;
}

/* The channel fd is a character device, as librdmacm checks (open_cdev). */
static void ucm_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(UCM_DEV_MAJOR, UCM_DEV_MINOR);
	st->st_nlink = 1;
	st->st_blksize = 4096;
}

int fstat(int fd, struct stat *st)
{
	if (ucm_chan_of(fd)) {
		ucm_stat(st);
		return 0;
	}
	return (int)syscall(SYS_fstat, fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	if (ucm_chan_of(fd)) {
		ucm_stat((struct stat *)st);
		return 0;
	}
	return (int)syscall(SYS_fstat, fd, st);
}
