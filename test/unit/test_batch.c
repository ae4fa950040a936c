/* Opportunistic batching (src/framework/batch.c, the hint and store in
 * src/framework/framework.c), run as the standalone loop runs it: one
 * cycle per pod with the cycle count, the chosen node assumed in the
 * cache before the next pod.
 *
 * The scenarios are upstream's TestBatchScenarios
 * (test/integration/scheduler/batch/batch_test.go): nodes with room for
 * maxPods pods, pods preferring nodes by weight (len - i), the default
 * profile with PodTopologySpread's default constraints cleared (as that
 * test clears them), at 1.35 (whose DRAExtendedResource is off, so
 * NodeResourcesFit signs). Its "nosign"/"emptysign" plugins are played by
 * an extender (signatures off for the profile) and by a pod that cannot
 * be signed (pod affinity that matches nothing). The 1.37 cases (derived)
 * block nodes with a host port instead of maxPods, since 1.37's
 * NodeResourcesFit cannot sign (DRAExtendedResource is locked on), and
 * show the rescoring of the node chosen last (runtime/batch.go
 * rescoreHintedNode): where 1.35 drops the state (node_not_full), 1.37
 * hints the node again. Metrics are read from the registry, with
 * upstream's names and label values. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/batch.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/framework_metrics.h"
#include "schedext/metrics.h"
#include "schedext/snapshot.h"

/* The tables name only the fields a row needs. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

struct pod_def {
	const char *name;
	const char *affinity[3]; /* preferred nodes, weights len - i */
	const char *expected;
	bool batched;
	const char *scheduler; /* NULL: default-scheduler */
	bool unsignable;       /* a pod affinity term matching nothing */
	int host_port;	       /* 0: none */
	const char *nominated;
};

struct node_def {
	const char *name;
	int max_pods;
};

struct scenario {
	const char *name;
	struct pod_def pods[5];
	struct node_def nodes[5];
};

struct world {
	struct sx_cache *cache;
	struct sx_config *cfg;
	struct sx_metrics *m;
	struct sx_batch *batch[2];
	int64_t cycle;
	uint64_t rng;
	int npods;
};

static const char *profiles_json(bool fit, bool extender)
{
	static char buf[2048];
	const char *plugins =
		fit ? ""
		    : ",\"plugins\":{\"multiPoint\":{\"disabled\":[{\"name\":\"NodeResourcesFit\"},"
		      "{\"name\":\"NodeResourcesBalancedAllocation\"}]}}";

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
		 "\"kind\":\"KubeSchedulerConfiguration\",%s\"profiles\":["
		 "{\"schedulerName\":\"default-scheduler\"%s,\"pluginConfig\":[{\"name\":"
		 "\"PodTopologySpread\",\"args\":{\"defaultingType\":\"List\"}}]},"
		 "{\"schedulerName\":\"mysched\"%s,\"pluginConfig\":[{\"name\":"
		 "\"PodTopologySpread\",\"args\":{\"defaultingType\":\"List\"}}]}]}",
		 extender ? "\"extenders\":[{\"urlPrefix\":\"http://127.0.0.1:1\","
			    "\"filterVerb\":\"filter\"}],"
			  : "",
		 plugins, plugins);
	return buf;
}

static void add_node(struct world *w, const struct node_def *d)
{
	char buf[512];
	struct sx_error err = {0};
	struct sx_object obj = {SX_KIND_NODE, NULL};
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":{\"cpu\":\"100\","
		 "\"memory\":\"4Gi\",\"pods\":\"%d\"},\"capacity\":{\"cpu\":\"100\","
		 "\"memory\":\"4Gi\",\"pods\":\"%d\"}}}",
		 d->name, d->max_pods, d->max_pods);
	j = cJSON_Parse(buf);
	obj.obj = sx_decode_node(j, &err);
	cJSON_Delete(j);
	CHECK(obj.obj != NULL);
	sx_cache_upsert(w->cache, &obj);
}

/* upstream's newPod: pause pod, cpu 10, memory 4Mi, preferred affinity
 * on metadata.name with weights len(affinity) - i. */
static struct sx_pod *make_pod(const struct pod_def *d, const char *node)
{
	char buf[4096], terms[1024] = "", extra[512] = "";
	struct sx_error err = {0};
	struct sx_pod *pod;
	size_t off = 0;
	int n = 0;
	cJSON *j;

