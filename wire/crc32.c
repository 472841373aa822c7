/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (IEEE 802.3, reflected). Two engines behind one entry point:
 *  - slice-by-8: eight bytes per step through eight 256-entry tables that are
 *    generated at build time (wire/tools/gen_crc32_tables.c) into static
 *    const storage; portable, endian-neutral byte loads;
 *  - on x86 CPUs with PCLMULQDQ, carry-less multiplication folding (Intel,
 *    "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ"): four
 *    128-bit lanes folded 64 bytes at a time, then one lane, then a tail
 *    shorter than 16 bytes folded in as a partial block, then a Barrett
 *    reduction to 32 bits. Buffers of 32 to 127 bytes (the headers and
 *    payload of small packets) take the one-lane fold alone;
 *  - on x86 CPUs with AVX-512 and VPCLMULQDQ, the same folding sixteen
 *    128-bit lanes at a time (four 512-bit registers, 256 bytes per step),
 *    then the four registers into one, its four lanes into one, and the
 *    PCLMULQDQ engine's reduction;
 *  - on x86 CPUs with AVX2 and VPCLMULQDQ but no AVX-512 (AMD Zen 3, Intel
 *    Alder Lake and later cores), the sixteen lanes in eight 256-bit
 *    registers, with the same constants: registers 2i and 2i+1 together are
 *    what the 512-bit engine keeps in register i.
 * The bytewise one-table loop is kept as the reference.
 */
#include <stdint.h>
#include <string.h>

#include <wire/crc32.h>
#include "wire_crc32_tables.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WIRE_CRC32_CLMUL 1
#include <immintrin.h>
#endif

/* From this many bytes four lanes are folded (folding has a fixed setup cost). */
#define WIRE_CRC32_CLMUL_MIN 128
/* From this many bytes one lane beats the tables (bench_icrc: a 64-byte
 * packet's ICRC 61 -> 40 ns with the one-lane fold on this machine). */
#define WIRE_CRC32_CLMUL1_MIN 32
/* From this many bytes the 512-bit and 256-bit engines fold at least two full steps. */
#define WIRE_CRC32_VPCLMUL_MIN 512

