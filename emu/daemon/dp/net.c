/* SPDX-License-Identifier: MIT */
/*
 * The network side of the RNIC: the RoCEv2 UDP socket that dev.c bound to
 * <addr>:4791 (unconnected, IP_PMTUDISC_DO, 16 MiB buffers unless
 * --sockbuf says otherwise), and the engine's in-flight budget that
 * follows from the receive buffer's size.
 *
 * Receive: a libuv poll handle; datagrams come in recvmmsg batches with
 * IP_PKTINFO / IPV6_PKTINFO (the destination address the ICRC covers) and
 * the TOS/TTL control messages; each becomes a transport route
 * (route.c) and goes to xport_recv_packet. In the exact ICRC mode
 * (dev.c) a raw IPv4 socket receives: each datagram starts with its IPv4
 * header, whose ID and flags go into the route, so that the engine checks
 * the ICRC over the header as sent. On a loopback interface (dev->rx_split)
 * it takes only the datagrams whose header is not what a uroce RNIC sends
 * (ID 0, DF, no options): the UDP socket's filter passes those, their route
 * says so, and uroce peers' datagrams take the UDP socket's cheaper receive
 * path; elsewhere the UDP socket's filter drops all. After a batch, the
 * packets the transport answered with (ACKs, READ responses) leave in one
 * batch.
 *
 * Send: each packet joins a batch that leaves with sendmmsg when it is full
 * and at the end of every data-path pass. The engine builds its packets in
 * place at the batch's end (emu_net_tx_buf); a packet built elsewhere
 * (QP1's MADs, ACKs, fault.c's) is copied in. Every packet goes from the
 * bound socket to the peer's address, port 4791, even when the peer is this
 * same daemon (a QP talking to a QP of the same RNIC sends real packets to
 * itself). Because the socket is unconnected and sets DF, Linux sends IPv4
 * ID 0 with DF: the pseudo header the engine's ICRC covers (PROTOCOL.md
 * 12); IPv4 UDP checksums are off (0, as RoCEv2 senders send), IPv6 ones
 * are the kernel's. TOS / traffic class and TTL / hop limit come from the
 * path (control messages per datagram; both are masked out of the ICRC).
 *
 * UDP source port: the bound port (4791) for every QP, not the 0xC000+
 * per-QP port rxe uses: one socket can only send from its own port, and the
 * ICRC covers the source port, so the engine's QPs are told to use the
 * socket's port (datapath.c). tshark decodes both ports as RoCEv2; the cost
 * is that ECMP routers see one flow per pair of RNICs instead of one per QP.
 *
 * GSO and GRO (--gso, default on). A run of packets to one peer that are
 * all of one size and one P_Key (the packets of a stream of small SENDs,
 * the ACKs to a peer, the middle and full last packets of 4 KiB-MTU
 * messages) leaves as one UDP GSO datagram of up to WIRE_GSO_MAX_SEGS
 * segments and 64 KiB (wire/gso.h). The kernel (or the NIC) cuts it into
 * ordinary datagrams whose IPv4 IDs count up from the first one's, 0 from
 * this unconnected DF socket, so segment i carries ID i: its ICRC, sealed by
 * the engine for ID 0, is adjusted here by the CRC difference ID i makes
 * (wire_icrc_id_delta, with a basis kept per packet size), and the capture
 * shows it with that ID. GSO needs the kernel's UDP checksum, so while such
 * datagrams go out the socket computes checksums (RoCEv2 receivers ignore
 * the field: the ICRC masks it; the capture shows 0, as for IPv6). Over
 * loopback and veth the datagram is never cut: the receiver gets it whole.
 * On the UDP socket UDP_GRO hands it over in one piece with its segment
 * size, and segment i is checked for ID i (rt.ip_id_guess: a uroce peer
 * keeps all 32 bits of its ICRC); on the raw socket (exact mode) it arrives
 * as one IPv4 datagram with the first segment's ID and nothing that says
 * the size, which wire_gso_seg_size finds from the packets (their BTHs and
 * the first ones' ICRCs), segment i getting the first ID + i. Each segment
 * then goes to the engine and the capture as the packet it is. A batch of
 * one ACK that then gets a larger packet to the same peer sends the two as
 * one datagram, the ACK last and shorter (ack_behind).
 *
 * Failures are counted (uroce/dev_counters.h) and the packet is lost: the
 * transport retransmits.
 *
 * While fault rules exist (dev->fault_on), both directions pass through
 * fault.c first: emu_net_send and rx_one hand the packet to it, and what it
 * lets through comes back through emu_net_xmit and emu_net_deliver.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <linux/udp.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wire/aeth.h>
#include <wire/bth.h>
#include <wire/icrc.h>
#include <wire/opcode.h>
#include <wire/gso.h>
#include <wire/inet.h>

#include "dp.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* Datagrams per recvmmsg / sendmmsg call. */
#define NET_RX_BATCH 32
#define NET_TX_BATCH 64
/* Bytes of packets one send batch holds (as many 4 KiB-MTU packets as entries). */
#define NET_TX_ARENA (NET_TX_BATCH * XPORT_MAX_PKT_BYTES)
/* recvmmsg calls per readiness callback before other work (the next
 * data-path pass, which sends what the ACKs among them allow) gets a turn.
 * The in-flight budget keeps the socket from overflowing. */
#define NET_RX_ROUNDS 16
/* Largest datagram accepted: a GRO datagram or a GSO send over loopback. */
#define NET_RX_BYTES 65536
_Static_assert(WIRE_GSO_MAX_SEGS <= 64, "the kernel takes 64 segments per GSO send");
/* Packet sizes whose ICRC ID basis the sender keeps. */
#define NET_GSO_BASES 8
/* Most segments a received datagram is cut into (the kernel's UDP_MAX_SEGMENTS). */
#define NET_GRO_MAX_SEGS 128
#define NET_CTL_BYTES 128
#define NET_DEFAULT_TTL 64
/* The in-flight budget is this fraction of the receive buffer (see start). */
#define NET_BUDGET_SHARE 5

