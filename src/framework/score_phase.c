/* The score phase of the scheduling cycle (upstream schedule_one.go prioritizeNodes, selectHost):
 * PreScore, Score in parallel over the feasible nodes, NormalizeScore with
 * weights, and host selection among the best totals. */
#include <stdlib.h>

#include "schedext/arena.h"
#include "schedext/framework.h"
#include "schedext/framework_metrics.h"
#include "schedext/pool.h"
#include "framework_int.h"

/* Starts loading the NodeInfos a chunk will score (4 lines each: node,
 * requested, nonzero sums, image filter), then each one's node before it
 * is needed: the feasible nodes' data is rarely still in cache, and the
 * loads otherwise come one miss after another. */
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

/* The node's separately allocated taints and the first line of its
 * labels (TaintToleration scores the taints of every node); call once
 * the node itself had time to arrive. */
static void prefetch_node_taints(const struct sx_node_info *ni)
{
	if (!ni->node)
		return;
	if (ni->node->ntaints > 0)
		__builtin_prefetch(ni->node->taints);
	__builtin_prefetch(ni->node->meta.labels.items);
}

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
				j->errors[i] = sx_status_as_error(
					st, "plugin \"%s\" failed with: %s", e[p].plugin->name);
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
			prefetch_node_taints(j->snap->nodes[feasible[i + 1]]);
		score_one(j, i);
	}
	sx__flush_evals(j->prof, EV_SCORE, SX_EP_SCORE);
	sx_fw_metrics_flush();
}

static struct sx_status *run_pre_score(const struct sx_profile *prof, struct sx_cycle_state *cs,
				       const struct sx_pod *pod, struct sx_cycle_result *res,
				       struct sx_node_info **nodes)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_SCORE];
	for (unsigned i = 0; i < prof->n[SX_PT_PRE_SCORE]; i++) {
		uint64_t t0 = plugin_clock(cs);
		struct sx_status *st =
			e[i].plugin->pre_score(e[i].self, cs, pod, nodes, res->nfeasible);
		enum sx_code code = sx_status_code(st);
		plugin_done(t0, e[i].index, SX_EP_PRE_SCORE, st);
		if (code != SX_SKIP)
			sx_fw_metrics_evals(prof, e[i].index, SX_EP_PRE_SCORE, 1);
		if (code == SX_SKIP) {
			cs->skip_score[e[i].index] = true;
		} else if (code != SX_SUCCESS) {
			return sx_status_as_error(st, "running PreScore plugin \"%s\": %s",
						  e[i].plugin->name);
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
				return sx_status_as_error(
					st, "running Normalize on Score plugin \"%s\": %s",
					e->plugin->name);
			}
		}
		for (uint32_t i = 0; i < nf; i++) {
			if (list[i].score < SX_MIN_NODE_SCORE ||
			    list[i].score > SX_MAX_NODE_SCORE) {
				struct sx_status *st = sx_status_new(
					SX_ERROR,
					"plugin \"%s\" returns an invalid score %lld, it should in "
					"the range of [%d, %d] after normalizing",
					e->plugin->name, (long long)list[i].score,
					SX_MIN_NODE_SCORE, SX_MAX_NODE_SCORE);
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

bool sx__tie_pick(uint64_t *rng, uint64_t ties)
{
	uint64_t local = 0x2545F4914F6CDD1Dull;

	return next_random(rng ? rng : &local) % ties == 0;
}

/* selectHost: reservoir sampling among the highest totals (schedule_one.go). */
int sx__select_host(const struct sx_cycle_result *res, uint64_t *rng)
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
			if (sx__tie_pick(state, ties))
				best = (int)i;
		}
	}
	return best < 0 ? -1 : (int)res->feasible[best];
}

struct sx_status *sx__score_nodes(const struct sx_profile *prof, struct sx_cycle_state *cs,
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
	struct score_job job = {prof, cs, pod, cs->snap, res, errors};
	sx_pool_run_chunks(opts->pool, nf, 0, score_chunk, &job, NULL);
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
