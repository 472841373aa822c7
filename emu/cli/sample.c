/* SPDX-License-Identifier: MIT */
/*
 * `uroce sample FILE.pcap`: write a capture holding one valid packet of
 * every opcode uroce knows (RC, UC, UD, XRC, CNP), with realistic fields and
 * correct ICRCs, between 127.0.0.1 (requester) and 127.0.0.2 (responder),
 * then a few AETH variants (NAKs, RNR NAK, credits), the RDMA CM's MADs
 * (connect, reject, disconnect, SIDR) and a handful of IPv6 packets. It is the first thing to open
 * in Wireshark, and the input of the tshark cross-check test. The file is deterministic: same bytes
 * every run.
 */
/* libpcap's headers use the BSD u_int/u_char types. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pcapfile.h"

/* Fixed start time (2024-01-01T00:00:00Z) so the file is reproducible. */
#define CLI_SAMPLE_EPOCH 1704067200
#define CLI_SAMPLE_PMTU 256

struct cli_sample_side {
	uint8_t ip4[4];
	uint8_t ip6[16];
	uint8_t mac[6];
};

/* Requester and responder QP numbers of one transport's connection. */
struct cli_sample_conn {
	uint32_t req_qpn, resp_qpn;
	uint32_t psn;
};

struct cli_sample {
	struct common_pcap_writer w;
	unsigned ip_version;
	uint64_t n;
	struct cli_sample_side a, b;
};

static void cli_sample_usage(FILE *out)
{
	fprintf(out,
		"usage: uroce sample FILE.pcap\n"
		"  Write one valid RoCEv2 packet of every opcode (RC, UC, UD, XRC, CNP),\n"
		"  some ACK/NAK variants, the CM MADs of a connection and a few IPv6 packets,\n"
		"  all with correct ICRCs.\n"
		"  Open the file in Wireshark, or check it with `uroce decode FILE.pcap`.\n");
}

/* rxe's choice: a fixed UDP source port per QP in 0xC000-0xFFFF (PROTOCOL.md 1). */
static uint16_t cli_sample_sport(uint32_t qpn)
{
	return (uint16_t)(WIRE_UDP_SPORT_BASE | (qpn & 0x3fff));
}

/* Frame and write one IB packet from `from` to `to`; src QP decides the port. */
static int cli_sample_emit(struct cli_sample *s, const struct wire_build *b, uint32_t src_qpn,
			   int from_a, const void *payload, size_t payload_len)
{
	const struct cli_sample_side *from = from_a ? &s->a : &s->b;
	const struct cli_sample_side *to = from_a ? &s->b : &s->a;
	struct wire_frame_params p = {0};
	uint8_t ib[WIRE_MAX_PMTU + 128];
	struct timeval ts;
	int len = wire_build_ib(ib, sizeof(ib), b, payload, payload_len);

	if (len < 0)
		return len;
	p.ip_version = s->ip_version;
	if (s->ip_version == 4) {
		memcpy(p.src, from->ip4, 4);
		memcpy(p.dst, to->ip4, 4);
		p.tos = 0x02; /* ECT(0), as RoCEv2 NICs mark for ECN */
	} else {
		memcpy(p.src, from->ip6, 16);
		memcpy(p.dst, to->ip6, 16);
		p.tos = 0x02;
	}
	memcpy(p.eth_src, from->mac, 6);
	memcpy(p.eth_dst, to->mac, 6);
	p.sport = cli_sample_sport(src_qpn);
	p.dport = WIRE_ROCEV2_PORT;
	p.fill_icrc = 1;
	ts.tv_sec = CLI_SAMPLE_EPOCH + (time_t)(s->n / 1000);
	ts.tv_usec = (suseconds_t)(s->n % 1000) * 1000;
	s->n++;
	return common_pcap_write_ib(&s->w, &ts, &p, ib, (size_t)len);
}

/*
 * One packet of opcode `info` on connection c, fields filled as a real
 * exchange would have them (a 2-packet-and-a-bit message for First/Middle/
 * Last, PMTU 256, addresses and keys of a plausible registration).
 */
