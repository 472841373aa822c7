/* SPDX-License-Identifier: MIT */
/*
 * Known-answer tests on the reference captures in UROCE_SHARED_DIR/captures
 * (argv[1] is UROCE_SHARED_DIR): the real Huawei HiRoCE capture, the
 * synthetic ICRC vectors and the ConnectX-4 Lx CNP, read through the same
 * capture reader the CLI uses. Exits 77 (ctest SKIP_RETURN_CODE) with a
 * message when the captures are not there.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcapfile.h"

#define SKIP_CODE 77

static char dir[4096];

struct tally {
	unsigned frames, roce, ok, bad, malformed;
	unsigned by_opcode[256];
};

/* Decode a whole capture; calls cb (may be NULL) for every RoCEv2 packet. */
static void tally_file(const char *name, struct tally *t,
		       void (*cb)(unsigned frame, const struct wire_decoded *d))
{
	char path[4200], err[512];
	struct common_pcap_reader r;
	struct wire_decoded d;
	int ret;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_msg(common_pcap_open_read(&r, path, err, sizeof(err)) == 0, "%s", err);
	while ((ret = common_pcap_next(&r, &d, NULL, err, sizeof(err))) == 1) {
		t->frames++;
		if (d.reason == WIRE_R_NOT_ROCE)
			continue;
		t->roce++;
		if (d.reason != WIRE_R_OK)
			t->malformed++;
		else if (d.icrc == WIRE_ICRC_OK)
			t->ok++;
		else
			t->bad++;
		if (d.reason == WIRE_R_OK)
			t->by_opcode[d.pkt.opcode]++;
		if (cb)
			cb((unsigned)r.frames, &d);
	}
	ck_assert_msg(ret == 0, "%s", err);
	common_pcap_close_read(&r);
}

/* Huawei: M bit on every packet, UDP source port = QPN, dport 4791. */
static void huawei_packet(unsigned frame, const struct wire_decoded *d)
{
	const struct wire_bth *bth = wire_pkt_bth(&d->pkt);

	ck_assert_msg(d->reason == WIRE_R_OK && d->icrc == WIRE_ICRC_OK, "frame %u", frame);
	ck_assert_uint_eq(wire_bth_get_mig(bth), 1);
	ck_assert_uint_eq(d->frame.dport, 4791);
	ck_assert(d->frame.sport == 69 || d->frame.sport == 72);
	ck_assert_uint_eq(wire_bth_get_pkey(bth), 0xffff);
}

START_TEST(test_huawei)
{
	struct tally t;

	tally_file("real_huawei-hiroce_rc-send_oferby-proxy.pcap", &t, huawei_packet);
	ck_assert_uint_eq(t.frames, 123);
	ck_assert_uint_eq(t.roce, 105);
	ck_assert_uint_eq(t.ok, 105);
	ck_assert_uint_eq(t.bad, 0);
	ck_assert_uint_eq(t.malformed, 0);
	ck_assert_uint_eq(t.by_opcode[WIRE_OP_RC_SEND_FIRST], 33);
	ck_assert_uint_eq(t.by_opcode[WIRE_OP_RC_SEND_LAST_IMM], 33);
	ck_assert_uint_eq(t.by_opcode[WIRE_OP_RC_SEND_ONLY_IMM], 2);
	ck_assert_uint_eq(t.by_opcode[WIRE_OP_RC_ACKNOWLEDGE], 37);
}
END_TEST

/* PROTOCOL.md section 6: opcode and trailer of each synthetic frame. */
static const struct {
	uint8_t opcode;
	uint8_t trailer[4];
	unsigned ip_version;
} synthetic[12] = {
    {0x04, {0x2e, 0x9e, 0xb8, 0xb7}, 4}, {0x11, {0x79, 0x25, 0x16, 0xbe}, 4},
    {0x0a, {0x6b, 0x75, 0xb1, 0x84}, 4}, {0x11, {0x03, 0xbc, 0x2a, 0xb0}, 4},
    {0x0c, {0x76, 0x1f, 0x9c, 0xde}, 4}, {0x10, {0xc0, 0x19, 0xfb, 0x4c}, 4},
    {0x13, {0xe6, 0xe0, 0xfb, 0xf3}, 4}, {0x12, {0xb2, 0x2a, 0x7e, 0xe5}, 4},
    {0x65, {0x57, 0x03, 0x3f, 0xc7}, 4}, {0x11, {0x51, 0x7d, 0x0f, 0xed}, 4},
    {0x04, {0x8e, 0x59, 0xae, 0xb7}, 6}, {0x04, {0x2e, 0x9e, 0xb8, 0x48}, 4},
};

