/* PodGroupPodsCount (PlacementScore, 1.37, behind
 * TopologyAwareWorkloadScheduling): upstream
 * pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go,
 * PodGroupPodsCount.ScorePlacement and NormalizePlacementScore. A
 * placement scores the group's members scheduled before the cycle plus
 * those the cycle proposed there; scores are normalized to
 * [MinNodeScore, MaxNodeScore] by the highest (MinCount deliberately not
 * considered, as upstream); a highest of 0 is upstream's Error.
 *
 * Threads: no state; any thread.
 */
#include "schedext/plugin.h"

static struct sx_status *placement_score_podgroup_pods_count(void *self,
							     const struct sx_pod_group *pg,
							     const struct sx_pg_assignments *a,
							     int64_t *score)
{
	(void)self;
	(void)pg;
	*score = (int64_t)a->scheduled_before + (int64_t)a->nproposed;
	return NULL;
}

static struct sx_status *
normalize_placement_score_podgroup_pods_count(void *self, const struct sx_pod_group *pg,
					      int64_t *scores, uint32_t n)
{
	int64_t max = 0;

	(void)self;
	(void)pg;
	for (uint32_t i = 0; i < n; i++)
		max = scores[i] > max ? scores[i] : max;
	if (max == 0)
		return sx_status_new(SX_ERROR, "no pods from pod group are assigned to any of the "
					       "candidate placements");
	for (uint32_t i = 0; i < n; i++)
		scores[i] = SX_MIN_NODE_SCORE +
			    scores[i] * (SX_MAX_NODE_SCORE - SX_MIN_NODE_SCORE) / max;
	return NULL;
}

const struct sx_plugin sx_plugin_podgroup_pods_count = {
	.name = "PodGroupPodsCount",
	.placement_score = placement_score_podgroup_pods_count,
	.normalize_placement_score = normalize_placement_score_podgroup_pods_count,
};
