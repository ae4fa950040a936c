/* kube-scheduler's framework metrics (include/schedext/framework_metrics.h).
 *
 * The cycle's threads only add to atomic counters (relaxed: a scrape
 * that sees a count before its sum is harmless); the registry, with its
 * lock and label strings, is touched only when /metrics is scraped. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "schedext/features.h"
#include "schedext/metrics.h"
#include "schedext/plugin.h"
#include "schedext/registry.h"
#include "schedext/framework_metrics.h"

#define NCODES	       7
#define POINT_BUCKETS  12 /* ExponentialBuckets(0.0001, 2, 12) */
#define PLUGIN_BUCKETS 20 /* ExponentialBuckets(0.00001, 1.5, 20); < 32 (tl_hist.used) */
#define SAMPLE_EVERY   10 /* pluginMetricsSamplePercent = 10 */

static const char *const ep_labels[SX_EP_COUNT] = {
	"PreEnqueue",
	"PreFilter",
	"PreFilterExtensionAddPod",
	"PreFilterExtensionRemovePod",
	"Filter",
	"PostFilter",
	"PreScore",
	"Score",
	"ScoreExtensionNormalize",
	"Reserve",
	"Unreserve",
	"Permit",
	"PreBind",
	"Bind",
	"PostBind",
	"Sign",
};

const char *sx_ext_point_label(enum sx_ext_point ep)
{
	return ep < SX_EP_COUNT ? ep_labels[ep] : "?";
}

struct hist {
	atomic_uint_fast64_t buckets[PLUGIN_BUCKETS + 1]; /* last: above every bound */
	atomic_uint_fast64_t sum_ns;
};

static double point_bounds[POINT_BUCKETS];
static double plugin_bounds[PLUGIN_BUCKETS];
static uint64_t point_bounds_ns[POINT_BUCKETS];
static uint64_t plugin_bounds_ns[PLUGIN_BUCKETS];
static atomic_int bounds_ready;

/* The profiles seen so far, by pointer: their slot indexes the counters. */
static _Atomic(const struct sx_profile *) profiles[SX_METRICS_MAX_PROFILES];
static struct hist point_hist[SX_METRICS_MAX_PROFILES][SX_EP_COUNT][NCODES];
static struct hist plugin_hist[SX_MAX_PLUGINS][SX_EP_COUNT][NCODES];
static atomic_uint_fast64_t cycles;
/* evaluations: PreFilter, Filter, PreScore, Score */
#define NEVAL 4
static atomic_uint_fast64_t evals[SX_METRICS_MAX_PROFILES][SX_MAX_PLUGINS][NEVAL];

static void init_bounds(void);
static void add(struct hist *h, const uint64_t *bounds, unsigned n, uint64_t ns);

/* Queueing hints: per plugin, event label (interned below) and result. */
#define MAX_HINT_EVENTS 48
#define HINT_BUCKETS	20 /* ExponentialBuckets(0.00001, 1.5, 20) */
static char hint_events[MAX_HINT_EVENTS][64];
static atomic_int nhint_events;
static pthread_mutex_t hint_mu = PTHREAD_MUTEX_INITIALIZER;
static struct hist hint_hist[SX_MAX_PLUGINS][MAX_HINT_EVENTS][2];
static double hint_bounds[HINT_BUCKETS];
static uint64_t hint_bounds_ns[HINT_BUCKETS];

