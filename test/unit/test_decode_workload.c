/* scheduling.k8s.io/v1beta1 Workload and PodGroup, scheduler-plugins'
 * scheduling.x-k8s.io/v1alpha1 PodGroup (the same kind string, told apart
 * by apiVersion), and the pod's
 * spec.schedulingGroup (src/api/decode_workload.c, decode_pod.c): the
 * decoders' fields and errors, and PodGroups reaching the cache and its
 * snapshot through the informer's LIST and WATCH paths. */
#include <string.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/informer.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"
#include "unit/test_decode_parse.h"

static void *dec(const char *text, struct sx_error *err)
{
	cJSON *j = parse(text);
	struct sx_object o;
	int rc = sx_decode_object(j, NULL, &o, err);

	cJSON_Delete(j);
	return rc == 0 ? o.obj : NULL;
}

static void test_pod_group(void)
{
	struct sx_error err = {0};
	struct sx_pod_group *g =
		dec("{'kind':'PodGroup','apiVersion':'scheduling.k8s.io/v1beta1',"
		    "'metadata':{'name':'train-0','namespace':'ml'},"
		    "'spec':{'workloadRef':{'workloadName':'train','templateName':'workers'},"
		    "'schedulingPolicy':{'gang':{'minCount':4}},"
		    "'schedulingConstraints':{'topology':[{'key':'topology.kubernetes.io/rack'}]},"
		    "'disruptionMode':{'all':{}},'priorityClassName':'high','priority':1000,"
		    "'preemptionPolicy':'Never'},'status':{'conditions':[]}}",
		    &err);

	CHECK(g != NULL);
	if (!g)
		return;
	CHECK_STR(g->meta.name, "train-0");
	CHECK_INT(g->spec.policy, SX_GROUP_POLICY_GANG);
	CHECK_INT(g->spec.min_count, 4);
	CHECK_STR(sx_str_get(g->workload_name), "train");
	CHECK_STR(sx_str_get(g->template_name), "workers");
	CHECK_INT(g->spec.ntopology, 1);
	if (g->spec.ntopology == 1)
		CHECK_STR(sx_str_get(g->spec.topology[0]), "topology.kubernetes.io/rack");
	CHECK_INT(g->spec.disruption, SX_DISRUPTION_ALL);
	CHECK_STR(sx_str_get(g->spec.priority_class), "high");
	CHECK(g->spec.has_priority && g->spec.priority == 1000);
	CHECK(g->spec.has_preemption_policy && g->spec.preempt_never);
	sx_pod_group_unref(g);

	g = dec("{'kind':'PodGroup','metadata':{'name':'b','namespace':'ml'},"
		"'spec':{'schedulingPolicy':{'basic':{}}}}",
		&err);
	CHECK(g != NULL);
	if (g) {
		CHECK_INT(g->spec.policy, SX_GROUP_POLICY_BASIC);
		CHECK(!g->spec.has_priority && !g->spec.has_preemption_policy);
		CHECK_INT(g->spec.disruption, SX_DISRUPTION_UNSET);
		sx_pod_group_unref(g);
	}
}

static void test_workload(void)
{
	struct sx_error err = {0};
	struct sx_workload *w = dec(
		"{'kind':'Workload','apiVersion':'scheduling.k8s.io/v1beta1',"
		"'metadata':{'name':'train','namespace':'ml'},"
		"'spec':{'controllerRef':{'apiGroup':'batch','kind':'Job','name':'train'},"
		"'podGroupTemplates':[{'name':'workers','schedulingPolicy':{'gang':{'minCount':8}},"
		"'disruptionMode':{'single':{}}},"
		"{'name':'driver','schedulingPolicy':{'basic':{}},'priority':5}]}}",
		&err);

	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_STR(sx_str_get(w->controller_kind), "Job");
	CHECK_INT(w->ntemplates, 2);
	if (w->ntemplates == 2) {
		CHECK_STR(sx_str_get(w->templates[0].name), "workers");
		CHECK_INT(w->templates[0].spec.policy, SX_GROUP_POLICY_GANG);
		CHECK_INT(w->templates[0].spec.min_count, 8);
		CHECK_INT(w->templates[0].spec.disruption, SX_DISRUPTION_SINGLE);
		CHECK_INT(w->templates[1].spec.policy, SX_GROUP_POLICY_BASIC);
		CHECK(w->templates[1].spec.has_priority && w->templates[1].spec.priority == 5);
	}
	sx_workload_unref(w);
}

