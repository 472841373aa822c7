/* SPDX-License-Identifier: MIT */
/*
 * The receive ICRC check (PROTOCOL.md 6 and 12) and the per-sender IPv4 ID
 * tracker behind the "tracked" mode. The ICRC covers the IPv4 ID, which a
 * UDP socket does not show. When the net layer saw the IP header
 * (rt.ip_id_known, a raw socket) the check is exact for every sender. When
 * it did not, the check first assumes what a uroce peer sends (DF and ID
 * 0, or for a segment of a GSO send its index, rt.ip_id_guess); a packet that does not match is
 * solved for its ID (wire's ID solver: the CRC is linear in the 16 ID bits; one solver is kept per
 * recent packet length), and the
 * device's mode decides whether that ID is believable:
 *
 *  - XPORT_ICRC_ID0: never (a uroce-only network; full 32 bits).
 *  - XPORT_ICRC_ANY: always (16 bits of strength).
 *  - XPORT_ICRC_TRACKED: when it follows the sender's previous IDs. Linux
 *    (rxe, and any IPv4 sender through ip_idents) counts IDs up per
 *    destination, by one per packet plus, after a pause, a random jump below
 *    the jiffies the pause lasted (at most one per millisecond at HZ 1000).
 *    A solved ID is accepted when it is 0..7 ahead of the last accepted one,
 *    plus one more for every millisecond since then (capped at 1024): a
 *    corrupted packet solves to a uniformly random ID, so within a stream
 *    at most 16 of the 2^32 CRC values pass (28 bits; docs/transport.md
 *    has the arithmetic). An ID outside that window is dropped but
 *    remembered as a candidate: the next packet that follows it starts a new
 *    sequence (a sender that restarted, a burst of losses, a jump past the
 *    cap). The first packet of a sender never seen is accepted with any ID
 *    and starts its sequence. A sender whose packets match ID 0 is
 *    remembered as such, so that a corrupted packet of a uroce peer, which
 *    solves to some other ID, is rejected (its 32 bits are kept), except
 *    for the one ID after its last accepted one, below WIRE_GSO_MAX_SEGS:
 *    the next segment of a GSO datagram that the path cut (31 bits).
 *
 * The tracker is a fixed table (XPORT_IDTRACK_SLOTS, 4-way sets by address
 * hash): a sender takes a slot that is free or idle for a second; when none
 * is, it is checked as a first-seen sender and not remembered, so a flood of
 * spoofed sources can neither grow memory nor push out active senders.
 * Every path is counted (XPORT_CNT_ICRC_*).
 */
#include <string.h>

#include <wire/icrc.h>
#include <wire/gso.h>
#include <wire/inet.h>
#include "xport_int.h"

#define IDTRACK_WAYS 4
#define IDTRACK_SETS (XPORT_IDTRACK_SLOTS / IDTRACK_WAYS)
/* IDs a sender may skip between two packets with no pause (its own lost
 * packets, other traffic to us sharing its ID counter). */
#define IDTRACK_BASE_WINDOW 7u
/* Linux's jump after a pause is below the jiffies elapsed: <= 1 per ms. */
#define IDTRACK_US_PER_ID 1000u
#define IDTRACK_MAX_PAUSE_IDS 1024u
/* A slot idle this long may be given to another sender. */
#define IDTRACK_IDLE_US 1000000u

_Static_assert(XPORT_IDTRACK_SLOTS % IDTRACK_WAYS == 0, "whole sets");

uint32_t xport__idtrack_window(uint64_t elapsed_us)
{
	uint64_t pause = elapsed_us / IDTRACK_US_PER_ID;

	if (pause > IDTRACK_MAX_PAUSE_IDS)
		pause = IDTRACK_MAX_PAUSE_IDS;
	return IDTRACK_BASE_WINDOW + (uint32_t)pause;
}

static unsigned idtrack_set(const uint8_t addr[4])
{
	uint32_t a;

	memcpy(&a, addr, 4);
	a *= 0x9e3779b1u; /* Fibonacci hashing: the high bits mix every byte */
	return (a >> 16) % IDTRACK_SETS;
}

