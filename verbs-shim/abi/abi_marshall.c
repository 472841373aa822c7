/* SPDX-License-Identifier: MIT */
/*
 * abi_marshall.c: conversions between the kernel's uverbs/SA structures
 * (<rdma/ib_user_verbs.h>, <rdma/ib_user_sa.h>) and the verbs structures
 * (<infiniband/verbs.h>, <infiniband/sa.h>). librdmacm calls them on the
 * replies of the kernel's rdma_cm; they stay exported because librdmacm
 * imports them by version. Field by field, like rdma-core: byte order is
 * kept as is (the big-endian fields are big-endian on both sides), and
 * ibv_qp_attr.qp_state is left alone because the caller owns it. Pure.
 */
#include <string.h>

#include "abi.h"

/* Copy a kernel address vector (@src) into a verbs one (@dst). */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid.raw));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

/*
 * Copy kernel QP attributes (@src) into verbs ones (@dst), both address
 * vectors included. dst->qp_state is not written (rdma-core behaves the
 * same; the kernel's qp_attr_mask is the caller's business).
 */
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;

	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;

	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);

	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/*
 * The path-record fields that exist on both sides with the same name; the
 * two structs order them differently, so they are copied by name.
 */
#define SHIM_PATH_REC_FIELDS(X)      \
	X(dlid)                      \
	X(slid)                      \
	X(raw_traffic)               \
	X(flow_label)                \
	X(hop_limit)                 \
	X(traffic_class)             \
	X(reversible)                \
	X(numb_path)                 \
	X(pkey)                      \
	X(sl)                        \
	X(mtu_selector)              \
	X(mtu)                       \
	X(rate_selector)             \
	X(rate)                      \
	X(packet_life_time_selector) \
	X(packet_life_time)          \
	X(preference)

#define SHIM_COPY_FIELD(f) dst->f = src->f;

/* Copy a kernel SA path record (@src) into a verbs one (@dst). */
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid.raw));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid.raw));
	SHIM_PATH_REC_FIELDS(SHIM_COPY_FIELD)
}

/* Copy a verbs SA path record (@src) into the kernel layout (@dst). */
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	SHIM_PATH_REC_FIELDS(SHIM_COPY_FIELD)
}
