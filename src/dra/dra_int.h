/* Internals of the DRA allocator (dra_index.c, dra_alloc.c, dra_result.c,
 * dra_memo.c): the slice index layout. Not a public header. */
#ifndef SCHEDEXT_DRA_INT_H
#define SCHEDEXT_DRA_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "schedext/dra_alloc.h"

struct dra_node_ent {
	sx_str node;
	uint32_t slice; /* index into slices */
};

/* The slices of one node: by_node[first .. first + n). */
struct dra_node_span {
	sx_str node; /* SX_STR_EMPTY: a free slot */
	uint32_t first, n;
	uint32_t memo; /* its row of the Filter memo (dra_memo.c) */
	bool no_memo;  /* a slice of it the memo cannot describe */
	bool one_pool; /* its slices are of one pool: */
	sx_str driver, pool;
};

struct dra_pool_info {
	sx_str driver, pool;
	int64_t max_gen;       /* newest generation over all slices of the pool */
	uint32_t count_at_max; /* slices with that generation */
	bool duplicates;       /* those slices repeat a device name */
	uint32_t first, n;     /* its slices: pool_slices[first .. first + n) */
	/* DRAPartitionableDevices: the counter sets of the newest generation's
	 * sharedCounters slices, in slice order, as a node seeing the whole
	 * generation gathers them before the allocated devices' consumption
	 * (dra_alloc.c, pool_counters): tmpl_sets[set_first .. + nsets).
	 * sets_ok: computed and valid (no duplicate set name, every
	 * consumed counter exists); otherwise the allocator builds them. */
	bool sets_ok;
	uint32_t set_first, nsets;
	/* with sets_ok, what its devices consume, device by device:
	 * tmpl_uses[use_first .. + nuses) */
	uint32_t use_first, nuses;
};

/* A counter set of a pool's template: its counters
 * tmpl_ctrs[first .. first + n). */
struct dra_tmpl_set {
	sx_str name;
	uint32_t first, n;
};

struct dra_tmpl_ctr {
	sx_str name;
	sx_nano value;
};

/* A device's consumption of one counter of its pool's template: ctr
 * counts from the pool's first counter (tmpl_sets[set_first].first). */
struct dra_tmpl_use {
	sx_str device;
	uint32_t ctr;
	sx_nano value;
};

/* What Filter reads of a slice to gather a node's pools, in one place
 * (one cache line instead of the slice object, slice_pool, pools and
 * dev_base, each a miss at 5000 nodes). */
struct dra_slice_meta {
	sx_str driver, pool;
	uint32_t pool_ix;  /* slice_pool */
	uint32_t dev_base; /* dev_base */
	int64_t generation, slice_count;
	int64_t pool_max_gen; /* pools[pool_ix] */
	uint32_t pool_count_at_max;
	bool pool_duplicates;
	/* perDeviceNodeSelection or sharedCounters: used only with
	 * DRAPartitionableDevices */
	bool partitionable;
	bool counters; /* sharedCounters, or a device consuming counters */
};

/* Memo slots per device: (expression id << 2) | result + 1. */
#define SX__DRA_MEMO 2

