/* TaintToleration (Filter, PreScore, Score, NormalizeScore): NoSchedule and
 * NoExecute taints must be tolerated; untolerated PreferNoSchedule taints
 * lower the score (upstream tainttoleration/taint_toleration.go).
 * Tolerations with the operators Lt and Gt match only with the gate
 * TaintTolerationComparisonOperators (Alpha, off, 1.35-1.37): the plugin
 * passes it to ToleratesTaint as enableComparisonOperators. */
#include <stdlib.h>
#include <string.h>

#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"
#include "schedext/selector.h"
#include "slots.h"

#define NAME "TaintToleration"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_untolerated = SX_STATUS_STATIC(
	SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, "node(s) had untolerated taint(s)");

#define FILTER_EFFECTS ((1u << SX_EFFECT_NO_SCHEDULE) | (1u << SX_EFFECT_NO_EXECUTE))

/* The instance: whether Lt and Gt compare (NULL self, in direct tests:
 * they do not). */
struct tt_plugin {
	bool compare;
};

static bool compare_ops(const void *self)
{
	return self && ((const struct tt_plugin *)self)->compare;
}

static void *init_taint_toleration(const struct cJSON *args, struct sx_handle *h,
				   struct sx_error *err)
{
	struct tt_plugin *p = calloc(1, sizeof(*p));
	struct sx_features f = sx_handle_features(h);

	SX_UNUSED(args);
	if (!p) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	p->compare = sx_feature_enabled(&f, SX_FEATURE_TAINT_TOLERATION_COMPARISON_OPERATORS);
	return p;
}

static void destroy_taint_toleration(void *self)
{
	free(self);
}

/* PreScore state: the pod's tolerations that can tolerate a
 * PreferNoSchedule taint (effect empty or PreferNoSchedule). Owned by the
 * cycle's slot. */
struct prescore {
	uint32_t n;
	struct sx_toleration tols[]; /* flexible array */
};

static struct sx_status *filter_taint_toleration(void *self, const struct sx_cycle_state *cs,
						 const struct sx_pod *pod,
						 const struct sx_node_info *ni)
{
	const struct sx_taint *t;

	if (!ni->node)
		return sx_status_new(SX_ERROR, "invalid nodeInfo");
	if (ni->node->ntaints == 0)
		return NULL; /* most nodes: nothing to tolerate */
	t = sx_find_untolerated_taint_ops(ni->node->taints, ni->node->ntaints, pod->tolerations,
					  pod->ntolerations, FILTER_EFFECTS, compare_ops(self));
	if (!t)
		return NULL;
	/* Keys and values can be sensitive: statuses and events name no taint
	 * (kubernetes PR 134740); the log keeps it at a verbose level. */
	if (sx_log_verbosity >= 4)
		sx_log(4, "node %s had untolerated taint {%s: %s} for pod %s/%s",
		       sx_str_get(ni->name), sx_str_get(t->key), sx_str_get(t->value),
		       sx_str_get(pod->meta.ns), pod->meta.name);
	return &reject_untolerated;
}

/* The taint Filter did not tolerate (the detail a status does not carry:
 * statuses name no taint since upstream PR 134740; an explainer's reader
 * may read the node anyway). */
static void explain_taint_toleration(void *self, const struct sx_cycle_state *cs,
				     const struct sx_pod *pod, const struct sx_node_info *ni,
				     const struct sx_status *st, struct sx_detail *d)
{
	const struct sx_taint *t;
	char buf[512];

	SX_UNUSED(cs);
	SX_UNUSED(st);
	if (!ni || !ni->node)
		return;
	t = sx_find_untolerated_taint_ops(ni->node->taints, ni->node->ntaints, pod->tolerations,
					  pod->ntolerations, FILTER_EFFECTS, compare_ops(self));
	if (!t)
		return;
	sx_taint_string(t, buf, sizeof(buf));
	sx_detail_text(d, "taint %s", buf);
	sx_detail_str(d, "taint", buf);
}

static struct prescore *prescore_new(uint32_t n)
{
	struct prescore *s = malloc(sizeof(*s) + (size_t)n * sizeof(s->tols[0]));

	if (s)
		s->n = 0;
	return s;
}

static void *state_clone_taint_toleration(const void *state)
{
	const struct prescore *src = state;
	struct prescore *dst = prescore_new(src->n);

	if (!dst)
		return NULL;
	dst->n = src->n;
	memcpy(dst->tols, src->tols, (size_t)src->n * sizeof(src->tols[0]));
	return dst;
}

static void state_free_taint_toleration(void *state)
{
	free(state);
}