	while (n < 3 && d->affinity[n])
		n++;
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(
			terms + off, sizeof(terms) - off,
			"%s{\"weight\":%d,\"preference\":{\"matchFields\":[{\"key\":"
			"\"metadata.name\",\"operator\":\"In\",\"values\":[\"%s\"]}]}}",
			i ? "," : "", n - i, d->affinity[i]);
	if (d->unsignable)
		snprintf(extra, sizeof(extra),
			 ",\"podAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
			 "[{\"weight\":1,\"podAffinityTerm\":{\"labelSelector\":{\"matchLabels\":"
			 "{\"none\":\"x\"}},\"topologyKey\":\"kubernetes.io/hostname\"}}]}");
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"u-%s\"},"
		 "\"spec\":{\"schedulerName\":\"%s\",\"nodeName\":\"%s\","
		 "\"affinity\":{\"nodeAffinity\":{"
		 "\"preferredDuringSchedulingIgnoredDuringExecution\":"
		 "[%s]}%s},\"containers\":[{\"name\":\"c\",\"image\":\"pause\",%s"
		 "\"resources\":{\"requests\":{\"cpu\":\"10\",\"memory\":\"4Mi\"}}}]},"
		 "\"status\":{\"nominatedNodeName\":\"%s\"}}",
		 d->name, d->name, d->scheduler ? d->scheduler : "default-scheduler",
		 node ? node : "", terms, extra,
		 d->host_port ? "\"ports\":[{\"containerPort\":80,\"hostPort\":80}]," : "",
		 d->nominated ? d->nominated : "");
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	if (!pod)
		sx_test_fail(__FILE__, __LINE__, "pod %s: %s", d->name, err.msg);
	return pod;
}

static void setup(struct world *w, int release, const char *gates, bool fit, bool extender,
		  const struct node_def *nodes)
{
	struct sx_features f;
	struct sx_error err = {0};
	const char *json = profiles_json(fit, extender);

	memset(w, 0, sizeof(*w));
	sx_intern_init();
	sx_features_init(&f, release);
	if (gates)
		CHECK_INT(sx_features_set(&f, gates, &err), 0);
	w->cfg = sx_config_parse_for(json, strlen(json), &f, &err);
	if (!w->cfg)
		sx_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
	w->cache = sx_cache_new();
	w->m = sx_metrics_new();
	sx_fw_metrics_define(w->m, &w->cfg->features);
	for (int i = 0; i < 2; i++)
		w->batch[i] = sx_batch_new(w->cfg->profiles[i], w->m, w->cfg->nextenders > 0);
	for (int i = 0; nodes && nodes[i].name; i++)
		add_node(w, &nodes[i]);
	w->rng = 42;
}

static void teardown(struct world *w)
{
	for (int i = 0; i < 2; i++)
		sx_batch_free(w->batch[i]);
	sx_metrics_free(w->m);
	sx_config_free(w->cfg);
	sx_cache_free(w->cache);
}

/* One scheduling cycle of d (cycle count + 1); the chosen node's name
 * (static buffer) or "" when none; *batched: it took its hint. */
static const char *schedule(struct world *w, const struct pod_def *d, bool *batched)
{
	static char chosen[64];
	int p = d->scheduler && strcmp(d->scheduler, "mysched") == 0 ? 1 : 0;
	struct sx_pod *pod = make_pod(d, NULL);
	struct sx_snapshot *snap = sx_cache_snapshot(w->cache);
	int64_t before = sx_batch_batched(w->batch[p]);
	struct sx_cycle_opts opts = {.snap = snap,
				     .mode = SX_CYCLE_FULL,
				     .percentage = -1,
				     .rng = &w->rng,
				     .batch = w->batch[p],
				     .cycle = ++w->cycle};
	struct sx_cycle_result res;

	chosen[0] = '\0';
	CHECK_INT(sx_schedule(w->cfg->profiles[p], pod, &opts, &res), 0);
	if (res.selected >= 0) {
		struct sx_object obj = {SX_KIND_POD, NULL};

		snprintf(chosen, sizeof(chosen), "%s", sx_str_get(snap->nodes[res.selected]->name));
		obj.obj = make_pod(d, chosen); /* bound: the next cycle sees it */
		sx_cache_upsert(w->cache, &obj);
	}
	*batched = sx_batch_batched(w->batch[p]) > before;
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	return chosen;
}

static void run_scenario(const struct scenario *sc, int release, bool fit, bool extender,
			 struct world *out)
{
	struct world w;

	setup(&w, release, NULL, fit, extender, sc->nodes);
	for (int i = 0; sc->pods[i].name; i++) {
		bool batched = false;
		const char *got = schedule(&w, &sc->pods[i], &batched);

		if (strcmp(got, sc->pods[i].expected) != 0)
			sx_test_fail(__FILE__, __LINE__, "%s (1.%d): pod %s on '%s', expected '%s'",
				     sc->name, release, sc->pods[i].name, got,
				     sc->pods[i].expected);
		if (batched != sc->pods[i].batched)
			sx_test_fail(__FILE__, __LINE__,
				     "%s (1.%d): pod %s batched %d, expected %d", sc->name, release,
				     sc->pods[i].name, batched, sc->pods[i].batched);
	}
	if (out)
		*out = w;
	else
		teardown(&w);
}

static double metric(struct world *w, const char *name, const char *labels)
{
	return sx_metrics_value(w->m, name, labels);
}

