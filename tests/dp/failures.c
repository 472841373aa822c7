/* SPDX-License-Identifier: MIT */
/*
 * failures: an ordinary verbs program checking that failures are reported
 * the way a user of an RNIC can understand them (issue 12, item 6), with
 * real traffic between RC QPs of one device. Run it under the shim:
 *
 *   failures DEVICE cq_overrun    a CQ that overruns raises IBV_EVENT_CQ_ERR
 *                                 and moves every QP completing into it to
 *                                 Error (IBV_EVENT_QP_FATAL); the CQEs written
 *                                 before the overrun stay; a QP on another CQ
 *                                 keeps working
 *   failures DEVICE retry_exc     a WRITE to a QP that does not exist ends in
 *                                 IBV_WC_RETRY_EXC_ERR and IBV_EVENT_QP_FATAL (the
 *                                 script checks the daemon's log names the QP
 *                                 and the status)
 *   failures DEVICE mtu           a path MTU above the port's active MTU is
 *                                 clamped to it at ibv_modify_qp (query_qp says
 *                                 so) and messages of several packets arrive;
 *                                 one at or below the active MTU is kept
 *   failures DEVICE async_flood N raises N async events (SQ_DRAINED, one per
 *                                 RTS -> SQD -> RTS) without reading them, then
 *                                 reads what its event pipe kept and prints
 *                                 "async_flood: raised N, read R" (the script
 *                                 checks the daemon counted N - R as lost and
 *                                 logged only a few lines about it)
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_pair.h"

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

static struct ibv_qp *make_qp(struct ibv_cq *scq, struct ibv_cq *rcq, int depth)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .send_cq = scq,
	    .recv_cq = rcq,
	    .cap = {.max_send_wr = (uint32_t)depth,
		    .max_recv_wr = (uint32_t)depth,
		    .max_send_sge = 1,
		    .max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &ia);
}

/* One signaled RDMA WRITE of len bytes from buf to buf + 4096. */
static int post_write(struct ibv_qp *qp, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static int connect_pair(struct ibv_qp *x, struct ibv_qp *y, enum ibv_mtu mtu)
{
	return qp_to_rtr_mtu(x, y->qp_num, mtu) || qp_to_rts(x) ||
	       qp_to_rtr_mtu(y, x->qp_num, mtu) || qp_to_rts(y);
}

static int cq_overrun(struct side *a, struct side *b)
{
	struct ibv_cq *small = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *c, *c2, *d, *d2;
	int seen_cq_err = 0, fatal_c = 0, fatal_c2 = 0, got = 0, extra = 0, t;
	struct ibv_wc wc[16];
	void *who;

	if (!small) {
		check(0, "ibv_create_cq(4): %s", strerror(errno));
		return 1;
	}
	/* c and c2 complete into the small CQ; d and d2, their peers, into b's. */
	c = make_qp(small, small, 32);
	c2 = make_qp(small, small, 32);
	d = make_qp(b->cq, b->cq, 32);
	d2 = make_qp(b->cq, b->cq, 32);
	if (!c || !c2 || !d || !d2 || connect_pair(c, d, IBV_MTU_1024) ||
	    connect_pair(c2, d2, IBV_MTU_1024) || connect_pair(a->qp, b->qp, IBV_MTU_1024)) {
		check(0, "setting up the QPs: %s", strerror(errno));
		return 1;
	}
	/* Twice as many signaled WRITEs as the CQ holds, none polled. */
	for (int i = 0; i < 2 * small->cqe; i++)
		if (post_write(c, 100 + (uint64_t)i, 64))
			check(0, "post_write %d: %s", i, strerror(errno));
	for (int i = 0; i < 6; i++) {
		t = next_async_event(5000, &who);
		if (t < 0)
			break;
		if (t == IBV_EVENT_CQ_ERR && who == small)
			seen_cq_err++;
		else if (t == IBV_EVENT_QP_FATAL && who == c)
			fatal_c++;
		else if (t == IBV_EVENT_QP_FATAL && who == c2)
			fatal_c2++;
		else
			check(0, "unexpected async event %d (%s)", t,
			      ibv_event_type_str((enum ibv_event_type)t));
		if (seen_cq_err && fatal_c && fatal_c2)
			break;
	}
	check(seen_cq_err == 1, "IBV_EVENT_CQ_ERR once for the CQ that overran (%d)", seen_cq_err);
	check(fatal_c == 1, "IBV_EVENT_QP_FATAL for the QP whose completions were lost (%d)",
	      fatal_c);
	check(fatal_c2 == 1, "IBV_EVENT_QP_FATAL for the idle QP on the same CQ (%d)", fatal_c2);
	check(qp_state(c) == IBV_QPS_ERR && qp_state(c2) == IBV_QPS_ERR,
	      "both QPs of the CQ are in IBV_QPS_ERR (%d, %d)", qp_state(c), qp_state(c2));
	/* The CQEs written before the overrun are still there, in order. */
	for (int tries = 0; tries < 1000 && got < small->cqe; tries++) {
		int n = ibv_poll_cq(small, 16, wc + got);

		if (n > 0)
			got += n;
		else
			usleep(1000);
	}
	for (int i = 0; i < got; i++)
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != 100 + (uint64_t)i)
			check(0, "CQE %d: status %s wr_id %llu", i, ibv_wc_status_str(wc[i].status),
			      (unsigned long long)wc[i].wr_id);
	usleep(100000);
	extra = ibv_poll_cq(small, 16, wc);
	check(got == small->cqe && extra == 0,
	      "the %d CQEs written before the overrun are kept, nothing after (%d, then %d)",
	      small->cqe, got, extra);
	check(next_async_event(200, &who) < 0, "no further async event");
	/* A QP on another CQ is not affected. */
	post_recv(b);
	post_send(a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(b, 1) == 1 && poll_n(a, 1) == 1 && qp_state(a->qp) == IBV_QPS_RTS,
	      "a QP on another CQ keeps working");
	ibv_destroy_qp(c);
	ibv_destroy_qp(c2);
	ibv_destroy_qp(d);
	ibv_destroy_qp(d2);
	check(ibv_destroy_cq(small) == 0, "the CQ in error can be destroyed");
	return 0;
}

