/* SPDX-License-Identifier: MIT */
/*
 * impair: a user-space netem for the tests. These machines' kernel has no
 * sch_netem (no modules at all), so network impairments between two test
 * hosts are made here: the tool runs in a middle network namespace, holds
 * one AF_PACKET socket on each of two interfaces (the middle ends of two
 * veth pairs whose other ends are the hosts) and forwards every Ethernet
 * frame from one to the other. Frames that match (by default RoCEv2: UDP to
 * port 4791, IPv4 or IPv6; --all: every frame) are impaired on the way, per
 * direction and reproducibly from --seed: loss, duplication, reordering
 * (a share of frames held back by an extra delay, so that later ones
 * overtake them), corruption (one bit flipped in the UDP payload, which for
 * RoCEv2 is the IB packet and its ICRC), delay with uniform jitter (frames
 * overtake each other when the jitter exceeds their spacing, as with
 * netem), and an outage window during which everything matching is
 * dropped (from the command line, or started with SIGUSR1). Frames that do
 * not match (ARP, the TCP set-up exchange of the test programs) pass at
 * once, untouched. Frames travel with their virtio-net header
 * (PACKET_VNET_HDR), so a checksum or segmentation offload still pending
 * on the sending host's veth is completed by the receiving side as if the
 * frame had crossed one veth. It does not route, change addresses or
 * answer anything;
 * it only ever sends on its two interfaces, so traffic stays inside the
 * namespaces the test built (tests/lib/impair_net.sh). On SIGINT/SIGTERM
 * it prints its counters per direction and exits 0.
 *
 *   impair [--seed N] [--all] [--port P] [--outage-len SEC] [--stats FILE]
 *          [-x SPEC] [-a SPEC] [-b SPEC] IFACE_A IFACE_B
 *
 * -a applies SPEC to frames from IFACE_A to IFACE_B, -b to the other way,
 * -x to both. SPEC is a comma list of key=value: loss=PCT, dup=PCT,
 * reorder=PCT, reorder_delay=MS, corrupt=PCT, delay=MS, jitter=MS,
 * outage=START+LEN (seconds after the tool started), acks=0 (RoCEv2
 * Acknowledge and Atomic Acknowledge packets pass untouched, counted as
 * spared). PCT and MS may have decimals.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IMPAIR_MAX_FRAME (65536 + 64)
#define IMPAIR_SOCKBUF (4 << 20)
#define IMPAIR_ROCE_PORT 4791

/* What happens to matching frames going one way. */
struct impair_spec {
	double loss, dup, reorder, corrupt; /* percent */
	bool spare_acks;		    /* acks=0: RoCEv2 Acknowledge packets pass untouched */
	uint64_t reorder_ns, delay_ns, jitter_ns;
	uint64_t outage_start_ns, outage_len_ns; /* outage_len_ns 0 = none */
};

struct impair_stats {
	uint64_t in, sent, passed, lost, outage, dup, reordered, corrupted, tx_err, spared;
	/* frames held for a delay: how long each was meant to be held (the
	 * tool's own decision, independent of the machine's load), and how late
	 * the tool released the latest one */
	uint64_t held, hold_min_ns, hold_max_ns, hold_sum_ns, late_max_ns;
};

struct impair_dir {
	const char *name;
	int in_fd, out_fd;
	struct impair_spec spec;
	struct impair_stats st;
};

/* A frame waiting for its time, in a min-heap on (due, seq). */
struct impair_item {
	uint64_t due, seq;
	struct impair_dir *dir;
	size_t len;
	uint8_t buf[];
};

static struct impair_item **heap;
static size_t nheap, capheap;
static uint64_t seq_next, rng;
static volatile sig_atomic_t stop, outage_now;
/* Bytes of virtio-net header before each frame (0 when PACKET_VNET_HDR is not available). */
static size_t vnet;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: the same draws for the same seed and frame order. */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* True with probability pct percent. */
static bool chance(double pct)
{
	return pct > 0 && (double)(rnd() >> 11) / (double)(1ull << 53) * 100.0 < pct;
}

