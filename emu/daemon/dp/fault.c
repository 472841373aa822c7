/* SPDX-License-Identifier: MIT */
/*
 * Seeded fault injection: the RNIC loses, duplicates, delays, reorders and
 * corrupts its own packets, and forges replies, on purpose, by rule
 * (`uroced --fault`, `uroce fault DEV add`; the syntax is parsed by
 * emu/common/faultrule.c and documented in docs/daemon.md).
 *
 * Where: net.c hands every packet the engine sends (emu_net_send) and every
 * packet received for the device's address (rx_one) to emu_fault_tx /
 * emu_fault_rx, but only while dev->fault_on says that a rule exists or a
 * packet is held: without rules the data path pays one branch. No packet is
 * exempt, whoever produced it. What comes out goes on through
 * emu_net_xmit (batch, capture, sendmmsg) or emu_net_deliver (capture, the
 * engine's receive checks); a packet dropped on transmit is still written
 * to the capture, which shows what the RNIC meant to send.
 *
 * Decisions: rules are tried in id order; the first whose conditions the
 * packet meets (common_fault_match) and whose nth/every/prob/count say
 * "this one" (emu_fault_decide) acts on it, and no later rule sees it.
 * Each rule draws from its own generator (splitmix64), seeded from the
 * device seed (--seed) and the rule id, or from the rule's seed=: the
 * decisions depend only on the seed, the rules and the sequence of packets,
 * never on time. Every fault is counted per rule (`uroce fault DEV list`)
 * and per action (daemon counters fault_*, `uroce counters`), logged (the
 * first EMU_FAULT_LOG_FIRST of each rule at info level) and, with
 * --fault-log, written as one line to the decision log.
 *
 * Held packets (delay, reorder) keep a copy and their route; a libuv timer
 * releases them when due, and a reordered packet also goes as soon as the
 * given number of later packets of its direction has passed. Released
 * packets are not matched again.
 *
 * This file neither parses rules nor decides anything for the transport:
 * the engine sees only the packets that come out, as from a real network.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/icrc.h>
#include <wire/opcode.h>
#include <wire/psn.h>
#include "dp.h"

/* Faults of one rule logged at info level before it goes quiet. */
#define EMU_FAULT_LOG_FIRST 10
/* Packets held at once (delay, reorder); beyond it a packet passes as is. */
#define EMU_FAULT_MAX_HELD 4096
/* A reordered packet waits at most this long for the packets it lets pass. */
#define EMU_FAULT_REORDER_HOLD_MS 1000
/* Capture comments (pcapng) of faulted packets, at most this long. */
#define EMU_FAULT_NOTE_BYTES 384
/* A ghost ACK acknowledges this far beyond the response it replaces. */
#define EMU_FAULT_GHOST_PSN_AHEAD 0x400000u

struct emu_fault_rule {
	struct emu_list link; /* in fault->rules, ascending id */
	struct common_fault_rule r;
	uint32_t id;
	struct emu_fault_state st;
};

struct fault_held {
	struct emu_list link; /* in fault->held, in the order held */
	uint8_t dir;
	uint32_t after;	 /* reorder: later packets still to pass */
	uint64_t due_us; /* released at this time at the latest */
	struct xport_route rt;
	char note[EMU_FAULT_NOTE_BYTES]; /* its capture comment */
	size_t len;
	uint8_t buf[];
};

struct emu_fault {
	struct emu_list rules;
	uint32_t nrules;
	uint32_t next_id;
	uint64_t seed;
	uint64_t seq[2]; /* packets seen, per direction */
	struct emu_list held;
	uint32_t nheld;
	uv_timer_t timer;
	bool timer_started;
	FILE *log; /* --fault-log, or NULL */
	struct emu_afile *log_file;
};

/* Bytes of decision log waiting for the file at most (a line is ~90). */
#define EMU_FAULT_LOG_BUFFER (4u << 20)

