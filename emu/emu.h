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
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <uv.h>

#include "uroce/uapi.h"

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
	uint64_t rx_dropped;
	int ctl_fd;
	uv_poll_t ctl_poll;
	char rundir[256];
	char sock_path[256];
	int status_fd;
	struct uroce_status_page *status;
	uv_prepare_t prepare;
	uv_check_t check;
	uv_idle_t idle;
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

	void *pcap;	   /* pcap_t * for pcap_open_dead */
	void *pcap_dumper; /* pcap_dumper_t * */
	int stopping;
};

/* Options of uroced (uroced.c parses them, dev.c applies them). */
struct emu_opts {
	const char *name;
	const char *addr;
	uint16_t port;
	const char *rundir;
	uint32_t mtu_bytes; /* 0: derive from the interface */
	const char *pcap_path;
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
/* Move a QP to ERR from the transport or the control path: flushes. */
void emu_qp_set_error(struct emu_qp *qp);
/* Complete every outstanding WQE of a QP in ERR with WR_FLUSH_ERR. */
void emu_qp_flush(struct emu_qp *qp);
/* Flush newly posted WQEs of all QPs in ERR; returns how many were flushed. */
unsigned emu_qp_flush_all(struct emu_dev *dev);
struct emu_qp *emu_qp_by_qpn(struct emu_dev *dev, uint32_t qpn);

/* srq.c */
int emu_srq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_srq_free(struct emu_srq *srq);
/* After the transport consumed a WQE: raise SRQ_LIMIT_REACHED when armed
 * and the number of posted WQEs fell below the limit (IBA 10.2.9.2). */
void emu_srq_check_limit(struct emu_srq *srq);

/* ah.c */
int emu_ah_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_ah_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_ah_free(struct emu_ah *ah);
/* Validate an address vector against the device (port, GID index, rate).
 * 0 or -EINVAL. */
int emu_ah_check_attr(const struct emu_dev *dev, const struct uroce_ah_attr *a);

#endif /* UROCE_EMU_H */
