/* The pod-group scheduling algorithm of 1.37 (upstream
 * pkg/scheduler/algorithm_podgroup.go, PodGroupSchedulingAlgorithm
 * podGroupSchedulingDefaultAlgorithm and podGroupPotentiallyFeasible) and
 * the PlacementFeasible extension point
 * (frameworkImpl.RunPlacementFeasiblePlugins), behind GenericWorkload.
 * Implemented in src/framework/podgroup.c.
 *
 * The group's unscheduled members, in upstream's order (priority, highest
 * first, then the time each first entered the queue), are each filtered
 * and scored, and assumed with Reserve where they fit so the next members
 * see them; PlacementFeasible runs before the first and after each. The
 * group succeeds when PlacementFeasible says Success after some member was
 * placed; then the caller runs the usual assume, Reserve, Permit and
 * binding cycle of each placed member (upstream prepareForBindingCycle).
 * Every tentative assumption is undone (Unreserve, then forget) before
 * sx_pod_group_algorithm returns, success or not, as upstream reverts its
 * snapshot assumptions at the end of RunRootSchedulingAlgorithm.
 *
 * Upstream assumes members into its one snapshot; schedext's snapshots are
 * immutable and shared, so a member is assumed in the cache and the next
 * member reads a new snapshot (consecutive snapshots share every NodeInfo
 * that did not change, so this costs the changed node and the arrays).
 *
 * Group preemption (PodGroupPostFilter, DefaultPreemption's, below;
 * src/framework/podgroup_preemption.c) runs the same algorithm in its
 * dry-run mode on a copy of the snapshot without the victims.
 *
 * Placements (TopologyAwareWorkloadScheduling, upstream
 * algorithm_podgroup.go podGroupSchedulingPlacementAlgorithm,
 * evaluatePlacement, nominatedPlacement, findBestPodGroupPlacement,
 * findBestPlacement):
 * sx_pod_group_placement_algorithm runs the algorithm once per placement
 * the profile's PlacementGenerate plugins return, members restricted to
 * the placement's nodes, and keeps the feasible placement the
 * PlacementScore plugins score highest (equal totals: one at random). The
 * one placement holding members' nominated nodes (a group preemption
 * nominated them) is tried first and, when the group is feasible there
 * with a member placed, used without trying the others
 * (nominatedPlacement).
 *
 * Several PlacementGenerate plugins: their placements are merged as
 * upstream framework.go RunPlacementGeneratePlugins does (see
 * sx_pg_placements_merge).
 *
 * Not here: CompositePodGroups.
 *
 * Threads: the algorithm runs on the caller's thread (the standalone loop);
 * it writes the cache through the binder.
 */
#ifndef SCHEDEXT_PODGROUP_H
#define SCHEDEXT_PODGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/framework.h"
#include "schedext/plugin.h"
#include "schedext/status.h"

struct sx_binder;
struct sx_cache;
struct sx_pod_group;
struct sx_snapshot;

/* PlacementFeasible of the profile's Permit plugins that have the hook, in
 * order: the first status that is not Success, its plugin named. */
struct sx_status *sx_run_placement_feasible(const struct sx_profile *prof,
					    const struct sx_pod_group *pg,
					    struct sx_placement_progress progress);

/* Does the profile schedule pods of pod groups as groups (GenericWorkload,
 * from 1.36: 1.35 had the Permit quorum only)? */
bool sx_profile_schedules_groups(const struct sx_profile *prof);

/* One member of the group and what the algorithm found for it. */
struct sx_pg_member {
	const struct sx_pod *pod; /* borrowed from the caller */
	/* Out: */
	bool evaluated;		    /* the member's cycle ran */
	bool scheduled;		    /* it fit (and was assumed and reserved) */
	sx_str node;		    /* where, when scheduled */
	struct sx_snapshot *snap;   /* the snapshot its cycle read (reference) */
	struct sx_cycle_result res; /* its cycle (res.state kept for binding) */
	struct sx_status *status;   /* NULL when scheduled; else why not (owned) */
};

