/* Each default plugin's registered cluster events and queueing hints
 * (upstream EventsToRegister and isSchedulableAfter*), the event matching
 * rules, and the update-to-action extraction (framework/events.go). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/decode.h"
#include "schedext/dra.h"
#include "schedext/dra_alloc.h"
#include "schedext/features.h"
#include "schedext/config.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"
#include "schedext/preemption.h"
#include "schedext/registry.h"

#define NOT_REGISTERED (-1)

static struct sx_pod *pod_json(const char *name, const char *ns, const char *meta, const char *spec)
{
	char buf[4096];
	struct sx_error err = {0};
	struct sx_pod *pod;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"u-%s\"%s%s},"
		 "\"spec\":{%s}}",
		 name, ns, name, meta && *meta ? "," : "", meta ? meta : "", spec ? spec : "");
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	if (!pod)
		fprintf(stderr, "decode %s: %s\n", buf, err.msg);
	return pod;
}

static struct sx_pod *pod_s(const char *name, const char *spec)
{
	return pod_json(name, "ns", NULL, spec);
}

static struct sx_node *node_json(const char *name, const char *labels, const char *spec,
				 const char *cpu)
{
	char buf[2048];
	struct sx_error err = {0};
	struct sx_node *node;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},\"spec\":{%s},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"8Gi\",\"pods\":\"110\"}}"
		 "}",
		 name, labels ? labels : "", spec ? spec : "", cpu ? cpu : "4");
	j = cJSON_Parse(buf);
	node = sx_decode_node(j, &err);
	cJSON_Delete(j);
	if (!node)
		fprintf(stderr, "decode %s: %s\n", buf, err.msg);
	return node;
}

/* What `plugin`'s registrations say about the event: NOT_REGISTERED when
 * no row matches, else the first matching row's hint (NULL hint = Queue). */
/* The handle the instances of hint() get (NULL: none). */
static struct sx_handle *hint_handle;

static int hint(const char *plugin, uint8_t res, uint32_t action, const struct sx_pod *pod,
		const void *o, const void *n)
{
	int idx = sx_plugin_index(plugin);
	const struct sx_plugin *p = idx >= 0 ? sx_plugins[idx] : NULL;
	struct sx_cluster_event ev = {res, action, NULL};
	struct sx_error err = {0};
	void *self = NULL;
	int out = NOT_REGISTERED;

	if (!p || !p->events)
		return NOT_REGISTERED;
	if (p->init)
		self = p->init(NULL, hint_handle, &err);
	for (const struct sx_event_reg *r = p->events; r->resource != SX_RES_NONE; r++)
		if (sx_event_matches(r, &ev)) {
			out = r->hint ? (int)r->hint(self, pod, o, n) : SX_QUEUE;
			break;
		}
	if (p->destroy)
		p->destroy(self);
	return out;
}

static void setup(void)
{
	sx_intern_init();
}

static void test_matching(void)
{
	struct sx_event_reg pod_label = {SX_RES_POD, SX_ACT_UPDATE_POD_LABEL, NULL};
	struct sx_event_reg node_all = {SX_RES_NODE, SX_ACT_ALL, NULL};
	struct sx_event_reg wild = {SX_RES_WILDCARD, SX_ACT_ALL, NULL};
	struct sx_cluster_event assigned_label = {SX_RES_ASSIGNED_POD, SX_ACT_UPDATE_POD_LABEL,
						  NULL};
	struct sx_cluster_event pod_update = {SX_RES_UNSCHEDULED_POD, SX_ACT_UPDATE, NULL};
	struct sx_cluster_event node_add = {SX_RES_NODE, SX_ACT_ADD, NULL};
	struct sx_cluster_event any = {SX_RES_WILDCARD, SX_ACT_ALL, NULL};
	char buf[64];

	CHECK(sx_event_matches(&pod_label, &assigned_label));
	CHECK(!sx_event_matches(&pod_label,
				&pod_update)); /* general Update is not a label update */
	CHECK(!sx_event_matches(&pod_label, &node_add));
	CHECK(sx_event_matches(&node_all, &node_add));
	CHECK(!sx_event_matches(&node_all, &any));
	CHECK(sx_event_matches(&wild, &any));
	CHECK(sx_event_matches(&wild, &node_add));
	CHECK_STR(sx_event_label(&node_add, buf, sizeof(buf)), "NodeAdd");
	CHECK_STR(sx_event_label(&assigned_label, buf, sizeof(buf)), "AssignedPodUpdatePodLabel");
	CHECK_STR(sx_action_name(SX_ACT_UPDATE_NODE_ALLOCATABLE), "UpdateNodeAllocatable");
}

