/* The pod-group scheduling algorithm and PlacementFeasible (podgroup.h):
 * upstream pkg/scheduler/algorithm_podgroup.go
 * (podGroupSchedulingDefaultAlgorithm, podGroupPodSchedulingAlgorithm,
 * podGroupPotentiallyFeasible, RunRootSchedulingAlgorithm's "no pods were
 * schedulable") and podgroup_types.go (podGroupFitError: its message is the
 * rejecting status's, "0/<n> placements are available, first placement
 * status: ..." within placements); placements from the same
 * algorithm_podgroup.go (podGroupSchedulingPlacementAlgorithm,
 * nominatedPlacement, evaluatePlacement, findBestPodGroupPlacement,
 * findBestPlacement) and framework.go (RunPlacementGeneratePlugins,
 * RunPlacementScorePlugins). Runs on the caller's thread; no state of its
 * own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/podgroup.h"
#include "schedext/binder.h"
#include "schedext/binding_cycle.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/registry.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"
#include "framework_int.h"

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

/* RunPlacementFeasiblePlugins, or the test's script. */
static struct sx_status *run_feasible(const struct sx_pg_algorithm *a,
				      struct sx_placement_progress p)
{
	return a->feasible ? a->feasible(a->ctx, a->pg, p)
			   : sx_run_placement_feasible(a->prof, a->pg, p);
}

/* podGroupPotentiallyFeasible: *proceed says whether to go on with the next
 * member; the status returned is the group's status so far. An
 * Unschedulable or a Wait becomes an Unschedulable whose message is the
 * plugin's (podGroupFitError); a Wait goes on, so it only stays should the
 * members run out; any other code is kept as is and goes on. */
static struct sx_status *potentially_feasible(const struct sx_pg_algorithm *a,
					      struct sx_placement_progress p, bool *proceed)
{
	struct sx_status *st = run_feasible(a, p);

	switch (sx_status_code(st)) {
	case SX_ERROR:
		*proceed = false;
		return wrap(SX_ERROR, "failed to evaluate placement feasibility: ", st);
	case SX_UNSCHEDULABLE:
		*proceed = false;
		return wrap(SX_UNSCHEDULABLE, "", st);
	case SX_WAIT:
		*proceed = true;
		return wrap(SX_UNSCHEDULABLE, "", st);
	default:
		*proceed = true;
		return st;
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
	if (m->snap && a->placement) { /* AssumePlacement: only its nodes listed */
		struct sx_snapshot *in = sx_snapshot_in_placement(m->snap, a->placement->nodes,
								  a->placement->nnodes);

		sx_snapshot_unref(m->snap);
		m->snap = in;
	}
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

/* podGroupSchedulingDefaultAlgorithm: the group's status; *any: some
 * member was placed and the status is Success. */
static struct sx_status *group_algorithm(const struct sx_pg_algorithm *a, struct sx_pg_member *m,
					 uint32_t n, bool *any)
{
	struct sx_placement_progress p = {.remaining = (int32_t)n,
					  .scheduled = a->scheduled_before};
	struct sx_snapshot *view = a->cache ? NULL : sx_snapshot_ref(a->base);
	struct sx_status *group;
	bool proceed;

	*any = false;
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
		if (proceed)
			*any = *any || m[i].scheduled;
	}
	if (!sx_status_is_success(group))
		*any = false;
	revert(a, m, n);
	sx_snapshot_unref(view);
	return group;
}

/* RunRootSchedulingAlgorithm: Success needs a member placed. */
static struct sx_status *root_status(struct sx_status *group, bool any)
{
	if (sx_status_is_success(group) && !any) {
		sx_status_free(group);
		return sx_status_new(SX_UNSCHEDULABLE, "no pods were schedulable");
	}
	return group;
}

struct sx_status *sx_pod_group_algorithm(const struct sx_pg_algorithm *a, struct sx_pg_member *m,
					 uint32_t n)
{
	bool any;
	struct sx_status *group = group_algorithm(a, m, n, &any);

	return root_status(group, any);
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

void sx_pg_placements_free(struct sx_pg_placements *p)
{
	for (uint32_t i = 0; p && i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].nodes);
	}
	if (p) {
		free(p->v);
		*p = (struct sx_pg_placements){0};
	}
}

