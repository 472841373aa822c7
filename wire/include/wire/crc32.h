/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the CRC the ICRC
 * uses. Table driven, slice-by-8, with tables generated at build time into
 * static const arrays; on x86-64 CPUs with PCLMULQDQ, long buffers are
 * folded with carry-less multiplication instead, 512 bits at a time where the
 * CPU has AVX-512 and VPCLMULQDQ, 256 bits at a time where it has AVX2 and
 * VPCLMULQDQ only (chosen at run time). Two
 * layers: the raw register update (no inversion, so a computation can be
 * split across buffers) and the zlib-compatible one-shot. The slice-by-8
 * and bytewise engines are exported for tests and the benchmark.
 */
#ifndef WIRE_CRC32_H
#define WIRE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Initial register value; the final CRC is the register inverted. */
#define WIRE_CRC32_INIT 0xffffffffu

/*
 * Feed len bytes into the CRC register `reg` (start with WIRE_CRC32_INIT) and
 * return the new register. The CRC of the whole input is ~register. Uses the
 * fastest engine the CPU has; all engines give identical results.
 */
uint32_t wire_crc32_update(uint32_t reg, const void *buf, size_t len);

/* The engines, as bits of wire_crc32_engines() and of an engine mask. */
#define WIRE_CRC32_ENGINE_SLICE8 0x1u  /* portable tables, always there */
#define WIRE_CRC32_ENGINE_CLMUL 0x2u   /* x86-64 PCLMULQDQ + SSE4.1, 128-bit folds */
#define WIRE_CRC32_ENGINE_VPCLMUL 0x4u /* x86-64 AVX-512F + VPCLMULQDQ, 512-bit folds */
#define WIRE_CRC32_ENGINE_VPCLMUL256 0x8u /* x86-64 AVX2 + VPCLMULQDQ, 256-bit folds */
#define WIRE_CRC32_ENGINE_ALL 0xfu

/* The engines this CPU can run (SLICE8 always). */
unsigned wire_crc32_engines(void);

/* The engine wire_crc32_update uses for long buffers on this CPU, for people:
 * "AVX-512 VPCLMULQDQ (512-bit folds)", ..., "slice-by-8 tables". */
const char *wire_crc32_engine_name(void);

/*
 * wire_crc32_update with only the engines in the mask `engine` allowed (each
 * where the CPU has it and the buffer is long enough for it; slice-by-8
 * otherwise): for tests and benchmarks that compare the engines.
 */
uint32_t wire_crc32_update_engine(unsigned engine, uint32_t reg, const void *buf, size_t len);

/*
 * wire_crc32_update over the len bytes at src that also copies them to dst
 * (the buffers must not overlap): a packet's payload gathered into the
 * packet and folded into its ICRC in one pass, where a copy and then a CRC
 * would read the bytes twice. Identical results to memcpy and then
 * wire_crc32_update. The _engine form as wire_crc32_update_engine.
 */
uint32_t wire_crc32_update_copy(uint32_t reg, void *dst, const void *src, size_t len);
uint32_t wire_crc32_update_copy_engine(unsigned engine, uint32_t reg, void *dst, const void *src,
				       size_t len);

/* The same with the portable slice-by-8 tables only. */
uint32_t wire_crc32_update_slice8(uint32_t reg, const void *buf, size_t len);

/* The same, one byte at a time (reference implementation, slow). */
uint32_t wire_crc32_update_bytewise(uint32_t reg, const void *buf, size_t len);

/* zlib's crc32() of a buffer: ~wire_crc32_update(WIRE_CRC32_INIT, buf, len). */
uint32_t wire_crc32(const void *buf, size_t len);

#endif /* WIRE_CRC32_H */
