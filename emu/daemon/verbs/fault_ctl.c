/* SPDX-License-Identifier: MIT */
/*
 * The FAULT control operation (uapi.h): `uroce fault DEV add|del|list|clear`
 * changes and reads the device's fault rules at run time. The rule text is
 * parsed here again with the parser the CLI used (emu/common/faultrule.c):
 * nothing a client sends is trusted. The rules themselves, their counts and
 * what they do to packets are the data path's (emu/daemon/dp/fault.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "verbs.h"

_Static_assert(UROCE_FAULT_RULE_BYTES == COMMON_FAULT_TEXT_BYTES,
	       "the control message carries a whole rule");

static void fill_list(struct emu_dev *dev, uint32_t from, struct uroce_fault_resp *o)
{
	struct emu_fault_info info;

	while (o->count < UROCE_FAULT_LIST_MAX && !emu_fault_get(dev, from, &info)) {
		struct uroce_fault_entry *e = &o->rules[o->count++];

		e->id = info.id;
		e->matched = info.matched;
		e->fired = info.fired;
		snprintf(e->rule, sizeof(e->rule), "%s", info.text);
		from = info.id + 1;
	}
	o->next_id = emu_fault_get(dev, from, &info) ? 0 : info.id;
}

int emu_fault_ctl(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_fault_req *r = req;
	struct emu_dev *dev = ctx->dev;
	struct common_fault_rule rule;
	struct uroce_fault_resp *o;
	char text[UROCE_FAULT_RULE_BYTES], err[256];
	uint32_t id = 0;
	int rc;

	switch (r->cmd) {
	case UROCE_FAULT_ADD:
		if (!memchr(r->rule, '\0', sizeof(r->rule)))
			return -EINVAL;
		memcpy(text, r->rule, sizeof(text));
		if (common_fault_parse(text, &rule, err, sizeof(err))) {
			emu_dbg("fault rule from pid %d refused: %s", (int)ctx->pid, err);
			return -EINVAL;
		}
		rc = emu_fault_add(dev, &rule, &id);
		if (rc)
			return rc;
		break;
	case UROCE_FAULT_DEL:
		rc = emu_fault_del(dev, r->id);
		if (rc)
			return rc;
		id = r->id;
		break;
	case UROCE_FAULT_CLEAR:
		emu_fault_clear(dev);
		break;
	case UROCE_FAULT_LIST:
		break;
	default:
		return -EINVAL;
	}
	o = EMU_REPLY(rep, struct uroce_fault_resp);
	o->cmd = r->cmd;
	o->id = id;
	o->nrules = emu_fault_nrules(dev);
	o->seed = emu_fault_seed(dev);
	if (r->cmd == UROCE_FAULT_LIST)
		fill_list(dev, r->id, o);
	return 0;
}
