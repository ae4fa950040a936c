/* The scheduling queue (upstream pkg/scheduler/backend/queue/scheduling_queue.go,
 * PriorityQueue): activeQ and the two
 * backoff heaps, unschedulable and gated pods, the in-flight set and the
 * nominator, all entries in one hash by "ns/name". One mutex guards
 * everything. Cluster events and queueing hints: queue_events.c. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue_int.h"
#include "schedext/queue.h"
#include "schedext/config.h"
#include "schedext/vec.h"

static double default_now(void *ctx)
{
	(void)ctx;
	return sx_now_s();
}

/* ---------- hash ---------- */

const char *sx__queue_pod_key(const struct sx_pod *pod, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", sx_str_get(pod->meta.ns), pod->meta.name);
	return buf;
}

struct qpod *sx__queue_lookup(const struct sx_queue *q, const char *key)
{
	struct qpod *e = q->buckets[sx_hash_str(key) & (q->nbuckets - 1)];

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
			uint32_t h = sx_hash_str(e->key) & (n - 1);

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
	h = sx_hash_str(key) & (q->nbuckets - 1);
	e->hnext = q->buckets[h];
	q->buckets[h] = e;
	e->heap_idx = -1;
	q->count++;
	return e;
}

static void unlink_entry(struct sx_queue *q, struct qpod *e)
{
	struct qpod **pp = &q->buckets[sx_hash_str(e->key) & (q->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	q->count--;
}

/* ---------- heaps ---------- */

static bool active_less(const struct sx_queue *q, const struct qpod *a, const struct qpod *b)
{
	struct sx_queued_pod qa = {a->pod, a->timestamp}, qb = {b->pod, b->timestamp};

	return sx_queue_less(q->sort_prof, &qa, &qb);
}

/* Backoff expiry as compared: whole seconds with PopFromBackoffQ. */
static double window(const struct sx_queue *q, double t)
{
	return q->pop_from_backoff ? floor(t) : t;
}

/* Rejection backoff: by expiry window, then QueueSort within a window
 * (PopFromBackoffQ); otherwise by expiry, then timestamp. */
static bool backoff_less(const struct sx_queue *q, const struct qpod *a, const struct qpod *b)
{
	double ea = window(q, a->expiry), eb = window(q, b->expiry);

	if (ea != eb)
		return ea < eb;
	if (q->pop_from_backoff)
		return active_less(q, a, b);
	return a->timestamp < b->timestamp;
}

static bool err_backoff_less(const struct sx_queue *q, const struct qpod *a, const struct qpod *b)
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
	if (sx_vec_reserve(h->items, h->cap, h->n + 1, 64) < 0)
		return SX_ENOMEM;
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

static struct heap *backoff_heap(struct sx_queue *q, const struct qpod *e)
{
	return e->err_backoff ? &q->err_backoff : &q->backoff;
}

/* Takes e out of whichever place it is in (the entry stays in the hash). */
static void detach(struct sx_queue *q, struct qpod *e)
{
	switch (e->where) {
	case W_ACTIVE:
		heap_remove(q, &q->active, e);
		break;
	case W_BACKOFF:
		heap_remove(q, backoff_heap(q, e), e);
		break;
	case W_UNSCHED:
		q->nunsched--;
		if (e->gated)
			q->ngated--;
		break;
	case W_INFLIGHT:
		q->ninflight--;
		sx__queue_inflight_remove(q, e);
		break;
	case W_NONE:
		break;
	}
	e->where = W_NONE;
	e->gated = false;
	e->assumed = false;
}

static const char *const queue_names[] = {"active", "backoff", "unschedulable", "gated"};
enum { QN_ACTIVE, QN_BACKOFF, QN_UNSCHED, QN_GATED };

void sx__queue_count_incoming(struct sx_queue *q, unsigned queue)
{
	const char *ev = q->cur_event ? q->cur_event : "PodAdd";
	uint32_t i;

	for (i = 0; i < q->nincoming; i++)
		if (q->incoming[i].queue == queue && strcmp(q->incoming[i].event, ev) == 0)
			break;
	if (i == q->nincoming) {
		if (i == SX_QUEUE_MAX_INCOMING)
			return;
		q->nincoming++;
		q->incoming[i].queue = (uint8_t)queue;
		q->incoming[i].n = 0;
		snprintf(q->incoming[i].event, sizeof(q->incoming[i].event), "%s", ev);
	}
	q->incoming[i].n++;
}

void sx_queue_incoming(struct sx_queue *q, sx_queue_incoming_fn fn, void *ctx)
{
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->nincoming; i++)
		fn(ctx, queue_names[q->incoming[i].queue], q->incoming[i].event, q->incoming[i].n);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_unschedulable_by_plugin(struct sx_queue *q, uint32_t *counts, unsigned nprofiles)
{
	memset(counts, 0, sizeof(*counts) * nprofiles * SX_MAX_PLUGINS);
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; q->nunsched && i < q->nbuckets; i++) {
		for (const struct qpod *e = q->buckets[i]; e; e = e->hnext) {
			uint64_t rej = e->unsched | e->pending;
			if (e->where != W_UNSCHED || e->prof_idx >= nprofiles)
				continue;
			for (unsigned p = 0; p < SX_MAX_PLUGINS && p < 62; p++)
				if (rej & (1ull << p))
					counts[e->prof_idx * SX_MAX_PLUGINS + p]++;
		}
	}
	pthread_mutex_unlock(&q->mu);
}

void sx__queue_to_unsched(struct sx_queue *q, struct qpod *e, bool gated)
{
	sx__queue_count_incoming(q, gated ? QN_GATED : QN_UNSCHED);
	detach(q, e);
	e->where = W_UNSCHED;
	e->gated = gated;
	q->nunsched++;
	if (gated)
		q->ngated++;
}

/* PreEnqueue: true when admitted; otherwise the gating plugin is recorded
 * (and counted among the rejectors, as upstream) and e goes to
 * unschedulablePods. */
static bool pre_enqueue(struct sx_queue *q, struct qpod *e)
{
	struct sx_status *st = sx_run_pre_enqueue(e->prof, e->pod);
	int idx;

	if (sx_status_is_success(st)) {
		e->gating = -1;
		return true;
	}
	idx = st->plugin ? sx_plugin_index(st->plugin) : -1;
	sx_status_free(st);
	e->gating = idx;
	e->unsched |= idx >= 0 ? 1ull << idx : SX_REJ_ANY;
	sx__queue_to_unsched(q, e, true);
	return false;
}

/* PreEnqueue (unless it ran when the pod entered backoffQ), then activeQ;
 * gated pods go to unschedulablePods. */
static bool to_active(struct sx_queue *q, struct qpod *e)
{
	bool checked = q->pop_from_backoff && e->where == W_BACKOFF;

	if (!checked && !pre_enqueue(q, e))
		return false;
	detach(q, e);
	if (heap_push(q, &q->active, e) < 0) {
		sx__queue_to_unsched(q, e, false); /* OOM: retried by the next flush */
		return false;
	}
	e->where = W_ACTIVE;
	sx__queue_count_incoming(q, QN_ACTIVE);
	if (e->initial_attempt == 0)
		e->initial_attempt = q->now(q->now_ctx);
	pthread_cond_signal(&q->cond);
	return true;
}

/* Into the backoff heap of its kind; with PopFromBackoffQ PreEnqueue runs
 * here (the pod may be popped from backoffQ directly). */
static bool to_backoff(struct sx_queue *q, struct qpod *e)
{
	if (q->pop_from_backoff && !pre_enqueue(q, e))
		return false;
	detach(q, e);
	if (heap_push(q, backoff_heap(q, e), e) < 0) {
		sx__queue_to_unsched(q, e, false);
		return false;
	}
	e->where = W_BACKOFF;
	sx__queue_count_incoming(q, QN_BACKOFF);
	pthread_cond_signal(&q->cond); /* the popper's wait may need shortening */
	return true;
}

/* isPodBackingoff: gated pods never are. With PopFromBackoffQ the expiry
 * is truncated to its 1-second window and a pod still backs off while that
 * window is not before now's (1.34: !expiry.Before(alignToWindow(now))),
 * so a 1 s backoff ends 1-2 s after the failure. */
static bool backing_off(const struct sx_queue *q, const struct qpod *e, double now)
{
	if (e->gated)
		return false;
	if (q->pop_from_backoff)
		return window(q, e->expiry) >= window(q, now);
	return e->expiry > now;
}

enum where sx__queue_requeue_strategy(struct sx_queue *q, struct qpod *e, enum strategy s,
				      double now)
{
	if (s == S_SKIP) {
		if (e->where != W_UNSCHED)
			sx__queue_to_unsched(q, e, false);
		return W_UNSCHED;
	}
	if (s == S_AFTER_BACKOFF && backing_off(q, e, now))
		return to_backoff(q, e) ? W_BACKOFF : W_UNSCHED;
	return to_active(q, e) ? W_ACTIVE : W_UNSCHED;
}

/* "After backoff": backoffQ while still backing off, else activeQ. */
static void to_active_or_backoff(struct sx_queue *q, struct qpod *e, double now)
{
	sx__queue_requeue_strategy(q, e, S_AFTER_BACKOFF, now);
}

void sx__queue_set_nominated(struct sx_queue *q, struct qpod *e, sx_str node)
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
	sx__queue_set_nominated(q, e, SX_STR_EMPTY);
	sx__queue_group_unindex(q, e);
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
	q->sort_prof =
		cfg->profiles[0]; /* all profiles share one QueueSort (profile.go cfgValidator) */
	q->now = default_now;
	q->active.less = active_less;
	q->backoff.less = backoff_less;
	q->err_backoff.less = err_backoff_less;
	q->pop_from_backoff = true;
	q->gates_idx = sx_plugin_index("SchedulingGates");
	sx_hmap_init(&q->groups, SX_HMAP_MAX_LIMIT);
	if (sx__queue_build_hints(q) < 0)
		goto fail;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cond, NULL);
	return q;
