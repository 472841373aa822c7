/* SPDX-License-Identifier: MIT */
/*
 * The one's-complement sum and the IPv4, IPv6 and UDP header builders of
 * wire/inet.h. Every IP or UDP header uroce writes and every Internet
 * checksum it computes comes from here; nothing here parses.
 */
#include <string.h>
#include <wire/bytes.h>
#include <wire/inet.h>

uint32_t wire_inet_sum(uint32_t sum, const uint8_t *buf, size_t len)
{
	/* 64 bits cannot overflow for any buffer; folding the carries back
	 * in is the end-around carry of RFC 1071 (2^32 = 1 mod 0xffff). */
	uint64_t acc = sum;

	for (size_t i = 0; i + 1 < len; i += 2)
		acc += wire_get_be16(buf + i);
	if (len & 1)
		acc += (uint32_t)buf[len - 1] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t wire_inet_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t wire_inet_csum(const uint8_t *buf, size_t len)
{
	return wire_inet_fold(wire_inet_sum(0, buf, len));
}

uint16_t wire_udp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *udp,
			size_t len)
{
	/* RFC 8200 8.1: source, destination, 32-bit upper-layer length,
	 * three zero bytes and the next header. */
	uint8_t tail[8] = {
	    (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, 0, 0, 0,
	    WIRE_IPPROTO_UDP};
	uint32_t sum = wire_inet_sum(0, src, 16);
	uint16_t csum;

	sum = wire_inet_sum(sum, dst, 16);
	sum = wire_inet_sum(sum, tail, sizeof(tail));
	csum = wire_inet_fold(wire_inet_sum(sum, udp, len));
	/* RFC 768: a computed 0 is sent as all ones (0 means "none"). */
	return csum ? csum : 0xffff;
}

void wire_ipv4_put(uint8_t hdr[WIRE_IPV4_BYTES], const struct wire_ipv4_params *h)
{
	hdr[0] = 0x45; /* version 4, IHL 5 */
	hdr[1] = h->tos;
	wire_put_be16(hdr + 2, h->total_len);
	wire_put_be16(hdr + 4, h->id);
	wire_put_be16(hdr + 6, h->frag);
	hdr[8] = h->ttl;
	hdr[9] = h->proto;
	wire_put_be16(hdr + 10, 0);
	memcpy(hdr + 12, h->src, 4);
	memcpy(hdr + 16, h->dst, 4);
	wire_put_be16(hdr + 10, wire_inet_csum(hdr, WIRE_IPV4_BYTES));
}

void wire_ipv6_put(uint8_t hdr[WIRE_IPV6_BYTES], const struct wire_ipv6_params *h)
{
	hdr[0] = (uint8_t)(0x60 | h->tclass >> 4);
	hdr[1] = (uint8_t)((h->tclass & 0x0f) << 4 | ((h->flow >> 16) & 0x0f));
	hdr[2] = (uint8_t)(h->flow >> 8);
	hdr[3] = (uint8_t)h->flow;
	wire_put_be16(hdr + 4, h->payload_len);
	hdr[6] = h->next;
	hdr[7] = h->hop_limit;
	memcpy(hdr + 8, h->src, 16);
	memcpy(hdr + 24, h->dst, 16);
}

void wire_udp_put(uint8_t hdr[WIRE_UDP_BYTES], uint16_t sport, uint16_t dport, uint16_t len,
		  uint16_t csum)
{
	wire_put_be16(hdr, sport);
	wire_put_be16(hdr + 2, dport);
	wire_put_be16(hdr + 4, len);
	wire_put_be16(hdr + 6, csum);
}
