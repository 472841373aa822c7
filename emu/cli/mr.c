/* SPDX-License-Identifier: MIT */
/*
 * `uroce mr DEVICE [--json]`: the live memory regions of a device, as
 * `rdma resource show mr` does for a kernel device. One line per MR
 * (MR_LIST control operation, uapi.h): its handle, L_Key and R_Key, the
 * registered address and length, how many of its bytes the daemon maps
 * (the whole pages the program shares with it: MAP_MR; the rest it reaches
 * with process_vm_*), the access flags as words (LOCAL_WRITE,
 * REMOTE_WRITE, ...), the handle of its PD, and the owning pid and command.
 * With --json: a JSON array of objects with the same fields (access as an
 * array of words). Exit status 0, 2 for bad usage or a device that does
 * not exist.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "cli_ctl.h"
#include "uroce/uapi.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroce mr DEVICE [--json] [--rundir DIR]\n"
		   "\n"
		   "List the live memory regions of the uroce device DEVICE: keys, "
		   "range, access,\n"
		   "protection domain and the owning process.\n"
		   "\n"
		   "  -j, --json         a JSON array of objects\n" CLI_COMMON_HELP);
}

/* The bytes of the MR the daemon maps (pages of this host's size). */
static uint64_t mapped_bytes(const struct uroce_mr_info *m)
{
	return (uint64_t)m->map_pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void print_header(void)
{
	printf("%-10s %6s %-10s %-10s %-18s %10s %10s %4s %-24s %7s %s\n", "DEVICE", "HANDLE",
	       "LKEY", "RKEY", "ADDRESS", "LENGTH", "MAPPED", "PD", "ACCESS", "PID", "COMM");
}

static void print_line(const char *dev, const void *entry)
{
	const struct uroce_mr_info *m = entry;
	char access[160];

	cli_common_access_str(m->access, ",", access, sizeof(access));
	printf("%-10s %6u 0x%08x 0x%08x 0x%016" PRIx64 " %10" PRIu64 " %10" PRIu64
	       " %4u %-24s %7u %s\n",
	       dev, m->handle, m->lkey, m->rkey, m->addr, m->length, mapped_bytes(m), m->pd_handle,
	       access, m->pid, m->comm);
}

static void print_json(const char *dev, const void *entry)
{
	const struct uroce_mr_info *m = entry;
	char access[160];

	cli_common_access_str(m->access, "\",\"", access, sizeof(access));
	printf("{\"dev\":");
	cli_common_json_string(stdout, dev);
	printf(",\"handle\":%u,\"lkey\":%u,\"rkey\":%u,\"addr\":%" PRIu64 ",\"length\":%" PRIu64
	       ",\"mapped\":%" PRIu64 ",\"iova\":%" PRIu64
	       ",\"access-flags\":%u,\"access\":[%s%s%s],\"pd\":%u,\"pid\":%u,"
	       "\"comm\":",
	       m->handle, m->lkey, m->rkey, m->addr, m->length, mapped_bytes(m), m->iova, m->access,
	       m->access ? "\"" : "", m->access ? access : "", m->access ? "\"" : "", m->pd_handle,
	       m->pid);
	cli_common_json_string(stdout, m->comm);
}

static const struct cli_list mr_list =
    CLI_LIST_INIT("mr", "MRs", UROCE_OP_MR_LIST, struct uroce_mr_list_resp, mrs,
		  struct uroce_mr_info, UROCE_MR_LIST_MAX);

int cli_mr_main(int argc, char **argv)
{
	return cli_common_list_main(&mr_list, argc, argv, usage);
}