/* upstream TestBatchScenarios, at 1.35 */
static const struct scenario scenarios[] = {
	{"one pod one node",
	 {{"1ppn-batchp1", {NULL}, "1ppn-batchn1", false}},
	 {{"1ppn-batchn1", 1}}},
	{"three pod batch",
	 {{"tpb-batchp1", {"tpb-batchn1", "tpb-batchn2", "tpb-batchn3"}, "tpb-batchn1", false},
	  {"tpb-batchp2", {"tpb-batchn1", "tpb-batchn2", "tpb-batchn3"}, "tpb-batchn2", true},
	  {"tpb-batchp3", {"tpb-batchn1", "tpb-batchn2", "tpb-batchn3"}, "tpb-batchn3", true}},
	 {{"tpb-batchn3", 1}, {"tpb-batchn2", 1}, {"tpb-batchn1", 1}}},
	{"two consecutive batches",
	 {{"tcb-batchp1", {"tcb-batchn1", "tcb-batchn2"}, "tcb-batchn1", false},
	  {"tcb-batchp2", {"tcb-batchn1", "tcb-batchn2"}, "tcb-batchn2", true},
	  {"tcb-batchp3", {"tcb-batchn4", "tcb-batchn3"}, "tcb-batchn4", false},
	  {"tcb-batchp4", {"tcb-batchn4", "tcb-batchn3"}, "tcb-batchn3", true}},
	 {{"tcb-batchn4", 1}, {"tcb-batchn3", 1}, {"tcb-batchn2", 1}, {"tcb-batchn1", 1}}},
	{"multiple pods per node means no batching",
	 {{"mppn-batchp1", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", false},
	  {"mppn-batchp2", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", false},
	  {"mppn-batchp3", {"mppn-batchn4", "mppn-batchn3"}, "mppn-batchn4", false},
	  {"mppn-batchp4", {"mppn-batchn4", "mppn-batchn3"}, "mppn-batchn4", false}},
	 {{"mppn-batchn4", 2}, {"mppn-batchn3", 2}, {"mppn-batchn2", 2}, {"mppn-batchn1", 2}}},
	{"no batching between schedulers",
	 {{"bts--batchp1", {"bts--batchn1", "bts--batchn2", "bts--batchn3"}, "bts--batchn1", false},
	  {"bts--batchp2",
	   {"bts--batchn1", "bts--batchn2", "bts--batchn3"},
	   "bts--batchn2",
	   false,
	   "mysched"}},
	 {{"bts--batchn3", 1}, {"bts--batchn2", 1}, {"bts--batchn1", 1}}},
	{"no batching empty sign",
	 {{"esg-batchp1",
	   {"esg-batchn1", "esg-batchn2", "esg-batchn3"},
	   "esg-batchn1",
	   false,
	   NULL,
	   true},
	  {"esg-batchp2",
	   {"esg-batchn1", "esg-batchn2", "esg-batchn3"},
	   "esg-batchn2",
	   false,
	   NULL,
	   true}},
	 {{"esg-batchn3", 1}, {"esg-batchn2", 1}, {"esg-batchn1", 1}}},
};

static void test_upstream_scenarios_135(void)
{
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario(&scenarios[i], 35, true, false, NULL);
}

/* "no batching missing sign": a profile that cannot sign (upstream: a
 * plugin without SignPod; here an extender, which turns signatures off
 * the same way, computeBatchablePlugins). The extender is never called:
 * its filter verb would be, so the cycle is run without it. */
static void test_no_batching_missing_sign(void)
{
	static const struct node_def nodes[] = {
		{"nsg-batchn3", 1}, {"nsg-batchn2", 1}, {"nsg-batchn1", 1}, {NULL, 0}};
	static const struct pod_def p1 = {
		"nsg-batchp1", {"nsg-batchn1", "nsg-batchn2", "nsg-batchn3"}, "nsg-batchn1", false};
	static const struct pod_def p2 = {
		"nsg-batchp2", {"nsg-batchn1", "nsg-batchn2", "nsg-batchn3"}, "nsg-batchn2", false};
	struct world w;
	bool batched;

	setup(&w, 35, NULL, true, true, nodes);
	CHECK(!sx_batch_signs(w.batch[0]));
	CHECK_STR(schedule(&w, &p1, &batched), "nsg-batchn1");
	CHECK(!batched);
	CHECK_STR(schedule(&w, &p2, &batched), "nsg-batchn2");
	CHECK(!batched);
	CHECK(metric(&w, "scheduler_batch_attempts_total",
		     "profile=\"default-scheduler\",result=\"no_hint\"") == 2);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"pod_not_batchable\"") == 2);
	teardown(&w);
}

/* The metrics of "three pod batch" and of "multiple pods per node" at
 * 1.35: hints used, and the flush when the node chosen last still fits. */
