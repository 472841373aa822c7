/* SPDX-License-Identifier: MIT */
/*
 * verbs_test: what the small verbs programs of tests/verbs and tests/dp
 * share, in plain libibverbs (they run under the shim like any program):
 * a check that prints "ok: ..." or "FAIL: ..." and counts the failures, and
 * opening a device by name.
 */
#ifndef UROCE_TESTS_LIB_VERBS_TEST_H
#define UROCE_TESTS_LIB_VERBS_TEST_H

#include <infiniband/verbs.h>

/* Checks that failed so far (check). */
extern int failures;

/* Prints "ok: MESSAGE" or "FAIL: MESSAGE"; a failure is counted. */
void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The device of that name, opened; NULL when there is none or it does not
 * open (errno says why). */
struct ibv_context *open_dev(const char *name);

#endif