uint32_t wire_crc32_update_slice8(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* Loads are composed from bytes, so any alignment is fine (and fast on x86). */
	while (len >= 8) {
		uint32_t a = reg ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				    (uint32_t)p[3] << 24);
		uint32_t b = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			     (uint32_t)p[7] << 24;

		reg = wire_crc32_tab[7][a & 0xff] ^ wire_crc32_tab[6][(a >> 8) & 0xff] ^
		      wire_crc32_tab[5][(a >> 16) & 0xff] ^ wire_crc32_tab[4][a >> 24] ^
		      wire_crc32_tab[3][b & 0xff] ^ wire_crc32_tab[2][(b >> 8) & 0xff] ^
		      wire_crc32_tab[1][(b >> 16) & 0xff] ^ wire_crc32_tab[0][b >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		reg = (reg >> 8) ^ wire_crc32_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

#ifdef WIRE_CRC32_CLMUL
/*
 * Fold constants for the reflected polynomial (x^n mod P(x), bit-reflected,
 * as in the Intel paper): 4x128 bits (k1, k2), 128 bits (k3, k4), 64 bits
 * (k5), and the Barrett pair P'(x) and mu'.
 */
#define WIRE_K1 0x154442bd4ull
#define WIRE_K2 0x1c6e41596ull
#define WIRE_K3 0x1751997d0ull
#define WIRE_K4 0x0ccaa009eull
#define WIRE_K5 0x163cd6124ull
/* 16x128 bits (x^(2048+32), x^(2048-32)), for the 512-bit engine */
#define WIRE_K16A 0x11542778aull
#define WIRE_K16B 0x1322d1430ull
#define WIRE_POLY 0x1db710641ull
#define WIRE_MU 0x1f7011641ull

/* acc * x^(fold distance) + data, with k = {lo: k_a, hi: k_b}. */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i wire_fold(__m128i acc, __m128i k,
									 __m128i data)
{
	__m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

/*
 * Indices for _mm_shuffle_epi8 with a tail of r bytes (1..15): read from
 * offset 16 + r they shift a register right by r bytes; read from offset r,
 * left by 16 - r, with the top bit set where nothing is shifted in (a zero
 * byte; for _mm_blendv_epi8, "take the second operand").
 */
static const uint8_t wire_crc32_shift_tbl[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0,	  1,	2,    3,    4,	  5,	6,    7,    8,	  9,	10,   11,   12,	  13,	14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

/*
 * One 128-bit lane x that holds the CRC state of the bytes before p (at
 * least 16 of them, in the same buffer), then the len bytes at p, reduced
 * to the 32-bit register. A tail shorter than 16 bytes is folded in whole
 * (Intel's paper, "partial block"): the lane's first r bytes are folded
 * one block ahead onto its other 16 - r followed by the tail, read as the
 * last 16 bytes of the buffer.
 */
__attribute__((target("pclmul,sse4.1"))) static inline uint32_t
wire_crc32_lane(__m128i x, const uint8_t *p, size_t len)
{
	const __m128i k34 = _mm_set_epi64x((long long)WIRE_K4, (long long)WIRE_K3);
	const __m128i k5 = _mm_set_epi64x(0, (long long)WIRE_K5);
	const __m128i pmu = _mm_set_epi64x((long long)WIRE_MU, (long long)WIRE_POLY);
	const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m128i t;

	while (len >= 16) {
		x = wire_fold(x, k34, _mm_loadu_si128((const __m128i *)(const void *)p));
		p += 16;
		len -= 16;
	}
	if (len) {
		const __m128i left =
		    _mm_loadu_si128((const __m128i *)(const void *)(wire_crc32_shift_tbl + len));
		const __m128i right = _mm_loadu_si128(
		    (const __m128i *)(const void *)(wire_crc32_shift_tbl + 16 + len));
		const __m128i last = _mm_loadu_si128((const __m128i *)(const void *)(p + len - 16));
		/* the lane's last 16 - len bytes, then the tail */
		__m128i block = _mm_blendv_epi8(last, _mm_shuffle_epi8(x, right), left);

		x = wire_fold(_mm_shuffle_epi8(x, left), k34, block);
	}
	/* 128 -> 96 -> 64 bits */
	t = _mm_clmulepi64_si128(x, k34, 0x10);
	x = _mm_xor_si128(_mm_srli_si128(x, 8), t);
	t = _mm_srli_si128(x, 4);
	x = _mm_clmulepi64_si128(_mm_and_si128(x, low32), k5, 0x00);
	x = _mm_xor_si128(x, t);
	/* Barrett reduction to 32 bits */
	t = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pmu, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), pmu, 0x00);
	x = _mm_xor_si128(x, t);
	return (uint32_t)_mm_extract_epi32(x, 1);
}

/*
 * Four 128-bit lanes that hold the CRC state of the bytes before p, in order,
 * folded into one, then wire_crc32_lane.
 */
__attribute__((target("pclmul,sse4.1"))) static inline uint32_t
wire_crc32_lanes(const __m128i lane[4], const uint8_t *p, size_t len)
{
	const __m128i k34 = _mm_set_epi64x((long long)WIRE_K4, (long long)WIRE_K3);
	__m128i x;

	x = wire_fold(lane[0], k34, lane[1]);
	x = wire_fold(x, k34, lane[2]);
	x = wire_fold(x, k34, lane[3]);
	return wire_crc32_lane(x, p, len);
}

/* The register after len bytes at p with one lane; len >= 32. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
wire_crc32_clmul1(uint32_t reg, const uint8_t *p, size_t len)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);

	x = _mm_xor_si128(x, _mm_cvtsi32_si128((int)reg));
	return wire_crc32_lane(x, p + 16, len - 16);
}

/*
 * The register after len bytes at p; len >= 64. With dst, the bytes are
 * also copied there as they are folded (wire_crc32_update_copy): each block
 * is stored from the register it was loaded into, and the tail, shorter
 * than a step, is copied and then read from dst, whose bytes before it
 * (which the partial-block fold may read) are already there.
 */
__attribute__((target("pclmul,sse4.1"), always_inline)) static inline uint32_t
wire_crc32_clmul_body(uint32_t reg, const uint8_t *p, size_t len, uint8_t *dst)
{
	const __m128i k12 = _mm_set_epi64x((long long)WIRE_K2, (long long)WIRE_K1);
	__m128i lane[4];

	for (int i = 0; i < 4; i++) {
		lane[i] = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
		if (dst)
			_mm_storeu_si128((__m128i *)(void *)(dst + 16 * i), lane[i]);
	}
	/* the incoming register is xored into the first 32 bits, as a bytewise CRC would */
	lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi32_si128((int)reg));
	p += 64;
	len -= 64;
	if (dst)
		dst += 64;
	while (len >= 64) {
		for (int i = 0; i < 4; i++) {
			__m128i d = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));

			if (dst)
				_mm_storeu_si128((__m128i *)(void *)(dst + 16 * i), d);
			lane[i] = wire_fold(lane[i], k12, d);
		}
		p += 64;
		len -= 64;
		if (dst)
			dst += 64;
	}
	if (dst) {
		memcpy(dst, p, len);
		p = dst;
	}
	return wire_crc32_lanes(lane, p, len);
}

