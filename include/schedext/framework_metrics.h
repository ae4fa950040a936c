/* kube-scheduler's metrics of the framework (pkg/scheduler/metrics): the
 * extension point and plugin durations, recorded lock-free on the cycle's
 * threads and copied into a registry at scrape time, and the definitions
 * (names, help, buckets) of every scheduler_* family schedext exposes, so
 * that extender mode and standalone list the same families.
 *
 * Plugin durations are sampled as upstream: in 10% of the cycles
 * (pluginMetricsSamplePercent), every plugin call of those cycles.
 * Threads: any thread may record; sx_fw_metrics_export may run
 * concurrently with recording (counts are read atomically, one at a time).
 */
#ifndef SCHEDEXT_FRAMEWORK_METRICS_H
#define SCHEDEXT_FRAMEWORK_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/config.h"
#include "schedext/status.h"

struct sx_metrics;

/* Extension points as upstream labels them (metrics.PreFilter, ...). */
enum sx_ext_point {
	SX_EP_PRE_ENQUEUE,
	SX_EP_PRE_FILTER,
	SX_EP_PRE_FILTER_EXTENSION_ADD_POD,
	SX_EP_PRE_FILTER_EXTENSION_REMOVE_POD,
	SX_EP_FILTER,
	SX_EP_POST_FILTER,
	SX_EP_PRE_SCORE,
	SX_EP_SCORE,
	SX_EP_SCORE_EXTENSION_NORMALIZE,
	SX_EP_RESERVE,
	SX_EP_UNRESERVE,
	SX_EP_PERMIT,
	SX_EP_PRE_BIND,
	SX_EP_BIND,
	SX_EP_POST_BIND,
	SX_EP_SIGN, /* SignPod (opportunistic batching, batch.h) */
	SX_EP_COUNT
};
const char *sx_ext_point_label(enum sx_ext_point ep);

#define SX_METRICS_MAX_PROFILES 16

/* Defines every scheduler_* family of kube-scheduler 1.37 (idempotent),
 * with component-base's stability markers in the help; the families
 * upstream registers behind a gate only when it is on in `features`
 * (NULL: the default release's gates). */
struct sx_features;
void sx_fw_metrics_define(struct sx_metrics *m, const struct sx_features *features);
/* Whether a family deprecated in `deprecated` ("1.37.0") is hidden by
 * this binary (component-base's shouldHide); NULL: false. */
bool sx_fw_metrics_hidden(const char *deprecated);

/* Whether this cycle records plugin durations (10% of cycles). */
bool sx_fw_metrics_sample(void);

/* A monotonic clock in nanoseconds (cheap: vDSO). */
uint64_t sx_fw_metrics_now(void);

/* The clock of plugin timings: TSC ticks where usable, else ns; only
 * differences of two readings mean anything. */
uint64_t sx_fw_metrics_ticks(void);
/* One plugin call (plugin: its registry index) of a sampled cycle, its
 * duration in sx_fw_metrics_ticks() units. Filter and Score calls are
 * kept by the calling thread until it calls sx_fw_metrics_flush. */
void sx_fw_metrics_plugin(int plugin, enum sx_ext_point ep, enum sx_code code, uint64_t ticks);
/* Adds the calling thread's Filter and Score calls to the histograms (the
 * framework does at the end of each chunk of nodes). */
void sx_fw_metrics_flush(void);
/* n evaluations of a plugin at PreFilter, Filter, PreScore or Score
 * (scheduler_plugin_evaluation_total). */
void sx_fw_metrics_evals(const struct sx_profile *prof, int plugin, enum sx_ext_point ep,
			 uint64_t n);
/* One queueing hint call of plugin for the event labelled event
 * (scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}). */
void sx_fw_metrics_hint(int plugin, const char *event, bool queue, uint64_t ns);
/* One extension point of one cycle of profile prof (every cycle). */
void sx_fw_metrics_point(const struct sx_profile *prof, enum sx_ext_point ep, enum sx_code code,
			 uint64_t ns);

/* Copies the accumulated durations into m (the two histogram families),
 * labelled with cfg's profile names. cfg may be NULL (no profile label
 * series then). */
void sx_fw_metrics_export(struct sx_metrics *m, const struct sx_config *cfg);

#endif
