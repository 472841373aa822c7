/* SPDX-License-Identifier: MIT */
/*
 * The frame comments of a pcapng file (the opt_comment options of its packet
 * blocks, Wireshark's frame.comment), which libpcap does not return when it
 * reads packets. Frames are numbered as libpcap and Wireshark number them:
 * every Enhanced, Simple or (obsolete) Packet Block is one frame, from 1. A
 * classic pcap file has no comments. Only the comments are read here; the
 * packets themselves come from common/pcapfile.h.
 */
#ifndef UROCE_CLI_PCAPNG_COMMENTS_H
#define UROCE_CLI_PCAPNG_COMMENTS_H

#include <stddef.h>
#include <stdint.h>

struct cli_comments {
	char **text; /* text[frame - 1]: the frame's comments joined by "; ", or NULL */
	size_t n;    /* frames seen */
	size_t with; /* frames that have a comment */
};

/*
 * Read the comments of the capture at path into *c (zeroed first). 0 (also
 * for a classic pcap file, which has none), -ENOMEM, or -EIO for a file
 * that cannot be read or a damaged pcapng block structure.
 */
int cli_comments_read(const char *path, struct cli_comments *c);

/* The comment of frame (from 1), or NULL. */
const char *cli_comments_get(const struct cli_comments *c, uint64_t frame);

void cli_comments_free(struct cli_comments *c);

#endif /* UROCE_CLI_PCAPNG_COMMENTS_H */
