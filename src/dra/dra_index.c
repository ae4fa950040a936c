/* ResourceSlices indexed for the allocator (dra_alloc.h): by node name,
 * the slices every node must check (allNodes, nodeSelector), and per pool
 * the newest generation, how many slices it has, its counter sets and
 * what each device consumes of them (built once per slice set, so a node
 * visit copies them instead of walking the slices); plus the set of
 * devices in use, with per pool the devices it holds (the allocator looks
 * up only those). */
#include "dra_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/selector.h"

/* ---------- building ---------- */

static int node_ent_cmp(const void *a, const void *b)
{
	const struct dra_node_ent *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

int sx__dra_pool_cmp(sx_str da, sx_str pa, sx_str db, sx_str pb)
{
	int c = da == db ? 0 : strcmp(sx_str_get(da), sx_str_get(db));

	if (c == 0 && pa != pb)
		c = strcmp(sx_str_get(pa), sx_str_get(pb));
	return c;
}

static int pool_info_cmp(const void *a, const void *b)
{
	const struct dra_pool_info *x = a, *y = b;

	return sx__dra_pool_cmp(x->driver, x->pool, y->driver, y->pool);
}

static int by_pool(const void *a, const void *b, void *arg)
{
	const uint32_t *sp = arg;
	uint32_t x = sp[*(const uint32_t *)a], y = sp[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static int name_cmp(const void *a, const void *b)
{
	sx_str x = *(const sx_str *)a, y = *(const sx_str *)b;

	return x < y ? -1 : x > y;
}

/* Per pool: do its newest slices repeat a device name (upstream's invalid
 * pool)? Nodes seeing the whole newest generation use this answer. Also
 * keeps the slices grouped by pool (pool_slices). */
static int mark_duplicates(struct sx_dra_index *ix)
{
	uint32_t *order = sx_calloc(ix->nslices + 1, sizeof(*order)), n = 0;

	if (!order)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < ix->nslices; i++)
		order[n++] = i;
	if (n > 1)
		qsort_r(order, n, sizeof(*order), by_pool, ix->slice_pool);
	ix->pool_slices = order;
	for (uint32_t i = 0; i < n;) {
		uint32_t pool = ix->slice_pool[order[i]], j = i, ndev = 0, k = 0;
		sx_str *names;

		while (j < n && ix->slice_pool[order[j]] == pool)
			j++;
		ix->pools[pool].first = i;
		ix->pools[pool].n = j - i;
		for (uint32_t x = i; x < j; x++)
			ndev += ix->slices[order[x]]->u.slice.ndevices;
		names = sx_calloc(ndev + 1, sizeof(*names));
		for (uint32_t x = i; names && x < j; x++) {
			const struct sx_dra_slice *s = &ix->slices[order[x]]->u.slice;

			if (s->generation != ix->pools[pool].max_gen)
				continue;
			for (uint32_t d = 0; d < s->ndevices; d++)
				names[k++] = s->devices[d].name;
		}
		if (names) {
			qsort(names, k, sizeof(*names), name_cmp);
			for (uint32_t x = 1; x < k; x++)
				ix->pools[pool].duplicates |= names[x] == names[x - 1];
		}
		free(names);
		i = j;
	}
	return 0;
}

/* Sorted unique pools with the newest generation's slice count. */
static int build_pools(struct sx_dra_index *ix)
{
	struct dra_pool_info *p = sx_calloc(ix->nslices + 1, sizeof(*p));
	uint32_t n = 0;

	if (!p)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < ix->nslices; i++) {
		const struct sx_dra_slice *s = &ix->slices[i]->u.slice;

		p[n++] = (struct dra_pool_info){
			.driver = s->driver, .pool = s->pool, .max_gen = s->generation};
	}
	qsort(p, n, sizeof(*p), pool_info_cmp);
	ix->npools = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct dra_pool_info *last = ix->npools ? &p[ix->npools - 1] : NULL;

		if (last && pool_info_cmp(last, &p[i]) == 0) {
			if (p[i].max_gen > last->max_gen)
				last->max_gen = p[i].max_gen;
			continue;
		}
		p[ix->npools++] = p[i];
	}
	ix->slice_pool = sx_calloc(ix->nslices + 1, sizeof(*ix->slice_pool));
	if (!ix->slice_pool) {
		free(p);
		return SX_ENOMEM;
	}
	for (uint32_t i = 0; i < ix->nslices; i++) {
		const struct sx_dra_slice *s = &ix->slices[i]->u.slice;
		struct dra_pool_info key = {.driver = s->driver, .pool = s->pool}, *pi;

		pi = bsearch(&key, p, ix->npools, sizeof(*p), pool_info_cmp);
		ix->slice_pool[i] = (uint32_t)(pi - p);
		if (s->generation == pi->max_gen)
			pi->count_at_max++;
	}
	ix->pools = p;
	return mark_duplicates(ix);
}

