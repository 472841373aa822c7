/* SPDX-License-Identifier: MIT */
/*
 * mcast: an ordinary verbs program (linked against rdma-core's libibverbs)
 * that checks UD multicast between two RNICs: a sender QP on DEV_A sends to
 * the group GID (::ffff:GROUP for an IPv4 group, the address itself for an
 * IPv6 one; QP 0xFFFFFF); three receiver QPs attached to the group, one on
 * DEV_A and two on DEV_B, must each get every message exactly once with its
 * data, source QP and GRH (the IPv4 or IPv6 header naming the group); the
 * sender itself (not attached) and a QP attached with another
 * Q_Key get nothing; after a detach, the detached QP gets nothing more while
 * the others still do; once the sender is attached too, it gets its own
 * message back, as from hardware. The misuse the kernel refuses is refused the same
 * way: attaching an RC QP or a unicast GID (EINVAL), detaching what is not
 * attached (EINVAL), more QPs on one group than max_mcast_qp_attach (ENOMEM).
 * It knows nothing about uroce: run it under the shim.
 *
 *   mcast DEV_A DEV_B GROUP      (an IPv4 or IPv6 multicast address)
 *
 * Exit status 0 when every check passes, 1 otherwise; one line per check.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs_test.h"

#define QKEY 0x11111111u
#define OTHER_QKEY 0x22222222u
#define MSG_BYTES 64
#define GRH_BYTES 40
#define SLOT_BYTES (GRH_BYTES + MSG_BYTES)
#define NMSG 20
#define NMSG_AFTER 10
#define NSEQ (NMSG + NMSG_AFTER + 1) /* and one to the attached sender */
#define NRECV 64

struct ud {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;  /* receives */
	struct ibv_cq *scq; /* sends */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	unsigned seen[NSEQ];
	unsigned got;
	unsigned bad;
};

static int fails;

static void expect(int ok, const char *what)
{
	printf("%-70s %s\n", what, ok ? "ok" : "FAIL");
	if (!ok)
		fails++;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int post_recvs(struct ud *u, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge sge = {.addr =
					  (uintptr_t)u->buf + (uint64_t)(i % NRECV) * SLOT_BYTES,
				      .length = SLOT_BYTES,
				      .lkey = u->mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i % NRECV, .sg_list = &sge, .num_sge = 1}, *bad;

		if (ibv_post_recv(u->qp, &wr, &bad))
			return -1;
	}
	return 0;
}

static int ud_init(struct ud *u, struct ibv_context *ctx, enum ibv_qp_type type, uint32_t qkey)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = type,
	    .cap = {.max_send_wr = 64, .max_recv_wr = NRECV, .max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = qkey};

	memset(u, 0, sizeof(*u));
	u->ctx = ctx;
	u->pd = ibv_alloc_pd(ctx);
	u->buf = calloc(NRECV + 1, SLOT_BYTES);
	if (!u->pd || !u->buf)
		return -1;
	u->mr = ibv_reg_mr(u->pd, u->buf, (NRECV + 1) * SLOT_BYTES, IBV_ACCESS_LOCAL_WRITE);
	u->cq = ibv_create_cq(ctx, 2 * NRECV, NULL, NULL, 0);
	u->scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!u->mr || !u->cq || !u->scq)
		return -1;
	ia.send_cq = u->scq;
	ia.recv_cq = u->cq;
	u->qp = ibv_create_qp(u->pd, &ia);
	if (!u->qp)
		return -1;
	if (type != IBV_QPT_UD)
		return 0;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	return post_recvs(u, NRECV);
}

static void ud_fini(struct ud *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	if (u->scq)
		ibv_destroy_cq(u->scq);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	free(u->buf);
}

/* Take the receive completions there are: count each message, check it. */
/* The group as the GRH shows it: IPv4 (4 bytes at 36) or IPv6 (16 at 24);
 * and the completion's sl, the L3 header type as mlx5 reports it (2 IPv4,
 * 1 IPv6; Annex A17.4.5.1 has the completion tell them apart). */
struct group {
	union ibv_gid gid;
	int v4;
};

static int grh_names(const uint8_t *grh, uint8_t sl, const struct group *g)
{
	return g->v4 ? sl == 2 && grh[20] == 0x45 && !memcmp(grh + 36, g->gid.raw + 12, 4)
		     : sl == 1 && (grh[0] >> 4) == 6 && !memcmp(grh + 24, g->gid.raw, 16);
}

static void drain(struct ud *u, uint32_t src_qpn, const struct group *group)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(u->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			const uint8_t *slot = u->buf + wc[i].wr_id * SLOT_BYTES;
			const uint8_t *msg = slot + GRH_BYTES;
			unsigned seq = msg[0];
			int ok = wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RECV &&
				 wc[i].byte_len == SLOT_BYTES && (wc[i].wc_flags & IBV_WC_GRH) &&
				 wc[i].src_qp == src_qpn && seq < NSEQ &&
				 grh_names(slot, wc[i].sl, group);

			for (unsigned b = 1; ok && b < MSG_BYTES; b++)
				ok = msg[b] == (uint8_t)(seq * 7 + b);
			if (ok) {
				u->seen[seq]++;
				u->got++;
			} else {
				u->bad++;
			}
			/* The slot goes back to the RQ. */
			memset((void *)slot, 0, SLOT_BYTES);
			{
				struct ibv_sge sge = {.addr = (uintptr_t)slot,
						      .length = SLOT_BYTES,
						      .lkey = u->mr->lkey};
				struct ibv_recv_wr wr = {.wr_id = wc[i].wr_id,
							 .sg_list = &sge,
							 .num_sge = 1},
						   *bad;

				ibv_post_recv(u->qp, &wr, &bad);
			}
		}
	}
}

