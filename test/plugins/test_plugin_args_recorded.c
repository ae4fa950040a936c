/* Plugin arguments give the recorded init result (recorded from the
 * hand-written cJSON readers the table reader replaced,
 * test/fixtures/plugin_args/init_replies.txt): for each args body, the
 * error's path and message, or "ok". SX_RECORD=1 rewrites the recording. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/buf.h"
#include "schedext/intern.h"
#include "schedext/plugin.h"

extern const struct sx_plugin sx_plugin_node_resources_fit;
extern const struct sx_plugin sx_plugin_node_resources_balanced_allocation;
extern const struct sx_plugin sx_plugin_node_affinity;
extern const struct sx_plugin sx_plugin_pod_topology_spread;

#define RECORDING "test/fixtures/plugin_args/init_replies.txt"
#define SS(x)	  "{\"scoringStrategy\":" x "}"
#define RTCR(shape)                                                                                \
	SS("{\"type\":\"RequestedToCapacityRatio\",\"requestedToCapacityRatio\":{\"shape\":" shape \
	   "}}")
#define RES(x) SS("{\"type\":\"LeastAllocated\",\"resources\":" x "}")
#define L300                                                                                       \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaaaaa"
#define DC(x) "{\"defaultingType\":\"List\",\"defaultConstraints\":[" x "]}"
#define C_OK  "{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}"
#define REQ(terms)                                                                                 \
	"{\"addedAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"                 \
	"\"nodeSelectorTerms\":" terms "}}}"
#define PREF(x) "{\"addedAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":" x "}}"

static const char *const fit_bodies[] = {
	NULL,
	"null",
	"{}",
	"[1]",
	"\"x\"",
	"5",
	"{\"ignoredResources\":\"x\"}",
	"{\"ignoredResources\":[1]}",
	"{\"ignoredResources\":[null]}",
	"{\"ignoredResources\":null}",
	"{\"ignoredResources\":[]}",
	"{\"ignoredResources\":[\"example.com/a\",\"b\"]}",
	"{\"ignoredResources\":[\"" L300 L300 "\"]}",
	"{\"ignoredResources\":[\"-bad\",\"a/b/c\",\"ok\"]}",
	"{\"ignoredResources\":[\"" L300 "\"]}",
	"{\"ignoredResourceGroups\":[\"example.com/aaa\"]}",
	"{\"ignoredResourceGroups\":[\"a\",\"b\"]}",
	"{\"ignoredResourceGroups\":[5]}",
	"{\"ignoredResourceGroups\":{}}",
	"{\"ignoredResourceGroups\":[\"-x\"]}",
	"{\"ignoredResources\":[\"-bad\"],\"ignoredResourceGroups\":[7]}",
	"{\"ignoredResources\":[\"-bad\"],\"ignoredResourceGroups\":[\"a/"
	"b\"],\"scoringStrategy\":{\"type\":\"Foo\"}}",
	SS("null"),
	SS("5"),
	SS("[]"),
	SS("{}"),
	SS("{\"type\":null}"),
	SS("{\"type\":5}"),
	SS("{\"type\":\"Foo\"}"),
	SS("{\"type\":\"" L300 "\"}"),
	SS("{\"type\":\"MostAllocated\"}"),
	SS("{\"type\":\"LeastAllocated\"}"),
	SS("{\"type\":\"RequestedToCapacityRatio\"}"),
	SS("{\"type\":\"LeastAllocated\",\"requestedToCapacityRatio\":{}}"),
	SS("{\"type\":\"LeastAllocated\",\"requestedToCapacityRatio\":null}"),
	SS("{\"type\":\"LeastAllocated\",\"requestedToCapacityRatio\":5}"),
	SS("{\"type\":\"LeastAllocated\",\"requestedToCapacityRatio\":{\"shape\":[{\"utilization\":"
	   "0,\"score\":1}]}}"),
	RTCR("[]"),
	RTCR("null"),
	RTCR("\"x\""),
	RTCR("[1]"),
	RTCR("[{\"utilization\":null}]"),
	RTCR("[{\"utilization\":1.5}]"),
	RTCR("[{\"score\":\"x\"}]"),
	RTCR("[{}]"),
	RTCR("[{\"utilization\":0,\"score\":0},{\"utilization\":100,\"score\":10}]"),
	RTCR("[{\"utilization\":50,\"score\":2},{\"utilization\":10,\"score\":3},{\"utilization\":"
	     "5,\"score\":1}]"),
	RTCR("[{\"utilization\":-1,\"score\":11},{\"utilization\":101,\"score\":-2}]"),
	RTCR("[{\"utilization\":1e10,\"score\":1}]"),
	RES("\"x\""),
	RES("[]"),
	RES("null"),
	RES("[5]"),
	RES("[{}]"),
	RES("[{\"name\":5}]"),
	RES("[{\"name\":null}]"),
	RES("[{\"name\":\"cpu\",\"weight\":\"x\"}]"),
	RES("[{\"name\":\"cpu\",\"weight\":null}]"),
	RES("[{\"name\":\"cpu\",\"weight\":0}]"),
	RES("[{\"name\":\"cpu\",\"weight\":101},{\"name\":\"memory\",\"weight\":-1}]"),
	RES("[{\"name\":\"cpu\",\"weight\":1.5}]"),
	RES("[{\"name\":\"cpu\",\"weight\":1e10}]"),
	RES("[{\"name\":\"" L300 "\"}]"),
	RES("[{\"name\":\"cpu\",\"weight\":3},{\"name\":\"example.com/gpu\"}]"),
	SS("{\"type\":\"Foo\",\"resources\":[{\"name\":\"cpu\",\"weight\":200}],"
	   "\"requestedToCapacityRatio\":{\"shape\":[]}}"),
	SS("{\"type\":\"Foo\",\"resources\":[5],\"requestedToCapacityRatio\":{\"shape\":[]}}"),
	SS("{\"type\":\"Foo\",\"resources\":[{\"name\":\"cpu\",\"weight\":200}],"
	   "\"requestedToCapacityRatio\":{\"shape\":5}}"),
	"{\"ignoredResources\":[\"-bad\"],\"scoringStrategy\":{\"type\":\"MostAllocated\","
	"\"resources\":[{\"name\":\"cpu\",\"weight\":0}]}}",
};

static const char *const ba_bodies[] = {
	NULL,
	"null",
	"{}",
	"[1]",
	"{\"resources\":\"x\"}",
	"{\"resources\":[]}",
	"{\"resources\":null}",
	"{\"resources\":[{\"name\":\"cpu\"},{\"name\":\"memory\",\"weight\":0}]}",
	"{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"cpu\",\"weight\":1}]}",
	"{\"resources\":[{\"name\":\"cpu\",\"weight\":2}]}",
	"{\"resources\":[{\"weight\":1}]}",
	"{\"resources\":[{\"name\":\"example.com/gpu\",\"weight\":1}]}",
	"{\"resources\":[7]}",
	"{\"resources\":[{\"name\":\"cpu\",\"weight\":\"1\"}]}",
};

static const char *const na_bodies[] = {
	NULL,
	"null",
	"{}",
	"[1]",
	"5",
	"{\"addedAffinity\":null}",
	"{\"addedAffinity\":5}",
	"{\"addedAffinity\":{}}",
	"{\"addedAffinity\":[]}",
	REQ("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]}]"),
	REQ("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Bogus\",\"values\":[\"a\"]}]}"
	    "]"),
	REQ("[{\"matchExpressions\":[{\"key\":\"-bad\",\"operator\":\"Exists\"}]}]"),
	REQ("[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"a\","
	    "\"b\"]}]}]"),
	REQ("[]"),
	REQ("5"),
	PREF("[{\"weight\":0,\"preference\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
	     "\"Exists\"}]}}]"),
	PREF("[{\"weight\":5,\"preference\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
	     "\"Gt\",\"values\":[\"x\"]}]}}]"),
	PREF("[{\"weight\":5,\"preference\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
	     "\"Exists\"}]}}]"),
	PREF("\"x\""),
};

static const char *const pts_bodies[] = {
	NULL,
	"null",
	"{}",
	"[1]",
	"{\"defaultingType\":\"List\"}",
	"{\"defaultingType\":5}",
	"{\"defaultingType\":\"Foo\"}",
	"{\"defaultingType\":null}",
	"{\"defaultingType\":\"System\",\"defaultConstraints\":[" C_OK "]}",
	"{\"defaultConstraints\":[" C_OK "]}",
	"{\"defaultConstraints\":\"x\"}",
	"{\"defaultingType\":\"Foo\",\"defaultConstraints\":\"x\"}",
	"{\"defaultConstraints\":[]}",
	DC(C_OK),
	DC(C_OK "," C_OK),
	DC("5"),
	DC("{}"),
	DC("null"),
	DC("{\"maxSkew\":0,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}"),
	DC("{\"maxSkew\":\"x\",\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}"),
	DC("{\"maxSkew\":1.5,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}"),
	DC("{\"maxSkew\":-1,\"topologyKey\":\"\",\"whenUnsatisfiable\":\"\"}"),
	DC("{\"maxSkew\":1,\"topologyKey\":5,\"whenUnsatisfiable\":5}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"bad key!\",\"whenUnsatisfiable\":\"Foo\"}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"a/b/c\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"example.com/"
	   "zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\","
	   "\"labelSelector\":{},\"minDomains\":3}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
	   "\"labelSelector\":null,"
	   "\"nodeAffinityPolicy\":\"Honor\",\"nodeTaintsPolicy\":\"Ignore\"}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
	   "\"nodeAffinityPolicy\":\"Foo\"}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
	   "\"nodeTaintsPolicy\":5}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
	   "\"nodeTaintsPolicy\":null}"),
	DC(C_OK
	   ",{\"maxSkew\":2,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"}"),
	DC("{\"maxSkew\":1,\"topologyKey\":\"\",\"whenUnsatisfiable\":\"\"},{\"maxSkew\":1,"
	   "\"topologyKey\":\"\",\"whenUnsatisfiable\":\"\"}"),
};

/* n copies of item joined by commas inside pre ... post. */
static char *repeat(const char *pre, const char *item, int n, const char *post)
{
	struct sx_buf b;
	char *s;

	sx_buf_init(&b);
	sx_buf_puts(&b, pre);
	for (int i = 0; i < n; i++)
		sx_buf_printf(&b, "%s%s", i ? "," : "", item);
	sx_buf_puts(&b, post);
	s = strdup(sx_buf_cstr(&b));
	sx_buf_free(&b);
	return s;
}

