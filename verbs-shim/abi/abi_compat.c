/* SPDX-License-Identifier: MIT */
/*
 * abi_compat.c: the compatibility symbols of libibverbs, i.e. the versions
 * that are exported but are nobody's default: 33 functions of the original
 * IBVERBS_1.0 ABI (name@IBVERBS_1.0) and ibv_register_driver@IBVERBS_1.1.
 *
 * The 1.0 ABI predates the current structures: its device, context, PD, CQ,
 * QP, SRQ, AH and MR objects had other layouts (rdma-core keeps wrappers
 * that translate). Only binaries linked against libibverbs 1.0 (2006) bind
 * to these; none of the programs uroce targets does (they all use the
 * @IBVERBS_1.1 defaults, which the daemon-backed part of the shim defines).
 * uroce does not translate the old layouts: every 1.0 call fails as the
 * verbs API defines failure for that call, with errno EOPNOTSUPP:
 *   constructors                        NULL
 *   close_device, get_async_event,
 *   query_gid, query_pkey, get_cq_event -1
 *   other int calls                     EOPNOTSUPP
 *   get_device_name                     NULL; get_device_guid 0
 *   void calls (free_device_list, ack_*) nothing (no 1.0 object exists)
 * ibv_register_driver@IBVERBS_1.1 is the pre-rdma-core provider hook; as in
 * rdma-core 44 it accepts the call and does nothing.
 *
 * Each function is defined under a shim_v1_0_* (or shim_v1_1_*) name and
 * bound to its exported name with .symver; libibverbs.map explains why the
 * names are not listed there.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"

/* The old signatures are kept only for the ABI; the arguments are unused. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* Objects of the 1.0 ABI; never created, so never completed. */
struct ibv_device_1_0;
struct ibv_context_1_0;
struct ibv_pd_1_0;
struct ibv_mr_1_0;
struct ibv_cq_1_0;
struct ibv_srq_1_0;
struct ibv_qp_1_0;
struct ibv_ah_1_0;
struct ibv_qp_init_attr_1_0;

typedef struct ibv_device *(*shim_driver_init_cb)(const char *uverbs_sys_path, int abi_version);

#define SHIM_SYMVER(impl, name, node) __asm__(".symver " #impl ", " #name "@" node)
#define SHIM_V1_0(name) SHIM_SYMVER(shim_v1_0_##name, ibv_##name, "IBVERBS_1.0")

struct ibv_device_1_0 **shim_v1_0_get_device_list(int *num);
void shim_v1_0_free_device_list(struct ibv_device_1_0 **list);
const char *shim_v1_0_get_device_name(struct ibv_device_1_0 *device);
__be64 shim_v1_0_get_device_guid(struct ibv_device_1_0 *device);
struct ibv_context_1_0 *shim_v1_0_open_device(struct ibv_device_1_0 *device);
int shim_v1_0_close_device(struct ibv_context_1_0 *context);
int shim_v1_0_get_async_event(struct ibv_context_1_0 *context, struct ibv_async_event *event);
void shim_v1_0_ack_async_event(struct ibv_async_event *event);
int shim_v1_0_query_device(struct ibv_context_1_0 *context, struct ibv_device_attr *device_attr);
int shim_v1_0_query_port(struct ibv_context_1_0 *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr);
int shim_v1_0_query_gid(struct ibv_context_1_0 *context, uint8_t port_num, int index,
			union ibv_gid *gid);
int shim_v1_0_query_pkey(struct ibv_context_1_0 *context, uint8_t port_num, int index,
			 __be16 *pkey);
struct ibv_pd_1_0 *shim_v1_0_alloc_pd(struct ibv_context_1_0 *context);
int shim_v1_0_dealloc_pd(struct ibv_pd_1_0 *pd);
struct ibv_mr_1_0 *shim_v1_0_reg_mr(struct ibv_pd_1_0 *pd, void *addr, size_t length, int access);
int shim_v1_0_dereg_mr(struct ibv_mr_1_0 *mr);
struct ibv_cq_1_0 *shim_v1_0_create_cq(struct ibv_context_1_0 *context, int cqe, void *cq_context,
				       struct ibv_comp_channel *channel, int comp_vector);
