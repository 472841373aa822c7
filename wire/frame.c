/* SPDX-License-Identifier: MIT */
/*
 * Ethernet / IPv4 / IPv6 / UDP framing around an IB packet, for captures:
 * parsing (bounds-checked, every length field cross-checked) and building
 * (the headers a RoCEv2 NIC sends). The IB packet's end comes from the UDP
 * length, so Ethernet padding and a captured FCS are ignored.
 */
#include <errno.h>
#include <string.h>
#include <wire/bytes.h>
#include <wire/frame.h>
#include <wire/icrc.h>
#include <wire/inet.h>

#define WIRE_IPV4_MF 0x2000
#define WIRE_IPV4_OFFSET_MASK 0x1fff
#define WIRE_IPV6_HOPOPTS 0
#define WIRE_IPV6_ROUTING 43
#define WIRE_IPV6_FRAGMENT 44
#define WIRE_IPV6_AH 51
#define WIRE_IPV6_DSTOPTS 60
/* More extension headers than this and the packet is not worth decoding. */
#define WIRE_IPV6_MAX_EXT 8

/*
 * The UDP part, common to both IP versions: at udp_off (inside an IP packet of
 * ip_len bytes starting at ip_off, and a buffer of len bytes) is a UDP header.
 * Decides "ours or not" from the destination port, then checks lengths.
 * `fragment` is 1 when the IP layer said this is the first of several
 * fragments (only an error if the datagram is RoCEv2).
 */
static enum wire_reason wire_frame_udp(const uint8_t *buf, size_t len, struct wire_frame *f,
				       int fragment)
{
	size_t udp_off = f->udp_off;
	const uint8_t *u;

	/* Need the destination port to know whether this is RoCEv2 at all. */
	if (len < udp_off || len - udp_off < 4)
		return WIRE_R_NOT_ROCE;
	u = buf + udp_off;
	f->sport = wire_get_be16(u);
	f->dport = wire_get_be16(u + 2);
	if (f->dport != WIRE_ROCEV2_PORT)
		return WIRE_R_NOT_ROCE;
	if (fragment)
		return WIRE_R_IP_FRAGMENT;
	if (len - udp_off < WIRE_UDP_BYTES)
		return WIRE_R_FRAME_TRUNCATED;
	f->udp_len = wire_get_be16(u + 4);
	f->udp_csum = wire_get_be16(u + 6);
	if (f->ip_len < f->ip_hdr_len + WIRE_UDP_BYTES)
		return WIRE_R_IP_BAD_LENGTH;
	if (f->ip_off + f->ip_len > len)
		return WIRE_R_FRAME_TRUNCATED;
	/* RoCEv2 datagrams fill their IP packet exactly. */
	if (f->udp_len != f->ip_len - f->ip_hdr_len)
		return WIRE_R_UDP_BAD_LENGTH;
	f->ib_off = udp_off + WIRE_UDP_BYTES;
	f->ib_len = f->udp_len - WIRE_UDP_BYTES;
	return WIRE_R_OK;
}

static enum wire_reason wire_frame_ipv4(const uint8_t *buf, size_t len, size_t off,
					struct wire_frame *f)
{
	const uint8_t *ip = buf + off;
	size_t avail = len - off;
	size_t ihl;

	if (avail < WIRE_IPV4_BYTES || ip[0] >> 4 != 4)
		return WIRE_R_NOT_ROCE;
	f->ip_version = 4;
	f->ip_off = off;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	f->ip_hdr_len = ihl;
	f->tos = ip[1];
	f->ip_len = wire_get_be16(ip + 2);
	f->ip_id = wire_get_be16(ip + 4);
	f->ip_frag = wire_get_be16(ip + 6);
	f->ttl = ip[8];
	f->ip_csum = wire_get_be16(ip + 10);
	memcpy(f->src, ip + 12, 4);
	memcpy(f->dst, ip + 16, 4);
	if (ip[9] != WIRE_IPPROTO_UDP)
		return WIRE_R_NOT_ROCE;
	/* Non-first fragments carry no UDP header. */
	if (f->ip_frag & WIRE_IPV4_OFFSET_MASK)
		return WIRE_R_NOT_ROCE;
	if (ihl < WIRE_IPV4_BYTES)
		return WIRE_R_NOT_ROCE; /* cannot find the UDP header */
	if (avail >= ihl)
		f->ip_csum_ok = wire_inet_csum(ip, ihl) == 0;
	f->udp_off = off + ihl;
	{
		enum wire_reason r = wire_frame_udp(buf, len, f, !!(f->ip_frag & WIRE_IPV4_MF));

		if (r != WIRE_R_OK)
			return r;
	}
	return WIRE_R_OK;
}