static void synthetic_packet(unsigned frame, const struct wire_decoded *d)
{
	ck_assert_uint_ge(frame, 1);
	ck_assert_uint_le(frame, 12);
	ck_assert_int_eq(d->reason, WIRE_R_OK);
	ck_assert_uint_eq(d->pkt.opcode, synthetic[frame - 1].opcode);
	ck_assert_uint_eq(d->frame.ip_version, synthetic[frame - 1].ip_version);
	ck_assert_mem_eq(d->pkt.ib + d->pkt.len - 4, synthetic[frame - 1].trailer, 4);
	ck_assert_msg(d->icrc == (frame == 12 ? WIRE_ICRC_BAD : WIRE_ICRC_OK), "frame %u", frame);
	if (frame == 4)
		ck_assert_uint_eq(wire_aeth_get_syndrome(wire_pkt_aeth(&d->pkt)), 0x60);
	if (frame == 10)
		ck_assert_uint_eq(
		    wire_aeth_syndrome_type(wire_aeth_get_syndrome(wire_pkt_aeth(&d->pkt))),
		    WIRE_AETH_RNR_NAK);
	if (frame == 12)
		ck_assert_uint_eq(d->icrc_calc, 0xB7B89E2Eu);
}

START_TEST(test_synthetic)
{
	struct tally t;

	tally_file("synthetic_icrc_vectors.pcap", &t, synthetic_packet);
	ck_assert_uint_eq(t.roce, 12);
	ck_assert_uint_eq(t.ok, 11);
	ck_assert_uint_eq(t.bad, 1);
	ck_assert_uint_eq(t.malformed, 0);
}
END_TEST

static void cnp_packet(unsigned frame, const struct wire_decoded *d)
{
	static const uint8_t trailer[4] = {0x82, 0xfd, 0x00, 0x2a};
	const struct wire_bth *bth = wire_pkt_bth(&d->pkt);

	ck_assert_uint_eq(frame, 1);
	ck_assert_int_eq(d->reason, WIRE_R_OK);
	ck_assert_int_eq(d->icrc, WIRE_ICRC_OK);
	ck_assert_uint_eq(d->pkt.opcode, WIRE_OP_CNP);
	ck_assert_uint_eq(wire_bth_get_becn(bth), 1);
	ck_assert_uint_eq(wire_bth_get_destqp(bth), 0x118);
	ck_assert_uint_eq(d->frame.sport, 0);
	ck_assert_uint_eq(d->frame.tos, 0xc2);
	ck_assert_uint_eq(d->pkt.len, 12 + 16 + 4);
	ck_assert_mem_eq(d->pkt.ib + d->pkt.len - 4, trailer, 4);
}

START_TEST(test_cnp)
{
	struct tally t;

	tally_file("real_connectx4lx_cnp_from-scapy-test-hex.pcap", &t, cnp_packet);
	ck_assert_uint_eq(t.roce, 1);
	ck_assert_uint_eq(t.ok, 1);
}
END_TEST

int main(int argc, char **argv)
{
	struct stat st;
	SRunner *sr;
	Suite *s;
	TCase *tc;
	int failed;

	if (argc < 2) {
		fprintf(stderr, "usage: %s UROCE_SHARED_DIR\n", argv[0]);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/captures", argv[1]);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("SKIP: reference captures not found at %s (set -DUROCE_SHARED_DIR)\n", dir);
		return SKIP_CODE;
	}
	s = suite_create("captures");
	tc = tcase_create("known answers");
	tcase_add_test(tc, test_huawei);
	tcase_add_test(tc, test_synthetic);
	tcase_add_test(tc, test_cnp);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
