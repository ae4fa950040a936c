/* Fixed pthread pool for data-parallel loops (include/schedext/pool.h).
 *
 * Each sx_pool_run() call is a job pushed on a list; workers and the caller
 * take chunks of indices from the job with an atomic counter, so concurrent
 * jobs share the workers and a job finishes even with every worker busy. */
#include "schedext/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define CHUNK 8 /* indices per grab: small, so early stop is prompt */

struct job {
	sx_pool_fn fn;
	void *ctx;
	uint32_t n;
	atomic_uint next;     /* next index to hand out */
	atomic_uint done;     /* indices completed */
	unsigned active;      /* workers inside the job (under pool lock) */
	struct job *link;
};

struct sx_pool {
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a job was queued or stop */
	pthread_cond_t idle;  /* a worker left a job */
	struct job *jobs;     /* jobs with indices left */
	bool stop;
	unsigned nthreads;
	pthread_t *threads;
};

/* Runs chunks of job until none is left; returns how many it completed. */
static void work_on(struct job *job, unsigned worker)
{
	for (;;) {
		uint32_t start = atomic_fetch_add(&job->next, CHUNK);
		if (start >= job->n)
			return;
		uint32_t end = start + CHUNK < job->n ? start + CHUNK : job->n;
		for (uint32_t i = start; i < end; i++)
			job->fn(job->ctx, i, worker);
		atomic_fetch_add(&job->done, end - start);
	}
}

static void unlink_job(struct sx_pool *pool, struct job *job)
{
	for (struct job **p = &pool->jobs; *p; p = &(*p)->link) {
		if (*p == job) {
			*p = job->link;
			return;
		}
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
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		while (!pool->stop && !pool->jobs)
			pthread_cond_wait(&pool->work, &pool->lock);
		if (pool->stop)
			break;
		struct job *job = pool->jobs;
		if (atomic_load(&job->next) >= job->n) {
			unlink_job(pool, job); /* exhausted: no one else should pick it */
			continue;
		}
		job->active++;
		pthread_mutex_unlock(&pool->lock);
		work_on(job, id);
		pthread_mutex_lock(&pool->lock);
		job->active--;
		unlink_job(pool, job);
		pthread_cond_broadcast(&pool->idle);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

struct sx_pool *sx_pool_new(unsigned nthreads)
{
	struct sx_pool *pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->work, NULL);
	pthread_cond_init(&pool->idle, NULL);
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
	pool->stop = true;
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

void sx_pool_run(struct sx_pool *pool, uint32_t n, sx_pool_fn fn, void *ctx)
{
	struct job job = { .fn = fn, .ctx = ctx, .n = n };
	atomic_init(&job.next, 0);
	atomic_init(&job.done, 0);
	if (!pool || pool->nthreads == 0 || n <= CHUNK) {
		work_on(&job, 0);
		return;
	}
	pthread_mutex_lock(&pool->lock);
	job.link = pool->jobs;
	pool->jobs = &job;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);

	work_on(&job, 0);

	/* The job lives on our stack: wait until no worker is inside it. */
	pthread_mutex_lock(&pool->lock);
	unlink_job(pool, &job);
	while (job.active > 0)
		pthread_cond_wait(&pool->idle, &pool->lock);
	pthread_mutex_unlock(&pool->lock);
}
