/* The nominated-node fast path (upstream schedule_one.go
 * evaluateNominatedNode): a pod with status.nominatedNodeName is filtered
 * on that node alone first and placed there without scoring when it fits;
 * otherwise every node is searched and the nominated node's failure kept. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/framework.h"

static struct sx_pod *pod_cpu(const char *name, const char *cpu, const char *nominated)
{
	char buf[1024];
	struct sx_error err = {0};
	struct sx_pod *pod;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"%s\"}}}]},\"status\":{\"nominatedNodeName\":\"%s\"}}",
		 name, name, cpu, nominated);
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	return pod;
}

static void add_node(struct sx_cache *c, const char *name, const char *cpu)
{
	char buf[512];
	struct sx_error err = {0};
	struct sx_object obj = {SX_KIND_NODE, NULL};
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\","
		 "\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
		 name, cpu);
	j = cJSON_Parse(buf);
	obj.obj = sx_decode_node(j, &err);
	cJSON_Delete(j);
	sx_cache_upsert(c, &obj);
}

struct fixture {
	struct sx_cache *cache;
	struct sx_config *cfg;
	struct sx_snapshot *snap;
};

static void setup(struct fixture *f)
{
	struct sx_error err = {0};

	sx_intern_init();
	f->cache = sx_cache_new();
	add_node(f->cache, "big-1", "64");
	add_node(f->cache, "small", "2");
	add_node(f->cache, "big-2", "64");
	f->cfg = sx_config_default(&err);
	f->snap = sx_cache_snapshot(f->cache);
}

static void teardown(struct fixture *f)
{
	sx_snapshot_unref(f->snap);
	sx_config_free(f->cfg);
	sx_cache_free(f->cache);
}

static int run(struct fixture *f, const struct sx_pod *pod, struct sx_cycle_result *res)
{
	struct sx_cycle_opts opts = {.snap = f->snap, .mode = SX_CYCLE_FULL, .percentage = 100};

	CHECK_INT(sx_schedule(f->cfg->profiles[0], pod, &opts, res), 0);
	return res->selected;
}

static void test_nominated_node_first(void)
{
	struct fixture f;
	struct sx_cycle_result res;
	struct sx_pod *pod;
	int small;

	setup(&f);
	small = sx_snapshot_find(f.snap, sx_intern("small"));
	pod = pod_cpu("p", "1", "small");
	/* LeastAllocated prefers the big nodes, yet the nominated one is taken */
	CHECK_INT(run(&f, pod, &res), small);
	CHECK_INT(res.nfeasible, 1);
	for (uint32_t i = 0; i < res.num_all_nodes; i++)
		CHECK(res.evaluated[i] == ((int)i == small));
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	teardown(&f);
}

static void test_nominated_node_not_fitting(void)
{
	struct fixture f;
	struct sx_cycle_result res;
	struct sx_pod *pod;
	int small, got;
	char buf[256];

	setup(&f);
	small = sx_snapshot_find(f.snap, sx_intern("small"));
	pod = pod_cpu("p", "4", "small");
	got = run(&f, pod, &res);
	CHECK(got >= 0 && got != small);
	CHECK_INT(res.nfeasible, 2);
	CHECK(res.statuses[small] != NULL);
	CHECK_STR(sx_status_message(res.statuses[small], buf, sizeof(buf)), "Insufficient cpu");
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	/* a nominated node that is gone: the normal search */
	pod = pod_cpu("q", "1", "vanished");
	CHECK(run(&f, pod, &res) >= 0);
	CHECK_INT(res.nfeasible, 3);
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	teardown(&f);
}

SX_TESTS(SX_TEST(test_nominated_node_first), SX_TEST(test_nominated_node_not_fitting))
