/* SPDX-License-Identifier: MIT */
/*
 * verbs_pair: set-up and small helpers shared by cq_events, async_events
 * and failures (see verbs_pair.h).
 */
#include "verbs_pair.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DEPTH 16

struct ibv_context *ctx;
struct ibv_pd *pd;
struct ibv_mr *mr;
char buf[8192];
union ibv_gid gid;

static int side_init(struct side *s)
{
	struct ibv_qp_init_attr ia = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = DEPTH,
		    .max_recv_wr = DEPTH,
		    .max_send_sge = 1,
		    .max_recv_sge = 1},
	};

	s->ch = ibv_create_comp_channel(ctx);
	s->cq = s->ch ? ibv_create_cq(ctx, 64, NULL, s->ch, 0) : NULL;
	if (!s->cq)
		return -1;
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	return s->qp ? 0 : -1;
}

int pair_open(const char *prog, const char *name, struct side *a, struct side *b)
{
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "%s: no device %s\n", prog, name);
		return -1;
	}
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
		: NULL;
	if (!mr || ibv_query_gid(ctx, 1, 0, &gid) || side_init(a) || side_init(b)) {
		fprintf(stderr, "%s: setup failed: %s\n", prog, strerror(errno));
		return -1;
	}
	return 0;
}

int qp_to_rtr(struct ibv_qp *qp, uint32_t dest)
{
	return qp_to_rtr_mtu(qp, dest, IBV_MTU_1024);
}

int qp_to_rtr_mtu(struct ibv_qp *qp, uint32_t dest, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
	    .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};

	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

int qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS,
				.timeout = 14,
				.retry_cnt = 7,
				.rnr_retry = 7,
				.max_rd_atomic = 1};

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int qp_connect(struct ibv_qp *x, struct ibv_qp *y)
{
	return qp_to_rtr(x, y->qp_num) || qp_to_rts(x) || qp_to_rtr(y, x->qp_num) || qp_to_rts(y)
		   ? -1
		   : 0;
}

void post_recv(struct side *s)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf + 4096, .length = 4096, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		check(0, "post_recv: %s", strerror(errno));
}

void post_send(struct side *s, enum ibv_wr_opcode op, unsigned flags)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 2,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = flags},
			   *bad;

	wr.imm_data = 0x01020304;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
	wr.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(s->qp, &wr, &bad))
		check(0, "post_send: %s", strerror(errno));
}

int poll_n(struct side *s, int n)
{
	struct ibv_wc wc;
	int got = 0;

	for (long i = 0; i < 50000000 && got < n; i++) {
		int r = ibv_poll_cq(s->cq, 1, &wc);

		if (r < 0)
			return got;
		if (r == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				check(0, "completion status %s", ibv_wc_status_str(wc.status));
			got++;
		}
	}
	return got;
}

int next_async_event(int ms, void **elem)
{
	struct pollfd p = {.fd = ctx->async_fd, .events = POLLIN};
	struct ibv_async_event ev;
	int type;

	if (poll(&p, 1, ms) != 1 || ibv_get_async_event(ctx, &ev))
		return -1;
	type = (int)ev.event_type;
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		*elem = ev.element.cq;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		*elem = ev.element.srq;
		break;
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		*elem = NULL;
		break;
	default:
		*elem = ev.element.qp;
		break;
	}
	ibv_ack_async_event(&ev);
	return type;
}

struct ibv_wc wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	for (long i = 0; i < 50000000; i++)
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
	check(0, "no completion");
	return wc;
}

int maps_at(const void *addr, uintptr_t *lo, uintptr_t *hi, int *shared)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long l, h;

		if (sscanf(line, "%lx-%lx", &l, &h) != 2)
			continue;
		if ((uintptr_t)addr >= l && (uintptr_t)addr < h) {
			*lo = l;
			*hi = h;
			*shared = strstr(line, SHARE_PATH) != NULL;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}
