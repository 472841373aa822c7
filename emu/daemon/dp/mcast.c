/* SPDX-License-Identifier: MIT */
/*
 * UD multicast (IBA 10.5) over real IP multicast: the groups the RNIC has
 * joined and the QPs attached to each. A group is an IP multicast address
 * (a GID ::ffff:224.0.0.0/4 on an IPv4 RNIC, also written ff0e::ffff:a.b.c.d
 * as RoCE v1 tools do; an ff00::/8 GID on an IPv6 RNIC). While QPs are
 * attached to it (ibv_attach_mcast) or an RDMA CM join names it, the group
 * has one socket of its own that holds the IP membership on the RNIC's
 * interface (IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP with the RNIC's address and
 * interface: IGMP/MLD on a real link) and receives the group's datagrams,
 * bound to the group address and port 4791 and to the interface, so that
 * several RNICs of one host each receive their own copy (SO_REUSEADDR). In
 * the exact ICRC mode it is a raw socket, as the unicast receive is, so
 * that the ICRC is checked over the real IP header. Its datagrams go
 * through net.c to the engine, which gives a copy to every attached QP
 * through mcast_each. Sending needs nothing here: a UD SEND to a group's
 * GID leaves from the RNIC's own socket, whose multicast interface is the
 * RNIC's (net.c), and the kernel loops it back to the groups this host
 * joined on that interface, the sender's included.
 *
 * Limits (ibv_query_device): max_mcast_grp groups per RNIC (each costs a
 * socket), max_mcast_qp_attach QPs per group, max_total_mcast_qp_attach
 * attachments in all; beyond them ENOMEM, as in the kernel's drivers.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/udp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dp.h"

#ifndef IP_MULTICAST_ALL
#define IP_MULTICAST_ALL 49
#endif
#ifndef IPV6_MULTICAST_ALL
#define IPV6_MULTICAST_ALL 29
#endif

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int emu_mcast_group_gid(const struct emu_dev *dev, const uint8_t gid[16], uint8_t group[16])
{
	if (dev->family == AF_INET) {
		/* ::ffff:a.b.c.d, or the RoCE v1 form ff0e::ffff:a.b.c.d */
		bool mapped = !memcmp(gid, v4_prefix, sizeof(v4_prefix));
		bool v1 = gid[0] == 0xff && !memcmp(gid + 2, v4_prefix + 2, 10);

		if ((!mapped && !v1) || (gid[12] & 0xf0) != 0xe0)
			return -EINVAL;
		memcpy(group, v4_prefix, sizeof(v4_prefix));
		memcpy(group + 12, gid + 12, 4);
		return 0;
	}
	/* IPv6: the address itself; IPv4 groups cannot be joined (V6ONLY). */
	if (gid[0] != 0xff)
		return -EINVAL;
	memcpy(group, gid, 16);
	return 0;
}

static struct emu_mcg *mcg_find(struct emu_dev *dev, const uint8_t group[16])
{
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &dev->mcgs)
	{
		struct emu_mcg *g = EMU_CONTAINER_OF(pos, struct emu_mcg, link);

		if (!memcmp(g->gid, group, 16))
			return g;
	}
	return NULL;
}

static void on_mcg(uv_poll_t *h, int status, int events)
{
	struct emu_mcg *g = h->data;

	(void)events;
	if (status < 0)
		return;
	emu_wait_awake(&g->dev->wait);
	if (emu_net_receive_group(g, 8))
		emu_wait_note_work(&g->dev->wait);
}

static void on_mcg_closed(uv_handle_t *h)
{
	struct emu_mcg *g = h->data;

	close(g->fd);
	free(g);
}

static int set_int(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v));
}

