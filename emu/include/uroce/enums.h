/* SPDX-License-Identifier: MIT */
/*
 * The verbs values uroce uses, stated once: QP types and states, modify
 * masks, access and send flags, work request and completion opcodes,
 * completion status, async event types. Every number is the one of
 * rdma-core's <infiniband/verbs.h>, so rings and messages carry them
 * without translation. The daemon, the transport engine and the shim all
 * use these names (the shim checks them against <infiniband/verbs.h> at
 * compile time); nothing restates them. Part of the uapi (uapi.h includes
 * it); the engine includes only this file of the uapi (and wr_opcode.h,
 * which it includes: the WR opcode list with each opcode's properties).
 */
#ifndef UROCE_ENUMS_H
#define UROCE_ENUMS_H

/* ------------------------------------------------------------------------ */
/* Verbs values (same numbers as <infiniband/verbs.h>).                      */

/* X-macro: QP types (symbol, value). */
#define UROCE_QPT_LIST(X) \
	X(RC, 2)          \
	X(UC, 3)          \
	X(UD, 4)          \
	X(RAW_PACKET, 8)  \
	X(XRC_SEND, 9)    \
	X(XRC_RECV, 10)

enum uroce_qp_type {
#define UROCE_QPT_ENUM(name, val) UROCE_QPT_##name = val,
	UROCE_QPT_LIST(UROCE_QPT_ENUM)
#undef UROCE_QPT_ENUM
};

/* X-macro: QP states in enum order, with their names. */
#define UROCE_QP_STATE_LIST(X) \
	X(RESET, 0)            \
	X(INIT, 1)             \
	X(RTR, 2)              \
	X(RTS, 3)              \
	X(SQD, 4)              \
	X(SQE, 5)              \
	X(ERR, 6)

enum uroce_qp_state {
#define UROCE_QPS_ENUM(name, val) UROCE_QPS_##name = val,
	UROCE_QP_STATE_LIST(UROCE_QPS_ENUM)
#undef UROCE_QPS_ENUM
	    UROCE_QPS_COUNT
};

/* The names of QP types and states ("RC", "RTS"), "?" for other values. */
#define UROCE__NAME_CASE(sym, val) \
	case val:                  \
		return #sym;
static inline const char *uroce_qp_type_str(unsigned type)
{
	switch (type) {
		UROCE_QPT_LIST(UROCE__NAME_CASE)
	}
	return "?";
}
static inline const char *uroce_qp_state_str(unsigned state)
{
	switch (state) {
		UROCE_QP_STATE_LIST(UROCE__NAME_CASE)
	}
	return "?";
}

/* X-macro: ibv_qp_attr_mask bits. */
#define UROCE_QP_ATTR_LIST(X)     \
	X(STATE, 0)               \
	X(CUR_STATE, 1)           \
	X(EN_SQD_ASYNC_NOTIFY, 2) \
	X(ACCESS_FLAGS, 3)        \
	X(PKEY_INDEX, 4)          \
	X(PORT, 5)                \
	X(QKEY, 6)                \
	X(AV, 7)                  \
	X(PATH_MTU, 8)            \
	X(TIMEOUT, 9)             \
	X(RETRY_CNT, 10)          \
	X(RNR_RETRY, 11)          \
	X(RQ_PSN, 12)             \
	X(MAX_QP_RD_ATOMIC, 13)   \
	X(ALT_PATH, 14)           \
	X(MIN_RNR_TIMER, 15)      \
	X(SQ_PSN, 16)             \
	X(MAX_DEST_RD_ATOMIC, 17) \
	X(PATH_MIG_STATE, 18)     \
	X(CAP, 19)                \
	X(DEST_QPN, 20)           \
	X(RATE_LIMIT, 25)

enum uroce_qp_attr_mask {
#define UROCE_QP_ATTR_ENUM(name, bit) UROCE_QP_##name = 1u << (bit),
	UROCE_QP_ATTR_LIST(UROCE_QP_ATTR_ENUM)
#undef UROCE_QP_ATTR_ENUM
};

enum uroce_access_flags {
	UROCE_ACCESS_LOCAL_WRITE = 1 << 0,
	UROCE_ACCESS_REMOTE_WRITE = 1 << 1,
	UROCE_ACCESS_REMOTE_READ = 1 << 2,
	UROCE_ACCESS_REMOTE_ATOMIC = 1 << 3,
	UROCE_ACCESS_MW_BIND = 1 << 4,
	UROCE_ACCESS_ZERO_BASED = 1 << 5,
	UROCE_ACCESS_ON_DEMAND = 1 << 6,
	UROCE_ACCESS_HUGETLB = 1 << 7,
	/* rdma-core 45 (IBA A19 FLUSH): the placement types an MR may be flushed for */
	UROCE_ACCESS_FLUSH_GLOBAL = 1 << 8,
	UROCE_ACCESS_FLUSH_PERSISTENT = 1 << 9,
	/* bits 20..29: IBV_ACCESS_OPTIONAL_RANGE, ignored when unsupported */
	UROCE_ACCESS_OPTIONAL_MASK = 0x3ff00000,
};

/* struct ibv_odp_caps bits (enum ibv_odp_general_caps, ibv_odp_transport_cap_bits). */
enum uroce_odp_caps {
	UROCE_ODP_SUPPORT = 1 << 0,
	UROCE_ODP_SUPPORT_IMPLICIT = 1 << 1,
	UROCE_ODP_SEND = 1 << 0,
	UROCE_ODP_RECV = 1 << 1,
	UROCE_ODP_WRITE = 1 << 2,
	UROCE_ODP_READ = 1 << 3,
	UROCE_ODP_ATOMIC = 1 << 4,
	UROCE_ODP_SRQ_RECV = 1 << 5,
	UROCE_ODP_FLUSH = 1 << 6, /* IBV_ODP_SUPPORT_FLUSH (rdma-core 50) */
};

