/* The explain report (include/schedext/explain.h). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/dra_alloc.h"
#include "schedext/explain.h"
#include "schedext/post_filter.h"

/* What PostFilter says as a dry run when no node fits: the outcome the
 * standalone scheduler's FailedScheduling event is made from (message,
 * nomination, DefaultPreemption's victims), and per victim whether
 * evicting it violates a PodDisruptionBudget. */
struct post_filter_report {
	struct sx_fit_outcome fo;
	bool *violating;
};

/* Indices of the candidate nodes sorted by name (stable output order). */
struct name_index {
	const char *name;
	uint32_t at;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct name_index *)a)->name, ((const struct name_index *)b)->name);
}

static struct name_index *sorted_nodes(const struct sx_snapshot *snap, const uint32_t *idx,
				       uint32_t n)
{
	struct name_index *out = malloc(sizeof(*out) * (n ? n : 1));
	if (!out)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		out[i] = (struct name_index){ sx_str_get(snap->nodes[idx[i]]->name), idx[i] };
	qsort(out, n, sizeof(*out), cmp_name);
	return out;
}

static void write_status(struct sx_buf *b, const struct sx_status *st)
{
	sx_buf_puts(b, "{\"plugin\":");
	if (st->plugin)
		sx_json_str(b, st->plugin);
	else
		sx_buf_puts(b, "null");
	sx_buf_puts(b, ",\"code\":");
	sx_json_str(b, sx_code_name(st->code));
	sx_buf_puts(b, ",\"reasons\":[");
	for (unsigned r = 0; r < st->nreasons; r++) {
		if (r)
			sx_buf_putc(b, ',');
		sx_json_str(b, st->reasons[r]);
	}
	sx_buf_puts(b, "]}");
}

/* Status of candidate node `at`: its own, or the PreFilter rejection. */
static const struct sx_status *node_status(const struct sx_cycle_result *res, uint32_t at)
{
	if (res->pre_filter)
		return res->pre_filter;
	return res->statuses[at];
}

/* Position of snapshot index `at` among the feasible nodes, or -1. */
static int feasible_pos(const struct sx_cycle_result *res, uint32_t at)
{
	for (uint32_t i = 0; i < res->nfeasible; i++)
		if (res->feasible[i] == at)
			return (int)i;
	return -1;
}

static void write_scores_json(struct sx_buf *b, const struct sx_cycle_result *res, int pos)
{
	uint32_t np = res->nscore_plugins;
	sx_buf_puts(b, "{\"total\":");
	sx_buf_int(b, res->totals ? res->totals[pos] : 0);
	sx_buf_puts(b, ",\"plugins\":{");
	bool first = true;
	for (uint32_t p = 0; p < np && res->raw; p++) {
		if (res->score_skipped[p])
			continue;
		const struct sx_enabled *e = &res->score_plugins[p];
		int64_t norm = res->normalized[(size_t)pos * np + p];
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_key(b, e->plugin->name);
		sx_buf_puts(b, "{\"raw\":");
		sx_buf_int(b, res->raw[(size_t)pos * np + p]);
		sx_buf_puts(b, ",\"normalized\":");
		sx_buf_int(b, norm);
		sx_buf_puts(b, ",\"weight\":");
		sx_buf_int(b, e->weight);
		sx_buf_puts(b, ",\"weighted\":");
		sx_buf_int(b, norm * e->weight);
		sx_buf_puts(b, "}");
	}
	sx_buf_puts(b, "}}");
}

static void write_victims_json(struct sx_buf *b, const struct post_filter_report *pf)
{
	char key[512];
	sx_buf_puts(b, "[");
	for (uint32_t i = 0; i < pf->fo.preemption.victims.n; i++) {
		const struct sx_pod *v = pf->fo.preemption.victims.pods[i];
		sx_buf_puts(b, i ? ",{\"pod\":" : "{\"pod\":");
		sx_json_str(b, sx_pod_key(v, key, sizeof(key)));
		sx_buf_printf(b, ",\"priority\":%d,\"pdbViolated\":%s}", v->priority,
			      pf->violating && pf->violating[i] ? "true" : "false");
	}
	sx_buf_puts(b, "]");
}

/* "postFilter":{"plugin","code","message","nominatedNode","victims"}:
 * the plugin that succeeded or first rejected, the final status's code
 * and message (the FitError's PostFilterMsg), as RunPostFilterPlugins
 * returns them. */
