/* SPDX-License-Identifier: MIT */
/*
 * Devices and contexts: the device list (one ibv_device per live daemon
 * socket in the rundir, probed with HELLO), device names, GUIDs and
 * indices, and ibv_open_device/ibv_close_device, which build the extended
 * verbs context (struct verbs_context with sz = 648 and abi_compat =
 * __VERBS_ABI_IS_EXTENDED, ABI.md 2b) on top of one daemon connection.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "shim.h"
#include "rundir.h"

/* Device reference counts (lists and contexts share devices). */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;

/* Which daemon may ptrace-attach us (process_vm_readv/writev, the DMA
 * engine) where Yama restricts it: PR_SET_PTRACER names one pid per process.
 * With contexts on two daemons in one process, only "any process of this
 * user" covers both. The setting is per process, so a forked child (new
 * pid) starts over. */
static pid_t ptracer_process;
static long ptracer_daemon; /* 0: none yet, -1: PR_SET_PTRACER_ANY */

/*
 * The pid to name in PR_SET_PTRACER for the daemon at the other end of fd,
 * or 0 when it must not be trusted with our memory: asked of the kernel
 * (SO_PEERCRED) right before, not taken from what the daemon said, and
 * only a daemon of our own user or root qualifies.
 */
static pid_t daemon_ptracer(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0 ||
	    (cred.uid != getuid() && cred.uid != 0))
		return 0;
	return cred.pid;
}

static void allow_daemon_dma(pid_t daemon_pid)
{
	pid_t me = getpid();

	pthread_mutex_lock(&dev_lock);
	if (ptracer_process != me) {
		ptracer_process = me;
		ptracer_daemon = 0;
	}
	if (ptracer_daemon == 0) {
		ptracer_daemon = daemon_pid;
		/* EINVAL where Yama is absent: nothing to allow then. */
		prctl(PR_SET_PTRACER, (unsigned long)daemon_pid, 0, 0, 0);
	} else if (ptracer_daemon != -1 && ptracer_daemon != daemon_pid) {
		ptracer_daemon = -1;
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	}
	pthread_mutex_unlock(&dev_lock);
}

void shim_device_put(struct shim_device *dev)
{
	int last;

	pthread_mutex_lock(&dev_lock);
	last = --dev->refcnt == 0;
	pthread_mutex_unlock(&dev_lock);
	if (last)
		free(dev);
}

static void device_get(struct shim_device *dev)
{
	pthread_mutex_lock(&dev_lock);
	dev->refcnt++;
	pthread_mutex_unlock(&dev_lock);
}

/* Ask one socket who it is. NULL if nothing (alive) answers. */
static struct shim_device *probe(const char *sock_path)
{
	struct uroce_hello_req req = {.hdr.op = UROCE_OP_HELLO, .version = UROCE_UAPI_VERSION};
	struct uroce_hello_resp resp;
	struct timeval tv = {.tv_sec = 2};
	struct shim_device *d;
	int fd, err;

	fd = common_rundir_connect(sock_path);
	if (fd < 0)
		return NULL;
	/* A hung daemon must not hang ibv_get_device_list. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	err = shim_exchange(fd, 1, &req, sizeof(req), &resp, sizeof(resp), NULL, 0, NULL);
	close(fd);
	if (err || resp.version != UROCE_UAPI_VERSION)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	resp.name[sizeof(resp.name) - 1] = '\0';
	d->dev.node_type = IBV_NODE_CA;
	d->dev.transport_type = IBV_TRANSPORT_IB;
	/* ibdev_path is the device's directory in the sysfs view (sysview.c),
	 * where ibv_devinfo reads board_id. */
	if (snprintf(d->dev.name, sizeof(d->dev.name), "%s", resp.name) >=
		(int)sizeof(d->dev.name) ||
	    snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "%s", resp.name) >=
		(int)sizeof(d->dev.dev_name) ||
	    snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "%s", sock_path) >=
		(int)sizeof(d->dev.dev_path) ||
	    snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/sys/class/infiniband/%s",
		     resp.name) >= (int)sizeof(d->dev.ibdev_path) ||
	    snprintf(d->sock_path, sizeof(d->sock_path), "%s", sock_path) >=
		(int)sizeof(d->sock_path)) {
		free(d);
		return NULL;
	}
	resp.addr[sizeof(resp.addr) - 1] = '\0';
	memcpy(d->addr, resp.addr, sizeof(d->addr));
	d->guid = resp.node_guid;
	d->daemon_pid = resp.daemon_pid;
	d->active_mtu = resp.active_mtu;
	d->refcnt = 1;
	return d;
}

