/* SPDX-License-Identifier: MIT */
/*
 * Framing of RoCEv2 packets in captures: parse and build Ethernet (optionally
 * VLAN tagged) + IPv4 or IPv6 + UDP around an IB packet. Parsing never reads
 * outside the buffer, tolerates Ethernet padding and trailing FCS bytes (the
 * IP length fields say where the IB packet ends), handles IPv4 options and
 * IPv6 extension headers, and tells "not RoCEv2" (skip) apart from "RoCEv2
 * but broken". Building writes DF, ID 0, TTL 64, a correct IPv4 header
 * checksum and a UDP checksum of 0, as a RoCEv2 NIC does.
 */
#ifndef WIRE_FRAME_H
#define WIRE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <wire/inet.h>
#include <wire/reason.h>

#define WIRE_ROCEV2_PORT 4791
#define WIRE_ETH_BYTES 14
#define WIRE_VLAN_BYTES 4
#define WIRE_ETHERTYPE_IPV4 0x0800
#define WIRE_ETHERTYPE_IPV6 0x86dd
#define WIRE_ETHERTYPE_VLAN 0x8100
#define WIRE_ETHERTYPE_QINQ 0x88a8
/* Default UDP source port base: rxe's 0xC000 + hash range, above 4791 (PROTOCOL.md 1). */
#define WIRE_UDP_SPORT_BASE 0xc000
#define WIRE_DEFAULT_TTL 64
/* Most VLAN tags a frame may carry before parsing gives up. */
#define WIRE_MAX_VLANS 2

/* What a parse found. Offsets are from the start of the parsed buffer. */
struct wire_frame {
	/* Ethernet: only when parsed from an Ethernet frame */
	unsigned has_eth;
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	unsigned vlan_count;
	uint16_t vlan_tci[WIRE_MAX_VLANS];
	uint16_t ethertype; /* after VLAN tags */

	/* IP */
	unsigned ip_version; /* 4 or 6; 0 when not reached */
	size_t ip_off;
	size_t ip_hdr_len; /* IPv4 IHL*4; IPv6 40 + extension headers */
	size_t ip_len;	   /* IPv4 total length; IPv6 40 + payload length */
	uint8_t src[16];   /* IPv4: first 4 bytes */
	uint8_t dst[16];
	uint8_t tos;	     /* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;	     /* IPv4 TTL / IPv6 hop limit */
	uint16_t ip_id;	     /* IPv4 only */
	uint16_t ip_frag;    /* IPv4 flags + fragment offset word */
	uint32_t flow;	     /* IPv6 flow label */
	uint16_t ip_csum;    /* IPv4 header checksum as received */
	unsigned ip_csum_ok; /* IPv4: 1 when the header checksum verifies */

	/* UDP */
	size_t udp_off;
	uint16_t sport, dport, udp_len, udp_csum;

	/* The IB packet: BTH up to and including the ICRC */
	size_t ib_off;
	size_t ib_len;
};

/*
 * Parse an Ethernet frame (len bytes, FCS or padding may follow the IP
 * packet). Fills *f as far as it gets. Returns WIRE_R_OK when the frame holds
 * a UDP datagram to port 4791 whose IB packet is f->ib_off/f->ib_len;
 * WIRE_R_NOT_ROCE for anything else that is not RoCEv2 (other ethertypes and
 * protocols, other ports, non-first fragments); otherwise the reason a
 * RoCEv2-looking frame is broken (truncated, bad lengths, fragment).
 */
enum wire_reason wire_frame_parse_eth(const uint8_t *buf, size_t len, struct wire_frame *f);

/* The same for a buffer that starts at the IP header (raw IP link types). */
enum wire_reason wire_frame_parse_ip(const uint8_t *buf, size_t len, struct wire_frame *f);

/* Addresses and ports of a frame to build. */
struct wire_frame_params {
	unsigned ip_version; /* 4 or 6 */
	uint8_t src[16];     /* IPv4: first 4 bytes */
	uint8_t dst[16];
	uint8_t eth_src[6];
	uint8_t eth_dst[6];
	uint16_t sport;	       /* 0 means WIRE_UDP_SPORT_BASE */
	uint16_t dport;	       /* 0 means WIRE_ROCEV2_PORT */
	uint8_t tos;	       /* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;	       /* 0 means WIRE_DEFAULT_TTL (IPv4 TTL / IPv6 hop limit) */
	uint32_t flow;	       /* IPv6 flow label */
	unsigned fill_icrc;    /* 1: compute the ICRC into the last 4 bytes of the IB packet */
	unsigned ip_hdr_known; /* 1: IPv4 ID and flags below as received; 0: ID 0, DF */
	uint16_t ip_id;
	uint16_t ip_frag; /* flags + fragment offset word */
};

/* Bytes of Ethernet + IP + UDP headers build_eth() writes for these params. */
size_t wire_frame_hdr_bytes(const struct wire_frame_params *p);

/*
 * Build an Ethernet frame into buf (size bytes): Ethernet, IPv4 (DF, ID 0,
 * unless p->ip_hdr_known gives them; checksum computed) or IPv6, UDP (checksum 0), then the ib_len
 * bytes of the IB packet (BTH..ICRC inclusive, ib_len >= 4) copied from ib. With p->fill_icrc the
 * ICRC trailer is computed and written into the frame, otherwise the 4 trailer bytes are copied as
 * given. ib may point into buf at the right offset (no copy is made then). Returns the frame
 * length, or -EINVAL (bad params, ib_len < 4 or too long for the IP length fields) or -ENOSPC
 * (buffer too small).
 */
int wire_frame_build_eth(uint8_t *buf, size_t size, const struct wire_frame_params *p,
			 const uint8_t *ib, size_t ib_len);

/* The same without the Ethernet header (for raw IP captures). */
int wire_frame_build_ip(uint8_t *buf, size_t size, const struct wire_frame_params *p,
			const uint8_t *ib, size_t ib_len);

#endif /* WIRE_FRAME_H */
