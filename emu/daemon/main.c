/* SPDX-License-Identifier: MIT */
/*
 * uroced: the emulated RNIC. This file is the program, in four parts:
 * parse (the options into struct emu_opts, fault rules checked), start
 * (device and address, UDP socket, run directory, status page, DMA
 * buffers, fault rules, capture file, event loop, control socket, network,
 * waiting strategy and signals, in that order), run (the libuv event loop,
 * whose waiting strategy is wait.c's) and stop, which undoes start's steps
 * in reverse order: the one unwinding path, taken both by a start that
 * fails half-way and by a clean shutdown on SIGINT/SIGTERM (which first
 * releases every client's objects). A failed start leaves neither its
 * socket nor its capture file nor its fault log behind. The device and its
 * objects live in the other files of emu/daemon/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"
#include "verbs.h"
#include "uroce/version.h"
#include "wire/crc32.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: uroced --name NAME --addr IP [--name NAME --addr IP ...] [options]\n"
		   "\n"
		   "Run one emulated RoCEv2 RNIC in the foreground. It appears to "
		   "verbs programs\n"
		   "(through the uroce shim) as device NAME with one Ethernet port "
		   "whose GID 0 is\n"
		   "the RoCEv2 GID of IP. Logs go to stderr; SIGINT or SIGTERM stop "
		   "it cleanly.\n"
		   "Several --name/--addr pairs (up to 8) run several RNICs in this one "
		   "process, each\n"
		   "with its own address, sockets, counters and capture, on one event "
		   "loop; the other\n"
		   "options apply to each, and --pcap and --fault-log paths must then "
		   "hold %%n (the\n"
		   "RNIC's name).\n"
		   "\n"
		   "Options:\n"
		   "  -n, --name NAME     device name (letters, digits, '_', '-', "
		   "'.'; max 63)\n"
		   "  -a, --addr IP       local IPv4 or IPv6 address to own "
		   "(the device's GID)\n"
		   "  -p, --port PORT     UDP port for RoCEv2 (default 4791)\n"
		   "  -r, --rundir DIR    directory of device sockets (default: "
		   "$UROCE_RUNDIR,\n"
		   "                      else $XDG_RUNTIME_DIR/uroce, else "
		   "/tmp/uroce-<uid>)\n"
		   "  -m, --mtu BYTES     active path MTU: 256, 512, 1024, 2048 or "
		   "4096 (default:\n"
		   "                      the largest that fits the interface MTU "
		   "owning IP)\n"
		   "  -w, --pcap FILE     write every packet sent or received to a "
		   "pcap file\n"
		   "                      (pcapng, with a comment per packet, when FILE "
		   "ends in .pcapng)\n"
		   "      --pcap-snaplen BYTES  keep only the first BYTES of each frame "
		   "(64..65535)\n"
		   "      --pcap-size SIZE  a new file when one reaches SIZE (e.g. 100M): "
		   "FILE.0, FILE.1...\n"
		   "      --pcap-files N  with --pcap-size: keep only the newest N files "
		   "(a ring)\n"
		   "      --pcap-buffer SIZE  frames waiting for the file at most "
		   "(default 16M);\n"
		   "                      past it frames are not captured (pcap_dropped)\n"
		   "  -b, --sockbuf BYTES size of each UDP socket buffer (default "
		   "16 MiB; forced past\n"
		   "                      net.core.[rw]mem_max when privileged); "
		   "a quarter of the\n"
		   "                      receive buffer is the in-flight budget of "
		   "RC requests\n"
		   "      --cm-timeout N  the CM's response timeout, 4.096 us * 2^N "
		   "(default 20,\n"
		   "                      ~4.3 s); an unanswered REQ, REP or DREQ is "
		   "resent after it\n"
		   "      --cm-retries N  resends before a connection attempt gives up "
		   "(default 15)\n"
		   "      --rnr-hold-us US  a SEND that finds no receive WQE waits this long "
		   "for one\n"
		   "                      before the RNR NAK (default 200; 0: NAK at once)\n"
		   "      --ack-hold-us US  a batch of nothing but ACKs waits this long for a "
		   "request\n"
		   "                      to the same peer to leave with (default 20; 0: never)\n"
		   "      --map-budget SIZE  registered memory the RNIC maps at most "
		   "(default 16M;\n"
		   "                      0: none); past it MRs are reached with "
		   "process_vm_*\n"
		   "  -s, --spin-us US    keep polling this long after the last "
		   "work before\n"
		   "                      sleeping (default 100; 0: sleep whenever "
		   "idle)\n"
		   "      --icrc MODE     how IPv4 ICRCs are checked (they cover the IP "
		   "ID):\n"
		   "                      exact: receive on a raw socket, which shows "
		   "the ID\n"
		   "                      (CAP_NET_RAW); tracked: solve the ID a UDP "
		   "socket hides\n"
		   "                      and accept it only if it follows the "
		   "sender's IDs;\n"
		   "                      any: accept any solved ID (16 bits). "
		   "Default: $UROCE_ICRC,\n"
		   "                      else exact with CAP_NET_RAW, else "
		   "tracked\n"
		   "  -I, --icrc-any-id   the same as --icrc=any\n"
		   "      --gso on|off    send runs of full 4 KiB-MTU packets as one "
		   "UDP GSO\n"
		   "                      datagram each (default on; segments keep "
		   "their own ICRC)\n"
		   "  -f, --fault RULE    inject faults: RULE is DIR:ACTION[:CONDITIONS], "
		   "e.g.\n"
		   "                      tx:drop:opcode=write,nth=3 (repeatable; see "
		   "docs/daemon.md)\n"
		   "  -F, --fault-file FILE  the rules in FILE, one per line ('#' "
		   "comments)\n"
		   "  -S, --seed N        seed of the fault decisions (default 0); also makes\n"
		   "                      QP numbers and keys reproducible (default: random)\n"
		   "  -L, --fault-log FILE  write one line per injected fault to FILE\n"
		   "      --cpu auto|none|N  auto (default): the daemons of one run "
		   "directory\n"
		   "                      each keep to a CPU of their own while there "
		   "are several;\n"
		   "                      none: the scheduler places it; N: keep to "
		   "CPU N\n"
		   "  -N, --nice N        scheduling priority, -20..19 (default "
		   "-10 when allowed:\n"
		   "                      a woken RNIC should preempt programs "
		   "polling their CQs)\n"
		   "      --profile       time the parts of the data path (system calls, "
		   "copies,\n"
		   "                      ICRCs): counters time_*_ns in `uroce counters`\n"
		   "  -v, --verbose       more log output (twice: debug)\n"
		   "  -q, --quiet         only errors and warnings\n"
		   "  -V, --version       print the version and exit\n"
		   "  -h, --help          print this help and exit\n");
}

/* Long options without a short form. */
enum {
	OPT_PCAP_SNAPLEN = 0x100,
	OPT_PCAP_SIZE,
	OPT_PCAP_FILES,
	OPT_PCAP_BUFFER,
	OPT_MAP_BUDGET,
	OPT_CM_TIMEOUT,
	OPT_CM_RETRIES,
	OPT_ICRC,
	OPT_GSO,
	OPT_RNR_HOLD,
	OPT_ACK_HOLD,
	OPT_CPU,
	OPT_PROFILE
};

