/* SPDX-License-Identifier: MIT */
/*
 * `uroce ladder FILE [--svg OUT.svg] [--between A B]`: draw a capture as a
 * sequence (ladder) diagram between two endpoints, one row per RoCEv2
 * packet: frame number, an arrow in the packet's direction, its opcode, QPN,
 * PSN, AckReq, the AETH syndrome words and MSN, the CM message of a MAD and
 * the payload length, and marks for a retransmission (an RC/XRC request PSN
 * seen again from the same side to the same QP), a bad ICRC, a malformed
 * packet and a frame comment (pcapng; uroce's fault injection and capture
 * annotations write them). The endpoints are the two IP addresses with the
 * most RoCEv2 packets (or the two --between names); packets between other
 * addresses are counted and said so, not drawn. The left column is the side
 * that sent the first request. Text goes to stdout; --svg also writes the
 * diagram as SVG. Decoding and the words come from the wire library's
 * decoder and describer; this file only lays them out.
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pcapfile.h"
#include "pcapng_comments.h"

#define LADDER_ADDR_BYTES 17 /* IP version + 16 address bytes */
#define LADDER_LABEL_BYTES 256
#define LADDER_MIN_WIDTH 44
#define LADDER_MAX_WIDTH 110
/* SVG geometry, in pixels. */
#define SVG_LEFT_X 150
#define SVG_TOP_Y 70
#define SVG_ROW_H 30
#define SVG_CHAR_W 7.3
#define SVG_MIN_SPAN 420

struct ladder_addr {
	uint8_t key[LADDER_ADDR_BYTES];
	char text[INET6_ADDRSTRLEN];
	uint64_t packets;
};

struct ladder_row {
	uint64_t frame;
	unsigned src, dst; /* indexes into the address list */
	int retx, bad_icrc, malformed;
	char label[LADDER_LABEL_BYTES];
	char *line; /* the describer's full line (SVG tooltip) */
	int req;    /* a request opcode (IBA 9.2: sent by the requester) */
	/* for the retransmission check */
	int reliable_req;
	uint32_t destqp, psn;
};

struct ladder {
	struct ladder_addr *addr;
	size_t naddr;
	struct ladder_row *row;
	size_t nrow;
	struct cli_comments comments;
};

static void ladder_usage(FILE *out)
{
	fprintf(out, "usage: uroce ladder FILE [--svg OUT.svg] [--between ADDR ADDR]\n"
		     "  Draw the RoCEv2 packets of a pcap/pcapng capture as a ladder diagram\n"
		     "  between the two IP addresses with the most packets (or the two given\n"
		     "  with --between): one row per packet with opcode, QP, PSN, AckReq, AETH\n"
		     "  and length; marks: RETX (a request PSN seen again), BAD-ICRC, MALFORMED,\n"
		     "  and '#' followed by the frame's pcapng comment. Text on stdout;\n"
		     "  --svg OUT.svg also writes the diagram as SVG.\n");
}

static unsigned ladder_addr_index(struct ladder *l, unsigned version, const uint8_t *a, int *err)
{
	uint8_t key[LADDER_ADDR_BYTES] = {(uint8_t)version};
	struct ladder_addr *n;

	memcpy(key + 1, a, version == 4 ? 4 : 16);
	for (size_t i = 0; i < l->naddr; i++)
		if (!memcmp(l->addr[i].key, key, sizeof(key)))
			return (unsigned)i;
	n = realloc(l->addr, (l->naddr + 1) * sizeof(*n));
	if (!n) {
		*err = -ENOMEM;
		return 0;
	}
	l->addr = n;
	n += l->naddr;
	memset(n, 0, sizeof(*n));
	memcpy(n->key, key, sizeof(key));
	inet_ntop(version == 4 ? AF_INET : AF_INET6, a, n->text, sizeof(n->text));
	return (unsigned)l->naddr++;
}

/* Append the text from start to end (a span of the describer's line) to the label. */
static void ladder_words(char *label, size_t size, const char *start, const char *end)
{
	size_t used = strlen(label);

	if (start && end > start)
		snprintf(label + used, size - used, " %.*s", (int)(end - start), start);
}

/*
 * The AETH and CM words of the describer's line: "AETH syndrome=0x1f ACK
 * credits=unlimited msn=3" gives "ACK credits=unlimited msn=3", "CM
 * ConnectRequest tid=..." gives "CM ConnectRequest".
 */
