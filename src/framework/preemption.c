/* The preemption engine (upstream framework/preemption/preemption.go
 * Evaluator): eligibility, victim
 * selection on one node with PDB-aware reprieve, the dry run over the
 * candidate nodes, and upstream's pickOneNodeForPreemption. Everything runs
 * on clones; nothing here evicts. Victims are preemption units
 * (victim_units.h): with GenericWorkload a PodGroup with disruptionMode All
 * is one unit spanning its nodes (plugins/defaultpreemption
 * default_preemption.go SelectVictimsOnNode, isPreemptionAllowedAcrossAll
 * VictimNodes; framework/preemption/types.go DomainVictim). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/extender_client.h"
#include "schedext/framework_metrics.h"
#include "schedext/preemption.h"
#include "schedext/plugin_args.h"
#include "schedext/selector.h"
#include "schedext/fit_error.h"
#include "schedext/features.h"
#include "schedext/snapshot.h"
#include "victim_units.h"

#define NO_VICTIMS    "No preemption victims found for incoming pod"
#define NOT_HELPFUL   "Preemption is not helpful for scheduling"
#define MAX_NOMINATED 256

/* ---------- victims ---------- */

void sx_victims_free(struct sx_victims *v)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < v->n; i++)
		sx_pod_unref(v->pods[i]);
	free(v->pods);
	memset(v, 0, sizeof(*v));
}

/* GetPodStartTime: an unset start time is "now", later than any recorded. */
static int64_t start_of(const struct sx_pod *p)
{
	return p->start_time ? p->start_time : INT64_MAX;
}

bool sx_pod_more_important(const struct sx_pod *a, const struct sx_pod *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return start_of(a) < start_of(b);
}

static bool same_pod(const struct sx_pod *a, const struct sx_pod *b)
{
	return a->meta.ns == b->meta.ns && strcmp(a->meta.name, b->meta.name) == 0;
}

/* filterPodsWithPDBViolation: walks pods (sorted) decrementing a copy of
 * every matching budget's disruptionsAllowed; a pod that drives one below
 * zero is violating. A PDB with a null or empty selector matches nothing;
 * a pod without labels matches no PDB. (status.disruptedPods is not
 * modelled: every matching pod is counted.) */
static int mark_violations(const struct sx_snapshot *snap, const struct sx_pod **pods, uint32_t n,
			   bool *violating)
{
	int32_t *allowed = sx_calloc(snap->npdbs + 1, sizeof(*allowed));
	if (!allowed)
		return SX_ENOMEM;
	for (uint32_t j = 0; j < snap->npdbs; j++)
		allowed[j] = snap->pdbs[j]->disruptions_allowed;
	for (uint32_t i = 0; i < n; i++) {
		violating[i] = false;
		if (pods[i]->meta.labels.n == 0)
			continue;
		for (uint32_t j = 0; j < snap->npdbs; j++) {
			const struct sx_generic *pdb = snap->pdbs[j];
			if (pdb->meta.ns != pods[i]->meta.ns || !pdb->selector ||
			    pdb->selector->nreqs == 0 ||
			    !sx_selector_matches(pdb->selector, &pods[i]->meta.labels))
				continue;
			if (--allowed[j] < 0)
				violating[i] = true;
		}
	}
	free(allowed);
	return 0;
}

int sx_preempt_mark_pdb_violations(const struct sx_snapshot *snap, const struct sx_pod *const *pods,
				   uint32_t n, bool *violating)
{
	return mark_violations(snap, (const struct sx_pod **)pods, n, violating);
}

/* ---------- SelectVictimsOnNode ---------- */

/* The dry run on one node (the main node): its NodeInfo is a private
 * clone; the other nodes a group victim's pods run on (its affected nodes)
 * are read from the snapshot and never changed, only their pods go
 * through the PreFilter extensions (SelectVictimsOnNode's contract). */
struct dry_node {
	const struct sx_profile *prof;
	struct sx_cycle_state *cs; /* private clone */
	struct sx_node_info *ni;   /* private clone of the main node */
	const struct sx_snapshot *snap;
	const struct sx_pod *pod;
	const struct sx_nominator *nom;
};

static const struct sx_node_info *remote_node(const struct dry_node *d, sx_str node)
{
	int at = d->snap ? sx_snapshot_find(d->snap, node) : -1;

	return at >= 0 ? d->snap->nodes[at] : NULL;
}

