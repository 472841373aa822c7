/* SPDX-License-Identifier: MIT */
/*
 * Fault rules of the RNIC's fault injection, as text and as a struct: the
 * parser of the rule syntax (`tx:drop:qpn=0x11,opcode=write,nth=3`, the
 * grammar is in docs/daemon.md "Fault injection") and the pure half of the
 * matcher, which says whether a packet meets a rule's conditions (direction,
 * QPN, opcode or opcode class, PSN range). It keeps no state: which of the
 * matching packets is hit (nth, every, prob, count) and what happens to it
 * is emu/daemon/dp/fault.c's. The daemon (--fault, --fault-file, the FAULT
 * control operation) and the CLI (`uroce fault DEV add`, which checks a rule
 * before sending it, so that its error names the bad part) share this file.
 * libc and wire/'s opcode table only.
 */
#ifndef COMMON_FAULTRULE_H
#define COMMON_FAULTRULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest rule text, NUL included (the FAULT control message carries it). */
#define COMMON_FAULT_TEXT_BYTES 160

enum common_fault_dir {
	COMMON_FAULT_TX = 0, /* packets the RNIC sends */
	COMMON_FAULT_RX = 1, /* packets the RNIC receives for its address */
};

/* X(symbol, "name", takes an argument, "what it does") */
#define COMMON_FAULT_ACTION_LIST(X)                                                 \
	X(DROP, "drop", false, "the packet is lost (still in the capture)")         \
	X(DUP, "dup", false, "the packet goes out / is taken twice")                \
	X(DELAY, "delay", true, "held for ARG ms; later packets overtake it")       \
	X(REORDER, "reorder", true, "held until ARG later packets have passed")     \
	X(CORRUPT, "corrupt", false, "one bit flipped after the BTH: bad ICRC")     \
	X(RNR_NAK, "rnr-nak", true, "a response becomes an RNR NAK (timer ARG)")    \
	X(SEQ_NAK, "seq-nak", false, "a response becomes a PSN sequence error NAK") \
	X(GHOST_ACK, "ghost-ack", false, "a response becomes an ACK of an unsent PSN")

enum common_fault_action {
#define COMMON_FAULT_ACTION_ENUM(sym, name, arg, doc) COMMON_FAULT_##sym,
	COMMON_FAULT_ACTION_LIST(COMMON_FAULT_ACTION_ENUM)
#undef COMMON_FAULT_ACTION_ENUM
	    COMMON_FAULT_ACTION_COUNT
};

/* Conditions set in a rule (common_fault_rule.cond). */
enum {
	COMMON_FAULT_C_QPN = 0x01,
	COMMON_FAULT_C_OPCODE = 0x02,
	COMMON_FAULT_C_PSN = 0x04,
	COMMON_FAULT_C_NTH = 0x08,
	COMMON_FAULT_C_EVERY = 0x10,
	COMMON_FAULT_C_PROB = 0x20,
	COMMON_FAULT_C_COUNT = 0x40,
	COMMON_FAULT_C_SEED = 0x80,
};

/* Opcode classes that need more than the opcode (common_fault_rule.special). */
enum {
	COMMON_FAULT_S_NAK = 0x01, /* a response whose AETH is a NAK or RNR NAK */
	COMMON_FAULT_S_CM = 0x02,  /* a UD packet for QP 1 (the GSI: CM MADs) */
};

/* Defaults of the optional action arguments. */
#define COMMON_FAULT_RNR_TIMER_DEFAULT 14 /* 1.28 ms (IBA table 46) */
#define COMMON_FAULT_REORDER_DEFAULT 1
/* Largest delay and reorder distance a rule may ask for. */
#define COMMON_FAULT_DELAY_MAX_MS 60000
#define COMMON_FAULT_REORDER_MAX 1000

/* One parsed rule. */
struct common_fault_rule {
	char text[COMMON_FAULT_TEXT_BYTES]; /* as given, surrounding blanks removed */
	uint8_t dir;			    /* enum common_fault_dir */
	uint8_t action;			    /* enum common_fault_action */
	uint32_t arg;			    /* delay ms, reorder N, RNR timer code */
	uint32_t cond;			    /* COMMON_FAULT_C_* */
	uint32_t qpn;			    /* the BTH destination QP */
	uint8_t opcodes[32];		    /* bitmap of the opcodes that match */
	uint8_t special;		    /* COMMON_FAULT_S_*, ORed with the bitmap */
	uint32_t psn_lo, psn_hi;	    /* inclusive, forward from lo (may wrap) */
	uint64_t nth;			    /* only the nth matching packet (1 = first) */
	uint64_t every;			    /* every Nth matching packet */
	uint64_t prob;			    /* fire with probability prob / 2^64 ... */
	bool prob_one;			    /* ... or always (prob=1) */
	uint64_t count;			    /* at most this many faults */
	uint64_t seed;			    /* the rule's own generator seed */
};

/* What the matcher needs of a packet (common_fault_pkt_of fills it). */
struct common_fault_pkt {
	uint8_t dir; /* enum common_fault_dir */
	uint8_t opcode;
	bool has_aeth;
	uint8_t syndrome; /* AETH syndrome when has_aeth */
	uint32_t qpn;	  /* BTH destination QP */
	uint32_t psn;
};

/* "drop", "dup", ... ("?" out of range). */
const char *common_fault_action_name(unsigned action);

/* "tx" or "rx". */
const char *common_fault_dir_name(unsigned dir);

/*
 * Parse one rule. Leading and trailing blanks are ignored; the rest must be
 * the whole rule. 0 with *r filled, or -EINVAL with a one-line message in
 * err (at most errlen bytes, NUL-terminated) naming the bad part, e.g.
 * "unknown action 'drp' (drop, dup, delay=MS, ...)".
 */
int common_fault_parse(const char *text, struct common_fault_rule *r, char *err, size_t errlen);

/*
 * The summary of one IB packet (BTH .. ICRC, len bytes) travelling in
 * direction dir. 0, or -EINVAL when it is too short to hold a BTH, the
 * headers its opcode needs and an ICRC (such packets match no rule).
 */
int common_fault_pkt_of(const void *pkt, size_t len, unsigned dir, struct common_fault_pkt *p);

/*
 * Does the packet meet the rule's conditions: direction, QPN, opcode or
 * class, PSN range? Forged replies (rnr-nak, seq-nak, ghost-ack) also need
 * a packet with an AETH. The stateful conditions (nth, every, prob, count)
 * are not looked at.
 */
bool common_fault_match(const struct common_fault_rule *r, const struct common_fault_pkt *p);

/* Does the action rewrite a response into a forged reply? */
static inline bool common_fault_forges(unsigned action)
{
	return action == COMMON_FAULT_RNR_NAK || action == COMMON_FAULT_SEQ_NAK ||
	       action == COMMON_FAULT_GHOST_ACK;
}

#endif /* COMMON_FAULTRULE_H */
