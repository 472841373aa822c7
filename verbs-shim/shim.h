/* SPDX-License-Identifier: MIT */
/*
 * Internal header of the daemon-backed part of the verbs shim: the shim's
 * view of devices, contexts and verbs objects (each embeds the public verbs
 * struct and is recovered with container_of, as rdma-core providers do),
 * and the cross-file shim_* functions grouped by defining file. Exported
 * verbs are plain C definitions with their public names in the files below;
 * everything else non-static is named shim_*.
 */
#ifndef UROCE_SHIM_H
#define UROCE_SHIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "uroce/uapi.h"
#include "look.h"

/* verbs.h turns these into inline wrappers; the shim defines the exported
 * functions behind them (as rdma-core's verbs.c does). */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/*
 * rdma-core 45 added FLUSH (IBA A19) with a fixed ABI that rdma-core 44's
 * headers, which the shim is built with, do not have; a program built
 * against 45 or later uses these values, so the shim serves them. The
 * WR, WC and send_ops_flags values and the access bits are those of
 * rdma-core 45's <infiniband/verbs.h> (the kernel's ib_user_verbs.h and
 * ib_user_ioctl_verbs.h). Macros after the header, so a build against
 * newer headers only shadows its enum constants with the same values.
 */
#define IBV_WR_FLUSH 14
#define IBV_WC_FLUSH 8
#define IBV_QP_EX_WITH_FLUSH (1ull << 11)
#define IBV_ACCESS_FLUSH_GLOBAL (1 << 8)
#define IBV_ACCESS_FLUSH_PERSISTENT (1 << 9)
#define IBV_FLUSH_GLOBAL (1u << 0)
#define IBV_FLUSH_PERSISTENT (1u << 1)
#define IBV_FLUSH_RANGE 0
#define IBV_FLUSH_MR 1

/* rdma-core 45's ibv_qp_ex.wr_flush, the member after 44's last (wr_atomic_write). */
typedef void (*shim_wr_flush_cb)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
				 size_t len, uint8_t type, uint8_t level);

#define SHIM_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* ------------------------------------------------------------------------ */

struct shim_device {
	struct ibv_device dev; /* handed to applications */
	char sock_path[108];
	char addr[UROCE_ADDR_MAX]; /* the daemon's IP address, text */
	uint64_t guid;		   /* network order */
	uint32_t daemon_pid;
	uint32_t active_mtu; /* enum ibv_mtu */
	int refcnt; /* device lists and open contexts holding it */
};

/* Kinds of objects that events can name. */
enum shim_obj_kind {
	SHIM_OBJ_CQ = 1,
	SHIM_OBJ_QP,
	SHIM_OBJ_SRQ,
};

struct shim_obj_entry {
	struct shim_obj_entry *next;
	uint32_t handle;
	enum shim_obj_kind kind;
	void *obj;
};

#define SHIM_OBJ_BUCKETS 256
#define SHIM_LKEY_BUCKETS 256

/* An L_Key whose memory the process may read: [start, end) of a plain MR
 * (not on-demand, not device memory, its IOVA its address). */
struct shim_lkey {
	struct shim_lkey *next;
	uint32_t lkey;
	uintptr_t start, end;
};

struct shim_context {
	pid_t pid; /* process that opened it */
	struct shim_device *dev;
	int fd; /* control socket (also ibv_context.cmd_fd) */
	int doorbell_fd;
	uint32_t handle;
	uint32_t daemon_pid;
	/* One request in flight per context, also across fork(): a child may
	 * use its parent's context (as it may use an inherited uverbs fd), so
	 * the lock and the sequence number live in a page fork() shares
	 * (client.c). */
	struct shim_call_page *call;
	const struct uroce_status_page *status;
	struct uroce_sq_doorbells *sq_db; /* rung after each SQ post */
	int async_eof;
	int dead; /* the daemon went away (fatal.c); atomic */
	pthread_mutex_t obj_lock;
	struct shim_obj_entry *objs[SHIM_OBJ_BUCKETS];
	/* The process memory behind each L_Key of a plain MR (mr.c), for the
	 * payload snapshot of small sends (qp.c). */
	pthread_rwlock_t lkey_lock;
	struct shim_lkey *lkeys[SHIM_LKEY_BUCKETS];
	struct verbs_context vctx; /* last: ibv_context is its last member */
};

struct shim_channel {
	struct ibv_comp_channel ch;
	uint32_t handle;
	/* Its event word and pipe count in the context's doorbell page
	 * (uapi.h chan_event[]), NULL: events come through the pipe only. */
	struct uroce_chan_event *ev;
	uint64_t piped_read; /* records read from the pipe (atomic) */
	struct shim_look look; /* look before blocking? (look.h) */
};