struct net_ctl {
	union {
		size_t align; /* as CMSG_ALIGN */
		uint8_t buf[NET_CTL_BYTES];
	};
};

struct emu_net {
	struct mmsghdr rx_msgs[NET_RX_BATCH];
	struct iovec rx_iov[NET_RX_BATCH];
	struct sockaddr_storage rx_names[NET_RX_BATCH];
	struct net_ctl rx_ctl[NET_RX_BATCH];
	uint8_t rx_bufs[NET_RX_BATCH][NET_RX_BYTES];

	unsigned ntx;
	size_t tx_used; /* bytes of tx_arena the batch holds */
	/* Every packet of the batch is a plain ACK (see emu_net_flush), the
	 * first of them batched at tx_acks_since_us; tx_hold: the batch may
	 * wait (--ack-hold-us is not 0, and a request left within
	 * EMU_NET_ACK_HOLD_RECENT_US of its first ACK). */
	bool tx_acks_only;
	bool tx_hold;
	uint64_t tx_acks_since_us;
	bool tx_has_req;      /* the batch holds a request */
	/* The batch is one plain ACK, not yet captured: a larger packet to
	 * its peer may still go before it (ack_behind). */
	bool tx_ack_uncaptured;
	uint64_t last_req_us; /* when a batch with a request left */
	/* the last entry is a GSO run still open to more packets of tx_run_rt */
	bool tx_run_open;
	bool tx_csum; /* the socket computes UDP checksums now (GSO) */
	struct xport_route tx_run_rt;
	uint16_t tx_run_len;  /* the size of the open run's packets */
	uint16_t tx_run_pkey; /* and their P_Key (the receiver's cut checks it) */
	/* The open run started with a First or Middle, a path MTU of payload:
	 * a shorter packet may end it (gso_fits). */
	bool tx_run_mtu_sized;
	uint16_t tx_tail_len; /* the size of the last shorter packet that ended a run */
	/* wire_icrc_id_basis of the last few packet sizes (tens of us each) */
	struct {
		uint16_t len;
		uint32_t basis[16];
	} gso_basis[NET_GSO_BASES];
	unsigned gso_basis_next;
	struct mmsghdr tx_msgs[NET_TX_BATCH];
	struct iovec tx_iov[NET_TX_BATCH];
	uint16_t tx_segs[NET_TX_BATCH]; /* packets in each entry: GSO when > 1 */
	struct sockaddr_storage tx_names[NET_TX_BATCH];
	struct net_ctl tx_ctl[NET_TX_BATCH];
	uint8_t tx_arena[NET_TX_ARENA];
};

static void on_rx(uv_poll_t *h, int status, int events);

/* Does the UDP socket receive? Not in the exact mode off loopback, where
 * its filter drops all and the raw socket takes every datagram (dev.c). */
static bool net_udp_receives(const struct emu_dev *dev)
{
	return dev->raw_fd < 0 || dev->rx_split;
}

static const uint8_t net_v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/*
 * The RNICs this process hosts, for the datagrams they send one another:
 * over loopback the kernel has put such a datagram in the receiving
 * socket by the time sendmmsg returns, so the receiver's next data-path
 * pass reads it at once (rx_hint) instead of waiting for the event loop's
 * epoll to report it (a system call of a microsecond or more per hop).
 * Elsewhere the hint is a guess: a read that finds nothing costs one call.
 */
#define NET_LOCAL_MAX 64
static struct emu_dev *net_local[NET_LOCAL_MAX];
static unsigned net_nlocal;

static void local_add(struct emu_dev *dev)
{
	if (net_nlocal < NET_LOCAL_MAX)
		net_local[net_nlocal++] = dev;
}

static void local_del(struct emu_dev *dev)
{
	for (unsigned i = 0; i < net_nlocal; i++)
		if (net_local[i] == dev) {
			net_local[i] = net_local[--net_nlocal];
			return;
		}
}

static bool same_sockaddr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return false;
}

/* Hint the local RNIC a datagram went to, if it is one. */
static void local_hint(const struct sockaddr_storage *to)
{
	for (unsigned i = 0; i < net_nlocal; i++)
		if (same_sockaddr(to, &net_local[i]->addr)) {
			net_local[i]->rx_hint = true;
			return;
		}
}

