/* NodeName (Filter): a pod with spec.nodeName set fits only that node
 * (reference plugins.md §3.3; no PreFilter in 1.30-1.35). */
#include "schedext/plugin.h"

#define REASON_NODE_NAME "node(s) didn't match the requested node name"

static struct sx_status *filter_node_name(void *self, const struct sx_cycle_state *cs,
					  const struct sx_pod *pod, const struct sx_node_info *ni)
{
	sx_str name = ni->node ? ni->node->name_id : ni->name;

	if (pod->node_name == SX_STR_EMPTY || pod->node_name == name)
		return NULL;
	return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NODE_NAME);
}

const struct sx_plugin sx_plugin_node_name = {
	.name = "NodeName",
	.filter = filter_node_name,
};