static void test_metrics_135(void)
{
	struct world w;

	run_scenario(&scenarios[1], 35, true, false, &w);
	CHECK(metric(&w, "scheduler_batch_attempts_total",
		     "profile=\"default-scheduler\",result=\"no_hint\"") == 1);
	CHECK(metric(&w, "scheduler_batch_attempts_total",
		     "profile=\"default-scheduler\",result=\"hint_used\"") == 2);
	CHECK(sx_batch_remaining(w.batch[0]) == 0);
	teardown(&w);

	run_scenario(&scenarios[3], 35, true, false, &w);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"node_not_full\"") == 2);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"pod_incompatible\"") == 1);
	CHECK(metric(&w, "scheduler_batch_attempts_total",
		     "profile=\"default-scheduler\",result=\"no_hint\"") == 4);
	CHECK(metric(&w, "scheduler_batch_rescore_attempts_total",
		     "profile=\"default-scheduler\"") == 0);
	/* every SignPod call is timed, per plugin (extension point Sign) */
	sx_fw_metrics_export(w.m, w.cfg);
	CHECK(metric(&w, "scheduler_plugin_execution_duration_seconds",
		     "plugin=\"NodeResourcesFit\",extension_point=\"Sign\",status=\"Success\"") >=
	      4);
	teardown(&w);
}

/* derived (runtime/batch.go 1.37 refreshHintCandidates and
 * rescoreHintedNode): with room for two pods per node, 1.37 scores the
 * node chosen last again, finds it still the best and hints it; 1.35
 * drops the state and searches again, reaching the same node. Nodes are
 * blocked by a host port in the blocking variant. Profiles without
 * NodeResourcesFit and BalancedAllocation (at 1.37 they cannot sign). */
static void test_rescore_137(void)
{
	static const struct scenario mppn = {
		"derived: multiple pods per node",
		{{"mppn-batchp1", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", false},
		 {"mppn-batchp2", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", true},
		 {"mppn-batchp3", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", true}},
		{{"mppn-batchn4", 2},
		 {"mppn-batchn3", 2},
		 {"mppn-batchn2", 2},
		 {"mppn-batchn1", 2}}};
	static const struct scenario mppn135 = {
		"derived: multiple pods per node",
		{{"mppn-batchp1", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", false},
		 {"mppn-batchp2", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", false},
		 {"mppn-batchp3", {"mppn-batchn1", "mppn-batchn2"}, "mppn-batchn1", false}},
		{{"mppn-batchn4", 2},
		 {"mppn-batchn3", 2},
		 {"mppn-batchn2", 2},
		 {"mppn-batchn1", 2}}};
	static const struct scenario tpb = {
		"derived: three pod batch, host ports",
		{{"tpb-batchp1",
		  {"tpb-batchn1", "tpb-batchn2", "tpb-batchn3"},
		  "tpb-batchn1",
		  false,
		  NULL,
		  false,
		  80},
		 {"tpb-batchp2",
		  {"tpb-batchn1", "tpb-batchn2", "tpb-batchn3"},
		  "tpb-batchn2",
		  true,
		  NULL,
		  false,
		  80},
		 {"tpb-batchp3",
		  {"tpb-batchn1", "tpb-batchn2", "tpb-batchn3"},
		  "tpb-batchn3",
		  true,
		  NULL,
		  false,
		  80}},
		{{"tpb-batchn3", 10}, {"tpb-batchn2", 10}, {"tpb-batchn1", 10}}};
	struct world w;

	run_scenario(&mppn, 37, false, false, &w);
	CHECK(metric(&w, "scheduler_batch_rescore_attempts_total",
		     "profile=\"default-scheduler\"") == 2);
	CHECK(metric(&w, "scheduler_batch_attempts_total",
		     "profile=\"default-scheduler\",result=\"hint_used\"") == 2);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"node_not_full\"") == 0);
	/* n2, n3, n4 wait behind n1 */
	CHECK_INT(sx_batch_remaining(w.batch[0]), 3);
	teardown(&w);

	run_scenario(&mppn135, 35, false, false, &w);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"node_not_full\"") == 2);
	teardown(&w);

	run_scenario(&tpb, 37, false, false, &w);
	CHECK(metric(&w, "scheduler_batch_rescore_attempts_total",
		     "profile=\"default-scheduler\"") == 0);
	teardown(&w);
	run_scenario(&tpb, 35, false, false, NULL);
}

/* The default profile signs nothing: PodTopologySpread's system default
 * constraints (every release), and at 1.37 NodeResourcesFit under
 * DRAExtendedResource (locked on). Every pod counts no_hint and flushes
 * pod_not_batchable; the nodes chosen are those of the full search. */
static void test_default_profile_unsignable(void)
{
	static const struct node_def nodes[] = {{"n1", 1}, {"n2", 1}, {"n3", 1}, {NULL, 0}};
	static const struct pod_def p1 = {"p1", {"n1", "n2"}, "n1", false};
	static const struct pod_def p2 = {"p2", {"n1", "n2"}, "n2", false};
	struct sx_features f;
	struct sx_error err = {0};
	struct world w;
	bool batched;

	setup(&w, 37, NULL, true, false, nodes);
	CHECK(sx_batch_signs(w.batch[0]));
	CHECK_STR(schedule(&w, &p1, &batched), "n1");
	CHECK_STR(schedule(&w, &p2, &batched), "n2");
	CHECK(!batched);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"pod_not_batchable\"") == 2);
	teardown(&w);

	/* the true default profile (System defaulting) at 1.35 */
	sx_features_init(&f, 35);
	w.cfg = sx_config_default_for(&f, &err);
	CHECK(w.cfg != NULL);
	{
		struct sx_batch *b = sx_batch_new(w.cfg->profiles[0], NULL, false);
		struct sx_pod *pod = make_pod(&p1, NULL);
		struct sx_buf sig;

		sx_buf_init(&sig);
		CHECK(sx_batch_signs(b));
		CHECK(!sx_batch_sign(b, pod, &sig, false));
		sx_buf_free(&sig);
		sx_pod_unref(pod);
		sx_batch_free(b);
	}
	sx_config_free(w.cfg);
}