struct shim_cq {
	struct ibv_cq_ex cqx; /* first 128 bytes are struct ibv_cq */
	pthread_spinlock_t lock;
	struct uroce_ring_hdr *ring;
	size_t ring_bytes;
	uint32_t entries;
	uint32_t cons; /* our consumer index (published to ring->cons) */
	uint32_t comp_events_reported;
	uint32_t async_events_reported;
	uint64_t wc_flags; /* ibv_create_cq_ex flags; 0 for ibv_create_cq */
	int single_threaded;
	const struct uroce_cqe *cur; /* extended polling: current CQE */
	int cur_flush;		     /* ... taken from flush[] rather than the ring */
	/* After the daemon died (fatal.c): flush completions of the WRs that
	 * were outstanding, served once the ring is empty. */
	struct uroce_cqe *flush;
	uint32_t nflush, flush_head, flush_cap;
	int flush_built;
	uint32_t idle_polls;	/* empty polls, to look at the daemon now and then */
	uint64_t next_check_ns; /* not before this (CLOCK_MONOTONIC_COARSE) */
};

struct shim_wq {
	struct uroce_ring_hdr *ring;
	size_t bytes;
	uint32_t entries;
	uint32_t stride;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t prod;	   /* our producer index */
	/* The daemon's consumer index as last read (under lock): it only
	 * grows, so the room it shows is never more than there is, and the
	 * index is read again only when that room runs out (wq_full). */
	uint32_t cons_seen;
	uint32_t db_index; /* SQ: its send doorbell bit (uapi.h), or UINT32_MAX */
	pthread_spinlock_t lock;
};

struct shim_qp {
	struct ibv_qp_ex qpx; /* first member is struct ibv_qp */
	/*
	 * Right after rdma-core 44's struct ibv_qp_ex, where rdma-core 45's has
	 * its wr_flush (qp.c asserts the offset): a program built against 45
	 * finds it there; one built against 44 never looks beyond qpx.
	 */
	shim_wr_flush_cb wr_flush;
	struct shim_wq sq;
	struct shim_wq rq; /* ring == NULL with an SRQ */
	uint32_t sq_sig_all;
	uint64_t send_ops_flags; /* 0: ibv_qp_to_qp_ex() gives NULL */
	uint32_t events_reported;
	/* ibv_wr_* batch state (between wr_start and wr_complete/abort) */
	uint32_t wr_prod;
	struct uroce_send_wqe *wr_cur;
	int wr_err;
};

struct shim_srq {
	struct ibv_srq srq;
	struct shim_wq wq;
	uint32_t srq_num;
	uint32_t events_reported;
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain) that
 * wraps one: it carries the wrapped PD's handle, so every call that takes
 * a PD takes it as that PD.
 */
struct shim_call_page {
	pthread_mutex_t lock; /* process-shared, robust */
	uint32_t seq;
};
/* The shared call page of a new context, or NULL (errno). */
struct shim_call_page *shim_call_page_new(void);
void shim_call_page_free(struct shim_call_page *p);

struct shim_pd {
	struct ibv_pd pd;
	struct shim_pd *wraps; /* a parent domain: the PD it wraps; else NULL */
	struct shim_td *td;    /* a parent domain's thread domain, or NULL */
	unsigned parents;      /* parent domains wrapping this PD */
};

struct shim_td {
	struct ibv_td td;
	unsigned parents; /* parent domains using it */
};

/* Send a REG_MR-like request (the answer a uroce_reg_mr_resp) and make the ibv_mr. */
struct ibv_mr *shim_mr_register(struct ibv_pd *pd, void *req, size_t req_len, void *addr,
				size_t length);
struct ibv_dm *shim_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
int shim_free_dm(struct ibv_dm *dm);
struct ibv_mr *shim_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
			      unsigned int access);
struct ibv_td *shim_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int shim_dealloc_td(struct ibv_td *td);
struct ibv_pd *shim_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr);
/* pd is a parent domain of this shim. */
bool shim_pd_is_parent(const struct ibv_pd *pd);

struct shim_mr {
	struct ibv_mr mr;
	unsigned int access; /* of ibv_reg_mr and the last ibv_rereg_mr that set it */
	uint64_t iova;	     /* likewise (0 for device memory) */
};

struct shim_ah {
	struct ibv_ah ah;
};

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t shim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline struct shim_context *shim_ctx(struct ibv_context *c)
{
	return SHIM_CONTAINER_OF(c, struct shim_context, vctx.context);
}

