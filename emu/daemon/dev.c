/* SPDX-License-Identifier: MIT */
/*
 * The device: identity (name, IP address, RoCEv2 GID, node GUID, MAC), the
 * port (active MTU derived from the interface that owns the address, as rxe
 * does), the limits the daemon enforces, the RoCEv2 UDP socket, the status
 * page shared with every client, and the device-wide handle table through
 * which every object is found. It does not handle requests (ctl.c) or
 * objects' semantics (pd.c, mr.c, ...).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <wire/inet.h>

#include "daemon.h"
#include "uroce/version.h"

/* Values of ibv_device_attr / ibv_port_attr fields (verbs.h). */
#define IBV_ATOMIC_HCA_VAL 1
#define IBV_PORT_ACTIVE_VAL 4
#define IBV_LINK_LAYER_ETHERNET_VAL 2
#define IBV_PHYS_STATE_LINK_UP 5
#define IBV_WIDTH_1X 1
#define IBV_SPEED_EDR 32
#define IBV_PORT_CM_SUP (1u << 16)
#define IBV_PORT_IP_BASED_GIDS (1u << 26)
#define IBV_DEV_UD_AV_PORT_ENFORCE (1u << 6)
#define IBV_DEV_CURR_QP_STATE_MOD (1u << 7)
#define IBV_DEV_SYS_IMAGE_GUID (1u << 11)
#define IBV_DEV_RC_RNR_NAK_GEN (1u << 12)
#define IBV_DEV_SRQ_RESIZE (1u << 13)
#define IBV_DEV_MEM_WINDOW (1u << 17)
#define IBV_DEV_MEM_WINDOW_TYPE_2B (1u << 24)
#define IBV_DEV_XRC (1u << 20)
/* ATOMIC WRITE (IBA 1.5), in device_cap_flags_ex (rdma/ib_user_verbs.h). */
#define IB_UVERBS_DEVICE_ATOMIC_WRITE_VAL (1ull << 40)
/* FLUSH (IBA A19) with placement type global visibility (ib_user_verbs.h;
 * IB_UVERBS_DEVICE_FLUSH_PERSISTENT, 1 << 39, is not offered: transport.md). */
#define IB_UVERBS_DEVICE_FLUSH_GLOBAL_VAL (1ull << 38)

/* A generic vendor: rdma-core tools (perftest) then take their generic
 * paths: ibv_post_send, no inline by default (ABI.md section 4). */
#define UROCE_VENDOR_ID 0xffffff
#define UROCE_VENDOR_PART_ID 0

/* IP + UDP + BTH + the largest extended headers + ICRC: what a packet adds
 * to the IB payload, rxe's RXE_MAX_HDR_LENGTH. */
#define ROCE_MAX_HDR_BYTES 80

/* Below this much buffer (as asked, the kernel accounts twice as much)
 * a loopback socket loses packets under load (LIMITS.md). */
#define SOCKBUF_ENOUGH_BYTES (4 * 1024 * 1024)

/*
 * What the device reports and enforces. A real RNIC runs thousands of QPs
 * sharing one large CQ: perftest's `-q 1000` asks for a CQ of tx_depth x
 * QPs = 128000 entries. max_cqe is what ConnectX-4/5 report (4194303);
 * 65536 QPs and 16384 CQs per device are of the order software RNICs
 * report. Queues cost only the memory they are created with (rings are
 * memfds, touched as they fill).
 */
static const struct emu_limits default_limits = {
    .max_mr_size = 1ull << 40,
    .max_qp = 65536,
    .max_qp_wr = 16384,
    .max_sge = 32,
    .max_sge_rd = 32,
    .max_cq = 16384,
    .max_cqe = 4194303,
    .max_mr = 65536,
    .max_mw = 65536,
    .max_dm_size = 256 * 1024,
    .max_dm_total = 4 * 1024 * 1024,
    .max_pd = 65536,
    .max_qp_rd_atom = 128,
    .max_qp_init_rd_atom = 128,
    .max_res_rd_atom = 128 * 65536,
    .max_srq = 4096,
    .max_srq_wr = 16384,
    .max_srq_sge = 32,
    .max_ah = 32768,
    .max_mcast_grp = 1024,     /* a socket each (dp/mcast.c) */
    .max_mcast_qp_attach = 56, /* QPs per group, as rxe */
    .max_total_mcast_qp_attach = 1024 * 56,
    .max_inline_data = UROCE_MAX_INLINE_BYTES,
    .max_channels = 4096,
    .max_ctx = 1024,
};

