/* The standalone pod-group cycle's submit step (src/standalone/podgroup_cycle.c
 * sx_pg_submit): upstream's schedule_one_podgroup_test.go
 * TestSubmitPodGroupAlgorithmResult transcribed. Each row gives the group's
 * status and each member's outcome; the loop's steps are recorded: bound
 * (the binding cycle), preempting (rejected with a nomination: upstream's
 * FailureHandler with a NominatedNodeName), failed (rejected without), and
 * the PodGroupInitiallyScheduled condition written. upstream's
 * requiresPreemption pods are members placed and nominated by
 * PodGroupPostFilter here (waitingOnPreemption). Not transcribed: "Different
 * number of pods in result and queue" (every member has a result here).
 * Derived checks (the rejected members' messages) are marked. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "../../src/standalone/podgroup_cycle.h"
#include "plugins/plugin_util.h"
#include "schedext/podgroup.h"
#include "schedext/features.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

enum { OK = 1, UNSCHED, ERR };

struct row {
	const char *name;
	int group;				 /* OK, UNSCHED or ERR */
	const char *group_msg;			 /* its message */
	bool waiting;				 /* waitingOnPreemption */
	int pods[3];				 /* each member: OK (placed), UNSCHED or ERR */
	bool nominated[3];			 /* PodGroupPostFilter nominated it (waiting) */
	int8_t existing;			 /* the PodGroup's condition before: 1 True */
	const char *bound, *preempting, *failed; /* members, "p1p3" style */
	bool cond_written;
	bool cond_ok;
	const char *cond_reason, *cond_msg;
};

static const struct row rows[] = {
	{"All pods feasible",
	 OK,
	 NULL,
	 false,
	 {OK, OK, OK},
	 {0},
	 0,
	 "p1p2p3",
	 "",
	 "",
	 true,
	 true,
	 "Scheduled",
	 ""},
	{"All pods feasible, but podGroup unschedulable",
	 UNSCHED,
	 "not enough capacity for the gang",
	 false,
	 {OK, OK, OK},
	 {0},
	 0,
	 "",
	 "",
	 "p1p2p3",
	 true,
	 false,
	 "Unschedulable",
	 "not enough capacity for the gang"},
	{"One unschedulable",
	 OK,
	 NULL,
	 false,
	 {OK, UNSCHED, OK},
	 {0},
	 0,
	 "p1p3",
	 "",
	 "p2",
	 true,
	 true,
	 "Scheduled",
	 ""},
	{"All pods require preemption",
	 UNSCHED,
	 "waiting for preemption to complete",
	 true,
	 {OK, OK, OK},
	 {1, 1, 1},
	 0,
	 "",
	 "p1p2p3",
	 "",
	 true,
	 false,
	 "Unschedulable",
	 "waiting for preemption to complete"},
	{"One pod requires preemption, two are feasible",
	 UNSCHED,
	 "waiting for preemption to complete",
	 true,
	 {OK, OK, OK},
	 {1, 1, 1},
	 0,
	 "",
	 "p1p2p3",
	 "",
	 true,
	 false,
	 "Unschedulable",
	 "waiting for preemption to complete"},
	{"One pod unschedulable, one requires preemption, one feasible",
	 UNSCHED,
	 "waiting for preemption to complete",
	 true,
	 {OK, UNSCHED, OK},
	 {1, 0, 1},
	 0,
	 "",
	 "p1p3",
	 "p2",
	 true,
	 false,
	 "Unschedulable",
	 "waiting for preemption to complete"},
	{"All pods unschedulable",
	 UNSCHED,
	 "0/3 nodes are available: insufficient cpu",
	 false,
	 {UNSCHED, UNSCHED, UNSCHED},
	 {0},
	 0,
	 "",
	 "",
	 "p1p2p3",
	 true,
	 false,
	 "Unschedulable",
	 "0/3 nodes are available: insufficient cpu"},
	{"All pods unschedulable with nil nominatingInfo",
	 UNSCHED,
	 "0/3 nodes are available: insufficient cpu",
	 false,
	 {UNSCHED, UNSCHED, UNSCHED},
	 {0},
	 0,
	 "",
	 "",
	 "p1p2p3",
	 true,
	 false,
	 "Unschedulable",
	 "0/3 nodes are available: insufficient cpu"},
	{"Unschedulable for the entire pod group",
	 UNSCHED,
	 "node affinity mismatch",
	 false,
	 {UNSCHED, UNSCHED, UNSCHED},
	 {0},
	 0,
	 "",
	 "",
	 "p1p2p3",
	 true,
	 false,
	 "Unschedulable",
	 "node affinity mismatch"},
	{"Error for one pod",
	 ERR,
	 "plugin returned error",
	 false,
	 {OK, ERR, ERR},
	 {0},
	 0,
	 "",
	 "",
	 "p1p2p3",
	 true,
	 false,
	 "SchedulerError",
	 "plugin returned error"},
	{"Error for one pod while waiting on preemption",
	 ERR,
	 "internal failure",
	 false,
	 {OK, ERR, ERR},
	 {0},
	 0,
	 "",
	 "",
	 "p1p2p3",
	 true,
	 false,
	 "SchedulerError",
	 "internal failure"},
	{"Already Scheduled, successful cycle keeps condition",
	 OK,
	 NULL,
	 false,
	 {OK, OK, OK},
	 {0},
	 1,
	 "p1p2p3",
	 "",
	 "",
	 true,
	 true,
	 "Scheduled",
	 ""},
	{"Already Scheduled, rejected cycle does not regress condition",
	 UNSCHED,
	 "extra pods could not be placed",
	 false,
	 {UNSCHED, UNSCHED, UNSCHED},
	 {0},
	 1,
	 "",
	 "",
	 "p1p2p3",
	 false,
	 false,
	 NULL,
	 NULL},
	{"Already Scheduled, error cycle does not regress condition",
	 ERR,
	 "",
	 false,
	 {OK, ERR, ERR},
	 {0},
	 1,
	 "",
	 "",
	 "p1p2p3",
	 false,
	 false,
	 NULL,
	 NULL},
};

