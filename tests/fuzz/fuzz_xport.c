// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the transport engine's receive path: datagrams into
 * xport_recv_packet of two hosts of the fake network (tests/xport/fake.c)
 * whose QPs are in every state - RC and UC pairs connected (RTS), a UD QP,
 * an RC QP in INIT, one in ERR and one in RESET, an XRC initiator (0x15)
 * connected to an XRC target (0x26) whose domain has XRC SRQ 1 (SRQ 2 is
 * another domain's) - with receives posted and requests in flight, so that a mutated packet meets
 * live responder, completer and requester state. The input is a script of steps:
 *
 *   0 DST LEN_LO LEN_HI BYTES...  a datagram to host DST&1 from the peer's
 *                                 GID (DST&4: from a stranger's), its ICRC
 *                                 recomputed first when DST&2 (so that the
 *                                 checks past the ICRC are reached), over
 *                                 an IPv4 ID of DST * 0x101 + LEN_LO when
 *                                 DST&0x10 (host 0 checks the ICRC in the
 *                                 tracked mode, host 1 in the any mode);
 *                                 with DST&0x20 the route says the net
 *                                 layer saw that ID (the exact mode)
 *   1 QP OP FLAGS LEN RKEY        post a send WR (any opcode and flags, a
 *                                 valid or a mangled R_Key; QP&8 on host
 *                                 0: the XRC initiator, naming SRQ RKEY&3;
 *                                 a FLUSH takes its placement type and
 *                                 level from LEN, its length from FLAGS)
 *   2 N                           run the network for N+1 events
 *   3 QP                          post a receive
 *
 * Afterwards the network runs until idle (bounded). The engine must neither
 * crash nor trip a sanitizer, whatever arrives.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <wire/icrc.h>
#include "fake.h"

#define FZ_MR_BYTES 65536u
/* every access, FLUSH's too, so that flushes reach their success paths */
#define FZ_ACCESS (FAKE_ALL_ACCESS | UROCE_ACCESS_FLUSH_GLOBAL)

struct fz_env {
	struct fake_net net;
	struct fake_host h[2];
	struct fake_mr *mr[2];
	struct fake_qp *q[2][4];
	struct fake_qp *xi, *xt; /* XRC initiator (host 0) and target (host 1) */
};

static void fz_modify(struct fake_qp *q, uint32_t state, uint32_t qkey)
{
	struct xport_qp_attr a = {0};

	a.state = state;
	a.pkey = 0xffff;
	a.qkey = qkey;
	a.access = FZ_ACCESS;
	xport_modify(&q->x, &a,
		     UROCE_QP_STATE |
			 (state == UROCE_QPS_INIT
			      ? UROCE_QP_PKEY_INDEX | (qkey ? UROCE_QP_QKEY : UROCE_QP_ACCESS_FLAGS)
			      : 0) |
			 (state == UROCE_QPS_RTS ? UROCE_QP_SQ_PSN : 0));
}

static void fz_setup(struct fz_env *e)
{
	static const uint8_t ip[2][4] = {{10, 0, 0, 1}, {10, 0, 0, 2}};
	struct fake_conn c;

	memset(e, 0, sizeof(*e));
	fake_net_init(&e->net, 1);
	e->net.nolog = true;
	for (int i = 0; i < 2; i++) {
		fake_host_init(&e->h[i], &e->net, i, ip[i]);
		e->mr[i] = fake_mr_reg(&e->h[i], FZ_MR_BYTES, FZ_ACCESS);
	}
	e->h[0].dev.icrc_mode = XPORT_ICRC_TRACKED;
	e->h[1].dev.icrc_mode = XPORT_ICRC_ANY;
	e->q[0][0] = fake_qp_create(&e->h[0], UROCE_QPT_RC, 0x11, 64, true);
	e->q[1][0] = fake_qp_create(&e->h[1], UROCE_QPT_RC, 0x22, 64, true);
	e->q[0][1] = fake_qp_create(&e->h[0], UROCE_QPT_UC, 0x12, 64, true);
	e->q[1][1] = fake_qp_create(&e->h[1], UROCE_QPT_UC, 0x23, 64, true);
	e->q[0][2] = fake_qp_create(&e->h[0], UROCE_QPT_UD, 0x13, 64, true);
	e->q[1][2] = fake_qp_create(&e->h[1], UROCE_QPT_RC, 0x24, 64, true);
	e->q[0][3] = fake_qp_create(&e->h[0], UROCE_QPT_RC, 0x14, 64, true);
	e->q[1][3] = fake_qp_create(&e->h[1], UROCE_QPT_RC, 0x25, 64, true);
	fake_conn_defaults(&c);
	c.access = FZ_ACCESS;
	c.timeout = 1; /* short timers: retries and their exhaustion get reached */
	c.retry_cnt = 2;
	c.rnr_retry = 2;
	e->xi = fake_qp_create(&e->h[0], UROCE_QPT_XRC_SEND, 0x15, 64, true);
	e->xt = fake_qp_create(&e->h[1], UROCE_QPT_XRC_RECV, 0x26, 1, false);
	e->xt->xrc_domain = 1;
	fake_srq_create(&e->h[1], 1, 1);
	fake_srq_create(&e->h[1], 2, 2);
	for (int k = 0; k < 4; k++) {
		fake_srq_post_recv(&e->h[1].srq[0], 3000 + k, e->mr[1], 4096u * k, 4096);
		fake_srq_post_recv(&e->h[1].srq[1], 4000 + k, e->mr[1], 4096u * k, 4096);
	}
	fake_connect(e->xi, e->xt, &c);
	fake_connect(e->q[0][0], e->q[1][0], &c);
	fake_connect(e->q[0][1], e->q[1][1], &c);
	fz_modify(e->q[0][2], UROCE_QPS_INIT, 0x11111111);
	fz_modify(e->q[0][2], UROCE_QPS_RTR, 0);
	fz_modify(e->q[0][2], UROCE_QPS_RTS, 0);
	fz_modify(e->q[1][2], UROCE_QPS_INIT, 0); /* INIT: receives only */
	fz_modify(e->q[0][3], UROCE_QPS_INIT, 0);
	fz_modify(e->q[0][3], UROCE_QPS_ERR, 0); /* ERR */
	/* e->q[1][3] stays in RESET */
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 4; k++)
				fake_post_recv(e->q[i][j], 1000 + k, e->mr[i], 4096u * k, 4096);
}

static void fz_post(struct fz_env *e, const uint8_t *p)
{
	unsigned side = p[0] & 1, n = (p[0] >> 1) & 3;
	struct fake_qp *q = side == 0 && (p[0] & 8) ? e->xi : e->q[side][n];
	struct xport_wqe w;
	uint32_t len = (uint32_t)p[3] * 256u;

	fake_wqe(&w, p[2], p[1] % 16u, p[2], e->mr[side], 0, len);
	fake_wqe_remote(&w, e->mr[!side], (size_t)(p[4] & 0x0f) * 4096u);
	if (p[4] & 0x80)
		w.rkey ^= p[4];
	w.compare_add = p[4];
	w.swap = p[3];
	w.ud_remote_qpn = p[4] & 1 ? 0x13 : 0x24;
	w.ud_remote_qkey = 0x11111111;
	w.xrc_srqn = p[4] & 3;
	/* FLUSH (opcode 14): placement type and selectivity level from the
	 * same bytes, valid or not, over up to 8 KiB. */
	w.flush_type = p[3] & 7;
	w.flush_level = (p[3] >> 3) & 3;
	w.flush_len = (uint32_t)p[2] * 32u;
	memcpy(w.ud_av.sgid, e->h[side].gid, XPORT_GID_BYTES);
	memcpy(w.ud_av.dgid, e->h[!side].gid, XPORT_GID_BYTES);
	fake_post(q, &w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[XPORT_MAX_PKT_BYTES];
	static struct fz_env e;
	struct xport_wqe w;
	size_t i = 0;

	fz_setup(&e);
	/* something in flight before the first datagram */
	fake_wqe(&w, 1, UROCE_WR_RDMA_WRITE, UROCE_SEND_SIGNALED, e.mr[0], 0, 8192);
	fake_wqe_remote(&w, e.mr[1], 0);
	fake_post(e.q[0][0], &w);
	fake_wqe(&w, 2, UROCE_WR_RDMA_READ, UROCE_SEND_SIGNALED, e.mr[0], 8192, 4096);
	fake_wqe_remote(&w, e.mr[1], 8192);
	fake_post(e.q[0][0], &w);
	fake_wqe(&w, 3, UROCE_WR_SEND, UROCE_SEND_SIGNALED, e.mr[0], 0, 2048);
	w.xrc_srqn = 1;
	fake_post(e.xi, &w);
	fake_run(&e.net, 8);

	while (i < size) {
		uint8_t op = data[i++] % 4;

		if (op == 0 && i + 3 <= size) {
			unsigned dst = data[i],
				 len = (unsigned)data[i + 1] | (unsigned)data[i + 2] << 8;
			struct fake_host *to = &e.h[dst & 1];
			struct xport_route rt = {0};

			i += 3;
			len %= XPORT_MAX_PKT_BYTES + 1;
			if (len > size - i)
				len = (unsigned)(size - i);
			memcpy(pkt, data + i, len);
			i += len;
			memcpy(rt.sgid, e.h[!(dst & 1)].gid, XPORT_GID_BYTES);
			if (dst & 4)
				rt.sgid[15] ^= 0x5a;
			memcpy(rt.dgid, to->gid, XPORT_GID_BYTES);
			rt.sport = (uint16_t)(dst & 8 ? 49152 + dst : 4791);
			rt.dport = 4791;
			rt.hop_limit = 64;
			if (dst & 0x10) {
				rt.ip_id_known = true; /* for the ICRC only, unless 0x20 */
				rt.ip_df = true;
				rt.ip_id = (uint16_t)(dst * 0x101u + data[i - len - 2]);
			}
			if ((dst & 2) && len >= 16)
				wire_icrc_put(pkt + len - 4, xport__icrc(&rt, pkt, len - 4));
			rt.ip_id_known = (dst & 0x30) == 0x30;
			xport_recv_packet(&to->dev, &rt, pkt, len);
		} else if (op == 1 && i + 5 <= size) {
			fz_post(&e, data + i);
			i += 5;
		} else if (op == 2 && i + 1 <= size) {
			fake_run(&e.net, 1u + data[i++]);
		} else if (op == 3 && i + 1 <= size) {
			unsigned side = data[i] & 1, n = (data[i] >> 1) % 3;

			fake_post_recv(e.q[side][n], 2000 + data[i], e.mr[side], 16384, 4096);
			i++;
		} else {
			break;
		}
	}
	fake_run(&e.net, 20000);
	fake_host_fini(&e.h[0]);
	fake_host_fini(&e.h[1]);
	fake_net_fini(&e.net);
	return 0;
}
