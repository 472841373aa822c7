/* SPDX-License-Identifier: MIT */
/*
 * Files the daemon writes while it serves (the capture, the fault log),
 * without the RNIC ever waiting for them.
 *
 * The owner writes to a stdio stream (fopencookie), so that libpcap's dumper,
 * the pcapng writer of pcapfile.c and fprintf stay as they are; the stream's
 * bytes go to a queue in memory. The queue's writes, and the closing and
 * opening of the files of a series (--pcap-size), run in order, one at a
 * time, on libuv's thread pool (uv_fs_write, uv_fs_close, uv_fs_open). A
 * file system that stalls (dirty-page write-back on a busy machine, a
 * truncation waiting for it) or a FIFO that nobody reads then holds up the
 * queue, not the packets. The queue is bounded: once it holds the limit,
 * emu_afile_full says so and the owner drops what it would have written,
 * and counts it, as a NIC's capture buffer does.
 *
 * The first file is created at once (emu_afile_open), so that a start fails
 * when it cannot be written. A file whose write fails (a full disk, a reader
 * that went away: EPIPE) is given up: one warning, one error counted, and
 * the rest of its writes are skipped; the next file of a series starts
 * afresh, and one that cannot be opened loses its bytes the same way.
 *
 * The stream is flushed into the queue at most EMU_AFILE_FLUSH_MS after
 * emu_afile_dirty (a daemon that is killed leaves a nearly complete file).
 * On a clean exit the loop runs until the thread pool's last operation is
 * done, and emu_afile_close writes what is left, here and now.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dp.h"

#define EMU_AFILE_FLUSH_MS 100
/* The size of a write of the queue (a longer stream write gets one of its
 * own); the stream's own buffer (stdio) is a quarter of it. */
#define AFILE_CHUNK (256u << 10)
#define AFILE_FLAGS (O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC)

/* What the file's I/O has to do, in order. */
enum afile_op_kind {
	AFILE_WRITE, /* bytes of the stream */
	AFILE_CLOSE, /* the stream of the current file ended */
	AFILE_OPEN,  /* the next file of a series */
};

struct afile_op {
	struct afile_op *next;
	enum afile_op_kind kind;
	size_t len;  /* WRITE: bytes in data */
	size_t done; /* WRITE: of them written */
	size_t room; /* WRITE: size of data */
	char *name;  /* OPEN */
	uint8_t data[];
};

struct emu_afile {
	const char *what; /* "capture", "fault log": for messages */
	uint64_t *errors; /* the owner's counter of failures */
	/* The queue: head is the operation in progress or next. */
	struct afile_op *head, *tail;
	uv_loop_t *loop; /* NULL: the queue waits (before start) or runs here (close) */
	uv_fs_t req;
	bool busy;	 /* head is in the thread pool */
	int fd;		 /* the file the queue writes, -1: none */
	bool broken;	 /* the file failed (a write, or its open): its writes are skipped */
	char *name;	 /* that file's name */
	uint64_t queued; /* bytes of WRITE operations not written yet */
	uint64_t limit;
	FILE *stream; /* the owner's stream of the current file (NULL: closed) */
	uv_timer_t flush_timer; /* initialised with loop */
	bool dirty;
	uv_work_t spawn; /* a request that makes libuv's pool at start */
};

static struct afile_op *afile_op_add(struct emu_afile *af, enum afile_op_kind kind, size_t room)
{
	struct afile_op *op = calloc(1, sizeof(*op) + room);

	if (!op)
		return NULL;
	op->kind = kind;
	op->room = room;
	if (af->tail)
		af->tail->next = op;
	else
		af->head = op;
	af->tail = op;
	return op;
}

/* The file failed: said once, counted once, its remaining writes skipped. */
static void afile_fail(struct emu_afile *af, int err, const char *what_now)
{
	emu_warn("%s: %s: %s; %s", af->what, af->name, strerror(err), what_now);
	(*af->errors)++;
	af->broken = true;
}

/*
 * The head operation ended with r: bytes written, the new file's descriptor,
 * or 0 (close), or a negative errno. A write that is not complete stays at
 * the head for its next part; anything else leaves the queue.
 */
