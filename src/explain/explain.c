/* The explain report (include/schedext/explain.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/dra_alloc.h"
#include "schedext/explain.h"
#include "schedext/intern.h"
#include "schedext/node_info.h"
#include "schedext/plugin.h"
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
		out[i] = (struct name_index){sx_str_get(snap->nodes[idx[i]]->name), idx[i]};
	qsort(out, n, sizeof(*out), cmp_name);
	return out;
}

/* ---------- the numbers behind NodeResourcesFit's reasons ----------
 *
 * "Insufficient cpu" says what, not how much. kubectl describe node shows
 * allocatable and the sum of requests; this puts them next to the reason:
 * the pod's request as NodeResourcesFit compares it (the effective request:
 * max of init containers, plus overhead; plugins/node_resources_fit.c
 * filter_node_resources_fit), the node's allocatable and what is free of
 * it (allocatable minus the requests of the pods on the node in the
 * snapshot; nominated pods, which the filter's first pass also counts,
 * are not included). The FailedScheduling message keeps kube-scheduler's
 * words: only explain's per-node detail carries the numbers. */
struct fit_numbers {
	const char *resource; /* "cpu", "memory", ..., "pods" */
	int64_t requests, free, allocatable;
};

/* The numbers of one reason of NodeResourcesFit; false for other reasons. */
static bool fit_numbers(const struct sx_pod *pod, const struct sx_node_info *ni, const char *reason,
			struct fit_numbers *f)
{
	const struct sx_resources *al;
	sx_str name;

	if (!ni || !ni->node)
		return false;
	al = &ni->node->allocatable;
	if (strcmp(reason, "Too many pods") == 0) {
		*f = (struct fit_numbers){"pods", 1, al->pods - (int64_t)ni->npods, al->pods};
		return true;
	}
	if (strncmp(reason, "Insufficient ", 13) != 0 || !reason[13])
		return false;
	name = sx_intern(reason + 13);
	*f = (struct fit_numbers){sx_str_get(name), sx_resources_get(&pod->request, name), 0,
				  sx_resources_get(al, name)};
	f->free = f->allocatable - sx_resources_get(&ni->requested, name);
	return true;
}

/* A quantity as Kubernetes writes it: cpu in millicores ("7500m"), bytes
 * in the largest binary unit that divides them ("3Gi", "1536Mi"), counts
 * as they are. */
static const char *quantity(char *buf, size_t len, const char *resource, int64_t v)
{
	static const char *const units[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};

	if (strcmp(resource, "cpu") == 0) {
		snprintf(buf, len, "%" PRId64 "m", v);
		return buf;
	}
	if (strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
	    strncmp(resource, "hugepages-", 10) == 0) {
		for (int i = 0; i < 6 && v != 0; i++) {
			int64_t unit = (int64_t)1 << (10 * (6 - i));
			if (v % unit == 0) {
				snprintf(buf, len, "%" PRId64 "%s", v / unit, units[i]);
				return buf;
			}
		}
	}
	snprintf(buf, len, "%" PRId64, v);
	return buf;
}

/* The explain hook of the plugin named st->plugin at point pt, or NULL. */
static const struct sx_enabled *explainer_at(const struct sx_profile *p, enum sx_point pt,
					     const struct sx_status *st)
{
	for (unsigned i = 0; i < p->n[pt]; i++) {
		const struct sx_enabled *e = &p->points[pt][i];
		if (e->plugin->explain && strcmp(e->plugin->name, st->plugin) == 0)
			return e;
	}
	return NULL;
}

/* ---------- the numbers behind the other plugins' reasons ----------
 *
 * Asked of the rejecting plugin's explain hook (plugin.h), which reads the
 * cycle state its Filter read: which taint, which nodeSelector entry or
 * affinity term, the spread counts, the anti-affinity pod, the port. Not
 * for a PreFilter rejection (no node was filtered). d is zeroed. */
static void plugin_detail(const struct sx_explain_opts *o, const struct sx_cycle_result *res,
			  const struct sx_pod *pod, const struct sx_node_info *ni,
			  const struct sx_status *st, struct sx_detail *d)
{
	const struct sx_enabled *e;

	memset(d, 0, sizeof(*d));
	if (res->pre_filter || !st->plugin || !res->state || !ni)
		return;
	e = explainer_at(o->profile, SX_PT_FILTER, st);
	if (e)
		e->plugin->explain(e->self, res->state, pod, ni, st, d);
}

