/* NodeName (Filter): a pod with spec.nodeName set fits only that node
 * (upstream nodename/node_name.go; no PreFilter in 1.30-1.35). */
#include "schedext/plugin.h"

#define REASON_NODE_NAME "node(s) didn't match the requested node name"
#define NAME		 "NodeName"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_other_node =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_NODE_NAME);

static struct sx_status *filter_node_name(void *self, const struct sx_cycle_state *cs,
					  const struct sx_pod *pod, const struct sx_node_info *ni)
{
	sx_str name = ni->node ? ni->node->name_id : ni->name;

	if (pod->node_name == SX_STR_EMPTY || pod->node_name == name)
		return NULL;
	return &reject_other_node;
}

/* isSchedulableAfterNodeAdd: only the node the pod names helps. */
static enum sx_hint hint_node_node_name(void *self, const struct sx_pod *pod, const void *old_obj,
					const void *new_obj)
{
	const struct sx_node *n = new_obj;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!n)
		return SX_QUEUE_SKIP;
	return pod->node_name == SX_STR_EMPTY || pod->node_name == n->name_id ? SX_QUEUE
									      : SX_QUEUE_SKIP;
}

/* With queueing hints only Node/Add (upstream drops the Update actions
 * that served the pre-check). */
static const struct sx_event_reg events_node_name[] = {
	{SX_RES_NODE, SX_ACT_ADD, hint_node_node_name},
	SX_EVENTS_END,
};

/* NodeName.SignPod: spec.nodeName (node_name.go). */
static struct sx_status *sign_node_name(void *self, const struct sx_pod *pod, uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_NODE_NAME;
	return NULL;
}

const struct sx_plugin sx_plugin_node_name = {
	.name = NAME,
	.filter = filter_node_name,
	.events = events_node_name,
	.sign = sign_node_name,
};
