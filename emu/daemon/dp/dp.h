/* SPDX-License-Identifier: MIT */
/*
 * The daemon's data path (emu/daemon/dp/): rings, WQE conversion, DMA into
 * application memory, memory-window binds and invalidations, the UDP socket and routes, transport
 * timers, the spin-or-sleep loop, captures, and the glue that runs the transport engine
 * (datapath.c). Cross-file functions, grouped by defining file. The data
 * path depends on the daemon core (daemon.h) and the engine (xport.h),
 * never on the control path (emu/daemon/verbs/).
 */
#ifndef UROCE_DP_H
#define UROCE_DP_H

#include <sched.h>
#include <stdio.h>

#include "daemon.h"
#include "faultrule.h"

/* ring.c */
/* Shared memory for a client: a sealed memfd of bytes (it cannot shrink
 * or grow), mapped read-write; *fd gets the memfd (the caller sends and
 * closes it). The mapping, or NULL with errno. */
void *emu_shm_create(const char *name, size_t bytes, int *fd);
/* Create a ring memfd of the given geometry, map it; *fd gets the memfd
 * (caller sends and closes it). 0 or -errno. */
int emu_ring_create(struct emu_ring *r, enum uroce_ring_kind kind, uint32_t entries,
		    uint32_t stride, uint32_t handle, uint32_t qpn, int *fd);
void emu_ring_destroy(struct emu_ring *r);
/* Number of WQEs the producer has published beyond our consumer, validated:
 * a producer index more than `entries` ahead is reported as -EINVAL. */
int64_t emu_ring_pending(const struct emu_ring *r);
/* The same for a consumer (RQ/SRQ), but without reading the producer index
 * while entries an earlier read showed are left (struct emu_ring.ready). */
int64_t emu_ring_ready(struct emu_ring *r);
/* Consume one entry (advance and publish the consumer index). */
void emu_ring_consume(struct emu_ring *r);
/* Drop everything published (RESET): consumer catches up with producer. */
void emu_ring_drain(struct emu_ring *r);
uint32_t emu_pow2_roundup(uint32_t v);

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
/*
 * Copy one slot of `bytes` from a ring into a private slot: the fixed part,
 * then only what it says the WQE uses (its SGEs, inline or snapshot
 * payload), at most the rest of the slot. Returns the bytes copied, the
 * stride to parse the copy with: nothing past them is read.
 */
uint32_t emu_wqe_send_snapshot(void *slot, const void *ring_slot, uint32_t bytes);
uint32_t emu_wqe_recv_snapshot(void *slot, const void *ring_slot, uint32_t bytes);
/*
 * Convert one SQ slot (a private copy of stride bytes) into an engine WQE.
 * Returns UROCE_WC_SUCCESS, or the completion status the WR must fail with
 * (LOC_QP_OP_ERR: opcode, SGE count, inline on READ/atomic; LOC_LEN_ERR:
 * inline length), in which case *w is poisoned so that the engine fails it
 * with that status, in order. *ah_handle receives a UD WR's AH.
 */
uint32_t emu_wqe_send(const void *slot, const struct emu_wqe_geom *g, uint32_t qp_type,
		      struct xport_wqe *w, uint32_t *ah_handle);
/* Make *w a WQE the engine fails with status (LOC_QP_OP_ERR/LOC_LEN_ERR). */
void emu_wqe_poison(struct xport_wqe *w, uint32_t status);
/* The payload the shim copied after the SGEs of the slot emu_wqe_send made
 * *w of (w->inline_len bytes, UROCE_SEND_PREREAD kept), or NULL. */
const uint8_t *emu_wqe_preread(const void *slot, const struct xport_wqe *w);
/*
 * Convert one RQ/SRQ slot (a private copy) into an engine receive WQE.
 * Returns 0, or -EINVAL for a malformed slot, in which case *w has one SGE
 * no key matches (placing data into it fails with a local error).
 */
int emu_wqe_recv(const void *slot, const struct emu_wqe_geom *g, struct xport_recv_wqe *w);

/* route.c (pure) */
struct in_addr;
struct msghdr;
struct wire_frame_params;
void emu_route_gid_from_v4(const struct in_addr *a, uint8_t gid[16]);
/* GID (IPv4-mapped for AF_INET) and port of a socket address; 0 or
 * -EAFNOSUPPORT. */