static enum wire_reason wire_frame_ipv6(const uint8_t *buf, size_t len, size_t off,
					struct wire_frame *f)
{
	const uint8_t *ip = buf + off;
	size_t avail = len - off;
	size_t hdr = WIRE_IPV6_BYTES;
	uint8_t nh;
	int fragment = 0;

	if (avail < WIRE_IPV6_BYTES || ip[0] >> 4 != 6)
		return WIRE_R_NOT_ROCE;
	f->ip_version = 6;
	f->ip_off = off;
	f->tos = (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
	f->flow = (uint32_t)(ip[1] & 0x0f) << 16 | (uint32_t)ip[2] << 8 | ip[3];
	f->ip_len = WIRE_IPV6_BYTES + (size_t)wire_get_be16(ip + 4);
	f->ttl = ip[7];
	memcpy(f->src, ip + 8, 16);
	memcpy(f->dst, ip + 24, 16);
	nh = ip[6];
	for (int n = 0; nh != WIRE_IPPROTO_UDP; n++) {
		size_t ext;

		if (n == WIRE_IPV6_MAX_EXT || avail < hdr + 8)
			return WIRE_R_NOT_ROCE;
		switch (nh) {
		case WIRE_IPV6_HOPOPTS:
		case WIRE_IPV6_ROUTING:
		case WIRE_IPV6_DSTOPTS:
			ext = ((size_t)ip[hdr + 1] + 1) * 8;
			break;
		case WIRE_IPV6_AH:
			ext = ((size_t)ip[hdr + 1] + 2) * 4;
			break;
		case WIRE_IPV6_FRAGMENT:
			/* Offset != 0: no UDP header here. M flag: first of several. */
			if (wire_get_be16(ip + hdr + 2) & 0xfff8)
				return WIRE_R_NOT_ROCE;
			fragment = ip[hdr + 3] & 1;
			ext = 8;
			break;
		default:
			return WIRE_R_NOT_ROCE;
		}
		nh = ip[hdr];
		hdr += ext;
	}
	f->ip_hdr_len = hdr;
	f->udp_off = off + hdr;
	/* Payload length 0 (a jumbogram, RFC 2675) fails the UDP length checks. */
	return wire_frame_udp(buf, len, f, fragment);
}

static enum wire_reason wire_frame_ip_at(const uint8_t *buf, size_t len, size_t off,
					 struct wire_frame *f)
{
	if (len <= off)
		return WIRE_R_NOT_ROCE;
	switch (buf[off] >> 4) {
	case 4:
		return wire_frame_ipv4(buf, len, off, f);
	case 6:
		return wire_frame_ipv6(buf, len, off, f);
	default:
		return WIRE_R_NOT_ROCE;
	}
}

enum wire_reason wire_frame_parse_eth(const uint8_t *buf, size_t len, struct wire_frame *f)
{
	size_t off = WIRE_ETH_BYTES;
	uint16_t type;

