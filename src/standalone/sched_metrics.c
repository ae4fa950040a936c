/* The standalone loop's metrics (sched_metrics.h). */
#include "sched_metrics.h"

#include <stdio.h>

#include "schedext/common.h"
#include "schedext/config.h"
#include "schedext/metrics.h"
#include "schedext/framework_metrics.h"
#include "schedext/queue.h"
#include "schedext/registry.h"

const char *sx_sched_profile_name(const struct sx_profile *prof)
{
	return prof->scheduler_name;
}

void sx_sched_metrics_define(struct sx_metrics *m, const struct sx_config *cfg)
{
	static const double lat[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
				     0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};
	static const double victims[] = {1, 2, 4, 8, 16, 32, 64};
	/* metrics.ExponentialBuckets(0.1, 2, 14) */
	static const double bc_wait[] = {0.1,  0.2,  0.4,  0.8,	  1.6,	 3.2,	6.4,
					 12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2};
	static const double wvictims[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

	if (!m)
		return;
	sx_fw_metrics_define(m, cfg ? &cfg->features
				    : NULL); /* upstream's families first: those below then exist */
	sx_metrics_define(m, "scheduler_schedule_attempts_total", SX_METRIC_COUNTER,
			  "Number of attempts to schedule pods, by the result and profile.", NULL,
			  0);
	sx_metrics_define(m, "scheduler_scheduling_attempt_duration_seconds", SX_METRIC_HISTOGRAM,
			  "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
			  lat, SX_ARRAY_SIZE(lat));
	sx_metrics_define(m, "scheduler_scheduling_algorithm_duration_seconds", SX_METRIC_HISTOGRAM,
			  "Scheduling algorithm latency in seconds.", lat, SX_ARRAY_SIZE(lat));
	sx_metrics_define(m, "scheduler_pending_pods", SX_METRIC_GAUGE,
			  "Number of pending pods, by the queue type.", NULL, 0);
	sx_metrics_define(m, "scheduler_podgroup_schedule_attempts_total", SX_METRIC_COUNTER,
			  "Number of attempts to schedule pod group, by the result.", NULL, 0);
	sx_metrics_define(m, "scheduler_podgroup_scheduling_attempt_duration_seconds",
			  SX_METRIC_HISTOGRAM, "Pod group scheduling attempt latency in seconds",
			  lat, SX_ARRAY_SIZE(lat));
	sx_metrics_define(m, "scheduler_podgroup_scheduling_algorithm_duration_seconds",
			  SX_METRIC_HISTOGRAM, "Pod group scheduling algorithm latency in seconds",
			  lat, SX_ARRAY_SIZE(lat));
	sx_metrics_define(m, "scheduler_preemption_attempts_total", SX_METRIC_COUNTER,
			  "Total preemption attempts in the cluster till now.", NULL, 0);
	sx_metrics_define(m, "scheduler_preemption_victims", SX_METRIC_HISTOGRAM,
			  "Number of selected preemption victims.", victims,
			  SX_ARRAY_SIZE(victims));
	/* pkg/scheduler/metrics/metrics.go (DRADeviceBindingConditions) */
	sx_metrics_define(m, "scheduler_dra_bindingconditions_allocations_total", SX_METRIC_COUNTER,
			  "Number of allocations using devices with BindingConditions, counted per "
			  "driver per scheduling attempt",
			  NULL, 0);
	sx_metrics_define(m, "scheduler_dra_bindingconditions_wait_duration_seconds",
			  SX_METRIC_HISTOGRAM,
			  "Time in seconds spent waiting for BindingConditions to be satisfied "
			  "during PreBind.",
			  bc_wait, SX_ARRAY_SIZE(bc_wait));
	/* Workload preemption (metrics.go, GenericWorkload). */
	sx_metrics_define(m, "scheduler_workload_preemption_attempts_total", SX_METRIC_COUNTER,
			  "Total preemption attempts initiated by workload (including pod groups) "
			  "in the cluster till now.",
			  NULL, 0);
	sx_metrics_define(m, "scheduler_workload_preemption_victims", SX_METRIC_HISTOGRAM,
			  "Number of pod preemption victims caused by workload preemption.",
			  wvictims, SX_ARRAY_SIZE(wvictims));
	sx_metrics_define(m, "scheduler_preemption_workload_disruptions", SX_METRIC_HISTOGRAM,
			  "Number of workload preemption units being preempted. A single "
			  "preemption unit can be all pods in a pod group (in case of "
			  "DisruptionMode=all), or a single pod (in case of "
			  "DisruptionMode=single).",
			  wvictims, SX_ARRAY_SIZE(wvictims));
	sx_metrics_define(m, "schedext_events_dropped_total", SX_METRIC_COUNTER,
			  "Events not sent, by reason: queue_full, spam_filter, rejected, "
			  "retries_exhausted, shutdown.",
			  NULL, 0);
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

void sx_sched_metrics_gauges(struct sx_metrics *m, const struct sx_queue_lengths *l,
			     uint32_t binding, bool leader)
{
	sx_metrics_set(m, "scheduler_goroutines", "operation=\"binding\"", binding);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"active\"", l->active);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"backoff\"", l->backoff);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"unschedulable\"", l->unschedulable);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"gated\"", l->gated);
	sx_metrics_set(m, "schedext_leader", NULL, leader ? 1 : 0);
}

