/* The scheduling cycle (upstream pkg/scheduler/schedule_one.go schedulePod,
 * findNodesThatFitPod): PreEnqueue check,
 * PreFilter, the nominated node or the opportunistic batch's hinted node
 * alone (batch.h), parallel Filter with early stop and rotating start
 * index, then scoring and host selection (score_phase.c), and the
 * batch's results stored. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/batch.h"
#include "schedext/buf.h"
#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/arena.h"
#include "schedext/pool.h"
#include "schedext/framework_metrics.h"
#include "schedext/fit_error.h"
#include "schedext/registry.h"
#include "framework_int.h"

#define MAX_NOMINATED 256

/* ---------- metrics (framework_int.h) ---------- */

_Thread_local uint32_t sx__tl_evals[2][SX_MAX_PLUGINS];
_Thread_local uint64_t sx__tl_evals_used[2];

void sx__flush_evals(const struct sx_profile *prof, int which, enum sx_ext_point ep)
{
	for (uint64_t m = sx__tl_evals_used[which]; m; m &= m - 1) {
		unsigned p = (unsigned)__builtin_ctzll(m);

		sx_fw_metrics_evals(prof, (int)p, ep, sx__tl_evals[which][p]);
		sx__tl_evals[which][p] = 0;
	}
	sx__tl_evals_used[which] = 0;
}

static struct sx_status *attach(struct sx_status *st, const char *plugin)
{
	if (st && !st->plugin)
		sx_status_set_plugin(st, plugin);
	return st;
}

/* ---------- points run one plugin after another ---------- */

struct sx_status *sx_run_pre_enqueue(const struct sx_profile *prof, const struct sx_pod *pod)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_ENQUEUE];
	for (unsigned i = 0; i < prof->n[SX_PT_PRE_ENQUEUE]; i++) {
		struct sx_status *st = e[i].plugin->pre_enqueue(e[i].self, pod);
		if (!sx_status_is_success(st))
			return attach(st, e[i].plugin->name);
		sx_status_free(st);
	}
	return NULL;
}

bool sx_queue_less(const struct sx_profile *prof, const struct sx_queued_pod *a,
		   const struct sx_queued_pod *b)
{
	const struct sx_enabled *e = prof->points[SX_PT_QUEUE_SORT];
	if (prof->n[SX_PT_QUEUE_SORT] == 0)
		return a->timestamp < b->timestamp;
	return e[0].plugin->less(e[0].self, a, b);
}

/* Intersects *acc with set (NULL acc = everything). Takes set. */
static void intersect_sets(struct sx_node_set **acc, struct sx_node_set *set)
{
	if (!*acc) {
		*acc = set;
		return;
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < (*acc)->n; i++) {
		for (uint32_t j = 0; j < set->n; j++) {
			if ((*acc)->names[i] == set->names[j]) {
				(*acc)->names[k++] = (*acc)->names[i];
				break;
			}
		}
	}
	(*acc)->n = k;
	free(set->names);
	free(set);
}

static void free_node_set(struct sx_node_set *set)
{
	if (set) {
		free(set->names);
		free(set);
	}
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "[A B]" of the sorted plugin names. */
static void format_plugin_list(char *buf, size_t len, const char **names, unsigned n)
{
	size_t off = 0;
	qsort(names, n, sizeof(*names), cmp_cstr);
	off += (size_t)snprintf(buf, len, "[");
	for (unsigned i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", names[i]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
}

/* PreFilter of every plugin (runtime/framework.go RunPreFilterPlugins). *result receives the merged
 * PreFilterResult (NULL = all nodes); set_plugins the plugins that gave one. */
static struct sx_status *run_pre_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
					const struct sx_pod *pod, struct sx_node_set **result,
					const char **set_plugins, unsigned *nset)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_FILTER];
	struct sx_status *rejected = NULL;
	*nset = 0;
	for (unsigned i = 0; i < prof->n[SX_PT_PRE_FILTER]; i++) {
		struct sx_node_set *set = NULL;
		uint64_t t0 = plugin_clock(cs);
		struct sx_status *st = e[i].plugin->pre_filter(e[i].self, cs, pod, &set);
		plugin_done(t0, e[i].index, SX_EP_PRE_FILTER, st);
		attach(st, e[i].plugin->name);
		enum sx_code code = sx_status_code(st);
		if (code != SX_SKIP)
			sx_fw_metrics_evals(prof, e[i].index, SX_EP_PRE_FILTER, 1);
		if (code == SX_SKIP) {
			cs->skip_filter[e[i].index] = true;
			sx_status_free(st);
			free_node_set(set);
			continue;
		}
		if (code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE) {
			free_node_set(set);
			sx_status_free(rejected);
			return st;
		}
		if (code == SX_UNSCHEDULABLE) {
			sx_status_free(rejected);
			rejected = st;
			free_node_set(set);
			continue;
		}
		if (code != SX_SUCCESS) {
			free_node_set(set);
			sx_status_free(rejected);
			return sx_status_as_error(st, "running PreFilter plugin \"%s\": %s",
						  e[i].plugin->name);
		}
		if (set) {
			set_plugins[(*nset)++] = e[i].plugin->name;
			intersect_sets(result, set);
		}
	}
	if (rejected)
		return rejected;
	if (*result && (*result)->n == 0) {
		if (*nset == 1)
			return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					     "node(s) didn't satisfy plugin %s", set_plugins[0]);
		char list[512];
		format_plugin_list(list, sizeof(list), set_plugins, *nset);
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "node(s) didn't satisfy plugin(s) %s simultaneously", list);
	}
	return NULL;
}

