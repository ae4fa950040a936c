/* Topology placement of the pod-group cycle (TopologyAwareWorkloadScheduling):
 * src/framework/podgroup.c sx_pod_group_placement_algorithm with the
 * TopologyPlacementGenerator and PodGroupPodsCount plugins enabled through
 * multiPoint, as upstream schedule_one_podgroup.go
 * podGroupSchedulingPlacementAlgorithm runs them: one placement per value
 * of the PodGroup's schedulingConstraints.topology key, members restricted
 * to the placement's nodes, the best scored feasible placement chosen.
 * Members are filtered and scored by the real cycle; GangScheduling's
 * PlacementFeasible enforces minCount. The merge of several
 * PlacementGenerate plugins' placements (sx_pg_placements_fold) runs
 * upstream's TestRunPlacementGeneratePluginsMerge rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "harness.h"
#include "plugins/plugin_util.h"
#include "schedext/binder.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/podgroup.h"
#include "schedext/registry.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static const char yaml[] =
	HEAD "profiles:\n"
	     "- schedulerName: default-scheduler\n"
	     "  plugins:\n"
	     "    multiPoint:\n"
	     "      enabled: [{name: TopologyPlacementGenerator}, {name: PodGroupPodsCount}]\n";

static int schedule(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
		    struct sx_snapshot *snap, struct sx_cycle_result *res)
{
	struct sx_cycle_opts opts = {.mode = SX_CYCLE_FULL, .percentage = 100, .snap = snap};

	(void)ctx;
	memset(res, 0, sizeof(*res));
	res->selected = -1;
	return sx_schedule(prof, pod, &opts, res);
}

static void add_node(struct sx_cache *cache, const char *name, const char *zone, int cpu)
{
	char buf[400];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":\"%s\","
		 "\"topology.kubernetes.io/zone\":\"%s\"}},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"%d\",\"memory\":\"8Gi\",\"pods\":\"110\"}}"
		 "}",
		 name, name, zone, cpu);
	tu_add(cache, "Node", buf);
}

/* A member asking 2 cpu; nominated to node unless NULL. */
static struct sx_pod *member_nominated(const char *name, const char *node)
{
	char buf[500];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"pg\"},"
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}"
		 "%s%s%s}",
		 name, name, node ? ",\"status\":{\"nominatedNodeName\":\"" : "", node ? node : "",
		 node ? "\"}" : "");
	return tu_pod(buf);
}

static struct sx_pod_group *pod_group(int min_count, const char *key)
{
	char buf[400];
	cJSON *j;
	struct sx_error err = {0};
	struct sx_pod_group *pg;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
		 "\"metadata\":{\"name\":\"pg\",\"namespace\":\"default\"},"
		 "\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":%d}}%s%s%s}}",
		 min_count, key ? ",\"schedulingConstraints\":{\"topology\":[{\"key\":\"" : "",
		 key ? key : "", key ? "\"}]}" : "");
	j = cJSON_Parse(buf);
	CHECK(j != NULL);
	pg = sx_decode_pod_group(j, &err);
	cJSON_Delete(j);
	CHECK(pg != NULL);
	return pg;
}

struct run {
	struct sx_status *group;
	char nodes[3][16]; /* each member's node, "" when not placed */
};

/* Runs the placement algorithm for 3 members of a gang on the cache's
 * nodes, the first nominated to nominated (unless NULL), the tie-break
 * with rng; nothing stays assumed. */
