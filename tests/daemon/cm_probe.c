// SPDX-License-Identifier: MIT
/*
 * cm_probe LOCAL_ADDR DAEMON_ADDR PORT [LISTENER_PORT]: a foreign RoCEv2 CM peer, built on
 * a plain UDP socket and wire/, that talks to a uroce daemon's QP1 as Linux
 * rxe's CM would (the same MAD layout, UD SEND Only to QP 1 with the GSI
 * Q_Key, ICRC over the ID-0/DF header a DF socket sends). It checks the
 * answers of a CM that has no listener: a ConnectRequest is rejected with
 * reason 8 (invalid service ID) naming the request's communication ID and
 * transaction ID; a DisconnectRequest for an unknown connection gets a
 * DisconnectReply; a SIDR request gets status 1 (not supported). Then it
 * sends what must get no answer (a short MAD, a wrong class version, the
 * wrong Q_Key, a ReadyToUse for no connection), and checks that the daemon
 * still answers a last ConnectRequest. With LISTENER_PORT it plays instead
 * the active side of a connection to a listener on that RDMA CM port (an
 * rping server on the daemon's RNIC): REP, the REP again for a repeated
 * REQ, REJ reason 10 for a REQ from the same QP under another comm ID
 * (stale connection), RTU, DREQ and DREP. Prints one line per check and
 * "N passed, N failed"; exit 0 only when all passed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wire/wire.h>

static int passed, failed;
static int sock;
static struct sockaddr_in me, daemon_sa;
static uint32_t next_psn = 100;

#define CHECK(cond, ...)                              \
	do {                                          \
		if (cond) {                           \
			passed++;                     \
		} else {                              \
			failed++;                     \
			printf("FAIL: " __VA_ARGS__); \
			printf("\n");                 \
		}                                     \
	} while (0)

/* Send payload as a UD SEND Only from QP 1 to the daemon's QP 1 with Q_Key qkey. */
static void send_mad(const uint8_t *payload, size_t len, uint32_t qkey)
{
	struct wire_build b = {0};
	uint8_t pkt[512];
	int n;

	b.opcode = WIRE_OP_UD_SEND_ONLY;
	b.destqp = WIRE_GSI_QPN;
	b.psn = next_psn++;
	b.ackreq = 1;
	b.qkey = qkey;
	b.srcqp = WIRE_GSI_QPN;
	/* The packet with pad and room for the ICRC, which goes last. */
	n = wire_build_ib(pkt, sizeof(pkt), &b, payload, len);
	if (n < 0) {
		printf("FAIL: wire_build_ib: %d\n", n);
		exit(1);
	}
	wire_icrc_put(pkt + n - WIRE_ICRC_BYTES,
		      wire_icrc_udp4((const uint8_t *)&me.sin_addr,
				     (const uint8_t *)&daemon_sa.sin_addr, ntohs(me.sin_port),
				     ntohs(daemon_sa.sin_port), pkt, (size_t)n - WIRE_ICRC_BYTES));
	if (sendto(sock, pkt, (size_t)n, 0, (struct sockaddr *)&daemon_sa, sizeof(daemon_sa)) !=
	    n) {
		printf("FAIL: sendto: %s\n", strerror(errno));
		exit(1);
	}
}

/*
 * Wait up to ms for the daemon's next datagram, check it is a valid CM MAD
 * from QP 1 to QP 1 (ICRC, opcode, Q_Key), parse it into *m. 1 with a MAD,
 * 0 on timeout.
 */