int emu_route_gid_from_sockaddr(const struct sockaddr *sa, uint8_t gid[16], uint16_t *port);
/* Socket address of a GID for a socket of this family (a multicast group
 * too; ff0e::ffff:a.b.c.d is the IPv4 group a.b.c.d); 0, -EAFNOSUPPORT
 * (IPv4 GID on an IPv6 socket or the reverse), -EHOSTUNREACH (zero or
 * broadcast address). scope_id is used for link-local IPv6. */
int emu_route_sockaddr_from_gid(const uint8_t gid[16], uint16_t port, int family, uint32_t scope_id,
				struct sockaddr_storage *ss, socklen_t *len);
/* The transport route of a datagram from recvmsg(): source from the name,
 * destination from IP_PKTINFO/IPV6_PKTINFO, TOS/TTL from their control
 * messages, dport = local_port. 0, -ENOENT (no destination), or
 * -EAFNOSUPPORT. */
int emu_route_from_msg(const struct msghdr *mh, uint16_t local_port, struct xport_route *rt);
/* The locally administered MAC uroce derives from a GID. */
void emu_route_mac_of_gid(const uint8_t gid[16], uint8_t mac[6]);
/*
 * The route of an IPv4 datagram read from the raw socket (ip: its IPv4
 * header, len bytes in all): addresses, ports, TOS, TTL and the real ID and
 * DF (rt->ip_id_known). *off is where the UDP payload starts. Returns 0,
 * -EBADMSG (not IPv4 + UDP without options, inconsistent lengths, a
 * fragment) or -ENOENT (another UDP port). The UDP checksum is not checked
 * (the ICRC is; see route.c).
 */
int emu_route_from_ipv4(const uint8_t *ip, size_t len, uint16_t local_port, struct xport_route *rt,
			size_t *off);
/* Ethernet/IP/UDP framing of a packet of route rt (IPv4: the route's ID and
 * DF when it has them, else ID 0 and DF; the packet's own ICRC is kept). */
void emu_route_frame_params(const struct xport_route *rt, struct wire_frame_params *p);

/* dma.c */
/*
 * Pure: may [addr, addr+len) of MR mr (NULL: no such key) be accessed with
 * `access` (UROCE_ACCESS_* bits) by a QP of PD pd? 0 with *host_addr set,
 * -ENOENT (no key, or another PD), -ERANGE, -EACCES.
 */
int emu_dma_check(const struct emu_mr *mr, const struct emu_pd *pd, uint64_t addr, uint64_t len,
		  uint32_t access, uint64_t *host_addr);
/*
 * Pure: may QP qp access [va, va+len) with `access` through memory window
 * mw, named by R_Key rkey (IBA 10.6.7.2)? 0 with *host_addr set (in
 * mw->mr); -ENOENT (stale key variant, not bound, another PD, a type 2
 * window bound to another QP), -EACCES (the window's rights), -ERANGE.
 */
int emu_dma_check_mw(const struct emu_mw *mw, const struct emu_qp *qp, uint32_t rkey, uint64_t va,
		     uint64_t len, uint32_t access, uint64_t *host_addr);
/* The staging and read-ahead buffers (without them every access is one
 * synchronous process_vm call). 0 or -ENOMEM. */
int emu_dma_init(struct emu_dev *dev);
/* Write the staged writes out and free the buffers. */
void emu_dma_fini(struct emu_dev *dev);
/* The reveal gate: write the staged writes out and forget the read-ahead
 * copy. Called first by everything that leaves the daemon (a datagram
 * batch, a CQE, a control reply) and by nothing else; the rule is stated
 * at its definition. A batch that fills in the middle of an engine entry
 * passes emu_dma_before_send instead. */
void emu_dma_before_reveal(struct emu_dev *dev);
/* The writes only, keeping the read-ahead copy: a send batch full mid-entry (net.c). */
void emu_dma_before_send(struct emu_dev *dev);
/* Drop the read-ahead copy: new WQEs came (datapath.c emu_dp_sq). */
void emu_dma_forget_reads(struct emu_dev *dev);
/* The engine's dma_lkey / dma_rkey / atomic ops for QP qp (xport.h). */
int emu_dma_lkey(struct emu_qp *qp, uint32_t lkey, uint64_t addr, void *buf, size_t len,
		 uint32_t access, enum xport_dma dir);
