/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's header: the RC/UC/UD transport of the daemon as a
 * self-contained engine, split the way Linux rxe splits it (requester,
 * responder, completer, receive checks). This header holds the engine's
 * structs, the ops struct through which the engine reaches everything
 * outside it (network, memory, receive queues, CQs, clock, timers), the
 * entry points the daemon calls, and the cross-file functions grouped by
 * defining file. The engine depends on libc and wire/ only: no sockets, no
 * libuv, no shared memory. It is single threaded: every entry point for one
 * device must be called from the same thread, and no op may call back into
 * the engine (send_packet queues or sends, it never delivers synchronously).
 *
 * All enums that mirror libibverbs (QP types and states, WR opcodes and
 * flags, WC status/opcode/flags, access flags, modify masks, MTU) use the
 * exact numeric values of <infiniband/verbs.h>, so the daemon copies them to
 * and from the shared rings without translation; tests/rc checks this.
 */
#ifndef EMU_XPORT_H
#define EMU_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <wire/opcode.h>
#include "xport_counters.h"

/* Limits of the engine's own WQE copies (the daemon validates against them). */
#define EMU_XPORT_MAX_SGE 32
#define EMU_XPORT_MAX_INLINE_BYTES 256
#define EMU_XPORT_MAX_MSG_BYTES 0x80000000u /* 2 GiB, ibv max_msg_sz */
#define EMU_XPORT_MAX_PMTU_BYTES 4096
/* BTH + the longest extended header run an engine packet uses, rounded up. */
#define EMU_XPORT_MAX_HDR_BYTES 64
#define EMU_XPORT_ICRC_BYTES 4
/* One packet: headers, payload, pad, ICRC. */
#define EMU_XPORT_MAX_PKT_BYTES \
	(EMU_XPORT_MAX_HDR_BYTES + EMU_XPORT_MAX_PMTU_BYTES + 4 + EMU_XPORT_ICRC_BYTES)
/* Requester window and AckReq spacing (rxe RXE_MAX_UNACKED_PSNS, RXE_MAX_PKT_PER_ACK). */
#define EMU_XPORT_MAX_UNACKED_PSNS 128
#define EMU_XPORT_MAX_PKT_PER_ACK 64
/* Cap of max_rd_atomic and max_dest_rd_atomic (rxe caps both at 128). */
#define EMU_XPORT_MAX_RD_ATOMIC 128
/* READ response packets sent per run before yielding to other work. */
#define EMU_XPORT_READ_BURST 256
/* Requests held while READ responses stream (more are dropped and counted). */
#define EMU_XPORT_MAX_DEFERRED 64
#define EMU_XPORT_ROCE_PORT 4791
#define EMU_XPORT_GID_BYTES 16

/* QP types: values of enum ibv_qp_type. */
#define EMU_XQPT_LIST(X) X(RC, 2, "RC") X(UC, 3, "UC") X(UD, 4, "UD")
enum emu_xqp_type {
#define EMU_X_ENUM(sym, val, name) EMU_XQPT_##sym = (val),
	EMU_XQPT_LIST(EMU_X_ENUM)
#undef EMU_X_ENUM
};

/* QP states: values of enum ibv_qp_state. */
#define EMU_XQPS_LIST(X)     \
	X(RESET, 0, "RESET") \
	X(INIT, 1, "INIT")   \
	X(RTR, 2, "RTR")     \
	X(RTS, 3, "RTS")     \
	X(SQD, 4, "SQD")     \
	X(SQE, 5, "SQE")     \
	X(ERR, 6, "ERR")
enum emu_xqp_state {
#define EMU_X_ENUM(sym, val, name) EMU_XQPS_##sym = (val),
	EMU_XQPS_LIST(EMU_X_ENUM)
#undef EMU_X_ENUM
};

/* Send work request opcodes: values of enum ibv_wr_opcode. */
#define EMU_XWR_LIST(X)                                  \
	X(RDMA_WRITE, 0, "RDMA_WRITE")                   \
	X(RDMA_WRITE_WITH_IMM, 1, "RDMA_WRITE_WITH_IMM") \
	X(SEND, 2, "SEND")                               \
	X(SEND_WITH_IMM, 3, "SEND_WITH_IMM")             \
	X(RDMA_READ, 4, "RDMA_READ")                     \
	X(ATOMIC_CMP_AND_SWP, 5, "ATOMIC_CMP_AND_SWP")   \
	X(ATOMIC_FETCH_AND_ADD, 6, "ATOMIC_FETCH_AND_ADD")
enum emu_xwr_opcode {
#define EMU_X_ENUM(sym, val, name) EMU_XWR_##sym = (val),
	EMU_XWR_LIST(EMU_X_ENUM)
#undef EMU_X_ENUM
};

