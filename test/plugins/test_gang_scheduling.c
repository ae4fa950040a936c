/* GangScheduling (plugins/gang_scheduling.c): upstream's
 * gangscheduling_test.go TestGangSchedulingFlow transcribed (PreEnqueue,
 * Permit with pods waiting at Permit, the waiting members allowed when
 * the quorum is met), the GenericWorkload gate deciding whether the
 * default profile has the plugin, the Permit timeout, and the queueing
 * hints (Test_isSchedulableAfterPodAdded,
 * Test_isSchedulableAfterPodGroupAdded; the PodGroup update hint's cases
 * are derived: their names start with "derived:"), and PlacementFeasible
 * (TestPlacementFeasible, PodGroup rows; the words derived from
 * GangScheduling.PlacementFeasible). */
#include "schedext/podgroup.h"
#include <stdlib.h>

#include "plugin_util.h"
#include "schedext/binding_cycle.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "schedext/registry.h"
#include "schedext/workload.h"

extern const struct sx_plugin sx_plugin_gang_scheduling;

/* Only GangScheduling, at every point it implements. */
static const char only_gang[] =
	"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	"profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
	"      disabled: [{name: '*'}]\n      enabled: [{name: GangScheduling}]\n";

static struct sx_config *config(const char *yaml, const char *gates)
{
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_config *cfg;

	sx_features_init(&f, SX_RELEASE_DEFAULT);
	if (gates && sx_features_set(&f, gates, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "gates: %s", err.msg);
	cfg = yaml ? sx_config_parse_for(yaml, strlen(yaml), &f, &err)
		   : sx_config_default_for(&f, &err);
	if (!cfg)
		sx_test_fail(__FILE__, __LINE__, "config: %s", err.msg);
	return cfg;
}

static void *gang_self(const struct sx_profile *prof)
{
	for (unsigned i = 0; i < prof->n[SX_PT_PERMIT]; i++)
		if (prof->points[SX_PT_PERMIT][i].plugin == &sx_plugin_gang_scheduling)
			return prof->points[SX_PT_PERMIT][i].self;
	return NULL;
}

static bool in_profile(const struct sx_profile *prof)
{
	for (unsigned pt = 0; pt < SX_PT_COUNT; pt++)
		for (unsigned i = 0; i < prof->n[pt]; i++)
			if (prof->points[pt][i].plugin == &sx_plugin_gang_scheduling)
				return true;
	return false;
}

/* The gate decides: off (the 1.37 default), the default profile is
 * upstream's without GangScheduling; on, the plugin is in it. */
static void test_gate(void)
{
	struct sx_config
		*off = config(NULL, NULL),
		*on = config(
			NULL,
			"GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true");

	CHECK(!in_profile(sx_config_profile(off, "default-scheduler")));
	CHECK(in_profile(sx_config_profile(on, "default-scheduler")));
	sx_config_free(off);
	sx_config_free(on);
}

static struct sx_pod_group *group(const char *name, const char *policy)
{
	char buf[512];
	struct sx_error err = {0};
	cJSON *j;
	struct sx_object o = {0};

	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\"},"
		 "\"spec\":{\"schedulingPolicy\":%s}}",
		 name, policy);
	j = cJSON_Parse(buf);
	if (sx_decode_object(j, NULL, &o, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "decode: %s", err.msg);
	cJSON_Delete(j);
	return o.obj;
}

static struct sx_pod *pod(const char *name, const char *group_name)
{
	char buf[512];

	if (group_name)
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"%s\"},"
			 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"%s\"}}}",
			 name, name, group_name);
	else
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"%s\"},"
			 "\"spec\":{}}",
			 name, name);
	return tu_pod(buf);
}

struct flow_case {
	const char *name;
	const char *pod;	       /* p1..p5, basic-pod, non-gang */
	const char *initial_pods;      /* names, space-separated */
	bool with_groups;	       /* pg1, pg2 (gang 3, 4) and pg3 (basic) exist */
	const char *waiting_on_permit; /* names */
	const char *want_pre_enqueue;  /* NULL = success */
	const char *want_permit;       /* NULL = success */
	const char *want_allowed;      /* names whose wait ends allowed */
};

static const char *group_of(const char *p)
{
	if (!strcmp(p, "p1") || !strcmp(p, "p2") || !strcmp(p, "p3"))
		return "pg1";
	if (!strcmp(p, "p4") || !strcmp(p, "p5"))
		return "pg2";
	if (!strcmp(p, "basic-pod"))
		return "pg3";
	return NULL;
}

#define MAXP 8