static void test_update_actions(void)
{
	struct sx_pod *a =
		pod_json("p", "ns", "\"labels\":{\"x\":\"1\"}",
			 "\"schedulingGates\":[{\"name\":\"g\"}],\"containers\":[{\"name\":"
			 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]");
	struct sx_pod *b =
		pod_json("p", "ns", "\"labels\":{\"x\":\"2\"}",
			 "\"tolerations\":[{\"operator\":\"Exists\"}],\"containers\":"
			 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]");
	struct sx_node *n1 = node_json("n", "\"z\":\"a\"", "\"unschedulable\":true", "4");
	struct sx_node *n2 = node_json(
		"n", "\"z\":\"b\"", "\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", "8");

	setup();
	CHECK(sx_pod_update_actions(a, b) ==
	      (SX_ACT_UPDATE_POD_LABEL | SX_ACT_UPDATE_POD_SCALE_DOWN |
	       SX_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED | SX_ACT_UPDATE_POD_TOLERATION));
	CHECK(sx_pod_update_actions(b, b) == 0);
	CHECK(sx_pod_update_actions(b, a) ==
	      (SX_ACT_UPDATE_POD_LABEL | SX_ACT_UPDATE_POD_TOLERATION));
	CHECK(sx_node_update_actions(n1, n2) ==
	      (SX_ACT_UPDATE_NODE_TAINT | SX_ACT_UPDATE_NODE_ALLOCATABLE |
	       SX_ACT_UPDATE_NODE_LABEL));
	CHECK(sx_node_update_actions(n1, n1) == 0);
	sx_pod_unref(a);
	sx_pod_unref(b);
	sx_node_unref(n1);
	sx_node_unref(n2);
}

static void test_scheduling_gates(void)
{
	struct sx_pod *p = pod_s("p", NULL), *other = pod_s("o", NULL);
	const uint32_t gone = SX_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED;

	setup();
	CHECK_INT(hint("SchedulingGates", SX_RES_UNSCHEDULED_POD, gone, p, p, p), SX_QUEUE);
	CHECK_INT(hint("SchedulingGates", SX_RES_UNSCHEDULED_POD, gone, p, other, other),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("SchedulingGates", SX_RES_NODE, SX_ACT_ADD, p, NULL, NULL), NOT_REGISTERED);
	sx_pod_unref(p);
	sx_pod_unref(other);
}

static void test_node_unschedulable(void)
{
	struct sx_pod *p = pod_s("p", NULL);
	struct sx_pod *tol =
		pod_s("p", "\"tolerations\":[{\"key\":"
			   "\"node.kubernetes.io/unschedulable\",\"operator\":\"Exists\","
			   "\"effect\":\"NoSchedule\"}]");
	struct sx_node *off = node_json("n", NULL, "\"unschedulable\":true", NULL);
	struct sx_node *on = node_json("n", NULL, NULL, NULL);

	setup();
	CHECK_INT(hint("NodeUnschedulable", SX_RES_NODE, SX_ACT_ADD, p, NULL, on), SX_QUEUE);
	CHECK_INT(hint("NodeUnschedulable", SX_RES_NODE, SX_ACT_ADD, p, NULL, off), SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeUnschedulable", SX_RES_NODE, SX_ACT_UPDATE_NODE_TAINT, p, off, on),
		  SX_QUEUE);
	CHECK_INT(hint("NodeUnschedulable", SX_RES_NODE, SX_ACT_UPDATE_NODE_TAINT, p, on, on),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeUnschedulable", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, on, on),
		  NOT_REGISTERED);
	CHECK_INT(hint("NodeUnschedulable", SX_RES_UNSCHEDULED_POD, SX_ACT_UPDATE_POD_TOLERATION, p,
		       p, tol),
		  SX_QUEUE);
	CHECK_INT(hint("NodeUnschedulable", SX_RES_UNSCHEDULED_POD, SX_ACT_UPDATE_POD_TOLERATION, p,
		       p, p),
		  SX_QUEUE_SKIP);
	sx_pod_unref(p);
	sx_pod_unref(tol);
	sx_node_unref(off);
	sx_node_unref(on);
}

static void test_node_name(void)
{
	struct sx_pod *p = pod_s("p", "\"nodeName\":\"want\"");
	struct sx_node *want = node_json("want", NULL, NULL, NULL);
	struct sx_node *other = node_json("other", NULL, NULL, NULL);

	setup();
	CHECK_INT(hint("NodeName", SX_RES_NODE, SX_ACT_ADD, p, NULL, want), SX_QUEUE);
	CHECK_INT(hint("NodeName", SX_RES_NODE, SX_ACT_ADD, p, NULL, other), SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeName", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, want, want),
		  NOT_REGISTERED);
	sx_pod_unref(p);
	sx_node_unref(want);
	sx_node_unref(other);
}

static void test_taint_toleration(void)
{
	struct sx_pod *p = pod_s("p", NULL);
	struct sx_pod *tol =
		pod_s("p", "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]");
	struct sx_node *tainted = node_json(
		"n", NULL, "\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", NULL);
	struct sx_node *soft = node_json(
		"n", NULL, "\"taints\":[{\"key\":\"k\",\"effect\":\"PreferNoSchedule\"}]", NULL);
	struct sx_node *clean = node_json("n", NULL, NULL, NULL);

	setup();
	CHECK_INT(hint("TaintToleration", SX_RES_NODE, SX_ACT_ADD, p, NULL, clean), SX_QUEUE);
	CHECK_INT(hint("TaintToleration", SX_RES_NODE, SX_ACT_ADD, p, NULL, tainted),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("TaintToleration", SX_RES_NODE, SX_ACT_ADD, tol, NULL, tainted), SX_QUEUE);
	CHECK_INT(hint("TaintToleration", SX_RES_NODE, SX_ACT_UPDATE_NODE_TAINT, p, tainted, soft),
		  SX_QUEUE);
	CHECK_INT(hint("TaintToleration", SX_RES_NODE, SX_ACT_UPDATE_NODE_TAINT, p, soft, clean),
		  SX_QUEUE_SKIP); /* it was already tolerated */
	CHECK_INT(hint("TaintToleration", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, p, NULL),
		  NOT_REGISTERED);
	CHECK_INT(hint("TaintToleration", SX_RES_UNSCHEDULED_POD, SX_ACT_UPDATE_POD_TOLERATION, p,
		       p, tol),
		  SX_QUEUE);
	sx_pod_unref(p);
	sx_pod_unref(tol);
	sx_node_unref(tainted);
	sx_node_unref(soft);
	sx_node_unref(clean);
}