/* The group's IPv4 socket: options, bind to group:port, membership. */
static int mcg_open4(struct emu_dev *dev, struct emu_mcg *g)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(dev->udp_port)};
	struct ip_mreqn mr = {.imr_ifindex = dev->ifindex};
	int fd;

	memcpy(&sa.sin_addr, g->gid + 12, 4);
	mr.imr_multiaddr = sa.sin_addr;
	mr.imr_address = ((const struct sockaddr_in *)&dev->addr)->sin_addr;
	g->raw = dev->raw_fd >= 0;
	fd = g->raw ? socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP)
		    : socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	g->fd = fd;
	if (g->raw) {
		uint8_t buf[16];

		if (emu_dev_raw_filter(fd, g->gid + 12, dev->udp_port, false))
			return -errno;
		/* What came before the filter took effect is not ours. */
		while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC) >= 0)
			;
	} else if (set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1) ||
		   set_int(fd, IPPROTO_IP, IP_PKTINFO, 1) ||
		   set_int(fd, IPPROTO_IP, IP_RECVTOS, 1) ||
		   set_int(fd, IPPROTO_IP, IP_RECVTTL, 1) ||
		   set_int(fd, SOL_SOCKET, SO_NO_CHECK, 1)) {
		return -errno;
	}
	/* Only the group it is bound to, not every group of the host. */
	if (set_int(fd, IPPROTO_IP, IP_MULTICAST_ALL, 0))
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr)))
		return -errno;
	return 0;
}

static int mcg_open6(struct emu_dev *dev, struct emu_mcg *g)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(dev->udp_port)};
	struct ipv6_mreq mr = {.ipv6mr_interface = (unsigned)dev->ifindex};
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	g->fd = fd;
	memcpy(&sa.sin6_addr, g->gid, 16);
	if (IN6_IS_ADDR_MC_LINKLOCAL(&sa.sin6_addr) || IN6_IS_ADDR_MC_NODELOCAL(&sa.sin6_addr))
		sa.sin6_scope_id = (uint32_t)dev->ifindex;
	mr.ipv6mr_multiaddr = sa.sin6_addr;
	if (set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) || set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1) ||
	    set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1) ||
	    set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1) ||
	    set_int(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1) ||
	    set_int(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, 1) ||
	    set_int(fd, IPPROTO_IPV6, IPV6_MULTICAST_ALL, 0))
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr)))
		return -errno;
	return 0;
}

/* Open the group's socket and start receiving on it. 0 or -errno. */
static int mcg_open(struct emu_dev *dev, struct emu_mcg *g)
{
	int want = dev->rcvbuf_bytes > 0 ? dev->rcvbuf_bytes : 4 << 20;
	int err;

	g->fd = -1;
	err = dev->family == AF_INET ? mcg_open4(dev, g) : mcg_open6(dev, g);
	/*
	 * Only datagrams that came in on the RNIC's interface: another RNIC
	 * of this host on another interface may have joined the same group.
	 */
	if (!err && dev->ifname[0] &&
	    setsockopt(g->fd, SOL_SOCKET, SO_BINDTODEVICE, dev->ifname, strlen(dev->ifname)))
		err = -errno;
	if (err) {
		if (g->fd >= 0)
			close(g->fd);
		g->fd = -1;
		return err;
	}
	if (setsockopt(g->fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)))
		set_int(g->fd, SOL_SOCKET, SO_RCVBUF, want);
	uv_poll_init(dev->loop, &g->poll, g->fd);
	g->poll.data = g;
	uv_poll_start(&g->poll, UV_READABLE, on_mcg);
	return 0;
}

int emu_mcast_get(struct emu_dev *dev, const uint8_t group[16], struct emu_mcg **out)
{
	struct emu_mcg *g = mcg_find(dev, group);
	int err;

	if (g) {
		g->refs++;
		*out = g;
		return 0;
	}
	if (dev->nmcg >= dev->lim.max_mcast_grp || !dev->loop)
		return -ENOMEM;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->dev = dev;
	memcpy(g->gid, group, 16);
	emu_list_init(&g->members);
	err = mcg_open(dev, g);
	if (err) {
		char a[INET6_ADDRSTRLEN];

		if (dev->family == AF_INET)
			inet_ntop(AF_INET, group + 12, a, sizeof(a));
		else
			inet_ntop(AF_INET6, group, a, sizeof(a));
		emu_warn("joining multicast group %s on %s: %s", a, dev->ifname, strerror(-err));
		free(g);
		return err == -EMFILE || err == -ENFILE || err == -ENOBUFS ? -ENOMEM : err;
	}
	g->refs = 1;
	emu_list_add_tail(&dev->mcgs, &g->link);
	dev->nmcg++;
	*out = g;
	return 0;
}