/* Completion status: values of enum ibv_wc_status. */
#define EMU_XWC_LIST(X)                                          \
	X(SUCCESS, 0, "success")                                 \
	X(LOC_LEN_ERR, 1, "local length error")                  \
	X(LOC_QP_OP_ERR, 2, "local QP operation error")          \
	X(LOC_EEC_OP_ERR, 3, "local EE context operation error") \
	X(LOC_PROT_ERR, 4, "local protection error")             \
	X(WR_FLUSH_ERR, 5, "Work Request Flushed Error")         \
	X(MW_BIND_ERR, 6, "memory management operation error")   \
	X(BAD_RESP_ERR, 7, "bad response error")                 \
	X(LOC_ACCESS_ERR, 8, "local access error")               \
	X(REM_INV_REQ_ERR, 9, "remote invalid request error")    \
	X(REM_ACCESS_ERR, 10, "remote access error")             \
	X(REM_OP_ERR, 11, "remote operation error")              \
	X(RETRY_EXC_ERR, 12, "transport retry counter exceeded") \
	X(RNR_RETRY_EXC_ERR, 13, "RNR retry counter exceeded")   \
	X(LOC_RDD_VIOL_ERR, 14, "local RDD violation error")     \
	X(REM_INV_RD_REQ_ERR, 15, "remote invalid RD request")   \
	X(REM_ABORT_ERR, 16, "aborted error")                    \
	X(INV_EECN_ERR, 17, "invalid EE context number")         \
	X(INV_EEC_STATE_ERR, 18, "invalid EE context state")     \
	X(FATAL_ERR, 19, "fatal error")                          \
	X(RESP_TIMEOUT_ERR, 20, "response timeout error")        \
	X(GENERAL_ERR, 21, "general error")
enum emu_xwc_status {
#define EMU_X_ENUM(sym, val, name) EMU_XWC_##sym = (val),
	EMU_XWC_LIST(EMU_X_ENUM)
#undef EMU_X_ENUM
};

/* Completion opcodes: values of enum ibv_wc_opcode. */
enum emu_xwc_opcode {
	EMU_XWC_OP_SEND = 0,
	EMU_XWC_OP_RDMA_WRITE = 1,
	EMU_XWC_OP_RDMA_READ = 2,
	EMU_XWC_OP_COMP_SWAP = 3,
	EMU_XWC_OP_FETCH_ADD = 4,
	EMU_XWC_OP_RECV = 128,
	EMU_XWC_OP_RECV_RDMA_WITH_IMM = 129,
};

/* ibv_wc_flags bits. */
enum {
	EMU_XWC_GRH = 0x1,
	EMU_XWC_WITH_IMM = 0x2,
};

/* ibv_send_flags bits. */
enum {
	EMU_XSEND_FENCE = 0x1,
	EMU_XSEND_SIGNALED = 0x2,
	EMU_XSEND_SOLICITED = 0x4,
	EMU_XSEND_INLINE = 0x8,
};

/* ibv_access_flags bits the transport checks. */
enum {
	EMU_XACCESS_LOCAL_WRITE = 0x1,
	EMU_XACCESS_REMOTE_WRITE = 0x2,
	EMU_XACCESS_REMOTE_READ = 0x4,
	EMU_XACCESS_REMOTE_ATOMIC = 0x8,
};

/* ibv_qp_attr_mask bits emu_xport_modify understands. */
enum {
	EMU_XQP_STATE = 1 << 0,
	EMU_XQP_ACCESS_FLAGS = 1 << 3,
	EMU_XQP_PKEY_INDEX = 1 << 4,
	EMU_XQP_QKEY = 1 << 6,
	EMU_XQP_AV = 1 << 7,
	EMU_XQP_PATH_MTU = 1 << 8,
	EMU_XQP_TIMEOUT = 1 << 9,
	EMU_XQP_RETRY_CNT = 1 << 10,
	EMU_XQP_RNR_RETRY = 1 << 11,
	EMU_XQP_RQ_PSN = 1 << 12,
	EMU_XQP_MAX_QP_RD_ATOMIC = 1 << 13,
	EMU_XQP_MIN_RNR_TIMER = 1 << 15,
	EMU_XQP_SQ_PSN = 1 << 16,
	EMU_XQP_MAX_DEST_RD_ATOMIC = 1 << 17,
	EMU_XQP_DEST_QPN = 1 << 20,
};

/* Direction of a DMA op. */
enum emu_xdma {
	EMU_XDMA_CHECK,	   /* only check key, range and access; buf unused */
	EMU_XDMA_TO_BUF,   /* copy application memory into buf */
	EMU_XDMA_FROM_BUF, /* copy buf into application memory */
};

enum emu_xatomic_op {
	EMU_XATOMIC_CMP_SWP,
	EMU_XATOMIC_FETCH_ADD,
};

