/* NodeResourcesBalancedAllocation across the release switch: the same
 * cluster scored by the whole default profile as 1.35 (balance after
 * placing the pod) and as 1.36/1.37 (the change in balance, kubernetes PR
 * 135573), where the two pick different nodes; and the 1.36 formula's
 * integer arithmetic at its ends (upstream balanced_allocation.go
 * balancedResourceScorer). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "plugin_util.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "../../plugins/resource_allocation.h"

#define NODE(name)                                                                                 \
	"{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"kubernetes.io/hostname\":\"" name      \
	"\"}},\"status\":{\"allocatable\":{\"cpu\":\"10\",\"memory\":\"10000\",\"pods\":\"110\"}}" \
	"}"
#define POD_ON(name, node, cpu, mem)                                                               \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"u-" name "\"},"  \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"resources\":"       \
	"{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}]},"                          \
	"\"status\":{\"phase\":\"Running\"}}"

/* Scores `pod` on the cluster with the default profile of release 1.<minor>;
 * returns the selected node's name and the BalancedAllocation score of
 * each node (by snapshot index) in ba[]. */
static const char *schedule_as(int minor, struct sx_snapshot *snap, const struct sx_pod *pod,
			       int64_t ba[2])
{
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_config *cfg;
	struct sx_cycle_result res;
	struct sx_cycle_opts opts = {.snap = snap, .mode = SX_CYCLE_FULL, .percentage = 100};
	const char *sel = "(none)";

	sx_features_init(&f, minor);
	cfg = sx_config_default_for(&f, &err);
	CHECK(cfg != NULL);
	if (!cfg)
		return sel;
	CHECK_INT(sx_schedule(sx_config_profile(cfg, NULL), pod, &opts, &res), 0);
	if (res.selected >= 0)
		sel = snap->nodes[res.selected]->node->meta.name;
	for (uint32_t p = 0; p < res.nscore_plugins; p++) {
		if (strcmp(res.score_plugins[p].plugin->name, "NodeResourcesBalancedAllocation") !=
		    0)
			continue;
		for (uint32_t i = 0; i < res.nfeasible; i++)
			ba[res.feasible[i]] = res.normalized[(size_t)i * res.nscore_plugins + p];
	}
	sx_cycle_result_free(&res);
	sx_config_free(cfg);
	return sel;
}

/* node-a: 2 cpu / 2000 memory used (20% / 20%, balanced); node-b: 4 cpu
 * (40% / 0%). NodeResourcesFit ties (65 both: free 70+60 vs 50+80). The
 * pod asks 1 cpu / 2000 memory:
 *   node-a: 20/20 -> 30/40: balance 100 -> 95; 1.35 scores 95,
 *           1.37 50 + (50 + 95 - 100) / 2 = 72
 *   node-b: 40/0 -> 50/20:  balance 80 -> 85;  1.35 scores 85,
 *           1.37 50 + (50 + 85 - 80) / 2 = 77
 * so 1.35 picks node-a and 1.36/1.37 node-b. */
static void test_release_switch(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *snap;
	struct sx_pod *pod;
	int64_t ba[2] = {-1, -1};
	int a, b;

	tu_add(c, "Node", NODE("node-a"));
	tu_add(c, "Node", NODE("node-b"));
	tu_add(c, "Pod", POD_ON("ea", "node-a", "2", "2000"));
	tu_add(c, "Pod", POD_ON("eb", "node-b", "4", "0"));
	snap = sx_cache_snapshot(c);
	a = sx_snapshot_find(snap, sx_intern("node-a"));
	b = sx_snapshot_find(snap, sx_intern("node-b"));
	pod = tu_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u-p\"},"
		     "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		     "{\"cpu\":\"1\",\"memory\":\"2000\"}}}]}}");

	CHECK_STR(schedule_as(35, snap, pod, ba), "node-a");
	CHECK_INT(ba[a], 95);
	CHECK_INT(ba[b], 85);
	CHECK_STR(schedule_as(36, snap, pod, ba), "node-b");
	CHECK_INT(ba[a], 72);
	CHECK_INT(ba[b], 77);
	CHECK_STR(schedule_as(37, snap, pod, ba), "node-b");
	CHECK_INT(ba[a], 72);
	CHECK_INT(ba[b], 77);

	sx_pod_unref(pod);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

/* 50 + (50 + with - without) / 2 over the balances' range 50..100. */
static void test_change_formula(void)
{
	CHECK_INT(sx_ra_balance_change(100, 100), 75);
	CHECK_INT(sx_ra_balance_change(50, 50), 75);
	CHECK_INT(sx_ra_balance_change(100, 50), 100);
	CHECK_INT(sx_ra_balance_change(50, 100), 50);
	CHECK_INT(sx_ra_balance_change(87, 100), 68); /* 37 / 2 truncates to 18 */
	CHECK_INT(sx_ra_balance_change(63, 100), 56);
}

SX_TESTS(SX_TEST(test_release_switch), SX_TEST(test_change_formula))
