/* SPDX-License-Identifier: MIT */
/*
 * Capture file reading and writing on libpcap (see pcapfile.h). The link
 * layer is stripped here, per link type, and everything from the IP header
 * on is left to the wire library, so the CLI and the daemon decode frames the
 * same way whatever captured them. pcapng files are written here block by
 * block (section header, one Ethernet interface, enhanced packet blocks with
 * an optional comment), since libpcap writes only pcap; they are read back
 * through libpcap like any other.
 */
/* libpcap's headers use the BSD u_int/u_char types. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wire/gso.h>

#include "pcapfile.h"

#define EMU_SLL_BYTES 16
#define EMU_SLL2_BYTES 20
#define EMU_NULL_BYTES 4
#define COMMON_PCAP_SNAPLEN 65535

static void common_pcap_seterr(char *err, size_t errlen, const char *fmt, const char *a,
			       const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
}

int common_pcap_linktype_supported(int linktype)
{
	switch (linktype) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return 1;
	default:
		return 0;
	}
}

/* IP packet after a link header that names its payload by ethertype. */
static enum wire_reason common_pcap_by_ethertype(uint16_t type, const uint8_t *data, size_t len,
						 size_t off, struct wire_decoded *d)
{
	/* A cooked header may be followed by VLAN tags (protocol 0x8100). */
	for (int n = 0;
	     n < WIRE_MAX_VLANS && (type == WIRE_ETHERTYPE_VLAN || type == WIRE_ETHERTYPE_QINQ);
	     n++) {
		if (len - off < WIRE_VLAN_BYTES)
			break;
		type = wire_get_be16(data + off + 2);
		off += WIRE_VLAN_BYTES;
	}
	if (type != WIRE_ETHERTYPE_IPV4 && type != WIRE_ETHERTYPE_IPV6) {
		memset(d, 0, sizeof(*d));
		d->reason = WIRE_R_NOT_ROCE;
		return d->reason;
	}
	return wire_decode_ip(data + off, len - off, d);
}

enum wire_reason common_pcap_decode(int linktype, const uint8_t *data, size_t len,
				    struct wire_decoded *d)
{
	switch (linktype) {
	case DLT_EN10MB:
		return wire_decode_eth(data, len, d);
	case DLT_LINUX_SLL:
		if (len >= EMU_SLL_BYTES)
			return common_pcap_by_ethertype(wire_get_be16(data + 14), data, len,
							EMU_SLL_BYTES, d);
		break;
	case DLT_LINUX_SLL2:
		if (len >= EMU_SLL2_BYTES)
			return common_pcap_by_ethertype(wire_get_be16(data), data, len,
							EMU_SLL2_BYTES, d);
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		return wire_decode_ip(data, len, d);
	case DLT_NULL:
	case DLT_LOOP:
		/* 4-byte address family; the IP version nibble says the rest. */
		if (len >= EMU_NULL_BYTES)
			return wire_decode_ip(data + EMU_NULL_BYTES, len - EMU_NULL_BYTES, d);
		break;
	default:
		break;
	}
	memset(d, 0, sizeof(*d));
	d->reason = WIRE_R_NOT_ROCE;
	return d->reason;
}

