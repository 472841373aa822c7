/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of fault injection: the rule parser and stateless matcher
 * (emu/common/faultrule.c: accepted rules with every field, refusals whose
 * message names the bad part, opcode classes, PSN ranges across the wrap,
 * the conditions forged replies add) and the data path's half
 * (emu/daemon/dp/fault.c: nth/every/count/prob decisions and their
 * determinism, the bit flip that breaks the ICRC and nothing else, forged
 * RNR NAK / sequence NAK / ghost ACK with a valid ICRC, and rule order,
 * ids and counts on a device without a network).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <wire/aeth.h>
#include <wire/bth.h>
#include <wire/ext.h>
#include <wire/icrc.h>
#include <wire/opcode.h>
#include "dp.h"

static struct common_fault_rule parse_ok(const char *text)
{
	struct common_fault_rule r;
	char err[256] = "";

	ck_assert_msg(common_fault_parse(text, &r, err, sizeof(err)) == 0, "'%s': %s", text, err);
	return r;
}

/* The rule is refused and the message contains want. */
static void parse_bad(const char *text, const char *want)
{
	struct common_fault_rule r;
	char err[256] = "";

	ck_assert_int_eq(common_fault_parse(text, &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, want), "'%s': message '%s' lacks '%s'", text, err, want);
}

static struct common_fault_pkt pkt(unsigned dir, uint8_t opcode, uint32_t qpn, uint32_t psn)
{
	const struct wire_opcode_info *info = wire_opcode_info(opcode);
	struct common_fault_pkt p = {.dir = (uint8_t)dir, .opcode = opcode, .qpn = qpn, .psn = psn};

	p.has_aeth = info && (info->mask & WIRE_AETH_MASK);
	p.syndrome = WIRE_AETH_ACK_UNLIMITED;
	return p;
}

START_TEST(test_parse_fields)
{
	struct common_fault_rule r = parse_ok("  tx:drop:qpn=0x11,opcode=write,nth=3,count=1 ");

	ck_assert_str_eq(r.text, "tx:drop:qpn=0x11,opcode=write,nth=3,count=1");
	ck_assert_uint_eq(r.dir, COMMON_FAULT_TX);
	ck_assert_uint_eq(r.action, COMMON_FAULT_DROP);
	ck_assert_uint_eq(r.cond, COMMON_FAULT_C_QPN | COMMON_FAULT_C_OPCODE | COMMON_FAULT_C_NTH |
				      COMMON_FAULT_C_COUNT);
	ck_assert_uint_eq(r.qpn, 0x11);
	ck_assert_uint_eq(r.nth, 3);
	ck_assert_uint_eq(r.count, 1);

	r = parse_ok("rx:delay=25");
	ck_assert_uint_eq(r.dir, COMMON_FAULT_RX);
	ck_assert_uint_eq(r.action, COMMON_FAULT_DELAY);
	ck_assert_uint_eq(r.arg, 25);
	ck_assert_uint_eq(r.cond, 0);
	/* The argument may also be a field of its own. */
	r = parse_ok("tx:delay:5:opcode=ack");
	ck_assert_uint_eq(r.arg, 5);
	ck_assert_uint_eq(r.cond, COMMON_FAULT_C_OPCODE);
	r = parse_ok("tx:reorder");
	ck_assert_uint_eq(r.arg, COMMON_FAULT_REORDER_DEFAULT);
	r = parse_ok("tx:reorder=3:every=2");
	ck_assert_uint_eq(r.arg, 3);
	ck_assert_uint_eq(r.every, 2);
	r = parse_ok("rx:rnr-nak:opcode=ack");
	ck_assert_uint_eq(r.arg, COMMON_FAULT_RNR_TIMER_DEFAULT);
	r = parse_ok("rx:rnr-nak=1");
	ck_assert_uint_eq(r.arg, 1);
	r = parse_ok("tx:duplicate");
	ck_assert_uint_eq(r.action, COMMON_FAULT_DUP);
	r = parse_ok("tx:corrupt:psn=0xfffffe-0x1,prob=25%,seed=42");
	ck_assert_uint_eq(r.psn_lo, 0xfffffe);
	ck_assert_uint_eq(r.psn_hi, 1);
	ck_assert(!r.prob_one);
	ck_assert_uint_eq(r.prob >> 62, 1); /* a quarter of 2^64 */
	ck_assert_uint_eq(r.seed, 42);
	r = parse_ok("tx:drop:prob=1");
	ck_assert(r.prob_one);
	r = parse_ok("tx:seq-nak:op=0x11/read-resp");
	ck_assert_uint_eq(r.action, COMMON_FAULT_SEQ_NAK);
	r = parse_ok("rx:ghost-ack:opcode=RC_ACKNOWLEDGE");
	ck_assert_uint_eq(r.action, COMMON_FAULT_GHOST_ACK);
}
END_TEST

