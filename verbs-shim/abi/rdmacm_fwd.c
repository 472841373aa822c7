/* SPDX-License-Identifier: MIT */
/*
 * rdmacm_fwd.c: the drop-in librdmacm.so.1 (build/lib/ibverbs/, next to the
 * drop-in libibverbs.so.1). It implements nothing of the RDMA CM: each of
 * rdma-core 44's 68 exports (rdmacm_exports.h, versioned by librdmacm.map)
 * is an entry point that jumps to the same function of the system's real
 * librdmacm.so.1, which this library loads by full path at start-up. What it
 * adds is the scope that library is loaded in (docs/cm.md, "Drop-in mode"):
 *
 * librdmacm finds the RDMA CM device with open(), write(), close() and
 * fstat(); the drop-in libibverbs.so.1 holds uroce's hooks of these
 * (interpose.c, ucm.c), but ld.so reaches them only where they come before
 * libc in the lookup scope. When they already do (a program that lists
 * libibverbs.so.1 before libc.so.6, or liburoce.so preloaded), the real
 * library is loaded plainly and binds as it would have. When they do not
 * (libc first: cmtime, rstream; or librdmacm reached through dlopen, as
 * python3 with pyverbs does), it is loaded with RTLD_DEEPBIND: its own
 * references then resolve in its own scope first, i.e. itself, then its
 * DT_NEEDED libibverbs.so.1 (the drop-in, already loaded as this library's
 * dependency), libnl and libc, so the hooks win for it.
 *
 * The entry points are a few instructions of assembly each (x86-64), so
 * that every signature, variadic rfcntl included, is forwarded untouched:
 * load the target from its slot and jump. A slot still empty (the library
 * could not be loaded, or lacks that version) goes through a slow path that
 * resolves it or stops the program with a clear message and exit status
 * 127, as ld.so does for a symbol it cannot find.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "the librdmacm forwarder's entry points are written for x86-64 only"
#endif

#define HIDDEN __attribute__((visibility("hidden")))

/* One slot per export: the real library's function once it is loaded. */
#define RDMACM_EXPORT(name, node) HIDDEN void *shim_rdmacm_fn_##name;
#include "rdmacm_exports.h"
#undef RDMACM_EXPORT

struct shim_rdmacm_export {
	const char *name;
	const char *node;
	void **slot;
};

static const struct shim_rdmacm_export shim_rdmacm_exports[] = {
#define RDMACM_EXPORT(name, node) {#name, node, &shim_rdmacm_fn_##name},
#include "rdmacm_exports.h"
#undef RDMACM_EXPORT
};

/*
 * The entry points. Each is exported under the librdmacm name (the version
 * script gives it its node) and is an indirect-branch target (endbr64).
 * %r11 is the one scratch register that carries no argument (%rax carries
 * the vector register count of a variadic call), so the slow path receives
 * the slot's address in it.
 */
#define RDMACM_EXPORT(name, node)                            \
	".globl " #name "\n"                                 \
	".type " #name ", @function\n"                       \
	".p2align 4\n" #name ":\n"                           \
	"	endbr64\n"                                         \
	"	movq shim_rdmacm_fn_" #name "(%rip), %r11\n" \
	"	testq %r11, %r11\n"                                \
	"	jz 1f\n"                                           \
	"	jmpq *%r11\n"                                      \
	"1:	leaq shim_rdmacm_fn_" #name "(%rip), %r11\n" \
	"	jmp shim_rdmacm_slow\n"                            \
	".size " #name ", .-" #name "\n"
