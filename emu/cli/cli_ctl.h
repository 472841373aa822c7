/* SPDX-License-Identifier: MIT */
/*
 * Subcommands of the uroce CLI that talk to daemons or run programs on
 * them: `uroce devices` (devices.c), `uroce counters` (counters.c),
 * `uroce fault` (fault.c), `uroce qp` (qp.c), `uroce mr` (mr.c), `uroce cq`
 * (cq.c) and `uroce run` (run.c). Each
 * takes the subcommand's own argv (argv[0] is the subcommand name) and
 * returns the process exit status. common.c holds what they share.
 */
#ifndef UROCE_CLI_CTL_H
#define UROCE_CLI_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct uroce_query_counters_resp;

/* uroce devices [--rundir DIR]: list live devices with resource counts. */
int cli_devices_main(int argc, char **argv);

/* uroce counters NAME [--qp QPN] [--all] [--rundir DIR]: one device's
 * drop, transport and daemon counters. */
int cli_counters_main(int argc, char **argv);

/* uroce fault NAME add RULE | del ID | list [--json] | clear [--rundir DIR]:
 * the device's fault rules at run time. */
int cli_fault_main(int argc, char **argv);

/* uroce qp NAME [QPN] [--json] [--rundir DIR]: the device's live QPs. */
int cli_qp_main(int argc, char **argv);

/* uroce mr NAME [--json] [--rundir DIR]: the device's live MRs. */
int cli_mr_main(int argc, char **argv);

/* uroce cq NAME [--json] [--rundir DIR]: the device's live CQs. */
int cli_cq_main(int argc, char **argv);

/* Ask the daemon at path for the counters of QP qpn (0: the device).
 * 0 or -errno (the daemon's status, -EPROTO for a malformed answer). */
int cli_counters_query(const char *path, uint32_t qpn, struct uroce_query_counters_resp *resp);

/* Call fn for each counter of an answer with its group ("drop", "xport",
 * "daemon") and name (NULL for one this CLI does not know the name of),
 * leaving out zero ones unless all is set. */
void cli_counters_each(const struct uroce_query_counters_resp *resp, int all,
		       void (*fn)(void *arg, const char *group, const char *name, unsigned index,
				  uint64_t value),
		       void *arg);

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
 * Parse --json (sets *json), --rundir and --help with getopt_long; the
 * operands are left from optind on. -1 to go on, else the exit status.
 */
int cli_common_json_opts(int argc, char **argv, int *json, const char **rundir,
			 void (*usage)(FILE *f));

/*
 * One exchange with the daemon whose control socket is path: send req_len
 * bytes of req, receive at most resp_len bytes into resp (2 s timeouts
 * each way). 0 with *got = the bytes received (0 if none or on a receive
 * error: the caller's length check rejects it), or -errno if the connect
 * fails (as common_rundir_connect) or -EIO if the send does.
 */
int cli_common_call(const char *path, const void *req, size_t req_len, void *resp, size_t resp_len,
		    size_t *got);

/*
 * The control socket of device name into path: 0, or 2 (the exit status)
 * after printing "uroce CMD: ..." for a bad name or a path too long.
 */
int cli_common_device_path(const char *cmd, const char *name, const char *explicit_dir, char *path,
			   size_t len);

/*
 * cli_common_call of a request that starts with a struct uroce_msg_hdr,
 * checking the answer: same op and seq, status 0 and exactly resp_len
 * bytes. 0, the daemon's -errno, -EPROTO, or the connect's -errno.
 */
int cli_common_request(const char *path, const void *req, size_t req_len, void *resp,
		       size_t resp_len);

/* The message for such an error: "no such live device" when nobody
 * answers on the socket, else strerror. */
const char *cli_common_strerror(int err);

/*
 * A listing of one kind of object (QP_LIST, MR_LIST, CQ_LIST: their
 * requests and answers share a layout, uapi.h): the answer's size, where
 * its entries start, their size and at most how many there are, where each
 * entry's comm is (to be NUL-terminated), and how to print an entry: a
 * table header and line, or the fields of a JSON object (from its "{" on,
 * without the closing "}").
 */
struct cli_list {
	const char *cmd;  /* the subcommand, for messages */
	const char *noun; /* "QPs" */
	uint32_t op;
	size_t resp_size;
	size_t entries_off;
	size_t entry_size;
	size_t comm_off;
	uint32_t max;
	void (*header)(void);
	void (*line)(const char *dev, const void *entry);
	void (*json)(const char *dev, const void *entry);
};

/* A struct cli_list's initializer for answers of type resp_t whose entries
 * (field) are of type info_t, printed by the including file's print_header,
 * print_line and print_json. */
#define CLI_LIST_INIT(cmd_, noun_, op_, resp_t, field, info_t, max_)                       \
	{                                                                                  \
		.cmd = (cmd_), .noun = (noun_), .op = (op_), .resp_size = sizeof(resp_t),  \
		.entries_off = offsetof(resp_t, field), .entry_size = sizeof(info_t),      \
		.comm_off = offsetof(info_t, comm), .max = (max_), .header = print_header, \
		.line = print_line, .json = print_json,                                    \
	}

/* The entries of one list answer into resp (resp_size bytes): from the
 * object numbered from on, flags as the op defines them. 0 with *count
 * and *next set, or -errno (-EPROTO for a malformed answer). */
int cli_common_list_page(const struct cli_list *l, const char *path, uint32_t from, uint32_t flags,
			 void *resp, uint32_t *count, uint32_t *next);

/* Entry i of such an answer. */
const void *cli_common_list_entry(const struct cli_list *l, const void *resp, uint32_t i);

/* Every object of the device, page by page, as a table or a JSON array.
 * The exit status: 0, 2 when there is no such device, 1 for another error. */
int cli_common_list_show(const struct cli_list *l, const char *dev, const char *path, int json);

/* The whole of `uroce CMD DEVICE [--json] [--rundir DIR]`. */
int cli_common_list_main(const struct cli_list *l, int argc, char **argv, void (*usage)(FILE *f));

/* access (enum uroce_access_flags) as words joined by sep ("-" for none). */
void cli_common_access_str(uint32_t access, const char *sep, char *buf, size_t len);

/* s as a JSON string literal (quotes, backslashes and control characters
 * escaped). */
void cli_common_json_string(FILE *out, const char *s);
#endif
