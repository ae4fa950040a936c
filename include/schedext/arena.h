/* Arenas: memory whose pieces all die together (nginx's ngx_pool_t,
 * PostgreSQL's memory contexts). A scheduling cycle allocates its result
 * arrays, candidate lists and score matrices from one arena and frees it
 * whole with the result. Under AddressSanitizer every allocation is its
 * own malloc (as nginx's NGX_DEBUG_PALLOC), so overflows and leaks of arena
 * memory are still caught. Implemented in src/util/arena.c.
 *
 * Threads: an arena belongs to one thread at a time (no locking).
 */
#ifndef SCHEDEXT_ARENA_H
#define SCHEDEXT_ARENA_H

#include <stddef.h>

struct sx_arena;

/* A new, empty arena; NULL when out of memory. */
struct sx_arena *sx_arena_new(void);
/* size bytes aligned for any type, uninitialised; NULL when out of memory.
 * Valid until sx_arena_free. size 0 returns a unique non-NULL pointer. */
void *sx_arena_alloc(struct sx_arena *a, size_t size);
/* n * size zeroed bytes (NULL on overflow or out of memory). */
void *sx_arena_calloc(struct sx_arena *a, size_t n, size_t size);
/* Frees every allocation and the arena; NULL is a no-op. */
void sx_arena_free(struct sx_arena *a);

#endif /* SCHEDEXT_ARENA_H */