struct sx_pg_algorithm {
	const struct sx_profile *prof;
	const struct sx_pod_group *pg;
	struct sx_cache *cache; /* snapshots come from here */
	/* With cache NULL, a dry run (explain): members are placed on private
	 * copies of base (sx_snapshot_with_pod), without assume or Reserve. */
	const struct sx_snapshot *base;
	const struct sx_binder *binder; /* tentative assume / forget */
	int32_t scheduled_before;	/* members bound or assumed before the cycle */
	/* Runs one member's filter and score on snap (sx_schedule with the
	 * caller's options, SX_CYCLE_FULL, no PostFilter); returns as
	 * sx_schedule. */
	int (*schedule)(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
			struct sx_snapshot *snap, struct sx_cycle_result *res);
	void *ctx;
	/* PlacementFeasible; NULL: the profile's plugins
	 * (sx_run_placement_feasible). Tests script it. */
	struct sx_status *(*feasible)(void *ctx, const struct sx_pod_group *pg,
				      struct sx_placement_progress progress);
	/* Members see only these nodes (upstream AssumePlacement); NULL: all. */
	const struct sx_pg_placement *placement;
	/* The random state of the tie-break between equally scored
	 * placements (in/out); NULL: a fixed seed. */
	uint64_t *rng;
	/* Optional observers (metrics.go RecordGeneratedPlacements and
	 * ObservePlacementEvaluation; called with observe_ctx): the
	 * placements generated, and each placement evaluated without an
	 * Error. */
	void (*placements_generated)(void *ctx, const struct sx_profile *prof, uint32_t n);
	void (*placement_evaluated)(void *ctx, const struct sx_profile *prof, bool feasible);
	void *observe_ctx;
};

/* Runs the algorithm over m[0..n) (in that order). Returns the group's
 * status: NULL (Success), Unschedulable (PlacementFeasible's words, or
 * "no pods were schedulable"), another rejection PlacementFeasible gave
 * as it gave it, or Error ("failed to schedule other pod from
 * a pod group: ...", "failed to evaluate placement feasibility: ...").
 * Never leaves anything assumed. Free the members with
 * sx_pg_members_free. */
struct sx_status *sx_pod_group_algorithm(const struct sx_pg_algorithm *a, struct sx_pg_member *m,
					 uint32_t n);
void sx_pg_members_free(struct sx_pg_member *m, uint32_t n);

/* podGroupSchedulingPlacementAlgorithm: with TopologyAwareWorkloadScheduling
 * on and placements generated, sx_pod_group_algorithm per placement (a's
 * placement ignored), m[] left with the chosen placement's members (the
 * best scored feasible one; with none feasible, the first evaluated
 * placement's (the nominated one when tried), the status Unschedulable
 * "0/<n> placements are available, first placement status: <its
 * status>"); a PlacementGenerate or PlacementScore plugin's non-Success
 * status is returned as is, its plugin named.
 * Otherwise exactly sx_pod_group_algorithm. */
struct sx_status *sx_pod_group_placement_algorithm(const struct sx_pg_algorithm *a,
						   struct sx_pg_member *m, uint32_t n);

/* Upper bound on the placements one merge may produce (a cross product). */
#define SX_PG_MAX_PLACEMENTS 65536

/* Folds one more PlacementGenerate plugin's placements (cur, n > 0) into
 * acc (upstream framework.go RunPlacementGeneratePlugins): acc becomes the
 * cross product, acc's placements outer, of the non-empty node
 * intersections, each named "<acc's>/<cur's>" with its nodes in acc's
 * order, and cur is freed. Returns 0; -1 out of memory or -2 over
 * SX_PG_MAX_PLACEMENTS, acc and cur then untouched (the caller frees). */
int sx_pg_placements_merge(struct sx_pg_placements *acc, struct sx_pg_placements *cur);

/* One PlacementGenerate plugin's placements cur folded into acc, as
 * upstream framework.go RunPlacementGeneratePlugins merges them, plugins in
 * the profile's order: none (the plugin leaves the group unconstrained;
 * upstream it returns the parent placement) is skipped; the first
 * constraining plugin's become acc (*constrained set); later ones are
 * merged (sx_pg_placements_merge). Unschedulable when no merged placement
 * is left; Error out of memory or over SX_PG_MAX_PLACEMENTS. cur is
 * consumed on success; on a non-NULL status the caller frees acc and cur. */
