/* The standalone loop's metrics (kube-scheduler's names, pkg/scheduler/metrics/metrics.go):
 * definitions, one attempt, the queue gauges. Internal to src/standalone/;
 * implemented in sched_metrics.c. Thread-safe as sx_metrics is.
 */
#ifndef SCHEDEXT_STANDALONE_SCHED_METRICS_H
#define SCHEDEXT_STANDALONE_SCHED_METRICS_H

#include <stdbool.h>
#include <stdint.h>

struct sx_metrics;
struct sx_profile;
struct sx_queue_lengths;

/* The profile label of a profile (its schedulerName). */
const char *sx_sched_profile_name(const struct sx_profile *prof);
/* Defines every metric the loop writes; m NULL: no-op. */
struct sx_config;
void sx_sched_metrics_define(struct sx_metrics *m, const struct sx_config *cfg);
/* One scheduling attempt with its result, since start (sx_now_s()). */
void sx_sched_metrics_attempt(struct sx_metrics *m, const struct sx_profile *prof,
			      const char *result, double start);
/* The pending-pods and queued-entities gauges, scheduler_goroutines
 * {operation="binding"} (binding cycles queued or running: upstream's one
 * goroutine per binding cycle) and schedext_leader. */
void sx_sched_metrics_gauges(struct sx_metrics *m, const struct sx_queue_lengths *l,
			     uint32_t binding, bool leader);

struct sx_queue;
struct sx_config;
/* A pod bound after `attempts` attempts, first queued at initial_attempt
 * (sx_now_s()): scheduler_pod_scheduling_sli_duration_seconds{attempts}
 * and scheduler_pod_scheduling_attempts. */
void sx_sched_metrics_scheduled(struct sx_metrics *m, uint32_t attempts, double initial_attempt);
/* scheduler_permit_wait_duration_seconds{result="success"|"reject"}. */
void sx_sched_metrics_permit_wait(struct sx_metrics *m, bool success, double seconds);
/* scheduler_event_handling_duration_seconds{event="<what>Add|Update|Delete"}. */
void sx_sched_metrics_event(struct sx_metrics *m, const char *what, const void *old_obj,
			    const void *new_obj, uint64_t ns);
/* scheduler_queued_entities and the pod-group queues of scheduler_pending_pods. */
void sx_sched_metrics_entities(struct sx_metrics *m, struct sx_queue *q);
/* The queue's incoming-pods counters, unschedulable-pods-by-plugin gauges
 * and sx_sched_metrics_entities. */
void sx_sched_metrics_queue(struct sx_metrics *m, struct sx_queue *q, const struct sx_config *cfg);

#endif /* SCHEDEXT_STANDALONE_SCHED_METRICS_H */