int emu_net_start(struct emu_dev *dev)
{
	struct emu_net *n = calloc(1, sizeof(*n));
	int one = 1, rc;

	if (!n)
		return -ENOMEM;
	/* Receive TOS/TTL too: UD receivers see them in the GRH area. */
	if (dev->family == AF_INET)
		rc = setsockopt(dev->udp_fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) ||
		     setsockopt(dev->udp_fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	else
		rc = setsockopt(dev->udp_fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) ||
		     setsockopt(dev->udp_fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	if (rc)
		emu_warn("cannot receive TOS/TTL: %s", strerror(errno));
	/*
	 * UDP checksum: IPv4 RoCEv2 packets carry 0 (rxe and NICs do; the
	 * ICRC protects the packet); IPv6 requires one, which the kernel
	 * computes, but RoCEv2 peers may send 0, which must be accepted.
	 */
	if (dev->family == AF_INET)
		rc = setsockopt(dev->udp_fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one));
	else
		rc = setsockopt(dev->udp_fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one));
	if (rc)
		emu_warn("UDP checksum option: %s", strerror(errno));
	/*
	 * Multicast (mcast.c): sent out of the RNIC's own interface, and
	 * looped back to this host's members of the group on it (other RNICs
	 * on the interface, this one's attached QPs).
	 */
	if (dev->family == AF_INET) {
		struct ip_mreqn mr = {.imr_ifindex = dev->ifindex};

		mr.imr_address = ((const struct sockaddr_in *)&dev->addr)->sin_addr;
		rc = setsockopt(dev->udp_fd, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)) ||
		     setsockopt(dev->udp_fd, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof(one));
	} else {
		rc = setsockopt(dev->udp_fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &dev->ifindex,
				sizeof(dev->ifindex)) ||
		     setsockopt(dev->udp_fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &one, sizeof(one));
	}
	if (rc)
		emu_warn("multicast interface %s: %s", dev->ifname, strerror(errno));
	/*
	 * RC requests in flight, device-wide (xport flow.c): what a peer
	 * whose buffer is like ours holds. The kernel charges a datagram's
	 * truesize, about twice its payload on loopback (8456 bytes for a
	 * 4 KiB packet), and the peer's buffer also takes the READ responses
	 * it asked for (limited by its own budget): a fifth of the buffer as
	 * the kernel accounts it leaves room for both, and for the ACKs.
	 */
	if (dev->rcvbuf_bytes > 0)
		xport_flow_set_budget(&dev->x, (uint64_t)dev->rcvbuf_bytes / NET_BUDGET_SHARE);
	/*
	 * A GSO datagram of a peer arrives whole, with its segment size. (A
	 * UDP socket whose filter drops all needs it too: without it the
	 * kernel would cut every GSO datagram for the filter to drop.)
	 */
	if (setsockopt(dev->udp_fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) &&
	    net_udp_receives(dev))
		emu_warn("UDP_GRO: %s: a peer's GSO datagrams are cut by the kernel, and "
			 "their segments after the first fail the ICRC check",
			 strerror(errno));
	dev->net = n;
	local_add(dev);
	/* A UDP socket whose filter drops all is not watched. */
	if (net_udp_receives(dev)) {
		uv_poll_init(dev->loop, &dev->udp_poll, dev->udp_fd);
		dev->udp_poll.data = dev;
		uv_poll_start(&dev->udp_poll, UV_READABLE, on_rx);
	}
	if (dev->raw_fd >= 0) {
		uv_poll_init(dev->loop, &dev->raw_poll, dev->raw_fd);
		dev->raw_poll.data = dev;
		uv_poll_start(&dev->raw_poll, UV_READABLE, on_rx);
	}
	return 0;
}

static unsigned net_send_batch(struct emu_dev *dev);

void emu_net_stop(struct emu_dev *dev)
{
	if (!dev->net)
		return;
	emu_dma_before_reveal(dev);
	net_send_batch(dev);
	local_del(dev);
	free(dev->net);
	dev->net = NULL;
}

/* Control messages setting TOS/TTL (IPv4) or traffic class/hop limit. */
static size_t put_ctl(struct emu_dev *dev, struct net_ctl *c, const struct xport_route *rt)
{
	struct msghdr mh = {.msg_control = c->buf, .msg_controllen = sizeof(c->buf)};
	int ttl = rt->hop_limit ? rt->hop_limit : NET_DEFAULT_TTL;
	int tos = rt->tclass;
	struct cmsghdr *m = CMSG_FIRSTHDR(&mh);

	memset(c->buf, 0, sizeof(c->buf));
	m->cmsg_level = dev->family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
	m->cmsg_type = dev->family == AF_INET ? IP_TTL : IPV6_HOPLIMIT;
	m->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(m), &ttl, sizeof(ttl));
	m = CMSG_NXTHDR(&mh, m);
	m->cmsg_level = dev->family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
	m->cmsg_type = dev->family == AF_INET ? IP_TOS : IPV6_TCLASS;
	m->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(m), &tos, sizeof(tos));
	return 2 * CMSG_SPACE(sizeof(int));
}

int emu_net_send(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len)
{
	/* Fault injection sees every packet first, while it has rules. */
	if (dev->fault_on)
		return emu_fault_tx(dev, rt, pkt, len);
	return emu_net_xmit(dev, rt, pkt, len);
}

static void net_flush_full(struct emu_dev *dev);

/*
 * May pkt join the open GSO run: its P_Key, room for it, and its size, the
 * run's or, as the run's last, shorter. A GSO send's last segment may be
 * shorter than the others, so the last packet of a message (or the first
 * Middle after a WRITE's First, which its RETH makes longer) need not be a
 * datagram of its own. Only after a First or Middle, whose payload is a
 * path MTU: a receiver that sees the datagram whole (a raw socket, a
 * capture) can then tell where the packets end (wire_gso_seg_size). A
 * message of two packets thus leaves as one datagram instead of two.
 */
static bool gso_fits(const struct emu_net *n, const uint8_t *pkt, size_t len)
{
	unsigned last = n->ntx - 1;

	return (len == n->tx_run_len ||
		(n->tx_run_mtu_sized && len < n->tx_run_len && len >= WIRE_GSO_MIN_SEG)) &&
	       wire_bth_get_pkey((const struct wire_bth *)pkt) == n->tx_run_pkey &&
	       n->tx_segs[last] < WIRE_GSO_MAX_SEGS &&
	       n->tx_iov[last].iov_len + len <= WIRE_GSO_MAX_BYTES;
}

/* The kept ICRC ID basis of packets of len bytes, or NULL. */
static const uint32_t *gso_basis_kept(const struct emu_net *n, size_t len)
{
	for (unsigned i = 0; i < NET_GSO_BASES; i++)
		if (n->gso_basis[i].len == len)
			return n->gso_basis[i].basis;
	return NULL;
}

/* The ICRC ID basis of packets of len bytes (ICRC included). */
static const uint32_t *gso_basis(struct emu_net *n, size_t len)
{
	const uint32_t *b = gso_basis_kept(n, len);
	unsigned i;

	if (b)
		return b;
	i = n->gso_basis_next++ % NET_GSO_BASES;
	n->gso_basis[i].len = (uint16_t)len;
	wire_icrc_id_basis(len - XPORT_ICRC_BYTES, n->gso_basis[i].basis);
	return n->gso_basis[i].basis;
}

