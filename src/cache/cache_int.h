/* Internals shared by cache.c, node_info.c, snapshot.c and cache_visit.c
 * (not a public header): a string-keyed hash map, the generation counter,
 * the shared immutable blocks that snapshots reference through `internal`,
 * and the cache's own state. */
#ifndef SCHEDEXT_CACHE_INT_H
#define SCHEDEXT_CACHE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/cache.h"
#include "schedext/hmap.h"

/* ---------- string-keyed map (open addressing, linear probing) ----------
 * Keys are copied and owned by the map; values are borrowed. A zeroed
 * struct is an empty map. Not thread-safe (the cache mutex guards it). */
struct sx__map_slot {
	char *key; /* NULL = empty */
	uint64_t hash;
	void *value;
};

struct sx__map {
	uint32_t cap; /* power of two or 0 */
	uint32_t n;
	struct sx__map_slot *slots;
};

void *sx__map_get(const struct sx__map *m, const char *key);
/* Inserts or replaces; 0 or SX_ENOMEM. */
int sx__map_put(struct sx__map *m, const char *key, void *value);
/* Removes key; returns its value, or NULL when absent. */
void *sx__map_del(struct sx__map *m, const char *key);
void sx__map_free(struct sx__map *m);

/* "ns/name" (or "name" when ns is empty) into buf; NULL when it does not
 * fit (callers reject such names: the decoder bounds them far below). */
const char *sx__object_key(char *buf, size_t len, sx_str ns, const char *name);
#define SX__KEY_MAX 1024

/* Process-wide monotonic generation, as upstream's nextGeneration(). */
uint64_t sx__next_generation(void);

/* ---------- blocks shared between snapshots ---------- */

/* An immutable sorted array of objects of one kind group, holding one
 * reference on each object. */
struct sx__kind_block {
	atomic_int refcount;
	uint32_t n;
	struct sx_object *items; /* sorted by (namespace, name, kind) */
	const void **ptrs;	 /* items[i].obj, for the snapshot's arrays */
	/* The same objects ordered by a secondary key id, then name (PVs by
	 * storage class, CSIStorageCapacities by storage class,
	 * VolumeAttachments and CSINodes by node); NULL for the other groups. */
	const void **by_key;
	sx_str *keys; /* keys[i] is by_key[i]'s key */
};

/* Fills b->by_key/keys when b's kind has a secondary key; SX_ENOMEM. */
int sx__kind_block_index(struct sx__kind_block *b);
/* The secondary key of an object (see sx__kind_block.by_key), or false
 * when its kind has none. */
bool sx__object_alt_key(const struct sx_object *o, sx_str *key);

/* ---------- PVCs in use by pods on nodes ---------- */

/* A multiset of (namespace, claim) pairs: SX_HMAP_PAIR(ns, name) -> the
 * number of uses (above 0). A zeroed struct is empty. */
struct sx__pvc_set {
	struct sx_hmap uses;
};

/* Adds (sign 1) or removes (sign -1) one use of each claim of pod. */
int sx__pvc_set_apply(struct sx__pvc_set *s, const struct sx_pod *pod, int sign);
bool sx__pvc_set_has(const struct sx__pvc_set *s, sx_str ns, sx_str name);
void sx__pvc_set_free(struct sx__pvc_set *s);

/* An immutable copy of a PVC set shared by snapshots. */
struct sx__pvc_block {
	atomic_int refcount;
	struct sx__pvc_set set;
};
struct sx__pvc_block *sx__pvc_block_new(const struct sx__pvc_set *s);
void sx__pvc_block_unref(struct sx__pvc_block *b);

/* Image name -> number of nodes listing it (open addressing by name id). */
struct sx__image_block {
	atomic_int refcount;
	uint32_t cap;		      /* power of two */
	struct sx_image_count *slots; /* name SX_STR_EMPTY = empty slot */
};

/* The snapshot's blocks of other kinds: one per CACHE_GROUP row of
 * kinds.def (CACHE_JOIN rows share a previous row's block). */
