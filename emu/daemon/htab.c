/* SPDX-License-Identifier: MIT */
/*
 * A small intrusive hash table keyed by 32-bit integers, used for object
 * handles, QP numbers and memory keys. Chained buckets, power-of-two size,
 * doubled when the load factor exceeds 1. No ownership of the nodes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "daemon.h"

static uint32_t bucket_of(uint32_t key, uint32_t nbuckets)
{
	/* Fibonacci hashing spreads sequential keys over the buckets. */
	return (uint32_t)((key * 2654435769u) >> 7) & (nbuckets - 1);
}

int emu_htab_init(struct emu_htab *t)
{
	t->nbuckets = 64;
	t->count = 0;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -ENOMEM;
}

void emu_htab_free(struct emu_htab *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = 0;
	t->count = 0;
}

static int grow(struct emu_htab *t)
{
	uint32_t n = t->nbuckets * 2;
	struct emu_hnode **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nbuckets; i++) {
		struct emu_hnode *e = t->buckets[i];

		while (e) {
			struct emu_hnode *next = e->next;
			uint32_t b = bucket_of(e->key, n);

			e->next = nb[b];
			nb[b] = e;
			e = next;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->nbuckets = n;
	return 0;
}

int emu_htab_insert(struct emu_htab *t, struct emu_hnode *n, uint32_t key)
{
	uint32_t b;

	if (t->count >= t->nbuckets && grow(t))
		return -ENOMEM;
	b = bucket_of(key, t->nbuckets);
	n->key = key;
	n->next = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
	return 0;
}

struct emu_hnode *emu_htab_find(const struct emu_htab *t, uint32_t key)
{
	struct emu_hnode *e;

	if (!t->nbuckets)
		return NULL;
	for (e = t->buckets[bucket_of(key, t->nbuckets)]; e; e = e->next)
		if (e->key == key)
			return e;
	return NULL;
}

void emu_htab_remove(struct emu_htab *t, struct emu_hnode *n)
{
	struct emu_hnode **pp = &t->buckets[bucket_of(n->key, t->nbuckets)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			n->next = NULL;
			t->count--;
			return;
		}
	}
}