static int mtu(struct side *a, struct side *b)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 4096, .lkey = mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 7, .sg_list = NULL, .num_sge = 1}, *rbad;
	struct ibv_send_wr wr = {.wr_id = 8,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_sge rsge = {.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
	struct ibv_wc wc;
	struct ibv_qp *e, *f;
	int n = 0;

	if (ibv_query_port(ctx, 1, &pa)) {
		check(0, "ibv_query_port: %s", strerror(errno));
		return 1;
	}
	if (pa.active_mtu >= IBV_MTU_4096) {
		check(0, "active MTU %d: start the daemon with --mtu below 4096", pa.active_mtu);
		return 1;
	}
	/* Above the active MTU: accepted, clamped to it (both sides). */
	check(connect_pair(a->qp, b->qp, IBV_MTU_4096) == 0,
	      "ibv_modify_qp with path MTU 4096 > active MTU %d succeeds", 128 << pa.active_mtu);
	check(ibv_query_qp(a->qp, &qa, IBV_QP_PATH_MTU, &ia) == 0 && qa.path_mtu == pa.active_mtu,
	      "ibv_query_qp reports the path MTU clamped to the active MTU (%d)",
	      128 << qa.path_mtu);
	/* A message of several packets at that MTU arrives whole. */
	for (int i = 0; i < 4096; i++)
		buf[i] = (char)(i * 7 + 1);
	memset(buf + 4096, 0, 4096);
	rwr.sg_list = &rsge;
	if (ibv_post_recv(b->qp, &rwr, &rbad) || ibv_post_send(a->qp, &wr, &bad))
		check(0, "posting: %s", strerror(errno));
	check(poll_n(a, 1) == 1, "the 4096-byte SEND completes");
	for (long i = 0; i < 50000000 && n == 0; i++)
		n = ibv_poll_cq(b->cq, 1, &wc);
	check(n == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 4096 &&
		  !memcmp(buf, buf + 4096, 4096),
	      "and is received whole (%u bytes)", n == 1 ? wc.byte_len : 0);
	/* At or below the active MTU: kept as asked. */
	e = make_qp(a->cq, a->cq, 4);
	f = make_qp(b->cq, b->cq, 4);
	check(e && f && connect_pair(e, f, IBV_MTU_256) == 0 &&
		  ibv_query_qp(e, &qa, IBV_QP_PATH_MTU, &ia) == 0 && qa.path_mtu == IBV_MTU_256,
	      "a path MTU below the active MTU is kept (256)");
	if (e)
		ibv_destroy_qp(e);
	if (f)
		ibv_destroy_qp(f);
	return 0;
}

static int retry_exc(struct side *a)
{
	struct ibv_wc wc;
	void *who = NULL;
	int n = 0, t;

	/* A peer QP that does not exist: every packet is dropped there. */
	if (qp_to_rtr(a->qp, 0xfffff0) || qp_to_rts(a->qp)) {
		check(0, "connecting: %s", strerror(errno));
		return 1;
	}
	if (post_write(a->qp, 42, 64))
		check(0, "post_write: %s", strerror(errno));
	for (long i = 0; i < 2000 && n == 0; i++) {
		n = ibv_poll_cq(a->cq, 1, &wc);
		if (!n)
			usleep(5000);
	}
	check(n == 1 && wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 42,
	      "the WRITE to a QP that does not exist ends in IBV_WC_RETRY_EXC_ERR (%s)",
	      n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	t = next_async_event(5000, &who);
	check(t == IBV_EVENT_QP_FATAL && who == a->qp, "IBV_EVENT_QP_FATAL for the QP (%d)", t);
	return 0;
}

static int set_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = {.qp_state = s, .en_sqd_async_notify = 1};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | (s == IBV_QPS_SQD ? IBV_QP_EN_SQD_ASYNC_NOTIFY : 0));
}

