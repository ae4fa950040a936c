/* Events about pods (Scheduled, FailedScheduling, Preempted, ...) for the
 * standalone loop: a bounded queue drained by one rate-limited sender
 * thread, so events never block scheduling. Internal to src/standalone/;
 * implemented in events.c.
 *
 * Threads: sx_events_emit from any thread; start/stop by the owner.
 */
#ifndef SCHEDEXT_STANDALONE_EVENTS_H
#define SCHEDEXT_STANDALONE_EVENTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define EVENT_QUEUE_CAP 4096

struct sx_kube;
struct sx_metrics;
struct sx_pod;

struct event {
	char *ns, *name, *uid, *type, *reason, *action, *message, *component;
};

struct sx_events {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct event ring[EVENT_QUEUE_CAP];
	unsigned head, n;
	bool stop;
	pthread_t thread;
	struct sx_kube *kube;
	char instance_suffix[128]; /* "-<hostname>" */
	atomic_ulong dropped;
	struct sx_metrics *metrics; /* counts drops; NULL: none */
};

/* Starts the sender; 0 or SX_ENOMEM. */
int sx_events_start(struct sx_events *ev, struct sx_kube *kube, struct sx_metrics *metrics);
/* Stops the sender and drops what is still queued. */
void sx_events_stop(struct sx_events *ev);
/* Queues an event about pod; drops it (counted in
 * schedext_events_dropped_total) when the queue is full. */
void sx_events_emit(struct sx_events *ev, const struct sx_pod *pod, const char *type,
		    const char *reason, const char *action, const char *message,
		    const char *component);

#endif /* SCHEDEXT_STANDALONE_EVENTS_H */