struct sx_status *sx_run_pre_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
				    const struct sx_pod *pod)
{
	struct sx_node_set *set = NULL;
	const char *names[SX_MAX_PLUGINS];
	unsigned nset;
	struct sx_status *st = run_pre_filter(prof, cs, pod, &set, names, &nset);
	free_node_set(set);
	return st;
}

/* The Filter plugins whose PreFilter did not return Skip, in profile
 * order: computed once per cycle, not checked per plugin on every node. */
static unsigned active_filters(const struct sx_profile *prof, const struct sx_cycle_state *cs,
			       const struct sx_enabled **out)
{
	const struct sx_enabled *e = prof->points[SX_PT_FILTER];
	unsigned n = 0;

	for (unsigned i = 0; i < prof->n[SX_PT_FILTER]; i++)
		if (!cs->skip_filter[e[i].index])
			out[n++] = &e[i];
	return n;
}

/* A Filter plugin's non-NULL status: NULL when it is a Success (freed
 * here), else what the node's filtering returns: the rejection with the
 * plugin's name, or an Error naming the plugin. */
static struct sx_status *filter_verdict(struct sx_status *st, const struct sx_enabled *e)
{
	if (st->code == SX_SUCCESS) {
		sx_status_free(st);
		return NULL;
	}
	if (sx_status_is_rejected(st))
		return attach(st, e->plugin->name);
	return sx_status_as_error(st, "running \"%s\" filter plugin: %s", e->plugin->name);
}

/* run_filter_list in a cycle whose plugin calls are timed (one in ten). */
static struct sx_status *run_filter_list_timed(const struct sx_enabled *const *list, unsigned n,
					       const struct sx_cycle_state *cs,
					       const struct sx_pod *pod,
					       const struct sx_node_info *ni, unsigned *ran)
{
	uint64_t t = plugin_clock(cs);
	for (unsigned i = 0; i < n; i++) {
		const struct sx_enabled *e = list[i];
		struct sx_status *st = e->plugin->filter(e->self, cs, pod, ni);
		t = plugin_lap(t, e->index, SX_EP_FILTER, st);
		if (st && (st = filter_verdict(st, e))) {
			*ran = i + 1;
			return st;
		}
	}
	*ran = n;
	return NULL;
}

/* Runs list[0..n) on ni until one rejects it; *ran = how many ran, which
 * the caller counts as evaluations (scheduler_plugin_evaluation_total).
 * The untimed loop is separate: it runs for every node of nine cycles in
 * ten, and without the clock calls it keeps its values in registers. */
static struct sx_status *run_filter_list(const struct sx_enabled *const *list, unsigned n,
					 const struct sx_cycle_state *cs, const struct sx_pod *pod,
					 const struct sx_node_info *ni, unsigned *ran)
{
	if (cs->record_plugin_metrics)
		return run_filter_list_timed(list, n, cs, pod, ni, ran);
	for (unsigned i = 0; i < n; i++) {
		const struct sx_enabled *e = list[i];
		struct sx_status *st = e->plugin->filter(e->self, cs, pod, ni);
		if (st && (st = filter_verdict(st, e))) {
			*ran = i + 1;
			return st;
		}
	}
	*ran = n;
	return NULL;
}

struct sx_status *sx_run_filters(const struct sx_profile *prof, const struct sx_cycle_state *cs,
				 const struct sx_pod *pod, const struct sx_node_info *ni)
{
	const struct sx_enabled *list[SX_MAX_PLUGINS];
	unsigned n = active_filters(prof, cs, list), ran = 0;
	struct sx_status *st = run_filter_list(list, n, cs, pod, ni, &ran);

	for (unsigned i = 0; i < ran; i++)
		count_eval(EV_FILTER, list[i]->index);
	return st;
}

