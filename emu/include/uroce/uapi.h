/* SPDX-License-Identifier: MIT */
/*
 * The interface between uroced (the emulated RNIC) and the verbs shim, the way
 * a kernel's uapi headers are the interface between a driver and its user
 * library. It defines three things and nothing else:
 *
 *  1. The control protocol: request/response messages on the daemon's Unix
 *     socket (SOCK_SEQPACKET, one message per datagram, file descriptors
 *     passed with SCM_RIGHTS). One connection is one verbs context; every
 *     object the connection created dies with it.
 *  2. The shared-memory rings: each SQ, RQ, SRQ and CQ is a ring in a memfd
 *     created by the daemon and mapped by both sides, plus a device-wide
 *     status page (the "daemon asleep" flag) and a per-context doorbell.
 *  3. The event records the daemon writes to completion-channel and async
 *     event pipes.
 *
 * Numeric values of verbs enums (QP states, attribute masks, access flags,
 * opcodes, completion statuses) are those of rdma-core's <infiniband/verbs.h>,
 * restated here so that the daemon does not depend on libibverbs headers; the
 * shim checks them against verbs.h at compile time.
 *
 * Nothing in shared memory is trusted by the daemon: it keeps its own copy of
 * every ring's geometry and validates every index and every WQE it reads.
 */
#ifndef UROCE_UAPI_H
#define UROCE_UAPI_H

#include <stddef.h>
#include <stdint.h>

#include "cqe.h"
#include "enums.h"

/*
 * Bumped on any incompatible change of a message or ring layout. 2: RQ ring
 * done index, new counters; 3: XRC; 4: send doorbells; 5: completion
 * channel event words; 6: a CM listener's QP type.
 */
#define UROCE_UAPI_VERSION 6

#define UROCE_SOCK_SUFFIX ".sock"
#define UROCE_NAME_MAX 64 /* device names, like IBV_SYSFS_NAME_MAX */
#define UROCE_ADDR_MAX 64 /* textual address */
#define UROCE_MSG_MAX_BYTES 2048
#define UROCE_MSG_MAX_FDS 4
#define UROCE_CACHELINE_BYTES 64

/* ------------------------------------------------------------------------ */
/* Device constants the daemon reports and enforces.                         */

#define UROCE_PORT_NUM 1 /* the one physical port */
#define UROCE_GID_TBL_LEN 16
#define UROCE_PKEY_TBL_LEN 1
#define UROCE_DEFAULT_PKEY 0xffff
#define UROCE_MAX_INLINE_BYTES 256
#define UROCE_NUM_COMP_VECTORS 1

/* ------------------------------------------------------------------------ */
/* Control protocol.                                                         */

/* X-macro: control operations. */
#define UROCE_OP_LIST(X)       \
	X(HELLO, 1)            \
	X(OPEN_CTX, 2)         \
	X(QUERY_DEVICE, 3)     \
	X(QUERY_PORT, 4)       \
	X(QUERY_GID, 5)        \
	X(QUERY_PKEY, 6)       \
	X(ALLOC_PD, 10)        \
	X(DEALLOC_PD, 11)      \
	X(REG_MR, 12)          \
	X(REREG_MR, 13)        \
	X(DEREG_MR, 14)        \
	X(ADVISE_MR, 15)       \
	X(MAP_MR, 16)          \
	X(CREATE_CHANNEL, 20)  \
	X(DESTROY_CHANNEL, 21) \
	X(CREATE_CQ, 22)       \
	X(RESIZE_CQ, 23)       \
	X(DESTROY_CQ, 24)      \
	X(CREATE_QP, 30)       \
	X(MODIFY_QP, 31)       \
	X(QUERY_QP, 32)        \
	X(DESTROY_QP, 33)      \
	X(CREATE_SRQ, 40)      \
	X(MODIFY_SRQ, 41)      \
	X(QUERY_SRQ, 42)       \
	X(DESTROY_SRQ, 43)     \
	X(CREATE_AH, 50)       \
	X(DESTROY_AH, 51)      \
	X(ATTACH_MCAST, 52)    \
	X(DETACH_MCAST, 53)    \
	X(QUERY_COUNTERS, 60)  \
	X(FAULT, 61)           \
	X(QP_LIST, 62)         \
	X(MR_LIST, 63)         \
	X(CQ_LIST, 64)         \
	X(ALLOC_MW, 70)        \
	X(DEALLOC_MW, 71)      \
	X(ALLOC_DM, 72)        \
	X(FREE_DM, 73)         \
	X(REG_DM_MR, 74)       \
	X(CM_OPEN, 80)         \
	X(CM_LISTEN, 81)       \
	X(CM_CONNECT, 82)      \
	X(CM_ACCEPT, 83)       \
	X(CM_REJECT, 84)       \
	X(CM_DISCONNECT, 85)   \
	X(CM_DESTROY, 86)      \
	X(CM_INIT_QP_ATTR, 87) \
	X(CM_MIGRATE, 88)      \
	X(CM_JOIN_MCAST, 89)   \
	X(OPEN_XRCD, 100)      \
	X(CLOSE_XRCD, 101)     \
	X(OPEN_QP, 102)        \
	X(CM_NOTIFY, 103)

enum uroce_op {
#define UROCE_OP_ENUM(name, val) UROCE_OP_##name = val,
	UROCE_OP_LIST(UROCE_OP_ENUM)
#undef UROCE_OP_ENUM
};

/*
 * Every message starts with this header. Requests carry status 0; responses
 * repeat op and seq and carry 0 or a negative errno. A response to a failed
 * request is the bare header. len counts the header.
 */
struct uroce_msg_hdr {
	uint32_t op;
	uint32_t len;
	uint32_t seq;
	int32_t status;
};

/* Object handles are device-wide, never 0, never reused while the daemon runs. */

/* Resource counts of one device (HELLO response, `uroce devices`). */
struct uroce_res_counts {
	uint32_t ctx;
	uint32_t pd;
	uint32_t mr;
	uint32_t channel;
	uint32_t cq;
	uint32_t qp;
	uint32_t srq;
	uint32_t ah;
	uint32_t mw;
	uint32_t dm;
	uint32_t xrcd;	  /* XRC domain handles (one domain may have several) */
	uint32_t qp_open; /* handles of XRC target QPs opened with ibv_open_qp */
};

/*
 * HELLO: first message of a probe connection (device listing, CLI). The
 * daemon answers and the connection may be closed or used for OPEN_CTX.
 */
struct uroce_hello_req {
	struct uroce_msg_hdr hdr;
	uint32_t version;
	uint32_t reserved;
};

