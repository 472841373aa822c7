/* SPDX-License-Identifier: MIT */
/*
 * abi_provider.c: IBVERBS_PRIVATE_34, the interface between libibverbs and
 * its providers (libmlx5, libefa, ...). perftest links libmlx5 and libefa,
 * and every loaded object's imports must resolve (they are all linked
 * BIND_NOW), so the whole node is exported. uroce has no providers: a uroce
 * device is served by uroced, never by a kernel driver plus provider. What
 * each part does:
 *  - verbs_register_driver_34(): provider constructors call it when the
 *    library is loaded (twice in every perftest start). No provider can
 *    match a uroce device, so the registration is accepted and dropped.
 *  - ibv_cmd_*() and execute_ioctl() send uverbs commands to the kernel.
 *    uroce has no kernel part: they fail with EOPNOTSUPP (errno set too;
 *    ibv_cmd_poll_cq() returns -1 like a failed poll).
 *  - Context set-up/teardown for providers (_verbs_init_and_alloc_context,
 *    verbs_set_ops, verbs_uninit_context, verbs_open_device) only runs
 *    inside a provider's alloc_context(), which is never called: set-up
 *    fails with EOPNOTSUPP, the others do nothing.
 *  - verbs_init_cq() and __ioctl_final_num_attrs() are plain helpers and
 *    really do their job.
 *  - verbs_allow_disassociate_destroy is read by providers; it is set from
 *    RDMAV_ALLOW_DISASSOC_DESTROY / MLX4_DEVICE_FATAL_CLEANUP like rdma-core.
 * ibv_query_gid_type(), also in this node, is daemon-backed and lives with
 * the other GID queries.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "abi.h"

/* The ibv_cmd_* stubs take their arguments only to keep the ABI. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/*
 * rdma-core's struct ibv_command_buffer (cmd_ioctl.h, not installed). Only
 * __ioctl_final_num_attrs() looks inside, at next, next_attr and hdr.attrs.
 */
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error : 1;
	uint8_t fallback_require_ex : 1;
	uint8_t fallback_ioctl_only : 1;
	struct ib_uverbs_ioctl_hdr hdr;
};

bool verbs_allow_disassociate_destroy;

static bool shim_env_true(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "0") != 0;
}

__attribute__((constructor)) static void shim_provider_env_init(void)
{
	verbs_allow_disassociate_destroy = shim_env_true("RDMAV_ALLOW_DISASSOC_DESTROY") ||
					   shim_env_true("MLX4_DEVICE_FATAL_CLEANUP");
}

static int shim_no_kernel(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* Accept a provider's registration and drop it (see the file comment). */
void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
}

/* NULL, errno EOPNOTSUPP: uroce never creates provider contexts. */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* Nothing to undo: _verbs_init_and_alloc_context() never succeeds. */
void verbs_uninit_context(struct verbs_context *context)
{
}

/* Nothing to do: only a provider context (never created) takes ops. */
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
}

/*
 * Provider-private open (e.g. mlx5dv_open_device). NULL, errno EOPNOTSUPP:
 * uroce devices have no provider, so there is no private data to honour.
 */
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * Initialise the common part of a CQ: owner context, completion channel
 * (whose refcnt is taken under the context mutex), user context, event
 * counters, mutex and condition variable.
 */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context, struct ibv_comp_channel *channel,
		   void *cq_context)
{
	cq->context = context;
	cq->channel = channel;
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
}

/* @num_attrs plus the attributes already filled in every linked buffer. */
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, struct ibv_command_buffer *link)
{
	for (; link; link = link->next)
		num_attrs += (unsigned int)(link->next_attr - link->hdr.attrs);
	return num_attrs;
}

/* EOPNOTSUPP: there is no kernel uverbs device to send the ioctl to. */
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	return shim_no_kernel();
}

/* Kernel uverbs commands: all EOPNOTSUPP (see the file comment). */

int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_query_context(struct ibv_context *ctx, struct ibv_command_buffer *driver)
{
	return shim_no_kernel();
}

int ibv_cmd_create_flow_action_esp(struct ibv_context *ctx, struct ibv_flow_action_esp_attr *attr,
				   struct verbs_flow_action *flow_action,
				   struct ibv_command_buffer *driver)
{
	return shim_no_kernel();
}

int ibv_cmd_modify_flow_action_esp(struct verbs_flow_action *flow_action,
				   struct ibv_flow_action_esp_attr *attr,
				   struct ibv_command_buffer *driver)
{
	return shim_no_kernel();
}

int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr, struct ibv_query_port *cmd, size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_dealloc_pd(struct ibv_pd *pd)
{
	return shim_no_kernel();
}

int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd)
{
	return shim_no_kernel();
}

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz)
{
	return shim_no_kernel();
}

int ibv_cmd_dereg_mr(struct verbs_mr *vmr)
{
	return shim_no_kernel();
}

int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle)
{
	return shim_no_kernel();
}

int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge)
{
	return shim_no_kernel();
}

int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
			  int access, struct verbs_mr *vmr)
{
	return shim_no_kernel();
}

int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	return shim_no_kernel();
}

int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_create_cq_ex(struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size,
			 uint32_t cmd_flags)
{
	return shim_no_kernel();
}

/* -1 with errno EOPNOTSUPP: the poll_cq convention is negative on error. */
int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	shim_no_kernel();
	return -1;
}

int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return shim_no_kernel();
}

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	return shim_no_kernel();
}

int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr, struct ibv_modify_cq *cmd,
		      size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd,
		      size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	return shim_no_kernel();
}

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp, struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd,
			 size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd,
		     size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			 struct ibv_modify_qp_ex *cmd, size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	return shim_no_kernel();
}

int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return shim_no_kernel();
}

int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return shim_no_kernel();
}

int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	return shim_no_kernel();
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	return shim_no_kernel();
}

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return shim_no_kernel();
}

int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return shim_no_kernel();
}

int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_flow(struct ibv_flow *flow_id)
{
	return shim_no_kernel();
}

int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_flow_action(struct verbs_flow_action *action)
{
	return shim_no_kernel();
}

int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_wq(struct ibv_wq *wq)
{
	return shim_no_kernel();
}

int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)
{
	return shim_no_kernel();
}

int ibv_cmd_create_counters(struct ibv_context *context, struct ibv_counters_init_attr *init_attr,
			    struct verbs_counters *vcounters, struct ibv_command_buffer *link)
{
	return shim_no_kernel();
}

int ibv_cmd_destroy_counters(struct verbs_counters *vcounters)
{
	return shim_no_kernel();
}

int ibv_cmd_read_counters(struct verbs_counters *vcounters, uint64_t *counters_value,
			  uint32_t ncounters, uint32_t flags, struct ibv_command_buffer *link)
{
	return shim_no_kernel();
}

int ibv_cmd_alloc_dm(struct ibv_context *ctx, const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link)
{
	return shim_no_kernel();
}

int ibv_cmd_free_dm(struct verbs_dm *dm)
{
	return shim_no_kernel();
}

int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm, uint64_t offset, size_t length,
		      unsigned int access, struct verbs_mr *vmr, struct ibv_command_buffer *link)
{
	return shim_no_kernel();
}