void emu_mcast_put(struct emu_mcg *g)
{
	if (--g->refs)
		return;
	/* Closing the socket leaves the group (IGMP/MLD leave). */
	emu_list_del(&g->link);
	g->dev->nmcg--;
	uv_poll_stop(&g->poll);
	uv_close((uv_handle_t *)&g->poll, on_mcg_closed);
}

static struct emu_mcast *attach_find(struct emu_qp *qp, const uint8_t gid[16], uint16_t lid)
{
	struct emu_list *pos, *tmp;

	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &qp->mcast)
	{
		struct emu_mcast *m = EMU_CONTAINER_OF(pos, struct emu_mcast, link);

		if (!memcmp(m->gid, gid, 16) && m->lid == lid)
			return m;
	}
	return NULL;
}

int emu_mcast_attach(struct emu_qp *qp, const uint8_t gid[16], uint16_t lid)
{
	struct emu_dev *dev = qp->obj.ctx->dev;
	uint8_t group[16];
	struct emu_mcast *m;
	struct emu_mcg *g;
	struct emu_list *pos, *tmp;
	int err;

	if (qp->type != UROCE_QPT_UD || emu_mcast_group_gid(dev, gid, group))
		return -EINVAL;
	/* Attached already (under either name of the group): one copy. */
	if (attach_find(qp, gid, lid))
		return 0;
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &qp->mcast)
	{
		m = EMU_CONTAINER_OF(pos, struct emu_mcast, link);
		if (!memcmp(m->mcg->gid, group, 16))
			return 0;
	}
	if (dev->nmcast_attach >= dev->lim.max_total_mcast_qp_attach)
		return -ENOMEM;
	g = mcg_find(dev, group);
	if (g && g->nqp >= dev->lim.max_mcast_qp_attach)
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = emu_mcast_get(dev, group, &g);
	if (err) {
		free(m);
		return err;
	}
	m->qp = qp;
	m->mcg = g;
	memcpy(m->gid, gid, 16);
	m->lid = lid;
	emu_list_add_tail(&qp->mcast, &m->link);
	emu_list_add_tail(&g->members, &m->group_link);
	g->nqp++;
	qp->nmcast++;
	dev->nmcast_attach++;
	return 0;
}

static void attach_free(struct emu_mcast *m)
{
	struct emu_dev *dev = m->mcg->dev;

	emu_list_del(&m->link);
	emu_list_del(&m->group_link);
	m->mcg->nqp--;
	m->qp->nmcast--;
	dev->nmcast_attach--;
	emu_mcast_put(m->mcg);
	free(m);
}

int emu_mcast_detach(struct emu_qp *qp, const uint8_t gid[16], uint16_t lid)
{
	struct emu_mcast *m = attach_find(qp, gid, lid);

	if (!m)
		return -EINVAL;
	attach_free(m);
	return 0;
}

void emu_mcast_detach_all(struct emu_qp *qp)
{
	while (!emu_list_empty(&qp->mcast))
		attach_free(EMU_CONTAINER_OF(qp->mcast.next, struct emu_mcast, link));
}

struct emu_mcg *emu_mcast_find(struct emu_dev *dev, const uint8_t group[16])
{
	return mcg_find(dev, group);
}

void emu_mcast_each(struct emu_dev *dev, const uint8_t group[16],
		    void (*fn)(struct xport_qp *qp, void *arg), void *arg)
{
	struct emu_mcg *g = mcg_find(dev, group);
	struct emu_list *pos, *tmp;

	if (!g || !g->nqp) {
		dev->dcnt[EMU_DCNT_RX_MCAST_NO_QP]++;
		return;
	}
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &g->members)
	{
		struct emu_mcast *m = EMU_CONTAINER_OF(pos, struct emu_mcast, group_link);

		fn(&m->qp->x, arg);
	}
}