int common_pcap_open_read(struct common_pcap_reader *r, const char *path, char *err, size_t errlen)
{
	char pcap_err[PCAP_ERRBUF_SIZE] = "";
	FILE *probe;

	memset(r, 0, sizeof(*r));
	/* Probe first so a missing or unreadable file gets the plain errno text. */
	probe = fopen(path, "rb");
	if (!probe) {
		int e = errno;

		common_pcap_seterr(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	fclose(probe);
	r->pcap = pcap_open_offline(path, pcap_err);
	if (!r->pcap) {
		common_pcap_seterr(err, errlen, "%s: not a readable pcap/pcapng file (%s)", path,
				   pcap_err);
		return -EINVAL;
	}
	r->linktype = pcap_datalink(r->pcap);
	if (!common_pcap_linktype_supported(r->linktype)) {
		const char *name = pcap_datalink_val_to_name(r->linktype);

		common_pcap_seterr(err, errlen, "%s: unsupported link type %s", path,
				   name ? name : "(unknown)");
		pcap_close(r->pcap);
		r->pcap = NULL;
		return -EINVAL;
	}
	return 0;
}

/*
 * Packet r->gso_seg (0-based here) of the GSO datagram in r->gso: its link,
 * IP and UDP headers with the lengths of one packet (and, for IPv4, ID + i
 * and the header checksum that goes with it), then its bytes.
 */
static void gso_packet(struct common_pcap_reader *r, struct wire_decoded *d, size_t *wire_len)
{
	const struct wire_frame *f = &r->gso_frame;
	unsigned i = r->gso_seg;
	size_t hdr = f->ib_off, off = (size_t)i * r->gso_seg_bytes;
	/* the last packet may be shorter (a request and its ACK, wire/gso.h) */
	size_t seg = f->ib_len - off < r->gso_seg_bytes ? f->ib_len - off : r->gso_seg_bytes;
	size_t len = hdr + seg;
	uint8_t *o = r->gso_out, *ip = o + f->ip_off, *udp = o + f->udp_off;

	memcpy(o, r->gso, hdr);
	memcpy(o + hdr, r->gso + hdr + off, seg);
	wire_put_be16(udp + 4, (uint16_t)(WIRE_UDP_BYTES + seg));
	if (f->ip_version == 4) {
		wire_put_be16(ip + 2, (uint16_t)(f->ip_hdr_len + WIRE_UDP_BYTES + seg));
		wire_put_be16(ip + 4, (uint16_t)(f->ip_id + i));
		wire_put_be16(ip + 10, 0);
		wire_put_be16(ip + 10, wire_inet_csum(ip, f->ip_hdr_len));
	} else {
		wire_put_be16(ip + 4, (uint16_t)(f->ip_hdr_len - 40 + WIRE_UDP_BYTES + seg));
	}
	r->gso_seg = i + 1;
	if (wire_len)
		*wire_len = len;
	common_pcap_decode(r->linktype, o, len, d);
}

/* Keep a whole frame that is a GSO datagram (its packets follow), or 0. */
static int gso_start(struct common_pcap_reader *r, const uint8_t *data, size_t len,
		     const struct wire_decoded *d)
{
	const struct wire_frame *f = &d->frame;
	size_t seg;

	if (d->reason == WIRE_R_NOT_ROCE || !f->ip_version || !f->ib_off ||
	    f->ib_off + f->ib_len > len || !f->udp_off ||
	    !(seg = wire_gso_seg_size(data + f->ip_off, f->ip_hdr_len, data + f->udp_off,
				      data + f->ib_off, f->ib_len)))
		return 0;
	if (!r->gso && !(r->gso = malloc(COMMON_PCAP_SNAPLEN)))
		return -ENOMEM;
	if (!r->gso_out && !(r->gso_out = malloc(COMMON_PCAP_SNAPLEN)))
		return -ENOMEM;
	memcpy(r->gso, data, f->ib_off + f->ib_len);
	r->gso_len = f->ib_off + f->ib_len;
	r->gso_frame = *f;
	r->gso_count = (unsigned)((f->ib_len + seg - 1) / seg);
	r->gso_seg_bytes = seg;
	r->gso_seg = 0;
	return 1;
}

int common_pcap_next(struct common_pcap_reader *r, struct wire_decoded *d, size_t *wire_len,
		     char *err, size_t errlen)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int ret;

	if (r->gso_count && r->gso_seg < r->gso_count) {
		gso_packet(r, d, wire_len);
		return 1;
	}
	r->gso_count = r->gso_seg = 0;
	ret = pcap_next_ex(r->pcap, &h, &data);

	if (ret == PCAP_ERROR_BREAK)
		return 0;
	if (ret != 1) {
		common_pcap_seterr(err, errlen, "%s%s", "damaged capture: ", pcap_geterr(r->pcap));
		return -EIO;
	}
	r->frames++;
	if (wire_len)
		*wire_len = h->len;
	r->cut_at = 0;
	if (h->caplen >= h->len || h->len > COMMON_PCAP_SNAPLEN) {
		common_pcap_decode(r->linktype, data, h->caplen, d);
		ret = gso_start(r, data, h->caplen, d);
		if (ret < 0) {
			common_pcap_seterr(err, errlen, "%s%s", "out of memory", "");
			return -EIO;
		}
		if (ret)
			gso_packet(r, d, wire_len);
		return 1;
	}
	/* Cut by the snap length: decode the headers it kept. */
	if (!r->pad && !(r->pad = malloc(COMMON_PCAP_SNAPLEN))) {
		common_pcap_seterr(err, errlen, "%s%s", "out of memory", "");
		return -EIO;
	}
	memcpy(r->pad, data, h->caplen);
	memset(r->pad + h->caplen, 0, h->len - h->caplen);
	r->cut_at = h->caplen;
	common_pcap_decode(r->linktype, r->pad, h->len, d);
	if (d->reason == WIRE_R_NOT_ROCE)
		return 1;
	d->icrc = WIRE_ICRC_UNCHECKED;
	if (d->reason == WIRE_R_OK && d->frame.ib_off + d->pkt.payload_off > (size_t)h->caplen)
		d->reason = WIRE_R_SHORT_FOR_OPCODE;
	return 1;
}

void common_pcap_close_read(struct common_pcap_reader *r)
{
	if (r->pcap)
		pcap_close(r->pcap);
	r->pcap = NULL;
	free(r->pad);
	r->pad = NULL;
	free(r->gso);
	free(r->gso_out);
	r->gso = r->gso_out = NULL;
	r->gso_count = r->gso_seg = 0;
}

/* pcapng block types and the option that carries a comment (pcapng spec, IETF draft). */
#define PCAPNG_SHB 0x0a0d0d0au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BOM 0x1a2b3c4du
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_COMMENT_MAX 1024

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static size_t put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* pcapng is written in the host's order (the BOM says which) */
	return 4;
}

