/* The standalone loop's pod-group scheduling cycle, behind GenericWorkload
 * (upstream pkg/scheduler/schedule_one_podgroup.go of 1.37:
 * scheduleOnePodGroup, skipPodGroupPodSchedule, validatePodGroup,
 * podGroupCycle, submitPodGroupResult, updatePodGroupCondition).
 *
 * A popped member of a pod group brings the rest of its queued group with
 * it (sx_queue_pop_group); members deleted, bound or assumed meanwhile are
 * dropped. The algorithm (podgroup.h) places the members one after another
 * and undoes every tentative placement. Then, when the group succeeded,
 * each placed member goes through the loop's usual assume, Reserve, Permit
 * and binding cycle (GangScheduling's Permit lets them bind together);
 * otherwise every member is rejected (the FailedScheduling event, the
 * PodScheduled=False condition, nomination cleared, back to the queue): a
 * member that did not fit with its own FitError, one placed with the
 * group's status, one never tried with the algorithm's status
 * (sx_pg_submit). The PodGroup gets the
 * PodGroupInitiallyScheduled condition (True/Scheduled,
 * False/Unschedulable, False/SchedulerError), never turned back from True
 * to False.
 *
 * Metrics (upstream metrics.go, GenericWorkload):
 * scheduler_podgroup_schedule_attempts_total{result,profile} (result
 * scheduled, unschedulable, waiting_on_preemption or error),
 * scheduler_podgroup_scheduling_attempt_duration_seconds{result,profile},
 * scheduler_podgroup_scheduling_algorithm_duration_seconds; with
 * placements scheduler_generated_placements_total{profile} and
 * scheduler_placement_evaluations_total{profile,result} (feasible,
 * infeasible).
 *
 * A group the algorithm finds Unschedulable goes, with
 * WorkloadAwarePreemption, to PodGroupPostFilter (DefaultPreemption's
 * group preemption, podgroup.h) and its status is applied as upstream's
 * applyPodGroupPostFilterResult: an Error replaces the group's status,
 * otherwise its message is appended to the group's reasons; a Success
 * (victims found, their eviction started) makes the group wait on
 * preemption: its members are rejected with their nominations, so they
 * come back to the nodes being freed. Counted in
 * scheduler_workload_preemption_attempts_total{result}.
 *
 * validatePodGroup (sx_pg_validate) first: every member, queued or bound,
 * with the first one's schedulerName, the PodGroup's priority and one
 * preemption policy; otherwise each member fails with the error and the
 * PodGroup's condition is False/SchedulerError.
 *
 * Not here: CompositePodGroups.
 *
 * Threads: the loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podgroup_cycle.h"
#include "sched_metrics.h"
#include "schedext/binder.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/node_info.h"
#include "schedext/podgroup.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

bool sx_pg_wants(const struct sx_queue_item *it)
{
	return it->pod->scheduling_group != SX_STR_EMPTY &&
	       sx_profile_schedules_groups(it->profile);
}

/* PodGroupState.ScheduledPodsCount: members bound or assumed, as the
 * snapshot counts them on their nodes (a walk of the snapshot's pods, no
 * lock: the cache's visit would sort every pod under its lock). */
static int32_t count_scheduled(const struct sx_snapshot *snap, sx_str ns, sx_str group)
{
	int32_t n = 0;

	for (uint32_t i = 0; i < snap->nnodes; i++) {
		const struct sx_node_info *ni = snap->nodes[i];

		for (uint32_t j = 0; j < ni->npods; j++)
			n += ni->pods[j]->scheduling_group == group && ni->pods[j]->meta.ns == ns;
	}
	return n;
}

static const struct sx_pod_group *find_group(const struct sx_snapshot *snap, sx_str ns, sx_str name)
{
	for (uint32_t i = 0; snap && i < snap->npod_groups; i++) {
		const struct sx_pod_group *g = snap->pod_groups[i];

		if (g->meta.ns == ns && strcmp(g->meta.name, sx_str_get(name)) == 0)
			return g;
	}
	return NULL;
}