static int send_one(struct ud *s, struct ibv_ah *ah, unsigned seq)
{
	uint8_t *msg = s->buf + NRECV * SLOT_BYTES;
	struct ibv_sge sge = {.addr = (uintptr_t)msg, .length = MSG_BYTES, .lkey = s->mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.ud = {.ah = ah, .remote_qpn = 0xffffff, .remote_qkey = QKEY}},
			   *bad;
	struct ibv_wc wc;
	uint64_t t0 = now_ms();
	int n;

	msg[0] = (uint8_t)seq;
	for (unsigned b = 1; b < MSG_BYTES; b++)
		msg[b] = (uint8_t)(seq * 7 + b);
	if (ibv_post_send(s->qp, &wr, &bad))
		return -1;
	/* The send completion (on the send CQ: receives have their own). */
	while ((n = ibv_poll_cq(s->scq, 1, &wc)) == 0 && now_ms() - t0 < 5000)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND)
		return -1;
	return 0;
}

/* Send messages [from, to), one at a time, each once every receiver in rx has it (or 2 s). */
static int send_range(struct ud *s, struct ibv_ah *ah, unsigned from, unsigned to, struct ud **rx,
		      int nrx, const struct group *group)
{
	for (unsigned seq = from; seq < to; seq++) {
		uint64_t t0;
		int all;

		if (send_one(s, ah, seq))
			return -1;
		t0 = now_ms();
		do {
			all = 1;
			for (int r = 0; r < nrx; r++) {
				drain(rx[r], s->qp->qp_num, group);
				all &= rx[r]->seen[seq] > 0;
			}
		} while (!all && now_ms() - t0 < 2000);
	}
	return 0;
}

static int each_once(const struct ud *u, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++)
		if (u->seen[i] != 1)
			return 0;
	return 1;
}