int emu_dma_rkey(struct emu_qp *qp, uint32_t rkey, uint64_t va, void *buf, size_t len,
		 uint32_t access, enum xport_dma dir);
/* The engine's dma_read_crc op (xport.h): a payload read folded into *crc. */
int emu_dma_read_crc(struct emu_qp *qp, uint32_t key, bool remote, uint64_t addr, void *buf,
		     size_t len, uint32_t access, uint32_t *crc);
int emu_dma_atomic(struct emu_qp *qp, uint32_t rkey, uint64_t va, enum xport_atomic_op op,
		   uint64_t compare_add, uint64_t swap, uint64_t *orig);
/* The engine's flush op (xport.h): R_Key, PD, flush access and range
 * checked (a window's key is refused), then every staged write placed. */
int emu_dma_flush(struct emu_qp *qp, uint32_t rkey, uint64_t va, uint32_t len, uint32_t access,
		  bool whole_mr);

/* mw.c */
/* Execute a bind (the engine's bind_mw op) for QP qp: 0, or -EINVAL /
 * -EACCES / -ERANGE when a rule of IBA 10.6.7.3 refuses it (nothing
 * changes then). */
int emu_mw_bind(struct emu_qp *qp, const struct xport_bind *b);
/* Invalidate the window of R_Key rkey (the engine's invalidate op): 0, or
 * -EINVAL (no such valid window, type 1, another PD, remote and bound to
 * another QP). */
int emu_mw_invalidate(struct emu_qp *qp, uint32_t rkey, bool remote);
/*
 * May a request that arrived on qp use window mw (the type 2B QP rule of
 * IBA 10.6.7.2.4)? The PD is checked apart. A window bound through an XRC
 * initiator QP: that QP receives nothing, its peer's requests arrive at XRC
 * target QPs (IBA 19.2), so those are the window's users, and which of them
 * is the PD's business: a target QP works under the PD of the SRQ its
 * message names (datapath.c op_xrc_srq), which the callers check against
 * the window's. That is uroce's rule; IBA ties a type 2B window to "the QP"
 * without saying which of the two XRC QPs that is. (Inline: dma.c's unit
 * test links dma.c alone.)
 */
static inline bool emu_mw_reaches(const struct emu_mw *mw, const struct emu_qp *qp)
{
	if (mw->type != 2 || mw->qp == qp)
		return true;
	return mw->qp && mw->qp->type == UROCE_QPT_XRC_SEND && qp->type == UROCE_QPT_XRC_RECV;
}
/* Unbind a window (dealloc). */
void emu_mw_unbind(struct emu_mw *mw);
/* Unbind every window of ctx bound to qp or to mr (either may be NULL):
 * the QP or the MR is going away. */
void emu_mw_unbind_all(struct emu_ctx *ctx, const struct emu_qp *qp, const struct emu_mr *mr);

/* timer.c */
/* Arm (deadline_us != 0) or cancel the QP's transport timer. */
void emu_timer_arm(struct emu_qp *qp, uint64_t deadline_us);
void emu_timer_cancel(struct emu_qp *qp);
/* Is a timer due at now_us? (walks the armed QPs only once the bound passed) */
bool emu_timer_due(struct emu_dev *dev, uint64_t now_us);
/* Fire every timer due at now_us; returns how many fired. */
unsigned emu_timer_expire(struct emu_dev *dev, uint64_t now_us);
/* Earliest armed deadline (0: none). */
uint64_t emu_timer_next(struct emu_dev *dev);

/* net.c: how long a batch of ACKs may wait for a request (--ack-hold-us) */
#define EMU_NET_ACK_HOLD_US 20
/* ...if the RNIC sent a request within this long: it then answers what it
 * receives; an RNIC that only receives (a one-way stream) never holds. */
#define EMU_NET_ACK_HOLD_RECENT_US 10000

/* wait.c */
/* Spin this long after the last work before sleeping. */
#define EMU_WAIT_SPIN_US 100
/* Spin (rather than sleep on a millisecond timer) for a deadline this close. */
#define EMU_WAIT_TIMER_SPIN_US 250
/* A sched_yield() this long means that something took the CPU for a
 * scheduler slice (0.75-3 ms; a busy loop beside a daemon held it 1-3 ms
 * and more at each yield), not a program of uroce's own at work between
 * two looks at its CQs (perftest posting to 1000 QPs: 100-500 us)... */
