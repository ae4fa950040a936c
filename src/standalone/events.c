/* Pod events of the standalone loop (events.h): client-go's events.k8s.io
 * broadcaster (k8s.io/client-go/tools/events/event_broadcaster.go) with
 * tools/record's per-object spam filter, over bounded queues drained by a
 * few sender threads that share the event client's token bucket. */
#include "events.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedext/common.h"
#include "schedext/hmap.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/model.h"

/* tools/events event_broadcaster.go: maxTriesPerEvent, finishTime,
 * refreshTime, defaultSleepDuration. */
#define MAX_TRIES 12
#define FINISH_S  (6 * 60.0)
#define REFRESH_S (30 * 60.0)
#define RETRY_S	  10.0
/* tools/record events_cache.go: defaultSpamBurst, defaultSpamQPS. */
#define SPAM_BURST 25.0
#define SPAM_QPS   (1.0 / 300.0)
/* Enough senders to keep several requests in flight against an API
 * server's latency (client-go sends each event from its own goroutine);
 * the client's token bucket, not their number, sets the rate. */
#define DEFAULT_SENDERS	 4
#define MAX_SENDERS	 16
#define DROP_LOG_EVERY_S 10.0
#define NAME_MAX_LEN	 300 /* "<pod name (<= 253)>.<16 hex digits>" */

/* The strings of one event, in one allocation (block). */
struct fields {
	char *block;
	const char *ns, *pod, *uid, *type, *reason, *action, *message, *component;
};

struct lru_node {
	struct lru_node *prev, *next;
	uint64_t hash; /* sx_hash_str(key) */
	char *key;
};

/* Hash map with least-recently-used order (groupcache's lru.Cache): the
 * project's hash table (bounded at SX_EVENTS_CACHE_CAP + 1: an entry is
 * added before the oldest is evicted) over an intrusive list. */
struct lru {
	struct sx_hmap map;   /* hash -> struct lru_node * */
	struct lru_node head; /* head.next: most recent */
	unsigned n;
};

/* An event sent (or being sent) whose isomorphic repeats are counted:
 * eventBroadcasterImpl.eventCache's value. */
struct series {
	struct lru_node node; /* first: the lru's node is the entry */
	struct fields f;
	char name[NAME_MAX_LEN];
	char event_time[40];
	double event_time_s, last_observed_s;
	int32_t count;	    /* 0: a single event so far, else series.count */
	int32_t sent_count; /* the count last handed to a sender */
};

/* The spam filter's token bucket about one object. */
struct spam {
	struct lru_node node;
	double tokens, last;
};

struct job {
	struct job *next;
	bool patch;    /* a series patch, else a create */
	int32_t count; /* series.count; 0: none */
	char name[NAME_MAX_LEN];
	char event_time[40], last_observed[40];
	struct fields f;
};

struct shard {
	struct sx_events *ev;
	unsigned index;
	pthread_t thread;
	pthread_cond_t cond;
	struct job *head, *tail;
	unsigned seed;
};

enum drop_reason {
	DROP_QUEUE_FULL,
	DROP_SPAM,
	DROP_REJECTED,
	DROP_RETRIES,
	DROP_SHUTDOWN,
	DROP_REASONS
};

static const char *const drop_names[DROP_REASONS] = {
	"queue_full", "spam_filter", "rejected", "retries_exhausted", "shutdown",
};

struct sx_events {
	struct sx_events_opts o;
	char host[256];
	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t idle;
	struct shard shards[MAX_SENDERS];
	unsigned nshards, started;
	unsigned queued, busy, abandoned;
	bool stop_now;
	struct lru series, spam;
	double last_finish, last_refresh;
	uint64_t last_name_ns;
	uint64_t dropped[DROP_REASONS];
	/* schedext_events_dropped_total, found at the first drop: the loop
	 * declares it (sched_metrics.c) after starting the sender */
	struct sx_metric *dropped_total;
	double drop_logged[DROP_REASONS]; /* when the last drop line was written */
};

/* ---------- helpers ---------- */

static double real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double ev_now(const struct sx_events *ev)
{
	return ev->o.now ? ev->o.now() : real_now();
}

/* metav1.MicroTime's wire form of t (unix seconds). */
static void micro_time(double t, char out[40])
{
	time_t s = (time_t)t;
	long us = (long)((t - (double)s) * 1e6);
	struct tm tm;
	char base[32];

	if (us > 999999)
		us = 999999;
	gmtime_r(&s, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 40, "%.19s.%06dZ", base, (int)us);
}

