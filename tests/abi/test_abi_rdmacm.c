/* SPDX-License-Identifier: MIT */
/*
 * test_abi_rdmacm.c: the drop-in librdmacm.so.1's entry points
 * (verbs-shim/abi/rdmacm_fwd.c) against the real library they forward to.
 * Linked against the drop-in; run with the real librdmacm installed (else
 * exit 77). Checks that
 *  - a call made before any library constructor has run (from this
 *    program's .preinit_array) takes the slow path, which loads the real
 *    library and still returns the real answer with the arguments intact;
 *  - every export of the drop-in is the entry point of the drop-in itself,
 *    and every one of the real library's exports, looked up by exact
 *    version, exists;
 *  - answers are the real library's, for calls that need no device:
 *    rdma_event_str for every event value and beyond, the variadic rfcntl
 *    on a descriptor that is no rsocket (EBADF); rclose and
 *    rdma_getaddrinfo of a numeric address answer as the real functions
 *    called directly do.
 * Plain asserts with a message, no Check: the .preinit_array call runs
 * before Check could.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#define REAL_RDMACM "/usr/lib/x86_64-linux-gnu/librdmacm.so.1"

static int failures;

#define CHECK(cond, ...)                  \
	do {                              \
		if (cond) {               \
			printf("ok: ");   \
		} else {                  \
			printf("FAIL: "); \
			failures++;       \
		}                         \
		printf(__VA_ARGS__);      \
		printf("\n");             \
	} while (0)

static const char *early_str;

/* Before every constructor: the drop-in's own has not loaded anything. */
static void early(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	early_str = rdma_event_str(RDMA_CM_EVENT_ESTABLISHED);
}
__attribute__((section(".preinit_array"), used)) static void (*early_fn)(int, char **,
									 char **) = early;

struct export
{
	const char *name, *node;
};
static const struct export exports[] = {
#define RDMACM_EXPORT(name, node) {#name, node},
#include "rdmacm_exports.h"
#undef RDMACM_EXPORT
};

int main(void)
{
	void *real = dlopen(REAL_RDMACM, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	const char *(*real_event_str)(enum rdma_cm_event_type);
	Dl_info self, info;
	size_t i, n_ok = 0;
	int e, ret;

	if (access(REAL_RDMACM, R_OK)) {
		printf("SKIP: %s not installed (package librdmacm1)\n", REAL_RDMACM);
		return 77;
	}
	/* The drop-in loaded it already (its constructor, or the early call). */
	CHECK(real != NULL, "the real %s is loaded by the drop-in", REAL_RDMACM);
	if (!real)
		return 1;
	CHECK(early_str && !strcmp(early_str, "RDMA_CM_EVENT_ESTABLISHED"),
	      "a call before the constructors (slow path): rdma_event_str(ESTABLISHED) = %s",
	      early_str ? early_str : "(null)");

	CHECK(dladdr((void *)&rdma_event_str, &self) &&
		  strstr(self.dli_fname, "ibverbs/librdmacm.so.1"),
	      "rdma_event_str is the drop-in's (%s)", self.dli_fname);
	for (i = 0; i < sizeof(exports) / sizeof(exports[0]); i++) {
		void *ours = dlvsym(RTLD_DEFAULT, exports[i].name, exports[i].node);
		void *theirs = dlvsym(real, exports[i].name, exports[i].node);

		if (ours && theirs && ours != theirs && dladdr(ours, &info) &&
		    info.dli_fbase == self.dli_fbase && info.dli_saddr == ours &&
		    !strcmp(info.dli_sname, exports[i].name))
			n_ok++;
		else
			printf("FAIL: %s@%s: drop-in %p, real %p\n", exports[i].name,
			       exports[i].node, ours, theirs);
	}
	CHECK(n_ok == sizeof(exports) / sizeof(exports[0]),
	      "%zu of %zu exports are drop-in entry points with a real counterpart", n_ok,
	      sizeof(exports) / sizeof(exports[0]));

	real_event_str =
	    (const char *(*)(enum rdma_cm_event_type))dlvsym(real, "rdma_event_str", "RDMACM_1.0");
	for (i = 0, n_ok = 0; i < 40; i++)
		n_ok += !strcmp(rdma_event_str((enum rdma_cm_event_type)i),
				real_event_str((enum rdma_cm_event_type)i));
	CHECK(n_ok == 40, "rdma_event_str(0..39) answers as the real library's (%zu of 40)", n_ok);

	/* Variadic, through the fast path: the third argument arrives. */
	errno = 0;
	ret = rfcntl(-1, F_SETFL, O_NONBLOCK);
	e = errno;
	CHECK(ret == -1 && e == EBADF, "rfcntl(-1, F_SETFL, O_NONBLOCK) = %d, errno %s", ret,
	      strerror(e));
	{
		int (*real_rclose)(int) = (int (*)(int))dlvsym(real, "rclose", "RDMACM_1.0");
		int (*real_rgai)(const char *, const char *, const struct rdma_addrinfo *,
				 struct rdma_addrinfo **) =
		    (int (*)(const char *, const char *, const struct rdma_addrinfo *,
			     struct rdma_addrinfo **))dlvsym(real, "rdma_getaddrinfo",
							     "RDMACM_1.0");
		struct rdma_addrinfo hints = {.ai_flags = RAI_NUMERICHOST | RAI_PASSIVE,
					      .ai_port_space = RDMA_PS_TCP};
		struct rdma_addrinfo *res = NULL, *res2 = NULL;
		int ret2, e2;

		errno = 0;
		ret = rclose(12345);
		e = errno;
		errno = 0;
		ret2 = real_rclose(12345);
		e2 = errno;
		CHECK(ret == ret2 && e == e2, "rclose(12345) = %d, errno %d, as the real one's",
		      ret, e);

		errno = 0;
		ret = rdma_getaddrinfo("192.0.2.7", "7471", &hints, &res);
		e = errno;
		errno = 0;
		ret2 = real_rgai("192.0.2.7", "7471", &hints, &res2);
		e2 = errno;
		CHECK(ret == ret2 && e == e2 && !res == !res2 &&
			  (!res ||
			   (res->ai_src_addr &&
			    ((struct sockaddr_in *)res->ai_src_addr)->sin_port == htons(7471))),
		      "rdma_getaddrinfo(192.0.2.7, 7471, passive) = %d (errno %d, %s), as the real "
		      "one's",
		      ret, e, res ? "port 7471" : "no result");
		if (res)
			rdma_freeaddrinfo(res);
		if (res2)
			rdma_freeaddrinfo(res2);
	}
	return failures ? 1 : 0;
}