/* The label's slot, added on first use; -1 when the table is full. */
static int hint_event_slot(const char *event)
{
	int n = atomic_load_explicit(&nhint_events, memory_order_acquire), i;

	for (i = 0; i < n; i++)
		if (strcmp(hint_events[i], event) == 0)
			return i;
	pthread_mutex_lock(&hint_mu);
	n = atomic_load(&nhint_events);
	for (i = 0; i < n && strcmp(hint_events[i], event) != 0; i++)
		;
	if (i == n && n < MAX_HINT_EVENTS) {
		snprintf(hint_events[n], sizeof(hint_events[n]), "%s", event);
		atomic_store_explicit(&nhint_events, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&hint_mu);
	return i < MAX_HINT_EVENTS ? i : -1;
}

void sx_fw_metrics_hint(int plugin, const char *event, bool queue, uint64_t ns)
{
	int slot = plugin >= 0 && plugin < SX_MAX_PLUGINS ? hint_event_slot(event) : -1;
	init_bounds();
	if (slot >= 0)
		add(&hint_hist[plugin][slot][queue], hint_bounds_ns, HINT_BUCKETS, ns);
}

static int eval_index(enum sx_ext_point ep)
{
	switch (ep) {
	case SX_EP_PRE_FILTER:
		return 0;
	case SX_EP_FILTER:
		return 1;
	case SX_EP_PRE_SCORE:
		return 2;
	case SX_EP_SCORE:
		return 3;
	default:
		return -1;
	}
}

static const enum sx_ext_point eval_points[NEVAL] = {SX_EP_PRE_FILTER, SX_EP_FILTER,
						     SX_EP_PRE_SCORE, SX_EP_SCORE};

static void exponential(double start, double factor, unsigned n, double *out, uint64_t *ns)
{
	for (unsigned i = 0; i < n; i++, start *= factor) {
		out[i] = start;
		ns[i] = (uint64_t)(start * 1e9 + 0.5);
	}
}

static void init_bounds(void)
{
	if (atomic_load_explicit(&bounds_ready, memory_order_acquire))
		return;
	exponential(0.0001, 2, POINT_BUCKETS, point_bounds, point_bounds_ns);
	exponential(0.00001, 1.5, PLUGIN_BUCKETS, plugin_bounds, plugin_bounds_ns);
	exponential(0.00001, 1.5, HINT_BUCKETS, hint_bounds, hint_bounds_ns);
	atomic_store_explicit(&bounds_ready, 1, memory_order_release);
}

uint64_t sx_fw_metrics_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Plugin calls of a sampled cycle are timed with the TSC where it ticks at
 * a constant rate (two reads cost ~20 ns, clock_gettime up to 100 ns in a
 * VM, and a Filter phase makes thousands of calls); ns_per_tick comes from
 * a 2 ms calibration against CLOCK_MONOTONIC on the first sampled cycle. */
static double ns_per_tick;
static pthread_once_t tick_once = PTHREAD_ONCE_INIT;

static bool tsc_usable(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool constant = false, nonstop = false;

	while (f && fgets(line, sizeof(line), f) && !(constant && nonstop)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	if (f)
		fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

/* plugin_bounds_ns in ticks: a Filter or Score call of a sampled cycle is
 * put in its bucket without converting its duration (calibrate). */
static uint64_t plugin_bounds_ticks[PLUGIN_BUCKETS];

static void calibrate(void)
{
#if defined(__x86_64__)
	init_bounds();
	if (tsc_usable()) {
		uint64_t t0 = sx_fw_metrics_now(), c0 = __rdtsc(), t1, c1;
		do {
			t1 = sx_fw_metrics_now();
		} while (t1 - t0 < 2000000);
		c1 = __rdtsc();
		if (c1 > c0) {
			double per_tick = (double)(t1 - t0) / (double)(c1 - c0);

			for (unsigned b = 0; b < PLUGIN_BUCKETS; b++)
				plugin_bounds_ticks[b] =
					(uint64_t)((double)plugin_bounds_ns[b] / per_tick);
			ns_per_tick = per_tick; /* last: a reader that sees it sees the bounds */
		}
	}
#endif
}

uint64_t sx_fw_metrics_ticks(void)
{
#if defined(__x86_64__)
	if (ns_per_tick > 0)
		return __rdtsc();
#endif
	return sx_fw_metrics_now();
}

bool sx_fw_metrics_sample(void)
{
	if (atomic_fetch_add_explicit(&cycles, 1, memory_order_relaxed) % SAMPLE_EVERY != 0)
		return false;
	pthread_once(&tick_once, calibrate);
	return true;
}

static void add(struct hist *h, const uint64_t *bounds, unsigned n, uint64_t ns)
{
	unsigned i = 0;
	while (i < n && ns > bounds[i])
		i++;
	atomic_fetch_add_explicit(&h->buckets[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
}

/* The profile's slot, taken on first use; -1 when every slot is taken. */
static int profile_slot(const struct sx_profile *prof)
{
	for (int i = 0; i < SX_METRICS_MAX_PROFILES; i++) {
		const struct sx_profile *cur =
			atomic_load_explicit(&profiles[i], memory_order_acquire);
		if (cur == prof)
			return i;
		if (!cur) {
			const struct sx_profile *expected = NULL;
			if (atomic_compare_exchange_strong(&profiles[i], &expected, prof) ||
			    expected == prof)
				return i;
		}
	}
	return -1;
}

/* Filter and Score calls of a sampled cycle are tallied per thread and
 * added to the shared histograms once per chunk (sx_fw_metrics_flush):
 * an atomic add per call, both threads on the same lines, cost as much as
 * the calls it timed. */
#define TL_ENTRIES 32
struct tl_hist {
	uint16_t key;  /* (plugin * SX_EP_COUNT + ep) * NCODES + code */
	uint32_t used; /* bit b: buckets[b] > 0 */
	uint32_t buckets[PLUGIN_BUCKETS + 1];
	uint64_t sum_ticks; /* sx_fw_metrics_ticks units, converted at flush */
};
#define TL_KEYS (SX_MAX_PLUGINS * SX_EP_COUNT * NCODES)
_Static_assert(TL_KEYS <= 65536 && TL_ENTRIES < 256, "tl_hist.key and tl.slot hold them");
static _Thread_local struct {
	uint32_t n;
	struct tl_hist h[TL_ENTRIES];
	uint8_t slot[TL_KEYS]; /* key -> its index in h + 1; 0: not in h */
} tl;

static uint64_t ticks_to_ns(uint64_t ticks)
{
	return ns_per_tick > 0 ? (uint64_t)((double)ticks * ns_per_tick) : ticks;
}

void sx_fw_metrics_flush(void)
{
	for (uint32_t i = 0; i < tl.n; i++) {
		const struct tl_hist *t = &tl.h[i];
		unsigned code = t->key % NCODES, ep = t->key / NCODES % SX_EP_COUNT;
		struct hist *h = &plugin_hist[t->key / NCODES / SX_EP_COUNT][ep][code];

		for (uint32_t m = t->used; m; m &= m - 1) {
			unsigned b = (unsigned)__builtin_ctz(m);

			atomic_fetch_add_explicit(&h->buckets[b], t->buckets[b],
						  memory_order_relaxed);
		}
		atomic_fetch_add_explicit(&h->sum_ns, ticks_to_ns(t->sum_ticks),
					  memory_order_relaxed);
		tl.slot[t->key] = 0;
	}
	tl.n = 0;
}

/* One Filter or Score call of a sampled cycle, in ticks: a direct index
 * and the bucket found among bounds in ticks, since this runs for every
 * call (thousands per cycle). */
static void tally(int plugin, enum sx_ext_point ep, enum sx_code code, uint64_t ticks)
{
	uint16_t key = (uint16_t)(((unsigned)plugin * SX_EP_COUNT + ep) * NCODES + code);
	const uint64_t *bounds = ns_per_tick > 0 ? plugin_bounds_ticks : plugin_bounds_ns;
	unsigned b = 0;
	uint32_t i = tl.slot[key];

	if (i-- == 0) {
		if (tl.n == TL_ENTRIES)
			sx_fw_metrics_flush();
		i = tl.n++;
		memset(&tl.h[i], 0, sizeof(tl.h[i]));
		tl.h[i].key = key;
		tl.slot[key] = (uint8_t)(i + 1);
	}
	while (b < PLUGIN_BUCKETS && ticks > bounds[b])
		b++;
	tl.h[i].buckets[b]++;
	tl.h[i].used |= 1u << b;
	tl.h[i].sum_ticks += ticks;
}

void sx_fw_metrics_plugin(int plugin, enum sx_ext_point ep, enum sx_code code, uint64_t ticks)
{
	if (plugin < 0 || plugin >= SX_MAX_PLUGINS || ep >= SX_EP_COUNT || (unsigned)code >= NCODES)
		return;
	init_bounds();
	if (ep == SX_EP_FILTER || ep == SX_EP_SCORE)
		tally(plugin, ep, code, ticks);
	else
		add(&plugin_hist[plugin][ep][code], plugin_bounds_ns, PLUGIN_BUCKETS,
		    ticks_to_ns(ticks));
}

void sx_fw_metrics_evals(const struct sx_profile *prof, int plugin, enum sx_ext_point ep,
			 uint64_t n)
{
	int slot = profile_slot(prof), k = eval_index(ep);
	if (slot >= 0 && k >= 0 && plugin >= 0 && plugin < SX_MAX_PLUGINS)
		atomic_fetch_add_explicit(&evals[slot][plugin][k], n, memory_order_relaxed);
}

void sx_fw_metrics_point(const struct sx_profile *prof, enum sx_ext_point ep, enum sx_code code,
			 uint64_t ns)
{
	int slot = profile_slot(prof);
	init_bounds();
	if (slot >= 0 && ep < SX_EP_COUNT && (unsigned)code < NCODES)
		add(&point_hist[slot][ep][code], point_bounds_ns, POINT_BUCKETS, ns);
}

/* ---------- export ---------- */

/* Copies h into the series f{labels}; nothing when empty. */
static void export_hist(struct sx_metric *f, const char *labels, const struct hist *h,
			unsigned nbounds)
{
	uint64_t b[PLUGIN_BUCKETS], count = 0;

	for (unsigned i = 0; i <= nbounds; i++) {
		uint64_t v = atomic_load_explicit(&h->buckets[i], memory_order_relaxed);
		if (i < nbounds)
			b[i] = v;
		count += v;
	}
	if (count)
		sx_metric_set_histogram(
			f, labels, b, nbounds, count,
			(double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / 1e9);
}

static const char *profile_name(const struct sx_config *cfg, const struct sx_profile *prof)
{
	for (unsigned i = 0; cfg && i < cfg->nprofiles; i++)
		if (cfg->profiles[i] == prof)
			return prof->scheduler_name;
	return NULL; /* a profile of another configuration (tests) */
}

void sx_fw_metrics_export(struct sx_metrics *m, const struct sx_config *cfg)
{
	/* the families' handles, found once per scrape (not per series) */
	struct sx_metric *points =
		sx_metrics_find(m, "scheduler_framework_extension_point_duration_seconds");
	struct sx_metric *evaluations = sx_metrics_find(m, "scheduler_plugin_evaluation_total");
	struct sx_metric *hints =
		sx_metrics_find(m, "scheduler_queueing_hint_execution_duration_seconds");
	struct sx_metric *executions =
		sx_metrics_find(m, "scheduler_plugin_execution_duration_seconds");
	char labels[256], esc[128];

	init_bounds();
	for (int p = 0; p < SX_METRICS_MAX_PROFILES; p++) {
		const struct sx_profile *prof = atomic_load(&profiles[p]);
		const char *name = prof ? profile_name(cfg, prof) : NULL;
		for (unsigned ep = 0; name && ep < SX_EP_COUNT; ep++)
			for (unsigned c = 0; c < NCODES; c++) {
				snprintf(labels, sizeof(labels),
					 "extension_point=\"%s\",status=\"%s\",profile=\"%s\"",
					 ep_labels[ep], sx_code_name((enum sx_code)c),
					 sx_metrics_label_escape(name, esc, sizeof(esc)));
				export_hist(points, labels, &point_hist[p][ep][c], POINT_BUCKETS);
			}
		for (unsigned pl = 0; name && pl < sx_plugin_count && pl < SX_MAX_PLUGINS; pl++)
			for (unsigned k = 0; k < NEVAL; k++) {
				uint64_t n = atomic_load_explicit(&evals[p][pl][k],
								  memory_order_relaxed);
				if (!n)
					continue;
				snprintf(labels, sizeof(labels),
					 "plugin=\"%s\",extension_point=\"%s\",profile=\"%s\"",
					 sx_plugins[pl]->name, ep_labels[eval_points[k]],
					 sx_metrics_label_escape(name, esc, sizeof(esc)));
				sx_metric_set(evaluations, labels, (double)n);
			}
	}
	for (unsigned pl = 0; pl < sx_plugin_count && pl < SX_MAX_PLUGINS; pl++)
		for (int ev = 0; ev < atomic_load(&nhint_events); ev++)
			for (unsigned h = 0; h < 2; h++) {
				snprintf(labels, sizeof(labels),
					 "plugin=\"%s\",event=\"%s\",hint=\"%s\"",
					 sx_plugins[pl]->name,
					 sx_metrics_label_escape(hint_events[ev], esc, sizeof(esc)),
					 h ? "Queue" : "QueueSkip");
				export_hist(hints, labels, &hint_hist[pl][ev][h], HINT_BUCKETS);
			}
	for (unsigned pl = 0; pl < sx_plugin_count && pl < SX_MAX_PLUGINS; pl++)
		for (unsigned ep = 0; ep < SX_EP_COUNT; ep++)
			for (unsigned c = 0; c < NCODES; c++) {
				snprintf(labels, sizeof(labels),
					 "plugin=\"%s\",extension_point=\"%s\",status=\"%s\"",
					 sx_plugins[pl]->name, ep_labels[ep],
					 sx_code_name((enum sx_code)c));
				export_hist(executions, labels, &plugin_hist[pl][ep][c],
					    PLUGIN_BUCKETS);
			}
}

/* ---------- definitions ----------
 *
 * kube-scheduler 1.37's families (pkg/scheduler/metrics/metrics.go
 * InitMetrics and Register; the DRA claim counter from
 * k8s.io/dynamic-resource-allocation/resourceclaim/metrics): names,
 * help, stability levels, deprecations and buckets. Metrics follow the
 * binary, not --emulated-version, as upstream's registry does (its version
 * is the build's, component-base/metrics/registry.go newKubeRegistry): a
 * 1.37 schedext emulating 1.35 still speaks 1.37's metrics. Families
 * upstream registers only behind a gate (Register) follow the gate's value
 * in the configuration. */

#define ALWAYS (-1)

struct family {
	const char *name, *help;
	enum sx_metric_type type;
	enum sx_metric_stability stability;
	double start, factor; /* exponential buckets */
	unsigned n;
	const char *deprecated; /* DeprecatedVersion, or NULL */
	int gate;		/* enum sx_feature that registers it, or ALWAYS */
};

static const struct family families[] = {
	{"scheduler_schedule_attempts_total",
	 "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
	 "not be scheduled, while 'error' means an internal scheduler problem.",
	 SX_METRIC_COUNTER, SX_STABILITY_STABLE, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_scheduling_attempt_duration_seconds",
	 "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_STABLE, 0.001, 2, 15, NULL, ALWAYS},
	{"scheduler_pod_scheduling_sli_duration_seconds",
	 "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
	 "queue and might involve multiple scheduling attempts.",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_BETA, 0.01, 2, 20, NULL, ALWAYS},
	{"scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_STABLE, 1, 2, 5, NULL, ALWAYS},
	{"scheduler_pending_pods",
	 "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
	 "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
	 "unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is "
	 "the number of unschedulable pods that the scheduler never attempted to schedule because "
	 "they are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' "
	 "means number of pods in pendingPodGroupPods.",
	 SX_METRIC_GAUGE, SX_STABILITY_STABLE, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_queued_entities",
	 "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual "
	 "pods that are not members of any podgroup) by the queue type. 'active' means number of "
	 "entities in activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' "
	 "means number of entities in unschedulableEntities that the scheduler attempted to "
	 "schedule and failed; 'gated' is the number of unschedulable entities that the scheduler "
	 "never attempted to schedule because they are gated.",
	 SX_METRIC_GAUGE, SX_STABILITY_ALPHA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_queue_incoming_pods_total",
	 "Number of pods added to scheduling queues by event and queue type.", SX_METRIC_COUNTER,
	 SX_STABILITY_STABLE, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_queue_incoming_entities_total",
	 "Number of scheduling entities added to scheduling queues by event, queue type, and "
	 "entity type. Entity types are either 'pod' (for individual pods that are not members of "
	 "any podgroup) or 'podgroup'.",
	 SX_METRIC_COUNTER, SX_STABILITY_ALPHA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_goroutines",
	 "Number of running goroutines split by the work they do such as binding.", SX_METRIC_GAUGE,
	 SX_STABILITY_BETA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_unschedulable_pods",
	 "The number of unschedulable pods broken down by plugin name. A pod will increment the "
	 "gauge for all plugins that caused it to not schedule and so this metric have "
	 "meaning only when broken down by plugin.",
	 SX_METRIC_GAUGE, SX_STABILITY_BETA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_framework_extension_point_duration_seconds",
	 "Latency for running all plugins of a specific extension point.", SX_METRIC_HISTOGRAM,
	 SX_STABILITY_STABLE, 0.0001, 2, POINT_BUCKETS, NULL, ALWAYS},
	{"scheduler_plugin_execution_duration_seconds",
	 "Duration for running a plugin at a specific extension point.", SX_METRIC_HISTOGRAM,
	 SX_STABILITY_BETA, 0.00001, 1.5, PLUGIN_BUCKETS, NULL, ALWAYS},
	{"scheduler_plugin_evaluation_total",
	 "Number of attempts to schedule pods by each plugin and the extension point (available "
	 "only in PreFilter, Filter, PreScore, and Score).",
	 SX_METRIC_COUNTER, SX_STABILITY_BETA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_preemption_attempts_total", "Total preemption attempts in the cluster till now",
	 SX_METRIC_COUNTER, SX_STABILITY_STABLE, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_preemption_victims",
	 "Number of selected preemption victims for preemption initiated by a single pod",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_STABLE, 1, 2, 7, NULL, ALWAYS},
	{"scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_BETA, 0.001, 2, 15, NULL, ALWAYS},
	{"scheduler_cache_size",
	 "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", SX_METRIC_GAUGE,
	 SX_STABILITY_ALPHA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_event_handling_duration_seconds", "Event handling latency in seconds.",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_ALPHA, 0.0001, 2, 12, NULL, ALWAYS},
	{"scheduler_queueing_hint_execution_duration_seconds",
	 "Duration for running a queueing hint function of a plugin.", SX_METRIC_HISTOGRAM,
	 SX_STABILITY_ALPHA, 0.00001, 1.5, HINT_BUCKETS, NULL, ALWAYS},
	{"scheduler_scheduling_algorithm_duration_seconds",
	 "Scheduling algorithm latency in seconds", SX_METRIC_HISTOGRAM, SX_STABILITY_BETA, 0.001,
	 2, 15, NULL, ALWAYS},
	{"scheduler_preemption_goroutines_duration_seconds",
	 "Duration in seconds for running goroutines for the preemption.", SX_METRIC_HISTOGRAM,
	 SX_STABILITY_ALPHA, 0.01, 2, 20, "1.37.0", SX_FEATURE_SCHEDULER_ASYNC_PREEMPTION},
	{"scheduler_preemption_goroutines_execution_total",
	 "Number of preemption goroutines executed.", SX_METRIC_COUNTER, SX_STABILITY_ALPHA, 0, 0,
	 0, NULL, SX_FEATURE_SCHEDULER_ASYNC_PREEMPTION},
	{"dynamic_resource_allocation_resourceclaim_creates_total",
	 "Number of ResourceClaims creation requests, categorized by creation status and admin "
	 "access",
	 SX_METRIC_COUNTER, SX_STABILITY_ALPHA, 0, 0, 0, NULL, SX_FEATURE_DRA_EXTENDED_RESOURCE},
	/* opportunistic batching (batch.c), pkg/scheduler/metrics/metrics.go */
	{"scheduler_batch_attempts_total", "Counts of results when we attempt to use batching.",
	 SX_METRIC_COUNTER, SX_STABILITY_ALPHA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_batch_cache_flushed_total", "Counts of cache flushes by reason.",
	 SX_METRIC_COUNTER, SX_STABILITY_ALPHA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_batch_rescore_attempts_total",
	 "Counts of rescore attempts during opportunistic batching.", SX_METRIC_COUNTER,
	 SX_STABILITY_ALPHA, 0, 0, 0, NULL, ALWAYS},
	{"scheduler_get_node_hint_duration_seconds", "Latency for getting a node hint.",
	 SX_METRIC_HISTOGRAM, SX_STABILITY_ALPHA, 0.00001, 2, 12, NULL, ALWAYS},
	{"scheduler_store_schedule_results_duration_seconds",
	 "Latency for storing scheduling results.", SX_METRIC_HISTOGRAM, SX_STABILITY_ALPHA,
	 0.00001, 2, 12, NULL, ALWAYS},
	{"scheduler_batch_rescore_duration_seconds",
	 "Latency for rescoring a node during opportunistic batching.", SX_METRIC_HISTOGRAM,
	 SX_STABILITY_ALPHA, 0.00001, 2, 12, NULL, ALWAYS},
};

/* component-base/metrics/registry.go shouldHide: a family deprecated in a
 * release before the binary's minor release is hidden (without
 * --show-hidden-metrics-for-version, which schedext does not have). The
 * binary is SX_RELEASE_MAX. */
bool sx_fw_metrics_hidden(const char *deprecated)
{
	int major = 0, minor = 0;

	if (!deprecated || sscanf(deprecated, "%d.%d", &major, &minor) != 2)
		return false;
	return major < 1 || (major == 1 && minor < SX_RELEASE_MAX);
}

void sx_fw_metrics_define(struct sx_metrics *m, const struct sx_features *features)
{
	double b[SX_METRICS_MAX_BUCKETS];
	struct sx_features defaults;

	if (!features) {
		sx_features_init(&defaults, SX_RELEASE_DEFAULT);
		features = &defaults;
	}
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct family *f = &families[i];
		double v = f->start;
		if (f->gate != ALWAYS && !sx_feature_enabled(features, (enum sx_feature)f->gate))
			continue;
		if (sx_fw_metrics_hidden(f->deprecated))
			continue;
		for (unsigned k = 0; k < f->n; k++, v *= f->factor)
			b[k] = v;
		sx_metrics_define_kube(m, f->name, f->type, f->stability, f->deprecated, f->help,
				       f->n ? b : NULL, f->n);
	}
}
