/* SPDX-License-Identifier: MIT */
/*
 * Completion queues and completion channels. ibv_poll_cq and the extended
 * polling API (ibv_start_poll/next_poll/end_poll/ibv_wc_read_*) read CQEs
 * straight from the shared ring the daemon fills: no system call. Arming
 * (ibv_req_notify_cq) is a store into the ring header; the daemon writes one
 * event record to the channel's pipe when a matching completion arrives,
 * and ibv_get_cq_event reads it, or, while a thread waits there, hands the
 * event over in the channel's word of shared memory (uapi.h, chan_event[]).
 * Destroying a CQ waits until every event it produced was acknowledged, as
 * libibverbs does. When the daemon is gone, a CQ's last real CQEs are
 * followed by the flush completions of what was outstanding (fatal.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#define SUPPORTED_WC_FLAGS                                                      \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |      \
	 IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |  \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

_Static_assert((int)UROCE_WC_RECV == (int)IBV_WC_RECV, "wc opcode values");
_Static_assert((int)UROCE_WC_WR_FLUSH_ERR == (int)IBV_WC_WR_FLUSH_ERR, "wc status values");
_Static_assert((int)UROCE_WC_WITH_IMM == (int)IBV_WC_WITH_IMM &&
		   (int)UROCE_WC_WITH_INV == (int)IBV_WC_WITH_INV,
	       "wc flag values");

/* ------------------------------------------------------------------------ */
/* Completion channels.                                                      */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct uroce_msg_hdr req = {.op = UROCE_OP_CREATE_CHANNEL};
	struct uroce_channel_resp resp;
	struct shim_context *c = shim_ctx(context);
	struct shim_channel *ch;
	int fd, nfds, err;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return shim_fail_null(-ENOMEM);
	err = shim_call(c, &req, sizeof(req), &resp, sizeof(resp), &fd, 1, &nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (err) {
		free(ch);
		return shim_fail_null(err);
	}
	if (resp.event_slot < UROCE_CHAN_EVENT_SLOTS && c->sq_db)
		ch->ev = &c->sq_db->chan_event[resp.event_slot];
	ch->ch.context = context;
	ch->ch.fd = fd;
	ch->ch.refcnt = 0;
	ch->handle = resp.handle;
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct shim_channel *ch = SHIM_CONTAINER_OF(channel, struct shim_channel, ch);
	int err;

	pthread_mutex_lock(&channel->context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&channel->context->mutex);
		return EBUSY;
	}
	err = shim_call_simple(shim_ctx(channel->context), UROCE_OP_DESTROY_CHANNEL, ch->handle);
	pthread_mutex_unlock(&channel->context->mutex);
	if (err)
		return -err;
	close(channel->fd);
	free(ch);
	return 0;
}

static void count_comp_event(void *obj)
{
	((struct shim_cq *)obj)->comp_events_reported++;
}

/*
 * Before a blocking wait for an event, look for one for up to
 * SHIM_EVENT_SPIN_US (about one round trip between two RNICs of one host),
 * yielding the CPU between looks: a thread that blocks at once is woken
 * through the scheduler, which on an idle virtual CPU (halted) costs tens of
 * microseconds per event, more than the round trip itself. A channel the
 * program made non-blocking is read at once, as it asked.
 *
 * With the channel's slot in the doorbell page (uapi.h, chan_event[]) no
 * look is a system call: the thread marks the word WATCHED, the daemon
 * hands it the next event there instead of writing it to the pipe, and a
 * record already in the pipe shows as the daemon's count of records piped
 * being ahead of ours (a system call costs more than a microsecond on a
 * virtual machine). Without a slot, each look polls the pipe.
 *
 * Whether to look at all is measured per channel, in trials that all
 * programs of the host hold at the same moments (look.h): where looking
 * threads only take turns at a core from the daemons, a channel blocks at
 * once.
 */
#define SHIM_EVENT_SPIN_US 50

/* A wait that found no event at the call: when it began (0: not timed) and
 * whether it looked first (look.h). */
