/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of emu/daemon/dp/afile.c, the files the daemon writes without
 * waiting for them (captures, the fault log), on a real libuv loop and real
 * files and FIFOs in a temporary directory: the bytes arrive in order across
 * the files of a series; the loop never blocks on a FIFO nobody reads, and
 * the limit then says "full" until a reader drains it; a reader that goes
 * away costs the rest of that file (one error), the next file starts afresh;
 * a next file that cannot be opened loses its bytes (one error); what is
 * queued when the loop is gone is written by emu_afile_close; a first file
 * that cannot be created fails at once with errno.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"

static char dir[] = "/tmp/uroce-afile.XXXXXX";
static uv_loop_t loop;
static uint64_t errors;

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/uroce-afile.XXXXXX")));
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	errors = 0;
	signal(SIGPIPE, SIG_IGN); /* as uroced: a reader gone is EPIPE */
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* The loop's end, as uroced's: handles closed, the pool's last operation run. */
static void loop_end(void)
{
	uv_walk(&loop, close_walk, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *path(const char *name)
{
	static char p[2][128];
	static int i;

	i ^= 1;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static long size_of(const char *p)
{
	struct stat st;

	return stat(p, &st) ? -1 : (long)st.st_size;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the loop until file p has n bytes (5 s at most). */
static void run_until_size(const char *p, long n)
{
	double end = now() + 5;

	while (size_of(p) != n && now() < end)
		uv_run(&loop, UV_RUN_NOWAIT), usleep(1000);
	ck_assert_int_eq(size_of(p), n);
}

/* n bytes of a pattern that differs from file to file (seed). */
static void put(FILE *f, size_t n, int seed)
{
	unsigned char *b = malloc(n);

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((i * 7 + (size_t)seed) & 0xff);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	free(b);
}

static void check_content(const char *p, size_t n, int seed)
{
	FILE *f = fopen(p, "rb");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(fgetc(f), (int)((i * 7 + (size_t)seed) & 0xff));
	ck_assert_int_eq(fgetc(f), EOF);
	fclose(f);
}

/* The stream f ends its file; the next one is name, with n bytes (seed). */
static FILE *next_file(struct emu_afile *af, FILE *f, const char *name, size_t n, int seed)
{
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(emu_afile_next(af, name), 0);
	f = emu_afile_stream(af);
	ck_assert_ptr_nonnull(f);
	put(f, n, seed);
	return f;
}

/* The owner's stream ends, then the loop, then the file. */
static void finish(struct emu_afile *af, FILE *f)
{
	ck_assert_int_eq(fclose(f), 0);
	loop_end();
	emu_afile_close(af);
}

/* The file p, which must be new unless it is a FIFO the test made. */
static struct emu_afile *open_af(const char *p, uint64_t limit)
{
	char err[256];
	struct stat st;
	bool fifo = !stat(p, &st) && S_ISFIFO(st.st_mode), created = fifo;
	struct emu_afile *af =
	    emu_afile_open(p, "test", limit, &errors, &created, err, sizeof(err));

	ck_assert_ptr_nonnull(af);
	ck_assert(created != fifo);
	return af;
}

START_TEST(test_series_in_order)
{
	struct emu_afile *af = open_af(path("s.0"), 64 << 20);
	FILE *f = emu_afile_stream(af);

	emu_afile_start(af, &loop);
	put(f, 1000000, 1); /* past a chunk: written while the stream goes on */
	emu_afile_dirty(af);
	run_until_size(path("s.0"), 1000000); /* the flush timer's doing */
	put(f, 3000, 2);
	f = next_file(af, f, path("s.1"), 5000, 3);
	f = next_file(af, f, path("s.2"), 70000, 4);
	emu_afile_dirty(af);
	run_until_size(path("s.1"), 5000);
	run_until_size(path("s.2"), 70000);
	finish(af, f);
	ck_assert_uint_eq(errors, 0);
	ck_assert_int_eq(size_of(path("s.0")), 1003000);
	check_content(path("s.1"), 5000, 3);
	check_content(path("s.2"), 70000, 4);
}
END_TEST

START_TEST(test_written_at_close)
{
	/* Never started: everything waits in the queue until the close. */
	struct emu_afile *af = open_af(path("c"), 64 << 20);
	FILE *f = emu_afile_stream(af);

	put(f, 300000, 5);
	ck_assert_int_eq(fflush(f), 0);
	ck_assert_int_eq(size_of(path("c")), 0);
	f = next_file(af, f, path("c.1"), 10, 6);
	finish(af, f);
	check_content(path("c"), 300000, 5);
	check_content(path("c.1"), 10, 6);
	ck_assert_uint_eq(errors, 0);
}
END_TEST

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	char buf[65536];
	ssize_t n;
	long total = 0;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (fd >= 0)
		close(fd);
	return (void *)total;
}

START_TEST(test_fifo_nobody_reads)
{
	int hold, rd, i;
	struct emu_afile *af;
	FILE *f;
	pthread_t reader;
	void *total;
	double t0;

	/* A loop that waited for the FIFO would never come back (the test's
	 * timeout says so). */
	ck_assert_int_eq(mkfifo(path("p"), 0600), 0);
	hold = open(path("p"), O_RDWR); /* a reader that reads nothing */
	ck_assert_int_ge(hold, 0);
	af = open_af(path("p"), 1 << 20);
	f = emu_afile_stream(af);
	emu_afile_start(af, &loop);
	/* 4 MiB against a 64 KiB pipe: the loop turns on, the queue fills. */
	for (i = 0; i < 64 && !emu_afile_full(af); i++) {
		put(f, 65536, 7);
		ck_assert_int_eq(fflush(f), 0);
		uv_run(&loop, UV_RUN_NOWAIT);
	}
	ck_assert(emu_afile_full(af));
	/* A reader drains it; the loop then finishes every write. It opens
	 * the FIFO before hold goes: a FIFO without readers fails its writer. */
	rd = open(path("p"), O_RDONLY);
	ck_assert_int_ge(rd, 0);
	ck_assert_int_eq(pthread_create(&reader, NULL, drain, &rd), 0);
	close(hold);
	for (t0 = now(); emu_afile_full(af) && now() - t0 < 5;)
		uv_run(&loop, UV_RUN_NOWAIT), usleep(1000);
	ck_assert(!emu_afile_full(af));
	finish(af, f);
	ck_assert_int_eq(pthread_join(reader, &total), 0);
	ck_assert_int_eq((long)total, (long)i * 65536);
	ck_assert_uint_eq(errors, 0);
}
END_TEST

START_TEST(test_reader_gone)
{
	int rd;
	struct emu_afile *af;
	FILE *f;

	ck_assert_int_eq(mkfifo(path("g"), 0600), 0);
	rd = open(path("g"), O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	af = open_af(path("g"), 64 << 20);
	f = emu_afile_stream(af);
	close(rd); /* gone before the first write */
	emu_afile_start(af, &loop);
	for (int i = 0; i < 4; i++) {
		put(f, 300000, 8); /* each a write of its own: EPIPE each time */
		ck_assert_int_eq(fflush(f), 0);
	}
	f = next_file(af, f, path("g.1"), 4000, 9);
	finish(af, f);
	ck_assert_uint_eq(errors, 1); /* said and counted once */
	check_content(path("g.1"), 4000, 9);
}
END_TEST

START_TEST(test_next_cannot_open)
{
	struct emu_afile *af = open_af(path("n"), 64 << 20);
	FILE *f = emu_afile_stream(af);

	emu_afile_start(af, &loop);
	put(f, 100, 10);
	f = next_file(af, f, path("no/such/dir"), 100000, 11); /* lost */
	f = next_file(af, f, path("n.2"), 200, 12);
	finish(af, f);
	ck_assert_uint_eq(errors, 1);
	check_content(path("n"), 100, 10);
	check_content(path("n.2"), 200, 12);
}
END_TEST

START_TEST(test_first_cannot_open)
{
	char err[256] = "";
	bool created = true;

	errno = 0;
	ck_assert_ptr_null(emu_afile_open(path("no/such/file"), "test", 1 << 20, &errors, &created,
					  err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "no/such/file: No such file or directory"));
	loop_end();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("afile");
	TCase *tc = tcase_create("afile");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_series_in_order);
	tcase_add_test(tc, test_written_at_close);
	tcase_add_test(tc, test_fifo_nobody_reads);
	tcase_add_test(tc, test_reader_gone);
	tcase_add_test(tc, test_next_cannot_open);
	tcase_add_test(tc, test_first_cannot_open);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
