/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 packets in one UDP GSO datagram. A sender may hand the kernel
 * several packets of one size back to back as one UDP send (UDP_SEGMENT);
 * the kernel or the NIC cuts it into datagrams of that size, whose IPv4
 * IDs count up from the first one's, each packet with its own ICRC for the
 * ID it gets. Where nothing cuts it (loopback, veth) a raw socket or a
 * capture sees the datagram whole: one IP header, one UDP header, then the
 * packets, with nothing that says how long each is. wire_gso_seg_size
 * finds that out from the packets themselves.
 */
#ifndef WIRE_GSO_H
#define WIRE_GSO_H

#include <stddef.h>
#include <stdint.h>

/* Most packets one datagram holds (the kernel's UDP_MAX_SEGMENTS is 64 or 128). */
#define WIRE_GSO_MAX_SEGS 64u
/* Most bytes of packets it holds: the UDP payload of a 64 KiB IPv4 datagram. */
#define WIRE_GSO_MAX_BYTES 65507u
/* The shortest RoCEv2 packet: BTH + AETH + ICRC (an ACK). */
#define WIRE_GSO_MIN_SEG 20u

/*
 * The segment size of a whole UDP GSO datagram of RoCEv2 packets, or 0 when
 * it is one packet. ip is its IP header (version from the first nibble,
 * ip_hdr_len bytes, options or extension headers included), udp its UDP
 * header and ib the len bytes of UDP payload. A size s qualifies when
 * len = n * s with 2 <= n <= WIRE_GSO_MAX_SEGS, the packets at 0 and at s
 * both start with a BTH of a known opcode, transport version 0, the same
 * P_Key and headers that fit in s, and the packet at 0 or the one at s has
 * a valid ICRC with the lengths of an s-byte packet and, over IPv4, the
 * datagram's IP ID + 0 or + 1 (so one damaged packet is found as such). The
 * smallest that qualifies is returned: a single packet qualifies only if
 * one of its first two s-byte pieces happens to end in its own ICRC (a
 * 2^-31 chance for data that was not built to do so). One datagram of two
 * sizes is found too: a packet of s = len - WIRE_GSO_MIN_SEG bytes and then
 * an ACK (an Acknowledge opcode, WIRE_GSO_MIN_SEG bytes, the same P_Key),
 * one of the two with a valid ICRC as segment 0 or 1: what a sender makes
 * of a request and the ACK it carries back (a GSO datagram's last segment
 * may be shorter than the others). And packets of a First or Middle's size
 * followed by a shorter last one (a message's last packet, or the Middle
 * after a WRITE's First, which its RETH makes longer): a First or Middle
 * carries exactly a path MTU of payload, so s is the first packet's
 * headers, one of the five MTUs and the ICRC, with a BTH of the P_Key at
 * every multiple of s and at the last piece, which must be a Last, an Only
 * or a Middle of that MTU, and the first or second packet's ICRC valid as
 * above.
 */
size_t wire_gso_seg_size(const uint8_t *ip, size_t ip_hdr_len, const uint8_t *udp,
			 const uint8_t *ib, size_t len);

/*
 * Is the packet at ib a First or Middle (not a Last or Only), so that it
 * carries exactly a path MTU of payload: a GSO run that starts with one may
 * end with a shorter packet, and wire_gso_seg_size still finds the cut.
 */
int wire_gso_mtu_sized(const uint8_t *ib);

#endif /* WIRE_GSO_H */
