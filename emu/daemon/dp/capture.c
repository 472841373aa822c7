/* SPDX-License-Identifier: MIT */
/*
 * `uroced --pcap FILE`: every packet the RNIC sends and every packet it
 * receives for its address is appended to a pcap file as an Ethernet frame
 * (Ethernet + IPv4/IPv6 + UDP + the IB packet with its ICRC, exactly the
 * bytes that crossed the socket), so Wireshark and `uroce decode` see the
 * conversation as on the wire. IPv4 headers carry ID 0 and DF as the kernel
 * sends them, IPv4 UDP checksum 0 (net.c turns it off, as RoCEv2 senders do)
 * and the IPv6 UDP checksum the kernel computes; MAC addresses are the
 * locally administered ones derived from the IP addresses (route.c). Received packets are captured
 * before the transport checks them, so dropped ones (bad ICRC...) appear too.
 * A FILE named *.pcapng is written as pcapng, and a frame then carries a
 * comment saying why it exists and what became of it: the WR a request
 * belongs to (wr_id, opcode, length, SGE count) and, when it is sent again,
 * why (the retry counter of the cause: timeout, sequence NAK, RNR...; from
 * the engine's xport_tx_info); what a fault rule did to it (fault.c,
 * emu_capture_note); on receive, the drop reason the engine counted
 * (xport_rx_verdict) and the completions it caused. A received frame is held
 * while the engine processes it, so that what it provokes (an ACK) is
 * written after it. A pcap file holds the frames alone.
 *
 * Bounded as tcpdump's are: --pcap-snaplen cuts each frame to its first
 * bytes (the frame keeps its original length, and a comment says whether the
 * whole packet's ICRC was good, since a reader can no longer check it), and
 * --pcap-size starts a new file when one has grown past that many bytes:
 * FILE's name gets a number before its extension (u0.pcapng: u0.0.pcapng,
 * u0.1.pcapng, ...), and with --pcap-files N only the newest N are kept, the
 * numbers going round 0..N-1 so that the oldest file is overwritten.
 *
 * The RNIC never waits for the file (afile.c): frames are formatted into a
 * stream whose bytes the loop's thread pool writes, and the closing and
 * opening of the files of a series go the same way, in order. The bytes
 * waiting for the file are bounded, as a NIC's capture buffer is
 * (--pcap-buffer, EMU_CAPTURE_BUFFER by default): a frame that finds the
 * buffer full is not captured and is counted (pcap_dropped), and in pcapng
 * the next frame captured says how many before it were lost. The stream is
 * flushed at most 100 ms after a frame was written (a daemon that is killed
 * leaves a nearly complete file); a clean exit (SIGINT, SIGTERM) writes
 * everything captured. A daemon whose start fails after opening the file
 * removes the file it created (emu_capture_discard).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wire/bth.h>
#include <wire/decode.h>
#include <wire/frame.h>
#include <wire/inet.h>
#include "pcapfile.h"
#include "dp.h"

#define CAPTURE_ETH_BYTES 14
#define CAPTURE_IPV6_BYTES 40
/* A frame comment (pcapng) at most this long. */
#define CAPTURE_NOTE_BYTES 384
/* Ethernet + IPv6 + UDP + the largest packet the transport sends. */
#define CAPTURE_FRAME_BYTES (CAPTURE_ETH_BYTES + CAPTURE_IPV6_BYTES + 8 + XPORT_MAX_PKT_BYTES)

struct emu_capture {
	struct common_pcap_writer w;
	struct emu_afile *af; /* the file (series), written without waiting */
	uint64_t lost;	      /* frames not captured since the last one that was */
	const char *path; /* --pcap FILE */
	char *cur;	  /* the file being written: path, or a numbered one of the ring */
	uint32_t snaplen;
	uint64_t size; /* 0: one file */
	uint32_t files;
	uint64_t seq; /* number of the current file (ring: modulo files) */
	bool created; /* the file did not exist before: a discard removes it */
	bool has_note;
	char note[CAPTURE_NOTE_BYTES]; /* the comment of the next frame */
	/* a received frame held while the engine processes it (emu_capture_rx_begin) */
	bool holding;
	size_t held_len;
	char held_note[CAPTURE_NOTE_BYTES];
	uint8_t held[CAPTURE_FRAME_BYTES];
};

