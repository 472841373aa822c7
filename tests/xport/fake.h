/* SPDX-License-Identifier: MIT */
/*
 * A fake world for the transport engine's unit tests: hosts with fake
 * memory regions, receive queues and CQs, a fake clock and per-QP timers,
 * and a network that queues every packet the engine sends, logs it (opcode,
 * PSN, AckReq, syndrome...) and can drop, duplicate, reorder or corrupt
 * packets, either by a deterministic seeded random draw or by a scripted
 * filter. Nothing is delivered inside send_packet: fake_run() delivers,
 * runs scheduled QPs and, when the network is idle, advances the clock to
 * the next timer. By default the network is a FIFO with no delay (packet
 * order and counts are exact, time passes only on timers); fake_net_timed()
 * turns it into two links with a rate, a delay with jitter and their own
 * seeded faults, on which packets arrive when their time comes (jitter and
 * reordering delays make them overtake each other, as netem does), for
 * measuring goodput.
 */
#ifndef TESTS_RC_FAKE_H
#define TESTS_RC_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xport_int.h"

#define FAKE_MAX_MR 8
#define FAKE_MAX_QP 6
#define FAKE_RQ_SIZE 1024

struct fake_net;
struct fake_host;

struct fake_mr {
	uint32_t key; /* lkey == rkey */
	uint8_t *buf;
	size_t len;
	uint32_t access;
	/* A stand-in for a memory window: its key can be invalidated (then
	 * it is dead: no access finds it) and a bind of mw_handle = its
	 * index + 1 revives it under the bind's R_Key. */
	bool window;
	bool dead;
};

/*
 * An XRC SRQ of a host: a receive queue and a CQ of its own, in XRC domain
 * `domain`, found by its number (the XRCETH) through the xrc_srq op.
 */
#define FAKE_MAX_SRQ 4
struct fake_srq {
	uint32_t num;
	int domain;
	struct xport_recv_wqe rq[64];
	unsigned rq_head, rq_tail;
	struct uroce_cqe cq[64];
	unsigned ncq;
};

struct fake_qp {
	struct xport_qp x; /* first: container of the engine QP */
	struct fake_host *host;
	struct xport_recv_wqe *rq; /* FAKE_RQ_SIZE entries, malloc'd: only what is posted is touched */
	unsigned rq_head, rq_tail;
	struct uroce_cqe *scq, *rcq;
	unsigned nscq, nrcq, cap_scq, cap_rcq;
	uint64_t timer; /* armed deadline, 0 = none */
	bool scheduled;
	unsigned qp_errors;	  /* qp_error callbacks */
	unsigned drained;	  /* sq_drained callbacks */
	unsigned nscq_at_drained; /* nscq when sq_drained was last called */
	unsigned comm_est;	  /* comm_est callbacks */
	bool mcast;		  /* attached to the host's multicast group */
	int xrc_domain;		  /* XRC target QPs: their domain */
	struct fake_srq *xrc_srq; /* ... and the SRQ the current message named */
};

struct fake_host {
	struct xport_dev dev;
	struct fake_net *net;
	int id; /* 0 = A, 1 = B */
	uint8_t gid[XPORT_GID_BYTES];
	struct fake_mr mr[FAKE_MAX_MR];
	int nmr;
	struct fake_qp *qp[FAKE_MAX_QP];
	int nqp;
	uint64_t atomics; /* atomic ops executed */
	uint64_t flushes; /* flush ops that succeeded */
	/* the last flush op's arguments */
	uint64_t flush_va;
	uint32_t flush_len, flush_access;
	bool flush_whole;
	uint64_t dma_calls;
	uint64_t dma_folds;		    /* dma_read_crc calls (fake_fold) */
	unsigned binds, invals;		    /* bind_mw / invalidate calls that succeeded */
	unsigned failed_mw_ops;		    /* ... and that failed */
	bool last_inv_remote;		    /* the last invalidate's remote argument */
	uint8_t mcast_gid[XPORT_GID_BYTES]; /* the one group its mcast QPs are in */
	unsigned mcast_calls;		    /* mcast_each calls */
	struct fake_srq srq[FAKE_MAX_SRQ];
	int nsrq;
	/* The tx_buf op's buffer: scribbled on each time it is handed out,
	 * so a packet built there must write every byte it sends; packets
	 * send_packet got in it. */
	uint8_t tx_buf[XPORT_MAX_PKT_BYTES];
	uint64_t tx_in_place;
	uint64_t ticks; /* the ticks op's clock: FAKE_TICK more at each read */
	uint64_t clock_reads; /* now_us calls */
};
#define FAKE_TICK 7