fail:
	if (q)
		free(q->buckets);
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
	sx__queue_groups_free(q);
	free(q->active.items);
	free(q->backoff.items);
	free(q->err_backoff.items);
	sx__queue_free_events(q);
	sx__queue_free_hints(q);
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

static const struct sx_profile *profile_of(const struct sx_queue *q, const struct sx_pod *pod,
					   unsigned *idx)
{
	const char *name = sx_str_get(pod->scheduler_name);

	for (unsigned i = 0; i < q->cfg->nprofiles; i++)
		if (strcmp(q->cfg->profiles[i]->scheduler_name, name ? name : "") == 0) {
			*idx = i;
			return q->cfg->profiles[i];
		}
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
	struct qpod *e = sx__queue_lookup(q, key);

	if (!e)
		return;
	if (e->where == W_INFLIGHT) {
		e->gone = true;
		sx__queue_set_nominated(q, e, SX_STR_EMPTY);
		return;
	}
	free_entry(q, e);
}

/* An update of an unschedulable pod: each specific change is an event
 * judged by the pod's own rejectors' hints; the first that moves it wins
 * (upstream PriorityQueue.Update with queueing hints). */
static void update_unsched_locked(struct sx_queue *q, struct qpod *e, const struct sx_pod *old_pod)
{
	uint32_t acts = old_pod ? sx_pod_update_actions(old_pod, e->pod) : 0;
	double now = q->now(q->now_ctx);

	if (!old_pod) {
		to_active_or_backoff(q, e, now); /* re-listed: no diff to judge */
		return;
	}
	for (uint32_t bit = 1; acts == 0 || bit <= acts; bit <<= 1) {
		struct sx_cluster_event ev = {SX_RES_UNSCHEDULED_POD, acts ? bit : SX_ACT_UPDATE,
					      NULL};
		enum strategy st;

		if (acts && !(acts & bit))
			continue;
		st = sx__queue_worth(q, e, &ev, old_pod, e->pod);
		if (st != S_SKIP && sx__queue_requeue_strategy(q, e, st, now) != W_UNSCHED)
			return;
		if (!acts)
			return;
	}
}

