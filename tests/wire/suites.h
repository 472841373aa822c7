/* SPDX-License-Identifier: MIT */
/*
 * The Check suites of the wire library tests, one per wire/ module; main.c
 * runs the one named on the command line so ctest lists each separately.
 */
#ifndef TESTS_WIRE_SUITES_H
#define TESTS_WIRE_SUITES_H

#include <check.h>

Suite *bth_suite(void);
Suite *ext_suite(void);
Suite *opcode_suite(void);
Suite *crc32_suite(void);
Suite *icrc_suite(void);
Suite *psn_suite(void);
Suite *aeth_suite(void);
Suite *frame_suite(void);
Suite *validate_suite(void);
Suite *describe_suite(void);
Suite *build_suite(void);
Suite *decode_suite(void);
Suite *mad_suite(void);

#define TEST_WIRE_SUITES(X)                                                                        \
	X(bth)                                                                                     \
	X(ext) X(opcode) X(crc32) X(icrc) X(psn) X(aeth) X(frame) X(validate) X(describe) X(build) \
	    X(decode) X(mad)

#endif
