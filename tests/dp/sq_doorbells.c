/* SPDX-License-Identifier: MIT */
/*
 * sq_doorbells DEVICE [IDLE]: send queues that the daemon looks at only
 * when something happened to them (the shim's send doorbell bits,
 * emu/daemon/dp/doorbell.c), in plain libibverbs on one RNIC:
 *
 *  - IDLE (default 256) RC QPs in RTS, connected in pairs, that send
 *    nothing, beside one pair that makes 2000 SEND round trips; the last
 *    line says how many send WRs and QPs there were, and the script checks
 *    that the daemon's sq_looks counter grew with those, not with the idle
 *    QPs times the passes (the old pass looked at every QP every time);
 *  - then every idle pair sends one message each way, so the bits of every
 *    leaf and summary word in use ring, and every message arrives;
 *  - every other QP destroyed and as many created and connected: the bits
 *    are reused, and the new QPs send and receive;
 *  - an SQ of 8 slots filled 100 times by 7 unsignaled WRs and a signaled
 *    one: the slots of all 8 come back with the signaled completion.
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_pair.h"

#define ROUND_TRIPS 2000

static struct ibv_cq *cq;
static unsigned long sends;

static struct ibv_qp *new_qp(unsigned sq_slots, unsigned rq_slots)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .send_cq = cq,
	    .recv_cq = cq,
	    .cap = {.max_send_wr = sq_slots,
		    .max_recv_wr = rq_slots,
		    .max_send_sge = 1,
		    .max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &ia);
}

static int recv_one(struct ibv_qp *qp)
{
	struct ibv_sge s = {.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = qp->qp_num, .sg_list = &s, .num_sge = 1}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int send_one(struct ibv_qp *qp, unsigned flags)
{
	struct ibv_sge s = {.addr = (uintptr_t)buf, .length = 32, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = qp->qp_num,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = flags},
			   *bad;
	int rc = ibv_post_send(qp, &wr, &bad);

	if (!rc)
		sends++;
	return rc;
}

/* Poll n successful completions (bounded); how many came. */
static int poll_ok(int n)
{
	int got = 0;

	for (long spins = 0; got < n && spins < 200000000L; spins++) {
		struct ibv_wc wc[16];
		int k = ibv_poll_cq(cq, 16, wc);

		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "completion of QP 0x%x: %s\n", wc[i].qp_num,
					ibv_wc_status_str(wc[i].status));
				return got;
			}
			got++;
		}
	}
	return got;
}

/* One message each way between x and y. */
static int exchange(struct ibv_qp *x, struct ibv_qp *y)
{
	if (recv_one(x) || recv_one(y) || send_one(x, IBV_SEND_SIGNALED) ||
	    send_one(y, IBV_SEND_SIGNALED))
		return -1;
	return poll_ok(4) == 4 ? 0 : -1;
}

/* Connect the pairs (2i, 2i+1) of qps[from, to); how many failed. */
static int connect_range(struct ibv_qp **qps, int from, int to)
{
	int bad = 0;

	for (int i = from; i + 1 < to; i += 2)
		bad += qp_connect(qps[i], qps[i + 1]) != 0;
	return bad;
}

int main(int argc, char **argv)
{
	int idle = argc > 2 ? atoi(argv[2]) : 256;
	struct side a, b;
	struct ibv_qp **qps, *x, *y;
	int bad = 0, n;

	if (argc < 2 || idle < 2 || idle % 2) {
		fprintf(stderr, "usage: sq_doorbells DEVICE [IDLE, even, >= 2]\n");
		return 2;
	}
	if (pair_open("sq_doorbells", argv[1], &a, &b))
		return 1;
	cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	qps = calloc((size_t)idle, sizeof(*qps));
	if (!cq || !qps)
		return 1;
	for (int i = 0; i < idle; i++)
		if (!(qps[i] = new_qp(4, 4))) {
			fprintf(stderr, "QP %d: %s\n", i, strerror(errno));
			return 1;
		}
	check(connect_range(qps, 0, idle) == 0, "%d idle QPs in RTS, connected in pairs", idle);

	/* The busy pair, created last: its bits lie beyond the idle ones. */
	x = new_qp(16, 16);
	y = new_qp(16, 16);
	check(x && y && qp_connect(x, y) == 0, "busy pair connected");
	for (int i = 0; x && y && i < ROUND_TRIPS; i++)
		if (exchange(x, y)) {
			bad++;
			break;
		}
	check(!bad, "%d SEND round trips beside %d idle QPs", ROUND_TRIPS, idle);

	bad = 0;
	for (int i = 0; i + 1 < idle; i += 2)
		bad += exchange(qps[i], qps[i + 1]) != 0;
	check(!bad, "every idle pair sent one message each way (%d failed)", bad);

	/* Every other pair destroyed and made again: the freed bits are
	 * taken again (lowest first). */
	bad = 0;
	for (int i = 0; i + 1 < idle; i += 4) {
		bad += ibv_destroy_qp(qps[i]) || ibv_destroy_qp(qps[i + 1]);
		qps[i] = new_qp(4, 4);
		qps[i + 1] = new_qp(4, 4);
		bad += !qps[i] || !qps[i + 1] || qp_connect(qps[i], qps[i + 1]);
	}
	check(!bad, "half the QPs destroyed and made again");
	bad = 0;
	for (int i = 0; i + 1 < idle; i += 2)
		bad += exchange(qps[i], qps[i + 1]) != 0;
	check(!bad, "after that, every pair sent one message each way (%d failed)", bad);

	/* 8 slots: 7 unsignaled WRs and a signaled one, 100 times. Posting
	 * fails with ENOMEM if the slots of the unsignaled ones did not come
	 * back with the signaled completion. */
	bad = 0;
	n = 0;
	{
		struct ibv_qp *p = new_qp(8, 8), *q = new_qp(8, 8);

		if (!p || !q || qp_connect(p, q))
			bad = 1;
		for (int r = 0; !bad && r < 100; r++) {
			for (int k = 0; k < 8; k++)
				bad |= recv_one(q) != 0;
			for (int k = 0; k < 8; k++)
				bad |= send_one(p, k == 7 ? IBV_SEND_SIGNALED : 0) != 0;
			/* 8 receives and the one signaled send */
			if (!bad && poll_ok(9) != 9)
				bad = 1;
			n += !bad;
		}
	}
	check(!bad, "SQ of 8 slots filled by 7 unsignaled WRs and 1 signaled, %d times", n);

	printf("send WRs %lu, QPs %d\n", sends, idle + 6);
	return failures ? 1 : 0;
}