static size_t put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return 2;
}

/* The section header and the one Ethernet interface of a new pcapng file. */
static int pcapng_start(FILE *f, uint32_t snaplen)
{
	uint8_t b[48];
	size_t n = 0;

	n += put32(b + n, PCAPNG_SHB);
	n += put32(b + n, 28);
	n += put32(b + n, PCAPNG_BOM);
	n += put16(b + n, 1); /* version 1.0 */
	n += put16(b + n, 0);
	n += put32(b + n, 0xffffffffu); /* section length: not given */
	n += put32(b + n, 0xffffffffu);
	n += put32(b + n, 28);
	n += put32(b + n, PCAPNG_IDB);
	n += put32(b + n, 20);
	n += put16(b + n, DLT_EN10MB);
	n += put16(b + n, 0);
	n += put32(b + n, snaplen); /* microsecond timestamps: the default */
	n += put32(b + n, 20);
	return fwrite(b, 1, n, f) == n ? 0 : -EIO;
}

int common_pcap_open_write(struct common_pcap_writer *w, const char *path, char *err, size_t errlen)
{
	return common_pcap_open_write_snap(w, path, 0, err, errlen);
}

/* A snap length of 0 (whole frames) or 64..65535: 0 or -EINVAL. */
static int snaplen_check(const char *path, uint32_t snaplen, char *err, size_t errlen)
{
	if (snaplen && (snaplen < 64 || snaplen > COMMON_PCAP_SNAPLEN)) {
		common_pcap_seterr(err, errlen, "%s: %s", path, "snap length must be 64..65535");
		return -EINVAL;
	}
	return 0;
}