__attribute__((target("pclmul,sse4.1"))) static uint32_t
wire_crc32_clmul(uint32_t reg, const uint8_t *p, size_t len)
{
	return wire_crc32_clmul_body(reg, p, len, NULL);
}

__attribute__((target("pclmul,sse4.1"))) static uint32_t
wire_crc32_clmul_copy(uint32_t reg, uint8_t *dst, const uint8_t *p, size_t len)
{
	return wire_crc32_clmul_body(reg, p, len, dst);
}

/* wire_fold on each of the four 128-bit lanes of a 512-bit register. */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1"))) static inline __m512i
wire_fold512(__m512i acc, __m512i k, __m512i data)
{
	__m512i lo = _mm512_clmulepi64_epi128(acc, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(acc, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, data, 0x96); /* lo ^ hi ^ data */
}

/*
 * The register after len bytes at p with 512-bit folding; len >= 256. Each 128-bit lane of z[0..3]
 * is one of sixteen lanes that are folded 2048 bits ahead onto the next 256 bytes.
 */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1"))) static uint32_t
wire_crc32_vpclmul(uint32_t reg, const uint8_t *p, size_t len)
{
	const __m512i k16 =
	    _mm512_broadcast_i32x4(_mm_set_epi64x((long long)WIRE_K16B, (long long)WIRE_K16A));
	const __m512i k4 =
	    _mm512_broadcast_i32x4(_mm_set_epi64x((long long)WIRE_K2, (long long)WIRE_K1));
	__m512i z[4], x;
	__m128i lane[4];

	for (int i = 0; i < 4; i++)
		z[i] = _mm512_loadu_si512((const void *)(p + 64 * i));
	z[0] = _mm512_xor_si512(z[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg)));
	p += 256;
	len -= 256;
	while (len >= 256) {
		for (int i = 0; i < 4; i++)
			z[i] =
			    wire_fold512(z[i], k16, _mm512_loadu_si512((const void *)(p + 64 * i)));
		p += 256;
		len -= 256;
	}
	/* four registers into one, 512 bits apart */
	x = wire_fold512(z[0], k4, z[1]);
	x = wire_fold512(x, k4, z[2]);
	x = wire_fold512(x, k4, z[3]);
	while (len >= 64) {
		x = wire_fold512(x, k4, _mm512_loadu_si512((const void *)p));
		p += 64;
		len -= 64;
	}
	lane[0] = _mm512_extracti32x4_epi32(x, 0);
	lane[1] = _mm512_extracti32x4_epi32(x, 1);
	lane[2] = _mm512_extracti32x4_epi32(x, 2);
	lane[3] = _mm512_extracti32x4_epi32(x, 3);
	return wire_crc32_lanes(lane, p, len);
}

/* wire_fold on each of the two 128-bit lanes of a 256-bit register. */
__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) static inline __m256i
wire_fold256(__m256i acc, __m256i k, __m256i data)
{
	__m256i lo = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi), data);
}