#define EMU_WAIT_CONTENDED_US 500
/* ...and this many such yields within this window mean a CPU-bound neighbour
 * (one alone is a program's own busy moment, an interrupt, the hypervisor)... */
#define EMU_WAIT_CONTENDED_WINDOW_US 20000
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
/*
 * A sched_yield() from start_us to end_us (no clock read, no system call).
 * True when it is the EMU_WAIT_CONTENDED_YIELDS-th long one within
 * EMU_WAIT_CONTENDED_WINDOW_US (time to back off); it records a long one in
 * wl->long_yield_us, which holds the recent long ones.
 */
bool emu_wait_contended(struct emu_wait_loop *wl, uint64_t start_us, uint64_t end_us);
/* Install the loop's handles; members join with emu_wait_start. */
void emu_wait_loop_init(struct emu_wait_loop *wl, uv_loop_t *loop);
/* Make w (poll/next_deadline/arg/spin_us set) a member of wl: from the next
 * loop iteration on, every pass polls it and its status page says when the
 * loop sleeps. Members stay until the loop is closed. */
void emu_wait_start(struct emu_wait *w, struct emu_wait_loop *wl, struct uroce_status_page *status);
/* First step of an I/O callback that may end a sleep (datagrams, doorbells):
 * the "asleep" flags come down before the work. */
void emu_wait_awake(struct emu_wait *w);
/* Work arrived outside a pass (datagrams, doorbells): keep spinning. */
void emu_wait_note_work(struct emu_wait *w);

/* place.c: where the daemon runs (--cpu) */
#define EMU_PLACE_AUTO (-2) /* daemons of one run directory spread over the CPUs */
#define EMU_PLACE_NONE (-1) /* the affinity is left alone */
/* How often a daemon with a claim looks whether another daemon has one. */
#define EMU_PLACE_LOOK_MS 250
/* How often it looks where its programs poll while they do (below). */
#define EMU_PLACE_POLL_LOOK_MS 20
/* CPUs whose pollers are counted, and slots of cpus.lock's table. */
#define EMU_PLACE_SLOTS 64
struct emu_place {
	uv_timer_t timer;
	bool started; /* by emu_place_start (a zeroed one is not) */
	bool timer_up;
	bool pinned;	   /* kept to cpu now */
	int fd;		   /* <rundir>/cpus.lock while a CPU is claimed, else -1 */
	int slot;	   /* auto: the CPU whose byte of cpus.lock is claimed, else -1 */
	int cpu;	   /* the CPU kept to while pinned (the slot's, or one swapped for it) */
	cpu_set_t allowed; /* the affinity at start, restored when alone again */
	char rundir[256];
	/*
	 * Where the programs of this daemon's RNICs poll: per CPU, the CQ
	 * publishes whose CQ was last polled empty from there (the shim's
	 * ring->poller), since the last look (emu_place_note_poller).
	 */
	uint32_t polls[EMU_PLACE_SLOTS];
	uint64_t polls_since_ms; /* when they were last counted */
	bool fast;		 /* looking every EMU_PLACE_POLL_LOOK_MS */
	unsigned crowded;	 /* looks in a row that found them on this CPU */
	uint64_t last_swap_ms;	 /* CLOCK_MONOTONIC */
	uint64_t swap_gap_ms;	 /* no swap sooner after the last (place.c) */
	uint64_t last_claim_look_ms;
};
/* Look soon: programs started polling while the looks were slow. */
void emu_place_hurry(struct emu_place *p);
/* A CQ was published; poller is its ring header's poller word. */
static inline void emu_place_note_poller(struct emu_place *p, uint32_t poller)
{
	if (p && poller && poller <= EMU_PLACE_SLOTS) {
		p->polls[poller - 1]++;
		if (!p->fast && p->pinned)
			emu_place_hurry(p);
	}
}
/* Start placing the daemon as mode says. 0, or -errno: -EINVAL for a CPU
 * outside the daemon's affinity, or what sched_setaffinity said. */
int emu_place_start(struct emu_place *p, uv_loop_t *loop, int mode, const char *rundir);
/* Stop looking and give up the claim (the affinity stays). */
void emu_place_stop(struct emu_place *p);

