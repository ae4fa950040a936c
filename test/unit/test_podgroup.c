/* The pod-group scheduling algorithm (src/framework/podgroup.c):
 * upstream's algorithm_podgroup_test.go TestPodGroupSchedulingAlgorithm
 * transcribed (the rows without placements: a scripted PlacementFeasible
 * and per-pod filter outcomes, expected group code and which pods were
 * evaluated with which code), plus what the caller sees of the cache: every
 * tentative placement undone, success or not (derived from
 * RunRootSchedulingAlgorithm's revert). Members fit on node1 through the
 * real cycle; a scripted rejection or error stands for the fake Filter. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "plugins/plugin_util.h"
#include "schedext/binder.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/podgroup.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

enum { S = 1, U, UU, E, W }; /* Success, Unschedulable, ...AndUnresolvable, Error, Wait */

struct algo_case {
	const char *name;
	int filter[3];	  /* p1..p3: S, U, UU or E */
	int feasible[5];  /* scripted PlacementFeasible codes, 0 = end (then Success) */
	int want_group;	  /* S, U or E */
	int want_pods[3]; /* 0 = not evaluated */
};

static const struct algo_case cases[] = {
	{"All pods feasible", {S, S, S}, {0}, S, {S, S, S}},
	{"All pods feasible, podGroup already meeting quorum before any pod is evaluated",
	 {S, S, S},
	 {S, S, S, S},
	 S,
	 {S, S, S}},
	{"All pods feasible, podGroup schedulable with 3 schedulable pods",
	 {S, S, S},
	 {W, W, W, S},
	 S,
	 {S, S, S}},
	{"All pods feasible, podGroup waiting", {S, S, S}, {W, W, W, W}, U, {S, S, S}},
	{"All pods feasible, podGroup unschedulable", {S, S, S}, {W, U}, U, {S, 0, 0}},
	{"All pods feasible, podGroup unschedulable with 2 pods",
	 {S, S, S},
	 {W, W, U},
	 U,
	 {S, S, 0}},
	{"PodGroup schedulable with 2 schedulable pods", {U, S, S}, {W, W, W, S}, S, {U, S, S}},
	{"All pods unschedulable", {UU, U, U}, {W, S, S, S}, U, {U, U, U}},
	{"Any filter returned Error", {S, E, S}, {0}, E, {S, E, 0}},
	{"Any placementFeasible returned Error", {S, S, S}, {W, S, E}, E, {S, S, 0}},
	{"First placementFeasible call returned Unschedulable", {S, S, S}, {U}, U, {0, 0, 0}},
	{"First placementFeasible call returned Error", {S, S, S}, {E}, E, {0, 0, 0}},
};

/* The group's message per row (derived, upstream's rows compare codes):
 * algorithm_podgroup.go podGroupPotentiallyFeasible (a podGroupFitError
 * reads as PlacementFeasible's words, a Wait's too when the members run
 * out) and RunRootSchedulingAlgorithm ("no pods were schedulable"). */
static const char *const want_msg[SX_ARRAY_SIZE(cases)] = {
	"",
	"",
	"",
	"scripted 4",
	"scripted 2",
	"scripted 3",
	"",
	"no pods were schedulable",
	"failed to schedule other pod from a pod group: fake filter error",
	"failed to evaluate placement feasibility: scripted 3",
	"scripted 1",
	"failed to evaluate placement feasibility: scripted 1",
};

struct fixture {
	const struct algo_case *tc;
	unsigned calls;
};

static int code_of(int c)
{
	switch (c) {
	case S:
		return SX_SUCCESS;
	case U:
		return SX_UNSCHEDULABLE;
	case UU:
		return SX_UNSCHEDULABLE_AND_UNRESOLVABLE;
	case W:
		return SX_WAIT;
	default:
		return SX_ERROR;
	}
}

static struct sx_status *scripted(void *ctx, const struct sx_pod_group *pg,
				  struct sx_placement_progress p)
{
	struct fixture *f = ctx;
	int c = f->calls < 5 ? f->tc->feasible[f->calls] : 0;

