/* Fixed pthread pool for data-parallel loops (include/schedext/pool.h).
 *
 * Each sx_pool_run() call is a job pushed on a list; workers and the caller
 * take chunks of indices from the job with an atomic counter, so concurrent
 * jobs share the workers and a job finishes even with every worker busy.
 *
 * Hand-off latency matters more than throughput here: a scheduling cycle
 * runs two parallel loops of ~50 µs each, a few tens of µs apart, and a
 * futex wake-up costs about as much as the loop. So an idle worker spins
 * (with `pause`) for SPIN_NS before it sleeps on
 * the condition variable, the caller wakes sleepers only when there are
 * any, and the caller waits for stragglers by spinning on an atomic count
 * before falling back to the condition variable. */
#include "schedext/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHUNK	     8	    /* default indices per grab: small, so early stop is prompt */
#define SPIN_NS	     100000 /* how long an idle worker looks for work before sleeping */
#define WAIT_SPIN_NS 50000  /* how long the caller spins for workers inside its job */
#define CLOCK_EVERY  256    /* spin iterations between clock reads */
/* Jobs smaller than this do not wake sleeping workers: the wake-up (a
 * futex call, then a cold core) costs about as much as ~1000 nodes of
 * Filter, and the caller waits for the late worker's chunk. Measured on
 * 500-node extender passes with the worker asleep: p50 0.061 ms inline vs
 * 0.078 ms woken. */
#define WAKE_MIN 1024

struct job {
	sx_pool_fn fn;		/* per index, or NULL when range is set */
	sx_pool_range_fn range; /* per chunk */
	void *ctx;
	const atomic_bool *stop; /* optional: no more chunks once true */
	uint32_t n;
	uint32_t chunk;	    /* indices per grab */
	atomic_uint next;   /* next index to hand out */
	atomic_uint active; /* workers inside the job (incremented under the pool lock) */
	struct job *link;
};

struct sx_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a job was queued or stop */
	pthread_cond_t idle;  /* a worker left a job */
	struct job *jobs;     /* jobs with indices left */
	atomic_uint njobs;    /* length of jobs, readable without the lock */
	unsigned sleepers;    /* workers waiting on `work` (under lock) */
	atomic_uint spinning; /* workers spinning in spin_for_work */
	unsigned max_awake;   /* workers worth running at once: online CPUs - 1 */
	atomic_bool stop;
	unsigned nthreads;
	pthread_t *threads;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs chunks of job until none is left or job->stop is set. */
static void work_on(struct job *job, unsigned worker)
{
	for (;;) {
		if (job->stop && atomic_load_explicit(job->stop, memory_order_relaxed))
			return;
		uint32_t start = atomic_fetch_add(&job->next, job->chunk);
		if (start >= job->n)
			return;
		uint32_t end = start + job->chunk < job->n ? start + job->chunk : job->n;
		if (job->range) {
			job->range(job->ctx, start, end, worker);
			continue;
		}
		for (uint32_t i = start; i < end; i++)
			job->fn(job->ctx, i, worker);
	}
}

static bool job_exhausted(const struct job *job)
{
	return atomic_load(&job->next) >= job->n ||
	       (job->stop && atomic_load_explicit(job->stop, memory_order_relaxed));
}

/* Under the lock. */
static void unlink_job(struct sx_pool *pool, struct job *job)
{
	for (struct job **p = &pool->jobs; *p; p = &(*p)->link) {
		if (*p == job) {
			*p = job->link;
			atomic_fetch_sub(&pool->njobs, 1);
			return;
		}
	}
}

/* Spins up to SPIN_NS for a queued job or stop; true when one showed up. */
static bool spin_for_work(struct sx_pool *pool)
{
	uint64_t deadline = now_ns() + SPIN_NS;

	for (unsigned i = 1;; i++) {
		if (atomic_load_explicit(&pool->njobs, memory_order_relaxed) > 0 ||
		    atomic_load_explicit(&pool->stop, memory_order_relaxed))
			return true;
		cpu_relax();
		/* No sched_yield(): on a busy machine it hands the core to another
		 * process for a whole slice, and the next job runs on the caller
		 * alone (measured: 2 threads no faster than 1). */
		if (i % CLOCK_EVERY == 0 && now_ns() > deadline)
			return false;
	}
}

struct worker_arg {
	struct sx_pool *pool;
	unsigned id;
};

static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct sx_pool *pool = wa->pool;
	unsigned id = wa->id;
	free(wa);
	for (;;) {
		/* At most max_awake spinners: with parallelism 16 on two cores,
		 * fifteen spinning workers would starve the callers. */
		bool found = false;
		if (atomic_fetch_add(&pool->spinning, 1) < pool->max_awake)
			found = spin_for_work(pool);
		atomic_fetch_sub(&pool->spinning, 1);
		if (!found) {
			pthread_mutex_lock(&pool->lock);
			while (!atomic_load(&pool->stop) && !pool->jobs) {
				pool->sleepers++;
				pthread_cond_wait(&pool->work, &pool->lock);
				pool->sleepers--;
			}
			pthread_mutex_unlock(&pool->lock);
		}
		pthread_mutex_lock(&pool->lock);
		if (atomic_load(&pool->stop)) {
			pthread_mutex_unlock(&pool->lock);
			break;
		}
		struct job *job = pool->jobs;
		if (!job) {
			pthread_mutex_unlock(&pool->lock);
			continue;
		}
		if (job_exhausted(job)) {
			unlink_job(pool, job); /* no one else should pick it */
			pthread_mutex_unlock(&pool->lock);
			continue;
		}
		atomic_fetch_add(&job->active, 1);
		pthread_mutex_unlock(&pool->lock);
		work_on(job, id);
		pthread_mutex_lock(&pool->lock);
		unlink_job(pool, job);
		/* The last access to job: its owner may return once it reads 0. */
		atomic_fetch_sub(&job->active, 1);
		pthread_cond_broadcast(&pool->idle);
		pthread_mutex_unlock(&pool->lock);
	}
	return NULL;
}

