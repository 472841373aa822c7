/* SPDX-License-Identifier: MIT */
/*
 * verbs_pair: the set-up shared by the small verbs programs of tests/dp
 * (cq_events, async_events, failures): one device, one PD, one MR over an 8 KiB
 * buffer, and two RC QPs of that device, each with its own completion
 * channel and CQ, that talk to each other. Plain libibverbs, nothing
 * uroce-specific: the programs run under the shim.
 */
#ifndef UROCE_TESTS_DP_VERBS_PAIR_H
#define UROCE_TESTS_DP_VERBS_PAIR_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "verbs_test.h" /* check(), failures, open_dev() */

struct side {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct ibv_mr *mr;
extern char buf[8192];
extern union ibv_gid gid;
/* Opens device name, allocates pd, mr and gid, creates sides a and b.
 * 0, or -1 with a message on stderr prefixed by prog. */
int pair_open(const char *prog, const char *name, struct side *a, struct side *b);
/* RESET -> INIT -> RTR, connected to QP dest of this device, path MTU 1024.
 * ibv_modify_qp's return. */
int qp_to_rtr(struct ibv_qp *qp, uint32_t dest);
/* The same with path MTU mtu. */
int qp_to_rtr_mtu(struct ibv_qp *qp, uint32_t dest, enum ibv_mtu mtu);
/* RTR -> RTS. ibv_modify_qp's return. */
int qp_to_rts(struct ibv_qp *qp);
/* Two QPs of this device connected to each other, both in RTS: 0 or -1. */
int qp_connect(struct ibv_qp *x, struct ibv_qp *y);
/* One receive of 4 KiB into buf + 4096; a failure is a check failure. */
void post_recv(struct side *s);
/* One 64-byte op from buf (RDMA to buf + 2048, immediate 0x01020304). */
void post_send(struct side *s, enum ibv_wr_opcode op, unsigned flags);
/* The next completion of cq (busy, bounded); a check failure and status
 * IBV_WC_GENERAL_ERR when none comes. */
struct ibv_wc wait_wc(struct ibv_cq *cq);
/* Polls n completions (busy, bounded); returns how many came. */
int poll_n(struct side *s, int n);
/* The next async event within ms: its type (acknowledged), or -1; *elem
 * is the QP, CQ or SRQ it names (NULL for device and port events). */
int next_async_event(int ms, void **elem);
/* How /proc/self/maps names memory shared with the daemon (mr_share.c). */
#define SHARE_PATH "/memfd:uroce-mr-pages (deleted)"
/* The /proc/self/maps line that contains addr: its range [lo, hi) and
 * whether it is memory this process shares with a daemon that maps it
 * (verbs-shim/mr_share.c). 0, or -1 when there is none. */
int maps_at(const void *addr, uintptr_t *lo, uintptr_t *hi, int *shared);

#endif
