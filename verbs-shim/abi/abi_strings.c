/* SPDX-License-Identifier: MIT */
/*
 * abi_strings.c: the enum-to-string helpers of libibverbs
 * (ibv_wc_status_str, ibv_event_type_str, ibv_node_type_str,
 * ibv_port_state_str). Applications print these strings and test scripts
 * match on them, so every string is byte-for-byte the one rdma-core 44
 * returns, including "unknown" for values outside the table. Each table is
 * one X-macro list so the enum value and its text cannot drift apart. Pure:
 * no state, no I/O.
 */
#include <stddef.h>

#include <infiniband/verbs.h>

#define SHIM_WC_STATUS_MAP(X)                                        \
	X(IBV_WC_SUCCESS, "success")                                 \
	X(IBV_WC_LOC_LEN_ERR, "local length error")                  \
	X(IBV_WC_LOC_QP_OP_ERR, "local QP operation error")          \
	X(IBV_WC_LOC_EEC_OP_ERR, "local EE context operation error") \
	X(IBV_WC_LOC_PROT_ERR, "local protection error")             \
	X(IBV_WC_WR_FLUSH_ERR, "Work Request Flushed Error")         \
	X(IBV_WC_MW_BIND_ERR, "memory management operation error")   \
	X(IBV_WC_BAD_RESP_ERR, "bad response error")                 \
	X(IBV_WC_LOC_ACCESS_ERR, "local access error")               \
	X(IBV_WC_REM_INV_REQ_ERR, "remote invalid request error")    \
	X(IBV_WC_REM_ACCESS_ERR, "remote access error")              \
	X(IBV_WC_REM_OP_ERR, "remote operation error")               \
	X(IBV_WC_RETRY_EXC_ERR, "transport retry counter exceeded")  \
	X(IBV_WC_RNR_RETRY_EXC_ERR, "RNR retry counter exceeded")    \
	X(IBV_WC_LOC_RDD_VIOL_ERR, "local RDD violation error")      \
	X(IBV_WC_REM_INV_RD_REQ_ERR, "remote invalid RD request")    \
	X(IBV_WC_REM_ABORT_ERR, "aborted error")                     \
	X(IBV_WC_INV_EECN_ERR, "invalid EE context number")          \
	X(IBV_WC_INV_EEC_STATE_ERR, "invalid EE context state")      \
	X(IBV_WC_FATAL_ERR, "fatal error")                           \
	X(IBV_WC_RESP_TIMEOUT_ERR, "response timeout error")         \
	X(IBV_WC_GENERAL_ERR, "general error")                       \
	X(IBV_WC_TM_ERR, "TM error")                                 \
	X(IBV_WC_TM_RNDV_INCOMPLETE, "TM software rendezvous")

#define SHIM_EVENT_TYPE_MAP(X)                                                \
	X(IBV_EVENT_CQ_ERR, "CQ error")                                       \
	X(IBV_EVENT_QP_FATAL, "local work queue catastrophic error")          \
	X(IBV_EVENT_QP_REQ_ERR, "invalid request local work queue error")     \
	X(IBV_EVENT_QP_ACCESS_ERR, "local access violation work queue error") \
	X(IBV_EVENT_COMM_EST, "communication established")                    \
	X(IBV_EVENT_SQ_DRAINED, "send queue drained")                         \
	X(IBV_EVENT_PATH_MIG, "path migrated")                                \
	X(IBV_EVENT_PATH_MIG_ERR, "path migration request error")             \
	X(IBV_EVENT_DEVICE_FATAL, "local catastrophic error")                 \
	X(IBV_EVENT_PORT_ACTIVE, "port active")                               \
	X(IBV_EVENT_PORT_ERR, "port error")                                   \
	X(IBV_EVENT_LID_CHANGE, "LID change")                                 \
	X(IBV_EVENT_PKEY_CHANGE, "P_Key change")                              \
	X(IBV_EVENT_SM_CHANGE, "SM change")                                   \
	X(IBV_EVENT_SRQ_ERR, "SRQ catastrophic error")                        \
	X(IBV_EVENT_SRQ_LIMIT_REACHED, "SRQ limit reached")                   \
	X(IBV_EVENT_QP_LAST_WQE_REACHED, "last WQE reached")                  \
	X(IBV_EVENT_CLIENT_REREGISTER, "client reregistration")               \
	X(IBV_EVENT_GID_CHANGE, "GID table change")                           \
	X(IBV_EVENT_WQ_FATAL, "WQ fatal")

#define SHIM_NODE_TYPE_MAP(X)                        \
	X(IBV_NODE_CA, "InfiniBand channel adapter") \
	X(IBV_NODE_SWITCH, "InfiniBand switch")      \
	X(IBV_NODE_ROUTER, "InfiniBand router")      \
	X(IBV_NODE_RNIC, "iWARP NIC")                \
	X(IBV_NODE_USNIC, "usNIC")                   \
	X(IBV_NODE_USNIC_UDP, "usNIC UDP")           \
	X(IBV_NODE_UNSPECIFIED, "unspecified")

#define SHIM_PORT_STATE_MAP(X)                   \
	X(IBV_PORT_NOP, "no state change (NOP)") \
	X(IBV_PORT_DOWN, "down")                 \
	X(IBV_PORT_INIT, "init")                 \
	X(IBV_PORT_ARMED, "armed")               \
	X(IBV_PORT_ACTIVE, "active")             \
	X(IBV_PORT_ACTIVE_DEFER, "active defer")

#define SHIM_STR_ENTRY(value, text) [value] = text,

static const char *const shim_wc_status_names[] = {SHIM_WC_STATUS_MAP(SHIM_STR_ENTRY)};
static const char *const shim_event_type_names[] = {SHIM_EVENT_TYPE_MAP(SHIM_STR_ENTRY)};
static const char *const shim_node_type_names[] = {SHIM_NODE_TYPE_MAP(SHIM_STR_ENTRY)};
static const char *const shim_port_state_names[] = {SHIM_PORT_STATE_MAP(SHIM_STR_ENTRY)};

#define SHIM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Look up @value in a designated-initialiser table; values below zero, past
 * the end, or in a hole of the table are "unknown", as in rdma-core.
 */
static const char *shim_enum_str(const char *const *table, size_t n, long value)
{
	if (value < 0 || (size_t)value >= n || !table[value])
		return "unknown";
	return table[value];
}

/* Text of a work-completion status; "unknown" for any other value. */
const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return shim_enum_str(shim_wc_status_names, SHIM_ARRAY_SIZE(shim_wc_status_names),
			     (long)status);
}

/* Text of an asynchronous event type; "unknown" for any other value. */
const char *ibv_event_type_str(enum ibv_event_type event)
{
	return shim_enum_str(shim_event_type_names, SHIM_ARRAY_SIZE(shim_event_type_names),
			     (long)event);
}

/* Text of a node type; "unknown" for IBV_NODE_UNKNOWN (-1), 0 and others. */
const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	return shim_enum_str(shim_node_type_names, SHIM_ARRAY_SIZE(shim_node_type_names),
			     (long)node_type);
}

/* Text of a port state; "unknown" for any other value. */
const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	return shim_enum_str(shim_port_state_names, SHIM_ARRAY_SIZE(shim_port_state_names),
			     (long)port_state);
}
