/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/route.c: GIDs to socket addresses and back (IPv4-mapped
 * and IPv6, multicast groups and their MACs, refusals for zero, broadcast
 * and wrong-family GIDs), the multicast group a GID names (mcast.c), the
 * transport route built from a recvmsg() message header (source from the
 * name, destination from IP_PKTINFO/IPV6_PKTINFO, TOS/TTL), and capture
 * framing parameters.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <wire/frame.h>
#include "dp.h"

static void gid4(const char *ip, uint8_t gid[16])
{
	struct in_addr a;

	ck_assert_int_eq(inet_pton(AF_INET, ip, &a), 1);
	emu_route_gid_from_v4(&a, gid);
}

START_TEST(test_gid_v4_roundtrip)
{
	static const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 1, 2};
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	uint8_t gid[16], back[16];
	socklen_t len;
	uint16_t port;

	gid4("127.0.1.2", gid);
	ck_assert(!memcmp(gid, want, 16));
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len), 0);
	ck_assert_uint_eq(len, sizeof(struct sockaddr_in));
	ck_assert_int_eq(s4->sin_family, AF_INET);
	ck_assert_uint_eq(ntohs(s4->sin_port), 4791);
	ck_assert_uint_eq(ntohl(s4->sin_addr.s_addr), 0x7f000102);
	ck_assert_int_eq(emu_route_gid_from_sockaddr((struct sockaddr *)&ss, back, &port), 0);
	ck_assert(!memcmp(back, gid, 16));
	ck_assert_uint_eq(port, 4791);
}
END_TEST

START_TEST(test_gid_refused)
{
	struct sockaddr_storage ss;
	uint8_t gid[16] = {0};
	socklen_t len;

	/* No GRH in the AV: the zero GID has no route. */
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len),
			 -EAFNOSUPPORT);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET6, 0, &ss, &len),
			 -EHOSTUNREACH);
	gid4("0.0.0.0", gid);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len),
			 -EHOSTUNREACH);
	gid4("255.255.255.255", gid);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len),
			 -EHOSTUNREACH);
	/* An IPv4 GID on the (V6ONLY) IPv6 socket and the reverse. */
	gid4("10.0.0.1", gid);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET6, 0, &ss, &len),
			 -EAFNOSUPPORT);
	ck_assert_int_eq(inet_pton(AF_INET6, "fd00::1", gid), 1);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len),
			 -EAFNOSUPPORT);
	/* ff0e::ffff:a.b.c.d names an IPv4 group only when a.b.c.d is one. */
	ck_assert_int_eq(inet_pton(AF_INET6, "ff0e::ffff:10.0.0.1", gid), 1);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len),
			 -EAFNOSUPPORT);
}
END_TEST

START_TEST(test_gid_multicast)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct emu_dev dev4 = {.family = AF_INET}, dev6 = {.family = AF_INET6};
	uint8_t gid[16], group[16], want[16], mac[6];
	static const uint8_t mac4[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
	static const uint8_t mac6[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
	socklen_t len;

	/* An IPv4 group, in both of its GID forms. */
	gid4("239.129.2.3", gid);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len), 0);
	ck_assert_uint_eq(ntohl(s4->sin_addr.s_addr), 0xef810203);
	ck_assert_int_eq(emu_mcast_group_gid(&dev4, gid, group), 0);
	ck_assert(!memcmp(group, gid, 16));
	emu_route_mac_of_gid(gid, mac);
	ck_assert(!memcmp(mac, mac4, 6)); /* the low 23 bits of the group */
	memcpy(want, gid, 16);
	ck_assert_int_eq(inet_pton(AF_INET6, "ff0e::ffff:239.129.2.3", gid), 1);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET, 0, &ss, &len), 0);
	ck_assert_uint_eq(ntohl(s4->sin_addr.s_addr), 0xef810203);
	ck_assert_int_eq(emu_mcast_group_gid(&dev4, gid, group), 0);
	ck_assert(!memcmp(group, want, 16));
	/* Not groups of an IPv4 RNIC: unicast, an IPv6 group. */
	gid4("10.0.0.1", gid);
	ck_assert_int_eq(emu_mcast_group_gid(&dev4, gid, group), -EINVAL);
	ck_assert_int_eq(inet_pton(AF_INET6, "ff02::1", gid), 1);
	ck_assert_int_eq(emu_mcast_group_gid(&dev4, gid, group), -EINVAL);
	/* IPv6: the group itself, link-local ones with the interface. */
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET6, 7, &ss, &len), 0);
	ck_assert(!memcmp(&s6->sin6_addr, gid, 16));
	ck_assert_uint_eq(s6->sin6_scope_id, 7);
	ck_assert_int_eq(emu_mcast_group_gid(&dev6, gid, group), 0);
	ck_assert(!memcmp(group, gid, 16));
	emu_route_mac_of_gid(gid, mac);
	ck_assert(!memcmp(mac, mac6, 6));
	gid4("239.1.2.3", gid);
	ck_assert_int_eq(emu_mcast_group_gid(&dev6, gid, group), -EINVAL);
	ck_assert_int_eq(inet_pton(AF_INET6, "fd00::1", gid), 1);
	ck_assert_int_eq(emu_mcast_group_gid(&dev6, gid, group), -EINVAL);
}
END_TEST

