/* The standalone loop's metrics (kube-scheduler's names, pkg/scheduler/metrics/metrics.go):
 * definitions, one attempt, the queue gauges. Internal to src/standalone/;
 * implemented in sched_metrics.c. Thread-safe as sx_metrics is.
 */
#ifndef SCHEDEXT_STANDALONE_SCHED_METRICS_H
#define SCHEDEXT_STANDALONE_SCHED_METRICS_H

#include <stdbool.h>
#include <stdint.h>

struct sx_metric;
struct sx_metrics;
struct sx_profile;
struct sx_queue_lengths;

/* The handles of every family the loop writes (NULL: not counted). */
struct sx_sched_metrics {
	struct sx_metric *attempts, *attempt_duration, *algorithm_duration, *pending_pods;
	struct sx_metric *preemption_attempts, *preemption_victims, *leader;
	struct sx_metric *sli_duration, *pod_attempts, *permit_wait, *event_handling;
	struct sx_metric *incoming, *unschedulable;
	/* 1.35-1.37 families: queue entities, binding goroutines, pod groups,
	 * DRA binding conditions, workload preemption */
	struct sx_metric *goroutines, *queued_entities, *incoming_entities;
	struct sx_metric *pg_attempts, *pg_attempt_duration, *pg_algorithm_duration;
	struct sx_metric *pg_generated_placements, *pg_placement_evaluations;
	struct sx_metric *bc_allocations, *bc_wait;
	struct sx_metric *wl_preemption_attempts, *wl_preemption_victims, *wl_disruptions;
};

/* The profile label of a profile (its schedulerName). */
const char *sx_sched_profile_name(const struct sx_profile *prof);
/* Defines every metric the loop writes, for cfg's gates (NULL: the
 * default release's), and fills h; m NULL: h all NULL. */
struct sx_config;
void sx_sched_metrics_define(struct sx_metrics *m, const struct sx_config *cfg,
			     struct sx_sched_metrics *h);
/* One scheduling attempt with its result, since start (sx_now_s()). */
void sx_sched_metrics_attempt(const struct sx_sched_metrics *h, const struct sx_profile *prof,
			      const char *result, double start);
/* The pending-pods gauges, scheduler_goroutines{operation="binding"}
 * (binding cycles queued or running: upstream's one goroutine per binding
 * cycle) and schedext_leader. */
void sx_sched_metrics_gauges(const struct sx_sched_metrics *h, const struct sx_queue_lengths *l,
			     uint32_t binding, bool leader);

struct sx_queue;
struct sx_config;
/* A pod bound after `attempts` attempts, first queued at initial_attempt
 * (sx_now_s()): scheduler_pod_scheduling_sli_duration_seconds{attempts}
 * and scheduler_pod_scheduling_attempts. */
void sx_sched_metrics_scheduled(const struct sx_sched_metrics *h, uint32_t attempts,
				double initial_attempt);
/* scheduler_permit_wait_duration_seconds{result="success"|"reject"}. */
void sx_sched_metrics_permit_wait(const struct sx_sched_metrics *h, bool success, double seconds);
/* scheduler_event_handling_duration_seconds{event="<what>Add|Update|Delete"}. */
void sx_sched_metrics_event(const struct sx_sched_metrics *h, const char *what, const void *old_obj,
			    const void *new_obj, uint64_t ns);
/* scheduler_queued_entities and the pod-group queues of scheduler_pending_pods. */
void sx_sched_metrics_entities(const struct sx_sched_metrics *h, struct sx_queue *q);
/* The queue's incoming-pods and incoming-entities counters,
 * unschedulable-pods-by-plugin gauges and sx_sched_metrics_entities. */
void sx_sched_metrics_queue(const struct sx_sched_metrics *h, struct sx_queue *q,
			    const struct sx_config *cfg);

#endif /* SCHEDEXT_STANDALONE_SCHED_METRICS_H */