static int recv_mad(int ms, struct wire_cm_msg *m, uint8_t *mad)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	uint8_t pkt[1024];
	struct wire_pkt wp;
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recv(sock, pkt, sizeof(pkt), 0);
	if (n <= 0)
		return 0;
	CHECK(wire_validate(pkt, (size_t)n, &wp) == WIRE_R_OK, "answer is a valid IB packet");
	CHECK(wire_icrc_get(pkt + n - WIRE_ICRC_BYTES) ==
		  wire_icrc_udp4((const uint8_t *)&daemon_sa.sin_addr,
				 (const uint8_t *)&me.sin_addr, ntohs(daemon_sa.sin_port),
				 ntohs(me.sin_port), pkt, (size_t)n - WIRE_ICRC_BYTES),
	      "answer's ICRC is right for an ID-0, DF IPv4 header");
	CHECK(wp.opcode == WIRE_OP_UD_SEND_ONLY, "answer is a UD SEND Only (opcode 0x%02x)",
	      wp.opcode);
	CHECK(wire_bth_get_destqp(wire_pkt_bth(&wp)) == WIRE_GSI_QPN, "answer goes to QP 1");
	CHECK(wire_pkt_deth(&wp) && wire_deth_get_qkey(wire_pkt_deth(&wp)) == WIRE_GSI_QKEY &&
		  wire_deth_get_srcqp(wire_pkt_deth(&wp)) == WIRE_GSI_QPN,
	      "answer comes from QP 1 with the GSI Q_Key");
	CHECK(wp.payload_len == WIRE_MAD_BYTES, "answer carries one MAD (%zu bytes)",
	      wp.payload_len);
	if (wp.payload_len != WIRE_MAD_BYTES)
		return 0;
	memcpy(mad, wire_pkt_payload(&wp), WIRE_MAD_BYTES);
	CHECK(wire_cm_parse(mad, WIRE_MAD_BYTES, m) == WIRE_R_OK, "answer is a CM MAD");
	return 1;
}

static void make_req(uint8_t *mad, uint64_t tid, uint32_t lcid, uint16_t port)
{
	struct wire_cm_ip_hdr *ip;

	wire_cm_init(mad, WIRE_CM_ATTR_REQ, tid);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_REQ_SERVICE_ID, wire_cm_ip_service_id(WIRE_CM_PS_TCP, port));
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_QPN, 0x11);
	wire_cm_set(mad, WIRE_CM_REQ_STARTING_PSN, 0x123456);
	wire_cm_set(mad, WIRE_CM_REQ_PKEY, 0xffff);
	wire_cm_set(mad, WIRE_CM_REQ_PATH_MTU, 3);
	wire_cm_set(mad, WIRE_CM_REQ_MAX_CM_RETRIES, 15);
	ip = (struct wire_cm_ip_hdr *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIVATE_DATA);
	wire_cm_ip_set_ipv(ip, 4);
	wire_cm_ip_set_sport(ip, 40000);
	memcpy(ip->src + 12, &me.sin_addr, 4);
	memcpy(ip->dst + 12, &daemon_sa.sin_addr, 4);
}

static void expect_reject(uint64_t tid, uint32_t lcid, const char *what)
{
	uint8_t mad[WIRE_MAD_BYTES];
	struct wire_cm_msg m;

	if (!recv_mad(2000, &m, mad)) {
		CHECK(0, "%s: no answer to the ConnectRequest", what);
		return;
	}
	CHECK(m.attr_id == WIRE_CM_ATTR_REJ, "%s: answer is a ConnectReject (attr 0x%04x)", what,
	      m.attr_id);
	CHECK(m.tid == tid, "%s: with the request's TID", what);
	CHECK(m.remote_comm_id == lcid, "%s: naming our comm ID (0x%08x)", what, m.remote_comm_id);
	CHECK(m.rej_reason == WIRE_CM_REJ_INVALID_SERVICE_ID, "%s: reason 8 (got %u)", what,
	      m.rej_reason);
	CHECK(wire_cm_get(mad, WIRE_CM_REJ_MESSAGE_REJECTED) == 0, "%s: rejecting the REQ", what);
}

/*
 * The active side of a connection to a listener on the daemon (an rping
 * server on its RNIC, port cm_port): REQ -> REP; the REQ again gets the
 * same REP; a REQ from the same QP under another comm ID is a stale
 * connection (REJ reason 10); RTU; DREQ -> DREP. Returns after the DREP.
 */
