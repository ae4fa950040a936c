/* Pod events of the standalone loop (events.h): a bounded ring, one
 * sender thread, a token bucket of EVENT_QPS with EVENT_BURST. */
#include "events.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedext/common.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/model.h"

#define EVENT_QPS 50.0
#define EVENT_BURST 100.0

static void event_clear(struct event *e)
{
	free(e->ns);
	free(e->name);
	free(e->uid);
	free(e->type);
	free(e->reason);
	free(e->action);
	free(e->message);
	free(e->component);
	memset(e, 0, sizeof(*e));
}

static void *event_thread(void *arg);

int sx_events_start(struct sx_events *ev, struct sx_kube *kube, struct sx_metrics *metrics)
{
	char host[100] = "localhost";

	gethostname(host, sizeof(host) - 1);
	snprintf(ev->instance_suffix, sizeof(ev->instance_suffix), "-%s", host);
	ev->kube = kube;
	ev->metrics = metrics;
	pthread_mutex_init(&ev->mu, NULL);
	pthread_cond_init(&ev->cond, NULL);
	if (pthread_create(&ev->thread, NULL, event_thread, ev) != 0) {
		pthread_mutex_destroy(&ev->mu);
		pthread_cond_destroy(&ev->cond);
		return SX_ENOMEM;
	}
	return 0;
}

void sx_events_stop(struct sx_events *ev)
{
	pthread_mutex_lock(&ev->mu);
	ev->stop = true;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->mu);
	pthread_join(ev->thread, NULL);
	for (unsigned i = 0; i < ev->n; i++)
		event_clear(&ev->ring[(ev->head + i) % EVENT_QUEUE_CAP]);
	pthread_mutex_destroy(&ev->mu);
	pthread_cond_destroy(&ev->cond);
}

void sx_events_emit(struct sx_events *ev, const struct sx_pod *pod, const char *type,
		    const char *reason, const char *action, const char *message,
		    const char *component)
{
	struct event e = {
		sx_strdup(sx_str_get(pod->meta.ns)), sx_strdup(pod->meta.name),
		sx_strdup(pod->meta.uid ? pod->meta.uid : ""), sx_strdup(type),
		sx_strdup(reason), sx_strdup(action), sx_strdup(message),
		sx_strdup(component),
	};

	if (!e.ns || !e.name || !e.uid || !e.type || !e.reason || !e.action || !e.message ||
	    !e.component) {
		event_clear(&e);
		return;
	}
	pthread_mutex_lock(&ev->mu);
	if (ev->n == EVENT_QUEUE_CAP) {
		pthread_mutex_unlock(&ev->mu);
		atomic_fetch_add(&ev->dropped, 1);
		if (ev->metrics)
			sx_metrics_inc(ev->metrics, "schedext_events_dropped_total", NULL, 1);
		event_clear(&e);
		return;
	}
	ev->ring[(ev->head + ev->n++) % EVENT_QUEUE_CAP] = e;
	pthread_cond_signal(&ev->cond);
	pthread_mutex_unlock(&ev->mu);
}

static void send_event(struct sx_events *ev, const struct event *e)
{
	char instance[400];
	struct sx_error err = { 0 };
	struct sx_kube_event ke = {
		.ns = e->ns, .pod_name = e->name, .pod_uid = e->uid, .type = e->type,
		.reason = e->reason, .action = e->action, .message = e->message,
		.component = e->component, .instance = instance,
	};

	snprintf(instance, sizeof(instance), "%.250s%s", e->component, ev->instance_suffix);
	if (sx_kube_create_event(ev->kube, &ke, &err) < 0)
		sx_log(2, "event %s for %s/%s: %s", e->reason, e->ns, e->name, err.msg);
}

/* Token bucket on the sender thread: waits for one token. */
static void rate_limit(double *tokens, double *last)
{
	double now = sx_now_s();

	*tokens += (now - *last) * EVENT_QPS;
	if (*tokens > EVENT_BURST)
		*tokens = EVENT_BURST;
	*last = now;
	if (*tokens < 1) {
		double wait = (1 - *tokens) / EVENT_QPS;
		struct timespec ts = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };

		nanosleep(&ts, NULL);
		*tokens = 1;
		*last = sx_now_s();
	}
	*tokens -= 1;
}

static void *event_thread(void *arg)
{
	struct sx_events *ev = arg;
	double tokens = EVENT_BURST, last = sx_now_s();

	for (;;) {
		struct event e;

		pthread_mutex_lock(&ev->mu);
		while (ev->n == 0 && !ev->stop)
			pthread_cond_wait(&ev->cond, &ev->mu);
		if (ev->n == 0) {
			pthread_mutex_unlock(&ev->mu);
			break;
		}
		e = ev->ring[ev->head];
		ev->head = (ev->head + 1) % EVENT_QUEUE_CAP;
		ev->n--;
		pthread_mutex_unlock(&ev->mu);
		rate_limit(&tokens, &last);
		send_event(ev, &e);
		event_clear(&e);
	}
	return NULL;
}