static uint64_t idtrack_seen(const struct xport_idtrack_ent *e)
{
	return e->has_cand && e->cand_us > e->last_us ? e->cand_us : e->last_us;
}

/*
 * The sender's slot, or a new one (*created) when a slot of its set is free
 * or idle; NULL when none is. *evicted tells that a remembered sender was
 * forgotten for it.
 */
static struct xport_idtrack_ent *idtrack_find(struct xport_idtrack *t, const uint8_t addr[4],
					      uint64_t now_us, bool *created, bool *evicted)
{
	struct xport_idtrack_ent *set = &t->ent[idtrack_set(addr) * IDTRACK_WAYS];
	struct xport_idtrack_ent *pick = NULL;
	static const uint8_t none[4];

	*created = *evicted = false;
	for (unsigned i = 0; i < IDTRACK_WAYS; i++)
		if (!memcmp(set[i].addr, addr, 4))
			return &set[i];
	for (unsigned i = 0; i < IDTRACK_WAYS; i++) {
		if (!memcmp(set[i].addr, none, 4)) {
			pick = &set[i];
			break;
		}
		if (now_us - idtrack_seen(&set[i]) >= IDTRACK_IDLE_US &&
		    (!pick || idtrack_seen(&set[i]) < idtrack_seen(pick)))
			pick = &set[i];
	}
	if (!pick)
		return NULL;
	*created = true;
	*evicted = memcmp(pick->addr, none, 4) != 0;
	memset(pick, 0, sizeof(*pick));
	memcpy(pick->addr, addr, 4);
	return pick;
}

/* Is `id` 0..window IDs ahead of `from` (mod 2^16)? `lo` 1 excludes equal. */
static bool idtrack_ahead(uint16_t from, uint16_t id, uint64_t elapsed_us, unsigned lo)
{
	uint16_t d = (uint16_t)(id - from);

	return d >= lo && d <= xport__idtrack_window(elapsed_us);
}

enum xport_idtrack_verdict xport__idtrack_solved(struct xport_idtrack *t, const uint8_t addr[4],
						 uint16_t id, uint64_t now_us, bool *evicted)
{
	bool created;
	struct xport_idtrack_ent *e = idtrack_find(t, addr, now_us, &created, evicted);

	if (!e)
		return XPORT_IDT_UNTRACKED;
	if (created) {
		/* The first packet of this sender: any ID starts its sequence. */
		e->counting = true;
		e->last = id;
		e->last_us = now_us;
		return XPORT_IDT_FIRST;
	}
	if (e->counting && idtrack_ahead(e->last, id, now_us - e->last_us, 0)) {
		e->last = id;
		e->last_us = now_us;
		e->has_cand = false;
		return XPORT_IDT_TRACKED;
	}
	/* A uroce peer's GSO datagram that the path cut: its segments carry
	 * IDs 0, 1, 2, ... (wire/gso.h), one more than the last each. */
	if (!e->counting && id == (uint16_t)(e->last + 1) && id < WIRE_GSO_MAX_SEGS) {
		e->last = id;
		e->last_us = now_us;
		return XPORT_IDT_GSO;
	}
	if (e->has_cand && idtrack_ahead(e->cand, id, now_us - e->cand_us, 1)) {
		e->counting = true;
		e->last = id;
		e->last_us = now_us;
		e->has_cand = false;
		return XPORT_IDT_RESYNC;
	}
	e->has_cand = true;
	e->cand = id;
	e->cand_us = now_us;
	return XPORT_IDT_REJECT;
}

void xport__idtrack_zero(struct xport_idtrack *t, const uint8_t addr[4], uint64_t now_us,
			 bool *evicted)
{
	bool created;
	struct xport_idtrack_ent *e = idtrack_find(t, addr, now_us, &created, evicted);

	if (!e)
		return;
	/* A counting sender's IDs pass 0 every 65536 packets; any other
	 * ID 0 means the sender now sends ID 0 (a uroce peer). */
	if (e->counting && !idtrack_ahead(e->last, 0, now_us - e->last_us, 1))
		e->counting = false;
	e->last = 0;
	e->last_us = now_us;
}