static void connect_listener(uint16_t cm_port)
{
	uint8_t mad[WIRE_MAD_BYTES], rep[WIRE_MAD_BYTES];
	struct wire_cm_msg m, r;
	const uint64_t tid = 0x0000000300000001ull;
	const uint32_t lcid = 0x5eed0001;

	make_req(mad, tid, lcid, cm_port);
	wire_cm_set(mad, WIRE_CM_REQ_RESPONDER_RESOURCES, 1);
	wire_cm_set(mad, WIRE_CM_REQ_INITIATOR_DEPTH, 1);
	wire_cm_set(mad, WIRE_CM_REQ_RETRY_COUNT, 7);
	wire_cm_set(mad, WIRE_CM_REQ_RNR_RETRY_COUNT, 7);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	if (!recv_mad(10000, &r, rep)) {
		CHECK(0, "listener: no answer to the ConnectRequest");
		return;
	}
	CHECK(r.attr_id == WIRE_CM_ATTR_REP, "listener: answer is a ConnectReply (attr 0x%04x)",
	      r.attr_id);
	CHECK(r.tid == tid && r.remote_comm_id == lcid && r.local_comm_id,
	      "listener: REP answers our REQ (TID, comm IDs 0x%08x/0x%08x)", r.local_comm_id,
	      r.remote_comm_id);
	CHECK(r.qpn > 1 && r.starting_psn <= 0xffffff, "listener: REP names QP 0x%06x, PSN 0x%06x",
	      r.qpn, r.starting_psn);

	/* Our REQ again (as after a lost REP): the same REP again. */
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	CHECK(recv_mad(5000, &m, mad) && m.attr_id == WIRE_CM_ATTR_REP &&
		  m.local_comm_id == r.local_comm_id && m.starting_psn == r.starting_psn,
	      "listener: a repeated REQ gets the same REP");

	/* Another REQ from the same QP under a new comm ID: stale. */
	make_req(mad, tid + 1, lcid + 1, cm_port);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	CHECK(recv_mad(5000, &m, mad) && m.attr_id == WIRE_CM_ATTR_REJ &&
		  m.rej_reason == WIRE_CM_REJ_STALE_CONN && m.remote_comm_id == lcid + 1,
	      "listener: a REQ naming a QP already connected: REJ reason 10 (got attr 0x%04x "
	      "reason %u)",
	      m.attr_id, m.rej_reason);

	wire_cm_init(mad, WIRE_CM_ATTR_RTU, tid);
	wire_cm_set(mad, WIRE_CM_RTU_LOCAL_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_RTU_REMOTE_COMM_ID, r.local_comm_id);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);

	wire_cm_init(mad, WIRE_CM_ATTR_DREQ, tid + 2);
	wire_cm_set(mad, WIRE_CM_DREQ_LOCAL_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_DREQ_REMOTE_COMM_ID, r.local_comm_id);
	wire_cm_set(mad, WIRE_CM_DREQ_REMOTE_QPN, r.qpn);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	CHECK(recv_mad(10000, &m, mad) && m.attr_id == WIRE_CM_ATTR_DREP && m.tid == tid + 2 &&
		  m.local_comm_id == r.local_comm_id && m.remote_comm_id == lcid,
	      "listener: DREQ answered by a DREP (attr 0x%04x)", m.attr_id);
}

