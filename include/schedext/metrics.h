/* A small Prometheus registry: counters, gauges and histograms with label
 * sets, rendered in the text exposition format (version 0.0.4) for
 * GET /metrics.
 *
 * Families are declared once, and their handles (struct sx_metric) kept by
 * whoever updates them: sx_metrics_family() declares a family and returns
 * its handle, sx_metrics_find() gives the handle of one declared
 * elsewhere; updates through sx_metric_*() then find only the series (one
 * per label set, created on first use), not the family by name. The
 * sx_metrics_*() functions taking a name are for tests and one-off
 * updates. `labels` is the label part already
 * formatted, e.g. `verb="filter",code="200"` (NULL or "" = no labels); values
 * must be escaped by the caller (sx_metrics_label_escape helps).
 *
 * Threads: every function may be called from any thread (one mutex per
 * registry; updates are a short scan over at most a few hundred series).
 */
#ifndef SCHEDEXT_METRICS_H
#define SCHEDEXT_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct sx_buf;
struct sx_metrics;
struct sx_metric; /* a family; valid while its registry lives */

enum sx_metric_type { SX_METRIC_COUNTER, SX_METRIC_GAUGE, SX_METRIC_HISTOGRAM };

/* Upper bound on the series of one registry: hostile label values cannot
 * grow it without limit (updates to new series past it are dropped). */
#define SX_METRICS_MAX_SERIES  1024
#define SX_METRICS_MAX_BUCKETS 32

struct sx_metrics *sx_metrics_new(void);
void sx_metrics_free(struct sx_metrics *m);

/* Declares a family. buckets (ascending upper bounds, without +Inf) only
 * for histograms. Returns 0, SX_EEXIST when already defined, SX_EINVAL. */
int sx_metrics_define(struct sx_metrics *m, const char *name, enum sx_metric_type type,
		      const char *help, const double *buckets, unsigned nbuckets);

/* component-base's stability levels (k8s.io/component-base/metrics
 * opts.go StabilityLevel); NONE for families that are not component-base
 * metrics (schedext_*, process_*). */
enum sx_metric_stability {
	SX_STABILITY_NONE,
	SX_STABILITY_ALPHA,
	SX_STABILITY_BETA,
	SX_STABILITY_STABLE
};

/* Declares a family as component-base registers a KubeOpts metric: the
 * help is "[ALPHA] help", and for a deprecated one (deprecated = its
 * DeprecatedVersion, "1.37.0"; NULL = not deprecated) "[ALPHA]
 * (Deprecated since 1.37.0) help" (opts.go markDeprecated, then
 * annotateStabilityLevel). Whether a deprecated family is hidden is the
 * caller's decision (registry.go shouldHide). Returns as
 * sx_metrics_define. */
int sx_metrics_define_kube(struct sx_metrics *m, const char *name, enum sx_metric_type type,
			   enum sx_metric_stability stability, const char *deprecated,
			   const char *help, const double *buckets, unsigned nbuckets);

/* sx_metrics_family with sx_metrics_define_kube's help annotations. */
struct sx_metric *sx_metrics_family_kube(struct sx_metrics *m, const char *name,
					 enum sx_metric_type type,
					 enum sx_metric_stability stability, const char *deprecated,
					 const char *help, const double *buckets,
					 unsigned nbuckets);

/* Declares a family (as sx_metrics_define) and returns its handle; the
 * existing family when one of that name and type is declared already.
 * NULL when m is NULL, on invalid arguments, a type clash or out of
 * memory: updates through a NULL handle are ignored. */
struct sx_metric *sx_metrics_family(struct sx_metrics *m, const char *name,
				    enum sx_metric_type type, const char *help,
				    const double *buckets, unsigned nbuckets);
/* The handle of a declared family, or NULL. */
struct sx_metric *sx_metrics_find(struct sx_metrics *m, const char *name);

/* Updates through a handle, as the by-name functions below; f NULL is
 * ignored (0 for sx_metric_value). */
void sx_metric_inc(struct sx_metric *f, const char *labels, uint64_t v);
void sx_metric_set(struct sx_metric *f, const char *labels, double v);
void sx_metric_observe(struct sx_metric *f, const char *labels, double v);
void sx_metric_touch(struct sx_metric *f, const char *labels);
void sx_metric_set_histogram(struct sx_metric *f, const char *labels, const uint64_t *buckets,
			     unsigned nbuckets, uint64_t count, double sum);
double sx_metric_value(struct sx_metric *f, const char *labels);

/* Counter += v. Ignored when the family is unknown or not a counter. */
void sx_metrics_inc(struct sx_metrics *m, const char *name, const char *labels, uint64_t v);
/* Gauge = v (also a counter fed from a monotonic source). */
void sx_metrics_set(struct sx_metrics *m, const char *name, const char *labels, double v);
/* Histogram observation (e.g. seconds). */
void sx_metrics_observe(struct sx_metrics *m, const char *name, const char *labels, double v);

/* Replaces a histogram series' state with counts accumulated elsewhere
 * (per-bucket, not cumulative; observations above the last bound count
 * only in count), e.g. lock-free accumulators copied at scrape time.
 * Ignored unless name is a histogram with exactly nbuckets bounds. */
void sx_metrics_set_histogram(struct sx_metrics *m, const char *name, const char *labels,
			      const uint64_t *buckets, unsigned nbuckets, uint64_t count,
			      double sum);

/* Creates the series name{labels} at zero when it does not exist yet (any
 * type; a histogram gets empty buckets): a family then shows 0 before
 * anything happened instead of no series, which dashboards show as "No
 * data". Ignored when the family is unknown. */
void sx_metrics_touch(struct sx_metrics *m, const char *name, const char *labels);

/* Current value of a counter/gauge series (0 when absent); histograms give
 * their observation count. For tests. */
double sx_metrics_value(struct sx_metrics *m, const char *name, const char *labels);

/* Appends the exposition text: families in definition order, series in
 * creation order. */
void sx_metrics_render(struct sx_metrics *m, struct sx_buf *out);

/* Escapes a label value (backslash, quote, newline) into buf; truncates. */
const char *sx_metrics_label_escape(const char *s, char *buf, size_t len);

#endif /* SCHEDEXT_METRICS_H */
