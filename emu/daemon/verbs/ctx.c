/* SPDX-License-Identifier: MIT */
/*
 * Client contexts. One connection on the control socket is one verbs
 * context: it owns a doorbell eventfd (the shim rings it when the daemon
 * sleeps), the write end of its async event pipe, and every object created
 * through it. When the connection closes, because the process closed the
 * device, exited or crashed, every object is released in dependency order,
 * exactly as the kernel does when a uverbs file is released. The context
 * is also released when the process that connected exits while a child it
 * forked still holds the connection: the DMA engine reaches memory by pid
 * (process_vm_*), and a pid whose process is gone can name another one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "verbs.h"

static void on_owner_exit(uv_poll_t *h, int status, int events)
{
	struct emu_ctx *ctx = h->data;

	(void)status;
	(void)events;
	emu_info("context %u: pid %d exited while the connection is still open (a forked "
		 "child holds it): releasing the context",
		 ctx->handle, (int)ctx->pid);
	emu_ctx_destroy(ctx);
}

struct emu_ctx *emu_ctx_new(struct emu_dev *dev, int fd, pid_t pid, uid_t uid)
{
	struct emu_ctx *ctx;
	int pidfd;

	if (dev->nconns >= dev->lim.max_ctx) {
		emu_warn("too many clients (%u), refusing pid %d", dev->nconns, (int)pid);
		close(fd);
		return NULL;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 && errno == ESRCH) {
		/* Gone already: whoever holds the connection is not it. */
		emu_warn("client pid %d exited before it was accepted, refusing", (int)pid);
		close(fd);
		return NULL;
	}
	if (pidfd < 0)
		emu_dbg("pidfd_open(%d): %s", (int)pid, strerror(errno));
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		if (pidfd >= 0)
			close(pidfd);
		close(fd);
		return NULL;
	}
	ctx->dev = dev;
	ctx->fd = fd;
	ctx->pid = pid;
	ctx->uid = uid;
	ctx->doorbell_fd = -1;
	ctx->req_fd = -1;
	ctx->async_wfd = -1;
	ctx->handle = emu_dev_new_handle(dev);
	ctx->pidfd = pidfd;
	if (pidfd >= 0) {
		fcntl(ctx->pidfd, F_SETFD, FD_CLOEXEC);
		uv_poll_init(dev->loop, &ctx->pid_poll, ctx->pidfd);
		ctx->pid_poll.data = ctx;
		uv_poll_start(&ctx->pid_poll, UV_READABLE, on_owner_exit);
	}
	for (int i = 0; i < EMU_OBJ_COUNT; i++)
		emu_list_init(&ctx->objs[i]);
	emu_list_add_tail(&dev->ctxs, &ctx->link);
	dev->nconns++;
	return ctx;
}

static void on_doorbell(uv_poll_t *h, int status, int events)
{
	struct emu_ctx *ctx = h->data;
	uint64_t v;

	(void)events;
	if (status < 0)
		return;
	emu_wait_awake(&ctx->dev->wait);
	while (read(ctx->doorbell_fd, &v, sizeof(v)) == sizeof(v)) {
		ctx->doorbells++;
		ctx->dev->dcnt[EMU_DCNT_DOORBELLS]++;
	}
	/* The rings are read by the data-path pass that follows (wait.c). */
	emu_wait_note_work(&ctx->dev->wait);
}

int emu_ctx_open(struct emu_ctx *ctx, struct emu_reply *rep)
{
	struct emu_dev *dev = ctx->dev;
	struct uroce_open_ctx_resp *o;
	int pfd[2], db, db_copy = -1, status_copy = -1, sq_db_fd, err;

	err = emu_sq_db_open(ctx, &sq_db_fd);
	if (err)
		return err;
	db = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (db < 0) {
		err = -errno;
		goto err_sq_db;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		goto err_db;
	}
	/* Only our end is non-blocking: ibv_get_async_event blocks. */
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
	db_copy = fcntl(db, F_DUPFD_CLOEXEC, 0);
	status_copy = fcntl(dev->status_fd, F_DUPFD_CLOEXEC, 0);
	if (db_copy < 0 || status_copy < 0) {
		err = -errno;
		goto err_pipe;
	}
	ctx->doorbell_fd = db;
	ctx->async_wfd = pfd[1];
	uv_poll_init(dev->loop, &ctx->doorbell_poll, db);
	ctx->doorbell_poll.data = ctx;
	uv_poll_start(&ctx->doorbell_poll, UV_READABLE, on_doorbell);
	ctx->opened = 1;
	dev->counts.ctx++;

	o = EMU_REPLY(rep, struct uroce_open_ctx_resp);
	o->ctx_handle = ctx->handle;
	o->daemon_pid = (uint32_t)getpid();
	o->num_comp_vectors = UROCE_NUM_COMP_VECTORS;
	o->status_page_bytes = UROCE_STATUS_PAGE_BYTES;
	o->sq_doorbells_bytes = sizeof(struct uroce_sq_doorbells);
	emu_reply_add_fd(rep, db_copy);
	emu_reply_add_fd(rep, pfd[0]);
	emu_reply_add_fd(rep, status_copy);
	emu_reply_add_fd(rep, sq_db_fd);
	emu_info("context %u opened by pid %d", ctx->handle, (int)ctx->pid);
	return 0;

err_pipe:
	if (db_copy >= 0)
		close(db_copy);
	if (status_copy >= 0)
		close(status_copy);
	close(pfd[0]);
	close(pfd[1]);
err_db:
	close(db);
err_sq_db:
	close(sq_db_fd);
	emu_sq_db_close(ctx);
	return err;
}

