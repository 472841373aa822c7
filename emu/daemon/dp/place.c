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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp.h"

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

/* Does another daemon hold a claim on a CPU of our mask? */
static bool place_peers(const struct emu_place *p)
{
	for (int c = 0; c < CPU_SETSIZE; c++) {
		struct flock fl;

		if (c == p->cpu || !CPU_ISSET(c, &p->allowed))
			continue;
		if (!place_lock(p->fd, F_OFD_GETLK, F_WRLCK, c, &fl) && fl.l_type != F_UNLCK)
			return true;
	}
	return false;
}

/* Keep the daemon to one CPU. 0 or -errno. */
static int keep_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
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

/* Claim the first CPU of the mask that no other daemon holds. */
static bool place_claim(struct emu_place *p)
{
	for (int c = 0; c < CPU_SETSIZE; c++) {
		struct flock fl;

		if (CPU_ISSET(c, &p->allowed) && !place_lock(p->fd, F_OFD_SETLK, F_WRLCK, c, &fl)) {
			p->cpu = c;
			return true;
		}
	}
	return false;
}

static void on_look(uv_timer_t *t)
{
	struct emu_place *p = t->data;

	/* A daemon that found every CPU claimed takes one that became free. */
	if (p->cpu < 0 && !place_claim(p))
		return;
	place_pin(p, place_peers(p));
}

int emu_place_start(struct emu_place *p, uv_loop_t *loop, int mode, const char *rundir)
{
	char path[sizeof(p->rundir) + 16];

	p->fd = -1;
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
	uv_timer_start(&p->timer, on_look, EMU_PLACE_LOOK_MS, EMU_PLACE_LOOK_MS);
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
