/* SPDX-License-Identifier: MIT */
/*
 * `uroce`: the command-line tool. This file only dispatches: a table maps
 * each subcommand name to its function (declared in cli.h, defined in
 * <name>.c) and a one-line summary for --help. Adding a subcommand is one
 * line here plus its file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_ctl.h"
#include <uroce/version.h>

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;
	const char *summary;
};

static const struct cli_command cli_commands[] = {
    {"decode", cli_decode, "[--json] FILE...",
     "decode RoCEv2 packets in pcap/pcapng files, check every ICRC"},
    {"ladder", cli_ladder, "FILE [--svg OUT.svg]",
     "draw a capture as a sequence diagram between its two endpoints"},
    {"sample", cli_sample, "FILE.pcap", "write one valid packet of every opcode to a capture"},
    {"devices", cli_devices_main, "[--rundir DIR]",
     "list the live uroce RNICs and their resources"},
    {"counters", cli_counters_main, "NAME [--qp QPN] [--all] [--watch]",
     "print a device's drop, transport and daemon counters"},
    {"fault", cli_fault_main, "DEVICE add|del|list|clear",
     "change or show a device's fault rules (seeded fault injection)"},
    {"qp", cli_qp_main, "DEVICE [QPN] [--json]",
     "list a device's live QPs: state, PSNs, outstanding work, owner"},
    {"mr", cli_mr_main, "DEVICE [--json]",
     "list a device's live MRs: keys, range, access, PD, owner"},
    {"cq", cli_cq_main, "DEVICE [--json]",
     "list a device's live CQs: size, unpolled CQEs, arm state, owner"},
    {"run", cli_run_main, "[--rundir DIR] -- PROGRAM [ARGS...]",
     "run a verbs program on uroce (the shim preloaded)"},
    {"wireshark-plugin", cli_wireshark_plugin, "install [--dir DIR]|path|print",
     "install the Lua plugin that checks ICRCs in Wireshark"},
};

static void cli_usage(FILE *out)
{
	fprintf(out, "usage: uroce COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cli_commands) / sizeof(cli_commands[0]); i++)
		fprintf(out, "  %-16s %-35s %s\n", cli_commands[i].name, cli_commands[i].args,
			cli_commands[i].summary);
	fprintf(out, "\n  uroce COMMAND --help   help for one command\n"
		     "  uroce --version        print the version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		cli_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("uroce %s\n", UROCE_VERSION_STRING);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cli_commands) / sizeof(cli_commands[0]); i++)
		if (!strcmp(argv[1], cli_commands[i].name))
			return cli_commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "uroce: unknown command '%s'\n\n", argv[1]);
	cli_usage(stderr);
	return CLI_EXIT_USAGE;
}
