/* Group preemption (src/framework/podgroup_preemption.c, DefaultPreemption's
 * PodGroupPostFilter): upstream's podgrouppreemption_test.go
 * TestPodGroupEvaluator_Preempt_Victims transcribed, the rows whose outcome
 * does not depend on where a scorer puts a member. Upstream's mock Filter
 * gives each node a capacity in pods of size 1; here the node's allocatable
 * pods is that capacity and NodeResourcesFit ("Too many pods") is the
 * filter, a member goes to the first node (by name) that passes, as
 * upstream's mock framework without scorers does, and the preemptor is a
 * gang of all its members (GangScheduling's PlacementFeasible). Start
 * times are upstream's seconds, counted from 2026 (a zero start time reads
 * as unset here). Then cases derived from
 * PodGroupEvaluator.Preempt and DefaultPreemption.PodGroupPostFilter for
 * the words a user sees (read in podgrouppreemption.go and
 * default_preemption.go): not eligible, no victims, topology constraints,
 * the plugin's "pod group preemption: " prefix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "plugins/plugin_util.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/podgroup.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

#define LOW  0
#define MID  100
#define HIGH 1000

struct pcase {
	const char *name;
	const char *nodes[5];	    /* "name:capacity" */
	const char *pods[6];	    /* "name node priority group start-seconds [pdb|term]" */
	const char *groups[4];	    /* "name priority single|all" */
	bool pdb;		    /* app=foo, disruptionsAllowed 0 */
	const char *preemptors[3];  /* "name [never] [nominated-node]" */
	int preemptor_policy_never; /* the PodGroup's preemptionPolicy */
	int ntopology;
	const char *want_victims; /* sorted, comma-joined; NULL: failure */
	int want_disruptions;
	int want_code;
	const char *want_msg;
};

static const struct pcase cases[] = {
	{"Priority: mix of no groups and pod groups",
	 {"node1:2"},
	 {"p1 node1 0 - 0", "p2 node1 0 pg1 0"},
	 {"pg1 0 single"},
	 false,
	 {"p"},
	 0,
	 0,
	 "p1",
	 0,
	 SX_SUCCESS,
	 NULL},
	{"Priority: StartTime of pods from same group with disruption mode single ",
	 {"node1:2"},
	 {"p1 node1 0 pg1 1", "p2 node1 0 pg1 0"},
	 {"pg1 0 single"},
	 false,
	 {"p"},
	 0,
	 0,
	 "p1",
	 1,
	 SX_SUCCESS,
	 NULL},
	{"Pod group with disruption mode group not reprieved",
	 {"node1:1", "node2:1"},
	 {"p1 node1 0 pg1 0", "p2 node2 0 pg1 0"},
	 {"pg1 0 all"},
	 false,
	 {"p"},
	 0,
	 0,
	 "p1,p2",
	 1,
	 SX_SUCCESS,
	 NULL},
	{"PDB: Mixed groups",
	 {"node1:2"},
	 {"victim-pdb node1 0 pg1 0 pdb", "victim-no-pdb node1 0 pg1 0"},
	 {NULL},
	 true,
	 {"p"},
	 0,
	 0,
	 "victim-no-pdb",
	 1,
	 SX_SUCCESS,
	 NULL},
	{"PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption",
	 {"node1:1", "node2:1", "node3:1"},
	 {"p1 node1 0 - 0", "p2 node2 0 pg1 0", "p3 node3 0 pg2 0"},
	 {NULL},
	 false,
	 {"p-1"},
	 0,
	 0,
	 "p1",
	 0,
	 SX_SUCCESS,
	 NULL},
	{"PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, "
	 "ignoring member pod preemption policy",
	 {"node1:1", "node2:1", "node3:1"},
	 {"p1 node1 0 - 0", "p2 node2 0 pg1 0", "p3 node3 0 pg2 0"},
	 {NULL},
	 false,
	 {"p-1 never"},
	 0,
	 0,
	 "p1",
	 0,
	 SX_SUCCESS,
	 NULL},
	{"Preemptor group is eligible if terminating pods are on non-nominated nodes",
	 {"node1:1", "node2:1"},
	 {"victim node2 0 - 0 term", "other-victim node1 0 - 0"},
	 {NULL},
	 false,
	 {"p1", "p2 - node1"},
	 0,
	 0,
	 "other-victim,victim",
	 0,
	 SX_SUCCESS,
	 NULL},
	/* Derived (podgrouppreemption.go preemptorEligibleToPreemptOthers,
	 * selectVictimsOnDomain; default_preemption.go PodGroupPostFilter). */
	{"derived: a PodGroup with preemptionPolicy Never is not eligible",
	 {"node1:1"},
	 {"p1 node1 0 - 0"},
	 {NULL},
	 false,
	 {"p"},
	 1,
	 0,
	 NULL,
	 0,
	 SX_UNSCHEDULABLE,
	 "pod group preemption: not eligible due to preemptionPolicy=Never."},
	{"derived: a terminating victim on a member's nominated node",
	 {"node1:1", "node2:1"},
	 {"victim node1 0 - 0 term", "other node2 0 - 0"},
	 {NULL},
	 false,
	 {"p1 - node1"},
	 0,
	 0,
	 NULL,
	 0,
	 SX_UNSCHEDULABLE,
	 "pod group preemption: not eligible due to a terminating pod on the nominated node."},
	{"derived: nothing of lower priority",
	 {"node1:1"},
	 {"p1 node1 1000 - 0", "p2 node1 0 pg9 0"},
	 {"pg9 1000 all"},
	 false,
	 {"p"},
	 0,
	 0,
	 NULL,
	 0,
	 SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
	 "pod group preemption: No preemption victims found for incoming preemptor"},
	{"derived: topology constraints",
	 {"node1:1"},
	 {"p1 node1 0 - 0"},
	 {NULL},
	 false,
	 {"p"},
	 0,
	 1,
	 NULL,
	 0,
	 SX_UNSCHEDULABLE,
	 "pod group preemption: not supported with topology constraints"},
	{"derived: the group does not fit even without every victim",
	 {"node1:1"},
	 {"p1 node1 0 - 0"},
	 {NULL},
	 false,
	 {"a", "b"},
	 0,
	 0,
	 NULL,
	 0,
	 SX_UNSCHEDULABLE,
	 "pod group preemption: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"},
};