static void metrics_attempt(const struct sx_pg_loop *l, const struct sx_profile *prof,
			    const char *result, double start, double algo_s)
{
	char labels[512], esc[300];

	if (!l->met || !l->met->pg_attempts)
		return;
	snprintf(labels, sizeof(labels), "result=\"%s\",profile=\"%s\"", result,
		 sx_metrics_label_escape(sx_sched_profile_name(prof), esc, sizeof(esc)));
	sx_metric_inc(l->met->pg_attempts, labels, 1);
	sx_metric_observe(l->met->pg_attempt_duration, labels, sx_now_s() - start);
	if (algo_s >= 0)
		sx_metric_observe(l->met->pg_algorithm_duration, NULL, algo_s);
}

/* One placement metric series: {profile[,result]} += n. */
static void count_placement(struct sx_metric *family, const struct sx_profile *prof,
			    const char *result, uint32_t n)
{
	char labels[512], esc[300];

	if (!family)
		return;
	snprintf(labels, sizeof(labels), "profile=\"%s\"%s%s%s",
		 sx_metrics_label_escape(sx_sched_profile_name(prof), esc, sizeof(esc)),
		 result ? ",result=\"" : "", result ? result : "", result ? "\"" : "");
	sx_metric_inc(family, labels, n);
}

/* RecordGeneratedPlacements (ctx: the loop). */
static void placements_generated(void *ctx, const struct sx_profile *prof, uint32_t n)
{
	const struct sx_pg_loop *l = ctx;

	if (l->met)
		count_placement(l->met->pg_generated_placements, prof, NULL, n);
}

/* ObservePlacementEvaluation's counter (ctx: the loop). */
static void placement_evaluated(void *ctx, const struct sx_profile *prof, bool feasible)
{
	const struct sx_pg_loop *l = ctx;

	if (l->met)
		count_placement(l->met->pg_placement_evaluations, prof,
				feasible ? "feasible" : "infeasible", 1);
}

/* updatePodGroupCondition: a True condition is never turned back to False
 * (a True one is rewritten, as any other). */
static void write_condition(const struct sx_pg_loop *l, const struct sx_pod_group *pg, bool ok,
			    const char *reason, const char *msg)
{
	struct sx_error err = {0};

	if (!pg || (!ok && pg->initially_scheduled == 1))
		return;
	if (l->condition) {
		l->condition(l->s, pg, ok, reason, msg);
		return;
	}
	if (!l->kube || !l->leading(l->s))
		return;
	if (sx_kube_patch_pod_group_status(l->kube, sx_str_get(pg->meta.ns), pg->meta.name,
					   "PodGroupInitiallyScheduled", ok ? "True" : "False",
					   reason, msg, pg->generation, &err) < 0)
		sx_log(1, "updating PodGroup %s/%s status: %s", sx_str_get(pg->meta.ns),
		       pg->meta.name, err.msg);
}

/* A member's failure with a status: rejected ones keep their rejectors
 * (any event when the status names none), errors back off. */
static void fail_with(const struct sx_pg_loop *l, const struct sx_queue_item *it,
		      const struct sx_pod *pod, const struct sx_status *st, const char *msg,
		      double start, struct sx_rejectors *rej)
{
	bool rejected = sx_status_is_rejected(st);
	char buf[2048];

	if (rejected && rej->unschedulable == 0 && rej->pending == 0)
		rej->unschedulable = SX_REJ_ANY;
	if (!msg)
		msg = sx_status_message(st, buf, sizeof(buf));
	l->fail(l->s, it->profile, pod, msg, rejected, true, start, rej);
}

/* Every member fails with one error before any scheduling
 * (handlePodGroupFailureBeforeScheduling). */
static void fail_all(const struct sx_pg_loop *l, struct sx_queue_item *items,
		     struct sx_pg_member *m, uint32_t n, const char *msg, double start)
{
	for (uint32_t i = 0; i < n; i++)
		l->fail(l->s, items[i].profile, m[i].pod, msg, false, true, start, NULL);
}

/* The node group preemption nominated pod to, or SX_STR_EMPTY. */
static sx_str nominated_for(const struct sx_pg_preempt_result *pf, const struct sx_pod *pod)
{
	for (uint32_t i = 0; pf && i < pf->nnominated; i++)
		if (pf->nominated[i] == pod)
			return pf->nominated_nodes[i];
	return SX_STR_EMPTY;
}

