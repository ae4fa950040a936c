/* TaintToleration and the shared default normalizer, called directly. */
#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_taint_toleration;

static void test_default_normalize(void)
{
	struct sx_node_score s[3] = {{0, 0}, {0, 1}, {0, 2}};

	sx_default_normalize_score(100, true, s, 3);
	CHECK_INT(s[0].score, 100);
	CHECK_INT(s[1].score, 50);
	CHECK_INT(s[2].score, 0);

	struct sx_node_score t[3] = {{0, 2}, {0, 11}, {0, 4}};
	sx_default_normalize_score(100, false, t, 3);
	CHECK_INT(t[0].score, 18);
	CHECK_INT(t[1].score, 100);
	CHECK_INT(t[2].score, 36);

	struct sx_node_score z[2] = {{0, 0}, {0, 0}};
	sx_default_normalize_score(100, false, z, 2);
	CHECK_INT(z[0].score, 0);
	sx_default_normalize_score(100, true, z, 2);
	CHECK_INT(z[0].score, 100);
	CHECK_INT(z[1].score, 100);
	sx_default_normalize_score(100, true, NULL, 0); /* no nodes: no-op */
}

static void test_filter_and_score(void)
{
	const struct sx_plugin *p = &sx_plugin_taint_toleration;
	struct sx_cache *c = sx_cache_new();
	struct sx_cycle_state cs = {0};
	char buf[256];
	int64_t score = -1;

	tu_add(c, "Node",
	       "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"taints\":["
	       "{\"key\":\"p\",\"value\":\"1\",\"effect\":\"PreferNoSchedule\"},"
	       "{\"key\":\"q\",\"value\":\"2\",\"effect\":\"PreferNoSchedule\"},"
	       "{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}]}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod =
		tu_pod("{\"metadata\":{\"name\":\"x\",\"namespace\":\"d\"},"
		       "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"
		       "\"tolerations\":[{\"key\":\"p\",\"operator\":\"Exists\"},"
		       "{\"key\":\"q\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}");
	cs.snap = snap;
	CHECK_STR(tu_status(p->filter(NULL, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "UnschedulableAndUnresolvable: node(s) had untolerated taint(s)");
	/* Score without PreScore is an Error, as upstream. */
	CHECK_STR(tu_status(p->score(NULL, &cs, pod, tu_ni(snap, "a"), &score), buf, sizeof(buf)),
		  "Error: failed to read \"PreScoreTaintToleration\" from cycleState: not found");
	CHECK(p->pre_score(NULL, &cs, pod, snap->nodes, snap->nnodes) == NULL);
	CHECK(p->score(NULL, &cs, pod, tu_ni(snap, "a"), &score) == NULL);
	CHECK_INT(score, 1); /* q's toleration has effect NoSchedule: not counted */

	void *clone = p->state_clone(cs.slots[SX_SLOT_taint_toleration]);
	CHECK(clone != NULL);
	p->state_free(clone);
	p->state_free(cs.slots[SX_SLOT_taint_toleration]);
	sx_pod_unref(pod);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_default_normalize), SX_TEST(test_filter_and_score))
