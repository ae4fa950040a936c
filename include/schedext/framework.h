/* The scheduling framework runtime: the scheduling cycle of one pod
 * (PreEnqueue, PreFilter, parallel Filter, PreScore, Score, selection),
 * the cycle state, and the Filter pieces preemption reuses
 * (upstream pkg/scheduler/schedule_one.go). Implemented in src/framework/framework.c.
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
#include "schedext/config.h"
#include "schedext/plugin.h"
#include "schedext/status.h"

struct sx_arena;
struct sx_pool;
struct sx_extenders;
struct sx_batch;

/* ---------- nominated pods ---------- */

/* Source of pods nominated to a node (the queue's nominator). Returns how
 * many pods were written to out (borrowed references valid for the cycle). */
struct sx_nominator {
	uint32_t (*pods_for_node)(void *ctx, sx_str node, const struct sx_pod **out, uint32_t max);
	void *ctx;
	/* No pod is nominated anywhere (pods_for_node finds none): Filter
	 * skips the lookup per node. False when unknown. */
	bool none;
};

/* ---------- the cycle ---------- */

enum sx_cycle_mode {
	SX_CYCLE_FULL,	      /* PreFilter, Filter, PreScore, Score, select */
	SX_CYCLE_FILTER_ONLY, /* PreFilter + Filter of every candidate (extender filter) */
	SX_CYCLE_SCORE_ONLY,  /* PreScore + Score of the candidates (extender prioritize) */
};

struct sx_cycle_opts {
	const struct sx_snapshot *snap;
	enum sx_cycle_mode mode;
	const sx_str *candidates; /* NULL = every node of the snapshot */
	uint32_t ncandidates;
	int percentage;		    /* -1 = profile/global; 100 = evaluate all */
	int global_percentage;	    /* the config's percentageOfNodesToScore */
	uint32_t *next_start_index; /* rotating start (in/out); NULL = start at 0 */
	uint64_t *rng;		    /* tie-break random state (in/out); NULL = fixed seed */
	const struct sx_nominator *nominator; /* NULL = no nominated pods */
	struct sx_pool *pool;		      /* NULL = run on the calling thread */
	bool extenders;			      /* an extender filters/prioritizes (disables k=1) */
	/* Extenders to call (FULL mode: filter after the Filter plugins,
	 * prioritize after Score; extender_client.h); NULL = none. */
	struct sx_extenders *ext;
	bool always_score;     /* score even a single feasible node (explain) */
	bool skip_pre_enqueue; /* the queue already ran PreEnqueue */
	/* Opportunistic batching (batch.h), FULL mode: the profile's batch
	 * (NULL: the gate is off, nothing is hinted nor stored) and the
	 * cycle's number (the queue's count of popped pods). */
	struct sx_batch *batch;
	int64_t cycle;
};

struct sx_cycle_result {
	uint32_t num_all_nodes;		 /* nodes in the snapshot */
	struct sx_status *pre_filter;	 /* PreFilter/PreEnqueue rejection, or NULL */
	struct sx_status *error;	 /* scheduling error (code Error), or NULL */
	struct sx_status **statuses;	 /* [num_all_nodes]: explicit failure per node, or NULL */
	struct sx_status *absent_status; /* status of nodes not evaluated due to PreFilterResult */
	bool *evaluated;		 /* [num_all_nodes]: Filter ran (or passed) on it */
	uint32_t nfeasible;
	uint32_t *feasible; /* snapshot indices, in evaluation order */
	/* Scores (when nfeasible >= 2, or SCORE_ONLY): */
	uint32_t nscore_plugins;
	const struct sx_enabled *score_plugins; /* the profile's score array */
	bool *score_skipped;			/* [nscore_plugins]: PreScore said Skip */
	int64_t *raw;				/* [nfeasible * nscore_plugins] */
	int64_t *normalized;			/* [nfeasible * nscore_plugins] */
	int64_t *totals;			/* [nfeasible] Σ normalized × weight */
	int selected;				/* snapshot index, or -1 */
	char *message;				/* FitError text when no node fits */
	struct sx_cycle_state *state;		/* for Reserve/Permit/Bind/PostFilter */
	/* Owns the arrays above (statuses, evaluated, feasible, score_skipped,
	 * raw, normalized, totals) and the cycle's candidate lists and scratch
	 * arrays; freed at once by sx_cycle_result_free (arena.h). */
	struct sx_arena *arena;
};

/* Runs one scheduling cycle of `pod` (schedule_one.go schedulePod). Always
 * fills *out (free with sx_cycle_result_free). Returns 0, or a negative on
 * allocation failure. The result tells feasibility/selection/error. */
int sx_schedule(const struct sx_profile *prof, const struct sx_pod *pod,
		const struct sx_cycle_opts *opts, struct sx_cycle_result *out);
void sx_cycle_result_free(struct sx_cycle_result *res);

/* numFeasibleNodesToFind (schedule_one.go). */
uint32_t sx_num_feasible_nodes_to_find(int percentage, uint32_t n);

/* ---------- pieces for preemption and the binding cycle ---------- */

/* Filter plugins on one NodeInfo, skipping the cycle's skip set; first
 * failure wins (status->plugin set). */
struct sx_status *sx_run_filters(const struct sx_profile *prof, const struct sx_cycle_state *cs,
				 const struct sx_pod *pod, const struct sx_node_info *ni);
/* The two-pass filter with nominated pods (RunFilterPluginsWithNominatedPods). */
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
/* Before a binding cycle: frees the slots of plugins that have no
 * binding-cycle hook (Unreserve, Permit, PreBind, Bind, PostBind), since
 * nothing reads them any more. Returns true when a slot remains (its
 * plugin may read cs->snap, e.g. VolumeBinding or DynamicResources with
 * claims: the caller keeps the snapshot alive); false when none does, and
 * then cs->snap is cleared, so a binding job need not hold the cycle's
 * snapshot (one snapshot per bind job in flight grew the peak RSS with
 * the API server's latency). */
bool sx_cycle_state_trim_for_binding(struct sx_cycle_state *cs);

/* PreEnqueue plugins; first non-success gates. */
struct sx_status *sx_run_pre_enqueue(const struct sx_profile *prof, const struct sx_pod *pod);
/* QueueSort less of the profile. */
bool sx_queue_less(const struct sx_profile *prof, const struct sx_queued_pod *a,
		   const struct sx_queued_pod *b);

#endif /* SCHEDEXT_FRAMEWORK_H */