START_TEST(test_parse_errors)
{
	parse_bad("", "empty rule");
	parse_bad("up:drop", "direction 'up'");
	parse_bad("tx", "no action");
	parse_bad("tx:", "no action");
	parse_bad("tx:drp", "unknown action 'drp'");
	parse_bad("tx:delay", "delay=MS");
	parse_bad("tx:delay=soon", "delay=soon");
	parse_bad("tx:delay=60001", "delay=60001");
	parse_bad("tx:reorder=0", "reorder=0");
	parse_bad("tx:rnr-nak=32", "rnr-nak=32");
	parse_bad("tx:drop=3", "takes no value");
	parse_bad("tx:drop:", "empty condition list");
	parse_bad("tx:drop:qpn", "'qpn' needs KEY=VALUE");
	parse_bad("tx:drop:qpm=3", "unknown condition 'qpm'");
	parse_bad("tx:drop:qpn=0x1000000", "qpn='0x1000000'");
	parse_bad("tx:drop:qpn=-1", "qpn='-1'");
	parse_bad("tx:drop:qpn=1,qpn=2", "'qpn' given twice");
	parse_bad("tx:drop:opcode=wrte", "opcode 'wrte'");
	parse_bad("tx:drop:opcode=write/", "each '/' item");
	parse_bad("tx:drop:opcode=", "opcode= needs a value");
	parse_bad("tx:drop:psn=1-x", "psn='1-x'");
	parse_bad("tx:drop:psn=0x1000000", "psn='0x1000000'");
	parse_bad("tx:drop:nth=0", "nth='0'");
	parse_bad("tx:drop:count=many", "count='many'");
	parse_bad("tx:drop:prob=1.5", "prob='1.5'");
	parse_bad("tx:drop:prob=101%", "prob='101%'");
	parse_bad("tx:drop:prob=.5", "prob='.5'");
	parse_bad("tx:drop:nth=1,,count=2", "stray ','");
	parse_bad("tx:drop:nth=1,", "stray ','");
	parse_bad("tx:drop:nth=2,every=3", "nth and every");
	parse_bad("tx:drop:nth=1:count=2", "too many ':'");
	parse_bad("tx:delay:5:nth=1:count=2", "too many ':'");
	{
		char longer[COMMON_FAULT_TEXT_BYTES + 8];

		memset(longer, 'x', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = '\0';
		memcpy(longer, "tx:drop:", 8);
		parse_bad(longer, "longer than");
	}
	/* No message buffer: still refused. */
	{
		struct common_fault_rule r;

		ck_assert_int_eq(common_fault_parse("tx:drp", &r, NULL, 0), -EINVAL);
	}
}
END_TEST

START_TEST(test_match_classes)
{
	struct common_fault_rule r = parse_ok("tx:drop:opcode=write");

	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.dir = 0, .opcode = 0x06}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.dir = 0, .opcode = 0x2b}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.dir = 0, .opcode = 0x04}));
	/* Direction. */
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x06}));

	r = parse_ok("rx:drop:opcode=send/atomic");
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x64}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x13}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x14}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x0c}));

	r = parse_ok("rx:drop:opcode=read-resp");
	for (uint8_t op = 0x0d; op <= 0x10; op++)
		ck_assert(
		    common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = op}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x11}));

	r = parse_ok("rx:drop:opcode=request");
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x0c}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.dir = 1, .opcode = 0x11}));

	/* nak: the Acknowledge opcode alone does not tell. */
	r = parse_ok("rx:drop:opcode=nak");
	{
		struct common_fault_pkt p = pkt(1, 0x11, 5, 0);

		ck_assert(!common_fault_match(&r, &p));
		p.syndrome = wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR);
		ck_assert(common_fault_match(&r, &p));
		p.syndrome = wire_aeth_syndrome(WIRE_AETH_RNR_NAK, 3);
		ck_assert(common_fault_match(&r, &p));
	}
	/* cm: UD for QP 1. */
	r = parse_ok("tx:drop:opcode=cm");
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x64, .qpn = 1}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x64, .qpn = 2}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x04, .qpn = 1}));
	/* Numbers and table names. */
	r = parse_ok("tx:drop:opcode=10/rc_send_only");
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x0a}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x04}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x05}));
	/* No opcode condition: everything. */
	r = parse_ok("tx:drop");
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.opcode = 0x81}));
}
END_TEST

