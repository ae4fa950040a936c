/* Coscheduling (plugins/coscheduling.c): scheduler-plugins'
 * pkg/coscheduling/core/core_test.go transcribed: TestPreFilter (through
 * the plugin's PreFilter, with the words of PodGroupManager.PreFilter),
 * TestPermit (Success / Wait / "PodGroup not found"), and
 * TestCheckClusterResource (through PreFilter with minMember 0, so that
 * only minResources is checked; the gap's words are ours, see the
 * plugin's head comment). Derived cases (names "derived:"): QueueSort's
 * order (Coscheduling.Less), the PodGroup's scheduleTimeoutSeconds as
 * the Permit timeout, and PostFilter's rejection of the group. */
#include <stdlib.h>

#include "plugin_util.h"
#include "schedext/binding_cycle.h"
#include "schedext/config.h"
#include "schedext/handle.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

extern const struct sx_plugin sx_plugin_coscheduling;

static const char only_cosched[] =
	"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	"profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
	"      disabled: [{name: '*'}]\n      enabled: [{name: Coscheduling}]\n"
	"  pluginConfig:\n  - name: Coscheduling\n    args: {permitWaitingTimeSeconds: 10}\n";

static struct sx_config *config(void)
{
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_parse(only_cosched, strlen(only_cosched), &err);

	if (!cfg)
		sx_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
	return cfg;
}

static void *self_of(const struct sx_profile *prof)
{
	for (unsigned i = 0; i < prof->n[SX_PT_PERMIT]; i++)
		if (prof->points[SX_PT_PERMIT][i].plugin == &sx_plugin_coscheduling)
			return prof->points[SX_PT_PERMIT][i].self;
	return NULL;
}

/* A pod of namespace ns; group NULL: no pod-group label. */
static struct sx_pod *pod(const char *name, const char *group, const char *node, const char *cpu)
{
	char buf[1024], labels[200] = "", nodename[100] = "";

	if (group)
		snprintf(labels, sizeof(labels),
			 ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"%s\"}", group);
	if (node)
		snprintf(nodename, sizeof(nodename), "\"nodeName\":\"%s\",", node);
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"%s\"%s},"
		 "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"%s\"}}}]}}",
		 name, name, labels, nodename, cpu ? cpu : "0");
	return tu_pod(buf);
}

static struct sx_cosched_group *group(const char *name, int min_member, const char *extra)
{
	char buf[512];
	struct sx_error err = {0};
	struct sx_object o = {0};
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"PodGroup\",\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
		 "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
		 "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
		 "\"spec\":{\"minMember\":%d%s}}",
		 name, min_member, extra ? extra : "");
	j = cJSON_Parse(buf);
	if (sx_decode_object(j, NULL, &o, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "decode: %s", err.msg);
	cJSON_Delete(j);
	return o.obj;
}

/* st.MakeNode().Name(n).Capacity({cpu: cpu}): pods 32 by default. */
static void add_node(struct sx_cache *c, const char *name, const char *cpu)
{
	char buf[400];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"capacity\":{\"cpu\":\"%s\","
		 "\"pods\":\"32\"},\"allocatable\":{\"cpu\":\"%s\",\"pods\":\"32\"}}}",
		 name, cpu, cpu);
	tu_add(c, "Node", buf);
}

/* One fixture: a profile with Coscheduling, a cache with nodes. */
struct fx {
	struct sx_config *cfg;
	const struct sx_profile *prof;
	void *self;
	struct sx_cache *cache;
	struct sx_pod *pods[8];
	unsigned npods;
	struct sx_cosched_group *groups[4];
	unsigned ngroups;
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->cfg = config();
	f->prof = sx_config_profile(f->cfg, "default-scheduler");
	f->self = self_of(f->prof);
	CHECK(f->self != NULL);
	f->cache = sx_cache_new();
}

/* A pod the cluster has (the pod lister: a Pod event; in the cache when
 * it has a node, as the snapshot lister of upstream's tests). */