static void on_handle_closed(uv_handle_t *h)
{
	struct emu_ctx *ctx = h->data;

	if (--ctx->pending_closes == 0) {
		if (ctx->fd >= 0)
			close(ctx->fd);
		if (ctx->doorbell_fd >= 0)
			close(ctx->doorbell_fd);
		if (ctx->pidfd >= 0)
			close(ctx->pidfd);
		free(ctx);
	}
}

/* Release all objects of one type. */
#define FREE_ALL(ctx, type, T, freefn)                                 \
	do {                                                           \
		struct emu_list *pos_, *tmp_;                          \
		EMU_LIST_FOR_EACH_SAFE(pos_, tmp_, &(ctx)->objs[type]) \
		freefn(EMU_CONTAINER_OF(pos_, T, obj.link));           \
	} while (0)

void emu_ctx_destroy(struct emu_ctx *ctx)
{
	struct emu_dev *dev = ctx->dev;
	struct uroce_res_counts before = dev->counts;

	if (ctx->closing)
		return;
	ctx->closing = 1;

	/* A CM channel's connections end first (their peers see DREQs). */
	emu_cm_chan_close(ctx);
	/* Dependents before what they depend on. */
	FREE_ALL(ctx, EMU_OBJ_MW, struct emu_mw, emu_mw_free);
	FREE_ALL(ctx, EMU_OBJ_QP_OPEN, struct emu_qp_open, emu_qp_open_free);
	FREE_ALL(ctx, EMU_OBJ_QP, struct emu_qp, emu_qp_free);
	FREE_ALL(ctx, EMU_OBJ_AH, struct emu_ah, emu_ah_free);
	FREE_ALL(ctx, EMU_OBJ_SRQ, struct emu_srq, emu_srq_free);
	FREE_ALL(ctx, EMU_OBJ_XRCD, struct emu_xrcd, emu_xrcd_free);
	FREE_ALL(ctx, EMU_OBJ_CQ, struct emu_cq, emu_cq_free);
	FREE_ALL(ctx, EMU_OBJ_CHANNEL, struct emu_channel, emu_cq_channel_free);
	FREE_ALL(ctx, EMU_OBJ_MR, struct emu_mr, emu_mr_free);
	FREE_ALL(ctx, EMU_OBJ_DM, struct emu_dm, emu_dm_free);
	FREE_ALL(ctx, EMU_OBJ_PD, struct emu_pd, emu_pd_free);
	emu_sq_db_close(ctx);

	if (ctx->opened)
		emu_info("context %u of pid %d closed: freed %u QP, %u CQ, "
			 "%u MR, %u MW, %u PD, %u SRQ, %u AH, %u channels; %llu async events lost",
			 ctx->handle, (int)ctx->pid, before.qp - dev->counts.qp,
			 before.cq - dev->counts.cq, before.mr - dev->counts.mr,
			 before.mw - dev->counts.mw, before.pd - dev->counts.pd,
			 before.srq - dev->counts.srq, before.ah - dev->counts.ah,
			 before.channel - dev->counts.channel, (unsigned long long)ctx->async_lost);
	if (ctx->async_wfd >= 0)
		close(ctx->async_wfd);
	ctx->async_wfd = -1;
	emu_list_del(&ctx->link);
	dev->nconns--;
	if (ctx->opened)
		dev->counts.ctx--;

	ctx->pending_closes = 1;
	ctx->poll.data = ctx;
	uv_close((uv_handle_t *)&ctx->poll, on_handle_closed);
	if (ctx->opened) {
		ctx->pending_closes++;
		ctx->doorbell_poll.data = ctx;
		uv_close((uv_handle_t *)&ctx->doorbell_poll, on_handle_closed);
	}
	if (ctx->pidfd >= 0) {
		ctx->pending_closes++;
		ctx->pid_poll.data = ctx;
		uv_close((uv_handle_t *)&ctx->pid_poll, on_handle_closed);
	}
}