/* The member's cycle; it goes to the first feasible node by name. */
static int schedule(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
		    struct sx_snapshot *snap, struct sx_cycle_result *res)
{
	struct sx_cycle_opts opts = {
		.mode = SX_CYCLE_FULL, .percentage = 100, .snap = snap, .skip_pre_enqueue = true};
	int rc;

	memset(res, 0, sizeof(*res));
	rc = sx_schedule(prof, pod, &opts, res);
	if (rc < 0 || res->selected < 0)
		return rc;
	for (uint32_t i = 0; i < res->nfeasible; i++)
		if (strcmp(sx_str_get(snap->nodes[res->feasible[i]]->name),
			   sx_str_get(snap->nodes[res->selected]->name)) < 0)
			res->selected = (int)res->feasible[i];
	return rc;
}

static void add_pod(struct sx_cache *cache, const char *spec)
{
	char name[64], node[32], group[32], extra[16] = "";
	int prio, start;
	char buf[1200], grp[128] = "", labels[64] = "", meta_extra[96] = "", status[300];

	CHECK(sscanf(spec, "%63s %31s %d %31s %d %15s", name, node, &prio, group, &start, extra) >=
	      5);
	if (strcmp(group, "-") != 0)
		snprintf(grp, sizeof(grp), "\"schedulingGroup\":{\"podGroupName\":\"%s\"},", group);
	if (strcmp(extra, "pdb") == 0)
		snprintf(labels, sizeof(labels), ",\"labels\":{\"app\":\"foo\"}");
	if (strcmp(extra, "term") == 0)
		snprintf(meta_extra, sizeof(meta_extra),
			 ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"");
	snprintf(status, sizeof(status),
		 "\"phase\":\"Running\",\"startTime\":\"2026-01-01T00:00:%02dZ\"%s", start,
		 strcmp(extra, "term") == 0
			 ? ",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
			   "\"reason\":\"PreemptionByScheduler\"}]"
			 : "");
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"u-%s\"%s%s},"
		 "\"spec\":{\"nodeName\":\"%s\",\"priority\":%d,%s"
		 "\"containers\":[{\"name\":\"c\"}]},\"status\":{%s}}",
		 name, name, labels, meta_extra, node, prio, grp, status);
	tu_add(cache, "Pod", buf);
}

static struct sx_pod *preemptor_pod(const char *spec)
{
	char name[32], never[16] = "-", nom[32] = "";
	char buf[800], status[80] = "";

