/* SPDX-License-Identifier: MIT */
/*
 * Micro-benchmark of what one 64 KiB message costs the machine on its way
 * from one registered buffer to another over loopback UDP, as the daemon
 * moves it, against a data path that could map registered memory, and
 * against TCP. One thread does both ends (as one daemon hosting both RNICs
 * does), so CPU seconds per GB is the whole cost of the chain:
 *
 *   dma   today's chain: process_vm_readv of the message into a staging
 *         buffer, a copy into packets built in place (16 x (40-byte header
 *         + 4 KiB)), one UDP GSO datagram, one recvmsg with UDP_GRO, and a
 *         process_vm_writev of the 16 payloads into the destination
 *         (5 copies, 2 of them through process_vm_*);
 *   dma1  the same, but process_vm_readv reads the payloads straight into
 *         the packets (16 local iovecs): 4 copies;
 *   map   the same packets sent straight from the source buffer (an iovec
 *         per header and payload) and the payloads copied from the receive
 *         buffer into the destination (3 copies, no process_vm_*): what
 *         registered memory the daemon can map would allow;
 *   tcp   64 KiB written to a connected loopback TCP socket and read back
 *         (2 copies).
 *
 * Source and destination are `MiB` each (default 64: larger than the L3 of
 * the development machines, as with ib_write_bw -q 1000; 1 keeps them in
 * cache, as with -q 1). process_vm_* address this process itself, which
 * takes the same kernel path as another process (pin, copy, unpin).
 *   bench_copy [SECONDS_PER_CASE [MiB]]   (default 1, 64)
 * Prints GB/s and CPU seconds per GB for each. No ICRC, no transport:
 * only the movement of the bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

#define MSG (64u * 1024u)
#define SEG 4096u
#define HDR 40u /* BTH + RETH + ICRC-sized room, as a WRITE packet's */
#define NSEG (MSG / SEG)
#define PKT (HDR + SEG)
/* Packets per GSO datagram: what fits in 64 KiB of UDP payload. */
#define PER_GSO (65507u / PKT)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_copy: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint8_t *buffer(size_t bytes, int fill)
{
	uint8_t *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	memset(p, fill, bytes);
	return p;
}

/* A UDP socket pair on 127.0.0.1 (the receiver with UDP_GRO). */
static void udp_pair(int *tx, int *rx, struct sockaddr_in *to)
{
	socklen_t len = sizeof(*to);
	int one = 1, size = 16 << 20;

	*tx = socket(AF_INET, SOCK_DGRAM, 0);
	*rx = socket(AF_INET, SOCK_DGRAM, 0);
	if (*tx < 0 || *rx < 0)
		die("socket");
	memset(to, 0, sizeof(*to));
	to->sin_family = AF_INET;
	to->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(*rx, (struct sockaddr *)to, sizeof(*to)) ||
	    getsockname(*rx, (struct sockaddr *)to, &len))
		die("bind");
	setsockopt(*rx, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	setsockopt(*tx, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (setsockopt(*rx, SOL_UDP, UDP_GRO, &one, sizeof(one)))
		die("UDP_GRO");
	/* A lost datagram ends the run with an error, not a hang. */
	if (setsockopt(*rx, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){.tv_sec = 5},
		       sizeof(struct timeval)))
		die("SO_RCVTIMEO");
}