static bool before(const struct impair_item *a, const struct impair_item *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static int heap_push(struct impair_item *it)
{
	size_t i;

	if (nheap == capheap) {
		size_t ncap = capheap ? capheap * 2 : 1024;
		struct impair_item **n = realloc(heap, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		heap = n;
		capheap = ncap;
	}
	i = nheap++;
	while (i && before(it, heap[(i - 1) / 2])) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = it;
	return 0;
}

static struct impair_item *heap_pop(void)
{
	struct impair_item *top = heap[0], *last = heap[--nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= nheap)
			break;
		if (c + 1 < nheap && before(heap[c + 1], heap[c]))
			c++;
		if (!before(heap[c], last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (nheap)
		heap[i] = last;
	return top;
}

/*
 * Offset of the UDP payload of a frame to UDP port `port` (IPv4, or IPv6
 * without extension headers), or 0 when it is not one.
 */
static size_t udp_payload_off(const uint8_t *f, size_t len, uint16_t port)
{
	uint16_t type;
	size_t ip, udp;

	if (len < ETH_HLEN)
		return 0;
	type = (uint16_t)(f[12] << 8 | f[13]);
	ip = ETH_HLEN;
	if (type == ETHERTYPE_IP) {
		if (len < ip + 20 || (f[ip] >> 4) != 4 || f[ip + 9] != IPPROTO_UDP)
			return 0;
		udp = ip + (size_t)(f[ip] & 0xf) * 4;
	} else if (type == ETHERTYPE_IPV6) {
		if (len < ip + 40 || f[ip + 6] != IPPROTO_UDP)
			return 0;
		udp = ip + 40;
	} else {
		return 0;
	}
	if (len < udp + 8 || (uint16_t)(f[udp + 2] << 8 | f[udp + 3]) != port)
		return 0;
	return udp + 8;
}

static void send_frame(struct impair_dir *d, const uint8_t *buf, size_t len)
{
	if (send(d->out_fd, buf, len, 0) < 0)
		d->st.tx_err++;
	else
		d->st.sent++;
}

static int queue_frame(struct impair_dir *d, const uint8_t *buf, size_t len, uint64_t due)
{
	struct impair_item *it = malloc(sizeof(*it) + len);

	if (!it)
		return -ENOMEM;
	it->due = due;
	it->seq = seq_next++;
	it->dir = d;
	it->len = len;
	memcpy(it->buf, buf, len);
	if (heap_push(it)) {
		free(it);
		return -ENOMEM;
	}
	return 0;
}

static bool in_outage(const struct impair_spec *s, uint64_t t, uint64_t t0, uint64_t manual_end)
{
	if (t < manual_end)
		return true;
	return s->outage_len_ns && t - t0 >= s->outage_start_ns &&
	       t - t0 < s->outage_start_ns + s->outage_len_ns;
}

/*
 * One frame that arrived on d's input (buf: the virtio-net header, then
 * the Ethernet frame; len counts both): drop, impair, delay or pass it.
 */
static void handle(struct impair_dir *d, uint8_t *buf, size_t len, bool all, uint16_t port,
		   uint64_t t, uint64_t t0, uint64_t manual_end)
{
	const struct impair_spec *s = &d->spec;
	size_t off = len > vnet ? udp_payload_off(buf + vnet, len - vnet, port) : 0;
	uint64_t due = t + s->delay_ns;
	unsigned copies = 1;

	if (!off && !all) {
		d->st.passed++;
		send_frame(d, buf, len);
		return;
	}
	/* BTH opcodes whose low five bits are 0x11 or 0x12: Acknowledge and
	 * Atomic Acknowledge, of RC (0x11, 0x12) and XRC (0xB1, 0xB2). */
	if (s->spare_acks && off && len > vnet + off &&
	    ((buf[vnet + off] & 0x1f) == 0x11 || (buf[vnet + off] & 0x1f) == 0x12)) {
		d->st.spared++;
		send_frame(d, buf, len);
		return;
	}
	d->st.in++;
	if (in_outage(s, t, t0, manual_end)) {
		d->st.outage++;
		return;
	}
	if (chance(s->loss)) {
		d->st.lost++;
		return;
	}
	if (chance(s->corrupt)) {
		size_t from = vnet + (off ? off : ETH_HLEN);

		if (len > from) {
			buf[from + rnd() % (len - from)] ^= (uint8_t)(1u << (rnd() % 8));
			d->st.corrupted++;
		}
	}
	if (s->jitter_ns) {
		uint64_t j = rnd() % (2 * s->jitter_ns + 1);

		due = due + j >= s->jitter_ns ? due + j - s->jitter_ns : t;
		if (due < t)
			due = t;
	}
	if (chance(s->reorder)) {
		due += s->reorder_ns;
		d->st.reordered++;
	}
	if (chance(s->dup)) {
		copies = 2;
		d->st.dup++;
	}
	while (copies--) {
		if (due <= t && !nheap) {
			send_frame(d, buf, len);
			continue;
		}
		if (queue_frame(d, buf, len, due)) {
			d->st.tx_err++;
			continue;
		}
		if (due > t) {
			uint64_t h = due - t;

			if (!d->st.held || h < d->st.hold_min_ns)
				d->st.hold_min_ns = h;
			if (h > d->st.hold_max_ns)
				d->st.hold_max_ns = h;
			d->st.hold_sum_ns += h;
			d->st.held++;
		}
	}
}

static int open_iface(const char *name, int *ifindex)
{
	struct sockaddr_ll sll = {0};
	struct packet_mreq mr = {0};
	int fd, size = IMPAIR_SOCKBUF, one = 1;

	*ifindex = (int)if_nametoindex(name);
	if (!*ifindex) {
		fprintf(stderr, "impair: no interface %s: %s\n", name, strerror(errno));
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0) {
		fprintf(stderr, "impair: AF_PACKET socket: %s\n", strerror(errno));
		return -1;
	}
	if (vnet && setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0) {
		fprintf(stderr, "impair: PACKET_VNET_HDR on %s: %s\n", name, strerror(errno));
		close(fd);
		return -1;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = *ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "impair: bind to %s: %s\n", name, strerror(errno));
		close(fd);
		return -1;
	}
	mr.mr_ifindex = *ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		fprintf(stderr, "impair: promiscuous %s: %s\n", name, strerror(errno));
#ifdef PACKET_IGNORE_OUTGOING
	/* Our own sends on this interface are not frames to forward. */
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
#endif
	(void)one;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	return fd;
}

/* Parse "3" or "2.5" as a number; false on junk. */
static bool parse_num(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return !errno && end != v && !*end && *out >= 0;
}

static uint64_t ms_ns(double ms)
{
	return (uint64_t)(ms * 1e6);
}

static int parse_spec(const char *arg, struct impair_spec *s)
{
	char *copy = strdup(arg), *save = NULL, *kv;
	int rc = 0;

	for (kv = strtok_r(copy, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *plus;
		double v, w;

		if (!eq) {
			rc = -EINVAL;
			break;
		}
		*eq++ = 0;
		if (!strcmp(kv, "outage")) {
			plus = strchr(eq, '+');
			if (!plus) {
				rc = -EINVAL;
				break;
			}
			*plus++ = 0;
			if (!parse_num(eq, &v) || !parse_num(plus, &w)) {
				rc = -EINVAL;
				break;
			}
			s->outage_start_ns = (uint64_t)(v * 1e9);
			s->outage_len_ns = (uint64_t)(w * 1e9);
			continue;
		}
		if (!parse_num(eq, &v)) {
			rc = -EINVAL;
			break;
		}
		if (!strcmp(kv, "loss"))
			s->loss = v;
		else if (!strcmp(kv, "dup"))
			s->dup = v;
		else if (!strcmp(kv, "reorder"))
			s->reorder = v;
		else if (!strcmp(kv, "corrupt"))
			s->corrupt = v;
		else if (!strcmp(kv, "reorder_delay"))
			s->reorder_ns = ms_ns(v);
		else if (!strcmp(kv, "delay"))
			s->delay_ns = ms_ns(v);
		else if (!strcmp(kv, "jitter"))
			s->jitter_ns = ms_ns(v);
		else if (!strcmp(kv, "acks") && (v == 0 || v == 1))
			s->spare_acks = v == 0;
		else
			rc = -EINVAL;
	}
	if (rc)
		fprintf(stderr, "impair: bad spec '%s'\n", arg);
	free(copy);
	return rc;
}

static void print_stats(FILE *f, const struct impair_dir *d)
{
	const struct impair_stats *s = &d->st;

	fprintf(f,
		"%s in %llu sent %llu passed %llu lost %llu outage %llu dup %llu reordered %llu "
		"corrupted %llu tx_err %llu held %llu hold_min_us %llu hold_avg_us %llu "
		"hold_max_us %llu late_max_us %llu spared %llu\n",
		d->name, (unsigned long long)s->in, (unsigned long long)s->sent,
		(unsigned long long)s->passed, (unsigned long long)s->lost,
		(unsigned long long)s->outage, (unsigned long long)s->dup,
		(unsigned long long)s->reordered, (unsigned long long)s->corrupted,
		(unsigned long long)s->tx_err, (unsigned long long)s->held,
		(unsigned long long)(s->hold_min_ns / 1000),
		(unsigned long long)(s->held ? s->hold_sum_ns / s->held / 1000 : 0),
		(unsigned long long)(s->hold_max_ns / 1000),
		(unsigned long long)(s->late_max_ns / 1000), (unsigned long long)s->spared);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		outage_now = 1;
	else
		stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: impair [--seed N] [--all] [--port P] [--outage-len SEC] "
			"[--stats FILE] [-x SPEC] [-a SPEC] [-b SPEC] IFACE_A IFACE_B\n"
			"  SPEC: loss=PCT,dup=PCT,reorder=PCT,reorder_delay=MS,corrupt=PCT,"
			"delay=MS,jitter=MS,outage=START+LEN\n");
}

int main(int argc, char **argv)
{
	struct impair_dir dir[2] = {{.name = "a->b"}, {.name = "b->a"}};
	static uint8_t buf[IMPAIR_MAX_FRAME];
	const char *stats_file = NULL;
	uint64_t seed = 1, t0, manual_end = 0;
	double outage_len = 3;
	uint16_t port = IMPAIR_ROCE_PORT;
	bool all = false;
	int ifa, ifb, i;
	struct sigaction sa = {0};
	struct pollfd pfd[2];

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--all")) {
			all = true;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(o, "--seed")) {
			seed = strtoull(v, NULL, 0);
		} else if (!strcmp(o, "--port")) {
			port = (uint16_t)atoi(v);
		} else if (!strcmp(o, "--outage-len")) {
			if (!parse_num(v, &outage_len))
				return 2;
		} else if (!strcmp(o, "--stats")) {
			stats_file = v;
		} else if (!strcmp(o, "-a") || !strcmp(o, "-x")) {
			if (parse_spec(v, &dir[0].spec))
				return 2;
			if (!strcmp(o, "-x") && parse_spec(v, &dir[1].spec))
				return 2;
		} else if (!strcmp(o, "-b")) {
			if (parse_spec(v, &dir[1].spec))
				return 2;
		} else {
			usage();
			return 2;
		}
	}
	if (argc - i != 2) {
		usage();
		return 2;
	}
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	vnet = sizeof(struct virtio_net_hdr);
	dir[0].in_fd = dir[1].out_fd = open_iface(argv[i], &ifa);
	dir[1].in_fd = dir[0].out_fd = open_iface(argv[i + 1], &ifb);
	if (dir[0].in_fd < 0 || dir[1].in_fd < 0)
		return 1;
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	t0 = now_ns();
	fprintf(stderr, "impair: ready, %s <-> %s, seed %llu\n", argv[i], argv[i + 1],
		(unsigned long long)seed);
	for (int d = 0; d < 2; d++)
		pfd[d] = (struct pollfd){.fd = dir[d].in_fd, .events = POLLIN};
	while (!stop) {
		uint64_t t = now_ns();
		struct timespec ts, *tsp = NULL;

		if (outage_now) {
			outage_now = 0;
			manual_end = t + (uint64_t)(outage_len * 1e9);
			fprintf(stderr, "impair: outage for %.3f s\n", outage_len);
		}
		while (nheap && heap[0]->due <= t) {
			struct impair_item *it = heap_pop();

			if (t - it->due > it->dir->st.late_max_ns)
				it->dir->st.late_max_ns = t - it->due;
			send_frame(it->dir, it->buf, it->len);
			free(it);
		}
		if (nheap) {
			uint64_t wait = heap[0]->due - t;

			ts.tv_sec = (time_t)(wait / 1000000000ull);
			ts.tv_nsec = (long)(wait % 1000000000ull);
			tsp = &ts;
		}
		if (ppoll(pfd, 2, tsp, NULL) < 0 && errno != EINTR) {
			fprintf(stderr, "impair: poll: %s\n", strerror(errno));
			return 1;
		}
		for (int d = 0; d < 2; d++) {
			if (!(pfd[d].revents & POLLIN))
				continue;
			for (;;) {
				struct sockaddr_ll from;
				socklen_t fl = sizeof(from);
				ssize_t n = recvfrom(dir[d].in_fd, buf, sizeof(buf), MSG_DONTWAIT,
						     (struct sockaddr *)&from, &fl);

				if (n < 0)
					break;
				/* Only what the host sent us, not our own sends. */
				if (from.sll_pkttype == PACKET_OUTGOING)
					continue;
				handle(&dir[d], buf, (size_t)n, all, port, now_ns(), t0,
				       manual_end);
			}
		}
	}
	for (int d = 0; d < 2; d++)
		print_stats(stderr, &dir[d]);
	if (stats_file) {
		FILE *f = fopen(stats_file, "w");

		if (f) {
			for (int d = 0; d < 2; d++)
				print_stats(f, &dir[d]);
			fclose(f);
		}
	}
	while (nheap)
		free(heap_pop());
	free(heap);
	return 0;
}
