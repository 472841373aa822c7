/* SPDX-License-Identifier: MIT */
/*
 * cq_events: an ordinary verbs program checking completion events with real
 * traffic between two QPs of one device: a CQ armed for the next completion
 * gets an event for any completion; one armed solicited-only gets none for
 * a SEND without IBV_SEND_SOLICITED and one for a SEND with it (and for a
 * RDMA WRITE with immediate and IBV_SEND_SOLICITED); an unarmed CQ gets
 * none; a blocking ibv_get_cq_event waits for an event that comes late;
 * events a waiting thread takes from memory (the daemon's counter
 * comp_events_mem, checked by datapath.sh) come once each, in a loop of
 * round trips and with two threads waiting on one channel; a non-blocking
 * channel says EAGAIN. Run it under the shim:
 *
 *   cq_events DEVICE
 *
 * Exit status 0 when every check passed. One line per check.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "verbs_pair.h"

/* An event on the side's channel within ms? (acknowledged) */
static int event(struct side *s, int ms)
{
	struct pollfd p = {.fd = s->ch->fd, .events = POLLIN};
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, ms) != 1)
		return 0;
	if (ibv_get_cq_event(s->ch, &cq, &cq_ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	return cq == s->cq;
}

/* Two threads waiting on one channel: each event is taken once. */
struct waiters {
	struct side *s;
	pthread_mutex_t lock;
	int taken, wrong, stop;
};

static void *waiter(void *arg)
{
	struct waiters *w = arg;

	for (;;) {
		struct ibv_cq *cq;
		void *cq_ctx;
		int stop;

		if (ibv_get_cq_event(w->s->ch, &cq, &cq_ctx))
			return NULL;
		ibv_ack_cq_events(cq, 1);
		pthread_mutex_lock(&w->lock);
		w->taken++;
		w->wrong += cq != w->s->cq;
		stop = w->stop;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			return NULL;
	}
}

/* Arm, send once, and wait (up to 5 s) until the waiters took `want` events. */
static int event_round(struct side *a, struct waiters *w, int want)
{
	int taken = 0;

	ibv_req_notify_cq(w->s->cq, 0);
	post_recv(w->s);
	post_send(a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	for (int ms = 0; ms < 5000; ms++) {
		pthread_mutex_lock(&w->lock);
		taken = w->taken;
		pthread_mutex_unlock(&w->lock);
		if (taken >= want)
			break;
		usleep(1000);
	}
	return poll_n(w->s, 1) == 1 && poll_n(a, 1) == 1 && taken == want;
}

/* The thread that posts a SEND on side `arg` 200 ms from now. */
static void *send_later(void *arg)
{
	usleep(200000);
	post_send(arg, IBV_WR_SEND, IBV_SEND_SIGNALED);
	return NULL;
}

int main(int argc, char **argv)
{
	struct side a, b;

	if (argc != 2) {
		fprintf(stderr, "usage: cq_events DEVICE\n");
		return 2;
	}
	if (pair_open("cq_events", argv[1], &a, &b))
		return 1;
	if (qp_connect(a.qp, b.qp)) {
		fprintf(stderr, "cq_events: connecting the QPs failed: %s\n", strerror(errno));
		return 1;
	}

	/* Unarmed: completions, no event. */
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "SEND completes on both sides");
	check(!event(&b, 100), "no event on an unarmed CQ");

	/* Armed for the next completion: any completion. */
	ibv_req_notify_cq(b.cq, 0);
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(event(&b, 5000), "event for a SEND on a CQ armed for the next completion");
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");
	check(!event(&b, 100), "one event per arming");

	/* Solicited-only: not for an unsolicited SEND... */
	ibv_req_notify_cq(b.cq, 1);
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "unsolicited SEND completes");
	check(!event(&b, 200), "no event for it on a CQ armed solicited-only");
	/* ...but for a solicited one (still armed)... */
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	check(event(&b, 5000), "event for a solicited SEND");
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");
	/* ...and for a solicited RDMA WRITE with immediate. */
	ibv_req_notify_cq(b.cq, 1);
	post_recv(&b);
	post_send(&a, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	check(event(&b, 5000), "event for a solicited RDMA WRITE with immediate");
	check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");

	/* The requester's own CQ armed solicited-only: a send completion is
	 * not solicited. */
	ibv_req_notify_cq(a.cq, 1);
	post_recv(&b);
	post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
	check(poll_n(&a, 1) == 1 && poll_n(&b, 1) == 1, "SEND completes");
	check(!event(&a, 200), "no event for a send completion on a CQ armed solicited-only");

	/* A blocking wait outlasts the shim's look-before-blocking: the event
	 * of a SEND posted 200 ms later still arrives. */
	{
		pthread_t t;
		struct ibv_cq *cq = NULL;
		void *cq_ctx;

		ibv_req_notify_cq(b.cq, 0);
		post_recv(&b);
		check(!pthread_create(&t, NULL, send_later, &a), "a thread to send later");
		check(!ibv_get_cq_event(b.ch, &cq, &cq_ctx) && cq == b.cq,
		      "blocking ibv_get_cq_event returns the event of a SEND posted 200 ms later");
		if (cq)
			ibv_ack_cq_events(cq, 1);
		pthread_join(t, NULL);
		check(poll_n(&b, 1) == 1 && poll_n(&a, 1) == 1, "its completions");
	}
	/*
	 * Round trips with the wait right after the post: the event comes
	 * while the thread looks before blocking, and is handed over in
	 * memory (datapath.sh checks comp_events_mem); each comes once.
	 */
	{
		int ok = 0;

		for (int i = 0; i < 200; i++) {
			struct ibv_cq *cq = NULL;
			void *cq_ctx;

			ibv_req_notify_cq(b.cq, 0);
			post_recv(&b);
			post_send(&a, IBV_WR_SEND, IBV_SEND_SIGNALED);
			if (ibv_get_cq_event(b.ch, &cq, &cq_ctx) || cq != b.cq)
				break;
			ibv_ack_cq_events(cq, 1);
			if (poll_n(&b, 1) != 1 || poll_n(&a, 1) != 1)
				break;
			ok++;
		}
		check(ok == 200, "200 round trips, each with its event (%d)", ok);
	}
	/* Two threads wait on one channel: 100 events, each taken once. */
	{
		struct waiters w = {.s = &b};
		pthread_t t[2];
		int rounds = 0, threads = 0;

		pthread_mutex_init(&w.lock, NULL);
		for (int i = 0; i < 2; i++)
			threads += !pthread_create(&t[i], NULL, waiter, &w);
		check(threads == 2, "two waiting threads");
		for (int i = 1; threads == 2 && i <= 100 && event_round(&a, &w, i); i++)
			rounds++;
		check(rounds == 100 && !w.wrong,
		      "100 events, each taken once by one of two threads (%d rounds, taken %d)",
		      rounds, w.taken);
		/* Two more, one for each thread to leave with. */
		pthread_mutex_lock(&w.lock);
		w.stop = 1;
		pthread_mutex_unlock(&w.lock);
		if (threads == 2 && rounds == 100) {
			check(event_round(&a, &w, 101) && event_round(&a, &w, 102),
			      "two last events end the threads");
			for (int i = 0; i < 2; i++)
				pthread_join(t[i], NULL);
		}
		check(w.taken == rounds + 2 * (rounds == 100), "no event taken twice (%d)",
		      w.taken);
	}
	/* A channel the program made non-blocking says EAGAIN when it holds
	 * no event (none is left over in the pipe or in memory). */
	{
		struct ibv_cq *cq;
		void *cq_ctx;
		int fl = fcntl(b.ch->fd, F_GETFL);

		check(fl >= 0 && !fcntl(b.ch->fd, F_SETFL, fl | O_NONBLOCK), "O_NONBLOCK set");
		errno = 0;
		check(ibv_get_cq_event(b.ch, &cq, &cq_ctx) == -1 && errno == EAGAIN,
		      "non-blocking ibv_get_cq_event without an event: EAGAIN");
	}

	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_destroy_cq(a.cq);
	ibv_destroy_cq(b.cq);
	ibv_destroy_comp_channel(a.ch);
	ibv_destroy_comp_channel(b.ch);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
