/* Direct tests of PodTopologySpread: args validation, AddPod/RemovePod
 * updating the domain counts and minimum on a cloned state, and PreFilter's
 * per-node count memo following the cache's changes (pods added and
 * removed, node labels, nodes added and removed, older snapshots, cycles
 * on two threads). */
#include <pthread.h>
#include <stdio.h>

#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_pod_topology_spread;
#define P sx_plugin_pod_topology_spread

static void check_args(const char *json, const char *want)
{
	struct sx_error err = {0};
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
		   "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}]}",
		   NULL);
	check_args("{\"defaultingType\":\"System\",\"defaultConstraints\":[{\"maxSkew\":1,"
		   "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}]}",
		   "defaultingType: Invalid value: \"System\": when .defaultConstraints are not "
		   "empty");
	check_args("{\"defaultingType\":\"Foo\"}", "defaultingType: Unsupported value: \"Foo\": "
						   "supported values: \"System\", \"List\"");
	check_args("{\"defaultingType\":\"List\",\"defaultConstraints\":[{\"maxSkew\":0,"
		   "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]}",
		   "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)");
	check_args(
		"{\"defaultingType\":\"List\",\"defaultConstraints\":["
		"{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"},"
		"{\"maxSkew\":2,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}]"
		"}",
		"defaultConstraints[1]: Duplicate value: \"{zone, ScheduleAnyway}\"");
}

#define POD(name, node)                                                                            \
	"{\"metadata\":{\"name\":\"" name                                                          \
	"\",\"namespace\":\"default\",\"labels\":{\"foo\":\"\"}},"                                 \
	"\"spec\":{" node "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"                     \
	"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","                  \
	"\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"foo\":"     \
	"\"\"}}}]}}"

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
	void *self = P.init(NULL, NULL, &(struct sx_error){0});
	struct sx_cycle_state cs = {.snap = snap};

	/* 1/0: only b fits. */
	CHECK_STR(tu_status(P.pre_filter(self, &cs, pod, NULL), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't match pod topology spread constraints");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "b")), buf, sizeof(buf)),
		  "Success");
	/* A nominated pod on b makes it 1/1: both fit on the clone. */
	struct sx_cycle_state clone = {.snap = snap};
	clone.slots[SX_SLOT_pod_topology_spread] =
		P.state_clone(cs.slots[SX_SLOT_pod_topology_spread]);
	CHECK_STR(
		tu_status(P.add_pod(self, &clone, pod, other, tu_ni(snap, "b")), buf, sizeof(buf)),
		"Success");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "b")), buf, sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't match pod topology spread constraints");
	/* Removing the existing pod from a on the original: 0/0. */
	CHECK_STR(
		tu_status(P.remove_pod(self, &cs, pod, other, tu_ni(snap, "a")), buf, sizeof(buf)),
		"Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");

	P.state_free(clone.slots[SX_SLOT_pod_topology_spread]);
	P.state_free(cs.slots[SX_SLOT_pod_topology_spread]);
	P.destroy(self);
	sx_pod_unref(pod);
	sx_pod_unref(other);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

#define NODE(name, labels) "{\"metadata\":{\"name\":\"" name "\",\"labels\":{" labels "}}}"
#define BARE(name, ns, labels, node)                                                               \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\",\"labels\":{" labels "}},"  \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}"

/* PreFilter then Filter on every node of snap, in snapshot order:
 * "name:ok" / "name:skew" / "name:label" joined by spaces. */
static const char *verdicts(const struct sx_snapshot *snap, const struct sx_pod *pod, char *out,
			    size_t len)
{
	void *self = P.init(NULL, NULL, &(struct sx_error){0});
	struct sx_cycle_state cs = {.snap = snap};
	struct sx_status *st = P.pre_filter(self, &cs, pod, NULL);
	size_t at = 0;

	out[0] = '\0';
	CHECK(st == NULL);
	sx_status_free(st);
	for (uint32_t k = 0; k < snap->nnodes && at < len; k++) {
		struct sx_status *f = P.filter(self, &cs, pod, snap->nodes[k]);
		const char *v = !f ? "ok" : f->code == SX_UNSCHEDULABLE ? "skew" : "label";
		at += snprintf(out + at, len - at, "%s%s:%s", k ? " " : "",
			       sx_str_get(snap->nodes[k]->name), v);
		sx_status_free(f); /* static rejections: a no-op */
	}
	P.state_free(cs.slots[SX_SLOT_pod_topology_spread]);
	P.destroy(self);
	return out;
}

