/* SPDX-License-Identifier: MIT */
/*
 * Where the daemon runs (--cpu). Two daemons and two polling programs on
 * few cores are four busy threads, and the scheduler, left alone, often
 * puts a daemon beside the program it is to hand work to, or both daemons
 * on one core: every hop then waits for a turn at that core (a few
 * microseconds each on a virtual machine). Daemons that each keep to a core
 * of their own leave the programs to fill the others, which the scheduler
 * does well (docs/performance.md: ib_send_lat 51-59 -> 35 us, ib_write_bw
 * 2.0-2.8 -> 2.8-3.5 GB/s on two cores). A daemon alone is better left
 * unpinned: pinned, it shares its core with one of the programs.
 *
 * So, by default (auto), the daemons of one run directory spread over the
 * CPUs they are allowed: each claims a CPU by locking that CPU's byte of
 * <rundir>/cpus.lock (an open-file-description lock: released when the
 * process exits, however it exits), and keeps to it while another daemon
 * holds a claim there, looking every EMU_PLACE_LOOK_MS. A daemon allowed one
 * CPU only is left to the scheduler; so is one that finds every CPU
 * claimed, until a look finds one free.
 * --cpu N keeps to CPU N from the start; --cpu none never changes the
 * affinity.
 *
 * Which CPU each daemon takes matters as well: a daemon beside the program
 * of its own RNIC hands every completion to a program that must first get
 * the CPU from it, while a daemon beside the other RNIC's program is the
 * one that program waits for (performance.md: ib_send_lat 13.5 against
 * 23-28 us). The shim notes in each CQ's ring header the CPU its poller
 * runs on; when a daemon finds the programs of its RNICs polling on its own
 * CPU, look after look, and another daemon's programs poll on that one's
 * CPU, the two swap CPUs. cpus.lock holds, past the CPUs' bytes,
 * a table with a slot per claimed byte: the CPU its daemon keeps to (the
 * slot's own until a swap), where its programs poll, and when that was
 * seen; swaps are made under a lock on the file's mutex byte. The daemon
 * that swaps moves the other one as well, and each follows its slot at its
 * next look.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"

/* cpus.lock: the CPUs' bytes, the mutex byte, then the table. */
#define PLACE_MUTEX_BYTE CPU_SETSIZE
#define PLACE_TABLE_OFF 4096
/* Looks in a row that find the programs on this CPU before a swap, and the
 * least time between two swaps of one daemon: it doubles, up to the last,
 * while swaps keep coming within twice the gap (programs that the scheduler
 * keeps moving, as on a loaded machine, are not chased), and comes back to
 * the first after a quiet while. */
#define PLACE_CROWDED_LOOKS 2
#define PLACE_SWAP_GAP_MS 250
#define PLACE_SWAP_GAP_MAX_MS 8000
/* CQ publishes in a look that say where the programs poll. */
#define PLACE_MIN_POLLS 8
/* A slot's poller CPU older than this says nothing (an idle daemon writes
 * it every EMU_PLACE_LOOK_MS). */
#define PLACE_FRESH_MS (3 * EMU_PLACE_LOOK_MS)

/* One slot of the table. */
struct place_slot {
	uint16_t cpu1;	   /* 1 + the CPU its daemon keeps to; 0: the slot's own */
	uint16_t poll1;	   /* 1 + the CPU its programs poll on; 0: none seen */
	uint32_t stamp_ms; /* when poll1 was written (CLOCK_MONOTONIC); 0: never */
	uint64_t mask;	   /* the daemon's affinity over CPUs 0-63 */
	int32_t pid;	   /* the daemon's process (its data path is the main thread) */
	uint32_t pad;
};

/* CLOCK_MONOTONIC in ms: the data path's clock (wait.c). */
static uint64_t place_now_ms(void)
{
	return emu_wait_now_us() / 1000u;
}

static uint64_t place_mask64(const cpu_set_t *set)
{
	uint64_t m = 0;

	for (int c = 0; c < 64; c++)
		if (CPU_ISSET(c, set))
			m |= 1ull << c;
	return m;
}

