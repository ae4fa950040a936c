/* ImageLocality (Score): favours nodes that already have the pod's images,
 * weighted by image size and by how widely the image is spread over the
 * cluster, so one node holding a popular image does not attract every pod
 * (upstream imagelocality/image_locality.go). No NormalizeScore.
 *
 * Image volumes (spec.volumes[].image.reference) follow the release
 * switch: 1.35 ignores them; 1.36 adds them to the sum but not to the
 * image count that sets the 1000 MB-per-image ceiling (kubernetes PR
 * 130231); 1.37 counts them there too (PR 138951, issue 138952).
 * Stateless after init; any thread. */
#include <stdlib.h>

#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"

/* What the release does with image volumes. */
enum il_volumes { IL_IGNORE, IL_SUM, IL_SUM_AND_COUNT };

struct il_plugin {
	enum il_volumes volumes;
};

static void *init_image_locality(const struct cJSON *args, struct sx_handle *h,
				 struct sx_error *err)
{
	struct il_plugin *p = calloc(1, sizeof(*p));
	struct sx_features f = sx_handle_features(h);
	int minor = sx_release(&f);

	SX_UNUSED(args);
	if (!p) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	p->volumes = minor >= 37 ? IL_SUM_AND_COUNT : minor >= 36 ? IL_SUM : IL_IGNORE;
	return p;
}

static void destroy_image_locality(void *self)
{
	free(self);
}

#define MB			(1024LL * 1024)
#define MIN_THRESHOLD		(23 * MB)
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

/* The image volumes' scores (sumImageScores' loop over spec.volumes) and,
 * in *n, how many image volumes the pod has. */
static int64_t sum_image_volumes(const struct sx_snapshot *snap, const struct sx_node_info *ni,
				 const struct sx_pod *pod, uint32_t *n)
{
	int64_t sum = 0;

	*n = 0;
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		int64_t size;

		if (v->source != SX_VSRC_IMAGE)
			continue;
		(*n)++;
		if (!ni->node || !sx_node_info_may_have_image(ni, v->id))
			continue;
		size = sx_node_info_image_size(ni, v->id);
		if (size >= 0)
			sum += scaled_image_score(snap, size, v->id);
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
	const struct il_plugin *p = self;
	enum il_volumes mode = p ? p->volumes : IL_SUM_AND_COUNT;
	const struct sx_snapshot *snap = cs->snap;
	uint32_t nimages = pod->ninit + pod->ncontainers, nvol = 0;
	int64_t sum = 0;

	if (ni->node && snap && snap->nnodes > 0) {
		sum += sum_containers(snap, ni, pod->init_containers, pod->ninit);
		sum += sum_containers(snap, ni, pod->containers, pod->ncontainers);
		if (mode != IL_IGNORE && pod->nvolumes)
			sum += sum_image_volumes(snap, ni, pod, &nvol);
	}
	if (mode == IL_SUM_AND_COUNT)
		nimages += nvol;
	*score = calculate_priority(sum, nimages);
	return NULL;
}

/* ImageLocality.SignPod: the canonical image names (image_locality.go). */
static struct sx_status *sign_image_locality(void *self, const struct sx_pod *pod,
					     uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_IMAGE_NAMES;
	return NULL;
}

const struct sx_plugin sx_plugin_image_locality = {
	.name = "ImageLocality",
	.init = init_image_locality,
	.destroy = destroy_image_locality,
	.score = score_image_locality,
	.sign = sign_image_locality,
};
