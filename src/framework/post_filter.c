/* PostFilter runner (upstream framework/runtime/framework.go
 * RunPostFilterPlugins): plugins in order until
 * one succeeds or one says the pod cannot be helped; and the FitError path
 * around it that every front end shares. */
#include <stdlib.h>
#include <string.h>

#include "schedext/fit_error.h"
#include "schedext/framework.h"
#include "schedext/framework_metrics.h"
#include "schedext/post_filter.h"

/* Moves st's reasons into acc (st is freed). */
static void collect_reasons(struct sx_status *acc, struct sx_status *st)
{
	for (unsigned r = 0; acc && r < st->nreasons; r++)
		sx_status_add_reason(acc, "%s", st->reasons[r]);
	sx_status_free(st);
}

static struct sx_status *as_error(struct sx_status *st, const char *plugin)
{
	char msg[2048];
	struct sx_status *err;

	sx_status_message(st, msg, sizeof(msg));
	sx_status_free(st);
	err = sx_status_new(SX_ERROR, "%s", msg);
	return sx_status_set_plugin(err, plugin);
}

/* sx_run_post_filter; *winner names the plugin that succeeded. */
static struct sx_status *run_post_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
					 const struct sx_pod *pod,
					 const struct sx_filtered_status *filtered,
					 struct sx_post_filter_result *result, const char **winner)
{
	const struct sx_enabled *e = prof->points[SX_PT_POST_FILTER];
	struct sx_status *acc = sx_status_new(SX_UNSCHEDULABLE, NULL);
	sx_str nominated = SX_STR_EMPTY;

	*winner = NULL;
	for (unsigned i = 0; acc != sx_status_oom() && i < prof->n[SX_PT_POST_FILTER]; i++) {
		struct sx_post_filter_result r = {SX_STR_EMPTY};
		struct sx_status *st = e[i].plugin->post_filter(e[i].self, cs, pod, filtered, &r);

		if (sx_status_is_success(st)) {
			sx_status_free(st);
			sx_status_free(acc);
			result->nominated_node = r.nominated_node;
			*winner = e[i].plugin->name;
			return NULL;
		}
		if (st->code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE || !sx_status_is_rejected(st)) {
			sx_status_free(acc);
			result->nominated_node = r.nominated_node;
			if (st->code != SX_UNSCHEDULABLE_AND_UNRESOLVABLE)
				return as_error(st, e[i].plugin->name);
			return sx_status_set_plugin(st, e[i].plugin->name);
		}
		if (r.nominated_node != SX_STR_EMPTY)
			nominated = r.nominated_node;
		if (!acc->plugin)
			sx_status_set_plugin(acc, e[i].plugin->name);
		collect_reasons(acc, st);
	}
	result->nominated_node = nominated;
	return acc;
}

struct sx_status *sx_run_post_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
				     const struct sx_pod *pod,
				     const struct sx_filtered_status *filtered,
				     struct sx_post_filter_result *result)
{
	const char *winner;

	return run_post_filter(prof, cs, pod, filtered, result, &winner);
}

/* Node statuses for PostFilter, as upstream's NodeToStatus reads them:
 * after a PreFilter rejection every node carries it (SetAbsentNodesStatus
 * in findNodesThatFitPod); nodes without a status get the absent status. */
static struct sx_status **post_filter_statuses(const struct sx_cycle_result *res)
{
	struct sx_status **st = calloc(res->num_all_nodes ? res->num_all_nodes : 1, sizeof(*st));

	for (uint32_t i = 0; st && i < res->num_all_nodes; i++) {
		if (res->pre_filter)
			st[i] = res->pre_filter;
		else
			st[i] = res->statuses[i] ? res->statuses[i] : res->absent_status;
	}
	return st;
}

/* Whether a PreEnqueue plugin rejects the pod: such a pod never enters a
 * scheduling cycle upstream (the queue holds it), so it has no PostFilter.
 * Only the dry runs' cycles run PreEnqueue (the standalone loop's queue
 * has run it before the cycle). */
static bool gated(const struct sx_profile *prof, const struct sx_pod *pod,
		  const struct sx_cycle_result *res)
{
	struct sx_status *st;

	if (!res->pre_filter || prof->n[SX_PT_PRE_ENQUEUE] == 0)
		return false;
	st = sx_run_pre_enqueue(prof, pod);
	sx_status_free(st);
	return st != NULL;
}

/* Upstream schedule_one.go schedulePod: RunPostFilterPlugins over the
 * diagnosis, its status message becoming Diagnosis.PostFilterMsg, which
 * FitError.Error appends after the filter histogram. */
int sx_fit_error_post_filter(const struct sx_profile *prof, const struct sx_pod *pod,
			     const struct sx_cycle_result *res, bool dry_run,
			     const struct sx_nominator *nominator, struct sx_fit_outcome *out)
{
	struct sx_post_filter_dry_run dry = {prof, nominator, &out->preemption};
	struct sx_post_filter_result pfr = {SX_STR_EMPTY};
	char msg[4096] = "";
	struct sx_status **statuses;

	memset(out, 0, sizeof(*out));
	out->nominated_node = SX_STR_EMPTY;
	if (prof->n[SX_PT_POST_FILTER] > 0 && res->state && !(dry_run && gated(prof, pod, res))) {
		struct sx_filtered_status filtered = {res->state->snap, NULL,
						      dry_run ? &dry : NULL};
		uint64_t t0 = sx_fw_metrics_now();

		if (!(statuses = post_filter_statuses(res)))
			return SX_ENOMEM;
		filtered.statuses = statuses;
		out->ran = true;
		out->status = run_post_filter(prof, res->state, pod, &filtered, &pfr, &out->plugin);
		free(statuses);
		if (!dry_run)
			sx_fw_metrics_point(prof, SX_EP_POST_FILTER, sx_status_code(out->status),
					    sx_fw_metrics_now() - t0);
		if (out->status == sx_status_oom())
			return SX_ENOMEM;
		if (out->status) {
			out->plugin = out->status->plugin;
			sx_status_message(out->status, msg, sizeof(msg));
		}
		out->nominated_node = pfr.nominated_node;
	}
	out->message =
		msg[0] || !res->message ? sx_fit_error_message(res, msg) : strdup(res->message);
	return out->message ? 0 : SX_ENOMEM;
}

void sx_fit_outcome_free(struct sx_fit_outcome *out)
{
	sx_status_free(out->status);
	sx_preempt_result_free(&out->preemption);
	free(out->message);
	memset(out, 0, sizeof(*out));
	out->nominated_node = SX_STR_EMPTY;
}