/* The same peer and the same IP header fields as the open GSO run. */
static bool gso_same_path(const struct xport_route *a, const struct xport_route *b)
{
	return !memcmp(a->dgid, b->dgid, sizeof(a->dgid)) && a->dport == b->dport &&
	       a->tclass == b->tclass && a->hop_limit == b->hop_limit;
}

/* The second segment makes an entry a GSO send: say the segment size. */
static void gso_say_size(struct msghdr *h, size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)((uint8_t *)h->msg_control + h->msg_controllen);
	uint16_t size = (uint16_t)len;

	memset(c, 0, CMSG_SPACE(sizeof(size)));
	c->cmsg_level = IPPROTO_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(size));
	memcpy(CMSG_DATA(c), &size, sizeof(size));
	h->msg_controllen += CMSG_SPACE(sizeof(size));
}

/* The batch's lone ACK goes to the capture now, before anything after it. */
static void ack_capture(struct emu_dev *dev)
{
	struct emu_net *n = dev->net;

	if (!n->tx_ack_uncaptured)
		return;
	n->tx_ack_uncaptured = false;
	if (dev->capture)
		emu_capture_packet(dev, &n->tx_run_rt, n->tx_iov[0].iov_base, n->tx_iov[0].iov_len);
}

/*
 * The packet at p is segment seg of a GSO send: the kernel gives it the ID
 * seg, so its ICRC (sealed for ID 0) is sealed for that, and the capture
 * shows it with that ID (route.c, as on receive).
 */
static void gso_seg_sealed(struct emu_dev *dev, const struct xport_route *rt, uint8_t *p,
			   size_t len, uint16_t seg)
{
	if (dev->family == AF_INET) {
		uint8_t *t = p + len - XPORT_ICRC_BYTES;
		const uint32_t *b = gso_basis_kept(dev->net, len);

		/* A run's size and the ACK's recur: their basis is kept. A
		 * shorter last packet's size may not (messages of any length):
		 * sealing it again for its ID costs one CRC of it, where a
		 * basis costs tens of microseconds, so a basis is made for it
		 * only when the last one had its size too (a stream of
		 * messages of one length). Not while fault rules exist: a
		 * packet they corrupted must keep its bad ICRC, which a new
		 * one would hide. */
		bool tail = len < dev->net->tx_run_len && len != WIRE_GSO_MIN_SEG;

		if (!b && (!tail || dev->fault_on || dev->net->tx_tail_len == len))
			b = gso_basis(dev->net, len);
		if (tail)
			dev->net->tx_tail_len = (uint16_t)len;
		if (b)
			wire_icrc_put(t, wire_icrc_get(t) ^ wire_icrc_id_delta(b, seg));
		else
			wire_icrc_put(t, wire_icrc_end(wire_icrc_add_ib(
					     wire_icrc_begin_udp4(
						 rt->sgid + 12, rt->dgid + 12, seg, WIRE_IPV4_DF,
						 rt->sport, rt->dport, len - XPORT_ICRC_BYTES),
					     0, p, len - XPORT_ICRC_BYTES)));
	}
	if (dev->capture) {
		struct xport_route crt = *rt;

		crt.ip_id_guess = seg;
		emu_capture_packet(dev, &crt, p, len);
	}
}

/* Add pkt as segment n->tx_segs[last] of the open GSO run. */
static void gso_append(struct emu_dev *dev, const struct xport_route *rt, const uint8_t *pkt,
		       size_t len)
{
	struct emu_net *n = dev->net;
	unsigned last = n->ntx - 1;
	uint16_t seg = n->tx_segs[last];
	uint8_t *dst = n->tx_arena + n->tx_used;
	struct msghdr *h = &n->tx_msgs[last].msg_hdr;

	ack_capture(dev);
	if (dst != pkt)
		memcpy(dst, pkt, len);
	n->tx_used += len;
	n->tx_iov[last].iov_len += len;
	n->tx_segs[last] = (uint16_t)(seg + 1);
	if (seg == 1)
		gso_say_size(h, n->tx_run_len);
	gso_seg_sealed(dev, rt, dst, len, seg);
}

/* An ACK that is nothing else (IBA 9.7.5.1: AETH syndrome type ACK, on any
 * transport's Acknowledge opcode): what a batch may hold back. */
static bool plain_ack(const uint8_t *pkt, size_t len)
{
	const struct wire_opcode_info *op;

	if (len <= WIRE_BTH_BYTES)
		return false;
	op = wire_opcode_info(wire_bth_get_opcode((const struct wire_bth *)pkt));
	return op && (op->mask & (WIRE_ACK_MASK | WIRE_ATMACK_MASK)) == WIRE_ACK_MASK &&
	       wire_aeth_syndrome_type(pkt[WIRE_BTH_BYTES]) == WIRE_AETH_ACK;
}

/* A request (IBA 9.2: sent by a requester, not an acknowledgment or a READ
 * response): what may follow a held ACK. */
static bool request(const uint8_t *pkt)
{
	const struct wire_opcode_info *op =
	    wire_opcode_info(wire_bth_get_opcode((const struct wire_bth *)pkt));

	return op && (op->mask & WIRE_REQ_MASK);
}

/*
 * Keep track of whether the batch holds only ACKs and whether they may
 * wait, as pkt joins it. They wait only when this RNIC sent a request
 * lately: then it is one side of a conversation, and its answer may be on
 * the way; an RNIC that only receives (the far end of a one-way stream)
 * would make each of its ACKs late for nothing, and the sender's
 * completions with them.
 */
