/* SPDX-License-Identifier: MIT */
/*
 * The transport engine's header: the RC/UC/UD transport of the daemon as a
 * self-contained engine, split the way Linux rxe splits it (requester,
 * responder, completer, receive checks). This header holds the engine's
 * structs, the ops struct through which the engine reaches everything
 * outside it (network, memory, receive queues, CQs, clock, timers), the
 * entry points the daemon calls (libuv's uv.h; the engine's own cross-file
 * functions are in xport_int.h, private). The engine depends on libc and wire/ only: no sockets, no
 * libuv, no shared memory. It is single threaded: every entry point for one
 * device must be called from the same thread, and no op may call back into
 * the engine (send_packet queues or sends, it never delivers synchronously).
 *
 * Verbs values (QP types and states, WR opcodes and flags, WC status/opcode/
 * flags, access flags, modify masks) are the uapi's, from <uroce/enums.h>:
 * the numbers of <infiniband/verbs.h>, so the daemon copies them to and from
 * the shared rings without translation; tests/xport checks them against
 * rdma-core's header.
 */
#ifndef UROCE_XPORT_H
#define UROCE_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <wire/icrc.h>
#include <wire/opcode.h>
#include <uroce/counters.h>
#include <uroce/cqe.h>
#include <uroce/enums.h>

/* Limits of the engine's own WQE copies (the daemon validates against them). */
#define XPORT_MAX_SGE 32
#define XPORT_MAX_INLINE_BYTES 256
#define XPORT_MAX_MSG_BYTES 0x80000000u /* 2 GiB, ibv max_msg_sz */
#define XPORT_MAX_PMTU_BYTES 4096
/* BTH + the longest extended header run an engine packet uses, rounded up. */
#define XPORT_MAX_HDR_BYTES 64
#define XPORT_ICRC_BYTES 4
/* One packet: headers, payload, pad, ICRC. */
#define XPORT_MAX_PKT_BYTES (XPORT_MAX_HDR_BYTES + XPORT_MAX_PMTU_BYTES + 4 + XPORT_ICRC_BYTES)
/*
 * Requester window and AckReq spacing (rxe RXE_MAX_UNACKED_PSNS,
 * RXE_MAX_PKT_PER_ACK): the most the adaptive window (cc.c) opens to, and
 * the widest AckReq spacing, which it narrows to half the window.
 */
#define XPORT_MAX_UNACKED_PSNS 128
#define XPORT_MAX_PKT_PER_ACK 64
/* The adaptive window's first and smallest size, in packets (cc.c). */
#define XPORT_CWND_INIT 32
#define XPORT_CWND_MIN 2
/*
 * The adaptive retransmission timeout (cc.c): never shorter than this,
 * doubled at most this many times in a row; never longer than the QP's
 * IBA timeout, whose expiries alone spend retry_cnt.
 */
#define XPORT_RTO_MIN_US 250
#define XPORT_RTO_MAX_BACKOFF 10
/*
 * While it repairs a loss signalled by a NAK, the requester keeps at most
 * this many packets beyond the oldest unacknowledged PSN (the last with
 * AckReq): each answer shows how far the responder really is (a uroce
 * responder holds what came after a gap, so the next hole is all that is
 * missing), and go-back-N proceeds from there, a probe at a time, until
 * the recovery point is acknowledged or a timer takes over (comp.c).
 */
#define XPORT_RETX_PROBE 2
/*
 * Reordering score of a path (cc.c): +1 per spurious NAK rewind, -1 per
 * confirmed loss, at most XPORT_REORDER_MAX; from XPORT_REORDER_TRUST on
 * NAKs no longer shrink the window.
 */
#define XPORT_REORDER_MAX 8
#define XPORT_REORDER_TRUST 2
/* Cap of max_rd_atomic and max_dest_rd_atomic (rxe caps both at 128). */
#define XPORT_MAX_RD_ATOMIC 128
/* READ response packets sent per run before yielding to other work. */
#define XPORT_READ_BURST 256
/*
 * Packets a QP's responder or completer queue holds (more are dropped and
 * counted): in practice requests held while READ responses stream.
 */
#define XPORT_MAX_DEFERRED 64
/*
 * RC requests beyond the expected PSN that the responder holds until the
 * gap before them is filled (recv.c xport__held_put): at most this many
 * PSNs ahead, and at most XPORT_HELD_MAX_BYTES of them per device.
 */
#define XPORT_HELD_SLOTS XPORT_MAX_UNACKED_PSNS
#define XPORT_HELD_MAX_BYTES (16u << 20)
#define XPORT_ROCE_PORT 4791
#define XPORT_GID_BYTES 16

/*
 * Verbs values (QP types and states, WR and WC opcodes, WC status and
 * flags, send and access flags, modify masks) are the uapi's UROCE_*
 * names from <uroce/enums.h>, the numbers of <infiniband/verbs.h>.
 */

/* Direction of a DMA op. */
/*
 * Added to the access of a dma_lkey call that scatters into a receive WQE:
 * an L_Key of a WQE taken from an SRQ belongs to the SRQ's PD, not the
 * QP's (IBA 10.2.9.1: the SRQ's PD governs its WQEs). Not an access bit.
 */
#define XPORT_ACCESS_RECV_WQE (1u << 31)

enum xport_dma {
	XPORT_DMA_CHECK,    /* only check key, range and access; buf unused */
	XPORT_DMA_TO_BUF,   /* copy application memory into buf */
	XPORT_DMA_FROM_BUF, /* copy buf into application memory */
};