static void test_node_affinity(void)
{
	struct sx_pod *p = pod_s("p", "\"nodeSelector\":{\"zone\":\"a\"}");
	struct sx_node *a = node_json("n", "\"zone\":\"a\"", NULL, NULL);
	struct sx_node *a2 = node_json("n", "\"zone\":\"a\",\"x\":\"y\"", NULL, NULL);
	struct sx_node *b = node_json("n", "\"zone\":\"b\"", NULL, NULL);

	setup();
	CHECK_INT(hint("NodeAffinity", SX_RES_NODE, SX_ACT_ADD, p, NULL, a), SX_QUEUE);
	CHECK_INT(hint("NodeAffinity", SX_RES_NODE, SX_ACT_ADD, p, NULL, b), SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeAffinity", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, b, a), SX_QUEUE);
	CHECK_INT(hint("NodeAffinity", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, a, a2),
		  SX_QUEUE_SKIP); /* matched before already */
	CHECK_INT(hint("NodeAffinity", SX_RES_NODE, SX_ACT_UPDATE_NODE_TAINT, p, a, a),
		  NOT_REGISTERED);
	sx_pod_unref(p);
	sx_node_unref(a);
	sx_node_unref(a2);
	sx_node_unref(b);
}

#define PORT(n)                                                                                    \
	"\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"hostPort\":" #n "}]}]"

static void test_node_ports(void)
{
	struct sx_pod *p = pod_s("p", PORT(8080));
	struct sx_pod *same = pod_s("o", "\"nodeName\":\"n\"," PORT(8080));
	struct sx_pod *diff = pod_s("o", "\"nodeName\":\"n\"," PORT(9090));
	struct sx_pod *pending = pod_s("o", PORT(8080));
	struct sx_node *n = node_json("n", NULL, NULL, NULL);

	setup();
	CHECK_INT(hint("NodePorts", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, same, NULL), SX_QUEUE);
	CHECK_INT(hint("NodePorts", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, diff, NULL),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("NodePorts", SX_RES_UNSCHEDULED_POD, SX_ACT_DELETE, p, pending, NULL),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("NodePorts", SX_RES_NODE, SX_ACT_ADD, p, NULL, n), SX_QUEUE);
	CHECK_INT(hint("NodePorts", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, n, n),
		  NOT_REGISTERED);
	CHECK_INT(hint("NodePorts", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, same),
		  NOT_REGISTERED);
	sx_pod_unref(p);
	sx_pod_unref(same);
	sx_pod_unref(diff);
	sx_pod_unref(pending);
	sx_node_unref(n);
}

#define CPU(q) "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"" q "\"}}}]"

static void test_node_resources_fit(void)
{
	struct sx_pod *p = pod_s("p", CPU("2"));
	struct sx_pod *bound = pod_s("o", "\"nodeName\":\"n\"," CPU("2"));
	struct sx_pod *bound_less = pod_s("o", "\"nodeName\":\"n\"," CPU("1"));
	struct sx_pod *pending = pod_s("o", CPU("2"));
	struct sx_node *small = node_json("n", NULL, NULL, "1"),
		       *big = node_json("n", NULL, NULL, "4");

	setup();
	CHECK_INT(hint("NodeResourcesFit", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, bound, NULL),
		  SX_QUEUE);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_UNSCHEDULED_POD, SX_ACT_DELETE, p, pending, NULL),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_ASSIGNED_POD, SX_ACT_UPDATE_POD_SCALE_DOWN, p,
		       bound, bound_less),
		  SX_QUEUE);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, bound),
		  NOT_REGISTERED);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, small), SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, big), SX_QUEUE);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_UPDATE_NODE_ALLOCATABLE, p, small,
		       big),
		  SX_QUEUE);
	CHECK_INT(
		hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_UPDATE_NODE_ALLOCATABLE, p, big, big),
		SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, big, big),
		  NOT_REGISTERED);
	sx_pod_unref(p);
	sx_pod_unref(bound);
	sx_pod_unref(bound_less);
	sx_pod_unref(pending);
	sx_node_unref(small);
	sx_node_unref(big);
}

/* A resource.k8s.io/v1 object of kind k from JSON, as the queue hands it
 * to hints (struct sx_object); free with dra_free. */
static struct sx_object *dra_obj(enum sx_kind k, const char *json)
{
	struct sx_object *o = calloc(1, sizeof(*o));
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);

	o->kind = k;
	o->obj = sx_decode_dra(j, k, &err);
	cJSON_Delete(j);
	if (!o->obj)
		fprintf(stderr, "decode %s: %s\n", json, err.msg);
	return o;
}

static void dra_free(struct sx_object *o)
{
	if (o)
		sx_dra_unref(o->obj);
	free(o);
}

#define REQ(r, q)                                                                                  \
	"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"" r "\":\"" q "\"}}}]"