static struct sx_status *run_extension(const struct sx_profile *prof, struct sx_cycle_state *cs,
				       const struct sx_pod *pod, const struct sx_pod *other,
				       const struct sx_node_info *ni, bool add)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_FILTER];
	for (unsigned i = 0; i < prof->n[SX_PT_PRE_FILTER]; i++) {
		const struct sx_plugin *p = e[i].plugin;
		if (cs->skip_filter[e[i].index])
			continue;
		struct sx_status *st = NULL;
		if (add && p->add_pod)
			st = p->add_pod(e[i].self, cs, pod, other, ni);
		else if (!add && p->remove_pod)
			st = p->remove_pod(e[i].self, cs, pod, other, ni);
		if (!sx_status_is_success(st))
			return sx_status_as_error(
				st,
				add ? "running AddPod on PreFilter plugin \"%s\": %s"
				    : "running RemovePod on PreFilter plugin \"%s\": %s",
				p->name);
		sx_status_free(st);
	}
	return NULL;
}

struct sx_status *sx_run_add_pod(const struct sx_profile *prof, struct sx_cycle_state *cs,
				 const struct sx_pod *pod, const struct sx_pod *added,
				 const struct sx_node_info *ni)
{
	return run_extension(prof, cs, pod, added, ni, true);
}

struct sx_status *sx_run_remove_pod(const struct sx_profile *prof, struct sx_cycle_state *cs,
				    const struct sx_pod *pod, const struct sx_pod *removed,
				    const struct sx_node_info *ni)
{
	return run_extension(prof, cs, pod, removed, ni, false);
}

static bool same_pod(const struct sx_pod *a, const struct sx_pod *b)
{
	return a->meta.ns == b->meta.ns && strcmp(a->meta.name, b->meta.name) == 0;
}

/* Pass 1 of RunFilterPluginsWithNominatedPods: filters on a copy with the nominated pods added. */
static struct sx_status *filter_with_nominated_added(const struct sx_profile *prof,
						     const struct sx_cycle_state *cs,
						     const struct sx_pod *pod,
						     const struct sx_node_info *ni,
						     const struct sx_pod **nominated, uint32_t n)
{
	struct sx_node_info *copy = sx_node_info_clone(ni);
	struct sx_cycle_state *state = sx_cycle_state_clone(prof, cs);
	struct sx_status *st = NULL;
	if (!copy || !state) {
		st = sx_status_oom();
		goto out;
	}
	for (uint32_t i = 0; i < n && !st; i++) {
		if (sx_node_info_add_pod(copy, nominated[i]) < 0)
			st = sx_status_oom();
		else
			st = sx_run_add_pod(prof, state, pod, nominated[i], copy);
	}
	if (!st)
		st = sx_run_filters(prof, state, pod, copy);
out:
	sx_cycle_state_free(prof, state);
	sx_node_info_unref(copy);
	return st;
}

/* Filters ni with the nominated pods that count for pod (priority at
 * least pod's, not pod itself) added: NULL when there are none or ni
 * passes with them (upstream's first pass of
 * RunFilterPluginsWithNominatedPods). */
static struct sx_status *filter_nominated_pass(const struct sx_profile *prof,
					       const struct sx_cycle_state *cs,
					       const struct sx_pod *pod,
					       const struct sx_node_info *ni,
					       const struct sx_nominator *nom)
{
	const struct sx_pod *found[MAX_NOMINATED];
	const struct sx_pod *keep[MAX_NOMINATED];
	uint32_t n = nom->pods_for_node(nom->ctx, ni->name, found, MAX_NOMINATED), k = 0;
	struct sx_status *st;

	for (uint32_t i = 0; i < n; i++)
		if (found[i]->priority >= pod->priority && !same_pod(found[i], pod))
			keep[k++] = found[i];
	if (k == 0)
		return NULL;
	st = filter_with_nominated_added(prof, cs, pod, ni, keep, k);
	if (sx_status_is_success(st)) {
		sx_status_free(st);
		return NULL;
	}
	return st;
}

struct sx_status *sx_run_filters_with_nominated(const struct sx_profile *prof,
						const struct sx_cycle_state *cs,
						const struct sx_pod *pod,
						const struct sx_node_info *ni,
						const struct sx_nominator *nom)
{
	if (nom && nom->pods_for_node) {
		struct sx_status *st = filter_nominated_pass(prof, cs, pod, ni, nom);
		if (st)
			return st;
	}
	return sx_run_filters(prof, cs, pod, ni);
}

/* ---------- the parallel filter ---------- */

struct filter_job {
	const struct sx_profile *prof;
	const struct sx_cycle_state *cs;
	const struct sx_pod *pod;
	const struct sx_snapshot *snap;
	const struct sx_nominator *nom;
	unsigned nfilters; /* Filter plugins PreFilter did not skip */
	const struct sx_enabled *filters[SX_MAX_PLUGINS];
	const uint32_t *cand;	   /* snapshot indices of the candidates */
	uint32_t ncand, start;	   /* order position i is cand[(start + i) % ncand] */
	struct sx_status **status; /* per order position */
	uint8_t *state;		   /* per order position: 0 skipped, 1 pass, 2 fail */
	uint32_t want;		   /* feasible nodes to find */
	atomic_uint found;
	atomic_bool error;
	atomic_bool stop; /* want reached or error: start no more chunks */
	atomic_uint hi;	  /* positions >= hi were never started */
};