/* FILE with number n before its extension (.pcap or .pcapng), or after it. */
static char *capture_name(const char *path, uint64_t n)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	char *name;
	int len;

	if (!dot || (slash && dot < slash) || (strcmp(dot, ".pcap") && strcmp(dot, ".pcapng")))
		dot = path + strlen(path);
	len = asprintf(&name, "%.*s.%llu%s", (int)(dot - path), path, (unsigned long long)n, dot);
	return len < 0 ? NULL : name;
}

/* A stream for the current file, header included: 0 or a negative errno. */
static int capture_stream_open(struct emu_capture *c, const char *name, char *err, size_t errlen)
{
	FILE *f = emu_afile_stream(c->af);

	if (!f) { /* the file stays open until emu_afile_close */
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -ENOMEM;
	}
	return common_pcap_open_write_stream(&c->w, f, name, c->snaplen, err, errlen);
}

/* FILE, or the current number of a --pcap-size series: a new string. */
static char *capture_cur_name(const struct emu_capture *c)
{
	return c->size ? capture_name(c->path, c->files ? c->seq % c->files : c->seq)
		       : strdup(c->path);
}

int emu_capture_open(struct emu_dev *dev, const char *path, uint32_t snaplen, uint64_t size_bytes,
		     uint32_t files, uint64_t buffer_bytes)
{
	struct emu_capture *c = calloc(1, sizeof(*c));
	char err[256];

	if (c) {
		c->path = path;
		c->size = size_bytes;
		c->cur = capture_cur_name(c);
	}
	if (!c || !c->cur) {
		fprintf(stderr, "uroced: --pcap: out of memory\n");
		free(c);
		return -1;
	}
	c->snaplen = snaplen;
	c->files = files;
	/* The first file here and now, so that a start fails when it cannot
	 * be written, and removes it when it is new. */
	c->af = emu_afile_open(c->cur, "capture", buffer_bytes ? buffer_bytes : EMU_CAPTURE_BUFFER,
			       &dev->dcnt[EMU_DCNT_PCAP_ERRORS], &c->created, err, sizeof(err));
	if (!c->af) {
		fprintf(stderr, "uroced: --pcap %s\n", err);
		free(c->cur);
		free(c);
		return -1;
	}
	dev->capture = c;
	if (capture_stream_open(c, c->cur, err, sizeof(err))) {
		fprintf(stderr, "uroced: --pcap %s\n", err);
		emu_capture_discard(dev);
		return -1;
	}
	return 0;
}

/* The current file is full: its stream ends, and the next file's begins. */
static void capture_rotate(struct emu_dev *dev, struct emu_capture *c)
{
	char err[256] = "out of memory";
	char *name;

	if (common_pcap_close_write(&c->w)) /* queues the file's close */
		dev->dcnt[EMU_DCNT_PCAP_ERRORS]++;
	c->seq++;
	name = capture_cur_name(c);
	if (!name || emu_afile_next(c->af, name) ||
	    capture_stream_open(c, name, err, sizeof(err))) {
		emu_warn("capture: %s; capture stopped", err);
		dev->dcnt[EMU_DCNT_PCAP_ERRORS]++;
		free(name);
		return;
	}
	free(c->cur);
	c->cur = name;
	dev->dcnt[EMU_DCNT_PCAP_FILES]++;
}

void emu_capture_start(struct emu_dev *dev)
{
	if (dev->capture)
		emu_afile_start(dev->capture->af, dev->loop);
}

/* The frame of packet pkt (BTH..ICRC) of route rt, as on the wire: its length or -1. */
static int capture_frame(const struct xport_route *rt, const void *pkt, size_t len, uint8_t *frame)
{
	struct wire_frame_params p;
	int n;

	emu_route_frame_params(rt, &p);
	n = wire_frame_build_eth(frame, CAPTURE_FRAME_BYTES, &p, pkt, len);
	if (n > 0 && p.ip_version == 6) {
		/* IPv6 UDP always carries a checksum (the kernel computed it
		 * for the real packet); IPv4 RoCEv2 sends 0 (net.c). */
		uint8_t *udp = frame + CAPTURE_ETH_BYTES + CAPTURE_IPV6_BYTES;
		size_t ulen = (size_t)n - CAPTURE_ETH_BYTES - CAPTURE_IPV6_BYTES;
		uint16_t sum = wire_udp6_csum(p.src, p.dst, udp, ulen);

		udp[6] = (uint8_t)(sum >> 8);
		udp[7] = (uint8_t)sum;
	}
	return n;
}