int shim_v1_0_resize_cq(struct ibv_cq_1_0 *cq, int cqe);
int shim_v1_0_destroy_cq(struct ibv_cq_1_0 *cq);
int shim_v1_0_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq_1_0 **cq,
			   void **cq_context);
void shim_v1_0_ack_cq_events(struct ibv_cq_1_0 *cq, unsigned int nevents);
struct ibv_srq_1_0 *shim_v1_0_create_srq(struct ibv_pd_1_0 *pd,
					 struct ibv_srq_init_attr *srq_init_attr);
int shim_v1_0_modify_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
int shim_v1_0_query_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *srq_attr);
int shim_v1_0_destroy_srq(struct ibv_srq_1_0 *srq);
struct ibv_qp_1_0 *shim_v1_0_create_qp(struct ibv_pd_1_0 *pd,
				       struct ibv_qp_init_attr_1_0 *qp_init_attr);
int shim_v1_0_query_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int attr_mask,
		       struct ibv_qp_init_attr_1_0 *init_attr);
int shim_v1_0_modify_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int attr_mask);
int shim_v1_0_destroy_qp(struct ibv_qp_1_0 *qp);
struct ibv_ah_1_0 *shim_v1_0_create_ah(struct ibv_pd_1_0 *pd, struct ibv_ah_attr *attr);
int shim_v1_0_destroy_ah(struct ibv_ah_1_0 *ah);
int shim_v1_0_attach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid);
int shim_v1_0_detach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid);
void shim_v1_1_register_driver(const char *name, shim_driver_init_cb init_func);