/* Index into cand of order position i (no division: start < ncand). */
static uint32_t order_pos(const struct filter_job *j, uint32_t i)
{
	uint32_t pos = j->start + i;

	return pos >= j->ncand ? pos - j->ncand : pos;
}

/* Filter evaluations of this thread's current chunk by how many plugins
 * of the job's list ran on a node (one add per node, not per plugin);
 * flush_depths turns them into per-plugin counts. */
static _Thread_local uint32_t tl_depth[SX_MAX_PLUGINS + 1];

static void flush_depths(const struct filter_job *j)
{
	uint32_t reached = 0; /* nodes on which list[k] ran: depth > k */

	for (unsigned k = j->nfilters; k-- > 0;) {
		reached += tl_depth[k + 1];
		tl_depth[k + 1] = 0;
		if (reached)
			sx_fw_metrics_evals(j->prof, j->filters[k]->index, SX_EP_FILTER, reached);
	}
	tl_depth[0] = 0;
}

/* Records the verdict of order position i: passed (st NULL) or its
 * status (state 2; an Error stops the phase). */
static void record_verdict(struct filter_job *j, uint32_t i, struct sx_status *st)
{
	if (!st) {
		j->state[i] = 1;
		return;
	}
	if (st->code == SX_ERROR) {
		atomic_store(&j->error, true);
		atomic_store_explicit(&j->stop, true, memory_order_relaxed);
	}
	j->status[i] = st;
	j->state[i] = 2;
}

/* The verdict of one node, node by node: the nominated pods' pass first
 * when there are any, the plugins timed in a sampled cycle. */
static struct sx_status *filter_one(struct filter_job *j, const struct sx_node_info *ni)
{
	struct sx_status *st = NULL;
	unsigned ran = 0;

	if (j->nfilters == 0)
		return NULL;
	if (j->nom && j->nom->pods_for_node && !j->nom->none)
		st = filter_nominated_pass(j->prof, j->cs, j->pod, ni, j->nom);
	if (!st) {
		st = run_filter_list(j->filters, j->nfilters, j->cs, j->pod, ni, &ran);
		tl_depth[ran]++;
	}
	return st;
}

/* Nodes filtered together by filter_batch. */
enum { FILTER_BATCH = 8 };
/* Order positions per chunk: a few batches, few enough that the nodes
 * filtered past `want` by another thread stay few (they are discarded). */
enum { FILTER_CHUNK = 32 };

/* The verdicts of nis[0..n) (n <= FILTER_BATCH), plugin by plugin: each
 * plugin runs on every node of the batch that passed the ones before it,
 * then the next plugin. Each node sees the same plugins in the same order
 * as node by node and its first rejection wins, so the verdicts are the
 * same; but one plugin's reads of different nodes do not depend on each
 * other, so their cache misses (NodeInfo, Node, taints, labels) overlap
 * instead of coming one after another, as they did for a node that an
 * early plugin rejects in ~100 ns. Not for a sampled cycle (its calls are
 * timed one node at a time) nor with nominated pods (filter_one). */
static void filter_batch(struct filter_job *j, const struct sx_node_info *const *nis, uint32_t n,
			 struct sx_status **verdict)
{
	uint8_t alive[FILTER_BATCH];
	uint32_t nalive = n;

	for (uint32_t b = 0; b < n; b++) {
		alive[b] = (uint8_t)b;
		verdict[b] = NULL;
	}
	const struct sx_cycle_state *cs = j->cs;
	const struct sx_pod *pod = j->pod;
	for (unsigned p = 0; p < j->nfilters && nalive > 0; p++) {
		const struct sx_enabled *e = j->filters[p];
		/* Locals: the calls could write any memory, so fields read
		 * through e or j would be read again for every node. */
		struct sx_status *(*filter)(void *, const struct sx_cycle_state *,
					    const struct sx_pod *, const struct sx_node_info *) =
			e->plugin->filter;
		void *self = e->self;
		uint32_t keep = 0;

		for (uint32_t a = 0; a < nalive; a++) {
			uint32_t b = alive[a];
			struct sx_status *st = filter(self, cs, pod, nis[b]);

			if (st && (st = filter_verdict(st, e))) {
				verdict[b] = st;
				tl_depth[p + 1]++;
			} else {
				alive[keep++] = (uint8_t)b;
			}
		}
		nalive = keep;
	}
	tl_depth[j->nfilters] += nalive;
}

static bool batchable(const struct filter_job *j)
{
	return !j->cs->record_plugin_metrics && !(j->nom && j->nom->pods_for_node && !j->nom->none);
}

/* Filters order positions [start, end) until `want` nodes passed overall.
 * Passing nodes are tallied locally and published once per chunk: a
 * shared counter bumped per node moved its cache line between the
 * threads on every node. The quota check reads the shared count plus the
 * local tally, so one thread keeps exactly the first `want` passing nodes
 * in order (a batch's nodes past the quota count as never filtered); with
 * several, passes beyond the quota are discarded, as upstream does. */
