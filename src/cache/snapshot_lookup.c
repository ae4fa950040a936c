/* Snapshot lookups: a node by name, image spread, and the objects of the
 * other kinds a snapshot carries (namespaces, storage, DRA), each by
 * binary search in its sorted shared block. Split from snapshot.c, which
 * builds and patches snapshots. */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"

/* ---------- lookups ---------- */

int sx_snapshot_find(const struct sx_snapshot *snap, sx_str name)
{
	uint32_t mask, j;

	if (!snap || snap->index_cap == 0)
		return -1;
	mask = snap->index_cap - 1;
	for (j = sx__hash_id(name) & mask; snap->index[j] != UINT32_MAX; j = (j + 1) & mask)
		if (snap->nodes[snap->index[j]]->name == name)
			return (int)snap->index[j];
	return -1;
}

uint32_t sx_snapshot_image_nodes(const struct sx_snapshot *snap, sx_str name)
{
	uint32_t mask, j;

	if (!snap || snap->image_cap == 0 || name == SX_STR_EMPTY)
		return 0;
	mask = snap->image_cap - 1;
	for (j = sx__hash_id(name) & mask; snap->image_counts[j].name != SX_STR_EMPTY;
	     j = (j + 1) & mask)
		if (snap->image_counts[j].name == name)
			return snap->image_counts[j].nodes;
	return 0;
}

/* Binary search of a sorted group for (ns, name); NULL when absent. */
static const struct sx_object *group_find(const struct sx_snapshot *snap, int group, sx_str ns,
					  const char *name)
{
	const struct sx__snap_internal *in = snap ? snap->internal : NULL;
	const struct sx__kind_block *b = in ? in->groups[group] : NULL;
	uint32_t lo = 0, hi = b ? b->n : 0;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct sx_meta *m = sx_object_meta(&b->items[mid]);
		int c = strcmp(sx_str_get(m->ns), sx_str_get(ns));

		if (c == 0)
			c = strcmp(m->name ? m->name : "", name);
		if (c == 0)
			return &b->items[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct sx_labels *sx_snapshot_namespace_labels(const struct sx_snapshot *snap, sx_str ns)
{
	const struct sx_object *o =
		group_find(snap, SX__G_NAMESPACES, SX_STR_EMPTY, sx_str_get(ns));

	return o ? &((const struct sx_generic *)o->obj)->meta.labels : NULL;
}

const struct sx_pvc *sx_snapshot_find_pvc(const struct sx_snapshot *snap, sx_str ns, sx_str name)
{
	const struct sx_object *o = group_find(snap, SX__G_PVCS, ns, sx_str_get(name));

	return o ? o->obj : NULL;
}

const struct sx_pv *sx_snapshot_find_pv(const struct sx_snapshot *snap, sx_str name)
{
	const struct sx_object *o = group_find(snap, SX__G_PVS, SX_STR_EMPTY, sx_str_get(name));

	return o ? o->obj : NULL;
}

const struct sx_storage_class *sx_snapshot_find_storage_class(const struct sx_snapshot *snap,
							      sx_str name)
{
	const struct sx_object *o =
		group_find(snap, SX__G_STORAGE_CLASSES, SX_STR_EMPTY, sx_str_get(name));

	return o ? o->obj : NULL;
}

const struct sx_csi_driver *sx_snapshot_find_csi_driver(const struct sx_snapshot *snap, sx_str name)
{
	const struct sx_object *o =
		group_find(snap, SX__G_CSI_DRIVERS, SX_STR_EMPTY, sx_str_get(name));

	return o ? o->obj : NULL;
}

const struct sx_dra_object *sx_snapshot_find_dra(const struct sx_snapshot *snap, enum sx_kind kind,
						 sx_str ns, sx_str name)
{
	const struct sx_object *o = group_find(snap, sx__kind_group(kind), ns, sx_str_get(name));

	return o ? o->obj : NULL;
}
