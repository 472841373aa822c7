/* SPDX-License-Identifier: MIT */
/*
 * The subcommands of the `uroce` command-line tool, one function per
 * subcommand, grouped by defining file. Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand itself) and returns the process
 * exit status: 0 success, 1 the command ran and found a problem (e.g. bad
 * packets), 2 bad usage or unreadable input. The table in uroce.c lists them.
 */
#ifndef UROCE_CLI_H
#define UROCE_CLI_H

/* Exit statuses shared by all subcommands. */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FOUND = 1,
	CLI_EXIT_USAGE = 2,
};

/* cli_decode.c: `uroce decode [--json] FILE...` */
int cli_decode(int argc, char **argv);

/* cli_sample.c: `uroce sample FILE.pcap` */
int cli_sample(int argc, char **argv);

#endif /* UROCE_CLI_H */
