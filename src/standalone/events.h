/* Events about pods (Scheduled, FailedScheduling, Preempted, ...) for the
 * standalone loop, recorded as client-go's events.k8s.io/v1 broadcaster
 * records kube-scheduler's (k8s.io/client-go/tools/events
 * event_broadcaster.go): every event goes out through the event client's
 * own QPS/burst (kube-scheduler's eventClient is a clientset of its own
 * built from clientConnection), an event isomorphic to a cached one
 * becomes a series (count 2 patched at once, later counts at refresh and
 * finish), and a source may create at most 25 event objects about one pod
 * and then one per 5 minutes (tools/record events_cache.go
 * EventSourceObjectSpamFilter). Internal to src/standalone/.
 *
 * Memory is bounded: at most SX_EVENTS_QUEUE_CAP events wait to be sent
 * (a burst of tens of thousands of pods fits), and the series and spam
 * caches hold at most SX_EVENTS_CACHE_CAP entries each (client-go's
 * maxLruCacheEntries). Whatever is not sent is counted in
 * schedext_events_dropped_total{reason} and logged.
 *
 * Threads: sx_events_emit from any thread; start/stop by the owner.
 */
#ifndef SCHEDEXT_STANDALONE_EVENTS_H
#define SCHEDEXT_STANDALONE_EVENTS_H

#include <stdbool.h>

#define SX_EVENTS_QUEUE_CAP 32768
#define SX_EVENTS_CACHE_CAP 4096

struct sx_error;
struct sx_events;
struct sx_kube;
struct sx_kube_event;
struct sx_metrics;
struct sx_pod;

struct sx_events_opts {
	struct sx_kube *kube;	    /* the event client; its QPS/burst limit sends */
	struct sx_metrics *metrics; /* drops are counted here; NULL: nowhere */
	const char *host;	    /* reportingInstance is "<component>-<host>";
				     * NULL: gethostname() */
	/* For tests (NULL/0: the real thing): where writes go instead of kube
	 * (patch: a series patch, else a create; returns as
	 * sx_kube_create_event), the wall clock in seconds, the wait between
	 * tries of a failed write (client-go: 10 s), the number of senders. */
	int (*write)(void *ctx, const struct sx_kube_event *ev, bool patch, struct sx_error *err);
	void *write_ctx;
	double (*now)(void);
	double retry_s;
	unsigned senders;
};

/* Starts the senders. NULL with err set when out of memory. */
struct sx_events *sx_events_start(const struct sx_events_opts *o, struct sx_error *err);
/* Stops: the senders get up to grace_s seconds to send what is queued;
 * what is still queued then (or waiting to retry) is not sent, counted
 * with reason "shutdown" and logged in one line. Frees ev. Returns how
 * many events were not sent. NULL: no-op. */
unsigned sx_events_stop(struct sx_events *ev, double grace_s);
/* Records an event about pod (copies every string). type "Normal" or
 * "Warning"; component is the reportingController. */
void sx_events_emit(struct sx_events *ev, const struct sx_pod *pod, const char *type,
		    const char *reason, const char *action, const char *message,
		    const char *component);
/* client-go's finishSeries (every 6 minutes) and
 * refreshExistingEventSeries (every 30) when due at the events' clock;
 * the senders call it by themselves, tests with their clock. */
void sx_events_housekeep(struct sx_events *ev);
/* Events waiting to be sent (tests). */
unsigned sx_events_queued(struct sx_events *ev);

#endif /* SCHEDEXT_STANDALONE_EVENTS_H */
