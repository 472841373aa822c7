/* SPDX-License-Identifier: MIT */
/*
 * Subcommands of the uroce CLI that talk to daemons or run programs on
 * them: `uroce devices` (devices.c), `uroce counters`
 * (counters.c) and `uroce run` (run.c). Each
 * takes the subcommand's own argv (argv[0] is the subcommand name) and
 * returns the process exit status. cli_common.c holds what they share.
 */
#ifndef UROCE_CLI_CTL_H
#define UROCE_CLI_CTL_H

#include <stddef.h>
#include <stdio.h>

/* uroce devices [--rundir DIR]: list live devices with resource counts. */
int cli_devices_main(int argc, char **argv);

/* uroce counters NAME [--qp QPN] [--all] [--rundir DIR]: one device's
 * drop, transport and daemon counters. */
int cli_counters_main(int argc, char **argv);

/* uroce run [--rundir DIR] -- PROGRAM [ARGS...]: run PROGRAM with the verbs
 * shim preloaded. Only returns on error. */
int cli_run_main(int argc, char **argv);

/* The usage lines of the options every subcommand here takes (--rundir, --help). */
#define CLI_COMMON_HELP                                                         \
	"  -r, --rundir DIR   run directory (default: $UROCE_RUNDIR, else\n"    \
	"                     $XDG_RUNTIME_DIR/uroce, else /tmp/uroce-<uid>)\n" \
	"  -h, --help         this help\n"

/*
 * Handle getopt's answer c when it is none of the subcommand's own options:
 * 'r' stores arg in *rundir and gives -1 (go on parsing); 'h' prints usage to
 * stdout and gives exit status 0; anything else prints usage to stderr and
 * gives 2.
 */
int cli_common_opt(int c, char *arg, const char **rundir, void (*usage)(FILE *f));

/*
 * One exchange with the daemon whose control socket is path: send req_len
 * bytes of req, receive at most resp_len bytes into resp (2 s timeouts
 * each way). 0 with *got = the bytes received (0 if none or on a receive
 * error: the caller's length check rejects it), or -errno if the connect
 * fails (as common_rundir_connect) or -EIO if the send does.
 */
int cli_common_call(const char *path, const void *req, size_t req_len, void *resp, size_t resp_len,
		    size_t *got);
#endif
