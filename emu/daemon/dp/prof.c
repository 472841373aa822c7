/* SPDX-License-Identifier: MIT */
/*
 * The cost profile (uroced --profile): how long each RNIC spends in the
 * parts of its data path, as counters (time_*_ns, dev_counters.h).
 *
 * Sampling profilers mislead on the virtual machines uroce is developed
 * on: with only a software clock to sample, a 15 ns function took 14 % of
 * a daemon's samples. So the daemon measures itself: a time stamp before
 * and after each part (a system call, a copy, an ICRC), added up per RNIC.
 * The clock is the CPU's time-stamp counter where it is invariant (a few
 * nanoseconds per read; CPUID leaf 0x80000007, EDX bit 8), else
 * CLOCK_MONOTONIC. Counter values are converted to nanoseconds when they
 * are read, by the ratio of the two clocks since the profile started.
 * Without --profile nothing is read: one test of a flag per part.
 */
#define _GNU_SOURCE
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "dp.h"

bool emu_prof_tsc;
static uint64_t prof_tsc0, prof_ns0;

uint64_t emu_prof_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool invariant_tsc(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#else
	return false;
#endif
}

void emu_prof_init(void)
{
	emu_prof_tsc = invariant_tsc();
	prof_ns0 = emu_prof_clock_ns();
	prof_tsc0 = emu_prof_ticks();
}

uint64_t emu_prof_scale(uint64_t ticks, uint64_t span_ticks, uint64_t span_ns)
{
	if (!span_ticks)
		return 0;
	return (uint64_t)((unsigned __int128)ticks * span_ns / span_ticks);
}

uint64_t emu_prof_ns(uint64_t ticks)
{
	if (!emu_prof_tsc)
		return ticks;
	return emu_prof_scale(ticks, emu_prof_ticks() - prof_tsc0, emu_prof_clock_ns() - prof_ns0);
}
