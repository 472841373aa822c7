/* SPDX-License-Identifier: MIT */
/*
 * The daemon's control path (emu/daemon/verbs/): the control socket and its
 * reply builder, verbs contexts, the PD/MR/MW/CQ/SRQ/QP/AH objects, the QP
 * state table, the counters query, the fault rules and the QP, MR and CQ listings. Cross-file
 * functions, grouped by defining file. The control path may call the data path (dp.h); the data
 * path never calls it.
 */
#ifndef UROCE_VERBS_H
#define UROCE_VERBS_H

#include "cm.h"

/* ctl.c */
/* Create the listening socket in the rundir (checking the name is free). */
int emu_ctl_listen(struct emu_dev *dev);
void emu_ctl_close(struct emu_dev *dev);
/* Reserve len bytes of reply payload after the header and zero them. */
void *emu_reply_body(struct emu_reply *rep, size_t len);
/* Attach an fd to the reply (ownership passes to the reply). */
void emu_reply_add_fd(struct emu_reply *rep, int fd);

/* ctx.c */
/* Accept-time constructor: takes ownership of fd. NULL on failure. */
struct emu_ctx *emu_ctx_new(struct emu_dev *dev, int fd, pid_t pid, uid_t uid);
/* OPEN_CTX: create doorbell and async pipe, fill reply fds. */
int emu_ctx_open(struct emu_ctx *ctx, struct emu_reply *rep);
/* Release everything the context created, then the context itself. */
void emu_ctx_destroy(struct emu_ctx *ctx);

/* pd.c */
int emu_pd_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_pd_dealloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_pd_free(struct emu_pd *pd);

/* mr.c */
int emu_mr_reg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mr_rereg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mr_advise(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mr_map(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mr_reg_dm(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
/* dm.c */
int emu_dm_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_dm_free_req(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_dm_free(struct emu_dm *dm);
int emu_mr_dereg(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_mr_free(struct emu_mr *mr);
/* A new key (index << 8 | key byte) whose index no MR and no memory window
 * holds. 0 or -ENOMEM. */
int emu_mr_new_key(struct emu_dev *dev, uint32_t *key);

/* mw.c */
int emu_mw_alloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_mw_dealloc(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_mw_free(struct emu_mw *mw);
/* Check that [addr, addr+len) of process pid is mapped (writable if
 * need_write). 0, -EFAULT, or -errno when the map cannot be read. */
int emu_mr_check_mapped(pid_t pid, uint64_t addr, uint64_t len, int need_write);

/* cq.c */
int emu_cq_create_channel(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_destroy_channel(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_resize(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_cq_free(struct emu_cq *cq);
void emu_cq_channel_free(struct emu_channel *ch);

/* qp_state.c (pure) */
const char *emu_qp_state_name(uint32_t state);
/* Required / optional attribute masks of a transition (IBA 10.3.1,
 * ibv_modify_qp(3)); both 0 and valid == 0 for a forbidden transition. */
int emu_qp_state_masks(uint32_t qp_type, uint32_t cur, uint32_t next, uint32_t *req, uint32_t *opt);
/*
 * The mask of an ibv_modify_qp as the kernel's uverbs passes it on: for
 * XRC QPs the attributes of the half they do not have are dropped (an
 * initiator's responder attributes, a target's requester ones), as
 * programs written for RC send them (perftest -c XRC).
 */
uint32_t emu_qp_state_user_mask(uint32_t qp_type, uint32_t mask);
/* 0 if (cur -> next, mask) is a legal modify for this QP type, else -EINVAL. */
int emu_qp_state_check(uint32_t qp_type, uint32_t cur, uint32_t next, uint32_t mask);

/* qp.c */
int emu_qp_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_attach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_qp_detach_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_qp_free(struct emu_qp *qp);

/* srq.c */
int emu_srq_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_modify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_srq_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_srq_free(struct emu_srq *srq);

/* xrcd.c */
int emu_xrcd_open(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_xrcd_close(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
/* OPEN_QP: a handle of an XRC target QP of the same domain. */
int emu_qp_open(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
/* The context's XRC domain handle, or NULL. */
struct emu_xrcd *emu_xrcd_find(struct emu_ctx *ctx, uint32_t handle);
/* Release a domain handle (its usecnt must be 0) and its domain reference. */
void emu_xrcd_free(struct emu_xrcd *x);
/* Drop one reference of a domain; the last frees it. */
void emu_xrcd_dom_put(struct emu_xrcd_dom *dom);
/* Release an ibv_open_qp handle; the QP itself stays with its owner. */
void emu_qp_open_free(struct emu_qp_open *op);
/*
 * The handle of an XRC target QP's owner goes: if another context opened
 * the QP, the QP passes to it (true: it lives on); false: it was the last
 * handle and the caller frees the QP.
 */
bool emu_xrc_tgt_pass(struct emu_qp *qp);
/* An XRC SRQ goes: the target QPs of its domain that use it forget it. */
void emu_xrc_srq_gone(struct emu_srq *srq);

/* cm_ctl.c: the CM_* operations (a channel's requests, before OPEN_CTX) */
int emu_cm_ctl_open(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_listen(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_connect(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_accept(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_reject(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_disconnect(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_notify(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_init_qp_attr(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_migrate(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cm_ctl_join_mcast(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);

/* counters.c */
/* QUERY_COUNTERS: the device's (qpn 0) or one QP's counters. */
int emu_counters_query(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);

/* fault_ctl.c */
/* FAULT: add, remove, list or clear the device's fault rules. */
int emu_fault_ctl(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);

/* qp_list.c */
/* QP_LIST: the live QPs with their transport state and owners. */
int emu_qp_list(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);

/* res_list.c */
/* MR_LIST, CQ_LIST: the live MRs and CQs with their owners. */
int emu_mr_list(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_cq_list(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
/* The command name of process pid (/proc/PID/comm), or "?" when it cannot
 * be read. */
void emu_read_comm(pid_t pid, char *comm, size_t len);
/* The object of type with the smallest handle >= from in any context of
 * dev (NULL: none). */
struct emu_obj *emu_obj_next(struct emu_dev *dev, enum emu_obj_type type, uint32_t from);

/* ah.c */
int emu_ah_create(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
int emu_ah_destroy(struct emu_ctx *ctx, const void *req, struct emu_reply *rep);
void emu_ah_free(struct emu_ah *ah);

#endif /* UROCE_VERBS_H */
