/* Direct tests of InterPodAffinity: args validation, and AddPod/RemovePod
 * on a cloned cycle state (the nominated-pods / preemption path). */
#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_inter_pod_affinity;
#define P sx_plugin_inter_pod_affinity

static void test_args(void)
{
	struct sx_error err = { 0 };
	cJSON *bad = cJSON_Parse("{\"hardPodAffinityWeight\": 101}");
	cJSON *ok = cJSON_Parse("{\"hardPodAffinityWeight\": 0, \"ignorePreferredTermsOfExistingPods\": true}");
	void *self = P.init(bad, NULL, &err);
	CHECK(self == NULL);
	CHECK_STR(err.msg, "hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]");
	self = P.init(ok, NULL, &err);
	CHECK(self != NULL);
	P.destroy(self);
	cJSON_Delete(bad);
	cJSON_Delete(ok);
}

#define ANTI_POD(name, node)                                                                  \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"labels\":{\"app\":\"db\"}}," \
	"\"spec\":{" node "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"                  \
	"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"   \
	"[{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"zone\"}]}}}}"

static void test_add_remove_on_clone(void)
{
	char buf[256];
	struct sx_cache *c = sx_cache_new();
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"a\",\"labels\":{\"zone\":\"z1\"}}}");
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"b\",\"labels\":{\"zone\":\"z2\"}}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod(ANTI_POD("incoming", ""));
	struct sx_pod *other = tu_pod(ANTI_POD("nominated", "\"nodeName\":\"a\","));
	void *self = P.init(NULL, NULL, &(struct sx_error){ 0 });
	struct sx_cycle_state cs = { .snap = snap };

	CHECK_STR(tu_status(P.pre_filter(self, &cs, pod, NULL), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)), "Success");
	struct sx_cycle_state clone = { .snap = snap };
	clone.slots[SX_SLOT_inter_pod_affinity] = P.state_clone(cs.slots[SX_SLOT_inter_pod_affinity]);
	CHECK_STR(tu_status(P.add_pod(self, &clone, pod, other, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");
	/* Both directions match: the incoming pod's own anti-affinity wins. */
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't match pod anti-affinity rules");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "b")), buf, sizeof(buf)), "Success");
	/* The original state is untouched by the clone's AddPod. */
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.remove_pod(self, &clone, pod, other, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "a")), buf, sizeof(buf)), "Success");

	P.state_free(clone.slots[SX_SLOT_inter_pod_affinity]);
	P.state_free(cs.slots[SX_SLOT_inter_pod_affinity]);
	P.destroy(self);
	sx_pod_unref(pod);
	sx_pod_unref(other);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_args), SX_TEST(test_add_remove_on_clone))