static inline struct shim_cq *shim_cq(struct ibv_cq *cq)
{
	return SHIM_CONTAINER_OF(cq, struct shim_cq, cqx);
}

static inline struct shim_qp *shim_qp(struct ibv_qp *qp)
{
	return SHIM_CONTAINER_OF(qp, struct shim_qp, qpx.qp_base);
}

static inline struct shim_srq *shim_srq(struct ibv_srq *srq)
{
	return SHIM_CONTAINER_OF(srq, struct shim_srq, srq);
}

/* An XRC domain handle (the daemon's object is shared by every opener). */
struct shim_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t handle;
};

static inline struct shim_xrcd *shim_xrcd(struct ibv_xrcd *xrcd)
{
	return SHIM_CONTAINER_OF(xrcd, struct shim_xrcd, xrcd);
}

/* ------------------------------------------------------------------------ */

/* client.c */
/* The rundir rule and the socket connection come from emu/common/rundir.c,
 * compiled into the shim as well: common_rundir_resolve(NULL, ...) and
 * common_rundir_connect(). */
/*
 * One request/response exchange on fd (no locking: the caller owns fd).
 * req: a message starting with struct uroce_msg_hdr (op set; len and seq are
 * filled here). resp receives exactly resp_len bytes on success; fds (up to
 * max_fds) are stored in fds[] and counted in *nfds (may be NULL if
 * max_fds == 0). Returns 0 or -errno (the daemon's status or a transport
 * failure: -EIO when the daemon went away).
 */
int shim_exchange(int fd, uint32_t seq, void *req, size_t req_len, void *resp, size_t resp_len,
		  int *fds, int max_fds, int *nfds);
/* shim_exchange on a context's socket, serialised by its call lock. */
int shim_call(struct shim_context *ctx, void *req, size_t req_len, void *resp, size_t resp_len,
	      int *fds, int max_fds, int *nfds);
/* shim_call with a descriptor sent along (SCM_RIGHTS), no descriptor back. */
int shim_call_fd(struct shim_context *ctx, void *req, size_t req_len, int send_fd, void *resp,
		 size_t resp_len);
/* Registered memory shared with the daemon (mr_share.c): after a
 * registration, share the MR's whole pages where it may (whether they are
 * now); before the MR goes or changes its translation, forget it. */
bool shim_mr_share(struct ibv_mr *mr);
void shim_mr_unshare(struct ibv_mr *mr);
/* Request with a bare header or one handle, response with a bare header. */
int shim_call_simple(struct shim_context *ctx, uint32_t op, uint32_t handle);
/* Map a ring fd (and close it). NULL with errno on failure. */
void *shim_map_ring(int fd, size_t bytes);
/* Ring the context's doorbell if the daemon sleeps (after a full fence). */
void shim_doorbell(struct shim_context *ctx);
/* After publishing SQ WQEs: set the QP's send doorbell bit, then as above. */
void shim_sq_doorbell(struct shim_context *ctx, const struct shim_wq *sq);
/* Set errno from a -errno value and return NULL (constructors). */
void *shim_fail_null(int neg_errno);

/* mr.c: the L_Key table. shim_lkey_covers: whether [addr, addr+len) lies in
 * the memory of L_Key lkey, so the process may read it without faulting. */
void shim_lkey_add(struct shim_context *ctx, uint32_t lkey, const void *addr, size_t len);
void shim_lkey_del(struct shim_context *ctx, uint32_t lkey);
bool shim_lkey_covers(struct shim_context *ctx, uint32_t lkey, uint64_t addr, uint32_t len);
void shim_lkey_free_all(struct shim_context *ctx);
/* objects.c: handle -> object registry for events */
int shim_obj_add(struct shim_context *ctx, uint32_t handle, enum shim_obj_kind kind, void *obj);
void shim_obj_del(struct shim_context *ctx, uint32_t handle);
/* Look up and, under the registry lock, run fn(obj, arg) on it; returns the
 * object or NULL. */
void *shim_obj_get(struct shim_context *ctx, uint32_t handle, enum shim_obj_kind kind,
		   void (*fn)(void *obj));

/* Run fn(obj, arg) on every registered object of a kind, under the
 * registry lock. */
void shim_obj_each(struct shim_context *ctx, enum shim_obj_kind kind,
		   void (*fn)(void *obj, void *arg), void *arg);

/* fatal.c: a daemon that went away */
/* Has the daemon of ctx been found gone? (A load; no system call.) */
static inline bool shim_dead(struct shim_context *ctx)
{
	return __atomic_load_n(&ctx->dead, __ATOMIC_ACQUIRE);
}
/* The daemon is gone: from now on ctx is dead. */
void shim_fatal_mark(struct shim_context *ctx);
/* Look whether the daemon's end of the control socket hung up (one
 * poll(2)); marks ctx dead when it did. True when ctx is dead. */