uint32_t emu_dev_ib_mtu_for(uint32_t if_mtu)
{
	/* enum ibv_mtu: 1 = 256 ... 5 = 4096 */
	for (uint32_t m = 5; m >= 1; m--)
		if ((128u << m) + ROCE_MAX_HDR_BYTES <= if_mtu)
			return m;
	return 1;
}

static uint32_t mtu_enum_from_bytes(uint32_t bytes)
{
	switch (bytes) {
	case 256:
		return 1;
	case 512:
		return 2;
	case 1024:
		return 3;
	case 2048:
		return 4;
	case 4096:
		return 5;
	default:
		return 0;
	}
}

static int in_subnet(const struct sockaddr *a, const struct sockaddr *b,
		     const struct sockaddr *mask)
{
	if (a->sa_family != b->sa_family || !mask || mask->sa_family != a->sa_family)
		return 0;
	if (a->sa_family == AF_INET) {
		uint32_t x = ((const struct sockaddr_in *)a)->sin_addr.s_addr;
		uint32_t y = ((const struct sockaddr_in *)b)->sin_addr.s_addr;
		uint32_t m = ((const struct sockaddr_in *)mask)->sin_addr.s_addr;

		return (x & m) == (y & m);
	}
	const uint8_t *x = ((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr;
	const uint8_t *y = ((const struct sockaddr_in6 *)b)->sin6_addr.s6_addr;
	const uint8_t *m = ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;

	for (int i = 0; i < 16; i++)
		if ((x[i] & m[i]) != (y[i] & m[i]))
			return 0;
	return 1;
}

static int same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/* Find the interface owning the address (exact match first, then the
 * interface whose subnet contains it, e.g. lo for 127.0.0.2). */
static int find_interface(struct emu_dev *dev)
{
	struct ifaddrs *ifs, *i, *best = NULL;
	struct ifreq ifr;
	int fd;

	if (getifaddrs(&ifs))
		return -errno;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != dev->family)
			continue;
		if (same_addr(i->ifa_addr, (struct sockaddr *)&dev->addr)) {
			best = i;
			break;
		}
		if (!best && in_subnet(i->ifa_addr, (struct sockaddr *)&dev->addr, i->ifa_netmask))
			best = i;
	}
	if (!best) {
		freeifaddrs(ifs);
		return -EADDRNOTAVAIL;
	}
	snprintf(dev->ifname, sizeof(dev->ifname), "%s", best->ifa_name);
	dev->if_loopback = (best->ifa_flags & IFF_LOOPBACK) != 0;
	freeifaddrs(ifs);
	dev->ifindex = (int)if_nametoindex(dev->ifname);

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, dev->ifname, sizeof(ifr.ifr_name) - 1);
	if (ioctl(fd, SIOCGIFMTU, &ifr)) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	dev->if_mtu = (uint32_t)ifr.ifr_mtu;
	return 0;
}

/* GID, MAC and node GUID from the address. The MAC is a locally
 * administered one carrying the IPv4 address (or the low bytes of the IPv6
 * address); the GUID is its EUI-64 form, as rxe derives GUIDs from MACs. */
