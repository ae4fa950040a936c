/* Metrics of `schedext serve` beyond the framework's (serve_metrics.h).
 *
 * rest_client_requests_total{code,method,host} and
 * rest_client_request_duration_seconds{verb,host}: the names, labels, help
 * and buckets of component-base/metrics/prometheus/restclient/metrics.go
 * (requestResult, requestLatency), fed per attempt as client-go's
 * request.go updateURLMetrics does, so kube-scheduler dashboards' API
 * panels work unchanged.
 *
 * leader_election_master_status{name}: client-go's
 * tools/leaderelection/metrics.go (1 while this process leads).
 *
 * schedext_build_info: component-base/metrics/prometheus/version's
 * kubernetes_build_info, with the same labels, under schedext's own name
 * (a dashboard that reads kubernetes_build_info for the Kubernetes
 * release must not mistake schedext's version for it).
 *
 * Zero series: kube-scheduler's dashboards graph rate() and sums of
 * series; a family without series shows "No data" instead of 0, so in
 * extender mode each scheduler_* family gets its series at 0 from the
 * start, with the label values the standalone loop uses. */
#include "serve_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "schedext/batch.h"
#include "schedext/common.h"
#include "schedext/config.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/plugin.h"

static const double rest_latency_buckets[] = {0.005, 0.025, 0.1, 0.25, 0.5,  1.0,
					      2.0,   4.0,   8.0, 15.0, 30.0, 60.0};

/* "https://10.0.0.1:6443/prefix" -> "10.0.0.1:6443" (Go's url.URL.Host). */
static void url_host(const char *url, char *out, size_t len)
{
	const char *s = strstr(url, "://"), *end;

	s = s ? s + 3 : url;
	end = s + strcspn(s, "/?#");
	snprintf(out, len, "%.*s", (int)(end - s), s);
}

/* The rest_client_* handles the API clients' observer counts into. */
struct sx_serve_metrics {
	struct sx_metric *requests, *duration;
};

static void rest_observe(void *ctx, const char *method, const char *server, const char *code,
			 double seconds)
{
	const struct sx_serve_metrics *sm = ctx;
	char host[256], esc[300], labels[400];

	url_host(server ? server : "", host, sizeof(host));
	sx_metrics_label_escape(host, esc, sizeof(esc));
	snprintf(labels, sizeof(labels), "code=\"%s\",method=\"%s\",host=\"%s\"", code, method,
		 esc);
	sx_metric_inc(sm->requests, labels, 1);
	snprintf(labels, sizeof(labels), "verb=\"%s\",host=\"%s\"", method, esc);
	sx_metric_observe(sm->duration, labels, seconds);
}

static void build_info(struct sx_metric *info)
{
	struct utsname u;
	char labels[512], major[16] = "0", minor[16] = "0";
	const char *arch = uname(&u) == 0 ? u.machine : "unknown";

	sscanf(SX_VERSION, "%15[0-9].%15[0-9]", major, minor);
	snprintf(labels, sizeof(labels),
		 "major=\"%s\",minor=\"%s\",gitVersion=\"v%s\",gitCommit=\"\",gitTreeState=\"\","
		 "buildDate=\"\",goVersion=\"\",compiler=\"%s\",platform=\"linux/%s\"",
		 major, minor, SX_VERSION,
#if defined(__clang__)
		 "clang",
#else
		 "gcc",
#endif
		 strcmp(arch, "x86_64") == 0	? "amd64"
		 : strcmp(arch, "aarch64") == 0 ? "arm64"
						: arch);
	sx_metric_set(info, labels, 1);
}

/* The scheduler_* families of the zero series, found once. */
struct zero_families {
	struct sx_metric *attempts, *attempt_duration, *point_duration, *evaluations,
		*unschedulable, *execution_duration;
};

/* The zero series of one profile (label values as the standalone loop and
 * the framework export write them: src/standalone/sched_metrics.c,
 * src/framework/framework_metrics.c). */
