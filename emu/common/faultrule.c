/* SPDX-License-Identifier: MIT */
/*
 * The fault rule parser and the stateless matcher (faultrule.h). A rule is
 *
 *   DIR:ACTION[=ARG][:COND,COND...]      DIR tx|rx, COND KEY=VALUE
 *
 * read left to right into struct common_fault_rule; every refusal names
 * the part it could not read. Opcode classes are turned into a bitmap of
 * opcodes here, from wire/'s opcode table, so matching a packet is a bit
 * test; the two classes an opcode alone cannot tell (nak, cm) are flags.
 * This file neither keeps state nor touches packets: the daemon's
 * emu/daemon/dp/fault.c does.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/opcode.h>
#include <wire/psn.h>
#include "faultrule.h"

static const struct {
	const char *name;
	bool arg;
} actions[] = {
#define ACTION_ROW(sym, name, arg, doc) {name, arg},
    COMMON_FAULT_ACTION_LIST(ACTION_ROW)
#undef ACTION_ROW
};

#define ACTIONS_HELP "drop, dup, delay=MS, reorder=N, corrupt, rnr-nak[=TIMER], seq-nak, ghost-ack"
#define KEYS_HELP "qpn, opcode, psn, nth, every, prob, count, seed"
#define CLASSES_HELP                                                                     \
	"send, write, read, read-resp, atomic, atomic-ack, ack, nak, cnp, cm, request, " \
	"response, any, an opcode number or name such as rc_rdma_write_first"

/* Opcode classes: a name and the opcode property bits any of which selects an opcode. */
static const struct {
	const char *name;
	uint32_t mask;	 /* WIRE_*_MASK; 0 for the special ones */
	uint8_t special; /* COMMON_FAULT_S_* */
} classes[] = {
    {"send", WIRE_SEND_MASK, 0},
    {"write", WIRE_WRITE_MASK, 0},
    {"read", WIRE_READ_MASK, 0},
    {"read-resp", WIRE_READ_RESP_MASK, 0},
    {"atomic", WIRE_ATOMIC_MASK, 0},
    {"atomic-ack", WIRE_ATMACK_MASK, 0},
    {"ack", WIRE_ACK_MASK, 0},
    {"nak", 0, COMMON_FAULT_S_NAK},
    {"cnp", WIRE_CNP_OP_MASK, 0},
    {"cm", 0, COMMON_FAULT_S_CM},
    {"request", WIRE_REQ_MASK, 0},
    {"response", WIRE_RESP_MASK, 0},
    {"any", ~0u, 0},
};

const char *common_fault_action_name(unsigned action)
{
	return action < COMMON_FAULT_ACTION_COUNT ? actions[action].name : "?";
}

const char *common_fault_dir_name(unsigned dir)
{
	return dir == COMMON_FAULT_TX ? "tx" : dir == COMMON_FAULT_RX ? "rx" : "?";
}

static int perr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A whole unsigned number, decimal or 0x hex, at most max. 0 or -EINVAL. */
static int parse_num(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Names compare without case, '-' and '_' alike. */
static bool name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = (char)tolower((unsigned char)*a), y = (char)tolower((unsigned char)*b);

		if (x == '_')
			x = '-';
		if (y == '_')
			y = '-';
		if (x != y)
			return false;
	}
	return !*a && !*b;
}

static void set_op(struct common_fault_rule *r, unsigned op)
{
	r->opcodes[op >> 3] |= (uint8_t)(1u << (op & 7));
}

/* One item of opcode=A/B/...: a class, an opcode name or a number. */
static int parse_opcode_item(struct common_fault_rule *r, const char *s, char *err, size_t errlen)
{
	const struct wire_opcode_info *info;
	uint64_t v;

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (!name_eq(s, classes[i].name))
			continue;
		r->special |= classes[i].special;
		for (unsigned n = 0; classes[i].mask && (info = wire_opcode_at(n)); n++)
			if (info->mask & classes[i].mask)
				set_op(r, info->opcode);
		return 0;
	}
	if (!parse_num(s, 255, &v)) {
		set_op(r, (unsigned)v);
		return 0;
	}
	for (unsigned n = 0; (info = wire_opcode_at(n)); n++) {
		if (name_eq(s, info->sym)) {
			set_op(r, info->opcode);
			return 0;
		}
	}
	return perr(err, errlen, "opcode '%s' is not known (" CLASSES_HELP ")", s);
}

