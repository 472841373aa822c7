/* SPDX-License-Identifier: MIT */
/*
 * The daemon core's header (emu/daemon): the device and object structures,
 * lists, the hash table and the log, and the cross-file functions of dev.c,
 * log.c and htab.c, grouped by defining file (as rxe's rxe_loc.h). The data
 * path (dp/dp.h) and the control path (verbs/verbs.h) build on it; it
 * declares nothing of theirs. Everything hangs off one struct emu_dev; the
 * only process-wide state is the log level (log.c).
 */
#ifndef UROCE_DAEMON_H
#define UROCE_DAEMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <uv.h>

#include "uroce/uapi.h"
#include <uroce/dev_counters.h>
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

/* Move every entry of from to the empty list to (from ends up empty). */
static inline void emu_list_take_all(struct emu_list *to, struct emu_list *from)
{
	emu_list_init(to);
	if (emu_list_empty(from))
		return;
	to->next = from->next;
	to->prev = from->prev;
	to->next->prev = to;
	to->prev->next = to;
	emu_list_init(from);
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
/* Log through a descriptor that never blocks (log.c); before the loop runs. */
void emu_log_open(void);
void emu_log_set_name(const char *name);
/* printf-like; one line to stderr, prefixed with the device name. Keeps errno. */
void emu_log(enum emu_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A rate limit for one kind of message (emu_log_rl): at most
 * EMU_LOG_RL_BURST lines per EMU_LOG_RL_INTERVAL_US; the lines held back
 * are counted and the next line let through says how many.
 */
#define EMU_LOG_RL_BURST 10
#define EMU_LOG_RL_INTERVAL_US 5000000u
struct emu_ratelimit {
	uint64_t begin_us; /* start of the current interval, 0: none yet */
	uint32_t printed;  /* lines logged in it */
	uint64_t missed;   /* lines held back since the last one logged */
};

/* emu_log through rate limit rl. Returns whether the line was logged. */
bool emu_log_rl(struct emu_ratelimit *rl, enum emu_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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
	X(AH, ah)           \
	X(MW, mw)           \
	X(DM, dm)           \
	X(XRCD, xrcd)       \
	X(QP_OPEN, qp_open)

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
	/* RQ/SRQ: entries past cons that an earlier read of the producer
	 * index showed published; taken without reading it again. */
	uint32_t ready;
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
	uint32_t nmw;	   /* memory windows bound to it (dereg is EBUSY meanwhile) */
	struct emu_dm *dm; /* an MR over device memory: addr is the offset in it */
	/* Pages of the MR the owner shares with the daemon (MAP_MR): the
	 * daemon's mapping of [map_addr, map_addr + map_len), NULL: none. */
	uint8_t *map;
	uint64_t map_addr;
	uint64_t map_len;
};

/*
 * Device memory (ibv_alloc_dm): memory the daemon owns, a memfd mapped by
 * the daemon and by the owner; MRs over it (usecnt) are zero based.
 */
struct emu_dm {
	struct emu_obj obj;
	uint8_t *base;	    /* the daemon's mapping */
	uint64_t length;    /* as allocated */
	uint64_t map_bytes; /* the mapping (length rounded up to pages) */
};

/*
 * A memory window (IBA 10.6.7): an R_Key for a part of an MR registered
 * with MW_BIND. Its key index shares the MR index space (dev->mw_keys and
 * dev->mr_keys never hold the same index), the low byte is the key variant
 * a bind changes. Type 1 is valid from allocation and bound by
 * ibv_bind_mw; type 2 is bound, to one QP, by a BIND_MW work request and
 * unbound by invalidation. Bound: mr != NULL and length > 0.
 */
struct emu_mw {
	struct emu_obj obj;
	struct emu_hnode key_node; /* key = rkey >> 8, in dev->mw_keys */
	struct emu_pd *pd;
	uint32_t type; /* 1 or 2 (enum ibv_mw_type) */
	uint32_t rkey;
	bool valid;	   /* type 1 always; type 2 between bind and invalidation */
	struct emu_mr *mr; /* the MR it is bound to, NULL: none */
	struct emu_qp *qp; /* type 2: the QP it is bound to */
	uint64_t addr;	   /* first IOVA of the MR it covers */
	uint64_t length;
	uint32_t access; /* UROCE_ACCESS_REMOTE_* and ZERO_BASED */
};

struct emu_channel {
	struct emu_obj obj;
	int wfd; /* write end of the event pipe */
	/* Its event word in the context's doorbell page (uapi.h chan_event[]),
	 * UROCE_CHAN_NO_SLOT: every event goes through the pipe. */
	uint32_t event_slot;
	uint64_t piped; /* records written to the pipe (published in the slot) */
	uint64_t events;
	uint64_t dropped;
};

struct emu_cq {
	struct emu_obj obj;
	struct emu_channel *channel;
	struct emu_ring ring;
	uint32_t comp_vector;
	uint32_t cqe_requested;
	bool timestamps; /* UROCE_CQ_TIMESTAMPS: stamp each CQE (dp/event.c) */
	int overflowed;
	uint64_t events;
	uint64_t lost;		  /* completions lost since the overrun */
	struct emu_list err_link; /* in dev->err_cqs after an overrun */
	/* In dev->pub_cqs while it holds CQEs written but not yet published
	 * (dp/event.c); pub_fire: one of them fires a solicited-only arm. */
	struct emu_list pub_link;
	bool pub_fire;
};

struct emu_srq {
	struct emu_obj obj;
	struct emu_pd *pd;
	struct emu_ring ring;
	uint32_t srq_num;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit; /* 0: not armed */
	/* An XRC SRQ: its domain handle and CQ; found by number (dev->srqns) */
	struct emu_xrcd *xrcd; /* NULL: a basic SRQ */
	struct emu_cq *cq;
	struct emu_hnode num_node; /* key = srq_num */
};

/*
 * An XRC domain: one daemon object however many contexts opened it. A
 * domain opened through a file is found again by the file's inode
 * (st_dev, st_ino), as the kernel's uverbs keys it, so every process that
 * opens the same file gets the same domain. It lives while anything
 * refers to it: handles, XRC SRQs, target QPs.
 */
struct emu_xrcd_dom {
	struct emu_list link; /* in dev->xrcd_doms */
	bool has_inode;
	uint64_t st_dev;
	uint64_t st_ino;
	uint32_t refs;		 /* handles + XRC SRQs + target QPs */
	struct emu_list tgt_qps; /* its target QPs (emu_qp.xrc_link) */
};

/* A context's handle of an XRC domain; usecnt: SRQs and QPs made through it. */
struct emu_xrcd {
	struct emu_obj obj;
	struct emu_xrcd_dom *dom;
};

/*
 * A handle of an XRC target QP that the context did not create
 * (ibv_open_qp). The QP lives while any handle of it does: the one of its
 * owner (emu_qp.obj) or these; when the owner's goes, the QP passes to the
 * context of one of these (verbs/xrcd.c).
 */
struct emu_qp_open {
	struct emu_obj obj;
	struct emu_list link; /* in emu_qp.opens */
	struct emu_qp *qp;
	struct emu_xrcd *xrcd;
};

struct emu_ah {
	struct emu_obj obj;
	struct emu_pd *pd;
	struct uroce_ah_attr attr;
};

/*
 * A multicast group the RNIC has joined (dp/mcast.c): one socket that holds
 * the IP membership on the RNIC's interface and receives the group's
 * datagrams, kept while QPs are attached to it or RDMA CM joins name it.
 */
struct emu_mcg {
	struct emu_list link; /* in dev->mcgs */
	struct emu_dev *dev;
	uint8_t gid[16]; /* the group as a GID of the device's family */
	int fd;		 /* the group's socket (raw in the exact ICRC mode) */
	bool raw;
	uv_poll_t poll;
	uint32_t refs;		 /* attachments + CM joins */
	uint32_t nqp;		 /* attachments */
	struct emu_list members; /* struct emu_mcast.group_link */
};

/* One attachment of a UD QP to a group (ibv_attach_mcast). */
struct emu_mcast {
	struct emu_list link;	    /* in qp->mcast */
	struct emu_list group_link; /* in mcg->members */
	struct emu_qp *qp;
	struct emu_mcg *mcg;
	uint8_t gid[16]; /* as the application gave them (detach matches them) */
	uint16_t lid;
};

struct emu_qp {
	struct emu_obj obj;
	struct emu_hnode qpn_node;  /* key = qpn, in dev->qpns */
	struct emu_list flush_link; /* in dev->flush_qps while in ERR */
	struct emu_list rnr_link;   /* in dev->rnr_qps while a request waits for a WQE */
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
	uint32_t err_status; /* status of the QP's last error completion, 0: none */
	/*
	 * XRC target QPs (XRC_RECV): the domain handle it was made through
	 * (or passed to), its place in the domain's list and the other
	 * handles of it. Such a QP has no PD, CQs or SRQ of its own: pd,
	 * recv_cq and srq are those of the XRC SRQ the current message named
	 * (datapath.c, op_xrc_srq), held without use counts.
	 */
	struct emu_xrcd *xrcd;
	struct emu_list xrc_link;
	struct emu_list opens;

	/* Data path (datapath.c, timer.c). */
	struct xport_qp x;	    /* the transport engine's QP */
	uint32_t sq_handed;	    /* SQ ring index handed to the engine so far */
	uint32_t rq_done;	    /* RQ ring index of finished receive WQEs (uapi done) */
	struct emu_list sq_link;    /* in dev->sq_qps while its SQ is to be looked at */
	uint32_t db_index;	    /* its send doorbell bit (doorbell.c), UINT32_MAX: none */
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
	pid_t req_pid; /* sender of the request being handled (SCM_CREDENTIALS), 0: unknown */
	int req_fd;    /* descriptor that came with it (MAP_MR's memfd), -1: none */
	int opened;    /* OPEN_CTX done */
	int closing;
	uv_poll_t poll;
	int doorbell_fd; /* eventfd, -1 before OPEN_CTX */
	uv_poll_t doorbell_poll;
	int async_wfd; /* write end of the async event pipe */
	struct emu_list objs[EMU_OBJ_COUNT];
	uint64_t doorbells;
	uint64_t async_lost; /* async events its full pipe had no room for */
	int pending_closes;  /* libuv handles still closing */
	int pidfd;	     /* the connecting process; -1 if pidfd_open failed */
	uv_poll_t pid_poll;  /* readable when that process exits */
	/* The RDMA CM channel this connection is, after CM_OPEN (cm/cm.c). */
	struct emu_cm_chan *cm_chan;
	/* Send doorbells (dp/doorbell.c), after OPEN_CTX: the page the shim
	 * rings and the QP of each bit (db_cap entries, NULL: free). */
	struct uroce_sq_doorbells *sq_db;
	struct emu_qp **db_qps;
	uint32_t db_cap;
	/* Completion channels' event words in sq_db in use (cq.c). */
	uint64_t chan_slots[UROCE_CHAN_EVENT_SLOTS / 64];
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
	uint32_t max_mw;
	uint64_t max_dm_size;  /* one ibv_alloc_dm */
	uint64_t max_dm_total; /* all the device memory of the device */
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
 * recent, then publish "asleep" in the status pages and block. One
 * emu_wait_loop per event loop decides for every RNIC on it (a daemon may
 * host several); each RNIC is an emu_wait member, whose data path is
 * reached through its two callbacks only.
 */
/* Long sched_yield()s that make a CPU-bound neighbour (dp.h, wait.c). */
#define EMU_WAIT_CONTENDED_YIELDS 3

struct emu_wait;

struct emu_wait_loop {
	uv_loop_t *loop;
	uv_prepare_t prepare;
	uv_check_t check;
	uv_idle_t idle;
	uv_timer_t timer;
	struct emu_wait *members;  /* the RNICs on the loop, linked by ->next */
	uint64_t last_work_us;	   /* the last work of any member */
	uint64_t spin_us;	   /* spin this long after it (the members' longest) */
	uint64_t backoff_until_us; /* CPUs oversubscribed: no spinning before */
	/* When the last long yields ended, newest first (0: none yet). */
	uint64_t long_yield_us[EMU_WAIT_CONTENDED_YIELDS - 1];
	uint64_t yields; /* sched_yield()s so far */
	bool spinning;
};

struct emu_wait {
	struct emu_wait_loop *wl; /* NULL until emu_wait_start */
	struct emu_wait *next;
	struct uroce_status_page *status;
	/* One pass over the data path; returns the amount of work done. */
	unsigned (*poll)(void *arg);
	/* Earliest transport deadline in us (0: none). */
	uint64_t (*next_deadline)(void *arg);
	void *arg;
	uint64_t spin_us; /* --spin-us: spin this long after the last work */
	uint64_t *sleeps; /* counter to bump on every block */
};

struct emu_net;
struct emu_capture;
struct emu_dma;
struct emu_fault;

/* The kinds of rate-limited messages (emu_dev.rl). */
enum emu_rl {
	EMU_RL_WC_ERROR,     /* a work request completed with an error */
	EMU_RL_QP_ERROR,     /* a QP moved to Error by the RNIC */
	EMU_RL_CHANNEL_LOST, /* a completion event likewise */
	EMU_RL_CQ_OVERRUN,   /* a CQ overrun */
	EMU_RL_SEND_FAILED,  /* a datagram the kernel refused */
	EMU_RL_MTU_CLAMPED,  /* a path MTU clamped to the active MTU */
	EMU_RL_COUNT
};

/*
 * --icrc: how the ICRC of a received IPv4 packet is checked, given that it
 * covers the IP ID, which a UDP socket does not show (docs/daemon.md).
 */
enum emu_icrc {
	EMU_ICRC_AUTO,	  /* exact where a raw socket can be opened, else tracked */
	EMU_ICRC_EXACT,	  /* receive on a raw socket: the real IP header */
	EMU_ICRC_TRACKED, /* UDP socket; solved IDs held to each sender's sequence */
	EMU_ICRC_ANY,	  /* UDP socket; any solved ID (--icrc-any-id) */
};

struct emu_place;

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
	bool if_loopback;    /* the interface is a loopback one (IFF_LOOPBACK) */
	uint32_t active_mtu; /* enum ibv_mtu value 1..5 */
	struct emu_limits lim;
	struct uroce_res_counts counts;
	uint64_t dm_bytes;    /* device memory allocated (mapped bytes), at most lim.max_dm_total */
	uint32_t sockbuf_req; /* --sockbuf: bytes asked for each UDP buffer */
	int rcvbuf_bytes;     /* SO_RCVBUF obtained, as the kernel reports it */
	int sndbuf_bytes;     /* SO_SNDBUF obtained */

	uv_loop_t *loop;
	int udp_fd;
	/* --icrc exact (IPv4): the raw socket that receives the datagrams,
	 * on a loopback interface only those whose IPv4 ID is not 0
	 * (rx_split: udp_fd receives those with ID 0 and DF, dev.c's
	 * filters); -1 otherwise. */
	int raw_fd;
	bool rx_split;
	bool gso;		/* --gso: full-MTU packets leave in UDP GSO sends (net.c) */
	bool rx_hint;		/* a datagram this process sent waits to be read (net.c) */
	enum emu_icrc icrc;	/* the mode running (never AUTO once bound) */
	enum emu_icrc icrc_req; /* the mode asked for */
	const char *icrc_src;	/* by what (emu_opts.icrc_src) */
	uv_poll_t udp_poll; /* on udp_fd, where it receives (not in the exact mode off loopback) */
	uv_poll_t raw_poll;	/* on raw_fd, in the exact mode */
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
	struct emu_htab mw_keys;
	struct emu_htab srqns;	   /* XRC SRQs by number */
	struct emu_list xrcd_doms; /* XRC domains */
	struct emu_list flush_qps;
	struct emu_list rnr_qps; /* QPs whose request waits for a receive WQE (dp) */
	struct emu_list mcgs;	/* multicast groups joined (dp/mcast.c) */
	uint32_t nmcg;		/* groups in mcgs */
	uint32_t nmcast_attach; /* QP attachments, all groups */
	uint32_t next_handle;
	uint32_t next_srq_num;
	/* QPNs and keys (emu_dev_random): getrandom, unless
	 * --seed made them reproducible (then from this splitmix64 state). */
	bool ids_seeded;
	uint64_t ids_state;

	/* Data path. */
	struct xport_dev x;	     /* the transport engine's device */
	struct emu_list sq_qps;	     /* QPs whose SQ the next pass looks at */
	struct emu_list run_qps;     /* QPs the engine asked to run */
	struct emu_list timer_qps;   /* QPs with an armed engine timer */
	uint64_t timer_min;	     /* timer.c: no deadline is earlier (0: none armed) */
	struct emu_net *net;	     /* net.c: socket buffers and batches */
	struct emu_capture *capture; /* capture.c; NULL without --pcap */
	struct emu_dma *dma;	     /* dma.c: staged writes, read-ahead */
	struct emu_fault *fault;     /* fault.c: fault rules, held packets */
	bool fault_on;		     /* rules exist or packets are held */
	struct emu_wait wait;	     /* wait.c: spin, then sleep */
	struct emu_place *place;     /* place.c: the process's placement (NULL: none) */
	uint32_t ack_hold_us;	     /* net.c: how long a batch of ACKs waits */
	bool prof;		     /* --profile: time the data path (dp/prof.c) */
	uint64_t map_budget;	     /* --map-budget: MR pages it may map (verbs/mr.c) */
	uint64_t map_bytes;	     /* MR pages it maps now */
	/* The handler of QP1's MADs (cm/cm.c sets it; NULL: dropped, unmatched). */
	void (*gsi_recv)(struct emu_dev *dev, const struct xport_gsi_mad *m);
	struct emu_cm *cm;  /* cm/cm.c: ids, listeners, channels */
	uint8_t cm_timeout; /* --cm-timeout: CM response timeout, 4.096 us * 2^N */
	uint8_t cm_retries; /* --cm-retries: resends of an unanswered REQ/REP/DREQ */
	uint64_t dcnt[EMU_DCNT_COUNT];
	struct emu_ratelimit rl[EMU_RL_COUNT];
	struct emu_list err_cqs; /* CQs overrun whose QPs still go to ERR */
	struct emu_list pub_cqs; /* CQs with CQEs the reveal gate publishes */
	int stopping;
};

/* Scheduling priority uroced asks for unless --nice says otherwise. */
#define EMU_NICE_DEFAULT (-10)

/*
 * Registered memory a device maps at most (MAP_MR, verbs/mr.c): those pages
 * count in the daemon's resident size (they are the programs' memory, shared,
 * not more of it), so past this the DMA engine reaches MRs with
 * process_vm_* as before.
 */
#define EMU_MAP_BUDGET_DEFAULT (16ull << 20)

/* Options of uroced (main.c parses them; dev.c applies the device's). */
struct emu_opts {
	const char *name;
	const char *addr;
	uint16_t port;
	const char *rundir;
	uint32_t mtu_bytes; /* 0: derive from the interface */
	const char *pcap_path;
	uint32_t pcap_snaplen; /* --pcap-snaplen, 0: whole frames */
	uint64_t pcap_size;    /* --pcap-size BYTES: a new file past it, 0: one file */
	uint32_t pcap_files;   /* --pcap-files N: keep the last N (ring), 0: all */
	uint64_t pcap_buffer;  /* --pcap-buffer BYTES: frames waiting for the file, 0: default */
	uint32_t spin_us;      /* --spin-us, when spin_set */
	int spin_set;
	int verbosity;		  /* enum emu_log_level */
	int nice;		  /* --nice, or EMU_NICE_DEFAULT */
	int cpu;		  /* --cpu: EMU_PLACE_AUTO, EMU_PLACE_NONE or a CPU (dp.h) */
	int nice_set;		  /* --nice was given */
	int icrc;		  /* --icrc: enum emu_icrc */
	const char *icrc_src;	  /* what set it ("--icrc", "UROCE_ICRC"...), NULL: default */
	const char **fault_rules; /* --fault RULE..., checked by parse() */
	unsigned nfault_rules;
	const char *fault_file; /* --fault-file */
	const char *fault_log;	/* --fault-log */
	uint64_t seed;		/* --seed */
	bool seed_set;		/* --seed was given: reproducible QPNs and keys too */
	uint32_t sockbuf;	/* --sockbuf BYTES, 0: EMU_SOCKBUF_DEFAULT_BYTES */
	uint8_t cm_timeout;	/* --cm-timeout EXP (EMU_CM_TIMEOUT_DEFAULT) */
	uint8_t cm_retries;	/* --cm-retries N (EMU_CM_RETRIES_DEFAULT) */
	int no_gso;		/* --gso off */
	uint32_t rnr_hold_us;	/* --rnr-hold-us (EMU_RNR_HOLD_US_DEFAULT) */
	uint32_t ack_hold_us;	/* --ack-hold-us (EMU_NET_ACK_HOLD_US) */
	bool profile;		/* --profile */
	uint64_t map_budget;	/* --map-budget BYTES (EMU_MAP_BUDGET_DEFAULT) */
};

/* How long a request waits for a receive WQE before the RNR NAK: under the
 * requester's shortest retransmission timeout (250 us), so it never resends
 * what is only waiting. */
#define EMU_RNR_HOLD_US_DEFAULT 200

/* The CM's response timeout (4.096 us * 2^20, ~4.3 s) and retries, as Linux's rdma_cm sends. */
#define EMU_CM_TIMEOUT_DEFAULT 20
#define EMU_CM_RETRIES_DEFAULT 15

/* UDP socket buffer size uroced asks for (each of receive and send). */
#define EMU_SOCKBUF_DEFAULT_BYTES (16u * 1024 * 1024)

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
 * input, having freed what it allocated; emu_dev_close() undoes a success. */
int emu_dev_setup(struct emu_dev *dev, const struct emu_opts *o);
/* Bind the UDP socket (RoCEv2) on addr:port with buffers of sockbuf_req
 * bytes (forced past net.core.[rw]mem_max when privileged); the sizes
 * obtained are in rcvbuf_bytes/sndbuf_bytes and logged. Then the ICRC mode
 * of icrc_req: for exact (or auto with CAP_NET_RAW) over IPv4, the raw
 * receive socket; dev->icrc is the mode that runs, logged with why, and
 * the engine's icrc_mode is set. -1 with a message on failure (exact asked
 * for and no raw socket is one). */
int emu_dev_bind_udp(struct emu_dev *dev);
/* Attach the raw receive socket's filter to fd: UDP datagrams to IPv4
 * address addr and port only, and with skip_id0 none of those the exact
 * mode's UDP socket receives (ID 0, DF). 0, or -1 with errno. */
int emu_dev_raw_filter(int fd, const uint8_t addr[4], uint16_t port, bool skip_id0);
/* The --icrc mode's name (exact, tracked, any, auto). */
const char *emu_dev_icrc_name(enum emu_icrc m);
/* Close the UDP socket (and the raw one; no-op when not bound). */
void emu_dev_unbind_udp(struct emu_dev *dev);
/* Create the sealed device status page. 0 or -errno. */
int emu_dev_status_page(struct emu_dev *dev);
/* Unmap and close the status page (no-op when there is none). */
void emu_dev_status_page_free(struct emu_dev *dev);
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
/* Undo emu_dev_setup() (the tables); safe after a failed setup too. */
void emu_dev_close(struct emu_dev *dev);
/* Find an MR by lkey/rkey (device-wide). */
struct emu_mr *emu_dev_mr_by_key(struct emu_dev *dev, uint32_t key);
/* The memory window whose key index (key >> 8) this is, whatever its key
 * byte (device-wide); NULL when the index is no window's. */
struct emu_mw *emu_dev_mw_by_index(struct emu_dev *dev, uint32_t key);
/* Find a QP by its number (device-wide). */
struct emu_qp *emu_dev_qp_by_qpn(struct emu_dev *dev, uint32_t qpn);
/*
 * 32 unpredictable bits for QPNs and keys: from getrandom(2), or, when the
 * daemon was started with --seed, a sequence that depends only on the seed
 * (reproducible runs: the tutorial, tests that compare two runs).
 */
uint32_t emu_dev_random(struct emu_dev *dev);
/* The XRC SRQ with this SRQ number, or NULL (basic SRQs are not found). */
struct emu_srq *emu_dev_xrc_srq_by_num(struct emu_dev *dev, uint32_t srqn);
/* Validate an address vector against the device (port, GRH present, source
 * GID index, rate), as for a RoCE port. 0 or -EINVAL. */
int emu_dev_check_ah(const struct emu_dev *dev, const struct uroce_ah_attr *a);

#endif /* UROCE_DAEMON_H */