/* net.c */
/* Allocate the batches and start receiving on dev->udp_fd, and in the
 * exact ICRC mode on dev->raw_fd too. 0 or -errno. */
int emu_net_start(struct emu_dev *dev);
/* Send what is batched and free the batches. */
void emu_net_stop(struct emu_dev *dev);
/* The engine's send_packet: batch one packet (sent by emu_net_flush), through
 * the fault rules (fault.c) when there are any. */
int emu_net_send(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len);
/* Batch one packet and capture it, past the fault rules. 0 or -errno (no
 * route from the bound address, no network, too long). */
int emu_net_xmit(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len);
/*
 * Room for the next packet at the end of the send batch (the engine's
 * tx_buf op): a packet built there and then sent joins the batch where it
 * lies, without a copy. NULL while fault rules exist (fault.c may hold,
 * duplicate or change a packet) or with no socket.
 */
void *emu_net_tx_buf(struct emu_dev *dev);
/* Hand one received packet of route rt to the capture and the engine,
 * past the fault rules. */
void emu_net_deliver(struct emu_dev *dev, const struct xport_route *rt, const void *pkt,
		     size_t len);
/* Pass the reveal gate (emu_dma_before_reveal), then send the batch,
 * unless it holds only ACKs younger than dev->ack_hold_us (they wait for a
 * request to join them); returns how many datagrams it sent. */
unsigned emu_net_flush(struct emu_dev *dev);
/* When the batch of ACKs emu_net_flush holds back must leave (0: none). */
uint64_t emu_net_hold_deadline(const struct emu_dev *dev);
/*
 * Whether [p, p+len) lies in the receive buffers: a received datagram's
 * bytes, which stay put until its batch ends (with emu_net_flush, whose
 * reveal gate writes the staged writes out) and the next recvmmsg.
 */
bool emu_net_rx_holds(const struct emu_dev *dev, const void *p, size_t len);
/* Receive from the socket uroce's own datagrams arrive on (the UDP one, or
 * the raw one in the exact mode off loopback) when this process sent the
 * RNIC a datagram since it was last read (an RNIC of this daemon, or itself;
 * dev->rx_hint), else 0 with no system call. */
unsigned emu_net_receive_hinted(struct emu_dev *dev);
/*
 * Read what waits in the sockets now, before the transport's timers fire:
 * an answer that arrived while the daemon was not running (descheduled,
 * stopped) is progress, not a loss to resend for. Counted as
 * rx_before_timers.
 */
unsigned emu_net_receive_before_timers(struct emu_dev *dev);
/* The same from a multicast group's socket (mcast.c): only datagrams for
 * the group, counted rx_mcast, or rx_mcast_no_qp when no QP is attached. */
unsigned emu_net_receive_group(struct emu_mcg *g, unsigned rounds);

/* mcast.c */
/* The group a multicast GID names on this RNIC (group: the GID of its IP
 * address, IPv4-mapped on an IPv4 RNIC). 0, or -EINVAL when gid is no
 * multicast address of the RNIC's family. */
int emu_mcast_group_gid(const struct emu_dev *dev, const uint8_t gid[16], uint8_t group[16]);
/* Take a reference on the group (joining it: its socket and membership
 * are made by the first). 0, -ENOMEM (max_mcast_grp groups already, or no
 * descriptor left), or -errno from the socket calls. */
int emu_mcast_get(struct emu_dev *dev, const uint8_t group[16], struct emu_mcg **out);
/* Drop a reference; the last one leaves the group and closes its socket. */
void emu_mcast_put(struct emu_mcg *g);
/* The joined group with this GID (from emu_mcast_group_gid), or NULL. */
struct emu_mcg *emu_mcast_find(struct emu_dev *dev, const uint8_t group[16]);
/* ibv_attach_mcast / ibv_detach_mcast of QP qp: 0, -EINVAL (not UD, not a
 * multicast GID of the RNIC's family; detach: not attached), -ENOMEM
 * (limits). Attaching twice is one attachment. */
int emu_mcast_attach(struct emu_qp *qp, const uint8_t gid[16], uint16_t lid);
int emu_mcast_detach(struct emu_qp *qp, const uint8_t gid[16], uint16_t lid);
/* The QP goes away: every attachment with it. */
void emu_mcast_detach_all(struct emu_qp *qp);
/* The engine's mcast_each op: fn for each QP attached to group. */
void emu_mcast_each(struct emu_dev *dev, const uint8_t group[16],
		    void (*fn)(struct xport_qp *qp, void *arg), void *arg);