static int none(const struct ud *u, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++)
		if (u->seen[i])
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct ibv_context *ca, *cb;
	struct ud s, b, c, d, e, rc;
	struct ud *all[] = {&b, &c, &d, &e, &s};
	union ibv_gid mgid = {0}, ugid;
	struct group group = {0};
	struct in_addr a4;
	struct ibv_device_attr da;
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	struct ibv_ah *ah;
	char what[128];
	uint64_t t0;
	int ret;

	if (argc == 4 && inet_pton(AF_INET, argv[3], &a4) == 1) {
		group.v4 = 1;
		group.gid.raw[10] = group.gid.raw[11] = 0xff;
		memcpy(&group.gid.raw[12], &a4, 4);
	} else if (argc != 4 || inet_pton(AF_INET6, argv[3], group.gid.raw) != 1) {
		fprintf(stderr,
			"usage: mcast DEV_A DEV_B GROUP (an IPv4 or IPv6 multicast address)\n");
		return 2;
	}
	ca = open_dev(argv[1]);
	cb = open_dev(argv[2]);
	if (!ca || !cb) {
		fprintf(stderr, "cannot open %s and %s\n", argv[1], argv[2]);
		return 1;
	}
	mgid = group.gid;

	expect(!ibv_query_device(ca, &da) && da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
		  da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach,
	      "ibv_query_device: multicast limits advertised");
	snprintf(what, sizeof(what), "  (max_mcast_grp %d, max_mcast_qp_attach %d, total %d)",
		 da.max_mcast_grp, da.max_mcast_qp_attach, da.max_total_mcast_qp_attach);
	puts(what);
	if (ud_init(&s, ca, IBV_QPT_UD, QKEY) || ud_init(&b, ca, IBV_QPT_UD, QKEY) ||
	    ud_init(&c, cb, IBV_QPT_UD, QKEY) || ud_init(&d, cb, IBV_QPT_UD, QKEY) ||
	    ud_init(&e, cb, IBV_QPT_UD, OTHER_QKEY) || ud_init(&rc, ca, IBV_QPT_RC, 0)) {
		fprintf(stderr, "set-up failed: %s\n", strerror(errno));
		return 1;
	}

	/* Misuse, refused as the kernel refuses it. */
	ret = ibv_attach_mcast(rc.qp, &mgid, 0);
	expect(ret == EINVAL, "attach of an RC QP: EINVAL");
	ibv_query_gid(ca, 1, 0, &ugid);
	ret = ibv_attach_mcast(b.qp, &ugid, 0);
	expect(ret == EINVAL, "attach to a unicast GID: EINVAL");
	ret = ibv_detach_mcast(b.qp, &mgid, 0);
	expect(ret == EINVAL, "detach of a QP not attached: EINVAL");

	expect(!ibv_attach_mcast(b.qp, &mgid, 0) && !ibv_attach_mcast(c.qp, &mgid, 0) &&
		  !ibv_attach_mcast(d.qp, &mgid, 0) && !ibv_attach_mcast(e.qp, &mgid, 0),
	      "attach 3 QPs (1 on A, 2 on B) and 1 with another Q_Key (on B)");
	expect(!ibv_attach_mcast(b.qp, &mgid, 0), "attaching again succeeds (one attachment)");

	aa.grh.dgid = mgid;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(s.pd, &aa);
	expect(ah != NULL, "ibv_create_ah to the group GID");
	if (!ah)
		return 1;

	{
		struct ud *rx[] = {&b, &c, &d};

		expect(!send_range(&s, ah, 0, NMSG, rx, 3, &group), "20 multicast SENDs complete");
	}
	/* Late copies (the QPs that should get none) have time to arrive. */
	t0 = now_ms();
	while (now_ms() - t0 < 300)
		for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			drain(all[i], s.qp->qp_num, &group);
	snprintf(what, sizeof(what), "A's attached QP got each of the %d once (%u, %u bad)", NMSG,
		 b.got, b.bad);
	expect(each_once(&b, 0, NMSG) && !b.bad, what);
	snprintf(what, sizeof(what), "B's first attached QP got each once (%u, %u bad)", c.got,
		 c.bad);
	expect(each_once(&c, 0, NMSG) && !c.bad, what);
	snprintf(what, sizeof(what), "B's second attached QP got each once (%u, %u bad)", d.got,
		 d.bad);
	expect(each_once(&d, 0, NMSG) && !d.bad, what);
	expect(!e.got && !e.bad, "the QP attached with another Q_Key got none");
	expect(!s.got && !s.bad, "the sender (not attached) got none of its own");

	expect(!ibv_detach_mcast(c.qp, &mgid, 0), "detach B's first QP");
	expect(ibv_detach_mcast(c.qp, &mgid, 0) == EINVAL, "detach it again: EINVAL");
	{
		struct ud *rx[] = {&b, &d};

		expect(!send_range(&s, ah, NMSG, NMSG + NMSG_AFTER, rx, 2, &group),
		      "10 more multicast SENDs complete");
	}
	t0 = now_ms();
	while (now_ms() - t0 < 300)
		for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			drain(all[i], s.qp->qp_num, &group);
	expect(each_once(&b, NMSG, NMSG + NMSG_AFTER) && each_once(&d, NMSG, NMSG + NMSG_AFTER),
	      "the QPs still attached got each of the 10 once");
	expect(none(&c, NMSG, NMSG + NMSG_AFTER) && !c.bad, "the detached QP got none of them");

	/* The sender attached too: its own message comes back to it, as
	 * hardware loops a group's packets back to the port (IPoIB drops
	 * its own for that reason). */
	expect(!ibv_attach_mcast(s.qp, &mgid, 0), "attach the sender");
	{
		struct ud *rx[] = {&s, &b, &d};

		expect(!send_range(&s, ah, NSEQ - 1, NSEQ, rx, 3, &group),
		      "one more multicast SEND completes");
	}
	t0 = now_ms();
	while (now_ms() - t0 < 300)
		drain(&s, s.qp->qp_num, &group);
	expect(s.seen[NSEQ - 1] == 1 && !s.bad && each_once(&b, NSEQ - 1, NSEQ),
	      "the attached sender got its own message once (and A's other QP)");
	expect(!ibv_detach_mcast(s.qp, &mgid, 0), "detach the sender");

	/* More QPs on one group than max_mcast_qp_attach: ENOMEM. */
	if (da.max_mcast_qp_attach > 0 && da.max_mcast_qp_attach <= 256) {
		int n = da.max_mcast_qp_attach + 1, i, err = 0;
		struct ibv_qp **qps = calloc((size_t)n, sizeof(*qps));
		struct ibv_qp_init_attr ia = {
		    .send_cq = b.cq,
		    .recv_cq = b.cq,
		    .qp_type = IBV_QPT_UD,
		    .cap = {
			.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
		union ibv_gid g2 = mgid;

		g2.raw[15] ^= 0x10; /* another group */
		for (i = 0; qps && i < n && !err; i++) {
			qps[i] = ibv_create_qp(b.pd, &ia);
			err = qps[i] ? ibv_attach_mcast(qps[i], &g2, 0) : -1;
		}
		snprintf(what, sizeof(what), "attach %d QPs to one group: the last one ENOMEM", n);
		expect(err == ENOMEM && i == n, what);
		for (i = 0; qps && i < n; i++)
			if (qps[i])
				ibv_destroy_qp(qps[i]); /* destroying detaches */
		free(qps);
	}

	ibv_destroy_ah(ah);
	ud_fini(&rc);
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		ud_fini(all[i]);
	ibv_close_device(ca);
	ibv_close_device(cb);
	printf("%s\n", fails ? "FAILED" : "all passed");
	return fails ? 1 : 0;
}