enum xport_atomic_op {
	XPORT_ATOMIC_CMP_SWP,
	XPORT_ATOMIC_FETCH_ADD,
	XPORT_ATOMIC_WRITE, /* ATOMIC WRITE: compare_add stored, needs remote write access */
};

/*
 * A network path: the two GIDs (IPv4-mapped ::ffff:a.b.c.d, or IPv6) and UDP
 * ports of a packet. On send the engine fills sgid/dgid/ports/tclass/
 * hop_limit; on receive the daemon fills them from recvmsg() (source from
 * the name, destination from IP_PKTINFO). ip_id_known/ip_id/ip_df describe
 * the real IPv4 header when the net layer saw it (raw socket); otherwise the
 * engine assumes what a uroce peer sends: DF and ID ip_id_guess, which is 0
 * (PROTOCOL.md 12) except for the segments of a UDP GSO send that arrived
 * as one GRO datagram: the kernel numbers a send's segments 0, 1, 2, ...
 */
struct xport_route {
	uint8_t sgid[XPORT_GID_BYTES];
	uint8_t dgid[XPORT_GID_BYTES];
	uint16_t sport;
	uint16_t dport;
	uint8_t tclass;
	uint8_t hop_limit;
	bool ip_id_known;
	bool ip_df;
	uint16_t ip_id;
	uint16_t ip_id_guess;
};

/* An address vector as the transport needs it (RC/UC path, UD destination). */
struct xport_av {
	uint8_t dgid[XPORT_GID_BYTES];
	uint8_t sgid[XPORT_GID_BYTES];
	uint8_t tclass;
	uint8_t hop_limit;
};

struct xport_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * A memory window bind (IBA 10.6.7.3): the window, its R_Key after the bind
 * and the part of an MR it is to cover (mr_lkey 0: none). LOCAL_INV and
 * SEND_WITH_INV carry their R_Key in imm_data (host order).
 */
struct xport_bind {
	uint32_t mw_handle;
	uint32_t rkey;
	uint32_t mr_lkey;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
};

/*
 * A send work request, as the daemon hands it over after reading it from
 * the SQ ring. The engine keeps its own copy until completion and re-reads
 * the SGEs' memory on every (re)transmission, as a NIC does. A WR carries
 * either SGEs or inline data (UROCE_SEND_INLINE), never both, so the two
 * share the tail of the struct; the engine's copy keeps only as much of
 * that tail as the QP's max_sge and max_inline need (xport_qp_init).
 */
struct xport_wqe {
	uint64_t wr_id;
	uint32_t opcode;   /* enum uroce_wr_opcode */
	uint32_t flags;	   /* UROCE_SEND_* */
	uint32_t imm_data; /* as in ibv_send_wr: network byte order, copied verbatim */
	uint64_t remote_addr;
	uint32_t rkey;
	/*
	 * What only some opcodes carry, each read only for its opcodes: an
	 * atomic, a FLUSH, a bind and a UD SEND exclude one another, so they
	 * share the space (the engine keeps a copy of every WQE of the ring:
	 * thousands of QPs).
	 */
	union {
		struct {
			uint64_t compare_add; /* CmpSwap compare value / FetchAdd addend */
			uint64_t swap;
		};
		/* FLUSH: the RETH's DMA length and the FETH (UROCE_FLUSH_* values) */
		struct {
			uint32_t flush_len;
			uint8_t flush_type;
			uint8_t flush_level;
		};
		/* BIND_MW: what the bind_mw op executes (the daemon's object handles) */
		struct xport_bind bind;
		/* UD only (SEND, SEND with immediate) */
		struct {
			struct xport_av ud_av;
			uint32_t ud_remote_qpn;
			uint32_t ud_remote_qkey;
		};
	};
	/* XRC initiator QPs: the XRC SRQ at the target (the XRCETH, 24 bits) */
	uint32_t xrc_srqn;
	uint32_t num_sge;
	uint32_t inline_len; /* with UROCE_SEND_INLINE: payload is inline_data */
	/* Last: the engine's copy is cut short after what the QP needs. */
	union {
		struct xport_sge sge[XPORT_MAX_SGE];	     /* without UROCE_SEND_INLINE */
		uint8_t inline_data[XPORT_MAX_INLINE_BYTES]; /* with it */
	};
};

/* A receive work request (RQ or SRQ), taken by the engine with get_recv_wqe. */
struct xport_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	/* The WQE as posted was malformed (more SGEs than the queue holds):
	 * a message placed into it completes it with LOC_QP_OP_ERR, where
	 * buffers that are not valid memory give LOC_PROT_ERR. */
	bool malformed;
	struct xport_sge sge[XPORT_MAX_SGE];
};

struct xport_qp;

/*
 * A management datagram that arrived on QP1, the general services (GSI) QP
 * the RNIC owns itself (IBA 13.5.1): a UD SEND to QP 1 with the GSI Q_Key.
 * Valid during the gsi_recv call only.
 */
struct xport_gsi_mad {
	const struct xport_route *rt; /* the path it came on (source = the sender) */
	const uint8_t *mad;	      /* the UD payload: the MAD */
	uint32_t len;
	uint32_t src_qpn; /* DETH source QP: where replies go */
	uint16_t pkey;	  /* BTH P_Key, for the reply */
};

/*
 * Everything outside the engine. Every op gets the ctx given to
 * xport_dev_init. Return conventions: 0 or -errno.
 */
