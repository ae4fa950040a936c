/* The standalone loop's event recorder (src/standalone/events.c) against a
 * recording sink and a fake clock: client-go's series (create, patch of
 * count 2, later counts at refresh and finish), the per-object spam
 * filter, recordEvent's retries and refusals, and shutdown counting. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/standalone/events.h"
#include "harness.h"
#include "schedext/common.h"
#include "schedext/intern.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/model.h"

#define MAX_WRITES 256

struct write {
	bool patch;
	int count;
	char name[300], reason[64], instance[200], pod[64];
};

static struct {
	pthread_mutex_t mu;
	struct write w[MAX_WRITES];
	unsigned n, calls;
	int fail_next[16]; /* codes returned by the next calls (0 ends) */
	unsigned delay_us;
} sink = {.mu = PTHREAD_MUTEX_INITIALIZER};

static atomic_llong clock_us = 1700000000000000LL;

static double fake_now(void)
{
	return (double)atomic_load(&clock_us) / 1e6;
}

static void advance(double s)
{
	atomic_fetch_add(&clock_us, (long long)(s * 1e6));
}

static int sink_write(void *ctx, const struct sx_kube_event *ev, bool patch, struct sx_error *err)
{
	int rc = 0;

	if (sink.delay_us)
		usleep(sink.delay_us);
	pthread_mutex_lock(&sink.mu);
	sink.calls++;
	if (sink.fail_next[0]) {
		rc = sink.fail_next[0];
		memmove(sink.fail_next, sink.fail_next + 1, sizeof(sink.fail_next) - sizeof(int));
		sink.fail_next[15] = 0;
	} else if (sink.n < MAX_WRITES) {
		struct write *w = &sink.w[sink.n++];

		w->patch = patch;
		w->count = ev->series_count;
		snprintf(w->name, sizeof(w->name), "%s", ev->name);
		snprintf(w->reason, sizeof(w->reason), "%s", ev->reason);
		snprintf(w->instance, sizeof(w->instance), "%s", ev->instance);
		snprintf(w->pod, sizeof(w->pod), "%s", ev->pod_name);
	}
	pthread_mutex_unlock(&sink.mu);
	if (rc)
		sx_error_set(err, rc, "injected %d", rc);
	return rc;
}

static void sink_reset(void)
{
	pthread_mutex_lock(&sink.mu);
	memset(sink.w, 0, sizeof(sink.w));
	memset(sink.fail_next, 0, sizeof(sink.fail_next));
	sink.n = sink.calls = 0;
	sink.delay_us = 0;
	pthread_mutex_unlock(&sink.mu);
}

static unsigned writes(void)
{
	unsigned n;

	pthread_mutex_lock(&sink.mu);
	n = sink.n;
	pthread_mutex_unlock(&sink.mu);
	return n;
}

/* Waits until the senders have nothing queued and n writes arrived. */
static bool settle(struct sx_events *ev, unsigned n)
{
	for (int i = 0; i < 2000; i++) {
		if (sx_events_queued(ev) == 0 && writes() >= n) {
			usleep(2000); /* a write that should not come would show up */
			return writes() == n;
		}
		usleep(1000);
	}
	return false;
}

static struct sx_metrics *new_metrics(void)
{
	struct sx_metrics *m = sx_metrics_new();

	sx_metrics_define(m, "schedext_events_dropped_total", SX_METRIC_COUNTER, "Drops.", NULL, 0);
	return m;
}

static struct sx_events *start(struct sx_metrics *m)
{
	struct sx_error err = {0};
	struct sx_events *ev;

	sink_reset();
	ev = sx_events_start(&(struct sx_events_opts){.metrics = m,
						      .host = "h1",
						      .write = sink_write,
						      .now = fake_now,
						      .retry_s = 0.01},
			     &err);
	CHECK(ev != NULL);
	return ev;
}

static void make_pod(struct sx_pod *p, char *name, char *uid)
{
	memset(p, 0, sizeof(*p));
	p->meta.name = name;
	p->meta.uid = uid;
	p->meta.ns = sx_intern("work");
}

static void emit_failed(struct sx_events *ev, const struct sx_pod *p, const char *msg)
{
	sx_events_emit(ev, p, "Warning", "FailedScheduling", "Scheduling", msg,
		       "default-scheduler");
}