/* TestBatchBasic's flush reasons through the cycle: a pod of another
 * signature (pod_incompatible), a gap in the cycle count (pod_skipped),
 * a state older than 500 ms (expired), the node chosen last deleted
 * (node_missing), a nominated pod at 1.37 (pod_nominated), and a single
 * feasible node (empty_list). */
static double fake_now;
static double clock_fake(void)
{
	return fake_now;
}

static void test_flush_reasons(void)
{
	static const struct node_def nodes[] = {
		{"n1", 1}, {"n2", 1}, {"n3", 1}, {"n4", 1}, {NULL, 0}};
	struct pod_def a = {"a1", {"n1", "n2", "n3"}, "n1", false};
	struct pod_def b = {"b1", {"n4"}, "n4", false};
	struct world w;
	bool batched;
	const char *got;

	setup(&w, 37, NULL, false, false, nodes);
	sx_batch_set_clock(w.batch[0], clock_fake);
	fake_now = 100;
	CHECK_STR(schedule(&w, &a, &batched), "n1");
	b.name = "b1";
	CHECK_STR(schedule(&w, &b, &batched), "n4"); /* another signature */
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"pod_incompatible\"") == 1);
	/* b's state now; a pod of b's signature after a skipped cycle */
	w.cycle++;
	b.name = "b2";
	b.expected = "n1";
	got = schedule(&w, &b, &batched);
	CHECK(!batched && got[0]);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"pod_skipped\"") == 1);
	/* expired */
	fake_now += 0.6;
	b.name = "b3";
	got = schedule(&w, &b, &batched);
	CHECK(!batched);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"expired\"") == 1);
	teardown(&w);

	/* node_missing: the node chosen last (taken again after rescoring,
	 * nothing blocks here) is gone */
	setup(&w, 37, NULL, false, false, nodes);
	a.name = "a1";
	CHECK_STR(schedule(&w, &a, &batched), "n1");
	a.name = "a2";
	CHECK_STR(schedule(&w, &a, &batched), "n1");
	CHECK(batched);
	CHECK_INT(sx_cache_delete(w.cache, SX_KIND_NODE, SX_STR_EMPTY, "n1"), 0);
	a.name = "a3";
	got = schedule(&w, &a, &batched);
	CHECK(!batched && got[0]);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"node_missing\"") == 1);
	teardown(&w);

	/* pod_nominated (1.37) */
	setup(&w, 37, NULL, false, false, nodes);
	a.name = "a1";
	CHECK_STR(schedule(&w, &a, &batched), "n1");
	a.name = "a2";
	a.nominated = "n3";
	CHECK_STR(schedule(&w, &a, &batched), "n3");
	CHECK(!batched);
	CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
		     "profile=\"default-scheduler\",reason=\"pod_nominated\"") == 1);
	a.nominated = NULL;
	teardown(&w);

	/* a single node: nothing left to batch */
	{
		static const struct node_def one[] = {{"n1", 5}, {NULL, 0}};

		setup(&w, 37, NULL, false, false, one);
		a.name = "a1";
		CHECK_STR(schedule(&w, &a, &batched), "n1");
		CHECK(metric(&w, "scheduler_batch_cache_flushed_total",
			     "profile=\"default-scheduler\",reason=\"empty_list\"") == 1);
		teardown(&w);
	}
}

/* The signature: equal for pods of one template (tolerations in another
 * order too), different when a signed part differs. */
static void test_signature(void)
{
	struct world w;
	struct pod_def a = {"x1", {"n1", "n2"}, "", false};
	struct pod_def b = {"x2", {"n1", "n2"}, "", false};
	struct pod_def c = {"x3", {"n2", "n1"}, "", false};
	struct pod_def d = {"x4", {"n1", "n2"}, "", false, NULL, false, 80};
	struct sx_pod *pa, *pb, *pc, *pd;
	struct sx_buf sa, sb;

	setup(&w, 35, NULL, true, false, NULL);
	sx_buf_init(&sa);
	sx_buf_init(&sb);
	pa = make_pod(&a, NULL);
	pb = make_pod(&b, NULL);
	pc = make_pod(&c, NULL);
	pd = make_pod(&d, NULL);
	CHECK(sx_batch_sign(w.batch[0], pa, &sa, false));
	CHECK(sx_batch_sign(w.batch[0], pb, &sb, false));
	CHECK(sa.len == sb.len && memcmp(sa.data, sb.data, sa.len) == 0);
	CHECK(sx_batch_sign(w.batch[0], pc, &sb, false));
	CHECK(sa.len != sb.len || memcmp(sa.data, sb.data, sa.len) != 0);
	CHECK(sx_batch_sign(w.batch[0], pd, &sb, false));
	CHECK(sa.len != sb.len || memcmp(sa.data, sb.data, sa.len) != 0);
	sx_pod_unref(pa);
	sx_pod_unref(pb);
	sx_pod_unref(pc);
	sx_pod_unref(pd);
	sx_buf_free(&sa);
	sx_buf_free(&sb);
	teardown(&w);
}