void sx_sched_metrics_scheduled(struct sx_metrics *m, uint32_t attempts, double initial_attempt)
{
	char labels[48];

	if (!m || attempts == 0)
		return;
	snprintf(labels, sizeof(labels), "attempts=\"%u\"", attempts);
	sx_metrics_observe(m, "scheduler_pod_scheduling_sli_duration_seconds", labels,
			   sx_now_s() - initial_attempt);
	sx_metrics_observe(m, "scheduler_pod_scheduling_attempts", NULL, attempts);
}

void sx_sched_metrics_permit_wait(struct sx_metrics *m, bool success, double seconds)
{
	if (m)
		sx_metrics_observe(m, "scheduler_permit_wait_duration_seconds",
				   success ? "result=\"success\"" : "result=\"reject\"", seconds);
}

void sx_sched_metrics_event(struct sx_metrics *m, const char *what, const void *old_obj,
			    const void *new_obj, uint64_t ns)
{
	char labels[96];

	if (!m)
		return;
	snprintf(labels, sizeof(labels), "event=\"%s%s\"", what,
		 !old_obj   ? "Add"
		 : !new_obj ? "Delete"
			    : "Update");
	sx_metrics_observe(m, "scheduler_event_handling_duration_seconds", labels,
			   (double)ns / 1e9);
}

static void set_incoming(void *ctx, const char *queue, const char *event, uint64_t n)
{
	char labels[160];

	snprintf(labels, sizeof(labels), "queue=\"%s\",event=\"%s\"", queue, event);
	sx_metrics_set(ctx, "scheduler_queue_incoming_pods_total", labels, (double)n);
	snprintf(labels, sizeof(labels), "queue=\"%s\",event=\"%s\",type=\"pod\"", queue, event);
	sx_metrics_set(ctx, "scheduler_queue_incoming_entities_total", labels, (double)n);
}

/* scheduler_queued_entities{queue,type} and scheduler_pending_pods's
 * "incomplete" and "pending" queues (queue_group.c). */
void sx_sched_metrics_entities(struct sx_metrics *m, struct sx_queue *q)
{
	static const char *const places[SX_QUEUE_PLACES] = {"active", "backoff", "unschedulable",
							    "gated"};
	struct sx_queue_entities e;
	char labels[96];

	if (!m)
		return;
	sx_queue_entities(q, &e);
	for (unsigned p = 0; p < SX_QUEUE_PLACES; p++) {
		snprintf(labels, sizeof(labels), "queue=\"%s\",type=\"pod\"", places[p]);
		sx_metrics_set(m, "scheduler_queued_entities", labels, e.pods[p]);
		snprintf(labels, sizeof(labels), "queue=\"%s\",type=\"podgroup\"", places[p]);
		sx_metrics_set(m, "scheduler_queued_entities", labels, e.groups[p]);
	}
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"incomplete\"", e.incomplete);
	sx_metrics_set(m, "scheduler_pending_pods", "queue=\"pending\"", e.pending);
}

#define MAX_GAUGE_PROFILES 16

/* scheduler_unschedulable_pods{plugin,profile}: every plugin that rejected
 * a pod now in unschedulablePods; a series, once there, drops to 0. */
void sx_sched_metrics_queue(struct sx_metrics *m, struct sx_queue *q, const struct sx_config *cfg)
{
	unsigned np = cfg->nprofiles < MAX_GAUGE_PROFILES ? cfg->nprofiles : MAX_GAUGE_PROFILES;
	uint32_t counts[MAX_GAUGE_PROFILES * SX_MAX_PLUGINS];
	char labels[400], esc[300];

	if (!m)
		return;
	sx_sched_metrics_entities(m, q);
	sx_queue_incoming(q, set_incoming, m);
	sx_queue_unschedulable_by_plugin(q, counts, np);
	for (unsigned p = 0; p < np; p++) {
		for (unsigned i = 0; i < sx_plugin_count && i < SX_MAX_PLUGINS; i++) {
			uint32_t n = counts[p * SX_MAX_PLUGINS + i];
			snprintf(labels, sizeof(labels), "plugin=\"%s\",profile=\"%s\"",
				 sx_plugins[i]->name,
				 sx_metrics_label_escape(cfg->profiles[p]->scheduler_name, esc,
							 sizeof(esc)));
			if (n || sx_metrics_value(m, "scheduler_unschedulable_pods", labels))
				sx_metrics_set(m, "scheduler_unschedulable_pods", labels, n);
		}
	}
}