static int cli_sample_opcode(struct cli_sample *s, const struct wire_opcode_info *info,
			     struct cli_sample_conn *c, const uint8_t *data)
{
	uint32_t m = info->mask;
	struct wire_build b = {0};
	size_t len = 0;
	int from_a = !(m & WIRE_RESP_MASK) && !(m & WIRE_CNP_OP_MASK);
	const size_t msg_len = 2 * CLI_SAMPLE_PMTU + 99; /* First + Middle + Last of 99 bytes */

	b.opcode = info->opcode;
	b.destqp = from_a ? c->resp_qpn : c->req_qpn;
	b.psn = c->psn;
	c->psn = wire_psn_add(c->psn, 1);

	if (m & WIRE_PAYLOAD_MASK) {
		if (m & WIRE_MIDDLE_MASK || (m & WIRE_ONLY_MASK) == WIRE_START_MASK)
			len = CLI_SAMPLE_PMTU;
		else if ((m & WIRE_ONLY_MASK) == WIRE_END_MASK)
			len = 99; /* pad 1 */
		else if (m & WIRE_ATOMIC_WRITE_MASK)
			len = 8;
		else
			len = 13; /* an Only packet: pad 3 */
	}
	/* Requesters ask for an ACK at the end of each message (rxe, real HW). */
	if (from_a && (m & WIRE_END_MASK) && !(m & WIRE_CNP_OP_MASK))
		b.ackreq = 1;
	if ((m & WIRE_IMMDT_MASK) && (m & WIRE_SEND_MASK))
		b.se = 1;
	b.va = 0x00007f3a5c200000ull;
	b.rkey = 0x00001a2b;
	if (m & WIRE_RETH_MASK)
		b.dmalen = (m & WIRE_ONLY_MASK) == WIRE_START_MASK ? (uint32_t)msg_len
			   : (m & WIRE_READ_MASK)		   ? 1024
			   : (m & WIRE_FLUSH_MASK)		   ? 4096
								   : (uint32_t)len;
	if (m & WIRE_ATMETH_MASK) {
		b.va = 0x00007f3a5c200040ull; /* 8-byte aligned */
		b.swap_add = (info->opcode & 0x1f) == 0x13 ? 0x1111222233334444ull : 5;
		b.compare = (info->opcode & 0x1f) == 0x13 ? 0x0000000000000007ull : 0;
	}
	if (m & WIRE_AETH_MASK) {
		b.syndrome = WIRE_AETH_ACK_UNLIMITED;
		b.msn = 3;
	}
	b.orig = 0x0000000000000007ull;
	b.qkey = 0x11111111;
	b.srcqp = c->req_qpn;
	b.imm = 0x12345678;
	b.ieth_rkey = 0x00002b3c;
	b.srqn = 0x000055;
	b.feth_sel = 1;
	b.feth_plt = 1;
	if (m & WIRE_CNP_OP_MASK) {
		/* Annex A17.9: BECN set, PSN 0, A 0, to the QP being throttled. */
		b.becn = 1;
		b.psn = 0;
		b.destqp = c->req_qpn;
	}
	return cli_sample_emit(s, &b, from_a ? c->req_qpn : c->resp_qpn, from_a, data, len);
}

