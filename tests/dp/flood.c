// SPDX-License-Identifier: MIT
/*
 * flood SRC DST SECONDS PPS SEED QPN...: a hostile RoCEv2 peer for the
 * flood test. For SECONDS it sends about PPS datagrams a second from SRC
 * (any port) to DST port 4791 through an ordinary UDP socket (DF, so the
 * kernel writes IPv4 ID 0 and the ICRC can be computed beforehand), every
 * one with a valid ICRC, so that each gets past the ICRC check to the
 * transport's other checks:
 *  - 40 %: a well-formed packet of a random opcode (every opcode of the
 *    wire table) for one of the QPNs given (half of them) or a random QPN,
 *    with a random PSN, keys, addresses, MSN and a random payload length;
 *  - 30 %: such a packet with random bytes of its headers flipped;
 *  - 30 %: random bytes (0..1400 of them) closed by an ICRC.
 * Decisions come from SEED. Prints "sent N" at the end.
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <wire/wire.h>

static uint64_t rng;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ull) >> 32);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A well-formed packet of a random opcode into ib; its length without ICRC. */
static int build_valid(uint8_t *ib, size_t size, const uint32_t *qpns, int nqpn)
{
	const struct wire_opcode_info *info = wire_opcode_at(rnd() % WIRE_OPCODE_COUNT);
	uint32_t m = info->mask;
	struct wire_build b = {.opcode = info->opcode,
			       .destqp = nqpn && (rnd() & 1) ? qpns[rnd() % (unsigned)nqpn]
							      : rnd() & 0xffffff,
			       .psn = rnd() & 0xffffff,
			       .ackreq = rnd() & 1,
			       .se = rnd() & 1,
			       .va = (uint64_t)rnd() << 32 | rnd(),
			       .rkey = rnd(),
			       .dmalen = rnd() % 65536,
			       .swap_add = rnd(),
			       .compare = rnd(),
			       .syndrome = (uint8_t)rnd(),
			       .msn = rnd() & 0xffffff,
			       .qkey = rnd() & 1 ? 0x80010000u : rnd(),
			       .srcqp = rnd() & 0xffffff,
			       .imm = rnd(),
			       .ieth_rkey = rnd(),
			       .srqn = rnd() & 0xffffff,
			       .feth_sel = rnd() & 3,
			       .feth_plt = rnd() & 3};
	uint8_t payload[1024];
	size_t plen = 0;
	int n;

	if (m & WIRE_ATOMIC_WRITE_MASK)
		plen = 8;
	else if (m & WIRE_PAYLOAD_MASK)
		plen = rnd() % sizeof(payload);
	for (size_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)rnd();
	n = wire_build_ib(ib, size, &b, payload, plen);
	return n < 0 ? n : n - WIRE_ICRC_BYTES;
}

int main(int argc, char **argv)
{
	struct sockaddr_in src = {.sin_family = AF_INET};
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(WIRE_ROCEV2_PORT)};
	uint32_t qpns[16];
	int nqpn = 0, fd, on = IP_PMTUDISC_DO;
	unsigned long sent = 0;
	double secs, pps;
	uint64_t t0, gap;
	uint8_t ib[2048];

	if (argc < 6 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1 || (secs = atof(argv[3])) <= 0 ||
	    (pps = atof(argv[4])) <= 0) {
		fprintf(stderr, "usage: flood SRC DST SECONDS PPS SEED [QPN...]\n");
		return 2;
	}
	rng = strtoull(argv[5], NULL, 0) | 1;
	for (int i = 6; i < argc && nqpn < 16; i++)
		qpns[nqpn++] = (uint32_t)strtoul(argv[i], NULL, 0) & 0xffffff;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &on, sizeof(on)) < 0) {
		perror("flood: socket");
		return 1;
	}
	{
		socklen_t l = sizeof(src);

		getsockname(fd, (struct sockaddr *)&src, &l);
	}
	gap = (uint64_t)(1e9 / pps);
	t0 = now_ns();
	while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
		unsigned kind = rnd() % 10;
		int n;

		if (kind < 7) {
			n = build_valid(ib, sizeof(ib), qpns, nqpn);
			if (n < 0)
				continue;
			if (kind >= 4) /* mutate a few header bytes */
				for (unsigned k = 1 + rnd() % 3; k--;)
					ib[rnd() % (n < 40 ? (unsigned)n : 40u)] ^= (uint8_t)(1u << (rnd() % 8));
		} else {
			n = (int)(rnd() % 1400);
			for (int i = 0; i < n; i++)
				ib[i] = (uint8_t)rnd();
		}
		wire_icrc_put(ib + n, wire_icrc_udp4((const uint8_t *)&src.sin_addr,
						     (const uint8_t *)&dst.sin_addr,
						     ntohs(src.sin_port), WIRE_ROCEV2_PORT, ib,
						     (size_t)n));
		if (sendto(fd, ib, (size_t)n + WIRE_ICRC_BYTES, 0, (struct sockaddr *)&dst,
			   sizeof(dst)) > 0)
			sent++;
		/* paced: sleep while ahead of the schedule */
		{
			uint64_t due = t0 + sent * gap, t = now_ns();

			if (due > t + 20000)
				usleep((useconds_t)((due - t) / 1000));
		}
	}
	close(fd);
	printf("sent %lu\n", sent);
	return 0;
}