struct xport_ops {
	/*
	 * Send one UDP payload (BTH .. ICRC, ICRC already appended) of qp
	 * (NULL for QP1's MADs) on the path rt (rt->sgid is the source
	 * address to send from). The buffer is
	 * only valid during the call. Must not call back into the engine. A
	 * failure counts as a lost packet (the transport recovers it).
	 */
	int (*send_packet)(void *ctx, struct xport_qp *qp, const struct xport_route *rt,
			   const void *pkt, size_t len);
	/*
	 * Where the next packet may be built: XPORT_MAX_PKT_BYTES that stay
	 * as they are until the next send_packet or tx_buf call, so that
	 * send_packet, given this buffer, queues it where it lies instead of
	 * copying it. NULL (or no op): build it elsewhere. The engine may
	 * leave a buffer unused (a packet it gave up on).
	 */
	void *(*tx_buf)(void *ctx);
	/* The QP with this number, or NULL. Valid until the engine returns. */
	struct xport_qp *(*lookup_qp)(void *ctx, uint32_t qpn);
	/*
	 * Local memory: lkey must belong to the QP's PD and allow `access`
	 * (UROCE_ACCESS_LOCAL_WRITE when writing, 0 when reading) over
	 * [addr, addr+len). Copies len bytes in direction dir. Returns 0,
	 * -ENOENT (no such key, or another PD), -ERANGE (outside the MR),
	 * -EACCES (access flags), -EFAULT (the memory could not be copied).
	 */
	int (*dma_lkey)(void *ctx, struct xport_qp *qp, uint32_t lkey, uint64_t addr, void *buf,
			size_t len, uint32_t access, enum xport_dma dir);
	/* Remote memory (an R_Key from the wire): same contract as dma_lkey. */
	int (*dma_rkey)(void *ctx, struct xport_qp *qp, uint32_t rkey, uint64_t va, void *buf,
			size_t len, uint32_t access, enum xport_dma dir);
	/*
	 * May be NULL. A read of a packet's payload (XPORT_DMA_TO_BUF) under
	 * an L_Key (remote false: checks and errors as dma_lkey) or an R_Key
	 * (remote true: as dma_rkey) that also folds the bytes read into *crc,
	 * wire_crc32_update's register: the ICRC is computed on the way, in
	 * one pass over the bytes where the memory can be copied with the CPU
	 * (wire_crc32_update_copy). *crc is unchanged on an error.
	 */
	int (*dma_read_crc)(void *ctx, struct xport_qp *qp, uint32_t key, bool remote,
			    uint64_t addr, void *buf, size_t len, uint32_t access, uint32_t *crc);
	/*
	 * Execute an 8-byte atomic at va (8-byte aligned, checked by the
	 * engine) under R_Key rkey with REMOTE_ATOMIC access, atomically with
	 * respect to every other atomic of the device. *orig receives the
	 * previous value (host order). XPORT_ATOMIC_WRITE stores the 8 bytes
	 * of compare_add as they are (no byte order: the payload's bytes)
	 * under REMOTE_WRITE access, as one store with respect to every other
	 * access of the device; *orig is not set. Errors as dma_rkey.
	 */
	int (*atomic)(void *ctx, struct xport_qp *qp, uint32_t rkey, uint64_t va,
		      enum xport_atomic_op op, uint64_t compare_add, uint64_t swap, uint64_t *orig);
	/*
	 * FLUSH (IBA A19) as responder: rkey must name memory of the QP's PD
	 * (an MR, or a window over one) whose access has every bit of
	 * `access` (UROCE_ACCESS_FLUSH_GLOBAL and/or _PERSISTENT, one per
	 * placement type asked for); with whole_mr (selectivity level MR) the
	 * range is the whole MR and va/len are not looked at, else
	 * [va, va+len) must lie inside it. Then every earlier write of the
	 * device to application memory is placed, so that what the requester
	 * wrote before the FLUSH is visible to the target's CPU by the time
	 * the FLUSH is answered. Errors as dma_rkey. May be NULL: FLUSH is
	 * then NAKed Invalid Request.
	 */
	int (*flush)(void *ctx, struct xport_qp *qp, uint32_t rkey, uint64_t va, uint32_t len,
		     uint32_t access, bool whole_mr);
	/*
	 * Memory windows (IBA 10.6.7), the local operations the requester
	 * executes in their turn: bind_mw binds wqe->bind for the QP, and
	 * invalidate invalidates the R_Key rkey, for LOCAL_INV (remote
	 * false) or for a SEND with Invalidate the QP received (remote
	 * true). Both return 0 or -errno (the WR or the request failed).
	 * May be NULL: BIND_MW then fails with IBV_WC_MW_BIND_ERR and
	 * invalidations fail.
	 */
	int (*bind_mw)(void *ctx, struct xport_qp *qp, const struct xport_wqe *wqe);
	int (*invalidate)(void *ctx, struct xport_qp *qp, uint32_t rkey, bool remote);
	/*
	 * Take (pop) the next receive WQE of the QP's RQ or SRQ into *wqe.
	 * Returns 0, or -EAGAIN when there is none. The engine owns the WQE from
	 * then on and completes it exactly once (success, error or flush).
	 */
	int (*get_recv_wqe)(void *ctx, struct xport_qp *qp, struct xport_recv_wqe *wqe);
	/* Push a completion to the QP's send CQ (recv false) or receive CQ. */
	void (*push_cqe)(void *ctx, struct xport_qp *qp, bool recv, const struct uroce_cqe *cqe);
	/*
	 * Optional: send WQEs of the QP completed, with or without a CQE
	 * (unsignaled WRs, flushes): the engine holds fewer, so the daemon
	 * can release their ring slots and hand it more. May be NULL.
	 */
	void (*sq_done)(void *ctx, struct xport_qp *qp);
	/* Monotonic clock in microseconds. */
	uint64_t (*now_us)(void *ctx);
	/*
	 * Optional: a fine clock in any unit, read around each ICRC while
	 * xport_dev.prof is set (the daemon's --profile). May be NULL.
	 */
	uint64_t (*ticks)(void *ctx);
	/*
	 * Arm the QP's single timer for an absolute time (now_us scale); 0
	 * cancels it. When it fires the daemon calls xport_timeout(qp);
	 * firing early or late is harmless.
	 */
	void (*arm_timer)(void *ctx, struct xport_qp *qp, uint64_t deadline_us);
	/* The QP has more work: call xport_run(qp) soon (not from inside). */
	void (*schedule)(void *ctx, struct xport_qp *qp);
	/*
	 * Optional: a request of the QP waits for a receive WQE
	 * (dev->rnr_hold_us): call xport_run(qp) once its RQ or SRQ has one,
	 * while qp->resp.rnr_hold_until is not 0 (the timer ends the wait).
	 */
	void (*rnr_wait)(void *ctx, struct xport_qp *qp);
	/*
	 * The engine moved the QP to ERR by itself (retries exhausted, NAK,
	 * local protection error...). The engine has already flushed its own
	 * send WQEs and the receive WQE it held (and the RQ, unless the QP uses
	 * an SRQ); the daemon raises IBV_EVENT_QP_FATAL-style events and flushes
	 * SQ ring entries not yet handed to the engine. May be NULL.
	 */
	void (*qp_error)(void *ctx, struct xport_qp *qp);
	/*
	 * Optional: the send queue of a QP in SQD has drained: every message
	 * started before the move to SQD is complete (its CQE pushed). Called
	 * once per move into SQD. May be NULL.
	 */
	void (*sq_drained)(void *ctx, struct xport_qp *qp);
	/*
	 * Optional: the first request packet arrived on an RC or UC QP in RTR
	 * (IBV_EVENT_COMM_EST). Called at most once until the QP is reset.
	 * May be NULL.
	 */
	void (*comm_est)(void *ctx, struct xport_qp *qp);
	/*
	 * Optional: a MAD for QP1 passed the receive checks (ICRC, a UD SEND,
	 * P_Key, the GSI Q_Key 0x80010000). NULL: QP1 does not exist, and
	 * packets to it are dropped as no_qp. Must not call back into the
	 * engine except xport_gsi_send.
	 */
	void (*gsi_recv)(void *ctx, const struct xport_gsi_mad *m);
	/*
	 * Optional: a UD packet to QP 0xFFFFFF arrived for the multicast group
	 * gid (the route's destination): call fn(qp, arg) once for each QP of
	 * this RNIC attached to the group (IBA 10.5: every attached QP gets a
	 * copy). NULL: multicast packets are dropped. Must not call back into
	 * the engine other than through fn.
	 */
	void (*mcast_each)(void *ctx, const uint8_t gid[XPORT_GID_BYTES],
			   void (*fn)(struct xport_qp *qp, void *arg), void *arg);
	/*
	 * XRC target QPs: the first packet of a request message names the
	 * XRC SRQ in its XRCETH. Make that SRQ the one this message uses: its
	 * receive WQEs (get_recv_wqe), its PD for every key the message
	 * presents (dma_lkey, dma_rkey, atomic) and its CQ for the receive
	 * completion (push_cqe), until the next message names one. Returns
	 * 0, -ENOENT (no XRC SRQ has that number) or -EACCES (the SRQ is in
	 * another XRC domain than the QP). NULL: every XRC request fails.
	 */
	int (*xrc_srq)(void *ctx, struct xport_qp *qp, uint32_t srqn);
};