static unsigned split(const char *list, char names[MAXP][16])
{
	unsigned n = 0;
	const char *s = list;

	while (s && *s && n < MAXP) {
		size_t len = strcspn(s, " ");
		snprintf(names[n++], 16, "%.*s", (int)len, s);
		s += len;
		s += *s == ' ';
	}
	return n;
}

static void run_flow(const struct flow_case *tc)
{
	struct sx_config *cfg = config(
		only_gang, "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true");
	const struct sx_profile *prof = sx_config_profile(cfg, "default-scheduler");
	void *self = gang_self(prof);
	char names[MAXP][16], buf[512];
	struct sx_pod *waiting_pods[MAXP] = {0};
	struct sx_waiting_pod *wps[MAXP] = {0};
	unsigned nw = 0;
	struct sx_pod *p;
	struct sx_status *st;
	struct sx_cycle_state cs = {0};

	CHECK(self != NULL);
	if (!self)
		goto out_cfg;
	fprintf(stderr, "case: %s\n", tc->name);
	if (tc->with_groups) {
		const char *const gs[][2] = {{"pg1", "{\"gang\":{\"minCount\":3}}"},
					     {"pg2", "{\"gang\":{\"minCount\":4}}"},
					     {"pg3", "{\"basic\":{}}"}};
		for (unsigned i = 0; i < 3; i++) {
			struct sx_pod_group *g = group(gs[i][0], gs[i][1]);
			sx_handle_object_event(prof->handle, SX_KIND_POD_GROUP, NULL, g);
			sx_pod_group_unref(g);
		}
	}
	for (unsigned i = 0, n = split(tc->initial_pods, names); i < n; i++) {
		struct sx_pod *q = pod(names[i], group_of(names[i]));
		sx_handle_object_event(prof->handle, SX_KIND_POD, NULL, q); /* AddPodGroupMember */
		sx_pod_unref(q);
	}
	p = pod(tc->pod, group_of(tc->pod));
	sx_handle_object_event(prof->handle, SX_KIND_POD, NULL, p);

	st = sx_plugin_gang_scheduling.pre_enqueue(self, p);
	if (st) {
		CHECK_STR(tu_status(st, buf, sizeof(buf)),
			  tc->want_pre_enqueue ? tc->want_pre_enqueue : "Success");
		goto out_pod; /* rejected */
	}
	CHECK(tc->want_pre_enqueue == NULL);

	/* Other pods already hit Permit (assumed, then waiting). */
	for (unsigned i = 0, n = split(tc->waiting_on_permit, names); i < n; i++) {
		struct sx_pod *q = pod(names[i], group_of(names[i]));
		CHECK(sx_run_reserve(prof, &cs, q, sx_intern("some-node")) == NULL);
		st = sx_run_permit(prof, &cs, q, sx_intern("some-node"), &wps[nw]);
		CHECK_INT(sx_status_code(st), SX_WAIT);
		sx_status_free(st);
		waiting_pods[nw++] = q;
	}

	CHECK(sx_run_reserve(prof, &cs, p, sx_intern("some-node")) == NULL);
	st = sx_plugin_gang_scheduling.permit(self, &cs, p, sx_intern("some-node"), &(uint64_t){0});
	CHECK_STR(tu_status(st, buf, sizeof(buf)), tc->want_permit ? tc->want_permit : "Success");

	/* Allowed members end their wait at once with success; the others
	 * are still waiting (rejected here to end the test). */
	split(tc->want_allowed, names);
	for (unsigned i = 0; i < nw; i++) {
		bool allowed = false;

		for (unsigned k = 0, n = split(tc->want_allowed, names); k < n; k++)
			allowed |= strcmp(names[k], waiting_pods[i]->meta.name) == 0;
		if (!allowed)
			sx_waiting_pod_reject(wps[i], "test", "still waiting");
		st = sx_waiting_pod_wait(wps[i]);
		CHECK_STR(tu_status(st, buf, sizeof(buf)),
			  allowed ? "Success" : "Unschedulable: still waiting");
		sx_waiting_pod_free(wps[i]);
		sx_pod_unref(waiting_pods[i]);
	}
out_pod:
	sx_pod_unref(p);
out_cfg:
	sx_config_free(cfg);
}