static void derive_identity(struct emu_dev *dev)
{
	uint8_t g[8];

	memset(dev->gid, 0, sizeof(dev->gid));
	if (dev->family == AF_INET) {
		const struct sockaddr_in *s = (void *)&dev->addr;

		dev->gid[10] = 0xff;
		dev->gid[11] = 0xff;
		memcpy(&dev->gid[12], &s->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *s = (void *)&dev->addr;

		memcpy(dev->gid, &s->sin6_addr, 16);
	}
	dev->mac[0] = 0x02;
	dev->mac[1] = 0x00;
	memcpy(&dev->mac[2], &dev->gid[12], 4);
	if (dev->family == AF_INET6)
		dev->mac[1] = dev->gid[11];

	g[0] = dev->mac[0] ^ 0x02;
	g[1] = dev->mac[1];
	g[2] = dev->mac[2];
	g[3] = 0xff;
	g[4] = 0xfe;
	g[5] = dev->mac[3];
	g[6] = dev->mac[4];
	g[7] = dev->mac[5];
	memcpy(&dev->node_guid, g, 8); /* already network order */
}

int emu_dev_setup(struct emu_dev *dev, const struct emu_opts *o)
{
	struct sockaddr_in *s4 = (void *)&dev->addr;
	struct sockaddr_in6 *s6 = (void *)&dev->addr;
	int err;

	snprintf(dev->name, sizeof(dev->name), "%s", o->name);
	snprintf(dev->addr_str, sizeof(dev->addr_str), "%s", o->addr);
	dev->udp_port = o->port;
	dev->lim = default_limits;
	{
		/* A group costs a socket: never more groups than a quarter of
		 * the descriptors the daemon may open (main.c raised the limit). */
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur / 4 < dev->lim.max_mcast_grp) {
			dev->lim.max_mcast_grp = (uint32_t)(rl.rlim_cur / 4);
			dev->lim.max_total_mcast_qp_attach =
			    dev->lim.max_mcast_grp * dev->lim.max_mcast_qp_attach;
		}
	}
	dev->udp_fd = -1;
	dev->raw_fd = -1;
	dev->icrc_req = (enum emu_icrc)o->icrc;
	dev->gso = !o->no_gso;
	dev->icrc_src = o->icrc_src;
	dev->ctl_fd = -1;
	dev->ctl_spare_fd = -1;
	dev->status_fd = -1;
	dev->next_handle = 1;
	dev->next_srq_num = 1;
	dev->ids_seeded = o->seed_set;
	/* Another stream than the fault rules' (seeded from the same N). */
	dev->ids_state = o->seed ^ 0x75726f6365696473ull;
	emu_list_init(&dev->ctxs);
	emu_list_init(&dev->flush_qps);
	emu_list_init(&dev->rnr_qps);
	emu_list_init(&dev->mcgs);
	emu_list_init(&dev->xrcd_doms);
	if (emu_htab_init(&dev->handles) || emu_htab_init(&dev->qpns) ||
	    emu_htab_init(&dev->srqns) || emu_htab_init(&dev->mr_keys) ||
	    emu_htab_init(&dev->mw_keys)) {
		fprintf(stderr, "uroced: out of memory\n");
		goto err_free_tables;
	}

	memset(&dev->addr, 0, sizeof(dev->addr));
	if (inet_pton(AF_INET, o->addr, &s4->sin_addr) == 1) {
		dev->family = AF_INET;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(o->port);
		dev->addr_len = sizeof(*s4);
		if (s4->sin_addr.s_addr == htonl(INADDR_ANY) ||
		    IN_MULTICAST(ntohl(s4->sin_addr.s_addr)) ||
		    s4->sin_addr.s_addr == htonl(INADDR_BROADCAST)) {
			fprintf(stderr,
				"uroced: --addr %s: need a unicast address of "
				"this host\n",
				o->addr);
			goto err_free_tables;
		}
	} else if (inet_pton(AF_INET6, o->addr, &s6->sin6_addr) == 1) {
		dev->family = AF_INET6;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(o->port);
		dev->addr_len = sizeof(*s6);
		if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ||
		    IN6_IS_ADDR_MULTICAST(&s6->sin6_addr)) {
			fprintf(stderr,
				"uroced: --addr %s: need a unicast address of "
				"this host\n",
				o->addr);
			goto err_free_tables;
		}
	} else {
		fprintf(stderr, "uroced: --addr %s: not an IPv4 or IPv6 address\n", o->addr);
		goto err_free_tables;
	}

	err = find_interface(dev);
	if (err) {
		fprintf(stderr,
			"uroced: --addr %s: no local interface has this "
			"address (%s)\n",
			o->addr, strerror(-err));
		goto err_free_tables;
	}
	if (dev->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
		s6->sin6_scope_id = (uint32_t)dev->ifindex;

	if (o->mtu_bytes) {
		dev->active_mtu = mtu_enum_from_bytes(o->mtu_bytes);
		if (!dev->active_mtu) {
			fprintf(stderr,
				"uroced: --mtu %u: must be 256, 512, 1024, "
				"2048 or 4096\n",
				o->mtu_bytes);
			goto err_free_tables;
		}
		if ((128u << dev->active_mtu) + ROCE_MAX_HDR_BYTES > dev->if_mtu)
			emu_warn("--mtu %u does not fit %s's MTU %u: large "
				 "packets will not be sent",
				 o->mtu_bytes, dev->ifname, dev->if_mtu);
	} else {
		dev->active_mtu = emu_dev_ib_mtu_for(dev->if_mtu);
	}
	dev->sockbuf_req = o->sockbuf;
	derive_identity(dev);
	return 0;

err_free_tables:
	emu_dev_close(dev);
	return -1;
}

/*
 * Ask for `want` bytes of socket buffer: the forcing variant ignores
 * net.core.[rw]mem_max but needs CAP_NET_ADMIN; otherwise the kernel caps
 * the request at that sysctl. Returns the size obtained as getsockopt
 * reports it (twice the request: the kernel counts its bookkeeping, a
 * datagram's truesize, against it); *forced tells which variant worked.
 */