/* Daemon counter of each action. */
static const enum emu_dcnt action_cnt[COMMON_FAULT_ACTION_COUNT] = {
    [COMMON_FAULT_DROP] = EMU_DCNT_FAULT_DROPPED,
    [COMMON_FAULT_DUP] = EMU_DCNT_FAULT_DUPLICATED,
    [COMMON_FAULT_DELAY] = EMU_DCNT_FAULT_DELAYED,
    [COMMON_FAULT_REORDER] = EMU_DCNT_FAULT_REORDERED,
    [COMMON_FAULT_CORRUPT] = EMU_DCNT_FAULT_CORRUPTED,
    [COMMON_FAULT_RNR_NAK] = EMU_DCNT_FAULT_FORGED,
    [COMMON_FAULT_SEQ_NAK] = EMU_DCNT_FAULT_FORGED,
    [COMMON_FAULT_GHOST_ACK] = EMU_DCNT_FAULT_FORGED,
};

/* ------------------------------------------------------------------------ */
/* Pure parts: the generator, the decision, the packet rewrites.            */

uint64_t emu_fault_rng_next(uint64_t *state)
{
	/* splitmix64 (Steele, Lea, Flood 2014; the seeder of xoshiro). */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void emu_fault_state_init(struct emu_fault_state *s, const struct common_fault_rule *r,
			  uint64_t dev_seed, uint32_t id)
{
	uint64_t mix = dev_seed ^ ((uint64_t)id * 0xd6e8feb86659fd93ull);

	memset(s, 0, sizeof(*s));
	s->rng = r->cond & COMMON_FAULT_C_SEED ? r->seed : emu_fault_rng_next(&mix);
}

bool emu_fault_decide(const struct common_fault_rule *r, struct emu_fault_state *s)
{
	uint64_t m = ++s->matched;

	if ((r->cond & COMMON_FAULT_C_COUNT) && s->fired >= r->count)
		return false;
	if ((r->cond & COMMON_FAULT_C_NTH) && m != r->nth)
		return false;
	if ((r->cond & COMMON_FAULT_C_EVERY) && m % r->every)
		return false;
	if ((r->cond & COMMON_FAULT_C_PROB) && !r->prob_one &&
	    emu_fault_rng_next(&s->rng) >= r->prob)
		return false;
	s->fired++;
	return true;
}

/* The ICRC a packet of route rt carries: the pseudo header of a uroce
 * sender (IPv4 ID 0 with DF, PROTOCOL.md 12), as the engine computes it. */
static uint32_t route_icrc(const struct xport_route *rt, const uint8_t *ib, size_t ib_len)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (!memcmp(rt->sgid, v4, sizeof(v4)))
		return wire_icrc_udp4(rt->sgid + 12, rt->dgid + 12, rt->sport, rt->dport, ib,
				      ib_len);
	return wire_icrc_udp6(rt->sgid, rt->dgid, rt->sport, rt->dport, ib, ib_len);
}

