/* The standalone loop's metrics (sched_metrics.h). */
#include "sched_metrics.h"

#include <stdio.h>

#include "schedext/common.h"
#include "schedext/config.h"
#include "schedext/metrics.h"
#include "schedext/queue.h"

const char *sx_sched_profile_name(const struct sx_profile *prof)
{
	return prof->scheduler_name;
}

void sx_sched_metrics_define(struct sx_metrics *m)
{
	static const double lat[] = { 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
				      0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384 };
	static const double victims[] = { 1, 2, 4, 8, 16, 32, 64 };

	if (!m)
		return;
	sx_metrics_define(m, "scheduler_schedule_attempts_total", SX_METRIC_COUNTER,
			  "Number of attempts to schedule pods, by the result and profile.", NULL, 0);
	sx_metrics_define(m, "scheduler_scheduling_attempt_duration_seconds",
			  SX_METRIC_HISTOGRAM,
			  "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
			  lat, SX_ARRAY_SIZE(lat));
	sx_metrics_define(m, "scheduler_scheduling_algorithm_duration_seconds",
			  SX_METRIC_HISTOGRAM, "Scheduling algorithm latency in seconds.", lat,
			  SX_ARRAY_SIZE(lat));
	sx_metrics_define(m, "scheduler_pending_pods", SX_METRIC_GAUGE,
			  "Number of pending pods, by the queue type.", NULL, 0);
	sx_metrics_define(m, "scheduler_preemption_attempts_total", SX_METRIC_COUNTER,
			  "Total preemption attempts in the cluster till now.", NULL, 0);
	sx_metrics_define(m, "scheduler_preemption_victims", SX_METRIC_HISTOGRAM,
			  "Number of selected preemption victims.", victims,
			  SX_ARRAY_SIZE(victims));
	sx_metrics_define(m, "schedext_events_dropped_total", SX_METRIC_COUNTER,
			  "Events dropped because the event queue was full.", NULL, 0);
	sx_metrics_define(m, "schedext_leader", SX_METRIC_GAUGE,
			  "1 while this process may schedule (holds the lease or no election).",
			  NULL, 0);
}

void sx_sched_metrics_attempt(struct sx_metrics *m, const struct sx_profile *prof,
			      const char *result, double start)
{
	char labels[512], esc[300];

	if (!m)
		return;
	snprintf(labels, sizeof(labels), "result=\"%s\",profile=\"%s\"", result,
		 sx_metrics_label_escape(sx_sched_profile_name(prof), esc, sizeof(esc)));
	sx_metrics_inc(m, "scheduler_schedule_attempts_total", labels, 1);
	sx_metrics_observe(m, "scheduler_scheduling_attempt_duration_seconds", labels,
			   sx_now_s() - start);
}

void sx_sched_metrics_gauges(struct sx_metrics *m, const struct sx_queue_lengths *l, bool leader)
{
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"active\"", l->active);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"backoff\"", l->backoff);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"unschedulable\"", l->unschedulable);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"gated\"", l->gated);
	sx_metrics_set(m, "schedext_leader", NULL, leader ? 1 : 0);
}