/* ---------- upstream's TestBatchBasic and TestBatchRescore ---------- */

/* runtime/batch_test.go (1.37): OpportunisticBatch driven directly, with
 * signatures given as bytes ("sig", "sig2"), a first pod "chosen" on
 * firstChosenNode with firstOtherNodes left (in that order), then a
 * second pod. Blocking pods are played by host port 80 (upstream's
 * BatchTestPlugin: one blocking pod per node); the profile is NodePorts
 * and NodeAffinity. Rows left out: the PodGroup cycle with
 * GenericWorkload on (schedext has no pod-group cycle) and the injected
 * PreScore/Score/Normalize errors (no plugin here can fail on demand). */
struct basic_row {
	const char *name;
	bool first_blocking;
	const char *first_sig;
	bool first_scheduled;
	const char *first_chosen;
	const char *first_others[3];
	int cycle; /* the second pod's cycle (upstream: 2, skipPod 3, sameCycle 1) */
	bool second_blocking;
	const char *second_nominated;
	const char *second_sig;
	const char *second_chosen;
	const char *expected_hint;
	const char *expected_state[3]; /* NULL: no state left */
};

static const struct basic_row basic_rows[] = {
	{"a second pod with the same signature gets a hint",
	 true,
	 "sig",
	 true,
	 "n3",
	 {"n1"},
	 2,
	 true,
	 NULL,
	 "sig",
	 "n1",
	 "n1"},
	{"a second pod with a different signature doesn't get a hint",
	 false,
	 "sig",
	 true,
	 "n3",
	 {"n1"},
	 2,
	 false,
	 NULL,
	 "sig2",
	 "n1",
	 ""},
	{"a second non-blocking pod with the same signature gets a hint",
	 false,
	 "sig",
	 true,
	 "n3",
	 {"n1"},
	 2,
	 false,
	 NULL,
	 "sig",
	 "n4",
	 "n1"},
	{"pod doesn't get hint if previous pod didn't scheduled",
	 true,
	 "sig",
	 false,
	 "n3",
	 {"n1"},
	 2,
	 true,
	 NULL,
	 "sig",
	 "n1",
	 ""},
	{"empty list", true, "sig", true, "n3", {NULL}, 2, true, NULL, "sig", "n4", ""},
	{"pod doesn't get hint because the previous pod is to a different profile",
	 true,
	 "sig",
	 true,
	 "n3",
	 {"n1"},
	 3,
	 true,
	 NULL,
	 "sig",
	 "n1",
	 ""},
	{"pod doesn't use batch from preceding pod when they are from the same cycle state, but "
	 "GenericWorkload is disabled",
	 true,
	 "sig",
	 true,
	 "n3",
	 {"n1"},
	 1,
	 true,
	 NULL,
	 "sig",
	 "n1",
	 ""},
	{"pod uses batch from preceding pod and leaves remaining batch to next pod",
	 true,
	 "sig",
	 true,
	 "n3",
	 {"n1", "n2"},
	 2,
	 true,
	 NULL,
	 "sig",
	 "n1",
	 "n1",
	 {"n2"}},
	{"a second pod with a nominated node does not get a hint",
	 true,
	 "sig",
	 true,
	 "n3",
	 {"n1"},
	 2,
	 true,
	 "n1",
	 "sig",
	 "n1",
	 ""},
};

static const char table_config[] =
	"{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
	"\"KubeSchedulerConfiguration\",\"profiles\":[{\"schedulerName\":\"default-scheduler\","
	"\"plugins\":{\"multiPoint\":{\"disabled\":[{\"name\":\"*\"}],\"enabled\":["
	"{\"name\":\"PrioritySort\"},{\"name\":\"NodePorts\"},{\"name\":\"NodeAffinity\"},"
	"{\"name\":\"DefaultBinder\"}]}}}]}";

