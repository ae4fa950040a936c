/* NodeDeclaredFeatures beyond its fixture tables: Filter without PreFilter
 * state (upstream TestFilter "Error getting pre-filter state"), the
 * queueing hints (TestEnqueueExtensionsNodeUpdate,
 * TestIsSchedulableAfterTargetPodUpdate), the decoding of
 * status.declaredFeatures and of what a pod needs, and the plugin's place
 * in the default profile per release (last, after DefaultBinder, from
 * 1.36). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "plugin_util.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_node_declared_features;
#define P sx_plugin_node_declared_features

static struct sx_node *node(const char *json)
{
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);
	struct sx_node *n;

	sx_intern_init();
	n = j ? sx_decode_node(j, &err) : NULL;
	if (!n)
		sx_test_fail(__FILE__, __LINE__, "decode node: %s: %s", err.path, err.msg);
	cJSON_Delete(j);
	return n;
}

#define NODE_F(feats)                                                                              \
	"{\"metadata\":{\"name\":\"node-1\"},\"status\":{\"declaredFeatures\":" feats "}}"
#define POD_RESTART_ALL                                                                            \
	"{\"metadata\":{\"name\":\"test-pod\",\"namespace\":\"default\",\"uid\":\"123\"},"         \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"restartPolicy\":\"Never\","                   \
	"\"restartPolicyRules\":[{\"action\":\"RestartAllContainers\",\"exitCodes\":"              \
	"{\"operator\":\"In\",\"values\":[1]}}]}]}}"
#define POD_PLAIN(uid, label)                                                                      \
	"{\"metadata\":{\"name\":\"test-pod\",\"namespace\":\"default\",\"uid\":\"" uid "\","      \
	"\"labels\":{\"foo\":\"" label "\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"

/* Filter with no PreFilter state is an Error naming the state key. */
static void test_filter_without_state(void)
{
	void *self = P.init(NULL, NULL, NULL);
	struct sx_cycle_state cs = {0};
	struct sx_node_info ni = {0};
	struct sx_pod *pod = tu_pod(POD_RESTART_ALL);
	char b[200];

	ni.node = node(NODE_F("[]"));
	CHECK_STR(tu_status(P.filter(self, &cs, pod, &ni), b, sizeof(b)),
		  "Error: error reading \"PreFilterNodeDeclaredFeatures\" from cycle-state: not "
		  "found");
	/* PreFilter fills the state; the clone is independent. */
	CHECK(P.pre_filter(self, &cs, pod, NULL) == NULL);
	CHECK(cs.slots[SX_SLOT_node_declared_features] != NULL);
	{
		void *c = P.state_clone(cs.slots[SX_SLOT_node_declared_features]);

		CHECK(c != NULL);
		P.state_free(c);
	}
	CHECK_STR(tu_status(P.filter(self, &cs, pod, &ni), b, sizeof(b)),
		  "UnschedulableAndUnresolvable: node(s) didn't match Pod's required features");
	P.state_free(cs.slots[SX_SLOT_node_declared_features]);
	sx_node_unref(ni.node);
	sx_pod_unref(pod);
	P.destroy(self);
}

static const struct sx_event_reg *reg(unsigned resource)
{
	for (const struct sx_event_reg *r = P.events; r->resource != SX_RES_NONE; r++)
		if (r->resource == resource)
			return r;
	return NULL;
}

/* TestEnqueueExtensionsNodeUpdate. */
static void test_hint_node(void)
{
	const struct sx_event_reg *r = reg(SX_RES_NODE);
	struct sx_node *none = node("{\"metadata\":{\"name\":\"node-1\"}}");
	struct sx_node *a1 = node(NODE_F("[\"FeatureA\"]"));
	struct sx_node *a2 = node(NODE_F("[\"FeatureA\"]"));
	struct sx_pod *pod = tu_pod(POD_PLAIN("123", "x"));

	CHECK(r != NULL);
	if (r) {
		CHECK(r->actions == (SX_ACT_ADD | SX_ACT_UPDATE_NODE_DECLARED_FEATURE));
		/* Node Add with feature */
		CHECK_INT(r->hint(NULL, pod, NULL, a1), SX_QUEUE);
		/* Node Update (Features Added) */
		CHECK_INT(r->hint(NULL, pod, none, a1), SX_QUEUE);
		/* Node Update (Features Unchanged) */
		CHECK_INT(r->hint(NULL, pod, a1, a2), SX_QUEUE_SKIP);
	}
	/* The event itself: only a change of status.declaredFeatures. */
	CHECK_INT(sx_node_update_actions(none, a1), SX_ACT_UPDATE_NODE_DECLARED_FEATURE);
	CHECK_INT(sx_node_update_actions(a1, a2), 0);
	CHECK_STR(sx_action_name(SX_ACT_UPDATE_NODE_DECLARED_FEATURE), "UpdateNodeDeclaredFeature");
	sx_node_unref(none);
	sx_node_unref(a1);
	sx_node_unref(a2);
	sx_pod_unref(pod);
}