/* One intersection of the merge: a's nodes (in a's, the snapshot's, order)
 * also in b, named "<a>/<b>"; appended to out unless empty. -1: out of
 * memory. */
static int intersect_one(const struct sx_pg_placement *a, const struct sx_pg_placement *b,
			 struct sx_pg_placements *out)
{
	struct sx_pg_placement *p = &out->v[out->n];
	size_t len = strlen(a->name) + strlen(b->name) + 2;

	*p = (struct sx_pg_placement){.nodes =
					      malloc(sizeof(sx_str) * (a->nnodes ? a->nnodes : 1))};
	if (!p->nodes)
		return -1;
	for (uint32_t i = 0; i < a->nnodes; i++)
		for (uint32_t j = 0; j < b->nnodes; j++)
			if (a->nodes[i] == b->nodes[j]) {
				p->nodes[p->nnodes++] = a->nodes[i];
				break;
			}
	if (p->nnodes == 0) { /* empty intersections are dropped */
		free(p->nodes);
		return 0;
	}
	p->name = malloc(len);
	if (!p->name) {
		free(p->nodes);
		return -1;
	}
	snprintf(p->name, len, "%s/%s", a->name, b->name);
	out->n++;
	return 0;
}

int sx_pg_placements_merge(struct sx_pg_placements *acc, struct sx_pg_placements *cur)
{
	struct sx_pg_placements out = {0};
	uint64_t cap = (uint64_t)acc->n * cur->n;
	int rc = 0;

	if (cap > SX_PG_MAX_PLACEMENTS)
		return -2;
	out.v = calloc(cap ? cap : 1, sizeof(*out.v));
	if (!out.v)
		return -1;
	for (uint32_t i = 0; i < acc->n && rc == 0; i++)
		for (uint32_t j = 0; j < cur->n && rc == 0; j++)
			rc = intersect_one(&acc->v[i], &cur->v[j], &out);
	if (rc < 0) {
		sx_pg_placements_free(&out);
		return -1;
	}
	sx_pg_placements_free(acc);
	sx_pg_placements_free(cur);
	*acc = out;
	return 0;
}

struct sx_status *sx_pg_placements_fold(struct sx_pg_placements *acc, bool *constrained,
					struct sx_pg_placements *cur)
{
	int rc = 0;

	if (cur->n == 0) /* unconstrained: skipped */
		return NULL;
	if (!*constrained)
		*acc = *cur;
	else
		rc = sx_pg_placements_merge(acc, cur);
	*constrained = true;
	if (rc < 0) /* acc and cur untouched: the caller frees them */
		return rc == -1 ? sx_status_new(SX_ERROR, "out of memory")
				: sx_status_new(SX_ERROR, "more than %d merged placements",
						SX_PG_MAX_PLACEMENTS);
	*cur = (struct sx_pg_placements){0};
	if (acc->n == 0)
		return sx_status_new(SX_UNSCHEDULABLE,
				     "no placement is common to the PlacementGenerate plugins");
	return NULL;
}

/* RunPlacementGeneratePlugins (upstream framework.go) over the profile's
 * placementGenerate set, in order, folded by sx_pg_placements_fold. */
static struct sx_status *generate(const struct sx_pg_algorithm *a, const struct sx_snapshot *snap,
				  struct sx_pg_placements *out)
{
	const struct sx_profile *prof = a->prof;
	bool constrained = false;

