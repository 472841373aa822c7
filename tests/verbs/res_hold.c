/* SPDX-License-Identifier: MIT */
/*
 * res_hold DEVICE NMR NCQ: a verbs program that holds many resources for the
 * listings of `uroce mr` and `uroce cq` to page through (tests/e2e/res.sh).
 * On DEVICE it allocates one PD, registers NMR memory regions (MR i: 4096 + i
 * bytes, at 8192 * i into one buffer, with access flags by i % 4: LOCAL_WRITE;
 * + REMOTE_WRITE; + REMOTE_READ; + REMOTE_ATOMIC) and creates NCQ CQs (CQ i
 * of i + 1 CQEs), prints "ready" and waits until it is killed.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int access_of[4] = {
    IBV_ACCESS_LOCAL_WRITE,
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	IBV_ACCESS_REMOTE_ATOMIC,
};

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	char *buf;
	int n, nmr, ncq;

	if (argc != 4 || (nmr = atoi(argv[2])) < 0 || (ncq = atoi(argv[3])) < 0) {
		fprintf(stderr, "usage: res_hold DEVICE NMR NCQ\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "res_hold: cannot open %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	buf = calloc((size_t)nmr + 1, 8192);
	if (!pd || !buf) {
		fprintf(stderr, "res_hold: no PD or no memory\n");
		return 1;
	}
	for (int i = 0; i < nmr; i++)
		if (!ibv_reg_mr(pd, buf + 8192 * (size_t)i, 4096 + (size_t)i, access_of[i % 4])) {
			perror("res_hold: ibv_reg_mr");
			return 1;
		}
	for (int i = 0; i < ncq; i++)
		if (!ibv_create_cq(ctx, i + 1, NULL, NULL, 0)) {
			perror("res_hold: ibv_create_cq");
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