#define CLASS(name, ern) "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{" ern "}}"
#define ERN(r)		 "\"extendedResourceName\":\"" r "\""

/* upstream fit_test.go Test_isSchedulableAfterDeviceClassChange (the two
 * "backoff-wrong-*-object" rows pass non-class objects, which C types
 * rule out); the registration only with DRAExtendedResource. */
static void test_node_resources_fit_device_class(void)
{
	static const struct {
		const char *name, *pod_req, *old_cls, *new_cls;
		int want;
	} rows[] = {
		{"skip-queue-on-class-nil-extended-resource-name-pointer", REQ("memory", "2"),
		 CLASS("c", ""), CLASS("c", ""), SX_QUEUE_SKIP},
		{"skip-queue-on-class-same-extended-resource-name-pointer", REQ("memory", "2"),
		 CLASS("c", ERN("example.com/gpu")), CLASS("c", ERN("example.com/gpu")),
		 SX_QUEUE_SKIP},
		{"skip-queue-on-class-same-extended-resource-name", REQ("memory", "2"),
		 CLASS("c", ERN("example.com/gpu")), CLASS("c", ERN("example.com/gpu")),
		 SX_QUEUE_SKIP},
		{"queue-on-class-add-with-implicit-extended-resource-name",
		 REQ("deviceclass.resource.kubernetes.io/gpuclass", "1"), NULL,
		 CLASS("gpuclass", ERN("example.com/gpu")), SX_QUEUE},
		{"skip-on-class-add-with-implicit-extended-resource-name-not-matching",
		 REQ("deviceclass.resource.kubernetes.io/gpuclass", "1"), NULL,
		 CLASS("myclass", ERN("example.com/gpu")), SX_QUEUE_SKIP},
		{"skip-on-class-add-with-explicit-extended-resource-name-not-matching",
		 REQ("example.com/othergpu", "1"), NULL, CLASS("myclass", ERN("example.com/gpu")),
		 SX_QUEUE_SKIP},
		{"skip-on-class-update-with-implicit-extended-resource-name",
		 REQ("deviceclass.resource.kubernetes.io/gpuclass", "1"), CLASS("gpuclass", ""),
		 CLASS("gpuclass", ERN("example.com/gpu")), SX_QUEUE_SKIP},
		{"queue-on-class-add-with-extended-resource-name", REQ("example.com/gpu", "1"),
		 NULL, CLASS("c", ERN("example.com/gpu")), SX_QUEUE},
		{"queue-on-class-update-with-extended-resource-name", REQ("example.com/gpu", "1"),
		 CLASS("c", ERN("example.com/gpu1")), CLASS("c", ERN("example.com/gpu")), SX_QUEUE},
	};
	struct sx_features f135;

	setup();
	for (unsigned i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		struct sx_pod *p = pod_s("p", rows[i].pod_req);
		struct sx_object *o =
			rows[i].old_cls ? dra_obj(SX_KIND_DEVICE_CLASS, rows[i].old_cls) : NULL;
		struct sx_object *n = dra_obj(SX_KIND_DEVICE_CLASS, rows[i].new_cls);
		int got = hint("NodeResourcesFit", SX_RES_DEVICE_CLASS,
			       o ? SX_ACT_UPDATE : SX_ACT_ADD, p, o, n);

		if (got != rows[i].want)
			sx_test_fail(__FILE__, __LINE__, "%s: hint %d, want %d", rows[i].name, got,
				     rows[i].want);
		sx_pod_unref(p);
		dra_free(o);
		dra_free(n);
	}
	/* DRAExtendedResource off (1.35): the class never helps this plugin. */
	sx_features_init(&f135, 35);
	{
		struct sx_profile prof = {.features = f135};
		struct sx_handle *h = sx_handle_new(&prof, NULL);
		struct sx_pod *p = pod_s("p", REQ("example.com/gpu", "1"));
		struct sx_object *n =
			dra_obj(SX_KIND_DEVICE_CLASS, CLASS("c", ERN("example.com/gpu")));

		hint_handle = h;
		CHECK_INT(hint("NodeResourcesFit", SX_RES_DEVICE_CLASS, SX_ACT_ADD, p, NULL, n),
			  SX_QUEUE_SKIP);
		hint_handle = NULL;
		sx_handle_free(h);
		sx_pod_unref(p);
		dra_free(n);
	}
}

static struct sx_dra_claims *tracker(struct sx_object *const *objs, unsigned n);

static struct sx_node *node_alloc(const char *alloc)
{
	char buf[1024];
	struct sx_error err = {0};
	struct sx_node *node;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{%s}}}", alloc);
	j = cJSON_Parse(buf);
	node = sx_decode_node(j, &err);
	cJSON_Delete(j);
	return node;
}

/* isSchedulableAfterNodeChange with DRAExtendedResource: a resource the
 * node does not advertise that a DeviceClass serves does not count
 * against the node (isFit) and counts as grown
 * (haveAnyRequestedResourcesIncreased, as upstream's
 * "requested-resources-dra-zero-capacity" row of
 * TestHaveAnyRequestedResourcesIncreased); without a tracker, as
 * upstream without a DRA manager, every such resource is DRA's. */