	for (unsigned i = 0; i < prof->ngroup[SX_GPT_PLACEMENT_GENERATE]; i++) {
		const struct sx_group_enabled *e = &prof->group[SX_GPT_PLACEMENT_GENERATE][i];
		const struct sx_plugin *pl = e->index >= 0 ? sx_plugins[e->index] : NULL;
		struct sx_pg_placements cur = {0};
		struct sx_status *st;

		if (!pl || !pl->placement_generate)
			continue;
		st = pl->placement_generate(prof->instances[e->index], a->pg, snap, &cur);
		if (!sx_status_is_success(st)) {
			sx_pg_placements_free(&cur);
			sx_pg_placements_free(out);
			return sx_status_set_plugin(st, pl->name);
		}
		sx_status_free(st);
		st = sx_pg_placements_fold(out, &constrained, &cur);
		if (st) {
			sx_pg_placements_free(&cur);
			sx_pg_placements_free(out);
			return st;
		}
	}
	return NULL;
}

/* One feasible placement's outcome. */
struct outcome {
	const struct sx_pg_placement *placement;
	struct sx_pg_member *m;
	int64_t total;
	bool any; /* a member was placed (anyScheduled) */
};

/* findBestPlacement's choice: the highest total; among equal totals each
 * is picked with the same chance (upstream draws a Randomizer per score
 * and keeps the highest; here the loop's reservoir sampling, sx__tie_pick,
 * with a's random state). */
static int pick_best(const struct sx_pg_algorithm *a, const struct outcome *o, uint32_t n)
{
	uint64_t local = 0x2545F4914F6CDD1Dull;
	uint64_t *rng = a->rng ? a->rng : &local;
	uint64_t ties = 1;
	int best = 0;

	for (uint32_t k = 1; k < n; k++) {
		if (o[k].total > o[best].total) {
			best = (int)k;
			ties = 1;
		} else if (o[k].total == o[best].total && sx__tie_pick(rng, ++ties)) {
			best = (int)k;
		}
	}
	return best;
}

/* RunPlacementScorePlugins and findBestPlacement: the index of the best of
 * o[0..n), or -1 with *err set. */
static int best_placement(const struct sx_pg_algorithm *a, const struct sx_snapshot *snap,
			  struct outcome *o, uint32_t n, uint32_t nm, struct sx_status **err)
{
	const struct sx_profile *prof = a->prof;
	int64_t *scores = calloc(n, sizeof(*scores));
	const struct sx_pod **pods = calloc(nm ? nm : 1, sizeof(*pods));
	sx_str *nodes = calloc(nm ? nm : 1, sizeof(*nodes));
	struct sx_status *st;
	int best = 0;

	*err = NULL;
	if (!scores || !pods || !nodes) {
		*err = sx_status_new(SX_ERROR, "out of memory");
		best = -1;
	}
	for (unsigned i = 0; best >= 0 && i < prof->ngroup[SX_GPT_PLACEMENT_SCORE]; i++) {
		const struct sx_group_enabled *e = &prof->group[SX_GPT_PLACEMENT_SCORE][i];
		const struct sx_plugin *pl = e->index >= 0 ? sx_plugins[e->index] : NULL;
		void *self = pl ? prof->instances[e->index] : NULL;

		if (!pl || !pl->placement_score)
			continue;
		for (uint32_t k = 0; k < n && !*err; k++) {
			struct sx_pg_assignments as = {.placement = o[k].placement,
						       .pods = pods,
						       .nodes = nodes,
						       .scheduled_before = a->scheduled_before,
						       .snap = snap};

			for (uint32_t j = 0; j < nm; j++) {
				if (!o[k].m[j].scheduled)
					continue;
				pods[as.nproposed] = o[k].m[j].pod;
				nodes[as.nproposed++] = o[k].m[j].node;
			}
			st = pl->placement_score(self, a->pg, &as, &scores[k]);
			/* framework.go RunPlacementScorePlugins' words (its
			 * test "when score plugin fails, returns error"). */
			if (!sx_status_is_success(st))
				*err = sx_status_as_error(st,
							  "running PlacementScore plugins: plugin "
							  "\"%s\" failed with: %s",
							  pl->name);
			else
				sx_status_free(st);
		}
		if (!*err && pl->normalize_placement_score) {
			st = pl->normalize_placement_score(self, a->pg, scores, n);
			/* As the node scores' Normalize is reported. */
			if (!sx_status_is_success(st))
				*err = sx_status_as_error(
					st, "running Normalize on PlacementScore plugin \"%s\": %s",
					pl->name);
			else
				sx_status_free(st);
		}
		if (*err) {
			best = -1;
			break;
		}
		for (uint32_t k = 0; k < n; k++)
			o[k].total += scores[k] * e->weight;
	}
	best = best >= 0 ? pick_best(a, o, n) : best;
	free(scores);
	free(pods);
	free(nodes);
	return best;
}