static struct sx_pod *table_pod(const char *name, bool blocking, const char *nominated,
				const char *node, const char *prefer, int weight)
{
	struct pod_def d = {name, {NULL}, "", false};
	char buf[2048], aff[512] = "";
	struct sx_error err = {0};
	struct sx_pod *pod;
	cJSON *j;

	(void)d;
	if (prefer)
		snprintf(aff, sizeof(aff),
			 ",\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnored"
			 "DuringExecution\":[{\"weight\":%d,\"preference\":{\"matchFields\":[{"
			 "\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"%s\"]}]}}]}}",
			 weight, prefer);
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"nodeName\":\"%s\"%s,\"containers\":[{\"name\":\"c\",\"image\":\"x\"%"
		 "s}]},"
		 "\"status\":{\"nominatedNodeName\":\"%s\"}}",
		 name, name, node ? node : "", aff,
		 blocking ? ",\"ports\":[{\"containerPort\":80,\"hostPort\":80}]" : "",
		 nominated ? nominated : "");
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	return pod;
}

/* StoreScheduleResults as the cycle calls it: chosen, then the others in
 * the given order (descending totals keep it), raw scores raw[i]. */
static void table_store(struct sx_batch *b, const struct sx_snapshot *snap, const char *sig,
			const char *hint, const char *chosen, const char *const *others,
			const int64_t *raw, int64_t cycle, uint64_t *rng)
{
	struct sx_cycle_state cs = {.snap = snap};
	struct sx_cycle_result res = {0};
	uint32_t feasible[4];
	int64_t totals[4] = {0}, raws[4] = {0};
	struct sx_buf sb;
	uint32_t n = 0;

	sx_buf_init(&sb);
	sx_buf_put(&sb, sig, strlen(sig));
	feasible[n++] = (uint32_t)sx_snapshot_find(snap, sx_intern(chosen));
	for (int i = 0; others && i < 3 && others[i]; i++) {
		feasible[n] = (uint32_t)sx_snapshot_find(snap, sx_intern(others[i]));
		totals[n] = 100 - i;
		raws[n] = raw ? raw[i] : 0;
		n++;
	}
	res.state = &cs;
	res.selected = (int)feasible[0];
	res.nfeasible = n;
	res.feasible = feasible;
	res.totals = totals;
	res.raw = raws;
	sx_batch_store(b, &sb, hint ? sx_intern(hint) : SX_STR_EMPTY, &res, cycle, rng);
	sx_buf_free(&sb);
}

static sx_str table_hint(struct sx_batch *b, const struct sx_config *cfg,
			 const struct sx_snapshot *snap, const struct sx_pod *pod, const char *sig,
			 int64_t cycle)
{
	struct sx_cycle_state *cs = sx_cycle_state_new(snap);
	struct sx_buf sb;
	sx_str hint;

	sx_buf_init(&sb);
	sx_buf_put(&sb, sig, strlen(sig));
	sx_status_free(sx_run_pre_filter(cfg->profiles[0], cs, pod));
	hint = sx_batch_hint(b, pod, &sb, cs, cycle);
	sx_cycle_state_free(cfg->profiles[0], cs);
	sx_buf_free(&sb);
	return hint;
}

static struct sx_config *table_setup(struct sx_cache **cache, const char *const *names)
{
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_config *cfg;

	sx_intern_init();
	sx_features_init(&f, 37);
	cfg = sx_config_parse_for(table_config, strlen(table_config), &f, &err);
	if (!cfg)
		sx_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
	*cache = sx_cache_new();
	for (int i = 0; names[i]; i++) {
		struct node_def d = {names[i], 110};
		struct world w = {.cache = *cache};

		add_node(&w, &d);
	}
	return cfg;
}

static void test_upstream_batch_basic(void)
{
	static const char *const names[] = {"n1", "n2", "n3", "n4", NULL};

	for (size_t r = 0; r < sizeof(basic_rows) / sizeof(basic_rows[0]); r++) {
		const struct basic_row *t = &basic_rows[r];
		struct sx_cache *cache;
		struct sx_config *cfg = table_setup(&cache, names);
		struct sx_metrics *m = sx_metrics_new();
		struct sx_batch *b;
		struct sx_snapshot *snap;
		struct sx_pod *pod1 = table_pod("b-1", t->first_blocking, NULL, NULL, NULL, 0);
		struct sx_pod *bound, *pod2;
		struct sx_object obj = {SX_KIND_POD, NULL};
		sx_str hint, left[4];
		uint64_t rng = 7;
		uint32_t nleft;
		int want_left = 0;

		sx_fw_metrics_define(m, &cfg->features);
		b = sx_batch_new(cfg->profiles[0], m, false);
		snap = sx_cache_snapshot(cache);
		CHECK(table_hint(b, cfg, snap, pod1, t->first_sig, 1) == SX_STR_EMPTY);
		if (t->first_scheduled)
			table_store(b, snap, t->first_sig, NULL, t->first_chosen, t->first_others,
				    NULL, 1, &rng);
		sx_snapshot_unref(snap);
		/* the first pod runs on firstChosenNode */
		bound = table_pod("b-1", t->first_blocking, NULL, t->first_chosen, NULL, 0);
		obj.obj = bound;
		sx_cache_upsert(cache, &obj);
		snap = sx_cache_snapshot(cache);
		pod2 = table_pod("b-2", t->second_blocking, t->second_nominated, NULL, NULL, 0);
		hint = table_hint(b, cfg, snap, pod2, t->second_sig, t->cycle);
		if (strcmp(hint ? sx_str_get(hint) : "", t->expected_hint) != 0)
			sx_test_fail(__FILE__, __LINE__, "%s: hint '%s', expected '%s'", t->name,
				     hint ? sx_str_get(hint) : "", t->expected_hint);
		table_store(b, snap, t->second_sig, hint ? sx_str_get(hint) : NULL,
			    t->second_chosen, NULL, NULL, t->cycle, &rng);
		nleft = sx_batch_nodes(b, left, 4);
		while (want_left < 3 && t->expected_state[want_left])
			want_left++;
		if ((int)nleft != want_left)
			sx_test_fail(__FILE__, __LINE__, "%s: %u nodes left, expected %d", t->name,
				     nleft, want_left);
		for (int i = 0; i < want_left && i < (int)nleft; i++)
			CHECK_STR(sx_str_get(left[i]), t->expected_state[i]);
		sx_pod_unref(pod1);
		sx_pod_unref(pod2);
		sx_snapshot_unref(snap);
		sx_batch_free(b);
		sx_metrics_free(m);
		sx_config_free(cfg);
		sx_cache_free(cache);
	}
}