/* The numbers behind the rejection before Filter: the explain hook, with
 * no node (ni NULL), of the PreEnqueue plugin that held the pod back
 * (SchedulingGates' gates) or of the PreFilter plugin that rejected it.
 * d is zeroed. */
static void pre_filter_detail(const struct sx_explain_opts *o, const struct sx_cycle_result *res,
			      const struct sx_pod *pod, struct sx_detail *d)
{
	const struct sx_status *st = res->pre_filter;
	const struct sx_enabled *e;

	memset(d, 0, sizeof(*d));
	if (!st || !st->plugin || !res->state)
		return;
	e = explainer_at(o->profile, SX_PT_PRE_ENQUEUE, st);
	if (!e)
		e = explainer_at(o->profile, SX_PT_PRE_FILTER, st);
	if (e)
		e->plugin->explain(e->self, res->state, pod, NULL, st, d);
}

/* ,"detail":{"text":...,members} when the plugin gave members: the
 * text is the phrase text output shows in parentheses (the page shows it
 * as it is). */
static void write_detail_json(struct sx_jw *w, const struct sx_detail *d)
{
	if (!d->n)
		return;
	sx_jw_kobject(w, "detail");
	sx_jw_kstr(w, "text", d->text);
	for (unsigned i = 0; i < d->n; i++) {
		sx_jw_key(w, d->members[i].name);
		sx_jw_raw(w, d->json + d->members[i].off, d->members[i].len);
	}
	sx_jw_end_object(w);
}

/* "Insufficient cpu (requests 7500m, free 3920m of 4000m)" for each reason
 * of a NodeResourcesFit status, joined by ", "; for other plugins the
 * message and the plugin's detail in parentheses. */
static const char *detail_message(const struct sx_status *st, const struct sx_pod *pod,
				  const struct sx_node_info *ni, const struct sx_detail *d,
				  char *buf, size_t len)
{
	struct fit_numbers f;
	char q[3][48];
	size_t n = 0;

	if (!ni || !st->plugin || strcmp(st->plugin, "NodeResourcesFit") != 0 || !st->nreasons) {
		sx_status_message(st, buf, len);
		n = strlen(buf);
		if (d->text[0] && n < len)
			snprintf(buf + n, len - n, " (%s)", d->text);
		return buf;
	}
	buf[0] = '\0';
	for (unsigned r = 0; r < st->nreasons && n < len; r++) {
		n += (size_t)snprintf(buf + n, len - n, "%s%s", r ? ", " : "", st->reasons[r]);
		if (n < len && fit_numbers(pod, ni, st->reasons[r], &f))
			n += (size_t)snprintf(
				buf + n, len - n, " (requests %s, free %s of %s)",
				quantity(q[0], sizeof(q[0]), f.resource, f.requests),
				quantity(q[1], sizeof(q[1]), f.resource, f.free),
				quantity(q[2], sizeof(q[2]), f.resource, f.allocatable));
	}
	return buf;
}

/* "resources":[{"resource","requests","free","allocatable"}] of a
 * NodeResourcesFit status (quantities as strings), when it has numbers. */
static void write_fit_json(struct sx_jw *w, const struct sx_status *st, const struct sx_pod *pod,
			   const struct sx_node_info *ni)
{
	struct fit_numbers f;
	char q[48];
	bool first = true;

	if (!st->plugin || strcmp(st->plugin, "NodeResourcesFit") != 0)
		return;
	for (unsigned r = 0; r < st->nreasons; r++) {
		if (!fit_numbers(pod, ni, st->reasons[r], &f))
			continue;
		if (first)
			sx_jw_karray(w, "resources");
		first = false;
		sx_jw_object(w);
		sx_jw_kstr(w, "resource", f.resource);
		sx_jw_kstr(w, "requests", quantity(q, sizeof(q), f.resource, f.requests));
		sx_jw_kstr(w, "free", quantity(q, sizeof(q), f.resource, f.free));
		sx_jw_kstr(w, "allocatable", quantity(q, sizeof(q), f.resource, f.allocatable));
		sx_jw_end_object(w);
	}
	if (!first)
		sx_jw_end_array(w);
}

/* {"plugin","code","reasons"[,"resources"][,"detail"]}: the status of a
 * node (pod and ni given: NodeResourcesFit's numbers too; d: the
 * rejecting plugin's detail) or the PreFilter one. */
