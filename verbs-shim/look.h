/* SPDX-License-Identifier: MIT */
/*
 * Whether a thread about to wait for a completion event looks for it first
 * (ibv_get_cq_event, cq.c). Looking (for up to SHIM_EVENT_SPIN_US, yielding
 * between looks) saves the wake-up through the scheduler, which costs tens
 * of microseconds on a halted virtual CPU. But a looking thread is a busy
 * thread: where the CPUs are oversubscribed it takes turns at a core with
 * the daemons that are to produce the event, and every turn is a switch of
 * address space. Which way is faster depends on the machine and on what
 * runs on it, and is not one side's choice: in a ping-pong both peers wait
 * in turn. On two cores, ib_send_lat -e with one daemon hosting both RNICs
 * took 19.5-24.8 us with both peers looking and 27.5-40.8 us with both
 * blocking at once; with two daemons, 41.6-47.2 us looking and 37.5-40.3
 * blocking (42.2-51.9 against 54.4-60.4 with both daemons on one core).
 *
 * So each channel measures both ways, in trials that every program of the
 * host holds at the same moments: the clock (CLOCK_MONOTONIC, one for all
 * processes) is cut into periods of SHIM_LOOK_PERIOD_NS; in the first
 * SHIM_LOOK_TRIAL_NS of each, waits look, in the next SHIM_LOOK_TRIAL_NS
 * they block at once, and for the rest of the period they go the way whose
 * median wait (from the call to the event, when no event was there at the
 * call; of the trial's last SHIM_LOOK_SAMPLES waits, as its first still
 * feel the way before) was shorter; blocking, which costs more when it is
 * the wrong choice, must be shorter by a sixteenth. Peers of a ping-pong on
 * one host thus compare both looking with both blocking. A trial with fewer
 * than SHIM_LOOK_MIN_SAMPLES waits of either way (long waits, where looking
 * costs little) keeps the previous choice; looking is the first. Threads
 * that wait on one channel share it; one that finds another recording
 * skips its own sample.
 */
#ifndef UROCE_SHIM_LOOK_H
#define UROCE_SHIM_LOOK_H

#include <stdbool.h>
#include <stdint.h>

#define SHIM_LOOK_PERIOD_NS 256000000ull
#define SHIM_LOOK_TRIAL_NS 8000000ull
#define SHIM_LOOK_SAMPLES 64u
#define SHIM_LOOK_MIN_SAMPLES 8u

enum shim_look_way { SHIM_LOOK_LOOK = 0, SHIM_LOOK_BLOCK = 1 };

struct shim_look {
	uint64_t period;   /* the period the samples are of, plus one (0: none) */
	uint8_t busy;	   /* a thread records or decides */
	uint8_t run;	   /* the way after the trials (enum shim_look_way) */
	bool decided;	   /* for `period` */
	uint32_t count[2]; /* waits of each way sampled (the last SHIM_LOOK_SAMPLES kept) */
	uint32_t sample[2][SHIM_LOOK_SAMPLES]; /* ns */
};

/* Which trial a moment falls in: a way, or -1 (after the trials). */
static inline int shim_look_trial(uint64_t now)
{
	uint64_t off = now % SHIM_LOOK_PERIOD_NS;

	if (off < SHIM_LOOK_TRIAL_NS)
		return SHIM_LOOK_LOOK;
	if (off < 2 * SHIM_LOOK_TRIAL_NS)
		return SHIM_LOOK_BLOCK;
	return -1;
}

static inline uint32_t shim_look_median(uint32_t *v, unsigned len)
{
	for (unsigned i = 1; i < len; i++) {
		uint32_t x = v[i];
		unsigned j = i;

		for (; j && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return v[len / 2];
}

/* After the trials of the period the samples are of: choose, once. */
static inline void shim_look_decide(struct shim_look *l, uint64_t period)
{
	uint32_t median[2];

	if (l->period != period + 1 || l->decided)
		return;
	__atomic_store_n(&l->decided, true, __ATOMIC_RELAXED);
	for (int way = SHIM_LOOK_LOOK; way <= SHIM_LOOK_BLOCK; way++) {
		uint32_t n = l->count[way];

		if (n < SHIM_LOOK_MIN_SAMPLES)
			return;
		median[way] =
		    shim_look_median(l->sample[way], n < SHIM_LOOK_SAMPLES ? n : SHIM_LOOK_SAMPLES);
	}
	__atomic_store_n(&l->run,
			 (uint64_t)median[SHIM_LOOK_BLOCK] * 16 <
				 (uint64_t)median[SHIM_LOOK_LOOK] * 15
			     ? SHIM_LOOK_BLOCK
			     : SHIM_LOOK_LOOK,
			 __ATOMIC_RELAXED);
}

/* The way a wait that starts at `now` goes. */
static inline enum shim_look_way shim_look_way(struct shim_look *l, uint64_t now)
{
	int trial = shim_look_trial(now);

	if (trial >= 0)
		return (enum shim_look_way)trial;
	if (!__atomic_load_n(&l->decided, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&l->busy, 1, __ATOMIC_ACQUIRE)) {
		shim_look_decide(l, now / SHIM_LOOK_PERIOD_NS);
		__atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
	}
	return (enum shim_look_way)__atomic_load_n(&l->run, __ATOMIC_RELAXED);
}

/* A wait that went `way` from `start` found its event at `end` (ns). Only a
 * wait that began and ended in the trial of its way is a sample. */
static inline void shim_look_done(struct shim_look *l, enum shim_look_way way, uint64_t start,
				  uint64_t end)
{
	uint64_t period = start / SHIM_LOOK_PERIOD_NS;
	uint64_t ns = end - start;

	if (shim_look_trial(start) != (int)way || shim_look_trial(end) != (int)way ||
	    end / SHIM_LOOK_PERIOD_NS != period)
		return;
	if (__atomic_exchange_n(&l->busy, 1, __ATOMIC_ACQUIRE))
		return;
	if (l->period != period + 1) {
		l->period = period + 1;
		__atomic_store_n(&l->decided, false, __ATOMIC_RELAXED);
		l->count[0] = l->count[1] = 0;
	}
	/* The last SHIM_LOOK_SAMPLES are kept: the first of a trial follow
	 * the other way's. */
	l->sample[way][l->count[way]++ % SHIM_LOOK_SAMPLES] =
	    ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	__atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
}

#endif