struct uroce_hello_resp {
	struct uroce_msg_hdr hdr;
	uint32_t version;
	uint32_t daemon_pid;
	uint64_t node_guid; /* network order, as ibv_get_device_guid returns */
	char name[UROCE_NAME_MAX];
	char addr[UROCE_ADDR_MAX]; /* textual IP address */
	uint16_t udp_port;
	uint8_t node_type;	/* IBV_NODE_CA */
	uint8_t transport_type; /* IBV_TRANSPORT_IB */
	uint32_t active_mtu;	/* enum ibv_mtu */
	struct uroce_res_counts counts;
};

/*
 * OPEN_CTX turns the connection into a verbs context. Response fds, in order:
 * [0] doorbell eventfd (write 1 when the status page says the daemon sleeps),
 * [1] async event pipe, read end (struct uroce_async_event records),
 * [2] device status page memfd (struct uroce_status_page, map read-only),
 * [3] the context's send doorbells memfd (struct uroce_sq_doorbells, map
 *     read-write).
 */
struct uroce_open_ctx_req {
	struct uroce_msg_hdr hdr;
	uint32_t version;
	uint32_t reserved;
};

struct uroce_open_ctx_resp {
	struct uroce_msg_hdr hdr;
	uint32_t ctx_handle;
	uint32_t daemon_pid;
	uint32_t num_comp_vectors;
	uint32_t status_page_bytes;
	uint32_t sq_doorbells_bytes;
	uint32_t reserved;
};

/* Generic request naming one object. */
struct uroce_handle_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
};

/* Generic response naming one new object. */
struct uroce_handle_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
};

/* CREATE_CHANNEL: the channel and its event word in the context's doorbell
 * page (struct uroce_sq_doorbells.chan_event), or UROCE_CHAN_NO_SLOT. */
struct uroce_channel_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t event_slot;
};

struct uroce_device_attr {
	char fw_ver[64];
	uint64_t node_guid;	 /* network order */
	uint64_t sys_image_guid; /* network order */
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t device_cap_flags;
	uint32_t max_sge;
	uint32_t max_sge_rd;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_qp_rd_atom;
	uint32_t max_res_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint32_t atomic_cap;
	uint32_t max_mw;
	uint32_t max_mcast_grp;
	uint32_t max_mcast_qp_attach;
	uint32_t max_total_mcast_qp_attach;
	uint32_t max_ah;
	uint32_t max_srq;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_inline_data;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
	uint64_t hca_core_clock_khz;
	uint64_t completion_timestamp_mask;
	uint32_t max_cq_moderation_count;
	uint32_t max_cq_moderation_period;
	uint64_t max_dm_size; /* device memory: the largest ibv_alloc_dm */
	/* on-demand paging (struct ibv_odp_caps values) */
	uint64_t odp_general_caps;
	uint32_t odp_rc_caps, odp_uc_caps, odp_ud_caps, odp_xrc_caps;
	/* ibv_device_attr_ex.device_cap_flags_ex bits above device_cap_flags'
	 * 32 (IB_UVERBS_DEVICE_ATOMIC_WRITE, 1 << 40) */
	uint64_t device_cap_flags_ex;
};

struct uroce_query_device_resp {
	struct uroce_msg_hdr hdr;
	struct uroce_device_attr attr;
};

struct uroce_port_attr {
	uint32_t state;
	uint32_t max_mtu;
	uint32_t active_mtu;
	uint32_t gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint16_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint8_t reserved;
	uint16_t port_cap_flags2;
};

/* QUERY_PORT, QUERY_GID and QUERY_PKEY take a port and an index. */
struct uroce_query_port_req {
	struct uroce_msg_hdr hdr;
	uint32_t port_num;
	uint32_t index;
};

struct uroce_query_port_resp {
	struct uroce_msg_hdr hdr;
	struct uroce_port_attr attr;
};

enum uroce_gid_type {
	UROCE_GID_TYPE_IB = 0,	    /* "IB/RoCE v1" */
	UROCE_GID_TYPE_ROCE_V2 = 1, /* "RoCE v2" */
};

/* An empty GID table entry is reported with valid = 0 and a zero GID. */
struct uroce_query_gid_resp {
	struct uroce_msg_hdr hdr;
	uint8_t gid[16];
	uint32_t gid_type;
	uint32_t valid;
	uint32_t ndev_ifindex;
	uint32_t reserved;
};

struct uroce_query_pkey_resp {
	struct uroce_msg_hdr hdr;
	uint16_t pkey; /* host order */
	uint16_t reserved[3];
};

struct uroce_reg_mr_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
};

/*
 * MAP_MR: the pages [addr, addr+length) of a registered MR (page aligned,
 * inside its range) are now a shared mapping of the memfd that comes with
 * the request (SCM_RIGHTS, sealed against shrinking), from its offset 0;
 * the daemon maps it and reaches those pages through its own mapping
 * instead of process_vm_readv/writev. Answered with a bare header. With
 * UROCE_MAP_MR_PROBE in flags (and no memfd) it only says whether it would
 * (0, or ENOSPC when the mapping would pass the RNIC's --map-budget).
 */
#define UROCE_MAP_MR_PROBE 1u
struct uroce_map_mr_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t flags;
	uint64_t addr;
	uint64_t length;
};

struct uroce_reg_mr_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
};

struct uroce_rereg_mr_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t flags; /* enum uroce_rereg_flags */
	uint32_t pd_handle;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
};

/* ALLOC_MW: a memory window of type 1 or 2 (enum ibv_mw_type) in a PD. */
struct uroce_alloc_mw_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;
	uint32_t type;
};

struct uroce_alloc_mw_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t rkey;
};

/* DEALLOC_MW is a uroce_handle_req. */

/*
 * ALLOC_DM (ibv_alloc_dm): device memory is memory the daemon owns, a memfd
 * that both map; the answer carries its fd. FREE_DM is a uroce_handle_req.
 */
struct uroce_alloc_dm_req {
	struct uroce_msg_hdr hdr;
	uint64_t length;
	uint32_t log_align_req;
	uint32_t comp_mask;
};

struct uroce_alloc_dm_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
	uint64_t map_bytes; /* what to mmap of the fd (length rounded up to pages) */
};

/* REG_DM_MR (ibv_reg_dm_mr): a zero-based MR over [offset, offset+length) of a DM; the
 * answer is a uroce_reg_mr_resp. */
struct uroce_reg_dm_mr_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;
	uint32_t dm_handle;
	uint64_t offset;
	uint64_t length;
	uint32_t access;
	uint32_t reserved;
};

/* CREATE_CHANNEL response carries one fd: the read end of the event pipe. */