static struct sx_status *remove_victim(struct dry_node *d, const struct sx_pod *v, sx_str node)
{
	const struct sx_node_info *remote;
	int rc;

	if (node != d->ni->name) {
		remote = remote_node(d, node);
		return remote ? sx_run_remove_pod(d->prof, d->cs, d->pod, v, remote) : NULL;
	}
	rc = sx_node_info_remove_pod(d->ni, v);
	if (rc == SX_ENOENT)
		return NULL; /* not counted there: nothing to undo */
	if (rc < 0)
		return sx_status_oom(); /* still counted: the dry run would lie */
	return sx_run_remove_pod(d->prof, d->cs, d->pod, v, d->ni);
}

static struct sx_status *add_victim(struct dry_node *d, const struct sx_pod *v, sx_str node)
{
	const struct sx_node_info *remote;

	if (node != d->ni->name) {
		remote = remote_node(d, node);
		return remote ? sx_run_add_pod(d->prof, d->cs, d->pod, v, remote) : NULL;
	}
	if (sx_node_info_add_pod(d->ni, v) < 0)
		return sx_status_oom();
	return sx_run_add_pod(d->prof, d->cs, d->pod, v, d->ni);
}

/* Every pod of a unit, where it runs. */
static struct sx_status *remove_unit(struct dry_node *d, const struct sx_victim_unit *u)
{
	struct sx_status *st = NULL;

	for (uint32_t i = 0; i < u->n && !st; i++)
		st = remove_victim(d, u->pods[i], u->nodes[i]);
	return st;
}

static struct sx_status *add_unit(struct dry_node *d, const struct sx_victim_unit *u)
{
	struct sx_status *st = NULL;

	for (uint32_t i = 0; i < u->n && !st; i++)
		st = add_victim(d, u->pods[i], u->nodes[i]);
	return st;
}

/* The caller's proposal restricted to pods on the node, as the node's own
 * pod pointers. */
static uint32_t collect_given(const struct sx_node_info *ni, const struct sx_pod *const *given,
			      uint32_t ngiven, const struct sx_pod **out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ni->npods; i++)
		for (uint32_t j = 0; j < ngiven; j++)
			if (given[j] && same_pod(given[j], ni->pods[i])) {
				out[n++] = ni->pods[i];
				break;
			}
	return n;
}

/* Victims as pod groups (upstream DefaultPreemption's pgLister, set with
 * GenericWorkload): 1.37's DomainVictims; 1.35 and 1.36 judged every pod
 * by its own priority. */
static bool victim_groups(const struct sx_profile *prof)
{
	return sx_feature_enabled(&prof->features, SX_FEATURE_GENERIC_WORKLOAD) &&
	       sx_release(&prof->features) >= 37;
}

/* The node's preemption units (getCrossNodesVictims over the node; with
 * pod groups on - GenericWorkload, upstream's pgLister - a pod of a
 * PodGroup with disruptionMode All brings its whole group from every node),
 * or one unit per pod of the caller's proposal. */
static int node_units(const struct dry_node *d, const struct sx_node_info *ni,
		      const struct sx_pod *const *given, uint32_t ngiven,
		      struct sx_victim_unit **units, uint32_t *nunits)
{
	const struct sx_pod **pods;
	uint32_t n, at;
	int idx = d->snap ? sx_snapshot_find(d->snap, ni->name) : -1;
	int rc;

	if (!given && idx >= 0 && d->snap->nodes[idx] == ni) {
		at = (uint32_t)idx;
		return sx_victim_units_collect(d->snap, &at, 1, victim_groups(d->prof), units,
					       nunits);
	}
	pods = sx_calloc(ni->npods + 1, sizeof(*pods));
	if (!pods)
		return SX_ENOMEM;
	if (given) {
		n = collect_given(ni, given, ngiven, pods);
	} else {
		for (n = 0; n < ni->npods; n++)
			pods[n] = ni->pods[n];
	}
	rc = sx_victim_units_of_pods(pods, n, ni->name, units, nunits);
	free(pods);
	return rc;
}

/* Adds a unit back; keeps it when the pod still fits, else removes it
 * again and appends it to the victims. *kept tells which. */
