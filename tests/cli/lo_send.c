/* SPDX-License-Identifier: MIT */
/*
 * Helper of the loopback capture test: sends one valid RoCEv2 packet of
 * every opcode through an ordinary unconnected UDP socket, as the daemon
 * will (IP_PMTUDISC_DO, so Linux puts ID 0 and DF in the IPv4 header it
 * writes), with the ICRC computed by wire_icrc_udp4() over that predicted
 * header (PROTOCOL.md section 12). The capture of what the kernel really
 * sent must then check out packet for packet.
 *   lo_send SRC_IPV4 DST_IPV4   prints the number of packets sent
 *   lo_send -n                  prints how many it would send
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wire/wire.h>

int main(int argc, char **argv)
{
	struct sockaddr_in src = {.sin_family = AF_INET, .sin_port = htons(0xc0aa)};
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(WIRE_ROCEV2_PORT)};
	int fd, on = IP_PMTUDISC_DO, tos = 0x02, sent = 0;
	uint8_t payload[256];

	if (argc == 2 && !strcmp(argv[1], "-n")) {
		printf("%d\n", WIRE_OPCODE_COUNT);
		return 0;
	}
	if (argc != 3 || inet_pton(AF_INET, argv[1], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: lo_send SRC_IPV4 DST_IPV4\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0) {
		perror("lo_send: socket");
		return 1;
	}
	memset(payload, 'u', sizeof(payload));
	for (unsigned i = 0; i < WIRE_OPCODE_COUNT; i++) {
		const struct wire_opcode_info *info = wire_opcode_at(i);
		uint32_t m = info->mask;
		struct wire_build b = {.opcode = info->opcode,
				       .destqp = 0x000d00 + i,
				       .psn = 1000 + i,
				       .ackreq = !!(m & WIRE_END_MASK),
				       .va = 0x7f0000001000ull,
				       .rkey = 0x1234,
				       .dmalen = 256,
				       .syndrome = WIRE_AETH_ACK_UNLIMITED,
				       .msn = i,
				       .qkey = 0x11111111,
				       .srcqp = 0x33,
				       .imm = 0xabcd,
				       .srqn = 7};
		size_t plen = 0;
		uint8_t ib[512];
		int n;

		if (m & WIRE_PAYLOAD_MASK)
			plen = (m & WIRE_MIDDLE_MASK || (m & WIRE_ONLY_MASK) == WIRE_START_MASK)
				   ? 256
			       : (m & WIRE_ATOMIC_WRITE_MASK) ? 8
							      : 11;
		n = wire_build_ib(ib, sizeof(ib), &b, payload, plen);
		if (n < 0)
			return 1;
		wire_icrc_put(ib + n - WIRE_ICRC_BYTES,
			      wire_icrc_udp4((const uint8_t *)&src.sin_addr,
					     (const uint8_t *)&dst.sin_addr, ntohs(src.sin_port),
					     WIRE_ROCEV2_PORT, ib, (size_t)n - WIRE_ICRC_BYTES));
		if (sendto(fd, ib, (size_t)n, 0, (struct sockaddr *)&dst, sizeof(dst)) != n) {
			perror("lo_send: sendto");
			return 1;
		}
		sent++;
		usleep(1000);
	}
	close(fd);
	printf("%d\n", sent);
	return 0;
}
