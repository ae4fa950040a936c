/* The extender verbs filter and prioritize (k8s.io/kube-scheduler/extender/v1
 * types; upstream pkg/scheduler/extender.go HTTPExtender.Filter/Prioritize),
 * and what every verb shares: request syntax
 * checks, error replies, the attempts metric. The ExtenderArgs reader is
 * extender_args.c; preempt.c and bind.c hold the other two verbs.
 *
 * Replies are written with buf.h in kube-scheduler's PascalCase.
 */
#include "schedext/extender.h"

#include "extender_int.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/framework.h"
#include "schedext/json_scan.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/preemption.h"
#include "schedext/selector.h"
#include "schedext/status.h"

/* ---------- request parsing ---------- */

/* One pass over the body: UTF-8 validity, no NUL bytes, nesting depth
 * (counted outside strings). cJSON checks the grammar afterwards. */
static bool prescan(const char *body, size_t len, char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)body, *end = p + len;
	bool in_str = false;
	int depth = 0;
	size_t n;

	while (p < end) {
		if (*p == 0) {
			snprintf(err, errlen, "malformed JSON: NUL byte at offset %zu",
				 (size_t)(p - (const unsigned char *)body));
			return false;
		}
		n = sx_utf8_seq(p, end);
		if (!n) {
			snprintf(err, errlen, "invalid UTF-8 at offset %zu",
				 (size_t)(p - (const unsigned char *)body));
			return false;
		}
		if (n == 1 && in_str && *p == '\\' && p + 1 < end && p[1] < 0x80) {
			p += 2;
			continue;
		}
		if (n == 1 && *p == '"')
			in_str = !in_str;
		else if (n == 1 && !in_str && (*p == '{' || *p == '['))
			depth++;
		else if (n == 1 && !in_str && (*p == '}' || *p == ']'))
			depth--;
		if (depth > SX_REQ_MAX_DEPTH) {
			snprintf(err, errlen, "JSON nesting deeper than %d levels",
				 SX_REQ_MAX_DEPTH);
			return false;
		}
		p += n;
	}
	return true;
}