START_TEST(test_gid_v6_linklocal)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	uint8_t gid[16];
	socklen_t len;

	ck_assert_int_eq(inet_pton(AF_INET6, "fe80::1", gid), 1);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET6, 7, &ss, &len), 0);
	ck_assert_uint_eq(len, sizeof(*s6));
	ck_assert_uint_eq(s6->sin6_scope_id, 7);
	ck_assert(!memcmp(&s6->sin6_addr, gid, 16));
	ck_assert_int_eq(inet_pton(AF_INET6, "fd00::1", gid), 1);
	ck_assert_int_eq(emu_route_sockaddr_from_gid(gid, 4791, AF_INET6, 7, &ss, &len), 0);
	ck_assert_uint_eq(s6->sin6_scope_id, 0);
}
END_TEST

/* A message header as recvmsg() fills it for an IPv4 datagram. */
struct msg4 {
	struct sockaddr_in src;
	union {
		size_t align; /* as CMSG_ALIGN */
		uint8_t buf[256];
	} ctl;
	struct msghdr mh;
};

static void msg4_init(struct msg4 *m, const char *src, uint16_t sport, const char *dst, int tos,
		      int ttl)
{
	struct cmsghdr *c;
	size_t used = 0;

	memset(m, 0, sizeof(*m));
	m->src.sin_family = AF_INET;
	m->src.sin_port = htons(sport);
	inet_pton(AF_INET, src, &m->src.sin_addr);
	m->mh.msg_name = &m->src;
	m->mh.msg_namelen = sizeof(m->src);
	m->mh.msg_control = m->ctl.buf;
	m->mh.msg_controllen = sizeof(m->ctl.buf);
	c = CMSG_FIRSTHDR(&m->mh);
	if (tos >= 0) {
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_TOS;
		c->cmsg_len = CMSG_LEN(1);
		*CMSG_DATA(c) = (uint8_t)tos;
		used += CMSG_SPACE(1);
		c = (struct cmsghdr *)(m->ctl.buf + used);
	}
	if (ttl >= 0) {
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_TTL;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &ttl, sizeof(ttl));
		used += CMSG_SPACE(sizeof(int));
		c = (struct cmsghdr *)(m->ctl.buf + used);
	}
	if (dst) {
		struct in_pktinfo pi = {0};

		inet_pton(AF_INET, dst, &pi.ipi_addr);
		/* ipi_spec_dst is the local address; it must not be used. */
		inet_pton(AF_INET, "9.9.9.9", &pi.ipi_spec_dst);
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		used += CMSG_SPACE(sizeof(pi));
	}
	m->mh.msg_controllen = used;
}

START_TEST(test_route_from_msg_v4)
{
	struct xport_route rt;
	struct msg4 m;
	uint8_t s[16], d[16];

	msg4_init(&m, "127.0.1.2", 4791, "127.0.1.1", 0x02, 1);
	ck_assert_int_eq(emu_route_from_msg(&m.mh, 4791, &rt), 0);
	gid4("127.0.1.2", s);
	gid4("127.0.1.1", d);
	ck_assert(!memcmp(rt.sgid, s, 16));
	ck_assert(!memcmp(rt.dgid, d, 16));
	ck_assert_uint_eq(rt.sport, 4791);
	ck_assert_uint_eq(rt.dport, 4791);
	ck_assert_uint_eq(rt.tclass, 0x02);
	ck_assert_uint_eq(rt.hop_limit, 1);
	ck_assert(!rt.ip_id_known);

	/* Without TOS/TTL messages: TOS 0, TTL 64 assumed. */
	msg4_init(&m, "10.1.2.3", 0xc123, "10.1.2.4", -1, -1);
	ck_assert_int_eq(emu_route_from_msg(&m.mh, 14791, &rt), 0);
	ck_assert_uint_eq(rt.sport, 0xc123);
	ck_assert_uint_eq(rt.dport, 14791);
	ck_assert_uint_eq(rt.tclass, 0);
	ck_assert_uint_eq(rt.hop_limit, 64);
}
END_TEST