static struct sx_pg_member *fresh_members(const struct sx_pg_member *m, uint32_t n)
{
	struct sx_pg_member *c = calloc(n ? n : 1, sizeof(*c));

	for (uint32_t i = 0; c && i < n; i++)
		c[i].pod = m[i].pod;
	return c;
}

static void drop_members(struct sx_pg_member *c, uint32_t n)
{
	if (c)
		sx_pg_members_free(c, n);
	free(c);
}

/* evaluatePlacement: the algorithm on placement p with members fresh
 * copies of m (*out, owned by the caller, set even on failure). */
static struct sx_status *evaluate(const struct sx_pg_algorithm *a, const struct sx_pg_placement *p,
				  const struct sx_pg_member *m, uint32_t n,
				  struct sx_pg_member **out, bool *any)
{
	struct sx_pg_algorithm in = *a;
	struct sx_status *st;

	*any = false;
	*out = fresh_members(m, n);
	if (!*out)
		return sx_status_new(SX_ERROR, "out of memory");
	in.placement = p;
	st = group_algorithm(&in, *out, n, any);
	if (a->placement_evaluated && sx_status_code(st) != SX_ERROR)
		a->placement_evaluated(a->observe_ctx, a->prof, sx_status_is_success(st));
	return st;
}

/* Does the placement list node? */
static bool placement_has(const struct sx_pg_placement *p, sx_str node)
{
	for (uint32_t k = 0; k < p->nnodes; k++)
		if (p->nodes[k] == node)
			return true;
	return false;
}

int sx_pg_nominated_placement(const struct sx_pg_placements *pl, const struct sx_pg_member *m,
			      uint32_t n)
{
	int matched = -1;

	for (uint32_t i = 0; i < pl->n; i++) {
		bool holds = false;

		for (uint32_t j = 0; j < n && !holds; j++)
			holds = m[j].pod->nominated_node != SX_STR_EMPTY &&
				placement_has(&pl->v[i], m[j].pod->nominated_node);
		if (!holds)
			continue;
		if (matched >= 0)
			return -1; /* overlap: every placement is scored */
		matched = (int)i;
	}
	return matched;
}

/* What the placement loop gathered: the feasible placements and the
 * reported one's members and status (the nominated placement's when it
 * was tried, else the first evaluated that was not feasible). */
struct tally {
	struct outcome *ok;
	uint32_t nok;
	struct sx_pg_member *any;
	struct sx_status *any_st;
};

/* Files outcome o with its status st (both taken); report: it is the
 * reported one even when another was. Returns an Error status that ends
 * the loop (o's members then become the reported ones). */
static struct sx_status *file_outcome(struct tally *t, const struct outcome *o,
				      struct sx_status *st, uint32_t n, bool report)
{
	if (sx_status_code(st) == SX_ERROR) {
		drop_members(t->any, n);
		t->any = o->m;
		return st;
	}
	if (sx_status_is_success(st) && (o->any || !report)) {
		t->ok[t->nok++] = *o;
		sx_status_free(st);
		return NULL;
	}
	if (!t->any || report) {
		drop_members(t->any, n);
		sx_status_free(t->any_st);
		t->any = o->m;
		t->any_st = st;
		return NULL;
	}
	drop_members(o->m, n);
	sx_status_free(st);
	return NULL;
}

/* The evaluation order: the nominated placement first (if any), alone
 * when the group is feasible there with a member placed (not only through
 * members placed before); then every other placement. */