static void test_flow(void)
{
	static const struct flow_case cases[] = {
		{"non-gang pod succeeds immediately", "non-gang", NULL, true, NULL, NULL, NULL,
		 NULL},
		{"basic policy pod succeeds immediately", "basic-pod", NULL, true, NULL, NULL, NULL,
		 NULL},
		{"gang pod fails PreEnqueue when pod group is not yet created", "p1", "p2 p3 p4 p5",
		 false, NULL,
		 "UnschedulableAndUnresolvable: waiting for pods's pod group \"pg1\" to appear in "
		 "scheduling queue",
		 NULL, NULL},
		{"gang pod fails PreEnqueue when quorum is not met", "p1", "p2 p4 p5", true, NULL,
		 "UnschedulableAndUnresolvable: waiting for minCount pods from a gang to appear in "
		 "scheduling queue",
		 NULL, NULL},
		{"gang pod passes PreEnqueue, but waits at Permit", "p1", "p2 p3 p4 p5", true,
		 "p2 p4 p5", NULL, "Wait: waiting for minCount pods from a gang to be scheduled",
		 NULL},
		{"final gang pod arrives at Permit and allows all waiting pods from a gang", "p1",
		 "p2 p3 p4 p5", true, "p2 p3 p4 p5", NULL, NULL, "p2 p3"},
		/* "final gang pod arrives at Permit during pod group scheduling
		 * cycle": no pod-group cycle here (not transcribed). */
	};

	for (unsigned i = 0; i < SX_ARRAY_SIZE(cases); i++)
		run_flow(&cases[i]);
}

/* A member that waits longer than the Permit timeout is rejected by the
 * waiting-pod timer with the framework's words (the test hook shortens
 * the 5 minutes). */
static void test_permit_timeout(void)
{
	struct sx_config *cfg;
	const struct sx_profile *prof;
	struct sx_pod_group *g = group("pg1", "{\"gang\":{\"minCount\":2}}");
	struct sx_pod *p = pod("p1", "pg1");
	struct sx_waiting_pod *wp = NULL;
	struct sx_cycle_state cs = {0};
	struct sx_status *st;
	char buf[256];

	setenv("SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS", "50", 1);
	cfg = config(only_gang,
		     "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true");
	unsetenv("SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS");
	prof = sx_config_profile(cfg, "default-scheduler");
	sx_handle_object_event(prof->handle, SX_KIND_POD_GROUP, NULL, g);
	sx_handle_object_event(prof->handle, SX_KIND_POD, NULL, p);
	CHECK(sx_run_reserve(prof, &cs, p, sx_intern("n")) == NULL);
	st = sx_run_permit(prof, &cs, p, sx_intern("n"), &wp);
	CHECK_INT(sx_status_code(st), SX_WAIT);
	sx_status_free(st);
	CHECK(wp != NULL);
	if (wp) {
		st = sx_waiting_pod_wait(wp);
		CHECK_STR(tu_status(st, buf, sizeof(buf)),
			  "Unschedulable: rejected due to timeout after waiting 50ms at plugin "
			  "GangScheduling");
		sx_waiting_pod_free(wp);
	}
	sx_run_unreserve(prof, &cs, p, sx_intern("n"));
	sx_pod_unref(p);
	sx_pod_group_unref(g);
	sx_config_free(cfg);
}

static struct sx_pod *pod_in(const char *ns, const char *name, const char *group_name)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
		 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"%s\"}}}",
		 name, ns, group_name);
	return tu_pod(buf);
}

static struct sx_pod_group *group_in(const char *ns, const char *name, const char *policy)
{
	char buf[512];
	struct sx_error err = {0};
	struct sx_object o = {0};
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
		 "\"spec\":{\"schedulingPolicy\":%s}}",
		 name, ns, policy);
	j = cJSON_Parse(buf);
	if (sx_decode_object(j, NULL, &o, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "decode: %s", err.msg);
	cJSON_Delete(j);
	return o.obj;
}

static const struct sx_event_reg *reg(uint8_t resource, uint32_t actions)
{
	for (const struct sx_event_reg *r = sx_plugin_gang_scheduling.events; r->resource; r++)
		if (r->resource == resource && r->actions == actions)
			return r;
	sx_test_fail(__FILE__, __LINE__, "no registration for %u/%u", resource, actions);
	return NULL;
}

/* Test_isSchedulableAfterPodAdded (st.MakePod's namespace is "default"
 * unless set). */
static void test_hint_pod_added(void)
{
	static const struct {
		const char *name, *pod_group, *new_ns, *new_group;
		enum sx_hint want;
	} cases[] = {
		{"add a newPod which matches the pod's scheduling group", "pg", "default", "pg",
		 SX_QUEUE},
		{"add a newPod which doesn't match the pod's namespace", "pg", "foo", "pg",
		 SX_QUEUE_SKIP},
		{"add a newPod which doesn't match the pod's pod group name", "pg1", "default",
		 "pg2", SX_QUEUE_SKIP},
	};

	for (unsigned i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct sx_pod *p = pod_in("default", "p", cases[i].pod_group),
			      *n = pod_in(cases[i].new_ns, "", cases[i].new_group);

		fprintf(stderr, "case: %s\n", cases[i].name);
		CHECK_INT(reg(SX_RES_UNSCHEDULED_POD, SX_ACT_ADD)->hint(NULL, p, NULL, n),
			  cases[i].want);
		CHECK_INT(reg(SX_RES_ASSIGNED_POD, SX_ACT_ADD)->hint(NULL, p, NULL, n),
			  cases[i].want);
		sx_pod_unref(p);
		sx_pod_unref(n);
	}
}