int main(int argc, char **argv)
{
	uint8_t mad[WIRE_MAD_BYTES];
	struct wire_cm_msg m;
	int on = IP_PMTUDISC_DO;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: cm_probe LOCAL_ADDR DAEMON_ADDR PORT [LISTENER_PORT]\n");
		return 2;
	}
	me.sin_family = daemon_sa.sin_family = AF_INET;
	me.sin_port = daemon_sa.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[1], &me.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[2], &daemon_sa.sin_addr) != 1) {
		fprintf(stderr, "cm_probe: bad address\n");
		return 2;
	}
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	/* DF: the kernel sends IPv4 ID 0, the header the ICRC above assumes. */
	if (sock < 0 || setsockopt(sock, IPPROTO_IP, IP_MTU_DISCOVER, &on, sizeof(on)) ||
	    bind(sock, (struct sockaddr *)&me, sizeof(me))) {
		fprintf(stderr, "cm_probe: socket on %s:%s: %s\n", argv[1], argv[3],
			strerror(errno));
		return 2;
	}
	if (argc == 5) {
		connect_listener((uint16_t)atoi(argv[4]));
		printf("%d passed, %d failed\n", passed, failed);
		return failed ? 1 : 0;
	}

	/* A connect to a port nobody listens on. */
	make_req(mad, 0x0000000200000001ull, 0xa803637c, 7001);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	expect_reject(0x0000000200000001ull, 0xa803637c, "REQ");

	/* A disconnect of a connection the daemon does not know. */
	wire_cm_init(mad, WIRE_CM_ATTR_DREQ, 0x0000000200000002ull);
	wire_cm_set(mad, WIRE_CM_DREQ_LOCAL_COMM_ID, 0x11111111);
	wire_cm_set(mad, WIRE_CM_DREQ_REMOTE_COMM_ID, 0x22222222);
	wire_cm_set(mad, WIRE_CM_DREQ_REMOTE_QPN, 0x000012);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	if (recv_mad(2000, &m, mad)) {
		CHECK(m.attr_id == WIRE_CM_ATTR_DREP, "DREQ: answer is a DisconnectReply");
		CHECK(m.tid == 0x0000000200000002ull, "DREQ: with the request's TID");
		CHECK(m.local_comm_id == 0x22222222 && m.remote_comm_id == 0x11111111,
		      "DREQ: comm IDs swapped (0x%08x, 0x%08x)", m.local_comm_id, m.remote_comm_id);
	} else {
		CHECK(0, "DREQ: no answer");
	}

	/* A SIDR request of the UDP port space. */
	wire_cm_init(mad, WIRE_CM_ATTR_SIDR_REQ, 0x0000000200000003ull);
	wire_cm_set(mad, WIRE_CM_SIDR_REQ_REQUEST_ID, 0x0badcafe);
	wire_cm_set(mad, WIRE_CM_SIDR_REQ_PKEY, 0xffff);
	wire_cm_set(mad, WIRE_CM_SIDR_REQ_SERVICE_ID, wire_cm_ip_service_id(WIRE_CM_PS_UDP, 7472));
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	if (recv_mad(2000, &m, mad)) {
		CHECK(m.attr_id == WIRE_CM_ATTR_SIDR_REP, "SIDR_REQ: answer is a SIDR reply");
		CHECK(m.local_comm_id == 0x0badcafe, "SIDR_REQ: same request ID");
		CHECK(m.sidr_status == 1, "SIDR_REQ: status 1, not supported (got %u)",
		      m.sidr_status);
		CHECK(m.service_id == wire_cm_ip_service_id(WIRE_CM_PS_UDP, 7472),
		      "SIDR_REQ: same service ID");
	} else {
		CHECK(0, "SIDR_REQ: no answer");
	}

	/* What gets no answer: a short MAD, a wrong class version, the wrong
	 * Q_Key, a ReadyToUse for no connection. */
	make_req(mad, 0x0000000200000004ull, 0x33333333, 7001);
	send_mad(mad, 200, WIRE_GSI_QKEY);
	mad[2] = 1; /* class version 1 */
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	make_req(mad, 0x0000000200000005ull, 0x44444444, 7001);
	send_mad(mad, sizeof(mad), 0x11111111);
	wire_cm_init(mad, WIRE_CM_ATTR_RTU, 0x0000000200000006ull);
	wire_cm_set(mad, WIRE_CM_RTU_LOCAL_COMM_ID, 0x55555555);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	CHECK(!recv_mad(500, &m, mad),
	      "no answer to a short MAD, a wrong class version, a wrong "
	      "Q_Key or an unmatched RTU (got attr 0x%04x)",
	      m.attr_id);

	/* And the CM still serves. */
	make_req(mad, 0x0000000200000007ull, 0x66666666, 7002);
	send_mad(mad, sizeof(mad), WIRE_GSI_QKEY);
	expect_reject(0x0000000200000007ull, 0x66666666, "REQ after the bad ones");

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
