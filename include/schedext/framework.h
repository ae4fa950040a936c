/* The scheduling framework runtime: profiles built from a
 * KubeSchedulerConfiguration, and the scheduling cycle
 * (reference plugins.md §1-2).
 *
 * Threads: a profile is immutable after construction and may be used by any
 * number of concurrent cycles. A cycle (sx_schedule and the sx_run_* calls on
 * its state) belongs to one thread; it fans Filter/Score out on a pool.
 */
#ifndef SCHEDEXT_FRAMEWORK_H
#define SCHEDEXT_FRAMEWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/cache.h"
#include "schedext/plugin.h"
#include "schedext/status.h"

struct sx_pool;
struct cJSON;

enum sx_point {
	SX_PT_PRE_ENQUEUE,
	SX_PT_QUEUE_SORT,
	SX_PT_PRE_FILTER,
	SX_PT_FILTER,
	SX_PT_POST_FILTER,
	SX_PT_PRE_SCORE,
	SX_PT_SCORE,
	SX_PT_RESERVE,
	SX_PT_PERMIT,
	SX_PT_PRE_BIND,
	SX_PT_BIND,
	SX_PT_POST_BIND,
	SX_PT_COUNT
};

/* Config key of an extension point ("preFilter", ...). */
const char *sx_point_name(enum sx_point pt);

/* One enabled plugin at one extension point. */
struct sx_enabled {
	const struct sx_plugin *plugin;
	int index;      /* registry index (cycle state slot) */
	void *self;     /* the profile's instance */
	int64_t weight; /* Score only: >= 1 */
};

struct sx_profile {
	char *scheduler_name;
	int percentage_of_nodes_to_score; /* -1: use the global setting */
	unsigned n[SX_PT_COUNT];
	struct sx_enabled *points[SX_PT_COUNT];
	void *instances[SX_MAX_PLUGINS]; /* by registry index; owned */
	bool instantiated[SX_MAX_PLUGINS];
	/* pluginConfig args while the profile is being built (cleared after). */
	const struct cJSON *args[SX_MAX_PLUGINS];
};

struct sx_config {
	int parallelism;                  /* default 16 */
	int percentage_of_nodes_to_score; /* default 0 (adaptive) */
	double pod_initial_backoff_s;     /* default 1 */
	double pod_max_backoff_s;         /* default 10 */
	unsigned nprofiles;
	struct sx_profile **profiles;
};

/* The upstream default configuration (one profile, default-scheduler). */
struct sx_config *sx_config_default(struct sx_error *err);
/* Loads a KubeSchedulerConfiguration (YAML or JSON). NULL with err naming
 * the file and field on failure. */
struct sx_config *sx_config_load(const char *path, struct sx_error *err);
struct sx_config *sx_config_parse(const char *data, size_t len, struct sx_error *err);
void sx_config_free(struct sx_config *cfg);
/* Profile by schedulerName; name NULL = the first. */
const struct sx_profile *sx_config_profile(const struct sx_config *cfg, const char *name);

/* Is the plugin enabled at this point in the profile? */
bool sx_profile_has(const struct sx_profile *prof, enum sx_point pt, const char *plugin);

/* ---------- nominated pods ---------- */

/* Source of pods nominated to a node (the queue's nominator). Returns how
 * many pods were written to out (borrowed references valid for the cycle). */
struct sx_nominator {
	uint32_t (*pods_for_node)(void *ctx, sx_str node, const struct sx_pod **out,
				  uint32_t max);
	void *ctx;
};

/* ---------- the cycle ---------- */

enum sx_cycle_mode {
	SX_CYCLE_FULL,        /* PreFilter, Filter, PreScore, Score, select */
	SX_CYCLE_FILTER_ONLY, /* PreFilter + Filter of every candidate (extender filter) */
	SX_CYCLE_SCORE_ONLY,  /* PreScore + Score of the candidates (extender prioritize) */
};

struct sx_cycle_opts {
	const struct sx_snapshot *snap;
	enum sx_cycle_mode mode;
	const sx_str *candidates;   /* NULL = every node of the snapshot */
	uint32_t ncandidates;
	int percentage;             /* -1 = profile/global; 100 = evaluate all */
	int global_percentage;      /* the config's percentageOfNodesToScore */
	uint32_t *next_start_index; /* rotating start (in/out); NULL = start at 0 */
	uint64_t *rng;              /* tie-break random state (in/out); NULL = fixed seed */
	const struct sx_nominator *nominator; /* NULL = no nominated pods */
	struct sx_pool *pool;       /* NULL = run on the calling thread */
	bool extenders;             /* an extender filters/prioritizes (disables k=1) */
	bool always_score;          /* score even a single feasible node (explain) */
	bool skip_pre_enqueue;      /* the queue already ran PreEnqueue */
};

struct sx_cycle_result {
	uint32_t num_all_nodes;            /* nodes in the snapshot */
	struct sx_status *pre_filter;      /* PreFilter/PreEnqueue rejection, or NULL */
	struct sx_status *error;           /* scheduling error (code Error), or NULL */
	struct sx_status **statuses;       /* [num_all_nodes]: explicit failure per node, or NULL */
	struct sx_status *absent_status;   /* status of nodes not evaluated due to PreFilterResult */
	bool *evaluated;                   /* [num_all_nodes]: Filter ran (or passed) on it */
	uint32_t nfeasible;
	uint32_t *feasible;                /* snapshot indices, in evaluation order */
	/* Scores (when nfeasible >= 2, or SCORE_ONLY): */
	uint32_t nscore_plugins;
	const struct sx_enabled *score_plugins; /* the profile's score array */
	bool *score_skipped;               /* [nscore_plugins]: PreScore said Skip */
	int64_t *raw;                      /* [nfeasible * nscore_plugins] */
	int64_t *normalized;               /* [nfeasible * nscore_plugins] */
	int64_t *totals;                   /* [nfeasible] Σ normalized × weight */
	int selected;                      /* snapshot index, or -1 */
	char *message;                     /* FitError text when no node fits */
	struct sx_cycle_state *state;      /* for Reserve/Permit/Bind/PostFilter */
};

