/* SPDX-License-Identifier: MIT */
/*
 * Micro-benchmark of the ICRC: nanoseconds per packet for 64-byte and 4 KiB
 * payloads (RC SEND Only over IPv4): a bytewise reference (masked copy, one
 * table lookup per byte), the same with the slice-by-8 tables, and what the
 * daemon calls - wire_icrc_compute() over a captured IP packet and
 * wire_icrc_udp4() over the UDP-socket pseudo-header - which use the fastest
 * CRC engine the CPU has, and the transport engine's per-packet path
 * (wire_icrc_begin_udp4, whose state per pseudo header is remembered, then
 * wire_icrc_add_ib; a new IPv4 ID each packet, as GSO segments have).
 * Every variant's result is checked against the others. The last two
 * columns are the IPv4 ID solve (for a packet sent with ID
 * 0x1234): wire_icrc_solve_ipv4_id from scratch, and what the daemon's
 * tracked and any ICRC modes pay on top of the ID-0 check with the solver
 * they keep per packet length (wire_icrc_id_solve).
 * A second table gives each CRC-32 engine the CPU has on its own (slice-by-8,
 * PCLMULQDQ, VPCLMULQDQ), in GB/s over 4 KiB and 64 KiB buffers.
 *   bench_icrc [SECONDS_PER_CASE]   (default 0.2)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wire/wire.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The recipe of PROTOCOL.md 6 on a masked copy, with a given CRC engine. */
static uint32_t icrc_masked_copy(const uint8_t *ip, size_t len,
				 uint32_t (*engine)(uint32_t, const void *, size_t))
{
	static uint8_t copy[8 + 65536];

	memset(copy, 0xff, 8);
	memcpy(copy + 8, ip, len);
	copy[8 + 1] = 0xff;		    /* TOS */
	copy[8 + 8] = 0xff;		    /* TTL */
	copy[8 + 10] = copy[8 + 11] = 0xff; /* IP checksum */
	copy[8 + 26] = copy[8 + 27] = 0xff; /* UDP checksum */
	copy[8 + 28 + 4] = 0xff;	    /* BTH byte 4 */
	return ~engine(WIRE_CRC32_INIT, copy, 8 + len);
}

/* One packet to checksum, in the forms each variant takes. */
struct bench_pkt {
	const uint8_t *ip; /* IP header of the frame */
	size_t ip_len;	   /* IP header .. pad */
	const uint8_t *ib; /* BTH */
	size_t ib_len;	   /* BTH .. pad */
	const uint8_t *src, *dst;
	uint32_t icrc_id; /* the ICRC with IP ID 0x1234 */
	uint32_t icrc_0;  /* the ICRC with IP ID 0 */
	struct wire_icrc_id_solver sv;
};

static uint32_t run_bytewise(const struct bench_pkt *b)
{
	return icrc_masked_copy(b->ip, b->ip_len, wire_crc32_update_bytewise);
}

static uint32_t run_slice8(const struct bench_pkt *b)
{
	return icrc_masked_copy(b->ip, b->ip_len, wire_crc32_update_slice8);
}

static uint32_t run_icrc(const struct bench_pkt *b)
{
	uint32_t v = 0;

	wire_icrc_compute(b->ip, 20, b->ip_len, &v);
	return v;
}

static uint32_t run_udp4(const struct bench_pkt *b)
{
	return wire_icrc_udp4(b->src, b->dst, 0xc000, 4791, b->ib, b->ib_len);
}

static uint32_t run_engine(const struct bench_pkt *b)
{
	static uint16_t id;

	return wire_icrc_end(wire_icrc_add_ib(
	    wire_icrc_begin_udp4(b->src, b->dst, id++, WIRE_IPV4_DF, 4791, 4791, b->ib_len), 0,
	    b->ib, b->ib_len));
}

static uint32_t run_solve(const struct bench_pkt *b)
{
	uint16_t id = 0;

	wire_icrc_solve_ipv4_id(b->src, b->dst, WIRE_IPV4_DF, 0xc000, 4791, b->ib, b->ib_len,
				b->icrc_id, &id);
	return id;
}

static uint32_t run_solver(const struct bench_pkt *b)
{
	uint16_t id = 0;

	wire_icrc_id_solve(&b->sv, b->icrc_0 ^ b->icrc_id, &id);
	return id;
}