static struct sx_status *evaluate_all(const struct sx_pg_algorithm *a,
				      const struct sx_pg_placements *pl,
				      const struct sx_pg_member *m, uint32_t n, struct tally *t)
{
	int nom = sx_pg_nominated_placement(pl, m, n);

	for (int64_t k = nom >= 0 ? -1 : 0; k < (int64_t)pl->n; k++) {
		uint32_t i = k < 0 ? (uint32_t)nom : (uint32_t)k;
		struct outcome o = {.placement = &pl->v[i]};
		struct sx_status *st;

		if (k >= 0 && (int)i == nom)
			continue;
		if (k >= 0 && nom >= 0 && t->nok > 0)
			break; /* the nominated placement is feasible: used as is */
		st = evaluate(a, o.placement, m, n, &o.m, &o.any);
		if ((st = file_outcome(t, &o, st, n, k < 0)) != NULL)
			return st;
	}
	return NULL;
}

/* podGroupFitError with the placements' count: "0/<n> placements are
 * available, first placement status: <the reported status's message>";
 * a Success reported (the nominated placement, feasible only through
 * members placed before) gives upstream's actionable reason instead. */
static struct sx_status *none_available(const struct sx_status *rep, uint32_t n)
{
	char buf[1024];
	struct sx_status *st;

	if (sx_status_is_success(rep))
		snprintf(buf, sizeof(buf),
			 "nominated placement is feasible but no pending pod was scheduled");
	else
		sx_status_message(rep, buf, sizeof(buf));
	st = sx_status_new(SX_UNSCHEDULABLE,
			   "0/%u placements are available, first placement status: %s", n, buf);
	sx_status_set_plugin(st, rep ? rep->plugin : NULL);
	return st;
}

struct sx_status *sx_pod_group_placement_algorithm(const struct sx_pg_algorithm *a,
						   struct sx_pg_member *m, uint32_t n)
{
	struct sx_pg_placements pl = {0};
	struct tally t = {0};
	struct sx_status *st = NULL;
	struct sx_snapshot *snap;
	int best;

	if (!sx_feature_enabled(&a->prof->features,
				SX_FEATURE_TOPOLOGY_AWARE_WORKLOAD_SCHEDULING) ||
	    a->prof->ngroup[SX_GPT_PLACEMENT_GENERATE] == 0)
		return sx_pod_group_algorithm(a, m, n);
	snap = a->cache ? sx_cache_snapshot(a->cache) : sx_snapshot_ref(a->base);
	if (!snap)
		return sx_status_new(SX_ERROR, "out of memory");
	st = generate(a, snap, &pl);
	if (st) {
		sx_snapshot_unref(snap);
		return st;
	}
	if (a->placements_generated)
		a->placements_generated(a->observe_ctx, a->prof, pl.n);
	if (pl.n == 0) { /* no plugin constrains the group */
		sx_snapshot_unref(snap);
		return sx_pod_group_algorithm(a, m, n);
	}
	t.ok = calloc(pl.n, sizeof(*t.ok));
	st = t.ok ? evaluate_all(a, &pl, m, n, &t) : sx_status_new(SX_ERROR, "out of memory");
	if (st)
		goto out;
	if (t.nok == 0) {
		st = none_available(t.any_st, pl.n);
		goto out;
	}
	drop_members(t.any, n);
	t.any = NULL;
	best = t.nok == 1 ? 0 : best_placement(a, snap, t.ok, t.nok, n, &st);
	if (best >= 0) { /* RunRootSchedulingAlgorithm: Success needs a member placed */
		st = root_status(NULL, t.ok[best].any);
		t.any = t.ok[best].m;
		t.ok[best].m = NULL;
	}
out:
	if (t.any) { /* hand the chosen members to the caller */
		for (uint32_t i = 0; i < n; i++)
			m[i] = t.any[i];
		free(t.any);
	}
	for (uint32_t k = 0; k < t.nok; k++)
		drop_members(t.ok[k].m, n);
	free(t.ok);
	sx_status_free(t.any_st);
	sx_pg_placements_free(&pl);
	sx_snapshot_unref(snap);
	return st;
}