/*
 * CREATE_CQ / RESIZE_CQ responses carry one fd: the CQ ring memfd
 * (ring_bytes long, header at offset 0).
 */
/*
 * ADVISE_MR (ibv_advise_mr): advice is enum ibv_advise_mr_advice, flags
 * enum ibv_advise_mr_flags; the SGEs name ranges of ODP MRs of the PD. A
 * longer list is sent in several requests.
 */
#define UROCE_ADVISE_MAX_SGE 64
struct uroce_advise_mr_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;
	uint32_t advice;
	uint32_t flags;
	uint32_t num_sge;
	struct {
		uint64_t addr;
		uint32_t length;
		uint32_t lkey;
	} sge[UROCE_ADVISE_MAX_SGE];
};

struct uroce_create_cq_req {
	struct uroce_msg_hdr hdr;
	uint32_t cqe;
	uint32_t channel_handle; /* 0: none */
	uint32_t comp_vector;
	uint32_t flags; /* enum uroce_cq_flags */
};

/* CREATE_CQ flags. */
enum uroce_cq_flags {
	/* the CQEs carry completion timestamps (ibv_create_cq_ex with
	 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP or _WALLCLOCK) */
	UROCE_CQ_TIMESTAMPS = 1 << 0,
};

struct uroce_cq_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t entries; /* ring size; the CQ holds this many CQEs */
	uint64_t ring_bytes;
};

struct uroce_resize_cq_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t cqe;
};

struct uroce_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct uroce_ah_attr {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint16_t dlid;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
	uint8_t reserved[2];
};

struct uroce_qp_attr {
	uint32_t qp_state;
	uint32_t cur_qp_state;
	uint32_t path_mtu;
	uint32_t path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint32_t rate_limit;
	struct uroce_qp_cap cap;
	struct uroce_ah_attr ah_attr;
	struct uroce_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
	uint8_t reserved;
};

/*
 * CREATE_QP response fds: [0] SQ ring memfd, [1] RQ ring memfd unless the QP
 * uses an SRQ (nfds says how many).
 */
struct uroce_create_qp_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;	 /* not for XRC_RECV */
	uint32_t send_cq_handle; /* not for XRC_RECV */
	uint32_t recv_cq_handle; /* only RC, UC, UD */
	uint32_t srq_handle;	 /* 0: none */
	uint32_t qp_type;
	uint32_t sq_sig_all;
	uint32_t create_flags;
	uint32_t xrcd_handle; /* XRC_RECV only: its XRC domain */
	struct uroce_qp_cap cap;
};

struct uroce_create_qp_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t qpn;
	struct uroce_qp_cap cap; /* what the QP really has (>= requested) */
	uint32_t nfds;
	uint32_t reserved;
	uint64_t sq_bytes;
	uint64_t rq_bytes;
};

struct uroce_modify_qp_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
	struct uroce_qp_attr attr;
};

struct uroce_query_qp_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
};

struct uroce_query_qp_resp {
	struct uroce_msg_hdr hdr;
	struct uroce_qp_attr attr;
	struct uroce_qp_cap init_cap;
	uint32_t sq_sig_all;
	uint32_t reserved;
};

/* SRQ types (enum ibv_srq_type). */
enum uroce_srq_type {
	UROCE_SRQT_BASIC = 0,
	UROCE_SRQT_XRC = 1,
	UROCE_SRQT_TM = 2,
};

/* CREATE_SRQ response carries one fd: the SRQ ring memfd. */
struct uroce_create_srq_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t srq_type;    /* enum ibv_srq_type: 0 basic, 1 XRC */
	uint32_t xrcd_handle; /* XRC: its XRC domain */
	uint32_t cq_handle;   /* XRC: the CQ its receive completions go to */
	uint32_t reserved;
};

/*
 * OPEN_XRCD (ibv_open_xrcd): fd is a descriptor of the calling process
 * (-1: a domain of its own), oflags its O_CREAT/O_EXCL. One XRC domain per
 * file (its inode, as the kernel keys it): another context opening the same
 * file gets a handle of the same domain. Answer: uroce_handle_resp.
 * CLOSE_XRCD is a uroce_handle_req.
 */
struct uroce_open_xrcd_req {
	struct uroce_msg_hdr hdr;
	int32_t fd;
	uint32_t oflags;
};

/*
 * OPEN_QP (ibv_open_qp): a handle of the XRC target QP qpn of the domain
 * xrcd_handle (qp_type must be XRC_RECV). Answer: uroce_handle_resp.
 */
struct uroce_open_qp_req {
	struct uroce_msg_hdr hdr;
	uint32_t xrcd_handle;
	uint32_t qpn;
	uint32_t qp_type;
	uint32_t reserved;
};

struct uroce_create_srq_resp {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t srq_num;
	uint32_t max_wr;
	uint32_t max_sge;
	uint64_t ring_bytes;
};

/*
 * MODIFY_SRQ (ibv_modify_srq). With UROCE_SRQ_MAX_WR the SRQ is resized:
 * the answer carries one fd, the new ring (ring_bytes), holding the WQEs
 * posted and not yet taken at the same ring indices; the old ring is no
 * longer read. The shim holds the SRQ's producer lock across the call
 * (verbs-shim/srq.c says why). max_wr is the SRQ's size after the call.
 */
struct uroce_modify_srq_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t attr_mask;
	uint32_t max_wr;
	uint32_t srq_limit;
};

struct uroce_modify_srq_resp {
	struct uroce_msg_hdr hdr;
	uint32_t max_wr;
	uint32_t reserved;
	uint64_t ring_bytes; /* UROCE_SRQ_MAX_WR: bytes of the new ring */
};

struct uroce_query_srq_resp {
	struct uroce_msg_hdr hdr;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t reserved;
};

struct uroce_create_ah_req {
	struct uroce_msg_hdr hdr;
	uint32_t pd_handle;
	uint32_t reserved;
	struct uroce_ah_attr attr;
};

struct uroce_mcast_req {
	struct uroce_msg_hdr hdr;
	uint32_t qp_handle;
	uint16_t lid;
	uint16_t reserved;
	uint8_t gid[16];
};

/*
 * QUERY_COUNTERS (allowed before OPEN_CTX, like HELLO): the counters of the
 * device (qpn 0) or of one QP (-ENOENT if there is none). values[] holds
 * ndrop transport drop counters, then nevent transport event counters, then
 * ndaemon daemon counters (0 for a QP), each in the order of the daemon's
 * lists (emu/xport_counters.h, emu/dev_counters.h); lists only grow at
 * their end, so a reader knows the names of the first ones it was built
 * with.
 */
#define UROCE_COUNTERS_MAX 240