static void afile_io_result(struct emu_afile *af, ssize_t r)
{
	struct afile_op *op = af->head;

	switch (op->kind) {
	case AFILE_WRITE:
		if (r > 0 && (op->done += (size_t)r) < op->len)
			return;
		if (r == -EINTR || r == -EAGAIN)
			return;
		if (r <= 0 && !af->broken)
			afile_fail(af, r ? (int)-r : EIO, "the rest of this file is lost");
		af->queued -= op->len;
		break;
	case AFILE_CLOSE:
		if (r < 0 && !af->broken)
			afile_fail(af, (int)-r, "when closing it");
		af->fd = -1;
		break;
	case AFILE_OPEN:
		free(af->name);
		af->name = op->name;
		op->name = NULL;
		af->broken = false;
		if (r < 0)
			afile_fail(af, (int)-r, "the bytes of this file are lost");
		else
			af->fd = (int)r;
		break;
	}
	af->head = op->next;
	if (!af->head)
		af->tail = NULL;
	free(op->name);
	free(op);
}

/* A write to a file that failed, the close of one never opened: no I/O. */
static bool afile_io_void(const struct emu_afile *af, const struct afile_op *op)
{
	return (op->kind == AFILE_WRITE && af->broken) || (op->kind == AFILE_CLOSE && af->fd < 0);
}

static void afile_io_next(struct emu_afile *af);

static void afile_io_done(uv_fs_t *req)
{
	struct emu_afile *af = req->data;
	ssize_t r = req->result;

	uv_fs_req_cleanup(req);
	af->busy = false;
	afile_io_result(af, r);
	afile_io_next(af);
}

/* Start the head operation in the thread pool (nothing without a loop). */
static void afile_io_next(struct emu_afile *af)
{
	while (!af->busy && af->head && af->loop) {
		struct afile_op *op = af->head;
		uv_buf_t b;
		int rc;

		if (afile_io_void(af, op)) {
			afile_io_result(af, -EBADF);
			continue;
		}
		af->req.data = af;
		switch (op->kind) {
		case AFILE_WRITE:
			b = uv_buf_init((char *)op->data + op->done,
					(unsigned)(op->len - op->done));
			rc = uv_fs_write(af->loop, &af->req, af->fd, &b, 1, -1, afile_io_done);
			break;
		case AFILE_CLOSE:
			rc = uv_fs_close(af->loop, &af->req, af->fd, afile_io_done);
			break;
		default:
			rc = uv_fs_open(af->loop, &af->req, op->name, AFILE_FLAGS, 0666,
					afile_io_done);
			break;
		}
		if (rc) {
			afile_io_result(af, rc);
			continue;
		}
		af->busy = true;
	}
}

/* Without the loop (at close): what is queued, here and now. */
static void afile_io_drain(struct emu_afile *af)
{
	while (af->head) {
		struct afile_op *op = af->head;
		ssize_t r;

		if (afile_io_void(af, op))
			r = -EBADF;
		else if (op->kind == AFILE_WRITE)
			r = write(af->fd, op->data + op->done, op->len - op->done);
		else if (op->kind == AFILE_CLOSE)
			r = close(af->fd);
		else
			r = open(op->name, AFILE_FLAGS, 0666);
		afile_io_result(af, r < 0 ? -errno : r);
	}
}

/* The stream's bytes: to the queue (stdio calls this when its buffer fills
 * and on fflush). */
static ssize_t afile_stream_write(void *cookie, const char *buf, size_t len)
{
	struct emu_afile *af = cookie;
	struct afile_op *t = af->tail;

	if (!t || t->kind != AFILE_WRITE || (af->busy && t == af->head) || t->room - t->len < len) {
		t = afile_op_add(af, AFILE_WRITE, len > AFILE_CHUNK ? len : AFILE_CHUNK);
		if (!t)
			return 0; /* the owner's write fails */
	}
	memcpy(t->data + t->len, buf, len);
	t->len += len;
	af->queued += len;
	if (t->len >= AFILE_CHUNK)
		afile_io_next(af);
	return (ssize_t)len;
}

