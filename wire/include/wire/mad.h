/* SPDX-License-Identifier: MIT */
/*
 * Management datagrams (MADs) and the Communication Manager's messages on
 * the wire (IBA 13.4 MAD format, IBA 12.6 CM messages, Annex A11 the RDMA
 * CM's IP addressing). On RoCEv2 a CM MAD is the whole 256-byte payload of
 * a UD SEND Only to QP1 (the GSI QP, Q_Key 0x80010000). This module gives
 * the 24-byte common MAD header as a byte layout with accessors, every CM
 * message field as one row of a table (message, byte offset in the MAD
 * data, bit offset from the most significant bit, width, name), the
 * service ID and private-data header of the RDMA CM's IP port spaces, and a
 * total parser of a payload into a summary for describers and receivers.
 * It does not send, time out or keep any state: that is the daemon's CM.
 */
#ifndef WIRE_MAD_H
#define WIRE_MAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wire/bytes.h>
#include <wire/ext.h>
#include <wire/reason.h>

#define WIRE_MAD_BYTES 256
#define WIRE_MAD_HDR_BYTES 24
#define WIRE_MAD_DATA_BYTES (WIRE_MAD_BYTES - WIRE_MAD_HDR_BYTES)
#define WIRE_MAD_BASE_VERSION 1
/* The Communication Management class, and its class version since release 1.2 of the IBA. */
#define WIRE_MGMT_CLASS_CM 0x07
#define WIRE_CM_CLASS_VERSION 2

/* MAD methods (IBA 13.4.5); the CM sends everything with Send. */
enum {
	WIRE_MAD_METHOD_GET = 0x01,
	WIRE_MAD_METHOD_SET = 0x02,
	WIRE_MAD_METHOD_SEND = 0x03,
	WIRE_MAD_METHOD_GET_RESP = 0x81,
};

/* The common MAD header: IBA 13.4.2. */
struct wire_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method; /* bit 7: response */
	uint8_t status[2];
	uint8_t class_specific[2];
	uint8_t tid[8];
	uint8_t attr_id[2];
	uint8_t resv[2];
	uint8_t attr_mod[4];
};
_Static_assert(sizeof(struct wire_mad_hdr) == WIRE_MAD_HDR_BYTES, "MAD header is 24 bytes");

static inline uint16_t wire_mad_get_status(const struct wire_mad_hdr *h)
{
	return wire_get_be16(h->status);
}

static inline void wire_mad_set_status(struct wire_mad_hdr *h, uint16_t v)
{
	wire_put_be16(h->status, v);
}

static inline uint64_t wire_mad_get_tid(const struct wire_mad_hdr *h)
{
	return wire_get_be64(h->tid);
}

static inline void wire_mad_set_tid(struct wire_mad_hdr *h, uint64_t v)
{
	wire_put_be64(h->tid, v);
}

static inline uint16_t wire_mad_get_attr_id(const struct wire_mad_hdr *h)
{
	return wire_get_be16(h->attr_id);
}

static inline void wire_mad_set_attr_id(struct wire_mad_hdr *h, uint16_t v)
{
	wire_put_be16(h->attr_id, v);
}

static inline uint32_t wire_mad_get_attr_mod(const struct wire_mad_hdr *h)
{
	return wire_get_be32(h->attr_mod);
}

static inline void wire_mad_set_attr_mod(struct wire_mad_hdr *h, uint32_t v)
{
	wire_put_be32(h->attr_mod, v);
}

/* CM attributes (IBA 12.6, table 101): X(symbol, attribute ID, name as tshark gives it). */
#define WIRE_CM_ATTR_LIST(X)                        \
	X(CLASS_PORT_INFO, 0x0001, "ClassPortInfo") \
	X(REQ, 0x0010, "ConnectRequest")            \
	X(MRA, 0x0011, "MsgRcptAck")                \
	X(REJ, 0x0012, "ConnectReject")             \
	X(REP, 0x0013, "ConnectReply")              \
	X(RTU, 0x0014, "ReadyToUse")                \
	X(DREQ, 0x0015, "DisconnectRequest")        \
	X(DREP, 0x0016, "DisconnectReply")          \
	X(SIDR_REQ, 0x0017, "ServiceIDResReq")      \
	X(SIDR_REP, 0x0018, "ServiceIDResReqResp")  \
	X(LAP, 0x0019, "LoadAlternatePath")         \
	X(APR, 0x001a, "AlternatePathResponse")