struct uroce_query_counters_req {
	struct uroce_msg_hdr hdr;
	uint32_t qpn;
	uint32_t reserved;
};

struct uroce_query_counters_resp {
	struct uroce_msg_hdr hdr;
	uint32_t ndrop;
	uint32_t nevent;
	uint32_t ndaemon;
	uint32_t qpn;
	uint64_t values[UROCE_COUNTERS_MAX];
};

/*
 * FAULT (allowed before OPEN_CTX, like QUERY_COUNTERS): the fault rules of
 * the device (docs/daemon.md, "Fault injection"; `uroce fault`). ADD parses
 * rule (NUL-terminated; -EINVAL when malformed, -ENOSPC when the device has
 * as many as it takes) and answers its id; DEL removes rule id (-ENOENT);
 * CLEAR removes every rule; LIST answers up to UROCE_FAULT_LIST_MAX rules
 * with ids >= id in rules[] (count of them) and in next_id the id to ask
 * for next (0: no more). Every answer carries the device seed and the
 * number of rules.
 */
enum uroce_fault_cmd {
	UROCE_FAULT_ADD = 1,
	UROCE_FAULT_DEL = 2,
	UROCE_FAULT_LIST = 3,
	UROCE_FAULT_CLEAR = 4,
};

#define UROCE_FAULT_RULE_BYTES 160
#define UROCE_FAULT_LIST_MAX 5

struct uroce_fault_req {
	struct uroce_msg_hdr hdr;
	uint32_t cmd;			   /* enum uroce_fault_cmd */
	uint32_t id;			   /* DEL: the rule; LIST: the first id to list */
	char rule[UROCE_FAULT_RULE_BYTES]; /* ADD */
};

struct uroce_fault_entry {
	uint32_t id;
	uint32_t reserved;
	uint64_t matched; /* packets that met the rule's conditions */
	uint64_t fired;	  /* faults it injected */
	char rule[UROCE_FAULT_RULE_BYTES];
};

struct uroce_fault_resp {
	struct uroce_msg_hdr hdr;
	uint32_t cmd;
	uint32_t id; /* ADD: the new rule's id */
	uint32_t nrules;
	uint32_t count; /* LIST: entries in rules[] */
	uint32_t next_id;
	uint32_t reserved;
	uint64_t seed;
	struct uroce_fault_entry rules[UROCE_FAULT_LIST_MAX];
};

/*
 * QP_LIST (allowed before OPEN_CTX): the live QPs of the device in QPN
 * order, what `uroce qp` shows: up to UROCE_QP_LIST_MAX QPs numbered qpn or
 * more, next_qpn the number to ask for next (0: no more); with flag
 * UROCE_QP_LIST_ONE only QP qpn (-ENOENT when there is none). The state is
 * the transport's at the time of the request.
 */
#define UROCE_QP_LIST_ONE 0x1u
#define UROCE_QP_LIST_MAX 8
#define UROCE_COMM_BYTES 16 /* as /proc/PID/comm (TASK_COMM_LEN) */

struct uroce_qp_list_req {
	struct uroce_msg_hdr hdr;
	uint32_t qpn;
	uint32_t flags;
};

struct uroce_qp_info {
	uint32_t qpn;
	uint32_t dest_qpn;
	uint32_t qp_type;     /* enum uroce_qp_type */
	uint32_t qp_state;    /* enum uroce_qp_state */
	uint32_t sq_psn;      /* the next PSN the requester sends */
	uint32_t unacked_psn; /* the oldest PSN not yet acknowledged */
	uint32_t rq_psn;      /* the PSN the responder expects next */
	uint32_t msn;	      /* the responder's message sequence number */
	uint32_t sq_wrs;      /* send WRs posted and not completed */
	uint32_t rq_wrs;      /* receive WRs posted and not yet taken (0 with an SRQ) */
	uint32_t rd_atomic;   /* READ and atomic requests outstanding */
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint8_t retry_left; /* retries left before RETRY_EXC_ERR (of retry_cnt) */
	uint8_t retry_cnt;
	uint8_t rnr_left; /* RNR retries left (of rnr_retry; 7 = without end) */
	uint8_t rnr_retry;
	uint8_t timeout;
	uint8_t min_rnr_timer;
	uint8_t path_mtu; /* enum ibv_mtu */
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t has_srq;
	uint8_t reserved[2];
	uint32_t pid; /* the owning process */
	uint32_t ctx_handle;
	char comm[UROCE_COMM_BYTES]; /* its /proc/PID/comm */
	uint8_t dgid[16];	     /* the path's destination (RC/UC) */
};

struct uroce_qp_list_resp {
	struct uroce_msg_hdr hdr;
	uint32_t count; /* entries in qps[] */
	uint32_t next_qpn;
	uint32_t nqps; /* QPs of the device */
	uint32_t reserved;
	struct uroce_qp_info qps[UROCE_QP_LIST_MAX];
};

/*
 * MR_LIST and CQ_LIST (allowed before OPEN_CTX): the live MRs or CQs of the
 * device in handle order, what `uroce mr` and `uroce cq` show: up to
 * UROCE_MR_LIST_MAX / UROCE_CQ_LIST_MAX objects whose handle is from or more,
 * next the handle to ask for next (0: no more), total the device's count.
 * The request and the answer's head have the layout of QP_LIST's, so one
 * pager in the CLI serves all three.
 */
#define UROCE_MR_LIST_MAX 24
#define UROCE_CQ_LIST_MAX 24

struct uroce_res_list_req {
	struct uroce_msg_hdr hdr;
	uint32_t from;
	uint32_t flags; /* 0 */
};

struct uroce_mr_info {
	uint32_t handle;
	uint32_t pd_handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t access; /* enum uroce_access_flags */
	uint32_t pid;	 /* the owning process */
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
	uint32_t ctx_handle;
	uint32_t map_pages; /* pages of it the daemon maps (MAP_MR), 0: none */
	char comm[UROCE_COMM_BYTES];
};

struct uroce_mr_list_resp {
	struct uroce_msg_hdr hdr;
	uint32_t count; /* entries in mrs[] */
	uint32_t next;
	uint32_t total;
	uint32_t reserved;
	struct uroce_mr_info mrs[UROCE_MR_LIST_MAX];
};

