/* SPDX-License-Identifier: MIT */
/*
 * Protection domains, and XRC domains (not offered: ibv_open_xrcd fails
 * with EOPNOTSUPP, and ibv_close_xrcd, which rdma-core calls through the
 * extended context without checks, answers EOPNOTSUPP instead of crashing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "shim.h"

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct uroce_msg_hdr req = {.op = UROCE_OP_ALLOC_PD};
	struct uroce_handle_resp resp;
	struct shim_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return shim_fail_null(-ENOMEM);
	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(pd);
		return shim_fail_null(err);
	}
	pd->pd.context = context;
	pd->pd.handle = resp.handle;
	return &pd->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	int err = shim_call_simple(shim_ctx(pd->context), UROCE_OP_DEALLOC_PD, pd->handle);

	if (err)
		return -err;
	free(SHIM_CONTAINER_OF(pd, struct shim_pd, pd));
	return 0;
}

struct ibv_xrcd *shim_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	(void)context;
	(void)attr;
	return shim_fail_null(-EOPNOTSUPP);
}

int shim_close_xrcd(struct ibv_xrcd *xrcd)
{
	(void)xrcd;
	return EOPNOTSUPP;
}
