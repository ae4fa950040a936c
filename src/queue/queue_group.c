/* Pod groups in the scheduling queue (upstream
 * pkg/scheduler/backend/queue, 1.37: pod groups as queued entities, and
 * schedule_one_podgroup.go podGroupInfoForPod, which pops every queued
 * member of the popped pod's group): the members of one PodGroup are
 * popped together, share one attempt count and so one backoff, and are
 * counted as one entity in scheduler_queued_entities. Pods stay the unit
 * of storage (one entry each, as in queue.c); a group is the set of
 * entries with the same (namespace, spec.schedulingGroup.podGroupName).
 * Everything here runs under sx_queue.mu. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"
#include "schedext/config.h"
#include "schedext/registry.h"

static bool same_group(const struct qpod *e, sx_str ns, sx_str group)
{
	return e->pod && e->pod->meta.ns == ns && e->pod->scheduling_group == group;
}

/* podGroupInfoForPod's order: priority (highest first), then the time the
 * pod first entered activeQ. */
static int member_cmp(const void *a, const void *b)
{
	const struct sx_queue_item *x = a, *y = b;

	if (x->pod->priority != y->pod->priority)
		return x->pod->priority > y->pod->priority ? -1 : 1;
	if (x->initial_attempt != y->initial_attempt)
		return x->initial_attempt < y->initial_attempt ? -1 : 1;
	return strcmp(x->pod->meta.name, y->pod->meta.name);
}

/* A gated member whose PreEnqueue now passes (the event that completed its
 * group may not have moved it yet) joins the group's cycle. */
static bool admitted(const struct qpod *e)
{
	struct sx_status *st = sx_run_pre_enqueue(e->prof, e->pod);
	bool ok = sx_status_is_success(st);

	sx_status_free(st);
	return ok;
}

int sx_queue_pop_group(struct sx_queue *q, const struct sx_queue_item *popped,
		       struct sx_queue_item **out, uint32_t *n)
{
	sx_str ns = popped->pod->meta.ns, group = popped->pod->scheduling_group;
	struct sx_queue_item *items;
	uint32_t cap = 1, k = 0, attempts = 0, unsched = 0, errs = 0;
	struct qpod *self;
	char key[512];

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->nbuckets; i++)
		for (struct qpod *e = q->buckets[i]; e; e = e->hnext)
			cap += same_group(e, ns, group) && e->where != W_INFLIGHT &&
			       e->where != W_NONE;
	items = calloc(cap, sizeof(*items));
	if (!items) {
		pthread_mutex_unlock(&q->mu);
		return SX_ENOMEM;
	}
	items[k++] = *popped;
	items[0].pod = sx_pod_ref(popped->pod);
	self = sx__queue_lookup(q, sx__queue_pod_key(popped->pod, key, sizeof(key)));
	/* PopSpecificPod of every other member waiting (not gated). */
	for (uint32_t i = 0; i < q->nbuckets; i++)
		for (struct qpod *e = q->buckets[i]; e && k < cap; e = e->hnext)
			if (e != self && same_group(e, ns, group) &&
			    (e->where == W_ACTIVE || e->where == W_BACKOFF ||
			     e->where == W_UNSCHED) &&
			    (!e->gated || admitted(e))) {
				/* First attempted in this cycle: as the popped one. */
				if (e->initial_attempt == 0)
					e->initial_attempt = popped->initial_attempt;
				sx__queue_pop_locked(q, e, &items[k++]);
			}
	/* One attempt count, one backoff for the group: the members take the
	 * highest counts among them. */
	for (uint32_t i = 0; i < k; i++) {
		struct qpod *e =
			sx__queue_lookup(q, sx__queue_pod_key(items[i].pod, key, sizeof(key)));

		if (e) {
			attempts = e->attempts > attempts ? e->attempts : attempts;
			unsched = e->unsched_count > unsched ? e->unsched_count : unsched;
			errs = e->err_count > errs ? e->err_count : errs;
		}
	}
	for (uint32_t i = 0; i < k; i++) {
		struct qpod *e =
			sx__queue_lookup(q, sx__queue_pod_key(items[i].pod, key, sizeof(key)));

		if (e) {
			e->attempts = attempts;
			e->unsched_count = unsched;
			e->err_count = errs;
		}
		items[i].attempts = attempts;
	}
	pthread_mutex_unlock(&q->mu);
	qsort(items, k, sizeof(*items), member_cmp);
	*out = items;
	*n = k;
	return 0;
}

/* Distinct groups among the entries counted so far: a small open list
 * (scrapes only; groups in one place are few compared to the pods). */
struct seen {
	uint32_t n, cap;
	struct {
		sx_str ns, group;
	} * g;
};

static bool seen_add(struct seen *s, sx_str ns, sx_str group)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->g[i].ns == ns && s->g[i].group == group)
			return false;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		void *g = realloc(s->g, cap * sizeof(*s->g));

		if (!g)
			return false;
		s->g = g;
		s->cap = cap;
	}
	s->g[s->n].ns = ns;
	s->g[s->n].group = group;
	s->n++;
	return true;
}

static bool group_in_flight(struct sx_queue *q, sx_str ns, sx_str group)
{
	for (struct qpod *e = q->inf_head; e; e = e->inf_next)
		if (same_group(e, ns, group))
			return true;
	return false;
}

void sx_queue_entities(struct sx_queue *q, struct sx_queue_entities *out)
{
	struct seen seen[SX_QUEUE_PLACES] = {{0}};
	int gang = sx_plugin_index("GangScheduling");

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < q->nbuckets; i++)
		for (struct qpod *e = q->buckets[i]; e; e = e->hnext) {
			unsigned place;
			sx_str group = e->pod ? e->pod->scheduling_group : SX_STR_EMPTY;

			if (e->where == W_ACTIVE)
				place = SX_QUEUE_ACTIVE;
			else if (e->where == W_BACKOFF)
				place = SX_QUEUE_BACKOFF;
			else if (e->where == W_UNSCHED)
				place = e->gated ? SX_QUEUE_GATED : SX_QUEUE_UNSCHEDULABLE;
			else
				continue;
			if (group == SX_STR_EMPTY) {
				out->pods[place]++;
				continue;
			}
			/* incomplete: held back until the group can be scheduled */
			if (place == SX_QUEUE_GATED && gang >= 0 && e->gating == gang) {
				out->incomplete++;
				continue;
			}
			/* pending: waiting for the group's cycle in flight */
			if (place != SX_QUEUE_GATED && group_in_flight(q, e->pod->meta.ns, group)) {
				out->pending++;
				continue;
			}
			if (seen_add(&seen[place], e->pod->meta.ns, group))
				out->groups[place]++;
		}
	pthread_mutex_unlock(&q->mu);
	for (unsigned p = 0; p < SX_QUEUE_PLACES; p++)
		free(seen[p].g);
}