struct sx_pool *sx_pool_new(unsigned nthreads)
{
	struct sx_pool *pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	/* Adaptive: critical sections are a few instructions, and a worker
	 * that found a job while spinning must not sleep in the kernel
	 * because the caller still held the lock (a futex round trip each). */
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&pool->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	pthread_cond_init(&pool->work, NULL);
	pthread_cond_init(&pool->idle, NULL);
	atomic_init(&pool->njobs, 0);
	atomic_init(&pool->spinning, 0);
	atomic_init(&pool->stop, false);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pool->max_awake = cpus > 2 ? (unsigned)cpus - 1 : 1;
	pool->threads = calloc(nthreads ? nthreads : 1, sizeof(pthread_t));
	if (!pool->threads) {
		sx_pool_free(pool);
		return NULL;
	}
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));
		if (!wa)
			break;
		wa->pool = pool;
		wa->id = i + 1;
		if (pthread_create(&pool->threads[i], NULL, worker_main, wa) != 0) {
			free(wa);
			break;
		}
		pool->nthreads++;
	}
	return pool;
}

void sx_pool_free(struct sx_pool *pool)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	atomic_store(&pool->stop, true);
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned i = 0; i < pool->nthreads; i++)
		pthread_join(pool->threads[i], NULL);
	pthread_cond_destroy(&pool->idle);
	pthread_cond_destroy(&pool->work);
	pthread_mutex_destroy(&pool->lock);
	free(pool->threads);
	free(pool);
}

unsigned sx_pool_threads(const struct sx_pool *pool)
{
	return pool ? pool->nthreads : 0;
}

/* Under the lock: wakes sleepers so that up to max_awake workers (spinners
 * included) help with a job of n indices; no futex call when a spinner
 * will take it. */
static void wake_workers(struct sx_pool *pool, uint32_t n, uint32_t chunk)
{
	unsigned awake = atomic_load(&pool->spinning);
	if (n < WAKE_MIN)
		return; /* spinners may help; a sleeper would arrive too late */
	unsigned chunks = (n + chunk - 1) / chunk;
	unsigned want = pool->max_awake < chunks - 1 ? pool->max_awake : chunks - 1;

	for (unsigned k = awake; k < want && k - awake < pool->sleepers; k++)
		pthread_cond_signal(&pool->work);
}

/* Returns once no worker is inside job (it lives on the caller's stack). */
static void wait_workers(struct sx_pool *pool, struct job *job)
{
	uint64_t deadline = 0;

	for (unsigned i = 1; atomic_load(&job->active) > 0; i++) {
		cpu_relax();
		if (i % CLOCK_EVERY != 0)
			continue;
		if (!deadline)
			deadline = now_ns() + WAIT_SPIN_NS;
		else if (now_ns() > deadline)
			break;
	}
	pthread_mutex_lock(&pool->lock);
	while (atomic_load(&job->active) > 0)
		pthread_cond_wait(&pool->idle, &pool->lock);
	pthread_mutex_unlock(&pool->lock);
}

/* Runs job on the caller and whichever workers join. */
static void run_job(struct sx_pool *pool, struct job *job)
{
	if (job->chunk == 0)
		job->chunk = CHUNK;
	atomic_init(&job->next, 0);
	atomic_init(&job->active, 0);
	if (!pool || pool->nthreads == 0 || job->n <= job->chunk) {
		work_on(job, 0);
		return;
	}
	pthread_mutex_lock(&pool->lock);
	job->link = pool->jobs;
	pool->jobs = job;
	atomic_fetch_add(&pool->njobs, 1);
	wake_workers(pool, job->n, job->chunk);
	pthread_mutex_unlock(&pool->lock);

	work_on(job, 0);

	pthread_mutex_lock(&pool->lock);
	unlink_job(pool, job);
	pthread_mutex_unlock(&pool->lock);
	wait_workers(pool, job);
}

void sx_pool_run_until(struct sx_pool *pool, uint32_t n, sx_pool_fn fn, void *ctx,
		       const atomic_bool *stop)
{
	struct job job = {.fn = fn, .ctx = ctx, .stop = stop, .n = n};

	run_job(pool, &job);
}

void sx_pool_run_chunks(struct sx_pool *pool, uint32_t n, uint32_t chunk, sx_pool_range_fn fn,
			void *ctx, const atomic_bool *stop)
{
	struct job job = {.range = fn, .ctx = ctx, .stop = stop, .n = n, .chunk = chunk};

	run_job(pool, &job);
}

void sx_pool_run(struct sx_pool *pool, uint32_t n, sx_pool_fn fn, void *ctx)
{
	sx_pool_run_until(pool, n, fn, ctx, NULL);
}