START_TEST(test_match_qpn_psn)
{
	struct common_fault_rule r = parse_ok("tx:drop:qpn=0x12,psn=0xfffffe-0x2");

	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x12, .psn = 0xfffffe}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x12, .psn = 0xffffff}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x12, .psn = 0}));
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x12, .psn = 2}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x12, .psn = 3}));
	ck_assert(
	    !common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x12, .psn = 0xfffffd}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.qpn = 0x11, .psn = 0}));
	r = parse_ok("tx:drop:psn=7");
	ck_assert(common_fault_match(&r, &(struct common_fault_pkt){.psn = 7}));
	ck_assert(!common_fault_match(&r, &(struct common_fault_pkt){.psn = 8}));
}
END_TEST

START_TEST(test_match_forged_needs_aeth)
{
	struct common_fault_rule r = parse_ok("rx:rnr-nak");
	struct common_fault_pkt ack = pkt(1, WIRE_OP_RC_ACKNOWLEDGE, 1, 1);
	struct common_fault_pkt send = pkt(1, WIRE_OP_RC_SEND_ONLY, 1, 1);
	struct common_fault_pkt mid = pkt(1, WIRE_OP_RC_RDMA_READ_RESPONSE_MIDDLE, 1, 1);

	ck_assert(common_fault_match(&r, &ack));
	ck_assert(!common_fault_match(&r, &send));
	ck_assert(!common_fault_match(&r, &mid)); /* no AETH in a Middle */
}
END_TEST

START_TEST(test_pkt_of)
{
	uint8_t b[32] = {0};
	struct common_fault_pkt p;
	struct wire_bth *bth = (struct wire_bth *)b;

	wire_bth_set_opcode(bth, WIRE_OP_RC_ACKNOWLEDGE);
	wire_bth_set_destqp(bth, 0x123456);
	wire_bth_set_psn(bth, 0xabcdef);
	wire_aeth_set_syndrome((struct wire_aeth *)(b + 12), 0x61);
	ck_assert_int_eq(common_fault_pkt_of(b, 20, COMMON_FAULT_RX, &p), 0);
	ck_assert_uint_eq(p.opcode, 0x11);
	ck_assert_uint_eq(p.qpn, 0x123456);
	ck_assert_uint_eq(p.psn, 0xabcdef);
	ck_assert(p.has_aeth);
	ck_assert_uint_eq(p.syndrome, 0x61);
	/* BTH + AETH + ICRC is the least an ACK can be. */
	ck_assert_int_eq(common_fault_pkt_of(b, 19, COMMON_FAULT_RX, &p), -EINVAL);
	ck_assert_int_eq(common_fault_pkt_of(b, 15, COMMON_FAULT_RX, &p), -EINVAL);
}
END_TEST

START_TEST(test_decide_nth_every_count)
{
	struct common_fault_rule r = parse_ok("tx:drop:nth=3");
	struct emu_fault_state s;
	int hits[12] = {0};

	emu_fault_state_init(&s, &r, 0, 1);
	for (int i = 0; i < 12; i++)
		hits[i] = emu_fault_decide(&r, &s);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(hits[i], i == 2);
	ck_assert_uint_eq(s.matched, 12);
	ck_assert_uint_eq(s.fired, 1);

	r = parse_ok("tx:drop:every=4,count=2");
	emu_fault_state_init(&s, &r, 0, 1);
	for (int i = 0; i < 12; i++)
		hits[i] = emu_fault_decide(&r, &s);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(hits[i], i == 3 || i == 7);
	ck_assert_uint_eq(s.fired, 2);

	r = parse_ok("tx:drop:count=3");
	emu_fault_state_init(&s, &r, 0, 1);
	for (int i = 0; i < 12; i++)
		hits[i] = emu_fault_decide(&r, &s);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(hits[i], i < 3);
}
END_TEST