/* afile.c: a file written while the daemon serves, never waited for */
struct emu_afile;
/* Create (truncate) path at once; what names it in messages ("capture"),
 * limit bounds the bytes waiting for the file, *errors counts failures;
 * *created (if given): path did not exist. NULL with errno and a message
 * in err. */
struct emu_afile *emu_afile_open(const char *path, const char *what, uint64_t limit,
				 uint64_t *errors, bool *created, char *err, size_t errlen);
/* A stream for the current file (NULL: out of memory). The owner writes it
 * and closes it with fclose, which ends the file. */
FILE *emu_afile_stream(struct emu_afile *af);
/* The next file of a series, after the current one's close: 0 or -ENOMEM. */
int emu_afile_next(struct emu_afile *af, const char *name);
/* The bytes waiting for the file reached the limit: the owner drops what
 * it would write (and counts it). */
bool emu_afile_full(const struct emu_afile *af);
/* The stream was written: flushed within 100 ms (once started). */
void emu_afile_dirty(struct emu_afile *af);
/* Once the loop exists: writes on its thread pool, the flush timer. */
void emu_afile_start(struct emu_afile *af, uv_loop_t *loop);
/* The daemon is stopping: the stream goes to the file now, and the log
 * says so if that has to wait. NULL: nothing. */
void emu_afile_stopping(struct emu_afile *af);
/* After the loop is closed (and the stream with fclose): what is left is
 * written here and now, then af is freed. NULL: nothing. */
void emu_afile_close(struct emu_afile *af);

/* capture.c */
/* Bytes of frames a capture holds for its file by default (--pcap-buffer). */
#define EMU_CAPTURE_BUFFER (16u << 20)
/* Open the --pcap file (prints a message and returns -1 on failure); path
 * must stay valid until the capture is closed. snaplen cuts frames (0: not),
 * size_bytes starts a new file when one reaches it (0: one file), files keeps
 * only the newest that many (a ring; 0: all), buffer_bytes bounds the frames
 * waiting for the file (0: EMU_CAPTURE_BUFFER). */
int emu_capture_open(struct emu_dev *dev, const char *path, uint32_t snaplen, uint64_t size_bytes,
		     uint32_t files, uint64_t buffer_bytes);
/* Once the loop exists: the periodic flush, and the file's writes on the
 * loop's thread pool. */
void emu_capture_start(struct emu_dev *dev);
/* Append one packet (BTH..ICRC) of route rt (dev->capture must be set). */
void emu_capture_packet(struct emu_dev *dev, const struct xport_route *rt, const void *pkt,
			size_t len);
/* The comment of the next frame captured (pcapng only; NULL: none). One
 * frame takes it; set it just before the packet goes out or in, and clear
 * it after, since a packet may fail before it is captured. */
void emu_capture_note(struct emu_dev *dev, const char *note);
/*
 * A received packet: emu_capture_rx_begin builds its frame and holds it while
 * the engine processes the packet, emu_capture_cqe adds the completions the
 * packet caused to its comment, and emu_capture_rx_end writes it with the
 * engine's verdict (the drop reason, if any). A frame sent in between (an ACK
 * the packet provoked) is written after the held one, in wire order.
 */
void emu_capture_rx_begin(struct emu_dev *dev, const struct xport_route *rt, const void *pkt,
			  size_t len);
void emu_capture_cqe(struct emu_dev *dev, bool recv, const struct uroce_cqe *cqe);
void emu_capture_rx_end(struct emu_dev *dev);
/* The daemon is stopping (before its loop ends): emu_afile_stopping. */
void emu_capture_stopping(struct emu_dev *dev);
/* Flush and close (after the loop's handles are closed). */
void emu_capture_close(struct emu_dev *dev);
/* Close and remove the file if emu_capture_open created it (a failed start). */
void emu_capture_discard(struct emu_dev *dev);

