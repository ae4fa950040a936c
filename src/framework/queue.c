/* The scheduling queue (reference plugins.md §4): activeQ and backoffQ
 * heaps, unschedulable and gated pods, the in-flight set and the nominator,
 * all entries in one hash by "ns/name". One mutex guards everything. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/queue.h"
#include "schedext/config.h"

enum where { W_NONE, W_ACTIVE, W_BACKOFF, W_UNSCHED, W_INFLIGHT };

struct qpod {
	char *key;
	struct qpod *hnext;
	const struct sx_pod *pod;      /* latest object, one reference */
	const struct sx_profile *prof;
	enum where where;
	bool gated;                    /* in W_UNSCHED because PreEnqueue said no */
	bool gone;                     /* deleted or bound while in flight */
	double timestamp;              /* last (re)queue time */
	double initial_attempt;        /* first time in activeQ; 0 = never */
	double expiry;                 /* backoff expiry */
	uint32_t attempts, unsched_count, err_count;
	uint64_t pop_moves;            /* q->moves when popped */
	int heap_idx;                  /* index in activeQ or backoffQ heap */
	sx_str nominated;              /* nominated node, SX_STR_EMPTY = none */
};

struct heap {
	struct qpod **items;
	uint32_t n, cap;
	bool (*less)(const struct sx_queue *q, const struct qpod *a, const struct qpod *b);
};

struct sx_queue {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	const struct sx_config *cfg;
	const struct sx_profile *sort_prof;
	double (*now)(void *ctx);
	void *now_ctx;
	struct qpod **buckets;
	uint32_t nbuckets, count;
	struct heap active, backoff;
	uint32_t nunsched, ngated, ninflight, nnominated;
	uint64_t moves;                /* cluster events that moved pods */
	double last_unsched_flush;
	bool closed;
};

static double default_now(void *ctx)
{
	(void)ctx;
	return sx_now_s();
}

/* ---------- hash ---------- */

static uint32_t hash_key(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static const char *pod_key(const struct sx_pod *pod, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", sx_str_get(pod->meta.ns), pod->meta.name);
	return buf;
}

static struct qpod *lookup(const struct sx_queue *q, const char *key)
{
	struct qpod *e = q->buckets[hash_key(key) & (q->nbuckets - 1)];

	while (e && strcmp(e->key, key) != 0)
		e = e->hnext;
	return e;
}

static int grow(struct sx_queue *q)
{
	uint32_t n = q->nbuckets * 2;
	struct qpod **b = calloc(n, sizeof(*b));

	if (!b)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < q->nbuckets; i++) {
		struct qpod *e = q->buckets[i], *next;

		for (; e; e = next) {
			uint32_t h = hash_key(e->key) & (n - 1);

			next = e->hnext;
			e->hnext = b[h];
			b[h] = e;
		}
	}
	free(q->buckets);
	q->buckets = b;
	q->nbuckets = n;
	return 0;
}

static struct qpod *insert(struct sx_queue *q, const char *key)
{
	struct qpod *e;
	uint32_t h;

	if (q->count >= q->nbuckets && grow(q) < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = sx_strdup(key))) {
		free(e);
		return NULL;
	}
	h = hash_key(key) & (q->nbuckets - 1);
	e->hnext = q->buckets[h];
	q->buckets[h] = e;
	e->heap_idx = -1;
	q->count++;
	return e;
}

static void unlink_entry(struct sx_queue *q, struct qpod *e)
{
	struct qpod **pp = &q->buckets[hash_key(e->key) & (q->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	q->count--;
}

/* ---------- heaps ---------- */

static bool active_less(const struct sx_queue *q, const struct qpod *a, const struct qpod *b)
{
	struct sx_queued_pod qa = { a->pod, a->timestamp }, qb = { b->pod, b->timestamp };

	return sx_queue_less(q->sort_prof, &qa, &qb);
}

static bool backoff_less(const struct sx_queue *q, const struct qpod *a, const struct qpod *b)
{
	(void)q;
	return a->expiry < b->expiry || (a->expiry == b->expiry && a->timestamp < b->timestamp);
}

static void heap_swap(struct heap *h, uint32_t i, uint32_t j)
{
	struct qpod *t = h->items[i];

	h->items[i] = h->items[j];
	h->items[j] = t;
	h->items[i]->heap_idx = (int)i;
	h->items[j]->heap_idx = (int)j;
}

static void sift_up(const struct sx_queue *q, struct heap *h, uint32_t i)
{
	while (i > 0 && h->less(q, h->items[i], h->items[(i - 1) / 2])) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(const struct sx_queue *q, struct heap *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && h->less(q, h->items[l], h->items[m]))
			m = l;
		if (r < h->n && h->less(q, h->items[r], h->items[m]))
			m = r;
		if (m == i)
			return;
		heap_swap(h, i, m);
		i = m;
	}
}

static int heap_push(const struct sx_queue *q, struct heap *h, struct qpod *e)
{
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct qpod **items = realloc(h->items, cap * sizeof(*items));

		if (!items)
			return SX_ENOMEM;
		h->items = items;
		h->cap = cap;
	}
	h->items[h->n] = e;
	e->heap_idx = (int)h->n;
	sift_up(q, h, h->n++);
	return 0;
}

