/* The scheduling cycle (reference plugins.md §1.2-1.8): PreEnqueue check,
 * PreFilter, parallel Filter with early stop and rotating start index,
 * PreScore/Score/NormalizeScore with weights, host selection. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/arena.h"
#include "schedext/pool.h"
#include "schedext/framework_metrics.h"
#include "schedext/fit_error.h"
#include "schedext/registry.h"

#define MAX_NOMINATED 256

/* ---------- metrics (include/schedext/framework_metrics.h) ---------- */

/* Filter and Score calls counted on the calling thread and published once
 * per chunk: a shared counter per call would bounce between the threads. */
static _Thread_local uint32_t tl_evals[2][SX_MAX_PLUGINS];
static _Thread_local uint64_t tl_evals_used[2]; /* bit p: tl_evals[.][p] > 0 */
enum { EV_FILTER, EV_SCORE };

_Static_assert(SX_MAX_PLUGINS <= 64, "tl_evals_used has a bit per plugin");

static inline void count_eval(int which, unsigned plugin)
{
	tl_evals[which][plugin]++;
	tl_evals_used[which] |= 1ull << plugin;
}

static void flush_evals(const struct sx_profile *prof, int which, enum sx_ext_point ep)
{
	for (uint64_t m = tl_evals_used[which]; m; m &= m - 1) {
		unsigned p = (unsigned)__builtin_ctzll(m);

		sx_fw_metrics_evals(prof, (int)p, ep, tl_evals[which][p]);
		tl_evals[which][p] = 0;
	}
	tl_evals_used[which] = 0;
}

/* Start of a timed call: 0 (not timed) unless the cycle is sampled. */
static inline uint64_t plugin_clock(const struct sx_cycle_state *cs)
{
	return cs->record_plugin_metrics ? sx_fw_metrics_ticks() : 0;
}

static inline void plugin_done(uint64_t t0, int plugin, enum sx_ext_point ep,
			       const struct sx_status *st)
{
	if (t0)
		sx_fw_metrics_plugin(plugin, ep, sx_status_code(st), sx_fw_metrics_ticks() - t0);
}

/* Ends a call timed from t (0: not timed) and returns the start of the
 * next: the plugins of one node share each clock read. */
