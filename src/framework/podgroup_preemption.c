/* Group preemption, the PodGroupPostFilter of DefaultPreemption (podgroup.h):
 * upstream pkg/scheduler/framework/preemption/podgrouppreemption.go
 * (PodGroupEvaluator.Preempt, selectVictimsOnDomain, isPreemptionAllowed,
 * preemptorEligibleToPreemptOthers, moreImportantVictim), types.go
 * (getCrossNodesVictims, NewPodVictim, NewVictim: the preemption units),
 * util.go (FilterVictimsWithPDBViolation, GetPodPriority) and
 * plugins/defaultpreemption/default_preemption.go (PodGroupPostFilter).
 *
 * The domain is the whole cluster. A preemption unit is one pod, or every
 * scheduled pod of a PodGroup whose disruptionMode is All; its priority is
 * its PodGroup's when the pod has one, else the pod's. A unit of a pod
 * group's pods (whole or not) is more important than a lone pod of the
 * same priority; between two such, the larger, then the one started first. Every unit of lower
 * priority than the preemptor group is removed from a private copy of the
 * snapshot, the group is placed there by the pod-group algorithm's dry run
 * (one member after another, each seeing the ones before), then the units
 * are reprieved one at a time, PDB-violating ones first, most important
 * first: a unit is added back and kept when every placed member still
 * passes its Filters with the nominated pods (PreFilter AddPod run on a
 * clone of the member's cycle state for each pod of the unit); a member
 * that passes is assumed (counted on the copy) and its Reserve plugins run
 * on that clone before the next member is filtered, then every reserved
 * member is unreserved, last first, when the unit's check ends (upstream
 * reprieveVictim).
 *
 * The units, their order and their PDB count are shared with single-pod
 * preemption (victim_units.h).
 *
 * Runs on the caller's thread; no state of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/features.h"
#include "schedext/registry.h"
#include "schedext/config.h"
#include "schedext/podgroup.h"
#include "schedext/binding_cycle.h"
#include "schedext/preemption.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"
#include "victim_units.h"

#define PREFIX "pod group preemption: "

int32_t sx_pod_group_priority(const struct sx_pod_group *pg)
{
	return pg->spec.has_priority ? pg->spec.priority : 0;
}

/* preemptorEligibleToPreemptOthers; NULL or the reason. */
static const char *ineligible(const struct sx_pg_preempt_input *in, int32_t prio)
{
	bool never = false;

	if (sx_feature_enabled(&in->prof->features, SX_FEATURE_POD_GROUP_PREEMPTION_POLICY)) {
		never = in->pg->spec.has_preemption_policy && in->pg->spec.preempt_never;
	} else {
		for (uint32_t i = 0; i < in->npods; i++)
			never = never || in->pods[i]->preempt_never;
	}
	if (never)
		return "not eligible due to preemptionPolicy=Never.";
	for (uint32_t i = 0; i < in->npods; i++) {
		int at = in->pods[i]->nominated_node != SX_STR_EMPTY
				 ? sx_snapshot_find(in->snap, in->pods[i]->nominated_node)
				 : -1;

		if (at < 0)
			continue;
		const struct sx_node_info *ni = in->snap->nodes[at];

		for (uint32_t j = 0; j < ni->npods; j++) {
			const struct sx_pod *p = ni->pods[j];

			if (sx_victim_pod_priority(in->snap, p) < prio && p->deleting &&
			    p->preemption_target)
				return "not eligible due to a terminating pod on the nominated "
				       "node.";
		}
	}
	return NULL;
}

static void fail(struct sx_pg_preempt_result *out, enum sx_code code, const char *msg)
{
	out->status = sx_status_new(code, PREFIX "%s", msg);
}

/* A copy of *view with pod counted on node; replaces *view. */
static int add_to(struct sx_snapshot **view, const struct sx_pod *pod, sx_str node)
{
	struct sx_snapshot *next = sx_snapshot_with_pod(*view, pod, node);

	if (!next)
		return SX_ENOMEM;
	sx_snapshot_unref(*view);
	*view = next;
	return 0;
}