static void write_status_of(struct sx_jw *w, const struct sx_status *st, const struct sx_pod *pod,
			    const struct sx_node_info *ni, const struct sx_detail *d)
{
	sx_jw_object(w);
	sx_jw_key(w, "plugin");
	sx_jw_str_or_null(w, st->plugin);
	sx_jw_kstr(w, "code", sx_code_name(st->code));
	sx_jw_karray(w, "reasons");
	for (unsigned r = 0; r < st->nreasons; r++)
		sx_jw_str(w, st->reasons[r]);
	sx_jw_end_array(w);
	if (pod && ni)
		write_fit_json(w, st, pod, ni);
	if (d)
		write_detail_json(w, d);
	sx_jw_end_object(w);
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

static void write_scores_json(struct sx_jw *w, const struct sx_cycle_result *res, int pos)
{
	uint32_t np = res->nscore_plugins;

	sx_jw_object(w);
	sx_jw_kint(w, "total", res->totals ? res->totals[pos] : 0);
	sx_jw_kobject(w, "plugins");
	for (uint32_t p = 0; p < np && res->raw; p++) {
		if (res->score_skipped[p])
			continue;
		const struct sx_enabled *e = &res->score_plugins[p];
		int64_t norm = res->normalized[(size_t)pos * np + p];
		sx_jw_kobject(w, e->plugin->name);
		sx_jw_kint(w, "raw", res->raw[(size_t)pos * np + p]);
		sx_jw_kint(w, "normalized", norm);
		sx_jw_kint(w, "weight", e->weight);
		sx_jw_kint(w, "weighted", norm * e->weight);
		sx_jw_end_object(w);
	}
	sx_jw_end_object(w);
	sx_jw_end_object(w);
}

static void write_victims_json(struct sx_jw *w, const struct post_filter_report *pf)
{
	char key[512];

	sx_jw_array(w);
	for (uint32_t i = 0; i < pf->fo.preemption.victims.n; i++) {
		const struct sx_pod *v = pf->fo.preemption.victims.pods[i];
		sx_jw_object(w);
		sx_jw_kstr(w, "pod", sx_pod_key(v, key, sizeof(key)));
		sx_jw_kint(w, "priority", v->priority);
		sx_jw_kbool(w, "pdbViolated", pf->violating && pf->violating[i]);
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
}

/* "postFilter":{"plugin","code","message","nominatedNode","victims"}:
 * the plugin that succeeded or first rejected, the final status's code
 * and message (the FitError's PostFilterMsg), as RunPostFilterPlugins
 * returns them. */
static void write_post_filter_json(struct sx_jw *w, const struct post_filter_report *pf)
{
	char msg[4096];
	const struct sx_status *st = pf->fo.status;

	sx_jw_kobject(w, "postFilter");
	sx_jw_key(w, "plugin");
	sx_jw_str_or_null(w, pf->fo.plugin);
	sx_jw_kstr(w, "code", sx_code_name(st ? st->code : SX_SUCCESS));
	sx_jw_key(w, "message");
	sx_jw_str_or_null(w, st ? sx_status_message(st, msg, sizeof(msg)) : NULL);
	sx_jw_key(w, "nominatedNode");
	sx_jw_str_or_null(w, !st && pf->fo.nominated_node != SX_STR_EMPTY
				     ? sx_str_get(pf->fo.nominated_node)
				     : NULL);
	sx_jw_key(w, "victims");
	write_victims_json(w, pf);
	sx_jw_end_object(w);
}

/* "deviceAllocations":[...] for the selected node of a pod with claims
 * (the DRA explainer builds it as a cJSON tree; printed here as is). */
static void write_devices_json(struct sx_jw *w, const struct sx_explain_opts *o,
			       const struct sx_cycle_result *res)
{
	cJSON *d = res->selected >= 0 && res->state
			   ? sx_dra_explain_devices(res->state, o->snap->nodes[res->selected]->node)
			   : NULL;
	char *text = d ? cJSON_PrintUnformatted(d) : NULL;

	if (text) {
		sx_jw_key(w, "deviceAllocations");
		sx_jw_raw(w, text, strlen(text));
	}
	cJSON_free(text);
	cJSON_Delete(d);
}

/* ,"devicesByNode":{NODE:{"text","claims"}} for each feasible node of a
 * pod with claims (or extended resources backed by DRA): the devices its
 * claims would get there, in words (the text output's "devices:" line)
 * and as deviceAllocations. */
static void write_node_devices_json(struct sx_jw *w, const struct sx_explain_opts *o,
				    const struct sx_cycle_result *res,
				    const struct name_index *nodes, uint32_t n)
{
	bool first = true;

	for (uint32_t i = 0; i < n && res->state; i++) {
		const struct sx_node *node = o->snap->nodes[nodes[i].at]->node;
		struct sx_buf t;
		cJSON *d;
		char *text;

		if (feasible_pos(res, nodes[i].at) < 0 || !node)
			continue;
		sx_buf_init(&t);
		if (sx_dra_explain_node(res->state, node, &t) <= 0 || t.failed) {
			sx_buf_free(&t);
			continue;
		}
		if (first)
			sx_jw_kobject(w, "devicesByNode");
		first = false;
		sx_jw_kobject(w, nodes[i].name);
		sx_jw_kstr(w, "text", t.data);
		sx_buf_free(&t);
		/* the allocator's device view is a cJSON tree (dra layer) */
		d = sx_dra_explain_devices(res->state, node);
		text = d ? cJSON_PrintUnformatted(d) : NULL;
		if (text) {
			sx_jw_key(w, "claims");
			sx_jw_raw(w, text, strlen(text));
		}
		cJSON_free(text);
		cJSON_Delete(d);
		sx_jw_end_object(w);
	}
	if (!first)
		sx_jw_end_object(w);
}

static void write_json(struct sx_buf *b, const struct sx_explain_opts *o, const struct sx_pod *pod,
		       const struct sx_cycle_result *res, const struct post_filter_report *pf,
		       const struct name_index *nodes, uint32_t n)
{
	char key[512], msg[2048];
	struct sx_detail pfd, d;
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "pod", sx_pod_key(pod, key, sizeof(key)));
	sx_jw_kstr(&w, "profile", o->profile->scheduler_name);
	sx_jw_kint(&w, "numNodes", res->num_all_nodes);
	sx_jw_karray(&w, "feasibleNodes");
	for (uint32_t i = 0; i < n; i++)
		if (feasible_pos(res, nodes[i].at) >= 0)
			sx_jw_str(&w, nodes[i].name);
	sx_jw_end_array(&w);
	sx_jw_key(&w, "selectedNode");
	sx_jw_str_or_null(&w, res->selected >= 0 ? sx_str_get(o->snap->nodes[res->selected]->name)
						 : NULL);
	write_devices_json(&w, o, res);
	sx_jw_key(&w, "message");
	if (pf->fo.message)
		sx_jw_str(&w, pf->fo.message);
	else if (res->message)
		sx_jw_str(&w, res->message);
	else if (res->error)
		sx_jw_str(&w, sx_status_message(res->error, msg, sizeof(msg)));
	else
		sx_jw_null(&w);
	/* a PreFilter rejection is every node's status, with its numbers */
	pre_filter_detail(o, res, pod, &pfd);
	sx_jw_key(&w, "preFilter");
	if (res->pre_filter)
		write_status_of(&w, res->pre_filter, NULL, NULL, &pfd);
	else
		sx_jw_null(&w);
	sx_jw_kobject(&w, "filter");
	for (uint32_t i = 0; i < n; i++) {
		const struct sx_status *st = node_status(res, nodes[i].at);
		if (!st)
			continue;
		sx_jw_key(&w, nodes[i].name);
		if (!res->pre_filter)
			plugin_detail(o, res, pod, o->snap->nodes[nodes[i].at], st, &d);
		write_status_of(&w, st, pod, o->snap->nodes[nodes[i].at],
				res->pre_filter ? &pfd : &d);
	}
	sx_jw_end_object(&w);
	sx_jw_kobject(&w, "scores");
	for (uint32_t i = 0; i < n && res->totals; i++) {
		int pos = feasible_pos(res, nodes[i].at);
		if (pos < 0)
			continue;
		sx_jw_key(&w, nodes[i].name);
		write_scores_json(&w, res, pos);
	}
	sx_jw_end_object(&w);
	write_node_devices_json(&w, o, res, nodes, n);
	if (pf->fo.ran)
		write_post_filter_json(&w, pf);
	sx_jw_end_object(&w);
	sx_buf_putc(b, '\n');
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
			      pf->violating && pf->violating[i]
				      ? ", violates its PodDisruptionBudget"
				      : "");
	}
}