/* fault.c */
/* Rules a device holds at most. */
#define EMU_FAULT_MAX_RULES 256
/* The per-rule state the decisions depend on. */
struct emu_fault_state {
	uint64_t matched; /* packets that met the rule's conditions */
	uint64_t fired;	  /* faults injected */
	uint64_t rng;	  /* the rule's generator */
};
/* One rule as emu_fault_get reports it (text valid until the rule goes). */
struct emu_fault_info {
	uint32_t id;
	uint64_t matched;
	uint64_t fired;
	const char *text;
};
/* Pure: the next number of a splitmix64 generator. */
uint64_t emu_fault_rng_next(uint64_t *state);
/* Pure: a rule's fresh state; its generator seeded from seed= or from the
 * device seed and the rule id. */
void emu_fault_state_init(struct emu_fault_state *s, const struct common_fault_rule *r,
			  uint64_t dev_seed, uint32_t id);
/* Pure: a packet met r's conditions: is it the one to hit (nth, every,
 * prob, count)? Counts the match, and the fault when true. */
bool emu_fault_decide(const struct common_fault_rule *r, struct emu_fault_state *s);
/* Pure: flip the bit `draw` selects among those after the BTH of a packet
 * of len (> 12) bytes, so that its ICRC no longer matches. Returns the bit
 * number (0 = the most significant bit of byte 0). */
uint64_t emu_fault_corrupt(uint8_t *pkt, size_t len, uint64_t draw);
/* Pure: rewrite a response with an AETH (ACK, atomic ACK, READ response
 * First/Last/Only) in place into the forged reply of action (RNR NAK with
 * timer code arg, PSN sequence error NAK, ACK of a PSN never sent), MSN
 * kept, ICRC for route rt; *len becomes the new length. 0 or -EINVAL. */
int emu_fault_forge(uint8_t *pkt, size_t *len, unsigned action, uint32_t arg,
		    const struct xport_route *rt);
/* The fault state (no rules yet) with the device seed and the decision log
 * (NULL: none), opened for writing. 0 or -errno. */
int emu_fault_init(struct emu_dev *dev, uint64_t seed, const char *log_path);
/* Once the loop exists: the release timer of held packets. */
void emu_fault_start(struct emu_dev *dev);
/* Free the rules and held packets (after the loop's handles are closed). */
void emu_fault_fini(struct emu_dev *dev);
/* Add a parsed rule (copied); *id gets its number. 0, -ENOSPC, -ENOMEM. */
int emu_fault_add(struct emu_dev *dev, const struct common_fault_rule *r, uint32_t *id);
/* Remove rule id (packets it holds are still released). 0 or -ENOENT. */
int emu_fault_del(struct emu_dev *dev, uint32_t id);
/* Remove every rule. */
void emu_fault_clear(struct emu_dev *dev);
/* The rule with the smallest id >= from_id. 0 or -ENOENT. */
int emu_fault_get(const struct emu_dev *dev, uint32_t from_id, struct emu_fault_info *info);
uint32_t emu_fault_nrules(const struct emu_dev *dev);
uint64_t emu_fault_seed(const struct emu_dev *dev);
/* net.c's hooks, called only while dev->fault_on: one packet to send
 * (returns as emu_net_xmit for a packet no rule touched, else 0) and one
 * received packet. */
int emu_fault_tx(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len);
void emu_fault_rx(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len);

/* doorbell.c */
/* The context's send doorbells page: mapped, *fd for the shim (the caller
 * sends and closes it). 0 or -errno. */
int emu_sq_db_open(struct emu_ctx *ctx, int *fd);
/* Unmap it and forget every bit's QP (after the QPs are gone). */
void emu_sq_db_close(struct emu_ctx *ctx);
/* Give a new QP the lowest free bit of its context (written into its SQ
 * ring header). 0, -ENOSPC or -ENOMEM. */
int emu_sq_db_attach(struct emu_qp *qp);
/* Free the QP's bit (before the QP is freed). */
void emu_sq_db_detach(struct emu_qp *qp);
/* Queue the QPs whose doorbells rang since the last call for the pass. */
void emu_sq_db_collect(struct emu_dev *dev);
/* Queue qp for the next look at its SQ (no-op while queued). */
void emu_dp_sq_kick(struct emu_qp *qp);

/* datapath.c */
/* The engine's device with the daemon's ops, lists, wait callbacks (the
 * DMA buffers are emu_dma_init's). */