static void ladder_describer_words(char *label, size_t size, const char *line)
{
	const char *s = strstr(line, " AETH syndrome="), *e;

	if (s) {
		s += strlen(" AETH syndrome=");
		s += strcspn(s, " ");
		s += *s == ' ';
		e = strstr(s, " msn=");
		if (e)
			ladder_words(label, size, s, e + 1 + strcspn(e + 1, " "));
	}
	s = strstr(line, " CM ");
	if (s) {
		s++;
		ladder_words(label, size, s, s + 3 + strcspn(s + 3, " "));
	}
}

/* The row's words, from the decoded packet and the describer's line. */
static void ladder_label(struct ladder_row *r, const struct wire_decoded *d, const char *line)
{
	const struct wire_pkt *p = &d->pkt;
	const struct wire_bth *bth = (const struct wire_bth *)p->ib;
	size_t n;

	if (d->reason != WIRE_R_OK && (!p->ib || p->len < sizeof(*bth))) {
		snprintf(r->label, sizeof(r->label), "malformed: %s", wire_reason_name(d->reason));
		return;
	}
	n = (size_t)snprintf(r->label, sizeof(r->label), "%s QP=0x%06" PRIx32 " PSN=%" PRIu32 "%s",
			     p->info ? p->info->info_name : "Unknown", wire_bth_get_destqp(bth),
			     wire_bth_get_psn(bth), wire_bth_get_ackreq(bth) ? " A" : "");
	if (d->reason != WIRE_R_OK) {
		snprintf(r->label + n, sizeof(r->label) - n, " malformed: %s",
			 wire_reason_name(d->reason));
		return;
	}
	ladder_describer_words(r->label, sizeof(r->label), line);
	if (p->info && (p->info->mask & WIRE_PAYLOAD_MASK)) {
		n = strlen(r->label);
		snprintf(r->label + n, sizeof(r->label) - n, " len=%zu", p->payload_len);
	}
}

/* Read every RoCEv2 packet of the opened capture into rows. 0 or -errno. */
static int ladder_read(struct ladder *l, struct common_pcap_reader *rd, char *err, size_t errlen)
{
	struct wire_decoded d;
	char line[2048];
	int ret, e = 0;

	while ((ret = common_pcap_next(rd, &d, NULL, err, errlen)) == 1) {
		struct ladder_row *r, *nr;
		const struct wire_bth *bth = (const struct wire_bth *)d.pkt.ib;
		enum wire_transport t;

		if (d.reason == WIRE_R_NOT_ROCE || !d.frame.ip_version)
			continue;
		nr = realloc(l->row, (l->nrow + 1) * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		l->row = nr;
		r = &nr[l->nrow];
		memset(r, 0, sizeof(*r));
		r->frame = rd->frames;
		r->src = ladder_addr_index(l, d.frame.ip_version, d.frame.src, &e);
		r->dst = ladder_addr_index(l, d.frame.ip_version, d.frame.dst, &e);
		if (e)
			return e;
		l->nrow++;
		l->addr[r->src].packets++;
		if (r->dst != r->src)
			l->addr[r->dst].packets++;
		wire_describe(line, sizeof(line), &d);
		r->line = strdup(line);
		if (!r->line)
			return -ENOMEM;
		r->malformed = d.reason != WIRE_R_OK;
		r->bad_icrc = d.icrc == WIRE_ICRC_BAD;
		ladder_label(r, &d, line);
		if (r->malformed || !d.pkt.info)
			continue;
		t = wire_opcode_transport(d.pkt.opcode);
		r->req = !!(d.pkt.info->mask & WIRE_REQ_MASK);
		/* Only reliable transports retransmit (IBA 9.7.7); a UD/UC PSN repeat is not one.
		 */
		r->reliable_req = r->req && (t == WIRE_TRANSPORT_RC || t == WIRE_TRANSPORT_XRC);
		r->destqp = wire_bth_get_destqp(bth);
		r->psn = wire_bth_get_psn(bth);
	}
	return ret < 0 ? -EIO : 0;
}

static int ladder_in_pair(const struct ladder_row *r, unsigned a, unsigned b)
{
	return (r->src == a && r->dst == b) || (r->src == b && r->dst == a);
}

/*
 * Mark retransmissions: a reliable request whose (source, DestQP, PSN) an
 * earlier drawn request had. A hash set of the keys seen, open addressing.
 */
static int ladder_mark_retx(struct ladder *l, unsigned a, unsigned b)
{
	size_t cap = 16, mask;
	uint64_t *set;

	while (cap < 2 * l->nrow + 2)
		cap <<= 1;
	mask = cap - 1;
	set = calloc(cap, sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < l->nrow; i++) {
		struct ladder_row *r = &l->row[i];
		/* +1 keeps 0 free as the empty slot. */
		uint64_t key =
		    ((uint64_t)(r->src == a) << 48 | (uint64_t)r->destqp << 24 | r->psn) + 1;
		size_t h;

		if (!r->reliable_req || !ladder_in_pair(r, a, b))
			continue;
		for (h = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & mask;
		     set[h] && set[h] != key; h = (h + 1) & mask)
			;
		if (set[h])
			r->retx = 1;
		else
			set[h] = key;
	}
	free(set);
	return 0;
}

static void ladder_marks(const struct ladder_row *r, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", r->retx ? " RETX" : "", r->bad_icrc ? " BAD-ICRC" : "",
		 r->malformed ? " MALFORMED" : "");
}

