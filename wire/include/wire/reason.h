/* SPDX-License-Identifier: MIT */
/*
 * Why a frame or an IB packet was not accepted: one X-macro list
 * (WIRE_REASON_LIST) generates the enum and the names. Framing parse,
 * validation and decode return these; the daemon counts its drops by them.
 * WIRE_R_OK is 0; WIRE_R_NOT_ROCE means "not for us" (skip, not an error).
 */
#ifndef WIRE_REASON_H
#define WIRE_REASON_H

/* X(enum suffix, short name (also the JSON/counter key), description) */
#define WIRE_REASON_LIST(X)                                                                    \
	X(OK, "ok", "ok")                                                                      \
	X(NOT_ROCE, "not_roce", "not a RoCEv2 packet (not UDP port 4791)")                     \
	X(FRAME_TRUNCATED, "frame_truncated", "frame ends inside the Ethernet/IP/UDP headers") \
	X(IP_BAD_HEADER, "ip_bad_header", "IP header length invalid")                          \
	X(IP_BAD_LENGTH, "ip_bad_length", "IP length field disagrees with the frame")          \
	X(IP_FRAGMENT, "ip_fragment", "IP fragment (RoCEv2 is never fragmented)")              \
	X(UDP_BAD_LENGTH, "udp_bad_length", "UDP length field wrong")                          \
	X(TOO_SHORT, "too_short", "too short for BTH and ICRC")                                \
	X(NOT_MULTIPLE_OF_4, "not_multiple_of_4", "IB packet length not a multiple of 4")      \
	X(BAD_TVER, "bad_tver", "TVer not 0")                                                  \
	X(UNKNOWN_OPCODE, "unknown_opcode", "unknown opcode")                                  \
	X(SHORT_FOR_OPCODE, "short_for_opcode", "too short for the opcode's headers")          \
	X(PAD_INCONSISTENT, "pad_inconsistent", "pad count inconsistent with the payload")     \
	X(LENGTH_FOR_OPCODE, "length_for_opcode", "length wrong for the opcode")               \
	X(BAD_ICRC, "bad_icrc", "ICRC mismatch")                                               \
	X(MAD_SHORT, "mad_short", "management datagram not 256 bytes")                         \
	X(MAD_VERSION, "mad_version", "MAD base or class version not supported")               \
	X(MAD_CLASS, "mad_class", "MAD of a management class other than the CM")               \
	X(MAD_ATTR, "mad_attr", "CM MAD with an attribute the CM class does not define")

enum wire_reason {
#define WIRE__REASON_ENUM(sym, key, desc) WIRE_R_##sym,
	WIRE_REASON_LIST(WIRE__REASON_ENUM)
#undef WIRE__REASON_ENUM
	    WIRE_R_COUNT
};

/* Short name ("too_short"); "invalid" for values out of range. */
const char *wire_reason_name(enum wire_reason r);

/* One-line description ("too short for BTH and ICRC"). */
const char *wire_reason_desc(enum wire_reason r);

#endif /* WIRE_REASON_H */