static int set_bufsize(int fd, int opt_force, int opt, int want, bool *forced)
{
	int got = 0;
	socklen_t len = sizeof(got);

	*forced = !setsockopt(fd, SOL_SOCKET, opt_force, &want, sizeof(want));
	if (!*forced)
		setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want));
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len))
		got = 0;
	return got;
}

/* Size both buffers of the RoCEv2 socket and say what was obtained. */
static void size_buffers(struct emu_dev *dev, int fd)
{
	int want = (int)(dev->sockbuf_req ? dev->sockbuf_req : EMU_SOCKBUF_DEFAULT_BYTES);
	bool rforced, sforced;

	dev->rcvbuf_bytes = set_bufsize(fd, SO_RCVBUFFORCE, SO_RCVBUF, want, &rforced);
	dev->sndbuf_bytes = set_bufsize(fd, SO_SNDBUFFORCE, SO_SNDBUF, want, &sforced);
	if (dev->rcvbuf_bytes / 2 < SOCKBUF_ENOUGH_BYTES ||
	    dev->sndbuf_bytes / 2 < SOCKBUF_ENOUGH_BYTES)
		emu_warn("UDP buffers: receive %d, send %d bytes, asked for %d each (raise "
			 "net.core.rmem_max/wmem_max or run with CAP_NET_ADMIN): expect packet "
			 "loss under load",
			 dev->rcvbuf_bytes / 2, dev->sndbuf_bytes / 2, want);
	else
		emu_info("UDP buffers: receive %d, send %d bytes (%s; the kernel accounts "
			 "%d and %d)",
			 dev->rcvbuf_bytes / 2, dev->sndbuf_bytes / 2,
			 rforced && sforced ? "forced past net.core.[rw]mem_max"
					    : "within net.core.[rw]mem_max",
			 dev->rcvbuf_bytes, dev->sndbuf_bytes);
}

const char *emu_dev_icrc_name(enum emu_icrc m)
{
	switch (m) {
	case EMU_ICRC_EXACT:
		return "exact";
	case EMU_ICRC_TRACKED:
		return "tracked";
	case EMU_ICRC_ANY:
		return "any";
	case EMU_ICRC_AUTO:
	default:
		return "auto";
	}
}

/*
 * The raw socket's filter (classic BPF, run on the IPv4 header): UDP
 * datagrams to our address (or a multicast group's, mcast.c) and port only, so that the kernel
 * queues nothing else (a raw IPPROTO_UDP socket otherwise gets a copy of every UDP datagram the
 * host receives for its bound address). With skip_id0 (the RNIC's own raw socket) it also
 * leaves out what udp_attach_id0's filter gives the UDP socket: datagrams without options
 * whose ID is 0 and whose only flag is DF, so that each datagram is received once.
 */
int emu_dev_raw_filter(int fd, const uint8_t addr[4], uint16_t port, bool skip_id0)
{
	uint32_t a =
	    (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 | (uint32_t)addr[2] << 8 | addr[3];
	/* A is 16 bits wide here: without skip_id0 the comparison never holds. */
	uint32_t df_only = skip_id0 ? WIRE_IPV4_DF : 0xffffffffu;
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),		/* destination address */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a, 0, 10),	/* not ours: drop */
	    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 6),		/* flags + fragment offset */
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 8, 0), /* a later fragment: drop */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, df_only, 0, 4), /* not DF alone: ours */
	    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),		/* version, IHL */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x45, 0, 2),	/* options: ours */
	    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 4),		/* ID */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0),	/* 0: the UDP socket's */
	    BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),		/* X = IHL * 4 */
	    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),		/* UDP destination port */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 1, 0),	/* ours: accept */
	    BPF_STMT(BPF_RET | BPF_K, 0),			/* drop */
	    BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),		/* the whole datagram */
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* A filter that drops everything: the exact mode's UDP socket where the
 * raw socket receives every datagram (none is seen twice). */
static int udp_attach_drop_all(int fd)
{
	struct sock_filter code[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
	struct sock_fprog prog = {.len = 1, .filter = code};

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/*
 * The exact mode's UDP socket filter on a loopback interface (run on the UDP header; SKF_NET_OFF
 * reaches the IPv4 header before it): only datagrams whose header the
 * socket's receiver knows without seeing it, no options, ID 0 and DF alone,
 * which is what every uroce RNIC sends (a GSO datagram's first segment has
 * ID 0, segment i ID i). The raw socket takes all others (emu_dev_raw_filter),
 * so the ICRC is checked over the header as sent for every sender either way,
 * and the datagrams of uroce peers take the UDP socket's cheaper receive path
 * (UDP_GRO: a GSO datagram whole, with its segment size).
 */
static int udp_attach_id0(int fd)
{
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF + 0), /* version, IHL */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x45, 0, 4),
	    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, (uint32_t)SKF_NET_OFF + 4), /* ID */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
	    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, (uint32_t)SKF_NET_OFF + 6), /* flags, offset */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, WIRE_IPV4_DF, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, 0),	    /* the raw socket's */
	    BPF_STMT(BPF_RET | BPF_K, 0xffffffffu), /* the whole datagram */
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/*
 * Open the exact mode's raw receive socket: IPv4, IPPROTO_UDP (it sees each
 * datagram's whole IP header, ID included), bound to our address, filtered
 * to our port and, with split, to the datagrams the UDP socket does not take
 * (IDs other than 0: emu_dev_raw_filter), with the UDP socket's receive
 * buffer size. Returns the fd, or -errno (-EPERM without CAP_NET_RAW).
 */