static int parse_opcodes(struct common_fault_rule *r, char *v, char *err, size_t errlen)
{
	for (char *item = v, *next; item; item = next) {
		next = strchr(item, '/');
		if (next)
			*next++ = '\0';
		if (!*item)
			return perr(err, errlen,
				    "opcode= needs a value for each '/' item (" CLASSES_HELP ")");
		if (parse_opcode_item(r, item, err, errlen))
			return -EINVAL;
	}
	return 0;
}

/* psn=N or psn=A-B (24-bit, inclusive, forward from A). */
static int parse_psn(struct common_fault_rule *r, char *v, char *err, size_t errlen)
{
	char *dash = strchr(v, '-');
	uint64_t lo, hi;

	if (dash)
		*dash = '\0';
	if (parse_num(v, WIRE_PSN_MASK, &lo) || (dash && parse_num(dash + 1, WIRE_PSN_MASK, &hi)))
		return perr(err, errlen,
			    "psn='%s%s%s': need a PSN or a range A-B of 24-bit numbers", v,
			    dash ? "-" : "", dash ? dash + 1 : "");
	r->psn_lo = (uint32_t)lo;
	r->psn_hi = dash ? (uint32_t)hi : (uint32_t)lo;
	return 0;
}

/* prob=P: a fraction 0..1 (0.25) or a percentage (25%). */
static int parse_prob(struct common_fault_rule *r, const char *v, char *err, size_t errlen)
{
	size_t n = strlen(v);
	double p;
	char *end;

	errno = 0;
	p = strtod(v, &end);
	if (n && v[n - 1] == '%' && end == v + n - 1 && end != v)
		p /= 100.0;
	else if (*end || end == v)
		p = -1;
	if (errno || !(p >= 0.0 && p <= 1.0) || !isdigit((unsigned char)v[0]))
		return perr(err, errlen,
			    "prob='%s': need a probability 0..1 or a percentage 0%%..100%%", v);
	r->prob_one = p >= 1.0;
	/* 2^64 * p, below 2^64 for p < 1. */
	r->prob = r->prob_one ? 0 : (uint64_t)(p * 18446744073709551616.0);
	return 0;
}

static int parse_cond(struct common_fault_rule *r, char *c, char *err, size_t errlen)
{
	static const struct {
		const char *key;
		uint32_t bit;
	} keys[] = {
	    {"qpn", COMMON_FAULT_C_QPN},   {"opcode", COMMON_FAULT_C_OPCODE},
	    {"op", COMMON_FAULT_C_OPCODE}, {"psn", COMMON_FAULT_C_PSN},
	    {"nth", COMMON_FAULT_C_NTH},   {"every", COMMON_FAULT_C_EVERY},
	    {"prob", COMMON_FAULT_C_PROB}, {"count", COMMON_FAULT_C_COUNT},
	    {"seed", COMMON_FAULT_C_SEED},
	};
	char *eq = strchr(c, '='), *v;
	uint32_t bit = 0;
	uint64_t n;

	if (!*c)
		return perr(err, errlen, "empty condition (a stray ',')");
	if (!eq)
		return perr(err, errlen, "condition '%s' needs KEY=VALUE (keys: " KEYS_HELP ")", c);
	*eq = '\0';
	v = eq + 1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(c, keys[i].key))
			bit = keys[i].bit;
	if (!bit)
		return perr(err, errlen, "unknown condition '%s' (keys: " KEYS_HELP ")", c);
	if (r->cond & bit)
		return perr(err, errlen, "condition '%s' given twice", c);
	r->cond |= bit;
	switch (bit) {
	case COMMON_FAULT_C_QPN:
		if (parse_num(v, WIRE_QPN_MASK, &n))
			return perr(err, errlen, "qpn='%s': need a QP number 0..0xffffff", v);
		r->qpn = (uint32_t)n;
		return 0;
	case COMMON_FAULT_C_OPCODE:
		return parse_opcodes(r, v, err, errlen);
	case COMMON_FAULT_C_PSN:
		return parse_psn(r, v, err, errlen);
	case COMMON_FAULT_C_PROB:
		return parse_prob(r, v, err, errlen);
	case COMMON_FAULT_C_SEED:
		if (parse_num(v, UINT64_MAX, &r->seed))
			return perr(err, errlen, "seed='%s': need a number", v);
		return 0;
	default: /* nth, every, count */
		if (parse_num(v, UINT64_MAX, &n) || !n)
			return perr(err, errlen, "%s='%s': need a number 1 or more", c, v);
		if (bit == COMMON_FAULT_C_NTH)
			r->nth = n;
		else if (bit == COMMON_FAULT_C_EVERY)
			r->every = n;
		else
			r->count = n;
		return 0;
	}
}

