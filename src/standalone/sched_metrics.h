/* The standalone loop's metrics (kube-scheduler's names, plugins.md §6):
 * definitions, one attempt, the queue gauges. Internal to src/standalone/;
 * implemented in sched_metrics.c. Thread-safe as sx_metrics is.
 */
#ifndef SCHEDEXT_STANDALONE_SCHED_METRICS_H
#define SCHEDEXT_STANDALONE_SCHED_METRICS_H

#include <stdbool.h>

struct sx_metrics;
struct sx_profile;
struct sx_queue_lengths;

/* The profile label of a profile (its schedulerName). */
const char *sx_sched_profile_name(const struct sx_profile *prof);
/* Defines every metric the loop writes; m NULL: no-op. */
void sx_sched_metrics_define(struct sx_metrics *m);
/* One scheduling attempt with its result, since start (sx_now_s()). */
void sx_sched_metrics_attempt(struct sx_metrics *m, const struct sx_profile *prof,
			      const char *result, double start);
/* The pending-pods gauges and schedext_leader. */
void sx_sched_metrics_gauges(struct sx_metrics *m, const struct sx_queue_lengths *l, bool leader);

#endif /* SCHEDEXT_STANDALONE_SCHED_METRICS_H */
