/* The cache's storage indexes (upstream's volume plugins' listers): PVs and
 * CSIStorageCapacities by storage class, VolumeAttachments and CSINodes
 * by node (a secondary order of their kind blocks), and the set of PVCs
 * used by pods on nodes (snapshot.usedPVCSet, for ReadWriteOncePod), with
 * the snapshot accessors the volume plugins use.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"

/* ---------- secondary order of kind blocks ---------- */

/* The KEY column of kinds.def. */
bool sx__object_alt_key(const struct sx_object *o, sx_str *key)
{
	switch (o->kind) {
#define KEY(MEMBER)                                                                                \
	*key = obj->MEMBER;                                                                        \
	return true;
#define NO_KEY return false;
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, KEY_COL, ...) \
	case SX_KIND_##ID: {                                                                       \
		const struct TYPE *obj = o->obj;                                                   \
		(void)obj;                                                                         \
		KEY_COL                                                                            \
	}
#include "schedext/kinds.def"
#undef KEY
#undef NO_KEY
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		break;
	}
	return false;
}

struct alt_item {
	sx_str key;
	uint32_t pos; /* position in the (namespace, name) order */
	const void *obj;
};

static int cmp_alt(const void *a, const void *b)
{
	const struct alt_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int sx__kind_block_index(struct sx__kind_block *b)
{
	struct alt_item *tmp;
	sx_str key;

	if (b->n == 0 || !sx__object_alt_key(&b->items[0], &key))
		return 0;
	tmp = sx_calloc(b->n, sizeof(*tmp));
	b->by_key = sx_calloc(b->n, sizeof(*b->by_key));
	b->keys = sx_calloc(b->n, sizeof(*b->keys));
	if (!tmp || !b->by_key || !b->keys) {
		free(tmp);
		return SX_ENOMEM;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		sx__object_alt_key(&b->items[i], &tmp[i].key);
		tmp[i].pos = i;
		tmp[i].obj = b->items[i].obj;
	}
	qsort(tmp, b->n, sizeof(*tmp), cmp_alt);
	for (uint32_t i = 0; i < b->n; i++) {
		b->by_key[i] = tmp[i].obj;
		b->keys[i] = tmp[i].key;
	}
	free(tmp);
	return 0;
}

/* The run of group g's objects whose secondary key is `key`. */
static const void *const *by_key(const struct sx_snapshot *snap, int g, sx_str key, uint32_t *n)
{
	const struct sx__snap_internal *in = snap ? snap->internal : NULL;
	const struct sx__kind_block *b = in ? in->groups[g] : NULL;
	uint32_t lo = 0, hi = b && b->by_key ? b->n : 0, end;

	*n = 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!b || !b->by_key)
		return NULL;
	for (end = lo; end < b->n && b->keys[end] == key; end++)
		;
	*n = end - lo;
	return *n ? &b->by_key[lo] : NULL;
}

const struct sx_pv *const *sx_snapshot_pvs_by_class(const struct sx_snapshot *snap, sx_str cls,
						    uint32_t *n)
{
	return (const struct sx_pv *const *)by_key(snap, SX__G_PVS, cls, n);
}

const struct sx_csi_capacity *const *sx_snapshot_capacities_by_class(const struct sx_snapshot *snap,
								     sx_str cls, uint32_t *n)
{
	return (const struct sx_csi_capacity *const *)by_key(snap, SX__G_CSI_CAPACITIES, cls, n);
}

/* NodeVolumeLimits asks on every node it filters: an id search, no
 * string compares. */
const struct sx_csi_node *sx_snapshot_find_csi_node(const struct sx_snapshot *snap, sx_str name)
{
	uint32_t n;
	const void *const *found;

	if (!snap || snap->ncsi_nodes == 0)
		return NULL; /* a cluster without CSI drivers */
	found = by_key(snap, SX__G_CSI_NODES, name, &n);

	return n ? found[0] : NULL;
}

const struct sx_volume_attachment *const *
sx_snapshot_attachments_on_node(const struct sx_snapshot *snap, sx_str node, uint32_t *n)
{
	return (const struct sx_volume_attachment *const *)by_key(snap, SX__G_VOLUME_ATTACHMENTS,
								  node, n);
}

/* ---------- PVCs in use ---------- */

/* Uses of one claim are far fewer than pods; the bound only stops a
 * runaway (an insertion past it fails like an allocation). */
#define PVC_SET_MAX (1u << 22)

static int pvc_add(struct sx__pvc_set *s, sx_str ns, sx_str name, int sign)
{
	uint64_t key = SX_HMAP_PAIR(ns, name);
	struct sx_hmap_slot *slot = sx_hmap_slot(&s->uses, key);

	if (!slot) {
		if (sign < 0)
			return 0; /* removing what was never added */
		return sx_hmap_put(&s->uses, key, (uint64_t)sign) < 0 ? SX_ENOMEM : 0;
	}
	if ((int64_t)slot->val + sign <= 0)
		sx_hmap_del_slot(&s->uses, slot);
	else
		slot->val += (uint64_t)(int64_t)sign;
	return 0;
}

int sx__pvc_set_apply(struct sx__pvc_set *s, const struct sx_pod *pod, int sign)
{
	if (s->uses.max == 0) /* zeroed: empty */
		sx_hmap_init(&s->uses, PVC_SET_MAX);
	for (uint32_t i = 0; i < pod->npvcs; i++)
		if (pvc_add(s, pod->meta.ns, pod->pvcs[i], sign) < 0)
			return SX_ENOMEM;
	return 0;
}

bool sx__pvc_set_has(const struct sx__pvc_set *s, sx_str ns, sx_str name)
{
	return s && sx_hmap_get(&s->uses, SX_HMAP_PAIR(ns, name)) > 0;
}

void sx__pvc_set_free(struct sx__pvc_set *s)
{
	free(s->uses.slots);
	memset(s, 0, sizeof(*s));
}

struct sx__pvc_block *sx__pvc_block_new(const struct sx__pvc_set *s)
{
	struct sx__pvc_block *b = sx_calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	atomic_init(&b->refcount, 1);
	if (sx_hmap_clone(&b->set.uses, &s->uses) < 0) {
		free(b);
		return NULL;
	}
	return b;
}

void sx__pvc_block_unref(struct sx__pvc_block *b)
{
	if (!b || atomic_fetch_sub(&b->refcount, 1) != 1)
		return;
	sx__pvc_set_free(&b->set);
	free(b);
}

bool sx_snapshot_pvc_in_use(const struct sx_snapshot *snap, sx_str ns, sx_str name)
{
	const struct sx__snap_internal *in = snap ? snap->internal : NULL;

	return in && in->used_pvcs && sx__pvc_set_has(&in->used_pvcs->set, ns, name);
}