/* Acknowledge variants: credits, RNR NAK, the three common NAKs. */
static int cli_sample_acks(struct cli_sample *s, struct cli_sample_conn *c)
{
	static const uint8_t syndromes[] = {
	    0x06,      /* ACK, credit code 6 = 8 credits (as Huawei HW sends) */
	    0x20 | 14, /* RNR NAK, timer code 14 = 1.28 ms */
	    0x60 | WIRE_NAK_PSN_SEQ_ERR,
	    0x60 | WIRE_NAK_INVALID_REQUEST,
	    0x60 | WIRE_NAK_REMOTE_ACCESS_ERR,
	    0x60 | WIRE_NAK_REMOTE_OP_ERR,
	};

	for (size_t i = 0; i < sizeof(syndromes); i++) {
		struct wire_build b = {0};
		int ret;

		b.opcode = WIRE_OP_RC_ACKNOWLEDGE;
		b.destqp = c->req_qpn;
		b.psn = c->psn;
		b.syndrome = syndromes[i];
		b.msn = 4;
		ret = cli_sample_emit(s, &b, c->resp_qpn, 0, NULL, 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The IPv4-mapped GID of a side (RoCEv2 GIDs of IPv4 ports). */
static void cli_sample_gid(const struct cli_sample_side *side, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, side->ip4, 4);
}

/* The RDMA CM IP header at the private data p: IPv4, sport, a -> b. */
static void cli_sample_cm_ip(const struct cli_sample *s, uint8_t *p, uint16_t sport)
{
	struct wire_cm_ip_hdr *h = (struct wire_cm_ip_hdr *)p;

	memset(h, 0, sizeof(*h));
	wire_cm_ip_set_ipv(h, 4);
	wire_cm_ip_set_sport(h, sport);
	memcpy(h->src + 12, s->a.ip4, 4);
	memcpy(h->dst + 12, s->b.ip4, 4);
}

/* Send one CM MAD as a GSI QP does: UD SEND Only, QP1 to QP1, the GSI Q_Key. */
static int cli_sample_mad(struct cli_sample *s, const uint8_t *mad, int from_a, uint32_t *psn)
{
	struct wire_build b = {0};

	b.opcode = WIRE_OP_UD_SEND_ONLY;
	b.destqp = WIRE_GSI_QPN;
	b.psn = (*psn)++;
	b.ackreq = 1;
	b.qkey = WIRE_GSI_QKEY;
	b.srcqp = WIRE_GSI_QPN;
	return cli_sample_emit(s, &b, WIRE_GSI_QPN, from_a, mad, WIRE_MAD_BYTES);
}

/*
 * The RDMA CM's connection handshake and teardown as CM MADs (IBA 12.6): a
 * ConnectRequest from 127.0.0.1 to port 7471 of the TCP port space, the
 * reply, ReadyToUse, an MRA, a reject of a second request, disconnect
 * request and reply, and a SIDR exchange of the UDP port space.
 */
static int cli_sample_cm(struct cli_sample *s)
{
	const uint32_t lcid = 0x11223344, rcid = 0x55667788;
	uint32_t psn_a = 0, psn_b = 0;
	uint8_t mad[WIRE_MAD_BYTES], gid[16];
	int ret;

	wire_cm_init(mad, WIRE_CM_ATTR_REQ, 0x0000000100000001ull);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_REQ_SERVICE_ID, wire_cm_ip_service_id(WIRE_CM_PS_TCP, 7471));
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_CA_GUID, 0x020000fffe000001ull);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_QPN, 0x000011);
	wire_cm_set(mad, WIRE_CM_REQ_RESPONDER_RESOURCES, 16);
	wire_cm_set(mad, WIRE_CM_REQ_INITIATOR_DEPTH, 16);
	wire_cm_set(mad, WIRE_CM_REQ_REMOTE_CM_RESPONSE_TIMEOUT, 20);
	wire_cm_set(mad, WIRE_CM_REQ_STARTING_PSN, 0x123456);
	wire_cm_set(mad, WIRE_CM_REQ_LOCAL_CM_RESPONSE_TIMEOUT, 20);
	wire_cm_set(mad, WIRE_CM_REQ_RETRY_COUNT, 7);
	wire_cm_set(mad, WIRE_CM_REQ_PKEY, 0xffff);
	wire_cm_set(mad, WIRE_CM_REQ_PATH_MTU, 3);
	wire_cm_set(mad, WIRE_CM_REQ_RNR_RETRY_COUNT, 7);
	wire_cm_set(mad, WIRE_CM_REQ_MAX_CM_RETRIES, 15);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_LOCAL_LID, 0xffff);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_REMOTE_LID, 0xffff);
	cli_sample_gid(&s->a, gid);
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIMARY_LOCAL_GID), gid, 16);
	cli_sample_gid(&s->b, gid);
	memcpy((uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIMARY_REMOTE_GID), gid, 16);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_HOP_LIMIT, 64);
	wire_cm_set(mad, WIRE_CM_REQ_PRIMARY_LOCAL_ACK_TIMEOUT, 19);
	cli_sample_cm_ip(s, (uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_REQ_PRIVATE_DATA), 40000);
	ret = cli_sample_mad(s, mad, 1, &psn_a);

	wire_cm_init(mad, WIRE_CM_ATTR_REP, 0x0000000100000001ull);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_COMM_ID, rcid);
	wire_cm_set(mad, WIRE_CM_REP_REMOTE_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_QPN, 0x000012);
	wire_cm_set(mad, WIRE_CM_REP_STARTING_PSN, 0x654321);
	wire_cm_set(mad, WIRE_CM_REP_RESPONDER_RESOURCES, 16);
	wire_cm_set(mad, WIRE_CM_REP_INITIATOR_DEPTH, 16);
	wire_cm_set(mad, WIRE_CM_REP_TARGET_ACK_DELAY, 15);
	wire_cm_set(mad, WIRE_CM_REP_FAILOVER_ACCEPTED, 3);
	wire_cm_set(mad, WIRE_CM_REP_END_TO_END_FLOW_CONTROL, 1);
	wire_cm_set(mad, WIRE_CM_REP_RNR_RETRY_COUNT, 7);
	wire_cm_set(mad, WIRE_CM_REP_LOCAL_CA_GUID, 0x020000fffe000002ull);
	if (!ret)
		ret = cli_sample_mad(s, mad, 0, &psn_b);

	wire_cm_init(mad, WIRE_CM_ATTR_RTU, 0x0000000100000001ull);
	wire_cm_set(mad, WIRE_CM_RTU_LOCAL_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_RTU_REMOTE_COMM_ID, rcid);
	if (!ret)
		ret = cli_sample_mad(s, mad, 1, &psn_a);

	wire_cm_init(mad, WIRE_CM_ATTR_MRA, 0x0000000100000002ull);
	wire_cm_set(mad, WIRE_CM_MRA_LOCAL_COMM_ID, rcid + 1);
	wire_cm_set(mad, WIRE_CM_MRA_REMOTE_COMM_ID, lcid + 1);
	wire_cm_set(mad, WIRE_CM_MRA_SERVICE_TIMEOUT, 20);
	if (!ret)
		ret = cli_sample_mad(s, mad, 0, &psn_b);

	wire_cm_init(mad, WIRE_CM_ATTR_REJ, 0x0000000100000002ull);
	wire_cm_set(mad, WIRE_CM_REJ_LOCAL_COMM_ID, rcid + 1);
	wire_cm_set(mad, WIRE_CM_REJ_REMOTE_COMM_ID, lcid + 1);
	wire_cm_set(mad, WIRE_CM_REJ_REASON, WIRE_CM_REJ_CONSUMER_REJECT);
	if (!ret)
		ret = cli_sample_mad(s, mad, 0, &psn_b);

	wire_cm_init(mad, WIRE_CM_ATTR_DREQ, 0x0000000100000003ull);
	wire_cm_set(mad, WIRE_CM_DREQ_LOCAL_COMM_ID, lcid);
	wire_cm_set(mad, WIRE_CM_DREQ_REMOTE_COMM_ID, rcid);
	wire_cm_set(mad, WIRE_CM_DREQ_REMOTE_QPN, 0x000012);
	if (!ret)
		ret = cli_sample_mad(s, mad, 1, &psn_a);

	wire_cm_init(mad, WIRE_CM_ATTR_DREP, 0x0000000100000003ull);
	wire_cm_set(mad, WIRE_CM_DREP_LOCAL_COMM_ID, rcid);
	wire_cm_set(mad, WIRE_CM_DREP_REMOTE_COMM_ID, lcid);
	if (!ret)
		ret = cli_sample_mad(s, mad, 0, &psn_b);

	wire_cm_init(mad, WIRE_CM_ATTR_SIDR_REQ, 0x0000000100000004ull);
	wire_cm_set(mad, WIRE_CM_SIDR_REQ_REQUEST_ID, 0x0badcafe);
	wire_cm_set(mad, WIRE_CM_SIDR_REQ_PKEY, 0xffff);
	wire_cm_set(mad, WIRE_CM_SIDR_REQ_SERVICE_ID, wire_cm_ip_service_id(WIRE_CM_PS_UDP, 7472));
	cli_sample_cm_ip(s, (uint8_t *)wire_cm_field_ptr(mad, WIRE_CM_SIDR_REQ_PRIVATE_DATA),
			 40001);
	if (!ret)
		ret = cli_sample_mad(s, mad, 1, &psn_a);

	wire_cm_init(mad, WIRE_CM_ATTR_SIDR_REP, 0x0000000100000004ull);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_REQUEST_ID, 0x0badcafe);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_QPN, 0x000034);
	wire_cm_set(mad, WIRE_CM_SIDR_REP_SERVICE_ID, wire_cm_ip_service_id(WIRE_CM_PS_UDP, 7472));
	wire_cm_set(mad, WIRE_CM_SIDR_REP_QKEY, 0x01234567);
	if (!ret)
		ret = cli_sample_mad(s, mad, 0, &psn_b);
	return ret;
}