static void note_tx(struct emu_dev *dev, bool was_empty, const uint8_t *pkt, size_t len)
{
	struct emu_net *n = dev->net;
	bool ack = plain_ack(pkt, len);

	if (was_empty) {
		n->tx_acks_only = ack;
		n->tx_has_req = !ack && request(pkt);
		n->tx_hold = false;
		if (ack && dev->ack_hold_us) {
			n->tx_acks_since_us = emu_wait_now_us();
			n->tx_hold = n->last_req_us && n->tx_acks_since_us - n->last_req_us <
							   EMU_NET_ACK_HOLD_RECENT_US;
			if (n->tx_hold)
				dev->dcnt[EMU_DCNT_ACK_HOLDS]++;
		}
	} else {
		n->tx_acks_only = n->tx_acks_only && ack;
		n->tx_has_req = n->tx_has_req || (!ack && request(pkt));
	}
}

/*
 * May pkt go before the batch's lone ACK, in one GSO datagram? A GSO send's
 * last segment may be shorter than the others, so a one-packet message larger
 * than the ACK and to its peer (a request in a ping-pong, which the held ACK waited
 * for: emu_net_hold_deadline) leaves with it as one datagram instead of two,
 * and arrives in one receive. (One of the ACK's size joins it the usual way:
 * gso_fits.) Receivers cut it: UDP_GRO gives the segment size, and a raw
 * socket's wire_gso_seg_size knows this form; the kernel or a NIC that cuts
 * it makes the two datagrams, the ACK second with the next IPv4 ID.
 */
static bool ack_behind(const struct emu_net *n, const struct xport_route *rt, const uint8_t *pkt,
		       size_t len)
{
	const struct wire_opcode_info *op =
	    wire_opcode_info(wire_bth_get_opcode((const struct wire_bth *)pkt));

	/* (tx_ack_uncaptured: the batch is that ACK alone, an open GSO run).
	 * Only a message of one packet: for a longer one the ACK is one
	 * datagram of several, and where a path loses whole datagrams (a GSO
	 * datagram not cut, as on veth) it would be lost with the data. */
	return n->tx_ack_uncaptured && op && (op->mask & WIRE_ONLY_MASK) == WIRE_ONLY_MASK &&
	       n->tx_iov[0].iov_len == WIRE_GSO_MIN_SEG && len > WIRE_GSO_MIN_SEG &&
	       len + WIRE_GSO_MIN_SEG <= WIRE_GSO_MAX_BYTES && gso_same_path(rt, &n->tx_run_rt) &&
	       wire_bth_get_pkey((const struct wire_bth *)pkt) == n->tx_run_pkey;
}

static void ack_put_behind(struct emu_dev *dev, const struct xport_route *rt, const uint8_t *pkt,
			   size_t len)
{
	struct emu_net *n = dev->net;
	const size_t alen = WIRE_GSO_MIN_SEG; /* BTH + AETH + ICRC */
	uint8_t ack[WIRE_GSO_MIN_SEG];
	struct xport_route art = n->tx_run_rt;

	/* [ACK][pkt] (pkt perhaps built in place after it) becomes [pkt][ACK]. */
	memcpy(ack, n->tx_arena, alen);
	memmove(n->tx_arena, pkt, len);
	memcpy(n->tx_arena + len, ack, alen);
	n->tx_used = len + alen;
	n->tx_iov[0].iov_len = len + alen;
	n->tx_segs[0] = 2;
	gso_say_size(&n->tx_msgs[0].msg_hdr, len);
	/* Nothing may follow a segment shorter than the run's. */
	n->tx_run_open = false;
	n->tx_ack_uncaptured = false;
	note_tx(dev, false, n->tx_arena, len);
	if (dev->capture)
		emu_capture_packet(dev, rt, n->tx_arena, len);
	/* The ACK is the second segment now. */
	gso_seg_sealed(dev, &art, n->tx_arena + len, alen, 1);
}

void *emu_net_tx_buf(struct emu_dev *dev)
{
	struct emu_net *n = dev->net;

	if (!n || dev->fault_on)
		return NULL;
	/* Room for this packet and, unless it may join the open run, for a
	 * shorter one behind it: a message's First and Last leave together. */
	if (n->tx_used + XPORT_MAX_PKT_BYTES * (n->ntx && n->tx_run_open ? 1 : 2) > NET_TX_ARENA)
		net_flush_full(dev);
	return n->tx_arena + n->tx_used;
}