static uint32_t node_hash(sx_str node)
{
	return (uint32_t)(((uint64_t)node * 0x9E3779B97F4A7C15ull) >> 32);
}

/* node_tab over the sorted by_node: one probe per Filter call instead of
 * a binary search over every node's slices. */
static int build_node_tab(struct sx_dra_index *ix)
{
	uint32_t cap = 16;

	while (cap < 2 * ix->nby_node)
		cap *= 2;
	ix->node_tab = sx_calloc(cap, sizeof(*ix->node_tab));
	if (!ix->node_tab)
		return SX_ENOMEM;
	ix->node_mask = cap - 1;
	for (uint32_t i = 0; i < ix->nby_node;) {
		uint32_t j = i + 1, h = node_hash(ix->by_node[i].node) & ix->node_mask;

		while (j < ix->nby_node && ix->by_node[j].node == ix->by_node[i].node)
			j++;
		while (ix->node_tab[h].node != SX_STR_EMPTY)
			h = (h + 1) & ix->node_mask;
		ix->node_tab[h] = (struct dra_node_span){
			.node = ix->by_node[i].node, .first = i, .n = j - i, .memo = ix->nspans++};
		i = j;
	}
	return 0;
}

static int build_nodes(struct sx_dra_index *ix)
{
	ix->by_node = sx_calloc(ix->nslices + 1, sizeof(*ix->by_node));
	ix->global = sx_calloc(ix->nslices + 1, sizeof(*ix->global));
	ix->dev_base = sx_calloc(ix->nslices + 1, sizeof(*ix->dev_base));
	if (!ix->by_node || !ix->global || !ix->dev_base)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < ix->nslices; i++) {
		const struct sx_dra_slice *s = &ix->slices[i]->u.slice;

		ix->dev_base[i] = ix->ndevices;
		ix->ndevices += s->ndevices;
		if (s->node_name != SX_STR_EMPTY)
			ix->by_node[ix->nby_node++] = (struct dra_node_ent){s->node_name, i};
		else
			ix->global[ix->nglobal++] = i;
	}
	qsort(ix->by_node, ix->nby_node, sizeof(*ix->by_node), node_ent_cmp);
	if (build_node_tab(ix) < 0)
		return SX_ENOMEM;
	ix->memo = sx_calloc((size_t)ix->ndevices * SX__DRA_MEMO + 1, sizeof(*ix->memo));
	return ix->memo ? 0 : SX_ENOMEM;
}

static int build_meta(struct sx_dra_index *ix)
{
	ix->meta = sx_calloc(ix->nslices + 1, sizeof(*ix->meta));
	if (!ix->meta)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < ix->nslices; i++) {
		const struct sx_dra_slice *s = &ix->slices[i]->u.slice;
		const struct dra_pool_info *pi = &ix->pools[ix->slice_pool[i]];

		ix->meta[i] = (struct dra_slice_meta){
			.driver = s->driver,
			.pool = s->pool,
			.pool_ix = ix->slice_pool[i],
			.dev_base = ix->dev_base[i],
			.generation = s->generation,
			.slice_count = s->slice_count,
			.pool_max_gen = pi->max_gen,
			.pool_count_at_max = pi->count_at_max,
			.pool_duplicates = pi->duplicates,
			.partitionable = s->has_per_device || s->shared_counters,
			.counters = s->shared_counters || s->consumes,
		};
	}
	return 0;
}

/* The Filter memo (dra_memo.c), when every slice names its node: a
 * node's devices then depend on its name alone. A span whose slices have
 * per-device node selection or an empty pool name is left out; one whose
 * slices are of one pool names it (the memo reads no slice then). */
