/* SPDX-License-Identifier: MIT */
/* Tests of wire/bth.h: size and a round trip of every BTH field. */
#include <wire/bth.h>

#include "field_check.h"
#include "suites.h"

FIELD_ACCESSORS(bth, opcode)
FIELD_ACCESSORS(bth, se)
FIELD_ACCESSORS(bth, mig)
FIELD_ACCESSORS(bth, padcnt)
FIELD_ACCESSORS(bth, tver)
FIELD_ACCESSORS(bth, pkey)
FIELD_ACCESSORS(bth, fecn)
FIELD_ACCESSORS(bth, becn)
FIELD_ACCESSORS(bth, resv6)
FIELD_ACCESSORS(bth, destqp)
FIELD_ACCESSORS(bth, ackreq)
FIELD_ACCESSORS(bth, resv7)
FIELD_ACCESSORS(bth, psn)

/* IBA 9.2 figure 79: where each field sits. */
static const struct field_case bth_fields[] = {
    FIELD_CASE(bth, opcode, 0, 1, 0xff),  FIELD_CASE(bth, se, 1, 1, 0x80),
    FIELD_CASE(bth, mig, 1, 1, 0x40),	  FIELD_CASE(bth, padcnt, 1, 1, 0x30),
    FIELD_CASE(bth, tver, 1, 1, 0x0f),	  FIELD_CASE(bth, pkey, 2, 2, 0xffff),
    FIELD_CASE(bth, fecn, 4, 1, 0x80),	  FIELD_CASE(bth, becn, 4, 1, 0x40),
    FIELD_CASE(bth, resv6, 4, 1, 0x3f),	  FIELD_CASE(bth, destqp, 5, 3, 0xffffff),
    FIELD_CASE(bth, ackreq, 8, 1, 0x80),  FIELD_CASE(bth, resv7, 8, 1, 0x7f),
    FIELD_CASE(bth, psn, 9, 3, 0xffffff),
};

START_TEST(test_bth_size)
{
	ck_assert_uint_eq(sizeof(struct wire_bth), 12);
	ck_assert_uint_eq(WIRE_BTH_BYTES, 12);
}
END_TEST

START_TEST(test_bth_field)
{
	field_check(&bth_fields[_i]);
}
END_TEST

/* The BTH of PROTOCOL.md's worked vector: 04 30 ff ff 00 00 00 11 80 00 01 00. */
START_TEST(test_bth_known_bytes)
{
	static const uint8_t want[12] = {0x04, 0x30, 0xff, 0xff, 0x00, 0x00,
					 0x00, 0x11, 0x80, 0x00, 0x01, 0x00};
	struct wire_bth h;

	memset(&h, 0, sizeof(h));
	wire_bth_set_opcode(&h, 0x04);
	wire_bth_set_padcnt(&h, 3);
	wire_bth_set_pkey(&h, 0xffff);
	wire_bth_set_destqp(&h, 0x11);
	wire_bth_set_ackreq(&h, 1);
	wire_bth_set_psn(&h, 0x100);
	ck_assert_mem_eq(&h, want, sizeof(want));
	ck_assert_uint_eq(wire_bth_get_psn((const struct wire_bth *)want), 256);
	ck_assert_uint_eq(wire_bth_get_destqp((const struct wire_bth *)want), 0x11);
	ck_assert_uint_eq(wire_bth_get_padcnt((const struct wire_bth *)want), 3);
}
END_TEST

Suite *bth_suite(void)
{
	Suite *s = suite_create("bth");
	TCase *tc = tcase_create("fields");

	tcase_add_test(tc, test_bth_size);
	tcase_add_loop_test(tc, test_bth_field, 0,
			    (int)(sizeof(bth_fields) / sizeof(bth_fields[0])));
	tcase_add_test(tc, test_bth_known_bytes);
	suite_add_tcase(s, tc);
	return s;
}