/*
 * A network path: the two GIDs (IPv4-mapped ::ffff:a.b.c.d, or IPv6) and UDP
 * ports of a packet. On send the engine fills sgid/dgid/ports/tclass/
 * hop_limit; on receive the daemon fills them from recvmsg() (source from
 * the name, destination from IP_PKTINFO). ip_id_known/ip_id/ip_df describe
 * the real IPv4 header when the net layer saw it (raw socket); otherwise the
 * engine assumes what a uroce peer sends: ID 0 with DF (PROTOCOL.md 12).
 */
struct emu_xroute {
	uint8_t sgid[EMU_XPORT_GID_BYTES];
	uint8_t dgid[EMU_XPORT_GID_BYTES];
	uint16_t sport;
	uint16_t dport;
	uint8_t tclass;
	uint8_t hop_limit;
	bool ip_id_known;
	bool ip_df;
	uint16_t ip_id;
};

/* An address vector as the transport needs it (RC/UC path, UD destination). */
struct emu_xav {
	uint8_t dgid[EMU_XPORT_GID_BYTES];
	uint8_t sgid[EMU_XPORT_GID_BYTES];
	uint8_t tclass;
	uint8_t hop_limit;
};

struct emu_xsge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * A send work request, as the daemon hands it over after reading it from
 * the SQ ring. The engine keeps its own copy until completion and re-reads
 * the SGEs' memory on every (re)transmission, as a NIC does.
 */
struct emu_xwqe {
	uint64_t wr_id;
	uint32_t opcode;   /* enum emu_xwr_opcode */
	uint32_t flags;	   /* EMU_XSEND_* */
	uint32_t imm_data; /* as in ibv_send_wr: network byte order, copied verbatim */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add; /* CmpSwap compare value / FetchAdd addend */
	uint64_t swap;
	/* UD only */
	struct emu_xav ud_av;
	uint32_t ud_remote_qpn;
	uint32_t ud_remote_qkey;
	uint32_t num_sge;
	struct emu_xsge sge[EMU_XPORT_MAX_SGE];
	uint32_t inline_len; /* with EMU_XSEND_INLINE: payload is inline_data */
	uint8_t inline_data[EMU_XPORT_MAX_INLINE_BYTES];
};

/* A receive work request (RQ or SRQ), taken by the engine with get_recv_wqe. */
struct emu_xrecv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	struct emu_xsge sge[EMU_XPORT_MAX_SGE];
};

/* A completion, with the fields and values of struct ibv_wc. */
struct emu_xcqe {
	uint64_t wr_id;
	uint32_t status; /* enum emu_xwc_status */
	uint32_t opcode; /* enum emu_xwc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* network byte order, as in ibv_wc */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags; /* EMU_XWC_GRH | EMU_XWC_WITH_IMM */
	uint16_t pkey_index;
	bool solicited; /* the message had SE set: wakes a CQ armed solicited-only */
};

struct emu_xqp;

/*
 * Everything outside the engine. Every op gets the ctx given to
 * emu_xport_dev_init. Return conventions: 0 or -errno.
 */