static int raw_open(struct emu_dev *dev, bool split)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&dev->addr;
	struct sockaddr_in b = {.sin_family = AF_INET, .sin_addr = s4->sin_addr};
	int want = (int)(dev->sockbuf_req ? dev->sockbuf_req : EMU_SOCKBUF_DEFAULT_BYTES);
	bool forced;
	int fd, err;

	fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	if (emu_dev_raw_filter(fd, (const uint8_t *)&s4->sin_addr, dev->udp_port, split) ||
	    bind(fd, (struct sockaddr *)&b, sizeof(b)))
		goto err_fd;
	/*
	 * Until the filter and the bind took effect the socket got a copy of
	 * every UDP datagram the host received: throw those away (nothing of
	 * ours can be among them, the UDP socket is not bound yet).
	 */
	while (recv(fd, &b, sizeof(b), MSG_DONTWAIT | MSG_TRUNC) >= 0)
		;
	dev->rcvbuf_bytes = set_bufsize(fd, SO_RCVBUFFORCE, SO_RCVBUF, want, &forced);
	return fd;

err_fd:
	err = -errno;
	close(fd);
	return err;
}

/*
 * Decide the ICRC mode (before the UDP socket is bound, so that in exact
 * mode it never queues a datagram) and say which runs and why.
 */
static int icrc_setup(struct emu_dev *dev, int udp_fd)
{
	enum emu_icrc m = dev->icrc_req;
	char asked[48];
	const char *why = asked;
	int fd;

	snprintf(asked, sizeof(asked), "%s=%s", dev->icrc_src ? dev->icrc_src : "--icrc",
		 emu_dev_icrc_name(m));

	if (dev->family != AF_INET) {
		dev->icrc = m == EMU_ICRC_AUTO ? EMU_ICRC_EXACT : m;
		emu_info("ICRC check: exact (IPv6 has no IP ID: the UDP socket shows all the ICRC "
			 "covers)%s",
			 m == EMU_ICRC_AUTO || m == EMU_ICRC_EXACT ? ""
								   : "; --icrc changes nothing");
		dev->x.icrc_mode = XPORT_ICRC_ID0;
		return 0;
	}
	if (m == EMU_ICRC_AUTO || m == EMU_ICRC_EXACT) {
		/*
		 * On a loopback interface every datagram arrives as it was sent
		 * (nothing cuts a GSO send), and uroce peers' (ID 0, DF) take the
		 * UDP socket's cheaper receive path. Elsewhere a path may cut a
		 * GSO send into datagrams with IDs 0, 1, 2, ...: over two sockets
		 * they could be read out of order, so the raw socket takes all.
		 */
		bool split = dev->if_loopback;

		fd = raw_open(dev, split);
		if (fd >= 0 && (split ? udp_attach_id0(udp_fd) : udp_attach_drop_all(udp_fd))) {
			int err = -errno;

			close(fd);
			fd = err;
		}
		if (fd >= 0) {
			dev->raw_fd = fd;
			dev->rx_split = split;
			dev->icrc = EMU_ICRC_EXACT;
			dev->x.icrc_mode = XPORT_ICRC_ID0;
			emu_info("ICRC check: exact (%s; %s: 32 bits for every sender)",
				 m == EMU_ICRC_AUTO ? "default with CAP_NET_RAW" : asked,
				 split ? "on loopback, datagrams with IPv4 ID 0 and DF on the UDP "
					 "socket, all others with their IP header on a raw socket"
				       : "a raw socket receives each datagram with its IP header");
			return 0;
		}
		if (m == EMU_ICRC_EXACT) {
			fprintf(stderr, "uroced: %s needs a raw IPv4 socket (CAP_NET_RAW): %s\n",
				asked, strerror(-fd));
			return -1;
		}
		why = fd == -EPERM || fd == -EACCES ? "default without CAP_NET_RAW"
						    : "default: no raw socket";
		emu_dbg("raw socket: %s", strerror(-fd));
		m = EMU_ICRC_TRACKED;
	}
	dev->icrc = m;
	if (m == EMU_ICRC_TRACKED) {
		dev->x.icrc_mode = XPORT_ICRC_TRACKED;
		emu_info("ICRC check: tracked (%s; IPv4 IDs the UDP socket cannot see are solved "
			 "and held to each sender's sequence: 32 bits for ID-0 senders, >= 28 "
			 "bits within a stream)",
			 why);
	} else {
		dev->x.icrc_mode = XPORT_ICRC_ANY;
		emu_info("ICRC check: any (%s; any solved IPv4 ID is accepted: 16 bits for "
			 "senders with non-zero IDs)",
			 why);
	}
	return 0;
}