struct xport_qp;

/*
 * Flow control (flow.c): the device-wide budget of RC request data in
 * flight and the FIFO of QPs waiting to start a message within it.
 */
struct xport_flow {
	uint64_t budget;	      /* bytes of unacked PSNs (path MTU each); 0: no limit */
	uint64_t inflight;	      /* sum of the QPs' charges */
	uint64_t granted;	      /* budget promised to QPs woken for their turn */
	struct xport_qp *head, *tail; /* waiting QPs, oldest first */
};

/*
 * How the ICRC of an IPv4 packet is checked when the net layer could not see
 * its IP header (rt.ip_id_known false: a UDP socket hides the IP ID, which
 * the ICRC covers). With the header known, every mode checks it exactly.
 */
enum xport_icrc_mode {
	/* ID 0 with DF only: what a uroce peer sends (full 32 bits). */
	XPORT_ICRC_ID0,
	/*
	 * ID 0 first; otherwise solve for the ID and accept it only when it
	 * follows the sender's previous IDs (icrc.c: the per-sender tracker).
	 */
	XPORT_ICRC_TRACKED,
	/* ID 0 first; otherwise accept any solved ID (16 bits of strength). */
	XPORT_ICRC_ANY,
};

/* Slots of the per-sender IPv4 ID tracker (bounded: a flood of spoofed
 * sources cannot grow it). */
#define XPORT_IDTRACK_SLOTS 64

/* What the tracker remembers of one IPv4 sender (icrc.c). */
struct xport_idtrack_ent {
	uint8_t addr[4];  /* source address; 0.0.0.0 = free slot */
	bool counting;	  /* its IDs count up (else it sends ID 0) */
	bool has_cand;	  /* a rejected ID that may start a new sequence */
	uint16_t last;	  /* last accepted ID */
	uint16_t cand;	  /* the rejected ID */
	uint64_t last_us; /* when `last` (or an ID-0 packet) was accepted */
	uint64_t cand_us;
};