static void filter_chunk(void *ctx, uint32_t start, uint32_t end, unsigned worker)
{
	struct filter_job *j = ctx;
	uint32_t mine = 0, hi = atomic_load_explicit(&j->hi, memory_order_relaxed);
	const struct sx_node_info *nis[FILTER_BATCH];
	struct sx_status *verdict[FILTER_BATCH];
	bool batch = batchable(j);
	(void)worker;
	while (hi < end && !atomic_compare_exchange_weak(&j->hi, &hi, end))
		;
	for (uint32_t i = start; i < end;) {
		uint32_t n = end - i < FILTER_BATCH ? end - i : FILTER_BATCH;

		for (uint32_t b = 0, pos = order_pos(j, i); b < n;
		     b++, pos = pos + 1 == j->ncand ? 0 : pos + 1)
			nis[b] = j->snap->nodes[j->cand[pos]];
		if (batch)
			filter_batch(j, nis, n, verdict);
		for (uint32_t b = 0; b < n; b++, i++) {
			if (atomic_load_explicit(&j->found, memory_order_relaxed) + mine >=
				    j->want ||
			    atomic_load(&j->error)) {
				for (; batch && b < n; b++)
					sx_status_free(
						verdict[b]); /* past the quota: never filtered */
				i = end;
				break;
			}
			record_verdict(j, i, batch ? verdict[b] : filter_one(j, nis[b]));
			mine += j->state[i] == 1;
		}
	}
	flush_depths(j);
	sx__flush_evals(j->prof, EV_FILTER, SX_EP_FILTER);
	sx_fw_metrics_flush();
	if (mine == 0)
		return;
	uint32_t before = atomic_fetch_add(&j->found, mine);
	if (before + mine >= j->want)
		atomic_store_explicit(&j->stop, true, memory_order_relaxed);
	uint32_t excess = before >= j->want	    ? mine
			  : before + mine > j->want ? before + mine - j->want
						    : 0;
	for (uint32_t i = end; excess > 0 && i-- > start;) {
		if (j->state[i] == 1) {
			j->state[i] = 0; /* over the quota: discarded */
			excess--;
		}
	}
}

/* ---------- the cycle ---------- */

static int alloc_result(struct sx_cycle_result *res, const struct sx_profile *prof, uint32_t n)
{
	res->arena = sx_arena_new();
	if (!res->arena)
		return SX_ENOMEM;
	res->statuses = sx_arena_calloc(res->arena, n, sizeof(*res->statuses));
	res->evaluated = sx_arena_calloc(res->arena, n, sizeof(*res->evaluated));
	res->feasible = sx_arena_calloc(res->arena, n, sizeof(*res->feasible));
	res->nscore_plugins = prof->n[SX_PT_SCORE];
	res->score_plugins = prof->points[SX_PT_SCORE];
	res->score_skipped = sx_arena_calloc(res->arena, res->nscore_plugins, sizeof(bool));
	if (!res->statuses || !res->evaluated || !res->feasible || !res->score_skipped)
		return SX_ENOMEM;
	return 0;
}

/* Candidate snapshot indices: opts->candidates (names unknown to the
 * snapshot are left out: callers report them) or every node. */
static uint32_t *candidate_indices(struct sx_arena *arena, const struct sx_snapshot *snap,
				   const struct sx_cycle_opts *opts, uint32_t *n)
{
	uint32_t cap = opts->candidates ? opts->ncandidates : snap->nnodes;
	uint32_t *idx = sx_arena_alloc(arena, sizeof(*idx) * cap);
	*n = 0;
	if (!idx)
		return NULL;
	if (!opts->candidates) {
		for (uint32_t i = 0; i < snap->nnodes; i++)
			idx[(*n)++] = i;
		return idx;
	}
	for (uint32_t i = 0; i < opts->ncandidates; i++) {
		int at = sx_snapshot_find(snap, opts->candidates[i]);
		if (at >= 0)
			idx[(*n)++] = (uint32_t)at;
	}
	return idx;
}

static bool in_set(const struct sx_node_set *set, sx_str name)
{
	for (uint32_t i = 0; i < set->n; i++)
		if (set->names[i] == name)
			return true;
	return false;
}

/* Drops candidates outside the PreFilterResult, giving them the absent
 * status ([1.32+] "node(s) didn't satisfy plugin(s) [A]"). */
static int apply_pre_filter_result(struct sx_cycle_result *res, const struct sx_snapshot *snap,
				   const struct sx_node_set *set, const char **names,
				   unsigned nnames, uint32_t *cand, uint32_t *ncand)
{
	char list[512];
	uint32_t k = 0;
	format_plugin_list(list, sizeof(list), names, nnames);
	res->absent_status = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					   "node(s) didn't satisfy plugin(s) %s", list);
	if (!res->absent_status)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < *ncand; i++) {
		if (in_set(set, snap->nodes[cand[i]]->name))
			cand[k++] = cand[i];
		else
			res->statuses[cand[i]] = sx_status_clone(res->absent_status);
	}
	*ncand = k;
	return 0;
}

