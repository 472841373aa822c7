// SPDX-License-Identifier: MIT
/*
 * cm_bad ADDR: bad and unsupported requests to the RDMA CM, through
 * rdma-core's own librdmacm, on the uroce RNIC whose address is ADDR (run
 * under `uroce run`). Each must fail the way it fails on a kernel RNIC,
 * with the errno the kernel gives, and lose nothing: rdma_connect before
 * the route is resolved, rdma_accept/rdma_reject/rdma_disconnect on an id
 * that has no connection, rdma_resolve_route before the address, a bind to
 * an address no RNIC has (EADDRNOTAVAIL; ENODEV when it is this host's), a second listener on a
 * port, options unknown, rdma_notify without a connection (EINVAL; cm_notify tests the rest),
 * multicast joins on a connected-mode id or of a unicast address (EINVAL), a join's MULTICAST_JOIN
 * event (the group's address vector, QPN 0xFFFFFF, Q_Key 0x01234567) and a leave of a group not
 * joined (EADDRNOTAVAIL); the event channel's fd is pollable (readable iff an event is pending,
 * EAGAIN when non-blocking and empty); an id destroyed with its QP still attached (the device
 * closes with the last id, the daemon frees the QP); a path record's MTU, SL, rate and class reach
 * the route, the ConnectRequest and the passive side's QP attributes and route. Prints one
 * "ok:"/"FAIL:" line per check; exit 1 when one failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_sa.h>
#include <rdma/rdma_cma.h>

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

static struct sockaddr_in addr_of(const char *ip, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};

	inet_pton(AF_INET, ip, &sa.sin_addr);
	return sa;
}

/* The next event within ms, or NULL (the channel is non-blocking). */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) != 1 || !(p.revents & POLLIN))
		return NULL;
	return rdma_get_cm_event(ch, &ev) ? NULL : ev;
}

/*
 * A new id on channel ch, its address and route resolved to ip:port, then
 * rdma_connect: 0 once the connect is sent, -1 at the first step that fails
 * (its events acknowledged). *id is set when the id was created.
 */
static int connect_to(struct rdma_event_channel *ch, const char *ip, uint16_t port,
		      struct rdma_conn_param *param, struct rdma_cm_id **id)
{
	struct sockaddr_in sa = addr_of(ip, port);
	struct rdma_cm_event *ev;

	*id = NULL;
	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(*id, NULL, (struct sockaddr *)&sa, 2000) || !(ev = next_event(ch, 5000)))
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(*id, 2000) || !(ev = next_event(ch, 5000)))
		return -1;
	rdma_ack_cm_event(ev);
	return rdma_connect(*id, param) ? -1 : 0;
}

/*
 * A connect from a fresh channel to ip:port, with the listeners' channel
 * lch: a CONNECT_REQUEST there is rejected (rdma_reject, reason 28), so the
 * status of the client's REJECTED event says who answered: 28 a listener,
 * 8 the CM for want of one. -1 for anything else.
 */