static void test_node_resources_fit_dra_node(void)
{
	struct sx_pod *p =
		pod_s("p", "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
			   "\"cpu\":\"1\",\"example.com/gpu\":\"1\"}}}]");
	struct sx_node *plain = node_alloc("\"cpu\":\"4\",\"pods\":\"110\""),
		       *zero = node_alloc(
			       "\"cpu\":\"4\",\"pods\":\"110\",\"example.com/gpu\":\"0\""),
		       *gpus = node_alloc(
			       "\"cpu\":\"4\",\"pods\":\"110\",\"example.com/gpu\":\"4\"");
	struct sx_object *cls = dra_obj(SX_KIND_DEVICE_CLASS, CLASS("gpu", ERN("example.com/gpu")));
	struct sx_object *other = dra_obj(SX_KIND_DEVICE_CLASS, CLASS("x", ERN("example.com/x")));
	struct sx_dra_claims *none = tracker(NULL, 0), *with = tracker(NULL, 0);
	const uint32_t upd = SX_ACT_UPDATE_NODE_ALLOCATABLE;
	struct sx_handle *h;
	struct sx_features f135;

	setup();
	sx_dra_class_event(none, NULL, other->obj);
	sx_dra_class_event(with, NULL, other->obj);
	sx_dra_class_event(with, NULL, cls->obj);
	/* no DRA manager: delegated */
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, plain), SX_QUEUE);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, upd, p, zero, zero), SX_QUEUE);
	/* advertised by the node (device plugin): not delegated, not grown */
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, upd, p, gpus, gpus), SX_QUEUE_SKIP);
	/* no class serves it: the node lacks it */
	h = sx_handle_new(NULL, none);
	hint_handle = h;
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, plain), SX_QUEUE_SKIP);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, upd, p, zero, zero), SX_QUEUE_SKIP);
	sx_handle_free(h);
	/* a class serves it */
	h = sx_handle_new(NULL, with);
	hint_handle = h;
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, plain), SX_QUEUE);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, upd, p, zero, zero), SX_QUEUE);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, upd, p, gpus, gpus), SX_QUEUE_SKIP);
	/* the class goes away */
	sx_dra_class_event(with, cls->obj, NULL);
	CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, plain), SX_QUEUE_SKIP);
	sx_handle_free(h);
	/* DRAExtendedResource off (1.35): never delegated */
	sx_features_init(&f135, 35);
	{
		struct sx_profile prof = {.features = f135};

		h = sx_handle_new(&prof, NULL);
		hint_handle = h;
		CHECK_INT(hint("NodeResourcesFit", SX_RES_NODE, SX_ACT_ADD, p, NULL, plain),
			  SX_QUEUE_SKIP);
		sx_handle_free(h);
	}
	hint_handle = NULL;
	sx_dra_claims_free(none);
	sx_dra_claims_free(with);
	dra_free(cls);
	dra_free(other);
	sx_node_unref(plain);
	sx_node_unref(zero);
	sx_node_unref(gpus);
	sx_pod_unref(p);
}

/* DynamicResources' registrations (EventsToRegister with queueing hints). */
static void test_dynamic_resources_events(void)
{
	struct sx_pod *p = pod_s("p", "");
	struct sx_node *n = node_json("n", NULL, NULL, "4");

	setup();
	CHECK_INT(hint("DynamicResources", SX_RES_NODE, SX_ACT_ADD, p, NULL, n), SX_QUEUE);
	CHECK_INT(hint("DynamicResources", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, n, n),
		  SX_QUEUE);
	CHECK_INT(hint("DynamicResources", SX_RES_NODE, SX_ACT_UPDATE_NODE_ALLOCATABLE, p, n, n),
		  SX_QUEUE);
	CHECK_INT(hint("DynamicResources", SX_RES_NODE, SX_ACT_UPDATE_NODE_TAINT, p, n, n),
		  NOT_REGISTERED);
	CHECK_INT(hint("DynamicResources", SX_RES_DEVICE_CLASS, SX_ACT_ADD, p, NULL, NULL),
		  SX_QUEUE);
	CHECK_INT(hint("DynamicResources", SX_RES_DEVICE_CLASS, SX_ACT_DELETE, p, NULL, NULL),
		  NOT_REGISTERED);
	CHECK_INT(hint("DynamicResources", SX_RES_RESOURCE_SLICE, SX_ACT_UPDATE, p, NULL, NULL),
		  SX_QUEUE);
	CHECK_INT(hint("DynamicResources", SX_RES_RESOURCE_SLICE, SX_ACT_DELETE, p, NULL, NULL),
		  NOT_REGISTERED);
	CHECK_INT(hint("DynamicResources", SX_RES_RESOURCE_CLAIM, SX_ACT_DELETE, p, NULL, NULL),
		  NOT_REGISTERED);
	sx_pod_unref(p);
	sx_node_unref(n);
}

/* upstream dynamicresources_test.go: the fixtures (pod my-pod, here with
 * uid u-my-pod, claim my-pod-my-resource) */
#define CLAIM_NAME "my-pod-my-resource"
#define CLAIM_JSON(name, uid, owner_uid, status)                                                   \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"" uid "\","      \
	"\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"my-pod\","        \
	"\"uid\":\"" owner_uid "\",\"controller\":true}]},"                                        \
	"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"req-1\",\"exactly\":{"                   \
	"\"deviceClassName\":\"my-resource-class\"}}]}}" status "}"
