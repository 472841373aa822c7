// SPDX-License-Identifier: MIT
/*
 * cm_notify ADDR: rdma_notify through rdma-core's own librdmacm on the uroce
 * RNIC whose address is ADDR (run under `uroce run` or the drop-in, with
 * short CM timeouts: uroced --cm-timeout 16 --cm-retries 3). A client and a
 * server id in this one process connect to each other on the RNIC, each on
 * its own channel. The server accepts (its REP waits for the RTU) and,
 * before the client's librdmacm has sent the RTU (the client does not read
 * its channel yet), tells the CM that its QP saw IBV_EVENT_COMM_EST, as an
 * application does when data comes first: the server gets
 * RDMA_CM_EVENT_ESTABLISHED at once, and no UNREACHABLE later (the REP's
 * resends stopped; with the short timeouts they would give up in about a
 * second). Then as the kernel's ucma/IB CM answer: COMM_EST again EISCONN,
 * IBV_EVENT_PATH_MIG 0, another event EINVAL; on an id with no connection
 * and on a listener EINVAL. The client then reads its channel (CONNECT_
 * RESPONSE, the RTU goes out, ESTABLISHED), the late RTU makes no second
 * ESTABLISHED on the server, and a SEND crosses the connection.
 * Prints one "ok:"/"FAIL:" line per check; exit 1 when one failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

static int fails;

/* cond is evaluated once (it may be a call). */
#define CHECK(cond, ...)                                   \
	do {                                               \
		int check_ok_ = !!(cond);                  \
		printf("%s: ", check_ok_ ? "ok" : "FAIL"); \
		printf(__VA_ARGS__);                       \
		printf("\n");                              \
		if (!check_ok_)                            \
			fails++;                           \
	} while (0)

/* ret == -1 with errno e. */
#define FAILS_WITH(ret, e) ((ret) == -1 && errno == (e))

#define PORT 7396

/* The next event within ms, or NULL. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) != 1 || !(p.revents & POLLIN))
		return NULL;
	return rdma_get_cm_event(ch, &ev) ? NULL : ev;
}

/* The next event is type (acked); its name or "nothing" in *got. */
static int expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int ms,
		  struct rdma_cm_id **id, const char **got)
{
	struct rdma_cm_event *ev = next_event(ch, ms);
	int ok;

	*got = ev ? rdma_event_str(ev->event) : "nothing";
	if (!ev)
		return 0;
	ok = ev->event == type && ev->status == 0;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return ok;
}

static int nonblock(struct rdma_event_channel *ch)
{
	return fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
}

static void qp_attr(struct ibv_qp_init_attr *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->cap.max_send_wr = qa->cap.max_recv_wr = 4;
	qa->cap.max_send_sge = qa->cap.max_recv_sge = 1;
	qa->sq_sig_all = 1;
}