int emu_net_xmit(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len)
{
	struct emu_net *n = dev->net;
	struct mmsghdr *m;
	socklen_t alen;
	unsigned i;
	bool gso, mcast;
	int rc;

	if (!n)
		return -ENETDOWN;
	if (len > XPORT_MAX_PKT_BYTES)
		return -EMSGSIZE;
	/* The kernel sends from the bound address: a route from any other
	 * source would carry an ICRC over the wrong pseudo header. */
	if (memcmp(rt->sgid, dev->gid, 16) || rt->sport != dev->udp_port) {
		dev->dcnt[EMU_DCNT_TX_NO_ROUTE]++;
		return -EADDRNOTAVAIL;
	}
	if (n->tx_used + len > NET_TX_ARENA)
		net_flush_full(dev);
	/* A group's datagrams leave one by one (each member's kernel
	 * receives them as sent). */
	mcast = rt->dgid[0] == 0xff || (!memcmp(rt->dgid, net_v4_prefix, sizeof(net_v4_prefix)) &&
					(rt->dgid[12] & 0xf0) == 0xe0);
	gso = dev->gso && !mcast && len >= WIRE_GSO_MIN_SEG;
	if (gso && n->tx_run_open && gso_same_path(rt, &n->tx_run_rt) && gso_fits(n, pkt, len)) {
		note_tx(dev, false, pkt, len);
		gso_append(dev, rt, pkt, len);
		if (len < n->tx_run_len) {
			/* Nothing may follow a segment shorter than the run's. */
			n->tx_run_open = false;
			dev->dcnt[EMU_DCNT_TX_GSO_TAILS]++;
		}
		return 0;
	}
	if (gso && ack_behind(n, rt, pkt, len)) {
		ack_put_behind(dev, rt, pkt, len);
		return 0;
	}
	ack_capture(dev);
	/* A new entry: the batch goes out first when it has none left (not
	 * as soon as it took its last, which a shorter packet may still end). */
	if (n->ntx == NET_TX_BATCH)
		net_flush_full(dev);
	i = n->ntx;
	rc = emu_route_sockaddr_from_gid(rt->dgid, rt->dport, dev->family, (uint32_t)dev->ifindex,
					 &n->tx_names[i], &alen);
	if (rc) {
		dev->dcnt[EMU_DCNT_TX_NO_ROUTE]++;
		return rc;
	}
	if (mcast)
		dev->dcnt[EMU_DCNT_TX_MCAST]++;
	note_tx(dev, i == 0, pkt, len);
	/* (memmove: a packet built in place may lie in the arena still, past
	 * what the flush above sent) */
	if (pkt != n->tx_arena + n->tx_used)
		memmove(n->tx_arena + n->tx_used, pkt, len);
	pkt = n->tx_arena + n->tx_used;
	n->tx_iov[i].iov_base = n->tx_arena + n->tx_used;
	n->tx_iov[i].iov_len = len;
	n->tx_used += len;
	n->tx_segs[i] = 1;
	m = &n->tx_msgs[i];
	memset(m, 0, sizeof(*m));
	m->msg_hdr.msg_name = &n->tx_names[i];
	m->msg_hdr.msg_namelen = alen;
	m->msg_hdr.msg_iov = &n->tx_iov[i];
	m->msg_hdr.msg_iovlen = 1;
	m->msg_hdr.msg_control = n->tx_ctl[i].buf;
	m->msg_hdr.msg_controllen = put_ctl(dev, &n->tx_ctl[i], rt);
	n->ntx++;
	n->tx_run_open = gso;
	if (gso) {
		n->tx_run_rt = *rt;
		n->tx_run_len = (uint16_t)len;
		n->tx_run_pkey = wire_bth_get_pkey((const struct wire_bth *)pkt);
		n->tx_run_mtu_sized = wire_gso_mtu_sized(pkt);
	}
	/* A lone ACK waits for the capture until it is known what follows it. */
	n->tx_ack_uncaptured = gso && i == 0 && n->tx_acks_only;
	if (dev->capture && !n->tx_ack_uncaptured)
		emu_capture_packet(dev, rt, pkt, len);
	return 0;
}

/*
 * GSO needs the kernel's UDP checksum (SO_NO_CHECK makes it EINVAL): the
 * IPv4 socket computes checksums while a batch with GSO sends goes out and
 * sends 0 again, as RoCEv2 senders do, when one without them does.
 */
static void tx_set_csum(struct emu_dev *dev, bool on)
{
	struct emu_net *n = dev->net;
	int no_check = !on;

	if (dev->family != AF_INET || n->tx_csum == on)
		return;
	if (setsockopt(dev->udp_fd, SOL_SOCKET, SO_NO_CHECK, &no_check, sizeof(no_check)))
		emu_dbg("SO_NO_CHECK %d: %s", no_check, strerror(errno));
	else
		n->tx_csum = on;
}

bool emu_net_rx_holds(const struct emu_dev *dev, const void *p, size_t len)
{
	const struct emu_net *n = dev->net;
	const uint8_t *b = p;

	return n && b >= &n->rx_bufs[0][0] && len <= sizeof(n->rx_bufs) &&
	       (size_t)(b - &n->rx_bufs[0][0]) <= sizeof(n->rx_bufs) - len;
}

/*
 * A batch of nothing but ACKs may wait up to EMU_NET_ACK_HOLD_US for the
 * next request to the same peer: a program that saw the completion of what
 * was acknowledged usually answers within microseconds (a ping-pong, a
 * request and its response), and the ACK then leaves with that request in
 * one sendmmsg, and reaches the peer in one recvmmsg, instead of two each
 * (a system call costs a microsecond or more in a virtual machine). IBA
 * 9.7.5.1.1 lets a responder acknowledge late and several packets at once;
 * the hold is far below any requester's ACK timeout (4.096 us * 2^timeout).
 * NAKs, RNR NAKs and responses never wait. The data path spins while a
 * batch waits (emu_net_hold_deadline), so it never sleeps on one.
 */
uint64_t emu_net_hold_deadline(const struct emu_dev *dev)
{
	const struct emu_net *n = dev->net;

	if (!n || !n->ntx || !n->tx_acks_only || !n->tx_hold)
		return 0;
	return n->tx_acks_since_us + dev->ack_hold_us;
}

unsigned emu_net_flush(struct emu_dev *dev)
{
	uint64_t hold = emu_net_hold_deadline(dev);

	/* Memory first: an ACK must not overtake the data it acknowledges. */
	emu_dma_before_reveal(dev);
	if (hold && emu_wait_now_us() < hold)
		return 0;
	return net_send_batch(dev);
}

/* The batch is full in the middle of an engine entry. */
static void net_flush_full(struct emu_dev *dev)
{
	emu_dma_before_send(dev);
	net_send_batch(dev);
}