static void zero_profile(struct sx_metrics *m, const struct zero_families *z,
			 const struct sx_profile *p)
{
	static const char *const results[] = {"scheduled", "unschedulable", "error"};
	static const struct {
		enum sx_point pt;
		const char *label;
	} points[] = {{SX_PT_PRE_FILTER, "PreFilter"},
		      {SX_PT_FILTER, "Filter"},
		      {SX_PT_PRE_SCORE, "PreScore"},
		      {SX_PT_SCORE, "Score"}};
	char esc[300], labels[600];

	sx_metrics_label_escape(p->scheduler_name, esc, sizeof(esc));
	sx_batch_zero_series(m, p);
	for (size_t i = 0; i < SX_ARRAY_SIZE(results); i++) {
		snprintf(labels, sizeof(labels), "result=\"%s\",profile=\"%s\"", results[i], esc);
		sx_metric_touch(z->attempts, labels);
		sx_metric_touch(z->attempt_duration, labels);
	}
	for (size_t k = 0; k < SX_ARRAY_SIZE(points); k++) {
		snprintf(labels, sizeof(labels),
			 "extension_point=\"%s\",status=\"Success\",profile=\"%s\"",
			 points[k].label, esc);
		sx_metric_touch(z->point_duration, labels);
		for (unsigned i = 0; i < p->n[points[k].pt]; i++) {
			const char *name = p->points[points[k].pt][i].plugin->name;
			snprintf(labels, sizeof(labels),
				 "plugin=\"%s\",extension_point=\"%s\",profile=\"%s\"", name,
				 points[k].label, esc);
			sx_metric_touch(z->evaluations, labels);
			if (points[k].pt != SX_PT_FILTER)
				continue;
			snprintf(labels, sizeof(labels), "plugin=\"%s\",profile=\"%s\"", name, esc);
			sx_metric_touch(z->unschedulable, labels);
			snprintf(labels, sizeof(labels),
				 "plugin=\"%s\",extension_point=\"Filter\",status=\"Success\"",
				 name);
			sx_metric_touch(z->execution_duration, labels);
		}
	}
}

static void zero_series(struct sx_metrics *m, const struct sx_config *cfg)
{
	static const char *const queues[] = {"active", "backoff", "unschedulable", "gated"};
	const struct zero_families z = {
		.attempts = sx_metrics_find(m, "scheduler_schedule_attempts_total"),
		.attempt_duration =
			sx_metrics_find(m, "scheduler_scheduling_attempt_duration_seconds"),
		.point_duration =
			sx_metrics_find(m, "scheduler_framework_extension_point_duration_seconds"),
		.evaluations = sx_metrics_find(m, "scheduler_plugin_evaluation_total"),
		.unschedulable = sx_metrics_find(m, "scheduler_unschedulable_pods"),
		.execution_duration =
			sx_metrics_find(m, "scheduler_plugin_execution_duration_seconds"),
	};
	struct sx_metric *pending = sx_metrics_find(m, "scheduler_pending_pods");
	char labels[128];

	for (unsigned i = 0; i < cfg->nprofiles; i++)
		zero_profile(m, &z, cfg->profiles[i]);
	for (size_t i = 0; i < SX_ARRAY_SIZE(queues); i++) {
		snprintf(labels, sizeof(labels), "queue=\"%s\"", queues[i]);
		sx_metric_touch(pending, labels);
		snprintf(labels, sizeof(labels), "queue=\"%s\",type=\"pod\"", queues[i]);
		sx_metrics_touch(m, "scheduler_queued_entities", labels);
	}
	/* families whose label values only events give: the first a
	 * scheduler sees (a pod added, to activeQ); touched once, by name */
	sx_metrics_touch(m, "scheduler_queue_incoming_pods_total",
			 "queue=\"active\",event=\"PodAdd\"");
	sx_metrics_touch(m, "scheduler_goroutines", "operation=\"binding\"");
	sx_metrics_touch(m, "scheduler_queue_incoming_entities_total",
			 "queue=\"active\",event=\"PodAdd\",type=\"pod\"");
	/* gated families (absent when their gate is off: touch ignores them) */
	sx_metrics_touch(m, "scheduler_preemption_goroutines_duration_seconds",
			 "result=\"success\"");
	sx_metrics_touch(m, "scheduler_preemption_goroutines_execution_total",
			 "result=\"success\"");
	sx_metrics_touch(m, "dynamic_resource_allocation_resourceclaim_creates_total",
			 "status=\"success\",admin_access=\"false\"");
	sx_metrics_touch(m, "scheduler_event_handling_duration_seconds", "event=\"PodAdd\"");
	sx_metrics_touch(m, "scheduler_pod_scheduling_sli_duration_seconds", "attempts=\"1\"");
	sx_metrics_touch(m, "scheduler_permit_wait_duration_seconds", "result=\"Success\"");
	if (cfg->nprofiles && cfg->profiles[0]->n[SX_PT_FILTER]) {
		snprintf(labels, sizeof(labels),
			 "plugin=\"%s\",event=\"NodeAdd\",hint=\"QueueSkip\"",
			 cfg->profiles[0]->points[SX_PT_FILTER][0].plugin->name);
		sx_metrics_touch(m, "scheduler_queueing_hint_execution_duration_seconds", labels);
	}
	sx_metrics_touch(m, "scheduler_pod_scheduling_attempts", NULL);
	sx_metrics_touch(m, "scheduler_scheduling_algorithm_duration_seconds", NULL);
	sx_metrics_touch(m, "scheduler_preemption_attempts_total", NULL);
	sx_metrics_touch(m, "scheduler_preemption_victims", NULL);
}

