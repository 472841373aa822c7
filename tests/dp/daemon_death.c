/* SPDX-License-Identifier: MIT */
/*
 * daemon_death: an ordinary verbs program that keeps polling while its
 * RNIC dies under it (the test script kills the daemon with SIGKILL once
 * this program prints "ready"). Two RC QPs of the device talk to each
 * other; QP a has four signaled SENDs outstanding (b has no receive posted,
 * so they wait in RNR retries forever) and three receives posted. Once the
 * daemon is gone the program must see, within a bounded time and while
 * doing nothing but ibv_poll_cq:
 *   - an IBV_WC_WR_FLUSH_ERR completion for each of the seven WRs, sends
 *     and receives each in the order posted;
 *   - ibv_post_send and ibv_post_recv failing with EIO;
 *   - IBV_EVENT_DEVICE_FATAL from ibv_get_async_event;
 *   - the objects and the device released without error.
 * Run it under the shim:
 *
 *   daemon_death DEVICE
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "verbs_pair.h"

#define NSEND 4
#define NRECV 3

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int send_one(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int recv_one(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	struct ibv_async_event ev;
	struct pollfd p;
	struct side a, b;
	struct ibv_wc wc[16];
	uint64_t next_send = 100, next_recv = 200;
	int got = 0, bad = 0, rc;
	double t0, t1;

	if (argc != 2) {
		fprintf(stderr, "usage: daemon_death DEVICE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open("daemon_death", argv[1], &a, &b))
		return 1;
	if (qp_connect(a.qp, b.qp)) {
		fprintf(stderr, "daemon_death: connecting the QPs failed: %s\n", strerror(errno));
		return 1;
	}
	/* The device works: one SEND each way. */
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&a, 1) == 1 && poll_n(&b, 1) == 1, "a SEND completes while the daemon runs");
	for (int i = 0; i < NSEND; i++)
		if (send_one(a.qp, 100 + (uint64_t)i))
			check(0, "post_send: %s", strerror(errno));
	for (int i = 0; i < NRECV; i++)
		if (recv_one(a.qp, 200 + (uint64_t)i))
			check(0, "post_recv: %s", strerror(errno));
	check(ibv_poll_cq(a.cq, 16, wc) == 0, "nothing completes while b posts no receive");
	printf("ready\n");

	/* Only polling from here on, as a program waiting for its WRs does. */
	t0 = now_s();
	while (got < NSEND + NRECV && now_s() - t0 < 60) {
		int n = ibv_poll_cq(a.cq, 16, wc);

		if (n < 0) {
			check(0, "ibv_poll_cq returned %d", n);
			break;
		}
		for (int i = 0; i < n; i++, got++) {
			uint64_t *next = wc[i].opcode == IBV_WC_RECV ? &next_recv : &next_send;

			if (wc[i].status != IBV_WC_WR_FLUSH_ERR || wc[i].wr_id != *next ||
			    wc[i].qp_num != a.qp->qp_num)
				bad++;
			(*next)++;
		}
	}
	t1 = now_s();
	check(
	    got == NSEND + NRECV && !bad && next_send == 100 + NSEND && next_recv == 200 + NRECV,
	    "ibv_poll_cq flushed the %d send and %d receive WRs with IBV_WC_WR_FLUSH_ERR, in order "
	    "(%d completions, %d wrong)",
	    NSEND, NRECV, got, bad);
	printf("flushed %d WRs %.0f ms after \"ready\"\n", got, (t1 - t0) * 1000);
	check(ibv_poll_cq(a.cq, 16, wc) == 0, "and nothing more");
	rc = send_one(a.qp, 999);
	check(rc == EIO, "ibv_post_send fails with EIO (%s)", strerror(rc));
	rc = recv_one(a.qp, 999);
	check(rc == EIO, "ibv_post_recv fails with EIO (%s)", strerror(rc));
	p.fd = ctx->async_fd;
	p.events = POLLIN;
	rc = poll(&p, 1, 5000) == 1 ? ibv_get_async_event(ctx, &ev) : -1;
	check(rc == 0 && ev.event_type == IBV_EVENT_DEVICE_FATAL, "IBV_EVENT_DEVICE_FATAL (%s)",
	      rc ? strerror(errno) : ibv_event_type_str(ev.event_type));
	if (!rc)
		ibv_ack_async_event(&ev);
	check(ibv_destroy_qp(a.qp) == 0 && ibv_destroy_qp(b.qp) == 0, "the QPs can be destroyed");
	check(ibv_destroy_cq(a.cq) == 0 && ibv_destroy_cq(b.cq) == 0 &&
		  ibv_destroy_comp_channel(a.ch) == 0 && ibv_destroy_comp_channel(b.ch) == 0,
	      "the CQs and channels can be destroyed");
	check(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0, "the MR and PD can be released");
	check(ibv_close_device(ctx) == 0, "the device can be closed");
	return failures ? 1 : 0;
}