static unsigned net_send_batch(struct emu_dev *dev)
{
	struct emu_net *n = dev->net;
	unsigned done = 0, total;

	if (!n || !n->ntx)
		return 0;
	ack_capture(dev);
	total = n->ntx;
	if (n->tx_has_req)
		n->last_req_us = emu_wait_now_us();
	{
		bool any_gso = false;

		for (unsigned i = 0; i < total && !any_gso; i++)
			any_gso = n->tx_segs[i] > 1;
		tx_set_csum(dev, any_gso);
	}
	while (done < total) {
		uint64_t t = emu_prof_start(dev);
		int r = sendmmsg(dev->udp_fd, &n->tx_msgs[done], total - done, MSG_DONTWAIT);

		emu_prof_add(dev, EMU_DCNT_TIME_TX_NS, t);
		dev->dcnt[EMU_DCNT_TX_BATCHES]++;
		if (r > 0) {
			for (unsigned i = done; i < done + (unsigned)r; i++) {
				if (n->tx_segs[i] > 1) {
					dev->dcnt[EMU_DCNT_TX_GSO_SENDS]++;
					dev->dcnt[EMU_DCNT_TX_GSO_SEGMENTS] += n->tx_segs[i];
				}
				local_hint(&n->tx_names[i]);
			}
			done += (unsigned)r;
			dev->dcnt[EMU_DCNT_TX_DATAGRAMS] += (unsigned)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		/* Buffer full, unreachable, too big for the link...: this
		 * datagram is lost (the transport retransmits); say so now and
		 * then, with the reason. */
		dev->dcnt[EMU_DCNT_TX_DROPPED] += n->tx_segs[done];
		{
			int err = r < 0 ? errno : 0;
			char host[64] = "?";
			const uint8_t *bth = n->tx_iov[done].iov_base;

			/* Where it went and the peer QP it was for (BTH bytes 5-7). */
			getnameinfo((struct sockaddr *)&n->tx_names[done],
				    n->tx_msgs[done].msg_hdr.msg_namelen, host, sizeof(host), NULL,
				    0, NI_NUMERICHOST);
			emu_log_rl(
			    &dev->rl[EMU_RL_SEND_FAILED], EMU_LOG_WARN,
			    "sending a %zu-byte datagram (%u packets) to %s for its QP 0x%06x: "
			    "%s; %llu lost so far (counter tx_dropped)",
			    n->tx_iov[done].iov_len, n->tx_segs[done], host,
			    (unsigned)(bth[5] << 16 | bth[6] << 8 | bth[7]),
			    err ? strerror(err) : "sent none",
			    (unsigned long long)dev->dcnt[EMU_DCNT_TX_DROPPED]);
			if (n->tx_segs[done] > 1 && (err == EINVAL || err == EIO)) {
				/* This socket or path cannot do GSO: send packets one by one. */
				dev->gso = false;
				emu_warn("UDP GSO refused (%s): sending one packet per datagram "
					 "from now on",
					 strerror(err));
			}
		}
		done++;
	}
	n->ntx = 0;
	n->tx_used = 0;
	n->tx_run_open = false;
	return total;
}

static void rx_batch_prepare(struct emu_net *n)
{
	for (unsigned i = 0; i < NET_RX_BATCH; i++) {
		struct msghdr *h = &n->rx_msgs[i].msg_hdr;

		n->rx_iov[i].iov_base = n->rx_bufs[i];
		n->rx_iov[i].iov_len = NET_RX_BYTES;
		h->msg_name = &n->rx_names[i];
		h->msg_namelen = sizeof(n->rx_names[i]);
		h->msg_iov = &n->rx_iov[i];
		h->msg_iovlen = 1;
		h->msg_control = n->rx_ctl[i].buf;
		h->msg_controllen = sizeof(n->rx_ctl[i].buf);
		h->msg_flags = 0;
	}
}

/* The segment size of a GRO datagram (UDP_GRO control message), or 0. */
static size_t rx_gro_size(struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c))
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int size;

			memcpy(&size, CMSG_DATA(c), sizeof(size));
			return size > 0 ? (size_t)size : 0;
		}
	return 0;
}

static void rx_packet(struct emu_dev *dev, const struct xport_route *rt, const uint8_t *pkt,
		      size_t len)
{
	if (dev->fault_on)
		emu_fault_rx(dev, rt, pkt, len);
	else
		emu_net_deliver(dev, rt, pkt, len);
}

/*
 * A datagram that holds several packets: cut at seg bytes (the last piece
 * may be shorter), segment i with the ID a GSO send gave it: the first
 * one's plus i when the header was seen, else i as the guess for a uroce peer.
 */
static void rx_segments(struct emu_dev *dev, struct xport_route *rt, const uint8_t *pkt, size_t len,
			size_t seg)
{
	uint16_t id0 = rt->ip_id;

	dev->dcnt[EMU_DCNT_RX_GSO_DATAGRAMS]++;
	for (uint16_t i = 0; len; i++) {
		size_t l = len < seg ? len : seg;

		if (rt->ip_id_known)
			rt->ip_id = (uint16_t)(id0 + i);
		else
			rt->ip_id_guess = i;
		dev->dcnt[EMU_DCNT_RX_GSO_SEGMENTS]++;
		rx_packet(dev, rt, pkt, l);
		pkt += l;
		len -= l;
	}
}

/* One received datagram: of the RNIC's socket (g NULL) or of group g's;
 * raw: from a raw socket, starting with the IPv4 header. */