/* The table as the file holds it (zeros past its end). */
static void place_read(const struct emu_place *p, struct place_slot tab[EMU_PLACE_SLOTS])
{
	ssize_t n;

	memset(tab, 0, EMU_PLACE_SLOTS * sizeof(*tab));
	n = pread(p->fd, tab, EMU_PLACE_SLOTS * sizeof(*tab), PLACE_TABLE_OFF);
	(void)n; /* short or failed: the rest stays zero, the slots' own CPUs */
}

/* Write one field range of slot s. */
static void place_write(const struct emu_place *p, int s, const void *field, size_t off, size_t len)
{
	if (pwrite(p->fd, field, len,
		   PLACE_TABLE_OFF + (off_t)s * (off_t)sizeof(struct place_slot) + (off_t)off) !=
	    (ssize_t)len)
		emu_warn("cpus.lock of %s: %s", p->rundir, strerror(errno));
}

/* The CPU slot s's daemon keeps to. */
static int slot_cpu(const struct place_slot *tab, int s)
{
	return s < EMU_PLACE_SLOTS && tab[s].cpu1 ? tab[s].cpu1 - 1 : s;
}

/* The CPU the table gives this daemon's slot, or -1 when it is outside the
 * daemon's affinity. */
static int place_table_cpu(const struct emu_place *p, const struct place_slot *tab)
{
	int c = slot_cpu(tab, p->slot);

	return c < CPU_SETSIZE && CPU_ISSET(c, &p->allowed) ? c : -1;
}

/* The byte of cpus.lock that stands for a CPU. */
static int place_lock(int fd, int cmd, short type, int cpu, struct flock *fl)
{
	memset(fl, 0, sizeof(*fl));
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = cpu;
	fl->l_len = 1;
	return fcntl(fd, cmd, fl);
}

/* Does another daemon hold a claim on byte c? */
static bool place_held(const struct emu_place *p, int c)
{
	struct flock fl;

	return !place_lock(p->fd, F_OFD_GETLK, F_WRLCK, c, &fl) && fl.l_type != F_UNLCK;
}

/* Does another daemon hold a claim on a CPU of our mask? */
static bool place_peers(const struct emu_place *p)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != p->slot && CPU_ISSET(c, &p->allowed) && place_held(p, c))
			return true;
	return false;
}

/* The table's mutex: held for a few system calls at a time. */
static bool place_mutex(const struct emu_place *p, bool take)
{
	struct flock fl;

	return !place_lock(p->fd, take ? F_OFD_SETLKW : F_OFD_SETLK, take ? F_WRLCK : F_UNLCK,
			   PLACE_MUTEX_BYTE, &fl);
}

/* Keep a thread (0: this one) to one CPU. 0 or -errno. */
static int keep_thread_to(pid_t tid, int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one) ? -errno : 0;
}

/* Keep the daemon to one CPU. 0 or -errno. */
static int keep_to(int cpu)
{
	return keep_thread_to(0, cpu);
}

static void place_pin(struct emu_place *p, bool pin)
{
	if (pin == p->pinned)
		return;
	if (pin ? keep_to(p->cpu) : sched_setaffinity(0, sizeof(p->allowed), &p->allowed)) {
		emu_warn("cannot %s CPU %d: %s", pin ? "keep to" : "leave", p->cpu,
			 strerror(errno));
		return;
	}
	p->pinned = pin;
	if (pin)
		emu_info("keeping to CPU %d: another daemon of %s runs, and each keeps to a CPU "
			 "of its own (--cpu none: let the scheduler choose)",
			 p->cpu, p->rundir);
	else
		emu_info("no longer keeping to CPU %d: no other daemon of %s runs", p->cpu,
			 p->rundir);
}

/* A swap, made or undergone: the next may come only after the gap, which
 * doubles while swaps come within twice of it (PLACE_SWAP_GAP_MS). */
