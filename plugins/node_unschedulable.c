/* NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless
 * the pod tolerates the node.kubernetes.io/unschedulable:NoSchedule taint
 * (reference plugins.md §3.4). */
#include "schedext/plugin.h"
#include "schedext/selector.h"

#define REASON_UNSCHEDULABLE "node(s) were unschedulable"
/* Upstream's old answer for a NodeInfo without a Node; 1.34 never reaches
 * it (the snapshot holds only NodeInfos with a node), kept as a guard. */
#define REASON_UNKNOWN_CONDITION "node(s) had unknown conditions"

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
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_UNKNOWN_CONDITION);
	if (!ni->node->unschedulable)
		return NULL;
	if (sx_tolerations_tolerate(pod->tolerations, pod->ntolerations, &taint))
		return NULL;
	return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_UNSCHEDULABLE);
}

const struct sx_plugin sx_plugin_node_unschedulable = {
	.name = "NodeUnschedulable",
	.filter = filter_node_unschedulable,
};
