/* The binding cycle's orchestration (binding_cycle.c sx_binding_run) with
 * test plugins: PreBindPreFlight's Skip/Error words and when it runs
 * (NominatedNodeNameForExpectation, 1.36), parallel PreBind (1.36),
 * the first failure in profile order, cancellation of a pod in PreBind,
 * preemption of a waiting pod (1.36: Error, before: rejection), the
 * Scheduled event through the handle's recorder, Unreserve on failure,
 * and the assumed-pod view of a pod (sx_pod_assumed_on). */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedext/binder.h"
#include "schedext/binding_cycle.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/framework.h"
#include "schedext/handle.h"
#include "schedext/registry.h"

/* ---------- test plugins (self: their behaviour) ---------- */

struct tp {
	const char *name;
	enum sx_code flight;	  /* PreBindPreFlight's answer (SX_SUCCESS, SX_SKIP, ...) */
	bool parallel;		  /* PreBindPreFlight allows parallel */
	const char *fail;	  /* PreBind fails with this Error message */
	struct sx_handle *cancel; /* PreBind cancels its own pod's binding */
};

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char order_log[256];
static atomic_int running, max_running;

static void log_event(const char *what)
{
	pthread_mutex_lock(&log_mu);
	strcat(order_log, what);
	pthread_mutex_unlock(&log_mu);
}

static struct sx_status *flight_tp(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				   sx_str node, bool *allow_parallel)
{
	const struct tp *t = self;

	*allow_parallel = t->parallel;
	if (t->flight == SX_SUCCESS)
		return NULL;
	return sx_status_new(t->flight, t->flight == SX_SKIP ? NULL : "boom");
}

static struct sx_status *pre_bind_tp(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, sx_str node)
{
	const struct tp *t = self;
	int now = atomic_fetch_add(&running, 1) + 1;
	int seen = atomic_load(&max_running);
	char buf[32];

	while (now > seen && !atomic_compare_exchange_weak(&max_running, &seen, now))
		;
	snprintf(buf, sizeof(buf), "P(%s)", t->name);
	log_event(buf);
	if (t->cancel) {
		CHECK(!atomic_load(&cs->pre_bind_cancelled));
		CHECK(sx_handle_cancel_pre_bind(t->cancel, pod->meta.uid,
						"preempted by DefaultPreemption"));
		/* What a waiting PreBind (VolumeBinding's) looks at. */
		CHECK(atomic_load(&cs->pre_bind_cancelled));
	}
	usleep(50000); /* long enough for parallel runs to overlap */
	atomic_fetch_sub(&running, 1);
	return t->fail ? sx_status_new(SX_ERROR, "%s", t->fail) : NULL;
}

static struct sx_status *bind_ok(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				 sx_str node)
{
	log_event("B");
	return NULL;
}

static void unreserve_log(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
			  sx_str node)
{
	log_event("U");
}

static struct sx_status *reserve_ok(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				    sx_str node)
{
	return NULL;
}

static struct sx_status *permit_wait(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, sx_str node, uint64_t *timeout_ms)
{
	*timeout_ms = 10000;
	return sx_status_new(SX_WAIT, NULL);
}

static const struct sx_plugin p_tp = {
	.name = "TP", .pre_bind_pre_flight = flight_tp, .pre_bind = pre_bind_tp};
static const struct sx_plugin p_bind = {.name = "Binder", .bind = bind_ok};
static const struct sx_plugin p_reserve = {
	.name = "Reserver", .reserve = reserve_ok, .unreserve = unreserve_log};
static const struct sx_plugin p_permit = {.name = "Gang", .permit = permit_wait};

/* ---------- fixtures ---------- */

struct events {
	int n;
	char last[512];
};

static void record(void *ctx, const char *component, const struct sx_pod *pod, const char *type,
		   const char *reason, const char *action, const char *msg)
{
	struct events *e = ctx;

	e->n++;
	snprintf(e->last, sizeof(e->last), "%s %s/%s %s %s %s: %s", component,
		 sx_str_get(pod->meta.ns), pod->meta.name, type, reason, action, msg);
}