static void heap_remove(const struct sx_queue *q, struct heap *h, struct qpod *e)
{
	uint32_t i = (uint32_t)e->heap_idx, last = --h->n;

	if (i != last) {
		heap_swap(h, i, last);
		sift_down(q, h, i);
		sift_up(q, h, i);
	}
	e->heap_idx = -1;
}

/* Re-establishes the heap after e's ordering key changed. */
static void heap_fix(const struct sx_queue *q, struct heap *h, struct qpod *e)
{
	sift_down(q, h, (uint32_t)e->heap_idx);
	sift_up(q, h, (uint32_t)e->heap_idx);
}

/* ---------- places ---------- */

/* Takes e out of whichever place it is in (the entry stays in the hash). */
static void detach(struct sx_queue *q, struct qpod *e)
{
	switch (e->where) {
	case W_ACTIVE:
		heap_remove(q, &q->active, e);
		break;
	case W_BACKOFF:
		heap_remove(q, &q->backoff, e);
		break;
	case W_UNSCHED:
		q->nunsched--;
		if (e->gated)
			q->ngated--;
		break;
	case W_INFLIGHT:
		q->ninflight--;
		break;
	case W_NONE:
		break;
	}
	e->where = W_NONE;
	e->gated = false;
}

static void to_unsched(struct sx_queue *q, struct qpod *e, bool gated)
{
	detach(q, e);
	e->where = W_UNSCHED;
	e->gated = gated;
	q->nunsched++;
	if (gated)
		q->ngated++;
}

/* PreEnqueue, then activeQ; gated pods go to unschedulablePods. */
static void to_active(struct sx_queue *q, struct qpod *e)
{
	struct sx_status *st = sx_run_pre_enqueue(e->prof, e->pod);

	if (!sx_status_is_success(st)) {
		sx_status_free(st);
		to_unsched(q, e, true);
		return;
	}
	detach(q, e);
	if (heap_push(q, &q->active, e) < 0) {
		to_unsched(q, e, false); /* OOM: retried by the next flush */
		return;
	}
	e->where = W_ACTIVE;
	if (e->initial_attempt == 0)
		e->initial_attempt = q->now(q->now_ctx);
	pthread_cond_signal(&q->cond);
}

static void to_backoff(struct sx_queue *q, struct qpod *e)
{
	detach(q, e);
	if (heap_push(q, &q->backoff, e) < 0) {
		to_unsched(q, e, false);
		return;
	}
	e->where = W_BACKOFF;
	pthread_cond_signal(&q->cond); /* the popper's wait may need shortening */
}

static bool backing_off(const struct sx_queue *q, const struct qpod *e, double now)
{
	(void)q;
	return e->expiry > now;
}

/* "After backoff": backoffQ while still backing off, else activeQ. */
static void to_active_or_backoff(struct sx_queue *q, struct qpod *e, double now)
{
	if (backing_off(q, e, now))
		to_backoff(q, e);
	else
		to_active(q, e);
}

static void set_nominated(struct sx_queue *q, struct qpod *e, sx_str node)
{
	if (e->nominated != SX_STR_EMPTY)
		q->nnominated--;
	e->nominated = node;
	if (node != SX_STR_EMPTY)
		q->nnominated++;
}

static void free_entry(struct sx_queue *q, struct qpod *e)
{
	detach(q, e);
	set_nominated(q, e, SX_STR_EMPTY);
	unlink_entry(q, e);
	sx_pod_unref(e->pod);
	free(e->key);
	free(e);
}

/* ---------- construction ---------- */

