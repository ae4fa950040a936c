/* Queueing hints in the scheduling queue (scheduling_queue.go): rejector
 * plugins recorded from a real failed cycle, events that move only the
 * pods one of their rejectors' hints says Queue for (5,000 pods rejected by
 * NodeResourcesFit: a label change moves none, a big node moves all),
 * in-flight events replayed at requeue, Pending rejectors moving at once,
 * and PopFromBackoffQ. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/decode.h"
#include "schedext/queue.h"
#include "schedext/registry.h"

#define BIT(name) (1ull << sx_plugin_index(name))

static double fake_now;

static double clock_fn(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static struct sx_pod *make_pod(const char *name, const char *spec)
{
	char buf[2048];
	struct sx_error err = {0};
	struct sx_pod *pod;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"u-%s\"},"
		 "\"spec\":{%s}}",
		 name, name, spec ? spec : "");
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	if (!pod)
		fprintf(stderr, "decode %s: %s\n", buf, err.msg);
	return pod;
}

/* A node with cpu (millicores) and labels JSON ("" for none). */
static struct sx_node *make_node(const char *name, int cpu_m, const char *labels)
{
	char buf[1024];
	struct sx_error err = {0};
	struct sx_node *node;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},\"status\":{\"allocatable\":"
		 "{\"cpu\":\"%dm\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
		 name, labels ? labels : "", cpu_m);
	j = cJSON_Parse(buf);
	node = sx_decode_node(j, &err);
	cJSON_Delete(j);
	if (!node)
		fprintf(stderr, "decode %s: %s\n", buf, err.msg);
	return node;
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

static const char *where(struct fixture *f, const char *name)
{
	const char *w = sx_queue_where(f->q, sx_intern("ns"), name);

	return w ? w : "absent";
}

/* Runs one real cycle of pod on a 1-cpu node and returns its rejectors. */
static struct sx_rejectors rejectors_of(struct fixture *f, const struct sx_pod *pod)
{
	struct sx_cache *cache = sx_cache_new();
	struct sx_node *node = make_node("small", 1000, "\"zone\":\"a\"");
	struct sx_object obj = {SX_KIND_NODE, node};
	struct sx_cycle_opts opts = {.mode = SX_CYCLE_FULL, .percentage = 100};
	struct sx_cycle_result res;
	struct sx_rejectors r = {0, 0};

	sx_cache_upsert(cache, &obj);
	opts.snap = sx_cache_snapshot(cache);
	CHECK_INT(sx_schedule(f->cfg->profiles[0], pod, &opts, &res), 0);
	CHECK(res.selected < 0);
	sx_rejectors_from_result(&r, &res);
	sx_cycle_result_free(&res);
	sx_snapshot_unref(opts.snap);
	sx_cache_free(cache);
	return r;
}

/* Adds n pods asking 2 cpus, pops each and requeues it with rej. */
static void fill_unschedulable(struct fixture *f, unsigned n, const struct sx_rejectors *rej)
{
	char name[32];

	for (unsigned i = 0; i < n; i++) {
		struct sx_pod *pod;

		snprintf(name, sizeof(name), "p%05u", i);
		pod = make_pod(name, "\"containers\":[{\"name\":\"c\",\"resources\":"
				     "{\"requests\":{\"cpu\":\"2\"}}}]");
		sx_queue_pod_update(f->q, NULL, pod);
		sx_pod_unref(pod);
	}
	for (unsigned i = 0; i < n; i++) {
		struct sx_queue_item it;

		CHECK_INT(sx_queue_pop(f->q, 0, &it), 0);
		CHECK_INT(sx_queue_requeue_rejectors(f->q, it.pod, rej), 0);
		sx_pod_unref(it.pod);
	}
}