static void test_pod_field(void)
{
	struct sx_error err = {0};
	struct sx_pod *p = dec("{'kind':'Pod','metadata':{'name':'w-0','namespace':'ml'},"
			       "'spec':{'schedulingGroup':{'podGroupName':'train-0'},"
			       "'containers':[]}}",
			       &err);

	CHECK(p != NULL);
	if (p) {
		CHECK_STR(sx_str_get(p->scheduling_group), "train-0");
		sx_pod_unref(p);
	}
	p = dec("{'kind':'Pod','metadata':{'name':'w-1','namespace':'ml'},"
		"'spec':{'containers':[]}}",
		&err);
	CHECK(p != NULL);
	if (p) {
		CHECK(p->scheduling_group == SX_STR_EMPTY);
		sx_pod_unref(p);
	}
}

static void expect_error(const char *text, const char *path)
{
	struct sx_error err = {0};

	CHECK(dec(text, &err) == NULL);
	CHECK_STR(err.path, path);
}

static void test_errors(void)
{
	expect_error("{'kind':'PodGroup','metadata':{'name':'g','namespace':'n'},"
		     "'spec':{'schedulingPolicy':{'gang':{}}}}",
		     "spec.schedulingPolicy.gang.minCount");
	expect_error("{'kind':'PodGroup','metadata':{'name':'g','namespace':'n'},"
		     "'spec':{'schedulingPolicy':{'gang':{'minCount':0}}}}",
		     "spec.schedulingPolicy.gang.minCount");
	expect_error("{'kind':'PodGroup','metadata':{'name':'g','namespace':'n'},"
		     "'spec':{'schedulingPolicy':{'gang':{'minCount':'4'}}}}",
		     "spec.schedulingPolicy.gang.minCount");
	expect_error("{'kind':'PodGroup','metadata':{'name':'g','namespace':'n'},"
		     "'spec':{'schedulingConstraints':{'topology':[{'key':3}]}}}",
		     "spec.schedulingConstraints.topology[0].key");
	expect_error("{'kind':'Workload','metadata':{'name':'w','namespace':'n'},"
		     "'spec':{'podGroupTemplates':[{'name':1}]}}",
		     "spec.podGroupTemplates[0].name");
	expect_error("{'kind':'Pod','metadata':{'name':'p','namespace':'n'},"
		     "'spec':{'schedulingGroup':{'podGroupName':[]},'containers':[]}}",
		     "spec.schedulingGroup.podGroupName");
}

#define GROUP(name, min)                                                                           \
	"{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\","         \
	"\"resourceVersion\":\"9\"},\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":" min   \
	"}}}}"

static uint32_t cached(struct sx_cache *c)
{
	struct sx_cache_stats st;

	sx_cache_stats(c, &st);
	return st.objects[SX_KIND_POD_GROUP];
}