enum sx__group {
#define GROUP_OF_CACHE_OWN
#define GROUP_OF_CACHE_JOIN(G)
#define GROUP_OF_CACHE_GROUP(G, FIELD, T) SX__G_##G,
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, ...)          \
	GROUP_OF_##CACHE
#include "schedext/kinds.def"
#undef GROUP_OF_CACHE_OWN
#undef GROUP_OF_CACHE_JOIN
#undef GROUP_OF_CACHE_GROUP
	SX__G_COUNT
};

/* Group of a non-node, non-pod kind; -1 otherwise. */
int sx__kind_group(enum sx_kind kind);

/* The name index of a snapshot (name -> position): it depends only on the
 * node order, so snapshots with the same node list share it. */
struct sx__index_block {
	atomic_int refcount;
	uint32_t cap;	  /* power of two */
	uint32_t slots[]; /* UINT32_MAX = empty */
};

/* The references a snapshot holds on its NodeInfos. Taking and dropping
 * one reference per NodeInfo per snapshot costs two atomic operations on
 * 5000 cache lines per cycle, so a snapshot patched from the previous one
 * holds only the NodeInfos swapped in (`own`) plus a reference on the
 * previous snapshot's block (`parent`), which in turn keeps every NodeInfo
 * the two share alive. A full block (parent NULL) owns every NodeInfo of
 * its snapshot. Chains are flattened into a full block when they grow
 * deep or hold many superseded NodeInfos (sx__snapshot_patch). */
struct sx__node_block {
	atomic_int refcount;
	uint32_t depth;	      /* 0 for a full block */
	uint32_t chain_owned; /* NodeInfos owned by this block and its patched ancestors */
	struct sx__node_block *parent;
	uint32_t n;
	struct sx_node_info **own; /* one reference each */
};

struct sx__snap_internal {
	struct sx__kind_block *groups[SX__G_COUNT];
	struct sx__pvc_block *used_pvcs; /* NULL: no claim in use */
	struct sx__image_block *images;
	struct sx__index_block *index;
	struct sx__node_block *nodes; /* keeps the snapshot's NodeInfos alive */
	bool nodes_array_owned;	      /* snapshot->nodes is not nodes->own */
};

struct sx__kind_block *sx__kind_block_new(struct sx_object *items, uint32_t n);
void sx__kind_block_unref(struct sx__kind_block *b);
/* Builds an image block from (name, count) pairs. */
struct sx__image_block *sx__image_block_new(const struct sx_image_count *counts, uint32_t n);
void sx__image_block_unref(struct sx__image_block *b);

/* Allocates a snapshot over nodes[0..n) (references are taken over: the
 * array itself is adopted), sharing the given blocks (references taken),
 * and computes the derived lists and the name index. When same_order is
 * not NULL, its nodes have the same names in the same order, and its name
 * index is shared instead of rebuilt. NULL on OOM (the node references are
 * then released). */
struct sx_snapshot *sx__snapshot_build(uint64_t generation, struct sx_node_info **nodes, uint32_t n,
				       struct sx__kind_block *const *groups,
				       struct sx__image_block *images,
				       const struct sx_snapshot *same_order);

/* A snapshot over last's nodes with some of them swapped: nodes[0..
 * last->nnodes) is adopted (the array, without references: every entry is
 * either in last or in changed), changed[0..nchanged) is adopted and a
 * reference is taken here on each entry. The name index is shared with
 * last. NULL on OOM. */
struct sx_snapshot *sx__snapshot_patch(const struct sx_snapshot *last, uint64_t generation,
				       struct sx_node_info **nodes, struct sx_node_info **changed,
				       uint32_t nchanged, struct sx__kind_block *const *groups,
				       struct sx__image_block *images);

/* Shares b (a reference is taken; NULL: none) as s's PVCs in use. */
void sx__snapshot_set_used_pvcs(struct sx_snapshot *s, struct sx__pvc_block *b);

/* Sorts ids[0..n) and drops repeats; returns the new length. */
size_t sx__unique_ids(sx_str *ids, size_t n);

/* Object helpers */
void sx__object_ref(const struct sx_object *o);
int sx__object_cmp(const struct sx_object *a, const struct sx_object *b);