	memset(f, 0, sizeof(*f));
	if (!buf || len < WIRE_ETH_BYTES)
		return WIRE_R_NOT_ROCE;
	f->has_eth = 1;
	memcpy(f->eth_dst, buf, 6);
	memcpy(f->eth_src, buf + 6, 6);
	type = wire_get_be16(buf + 12);
	while (type == WIRE_ETHERTYPE_VLAN || type == WIRE_ETHERTYPE_QINQ) {
		if (f->vlan_count == WIRE_MAX_VLANS || len - off < WIRE_VLAN_BYTES)
			return WIRE_R_NOT_ROCE;
		f->vlan_tci[f->vlan_count++] = wire_get_be16(buf + off);
		type = wire_get_be16(buf + off + 2);
		off += WIRE_VLAN_BYTES;
	}
	f->ethertype = type;
	if (type == WIRE_ETHERTYPE_IPV4 && len > off && buf[off] >> 4 == 4)
		return wire_frame_ipv4(buf, len, off, f);
	if (type == WIRE_ETHERTYPE_IPV6 && len > off && buf[off] >> 4 == 6)
		return wire_frame_ipv6(buf, len, off, f);
	return WIRE_R_NOT_ROCE;
}

enum wire_reason wire_frame_parse_ip(const uint8_t *buf, size_t len, struct wire_frame *f)
{
	memset(f, 0, sizeof(*f));
	if (!buf)
		return WIRE_R_NOT_ROCE;
	return wire_frame_ip_at(buf, len, 0, f);
}

static size_t wire_frame_ip_bytes(const struct wire_frame_params *p)
{
	return (p->ip_version == 6 ? WIRE_IPV6_BYTES : WIRE_IPV4_BYTES) + WIRE_UDP_BYTES;
}

size_t wire_frame_hdr_bytes(const struct wire_frame_params *p)
{
	return WIRE_ETH_BYTES + wire_frame_ip_bytes(p);
}

/* Write IP + UDP headers at buf and the IB packet after them; ICRC last. */
static int wire_frame_put_ip(uint8_t *buf, size_t size, const struct wire_frame_params *p,
			     const uint8_t *ib, size_t ib_len)
{
	size_t iph = p->ip_version == 6 ? WIRE_IPV6_BYTES : WIRE_IPV4_BYTES;
	size_t total = iph + WIRE_UDP_BYTES + ib_len;
	uint8_t *u = buf + iph;
	uint8_t ttl = p->ttl ? p->ttl : WIRE_DEFAULT_TTL;

	if ((p->ip_version != 4 && p->ip_version != 6) || !ib || ib_len < WIRE_ICRC_BYTES)
		return -EINVAL;
	if ((p->ip_version == 4 ? total : total - WIRE_IPV6_BYTES) > 0xffff)
		return -EINVAL;
	if (size < total)
		return -ENOSPC;
	if (ib != u + WIRE_UDP_BYTES)
		memmove(u + WIRE_UDP_BYTES, ib, ib_len);

	if (p->ip_version == 4) {
		struct wire_ipv4_params h = {
		    .tos = p->tos,
		    .total_len = (uint16_t)total,
		    /* ID 0 with DF, as Linux sends from an unconnected DF socket,
		     * unless the caller saw the real header. */
		    .id = p->ip_hdr_known ? p->ip_id : 0,
		    .frag = p->ip_hdr_known ? p->ip_frag : WIRE_IPV4_DF,
		    .ttl = ttl,
		    .proto = WIRE_IPPROTO_UDP,
		};

		memcpy(h.src, p->src, 4);
		memcpy(h.dst, p->dst, 4);
		wire_ipv4_put(buf, &h);
	} else {
		struct wire_ipv6_params h = {
		    .tclass = p->tos,
		    .flow = p->flow,
		    .payload_len = (uint16_t)(WIRE_UDP_BYTES + ib_len),
		    .next = WIRE_IPPROTO_UDP,
		    .hop_limit = ttl,
		};

		memcpy(h.src, p->src, 16);
		memcpy(h.dst, p->dst, 16);
		wire_ipv6_put(buf, &h);
	}
	/* RoCEv2 sends UDP checksum 0 */
	wire_udp_put(u, p->sport ? p->sport : WIRE_UDP_SPORT_BASE,
		     p->dport ? p->dport : WIRE_ROCEV2_PORT, (uint16_t)(WIRE_UDP_BYTES + ib_len),
		     0);
	if (p->fill_icrc) {
		uint32_t icrc;
		int ret = wire_icrc_compute(buf, iph, total - WIRE_ICRC_BYTES, &icrc);

		if (ret)
			return ret;
		wire_icrc_put(buf + total - WIRE_ICRC_BYTES, icrc);
	}
	return (int)total;
}

int wire_frame_build_ip(uint8_t *buf, size_t size, const struct wire_frame_params *p,
			const uint8_t *ib, size_t ib_len)
{
	if (!buf || !p)
		return -EINVAL;
	return wire_frame_put_ip(buf, size, p, ib, ib_len);
}

int wire_frame_build_eth(uint8_t *buf, size_t size, const struct wire_frame_params *p,
			 const uint8_t *ib, size_t ib_len)
{
	int n;

	if (!buf || !p)
		return -EINVAL;
	if (size < WIRE_ETH_BYTES)
		return -ENOSPC;
	n = wire_frame_put_ip(buf + WIRE_ETH_BYTES, size - WIRE_ETH_BYTES, p, ib, ib_len);
	if (n < 0)
		return n;
	memcpy(buf, p->eth_dst, 6);
	memcpy(buf + 6, p->eth_src, 6);
	wire_put_be16(buf + 12, p->ip_version == 6 ? WIRE_ETHERTYPE_IPV6 : WIRE_ETHERTYPE_IPV4);
	return n + WIRE_ETH_BYTES;
}