static void test_fit_rejected_5000(void)
{
	struct fixture f;
	struct sx_queue_lengths l;
	struct sx_queue_stats st0, st1, st2;
	struct sx_pod *probe = make_pod("probe", "\"containers\":[{\"name\":\"c\",\"resources\":"
						 "{\"requests\":{\"cpu\":\"2\"}}}]");
	struct sx_node *small = make_node("small", 1000, "\"zone\":\"a\"");
	struct sx_node *relabeled = make_node("small", 1000, "\"zone\":\"b\"");
	struct sx_node *big = make_node("big", 64000, "");
	struct sx_rejectors rej;

	setup(&f);
	rej = rejectors_of(&f, probe);
	CHECK(rej.unschedulable == BIT("NodeResourcesFit"));
	CHECK(rej.pending == 0);
	fill_unschedulable(&f, 5000, &rej);
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.unschedulable, 5000);
	sx_queue_stats(f.q, &st0);
	/* a label change: NodeResourcesFit does not register UpdateNodeLabel */
	sx_queue_node_event(f.q, small, relabeled);
	sx_queue_stats(f.q, &st1);
	CHECK_INT((int)(st1.moved - st0.moved), 0);
	CHECK_INT((int)(st1.hint_calls - st0.hint_calls), 0);
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.unschedulable, 5000);
	/* a node too small is added: the hint says QueueSkip */
	sx_queue_node_event(f.q, NULL, small);
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.unschedulable, 5000);
	/* a node where 2 cpus fit: every pod moves (still backing off) */
	sx_queue_node_event(f.q, NULL, big);
	sx_queue_stats(f.q, &st2);
	CHECK_INT((int)(st2.moved - st1.moved), 5000);
	sx_queue_lengths(f.q, &l);
	CHECK_INT(l.unschedulable, 0);
	CHECK_INT(l.backoff, 5000);
	sx_node_unref(small);
	sx_node_unref(relabeled);
	sx_node_unref(big);
	sx_pod_unref(probe);
	teardown(&f);
}

/* Allocatable growing on an existing node is UpdateNodeAllocatable. */
static void test_fit_allocatable_growth(void)
{
	struct fixture f;
	struct sx_rejectors rej = {BIT("NodeResourcesFit"), 0};
	struct sx_node *small = make_node("n", 1000, ""), *grown = make_node("n", 4000, "");

	setup(&f);
	fill_unschedulable(&f, 3, &rej);
	sx_queue_node_event(f.q, grown, small); /* shrinking: nothing */
	CHECK_STR(where(&f, "p00000"), "unschedulable");
	sx_queue_node_event(f.q, small, grown);
	CHECK_STR(where(&f, "p00000"), "backoff");
	CHECK_STR(where(&f, "p00002"), "backoff");
	sx_node_unref(small);
	sx_node_unref(grown);
	teardown(&f);
}

/* A pod rejected by TaintToleration ignores assigned-pod deletions; one
 * rejected by NodeResourcesFit moves on them. */
static void test_only_rejectors_hints_count(void)
{
	struct fixture f;
	struct sx_rejectors fit = {BIT("NodeResourcesFit"), 0};
	struct sx_rejectors taint = {BIT("TaintToleration"), 0};
	struct sx_queue_item it;
	struct sx_pod *a = make_pod("a", NULL), *b = make_pod("b", NULL);
	struct sx_pod *gone = make_pod("gone", "\"nodeName\":\"n1\"");

	setup(&f);
	sx_queue_pod_update(f.q, NULL, a);
	sx_queue_pod_update(f.q, NULL, b);
	sx_queue_pop(f.q, 0, &it);
	sx_queue_requeue_rejectors(f.q, it.pod, &fit);
	sx_pod_unref(it.pod);
	sx_queue_pop(f.q, 0, &it);
	sx_queue_requeue_rejectors(f.q, it.pod, &taint);
	sx_pod_unref(it.pod);
	fake_now += 100;
	sx_queue_pod_delete(f.q, gone);
	CHECK_STR(where(&f, "a"), "active");
	CHECK_STR(where(&f, "b"), "unschedulable");
	sx_pod_unref(a);
	sx_pod_unref(b);
	sx_pod_unref(gone);
	teardown(&f);
}

