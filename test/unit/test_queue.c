/* The scheduling queue: PrioritySort order, PreEnqueue gating, backoff
 * durations and expiry, unschedulable moves and the 5-minute flush,
 * ignored pods, the nominator, a blocking pop across threads, and pod
 * groups popped together and counted as entities. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedext/decode.h"
#include "schedext/queue.h"
#include "schedext/config.h"

static double fake_now;

static double clock_fn(void *ctx)
{
	(void)ctx;
	return fake_now;
}

/* A pending pod in namespace "ns": name, priority, extra spec JSON. */
static struct sx_pod *pod_ext(const char *name, int prio, const char *extra)
{
	char buf[2048];
	struct sx_error err = {0};
	struct sx_pod *pod;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\"},"
		 "\"spec\":{\"priority\":%d%s%s}}",
		 name, name, prio, extra && *extra ? "," : "", extra ? extra : "");
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	if (!pod)
		fprintf(stderr, "decode %s: %s\n", buf, err.msg);
	return pod;
}

static struct sx_pod *pod_p(const char *name, int prio)
{
	return pod_ext(name, prio, NULL);
}

struct fixture {
	struct sx_config *cfg;
	struct sx_queue *q;
};

static void setup(struct fixture *f)
{
	struct sx_error err = {0};

	sx_intern_init();
	fake_now = 1000;
	f->cfg = sx_config_default(&err);
	f->q = sx_queue_new(f->cfg);
	sx_queue_set_clock(f->q, clock_fn, NULL);
}

static void teardown(struct fixture *f)
{
	sx_queue_free(f->q);
	sx_config_free(f->cfg);
}

static void add(struct fixture *f, struct sx_pod *pod)
{
	sx_queue_pod_update(f->q, NULL, pod);
	sx_pod_unref(pod);
}

/* Pops without waiting; returns the pod name (static buffer) or "". */
static const char *pop_name(struct fixture *f, struct sx_queue_item *it)
{
	static char name[128];

	if (sx_queue_pop(f->q, 0, it) != 0)
		return "";
	snprintf(name, sizeof(name), "%s", it->pod->meta.name);
	return name;
}

static const char *where(struct fixture *f, const char *name)
{
	const char *w = sx_queue_where(f->q, sx_intern("ns"), name);

	return w ? w : "absent";
}

static void test_priority_then_arrival(void)
{
	struct fixture f;
	struct sx_queue_item it;

	setup(&f);
	add(&f, pod_p("low", 1));
	fake_now += 1;
	add(&f, pod_p("high-late", 10));
	fake_now += 1;
	add(&f, pod_p("mid-a", 5));
	fake_now += 1;
	add(&f, pod_p("mid-b", 5));
	CHECK_STR(pop_name(&f, &it), "high-late");
	CHECK_INT(it.attempts, 1);
	sx_pod_unref(it.pod);
	CHECK_STR(pop_name(&f, &it), "mid-a");
	sx_pod_unref(it.pod);
	CHECK_STR(pop_name(&f, &it), "mid-b");
	sx_pod_unref(it.pod);
	CHECK_STR(pop_name(&f, &it), "low");
	sx_pod_unref(it.pod);
	CHECK_STR(pop_name(&f, &it), "");
	CHECK_STR(where(&f, "low"), "inflight");
	teardown(&f);
}

static void test_ignored_pods(void)
{
	struct fixture f;
	struct sx_queue_lengths l;

	setup(&f);
	add(&f, pod_ext("other", 0, "\"schedulerName\":\"someone-else\""));
	add(&f, pod_ext("bound", 0, "\"nodeName\":\"n1\""));
	add(&f, pod_ext("mine", 0, "\"schedulerName\":\"default-scheduler\""));
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.active, 1);
	CHECK_STR(where(&f, "other"), "absent");
	CHECK_STR(where(&f, "bound"), "absent");
	/* mine gets bound by someone: it leaves the queue */
	{
		struct sx_pod *old = pod_p("mine", 0),
			      *b = pod_ext("mine", 0, "\"nodeName\":\"n1\"");

		sx_queue_pod_update(f.q, old, b);
		sx_pod_unref(old);
		sx_pod_unref(b);
	}
	CHECK_STR(where(&f, "mine"), "absent");
	teardown(&f);
}