struct fixture {
	struct sx_profile prof;
	struct sx_enabled items[SX_PT_COUNT][8];
	int next_slot;
	struct sx_binder binder;
	struct events events;
	struct sx_event_recorder recorder;
};

static void add(struct fixture *f, enum sx_point pt, const struct sx_plugin *p, const void *self)
{
	if (!f->next_slot)
		f->next_slot = sx_plugin_count;
	f->items[pt][f->prof.n[pt]] = (struct sx_enabled){p, f->next_slot++, (void *)self, 1};
	f->prof.points[pt] = f->items[pt];
	f->prof.n[pt]++;
}

/* A profile at release 1.<minor> (gates: "" or an --feature-gates value)
 * with a handle whose binder is cache-only and whose recorder counts. */
static void fixture_init(struct fixture *f, int minor, const char *gates)
{
	struct sx_error err = {0};

	memset(f, 0, sizeof(*f));
	f->prof.scheduler_name = "test";
	f->prof.percentage_of_nodes_to_score = -1;
	sx_features_init(&f->prof.features, minor);
	if (gates && *gates)
		CHECK_INT(sx_features_set(&f->prof.features, gates, &err), 0);
	f->prof.handle = sx_handle_new(&f->prof, NULL);
	f->recorder = (struct sx_event_recorder){.record = record, .ctx = &f->events};
	sx_handle_attach(f->prof.handle,
			 &(struct sx_handle_env){.binder = &f->binder, .recorder = &f->recorder});
	add(f, SX_PT_RESERVE, &p_reserve, NULL);
	order_log[0] = 0;
	atomic_store(&running, 0);
	atomic_store(&max_running, 0);
}

static void fixture_free(struct fixture *f)
{
	sx_handle_attach(f->prof.handle, NULL);
	sx_handle_free(f->prof.handle);
}

static struct sx_pod *make_pod(const char *name)
{
	char json[512];
	struct sx_error err = {0};
	cJSON *j;
	struct sx_pod *pod;

	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
		 name, name);
	j = cJSON_Parse(json);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	CHECK(pod != NULL);
	return pod;
}

/* Runs one binding cycle of a pod "p" on node "n" (Reserve and Permit
 * first); its status message, "" when bound. */
static const char *run(struct fixture *f, char *buf, size_t len)
{
	struct sx_pod *pod = make_pod("p");
	struct sx_binding b = {0};
	struct sx_status *st;

	b.prof = &f->prof;
	b.pod = pod; /* the binding's reference */
	b.node = sx_intern("n");
	b.cs = sx_cycle_state_new(NULL);
	st = sx_reserve_and_permit(&f->prof, &f->binder, b.cs, pod, b.node, &b.waiting);
	if (!st)
		st = sx_binding_run(&b);
	buf[0] = 0;
	if (st)
		sx_status_message(st, buf, len);
	sx_status_free(st);
	sx_binding_release(&b);
	return buf;
}

/* ---------- tests ---------- */

static void test_pre_flight_skip(void)
{
	struct fixture f;
	struct tp a = {.name = "A", .flight = SX_SKIP}, c = {.name = "C", .flight = SX_SUCCESS};
	char buf[512];

	fixture_init(&f, 37, "");
	add(&f, SX_PT_PRE_BIND, &p_tp, &a);
	add(&f, SX_PT_PRE_BIND, &p_tp, &c);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)), "");
	CHECK_STR(order_log, "P(C)B"); /* A skipped its PreBind */
	CHECK_INT(f.events.n, 1);
	CHECK_STR(f.events.last, "test default/p Normal Scheduled Binding: "
				 "Successfully assigned default/p to n");
	fixture_free(&f);

	/* Without the gate (1.35, NominatedNodeNameForExpectation=false) no
	 * preflight runs: every PreBind plugin is called. */
	fixture_init(&f, 35, "NominatedNodeNameForExpectation=false");
	add(&f, SX_PT_PRE_BIND, &p_tp, &a);
	add(&f, SX_PT_PRE_BIND, &p_tp, &c);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)), "");
	CHECK_STR(order_log, "P(A)P(C)B");
	fixture_free(&f);
}

