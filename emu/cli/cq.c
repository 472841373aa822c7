/* SPDX-License-Identifier: MIT */
/*
 * `uroce cq DEVICE [--json]`: the live completion queues of a device, as
 * `rdma resource show cq` does for a kernel device. One line per CQ
 * (CQ_LIST control operation, uapi.h): its handle, capacity (CQEs the ring
 * holds), the CQEs written and not yet polled (the ring's producer minus
 * its consumer), its arm state (none, next, solicited), whether it
 * overflowed, whether it has a completion channel, the completion events
 * sent, and the owning pid and command. With --json: a JSON array of
 * objects with the same fields and a few more (requested size, channel
 * handle, vector, completions lost). Exit status 0, 2 for bad usage or a
 * device that does not exist.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "cli_ctl.h"
#include "uroce/uapi.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce cq DEVICE [--json] [--rundir DIR]\n"
		   "\n"
		   "List the live completion queues of the uroce device DEVICE: capacity, "
		   "CQEs not yet\n"
		   "polled, arm state, overrun, completion channel, events and the owning "
		   "process.\n"
		   "\n"
		   "  -j, --json         a JSON array of objects\n" CLI_COMMON_HELP);
}

static const char *arm_str(uint32_t arm)
{
	switch (arm) {
	case UROCE_CQ_ARM_NONE:
		return "none";
	case UROCE_CQ_ARM_NEXT:
		return "next";
	case UROCE_CQ_ARM_SOLICITED:
		return "solicited";
	}
	return "?";
}

static void print_header(void)
{
	printf("%-10s %6s %6s %8s %-9s %-8s %-7s %10s %7s %s\n", "DEVICE", "HANDLE", "CQE",
	       "UNPOLLED", "ARMED", "OVERFLOW", "CHANNEL", "EVENTS", "PID", "COMM");
}

static void print_line(const char *dev, const void *entry)
{
	const struct uroce_cq_info *c = entry;

	printf("%-10s %6u %6u %8u %-9s %-8s %-7s %10" PRIu64 " %7u %s\n", dev, c->handle, c->cqe,
	       c->unpolled, arm_str(c->arm), c->overflowed ? "yes" : "no",
	       c->channel ? "yes" : "no", c->events, c->pid, c->comm);
}

static void print_json(const char *dev, const void *entry)
{
	const struct uroce_cq_info *c = entry;

	printf("{\"dev\":");
	cli_common_json_string(stdout, dev);
	printf(",\"handle\":%u,\"cqe\":%u,\"cqe-requested\":%u,\"unpolled\":%u,\"armed\":\"%s\","
	       "\"overflowed\":%s,\"channel\":%s,\"channel-handle\":%u,\"comp-vector\":%u,"
	       "\"events\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"pid\":%u,\"comm\":",
	       c->handle, c->cqe, c->cqe_requested, c->unpolled, arm_str(c->arm),
	       c->overflowed ? "true" : "false", c->channel ? "true" : "false", c->channel,
	       c->comp_vector, c->events, c->lost, c->pid);
	cli_common_json_string(stdout, c->comm);
}

static const struct cli_list cq_list =
    CLI_LIST_INIT("cq", "CQs", UROCE_OP_CQ_LIST, struct uroce_cq_list_resp, cqs,
		  struct uroce_cq_info, UROCE_CQ_LIST_MAX);

int cli_cq_main(int argc, char **argv)
{
	return cli_common_list_main(&cq_list, argc, argv, usage);
}