static void test_gated_pod(void)
{
	struct fixture f;
	struct sx_queue_item it;
	struct sx_queue_lengths l;
	struct sx_pod *gated = pod_ext("g", 0, "\"schedulingGates\":[{\"name\":\"wait\"}]");
	struct sx_pod *open = pod_p("g", 0);

	setup(&f);
	sx_queue_pod_update(f.q, NULL, gated);
	CHECK_STR(where(&f, "g"), "gated");
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.gated, 1);
	CHECK_INT(l.unschedulable, 0);
	/* cluster events do not release a gated pod */
	sx_queue_move_all(f.q, "NodeAdd");
	CHECK_STR(where(&f, "g"), "gated");
	CHECK_STR(pop_name(&f, &it), "");
	/* the update removing the gate does */
	sx_queue_pod_update(f.q, gated, open);
	CHECK_STR(where(&f, "g"), "active");
	CHECK_STR(pop_name(&f, &it), "g");
	sx_pod_unref(it.pod);
	sx_pod_unref(gated);
	sx_pod_unref(open);
	teardown(&f);
}

/* The 1.34 sequence with the defaults: 1, 2, 4, 8, 10, 10 seconds. */
static void test_backoff_durations(void)
{
	static const double want[] = {1, 2, 4, 8, 10, 10};
	struct fixture f;
	struct sx_queue_item it;

	CHECK(sx_queue_backoff_duration(1, 10, 0) == 0);
	CHECK(sx_queue_backoff_duration(1, 0, 3) == 0);
	CHECK(sx_queue_backoff_duration(1, 10, 4000000000u) == 10);
	setup(&f);
	/* exact durations: without PopFromBackoffQ's 1-second windows
	 * (test_queue_hints.c checks those) */
	sx_queue_set_pop_from_backoff(f.q, false);
	add(&f, pod_p("p", 0));
	for (unsigned i = 0; i < SX_ARRAY_SIZE(want); i++) {
		double exp;

		CHECK_STR(pop_name(&f, &it), "p");
		/* a move during the attempt sends it to backoffQ, not unschedulable */
		sx_queue_move_all(f.q, "NodeAdd");
		CHECK_INT(sx_queue_requeue(f.q, it.pod, true), 0);
		sx_pod_unref(it.pod);
		exp = sx_queue_backoff_expiry(f.q, sx_intern("ns"), "p");
		CHECK(exp - fake_now == want[i]);
		CHECK_STR(where(&f, "p"), "backoff");
		fake_now += want[i] - 0.5;
		sx_queue_flush(f.q);
		CHECK_STR(where(&f, "p"), "backoff");
		fake_now += 0.5;
		sx_queue_flush(f.q);
		CHECK_STR(where(&f, "p"), "active");
	}
	teardown(&f);
}

static void test_error_backoff_counts_separately(void)
{
	struct fixture f;
	struct sx_queue_item it;

	setup(&f);
	add(&f, pod_p("p", 0));
	pop_name(&f, &it);
	sx_queue_requeue(f.q, it.pod, true); /* unschedulable count 1 */
	sx_pod_unref(it.pod);
	sx_queue_move_all(f.q, "NodeAdd");
	fake_now += 1;
	sx_queue_flush(f.q);
	CHECK_STR(pop_name(&f, &it), "p");
	CHECK_INT(it.attempts, 2);
	sx_queue_requeue(f.q, it.pod, false); /* an error: goes to backoff, count 1 */
	CHECK(sx_queue_backoff_expiry(f.q, sx_intern("ns"), "p") - fake_now == 1);
	CHECK_STR(where(&f, "p"), "backoff");
	sx_pod_unref(it.pod);
	teardown(&f);
}

static void test_unschedulable_moves(void)
{
	struct fixture f;
	struct sx_queue_item it;
	struct sx_pod *node_pod;

	setup(&f);
	add(&f, pod_p("a", 0));
	add(&f, pod_p("b", 0));
	pop_name(&f, &it);
	sx_queue_requeue(f.q, it.pod, true);
	sx_pod_unref(it.pod);
	fake_now += 0.25;
	pop_name(&f, &it);
	sx_queue_requeue(f.q, it.pod, true);
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "unschedulable");
	CHECK_STR(where(&f, "b"), "unschedulable");
	/* an assigned pod update is a cluster event; still backing off -> backoffQ */
	node_pod = pod_ext("elsewhere", 0, "\"nodeName\":\"n1\"");
	sx_queue_pod_update(f.q, NULL, node_pod);
	CHECK_STR(where(&f, "a"), "backoff");
	CHECK_STR(where(&f, "b"), "backoff");
	fake_now += 1;
	CHECK_STR(pop_name(&f, &it), "a");
	sx_queue_requeue(f.q, it.pod, true);
	sx_pod_unref(it.pod);
	/* once backoff is over an event moves straight to activeQ */
	fake_now += 100;
	sx_queue_pod_delete(f.q, node_pod);
	CHECK_STR(where(&f, "a"), "active");
	sx_pod_unref(node_pod);
	teardown(&f);
}

