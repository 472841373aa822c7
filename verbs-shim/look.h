/* SPDX-License-Identifier: MIT */
/*
 * Whether a thread about to wait for a completion event looks for it first
 * (ibv_get_cq_event, cq.c). Looking (for up to SHIM_EVENT_SPIN_US, yielding
 * between looks) saves the wake-up through the scheduler, which costs tens
 * of microseconds on a halted virtual CPU. But a looking thread is a busy
 * thread: where the CPUs are oversubscribed it takes turns at a core with
 * the daemons that are to produce the event, and every turn is a switch of
 * address space. Which way is faster depends on the machine and on what
 * else runs: with one daemon hosting both RNICs on two cores, ib_send_lat
 * -e took 18-20 us looking and 27-38 us blocking at once; with two daemons
 * 43-48 us looking and 30-43 us blocking, although most looks there found
 * their event (the looks themselves made it late).
 *
 * So each channel measures both ways and takes the faster: a cycle of
 * SHIM_LOOK_TRIAL waits that look, SHIM_LOOK_TRIAL that block at once, and
 * then SHIM_LOOK_RUN waits the way whose median wait was shorter. A wait is
 * timed from the call to the event when no event was there at the call.
 * Threads that wait on one channel share it; one that finds another
 * recording skips its own sample.
 */
#ifndef UROCE_SHIM_LOOK_H
#define UROCE_SHIM_LOOK_H

#include <stdbool.h>
#include <stdint.h>

#define SHIM_LOOK_TRIAL 32u
#define SHIM_LOOK_RUN 512u
#define SHIM_LOOK_CYCLE (2 * SHIM_LOOK_TRIAL + SHIM_LOOK_RUN)

enum shim_look_way { SHIM_LOOK_LOOK = 0, SHIM_LOOK_BLOCK = 1 };

struct shim_look {
	uint32_t n;			  /* timed waits into the cycle */
	uint8_t busy;			  /* a thread records a sample */
	uint8_t run;			  /* the way of the run (enum shim_look_way) */
	uint32_t median[2];		  /* ns, of each way's last trial */
	uint32_t sample[SHIM_LOOK_TRIAL]; /* ns, of the trial under way */
};

/* The way a wait that starts now goes. */
static inline enum shim_look_way shim_look_way(const struct shim_look *l)
{
	uint32_t n = __atomic_load_n(&l->n, __ATOMIC_RELAXED);

	if (n < SHIM_LOOK_TRIAL)
		return SHIM_LOOK_LOOK;
	if (n < 2 * SHIM_LOOK_TRIAL)
		return SHIM_LOOK_BLOCK;
	return (enum shim_look_way)__atomic_load_n(&l->run, __ATOMIC_RELAXED);
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

/* A timed wait that went `way` took `ns`. */
static inline void shim_look_done(struct shim_look *l, enum shim_look_way way, uint64_t ns)
{
	uint32_t n;

	if (__atomic_exchange_n(&l->busy, 1, __ATOMIC_ACQUIRE))
		return;
	n = l->n;
	if (n < 2 * SHIM_LOOK_TRIAL) {
		if (way != (n < SHIM_LOOK_TRIAL ? SHIM_LOOK_LOOK : SHIM_LOOK_BLOCK))
			goto out; /* started before the trial changed ways */
		l->sample[n % SHIM_LOOK_TRIAL] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
		if (n % SHIM_LOOK_TRIAL == SHIM_LOOK_TRIAL - 1)
			l->median[way] = shim_look_median(l->sample, SHIM_LOOK_TRIAL);
		if (n == 2 * SHIM_LOOK_TRIAL - 1)
			__atomic_store_n(&l->run,
					 l->median[SHIM_LOOK_BLOCK] < l->median[SHIM_LOOK_LOOK]
					     ? SHIM_LOOK_BLOCK
					     : SHIM_LOOK_LOOK,
					 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&l->n, n + 1 == SHIM_LOOK_CYCLE ? 0 : n + 1, __ATOMIC_RELAXED);
out:
	__atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
}

#endif