struct sx_dra_index {
	atomic_int refcount;
	uint32_t nslices;
	const struct sx_dra_object **slices; /* one reference each, snapshot order */
	uint32_t npools;
	struct dra_pool_info *pools; /* sorted by driver, pool */
	uint32_t *pool_slices;	     /* slice indices grouped by pool (pools[i].first) */
	uint32_t nby_node;
	struct dra_node_ent *by_node;	/* slices with spec.nodeName, sorted by node id */
	uint32_t node_mask;		/* node_tab: open addressing, mask + 1 slots */
	struct dra_node_span *node_tab; /* by node id: its run of by_node */
	uint32_t nglobal;
	uint32_t *global; /* the other slices */
	uint32_t ndevices;
	uint32_t *dev_base;		/* per slice: its first device's memo row */
	uint32_t *slice_pool;		/* per slice: its entry in pools */
	struct dra_slice_meta *meta;	/* per slice */
	_Atomic uint64_t *memo;		/* [ndevices * SX__DRA_MEMO] */
	struct dra_tmpl_set *tmpl_sets; /* per pool: dra_pool_info.set_first */
	struct dra_tmpl_ctr *tmpl_ctrs;
	struct dra_tmpl_use *tmpl_uses;
	uint32_t nspans; /* nodes in node_tab */
	/* Filter results remembered across cycles, a row per node span
	 * (dra_memo.c); NULL when a slice has no nodeName, so that some
	 * node's devices would depend on more than its name. Written under
	 * its own locks: the one mutable part of the index besides memo. */
	struct sx__dra_fmemo *fmemo;
};

int sx__dra_pool_cmp(sx_str da, sx_str pa, sx_str db, sx_str pb);
const struct dra_pool_info *sx__dra_pool_find(const struct sx_dra_index *ix, sx_str driver,
					      sx_str pool);
/* The devices of one pool with a key in an sx_dra_allocated (whole or
 * shared), in the order added: n of them, the first SX__DRA_POOL_DEVS
 * listed (n above that: the list is incomplete). */
#define SX__DRA_POOL_DEVS 6
struct sx__dra_pool_devs {
	sx_str driver, pool; /* pool SX_STR_EMPTY = empty slot */
	uint32_t n;
	sx_str dev[SX__DRA_POOL_DEVS];
};
/* The pool's entry, NULL when a has no device of it. Valid while a is
 * not changed. */
const struct sx__dra_pool_devs *sx__dra_allocated_pool(const struct sx_dra_allocated *a,
						       sx_str driver, sx_str pool);
/* Changes of a set since a stamp (dra_memo.c): each set has a number no
 * other set has (sx_serial; a copy gets its own) and keeps the pools of
 * its last changes. sx__dra_allocated_unchanged: whether a has changed no
 * device of pool (driver, pool) since stamp s was taken of it (false when
 * it cannot tell: another set, or more changes than it keeps). A NULL set
 * has stamp {0, 0}. */
struct sx__dra_stamp {
	uint64_t id, mods;
};
struct sx__dra_stamp sx__dra_allocated_stamp(const struct sx_dra_allocated *a);
bool sx__dra_allocated_unchanged(const struct sx_dra_allocated *a, struct sx__dra_stamp s,
				 sx_str driver, sx_str pool);
/* Whether a's only reference is its caller's (then nobody else reads it
 * and the caller may change it). */
bool sx__dra_allocated_exclusive(const struct sx_dra_allocated *a);
/* Is the device allocated whole (or shared, when shared_too)? One lookup. */
bool sx__dra_allocated_in_use(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
			      sx_str device, bool shared_too);
/* Slices with nodeName == node: count, first entry in *first. */
uint32_t sx__dra_node_slices(const struct sx_dra_index *ix, sx_str node, uint32_t *first);
/* The node's span of by_node, NULL when no slice names it. */
const struct dra_node_span *sx__dra_node_span(const struct sx_dra_index *ix, sx_str node);

/* The Filter memo of an index (dra_memo.c): rows for nspans nodes; NULL
 * on OOM. */
struct sx__dra_fmemo *sx__dra_fmemo_new(uint32_t nspans);
void sx__dra_fmemo_free(struct sx__dra_fmemo *m);

/* The last index made, shared by the cycles of snapshots with the same
 * ResourceSlice objects (one per claims tracker, dra_claims.c). */
struct sx_dra_index_cache {
	pthread_mutex_t mu;
	struct sx_dra_index *cached; /* a reference, or NULL */
};
struct sx_dra_index *sx__dra_index_cached(struct sx_dra_index_cache *c,
					  const struct sx_snapshot *snap);

#endif /* SCHEDEXT_DRA_INT_H */
