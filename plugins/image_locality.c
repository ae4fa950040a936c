/* ImageLocality (Score): favours nodes that already have the pod's images,
 * weighted by image size and by how widely the image is spread over the
 * cluster, so one node holding a popular image does not attract every pod
 * (upstream imagelocality/image_locality.go). No NormalizeScore. */
#include "schedext/plugin.h"

#define MB (1024LL * 1024)
#define MIN_THRESHOLD (23 * MB)
#define MAX_CONTAINER_THRESHOLD (1000 * MB)

/* Image size scaled by the fraction of nodes that have it; the float
 * arithmetic (ratio first, then product, truncated) is upstream's. */
static int64_t scaled_image_score(const struct sx_snapshot *snap, int64_t size, sx_str name)
{
	double spread = (double)sx_snapshot_image_nodes(snap, name) / (double)snap->nnodes;

	return (int64_t)((double)size * spread);
}

static int64_t sum_containers(const struct sx_snapshot *snap, const struct sx_node_info *ni,
			      const struct sx_container *cs, uint32_t n)
{
	int64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		int64_t size;

		if (!sx_node_info_may_have_image(ni, cs[i].image))
			continue; /* most nodes: no walk over their image lists */
		size = sx_node_info_image_size(ni, cs[i].image);
		if (size >= 0)
			sum += scaled_image_score(snap, size, cs[i].image);
	}
	return sum;
}

/* Clamps the sum into [min, 1000MB x containers] and maps it linearly to
 * 0..100 (integer division). */
static int64_t calculate_priority(int64_t sum, uint32_t ncontainers)
{
	int64_t max = MAX_CONTAINER_THRESHOLD * (int64_t)ncontainers;

	if (sum < MIN_THRESHOLD)
		sum = MIN_THRESHOLD;
	else if (sum > max)
		sum = max;
	return SX_MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max - MIN_THRESHOLD);
}

static struct sx_status *score_image_locality(void *self, const struct sx_cycle_state *cs,
					      const struct sx_pod *pod,
					      const struct sx_node_info *ni, int64_t *score)
{
	const struct sx_snapshot *snap = cs->snap;
	int64_t sum = 0;

	if (ni->node && snap && snap->nnodes > 0) {
		sum += sum_containers(snap, ni, pod->init_containers, pod->ninit);
		sum += sum_containers(snap, ni, pod->containers, pod->ncontainers);
	}
	*score = calculate_priority(sum, pod->ninit + pod->ncontainers);
	return NULL;
}

const struct sx_plugin sx_plugin_image_locality = {
	.name = "ImageLocality",
	.score = score_image_locality,
};