/* One packet as the network saw it. */
struct fake_log {
	int from; /* host id of the sender */
	uint8_t opcode;
	uint32_t psn;
	uint32_t qpn;
	bool ackreq;
	bool se;
	int syndrome; /* AETH syndrome or -1 */
	uint32_t msn;
	uint32_t paylen;
	uint32_t dmalen; /* RETH DMA length or 0 */
	uint64_t va;	 /* RETH/AtomicETH VA or 0 */
	int fate;	 /* FAKE_DELIVER, FAKE_DROP, ... (bits) */
	int srqn;	 /* XRCETH SRQ number or -1 */
	int feth_plt;	 /* FETH placement type or -1 */
	int feth_sel;	 /* FETH selectivity level or -1 */
	uint32_t rkey;	 /* RETH R_Key of a FLUSH */
	uint32_t crc;	 /* CRC-32 of the whole packet as sent */
};

enum {
	FAKE_DROP = 1,
	FAKE_DUP = 2,
	FAKE_REORDER = 4,
	FAKE_CORRUPT = 8,
};

struct fake_inflight {
	struct fake_host *to;
	struct xport_route rt;
	size_t len;
	uint8_t buf[XPORT_MAX_PKT_BYTES];
};

/*
 * One direction of a timed network (fake_net_timed): packets leave at
 * rate_bpus bytes per microsecond (0 = no limit) one after another, arrive
 * delay_us + a uniform draw in [-jitter_us, +jitter_us] later; drop_pm,
 * dup_pm and corrupt_pm per mille of them are dropped, duplicated or
 * corrupted, and reorder_pm per mille are held reorder_us longer.
 */
struct fake_link {
	uint32_t rate_bpus;
	uint32_t delay_us, jitter_us;
	unsigned drop_pm, dup_pm, corrupt_pm, reorder_pm;
	uint32_t reorder_us;
	uint64_t busy_until; /* when the link finishes sending what it has */
};

/* A packet of the timed network, ordered by arrival time. */
struct fake_timed {
	uint64_t at;
	uint64_t seq; /* sending order, to break ties */
	struct fake_inflight f;
};

/* Return FAKE_* bits to apply to this packet (scripted faults). */
typedef int (*fake_filter_cb)(struct fake_net *net, const struct fake_log *e, void *arg);

struct fake_net {
	uint64_t now;
	struct fake_host *host[2];
	struct fake_inflight *q; /* FIFO ring */
	unsigned qhead, qlen, qcap;
	struct fake_log *log;
	unsigned nlog, caplog;
	/* random faults, in per mille of packets */
	unsigned drop_pm, dup_pm, reorder_pm, corrupt_pm;
	uint64_t rng;
	fake_filter_cb filter;
	void *filter_arg;
	unsigned delivered, dropped, duplicated, reordered, corrupted;
	unsigned corrupted_masked; /* corruptions of BTH byte 4, outside the ICRC */
	unsigned timers_fired;
	/* timed mode (fake_net_timed): link[i] carries what host i sends */
	bool timed;
	struct fake_link link[2];
	struct fake_timed **heap; /* min-heap on (at, seq) */
	unsigned nheap, capheap;
	uint64_t seq;
	bool nolog;	 /* keep no per-packet log (long benchmarks) */
	unsigned logged; /* packets sent, also when nolog */
};

void fake_net_init(struct fake_net *net, uint64_t seed);
void fake_net_fini(struct fake_net *net);
/*
 * Make net a timed network: a_to_b carries host 0's packets, b_to_a host
 * 1's (copied). The FIFO faults (drop_pm...) and the filter still apply on
 * top. Call before anything is sent.
 */
void fake_net_timed(struct fake_net *net, const struct fake_link *a_to_b,
		    const struct fake_link *b_to_a);
/*
 * Hosts made while this is set offer the dma_read_crc op (payloads folded
 * into the ICRC as they are gathered, as the daemon does); otherwise not.
 */
extern bool fake_fold;
/* A host with IPv4 address a.b.c.d (GID ::ffff:a.b.c.d). */
void fake_host_init(struct fake_host *h, struct fake_net *net, int id, const uint8_t ip[4]);
void fake_host_fini(struct fake_host *h);
/* Register len zeroed bytes with access; returns the MR. */
struct fake_mr *fake_mr_reg(struct fake_host *h, size_t len, uint32_t access);
/* Create a QP (RESET state). */
struct fake_qp *fake_qp_create(struct fake_host *h, uint32_t type, uint32_t qpn,
			       uint32_t max_send_wr, bool sq_sig_all);
