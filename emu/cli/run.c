/* SPDX-License-Identifier: MIT */
/*
 * `uroce run`: run an unmodified verbs program on uroce devices by
 * preloading the shim (<dir of uroce>/../lib/liburoce.so, before anything
 * already in LD_PRELOAD) and exporting UROCE_RUNDIR so that the program
 * finds the same devices as `uroce devices`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_ctl.h"
#include "rundir.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce run [--rundir DIR] -- PROGRAM [ARGS...]\n"
		   "\n"
		   "Run PROGRAM with the uroce verbs shim preloaded, so that "
		   "it sees the uroce\n"
		   "devices of the run directory instead of kernel RDMA "
		   "devices.\n"
		   "\n" CLI_COMMON_HELP);
}

/* <directory of the running uroce>/../lib/liburoce.so */
static int shim_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	if (snprintf(buf, len, "%s/../lib/liburoce.so", dirname(exe)) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int cli_run_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"rundir", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *explicit_dir = NULL, *old;
	char rundir[256], lib[PATH_MAX], real[PATH_MAX], *preload;
	int c, rc;

	optind = 1;
	/* '+': stop at the first non-option, the program's own options
	 * are not ours. */
	while ((c = getopt_long(argc, argv, "+r:h", longopts, NULL)) != -1) {
		rc = cli_common_opt(c, optarg, &explicit_dir, usage);
		if (rc >= 0)
			return rc;
	}
	if (optind >= argc) {
		fprintf(stderr, "uroce run: no program given (see --help)\n");
		return 2;
	}
	if (common_rundir_resolve(explicit_dir, rundir, sizeof(rundir))) {
		fprintf(stderr, "uroce run: run directory name too long\n");
		return 2;
	}
	if (shim_path(lib, sizeof(lib)) || !realpath(lib, real)) {
		fprintf(stderr, "uroce run: cannot find the shim %s: %s\n", lib, strerror(errno));
		return 1;
	}
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		if (asprintf(&preload, "%s:%s", real, old) < 0)
			return 1;
	} else {
		preload = real;
	}
	if (setenv("LD_PRELOAD", preload, 1) || setenv("UROCE_RUNDIR", rundir, 1)) {
		fprintf(stderr, "uroce run: setenv: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[optind], &argv[optind]);
	fprintf(stderr, "uroce run: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