struct sx_serve_metrics *sx_serve_metrics_init(struct sx_metrics *m, const struct sx_config *cfg,
					       const char *lease_name, bool extender_only)
{
	struct sx_serve_metrics *sm;
	struct sx_metric *master, *verb_requests, *info;
	static const char *const verbs[][4] = {
		{"filter", "feasible", "unschedulable", "error"},
		{"prioritize", "scored", "error", NULL},
		{"preempt", "preemption", "unschedulable", NULL},
		{"bind", "bound", "error", NULL},
	};
	char labels[300], esc[260];

	if (!m || !(sm = calloc(1, sizeof(*sm))))
		return NULL;
	/* client-go's metrics, ALPHA in component-base
	 * (component-base/metrics/prometheus/restclient/metrics.go,
	 * client-go/tools/leaderelection/metrics.go via component-base) */
	sm->requests = sx_metrics_family_kube(
		m, "rest_client_requests_total", SX_METRIC_COUNTER, SX_STABILITY_ALPHA, NULL,
		"Number of HTTP requests, partitioned by status code, method, and host.", NULL, 0);
	sm->duration = sx_metrics_family_kube(
		m, "rest_client_request_duration_seconds", SX_METRIC_HISTOGRAM, SX_STABILITY_ALPHA,
		NULL, "Request latency in seconds. Broken down by verb, and host.",
		rest_latency_buckets, SX_ARRAY_SIZE(rest_latency_buckets));
	master = sx_metrics_family_kube(
		m, "leader_election_master_status", SX_METRIC_GAUGE, SX_STABILITY_ALPHA, NULL,
		"Gauge of if the reporting system is master of the relevant lease, 0 "
		"indicates backup, 1 indicates master. 'name' is the string used to "
		"identify the lease. Please make sure to group by name.",
		NULL, 0);
	info = sx_metrics_family(
		m, "schedext_build_info", SX_METRIC_GAUGE,
		"A metric with a constant '1' value labeled by major, minor, git version, "
		"git commit, git tree state, build date, Go version, and compiler from "
		"which schedext was built, and platform on which it is running (as "
		"kubernetes_build_info).",
		NULL, 0);
	verb_requests = sx_metrics_family(
		m, "schedext_extender_verb_requests_total", SX_METRIC_COUNTER,
		"Extender verb calls served (filter, prioritize, preempt, bind) by result; "
		"not scheduling attempts.",
		NULL, 0);
	build_info(info);
	snprintf(labels, sizeof(labels), "name=\"%s\"",
		 sx_metrics_label_escape(lease_name ? lease_name : "schedext", esc, sizeof(esc)));
	sx_metric_touch(master, labels);
	for (size_t v = 0; v < SX_ARRAY_SIZE(verbs); v++)
		for (size_t r = 1; r < 4 && verbs[v][r]; r++) {
			snprintf(labels, sizeof(labels), "verb=\"%s\",result=\"%s\"", verbs[v][0],
				 verbs[v][r]);
			sx_metric_touch(verb_requests, labels);
		}
	if (extender_only && cfg)
		zero_series(m, cfg);
	sx_kube_set_observer(rest_observe, sm);
	return sm;
}

void sx_serve_metrics_stop(void)
{
	sx_kube_set_observer(NULL, NULL);
}

void sx_serve_metrics_free(struct sx_serve_metrics *sm)
{
	free(sm);
}