/* Copies the eight strings into one block; false when out of memory. */
static bool fields_pack(struct fields *f, const char *const src[8])
{
	size_t len[8], total = 0;
	const char **dst[8] = {&f->ns,	   &f->pod,    &f->uid,	    &f->type,
			       &f->reason, &f->action, &f->message, &f->component};
	char *p;

	for (int i = 0; i < 8; i++)
		total += (len[i] = strlen(src[i] ? src[i] : "")) + 1;
	p = f->block = malloc(total);
	if (!p)
		return false;
	for (int i = 0; i < 8; i++) {
		memcpy(p, src[i] ? src[i] : "", len[i] + 1);
		*dst[i] = p;
		p += len[i] + 1;
	}
	return true;
}

static bool fields_copy(struct fields *dst, const struct fields *src)
{
	const char *s[8] = {src->ns,	 src->pod,    src->uid,	    src->type,
			    src->reason, src->action, src->message, src->component};

	return fields_pack(dst, s);
}

/* ---------- lru ---------- */

static void lru_init(struct lru *l)
{
	sx_hmap_init(&l->map, SX_EVENTS_CACHE_CAP + 1);
	l->head.prev = l->head.next = &l->head;
	l->n = 0;
}

static bool node_has_key(uint64_t val, const void *key)
{
	return strcmp(((const struct lru_node *)(uintptr_t)val)->key, key) == 0;
}

static bool node_is(uint64_t val, const void *node)
{
	return (const void *)(uintptr_t)val == node;
}

static void list_unlink(struct lru_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

static void list_push_front(struct lru *l, struct lru_node *n)
{
	n->next = l->head.next;
	n->prev = &l->head;
	l->head.next->prev = n;
	l->head.next = n;
}

/* The entry for key (now the most recent), or NULL. */
static struct lru_node *lru_get(struct lru *l, const char *key, uint64_t hash)
{
	struct lru_node *n = sx_hmap_find_ptr(&l->map, hash, node_has_key, key);

	if (n) {
		list_unlink(n);
		list_push_front(l, n);
	}
	return n;
}

/* Adds n (key absent) as the most recent: 0, or SX_ENOMEM/SX_ETOOBIG with
 * n not added. */
static int lru_add(struct lru *l, struct lru_node *n)
{
	int rc = sx_hmap_add(&l->map, n->hash, n);

	if (rc)
		return rc;
	list_push_front(l, n);
	l->n++;
	return 0;
}

static void lru_remove(struct lru *l, struct lru_node *n)
{
	struct sx_hmap_slot *s = sx_hmap_find(&l->map, n->hash, node_is, n);

	if (s)
		sx_hmap_del_slot(&l->map, s);
	list_unlink(n);
	l->n--;
}

static struct lru_node *lru_oldest(struct lru *l)
{
	return l->head.prev == &l->head ? NULL : l->head.prev;
}

/* ---------- drops ---------- */

/* Counts n drops for reason; the first drop of a reason, and then one in
 * DROP_LOG_EVERY_S, is logged with the running total. Lock held. */
static void count_drop(struct sx_events *ev, enum drop_reason r, unsigned n, const char *what,
		       const struct fields *f)
{
	char labels[64];
	double now = sx_now_s();

	ev->dropped[r] += n;
	snprintf(labels, sizeof(labels), "reason=\"%s\"", drop_names[r]);
	if (ev->o.metrics && !ev->dropped_total)
		ev->dropped_total = sx_metrics_find(ev->o.metrics, "schedext_events_dropped_total");
	sx_metric_inc(ev->dropped_total, labels, n);
	if (r == DROP_SHUTDOWN ||
	    (ev->drop_logged[r] > 0 && now - ev->drop_logged[r] < DROP_LOG_EVERY_S))
		return;
	ev->drop_logged[r] = now;
	sx_log(0,
	       "events: dropped the %s event about %s/%s (%s): %llu dropped for this reason so far",
	       f->reason, f->ns, f->pod, what, (unsigned long long)ev->dropped[r]);
}

/* ---------- queueing ---------- */

static unsigned shard_of(const struct sx_events *ev, const struct fields *f)
{
	/* One pod's events stay in order (its create before its series patch). */
	return (unsigned)((sx_hash_str(f->ns) * 31 + sx_hash_str(f->pod)) % ev->nshards);
}

/* Queues j (taken over) unless SX_EVENTS_QUEUE_CAP are waiting. Lock held. */
static void push_job(struct sx_events *ev, struct job *j)
{
	struct shard *sh;

	if (ev->queued >= SX_EVENTS_QUEUE_CAP) {
		count_drop(ev, DROP_QUEUE_FULL, 1, "the event queue is full", &j->f);
		free(j->f.block);
		free(j);
		return;
	}
	sh = &ev->shards[shard_of(ev, &j->f)];
	j->next = NULL;
	if (sh->tail)
		sh->tail->next = j;
	else
		sh->head = j;
	sh->tail = j;
	ev->queued++;
	pthread_cond_signal(&sh->cond);
}

/* A series patch of s's current count (recordEvent with Series set). */
static void push_series(struct sx_events *ev, struct series *s)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j || !fields_copy(&j->f, &s->f)) {
		free(j);
		return;
	}
	j->patch = true;
	j->count = s->count;
	snprintf(j->name, sizeof(j->name), "%s", s->name);
	snprintf(j->event_time, sizeof(j->event_time), "%s", s->event_time);
	micro_time(s->last_observed_s, j->last_observed);
	s->sent_count = s->count;
	push_job(ev, j);
}