struct uroce_cq_info {
	uint32_t handle;
	uint32_t cqe;		/* capacity: entries of the ring */
	uint32_t cqe_requested; /* as the application asked */
	uint32_t unpolled;	/* CQEs written and not yet polled (prod - cons) */
	uint32_t arm;		/* enum uroce_cq_arm */
	uint32_t overflowed;	/* 1 after a CQE was lost */
	uint32_t channel;	/* handle of its completion channel, 0: none */
	uint32_t comp_vector;
	uint64_t events; /* completion events sent to the channel */
	uint64_t lost;	 /* completions lost since the overrun */
	uint32_t pid;
	uint32_t ctx_handle;
	char comm[UROCE_COMM_BYTES];
};

struct uroce_cq_list_resp {
	struct uroce_msg_hdr hdr;
	uint32_t count; /* entries in cqs[] */
	uint32_t next;
	uint32_t total;
	uint32_t reserved;
	struct uroce_cq_info cqs[UROCE_CQ_LIST_MAX];
};

/* ------------------------------------------------------------------------ */
/* Event records.                                                            */

/* Written to a completion channel pipe when an armed CQ gets a completion. */
struct uroce_comp_event {
	uint32_t cq_handle;
	uint32_t reserved;
};

/*
 * Written to a context's async pipe. handle names a QP, CQ or SRQ according
 * to the event type, or is the port number for port events.
 */
struct uroce_async_event {
	uint32_t event_type; /* enum uroce_event_type */
	uint32_t handle;
	uint32_t reserved[2];
};

/* ------------------------------------------------------------------------ */
/* Shared memory.                                                            */

#define UROCE_STATUS_MAGIC 0x75727374u /* "urst" */

/* Device-wide page, written only by the daemon (sealed against writers). */
struct uroce_status_page {
	uint32_t magic;
	uint32_t version;
	uint8_t pad0[UROCE_CACHELINE_BYTES - 8];
	/*
	 * 1 while the daemon sleeps in its event loop: a producer that
	 * publishes work and then sees 1 (after a full fence) rings its
	 * context's doorbell. 0 while the daemon is busy and will look.
	 */
	uint32_t daemon_asleep;
	uint8_t pad1[UROCE_CACHELINE_BYTES - 4];
};

#define UROCE_STATUS_PAGE_BYTES 4096

/*
 * A context's send doorbells: one bit per QP of the context (the SQ ring
 * header's db_index), so that the daemon looks only at the send queues
 * that have new WQEs instead of at every QP on every pass. After
 * publishing a new SQ producer index the shim sets the QP's bit in leaf[]
 * and then, with the same kind of atomic OR, bit (db_index / 64) % 64 of
 * summary[db_index / 4096] (a bit it finds set it leaves as it is,
 * uroce_sq_db_ring); then it checks daemon_asleep as before. The
 * daemon swaps a non-zero summary word to 0 first and then the leaf words
 * it names, and reads the producer index of each QP named after that, so
 * a bit set after the swap is seen by the next pass and a producer index
 * published before a bit it found is never missed. The bits are hints: a
 * bit of no QP, or of an SQ with nothing new, costs one look.
 */
#define UROCE_SQ_DB_BITS 65536u
#define UROCE_SQ_DB_LEAF_WORDS (UROCE_SQ_DB_BITS / 64)
#define UROCE_SQ_DB_SUMMARY_WORDS (UROCE_SQ_DB_LEAF_WORDS / 64)

/*
 * The same page carries the context's completion channels' event words
 * (chan_event[], one per channel, the slot CREATE_CHANNEL names): a thread
 * that waits in ibv_get_cq_event sets its channel's word from IDLE to
 * WATCHED while it looks for an event, and the daemon, when a CQ of that
 * channel fires, swaps WATCHED for FIRED with the CQ's handle (one
 * compare-and-swap) instead of writing the event to the channel's pipe, so
 * neither side makes a system call for it. Whoever changes the word last
 * decides: the daemon writes to the pipe whenever the word was not WATCHED,
 * and a thread that stops looking swaps WATCHED back to IDLE, or finds
 * FIRED and takes that event. So each event is delivered once, through
 * memory or the pipe, and at most one waits in memory at a time. Beside
 * the word, the daemon counts the records it wrote to the pipe (piped,
 * stored after each write): a thread that has read fewer knows a record
 * waits there without a poll(2) of the pipe.
 */
#define UROCE_CHAN_EVENT_SLOTS 128u
#define UROCE_CHAN_EV_IDLE 0ull
#define UROCE_CHAN_EV_WATCHED 1ull
#define UROCE_CHAN_EV_FIRED 2ull /* low bits; the CQ handle in the high 32 */
#define UROCE_CHAN_EV_STATE(w) ((w)&3ull)
#define UROCE_CHAN_EV_CQ(w) ((uint32_t)((w) >> 32))
#define UROCE_CHAN_EV_MAKE_FIRED(cq_handle) (((uint64_t)(cq_handle) << 32) | UROCE_CHAN_EV_FIRED)
/* CREATE_CHANNEL's event_slot when the channel has no word (pipe only). */
#define UROCE_CHAN_NO_SLOT UINT32_MAX

struct uroce_chan_event {
	uint64_t word;	/* UROCE_CHAN_EV_*: the shim and the daemon swap it */
	uint64_t piped; /* records the daemon wrote to the pipe (only it writes this) */
};

struct uroce_sq_doorbells {
	uint64_t summary[UROCE_SQ_DB_SUMMARY_WORDS];
	uint8_t pad0[2048 - UROCE_SQ_DB_SUMMARY_WORDS * 8];
	struct uroce_chan_event chan_event[UROCE_CHAN_EVENT_SLOTS];
	uint64_t leaf[UROCE_SQ_DB_LEAF_WORDS];
};
_Static_assert(offsetof(struct uroce_sq_doorbells, leaf) == 4096, "leaf bits on the second page");

/*
 * Ring the send doorbell of db_index (the shim; see above) after the new
 * producer index was published. It begins with a full fence, so the
 * caller's next load (daemon_asleep) is ordered after the publication too.
 * A bit found set is left alone: the daemon has not swapped it since it was
 * set, so it still will, and it reads the producer index after that swap
 * (the fence orders the publication before the look at the bit). The
 * summary bit is looked at only once the leaf bit is known to be set, so a
 * set summary bit found here leads the daemon to this leaf. Most posts of a
 * burst find both bits still set by the post before and so leave the two
 * cache lines the daemon polls shared instead of taking them over with a
 * locked instruction each.
 */
static inline void uroce_sq_db_ring(struct uroce_sq_doorbells *d, uint32_t db_index)
{
	uint64_t *leaf = &d->leaf[db_index / 64], *sum = &d->summary[db_index / 4096];
	uint64_t leaf_bit = 1ull << (db_index % 64), sum_bit = 1ull << (db_index / 64 % 64);

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(leaf, __ATOMIC_SEQ_CST) & leaf_bit))
		__atomic_fetch_or(leaf, leaf_bit, __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(sum, __ATOMIC_SEQ_CST) & sum_bit))
		__atomic_fetch_or(sum, sum_bit, __ATOMIC_SEQ_CST);
}