/* "4096", "64K", "10M", "1G" (K = 1024) into *out; -1 on junk. */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* --icrc MODE (or $UROCE_ICRC) into *out; -1 with a message when unknown. */
static int parse_icrc(const char *s, const char *what, int *out)
{
	static const char *const names[] = {
	    [EMU_ICRC_AUTO] = "auto",
	    [EMU_ICRC_EXACT] = "exact",
	    [EMU_ICRC_TRACKED] = "tracked",
	    [EMU_ICRC_ANY] = "any",
	};

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	fprintf(stderr, "uroced: %s %s: must be exact, tracked, any or auto\n", what, s);
	return -1;
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct emu_dev *dev = h->data;
	static int said; /* each hosted RNIC's handler sees it: say it once */

	if (!said++)
		emu_info("%s received, shutting down", strsignal(signum));
	dev->stopping = 1;
	uv_stop(dev->loop);
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/*
 * The RNIC runs at a higher priority than the programs it serves when the
 * system allows it: it sleeps whenever it is idle (wait.c), and when woken
 * by a packet or a doorbell it should preempt a program busy-polling its
 * CQ at once rather than wait for that program's time slice. Without the
 * privilege (CAP_SYS_NICE) it runs at the normal priority.
 */
static void set_priority(int nice_val, int explicit_nice)
{
	if (!setpriority(PRIO_PROCESS, 0, nice_val))
		return;
	if (explicit_nice)
		emu_warn("--nice %d: %s", nice_val, strerror(errno));
	else
		emu_dbg("running at the normal priority (nice %d: %s)", nice_val, strerror(errno));
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The steps of start(), in order; stop() undoes them from the last one
 * done back to the first.
 */
enum uroced_step {
	UROCED_NOTHING,
	UROCED_DEVICE,	/* emu_dev_setup, emu_dp_init */
	UROCED_UDP,	/* the RoCEv2 socket */
	UROCED_RUNDIR,	/* the run directory (stays: other daemons share it) */
	UROCED_STATUS,	/* the status page */
	UROCED_DMA,	/* staging and read-ahead buffers */
	UROCED_FAULT,	/* fault rules, the --fault-log file */
	UROCED_CAPTURE, /* the --pcap file */
	UROCED_LOOP,	/* the event loop */
	UROCED_CTL,	/* the control socket */
	UROCED_NET,	/* socket batches, receiving */
	UROCED_WAIT,	/* wait.c's handles, the capture flush timer, signals */
	UROCED_SERVING, /* run() went: clients may hold objects */
};

/* RNICs one daemon can host (--name/--addr pairs). */
#define UROCED_MAX_RNICS 8

/* One hosted RNIC: its options (the common ones with its name, address and
 * files), its device, and how far start_rnic() brought it. */
struct uroced_rnic {
	struct emu_opts opts;
	struct emu_dev dev;
	enum uroced_step done;	/* the last step start_rnic() completed */
	bool fault_log_created; /* a failed start removes the --fault-log file */
	char pcap_path[PATH_MAX];
	char fault_log[PATH_MAX];
};

/* The program's one state: the RNICs it hosts on one event loop. */
struct uroced {
	struct emu_opts opts; /* as parsed, but for the names and addresses */
	const char *names[UROCED_MAX_RNICS];
	const char *addrs[UROCED_MAX_RNICS];
	unsigned nnames, naddrs;
	struct uroced_rnic *rnic[UROCED_MAX_RNICS];
	unsigned nrnic;
	uv_loop_t loop;
	struct emu_wait_loop wait; /* wait.c: spin or sleep, for all the RNICs */
	struct emu_place place;	   /* place.c: the CPU it keeps to (--cpu) */
	bool loop_up;
	bool failed; /* stopping because start() failed */
};

/* parse() result: start the daemon (otherwise: exit with the value). */
#define UROCED_RUN (-1)

/* Check one fault rule and append a copy to o->fault_rules (sized for
 * every argument and line). where names it in the message. 0, or 2. */
static int add_fault_rule(struct emu_opts *o, unsigned *cap, const char *text, const char *where)
{
	struct common_fault_rule r;
	char err[256];

	if (common_fault_parse(text, &r, err, sizeof(err))) {
		fprintf(stderr, "uroced: %s '%s': %s\n", where, text, err);
		return 2;
	}
	if (o->nfault_rules == *cap) {
		unsigned ncap = *cap ? *cap * 2 : 8;
		const char **p = realloc(o->fault_rules, ncap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "uroced: out of memory\n");
			return 2;
		}
		o->fault_rules = p;
		*cap = ncap;
	}
	o->fault_rules[o->nfault_rules] = strdup(text);
	if (!o->fault_rules[o->nfault_rules]) {
		fprintf(stderr, "uroced: out of memory\n");
		return 2;
	}
	o->nfault_rules++;
	return 0;
}

/* --fault-file: one rule per line; blank lines and '#' comments skipped. */
static int read_fault_file(struct emu_opts *o, unsigned *cap, const char *path)
{
	char line[512], where[320];
	unsigned lineno = 0;
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f) {
		fprintf(stderr, "uroced: --fault-file %s: %s\n", path, strerror(errno));
		return 2;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *p = line, *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = '\0';
		p[strcspn(p, "\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		snprintf(where, sizeof(where), "--fault-file %s:%u:", path, lineno);
		rc = add_fault_rule(o, cap, p, where);
	}
	fclose(f);
	return rc;
}

static void free_fault_rules(struct emu_opts *o)
{
	for (unsigned i = 0; i < o->nfault_rules; i++)
		free((void *)o->fault_rules[i]);
	free(o->fault_rules);
	o->fault_rules = NULL;
	o->nfault_rules = 0;
}

/* Options into *o. UROCED_RUN, or the exit status: 0 (--help, --version),
 * 2 (a usage error, reported in one line). */
static int parse(int argc, char **argv, struct uroced *u)
{
	struct emu_opts *o = &u->opts;
	static const struct option longopts[] = {
	    {"name", required_argument, NULL, 'n'},
	    {"addr", required_argument, NULL, 'a'},
	    {"port", required_argument, NULL, 'p'},
	    {"rundir", required_argument, NULL, 'r'},
	    {"mtu", required_argument, NULL, 'm'},
	    {"pcap", required_argument, NULL, 'w'},
	    {"pcap-snaplen", required_argument, NULL, OPT_PCAP_SNAPLEN},
	    {"pcap-size", required_argument, NULL, OPT_PCAP_SIZE},
	    {"pcap-files", required_argument, NULL, OPT_PCAP_FILES},
	    {"pcap-buffer", required_argument, NULL, OPT_PCAP_BUFFER},
	    {"map-budget", required_argument, NULL, OPT_MAP_BUDGET},
	    {"spin-us", required_argument, NULL, 's'},
	    {"nice", required_argument, NULL, 'N'},
	    {"icrc-any-id", no_argument, NULL, 'I'},
	    {"icrc", required_argument, NULL, OPT_ICRC},
	    {"gso", required_argument, NULL, OPT_GSO},
	    {"rnr-hold-us", required_argument, NULL, OPT_RNR_HOLD},
	    {"ack-hold-us", required_argument, NULL, OPT_ACK_HOLD},
	    {"cpu", required_argument, NULL, OPT_CPU},
	    {"profile", no_argument, NULL, OPT_PROFILE},
	    {"sockbuf", required_argument, NULL, 'b'},
	    {"cm-timeout", required_argument, NULL, OPT_CM_TIMEOUT},
	    {"cm-retries", required_argument, NULL, OPT_CM_RETRIES},
	    {"verbose", no_argument, NULL, 'v'},
	    {"fault", required_argument, NULL, 'f'},
	    {"fault-file", required_argument, NULL, 'F'},
	    {"seed", required_argument, NULL, 'S'},
	    {"fault-log", required_argument, NULL, 'L'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	unsigned fault_cap = 0;
	int c;
	uint32_t v;

	memset(o, 0, sizeof(*o));
	o->port = 4791;
	o->verbosity = EMU_LOG_INFO;
	o->nice = EMU_NICE_DEFAULT;
	o->cm_timeout = EMU_CM_TIMEOUT_DEFAULT;
	o->rnr_hold_us = EMU_RNR_HOLD_US_DEFAULT;
	o->ack_hold_us = EMU_NET_ACK_HOLD_US;
	o->map_budget = EMU_MAP_BUDGET_DEFAULT;
	o->cm_retries = EMU_CM_RETRIES_DEFAULT;
	o->cpu = EMU_PLACE_AUTO;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:a:p:r:m:w:s:b:N:f:F:S:L:IvqVh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'n':
			if (u->nnames == UROCED_MAX_RNICS) {
				fprintf(stderr, "uroced: at most %d RNICs (--name) per daemon\n",
					UROCED_MAX_RNICS);
				return 2;
			}
			u->names[u->nnames++] = optarg;
			break;
		case 'a':
			if (u->naddrs == UROCED_MAX_RNICS) {
				fprintf(stderr, "uroced: at most %d RNICs (--addr) per daemon\n",
					UROCED_MAX_RNICS);
				return 2;
			}
			u->addrs[u->naddrs++] = optarg;
			break;
		case 'p':
			if (parse_u32(optarg, 65535, &v) || v == 0) {
				fprintf(stderr,
					"uroced: --port %s: must be a number "
					"in 1..65535\n",
					optarg);
				return 2;
			}
			o->port = (uint16_t)v;
			break;
		case 'r':
			o->rundir = optarg;
			break;
		case 'm':
			if (parse_u32(optarg, 65536, &v)) {
				fprintf(stderr,
					"uroced: --mtu %s: must be 256, 512, "
					"1024, 2048 or 4096\n",
					optarg);
				return 2;
			}
			o->mtu_bytes = v;
			if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096) {
				fprintf(stderr,
					"uroced: --mtu %s: must be 256, 512, "
					"1024, 2048 or 4096\n",
					optarg);
				return 2;
			}
			break;
		case 'w':
			o->pcap_path = optarg;
			break;
		case OPT_PCAP_SNAPLEN:
			if (parse_u32(optarg, 65535, &v) || (v && v < 64)) {
				fprintf(stderr,
					"uroced: --pcap-snaplen %s: must be a number of bytes "
					"in 64..65535 (0: whole frames)\n",
					optarg);
				return 2;
			}
			o->pcap_snaplen = v;
			break;
		case OPT_PCAP_SIZE:
			if (parse_size(optarg, &o->pcap_size) || o->pcap_size < 65536) {
				fprintf(stderr,
					"uroced: --pcap-size %s: must be a size of at least 64K "
					"(bytes, or with K, M or G)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_PCAP_FILES:
			if (parse_u32(optarg, 1000000, &v) || v < 1) {
				fprintf(stderr,
					"uroced: --pcap-files %s: must be a number in 1..1000000\n",
					optarg);
				return 2;
			}
			o->pcap_files = v;
			break;
		case OPT_MAP_BUDGET:
			if (parse_size(optarg, &o->map_budget) || o->map_budget > (1ull << 40)) {
				fprintf(stderr,
					"uroced: --map-budget %s: must be a size in 0..1024G "
					"(bytes, or with K, M or G)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_PCAP_BUFFER:
			if (parse_size(optarg, &o->pcap_buffer) || o->pcap_buffer < 65536 ||
			    o->pcap_buffer > (4ull << 30)) {
				fprintf(stderr,
					"uroced: --pcap-buffer %s: must be a size in 64K..4G "
					"(bytes, or with K, M or G)\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			if (parse_u32(optarg, 1000000, &v)) {
				fprintf(stderr,
					"uroced: --spin-us %s: must be a number "
					"of microseconds in 0..1000000\n",
					optarg);
				return 2;
			}
			o->spin_us = v;
			o->spin_set = 1;
			break;
		case 'I':
			o->icrc = EMU_ICRC_ANY;
			o->icrc_src = "--icrc-any-id, i.e. --icrc";
			break;
		case OPT_ICRC:
			if (parse_icrc(optarg, "--icrc", &o->icrc))
				return 2;
			o->icrc_src = "--icrc";
			break;
		case OPT_RNR_HOLD:
			if (parse_u32(optarg, 100000, &v)) {
				fprintf(stderr,
					"uroced: --rnr-hold-us %s: must be a number "
					"of microseconds in 0..100000\n",
					optarg);
				return 2;
			}
			o->rnr_hold_us = v;
			break;
		case OPT_ACK_HOLD:
			if (parse_u32(optarg, 1000, &v)) {
				fprintf(stderr,
					"uroced: --ack-hold-us %s: must be a number "
					"of microseconds in 0..1000\n",
					optarg);
				return 2;
			}
			o->ack_hold_us = v;
			break;
		case OPT_GSO:
			if (!strcmp(optarg, "on") || !strcmp(optarg, "off")) {
				o->no_gso = !strcmp(optarg, "off");
				break;
			}
			fprintf(stderr, "uroced: --gso %s: must be on or off\n", optarg);
			return 2;
		case 'f':
			if (add_fault_rule(o, &fault_cap, optarg, "--fault"))
				return 2;
			break;
		case 'F':
			o->fault_file = optarg;
			if (read_fault_file(o, &fault_cap, optarg))
				return 2;
			break;
		case 'L':
			o->fault_log = optarg;
			break;
		case 'S': {
			char *end;

			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			o->seed_set = true;
			if (errno || end == optarg || *end || optarg[0] == '-') {
				fprintf(stderr,
					"uroced: --seed %s: must be a number "
					"(decimal or 0x hex)\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'b':
			if (parse_u32(optarg, 1u << 30, &v) || v < 65536) {
				fprintf(stderr,
					"uroced: --sockbuf %s: must be a number of bytes "
					"in 65536..1073741824\n",
					optarg);
				return 2;
			}
			o->sockbuf = v;
			break;
		case OPT_CM_TIMEOUT: /* IBA 12.7.34: a 5-bit exponent */
			if (parse_u32(optarg, 31, &v)) {
				fprintf(stderr,
					"uroced: --cm-timeout %s: must be an exponent in "
					"0..31 (4.096 us * 2^N)\n",
					optarg);
				return 2;
			}
			o->cm_timeout = (uint8_t)v;
			break;
		case OPT_CM_RETRIES: /* IBA 12.7.27: Max CM Retries is 4 bits */
			if (parse_u32(optarg, 15, &v)) {
				fprintf(stderr,
					"uroced: --cm-retries %s: must be a number in 0..15\n",
					optarg);
				return 2;
			}
			o->cm_retries = (uint8_t)v;
			break;
		case OPT_CPU: {
			char *end;
			long n;

			if (!strcmp(optarg, "auto")) {
				o->cpu = EMU_PLACE_AUTO;
				break;
			}
			if (!strcmp(optarg, "none")) {
				o->cpu = EMU_PLACE_NONE;
				break;
			}
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 0 || n >= CPU_SETSIZE) {
				fprintf(stderr,
					"uroced: --cpu %s: must be auto, none or a CPU number "
					"(0..%d)\n",
					optarg, CPU_SETSIZE - 1);
				return 2;
			}
			o->cpu = (int)n;
			break;
		}
		case 'N': {
			char *end;
			long n;

			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || n < -20 || n > 19) {
				fprintf(stderr,
					"uroced: --nice %s: must be a number "
					"in -20..19\n",
					optarg);
				return 2;
			}
			o->nice = (int)n;
			o->nice_set = 1;
			break;
		}
		case 'v':
			if (o->verbosity < EMU_LOG_DEBUG)
				o->verbosity++;
			break;
		case 'q':
			o->verbosity = EMU_LOG_WARN;
			break;
		case OPT_PROFILE:
			o->profile = true;
			break;
		case 'V':
			printf("uroced %s (uapi %d)\n", UROCE_VERSION_STRING, UROCE_UAPI_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "uroced: option %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "uroced: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uroced: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	if ((o->pcap_snaplen || o->pcap_size || o->pcap_buffer) && !o->pcap_path) {
		fprintf(stderr, "uroced: --pcap-%s needs --pcap FILE\n",
			o->pcap_snaplen ? "snaplen"
			: o->pcap_size	? "size"
					: "buffer");
		return 2;
	}
	if (o->pcap_files && !o->pcap_size) {
		fprintf(stderr, "uroced: --pcap-files needs --pcap-size (the size of each file)\n");
		return 2;
	}
	if (!o->icrc_src && getenv("UROCE_ICRC") && *getenv("UROCE_ICRC")) {
		if (parse_icrc(getenv("UROCE_ICRC"), "UROCE_ICRC", &o->icrc))
			return 2;
		o->icrc_src = "UROCE_ICRC";
	}
	if (!u->nnames || !u->naddrs) {
		fprintf(stderr, "uroced: --name and --addr are required "
				"(see --help)\n");
		return 2;
	}
	if (u->nnames != u->naddrs) {
		fprintf(stderr,
			"uroced: %u --name but %u --addr: each RNIC needs both (the n-th --name "
			"owns the n-th --addr)\n",
			u->nnames, u->naddrs);
		return 2;
	}
	for (unsigned i = 0; i < u->nnames; i++) {
		if (!common_rundir_valid_name(u->names[i])) {
			fprintf(stderr,
				"uroced: --name '%s': use 1..63 letters, digits, '_', "
				"'-' or '.', not starting with '.'\n",
				u->names[i]);
			return 2;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(u->names[i], u->names[j]) ||
			    !strcmp(u->addrs[i], u->addrs[j])) {
				fprintf(stderr, "uroced: --name %s --addr %s: %s given twice\n",
					u->names[i], u->addrs[i],
					strcmp(u->names[i], u->names[j]) ? "the address"
									 : "the name");
				return 2;
			}
	}
	if (u->nnames > 1) {
		/* Each RNIC writes its own files: the paths name it. */
		const char *opt[] = {"--pcap", "--fault-log"};
		const char *path[] = {o->pcap_path, o->fault_log};

		for (unsigned i = 0; i < 2; i++)
			if (path[i] && !strstr(path[i], "%n")) {
				fprintf(stderr,
					"uroced: %s %s: with several RNICs the path needs %%n "
					"(replaced by each RNIC's name)\n",
					opt[i], path[i]);
				return 2;
			}
	}
	return UROCED_RUN;
}

static void stop(struct uroced *u);

/*
 * Bring one RNIC up on the daemon's loop, step by step (enum uroced_step).
 * A failing step prints one line and undoes its own partial work; stop()
 * then undoes the steps done before it. 0, or -1.
 */
static int start_rnic(struct uroced *u, struct uroced_rnic *r)
{
	const struct emu_opts *o = &r->opts;
	struct emu_dev *dev = &r->dev;
	int err;

	if (emu_dev_setup(dev, o))
		return -1;
	emu_dp_init(dev);
	emu_cm_start(dev);
	if (o->spin_set)
		dev->wait.spin_us = o->spin_us;
	dev->cm_timeout = o->cm_timeout;
	dev->x.rnr_hold_us = o->rnr_hold_us;
	dev->ack_hold_us = o->ack_hold_us;
	dev->map_budget = o->map_budget;
	dev->prof = o->profile;
	dev->x.prof = o->profile;
	dev->cm_retries = o->cm_retries;
	r->done = UROCED_DEVICE;

	if (emu_dev_bind_udp(dev))
		return -1;
	r->done = UROCED_UDP;

	err = common_rundir_resolve(o->rundir, dev->rundir, sizeof(dev->rundir));
	if (!err)
		err = common_rundir_prepare(dev->rundir);
	if (err) {
		struct stat st;

		if (err == -EPERM && !stat(dev->rundir, &st) &&
		    common_rundir_unsafe_mode(st.st_mode))
			fprintf(
			    stderr,
			    "uroced: run directory %s: writable by other users and not sticky "
			    "(another user could replace the device socket; chmod go-w or +t)\n",
			    dev->rundir);
		else
			fprintf(stderr, "uroced: run directory %s: %s\n", dev->rundir,
				strerror(-err));
		return -1;
	}
	r->done = UROCED_RUNDIR;

	err = emu_dev_status_page(dev);
	if (err) {
		fprintf(stderr, "uroced: status page: %s\n", strerror(-err));
		return -1;
	}
	r->done = UROCED_STATUS;

	/* Not fatal: without the buffers every access is one process_vm call. */
	if (emu_dma_init(dev))
		emu_warn("no memory for DMA batching: one process_vm call per access");
	r->done = UROCED_DMA;

	if (o->fault_log) {
		struct stat st;

		r->fault_log_created = lstat(o->fault_log, &st) && errno == ENOENT;
	}
	err = emu_fault_init(dev, o->seed, o->fault_log);
	if (err) {
		fprintf(stderr, "uroced: --fault-log %s: %s\n", o->fault_log, strerror(-err));
		return -1;
	}
	r->done = UROCED_FAULT;
	for (unsigned i = 0; i < o->nfault_rules; i++) {
		struct common_fault_rule rule;
		uint32_t id;

		/* parse() checked them; nothing else can fail but memory. */
		if (common_fault_parse(o->fault_rules[i], &rule, NULL, 0) ||
		    emu_fault_add(dev, &rule, &id)) {
			fprintf(stderr, "uroced: --fault %s: cannot add it\n", o->fault_rules[i]);
			return -1;
		}
	}
	if (o->nfault_rules)
		emu_info("fault injection: %u rule%s, seed %llu", o->nfault_rules,
			 o->nfault_rules == 1 ? "" : "s", (unsigned long long)o->seed);

	if (o->pcap_path && emu_capture_open(dev, o->pcap_path, o->pcap_snaplen, o->pcap_size,
					     o->pcap_files, o->pcap_buffer))
		return -1;
	r->done = UROCED_CAPTURE;

	dev->loop = &u->loop;
	r->done = UROCED_LOOP;

	if (emu_ctl_listen(dev))
		return -1;
	r->done = UROCED_CTL;

	if (emu_net_start(dev)) {
		fprintf(stderr, "uroced: out of memory\n");
		return -1;
	}
	r->done = UROCED_NET;

	/* Handles on the loop: nothing here fails, closing the loop undoes it. */
	emu_capture_start(dev);
	emu_fault_start(dev);
	emu_wait_start(&dev->wait, &u->wait, dev->status);
	uv_signal_init(&u->loop, &dev->sigint);
	dev->sigint.data = dev;
	uv_signal_start(&dev->sigint, on_signal, SIGINT);
	uv_signal_init(&u->loop, &dev->sigterm);
	dev->sigterm.data = dev;
	uv_signal_start(&dev->sigterm, on_signal, SIGTERM);
	r->done = UROCED_WAIT;
	return 0;
}

/* A path with each %n replaced by the RNIC's name. 0, or -1 when too long. */
static int rnic_path(char *out, size_t size, const char *fmt, const char *name)
{
	size_t n = 0;

	for (const char *p = fmt; *p; p++) {
		const char *add = p;
		size_t len = 1;

		if (p[0] == '%' && p[1] == 'n') {
			add = name;
			len = strlen(name);
			p++;
		}
		if (n + len >= size)
			return -1;
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

/*
 * Bring the daemon up: the process settings, the event loop, then each
 * RNIC in the order given. 0, or -1 (exit status 1) with everything undone.
 */
static int start(struct uroced *u)
{
	const struct emu_opts *o = &u->opts;
	char logname[UROCE_NAME_MAX];
	int err;

	/* The log names the RNICs: "uroce0" or "uroce0+uroce1". */
	logname[0] = '\0';
	for (unsigned i = 0; i < u->nnames; i++)
		snprintf(logname + strlen(logname), sizeof(logname) - strlen(logname), "%s%s",
			 i ? "+" : "", u->names[i]);
	emu_log_set_name(logname);
	emu_log_set_level((enum emu_log_level)o->verbosity);
	emu_log_open();
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	set_priority(o->nice, o->nice_set);

	if (uv_loop_init(&u->loop)) {
		fprintf(stderr, "uroced: cannot create the event loop\n");
		return -1;
	}
	u->loop_up = true;
	emu_wait_loop_init(&u->wait, &u->loop);
	for (unsigned i = 0; i < u->nnames; i++) {
		struct uroced_rnic *r = calloc(1, sizeof(*r));

		if (!r) {
			fprintf(stderr, "uroced: out of memory\n");
			goto err_unwind;
		}
		u->rnic[u->nrnic++] = r;
		r->opts = *o;
		r->opts.name = u->names[i];
		r->opts.addr = u->addrs[i];
		if ((o->pcap_path &&
		     rnic_path(r->pcap_path, sizeof(r->pcap_path), o->pcap_path, u->names[i])) ||
		    (o->fault_log &&
		     rnic_path(r->fault_log, sizeof(r->fault_log), o->fault_log, u->names[i]))) {
			fprintf(stderr, "uroced: %s: a file path is too long\n", u->names[i]);
			goto err_unwind;
		}
		if (o->pcap_path)
			r->opts.pcap_path = r->pcap_path;
		if (o->fault_log)
			r->opts.fault_log = r->fault_log;
		if (start_rnic(u, r))
			goto err_unwind;
	}
	for (unsigned i = 0; i < u->nrnic; i++)
		u->rnic[i]->dev.place = &u->place;
	err = emu_place_start(&u->place, &u->loop, o->cpu, u->rnic[0]->dev.rundir);
	if (err) {
		if (err == -EINVAL)
			fprintf(stderr, "uroced: --cpu %d: not a CPU this daemon may run on\n",
				o->cpu);
		else
			fprintf(stderr, "uroced: --cpu %d: %s\n", o->cpu, strerror(-err));
		goto err_unwind;
	}
	return 0;

err_unwind:
	u->failed = true;
	stop(u);
	return -1;
}

/* Serve until SIGINT or SIGTERM. */
static void run(struct uroced *u)
{
	emu_info("CRC-32 (ICRC) by %s", wire_crc32_engine_name());
	for (unsigned i = 0; i < u->nrnic; i++) {
		struct emu_dev *dev = &u->rnic[i]->dev;

		emu_info("uroce %s: device %s on %s port %u (%s, MTU %u, IB MTU %u), "
			 "socket %s",
			 UROCE_VERSION_STRING, dev->name, dev->addr_str, dev->udp_port, dev->ifname,
			 dev->if_mtu, 128u << dev->active_mtu, dev->sock_path);
		u->rnic[i]->done = UROCED_SERVING;
	}
	uv_run(&u->loop, UV_RUN_DEFAULT);
}

/*
 * Undo what start() (and run()) did. For each RNIC, from the last step done
 * back to the first: each case undoes its step and falls through to the one
 * before. The loop the RNICs share is closed between the steps above
 * UROCED_LOOP (clients, sockets) and those below it (captures, fault state
 * with their timers). The same path for a start that failed (u->failed) and
 * for a shutdown.
 */
static void stop_rnic_upper(struct uroced_rnic *r)
{
	struct emu_dev *dev = &r->dev;

	switch (r->done) {
	case UROCED_SERVING:
		/* Release every client (and what it created). */
		while (!emu_list_empty(&dev->ctxs))
			emu_ctx_destroy(EMU_CONTAINER_OF(dev->ctxs.next, struct emu_ctx, link));
		__attribute__((fallthrough));
	case UROCED_WAIT: /* its handles are closed with the loop */
	case UROCED_NET:
		emu_net_stop(dev); /* sends what is still batched */
		__attribute__((fallthrough));
	case UROCED_CTL:
		emu_ctl_close(dev); /* removes the socket */
		emu_capture_stopping(dev);
		break;
	default:
		break;
	}
}

static void stop_rnic_lower(struct uroced_rnic *r, bool failed)
{
	struct emu_dev *dev = &r->dev;

	switch (r->done) {
	case UROCED_SERVING:
	case UROCED_WAIT:
	case UROCED_NET:
	case UROCED_CTL:
	case UROCED_LOOP:
		dev->loop = NULL;
		__attribute__((fallthrough));
	case UROCED_CAPTURE:
		/* After the loop: the flush timer lives in the capture. */
		if (failed)
			emu_capture_discard(dev);
		else
			emu_capture_close(dev);
		__attribute__((fallthrough));
	case UROCED_FAULT:
		emu_fault_fini(dev); /* after the loop: the release timer */
		if (failed && r->fault_log_created)
			unlink(r->opts.fault_log);
		__attribute__((fallthrough));
	case UROCED_DMA:
		emu_dma_fini(dev);
		__attribute__((fallthrough));
	case UROCED_STATUS:
		emu_dev_status_page_free(dev);
		__attribute__((fallthrough));
	case UROCED_RUNDIR: /* the directory stays */
	case UROCED_UDP:
		emu_dev_unbind_udp(dev);
		__attribute__((fallthrough));
	case UROCED_DEVICE:
		emu_cm_stop(dev); /* after the loop: the ids' timers */
		emu_dev_close(dev);
		__attribute__((fallthrough));
	case UROCED_NOTHING:
		break;
	}
	r->done = UROCED_NOTHING;
}

static void stop(struct uroced *u)
{
	emu_place_stop(&u->place);
	for (unsigned i = 0; i < u->nrnic; i++)
		stop_rnic_upper(u->rnic[i]);
	if (u->loop_up) {
		uv_walk(&u->loop, close_walk, NULL);
		uv_run(&u->loop, UV_RUN_DEFAULT);
		if (uv_loop_close(&u->loop))
			emu_warn("event loop still had handles at exit");
		u->loop_up = false;
	}
	for (unsigned i = 0; i < u->nrnic; i++)
		stop_rnic_lower(u->rnic[i], u->failed);
}

static void free_rnics(struct uroced *u)
{
	for (unsigned i = 0; i < u->nrnic; i++)
		free(u->rnic[i]);
	u->nrnic = 0;
}

int main(int argc, char **argv)
{
	/* Static: the signal handlers point into it. */
	static struct uroced u;
	uint64_t rx = 0, tx = 0;
	int rc = parse(argc, argv, &u);

	if (rc != UROCED_RUN) {
		free_fault_rules(&u.opts);
		return rc;
	}
	emu_prof_init();
	if (start(&u)) {
		free_fault_rules(&u.opts);
		free_rnics(&u);
		return 1;
	}
	run(&u);
	stop(&u);
	free_fault_rules(&u.opts);
	for (unsigned i = 0; i < u.nrnic; i++) {
		rx += u.rnic[i]->dev.dcnt[EMU_DCNT_RX_DATAGRAMS];
		tx += u.rnic[i]->dev.dcnt[EMU_DCNT_TX_DATAGRAMS];
	}
	free_rnics(&u);
	emu_info("stopped (%llu datagrams received, %llu sent)", (unsigned long long)rx,
		 (unsigned long long)tx);
	return 0;
}