static uint32_t feasible_wanted(const struct sx_profile *prof, const struct sx_cycle_opts *opts,
				uint32_t ncand)
{
	if (opts->mode == SX_CYCLE_FILTER_ONLY)
		return ncand;
	if (prof->n[SX_PT_SCORE] == 0 && !opts->extenders && !opts->always_score)
		return ncand ? 1 : 0;
	int pct = opts->percentage;
	if (pct < 0)
		pct = prof->percentage_of_nodes_to_score >= 0 ? prof->percentage_of_nodes_to_score
							      : opts->global_percentage;
	return sx_num_feasible_nodes_to_find(pct, ncand);
}

/* Filters cand[] from the rotating start; fills res->feasible/statuses. */
static int run_filter_phase(const struct sx_profile *prof, struct sx_cycle_state *cs,
			    const struct sx_pod *pod, const struct sx_cycle_opts *opts,
			    struct sx_cycle_result *res, const uint32_t *cand, uint32_t ncand)
{
	uint32_t start = (opts->next_start_index && ncand) ? *opts->next_start_index % ncand : 0;
	struct sx_status **status = sx_arena_calloc(res->arena, ncand, sizeof(*status));
	uint8_t *state = sx_arena_calloc(res->arena, ncand, 1);
	if (!status || !state) {
		return SX_ENOMEM;
	}
	struct filter_job job = {.prof = prof,
				 .cs = cs,
				 .pod = pod,
				 .snap = cs->snap,
				 .nom = opts->nominator,
				 .cand = cand,
				 .ncand = ncand,
				 .start = start,
				 .status = status,
				 .state = state,
				 .want = feasible_wanted(prof, opts, ncand)};
	atomic_init(&job.found, 0);
	atomic_init(&job.error, false);
	atomic_init(&job.stop, job.want == 0);
	atomic_init(&job.hi, 0);
	job.nfilters = active_filters(prof, cs, job.filters);
	sx_pool_run_chunks(opts->pool, ncand, FILTER_CHUNK, filter_chunk, &job, &job.stop);
	uint32_t processed = 0, hi = atomic_load(&job.hi);
	for (uint32_t i = 0, pos = start; i < hi; i++, pos = pos + 1 == ncand ? 0 : pos + 1) {
		uint32_t at = cand[pos]; /* position i, stepped; state[] is 0 beyond hi */
		if (state[i] == 0)
			continue;
		processed++;
		res->evaluated[at] = true;
		if (state[i] == 1) {
			res->feasible[res->nfeasible++] = at;
			continue;
		}
		if (status[i]->code == SX_ERROR && !res->error) {
			res->error = status[i];
			continue;
		}
		if (res->statuses[at])
			sx_status_free(res->statuses[at]);
		res->statuses[at] = status[i];
	}
	if (opts->next_start_index && opts->mode == SX_CYCLE_FULL && cs->snap->nnodes)
		*opts->next_start_index = (start + processed) % cs->snap->nnodes;
	return 0;
}

static void set_error(struct sx_cycle_result *res, struct sx_status *st)
{
	if (!res->error)
		res->error = st;
	else
		sx_status_free(st);
}

/* Step 7 (evaluateNominatedNode): a pod nominated by an earlier
 * preemption tries that node alone first. True when it passed: it is the
 * only feasible node, nothing else is filtered or scored. Otherwise its
 * status is kept (the full search may replace it); an Error is dropped,
 * as upstream only logs it. Configured extenders (opts->ext) filter the
 * node too, as findNodesThatPassExtenders does there; without them a
 * cycle that only knows some extender exists (opts->extenders) skips the
 * fast path, as it does for a restricted candidate list. */
static bool nominated_fast_path(const struct sx_profile *prof, struct sx_cycle_state *cs,
				const struct sx_pod *pod, const struct sx_cycle_opts *opts,
				struct sx_cycle_result *res)
{
	struct sx_status *st = NULL;
	int idx;

	if (opts->mode != SX_CYCLE_FULL || pod->nominated_node == SX_STR_EMPTY ||
	    (opts->extenders && !opts->ext) || opts->candidates)
		return false;
	idx = sx_snapshot_find(cs->snap, pod->nominated_node);
	if (idx < 0)
		return false;
	if (prof->n[SX_PT_FILTER] > 0)
		st = sx_run_filters_with_nominated(prof, cs, pod, cs->snap->nodes[idx],
						   opts->nominator);
	sx_fw_metrics_flush();
	if (opts->next_start_index)
		*opts->next_start_index = (*opts->next_start_index + 1) % cs->snap->nnodes;
	if (st && st->code == SX_ERROR) {
		sx_status_free(st);
		return false;
	}
	res->evaluated[idx] = true;
	if (!sx_status_is_success(st)) {
		res->statuses[idx] = st;
		return false;
	}
	sx_status_free(st);
	res->feasible[res->nfeasible++] = (uint32_t)idx;
	if (opts->ext && (sx_extenders_filter(opts->ext, pod, res) < 0 || res->error)) {
		sx_status_free(res->error); /* logged upstream; the full search follows */
		res->error = NULL;
		res->nfeasible = 0;
	}
	return res->nfeasible == 1;
}

