/* Direct tests of PodTopologySpread: args validation, and AddPod/RemovePod
 * updating the domain counts and minimum on a cloned state. */
#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_pod_topology_spread;
#define P sx_plugin_pod_topology_spread

static void check_args(const char *json, const char *want)
{
	struct sx_error err = { 0 };
	cJSON *j = cJSON_Parse(json);
	void *self = P.init(j, NULL, &err);
	if (want) {
		CHECK(self == NULL);
		CHECK_STR(err.msg, want);
	} else {
		CHECK(self != NULL);
	}
	P.destroy(self);
	cJSON_Delete(j);
}

static void test_args(void)
{
	check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":1,"
		   "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}]}", NULL);
	check_args("{\"defaultingType\":\"System\",\"defaultConstraints\":[{\"maxSkew\":1,"
		   "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}]}",
		   "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty");
	check_args("{\"defaultingType\":\"Foo\"}",
		   "defaultingType: Unsupported value: \"Foo\": supported values: \"System\", \"List\"");
	check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":0,"
		   "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
		   "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)");
	check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":["
		   "{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"},"
		   "{\"maxSkew\":2,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
		   "defaultConstraints[1]: Duplicate value: \"{zone, ScheduleAnyway}\"");
}

#define POD(name, node)                                                                        \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"labels\":{\"foo\":\"\"}}," \
	"\"spec\":{" node "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"                   \
	"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","                 \
	"\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"foo\":\"\"}}}]}}"

static void test_add_remove_on_clone(void)
{
	char buf[256];
	struct sx_cache *c = sx_cache_new();
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"a\",\"labels\":{\"zone\":\"z1\"}}}");
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"b\",\"labels\":{\"zone\":\"z2\"}}}");
	tu_add(c, "Pod", POD("existing", "\"nodeName\":\"a\","));
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod(POD("incoming", ""));
	struct sx_pod *other = tu_pod(POD("nominated", "\"nodeName\":\"b\","));
	void *self = P.init(NULL, NULL, &(struct sx_error){ 0 });
	struct sx_cycle_state cs = { .snap = snap };

	/* 1/0: only b fits. */
	CHECK_STR(tu_status(P.pre_filter(self, &cs, pod, NULL), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't match pod topology spread constraints");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "b")), buf, sizeof(buf)), "Success");
	/* A nominated pod on b makes it 1/1: both fit on the clone. */
	struct sx_cycle_state clone = { .snap = snap };
	clone.slots[SX_SLOT_pod_topology_spread] = P.state_clone(cs.slots[SX_SLOT_pod_topology_spread]);
	CHECK_STR(tu_status(P.add_pod(self, &clone, pod, other, tu_ni(snap, "b")), buf, sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "a")), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "b")), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't match pod topology spread constraints");
	/* Removing the existing pod from a on the original: 0/0. */
	CHECK_STR(tu_status(P.remove_pod(self, &cs, pod, other, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)), "Success");

	P.state_free(clone.slots[SX_SLOT_pod_topology_spread]);
	P.state_free(cs.slots[SX_SLOT_pod_topology_spread]);
	P.destroy(self);
	sx_pod_unref(pod);
	sx_pod_unref(other);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_args), SX_TEST(test_add_remove_on_clone))