struct shim_wait {
	uint64_t start;
	enum shim_look_way way;
};

/* Take the event waiting in the word, if one does: its CQ handle, or 0. */
static uint32_t event_take(struct uroce_chan_event *ev)
{
	uint64_t w = __atomic_load_n(&ev->word, __ATOMIC_ACQUIRE);

	while (UROCE_CHAN_EV_STATE(w) == UROCE_CHAN_EV_FIRED) {
		if (__atomic_compare_exchange_n(&ev->word, &w, UROCE_CHAN_EV_IDLE, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return UROCE_CHAN_EV_CQ(w);
	}
	return 0;
}

/* Stop watching: WATCHED back to IDLE, or take the event the daemon left. */
static uint32_t event_unwatch(struct uroce_chan_event *ev)
{
	uint64_t watched = UROCE_CHAN_EV_WATCHED;

	if (__atomic_compare_exchange_n(&ev->word, &watched, UROCE_CHAN_EV_IDLE, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	return event_take(ev);
}

/* Has the daemon written a record to the pipe that no thread read yet? */
static bool event_piped(struct shim_channel *ch)
{
	return __atomic_load_n(&ch->ev->piped, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&ch->piped_read, __ATOMIC_RELAXED);
}

static bool pipe_ready(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) != 0;
}

/*
 * Look for an event before reading the pipe: the CQ handle of one handed
 * over in memory, or 0 when the pipe is to be read (a record is there, the
 * time is up, or the channel is non-blocking).
 */
static uint32_t event_spin(struct shim_channel *ch, struct shim_wait *w)
{
	struct uroce_chan_event *ev = ch->ev;
	uint64_t end, idle = UROCE_CHAN_EV_IDLE;
	int fd = ch->ch.fd, fl;
	uint32_t cq;

	w->start = 0;
	w->way = SHIM_LOOK_LOOK;
	if (ev && ((cq = event_take(ev)) || event_piped(ch)))
		return cq;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return 0;
	w->start = shim_now_ns();
	w->way = shim_look_way(&ch->look, w->start);
	if (w->way == SHIM_LOOK_BLOCK)
		return 0;
	end = w->start + SHIM_EVENT_SPIN_US * 1000u;
	if (!ev) {
		while (!pipe_ready(fd) && shim_now_ns() < end)
			sched_yield();
		return 0;
	}
	/* Another thread may watch already; an event may wait there. */
	if (!__atomic_compare_exchange_n(&ev->word, &idle, UROCE_CHAN_EV_WATCHED, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    (cq = event_take(ev)))
		return cq;
	/* From here on an event comes in memory, unless another thread of the
	 * program stops watching meanwhile: then the count shows it piped. */
	while (!(cq = event_take(ev)) && !event_piped(ch) && shim_now_ns() < end)
		sched_yield();
	return cq ? cq : event_unwatch(ev);
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct shim_channel *ch = SHIM_CONTAINER_OF(channel, struct shim_channel, ch);
	struct shim_context *c = shim_ctx(channel->context);
	struct shim_cq *scq;

	for (;;) {
		struct uroce_comp_event ev;
		struct shim_wait w;
		uint32_t handle = event_spin(ch, &w);

		if (!handle) {
			ssize_t n = read(channel->fd, &ev, sizeof(ev));

			/* As rdma-core: a signal interrupts the wait (EINTR), and
			 * programs rely on it (qperf ends its tests with SIGALRM). */
			if (n < 0)
				return -1; /* EINTR, or EAGAIN on a non-blocking channel */
			if (n != sizeof(ev)) {
				errno = EIO; /* the daemon went away */
				return -1;
			}
			__atomic_fetch_add(&ch->piped_read, 1, __ATOMIC_RELAXED);
			handle = ev.cq_handle;
		}
		if (w.start)
			shim_look_done(&ch->look, w.way, w.start, shim_now_ns());
		scq = shim_obj_get(c, handle, SHIM_OBJ_CQ, count_comp_event);
		if (!scq)
			continue; /* for a CQ destroyed since */
		*cq = ibv_cq_ex_to_cq(&scq->cqx);
		*cq_context = scq->cqx.cq_context;
		return 0;
	}
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ------------------------------------------------------------------------ */
/* Polling.                                                                  */

static void cq_lock(struct shim_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void cq_unlock(struct shim_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

static const struct uroce_cqe *cqe_at(struct shim_cq *cq, uint32_t idx)
{
	return uroce_ring_entry(cq->ring, cq->entries, UROCE_CQE_BYTES, idx);
}

static void to_wc(const struct uroce_cqe *e, struct ibv_wc *wc)
{
	wc->wr_id = e->wr_id;
	wc->status = (enum ibv_wc_status)e->status;
	wc->opcode = (enum ibv_wc_opcode)e->opcode;
	wc->vendor_err = e->vendor_err;
	wc->byte_len = e->byte_len;
	wc->imm_data = e->imm_data;
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->wc_flags = e->wc_flags;
	wc->pkey_index = e->pkey_index;
	wc->slid = e->slid;
	wc->sl = e->sl;
	wc->dlid_path_bits = e->dlid_path_bits;
}

/*
 * The ring is empty: is the daemon gone (looked at now and then,
 * fatal.c)? Then the flush completions of what was outstanding follow the
 * last real CQEs. True when one is there to take (cq->flush[flush_head]).
 */
static bool cq_flush_ready(struct shim_cq *cq)
{
	if (cq->flush_head == cq->nflush && !cq->flush_built) {
		if (!shim_fatal_poll_due(cq))
			return false;
		shim_fatal_flush_cq(cq);
	}
	return cq->flush_head < cq->nflush;
}

/*
 * An application that polls an empty CQ competes for the CPU with the
 * daemons that are to fill it (two daemons and a polling application on
 * two cores): after SHIM_POLL_YIELD_EVERY empty polls in a row (about a
 * microsecond), this thread gives its CPU to whoever else wants it, so a
 * daemon sharing its core runs within a microsecond or two, and the
 * daemon's own yields come back before it takes them for a CPU-bound
 * neighbour (emu/daemon/dp/wait.c). sched_yield costs a system call when
 * nobody else wants the CPU: 0.1-0.3 us on bare metal, about 1.3 us in the
 * paravirtualized guests uroce is developed on (docs/performance.md).
 */
#define SHIM_POLL_YIELD_EVERY 64
static __thread unsigned poll_empty_run;

/*
 * The daemons of one machine place themselves beside the programs of the
 * other RNIC, not their own (emu/daemon/dp/place.c): at each yield the CPU
 * this thread polls from goes into the CQ's ring header, where it changed
 * (sched_getcpu: the vDSO or rseq, no system call).
 */
static void poll_empty(struct uroce_ring_hdr *ring)
{
	if (++poll_empty_run >= SHIM_POLL_YIELD_EVERY) {
		int cpu = sched_getcpu();

		poll_empty_run = 0;
		if (cpu >= 0 &&
		    __atomic_load_n(&ring->poller, __ATOMIC_RELAXED) != (uint32_t)cpu + 1)
			__atomic_store_n(&ring->poller, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
		sched_yield();
	}
}

int shim_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct shim_cq *cq = shim_cq(ibcq);
	uint32_t prod;
	int n = 0;

	cq_lock(cq);
	prod = uroce_load_acquire(&cq->ring->prod);
	while (n < num_entries && cq->cons != prod) {
		to_wc(cqe_at(cq, cq->cons), &wc[n]);
		cq->cons++;
		n++;
	}
	if (n)
		uroce_store_release(&cq->ring->cons, cq->cons);
	else
		while (n < num_entries && cq_flush_ready(cq))
			to_wc(&cq->flush[cq->flush_head++], &wc[n++]);
	cq_unlock(cq);
	if (n)
		poll_empty_run = 0;
	else
		poll_empty(cq->ring);
	return n;
}

int shim_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct shim_cq *cq = shim_cq(ibcq);
	uint32_t *arm = &cq->ring->arm;

	if (solicited_only) {
		uint32_t none = UROCE_CQ_ARM_NONE;

		/* An armed "next completion" already covers solicited ones. */
		__atomic_compare_exchange_n(arm, &none, UROCE_CQ_ARM_SOLICITED, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(arm, UROCE_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	}
	/* Pairs with the daemon's fence after publishing a CQE. */
	uroce_fence();
	return 0;
}

/* Extended polling: start_poll takes the first CQE, next_poll moves on,
 * end_poll releases what was read. The CQ stays locked in between. */
static void load_cur(struct shim_cq *cq, const struct uroce_cqe *e)
{
	cq->cur = e;
	cq->cqx.status = (enum ibv_wc_status)e->status;
	cq->cqx.wr_id = e->wr_id;
}

/* Make the next CQE (ring first, then flush completions) current; ENOENT
 * when there is none. */
static int load_next(struct shim_cq *cq)
{
	cq->cur_flush = 0;
	if (uroce_load_acquire(&cq->ring->prod) != cq->cons) {
		load_cur(cq, cqe_at(cq, cq->cons));
		return 0;
	}
	if (!cq_flush_ready(cq))
		return ENOENT;
	cq->cur_flush = 1;
	load_cur(cq, &cq->flush[cq->flush_head]);
	return 0;
}

/* The current CQE was read: release it. */
static void release_cur(struct shim_cq *cq)
{
	if (!cq->cur)
		return;
	if (cq->cur_flush) {
		cq->flush_head++;
	} else {
		cq->cons++;
		uroce_store_release(&cq->ring->cons, cq->cons);
	}
	cq->cur = NULL;
}

static int ex_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct shim_cq *cq = SHIM_CONTAINER_OF(ibcq, struct shim_cq, cqx);

	if (attr->comp_mask)
		return EINVAL;
	cq_lock(cq);
	if (load_next(cq)) {
		cq_unlock(cq);
		poll_empty(cq->ring);
		return ENOENT; /* end_poll must not be called */
	}
	poll_empty_run = 0;
	return 0;
}

static int ex_next_poll(struct ibv_cq_ex *ibcq)
{
	struct shim_cq *cq = SHIM_CONTAINER_OF(ibcq, struct shim_cq, cqx);

	release_cur(cq);
	return load_next(cq);
}

static void ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct shim_cq *cq = SHIM_CONTAINER_OF(ibcq, struct shim_cq, cqx);

	release_cur(cq);
	cq_unlock(cq);
}

#define CUR(ibcq) (SHIM_CONTAINER_OF(ibcq, struct shim_cq, cqx)->cur)

static enum ibv_wc_opcode ex_read_opcode(struct ibv_cq_ex *c)
{
	return (enum ibv_wc_opcode)CUR(c)->opcode;
}

static uint32_t ex_read_vendor_err(struct ibv_cq_ex *c)
{
	return CUR(c)->vendor_err;
}

static uint32_t ex_read_byte_len(struct ibv_cq_ex *c)
{
	return CUR(c)->byte_len;
}

/* Also ibv_wc_read_invalidated_rkey's: with IBV_WC_WITH_INV the CQE's
 * imm_data is the invalidated R_Key, host order. */
static __be32 ex_read_imm_data(struct ibv_cq_ex *c)
{
	return CUR(c)->imm_data;
}

static uint32_t ex_read_qp_num(struct ibv_cq_ex *c)
{
	return CUR(c)->qp_num;
}

static uint32_t ex_read_src_qp(struct ibv_cq_ex *c)
{
	return CUR(c)->src_qp;
}

static unsigned int ex_read_wc_flags(struct ibv_cq_ex *c)
{
	return CUR(c)->wc_flags;
}

static uint32_t ex_read_slid(struct ibv_cq_ex *c)
{
	return CUR(c)->slid;
}

static uint8_t ex_read_sl(struct ibv_cq_ex *c)
{
	return CUR(c)->sl;
}

static uint8_t ex_read_dlid_path_bits(struct ibv_cq_ex *c)
{
	return CUR(c)->dlid_path_bits;
}

/* The device clock: ns at hca_core_clock 1 GHz (the same clock as ibv_query_rt_values_ex). */
static uint64_t ex_read_completion_ts(struct ibv_cq_ex *c)
{
	return CUR(c)->timestamp_ns;
}

static uint64_t ex_read_completion_wallclock_ns(struct ibv_cq_ex *c)
{
	return CUR(c)->wallclock_ns;
}

/* ------------------------------------------------------------------------ */
/* Creation and destruction.                                                 */

static struct shim_cq *create_cq(struct ibv_context *context, uint32_t cqe, void *cq_context,
				 struct ibv_comp_channel *channel, uint32_t comp_vector,
				 uint32_t flags)
{
	struct shim_context *c = shim_ctx(context);
	struct uroce_create_cq_req req = {
	    .hdr.op = UROCE_OP_CREATE_CQ, .cqe = cqe, .comp_vector = comp_vector, .flags = flags};
	struct uroce_cq_resp resp;
	struct shim_cq *cq;
	int fd, nfds, err;

	if (channel) {
		if (channel->context != context)
			return shim_fail_null(-EINVAL);
		req.channel_handle = SHIM_CONTAINER_OF(channel, struct shim_channel, ch)->handle;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return shim_fail_null(-ENOMEM);
	err = shim_call(c, &req, sizeof(req), &resp, sizeof(resp), &fd, 1, &nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (err) {
		free(cq);
		return shim_fail_null(err);
	}
	cq->ring = shim_map_ring(fd, resp.ring_bytes);
	if (!cq->ring) {
		err = -errno;
		shim_call_simple(c, UROCE_OP_DESTROY_CQ, resp.handle);
		free(cq);
		return shim_fail_null(err);
	}
	cq->ring_bytes = resp.ring_bytes;
	cq->entries = resp.entries;
	cq->cons = cq->ring->cons;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->cqx.context = context;
	cq->cqx.channel = channel;
	cq->cqx.cq_context = cq_context;
	cq->cqx.handle = resp.handle;
	cq->cqx.cqe = (int)resp.entries;
	pthread_mutex_init(&cq->cqx.mutex, NULL);
	pthread_cond_init(&cq->cqx.cond, NULL);
	if (shim_obj_add(c, resp.handle, SHIM_OBJ_CQ, cq)) {
		munmap(cq->ring, cq->ring_bytes);
		shim_call_simple(c, UROCE_OP_DESTROY_CQ, resp.handle);
		free(cq);
		return shim_fail_null(-ENOMEM);
	}
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	return cq;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct shim_cq *cq;

	if (cqe < 1 || comp_vector < 0)
		return shim_fail_null(-EINVAL);
	cq = create_cq(context, (uint32_t)cqe, cq_context, channel, (uint32_t)comp_vector, 0);
	return cq ? ibv_cq_ex_to_cq(&cq->cqx) : NULL;
}

struct ibv_cq_ex *shim_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t known_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	struct shim_cq *cq;
	int single = 0;

	if (attr->comp_mask & ~known_mask)
		return shim_fail_null(-EINVAL);
	/* A CQ may name the parent domain it belongs to (and nothing else). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !shim_pd_is_parent(attr->parent_domain)))
		return shim_fail_null(-EINVAL);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		if (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)
			return shim_fail_null(-EOPNOTSUPP);
		single = !!(attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	}
	if (attr->wc_flags & ~(uint64_t)SUPPORTED_WC_FLAGS)
		return shim_fail_null(-EOPNOTSUPP);
	if (attr->cqe < 1)
		return shim_fail_null(-EINVAL);
	cq = create_cq(context, attr->cqe, attr->cq_context, attr->channel, attr->comp_vector,
		       attr->wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			   ? UROCE_CQ_TIMESTAMPS
			   : 0);
	if (!cq)
		return NULL;
	cq->single_threaded = single;
	cq->wc_flags = attr->wc_flags;
	cq->cqx.start_poll = ex_start_poll;
	cq->cqx.next_poll = ex_next_poll;
	cq->cqx.end_poll = ex_end_poll;
	cq->cqx.read_opcode = ex_read_opcode;
	cq->cqx.read_vendor_err = ex_read_vendor_err;
	cq->cqx.read_wc_flags = ex_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cq->cqx.read_byte_len = ex_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cq->cqx.read_imm_data = ex_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cq->cqx.read_qp_num = ex_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cq->cqx.read_src_qp = ex_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cq->cqx.read_slid = ex_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cq->cqx.read_sl = ex_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cq->cqx.read_dlid_path_bits = ex_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq->cqx.read_completion_ts = ex_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq->cqx.read_completion_wallclock_ns = ex_read_completion_wallclock_ns;
	return &cq->cqx;
}

int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct shim_cq *cq = shim_cq(ibcq);
	struct uroce_resize_cq_req req = {
	    .hdr.op = UROCE_OP_RESIZE_CQ, .handle = ibcq->handle, .cqe = (uint32_t)cqe};
	struct uroce_cq_resp resp;
	void *ring;
	int fd, nfds, err;

	if (cqe < 1)
		return EINVAL;
	/* Nobody polls while the ring is swapped. */
	cq_lock(cq);
	err = shim_call(shim_ctx(ibcq->context), &req, sizeof(req), &resp, sizeof(resp), &fd, 1,
			&nfds);
	if (!err && nfds != 1)
		err = -EPROTO;
	if (err) {
		cq_unlock(cq);
		return -err;
	}
	ring = shim_map_ring(fd, resp.ring_bytes);
	if (!ring) {
		/* The daemon already moved to the new ring: this CQ is
		 * unusable, as after a failed resize on hardware. */
		err = errno;
		cq_unlock(cq);
		return err;
	}
	munmap(cq->ring, cq->ring_bytes);
	cq->ring = ring;
	cq->ring_bytes = resp.ring_bytes;
	cq->entries = resp.entries;
	ibcq->cqe = (int)resp.entries;
	cq_unlock(cq);
	return 0;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct shim_cq *cq = shim_cq(ibcq);
	struct shim_context *c = shim_ctx(ibcq->context);
	struct ibv_comp_channel *channel = ibcq->channel;
	int err;

	err = shim_call_simple(c, UROCE_OP_DESTROY_CQ, ibcq->handle);
	if (err)
		return -err;
	shim_obj_del(c, ibcq->handle);
	if (channel) {
		pthread_mutex_lock(&ibcq->context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&ibcq->context->mutex);
	}
	/* libibverbs semantics: wait for every reported event's ack. */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != cq->comp_events_reported ||
	       ibcq->async_events_completed != cq->async_events_reported)
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	munmap(cq->ring, cq->ring_bytes);
	pthread_spin_destroy(&cq->lock);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq->flush);
	free(cq);
	return 0;
}

void shim_cq_clean(struct shim_cq *cq, uint32_t qpn)
{
	uint32_t prod, src, dst;

	cq_lock(cq);
	/* Compact towards the producer end, so that CQEs the daemon appends
	 * meanwhile (beyond prod) are untouched; then advance cons. */
	prod = uroce_load_acquire(&cq->ring->prod);
	dst = prod;
	for (src = prod; src != cq->cons;) {
		src--;
		if (cqe_at(cq, src)->qp_num == qpn)
			continue;
		dst--;
		if (dst != src)
			memcpy((void *)cqe_at(cq, dst), cqe_at(cq, src), UROCE_CQE_BYTES);
	}
	if (dst != cq->cons) {
		cq->cons = dst;
		uroce_store_release(&cq->ring->cons, cq->cons);
	}
	shim_fatal_forget_qp(cq, qpn);
	cq_unlock(cq);
}
