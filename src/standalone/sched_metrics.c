/* The standalone loop's metrics (sched_metrics.h). */
#include "sched_metrics.h"

#include <stdio.h>
#include <string.h>

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

void sx_sched_metrics_define(struct sx_metrics *m, const struct sx_config *cfg,
			     struct sx_sched_metrics *h)
{
	static const double lat[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
				     0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};
	static const double victims[] = {1, 2, 4, 8, 16, 32, 64};
	/* metrics.ExponentialBuckets(0.1, 2, 14) */
	static const double bc_wait[] = {0.1,  0.2,  0.4,  0.8,	  1.6,	 3.2,	6.4,
					 12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2};
	static const double wvictims[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

	memset(h, 0, sizeof(*h));
	if (!m)
		return;
	sx_fw_metrics_define(m, cfg ? &cfg->features
				    : NULL); /* upstream's families first: those below then exist */
	h->attempts = sx_metrics_family(
		m, "scheduler_schedule_attempts_total", SX_METRIC_COUNTER,
		"Number of attempts to schedule pods, by the result and profile.", NULL, 0);
	h->attempt_duration = sx_metrics_family(
		m, "scheduler_scheduling_attempt_duration_seconds", SX_METRIC_HISTOGRAM,
		"Scheduling attempt latency in seconds (scheduling algorithm + binding).", lat,
		SX_ARRAY_SIZE(lat));
	h->algorithm_duration = sx_metrics_family(
		m, "scheduler_scheduling_algorithm_duration_seconds", SX_METRIC_HISTOGRAM,
		"Scheduling algorithm latency in seconds.", lat, SX_ARRAY_SIZE(lat));
	h->pending_pods = sx_metrics_family(m, "scheduler_pending_pods", SX_METRIC_GAUGE,
					    "Number of pending pods, by the queue type.", NULL, 0);
	h->pg_attempts = sx_metrics_family(
		m, "scheduler_podgroup_schedule_attempts_total", SX_METRIC_COUNTER,
		"Number of attempts to schedule pod group, by the result. 'unschedulable' means a "
		"pod group could not be scheduled, while 'error' means an internal scheduler "
		"problem.",
		NULL, 0);
	h->pg_attempt_duration = sx_metrics_family(
		m, "scheduler_podgroup_scheduling_attempt_duration_seconds", SX_METRIC_HISTOGRAM,
		"Pod group scheduling attempt latency in seconds", lat, SX_ARRAY_SIZE(lat));
	h->pg_algorithm_duration = sx_metrics_family(
		m, "scheduler_podgroup_scheduling_algorithm_duration_seconds", SX_METRIC_HISTOGRAM,
		"Pod group scheduling algorithm latency in seconds", lat, SX_ARRAY_SIZE(lat));
	/* Topology-aware placements (metrics.go RecordGeneratedPlacements,
	 * ObservePlacementEvaluation). */
	h->pg_generated_placements = sx_metrics_family(
		m, "scheduler_generated_placements_total", SX_METRIC_COUNTER,
		"Number of candidate placements generated when scheduling pod groups, by scheduler "
		"profile.",
		NULL, 0);
	h->pg_placement_evaluations = sx_metrics_family(
		m, "scheduler_placement_evaluations_total", SX_METRIC_COUNTER,
		"Number of candidate placements evaluated when scheduling pod groups, by result "
		"and "
		"scheduler profile. 'feasible' means the pod group fit into the placement, while "
		"'infeasible' means it did not.",
		NULL, 0);
	h->preemption_attempts =
		sx_metrics_family(m, "scheduler_preemption_attempts_total", SX_METRIC_COUNTER,
				  "Total preemption attempts in the cluster till now.", NULL, 0);
	h->preemption_victims = sx_metrics_family(
		m, "scheduler_preemption_victims", SX_METRIC_HISTOGRAM,
		"Number of selected preemption victims.", victims, SX_ARRAY_SIZE(victims));
	/* pkg/scheduler/metrics/metrics.go (DRADeviceBindingConditions) */
	h->bc_allocations = sx_metrics_family(
		m, "scheduler_dra_bindingconditions_allocations_total", SX_METRIC_COUNTER,
		"Number of allocations using devices with BindingConditions, counted per "
		"driver per scheduling attempt",
		NULL, 0);
	h->bc_wait = sx_metrics_family(m, "scheduler_dra_bindingconditions_wait_duration_seconds",
				       SX_METRIC_HISTOGRAM,
				       "Time in seconds spent waiting for BindingConditions to be "
				       "satisfied during PreBind.",
				       bc_wait, SX_ARRAY_SIZE(bc_wait));
	/* Workload preemption (metrics.go, GenericWorkload). */
	h->wl_preemption_attempts = sx_metrics_family(
		m, "scheduler_workload_preemption_attempts_total", SX_METRIC_COUNTER,
		"Total preemption attempts initiated by workload (including pod groups) "
		"in the cluster till now.",
		NULL, 0);
	h->wl_preemption_victims =
		sx_metrics_family(m, "scheduler_workload_preemption_victims", SX_METRIC_HISTOGRAM,
				  "Number of pod preemption victims caused by workload preemption.",
				  wvictims, SX_ARRAY_SIZE(wvictims));
	h->wl_disruptions = sx_metrics_family(
		m, "scheduler_preemption_workload_disruptions", SX_METRIC_HISTOGRAM,
		"Number of workload preemption units being preempted. A single "
		"preemption unit can be all pods in a pod group (in case of "
		"DisruptionMode=all), or a single pod (in case of "
		"DisruptionMode=single).",
		wvictims, SX_ARRAY_SIZE(wvictims));
	sx_metrics_define(m, "schedext_events_dropped_total", SX_METRIC_COUNTER,
			  "Events not sent, by reason: queue_full, spam_filter, rejected, "
			  "retries_exhausted, shutdown.",
			  NULL, 0);
	h->leader = sx_metrics_family(
		m, "schedext_leader", SX_METRIC_GAUGE,
		"1 while this process may schedule (holds the lease or no election).", NULL, 0);
	/* the framework's families (framework_metrics.c) the loop feeds */
	h->sli_duration = sx_metrics_find(m, "scheduler_pod_scheduling_sli_duration_seconds");
	h->pod_attempts = sx_metrics_find(m, "scheduler_pod_scheduling_attempts");
	h->permit_wait = sx_metrics_find(m, "scheduler_permit_wait_duration_seconds");
	h->event_handling = sx_metrics_find(m, "scheduler_event_handling_duration_seconds");
	h->incoming = sx_metrics_find(m, "scheduler_queue_incoming_pods_total");
	h->unschedulable = sx_metrics_find(m, "scheduler_unschedulable_pods");
	h->goroutines = sx_metrics_find(m, "scheduler_goroutines");
	h->queued_entities = sx_metrics_find(m, "scheduler_queued_entities");
	h->incoming_entities = sx_metrics_find(m, "scheduler_queue_incoming_entities_total");
}

void sx_sched_metrics_attempt(const struct sx_sched_metrics *h, const struct sx_profile *prof,
			      const char *result, double start)
{
	char labels[512], esc[300];

	if (!h->attempts)
		return;
	snprintf(labels, sizeof(labels), "result=\"%s\",profile=\"%s\"", result,
		 sx_metrics_label_escape(sx_sched_profile_name(prof), esc, sizeof(esc)));
	sx_metric_inc(h->attempts, labels, 1);
	sx_metric_observe(h->attempt_duration, labels, sx_now_s() - start);
}

void sx_sched_metrics_gauges(const struct sx_sched_metrics *h, const struct sx_queue_lengths *l,
			     uint32_t binding, bool leader)
{
	sx_metric_set(h->goroutines, "operation=\"binding\"", binding);
	sx_metric_set(h->pending_pods, "queue=\"active\"", l->active);
	sx_metric_set(h->pending_pods, "queue=\"backoff\"", l->backoff);
	sx_metric_set(h->pending_pods, "queue=\"unschedulable\"", l->unschedulable);
	sx_metric_set(h->pending_pods, "queue=\"gated\"", l->gated);
	sx_metric_set(h->leader, NULL, leader ? 1 : 0);
}

void sx_sched_metrics_scheduled(const struct sx_sched_metrics *h, uint32_t attempts,
				double initial_attempt)
{
	char labels[48];

	if (!h->sli_duration || attempts == 0)
		return;
	snprintf(labels, sizeof(labels), "attempts=\"%u\"", attempts);
	sx_metric_observe(h->sli_duration, labels, sx_now_s() - initial_attempt);
	sx_metric_observe(h->pod_attempts, NULL, attempts);
}

void sx_sched_metrics_permit_wait(const struct sx_sched_metrics *h, bool success, double seconds)
{
	sx_metric_observe(h->permit_wait, success ? "result=\"success\"" : "result=\"reject\"",
			  seconds);
}

void sx_sched_metrics_event(const struct sx_sched_metrics *h, const char *what, const void *old_obj,
			    const void *new_obj, uint64_t ns)
{
	char labels[96];

	if (!h->event_handling)
		return;
	snprintf(labels, sizeof(labels), "event=\"%s%s\"", what,
		 !old_obj   ? "Add"
		 : !new_obj ? "Delete"
			    : "Update");
	sx_metric_observe(h->event_handling, labels, (double)ns / 1e9);
}

static void set_incoming(void *ctx, const char *queue, const char *event, uint64_t n)
{
	const struct sx_sched_metrics *h = ctx;
	char labels[160];

	snprintf(labels, sizeof(labels), "queue=\"%s\",event=\"%s\"", queue, event);
	sx_metric_set(h->incoming, labels, (double)n);
	snprintf(labels, sizeof(labels), "queue=\"%s\",event=\"%s\",type=\"pod\"", queue, event);
	sx_metric_set(h->incoming_entities, labels, (double)n);
}

/* scheduler_queued_entities{queue,type} and scheduler_pending_pods's
 * "incomplete" and "pending" queues (queue_group.c). */
void sx_sched_metrics_entities(const struct sx_sched_metrics *h, struct sx_queue *q)
{
	static const char *const places[SX_QUEUE_PLACES] = {"active", "backoff", "unschedulable",
							    "gated"};
	struct sx_queue_entities e;
	char labels[96];

	if (!h->queued_entities)
		return;
	sx_queue_entities(q, &e);
	for (unsigned p = 0; p < SX_QUEUE_PLACES; p++) {
		snprintf(labels, sizeof(labels), "queue=\"%s\",type=\"pod\"", places[p]);
		sx_metric_set(h->queued_entities, labels, e.pods[p]);
		snprintf(labels, sizeof(labels), "queue=\"%s\",type=\"podgroup\"", places[p]);
		sx_metric_set(h->queued_entities, labels, e.groups[p]);
	}
	sx_metric_set(h->pending_pods, "queue=\"incomplete\"", e.incomplete);
	sx_metric_set(h->pending_pods, "queue=\"pending\"", e.pending);
}

#define MAX_GAUGE_PROFILES 16

/* scheduler_unschedulable_pods{plugin,profile}: every plugin that rejected
 * a pod now in unschedulablePods; a series, once there, drops to 0. */
void sx_sched_metrics_queue(const struct sx_sched_metrics *h, struct sx_queue *q,
			    const struct sx_config *cfg)
{
	unsigned np = cfg->nprofiles < MAX_GAUGE_PROFILES ? cfg->nprofiles : MAX_GAUGE_PROFILES;
	uint32_t counts[MAX_GAUGE_PROFILES * SX_MAX_PLUGINS];
	char labels[400], esc[300];

	sx_sched_metrics_entities(h, q);
	if (h->incoming)
		sx_queue_incoming(q, set_incoming, (void *)h);
	if (!h->unschedulable)
		return;
	sx_queue_unschedulable_by_plugin(q, counts, np);
	for (unsigned p = 0; p < np; p++) {
		for (unsigned i = 0; i < sx_plugin_count && i < SX_MAX_PLUGINS; i++) {
			uint32_t n = counts[p * SX_MAX_PLUGINS + i];
			snprintf(labels, sizeof(labels), "plugin=\"%s\",profile=\"%s\"",
				 sx_plugins[i]->name,
				 sx_metrics_label_escape(cfg->profiles[p]->scheduler_name, esc,
							 sizeof(esc)));
			if (n || sx_metric_value(h->unschedulable, labels))
				sx_metric_set(h->unschedulable, labels, n);
		}
	}
}