#define ALLOCATED ",\"status\":{\"allocation\":{\"devices\":{\"results\":[]}}}"
#define WITH_CLAIM_NAME                                                                            \
	"\"resourceClaims\":[{\"name\":\"my-resource\",\"resourceClaimName\":\"" CLAIM_NAME "\"}]"
#define WITH_TEMPLATE                                                                              \
	"\"resourceClaims\":[{\"name\":\"my-resource\",\"resourceClaimTemplateName\":"             \
	"\"" CLAIM_NAME "\"}]"
#define WITH_TWO_TEMPLATES                                                                         \
	"\"resourceClaims\":[{\"name\":\"my-resource\",\"resourceClaimTemplateName\":"             \
	"\"" CLAIM_NAME                                                                            \
	"\"},{\"name\":\"my-resource-2\",\"resourceClaimTemplateName\":\"" CLAIM_NAME "-2\"}]"
#define IN_STATUS                                                                                  \
	"},\"status\":{\"resourceClaimStatuses\":[{\"name\":\"my-resource\","                      \
	"\"resourceClaimName\":"                                                                   \
	"\"" CLAIM_NAME "\"}]"

static struct sx_pod *dra_pod(const char *spec_and_status)
{
	return pod_json("my-pod", "default", NULL, spec_and_status);
}

/* The claims tracker holds objs (claims known by name, as the live cache
 * feeds it). */
static struct sx_dra_claims *tracker(struct sx_object *const *objs, unsigned n)
{
	struct sx_dra_claims *m = sx_dra_claims_new();

	sx_dra_track_claims(m, true);
	for (unsigned i = 0; i < n; i++)
		sx_dra_claim_event(m, NULL, objs[i]->obj);
	return m;
}

static int dra_hint(struct sx_dra_claims *m, uint8_t res, uint32_t act, const struct sx_pod *p,
		    const void *o, const void *n)
{
	struct sx_handle *h = sx_handle_new(NULL, m);
	int got;

	hint_handle = h;
	got = hint("DynamicResources", res, act, p, o, n);
	hint_handle = NULL;
	sx_handle_free(h);
	return got;
}

/* upstream Test_isSchedulableAfterClaimChange ("skip-deletes" and the two
 * "backoff-wrong-*-object" rows aside: deletes are not registered, C types
 * rule the others out). */
static void test_dynamic_resources_claim_hint(void)
{
	struct sx_object *pending =
		dra_obj(SX_KIND_RESOURCE_CLAIM, CLAIM_JSON(CLAIM_NAME, "c1", "u-my-pod", ""));
	struct sx_object *allocated = dra_obj(SX_KIND_RESOURCE_CLAIM,
					      CLAIM_JSON(CLAIM_NAME, "c1", "u-my-pod", ALLOCATED));
	struct sx_object *wrong_owner = dra_obj(
		SX_KIND_RESOURCE_CLAIM, CLAIM_JSON(CLAIM_NAME, "c1", "u-my-pod123", ALLOCATED));
	struct sx_object *unrelated =
		dra_obj(SX_KIND_RESOURCE_CLAIM,
			CLAIM_JSON(CLAIM_NAME "-foo", "c1123", "u-my-pod", ALLOCATED));
	struct sx_object *finalizer = dra_obj(
		SX_KIND_RESOURCE_CLAIM,
		"{\"metadata\":{\"name\":\"" CLAIM_NAME
		"\",\"namespace\":\"default\",\"uid\":\"c1\","
		"\"finalizers\":[\"foo\"],\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
		"\"Pod\",\"name\":\"my-pod\",\"uid\":\"u-my-pod\",\"controller\":true}]},"
		"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"req-1\",\"exactly\":{"
		"\"deviceClassName\":\"my-resource-class\"}}]}}}");
	struct sx_object *other_alloc =
		dra_obj(SX_KIND_RESOURCE_CLAIM, CLAIM_JSON("other", "c9", "u-my-pod", ALLOCATED));
	struct sx_object *other_dealloc =
		dra_obj(SX_KIND_RESOURCE_CLAIM, CLAIM_JSON("other", "c9", "u-my-pod", ""));
	struct sx_pod *tmpl = dra_pod(WITH_TEMPLATE), *named = dra_pod(WITH_CLAIM_NAME);
	struct sx_dra_claims *m;

	setup();
	/* skip-wrong-claim: the template's claim is not created yet */
	m = tracker(NULL, 0);
	CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_ADD, tmpl, NULL, wrong_owner),
		  SX_QUEUE_SKIP);
	sx_dra_claims_free(m);
	/* skip-unrelated-claim */
	m = tracker(&allocated, 1);
	CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_ADD, tmpl, NULL, unrelated),
		  SX_QUEUE_SKIP);
	sx_dra_claims_free(m);
	/* queue-on-add (the tracker heard of the claim before the queue) */
	m = tracker(&pending, 1);
	CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_ADD, named, NULL, pending), SX_QUEUE);
	/* skip-adding-finalizer */
	CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_UPDATE, named, pending, finalizer),
		  SX_QUEUE_SKIP);
	/* queue-on-status-change */
	CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_UPDATE, named, pending, allocated),
		  SX_QUEUE);
	sx_dra_claims_free(m);
	/* claim-deallocate: another claim's devices were freed */
	{
		struct sx_object *both[] = {pending, other_dealloc};

		m = tracker(both, 2);
		CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_UPDATE, named, other_alloc,
				   other_dealloc),
			  SX_QUEUE);
		sx_dra_claims_free(m);
	}
	/* not upstream's table: the pod's claim owned by another pod */
	m = tracker(&wrong_owner, 1);
	{
		struct sx_pod *in_status = dra_pod(WITH_TEMPLATE IN_STATUS);

		CHECK_INT(dra_hint(m, SX_RES_RESOURCE_CLAIM, SX_ACT_UPDATE, in_status, allocated,
				   wrong_owner),
			  SX_QUEUE_SKIP);
		sx_pod_unref(in_status);
	}
	sx_dra_claims_free(m);
	sx_pod_unref(tmpl);
	sx_pod_unref(named);
	dra_free(pending);
	dra_free(allocated);
	dra_free(wrong_owner);
	dra_free(unrelated);
	dra_free(finalizer);
	dra_free(other_alloc);
	dra_free(other_dealloc);
}

