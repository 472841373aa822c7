/* SPDX-License-Identifier: MIT */
/*
 * Routes between the socket world and the transport's: GIDs (IPv4-mapped
 * ::ffff:a.b.c.d, or IPv6) to socket addresses and back, the transport
 * route of a received datagram from what recvmsg() reports (the source from
 * the message name, the destination from IP_PKTINFO / IPV6_PKTINFO, the
 * TOS/traffic class and TTL/hop limit from their control messages) or
 * from the IPv4 header a raw socket shows (--icrc exact), and the
 * Ethernet/IP/UDP framing parameters a capture needs for a packet of a
 * route. Pure: no I/O.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <wire/bytes.h>
#include <wire/frame.h>
#include <wire/inet.h>
#include "dp.h"

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void emu_route_gid_from_v4(const struct in_addr *a, uint8_t gid[16])
{
	memcpy(gid, v4_prefix, sizeof(v4_prefix));
	memcpy(gid + 12, a, 4);
}

int emu_route_gid_from_sockaddr(const struct sockaddr *sa, uint8_t gid[16], uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		emu_route_gid_from_v4(&s->sin_addr, gid);
		*port = ntohs(s->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;

		memcpy(gid, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

int emu_route_sockaddr_from_gid(const uint8_t gid[16], uint16_t port, int family, uint32_t scope_id,
				struct sockaddr_storage *ss, socklen_t *len)
{
	bool v4 = !memcmp(gid, v4_prefix, sizeof(v4_prefix));
	/* The RoCE v1 form of an IPv4 group: ff0e::ffff:a.b.c.d (mcast.c). */
	bool v1_group =
	    gid[0] == 0xff && !memcmp(gid + 2, v4_prefix + 2, 10) && (gid[12] & 0xf0) == 0xe0;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		uint32_t a;

		if (!v4 && !v1_group)
			return -EAFNOSUPPORT;
		memcpy(&s->sin_addr, gid + 12, 4);
		a = ntohl(s->sin_addr.s_addr);
		/* Unicast, or a multicast group (UD multicast, mcast.c). */
		if (a == INADDR_ANY || a == INADDR_BROADCAST)
			return -EHOSTUNREACH;
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		*len = sizeof(*s);
		return 0;
	}
	if (family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		/* The IPv6 socket is V6ONLY: it cannot reach IPv4 peers. */
		if (v4)
			return -EAFNOSUPPORT;
		memcpy(&s->sin6_addr, gid, 16);
		if (IN6_IS_ADDR_UNSPECIFIED(&s->sin6_addr))
			return -EHOSTUNREACH;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		if (IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr) ||
		    IN6_IS_ADDR_MC_LINKLOCAL(&s->sin6_addr) ||
		    IN6_IS_ADDR_MC_NODELOCAL(&s->sin6_addr))
			s->sin6_scope_id = scope_id;
		*len = sizeof(*s);
		return 0;
	}
	return -EAFNOSUPPORT;
}

int emu_route_from_msg(const struct msghdr *mh, uint16_t local_port, struct xport_route *rt)
{
	const struct sockaddr *src = mh->msg_name;
	bool have_dst = false;
	struct cmsghdr *c;
	int v;

	memset(rt, 0, sizeof(*rt));
	rt->hop_limit = 64;
	if (!src || mh->msg_namelen < sizeof(sa_family_t) ||
	    emu_route_gid_from_sockaddr(src, rt->sgid, &rt->sport))
		return -EAFNOSUPPORT;
	rt->dport = local_port;
	for (c = CMSG_FIRSTHDR((struct msghdr *)mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			/* ipi_addr: the destination address of the header. */
			emu_route_gid_from_v4(&pi.ipi_addr, rt->dgid);
			have_dst = src->sa_family == AF_INET;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
			   c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			memcpy(rt->dgid, &pi.ipi6_addr, 16);
			have_dst = src->sa_family == AF_INET6;
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
			   c->cmsg_len >= CMSG_LEN(1)) {
			rt->tclass = *CMSG_DATA(c);
		} else if (c->cmsg_len >= CMSG_LEN(sizeof(int)) &&
			   ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
			    (c->cmsg_level == IPPROTO_IPV6 &&
			     (c->cmsg_type == IPV6_HOPLIMIT || c->cmsg_type == IPV6_TCLASS)))) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			if (c->cmsg_type == IPV6_TCLASS && c->cmsg_level == IPPROTO_IPV6)
				rt->tclass = (uint8_t)v;
			else
				rt->hop_limit = (uint8_t)v;
		}
	}
	return have_dst ? 0 : -ENOENT;
}