bool shim_fatal_check(struct shim_context *ctx);
/* After an empty poll of cq: true when its context is dead, looking at the
 * socket only every 1024 empty polls and 10 ms. Under the CQ's lock. */
bool shim_fatal_poll_due(struct shim_cq *cq);
/* Once: queue on cq a IBV_WC_WR_FLUSH_ERR completion for every WR
 * outstanding on the QPs completing into it. Under the CQ's lock. */
void shim_fatal_flush_cq(struct shim_cq *cq);
/* Drop the queued flush completions of a destroyed QP. Under the lock. */
void shim_fatal_forget_qp(struct shim_cq *cq, uint32_t qpn);

/* device.c */
void shim_device_put(struct shim_device *dev);

/* ucm.c: the kernel's rdma_ucm interface (/dev/infiniband/rdma_cm) for librdmacm */
/*
 * Called by the libc open-family hooks for every path opened: a new RDMA CM
 * event channel fd for "/dev/infiniband/rdma_cm", -1 with errno when that
 * fails, -2 when path is another file (the caller opens it as usual).
 */
int shim_ucm_open(const char *path, int flags);

/* sysview.c: the sysfs view (see the file) */
/*
 * The path to use for @path: @path itself when it is not part of the view
 * (/sys/class/infiniband[/...], /sys/devices/uroce[/...]) or no uroce device
 * has been seen yet; otherwise its place in this process's tree, written to
 * @buf (@len bytes), refreshed first when due. NULL with errno ENAMETOOLONG
 * when that does not fit. Safe to call from libc hooks (reentrant calls made
 * while the tree is written pass through).
 */
const char *shim_sysview_path(const char *path, char *buf, size_t len);
/*
 * The RDMA CM device emulation's open (another part of the shim, when it is
 * linked in; weak: NULL otherwise): an fd, -1 with errno, or -2 for "not
 * mine, carry on". interpose.c offers it every path of the open family; the
 * view has class/misc/rdma_cm only when it exists.
 */
int shim_ucm_open(const char *path, int flags) __attribute__((weak));
/* The cheap test the hooks make first: can @path be part of the view
 * (/sys/..., or /dev/infiniband... for the device nodes)? */
static inline bool shim_sysview_maybe(const char *path)
{
	if (!path || path[0] != '/')
		return false;
	if (path[1] == 's')
		return path[2] == 'y' && path[3] == 's' && path[4] == '/';
	return path[1] == 'd' && !strncmp(path + 2, "ev/infiniband", 13) &&
	       (path[15] == '/' || !path[15]);
}

/* context.c */
int shim_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
		    size_t port_attr_len);
int shim_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int shim_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);
/* Query the daemon's device attributes. 0 or -errno. */
int shim_query_dev_attr(struct shim_context *ctx, struct uroce_device_attr *a);

/* pd.c */
int shim_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		   struct ibv_sge *sg_list, uint32_t num_sge);
struct ibv_xrcd *shim_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int shim_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_qp *shim_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);

/* mr.c */
/* ops.alloc_mw / ops.dealloc_mw (ibv_alloc_mw, ibv_dealloc_mw). */
struct ibv_mw *shim_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int shim_dealloc_mw(struct ibv_mw *mw);

/* cq.c */
int shim_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int shim_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *shim_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);
/* Remove from a CQ the unpolled CQEs of a destroyed QP (as providers do). */
void shim_cq_clean(struct shim_cq *cq, uint32_t qpn);

/* qp.c */
int shim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
/* ops.bind_mw: bind a type 1 window with a BIND_MW WQE (positive errno). */
int shim_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
int shim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
struct ibv_qp *shim_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
/* Map a work queue from a create response. 0 or -errno. */
int shim_wq_map(struct shim_wq *wq, int fd, size_t bytes);
void shim_wq_unmap(struct shim_wq *wq);
/* Convert between verbs and uapi address vectors. */
void shim_ah_to_uapi(const struct ibv_ah_attr *in, struct uroce_ah_attr *out);
void shim_ah_from_uapi(const struct uroce_ah_attr *in, struct ibv_ah_attr *out);
/* Write receive WQEs into a ring (RQ or SRQ). Positive errno, *bad set. */
int shim_post_recv_ring(struct shim_context *ctx, struct shim_wq *wq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* srq.c */
int shim_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
struct ibv_srq *shim_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr);
int shim_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);

#endif /* UROCE_SHIM_H */
