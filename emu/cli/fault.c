/* SPDX-License-Identifier: MIT */
/*
 * `uroce fault DEVICE add RULE | del ID | list [--json] | clear`: the fault
 * rules of a live device at run time, through the FAULT control operation
 * (uapi.h). A rule is checked here first, with the parser the daemon uses
 * (emu/common/faultrule.c), so that a malformed one is refused with a
 * message naming its bad part; the daemon checks it again. `list` shows
 * each rule with the packets that met its conditions and the faults it
 * injected. Exit status: 0, 1 when the daemon refuses (no such rule, too
 * many rules), 2 for bad usage, a bad rule or a device that does not exist.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_ctl.h"
#include "faultrule.h"
#include "uroce/uapi.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce fault DEVICE add RULE\n"
		   "       uroce fault DEVICE del ID\n"
		   "       uroce fault DEVICE list [--json]\n"
		   "       uroce fault DEVICE clear\n"
		   "\n"
		   "Change or show the fault rules of the live uroce device DEVICE. A "
		   "rule is\n"
		   "DIR:ACTION[:COND,...], e.g. tx:drop:opcode=write,nth=3 or "
		   "rx:rnr-nak:opcode=ack,count=2:\n"
		   "  DIR     tx | rx\n"
		   "  ACTION  drop | dup | delay=MS | reorder=N | corrupt | "
		   "rnr-nak[=TIMER] | seq-nak | ghost-ack\n"
		   "  COND    qpn=N  opcode=CLASS[/CLASS...]  psn=N[-M]  nth=N  every=N  "
		   "prob=P  count=N  seed=N\n"
		   "(docs/daemon.md, \"Fault injection\").\n"
		   "\n"
		   "  -j, --json         list: one JSON object\n" CLI_COMMON_HELP);
}

/* One FAULT exchange; prints the error and gives the exit status. */
static int call(const char *dev, const char *path, struct uroce_fault_req *req,
		struct uroce_fault_resp *resp)
{
	int rc;

	req->hdr.op = UROCE_OP_FAULT;
	req->hdr.len = sizeof(*req);
	req->hdr.seq = 1;
	rc = cli_common_request(path, req, sizeof(*req), resp, sizeof(*resp));
	if (!rc)
		return 0;
	if (rc == -ENOENT && req->cmd == UROCE_FAULT_DEL) {
		/* The daemon answered: the device exists, the rule does not. */
		fprintf(stderr, "uroce fault: %s has no rule %u\n", dev, req->id);
		return 1;
	}
	if (rc == -ENOSPC) {
		fprintf(stderr, "uroce fault: %s holds as many rules as it takes\n", dev);
		return 1;
	}
	fprintf(stderr, "uroce fault: %s: %s\n", dev, cli_common_strerror(rc));
	return rc == -ENOENT || rc == -ECONNREFUSED ? 2 : 1;
}

static int cmd_add(const char *dev, const char *path, const char *text)
{
	struct uroce_fault_req req = {.cmd = UROCE_FAULT_ADD};
	struct uroce_fault_resp resp;
	struct common_fault_rule r;
	char err[256];
	int rc;

	if (common_fault_parse(text, &r, err, sizeof(err))) {
		fprintf(stderr, "uroce fault: rule '%s': %s\n", text, err);
		return 2;
	}
	snprintf(req.rule, sizeof(req.rule), "%s", r.text);
	rc = call(dev, path, &req, &resp);
	if (!rc)
		printf("rule %u: %s\n", resp.id, r.text);
	return rc;
}

static int cmd_del(const char *dev, const char *path, const char *arg)
{
	struct uroce_fault_req req = {.cmd = UROCE_FAULT_DEL};
	struct uroce_fault_resp resp;
	unsigned long id;
	char *end;

	errno = 0;
	id = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || !id || id > UINT32_MAX) {
		fprintf(stderr, "uroce fault: del %s: need a rule id (see uroce fault %s list)\n",
			arg, dev);
		return 2;
	}
	req.id = (uint32_t)id;
	return call(dev, path, &req, &resp);
}

static int cmd_list(const char *dev, const char *path, int json)
{
	struct uroce_fault_req req = {.cmd = UROCE_FAULT_LIST, .id = 1};
	struct uroce_fault_resp resp;
	unsigned shown = 0;
	int rc;

	do {
		rc = call(dev, path, &req, &resp);
		if (rc)
			return rc;
		if (resp.count > UROCE_FAULT_LIST_MAX) {
			fprintf(stderr, "uroce fault: %s: malformed answer\n", dev);
			return 1;
		}
		if (!shown && json) {
			printf("{\"device\":");
			cli_common_json_string(stdout, dev);
			printf(",\"seed\":%" PRIu64 ",\"rules\":[", resp.seed);
		} else if (!shown) {
			printf("# %s: %u rule%s, seed %" PRIu64 "\n", dev, resp.nrules,
			       resp.nrules == 1 ? "" : "s", resp.seed);
			if (resp.count)
				printf("%-4s %12s %12s  %s\n", "ID", "MATCHED", "FAULTS", "RULE");
		}
		for (unsigned i = 0; i < resp.count; i++, shown++) {
			struct uroce_fault_entry *e = &resp.rules[i];

			e->rule[sizeof(e->rule) - 1] = '\0';
			if (json) {
				printf("%s{\"id\":%u,\"matched\":%" PRIu64 ",\"faults\":%" PRIu64
				       ",\"rule\":",
				       shown ? "," : "", e->id, e->matched, e->fired);
				cli_common_json_string(stdout, e->rule);
				printf("}");
			} else {
				printf("%-4u %12" PRIu64 " %12" PRIu64 "  %s\n", e->id, e->matched,
				       e->fired, e->rule);
			}
		}
		req.id = resp.next_id;
	} while (resp.next_id && resp.count);
	if (json)
		printf("]}\n");
	return 0;
}

int cli_fault_main(int argc, char **argv)
{
	const char *explicit_dir = NULL, *dev, *cmd;
	struct uroce_fault_req req = {.cmd = UROCE_FAULT_CLEAR};
	struct uroce_fault_resp resp;
	char path[512];
	int rc, json = 0, nargs;

	/* Options may follow the operands (list --json): no rule starts with '-'. */
	rc = cli_common_json_opts(argc, argv, &json, &explicit_dir, usage);
	if (rc >= 0)
		return rc;
	nargs = argc - optind;
	if (nargs < 2) {
		usage(stderr);
		return 2;
	}
	dev = argv[optind];
	cmd = argv[optind + 1];
	rc = cli_common_device_path("fault", dev, explicit_dir, path, sizeof(path));
	if (rc)
		return rc;
	if (!strcmp(cmd, "add") && nargs == 3)
		return cmd_add(dev, path, argv[optind + 2]);
	if (!strcmp(cmd, "del") && nargs == 3)
		return cmd_del(dev, path, argv[optind + 2]);
	if (!strcmp(cmd, "list") && nargs == 2)
		return cmd_list(dev, path, json);
	if (!strcmp(cmd, "clear") && nargs == 2)
		return call(dev, path, &req, &resp);
	fprintf(stderr, "uroce fault: '%s'%s: expected add RULE, del ID, list or clear\n", cmd,
		nargs > 3 ? " with too many arguments" : "");
	return 2;
}