/* An update of a pod in flight is kept for its own replay (upstream
 * addEventsIfPodInFlight): a gate or toleration added meanwhile counts. */
static void record_own_update(struct sx_queue *q, const struct sx_pod *old_pod,
			      const struct sx_pod *pod)
{
	uint32_t acts = sx_pod_update_actions(old_pod, pod);
	struct sx_cluster_event ev = {SX_RES_UNSCHEDULED_POD, SX_ACT_UPDATE, NULL};

	if (!acts)
		sx__queue_record_locked(q, &ev, old_pod, pod);
	for (uint32_t bit = 1; acts && bit <= acts; bit <<= 1)
		if (acts & bit) {
			ev.action = bit;
			sx__queue_record_locked(q, &ev, old_pod, pod);
		}
}

/* Add or update of a pod we schedule. */
static void upsert_locked(struct sx_queue *q, const struct sx_pod *old_pod,
			  const struct sx_pod *pod, const struct sx_profile *prof,
			  unsigned prof_idx, const char *key)
{
	struct qpod *e = sx__queue_lookup(q, key);

	if (!e) {
		e = insert(q, key);
		if (!e)
			return;
		e->pod = sx_pod_ref(pod);
		e->prof = prof;
		e->prof_idx = prof_idx;
		e->gating = -1;
		sx__queue_group_index(q, e);
		e->timestamp = q->now(q->now_ctx);
		q->cur_event = "PodAdd";
		to_active(q, e);
		/* With GenericWorkload a new pending pod is also an
		 * UnscheduledPod/Add cluster event: it may complete another
		 * pod's gang (GangScheduling's isSchedulableAfterPodAdded). */
		if (sx_feature_enabled(&q->cfg->features, SX_FEATURE_GENERIC_WORKLOAD)) {
			struct sx_cluster_event ev = {SX_RES_UNSCHEDULED_POD, SX_ACT_ADD, NULL};

			sx__queue_event_locked(q, &ev, NULL, pod, NULL);
		}
	} else {
		q->cur_event = "PodUpdate";
		sx_pod_unref(e->pod);
		e->pod = sx_pod_ref(pod);
		e->prof = prof;
		e->prof_idx = prof_idx;
		e->gone = false;
		sx__queue_group_index(q, e);
		if (e->where == W_ACTIVE)
			heap_fix(q, &q->active, e);
		else if (e->where == W_BACKOFF)
			heap_fix(q, backoff_heap(q, e), e);
		else if (e->where == W_UNSCHED)
			update_unsched_locked(q, e, old_pod);
		else if (e->where == W_INFLIGHT && old_pod)
			record_own_update(q, old_pod, pod);
	}
	/* Nominator: a nomination in the object wins; a cleared one clears.
	 * Not for an assumed pod: upstream ignores its updates
	 * (updatePodInSchedulingQueue), so the binding cycle's own
	 * nominatedNodeName does not count it twice on its node. */
	if (!e->assumed && pod->nominated_node != SX_STR_EMPTY)
		sx__queue_set_nominated(q, e, pod->nominated_node);
	else if (!e->assumed && old_pod && old_pod->nominated_node != SX_STR_EMPTY)
		sx__queue_set_nominated(q, e, SX_STR_EMPTY);
}