uint64_t emu_fault_corrupt(uint8_t *pkt, size_t len, uint64_t draw)
{
	/* After the BTH: every bit there is covered by the ICRC (BTH byte 4
	 * is masked out of it), and the headers the receiver parses first
	 * stay intact, so the packet fails exactly the ICRC check. */
	uint64_t bits = (uint64_t)(len - WIRE_BTH_BYTES) * 8;
	uint64_t bit = (uint64_t)WIRE_BTH_BYTES * 8 + draw % bits;

	pkt[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
	return bit;
}

int emu_fault_forge(uint8_t *pkt, size_t *len, unsigned action, uint32_t arg,
		    const struct xport_route *rt)
{
	struct wire_bth *bth = (struct wire_bth *)pkt;
	const struct wire_opcode_info *in = wire_opcode_info(wire_bth_get_opcode(bth)), *out;
	uint8_t ack_op, syn;
	uint32_t msn;
	size_t n;

	if (!in || !(in->mask & WIRE_AETH_MASK) || *len < (size_t)in->hdr_bytes + WIRE_ICRC_BYTES)
		return -EINVAL;
	msn = wire_aeth_get_msn((const struct wire_aeth *)(pkt + in->offset[WIRE_HDR_AETH]));
	/* An Acknowledge of the same transport (RC 0x11, XRC 0xB1). */
	ack_op = (uint8_t)((in->opcode & 0xe0) | (WIRE_OP_RC_ACKNOWLEDGE & 0x1f));
	out = wire_opcode_info(ack_op);
	if (!out)
		return -EINVAL;
	switch (action) {
	case COMMON_FAULT_RNR_NAK:
		syn = wire_aeth_syndrome(WIRE_AETH_RNR_NAK, arg);
		break;
	case COMMON_FAULT_SEQ_NAK:
		/* Expected PSN = this one: the requester goes back to it; the
		 * responder takes what it already executed as duplicates. */
		syn = wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR);
		break;
	case COMMON_FAULT_GHOST_ACK:
		syn = WIRE_AETH_ACK_UNLIMITED;
		wire_bth_set_psn(bth,
				 wire_psn_add(wire_bth_get_psn(bth), EMU_FAULT_GHOST_PSN_AHEAD));
		break;
	default:
		return -EINVAL;
	}
	wire_bth_set_opcode(bth, ack_op);
	wire_bth_set_se(bth, 0);
	wire_bth_set_padcnt(bth, 0);
	wire_bth_set_ackreq(bth, 0);
	/* A response carries no extended header before the AETH but XRC's
	 * none, so BTH .. AETH keeps its place; what follows it goes. */
	memset(pkt + WIRE_BTH_BYTES, 0, out->hdr_bytes - WIRE_BTH_BYTES);
	wire_aeth_set_syndrome((struct wire_aeth *)(pkt + out->offset[WIRE_HDR_AETH]), syn);
	wire_aeth_set_msn((struct wire_aeth *)(pkt + out->offset[WIRE_HDR_AETH]), msn);
	n = out->hdr_bytes;
	wire_icrc_put(pkt + n, route_icrc(rt, pkt, n));
	*len = n + WIRE_ICRC_BYTES;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Rules.                                                                    */

static void fault_update_on(struct emu_dev *dev)
{
	struct emu_fault *f = dev->fault;

	dev->fault_on = f && (f->nrules || f->nheld);
}

int emu_fault_init(struct emu_dev *dev, uint64_t seed, const char *log_path)
{
	struct emu_fault *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	emu_list_init(&f->rules);
	emu_list_init(&f->held);
	f->next_id = 1;
	f->seed = seed;
	if (log_path) {
		char msg[256];

		f->log_file =
		    emu_afile_open(log_path, "fault log", EMU_FAULT_LOG_BUFFER,
				   &dev->dcnt[EMU_DCNT_FAULT_LOG_ERRORS], NULL, msg, sizeof(msg));
		if (!f->log_file) {
			int err = -errno;

			free(f);
			return err;
		}
		f->log = emu_afile_stream(f->log_file);
		if (!f->log) {
			emu_afile_close(f->log_file);
			free(f);
			return -ENOMEM;
		}
	}
	dev->fault = f;
	fault_update_on(dev);
	return 0;
}

static void on_fault_timer(uv_timer_t *h);

void emu_fault_start(struct emu_dev *dev)
{
	struct emu_fault *f = dev->fault;

	if (!f)
		return;
	uv_timer_init(dev->loop, &f->timer);
	f->timer.data = dev;
	uv_unref((uv_handle_t *)&f->timer);
	f->timer_started = true;
	if (f->log_file)
		emu_afile_start(f->log_file, dev->loop);
}

void emu_fault_fini(struct emu_dev *dev)
{
	struct emu_fault *f = dev->fault;
	struct emu_list *pos, *tmp;

	if (!f)
		return;
	/* Packets still held are lost with the RNIC, as in a switch. */
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &f->held)
	{
		free(EMU_CONTAINER_OF(pos, struct fault_held, link));
	}
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &f->rules)
	{
		free(EMU_CONTAINER_OF(pos, struct emu_fault_rule, link));
	}
	if (f->log && fclose(f->log))
		dev->dcnt[EMU_DCNT_FAULT_LOG_ERRORS]++;
	emu_afile_close(f->log_file); /* writes out what is left */
	/* The timer handles were closed with the loop. */
	free(f);
	dev->fault = NULL;
	dev->fault_on = false;
}