static void free_series(struct series *s)
{
	free(s->node.key);
	free(s->f.block);
	free(s);
}

/* Drops s from the cache; a series whose last count was not sent gets a
 * final patch first (finishSeries). Lock held. */
static void retire_series(struct sx_events *ev, struct series *s)
{
	if (s->count > s->sent_count)
		push_series(ev, s);
	lru_remove(&ev->series, &s->node);
	free_series(s);
}

/* ---------- spam filter (tools/record EventSourceObjectSpamFilter) ---------- */

/* True when the source may create one more event object about the pod:
 * a token bucket per source+object, SPAM_BURST refilled at SPAM_QPS, in
 * an LRU of SX_EVENTS_CACHE_CAP objects. Lock held. */
static bool spam_accept(struct sx_events *ev, const struct fields *f, double now)
{
	char key[1024];
	uint64_t h;
	struct spam *sp;

	snprintf(key, sizeof(key), "%s\x1f%s\x1fPod\x1f%s\x1f%s\x1f%s\x1fv1", f->component,
		 ev->host, f->ns, f->pod, f->uid);
	h = sx_hash_str(key);
	sp = (struct spam *)lru_get(&ev->spam, key, h);
	if (!sp) {
		sp = calloc(1, sizeof(*sp));
		if (!sp || !(sp->node.key = sx_strdup(key))) {
			free(sp);
			return true;
		}
		sp->node.hash = h;
		sp->tokens = SPAM_BURST;
		sp->last = now;
		if (lru_add(&ev->spam, &sp->node)) {
			free(sp->node.key);
			free(sp);
			return true;
		}
		if (ev->spam.n > SX_EVENTS_CACHE_CAP) {
			struct lru_node *old = lru_oldest(&ev->spam);

			lru_remove(&ev->spam, old);
			free(old->key);
			free(old);
		}
	}
	if (now > sp->last) {
		sp->tokens += (now - sp->last) * SPAM_QPS;
		if (sp->tokens > SPAM_BURST)
			sp->tokens = SPAM_BURST;
		sp->last = now;
	}
	if (sp->tokens < 1)
		return false;
	sp->tokens -= 1;
	return true;
}

/* ---------- recording (eventBroadcasterImpl.recordToSink) ---------- */

/* "<pod>.<hex unix ns>" (recorderImpl.makeEvent), unique within this
 * process even for two events of one pod in the same nanosecond. */
static void event_name(struct sx_events *ev, const char *pod, char *out)
{
	uint64_t ns;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
	if (ns <= ev->last_name_ns)
		ns = ev->last_name_ns + 1;
	ev->last_name_ns = ns;
	snprintf(out, NAME_MAX_LEN, "%.253s.%llx", pod, (unsigned long long)ns);
}