static void test_pre_flight_errors(void)
{
	struct fixture f;
	struct tp err = {.name = "E", .flight = SX_ERROR},
		  rej = {.name = "R", .flight = SX_UNSCHEDULABLE};
	char buf[512];

	fixture_init(&f, 37, "");
	add(&f, SX_PT_PRE_BIND, &p_tp, &err);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)), "running PreBindPreFlight \"TP\": boom");
	CHECK_STR(order_log, "U"); /* Unreserve, nothing bound */
	CHECK_INT(f.events.n, 0);
	fixture_free(&f);

	fixture_init(&f, 37, "");
	add(&f, SX_PT_PRE_BIND, &p_tp, &rej);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)),
		  "PreBindPreFlight TP returned \"Unschedulable\", which is unsupported. It is "
		  "supposed to return Success, Skip, or Error status");
	CHECK_STR(order_log, "U");
	fixture_free(&f);
}

static void test_parallel_pre_bind(void)
{
	struct fixture f;
	struct tp a = {.name = "A", .flight = SX_SUCCESS, .parallel = true},
		  c = {.name = "C", .flight = SX_SUCCESS, .parallel = true};
	char buf[512];

	/* 1.36 and later: the two that allow it run at once. */
	for (int minor = 36; minor <= 37; minor++) {
		fixture_init(&f, minor, "");
		add(&f, SX_PT_PRE_BIND, &p_tp, &a);
		add(&f, SX_PT_PRE_BIND, &p_tp, &c);
		add(&f, SX_PT_BIND, &p_bind, NULL);
		CHECK_STR(run(&f, buf, sizeof(buf)), "");
		CHECK_INT(atomic_load(&max_running), 2);
		CHECK(strstr(order_log, "P(A)") && strstr(order_log, "P(C)"));
		CHECK(strcmp(order_log + strlen(order_log) - 1, "B") == 0); /* after both */
		fixture_free(&f);
	}
	/* 1.35: in order, one at a time. */
	fixture_init(&f, 35, "");
	add(&f, SX_PT_PRE_BIND, &p_tp, &a);
	add(&f, SX_PT_PRE_BIND, &p_tp, &c);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)), "");
	CHECK_INT(atomic_load(&max_running), 1);
	CHECK_STR(order_log, "P(A)P(C)B");
	fixture_free(&f);
}

static void test_parallel_first_failure_in_order(void)
{
	struct fixture f;
	struct tp par = {.name = "Par",
			 .flight = SX_SUCCESS,
			 .parallel = true,
			 .fail = "par failed"},
		  seq = {.name = "Seq",
			 .flight = SX_SUCCESS,
			 .parallel = false,
			 .fail = "seq failed"};
	char buf[512];

	fixture_init(&f, 37, "");
	add(&f, SX_PT_PRE_BIND, &p_tp, &par);
	add(&f, SX_PT_PRE_BIND, &p_tp, &seq);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)), "running PreBind plugin \"TP\": par failed");
	CHECK(strstr(order_log, "P(Par)") && strstr(order_log, "P(Seq)"));
	CHECK(!strchr(order_log, 'B'));
	CHECK(order_log[strlen(order_log) - 1] == 'U');
	fixture_free(&f);
}

static void test_cancel_in_pre_bind(void)
{
	struct fixture f;
	struct tp a = {.name = "A", .flight = SX_SUCCESS};
	char buf[512];

	fixture_init(&f, 37, "");
	a.cancel = f.prof.handle;
	add(&f, SX_PT_PRE_BIND, &p_tp, &a);
	add(&f, SX_PT_BIND, &p_bind, NULL);
	CHECK_STR(run(&f, buf, sizeof(buf)), "preempted by DefaultPreemption");
	CHECK_STR(order_log, "P(A)U"); /* not bound, Unreserve */
	/* Past PreBind nothing is cancellable any more. */
	CHECK(!sx_handle_cancel_pre_bind(f.prof.handle, "uid-p", "late"));
	CHECK(f.prof.handle->pre_binding == NULL);
	fixture_free(&f);
}