int emu_fault_add(struct emu_dev *dev, const struct common_fault_rule *r, uint32_t *id)
{
	struct emu_fault *f = dev->fault;
	struct emu_fault_rule *fr;

	if (!f)
		return -ENODEV;
	if (f->nrules >= EMU_FAULT_MAX_RULES)
		return -ENOSPC;
	fr = calloc(1, sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	fr->r = *r;
	fr->id = f->next_id++;
	emu_fault_state_init(&fr->st, r, f->seed, fr->id);
	emu_list_add_tail(&f->rules, &fr->link);
	f->nrules++;
	fault_update_on(dev);
	emu_info("fault rule %u: %s", fr->id, fr->r.text);
	*id = fr->id;
	return 0;
}

static void rule_free(struct emu_dev *dev, struct emu_fault_rule *fr)
{
	emu_info("fault rule %u removed after %llu faults: %s", fr->id,
		 (unsigned long long)fr->st.fired, fr->r.text);
	emu_list_del(&fr->link);
	dev->fault->nrules--;
	free(fr);
}

int emu_fault_del(struct emu_dev *dev, uint32_t id)
{
	struct emu_fault *f = dev->fault;
	struct emu_list *pos, *tmp;

	if (!f)
		return -ENOENT;
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &f->rules)
	{
		struct emu_fault_rule *fr = EMU_CONTAINER_OF(pos, struct emu_fault_rule, link);

		if (fr->id == id) {
			rule_free(dev, fr);
			fault_update_on(dev);
			return 0;
		}
	}
	return -ENOENT;
}

void emu_fault_clear(struct emu_dev *dev)
{
	struct emu_fault *f = dev->fault;

	if (!f)
		return;
	while (!emu_list_empty(&f->rules))
		rule_free(dev, EMU_CONTAINER_OF(f->rules.next, struct emu_fault_rule, link));
	fault_update_on(dev);
}

int emu_fault_get(const struct emu_dev *dev, uint32_t from_id, struct emu_fault_info *info)
{
	const struct emu_fault *f = dev->fault;
	const struct emu_list *pos;

	if (!f)
		return -ENOENT;
	for (pos = f->rules.next; pos != &f->rules; pos = pos->next) {
		const struct emu_fault_rule *fr =
		    EMU_CONTAINER_OF(pos, const struct emu_fault_rule, link);

		if (fr->id < from_id)
			continue;
		info->id = fr->id;
		info->matched = fr->st.matched;
		info->fired = fr->st.fired;
		info->text = fr->r.text;
		return 0;
	}
	return -ENOENT;
}

uint32_t emu_fault_nrules(const struct emu_dev *dev)
{
	return dev->fault ? dev->fault->nrules : 0;
}

uint64_t emu_fault_seed(const struct emu_dev *dev)
{
	return dev->fault ? dev->fault->seed : 0;
}

/* ------------------------------------------------------------------------ */
/* Packets.                                                                  */

static int emit(struct emu_dev *dev, unsigned dir, const struct xport_route *rt, const uint8_t *pkt,
		size_t len)
{
	if (dir == COMMON_FAULT_TX)
		return emu_net_xmit(dev, rt, pkt, len);
	emu_net_deliver(dev, rt, pkt, len);
	return 0;
}

/* emit() with a capture comment for the frame. */
static void emit_noted(struct emu_dev *dev, unsigned dir, const struct xport_route *rt,
		       const uint8_t *pkt, size_t len, const char *note)
{
	emu_capture_note(dev, note);
	emit(dev, dir, rt, pkt, len);
	emu_capture_note(dev, NULL);
}

static void arm_timer(struct emu_dev *dev)
{
	struct emu_fault *f = dev->fault;
	struct emu_list *pos;
	uint64_t due = 0, now;

	if (!f->timer_started)
		return;
	for (pos = f->held.next; pos != &f->held; pos = pos->next) {
		struct fault_held *h = EMU_CONTAINER_OF(pos, struct fault_held, link);

		if (!due || h->due_us < due)
			due = h->due_us;
	}
	if (!due) {
		uv_timer_stop(&f->timer);
		return;
	}
	now = emu_wait_now_us();
	uv_timer_start(&f->timer, on_fault_timer, due > now ? (due - now + 999) / 1000 : 0, 0);
}

/* Release held packets: those due by now_us (now_us != 0), or those whose
 * reorder count a passing packet of direction dir brought to zero. */
