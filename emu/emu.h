/* SPDX-License-Identifier: MIT */
/*
 * Internal header of the daemon uroced: the device and object structures and
 * every cross-file function, grouped by the file that defines it (as rxe's
 * rxe_loc.h). Everything hangs off one struct emu_dev; the only process-wide
 * state is the log level (log.c).
 */
#ifndef UROCE_EMU_H
#define UROCE_EMU_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <uv.h>

#include "uroce/uapi.h"
#include "dev_counters.h"
#include "xport.h"

#define EMU_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* ------------------------------------------------------------------------ */
/* Intrusive circular doubly linked list.                                    */

struct emu_list {
	struct emu_list *next;
	struct emu_list *prev;
};

static inline void emu_list_init(struct emu_list *l)
{
	l->next = l;
	l->prev = l;
}

static inline int emu_list_empty(const struct emu_list *l)
{
	return l->next == l;
}

static inline void emu_list_add_tail(struct emu_list *l, struct emu_list *n)
{
	n->prev = l->prev;
	n->next = l;
	l->prev->next = n;
	l->prev = n;
}

static inline void emu_list_del(struct emu_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	emu_list_init(n);
}

#define EMU_LIST_FOR_EACH_SAFE(pos, tmp, head)                           \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

/* ------------------------------------------------------------------------ */
/* u32-keyed intrusive hash table (htab.c).                                  */

struct emu_hnode {
	struct emu_hnode *next;
	uint32_t key;
};

struct emu_htab {
	struct emu_hnode **buckets;
	uint32_t nbuckets; /* power of two */
	uint32_t count;
};

/* htab.c */
int emu_htab_init(struct emu_htab *t);
void emu_htab_free(struct emu_htab *t);
/* Insert n under key (the key must not be present). 0 or -ENOMEM. */
int emu_htab_insert(struct emu_htab *t, struct emu_hnode *n, uint32_t key);
struct emu_hnode *emu_htab_find(const struct emu_htab *t, uint32_t key);
/* Remove n (which must be in the table). */
void emu_htab_remove(struct emu_htab *t, struct emu_hnode *n);

/* ------------------------------------------------------------------------ */
/* Logging (log.c).                                                          */

enum emu_log_level {
	EMU_LOG_ERROR = 0,
	EMU_LOG_WARN = 1,
	EMU_LOG_INFO = 2,
	EMU_LOG_DEBUG = 3,
};

