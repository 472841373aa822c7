/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (IEEE 802.3, reflected), slice-by-8: eight bytes per step through
 * eight 256-entry tables generated at build time (wire/tools/
 * gen_crc32_tables.c) into static const storage, plus the one-table bytewise
 * reference. Byte loads are explicit, so the code is endian-neutral.
 */
#include <wire/crc32.h>
#include "wire_crc32_tables.h"

uint32_t wire_crc32_update(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* Bytewise until 8-byte aligned, so the block loads are aligned. */
	while (len && ((uintptr_t)p & 7)) {
		reg = (reg >> 8) ^ wire_crc32_tab[0][(reg ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t a = reg ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				    (uint32_t)p[3] << 24);
		uint32_t b = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			     (uint32_t)p[7] << 24;

		reg = wire_crc32_tab[7][a & 0xff] ^ wire_crc32_tab[6][(a >> 8) & 0xff] ^
		      wire_crc32_tab[5][(a >> 16) & 0xff] ^ wire_crc32_tab[4][a >> 24] ^
		      wire_crc32_tab[3][b & 0xff] ^ wire_crc32_tab[2][(b >> 8) & 0xff] ^
		      wire_crc32_tab[1][(b >> 16) & 0xff] ^ wire_crc32_tab[0][b >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		reg = (reg >> 8) ^ wire_crc32_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

uint32_t wire_crc32_update_bytewise(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--)
		reg = (reg >> 8) ^ wire_crc32_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

uint32_t wire_crc32(const void *buf, size_t len)
{
	return ~wire_crc32_update(WIRE_CRC32_INIT, buf, len);
}
