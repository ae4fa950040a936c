/* SchedulingGates (PreEnqueue): a pod carrying spec.schedulingGates is held
 * back from the active queue until every gate is removed
 * (upstream schedulinggates/scheduling_gates.go). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/plugin.h"

/* Gate names separated by single spaces, as Go prints a []string inside
 * "[...]". Returns a malloc'd string the caller frees, or NULL on OOM. */
static char *join_gates(const struct sx_pod *pod)
{
	size_t len = 1;
	char *out, *p;

	for (uint32_t i = 0; i < pod->ngates; i++)
		len += sx_str_len(pod->gates[i]) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	p = out;
	for (uint32_t i = 0; i < pod->ngates; i++) {
		size_t n = sx_str_len(pod->gates[i]);
		if (i > 0)
			*p++ = ' ';
		memcpy(p, sx_str_get(pod->gates[i]), n);
		p += n;
	}
	*p = '\0';
	return out;
}

/* NULL (admit) when the pod has no gates; otherwise
 * UnschedulableAndUnresolvable naming the gates in spec order. */
static struct sx_status *pre_enqueue_scheduling_gates(void *self, const struct sx_pod *pod)
{
	struct sx_status *st;
	char *gates;

	if (pod->ngates == 0)
		return NULL;
	gates = join_gates(pod);
	if (!gates)
		return sx_status_oom();
	st = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [%s]",
			   gates);
	free(gates);
	return st;
}

/* The gates the pod still has, named one by one and as an array
 * (explainers; the reason names them inside one string). */
static void explain_scheduling_gates(void *self, const struct sx_cycle_state *cs,
				     const struct sx_pod *pod, const struct sx_node_info *ni,
				     const struct sx_status *st, struct sx_detail *d)
{
	char list[400];
	size_t n = 0;

	SX_UNUSED(self);
	SX_UNUSED(cs);
	SX_UNUSED(st);
	if (ni || pod->ngates == 0)
		return;
	list[0] = '\0';
	for (uint32_t i = 0; i < pod->ngates && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				      sx_str_get(pod->gates[i]));
	sx_detail_text(d, "%u scheduling gate(s) left: %s", pod->ngates, list);
	sx_detail_strs(d, "gates", pod->gates, pod->ngates);
}

/* ---------- queueing hints ---------- */

static bool same_pod(const struct sx_pod *a, const struct sx_pod *b)
{
	if (a->meta.uid && b->meta.uid)
		return strcmp(a->meta.uid, b->meta.uid) == 0;
	return a->meta.ns == b->meta.ns && strcmp(a->meta.name, b->meta.name) == 0;
}

/* isSchedulableAfterUpdatePodSchedulingGatesEliminated: only the pod's own
 * gates going away helps it. */
static enum sx_hint hint_gates_scheduling_gates(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	const struct sx_pod *n = new_obj;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	return n && same_pod(n, pod) ? SX_QUEUE : SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_scheduling_gates[] = {
	{SX_RES_POD, SX_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED, hint_gates_scheduling_gates},
	SX_EVENTS_END,
};

const struct sx_plugin sx_plugin_scheduling_gates = {
	.name = "SchedulingGates",
	.pre_enqueue = pre_enqueue_scheduling_gates,
	.events = events_scheduling_gates,
	.explain = explain_scheduling_gates,
};
