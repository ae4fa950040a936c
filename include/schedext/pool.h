/* A fixed pthread pool for data-parallel loops (Filter and Score over
 * nodes). Several threads may call sx_pool_run() at once (concurrent
 * extender requests): each call is a job; the caller works on its own job
 * too, so a job always completes even when every worker is busy.
 */
#ifndef SCHEDEXT_POOL_H
#define SCHEDEXT_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct sx_pool;

/* fn(ctx, i) for i in [0, n). `worker` is 0 for the calling thread and
 * 1..nthreads for pool threads (index per-worker scratch with it). */
typedef void (*sx_pool_fn)(void *ctx, uint32_t i, unsigned worker);

/* fn(ctx, i) for i in [start, end): one chunk of indices. */
typedef void (*sx_pool_range_fn)(void *ctx, uint32_t start, uint32_t end, unsigned worker);

/* nthreads 0 = run everything on the caller. NULL on failure. */
struct sx_pool *sx_pool_new(unsigned nthreads);
/* Stops and joins the workers; no job may be running. Accepts NULL. */
void sx_pool_free(struct sx_pool *pool);
unsigned sx_pool_threads(const struct sx_pool *pool);
/* Runs the loop and returns when every index is done. pool NULL runs
 * sequentially. Awake (spinning) workers join any loop; sleeping ones are
 * woken only for loops of 1024 indices or more, smaller ones being done
 * sooner by the caller alone than with a worker that arrives late. Indices are handed out in
 * increasing order in small chunks, so a loop that checks an atomic "stop" flag in ctx ends early.
 */
void sx_pool_run(struct sx_pool *pool, uint32_t n, sx_pool_fn fn, void *ctx);
/* Same, but no further chunk is started once *stop reads true (fn still
 * runs for the indices of chunks already started): loops that stop early
 * skip the rest without a call per index. stop NULL = sx_pool_run. */
void sx_pool_run_until(struct sx_pool *pool, uint32_t n, sx_pool_fn fn, void *ctx,
		       const atomic_bool *stop);
/* Same with one call per chunk of `chunk` consecutive indices (0: the
 * default of 8; chunks are handed out in increasing order), so a loop can
 * batch its shared-counter updates per chunk instead of per index (and
 * its work within a longer chunk). */
void sx_pool_run_chunks(struct sx_pool *pool, uint32_t n, uint32_t chunk, sx_pool_range_fn fn,
			void *ctx, const atomic_bool *stop);

#endif /* SCHEDEXT_POOL_H */