/* The decisions of a prob rule over n packets as a bit string. */
static void prob_run(const char *text, uint64_t dev_seed, uint32_t id, char *out, int n)
{
	struct common_fault_rule r = parse_ok(text);
	struct emu_fault_state s;

	emu_fault_state_init(&s, &r, dev_seed, id);
	for (int i = 0; i < n; i++)
		out[i] = emu_fault_decide(&r, &s) ? '1' : '0';
	out[n] = '\0';
}

START_TEST(test_decide_prob_seeded)
{
	char a[1001], b[1001], c[1001], d[1001], e[1001];
	int ones = 0;

	prob_run("tx:drop:prob=0.2", 7, 1, a, 1000);
	prob_run("tx:drop:prob=0.2", 7, 1, b, 1000);
	prob_run("tx:drop:prob=0.2", 8, 1, c, 1000);
	prob_run("tx:drop:prob=0.2", 7, 2, d, 1000);
	ck_assert_str_eq(a, b); /* same seed, same rule id: same decisions */
	ck_assert_str_ne(a, c); /* another device seed */
	ck_assert_str_ne(a, d); /* another rule */
	for (int i = 0; i < 1000; i++)
		ones += a[i] == '1';
	ck_assert_int_gt(ones, 140);
	ck_assert_int_lt(ones, 260);
	/* seed= makes a rule independent of the device seed and its id. */
	prob_run("tx:drop:prob=20%,seed=99", 7, 1, d, 1000);
	prob_run("tx:drop:prob=20%,seed=99", 1234, 17, e, 1000);
	ck_assert_str_eq(d, e);
	prob_run("tx:drop:prob=0", 7, 1, e, 200);
	ck_assert(!strchr(e, '1'));
	prob_run("tx:drop:prob=100%", 7, 1, e, 200);
	ck_assert(!strchr(e, '0'));
}
END_TEST

static const struct xport_route route4 = {
    .sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1},
    .dgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 2},
    .sport = 4791,
    .dport = 4791,
};

static bool icrc_ok(const uint8_t *b, size_t len)
{
	return wire_icrc_get(b + len - 4) ==
	       wire_icrc_udp4(route4.sgid + 12, route4.dgid + 12, 4791, 4791, b, len - 4);
}

/* A packet of route4: BTH of opcode, then n bytes of pattern, then the ICRC. */
static size_t make_pkt(uint8_t *b, uint8_t opcode, uint32_t psn, size_t n)
{
	struct wire_bth *bth = (struct wire_bth *)b;

	memset(b, 0, 12);
	wire_bth_set_opcode(bth, opcode);
	wire_bth_set_pkey(bth, 0xffff);
	wire_bth_set_destqp(bth, 0x11);
	wire_bth_set_psn(bth, psn);
	for (size_t i = 0; i < n; i++)
		b[12 + i] = (uint8_t)(i * 7 + 1);
	wire_icrc_put(b + 12 + n,
		      wire_icrc_udp4(route4.sgid + 12, route4.dgid + 12, 4791, 4791, b, 12 + n));
	return 12 + n + 4;
}

START_TEST(test_corrupt)
{
	uint8_t orig[64], b[64];
	size_t len = make_pkt(orig, WIRE_OP_RC_SEND_ONLY, 5, 8);

	ck_assert(icrc_ok(orig, len));
	for (uint64_t draw = 0; draw < 200; draw++) {
		int diff = 0;

		memcpy(b, orig, len);
		emu_fault_corrupt(b, len, draw * 0x9e3779b97f4a7c15ull);
		ck_assert(!icrc_ok(b, len));
		ck_assert(!memcmp(b, orig, 12)); /* the BTH is intact */
		for (size_t i = 0; i < len; i++)
			diff += __builtin_popcount(b[i] ^ orig[i]);
		ck_assert_int_eq(diff, 1);
	}
}
END_TEST