/* Unreserve, last in first out, the members reserved by members_fit, and
 * free their cycle states (upstream reprieveVictim's cleanupFns). */
static void unreserve_all(const struct sx_pg_preempt_input *in, const struct sx_pg_member *m,
			  struct sx_cycle_state **cs, const bool *reserved)
{
	for (uint32_t i = in->npods; i-- > 0;) {
		if (reserved[i])
			sx_run_unreserve(in->prof, cs[i], m[i].pod, m[i].node);
		if (cs[i])
			sx_cycle_state_free(in->prof, cs[i]);
	}
}

/* One placed member on view: PreFilter AddPod for each pod of unit u, its
 * Filters with the nominated pods; *st their status. Then, when it passes,
 * it is assumed on *view and reserved (upstream reprieveVictim: AddPod and
 * RunReservePluginsReserve, whose status is not looked at), *reserved set.
 * -1: out of memory. */
static int member_fits(const struct sx_pg_preempt_input *in, const struct sx_pg_member *mi,
		       struct sx_cycle_state *cs, struct sx_snapshot **view,
		       const struct sx_victim_unit *u, struct sx_status **st, bool *reserved)
{
	int at;

	for (uint32_t k = 0; k < u->n && !*st; k++) {
		int v = sx_snapshot_find(*view, u->nodes[k]);

		if (v >= 0)
			*st = sx_run_add_pod(in->prof, cs, mi->pod, u->pods[k], (*view)->nodes[v]);
	}
	at = sx_snapshot_find(*view, mi->node);
	if (!*st && at >= 0)
		*st = sx_run_filters_with_nominated(in->prof, cs, mi->pod, (*view)->nodes[at],
						    in->nominator);
	if (!*st && at < 0)
		*st = sx_status_new(SX_UNSCHEDULABLE, "node not found");
	if (*st)
		return 0;
	if (add_to(view, mi->pod, mi->node) < 0)
		return -1;
	sx_status_free(sx_run_reserve(in->prof, cs, mi->pod, mi->node));
	*reserved = true;
	return 0;
}

/* Does every placed member still pass its Filters on try_ (the kept state
 * with unit u added back), the members before it assumed and reserved?
 * *err: an Error met. */
static bool members_fit(const struct sx_pg_preempt_input *in, struct sx_pg_member *m,
			const struct sx_snapshot *try_, const struct sx_victim_unit *u,
			struct sx_status **err)
{
	struct sx_snapshot *view = sx_snapshot_ref(try_);
	struct sx_cycle_state **cs = sx_calloc(in->npods + 1, sizeof(*cs));
	bool *reserved = sx_calloc(in->npods + 1, sizeof(*reserved));
	bool fits = cs && reserved;

	if (!fits)
		*err = sx_status_oom();
	for (uint32_t i = 0; i < in->npods && fits && !*err; i++) {
		struct sx_status *st = NULL;

		if (!m[i].scheduled)
			continue;
		cs[i] = sx_cycle_state_clone(in->prof, m[i].res.state);
		if (!cs[i] || member_fits(in, &m[i], cs[i], &view, u, &st, &reserved[i]) < 0) {
			sx_status_free(st);
			*err = sx_status_oom();
			break;
		}
		if (sx_status_code(st) == SX_ERROR) {
			*err = st;
			break;
		}
		fits = sx_status_is_success(st);
		sx_status_free(st);
	}
	if (cs && reserved)
		unreserve_all(in, m, cs, reserved);
	free(cs);
	free(reserved);
	sx_snapshot_unref(view);
	return fits;
}

/* Steps after the group fits without the potential units: reprieve. */
static int reprieve(const struct sx_pg_preempt_input *in, struct sx_pg_member *m,
		    const struct sx_snapshot *without, struct sx_victim_unit **pot, uint32_t npot,
		    struct sx_pg_preempt_result *out)
{
	struct sx_snapshot *cur = sx_snapshot_ref(without);
	struct sx_status *err = NULL;
	int rc = 0;