/* A cycle's part in opportunistic batching (batch.h). */
struct batch_cycle {
	struct sx_buf sig;	       /* the pod's signature */
	bool sig_ok;		       /* it has one */
	sx_str hint;		       /* GetNodeHint's node, or SX_STR_EMPTY */
	int hint_idx;		       /* its snapshot index when it failed Filter, else -1 */
	struct sx_status *hint_status; /* that failure, until the full search */
};

/* evaluateNominatedNode for the hinted node (findNodesThatFitPod tries
 * it as it tries a nominated node): true when it passes the filters (with
 * the nominated pods), then it is the only feasible node and nothing
 * else is filtered or scored, nor is the start index moved. Otherwise
 * its status is kept for the full search (bc->hint_status). */
static bool hint_fast_path(const struct sx_profile *prof, struct sx_cycle_state *cs,
			   const struct sx_pod *pod, const struct sx_cycle_opts *opts,
			   struct sx_cycle_result *res, struct batch_cycle *bc)
{
	struct sx_status *st = NULL;
	int idx = sx_snapshot_find(cs->snap, bc->hint);

	if (idx < 0 || opts->candidates)
		return false;
	if (prof->n[SX_PT_FILTER] > 0)
		st = sx_run_filters_with_nominated(prof, cs, pod, cs->snap->nodes[idx],
						   opts->nominator);
	sx_fw_metrics_flush();
	if (sx_status_is_success(st)) {
		sx_status_free(st);
		res->evaluated[idx] = true;
		res->feasible[res->nfeasible++] = (uint32_t)idx;
		return true;
	}
	if (st->code == SX_ERROR) { /* logged upstream; the full search follows */
		sx_status_free(st);
		return false;
	}
	bc->hint_idx = idx;
	bc->hint_status = st;
	return false;
}

/* After the full search: the hinted node's failure counts as evaluated
 * when the search did not reach it (upstream's diagnosis holds it, and
 * the start index moves past it too). */
static void hint_settle(const struct sx_cycle_opts *opts, struct sx_cycle_result *res,
			struct batch_cycle *bc)
{
	int idx = bc->hint_idx;

	if (idx < 0)
		return;
	if (res->evaluated[idx]) {
		sx_status_free(bc->hint_status);
	} else {
		/* its own failure, not the PreFilterResult's absent status */
		sx_status_free(res->statuses[idx]);
		res->evaluated[idx] = true;
		res->statuses[idx] = bc->hint_status;
		if (opts->next_start_index && res->num_all_nodes)
			*opts->next_start_index =
				(*opts->next_start_index + 1) % res->num_all_nodes;
	}
	bc->hint_status = NULL;
	bc->hint_idx = -1;
}

/* Steps 5-8: PreEnqueue, PreFilter and Filter. Returns 0; the outcome is in res. */
static int filter_phase(const struct sx_profile *prof, const struct sx_pod *pod,
			const struct sx_cycle_opts *opts, struct sx_cycle_result *res,
			struct batch_cycle *bc)
{
	struct sx_cycle_state *cs = res->state;
	struct sx_node_set *set = NULL;
	const char *set_plugins[SX_MAX_PLUGINS];
	unsigned nset = 0;
	uint32_t ncand;
	struct sx_status *st = opts->skip_pre_enqueue ? NULL : sx_run_pre_enqueue(prof, pod);
	if (!st) {
		uint64_t t0 = sx_fw_metrics_now();
		st = run_pre_filter(prof, cs, pod, &set, set_plugins, &nset);
		sx_fw_metrics_point(prof, SX_EP_PRE_FILTER, sx_status_code(st),
				    sx_fw_metrics_now() - t0);
	}
	if (st) {
		free_node_set(set);
		if (sx_status_is_rejected(st))
			res->pre_filter = st;
		else
			set_error(res, st);
		return 0;
	}
	if (bc) {
		/* GetNodeHint even for a nominated pod, as upstream */
		bc->sig_ok = sx_batch_sign(opts->batch, pod, &bc->sig, cs->record_plugin_metrics);
		bc->hint = sx_batch_hint(opts->batch, pod, bc->sig_ok ? &bc->sig : NULL, cs,
					 opts->cycle);
	}
	if (nominated_fast_path(prof, cs, pod, opts, res)) {
		free_node_set(set);
		return 0;
	}
	if (bc && bc->hint != SX_STR_EMPTY && pod->nominated_node == SX_STR_EMPTY &&
	    hint_fast_path(prof, cs, pod, opts, res, bc)) {
		free_node_set(set);
		return 0;
	}
	uint32_t *cand = candidate_indices(res->arena, cs->snap, opts, &ncand);
	int rc = cand ? 0 : SX_ENOMEM;
	if (!rc && set)
		rc = apply_pre_filter_result(res, cs->snap, set, set_plugins, nset, cand, &ncand);
	if (!rc)
		rc = run_filter_phase(prof, cs, pod, opts, res, cand, ncand);
	if (bc)
		hint_settle(opts, res, bc);
	if (!rc && opts->ext && opts->mode == SX_CYCLE_FULL && !res->error)
		rc = sx_extenders_filter(opts->ext, pod, res);
	free_node_set(set);
	return rc;
}