static void fx_pod(struct fx *f, struct sx_pod *p)
{
	f->pods[f->npods++] = p;
	sx_handle_object_event(f->prof->handle, SX_KIND_POD, NULL, p);
	if (p->node_name != SX_STR_EMPTY) {
		struct sx_object o = {SX_KIND_POD, sx_pod_ref(p)};

		CHECK_INT(sx_cache_upsert(f->cache, &o), 0);
	}
}

static void fx_group(struct fx *f, struct sx_cosched_group *g)
{
	f->groups[f->ngroups++] = g;
	sx_handle_object_event(f->prof->handle, SX_KIND_COSCHED_POD_GROUP, NULL, g);
}

static void fx_free(struct fx *f)
{
	for (unsigned i = 0; i < f->npods; i++)
		sx_pod_unref(f->pods[i]);
	for (unsigned i = 0; i < f->ngroups; i++)
		sx_cosched_group_unref(f->groups[i]);
	sx_cache_free(f->cache);
	sx_config_free(f->cfg);
}

static const char *pre_filter(struct fx *f, const struct sx_pod *p, char *buf, size_t len)
{
	struct sx_snapshot *snap = sx_cache_snapshot(f->cache);
	struct sx_cycle_state cs = {.snap = snap};
	struct sx_node_set *res = NULL;
	const char *out =
		tu_status(sx_plugin_coscheduling.pre_filter(f->self, &cs, p, &res), buf, len);

	free(res);
	sx_snapshot_unref(snap);
	return out;
}