static void test_unschedulable_flush_after_5_minutes(void)
{
	struct fixture f;
	struct sx_queue_item it;

	setup(&f);
	add(&f, pod_p("a", 0));
	pop_name(&f, &it);
	sx_queue_requeue(f.q, it.pod, true);
	sx_pod_unref(it.pod);
	fake_now += 299;
	sx_queue_flush(f.q);
	CHECK_STR(where(&f, "a"), "unschedulable");
	fake_now += 2;
	sx_queue_flush(f.q);
	CHECK_STR(where(&f, "a"), "active");
	teardown(&f);
}

static void test_deleted_in_flight_not_requeued(void)
{
	struct fixture f;
	struct sx_queue_item it;
	struct sx_queue_lengths l;

	setup(&f);
	add(&f, pod_p("a", 0));
	pop_name(&f, &it);
	sx_queue_pod_delete(f.q, it.pod);
	CHECK_INT(sx_queue_requeue(f.q, it.pod, true), SX_ENOENT);
	CHECK_STR(where(&f, "a"), "absent");
	sx_pod_unref(it.pod);
	/* an in-flight pod updated (e.g. assumed) is not queued twice */
	add(&f, pod_p("b", 0));
	pop_name(&f, &it);
	sx_queue_pod_update(f.q, it.pod, it.pod);
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.active, 0);
	CHECK_INT(l.in_flight, 1);
	sx_queue_done(f.q, it.pod);
	CHECK_STR(where(&f, "b"), "absent");
	sx_pod_unref(it.pod);
	teardown(&f);
}

static void test_nominator(void)
{
	struct fixture f;
	struct sx_nominated_set *set;
	const struct sx_pod *out[4];
	struct sx_pod *nom = pod_ext("n", 5, "\"priority\":5");
	sx_str n1 = sx_intern("n1");

	setup(&f);
	sx_pod_unref(nom);
	/* from the object's status.nominatedNodeName */
	{
		char buf[512];
		struct sx_error err = {0};
		cJSON *j;

		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"n\",\"namespace\":\"ns\"},"
			 "\"spec\":{\"priority\":5},"
			 "\"status\":{\"nominatedNodeName\":\"n1\"}}");
		j = cJSON_Parse(buf);
		nom = sx_decode_pod(j, &err);
		cJSON_Delete(j);
	}
	CHECK(nom != NULL);
	sx_queue_pod_update(f.q, NULL, nom);
	add(&f, pod_p("plain", 1));
	set = sx_queue_nominated(f.q);
	CHECK_INT(set->n, 1);
	CHECK_INT(set->nom.pods_for_node(set->nom.ctx, n1, out, 4), 1);
	CHECK_STR(out[0]->meta.name, "n");
	CHECK_INT(set->nom.pods_for_node(set->nom.ctx, sx_intern("n2"), out, 4), 0);
	sx_nominated_set_free(set);
	/* preemption nominates, assume clears */
	{
		struct sx_pod *plain = pod_p("plain", 1);

		sx_queue_nominate(f.q, plain, sx_intern("n2"));
		set = sx_queue_nominated(f.q);
		CHECK_INT(set->n, 2);
		sx_nominated_set_free(set);
		sx_queue_nominate(f.q, plain, SX_STR_EMPTY);
		sx_pod_unref(plain);
	}
	/* An assumed pod in flight is not nominated again by its own update
	 * (the binding cycle's nominatedNodeName patch): upstream ignores the
	 * updates of assumed pods. */
	{
		struct sx_queue_item in, it;
		struct sx_pod *plain = pod_p("plain", 1), *nominated;
		char buf[512];
		struct sx_error err = {0};
		cJSON *j;

		CHECK_STR(pop_name(&f, &in), "n"); /* priority 5 first */
		CHECK_STR(pop_name(&f, &it), "plain");
		sx_queue_return(f.q, in.pod);
		sx_pod_unref(in.pod);
		sx_queue_assumed(f.q, it.pod);
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"plain\",\"namespace\":\"ns\"},"
			 "\"spec\":{\"priority\":1},\"status\":{\"nominatedNodeName\":\"n1\"}}");
		j = cJSON_Parse(buf);
		nominated = sx_decode_pod(j, &err);
		cJSON_Delete(j);
		CHECK(nominated != NULL);
		sx_queue_pod_update(f.q, plain, nominated);
		set = sx_queue_nominated(f.q);
		CHECK_INT(set->n, 1); /* only "n" */
		sx_nominated_set_free(set);
		sx_queue_done(f.q, it.pod);
		sx_pod_unref(it.pod);
		sx_pod_unref(nominated);
		sx_pod_unref(plain);
	}
	/* deletion clears */
	sx_queue_pod_delete(f.q, nom);
	set = sx_queue_nominated(f.q);
	CHECK_INT(set->n, 0);
	sx_nominated_set_free(set);
	sx_pod_unref(nom);
	teardown(&f);
}

