/* Cache consistency oracle for the fuzz targets and the allocation-failure
 * sweep: rebuilds a fresh cache from the objects the cache holds and
 * compares every NodeInfo aggregate with the incrementally maintained one.
 * Header-only (static functions) so fuzz targets link nothing extra.
 *
 * sx_recount_check() returns NULL when the cache equals its recount, or a
 * static message naming the first difference. It must run with allocation
 * failures switched off (it allocates the recount). */
#ifndef SCHEDEXT_TEST_RECOUNT_H
#define SCHEDEXT_TEST_RECOUNT_H

#include <stdio.h>
#include <string.h>

#include "schedext/cache.h"
#include "schedext/intern.h"
#include "schedext/model.h"

struct sx_recount {
	struct sx_cache *fresh;
	int failed;
};

static inline void *sx_recount_obj_ref(const struct sx_object *o)
{
	switch (o->kind) {
	case SX_KIND_POD:
		return sx_pod_ref(o->obj);
	case SX_KIND_NODE:
		return sx_node_ref(o->obj);
	case SX_KIND_PV:
		return sx_pv_ref(o->obj);
	case SX_KIND_PVC:
		return sx_pvc_ref(o->obj);
	case SX_KIND_CSI_NODE:
		return sx_csi_node_ref(o->obj);
	default:
		return sx_generic_ref(o->obj);
	}
}

static inline void sx_recount_visit(void *ctx, const struct sx_object *obj, sx_str node,
				    bool assumed)
{
	struct sx_recount *r = ctx;
	struct sx_object o = {obj->kind, sx_recount_obj_ref(obj)};

	if (assumed) {
		/* stored pending, then assumed where the cache counts it */
		if (sx_cache_assume(r->fresh, o.obj, node) != 0)
			r->failed++;
		sx_object_unref(&o);
		return;
	}
	if (sx_cache_upsert(r->fresh, &o) != 0)
		r->failed++;
}

static inline bool sx_recount_res_eq(const struct sx_resources *a, const struct sx_resources *b)
{
	if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
	    a->ephemeral_storage != b->ephemeral_storage || a->pods != b->pods ||
	    a->nscalar != b->nscalar)
		return false;
	for (uint32_t i = 0; i < a->nscalar; i++)
		if (memcmp(&a->scalar[i], &b->scalar[i], sizeof(a->scalar[i])) != 0)
			return false;
	return true;
}

static inline const char *sx_recount_node_diff(const struct sx_node_info *a,
					       const struct sx_node_info *b)
{
	if (a->npods != b->npods)
		return "npods";
	if (a->naffinity != b->naffinity || a->nanti != b->nanti)
		return "affinity pod counts";
	if (!sx_recount_res_eq(&a->requested, &b->requested))
		return "requested";
	if (a->nonzero_milli_cpu != b->nonzero_milli_cpu || a->nonzero_memory != b->nonzero_memory)
		return "nonzero requests";
	if (a->nports != b->nports)
		return "used ports";
	if (a->npvcs != b->npvcs)
		return "pvc refs";
	for (uint32_t i = 0; i < a->npods; i++) {
		uint32_t j = 0;

		while (j < b->npods && (b->pods[j]->meta.ns != a->pods[i]->meta.ns ||
					strcmp(b->pods[j]->meta.name, a->pods[i]->meta.name) != 0))
			j++;
		if (j == b->npods)
			return "pod sets";
	}
	return NULL;
}

/* NULL when equal; else "node <name>: <field>" in a static buffer. */
static inline const char *sx_recount_check(struct sx_cache *cache)
{
	static char msg[256];
	struct sx_recount r = {sx_cache_new(), 0};
	struct sx_cache_stats s1, s2;
	struct sx_snapshot *a, *b;
	const char *diff = NULL;

	if (!r.fresh)
		return "recount: out of memory";
	/* nodes first so pods land on known nodes, as in a real load */
	sx_cache_visit(cache, SX_KIND_NODE, sx_recount_visit, &r);
	for (int k = 1; k < SX_KIND_COUNT; k++)
		if (k != SX_KIND_NODE)
			sx_cache_visit(cache, (enum sx_kind)k, sx_recount_visit, &r);
	sx_cache_stats(cache, &s1);
	sx_cache_stats(r.fresh, &s2);
	a = sx_cache_snapshot(cache);
	b = sx_cache_snapshot(r.fresh);
	if (r.failed)
		diff = "recount: objects rejected by a fresh cache";
	else if (!a || !b)
		diff = "recount: no snapshot";
	else if (memcmp(&s1, &s2, sizeof(s1)) != 0)
		diff = "object counts";
	else if (a->nnodes != b->nnodes)
		diff = "number of nodes";
	/* by name: the node tree's order depends on the insertion history */
	for (uint32_t i = 0; !diff && i < a->nnodes; i++) {
		int j = sx_snapshot_find(b, a->nodes[i]->name);

		diff = j < 0 ? "missing in the recount"
			     : sx_recount_node_diff(a->nodes[i], b->nodes[j]);
		if (diff) {
			snprintf(msg, sizeof(msg), "node %s: %s", sx_str_get(a->nodes[i]->name),
				 diff);
			diff = msg;
		}
	}
	if (a)
		sx_snapshot_unref(a);
	if (b)
		sx_snapshot_unref(b);
	sx_cache_free(r.fresh);
	return diff;
}

#endif