static void rx_one(struct emu_dev *dev, struct mmsghdr *m, struct emu_mcg *g, bool raw)
{
	struct xport_route rt;
	uint8_t *pkt = m->msg_hdr.msg_iov->iov_base;
	size_t len = m->msg_len, gro = 0;

	dev->dcnt[EMU_DCNT_RX_DATAGRAMS]++;
	if (m->msg_hdr.msg_flags & MSG_TRUNC) {
		dev->dcnt[EMU_DCNT_RX_TRUNCATED]++;
		return;
	}
	if (raw) {
		/* The raw socket: the IPv4 header, with the ID, comes first. */
		const uint8_t *iph = pkt;
		size_t off;

		dev->dcnt[EMU_DCNT_RX_RAW_DATAGRAMS]++;
		switch (emu_route_from_ipv4(pkt, len, dev->udp_port, &rt, &off)) {
		case 0:
			break;
		case -ENOENT:
			dev->dcnt[EMU_DCNT_RX_NOT_OURS]++;
			return;
		default:
			dev->dcnt[EMU_DCNT_RX_BAD_IP]++;
			return;
		}
		pkt += off;
		len -= off;
		/* A GSO send seen whole: nothing says how long its packets are. */
		gro = wire_gso_seg_size(iph, off - WIRE_UDP_BYTES, pkt - WIRE_UDP_BYTES, pkt, len);
	} else if (emu_route_from_msg(&m->msg_hdr, dev->udp_port, &rt)) {
		dev->dcnt[EMU_DCNT_RX_NO_PKTINFO]++;
		return;
	} else {
		gro = rx_gro_size(&m->msg_hdr);
		if (!g && dev->rx_split) {
			/* The exact mode's UDP socket: its filter (dev.c) passed
			 * only a header of ID 0, DF alone and no options. */
			rt.ip_id_known = true;
			rt.ip_id = 0;
			rt.ip_df = true;
		}
	}
	/* PROTOCOL.md 10: the destination must be our GID, or the group's. */
	if (memcmp(rt.dgid, g ? g->gid : dev->gid, 16)) {
		dev->dcnt[EMU_DCNT_RX_NOT_OURS]++;
		return;
	}
	if (g) {
		dev->dcnt[EMU_DCNT_RX_MCAST]++;
		if (!g->nqp) { /* a CM join without a QP, say */
			dev->dcnt[EMU_DCNT_RX_MCAST_NO_QP]++;
			return;
		}
	}
	if (gro && len > gro) {
		if (len > gro * NET_GRO_MAX_SEGS) {
			dev->dcnt[EMU_DCNT_RX_GSO_BAD]++;
			return;
		}
		rx_segments(dev, &rt, pkt, len, gro);
		return;
	}
	if (len > XPORT_MAX_PKT_BYTES) {
		/* Longer than any packet, and not packets of one size. */
		dev->dcnt[EMU_DCNT_RX_GSO_BAD]++;
		return;
	}
	rx_packet(dev, &rt, pkt, len);
}

void emu_net_deliver(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len)
{
	if (!dev->capture) {
		xport_recv_packet(&dev->x, rt, pkt, len);
		return;
	}
	emu_capture_rx_begin(dev, rt, pkt, len);
	xport_rx_verdict_reset(&dev->x);
	xport_recv_packet(&dev->x, rt, pkt, len);
	emu_capture_rx_end(dev);
}

static unsigned net_receive(struct emu_dev *dev, int fd, struct emu_mcg *g, unsigned rounds)
{
	bool raw = g ? g->raw : fd == dev->raw_fd;
	struct emu_net *n = dev->net;
	unsigned total = 0;

	if (!n)
		return 0;
	if (!g)
		dev->rx_hint = false; /* what the hint was about is read now */
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t;
		int got;

		rx_batch_prepare(n);
		t = emu_prof_start(dev);
		got = recvmmsg(fd, n->rx_msgs, NET_RX_BATCH, MSG_DONTWAIT, NULL);
		emu_prof_add(dev, EMU_DCNT_TIME_RX_NS, t);
		if (got < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				dev->dcnt[EMU_DCNT_RX_ERRORS]++;
				emu_dbg("recvmmsg: %s", strerror(errno));
			}
			break;
		}
		if (got == 0)
			break;
		dev->dcnt[EMU_DCNT_RX_BATCHES]++;
		/* One ACK per QP for the whole batch (xport_rx_batch_begin). */
		xport_rx_batch_begin(&dev->x);
		for (int i = 0; i < got; i++)
			rx_one(dev, &n->rx_msgs[i], g, raw);
		xport_rx_batch_end(&dev->x);
		total += (unsigned)got;
		/* The batch's writes and completions before the next recvmmsg
		 * reuses the buffers they are staged in. Its answers (ACKs, READ
		 * responses) wait in the send batch for the data-path pass that
		 * follows (emu_dp_poll, before the loop can block), so that an
		 * ACK and the next request to the same peer, posted by a program
		 * that saw the completion, leave in one sendmmsg. */
		emu_dma_before_reveal(dev);
		if (got < NET_RX_BATCH)
			break;
	}
	return total;
}

/* The sockets datagrams arrive on: the UDP one, the raw one, or both. */
static unsigned net_receive_all(struct emu_dev *dev, unsigned rounds)
{
	unsigned got = 0;

	if (net_udp_receives(dev))
		got += net_receive(dev, dev->udp_fd, NULL, rounds);
	if (dev->raw_fd >= 0)
		got += net_receive(dev, dev->raw_fd, NULL, rounds);
	return got;
}

unsigned emu_net_receive_hinted(struct emu_dev *dev)
{
	unsigned got;

	if (!dev->rx_hint)
		return 0;
	/* What this process sent has ID 0 and DF: the UDP socket has it,
	 * unless the raw socket takes all. */
	got = net_receive(dev, net_udp_receives(dev) ? dev->udp_fd : dev->raw_fd, NULL,
			  NET_RX_ROUNDS);
	dev->dcnt[EMU_DCNT_RX_LOCAL] += got;
	return got;
}

unsigned emu_net_receive_before_timers(struct emu_dev *dev)
{
	unsigned got = net_receive_all(dev, NET_RX_ROUNDS);

	dev->dcnt[EMU_DCNT_RX_BEFORE_TIMERS] += got;
	return got;
}

unsigned emu_net_receive_group(struct emu_mcg *g, unsigned rounds)
{
	return net_receive(g->dev, g->fd, g, rounds);
}

/* A socket of the RNIC is readable: the UDP one, or the raw one. */
static void on_rx(uv_poll_t *h, int status, int events)
{
	struct emu_dev *dev = h->data;
	uint64_t t;
	unsigned got;

	(void)events;
	if (status < 0)
		return;
	emu_wait_awake(&dev->wait);
	t = emu_prof_start(dev);
	got =
	    net_receive(dev, h == &dev->raw_poll ? dev->raw_fd : dev->udp_fd, NULL, NET_RX_ROUNDS);
	emu_prof_add(dev, got ? EMU_DCNT_TIME_WORK_NS : EMU_DCNT_TIME_IDLE_NS, t);
	if (got)
		emu_wait_note_work(&dev->wait);
}