	for (int pass = 1; pass >= 0 && !rc && !err; pass--) {
		for (uint32_t i = 0; i < npot && !rc && !err; i++) {
			struct sx_victim_unit *u = pot[i];
			struct sx_snapshot *try_;

			if ((u->violations > 0) != (pass == 1))
				continue;
			try_ = sx_snapshot_ref(cur);
			for (uint32_t k = 0; k < u->n && !rc; k++)
				rc = add_to(&try_, u->pods[k], u->nodes[k]);
			if (!rc && members_fit(in, m, try_, u, &err) && !err) {
				sx_snapshot_unref(cur);
				cur = try_;
				continue;
			}
			sx_snapshot_unref(try_);
			u->preempt = true;
			if (pass == 1)
				out->num_pdb_violations += u->violations;
		}
	}
	sx_snapshot_unref(cur);
	if (err && !rc) {
		char msg[1024];

		fail(out, SX_ERROR, sx_status_message(err, msg, sizeof(msg)));
	}
	sx_status_free(err);
	return rc;
}

/* The victims (units to preempt, most important first) and nominations. */
static int fill_result(const struct sx_pg_preempt_input *in, struct sx_pg_member *m,
		       struct sx_victim_unit **pot, uint32_t npot, struct sx_pg_preempt_result *out)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i < npot; i++)
		total += pot[i]->preempt ? pot[i]->n : 0;
	out->victims = sx_calloc(total + 1, sizeof(*out->victims));
	out->nominated = sx_calloc(in->npods + 1, sizeof(*out->nominated));
	out->nominated_nodes = sx_calloc(in->npods + 1, sizeof(*out->nominated_nodes));
	if (!out->victims || !out->nominated || !out->nominated_nodes)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < npot; i++) { /* pot is sorted by importance */
		if (!pot[i]->preempt)
			continue;
		out->nunits++;
		out->ngroup_units += pot[i]->group;
		for (uint32_t k = 0; k < pot[i]->n; k++)
			out->victims[out->nvictims++] = sx_pod_ref(pot[i]->pods[k]);
	}
	for (uint32_t i = 0; i < in->npods; i++)
		if (m[i].scheduled) {
			out->nominated[out->nnominated] = m[i].pod;
			out->nominated_nodes[out->nnominated++] = m[i].node;
		}
	return 0;
}

/* selectVictimsOnDomain once the preemptor is eligible. */
static int select_victims(const struct sx_pg_preempt_input *in, struct sx_victim_unit **pot,
			  uint32_t npot, struct sx_pg_preempt_result *out)
{
	const struct sx_pod **pods;
	sx_str *nodes;
	uint32_t total = 0, k = 0;
	struct sx_snapshot *without = NULL;
	struct sx_pg_member *m = sx_calloc(in->npods + 1, sizeof(*m));
	struct sx_status *st = NULL;
	int rc = 0;

	for (uint32_t i = 0; i < npot; i++)
		total += pot[i]->n;
	pods = sx_calloc(total + 1, sizeof(*pods));
	nodes = sx_calloc(total + 1, sizeof(*nodes));
	if (!m || !pods || !nodes) {
		rc = SX_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < npot; i++)
		for (uint32_t j = 0; j < pot[i]->n; j++) {
			pods[k] = pot[i]->pods[j];
			nodes[k++] = pot[i]->nodes[j];
		}
	if (!(without = sx_snapshot_without_pods(in->snap, pods, nodes, total))) {
		rc = SX_ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < in->npods; i++)
		m[i].pod = in->pods[i];
	struct sx_pg_algorithm a = {
		.prof = in->prof,
		.pg = in->pg,
		.base = without,
		.scheduled_before = in->scheduled_before,
		.schedule = in->schedule,
		.ctx = in->ctx,
		.feasible = in->feasible,
	};
	st = sx_pod_group_algorithm(&a, m, in->npods);
	if (!sx_status_is_success(st)) {
		char msg[1024];

		fail(out, sx_status_code(st), sx_status_message(st, msg, sizeof(msg)));
		goto out;
	}
	sx_victim_units_sort(pot, npot);
	if ((rc = sx_victim_units_mark_pdbs(in->snap, pot, npot)) < 0)
		goto out;
	if ((rc = reprieve(in, m, without, pot, npot, out)) < 0 || out->status)
		goto out;
	rc = fill_result(in, m, pot, npot, out);
out:
	sx_status_free(st);
	if (m)
		sx_pg_members_free(m, in->npods);
	sx_snapshot_unref(without);
	free(m);
	free(pods);
	free(nodes);
	return rc;
}