static volatile uint32_t sink;

/* GB/s of one CRC-32 engine over len bytes, run for about `secs`. */
static double engine_gbps(double secs, unsigned engine, const uint8_t *buf, size_t len)
{
	unsigned long calls = 0;
	double t0 = now(), t;

	do {
		for (int i = 0; i < 16; i++)
			sink ^= wire_crc32_update_engine(engine, WIRE_CRC32_INIT, buf, len);
		calls += 16;
		t = now() - t0;
	} while (t < secs);
	return (double)len * (double)calls / t * 1e-9;
}

/* ns per 4 KiB piece of src (len bytes, walked through) put into dst and
 * CRCed: memcpy then wire_crc32_update_engine, or the copying form. */
static double copy_ns(double secs, unsigned engine, bool fold, uint8_t *dst, const uint8_t *src,
		      size_t len)
{
	unsigned long calls = 0;
	size_t at = 0;
	double t0 = now(), t;

	do {
		for (int i = 0; i < 16; i++) {
			if (fold) {
				sink ^= wire_crc32_update_copy_engine(engine, WIRE_CRC32_INIT, dst,
								      src + at, 4096);
			} else {
				memcpy(dst, src + at, 4096);
				sink ^=
				    wire_crc32_update_engine(engine, WIRE_CRC32_INIT, dst, 4096);
			}
			at = (at + 4096) % len;
		}
		calls += 16;
		t = now() - t0;
	} while (t < secs);
	return t * 1e9 / (double)calls;
}

/* The engines side by side; 1 when one disagrees with slice-by-8. */
static int engine_table(double secs)
{
	static const unsigned engines[] = {WIRE_CRC32_ENGINE_SLICE8, WIRE_CRC32_ENGINE_CLMUL,
					   WIRE_CRC32_ENGINE_VPCLMUL, WIRE_CRC32_ENGINE_VPCLMUL256};
	static const char *const names[] = {"slice8", "pclmul", "vpclmul", "vpclmul256"};
	static uint8_t buf[65536];
	int status = 0;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 8));
	printf("\n%-10s %12s %12s\n", "crc32", "4 KiB GB/s", "64 KiB GB/s");
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		if (!(wire_crc32_engines() & engines[e])) {
			printf("%-10s %12s %12s\n", names[e], "absent", "absent");
			continue;
		}
		if (wire_crc32_update_engine(engines[e], WIRE_CRC32_INIT, buf, sizeof(buf)) !=
		    wire_crc32_update_slice8(WIRE_CRC32_INIT, buf, sizeof(buf))) {
			fprintf(stderr, "bench_icrc: the %s engine differs\n", names[e]);
			status = 1;
		}
		printf("%-10s %12.1f %12.1f\n", names[e], engine_gbps(secs, engines[e], buf, 4096),
		       engine_gbps(secs, engines[e], buf, sizeof(buf)));
	}
	/* A 4 KiB payload gathered into a packet and covered by its ICRC: a
	 * copy and then a CRC, or folded as it is copied (what the data path
	 * does with memory it maps), across the 64 KiB buffer into 4 KiB. */
	printf("\n%-10s %14s %14s\n", "4 KiB in", "copy, CRC ns", "folded ns");
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		static uint8_t pkt[4096];
		double t_copy, t_fold;

		if (!(wire_crc32_engines() & engines[e]))
			continue;
		if (wire_crc32_update_copy_engine(engines[e], WIRE_CRC32_INIT, pkt, buf + 4096,
						  4096) !=
		    wire_crc32_update_slice8(WIRE_CRC32_INIT, buf + 4096, 4096)) {
			fprintf(stderr, "bench_icrc: the %s engine's copying form differs\n",
				names[e]);
			status = 1;
		}
		t_copy = copy_ns(secs, engines[e], false, pkt, buf, sizeof(buf));
		t_fold = copy_ns(secs, engines[e], true, pkt, buf, sizeof(buf));
		printf("%-10s %14.0f %14.0f\n", names[e], t_copy, t_fold);
	}
	return status;
}

