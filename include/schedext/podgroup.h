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
 * Not here: placements (PlacementGenerate/PlacementScore, topology-aware
 * scheduling), PodGroupPostFilter (group preemption), CompositePodGroups.
 *
 * Threads: the algorithm runs on the caller's thread (the standalone loop);
 * it writes the cache through the binder.
 */
#ifndef SCHEDEXT_PODGROUP_H
#define SCHEDEXT_PODGROUP_H

#include <stdbool.h>
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

/* Does the profile schedule pods of pod groups as groups (GenericWorkload)? */
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
};

/* Runs the algorithm over m[0..n) (in that order). Returns the group's
 * status: NULL (Success), Unschedulable (PlacementFeasible's words, or
 * "no pods were schedulable") or Error ("failed to schedule other pod from
 * a pod group: ...", "failed to evaluate placement feasibility: ...").
 * Never leaves anything assumed. Free the members with
 * sx_pg_members_free. */
struct sx_status *sx_pod_group_algorithm(const struct sx_pg_algorithm *a, struct sx_pg_member *m,
					 uint32_t n);
void sx_pg_members_free(struct sx_pg_member *m, uint32_t n);

#endif /* SCHEDEXT_PODGROUP_H */
