/* SPDX-License-Identifier: MIT */
/*
 * Device and port queries: ibv_query_device(_ex), ibv_query_port (the
 * exported 48-byte compat form and the verbs_context op with a length),
 * GIDs (ibv_query_gid, _ibv_query_gid_ex, _ibv_query_gid_table,
 * ibv_query_gid_type), P_Keys, and ibv_query_rt_values. Every size-
 * parameterised call writes at most the size it was given.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "shim.h"

/* rdma-core's driver.h declares it; the installed headers do not. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type);

_Static_assert(sizeof(struct ibv_gid_entry) == 32, "ibv_gid_entry layout");

int shim_query_dev_attr(struct shim_context *ctx, struct uroce_device_attr *a)
{
	struct uroce_msg_hdr req = {.op = UROCE_OP_QUERY_DEVICE};
	struct uroce_query_device_resp resp;
	int err;

	err = shim_call(ctx, &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (!err)
		*a = resp.attr;
	return err;
}

static void to_verbs_attr(const struct uroce_device_attr *a, struct ibv_device_attr *o)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->fw_ver, a->fw_ver, sizeof(o->fw_ver));
	o->fw_ver[sizeof(o->fw_ver) - 1] = '\0';
	o->node_guid = a->node_guid;
	o->sys_image_guid = a->sys_image_guid;
	o->max_mr_size = a->max_mr_size;
	o->page_size_cap = a->page_size_cap;
	o->vendor_id = a->vendor_id;
	o->vendor_part_id = a->vendor_part_id;
	o->hw_ver = a->hw_ver;
	o->max_qp = (int)a->max_qp;
	o->max_qp_wr = (int)a->max_qp_wr;
	o->device_cap_flags = a->device_cap_flags;
	o->max_sge = (int)a->max_sge;
	o->max_sge_rd = (int)a->max_sge_rd;
	o->max_cq = (int)a->max_cq;
	o->max_cqe = (int)a->max_cqe;
	o->max_mr = (int)a->max_mr;
	o->max_pd = (int)a->max_pd;
	o->max_qp_rd_atom = (int)a->max_qp_rd_atom;
	o->max_res_rd_atom = (int)a->max_res_rd_atom;
	o->max_qp_init_rd_atom = (int)a->max_qp_init_rd_atom;
	o->atomic_cap = (enum ibv_atomic_cap)a->atomic_cap;
	o->max_mw = (int)a->max_mw;
	o->max_mcast_grp = (int)a->max_mcast_grp;
	o->max_mcast_qp_attach = (int)a->max_mcast_qp_attach;
	o->max_total_mcast_qp_attach = (int)a->max_total_mcast_qp_attach;
	o->max_ah = (int)a->max_ah;
	o->max_srq = (int)a->max_srq;
	o->max_srq_wr = (int)a->max_srq_wr;
	o->max_srq_sge = (int)a->max_srq_sge;
	o->max_pkeys = a->max_pkeys;
	o->local_ca_ack_delay = a->local_ca_ack_delay;
	o->phys_port_cnt = a->phys_port_cnt;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	struct uroce_device_attr a;
	int err = shim_query_dev_attr(shim_ctx(context), &a);

	if (err)
		return -err;
	to_verbs_attr(&a, device_attr);
	return 0;
}

int shim_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	struct uroce_device_attr a;
	int err;

	if (input && input->comp_mask)
		return EINVAL;
	/* The caller must at least have room for the legacy attributes. */
	if (attr_size < sizeof(struct ibv_device_attr))
		return EINVAL;
	err = shim_query_dev_attr(shim_ctx(context), &a);
	if (err)
		return -err;
	memset(&ex, 0, sizeof(ex));
	to_verbs_attr(&a, &ex.orig_attr);
	ex.device_cap_flags_ex = a.device_cap_flags | a.device_cap_flags_ex;
	ex.completion_timestamp_mask = a.completion_timestamp_mask;
	ex.hca_core_clock = a.hca_core_clock_khz;
	ex.cq_mod_caps.max_cq_count = (uint16_t)a.max_cq_moderation_count;
	ex.cq_mod_caps.max_cq_period = (uint16_t)a.max_cq_moderation_period;
	ex.phys_port_cnt_ex = a.phys_port_cnt;
	ex.odp_caps.general_caps = a.odp_general_caps;
	ex.odp_caps.per_transport_caps.rc_odp_caps = a.odp_rc_caps;
	ex.odp_caps.per_transport_caps.uc_odp_caps = a.odp_uc_caps;
	ex.odp_caps.per_transport_caps.ud_odp_caps = a.odp_ud_caps;
	ex.xrc_odp_caps = a.odp_xrc_caps;
	ex.max_dm_size = a.max_dm_size;
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

