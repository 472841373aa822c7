/* SPDX-License-Identifier: MIT */
/*
 * The one shape of a UDP GSO datagram that uroced sends (dp/net.c) and that
 * its receive path and `uroce decode` cut apart again: 2 to UROCE_GSO_MAX_SEGS
 * segments of UROCE_GSO_SEG_BYTES, each a BTH-only IB packet with 4096 bytes
 * of payload and its ICRC, segment i carrying IPv4 ID (first ID + i) once
 * the kernel or NIC has cut it. Seen whole (on loopback and veth, where
 * nothing cuts it, or in a capture taken there) it is one datagram longer
 * than any RoCEv2 packet can be, which is how it is told apart.
 */
#ifndef UROCE_GSO_H
#define UROCE_GSO_H

#include <stddef.h>

/* BTH (12) + 4096 bytes of payload + ICRC (4). */
#define UROCE_GSO_SEG_BYTES 4112u
/* 15 x 4112 = 61680 bytes: within IPv4's 65507-byte UDP payload. */
#define UROCE_GSO_MAX_SEGS 15u

/* Is an IB payload of len bytes (UDP payload) a whole GSO datagram of ours? */
static inline unsigned uroce_gso_segments(size_t len)
{
	if (len < 2 * UROCE_GSO_SEG_BYTES || len % UROCE_GSO_SEG_BYTES)
		return 0;
	return (unsigned)(len / UROCE_GSO_SEG_BYTES);
}

#endif /* UROCE_GSO_H */