static struct sx_status *reprieve(struct dry_node *d, struct sx_victim_unit *u,
				  struct sx_victim_unit **victims, uint32_t *nvictims, bool *kept)
{
	struct sx_status *st = add_unit(d, u);

	if (st)
		return st;
	st = sx_run_filters_with_nominated(d->prof, d->cs, d->pod, d->ni, d->nom);
	if (sx_status_code(st) == SX_ERROR)
		return st; /* not a verdict on the pod (out of memory) */
	*kept = sx_status_is_success(st);
	sx_status_free(st);
	if (*kept)
		return NULL;
	st = remove_unit(d, u);
	if (!st)
		victims[(*nvictims)++] = u;
	return st;
}

/* The victims' pods, unit after unit, as references. */
static int flatten(struct sx_victim_unit **victims, uint32_t n, struct sx_victims *out)
{
	uint32_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += victims[i]->n;
	out->pods = sx_calloc(total + 1, sizeof(*out->pods));
	if (!out->pods)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < victims[i]->n; j++)
			out->pods[out->n++] = sx_pod_ref(victims[i]->pods[j]);
	return 0;
}

/* Once the pod fits without the units: sort them, split by PDB, reprieve
 * violating then non-violating units, most important first. */
static struct sx_status *reprieve_all(struct dry_node *d, struct sx_victim_unit **pot, uint32_t n,
				      struct sx_victims *out)
{
	struct sx_victim_unit **victims = sx_calloc(n + 1, sizeof(*victims));
	struct sx_status *st = NULL;
	uint32_t nviolating = 0, nvictims = 0;
	bool kept = false;

	if (!victims)
		return sx_status_oom();
	sx_victim_units_sort(pot, n);
	if (sx_victim_units_mark_pdbs(d->snap, pot, n) < 0) {
		free(victims);
		return sx_status_oom();
	}
	for (uint32_t i = 0; i < n; i++)
		nviolating += pot[i]->violations > 0;
	for (int pass = 1; pass >= 0 && !st; pass--) {
		for (uint32_t i = 0; i < n && !st; i++) {
			if ((pot[i]->violations > 0) != (pass == 1))
				continue;
			st = reprieve(d, pot[i], victims, &nvictims, &kept);
			if (!st && !kept && pass == 1)
				out->num_pdb_violations += pot[i]->violations;
		}
	}
	if (!st && nviolating && nviolating < n)
		sx_victim_units_sort(victims, nvictims);
	if (!st && flatten(victims, nvictims, out) < 0)
		st = sx_status_oom();
	free(victims);
	return st;
}

/* isPreemptionAllowedAcrossAllVictimNodes: lower priority than the pod
 * (IsEligiblePod, by default true, on each affected node). */
static uint32_t eligible_units(const struct sx_pod *pod, struct sx_victim_unit *units, uint32_t n,
			       bool given, struct sx_victim_unit **pot)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (given || units[i].priority < pod->priority)
			pot[k++] = &units[i];
	return k;
}

struct sx_status *
sx_preempt_select_victims_on_node(const struct sx_profile *prof, const struct sx_cycle_state *cs,
				  const struct sx_pod *pod, const struct sx_node_info *ni,
				  const struct sx_snapshot *snap,
				  const struct sx_pod *const *potential_victims, uint32_t n,
				  const struct sx_nominator *nom, struct sx_victims *out)
{
	struct dry_node d = {.prof = prof, .snap = snap, .pod = pod, .nom = nom};
	struct sx_victim_unit *units = NULL, **pot = NULL;
	struct sx_status *st = NULL;
	uint32_t nunits = 0, npot = 0;

	memset(out, 0, sizeof(*out));
	if (node_units(&d, ni, potential_victims, n, &units, &nunits) < 0 ||
	    !(pot = sx_calloc(nunits + 1, sizeof(*pot)))) {
		sx_victim_units_free(units, nunits);
		return sx_status_oom();
	}
	npot = eligible_units(pod, units, nunits, potential_victims != NULL, pot);
	d.ni = sx_node_info_clone(ni);
	d.cs = sx_cycle_state_clone(prof, cs);
	if (!d.ni || !d.cs)
		st = sx_status_oom();
	for (uint32_t i = 0; i < npot && !st; i++)
		st = remove_unit(&d, pot[i]);
	if (!st && npot == 0)
		st = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS);
	if (!st)
		st = sx_run_filters_with_nominated(prof, d.cs, pod, d.ni, nom);
	if (!st)
		st = reprieve_all(&d, pot, npot, out);
	if (st)
		sx_victims_free(out);
	sx_cycle_state_free(prof, d.cs);
	sx_node_info_unref(d.ni);
	free(pot);
	sx_victim_units_free(units, nunits);
	sx_fw_metrics_flush(); /* the Filter calls timed above */
	return st;
}

