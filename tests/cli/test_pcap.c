/* SPDX-License-Identifier: MIT */
/*
 * Tests of emu/common/pcapfile.c: frames written by the capture writer read back
 * identically; every supported link type (Ethernet, VLAN, Linux cooked SLL
 * and SLL2, raw IP, IPv4/IPv6 link types, BSD loopback) and pcapng decode the
 * same packet; missing, non-pcap and unsupported files fail with a message.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcapfile.h"

static char tmpdir[256];

/* PROTOCOL.md's IPv4 "Hello" packet, from the IP header on. */
static const uint8_t hello_ip[52] = {
    0x45, 0x00, 0x00, 0x34, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0xa5, 0x31, 0xc0,
    0xa8, 0x01, 0x01, 0xc0, 0xa8, 0x01, 0x02, 0xc1, 0x23, 0x12, 0xb7, 0x00, 0x20,
    0x00, 0x00, 0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x01,
    0x00, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0x2e, 0x9e, 0xb8, 0xb7};

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/uroce-test-pcap-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static void path_of(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

/* Write one frame with the given link type using libpcap directly. */
static void write_one(const char *path, int dlt, const uint8_t *data, size_t len)
{
	pcap_t *p = pcap_open_dead(dlt, 65535);
	pcap_dumper_t *dd;
	struct pcap_pkthdr h = {.caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len};

	ck_assert_ptr_nonnull(p);
	dd = pcap_dump_open(p, path);
	ck_assert_ptr_nonnull(dd);
	pcap_dump((u_char *)dd, &h, data);
	pcap_dump_close(dd);
	pcap_close(p);
}

/* Read the single frame of a file; it must be the Hello packet with a good ICRC. */
static void expect_hello(const char *path)
{
	struct common_pcap_reader r;
	struct wire_decoded d;
	char err[512];

	ck_assert_msg(common_pcap_open_read(&r, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 1);
	ck_assert_msg(d.reason == WIRE_R_OK, "%s: %s", path, wire_reason_name(d.reason));
	ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
	ck_assert_uint_eq(d.pkt.opcode, WIRE_OP_RC_SEND_ONLY);
	ck_assert_uint_eq(d.frame.sport, 49443);
	ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 0);
	common_pcap_close_read(&r);
}

START_TEST(test_pcap_link_types)
{
	uint8_t buf[128];
	char path[300];

	/* Ethernet, zero MACs as tshark captures lo */
	memset(buf, 0, 12);
	buf[12] = 0x08, buf[13] = 0x00;
	memcpy(buf + 14, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "eth.pcap");
	write_one(path, DLT_EN10MB, buf, 14 + sizeof(hello_ip));
	expect_hello(path);

	/* Ethernet with a VLAN tag */
	buf[12] = 0x81, buf[13] = 0x00, buf[14] = 0x00, buf[15] = 0x05, buf[16] = 0x08,
	buf[17] = 0x00;
	memcpy(buf + 18, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "vlan.pcap");
	write_one(path, DLT_EN10MB, buf, 18 + sizeof(hello_ip));
	expect_hello(path);

	/* Linux cooked v1: type, ARPHRD, addr len, addr[8], protocol */
	memset(buf, 0, 16);
	buf[1] = 4, buf[3] = 1, buf[5] = 6, buf[14] = 0x08, buf[15] = 0x00;
	memcpy(buf + 16, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "sll.pcap");
	write_one(path, DLT_LINUX_SLL, buf, 16 + sizeof(hello_ip));
	expect_hello(path);

	/* Linux cooked v1 with a VLAN tag after the header */
	buf[14] = 0x81, buf[15] = 0x00, buf[16] = 0x00, buf[17] = 0x05, buf[18] = 0x08,
	buf[19] = 0x00;
	memcpy(buf + 20, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "sllvlan.pcap");
	write_one(path, DLT_LINUX_SLL, buf, 20 + sizeof(hello_ip));
	expect_hello(path);

	/* Linux cooked v2: protocol, reserved, ifindex, ARPHRD, type, addr len, addr[8] */
	memset(buf, 0, 20);
	buf[0] = 0x08, buf[1] = 0x00, buf[7] = 1, buf[9] = 1, buf[11] = 6;
	memcpy(buf + 20, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "sll2.pcap");
	write_one(path, DLT_LINUX_SLL2, buf, 20 + sizeof(hello_ip));
	expect_hello(path);

	/* raw IP, and the IPv4 link type */
	path_of(path, sizeof(path), "raw.pcap");
	write_one(path, DLT_RAW, hello_ip, sizeof(hello_ip));
	expect_hello(path);
	path_of(path, sizeof(path), "ipv4.pcap");
	write_one(path, DLT_IPV4, hello_ip, sizeof(hello_ip));
	expect_hello(path);

	/* BSD loopback: 4-byte address family */
	memset(buf, 0, 4);
	buf[0] = 2;
	memcpy(buf + 4, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "null.pcap");
	write_one(path, DLT_NULL, buf, 4 + sizeof(hello_ip));
	expect_hello(path);

	ck_assert(common_pcap_linktype_supported(DLT_EN10MB));
	ck_assert(!common_pcap_linktype_supported(DLT_IEEE802_11));
}
END_TEST

/* Cooked captures of something other than IP are skipped, not errors. */
START_TEST(test_pcap_cooked_not_ip)
{
	uint8_t buf[64] = {0};
	struct wire_decoded d;

	buf[14] = 0x08, buf[15] = 0x06; /* ARP */
	ck_assert_int_eq(common_pcap_decode(DLT_LINUX_SLL, buf, sizeof(buf), &d), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(common_pcap_decode(DLT_LINUX_SLL, buf, 10, &d), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(common_pcap_decode(DLT_LINUX_SLL2, buf, 10, &d), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(common_pcap_decode(DLT_NULL, buf, 2, &d), WIRE_R_NOT_ROCE);
	ck_assert_int_eq(common_pcap_decode(DLT_IEEE802_11, buf, sizeof(buf), &d), WIRE_R_NOT_ROCE);
}
END_TEST

static void put32(FILE *f, uint32_t v)
{
	ck_assert_uint_eq(fwrite(&v, 4, 1, f), 1);
}

/* A minimal pcapng file (host byte order): SHB, IDB (Ethernet), one EPB. */
START_TEST(test_pcap_pcapng)
{
	uint8_t frame[68] = {0};
	char path[300];
	FILE *f;
	uint32_t len = 14 + sizeof(hello_ip), padded = (len + 3) & ~3u;

	frame[12] = 0x08;
	memcpy(frame + 14, hello_ip, sizeof(hello_ip));
	path_of(path, sizeof(path), "hello.pcapng");
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	/* Section Header Block */
	put32(f, 0x0a0d0d0a), put32(f, 28), put32(f, 0x1a2b3c4d);
	put32(f, 1);				    /* version 1.0 */
	put32(f, 0xffffffff), put32(f, 0xffffffff); /* section length unknown */
	put32(f, 28);
	/* Interface Description Block: link type 1, snaplen 65535 */
	put32(f, 1), put32(f, 20), put32(f, 1), put32(f, 65535), put32(f, 20);
	/* Enhanced Packet Block */
	put32(f, 6), put32(f, 32 + padded), put32(f, 0), put32(f, 0), put32(f, 0);
	put32(f, len), put32(f, len);
	ck_assert_uint_eq(fwrite(frame, 1, padded, f), padded);
	put32(f, 32 + padded);
	ck_assert_int_eq(fclose(f), 0);
	expect_hello(path);
}
END_TEST

START_TEST(test_pcap_write_read_roundtrip)
{
	struct common_pcap_writer w;
	struct common_pcap_reader r;
	struct wire_frame_params p = {
	    .ip_version = 4, .src = {127, 0, 0, 1}, .dst = {127, 0, 0, 2}, .fill_icrc = 1};
	struct wire_decoded d;
	struct timeval ts = {.tv_sec = 1700000000, .tv_usec = 123456};
	char path[300], err[512];
	uint8_t ib[64];
	size_t wire_len;
	int n;

	path_of(path, sizeof(path), "w.pcap");
	ck_assert_int_eq(common_pcap_open_write(&w, path, err, sizeof(err)), 0);
	memcpy(ib, hello_ip + 28, 24);
	ck_assert_int_eq(common_pcap_write_ib(&w, &ts, &p, ib, 24), 0);
	ck_assert_int_eq(common_pcap_flush(&w), 0);
	p.ip_version = 6;
	p.src[0] = 0xfd, p.dst[0] = 0xfd;
	ck_assert_int_eq(common_pcap_write_ib(&w, NULL, &p, ib, 24), 0);
	ck_assert_int_eq(common_pcap_write_ib(&w, NULL, &p, ib, 2), -EINVAL);
	ck_assert_uint_eq(w.frames, 2);
	ck_assert_int_eq(common_pcap_close_write(&w), 0);

	ck_assert_int_eq(common_pcap_open_read(&r, path, err, sizeof(err)), 0);
	ck_assert_int_eq(r.linktype, DLT_EN10MB);
	for (int i = 0; i < 2; i++) {
		n = common_pcap_next(&r, &d, &wire_len, err, sizeof(err));
		ck_assert_int_eq(n, 1);
		ck_assert_int_eq(d.reason, WIRE_R_OK);
		ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
		ck_assert_uint_eq(d.frame.ip_version, i ? 6 : 4);
		ck_assert_uint_eq(wire_len, i ? 86 : 66);
	}
	ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.frames, 2);
	common_pcap_close_read(&r);
}
END_TEST

/* The daemon's pcapng: written block by block, comments in the packet
 * blocks, read back through libpcap like a capture of any other tool. */
START_TEST(test_pcapng_write_comments)
{
	static const struct wire_frame_params p = {
	    .ip_version = 4, .src = {127, 0, 0, 1}, .dst = {127, 0, 0, 2}, .fill_icrc = 1};
	static const struct timeval ts = {.tv_sec = 1700000000};
	uint8_t frame[128], file[1024];
	struct common_pcap_writer w;
	struct common_pcap_reader r;
	char path[300], err[512];
	size_t n, off, flen;
	struct wire_decoded d;
	uint32_t v;
	FILE *f;
	int len;

	path_of(path, sizeof(path), "w.pcapng");
	ck_assert_int_eq(common_pcap_open_write(&w, path, err, sizeof(err)), 0);
	len = wire_frame_build_eth(frame, sizeof(frame), &p, hello_ip + 28, 24);
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(common_pcap_write_frame_comment(&w, &ts, frame, (size_t)len, "abcde"), 0);
	ck_assert_int_eq(common_pcap_write_frame_comment(&w, &ts, frame, (size_t)len, NULL), 0);
	ck_assert_int_eq(common_pcap_write_ib(&w, NULL, &p, hello_ip + 28, 24), 0);
	ck_assert_int_eq(common_pcap_flush(&w), 0);
	ck_assert_int_eq(common_pcap_close_write(&w), 0);

	ck_assert_int_eq(common_pcap_open_read(&r, path, err, sizeof(err)), 0);
	ck_assert_int_eq(r.linktype, DLT_EN10MB);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(common_pcap_next(&r, &d, &n, err, sizeof(err)), 1);
		ck_assert_int_eq(d.icrc, WIRE_ICRC_OK);
		ck_assert_uint_eq(n, (size_t)len);
	}
	ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 0);
	common_pcap_close_read(&r);

	/* The blocks: SHB, IDB, then three EPBs whose lengths chain to the end;
	 * the first carries opt_comment "abcde" padded to 8 bytes. */
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	flen = fread(file, 1, sizeof(file), f);
	fclose(f);
	memcpy(&v, file, 4);
	ck_assert_uint_eq(v, 0x0a0d0d0a);
	memcpy(&v, file + 8, 4);
	ck_assert_uint_eq(v, 0x1a2b3c4d);
	memcpy(&v, file + 28, 4);
	ck_assert_uint_eq(v, 1);
	off = 48;
	for (int i = 0; i < 3; i++) {
		uint32_t total, trail;

		memcpy(&v, file + off, 4);
		ck_assert_uint_eq(v, 6);
		memcpy(&total, file + off + 4, 4);
		memcpy(&trail, file + off + total - 4, 4);
		ck_assert_uint_eq(total, trail);
		ck_assert_uint_eq(total % 4, 0);
		if (i == 0) {
			size_t o = off + 28 + (((size_t)len + 3) & ~(size_t)3);
			uint16_t code, clen;

			memcpy(&code, file + o, 2);
			memcpy(&clen, file + o + 2, 2);
			ck_assert_uint_eq(code, 1);
			ck_assert_uint_eq(clen, 5);
			ck_assert(!memcmp(file + o + 4, "abcde", 5));
			ck_assert_uint_eq(total, 28 + ((len + 3) & ~3) + 4 + 8 + 4 + 4);
		} else {
			ck_assert_uint_eq(total, 28 + ((len + 3) & ~3) + 4);
		}
		off += total;
	}
	ck_assert_uint_eq(off, flen);
}
END_TEST

START_TEST(test_pcap_errors)
{
	struct common_pcap_reader r;
	struct common_pcap_writer w;
	char path[300], err[512];
	FILE *f;

	path_of(path, sizeof(path), "missing.pcap");
	ck_assert_int_eq(common_pcap_open_read(&r, path, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
	ck_assert_ptr_nonnull(strstr(err, "missing.pcap"));

	path_of(path, sizeof(path), "text.pcap");
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("this is not a capture file\n", f);
	fclose(f);
	ck_assert_int_eq(common_pcap_open_read(&r, path, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a readable pcap/pcapng file"));

	path_of(path, sizeof(path), "wifi.pcap");
	write_one(path, DLT_IEEE802_11, hello_ip, sizeof(hello_ip));
	ck_assert_int_eq(common_pcap_open_read(&r, path, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "unsupported link type"));

	ck_assert_int_eq(common_pcap_open_write(&w, "/nonexistent-dir/x.pcap", err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
}
END_TEST

/*
 * A loopback capture of a UDP GSO datagram of uroced's (wire/gso.h): one
 * raw-IP frame with ID 0 holding three packets of seg bytes (4112-byte
 * WRITE Middles, or small SEND Onlys) whose ICRCs were sealed for IDs 0, 1
 * and 2. It reads back as three packets with good ICRCs; a damaged one
 * among them is bad, the others still good.
 */
static size_t gso_frame(uint8_t *buf, unsigned bad, size_t seg)
{
	const uint8_t src[4] = {127, 0, 0, 2}, dst[4] = {127, 0, 0, 1};
	size_t ib_len = seg - 4, total = 0;
	uint8_t *ib = buf + 28;

	for (unsigned i = 0; i < 3; i++, ib += seg) {
		memset(ib, 0, 12);
		ib[0] = seg == 4112 ? WIRE_OP_RC_RDMA_WRITE_MIDDLE : WIRE_OP_RC_SEND_ONLY;
		wire_put_be16(ib + 2, 0xffff);
		wire_put_be24(ib + 5, 0x11);
		wire_put_be24(ib + 9, 100 + i);
		for (size_t k = 12; k < ib_len; k++)
			ib[k] = (uint8_t)(k * 13 + i);
		wire_icrc_put(ib + ib_len,
			      wire_icrc_end(wire_icrc_add_ib(
				  wire_icrc_begin_udp4(src, dst, (uint16_t)i, WIRE_IPV4_DF, 4791,
						       4791, ib_len),
				  0, ib, ib_len)));
		if (i == bad)
			ib[20] ^= 1;
		total += seg;
	}
	/* IPv4 (ID 0, DF) and UDP headers covering all three. */
	memset(buf, 0, 28);
	buf[0] = 0x45;
	wire_put_be16(buf + 2, (uint16_t)(28 + total));
	wire_put_be16(buf + 6, WIRE_IPV4_DF);
	buf[8] = 64;
	buf[9] = 17;
	memcpy(buf + 12, src, 4);
	memcpy(buf + 16, dst, 4);
	wire_put_be16(buf + 10, wire_inet_csum(buf, 20));
	wire_put_be16(buf + 20, 4791);
	wire_put_be16(buf + 22, 4791);
	wire_put_be16(buf + 24, (uint16_t)(8 + total));
	return 28 + total;
}

START_TEST(test_pcap_gso_datagram)
{
	static uint8_t frame[28 + 3 * 4112];
	struct common_pcap_reader r;
	struct wire_decoded d;
	char path[300], err[512];

	for (unsigned v = 0; v < 8; v++) {
		unsigned bad = v % 4; /* 3: none damaged */
		size_t seg = v < 4 ? 4112 : 80;

		path_of(path, sizeof(path), "gso.pcap");
		write_one(path, DLT_RAW, frame, gso_frame(frame, bad, seg));
		ck_assert_msg(common_pcap_open_read(&r, path, err, sizeof(err)) == 0, "%s", err);
		for (unsigned i = 0; i < 3; i++) {
			size_t wire_len = 0;

			ck_assert_int_eq(common_pcap_next(&r, &d, &wire_len, err, sizeof(err)), 1);
			ck_assert_msg(d.reason == WIRE_R_OK, "v %u i %u: %s", v, i, wire_reason_name(d.reason));
			ck_assert_uint_eq(d.pkt.opcode, seg == 4112 ? WIRE_OP_RC_RDMA_WRITE_MIDDLE
								 : WIRE_OP_RC_SEND_ONLY);
			ck_assert_uint_eq(wire_bth_get_psn((const struct wire_bth *)d.pkt.ib),
					  100 + i);
			ck_assert_uint_eq(d.frame.ip_id, i);
			ck_assert_int_eq(d.frame.ip_csum_ok, 1);
			ck_assert_uint_eq(wire_len, 28 + seg);
			ck_assert_int_eq(d.icrc, i == bad ? WIRE_ICRC_BAD : WIRE_ICRC_OK);
			ck_assert_uint_eq(r.gso_seg, i + 1);
			ck_assert_uint_eq(r.gso_count, 3);
			ck_assert_uint_eq(r.frames, 1);
		}
		ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 0);
		common_pcap_close_read(&r);
	}
	/* A datagram that is not a whole number of such packets stays one, malformed. */
	gso_frame(frame, 3, 4112);
	wire_put_be16(frame + 2, (uint16_t)(28 + 2 * 4112 - 4));
	wire_put_be16(frame + 24, (uint16_t)(8 + 2 * 4112 - 4));
	wire_put_be16(frame + 10, 0);
	wire_put_be16(frame + 10, wire_inet_csum(frame, 20));
	write_one(path, DLT_RAW, frame, 28 + 2 * 4112 - 4);
	ck_assert_msg(common_pcap_open_read(&r, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 1);
	ck_assert_uint_eq(r.gso_count, 0);
	ck_assert_int_ne(d.reason, WIRE_R_OK);
	ck_assert_int_eq(common_pcap_next(&r, &d, NULL, err, sizeof(err)), 0);
	common_pcap_close_read(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pcap");
	TCase *tc = tcase_create("pcap");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pcap_link_types);
	tcase_add_test(tc, test_pcap_cooked_not_ip);
	tcase_add_test(tc, test_pcap_pcapng);
	tcase_add_test(tc, test_pcap_write_read_roundtrip);
	tcase_add_test(tc, test_pcapng_write_comments);
	tcase_add_test(tc, test_pcap_errors);
	tcase_add_test(tc, test_pcap_gso_datagram);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
