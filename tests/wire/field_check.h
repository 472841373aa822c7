/* SPDX-License-Identifier: MIT */
/*
 * A generic round-trip check for one header field accessor pair: the field
 * is described by where it sits (byte offset, bytes spanned, big-endian bit
 * mask over those bytes); the check sets a range of values on buffers
 * pre-filled with different backgrounds and verifies the getter returns the
 * value, the field's bytes hold exactly the expected big-endian bits, and
 * every other bit of the header is untouched.
 */
#ifndef TESTS_WIRE_FIELD_CHECK_H
#define TESTS_WIRE_FIELD_CHECK_H

#include <check.h>
#include <stdint.h>
#include <string.h>

struct field_case {
	const char *name;
	size_t hdr_bytes;
	size_t off;    /* first byte of the field */
	size_t nbytes; /* bytes it spans (1..8) */
	uint64_t mask; /* big-endian mask over those bytes */
	uint64_t (*get)(const void *hdr);
	void (*set)(void *hdr, uint64_t v);
};

#define FIELD_ACCESSORS(h, f)                                          \
	static uint64_t get_##h##_##f(const void *p)                   \
	{                                                              \
		return wire_##h##_get_##f((const struct wire_##h *)p); \
	}                                                              \
	static void set_##h##_##f(void *p, uint64_t v)                 \
	{                                                              \
		wire_##h##_set_##f((struct wire_##h *)p, v);           \
	}

#define FIELD_CASE(h, f, off, nbytes, mask)                                           \
	{                                                                             \
#h "." #f, sizeof(struct wire_##h), off, nbytes, mask, get_##h##_##f, \
		    set_##h##_##f                                                     \
	}

static inline unsigned field_shift(uint64_t mask)
{
	unsigned s = 0;

	while (!(mask >> s & 1))
		s++;
	return s;
}

static inline void field_check(const struct field_case *fc)
{
	const unsigned shift = field_shift(fc->mask);
	const uint64_t maxval = fc->mask >> shift;
	const uint64_t values[] = {0,
				   1,
				   maxval,
				   maxval >> 1,
				   0xa5a5a5a5a5a5a5a5ull & maxval,
				   0x5a5a5a5a5a5a5a5aull & maxval,
				   0x0123456789abcdefull & maxval,
				   0xfedcba9876543210ull & maxval};
	const uint8_t backgrounds[] = {0x00, 0xff, 0x5a, 0xa5};

	for (size_t b = 0; b < sizeof(backgrounds); b++) {
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			uint8_t before[64], after[64];
			uint64_t v = values[i], got, bits = 0;

			ck_assert_uint_le(fc->hdr_bytes, sizeof(before));
			memset(before, backgrounds[b], sizeof(before));
			/* vary the background per byte too */
			for (size_t k = 0; k < fc->hdr_bytes; k++)
				before[k] ^= (uint8_t)(k * 0x11 * (b & 1));
			memcpy(after, before, sizeof(after));
			fc->set(after, v);
			got = fc->get(after);
			ck_assert_msg(got == v, "%s: set 0x%llx, got 0x%llx", fc->name,
				      (unsigned long long)v, (unsigned long long)got);
			/* the field's bytes: big-endian, only the mask bits changed */
			for (size_t k = 0; k < fc->nbytes; k++)
				bits = bits << 8 | after[fc->off + k];
			ck_assert_msg((bits & fc->mask) == ((v << shift) & fc->mask),
				      "%s: wire bits 0x%llx for value 0x%llx", fc->name,
				      (unsigned long long)(bits & fc->mask), (unsigned long long)v);
			for (size_t k = 0; k < fc->hdr_bytes; k++) {
				uint8_t m = 0;

				if (k >= fc->off && k < fc->off + fc->nbytes)
					m = (uint8_t)(fc->mask >>
						      (8 * (fc->nbytes - 1 - (k - fc->off))));
				ck_assert_msg((after[k] & ~m & 0xff) == (before[k] & ~m & 0xff),
					      "%s: byte %zu outside the field changed", fc->name,
					      k);
			}
			/* setting a value wider than the field keeps only the field */
			memcpy(after, before, sizeof(after));
			fc->set(after, v | ~maxval);
			if (maxval != UINT64_MAX && fc->nbytes < 8 && maxval > 1) {
				ck_assert_msg(fc->get(after) == v, "%s: wide value leaked",
					      fc->name);
			}
			ck_assert_mem_eq(after + fc->hdr_bytes, before + fc->hdr_bytes,
					 sizeof(after) - fc->hdr_bytes);
		}
	}
}

#endif