/* The same with the QP's SGE and inline limits (0, 0: the engine's maxima). */
struct fake_qp *fake_qp_create_caps(struct fake_host *h, uint32_t type, uint32_t qpn,
				    uint32_t max_send_wr, bool sq_sig_all, uint32_t max_sge,
				    uint32_t max_inline);

/* Connection parameters for fake_connect. */
struct fake_conn {
	uint8_t mtu; /* ibv_mtu 1..5 */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint32_t access;
	uint32_t psn_a, psn_b; /* initial send PSNs of a and b */
};
/* Defaults: MTU 1024, timeout 14, retry 7, rnr_retry 7, rnr timer 1, depth 16, all access. */
void fake_conn_defaults(struct fake_conn *c);
/* Move both QPs RESET -> INIT -> RTR -> RTS, connected to each other. */
void fake_connect(struct fake_qp *a, struct fake_qp *b, const struct fake_conn *c);

/* An XRC SRQ numbered num in XRC domain `domain` of host h. */
struct fake_srq *fake_srq_create(struct fake_host *h, uint32_t num, int domain);
/* Post a receive of [mr->buf+off, +len) to an XRC SRQ. */
void fake_srq_post_recv(struct fake_srq *s, uint64_t wr_id, struct fake_mr *mr, size_t off,
			uint32_t len);

/* Post a receive of [mr->buf+off, +len). */
void fake_post_recv(struct fake_qp *q, uint64_t wr_id, struct fake_mr *mr, size_t off,
		    uint32_t len);
/* Fill a WQE of one SGE over [mr->buf+off, +len) (mr may be NULL: no SGE). */
void fake_wqe(struct xport_wqe *w, uint64_t wr_id, uint32_t opcode, uint32_t flags,
	      struct fake_mr *mr, size_t off, uint32_t len);
/* Target a remote MR for WRITE/READ/atomics. */
void fake_wqe_remote(struct xport_wqe *w, struct fake_mr *rmr, size_t roff);
int fake_post(struct fake_qp *q, const struct xport_wqe *w);

/*
 * Send a hand-built RC request from q to its peer as if q's requester had
 * sent it (it goes on the network and into the log like any packet): BTH
 * with AckReq as given, a RETH (rva, rkey, dmalen) when the opcode has one,
 * and paylen bytes from payload. For responder tests that need a sequence
 * no requester of ours would send.
 */
void fake_send_req(struct fake_qp *q, uint8_t opcode, uint32_t psn, bool ackreq,
		   const uint8_t *payload, uint32_t paylen, uint64_t rva, uint32_t rkey,
		   uint32_t dmalen);
/* The same for an opcode with an XRCETH (XRC requests): it names srqn. */
void fake_send_xrc_req(struct fake_qp *q, uint8_t opcode, uint32_t psn, bool ackreq,
		       const uint8_t *payload, uint32_t paylen, uint32_t srqn);

/* Deliver packets, run scheduled QPs, fire timers; stops when all is idle
 * or after max_events. Returns the number of events processed. */
unsigned fake_run(struct fake_net *net, unsigned max_events);
/* Deliver only what is queued now (no timers). */
unsigned fake_deliver_all(struct fake_net *net);

/* Print the packet log, one line per packet, to stderr (for debugging a test). */
void fake_dump(const struct fake_net *net);
/* Log helpers: count packets from host `from` with opcode (-1 = any). */
unsigned fake_count(const struct fake_net *net, int from, int opcode);
/* Index of the n-th (0-based) packet from `from` with opcode, or -1. */
int fake_find(const struct fake_net *net, int from, int opcode, unsigned n);

/* Two hosts (10.0.0.1 = A, 10.0.0.2 = B), one RC QP each (0x11, 0x22),
 * connected, and a 4 MiB MR with every access flag on each side. */
struct fake_env {
	struct fake_net net;
	struct fake_host a, b;
	struct fake_qp *qa, *qb;
	struct fake_mr *ma, *mb;
	struct fake_conn conn;
};
#define FAKE_MR_BYTES (4u << 20)
#define FAKE_ALL_ACCESS                                                                    \
	(UROCE_ACCESS_LOCAL_WRITE | UROCE_ACCESS_REMOTE_WRITE | UROCE_ACCESS_REMOTE_READ | \
	 UROCE_ACCESS_REMOTE_ATOMIC)
/* c NULL: fake_conn_defaults. type: UROCE_QPT_RC/UC. */
struct fake_env *fake_env_new(uint64_t seed, uint32_t type, const struct fake_conn *c);
void fake_env_free(struct fake_env *e);

/* Fill buffer with a pattern derived from seed. */
void fake_pattern(uint8_t *buf, size_t len, uint32_t seed);

#endif /* TESTS_RC_FAKE_H */
