/* SPDX-License-Identifier: MIT */
/* Tests of wire/ext.h: sizes and a round trip of every extended-header field. */
#include <wire/ext.h>

#include "field_check.h"
#include "suites.h"

FIELD_ACCESSORS(reth, va)
FIELD_ACCESSORS(reth, rkey)
FIELD_ACCESSORS(reth, dmalen)
FIELD_ACCESSORS(aeth, syndrome)
FIELD_ACCESSORS(aeth, msn)
FIELD_ACCESSORS(atmeth, va)
FIELD_ACCESSORS(atmeth, rkey)
FIELD_ACCESSORS(atmeth, swap_add)
FIELD_ACCESSORS(atmeth, compare)
FIELD_ACCESSORS(atmack, orig)
FIELD_ACCESSORS(deth, qkey)
FIELD_ACCESSORS(deth, resv)
FIELD_ACCESSORS(deth, srcqp)
FIELD_ACCESSORS(immdt, imm)
FIELD_ACCESSORS(ieth, rkey)
FIELD_ACCESSORS(xrceth, resv)
FIELD_ACCESSORS(xrceth, srqn)
FIELD_ACCESSORS(feth, sel)
FIELD_ACCESSORS(feth, plt)

#define ALL64 0xffffffffffffffffull

/* IBA 9.3: offsets and widths of every field. */
static const struct field_case ext_fields[] = {
    FIELD_CASE(reth, va, 0, 8, ALL64),		 FIELD_CASE(reth, rkey, 8, 4, 0xffffffff),
    FIELD_CASE(reth, dmalen, 12, 4, 0xffffffff), FIELD_CASE(aeth, syndrome, 0, 1, 0xff),
    FIELD_CASE(aeth, msn, 1, 3, 0xffffff),	 FIELD_CASE(atmeth, va, 0, 8, ALL64),
    FIELD_CASE(atmeth, rkey, 8, 4, 0xffffffff),	 FIELD_CASE(atmeth, swap_add, 12, 8, ALL64),
    FIELD_CASE(atmeth, compare, 20, 8, ALL64),	 FIELD_CASE(atmack, orig, 0, 8, ALL64),
    FIELD_CASE(deth, qkey, 0, 4, 0xffffffff),	 FIELD_CASE(deth, resv, 4, 1, 0xff),
    FIELD_CASE(deth, srcqp, 5, 3, 0xffffff),	 FIELD_CASE(immdt, imm, 0, 4, 0xffffffff),
    FIELD_CASE(ieth, rkey, 0, 4, 0xffffffff),	 FIELD_CASE(xrceth, resv, 0, 1, 0xff),
    FIELD_CASE(xrceth, srqn, 1, 3, 0xffffff),	 FIELD_CASE(feth, sel, 3, 1, 0x30),
    FIELD_CASE(feth, plt, 3, 1, 0x0f),
};

START_TEST(test_ext_sizes)
{
	ck_assert_uint_eq(sizeof(struct wire_reth), 16);
	ck_assert_uint_eq(sizeof(struct wire_aeth), 4);
	ck_assert_uint_eq(sizeof(struct wire_atmeth), 28);
	ck_assert_uint_eq(sizeof(struct wire_atmack), 8);
	ck_assert_uint_eq(sizeof(struct wire_deth), 8);
	ck_assert_uint_eq(sizeof(struct wire_immdt), 4);
	ck_assert_uint_eq(sizeof(struct wire_ieth), 4);
	ck_assert_uint_eq(sizeof(struct wire_xrceth), 4);
	ck_assert_uint_eq(sizeof(struct wire_feth), 4);
	/* byte layouts: usable at any alignment inside a packet */
	ck_assert_uint_eq(_Alignof(struct wire_atmeth), 1);
	ck_assert_uint_eq(_Alignof(struct wire_reth), 1);
}
END_TEST

START_TEST(test_ext_field)
{
	field_check(&ext_fields[_i]);
}
END_TEST

/* The RETH of synthetic vector 3 (WRITE Only): va 0x7f0000001000, rkey 0x1234, len 8. */
START_TEST(test_ext_known_reth)
{
	static const uint8_t raw[16] = {0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
					0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x08};
	const struct wire_reth *r = (const struct wire_reth *)raw;

	ck_assert_uint_eq(wire_reth_get_va(r), 0x7f0000001000ull);
	ck_assert_uint_eq(wire_reth_get_rkey(r), 0x1234);
	ck_assert_uint_eq(wire_reth_get_dmalen(r), 8);
}
END_TEST

Suite *ext_suite(void)
{
	Suite *s = suite_create("ext");
	TCase *tc = tcase_create("fields");

	tcase_add_test(tc, test_ext_sizes);
	tcase_add_loop_test(tc, test_ext_field, 0,
			    (int)(sizeof(ext_fields) / sizeof(ext_fields[0])));
	tcase_add_test(tc, test_ext_known_reth);
	suite_add_tcase(s, tc);
	return s;
}
