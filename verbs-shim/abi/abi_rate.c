/* SPDX-License-Identifier: MIT */
/*
 * abi_rate.c: conversions between enum ibv_rate (the InfiniBand rate
 * encoding used in path records and address vectors) and the two numeric
 * forms libibverbs offers: a multiple of the 2.5 Gb/s base rate and Mb/s.
 * One table lists every rate with both numbers, as rdma-core 44 defines
 * them: the FDR/EDR/HDR rates (14, 56, 112, 168, 25, 100, 200, 300 Gb/s)
 * have no exact multiple of 2.5 Gb/s and therefore no "mult" form (-1),
 * while 28 Gb/s maps to 11 and 50 Gb/s to 20. Unknown input gives -1 or
 * IBV_RATE_MAX (0). Pure: no state, no I/O.
 */
#include <stddef.h>

#include <infiniband/verbs.h>

/* X(rate, multiple of 2.5 Gb/s or -1, Mb/s) */
#define SHIM_RATE_MAP(X)                  \
	X(IBV_RATE_2_5_GBPS, 1, 2500)     \
	X(IBV_RATE_5_GBPS, 2, 5000)       \
	X(IBV_RATE_10_GBPS, 4, 10000)     \
	X(IBV_RATE_20_GBPS, 8, 20000)     \
	X(IBV_RATE_30_GBPS, 12, 30000)    \
	X(IBV_RATE_40_GBPS, 16, 40000)    \
	X(IBV_RATE_60_GBPS, 24, 60000)    \
	X(IBV_RATE_80_GBPS, 32, 80000)    \
	X(IBV_RATE_120_GBPS, 48, 120000)  \
	X(IBV_RATE_14_GBPS, -1, 14062)    \
	X(IBV_RATE_56_GBPS, -1, 56250)    \
	X(IBV_RATE_112_GBPS, -1, 112500)  \
	X(IBV_RATE_168_GBPS, -1, 168750)  \
	X(IBV_RATE_25_GBPS, -1, 25781)    \
	X(IBV_RATE_100_GBPS, -1, 103125)  \
	X(IBV_RATE_200_GBPS, -1, 206250)  \
	X(IBV_RATE_300_GBPS, -1, 309375)  \
	X(IBV_RATE_28_GBPS, 11, 28125)    \
	X(IBV_RATE_50_GBPS, 20, 53125)    \
	X(IBV_RATE_400_GBPS, 160, 425000) \
	X(IBV_RATE_600_GBPS, 240, 637500) \
	X(IBV_RATE_800_GBPS, 320, 850000) \
	X(IBV_RATE_1200_GBPS, 480, 1275000)

struct shim_rate {
	enum ibv_rate rate;
	int mult;
	int mbps;
};

#define SHIM_RATE_ENTRY(r, m, mb) {.rate = (r), .mult = (m), .mbps = (mb)},

static const struct shim_rate shim_rates[] = {SHIM_RATE_MAP(SHIM_RATE_ENTRY)};

#define SHIM_NUM_RATES (sizeof(shim_rates) / sizeof(shim_rates[0]))

static const struct shim_rate *shim_rate_find(enum ibv_rate rate)
{
	for (size_t i = 0; i < SHIM_NUM_RATES; i++)
		if (shim_rates[i].rate == rate)
			return &shim_rates[i];
	return NULL;
}

/* Multiple of 2.5 Gb/s for @rate, or -1 if @rate has none or is unknown. */
int ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct shim_rate *r = shim_rate_find(rate);

	return r ? r->mult : -1;
}

/* Rate whose multiple of 2.5 Gb/s is exactly @mult, else IBV_RATE_MAX. */
enum ibv_rate mult_to_ibv_rate(int mult)
{
	if (mult <= 0)
		return IBV_RATE_MAX;
	for (size_t i = 0; i < SHIM_NUM_RATES; i++)
		if (shim_rates[i].mult == mult)
			return shim_rates[i].rate;
	return IBV_RATE_MAX;
}

/* Mb/s of @rate, or -1 for IBV_RATE_MAX and unknown values. */
int ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct shim_rate *r = shim_rate_find(rate);

	return r ? r->mbps : -1;
}

/* Rate whose Mb/s value is exactly @mbps, else IBV_RATE_MAX. */
enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	if (mbps <= 0)
		return IBV_RATE_MAX;
	for (size_t i = 0; i < SHIM_NUM_RATES; i++)
		if (shim_rates[i].mbps == mbps)
			return shim_rates[i].rate;
	return IBV_RATE_MAX;
}