static int reject_status(struct rdma_event_channel *lch, const char *ip, uint16_t port)
{
	struct rdma_conn_param param = {.responder_resources = 1, .initiator_depth = 1};
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct sockaddr_in sa = addr_of(ip, port);
	struct rdma_cm_event *ev = NULL;
	struct rdma_cm_id *id = NULL;
	int status = -1;

	if (!cch || rdma_create_id(cch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000))
		goto out;
	if (rdma_get_cm_event(cch, &ev) || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		goto out;
	rdma_ack_cm_event(ev);
	ev = NULL;
	if (rdma_resolve_route(id, 2000) || rdma_get_cm_event(cch, &ev) ||
	    ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		goto out;
	rdma_ack_cm_event(ev);
	ev = NULL;
	if (rdma_connect(id, &param))
		goto out;
	ev = next_event(lch, 3000);
	if (ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct rdma_cm_id *child = ev->id;

		rdma_reject(child, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(child);
	} else if (ev) {
		rdma_ack_cm_event(ev);
	}
	ev = NULL;
	if (!rdma_get_cm_event(cch, &ev) && ev->event == RDMA_CM_EVENT_REJECTED)
		status = ev->status;
out:
	if (ev)
		rdma_ack_cm_event(ev);
	if (id)
		rdma_destroy_id(id);
	if (cch)
		rdma_destroy_event_channel(cch);
	return status;
}

/*
 * An XRC or RC id of the RDMA_PS_IB port space connecting to ip:port with
 * the synchronous API (rdma_getaddrinfo, rdma_create_ep, rdma_connect, as
 * rdma_xclient does); the status of the REJECTED event that ends it, or -1
 * if it ends otherwise.
 */
static int ib_ps_reject_status(const char *ip, const char *port, enum ibv_qp_type type)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_IB, .ai_qp_type = type}, *res;
	struct ibv_qp_init_attr qa = {.cap = {.max_send_wr = 1, .max_send_sge = 1},
				      .sq_sig_all = 1};
	struct rdma_conn_param cp = {.responder_resources = 1, .initiator_depth = 1};
	struct rdma_cm_id *id = NULL;
	int status = -1;

	if (type != IBV_QPT_XRC_SEND) {
		qa.cap.max_recv_wr = 1;
		qa.cap.max_recv_sge = 1;
	}
	if (rdma_getaddrinfo(ip, port, &hints, &res))
		return -1;
	if (!rdma_create_ep(&id, res, NULL, &qa)) {
		if (rdma_connect(id, &cp) && errno == ECONNREFUSED && id->event &&
		    id->event->event == RDMA_CM_EVENT_REJECTED)
			status = id->event->status;
		rdma_destroy_ep(id);
	}
	rdma_freeaddrinfo(res);
	return status;
}

int main(int argc, char **argv)
{
	struct rdma_conn_param param = {.responder_resources = 1, .initiator_depth = 1};
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id, *l1 = NULL, *l2 = NULL, *cid;
	struct rdma_cm_event *ev;
	struct sockaddr_in sa, other;
	struct ibv_qp_init_attr qa;
	struct pollfd p;
	uint8_t tos = 32;
	int ret, one = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: cm_bad ADDR\n");
		return 2;
	}
	ch = rdma_create_event_channel();
	CHECK(ch != NULL, "rdma_create_event_channel (errno %d)", ch ? 0 : errno);
	if (!ch)
		return 1;
	ret = fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	CHECK(ret == 0, "the channel fd takes O_NONBLOCK");

	/* An empty non-blocking channel: not readable, EAGAIN. */
	p = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0, "an empty channel is not readable");
	ret = rdma_get_cm_event(ch, &ev);
	CHECK(FAILS_WITH(ret, EAGAIN),
	      "rdma_get_cm_event on an empty non-blocking channel: EAGAIN");

	ret = rdma_create_id(ch, &id, NULL, RDMA_PS_TCP);
	CHECK(ret == 0, "rdma_create_id");

	other = addr_of("192.0.2.1", 0);
	ret = rdma_bind_addr(id, (struct sockaddr *)&other);
	CHECK(FAILS_WITH(ret, EADDRNOTAVAIL), "bind to an address no RNIC has: EADDRNOTAVAIL (%d)",
	      errno);
	/* An address of this host that no RNIC holds (127.0.0.0/8 is all
	 * loopback): the kernel finds its interface, then no device port with
	 * that GID, and fails with ENODEV. */
	if (!strncmp(argv[1], "127.", 4)) {
		struct sockaddr_in mine = addr_of(argv[1], 0);
		struct rdma_cm_id *id2 = NULL;

		mine.sin_addr.s_addr = htonl((ntohl(mine.sin_addr.s_addr) & ~0xffu) | 250);
		ret = rdma_create_id(ch, &id2, NULL, RDMA_PS_TCP);
		CHECK(ret == 0, "rdma_create_id (second id)");
		ret = ret ? -1 : rdma_bind_addr(id2, (struct sockaddr *)&mine);
		CHECK(FAILS_WITH(ret, ENODEV),
		      "bind to an address of this host no RNIC has: ENODEV (%d)", errno);
		if (id2)
			rdma_destroy_id(id2);
	}

	/* Resolved address, no route yet: connect is refused. */
	sa = addr_of(argv[1], 7399);
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000);
	ev = ret ? NULL : next_event(ch, 5000);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED && ev->status == 0,
	      "rdma_resolve_addr: the channel turns readable with ADDR_RESOLVED");
	if (ev)
		rdma_ack_cm_event(ev);
	ret = rdma_connect(id, &param);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_connect before the route is resolved: EINVAL");
	ret = rdma_accept(id, &param);
	CHECK(FAILS_WITH(ret, EINVAL),
	      "rdma_accept on an id that is no connection request: EINVAL");
	ret = rdma_reject(id, NULL, 0);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_reject on it: EINVAL");
	ret = rdma_disconnect(id);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_disconnect without a connection: EINVAL");
	ret = rdma_listen(id, 1);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_listen on a resolving id: EINVAL");

	/* Options. */
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos));
	CHECK(ret == 0, "RDMA_OPTION_ID_TOS");
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one));
	CHECK(FAILS_WITH(ret, EINVAL), "RDMA_OPTION_ID_TOS of the wrong size: EINVAL");
	ret = rdma_set_option(id, RDMA_OPTION_ID, 99, &one, sizeof(one));
	CHECK(FAILS_WITH(ret, ENOSYS), "an unknown option: ENOSYS");
	/* The states the kernel takes each option in (rdma_set_reuseaddr,
	 * rdma_set_afonly, rdma_set_ack_timeout). */
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one));
	CHECK(ret == 0, "RDMA_OPTION_ID_REUSEADDR set on a resolved id: 0");
	{
		int zero = 0;

		ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &zero,
				      sizeof(zero));
		CHECK(FAILS_WITH(ret, EINVAL),
		      "RDMA_OPTION_ID_REUSEADDR cleared once the id has an address: EINVAL");
	}
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one));
	CHECK(FAILS_WITH(ret, EINVAL), "RDMA_OPTION_ID_AFONLY on a resolved id: EINVAL");
	tos = 14;
	ret = rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &tos, sizeof(tos));
	CHECK(ret == 0, "RDMA_OPTION_ID_ACK_TIMEOUT on an RC id: 0");
	ret = rdma_notify(id, IBV_EVENT_COMM_EST);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_notify without a connection: EINVAL");
	other = addr_of("239.1.1.1", 0);
	ret = rdma_join_multicast(id, (struct sockaddr *)&other, NULL);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_join_multicast on an RC id: EINVAL (%s)",
	      strerror(errno));

	/* Route resolved: a QP on the id, then the id destroyed with it. */
	ret = rdma_resolve_route(id, 2000);
	ev = ret ? NULL : next_event(ch, 5000);
	CHECK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
	      "rdma_resolve_route: ROUTE_RESOLVED");
	if (ev)
		rdma_ack_cm_event(ev);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(id, NULL, &qa);
	CHECK(ret == 0 && id->qp, "rdma_create_qp on the resolved id (QP 0x%x)",
	      id->qp ? id->qp->qp_num : 0);
	/* librdmacm closes the device with its last id, and the QP with it:
	 * the QP must not be used after this. */
	ret = rdma_destroy_id(id);
	CHECK(ret == 0, "rdma_destroy_id with its QP still attached");

	/* Multicast on a UD id bound to the RNIC. */
	ret = rdma_create_id(ch, &cid, NULL, RDMA_PS_UDP);
	sa = addr_of(argv[1], 0);
	if (!ret)
		ret = rdma_bind_addr(cid, (struct sockaddr *)&sa);
	CHECK(ret == 0, "a UD id bound to the RNIC");
	ret = rdma_join_multicast(cid, (struct sockaddr *)&sa, NULL);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_join_multicast of a unicast address: EINVAL (%s)",
	      strerror(errno));
	ret = rdma_set_option(cid, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &tos, sizeof(tos));
	CHECK(FAILS_WITH(ret, EINVAL), "RDMA_OPTION_ID_ACK_TIMEOUT on a UD id: EINVAL");
	ret = rdma_set_option(cid, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one));
	CHECK(ret == 0, "RDMA_OPTION_ID_AFONLY on a bound id: 0");
	other = addr_of("239.1.1.1", 0);
	ret = rdma_join_multicast(cid, (struct sockaddr *)&other, &one);
	ev = ret ? NULL : next_event(ch, 5000);
	{
		static const uint8_t mgid[16] = {0, 0, 0,    0,	   0,	0, 0, 0,
						 0, 0, 0xff, 0xff, 239, 1, 1, 1};

		CHECK(ev && ev->event == RDMA_CM_EVENT_MULTICAST_JOIN && ev->status == 0 &&
			  ev->param.ud.qp_num == 0xffffff && ev->param.ud.qkey == 0x01234567 &&
			  ev->param.ud.ah_attr.is_global &&
			  !memcmp(ev->param.ud.ah_attr.grh.dgid.raw, mgid, 16) &&
			  ev->param.ud.private_data == &one,
		      "rdma_join_multicast: MULTICAST_JOIN with the group's GID, QPN 0xffffff, "
		      "Q_Key 0x01234567 and the join's context (got %s)",
		      ev ? rdma_event_str(ev->event) : "nothing");
	}
	if (ev)
		rdma_ack_cm_event(ev);
	ret = rdma_leave_multicast(cid, (struct sockaddr *)&other);
	CHECK(ret == 0, "rdma_leave_multicast");
	ret = rdma_leave_multicast(cid, (struct sockaddr *)&other);
	CHECK(FAILS_WITH(ret, EADDRNOTAVAIL), "rdma_leave_multicast again: EADDRNOTAVAIL");
	CHECK(rdma_destroy_id(cid) == 0, "the UD id is destroyed");

	/* Two listeners on one port of the RNIC. */
	ret = rdma_create_id(ch, &l1, NULL, RDMA_PS_TCP) ||
	      rdma_create_id(ch, &l2, NULL, RDMA_PS_TCP);
	CHECK(ret == 0, "two more ids");
	sa = addr_of(argv[1], 7398);
	ret = rdma_bind_addr(l1, (struct sockaddr *)&sa) || rdma_listen(l1, 4);
	CHECK(ret == 0, "the first listener on port 7398");
	ret = rdma_set_option(l2, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one));
	CHECK(ret == 0, "RDMA_OPTION_ID_REUSEADDR");
	ret = rdma_bind_addr(l2, (struct sockaddr *)&sa);
	if (!ret)
		ret = rdma_listen(l2, 4);
	CHECK(FAILS_WITH(ret, EADDRINUSE), "a second listener on that port: EADDRINUSE (%s)",
	      strerror(errno));
	ret = rdma_resolve_route(l1, 2000);
	CHECK(FAILS_WITH(ret, EINVAL), "rdma_resolve_route on a listener: EINVAL");

	/* IPv6 wildcard listeners on this IPv4 RNIC: one takes IPv4
	 * connections, one with AFONLY does not. */
	{
		struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
		struct rdma_cm_id *w = NULL, *w6 = NULL;
		int st;

		any6.sin6_port = htons(7394);
		ret = rdma_create_id(ch, &w, NULL, RDMA_PS_TCP) ||
		      rdma_bind_addr(w, (struct sockaddr *)&any6) || rdma_listen(w, 4);
		CHECK(ret == 0, "a listener on [::]:7394");
		st = reject_status(ch, argv[1], 7394);
		CHECK(st == 28, "an IPv4 connect reaches it (our reject's status 28; got %d)", st);
		any6.sin6_port = htons(7393);
		ret =
		    rdma_create_id(ch, &w6, NULL, RDMA_PS_TCP) ||
		    rdma_set_option(w6, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)) ||
		    rdma_bind_addr(w6, (struct sockaddr *)&any6) || rdma_listen(w6, 4);
		CHECK(ret == 0, "a listener on [::]:7393 with RDMA_OPTION_ID_AFONLY");
		st = reject_status(ch, argv[1], 7393);
		CHECK(st == 8, "an IPv4 connect does not reach it (the CM's status 8; got %d)", st);
		CHECK((!w || !rdma_destroy_id(w)) && (!w6 || !rdma_destroy_id(w6)),
		      "the IPv6 listeners are destroyed");
	}

	/* The route as a path record (RDMA_OPTION_IB_PATH, ibacm's way). */
	{
		struct ib_path_rec_data path[2];
		uint8_t *rec = (uint8_t *)path[1].path_rec;
		struct rdma_cm_id *pid = NULL;

		ret = rdma_create_id(ch, &pid, NULL, RDMA_PS_TCP);
		sa = addr_of(argv[1], 7392);
		if (!ret)
			ret = rdma_resolve_addr(pid, NULL, (struct sockaddr *)&sa, 2000);
		ev = ret ? NULL : next_event(ch, 5000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED, "an id for the path record");
		if (ev)
			rdma_ack_cm_event(ev);
		memset(path, 0, sizeof(path));
		path[0].flags = IB_PATH_GMP | IB_PATH_ALTERNATE | IB_PATH_BIDIRECTIONAL;
		path[1].flags = IB_PATH_GMP | IB_PATH_PRIMARY;
		/* PathRecord (IBA 15.2.5.16): DGID at 8, SGID at 24, here both
		 * the RNIC's, ::ffff:ADDR (client and server on one RNIC). */
		rec[18] = rec[19] = rec[34] = rec[35] = 0xff;
		memcpy(rec + 20, &sa.sin_addr, 4);
		memcpy(rec + 36, &sa.sin_addr, 4);
		ret = rdma_set_option(pid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, path,
				      sizeof(path) - 1);
		CHECK(FAILS_WITH(ret, EINVAL), "RDMA_OPTION_IB_PATH of a partial record: EINVAL");
		ret = rdma_set_option(pid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, path, sizeof(path));
		CHECK(FAILS_WITH(ret, EINVAL),
		      "RDMA_OPTION_IB_PATH without a primary bidirectional path: EINVAL");
		path[1].flags = IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL;
		rec[23] ^= 1;
		ret = rdma_set_option(pid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, path, sizeof(path));
		CHECK(FAILS_WITH(ret, EINVAL),
		      "RDMA_OPTION_IB_PATH to another GID than the destination's: EINVAL");
		rec[23] ^= 1;
		ret = rdma_set_option(pid, RDMA_OPTION_IB, 7, path, sizeof(path));
		CHECK(FAILS_WITH(ret, ENOSYS), "an unknown option at RDMA_OPTION_IB: ENOSYS");
		ret = rdma_set_option(pid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, path, sizeof(path));
		ev = ret ? NULL : next_event(ch, 5000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
		      "RDMA_OPTION_IB_PATH: ROUTE_RESOLVED (got %s)",
		      ev ? rdma_event_str(ev->event) : strerror(errno));
		if (ev)
			rdma_ack_cm_event(ev);
		ret = rdma_set_option(pid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, path, sizeof(path));
		CHECK(FAILS_WITH(ret, EINVAL),
		      "RDMA_OPTION_IB_PATH once the route is resolved: EINVAL");
		ret = rdma_connect(pid, &param);
		ev = ret ? NULL : next_event(ch, 10000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_REJECTED && ev->status == 8,
		      "a connect over that route reaches the CM (nobody listens: REJECTED, 8)");
		if (ev)
			rdma_ack_cm_event(ev);
		CHECK(!pid || !rdma_destroy_id(pid), "the path record's id is destroyed");
	}

	/* A path record's MTU, SL, rate and traffic class are the route's: the
	 * route librdmacm queries reports them, the ConnectRequest carries them
	 * and the passive side's QP attributes (from that REQ) have them. */
	{
		struct ib_path_rec_data path;
		uint8_t *rec = (uint8_t *)path.path_rec;
		struct rdma_event_channel *cch = rdma_create_event_channel();
		struct rdma_cm_id *lp = NULL, *aid = NULL;
		struct ibv_qp_attr qattr;
		int qmask = 0;

		sa = addr_of(argv[1], 7390);
		ret = !cch || rdma_create_id(ch, &lp, NULL, RDMA_PS_TCP) ||
		      rdma_bind_addr(lp, (struct sockaddr *)&sa) || rdma_listen(lp, 4) ||
		      rdma_create_id(cch, &aid, NULL, RDMA_PS_TCP) ||
		      rdma_resolve_addr(aid, NULL, (struct sockaddr *)&sa, 2000);
		ev = ret ? NULL : next_event(cch, 5000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_ADDR_RESOLVED,
		      "a listener on 7390 and an id resolved to it");
		if (ev)
			rdma_ack_cm_event(ev);
		memset(&path, 0, sizeof(path));
		path.flags = IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL;
		rec[18] = rec[19] = rec[34] = rec[35] = 0xff;
		memcpy(rec + 20, &sa.sin_addr, 4);
		memcpy(rec + 36, &sa.sin_addr, 4);
		rec[48] = 0x20;		     /* TClass */
		rec[53] = 5;		     /* SL 5 */
		rec[54] = 0x80 | IBV_MTU_1024; /* MTU selector "exactly", 1024 */
		rec[55] = 0x80 | IBV_RATE_40_GBPS;
		rec[56] = 0x80 | 14; /* packet lifetime */
		ret = aid ? rdma_set_option(aid, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &path,
					    sizeof(path))
			  : -1;
		ev = ret ? NULL : next_event(cch, 5000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED,
		      "RDMA_OPTION_IB_PATH with MTU 1024, SL 5, 40 Gb/s: ROUTE_RESOLVED");
		if (ev)
			rdma_ack_cm_event(ev);
		CHECK(aid && aid->route.num_paths == 1 && aid->route.path_rec &&
			  aid->route.path_rec->mtu == IBV_MTU_1024 && aid->route.path_rec->sl == 5 &&
			  aid->route.path_rec->rate == IBV_RATE_40_GBPS &&
			  aid->route.path_rec->traffic_class == 0x20 &&
			  aid->route.path_rec->packet_life_time == 14,
		      "the route reports the record's MTU, SL, rate, class and lifetime (mtu %d sl %d "
		      "rate %d tclass 0x%x life %d)",
		      aid && aid->route.path_rec ? aid->route.path_rec->mtu : -1,
		      aid && aid->route.path_rec ? aid->route.path_rec->sl : -1,
		      aid && aid->route.path_rec ? aid->route.path_rec->rate : -1,
		      aid && aid->route.path_rec ? aid->route.path_rec->traffic_class : -1,
		      aid && aid->route.path_rec ? aid->route.path_rec->packet_life_time : -1);
		ret = aid ? rdma_connect(aid, &param) : -1;
		ev = ret ? NULL : next_event(ch, 5000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST,
		      "the listener gets the connect request");
		if (ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_cm_id *child = ev->id;

			memset(&qattr, 0, sizeof(qattr));
			qattr.qp_state = IBV_QPS_RTR;
			ret = rdma_init_qp_attr(child, &qattr, &qmask);
			CHECK(ret == 0 && (qmask & IBV_QP_PATH_MTU) && (qmask & IBV_QP_AV) &&
				  qattr.path_mtu == IBV_MTU_1024 && qattr.ah_attr.sl == 5 &&
				  qattr.ah_attr.static_rate == IBV_RATE_40_GBPS &&
				  qattr.ah_attr.grh.traffic_class == 0x20,
			      "the passive side's RTR attributes come from the REQ's path: mtu %d sl "
			      "%d rate %d tclass 0x%x",
			      qattr.path_mtu, qattr.ah_attr.sl, qattr.ah_attr.static_rate,
			      qattr.ah_attr.grh.traffic_class);
			/* librdmacm queried the new id's route with the event. */
			CHECK(child->route.num_paths == 1 && child->route.path_rec &&
				  child->route.path_rec->mtu == IBV_MTU_1024 &&
				  child->route.path_rec->sl == 5 &&
				  child->route.path_rec->rate == IBV_RATE_40_GBPS &&
				  child->route.path_rec->traffic_class == 0x20,
			      "the passive side's route is the REQ's path: mtu %d sl %d rate %d "
			      "tclass 0x%x",
			      child->route.path_rec ? child->route.path_rec->mtu : -1,
			      child->route.path_rec ? child->route.path_rec->sl : -1,
			      child->route.path_rec ? child->route.path_rec->rate : -1,
			      child->route.path_rec ? child->route.path_rec->traffic_class : -1);
			rdma_reject(child, NULL, 0);
			rdma_ack_cm_event(ev);
			rdma_destroy_id(child);
		} else if (ev) {
			rdma_ack_cm_event(ev);
		}
		ev = aid ? next_event(cch, 5000) : NULL;
		CHECK(ev && ev->event == RDMA_CM_EVENT_REJECTED, "and the active side is rejected");
		if (ev)
			rdma_ack_cm_event(ev);
		CHECK((!aid || !rdma_destroy_id(aid)) && (!lp || !rdma_destroy_id(lp)),
		      "the path record's ids are destroyed");
		if (cch)
			rdma_destroy_event_channel(cch);
	}

	/* A listen that starts just after the peer's connect still takes it:
	 * the RNIC holds a REQ that finds no listener for a moment (qperf and
	 * perftest -R tell their peer the port before they listen). */
	{
		struct rdma_event_channel *cch = rdma_create_event_channel();
		struct rdma_cm_id *lid = NULL, *aid = NULL;

		ret = cch ? connect_to(cch, argv[1], 7389, &param, &aid) : -1;
		CHECK(ret == 0, "a connect to port 7389, where nobody listens yet");
		usleep(30 * 1000);
		sa = addr_of(argv[1], 7389);
		ret = rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
		      rdma_bind_addr(lid, (struct sockaddr *)&sa) || rdma_listen(lid, 4);
		ev = ret ? NULL : next_event(ch, 3000);
		CHECK(ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST,
		      "a listen on 7389 30 ms later gets that connect request (got %s)",
		      ev ? rdma_event_str(ev->event) : "nothing");
		if (ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_cm_id *child = ev->id;

			rdma_reject(child, NULL, 0);
			rdma_ack_cm_event(ev);
			rdma_destroy_id(child);
		} else if (ev) {
			rdma_ack_cm_event(ev);
		}
		ev = aid ? next_event(cch, 5000) : NULL;
		CHECK(ev && ev->event == RDMA_CM_EVENT_REJECTED && ev->status == 28,
		      "the connecting side sees the listener's reject, status 28 (got %s %d)",
		      ev ? rdma_event_str(ev->event) : "nothing", ev ? ev->status : 0);
		if (ev)
			rdma_ack_cm_event(ev);
		CHECK((!aid || !rdma_destroy_id(aid)) && (!lid || !rdma_destroy_id(lid)),
		      "the late listener's ids are destroyed");
		if (cch)
			rdma_destroy_event_channel(cch);
	}

	/*
	 * XRC through the RDMA CM: the REQ of an XRC initiator finds only an
	 * XRC target's listener, and the other way round; the CM rejects it
	 * with reason 9 (invalid transport service type), and the listener
	 * never hears of it, as the kernel's cma_check_req_qp_type has it.
	 */
	{
		struct rdma_addrinfo hints = {.ai_flags = RAI_PASSIVE,
					      .ai_port_space = RDMA_PS_IB,
					      .ai_qp_type = IBV_QPT_XRC_RECV},
				     *res = NULL;
		struct ibv_qp_init_attr xa = {.cap = {.max_recv_wr = 1, .max_recv_sge = 1}};
		struct rdma_cm_id *rc_l = NULL, *xrc_l = NULL;

		sa = addr_of(argv[1], 7393);
		ret = rdma_create_id(ch, &rc_l, NULL, RDMA_PS_IB) ||
		      rdma_bind_addr(rc_l, (struct sockaddr *)&sa) || rdma_listen(rc_l, 4);
		CHECK(ret == 0, "an RC listener in the RDMA_PS_IB port space, port 7393");
		ret = ib_ps_reject_status(argv[1], "7393", IBV_QPT_XRC_SEND);
		CHECK(ret == 9, "an XRC initiator's connect to it: REJECTED, status 9 (got %d)",
		      ret);
		ev = next_event(ch, 200);
		CHECK(!ev, "the RC listener got no CONNECT_REQUEST (got %s)",
		      ev ? rdma_event_str(ev->event) : "nothing");
		if (ev)
			rdma_ack_cm_event(ev);
		ret = rdma_getaddrinfo(argv[1], "7394", &hints, &res) ||
		      rdma_create_ep(&xrc_l, res, NULL, &xa) || rdma_listen(xrc_l, 4);
		CHECK(ret == 0, "an XRC target's listener (rdma_create_ep, XRC_RECV), port 7394");
		ret = ib_ps_reject_status(argv[1], "7394", IBV_QPT_RC);
		CHECK(ret == 9, "an RC connect to it: REJECTED, status 9 (got %d)", ret);
		CHECK((!rc_l || !rdma_destroy_id(rc_l)), "the RC listener is destroyed");
		if (xrc_l)
			rdma_destroy_ep(xrc_l);
		if (res)
			rdma_freeaddrinfo(res);
	}

	/* A connect to nobody's port on the same RNIC is rejected, and the
	 * rejection is an event, not a lost id. */
	ret = connect_to(ch, argv[1], 7397, &param, &cid);
	ev = ret ? NULL : next_event(ch, 10000);
	CHECK(ev && ev->event == RDMA_CM_EVENT_REJECTED && ev->status == 8,
	      "a connect to a port nobody listens on: REJECTED, status 8 (got %s %d)",
	      ev ? rdma_event_str(ev->event) : "nothing", ev ? ev->status : 0);
	if (ev)
		rdma_ack_cm_event(ev);
	CHECK(rdma_destroy_id(cid) == 0 && rdma_destroy_id(l2) == 0 && rdma_destroy_id(l1) == 0,
	      "the ids are destroyed");
	p = (struct pollfd){.fd = ch->fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0, "nothing left on the channel");
	rdma_destroy_event_channel(ch);
	return fails ? 1 : 0;
}