/* The action's argument, given as ACTION=ARG or as the field after it. */
static int parse_arg(struct common_fault_rule *r, const char *name, const char *v, char *err,
		     size_t errlen)
{
	uint64_t n;

	switch (r->action) {
	case COMMON_FAULT_DELAY:
		if (parse_num(v, COMMON_FAULT_DELAY_MAX_MS, &n))
			return perr(err, errlen, "delay=%s: need milliseconds 0..%u", v,
				    COMMON_FAULT_DELAY_MAX_MS);
		break;
	case COMMON_FAULT_REORDER:
		if (parse_num(v, COMMON_FAULT_REORDER_MAX, &n) || !n)
			return perr(err, errlen, "reorder=%s: need a packet count 1..%u", v,
				    COMMON_FAULT_REORDER_MAX);
		break;
	case COMMON_FAULT_RNR_NAK:
		if (parse_num(v, 31, &n))
			return perr(err, errlen, "rnr-nak=%s: need an RNR timer code 0..31", v);
		break;
	default:
		return perr(err, errlen, "action '%s' takes no value (got '%s')", name, v);
	}
	r->arg = (uint32_t)n;
	return 0;
}

static int parse_action(struct common_fault_rule *r, char *a, char *err, size_t errlen)
{
	char *eq = strchr(a, '=');

	if (eq)
		*eq = '\0';
	for (unsigned i = 0; i < COMMON_FAULT_ACTION_COUNT; i++) {
		if (strcmp(a, actions[i].name) &&
		    !(i == COMMON_FAULT_DUP && !strcmp(a, "duplicate")))
			continue;
		r->action = (uint8_t)i;
		if (i == COMMON_FAULT_DELAY && !eq)
			return perr(err, errlen, "delay needs a time: delay=MS");
		r->arg = i == COMMON_FAULT_REORDER   ? COMMON_FAULT_REORDER_DEFAULT
			 : i == COMMON_FAULT_RNR_NAK ? COMMON_FAULT_RNR_TIMER_DEFAULT
						     : 0;
		return eq ? parse_arg(r, a, eq + 1, err, errlen) : 0;
	}
	return perr(err, errlen, "unknown action '%s' (" ACTIONS_HELP ")", a);
}

static bool is_number(const char *s)
{
	uint64_t n;

	return !parse_num(s, UINT64_MAX, &n);
}