int emu_dev_bind_udp(struct emu_dev *dev)
{
	int one = 1, fd;

	fd = socket(dev->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "uroced: socket: %s\n", strerror(errno));
		return -1;
	}
	if (dev->family == AF_INET) {
		int pmtu = IP_PMTUDISC_DO;

		/* DF on every packet, IP ID 0: the ICRC is computable
		 * (PROTOCOL.md section 12). */
		if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
		    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)))
			goto err_opt;
	} else {
		int pmtu = IPV6_PMTUDISC_DO;

		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)))
			goto err_opt;
	}
	size_buffers(dev, fd);
	if (icrc_setup(dev, fd)) {
		close(fd);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&dev->addr, dev->addr_len)) {
		fprintf(stderr, "uroced: cannot bind UDP %s port %u: %s\n", dev->addr_str,
			dev->udp_port, strerror(errno));
		close(fd);
		emu_dev_unbind_udp(dev);
		return -1;
	}
	dev->udp_fd = fd;
	return 0;

err_opt:
	fprintf(stderr, "uroced: UDP socket options: %s\n", strerror(errno));
	close(fd);
	return -1;
}

void emu_dev_unbind_udp(struct emu_dev *dev)
{
	if (dev->udp_fd >= 0)
		close(dev->udp_fd);
	if (dev->raw_fd >= 0)
		close(dev->raw_fd);
	dev->udp_fd = dev->raw_fd = -1;
	dev->rx_split = false;
}

int emu_dev_status_page(struct emu_dev *dev)
{
	void *p;
	int fd, err;

	fd = memfd_create("uroce-status", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, UROCE_STATUS_PAGE_BYTES))
		goto err_fd;
	p = mmap(NULL, UROCE_STATUS_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err_fd;
	/* Clients may map it, but never writably. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE))
		emu_warn("cannot seal the status page: %s", strerror(errno));
	dev->status = p;
	dev->status->magic = UROCE_STATUS_MAGIC;
	dev->status->version = UROCE_UAPI_VERSION;
	dev->status_fd = fd;
	return 0;

err_fd:
	err = -errno;
	close(fd);
	return err;
}

void emu_dev_status_page_free(struct emu_dev *dev)
{
	if (dev->status) {
		munmap(dev->status, UROCE_STATUS_PAGE_BYTES);
		dev->status = NULL;
	}
	if (dev->status_fd >= 0)
		close(dev->status_fd);
	dev->status_fd = -1;
}

uint32_t emu_dev_new_handle(struct emu_dev *dev)
{
	uint32_t h = dev->next_handle++;

	if (dev->next_handle == 0) /* 4 billion objects later */
		dev->next_handle = 1;
	return h;
}

