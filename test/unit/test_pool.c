/* The thread pool: every index runs exactly once, on the caller or a
 * worker; concurrent callers share the workers; early stop; idle workers
 * that went to sleep wake up for the next job. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "harness.h"
#include "schedext/pool.h"

struct count_ctx {
	uint32_t n;
	atomic_uint *hits; /* per index */
	atomic_uint calls;
	atomic_bool stop;
	uint32_t stop_after; /* set stop once this many calls ran (0 = never) */
	unsigned nthreads;
	atomic_uint bad_worker;
};

static void count_fn(void *ctx, uint32_t i, unsigned worker)
{
	struct count_ctx *c = ctx;

	if (worker > c->nthreads)
		atomic_fetch_add(&c->bad_worker, 1);
	atomic_fetch_add(&c->hits[i], 1);
	if (atomic_fetch_add(&c->calls, 1) + 1 == c->stop_after)
		atomic_store(&c->stop, true);
}

static void count_init(struct count_ctx *c, uint32_t n, unsigned nthreads)
{
	c->n = n;
	c->hits = calloc(n ? n : 1, sizeof(*c->hits));
	atomic_init(&c->calls, 0);
	atomic_init(&c->stop, false);
	atomic_init(&c->bad_worker, 0);
	c->stop_after = 0;
	c->nthreads = nthreads;
}

/* Every index exactly once. */
static void check_all_once(struct count_ctx *c)
{
	uint32_t wrong = 0;

	for (uint32_t i = 0; i < c->n; i++)
		wrong += atomic_load(&c->hits[i]) != 1;
	CHECK_INT(wrong, 0);
	CHECK_INT(atomic_load(&c->calls), c->n);
	CHECK_INT(atomic_load(&c->bad_worker), 0);
}

static void test_every_index_once(void)
{
	const uint32_t sizes[] = {0, 1, 7, 8, 9, 100, 5000};

	for (unsigned threads = 0; threads <= 3; threads++) {
		struct sx_pool *pool = sx_pool_new(threads);

		CHECK(pool != NULL);
		CHECK_INT(sx_pool_threads(pool), threads);
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct count_ctx c;

			count_init(&c, sizes[s], threads);
			sx_pool_run(pool, c.n, count_fn, &c);
			check_all_once(&c);
			free(c.hits);
		}
		sx_pool_free(pool);
	}
	{ /* NULL pool: sequential on the caller */
		struct count_ctx c;

		count_init(&c, 100, 0);
		sx_pool_run(NULL, c.n, count_fn, &c);
		check_all_once(&c);
		free(c.hits);
	}
}

static void test_early_stop(void)
{
	struct sx_pool *pool = sx_pool_new(2);
	struct count_ctx c;
	uint32_t ran = 0;

	count_init(&c, 100000, 2);
	c.stop_after = 50;
	sx_pool_run_until(pool, c.n, count_fn, &c, &c.stop);
	/* Chunks already started finish; nothing near n runs. */
	CHECK(atomic_load(&c.calls) >= 50);
	CHECK(atomic_load(&c.calls) < 1000);
	for (uint32_t i = 0; i < c.n; i++)
		ran += atomic_load(&c.hits[i]);
	CHECK_INT(ran, atomic_load(&c.calls));
	free(c.hits);

	count_init(&c, 1000, 2); /* stop already set: nothing runs */
	atomic_store(&c.stop, true);
	sx_pool_run_until(pool, c.n, count_fn, &c, &c.stop);
	CHECK_INT(atomic_load(&c.calls), 0);
	free(c.hits);
	sx_pool_free(pool);
}

struct caller_arg {
	struct sx_pool *pool;
	int failures;
};

static void *caller_main(void *arg)
{
	struct caller_arg *a = arg;

	for (int round = 0; round < 200; round++) {
		struct count_ctx c;
		uint32_t wrong = 0;

		count_init(&c, 64 + (uint32_t)round * 7, 2);
		sx_pool_run(a->pool, c.n, count_fn, &c);
		for (uint32_t i = 0; i < c.n; i++)
			wrong += atomic_load(&c.hits[i]) != 1;
		a->failures += wrong != 0 || atomic_load(&c.bad_worker) != 0;
		free(c.hits);
	}
	return NULL;
}

/* Several threads run jobs on one pool at once (concurrent extender
 * requests): each job completes with every index once. */
static void test_concurrent_callers(void)
{
	struct sx_pool *pool = sx_pool_new(2);
	struct caller_arg args[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		args[i] = (struct caller_arg){pool, 0};
		CHECK_INT(pthread_create(&t[i], NULL, caller_main, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(args[i].failures, 0);
	}
	sx_pool_free(pool);
}

/* Workers that stopped spinning and went to sleep are woken by a job. */
static void test_wake_after_sleep(void)
{
	struct sx_pool *pool = sx_pool_new(1);
	struct timespec pause = {0, 300 * 1000 * 1000};

	for (int round = 0; round < 3; round++) {
		struct count_ctx c;

		nanosleep(&pause, NULL); /* well past the spin window */
		count_init(&c, 4096, 1);
		sx_pool_run(pool, c.n, count_fn, &c);
		check_all_once(&c);
		free(c.hits);
	}
	sx_pool_free(pool);
	sx_pool_free(NULL);
}

SX_TESTS(SX_TEST(test_every_index_once), SX_TEST(test_early_stop), SX_TEST(test_concurrent_callers),
	 SX_TEST(test_wake_after_sleep))