/* Never skips: every node gets a count, even when the pod has no
 * tolerations (all untolerated PreferNoSchedule taints count). */
static struct sx_status *pre_score_taint_toleration(void *self, struct sx_cycle_state *cs,
						    const struct sx_pod *pod,
						    struct sx_node_info *const *nodes, uint32_t n)
{
	struct prescore *s = prescore_new(pod->ntolerations);

	if (!s)
		return sx_status_oom();
	for (uint32_t i = 0; i < pod->ntolerations; i++) {
		uint8_t e = pod->tolerations[i].effect;
		if (e == SX_EFFECT_NONE || e == SX_EFFECT_PREFER_NO_SCHEDULE)
			s->tols[s->n++] = pod->tolerations[i];
	}
	free(cs->slots[SX_SLOT_taint_toleration]);
	cs->slots[SX_SLOT_taint_toleration] = s;
	return NULL;
}

/* Raw score: how many PreferNoSchedule taints of the node the pod does not
 * tolerate (reversed by NormalizeScore, so fewer is better). */
static struct sx_status *score_taint_toleration(void *self, const struct sx_cycle_state *cs,
						const struct sx_pod *pod,
						const struct sx_node_info *ni, int64_t *score)
{
	const struct prescore *s = cs->slots[SX_SLOT_taint_toleration];
	int64_t count = 0;

	if (!s)
		return sx_status_new(SX_ERROR,
				     "failed to read \"PreScoreTaintToleration\" from cycleState: "
				     "not found");
	if (!ni->node)
		return sx_status_new(SX_ERROR, "invalid nodeInfo");
	for (uint32_t i = 0; i < ni->node->ntaints; i++) {
		const struct sx_taint *t = &ni->node->taints[i];
		if (t->effect != SX_EFFECT_PREFER_NO_SCHEDULE)
			continue;
		if (!sx_tolerations_tolerate_ops(s->tols, s->n, t, compare_ops(self)))
			count++;
	}
	*score = count;
	return NULL;
}

static struct sx_status *normalize_score_taint_toleration(void *self,
							  const struct sx_cycle_state *cs,
							  const struct sx_pod *pod,
							  struct sx_node_score *scores, uint32_t n)
{
	sx_default_normalize_score(SX_MAX_NODE_SCORE, true, scores, n);
	return NULL;
}

/* ---------- queueing hints ---------- */

static bool untolerated(const void *self, const struct sx_node *node, const struct sx_pod *pod)
{
	return sx_find_untolerated_taint_ops(node->taints, node->ntaints, pod->tolerations,
					     pod->ntolerations, FILTER_EFFECTS,
					     compare_ops(self)) != NULL;
}

/* isSchedulableAfterNodeChange: the node was added, or had an untolerated
 * taint before, and has none now. */
static enum sx_hint hint_node_taint_toleration(void *self, const struct sx_pod *pod,
					       const void *old_obj, const void *new_obj)
{
	const struct sx_node *o = old_obj, *n = new_obj;

	if (!n || untolerated(self, n, pod))
		return SX_QUEUE_SKIP;
	return !o || untolerated(self, o, pod) ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* isSchedulableAfterPodTolerationChange: the pod itself got a toleration. */
static enum sx_hint hint_pod_taint_toleration(void *self, const struct sx_pod *pod,
					      const void *old_obj, const void *new_obj)
{
	const struct sx_pod *n = new_obj;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!n || !n->meta.uid || !pod->meta.uid)
		return SX_QUEUE_SKIP;
	return strcmp(n->meta.uid, pod->meta.uid) == 0 ? SX_QUEUE : SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_taint_toleration[] = {
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_TAINT, hint_node_taint_toleration},
	{SX_RES_POD, SX_ACT_UPDATE_POD_TOLERATION, hint_pod_taint_toleration},
	SX_EVENTS_END,
};

/* TaintToleration.SignPod: the tolerations (taint_toleration.go). */
static struct sx_status *sign_taint_toleration(void *self, const struct sx_pod *pod,
					       uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_TOLERATIONS;
	return NULL;
}

const struct sx_plugin sx_plugin_taint_toleration = {
	.name = NAME,
	.init = init_taint_toleration,
	.destroy = destroy_taint_toleration,
	.state_clone = state_clone_taint_toleration,
	.state_free = state_free_taint_toleration,
	.filter = filter_taint_toleration,
	.pre_score = pre_score_taint_toleration,
	.score = score_taint_toleration,
	.normalize_score = normalize_score_taint_toleration,
	.events = events_taint_toleration,
	.explain = explain_taint_toleration,
	.sign = sign_taint_toleration,
};