/* A rejected member: with its nomination when group preemption gave one. */
static void fail_member(const struct sx_pg_loop *l, const struct sx_queue_item *it,
			const struct sx_pod *pod, const struct sx_status *st, const char *msg,
			double start, struct sx_rejectors *rej,
			const struct sx_pg_preempt_result *pf)
{
	sx_str nom = nominated_for(pf, pod);
	char buf[2048];

	if (nom == SX_STR_EMPTY || !l->fail_nominated) {
		fail_with(l, it, pod, st, msg, start, rej);
		return;
	}
	if (rej->unschedulable == 0 && rej->pending == 0)
		rej->unschedulable = SX_REJ_ANY;
	l->fail_nominated(l->s, it->profile, pod,
			  msg ? msg : sx_status_message(st, buf, sizeof(buf)), nom, start, rej);
}

/* One member of a group that did not succeed (submitPodGroupAlgorithmResult). */
static void fail_one(const struct sx_pg_loop *l, struct sx_queue_item *it, struct sx_pg_member *m,
		     const struct sx_pg_outcome *o, const char *gmsg, double start,
		     struct sx_rejectors rej)
{
	const struct sx_pg_preempt_result *pf = o->waiting ? o->pf : NULL;
	char amsg[2048];

	if (sx_status_code(o->group) == SX_ERROR) {
		/* The member's own error, else the group's. */
		if (m->evaluated && sx_status_code(m->status) == SX_ERROR)
			fail_with(l, it, m->pod, m->status, NULL, start, &rej);
		else
			fail_with(l, it, m->pod, o->group, gmsg, start, &rej);
	} else if (m->scheduled) {
		/* The group's status; waiting on preemption, with the
		 * nomination its preemption gave (back to the nodes freed). */
		fail_member(l, it, m->pod, o->group, gmsg, start, &rej, pf);
	} else if (!m->evaluated) {
		/* completePodGroupAlgorithmResult: the algorithm's status, as it
		 * was before PodGroupPostFilter. */
		sx_status_message(o->algorithm, amsg, sizeof(amsg));
		fail_member(l, it, m->pod, o->algorithm, amsg, start, &rej, pf);
	} else {
		/* It did not fit: its own FitError (no PostFilter ran). */
		rej = (struct sx_rejectors){0, 0};
		if (m->res.error)
			sx_rejectors_add_status(&rej, m->res.error);
		else
			sx_rejectors_from_result(&rej, &m->res);
		fail_member(l, it, m->pod, m->status, NULL, start, &rej, pf);
	}
}

void sx_pg_submit(const struct sx_pg_loop *l, struct sx_queue_item *items, struct sx_pg_member *m,
		  uint32_t n, const struct sx_pod_group *pg, const struct sx_pg_outcome *o,
		  double start, double algo_s)
{
	char gmsg[2048];
	struct sx_rejectors grej = {0, 0};
	const struct sx_profile *prof = n ? items[0].profile : NULL;
	const char *ns = pg ? sx_str_get(pg->meta.ns) : "", *name = pg ? pg->meta.name : "";

	sx_status_message(o->group, gmsg, sizeof(gmsg));
	sx_rejectors_add_status(&grej, o->group);
	for (uint32_t i = 0; i < n; i++) {
		if (m[i].scheduled && sx_status_is_success(o->group))
			l->bind(l->s, items[i].profile, m[i].pod, m[i].snap, &m[i].res, start,
				items[i].attempts, items[i].initial_attempt);
		else
			fail_one(l, &items[i], &m[i], o, gmsg, start, grej);
	}
	if (sx_status_is_success(o->group)) {
		sx_log(2, "Successfully scheduled a pod group %s/%s", ns, name);
		write_condition(l, pg, true, "Scheduled", gmsg);
		metrics_attempt(l, prof, "scheduled", start, algo_s);
	} else if (sx_status_is_rejected(o->group)) {
		sx_log(2, "%s %s/%s: %s",
		       o->waiting ? "Pod group is waiting for preemption"
				  : "Unable to schedule a pod group",
		       ns, name, gmsg);
		write_condition(l, pg, false, "Unschedulable", gmsg);
		metrics_attempt(l, prof, o->waiting ? "waiting_on_preemption" : "unschedulable",
				start, algo_s);
	} else {
		sx_log(1, "Error scheduling pod group %s/%s: %s", ns, name, gmsg);
		write_condition(l, pg, false, "SchedulerError", gmsg);
		metrics_attempt(l, prof, "error", start, algo_s);
	}
}