static void release(struct emu_dev *dev, int dir, uint64_t now_us)
{
	struct emu_fault *f = dev->fault;
	struct emu_list *pos, *tmp, out;
	bool any = false;

	emu_list_init(&out);
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &f->held)
	{
		struct fault_held *h = EMU_CONTAINER_OF(pos, struct fault_held, link);
		bool go = now_us && h->due_us <= now_us;

		if (!now_us && h->dir == dir && h->after && !--h->after)
			go = true;
		if (go) {
			emu_list_del(&h->link);
			emu_list_add_tail(&out, &h->link);
			f->nheld--;
			any = true;
		}
	}
	/* Taken off the list first: emitting may come back here. */
	EMU_LIST_FOR_EACH_SAFE(pos, tmp, &out)
	{
		struct fault_held *h = EMU_CONTAINER_OF(pos, struct fault_held, link);

		emit_noted(dev, h->dir, &h->rt, h->buf, h->len, h->note);
		free(h);
	}
	if (any) {
		fault_update_on(dev);
		arm_timer(dev);
	}
}

static void on_fault_timer(uv_timer_t *t)
{
	struct emu_dev *dev = t->data;

	release(dev, -1, emu_wait_now_us());
	/* libuv's clock has millisecond steps: a timer may fire a little
	 * before the deadline it was armed for, and must then go again. */
	arm_timer(dev);
	/* The pass after this callback sends what was released and runs
	 * what the engine scheduled for what it received. */
	emu_wait_note_work(&dev->wait);
}

/* Hold a copy of the packet; false when the queue is full or out of memory. */
static bool hold(struct emu_dev *dev, unsigned dir, const struct common_fault_rule *r,
		 const struct xport_route *rt, const uint8_t *pkt, size_t len, const char *note)
{
	struct emu_fault *f = dev->fault;
	struct fault_held *h;
	uint64_t ms = r->action == COMMON_FAULT_DELAY ? r->arg : EMU_FAULT_REORDER_HOLD_MS;

	if (f->nheld >= EMU_FAULT_MAX_HELD || !(h = malloc(sizeof(*h) + len)))
		return false;
	h->dir = (uint8_t)dir;
	h->after = r->action == COMMON_FAULT_REORDER ? r->arg : 0;
	h->due_us = emu_wait_now_us() + ms * 1000;
	h->rt = *rt;
	snprintf(h->note, sizeof(h->note), "%s", note);
	h->len = len;
	memcpy(h->buf, pkt, len);
	emu_list_add_tail(&f->held, &h->link);
	f->nheld++;
	fault_update_on(dev);
	arm_timer(dev);
	return true;
}

static void account(struct emu_dev *dev, struct emu_fault_rule *fr,
		    const struct common_fault_pkt *p, uint64_t seq)
{
	struct emu_fault *f = dev->fault;
	const struct wire_opcode_info *info = wire_opcode_info(p->opcode);
	const char *op = info ? info->sym : "unknown";

	dev->dcnt[action_cnt[fr->r.action]]++;
	if (f->log && emu_afile_full(f->log_file)) {
		dev->dcnt[EMU_DCNT_FAULT_LOG_ERRORS]++; /* the file is not keeping up */
	} else if (f->log) {
		if (fprintf(
			f->log,
			"rule=%u match=%llu fault=%llu pkt=%llu %s %s %s qpn=0x%06x psn=0x%06x\n",
			fr->id, (unsigned long long)fr->st.matched,
			(unsigned long long)fr->st.fired, (unsigned long long)seq,
			common_fault_dir_name(p->dir), common_fault_action_name(fr->r.action), op,
			p->qpn, p->psn) < 0)
			dev->dcnt[EMU_DCNT_FAULT_LOG_ERRORS]++;
		emu_afile_dirty(f->log_file);
	}
	if (fr->st.fired <= EMU_FAULT_LOG_FIRST)
		emu_info("fault rule %u: %s %s %s QP 0x%06x PSN 0x%06x (fault %llu)%s", fr->id,
			 common_fault_dir_name(p->dir), common_fault_action_name(fr->r.action), op,
			 p->qpn, p->psn, (unsigned long long)fr->st.fired,
			 fr->st.fired == EMU_FAULT_LOG_FIRST ? "; further faults of this rule are "
							       "counted, not logged"
							     : "");
}

/* The first rule that fires on the packet, or NULL. */
static struct emu_fault_rule *pick(struct emu_fault *f, const struct common_fault_pkt *p)
{
	struct emu_list *pos;

	for (pos = f->rules.next; pos != &f->rules; pos = pos->next) {
		struct emu_fault_rule *fr = EMU_CONTAINER_OF(pos, struct emu_fault_rule, link);

		if (common_fault_match(&fr->r, p) && emu_fault_decide(&fr->r, &fr->st))
			return fr;
	}
	return NULL;
}