int common_pcap_open_write_snap(struct common_pcap_writer *w, const char *path, uint32_t snaplen,
				char *err, size_t errlen)
{
	FILE *f;

	memset(w, 0, sizeof(*w));
	if (snaplen_check(path, snaplen, err, errlen))
		return -EINVAL; /* before a file is created */
	/* fopen ourselves for a precise errno */
	f = fopen(path, "wb");
	if (!f) {
		int e = errno;

		common_pcap_seterr(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	return common_pcap_open_write_stream(w, f, path, snaplen, err, errlen);
}

int common_pcap_open_write_stream(struct common_pcap_writer *w, FILE *f, const char *path,
				  uint32_t snaplen, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	if (snaplen_check(path, snaplen, err, errlen)) {
		fclose(f);
		return -EINVAL;
	}
	w->snaplen = snaplen ? snaplen : COMMON_PCAP_SNAPLEN;
	if (ends_with(path, ".pcapng")) {
		if (pcapng_start(f, w->snaplen)) {
			common_pcap_seterr(err, errlen, "%s: %s", path, strerror(EIO));
			fclose(f);
			return -EIO;
		}
		w->ng = f;
		w->bytes = 28 + 20;
		return 0;
	}
	w->dead = pcap_open_dead(DLT_EN10MB, (int)w->snaplen);
	if (!w->dead) {
		common_pcap_seterr(err, errlen, "%s: %s", path, "cannot create a pcap handle");
		fclose(f);
		return -ENOMEM;
	}
	/* pcap_dump_fopen takes the stream over (pcap_dump_close closes it). */
	w->dumper = pcap_dump_fopen(w->dead, f);
	if (!w->dumper) {
		common_pcap_seterr(err, errlen, "%s: %s", path, pcap_geterr(w->dead));
		fclose(f);
		pcap_close(w->dead);
		w->dead = NULL;
		return -EIO;
	}
	w->bytes = 24; /* the pcap file header */
	return 0;
}

/* One enhanced packet block, with the comment as its opt_comment. */
static int pcapng_packet(FILE *f, const struct timeval *ts, const uint8_t *frame, size_t len,
			 size_t orig_len, const char *comment, uint64_t *bytes)
{
	static const uint8_t zero[4];
	size_t clen = comment ? strnlen(comment, PCAPNG_COMMENT_MAX) : 0;
	size_t dpad = (4 - (len & 3)) & 3, cpad = (4 - (clen & 3)) & 3;
	size_t opts = clen ? 4 + clen + cpad + 4 : 0;
	uint32_t total = (uint32_t)(28 + len + dpad + opts + 4);
	uint64_t us = (uint64_t)ts->tv_sec * 1000000u + (uint64_t)ts->tv_usec;
	uint8_t h[28], o[4], t[4];
	size_t n = 0;

	n += put32(h + n, PCAPNG_EPB);
	n += put32(h + n, total);
	n += put32(h + n, 0); /* interface 0 */
	n += put32(h + n, (uint32_t)(us >> 32));
	n += put32(h + n, (uint32_t)us);
	n += put32(h + n, (uint32_t)len);
	n += put32(h + n, (uint32_t)orig_len);
	put32(t, total);
	*bytes += total;
	if (fwrite(h, 1, n, f) != n || fwrite(frame, 1, len, f) != len ||
	    fwrite(zero, 1, dpad, f) != dpad)
		return -EIO;
	if (clen) {
		put16(o, PCAPNG_OPT_COMMENT);
		put16(o + 2, (uint16_t)clen);
		if (fwrite(o, 1, 4, f) != 4 || fwrite(comment, 1, clen, f) != clen ||
		    fwrite(zero, 1, cpad, f) != cpad ||
		    fwrite(zero, 1, 4, f) != 4) /* opt_endofopt */
			return -EIO;
	}
	return fwrite(t, 1, 4, f) == 4 ? 0 : -EIO;
}

int common_pcap_write_frame_comment(struct common_pcap_writer *w, const struct timeval *ts,
				    const uint8_t *frame, size_t len, const char *comment)
{
	struct pcap_pkthdr h;
	size_t cap = len;

	if ((!w->dumper && !w->ng) || len > COMMON_PCAP_SNAPLEN)
		return -EINVAL;
	if (cap > w->snaplen)
		cap = w->snaplen;
	if (ts)
		h.ts = *ts;
	else
		gettimeofday(&h.ts, NULL);
	if (w->ng) {
		if (pcapng_packet(w->ng, &h.ts, frame, cap, len, comment, &w->bytes))
			return -EIO;
	} else {
		h.caplen = (bpf_u_int32)cap;
		h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)w->dumper, &h, frame);
		w->bytes += 16 + cap;
	}
	w->frames++;
	return 0;
}

int common_pcap_write_frame(struct common_pcap_writer *w, const struct timeval *ts,
			    const uint8_t *frame, size_t len)
{
	return common_pcap_write_frame_comment(w, ts, frame, len, NULL);
}

int common_pcap_write_ib(struct common_pcap_writer *w, const struct timeval *ts,
			 const struct wire_frame_params *p, const uint8_t *ib, size_t ib_len)
{
	uint8_t frame[COMMON_PCAP_SNAPLEN];
	int n = wire_frame_build_eth(frame, sizeof(frame), p, ib, ib_len);

	if (n < 0)
		return n;
	return common_pcap_write_frame(w, ts, frame, (size_t)n);
}

int common_pcap_flush(struct common_pcap_writer *w)
{
	if (w->ng)
		return fflush(w->ng) == 0 ? 0 : -EIO;
	if (!w->dumper)
		return -EINVAL;
	return pcap_dump_flush(w->dumper) == 0 ? 0 : -EIO;
}

int common_pcap_close_write(struct common_pcap_writer *w)
{
	int ret = 0;

	if (w->ng && fclose(w->ng))
		ret = -EIO;
	w->ng = NULL;
	if (w->dumper) {
		if (pcap_dump_flush(w->dumper) != 0)
			ret = -EIO;
		pcap_dump_close(w->dumper);
	}
	if (w->dead)
		pcap_close(w->dead);
	w->dumper = NULL;
	w->dead = NULL;
	return ret;
}