	f->calls++;
	if (c == 0 || c == S)
		return NULL;
	return sx_status_new(code_of(c), "scripted %d", (int)f->calls);
}

static int schedule(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
		    struct sx_snapshot *snap, struct sx_cycle_result *res)
{
	struct fixture *f = ctx;
	int i = pod->meta.name[1] - '1', want = f->tc->filter[i];
	struct sx_cycle_opts opts = {.mode = SX_CYCLE_FULL, .percentage = 100, .snap = snap};

	memset(res, 0, sizeof(*res));
	res->selected = -1;
	if (want == E) {
		res->error = sx_status_new(SX_ERROR, "fake filter error");
		return 0;
	}
	if (want != S) {
		res->message = strdup("0/1 nodes are available: 1 fake.");
		return 0;
	}
	return sx_schedule(prof, pod, &opts, res);
}

static const char node1[] =
	"{\"metadata\":{\"name\":\"node1\",\"labels\":{\"kubernetes.io/hostname\":\"node1\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}";

static struct sx_pod *member(const char *name)
{
	char buf[400];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"pg\"},"
		 "\"containers\":[{\"name\":\"c\"}]}}",
		 name, name);
	return tu_pod(buf);
}

static void test_algorithm(void)
{
	struct sx_features feat;
	struct sx_error err = {0};
	struct sx_config *cfg;
	struct sx_cache *cache;
	struct sx_binder binder = {0};
	struct sx_pod_group pg = {.spec = {.policy = SX_GROUP_POLICY_GANG, .min_count = 3}};

	sx_intern_init();
	sx_features_init(&feat, SX_RELEASE_DEFAULT);
	CHECK(sx_features_set(
		      &feat,
		      "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true",
		      &err) == 0);
	cfg = sx_config_default_for(&feat, &err);
	CHECK(cfg != NULL);
	cache = sx_cache_new();
	binder.cache = cache;
	tu_add(cache, "Node", node1);
	for (size_t c = 0; c < SX_ARRAY_SIZE(cases); c++) {
		const struct algo_case *tc = &cases[c];
		struct fixture f = {tc, 0};
		struct sx_pg_member m[3] = {{0}};
		const char *names[3] = {"p1", "p2", "p3"};
		struct sx_pg_algorithm a = {
			.prof = sx_config_profile(cfg, "default-scheduler"),
			.pg = &pg,
			.cache = cache,
			.binder = &binder,
			.schedule = schedule,
			.ctx = &f,
			.feasible = scripted,
		};
		struct sx_status *group;
		char msg[512];

		fprintf(stderr, "case: %s\n", tc->name);
		for (int i = 0; i < 3; i++)
			m[i].pod = member(names[i]);
		group = sx_pod_group_algorithm(&a, m, 3);
		CHECK_INT(sx_status_code(group), code_of(tc->want_group));
		CHECK_STR(sx_status_message(group, msg, sizeof(msg)), want_msg[c]);
		for (int i = 0; i < 3; i++) {
			sx_str node = SX_STR_EMPTY;
			bool assumed = false;
			const struct sx_pod *cur;

			CHECK_INT(m[i].evaluated, tc->want_pods[i] != 0);
			if (tc->want_pods[i]) {
				int want = tc->want_pods[i] == UU ? U : tc->want_pods[i];

				CHECK_INT(sx_status_code(m[i].status), code_of(want));
				CHECK_INT(m[i].scheduled, want == S);
				if (want == S)
					CHECK_STR(sx_str_get(m[i].node), "node1");
			}
			/* Nothing stays assumed. */
			cur = sx_cache_get_pod(cache, m[i].pod->meta.ns, names[i], &node, &assumed);
			CHECK(!cur || (!assumed && node == SX_STR_EMPTY));
			sx_pod_unref(cur);
		}
		sx_status_free(group);
		sx_pg_members_free(m, 3);
		for (int i = 0; i < 3; i++)
			sx_pod_unref(m[i].pod);
	}
	sx_cache_free(cache);
	sx_config_free(cfg);
}

SX_TESTS(SX_TEST(test_algorithm))