struct emu_xport_ops {
	/*
	 * Send one UDP payload (BTH .. ICRC, ICRC already appended) on the
	 * path rt (rt->sgid is the source address to send from). The buffer is
	 * only valid during the call. Must not call back into the engine. A
	 * failure counts as a lost packet (the transport recovers it).
	 */
	int (*send_packet)(void *ctx, struct emu_xqp *qp, const struct emu_xroute *rt,
			   const void *pkt, size_t len);
	/* The QP with this number, or NULL. Valid until the engine returns. */
	struct emu_xqp *(*lookup_qp)(void *ctx, uint32_t qpn);
	/*
	 * Local memory: lkey must belong to the QP's PD and allow `access`
	 * (EMU_XACCESS_LOCAL_WRITE when writing, 0 when reading) over
	 * [addr, addr+len). Copies len bytes in direction dir. Returns 0,
	 * -ENOENT (no such key, or another PD), -ERANGE (outside the MR),
	 * -EACCES (access flags), -EFAULT (the memory could not be copied).
	 */
	int (*dma_lkey)(void *ctx, struct emu_xqp *qp, uint32_t lkey, uint64_t addr, void *buf,
			size_t len, uint32_t access, enum emu_xdma dir);
	/* Remote memory (an R_Key from the wire): same contract as dma_lkey. */
	int (*dma_rkey)(void *ctx, struct emu_xqp *qp, uint32_t rkey, uint64_t va, void *buf,
			size_t len, uint32_t access, enum emu_xdma dir);
	/*
	 * Execute an 8-byte atomic at va (8-byte aligned, checked by the
	 * engine) under R_Key rkey with REMOTE_ATOMIC access, atomically with
	 * respect to every other atomic of the device. *orig receives the
	 * previous value (host order). Errors as dma_rkey.
	 */
	int (*atomic)(void *ctx, struct emu_xqp *qp, uint32_t rkey, uint64_t va,
		      enum emu_xatomic_op op, uint64_t compare_add, uint64_t swap, uint64_t *orig);
	/*
	 * Take (pop) the next receive WQE of the QP's RQ or SRQ into *wqe.
	 * Returns 0, or -EAGAIN when there is none. The engine owns the WQE from
	 * then on and completes it exactly once (success, error or flush).
	 */
	int (*get_recv_wqe)(void *ctx, struct emu_xqp *qp, struct emu_xrecv_wqe *wqe);
	/* Push a completion to the QP's send CQ (recv false) or receive CQ. */
	void (*push_cqe)(void *ctx, struct emu_xqp *qp, bool recv, const struct emu_xcqe *cqe);
	/* Monotonic clock in microseconds. */
	uint64_t (*now_us)(void *ctx);
	/*
	 * Arm the QP's single timer for an absolute time (now_us scale); 0
	 * cancels it. When it fires the daemon calls emu_xport_timeout(qp);
	 * firing early or late is harmless.
	 */
	void (*arm_timer)(void *ctx, struct emu_xqp *qp, uint64_t deadline_us);
	/* The QP has more work: call emu_xport_run(qp) soon (not from inside). */
	void (*schedule)(void *ctx, struct emu_xqp *qp);
	/*
	 * The engine moved the QP to ERR by itself (retries exhausted, NAK,
	 * local protection error...). The engine has already flushed its own
	 * send WQEs and the receive WQE it held (and the RQ, unless the QP uses
	 * an SRQ); the daemon raises IBV_EVENT_QP_FATAL-style events and flushes
	 * SQ ring entries not yet handed to the engine. May be NULL.
	 */
	void (*qp_error)(void *ctx, struct emu_xqp *qp);
	/*
	 * Optional: the send queue of a QP in SQD has drained: every message
	 * started before the move to SQD is complete (its CQE pushed). Called
	 * once per move into SQD. May be NULL.
	 */
	void (*sq_drained)(void *ctx, struct emu_xqp *qp);
	/*
	 * Optional: the first request packet arrived on an RC or UC QP in RTR
	 * (IBV_EVENT_COMM_EST). Called at most once until the QP is reset.
	 * May be NULL.
	 */
	void (*comm_est)(void *ctx, struct emu_xqp *qp);
};

/* Per-device state: one per RNIC. */
struct emu_xdev {
	const struct emu_xport_ops *ops;
	void *ctx;
	/*
	 * Accept IPv4 packets whose ICRC only matches for some other IP ID
	 * (senders that do not use ID 0, e.g. Linux rxe), by solving for the ID
	 * (wire_icrc_solve_ipv4_id). Off by default: such a check keeps only 16
	 * bits of strength, and a uroce peer always sends ID 0.
	 */
	bool icrc_solve_id;
	uint64_t drops[EMU_XDROP_COUNT];
	uint64_t cnt[EMU_XCNT_COUNT];
};

/* Attributes the engine keeps (ibv_qp_attr subset, values as in verbs). */
struct emu_xqp_attr {
	uint32_t state;	 /* enum emu_xqp_state */
	uint32_t access; /* EMU_XACCESS_REMOTE_* allowed on this QP */
	uint16_t pkey;	 /* the P_Key value (not the index), 0xFFFF by default */
	uint16_t pkey_index;
	uint32_t qkey;
	struct emu_xav av;
	uint8_t path_mtu; /* ibv_mtu: 1=256 .. 5=4096 */
	uint8_t timeout;  /* 4.096 us * 2^timeout, 0 = no retransmission timer */
	uint8_t retry_cnt;
	uint8_t rnr_retry; /* 7 = retry forever */
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qpn;
};

struct emu_xqp_init {
	uint32_t type; /* enum emu_xqp_type */
	uint32_t qpn;
	uint32_t max_send_wr; /* capacity of the engine's send queue copy */
	bool sq_sig_all;
	bool srq; /* receives come from an SRQ: never flushed by the engine */
};

/* A parsed, checked packet as recv.c hands it to the responder/completer. */
struct emu_xpkt {
	const uint8_t *buf; /* BTH .. end of pad (ICRC not included) */
	size_t len;
	const struct wire_opcode_info *info;
	uint32_t mask; /* info->mask */
	uint8_t opcode;
	uint8_t pad;
	bool ackreq;
	bool se;
	uint16_t pkey;
	uint32_t psn;
	uint32_t qpn;
	const uint8_t *payload;
	uint32_t paylen;
	const struct emu_xroute *rt;
};