/* Runs one scheduling cycle of `pod` (plugins.md §1.2 steps 5-9). Always
 * fills *out (free with sx_cycle_result_free). Returns 0, or a negative on
 * allocation failure. The result tells feasibility/selection/error. */
int sx_schedule(const struct sx_profile *prof, const struct sx_pod *pod,
		const struct sx_cycle_opts *opts, struct sx_cycle_result *out);
void sx_cycle_result_free(struct sx_cycle_result *res);

/* numFeasibleNodesToFind (plugins.md §1.4). */
uint32_t sx_num_feasible_nodes_to_find(int percentage, uint32_t n);

/* The FitError message (plugins.md §1.11) for a result whose nodes all
 * failed; post_filter_msg may be NULL. Caller frees. */
char *sx_fit_error_message(const struct sx_cycle_result *res, const char *post_filter_msg);

/* ---------- pieces for preemption and the binding cycle ---------- */

/* Filter plugins on one NodeInfo, skipping the cycle's skip set; first
 * failure wins (status->plugin set). */
struct sx_status *sx_run_filters(const struct sx_profile *prof, const struct sx_cycle_state *cs,
				 const struct sx_pod *pod, const struct sx_node_info *ni);
/* The two-pass filter with nominated pods (plugins.md §1.5). */
struct sx_status *sx_run_filters_with_nominated(const struct sx_profile *prof,
						const struct sx_cycle_state *cs,
						const struct sx_pod *pod,
						const struct sx_node_info *ni,
						const struct sx_nominator *nom);
/* PreFilter extensions on the cycle state. */
struct sx_status *sx_run_add_pod(const struct sx_profile *prof, struct sx_cycle_state *cs,
				 const struct sx_pod *pod, const struct sx_pod *added,
				 const struct sx_node_info *ni);
struct sx_status *sx_run_remove_pod(const struct sx_profile *prof, struct sx_cycle_state *cs,
				    const struct sx_pod *pod, const struct sx_pod *removed,
				    const struct sx_node_info *ni);
/* Runs PreFilter alone on a fresh state (preemption, extender preempt). */
struct sx_status *sx_run_pre_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
				    const struct sx_pod *pod);

struct sx_cycle_state *sx_cycle_state_new(const struct sx_snapshot *snap);
struct sx_cycle_state *sx_cycle_state_clone(const struct sx_profile *prof,
					    const struct sx_cycle_state *cs);
void sx_cycle_state_free(const struct sx_profile *prof, struct sx_cycle_state *cs);

struct sx_status *sx_run_reserve(const struct sx_profile *prof, struct sx_cycle_state *cs,
				 const struct sx_pod *pod, sx_str node);
/* Unreserve of every Reserve plugin in reverse order. */
void sx_run_unreserve(const struct sx_profile *prof, struct sx_cycle_state *cs,
		      const struct sx_pod *pod, sx_str node);

/* Permit. On Wait, *waiting is a new waiting pod (see below). */
struct sx_waiting_pod;
struct sx_status *sx_run_permit(const struct sx_profile *prof, struct sx_cycle_state *cs,
				const struct sx_pod *pod, sx_str node,
				struct sx_waiting_pod **waiting);
/* Blocks until every waiting plugin allowed (NULL), one rejected, or a
 * timer fired (Unschedulable "rejected due to timeout after waiting <d> at
 * plugin <name>"). */
struct sx_status *sx_waiting_pod_wait(struct sx_waiting_pod *wp);
void sx_waiting_pod_allow(struct sx_waiting_pod *wp, const char *plugin);
void sx_waiting_pod_reject(struct sx_waiting_pod *wp, const char *plugin, const char *msg);
void sx_waiting_pod_free(struct sx_waiting_pod *wp);

struct sx_status *sx_run_pre_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
				  const struct sx_pod *pod, sx_str node);
/* Bind plugins in order (Skip -> next); all Skip -> Skip status. */
struct sx_status *sx_run_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
			      const struct sx_pod *pod, sx_str node);
void sx_run_post_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
		      const struct sx_pod *pod, sx_str node);
/* PreEnqueue plugins; first non-success gates. */
struct sx_status *sx_run_pre_enqueue(const struct sx_profile *prof, const struct sx_pod *pod);
/* QueueSort less of the profile. */
bool sx_queue_less(const struct sx_profile *prof, const struct sx_queued_pod *a,
		   const struct sx_queued_pod *b);

/* ---------- added by the standalone-scheduler engineer (issue 6) ---------- */

/* PostFilter plugins in order (plugins.md §1.11): Success stops and fills
 * *result (returns NULL); UnschedulableAndUnresolvable stops; another
 * non-rejected code stops as Error; Unschedulable collects its reasons,
 * keeps its nomination (when it makes one) and goes on. Returns the final
 * status (Unschedulable with every collected reason, plugin = the first
 * rejector), owned by the caller; its message is the FitError's
 * PostFilterMsg. Without PostFilter plugins: Unschedulable, no reasons
 * (callers check prof->n[SX_PT_POST_FILTER] first, as upstream). The
 * nomination is in result->nominated_node (SX_STR_EMPTY = none).
 * Implemented in src/post_filter.c. */
struct sx_status *sx_run_post_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
				     const struct sx_pod *pod,
				     const struct sx_filtered_status *filtered,
				     struct sx_post_filter_result *result);

#endif /* SCHEDEXT_FRAMEWORK_H */