/* What the loop was asked to do. */
struct record {
	char bound[16], preempting[16], failed[16];
	char msg[3][256];
	bool cond_written, cond_ok;
	char cond_reason[32], cond_msg[256];
};

static void add(char *set, size_t len, const struct sx_pod *pod)
{
	strncat(set, pod->meta.name, len - strlen(set) - 1);
}

static int index_of(const struct sx_pod *pod)
{
	return pod->meta.name[1] - '1';
}

static void rec_bind(struct sx_scheduler *s, const struct sx_profile *prof,
		     const struct sx_pod *pod, struct sx_snapshot *snap,
		     struct sx_cycle_result *res, double start, uint32_t attempts,
		     double initial_attempt)
{
	struct record *r = (struct record *)s;

	add(r->bound, sizeof(r->bound), pod);
}

static void rec_fail(struct sx_scheduler *s, const struct sx_profile *prof,
		     const struct sx_pod *pod, const char *msg, bool rejected, bool clear_nominated,
		     double start, const struct sx_rejectors *rej)
{
	struct record *r = (struct record *)s;

	add(r->failed, sizeof(r->failed), pod);
	snprintf(r->msg[index_of(pod)], sizeof(r->msg[0]), "%s", msg);
}

static void rec_fail_nominated(struct sx_scheduler *s, const struct sx_profile *prof,
			       const struct sx_pod *pod, const char *msg, sx_str nominated,
			       double start, const struct sx_rejectors *rej)
{
	struct record *r = (struct record *)s;

	CHECK_STR(sx_str_get(nominated), "node1");
	add(r->preempting, sizeof(r->preempting), pod);
	snprintf(r->msg[index_of(pod)], sizeof(r->msg[0]), "%s", msg);
}

static void rec_condition(struct sx_scheduler *s, const struct sx_pod_group *pg, bool ok,
			  const char *reason, const char *msg)
{
	struct record *r = (struct record *)s;

	r->cond_written = true;
	r->cond_ok = ok;
	snprintf(r->cond_reason, sizeof(r->cond_reason), "%s", reason);
	snprintf(r->cond_msg, sizeof(r->cond_msg), "%s", msg);
}

static struct sx_pod *member(const char *name)
{
	char buf[300];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"pg\"},"
		 "\"containers\":[{\"name\":\"c\"}]}}",
		 name, name);
	return tu_pod(buf);
}

static struct sx_status *status_of(int code, const char *msg)
{
	if (code == OK)
		return NULL;
	return sx_status_new(code == ERR ? SX_ERROR : SX_UNSCHEDULABLE, "%s", msg);
}