/* State of one send WQE copy. */
enum emu_xwqe_state {
	EMU_XWQE_POSTED,     /* not started (or rewound by a retry) */
	EMU_XWQE_PROCESSING, /* some packets sent */
	EMU_XWQE_PENDING,    /* all packets sent, waiting for the ACK/responses */
	EMU_XWQE_DONE_LOCAL, /* UC/UD: sent, completes as soon as it is the oldest */
	EMU_XWQE_ERROR,	     /* failed locally: completes with status when oldest */
};

struct emu_xswqe {
	struct emu_xwqe wr;
	uint8_t state;	 /* enum emu_xwqe_state */
	uint32_t status; /* for EMU_XWQE_ERROR */
	uint32_t length; /* message length in bytes */
	uint32_t
	    offset; /* bytes already covered by sent packets (SEND/WRITE) or responses (READ) */
	uint32_t first_psn;
	uint32_t last_psn;
};

/* Requester state (req.c). */
struct emu_xreq {
	uint32_t psn;	     /* next PSN to send */
	uint32_t hw_psn;     /* one past the highest PSN ever sent (retransmissions are below) */
	uint32_t idx;	     /* send queue index of the next WQE to work on */
	uint32_t hw_idx;     /* one past the highest WQE index ever started */
	uint32_t noack_pkts; /* packets sent since the last AckReq */
	uint32_t rd_atomic;  /* READ/atomic WQEs issued and not completed */
	bool need_retry;     /* go back to comp.psn before sending anything */
	bool wait_rnr;	     /* RNR NAK received: nothing until the RNR timer */
	bool drained_told;   /* sq_drained already reported for this SQD */
};

/* Completer state (comp.c). */
struct emu_xcomp {
	uint32_t psn;	    /* oldest PSN not yet acknowledged */
	uint32_t idx;	    /* send queue index of the oldest uncompleted WQE */
	uint8_t retry_left; /* retries left before IBV_WC_RETRY_EXC_ERR */
	uint8_t rnr_left;   /* RNR retries left (7 = forever) */
	bool retried;	    /* a NAK/implied-NAK retry already went out at retried_psn */
	uint32_t retried_psn;
	uint64_t retrans_deadline; /* 0 = not armed */
	uint64_t rnr_deadline;	   /* 0 = not waiting */
	uint64_t armed;		   /* deadline last given to arm_timer */
};

enum emu_xres_type {
	EMU_XRES_FREE,
	EMU_XRES_READ,
	EMU_XRES_ATOMIC,
};

/* A responder resource: a READ or atomic kept for replay (rxe resp_res). */
struct emu_xres {
	uint8_t type; /* enum emu_xres_type */
	uint32_t first_psn;
	uint32_t last_psn;
	/* READ: the original request, and the current (re)send position */
	uint64_t va_org;
	uint32_t rkey;
	uint32_t length;
	uint64_t va;
	uint32_t resid;
	uint32_t cur_psn;
	bool started; /* a response of this (re)send already went out: Middle/Last next */
	/* atomic */
	uint64_t orig;
};

struct emu_xdeferred {
	struct emu_xroute rt;
	size_t len;
	uint8_t buf[EMU_XPORT_MAX_PKT_BYTES];
};

/* Responder state (resp.c). */
struct emu_xresp {
	uint32_t psn; /* expected PSN */
	uint32_t msn;
	bool sent_psn_nak;  /* one NAK per gap, then silence until psn arrives */
	uint32_t last_mask; /* opcode mask of the last packet accepted; 0 = at a message boundary */
	bool has_wqe;
	struct emu_xrecv_wqe wqe;
	uint32_t wqe_off; /* bytes placed into wqe so far */
	/* current WRITE */
	uint64_t va;
	uint32_t rkey;
	uint32_t resid;
	uint32_t write_len;
	bool uc_drop; /* UC: drop the rest of the current message */
	/* READ/atomic resources: a ring of max_dest_rd_atomic entries */
	struct emu_xres *res;
	uint32_t res_head;
	struct emu_xres *stream; /* READ whose responses are being sent */
	/* requests that arrived while stream was active, in order */
	struct emu_xdeferred *deferred; /* ring of EMU_XPORT_MAX_DEFERRED, allocated on first use */
	uint32_t dhead;
	uint32_t ndeferred;
	bool replaying;	    /* a deferred request is being processed: do not defer it again */
	bool comm_est_told; /* comm_est already reported since the last reset */
};

