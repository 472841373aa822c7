/* SPDX-License-Identifier: MIT */
/*
 * Reading the frame comments of a pcapng file (pcapng_comments.h): a walk
 * over the blocks (pcapng spec, IETF draft-ietf-opsawg-pcapng: block type,
 * total length, body, total length again), honouring each section's byte
 * order, that counts packet blocks and collects the opt_comment options of
 * Enhanced and Packet Blocks. Packet data is skipped, not interpreted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapng_comments.h"

#define PCAPNG_SHB 0x0a0d0d0au
#define PCAPNG_BOM 0x1a2b3c4du
#define PCAPNG_PB 2u  /* obsolete Packet Block */
#define PCAPNG_SPB 3u /* Simple Packet Block: no options */
#define PCAPNG_EPB 6u
#define PCAPNG_OPT_END 0u
#define PCAPNG_OPT_COMMENT 1u
/* Fixed part of the body before the packet data: EPB 20 bytes, PB 20 bytes. */
#define PCAPNG_PKT_FIXED_BYTES 20u
#define PCAPNG_BLOCK_MAX_BYTES (64u << 20)

static uint32_t pcapng_u32(const uint8_t *p, int swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint16_t pcapng_u16(const uint8_t *p, int swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

/* Append s (len bytes) to *dst, "; " between comments. 0 or -ENOMEM. */
static int comment_append(char **dst, const uint8_t *s, size_t len)
{
	size_t old = *dst ? strlen(*dst) : 0, sep = old ? 2 : 0;
	char *n = realloc(*dst, old + sep + len + 1);

	if (!n)
		return -ENOMEM;
	if (sep)
		memcpy(n + old, "; ", 2);
	memcpy(n + old + sep, s, len);
	n[old + sep + len] = '\0';
	/* A comment is text; a stray NUL would cut it, so show it as a space. */
	for (size_t i = old + sep; i < old + sep + len; i++)
		if (!n[i])
			n[i] = ' ';
	*dst = n;
	return 0;
}

/* One more frame, with the comments among the options at opt (len bytes). */
static int comments_frame(struct cli_comments *c, const uint8_t *opt, size_t len, int swap)
{
	char **t = realloc(c->text, (c->n + 1) * sizeof(*t));
	size_t off = 0;

	if (!t)
		return -ENOMEM;
	c->text = t;
	t[c->n] = NULL;
	while (off + 4 <= len) {
		uint16_t code = pcapng_u16(opt + off, swap), olen = pcapng_u16(opt + off + 2, swap);

		if (code == PCAPNG_OPT_END || off + 4 + olen > len)
			break;
		if (code == PCAPNG_OPT_COMMENT && comment_append(&t[c->n], opt + off + 4, olen))
			return -ENOMEM;
		off += 4 + ((olen + 3u) & ~3u);
	}
	if (t[c->n])
		c->with++;
	c->n++;
	return 0;
}

/* The options of a packet block body, after its data. */
static int comments_packet(struct cli_comments *c, const uint8_t *body, size_t len, int swap)
{
	size_t caplen, data;

	if (len < PCAPNG_PKT_FIXED_BYTES)
		return -EIO;
	caplen = pcapng_u32(body + 12, swap);
	data = PCAPNG_PKT_FIXED_BYTES + ((caplen + 3u) & ~(size_t)3u);
	if (caplen > len || data > len)
		return -EIO;
	return comments_frame(c, body + data, len - data, swap);
}

static int comments_walk(FILE *f, struct cli_comments *c)
{
	uint8_t head[8], *body = NULL;
	int swap = 0, err = 0;

	while (!err && fread(head, 1, 8, f) == 8) {
		uint32_t type = pcapng_u32(head, swap), total;
		uint8_t *nb;

		if (type == PCAPNG_SHB) {
			uint8_t bom[4];

			/* The byte-order magic decides how this section is read. */
			if (fread(bom, 1, 4, f) != 4)
				return -EIO;
			swap = pcapng_u32(bom, 0) != PCAPNG_BOM;
			if (swap && pcapng_u32(bom, 1) != PCAPNG_BOM)
				return -EIO;
			if (fseek(f, -4, SEEK_CUR))
				return -EIO;
		}
		total = pcapng_u32(head + 4, swap);
		if (total < 12 || total % 4 || total > PCAPNG_BLOCK_MAX_BYTES) {
			err = -EIO;
			break;
		}
		if (type != PCAPNG_EPB && type != PCAPNG_PB && type != PCAPNG_SPB) {
			if (fseek(f, (long)total - 8, SEEK_CUR))
				err = -EIO;
			continue;
		}
		nb = realloc(body, total - 8);
		if (!nb) {
			err = -ENOMEM;
			break;
		}
		body = nb;
		if (fread(body, 1, total - 8, f) != total - 8)
			err = -EIO;
		else if (type == PCAPNG_SPB)
			err = comments_frame(c, NULL, 0, swap);
		else
			err = comments_packet(c, body, total - 12, swap);
	}
	free(body);
	return err;
}

int cli_comments_read(const char *path, struct cli_comments *c)
{
	uint8_t magic[4];
	FILE *f = fopen(path, "rb");
	int err = 0;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -EIO;
	if (fread(magic, 1, 4, f) == 4 && pcapng_u32(magic, 0) == PCAPNG_SHB) {
		rewind(f);
		err = comments_walk(f, c);
	}
	fclose(f);
	if (err)
		cli_comments_free(c);
	return err;
}

const char *cli_comments_get(const struct cli_comments *c, uint64_t frame)
{
	return frame >= 1 && frame <= c->n ? c->text[frame - 1] : NULL;
}

void cli_comments_free(struct cli_comments *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->text[i]);
	free(c->text);
	memset(c, 0, sizeof(*c));
}