/* A new cache entry and its create job; f is taken over. Lock held. */
static void record_new(struct sx_events *ev, struct fields *f, char *key, uint64_t h, double now)
{
	struct series *s = calloc(1, sizeof(*s));
	struct job *j = calloc(1, sizeof(*j));

	if (!s || !j || !fields_copy(&j->f, f)) {
		free(s);
		free(j);
		free(key);
		free(f->block);
		return;
	}
	s->f = *f;
	s->node.key = key;
	s->node.hash = h;
	s->event_time_s = s->last_observed_s = now;
	micro_time(now, s->event_time);
	event_name(ev, f->pod, s->name);
	memcpy(j->name, s->name, sizeof(j->name));
	memcpy(j->event_time, s->event_time, sizeof(j->event_time));
	if (lru_add(&ev->series, &s->node)) {
		/* out of memory: the event is still created, its repeats
		 * are not counted */
		free_series(s);
		push_job(ev, j);
		return;
	}
	if (ev->series.n > SX_EVENTS_CACHE_CAP)
		retire_series(ev, (struct series *)lru_oldest(&ev->series));
	push_job(ev, j);
}

void sx_events_emit(struct sx_events *ev, const struct sx_pod *pod, const char *type,
		    const char *reason, const char *action, const char *message,
		    const char *component)
{
	const char *src[8] = {sx_str_get(pod->meta.ns),
			      pod->meta.name,
			      pod->meta.uid ? pod->meta.uid : "",
			      type,
			      reason,
			      action,
			      message,
			      component};
	struct fields f;
	struct series *s;
	char *key;
	uint64_t h;
	double now;

	if (!ev || !fields_pack(&f, src))
		return;
	/* eventKey: type, action, reason, reportingController and
	 * reportingInstance (one per component here), regarding. */
	if (asprintf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", f.type, f.action, f.reason,
		     f.component, f.ns, f.pod, f.uid) < 0) {
		free(f.block);
		return;
	}
	h = sx_hash_str(key);
	pthread_mutex_lock(&ev->mu);
	now = ev_now(ev);
	s = (struct series *)lru_get(&ev->series, key, h);
	if (s) {
		/* Isomorphic: the first repeat starts a series and is sent at
		 * once; later ones only count until refresh or finish. */
		s->last_observed_s = now;
		s->count = s->count ? s->count + 1 : 2;
		if (s->count == 2)
			push_series(ev, s);
		free(key);
		free(f.block);
	} else if (!spam_accept(ev, &f, now)) {
		/* A repeat adds to its series without a new object, so the
		 * filter bounds what the API server stores about one pod. */
		count_drop(ev, DROP_SPAM, 1,
			   "more than 25 event objects about the pod in 5 minutes", &f);
		free(key);
		free(f.block);
	} else {
		record_new(ev, &f, key, h, now);
	}
	pthread_mutex_unlock(&ev->mu);
}

/* ---------- series upkeep (finishSeries, refreshExistingEventSeries) ---------- */

static void finish_series(struct sx_events *ev, double now)
{
	struct lru_node *n = ev->series.head.next, *next;

	for (; n != &ev->series.head; n = next) {
		struct series *s = (struct series *)n;

		next = n->next;
		if (s->count ? s->last_observed_s < now - FINISH_S
			     : s->event_time_s < now - FINISH_S)
			retire_series(ev, s);
	}
}

/* Upstream patches every series each time; one whose count was already
 * sent would write the same count again, so it is skipped. */
static void refresh_series(struct sx_events *ev)
{
	struct lru_node *n = ev->series.head.next;

	for (; n != &ev->series.head; n = n->next) {
		struct series *s = (struct series *)n;

		if (s->count > s->sent_count)
			push_series(ev, s);
	}
}

void sx_events_housekeep(struct sx_events *ev)
{
	double now;

	pthread_mutex_lock(&ev->mu);
	now = ev_now(ev);
	if (now - ev->last_finish >= FINISH_S) {
		ev->last_finish = now;
		finish_series(ev, now);
	}
	if (now - ev->last_refresh >= REFRESH_S) {
		ev->last_refresh = now;
		refresh_series(ev);
	}
	pthread_mutex_unlock(&ev->mu);
}

unsigned sx_events_queued(struct sx_events *ev)
{
	unsigned n;

	pthread_mutex_lock(&ev->mu);
	n = ev->queued;
	pthread_mutex_unlock(&ev->mu);
	return n;
}

/* ---------- sending (attemptRecording, recordEvent) ---------- */

