/* ImageLocality score arithmetic, called directly. */
#include "plugin_util.h"

extern const struct sx_plugin sx_plugin_image_locality;
#define P   (&sx_plugin_image_locality)
#define MIB "1048576"

static int64_t score_on(const struct sx_snapshot *snap, const char *node, const char *pod_json)
{
	struct sx_cycle_state cs = {0};
	struct sx_pod *pod = tu_pod(pod_json);
	int64_t score = -1;

	cs.snap = snap;
	CHECK(P->score(NULL, &cs, pod, tu_ni(snap, node), &score) == NULL);
	sx_pod_unref(pod);
	return score;
}

static void test_spread_and_thresholds(void)
{
	struct sx_cache *c = sx_cache_new();
	/* 300 MiB image on a and b, none on c and d; 2000 MiB only on a. */
	const char *img = "{\"names\":[\"big:latest\"],\"sizeBytes\":314572800}";

	tu_add(c, "Node",
	       "{\"metadata\":{\"name\":\"a\"},\"status\":{\"images\":[{\"names\":"
	       "[\"huge:v1\",\"huge:latest\"],\"sizeBytes\":2097152000},"
	       "{\"names\":[\"big:latest\"],\"sizeBytes\":314572800}]}}");
	char b[256];
	snprintf(b, sizeof(b), "{\"metadata\":{\"name\":\"b\"},\"status\":{\"images\":[%s]}}", img);
	tu_add(c, "Node", b);
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"c\"}}");
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"d\"},\"status\":{\"images\":[]}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);

#define ONE(img)                                                                                   \
	"{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","                \
	"\"image\":\"" img "\"}]}}"
	/* 300 MiB x 2/4 = 150 MiB -> 100 * 127 / 977 */
	CHECK_INT(score_on(snap, "a", ONE("big")), 12);
	CHECK_INT(score_on(snap, "c", ONE("big")), 0);
	/* 2000 MiB x 1/4 = 500 MiB -> 100 * 477 / 977 */
	CHECK_INT(score_on(snap, "a", ONE("huge")), 48);
	/* an init container counts and raises the max threshold to 2000 MiB:
	 * (500 + 150 - 23) / (2000 - 23) */
	CHECK_INT(score_on(snap, "a",
			   "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"initContainers\":"
			   "[{\"name\":\"i\",\"image\":\"huge\"}],\"containers\":[{"
			   "\"name\":\"c\",\"image\":\"big:latest\"}]}}"),
		  31);
	/* no containers at all: 0, no division by zero */
	CHECK_INT(score_on(snap, "a", "{\"metadata\":{\"name\":\"p\"},\"spec\":{}}"), 0);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_spread_and_thresholds))