void emu_dev_fill_attr(const struct emu_dev *dev, struct uroce_device_attr *a)
{
	const struct emu_limits *l = &dev->lim;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", UROCE_VERSION_STRING);
	a->node_guid = dev->node_guid;
	a->sys_image_guid = dev->node_guid;
	a->max_mr_size = l->max_mr_size;
	a->page_size_cap = 0xfffff000; /* 4 KiB and every larger power of 2 */
	a->vendor_id = UROCE_VENDOR_ID;
	a->vendor_part_id = UROCE_VENDOR_PART_ID;
	a->hw_ver = 0;
	a->max_qp = l->max_qp;
	a->max_qp_wr = l->max_qp_wr;
	a->device_cap_flags = IBV_DEV_UD_AV_PORT_ENFORCE | IBV_DEV_CURR_QP_STATE_MOD |
			      IBV_DEV_SYS_IMAGE_GUID | IBV_DEV_RC_RNR_NAK_GEN | IBV_DEV_SRQ_RESIZE |
			      IBV_DEV_MEM_WINDOW | IBV_DEV_MEM_WINDOW_TYPE_2B | IBV_DEV_XRC;
	a->device_cap_flags_ex =
	    IB_UVERBS_DEVICE_ATOMIC_WRITE_VAL | IB_UVERBS_DEVICE_FLUSH_GLOBAL_VAL;
	a->max_sge = l->max_sge;
	a->max_sge_rd = l->max_sge_rd;
	a->max_cq = l->max_cq;
	a->max_cqe = l->max_cqe;
	a->max_mr = l->max_mr;
	a->max_pd = l->max_pd;
	a->max_qp_rd_atom = l->max_qp_rd_atom;
	a->max_res_rd_atom = l->max_res_rd_atom;
	a->max_qp_init_rd_atom = l->max_qp_init_rd_atom;
	a->atomic_cap = IBV_ATOMIC_HCA_VAL;
	a->max_mw = l->max_mw;
	a->max_dm_size = l->max_dm_size;
	a->max_mcast_grp = l->max_mcast_grp;
	a->max_mcast_qp_attach = l->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = l->max_total_mcast_qp_attach;
	a->max_ah = l->max_ah;
	a->max_srq = l->max_srq;
	a->max_srq_wr = l->max_srq_wr;
	a->max_srq_sge = l->max_srq_sge;
	a->max_inline_data = l->max_inline_data;
	a->max_pkeys = UROCE_PKEY_TBL_LEN;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	/* Completion timestamps count ns of CLOCK_MONOTONIC: a 1 GHz core
	 * clock, 64 bits wide (dp/event.c, ibv_query_rt_values_ex). */
	a->hca_core_clock_khz = 1000000;
	a->completion_timestamp_mask = UINT64_MAX;
	/*
	 * On-demand paging: the daemon reaches the owner's memory through
	 * process_vm_readv/writev at the moment of each access and pins
	 * nothing, so every MR may be ODP, also one over the whole address
	 * space (implicit); an access to memory not mapped at that moment
	 * fails the WR with a protection/access error (verbs/mr.c).
	 */
	a->odp_general_caps = UROCE_ODP_SUPPORT | UROCE_ODP_SUPPORT_IMPLICIT;
	a->odp_rc_caps = UROCE_ODP_SEND | UROCE_ODP_RECV | UROCE_ODP_WRITE | UROCE_ODP_READ |
			 UROCE_ODP_ATOMIC | UROCE_ODP_SRQ_RECV | UROCE_ODP_FLUSH;
	a->odp_uc_caps = UROCE_ODP_SEND | UROCE_ODP_RECV | UROCE_ODP_WRITE | UROCE_ODP_SRQ_RECV;
	a->odp_ud_caps = UROCE_ODP_SEND | UROCE_ODP_RECV | UROCE_ODP_SRQ_RECV;
	/* XRC moves data through the same DMA engine (no receive queue of its own). */
	a->odp_xrc_caps = UROCE_ODP_SEND | UROCE_ODP_WRITE | UROCE_ODP_READ | UROCE_ODP_ATOMIC |
			  UROCE_ODP_SRQ_RECV;
}

void emu_dev_fill_port(const struct emu_dev *dev, struct uroce_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE_VAL;
	p->max_mtu = 5; /* IBV_MTU_4096 */
	if (dev->active_mtu > p->max_mtu)
		p->max_mtu = dev->active_mtu;
	p->active_mtu = dev->active_mtu;
	p->gid_tbl_len = UROCE_GID_TBL_LEN;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p->max_msg_sz = 0x80000000u; /* IBA: 2^31 */
	p->pkey_tbl_len = UROCE_PKEY_TBL_LEN;
	p->max_vl_num = 1;
	p->active_width = IBV_WIDTH_1X;
	p->active_speed = IBV_SPEED_EDR;
	p->phys_state = IBV_PHYS_STATE_LINK_UP;
	p->link_layer = IBV_LINK_LAYER_ETHERNET_VAL;
}

uint32_t *emu_dev_count(struct emu_dev *dev, enum emu_obj_type type)
{
	switch (type) {
#define EMU_OBJ_COUNT_CASE(name, field) \
	case EMU_OBJ_##name:            \
		return &dev->counts.field;
		EMU_OBJ_LIST(EMU_OBJ_COUNT_CASE)
#undef EMU_OBJ_COUNT_CASE
	default:
		return &dev->counts.ctx; /* not reached */
	}
}