static void record(struct sx_buf *got, const char *name, const struct sx_plugin *p,
		   const char *body)
{
	struct sx_error err = {0};
	cJSON *args = body ? cJSON_Parse(body) : NULL;
	void *self;

	CHECK(!body || args != NULL);
	self = p->init(args, NULL, &err);
	cJSON_Delete(args);
	if (self) {
		p->destroy(self);
		sx_buf_printf(got, "%s ok\n", name);
	} else {
		sx_buf_printf(got, "%s %d %s|%s\n", name, err.code, err.path, err.msg);
	}
}

static void record_all(struct sx_buf *got, const char *name, const struct sx_plugin *p,
		       const char *const *bodies, size_t n)
{
	char label[64];

	for (size_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "%s %zu", name, i);
		record(got, label, p, bodies[i]);
	}
}

static void test_init_replies_recorded(void)
{
	const struct {
		const char *name;
		const struct sx_plugin *p;
		char *body;
	} gen[] = {
		{"fit-gen", &sx_plugin_node_resources_fit,
		 repeat("{\"ignoredResources\":[", "\"a\"", 257, "]}")},
		{"fit-gen", &sx_plugin_node_resources_fit,
		 repeat("{\"ignoredResources\":[", "\"a\"", 256, "]}")},
		{"fit-gen", &sx_plugin_node_resources_fit,
		 repeat("{\"ignoredResourceGroups\":[", "\"a\"", 257, "]}")},
		{"fit-gen", &sx_plugin_node_resources_fit,
		 repeat("{\"scoringStrategy\":{\"type\":\"RequestedToCapacityRatio\","
			"\"requestedToCapacityRatio\":{\"shape\":[",
			"{\"utilization\":1,\"score\":1}", 65, "]}}}")},
		{"fit-gen", &sx_plugin_node_resources_fit,
		 repeat("{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[",
			"{\"name\":\"cpu\"}", 65, "]}}")},
		{"fit-gen", &sx_plugin_node_resources_fit,
		 repeat("{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":[",
			"{\"name\":\"cpu\",\"weight\":2}", 64, "]}}")},
		{"ba-gen", &sx_plugin_node_resources_balanced_allocation,
		 repeat("{\"resources\":[", "{\"name\":\"cpu\"}", 65, "]}")},
		{"pts-gen", &sx_plugin_pod_topology_spread,
		 repeat("{\"defaultingType\":\"List\",\"defaultConstraints\":[", C_OK, 65, "]}")},
		{"pts-gen", &sx_plugin_pod_topology_spread,
		 repeat("{\"defaultConstraints\":[", C_OK, 70, "]}")},
	};
	struct sx_buf got;

	sx_intern_init();
	sx_buf_init(&got);
	record_all(&got, "fit", &sx_plugin_node_resources_fit, fit_bodies,
		   SX_ARRAY_SIZE(fit_bodies));
	record_all(&got, "ba", &sx_plugin_node_resources_balanced_allocation, ba_bodies,
		   SX_ARRAY_SIZE(ba_bodies));
	record_all(&got, "na", &sx_plugin_node_affinity, na_bodies, SX_ARRAY_SIZE(na_bodies));
	record_all(&got, "pts", &sx_plugin_pod_topology_spread, pts_bodies,
		   SX_ARRAY_SIZE(pts_bodies));
	for (size_t i = 0; i < SX_ARRAY_SIZE(gen); i++) {
		record(&got, gen[i].name, gen[i].p, gen[i].body);
		free(gen[i].body);
	}
	if (getenv("SX_RECORD")) {
		FILE *fp = fopen(RECORDING, "w");

		CHECK(fp != NULL);
		if (fp) {
			fputs(sx_buf_cstr(&got), fp);
			fclose(fp);
		}
	} else {
		size_t len;
		char *want = sx_test_read_file(RECORDING, &len);

		CHECK(want != NULL);
		if (want)
			CHECK_STR(sx_buf_cstr(&got), want);
		free(want);
	}
	sx_buf_free(&got);
}

SX_TESTS(SX_TEST(test_init_replies_recorded))
