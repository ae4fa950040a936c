/* Pod groups in the scheduling queue (upstream
 * pkg/scheduler/backend/queue, 1.37: pod groups as queued entities, and
 * schedule_one_podgroup.go podGroupInfoForPod, which pops every queued
 * member of the popped pod's group): the members of one PodGroup are
 * popped together, share one attempt count and so one backoff, and are
 * counted as one entity in scheduler_queued_entities. Pods stay the unit
 * of storage (one entry each, as in queue.c); a group is the set of
 * entries with the same (namespace, spec.schedulingGroup.podGroupName),
 * indexed by that pair (sx_queue.groups) so a group's members are found
 * without walking the queue. Everything here runs under sx_queue.mu. */
#include <stdlib.h>
#include <string.h>

#include "queue_int.h"
#include "schedext/config.h"
#include "schedext/hmap.h"
#include "schedext/registry.h"

static bool same_group(const struct qpod *e, sx_str ns, sx_str group)
{
	return e->pod && e->pod->meta.ns == ns && e->pod->scheduling_group == group;
}

static struct qgroup *group_of(const struct sx_queue *q, sx_str ns, sx_str name)
{
	return (struct qgroup *)(uintptr_t)sx_hmap_get(&q->groups, SX_HMAP_PAIR(ns, name));
}

void sx__queue_group_unindex(struct sx_queue *q, struct qpod *e)
{
	struct qgroup *g;

	if (e->gname == SX_STR_EMPTY)
		return;
	g = group_of(q, e->gns, e->gname);
	for (uint32_t i = 0; g && i < g->n; i++)
		if (g->m[i] == e) {
			g->m[i] = g->m[--g->n];
			break;
		}
	if (g && g->n == 0) {
		sx_hmap_del(&q->groups, SX_HMAP_PAIR(e->gns, e->gname));
		free(g->m);
		free(g);
	}
	e->gname = SX_STR_EMPTY;
}

void sx__queue_group_index(struct sx_queue *q, struct qpod *e)
{
	sx_str ns = e->pod->meta.ns, name = e->pod->scheduling_group;
	struct qgroup *g;

	if (e->gname == name && e->gns == ns)
		return;
	sx__queue_group_unindex(q, e);
	if (name == SX_STR_EMPTY)
		return;
	g = group_of(q, ns, name);
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || sx_hmap_put(&q->groups, SX_HMAP_PAIR(ns, name), (uintptr_t)g) < 0) {
			free(g);
			return; /* unindexed: scheduled in a cycle of its own */
		}
	}
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 4;
		struct qpod **m = realloc(g->m, cap * sizeof(*m));

		if (!m) {
			if (g->n == 0) {
				sx_hmap_del(&q->groups, SX_HMAP_PAIR(ns, name));
				free(g);
			}
			return;
		}
		g->m = m;
		g->cap = cap;
	}
	g->m[g->n++] = e;
	e->gns = ns;
	e->gname = name;
}

void sx__queue_groups_free(struct sx_queue *q)
{
	for (uint32_t i = 0; q->groups.slots && i < q->groups.cap; i++)
		if (q->groups.slots[i].val) {
			struct qgroup *g = (struct qgroup *)(uintptr_t)q->groups.slots[i].val;

			free(g->m);
			free(g);
		}
	sx_hmap_clear(&q->groups);
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
	struct qgroup *g = group_of(q, ns, group);
	cap += g ? g->n : 0;
	items = calloc(cap, sizeof(*items));
	if (!items) {
		pthread_mutex_unlock(&q->mu);
		return SX_ENOMEM;
	}
	items[k++] = *popped;
	items[0].pod = sx_pod_ref(popped->pod);
	self = sx__queue_lookup(q, sx__queue_pod_key(popped->pod, key, sizeof(key)));
	/* PopSpecificPod of every other member waiting; popping moves no
	 * entry out of the group index. */
	for (uint32_t i = 0; g && i < g->n && k < cap; i++) {
		struct qpod *e = g->m[i];

		if (e == self || !same_group(e, ns, group) ||
		    !(e->where == W_ACTIVE || e->where == W_BACKOFF || e->where == W_UNSCHED) ||
		    (e->gated && !admitted(e)))
			continue;
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

static int place_of(const struct qpod *e)
{
	switch (e->where) {
	case W_ACTIVE:
		return SX_QUEUE_ACTIVE;
	case W_BACKOFF:
		return SX_QUEUE_BACKOFF;
	case W_UNSCHED:
		return e->gated ? SX_QUEUE_GATED : SX_QUEUE_UNSCHEDULABLE;
	default:
		return -1;
	}
}

void sx_queue_entities(struct sx_queue *q, struct sx_queue_entities *out)
{
	int gang = sx_plugin_index("GangScheduling");

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&q->mu);
	/* Pods of no group (or left out of the index), one by one. */
	for (uint32_t i = 0; i < q->nbuckets; i++)
		for (struct qpod *e = q->buckets[i]; e; e = e->hnext) {
			int place = place_of(e);

			if (place >= 0 && e->gname == SX_STR_EMPTY)
				out->pods[place]++;
		}
	/* Each group once per place it has members in. */
	for (uint32_t i = 0; q->groups.slots && i < q->groups.cap; i++) {
		const struct qgroup *g = (const struct qgroup *)(uintptr_t)q->groups.slots[i].val;
		bool in_flight = false, present[SX_QUEUE_PLACES] = {false};

		if (!g)
			continue;
		for (uint32_t j = 0; j < g->n; j++)
			in_flight |= g->m[j]->where == W_INFLIGHT;
		for (uint32_t j = 0; j < g->n; j++) {
			const struct qpod *e = g->m[j];
			int place = place_of(e);

			if (place < 0)
				continue;
			/* incomplete: held back until the group can be scheduled */
			if (place == SX_QUEUE_GATED && gang >= 0 && e->gating == gang)
				out->incomplete++;
			/* pending: waiting for the group's cycle in flight */
			else if (place != SX_QUEUE_GATED && in_flight)
				out->pending++;
			else
				present[place] = true;
		}
		for (unsigned p = 0; p < SX_QUEUE_PLACES; p++)
			out->groups[p] += present[p];
	}
	pthread_mutex_unlock(&q->mu);
}
