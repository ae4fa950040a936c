/* Waits of PreBinds on the profile's handle (handle_waiter.h): a
 * generation counter under a mutex, a CLOCK_MONOTONIC condition variable,
 * and a handle listener that bumps the generation. */
#include "handle_waiter.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "schedext/common.h"
#include "schedext/handle.h"

struct sx_waiter {
	struct sx_handle *handle; /* the profile's; NULL: no environment */
	pthread_mutex_t mu;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	uint64_t gen;	     /* bumped on every notification */
};

static void wake(void *self)
{
	struct sx_waiter *w = self;

	pthread_mutex_lock(&w->mu);
	w->gen++;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
}

static void on_object(void *self, enum sx_kind kind, const void *old_obj, const void *new_obj)
{
	(void)kind;
	(void)old_obj;
	(void)new_obj;
	wake(self);
}

void sx_waiter_free(struct sx_waiter *w)
{
	if (!w)
		return;
	if (w->handle)
		sx_handle_unlisten(w->handle, w);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

struct sx_waiter *sx_waiter_new(struct sx_handle *h, uint64_t kinds)
{
	struct sx_waiter *w = sx_calloc(1, sizeof(*w));
	struct sx_handle_listener l = {
		.kinds = kinds,
		.object = on_object,
		.env_changed = wake,
		.self = w,
	};
	pthread_condattr_t attr;

	if (!w)
		return NULL;
	w->handle = h;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (h && sx_handle_listen(h, &l) < 0) {
		w->handle = NULL;
		sx_waiter_free(w);
		return NULL;
	}
	return w;
}

uint64_t sx_waiter_gen(struct sx_waiter *w)
{
	uint64_t g;

	pthread_mutex_lock(&w->mu);
	g = w->gen;
	pthread_mutex_unlock(&w->mu);
	return g;
}

uint64_t sx_waiter_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool sx_waiter_wait(struct sx_waiter *w, uint64_t *gen, uint64_t until_ns, struct sx_cache **cache)
{
	struct timespec ts = {(time_t)(until_ns / 1000000000ull), (long)(until_ns % 1000000000ull)};
	struct sx_handle_env env;

	pthread_mutex_lock(&w->mu);
	while (w->gen == *gen && sx_waiter_now_ns() < until_ns)
		pthread_cond_timedwait(&w->cond, &w->mu, &ts);
	*gen = w->gen;
	pthread_mutex_unlock(&w->mu);
	/* Read after the generation: a detach after it bumps it again. */
	sx_handle_env(w->handle, &env);
	if (cache)
		*cache = env.cache;
	return env.cache != NULL;
}