/* Test_isSchedulableAfterPodGroupAdded, and the update hint
 * (isSchedulableAfterPodGroupUpdated; derived cases). Event objects are
 * struct sx_object (plugin.h). */
static void test_hint_pod_group(void)
{
	static const struct {
		const char *name, *pod_ns, *pod_group, *group_ns, *group;
		enum sx_hint want;
	} added[] = {
		{"add a pod group which matches the pod's pod group name", "default", "pg",
		 "default", "pg", SX_QUEUE},
		{"add a pod group which doesn't match the pod's scheduling group name", "default",
		 "pg1", "default", "pg2", SX_QUEUE_SKIP},
		{"add a pod group which doesn't match the pod's scheduling group namespace", "ns1",
		 "pg", "ns2", "pg", SX_QUEUE_SKIP},
	};
	static const struct {
		const char *name, *old_policy, *new_policy, *group;
		enum sx_hint want;
	} updated[] = {
		{"derived: minCount decreased", "{\"gang\":{\"minCount\":4}}",
		 "{\"gang\":{\"minCount\":3}}", "pg", SX_QUEUE},
		{"derived: minCount unchanged", "{\"gang\":{\"minCount\":4}}",
		 "{\"gang\":{\"minCount\":4}}", "pg", SX_QUEUE_SKIP},
		{"derived: minCount increased", "{\"gang\":{\"minCount\":4}}",
		 "{\"gang\":{\"minCount\":5}}", "pg", SX_QUEUE_SKIP},
		{"derived: a basic policy requeues", "{\"basic\":{}}", "{\"basic\":{}}", "pg",
		 SX_QUEUE},
		{"derived: another group", "{\"gang\":{\"minCount\":4}}",
		 "{\"gang\":{\"minCount\":1}}", "other", SX_QUEUE_SKIP},
	};

	for (unsigned i = 0; i < SX_ARRAY_SIZE(added); i++) {
		struct sx_pod *p = pod_in(added[i].pod_ns, "p", added[i].pod_group);
		struct sx_pod_group *g =
			group_in(added[i].group_ns, added[i].group, "{\"gang\":{\"minCount\":1}}");
		struct sx_object o = {SX_KIND_POD_GROUP, g};

		fprintf(stderr, "case: %s\n", added[i].name);
		CHECK_INT(reg(SX_RES_POD_GROUP, SX_ACT_ADD)->hint(NULL, p, NULL, &o),
			  added[i].want);
		sx_pod_unref(p);
		sx_pod_group_unref(g);
	}
	for (unsigned i = 0; i < SX_ARRAY_SIZE(updated); i++) {
		struct sx_pod *p = pod_in("default", "p", "pg");
		struct sx_pod_group *og = group_in("default", updated[i].group,
						   updated[i].old_policy),
				    *ng = group_in("default", updated[i].group,
						   updated[i].new_policy);
		struct sx_object o = {SX_KIND_POD_GROUP, og}, n = {SX_KIND_POD_GROUP, ng};

		fprintf(stderr, "case: %s\n", updated[i].name);
		CHECK_INT(reg(SX_RES_POD_GROUP, SX_ACT_UPDATE)->hint(NULL, p, &o, &n),
			  updated[i].want);
		sx_pod_unref(p);
		sx_pod_group_unref(og);
		sx_pod_group_unref(ng);
	}
}

/* Without a front end feeding pod events (the extender, explain) the
 * plugin has no pod group state and gates nothing (derived: upstream's
 * plugin always has its informers). */
static void test_unfed(void)
{
	struct sx_config *cfg = config(
		only_gang, "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true");
	void *self = gang_self(sx_config_profile(cfg, "default-scheduler"));
	struct sx_pod *p = pod("p1", "pg1");
	struct sx_cycle_state cs = {0};
	uint64_t t = 0;

	CHECK(sx_plugin_gang_scheduling.pre_enqueue(self, p) == NULL);
	CHECK(sx_plugin_gang_scheduling.permit(self, &cs, p, sx_intern("n"), &t) == NULL);
	sx_pod_unref(p);
	sx_config_free(cfg);
}