/* One completion of cq within 5 s, successful. */
static int one_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n == 1 && wc->status == IBV_WC_SUCCESS;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_conn_param param = {
	    .responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *lid, *cid, *sid = NULL;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	struct ibv_qp_init_attr qa;
	struct ibv_mr *smr = NULL, *rmr = NULL;
	struct ibv_wc wc;
	char sbuf[64] = "notified", rbuf[64] = "";
	const char *got = "";
	int ret, ok;

	if (argc != 2) {
		fprintf(stderr, "usage: cm_notify ADDR\n");
		return 2;
	}
	inet_pton(AF_INET, argv[1], &sa.sin_addr);
	sch = rdma_create_event_channel();
	cch = rdma_create_event_channel();
	CHECK(sch && cch && !nonblock(sch) && !nonblock(cch), "two event channels (errno %d)",
	      errno);
	if (!sch || !cch)
		return 1;

	ret = rdma_create_id(sch, &lid, NULL, RDMA_PS_TCP) ||
	      rdma_bind_addr(lid, (struct sockaddr *)&sa) || rdma_listen(lid, 4);
	CHECK(ret == 0, "a listener on port %d", PORT);
	ret = rdma_notify(lid, IBV_EVENT_COMM_EST);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_notify on a listener: EINVAL (%s)", strerror(errno));

	ret = rdma_create_id(cch, &cid, NULL, RDMA_PS_TCP);
	CHECK(ret == 0, "the client's id");
	ret = rdma_notify(cid, IBV_EVENT_COMM_EST);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_notify on an id without an RNIC: EINVAL (%s)",
	      strerror(errno));
	ret = rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sa, 2000);
	CHECK(!ret && expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED, 5000, NULL, &got),
	      "ADDR_RESOLVED (got %s)", got);
	ret = rdma_notify(cid, IBV_EVENT_COMM_EST);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_notify before any connection: EINVAL (%s)",
	      strerror(errno));
	ret = rdma_resolve_route(cid, 2000);
	CHECK(!ret && expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000, NULL, &got),
	      "ROUTE_RESOLVED (got %s)", got);
	qp_attr(&qa);
	ret = rdma_create_qp(cid, NULL, &qa);
	CHECK(ret == 0, "the client's QP");
	ret = rdma_connect(cid, &param);
	CHECK(ret == 0, "rdma_connect");

	ok = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 5000, &sid, &got);
	CHECK(ok && sid, "the listener gets CONNECT_REQUEST (got %s)", got);
	if (!ok || !sid)
		return 1;
	qp_attr(&qa);
	ret = rdma_create_qp(sid, NULL, &qa);
	CHECK(ret == 0, "the server's QP");
	rmr = rdma_reg_msgs(sid, rbuf, sizeof(rbuf));
	ret = rmr ? rdma_post_recv(sid, NULL, rbuf, sizeof(rbuf), rmr) : -1;
	CHECK(ret == 0, "a receive posted on the server's QP");
	ret = rdma_accept(sid, &param);
	CHECK(ret == 0, "rdma_accept: the REP is out, the RTU not yet (the client reads nothing)");

	ret = rdma_notify(sid, IBV_EVENT_COMM_EST);
	CHECK(ret == 0, "rdma_notify(COMM_EST) while the REP waits for its RTU: 0 (%s)",
	      ret ? strerror(errno) : "");
	CHECK(expect(sch, RDMA_CM_EVENT_ESTABLISHED, 2000, NULL, &got),
	      "the server gets ESTABLISHED without an RTU (got %s)", got);
	ret = rdma_notify(sid, IBV_EVENT_COMM_EST);
	CHECK(FAILS_WITH(ret, EISCONN), "rdma_notify(COMM_EST) again: EISCONN (%s)",
	      strerror(errno));
	ret = rdma_notify(sid, IBV_EVENT_PATH_MIG);
	CHECK(ret == 0, "rdma_notify(PATH_MIG): 0, no alternate path to move to");
	ret = rdma_notify(sid, IBV_EVENT_QP_FATAL);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_notify(QP_FATAL): EINVAL (%s)", strerror(errno));
	/* With 268 ms timeouts and 3 resends, a REP still waiting would have
	 * given up (UNREACHABLE) within about 1.1 s. */
	CHECK(!next_event(sch, 1500),
	      "no further event on the server for 1.5 s (the REP's resends stopped)");

	CHECK(expect(cch, RDMA_CM_EVENT_ESTABLISHED, 5000, NULL, &got),
	      "the client then reads ESTABLISHED (librdmacm sent the RTU; got %s)", got);
	ret = rdma_notify(cid, IBV_EVENT_COMM_EST);
	CHECK(FAILS_WITH(ret, EISCONN), "rdma_notify(COMM_EST) on the established client: EISCONN");
	CHECK(!next_event(sch, 500), "the late RTU makes no second ESTABLISHED on the server");

	smr = rdma_reg_msgs(cid, sbuf, sizeof(sbuf));
	ret = smr ? rdma_post_send(cid, NULL, sbuf, sizeof(sbuf), smr, 0) : -1;
	CHECK(ret == 0 && one_wc(cid->send_cq, &wc) && one_wc(sid->recv_cq, &wc) &&
		  !strcmp(rbuf, "notified"),
	      "a SEND crosses the connection (received \"%s\")", rbuf);

	ret = rdma_disconnect(cid);
	ok = !ret && expect(sch, RDMA_CM_EVENT_DISCONNECTED, 5000, NULL, &got);
	ok = ok && !rdma_disconnect(sid) &&
	     expect(cch, RDMA_CM_EVENT_DISCONNECTED, 5000, NULL, &got);
	CHECK(ok, "disconnected: DREQ, DREP (got %s)", got);
	if (smr)
		rdma_dereg_mr(smr);
	if (rmr)
		rdma_dereg_mr(rmr);
	rdma_destroy_qp(sid);
	rdma_destroy_qp(cid);
	CHECK(rdma_destroy_id(sid) == 0 && rdma_destroy_id(cid) == 0 && rdma_destroy_id(lid) == 0,
	      "the ids are destroyed");
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
	return fails ? 1 : 0;
}