/* ---------- args ---------- */

static const struct sx_arg preempt_args[] = {
	{.name = "minCandidateNodesPercentage",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct sx_preempt_args, min_candidate_nodes_percentage),
	 .def = 10,
	 .min = 0,
	 .max = 100,
	 .type_desc = "a 32-bit integer",
	 .range_desc = "[0, 100]"},
	{.name = "minCandidateNodesAbsolute",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct sx_preempt_args, min_candidate_nodes_absolute),
	 .def = 100,
	 .min = 0,
	 .max = INT32_MAX,
	 .type_desc = "a 32-bit integer",
	 .range_desc = "[0, inf)"},
};

int sx_preempt_args_parse(const cJSON *json, struct sx_preempt_args *out, struct sx_error *err)
{
	struct sx_arg_errors e = {0};
	int rc;

	*out = SX_PREEMPT_ARGS_DEFAULT;
	if (json && !cJSON_IsNull(json) && !cJSON_IsObject(json))
		return sx_error_set(err, SX_EINVAL, "expected an object");
	rc = sx_args_read(json, preempt_args, SX_ARRAY_SIZE(preempt_args), out, &e, err);
	if (rc)
		return rc;
	if (out->min_candidate_nodes_percentage == 0 && out->min_candidate_nodes_absolute == 0) {
		sx_arg_errors_add(&e, "minCandidateNodesPercentage",
				  "Invalid value: 0: cannot be zero at the same time as "
				  "minCandidateNodesAbsolute");
		sx_arg_errors_add(&e, "minCandidateNodesAbsolute",
				  "Invalid value: 0: cannot be zero at the same time as "
				  "minCandidateNodesPercentage");
	}
	return sx_arg_errors_finish(&e, err);
}

uint32_t sx_preempt_num_candidates(const struct sx_preempt_args *args, uint32_t n)
{
	const struct sx_preempt_args def = SX_PREEMPT_ARGS_DEFAULT;
	if (!args)
		args = &def;
	int64_t k = (int64_t)n * args->min_candidate_nodes_percentage / 100;
	if (k < args->min_candidate_nodes_absolute)
		k = args->min_candidate_nodes_absolute;
	if (k > n)
		k = n;
	return (uint32_t)k;
}

/* ---------- eligibility ---------- */

bool sx_preempt_pod_eligible(const struct sx_pod *pod, const struct sx_snapshot *snap,
			     enum sx_code nominated_code, bool groups, const char **reason)
{
	*reason = NULL;
	if (pod->preempt_never) {
		*reason = "not eligible due to preemptionPolicy=Never.";
		return false;
	}
	if (pod->nominated_node == SX_STR_EMPTY ||
	    nominated_code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE)
		return true;
	int at = sx_snapshot_find(snap, pod->nominated_node);
	if (at < 0)
		return true;
	const struct sx_node_info *ni = snap->nodes[at];
	for (uint32_t i = 0; i < ni->npods; i++) {
		const struct sx_pod *p = ni->pods[i];

		/* isPreemptionAllowed on NewPodVictim (its PodGroup's priority
		 * with pod groups on) and podTerminatingByPreemption: being
		 * deleted for a preemption */
		int32_t prio = groups ? sx_victim_pod_priority(snap, p) : p->priority;

		if (prio < pod->priority && p->deleting && p->preemption_target) {
			*reason = "not eligible due to a terminating pod on the nominated node.";
			return false;
		}
	}
	return true;
}

/* ---------- dry run ---------- */

void sx_preempt_candidates_free(struct sx_preempt_candidate *c, uint32_t n)
{
	for (uint32_t i = 0; c && i < n; i++)
		sx_victims_free(&c[i].victims);
	free(c);
}

/* upstream candidateList: fixed capacity, adds beyond it are dropped. */
struct cand_list {
	struct sx_preempt_candidate *items;
	uint32_t n, cap;
};