#define UROCE_RING_MAGIC 0x7572726eu /* "urrn" */

enum uroce_ring_kind {
	UROCE_RING_SQ = 1,
	UROCE_RING_RQ = 2,
	UROCE_RING_SRQ = 3,
	UROCE_RING_CQ = 4,
};

/* CQ arm states (struct uroce_ring_hdr.arm). */
enum uroce_cq_arm {
	UROCE_CQ_ARM_NONE = 0,
	UROCE_CQ_ARM_NEXT = 1,
	UROCE_CQ_ARM_SOLICITED = 2,
};

/*
 * Ring header, at offset 0 of every ring memfd. Entries follow at
 * UROCE_RING_HDR_BYTES. Indices are free-running 32-bit counters; the slot of
 * index i is i & (entries - 1) and the ring is full when prod - cons ==
 * entries. Each index has one writer and lives on its own cache line; the
 * writer publishes with a release store after filling the entry, the reader
 * loads with acquire before reading it.
 *
 *   SQ, RQ, SRQ: the shim produces WQEs (prod); the daemon consumes them
 *                (cons) when the WQE's work is complete, so a slot is reused
 *                only after its completion was generated.
 *   CQ:          the daemon produces CQEs (prod); the shim consumes (cons).
 */
struct uroce_ring_hdr {
	/* line 0: geometry, written once by the daemon before the fd is sent */
	uint32_t magic;
	uint32_t kind; /* enum uroce_ring_kind */
	uint32_t entries;
	uint32_t stride; /* bytes per entry */
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t handle; /* daemon handle of the owning object */
	uint32_t qpn;	 /* SQ/RQ: QP number; SRQ: SRQ number */
	uint32_t db_index; /* SQ: the QP's bit in struct uroce_sq_doorbells */
	uint8_t pad0[UROCE_CACHELINE_BYTES - 36];
	/* line 1: producer index */
	uint32_t prod;
	uint8_t pad1[UROCE_CACHELINE_BYTES - 4];
	/* line 2: consumer index */
	uint32_t cons;
	uint8_t pad2[UROCE_CACHELINE_BYTES - 4];
	/* line 3: written by the daemon, read by the shim */
	uint32_t qp_state; /* SQ/RQ: enum uroce_qp_state */
	uint32_t overflow; /* CQ: 1 after a CQE was lost (CQ error) */
	/* RQ: ring index up to which receive WQEs are finished (their CQE
	 * written, or dropped by a reset); cons runs ahead of it by the WQE
	 * the transport holds. What lies in [done, prod) is outstanding: the
	 * shim flushes it when the daemon dies. */
	uint32_t done;
	uint8_t pad3[UROCE_CACHELINE_BYTES - 12];
	/* line 4: written by the shim, read and cleared by the daemon */
	uint32_t arm; /* CQ: enum uroce_cq_arm */
	/* CQ: 1 + the CPU of the thread that last polled it empty long
	 * enough to yield (the shim stores it when it changes); 0: none yet.
	 * Read by the daemon, which places itself by it (emu/daemon/dp/place.c). */
	uint32_t poller;
	uint8_t pad4[UROCE_CACHELINE_BYTES - 8];
};

#define UROCE_RING_HDR_BYTES 512

/* Scatter/gather element, as in a WR. */
struct uroce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * Send WQE: this fixed part, then either num_sge struct uroce_sge or
 * inline_len bytes of inline payload (UROCE_SEND_INLINE). The stride of an
 * SQ is UROCE_SEND_WQE_BYTES + max(max_sge * 16, max_inline), rounded up to
 * 64 bytes.
 */
struct uroce_send_wqe {
	uint64_t wr_id;
	uint32_t opcode;     /* enum uroce_wr_opcode */
	uint32_t send_flags; /* enum uroce_send_flags */
	uint32_t imm_data;   /* immediate (network order) or rkey to invalidate */
	uint32_t num_sge;
	uint32_t inline_len;
	uint32_t xrc_remote_srqn; /* XRC_SEND: the XRC SRQ at the target (qp_type.xrc) */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint32_t reserved;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
			uint32_t reserved;
		} atomic;
		/* FLUSH (ibv_wr_flush, rdma-core 45): the RETH's range and the FETH */
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint32_t length;
			uint8_t type;  /* enum uroce_flush placement type bits */
			uint8_t level; /* UROCE_FLUSH_RANGE or UROCE_FLUSH_MR */
			uint8_t reserved[6];
		} flush;
		/* BIND_MW (ibv_bind_mw for type 1, IBV_WR_BIND_MW for type 2) */
		struct {
			uint32_t mw_handle;
			uint32_t rkey;	  /* the window's R_Key after the bind */
			uint32_t mr_lkey; /* the MR it covers; 0: none (unbind, type 1) */
			uint32_t access;  /* enum uroce_access_flags */
			uint64_t addr;
			uint64_t length;
		} bind;
	} wr;
	struct {
		uint32_t ah_handle;
		uint32_t remote_qpn;
		uint32_t remote_qkey;
		uint32_t reserved;
	} ud;
};

#define UROCE_SEND_WQE_BYTES 80

/* Receive WQE: this fixed part, then num_sge struct uroce_sge. */
struct uroce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t reserved;
};

#define UROCE_RECV_WQE_BYTES 16

/* ------------------------------------------------------------------------ */
/* The RDMA CM (docs/cm.md).                                                 */
/*
 * CM_OPEN (allowed before OPEN_CTX) turns a connection into an RDMA CM
 * channel of this device: the connection carries the CM_* commands, and the
 * response's fd [0] is the channel's event socket (SOCK_SEQPACKET, one
 * struct uroce_cm_event per message, readable iff an event is pending). Every
 * CM id created on the connection belongs to it; when it closes the daemon
 * destroys them (a connected one sends a DisconnectRequest first).
 * Handles are the daemon's CM id numbers, device-wide.
 */

/* enum rdma_cm_event_type (rdma/rdma_cma.h), restated. */
#define UROCE_CM_EVENT_LIST(X) \
	X(ADDR_RESOLVED, 0)    \
	X(ADDR_ERROR, 1)       \
	X(ROUTE_RESOLVED, 2)   \
	X(ROUTE_ERROR, 3)      \
	X(CONNECT_REQUEST, 4)  \
	X(CONNECT_RESPONSE, 5) \
	X(CONNECT_ERROR, 6)    \
	X(UNREACHABLE, 7)      \
	X(REJECTED, 8)         \
	X(ESTABLISHED, 9)      \
	X(DISCONNECTED, 10)    \
	X(DEVICE_REMOVAL, 11)  \
	X(MULTICAST_JOIN, 12)  \
	X(MULTICAST_ERROR, 13) \
	X(ADDR_CHANGE, 14)     \
	X(TIMEWAIT_EXIT, 15)

