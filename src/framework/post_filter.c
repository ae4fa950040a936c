/* PostFilter runner (reference plugins.md §1.11): plugins in order until
 * one succeeds or one says the pod cannot be helped. */
#include "schedext/framework.h"
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

struct sx_status *sx_run_post_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
				     const struct sx_pod *pod,
				     const struct sx_filtered_status *filtered,
				     struct sx_post_filter_result *result)
{
	const struct sx_enabled *e = prof->points[SX_PT_POST_FILTER];
	struct sx_status *acc = sx_status_new(SX_UNSCHEDULABLE, NULL);
	sx_str nominated = SX_STR_EMPTY;

	for (unsigned i = 0; acc != sx_status_oom() && i < prof->n[SX_PT_POST_FILTER]; i++) {
		struct sx_post_filter_result r = { SX_STR_EMPTY };
		struct sx_status *st = e[i].plugin->post_filter(e[i].self, cs, pod, filtered, &r);

		if (sx_status_is_success(st)) {
			sx_status_free(st);
			sx_status_free(acc);
			result->nominated_node = r.nominated_node;
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