static void place_note_swap(struct emu_place *p, uint64_t now_ms)
{
	if (p->last_swap_ms && now_ms - p->last_swap_ms < 2 * p->swap_gap_ms)
		p->swap_gap_ms = p->swap_gap_ms * 2 < PLACE_SWAP_GAP_MAX_MS ? p->swap_gap_ms * 2
									    : PLACE_SWAP_GAP_MAX_MS;
	else
		p->swap_gap_ms = PLACE_SWAP_GAP_MS;
	p->last_swap_ms = now_ms;
}

/* Move to the CPU the table gives this daemon's slot, if it changed (the
 * other daemon of a swap has moved it already, or will have). */
static void place_follow(struct emu_place *p, const struct place_slot *tab, uint64_t now_ms)
{
	int c = place_table_cpu(p, tab);

	if (c < 0 || c == p->cpu)
		return;
	if (p->pinned && keep_to(c)) {
		emu_warn("cannot keep to CPU %d: %s", c, strerror(errno));
		return;
	}
	emu_info("keeping to CPU %d instead of %d: another daemon of %s swapped with this one", c,
		 p->cpu, p->rundir);
	p->cpu = c;
	p->crowded = 0;
	place_note_swap(p, now_ms);
}

/*
 * Claim the first CPU of the mask that no other daemon holds, and take the
 * CPU the table gives its slot. The first daemon starts a fresh table (each
 * slot its own CPU). A slot that a swap left with a CPU outside this
 * daemon's mask gets its own back, from the slot that has it.
 */
static bool place_claim(struct emu_place *p)
{
	struct place_slot tab[EMU_PLACE_SLOTS];
	uint64_t mask = place_mask64(&p->allowed);
	uint32_t now = (uint32_t)place_now_ms();
	bool alone;
	int s = -1;

	for (int c = 0; c < CPU_SETSIZE && s < 0; c++) {
		struct flock fl;

		if (CPU_ISSET(c, &p->allowed) && !place_lock(p->fd, F_OFD_SETLK, F_WRLCK, c, &fl))
			s = c;
	}
	if (s < 0)
		return false;
	p->slot = s;
	p->cpu = s;
	if (s >= EMU_PLACE_SLOTS)
		return true; /* no slot in the table: never swaps */
	place_mutex(p, true);
	alone = true;
	for (int c = 0; c < EMU_PLACE_SLOTS && alone; c++)
		alone = c == s || !place_held(p, c);
	if (alone) {
		memset(tab, 0, sizeof(tab));
		place_write(p, 0, tab, 0, sizeof(tab));
	} else {
		place_read(p, tab);
		if (place_table_cpu(p, tab) < 0) {
			/* The slot that keeps to ours takes the one ours had. */
			for (int t = 0; t < EMU_PLACE_SLOTS; t++)
				if (t != s && slot_cpu(tab, t) == s) {
					tab[t].cpu1 = tab[s].cpu1;
					place_write(p, t, &tab[t].cpu1, 0, sizeof(tab[t].cpu1));
				}
			tab[s].cpu1 = 0;
			place_write(p, s, &tab[s].cpu1, 0, sizeof(tab[s].cpu1));
		}
	}
	tab[s].poll1 = 0;
	tab[s].stamp_ms = now ? now : 1;
	tab[s].mask = mask;
	tab[s].pid = (int32_t)getpid();
	tab[s].pad = 0;
	place_write(p, s, &tab[s].poll1, offsetof(struct place_slot, poll1),
		    sizeof(struct place_slot) - offsetof(struct place_slot, poll1));
	place_mutex(p, false);
	p->cpu = slot_cpu(tab, s);
	return true;
}

/* No decision yet (place_pollers): a few CQ publishes so far, or none. */
#define PLACE_UNSURE (-2)
#define PLACE_QUIET (-3)

/*
 * Where the programs polled: the CPU with most of the CQ publishes since
 * the last decision, once there were PLACE_MIN_POLLS (a slow ping-pong
 * takes several looks to get there); -1 when a claim look's time passed
 * with fewer (nobody polls); before either, PLACE_UNSURE, or PLACE_QUIET
 * when there was none.
 */