/* log.c */
void emu_log_set_level(enum emu_log_level level);
void emu_log_set_name(const char *name);
/* printf-like; one line to stderr, prefixed with the device name. Keeps errno. */
void emu_log(enum emu_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define emu_err(...) emu_log(EMU_LOG_ERROR, __VA_ARGS__)
#define emu_warn(...) emu_log(EMU_LOG_WARN, __VA_ARGS__)
#define emu_info(...) emu_log(EMU_LOG_INFO, __VA_ARGS__)
#define emu_dbg(...) emu_log(EMU_LOG_DEBUG, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Objects.                                                                  */

/* X-macro: object types (name, field of struct uroce_res_counts). */
#define EMU_OBJ_LIST(X)     \
	X(PD, pd)           \
	X(MR, mr)           \
	X(CHANNEL, channel) \
	X(CQ, cq)           \
	X(QP, qp)           \
	X(SRQ, srq)         \
	X(AH, ah)

enum emu_obj_type {
#define EMU_OBJ_ENUM(name, field) EMU_OBJ_##name,
	EMU_OBJ_LIST(EMU_OBJ_ENUM)
#undef EMU_OBJ_ENUM
	    EMU_OBJ_COUNT
};

struct emu_ctx;

/*
 * Common part of every object: device-wide handle, owning context, and the
 * use count of objects that depend on it (a PD used by MRs and QPs cannot be
 * freed: EBUSY, as the kernel's usecnt).
 */
struct emu_obj {
	struct emu_hnode hnode; /* key = handle, in dev->handles */
	struct emu_list link;	/* in ctx->objs[type] */
	struct emu_ctx *ctx;
	enum emu_obj_type type;
	uint32_t usecnt;
};

/* The daemon's private view of a ring: geometry is never re-read from
 * shared memory. */
struct emu_ring {
	struct uroce_ring_hdr *hdr; /* mapping of the memfd */
	size_t bytes;
	uint32_t entries;
	uint32_t stride;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t cons; /* daemon-side consumer (SQ/RQ/SRQ) */
	uint32_t prod; /* daemon-side producer (CQ) */
};

struct emu_pd {
	struct emu_obj obj;
};

struct emu_mr {
	struct emu_obj obj;
	struct emu_hnode key_node; /* key = lkey >> 8, in dev->mr_keys */
	struct emu_pd *pd;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
	uint32_t access;
	uint32_t lkey;
	uint32_t rkey;
};

struct emu_channel {
	struct emu_obj obj;
	int wfd; /* write end of the event pipe */
	uint64_t events;
	uint64_t dropped;
};

struct emu_cq {
	struct emu_obj obj;
	struct emu_channel *channel;
	struct emu_ring ring;
	uint32_t comp_vector;
	uint32_t cqe_requested;
	int overflowed;
	uint64_t events;
};

struct emu_srq {
	struct emu_obj obj;
	struct emu_pd *pd;
	struct emu_ring ring;
	uint32_t srq_num;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit; /* 0: not armed */
};

struct emu_ah {
	struct emu_obj obj;
	struct emu_pd *pd;
	struct uroce_ah_attr attr;
};

struct emu_mcast {
	struct emu_list link;
	uint8_t gid[16];
	uint16_t lid;
};

struct emu_qp {
	struct emu_obj obj;
	struct emu_hnode qpn_node;  /* key = qpn, in dev->qpns */
	struct emu_list flush_link; /* in dev->flush_qps while in ERR */
	struct emu_pd *pd;
	struct emu_cq *send_cq;
	struct emu_cq *recv_cq;
	struct emu_srq *srq;
	uint32_t type; /* enum uroce_qp_type */
	uint32_t qpn;
	uint32_t sq_sig_all;
	enum uroce_qp_state state;
	struct uroce_qp_attr attr; /* current attributes (query_qp) */
	struct uroce_qp_cap cap;   /* capabilities the QP really has */
	struct emu_ring sq;
	struct emu_ring rq; /* hdr == NULL when the QP uses an SRQ */
	struct emu_list mcast;
	uint32_t nmcast;
	int last_wqe_sent;

	/* Data path (datapath.c, timer.c). */
	struct emu_xqp x;	    /* the transport engine's QP */
	uint32_t sq_handed;	    /* SQ ring index handed to the engine so far */
	struct emu_list sq_link;    /* in dev->sq_qps while the SQ is consumed */
	struct emu_list run_link;   /* in dev->run_qps while scheduled */
	struct emu_list timer_link; /* in dev->timer_qps while armed */
	uint64_t deadline_us;	    /* engine timer deadline, 0 = none */
};

/* One client connection = one verbs context (or a HELLO probe). */
struct emu_ctx {
	struct emu_dev *dev;
	struct emu_list link; /* in dev->ctxs */
	uint32_t handle;
	int fd;
	pid_t pid;
	uid_t uid;
	int opened; /* OPEN_CTX done */
	int closing;
	uv_poll_t poll;
	int doorbell_fd; /* eventfd, -1 before OPEN_CTX */
	uv_poll_t doorbell_poll;
	int async_wfd; /* write end of the async event pipe */
	struct emu_list objs[EMU_OBJ_COUNT];
	uint64_t doorbells;
	int pending_closes; /* libuv handles still closing */
	int pidfd;	    /* the connecting process; -1 if pidfd_open failed */
	uv_poll_t pid_poll; /* readable when that process exits */
};

/* Device limits that the daemon enforces and reports. */
struct emu_limits {
	uint64_t max_mr_size;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_sge_rd;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint32_t max_res_rd_atom;
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_ah;
	uint32_t max_mcast_grp;
	uint32_t max_mcast_qp_attach;
	uint32_t max_total_mcast_qp_attach;
	uint32_t max_inline_data;
	uint32_t max_channels;
	uint32_t max_ctx;
};

/*
 * The waiting strategy of the event loop (wait.c): spin while work is
 * recent, then publish "asleep" in the status page and block. The data
 * path is reached through the two callbacks only.
 */
struct emu_wait {
	uv_loop_t *loop;
	uv_prepare_t prepare;
	uv_check_t check;
	uv_idle_t idle;
	uv_timer_t timer;
	struct uroce_status_page *status;
	/* One pass over the data path; returns the amount of work done. */
	unsigned (*poll)(void *arg);
	/* Earliest transport deadline in us (0: none). */
	uint64_t (*next_deadline)(void *arg);
	void *arg;
	uint64_t last_work_us;
	uint64_t spin_us;	   /* spin this long after the last work */
	uint64_t backoff_until_us; /* CPUs oversubscribed: no spinning before */
	bool spinning;
	uint64_t *sleeps; /* counter to bump on every block */
};

struct emu_net;
struct emu_capture;
struct emu_dma;

struct emu_dev {
	char name[UROCE_NAME_MAX];
	char addr_str[UROCE_ADDR_MAX];
	struct sockaddr_storage addr; /* bound address, port included */
	socklen_t addr_len;
	int family;
	uint16_t udp_port;
	uint8_t gid[16];
	uint64_t node_guid; /* network order */
	uint8_t mac[6];
	char ifname[64];
	int ifindex;
	uint32_t if_mtu;
	uint32_t active_mtu; /* enum ibv_mtu value 1..5 */
	struct emu_limits lim;
	struct uroce_res_counts counts;

	uv_loop_t *loop;
	int udp_fd;
	uv_poll_t udp_poll;
	int ctl_fd;
	uv_poll_t ctl_poll;
	int ctl_spare_fd;	  /* given up to refuse a client when out of fds */
	uint64_t ctl_fd_refusals; /* clients refused for want of an fd */
	char rundir[256];
	char sock_path[256];
	int status_fd;
	struct uroce_status_page *status;
	uv_signal_t sigint;
	uv_signal_t sigterm;

	struct emu_list ctxs;
	uint32_t nconns; /* connections, opened contexts or not */
	struct emu_htab handles;
	struct emu_htab qpns;
	struct emu_htab mr_keys;
	struct emu_list flush_qps;
	uint32_t next_handle;
	uint32_t next_qpn;
	uint32_t next_mr_index;
	uint32_t next_srq_num;
	uint8_t next_key_byte;

	/* Data path. */
	struct emu_xdev x;	     /* the transport engine's device */
	struct emu_list sq_qps;	     /* QPs whose SQ ring is consumed */
	struct emu_list run_qps;     /* QPs the engine asked to run */
	struct emu_list timer_qps;   /* QPs with an armed engine timer */
	struct emu_net *net;	     /* net.c: socket buffers and batches */
	struct emu_capture *capture; /* capture.c; NULL without --pcap */
	struct emu_dma *dma;	     /* dma.c: staged writes, read-ahead */
	struct emu_wait wait;	     /* wait.c: spin, then sleep */
	uint64_t dcnt[EMU_DCNT_COUNT];
	int stopping;
};

/* Scheduling priority uroced asks for unless --nice says otherwise. */
#define EMU_NICE_DEFAULT (-10)

/* Options of uroced (uroced.c parses them, dev.c applies them). */
struct emu_opts {
	const char *name;
	const char *addr;
	uint16_t port;
	const char *rundir;
	uint32_t mtu_bytes; /* 0: derive from the interface */
	const char *pcap_path;
	uint32_t spin_us; /* --spin-us, when spin_set */
	int spin_set;
};

/* Reply being built for one request (ctl.c sends it). */
struct emu_reply {
	union {
		struct uroce_msg_hdr hdr;
		uint8_t buf[UROCE_MSG_MAX_BYTES];
	} u;
	size_t len;
	int fds[UROCE_MSG_MAX_FDS];
	int nfds; /* closed by ctl.c after sending (or on error) */
};

/* Reply payload of type T, sized sizeof(T). */
#define EMU_REPLY(rep, T) ((T *)emu_reply_body((rep), sizeof(T)))

/* ------------------------------------------------------------------------ */

/* dev.c */
/* Parse and validate an address, find its interface and MTU, fill the
 * device identity and limits. Prints a one-line error and returns -1 on bad
 * input. */
int emu_dev_setup(struct emu_dev *dev, const struct emu_opts *o);
/* Bind the UDP socket (RoCEv2) on addr:port. -1 with a message on failure. */
int emu_dev_bind_udp(struct emu_dev *dev);
/* Create the sealed device status page. 0 or -errno. */
int emu_dev_status_page(struct emu_dev *dev);
/* Allocate a new device-wide handle. */
uint32_t emu_dev_new_handle(struct emu_dev *dev);
void emu_dev_fill_attr(const struct emu_dev *dev, struct uroce_device_attr *a);
void emu_dev_fill_port(const struct emu_dev *dev, struct uroce_port_attr *p);
/* Largest IB MTU (enum value 1..5) usable on an interface MTU. */
uint32_t emu_dev_ib_mtu_for(uint32_t if_mtu);
/* Register obj under a new handle in ctx; counts it. 0 or -ENOMEM. */
int emu_dev_obj_add(struct emu_ctx *ctx, struct emu_obj *obj, enum emu_obj_type type);
/* Unregister obj (handle and ctx list) and uncount it; does not free. */
void emu_dev_obj_del(struct emu_obj *obj);
/* Look up an object of the given type owned by ctx; NULL if absent. */
struct emu_obj *emu_dev_obj_find(struct emu_ctx *ctx, uint32_t handle, enum emu_obj_type type);
uint32_t *emu_dev_count(struct emu_dev *dev, enum emu_obj_type type);
void emu_dev_close(struct emu_dev *dev);

/* ctl.c */
/* Create the listening socket in the rundir (checking the name is free). */
int emu_ctl_listen(struct emu_dev *dev);
void emu_ctl_close(struct emu_dev *dev);
/* Reserve len bytes of reply payload after the header and zero them. */
void *emu_reply_body(struct emu_reply *rep, size_t len);
/* Attach an fd to the reply (ownership passes to the reply). */
void emu_reply_add_fd(struct emu_reply *rep, int fd);

/* ctx.c */
/* Accept-time constructor: takes ownership of fd. NULL on failure. */
struct emu_ctx *emu_ctx_new(struct emu_dev *dev, int fd, pid_t pid, uid_t uid);
/* OPEN_CTX: create doorbell and async pipe, fill reply fds. */
int emu_ctx_open(struct emu_ctx *ctx, struct emu_reply *rep);
/* Release everything the context created, then the context itself. */
void emu_ctx_destroy(struct emu_ctx *ctx);
/* Queue an async event record for the context (dropped if the pipe is full). */
void emu_ctx_async_event(struct emu_ctx *ctx, uint32_t type, uint32_t handle);

/* ring.c */
/* Create a ring memfd of the given geometry, map it; *fd gets the memfd
 * (caller sends and closes it). 0 or -errno. */
int emu_ring_create(struct emu_ring *r, enum uroce_ring_kind kind, uint32_t entries,
		    uint32_t stride, uint32_t handle, uint32_t qpn, int *fd);
void emu_ring_destroy(struct emu_ring *r);
/* Number of WQEs the producer has published beyond our consumer, validated:
 * a producer index more than `entries` ahead is reported as -EINVAL. */
int64_t emu_ring_pending(const struct emu_ring *r);
/* Consume one entry (advance and publish the consumer index). */
void emu_ring_consume(struct emu_ring *r);
/* Drop everything published (RESET): consumer catches up with producer. */
void emu_ring_drain(struct emu_ring *r);
uint32_t emu_pow2_roundup(uint32_t v);

/* pd.c */
int emu_pd_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_pd_dealloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_pd_free(struct emu_pd *pd);

/* mr.c */
int emu_mr_reg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mr_rereg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mr_dereg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_mr_free(struct emu_mr *mr);
/* Check that [addr, addr+len) of process pid is mapped (writable if
 * need_write). 0, -EFAULT, or -errno when the map cannot be read. */
int emu_mr_check_mapped(pid_t pid, uint64_t addr, uint64_t len, int need_write);
/* Find an MR by lkey/rkey (device-wide). */
struct emu_mr *emu_mr_by_key(struct emu_dev *dev, uint32_t key);

/* cq.c */
int emu_cq_create_channel(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_destroy_channel(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_resize(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_cq_free(struct emu_cq *cq);
void emu_cq_channel_free(struct emu_channel *ch);
/* Append a CQE; signals the channel if the CQ is armed for it. On overflow
 * the CQ enters error (async CQ_ERR) and -ENOSPC is returned. */
int emu_cq_push(struct emu_cq *cq, const struct uroce_cqe *cqe);

/* qp_state.c (pure) */
const char *emu_qp_state_name(uint32_t state);
/* Required / optional attribute masks of a transition (IBA 10.3.1,
 * ibv_modify_qp(3)); both 0 and valid == 0 for a forbidden transition. */
int emu_qp_state_masks(uint32_t qp_type, uint32_t cur, uint32_t next, uint32_t *req, uint32_t *opt);
/* 0 if (cur -> next, mask) is a legal modify for this QP type, else -EINVAL. */
int emu_qp_state_check(uint32_t qp_type, uint32_t cur, uint32_t next, uint32_t mask);

/* qp.c */
int emu_qp_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_attach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_detach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_qp_free(struct emu_qp *qp);
struct emu_qp *emu_qp_by_qpn(struct emu_dev *dev, uint32_t qpn);
/* The engine moved the QP to ERR by itself (it already flushed what it
 * held): record the state, raise IBV_EVENT_QP_FATAL (and LAST_WQE_REACHED
 * on an SRQ). The next data-path pass flushes the SQ ring. */
void emu_qp_transport_error(struct emu_qp *qp);
/* The shim corrupted the SQ ring's producer index: ERR, ring dropped. */
void emu_qp_ring_fault(struct emu_qp *qp);
/* The engine drained the SQ of a QP in SQD: IBV_EVENT_SQ_DRAINED if asked. */
void emu_qp_sq_drained(struct emu_qp *qp);
/* First request packet on a connected QP in RTR: IBV_EVENT_COMM_EST. */
void emu_qp_comm_est(struct emu_qp *qp);

/* srq.c */
int emu_srq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_srq_free(struct emu_srq *srq);
/* After the transport consumed a WQE: raise SRQ_LIMIT_REACHED when armed
 * and the number of posted WQEs fell below the limit (IBA 10.2.9.2). */
void emu_srq_check_limit(struct emu_srq *srq);

/* wqe.c (pure) */
/* Geometry of a ring as the daemon knows it (never read from the ring). */
struct emu_wqe_geom {
	uint32_t stride;     /* bytes of one slot */
	uint32_t max_sge;    /* SGEs a slot may hold */
	uint32_t max_inline; /* inline bytes a send slot may hold */
};
/* An opcode no engine accepts: a malformed WQE fails with LOC_QP_OP_ERR. */
#define EMU_WQE_BAD_OPCODE 0xffu
/* No MR has this L_Key (keys have a non-zero index above the low byte). */
#define EMU_WQE_BAD_LKEY 0u
/* Is opcode a send WR opcode this QP type carries? */
bool emu_wqe_opcode_ok(uint32_t qp_type, uint32_t opcode);
/*
 * Convert one SQ slot (a private copy of stride bytes) into an engine WQE.
 * Returns EMU_XWC_SUCCESS, or the completion status the WR must fail with
 * (LOC_QP_OP_ERR: opcode, SGE count, inline on READ/atomic; LOC_LEN_ERR:
 * inline length), in which case *w is poisoned so that the engine fails it
 * with that status, in order. *ah_handle receives a UD WR's AH.
 */
uint32_t emu_wqe_send(const void *slot, const struct emu_wqe_geom *g, uint32_t qp_type,
		      struct emu_xwqe *w, uint32_t *ah_handle);
/* Make *w a WQE the engine fails with status (LOC_QP_OP_ERR/LOC_LEN_ERR). */
void emu_wqe_poison(struct emu_xwqe *w, uint32_t status);
/*
 * Convert one RQ/SRQ slot (a private copy) into an engine receive WQE.
 * Returns 0, or -EINVAL for a malformed slot, in which case *w has one SGE
 * no key matches (placing data into it fails with a local error).
 */
int emu_wqe_recv(const void *slot, const struct emu_wqe_geom *g, struct emu_xrecv_wqe *w);

/* route.c (pure) */
struct in_addr;
struct msghdr;
struct wire_frame_params;
void emu_route_gid_from_v4(const struct in_addr *a, uint8_t gid[16]);
/* GID (IPv4-mapped for AF_INET) and port of a socket address; 0 or
 * -EAFNOSUPPORT. */
int emu_route_gid_from_sockaddr(const struct sockaddr *sa, uint8_t gid[16], uint16_t *port);
/* Socket address of a GID for a socket of this family; 0, -EAFNOSUPPORT
 * (IPv4 GID on an IPv6 socket or the reverse), -EHOSTUNREACH (zero,
 * multicast or broadcast address). scope_id is used for link-local IPv6. */
int emu_route_sockaddr_from_gid(const uint8_t gid[16], uint16_t port, int family, uint32_t scope_id,
				struct sockaddr_storage *ss, socklen_t *len);
/* The transport route of a datagram from recvmsg(): source from the name,
 * destination from IP_PKTINFO/IPV6_PKTINFO, TOS/TTL from their control
 * messages, dport = local_port. 0, -ENOENT (no destination), or
 * -EAFNOSUPPORT. */
int emu_route_from_msg(const struct msghdr *mh, uint16_t local_port, struct emu_xroute *rt);
/* The locally administered MAC uroce derives from a GID. */
void emu_route_mac_of_gid(const uint8_t gid[16], uint8_t mac[6]);
/* Ethernet/IP/UDP framing of a packet of route rt (ID 0, DF; the packet's
 * own ICRC is kept). */
void emu_route_frame_params(const struct emu_xroute *rt, struct wire_frame_params *p);
/* The UDP checksum of an IPv6 datagram (udp: the UDP header, checksum field
 * zero, then the payload; len bytes) between src and dst (RFC 8200 8.1). */
uint16_t emu_route_udp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *udp,
			     size_t len);

/* dma.c */
/*
 * Pure: may [addr, addr+len) of MR mr (NULL: no such key) be accessed with
 * `access` (EMU_XACCESS_* bits) by a QP of PD pd? 0 with *host_addr set,
 * -ENOENT (no key, or another PD), -ERANGE, -EACCES.
 */
int emu_dma_check(const struct emu_mr *mr, const struct emu_pd *pd, uint64_t addr, uint64_t len,
		  uint32_t access, uint64_t *host_addr);
/* The staging and read-ahead buffers (without them every access is one
 * synchronous process_vm call). 0 or -ENOMEM. */
int emu_dma_init(struct emu_dev *dev);
/* Flush and free them. */
void emu_dma_fini(struct emu_dev *dev);
/* Write the staged writes out and forget the read-ahead copy; called before
 * CQEs are written and packets sent, and at the end of every batch/pass. */
void emu_dma_flush(struct emu_dev *dev);
/* The engine's dma_lkey / dma_rkey / atomic ops for QP qp (xport.h). */
int emu_dma_lkey(struct emu_qp *qp, uint32_t lkey, uint64_t addr, void *buf, size_t len,
		 uint32_t access, enum emu_xdma dir);
int emu_dma_rkey(struct emu_qp *qp, uint32_t rkey, uint64_t va, void *buf, size_t len,
		 uint32_t access, enum emu_xdma dir);
int emu_dma_atomic(struct emu_qp *qp, uint32_t rkey, uint64_t va, enum emu_xatomic_op op,
		   uint64_t compare_add, uint64_t swap, uint64_t *orig);

/* timer.c */
/* Arm (deadline_us != 0) or cancel the QP's transport timer. */
void emu_timer_arm(struct emu_qp *qp, uint64_t deadline_us);
void emu_timer_cancel(struct emu_qp *qp);
/* Fire every timer due at now_us; returns how many fired. */
unsigned emu_timer_expire(struct emu_dev *dev, uint64_t now_us);
/* Earliest armed deadline (0: none). */
uint64_t emu_timer_next(const struct emu_dev *dev);

/* wait.c */
/* Spin this long after the last work before sleeping. */
#define EMU_WAIT_SPIN_US 100
/* Spin (rather than sleep on a millisecond timer) for a deadline this close. */
#define EMU_WAIT_TIMER_SPIN_US 250
/* A sched_yield() this long means another process wanted the CPU... */
#define EMU_WAIT_CONTENDED_US 20
/* ...and the daemon then stops spinning for this long. */
#define EMU_WAIT_BACKOFF_US 200000
enum emu_wait_action {
	EMU_WAIT_SPIN,
	EMU_WAIT_SLEEP,
};
uint64_t emu_wait_now_us(void);
/*
 * Pure: spin or sleep, given the time of the last work, the spin window,
 * the end of a contention back-off (no spinning on work before it) and the
 * earliest transport deadline (0: none). For SLEEP, *timeout_ms is how
 * long libuv may block (-1: until woken).
 */
enum emu_wait_action emu_wait_decide(uint64_t now_us, uint64_t last_work_us, uint64_t spin_us,
				     uint64_t backoff_until_us, uint64_t deadline_us,
				     int64_t *timeout_ms);
/* Install the loop handles (poll/next_deadline/arg must be set). */
void emu_wait_start(struct emu_wait *w, uv_loop_t *loop, struct uroce_status_page *status);
/* Work arrived outside a pass (datagrams, doorbells): keep spinning. */
void emu_wait_note_work(struct emu_wait *w);

/* net.c */
/* Allocate the batches and start receiving on dev->udp_fd. 0 or -errno. */
int emu_net_start(struct emu_dev *dev);
/* Send what is batched and free the batches. */
void emu_net_stop(struct emu_dev *dev);
/* The engine's send_packet: batch one packet (sent by emu_net_flush). */
int emu_net_send(struct emu_dev *dev, const struct emu_xroute *rt, const void *pkt, size_t len);
/* Flush the staged DMA writes (emu_dma_flush), then send the batch;
 * returns how many datagrams it held. */
unsigned emu_net_flush(struct emu_dev *dev);
/* Receive up to `rounds` batches; returns the datagrams received. */
unsigned emu_net_receive(struct emu_dev *dev, unsigned rounds);

/* capture.c */
/* Open the --pcap file (prints a message and returns -1 on failure). */
int emu_capture_open(struct emu_dev *dev, const char *path);
/* Once the loop exists: the periodic flush. */
void emu_capture_start(struct emu_dev *dev);
/* Append one packet (BTH..ICRC) of route rt (dev->capture must be set). */
void emu_capture_packet(struct emu_dev *dev, const struct emu_xroute *rt, const void *pkt,
			size_t len);
/* Flush and close (after the loop's handles are closed). */
void emu_capture_close(struct emu_dev *dev);

/* datapath.c */
/* The engine's device with the daemon's ops, lists, wait callbacks. */
void emu_dp_init(struct emu_dev *dev);
/* One data-path pass (wait.c's poll callback); returns the work done. */
unsigned emu_dp_poll(void *dev);
/* Hand new SQ ring entries of qp to the engine; returns how many. */
unsigned emu_dp_sq(struct emu_qp *qp);
/* The engine's address vector for a uapi one (source: GID 0). */
void emu_dp_av(const struct emu_dev *dev, const struct uroce_ah_attr *a, struct emu_xav *av);
/* Before freeing a QP: cancel its timer, leave the run and SQ lists. */
void emu_dp_qp_release(struct emu_qp *qp);

/* counters.c */
/* QUERY_COUNTERS: the device's (qpn 0) or one QP's counters. */
int emu_counters_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);

/* ah.c */
int emu_ah_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_ah_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_ah_free(struct emu_ah *ah);
/* Validate an address vector against the device (port, GRH present, source
 * GID index, rate), as for a RoCE port. 0 or -EINVAL. */
int emu_ah_check_attr(const struct emu_dev *dev, const struct uroce_ah_attr *a);

#endif /* UROCE_EMU_H */