static void write_post_filter_json(struct sx_buf *b, const struct post_filter_report *pf)
{
	char msg[4096];
	const struct sx_status *st = pf->fo.status;
	sx_buf_puts(b, ",\"postFilter\":{\"plugin\":");
	if (pf->fo.plugin)
		sx_json_str(b, pf->fo.plugin);
	else
		sx_buf_puts(b, "null");
	sx_buf_puts(b, ",\"code\":");
	sx_json_str(b, sx_code_name(st ? st->code : SX_SUCCESS));
	sx_buf_puts(b, ",\"message\":");
	if (st)
		sx_json_str(b, sx_status_message(st, msg, sizeof(msg)));
	else
		sx_buf_puts(b, "null");
	sx_buf_puts(b, ",\"nominatedNode\":");
	if (!st && pf->fo.nominated_node != SX_STR_EMPTY)
		sx_json_str(b, sx_str_get(pf->fo.nominated_node));
	else
		sx_buf_puts(b, "null");
	sx_buf_puts(b, ",\"victims\":");
	write_victims_json(b, pf);
	sx_buf_puts(b, "}");
}

/* ,"deviceAllocations":[...] for the selected node of a pod with claims. */
static void write_devices_json(struct sx_buf *b, const struct sx_explain_opts *o,
			       const struct sx_cycle_result *res)
{
	cJSON *d = res->selected >= 0 && res->state
			   ? sx_dra_explain_devices(res->state, o->snap->nodes[res->selected]->node)
			   : NULL;
	char *text = d ? cJSON_PrintUnformatted(d) : NULL;

	if (text) {
		sx_buf_puts(b, ",\"deviceAllocations\":");
		sx_buf_puts(b, text);
	}
	cJSON_free(text);
	cJSON_Delete(d);
}

static void write_json(struct sx_buf *b, const struct sx_explain_opts *o, const struct sx_pod *pod,
		       const struct sx_cycle_result *res, const struct post_filter_report *pf,
		       const struct name_index *nodes, uint32_t n)
{
	char key[512];
	sx_buf_puts(b, "{\"pod\":");
	sx_json_str(b, sx_pod_key(pod, key, sizeof(key)));
	sx_buf_puts(b, ",\"profile\":");
	sx_json_str(b, o->profile->scheduler_name);
	sx_buf_printf(b, ",\"numNodes\":%u,\"feasibleNodes\":[", res->num_all_nodes);
	bool first = true;
	for (uint32_t i = 0; i < n; i++) {
		if (feasible_pos(res, nodes[i].at) < 0)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_str(b, nodes[i].name);
	}
	sx_buf_puts(b, "],\"selectedNode\":");
	if (res->selected >= 0)
		sx_json_str(b, sx_str_get(o->snap->nodes[res->selected]->name));
	else
		sx_buf_puts(b, "null");
	write_devices_json(b, o, res);
	sx_buf_puts(b, ",\"message\":");
	if (pf->fo.message)
		sx_json_str(b, pf->fo.message);
	else if (res->message)
		sx_json_str(b, res->message);
	else if (res->error) {
		char msg[2048];
		sx_json_str(b, sx_status_message(res->error, msg, sizeof(msg)));
	} else
		sx_buf_puts(b, "null");
	sx_buf_puts(b, ",\"preFilter\":");
	if (res->pre_filter)
		write_status(b, res->pre_filter);
	else
		sx_buf_puts(b, "null");
	sx_buf_puts(b, ",\"filter\":{");
	first = true;
	for (uint32_t i = 0; i < n; i++) {
		const struct sx_status *st = node_status(res, nodes[i].at);
		if (!st)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_key(b, nodes[i].name);
		write_status(b, st);
	}
	sx_buf_puts(b, "},\"scores\":{");
	first = true;
	for (uint32_t i = 0; i < n && res->totals; i++) {
		int pos = feasible_pos(res, nodes[i].at);
		if (pos < 0)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_key(b, nodes[i].name);
		write_scores_json(b, res, pos);
	}
	sx_buf_puts(b, "}");
	if (pf->fo.ran)
		write_post_filter_json(b, pf);
	sx_buf_puts(b, "}\n");
}

static void write_post_filter_text(struct sx_buf *b, const struct post_filter_report *pf)
{
	const struct sx_victims *v = &pf->fo.preemption.victims;
	char key[512];
	if (pf->fo.status || pf->fo.nominated_node == SX_STR_EMPTY) {
		sx_buf_puts(b, "Preemption: would not help\n");
		return;
	}
	sx_buf_printf(b, "Preemption: would nominate %s and evict %u pod(s):\n",
		      sx_str_get(pf->fo.nominated_node), v->n);
	for (uint32_t i = 0; i < v->n; i++) {
		sx_buf_printf(b, "  %s (priority %d%s)\n", sx_pod_key(v->pods[i], key, sizeof(key)),
			      v->pods[i]->priority,
			      pf->violating && pf->violating[i] ? ", violates its PodDisruptionBudget"
								 : "");
	}
}