/* ---------- the cache's state ----------
 * Written by cache.c under c->mu; read by the snapshot builder in
 * snapshot.c and by cache_visit.c, both under the same mutex. */

struct pod_entry {
	const struct sx_pod *pod;     /* latest from the API; NULL = known only as assumed */
	const struct sx_pod *assumed; /* counted copy while the binding is in flight */
	sx_str node;		      /* where counted; SX_STR_EMPTY = nowhere (pending) */
	bool binding_finished;
	double finished_at; /* sx_now_s() at finish_binding */
};

/* Node tree (upstream backend/cache/node_tree.go): zones in insertion order, names in each. */
struct zone {
	sx_str region, zone;
	uint32_t n, cap;
	sx_str *names;
};

struct image_slot {
	sx_str name; /* SX_STR_EMPTY = empty slot; entries are never removed */
	uint32_t nodes;
};

struct sx_cache {
	pthread_mutex_t mu;
	uint64_t generation;
	struct sx__map pods;  /* "ns/name" -> struct pod_entry */
	struct sx__map nodes; /* node name -> struct sx_node_info (with or without node) */
	uint32_t nnode_objects;
	uint32_t nzones, cap_zones, tree_size;
	struct zone *zones;
	struct sx__map kinds[SX_KIND_COUNT]; /* other kinds: key -> object */
	bool group_dirty[SX__G_COUNT];
	struct sx__kind_block *groups[SX__G_COUNT];
	uint32_t image_cap, image_n;
	struct image_slot *images;
	bool images_dirty;
	struct sx__image_block *image_block;
	struct sx_snapshot *last;
	/* Since `last` was built: did the node tree change (then the next
	 * snapshot is built from scratch), and which NodeInfos were replaced
	 * in `nodes` (the next one patches a copy of last's list). */
	bool tree_dirty;
	/* An allocation failed while the node tree or the image counts were
	 * updated: both are recomputed from the nodes before the next
	 * snapshot (sx__cache_rebuild_derived), so a failed upsert never
	 * leaves a node out of the tree or an image count off for good. */
	bool derived_broken;
	bool replaced_overflow; /* too many to list: build from scratch */
	uint32_t nreplaced, cap_replaced;
	sx_str *replaced;
	struct sx_cache_listener listener;
	/* PVCs used by pods counted on nodes, and its copy for snapshots. */
	struct sx__pvc_set used_pvcs;
	bool used_pvcs_dirty;
	struct sx__pvc_block *used_pvcs_block;
};

#define REPLACED_MAX 4096

/* Recomputes the node tree and the image counts from the node objects
 * (cache.c; under the lock, when derived_broken). 0 or SX_ENOMEM. */
int sx__cache_rebuild_derived(struct sx_cache *c);

static inline struct sx_node_info *sx__cache_node_info(struct sx_cache *c, sx_str name)
{
	return sx__map_get(&c->nodes, sx_str_get(name));
}

/* The pod a reader sees: the assumed copy while a binding is in flight. */
static inline const struct sx_pod *sx__pod_entry_visible(const struct pod_entry *e)
{
	return e->assumed ? e->assumed : e->pod;
}

/* Single-object writers of cache.c, for cache_bulk.c; c->mu held. */
int sx__cache_validate(const struct sx_object *o);
/* Takes over o's reference. */
int sx__cache_upsert_locked(struct sx_cache *c, struct sx_object *o);
int sx__cache_delete_locked(struct sx_cache *c, enum sx_kind kind, sx_str ns, const char *name);
void sx__cache_remove_entry(struct sx_cache *c, const char *key, struct pod_entry *e);
int sx__cache_delete_node(struct sx_cache *c, const char *name);
int sx__cache_delete_other(struct sx_cache *c, enum sx_kind kind, const char *key);

/* Multiplicative hash of an interned string id, for the open-addressing
 * node index and image counts of a snapshot. */
static inline uint32_t sx__hash_id(uint32_t id)
{
	return id * 2654435761u;
}

#endif /* SCHEDEXT_CACHE_INT_H */
