/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous events: ibv_get_async_event reads one record from the
 * context's async pipe (a real, pollable fd: context->async_fd, blocking
 * unless the application set O_NONBLOCK) and resolves the object it names;
 * ibv_ack_async_event acknowledges it so that destroying the object, which
 * waits for all its events to be acknowledged, can complete. When the
 * daemon goes away the pipe reports end of file, surfaced once as
 * IBV_EVENT_DEVICE_FATAL, as a NIC that dies does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "shim.h"

static void count_cq(void *obj)
{
	((struct shim_cq *)obj)->async_events_reported++;
}

static void count_qp(void *obj)
{
	((struct shim_qp *)obj)->events_reported++;
}

static void count_srq(void *obj)
{
	((struct shim_srq *)obj)->events_reported++;
}

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct shim_context *c = shim_ctx(context);
	struct uroce_async_event rec;
	void *obj;

	for (;;) {
		ssize_t n = read(context->async_fd, &rec, sizeof(rec));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1; /* EAGAIN with O_NONBLOCK, or a real error */
		}
		if (n == 0) {
			if (__atomic_exchange_n(&c->async_eof, 1, __ATOMIC_ACQ_REL)) {
				errno = EIO;
				return -1;
			}
			event->event_type = IBV_EVENT_DEVICE_FATAL;
			event->element.port_num = 0;
			return 0;
		}
		if (n != sizeof(rec)) {
			errno = EIO;
			return -1;
		}
		event->event_type = (enum ibv_event_type)rec.event_type;
		switch (rec.event_type) {
		case UROCE_EVENT_CQ_ERR:
			obj = shim_obj_get(c, rec.handle, SHIM_OBJ_CQ, count_cq);
			if (!obj)
				continue; /* CQ destroyed meanwhile */
			event->element.cq = ibv_cq_ex_to_cq(&((struct shim_cq *)obj)->cqx);
			return 0;
		case UROCE_EVENT_SRQ_ERR:
		case UROCE_EVENT_SRQ_LIMIT_REACHED:
			obj = shim_obj_get(c, rec.handle, SHIM_OBJ_SRQ, count_srq);
			if (!obj)
				continue;
			event->element.srq = &((struct shim_srq *)obj)->srq;
			return 0;
		case UROCE_EVENT_PORT_ACTIVE:
		case UROCE_EVENT_PORT_ERR:
		case UROCE_EVENT_LID_CHANGE:
		case UROCE_EVENT_PKEY_CHANGE:
		case UROCE_EVENT_SM_CHANGE:
		case UROCE_EVENT_CLIENT_REREGISTER:
		case UROCE_EVENT_GID_CHANGE:
			event->element.port_num = (int)rec.handle;
			return 0;
		case UROCE_EVENT_DEVICE_FATAL:
			event->element.port_num = 0;
			return 0;
		default: /* QP events */
			obj = shim_obj_get(c, rec.handle, SHIM_OBJ_QP, count_qp);
			if (!obj)
				continue;
			event->element.qp = &((struct shim_qp *)obj)->qpx.qp_base;
			return 0;
		}
	}
}

static void ack(pthread_mutex_t *m, pthread_cond_t *cond, uint32_t *counter)
{
	pthread_mutex_lock(m);
	(*counter)++;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(m);
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		ack(&cq->mutex, &cq->cond, &cq->async_events_completed);
		return;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		ack(&qp->mutex, &qp->cond, &qp->events_completed);
		return;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		ack(&srq->mutex, &srq->cond, &srq->events_completed);
		return;
	}
	default:
		return;
	}
}