int shim_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
		    size_t port_attr_len)
{
	struct uroce_query_port_req req = {.hdr.op = UROCE_OP_QUERY_PORT, .port_num = port_num};
	struct uroce_query_port_resp resp;
	struct ibv_port_attr p;
	const struct uroce_port_attr *a = &resp.attr;
	int err;

	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err)
		return -err;
	memset(&p, 0, sizeof(p));
	p.state = (enum ibv_port_state)a->state;
	p.max_mtu = (enum ibv_mtu)a->max_mtu;
	p.active_mtu = (enum ibv_mtu)a->active_mtu;
	p.gid_tbl_len = (int)a->gid_tbl_len;
	p.port_cap_flags = a->port_cap_flags;
	p.max_msg_sz = a->max_msg_sz;
	p.bad_pkey_cntr = a->bad_pkey_cntr;
	p.qkey_viol_cntr = a->qkey_viol_cntr;
	p.pkey_tbl_len = a->pkey_tbl_len;
	p.lid = a->lid;
	p.sm_lid = a->sm_lid;
	p.lmc = a->lmc;
	p.max_vl_num = a->max_vl_num;
	p.sm_sl = a->sm_sl;
	p.subnet_timeout = a->subnet_timeout;
	p.init_type_reply = a->init_type_reply;
	p.active_width = a->active_width;
	p.active_speed = (uint8_t)a->active_speed;
	p.phys_state = a->phys_state;
	p.link_layer = a->link_layer;
	p.flags = a->flags;
	p.port_cap_flags2 = a->port_cap_flags2;
	memcpy(port_attr, &p, port_attr_len < sizeof(p) ? port_attr_len : sizeof(p));
	return 0;
}

/* The exported symbol takes the pre-port_cap_flags2 layout (48 bytes):
 * programs reach it when the context is not extended (ABI.md 2c). */
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return shim_query_port(context, port_num, (struct ibv_port_attr *)(void *)port_attr,
			       offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* One GID table entry from the daemon. 0, -ENODATA when empty, or -errno. */
static int query_gid_entry(struct ibv_context *context, uint32_t port_num, uint32_t index,
			   struct ibv_gid_entry *entry)
{
	struct uroce_query_port_req req = {
	    .hdr.op = UROCE_OP_QUERY_GID, .port_num = port_num, .index = index};
	struct uroce_query_gid_resp resp;
	int err;

	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (err)
		return err;
	if (!resp.valid)
		return -ENODATA;
	memset(entry, 0, sizeof(*entry));
	memcpy(entry->gid.raw, resp.gid, 16);
	entry->gid_index = index;
	entry->port_num = port_num;
	entry->gid_type =
	    resp.gid_type == UROCE_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	entry->ndev_ifindex = resp.ndev_ifindex;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int err;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	err = query_gid_entry(context, port_num, (uint32_t)index, &e);
	if (err == -ENODATA) { /* empty entries read as the zero GID */
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (err) {
		errno = -err;
		return -1;
	}
	memcpy(gid, &e.gid, sizeof(*gid));
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int err;

	if (flags)
		return EINVAL;
	if (entry_size < sizeof(e))
		return EINVAL;
	err = query_gid_entry(context, port_num, gid_index, &e);
	if (err)
		return -err;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_port_attr pa;
	size_t n = 0;
	int err;

	if (flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	err = shim_query_port(context, UROCE_PORT_NUM, &pa, sizeof(pa));
	if (err)
		return -err;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		err = query_gid_entry(context, UROCE_PORT_NUM, (uint32_t)i, &e);
		if (err == -ENODATA)
			continue;
		if (err)
			return err;
		/* Like rdma-core: a buffer too small for the table fails. */
		if (n >= max_entries)
			return -EINVAL;
		memcpy((char *)entries + n * entry_size, &e, sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;
	int err = query_gid_entry(context, port_num, index, &e);

	if (err == -ENODATA) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (err) {
		errno = -err;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_SYSFS_ROCE_V2
						   : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

static int query_pkey(struct ibv_context *context, uint8_t port_num, int index, uint16_t *pkey)
{
	struct uroce_query_port_req req = {
	    .hdr.op = UROCE_OP_QUERY_PKEY, .port_num = port_num, .index = (uint32_t)index};
	struct uroce_query_pkey_resp resp;
	int err;

	if (index < 0)
		return -EINVAL;
	err = shim_call(shim_ctx(context), &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	if (!err)
		*pkey = resp.pkey;
	return err;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	uint16_t v;
	int err = query_pkey(context, port_num, index, &v);

	if (err) {
		errno = -err;
		return -1;
	}
	*pkey = htobe16(v);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	uint16_t v;

	for (int i = 0; i < UROCE_PKEY_TBL_LEN; i++) {
		int err = query_pkey(context, port_num, i, &v);

		if (err) {
			errno = -err;
			return -1;
		}
		if (htobe16(v) == pkey)
			return i;
	}
	errno = ENOENT;
	return -1;
}

int shim_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	struct uroce_device_attr a;
	int err;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	err = shim_query_dev_attr(shim_ctx(context), &a);
	if (err)
		return -err;
	/* A raw clock exists only if the device reports its frequency. */
	if (!a.hca_core_clock_khz)
		return EOPNOTSUPP;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)
		clock_gettime(CLOCK_MONOTONIC, &values->raw_clock);
	return 0;
}