static int cli_sample_write(struct cli_sample *s)
{
	struct cli_sample_conn rc = {0x000011, 0x000012, 100};
	struct cli_sample_conn uc = {0x000021, 0x000022, 200};
	struct cli_sample_conn ud = {0x000033, 0x000034, 300};
	struct cli_sample_conn xrc = {0x000041, 0x000042, 400};
	static const uint8_t v6_ops[] = {
	    WIRE_OP_RC_SEND_ONLY,
	    WIRE_OP_RC_ACKNOWLEDGE,
	    WIRE_OP_RC_RDMA_WRITE_ONLY,
	    WIRE_OP_RC_RDMA_READ_REQUEST,
	    WIRE_OP_RC_RDMA_READ_RESPONSE_ONLY,
	    WIRE_OP_UD_SEND_ONLY_IMM,
	};
	uint8_t data[WIRE_MAX_PMTU];
	int ret;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)("uroce sample payload. "[i % 22]);

	s->ip_version = 4;
	for (unsigned i = 0; i < WIRE_OPCODE_COUNT; i++) {
		const struct wire_opcode_info *info = wire_opcode_at(i);
		struct cli_sample_conn *c;

		switch (wire_opcode_transport(info->opcode)) {
		case WIRE_TRANSPORT_UC:
			c = &uc;
			break;
		case WIRE_TRANSPORT_UD:
			c = &ud;
			break;
		case WIRE_TRANSPORT_XRC:
			c = &xrc;
			break;
		default:
			c = &rc;
			break;
		}
		ret = cli_sample_opcode(s, info, c, data);
		if (ret < 0)
			return ret;
	}
	ret = cli_sample_acks(s, &rc);
	if (ret < 0)
		return ret;
	ret = cli_sample_cm(s);
	if (ret < 0)
		return ret;

	s->ip_version = 6;
	for (size_t i = 0; i < sizeof(v6_ops); i++) {
		struct cli_sample_conn *c = v6_ops[i] == WIRE_OP_UD_SEND_ONLY_IMM ? &ud : &rc;

		ret = cli_sample_opcode(s, wire_opcode_info(v6_ops[i]), c, data);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cli_sample(int argc, char **argv)
{
	struct cli_sample s = {
	    .a = {.ip4 = {127, 0, 0, 1},
		  .ip6 = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		  .mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01}},
	    .b = {.ip4 = {127, 0, 0, 2},
		  .ip6 = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2},
		  .mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02}},
	};
	char err[1024];
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cli_sample_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		cli_sample_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	ret = common_pcap_open_write(&s.w, argv[1], err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "uroce sample: %s\n", err);
		return CLI_EXIT_USAGE;
	}
	ret = cli_sample_write(&s);
	if (common_pcap_close_write(&s.w) < 0 && ret == 0)
		ret = -EIO;
	if (ret < 0) {
		fprintf(stderr, "uroce sample: %s: %s\n", argv[1], strerror(-ret));
		return CLI_EXIT_USAGE;
	}
	printf("wrote %llu packets to %s\n", (unsigned long long)s.n, argv[1]);
	return CLI_EXIT_OK;
}
