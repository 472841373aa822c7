/* SPDX-License-Identifier: MIT */
/*
 * The packet describer: one human-readable line, or one JSON object, per
 * decoded packet, written into a caller buffer with snprintf semantics. The
 * line names the opcode as tshark does and gives DestQP, PSN, AckReq, SE,
 * the payload length, the fields of every extended header present and the
 * ICRC verdict (and a wrong IPv4 header checksum, which the ICRC does not
 * cover); for a malformed packet it gives the reason instead of fields
 * it could not trust.
 */
#ifndef WIRE_DESCRIBE_H
#define WIRE_DESCRIBE_H

#include <stddef.h>
#include <wire/decode.h>

/*
 * Text form, e.g.
 * "192.168.1.1:49443 > 192.168.1.2:4791 RC Send Only QP=0x000011 PSN=256 A=1 SE=0
 *  M=0 pad=3 len=5 icrc=ok"
 * (one line, no newline). Returns the length the full line has (like
 * snprintf); the output is truncated but always NUL-terminated when size > 0.
 */
int wire_describe(char *buf, size_t size, const struct wire_decoded *d);

/*
 * JSON form: one object on one line, no newline, keys stable:
 * src, dst, sport, dport, ip_csum_ok (IPv4), opcode, opcode_name, info_name, destqp, psn, ackreq,
 * se, mig, padcnt, pkey, fecn, becn, payload_len, reth{va,rkey,dmalen},
 * aeth{syndrome,type,value,msn}, atomiceth{va,rkey,swap_add,compare},
 * atomicacketh{orig}, deth{qkey,srcqp}, immdt, ieth, xrceth{srqn},
 * feth{sel,plt}, icrc ("ok"/"bad"/"unchecked"), icrc_wire, icrc_calc, reason,
 * malformed. 64-bit values (va, swap_add, compare, orig) are strings
 * "0x%016x" so no JSON reader loses precision; everything else is a number.
 * Same return convention as wire_describe().
 */
int wire_describe_json(char *buf, size_t size, const struct wire_decoded *d);

#endif /* WIRE_DESCRIBE_H */
