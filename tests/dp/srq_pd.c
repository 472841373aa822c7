// SPDX-License-Identifier: MIT
/*
 * srq_pd DEVICE: the receive WQEs of an SRQ belong to the SRQ's PD (IBA
 * 10.2.9.1), whatever PD the QP that takes them is in. A QP in PD 1 with
 * an SRQ of PD 2: a SEND lands in a buffer registered in PD 2; a receive
 * WQE whose buffer is registered only in PD 1 references no memory valid
 * for it (the receive completes with IBV_WC_LOC_PROT_ERR, IBA 11.6.2's
 * local protection error, as mlx5 reports it; Linux rxe says local QP
 * operation error; the sender sees a remote error), through the shim on a
 * real daemon.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_pair.h"

static void srq_recv(struct ibv_srq *srq, struct ibv_mr *m, void *addr, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = 64, .lkey = m->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;

	check(!ibv_post_srq_recv(srq, &wr, &bad), "post an SRQ receive (wr_id %llu)",
	      (unsigned long long)wr_id);
}

int main(int argc, char **argv)
{
	static char rbuf[4096];
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_send_sge = 1}};
	struct ibv_pd *pd2;
	struct ibv_srq *srq;
	struct ibv_mr *mr2, *mr1;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	struct side a, b;

	if (argc != 2) {
		fprintf(stderr, "usage: srq_pd DEVICE\n");
		return 2;
	}
	if (pair_open("srq_pd", argv[1], &a, &b))
		return 1;
	pd2 = ibv_alloc_pd(ctx);
	srq = pd2 ? ibv_create_srq(pd2, &sa) : NULL;
	mr2 = pd2 ? ibv_reg_mr(pd2, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr1 = ibv_reg_mr(pd, rbuf + 2048, 2048, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = qa.recv_cq = b.cq;
	qa.srq = srq;
	qp = srq ? ibv_create_qp(pd, &qa) : NULL; /* the QP in PD 1, its SRQ in PD 2 */
	check(srq && mr2 && mr1 && qp, "SRQ in PD 2, QP in PD 1: %s", qp ? "ok" : strerror(errno));
	if (!qp)
		return 1;
	check(!qp_to_rtr(a.qp, qp->qp_num) && !qp_to_rtr(qp, a.qp->qp_num) && !qp_to_rts(a.qp) &&
		      !qp_to_rts(qp),
	      "connected");
	srq_recv(srq, mr2, rbuf, 1);
	memset(buf, 0x42, 64);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	wc = wait_wc(a.cq);
	check(wc.status == IBV_WC_SUCCESS, "SEND into a buffer of the SRQ's PD: %s",
	      ibv_wc_status_str(wc.status));
	wc = wait_wc(b.cq);
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && rbuf[0] == 0x42,
	      "its receive completes (%s, wr_id %llu) with the data", ibv_wc_status_str(wc.status),
	      (unsigned long long)wc.wr_id);
	srq_recv(srq, mr1, rbuf + 2048, 2);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	wc = wait_wc(b.cq);
	check(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 2,
	      "a receive WQE with a key of the QP's PD, not the SRQ's: %s (want %s)",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_LOC_PROT_ERR));
	wc = wait_wc(a.cq);
	check(wc.status != IBV_WC_SUCCESS, "the sender sees an error: %s",
	      ibv_wc_status_str(wc.status));
	printf("%s: %d failures\n", argv[0], failures);
	return failures ? 1 : 0;
}
