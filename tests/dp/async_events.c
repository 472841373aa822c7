/* SPDX-License-Identifier: MIT */
/*
 * async_events: an ordinary verbs program checking QP asynchronous events
 * with real traffic between two RC QPs of one device:
 * IBV_EVENT_COMM_EST once, for the QP in RTR that receives its first
 * packet (not for the requester in RTS, not again for later packets), and
 * IBV_EVENT_SQ_DRAINED once per move to SQD with en_sqd_async_notify,
 * raised after the completions of the SENDs posted before the move, with
 * sq_draining clear once it is raised; none without en_sqd_async_notify.
 * Run it under the shim:
 *
 *   async_events DEVICE
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_pair.h"

static int set_sqd(struct ibv_qp *qp, int notify)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_SQD, .en_sqd_async_notify = (uint8_t)notify};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
}

static int set_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	void *who = NULL;
	struct ibv_wc wc[4];
	struct side a, b;
	int n, t;

	if (argc != 2) {
		fprintf(stderr, "usage: async_events DEVICE\n");
		return 2;
	}
	if (pair_open("async_events", argv[1], &a, &b))
		return 1;
	/* a: RTS; b: RTR only, as a passive side before its RTU. */
	if (qp_to_rtr(a.qp, b.qp->qp_num) || qp_to_rts(a.qp) || qp_to_rtr(b.qp, a.qp->qp_num)) {
		fprintf(stderr, "async_events: connecting the QPs failed: %s\n", strerror(errno));
		return 1;
	}

	/* IBV_EVENT_COMM_EST (IBA 11.6.3.1). */
	check(next_async_event(100, &who) < 0, "no async event before any traffic");
	for (int i = 0; i < 3; i++)
		post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "SEND to a QP in RTR completes");
	t = next_async_event(5000, &who);
	check(t == IBV_EVENT_COMM_EST && who == b.qp,
	      "IBV_EVENT_COMM_EST for the receiver in RTR (event %d)", t);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 2) == 2 && poll_n(&a, 2) == 2, "two more SENDs complete");
	t = next_async_event(200, &who);
	check(t < 0, "COMM_EST only once (next event %d)", t);
	check(qp_to_rts(b.qp) == 0, "receiver RTR -> RTS");

	/* IBV_EVENT_SQ_DRAINED (IBA 11.6.3.1, 10.3.1.2). */
	for (int i = 0; i < 3; i++)
		post_recv(&b);
	for (int i = 0; i < 3; i++)
		post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(set_sqd(a.qp, 1) == 0, "RTS -> SQD with en_sqd_async_notify, 3 SENDs posted");
	t = next_async_event(5000, &who);
	check(t == IBV_EVENT_SQ_DRAINED && who == a.qp, "IBV_EVENT_SQ_DRAINED (event %d)", t);
	/* The completions come before the event. */
	n = ibv_poll_cq(a.cq, 4, wc);
	check(n == 3, "the 3 send completions are there when it arrives (%d)", n);
	check(poll_n(&b, 3) == 3, "3 receive completions");
	memset(&qa, 0xff, sizeof(qa));
	n = ibv_query_qp(a.qp, &qa, IBV_QP_STATE | IBV_QP_CUR_STATE, &ia);
	check(n == 0 && qa.qp_state == IBV_QPS_SQD && !qa.sq_draining,
	      "query: SQD, sq_draining %d (ret %d)", qa.sq_draining, n);
	t = next_async_event(200, &who);
	check(t < 0, "SQ_DRAINED only once (next event %d)", t);
	check(set_rts(a.qp) == 0, "SQD -> RTS");
	/* Without en_sqd_async_notify: no event. */
	check(set_sqd(a.qp, 0) == 0, "RTS -> SQD without en_sqd_async_notify");
	t = next_async_event(200, &who);
	check(t < 0, "no SQ_DRAINED without en_sqd_async_notify (event %d)", t);
	check(set_rts(a.qp) == 0, "SQD -> RTS");
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "traffic again after SQD");

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	printf("%s: async_events, %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