/* gangscheduling_test.go TestPlacementFeasible (the PodGroup rows): after
 * each pod's outcome, Remaining = childrenCount - (i+1) and Scheduled =
 * initialScheduledCount + the successes so far; minCount 0 = basic. */
struct pf_case {
	const char *name;
	int32_t min_count, children, initial;
	const char *pods;     /* S = Success, U = Unschedulable, per step */
	const char *expected; /* S, W (Wait), U per step */
};

static const struct pf_case pf_cases[] = {
	{"All pods succeed, minCount met at end", 2, 2, 0, "SS", "WS"},
	{"First pod fails, minCount not satisfiable", 3, 3, 0, "U", "U"},
	{"Second pod fails, minCount not satisfiable", 2, 2, 0, "SU", "WU"},
	{"Non-gang pod group with 0 scheduled pods fails", 0, 1, 0, "U", "U"},
	{"Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, 0, "S", "S"},
	{"Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, 1, "U", "S"},
	{"More than minCount pods, all succeed", 2, 3, 0, "SSS", "WSS"},
	{"More than minCount pods, first fails", 2, 3, 0, "USS", "WWS"},
	{"More than minCount pods, minCount not satisfiable", 2, 3, 0, "UU", "WU"},
	{"1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, 1, "SS", "WS"},
	{"minCount already met by scheduled pods", 2, 1, 2, "U", "S"},
	{"1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, 1, "U",
	 "U"},
	{"1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining", 4, 2, 1,
	 "S", "U"},
};

static void test_placement_feasible(void)
{
	struct sx_config *cfg = config(
		only_gang, "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true");
	const struct sx_profile *prof = sx_config_profile(cfg, "default-scheduler");

	for (size_t c = 0; c < SX_ARRAY_SIZE(pf_cases); c++) {
		const struct pf_case *tc = &pf_cases[c];
		char policy[64];
		struct sx_pod_group *pg;
		int32_t scheduled = tc->initial;

		if (tc->min_count > 0)
			snprintf(policy, sizeof(policy), "{\"gang\":{\"minCount\":%d}}",
				 tc->min_count);
		else
			snprintf(policy, sizeof(policy), "{\"basic\":{}}");
		pg = group("test-pg", policy);
		for (int i = 0; tc->pods[i]; i++) {
			struct sx_placement_progress p;
			struct sx_status *st;
			char want = tc->expected[i];

			scheduled += tc->pods[i] == 'S';
			p = (struct sx_placement_progress){.remaining = tc->children - (i + 1),
							   .scheduled = scheduled};
			st = sx_run_placement_feasible(prof, pg, p);
			if ((want == 'S' && st) || (want == 'W' && sx_status_code(st) != SX_WAIT) ||
			    (want == 'U' && sx_status_code(st) != SX_UNSCHEDULABLE))
				sx_test_fail(__FILE__, __LINE__, "%s: step %d: want %c, got %s",
					     tc->name, i, want, sx_code_name(sx_status_code(st)));
			if (st)
				CHECK(st->plugin && !strcmp(st->plugin, "GangScheduling"));
			sx_status_free(st);
		}
		sx_pod_group_unref(pg);
	}
	sx_config_free(cfg);
}

/* The words (derived from GangScheduling.PlacementFeasible). */
static void test_placement_feasible_words(void)
{
	struct sx_config *cfg = config(
		only_gang, "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true");
	const struct sx_profile *prof = sx_config_profile(cfg, "default-scheduler");
	struct sx_pod_group *pg = group("pg", "{\"gang\":{\"minCount\":4}}");
	struct sx_status *st;
	char buf[256];

	st = sx_run_placement_feasible(prof, pg, (struct sx_placement_progress){1, 2});
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)),
		  "minCount (4) cannot be satisfied: 2 scheduled, 1 remaining");
	sx_status_free(st);
	st = sx_run_placement_feasible(prof, pg, (struct sx_placement_progress){2, 2});
	CHECK_STR(sx_status_message(st, buf, sizeof(buf)),
		  "minCount (4) is not yet satisfied: 2 scheduled, 2 remaining");
	sx_status_free(st);
	CHECK(sx_run_placement_feasible(prof, pg, (struct sx_placement_progress){0, 4}) == NULL);
	sx_pod_group_unref(pg);
	sx_config_free(cfg);
}

SX_TESTS(SX_TEST(test_placement_feasible), SX_TEST(test_placement_feasible_words),
	 SX_TEST(test_gate), SX_TEST(test_unfed), SX_TEST(test_flow), SX_TEST(test_permit_timeout),
	 SX_TEST(test_hint_pod_added), SX_TEST(test_hint_pod_group))