static int write_job(struct sx_events *ev, const struct job *j, bool patch, struct sx_error *err)
{
	char instance[520];
	struct sx_kube_event ke = {
		.ns = j->f.ns,
		.pod_name = j->f.pod,
		.pod_uid = j->f.uid,
		.type = j->f.type,
		.reason = j->f.reason,
		.action = j->f.action,
		.message = j->f.message,
		.component = j->f.component,
		.instance = instance,
		.name = j->name,
		.event_time = j->event_time,
		.series_count = j->count,
		.last_observed = j->count ? j->last_observed : NULL,
	};

	/* NewRecorder: reportingInstance = reportingController + "-" + hostname. */
	snprintf(instance, sizeof(instance), "%.250s-%s", j->f.component, ev->host);
	if (ev->o.write)
		return ev->o.write(ev->o.write_ctx, &ke, patch, err);
	return patch ? sx_kube_patch_event_series(ev->o.kube, &ke, err)
		     : sx_kube_create_event(ev->o.kube, &ke, err);
}

/* Sleeps the retry interval (wait.Jitter(10 s, 0.25)); false when the
 * events are stopping meanwhile. */
static bool retry_wait(struct sx_events *ev, struct shard *sh)
{
	double r = (double)rand_r(&sh->seed) / RAND_MAX;
	struct timespec ts = sx_deadline_after_s(ev->o.retry_s * (1.0 + 0.25 * r));
	bool go_on;

	pthread_mutex_lock(&ev->mu);
	while (!ev->stop_now && pthread_cond_timedwait(&sh->cond, &ev->mu, &ts) != ETIMEDOUT)
		;
	go_on = !ev->stop_now;
	pthread_mutex_unlock(&ev->mu);
	return go_on;
}

static void settle_drop(struct sx_events *ev, enum drop_reason r, const struct job *j,
			const char *msg)
{
	char what[600];

	snprintf(what, sizeof(what), "%s: %.500s",
		 r == DROP_REJECTED ? "the API server refused it, will not retry"
				    : "retry limit exceeded",
		 msg);
	pthread_mutex_lock(&ev->mu);
	count_drop(ev, r, 1, what, &j->f);
	pthread_mutex_unlock(&ev->mu);
}

/* Writes j as recordEvent does, retrying what may succeed later up to
 * MAX_TRIES times. False when stopped while waiting to retry. */
static bool deliver(struct sx_events *ev, struct shard *sh, const struct job *j)
{
	bool patch = j->patch;

	for (unsigned tries = 0;;) {
		struct sx_error err = {0};
		int rc = write_job(ev, j, patch, &err);

		if (rc == 0)
			return true;
		if (rc == SX_ENOENT && patch) {
			patch = false; /* the series' event is gone: create it whole */
			continue;
		}
		if (rc == SX_EEXIST && !j->count) {
			sx_log(4, "events: %s event %s/%s exists already", j->f.reason, j->f.ns,
			       j->name);
			return true;
		}
		if (rc == SX_EINVAL) {
			settle_drop(ev, DROP_REJECTED, j, err.msg);
			return true;
		}
		if (++tries >= MAX_TRIES) {
			settle_drop(ev, DROP_RETRIES, j, err.msg);
			return true;
		}
		sx_log(2, "events: %s event about %s/%s: %s (may retry after sleeping)",
		       j->f.reason, j->f.ns, j->f.pod, err.msg);
		if (!retry_wait(ev, sh))
			return false;
	}
}

static void free_job(struct job *j)
{
	free(j->f.block);
	free(j);
}

static void *sender_thread(void *arg)
{
	struct shard *sh = arg;
	struct sx_events *ev = sh->ev;

	pthread_setname_np(pthread_self(), "sx-events"); /* per-thread CPU in bench/e2e.py */
	pthread_mutex_lock(&ev->mu);
	while (!ev->stop_now) {
		struct job *j = sh->head;
		bool done;

		if (!j) {
			struct timespec ts = sx_deadline_after_s(1.0);

			if (sh->index == 0) { /* the series' clock runs here */
				pthread_cond_timedwait(&sh->cond, &ev->mu, &ts);
				pthread_mutex_unlock(&ev->mu);
				sx_events_housekeep(ev);
				pthread_mutex_lock(&ev->mu);
			} else {
				pthread_cond_wait(&sh->cond, &ev->mu);
			}
			continue;
		}
		sh->head = j->next;
		if (!sh->head)
			sh->tail = NULL;
		ev->queued--;
		ev->busy++;
		pthread_mutex_unlock(&ev->mu);
		done = deliver(ev, sh, j);
		free_job(j);
		pthread_mutex_lock(&ev->mu);
		ev->abandoned += !done;
		ev->busy--;
		if (ev->queued == 0 && ev->busy == 0)
			pthread_cond_broadcast(&ev->idle);
	}
	pthread_mutex_unlock(&ev->mu);
	return NULL;
}

