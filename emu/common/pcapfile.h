/* SPDX-License-Identifier: MIT */
/*
 * Capture files through libpcap, shared by the CLI and the daemon.
 * Reading: pcap and pcapng files with Ethernet (incl. tshark's zero-MAC
 * loopback captures and VLAN tags), Linux cooked (SLL, SLL2), raw IP, IPv4,
 * IPv6 and BSD loopback link types, each frame decoded with wire_decode_*().
 * Writing: Ethernet + IP + UDP + IB frames, exactly as on the wire, so that
 * Wireshark decodes them as RoCEv2; flushed on request and on close. A file
 * named *.pcapng is written as pcapng, where a frame may carry a comment
 * (Wireshark's frame.comment); any other name as pcap.
 */
#ifndef UROCE_COMMON_PCAP_H
#define UROCE_COMMON_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <wire/wire.h>

struct pcap;
struct pcap_dumper;

struct common_pcap_reader {
	struct pcap *pcap;
	int linktype;	 /* DLT_* of the file */
	uint64_t frames; /* frames read so far; the last one read is frame number `frames` */
	/* The last frame read was cut by the file's snap length: only its first
	 * cut_at bytes are in the file (0: it is whole). */
	size_t cut_at;
	uint8_t *pad; /* a cut frame, completed with zeros, for decoding */
	/* The last frame read was a UDP GSO datagram of uroced's
	 * (wire/gso.h), returned as its gso_count packets one per call, as
	 * the kernel cuts it: this is packet gso_seg (1-based) of them. */
	unsigned gso_seg, gso_count;
	size_t gso_seg_bytes; /* the size of each of its packets but the last */
	uint8_t *gso;	  /* that frame */
	size_t gso_len;	  /* its length */
	uint8_t *gso_out; /* the packet built from it */
	struct wire_frame gso_frame; /* its decoded headers */
};

/*
 * Open a pcap or pcapng file for reading. Returns 0, or -errno-like failure
 * (-ENOENT, -EACCES, -EINVAL for an unreadable or unsupported file) with a
 * human-readable message in err (errlen bytes, always NUL-terminated).
 */
int common_pcap_open_read(struct common_pcap_reader *r, const char *path, char *err, size_t errlen);

/*
 * Read the next frame and decode it. Returns 1 with *d filled (d->reason is
 * WIRE_R_NOT_ROCE for frames that are not RoCEv2), 0 at end of file, or -EIO
 * with a message in err when the file is damaged. *wire_len (may be NULL)
 * receives the original frame length (larger than the captured length when
 * the capture was cut at a snap length).
 * A frame cut by the snap length (r->cut_at set) is decoded as far as it
 * goes: its headers are checked as whole ones are, the bytes the file lacks
 * count as zeros, and its ICRC is WIRE_ICRC_UNCHECKED (the file cannot tell);
 * when the cut falls inside its IB headers, d->reason is
 * WIRE_R_SHORT_FOR_OPCODE.
 * A whole frame holding one of uroced's UDP GSO datagrams (wire/gso.h: seen
 * this way on loopback and veth, where nothing cuts it) is returned as the
 * packets it stands for, one per call, each with the IPv4 ID, lengths and
 * header checksum the cut gives it (r->gso_seg of r->gso_count; r->frames
 * stays the frame's number).
 */
int common_pcap_next(struct common_pcap_reader *r, struct wire_decoded *d, size_t *wire_len,
		     char *err, size_t errlen);

/* Decode one frame of the given link type (DLT_* value). */
enum wire_reason common_pcap_decode(int linktype, const uint8_t *data, size_t len,
				    struct wire_decoded *d);

/* 1 if the link type is one common_pcap_decode() understands. */
int common_pcap_linktype_supported(int linktype);

void common_pcap_close_read(struct common_pcap_reader *r);

struct common_pcap_writer {
	struct pcap *dead;
	struct pcap_dumper *dumper;
	FILE *ng; /* pcapng: written here, not by libpcap */
	uint64_t frames;
	uint64_t bytes;	  /* of the file so far, headers included */
	uint32_t snaplen; /* frames are cut to this many bytes */
};

/*
 * Create (truncate) a capture file of Ethernet frames, snap length 65535:
 * pcapng when path ends in ".pcapng", else pcap.
 * Returns 0 or a negative errno with a message in err.
 */
int common_pcap_open_write(struct common_pcap_writer *w, const char *path, char *err,
			   size_t errlen);
/* The same with a snap length (0: 65535; else 64..65535): a longer frame is
 * written cut to snaplen bytes, with its original length, as tcpdump -s does. */
int common_pcap_open_write_snap(struct common_pcap_writer *w, const char *path, uint32_t snaplen,
				char *err, size_t errlen);

/* The same on a stream f already open for path (whose name decides between
 * pcap and pcapng, as above): the writer takes f over, and closes it when it
 * fails. The file header is the stream's first bytes. */
int common_pcap_open_write_stream(struct common_pcap_writer *w, FILE *f, const char *path,
				  uint32_t snaplen, char *err, size_t errlen);

/* Append one complete frame with timestamp ts (NULL: now). Returns 0 or -EIO. */
int common_pcap_write_frame(struct common_pcap_writer *w, const struct timeval *ts,
			    const uint8_t *frame, size_t len);
/* The same with a comment (NULL: none; at most 1024 bytes are kept), which
 * only a pcapng file can hold: a pcap file gets the frame alone. */
int common_pcap_write_frame_comment(struct common_pcap_writer *w, const struct timeval *ts,
				    const uint8_t *frame, size_t len, const char *comment);

/*
 * Frame an IB packet (BTH..ICRC, ib_len bytes) with Ethernet + IP + UDP per p
 * (wire_frame_build_eth(); p->fill_icrc decides whether the ICRC is computed
 * or copied) and append it. Returns 0, -EINVAL for bad params or -EIO.
 */
int common_pcap_write_ib(struct common_pcap_writer *w, const struct timeval *ts,
			 const struct wire_frame_params *p, const uint8_t *ib, size_t ib_len);

/* Push buffered frames to the file. Returns 0 or -EIO. */
int common_pcap_flush(struct common_pcap_writer *w);

/* Flush and close. Returns 0, or -EIO when the final flush or close failed. */
int common_pcap_close_write(struct common_pcap_writer *w);

#endif /* UROCE_COMMON_PCAP_H */