__asm__(".text\n"
#include "rdmacm_exports.h"
	/* The slow path: keep every argument register (the six integer ones,
	 * %rax, %r10 and %xmm0-7), resolve the slot, restore, jump. The stack
	 * is 16-byte aligned at the call (8 at entry, +8 for %rbp, +64, +128). */
	".type shim_rdmacm_slow, @function\n"
	".p2align 4\n"
	"shim_rdmacm_slow:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	pushq %rdi\n	pushq %rsi\n	pushq %rdx\n	pushq %rcx\n"
	"	pushq %r8\n	pushq %r9\n	pushq %rax\n	pushq %r10\n"
	"	subq $128, %rsp\n"
	"	movdqu %xmm0, 0(%rsp)\n	movdqu %xmm1, 16(%rsp)\n"
	"	movdqu %xmm2, 32(%rsp)\n	movdqu %xmm3, 48(%rsp)\n"
	"	movdqu %xmm4, 64(%rsp)\n	movdqu %xmm5, 80(%rsp)\n"
	"	movdqu %xmm6, 96(%rsp)\n	movdqu %xmm7, 112(%rsp)\n"
	"	movq %r11, %rdi\n"
	"	call shim_rdmacm_resolve\n"
	"	movq %rax, %r11\n"
	"	movdqu 0(%rsp), %xmm0\n	movdqu 16(%rsp), %xmm1\n"
	"	movdqu 32(%rsp), %xmm2\n	movdqu 48(%rsp), %xmm3\n"
	"	movdqu 64(%rsp), %xmm4\n	movdqu 80(%rsp), %xmm5\n"
	"	movdqu 96(%rsp), %xmm6\n	movdqu 112(%rsp), %xmm7\n"
	"	addq $128, %rsp\n"
	"	popq %r10\n	popq %rax\n	popq %r9\n	popq %r8\n"
	"	popq %rcx\n	popq %rdx\n	popq %rsi\n	popq %rdi\n"
	"	popq %rbp\n"
	"	jmpq *%r11\n"
	".size shim_rdmacm_slow, .-shim_rdmacm_slow\n");
#undef RDMACM_EXPORT

HIDDEN void *shim_rdmacm_resolve(void **slot);

static pthread_once_t shim_rdmacm_once = PTHREAD_ONCE_INIT;
static char shim_rdmacm_path[4096];  /* the library loaded, or "" */
static char shim_rdmacm_error[1024]; /* why none could be, or "" */

/* The directories a distribution installs librdmacm.so.1 in. The build's
 * own finding comes first (UROCE_SYSTEM_RDMACM, from CMake). */
static const char *const shim_rdmacm_candidates[] = {
#ifdef UROCE_SYSTEM_RDMACM
    UROCE_SYSTEM_RDMACM,
#endif
#ifdef UROCE_MULTIARCH
    "/usr/lib/" UROCE_MULTIARCH "/librdmacm.so.1",
    "/lib/" UROCE_MULTIARCH "/librdmacm.so.1",
#endif
    "/usr/lib64/librdmacm.so.1",
    "/lib64/librdmacm.so.1",
    "/usr/lib/librdmacm.so.1",
};

/* Base address of the object that defines @addr, or NULL. */
static void *object_of(void *addr)
{
	Dl_info info;

	if (!addr || !dladdr(addr, &info))
		return NULL;
	return info.dli_fbase;
}

/*
 * Whether the real library, loaded plainly, would reach uroce's hooks: the
 * first open() of the scope comes from the object that also gives the
 * first ibv_get_device_list(), i.e. a uroce shim that comes before libc
 * (the drop-in ahead of libc, or liburoce.so preloaded). If ibverbs is not
 * in the global scope at all (a dlopen'ed group), or libc's open() comes
 * first, the answer is no. A sanitizer runtime forbids RTLD_DEEPBIND
 * (its dlopen interceptor stops the program), so under one the answer is
 * yes: the library is loaded plainly, and finds the hooks or not.
 */
static int scope_reaches_hooks(void)
{
	void *open_obj = object_of(dlsym(RTLD_DEFAULT, "open"));
	void *verbs_obj = object_of(dlsym(RTLD_DEFAULT, "ibv_get_device_list"));

	if (dlsym(RTLD_DEFAULT, "__sanitizer_print_stack_trace"))
		return 1;
	return open_obj && open_obj == verbs_obj;
}

/* Whether @path is this very file (a candidate that is the wrapper itself,
 * e.g. UROCE_RDMACM_LIBRARY pointing here). */