/* runWorkloadAwarePreemption: PodGroupPostFilter for a rejected group;
 * its status (NULL: victims found, *pf filled with the nominations). */
static struct sx_status *post_filter(const struct sx_pg_loop *l, const struct sx_profile *prof,
				     const struct sx_pod_group *pg, const struct sx_snapshot *snap,
				     struct sx_pg_member *m, uint32_t n, int32_t scheduled_before,
				     struct sx_pg_preempt_result *pf)
{
	const struct sx_pod **pods = calloc(n ? n : 1, sizeof(*pods));
	char labels[160], msg[1024];
	struct sx_status *st;

	memset(pf, 0, sizeof(*pf));
	if (!pods)
		return sx_status_new(SX_ERROR, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		pods[i] = m[i].pod;
	struct sx_pg_preempt_input in = {
		.prof = prof,
		.pg = pg,
		.pods = pods,
		.npods = n,
		.snap = snap,
		.nominator = l->nominator ? l->nominator(l->s) : NULL,
		.scheduled_before = scheduled_before,
		.schedule = l->schedule,
		.ctx = l->s,
	};
	st = sx_run_pod_group_post_filter(&in, pf);
	if (l->met && l->met->wl_preemption_attempts) {
		snprintf(labels, sizeof(labels), "result=\"%s\"", sx_code_name(sx_status_code(st)));
		sx_metric_inc(l->met->wl_preemption_attempts, labels, 1);
	}
	if (st) {
		sx_log(2, "Pod group %s/%s: %s", sx_str_get(pg->meta.ns), pg->meta.name,
		       sx_status_message(st, msg, sizeof(msg)));
		sx_pg_preempt_result_free(pf);
	} else {
		sx_log(2, "Pod group %s/%s: preemption started, %u victims, %u members nominated",
		       sx_str_get(pg->meta.ns), pg->meta.name, pf->nvictims, pf->nnominated);
	}
	free(pods);
	return st;
}

/* applyPodGroupPostFilterResult: the group's status after
 * PodGroupPostFilter ran on group (st taken): an Error replaces it;
 * otherwise st's message, when it has one, is appended as one more
 * reason; a Success means waitingOnPreemption. */
static struct sx_status *apply_post_filter(const struct sx_status *group, struct sx_status *st,
					   bool *waiting)
{
	struct sx_status *out;
	char msg[1024];

	*waiting = sx_status_is_success(st);
	if (sx_status_code(st) == SX_ERROR)
		return st;
	out = sx_status_clone(group);
	if (out && *sx_status_message(st, msg, sizeof(msg)))
		sx_status_add_reason(out, "%s", msg);
	sx_status_free(st);
	return out ? out : sx_status_new(SX_ERROR, "out of memory");
}

/* ---------- validatePodGroup ---------- */

/* A Go %q of s into buf (quotes, backslash and double quote escaped:
 * object and scheduler names hold nothing else that %q would escape). */
static const char *quoted(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (len < 3)
		return "";
	buf[o++] = '"';
	for (; *s && o + 3 < len; s++) {
		if (*s == '"' || *s == '\\')
			buf[o++] = '\\';
		buf[o++] = *s;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

static const char *policy_name(bool never)
{
	return never ? "Never" : "PreemptLowerPriority";
}

/* What every pod of the group is checked against: the first queued pod's
 * schedulerName (and its preemption policy without
 * PodGroupPreemptionPolicy), the root group's priority and (with the
 * gate) its preemption policy. */
struct group_rules {
	const struct sx_pod *first;
	const struct sx_pod_group *pg;
	int32_t priority;
	bool never;
	bool pg_policy; /* PodGroupPreemptionPolicy */
};

/* validatePod: NULL when pod conforms, else the error into msg. */
static const char *check_pod(const struct group_rules *r, const struct sx_pod *pod, char *msg,
			     size_t len)
{
	char a[300], b[300], c[300], d[600], key[600];

	/* The root group as the message names it: rootInfo.GetKey(), an
	 * EntityKey, printed "<type>/<namespace>/<name>" (as upstream's
	 * algorithm_podgroup_test.go records keys: "podgroup//pg"). */
	snprintf(key, sizeof(key), "podgroup/%s/%s", sx_str_get(r->pg->meta.ns), r->pg->meta.name);
	if (pod->scheduler_name != r->first->scheduler_name) {
		snprintf(msg, len,
			 "all pods in a pod group hierarchy should have the same "
			 ".spec.schedulerName set, got: %s (%s) and %s (%s)",
			 quoted(sx_str_get(pod->scheduler_name), a, sizeof(a)),
			 quoted(pod->meta.name, b, sizeof(b)),
			 quoted(sx_str_get(r->first->scheduler_name), c, sizeof(c)),
			 quoted(r->first->meta.name, d, sizeof(d)));
		return msg;
	}
	if (pod->priority != r->priority) {
		snprintf(msg, len,
			 "all pods in a pod group hierarchy should have the same priority as the "
			 "root pod group's priority, got %d (%s) and %d (%s)",
			 (int)pod->priority, quoted(pod->meta.name, a, sizeof(a)), (int)r->priority,
			 quoted(key, d, sizeof(d)));
		return msg;
	}
	if (pod->preempt_never == r->never)
		return NULL;
	if (r->pg_policy)
		snprintf(msg, len,
			 "all pods in a pod group hierarchy should have the same preemption policy "
			 "as the root pod group's preemption policy, got %s (%s) and %s (%s)",
			 policy_name(pod->preempt_never), quoted(pod->meta.name, a, sizeof(a)),
			 policy_name(r->never), quoted(key, d, sizeof(d)));
	else
		snprintf(msg, len,
			 "all pods in a pod group hierarchy should have the same preemption "
			 "policy, got %s (%s) and %s (%s)",
			 policy_name(pod->preempt_never), quoted(pod->meta.name, a, sizeof(a)),
			 policy_name(r->never), quoted(r->first->meta.name, d, sizeof(d)));
	return msg;
}

bool sx_pg_validate(const struct sx_pg_member *m, uint32_t n, const struct sx_pod_group *pg,
		    const struct sx_snapshot *snap, const struct sx_features *f, char *msg,
		    size_t len)
{
	struct group_rules r = {.first = n ? m[0].pod : NULL, .pg = pg};
	sx_str group;

	if (!n || !pg)
		return true;
	group = sx_intern(pg->meta.name);
	r.priority = sx_pod_group_priority(pg);
	r.pg_policy = sx_feature_enabled(f, SX_FEATURE_POD_GROUP_PREEMPTION_POLICY);
	r.never = r.pg_policy ? pg->spec.has_preemption_policy && pg->spec.preempt_never
			      : r.first->preempt_never;
	for (uint32_t i = 0; i < n; i++)
		if (check_pod(&r, m[i].pod, msg, len))
			return false;
	/* Then the group's members bound or assumed (PodGroupState.ScheduledPods). */
	for (uint32_t i = 0; snap && i < snap->nnodes; i++) {
		const struct sx_node_info *ni = snap->nodes[i];

		for (uint32_t j = 0; j < ni->npods; j++) {
			const struct sx_pod *p = ni->pods[j];

			if (p->scheduling_group == group && p->meta.ns == pg->meta.ns &&
			    check_pod(&r, p, msg, len))
				return false;
		}
	}
	return true;
}

void sx_pg_schedule(const struct sx_pg_loop *l, struct sx_queue_item *it)
{
	double start = sx_now_s(), t0;
	struct sx_queue_item *all = NULL, *items = NULL;
	struct sx_pg_member *m = NULL;
	struct sx_snapshot *gsnap = NULL;
	struct sx_status *group = NULL;
	struct sx_pg_preempt_result pf = {0};
	struct sx_pg_outcome o = {0};
	struct sx_status *after_pf = NULL;
	const struct sx_pod_group *pg;
	uint32_t nall = 0, n = 0;
	char msg[1024];

	if (sx_queue_pop_group(l->q, it, &all, &nall) < 0) {
		l->fail(l->s, it->profile, it->pod, "out of memory", false, false, start, NULL);
		goto out;
	}
	if (!(items = calloc(nall, sizeof(*items))) || !(m = calloc(nall, sizeof(*m)))) {
		for (uint32_t i = 0; i < nall; i++)
			l->fail(l->s, all[i].profile, all[i].pod, "out of memory", false, false,
				start, NULL);
		goto out;
	}
	/* skipPodGroupPodSchedule: deleted, bound or assumed meanwhile. */
	for (uint32_t i = 0; i < nall; i++) {
		sx_str node = SX_STR_EMPTY;
		bool assumed = false;
		const struct sx_pod *cur = sx_cache_get_pod(l->cache, all[i].pod->meta.ns,
							    all[i].pod->meta.name, &node, &assumed);

		if (!cur || assumed || node != SX_STR_EMPTY || cur->deleting ||
		    all[i].pod->deleting) {
			sx_pod_unref(cur);
			sx_queue_done(l->q, all[i].pod);
			continue;
		}
		items[n] = all[i];
		m[n++].pod = cur;
	}
	if (n == 0)
		goto out;
	gsnap = sx_cache_snapshot(l->cache);
	pg = find_group(gsnap, it->pod->meta.ns, it->pod->scheduling_group);
	if (!pg) {
		snprintf(msg, sizeof(msg), "podgroup.scheduling.k8s.io \"%s\" not found",
			 sx_str_get(it->pod->scheduling_group));
		fail_all(l, items, m, n, gsnap ? msg : "out of memory", start);
		goto out;
	}
	/* handlePodGroupFailureBeforeScheduling: every member fails with the
	 * error, the PodGroup's condition says it. */
	if (!sx_pg_validate(m, n, pg, gsnap, &items[0].profile->features, msg, sizeof(msg))) {
		fail_all(l, items, m, n, msg, start);
		write_condition(l, pg, false, "SchedulerError", msg);
		goto out;
	}
	struct sx_pg_algorithm a = {
		.prof = items[0].profile,
		.pg = pg,
		.cache = l->cache,
		.binder = l->binder,
		.scheduled_before =
			count_scheduled(gsnap, it->pod->meta.ns, it->pod->scheduling_group),
		.schedule = l->schedule,
		.ctx = l->s,
		.rng = l->rng,
		.placements_generated = placements_generated,
		.placement_evaluated = placement_evaluated,
		.observe_ctx = (void *)l,
	};
	sx_log(3, "Attempting to schedule pod group %s/%s (%u pods)", sx_str_get(pg->meta.ns),
	       pg->meta.name, n);
	t0 = sx_now_s();
	group = sx_pod_group_placement_algorithm(&a, m, n);
	t0 = sx_now_s() - t0;
	o = (struct sx_pg_outcome){.group = group, .algorithm = group, .pf = &pf};
	/* runWorkloadAwarePreemption, with its gate only. */
	if (sx_status_code(group) == SX_UNSCHEDULABLE &&
	    sx_feature_enabled(&items[0].profile->features, SX_FEATURE_WORKLOAD_AWARE_PREEMPTION))
		o.group = after_pf = apply_post_filter(
			group,
			post_filter(l, items[0].profile, pg, gsnap, m, n, a.scheduled_before, &pf),
			&o.waiting);
	sx_pg_submit(l, items, m, n, pg, &o, start, t0);
out:
	sx_pg_preempt_result_free(&pf);
	sx_status_free(after_pf);
	sx_status_free(group);
	if (m) {
		sx_pg_members_free(m, n);
		for (uint32_t i = 0; i < n; i++)
			sx_pod_unref(m[i].pod);
	}
	for (uint32_t i = 0; i < nall; i++)
		sx_pod_unref(all[i].pod);
	sx_snapshot_unref(gsnap);
	free(items);
	free(m);
	free(all);
}
