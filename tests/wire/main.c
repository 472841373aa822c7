/* SPDX-License-Identifier: MIT */
/*
 * Runner for the wire test suites: `test_wire SUITE` runs one suite (ctest
 * registers one test per suite), `test_wire` alone runs them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

struct suite_entry {
	const char *name;
	Suite *(*make)(void);
};

static const struct suite_entry suites[] = {
#define SUITE_ENTRY(n) {#n, n##_suite},
    TEST_WIRE_SUITES(SUITE_ENTRY)
#undef SUITE_ENTRY
};

int main(int argc, char **argv)
{
	SRunner *sr = NULL;
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (argc > 1 && strcmp(argv[1], suites[i].name))
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	if (!sr) {
		fprintf(stderr, "test_wire: no suite named '%s'\n", argv[1]);
		return 2;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
