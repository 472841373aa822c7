/* SPDX-License-Identifier: MIT */
/*
 * test_abi_sysfs.c: verbs-shim/abi_sysfs.c. ibv_get_sysfs_path() with and
 * without $SYSFS_PATH (each Check test runs in its own process, so the
 * once-per-process value is computed afresh), and ibv_read_sysfs_file() on
 * real files in a temporary directory: newline stripping, NUL termination,
 * a buffer too small, an empty file and a missing file.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"

static char dir[] = "/tmp/uroce-abi-sysfs-XXXXXX";

static void write_file(const char *name, const char *content, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, len), (ssize_t)len);
	close(fd);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_file("board_id", "MT_0000000001\n", 14);
	write_file("no_newline", "abc", 3);
	write_file("exact8", "12345678", 8);
	write_file("exact8nl", "1234567\n", 8);
	write_file("empty", "", 0);
}

static void teardown(void)
{
	static const char *const names[] = {"board_id", "no_newline", "exact8", "exact8nl",
					    "empty"};
	char path[256];

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

START_TEST(test_sysfs_path_default)
{
	unsetenv("SYSFS_PATH");
	ck_assert_str_eq(ibv_get_sysfs_path(), "/sys");
	/* Computed once: later changes of the environment are not seen. */
	setenv("SYSFS_PATH", "/elsewhere", 1);
	ck_assert_str_eq(ibv_get_sysfs_path(), "/sys");
}
END_TEST

START_TEST(test_sysfs_path_env)
{
	setenv("SYSFS_PATH", "/tmp/fake-sys///", 1);
	ck_assert_str_eq(ibv_get_sysfs_path(), "/tmp/fake-sys");
}
END_TEST

START_TEST(test_read_strips_newline)
{
	char buf[64];

	memset(buf, 'x', sizeof(buf));
	ck_assert_int_eq(ibv_read_sysfs_file(dir, "board_id", buf, sizeof(buf)), 13);
	ck_assert_str_eq(buf, "MT_0000000001");
}
END_TEST

START_TEST(test_read_terminates)
{
	char buf[64];

	memset(buf, 'x', sizeof(buf));
	ck_assert_int_eq(ibv_read_sysfs_file(dir, "no_newline", buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, "abc");
}
END_TEST

START_TEST(test_read_buffer_limits)
{
	char buf[8];

	/* 8 bytes without newline in 8: no room for the NUL, so -1. */
	ck_assert_int_eq(ibv_read_sysfs_file(dir, "exact8", buf, sizeof(buf)), -1);
	/* 7 bytes plus newline in 8: the newline becomes the NUL. */
	ck_assert_int_eq(ibv_read_sysfs_file(dir, "exact8nl", buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "1234567");
}
END_TEST

START_TEST(test_read_empty)
{
	char buf[8] = "keep";

	ck_assert_int_eq(ibv_read_sysfs_file(dir, "empty", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "keep");
}
END_TEST

START_TEST(test_read_missing)
{
	char buf[8];

	errno = 0;
	ck_assert_int_eq(ibv_read_sysfs_file(dir, "absent", buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, ENOENT);
	/* A device no daemon serves is not in the sysfs view (a run directory
	 * without sockets: no live device at all, so the real /sys answers). */
	setenv("UROCE_RUNDIR", dir, 1);
	ck_assert_int_eq(
	    ibv_read_sysfs_file("/sys/class/infiniband/uroce0", "board_id", buf, sizeof(buf)), -1);
	unsetenv("UROCE_RUNDIR");
}
END_TEST

START_TEST(test_read_ibdev_file)
{
	char buf[8];

	errno = 0;
	ck_assert_int_eq(ibv_read_ibdev_sysfs_file(buf, sizeof(buf), NULL, "%s", "board_id"), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static Suite *sysfs_suite(void)
{
	Suite *s = suite_create("abi_sysfs");
	TCase *tc = tcase_create("sysfs_path");

	tcase_add_test(tc, test_sysfs_path_default);
	tcase_add_test(tc, test_sysfs_path_env);
	suite_add_tcase(s, tc);

	tc = tcase_create("read_sysfs_file");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_read_strips_newline);
	tcase_add_test(tc, test_read_terminates);
	tcase_add_test(tc, test_read_buffer_limits);
	tcase_add_test(tc, test_read_empty);
	tcase_add_test(tc, test_read_missing);
	tcase_add_test(tc, test_read_ibdev_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sysfs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