enum wire_cm_attr {
#define WIRE_CM_ATTR_ENUM(sym, id, name) WIRE_CM_ATTR_##sym = (id),
	WIRE_CM_ATTR_LIST(WIRE_CM_ATTR_ENUM)
#undef WIRE_CM_ATTR_ENUM
};

/* The attribute's name, or NULL for an attribute ID the CM class does not define. */
const char *wire_cm_attr_name(uint16_t attr_id);

/*
 * Every field of the CM messages: X(message, field, byte, bit, width, name).
 * byte is the offset in the MAD data (after the 24-byte header), bit the
 * offset from the most significant bit of that byte, width in bits; fields
 * of 64 bits or less are numbers (wire_cm_get/set), wider ones are byte
 * ranges (wire_cm_field_ptr). From IBA tables 106 (REQ), 107 (MRA), 108
 * (REJ), 110 (REP), 111 (RTU), 112 (DREQ), 113 (DREP), 119 (SIDR_REQ) and
 * 120 (SIDR_REP). Names are those of the fields in the tables.
 */
#define WIRE_CM_FIELD_LIST(X)                                                      \
	X(REQ, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                           \
	X(REQ, SERVICE_ID, 8, 0, 64, "service_id")                                 \
	X(REQ, LOCAL_CA_GUID, 16, 0, 64, "local_ca_guid")                          \
	X(REQ, LOCAL_QKEY, 28, 0, 32, "local_qkey")                                \
	X(REQ, LOCAL_QPN, 32, 0, 24, "local_qpn")                                  \
	X(REQ, RESPONDER_RESOURCES, 35, 0, 8, "responder_resources")               \
	X(REQ, LOCAL_EECN, 36, 0, 24, "local_eecn")                                \
	X(REQ, INITIATOR_DEPTH, 39, 0, 8, "initiator_depth")                       \
	X(REQ, REMOTE_EECN, 40, 0, 24, "remote_eecn")                              \
	X(REQ, REMOTE_CM_RESPONSE_TIMEOUT, 43, 0, 5, "remote_cm_response_timeout") \
	X(REQ, TRANSPORT_SERVICE_TYPE, 43, 5, 2, "transport_service_type")         \
	X(REQ, END_TO_END_FLOW_CONTROL, 43, 7, 1, "end_to_end_flow_control")       \
	X(REQ, STARTING_PSN, 44, 0, 24, "starting_psn")                            \
	X(REQ, LOCAL_CM_RESPONSE_TIMEOUT, 47, 0, 5, "local_cm_response_timeout")   \
	X(REQ, RETRY_COUNT, 47, 5, 3, "retry_count")                               \
	X(REQ, PKEY, 48, 0, 16, "partition_key")                                   \
	X(REQ, PATH_MTU, 50, 0, 4, "path_packet_payload_mtu")                      \
	X(REQ, RDC_EXISTS, 50, 4, 1, "rdc_exists")                                 \
	X(REQ, RNR_RETRY_COUNT, 50, 5, 3, "rnr_retry_count")                       \
	X(REQ, MAX_CM_RETRIES, 51, 0, 4, "max_cm_retries")                         \
	X(REQ, SRQ, 51, 4, 1, "srq")                                               \
	X(REQ, EXTENDED_TRANSPORT_TYPE, 51, 5, 3, "extended_transport_type")       \
	X(REQ, PRIMARY_LOCAL_LID, 52, 0, 16, "primary_local_port_lid")             \
	X(REQ, PRIMARY_REMOTE_LID, 54, 0, 16, "primary_remote_port_lid")           \
	X(REQ, PRIMARY_LOCAL_GID, 56, 0, 128, "primary_local_port_gid")            \
	X(REQ, PRIMARY_REMOTE_GID, 72, 0, 128, "primary_remote_port_gid")          \
	X(REQ, PRIMARY_FLOW_LABEL, 88, 0, 20, "primary_flow_label")                \
	X(REQ, PRIMARY_PACKET_RATE, 91, 2, 6, "primary_packet_rate")               \
	X(REQ, PRIMARY_TRAFFIC_CLASS, 92, 0, 8, "primary_traffic_class")           \
	X(REQ, PRIMARY_HOP_LIMIT, 93, 0, 8, "primary_hop_limit")                   \
	X(REQ, PRIMARY_SL, 94, 0, 4, "primary_sl")                                 \
	X(REQ, PRIMARY_SUBNET_LOCAL, 94, 4, 1, "primary_subnet_local")             \
	X(REQ, PRIMARY_LOCAL_ACK_TIMEOUT, 95, 0, 5, "primary_local_ack_timeout")   \
	X(REQ, PRIVATE_DATA, 140, 0, 736, "private_data")                          \
	X(MRA, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                           \
	X(MRA, REMOTE_COMM_ID, 4, 0, 32, "remote_comm_id")                         \
	X(MRA, MESSAGE_MRAED, 8, 0, 2, "message_mraed")                            \
	X(MRA, SERVICE_TIMEOUT, 9, 0, 5, "service_timeout")                        \
	X(MRA, PRIVATE_DATA, 10, 0, 1776, "private_data")                          \
	X(REJ, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                           \
	X(REJ, REMOTE_COMM_ID, 4, 0, 32, "remote_comm_id")                         \
	X(REJ, MESSAGE_REJECTED, 8, 0, 2, "message_rejected")                      \
	X(REJ, REJECTED_INFO_LENGTH, 9, 0, 7, "rejected_info_length")              \
	X(REJ, REASON, 10, 0, 16, "reason")                                        \
	X(REJ, ARI, 12, 0, 576, "additional_rejection_info")                       \
	X(REJ, PRIVATE_DATA, 84, 0, 1184, "private_data")                          \
	X(REP, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                           \
	X(REP, REMOTE_COMM_ID, 4, 0, 32, "remote_comm_id")                         \
	X(REP, LOCAL_QKEY, 8, 0, 32, "local_qkey")                                 \
	X(REP, LOCAL_QPN, 12, 0, 24, "local_qpn")                                  \
	X(REP, LOCAL_EECN, 16, 0, 24, "local_eecn")                                \
	X(REP, STARTING_PSN, 20, 0, 24, "starting_psn")                            \
	X(REP, RESPONDER_RESOURCES, 24, 0, 8, "responder_resources")               \
	X(REP, INITIATOR_DEPTH, 25, 0, 8, "initiator_depth")                       \
	X(REP, TARGET_ACK_DELAY, 26, 0, 5, "target_ack_delay")                     \
	X(REP, FAILOVER_ACCEPTED, 26, 5, 2, "failover_accepted")                   \
	X(REP, END_TO_END_FLOW_CONTROL, 26, 7, 1, "end_to_end_flow_control")       \
	X(REP, RNR_RETRY_COUNT, 27, 0, 3, "rnr_retry_count")                       \
	X(REP, SRQ, 27, 3, 1, "srq")                                               \
	X(REP, LOCAL_CA_GUID, 28, 0, 64, "local_ca_guid")                          \
	X(REP, PRIVATE_DATA, 36, 0, 1568, "private_data")                          \
	X(RTU, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                           \
	X(RTU, REMOTE_COMM_ID, 4, 0, 32, "remote_comm_id")                         \
	X(RTU, PRIVATE_DATA, 8, 0, 1792, "private_data")                           \
	X(DREQ, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                          \
	X(DREQ, REMOTE_COMM_ID, 4, 0, 32, "remote_comm_id")                        \
	X(DREQ, REMOTE_QPN, 8, 0, 24, "remote_qpn_eecn")                           \
	X(DREQ, PRIVATE_DATA, 12, 0, 1760, "private_data")                         \
	X(DREP, LOCAL_COMM_ID, 0, 0, 32, "local_comm_id")                          \
	X(DREP, REMOTE_COMM_ID, 4, 0, 32, "remote_comm_id")                        \
	X(DREP, PRIVATE_DATA, 8, 0, 1792, "private_data")                          \
	X(SIDR_REQ, REQUEST_ID, 0, 0, 32, "request_id")                            \
	X(SIDR_REQ, PKEY, 4, 0, 16, "partition_key")                               \
	X(SIDR_REQ, SERVICE_ID, 8, 0, 64, "service_id")                            \
	X(SIDR_REQ, PRIVATE_DATA, 16, 0, 1728, "private_data")                     \
	X(SIDR_REP, REQUEST_ID, 0, 0, 32, "request_id")                            \
	X(SIDR_REP, STATUS, 4, 0, 8, "status")                                     \
	X(SIDR_REP, ADD_INFO_LENGTH, 5, 0, 8, "additional_information_length")     \
	X(SIDR_REP, QPN, 8, 0, 24, "qpn")                                          \
	X(SIDR_REP, SERVICE_ID, 12, 0, 64, "service_id")                           \
	X(SIDR_REP, QKEY, 20, 0, 32, "qkey")                                       \
	X(SIDR_REP, ADD_INFO, 24, 0, 576, "additional_information")                \
	X(SIDR_REP, PRIVATE_DATA, 96, 0, 1088, "private_data")

enum wire_cm_field {
#define WIRE_CM_FIELD_ENUM(msg, field, byte, bit, width, name) WIRE_CM_##msg##_##field,
	WIRE_CM_FIELD_LIST(WIRE_CM_FIELD_ENUM)
#undef WIRE_CM_FIELD_ENUM
	    WIRE_CM_FIELD_COUNT
};

struct wire_cm_field_info {
	uint16_t attr_id; /* the message that has the field */
	uint16_t byte;	  /* offset in the MAD data */
	uint8_t bit;	  /* from the most significant bit of that byte */
	uint16_t width;	  /* bits */
	const char *name;
};

/* The row of a field (NULL when f is out of range). */
const struct wire_cm_field_info *wire_cm_field(enum wire_cm_field f);
/*
 * A numeric field (width <= 64) of the MAD at mad (WIRE_MAD_BYTES long, the
 * header included). Wider fields read as 0; use wire_cm_field_ptr.
 */
uint64_t wire_cm_get(const uint8_t *mad, enum wire_cm_field f);
/* Store v (truncated to the field's width) without touching neighbour bits. */
void wire_cm_set(uint8_t *mad, enum wire_cm_field f, uint64_t v);
/* The first byte of a byte-aligned field (a GID, private data) in mad. */
static inline const uint8_t *wire_cm_field_ptr(const uint8_t *mad, enum wire_cm_field f)
{
	return mad + WIRE_MAD_HDR_BYTES + wire_cm_field(f)->byte;
}
/* Its length in bytes. */
static inline size_t wire_cm_field_bytes(enum wire_cm_field f)
{
	return wire_cm_field(f)->width / 8u;
}

/* REJ reasons (IBA 12.6.7, table 109): X(symbol, code, name). */
#define WIRE_CM_REJ_LIST(X)                                                    \
	X(NO_QP, 1, "no QP available")                                         \
	X(NO_EEC, 2, "no EEC available")                                       \
	X(NO_RESOURCES, 3, "no resources available")                           \
	X(TIMEOUT, 4, "timeout")                                               \
	X(UNSUPPORTED_REQ, 5, "unsupported request")                           \
	X(INVALID_COMM_ID, 6, "invalid communication ID")                      \
	X(INVALID_COMM_INSTANCE, 7, "invalid communication instance")          \
	X(INVALID_SERVICE_ID, 8, "invalid service ID")                         \
	X(INVALID_TRANSPORT_TYPE, 9, "invalid transport service type")         \
	X(STALE_CONN, 10, "stale connection")                                  \
	X(RDC_NOT_EXIST, 11, "RDC does not exist")                             \
	X(INVALID_GID, 12, "primary remote port GID rejected")                 \
	X(INVALID_LID, 13, "primary remote port LID rejected")                 \
	X(INVALID_SL, 14, "invalid primary SL")                                \
	X(INVALID_TRAFFIC_CLASS, 15, "invalid primary traffic class")          \
	X(INVALID_HOP_LIMIT, 16, "invalid primary hop limit")                  \
	X(INVALID_PACKET_RATE, 17, "invalid primary packet rate")              \
	X(INVALID_ALT_GID, 18, "alternate remote port GID rejected")           \
	X(INVALID_ALT_LID, 19, "alternate remote port LID rejected")           \
	X(INVALID_ALT_SL, 20, "invalid alternate SL")                          \
	X(INVALID_ALT_TRAFFIC_CLASS, 21, "invalid alternate traffic class")    \
	X(INVALID_ALT_HOP_LIMIT, 22, "invalid alternate hop limit")            \
	X(INVALID_ALT_PACKET_RATE, 23, "invalid alternate packet rate")        \
	X(PORT_CM_REDIRECT, 24, "port and CM redirection")                     \
	X(PORT_REDIRECT, 25, "port redirection")                               \
	X(INVALID_MTU, 26, "invalid path MTU")                                 \
	X(INSUFFICIENT_RESP_RESOURCES, 27, "insufficient responder resources") \
	X(CONSUMER_REJECT, 28, "consumer reject")                              \
	X(INVALID_RNR_RETRY, 29, "RNR retry count reject")                     \
	X(DUPLICATE_LOCAL_COMM_ID, 30, "duplicate local communication ID")     \
	X(INVALID_CLASS_VERSION, 31, "invalid class version")                  \
	X(INVALID_FLOW_LABEL, 32, "invalid primary flow label")                \
	X(INVALID_ALT_FLOW_LABEL, 33, "invalid alternate flow label")          \
	X(VENDOR_OPTION_NOT_SUPPORTED, 35, "vendor option not supported")

enum wire_cm_rej_reason {
#define WIRE_CM_REJ_ENUM(sym, code, name) WIRE_CM_REJ_##sym = (code),
	WIRE_CM_REJ_LIST(WIRE_CM_REJ_ENUM)
#undef WIRE_CM_REJ_ENUM
};

/* The reason's name, or NULL for a code table 109 does not define. */
const char *wire_cm_rej_name(uint16_t reason);

/*
 * The RDMA CM's service IDs for IP port spaces (Annex A11, RDMA IP CM Service): prefix
 * 0x0000000001, then the port space (0x02 IPoIB, 0x06 TCP, 0x11 UDP), then
 * the 16-bit port.
 */
#define WIRE_CM_IP_SID_PREFIX 0x0000000001ull
enum {
	WIRE_CM_PS_IPOIB = 0x02,
	WIRE_CM_PS_TCP = 0x06,
	WIRE_CM_PS_UDP = 0x11,
};

static inline uint64_t wire_cm_ip_service_id(uint8_t ps, uint16_t port)
{
	return WIRE_CM_IP_SID_PREFIX << 24 | (uint64_t)ps << 16 | port;
}

static inline bool wire_cm_service_id_is_ip(uint64_t sid)
{
	return sid >> 24 == WIRE_CM_IP_SID_PREFIX;
}

/*
 * The IP addressing header at the start of the private data of an RDMA CM
 * REQ or SIDR_REQ in an IP port space (Annex A11, "CM IP private data"): version byte (major 7:4,
 * minor 3:0, 0.0), IP version in bits 7:4 of the next byte, the source port, then source and
 * destination address as 16 bytes each (IPv4 in the last four).
 */
#define WIRE_CM_IP_HDR_BYTES 36
struct wire_cm_ip_hdr {
	uint8_t version;
	uint8_t ip_version;
	uint8_t sport[2];
	uint8_t src[16];
	uint8_t dst[16];
};
_Static_assert(sizeof(struct wire_cm_ip_hdr) == WIRE_CM_IP_HDR_BYTES, "CM IP header is 36 bytes");

static inline unsigned wire_cm_ip_get_ipv(const struct wire_cm_ip_hdr *h)
{
	return h->ip_version >> 4;
}

static inline void wire_cm_ip_set_ipv(struct wire_cm_ip_hdr *h, unsigned v)
{
	h->ip_version = (uint8_t)((v & 0xf) << 4);
}

static inline uint16_t wire_cm_ip_get_sport(const struct wire_cm_ip_hdr *h)
{
	return wire_get_be16(h->sport);
}

static inline void wire_cm_ip_set_sport(struct wire_cm_ip_hdr *h, uint16_t v)
{
	wire_put_be16(h->sport, v);
}

/* What a parsed CM MAD says, for describers and for the daemon's CM. */
struct wire_cm_msg {
	uint8_t method;
	uint16_t attr_id;
	const char *attr_name; /* NULL: not a CM attribute */
	uint64_t tid;
	uint32_t local_comm_id; /* REQ..DREP; request ID for SIDR */
	uint32_t remote_comm_id;
	uint64_t service_id;   /* REQ, SIDR_REQ, SIDR_REP */
	uint32_t qpn;	       /* REQ/REP local QPN, DREQ remote QPN, SIDR_REP QPN */
	uint32_t eecn;	       /* REP local EECN: an XRC target's QPN (annex A14) */
	uint32_t starting_psn; /* REQ, REP */
	uint16_t rej_reason;   /* REJ */
	uint8_t sidr_status;   /* SIDR_REP */
	/* The RDMA CM IP header, when a REQ or SIDR_REQ of an IP service ID carries one. */
	bool has_ip;
	const struct wire_cm_ip_hdr *ip;
};

/*
 * Parse a UD payload as a CM MAD. WIRE_R_OK with *m filled; WIRE_R_MAD_SHORT
 * (not 256 bytes), WIRE_R_MAD_VERSION (base version, class version),
 * WIRE_R_MAD_CLASS (not the CM class) or WIRE_R_MAD_ATTR (an attribute the
 * CM class does not define). Never reads past len.
 */
enum wire_reason wire_cm_parse(const uint8_t *payload, size_t len, struct wire_cm_msg *m);

/* Start a CM message at mad: all WIRE_MAD_BYTES zero, then the header (Send, status 0). */
void wire_cm_init(uint8_t *mad, uint16_t attr_id, uint64_t tid);

#endif /* WIRE_MAD_H */