static void cand_add(struct cand_list *l, sx_str node, struct sx_victims *v)
{
	if (l->n >= l->cap) {
		sx_victims_free(v);
		return;
	}
	l->items[l->n++] = (struct sx_preempt_candidate){node, *v};
}

static void record_failure(struct sx_status *st, uint32_t at, struct sx_status **node_status,
			   struct sx_status **first_error)
{
	if (st->code == SX_ERROR && first_error && !*first_error)
		*first_error = sx_status_clone(st);
	sx_status_free(node_status[at]);
	node_status[at] = st;
}

static int merge_lists(struct cand_list *good, struct cand_list *bad,
		       struct sx_preempt_candidate **cands, uint32_t *ncands)
{
	*cands = sx_calloc(good->n + bad->n + 1, sizeof(**cands));
	if (!*cands)
		return SX_ENOMEM;
	memcpy(*cands, good->items, sizeof(**cands) * good->n);
	memcpy(*cands + good->n, bad->items, sizeof(**cands) * bad->n);
	*ncands = good->n + bad->n;
	good->n = bad->n = 0;
	return 0;
}

int sx_preempt_dry_run(const struct sx_profile *prof, const struct sx_cycle_state *cs,
		       const struct sx_pod *pod, const struct sx_snapshot *snap,
		       const uint32_t *potential, uint32_t npotential, uint32_t offset,
		       uint32_t num_candidates, const struct sx_nominator *nom,
		       struct sx_preempt_candidate **cands, uint32_t *ncands,
		       struct sx_status **node_status, struct sx_status **first_error)
{
	struct cand_list good = {sx_calloc(num_candidates + 1, sizeof(*good.items)), 0,
				 num_candidates};
	struct cand_list bad = {sx_calloc(num_candidates + 1, sizeof(*bad.items)), 0,
				num_candidates};
	int rc = good.items && bad.items ? 0 : SX_ENOMEM;
	*cands = NULL;
	*ncands = 0;
	for (uint32_t i = 0; i < npotential && !rc; i++) {
		uint32_t at = potential[(offset + i) % npotential];
		const struct sx_node_info *ni = snap->nodes[at];
		struct sx_victims v;
		struct sx_status *st = sx_preempt_select_victims_on_node(prof, cs, pod, ni, snap,
									 NULL, 0, nom, &v);
		if (!st && v.n == 0)
			st = sx_status_new(SX_ERROR,
					   "expected at least one victim pod on node \"%s\"",
					   sx_str_get(ni->name));
		if (st) {
			record_failure(st, at, node_status, first_error);
			continue;
		}
		cand_add(v.num_pdb_violations ? &bad : &good, ni->name, &v);
		if (good.n > 0 && good.n + bad.n >= num_candidates)
			break;
	}
	if (!rc)
		rc = merge_lists(&good, &bad, cands, ncands);
	sx_preempt_candidates_free(good.items, good.n);
	sx_preempt_candidates_free(bad.items, bad.n);
	return rc;
}

/* ---------- pickOneNodeForPreemption ---------- */

/* Earliest start time among the highest-priority victims. */
static int64_t earliest_top_start(const struct sx_victims *v)
{
	int32_t top = v->pods[0]->priority;
	int64_t earliest = start_of(v->pods[0]);
	for (uint32_t i = 1; i < v->n; i++) {
		const struct sx_pod *p = v->pods[i];
		if (p->priority == top && start_of(p) < earliest) {
			earliest = start_of(p);
		} else if (p->priority > top) {
			top = p->priority;
			earliest = start_of(p);
		}
	}
	return earliest;
}

/* The i-th criterion as a score, higher is better. */
static int64_t criterion(const struct sx_preempt_candidate *c, int which)
{
	const struct sx_victims *v = &c->victims;
	int64_t sum = 0;
	switch (which) {
	case 0:
		return -(int64_t)v->num_pdb_violations;
	case 1:
		return v->n ? -(int64_t)v->pods[0]->priority : INT64_MIN;
	case 2:
		for (uint32_t i = 0; i < v->n; i++)
			sum += (int64_t)v->pods[i]->priority + ((int64_t)INT32_MAX + 1);
		return -sum;
	case 3:
		return -(int64_t)v->n;
	default:
		return v->n ? earliest_top_start(v) : INT64_MIN;
	}
}

