/* Arenas (arena.h): a chain of blocks bumped from the front; a request
 * larger than a quarter block gets a block of its own. Under
 * AddressSanitizer each request is its own malloc'd block. */
#include "schedext/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_DEBUG 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_DEBUG 1
#endif
#endif

#define BLOCK_SIZE (64 * 1024)
#define ALIGN	   alignof(max_align_t)

struct block {
	struct block *next;
	size_t used, cap; /* bytes of data[] */
	alignas(max_align_t) unsigned char data[];
};

struct sx_arena {
	struct block *head; /* the block being bumped, then older ones */
};

struct sx_arena *sx_arena_new(void)
{
	return calloc(1, sizeof(struct sx_arena));
}

static struct block *block_new(size_t cap, struct block *next)
{
	struct block *b;

	if (cap > SIZE_MAX - sizeof(*b))
		return NULL;
	b = malloc(sizeof(*b) + cap);
	if (!b)
		return NULL;
	b->next = next;
	b->used = 0;
	b->cap = cap;
	return b;
}

void *sx_arena_alloc(struct sx_arena *a, size_t size)
{
	struct block *b = a->head;
	size_t need = size ? (size + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;

	if (need < size)
		return NULL;
#ifndef ARENA_DEBUG
	if (b && b->cap - b->used >= need) {
		void *p = b->data + b->used;

		b->used += need;
		return p;
	}
	if (need <= BLOCK_SIZE / 4) {
		b = block_new(BLOCK_SIZE, a->head);
		if (!b)
			return NULL;
		a->head = b;
		b->used = need;
		return b->data;
	}
#endif
	/* A block of its own, kept behind the current one so that the
	 * current block's free space stays in use. */
	b = block_new(need, NULL);
	if (!b)
		return NULL;
	b->used = need;
	if (a->head) {
		b->next = a->head->next;
		a->head->next = b;
	} else {
		a->head = b;
	}
	return b->data;
}

void *sx_arena_calloc(struct sx_arena *a, size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = sx_arena_alloc(a, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void sx_arena_free(struct sx_arena *a)
{
	struct block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}