static inline uint64_t plugin_lap(uint64_t t, int plugin, enum sx_ext_point ep,
				  const struct sx_status *st)
{
	uint64_t now;

	if (!t)
		return 0;
	now = sx_fw_metrics_ticks();
	sx_fw_metrics_plugin(plugin, ep, sx_status_code(st), now - t);
	return now;
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

/* PreFilter of every plugin (plugins.md §1.3). *result receives the merged
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
			return sx_status_as_error(st, "running PreFilter plugin \"%s\": %s", e[i].plugin->name);
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

struct sx_status *sx_run_filters(const struct sx_profile *prof, const struct sx_cycle_state *cs,
				 const struct sx_pod *pod, const struct sx_node_info *ni)
{
	const struct sx_enabled *e = prof->points[SX_PT_FILTER];
	uint64_t t = plugin_clock(cs);
	for (unsigned i = 0; i < prof->n[SX_PT_FILTER]; i++) {
		if (cs->skip_filter[e[i].index])
			continue;
		count_eval(EV_FILTER, e[i].index);
		struct sx_status *st = e[i].plugin->filter(e[i].self, cs, pod, ni);
		t = plugin_lap(t, e[i].index, SX_EP_FILTER, st);
		if (sx_status_is_success(st)) {
			sx_status_free(st);
			continue;
		}
		if (sx_status_is_rejected(st))
			return attach(st, e[i].plugin->name);
		return sx_status_as_error(st, "running \"%s\" filter plugin: %s", e[i].plugin->name);
	}
	return NULL;
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
			return sx_status_as_error(st, add ? "running AddPod on PreFilter plugin \"%s\": %s"
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

/* Pass 1 of §1.5: filters on a copy with the nominated pods added. */
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

struct sx_status *sx_run_filters_with_nominated(const struct sx_profile *prof,
						const struct sx_cycle_state *cs,
						const struct sx_pod *pod,
						const struct sx_node_info *ni,
						const struct sx_nominator *nom)
{
	const struct sx_pod *found[MAX_NOMINATED];
	const struct sx_pod *keep[MAX_NOMINATED];
	uint32_t n = 0, k = 0;
	if (nom && nom->pods_for_node)
		n = nom->pods_for_node(nom->ctx, ni->name, found, MAX_NOMINATED);
	for (uint32_t i = 0; i < n; i++)
		if (found[i]->priority >= pod->priority && !same_pod(found[i], pod))
			keep[k++] = found[i];
	if (k > 0) {
		struct sx_status *st = filter_with_nominated_added(prof, cs, pod, ni, keep, k);
		if (!sx_status_is_success(st))
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
	bool labels;                  /* prefetch all label lines (reads_labels) */
	const uint32_t *cand;         /* snapshot indices of the candidates */
	uint32_t ncand, start;        /* order position i is cand[(start + i) % ncand] */
	struct sx_status **status;    /* per order position */
	uint8_t *state;               /* per order position: 0 skipped, 1 pass, 2 fail */
	uint32_t want;                /* feasible nodes to find */
	atomic_uint found;
	atomic_bool error;
	atomic_bool stop;             /* want reached or error: start no more chunks */
	atomic_uint hi;               /* positions >= hi were never started */
};

/* Snapshot index of order position i (no division: start < ncand). */
static uint32_t order_at(const struct filter_job *j, uint32_t i)
{
	uint32_t pos = j->start + i;

	return j->cand[pos >= j->ncand ? pos - j->ncand : pos];
}

/* Starts loading the NodeInfos a chunk will read (4 lines each: node,
 * requested, nonzero sums, image filter), then each one's node before it
 * is needed: a cycle visits ~500 of 5000 nodes whose data is rarely still
 * in cache, and the loads otherwise come one miss after another. */
static void prefetch_node_info(const struct sx_node_info *ni)
{
	const char *p = (const char *)ni;

	for (size_t off = 0; off < sizeof(*ni); off += 64)
		__builtin_prefetch(p + off);
}

static void prefetch_node(const struct sx_node_info *ni)
{
	const char *p = (const char *)ni->node;

	if (!p)
		return;
	for (size_t off = 0; off < sizeof(struct sx_node); off += 64)
		__builtin_prefetch(p + off);
}

/* The node's separately allocated taints and labels (TaintToleration
 * reads the taints of every node; affinity and spreading the labels);
 * call once the node itself had time to arrive. all_labels: the pod's
 * plugins look labels up (binary search: the middle first), so every
 * line of them, not only the first. */
static void prefetch_node_taints(const struct sx_node_info *ni, bool all_labels)
{
	const struct sx_labels *l;

	if (!ni->node)
		return;
	if (ni->node->ntaints > 0)
		__builtin_prefetch(ni->node->taints);
	l = &ni->node->meta.labels;
	__builtin_prefetch(l->items);
	for (size_t off = 64; all_labels && off < l->n * sizeof(*l->items); off += 64)
		__builtin_prefetch((const char *)l->items + off);
}

/* Whether Filter will look the nodes' labels up for pod: node selector or
 * affinity, spreading, claims (VolumeBinding's PV node affinity,
 * VolumeZone). Only a prefetch hint. */
static bool reads_labels(const struct sx_pod *pod)
{
	return pod->node_selector.n > 0 || pod->affinity || pod->nspread > 0 ||
	       pod->npvcs > 0;
}

/* Runs the filters on order position i: true when the node passed;
 * otherwise its status is recorded (state 2). */
static bool filter_one(struct filter_job *j, uint32_t i)
{
	const struct sx_node_info *ni = j->snap->nodes[order_at(j, i)];
	struct sx_status *st;
	if (j->prof->n[SX_PT_FILTER] == 0)
		st = NULL;
	else
		st = sx_run_filters_with_nominated(j->prof, j->cs, j->pod, ni, j->nom);
	if (sx_status_is_success(st)) {
		sx_status_free(st);
		return true;
	}
	if (st && st->code == SX_ERROR) {
		atomic_store(&j->error, true);
		atomic_store_explicit(&j->stop, true, memory_order_relaxed);
	}
	j->status[i] = st;
	j->state[i] = 2;
	return false;
}

/* Filters order positions [start, end) until `want` nodes passed overall.
 * Passing nodes are tallied locally and published once per chunk: a
 * shared counter bumped per node moved its cache line between the
 * threads on every node. The quota check reads the shared count plus the
 * local tally, so one thread keeps exactly the first `want` passing nodes
 * in order; with several, passes beyond the quota are discarded, as
 * upstream does. */
static void filter_chunk(void *ctx, uint32_t start, uint32_t end, unsigned worker)
{
	struct filter_job *j = ctx;
	uint32_t mine = 0, hi = atomic_load_explicit(&j->hi, memory_order_relaxed);
	(void)worker;
	while (hi < end && !atomic_compare_exchange_weak(&j->hi, &hi, end))
		;
	for (uint32_t i = start; i < end; i++)
		prefetch_node_info(j->snap->nodes[order_at(j, i)]);
	prefetch_node(j->snap->nodes[order_at(j, start)]);
	if (start + 1 < end)
		prefetch_node(j->snap->nodes[order_at(j, start + 1)]);
	for (uint32_t i = start; i < end; i++) {
		if (atomic_load_explicit(&j->found, memory_order_relaxed) + mine >= j->want ||
		    atomic_load(&j->error))
			break;
		if (i + 2 < end)
			prefetch_node(j->snap->nodes[order_at(j, i + 2)]);
		if (i + 1 < end)
			prefetch_node_taints(j->snap->nodes[order_at(j, i + 1)], j->labels);
		if (filter_one(j, i)) {
			j->state[i] = 1;
			mine++;
		}
	}
	flush_evals(j->prof, EV_FILTER, SX_EP_FILTER);
	sx_fw_metrics_flush();
	if (mine == 0)
		return;
	uint32_t before = atomic_fetch_add(&j->found, mine);
	if (before + mine >= j->want)
		atomic_store_explicit(&j->stop, true, memory_order_relaxed);
	uint32_t excess = before >= j->want ? mine : before + mine > j->want ? before + mine - j->want : 0;
	for (uint32_t i = end; excess > 0 && i-- > start;) {
		if (j->state[i] == 1) {
			j->state[i] = 0; /* over the quota: discarded */
			excess--;
		}
	}
}

/* ---------- scoring ---------- */

struct score_job {
	const struct sx_profile *prof;
	const struct sx_cycle_state *cs;
	const struct sx_pod *pod;
	const struct sx_snapshot *snap;
	struct sx_cycle_result *res;
	struct sx_status **errors; /* per feasible node, first error */
};

static void score_one(struct score_job *j, uint32_t i)
{
	struct sx_cycle_result *res = j->res;
	const struct sx_enabled *e = res->score_plugins;
	const struct sx_node_info *ni = j->snap->nodes[res->feasible[i]];
	uint64_t t = plugin_clock(j->cs);
	for (uint32_t p = 0; p < res->nscore_plugins; p++) {
		int64_t score = 0;
		if (res->score_skipped[p])
			continue;
		count_eval(EV_SCORE, e[p].index);
		struct sx_status *st = e[p].plugin->score(e[p].self, j->cs, j->pod, ni, &score);
		t = plugin_lap(t, e[p].index, SX_EP_SCORE, st);
		if (!sx_status_is_success(st)) {
			if (!j->errors[i])
				j->errors[i] = sx_status_as_error(st, "plugin \"%s\" failed with: %s",
							e[p].plugin->name);
			else
				sx_status_free(st);
			return;
		}
		sx_status_free(st);
		res->raw[(size_t)i * res->nscore_plugins + p] = score;
	}
}

static void score_chunk(void *ctx, uint32_t start, uint32_t end, unsigned worker)
{
	struct score_job *j = ctx;
	const uint32_t *feasible = j->res->feasible;
	(void)worker;
	for (uint32_t i = start; i < end; i++)
		prefetch_node_info(j->snap->nodes[feasible[i]]);
	prefetch_node(j->snap->nodes[feasible[start]]);
	if (start + 1 < end)
		prefetch_node(j->snap->nodes[feasible[start + 1]]);
	for (uint32_t i = start; i < end; i++) {
		if (i + 2 < end)
			prefetch_node(j->snap->nodes[feasible[i + 2]]);
		if (i + 1 < end)
			prefetch_node_taints(j->snap->nodes[feasible[i + 1]], false);
		score_one(j, i);
	}
	flush_evals(j->prof, EV_SCORE, SX_EP_SCORE);
	sx_fw_metrics_flush();
}

static struct sx_status *run_pre_score(const struct sx_profile *prof, struct sx_cycle_state *cs,
				       const struct sx_pod *pod, struct sx_cycle_result *res,
				       struct sx_node_info **nodes)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_SCORE];
	for (unsigned i = 0; i < prof->n[SX_PT_PRE_SCORE]; i++) {
		uint64_t t0 = plugin_clock(cs);
		struct sx_status *st = e[i].plugin->pre_score(e[i].self, cs, pod, nodes, res->nfeasible);
		enum sx_code code = sx_status_code(st);
		plugin_done(t0, e[i].index, SX_EP_PRE_SCORE, st);
		if (code != SX_SKIP)
			sx_fw_metrics_evals(prof, e[i].index, SX_EP_PRE_SCORE, 1);
		if (code == SX_SKIP) {
			cs->skip_score[e[i].index] = true;
		} else if (code != SX_SUCCESS) {
			return sx_status_as_error(st, "running PreScore plugin \"%s\": %s", e[i].plugin->name);
		}
		sx_status_free(st);
	}
	for (uint32_t p = 0; p < res->nscore_plugins; p++)
		res->score_skipped[p] = cs->skip_score[res->score_plugins[p].index];
	return NULL;
}

