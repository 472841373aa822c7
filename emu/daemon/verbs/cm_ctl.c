/* SPDX-License-Identifier: MIT */
/*
 * The RDMA CM control operations (uapi.h CM_*): unpack a channel's request,
 * check what the message itself can say (NUL-free sizes, lengths), and call
 * the Communication Manager (emu/daemon/cm), which owns the ids and the
 * protocol. CM_OPEN hands the application its end of the event socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "verbs.h"

int emu_cm_ctl_open(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	struct uroce_cm_open_resp *o;
	int evfd, err;

	(void)req;
	if (ctx->opened) /* a verbs context is not a CM channel */
		return -EPROTO;
	err = emu_cm_chan_open(ctx, &evfd);
	if (err)
		return err;
	o = EMU_REPLY(rep, struct uroce_cm_open_resp);
	o->daemon_pid = (uint32_t)getpid();
	emu_reply_add_fd(rep, evfd);
	return 0;
}

int emu_cm_ctl_listen(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	uint32_t handle;
	int err = emu_cm_listen(ctx, req, &handle);

	if (!err)
		EMU_REPLY(rep, struct uroce_handle_resp)->handle = handle;
	return err;
}

int emu_cm_ctl_connect(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	uint32_t handle;
	int err = emu_cm_connect(ctx, req, &handle);

	if (!err)
		EMU_REPLY(rep, struct uroce_handle_resp)->handle = handle;
	return err;
}

int emu_cm_ctl_accept(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	(void)rep;
	return emu_cm_accept(ctx, req);
}

int emu_cm_ctl_reject(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	(void)rep;
	return emu_cm_reject(ctx, req);
}

int emu_cm_ctl_disconnect(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	(void)rep;
	return emu_cm_disconnect(ctx, ((const struct uroce_handle_req *)req)->handle);
}

int emu_cm_ctl_notify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_cm_notify_req *r = req;

	(void)rep;
	return emu_cm_notify(ctx, r->handle, r->event);
}

int emu_cm_ctl_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	(void)rep;
	return emu_cm_destroy(ctx, ((const struct uroce_handle_req *)req)->handle);
}

int emu_cm_ctl_migrate(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	(void)rep;
	return emu_cm_migrate(ctx, ((const struct uroce_handle_req *)req)->handle);
}

int emu_cm_ctl_join_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	uint32_t handle;
	int err = emu_cm_join_mcast(ctx, req, &handle);

	if (!err)
		EMU_REPLY(rep, struct uroce_handle_resp)->handle = handle;
	return err;
}

int emu_cm_ctl_init_qp_attr(struct emu_ctx *ctx, const void *req, struct emu_reply *rep)
{
	const struct uroce_cm_init_qp_attr_req *r = req;
	struct uroce_cm_qp_attr a;
	int err = emu_cm_init_qp_attr(ctx, r->handle, r->qp_state, &a);

	if (!err)
		EMU_REPLY(rep, struct uroce_cm_init_qp_attr_resp)->attr = a;
	return err;
}