static int async_flood(struct side *a, struct side *b, int count)
{
	int fl, read_n = 0, other = 0, cap;
	void *who;

	if (connect_pair(a->qp, b->qp, IBV_MTU_1024)) {
		check(0, "connecting: %s", strerror(errno));
		return 1;
	}
	for (int i = 0; i < count; i++)
		if (set_state(a->qp, IBV_QPS_SQD) || set_state(a->qp, IBV_QPS_RTS)) {
			check(0, "cycle %d through SQD: %s", i, strerror(errno));
			return 1;
		}
	cap = fcntl(ctx->async_fd, F_GETPIPE_SZ);
	fl = fcntl(ctx->async_fd, F_GETFL);
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	for (;;) {
		int t = next_async_event(0, &who);

		if (t < 0)
			break;
		if (t == IBV_EVENT_SQ_DRAINED && who == a->qp)
			read_n++;
		else
			other++;
	}
	fcntl(ctx->async_fd, F_SETFL, fl);
	check(other == 0, "every event read is the QP's IBV_EVENT_SQ_DRAINED (%d others)", other);
	check(read_n > 0 && read_n <= count, "the pipe kept %d of %d events (%d bytes)", read_n,
	      count, cap);
	printf("async_flood: raised %d, read %d\n", count, read_n);
	return 0;
}

int main(int argc, char **argv)
{
	struct side a, b;
	int rc = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: failures DEVICE cq_overrun|retry_exc|mtu|async_flood N\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pair_open("failures", argv[1], &a, &b))
		return 1;
	if (!strcmp(argv[2], "cq_overrun"))
		rc = cq_overrun(&a, &b);
	else if (!strcmp(argv[2], "retry_exc"))
		rc = retry_exc(&a);
	else if (!strcmp(argv[2], "mtu"))
		rc = mtu(&a, &b);
	else if (!strcmp(argv[2], "async_flood") && argc == 4)
		rc = async_flood(&a, &b, atoi(argv[3]));
	else
		fprintf(stderr, "failures: unknown case %s\n", argv[2]);
	return rc || failures ? 1 : 0;
}
