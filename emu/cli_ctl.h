/* SPDX-License-Identifier: MIT */
/*
 * Subcommands of the uroce CLI that talk to daemons or run programs on
 * them: `uroce devices` (cli_devices.c), `uroce counters`
 * (cli_counters.c) and `uroce run` (cli_run.c). Each
 * takes the subcommand's own argv (argv[0] is the subcommand name) and
 * returns the process exit status.
 */
#ifndef UROCE_CLI_CTL_H
#define UROCE_CLI_CTL_H

/* uroce devices [--rundir DIR]: list live devices with resource counts. */
int cli_devices_main(int argc, char **argv);

/* uroce counters NAME [--qp QPN] [--all] [--rundir DIR]: one device's
 * drop, transport and daemon counters. */
int cli_counters_main(int argc, char **argv);

/* uroce run [--rundir DIR] -- PROGRAM [ARGS...]: run PROGRAM with the verbs
 * shim preloaded. Only returns on error. */
int cli_run_main(int argc, char **argv);

#endif