struct sx_status *sx_pg_placements_fold(struct sx_pg_placements *acc, bool *constrained,
					struct sx_pg_placements *cur);

/* nominatedPlacement: the index of the one placement in pl holding a
 * nominated node (status.nominatedNodeName) of a member of m[0..n); -1
 * when none does, or more than one (overlapping placements: a nomination
 * cannot tell which one the group's preemption chose). */
int sx_pg_nominated_placement(const struct sx_pg_placements *pl, const struct sx_pg_member *m,
			      uint32_t n);

/* ---------- group preemption (PodGroupPostFilter) ----------
 *
 * upstream pkg/scheduler/framework/preemption/podgrouppreemption.go
 * (PodGroupEvaluator.Preempt, selectVictimsOnDomain,
 * preemptorEligibleToPreemptOthers, moreImportantVictim), types.go
 * (getCrossNodesVictims: the preemption units) and
 * plugins/defaultpreemption/default_preemption.go (PodGroupPostFilter: the
 * "pod group preemption: " prefix, no topology constraints). The domain is
 * the whole cluster. A dry run: nothing is evicted here. */

/* What the evaluator reads. */
struct sx_pg_preempt_input {
	const struct sx_profile *prof;
	const struct sx_pod_group *pg;
	const struct sx_pod *const *pods; /* the group's unscheduled members, in order */
	uint32_t npods;
	const struct sx_snapshot *snap; /* the cycle's snapshot (PodGroups, PDBs) */
	const struct sx_nominator *nominator;
	int32_t scheduled_before;
	/* As sx_pg_algorithm's (members' filter and score). */
	int (*schedule)(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
			struct sx_snapshot *snap, struct sx_cycle_result *res);
	void *ctx;
	struct sx_status *(*feasible)(void *ctx, const struct sx_pod_group *pg,
				      struct sx_placement_progress progress);
};

/* The outcome: status NULL on success, then the victims to evict (whole
 * units, most important unit first) and each placed member's node. */
struct sx_pg_preempt_result {
	struct sx_status *status; /* "pod group preemption: ..." */
	uint32_t nvictims;
	const struct sx_pod **victims; /* references */
	uint32_t nunits;	       /* preemption units among them */
	uint32_t ngroup_units;	       /* ... of pods of pod groups (NumPodGroupDisruptions) */
	uint32_t num_pdb_violations;
	uint32_t nnominated;
	const struct sx_pod **nominated; /* members (borrowed from the input) */
	sx_str *nominated_nodes;	 /* ... and their nodes */
};
void sx_pg_preempt_result_free(struct sx_pg_preempt_result *r);

/* The group's preemption priority (util.PodGroupPriority: spec.priority,
 * else 0) and whether it may preempt (resolvePreemptionPolicy: the
 * PodGroup's preemptionPolicy with PodGroupPreemptionPolicy on, else Never
 * when any member says Never). */
int32_t sx_pod_group_priority(const struct sx_pod_group *pg);

/* PodGroupEvaluator.Preempt without the actuation. Always fills *out
 * (statuses prefixed "pod group preemption: "); returns 0 or SX_ENOMEM. */
int sx_pod_group_preempt(const struct sx_pg_preempt_input *in, struct sx_pg_preempt_result *out);

/* The key a group's running preemption goes by in the profile's
 * evaluator (sx_preemption_begin; upstream Executor.preempting holds the
 * PodGroup's UID): "podgroup/<namespace>/<name>". */
const char *sx_pg_preemption_key(sx_str ns, sx_str name, char *buf, size_t len);

/* RunPodGroupPostFilterPlugins: the profile's podGroupPostFilter plugins
 * (prof->group[SX_GPT_POD_GROUP_POST_FILTER], multiPoint expanded as at
 * every point), in order, until one succeeds (the last status otherwise;
 * Unschedulable "default preemption plugin is not registered, ..."
 * without any). */
struct sx_status *sx_run_pod_group_post_filter(const struct sx_pg_preempt_input *in,
					       struct sx_pg_preempt_result *out);

#endif /* SCHEDEXT_PODGROUP_H */