struct sx_queue *sx_queue_new(const struct sx_config *cfg)
{
	struct sx_queue *q = calloc(1, sizeof(*q));

	if (!q || !cfg || cfg->nprofiles == 0)
		goto fail;
	q->nbuckets = 256;
	q->buckets = calloc(q->nbuckets, sizeof(*q->buckets));
	if (!q->buckets)
		goto fail;
	q->cfg = cfg;
	q->sort_prof = cfg->profiles[0]; /* all profiles share one QueueSort (§1.12) */
	q->now = default_now;
	q->active.less = active_less;
	q->backoff.less = backoff_less;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cond, NULL);
	return q;
fail:
	free(q);
	return NULL;
}

void sx_queue_free(struct sx_queue *q)
{
	if (!q)
		return;
	for (uint32_t i = 0; i < q->nbuckets; i++)
		while (q->buckets[i])
			free_entry(q, q->buckets[i]);
	free(q->buckets);
	free(q->active.items);
	free(q->backoff.items);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cond);
	free(q);
}

void sx_queue_set_clock(struct sx_queue *q, double (*now)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&q->mu);
	q->now = now ? now : default_now;
	q->now_ctx = ctx;
	q->last_unsched_flush = 0;
	pthread_mutex_unlock(&q->mu);
}

double sx_queue_backoff_duration(double initial_s, double max_s, uint32_t count)
{
	double d = initial_s;

	if (count == 0 || max_s <= 0)
		return 0;
	for (uint32_t i = 1; i < count && d < max_s; i++)
		d *= 2;
	return d < max_s ? d : max_s;
}

/* ---------- events ---------- */

static const struct sx_profile *profile_of(const struct sx_queue *q, const struct sx_pod *pod)
{
	const char *name = sx_str_get(pod->scheduler_name);

	for (unsigned i = 0; i < q->cfg->nprofiles; i++)
		if (strcmp(q->cfg->profiles[i]->scheduler_name, name ? name : "") == 0)
			return q->cfg->profiles[i];
	return NULL;
}

static bool schedulable(const struct sx_pod *pod)
{
	return pod->node_name == SX_STR_EMPTY && !pod->deleting &&
	       pod->phase != SX_PHASE_SUCCEEDED && pod->phase != SX_PHASE_FAILED;
}

/* Drops the entry, or marks it gone while a cycle holds it. */
static void remove_locked(struct sx_queue *q, const char *key)
{
	struct qpod *e = lookup(q, key);

	if (!e)
		return;
	if (e->where == W_INFLIGHT) {
		e->gone = true;
		set_nominated(q, e, SX_STR_EMPTY);
		return;
	}
	free_entry(q, e);
}

static void move_all_locked(struct sx_queue *q)
{
	double now = q->now(q->now_ctx);

	q->moves++;
	if (q->nunsched == 0)
		return;
	for (uint32_t i = 0; i < q->nbuckets; i++) {
		struct qpod *e = q->buckets[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			if (e->where == W_UNSCHED)
				to_active_or_backoff(q, e, now);
		}
	}
}

/* Add or update of a pod we schedule. */
static void upsert_locked(struct sx_queue *q, const struct sx_pod *old_pod,
			  const struct sx_pod *pod, const struct sx_profile *prof, const char *key)
{
	struct qpod *e = lookup(q, key);

	if (!e) {
		e = insert(q, key);
		if (!e)
			return;
		e->pod = sx_pod_ref(pod);
		e->prof = prof;
		e->timestamp = q->now(q->now_ctx);
		to_active(q, e);
	} else {
		sx_pod_unref(e->pod);
		e->pod = sx_pod_ref(pod);
		e->prof = prof;
		e->gone = false;
		if (e->where == W_ACTIVE)
			heap_fix(q, &q->active, e);
		else if (e->where == W_UNSCHED)
			to_active_or_backoff(q, e, q->now(q->now_ctx)); /* the update may help */
	}
	/* Nominator: a nomination in the object wins; a cleared one clears. */
	if (pod->nominated_node != SX_STR_EMPTY)
		set_nominated(q, e, pod->nominated_node);
	else if (old_pod && old_pod->nominated_node != SX_STR_EMPTY)
		set_nominated(q, e, SX_STR_EMPTY);
}