static int place_pollers(struct emu_place *p, uint64_t now_ms)
{
	uint32_t total = 0, best = 0;
	int cpu = -1;

	for (int c = 0; c < EMU_PLACE_SLOTS; c++) {
		total += p->polls[c];
		if (p->polls[c] > best) {
			best = p->polls[c];
			cpu = c;
		}
	}
	if (total < PLACE_MIN_POLLS && now_ms - p->polls_since_ms < EMU_PLACE_LOOK_MS)
		return total ? PLACE_UNSURE : PLACE_QUIET;
	memset(p->polls, 0, sizeof(p->polls));
	p->polls_since_ms = now_ms;
	return total >= PLACE_MIN_POLLS ? cpu : -1;
}

/*
 * The slot to swap CPUs with, or -1: a live daemon of the same affinity
 * whose programs poll on its own CPU, a CPU where ours do not poll. (Not
 * one whose programs do not poll: in a one-way stream, ib_write_bw, the
 * poster beside its own daemon moved more than beside the receiver's.)
 */
static int place_partner(const struct emu_place *p, const struct place_slot *tab, int mine,
			 uint32_t now)
{
	for (int t = 0; t < EMU_PLACE_SLOTS; t++) {
		int c = slot_cpu(tab, t);

		if (t == p->slot || c == p->cpu || c == mine || !tab[t].stamp_ms ||
		    tab[t].mask != tab[p->slot].mask)
			continue;
		if ((uint32_t)(now - tab[t].stamp_ms) > PLACE_FRESH_MS)
			continue;
		if (tab[t].poll1 - 1 != c)
			continue;
		if (place_held(p, t))
			return t;
	}
	return -1;
}

/* Swap CPUs with slot t, under the mutex, if the table still says so. */
static bool place_swap(struct emu_place *p, int t, int mine)
{
	struct place_slot tab[EMU_PLACE_SLOTS];
	uint16_t a, b;
	int c;

	if (!place_mutex(p, true))
		return false;
	place_read(p, tab);
	c = slot_cpu(tab, t);
	if (slot_cpu(tab, p->slot) != p->cpu || c == p->cpu || keep_to(c)) {
		place_mutex(p, false);
		return false;
	}
	a = (uint16_t)(c + 1);
	b = (uint16_t)(p->cpu + 1);
	place_write(p, p->slot, &a, 0, sizeof(a));
	place_write(p, t, &b, 0, sizeof(b));
	/*
	 * The other daemon moves now too, not at its next look: meanwhile both
	 * would share c, and the scheduler would move a program to even the
	 * load, which the next looks would chase. (It follows the table at its
	 * next look anyway, should this fail.)
	 */
	if (tab[t].pid > 0)
		keep_thread_to(tab[t].pid, p->cpu);
	place_mutex(p, false);
	emu_info("keeping to CPU %d instead of %d, swapped with another daemon of %s: the "
		 "programs of this daemon's RNICs poll on CPU %d",
		 c, p->cpu, p->rundir, mine);
	p->cpu = c;
	return true;
}

/* Where the programs poll, where the table puts this daemon, and a swap.
 * True while programs poll (look again soon). */
static bool place_look_pollers(struct emu_place *p, uint64_t now_ms)
{
	struct place_slot tab[EMU_PLACE_SLOTS];
	uint32_t now = (uint32_t)now_ms ? (uint32_t)now_ms : 1;
	int mine = place_pollers(p, now_ms);
	int t;

	if (p->slot >= EMU_PLACE_SLOTS)
		return false;
	place_read(p, tab);
	place_follow(p, tab, now_ms);
	if (mine == PLACE_UNSURE || mine == PLACE_QUIET)
		return mine == PLACE_UNSURE;
	tab[p->slot].poll1 = (uint16_t)(mine + 1);
	tab[p->slot].stamp_ms = now;
	place_write(p, p->slot, &tab[p->slot].poll1, offsetof(struct place_slot, poll1),
		    sizeof(uint16_t) + sizeof(uint32_t));
	p->crowded = mine >= 0 && mine == p->cpu ? p->crowded + 1 : 0;
	if (p->crowded >= PLACE_CROWDED_LOOKS && now_ms - p->last_swap_ms >= p->swap_gap_ms &&
	    (t = place_partner(p, tab, mine, now)) >= 0 && place_swap(p, t, mine)) {
		p->crowded = 0;
		place_note_swap(p, now_ms);
	}
	return mine >= 0;
}