struct preempt_arg {
	struct sx_handle *h;
	bool v136;
	bool done;
};

static void *preempt_later(void *arg)
{
	struct preempt_arg *a = arg;

	for (int i = 0; i < 200 && !a->done; i++) {
		usleep(10000);
		a->done = a->v136 ? sx_handle_preempt_waiting(a->h, "DefaultPreemption", "uid-p",
							      "preempted")
				  : sx_handle_reject_waiting(a->h, "DefaultPreemption", "uid-p",
							     "preempted");
	}
	return NULL;
}

static void test_preempt_waiting(void)
{
	for (int v136 = 0; v136 < 2; v136++) {
		struct fixture f;
		struct tp a = {.name = "A", .flight = SX_SUCCESS};
		struct sx_pod *pod = make_pod("p");
		struct sx_binding b = {0};
		struct sx_status *st;
		struct preempt_arg arg;
		pthread_t t;
		char buf[256];

		fixture_init(&f, v136 ? 36 : 35, "");
		add(&f, SX_PT_PERMIT, &p_permit, NULL);
		add(&f, SX_PT_PRE_BIND, &p_tp, &a);
		add(&f, SX_PT_BIND, &p_bind, NULL);
		b = (struct sx_binding){.prof = &f.prof,
					.pod = pod,
					.node = sx_intern("n"),
					.cs = sx_cycle_state_new(NULL)};
		st = sx_reserve_and_permit(&f.prof, &f.binder, b.cs, pod, b.node, &b.waiting);
		CHECK(st == NULL && b.waiting != NULL);
		arg = (struct preempt_arg){f.prof.handle, v136, false};
		pthread_create(&t, NULL, preempt_later, &arg);
		st = sx_binding_run(&b);
		pthread_join(t, NULL);
		CHECK(arg.done);
		CHECK_INT(sx_status_code(st), v136 ? SX_ERROR : SX_UNSCHEDULABLE);
		CHECK_STR(sx_status_message(st, buf, sizeof(buf)),
			  v136 ? "waiting on permit for pod: preempted" : "preempted");
		CHECK_STR(st ? st->plugin : NULL, "DefaultPreemption");
		CHECK_STR(order_log, "U"); /* never in PreBind */
		/* Nobody waits any more. */
		CHECK(!sx_handle_preempt_waiting(f.prof.handle, "DefaultPreemption", "uid-p", "x"));
		sx_status_free(st);
		sx_binding_release(&b);
		fixture_free(&f);
	}
}

static void test_assumed_view(void)
{
	struct sx_pod *pod = make_pod("p");
	struct sx_pod *v = sx_pod_assumed_on(pod, sx_intern("node-1"));
	struct sx_pod *vv;

	CHECK(v != NULL);
	CHECK(pod->node_name == SX_STR_EMPTY);
	CHECK_STR(sx_str_get(v->node_name), "node-1");
	CHECK_STR(v->meta.name, "p");
	CHECK(v->meta.name == pod->meta.name); /* shared, not copied */
	vv = sx_pod_assumed_on(v, sx_intern("node-2"));
	CHECK(vv && vv->view_of == pod);
	sx_pod_unref(pod); /* the views keep it */
	CHECK_STR(vv->meta.uid, "uid-p");
	sx_pod_unref(v);
	sx_pod_unref(vv);
}

SX_TESTS(SX_TEST(test_pre_flight_skip), SX_TEST(test_pre_flight_errors),
	 SX_TEST(test_parallel_pre_bind), SX_TEST(test_parallel_first_failure_in_order),
	 SX_TEST(test_cancel_in_pre_bind), SX_TEST(test_preempt_waiting),
	 SX_TEST(test_assumed_view))