START_TEST(test_route_from_msg_no_pktinfo)
{
	struct xport_route rt;
	struct msg4 m;

	msg4_init(&m, "127.0.1.2", 4791, NULL, 0, 64);
	ck_assert_int_eq(emu_route_from_msg(&m.mh, 4791, &rt), -ENOENT);
	m.mh.msg_name = NULL;
	ck_assert_int_eq(emu_route_from_msg(&m.mh, 4791, &rt), -EAFNOSUPPORT);
}
END_TEST

START_TEST(test_route_from_msg_v6)
{
	struct sockaddr_in6 src = {.sin6_family = AF_INET6, .sin6_port = htons(4791)};
	union {
		size_t align; /* as CMSG_ALIGN */
		uint8_t buf[256];
	} ctl;
	struct msghdr mh = {.msg_name = &src,
			    .msg_namelen = sizeof(src),
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	struct in6_pktinfo pi = {.ipi6_ifindex = 1};
	struct xport_route rt;
	struct cmsghdr *c;
	uint8_t want_s[16], want_d[16];
	int v;

	memset(&ctl, 0, sizeof(ctl));
	inet_pton(AF_INET6, "fd00::2", &src.sin6_addr);
	inet_pton(AF_INET6, "fd00::1", &pi.ipi6_addr);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	c = CMSG_NXTHDR(&mh, c);
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_TCLASS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	v = 0x28;
	memcpy(CMSG_DATA(c), &v, sizeof(v));
	c = CMSG_NXTHDR(&mh, c);
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_HOPLIMIT;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	v = 3;
	memcpy(CMSG_DATA(c), &v, sizeof(v));
	mh.msg_controllen = CMSG_SPACE(sizeof(pi)) + 2 * CMSG_SPACE(sizeof(int));

	ck_assert_int_eq(emu_route_from_msg(&mh, 4791, &rt), 0);
	inet_pton(AF_INET6, "fd00::2", want_s);
	inet_pton(AF_INET6, "fd00::1", want_d);
	ck_assert(!memcmp(rt.sgid, want_s, 16));
	ck_assert(!memcmp(rt.dgid, want_d, 16));
	ck_assert_uint_eq(rt.tclass, 0x28);
	ck_assert_uint_eq(rt.hop_limit, 3);
}
END_TEST

START_TEST(test_mac_and_frame)
{
	struct xport_route rt = {.sport = 4791, .dport = 4791, .tclass = 2, .hop_limit = 9};
	struct wire_frame_params p;
	uint8_t mac[6];
	static const uint8_t want[6] = {0x02, 0, 127, 0, 1, 1};

	gid4("127.0.1.1", rt.sgid);
	gid4("127.0.1.2", rt.dgid);
	emu_route_mac_of_gid(rt.sgid, mac);
	ck_assert(!memcmp(mac, want, 6));
	emu_route_frame_params(&rt, &p);
	ck_assert_uint_eq(p.ip_version, 4);
	ck_assert_uint_eq(p.src[0], 127);
	ck_assert_uint_eq(p.dst[3], 2);
	ck_assert_uint_eq(p.eth_dst[5], 2);
	ck_assert_uint_eq(p.sport, 4791);
	ck_assert_uint_eq(p.tos, 2);
	ck_assert_uint_eq(p.ttl, 9);
	ck_assert_uint_eq(p.fill_icrc, 0);

	inet_pton(AF_INET6, "fd00::1:2", rt.sgid);
	emu_route_frame_params(&rt, &p);
	ck_assert_uint_eq(p.ip_version, 6);
	ck_assert(!memcmp(p.src, rt.sgid, 16));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dp_route");
	TCase *tc = tcase_create("route");

	tcase_add_test(tc, test_gid_v4_roundtrip);
	tcase_add_test(tc, test_gid_refused);
	tcase_add_test(tc, test_gid_v6_linklocal);
	tcase_add_test(tc, test_gid_multicast);
	tcase_add_test(tc, test_route_from_msg_v4);
	tcase_add_test(tc, test_route_from_msg_no_pktinfo);
	tcase_add_test(tc, test_route_from_msg_v6);
	tcase_add_test(tc, test_mac_and_frame);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
