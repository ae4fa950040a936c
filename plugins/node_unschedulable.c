/* NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless
 * the pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint
 * (upstream nodeunschedulable/node_unschedulable.go). */
#include <string.h>

#include "schedext/plugin.h"
#include "schedext/selector.h"

#define REASON_UNSCHEDULABLE "node(s) were unschedulable"
/* Upstream's old answer for a NodeInfo without a Node; 1.34 never reaches
 * it (the snapshot holds only NodeInfos with a node), kept as a guard. */
#define REASON_UNKNOWN_CONDITION "node(s) had unknown conditions"
#define NAME			 "NodeUnschedulable"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_unknown_condition =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_UNKNOWN_CONDITION);
static struct sx_status reject_unschedulable =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_UNSCHEDULABLE);

static struct sx_status *filter_node_unschedulable(void *self, const struct sx_cycle_state *cs,
						   const struct sx_pod *pod,
						   const struct sx_node_info *ni)
{
	const struct sx_taint taint = {
		.key = SX_S_UNSCHEDULABLE_TAINT,
		.value = SX_STR_EMPTY,
		.effect = SX_EFFECT_NO_SCHEDULE,
	};

	if (!ni || !ni->node)
		return &reject_unknown_condition;
	if (!ni->node->unschedulable)
		return NULL;
	if (sx_tolerations_tolerate(pod->tolerations, pod->ntolerations, &taint))
		return NULL;
	return &reject_unschedulable;
}

/* ---------- queueing hints ---------- */

/* isSchedulableAfterNodeChange: the node became (or was added) schedulable. */
static enum sx_hint hint_node_node_unschedulable(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_node *o = old_obj, *n = new_obj;
	bool was = o && !o->unschedulable;

	SX_UNUSED(self);
	SX_UNUSED(pod);
	return n && !was && !n->unschedulable ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* isSchedulableAfterPodTolerationChange: the pod itself now tolerates the
 * unschedulable taint. */
static enum sx_hint hint_pod_node_unschedulable(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	const struct sx_pod *n = new_obj;
	const struct sx_taint taint = {SX_S_UNSCHEDULABLE_TAINT, SX_STR_EMPTY,
				       SX_EFFECT_NO_SCHEDULE};

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!n || !n->meta.uid || !pod->meta.uid || strcmp(n->meta.uid, pod->meta.uid) != 0)
		return SX_QUEUE_SKIP;
	return sx_tolerations_tolerate(n->tolerations, n->ntolerations, &taint) ? SX_QUEUE
										: SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_node_unschedulable[] = {
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_TAINT, hint_node_node_unschedulable},
	{SX_RES_POD, SX_ACT_UPDATE_POD_TOLERATION, hint_pod_node_unschedulable},
	SX_EVENTS_END,
};

/* NodeUnschedulable.SignPod: the tolerations (node_unschedulable.go). */
static struct sx_status *sign_node_unschedulable(void *self, const struct sx_pod *pod,
						 uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_TOLERATIONS;
	return NULL;
}

const struct sx_plugin sx_plugin_node_unschedulable = {
	.name = NAME,
	.filter = filter_node_unschedulable,
	.events = events_node_unschedulable,
	.sign = sign_node_unschedulable,
};