/* Under a feasible node, the devices the pod's claims would get there
 * (DynamicResources; nothing for a pod without claims). */
static void write_node_devices_text(struct sx_buf *b, const struct sx_cycle_result *res,
				    const struct sx_node *node)
{
	struct sx_buf t;

	if (!res->state || !node)
		return;
	sx_buf_init(&t);
	if (sx_dra_explain_node(res->state, node, &t) > 0 && !t.failed)
		sx_buf_printf(b, "%-28s devices: %s\n", "", t.data);
	sx_buf_free(&t);
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
		sx_buf_printf(b, "Message:    %s\n",
			      pf->fo.message ? pf->fo.message : res->message);
	if (pf->fo.ran)
		write_post_filter_text(b, pf);
	if (res->pre_filter) {
		struct sx_detail d;
		pre_filter_detail(o, res, pod, &d);
		sx_buf_printf(b, "PreFilter:  %s rejected the pod: %s\n",
			      res->pre_filter->plugin ? res->pre_filter->plugin : "?",
			      detail_message(res->pre_filter, pod, NULL, &d, msg, sizeof(msg)));
	}
	/* PREEMPTION: whether evicting pods could make the node fit. Upstream's
	 * preemption skips UnschedulableAndUnresolvable nodes
	 * (pkg/scheduler/framework/preemption/preemption.go,
	 * nodesWherePreemptionMightHelp): "cannot help"; Unschedulable ones
	 * are its candidates: "may help". */
	sx_buf_printf(b, "\n%-28s %-10s %-12s %s\n", "NODE", "RESULT", "PREEMPTION", "DETAIL");
	for (uint32_t i = 0; i < n; i++) {
		const struct sx_status *st = node_status(res, nodes[i].at);
		int pos = feasible_pos(res, nodes[i].at);
		if (st) {
			struct sx_detail d;
			plugin_detail(o, res, pod, o->snap->nodes[nodes[i].at], st, &d);
			sx_buf_printf(b, "%-28s %-10s %-12s %s: %s\n", nodes[i].name, "rejected",
				      st->code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE ? "cannot help"
										    : "may help",
				      st->plugin ? st->plugin : "?",
				      detail_message(st, pod, o->snap->nodes[nodes[i].at], &d, msg,
						     sizeof(msg)));
		} else if (pos >= 0) {
			sx_buf_printf(b, "%-28s %-10s %-12s total %lld:", nodes[i].name, "feasible",
				      "", (long long)(res->totals ? res->totals[pos] : 0));
			for (uint32_t p = 0; p < res->nscore_plugins && res->raw; p++) {
				if (res->score_skipped[p])
					continue;
				int64_t norm =
					res->normalized[(size_t)pos * res->nscore_plugins + p];
				sx_buf_printf(b, " %s=%lld×%lld",
					      res->score_plugins[p].plugin->name, (long long)norm,
					      (long long)res->score_plugins[p].weight);
			}
			sx_buf_putc(b, '\n');
			write_node_devices_text(b, res, o->snap->nodes[nodes[i].at]->node);
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

/* The member's pod group (sx_explain_gang): after the text report, or as
 * the JSON report's last member "podGroup". */
static int append_gang(const struct sx_explain_opts *o, const struct sx_pod *pod,
		       struct sx_buf *out)
{
	struct sx_buf g;
	int rc;

	sx_buf_init(&g);
	rc = sx_explain_gang(o->cache, o->snap, o->profile, pod, o->pool, o->text, &g);
	if (rc > 0 && g.failed)
		rc = SX_ENOMEM;
	if (rc > 0 && o->text) {
		sx_buf_put(out, g.data, g.len);
	} else if (rc > 0 && out->len >= 2 && !memcmp(out->data + out->len - 2, "}\n", 2)) {
		out->len -= 2;
		sx_buf_puts(out, ",\"podGroup\":");
		sx_buf_put(out, g.data, g.len);
		sx_buf_puts(out, "}\n");
	}
	sx_buf_free(&g);
	return rc < 0 ? rc : 0;
}

int sx_explain(const struct sx_explain_opts *o, const struct sx_pod *pod, struct sx_buf *out)
{
	struct post_filter_report pf = {.fo = {.nominated_node = SX_STR_EMPTY}};
	struct sx_cycle_result res;
	uint64_t rng = 0x5eed;
	uint32_t *idx = NULL, n = 0;
	bool cosched;
	struct sx_cycle_opts copts = {
		.snap = o->snap,
		.mode = SX_CYCLE_FULL,
		.candidates = o->nodes,
		.ncandidates = o->nnodes,
		.percentage = 100,
		.rng = &rng,
		.nominator = o->nominator,
		.pool = o->pool,
		.always_score = true,
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
	if (rc == 0 && o->cache && sx_explain_group_of(o->profile, pod, &cosched) != SX_STR_EMPTY)
		rc = append_gang(o, pod, out);
	post_filter_report_free(&pf);
	free(nodes);
	free(idx);
	sx_cycle_result_free(&res);
	return rc;
}