/*
 * FLUSH (IBA A19, rdma-core 45's ibv_wr_flush): the placement type (enum
 * ibv_placement_type, a bit mask, the FETH's PLT) and the selectivity level
 * (enum ibv_selectivity_level, the FETH's SEL).
 */
enum uroce_flush {
	UROCE_FLUSH_GLOBAL = 1 << 0,	 /* IBV_FLUSH_GLOBAL: globally visible */
	UROCE_FLUSH_PERSISTENT = 1 << 1, /* IBV_FLUSH_PERSISTENT: persistent */
	UROCE_FLUSH_RANGE = 0,		 /* IBV_FLUSH_RANGE: the RETH's range */
	UROCE_FLUSH_MR = 1,		 /* IBV_FLUSH_MR: the whole MR the R_Key names */
};

/* ibv_advise_mr: enum ibv_advise_mr_advice and enum ibv_advise_mr_flags. */
enum uroce_advise {
	UROCE_ADVISE_PREFETCH = 0,
	UROCE_ADVISE_PREFETCH_WRITE = 1,
	UROCE_ADVISE_PREFETCH_NO_FAULT = 2,
	UROCE_ADVISE_FLAG_FLUSH = 1 << 0,
};

enum uroce_rereg_flags {
	UROCE_REREG_CHANGE_TRANSLATION = 1 << 0,
	UROCE_REREG_CHANGE_PD = 1 << 1,
	UROCE_REREG_CHANGE_ACCESS = 1 << 2,
	UROCE_REREG_KEEP_VALID = 1 << 3,
};

/* Send work request opcodes (UROCE_WR_LIST): wr_opcode.h, included at the end. */

enum uroce_send_flags {
	UROCE_SEND_FENCE = 1 << 0,
	UROCE_SEND_SIGNALED = 1 << 1,
	UROCE_SEND_SOLICITED = 1 << 2,
	UROCE_SEND_INLINE = 1 << 3,
	UROCE_SEND_IP_CSUM = 1 << 4,
	/*
	 * Not a verbs flag (the shim clears it in what programs pass): the
	 * shim copied the payload of this SGE WQE, inline_len bytes, after its
	 * SGEs when the WR was posted, from memory its L_Keys cover. The
	 * daemon checks the SGEs as for any WQE and then sends those bytes
	 * instead of reading the program's memory (emu/daemon/dp/datapath.c).
	 */
	UROCE_SEND_PREREAD = 1 << 30,
};

enum uroce_wc_opcode {
	UROCE_WC_SEND = 0,
	UROCE_WC_RDMA_WRITE = 1,
	UROCE_WC_RDMA_READ = 2,
	UROCE_WC_COMP_SWAP = 3,
	UROCE_WC_FETCH_ADD = 4,
	UROCE_WC_BIND_MW = 5,
	UROCE_WC_LOCAL_INV = 6,
	UROCE_WC_FLUSH = 8, /* IBV_WC_FLUSH (rdma-core 45) */
	UROCE_WC_ATOMIC_WRITE = 9,
	UROCE_WC_RECV = 128,
	UROCE_WC_RECV_RDMA_WITH_IMM = 129,
};

/* X-macro: completion status (symbol, value, ibv_wc_status_str() text). */
#define UROCE_WC_STATUS_LIST(X)                                  \
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

enum uroce_wc_status {
#define UROCE_WC_STATUS_ENUM(name, val, str) UROCE_WC_##name = val,
	UROCE_WC_STATUS_LIST(UROCE_WC_STATUS_ENUM)
#undef UROCE_WC_STATUS_ENUM
};

enum uroce_wc_flags {
	UROCE_WC_GRH = 1 << 0,
	UROCE_WC_WITH_IMM = 1 << 1,
	UROCE_WC_WITH_INV = 1 << 3,
};

/* ibv_event_type values used by the daemon. */
enum uroce_event_type {
	UROCE_EVENT_CQ_ERR = 0,
	UROCE_EVENT_QP_FATAL = 1,
	UROCE_EVENT_QP_REQ_ERR = 2,
	UROCE_EVENT_QP_ACCESS_ERR = 3,
	UROCE_EVENT_COMM_EST = 4,
	UROCE_EVENT_SQ_DRAINED = 5,
	UROCE_EVENT_PATH_MIG = 6,
	UROCE_EVENT_PATH_MIG_ERR = 7,
	UROCE_EVENT_DEVICE_FATAL = 8,
	UROCE_EVENT_PORT_ACTIVE = 9,
	UROCE_EVENT_PORT_ERR = 10,
	UROCE_EVENT_LID_CHANGE = 11,
	UROCE_EVENT_PKEY_CHANGE = 12,
	UROCE_EVENT_SM_CHANGE = 13,
	UROCE_EVENT_SRQ_ERR = 14,
	UROCE_EVENT_SRQ_LIMIT_REACHED = 15,
	UROCE_EVENT_QP_LAST_WQE_REACHED = 16,
	UROCE_EVENT_CLIENT_REREGISTER = 17,
	UROCE_EVENT_GID_CHANGE = 18,
};

enum uroce_srq_attr_mask {
	UROCE_SRQ_MAX_WR = 1 << 0,
	UROCE_SRQ_LIMIT = 1 << 1,
};

/* The WR opcodes and their properties use the QP types and completion
 * opcodes above. */
#include "wr_opcode.h"

#endif /* UROCE_ENUMS_H */
