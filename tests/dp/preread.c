/* SPDX-License-Identifier: MIT */
/*
 * preread DEVICE: small sends whose payload the shim copies into the WQE at
 * the post (verbs-shim/qp.c preread, emu/daemon/dp/datapath.c dp_preread),
 * between two RC QPs of one RNIC, in plain libibverbs:
 *
 *  - 200 SENDs and 200 RDMA WRITEs of 1-16 bytes without IBV_SEND_INLINE,
 *    from changing bytes of a registered buffer, arrive byte for byte
 *    (the script checks the daemon's sq_preread counter counted them), and
 *    so do 200 of each with IBV_SEND_INLINE (the daemon's inline path,
 *    which the snapshot must leave alone);
 *  - the checks a read would make still decide: an L_Key of an MR of another
 *    PD (in the shim's table, refused by the daemon) ends in
 *    IBV_WC_LOC_PROT_ERR, as do an SGE one byte past the end of its MR and
 *    the L_Key of an MR deregistered before the post; nothing arrives.
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs_pair.h"

#define ROUNDS 200

static struct ibv_qp *new_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .send_cq = cq,
	    .recv_cq = cq,
	    .cap = {.max_send_wr = 16,
		    .max_recv_wr = 16,
		    .max_send_sge = 1,
		    .max_recv_sge = 1,
		    .max_inline_data = 64},
	};

	return ibv_create_qp(pd, &ia);
}

static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t addr, uint32_t len,
		    uint32_t lkey, unsigned flags)
{
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 7,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED | flags},
			   *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
	wr.wr.rdma.rkey = mr->rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* ROUNDS messages of op from side a's QP to side b's, each of a new length
 * and new bytes, checked. */
static void good(struct side *a, struct side *b, enum ibv_wr_opcode op, unsigned flags,
		 const char *name)
{
	int bad_data = 0, bad_wc = 0;

	for (int i = 0; i < ROUNDS; i++) {
		uint32_t len = 1 + (uint32_t)i % 16;
		char *dst = op == IBV_WR_SEND ? buf + 4096 : buf + 2048;
		struct ibv_sge rsge = {
		    .addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
		struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rsge, .num_sge = 1}, *rbad;
		struct ibv_wc wc;

		for (uint32_t k = 0; k < len; k++)
			buf[k] = (char)(i * 31 + k * 7 + 1);
		memset(dst, 0, 16);
		if (op == IBV_WR_SEND && ibv_post_recv(b->qp, &rwr, &rbad)) {
			check(0, "%s %d: post_recv: %s", name, i, strerror(errno));
			return;
		}
		if (post_one(a->qp, op, (uintptr_t)buf, len, mr->lkey, flags)) {
			check(0, "%s %d: post: %s", name, i, strerror(errno));
			return;
		}
		wc = wait_wc(a->cq);
		bad_wc += wc.status != IBV_WC_SUCCESS;
		if (op == IBV_WR_SEND) {
			wc = wait_wc(b->cq);
			bad_wc += wc.status != IBV_WC_SUCCESS || wc.byte_len != len;
		}
		bad_data += memcmp(dst, buf, len) != 0;
	}
	check(!bad_data && !bad_wc, "%d %ss of 1-16 bytes: %d bad payloads, %d bad completions",
	      ROUNDS, name, bad_data, bad_wc);
}

/* A SEND that must fail with IBV_WC_LOC_PROT_ERR on a fresh pair of QPs. */
static void refused(struct side *a, const char *what, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct ibv_qp *x = new_qp(a->cq), *y = new_qp(a->cq);
	struct ibv_sge rsge = {.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 9, .sg_list = &rsge, .num_sge = 1}, *rbad;
	struct ibv_wc wc;

	memset(buf + 4096, 0, 64);
	if (!x || !y || qp_connect(x, y) || ibv_post_recv(y, &rwr, &rbad) ||
	    post_one(x, IBV_WR_SEND, addr, len, lkey, 0)) {
		check(0, "%s: setup: %s", what, strerror(errno));
		return;
	}
	wc = wait_wc(a->cq);
	check(wc.qp_num == x->qp_num && wc.status == IBV_WC_LOC_PROT_ERR,
	      "%s: %s on the sender's QP, nothing received (%s)", what,
	      ibv_wc_status_str(wc.status), buf[4096] ? "but bytes arrived" : "none");
	ibv_destroy_qp(x);
	ibv_destroy_qp(y);
	/* The receive flushed with the QP's destruction: drain it. */
	while (ibv_poll_cq(a->cq, 1, &wc) > 0)
		;
}

int main(int argc, char **argv)
{
	static char other[4096], small[64], gone[64];
	struct side a, b;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2, *mr3, *mr4;
	uint32_t gone_lkey;

	if (argc != 2) {
		fprintf(stderr, "usage: preread DEVICE\n");
		return 2;
	}
	if (pair_open("preread", argv[1], &a, &b) || qp_connect(a.qp, b.qp))
		return 1;
	good(&a, &b, IBV_WR_SEND, 0, "SEND");
	good(&a, &b, IBV_WR_RDMA_WRITE, 0, "RDMA WRITE");
	{
		/* The same with IBV_SEND_INLINE, on QPs with inline room. */
		struct side c = a, d = b;

		c.qp = new_qp(a.cq);
		d.qp = new_qp(b.cq);
		if (!c.qp || !d.qp || qp_connect(c.qp, d.qp)) {
			check(0, "inline QPs: %s", strerror(errno));
			return 1;
		}
		good(&c, &d, IBV_WR_SEND, IBV_SEND_INLINE, "inline SEND");
		good(&c, &d, IBV_WR_RDMA_WRITE, IBV_SEND_INLINE, "inline RDMA WRITE");
	}

	pd2 = ibv_alloc_pd(ctx);
	mr2 = pd2 ? ibv_reg_mr(pd2, other, sizeof(other), IBV_ACCESS_LOCAL_WRITE) : NULL;
	mr3 = ibv_reg_mr(pd, small, sizeof(small), IBV_ACCESS_LOCAL_WRITE);
	mr4 = ibv_reg_mr(pd, gone, sizeof(gone), IBV_ACCESS_LOCAL_WRITE);
	if (!mr2 || !mr3 || !mr4) {
		check(0, "registering the MRs: %s", strerror(errno));
		return 1;
	}
	memset(other, 0x5a, sizeof(other));
	memset(small, 0x5b, sizeof(small));
	gone_lkey = mr4->lkey;
	if (ibv_dereg_mr(mr4)) {
		check(0, "ibv_dereg_mr: %s", strerror(errno));
		return 1;
	}
	refused(&a, "8 bytes under the L_Key of an MR of another PD", (uintptr_t)other, 8,
		mr2->lkey);
	refused(&a, "8 bytes, one past the end of the MR", (uintptr_t)small + 57, 8, mr3->lkey);
	refused(&a, "8 bytes under the L_Key of a deregistered MR", (uintptr_t)gone, 8, gone_lkey);
	printf("preread: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