/* Packet lengths whose ID solver is kept (a stream has few: MTU-sized
 * packets, its last ones, ACKs). */
#define XPORT_ID_SOLVERS 4

struct xport_idtrack {
	struct xport_idtrack_ent ent[XPORT_IDTRACK_SLOTS];
};

/* Per-device state: one per RNIC. */
/*
 * What a request packet is for, for annotations (a capture's comments):
 * valid during the send_packet call that sends it (xport_tx_info).
 */
struct xport_tx_info {
	bool request;	   /* a request of an application WR (else a response or a MAD) */
	uint8_t retx_why;  /* 0: first transmission; else why it is sent again (XPORT_CNT_RETRY_*) */
	uint32_t wr_opcode; /* enum uroce_wr_opcode */
	uint64_t wr_id;
	uint32_t length; /* of the whole message */
	uint32_t num_sge;
	uint32_t psn; /* of the packet (a check that the info is this packet's) */
};

struct xport_dev {
	const struct xport_ops *ops;
	void *ctx;
	/* ICRC check without the IP header (zero-initialised: ID 0 only). */
	enum xport_icrc_mode icrc_mode;
	struct xport_idtrack idtrack;
	/* ID solvers of the last few packet lengths (icrc.c). */
	struct wire_icrc_id_solver id_solver[XPORT_ID_SOLVERS];
	unsigned id_solver_next;
	uint32_t gsi_psn;    /* PSN of QP1's next send (UD: any sequence will do) */
	uint64_t held_bytes; /* bytes of requests held by all its QPs (recv.c) */
	struct xport_flow flow;
	uint64_t drops[XPORT_DROP_COUNT];
	uint64_t cnt[XPORT_CNT_COUNT];
	/* With prof set (and ops->ticks): ticks spent computing and checking
	 * ICRCs (xmit.c, recv.c). */
	bool prof;
	uint64_t prof_icrc_ticks;
	struct xport_tx_info tx_info; /* of the packet send_packet is sending */
	unsigned last_drop;	      /* the last drop reason counted (xport_rx_verdict) */
	int32_t last_solved_id;	      /* the IPv4 ID its ICRC was accepted for, or -1 */
	/* How long an RC request that needs a receive WQE waits for one before
	 * the RNR NAK (resp.c resp_rnr_hold); 0: not at all. */
	uint32_t rnr_hold_us;
	/* Inside a receive batch (xport_rx_batch_begin): the QPs owing an ACK. */
	bool rx_batch;
	struct xport_qp *ack_list;
};