static int schedule(const struct sx_profile *prof, const struct sx_pod *pod,
		    const struct sx_cycle_opts *opts, struct sx_cycle_result *res,
		    struct batch_cycle *bc);

int sx_schedule(const struct sx_profile *prof, const struct sx_pod *pod,
		const struct sx_cycle_opts *opts, struct sx_cycle_result *res)
{
	struct batch_cycle bc = {.hint = SX_STR_EMPTY, .hint_idx = -1};
	bool batching = opts->batch && opts->mode == SX_CYCLE_FULL;
	int rc;

	if (!batching)
		return schedule(prof, pod, opts, res, NULL);
	sx_buf_init(&bc.sig);
	rc = schedule(prof, pod, opts, res, &bc);
	/* StoreScheduleResults: a node was chosen (schedulePod succeeded) */
	if (rc == 0 && res->selected >= 0 && !res->error)
		sx_batch_store(opts->batch, bc.sig_ok ? &bc.sig : NULL, bc.hint, res, opts->cycle,
			       opts->rng);
	sx_status_free(bc.hint_status);
	sx_buf_free(&bc.sig);
	return rc;
}

static int schedule(const struct sx_profile *prof, const struct sx_pod *pod,
		    const struct sx_cycle_opts *opts, struct sx_cycle_result *res,
		    struct batch_cycle *bc)
{
	const struct sx_snapshot *snap = opts->snap;
	memset(res, 0, sizeof(*res));
	res->selected = -1;
	res->num_all_nodes = snap->nnodes;
	res->state = sx_cycle_state_new(snap);
	if (!res->state || alloc_result(res, prof, snap->nnodes) < 0)
		return SX_ENOMEM;
	res->state->record_plugin_metrics = sx_fw_metrics_sample();
	if (opts->mode == SX_CYCLE_SCORE_ONLY) {
		uint32_t *cand = candidate_indices(res->arena, snap, opts, &res->nfeasible);
		if (!cand)
			return SX_ENOMEM;
		memcpy(res->feasible, cand, sizeof(*cand) * res->nfeasible);
	} else {
		if (snap->nnodes == 0 && opts->mode == SX_CYCLE_FULL) {
			res->error = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
						   "no nodes available to schedule pods");
			res->message = sx_strdup("no nodes available to schedule pods");
			return 0;
		}
		if (filter_phase(prof, pod, opts, res, bc) < 0)
			return SX_ENOMEM;
		if (res->error)
			return 0;
		if (res->pre_filter || res->nfeasible == 0) {
			if (opts->mode == SX_CYCLE_FULL)
				res->message = sx_fit_error_message(res, NULL);
			return 0;
		}
		if (opts->mode == SX_CYCLE_FILTER_ONLY)
			return 0;
	}
	if (res->nfeasible >= 2 || opts->always_score || opts->mode == SX_CYCLE_SCORE_ONLY) {
		struct sx_status *st = sx__score_nodes(prof, res->state, pod, opts, res);
		if (st) {
			set_error(res, st);
			return 0;
		}
		if (opts->ext && opts->mode == SX_CYCLE_FULL)
			sx_extenders_prioritize(opts->ext, pod, res);
	}
	if (opts->mode == SX_CYCLE_FULL)
		res->selected = res->nfeasible == 1 ? (int)res->feasible[0]
						    : sx__select_host(res, opts->rng);
	return 0;
}

void sx_cycle_result_free(struct sx_cycle_result *res)
{
	if (!res)
		return;
	if (res->statuses)
		for (uint32_t i = 0; i < res->num_all_nodes; i++)
			if (res->statuses[i]) /* mostly NULL: no call per node */
				sx_status_free(res->statuses[i]);
	sx_status_free(res->pre_filter);
	sx_status_free(res->error);
	sx_status_free(res->absent_status);
	free(res->message);
	/* Every array of the result, and the cycle's scratch lists. */
	sx_arena_free(res->arena);
	/* The state's plugin slots are freed by their owners' state_free. */
	sx_cycle_state_free(NULL, res->state);
	memset(res, 0, sizeof(*res));
	res->selected = -1;
}