void sx_queue_pod_update(struct sx_queue *q, const struct sx_pod *old_pod,
			 const struct sx_pod *new_pod)
{
	char key[512];
	const struct sx_profile *prof;

	if (!new_pod)
		return;
	pod_key(new_pod, key, sizeof(key));
	prof = profile_of(q, new_pod);
	pthread_mutex_lock(&q->mu);
	if (prof && schedulable(new_pod)) {
		upsert_locked(q, old_pod, new_pod, prof, key);
	} else {
		remove_locked(q, key);
		if (new_pod->node_name != SX_STR_EMPTY)
			move_all_locked(q); /* an assigned pod changed */
	}
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_pod_delete(struct sx_queue *q, const struct sx_pod *pod)
{
	char key[512];

	pod_key(pod, key, sizeof(key));
	pthread_mutex_lock(&q->mu);
	remove_locked(q, key);
	move_all_locked(q);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_node_event(struct sx_queue *q, const struct sx_node *old_node,
			 const struct sx_node *new_node)
{
	(void)old_node;
	if (!new_node)
		return; /* a node going away never makes a pod fit */
	pthread_mutex_lock(&q->mu);
	move_all_locked(q);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_move_all(struct sx_queue *q, const char *event)
{
	(void)event;
	pthread_mutex_lock(&q->mu);
	move_all_locked(q);
	pthread_mutex_unlock(&q->mu);
}

/* ---------- scheduling side ---------- */

static void flush_locked(struct sx_queue *q)
{
	double now = q->now(q->now_ctx);

	while (q->backoff.n > 0 && !backing_off(q, q->backoff.items[0], now))
		to_active(q, q->backoff.items[0]);
	if (q->nunsched == 0 || now - q->last_unsched_flush < 1.0)
		return;
	q->last_unsched_flush = now;
	for (uint32_t i = 0; i < q->nbuckets; i++) {
		struct qpod *e = q->buckets[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			if (e->where == W_UNSCHED &&
			    now - e->timestamp > SX_QUEUE_UNSCHEDULABLE_MAX_S)
				to_active_or_backoff(q, e, now);
		}
	}
}

void sx_queue_flush(struct sx_queue *q)
{
	pthread_mutex_lock(&q->mu);
	flush_locked(q);
	pthread_mutex_unlock(&q->mu);
}

static void pop_locked(struct sx_queue *q, struct sx_queue_item *out)
{
	struct qpod *e = q->active.items[0];

	detach(q, e);
	e->where = W_INFLIGHT;
	q->ninflight++;
	e->attempts++;
	e->pop_moves = q->moves;
	out->pod = sx_pod_ref(e->pod);
	out->profile = e->prof;
	out->attempts = e->attempts;
	out->initial_attempt = e->initial_attempt;
	out->timestamp = e->timestamp;
}

/* Waits on the real clock for at most `s` seconds. */
static void timed_wait(struct sx_queue *q, double s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)s;
	ts.tv_nsec += (long)((s - floor(s)) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&q->cond, &q->mu, &ts);
}

int sx_queue_pop(struct sx_queue *q, double timeout_s, struct sx_queue_item *out)
{
	double deadline = sx_now_s() + timeout_s;
	int rc = SX_ENOENT;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->mu);
	for (;;) {
		double left, wait;

		if (q->closed) {
			rc = SX_EIO;
			break;
		}
		flush_locked(q);
		if (q->active.n > 0) {
			pop_locked(q, out);
			rc = 0;
			break;
		}
		left = deadline - sx_now_s();
		if (left <= 0)
			break;
		wait = left < 1.0 ? left : 1.0; /* backoff flush period */
		if (q->backoff.n > 0) {
			double due = q->backoff.items[0]->expiry - q->now(q->now_ctx);

			if (due < wait)
				wait = due > 0.001 ? due : 0.001;
		}
		timed_wait(q, wait);
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

static struct qpod *inflight_entry(struct sx_queue *q, const struct sx_pod *pod)
{
	char key[512];
	struct qpod *e = lookup(q, pod_key(pod, key, sizeof(key)));

	return (e && e->where == W_INFLIGHT) ? e : NULL;
}

int sx_queue_requeue(struct sx_queue *q, const struct sx_pod *pod, bool rejected)
{
	struct qpod *e;
	double now;
	int rc = 0;

	pthread_mutex_lock(&q->mu);
	e = inflight_entry(q, pod);
	if (!e || e->gone) {
		if (e)
			free_entry(q, e);
		rc = SX_ENOENT;
		goto out;
	}
	now = q->now(q->now_ctx);
	if (rejected) {
		e->unsched_count++;
		e->err_count = 0;
	} else {
		e->err_count++;
	}
	e->timestamp = now;
	e->expiry = now + sx_queue_backoff_duration(q->cfg->pod_initial_backoff_s,
						    q->cfg->pod_max_backoff_s,
						    rejected ? e->unsched_count : e->err_count);
	if (!rejected || q->moves != e->pop_moves)
		to_active_or_backoff(q, e, now);
	else
		to_unsched(q, e, false);
out:
	pthread_mutex_unlock(&q->mu);
	return rc;
}

void sx_queue_done(struct sx_queue *q, const struct sx_pod *pod)
{
	struct qpod *e;

	pthread_mutex_lock(&q->mu);
	e = inflight_entry(q, pod);
	if (e)
		free_entry(q, e);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_return(struct sx_queue *q, const struct sx_pod *pod)
{
	struct qpod *e;

	pthread_mutex_lock(&q->mu);
	e = inflight_entry(q, pod);
	if (e && e->gone) {
		free_entry(q, e);
	} else if (e) {
		e->attempts--;
		to_active(q, e);
	}
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_close(struct sx_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_lengths(struct sx_queue *q, struct sx_queue_lengths *out)
{
	pthread_mutex_lock(&q->mu);
	out->active = q->active.n;
	out->backoff = q->backoff.n;
	out->unschedulable = q->nunsched - q->ngated;
	out->gated = q->ngated;
	out->in_flight = q->ninflight;
	pthread_mutex_unlock(&q->mu);
}

static struct qpod *find(struct sx_queue *q, sx_str ns, const char *name)
{
	char key[512];

	snprintf(key, sizeof(key), "%s/%s", sx_str_get(ns), name);
	return lookup(q, key);
}

const char *sx_queue_where(struct sx_queue *q, sx_str ns, const char *name)
{
	static const char *const names[] = { NULL, "active", "backoff", "unschedulable",
					     "inflight" };
	const char *w = NULL;
	struct qpod *e;

	pthread_mutex_lock(&q->mu);
	e = find(q, ns, name);
	if (e)
		w = e->gated ? "gated" : names[e->where];
	pthread_mutex_unlock(&q->mu);
	return w;
}

double sx_queue_backoff_expiry(struct sx_queue *q, sx_str ns, const char *name)
{
	struct qpod *e;
	double v;

	pthread_mutex_lock(&q->mu);
	e = find(q, ns, name);
	v = e ? e->expiry : -1;
	pthread_mutex_unlock(&q->mu);
	return v;
}

/* ---------- nominator ---------- */

void sx_queue_nominate(struct sx_queue *q, const struct sx_pod *pod, sx_str node)
{
	char key[512];
	struct qpod *e;

	pthread_mutex_lock(&q->mu);
	e = lookup(q, pod_key(pod, key, sizeof(key)));
	if (e && !e->gone)
		set_nominated(q, e, node);
	pthread_mutex_unlock(&q->mu);
}

static uint32_t nominated_for_node(void *ctx, sx_str node, const struct sx_pod **out,
				   uint32_t max)
{
	const struct sx_nominated_set *set = ctx;
	uint32_t n = 0;

	for (uint32_t i = 0; i < set->n && n < max; i++)
		if (set->items[i].node == node)
			out[n++] = set->items[i].pod;
	return n;
}

struct sx_nominated_set *sx_queue_nominated(struct sx_queue *q)
{
	struct sx_nominated_set *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->nom.pods_for_node = nominated_for_node;
	set->nom.ctx = set;
	pthread_mutex_lock(&q->mu);
	if (q->nnominated)
		set->items = calloc(q->nnominated, sizeof(*set->items));
	for (uint32_t i = 0; set->items && i < q->nbuckets; i++)
		for (struct qpod *e = q->buckets[i]; e; e = e->hnext)
			if (e->nominated != SX_STR_EMPTY && set->n < q->nnominated)
				set->items[set->n++] = (struct sx_nominated_entry){
					e->nominated, sx_pod_ref(e->pod)
				};
	pthread_mutex_unlock(&q->mu);
	return set;
}

void sx_nominated_set_free(struct sx_nominated_set *set)
{
	if (!set)
		return;
	for (uint32_t i = 0; i < set->n; i++)
		sx_pod_unref(set->items[i].pod);
	free(set->items);
	free(set);
}