static void ladder_repeat(FILE *out, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(c, out);
}

static void ladder_text(FILE *out, const struct ladder *l, unsigned left, unsigned right)
{
	size_t width = LADDER_MIN_WIDTH;
	const char *ltext = l->addr[left].text, *rtext = l->addr[right].text;

	for (size_t i = 0; i < l->nrow; i++)
		if (ladder_in_pair(&l->row[i], left, right) && strlen(l->row[i].label) + 8 > width)
			width = strlen(l->row[i].label) + 8;
	if (width > LADDER_MAX_WIDTH)
		width = LADDER_MAX_WIDTH;
	/* Header: each address over its lifeline ('|' at column 8 and 8 + width + 1). */
	fprintf(out, "%7s %s", "frame", ltext);
	if (strlen(ltext) + strlen(rtext) < width + 2)
		ladder_repeat(out, ' ', width + 2 - strlen(ltext) - strlen(rtext));
	fprintf(out, " %s\n", rtext);
	for (size_t i = 0; i < l->nrow; i++) {
		const struct ladder_row *r = &l->row[i];
		const char *note = cli_comments_get(&l->comments, r->frame);
		size_t lab = strlen(r->label), fill;
		char marks[64];

		if (!ladder_in_pair(r, left, right))
			continue;
		if (lab + 6 > width)
			lab = width - 6;
		fill = width - 6 - lab;
		fprintf(out, "%7" PRIu64 " |", r->frame);
		if (r->src == left) {
			fprintf(out, "-- %.*s ", (int)lab, r->label);
			ladder_repeat(out, '-', fill);
			fputs(">|", out);
		} else {
			fputs("<", out);
			ladder_repeat(out, '-', fill);
			fprintf(out, " %.*s --|", (int)lab, r->label);
		}
		ladder_marks(r, marks, sizeof(marks));
		fputs(marks, out);
		if (note)
			fprintf(out, " # %s", note);
		fputc('\n', out);
	}
}

static void svg_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			/* XML 1.0 allows no control characters other than tab and newlines. */
			fputc((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' ? ' ' : *s, out);
		}
	}
}

