/* NodeAffinity hooks called directly: PreFilterResult node sets, Skip,
 * addedAffinity parsing, PreScore errors. */
#include "plugin_util.h"

extern const struct sx_plugin sx_plugin_node_affinity;
#define P (&sx_plugin_node_affinity)

#define POD_REQ(terms)                                                                             \
	"{\"metadata\":{\"name\":\"x\",\"namespace\":\"d\"},\"spec\":{\"containers\":[{"           \
	"\"name\":\"c\",\"image\":\"i\"}],\"affinity\":{\"nodeAffinity\":{"                        \
	"\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":" terms "}}}}}"
#define NAME_IN(n) "{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[" n "]}"

/* Runs PreFilter and returns its status text; *set receives the result. */
static const char *pre_filter(void *self, const char *pod_json, struct sx_node_set **set, char *buf)
{
	struct sx_cycle_state cs = {0};
	struct sx_pod *pod = tu_pod(pod_json);

	*set = NULL;
	tu_status(P->pre_filter(self, &cs, pod, set), buf, 256);
	sx_pod_unref(pod);
	return buf;
}

static void free_set(struct sx_node_set *set)
{
	if (set)
		free(set->names);
	free(set);
}

static void test_pre_filter_result(void)
{
	struct sx_node_set *set;
	char buf[256];

	CHECK_STR(pre_filter(NULL, POD_REQ("[{\"matchFields\":[" NAME_IN("\"node1\"") "]}]"), &set,
			     buf),
		  "Success");
	CHECK(set && set->n == 1 && set->names[0] == sx_intern("node1"));
	free_set(set);

	/* union over terms */
	CHECK_STR(pre_filter(NULL,
			     POD_REQ("[{\"matchFields\":[" NAME_IN(
				     "\"node1\"") "]},"
						  "{\"matchFields\":[" NAME_IN("\"node2\"") "]}]"),
			     &set, buf),
		  "Success");
	CHECK(set && set->n == 2);
	free_set(set);

	/* intersection within a term; several values */
	CHECK_STR(pre_filter(NULL,
			     POD_REQ("[{\"matchFields\":[" NAME_IN("\"a\",\"b\",\"c\"") "," NAME_IN(
				     "\"c\",\"b\"") "]}]"),
			     &set, buf),
		  "Success");
	CHECK(set && set->n == 2);
	free_set(set);

	/* a term without metadata.name leaves every node possible */
	CHECK_STR(
		pre_filter(
			NULL,
			POD_REQ("[{\"matchFields\":[" NAME_IN(
				"\"node1\"") "]},"
					     "{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":"
					     "\"Exists\"}]}]"),
			&set, buf),
		"Success");
	CHECK(set == NULL);

	CHECK_STR(pre_filter(NULL,
			     POD_REQ("[{\"matchFields\":[" NAME_IN("\"node1\"") "," NAME_IN(
				     "\"node2\"") "]}]"),
			     &set, buf),
		  "UnschedulableAndUnresolvable: pod affinity terms conflict");
	CHECK(set == NULL);

	CHECK_STR(pre_filter(NULL, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[]}}",
			     &set, buf),
		  "Skip");
}

/* Upstream calls Filter directly on a node the PreFilterResult excludes. */
static void test_filter_outside_result(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_cycle_state cs = {0};
	char buf[256];

	tu_add(c, "Node", "{\"metadata\":{\"name\":\"node2\",\"labels\":{\"foo\":\"bar\"}}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod(POD_REQ("[{\"matchFields\":[" NAME_IN(
		"\"node1\"") "],"
			     "\"matchExpressions\":[{\"key\":\"foo\",\"operator\":"
			     "\"In\",\"values\":[\"bar\"]}]}]"));
	cs.snap = snap;
	CHECK_STR(
		tu_status(P->filter(NULL, &cs, pod, tu_ni(snap, "node2")), buf, sizeof(buf)),
		"UnschedulableAndUnresolvable: node(s) didn't match Pod's node affinity/selector");
	sx_pod_unref(pod);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

static void *init(const char *json, struct sx_error *err)
{
	cJSON *j = cJSON_Parse(json);
	void *self = P->init(j, NULL, err);

	cJSON_Delete(j);
	return self;
}

static void test_added_affinity_args(void)
{
	struct sx_error err = {0};
	struct sx_node_set *set;
	char buf[512];
	void *self;

	self = P->init(NULL, NULL, &err);
	CHECK(self != NULL);
	P->destroy(self);

	self = init("{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
		    "\"operator\":\"In\",\"values\":[\"a\"]}]}]}}}",
		    &err);
	CHECK(self != NULL);
	/* addedAffinity required: no Skip even for a plain pod */
	CHECK_STR(pre_filter(self, "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[]}}",
			     &set, buf),
		  "Success");
	P->destroy(self);

	self = init("{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
		    "\"operator\":\"In\",\"values\":[]}]}]}}}",
		    &err);
	CHECK(self == NULL);
	CHECK_STR(err.path, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			    "nodeSelectorTerms[0].matchExpressions[0].values");

	self = init("{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
		    "[{\"weight\":1,\"preference\":{\"matchExpressions\":[{\"key\":\"n\","
		    "\"operator\":\"Gt\",\"values\":[\"x\"]}]}}]}}",
		    &err);
	CHECK(self == NULL);
	CHECK_STR(err.path, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
			    "preference.matchExpressions[0].values[0]");

	self = init("{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
		    "\"operator\":\"Bogus\"}]}]}}}",
		    &err);
	CHECK(self == NULL);
	CHECK(strncmp(err.path, "addedAffinity.", 14) == 0);
}

static void test_pre_score(void)
{
	struct sx_cycle_state cs = {0};
	char buf[512];
	struct sx_pod *plain =
		tu_pod("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[]}}");
	struct sx_pod *bad =
		tu_pod("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[],\"affinity\":{"
		       "\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
		       "\"weight\":3,\"preference\":{\"matchExpressions\":[{\"key\":\"k\","
		       "\"operator\":\"In\"}]}}]}}}}");

	CHECK_STR(tu_status(P->pre_score(NULL, &cs, plain, NULL, 0), buf, sizeof(buf)), "Skip");
	CHECK_STR(tu_status(P->pre_score(NULL, &cs, bad, NULL, 0), buf, sizeof(buf)),
		  "Error: [0].preference.matchExpressions[0].values: Invalid value: for 'in', "
		  "'notin' operators, values set can't be empty");
	sx_pod_unref(plain);
	sx_pod_unref(bad);
}

SX_TESTS(SX_TEST(test_pre_filter_result), SX_TEST(test_filter_outside_result),
	 SX_TEST(test_added_affinity_args), SX_TEST(test_pre_score))