int common_fault_parse(const char *text, struct common_fault_rule *r, char *err, size_t errlen)
{
	char buf[COMMON_FAULT_TEXT_BYTES], joined[COMMON_FAULT_TEXT_BYTES], *f[4] = {NULL}, *p;
	size_t len;
	int nf = 0;

	memset(r, 0, sizeof(*r));
	while (isspace((unsigned char)*text))
		text++;
	len = strlen(text);
	while (len && isspace((unsigned char)text[len - 1]))
		len--;
	if (!len)
		return perr(err, errlen,
			    "empty rule (DIR:ACTION[:CONDITIONS], e.g. tx:drop:nth=3)");
	if (len >= sizeof(buf))
		return perr(err, errlen, "rule longer than %zu characters", sizeof(buf) - 1);
	memcpy(r->text, text, len);
	memcpy(buf, text, len);
	buf[len] = '\0';

	/* Fields: DIR, ACTION, then optionally the argument, the conditions. */
	for (p = buf; nf < 4; nf++) {
		f[nf] = p;
		p = strchr(p, ':');
		if (!p) {
			nf++;
			break;
		}
		*p++ = '\0';
	}
	if (p)
		return perr(err, errlen, "too many ':' fields (DIR:ACTION[:CONDITIONS])");
	if (!strcmp(f[0], "tx"))
		r->dir = COMMON_FAULT_TX;
	else if (!strcmp(f[0], "rx"))
		r->dir = COMMON_FAULT_RX;
	else
		return perr(err, errlen, "direction '%s' is neither tx nor rx", f[0]);
	if (nf < 2 || !*f[1])
		return perr(err, errlen, "no action after '%s:' (" ACTIONS_HELP ")", f[0]);
	/* delay:MS, reorder:N, rnr-nak:TIMER: the argument as a field of its own. */
	if (nf >= 3 && !strchr(f[1], '=') && is_number(f[2])) {
		bool takes = false;

		for (unsigned i = 0; i < COMMON_FAULT_ACTION_COUNT; i++)
			takes |= !strcmp(f[1], actions[i].name) && actions[i].arg;
		if (takes) {
			snprintf(joined, sizeof(joined), "%s=%s", f[1], f[2]);
			f[1] = joined;
			f[2] = f[3];
			f[3] = NULL;
			nf--;
		}
	}
	if (nf == 4)
		return perr(err, errlen, "too many ':' fields (DIR:ACTION[:CONDITIONS])");
	if (parse_action(r, f[1], err, errlen))
		return -EINVAL;
	if (nf == 3) {
		if (!*f[2])
			return perr(err, errlen, "empty condition list after the action");
		for (char *c = f[2], *next; c; c = next) {
			next = strchr(c, ',');
			if (next)
				*next++ = '\0';
			if (parse_cond(r, c, err, errlen))
				return -EINVAL;
		}
	}
	if ((r->cond & COMMON_FAULT_C_NTH) && (r->cond & COMMON_FAULT_C_EVERY))
		return perr(err, errlen, "nth and every do not go together");
	return 0;
}

int common_fault_pkt_of(const void *pkt, size_t len, unsigned dir, struct common_fault_pkt *p)
{
	const uint8_t *b = pkt;
	const struct wire_bth *bth = pkt;
	const struct wire_opcode_info *info;

	if (len < WIRE_BTH_BYTES + 4)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->dir = (uint8_t)dir;
	p->opcode = wire_bth_get_opcode(bth);
	p->qpn = wire_bth_get_destqp(bth);
	p->psn = wire_bth_get_psn(bth);
	info = wire_opcode_info(p->opcode);
	if (info && len < (size_t)info->hdr_bytes + 4)
		return -EINVAL;
	if (info && (info->mask & WIRE_AETH_MASK)) {
		p->has_aeth = true;
		p->syndrome = wire_aeth_get_syndrome(
		    (const struct wire_aeth *)(b + info->offset[WIRE_HDR_AETH]));
	}
	return 0;
}

static bool opcode_ok(const struct common_fault_rule *r, const struct common_fault_pkt *p)
{
	if (r->opcodes[p->opcode >> 3] & (1u << (p->opcode & 7)))
		return true;
	if ((r->special & COMMON_FAULT_S_NAK) && p->has_aeth &&
	    wire_aeth_syndrome_type(p->syndrome) != WIRE_AETH_ACK)
		return true;
	return (r->special & COMMON_FAULT_S_CM) &&
	       wire_opcode_transport(p->opcode) == WIRE_TRANSPORT_UD && p->qpn == 1;
}

bool common_fault_match(const struct common_fault_rule *r, const struct common_fault_pkt *p)
{
	if (r->dir != p->dir)
		return false;
	if (common_fault_forges(r->action) && !p->has_aeth)
		return false;
	if ((r->cond & COMMON_FAULT_C_QPN) && p->qpn != r->qpn)
		return false;
	if ((r->cond & COMMON_FAULT_C_OPCODE) && !opcode_ok(r, p))
		return false;
	if ((r->cond & COMMON_FAULT_C_PSN) &&
	    wire_psn_sub(p->psn, r->psn_lo) > wire_psn_sub(r->psn_hi, r->psn_lo))
		return false;
	return true;
}