enum uroce_cm_event_type {
#define UROCE_CM_EVENT_ENUM(name, val) UROCE_CM_EVENT_##name = val,
	UROCE_CM_EVENT_LIST(UROCE_CM_EVENT_ENUM)
#undef UROCE_CM_EVENT_ENUM
};

/* The RDMA CM port spaces (enum rdma_port_space: 0x0100 | IP protocol). */
#define UROCE_CM_PS_IPOIB 0x0002
#define UROCE_CM_PS_TCP 0x0106
#define UROCE_CM_PS_UDP 0x0111
#define UROCE_CM_PS_IB 0x013f

#define UROCE_CM_PRIVATE_DATA_MAX 256

/* An IP endpoint: the address as a GID (IPv4-mapped ::ffff:a.b.c.d or IPv6). */
struct uroce_cm_addr {
	uint8_t gid[16];
	uint16_t port; /* host order */
	uint8_t ipv;   /* 4 or 6 */
	uint8_t reserved;
};

/* struct rdma_ucm_conn_param's contents (what rdma_connect/rdma_accept pass,
 * and what a CONNECT_REQUEST/RESPONSE, REJECTED, ESTABLISHED event carries). */
struct uroce_cm_conn_param {
	uint32_t qp_num;
	uint32_t qkey;
	uint8_t private_data[UROCE_CM_PRIVATE_DATA_MAX];
	uint8_t private_data_len;
	uint8_t srq;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t reserved;
};

struct uroce_cm_open_resp {
	struct uroce_msg_hdr hdr;
	uint32_t daemon_pid;
	uint32_t reserved;
};

/* CM_LISTEN: listen on (port space, addr.port) at addr (the device's own
 * address, or a wildcard of ipv 4 or 6). -EADDRINUSE when another listener
 * of the device has it. qp_type is the listening id's (IBV_QPT_*): an
 * XRC_RECV listener takes XRC ConnectRequests only, any other listener no
 * XRC one. Response: struct uroce_handle_resp. */
struct uroce_cm_listen_req {
	struct uroce_msg_hdr hdr;
	struct uroce_cm_addr addr;
	uint16_t ps;
	uint8_t wildcard;
	uint8_t reuseaddr;
	uint32_t backlog;
	uint8_t qp_type;
	uint8_t reserved[3];
};

/* CM_CONNECT: send a ConnectRequest from src to dst. Response: struct
 * uroce_handle_resp; the outcome comes as an event (CONNECT_RESPONSE,
 * REJECTED, UNREACHABLE). */
struct uroce_cm_connect_req {
	struct uroce_msg_hdr hdr;
	struct uroce_cm_addr src;
	struct uroce_cm_addr dst;
	uint16_t ps;
	uint8_t qp_type;     /* IBV_QPT_RC, UC, UD (SIDR) or XRC_SEND */
	uint8_t tos;	     /* the traffic class of the path */
	uint8_t ack_timeout; /* the QP's local ACK timeout; 0: the device's */
	/* A route given as a path record (RDMA_OPTION_IB_PATH): its MTU
	 * (IBV_MTU_*), SL and rate (IBA rate code); 0: the RNIC's. */
	uint8_t path_mtu, path_sl, path_rate;
	struct uroce_cm_conn_param p;
};

/* CM_ACCEPT: on a CONNECT_REQUEST's id, send the ConnectReply (p: the
 * local QP); on a connecting id after CONNECT_RESPONSE, send the
 * ReadyToUse (p ignored). -EINVAL in any other state. */
struct uroce_cm_accept_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t reserved;
	struct uroce_cm_conn_param p;
};

/* CM_REJECT: answer a ConnectRequest (or a ConnectReply) with a
 * ConnectReject, reason 28 (consumer reject) unless reason says otherwise. */
struct uroce_cm_reject_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint8_t reason; /* 0: consumer reject */
	uint8_t private_data_len;
	uint8_t reserved[2];
	uint8_t private_data[UROCE_CM_PRIVATE_DATA_MAX];
};

/* CM_DISCONNECT and CM_DESTROY take a struct uroce_handle_req; so does
 * CM_MIGRATE, sent on another channel of the same process: the id moves to
 * that channel (rdma_migrate_id), its later events go there. */

/* CM_NOTIFY (rdma_notify): the application saw an asynchronous event on the
 * id's QP. UROCE_EVENT_COMM_EST on a connection whose REP awaits its RTU
 * establishes it (RDMA_CM_EVENT_ESTABLISHED); -EISCONN when established
 * already, -EINVAL in any other state. UROCE_EVENT_PATH_MIG: 0 (no
 * alternate path). Other events: -EINVAL. */
struct uroce_cm_notify_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t event; /* enum uroce_event_type (ibv_event_type) */
};

/* CM_INIT_QP_ATTR: the attributes of a QP state for this id's connection,
 * as ib_uverbs_qp_attr carries them (mask: IBV_QP_* bits). */
struct uroce_cm_init_qp_attr_req {
	struct uroce_msg_hdr hdr;
	uint32_t handle;
	uint32_t qp_state;
};

struct uroce_cm_qp_attr {
	uint32_t mask;
	uint32_t qp_state;
	uint32_t qp_access_flags;
	uint32_t dest_qp_num;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t qkey;
	uint32_t flow_label;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t path_mtu;
	uint8_t max_dest_rd_atomic;
	uint8_t max_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sgid_index;
	uint8_t is_global;
	uint8_t sl;
	uint8_t static_rate; /* IBA rate code, as ibv_rate */
	uint8_t dgid[16];
};

struct uroce_cm_init_qp_attr_resp {
	struct uroce_msg_hdr hdr;
	struct uroce_cm_qp_attr attr;
};

/* CM_JOIN_MCAST (rdma_join_multicast): join the multicast group addr (an
 * IPv4 group as ::ffff:a.b.c.d, or an IPv6 group) on this RNIC as the RDMA
 * CM does: the RNIC joins the IP group on its interface (not for a
 * send-only member), and a MULTICAST_JOIN event follows with the group's
 * address vector (remote: the group), QPN 0xFFFFFF and the Q_Key. The
 * join is a CM id of its own: CM_DESTROY leaves. Response: struct
 * uroce_handle_resp. -EINVAL for an address that is no group of the
 * RNIC's family. */