static int ladder_svg(const char *path, const char *title, const struct ladder *l, unsigned left,
		      unsigned right, size_t rows)
{
	size_t maxlab = 0, maxnote = 0, k = 0;
	double span, rx, width, height;
	FILE *out = fopen(path, "w");

	if (!out)
		return -errno;
	for (size_t i = 0; i < l->nrow; i++) {
		const char *note = cli_comments_get(&l->comments, l->row[i].frame);

		if (!ladder_in_pair(&l->row[i], left, right))
			continue;
		if (strlen(l->row[i].label) > maxlab)
			maxlab = strlen(l->row[i].label);
		if (note && strlen(note) > maxnote)
			maxnote = strlen(note);
	}
	span = maxlab * SVG_CHAR_W + 60;
	if (span < SVG_MIN_SPAN)
		span = SVG_MIN_SPAN;
	rx = SVG_LEFT_X + span;
	width = rx + 40 + (maxnote + 24) * SVG_CHAR_W;
	height = SVG_TOP_Y + (double)(rows + 1) * SVG_ROW_H;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"monospace\" font-size=\"12\">\n"
		"<title>",
		width, height, width, height);
	svg_escaped(out, title);
	fprintf(
	    out,
	    "</title>\n<defs><marker id=\"head\" markerWidth=\"10\" markerHeight=\"8\" refX=\"10\" "
	    "refY=\"4\" orient=\"auto\"><path d=\"M0,0 L10,4 L0,8 z\"/></marker></defs>\n"
	    "<style>.pkt{stroke:#000;stroke-width:1.2;marker-end:url(#head)}"
	    ".retx{stroke:#c00}.bad{stroke:#c60;stroke-dasharray:4 3}"
	    ".mark{fill:#c00}.note{fill:#555;font-style:italic}</style>\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
	fprintf(out, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-weight=\"bold\">",
		SVG_LEFT_X);
	svg_escaped(out, l->addr[left].text);
	fprintf(out,
		"</text>\n<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" "
		"font-weight=\"bold\">",
		rx);
	svg_escaped(out, l->addr[right].text);
	fprintf(out, "</text>\n<text x=\"20\" y=\"48\">frame</text>\n");
	for (int side = 0; side < 2; side++) {
		double x = side ? rx : SVG_LEFT_X;

		fprintf(out,
			"<line class=\"lifeline\" x1=\"%.1f\" y1=\"34\" x2=\"%.1f\" "
			"y2=\"%.0f\" stroke=\"#888\"/>\n",
			x, x, height - 10);
	}
	for (size_t i = 0; i < l->nrow; i++) {
		const struct ladder_row *r = &l->row[i];
		const char *note = cli_comments_get(&l->comments, r->frame);
		double y = SVG_TOP_Y + (double)k++ * SVG_ROW_H + 12;
		int ltr = r->src == left;
		char marks[64];

		if (!ladder_in_pair(r, left, right))
			continue;
		ladder_marks(r, marks, sizeof(marks));
		fprintf(out, "<g class=\"row\" id=\"frame-%" PRIu64 "\"><title>", r->frame);
		svg_escaped(out, r->line);
		fprintf(out, "</title>\n<text x=\"20\" y=\"%.1f\">%" PRIu64 "</text>\n", y,
			r->frame);
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			(SVG_LEFT_X + rx) / 2, y - 4);
		svg_escaped(out, r->label);
		fprintf(out,
			"</text>\n<line class=\"pkt%s%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\"/>\n",
			r->retx ? " retx" : "", r->bad_icrc || r->malformed ? " bad" : "",
			ltr ? (double)SVG_LEFT_X : rx, y + 4, ltr ? rx : (double)SVG_LEFT_X, y + 4);
		if (marks[0] || note) {
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", rx + 12, y + 4);
			if (marks[0])
				fprintf(out, "<tspan class=\"mark\">%s</tspan>", marks + 1);
			if (note) {
				fputs("<tspan class=\"note\"> # ", out);
				svg_escaped(out, note);
				fputs("</tspan>", out);
			}
			fputs("</text>\n", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</svg>\n", out);
	if (ferror(out)) {
		fclose(out);
		return -EIO;
	}
	return fclose(out) ? -errno : 0;
}

/* The two endpoints: --between's names, or the two addresses with the most
 * packets (ties: the one seen first). 0, or -ENOENT when a name is not there. */
static int ladder_pick(const struct ladder *l, const char *want[2], unsigned pick[2])
{
	for (unsigned w = 0; w < 2; w++) {
		int found = 0;

		for (size_t i = 0; i < l->naddr; i++) {
			if (w == 1 && i == pick[0])
				continue;
			if (want[0] ? !strcmp(l->addr[i].text, want[w])
				    : !found || l->addr[i].packets > l->addr[pick[w]].packets) {
				if (!found || !want[0])
					pick[w] = (unsigned)i;
				found = 1;
			}
		}
		if (!found)
			return -ENOENT;
	}
	return 0;
}

static void ladder_free(struct ladder *l)
{
	for (size_t i = 0; i < l->nrow; i++)
		free(l->row[i].line);
	free(l->row);
	free(l->addr);
	cli_comments_free(&l->comments);
}

/* Left is the side that sent the first request between the two. */
static void ladder_orient(const struct ladder *l, unsigned pick[2])
{
	for (size_t i = 0; i < l->nrow; i++) {
		const struct ladder_row *r = &l->row[i];

		if (!r->req || !ladder_in_pair(r, pick[0], pick[1]))
			continue;
		if (r->src == pick[1]) {
			pick[1] = pick[0];
			pick[0] = r->src;
		}
		return;
	}
}

int cli_ladder(int argc, char **argv)
{
	struct ladder l = {0};
	struct common_pcap_reader rd;
	const char *file = NULL, *svg = NULL, *want[2] = {NULL, NULL};
	char err[1024], title[512];
	unsigned pick[2] = {0, 0};
	size_t rows = 0;
	int ret, status = CLI_EXIT_OK;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			ladder_usage(stdout);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[i], "--svg") && i + 1 < argc) {
			svg = argv[++i];
		} else if (!strcmp(argv[i], "--between") && i + 2 < argc) {
			want[0] = argv[++i];
			want[1] = argv[++i];
		} else if (argv[i][0] == '-' || file) {
			fprintf(stderr, "uroce ladder: unexpected argument '%s'\n", argv[i]);
			ladder_usage(stderr);
			return CLI_EXIT_USAGE;
		} else {
			file = argv[i];
		}
	}
	if (!file) {
		fprintf(stderr, "uroce ladder: no capture file given\n");
		ladder_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (common_pcap_open_read(&rd, file, err, sizeof(err)) < 0) {
		fprintf(stderr, "uroce ladder: %s\n", err);
		return CLI_EXIT_USAGE;
	}
	ret = ladder_read(&l, &rd, err, sizeof(err));
	common_pcap_close_read(&rd);
	if (!ret && cli_comments_read(file, &l.comments))
		snprintf(err, sizeof(err), "%s: cannot read the pcapng comments", file), ret = -EIO;
	if (ret) {
		fprintf(stderr, "uroce ladder: %s\n", ret == -ENOMEM ? "out of memory" : err);
		ladder_free(&l);
		return CLI_EXIT_USAGE;
	}
	if (l.naddr < 2 && !want[0]) {
		printf("uroce ladder: %s: %zu RoCEv2 packets, fewer than two endpoints: nothing to "
		       "draw\n",
		       file, l.nrow);
		ladder_free(&l);
		return CLI_EXIT_OK;
	}
	if (ladder_pick(&l, want, pick)) {
		fprintf(stderr, "uroce ladder: %s: no RoCEv2 packets from or to %s and %s\n", file,
			want[0], want[1]);
		ladder_free(&l);
		return CLI_EXIT_USAGE;
	}
	ladder_orient(&l, pick);
	if (ladder_mark_retx(&l, pick[0], pick[1])) {
		fprintf(stderr, "uroce ladder: out of memory\n");
		ladder_free(&l);
		return CLI_EXIT_USAGE;
	}
	for (size_t i = 0; i < l.nrow; i++)
		rows += ladder_in_pair(&l.row[i], pick[0], pick[1]);
	snprintf(title, sizeof(title), "%s: %s <-> %s, %zu RoCEv2 packets", file,
		 l.addr[pick[0]].text, l.addr[pick[1]].text, rows);
	printf("uroce ladder: %s\n", title);
	if (l.naddr > 2 || rows < l.nrow)
		printf("uroce ladder: %zu addresses in the capture; drawing the two %s; "
		       "%zu packets between other addresses not drawn (use --between)\n",
		       l.naddr, want[0] ? "given" : "with the most packets", l.nrow - rows);
	ladder_text(stdout, &l, pick[0], pick[1]);
	if (svg) {
		ret = ladder_svg(svg, title, &l, pick[0], pick[1], rows);
		if (ret) {
			fprintf(stderr, "uroce ladder: cannot write %s: %s\n", svg, strerror(-ret));
			status = CLI_EXIT_USAGE;
		}
	}
	ladder_free(&l);
	if (fflush(stdout)) {
		fprintf(stderr, "uroce ladder: cannot write output: %s\n", strerror(errno));
		return CLI_EXIT_USAGE;
	}
	return status;
}