/* One QP's transport state. The daemon embeds it in its QP object. */
struct emu_xqp {
	struct emu_xdev *dev;
	uint32_t type; /* enum emu_xqp_type */
	uint32_t qpn;
	bool sq_sig_all;
	bool srq;
	bool scheduled;
	struct emu_xqp_attr attr;
	uint32_t pmtu;	/* path MTU in bytes */
	uint16_t sport; /* UDP source port of this QP's packets */
	uint16_t dport; /* UDP destination port (4791; a daemon on another port uses its own) */
	/* send queue copies: a ring of sq_size, indices run freely */
	struct emu_xswqe *sq;
	uint32_t sq_size; /* power of two >= sq_cap, so free-running indices wrap cleanly */
	uint32_t sq_cap;  /* max_send_wr: how many WQEs may be outstanding */
	uint32_t sq_tail; /* index of the next free slot */
	struct emu_xreq req;
	struct emu_xcomp comp;
	struct emu_xresp resp;
	uint64_t drops[EMU_XDROP_COUNT];
	uint64_t cnt[EMU_XCNT_COUNT];
};

/* ---- Entry points for the daemon ------------------------------------ */

/* xport.c */

/* Set up a device with its ops; zeroes the counters. */
void emu_xport_dev_init(struct emu_xdev *dev, const struct emu_xport_ops *ops, void *ctx);
/*
 * Initialise qp (RESET state) for dev. Allocates the send queue copy and the
 * responder resources. Returns 0, -EINVAL (bad type / size) or -ENOMEM.
 */
int emu_xport_qp_init(struct emu_xdev *dev, struct emu_xqp *qp, const struct emu_xqp_init *init);
/* Release what emu_xport_qp_init allocated; pushes no completions. */
void emu_xport_qp_fini(struct emu_xqp *qp);
/*
 * Apply the attributes selected by mask (EMU_XQP_*), as ibv_modify_qp does
 * after the daemon has validated the transition (qp.c owns that table).
 * ->RESET clears all transport state; ->RTR/RTS load the PSNs; ->ERR flushes
 * (no qp_error callback, the application asked for it); SQD stops the
 * requester at a message boundary. Returns 0 or -EINVAL (value out of range).
 */
int emu_xport_modify(struct emu_xqp *qp, const struct emu_xqp_attr *attr, uint32_t mask);
/* Current attributes, with sq_psn/rq_psn being the next PSNs (ibv_query_qp). */
void emu_xport_query(const struct emu_xqp *qp, struct emu_xqp_attr *attr);
/*
 * Hand one validated send WR to the engine and start sending. Returns 0;
 * -EAGAIN when the engine's copy of the SQ is full (retry after completions);
 * -EINVAL in RESET. In ERR the WR completes at once with IBV_WC_WR_FLUSH_ERR.
 * A WR the transport cannot carry (opcode not valid for the QP type, too
 * many SGEs, atomic without an 8-byte buffer, message too long) is accepted
 * and completes in order with IBV_WC_LOC_QP_OP_ERR / LOC_LEN_ERR, moving the
 * QP to ERR, as a NIC reports a bad WQE.
 */
int emu_xport_post_send(struct emu_xqp *qp, const struct emu_xwqe *wqe);
/*
 * Do deferred work (READ responses beyond a burst, requests queued behind
 * them, requester sends). Returns true while more work remains (the engine
 * calls ops->schedule again in that case).
 */
bool emu_xport_run(struct emu_xqp *qp);
/* The QP's timer fired: retransmit, end an RNR wait, or re-arm. */
void emu_xport_timeout(struct emu_xqp *qp);
/*
 * Complete every receive WQE get_recv_wqe still returns with
 * IBV_WC_WR_FLUSH_ERR; call after posting receives to a QP in ERR.
 * Returns the number flushed (0 for SRQ QPs).
 */
unsigned emu_xport_flush_recv(struct emu_xqp *qp);
/* Free slots in the engine's send queue copy. */
uint32_t emu_xport_sq_free(const struct emu_xqp *qp);

/* recv.c */

/*
 * One received UDP payload (BTH .. ICRC) addressed to this device, with its
 * path (source = the peer). Runs every check of PROTOCOL.md section 10,
 * counts drops by reason, and hands the packet to the responder or the
 * completer of its QP. Never fails: bad packets are counted and dropped.
 */
void emu_recv_packet(struct emu_xdev *dev, const struct emu_xroute *rt, const void *buf,
		     size_t len);

/* Names for counters and enums (static strings; "?" when out of range). */
const char *emu_xport_drop_name(unsigned reason);
const char *emu_xport_cnt_name(unsigned cnt);
const char *emu_xport_wc_status_name(unsigned status);
const char *emu_xport_qp_state_name(unsigned state);
const char *emu_xport_wr_opcode_name(unsigned opcode);

/* ---- Cross-file functions inside the engine -------------------------- */

/* xport.c */

/* Count an event on the QP and its device. */
static inline void emu_xport_count(struct emu_xqp *qp, enum emu_xcnt c, uint64_t n)
{
	qp->cnt[c] += n;
	qp->dev->cnt[c] += n;
}