/* The stream of the current file is closed: so will its file be. */
static int afile_stream_close(void *cookie)
{
	struct emu_afile *af = cookie;

	af->stream = NULL;
	return afile_op_add(af, AFILE_CLOSE, 0) ? 0 : -1;
}

struct emu_afile *emu_afile_open(const char *path, const char *what, uint64_t limit,
				 uint64_t *errors, bool *created, char *err, size_t errlen)
{
	struct emu_afile *af = calloc(1, sizeof(*af));
	struct stat st;

	if (!af || !(af->name = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(af);
		errno = ENOMEM;
		return NULL;
	}
	af->what = what;
	af->errors = errors;
	af->limit = limit;
	if (created)
		*created = lstat(path, &st) && errno == ENOENT;
	af->fd = open(path, AFILE_FLAGS, 0666);
	if (af->fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path, strerror(e));
		free(af->name);
		free(af);
		errno = e;
		return NULL;
	}
	return af;
}

FILE *emu_afile_stream(struct emu_afile *af)
{
	static const cookie_io_functions_t io = {
	    .write = afile_stream_write,
	    .close = afile_stream_close,
	};
	FILE *f = fopencookie(af, "w", io);

	if (f)
		setvbuf(f, NULL, _IOFBF, AFILE_CHUNK / 4);
	af->stream = f;
	return f;
}

int emu_afile_next(struct emu_afile *af, const char *name)
{
	char *copy = strdup(name);
	struct afile_op *op = copy ? afile_op_add(af, AFILE_OPEN, 0) : NULL;

	if (!op) {
		free(copy);
		return -ENOMEM;
	}
	op->name = copy;
	afile_io_next(af);
	return 0;
}

bool emu_afile_full(const struct emu_afile *af)
{
	return af->queued >= af->limit;
}

/* The stream's buffer to the queue, and the queue on its way. */
static void afile_flush(struct emu_afile *af)
{
	if (af->stream && fflush(af->stream))
		(*af->errors)++;
	afile_io_next(af);
}

static void on_flush_timer(uv_timer_t *h)
{
	struct emu_afile *af = h->data;

	af->dirty = false;
	afile_flush(af);
}

void emu_afile_dirty(struct emu_afile *af)
{
	if (!af->dirty && af->loop) {
		af->dirty = true;
		uv_timer_start(&af->flush_timer, on_flush_timer, EMU_AFILE_FLUSH_MS, 0);
	}
}

static void afile_spawn(uv_work_t *w)
{
	(void)w;
}

static void afile_spawned(uv_work_t *w, int status)
{
	(void)w;
	(void)status;
}

void emu_afile_start(struct emu_afile *af, uv_loop_t *loop)
{
	uv_timer_init(loop, &af->flush_timer);
	af->flush_timer.data = af;
	af->loop = loop;
	/*
	 * libuv makes its pool's threads at the first request, and a new
	 * thread takes the CPU mask of the thread that makes it. Made now,
	 * before the daemon keeps to a CPU of its own (place.c starts after
	 * the RNICs), they may run wherever the daemon may; made at the first
	 * write, they would share the data path's one CPU with it.
	 */
	uv_queue_work(loop, &af->spawn, afile_spawn, afile_spawned);
	afile_io_next(af);
}

void emu_afile_stopping(struct emu_afile *af)
{
	if (!af)
		return;
	afile_flush(af);
	if (af->head && af->loop) /* not a start that failed: its file goes */
		emu_info("%s: writing the last %" PRIu64 " bytes to %s before exiting (a second "
			 "SIGINT or SIGTERM exits without them)",
			 af->what, af->queued, af->name);
}

void emu_afile_close(struct emu_afile *af)
{
	if (!af)
		return;
	/* The loop is gone and ran the pool's last operation: the rest here. */
	af->loop = NULL;
	afile_io_drain(af);
	if (*af->errors)
		emu_warn("%s: %" PRIu64 " failures: %s may be incomplete", af->what, *af->errors,
			 af->name);
	if (af->fd >= 0) /* a file whose stream was never made */
		close(af->fd);
	/* The timer handle was closed with the loop; free after it. */
	free(af->name);
	free(af);
}
