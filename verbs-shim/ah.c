/* SPDX-License-Identifier: MIT */
/*
 * Address handles (ibv_create_ah, ibv_destroy_ah, ibv_init_ah_from_wc,
 * ibv_create_ah_from_wc) and multicast attachment of UD QPs.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

void shim_ah_to_uapi(const struct ibv_ah_attr *in, struct uroce_ah_attr *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->dgid, in->grh.dgid.raw, 16);
	out->flow_label = in->grh.flow_label;
	out->sgid_index = in->grh.sgid_index;
	out->hop_limit = in->grh.hop_limit;
	out->traffic_class = in->grh.traffic_class;
	out->dlid = in->dlid;
	out->sl = in->sl;
	out->src_path_bits = in->src_path_bits;
	out->static_rate = in->static_rate;
	out->is_global = in->is_global;
	out->port_num = in->port_num;
}

void shim_ah_from_uapi(const struct uroce_ah_attr *in, struct ibv_ah_attr *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->grh.dgid.raw, in->dgid, 16);
	out->grh.flow_label = in->flow_label;
	out->grh.sgid_index = in->sgid_index;
	out->grh.hop_limit = in->hop_limit;
	out->grh.traffic_class = in->traffic_class;
	out->dlid = in->dlid;
	out->sl = in->sl;
	out->src_path_bits = in->src_path_bits;
	out->static_rate = in->static_rate;
	out->is_global = in->is_global;
	out->port_num = in->port_num;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct uroce_create_ah_req req = {.hdr.op = UROCE_OP_CREATE_AH, .pd_handle = pd->handle};
	struct uroce_handle_resp resp;
	struct shim_ah *ah;
	int err;

	shim_ah_to_uapi(attr, &req.attr);
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return shim_fail_null(-ENOMEM);
	err =
	    shim_call(shim_ctx(pd->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err) {
		free(ah);
		return shim_fail_null(err);
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->ah.handle = resp.handle;
	return &ah->ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	int err = shim_call_simple(shim_ctx(ah->context), UROCE_OP_DESTROY_AH, ah->handle);

	if (err)
		return -err;
	free(SHIM_CONTAINER_OF(ah, struct shim_ah, ah));
	return 0;
}

/*
 * The reply address of a received UD/RC message. On RoCE the source GID
 * is in the 40-byte GRH area at the start of the receive buffer (IBA
 * A17.4.5.2: for IPv4 the IP header sits at offset 20).
 */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	union ibv_gid sgid;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	if (!grh) {
		errno = EINVAL;
		return -1;
	}
	if (ibv_query_gid(context, port_num, 0, &sgid))
		return -1;
	ah_attr->is_global = 1;
	ah_attr->grh.sgid_index = 0;
	ah_attr->grh.hop_limit = 0xff;
	if ((be32toh(grh->version_tclass_flow) >> 28) == 6) {
		memcpy(&ah_attr->grh.dgid, &grh->sgid, 16);
		ah_attr->grh.traffic_class = (be32toh(grh->version_tclass_flow) >> 20) & 0xff;
		ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
	} else {
		/* IPv4 header in the last 20 bytes of the GRH area. */
		const uint8_t *ip = (const uint8_t *)grh + 20;

		memset(&ah_attr->grh.dgid, 0, 10);
		ah_attr->grh.dgid.raw[10] = 0xff;
		ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], ip + 12, 4);
		ah_attr->grh.traffic_class = ip[1];
	}
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

static int mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, uint32_t op)
{
	struct uroce_mcast_req req = {.hdr.op = op, .qp_handle = qp->handle, .lid = lid};
	struct uroce_msg_hdr resp;

	memcpy(req.gid, gid->raw, 16);
	return -shim_call(shim_ctx(qp->context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0,
			  NULL);
}

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast(qp, gid, lid, UROCE_OP_ATTACH_MCAST);
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast(qp, gid, lid, UROCE_OP_DETACH_MCAST);
}