/*
 * The ID solver for IB packets of ib_len bytes, kept for the last few
 * lengths: preparing one costs tens of microseconds (GF(2) matrix powers),
 * a solve with it a few dozen operations.
 */
static const struct wire_icrc_id_solver *icrc_solver(struct xport_dev *dev, size_t ib_len)
{
	struct wire_icrc_id_solver *sv;

	for (unsigned i = 0; i < XPORT_ID_SOLVERS; i++)
		if (dev->id_solver[i].ib_len == ib_len)
			return &dev->id_solver[i];
	sv = &dev->id_solver[dev->id_solver_next++ % XPORT_ID_SOLVERS];
	wire_icrc_id_solver_init(sv, ib_len);
	return sv;
}

/* The ID of a packet that matched only for another ID: believable? */
static bool icrc_id_ok(struct xport_dev *dev, const struct xport_route *rt, uint16_t id)
{
	bool evicted;
	enum xport_idtrack_verdict v;

	if (dev->icrc_mode == XPORT_ICRC_ANY) {
		dev->cnt[XPORT_CNT_ICRC_ID_GUESSED]++;
		return true;
	}
	v = xport__idtrack_solved(&dev->idtrack, rt->sgid + 12, id, dev->ops->now_us(dev->ctx),
				  &evicted);
	if (evicted)
		dev->cnt[XPORT_CNT_ICRC_ID_EVICTED]++;
	switch (v) {
	case XPORT_IDT_TRACKED:
		dev->cnt[XPORT_CNT_ICRC_ID_TRACKED]++;
		return true;
	case XPORT_IDT_RESYNC:
		dev->cnt[XPORT_CNT_ICRC_ID_RESYNC]++;
		return true;
	case XPORT_IDT_GSO:
		dev->cnt[XPORT_CNT_ICRC_ID_GSO]++;
		return true;
	case XPORT_IDT_UNTRACKED:
		/* Checked as a first-seen sender, and counted as one too. */
		dev->cnt[XPORT_CNT_ICRC_ID_UNTRACKED]++;
		dev->cnt[XPORT_CNT_ICRC_ID_FIRST]++;
		return true;
	case XPORT_IDT_FIRST:
		dev->cnt[XPORT_CNT_ICRC_ID_FIRST]++;
		return true;
	case XPORT_IDT_REJECT:
	default:
		dev->cnt[XPORT_CNT_ICRC_ID_REJECTED_WINDOW]++;
		return false;
	}
}

bool xport__recv_icrc_ok(struct xport_dev *dev, const struct xport_route *rt, const uint8_t *buf,
			 size_t len)
{
	size_t ib_len = len - WIRE_ICRC_BYTES;
	uint32_t icrc = wire_icrc_get(buf + ib_len);
	uint32_t got = xport__icrc(rt, buf, ib_len);
	bool v4 = xport__gid_is_v4(rt->sgid);
	uint16_t id;

	if (got == icrc) {
		if (!v4 || rt->ip_id_known) {
			dev->cnt[XPORT_CNT_ICRC_EXACT]++;
		} else {
			dev->cnt[XPORT_CNT_ICRC_ID0]++;
			if (dev->icrc_mode == XPORT_ICRC_TRACKED) {
				bool evicted;

				xport__idtrack_zero(&dev->idtrack, rt->sgid + 12,
						    dev->ops->now_us(dev->ctx), &evicted);
				if (evicted)
					dev->cnt[XPORT_CNT_ICRC_ID_EVICTED]++;
			}
		}
		return true;
	}
	/* The header was seen, or IPv6 (no ID): the check was exact. */
	if (!v4 || rt->ip_id_known || dev->icrc_mode == XPORT_ICRC_ID0)
		return false;
	/* PROTOCOL.md 12: a sender whose kernel picks non-zero IDs (Linux rxe). */
	if (wire_icrc_id_solve(icrc_solver(dev, ib_len), got ^ icrc, &id))
		return false;
	if (!icrc_id_ok(dev, rt, id))
		return false;
	dev->last_solved_id = id;
	return true;
}
