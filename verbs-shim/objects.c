/* SPDX-License-Identifier: MIT */
/*
 * Per-context registry from daemon object handles to the shim's objects.
 * Completion-channel and async event records name objects by handle; the
 * registry turns a handle back into the pointer the application was given,
 * and drops records for objects destroyed in the meantime (the kernel
 * removes such events from its queues; a pipe cannot, so the reader skips
 * them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "shim.h"

static struct shim_obj_entry **bucket(struct shim_context *ctx, uint32_t h)
{
	return &ctx->objs[(h * 2654435769u >> 8) % SHIM_OBJ_BUCKETS];
}

int shim_obj_add(struct shim_context *ctx, uint32_t handle, enum shim_obj_kind kind, void *obj)
{
	struct shim_obj_entry *e = malloc(sizeof(*e));
	struct shim_obj_entry **b;

	if (!e)
		return -ENOMEM;
	e->handle = handle;
	e->kind = kind;
	e->obj = obj;
	pthread_mutex_lock(&ctx->obj_lock);
	b = bucket(ctx, handle);
	e->next = *b;
	*b = e;
	pthread_mutex_unlock(&ctx->obj_lock);
	return 0;
}

void shim_obj_del(struct shim_context *ctx, uint32_t handle)
{
	struct shim_obj_entry **pp, *e;

	pthread_mutex_lock(&ctx->obj_lock);
	for (pp = bucket(ctx, handle); (e = *pp); pp = &e->next) {
		if (e->handle == handle) {
			*pp = e->next;
			free(e);
			break;
		}
	}
	pthread_mutex_unlock(&ctx->obj_lock);
}

void *shim_obj_get(struct shim_context *ctx, uint32_t handle, enum shim_obj_kind kind,
		   void (*fn)(void *obj))
{
	struct shim_obj_entry *e;
	void *obj = NULL;

	pthread_mutex_lock(&ctx->obj_lock);
	for (e = *bucket(ctx, handle); e; e = e->next) {
		if (e->handle == handle && e->kind == kind) {
			obj = e->obj;
			if (fn)
				fn(obj);
			break;
		}
	}
	pthread_mutex_unlock(&ctx->obj_lock);
	return obj;
}

void shim_obj_each(struct shim_context *ctx, enum shim_obj_kind kind,
		   void (*fn)(void *obj, void *arg), void *arg)
{
	pthread_mutex_lock(&ctx->obj_lock);
	for (int b = 0; b < SHIM_OBJ_BUCKETS; b++)
		for (struct shim_obj_entry *e = ctx->objs[b]; e; e = e->next)
			if (e->kind == kind)
				fn(e->obj, arg);
	pthread_mutex_unlock(&ctx->obj_lock);
}
