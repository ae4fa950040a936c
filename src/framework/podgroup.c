/* The pod-group scheduling algorithm and PlacementFeasible (podgroup.h):
 * upstream pkg/scheduler/algorithm_podgroup.go
 * (podGroupSchedulingDefaultAlgorithm, podGroupPodSchedulingAlgorithm,
 * podGroupPotentiallyFeasible, RunRootSchedulingAlgorithm's "no pods were
 * schedulable") and podgroup_types.go (podGroupFitError: its message is the
 * rejecting status's). Runs on the caller's thread; no state of its own. */
#include <stdlib.h>
#include <string.h>

#include "schedext/podgroup.h"
#include "schedext/binder.h"
#include "schedext/binding_cycle.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

struct sx_status *sx_run_placement_feasible(const struct sx_profile *prof,
					    const struct sx_pod_group *pg,
					    struct sx_placement_progress progress)
{
	for (unsigned i = 0; i < prof->n[SX_PT_PERMIT]; i++) {
		const struct sx_enabled *e = &prof->points[SX_PT_PERMIT][i];
		struct sx_status *st;

		if (!e->plugin->placement_feasible)
			continue;
		st = e->plugin->placement_feasible(e->self, pg, progress);
		if (!sx_status_is_success(st))
			return sx_status_set_plugin(st, e->plugin->name);
		sx_status_free(st);
	}
	return NULL;
}

bool sx_profile_schedules_groups(const struct sx_profile *prof)
{
	/* 1.35's GenericWorkload (alpha) gave gangs GangScheduling's Permit
	 * quorum only; the pod-group cycle and its extension points came with
	 * 1.36 (plugins.placementGenerate/placementScore). */
	return sx_feature_enabled(&prof->features, SX_FEATURE_GENERIC_WORKLOAD) &&
	       sx_release(&prof->features) >= 36;
}

/* A status with one reason "<prefix><st's message>", code code; frees st. */
static struct sx_status *wrap(enum sx_code code, const char *prefix, struct sx_status *st)
{
	char buf[1024];
	struct sx_status *out;

	sx_status_message(st, buf, sizeof(buf));
	out = sx_status_new(code, "%s%s", prefix, buf);
	sx_status_set_plugin(out, st ? st->plugin : NULL);
	sx_status_free(st);
	return out;
}

/* podGroupPotentiallyFeasible: *proceed says whether to go on with the next
 * member; the status returned is the group's status so far. A Wait goes on
 * but reads Unschedulable should the members run out. */
static struct sx_status *potentially_feasible(const struct sx_pg_algorithm *a,
					      struct sx_placement_progress p, bool *proceed)
{
	struct sx_status *st = a->feasible ? a->feasible(a->ctx, a->pg, p)
					   : sx_run_placement_feasible(a->prof, a->pg, p);

	switch (sx_status_code(st)) {
	case SX_SUCCESS:
		*proceed = true;
		return st;
	case SX_WAIT:
		*proceed = true;
		return wrap(SX_UNSCHEDULABLE, "", st);
	case SX_UNSCHEDULABLE:
	case SX_UNSCHEDULABLE_AND_UNRESOLVABLE:
		*proceed = false;
		return wrap(SX_UNSCHEDULABLE, "", st);
	default:
		*proceed = false;
		return wrap(SX_ERROR, "failed to evaluate placement feasibility: ", st);
	}
}

/* podGroupPodSchedulingAlgorithm: filter and score one member; where it
 * fits, assume it and run Reserve so the next members see it. */
static void schedule_member(const struct sx_pg_algorithm *a, struct sx_pg_member *m,
			    struct sx_snapshot **view)
{
	int rc;

	m->evaluated = true;
	m->snap = a->cache ? sx_cache_snapshot(a->cache) : sx_snapshot_ref(*view);
	rc = m->snap ? a->schedule(a->ctx, a->prof, m->pod, m->snap, &m->res) : SX_ENOMEM;
	if (rc < 0) {
		m->status = sx_status_new(SX_ERROR, "out of memory");
		return;
	}
	if (m->res.selected < 0) {
		if (m->res.error)
			m->status = sx_status_clone(m->res.error);
		else
			m->status = sx_status_new(SX_UNSCHEDULABLE, "%s",
						  m->res.message ? m->res.message
								 : "no nodes available");
		return;
	}
	m->node = m->snap->nodes[m->res.selected]->name;
	if (!a->cache) { /* dry run: the next members see it in a private copy */
		struct sx_snapshot *next = sx_snapshot_with_pod(*view, m->pod, m->node);

		if (!next) {
			m->status = sx_status_new(SX_ERROR, "out of memory");
			return;
		}
		sx_snapshot_unref(*view);
		*view = next;
		m->scheduled = true;
		return;
	}
	if (sx_binder_assume(a->binder, m->pod, m->node) < 0) {
		m->status = sx_status_new(SX_ERROR,
					  "pod %s/%s is already assumed or bound in the cache",
					  sx_str_get(m->pod->meta.ns), m->pod->meta.name);
		return;
	}
	m->status = sx_run_reserve(a->prof, m->res.state, m->pod, m->node);
	if (m->status) {
		sx_run_unreserve(a->prof, m->res.state, m->pod, m->node);
		sx_binder_done(a->binder, m->pod->meta.ns, m->pod->meta.name, false);
		return;
	}
	m->scheduled = true;
}

/* The revert functions, last in first out. */
static void revert(const struct sx_pg_algorithm *a, struct sx_pg_member *m, uint32_t n)
{
	for (uint32_t i = n; a->cache && i-- > 0;) {
		if (!m[i].scheduled)
			continue;
		sx_run_unreserve(a->prof, m[i].res.state, m[i].pod, m[i].node);
		sx_binder_done(a->binder, m[i].pod->meta.ns, m[i].pod->meta.name, false);
	}
}

struct sx_status *sx_pod_group_algorithm(const struct sx_pg_algorithm *a, struct sx_pg_member *m,
					 uint32_t n)
{
	struct sx_placement_progress p = {.remaining = (int32_t)n,
					  .scheduled = a->scheduled_before};
	struct sx_status *group;
	struct sx_snapshot *view = a->cache ? NULL : sx_snapshot_ref(a->base);
	bool proceed, any = false;

	/* Before any member: can the group meet its constraints at all? */
	group = potentially_feasible(a, p, &proceed);
	for (uint32_t i = 0; i < n && proceed; i++) {
		schedule_member(a, &m[i], &view);
		if (!m[i].scheduled && !sx_status_is_rejected(m[i].status)) {
			sx_status_free(group);
			group = wrap(SX_ERROR, "failed to schedule other pod from a pod group: ",
				     sx_status_clone(m[i].status));
			break;
		}
		p.remaining--;
		if (m[i].scheduled)
			p.scheduled++;
		sx_status_free(group);
		group = potentially_feasible(a, p, &proceed);
		any = any || m[i].scheduled;
	}
	if (!sx_status_is_success(group))
		any = false;
	revert(a, m, n);
	sx_snapshot_unref(view);
	if (sx_status_is_success(group) && !any) {
		sx_status_free(group);
		group = sx_status_new(SX_UNSCHEDULABLE, "no pods were schedulable");
	}
	return group;
}

void sx_pg_members_free(struct sx_pg_member *m, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (m[i].evaluated && m[i].snap)
			sx_cycle_result_free(&m[i].res);
		sx_snapshot_unref(m[i].snap);
		sx_status_free(m[i].status);
	}
}