/* Count a dropped packet on the device and, when known, on the QP. */
static inline void emu_xport_drop(struct emu_xdev *dev, struct emu_xqp *qp, enum emu_xdrop r)
{
	dev->drops[r]++;
	if (qp)
		qp->drops[r]++;
}

/* Path MTU in bytes for an ibv_mtu value 1..5; 0 when invalid. */
uint32_t emu_xport_mtu_bytes(unsigned mtu);
/* Retransmission timeout of the `timeout` attribute in us (0 = none). */
uint64_t emu_xport_timeout_us(unsigned timeout);
/* The UDP source port of a QP: 0xC000 + 14-bit hash of the QPN. */
uint16_t emu_xport_udp_sport(uint32_t qpn);
/*
 * Fill the BTH at pkt for an RC/UC packet of qp to its dest QP (UD callers
 * overwrite destqp). pad is set from paylen.
 */
void emu_xport_bth(const struct emu_xqp *qp, uint8_t *pkt, uint8_t opcode, uint32_t psn,
		   bool ackreq, uint32_t paylen);
/*
 * Zero the pad after a payload that ends at pkt+len, append the ICRC for
 * path rt and send: pkt must have room for 3 + 4 more bytes. Counts
 * TX_PKTS/TX_BYTES (paylen) or TX_ERR. Returns what send_packet returned.
 */
int emu_xport_xmit(struct emu_xqp *qp, const struct emu_xroute *rt, uint8_t *pkt, size_t len,
		   uint32_t paylen);
/* The path of the QP's RC/UC packets (source = us). */
void emu_xport_route(const struct emu_xqp *qp, struct emu_xroute *rt);
/*
 * Copy len bytes between buf and the memory the SGE list describes,
 * starting offset bytes into it. Returns 0, -ENOSPC when the list is
 * shorter than offset+len, or the first dma_lkey error.
 */
int emu_xport_sge_copy(struct emu_xqp *qp, const struct emu_xsge *sge, uint32_t nsge,
		       uint32_t offset, void *buf, uint32_t len, uint32_t access,
		       enum emu_xdma dir);
/* Total length of an SGE list (saturating at UINT32_MAX). */
uint32_t emu_xport_sge_len(const struct emu_xsge *sge, uint32_t nsge);
/* The send queue slot of index i. */
static inline struct emu_xswqe *emu_xport_sq_at(const struct emu_xqp *qp, uint32_t i)
{
	return &qp->sq[i % qp->sq_size];
}
/* Ask the daemon to call emu_xport_run (once until it does). */
void emu_xport_schedule(struct emu_xqp *qp);
/* Recompute the QP's timer from the retransmission and RNR deadlines. */
void emu_xport_timer_update(struct emu_xqp *qp);
/*
 * Move to ERR and flush: every send WQE from the oldest uncompleted one
 * (IBV_WC_WR_FLUSH_ERR), the held receive WQE and, without SRQ, the RQ.
 */
void emu_xport_flush(struct emu_xqp *qp);
/* Is a GID an IPv4-mapped address (::ffff:a.b.c.d)? */
bool emu_xport_gid_is_v4(const uint8_t gid[EMU_XPORT_GID_BYTES]);
/*
 * ICRC of an IB packet (BTH..pad, ib_len bytes) on path rt: IPv4 with the
 * route's IP ID and DF when known, else ID 0 and DF (what a uroce sender's
 * kernel emits, PROTOCOL.md 12); IPv6 otherwise.
 */
uint32_t emu_xport_icrc(const struct emu_xroute *rt, const uint8_t *ib, size_t ib_len);
/*
 * The transport hit a fatal error: move to ERR, flush every send WQE from
 * the oldest uncompleted one, the held receive WQE and (no SRQ) the RQ, and
 * tell the daemon through ops->qp_error. Idempotent.
 */
void emu_xport_error(struct emu_xqp *qp);
/* Is this WR opcode a READ or an atomic (consumes initiator depth)? */
static inline bool emu_xport_is_rd_atomic(uint32_t wr_opcode)
{
	return wr_opcode == EMU_XWR_RDMA_READ || wr_opcode == EMU_XWR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == EMU_XWR_ATOMIC_FETCH_AND_ADD;
}

/* req.c */

/*
 * Pure: the BTH opcode of a packet of a message of wr_opcode on a QP of
 * type, given whether it is the message's first and last packet. Returns
 * the opcode, or -EINVAL when the transport cannot carry the WR.
 */