/* Events about a pod that is not (or no longer) ours to schedule. */
static void foreign_pod_event(struct sx_queue *q, const struct sx_pod *old_pod,
			      const struct sx_pod *new_pod)
{
	struct sx_cluster_event ev = {SX_RES_ASSIGNED_POD, SX_ACT_ADD, NULL};
	uint32_t acts;

	if (new_pod->node_name == SX_STR_EMPTY)
		return; /* another scheduler's pending pod: not watched upstream */
	if (!old_pod || old_pod->node_name == SX_STR_EMPTY) {
		sx__queue_event_locked(q, &ev, NULL, new_pod, NULL);
		return;
	}
	acts = sx_pod_update_actions(old_pod, new_pod);
	ev.action = SX_ACT_UPDATE;
	if (!acts)
		sx__queue_event_locked(q, &ev, old_pod, new_pod, NULL);
	for (uint32_t bit = 1; acts && bit <= acts; bit <<= 1)
		if (acts & bit) {
			ev.action = bit;
			sx__queue_event_locked(q, &ev, old_pod, new_pod, NULL);
		}
}

void sx_queue_pod_update(struct sx_queue *q, const struct sx_pod *old_pod,
			 const struct sx_pod *new_pod)
{
	char key[512];
	const struct sx_profile *prof;
	unsigned idx = 0;

	if (!new_pod)
		return;
	sx__queue_pod_key(new_pod, key, sizeof(key));
	prof = profile_of(q, new_pod, &idx);
	pthread_mutex_lock(&q->mu);
	if (prof && schedulable(new_pod)) {
		upsert_locked(q, old_pod, new_pod, prof, idx, key);
	} else {
		remove_locked(q, key);
		foreign_pod_event(q, old_pod, new_pod);
	}
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_pod_delete(struct sx_queue *q, const struct sx_pod *pod)
{
	struct sx_cluster_event ev = {SX_RES_ASSIGNED_POD, SX_ACT_DELETE, NULL};
	char key[512];
	unsigned idx;

	sx__queue_pod_key(pod, key, sizeof(key));
	if (pod->node_name == SX_STR_EMPTY) {
		if (!profile_of(q, pod, &idx))
			return; /* not watched upstream */
		ev.resource = SX_RES_UNSCHEDULED_POD;
	}
	pthread_mutex_lock(&q->mu);
	remove_locked(q, key);
	sx__queue_event_locked(q, &ev, pod, NULL, NULL);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_node_event(struct sx_queue *q, const struct sx_node *old_node,
			 const struct sx_node *new_node)
{
	struct sx_cluster_event ev = {SX_RES_NODE, SX_ACT_ADD, NULL};
	uint32_t acts;

	if (!old_node && !new_node)
		return;
	pthread_mutex_lock(&q->mu);
	if (!old_node || !new_node) {
		ev.action = old_node ? SX_ACT_DELETE : SX_ACT_ADD;
		sx__queue_event_locked(q, &ev, old_node, new_node, NULL);
		pthread_mutex_unlock(&q->mu);
		return;
	}
	acts = sx_node_update_actions(old_node, new_node);
	for (uint32_t bit = 1; acts && bit <= acts; bit <<= 1)
		if (acts & bit) {
			ev.action = bit;
			sx__queue_event_locked(q, &ev, old_node, new_node, NULL);
		}
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_move_all(struct sx_queue *q, const char *event)
{
	struct sx_cluster_event ev = {SX_RES_WILDCARD, SX_ACT_ALL, event};

	pthread_mutex_lock(&q->mu);
	sx__queue_event_locked(q, &ev, NULL, NULL, NULL);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_cluster_event(struct sx_queue *q, enum sx_event_resource res, uint32_t action,
			    const void *old_obj, const void *new_obj)
{
	struct sx_cluster_event ev = {(uint8_t)res, action, NULL};

	pthread_mutex_lock(&q->mu);
	sx__queue_event_locked(q, &ev, old_obj, new_obj, NULL);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_assigned_pod_deleted(struct sx_queue *q, const struct sx_pod *pod, bool skip_self)
{
	struct sx_cluster_event ev = {SX_RES_ASSIGNED_POD, SX_ACT_DELETE, NULL};
	char key[512];

	pthread_mutex_lock(&q->mu);
	sx__queue_event_locked(
		q, &ev, pod, NULL,
		skip_self ? sx__queue_lookup(q, sx__queue_pod_key(pod, key, sizeof(key))) : NULL);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_activate(struct sx_queue *q, const struct sx_pod *pod)
{
	sx_queue_activate_name(q, pod->meta.ns, pod->meta.name);
}

void sx_queue_activate_name(struct sx_queue *q, sx_str ns, const char *name)
{
	char key[512];
	struct qpod *e;

	snprintf(key, sizeof(key), "%s/%s", sx_str_get(ns), name);
	pthread_mutex_lock(&q->mu);
	e = sx__queue_lookup(q, key);
	if (e && (e->where == W_UNSCHED || e->where == W_BACKOFF)) {
		q->cur_event = "ForceActivate";
		to_active(q, e);
		q->stats.moved++;
	}
	pthread_mutex_unlock(&q->mu);
}

/* ---------- scheduling side ---------- */

static void flush_locked(struct sx_queue *q)
{
	double now = q->now(q->now_ctx);

	q->cur_event = "BackoffComplete";
	while (q->backoff.n > 0 && !backing_off(q, q->backoff.items[0], now))
		to_active(q, q->backoff.items[0]);
	while (q->err_backoff.n > 0 && !backing_off(q, q->err_backoff.items[0], now))
		to_active(q, q->err_backoff.items[0]);
	if (q->nunsched == 0 || now - q->last_unsched_flush < 1.0)
		return;
	q->last_unsched_flush = now;
	q->cur_event = "UnschedulableTimeout";
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

/* Pops e (the head of activeQ or of the rejection backoff heap): it is in
 * flight, its rejectors are reset for the new attempt. */
void sx__queue_pop_locked(struct sx_queue *q, struct qpod *e, struct sx_queue_item *out)
{
	detach(q, e);
	e->where = W_INFLIGHT;
	q->ninflight++;
	sx__queue_inflight_add(q, e);
	e->attempts++;
	e->unsched = e->pending = 0;
	e->gating = -1;
	if (e->initial_attempt == 0)
		e->initial_attempt = q->now(q->now_ctx);
	out->pod = sx_pod_ref(e->pod);
	out->profile = e->prof;
	out->attempts = e->attempts;
	out->initial_attempt = e->initial_attempt;
	out->timestamp = e->timestamp;
}

/* Waits on the real clock for at most `s` seconds. */
static void timed_wait(struct sx_queue *q, double s)
{
	struct timespec ts = sx_deadline_after_s(s);

	pthread_cond_timedwait(&q->cond, &q->mu, &ts);
}

/* Seconds until the next backoff completes, at most `wait`. */
static double next_backoff_wait(struct sx_queue *q, double wait)
{
	const struct heap *hs[2] = {&q->backoff, &q->err_backoff};

	for (int i = 0; i < 2; i++) {
		double due;

		if (hs[i]->n == 0)
			continue;
		due = window(q, hs[i]->items[0]->expiry) + (q->pop_from_backoff ? 1 : 0) -
		      q->now(q->now_ctx);
		if (due < wait)
			wait = due > 0.001 ? due : 0.001;
	}
	return wait;
}

int sx_queue_pop(struct sx_queue *q, double timeout_s, struct sx_queue_item *out)
{
	double deadline = sx_now_s() + timeout_s;
	int rc = SX_ENOENT;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->mu);
	for (;;) {
		double left;

		if (q->closed) {
			rc = SX_EIO;
			break;
		}
		flush_locked(q);
		if (q->active.n > 0 || (q->pop_from_backoff && q->backoff.n > 0)) {
			if (q->active.n == 0)
				q->stats.backoff_pops++;
			sx__queue_pop_locked(
				q, q->active.n ? q->active.items[0] : q->backoff.items[0], out);
			rc = 0;
			break;
		}
		left = deadline - sx_now_s();
		if (left <= 0)
			break;
		timed_wait(q, next_backoff_wait(q, left < 1.0 ? left : 1.0));
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

static struct qpod *inflight_entry(struct sx_queue *q, const struct sx_pod *pod)
{
	char key[512];
	struct qpod *e = sx__queue_lookup(q, sx__queue_pod_key(pod, key, sizeof(key)));

	return (e && e->where == W_INFLIGHT) ? e : NULL;
}

int sx_queue_requeue_rejectors(struct sx_queue *q, const struct sx_pod *pod,
			       const struct sx_rejectors *rej)
{
	bool rejected = rej && (rej->unschedulable | rej->pending);
	enum strategy st;
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
		e->unsched = rej->unschedulable;
		e->pending = rej->pending;
	} else {
		e->err_count++;
	}
	e->err_backoff = !rejected;
	e->timestamp = now;
	e->expiry = now + sx_queue_backoff_duration(q->cfg->pod_initial_backoff_s,
						    q->cfg->pod_max_backoff_s,
						    rejected ? e->unsched_count : e->err_count);
	st = rejected ? sx__queue_replay(q, e) : S_AFTER_BACKOFF;
	q->cur_event = "ScheduleAttemptFailure";
	sx__queue_requeue_strategy(q, e, st, now);
out:
	pthread_mutex_unlock(&q->mu);
	return rc;
}

int sx_queue_requeue(struct sx_queue *q, const struct sx_pod *pod, bool rejected)
{
	struct sx_rejectors r = {rejected ? SX_REJ_ANY : 0, 0};

	return sx_queue_requeue_rejectors(q, pod, &r);
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
		q->cur_event = "ScheduleAttemptFailure";
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
	out->backoff = q->backoff.n + q->err_backoff.n;
	out->unschedulable = q->nunsched - q->ngated;
	out->gated = q->ngated;
	out->in_flight = q->ninflight;
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_stats(struct sx_queue *q, struct sx_queue_stats *out)
{
	pthread_mutex_lock(&q->mu);
	*out = q->stats;
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_set_pop_from_backoff(struct sx_queue *q, bool on)
{
	pthread_mutex_lock(&q->mu);
	q->pop_from_backoff = on;
	pthread_mutex_unlock(&q->mu);
}

static struct qpod *find(struct sx_queue *q, sx_str ns, const char *name)
{
	char key[512];

	snprintf(key, sizeof(key), "%s/%s", sx_str_get(ns), name);
	return sx__queue_lookup(q, key);
}

const char *sx_queue_where(struct sx_queue *q, sx_str ns, const char *name)
{
	static const char *const names[] = {NULL, "active", "backoff", "unschedulable", "inflight"};
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
