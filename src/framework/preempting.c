/* The preemptors whose victims are still being evicted (upstream
 * Evaluator.preempting, SchedulerAsyncPreemption): DefaultPreemption's
 * PreEnqueue holds such a pod back until its preemption is done. A short
 * list of UIDs under a leaf mutex: callers hold the queue lock at most. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/preemption.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char **uids;
static uint32_t n, cap;

static int find(const char *uid)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(uids[i], uid) == 0)
			return (int)i;
	return -1;
}

int sx_preemption_begin(const char *uid)
{
	int rc = 0;

	if (!uid || !*uid)
		return SX_EINVAL;
	pthread_mutex_lock(&mu);
	if (find(uid) < 0) {
		if (n == cap) {
			uint32_t c = cap ? cap * 2 : 16;
			char **v = realloc(uids, c * sizeof(*v));

			if (v) {
				uids = v;
				cap = c;
			}
		}
		if (n < cap && (uids[n] = sx_strdup(uid)))
			n++;
		else
			rc = SX_ENOMEM;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void sx_preemption_end(const char *uid)
{
	int i;

	if (!uid)
		return;
	pthread_mutex_lock(&mu);
	i = find(uid);
	if (i >= 0) {
		free(uids[i]);
		uids[i] = uids[--n];
	}
	if (n == 0) {
		free(uids);
		uids = NULL;
		cap = 0;
	}
	pthread_mutex_unlock(&mu);
}

bool sx_preemption_running(const char *uid)
{
	bool r;

	if (!uid)
		return false;
	pthread_mutex_lock(&mu);
	r = find(uid) >= 0;
	pthread_mutex_unlock(&mu);
	return r;
}