static void on_look(uv_timer_t *t)
{
	struct emu_place *p = t->data;
	uint64_t now = place_now_ms();
	bool busy = false, peers;

	if (now - p->last_claim_look_ms >= EMU_PLACE_LOOK_MS || p->slot < 0) {
		p->last_claim_look_ms = now;
		/* A daemon that found every CPU claimed takes one that became free. */
		if (p->slot < 0 && !place_claim(p))
			goto again;
		peers = place_peers(p);
		if (peers && !p->pinned && p->slot < EMU_PLACE_SLOTS) {
			/* Pinned again: to the CPU the table gives the slot now. */
			struct place_slot tab[EMU_PLACE_SLOTS];
			int c;

			place_read(p, tab);
			c = place_table_cpu(p, tab);
			if (c >= 0)
				p->cpu = c;
		}
		place_pin(p, peers);
	}
	if (p->pinned)
		busy = place_look_pollers(p, now);
again:
	/* Looking often costs a wake-up: only while programs poll. */
	p->fast = busy;
	uv_timer_start(t, on_look, busy ? EMU_PLACE_POLL_LOOK_MS : EMU_PLACE_LOOK_MS, 0);
}

void emu_place_hurry(struct emu_place *p)
{
	if (!p->timer_up || p->fast)
		return;
	p->fast = true;
	uv_timer_start(&p->timer, on_look, EMU_PLACE_POLL_LOOK_MS, 0);
}

int emu_place_start(struct emu_place *p, uv_loop_t *loop, int mode, const char *rundir)
{
	char path[sizeof(p->rundir) + 16];

	p->fd = -1;
	p->slot = -1;
	p->cpu = -1;
	p->pinned = false;
	p->timer_up = false;
	p->started = true;
	snprintf(p->rundir, sizeof(p->rundir), "%s", rundir);
	if (mode == EMU_PLACE_NONE)
		return 0;
	if (sched_getaffinity(0, sizeof(cpu_set_t), &p->allowed))
		return -errno;
	if (mode >= 0) {
		int err;

		if (mode >= CPU_SETSIZE || !CPU_ISSET(mode, &p->allowed))
			return -EINVAL;
		err = keep_to(mode);
		if (err)
			return err;
		p->cpu = mode;
		p->pinned = true;
		emu_info("keeping to CPU %d (--cpu %d)", mode, mode);
		return 0;
	}
	if (CPU_COUNT(&p->allowed) < 2)
		return 0;
	snprintf(path, sizeof(path), "%s/cpus.lock", rundir);
	p->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (p->fd < 0) {
		emu_warn("%s: %s; the scheduler places the daemon", path, strerror(errno));
		return 0;
	}
	if (place_claim(p))
		place_pin(p, place_peers(p));
	else
		emu_info("every CPU of this daemon's mask has a daemon of %s; the scheduler "
			 "places this one until a CPU is free",
			 rundir);
	uv_timer_init(loop, &p->timer);
	p->timer.data = p;
	p->last_claim_look_ms = place_now_ms();
	uv_timer_start(&p->timer, on_look, EMU_PLACE_LOOK_MS, 0);
	uv_unref((uv_handle_t *)&p->timer);
	p->timer_up = true;
	return 0;
}

void emu_place_stop(struct emu_place *p)
{
	if (!p->started)
		return;
	if (p->timer_up) {
		uv_timer_stop(&p->timer);
		uv_close((uv_handle_t *)&p->timer, NULL);
		p->timer_up = false;
	}
	if (p->fd >= 0) {
		close(p->fd); /* releases the claim */
		p->fd = -1;
	}
}