/* An event during the attempt is replayed when the pod fails: a useful
 * one sends it to backoffQ, a useless one leaves it unschedulable. */
static void test_in_flight_events_replayed(void)
{
	struct fixture f;
	struct sx_rejectors fit = {BIT("NodeResourcesFit"), 0};
	struct sx_queue_item it;
	struct sx_pod *a = make_pod("a", "\"containers\":[{\"name\":\"c\",\"resources\":"
					 "{\"requests\":{\"cpu\":\"2\"}}}]");
	struct sx_node *big = make_node("big", 64000, ""), *tiny = make_node("tiny", 500, "");

	setup(&f);
	sx_queue_pod_update(f.q, NULL, a);
	CHECK_INT(sx_queue_pop(f.q, 0, &it), 0);
	sx_queue_node_event(f.q, NULL, tiny); /* while in flight: useless */
	sx_queue_requeue_rejectors(f.q, it.pod, &fit);
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "unschedulable");
	fake_now += 100;
	sx_queue_flush(f.q);
	CHECK_INT(sx_queue_pop(f.q, 0, &it), SX_ENOENT);
	sx_queue_activate(f.q, a);
	CHECK_INT(sx_queue_pop(f.q, 0, &it), 0);
	sx_queue_node_event(f.q, NULL, big); /* while in flight: useful */
	sx_queue_requeue_rejectors(f.q, it.pod, &fit);
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "backoff");
	sx_node_unref(big);
	sx_node_unref(tiny);
	sx_pod_unref(a);
	teardown(&f);
}

/* The pod's own update during its attempt is replayed too: a toleration
 * added meanwhile answers its TaintToleration rejection. */
static void test_own_update_in_flight(void)
{
	struct fixture f;
	struct sx_rejectors taint = {BIT("TaintToleration"), 0};
	struct sx_queue_item it;
	struct sx_pod *a = make_pod("a", NULL);
	struct sx_pod *tol = make_pod("a", "\"tolerations\":[{\"operator\":\"Exists\"}]");

	setup(&f);
	sx_queue_pod_update(f.q, NULL, a);
	CHECK_INT(sx_queue_pop(f.q, 0, &it), 0);
	sx_queue_pod_update(f.q, a, tol);
	sx_queue_requeue_rejectors(f.q, it.pod, &taint);
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "backoff");
	sx_pod_unref(a);
	sx_pod_unref(tol);
	teardown(&f);
}

/* A Pending rejector whose hint says Queue skips the backoff; an error
 * (no rejector) moves on any event. */
static void test_pending_and_error(void)
{
	struct fixture f;
	struct sx_rejectors pend = {0, BIT("NodeResourcesFit")};
	struct sx_queue_item it;
	struct sx_pod *a = make_pod("a", NULL);
	struct sx_node *big = make_node("big", 64000, "");

	setup(&f);
	sx_queue_pod_update(f.q, NULL, a);
	sx_queue_pop(f.q, 0, &it);
	sx_queue_requeue_rejectors(f.q, it.pod, &pend);
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "unschedulable");
	sx_queue_node_event(f.q, NULL, big);
	CHECK_STR(where(&f, "a"), "active"); /* backing off, yet activeQ */
	sx_queue_pop(f.q, 0, &it);
	sx_queue_requeue_rejectors(f.q, it.pod, NULL); /* an error */
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "backoff");
	sx_node_unref(big);
	sx_pod_unref(a);
	teardown(&f);
}

/* SchedulerPopFromBackoffQ: with activeQ empty the rejected pod in
 * backoff is popped at once; an error-backoff pod is not. */