START_TEST(test_forge)
{
	uint8_t b[64];
	size_t len;
	struct wire_aeth *aeth = (struct wire_aeth *)(b + 12);

	/* An ACK of PSN 0x100 with MSN 7 becomes an RNR NAK with timer 3. */
	memset(b, 0, sizeof(b));
	len = make_pkt(b, WIRE_OP_RC_ACKNOWLEDGE, 0x100, 4);
	wire_aeth_set_syndrome(aeth, WIRE_AETH_ACK_UNLIMITED);
	wire_aeth_set_msn(aeth, 7);
	ck_assert_int_eq(emu_fault_forge(b, &len, COMMON_FAULT_RNR_NAK, 3, &route4), 0);
	ck_assert_uint_eq(len, 20);
	ck_assert(icrc_ok(b, len));
	ck_assert_uint_eq(wire_aeth_get_syndrome(aeth), wire_aeth_syndrome(WIRE_AETH_RNR_NAK, 3));
	ck_assert_uint_eq(wire_aeth_get_msn(aeth), 7);
	ck_assert_uint_eq(wire_bth_get_psn((struct wire_bth *)b), 0x100);

	/* A READ response Only with payload becomes a sequence NAK, no payload. */
	memset(b, 0, sizeof(b));
	len = make_pkt(b, WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY, 0x200, 4 + 16);
	wire_aeth_set_syndrome(aeth, WIRE_AETH_ACK_UNLIMITED);
	wire_aeth_set_msn(aeth, 9);
	wire_bth_set_ackreq((struct wire_bth *)b, 1);
	ck_assert_int_eq(emu_fault_forge(b, &len, COMMON_FAULT_SEQ_NAK, 0, &route4), 0);
	ck_assert_uint_eq(len, 20);
	ck_assert(icrc_ok(b, len));
	ck_assert_uint_eq(wire_bth_get_opcode((struct wire_bth *)b), WIRE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(wire_bth_get_ackreq((struct wire_bth *)b), 0);
	ck_assert_uint_eq(wire_aeth_get_syndrome(aeth),
			  wire_aeth_syndrome(WIRE_AETH_NAK, WIRE_NAK_PSN_SEQ_ERR));
	ck_assert_uint_eq(wire_aeth_get_msn(aeth), 9);

	/* An atomic ACK becomes a ghost ACK: far ahead, never sent. */
	memset(b, 0, sizeof(b));
	len = make_pkt(b, WIRE_OP_RC_ATOMIC_ACKNOWLEDGE, 0xfffff0, 4 + 8);
	wire_aeth_set_syndrome(aeth, WIRE_AETH_ACK_UNLIMITED);
	ck_assert_int_eq(emu_fault_forge(b, &len, COMMON_FAULT_GHOST_ACK, 0, &route4), 0);
	ck_assert_uint_eq(len, 20);
	ck_assert(icrc_ok(b, len));
	ck_assert_uint_eq(wire_bth_get_psn((struct wire_bth *)b), (0xfffff0 + 0x400000) & 0xffffff);
	ck_assert_uint_eq(wire_aeth_syndrome_type(wire_aeth_get_syndrome(aeth)), WIRE_AETH_ACK);

	/* A request has no reply to forge. */
	len = make_pkt(b, WIRE_OP_RC_SEND_ONLY, 1, 8);
	ck_assert_int_eq(emu_fault_forge(b, &len, COMMON_FAULT_RNR_NAK, 3, &route4), -EINVAL);
	ck_assert_int_eq(emu_fault_forge(b, &len, COMMON_FAULT_DROP, 0, &route4), -EINVAL);
}
END_TEST

static void add_rule(struct emu_dev *dev, const char *text, uint32_t want_id)
{
	struct common_fault_rule r = parse_ok(text);
	uint32_t id = 0;

	ck_assert_int_eq(emu_fault_add(dev, &r, &id), 0);
	ck_assert_uint_eq(id, want_id);
}

static uint64_t fired(struct emu_dev *dev, uint32_t id)
{
	struct emu_fault_info info;

	ck_assert_int_eq(emu_fault_get(dev, id, &info), 0);
	ck_assert_uint_eq(info.id, id);
	return info.fired;
}

START_TEST(test_device_rules)
{
	static struct emu_dev dev; /* no network, no capture, no loop */
	struct emu_fault_info info;
	uint8_t b[64];
	size_t len = make_pkt(b, WIRE_OP_RC_SEND_ONLY, 1, 8);

	emu_log_set_level(EMU_LOG_ERROR);
	ck_assert_int_eq(emu_fault_init(&dev, 5, NULL), 0);
	ck_assert(!dev.fault_on); /* no rule: the data path pays one branch */
	add_rule(&dev, "rx:drop", 1);
	add_rule(&dev, "tx:corrupt:nth=2", 2);
	add_rule(&dev, "tx:drop:opcode=send", 3);
	ck_assert(dev.fault_on);
	ck_assert_uint_eq(emu_fault_nrules(&dev), 3);
	ck_assert_uint_eq(emu_fault_seed(&dev), 5);
	/* First packet: rule 2 matches but waits for the 2nd; rule 3 drops. */
	ck_assert_int_eq(emu_fault_tx(&dev, &route4, b, len), 0);
	ck_assert_uint_eq(fired(&dev, 2), 0);
	ck_assert_uint_eq(fired(&dev, 3), 1);
	/* Second: rule 2 fires, rule 3 does not see it. */
	emu_fault_tx(&dev, &route4, b, len);
	ck_assert_uint_eq(fired(&dev, 2), 1);
	ck_assert_uint_eq(fired(&dev, 3), 1);
	ck_assert_int_eq(emu_fault_get(&dev, 3, &info), 0);
	ck_assert_uint_eq(info.matched, 1);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_FAULT_DROPPED], 1);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_FAULT_CORRUPTED], 1);
	/* An ACK passes rule 3 by; with no network it is lost (-ENETDOWN). */
	len = make_pkt(b, WIRE_OP_RC_ACKNOWLEDGE, 1, 4);
	ck_assert_int_eq(emu_fault_tx(&dev, &route4, b, len), -ENETDOWN);
	/* Held packets wait; they go with the device. */
	add_rule(&dev, "tx:delay=1000:opcode=ack", 4);
	ck_assert_int_eq(emu_fault_tx(&dev, &route4, b, len), 0);
	ck_assert_uint_eq(dev.dcnt[EMU_DCNT_FAULT_DELAYED], 1);

	ck_assert_int_eq(emu_fault_del(&dev, 3), 0);
	ck_assert_int_eq(emu_fault_del(&dev, 3), -ENOENT);
	ck_assert_int_eq(emu_fault_get(&dev, 3, &info), 0);
	ck_assert_uint_eq(info.id, 4); /* the next one */
	ck_assert_int_eq(emu_fault_get(&dev, 5, &info), -ENOENT);
	emu_fault_clear(&dev);
	ck_assert_uint_eq(emu_fault_nrules(&dev), 0);
	ck_assert(dev.fault_on);      /* the delayed ACK is still held */
	add_rule(&dev, "tx:drop", 5); /* ids are never reused */
	emu_fault_fini(&dev);
	ck_assert(!dev.fault_on);
	ck_assert_ptr_null(dev.fault);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dp_fault");
	TCase *tp = tcase_create("parse");
	TCase *tm = tcase_create("match");
	TCase *td = tcase_create("decide");

	tcase_add_test(tp, test_parse_fields);
	tcase_add_test(tp, test_parse_errors);
	suite_add_tcase(s, tp);
	tcase_add_test(tm, test_match_classes);
	tcase_add_test(tm, test_match_qpn_psn);
	tcase_add_test(tm, test_match_forged_needs_aeth);
	tcase_add_test(tm, test_pkt_of);
	suite_add_tcase(s, tm);
	tcase_add_test(td, test_decide_nth_every_count);
	tcase_add_test(td, test_decide_prob_seeded);
	tcase_add_test(td, test_corrupt);
	tcase_add_test(td, test_forge);
	tcase_add_test(td, test_device_rules);
	suite_add_tcase(s, td);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