/* Run fn for about `secs`; returns ns per call. */
static double time_it(double secs, uint32_t (*fn)(const struct bench_pkt *),
		      const struct bench_pkt *b)
{
	unsigned long calls = 0;
	double t0 = now(), t;

	do {
		for (int i = 0; i < 64; i++)
			sink ^= fn(b);
		calls += 64;
		t = now() - t0;
	} while (t < secs);
	return t * 1e9 / (double)calls;
}

int main(int argc, char **argv)
{
	static const size_t payloads[] = {64, 4096};
	double secs = argc > 1 ? atof(argv[1]) : 0.2;
	int status = 0;

	if (secs <= 0)
		secs = 0.2;
	printf("%-8s %12s %12s %12s %12s %10s %9s %7s %12s %10s\n", "payload", "bytewise ns",
	       "slice8 ns", "icrc ns", "udp4 ns", "engine ns", "speed-up", "GB/s", "id solve ns",
	       "kept ns");
	for (size_t k = 0; k < sizeof(payloads) / sizeof(payloads[0]); k++) {
		static uint8_t frame[8192], ib[8192];
		struct wire_build b = {.opcode = WIRE_OP_RC_SEND_ONLY, .destqp = 0x11, .psn = 1};
		struct wire_frame_params p = {
		    .ip_version = 4, .src = {127, 0, 0, 1}, .dst = {127, 0, 0, 2}, .fill_icrc = 1};
		uint8_t payload[4096];
		size_t plen = payloads[k], ip_len;
		int n, fl;
		uint32_t a, s8, c, u;
		double t_ref, t_s8, t_fast, t_udp, t_eng, t_solve, t_kept;
		struct bench_pkt bp;

		for (size_t i = 0; i < plen; i++)
			payload[i] = (uint8_t)(i * 7);
		n = wire_build_ib(ib, sizeof(ib), &b, payload, plen);
		fl = wire_frame_build_eth(frame, sizeof(frame), &p, ib, (size_t)n);
		if (n < 0 || fl < 0) {
			fprintf(stderr, "bench_icrc: cannot build the packet\n");
			return 1;
		}
		ip_len = (size_t)fl - 14 - 4; /* IP header .. pad */
		a = icrc_masked_copy(frame + 14, ip_len, wire_crc32_update_bytewise);
		s8 = icrc_masked_copy(frame + 14, ip_len, wire_crc32_update_slice8);
		if (wire_icrc_compute(frame + 14, 20, ip_len, &c) != 0)
			return 1;
		u = wire_icrc_udp4(p.src, p.dst, 0xc000, 4791, ib, (size_t)n - 4);
		if (a != c || a != s8 || c != u || c != wire_icrc_get(frame + fl - 4)) {
			fprintf(stderr, "bench_icrc: results differ: 0x%08x 0x%08x 0x%08x\n", a, c,
				u);
			status = 1;
		}
		bp.ip = frame + 14;
		bp.ip_len = ip_len;
		bp.ib = ib;
		bp.ib_len = (size_t)n - 4;
		bp.src = p.src;
		bp.dst = p.dst;
		bp.icrc_id = wire_icrc_end(
		    wire_icrc_add_ib(wire_icrc_begin_udp4(p.src, p.dst, 0x1234, WIRE_IPV4_DF,
							  0xc000, 4791, bp.ib_len),
				     0, ib, bp.ib_len));
		bp.icrc_0 = u;
		wire_icrc_id_solver_init(&bp.sv, bp.ib_len);
		if (run_solve(&bp) != 0x1234 || run_solver(&bp) != 0x1234) {
			fprintf(stderr, "bench_icrc: the ID solve did not find 0x1234\n");
			status = 1;
		}
		t_ref = time_it(secs, run_bytewise, &bp);
		t_s8 = time_it(secs, run_slice8, &bp);
		t_fast = time_it(secs, run_icrc, &bp);
		t_udp = time_it(secs, run_udp4, &bp);
		t_eng = time_it(secs, run_engine, &bp);
		t_solve = time_it(secs, run_solve, &bp);
		t_kept = time_it(secs, run_solver, &bp);
		printf("%-8zu %12.1f %12.1f %12.1f %12.1f %10.1f %8.1fx %7.2f %12.1f %10.1f\n",
		       plen, t_ref, t_s8, t_fast, t_udp, t_eng, t_ref / t_fast,
		       (double)(ip_len + 8) / t_fast, t_solve, t_kept);
	}
	return engine_table(secs) | status;
}
