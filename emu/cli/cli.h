/* SPDX-License-Identifier: MIT */
/*
 * The subcommands of the `uroce` command-line tool, one function per
 * subcommand, grouped by defining file. Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand itself) and returns the process
 * exit status: 0 success, 1 the command ran and found a problem (e.g. bad
 * packets), 2 bad usage or unreadable input. The table in main.c lists them.
 */
#ifndef UROCE_CLI_H
#define UROCE_CLI_H

#include <stddef.h>

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

/* ladder.c: `uroce ladder FILE [--svg OUT.svg]` */
int cli_ladder(int argc, char **argv);

/* wireshark.c: `uroce wireshark-plugin install [--dir DIR] | path | print` */
int cli_wireshark_plugin(int argc, char **argv);

/* wireshark_lua.c (generated from wireshark/uroce.lua at build time): the
 * plugin's text, NUL-terminated, cli_wireshark_lua_len bytes without the NUL. */
extern const unsigned char cli_wireshark_lua[];
extern const size_t cli_wireshark_lua_len;

#endif /* UROCE_CLI_H */