void emu_route_mac_of_gid(const uint8_t gid[16], uint8_t mac[6])
{
	/* A multicast group's MAC (RFC 1112 6.4, RFC 2464 7), as on a real link. */
	if ((!memcmp(gid, v4_prefix, sizeof(v4_prefix)) ||
	     (gid[0] == 0xff && !memcmp(gid + 2, v4_prefix + 2, 10))) &&
	    (gid[12] & 0xf0) == 0xe0) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
		return;
	}
	if (gid[0] == 0xff) {
		mac[0] = mac[1] = 0x33;
		memcpy(&mac[2], &gid[12], 4);
		return;
	}
	/* A locally administered unicast MAC carrying the address: the
	 * device's own MAC follows the same rule (dev.c). */
	mac[0] = 0x02;
	mac[1] = memcmp(gid, v4_prefix, sizeof(v4_prefix)) ? gid[11] : 0x00;
	memcpy(&mac[2], &gid[12], 4);
}

void emu_route_frame_params(const struct xport_route *rt, struct wire_frame_params *p)
{
	bool v4 = !memcmp(rt->sgid, v4_prefix, sizeof(v4_prefix));

	memset(p, 0, sizeof(*p));
	p->ip_version = v4 ? 4 : 6;
	if (v4) {
		memcpy(p->src, rt->sgid + 12, 4);
		memcpy(p->dst, rt->dgid + 12, 4);
	} else {
		memcpy(p->src, rt->sgid, 16);
		memcpy(p->dst, rt->dgid, 16);
	}
	emu_route_mac_of_gid(rt->sgid, p->eth_src);
	emu_route_mac_of_gid(rt->dgid, p->eth_dst);
	p->sport = rt->sport;
	p->dport = rt->dport;
	p->tos = rt->tclass;
	p->ttl = rt->hop_limit;
	p->fill_icrc = 0; /* the packet's own ICRC, right or wrong */
	p->ip_hdr_known = v4 && rt->ip_id_known;
	p->ip_id = rt->ip_id;
	p->ip_frag = rt->ip_df ? WIRE_IPV4_DF : 0;
	if (v4 && !rt->ip_id_known && rt->ip_id_guess) {
		/* A segment of a GSO datagram, sent or received: the ID the cut gives it. */
		p->ip_hdr_known = 1;
		p->ip_id = rt->ip_id_guess;
		p->ip_frag = WIRE_IPV4_DF;
	}
}

int emu_route_from_ipv4(const uint8_t *ip, size_t len, uint16_t local_port, struct xport_route *rt,
			size_t *off)
{
	uint16_t total, frag, udp_len;
	const uint8_t *udp;

	memset(rt, 0, sizeof(*rt));
	if (len < WIRE_IPV4_BYTES + WIRE_UDP_BYTES || ip[0] >> 4 != 4)
		return -EBADMSG;
	/* Options would be covered by the ICRC; RoCEv2 senders use none. */
	if ((ip[0] & 0xf) != 5 || ip[9] != WIRE_IPPROTO_UDP)
		return -EBADMSG;
	total = wire_get_be16(ip + 2);
	frag = wire_get_be16(ip + 6);
	udp = ip + WIRE_IPV4_BYTES;
	udp_len = wire_get_be16(udp + 4);
	if (total != len || udp_len != total - WIRE_IPV4_BYTES || (frag & ~WIRE_IPV4_DF))
		return -EBADMSG;
	if (wire_get_be16(udp + 2) != local_port)
		return -ENOENT;
	/*
	 * The UDP checksum is not checked here: on loopback and veth the kernel
	 * hands raw sockets a partial checksum (CHECKSUM_PARTIAL) that only the
	 * UDP layer knows to accept. RoCEv2 senders send 0 anyway, and the
	 * ICRC, checked exactly over this header, covers the whole datagram.
	 */
	emu_route_gid_from_v4((const struct in_addr *)(const void *)(ip + 12), rt->sgid);
	emu_route_gid_from_v4((const struct in_addr *)(const void *)(ip + 16), rt->dgid);
	rt->sport = wire_get_be16(udp);
	rt->dport = local_port;
	rt->tclass = ip[1];
	rt->hop_limit = ip[8];
	rt->ip_id_known = true;
	rt->ip_id = wire_get_be16(ip + 4);
	rt->ip_df = (frag & WIRE_IPV4_DF) != 0;
	*off = WIRE_IPV4_BYTES + WIRE_UDP_BYTES;
	return 0;
}