static void test_series_counts_repeats(void)
{
	struct sx_metrics *m = new_metrics();
	struct sx_events *ev = start(m);
	struct sx_pod p;

	make_pod(&p, "web", "u1");
	emit_failed(ev, &p, "0/3 nodes are available: 3 Insufficient cpu.");
	CHECK(settle(ev, 1));
	/* The note is not part of eventKey: a new message is a repeat. */
	advance(1);
	emit_failed(ev, &p, "0/4 nodes are available: 4 Insufficient cpu.");
	CHECK(settle(ev, 2));
	for (int i = 0; i < 5; i++) {
		advance(1);
		emit_failed(ev, &p, "again");
	}
	CHECK(settle(ev, 2)); /* counted, not sent */
	CHECK(!sink.w[0].patch && sink.w[0].count == 0);
	CHECK_STR(sink.w[0].instance, "default-scheduler-h1");
	CHECK(sink.w[1].patch && sink.w[1].count == 2);
	CHECK_STR(sink.w[1].name, sink.w[0].name);
	CHECK(strncmp(sink.w[0].name, "web.", 4) == 0);
	/* A repeat every 5 minutes keeps the series open (finishTime is 6);
	 * refreshExistingEventSeries at 30 minutes writes its count, 13. */
	for (int i = 0; i < 6; i++) {
		advance(5 * 60);
		emit_failed(ev, &p, "again");
		sx_events_housekeep(ev);
		CHECK(settle(ev, i < 5 ? 2 : 3));
	}
	CHECK(sink.w[2].patch && sink.w[2].count == 13);
	/* One more, then 6 minutes of quiet: finishSeries writes count 14
	 * and forgets the series, so the next one is a new event. */
	emit_failed(ev, &p, "again");
	advance(6 * 60 + 1);
	sx_events_housekeep(ev);
	CHECK(settle(ev, 4));
	CHECK(sink.w[3].patch && sink.w[3].count == 14);
	emit_failed(ev, &p, "later");
	CHECK(settle(ev, 5));
	CHECK(!sink.w[4].patch && sink.w[4].count == 0);
	CHECK(strcmp(sink.w[4].name, sink.w[0].name) != 0);
	/* Another reason is another event. */
	sx_events_emit(ev, &p, "Normal", "Scheduled", "Binding", "Successfully assigned",
		       "default-scheduler");
	CHECK(settle(ev, 6));
	CHECK_STR(sink.w[5].reason, "Scheduled");
	CHECK_INT(sx_events_stop(ev, 1), 0);
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total", "reason=\"shutdown\"") == 0);
	sx_metrics_free(m);
}

static void test_spam_filter_per_object(void)
{
	struct sx_metrics *m = new_metrics();
	struct sx_events *ev = start(m);
	struct sx_pod p, q;
	char reason[32];

	make_pod(&p, "web", "u1");
	make_pod(&q, "db", "u2");
	/* 26 different events about one pod: 25 pass (defaultSpamBurst). */
	for (int i = 0; i < 26; i++) {
		snprintf(reason, sizeof(reason), "Reason%d", i);
		sx_events_emit(ev, &p, "Normal", reason, "Act", "m", "default-scheduler");
	}
	CHECK(settle(ev, 25));
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total", "reason=\"spam_filter\"") == 1);
	/* Another pod has its own bucket. */
	sx_events_emit(ev, &q, "Normal", "Reason0", "Act", "m", "default-scheduler");
	CHECK(settle(ev, 26));
	/* A repeat joins its series: not a new object, not filtered. */
	sx_events_emit(ev, &p, "Normal", "Reason3", "Act", "m", "default-scheduler");
	CHECK(settle(ev, 27));
	CHECK(sink.w[26].patch && sink.w[26].count == 2);
	/* Refilled at one per 5 minutes. */
	advance(300);
	sx_events_emit(ev, &p, "Normal", "Fresh1", "Act", "m", "default-scheduler");
	sx_events_emit(ev, &p, "Normal", "Fresh2", "Act", "m", "default-scheduler");
	CHECK(settle(ev, 28));
	CHECK_STR(sink.w[27].reason, "Fresh1");
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total", "reason=\"spam_filter\"") == 2);
	sx_events_stop(ev, 1);
	sx_metrics_free(m);
}