static struct sx_status *normalize_scores(struct sx_cycle_result *res,
					  const struct sx_cycle_state *cs, const struct sx_pod *pod)
{
	uint32_t np = res->nscore_plugins, nf = res->nfeasible;
	struct sx_node_score *list = sx_arena_alloc(res->arena, sizeof(*list) * nf);
	sx_str *names = sx_arena_alloc(res->arena, sizeof(*names) * nf);
	if (!list || !names)
		return sx_status_oom();
	/* Once, not per plugin: each is a NodeInfo load. */
	for (uint32_t i = 0; i < nf; i++)
		names[i] = cs->snap->nodes[res->feasible[i]]->name;
	for (uint32_t p = 0; p < np; p++) {
		const struct sx_enabled *e = &res->score_plugins[p];
		if (res->score_skipped[p])
			continue;
		for (uint32_t i = 0; i < nf; i++) {
			list[i].node = names[i];
			list[i].score = res->raw[(size_t)i * np + p];
		}
		if (e->plugin->normalize_score) {
			struct sx_status *st =
				e->plugin->normalize_score(e->self, cs, pod, list, nf);
			if (!sx_status_is_success(st)) {
				return sx_status_as_error(st, "running Normalize on Score plugin \"%s\": %s",
						e->plugin->name);
			}
		}
		for (uint32_t i = 0; i < nf; i++) {
			if (list[i].score < SX_MIN_NODE_SCORE || list[i].score > SX_MAX_NODE_SCORE) {
				struct sx_status *st = sx_status_new(
					SX_ERROR,
					"plugin \"%s\" returns an invalid score %lld, it should in the range of [%d, %d] after normalizing",
					e->plugin->name, (long long)list[i].score, SX_MIN_NODE_SCORE,
					SX_MAX_NODE_SCORE);
				return st;
			}
			res->normalized[(size_t)i * np + p] = list[i].score;
			res->totals[i] += list[i].score * e->weight;
		}
	}
	return NULL;
}

