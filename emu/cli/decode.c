/* SPDX-License-Identifier: MIT */
/*
 * `uroce decode [--json] FILE...`: read pcap/pcapng captures, print one line
 * (or one JSON object) per RoCEv2 packet - UDP destination port 4791,
 * whatever the source port - and a final summary:
 *   roce packets: N, icrc ok: N, icrc bad: N, malformed: N[, cut: N]
 * A frame that the capture's snap length cut (uroced --pcap-snaplen,
 * tcpdump -s) is decoded as far as it goes and counted as cut: its ICRC
 * cannot be checked (uroced's pcapng comment says what it was). A frame
 * holding one of uroced's UDP GSO datagrams (wire/gso.h; loopback and veth
 * captures show them whole) is decoded as the packets it stands for.
 * Exit 0 when every RoCEv2 packet is well formed with a valid ICRC (or cut), 1
 * otherwise, 2 for bad usage or a file that cannot be read. All files are
 * opened before any output, so an unreadable one fails fast.
 */
/* libpcap's headers use the BSD u_int/u_char types. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_ctl.h"
#include "pcapfile.h"

struct cli_decode_totals {
	uint64_t roce, icrc_ok, icrc_bad, malformed, cut;
};

static void cli_decode_usage(FILE *out)
{
	fprintf(out,
		"usage: uroce decode [--json] FILE...\n"
		"  Decode the RoCEv2 packets (UDP destination port 4791) in pcap or pcapng\n"
		"  captures (Ethernet, Linux cooked SLL/SLL2, raw IP, loopback), one line per\n"
		"  packet, checking every ICRC, then a summary line. Exit 0 when every packet\n"
		"  is well formed with a valid ICRC, 1 otherwise, 2 for usage or file errors.\n"
		"  --json   one JSON object per packet instead of the text line\n");
}

static void cli_decode_print(FILE *out, int json, int many, const char *path, uint64_t frame,
			     const struct wire_decoded *d, size_t cut_at, size_t wire_len,
			     const struct common_pcap_reader *r)
{
	char line[2048];

	if (json) {
		wire_describe_json(line, sizeof(line), d);
		fputs("{", out);
		if (many) {
			fputs("\"file\":", out);
			cli_common_json_string(out, path);
			fputs(",", out);
		}
		/* line starts with '{': splice our keys in front of the describer's. */
		fprintf(out, "\"frame\":%" PRIu64 ",", frame);
		if (r->gso_count)
			fprintf(out, "\"gso_packet\":%u,\"gso_packets\":%u,", r->gso_seg,
				r->gso_count);
		if (cut_at)
			fprintf(out, "\"cut_at\":%zu,\"frame_len\":%zu,", cut_at, wire_len);
		fprintf(out, "%s\n", line + 1);
	} else {
		wire_describe(line, sizeof(line), d);
		if (many)
			fprintf(out, "%s:", path);
		if (cut_at)
			fprintf(out, "%" PRIu64 " %s (cut at %zu of %zu bytes)\n", frame, line,
				cut_at, wire_len);
		else if (r->gso_count)
			fprintf(out, "%" PRIu64 " %s (GSO datagram: packet %u of %u)\n", frame,
				line, r->gso_seg, r->gso_count);
		else
			fprintf(out, "%" PRIu64 " %s\n", frame, line);
	}
}

/* Decode one opened file; returns 0, or -EIO when the file turned out damaged. */
static int cli_decode_file(struct common_pcap_reader *r, const char *path, int json, int many,
			   struct cli_decode_totals *t)
{
	char err[512];
	struct wire_decoded d;
	size_t wire_len;
	int ret;

	while ((ret = common_pcap_next(r, &d, &wire_len, err, sizeof(err))) == 1) {
		if (d.reason == WIRE_R_NOT_ROCE)
			continue;
		t->roce++;
		if (d.reason != WIRE_R_OK)
			t->malformed++;
		else if (r->cut_at)
			t->cut++;
		else if (d.icrc == WIRE_ICRC_OK)
			t->icrc_ok++;
		else
			t->icrc_bad++;
		cli_decode_print(stdout, json, many, path, r->frames, &d, r->cut_at, wire_len, r);
	}
	if (ret < 0) {
		fflush(stdout);
		fprintf(stderr, "uroce decode: %s: %s\n", path, err);
		return -EIO;
	}
	return 0;
}

int cli_decode(int argc, char **argv)
{
	struct cli_decode_totals t = {0};
	struct common_pcap_reader *readers;
	int json = 0, first = 1, nfiles, status = CLI_EXIT_OK;

	for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
		if (!strcmp(argv[first], "--json")) {
			json = 1;
		} else if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
			cli_decode_usage(stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[first], "--")) {
			first++;
			break;
		} else {
			fprintf(stderr, "uroce decode: unknown option '%s'\n", argv[first]);
			cli_decode_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	nfiles = argc - first;
	if (nfiles < 1) {
		fprintf(stderr, "uroce decode: no capture file given\n");
		cli_decode_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	readers = calloc((size_t)nfiles, sizeof(*readers));
	if (!readers) {
		fprintf(stderr, "uroce decode: out of memory\n");
		return CLI_EXIT_USAGE;
	}
	for (int i = 0; i < nfiles; i++) {
		char err[1024];

		if (common_pcap_open_read(&readers[i], argv[first + i], err, sizeof(err)) < 0) {
			fprintf(stderr, "uroce decode: %s\n", err);
			for (int j = 0; j < i; j++)
				common_pcap_close_read(&readers[j]);
			free(readers);
			return CLI_EXIT_USAGE;
		}
	}
	for (int i = 0; i < nfiles; i++) {
		if (cli_decode_file(&readers[i], argv[first + i], json, nfiles > 1, &t) < 0)
			status = CLI_EXIT_USAGE;
		common_pcap_close_read(&readers[i]);
	}
	free(readers);
	printf("roce packets: %" PRIu64 ", icrc ok: %" PRIu64 ", icrc bad: %" PRIu64
	       ", malformed: %" PRIu64,
	       t.roce, t.icrc_ok, t.icrc_bad, t.malformed);
	if (t.cut)
		printf(", cut: %" PRIu64, t.cut);
	printf("\n");
	if (fflush(stdout) != 0) {
		fprintf(stderr, "uroce decode: cannot write output: %s\n", strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (status == CLI_EXIT_OK && (t.icrc_bad || t.malformed))
		status = CLI_EXIT_FOUND;
	return status;
}