/* ---------- lifetime ---------- */

static void free_lru(struct lru *l, bool series)
{
	struct lru_node *n = l->head.next, *next;

	for (; n != &l->head; n = next) {
		next = n->next;
		if (series) {
			free_series((struct series *)n);
		} else {
			free(n->key);
			free(n);
		}
	}
	sx_hmap_clear(&l->map);
	lru_init(l);
}

static void free_events(struct sx_events *ev)
{
	for (unsigned i = 0; i < ev->nshards; i++) {
		struct job *j = ev->shards[i].head, *next;

		for (; j; j = next) {
			next = j->next;
			free_job(j);
		}
		pthread_cond_destroy(&ev->shards[i].cond);
	}
	free_lru(&ev->series, true);
	free_lru(&ev->spam, false);
	pthread_cond_destroy(&ev->idle);
	pthread_mutex_destroy(&ev->mu);
	free(ev);
}

static void join_senders(struct sx_events *ev)
{
	pthread_mutex_lock(&ev->mu);
	ev->stop_now = true;
	for (unsigned i = 0; i < ev->nshards; i++)
		pthread_cond_broadcast(&ev->shards[i].cond);
	pthread_mutex_unlock(&ev->mu);
	for (unsigned i = 0; i < ev->started; i++)
		pthread_join(ev->shards[i].thread, NULL);
}

struct sx_events *sx_events_start(const struct sx_events_opts *o, struct sx_error *err)
{
	struct sx_events *ev = calloc(1, sizeof(*ev));

	if (!ev) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	ev->o = *o;
	if (ev->o.retry_s <= 0)
		ev->o.retry_s = RETRY_S;
	ev->nshards = o->senders ? (o->senders < MAX_SENDERS ? o->senders : MAX_SENDERS)
				 : DEFAULT_SENDERS;
	if (o->host)
		snprintf(ev->host, sizeof(ev->host), "%s", o->host);
	else if (gethostname(ev->host, sizeof(ev->host) - 1) != 0)
		snprintf(ev->host, sizeof(ev->host), "localhost");
	pthread_mutex_init(&ev->mu, NULL);
	pthread_cond_init(&ev->idle, NULL);
	lru_init(&ev->series);
	lru_init(&ev->spam);
	ev->last_finish = ev->last_refresh = ev_now(ev);
	for (unsigned i = 0; i < ev->nshards; i++) {
		ev->shards[i] =
			(struct shard){.ev = ev, .index = i, .seed = (unsigned)sx_now_ns() + i};
		pthread_cond_init(&ev->shards[i].cond, NULL);
	}
	for (; ev->started < ev->nshards; ev->started++) {
		if (pthread_create(&ev->shards[ev->started].thread, NULL, sender_thread,
				   &ev->shards[ev->started]) != 0) {
			join_senders(ev);
			free_events(ev);
			sx_error_set(err, SX_ENOMEM, "cannot start the event senders");
			return NULL;
		}
	}
	return ev;
}

unsigned sx_events_stop(struct sx_events *ev, double grace_s)
{
	struct timespec deadline = sx_deadline_after_s(grace_s);
	unsigned left;

	if (!ev)
		return 0;
	pthread_mutex_lock(&ev->mu);
	while ((ev->queued || ev->busy) &&
	       pthread_cond_timedwait(&ev->idle, &ev->mu, &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&ev->mu);
	join_senders(ev);
	/* kube-scheduler's broadcaster drops what is queued when it exits;
	 * here it is at least counted, and said once. */
	left = ev->queued + ev->abandoned;
	if (left) {
		struct fields none = {0};

		count_drop(ev, DROP_SHUTDOWN, left, "", &none);
		sx_log(0, "events: %u events still queued at shutdown were not sent", left);
	}
	free_events(ev);
	return left;
}