/* TestIsSchedulableAfterTargetPodUpdate, with the registry's real
 * inference in place of the mock: requirements added, removed,
 * unchanged; and another pod's update. */
static void test_hint_pod(void)
{
	void *self = P.init(NULL, NULL, NULL);
	const struct sx_event_reg *r = reg(SX_RES_POD);
	struct sx_pod *target = tu_pod(POD_PLAIN("123", "x"));
	struct sx_pod *plain = tu_pod(POD_PLAIN("123", "bar"));
	struct sx_pod *needs = tu_pod(POD_RESTART_ALL);
	struct sx_pod *other = tu_pod(POD_PLAIN("456", "x"));

	CHECK(r != NULL);
	if (r) {
		CHECK_INT(r->hint(self, target, plain, needs), SX_QUEUE);	/* adds */
		CHECK_INT(r->hint(self, target, needs, plain), SX_QUEUE);	/* removes */
		CHECK_INT(r->hint(self, target, target, plain), SX_QUEUE_SKIP); /* no change */
		CHECK_INT(r->hint(self, target, other, other), SX_QUEUE_SKIP);	/* not the target */
	}
	sx_pod_unref(target);
	sx_pod_unref(plain);
	sx_pod_unref(needs);
	sx_pod_unref(other);
	P.destroy(self);
}

/* What the decoders keep: the node's list in order, the pod's needs. */
static void test_decode(void)
{
	struct sx_node *n = node(NODE_F("[\"B\",\"A\"]"));
	struct sx_pod *p;
	struct sx_error err = {0};
	cJSON *j;

	CHECK_INT(n->ndeclared_features, 2);
	if (n->ndeclared_features == 2) {
		CHECK_STR(sx_str_get(n->declared_features[0]), "B");
		CHECK_STR(sx_str_get(n->declared_features[1]), "A");
	}
	sx_node_unref(n);
	j = cJSON_Parse(NODE_F("\"A\""));
	CHECK(sx_decode_node(j, &err) == NULL);
	CHECK_STR(err.path, "status.declaredFeatures");
	cJSON_Delete(j);

	p = tu_pod(POD_RESTART_ALL);
	CHECK_INT(p->needs_features, SX_POD_NEEDS_RESTART_ALL_CONTAINERS);
	sx_pod_unref(p);
	p = tu_pod(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"hostNetwork\":true,"
		"\"hostUsers\":false,\"containers\":[{\"name\":\"c\"}],\"ephemeralContainers\":"
		"[{\"name\":\"e\",\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/v\","
		"\"bindMountOptions\":[\"nosuid\"]}]}],\"initContainers\":[{\"name\":\"i\","
		"\"restartPolicyRules\":[{\"action\":\"Other\"}]}]}}");
	CHECK_INT(p->needs_features,
		  SX_POD_NEEDS_USERNS_HOST_NETWORK | SX_POD_NEEDS_VOLUME_BIND_MOUNT_OPTIONS);
	sx_pod_unref(p);
	p = tu_pod(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"hostNetwork\":true,"
		"\"hostUsers\":true,\"containers\":[{\"name\":\"c\",\"volumeMounts\":[{\"name\":"
		"\"v\",\"mountPath\":\"/v\",\"bindMountOptions\":[]}]}]}}");
	CHECK_INT(p->needs_features, 0);
	sx_pod_unref(p);
	j = cJSON_Parse(
		"{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"hostUsers\":"
		"\"no\",\"containers\":[{\"name\":\"c\"}]}}");
	CHECK(sx_decode_pod(j, &err) == NULL);
	cJSON_Delete(j);
}

/* In the default profile from 1.36 on, last (as 1.36.3's effective
 * configuration lists it), at PreFilter and Filter; not in 1.35's. */
static void test_default_profile(void)
{
	for (int minor = 35; minor <= 37; minor++) {
		struct sx_features f;
		struct sx_error err = {0};
		struct sx_config *cfg;
		const struct sx_profile *prof;

		sx_features_init(&f, minor);
		cfg = sx_config_default_for(&f, &err);
		CHECK(cfg != NULL);
		if (!cfg)
			continue;
		prof = sx_config_profile(cfg, NULL);
		CHECK_INT(sx_profile_has(prof, SX_PT_FILTER, "NodeDeclaredFeatures"), minor >= 36);
		CHECK_INT(sx_profile_has(prof, SX_PT_PRE_FILTER, "NodeDeclaredFeatures"),
			  minor >= 36);
		if (minor >= 36 && prof->n[SX_PT_FILTER] > 0)
			CHECK_STR(
				prof->points[SX_PT_FILTER][prof->n[SX_PT_FILTER] - 1].plugin->name,
				"NodeDeclaredFeatures");
		sx_config_free(cfg);
	}
}

SX_TESTS(SX_TEST(test_filter_without_state), SX_TEST(test_hint_node), SX_TEST(test_hint_pod),
	 SX_TEST(test_decode), SX_TEST(test_default_profile))
