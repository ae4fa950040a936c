/* The standalone scheduler (upstream pkg/scheduler/schedule_one.go and
 * backend/queue): pods whose schedulerName is one of the config's profiles are taken
 * from the scheduling queue (fed by the cache listener), scheduled one
 * cycle at a time, assumed in the cache, reserved and permitted, then bound
 * asynchronously by a small pool of bind workers through the API server. Failures
 * set the PodScheduled condition, emit a FailedScheduling event and
 * requeue with backoff. With leader election only the Lease holder
 * schedules or writes.
 *
 * Threads: start/stop from one thread (serve). The scheduler owns its
 * threads (scheduling loop, bind workers, event sender, leader election) and
 * the queue; everything in opts is borrowed and must outlive
 * sx_scheduler_stop().
 */
#ifndef SCHEDEXT_SCHEDULER_H
#define SCHEDEXT_SCHEDULER_H

#include <stdbool.h>

#include "schedext/common.h"

struct sx_cache;
struct sx_config;
struct sx_kube;
struct sx_kube_opts;
struct sx_informers;
struct sx_pool;
struct sx_metrics;
struct sx_extenders;
struct sx_scheduler;

struct sx_scheduler_opts {
	struct sx_cache *cache;
	const struct sx_config *cfg;
	struct sx_kube *kube; /* bindings, status patches, deletes */
	/* Connection settings for the dedicated event and lease clients (own
	 * rate limiters, as kube-scheduler's leader election client); NULL = share `kube`. */
	const struct sx_kube_opts *kube_opts;
	struct sx_informers *inf; /* scheduling waits for its sync; may be NULL */
	/* delayCacheUntilActive with leader election: inf is NULL and the
	 * scheduler starts the informers into `cache` (through `kube`) only
	 * once it holds the lease, as kube-scheduler does. */
	bool delay_cache_until_active;
	struct sx_pool *pool;		/* Filter/Score fan-out; may be NULL */
	struct sx_metrics *metrics;	/* may be NULL */
	struct sx_extenders *extenders; /* the config's extenders; may be NULL */
	unsigned bind_workers;		/* threads running binding cycles (default 8) */
	bool leader_elect;
	const char *lease_name;	     /* default "schedext" */
	const char *lease_namespace; /* default: in-cluster namespace, else kube-system */
	double lease_duration_s, renew_deadline_s, retry_period_s; /* 15 / 10 / 2 */
};

/* Installs the cache listener and the binder, defines the metrics and
 * starts the threads. 0 and *out, or a negative with err set. */
int sx_scheduler_start(const struct sx_scheduler_opts *opts, struct sx_scheduler **out,
		       struct sx_error *err);
/* Stops scheduling, waits for in-flight bindings, releases the lease,
 * removes the listener and frees. Accepts NULL. */
void sx_scheduler_stop(struct sx_scheduler *s);

#endif /* SCHEDEXT_SCHEDULER_H */