static int by_name(const void *a, const void *b)
{
	const struct shim_device *x = *(struct shim_device *const *)a;
	const struct shim_device *y = *(struct shim_device *const *)b;

	return strcmp(x->dev.name, y->dev.name);
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct shim_device **list = NULL;
	char rundir[256], path[512];
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *dir;

	if (num_devices)
		*num_devices = 0;
	if (common_rundir_resolve(NULL, rundir, sizeof(rundir)))
		return shim_fail_null(-ENAMETOOLONG);
	dir = opendir(rundir);
	if (dir) {
		while ((e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			struct shim_device *d;

			if (len <= 5 || e->d_name[0] == '.' ||
			    strcmp(e->d_name + len - 5, UROCE_SOCK_SUFFIX))
				continue;
			if (snprintf(path, sizeof(path), "%s/%s", rundir, e->d_name) >= 108)
				continue;
			d = probe(path);
			if (!d)
				continue; /* stale socket file */
			if (n + 1 >= cap) {
				size_t ncap = cap ? cap * 2 : 8;
				void *p = realloc(list, ncap * sizeof(*list));

				if (!p) {
					free(d);
					break;
				}
				list = p;
				cap = ncap;
			}
			list[n++] = d;
		}
		closedir(dir);
	}
	if (!list) {
		list = calloc(1, sizeof(*list));
		if (!list)
			return shim_fail_null(-ENOMEM);
	}
	qsort(list, n, sizeof(*list), by_name);
	list[n] = NULL;
	if (num_devices)
		*num_devices = (int)n;
	/* struct ibv_device is the first member of struct shim_device. */
	return (struct ibv_device **)(void *)list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	if (!list)
		return;
	for (struct ibv_device **p = list; *p; p++)
		shim_device_put(SHIM_CONTAINER_OF(*p, struct shim_device, dev));
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return SHIM_CONTAINER_OF(device, struct shim_device, dev)->guid;
}

int ibv_get_device_index(struct ibv_device *device)
{
	/* Kernel devices have a small unique index; a daemon's pid is unique
	 * among live devices and stable for the device's life. */
	return (int)SHIM_CONTAINER_OF(device, struct shim_device, dev)->daemon_pid;
}

static void fill_ops(struct shim_context *c)
{
	struct verbs_context *v = &c->vctx;
	struct ibv_context *ctx = &v->context;

	v->sz = sizeof(struct verbs_context);
	v->query_port = shim_query_port;
	v->query_device_ex = shim_query_device_ex;
	v->query_rt_values = shim_query_rt_values;
	v->create_cq_ex = shim_create_cq_ex;
	v->create_qp_ex = shim_create_qp_ex;
	v->create_srq_ex = shim_create_srq_ex;
	v->get_srq_num = shim_get_srq_num;
	v->open_xrcd = shim_open_xrcd;
	v->close_xrcd = shim_close_xrcd;
	v->open_qp = shim_open_qp;
	v->advise_mr = shim_advise_mr;
	v->alloc_dm = shim_alloc_dm;
	v->free_dm = shim_free_dm;
	v->reg_dm_mr = shim_reg_dm_mr;
	v->alloc_td = shim_alloc_td;
	v->dealloc_td = shim_dealloc_td;
	v->alloc_parent_domain = shim_alloc_parent_domain;

	ctx->ops.poll_cq = shim_poll_cq;
	ctx->ops.req_notify_cq = shim_req_notify_cq;
	ctx->ops.post_send = shim_post_send;
	ctx->ops.post_recv = shim_post_recv;
	ctx->ops.post_srq_recv = shim_post_srq_recv;
	ctx->ops.alloc_mw = shim_alloc_mw;
	ctx->ops.bind_mw = shim_bind_mw;
	ctx->ops.dealloc_mw = shim_dealloc_mw;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct shim_device *dev = SHIM_CONTAINER_OF(device, struct shim_device, dev);
	struct uroce_open_ctx_req req = {.hdr.op = UROCE_OP_OPEN_CTX,
					 .version = UROCE_UAPI_VERSION};
	struct uroce_open_ctx_resp resp;
	struct shim_context *c;
	int fds[4], nfds, fd, err;
	pid_t ptracer = 0;
	void *status, *sq_db = MAP_FAILED;

	fd = common_rundir_connect(dev->sock_path);
	if (fd < 0)
		return shim_fail_null(fd == -ECONNREFUSED || fd == -ENOENT ? -ENODEV : fd);
	err = shim_exchange(fd, 1, &req, sizeof(req), &resp, sizeof(resp), fds, 4, &nfds);
	if (!err && (nfds != 4 || resp.sq_doorbells_bytes != sizeof(struct uroce_sq_doorbells))) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		err = -EPROTO;
	}
	if (!err && !(ptracer = daemon_ptracer(fd))) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		err = -EPERM;
	}
	if (err) {
		close(fd);
		return shim_fail_null(err == -EIO ? -ENODEV : err);
	}
	status = mmap(NULL, resp.status_page_bytes, PROT_READ, MAP_SHARED, fds[2], 0);
	close(fds[2]);
	if (status != MAP_FAILED)
		sq_db = mmap(NULL, sizeof(struct uroce_sq_doorbells), PROT_READ | PROT_WRITE,
			     MAP_SHARED, fds[3], 0);
	close(fds[3]);
	c = calloc(1, sizeof(*c));
	if (c)
		c->call = shim_call_page_new();
	if (status == MAP_FAILED || sq_db == MAP_FAILED || !c || !c->call) {
		err = status == MAP_FAILED || sq_db == MAP_FAILED ? errno : ENOMEM;
		if (status != MAP_FAILED)
			munmap(status, resp.status_page_bytes);
		if (sq_db != MAP_FAILED)
			munmap(sq_db, sizeof(struct uroce_sq_doorbells));
		if (c && c->call)
			shim_call_page_free(c->call);
		free(c);
		close(fds[0]);
		close(fds[1]);
		close(fd);
		errno = err;
		return NULL;
	}
	c->pid = getpid();
	c->dev = dev;
	device_get(dev);
	c->fd = fd;
	c->doorbell_fd = fds[0];
	c->handle = resp.ctx_handle;
	c->daemon_pid = resp.daemon_pid;
	c->status = status;
	c->sq_db = sq_db;
	pthread_mutex_init(&c->obj_lock, NULL);
	pthread_rwlock_init(&c->lkey_lock, NULL);
	c->vctx.context.device = device;
	c->vctx.context.cmd_fd = fd;
	c->vctx.context.async_fd = fds[1];
	c->vctx.context.num_comp_vectors = (int)resp.num_comp_vectors;
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	fill_ops(c);
	allow_daemon_dma(ptracer);
	return &c->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct shim_context *c = shim_ctx(context);

	/* Closing the connection makes the daemon release every object of
	 * the context, as closing a uverbs file does. */
	close(c->fd);
	close(c->doorbell_fd);
	close(context->async_fd);
	munmap((void *)c->status, UROCE_STATUS_PAGE_BYTES);
	munmap(c->sq_db, sizeof(struct uroce_sq_doorbells));
	for (int i = 0; i < SHIM_OBJ_BUCKETS; i++) {
		while (c->objs[i]) {
			struct shim_obj_entry *e = c->objs[i];

			c->objs[i] = e->next;
			free(e);
		}
	}
	shim_lkey_free_all(c);
	shim_call_page_free(c->call);
	pthread_mutex_destroy(&c->obj_lock);
	pthread_rwlock_destroy(&c->lkey_lock);
	pthread_mutex_destroy(&context->mutex);
	shim_device_put(c->dev);
	free(c);
	return 0;
}
