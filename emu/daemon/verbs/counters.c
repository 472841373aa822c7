/* SPDX-License-Identifier: MIT */
/*
 * QUERY_COUNTERS: the drop and event counters of the transport engine
 * (per device and per QP, uroce/counters.h) and the daemon's own counters
 * (uroce/dev_counters.h), in one control-socket response. `uroce counters`
 * prints them by name. Every drop the RNIC makes has a counter here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "verbs.h"

_Static_assert(XPORT_DROP_COUNT + XPORT_CNT_COUNT + EMU_DCNT_COUNT <= UROCE_COUNTERS_MAX,
	       "counters fit the QUERY_COUNTERS response");

int emu_counters_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_query_counters_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct uroce_query_counters_resp *o;
	const uint64_t *drops = dev->x.drops, *cnt = dev->x.cnt;
	uint64_t *v;

	if (r->qpn) {
		struct emu_qp *qp = emu_dev_qp_by_qpn(dev, r->qpn & 0xffffffu);

		if (!qp || r->qpn > 0xffffffu)
			return -ENOENT;
		drops = qp->x.drops;
		cnt = qp->x.cnt;
	}
	o = EMU_REPLY(rep, struct uroce_query_counters_resp);
	o->qpn = r->qpn;
	o->ndrop = XPORT_DROP_COUNT;
	o->nevent = XPORT_CNT_COUNT;
	o->ndaemon = r->qpn ? 0 : EMU_DCNT_COUNT;
	v = o->values;
	memcpy(v, drops, XPORT_DROP_COUNT * sizeof(*v));
	v += XPORT_DROP_COUNT;
	memcpy(v, cnt, XPORT_CNT_COUNT * sizeof(*v));
	v += XPORT_CNT_COUNT;
	if (!r->qpn) {
		memcpy(v, dev->dcnt, EMU_DCNT_COUNT * sizeof(*v));
		/* The cost profile's sums are in ticks of its clock (prof.c). */
		_Static_assert(EMU_DCNT_TIME_ICRC_NS - EMU_DCNT_TIME_WORK_NS == 5,
			       "the six time counters follow each other");
		v[EMU_DCNT_TIME_ICRC_NS] += dev->x.prof_icrc_ticks;
		for (unsigned i = EMU_DCNT_TIME_WORK_NS; i <= EMU_DCNT_TIME_ICRC_NS; i++)
			v[i] = emu_prof_ns(v[i]);
	}
	return 0;
}