int emu_req_opcode(uint32_t qp_type, uint32_t wr_opcode, bool first, bool last);
/* Pure: packets (= PSNs) of a message of len bytes at pmtu: max(1, ceil). */
uint32_t emu_req_npkts(uint32_t len, uint32_t pmtu);
/*
 * Pure: does a packet carry AckReq? Always on the message's last packet,
 * and on every EMU_XPORT_MAX_PKT_PER_ACK-th packet sent without one
 * (noack = packets since the last AckReq before this one).
 */
bool emu_req_ackreq(bool last, uint32_t noack);
/*
 * Pure: validate a WR for a QP type; returns 0 or the completion status
 * (EMU_XWC_LOC_QP_OP_ERR, EMU_XWC_LOC_LEN_ERR) it must fail with.
 */
uint32_t emu_req_check_wqe(uint32_t qp_type, const struct emu_xwqe *wqe, uint32_t *length);
/* Send what the window, fences and initiator depth allow. */
void emu_req_run(struct emu_xqp *qp);
/* Reset requester state (RESET, or new sq_psn). */
void emu_req_reset(struct emu_xqp *qp);

/* comp.c */

/* What the completer does with a response, given its PSN (pure decision). */
enum emu_comp_psn {
	EMU_COMP_PSN_COMPLETE_PREV, /* beyond a finished SEND/WRITE: coalesced ACK completes it */
	EMU_COMP_PSN_IMPLIED_NAK,   /* beyond a READ/atomic: its response was skipped, retry */
	EMU_COMP_PSN_STALE,	    /* older than comp.psn: duplicate, ignore */
	EMU_COMP_PSN_GAP,	    /* READ/atomic response beyond comp.psn: one was lost */
	EMU_COMP_PSN_BOGUS,	    /* beyond anything sent: ignore */
	EMU_COMP_PSN_PROCESS,	    /* acknowledges this WQE */
};
enum emu_comp_psn emu_comp_check_psn(uint32_t psn, uint32_t comp_psn, uint32_t last_psn,
				     bool all_sent, bool rd_atomic);
/* A response packet (ACK, NAK, READ response, atomic ACK) for an RC QP. */
void emu_comp_rcv(struct emu_xqp *qp, const struct emu_xpkt *pkt);
/* Timer work: RNR wait over, retransmission timeout. */
void emu_comp_timeout(struct emu_xqp *qp, uint64_t now);
/*
 * Complete the oldest WQE with status (CQE if signaled or failed), then
 * complete any following WQEs that are already finished locally (UC/UD) or
 * failed; a failure moves the QP to ERR.
 */
void emu_comp_complete(struct emu_xqp *qp, struct emu_xswqe *wqe, uint32_t status);
/* Complete leading WQEs that need no response (UC/UD sent, local errors). */
void emu_comp_drain(struct emu_xqp *qp);
/* Reset completer state from the current attributes. */
void emu_comp_reset(struct emu_xqp *qp);
/* (Re)arm the retransmission timer if packets are outstanding, else stop it. */
void emu_comp_rearm(struct emu_xqp *qp);

/* resp.c */

/* Pure: may a request with opcode mask `mask` follow one with `prev` (0 = boundary)? */
bool emu_resp_seq_ok(uint32_t prev, uint32_t mask);
/* Pure: is paylen right for a request packet with this mask at pmtu (PROTOCOL.md 5)? */
bool emu_resp_len_ok(uint32_t mask, uint32_t paylen, uint32_t pmtu);
/* A request packet for this QP (RC/UC/UD). */
void emu_resp_rcv(struct emu_xqp *qp, const struct emu_xpkt *pkt);
/* Continue streaming READ responses and process deferred requests. */
bool emu_resp_run(struct emu_xqp *qp);
/* Drop every responder state (RESET); keeps the allocations. */
void emu_resp_reset(struct emu_xqp *qp);
/* Complete the held receive WQE (if any) with status. */
void emu_resp_flush_wqe(struct emu_xqp *qp, uint32_t status);

/* recv.c */

/*
 * Parse buf (BTH .. ICRC) into pkt: opcode, headers, payload. Returns 0, or
 * -1 - reason (an enum emu_xdrop) when it is malformed.
 */
int emu_recv_parse(const uint8_t *buf, size_t len, const struct emu_xroute *rt,
		   struct emu_xpkt *pkt);
/* Pure: does packet P_Key a match QP P_Key b (PROTOCOL.md 10)? */
bool emu_recv_pkey_ok(uint16_t a, uint16_t b);
/* Check the ICRC of buf (BTH .. ICRC) as received on path rt. */
bool emu_recv_icrc_ok(struct emu_xdev *dev, const struct emu_xroute *rt, const uint8_t *buf,
		      size_t len);
/* Run the per-QP checks on a parsed packet and dispatch it (also for deferred requests). */
void emu_recv_dispatch(struct emu_xqp *qp, const struct emu_xpkt *pkt);

#endif /* EMU_XPORT_H */