int sx_pod_group_preempt(const struct sx_pg_preempt_input *in, struct sx_pg_preempt_result *out)
{
	int32_t prio = sx_pod_group_priority(in->pg);
	struct sx_victim_unit *units = NULL, **pot = NULL;
	uint32_t nunits = 0, npot = 0;
	const char *why;
	int rc;

	memset(out, 0, sizeof(*out));
	if (in->pg->spec.ntopology > 0) {
		fail(out, SX_UNSCHEDULABLE, "not supported with topology constraints");
		return out->status ? 0 : SX_ENOMEM;
	}
	if ((why = ineligible(in, prio))) {
		fail(out, SX_UNSCHEDULABLE, why);
		return out->status ? 0 : SX_ENOMEM;
	}
	rc = sx_victim_units_collect(in->snap, NULL, 0, true, &units, &nunits);
	if (!rc && !(pot = sx_calloc(nunits + 1, sizeof(*pot))))
		rc = SX_ENOMEM;
	for (uint32_t i = 0; !rc && i < nunits; i++)
		if (units[i].priority < prio) /* isPreemptionAllowed */
			pot[npot++] = &units[i];
	if (!rc && npot == 0)
		fail(out, SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
		     "No preemption victims found for incoming preemptor");
	else if (!rc)
		rc = select_victims(in, pot, npot, out);
	sx_victim_units_free(units, nunits);
	free(pot);
	if (rc) {
		sx_pg_preempt_result_free(out);
		fail(out, SX_ERROR, "out of memory");
	}
	return rc;
}

void sx_pg_preempt_result_free(struct sx_pg_preempt_result *r)
{
	if (!r)
		return;
	sx_status_free(r->status);
	for (uint32_t i = 0; i < r->nvictims; i++)
		sx_pod_unref(r->victims[i]);
	free(r->victims);
	free(r->nominated);
	free(r->nominated_nodes);
	memset(r, 0, sizeof(*r));
}

struct sx_status *sx_run_pod_group_post_filter(const struct sx_pg_preempt_input *in,
					       struct sx_pg_preempt_result *out)
{
	const struct sx_profile *prof = in->prof;
	struct sx_status *st = NULL;
	bool any = false;

	memset(out, 0, sizeof(*out));
	/* runWorkloadAwarePreemption runs only with the WorkloadAwarePreemption
	 * gate (pkg/scheduler/schedule_one_podgroup.go). */
	if (!sx_feature_enabled(&prof->features, SX_FEATURE_WORKLOAD_AWARE_PREEMPTION))
		return sx_status_new(SX_UNSCHEDULABLE, "workload aware preemption is disabled");
	for (unsigned i = 0; i < prof->ngroup[SX_GPT_POD_GROUP_POST_FILTER]; i++) {
		const struct sx_group_enabled *e = &prof->group[SX_GPT_POD_GROUP_POST_FILTER][i];
		const struct sx_plugin *plugin = e->index >= 0 ? sx_plugins[e->index] : NULL;

		if (!plugin || !plugin->pod_group_post_filter)
			continue; /* an upstream plugin schedext lacks: warned at load */
		any = true;
		sx_status_free(st);
		sx_pg_preempt_result_free(out);
		st = plugin->pod_group_post_filter(prof->instances[e->index], in, out);
		if (sx_status_is_success(st))
			return NULL;
		sx_status_set_plugin(st, plugin->name);
		if (sx_status_code(st) == SX_ERROR)
			break;
	}
	if (!any) /* runWorkloadAwarePreemption without the plugin */
		return sx_status_new(SX_UNSCHEDULABLE, "default preemption plugin is not "
						       "registered, workload aware preemption is "
						       "disabled");
	return st;
}

const char *sx_pg_preemption_key(sx_str ns, sx_str name, char *buf, size_t len)
{
	snprintf(buf, len, "podgroup/%s/%s", sx_str_get(ns), sx_str_get(name));
	return buf;
}