static int is_self(const char *path)
{
	static int dummy;
	Dl_info info;
	struct stat a, b;

	if (!dladdr(&dummy, &info) || !info.dli_fname || stat(info.dli_fname, &a))
		return 0;
	return !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void note_error(const char *path, const char *why)
{
	size_t n = strlen(shim_rdmacm_error);

	snprintf(shim_rdmacm_error + n, sizeof(shim_rdmacm_error) - n, "%s%s: %s", n ? "; " : "",
		 path, why);
}

/* Loads the real library and fills every slot it defines. */
static void shim_rdmacm_load(void)
{
	const char *env = secure_getenv("UROCE_RDMACM_LIBRARY");
	const char *const *list = shim_rdmacm_candidates;
	size_t n = sizeof(shim_rdmacm_candidates) / sizeof(shim_rdmacm_candidates[0]);
	int flags = RTLD_NOW | RTLD_LOCAL;
	void *handle = NULL;
	size_t i;

	if (env && *env) {
		list = &env;
		n = 1;
	}
	if (!scope_reaches_hooks())
		flags |= RTLD_DEEPBIND;
	for (i = 0; i < n && !handle; i++) {
		struct stat st;

		if (stat(list[i], &st)) {
			if (env && *env)
				note_error(list[i], strerror(errno));
			continue;
		}
		if (is_self(list[i])) {
			note_error(list[i], "is uroce's librdmacm.so.1 itself");
			continue;
		}
		handle = dlopen(list[i], flags);
		if (!handle) {
			note_error(list[i], dlerror());
			continue;
		}
		/* Same file under another name, or a copy of this wrapper. */
		if (object_of(dlsym(handle, "rdma_create_id")) == object_of((void *)&is_self)) {
			note_error(list[i], "is uroce's librdmacm.so.1 itself");
			handle = NULL;
			continue;
		}
		snprintf(shim_rdmacm_path, sizeof(shim_rdmacm_path), "%s", list[i]);
	}
	if (!handle) {
		if (!shim_rdmacm_error[0])
			note_error("librdmacm.so.1",
				   "not found in the system's library directories");
		return;
	}
	for (i = 0; i < sizeof(shim_rdmacm_exports) / sizeof(shim_rdmacm_exports[0]); i++) {
		void *fn = dlvsym(handle, shim_rdmacm_exports[i].name, shim_rdmacm_exports[i].node);

		__atomic_store_n(shim_rdmacm_exports[i].slot, fn, __ATOMIC_RELEASE);
	}
}

/*
 * The slow path of an entry point whose slot is empty (called from the
 * assembly above with the slot's address): load the library if that has
 * not happened, and return the function. If there is none, print why and
 * end the program with status 127; the entry point cannot return an error
 * of its own, since it does not know its function's signature.
 */
HIDDEN void *shim_rdmacm_resolve(void **slot)
{
	const struct shim_rdmacm_export *e = NULL;
	void *fn;
	size_t i;

	pthread_once(&shim_rdmacm_once, shim_rdmacm_load);
	fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (fn)
		return fn;
	for (i = 0; i < sizeof(shim_rdmacm_exports) / sizeof(shim_rdmacm_exports[0]); i++)
		if (shim_rdmacm_exports[i].slot == slot)
			e = &shim_rdmacm_exports[i];
	if (shim_rdmacm_path[0])
		fprintf(stderr,
			"%s: uroce's librdmacm.so.1: %s, version %s, is not defined in %s "
			"(an older librdmacm than rdma-core 44's)\n",
			program_invocation_name, e ? e->name : "?", e ? e->node : "?",
			shim_rdmacm_path);
	else
		fprintf(stderr,
			"%s: uroce's librdmacm.so.1 forwards %s to the system's librdmacm.so.1, "
			"which could not be loaded (%s); install rdma-core's librdmacm "
			"(Debian: librdmacm1) or set UROCE_RDMACM_LIBRARY to its path\n",
			program_invocation_name, e ? e->name : "?", shim_rdmacm_error);
	_exit(127);
}

/* Load at start-up, after the dependencies (the drop-in libibverbs.so.1,
 * libc) are initialised and before the program or any library that needs
 * librdmacm runs; an entry point reached earlier loads it itself. */
__attribute__((constructor)) static void shim_rdmacm_init(void)
{
	pthread_once(&shim_rdmacm_once, shim_rdmacm_load);
}