/* Failure of a call returning an object pointer. */
static void *shim_v1_0_null(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* Failure of a call documented as "0 or -1 with errno". */
static int shim_v1_0_minus_one(void)
{
	errno = EOPNOTSUPP;
	return -1;
}

/* Failure of a call documented as "0 or the errno value". */
static int shim_v1_0_errno(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

struct ibv_device_1_0 **shim_v1_0_get_device_list(int *num)
{
	return shim_v1_0_null();
}
SHIM_V1_0(get_device_list);

void shim_v1_0_free_device_list(struct ibv_device_1_0 **list)
{
}
SHIM_V1_0(free_device_list);

const char *shim_v1_0_get_device_name(struct ibv_device_1_0 *device)
{
	return shim_v1_0_null();
}
SHIM_V1_0(get_device_name);

__be64 shim_v1_0_get_device_guid(struct ibv_device_1_0 *device)
{
	errno = EOPNOTSUPP;
	return 0;
}
SHIM_V1_0(get_device_guid);

struct ibv_context_1_0 *shim_v1_0_open_device(struct ibv_device_1_0 *device)
{
	return shim_v1_0_null();
}
SHIM_V1_0(open_device);

int shim_v1_0_close_device(struct ibv_context_1_0 *context)
{
	return shim_v1_0_minus_one();
}
SHIM_V1_0(close_device);

int shim_v1_0_get_async_event(struct ibv_context_1_0 *context, struct ibv_async_event *event)
{
	return shim_v1_0_minus_one();
}
SHIM_V1_0(get_async_event);

void shim_v1_0_ack_async_event(struct ibv_async_event *event)
{
}
SHIM_V1_0(ack_async_event);

int shim_v1_0_query_device(struct ibv_context_1_0 *context, struct ibv_device_attr *device_attr)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(query_device);

int shim_v1_0_query_port(struct ibv_context_1_0 *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(query_port);

int shim_v1_0_query_gid(struct ibv_context_1_0 *context, uint8_t port_num, int index,
			union ibv_gid *gid)
{
	return shim_v1_0_minus_one();
}
SHIM_V1_0(query_gid);

int shim_v1_0_query_pkey(struct ibv_context_1_0 *context, uint8_t port_num, int index, __be16 *pkey)
{
	return shim_v1_0_minus_one();
}
SHIM_V1_0(query_pkey);

struct ibv_pd_1_0 *shim_v1_0_alloc_pd(struct ibv_context_1_0 *context)
{
	return shim_v1_0_null();
}
SHIM_V1_0(alloc_pd);

int shim_v1_0_dealloc_pd(struct ibv_pd_1_0 *pd)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(dealloc_pd);

struct ibv_mr_1_0 *shim_v1_0_reg_mr(struct ibv_pd_1_0 *pd, void *addr, size_t length, int access)
{
	return shim_v1_0_null();
}
SHIM_V1_0(reg_mr);

int shim_v1_0_dereg_mr(struct ibv_mr_1_0 *mr)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(dereg_mr);

struct ibv_cq_1_0 *shim_v1_0_create_cq(struct ibv_context_1_0 *context, int cqe, void *cq_context,
				       struct ibv_comp_channel *channel, int comp_vector)
{
	return shim_v1_0_null();
}
SHIM_V1_0(create_cq);

int shim_v1_0_resize_cq(struct ibv_cq_1_0 *cq, int cqe)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(resize_cq);

int shim_v1_0_destroy_cq(struct ibv_cq_1_0 *cq)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(destroy_cq);

int shim_v1_0_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq_1_0 **cq,
			   void **cq_context)
{
	return shim_v1_0_minus_one();
}
SHIM_V1_0(get_cq_event);

void shim_v1_0_ack_cq_events(struct ibv_cq_1_0 *cq, unsigned int nevents)
{
}
SHIM_V1_0(ack_cq_events);

struct ibv_srq_1_0 *shim_v1_0_create_srq(struct ibv_pd_1_0 *pd,
					 struct ibv_srq_init_attr *srq_init_attr)
{
	return shim_v1_0_null();
}
SHIM_V1_0(create_srq);

int shim_v1_0_modify_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(modify_srq);

int shim_v1_0_query_srq(struct ibv_srq_1_0 *srq, struct ibv_srq_attr *srq_attr)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(query_srq);

int shim_v1_0_destroy_srq(struct ibv_srq_1_0 *srq)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(destroy_srq);

struct ibv_qp_1_0 *shim_v1_0_create_qp(struct ibv_pd_1_0 *pd,
				       struct ibv_qp_init_attr_1_0 *qp_init_attr)
{
	return shim_v1_0_null();
}
SHIM_V1_0(create_qp);

int shim_v1_0_query_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int attr_mask,
		       struct ibv_qp_init_attr_1_0 *init_attr)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(query_qp);

int shim_v1_0_modify_qp(struct ibv_qp_1_0 *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(modify_qp);

int shim_v1_0_destroy_qp(struct ibv_qp_1_0 *qp)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(destroy_qp);

struct ibv_ah_1_0 *shim_v1_0_create_ah(struct ibv_pd_1_0 *pd, struct ibv_ah_attr *attr)
{
	return shim_v1_0_null();
}
SHIM_V1_0(create_ah);

int shim_v1_0_destroy_ah(struct ibv_ah_1_0 *ah)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(destroy_ah);

int shim_v1_0_attach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(attach_mcast);

int shim_v1_0_detach_mcast(struct ibv_qp_1_0 *qp, union ibv_gid *gid, uint16_t lid)
{
	return shim_v1_0_errno();
}
SHIM_V1_0(detach_mcast);

void shim_v1_1_register_driver(const char *name, shim_driver_init_cb init_func)
{
}
SHIM_SYMVER(shim_v1_1_register_driver, ibv_register_driver, "IBVERBS_1.1");