/*
 * The register after len bytes at p with 256-bit folding; len >= 256. The sixteen
 * lanes of wire_crc32_vpclmul in y[0..7], folded 2048 bits ahead; then y[2i] and
 * y[2i+1] are folded, 512 bits ahead, onto y[2i+2] and y[2i+3]. With dst, a
 * copy on the way, as wire_crc32_clmul_body does it.
 */
__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"), always_inline)) static inline uint32_t
wire_crc32_vpclmul256_body(uint32_t reg, const uint8_t *p, size_t len, uint8_t *dst)
{
	const __m256i k16 =
	    _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)WIRE_K16B, (long long)WIRE_K16A));
	const __m256i k4 =
	    _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)WIRE_K2, (long long)WIRE_K1));
	__m256i y[8], lo, hi;
	__m128i lane[4];

	for (int i = 0; i < 8; i++) {
		y[i] = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * i));
		if (dst)
			_mm256_storeu_si256((__m256i *)(void *)(dst + 32 * i), y[i]);
	}
	y[0] = _mm256_xor_si256(y[0], _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)reg)));
	p += 256;
	len -= 256;
	if (dst)
		dst += 256;
	while (len >= 256) {
		for (int i = 0; i < 8; i++) {
			__m256i d = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * i));

			if (dst)
				_mm256_storeu_si256((__m256i *)(void *)(dst + 32 * i), d);
			y[i] = wire_fold256(y[i], k16, d);
		}
		p += 256;
		len -= 256;
		if (dst)
			dst += 256;
	}
	if (dst) {
		memcpy(dst, p, len);
		p = dst;
	}
	/* four pairs into one, 512 bits apart */
	lo = wire_fold256(y[0], k4, y[2]);
	hi = wire_fold256(y[1], k4, y[3]);
	lo = wire_fold256(lo, k4, y[4]);
	hi = wire_fold256(hi, k4, y[5]);
	lo = wire_fold256(lo, k4, y[6]);
	hi = wire_fold256(hi, k4, y[7]);
	while (len >= 64) {
		lo = wire_fold256(lo, k4, _mm256_loadu_si256((const __m256i *)(const void *)p));
		hi = wire_fold256(hi, k4,
				  _mm256_loadu_si256((const __m256i *)(const void *)(p + 32)));
		p += 64;
		len -= 64;
	}
	lane[0] = _mm256_castsi256_si128(lo);
	lane[1] = _mm256_extracti128_si256(lo, 1);
	lane[2] = _mm256_castsi256_si128(hi);
	lane[3] = _mm256_extracti128_si256(hi, 1);
	return wire_crc32_lanes(lane, p, len);
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) static uint32_t
wire_crc32_vpclmul256(uint32_t reg, const uint8_t *p, size_t len)
{
	return wire_crc32_vpclmul256_body(reg, p, len, NULL);
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1"))) static uint32_t
wire_crc32_vpclmul256_copy(uint32_t reg, uint8_t *dst, const uint8_t *p, size_t len)
{
	return wire_crc32_vpclmul256_body(reg, p, len, dst);
}

#endif

/*
 * The checks read libgcc's cpuid results, taken once at start-up; their
 * answer is kept, since every CRC asks (seven checks a call were a tenth
 * of a small packet's ICRC). Never 0 once known (SLICE8 is always there),
 * and every thread that computes it computes the same value.
 */
static unsigned crc32_engines_known;

static unsigned crc32_engines_probe(void)
{
	unsigned e = WIRE_CRC32_ENGINE_SLICE8;

#ifdef WIRE_CRC32_CLMUL
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
		e |= WIRE_CRC32_ENGINE_CLMUL;
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq"))
			e |= WIRE_CRC32_ENGINE_VPCLMUL;
		if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq"))
			e |= WIRE_CRC32_ENGINE_VPCLMUL256;
	}
#endif
	return e;
}

unsigned wire_crc32_engines(void)
{
	unsigned e = __atomic_load_n(&crc32_engines_known, __ATOMIC_RELAXED);

	if (!e) {
		e = crc32_engines_probe();
		__atomic_store_n(&crc32_engines_known, e, __ATOMIC_RELAXED);
	}
	return e;
}