/* Append "; " (unless at the start) and the formatted text to note (size bytes). */
static void note_add(char *note, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_add(char *note, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(note, size);
	va_list ap;

	if (used + 3 >= size)
		return;
	if (used) {
		memcpy(note + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(note + used, size - used, fmt, ap);
	va_end(ap);
}

static void capture_write(struct emu_dev *dev, uint8_t *frame, int n, const char *note)
{
	struct emu_capture *c = dev->capture;
	char text[CAPTURE_NOTE_BYTES + 192];

	if (!c->w.ng && !c->w.dumper)
		return; /* a ring whose next stream could not be made */
	if (emu_afile_full(c->af)) {
		/* The file is not keeping up: the RNIC does not wait for it. */
		c->lost++;
		dev->dcnt[EMU_DCNT_PCAP_DROPPED]++;
		return;
	}
	/* A file that reached its size with an earlier frame: the next file
	 * begins with this one (as tcpdump -C), so the last file of a run is
	 * never one with no frame in it. */
	if (c->size && c->w.bytes >= c->size) {
		capture_rotate(dev, c);
		if (!c->w.ng && !c->w.dumper)
			return;
	}
	text[0] = 0;
	if (note && *note)
		snprintf(text, sizeof(text), "%s", note);
	if (c->lost && c->w.ng)
		note_add(text, sizeof(text),
			 "%" PRIu64 " frames before this one not captured (capture buffer full)",
			 c->lost);
	c->lost = 0;
	if (n > 0 && (size_t)n > c->w.snaplen && c->w.ng) {
		/* Cut: say what a reader can no longer check. */
		struct wire_decoded d;

		wire_decode_eth(frame, (size_t)n, &d);
		note_add(text, sizeof(text), "cut at %u of %d bytes; ICRC %s", c->w.snaplen, n,
			 d.icrc == WIRE_ICRC_OK	   ? "good"
			 : d.icrc == WIRE_ICRC_BAD ? "BAD"
						   : "not checked");
	}
	if (n < 0 ||
	    common_pcap_write_frame_comment(&c->w, NULL, frame, (size_t)n, text[0] ? text : NULL)) {
		dev->dcnt[EMU_DCNT_PCAP_ERRORS]++;
		return;
	}
	dev->dcnt[EMU_DCNT_PCAP_FRAMES]++;
	emu_afile_dirty(c->af);
}

/* Write the held received frame, with what the engine said about it. */
static void capture_release_held(struct emu_dev *dev)
{
	struct emu_capture *c = dev->capture;
	unsigned v = xport_rx_verdict(&dev->x);

	int32_t id = xport_rx_solved_id(&dev->x);

	c->holding = false;
	if (id >= 0 && c->held_len >= CAPTURE_ETH_BYTES + 20 && c->held[CAPTURE_ETH_BYTES] >> 4 == 4) {
		/* The socket did not show the IPv4 header; the ICRC check found
		 * the ID the sender used: the frame gets it (and its checksum). */
		uint8_t *ip = c->held + CAPTURE_ETH_BYTES;
		uint16_t sum;

		ip[4] = (uint8_t)(id >> 8);
		ip[5] = (uint8_t)id;
		ip[10] = ip[11] = 0;
		sum = wire_inet_csum(ip, (size_t)(ip[0] & 0xf) * 4);
		ip[10] = (uint8_t)(sum >> 8);
		ip[11] = (uint8_t)sum;
		note_add(c->held_note, sizeof(c->held_note), "IPv4 ID 0x%04x solved from the ICRC",
			 (unsigned)id);
	}
	if (v < XPORT_DROP_COUNT)
		note_add(c->held_note, sizeof(c->held_note), "dropped: %s", xport_drop_name(v));
	capture_write(dev, c->held, (int)c->held_len, c->held_note);
}

/* The WR a request packet belongs to, and why it is sent again. */
static void note_tx(const struct emu_dev *dev, const void *pkt, size_t len, char *note, size_t size)
{
	const struct xport_tx_info *t = xport_tx_info(&dev->x);

	if (!t->request || len < WIRE_BTH_BYTES ||
	    wire_bth_get_psn((const struct wire_bth *)pkt) != t->psn)
		return;
	note_add(note, size, "WR wr_id=0x%" PRIx64 " %s len=%u sge=%u", t->wr_id,
		 xport_wr_opcode_name(t->wr_opcode), t->length, t->num_sge);
	if (t->retx_why)
		note_add(note, size, "retransmission (%s)", xport_cnt_name(t->retx_why));
}

void emu_capture_packet(struct emu_dev *dev, const struct xport_route *rt, const void *pkt,
			size_t len)
{
	struct emu_capture *c = dev->capture;
	uint8_t frame[CAPTURE_FRAME_BYTES];
	char note[CAPTURE_NOTE_BYTES] = "";

	/* A packet the one being received provoked comes after it. */
	if (c->holding)
		capture_release_held(dev);
	/* The note is this frame's alone. */
	if (c->has_note)
		snprintf(note, sizeof(note), "%s", c->note);
	c->has_note = false;
	note_tx(dev, pkt, len, note, sizeof(note));
	capture_write(dev, frame, capture_frame(rt, pkt, len, frame), note);
}

void emu_capture_rx_begin(struct emu_dev *dev, const struct xport_route *rt, const void *pkt,
			  size_t len)
{
	struct emu_capture *c = dev->capture;
	int n;

	if (c->holding)
		capture_release_held(dev);
	c->held_note[0] = 0;
	if (c->has_note)
		snprintf(c->held_note, sizeof(c->held_note), "%s", c->note);
	c->has_note = false;
	n = capture_frame(rt, pkt, len, c->held);
	if (n < 0) {
		dev->dcnt[EMU_DCNT_PCAP_ERRORS]++;
		return;
	}
	c->held_len = (size_t)n;
	c->holding = true;
}

void emu_capture_cqe(struct emu_dev *dev, bool recv, const struct uroce_cqe *cqe)
{
	struct emu_capture *c = dev->capture;

	if (!c->holding)
		return;
	note_add(c->held_note, sizeof(c->held_note), "completes %s WR wr_id=0x%" PRIx64 ": %s",
		 recv ? "receive" : "send", cqe->wr_id, xport_wc_status_name(cqe->status));
}

void emu_capture_rx_end(struct emu_dev *dev)
{
	if (dev->capture->holding)
		capture_release_held(dev);
}

void emu_capture_note(struct emu_dev *dev, const char *note)
{
	struct emu_capture *c = dev->capture;

	if (!c)
		return;
	c->has_note = note != NULL;
	if (note)
		snprintf(c->note, sizeof(c->note), "%s", note);
}

void emu_capture_stopping(struct emu_dev *dev)
{
	if (dev->capture)
		emu_afile_stopping(dev->capture->af);
}

void emu_capture_close(struct emu_dev *dev)
{
	struct emu_capture *c = dev->capture;

	if (!c)
		return;
	if ((c->w.ng || c->w.dumper) && common_pcap_close_write(&c->w))
		dev->dcnt[EMU_DCNT_PCAP_ERRORS]++;
	emu_afile_close(c->af); /* after the loop: its flush timer */
	dev->capture = NULL;
	free(c->cur);
	free(c);
}

void emu_capture_discard(struct emu_dev *dev)
{
	struct emu_capture *c = dev->capture;
	/* the file written (with --pcap-size, the first numbered one) */
	char *path = c && c->created ? strdup(c->cur) : NULL;

	emu_capture_close(dev);
	/* A start that failed leaves no capture behind; a file that was
	 * there before is not ours to remove (it is empty now). */
	if (path && unlink(path) && errno != ENOENT)
		emu_warn("capture: cannot remove %s: %s", path, strerror(errno));
	free(path);
}