/* The capture comment of a fault: the rule, the fault's number, what it did. */
static void describe(char *buf, size_t len, const struct emu_fault_rule *fr, const char *what)
{
	snprintf(buf, len, "uroce fault rule %u, fault %llu (%s): %s", fr->id,
		 (unsigned long long)fr->st.fired, fr->r.text, what);
}

/* Apply the faults to one packet of direction dir; what survives is
 * emitted. Returns what emitting an untouched packet returned, else 0. */
static int fault_packet(struct emu_dev *dev, unsigned dir, const struct xport_route *rt,
			const uint8_t *pkt, size_t len)
{
	struct emu_fault *f = dev->fault;
	uint8_t copy[XPORT_MAX_PKT_BYTES];
	char what[96], note[EMU_FAULT_NOTE_BYTES];
	struct common_fault_pkt p;
	struct emu_fault_rule *fr = NULL;
	uint64_t seq = ++f->seq[dir];
	size_t n = len;
	int rc;

	if (len <= sizeof(copy) && !common_fault_pkt_of(pkt, len, dir, &p))
		fr = pick(f, &p);
	if (!fr) {
		rc = emit(dev, dir, rt, pkt, len);
		release(dev, (int)dir, 0);
		return rc;
	}
	switch (fr->r.action) {
	case COMMON_FAULT_DROP:
		/* Lost on the way; the capture still shows it. */
		describe(note, sizeof(note), fr,
			 dir == COMMON_FAULT_TX ? "dropped, never sent" : "dropped on arrival");
		if (dev->capture) {
			emu_capture_note(dev, note);
			emu_capture_packet(dev, rt, pkt, len);
		}
		break;
	case COMMON_FAULT_DUP:
		describe(note, sizeof(note), fr, "duplicated, copy 1 of 2");
		emit_noted(dev, dir, rt, pkt, len, note);
		describe(note, sizeof(note), fr, "duplicated, copy 2 of 2");
		emit_noted(dev, dir, rt, pkt, len, note);
		release(dev, (int)dir, 0);
		break;
	case COMMON_FAULT_DELAY:
	case COMMON_FAULT_REORDER:
		if (fr->r.action == COMMON_FAULT_DELAY)
			snprintf(what, sizeof(what), "delayed %u ms", fr->r.arg);
		else
			snprintf(what, sizeof(what), "held back until %u later packets passed",
				 fr->r.arg);
		describe(note, sizeof(note), fr, what);
		if (!hold(dev, dir, &fr->r, rt, pkt, len, note)) {
			emu_warn("fault rule %u: too many packets held, one passes as is", fr->id);
			emit(dev, dir, rt, pkt, len);
		}
		break;
	case COMMON_FAULT_CORRUPT:
		memcpy(copy, pkt, len);
		snprintf(what, sizeof(what), "bit %llu flipped: bad ICRC",
			 (unsigned long long)emu_fault_corrupt(copy, len,
							       emu_fault_rng_next(&fr->st.rng)));
		describe(note, sizeof(note), fr, what);
		emit_noted(dev, dir, rt, copy, len, note);
		release(dev, (int)dir, 0);
		break;
	default: /* the forged replies; common_fault_match saw an AETH */
		memcpy(copy, pkt, len);
		if (emu_fault_forge(copy, &n, fr->r.action, fr->r.arg, rt)) {
			emit(dev, dir, rt, pkt, len);
		} else {
			const struct wire_opcode_info *was = wire_opcode_info(p.opcode);

			snprintf(what, sizeof(what), "forged %s in place of %s PSN 0x%06x",
				 common_fault_action_name(fr->r.action), was ? was->sym : "?",
				 p.psn);
			describe(note, sizeof(note), fr, what);
			emit_noted(dev, dir, rt, copy, n, note);
		}
		release(dev, (int)dir, 0);
		break;
	}
	account(dev, fr, &p, seq);
	return 0;
}

int emu_fault_tx(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len)
{
	return fault_packet(dev, COMMON_FAULT_TX, rt, pkt, len);
}

void emu_fault_rx(struct emu_dev *dev, const struct xport_route *rt, const void *pkt, size_t len)
{
	fault_packet(dev, COMMON_FAULT_RX, rt, pkt, len);
}