struct cJSON *sx_request_parse(const char *body, size_t len, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *root;

	if (len == 0) {
		snprintf(err, errlen, "empty request body");
		return NULL;
	}
	if (!prescan(body, len, err, errlen))
		return NULL;
	root = cJSON_ParseWithLengthOpts(body, len, &end, false);
	if (!root) {
		size_t off = end && end >= body ? (size_t)(end - body) : 0;

		/* cJSON says NULL for both; a value our non-allocating
		 * validator accepts failed for want of memory. */
		if (sx_json_skip(body, body + len, 0, SX_REQ_MAX_DEPTH))
			snprintf(err, errlen, "%s", SX_EXT_OUT_OF_MEMORY);
		else
			snprintf(err, errlen, "malformed JSON at offset %zu", off);
		return NULL;
	}
	/* not strchr: it matches the NUL terminator, and a NUL byte after
	 * the value is trailing data, not whitespace */
	while (end && end < body + len &&
	       (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
		end++;
	if (end && end < body + len) {
		snprintf(err, errlen, "malformed JSON: trailing data at offset %zu",
			 (size_t)(end - body));
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

void sx_reply_error(struct sx_buf *out, const char *msg)
{
	struct sx_jw w;

	sx_buf_reset(out);
	sx_jw_init(&w, out);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "error", msg);
	sx_jw_end_object(&w);
	sx_buf_putc(out, '\n');
}

int sx_ext_fail(struct sx_buf *out, struct sx_verb_log *log, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sx_reply_error(out, msg);
	snprintf(log->result, sizeof(log->result), "error: %.110s", msg);
	return status;
}

/* A served verb call is not a scheduling attempt (kube-scheduler counts
 * those in scheduler_schedule_attempts_total, once per pod cycle, however
 * many extenders it asks): counted under its own name. */
void sx_ext_count_attempt(const struct sx_extender *ex, const char *verb, const char *result)
{
	char labels[96];

	if (!ex->verb_requests)
		return;
	snprintf(labels, sizeof(labels), "verb=\"%s\",result=\"%s\"", verb, result);
	sx_metric_inc(ex->verb_requests, labels, 1);
}

/* ---------- filter / prioritize ---------- */

/* Runs the cycle over the known, distinct requested nodes. */
static int run_cycle(const struct sx_extender *ex, struct ext_args *a, enum sx_cycle_mode mode,
		     struct sx_cycle_result *res)
{
	sx_str *cand = sx_calloc(a->n + 1, sizeof(*cand));
	struct sx_cycle_opts opts = {0};
	uint32_t i, n = 0;
	int rc;

	if (!cand)
		return SX_ENOMEM;
	for (i = 0; i < a->n; i++)
		if (a->nodes[i].at >= 0 && !a->nodes[i].dup)
			cand[n++] = a->nodes[i].id;
	opts.snap = a->snap;
	opts.mode = mode;
	opts.candidates = cand;
	opts.ncandidates = n;
	opts.percentage = 100;
	opts.global_percentage = ex->cfg ? ex->cfg->percentage_of_nodes_to_score : 0;
	opts.pool = ex->pool;
	rc = sx_schedule(ex->profile, a->pod, &opts, res);
	free(cand);
	return rc;
}

/* The status a requested node failed with, NULL when it passed. */
static const struct sx_status *filter_status(const struct sx_cycle_result *res,
					     const bool *feasible, int at)
{
	if (res->pre_filter)
		return res->pre_filter;
	if (feasible[at])
		return NULL;
	if (res->statuses[at])
		return res->statuses[at];
	return res->absent_status;
}

/* A failure map entry: "name": "reason". */
static void put_failure(struct sx_jw *w, const struct req_node *rn, const char *reason)
{
	sx_jw_keyn(w, rn->name, rn->name_len);
	sx_jw_str(w, reason);
}

#define UNKNOWN_NODE_REASON "node(s) not found in the schedext cache"

/* Writes one failure map: unresolvable or not. Returns the count. */
static uint32_t put_failures(struct sx_jw *w, const struct ext_args *a,
			     const struct sx_cycle_result *res, const bool *feasible,
			     bool unresolvable)
{
	const struct sx_status *st;
	char msg[1024];
	uint32_t i, n = 0;

	sx_jw_object(w);
	for (i = 0; i < a->n; i++) {
		const struct req_node *rn = &a->nodes[i];

		if (rn->dup)
			continue;
		if (rn->at < 0) {
			if (!unresolvable)
				put_failure(w, rn, UNKNOWN_NODE_REASON), n++;
			continue;
		}
		st = filter_status(res, feasible, rn->at);
		if (!st)
			continue;
		if ((st->code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE) != unresolvable)
			continue;
		sx_status_message(st, msg, sizeof(msg));
		put_failure(w, rn, msg[0] ? msg : sx_code_name(st->code));
		n++;
	}
	sx_jw_end_object(w);
	return n;
}

/* The passing nodes in the form they came in: names, or the request's
 * Node items byte for byte. Returns the count. */
static uint32_t put_passing(struct sx_jw *w, const struct ext_args *a, const bool *feasible,
			    bool pre_rejected)
{
	uint32_t i, n = 0;

	if (a->nodes_mode) {
		sx_jw_kobject(w, "Nodes");
		sx_jw_kobject(w, "metadata");
		sx_jw_end_object(w);
		sx_jw_karray(w, "items");
	} else {
		sx_jw_karray(w, "NodeNames");
	}
	for (i = 0; i < a->n; i++) {
		const struct req_node *rn = &a->nodes[i];

		if (rn->dup || rn->at < 0 || pre_rejected || !feasible[rn->at])
			continue;
		n++;
		if (!a->nodes_mode)
			sx_jw_strn(w, rn->name, rn->name_len);
		else
			sx_jw_raw(w, rn->raw, rn->raw_len);
	}
	sx_jw_end_array(w);
	if (a->nodes_mode)
		sx_jw_end_object(w);
	sx_jw_key(w, a->nodes_mode ? "NodeNames" : "Nodes");
	sx_jw_null(w);
	return n;
}

int sx_extender_filter(const struct sx_extender *ex, const char *body, size_t len,
		       struct sx_buf *out, struct sx_verb_log *log)
{
	struct ext_args a = {0};
	struct sx_cycle_result res = {0};
	bool *feasible = NULL;
	char msg[1024];
	uint32_t i, npass, nfail;
	struct sx_jw w;
	int rc;

	rc = sx_ext_args_parse(ex, body, len, &a, out, log);
	if (rc)
		goto out;
	if (run_cycle(ex, &a, SX_CYCLE_FILTER_ONLY, &res) < 0 ||
	    !(feasible = sx_calloc(a.snap->nnodes + 1, sizeof(bool)))) {
		rc = sx_ext_fail(out, log, 500, "out of memory");
		goto out;
	}
	if (res.error) {
		/* A plugin error fails the whole call (ExtenderFilterResult.Error). */
		sx_jw_init(&w, out);
		sx_jw_object(&w);
		sx_jw_kstr(&w, "Error", sx_status_message(res.error, msg, sizeof(msg)));
		sx_jw_end_object(&w);
		sx_buf_putc(out, '\n');
		snprintf(log->result, sizeof(log->result), "error: %.110s", msg);
		sx_ext_count_attempt(ex, "filter", "error");
		rc = 200;
		goto out;
	}
	for (i = 0; i < res.nfeasible; i++)
		feasible[res.feasible[i]] = true;
	sx_jw_init(&w, out);
	sx_jw_object(&w);
	npass = put_passing(&w, &a, feasible, res.pre_filter != NULL);
	sx_jw_key(&w, "FailedNodes");
	nfail = put_failures(&w, &a, &res, feasible, false);
	sx_jw_key(&w, "FailedAndUnresolvableNodes");
	nfail += put_failures(&w, &a, &res, feasible, true);
	sx_jw_kstr(&w, "Error", "");
	sx_jw_end_object(&w);
	sx_buf_putc(out, '\n');
	snprintf(log->result, sizeof(log->result), "%u passed, %u failed", npass, nfail);
	sx_ext_count_attempt(ex, "filter", npass ? "feasible" : "unschedulable");
	rc = 200;
out:
	free(feasible);
	sx_cycle_result_free(&res);
	sx_ext_args_free(&a);
	return rc;
}

int64_t sx_extender_score(int64_t total, int64_t max_total)
{
	if (max_total <= 0 || total <= 0)
		return 0;
	if (total >= max_total)
		return SX_MAX_EXTENDER_PRIORITY;
	/* total < max_total here, and totals stay far below INT64_MAX / 10
	 * (Σ 100 × weight over a few dozen plugins). */
	return total * SX_MAX_EXTENDER_PRIORITY / max_total;
}

int sx_extender_prioritize(const struct sx_extender *ex, const char *body, size_t len,
			   struct sx_buf *out, struct sx_verb_log *log)
{
	struct ext_args a = {0};
	struct sx_cycle_result res = {0};
	int64_t *total = NULL, max = 0;
	char msg[1024];
	uint32_t i, n = 0;
	struct sx_jw w;
	int rc;

	rc = sx_ext_args_parse(ex, body, len, &a, out, log);
	if (rc)
		goto out;
	if (run_cycle(ex, &a, SX_CYCLE_SCORE_ONLY, &res) < 0 ||
	    !(total = sx_calloc(a.snap->nnodes + 1, sizeof(int64_t)))) {
		rc = sx_ext_fail(out, log, 500, "out of memory");
		goto out;
	}
	if (res.error || res.pre_filter) {
		/* kube-scheduler ignores a failed Prioritize (schedule_one.go prioritizeNodes): a
		 * non-200. */
		rc = sx_ext_fail(out, log, 500, "scoring failed: %s",
				 sx_status_message(res.error ? res.error : res.pre_filter, msg,
						   sizeof(msg)));
		sx_ext_count_attempt(ex, "prioritize", "error");
		goto out;
	}
	for (i = 0; res.totals && i < res.nfeasible; i++) {
		total[res.feasible[i]] = res.totals[i];
		if (res.totals[i] > max)
			max = res.totals[i];
	}
	sx_jw_init(&w, out);
	sx_jw_array(&w);
	for (i = 0; i < a.n; i++) {
		const struct req_node *rn = &a.nodes[i];

		if (rn->dup)
			continue;
		n++;
		sx_jw_object(&w);
		sx_jw_key(&w, "Host");
		sx_jw_strn(&w, rn->name, rn->name_len);
		sx_jw_kint(&w, "Score", rn->at >= 0 ? sx_extender_score(total[rn->at], max) : 0);
		sx_jw_end_object(&w);
	}
	sx_jw_end_array(&w);
	sx_buf_putc(out, '\n');
	snprintf(log->result, sizeof(log->result), "%u scored, max total %lld", n, (long long)max);
	sx_ext_count_attempt(ex, "prioritize", "scored");
	rc = 200;
out:
	free(total);
	sx_cycle_result_free(&res);
	sx_ext_args_free(&a);
	return rc;
}