/* Runs one row through sx_pg_submit; fills *r. */
static void submit_row(const struct row *tc, struct record *r)
{
	struct sx_pod_group pg = {.meta = {.name = (char *)"pg"},
				  .initially_scheduled = tc->existing};
	struct sx_pg_loop l = {.s = (struct sx_scheduler *)r,
			       .bind = rec_bind,
			       .fail = rec_fail,
			       .fail_nominated = rec_fail_nominated,
			       .condition = rec_condition};
	struct sx_queue_item items[3] = {{0}};
	struct sx_pg_member m[3] = {{0}};
	const struct sx_pod *nominated[3];
	sx_str nodes[3];
	struct sx_pg_preempt_result pf = {.nominated = nominated, .nominated_nodes = nodes};
	struct sx_status *group = status_of(tc->group, tc->group_msg);
	struct sx_pg_outcome o = {
		.group = group, .algorithm = group, .waiting = tc->waiting, .pf = &pf};
	const char *names[3] = {"p1", "p2", "p3"};

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 3; i++) {
		m[i].pod = member(names[i]);
		items[i].pod = m[i].pod;
		m[i].evaluated = true;
		m[i].scheduled = tc->pods[i] == OK;
		m[i].node = m[i].scheduled ? sx_intern("node1") : SX_STR_EMPTY;
		m[i].status =
			status_of(tc->pods[i],
				  tc->pods[i] == ERR ? tc->group_msg : "0/1 nodes are available");
		if (tc->nominated[i]) {
			nominated[pf.nnominated] = m[i].pod;
			nodes[pf.nnominated++] = sx_intern("node1");
		}
	}
	sx_pg_submit(&l, items, m, 3, &pg, &o, 0, -1);
	for (int i = 0; i < 3; i++) {
		sx_status_free(m[i].status);
		sx_pod_unref(m[i].pod);
	}
	sx_status_free(group);
}

static void test_submit(void)
{
	sx_intern_init();
	for (size_t i = 0; i < SX_ARRAY_SIZE(rows); i++) {
		const struct row *tc = &rows[i];
		struct record r;

		fprintf(stderr, "case: %s\n", tc->name);
		submit_row(tc, &r);
		CHECK_STR(r.bound, tc->bound);
		CHECK_STR(r.preempting, tc->preempting);
		CHECK_STR(r.failed, tc->failed);
		CHECK_INT(r.cond_written, tc->cond_written);
		if (!tc->cond_written)
			continue;
		CHECK_INT(r.cond_ok, tc->cond_ok);
		CHECK_STR(r.cond_reason, tc->cond_reason);
		CHECK_STR(r.cond_msg, tc->cond_msg);
	}
}

/* derived: the words each rejected member is given
 * (submitPodGroupResult's FailureHandler statuses): a placed member of a
 * rejected group the group's status, waiting on preemption too, one that
 * did not fit its own, one of an Error group the error. */
static void test_submit_messages(void)
{
	struct record r;

	submit_row(&rows[1], &r);
	CHECK_STR(r.msg[0], "not enough capacity for the gang");
	submit_row(&rows[5], &r);
	CHECK_STR(r.msg[0], "waiting for preemption to complete");
	CHECK_STR(r.msg[1], "0/1 nodes are available");
	submit_row(&rows[9], &r);
	CHECK_STR(r.msg[0], "plugin returned error");
	CHECK_STR(r.msg[1], "plugin returned error");
}

/* ---------- validatePodGroup (sx_pg_validate) ---------- */

/* A queued member: scheduler (NULL: default), priority (< 0: none), Never. */
static struct sx_pod *vpod(const char *name, const char *sched, int prio, bool never)
{
	char buf[600], p[40] = "";

	if (prio >= 0)
		snprintf(p, sizeof(p), ",\"priority\":%d", prio);
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"pg\"}%s%s%s%s%s,"
		 "\"containers\":[{\"name\":\"c\"}]}}",
		 name, name, sched ? ",\"schedulerName\":\"" : "", sched ? sched : "",
		 sched ? "\"" : "", p, never ? ",\"preemptionPolicy\":\"Never\"" : "");
	return tu_pod(buf);
}

static struct sx_pod_group *vgroup(int prio, bool never)
{
	char buf[400], p[40] = "";
	struct sx_error err = {0};
	struct sx_pod_group *pg;
	cJSON *j;

	if (prio >= 0)
		snprintf(p, sizeof(p), ",\"priority\":%d", prio);
	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
		 "\"metadata\":{\"name\":\"pg\",\"namespace\":\"default\"},"
		 "\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}%s%s}}",
		 p, never ? ",\"preemptionPolicy\":\"Never\"" : "");
	j = cJSON_Parse(buf);
	pg = sx_decode_pod_group(j, &err);
	cJSON_Delete(j);
	CHECK(pg != NULL);
	return pg;
}

/* Validates p[0..n) against pg with the gate as given; the message, ""
 * when valid. */
