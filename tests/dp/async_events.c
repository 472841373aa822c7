/* SPDX-License-Identifier: MIT */
/*
 * async_events: an ordinary verbs program checking QP asynchronous events
 * with real traffic between two RC QPs of one device:
 * IBV_EVENT_COMM_EST once, for the QP in RTR that receives its first
 * packet (not for the requester in RTS, not again for later packets), and
 * IBV_EVENT_SQ_DRAINED once per move to SQD with en_sqd_async_notify,
 * raised after the completions of the SENDs posted before the move, with
 * sq_draining clear once it is raised; none without en_sqd_async_notify;
 * and, for a QP on an SRQ that the transport moves to Error (a WRITE with a
 * bad R_Key arrives), IBV_EVENT_QP_FATAL and then
 * IBV_EVENT_QP_LAST_WQE_REACHED once (IBA 11.6.3), none of the latter for
 * the requester, which has no SRQ. Run it under the shim:
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

	/* IBV_EVENT_QP_LAST_WQE_REACHED: a responder on an SRQ that the transport moves to Error.
	 */
	{
		struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
		struct ibv_srq *srq = ibv_create_srq(pd, &sa);
		struct ibv_qp_init_attr ra = {.qp_type = IBV_QPT_RC,
					      .send_cq = b.cq,
					      .recv_cq = b.cq,
					      .srq = srq,
					      .cap = {.max_send_wr = 4, .max_send_sge = 1}};
		struct ibv_qp *r = srq ? ibv_create_qp(pd, &ra) : NULL;
		struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
		struct ibv_send_wr wr = {.wr_id = 9,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;
		int fatal_r = 0, fatal_a = 0, last_r = 0, last_a = 0, order_ok = 1;

		check(r != NULL, "an RC QP on an SRQ: %s", r ? "created" : strerror(errno));
		if (!r)
			return 1;
		/* a, reset, now talks to r. */
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_RESET;
		check(!ibv_modify_qp(a.qp, &qa, IBV_QP_STATE) && !qp_to_rtr(a.qp, r->qp_num) &&
			  !qp_to_rts(a.qp) && !qp_to_rtr(r, a.qp->qp_num) && !qp_to_rts(r),
		      "the requester connected to it");
		while (next_async_event(100, &who) >= 0)
			; /* COMM_EST and the like */
		wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
		wr.wr.rdma.rkey = mr->rkey ^ 0x5a00;
		check(!ibv_post_send(a.qp, &wr, &bad), "a WRITE with a bad R_Key posted");
		n = 0;
		for (long i = 0; i < 50000000 && n == 0; i++)
			n = ibv_poll_cq(a.cq, 1, wc);
		check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR, "it completes with %s",
		      n == 1 ? ibv_wc_status_str(wc[0].status) : "nothing");
		while ((t = next_async_event(2000, &who)) >= 0) {
			if (t == IBV_EVENT_QP_FATAL && who == r)
				fatal_r++;
			else if (t == IBV_EVENT_QP_FATAL && who == a.qp)
				fatal_a++;
			else if (t == IBV_EVENT_QP_LAST_WQE_REACHED && who == r) {
				last_r++;
				order_ok = fatal_r == 1;
			} else if (t == IBV_EVENT_QP_LAST_WQE_REACHED) {
				last_a++;
			}
			if (fatal_r && fatal_a && last_r)
				break;
		}
		t = next_async_event(200, &who);
		check(fatal_r == 1 && last_r == 1 && order_ok && t < 0,
		      "the responder on the SRQ: IBV_EVENT_QP_FATAL then "
		      "IBV_EVENT_QP_LAST_WQE_REACHED, once each (%d, %d; next %d)",
		      fatal_r, last_r, t);
		check(fatal_a == 1 && !last_a, "the requester: IBV_EVENT_QP_FATAL only (%d, %d)",
		      fatal_a, last_a);
		ibv_destroy_qp(r);
		ibv_destroy_srq(srq);
	}

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	printf("%s: async_events, %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
