/* SPDX-License-Identifier: MIT */
/*
 * The RNIC's Communication Manager (emu/daemon/cm): the IB CM that owns
 * QP1's connection-management MADs (IBA 12), as a kernel's ib_cm does for a
 * hardware RNIC, with the RDMA CM's IP addressing on top (IBA Annex A11),
 * as the kernel's rdma_cm gives it to librdmacm. It sits above the data path
 * (it sends and receives through the engine's GSI QP) and below the control
 * path, whose CM_* operations (verbs/cm_ctl.c) call the functions below.
 * CM ids belong to a channel (one control connection that did CM_OPEN);
 * their events go to the channel's event socket as struct uroce_cm_event
 * records. docs/cm.md describes the protocol and its states.
 */
#ifndef UROCE_CM_H
#define UROCE_CM_H

#include "dp.h"

struct emu_cm_chan;

/* cm.c */
/* Take QP1's MADs for this device (once the data path is set up). */
void emu_cm_start(struct emu_dev *dev);
/* Free what the CM still holds (after the loop is closed and every client
 * released): held requests, ids finishing a disconnect. */
void emu_cm_stop(struct emu_dev *dev);
/*
 * CM_OPEN: make ctx a CM channel. *evfd receives the application's end of
 * the event socket (the caller passes it on and closes it). 0, -EBUSY if
 * ctx already is one, or -errno.
 */
int emu_cm_chan_open(struct emu_ctx *ctx, int *evfd);
/* The context goes away: destroy its ids (DREQ/DREP/REJ as their state
 * requires) and close its event socket. No-op for a context without one. */
void emu_cm_chan_close(struct emu_ctx *ctx);
/* The operations; req is the checked request, *handle the new id. 0 or -errno. */
int emu_cm_listen(struct emu_ctx *ctx, const struct uroce_cm_listen_req *req, uint32_t *handle);
int emu_cm_connect(struct emu_ctx *ctx, const struct uroce_cm_connect_req *req, uint32_t *handle);
int emu_cm_accept(struct emu_ctx *ctx, const struct uroce_cm_accept_req *req);
int emu_cm_reject(struct emu_ctx *ctx, const struct uroce_cm_reject_req *req);
int emu_cm_disconnect(struct emu_ctx *ctx, uint32_t handle);
/* rdma_notify: event (UROCE_EVENT_*) seen on the QP of ctx's id handle;
 * COMM_EST establishes a connection in REP_SENT as an RTU would. 0 or
 * -errno (see struct uroce_cm_notify_req). */
int emu_cm_notify(struct emu_ctx *ctx, uint32_t handle, uint32_t event);
int emu_cm_destroy(struct emu_ctx *ctx, uint32_t handle);
/* CM_JOIN_MCAST: a join of the group req->addr (an id of its own, left by
 * emu_cm_destroy); the MULTICAST_JOIN event is queued before it returns. */
int emu_cm_join_mcast(struct emu_ctx *ctx, const struct uroce_cm_join_req *req, uint32_t *handle);
/* Move an id of another channel of the same process to ctx's. */
int emu_cm_migrate(struct emu_ctx *ctx, uint32_t handle);
int emu_cm_init_qp_attr(struct emu_ctx *ctx, uint32_t handle, uint32_t qp_state,
			struct uroce_cm_qp_attr *attr);

#endif /* UROCE_CM_H */