/* TestBatchRescore (1.37): the first pod chose n2 and left n1 with a
 * cached raw score of 50; the second pod (non-blocking, so n2 still fits)
 * scores n2 afresh (here NodeAffinity's preferred weight on n2: 100 or
 * 10), n2 rejoins the candidates and all are normalized again. */
static void test_upstream_batch_rescore(void)
{
	static const struct {
		const char *name;
		int score;
		bool chosen_missing;
		const char *hint;
		const char *left;
		const char *flush;
	} rows[] = {
		{"rescored node wins", 100, false, "n2", "n1", NULL},
		{"rescored node loses", 10, false, "n1", "n2", NULL},
		{"chosen node missing from lister gives no hint", 100, true, "", "n1",
		 "node_missing"},
	};
	static const char *const all[] = {"n1", "n2", NULL};
	static const char *const only_n1[] = {"n1", NULL};
	static const char *const cached[] = {"n1", NULL};
	static const int64_t n1_raw[] = {50};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct sx_cache *cache;
		struct sx_config *cfg = table_setup(&cache, rows[r].chosen_missing ? only_n1 : all);
		struct sx_metrics *m = sx_metrics_new();
		struct sx_batch *b;
		struct sx_snapshot *snap;
		struct sx_pod *pod2;
		sx_str hint, left[4];
		uint64_t rng = 7;
		char labels[128];

		sx_fw_metrics_define(m, &cfg->features);
		b = sx_batch_new(cfg->profiles[0], m, false);
		if (rows[r].chosen_missing) { /* n2 only in the first snapshot */
			struct node_def d = {"n2", 110};
			struct world w = {.cache = cache};

			add_node(&w, &d);
		}
		snap = sx_cache_snapshot(cache);
		table_store(b, snap, "sig", NULL, "n2", cached, n1_raw, 1, &rng);
		sx_snapshot_unref(snap);
		if (rows[r].chosen_missing)
			sx_cache_delete(cache, SX_KIND_NODE, SX_STR_EMPTY, "n2");
		snap = sx_cache_snapshot(cache);
		pod2 = table_pod("a-2", false, NULL, NULL, "n2", rows[r].score);
		hint = table_hint(b, cfg, snap, pod2, "sig", 2);
		if (strcmp(hint ? sx_str_get(hint) : "", rows[r].hint) != 0)
			sx_test_fail(__FILE__, __LINE__, "%s: hint '%s', expected '%s'",
				     rows[r].name, hint ? sx_str_get(hint) : "", rows[r].hint);
		CHECK_INT(sx_batch_nodes(b, left, 4), 1);
		CHECK_STR(sx_str_get(left[0]), rows[r].left);
		CHECK(sx_metrics_value(m, "scheduler_batch_rescore_attempts_total",
				       "profile=\"default-scheduler\"") == (rows[r].flush ? 0 : 1));
		if (rows[r].flush) {
			snprintf(labels, sizeof(labels),
				 "profile=\"default-scheduler\",reason=\"%s\"", rows[r].flush);
			CHECK(sx_metrics_value(m, "scheduler_batch_cache_flushed_total", labels) ==
			      1);
		}
		sx_pod_unref(pod2);
		sx_snapshot_unref(snap);
		sx_batch_free(b);
		sx_metrics_free(m);
		sx_config_free(cfg);
		sx_cache_free(cache);
	}
}

SX_TESTS(SX_TEST(test_upstream_batch_basic), SX_TEST(test_upstream_batch_rescore),
	 SX_TEST(test_upstream_scenarios_135), SX_TEST(test_no_batching_missing_sign),
	 SX_TEST(test_metrics_135), SX_TEST(test_rescore_137),
	 SX_TEST(test_default_profile_unsignable), SX_TEST(test_flush_reasons),
	 SX_TEST(test_signature))