static int build_fmemo(struct sx_dra_index *ix)
{
	if (ix->nglobal || !ix->nspans)
		return 0;
	for (uint32_t h = 0; h <= ix->node_mask; h++) {
		struct dra_node_span *sp = &ix->node_tab[h];
		const struct dra_slice_meta *first;

		if (sp->node == SX_STR_EMPTY)
			continue;
		first = &ix->meta[ix->by_node[sp->first].slice];
		sp->one_pool = true;
		sp->driver = first->driver;
		sp->pool = first->pool;
		for (uint32_t i = 0; i < sp->n; i++) {
			uint32_t si = ix->by_node[sp->first + i].slice;
			const struct sx_dra_slice *s = &ix->slices[si]->u.slice;

			sp->no_memo |=
				s->per_device || s->has_per_device || s->pool == SX_STR_EMPTY;
			sp->one_pool &= ix->meta[si].pool_ix == first->pool_ix;
		}
	}
	ix->fmemo = sx__dra_fmemo_new(ix->nspans);
	return ix->fmemo ? 0 : SX_ENOMEM;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static const struct dra_tmpl_ctr *tmpl_find(const struct sx_dra_index *ix,
					    const struct dra_pool_info *pi, sx_str set, sx_str name)
{
	for (uint32_t i = 0; i < pi->nsets; i++) {
		const struct dra_tmpl_set *ts = &ix->tmpl_sets[pi->set_first + i];

		if (ts->name != set)
			continue;
		for (uint32_t k = 0; k < ts->n; k++)
			if (ix->tmpl_ctrs[ts->first + k].name == name)
				return &ix->tmpl_ctrs[ts->first + k];
		return NULL;
	}
	return NULL;
}

/* Per pool, the counter sets of its newest generation (dra_pool_info,
 * sets_ok), so a node seeing the whole pool copies them instead of
 * walking the slices; the same sets and checks as dra_alloc.c's
 * pool_counters. */
static int build_counter_templates(struct sx_dra_index *ix)
{
	uint32_t nsets = 0, nctrs = 0, nuses = 0, ns = 0, nc = 0, nu = 0;
	uint32_t *sl = sx_calloc(ix->nslices + 1, sizeof(*sl));

	if (!sl)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < ix->nslices; i++) {
		const struct sx_dra_slice *s = &ix->slices[i]->u.slice;

		nsets += s->ncounter_sets;
		for (uint32_t k = 0; k < s->ncounter_sets; k++)
			nctrs += s->counter_sets[k].ncounters;
		for (uint32_t d = 0; s->consumes && d < s->ndevices; d++)
			for (uint32_t u = 0; u < s->devices[d].nconsumes; u++)
				nuses += s->devices[d].consumes[u].ncounters;
	}
	ix->tmpl_sets = sx_calloc(nsets + 1, sizeof(*ix->tmpl_sets));
	ix->tmpl_ctrs = sx_calloc(nctrs + 1, sizeof(*ix->tmpl_ctrs));
	ix->tmpl_uses = sx_calloc(nuses + 1, sizeof(*ix->tmpl_uses));
	if (!ix->tmpl_sets || !ix->tmpl_ctrs || !ix->tmpl_uses) {
		free(sl);
		return SX_ENOMEM;
	}
	for (uint32_t p = 0; p < ix->npools; p++) {
		struct dra_pool_info *pi = &ix->pools[p];
		uint32_t k = 0;
		bool ok = true;

		for (uint32_t i = 0; i < pi->n; i++)
			if (ix->slices[ix->pool_slices[pi->first + i]]->u.slice.generation ==
			    pi->max_gen)
				sl[k++] = ix->pool_slices[pi->first + i];
		qsort(sl, k, sizeof(*sl), u32_cmp);
		pi->set_first = ns;
		for (uint32_t i = 0; i < k; i++) {
			const struct sx_dra_slice *s = &ix->slices[sl[i]]->u.slice;

			for (uint32_t c = 0; c < s->ncounter_sets; c++) {
				const struct sx_dra_counter_set *cs = &s->counter_sets[c];

				for (uint32_t j = pi->set_first; j < ns; j++)
					if (ix->tmpl_sets[j].name == cs->name)
						ok = false; /* duplicate counter set name */
				ix->tmpl_sets[ns++] =
					(struct dra_tmpl_set){cs->name, nc, cs->ncounters};
				for (uint32_t j = 0; j < cs->ncounters; j++)
					ix->tmpl_ctrs[nc++] = (struct dra_tmpl_ctr){
						cs->counters[j].name, cs->counters[j].value};
			}
		}
		pi->nsets = ns - pi->set_first;
		pi->use_first = nu;
		for (uint32_t i = 0; ok && i < k; i++) {
			const struct sx_dra_slice *s = &ix->slices[sl[i]]->u.slice;

			if (!s->consumes)
				continue;
			for (uint32_t d = 0; ok && d < s->ndevices; d++) {
				const struct sx_dra_device *dev = &s->devices[d];

				for (uint32_t u = 0; ok && u < dev->nconsumes; u++) {
					/* a set consumed without counters: pool_counters
					 * checks that it exists */
					ok = dev->consumes[u].ncounters > 0;
					for (uint32_t c = 0; ok && c < dev->consumes[u].ncounters;
					     c++) {
						const struct dra_tmpl_ctr *t = tmpl_find(
							ix, pi, dev->consumes[u].name,
							dev->consumes[u].counters[c].name);

						ok = t != NULL;
						if (ok)
							ix->tmpl_uses[nu++] = (struct dra_tmpl_use){
								dev->name,
								(uint32_t)(t - ix->tmpl_ctrs) -
									(pi->nsets
										 ? ix->tmpl_sets
											   [pi->set_first]
												   .first
										 : 0),
								dev->consumes[u].counters[c].value};
					}
				}
			}
		}
		pi->nuses = nu - pi->use_first;
		pi->sets_ok = ok;
	}
	free(sl);
	return 0;
}