static void test_informer(void)
{
	static const char list[] =
		"{\"kind\":\"PodGroupList\",\"metadata\":"
		"{\"resourceVersion\":\"10\"},\"items\":[" GROUP("a", "2") "," GROUP("b", "3") "]}";
	static const char watch[] = "{\"type\":\"MODIFIED\",\"object\":" GROUP(
		"a", "1") "}\n{\"type\":\"DELETED\",\"object\":" GROUP("b", "3") "}\n";
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
	char rv[64];

	CHECK_INT(sx_informer_replay_list(c, SX_KIND_POD_GROUP, list, strlen(list), rv, sizeof(rv)),
		  0);
	CHECK_INT(cached(c), 2);
	CHECK_INT(sx_informer_replay_watch(c, SX_KIND_POD_GROUP, watch, strlen(watch), rv,
					   sizeof(rv)),
		  0);
	CHECK_INT(cached(c), 1);
	s = sx_cache_snapshot(c);
	CHECK_INT(s->npod_groups, 1);
	if (s->npod_groups == 1) {
		CHECK_STR(s->pod_groups[0]->meta.name, "a");
		CHECK_INT(s->pod_groups[0]->spec.min_count, 1);
	}
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

/* scheduler-plugins' PodGroup: spec and status fields, told apart from
 * the Workload API's PodGroup by its apiVersion. */
static void test_cosched_group(void)
{
	struct sx_error err = {0};
	cJSON *j = parse("{'kind':'PodGroup','apiVersion':'scheduling.x-k8s.io/v1alpha1',"
			 "'metadata':{'name':'pg1','namespace':'ml'},"
			 "'spec':{'minMember':3,'scheduleTimeoutSeconds':10,"
			 "'minResources':{'cpu':'3','memory':'3Gi','nvidia.com/gpu':'2'}},"
			 "'status':{'phase':'Scheduling','scheduled':1,'running':1}}");
	struct sx_object o;
	struct sx_cosched_group *g;

	CHECK_INT(sx_decode_object(j, NULL, &o, &err), 0);
	cJSON_Delete(j);
	CHECK_INT(o.kind, SX_KIND_COSCHED_POD_GROUP);
	g = o.obj;
	CHECK_STR(g->meta.name, "pg1");
	CHECK_INT(g->min_member, 3);
	CHECK(g->has_schedule_timeout && g->schedule_timeout_seconds == 10);
	CHECK(g->has_min_resources);
	CHECK_INT(g->min_resources.milli_cpu, 3000);
	CHECK_INT(g->min_resources.memory, 3ll << 30);
	CHECK_INT(g->min_resources.nscalar, 1);
	CHECK_STR(sx_str_get(g->phase), "Scheduling");
	CHECK_INT(g->scheduled, 1);
	CHECK_INT(g->running, 1);
	sx_object_unref(&o);

	/* the list's kind and no apiVersion: the first PodGroup row */
	j = parse("{'metadata':{'name':'b','namespace':'ml'},"
		  "'spec':{'schedulingPolicy':{'basic':{}}}}");
	CHECK_INT(sx_decode_object(j, "PodGroup", &o, &err), 0);
	CHECK_INT(o.kind, SX_KIND_POD_GROUP);
	sx_object_unref(&o);
	/* and as the informer decodes it, by its row */
	CHECK_INT(sx_decode_object_as(j, SX_KIND_COSCHED_POD_GROUP, &o, &err), 0);
	CHECK_INT(o.kind, SX_KIND_COSCHED_POD_GROUP);
	sx_object_unref(&o);
	cJSON_Delete(j);

	j = parse("{'kind':'PodGroup','apiVersion':'scheduling.x-k8s.io/v1alpha1',"
		  "'metadata':{'name':'c','namespace':'ml'},'spec':{'minMember':'x'}}");
	CHECK(sx_decode_object(j, NULL, &o, &err) < 0);
	CHECK_STR(err.path, "spec.minMember");
	cJSON_Delete(j);
}

/* The CRD's PodGroups through its informer (LIST and WATCH): its own
 * snapshot block, the Workload API's stays empty. */
static void test_cosched_informer(void)
{
	static const char list[] =
		"{\"kind\":\"PodGroupList\",\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
		"\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
		"{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},\"spec\":{\"minMember\":2}},"
		"{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\"},\"spec\":{\"minMember\":3}}]}";
	static const char watch[] =
		"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"b\","
		"\"namespace\":\"n\"},\"spec\":{\"minMember\":3}}}\n";
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
	char rv[64];

	CHECK_INT(sx_informer_replay_list(c, SX_KIND_COSCHED_POD_GROUP, list, strlen(list), rv,
					  sizeof(rv)),
		  0);
	CHECK_INT(sx_informer_replay_watch(c, SX_KIND_COSCHED_POD_GROUP, watch, strlen(watch), rv,
					   sizeof(rv)),
		  0);
	s = sx_cache_snapshot(c);
	CHECK_INT(s->npod_groups, 0);
	CHECK_INT(s->ncosched_pod_groups, 1);
	if (s->ncosched_pod_groups == 1) {
		CHECK_STR(s->cosched_pod_groups[0]->meta.name, "a");
		CHECK_INT(s->cosched_pod_groups[0]->min_member, 2);
	}
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_pod_group), SX_TEST(test_workload), SX_TEST(test_pod_field),
	 SX_TEST(test_errors), SX_TEST(test_informer), SX_TEST(test_cosched_group),
	 SX_TEST(test_cosched_informer))
