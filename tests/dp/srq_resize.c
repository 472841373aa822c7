// SPDX-License-Identifier: MIT
/*
 * srq_resize DEVICE: ibv_modify_srq with IBV_SRQ_MAX_WR under traffic.
 * First the errors (0, above max_srq_wr, below what is posted, below an
 * armed limit: EINVAL, the size unchanged), then N SENDs of a sequence
 * number from one RC QP to another whose receives come from an SRQ that a
 * second thread keeps filling while this one grows it, in the middle of
 * the sends, from 16 to 8192 entries. The receives taken in order, message
 * k lands in the k-th receive posted: every receive must complete exactly
 * once, with its own message, none lost across a swap of rings and none
 * taken twice; ibv_query_srq follows every resize.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "verbs_pair.h"

#define MSGS 4000
#define WINDOW 64
#define FIRST 10 /* receives posted before the traffic */

static uint64_t rbuf[MSGS][2];
static uint32_t sbuf[WINDOW];
static struct ibv_srq *srq;
static struct ibv_mr *rmr;
static int post_errors;
static int stop; /* the main thread gave up */

static int post_one(uint64_t k)
{
	struct ibv_sge sge = {.addr = (uintptr_t)rbuf[k], .length = 16, .lkey = rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = k, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Posts receives FIRST..MSGS-1 in order, waiting whenever the SRQ is full. */
static void *poster(void *arg)
{
	(void)arg;
	for (uint64_t k = FIRST; k < MSGS && !__atomic_load_n(&stop, __ATOMIC_RELAXED);) {
		int err = post_one(k);

		if (!err)
			k++;
		else if (err == ENOMEM)
			sched_yield();
		else {
			post_errors++;
			break;
		}
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int resize(uint32_t max_wr)
{
	struct ibv_srq_attr a = {.max_wr = max_wr};

	return ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
}

static uint32_t srq_size(void)
{
	struct ibv_srq_attr a = {0};

	return ibv_query_srq(srq, &a) ? 0 : a.max_wr;
}

int main(int argc, char **argv)
{
	static unsigned char seen[MSGS];
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_device_attr da;
	struct ibv_srq_attr la;
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = WINDOW, .max_send_sge = 1}};
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *sq, *rq;
	struct ibv_mr *smr;
	struct side a, b;
	pthread_t th;
	uint32_t next = 0, outstanding = 0, got = 0, bad = 0, dup = 0, size = 32;
	uint32_t resizes = 0, resize_fail = 0, wrong_size = 0;
	double deadline;

	if (argc != 2) {
		fprintf(stderr, "usage: srq_resize DEVICE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open("srq_resize", argv[1], &a, &b))
		return 1;
	memset(&da, 0, sizeof(da));
	if (ibv_query_device(ctx, &da))
		check(0, "ibv_query_device");
	check(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
	      "IBV_DEVICE_SRQ_RESIZE advertised (max_srq_wr %d)", da.max_srq_wr);
	srq = ibv_create_srq(pd, &sa);
	rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	scq = ibv_create_cq(ctx, WINDOW, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, MSGS, NULL, NULL, 0);
	qa.send_cq = qa.recv_cq = scq;
	sq = scq ? ibv_create_qp(pd, &qa) : NULL;
	qa.send_cq = qa.recv_cq = rcq;
	qa.srq = srq;
	rq = srq && rcq ? ibv_create_qp(pd, &qa) : NULL;
	check(srq && rmr && smr && sq && rq, "set-up: %s", rq && sq ? "ok" : strerror(errno));
	if (!rq || !sq || !smr || !rmr)
		return 1;
	check(!qp_to_rtr(sq, rq->qp_num) && !qp_to_rtr(rq, sq->qp_num) && !qp_to_rts(sq) &&
		  !qp_to_rts(rq),
	      "connected");

	/* Misuse: EINVAL, and the SRQ stays as it was. */
	for (uint64_t k = 0; k < FIRST; k++)
		check(!post_one(k), "post receive %llu", (unsigned long long)k);
	check(resize(0) == EINVAL, "resize to 0: EINVAL");
	check(resize((uint32_t)da.max_srq_wr + 1) == EINVAL, "resize above max_srq_wr: EINVAL");
	check(resize(FIRST - 1) == EINVAL, "resize below the %d receives posted: EINVAL", FIRST);
	la.srq_limit = 12;
	check(!ibv_modify_srq(srq, &la, IBV_SRQ_LIMIT), "arm the limit at 12");
	check(resize(11) == EINVAL, "resize below the armed limit: EINVAL");
	la.srq_limit = 0;
	check(!ibv_modify_srq(srq, &la, IBV_SRQ_LIMIT), "disarm the limit");
	check(srq_size() == 16, "size still 16 (%u)", srq_size());
	check(!resize(FIRST), "resize to exactly what is posted (%d)", FIRST);
	check(srq_size() == 16, "size %u (rounded up to a power of two)", srq_size());
	check(!resize(size), "resize to %u", size);
	check(srq_size() == size, "ibv_query_srq: %u", srq_size());

	if (pthread_create(&th, NULL, poster, NULL)) {
		check(0, "pthread_create");
		return 1;
	}
	deadline = now() + 60;
	while (got < MSGS && now() < deadline) {
		struct ibv_wc wc[16];
		int n;

		while (outstanding < WINDOW && next < MSGS) {
			uint32_t *p = &sbuf[next % WINDOW];
			struct ibv_sge sge = {.addr = (uintptr_t)p, .length = 4, .lkey = smr->lkey};
			struct ibv_send_wr wr = {.wr_id = next,
						 .sg_list = &sge,
						 .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED},
					   *bw;

			*p = next;
			if (ibv_post_send(sq, &wr, &bw))
				break;
			next++;
			outstanding++;
			/* Grow while sends are in flight and the poster posts. */
			if (next % (MSGS / 10) == 0 && size < 8192) {
				size *= 2;
				resizes++;
				if (resize(size))
					resize_fail++;
				else if (srq_size() != size)
					wrong_size++;
			}
		}
		n = ibv_poll_cq(scq, 16, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				bad++;
			outstanding--;
		}
		n = ibv_poll_cq(rcq, 16, wc);
		for (int i = 0; i < n; i++) {
			uint64_t k = wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS || k >= MSGS || wc[i].byte_len != 4 ||
			    (uint32_t)rbuf[k][0] != k) {
				bad++;
				if (bad < 5)
					printf("receive wr_id %llu: %s, %u bytes, message %u\n",
					       (unsigned long long)k,
					       ibv_wc_status_str(wc[i].status), wc[i].byte_len,
					       k < MSGS ? (uint32_t)rbuf[k][0] : 0);
			}
			if (k < MSGS && seen[k]++)
				dup++;
			got++;
		}
		if (bad)
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	check(!post_errors, "the poster thread posted every receive");
	check(resizes == 8 && !resize_fail && !wrong_size,
	      "%u resizes under traffic to 8192, %u failed, %u reported a wrong size", resizes,
	      resize_fail, wrong_size);
	check(got == MSGS && !bad && !dup,
	      "%u of %d messages received, each in its own receive: %u wrong, %u twice", got, MSGS,
	      bad, dup);
	{
		struct ibv_wc wc;
		int extra = 0;

		for (int i = 0; i < 200000; i++)
			extra += ibv_poll_cq(rcq, 1, &wc) > 0;
		check(!extra, "no receive completes twice (%d more)", extra);
	}
	check(srq_size() == 8192, "ibv_query_srq: %u", srq_size());
	check(!resize(64) && srq_size() == 64, "shrink the empty SRQ to 64");
	/* The resized ring is the one in use: one more message through it. */
	check(!post_one(0), "post one more receive");
	{
		struct ibv_sge sge = {.addr = (uintptr_t)sbuf, .length = 4, .lkey = smr->lkey};
		struct ibv_send_wr wr = {.wr_id = 1,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bw;
		struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
		int n = 0;

		sbuf[0] = 0xabcd;
		check(!ibv_post_send(sq, &wr, &bw), "one more SEND");
		for (long i = 0; i < 50000000 && !n; i++)
			n = ibv_poll_cq(rcq, 1, &wc);
		check(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 0 &&
			  (uint32_t)rbuf[0][0] == 0xabcd,
		      "it lands after the shrink (%s)", ibv_wc_status_str(wc.status));
	}
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
