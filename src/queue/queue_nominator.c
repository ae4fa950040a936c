/* The nominator of the scheduling queue (upstream backend/queue/nominator.go): the
 * pods a preemption nominated to a node, kept on their queue entries. */
#include <stdlib.h>

#include "queue_int.h"

void sx_queue_nominate(struct sx_queue *q, const struct sx_pod *pod, sx_str node)
{
	char key[512];
	struct qpod *e;

	pthread_mutex_lock(&q->mu);
	e = sx__queue_lookup(q, sx__queue_pod_key(pod, key, sizeof(key)));
	if (e && !e->gone)
		sx__queue_set_nominated(q, e, node);
	pthread_mutex_unlock(&q->mu);
}

void sx_queue_assumed(struct sx_queue *q, const struct sx_pod *pod)
{
	char key[512];
	struct qpod *e;

	pthread_mutex_lock(&q->mu);
	e = sx__queue_lookup(q, sx__queue_pod_key(pod, key, sizeof(key)));
	if (e && !e->gone) {
		sx__queue_set_nominated(q, e, SX_STR_EMPTY);
		e->assumed = e->where == W_INFLIGHT;
	}
	pthread_mutex_unlock(&q->mu);
}

static uint32_t nominated_for_node(void *ctx, sx_str node, const struct sx_pod **out, uint32_t max)
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
					e->nominated, sx_pod_ref(e->pod)};
	pthread_mutex_unlock(&q->mu);
	set->nom.none = set->n == 0;
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