/* upstream Test_isSchedulableAfterPodChange (the "backoff-wrong-new-object"
 * row aside). */
static void test_dynamic_resources_pod_hint(void)
{
	struct sx_object *pending =
		dra_obj(SX_KIND_RESOURCE_CLAIM, CLAIM_JSON(CLAIM_NAME, "c1", "u-my-pod", ""));
	struct sx_pod *tmpl = dra_pod(WITH_TEMPLATE), *in_status = dra_pod(WITH_TEMPLATE IN_STATUS);
	struct sx_pod *other = pod_json("my-pod2", "default", NULL, WITH_TEMPLATE);
	struct sx_pod *two = dra_pod(WITH_TWO_TEMPLATES);
	struct sx_pod *two_one = dra_pod(WITH_TWO_TEMPLATES IN_STATUS);
	struct sx_dra_claims *m = tracker(&pending, 1), *none = tracker(NULL, 0);
	const uint32_t act = SX_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM;

	setup();
	/* complete */
	CHECK_INT(dra_hint(m, SX_RES_UNSCHEDULED_POD, act, tmpl, tmpl, in_status), SX_QUEUE);
	/* wrong-pod */
	CHECK_INT(dra_hint(m, SX_RES_UNSCHEDULED_POD, act, other, tmpl, in_status), SX_QUEUE_SKIP);
	/* missing-claim */
	CHECK_INT(dra_hint(none, SX_RES_UNSCHEDULED_POD, act, tmpl, tmpl, in_status),
		  SX_QUEUE_SKIP);
	/* incomplete: one of two claims created */
	CHECK_INT(dra_hint(m, SX_RES_UNSCHEDULED_POD, act, two, two, two_one), SX_QUEUE_SKIP);
	sx_dra_claims_free(m);
	sx_dra_claims_free(none);
	sx_pod_unref(tmpl);
	sx_pod_unref(in_status);
	sx_pod_unref(other);
	sx_pod_unref(two);
	sx_pod_unref(two_one);
	dra_free(pending);
}

static void test_pod_topology_spread(void)
{
	struct sx_pod *p = pod_json("p", "ns", "\"labels\":{\"app\":\"web\"}",
				    "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"
				    "\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
				    "\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}}}]");
	struct sx_pod *web =
		pod_json("w", "ns", "\"labels\":{\"app\":\"web\"}", "\"nodeName\":\"n\"");
	struct sx_pod *db =
		pod_json("d", "ns", "\"labels\":{\"app\":\"db\"}", "\"nodeName\":\"n\"");
	struct sx_pod *far =
		pod_json("f", "other", "\"labels\":{\"app\":\"web\"}", "\"nodeName\":\"n\"");
	struct sx_node *zoned = node_json("n", "\"zone\":\"a\"", NULL, NULL);
	struct sx_node *bare = node_json("n", NULL, NULL, NULL);

	setup();
	CHECK_INT(hint("PodTopologySpread", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, web),
		  SX_QUEUE);
	CHECK_INT(hint("PodTopologySpread", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, web, NULL),
		  SX_QUEUE);
	CHECK_INT(hint("PodTopologySpread", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, db),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("PodTopologySpread", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, far),
		  SX_QUEUE_SKIP);
	CHECK_INT(
		hint("PodTopologySpread", SX_RES_ASSIGNED_POD, SX_ACT_UPDATE_POD_LABEL, p, web, db),
		SX_QUEUE);
	CHECK_INT(hint("PodTopologySpread", SX_RES_NODE, SX_ACT_ADD, p, NULL, zoned), SX_QUEUE);
	CHECK_INT(hint("PodTopologySpread", SX_RES_NODE, SX_ACT_ADD, p, NULL, bare), SX_QUEUE_SKIP);
	CHECK_INT(hint("PodTopologySpread", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, bare, zoned),
		  SX_QUEUE);
	CHECK_INT(hint("PodTopologySpread", SX_RES_NODE, SX_ACT_UPDATE_NODE_ALLOCATABLE, p, bare,
		       zoned),
		  NOT_REGISTERED);
	sx_pod_unref(p);
	sx_pod_unref(web);
	sx_pod_unref(db);
	sx_pod_unref(far);
	sx_node_unref(zoned);
	sx_node_unref(bare);
}