static const char *validate(struct sx_pod **p, uint32_t n, struct sx_pod_group *pg,
			    const struct sx_snapshot *snap, bool gate, char *msg, size_t len)
{
	struct sx_pg_member m[3] = {{0}};
	struct sx_features f;
	struct sx_error err = {0};

	sx_features_init(&f, 37);
	if (gate)
		CHECK(sx_features_set(&f,
				      "GenericWorkload=true,GangScheduling=true,"
				      "WorkloadAwarePreemption=true,PodGroupPreemptionPolicy=true",
				      &err) == 0);
	for (uint32_t i = 0; i < n; i++)
		m[i].pod = p[i];
	msg[0] = '\0';
	if (sx_pg_validate(m, n, pg, snap, &f, msg, len))
		CHECK_STR(msg, "");
	return msg;
}

static void unref_all(struct sx_pod **p, uint32_t n, struct sx_pod_group *pg)
{
	for (uint32_t i = 0; i < n; i++)
		sx_pod_unref(p[i]);
	sx_pod_group_unref(pg);
}

/* schedule_one_podgroup.go validatePodGroup's checks, one row each
 * (derived: its words, the pods in the queue's order). */
static void test_validate(void)
{
	char msg[600];
	struct sx_pod *p[3];
	struct sx_pod_group *pg;

	sx_intern_init();
	p[0] = vpod("p1", NULL, -1, false);
	p[1] = vpod("p2", NULL, -1, false);
	pg = vgroup(-1, false);
	CHECK_STR(validate(p, 2, pg, NULL, false, msg, sizeof(msg)), "");
	unref_all(p, 2, pg);

	p[0] = vpod("p1", NULL, -1, false);
	p[1] = vpod("p2", "other-scheduler", -1, false);
	pg = vgroup(-1, false);
	CHECK_STR(validate(p, 2, pg, NULL, false, msg, sizeof(msg)),
		  "all pods in a pod group hierarchy should have the same .spec.schedulerName "
		  "set, got: \"other-scheduler\" (\"p2\") and \"default-scheduler\" (\"p1\")");
	unref_all(p, 2, pg);

	p[0] = vpod("p1", NULL, 10, false);
	p[1] = vpod("p2", NULL, 20, false);
	pg = vgroup(10, false);
	CHECK_STR(validate(p, 2, pg, NULL, false, msg, sizeof(msg)),
		  "all pods in a pod group hierarchy should have the same priority as the root "
		  "pod group's priority, got 20 (\"p2\") and 10 (\"podgroup/default/pg\")");
	unref_all(p, 2, pg);

	p[0] = vpod("p1", NULL, -1, true);
	p[1] = vpod("p2", NULL, -1, false);
	pg = vgroup(-1, false);
	CHECK_STR(validate(p, 2, pg, NULL, false, msg, sizeof(msg)),
		  "all pods in a pod group hierarchy should have the same preemption policy, got "
		  "PreemptLowerPriority (\"p2\") and Never (\"p1\")");
	/* With PodGroupPreemptionPolicy the PodGroup's (default
	 * PreemptLowerPriority) is the reference: p1 now differs. */
	CHECK_STR(validate(p, 2, pg, NULL, true, msg, sizeof(msg)),
		  "all pods in a pod group hierarchy should have the same preemption policy as "
		  "the root pod group's preemption policy, got Never (\"p1\") and "
		  "PreemptLowerPriority (\"podgroup/default/pg\")");
	unref_all(p, 2, pg);

	/* A member already bound counts as well. */
	{
		struct sx_cache *c = sx_cache_new();
		struct sx_snapshot *snap;
		char buf[600];

		tu_add(c, "Node",
		       "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","
		       "\"memory\":\"4Gi\",\"pods\":\"10\"}}}");
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"p0\",\"namespace\":\"default\",\"uid\":\"p0\"},"
			 "\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"pg\"},\"priority\":5,"
			 "\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}}");
		tu_add(c, "Pod", buf);
		snap = sx_cache_snapshot(c);
		p[0] = vpod("p1", NULL, 10, false);
		pg = vgroup(10, false);
		CHECK_STR(validate(p, 1, pg, snap, false, msg, sizeof(msg)),
			  "all pods in a pod group hierarchy should have the same priority as the "
			  "root pod group's priority, got 5 (\"p0\") and 10 "
			  "(\"podgroup/default/pg\")");
		unref_all(p, 1, pg);
		sx_snapshot_unref(snap);
		sx_cache_free(c);
	}
}

SX_TESTS(SX_TEST(test_submit), SX_TEST(test_submit_messages), SX_TEST(test_validate))