static void test_memo_follows_cache(void)
{
	char buf[256];
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s1, *s2, *s3, *s;
	struct sx_pod *pod = tu_pod(POD("incoming", ""));

	tu_add(c, "Node", NODE("a", "\"zone\":\"z1\""));
	tu_add(c, "Node", NODE("b", "\"zone\":\"z2\""));
	tu_add(c, "Pod", POD("existing", "\"nodeName\":\"a\","));
	s1 = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s1, pod, buf, sizeof(buf)), "a:skew b:ok");
	/* Pods added on b: 1/1, then 1/2. */
	tu_add(c, "Pod", POD("p2", "\"nodeName\":\"b\","));
	s2 = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s2, pod, buf, sizeof(buf)), "a:ok b:ok");
	tu_add(c, "Pod", POD("p3", "\"nodeName\":\"b\","));
	s3 = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s3, pod, buf, sizeof(buf)), "a:ok b:skew");
	/* An older snapshot again (a cycle that started earlier). */
	CHECK_STR(verdicts(s1, pod, buf, sizeof(buf)), "a:skew b:ok");
	CHECK_STR(verdicts(s2, pod, buf, sizeof(buf)), "a:ok b:ok");
	/* Pods of another namespace or not matching do not count. */
	tu_add(c, "Pod", BARE("other-ns", "kube-system", "\"foo\":\"\"", "a"));
	tu_add(c, "Pod", BARE("other-labels", "default", "\"bar\":\"\"", "a"));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, pod, buf, sizeof(buf)), "a:ok b:skew");
	sx_snapshot_unref(s);
	/* The existing pod removed from a: 0/2. */
	CHECK_INT(sx_cache_delete(c, SX_KIND_POD, sx_intern("default"), "existing"), 0);
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, pod, buf, sizeof(buf)), "a:ok b:skew");
	sx_snapshot_unref(s);
	/* b's zone becomes z1: one domain holding both pods. */
	tu_add(c, "Node", NODE("b", "\"zone\":\"z1\""));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, pod, buf, sizeof(buf)), "a:ok b:ok");
	sx_snapshot_unref(s);
	/* A new empty zone: min 0, both z1 nodes now too skewed. */
	tu_add(c, "Node", NODE("c", "\"zone\":\"z3\""));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, pod, buf, sizeof(buf)), "a:skew b:skew c:ok");
	sx_snapshot_unref(s);
	/* b loses its zone label (not counted, rejected), c is deleted. */
	tu_add(c, "Node", NODE("b", "\"other\":\"x\""));
	CHECK_INT(sx_cache_delete(c, SX_KIND_NODE, SX_STR_EMPTY, "c"), 0);
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, pod, buf, sizeof(buf)), "a:ok b:label");
	sx_snapshot_unref(s);
	/* And the first snapshots still say what they said. */
	CHECK_STR(verdicts(s3, pod, buf, sizeof(buf)), "a:ok b:skew");
	CHECK_STR(verdicts(s1, pod, buf, sizeof(buf)), "a:skew b:ok");

	sx_pod_unref(pod);
	sx_snapshot_unref(s1);
	sx_snapshot_unref(s2);
	sx_snapshot_unref(s3);
	sx_cache_free(c);
}

/* A selector built from matchLabelKeys takes the incoming pod's value: pods
 * with different values are different memo entries. */
static void test_memo_match_label_keys(void)
{
	char buf[256];
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
#define MLK(name, ver)                                                                             \
	"{\"metadata\":{\"name\":\"" name                                                          \
	"\",\"namespace\":\"default\",\"labels\":{\"app\":\"x\","                                  \
	"\"ver\":\"" ver "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"       \
	"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","                  \
	"\"whenUnsatisfiable\":\"DoNotSchedule\",\"matchLabelKeys\":[\"ver\"],"                    \
	"\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}}}]}}"
	struct sx_pod *v1 = tu_pod(MLK("in-1", "1")), *v2 = tu_pod(MLK("in-2", "2"));

	tu_add(c, "Node", NODE("a", "\"zone\":\"z1\""));
	tu_add(c, "Node", NODE("b", "\"zone\":\"z2\""));
	tu_add(c, "Pod", BARE("old-1", "default", "\"app\":\"x\",\"ver\":\"1\"", "a"));
	tu_add(c, "Pod", BARE("old-2", "default", "\"app\":\"x\",\"ver\":\"2\"", "b"));
	s = sx_cache_snapshot(c);
	for (int i = 0; i < 2; i++) {
		CHECK_STR(verdicts(s, v1, buf, sizeof(buf)), "a:skew b:ok");
		CHECK_STR(verdicts(s, v2, buf, sizeof(buf)), "a:ok b:skew");
	}
	sx_snapshot_unref(s);
	sx_pod_unref(v1);
	sx_pod_unref(v2);
	sx_cache_free(c);
#undef MLK
}

/* Cycles on two threads, each on its own snapshot, share the memo (what
 * the extender's concurrent requests do); under TSan this checks its
 * locking. */
struct racer {
	const struct sx_snapshot *snap;
	const struct sx_pod *pod;
	const char *want;
	int bad;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char buf[256];

	for (int i = 0; i < 200; i++)
		if (strcmp(verdicts(r->snap, r->pod, buf, sizeof(buf)), r->want) != 0)
			r->bad++;
	return NULL;
}

static void test_memo_concurrent(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_pod *pod = tu_pod(POD("incoming", ""));
	pthread_t t;

	tu_add(c, "Node", NODE("a", "\"zone\":\"z1\""));
	tu_add(c, "Node", NODE("b", "\"zone\":\"z2\""));
	tu_add(c, "Pod", POD("existing", "\"nodeName\":\"a\","));
	struct racer r1 = {sx_cache_snapshot(c), pod, "a:skew b:ok", 0};
	tu_add(c, "Pod", POD("p2", "\"nodeName\":\"b\","));
	tu_add(c, "Pod", POD("p3", "\"nodeName\":\"b\","));
	struct racer r2 = {sx_cache_snapshot(c), pod, "a:ok b:skew", 0};
	CHECK_INT(pthread_create(&t, NULL, race, &r1), 0);
	race(&r2);
	pthread_join(t, NULL);
	CHECK_INT(r1.bad, 0);
	CHECK_INT(r2.bad, 0);
	sx_snapshot_unref(r1.snap);
	sx_snapshot_unref(r2.snap);
	sx_pod_unref(pod);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_args), SX_TEST(test_add_remove_on_clone), SX_TEST(test_memo_follows_cache),
	 SX_TEST(test_memo_match_label_keys), SX_TEST(test_memo_concurrent))