static ssize_t send_gso(int fd, const struct sockaddr_in *to, struct iovec *iov, int n)
{
	char ctl[CMSG_SPACE(sizeof(uint16_t))] = {0};
	struct msghdr m = {.msg_name = (void *)to,
			   .msg_namelen = sizeof(*to),
			   .msg_iov = iov,
			   .msg_iovlen = (size_t)n,
			   .msg_control = ctl,
			   .msg_controllen = sizeof(ctl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	uint16_t seg = PKT;

	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	return sendmsg(fd, &m, 0);
}

/* Send the packets of one message, described by n iovecs of per_pkt
 * entries each, as few GSO datagrams as fit. */
static void send_msg(int fd, const struct sockaddr_in *to, struct iovec *iov, unsigned per_pkt)
{
	for (unsigned p = 0; p < NSEG; p += PER_GSO) {
		unsigned n = NSEG - p < PER_GSO ? NSEG - p : PER_GSO;

		if (send_gso(fd, to, iov + p * per_pkt, (int)(n * per_pkt)) < 0)
			die("sendmsg");
	}
}

/* Receive the datagrams of one message (NSEG packets) into rx. */
static void recv_all(int fd, uint8_t *rx)
{
	size_t got = 0;

	while (got < NSEG * PKT) {
		ssize_t r = recv(fd, rx + got, NSEG * PKT - got, 0);

		if (r <= 0)
			die("recv");
		got += (size_t)r;
	}
}

enum chain { DMA, DMA1, MAP, TCP };

/* The dma chains from built packets on: send them, receive them, and
 * process_vm_writev their payloads to `to_buf`. */
static void packets_to(int tx, int rx, const struct sockaddr_in *to, uint8_t *pkts, uint8_t *rxbuf,
		       uint8_t *to_buf)
{
	struct iovec iov[NSEG], r = {.iov_base = to_buf, .iov_len = MSG};

	for (unsigned i = 0; i < NSEG; i++)
		iov[i] = (struct iovec){.iov_base = pkts + i * PKT, .iov_len = PKT};
	send_msg(tx, to, iov, 1);
	recv_all(rx, rxbuf);
	for (unsigned i = 0; i < NSEG; i++)
		iov[i] = (struct iovec){.iov_base = rxbuf + i * PKT + HDR, .iov_len = SEG};
	if (process_vm_writev(getpid(), iov, NSEG, &r, 1, 0) != (ssize_t)MSG)
		die("process_vm_writev");
}

/* One message from src+off to dst+off along `c`. */
static void move_one(enum chain c, int tx, int rx, const struct sockaddr_in *to, uint8_t *src,
		     uint8_t *dst, size_t off, uint8_t *stage, uint8_t *pkts, uint8_t *rxbuf)
{
	static uint8_t hdr[NSEG][HDR];
	struct iovec iov[2 * NSEG];
	pid_t self = getpid();

	switch (c) {
	case DMA: {
		struct iovec l = {.iov_base = stage, .iov_len = MSG};
		struct iovec r = {.iov_base = src + off, .iov_len = MSG};

		if (process_vm_readv(self, &l, 1, &r, 1, 0) != (ssize_t)MSG)
			die("process_vm_readv");
		for (unsigned i = 0; i < NSEG; i++) {
			memcpy(pkts + i * PKT, hdr[i], HDR);
			memcpy(pkts + i * PKT + HDR, stage + i * SEG, SEG);
		}
		packets_to(tx, rx, to, pkts, rxbuf, dst + off);
		break;
	}
	case DMA1: {
		struct iovec r = {.iov_base = src + off, .iov_len = MSG};

		for (unsigned i = 0; i < NSEG; i++) {
			memcpy(pkts + i * PKT, hdr[i], HDR);
			iov[i] = (struct iovec){.iov_base = pkts + i * PKT + HDR, .iov_len = SEG};
		}
		if (process_vm_readv(self, iov, NSEG, &r, 1, 0) != (ssize_t)MSG)
			die("process_vm_readv");
		packets_to(tx, rx, to, pkts, rxbuf, dst + off);
		break;
	}
	case MAP:
		for (unsigned i = 0; i < NSEG; i++) {
			iov[2 * i] = (struct iovec){.iov_base = hdr[i], .iov_len = HDR};
			iov[2 * i + 1] =
			    (struct iovec){.iov_base = src + off + i * SEG, .iov_len = SEG};
		}
		send_msg(tx, to, iov, 2);
		recv_all(rx, rxbuf);
		for (unsigned i = 0; i < NSEG; i++)
			memcpy(dst + off + i * SEG, rxbuf + i * PKT + HDR, SEG);
		break;
	case TCP: {
		size_t done = 0;

		if (write(tx, src + off, MSG) != (ssize_t)MSG)
			die("write");
		while (done < MSG) {
			ssize_t r = read(rx, dst + off + done, MSG - done);

			if (r <= 0)
				die("read");
			done += (size_t)r;
		}
		break;
	}
	}
}

static void tcp_pair(int *tx, int *rx)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1, size = 4 << 20;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("tcp listen");
	*tx = socket(AF_INET, SOCK_STREAM, 0);
	if (*tx < 0 || connect(*tx, (struct sockaddr *)&a, sizeof(a)))
		die("tcp connect");
	*rx = accept(l, NULL, NULL);
	if (*rx < 0)
		die("accept");
	setsockopt(*tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* A whole message fits: one thread writes it, then reads it. */
	setsockopt(*tx, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(*rx, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	close(l);
}

int main(int argc, char **argv)
{
	static const char *names[] = {"dma (today)", "dma1 (no staging)", "map (mapped MRs)",
				      "tcp"};
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
	size_t bytes = mib << 20;
	uint8_t *src, *dst, *stage, *pkts, *rxbuf;
	double res[4][2];

	if (secs <= 0 || mib == 0 || bytes < MSG) {
		fprintf(stderr, "usage: bench_copy [SECONDS_PER_CASE [MiB]] (MiB >= 1)\n");
		return 2;
	}
	src = buffer(bytes, 0x5a);
	dst = buffer(bytes, 0);
	stage = buffer(MSG, 0);
	pkts = buffer(NSEG * PKT, 0);
	rxbuf = buffer(NSEG * PKT, 0);
	printf("64 KiB messages through %zu MiB buffers, %.2f s per case\n", mib, secs);
	printf("%-18s %10s %14s\n", "chain", "GB/s", "CPU s per GB");
	for (int c = DMA; c <= TCP; c++) {
		struct sockaddr_in to;
		double t0, c0, t, cs;
		size_t off = 0, moved = 0;
		int tx, rx;

		if (c == TCP)
			tcp_pair(&tx, &rx);
		else
			udp_pair(&tx, &rx, &to);
		memset(dst, 0, bytes);
		t0 = now();
		c0 = cpu();
		do {
			for (int k = 0; k < 64; k++) {
				move_one((enum chain)c, tx, rx, &to, src, dst, off, stage, pkts,
					 rxbuf);
				moved += MSG;
				off = (off + MSG) % (bytes - bytes % MSG);
			}
		} while (now() - t0 < secs);
		t = now() - t0;
		cs = cpu() - c0;
		close(tx);
		close(rx);
		/* Every byte arrived where it belongs. */
		if (memcmp(src, dst, moved < bytes ? moved - moved % MSG : bytes - bytes % MSG)) {
			fprintf(stderr, "bench_copy: %s: the destination differs from the source\n",
				names[c]);
			return 1;
		}
		res[c][0] = (double)moved / t / 1e9;
		res[c][1] = cs / ((double)moved / 1e9);
		printf("%-18s %10.2f %14.3f\n", names[c], res[c][0], res[c][1]);
	}
	printf("CPU per GB, dma / tcp %.2f, dma1 / dma %.2f, map / dma %.2f, map / tcp %.2f\n",
	       res[DMA][1] / res[TCP][1], res[DMA1][1] / res[DMA][1], res[MAP][1] / res[DMA][1],
	       res[MAP][1] / res[TCP][1]);
	return 0;
}
