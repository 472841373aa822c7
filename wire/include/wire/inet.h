/* SPDX-License-Identifier: MIT */
/*
 * The Internet layers under RoCEv2, written once: the one's-complement sum
 * of RFC 1071 and the checksums built on it (the IPv4 header checksum, the
 * IPv6 UDP checksum over the RFC 8200 8.1 pseudo-header), and the builders
 * of an IPv4 header (no options), an IPv6 header (no extension headers) and
 * a UDP header. Whoever writes these headers (capture frames, the GRH area
 * of a UD receive buffer, the masked copies the ICRC covers) calls these.
 * Building only: parsing is frame.c's. Pure (no I/O, no allocation).
 */
#ifndef WIRE_INET_H
#define WIRE_INET_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_IPV4_BYTES 20
#define WIRE_IPV6_BYTES 40
#define WIRE_UDP_BYTES 8
#define WIRE_IPPROTO_UDP 17
/* IPv4 flags/fragment-offset word with only Don't Fragment set. */
#define WIRE_IPV4_DF 0x4000

/*
 * The one's-complement sum of RFC 1071: sum plus the len bytes at buf taken
 * as big-endian 16-bit words, an odd last byte as the high half of a word.
 * The result is a running sum (not folded, not complemented) to pass to the
 * next call or to wire_inet_fold(); any number of pieces can be chained as
 * long as all but the last have an even length. Start with 0.
 */
uint32_t wire_inet_sum(uint32_t sum, const uint8_t *buf, size_t len);

/* A running sum folded to 16 bits and complemented: the checksum field. */
uint16_t wire_inet_fold(uint32_t sum);

/*
 * The Internet checksum (RFC 1071) of len bytes, as stored in an IPv4
 * header: 0 over a header that carries a correct checksum.
 */
uint16_t wire_inet_csum(const uint8_t *buf, size_t len);

/*
 * The UDP checksum of an IPv6 datagram between src and dst (RFC 8200 8.1:
 * the pseudo-header of both addresses, the UDP length and next header 17,
 * then udp: the UDP header with its checksum field zero and the payload,
 * len bytes in all). A computed 0 is returned as 0xffff (RFC 768: 0 means
 * "no checksum", which IPv6 does not allow a sender).
 */
uint16_t wire_udp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *udp,
			size_t len);

/* The fields of an IPv4 header without options (version 4, IHL 5). */
struct wire_ipv4_params {
	uint8_t tos;
	uint16_t total_len; /* header + payload bytes */
	uint16_t id;
	uint16_t frag; /* flags + fragment offset word, e.g. WIRE_IPV4_DF */
	uint8_t ttl;
	uint8_t proto;
	uint8_t src[4];
	uint8_t dst[4];
};

/* Write the 20-byte IPv4 header of h at hdr, header checksum included. */
void wire_ipv4_put(uint8_t hdr[WIRE_IPV4_BYTES], const struct wire_ipv4_params *h);

/* The fields of an IPv6 header without extension headers. */
struct wire_ipv6_params {
	uint8_t tclass;
	uint32_t flow; /* flow label: the low 20 bits are used */
	uint16_t payload_len;
	uint8_t next; /* next header, e.g. WIRE_IPPROTO_UDP */
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
};

/* Write the 40-byte IPv6 header of h at hdr. */
void wire_ipv6_put(uint8_t hdr[WIRE_IPV6_BYTES], const struct wire_ipv6_params *h);

/* Write an 8-byte UDP header (len: header + payload bytes). */
void wire_udp_put(uint8_t hdr[WIRE_UDP_BYTES], uint16_t sport, uint16_t dport, uint16_t len,
		  uint16_t csum);

#endif /* WIRE_INET_H */