/* TestPreFilter: nodes node-a and node-b with 4 cpus each. */
static void test_pre_filter(void)
{
	static const char cant[] = "UnschedulableAndUnresolvable: pre-filter pod p cannot find "
				   "enough sibling pods, current pods number: 0, minMember of "
				   "group: 2";
	static const struct {
		const char *name;
		const char *pod, *pod_group;
		const char *pending; /* "name:group name:group ..." */
		const char *pgs;     /* "name:minMember[:minResources cpu]" */
		const char *want;
	} cases[] = {
		{"pod does not belong to any pg", "p", NULL, "p1:pg1 p2:pg2", "pg1:1 pg2:1",
		 "Success"},
		{"pod belongs to a non-existent pg", "p", "pg-non-existent", "", "pg1:1",
		 "Success"},
		{"pod count less than minMember", "p", "pg1", "pg2-1:pg2", "pg1:2 pg2:2", cant},
		{"pod count equal minMember", "p1a", "pg1", "p1b:pg1 p1c:pg1", "pg1:2 pg2:2",
		 "Success"},
		{"pod count more than minMember", "p1a", "pg1", "p1b:pg1 p1c:pg1", "pg1:2 pg2:2",
		 "Success"},
		{"cluster's resource satisfies minResource", "p1a", "pg1", "p1b:pg1 p1c:pg1",
		 "pg1:2:6", "Success"},
		{"cluster's resource cannot satisfy minResource", "p1a", "pg1", "p1b:pg1 p1c:pg1",
		 "pg1:2:10", "UnschedulableAndUnresolvable: resource gap: map[cpu:2]"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct fx f;
		char buf[512], list[256], *save = NULL;
		struct sx_pod *p;

		fprintf(stderr, "case: %s\n", cases[i].name);
		fx_init(&f);
		add_node(f.cache, "node-a", "4");
		add_node(f.cache, "node-b", "4");
		snprintf(list, sizeof(list), "%s", cases[i].pending);
		for (char *t = strtok_r(list, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char *colon = strchr(t, ':');

			*colon = '\0';
			fx_pod(&f, pod(t, colon + 1, NULL, NULL));
		}
		snprintf(list, sizeof(list), "%s", cases[i].pgs);
		for (char *t = strtok_r(list, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char name[32], extra[64] = "";
			int min = 0, cpu = 0;

			if (sscanf(t, "%31[^:]:%d:%d", name, &min, &cpu) == 3)
				snprintf(extra, sizeof(extra), ",\"minResources\":{\"cpu\":\"%d\"}",
					 cpu);
			fx_group(&f, group(name, min, extra));
		}
		p = pod(cases[i].pod, cases[i].pod_group, NULL, NULL);
		CHECK_STR(pre_filter(&f, p, buf, sizeof(buf)), cases[i].want);
		sx_pod_unref(p);
		fx_free(&f);
	}
}

/* TestPermit: one node with 4 cpus; the pod to schedule exists (a Pod
 * event) and, as Permit runs after Reserve, is assumed. */
static void test_permit(void)
{
	static const struct {
		const char *name;
		const char *pod, *pod_group;
		const char *existing_bound; /* a member on "node", or NULL */
		const char *want;
	} cases[] = {
		{"pod does not belong to any pg", "p", NULL, NULL, "Success"},
		{"pod specifies a non-existent pg", "p", "pg-non-existent", NULL,
		 "Unschedulable: PodGroup not found"},
		{"pod belongs to a pg that doesn't have quorum", "p", "pg1", NULL, "Wait"},
		{"pod belongs to a pg that have quorum satisfied", "p1a", "pg1", "p1b", "Success"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct fx f;
		char buf[512];
		struct sx_pod *p;
		struct sx_cycle_state cs = {0};
		uint64_t timeout = 0;
		struct sx_status *st;

		fprintf(stderr, "case: %s\n", cases[i].name);
		fx_init(&f);
		add_node(f.cache, "node", "4");
		fx_group(&f, group("pg1", 2, NULL));
		if (cases[i].existing_bound)
			fx_pod(&f, pod(cases[i].existing_bound, "pg1", "node", NULL));
		p = pod(cases[i].pod, cases[i].pod_group, NULL, NULL);
		sx_handle_object_event(f.prof->handle, SX_KIND_POD, NULL, p);
		CHECK(sx_plugin_coscheduling.reserve(f.self, &cs, p, sx_intern("node")) == NULL);
		st = sx_plugin_coscheduling.permit(f.self, &cs, p, sx_intern("node"), &timeout);
		CHECK_STR(tu_status(st, buf, sizeof(buf)), cases[i].want);
		if (!strcmp(cases[i].want, "Wait"))
			CHECK_INT(timeout, 10000); /* permitWaitingTimeSeconds */
		sx_plugin_coscheduling.unreserve(f.self, &cs, p, sx_intern("node"));
		sx_handle_object_event(f.prof->handle, SX_KIND_POD, p, NULL);
		sx_pod_unref(p);
		fx_free(&f);
	}
}

/* TestCheckClusterResource: node-a and node-b with 3 cpus each, 4 cpus
 * wanted by the group ns/pg1. */
static void test_check_cluster_resource(void)
{
	static const struct {
		const char *name;
		const char *p1_group; /* p1 (2 cpus on node-a) is of pg1, or NULL */
		bool p2;	      /* p2: 1 cpu on node-b */
		const char *want;
	} cases[] = {
		{"Cluster resource enough", NULL, false, "Success"},
		{"Cluster resource not enough", NULL, true,
		 "UnschedulableAndUnresolvable: resource gap: map[cpu:1]"},
		{"Cluster resource enough as p1's resource needs to be excluded from minResources",
		 "pg1", true, "Success"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct fx f;
		char buf[512];
		struct sx_pod *p;

		fprintf(stderr, "case: %s\n", cases[i].name);
		fx_init(&f);
		add_node(f.cache, "node-a", "3");
		add_node(f.cache, "node-b", "3");
		fx_group(&f, group("pg1", 0, ",\"minResources\":{\"cpu\":\"4\"}"));
		fx_pod(&f, pod("p1", cases[i].p1_group, "node-a", "2"));
		if (cases[i].p2)
			fx_pod(&f, pod("p2", NULL, "node-b", "1"));
		p = pod("p", "pg1", NULL, NULL);
		CHECK_STR(pre_filter(&f, p, buf, sizeof(buf)), cases[i].want);
		sx_pod_unref(p);
		fx_free(&f);
	}
}

/* derived (Coscheduling.Less): priority first; then the PodGroup's
 * creation (2026-01-01) before a pod queued now; then namespace/name. */
static void test_less(void)
{
	struct fx f;
	struct sx_pod *a, *b, *c;
	struct sx_queued_pod qa, qb, qc;

	fprintf(stderr, "case: %s\n", "derived: less");
	fx_init(&f);
	fx_group(&f, group("pg1", 2, NULL));
	a = pod("a", NULL, NULL, NULL);
	b = pod("b", "pg1", NULL, NULL);
	c = pod("c", "pg1", NULL, NULL);
	qa = (struct sx_queued_pod){a, sx_now_s()};
	qb = (struct sx_queued_pod){b, sx_now_s() + 1};
	qc = (struct sx_queued_pod){c, sx_now_s()};
	CHECK(sx_plugin_coscheduling.less(f.self, &qb, &qa));  /* the group is older */
	CHECK(!sx_plugin_coscheduling.less(f.self, &qa, &qb)); /* than the pod's queueing */
	CHECK(sx_plugin_coscheduling.less(f.self, &qb, &qc));  /* same group: ns/b < ns/c */
	CHECK(!sx_plugin_coscheduling.less(f.self, &qc, &qb));
	a->priority = 10;
	CHECK(sx_plugin_coscheduling.less(f.self, &qa, &qb)); /* priority first */
	sx_pod_unref(a);
	sx_pod_unref(b);
	sx_pod_unref(c);
	fx_free(&f);
}

/* derived (GetWaitTimeDuration): the PodGroup's scheduleTimeoutSeconds
 * replaces permitWaitingTimeSeconds. */
static void test_schedule_timeout(void)
{
	struct fx f;
	struct sx_pod *p;
	struct sx_cycle_state cs = {0};
	uint64_t timeout = 0;
	char buf[128];

	fprintf(stderr, "case: %s\n", "derived: scheduleTimeoutSeconds");
	fx_init(&f);
	fx_group(&f, group("pg1", 3, ",\"scheduleTimeoutSeconds\":7"));
	p = pod("p", "pg1", NULL, NULL);
	sx_handle_object_event(f.prof->handle, SX_KIND_POD, NULL, p);
	CHECK_STR(tu_status(sx_plugin_coscheduling.permit(f.self, &cs, p, sx_intern("n"), &timeout),
			    buf, sizeof(buf)),
		  "Wait");
	CHECK_INT(timeout, 7000);
	sx_handle_object_event(f.prof->handle, SX_KIND_POD, p, NULL);
	sx_pod_unref(p);
	fx_free(&f);
}

/* derived (Coscheduling.PostFilter): no group, a quorum already met, and
 * the group's rejection with upstream's words. */
static void test_post_filter(void)
{
	struct fx f;
	struct sx_pod *p, *q;
	struct sx_cycle_state cs = {0};
	struct sx_post_filter_result r = {0};
	char buf[256];

	fprintf(stderr, "case: %s\n", "derived: post filter");
	fx_init(&f);
	fx_group(&f, group("pg1", 2, NULL));
	p = pod("p", "pg1", NULL, NULL);
	q = pod("q", "pg-non-existent", NULL, NULL);
	sx_handle_object_event(f.prof->handle, SX_KIND_POD, NULL, p);
	CHECK_STR(tu_status(sx_plugin_coscheduling.post_filter(f.self, &cs, q, NULL, &r), buf,
			    sizeof(buf)),
		  "Unschedulable: can not find pod group");
	CHECK_STR(tu_status(sx_plugin_coscheduling.post_filter(f.self, &cs, p, NULL, &r), buf,
			    sizeof(buf)),
		  "Unschedulable: PodGroup ns/pg1 gets rejected due to Pod p is unschedulable "
		  "even after PostFilter");
	fx_pod(&f, pod("b1", "pg1", "node", NULL));
	fx_pod(&f, pod("b2", "pg1", "node", NULL));
	CHECK(!strncmp(tu_status(sx_plugin_coscheduling.post_filter(f.self, &cs, p, NULL, &r), buf,
				 sizeof(buf)),
		       "Unschedulable", 13));
	CHECK(strstr(buf, "gets rejected") == NULL); /* assigned >= minMember */
	sx_handle_object_event(f.prof->handle, SX_KIND_POD, p, NULL);
	sx_pod_unref(p);
	sx_pod_unref(q);
	fx_free(&f);
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_pre_filter), SX_TEST(test_permit), SX_TEST(test_check_cluster_resource),
	 SX_TEST(test_less), SX_TEST(test_schedule_timeout), SX_TEST(test_post_filter))
