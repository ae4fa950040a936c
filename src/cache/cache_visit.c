/* Visiting the cache's objects in a stable order, and its statistics
 * (cache.h); both read the cache's state under its mutex. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"

struct visit_item {
	struct sx_object o;
	sx_str node;
	bool assumed;
};

static int cmp_visit(const void *a, const void *b)
{
	return sx__object_cmp(&((const struct visit_item *)a)->o,
			      &((const struct visit_item *)b)->o);
}

static uint32_t collect(struct sx_cache *c, enum sx_kind kind, struct visit_item *out)
{
	const struct sx__map *m = kind == SX_KIND_POD	 ? &c->pods
				  : kind == SX_KIND_NODE ? &c->nodes
							 : &c->kinds[kind];
	uint32_t k = 0;

	for (uint32_t i = 0; i < m->cap; i++) {
		void *v = m->slots[i].value;

		if (!m->slots[i].key)
			continue;
		if (kind == SX_KIND_POD) {
			const struct pod_entry *e = v;

			out[k++] = (struct visit_item){{kind, (void *)sx__pod_entry_visible(e)},
						       e->node,
						       e->assumed != NULL};
		} else if (kind == SX_KIND_NODE) {
			const struct sx_node_info *ni = v;

			if (ni->node)
				out[k++] = (struct visit_item){
					{kind, (void *)ni->node}, ni->name, false};
		} else {
			out[k++] = (struct visit_item){{kind, v}, SX_STR_EMPTY, false};
		}
	}
	return k;
}

void sx_cache_visit(struct sx_cache *c, enum sx_kind kind, sx_cache_visit_fn fn, void *ctx)
{
	struct visit_item *items;
	uint32_t n;

	if (kind <= SX_KIND_UNKNOWN || kind >= SX_KIND_COUNT)
		return;
	pthread_mutex_lock(&c->mu);
	n = kind == SX_KIND_POD ? c->pods.n : kind == SX_KIND_NODE ? c->nodes.n : c->kinds[kind].n;
	items = sx_calloc(n, sizeof(*items));
	if (items) {
		n = collect(c, kind, items);
		qsort(items, n, sizeof(*items), cmp_visit);
		for (uint32_t i = 0; i < n; i++)
			fn(ctx, &items[i].o, items[i].node, items[i].assumed);
	}
	pthread_mutex_unlock(&c->mu);
	free(items);
}

void sx_cache_stats(struct sx_cache *c, struct sx_cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->mu);
	out->nodes = c->nnode_objects;
	for (uint32_t i = 0; i < c->pods.cap; i++) {
		const struct pod_entry *e = c->pods.slots[i].value;

		if (!c->pods.slots[i].key)
			continue;
		out->pods++;
		if (e->assumed)
			out->assumed_pods++;
		else if (e->node != SX_STR_EMPTY)
			out->bound_pods++;
		else
			out->pending_pods++;
	}
	out->objects[SX_KIND_NODE] = out->nodes;
	out->objects[SX_KIND_POD] = out->pods;
	for (int k = 0; k < SX_KIND_COUNT; k++)
		if (k != SX_KIND_NODE && k != SX_KIND_POD)
			out->objects[k] = c->kinds[k].n;
	pthread_mutex_unlock(&c->mu);
}