static void test_pop_from_backoff(void)
{
	struct fixture f;
	struct sx_rejectors any = {SX_REJ_ANY, 0};
	struct sx_queue_item it;
	struct sx_queue_stats st;
	struct sx_pod *a = make_pod("a", NULL);
	struct sx_node *n = make_node("n", 1000, "");

	setup(&f);
	sx_queue_pod_update(f.q, NULL, a);
	sx_queue_pop(f.q, 0, &it);
	sx_queue_requeue_rejectors(f.q, it.pod, &any);
	sx_pod_unref(it.pod);
	sx_queue_node_event(f.q, NULL, n);
	CHECK_STR(where(&f, "a"), "backoff");
	CHECK_INT(sx_queue_pop(f.q, 0, &it), 0);
	CHECK_STR(it.pod->meta.name, "a");
	sx_queue_stats(f.q, &st);
	CHECK_INT((int)st.backoff_pops, 1);
	sx_queue_requeue_rejectors(f.q, it.pod, NULL);
	sx_pod_unref(it.pod);
	CHECK_STR(where(&f, "a"), "backoff");
	CHECK_INT(sx_queue_pop(f.q, 0, &it), SX_ENOENT);
	/* with the gate off, a rejected pod waits out its backoff */
	sx_queue_set_pop_from_backoff(f.q, false);
	fake_now += 1;
	CHECK_INT(sx_queue_pop(f.q, 0, &it), 0);
	sx_queue_requeue_rejectors(f.q, it.pod, &any);
	sx_pod_unref(it.pod);
	sx_queue_node_event(f.q, NULL, n);
	CHECK_STR(where(&f, "a"), "backoff");
	CHECK_INT(sx_queue_pop(f.q, 0, &it), SX_ENOENT);
	sx_node_unref(n);
	sx_pod_unref(a);
	teardown(&f);
}

/* With PopFromBackoffQ the expiry is truncated to its second and the pod
 * backs off while that window is not before now's: failing at 1000.3 with
 * 1 s of backoff, it is still backing off at 1001.99 and done at 1002. */
static void test_backoff_windows(void)
{
	struct fixture f;
	struct sx_queue_item it;
	struct sx_pod *a = make_pod("a", NULL);

	setup(&f);
	fake_now = 1000.3;
	sx_queue_pod_update(f.q, NULL, a);
	sx_queue_pop(f.q, 0, &it);
	sx_queue_requeue_rejectors(f.q, it.pod, NULL); /* an error: never popped early */
	sx_pod_unref(it.pod);
	fake_now = 1001.99;
	sx_queue_flush(f.q);
	CHECK_STR(where(&f, "a"), "backoff");
	fake_now = 1002.0;
	sx_queue_flush(f.q);
	CHECK_STR(where(&f, "a"), "active");
	sx_pod_unref(a);
	teardown(&f);
}

/* Gated by SchedulingGates: node events never look at it; removing the
 * gates (its own update) releases it. */
static void test_scheduling_gates_events(void)
{
	struct fixture f;
	struct sx_pod *g = make_pod("g", "\"schedulingGates\":[{\"name\":\"x\"}]");
	struct sx_pod *open = make_pod("g", NULL);
	struct sx_node *n = make_node("n", 1000, "");
	struct sx_queue_stats st;

	setup(&f);
	sx_queue_pod_update(f.q, NULL, g);
	CHECK_STR(where(&f, "g"), "gated");
	sx_queue_node_event(f.q, NULL, n);
	sx_queue_stats(f.q, &st);
	CHECK_INT((int)st.hint_calls, 0);
	CHECK_STR(where(&f, "g"), "gated");
	sx_queue_pod_update(f.q, g, open);
	CHECK_STR(where(&f, "g"), "active");
	sx_node_unref(n);
	sx_pod_unref(g);
	sx_pod_unref(open);
	teardown(&f);
}

SX_TESTS(SX_TEST(test_fit_rejected_5000), SX_TEST(test_fit_allocatable_growth),
	 SX_TEST(test_only_rejectors_hints_count), SX_TEST(test_in_flight_events_replayed),
	 SX_TEST(test_pending_and_error), SX_TEST(test_pop_from_backoff),
	 SX_TEST(test_scheduling_gates_events), SX_TEST(test_own_update_in_flight),
	 SX_TEST(test_backoff_windows))