	CHECK(sscanf(spec, "%31s %15s %31s", name, never, nom) >= 1);
	if (*nom)
		snprintf(status, sizeof(status), ",\"status\":{\"nominatedNodeName\":\"%s\"}", nom);
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"preemptor-pg\"},"
		 "\"priority\":%d%s,\"containers\":[{\"name\":\"c\"}]}%s}",
		 name, name, HIGH,
		 strcmp(never, "never") == 0 ? ",\"preemptionPolicy\":\"Never\"" : "", status);
	return tu_pod(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void run_case(const struct sx_profile *prof, const struct pcase *tc)
{
	struct sx_cache *cache = sx_cache_new();
	struct sx_snapshot *snap;
	const struct sx_pod *pods[3] = {0};
	uint32_t npods = 0;
	sx_str topo = sx_intern("topology.kubernetes.io/zone");
	struct sx_pod_group pg = {
		.spec = {.policy = SX_GROUP_POLICY_GANG,
			 .has_priority = true,
			 .priority = HIGH,
			 .has_preemption_policy = true,
			 .preempt_never = tc->preemptor_policy_never,
			 .ntopology = (uint32_t)tc->ntopology,
			 .topology = &topo},
	};
	struct sx_pg_preempt_result out;
	struct sx_status *st;
	char buf[800];

	fprintf(stderr, "case: %s\n", tc->name);
	pg.meta.ns = sx_intern("default");
	pg.meta.name = "preemptor-pg";
	for (int i = 0; i < 5 && tc->nodes[i]; i++) {
		char name[32];
		int cap;

		CHECK(sscanf(tc->nodes[i], "%31[^:]:%d", name, &cap) == 2);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":"
			 "\"%s\"}},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\","
			 "\"pods\":\"%d\"}}}",
			 name, name, cap);
		tu_add(cache, "Node", buf);
	}
	for (int i = 0; i < 4 && tc->groups[i]; i++) {
		char name[32], mode[16];
		int prio;

		CHECK(sscanf(tc->groups[i], "%31s %d %15s", name, &prio, mode) == 3);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
			 "\"spec\":{\"schedulingPolicy\":{\"basic\":{}},\"priority\":%d,"
			 "\"disruptionMode\":{\"%s\":{}}}}",
			 name, name, prio, mode);
		tu_add(cache, "PodGroup", buf);
	}
	if (tc->pdb)
		tu_add(cache, "PodDisruptionBudget",
		       "{\"metadata\":{\"name\":\"pdb\",\"namespace\":\"default\"},"
		       "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"foo\"}}},"
		       "\"status\":{\"disruptionsAllowed\":0}}");
	for (int i = 0; i < 6 && tc->pods[i]; i++)
		add_pod(cache, tc->pods[i]);
	for (int i = 0; i < 3 && tc->preemptors[i]; i++)
		pods[npods++] = preemptor_pod(tc->preemptors[i]);
	pg.spec.min_count = (int32_t)npods; /* a gang of every member */
	snap = sx_cache_snapshot(cache);
	struct sx_pg_preempt_input in = {
		.prof = prof,
		.pg = &pg,
		.pods = pods,
		.npods = npods,
		.snap = snap,
		.schedule = schedule,
	};
	/* Through the profile's PodGroupPostFilter: DefaultPreemption's. */
	st = sx_run_pod_group_post_filter(&in, &out);
	CHECK_INT(sx_status_code(st), tc->want_code);
	if (tc->want_msg)
		CHECK_STR(sx_status_message(st, buf, sizeof(buf)), tc->want_msg);
	if (tc->want_victims) {
		const char *names[8];
		char got[400] = "";

		CHECK(out.nvictims <= 8);
		for (uint32_t i = 0; i < out.nvictims && i < 8; i++)
			names[i] = out.victims[i]->meta.name;
		qsort(names, out.nvictims < 8 ? out.nvictims : 8, sizeof(*names), cmp_str);
		for (uint32_t i = 0; i < out.nvictims && i < 8; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "",
				 names[i]);
		CHECK_STR(got, tc->want_victims);
		CHECK_INT(out.ngroup_units, tc->want_disruptions);
		/* Every member is nominated where the dry run placed it. */
		CHECK_INT(out.nnominated, npods);
	}
	sx_status_free(st);
	sx_pg_preempt_result_free(&out);
	for (uint32_t i = 0; i < npods; i++)
		sx_pod_unref(pods[i]);
	sx_snapshot_unref(snap);
	sx_cache_free(cache);
}

static void test_preempt_victims(void)
{
	struct sx_features feat;
	struct sx_error err = {0};
	struct sx_config *cfg;

	sx_intern_init();
	sx_features_init(&feat, SX_RELEASE_DEFAULT);
	CHECK(sx_features_set(&feat,
			      "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption="
			      "true,PodGroupPreemptionPolicy=true",
			      &err) == 0);
	cfg = sx_config_default_for(&feat, &err);
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++)
		run_case(sx_config_profile(cfg, "default-scheduler"), &cases[i]);
	sx_config_free(cfg);
}

/* Without PodGroupPreemptionPolicy, a member's preemptionPolicy Never
 * makes the group ineligible (resolvePreemptionPolicy). */
static void test_member_never_without_gate(void)
{
	struct sx_features feat;
	struct sx_error err = {0};
	struct sx_config *cfg;
	struct pcase tc = {
		"derived: a member with preemptionPolicy Never, PodGroupPreemptionPolicy off",
		{"node1:1"},
		{"p1 node1 0 - 0"},
		{NULL},
		false,
		{"p never"},
		0,
		0,
		NULL,
		0,
		SX_UNSCHEDULABLE,
		"pod group preemption: not eligible due to preemptionPolicy=Never."};

	sx_intern_init();
	sx_features_init(&feat, SX_RELEASE_DEFAULT);
	CHECK(sx_features_set(
		      &feat,
		      "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true",
		      &err) == 0);
	cfg = sx_config_default_for(&feat, &err);
	CHECK(cfg != NULL);
	if (cfg)
		run_case(sx_config_profile(cfg, "default-scheduler"), &tc);
	sx_config_free(cfg);
}

SX_TESTS(SX_TEST(test_preempt_victims), SX_TEST(test_member_never_without_gate))