static void write_text(struct sx_buf *b, const struct sx_explain_opts *o, const struct sx_pod *pod,
		       const struct sx_cycle_result *res, const struct post_filter_report *pf,
		       const struct name_index *nodes, uint32_t n)
{
	char key[512], msg[2048];
	sx_buf_printf(b, "Pod:        %s\nProfile:    %s\nNodes:      %u\n",
		      sx_pod_key(pod, key, sizeof(key)), o->profile->scheduler_name,
		      res->num_all_nodes);
	sx_buf_printf(b, "Selected:   %s\n",
		      res->selected >= 0 ? sx_str_get(o->snap->nodes[res->selected]->name)
					 : "(none)");
	if (pf->fo.message || res->message)
		sx_buf_printf(b, "Message:    %s\n", pf->fo.message ? pf->fo.message : res->message);
	if (pf->fo.ran)
		write_post_filter_text(b, pf);
	if (res->pre_filter)
		sx_buf_printf(b, "PreFilter:  %s rejected the pod: %s\n",
			      res->pre_filter->plugin ? res->pre_filter->plugin : "?",
			      sx_status_message(res->pre_filter, msg, sizeof(msg)));
	sx_buf_printf(b, "\n%-28s %-10s %s\n", "NODE", "RESULT", "DETAIL");
	for (uint32_t i = 0; i < n; i++) {
		const struct sx_status *st = node_status(res, nodes[i].at);
		int pos = feasible_pos(res, nodes[i].at);
		if (st) {
			sx_buf_printf(b, "%-28s %-10s %s: %s\n", nodes[i].name, "rejected",
				      st->plugin ? st->plugin : "?",
				      sx_status_message(st, msg, sizeof(msg)));
		} else if (pos >= 0) {
			sx_buf_printf(b, "%-28s %-10s total %lld:", nodes[i].name, "feasible",
				      (long long)(res->totals ? res->totals[pos] : 0));
			for (uint32_t p = 0; p < res->nscore_plugins && res->raw; p++) {
				if (res->score_skipped[p])
					continue;
				int64_t norm = res->normalized[(size_t)pos * res->nscore_plugins + p];
				sx_buf_printf(b, " %s=%lld×%lld", res->score_plugins[p].plugin->name,
					      (long long)norm, (long long)res->score_plugins[p].weight);
			}
			sx_buf_putc(b, '\n');
		}
	}
}

/* PostFilter as a dry run when no node fits (sx_fit_error_post_filter,
 * the standalone scheduler's path): nothing is evicted; the candidate
 * offset is 0 (upstream picks it at random), so the same state gives the
 * same answer. 0 or SX_ENOMEM. */
static int run_post_filter(const struct sx_explain_opts *o, const struct sx_pod *pod,
			   const struct sx_cycle_result *res, struct post_filter_report *pf)
{
	const struct sx_victims *v = &pf->fo.preemption.victims;

	if (res->selected >= 0 || res->error || !res->state)
		return 0;
	if (sx_fit_error_post_filter(o->profile, pod, res, true, o->nominator, &pf->fo) < 0)
		return SX_ENOMEM;
	pf->violating = sx_calloc(v->n + 1, sizeof(*pf->violating));
	if (!pf->violating)
		return SX_ENOMEM;
	return sx_preempt_mark_pdb_violations(o->snap, v->pods, v->n, pf->violating);
}

static void post_filter_report_free(struct post_filter_report *pf)
{
	sx_fit_outcome_free(&pf->fo);
	free(pf->violating);
}

int sx_explain(const struct sx_explain_opts *o, const struct sx_pod *pod, struct sx_buf *out)
{
	struct post_filter_report pf = { .fo = { .nominated_node = SX_STR_EMPTY } };
	struct sx_cycle_result res;
	uint64_t rng = 0x5eed;
	uint32_t *idx = NULL, n = 0;
	struct sx_cycle_opts copts = {
		.snap = o->snap, .mode = SX_CYCLE_FULL, .candidates = o->nodes,
		.ncandidates = o->nnodes, .percentage = 100, .rng = &rng,
		.nominator = o->nominator, .pool = o->pool, .always_score = true,
	};
	if (sx_schedule(o->profile, pod, &copts, &res) < 0) {
		sx_cycle_result_free(&res);
		return SX_ENOMEM;
	}
	idx = malloc(sizeof(*idx) * (o->snap->nnodes ? o->snap->nnodes : 1));
	for (uint32_t i = 0; idx && i < o->snap->nnodes; i++) {
		bool candidate = !o->nodes;
		for (uint32_t j = 0; !candidate && j < o->nnodes; j++)
			candidate = o->nodes[j] == o->snap->nodes[i]->name;
		if (candidate)
			idx[n++] = i;
	}
	struct name_index *nodes = idx ? sorted_nodes(o->snap, idx, n) : NULL;
	int rc = nodes ? run_post_filter(o, pod, &res, &pf) : SX_ENOMEM;
	if (rc == 0 && o->text)
		write_text(out, o, pod, &res, &pf, nodes, n);
	else if (rc == 0)
		write_json(out, o, pod, &res, &pf, nodes, n);
	post_filter_report_free(&pf);
	free(nodes);
	free(idx);
	sx_cycle_result_free(&res);
	return rc;
}