int sx_preempt_pick_one(const struct sx_preempt_candidate *c, uint32_t n)
{
	uint32_t *keep = sx_calloc(n + 1, sizeof(*keep));
	uint32_t nkeep = n;
	int best;
	if (n == 0 || !keep) {
		free(keep);
		return n ? 0 : -1;
	}
	for (uint32_t i = 0; i < n; i++)
		keep[i] = i;
	for (int which = 0; which < 5 && nkeep > 1; which++) {
		int64_t max = INT64_MIN;
		uint32_t k = 0;
		for (uint32_t i = 0; i < nkeep; i++) {
			int64_t s = criterion(&c[keep[i]], which);
			if (s > max) {
				max = s;
				k = 0;
			}
			if (s == max)
				keep[k++] = keep[i];
		}
		nkeep = k;
	}
	best = (int)keep[0];
	free(keep);
	return best;
}

/* ---------- Evaluator.Preempt ---------- */

static enum sx_code code_of(const struct sx_preempt_input *in, uint32_t at)
{
	if (in->statuses && in->statuses[at])
		return in->statuses[at]->code;
	return in->absent ? in->absent->code : SX_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

static enum sx_code nominated_code(const struct sx_preempt_input *in, const struct sx_pod *pod)
{
	int at = pod->nominated_node ? sx_snapshot_find(in->snap, pod->nominated_node) : -1;
	if (at < 0)
		return in->absent ? in->absent->code : SX_UNSCHEDULABLE_AND_UNRESOLVABLE;
	return code_of(in, (uint32_t)at);
}

static uint32_t random_below(uint64_t *rng, uint32_t n)
{
	if (!rng || n == 0)
		return 0;
	uint64_t z = (*rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (uint32_t)(z % n);
}

static void fail(struct sx_preempt_result *out, enum sx_code code, const char *msg)
{
	out->status = sx_status_new(code, "preemption: %s", msg);
}

/* The FitError over the dry-run statuses, nodes without one being "not
 * helpful" (step 7). */
static int no_candidate(struct sx_preempt_result *out, const struct sx_snapshot *snap,
			struct sx_status **node_status)
{
	struct sx_cycle_result tmp = {.num_all_nodes = snap->nnodes, .statuses = node_status};
	tmp.absent_status = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL);
	char *msg = tmp.absent_status ? sx_fit_error_message(&tmp, NULL) : NULL;
	sx_status_free(tmp.absent_status);
	if (!msg)
		return SX_ENOMEM;
	fail(out, SX_UNSCHEDULABLE, msg);
	free(msg);
	out->mode = SX_NOMINATE_OVERRIDE;
	out->nominated_node = SX_STR_EMPTY;
	return 0;
}

static void lower_nominated(struct sx_preempt_result *out, const struct sx_pod *pod,
			    const struct sx_nominator *nom)
{
	const struct sx_pod *found[MAX_NOMINATED];
	uint32_t n = 0;
	if (nom && nom->pods_for_node)
		n = nom->pods_for_node(nom->ctx, out->nominated_node, found, MAX_NOMINATED);
	out->lower_nominated = sx_calloc(n + 1, sizeof(*out->lower_nominated));
	for (uint32_t i = 0; i < n && out->lower_nominated; i++)
		if (found[i]->priority < pod->priority)
			out->lower_nominated[out->nlower_nominated++] = sx_pod_ref(found[i]);
}

/* Steps 3-9 once the pod is eligible. */
static int find_and_pick(const struct sx_profile *prof, const struct sx_cycle_state *cs,
			 const struct sx_pod *pod, const struct sx_preempt_input *in,
			 uint32_t *potential, struct sx_status **node_status,
			 struct sx_preempt_result *out)
{
	const struct sx_snapshot *snap = in->snap;
	struct sx_preempt_candidate *cands = NULL;
	struct sx_status *err = NULL;
	uint32_t npot = 0, ncands = 0;
	int rc = 0;
	for (uint32_t i = 0; i < snap->nnodes; i++)
		if (code_of(in, i) == SX_UNSCHEDULABLE)
			potential[npot++] = i;
	if (npot > 0) {
		uint32_t offset = in->offset >= 0 ? (uint32_t)(in->offset % npot)
						  : random_below(in->rng, npot);
		rc = sx_preempt_dry_run(prof, cs, pod, snap, potential, npot, offset,
					sx_preempt_num_candidates(in->args, npot), in->nominator,
					&cands, &ncands, node_status, &err);
	}
	if (rc)
		goto out;
	if (err && ncands == 0) {
		char msg[2048];
		fail(out, SX_ERROR, sx_status_message(err, msg, sizeof(msg)));
	} else if (ncands == 0) {
		rc = no_candidate(out, snap, node_status);
	} else if (in->extenders &&
		   (err = sx_extenders_preempt(in->extenders, pod, snap, &cands, &ncands))) {
		char msg[2048];
		fail(out, SX_ERROR, sx_status_message(err, msg, sizeof(msg)));
	} else if (ncands == 0) { /* the extenders dropped every candidate */
		fail(out, SX_UNSCHEDULABLE, "no candidate node for preemption");
	} else {
		int best = sx_preempt_pick_one(cands, ncands);
		out->mode = SX_NOMINATE_OVERRIDE;
		out->nominated_node = cands[best].node;
		out->victims = cands[best].victims;
		memset(&cands[best].victims, 0, sizeof(cands[best].victims));
		lower_nominated(out, pod, in->nominator);
	}
out:
	sx_status_free(err);
	sx_preempt_candidates_free(cands, ncands);
	return rc;
}

int sx_preempt(const struct sx_profile *prof, const struct sx_cycle_state *cs,
	       const struct sx_pod *pod, const struct sx_preempt_input *in,
	       struct sx_preempt_result *out)
{
	const struct sx_snapshot *snap = in->snap;
	const char *reason;
	int rc;
	memset(out, 0, sizeof(*out));
	/* DefaultPreemption.PostFilter: a pod group's member is preempted for
	 * by its group (PodGroupPostFilter), never pod by pod */
	if (pod->scheduling_group != SX_STR_EMPTY && victim_groups(prof)) {
		fail(out, SX_UNSCHEDULABLE,
		     "not eligible due to workload aware preemption enabled");
		return out->status ? 0 : SX_ENOMEM;
	}
	if (!sx_preempt_pod_eligible(pod, snap, nominated_code(in, pod), victim_groups(prof),
				     &reason)) {
		fail(out, SX_UNSCHEDULABLE, reason);
		return out->status ? 0 : SX_ENOMEM;
	}
	if (snap->nnodes == 0) {
		fail(out, SX_ERROR, "no nodes available");
		return out->status ? 0 : SX_ENOMEM;
	}
	uint32_t *potential = sx_calloc(snap->nnodes, sizeof(*potential));
	struct sx_status **node_status = sx_calloc(snap->nnodes, sizeof(*node_status));
	rc = potential && node_status
		     ? find_and_pick(prof, cs, pod, in, potential, node_status, out)
		     : SX_ENOMEM;
	for (uint32_t i = 0; node_status && i < snap->nnodes; i++)
		sx_status_free(node_status[i]);
	free(node_status);
	free(potential);
	if (rc == 0 && !out->status && out->nominated_node == SX_STR_EMPTY &&
	    out->mode == SX_NOMINATE_NOOP)
		rc = SX_ENOMEM; /* a failure path could not allocate its status */
	if (rc)
		fail(out, SX_ERROR, "out of memory");
	return rc;
}

int sx_preempt_for_result(const struct sx_profile *prof, const struct sx_pod *pod,
			  const struct sx_cycle_result *res, const struct sx_nominator *nom,
			  const struct sx_preempt_args *args, uint64_t *rng,
			  struct sx_preempt_result *out)
{
	struct sx_preempt_input in = {
		.snap = res->state->snap,
		.statuses = res->statuses,
		.absent = res->pre_filter,
		.nominator = nom,
		.args = args,
		.offset = -1,
		.rng = rng,
	};
	return sx_preempt(prof, res->state, pod, &in, out);
}

void sx_preempt_result_free(struct sx_preempt_result *r)
{
	if (!r)
		return;
	sx_status_free(r->status);
	sx_victims_free(&r->victims);
	for (uint32_t i = 0; i < r->nlower_nominated; i++)
		sx_pod_unref(r->lower_nominated[i]);
	free(r->lower_nominated);
	memset(r, 0, sizeof(*r));
}
