/* A profile's preemption evaluator state (upstream preemption.Evaluator,
 * pkg/scheduler/framework/preemption/preemption.go): the preemptors whose
 * victims are still being evicted (Evaluator.preempting,
 * SchedulerAsyncPreemption), which DefaultPreemption's PreEnqueue holds
 * back until their preemption is done; the random state of the dry-run
 * offsets; the attempt counters. Owned by the profile's handle. A short
 * list of UIDs under a leaf mutex: callers hold the queue lock at most. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/preemption.h"
#include "schedext/vec.h"

struct sx_preemption_eval {
	pthread_mutex_t mu; /* guards uids, n, cap, seed, rng */
	char **uids;
	uint32_t n, cap;
	uint64_t seed, rng;
	atomic_uint_fast64_t attempts, victims;
};

struct sx_preemption_eval *sx_preemption_eval_new(void)
{
	struct sx_preemption_eval *ev = sx_calloc(1, sizeof(*ev));

	if (ev)
		pthread_mutex_init(&ev->mu, NULL);
	return ev;
}

void sx_preemption_eval_free(struct sx_preemption_eval *ev)
{
	if (!ev)
		return;
	for (uint32_t i = 0; i < ev->n; i++)
		free(ev->uids[i]);
	free(ev->uids);
	pthread_mutex_destroy(&ev->mu);
	free(ev);
}

void sx_preemption_eval_seed(struct sx_preemption_eval *ev, uint64_t seed)
{
	pthread_mutex_lock(&ev->mu);
	ev->seed = ev->rng = seed;
	pthread_mutex_unlock(&ev->mu);
}

bool sx_preemption_next_rng(struct sx_preemption_eval *ev, uint64_t *state)
{
	bool on;

	if (!ev)
		return false;
	pthread_mutex_lock(&ev->mu);
	on = ev->seed != 0;
	if (on) {
		ev->rng += 0x9E3779B97F4A7C15ull;
		*state = ev->rng;
	}
	pthread_mutex_unlock(&ev->mu);
	return on;
}

static int find(const struct sx_preemption_eval *ev, const char *uid)
{
	for (uint32_t i = 0; i < ev->n; i++)
		if (strcmp(ev->uids[i], uid) == 0)
			return (int)i;
	return -1;
}

/* Room for one more UID (ev->mu held); false when out of memory. */
static bool reserve_one(struct sx_preemption_eval *ev)
{
	return sx_vec_reserve(ev->uids, ev->cap, ev->n + 1, 16) == 0;
}

int sx_preemption_begin(struct sx_preemption_eval *ev, const char *uid)
{
	int rc = 0;

	if (!ev || !uid || !*uid)
		return SX_EINVAL;
	pthread_mutex_lock(&ev->mu);
	if (find(ev, uid) < 0) {
		if (reserve_one(ev) && (ev->uids[ev->n] = sx_strdup(uid)))
			ev->n++;
		else
			rc = SX_ENOMEM;
	}
	pthread_mutex_unlock(&ev->mu);
	return rc;
}

void sx_preemption_end(struct sx_preemption_eval *ev, const char *uid)
{
	int i;

	if (!ev || !uid)
		return;
	pthread_mutex_lock(&ev->mu);
	i = find(ev, uid);
	if (i >= 0) {
		free(ev->uids[i]);
		ev->uids[i] = ev->uids[--ev->n];
	}
	if (ev->n == 0) {
		free(ev->uids);
		ev->uids = NULL;
		ev->cap = 0;
	}
	pthread_mutex_unlock(&ev->mu);
}

bool sx_preemption_running(struct sx_preemption_eval *ev, const char *uid)
{
	bool r;

	if (!ev || !uid)
		return false;
	pthread_mutex_lock(&ev->mu);
	r = find(ev, uid) >= 0;
	pthread_mutex_unlock(&ev->mu);
	return r;
}

void sx_preemption_count(struct sx_preemption_eval *ev, uint32_t victims)
{
	if (!ev)
		return;
	atomic_fetch_add(&ev->attempts, 1);
	atomic_fetch_add(&ev->victims, victims);
}

uint64_t sx_preemption_attempts(const struct sx_preemption_eval *ev)
{
	return atomic_load(&((struct sx_preemption_eval *)ev)->attempts);
}

uint64_t sx_preemption_victims(const struct sx_preemption_eval *ev)
{
	return atomic_load(&((struct sx_preemption_eval *)ev)->victims);
}