static void test_retries_and_refusals(void)
{
	struct sx_metrics *m = new_metrics();
	struct sx_events *ev = start(m);
	struct sx_pod p, q, r;

	make_pod(&p, "a", "u1");
	make_pod(&q, "b", "u2");
	make_pod(&r, "c", "u3");
	/* Unreachable twice, then through: sent once. */
	pthread_mutex_lock(&sink.mu);
	sink.fail_next[0] = sink.fail_next[1] = SX_EIO;
	pthread_mutex_unlock(&sink.mu);
	emit_failed(ev, &p, "x");
	CHECK(settle(ev, 1));
	CHECK_INT(sink.calls, 3);
	/* Refused (422): dropped at once, counted. */
	pthread_mutex_lock(&sink.mu);
	sink.fail_next[0] = SX_EINVAL;
	pthread_mutex_unlock(&sink.mu);
	emit_failed(ev, &q, "x");
	CHECK(settle(ev, 1));
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total", "reason=\"rejected\"") == 1);
	/* A series patch whose event is gone (404) creates it with the series. */
	pthread_mutex_lock(&sink.mu);
	sink.fail_next[0] = SX_ENOENT;
	pthread_mutex_unlock(&sink.mu);
	emit_failed(ev, &p, "y");
	CHECK(settle(ev, 2));
	CHECK(!sink.w[1].patch && sink.w[1].count == 2);
	/* Twelve failures: the retry limit. */
	pthread_mutex_lock(&sink.mu);
	for (int i = 0; i < 12; i++)
		sink.fail_next[i] = SX_EIO;
	pthread_mutex_unlock(&sink.mu);
	emit_failed(ev, &r, "z");
	for (int i = 0; i < 200 && sx_metrics_value(m, "schedext_events_dropped_total",
						    "reason=\"retries_exhausted\"") == 0;
	     i++)
		usleep(5000);
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total",
			       "reason=\"retries_exhausted\"") == 1);
	CHECK_INT(writes(), 2);
	sx_events_stop(ev, 1);
	sx_metrics_free(m);
}

static void test_stop_counts_what_is_queued(void)
{
	struct sx_metrics *m = new_metrics();
	struct sx_events *ev = start(m);
	char names[300][16];
	struct sx_pod p;
	double t0;
	unsigned left;

	sink.delay_us = 20000; /* 20 ms a write, 4 senders: ~200/s */
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		make_pod(&p, names[i], names[i]);
		sx_events_emit(ev, &p, "Normal", "Scheduled", "Binding", "ok", "default-scheduler");
	}
	t0 = sx_now_s();
	left = sx_events_stop(ev, 0.2);
	CHECK(sx_now_s() - t0 < 1.0);
	CHECK(left > 0 && left < 300);
	CHECK_INT(left + writes(), 300);
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total", "reason=\"shutdown\"") == left);
	sx_metrics_free(m);
}

static void test_burst_is_not_dropped(void)
{
	struct sx_metrics *m = new_metrics();
	struct sx_events *ev = start(m);
	static char names[5000][16];
	struct sx_pod p;

	for (int i = 0; i < 5000; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		make_pod(&p, names[i], names[i]);
		sx_events_emit(ev, &p, "Normal", "Scheduled", "Binding", "ok", "default-scheduler");
	}
	CHECK_INT(sx_events_stop(ev, 30), 0);
	pthread_mutex_lock(&sink.mu);
	CHECK_INT(sink.calls, 5000);
	pthread_mutex_unlock(&sink.mu);
	CHECK(sx_metrics_value(m, "schedext_events_dropped_total", "reason=\"queue_full\"") == 0);
	sx_metrics_free(m);
}

/* The series cache keeps the SX_EVENTS_CACHE_CAP most recent events: past
 * it the oldest is forgotten (its repeat is a new event), the newest still
 * counts repeats. */
static void test_series_cache_is_bounded(void)
{
	struct sx_metrics *m = new_metrics();
	struct sx_events *ev = start(m);
	static char names[SX_EVENTS_CACHE_CAP + 1][16];
	struct sx_pod p;
	unsigned calls = 0;

	for (int i = 0; i <= SX_EVENTS_CACHE_CAP; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		make_pod(&p, names[i], names[i]);
		sx_events_emit(ev, &p, "Normal", "Scheduled", "Binding", "ok", "default-scheduler");
	}
	for (int i = 0; i < 5000 && calls < SX_EVENTS_CACHE_CAP + 1; i++) {
		usleep(1000);
		pthread_mutex_lock(&sink.mu);
		calls = sink.calls;
		pthread_mutex_unlock(&sink.mu);
	}
	CHECK_INT(calls, SX_EVENTS_CACHE_CAP + 1);
	sink_reset();
	make_pod(&p, names[0], names[0]);
	sx_events_emit(ev, &p, "Normal", "Scheduled", "Binding", "ok", "default-scheduler");
	CHECK(settle(ev, 1));
	CHECK(!sink.w[0].patch);
	make_pod(&p, names[SX_EVENTS_CACHE_CAP], names[SX_EVENTS_CACHE_CAP]);
	sx_events_emit(ev, &p, "Normal", "Scheduled", "Binding", "ok", "default-scheduler");
	CHECK(settle(ev, 2));
	CHECK(sink.w[1].patch && sink.w[1].count == 2);
	sx_events_stop(ev, 1);
	sx_metrics_free(m);
}

SX_TESTS(SX_TEST(test_series_counts_repeats), SX_TEST(test_spam_filter_per_object),
	 SX_TEST(test_retries_and_refusals), SX_TEST(test_stop_counts_what_is_queued),
	 SX_TEST(test_burst_is_not_dropped), SX_TEST(test_series_cache_is_bounded))
