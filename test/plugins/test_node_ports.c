/* NodePorts hooks called directly: Skip, missing state, conflicts. */
#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_node_ports;
#define P (&sx_plugin_node_ports)

#define POD(ports)                                                                                 \
	"{\"metadata\":{\"name\":\"m\",\"namespace\":\"d\"},\"spec\":{\"containers\":[{"           \
	"\"name\":\"c\",\"image\":\"i\",\"ports\":[" ports "]}]}}"

static void test_skip_and_missing_state(void)
{
	struct sx_cycle_state cs = {0};
	struct sx_node_set *set = NULL;
	struct sx_cache *c = sx_cache_new();
	char buf[256];

	tu_add(c, "Node", "{\"metadata\":{\"name\":\"n\"}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *none = tu_pod(POD("{\"containerPort\":80}"));
	struct sx_pod *some = tu_pod(POD("{\"containerPort\":80,\"hostPort\":8080}"));

	cs.snap = snap;
	CHECK_STR(tu_status(P->pre_filter(NULL, &cs, none, &set), buf, sizeof(buf)), "Skip");
	CHECK(cs.slots[SX_SLOT_node_ports] == NULL);
	CHECK_STR(tu_status(P->filter(NULL, &cs, some, tu_ni(snap, "n")), buf, sizeof(buf)),
		  "Error: reading \"PreFilterNodePorts\" from cycleState: not found");
	CHECK(P->pre_filter(NULL, &cs, some, &set) == NULL);
	CHECK(set == NULL);
	CHECK(P->filter(NULL, &cs, some, tu_ni(snap, "n")) == NULL);
	void *clone = P->state_clone(cs.slots[SX_SLOT_node_ports]);
	CHECK(clone != NULL);
	P->state_free(clone);
	P->state_free(cs.slots[SX_SLOT_node_ports]);
	sx_pod_unref(none);
	sx_pod_unref(some);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

static void test_conflict(void)
{
	struct sx_cycle_state cs = {0};
	struct sx_node_set *set = NULL;
	struct sx_cache *c = sx_cache_new();
	char buf[256];

	tu_add(c, "Node", "{\"metadata\":{\"name\":\"n\"}}");
	tu_add(c, "Pod",
	       "{\"metadata\":{\"name\":\"e\",\"namespace\":\"d\"},\"spec\":{"
	       "\"nodeName\":\"n\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
	       "\"ports\":[{\"containerPort\":53,\"hostPort\":53,\"protocol\":\"UDP\","
	       "\"hostIP\":\"10.0.0.1\"}]}]}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *tcp = tu_pod(POD("{\"containerPort\":53,\"hostPort\":53}"));
	struct sx_pod *udp = tu_pod(POD("{\"containerPort\":53,\"hostPort\":53,"
					"\"protocol\":\"UDP\"}"));

	cs.snap = snap;
	CHECK(P->pre_filter(NULL, &cs, tcp, &set) == NULL);
	CHECK(P->filter(NULL, &cs, tcp, tu_ni(snap, "n")) == NULL);
	P->state_free(cs.slots[SX_SLOT_node_ports]);
	cs.slots[SX_SLOT_node_ports] = NULL;
	CHECK(P->pre_filter(NULL, &cs, udp, &set) == NULL);
	CHECK_STR(tu_status(P->filter(NULL, &cs, udp, tu_ni(snap, "n")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't have free ports for the requested pod ports");
	P->state_free(cs.slots[SX_SLOT_node_ports]);
	sx_pod_unref(tcp);
	sx_pod_unref(udp);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_skip_and_missing_state), SX_TEST(test_conflict))