/* The folding engines, as wire_crc32_choose names them. */
enum crc32_fold { CRC32_TABLES, CRC32_CLMUL1, CRC32_CLMUL, CRC32_VPCLMUL256, CRC32_VPCLMUL };

/*
 * The widest engine of the mask `use` (engines this CPU has) that a buffer
 * of len bytes is long enough for: the one choice every entry point makes.
 */
static inline enum crc32_fold crc32_choose(unsigned use, size_t len)
{
	if ((use & WIRE_CRC32_ENGINE_VPCLMUL) && len >= WIRE_CRC32_VPCLMUL_MIN)
		return CRC32_VPCLMUL;
	if ((use & WIRE_CRC32_ENGINE_VPCLMUL256) && len >= WIRE_CRC32_VPCLMUL_MIN)
		return CRC32_VPCLMUL256;
	if ((use & WIRE_CRC32_ENGINE_CLMUL) && len >= WIRE_CRC32_CLMUL_MIN)
		return CRC32_CLMUL;
	if ((use & WIRE_CRC32_ENGINE_CLMUL) && len >= WIRE_CRC32_CLMUL1_MIN)
		return CRC32_CLMUL1;
	return CRC32_TABLES;
}

const char *wire_crc32_engine_name(void)
{
	switch (crc32_choose(wire_crc32_engines(), SIZE_MAX)) {
	case CRC32_VPCLMUL:
		return "AVX-512 VPCLMULQDQ (512-bit folds)";
	case CRC32_VPCLMUL256:
		return "AVX2 VPCLMULQDQ (256-bit folds)";
	case CRC32_CLMUL:
	case CRC32_CLMUL1:
		return "PCLMULQDQ (128-bit folds)";
	case CRC32_TABLES:
		break;
	}
	return "slice-by-8 tables";
}

uint32_t wire_crc32_update_engine(unsigned engine, uint32_t reg, const void *buf, size_t len)
{
#ifdef WIRE_CRC32_CLMUL
	switch (crc32_choose(engine & wire_crc32_engines(), len)) {
	case CRC32_VPCLMUL:
		return wire_crc32_vpclmul(reg, buf, len);
	case CRC32_VPCLMUL256:
		return wire_crc32_vpclmul256(reg, buf, len);
	case CRC32_CLMUL:
		return wire_crc32_clmul(reg, buf, len);
	case CRC32_CLMUL1:
		return wire_crc32_clmul1(reg, buf, len);
	case CRC32_TABLES:
		break;
	}
#else
	(void)engine;
#endif
	return wire_crc32_update_slice8(reg, buf, len);
}

uint32_t wire_crc32_update(uint32_t reg, const void *buf, size_t len)
{
	return wire_crc32_update_engine(WIRE_CRC32_ENGINE_ALL, reg, buf, len);
}

uint32_t wire_crc32_update_copy_engine(unsigned engine, uint32_t reg, void *dst, const void *src,
				       size_t len)
{
#ifdef WIRE_CRC32_CLMUL
	/* The 512-bit engine and the one-lane fold have no copying form:
	 * they copy first. */
	switch (crc32_choose(engine & wire_crc32_engines(), len)) {
	case CRC32_VPCLMUL256:
		return wire_crc32_vpclmul256_copy(reg, dst, src, len);
	case CRC32_CLMUL:
		return wire_crc32_clmul_copy(reg, dst, src, len);
	default:
		break;
	}
#endif
	memcpy(dst, src, len);
	return wire_crc32_update_engine(engine, reg, dst, len);
}

uint32_t wire_crc32_update_copy(uint32_t reg, void *dst, const void *src, size_t len)
{
	return wire_crc32_update_copy_engine(WIRE_CRC32_ENGINE_ALL, reg, dst, src, len);
}

uint32_t wire_crc32_update_bytewise(uint32_t reg, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--)
		reg = (reg >> 8) ^ wire_crc32_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

uint32_t wire_crc32(const void *buf, size_t len)
{
	return ~wire_crc32_update(WIRE_CRC32_INIT, buf, len);
}