int emu_dev_obj_add(struct emu_ctx *ctx, struct emu_obj *obj, enum emu_obj_type type)
{
	struct emu_dev *dev = ctx->dev;
	uint32_t h;

	do
		h = emu_dev_new_handle(dev);
	while (emu_htab_find(&dev->handles, h));
	if (emu_htab_insert(&dev->handles, &obj->hnode, h))
		return -ENOMEM;
	obj->ctx = ctx;
	obj->type = type;
	obj->usecnt = 0;
	emu_list_add_tail(&ctx->objs[type], &obj->link);
	(*emu_dev_count(dev, type))++;
	return 0;
}

void emu_dev_obj_del(struct emu_obj *obj)
{
	struct emu_dev *dev = obj->ctx->dev;

	emu_htab_remove(&dev->handles, &obj->hnode);
	emu_list_del(&obj->link);
	(*emu_dev_count(dev, obj->type))--;
}

struct emu_obj *emu_dev_obj_find(struct emu_ctx *ctx, uint32_t handle, enum emu_obj_type type)
{
	struct emu_hnode *n;
	struct emu_obj *obj;

	if (!handle)
		return NULL;
	n = emu_htab_find(&ctx->dev->handles, handle);
	if (!n)
		return NULL;
	obj = EMU_CONTAINER_OF(n, struct emu_obj, hnode);
	/* Objects of another context are invisible, as in the kernel's
	 * per-file object tables. */
	if (obj->ctx != ctx || obj->type != type)
		return NULL;
	return obj;
}

void emu_dev_close(struct emu_dev *dev)
{
	emu_htab_free(&dev->handles);
	emu_htab_free(&dev->qpns);
	emu_htab_free(&dev->srqns);
	emu_htab_free(&dev->mr_keys);
	emu_htab_free(&dev->mw_keys);
}

struct emu_qp *emu_dev_qp_by_qpn(struct emu_dev *dev, uint32_t qpn)
{
	struct emu_hnode *n = emu_htab_find(&dev->qpns, qpn);

	return n ? EMU_CONTAINER_OF(n, struct emu_qp, qpn_node) : NULL;
}

struct emu_srq *emu_dev_xrc_srq_by_num(struct emu_dev *dev, uint32_t srqn)
{
	struct emu_hnode *n = emu_htab_find(&dev->srqns, srqn);

	return n ? EMU_CONTAINER_OF(n, struct emu_srq, num_node) : NULL;
}

struct emu_mr *emu_dev_mr_by_key(struct emu_dev *dev, uint32_t key)
{
	struct emu_hnode *n = emu_htab_find(&dev->mr_keys, key >> 8);
	struct emu_mr *mr;

	if (!n)
		return NULL;
	mr = EMU_CONTAINER_OF(n, struct emu_mr, key_node);
	return (mr->lkey == key) ? mr : NULL;
}

struct emu_mw *emu_dev_mw_by_index(struct emu_dev *dev, uint32_t key)
{
	struct emu_hnode *n = emu_htab_find(&dev->mw_keys, key >> 8);

	return n ? EMU_CONTAINER_OF(n, struct emu_mw, key_node) : NULL;
}

int emu_dev_check_ah(const struct emu_dev *dev, const struct uroce_ah_attr *a)
{
	(void)dev;
	if (a->port_num != UROCE_PORT_NUM)
		return -EINVAL;
	/* RoCE: only the GRH names the destination (its GID becomes the IP
	 * destination, PROTOCOL.md 1); there are no LIDs to route by. */
	if (!a->is_global) {
		emu_info("address vector without a GRH refused (EINVAL): RoCE addresses peers "
			 "by GID, give the program a GID index (-g 0, -x 0)");
		return -EINVAL;
	}
	/* Only GID index 0 is populated. */
	if (a->sgid_index != 0)
		return -EINVAL;
	if (a->static_rate > 22) /* IBV_RATE_600_GBPS is the largest */
		return -EINVAL;
	return 0;
}

uint32_t emu_dev_random(struct emu_dev *dev)
{
	uint32_t v;

	if (!dev->ids_seeded) {
		/* The urandom pool: never blocks once the kernel is seeded. */
		for (;;) {
			ssize_t n = getrandom(&v, sizeof(v), 0);

			if (n == (ssize_t)sizeof(v))
				return v;
			if (n < 0 && errno != EINTR)
				break;
		}
		/* No getrandom (a kernel before 3.17): say so once, go on seeded. */
		emu_warn("getrandom: %s: QPNs and keys come from a clock-seeded generator",
			 strerror(errno));
		dev->ids_seeded = true;
		{
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			dev->ids_state ^= (uint64_t)ts.tv_nsec << 20 ^ (uint64_t)ts.tv_sec ^
					  (uint64_t)getpid() << 40;
		}
	}
	/* splitmix64 (Steele, Lea, Flood 2014), as the fault rules draw. */
	uint64_t z = (dev->ids_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}