void emu_dp_init(struct emu_dev *dev);
/* One data-path pass (wait.c's poll callback); returns the work done. */
unsigned emu_dp_poll(void *dev);
/* Hand new SQ ring entries of qp to the engine; returns how many. */
unsigned emu_dp_sq(struct emu_qp *qp);
/* The engine's address vector for a uapi one (source: GID 0). */
void emu_dp_av(const struct emu_dev *dev, const struct uroce_ah_attr *a, struct xport_av *av);
/* Before freeing a QP: cancel its timer, leave the run and SQ lists. */
void emu_dp_qp_release(struct emu_qp *qp);

/* event.c */
/* Queue an async event record for the context (dropped if the pipe is full). */
void emu_event_async(struct emu_ctx *ctx, uint32_t type, uint32_t handle);
/* Append a CQE, published by the next reveal gate (emu_event_cq_publish).
 * On overflow the CQ enters error (async CQ_ERR) and -ENOSPC is returned. */
int emu_event_cqe(struct emu_cq *cq, const struct uroce_cqe *cqe);
/* Publish the CQEs appended since the last call, signalling the channels
 * of CQs armed for them; only the reveal gate calls it (dma.c). */
void emu_event_cq_publish(struct emu_dev *dev);
/* Publish qp->state in its SQ and RQ rings (the shim reads it there). */
void emu_event_qp_state(struct emu_qp *qp);
/* A QP on an SRQ left the receive path: IBV_EVENT_QP_LAST_WQE_REACHED once. */
void emu_event_last_wqe(struct emu_qp *qp);
/* The engine moved the QP to ERR by itself (it already flushed what it
 * held): record the state, raise IBV_EVENT_QP_FATAL (and LAST_WQE_REACHED
 * on an SRQ), log why (rate-limited). The next data-path pass flushes the
 * SQ ring. */
void emu_event_qp_fatal(struct emu_qp *qp, const char *why);
/* The RNIC moves the QP to ERR for a reason outside the transport (a CQ
 * overrun, a corrupt ring): the engine flushes, then as emu_event_qp_fatal
 * (counted as qp_fatal). Not from inside the engine. */
void emu_event_qp_error(struct emu_qp *qp, const char *why);
/* Move the QPs of every CQ that overran since the last call to ERR
 * (IBA 11.6.3.2); called by each data-path pass. Returns how many. */
unsigned emu_event_cq_errors(struct emu_dev *dev);
/* The shim corrupted the SQ ring's producer index: ERR, ring dropped. */
void emu_event_ring_fault(struct emu_qp *qp);
/* The engine drained the SQ of a QP in SQD: IBV_EVENT_SQ_DRAINED if asked. */
void emu_event_sq_drained(struct emu_qp *qp);
/* First request packet on a connected QP in RTR: IBV_EVENT_COMM_EST. */
void emu_event_comm_est(struct emu_qp *qp);
/* After the transport consumed a WQE: raise SRQ_LIMIT_REACHED when armed
 * and the number of posted WQEs fell below the limit (IBA 10.2.9.2). */
void emu_event_srq_limit(struct emu_srq *srq);

/* prof.c: the cost profile (--profile). The clock: the time-stamp counter
 * where it is invariant, else CLOCK_MONOTONIC in nanoseconds. */
extern bool emu_prof_tsc;
uint64_t emu_prof_clock_ns(void);
static inline uint64_t emu_prof_ticks(void)
{
#if defined(__x86_64__)
	if (emu_prof_tsc)
		return __builtin_ia32_rdtsc();
#endif
	return emu_prof_clock_ns();
}
/* Choose the clock and start the ratio that converts it (at start-up). */
void emu_prof_init(void);
/* Pure: ticks in nanoseconds, for a clock that ran span_ticks in span_ns. */
uint64_t emu_prof_scale(uint64_t ticks, uint64_t span_ticks, uint64_t span_ns);
/* A sum of ticks in nanoseconds. */
uint64_t emu_prof_ns(uint64_t ticks);
/* Around a part of the data path: t = emu_prof_start(dev); ...;
 * emu_prof_add(dev, EMU_DCNT_TIME_..., t). Nothing is read without
 * --profile. */
static inline uint64_t emu_prof_start(const struct emu_dev *dev)
{
	return dev->prof ? emu_prof_ticks() : 0;
}
static inline void emu_prof_add(struct emu_dev *dev, enum emu_dcnt c, uint64_t t0)
{
	if (dev->prof)
		dev->dcnt[c] += emu_prof_ticks() - t0;
}

#endif /* UROCE_DP_H */