#define UROCE_CM_JOIN_SENDONLY 1 /* RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER */
struct uroce_cm_join_req {
	struct uroce_msg_hdr hdr;
	struct uroce_cm_addr addr;
	uint16_t join_flags;
	uint16_t reserved;
	uint32_t reserved1;
};

/* One event on the event socket. */
struct uroce_cm_event {
	uint32_t handle; /* the id it is for */
	uint32_t event;	 /* enum uroce_cm_event_type */
	int32_t status;	 /* 0, -errno, or a REJ reason (REJECTED) */
	uint32_t child;	 /* CONNECT_REQUEST: the new id's handle */
	/* CONNECT_REQUEST: the new id's local and remote endpoints. */
	struct uroce_cm_addr local;
	struct uroce_cm_addr remote;
	struct uroce_cm_conn_param p;
};

/* Layout checks: both sides compile these. */
_Static_assert(sizeof(struct uroce_ring_hdr) == 5 * UROCE_CACHELINE_BYTES, "ring header layout");
_Static_assert(sizeof(struct uroce_ring_hdr) <= UROCE_RING_HDR_BYTES, "ring header fits");
_Static_assert(offsetof(struct uroce_ring_hdr, prod) == 64, "prod line");
_Static_assert(offsetof(struct uroce_ring_hdr, cons) == 128, "cons line");
_Static_assert(sizeof(struct uroce_send_wqe) == UROCE_SEND_WQE_BYTES, "send WQE layout");
_Static_assert(sizeof(struct uroce_recv_wqe) == UROCE_RECV_WQE_BYTES, "recv WQE layout");
_Static_assert(sizeof(struct uroce_sge) == 16, "sge layout");
_Static_assert(sizeof(struct uroce_status_page) <= UROCE_STATUS_PAGE_BYTES, "status page");
_Static_assert(sizeof(struct uroce_query_counters_resp) <= UROCE_MSG_MAX_BYTES,
	       "counters fit one message");
_Static_assert(sizeof(struct uroce_fault_req) <= UROCE_MSG_MAX_BYTES, "fault request fits");
_Static_assert(sizeof(struct uroce_advise_mr_req) <= UROCE_MSG_MAX_BYTES, "advice fits");
_Static_assert(sizeof(struct uroce_fault_resp) <= UROCE_MSG_MAX_BYTES, "fault answer fits");
_Static_assert(sizeof(struct uroce_qp_info) == 104, "QP info layout");
_Static_assert(sizeof(struct uroce_qp_list_resp) <= UROCE_MSG_MAX_BYTES, "QP list fits");
_Static_assert(sizeof(struct uroce_mr_list_resp) <= UROCE_MSG_MAX_BYTES, "MR list fits");
_Static_assert(sizeof(struct uroce_cq_list_resp) <= UROCE_MSG_MAX_BYTES, "CQ list fits");
_Static_assert(sizeof(struct uroce_res_list_req) == sizeof(struct uroce_qp_list_req) &&
		   offsetof(struct uroce_res_list_req, from) ==
		       offsetof(struct uroce_qp_list_req, qpn),
	       "the list requests share a layout");
_Static_assert(
    offsetof(struct uroce_mr_list_resp, mrs) == offsetof(struct uroce_qp_list_resp, qps) &&
	offsetof(struct uroce_cq_list_resp, cqs) == offsetof(struct uroce_qp_list_resp, qps) &&
	offsetof(struct uroce_mr_list_resp, next) == offsetof(struct uroce_qp_list_resp, next_qpn),
    "the list answers share a head");
_Static_assert(sizeof(struct uroce_comp_event) == 8, "comp event record");
_Static_assert(sizeof(struct uroce_cm_addr) == 20, "CM address layout");
_Static_assert(sizeof(struct uroce_cm_conn_param) == 272, "CM conn param layout");
_Static_assert(sizeof(struct uroce_cm_connect_req) <= UROCE_MSG_MAX_BYTES, "CM connect fits");
_Static_assert(sizeof(struct uroce_cm_accept_req) <= UROCE_MSG_MAX_BYTES, "CM accept fits");
_Static_assert(sizeof(struct uroce_cm_reject_req) <= UROCE_MSG_MAX_BYTES, "CM reject fits");
_Static_assert(sizeof(struct uroce_cm_init_qp_attr_resp) <= UROCE_MSG_MAX_BYTES, "CM QP attr fits");
_Static_assert(sizeof(struct uroce_cm_event) <= UROCE_MSG_MAX_BYTES, "CM event fits");
_Static_assert(sizeof(struct uroce_async_event) == 16, "async event record");

/* ------------------------------------------------------------------------ */
/* Ring helpers shared by both sides (index arithmetic and atomics only).   */

static inline uint32_t uroce_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void uroce_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Full fence between publishing an index and reading the asleep flag. */
static inline void uroce_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Address of the entry of free-running index idx in a ring of the given
 * geometry (entries is a power of two). */
static inline void *uroce_ring_entry(void *ring, uint32_t entries, uint32_t stride, uint32_t idx)
{
	return (char *)ring + UROCE_RING_HDR_BYTES + (size_t)(idx & (entries - 1)) * stride;
}

/* Bytes of a ring with this geometry, rounded up to whole pages. */
static inline uint64_t uroce_ring_bytes(uint32_t entries, uint32_t stride)
{
	uint64_t n = UROCE_RING_HDR_BYTES + (uint64_t)entries * stride;

	return (n + 4095) & ~(uint64_t)4095;
}

/* Bytes after the fixed part of a send WQE: max_sge SGEs or max_inline
 * bytes of payload, whichever is more (a payload snapshot, UROCE_SEND_PREREAD,
 * fits in it too). */
static inline uint32_t uroce_sq_data_bytes(uint32_t max_sge, uint32_t max_inline)
{
	uint32_t data = max_sge * (uint32_t)sizeof(struct uroce_sge);

	return max_inline > data ? max_inline : data;
}

/* Stride of a send queue with these capabilities. */
static inline uint32_t uroce_sq_stride(uint32_t max_sge, uint32_t max_inline)
{
	return (UROCE_SEND_WQE_BYTES + uroce_sq_data_bytes(max_sge, max_inline) + 63) & ~63u;
}

/* Stride of a receive queue or SRQ with this many SGEs. */
static inline uint32_t uroce_rq_stride(uint32_t max_sge)
{
	uint32_t n = UROCE_RECV_WQE_BYTES + max_sge * (uint32_t)sizeof(struct uroce_sge);

	return (n + 15) & ~15u;
}

#endif /* UROCE_UAPI_H */