static struct run run_with(const struct sx_config *cfg, struct sx_cache *cache, int min_count,
			   const char *key, uint64_t *rng, const char *nominated)
{
	struct sx_binder binder = {.cache = cache};
	struct sx_pod_group *pg = pod_group(min_count, key);
	struct sx_pg_member m[3] = {{0}};
	const char *names[3] = {"p1", "p2", "p3"};
	struct sx_pg_algorithm a = {
		.prof = sx_config_profile(cfg, "default-scheduler"),
		.pg = pg,
		.cache = cache,
		.binder = &binder,
		.schedule = schedule,
		.rng = rng,
	};
	struct run r = {0};

	for (int i = 0; i < 3; i++)
		m[i].pod = member_nominated(names[i], i == 0 ? nominated : NULL);
	r.group = sx_pod_group_placement_algorithm(&a, m, 3);
	for (int i = 0; i < 3; i++) {
		sx_str node = SX_STR_EMPTY;
		bool assumed = false;
		const struct sx_pod *cur;

		if (m[i].scheduled)
			snprintf(r.nodes[i], sizeof(r.nodes[i]), "%s", sx_str_get(m[i].node));
		cur = sx_cache_get_pod(cache, m[i].pod->meta.ns, names[i], &node, &assumed);
		CHECK(!cur || (!assumed && node == SX_STR_EMPTY));
		sx_pod_unref(cur);
	}
	sx_pg_members_free(m, 3);
	for (int i = 0; i < 3; i++)
		sx_pod_unref(m[i].pod);
	sx_pod_group_unref(pg);
	return r;
}

static struct run run(const struct sx_config *cfg, struct sx_cache *cache, int min_count,
		      const char *key)
{
	return run_with(cfg, cache, min_count, key, NULL, NULL);
}

static const char *message(const struct sx_status *st, char *buf, size_t len)
{
	return sx_status_message(st, buf, len);
}

static struct sx_config *config(void)
{
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_config *cfg;

	sx_intern_init();
	sx_features_init(&f, 37);
	CHECK(sx_features_set(&f,
			      "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption="
			      "true,TopologyAwareWorkloadScheduling=true",
			      &err) == 0);
	cfg = sx_config_parse_for(yaml, strlen(yaml), &f, &err);
	if (!cfg)
		sx_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
	return cfg;
}

/* The placement points of a profile: the generator, then NodeResourcesFit
 * (default multiPoint, weight 1) and PodGroupPodsCount (weight 1). */
static void check_placement_points(const struct sx_profile *p)
{
	CHECK_INT(p->ngroup[SX_GPT_PLACEMENT_GENERATE], 1);
	CHECK_STR(p->group[SX_GPT_PLACEMENT_GENERATE][0].name, "TopologyPlacementGenerator");
	CHECK_INT(p->ngroup[SX_GPT_PLACEMENT_SCORE], 2);
	CHECK_STR(p->group[SX_GPT_PLACEMENT_SCORE][0].name, "NodeResourcesFit");
	CHECK_INT(p->group[SX_GPT_PLACEMENT_SCORE][0].weight, 1);
	CHECK_STR(p->group[SX_GPT_PLACEMENT_SCORE][1].name, "PodGroupPodsCount");
	CHECK_INT(p->group[SX_GPT_PLACEMENT_SCORE][1].weight, 1);
}

/* multiPoint enables the placement plugins at their points; with
 * TopologyAwareWorkloadScheduling the default profile has them already
 * (upstream default_plugins.go applyFeatureGates), without it none. */
static void test_config(void)
{
	struct sx_config *cfg = config();
	struct sx_features f;
	struct sx_error err = {0};

	check_placement_points(sx_config_profile(cfg, "default-scheduler"));
	sx_config_free(cfg);
	sx_features_init(&f, 37);
	CHECK(sx_features_set(&f, "GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
			      &err) == 0);
	cfg = sx_config_default_for(&f, &err);
	CHECK(cfg != NULL);
	check_placement_points(sx_config_profile(cfg, "default-scheduler"));
	sx_config_free(cfg);
	sx_features_init(&f, 37);
	CHECK(sx_features_set(&f, "GenericWorkload=true", &err) == 0);
	cfg = sx_config_default_for(&f, &err);
	CHECK(cfg != NULL);
	CHECK_INT(sx_config_profile(cfg, "default-scheduler")->ngroup[SX_GPT_PLACEMENT_GENERATE],
		  0);
	CHECK_INT(sx_config_profile(cfg, "default-scheduler")->ngroup[SX_GPT_PLACEMENT_SCORE], 1);
	sx_config_free(cfg);
}

