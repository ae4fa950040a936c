/* PrioritySort (QueueSort): higher spec.priority first; among equal
 * priorities the pod queued earlier first (upstream queuesort/priority_sort.go). */
#include "schedext/plugin.h"

/* True when a must be popped before b. Equal priority and equal timestamp
 * is unordered (false both ways), as upstream. */
static bool less_priority_sort(void *self, const struct sx_queued_pod *a,
			       const struct sx_queued_pod *b)
{
	int32_t pa = a->pod->priority, pb = b->pod->priority;

	return pa > pb || (pa == pb && a->timestamp < b->timestamp);
}

const struct sx_plugin sx_plugin_priority_sort = {
	.name = "PrioritySort",
	.less = less_priority_sort,
};
