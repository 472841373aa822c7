/* SPDX-License-Identifier: MIT */
/*
 * real_lib.h: access to Debian's real libibverbs.so.1 for differential
 * tests. The library is dlopen()ed RTLD_LOCAL next to the shim (which the
 * tests link), and functions are looked up in it by name and version, so a
 * lookup can never return the shim's definition. Tests compare only pure
 * functions that make no calls through the library's PLT.
 */
#ifndef UROCE_TESTS_ABI_REAL_LIB_H
#define UROCE_TESTS_ABI_REAL_LIB_H

#include <dlfcn.h>
#include <stdio.h>

#define REAL_LIBIBVERBS "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"

/* Handle of the real library, or NULL (with a note on stdout) if absent. */
static inline void *real_lib_open(void)
{
	void *h = dlopen(REAL_LIBIBVERBS, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		printf("note: %s not loadable (%s): differential check not run\n", REAL_LIBIBVERBS,
		       dlerror());
	return h;
}

/* @name@@@version from the real library @h, or NULL. */
static inline void *real_lib_sym(void *h, const char *name, const char *version)
{
	return dlvsym(h, name, version);
}

#endif /* UROCE_TESTS_ABI_REAL_LIB_H */