/* zone-a: a1 4 cpu (two members); zone-b: b1 2 cpu (one member). */
static void test_split_and_infeasible(void)
{
	struct sx_config *cfg = config();
	struct sx_cache *cache = sx_cache_new();
	struct run r;
	char buf[512];

	add_node(cache, "a1", "zone-a", 4);
	add_node(cache, "b1", "zone-b", 2);
	/* Without the constraint the gang is split across the zones. */
	r = run(cfg, cache, 3, NULL);
	CHECK(sx_status_is_success(r.group));
	CHECK_STR(r.nodes[0], "a1");
	CHECK_STR(r.nodes[1], "a1");
	CHECK_STR(r.nodes[2], "b1");
	sx_status_free(r.group);
	/* With it, no zone holds three members. */
	r = run(cfg, cache, 3, "topology.kubernetes.io/zone");
	CHECK_INT(sx_status_code(r.group), SX_UNSCHEDULABLE);
	CHECK_STR(message(r.group, buf, sizeof(buf)),
		  "0/2 placements are available, first placement status: minCount (3) "
		  "cannot be satisfied: 2 scheduled, 0 remaining");
	CHECK_STR(r.group->plugin ? r.group->plugin : "", "GangScheduling");
	sx_status_free(r.group);
	/* A key no node carries: TopologyPlacementGenerator's words. */
	r = run(cfg, cache, 3, "example.com/rack");
	CHECK_INT(sx_status_code(r.group), SX_UNSCHEDULABLE);
	CHECK_STR(message(r.group, buf, sizeof(buf)),
		  "no nodes found with topology label 'example.com/rack'");
	CHECK_STR(r.group->plugin ? r.group->plugin : "", "TopologyPlacementGenerator");
	sx_status_free(r.group);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* A gang that fits only in zone-b is placed there whole. */
static void test_fits_one_zone(void)
{
	struct sx_config *cfg = config();
	struct sx_cache *cache = sx_cache_new();
	struct run r;

	add_node(cache, "a1", "zone-a", 4);
	add_node(cache, "b1", "zone-b", 2);
	add_node(cache, "b2", "zone-b", 4);
	r = run(cfg, cache, 3, "topology.kubernetes.io/zone");
	CHECK(sx_status_is_success(r.group));
	for (int i = 0; i < 3; i++)
		CHECK(strcmp(r.nodes[i], "b1") == 0 || strcmp(r.nodes[i], "b2") == 0);
	sx_status_free(r.group);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* minCount 2: both zones are feasible; PodGroupPodsCount prefers zone-b,
 * where all three members fit, over zone-a (two). */
static void test_best_scored(void)
{
	struct sx_config *cfg = config();
	struct sx_cache *cache = sx_cache_new();
	struct run r;

	add_node(cache, "a1", "zone-a", 4);
	add_node(cache, "b1", "zone-b", 2);
	add_node(cache, "b2", "zone-b", 4);
	r = run(cfg, cache, 2, "topology.kubernetes.io/zone");
	CHECK(sx_status_is_success(r.group));
	for (int i = 0; i < 3; i++)
		CHECK(strcmp(r.nodes[i], "b1") == 0 || strcmp(r.nodes[i], "b2") == 0);
	sx_status_free(r.group);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* Two zones where the gang scores the same: findBestPlacement picks one
 * at random (upstream's Randomizer per score); over 64 seeds both zones
 * are chosen, and one seed always gives the same zone. */
static void test_tie_break(void)
{
	struct sx_config *cfg = config();
	struct sx_cache *cache = sx_cache_new();
	int chosen[2] = {0, 0};

	add_node(cache, "a1", "zone-a", 6);
	add_node(cache, "b1", "zone-b", 6);
	for (uint64_t seed = 1; seed <= 64; seed++) {
		uint64_t rng = seed * 0x9E3779B97F4A7C15ull, again = rng;
		struct run r = run_with(cfg, cache, 3, "topology.kubernetes.io/zone", &rng, NULL);
		struct run r2 =
			run_with(cfg, cache, 3, "topology.kubernetes.io/zone", &again, NULL);

		CHECK(sx_status_is_success(r.group));
		CHECK(strcmp(r.nodes[0], r.nodes[1]) == 0 && strcmp(r.nodes[1], r.nodes[2]) == 0);
		CHECK_STR(r.nodes[0], r2.nodes[0]);
		chosen[strcmp(r.nodes[0], "a1") == 0 ? 0 : 1]++;
		sx_status_free(r.group);
		sx_status_free(r2.group);
	}
	CHECK(chosen[0] > 0 && chosen[1] > 0);
	CHECK_INT(chosen[0] + chosen[1], 64);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* nominatedPlacement: zone-a holds the whole gang (scored higher), zone-b
 * two members; with minCount 2 a member nominated to b1 takes the gang to
 * zone-b, tried first and used alone. With minCount 3 zone-b is infeasible
 * and the gang goes to zone-a; when no zone holds it, the nominated
 * placement's status is the one reported. */
static void test_nominated_first(void)
{
	struct sx_config *cfg = config();
	struct sx_cache *cache = sx_cache_new();
	struct run r;
	char buf[512];

	add_node(cache, "a1", "zone-a", 6);
	add_node(cache, "b1", "zone-b", 4);
	r = run_with(cfg, cache, 2, "topology.kubernetes.io/zone", NULL, NULL);
	CHECK(sx_status_is_success(r.group));
	CHECK_STR(r.nodes[0], "a1");
	CHECK_STR(r.nodes[2], "a1");
	sx_status_free(r.group);
	r = run_with(cfg, cache, 2, "topology.kubernetes.io/zone", NULL, "b1");
	CHECK(sx_status_is_success(r.group));
	CHECK_STR(r.nodes[0], "b1");
	CHECK_STR(r.nodes[1], "b1");
	CHECK_STR(r.nodes[2], "");
	sx_status_free(r.group);
	r = run_with(cfg, cache, 3, "topology.kubernetes.io/zone", NULL, "b1");
	CHECK(sx_status_is_success(r.group));
	CHECK_STR(r.nodes[0], "a1");
	sx_status_free(r.group);
	sx_cache_free(cache);
	cache = sx_cache_new();
	add_node(cache, "a1", "zone-a", 2);
	add_node(cache, "b1", "zone-b", 4);
	r = run_with(cfg, cache, 3, "topology.kubernetes.io/zone", NULL, NULL);
	CHECK_STR(message(r.group, buf, sizeof(buf)),
		  "0/2 placements are available, first placement status: minCount (3) "
		  "cannot be satisfied: 1 scheduled, 1 remaining");
	sx_status_free(r.group);
	r = run_with(cfg, cache, 3, "topology.kubernetes.io/zone", NULL, "b1");
	CHECK_STR(message(r.group, buf, sizeof(buf)),
		  "0/2 placements are available, first placement status: minCount (3) "
		  "cannot be satisfied: 2 scheduled, 0 remaining");
	sx_status_free(r.group);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* schedule_one_podgroup_test.go TestNominatedPlacement: its first three
 * rows; the last two (several placements hold nominated nodes) are
 * derived from algorithm_podgroup.go nominatedPlacement of 1.37, which
 * then tries none first and scores every placement (the test's older
 * version preferred the one holding the most). */
static void test_nominated_placement_rows(void)
{
	static const char *const rack1[] = {"node-1"}, *const rack2[] = {"node-2"},
				 *const rack12[] = {"node-1", "node-2"},
				 *const rack23[] = {"node-2", "node-3"};
	static const struct {
		const char *name;
		const char *const *p[2];
		uint32_t np[2];
		const char *nominated[5];
		uint32_t n;
		int want;
	} rows[] = {
		{"no nominations returns nil", {rack1, rack2}, {1, 1}, {"", ""}, 2, -1},
		{"nominated node not in any placement returns nil",
		 {rack1, rack2},
		 {1, 1},
		 {"node-3"},
		 1,
		 -1},
		{"single placement holds the nominated node",
		 {rack1, rack2},
		 {1, 1},
		 {"node-2", ""},
		 2,
		 1},
		{"derived: overlapping placements holding the nominated nodes return nil",
		 {rack1, rack12},
		 {1, 2},
		 {"node-1", "node-2"},
		 2,
		 -1},
		{"derived: nominated nodes in two placements return nil",
		 {rack1, rack23},
		 {1, 2},
		 {"node-1", "node-1", "node-1", "node-2", "node-3"},
		 5,
		 -1},
	};

	sx_intern_init();
	for (size_t r = 0; r < SX_ARRAY_SIZE(rows); r++) {
		struct sx_pg_placement v[2];
		struct sx_pg_placements pl = {.n = 2, .v = v};
		struct sx_pg_member m[5] = {{0}};
		sx_str nodes[2][2];
		char name[8];

		fprintf(stderr, "case: %s\n", rows[r].name);
		for (int i = 0; i < 2; i++) {
			for (uint32_t k = 0; k < rows[r].np[i]; k++)
				nodes[i][k] = sx_intern(rows[r].p[i][k]);
			v[i] = (struct sx_pg_placement){
				.name = "p", .nnodes = rows[r].np[i], .nodes = nodes[i]};
		}
		for (uint32_t j = 0; j < rows[r].n; j++) {
			snprintf(name, sizeof(name), "%c", 'a' + (int)j);
			m[j].pod = member_nominated(
				name, *rows[r].nominated[j] ? rows[r].nominated[j] : NULL);
		}
		CHECK_INT(sx_pg_nominated_placement(&pl, m, rows[r].n), rows[r].want);
		for (uint32_t j = 0; j < rows[r].n; j++)
			sx_pod_unref(m[j].pod);
	}
}

/* podgroup_pods_count_test.go TestScorePlacement: the members scheduled
 * before (assigned and assumed) plus the 2 proposed. */
static void test_pods_count_score(void)
{
	const struct sx_plugin *pl = sx_plugins[sx_plugin_index("PodGroupPodsCount")];
	static const struct {
		const char *name;
		int32_t before;
		int64_t want;
	} rows[] = {
		{"existing assigned and assumed pods", 3, 5},
		{"no assumed pods", 1, 3},
		{"no assigned pods", 1, 3},
		{"no assigned pods, no assumed pods", 0, 2},
	};
	const sx_str nodes[2] = {sx_intern("node1"), sx_intern("node2")};

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		struct sx_pg_assignments a = {
			.nproposed = 2, .nodes = nodes, .scheduled_before = rows[i].before};
		int64_t score = -1;

		fprintf(stderr, "case: %s\n", rows[i].name);
		CHECK(pl->placement_score(NULL, NULL, &a, &score) == NULL);
		CHECK_INT(score, rows[i].want);
	}
}

/* podgroup_pods_count_test.go TestNormalizePlacementScore. */
static void test_pods_count_normalize(void)
{
	const struct sx_plugin *pl = sx_plugins[sx_plugin_index("PodGroupPodsCount")];
	static const struct {
		const char *name;
		uint32_t n;
		int64_t in[4], want[4];
		const char *err;
	} rows[] = {
		{"distinct scores", 3, {10, 50, 110}, {9, 45, 100}, NULL},
		{"equal scores", 2, {50, 50}, {100, 100}, NULL},
		{"single score", 1, {50}, {100}, NULL},
		{"some minimal score that is far from a group of scores located closely",
		 4,
		 {11, 100, 101, 102},
		 {10, 98, 99, 100},
		 NULL},
		{"zero scores",
		 2,
		 {0, 0},
		 {0},
		 "no pods from pod group are assigned to any of the candidate placements"},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		int64_t scores[4];
		struct sx_status *st;
		char buf[256];

		fprintf(stderr, "case: %s\n", rows[i].name);
		memcpy(scores, rows[i].in, sizeof(scores));
		st = pl->normalize_placement_score(NULL, NULL, scores, rows[i].n);
		if (rows[i].err) {
			CHECK_INT(sx_status_code(st), SX_ERROR);
			CHECK_STR(sx_status_message(st, buf, sizeof(buf)), rows[i].err);
			sx_status_free(st);
			continue;
		}
		CHECK(st == NULL);
		for (uint32_t k = 0; k < rows[i].n; k++)
			CHECK_INT(scores[k], rows[i].want[k]);
	}
}

/* upstream framework/runtime/framework_placement_test.go
 * TestRunPlacementGeneratePluginsMerge: each plugin's placements as
 * "name:n1,n2" strings ("" ends a plugin's list; a plugin with none is
 * upstream's returnParent), folded in order by sx_pg_placements_fold;
 * want: the merged placements (none with an Unschedulable status, or when
 * every plugin is unconstrained: upstream's input placement, here the
 * caller's all-nodes run). A missing third plugin runs as unconstrained. */
struct merge_row {
	const char *name;
	const char *plugins[3][3];
	int code;
	const char *want[3];
};

static void placements_of(const char *const *spec, struct sx_pg_placements *out)
{
	for (; *spec; spec++) {
		const char *colon = strchr(*spec, ':');
		struct sx_pg_placement *p;
		char nodes[64];

		out->v = realloc(out->v, sizeof(*out->v) * (out->n + 1));
		p = &out->v[out->n++];
		*p = (struct sx_pg_placement){.name = strndup(*spec, (size_t)(colon - *spec)),
					      .nodes = malloc(sizeof(sx_str) * 4)};
		snprintf(nodes, sizeof(nodes), "%s", colon + 1);
		for (char *t = strtok(nodes, ","); t; t = strtok(NULL, ","))
			p->nodes[p->nnodes++] = sx_intern(t);
	}
}

static void describe(const struct sx_pg_placement *p, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "%s:", p->name);

	for (uint32_t i = 0; i < p->nnodes && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
				       sx_str_get(p->nodes[i]));
}

static void test_generate_merge(void)
{
	static const struct merge_row rows[] = {
		{"two single-placement plugins intersect",
		 {{"a:n1,n2,n3"}, {"b:n2,n3,n4"}},
		 SX_SUCCESS,
		 {"a/b:n2,n3"}},
		{"cross product drops empty intersections",
		 {{"a1:n1,n2", "a2:n3,n4"}, {"b1:n2,n3"}},
		 SX_SUCCESS,
		 {"a1/b1:n2", "a2/b1:n3"}},
		{"three plugins fold-merge",
		 {{"a:n1,n2,n3"}, {"b:n2,n3,n4"}, {"c:n3,n4"}},
		 SX_SUCCESS,
		 {"a/b/c:n3"}},
		{"no overlap is unschedulable", {{"a:n1"}, {"b:n2"}}, SX_UNSCHEDULABLE, {NULL}},
		{"unconstrained plugin is skipped", {{NULL}, {"b:n2,n3"}}, SX_SUCCESS, {"b:n2,n3"}},
		{"all unconstrained returns input placement", {{NULL}, {NULL}}, SX_SUCCESS, {NULL}},
		{"same placement name from different plugins succeeds",
		 {{"dup:n1,n2"}, {"dup:n2,n3"}},
		 SX_SUCCESS,
		 {"dup/dup:n2"}},
		{"empty and slash-containing placement names succeed",
		 {{"zone-a/rack-1:n1,n2"}, {":n2,n3"}},
		 SX_SUCCESS,
		 {"zone-a/rack-1/:n2"}},
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sx_pg_placements acc = {0};
		struct sx_status *st = NULL;
		bool constrained = false;
		uint32_t k = 0;

		fprintf(stderr, "case: %s\n", rows[i].name);
		for (int p = 0; p < 3 && !st; p++) {
			struct sx_pg_placements cur = {0};

			placements_of(rows[i].plugins[p], &cur);
			st = sx_pg_placements_fold(&acc, &constrained, &cur);
			sx_pg_placements_free(&cur);
		}
		CHECK_INT(sx_status_code(st), rows[i].code);
		if (st)
			CHECK_STR(sx_status_message(st, buf, sizeof(buf)),
				  "no placement is common to the PlacementGenerate plugins");
		for (; k < acc.n; k++) {
			describe(&acc.v[k], buf, sizeof(buf));
			CHECK_STR(buf, rows[i].want[k] ? rows[i].want[k] : "(none)");
		}
		CHECK(rows[i].code != SX_SUCCESS || k == 3 || rows[i].want[k] == NULL);
		sx_status_free(st);
		sx_pg_placements_free(&acc);
	}
}

SX_TESTS(SX_TEST(test_config), SX_TEST(test_pods_count_score), SX_TEST(test_pods_count_normalize),
	 SX_TEST(test_split_and_infeasible), SX_TEST(test_fits_one_zone), SX_TEST(test_best_scored),
	 SX_TEST(test_tie_break), SX_TEST(test_nominated_first),
	 SX_TEST(test_nominated_placement_rows), SX_TEST(test_generate_merge))
