/* SPDX-License-Identifier: MIT */
/*
 * test_abi_provider.c: verbs-shim/abi_provider.c and abi_log.c, the
 * IBVERBS_PRIVATE_34 provider interface. Registration is a harmless no-op,
 * kernel commands fail with EOPNOTSUPP, verbs_init_cq() and
 * __ioctl_final_num_attrs() do their real work, verbs_allow_disassociate_destroy
 * follows the environment (ctest runs this binary with and without it) and
 * __verbs_log() filters by VERBS_LOG_LEVEL and writes to VERBS_LOG_FILE.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "abi.h"

/* rdma-core's cmd_ioctl.h layout, as the providers build it. */
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error : 1;
	uint8_t fallback_require_ex : 1;
	uint8_t fallback_ioctl_only : 1;
	struct ib_uverbs_ioctl_hdr hdr;
};

START_TEST(test_register_driver_is_harmless)
{
	/* What libmlx5/libefa constructors do; the pointer is never used. */
	verbs_register_driver_34((const struct verbs_device_ops *)0x1);
	verbs_register_driver_34(NULL);
}
END_TEST

START_TEST(test_kernel_commands_fail)
{
	struct ibv_pd pd = {0};
	struct ibv_cq cq = {0};
	struct ibv_wc wc;

	errno = 0;
	ck_assert_int_eq(ibv_cmd_alloc_pd(NULL, &pd, NULL, 0, NULL, 0), EOPNOTSUPP);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_dealloc_pd(&pd), EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_req_notify_cq(&cq, 0), EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_destroy_cq(&cq), EOPNOTSUPP);
	ck_assert_int_eq(ibv_cmd_query_device_any(NULL, NULL, NULL, 0, NULL, NULL), EOPNOTSUPP);
	ck_assert_int_eq(execute_ioctl(NULL, NULL), EOPNOTSUPP);
	errno = 0;
	ck_assert_int_eq(ibv_cmd_poll_cq(&cq, 1, &wc), -1);
	ck_assert_int_eq(errno, EOPNOTSUPP);
}
END_TEST

START_TEST(test_context_setup_fails)
{
	errno = 0;
	ck_assert_ptr_null(_verbs_init_and_alloc_context(NULL, -1, 1024, NULL, 0));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(verbs_open_device(NULL, NULL));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	verbs_set_ops(NULL, NULL);
	verbs_uninit_context(NULL);
}
END_TEST

START_TEST(test_init_cq)
{
	struct ibv_context ctx;
	struct ibv_comp_channel ch = {.context = &ctx, .fd = -1, .refcnt = 2};
	struct ibv_cq cq;
	int user;

	memset(&ctx, 0, sizeof(ctx));
	pthread_mutex_init(&ctx.mutex, NULL);
	memset(&cq, 0xff, sizeof(cq));
	verbs_init_cq(&cq, &ctx, &ch, &user);
	ck_assert_ptr_eq(cq.context, &ctx);
	ck_assert_ptr_eq(cq.channel, &ch);
	ck_assert_ptr_eq(cq.cq_context, &user);
	ck_assert_uint_eq(cq.comp_events_completed, 0);
	ck_assert_uint_eq(cq.async_events_completed, 0);
	ck_assert_int_eq(ch.refcnt, 3);
	/* The mutex and condition variable are usable. */
	ck_assert_int_eq(pthread_mutex_lock(&cq.mutex), 0);
	ck_assert_int_eq(pthread_cond_signal(&cq.cond), 0);
	ck_assert_int_eq(pthread_mutex_unlock(&cq.mutex), 0);

	memset(&cq, 0xff, sizeof(cq));
	verbs_init_cq(&cq, &ctx, NULL, NULL);
	ck_assert_ptr_null(cq.channel);
	ck_assert_int_eq(ch.refcnt, 3);
}
END_TEST

START_TEST(test_final_num_attrs)
{
	size_t sz = sizeof(struct ibv_command_buffer) + 8 * sizeof(struct ib_uverbs_attr);
	struct ibv_command_buffer *a = calloc(1, sz), *b = calloc(1, sz);

	ck_assert(a && b);
	a->next = b;
	a->next_attr = a->hdr.attrs + 3;
	b->next = NULL;
	b->next_attr = b->hdr.attrs + 5;

	ck_assert_uint_eq(__ioctl_final_num_attrs(2, NULL), 2);
	ck_assert_uint_eq(__ioctl_final_num_attrs(2, b), 7);
	ck_assert_uint_eq(__ioctl_final_num_attrs(2, a), 10);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_disassociate_destroy_from_env)
{
	const char *a = getenv("RDMAV_ALLOW_DISASSOC_DESTROY");
	const char *b = getenv("MLX4_DEVICE_FATAL_CLEANUP");
	bool expected = (a && strcmp(a, "0") != 0) || (b && strcmp(b, "0") != 0);

	ck_assert_int_eq(verbs_allow_disassociate_destroy, expected);
}
END_TEST

static char log_path[] = "/tmp/uroce-abi-log-XXXXXX";

static char *read_log(void)
{
	static char text[512];
	FILE *f = fopen(log_path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

START_TEST(test_log_level_and_file)
{
	int fd = mkstemp(log_path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("VERBS_LOG_LEVEL", "2", 1);
	setenv("VERBS_LOG_FILE", log_path, 1);

	errno = 1234;
	__verbs_log(NULL, VERBS_LOG_ERR, "err %d %s\n", 1, "one");
	ck_assert_int_eq(errno, 1234);
	__verbs_log(NULL, VERBS_LOG_WARN, "warn %u\n", 2u);
	__verbs_log(NULL, VERBS_LOG_INFO, "info must not appear\n");
	__verbs_log(NULL, VERBS_LOG_DEBUG, "debug must not appear\n");
	ck_assert_str_eq(read_log(), "err 1 one\nwarn 2\n");
	unlink(log_path);
}
END_TEST

START_TEST(test_log_off_by_default)
{
	int fd = mkstemp(log_path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unsetenv("VERBS_LOG_LEVEL");
	setenv("VERBS_LOG_FILE", log_path, 1);
	__verbs_log(NULL, VERBS_LOG_ERR, "nothing\n");
	ck_assert_str_eq(read_log(), "");
	unlink(log_path);
}
END_TEST

static Suite *provider_suite(void)
{
	Suite *s = suite_create("abi_provider");
	TCase *tc = tcase_create("provider_api");

	tcase_add_test(tc, test_register_driver_is_harmless);
	tcase_add_test(tc, test_kernel_commands_fail);
	tcase_add_test(tc, test_context_setup_fails);
	tcase_add_test(tc, test_init_cq);
	tcase_add_test(tc, test_final_num_attrs);
	tcase_add_test(tc, test_disassociate_destroy_from_env);
	suite_add_tcase(s, tc);

	tc = tcase_create("verbs_log");
	tcase_add_test(tc, test_log_level_and_file);
	tcase_add_test(tc, test_log_off_by_default);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(provider_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