struct popper {
	struct sx_queue *q;
	int rc;
	char name[64];
};

static void *pop_thread(void *arg)
{
	struct popper *p = arg;
	struct sx_queue_item it;

	p->rc = sx_queue_pop(p->q, 10, &it);
	if (p->rc == 0) {
		snprintf(p->name, sizeof(p->name), "%s", it.pod->meta.name);
		sx_queue_done(p->q, it.pod);
		sx_pod_unref(it.pod);
	}
	return NULL;
}

static void test_blocking_pop_and_close(void)
{
	struct sx_error err = {0};
	struct sx_config *cfg;
	struct sx_queue *q;
	struct popper p = {0};
	pthread_t t;
	struct sx_pod *pod;

	sx_intern_init();
	cfg = sx_config_default(&err);
	q = sx_queue_new(cfg);
	p.q = q;
	pthread_create(&t, NULL, pop_thread, &p);
	usleep(20000);
	pod = pod_p("late", 0);
	sx_queue_pod_update(q, NULL, pod);
	sx_pod_unref(pod);
	pthread_join(t, NULL);
	CHECK_INT(p.rc, 0);
	CHECK_STR(p.name, "late");
	pthread_create(&t, NULL, pop_thread, &p);
	usleep(20000);
	sx_queue_close(q);
	pthread_join(t, NULL);
	CHECK_INT(p.rc, SX_EIO);
	sx_queue_free(q);
	sx_config_free(cfg);
}

/* Pod groups (queue_group.c): the popped member brings every queued member
 * of its group (not other groups' pods), in upstream's member order
 * (priority, then first attempt, then name); they share the group's
 * attempt count and so its backoff; scheduler_queued_entities counts a
 * group once per place and pods of no group apart. */
static struct sx_pod *member(const char *name, int prio, const char *group)
{
	char extra[128];

	snprintf(extra, sizeof(extra), "\"schedulingGroup\":{\"podGroupName\":\"%s\"}", group);
	return pod_ext(name, prio, extra);
}

static void test_pod_group_pop(void)
{
	struct fixture f;
	struct sx_queue_item it, *items = NULL;
	struct sx_queue_entities e;
	struct sx_rejectors rej = {SX_REJ_ANY, 0};
	uint32_t n = 0;

	setup(&f);
	add(&f, member("a-1", 0, "a"));
	add(&f, member("a-2", 5, "a"));
	add(&f, member("a-3", 0, "a"));
	add(&f, member("b-1", 0, "b"));
	add(&f, pod_p("solo", 0));
	sx_queue_entities(f.q, &e);
	CHECK_INT(e.groups[SX_QUEUE_ACTIVE], 2);
	CHECK_INT(e.pods[SX_QUEUE_ACTIVE], 1);
	CHECK_STR(pop_name(&f, &it), "a-2"); /* highest priority first */
	CHECK_INT(sx_queue_pop_group(f.q, &it, &items, &n), 0);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(items[0].pod->meta.name, "a-2");
		CHECK_STR(items[1].pod->meta.name, "a-1");
		CHECK_STR(items[2].pod->meta.name, "a-3");
		CHECK_INT(items[1].attempts, 1);
	}
	CHECK_STR(where(&f, "a-1"), "inflight");
	CHECK_STR(where(&f, "b-1"), "active");
	sx_queue_entities(f.q, &e);
	CHECK_INT(e.groups[SX_QUEUE_ACTIVE], 1);
	/* The group fails: every member backs off the same time. */
	for (uint32_t i = 0; i < n; i++) {
		sx_queue_requeue_rejectors(f.q, items[i].pod, &rej);
		sx_pod_unref(items[i].pod);
	}
	free(items);
	sx_pod_unref(it.pod);
	CHECK(sx_queue_backoff_expiry(f.q, sx_intern("ns"), "a-1") ==
	      sx_queue_backoff_expiry(f.q, sx_intern("ns"), "a-3"));
	sx_queue_entities(f.q, &e);
	CHECK_INT(e.groups[SX_QUEUE_UNSCHEDULABLE] + e.groups[SX_QUEUE_BACKOFF], 1);
	teardown(&f);
}

SX_TESTS(SX_TEST(test_pod_group_pop), SX_TEST(test_priority_then_arrival),
	 SX_TEST(test_ignored_pods), SX_TEST(test_gated_pod), SX_TEST(test_backoff_durations),
	 SX_TEST(test_error_backoff_counts_separately), SX_TEST(test_unschedulable_moves),
	 SX_TEST(test_unschedulable_flush_after_5_minutes),
	 SX_TEST(test_deleted_in_flight_not_requeued), SX_TEST(test_nominator),
	 SX_TEST(test_blocking_pop_and_close))