/* Attributes the engine keeps (ibv_qp_attr subset, values as in verbs). */
struct xport_qp_attr {
	uint32_t state;	 /* enum uroce_qp_state */
	uint32_t access; /* UROCE_ACCESS_REMOTE_* allowed on this QP */
	uint16_t pkey;	 /* the P_Key value (not the index), 0xFFFF by default */
	uint16_t pkey_index;
	uint32_t qkey;
	struct xport_av av;
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

struct xport_qp_init {
	uint32_t type; /* enum uroce_qp_type */
	uint32_t qpn;
	uint32_t max_send_wr; /* capacity of the engine's send queue copy */
	/* SGEs and inline bytes a send WR of this QP may carry; the copy of
	 * each WR holds that much (0 and 0: XPORT_MAX_SGE and
	 * XPORT_MAX_INLINE_BYTES). A WR beyond them fails (LOC_QP_OP_ERR,
	 * LOC_LEN_ERR). */
	uint32_t max_sge;
	uint32_t max_inline;
	bool sq_sig_all;
	bool srq; /* receives come from an SRQ: never flushed by the engine */
};

/* Bytes the engine's copy of a send WR keeps after its fixed part: max_sge
 * SGEs or max_inline bytes of inline payload, whichever is more. */
static inline uint32_t xport_sq_data_bytes(uint32_t max_sge, uint32_t max_inline)
{
	uint32_t sges = max_sge * (uint32_t)sizeof(struct xport_sge);

	return max_inline > sges ? max_inline : sges;
}

/* A parsed, checked packet as recv.c queues it for the responder/completer. */
struct xport_pkt {
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
	const struct xport_route *rt;
};

/* State of one send WQE copy. */
enum xport_wqe_state {
	XPORT_WQE_POSTED,     /* not started: no PSNs assigned yet */
	XPORT_WQE_PROCESSING, /* PSNs assigned, packets from `offset` on still to (re)send */
	XPORT_WQE_PENDING,    /* every packet sent, waiting for the ACK/responses */
	XPORT_WQE_DONE_LOCAL, /* UC/UD: sent, completes as soon as it is the oldest */
	XPORT_WQE_ERROR,      /* failed locally: completes with status when oldest */
};

/* One slot of the engine's send queue copy: qp->sq_stride bytes, the WR
 * cut short after the SGEs or inline bytes the QP allows (so `wr` is last). */
struct xport_swqe {
	uint8_t state;	 /* enum xport_wqe_state */
	uint32_t status; /* for XPORT_WQE_ERROR */
	uint32_t length; /* message length in bytes */
	uint32_t
	    offset; /* bytes already covered by sent packets (SEND/WRITE) or responses (READ) */
	uint32_t first_psn;
	uint32_t last_psn;
	struct xport_wqe wr;
};

/* Requester state (req.c). */
struct xport_req {
	uint32_t psn;	     /* next PSN to send */
	uint32_t hw_psn;     /* one past the highest PSN ever sent (retransmissions are below) */
	uint32_t idx;	     /* send queue index of the next WQE to work on */
	uint32_t hw_idx;     /* one past the highest WQE index ever started */
	uint32_t noack_pkts; /* packets sent since the last AckReq */
	uint32_t rd_atomic;  /* READ/atomic WQEs issued and not completed */
	bool need_retry;     /* go back to comp.psn before sending anything */
	uint8_t retx_why;    /* why the last rewind happened (enum xport_cnt RETRY_*) */
	bool wait_rnr;	     /* RNR NAK received: nothing until the RNR timer */
	bool drained_told;   /* sq_drained already reported for this SQD */
};

/* Completer state (comp.c). */
struct xport_comp {
	uint32_t psn;	    /* oldest PSN not yet acknowledged */
	uint32_t idx;	    /* send queue index of the oldest uncompleted WQE */
	uint8_t retry_left; /* retries left before IBV_WC_RETRY_EXC_ERR */
	uint8_t rnr_left;   /* RNR retries left (7 = forever) */
	/*
	 * Loss recovery: the last retry rewound to rewind_psn at rewind_at,
	 * when everything below recover_psn had been sent. Until the
	 * acknowledged PSN passes recover_psn, NAKs and implied NAKs inside
	 * that range are echoes of the same loss, not new ones.
	 */
	bool recovering;
	bool probing; /* NAK recovery: XPORT_RETX_PROBE packets beyond comp.psn at a time */
	bool judge;   /* the first progress after a NAK rewind tells whether it was spurious */
	uint32_t rewind_psn;
	uint32_t recover_psn;
	uint64_t rewind_at;
	uint64_t retrans_deadline; /* the next retransmission timer event; 0 = not armed */
	uint64_t iba_deadline;	   /* when the IBA timeout expires without progress */
	uint64_t rnr_deadline;	   /* 0 = not waiting */
	uint64_t armed;		   /* deadline last given to arm_timer */
};

/* Congestion control state (cc.c): adaptive send window and RTT estimate. */
struct xport_cc {
	uint32_t cwnd;			   /* packets that may be unacknowledged */
	uint32_t ssthresh;		   /* slow start below it, +1 per window at or above */
	uint32_t acked;			   /* PSNs acknowledged toward the next +1 */
	uint32_t undo_cwnd, undo_ssthresh; /* before the last reduction (0 = none) */
	bool rtt_valid;			   /* srtt/rttvar/min_rtt hold a sample */
	uint32_t srtt_us, rttvar_us, min_rtt_us;
	bool probing; /* rtt_psn, sent at rtt_at, is being timed */
	uint32_t rtt_psn;
	uint64_t rtt_at;
	uint8_t backoff;      /* adaptive timeouts in a row without progress */
	uint8_t reorder;      /* reordering score (XPORT_REORDER_*) */
	uint64_t last_ack_at; /* last progress (0 = none yet) */
};

enum xport_res_type {
	XPORT_RES_FREE,
	XPORT_RES_READ,
	XPORT_RES_ATOMIC,
};

/* A responder resource: a READ or atomic kept for replay (rxe resp_res). */
struct xport_res {
	uint8_t type; /* enum xport_res_type */
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
	uint32_t xrc_srqn; /* XRC target: the SRQ the request named (a READ's PD) */
};

/*
 * A validated packet waiting in a QP's queue: a copy of its bytes (BTH ..
 * pad) and path, with pkt as recv.c parsed it but pointing into this entry,
 * so it is never parsed again.
 */
struct xport_qpkt {
	struct xport_pkt pkt;
	struct xport_route rt;
	uint8_t buf[XPORT_MAX_PKT_BYTES];
};

/*
 * A bounded FIFO of validated packets (rxe's per-QP skb queues). Entries are
 * allocated when first needed and kept until xport_qp_fini; the ring starts
 * again at slot 0 whenever it empties, so a queue that is drained at once
 * (the usual case) only ever uses its first entry.
 */
struct xport_pktq {
	struct xport_qpkt *slot[XPORT_MAX_DEFERRED];
	uint32_t head;
	uint32_t n;
};

/* A held request: the packet, its path and its bytes, allocated to size. */
struct xport_held_pkt {
	struct xport_pkt pkt;
	struct xport_route rt;
	uint32_t bytes; /* what it counts against xport_dev.held_bytes */
	uint8_t buf[];
};

/*
 * Requests held beyond the expected PSN (recv.c): slot i holds PSN i mod
 * XPORT_HELD_SLOTS; the slots are allocated when a QP first holds one.
 * `cur` is the one handed to the responder last, freed at the next take.
 */
struct xport_held {
	struct xport_held_pkt **slot;
	uint32_t n;
	struct xport_held_pkt *cur;
};

/* Responder state (resp.c). */
struct xport_resp {
	uint32_t psn; /* expected PSN */
	uint32_t msn;
	bool sent_psn_nak; /* one NAK per gap, then silence until psn arrives */
	bool ack_pending;  /* an ACK for ack_psn goes out at the end of the drain */
	uint32_t ack_psn;
	bool ack_listed;	     /* on the device's list of ACKs owed at the batch's end */
	uint64_t rnr_hold_until;     /* waiting for a receive WQE until then; 0: not */
	struct xport_qp *ack_next; /* that list */
	uint32_t last_mask; /* opcode mask of the last packet accepted; 0 = at a message boundary */
	bool has_wqe;
	struct xport_recv_wqe wqe;
	uint32_t wqe_off; /* bytes placed into wqe so far */
	/* current WRITE */
	uint64_t va;
	uint32_t rkey;
	uint32_t resid;
	uint32_t write_len;
	bool uc_drop; /* UC: drop the rest of the current message */
	/* READ/atomic resources: a ring of max_dest_rd_atomic entries */
	struct xport_res *res;
	uint32_t res_head;
	struct xport_res *stream; /* READ whose responses are being sent */
	bool comm_est_told;	  /* comm_est already reported since the last reset */
	uint32_t xrc_srqn;	  /* XRC target: the SRQ the current message uses */
};

/* A QP's part in the device's flow control (flow.c). */
struct xport_qp_flow {
	uint64_t charge;	      /* bytes this QP counts in the device's inflight */
	uint64_t need;		      /* bytes of the message it waits for (or was granted) */
	uint32_t end_psn;	      /* one past the PSNs its started messages reserved */
	bool waiting;		      /* in the device's FIFO */
	bool turn;		      /* woken from it: may start one message */
	struct xport_qp *next, *prev; /* FIFO links */
};

/* One QP's transport state. The daemon embeds it in its QP object. */
struct xport_qp {
	struct xport_dev *dev;
	uint32_t type; /* enum uroce_qp_type */
	uint32_t qpn;
	bool sq_sig_all;
	bool srq;
	bool scheduled;
	struct xport_qp_attr attr;
	uint32_t pmtu;	/* path MTU in bytes */
	uint16_t sport; /* UDP source port of this QP's packets */
	uint16_t dport; /* UDP destination port (4791; a daemon on another port uses its own) */
	/*
	 * RC/UC: the UDP source port the peer's QP sends from, learned from
	 * its first packet that passed every check and the PSN check (recv.c);
	 * 0 until then. Forgotten at RESET and when the path changes.
	 */
	uint16_t peer_sport;
	/* send queue copies: a ring of sq_size slots of sq_stride bytes, indices run freely */
	struct xport_swqe *sq;
	size_t sq_stride;    /* bytes per slot (xport__sq_at) */
	uint32_t max_sge;    /* SGEs a slot holds */
	uint32_t max_inline; /* inline bytes a slot holds */
	uint32_t res_cap;    /* entries allocated at resp.res (>= max_dest_rd_atomic) */
	uint32_t sq_size;    /* power of two >= sq_cap, so free-running indices wrap cleanly */
	uint32_t sq_cap;     /* max_send_wr: how many WQEs may be outstanding */
	uint32_t sq_tail;    /* index of the next free slot */
	struct xport_req req;
	struct xport_comp comp;
	struct xport_cc cc;
	struct xport_resp resp;
	/* validated packets in arrival order: recv.c queues, the owner drains */
	struct xport_pktq resp_q; /* requests, drained by the responder (resp.c) */
	struct xport_pktq comp_q; /* responses, drained by the completer (comp.c) */
	struct xport_held held;	  /* requests beyond a gap, held for the responder */
	struct xport_qp_flow flow;
	uint64_t drops[XPORT_DROP_COUNT];
	uint64_t cnt[XPORT_CNT_COUNT];
	struct xport_tx_info tx_info; /* of the packet send_packet is sending */
	unsigned last_drop;	      /* the last drop reason counted (xport_rx_verdict) */
};

/* ---- Entry points for the daemon ------------------------------------ */

/* xport.c */

/* Set up a device with its ops; zeroes the counters. */
void xport_dev_init(struct xport_dev *dev, const struct xport_ops *ops, void *ctx);
/*
 * Initialise qp (RESET state) for dev. Allocates the send queue copy (the
 * responder resources follow max_dest_rd_atomic, in xport_modify). Returns
 * 0, -EINVAL (bad type / size) or -ENOMEM.
 */
int xport_qp_init(struct xport_dev *dev, struct xport_qp *qp, const struct xport_qp_init *init);
/* Release what xport_qp_init allocated; pushes no completions. */
void xport_qp_fini(struct xport_qp *qp);
/*
 * Apply the attributes selected by mask (XPORT_QP_*), as ibv_modify_qp does
 * after the daemon has validated the transition (qp.c owns that table).
 * ->RESET clears all transport state; ->RTR/RTS load the PSNs; ->ERR flushes
 * (no qp_error callback, the application asked for it); SQD stops the
 * requester at a message boundary. Returns 0, -EINVAL (value out of range)
 * or -ENOMEM (no memory for max_dest_rd_atomic responder resources; the QP
 * is unchanged).
 */
int xport_modify(struct xport_qp *qp, const struct xport_qp_attr *attr, uint32_t mask);
/* Current attributes, with sq_psn/rq_psn being the next PSNs (ibv_query_qp). */
void xport_query(const struct xport_qp *qp, struct xport_qp_attr *attr);
/*
 * Hand one validated send WR to the engine and start sending. Returns 0;
 * -EAGAIN when the engine's copy of the SQ is full (retry after completions);
 * -EINVAL in RESET. In ERR the WR completes at once with IBV_WC_WR_FLUSH_ERR.
 * A WR the transport cannot carry (opcode not valid for the QP type, too
 * many SGEs, atomic without an 8-byte buffer, message too long) is accepted
 * and completes in order with IBV_WC_LOC_QP_OP_ERR / LOC_LEN_ERR, moving the
 * QP to ERR, as a NIC reports a bad WQE.
 */
int xport_post_send(struct xport_qp *qp, const struct xport_wqe *wqe);
/*
 * The same without sending yet: the WR waits in the engine's SQ for
 * xport_post_send_run, which sends what the QP may send. A caller that has
 * several WRs at hand queues them all first, so that the requester sees
 * the WR behind each message: an unsignaled message followed by one that
 * starts at once does not ask for an ACK of its own (req.c).
 */
int xport_post_send_queue(struct xport_qp *qp, const struct xport_wqe *wqe);
void xport_post_send_run(struct xport_qp *qp);
/*
 * Do deferred work (READ responses beyond a burst, requests queued behind
 * them, responses still queued for the completer, requester sends). Returns
 * true while more work remains (the engine calls ops->schedule again in that
 * case).
 */
bool xport_run(struct xport_qp *qp);
/* The QP's timer fired: retransmit, end an RNR wait, or re-arm. */
void xport_timeout(struct xport_qp *qp);
/*
 * Complete every receive WQE get_recv_wqe still returns with
 * IBV_WC_WR_FLUSH_ERR; call after posting receives to a QP in ERR.
 * Returns the number flushed (0 for SRQ QPs).
 */
unsigned xport_flush_recv(struct xport_qp *qp);
/* Free slots in the engine's send queue copy. */
uint32_t xport_sq_free(const struct xport_qp *qp);

/* flow.c */

/*
 * Limit the RC request data all QPs of the device may have unacknowledged
 * to `bytes` (PSNs times path MTU; 0: no limit, the default). Set it from
 * what the peers' receive buffers hold: beyond it, new messages wait their
 * turn in FIFO order (counted as flow_wait).
 */
void xport_flow_set_budget(struct xport_dev *dev, uint64_t bytes);

/* recv.c */

/*
 * One received UDP payload (BTH .. ICRC) addressed to this device, with its
 * path (source = the peer). Runs every check of PROTOCOL.md section 10,
 * counts drops by reason, and queues a copy of the packet for the responder
 * or the completer of its QP, which process their queue before this
 * returns unless READ responses still stream (then xport_run does). Never
 * fails: bad packets are counted and dropped.
 */
void xport_recv_packet(struct xport_dev *dev, const struct xport_route *rt, const void *buf,
		       size_t len);

/*
 * A receive batch: the packets one system call brought, handed to
 * xport_recv_packet between these two calls. Inside a batch the responder
 * does not send the ACK a drain owes at once but once per QP, at
 * xport_rx_batch_end, for the last request executed (IBA 9.7.5.1.1: an
 * ACK acknowledges every request up to its PSN; a responder may coalesce
 * them). Anything else the responder sends (a NAK, a READ response, an
 * Atomic Acknowledge) still goes after the ACK owed before it, so nothing is
 * reordered. Outside a batch every drain ends with its ACK.
 */
void xport_rx_batch_begin(struct xport_dev *dev);
void xport_rx_batch_end(struct xport_dev *dev);

/*
 * For annotating the packet being received (a capture's comment): reset
 * before xport_recv_packet; afterwards xport_rx_verdict is the drop reason
 * the engine counted for it, or XPORT_DROP_COUNT when it was accepted;
 * xport_rx_solved_id the IPv4 ID that the ICRC check solved and accepted
 * for it when the header was not seen and the ID was not 0 (tracked or any
 * mode, icrc.c), or -1: the ID the sender really sent, for the capture.
 */
static inline void xport_rx_verdict_reset(struct xport_dev *dev)
{
	dev->last_drop = XPORT_DROP_COUNT;
	dev->last_solved_id = -1;
}
static inline unsigned xport_rx_verdict(const struct xport_dev *dev)
{
	return dev->last_drop;
}
static inline int32_t xport_rx_solved_id(const struct xport_dev *dev)
{
	return dev->last_solved_id;
}

/* What the packet send_packet is sending right now is for (see struct xport_tx_info). */
static inline const struct xport_tx_info *xport_tx_info(const struct xport_dev *dev)
{
	return &dev->tx_info;
}

/* gsi.c */

/*
 * Send one MAD from QP1 as a GSI QP does (IBA 13.5.1): a UD SEND Only with
 * DETH source QP 1 and the GSI Q_Key, to dest_qpn on path rt (rt->sgid and
 * rt->sport must be the device's own), with P_Key pkey. len is at most one
 * 256-byte MAD. Returns what send_packet returned, or -EMSGSIZE. Counted
 * as gsi_tx on the device.
 */
int xport_gsi_send(struct xport_dev *dev, const struct xport_route *rt, uint32_t dest_qpn,
		   uint16_t pkey, const void *mad, size_t len);

/* Names for counters and enums (static strings; "?" when out of range). */
const char *xport_drop_name(unsigned reason);
const char *xport_cnt_name(unsigned cnt);
const char *xport_wc_status_name(unsigned status);
const char *xport_qp_state_name(unsigned state);
const char *xport_wr_opcode_name(unsigned opcode);

/* Path MTU in bytes for an ibv_mtu value 1..5; 0 when invalid. */
uint32_t xport_mtu_bytes(unsigned mtu);
/* Retransmission timeout of the `timeout` attribute in us (0 = none). */
uint64_t xport_timeout_us(unsigned timeout);
/*
 * Pure: validate a WR for a QP type; returns 0 or the completion status
 * (UROCE_WC_LOC_QP_OP_ERR, UROCE_WC_LOC_LEN_ERR) it must fail with.
 */
uint32_t xport_check_wqe(uint32_t qp_type, const struct xport_wqe *wqe, uint32_t *length);

#endif /* UROCE_XPORT_H */