static void test_inter_pod_affinity(void)
{
	struct sx_pod *p = pod_s("p", "\"affinity\":{\"podAffinity\":{"
				      "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
				      "\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},"
				      "\"topologyKey\":\"zone\"}]}}");
	struct sx_pod *db =
		pod_json("d", "ns", "\"labels\":{\"app\":\"db\"}", "\"nodeName\":\"n\"");
	struct sx_pod *web =
		pod_json("w", "ns", "\"labels\":{\"app\":\"web\"}", "\"nodeName\":\"n\"");
	struct sx_pod *pending = pod_json("d2", "ns", "\"labels\":{\"app\":\"db\"}", NULL);
	struct sx_node *zoned = node_json("n", "\"zone\":\"a\"", NULL, NULL);
	struct sx_node *bare = node_json("n", NULL, NULL, NULL);

	setup();
	CHECK_INT(hint("InterPodAffinity", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, db), SX_QUEUE);
	CHECK_INT(hint("InterPodAffinity", SX_RES_ASSIGNED_POD, SX_ACT_ADD, p, NULL, web),
		  SX_QUEUE_SKIP);
	CHECK_INT(hint("InterPodAffinity", SX_RES_UNSCHEDULED_POD, SX_ACT_ADD, p, NULL, pending),
		  SX_QUEUE_SKIP);
	CHECK_INT(
		hint("InterPodAffinity", SX_RES_ASSIGNED_POD, SX_ACT_UPDATE_POD_LABEL, p, web, db),
		SX_QUEUE);
	CHECK_INT(hint("InterPodAffinity", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, db, NULL),
		  SX_QUEUE_SKIP); /* no anti-affinity involved */
	CHECK_INT(hint("InterPodAffinity", SX_RES_NODE, SX_ACT_ADD, p, NULL, zoned), SX_QUEUE);
	CHECK_INT(hint("InterPodAffinity", SX_RES_NODE, SX_ACT_ADD, p, NULL, bare), SX_QUEUE_SKIP);
	CHECK_INT(hint("InterPodAffinity", SX_RES_NODE, SX_ACT_UPDATE_NODE_LABEL, p, bare, zoned),
		  SX_QUEUE);
	sx_pod_unref(p);
	sx_pod_unref(db);
	sx_pod_unref(web);
	sx_pod_unref(pending);
	sx_node_unref(zoned);
	sx_node_unref(bare);
}

/* Async preemption: PreEnqueue gates the preemptor while its victims go,
 * and a deletion is only worth it once it is released. */
static void test_default_preemption(void)
{
	int idx = sx_plugin_index("DefaultPreemption");
	const struct sx_plugin *dp = sx_plugins[idx];
	struct sx_pod *p = pod_s("p", NULL), *victim = pod_s("v", "\"nodeName\":\"n\"");
	struct sx_handle *h = sx_handle_new(NULL, NULL);
	struct sx_error err = {0};
	void *self = dp->init(NULL, h, &err);
	struct sx_status *st;
	char buf[256];

	setup();
	hint_handle = h;
	CHECK(dp->pre_enqueue != NULL);
	CHECK(dp->pre_enqueue(self, p) == NULL);
	CHECK_INT(sx_preemption_begin(h->preemption, p->meta.uid), 0);
	st = dp->pre_enqueue(self, p);
	CHECK(st && st->code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE);
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)),
		  "waiting for the preemption for this pod to be finished");
	sx_status_free(st);
	CHECK_INT(hint("DefaultPreemption", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, victim, NULL),
		  SX_QUEUE_SKIP);
	sx_preemption_end(h->preemption, p->meta.uid);
	CHECK(dp->pre_enqueue(self, p) == NULL);
	CHECK_INT(hint("DefaultPreemption", SX_RES_ASSIGNED_POD, SX_ACT_DELETE, p, victim, NULL),
		  SX_QUEUE);
	CHECK_INT(hint("DefaultPreemption", SX_RES_NODE, SX_ACT_ADD, p, NULL, NULL),
		  NOT_REGISTERED);
	hint_handle = NULL;
	dp->destroy(self);
	sx_handle_free(h);
	sx_pod_unref(p);
	sx_pod_unref(victim);
}

/* Plugins that never reject before binding register nothing. */
static void test_no_events(void)
{
	static const char *const none[] = {"PrioritySort", "NodeResourcesBalancedAllocation",
					   "ImageLocality", "DefaultBinder"};

	for (unsigned i = 0; i < SX_ARRAY_SIZE(none); i++) {
		int idx = sx_plugin_index(none[i]);

		CHECK(idx >= 0);
		CHECK(idx < 0 || sx_plugins[idx]->filter == NULL);
	}
}

SX_TESTS(SX_TEST(test_matching), SX_TEST(test_update_actions), SX_TEST(test_scheduling_gates),
	 SX_TEST(test_node_unschedulable), SX_TEST(test_node_name), SX_TEST(test_taint_toleration),
	 SX_TEST(test_node_affinity), SX_TEST(test_node_ports), SX_TEST(test_node_resources_fit),
	 SX_TEST(test_node_resources_fit_device_class), SX_TEST(test_node_resources_fit_dra_node),
	 SX_TEST(test_dynamic_resources_events), SX_TEST(test_dynamic_resources_claim_hint),
	 SX_TEST(test_dynamic_resources_pod_hint), SX_TEST(test_pod_topology_spread),
	 SX_TEST(test_inter_pod_affinity), SX_TEST(test_default_preemption),
	 SX_TEST(test_no_events))
