/* SPDX-License-Identifier: MIT */
/*
 * AETH syndrome tables: ACK credit counts (IBA table 45), RNR NAK timer
 * values in microseconds (IBA table 46), NAK code and syndrome type names.
 * Pure lookups over static const tables.
 */
#include <wire/aeth.h>

/* IBA 9.7.5.1.2 table 45: code -> receive credits; code 31 is "invalid". */
static const uint16_t wire_credit_table[31] = {
    0,	 1,   2,   3,	4,    6,    8,	  12,	16,   24,   32,	  48,	 64,	96,    128,   192,
    256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
};

/* IBA 9.7.5.2.8 table 46: RNR timer code -> microseconds (code 0 is the longest). */
static const uint32_t wire_rnr_table[32] = {
    655360, 10,	   20,	  30,	 40,	60,	80,	120,	160,	240,	320,
    480,    640,   960,	  1280,	 1920,	2560,	3840,	5120,	7680,	10240,	15360,
    20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

int32_t wire_aeth_credits(unsigned code)
{
	if (code >= 31)
		return -1;
	return wire_credit_table[code];
}

unsigned wire_aeth_credit_code(uint32_t credits)
{
	unsigned code = 0;

	while (code + 1 < 31 && wire_credit_table[code + 1] <= credits)
		code++;
	return code;
}

uint32_t wire_aeth_rnr_usec(unsigned code)
{
	return code < 32 ? wire_rnr_table[code] : 0;
}

unsigned wire_aeth_rnr_code(uint32_t usec)
{
	/* Codes 1..31 ascend; code 0 is the longest delay of all. */
	for (unsigned code = 1; code < 32; code++)
		if (wire_rnr_table[code] >= usec)
			return code;
	return 0;
}

const char *wire_aeth_nak_name(unsigned code)
{
	switch (code) {
#define WIRE__NAK_CASE(sym, c, name) \
	case c:                      \
		return name;
		WIRE_NAK_LIST(WIRE__NAK_CASE)
#undef WIRE__NAK_CASE
	default:
		return "Reserved";
	}
}

const char *wire_aeth_type_name(enum wire_aeth_type type)
{
	switch (type) {
	case WIRE_AETH_ACK:
		return "ACK";
	case WIRE_AETH_RNR_NAK:
		return "RNR NAK";
	case WIRE_AETH_NAK:
		return "NAK";
	case WIRE_AETH_RESERVED:
	default:
		return "Reserved";
	}
}