static void index_free(struct sx_dra_index *ix)
{
	for (uint32_t i = 0; ix->slices && i < ix->nslices; i++)
		sx_dra_unref(ix->slices[i]);
	free(ix->slices);
	free(ix->pools);
	free(ix->pool_slices);
	free(ix->by_node);
	free(ix->node_tab);
	free(ix->global);
	free(ix->dev_base);
	free(ix->slice_pool);
	free(ix->meta);
	free(ix->memo);
	free(ix->tmpl_sets);
	free(ix->tmpl_ctrs);
	free(ix->tmpl_uses);
	sx__dra_fmemo_free(ix->fmemo);
	free(ix);
}

struct sx_dra_index *sx_dra_index_new(const struct sx_snapshot *snap)
{
	struct sx_dra_index *ix = sx_calloc(1, sizeof(*ix));
	uint32_t n = snap ? snap->nresource_slices : 0;

	if (!ix)
		return NULL;
	atomic_init(&ix->refcount, 1);
	ix->slices = sx_calloc(n + 1, sizeof(*ix->slices));
	if (!ix->slices) {
		free(ix);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		ix->slices[i] = sx_dra_ref(snap->resource_slices[i]);
	ix->nslices = n;
	if (build_pools(ix) < 0 || build_nodes(ix) < 0 || build_meta(ix) < 0 ||
	    build_counter_templates(ix) < 0 || build_fmemo(ix) < 0) {
		index_free(ix);
		return NULL;
	}
	return ix;
}

struct sx_dra_index *sx_dra_index_ref(struct sx_dra_index *ix)
{
	if (ix)
		atomic_fetch_add(&ix->refcount, 1);
	return ix;
}

void sx_dra_index_unref(struct sx_dra_index *ix)
{
	if (ix && atomic_fetch_sub(&ix->refcount, 1) == 1)
		index_free(ix);
}

static bool same_slices(const struct sx_dra_index *ix, const struct sx_snapshot *snap)
{
	return ix->nslices == snap->nresource_slices &&
	       (ix->nslices == 0 ||
		memcmp(ix->slices, snap->resource_slices, ix->nslices * sizeof(*ix->slices)) == 0);
}

struct sx_dra_index *sx__dra_index_cached(struct sx_dra_index_cache *c,
					  const struct sx_snapshot *snap)
{
	struct sx_dra_index *ix = NULL, *old = NULL;

	pthread_mutex_lock(&c->mu);
	if (c->cached && same_slices(c->cached, snap))
		ix = sx_dra_index_ref(c->cached);
	pthread_mutex_unlock(&c->mu);
	if (ix)
		return ix;
	ix = sx_dra_index_new(snap);
	if (!ix)
		return NULL;
	pthread_mutex_lock(&c->mu);
	old = c->cached;
	c->cached = sx_dra_index_ref(ix);
	pthread_mutex_unlock(&c->mu);
	sx_dra_index_unref(old);
	return ix;
}

/* ---------- lookups ---------- */

const struct dra_pool_info *sx__dra_pool_find(const struct sx_dra_index *ix, sx_str driver,
					      sx_str pool)
{
	struct dra_pool_info key = {.driver = driver, .pool = pool};

	return bsearch(&key, ix->pools, ix->npools, sizeof(key), pool_info_cmp);
}

const struct dra_node_span *sx__dra_node_span(const struct sx_dra_index *ix, sx_str node)
{
	if (!ix->node_tab || node == SX_STR_EMPTY)
		return NULL;
	for (uint32_t h = node_hash(node) & ix->node_mask;; h = (h + 1) & ix->node_mask) {
		const struct dra_node_span *sp = &ix->node_tab[h];

		if (sp->node == node)
			return sp;
		if (sp->node == SX_STR_EMPTY)
			return NULL;
	}
}

uint32_t sx__dra_node_slices(const struct sx_dra_index *ix, sx_str node, uint32_t *first)
{
	uint32_t lo = 0, hi = ix->nby_node, end;

	if (ix->node_tab && node != SX_STR_EMPTY) {
		const struct dra_node_span *sp = sx__dra_node_span(ix, node);

		*first = sp ? sp->first : 0;
		return sp ? sp->n : 0;
	}

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (ix->by_node[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (end = lo; end < ix->nby_node && ix->by_node[end].node == node; end++)
		;
	return end - lo;
}

bool sx_dra_node_matches(const struct sx_node *node, sx_str node_name, bool all_nodes,
			 const struct sx_node_selector *sel)
{
	if (node_name != SX_STR_EMPTY)
		return node && node->name_id == node_name;
	if (all_nodes)
		return true;
	if (sel)
		return node && sx_node_selector_matches(sel, node);
	return false;
}

/* ---------- devices in use ---------- */

/* One key per device in use (cap SX_STR_EMPTY; flags say whether it is
 * allocated whole or shared), and with DRAConsumableCapacity one per
 * (shared device, capacity name) summing what its shares consume
 * (upstream AllocatedState: AllocatedDevices, AllocatedSharedDeviceIDs
 * and AggregatedCapacity, structured/internal/allocatedstate.go). A third
 * table lists per pool the devices with a key (sx__dra_pool_devs), so
 * the allocator looks up only the devices listed there. */
#define DEV_EXCLUSIVE 1u
#define DEV_SHARED    2u

struct dev_key {
	sx_str driver, pool, device; /* device SX_STR_EMPTY = empty slot */
	uint32_t flags;
};

/* The consumed capacity of shared devices: a table of its own, so the
 * lookups of every candidate device stay on small keys. */
struct cap_key {
	sx_str driver, pool, device, cap; /* device SX_STR_EMPTY = empty slot */
	sx_nano value;
};

/* The pools of a set's last changes (sx__dra_allocated_unchanged). */
#define JOURNAL 32

struct sx_dra_allocated {
	atomic_int refcount;
	uint32_t n, cap;  /* cap: power of two */
	uint32_t nshared; /* devices with shares */
	struct dev_key *slots;
	uint32_t cn, ccap;
	struct cap_key *cslots;
	uint32_t pn, pcap;
	struct sx__dra_pool_devs *pslots;
	/* Its number (sx_serial: a copy has its own), the changes made to it
	 * since, and the pool of change i (from 1) at journal[(i - 1) %
	 * JOURNAL]. */
	uint64_t id, mods;
	struct {
		sx_str driver, pool;
	} journal[JOURNAL];
};

/* Records a change of the pool (driver, pool). */
static void journal_add(struct sx_dra_allocated *a, sx_str driver, sx_str pool)
{
	a->journal[a->mods % JOURNAL].driver = driver;
	a->journal[a->mods % JOURNAL].pool = pool;
	a->mods++;
}

struct sx__dra_stamp sx__dra_allocated_stamp(const struct sx_dra_allocated *a)
{
	return a ? (struct sx__dra_stamp){a->id, a->mods} : (struct sx__dra_stamp){0, 0};
}

bool sx__dra_allocated_unchanged(const struct sx_dra_allocated *a, struct sx__dra_stamp s,
				 sx_str driver, sx_str pool)
{
	if (!a)
		return s.id == 0 && s.mods == 0;
	if (a->id != s.id || s.mods > a->mods || a->mods - s.mods > JOURNAL)
		return false;
	for (uint64_t i = s.mods; i < a->mods; i++)
		if (a->journal[i % JOURNAL].pool == pool &&
		    a->journal[i % JOURNAL].driver == driver)
			return false;
	return true;
}

static uint32_t dev_hash(sx_str d, sx_str p, sx_str v, sx_str c)
{
	uint64_t h = ((uint64_t)d * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)p * 0xC2B2AE3D27D4EB4Full) ^
		     ((uint64_t)v * 0x165667B19E3779F9ull) ^ ((uint64_t)c * 0x27D4EB2F165667C5ull);

	return (uint32_t)(h ^ (h >> 29));
}

struct sx_dra_allocated *sx_dra_allocated_new(void)
{
	struct sx_dra_allocated *a = sx_calloc(1, sizeof(*a));

	if (a) {
		atomic_init(&a->refcount, 1);
		a->id = sx_serial();
	}
	return a;
}

struct sx_dra_allocated *sx_dra_allocated_ref(struct sx_dra_allocated *a)
{
	if (a)
		atomic_fetch_add(&a->refcount, 1);
	return a;
}

void sx_dra_allocated_free(struct sx_dra_allocated *a)
{
	if (!a || atomic_fetch_sub(&a->refcount, 1) > 1)
		return;
	free(a->slots);
	free(a->cslots);
	free(a->pslots);
	free(a);
}

bool sx__dra_allocated_exclusive(const struct sx_dra_allocated *a)
{
	return atomic_load(&a->refcount) == 1;
}

struct sx_dra_allocated *sx_dra_allocated_clone(const struct sx_dra_allocated *a)
{
	struct sx_dra_allocated *c = sx_dra_allocated_new();

	if (!c || !a)
		return c;
	if (a->cap) {
		c->slots = sx_calloc(a->cap, sizeof(*c->slots));
		if (!c->slots)
			goto oom;
		memcpy(c->slots, a->slots, a->cap * sizeof(*c->slots));
	}
	if (a->ccap) {
		c->cslots = sx_calloc(a->ccap, sizeof(*c->cslots));
		if (!c->cslots)
			goto oom;
		memcpy(c->cslots, a->cslots, a->ccap * sizeof(*c->cslots));
	}
	if (a->pcap) {
		c->pslots = sx_calloc(a->pcap, sizeof(*c->pslots));
		if (!c->pslots)
			goto oom;
		memcpy(c->pslots, a->pslots, a->pcap * sizeof(*c->pslots));
	}
	c->pn = a->pn;
	c->pcap = a->pcap;
	c->n = a->n;
	c->cap = a->cap;
	c->nshared = a->nshared;
	c->cn = a->cn;
	c->ccap = a->ccap;
	return c;
oom:
	free(c->slots);
	free(c->cslots);
	free(c);
	return NULL;
}

static const struct dev_key *lookup(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
				    sx_str device)
{
	if (!a || a->n == 0)
		return NULL;
	for (uint32_t i = dev_hash(driver, pool, device, SX_STR_EMPTY) & (a->cap - 1);;
	     i = (i + 1) & (a->cap - 1)) {
		const struct dev_key *k = &a->slots[i];

		if (k->device == SX_STR_EMPTY)
			return NULL;
		if (k->device == device && k->pool == pool && k->driver == driver)
			return k;
	}
}

static const struct cap_key *lookup_cap(const struct sx_dra_allocated *a, sx_str driver,
					sx_str pool, sx_str device, sx_str cap)
{
	if (!a || a->cn == 0)
		return NULL;
	for (uint32_t i = dev_hash(driver, pool, device, cap) & (a->ccap - 1);;
	     i = (i + 1) & (a->ccap - 1)) {
		const struct cap_key *k = &a->cslots[i];

		if (k->device == SX_STR_EMPTY)
			return NULL;
		if (k->device == device && k->pool == pool && k->driver == driver && k->cap == cap)
			return k;
	}
}

static uint32_t pool_hash(sx_str d, sx_str p)
{
	return dev_hash(d, p, SX_STR_EMPTY, SX_STR_EMPTY);
}

static const struct sx__dra_pool_devs *pool_lookup(const struct sx_dra_allocated *a, sx_str driver,
						   sx_str pool)
{
	if (!a || a->pn == 0)
		return NULL;
	for (uint32_t i = pool_hash(driver, pool) & (a->pcap - 1);; i = (i + 1) & (a->pcap - 1)) {
		const struct sx__dra_pool_devs *k = &a->pslots[i];

		if (k->pool == SX_STR_EMPTY)
			return NULL;
		if (k->pool == pool && k->driver == driver)
			return k;
	}
}

static void put_pool(struct sx__dra_pool_devs *slots, uint32_t cap, struct sx__dra_pool_devs k)
{
	uint32_t i = pool_hash(k.driver, k.pool) & (cap - 1);

	while (slots[i].pool != SX_STR_EMPTY)
		i = (i + 1) & (cap - 1);
	slots[i] = k;
}

/* Records a new device key in its pool's entry; SX_ENOMEM. */
static int add_pool(struct sx_dra_allocated *a, sx_str driver, sx_str pool, sx_str device)
{
	struct sx__dra_pool_devs *k;

	if (pool == SX_STR_EMPTY)
		return 0;
	k = (struct sx__dra_pool_devs *)pool_lookup(a, driver, pool);
	if (!k) {
		if ((a->pn + 1) * 2 > a->pcap) {
			uint32_t ncap = a->pcap ? a->pcap * 2 : 16;
			struct sx__dra_pool_devs *s = sx_calloc(ncap, sizeof(*s));

			if (!s)
				return SX_ENOMEM;
			for (uint32_t i = 0; i < a->pcap; i++)
				if (a->pslots[i].pool != SX_STR_EMPTY)
					put_pool(s, ncap, a->pslots[i]);
			free(a->pslots);
			a->pslots = s;
			a->pcap = ncap;
		}
		put_pool(a->pslots, a->pcap,
			 (struct sx__dra_pool_devs){.driver = driver, .pool = pool});
		a->pn++;
		k = (struct sx__dra_pool_devs *)pool_lookup(a, driver, pool);
	}
	if (k->n < SX__DRA_POOL_DEVS)
		k->dev[k->n] = device;
	k->n++;
	return 0;
}

/* What a pool named "" (never in the table) answers: may have anything. */
static const struct sx__dra_pool_devs any_devs = {.n = UINT32_MAX};

const struct sx__dra_pool_devs *sx__dra_allocated_pool(const struct sx_dra_allocated *a,
						       sx_str driver, sx_str pool)
{
	if (pool == SX_STR_EMPTY)
		return a && a->n ? &any_devs : NULL;
	return pool_lookup(a, driver, pool);
}

bool sx__dra_allocated_in_use(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
			      sx_str device, bool shared_too)
{
	const struct dev_key *k = lookup(a, driver, pool, device);

	return k && (k->flags & (DEV_EXCLUSIVE | (shared_too ? DEV_SHARED : 0)));
}

bool sx_dra_allocated_has(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
			  sx_str device)
{
	const struct dev_key *k = lookup(a, driver, pool, device);

	return k && (k->flags & DEV_EXCLUSIVE);
}

bool sx_dra_allocated_any_shared(const struct sx_dra_allocated *a)
{
	return a && a->nshared;
}

bool sx_dra_allocated_shared(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
			     sx_str device)
{
	const struct dev_key *k;

	if (!a || !a->nshared)
		return false;
	k = lookup(a, driver, pool, device);
	return k && (k->flags & DEV_SHARED);
}

sx_nano sx_dra_allocated_consumed(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
				  sx_str device, sx_str cap)
{
	const struct cap_key *k = lookup_cap(a, driver, pool, device, cap);

	return k ? k->value : 0;
}

static void put(struct dev_key *slots, uint32_t cap, struct dev_key k)
{
	uint32_t i = dev_hash(k.driver, k.pool, k.device, SX_STR_EMPTY) & (cap - 1);

	while (slots[i].device != SX_STR_EMPTY)
		i = (i + 1) & (cap - 1);
	slots[i] = k;
}

static void put_cap(struct cap_key *slots, uint32_t cap, struct cap_key k)
{
	uint32_t i = dev_hash(k.driver, k.pool, k.device, k.cap) & (cap - 1);

	while (slots[i].device != SX_STR_EMPTY)
		i = (i + 1) & (cap - 1);
	slots[i] = k;
}

/* The device's key, added (no flags) when absent; NULL on OOM. */
static struct dev_key *upsert(struct sx_dra_allocated *a, sx_str driver, sx_str pool, sx_str device)
{
	const struct dev_key *k = lookup(a, driver, pool, device);

	if (k)
		return (struct dev_key *)k;
	if (add_pool(a, driver, pool, device) < 0)
		return NULL;
	if ((a->n + 1) * 2 > a->cap) {
		uint32_t ncap = a->cap ? a->cap * 2 : 64;
		struct dev_key *s = sx_calloc(ncap, sizeof(*s));

		if (!s)
			return NULL;
		for (uint32_t i = 0; i < a->cap; i++)
			if (a->slots[i].device != SX_STR_EMPTY)
				put(s, ncap, a->slots[i]);
		free(a->slots);
		a->slots = s;
		a->cap = ncap;
	}
	put(a->slots, a->cap, (struct dev_key){driver, pool, device, 0});
	a->n++;
	return (struct dev_key *)lookup(a, driver, pool, device);
}

/* Adds v to the consumed capacity cap of the device; SX_ENOMEM. */
static int add_cap(struct sx_dra_allocated *a, sx_str driver, sx_str pool, sx_str device,
		   sx_str cap, sx_nano v)
{
	const struct cap_key *k = lookup_cap(a, driver, pool, device, cap);

	if (!k) {
		if ((a->cn + 1) * 2 > a->ccap) {
			uint32_t ncap = a->ccap ? a->ccap * 2 : 16;
			struct cap_key *s = sx_calloc(ncap, sizeof(*s));

			if (!s)
				return SX_ENOMEM;
			for (uint32_t i = 0; i < a->ccap; i++)
				if (a->cslots[i].device != SX_STR_EMPTY)
					put_cap(s, ncap, a->cslots[i]);
			free(a->cslots);
			a->cslots = s;
			a->ccap = ncap;
		}
		put_cap(a->cslots, a->ccap, (struct cap_key){driver, pool, device, cap, 0});
		a->cn++;
		k = lookup_cap(a, driver, pool, device, cap);
	}
	((struct cap_key *)k)->value += v;
	return 0;
}

int sx_dra_allocated_add(struct sx_dra_allocated *a, sx_str driver, sx_str pool, sx_str device)
{
	struct dev_key *k;

	if (device == SX_STR_EMPTY)
		return 0;
	journal_add(a, driver, pool);
	k = upsert(a, driver, pool, device);
	if (!k)
		return SX_ENOMEM;
	k->flags |= DEV_EXCLUSIVE;
	return 0;
}

int sx_dra_allocated_add_shared(struct sx_dra_allocated *a, sx_str driver, sx_str pool,
				sx_str device, const sx_str *names, const sx_nano *values,
				uint32_t n)
{
	struct dev_key *k;

	if (device == SX_STR_EMPTY)
		return 0;
	journal_add(a, driver, pool);
	k = upsert(a, driver, pool, device);
	if (!k)
		return SX_ENOMEM;
	if (!(k->flags & DEV_SHARED))
		a->nshared++;
	k->flags |= DEV_SHARED;
	for (uint32_t i = 0; i < n; i++)
		if (names[i] != SX_STR_EMPTY &&
		    add_cap(a, driver, pool, device, names[i], values[i]) < 0)
			return SX_ENOMEM;
	return 0;
}

int sx_dra_allocated_add_allocation(struct sx_dra_allocated *a,
				    const struct sx_dra_allocation *alloc)
{
	for (uint32_t i = 0; alloc && i < alloc->nresults; i++) {
		const struct sx_dra_result *r = &alloc->results[i];
		sx_str names[128];
		sx_nano values[128];
		uint32_t n = 0;

		if (r->admin_access)
			continue; /* admin access does not make a device unavailable */
		if (!r->share_id) {
			if (sx_dra_allocated_add(a, r->driver, r->pool, r->device) < 0)
				return SX_ENOMEM;
			continue;
		}
		for (uint32_t k = 0; k < r->nconsumed && n < 128; k++, n++) {
			names[n] = sx_intern(r->consumed[k].name);
			values[n] = r->consumed[k].q.v;
		}
		if (sx_dra_allocated_add_shared(a, r->driver, r->pool, r->device, names, values,
						n) < 0)
			return SX_ENOMEM;
	}
	return 0;
}