static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* selectHost: reservoir sampling among the highest totals (§1.8). */
static int select_host(const struct sx_cycle_result *res, uint64_t *rng)
{
	uint64_t local = 0x2545F4914F6CDD1Dull;
	uint64_t *state = rng ? rng : &local;
	int best = -1;
	int64_t max = 0;
	uint64_t ties = 0;
	for (uint32_t i = 0; i < res->nfeasible; i++) {
		if (best < 0 || res->totals[i] > max) {
			best = (int)i;
			max = res->totals[i];
			ties = 1;
		} else if (res->totals[i] == max) {
			ties++;
			if (next_random(state) % ties == 0)
				best = (int)i;
		}
	}
	return best < 0 ? -1 : (int)res->feasible[best];
}

static struct sx_status *score_nodes(const struct sx_profile *prof, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, const struct sx_cycle_opts *opts,
				     struct sx_cycle_result *res)
{
	uint32_t nf = res->nfeasible, np = res->nscore_plugins;
	size_t cells = (size_t)nf * np;
	struct sx_node_info **nodes = sx_arena_alloc(res->arena, sizeof(*nodes) * nf);
	struct sx_status **errors = sx_arena_calloc(res->arena, nf, sizeof(*errors));
	struct sx_status *st = NULL;
	res->raw = sx_arena_calloc(res->arena, cells, sizeof(int64_t));
	res->normalized = sx_arena_calloc(res->arena, cells, sizeof(int64_t));
	res->totals = sx_arena_calloc(res->arena, nf, sizeof(int64_t));
	if (!nodes || !errors || !res->raw || !res->normalized || !res->totals) {
		st = sx_status_oom();
		goto out;
	}
	for (uint32_t i = 0; i < nf; i++)
		nodes[i] = cs->snap->nodes[res->feasible[i]];
	uint64_t t0 = sx_fw_metrics_now();
	st = run_pre_score(prof, cs, pod, res, nodes);
	sx_fw_metrics_point(prof, SX_EP_PRE_SCORE, sx_status_code(st), sx_fw_metrics_now() - t0);
	if (st)
		goto out;
	t0 = sx_fw_metrics_now();
	struct score_job job = { prof, cs, pod, cs->snap, res, errors };
	sx_pool_run_chunks(opts->pool, nf, score_chunk, &job, NULL);
	for (uint32_t i = 0; i < nf && !st; i++) {
		st = errors[i];
		errors[i] = NULL;
	}
	if (!st)
		st = normalize_scores(res, cs, pod);
	sx_fw_metrics_point(prof, SX_EP_SCORE, sx_status_code(st), sx_fw_metrics_now() - t0);
out:
	if (errors)
		for (uint32_t i = 0; i < nf; i++)
			sx_status_free(errors[i]);
	return st;
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
	struct filter_job job = { .prof = prof, .cs = cs, .pod = pod, .snap = cs->snap,
				  .nom = opts->nominator, .labels = reads_labels(pod),
				  .cand = cand, .ncand = ncand,
				  .start = start, .status = status, .state = state,
				  .want = feasible_wanted(prof, opts, ncand) };
	atomic_init(&job.found, 0);
	atomic_init(&job.error, false);
	atomic_init(&job.stop, job.want == 0);
	atomic_init(&job.hi, 0);
	sx_pool_run_chunks(opts->pool, ncand, filter_chunk, &job, &job.stop);
	uint32_t processed = 0, hi = atomic_load(&job.hi);
	for (uint32_t i = 0; i < hi; i++) { /* state[] is 0 beyond hi */
		uint32_t at = order_at(&job, i);
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

/* Steps 5-8: PreEnqueue, PreFilter and Filter. Returns 0; the outcome is in res. */
static int filter_phase(const struct sx_profile *prof, const struct sx_pod *pod,
			const struct sx_cycle_opts *opts, struct sx_cycle_result *res)
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
	if (nominated_fast_path(prof, cs, pod, opts, res)) {
		free_node_set(set);
		return 0;
	}
	uint32_t *cand = candidate_indices(res->arena, cs->snap, opts, &ncand);
	int rc = cand ? 0 : SX_ENOMEM;
	if (!rc && set)
		rc = apply_pre_filter_result(res, cs->snap, set, set_plugins, nset, cand, &ncand);
	if (!rc)
		rc = run_filter_phase(prof, cs, pod, opts, res, cand, ncand);
	if (!rc && opts->ext && opts->mode == SX_CYCLE_FULL && !res->error)
		rc = sx_extenders_filter(opts->ext, pod, res);
	free_node_set(set);
	return rc;
}

int sx_schedule(const struct sx_profile *prof, const struct sx_pod *pod,
		const struct sx_cycle_opts *opts, struct sx_cycle_result *res)
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
		if (filter_phase(prof, pod, opts, res) < 0)
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
		struct sx_status *st = score_nodes(prof, res->state, pod, opts, res);
		if (st) {
			set_error(res, st);
			return 0;
		}
		if (opts->ext && opts->mode == SX_CYCLE_FULL)
			sx_extenders_prioritize(opts->ext, pod, res);
	}
	if (opts->mode == SX_CYCLE_FULL)
		res->selected = res->nfeasible == 1 ? (int)res->feasible[0]
						    : select_host(res, opts->rng);
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
