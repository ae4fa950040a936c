/* A small pool of large byte buffers reused across HTTP requests.
 *
 * Why: glibc maps every block above the mmap threshold (fixed at 128 KB by
 * serve, src/cmd/serve.c bound_malloc_arenas) fresh and unmaps it on
 * free, so a 1.5 MB request body and its 1 MB reply were faulted in page
 * by page on every request (about 700 minor faults per full-Node /filter).
 * Buffers handed back here keep their pages; the next request of a
 * similar size takes them already mapped.
 *
 * Bounds: at most `slots` buffers and `budget` bytes are kept; a buffer
 * that would exceed either is freed instead (or replaces a smaller one).
 * Thread-safe: one mutex, held for a scan of at most `slots` entries.
 */
#ifndef SCHEDEXT_BUFPOOL_H
#define SCHEDEXT_BUFPOOL_H

#include <pthread.h>
#include <stddef.h>

#include "schedext/buf.h"

#define SX_BUFPOOL_MAX_SLOTS 16

struct sx_bufpool {
	pthread_mutex_t mu;
	unsigned slots; /* capacity, <= SX_BUFPOOL_MAX_SLOTS */
	unsigned n;	/* buffers kept */
	size_t budget;	/* most bytes kept in all */
	size_t kept;	/* bytes kept now */
	char *data[SX_BUFPOOL_MAX_SLOTS];
	size_t cap[SX_BUFPOOL_MAX_SLOTS];
};

/* slots is clamped to [1, SX_BUFPOOL_MAX_SLOTS]. Returns 0 or -1. */
int sx_bufpool_init(struct sx_bufpool *p, unsigned slots, size_t budget);
/* Frees every kept buffer. */
void sx_bufpool_destroy(struct sx_bufpool *p);
/* Gives the empty buffer b room for at least `need` bytes (NUL included):
 * the smallest kept buffer that is large enough, else a new allocation.
 * On allocation failure b stays empty (it grows as usual later). */
void sx_bufpool_take(struct sx_bufpool *p, struct sx_buf *b, size_t need);
/* Hands an allocation of `cap` bytes back (or frees it). Accepts NULL. */
void sx_bufpool_give(struct sx_bufpool *p, char *data, size_t cap);
/* sx_bufpool_give() of b's allocation; b is left empty. */
void sx_bufpool_give_buf(struct sx_bufpool *p, struct sx_buf *b);

#endif /* SCHEDEXT_BUFPOOL_H */
