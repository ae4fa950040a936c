/* Snapshots: immutable, reference-counted views of the cache for scheduling
 * cycles (upstream backend/cache/snapshot.go). A snapshot owns one reference on each NodeInfo
 * in `nodes` and on the shared blocks in `internal` (the sorted arrays of
 * other kinds and the image counts), which consecutive snapshots share when
 * those parts did not change.
 *
 * The one home of snapshot building: sx_cache_snapshot (at the end) patches
 * the last snapshot when the node tree did not change and builds one from
 * the cache's state otherwise; cache.c only records what changed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"

/* ---------- shared blocks ---------- */

static int cmp_objects(const void *a, const void *b)
{
	return sx__object_cmp(a, b);
}

/* Adopts items[0..n) (the array and the references); sorts them. */
struct sx__kind_block *sx__kind_block_new(struct sx_object *items, uint32_t n)
{
	struct sx__kind_block *b = sx_calloc(1, sizeof(*b));

	if (b)
		b->ptrs = sx_calloc(n, sizeof(*b->ptrs));
	if (!b || !b->ptrs) {
		for (uint32_t i = 0; i < n; i++)
			sx_object_unref(&items[i]);
		free(items);
		free(b);
		return NULL;
	}
	atomic_init(&b->refcount, 1);
	if (n > 1)
		qsort(items, n, sizeof(*items), cmp_objects);
	b->n = n;
	b->items = items;
	for (uint32_t i = 0; i < n; i++)
		b->ptrs[i] = items[i].obj;
	if (sx__kind_block_index(b) < 0) {
		sx__kind_block_unref(b);
		return NULL;
	}
	return b;
}

void sx__kind_block_unref(struct sx__kind_block *b)
{
	if (!b || atomic_fetch_sub(&b->refcount, 1) != 1)
		return;
	for (uint32_t i = 0; i < b->n; i++)
		sx_object_unref(&b->items[i]);
	free(b->items);
	free(b->ptrs);
	free(b->by_key);
	free(b->keys);
	free(b);
}

struct sx__image_block *sx__image_block_new(const struct sx_image_count *counts, uint32_t n)
{
	struct sx__image_block *b = sx_calloc(1, sizeof(*b));
	uint32_t cap = 16;

	if (!b)
		return NULL;
	while (cap < (uint64_t)n * 2 && cap < (1u << 30))
		cap *= 2;
	b->slots = sx_calloc(cap, sizeof(*b->slots));
	if (!b->slots) {
		free(b);
		return NULL;
	}
	atomic_init(&b->refcount, 1);
	b->cap = cap;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = sx__hash_id(counts[i].name) & (cap - 1);

		while (b->slots[j].name != SX_STR_EMPTY && b->slots[j].name != counts[i].name)
			j = (j + 1) & (cap - 1);
		b->slots[j] = counts[i];
	}
	return b;
}

void sx__image_block_unref(struct sx__image_block *b)
{
	if (!b || atomic_fetch_sub(&b->refcount, 1) != 1)
		return;
	free(b->slots);
	free(b);
}

/* ---------- building ---------- */

static void index_block_unref(struct sx__index_block *b)
{
	if (b && atomic_fetch_sub(&b->refcount, 1) == 1)
		free(b);
}

/* Shares same_order's index, or builds one over s's node names. */
static int build_index(struct sx_snapshot *s, const struct sx_snapshot *same_order)
{
	struct sx__snap_internal *in = s->internal;
	struct sx__index_block *b =
		same_order ? ((struct sx__snap_internal *)same_order->internal)->index : NULL;
	uint32_t cap = 16;

	if (b) {
		atomic_fetch_add(&b->refcount, 1);
	} else {
		while (cap < (uint64_t)s->nnodes * 2 && cap < (1u << 30))
			cap *= 2;
		b = malloc(sizeof(*b) + (size_t)cap * sizeof(b->slots[0]));
		if (!b)
			return SX_ENOMEM;
		atomic_init(&b->refcount, 1);
		b->cap = cap;
		memset(b->slots, 0xff, (size_t)cap * sizeof(b->slots[0]));
		for (uint32_t i = 0; i < s->nnodes; i++) {
			uint32_t j = sx__hash_id(s->nodes[i]->name) & (cap - 1);

			while (b->slots[j] != UINT32_MAX)
				j = (j + 1) & (cap - 1);
			b->slots[j] = i;
		}
	}
	in->index = b;
	s->index = b->slots;
	s->index_cap = b->cap;
	return 0;
}

/* The lists sized to what they hold (at least one entry): a snapshot
 * pinned by a binding in flight keeps them, and nnodes entries each
 * (40 KB at 5000 nodes) made the standalone peak follow how many bindings
 * were in flight. */
static int alloc_lists(struct sx_snapshot *s, uint32_t naff, uint32_t nanti)
{
	s->with_affinity = sx_calloc(naff ? naff : 1, sizeof(uint32_t));
	s->with_required_anti = sx_calloc(nanti ? nanti : 1, sizeof(uint32_t));
	return s->with_affinity && s->with_required_anti ? 0 : SX_ENOMEM;
}

static int build_lists(struct sx_snapshot *s)
{
	uint32_t naff = 0, nanti = 0;

	for (uint32_t i = 0; i < s->nnodes; i++) {
		naff += s->nodes[i]->naffinity > 0;
		nanti += s->nodes[i]->nanti > 0;
	}
	if (alloc_lists(s, naff, nanti) < 0)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		if (s->nodes[i]->naffinity > 0)
			s->with_affinity[s->nwith_affinity++] = i;
		if (s->nodes[i]->nanti > 0)
			s->with_required_anti[s->nwith_required_anti++] = i;
	}
	return 0;
}

/* Points the snapshot's public arrays at the shared blocks. */
static void attach_blocks(struct sx_snapshot *s, struct sx__snap_internal *in)
{
	struct sx__kind_block *const *g = in->groups;

#define ATTACH_CACHE_OWN
#define ATTACH_CACHE_JOIN(G)
#define ATTACH_CACHE_GROUP(G, FIELD, T)                                                            \
	s->n##FIELD = g[SX__G_##G] ? g[SX__G_##G]->n : 0;                                          \
	s->FIELD = g[SX__G_##G] ? (void *)g[SX__G_##G]->ptrs : NULL;
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, ...)          \
	ATTACH_##CACHE
#include "schedext/kinds.def"
#undef ATTACH_CACHE_OWN
#undef ATTACH_CACHE_JOIN
#undef ATTACH_CACHE_GROUP
	if (in->images) {
		s->image_cap = in->images->cap;
		s->image_counts = in->images->slots;
	}
}

static int build_ns_totals(struct sx_snapshot *s);

/* Drops b's reference and those of the ancestors it was the last holder
 * of (a loop: chains may be long). */
static void node_block_unref(struct sx__node_block *b)
{
	while (b && atomic_fetch_sub(&b->refcount, 1) == 1) {
		struct sx__node_block *parent = b->parent;

		for (uint32_t i = 0; i < b->n; i++)
			sx_node_info_unref(b->own[i]);
		free(b->own);
		free(b);
		b = parent;
	}
}

/* A block adopting own[0..n) and its references; on OOM they are dropped. */
static struct sx__node_block *node_block_new(struct sx_node_info **own, uint32_t n,
					     struct sx__node_block *parent)
{
	struct sx__node_block *b = sx_calloc(1, sizeof(*b));

	if (!b) {
		for (uint32_t i = 0; i < n; i++)
			sx_node_info_unref(own[i]);
		free(own);
		return NULL;
	}
	atomic_init(&b->refcount, 1);
	b->own = own;
	b->n = n;
	if (parent) {
		atomic_fetch_add(&parent->refcount, 1);
		b->parent = parent;
		b->depth = parent->depth + 1;
		b->chain_owned = parent->chain_owned + n;
	}
	return b;
}

static void snapshot_free(struct sx_snapshot *s)
{
	struct sx__snap_internal *in = s->internal;

	if (in && in->nodes_array_owned)
		free(s->nodes);
	free(s->with_affinity);
	free(s->with_required_anti);
	free(s->ns_totals);
	if (in) {
		node_block_unref(in->nodes);
		index_block_unref(in->index);
		for (int g = 0; g < SX__G_COUNT; g++)
			sx__kind_block_unref(in->groups[g]);
		sx__pvc_block_unref(in->used_pvcs);
		sx__image_block_unref(in->images);
		free(in);
	}
	free(s);
}

/* The snapshot shell: blocks attached, no nodes yet. NULL on OOM. */
static struct sx_snapshot *snapshot_shell(uint64_t generation, struct sx__kind_block *const *groups,
					  struct sx__image_block *images)
{
	struct sx_snapshot *s = sx_calloc(1, sizeof(*s));
	struct sx__snap_internal *in = sx_calloc(1, sizeof(*in));

	if (!s || !in) {
		free(s);
		free(in);
		return NULL;
	}
	atomic_init(&s->refcount, 1);
	s->generation = generation;
	s->internal = in;
	for (int g = 0; g < SX__G_COUNT; g++) {
		in->groups[g] = groups[g];
		if (groups[g])
			atomic_fetch_add(&groups[g]->refcount, 1);
	}
	in->images = images;
	if (images)
		atomic_fetch_add(&images->refcount, 1);
	attach_blocks(s, in);
	return s;
}

struct sx_snapshot *sx__snapshot_build(uint64_t generation, struct sx_node_info **nodes, uint32_t n,
				       struct sx__kind_block *const *groups,
				       struct sx__image_block *images,
				       const struct sx_snapshot *same_order)
{
	struct sx_snapshot *s = snapshot_shell(generation, groups, images);
	struct sx__node_block *b = node_block_new(nodes, n, NULL);

	if (!s || !b) {
		if (s)
			snapshot_free(s);
		node_block_unref(b);
		return NULL;
	}
	((struct sx__snap_internal *)s->internal)->nodes = b;
	s->nodes = nodes; /* the block's array: not freed by the snapshot */
	s->nnodes = n;
	if (build_lists(s) < 0 || build_index(s, same_order) < 0 || build_ns_totals(s) < 0) {
		snapshot_free(s);
		return NULL;
	}
	return s;
}

/* ---------- per-namespace totals ---------- */

static int cmp_ns_count(const void *a, const void *b)
{
	sx_str x = ((const struct sx_ns_count *)a)->ns, y = ((const struct sx_ns_count *)b)->ns;

	return x < y ? -1 : x > y;
}

/* Totals over every node: all entries collected, sorted, merged. */
static int build_ns_totals(struct sx_snapshot *s)
{
	size_t total = 0, k = 0, m = 0;
	struct sx_ns_count *all;

	for (uint32_t i = 0; i < s->nnodes; i++) {
		total += s->nodes[i]->nns;
		s->affinity_any_ns += s->nodes[i]->naffinity_any_ns;
		s->anti_any_ns += s->nodes[i]->nanti_any_ns;
	}
	all = sx_calloc(total, sizeof(*all));
	if (!all)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < s->nnodes; i++)
		for (uint32_t j = 0; j < s->nodes[i]->nns; j++)
			all[k++] = s->nodes[i]->ns_counts[j];
	qsort(all, k, sizeof(*all), cmp_ns_count);
	for (size_t t = 0; t < k; t++) {
		if (m > 0 && all[m - 1].ns == all[t].ns) {
			all[m - 1].pods += all[t].pods;
			all[m - 1].affinity += all[t].affinity;
			all[m - 1].anti += all[t].anti;
		} else {
			all[m++] = all[t];
		}
	}
	s->ns_totals = all;
	s->nns_totals = (uint32_t)m;
	s->has_ns_totals = true;
	return 0;
}

static struct sx_ns_count *find_ns_total(const struct sx_snapshot *s, sx_str ns)
{
	uint32_t lo = 0, hi = s->nns_totals;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (s->ns_totals[mid].ns < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nns_totals && s->ns_totals[lo].ns == ns ? &s->ns_totals[lo] : NULL;
}

/* Adds sign x ni's counts into s's totals (room reserved for new ns). */
static void add_ns_totals(struct sx_snapshot *s, const struct sx_node_info *ni, int sign)
{
	s->affinity_any_ns += (uint64_t)(int64_t)sign * ni->naffinity_any_ns;
	s->anti_any_ns += (uint64_t)(int64_t)sign * ni->nanti_any_ns;
	for (uint32_t j = 0; j < ni->nns; j++) {
		const struct sx_ns_count *c = &ni->ns_counts[j];
		struct sx_ns_count *t = find_ns_total(s, c->ns);

		if (!t) { /* only when adding: removals find what was added */
			uint32_t at = 0;

			while (at < s->nns_totals && s->ns_totals[at].ns < c->ns)
				at++;
			memmove(&s->ns_totals[at + 1], &s->ns_totals[at],
				(s->nns_totals - at) * sizeof(*t));
			s->nns_totals++;
			t = &s->ns_totals[at];
			*t = (struct sx_ns_count){.ns = c->ns};
		}
		t->pods += (uint32_t)sign * c->pods;
		t->affinity += (uint32_t)sign * c->affinity;
		t->anti += (uint32_t)sign * c->anti;
	}
}

/* last's totals with each swapped NodeInfo's counts replaced. */
static int patch_ns_totals(struct sx_snapshot *s, const struct sx_snapshot *last,
			   struct sx_node_info *const *changed, uint32_t nchanged)
{
	size_t room = last->nns_totals;

	if (!last->has_ns_totals)
		return build_ns_totals(s);
	for (uint32_t i = 0; i < nchanged; i++)
		room += changed[i]->nns;
	s->ns_totals = sx_calloc(room, sizeof(*s->ns_totals));
	if (!s->ns_totals)
		return SX_ENOMEM;
	memcpy(s->ns_totals, last->ns_totals, last->nns_totals * sizeof(*s->ns_totals));
	s->nns_totals = last->nns_totals;
	s->affinity_any_ns = last->affinity_any_ns;
	s->anti_any_ns = last->anti_any_ns;
	for (uint32_t i = 0; i < nchanged; i++) {
		int at = sx_snapshot_find(last, changed[i]->name);

		if (at < 0) { /* cannot happen: same node list */
			free(s->ns_totals);
			s->ns_totals = NULL;
			s->nns_totals = 0;
			s->affinity_any_ns = s->anti_any_ns = 0;
			return build_ns_totals(s);
		}
		add_ns_totals(s, last->nodes[at], -1);
		add_ns_totals(s, changed[i], 1);
	}
	s->has_ns_totals = true;
	return 0;
}

bool sx_snapshot_may_select_affinity(const struct sx_snapshot *snap, sx_str ns)
{
	const struct sx_ns_count *t;

	if (!snap->has_ns_totals || snap->affinity_any_ns > 0)
		return true;
	t = find_ns_total(snap, ns);
	return t && t->affinity > 0;
}

bool sx_snapshot_may_select_anti(const struct sx_snapshot *snap, sx_str ns)
{
	const struct sx_ns_count *t;

	if (!snap->has_ns_totals || snap->anti_any_ns > 0)
		return true;
	t = find_ns_total(snap, ns);
	return t && t->anti > 0;
}

/* Chains longer than this, or holding more superseded NodeInfos than
 * nnodes / FLATTEN_FRACTION + FLATTEN_SLACK, are replaced by a full block:
 * the amortised cost stays near nnodes / MAX_DEPTH references per snapshot,
 * and memory held by superseded NodeInfos stays bounded. */
#define MAX_DEPTH	 64
#define FLATTEN_FRACTION 8
#define FLATTEN_SLACK	 64

static bool should_flatten(const struct sx__node_block *parent, uint32_t nnodes, uint32_t nchanged)
{
	return !parent || parent->depth + 1 > MAX_DEPTH ||
	       parent->chain_owned + nchanged > nnodes / FLATTEN_FRACTION + FLATTEN_SLACK;
}

/* Copies last's derived lists when no swapped NodeInfo changed membership;
 * rebuilds them otherwise. */
static int patch_lists(struct sx_snapshot *s, const struct sx_snapshot *last,
		       struct sx_node_info *const *changed, uint32_t nchanged)
{
	for (uint32_t i = 0; i < nchanged; i++) {
		int at = sx_snapshot_find(last, changed[i]->name);

		if (at < 0 || (last->nodes[at]->naffinity > 0) != (changed[i]->naffinity > 0) ||
		    (last->nodes[at]->nanti > 0) != (changed[i]->nanti > 0))
			return build_lists(s);
	}
	if (alloc_lists(s, last->nwith_affinity, last->nwith_required_anti) < 0)
		return SX_ENOMEM;
	s->nwith_affinity = last->nwith_affinity;
	s->nwith_required_anti = last->nwith_required_anti;
	memcpy(s->with_affinity, last->with_affinity, last->nwith_affinity * sizeof(uint32_t));
	memcpy(s->with_required_anti, last->with_required_anti,
	       last->nwith_required_anti * sizeof(uint32_t));
	return 0;
}

struct sx_snapshot *sx__snapshot_patch(const struct sx_snapshot *last, uint64_t generation,
				       struct sx_node_info **nodes, struct sx_node_info **changed,
				       uint32_t nchanged, struct sx__kind_block *const *groups,
				       struct sx__image_block *images)
{
	struct sx__node_block *parent = ((const struct sx__snap_internal *)last->internal)->nodes;
	uint32_t n = last->nnodes;
	struct sx_snapshot *s;
	struct sx__node_block *b;

	if (should_flatten(parent, n, nchanged)) {
		free(changed);
		for (uint32_t i = 0; i < n; i++)
			sx_node_info_ref(nodes[i]);
		return sx__snapshot_build(generation, nodes, n, groups, images, last);
	}
	for (uint32_t i = 0; i < nchanged; i++)
		sx_node_info_ref(changed[i]);
	b = node_block_new(changed, nchanged, parent);
	s = snapshot_shell(generation, groups, images);
	if (!s || !b) {
		if (s)
			snapshot_free(s);
		node_block_unref(b);
		free(nodes);
		return NULL;
	}
	((struct sx__snap_internal *)s->internal)->nodes = b;
	((struct sx__snap_internal *)s->internal)->nodes_array_owned = true;
	s->nodes = nodes;
	s->nnodes = n;
	if (patch_lists(s, last, changed, nchanged) < 0 || build_index(s, last) < 0 ||
	    patch_ns_totals(s, last, changed, nchanged) < 0) {
		snapshot_free(s);
		return NULL;
	}
	return s;
}

struct sx_snapshot *sx_snapshot_ref(const struct sx_snapshot *snap)
{
	struct sx_snapshot *s = (struct sx_snapshot *)snap;

	if (s)
		atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
	return s;
}

void sx_snapshot_unref(const struct sx_snapshot *snap)
{
	struct sx_snapshot *s = (struct sx_snapshot *)snap;
	int old;

	if (!s)
		return;
	old = atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel);
	if (old <= 0)
		abort();
	if (old == 1)
		snapshot_free(s);
}

void sx__snapshot_set_used_pvcs(struct sx_snapshot *s, struct sx__pvc_block *b)
{
	struct sx__snap_internal *in = s->internal;

	if (b)
		atomic_fetch_add(&b->refcount, 1);
	sx__pvc_block_unref(in->used_pvcs);
	in->used_pvcs = b;
}

/* ---------- snapshots with caller-supplied nodes ---------- */

static int cmp_ids(const void *a, const void *b)
{
	sx_str x = *(const sx_str *)a, y = *(const sx_str *)b;

	return x < y ? -1 : x > y;
}

/* Sorts ids[0..n) and drops repeats; returns the new length. */
size_t sx__unique_ids(sx_str *ids, size_t n)
{
	size_t w = 0;

	qsort(ids, n, sizeof(*ids), cmp_ids);
	for (size_t t = 0; t < n; t++)
		if (w == 0 || ids[t] != ids[w - 1])
			ids[w++] = ids[t];
	return w;
}

/* Image counts over the given NodeInfos' nodes (a name counted once per
 * node). NULL on OOM. */
static struct sx__image_block *count_images(struct sx_node_info *const *nodes, uint32_t n)
{
	size_t total = 0, k = 0, m = 0;
	sx_str *names;
	struct sx_image_count *counts;
	struct sx__image_block *b;

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; nodes[i]->node && j < nodes[i]->node->nimages; j++)
			total += nodes[i]->node->images[j].nnames;
	names = sx_calloc(total, sizeof(*names));
	counts = sx_calloc(total, sizeof(*counts));
	if (!names || !counts)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		size_t start = k;

		for (uint32_t j = 0; nodes[i]->node && j < nodes[i]->node->nimages; j++)
			for (uint32_t t = 0; t < nodes[i]->node->images[j].nnames; t++)
				names[k++] = nodes[i]->node->images[j].names[t];
		k = start + sx__unique_ids(names + start, k - start);
	}
	qsort(names, k, sizeof(*names), cmp_ids);
	for (size_t t = 0; t < k; t++) {
		if (m > 0 && counts[m - 1].name == names[t])
			counts[m - 1].nodes++;
		else if (names[t] != SX_STR_EMPTY)
			counts[m++] = (struct sx_image_count){names[t], 1};
	}
out:
	b = (names && counts) ? sx__image_block_new(counts, (uint32_t)m) : NULL;
	free(names);
	free(counts);
	return b;
}

struct sx_snapshot *sx_snapshot_with_nodes(const struct sx_snapshot *snap,
					   const struct sx_node *const *nodes, uint32_t n)
{
	const struct sx__snap_internal *in = snap->internal;
	uint32_t total = snap->nnodes, extra = 0;
	struct sx_node_info **list = sx_calloc((size_t)total + n, sizeof(*list));
	struct sx__image_block *images = NULL;
	struct sx_snapshot *s;

	if (!list)
		return NULL;
	for (uint32_t i = 0; i < total; i++)
		list[i] = sx_node_info_ref(snap->nodes[i]);
	for (uint32_t i = 0; i < n; i++) {
		int at = sx_snapshot_find(snap, nodes[i]->name_id);
		struct sx_node_info *ni = at >= 0 ? sx_node_info_clone(snap->nodes[at])
						  : sx_node_info_new(nodes[i]->name_id, NULL);

		if (!ni)
			goto fail;
		sx_node_info_set_node(ni, nodes[i]);
		if (at >= 0) {
			sx_node_info_unref(list[at]);
			list[at] = ni;
		} else {
			list[total + extra++] = ni;
		}
	}
	images = count_images(list, total + extra);
	if (!images)
		goto fail;
	s = sx__snapshot_build(snap->generation, list, total + extra, in->groups, images,
			       extra == 0 ? snap : NULL);
	sx__image_block_unref(images);
	if (s)
		sx__snapshot_set_used_pvcs(s, in->used_pvcs);
	return s;
fail:
	for (uint32_t i = 0; i < total + extra; i++)
		sx_node_info_unref(list[i]);
	free(list);
	return NULL;
}

struct sx_snapshot *sx_snapshot_with_pod(const struct sx_snapshot *snap, const struct sx_pod *pod,
					 sx_str node)
{
	const struct sx__snap_internal *in = snap->internal;
	int at = sx_snapshot_find(snap, node);
	struct sx_node_info **list;
	struct sx_node_info *ni;
	struct sx_snapshot *s;

	if (at < 0)
		return NULL;
	list = sx_calloc(snap->nnodes ? snap->nnodes : 1, sizeof(*list));
	ni = list ? sx_node_info_clone(snap->nodes[at]) : NULL;
	if (!ni || sx_node_info_add_pod(ni, pod) < 0) {
		sx_node_info_unref(ni);
		free(list);
		return NULL;
	}
	for (uint32_t i = 0; i < snap->nnodes; i++)
		list[i] = (int)i == at ? ni : sx_node_info_ref(snap->nodes[i]);
	s = sx__snapshot_build(snap->generation, list, snap->nnodes, in->groups, in->images, snap);
	if (s)
		sx__snapshot_set_used_pvcs(s, in->used_pvcs);
	return s;
}

struct sx_snapshot *sx_snapshot_in_placement(const struct sx_snapshot *snap, const sx_str *names,
					     uint32_t n)
{
	const struct sx__snap_internal *in = snap->internal;
	struct sx_node_info **list = sx_calloc(n ? n : 1, sizeof(*list));
	uint32_t k = 0;
	struct sx_snapshot *s;

	if (!list)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		int at = sx_snapshot_find(snap, names[i]);

		if (at >= 0)
			list[k++] = sx_node_info_ref(snap->nodes[at]);
	}
	s = sx__snapshot_build(snap->generation, list, k, in->groups, in->images, NULL);
	if (s)
		sx__snapshot_set_used_pvcs(s, in->used_pvcs);
	return s;
}

struct sx_snapshot *sx_snapshot_without_pods(const struct sx_snapshot *snap,
					     const struct sx_pod *const *pods, const sx_str *nodes,
					     uint32_t n)
{
	const struct sx__snap_internal *in = snap->internal;
	struct sx_node_info **list = sx_calloc(snap->nnodes ? snap->nnodes : 1, sizeof(*list));
	bool *cloned = sx_calloc(snap->nnodes ? snap->nnodes : 1, sizeof(*cloned));
	struct sx_snapshot *s = NULL;

	if (!list || !cloned)
		goto out;
	for (uint32_t i = 0; i < snap->nnodes; i++)
		list[i] = sx_node_info_ref(snap->nodes[i]);
	for (uint32_t i = 0; i < n; i++) {
		int at = sx_snapshot_find(snap, nodes[i]);

		if (at < 0)
			continue;
		if (!cloned[at]) {
			struct sx_node_info *ni = sx_node_info_clone(snap->nodes[at]);

			if (!ni)
				goto out;
			sx_node_info_unref(list[at]);
			list[at] = ni;
			cloned[at] = true;
		}
		if (sx_node_info_remove_pod(list[at], pods[i]) == SX_ENOMEM)
			goto out;
	}
	s = sx__snapshot_build(snap->generation, list, snap->nnodes, in->groups, in->images, snap);
	if (s)
		sx__snapshot_set_used_pvcs(s, in->used_pvcs);
	list = NULL; /* the build took the references, or released them */
out:
	for (uint32_t i = 0; list && i < snap->nnodes; i++)
		sx_node_info_unref(list[i]);
	free(list);
	free(cloned);
	return s;
}

/* ---------- from the cache: build or patch (sx_cache_snapshot) ---------- */

/* The node names in node-tree order (zones round-robin). */
static uint32_t tree_list(const struct sx_cache *c, sx_str *out)
{
	uint32_t k = 0, exhausted = 0;

	for (uint32_t idx = 0; exhausted < c->nzones; idx++) {
		exhausted = 0;
		for (uint32_t z = 0; z < c->nzones; z++) {
			if (idx >= c->zones[z].n)
				exhausted++;
			else
				out[k++] = c->zones[z].names[idx];
		}
	}
	return k;
}

/* The cache's image counts as a shared block. */
static struct sx__image_block *cache_image_block(struct sx_cache *c)
{
	struct sx_image_count *counts = sx_calloc(c->image_n, sizeof(*counts));
	struct sx__image_block *b;
	uint32_t m = 0;

	if (!counts)
		return NULL;
	for (uint32_t i = 0; i < c->image_cap; i++)
		if (c->images[i].name != SX_STR_EMPTY && c->images[i].nodes > 0)
			counts[m++] =
				(struct sx_image_count){c->images[i].name, c->images[i].nodes};
	b = sx__image_block_new(counts, m);
	free(counts);
	return b;
}

/* Rebuilds the sorted array of a kind group from the maps. */
static int rebuild_group(struct sx_cache *c, int g)
{
	uint32_t total = 0, k = 0;
	struct sx_object *items;
	struct sx__kind_block *b;

	for (int kind = 0; kind < SX_KIND_COUNT; kind++)
		if (sx__kind_group(kind) == g)
			total += c->kinds[kind].n;
	items = sx_calloc(total, sizeof(*items));
	if (!items)
		return SX_ENOMEM;
	for (int kind = 0; kind < SX_KIND_COUNT; kind++) {
		if (sx__kind_group(kind) != g)
			continue;
		for (uint32_t i = 0; i < c->kinds[kind].cap; i++) {
			if (!c->kinds[kind].slots[i].key)
				continue;
			items[k] = (struct sx_object){(enum sx_kind)kind,
						      c->kinds[kind].slots[i].value};
			sx__object_ref(&items[k++]);
		}
	}
	b = sx__kind_block_new(items, k);
	if (!b)
		return SX_ENOMEM;
	sx__kind_block_unref(c->groups[g]);
	c->groups[g] = b;
	c->group_dirty[g] = false;
	return 0;
}

static int refresh_shared(struct sx_cache *c)
{
	for (int g = 0; g < SX__G_COUNT; g++)
		if (c->group_dirty[g] && rebuild_group(c, g) < 0)
			return SX_ENOMEM;
	if (c->used_pvcs_dirty || !c->used_pvcs_block) {
		struct sx__pvc_block *p = sx__pvc_block_new(&c->used_pvcs);

		if (!p)
			return SX_ENOMEM;
		sx__pvc_block_unref(c->used_pvcs_block);
		c->used_pvcs_block = p;
		c->used_pvcs_dirty = false;
	}
	if (c->images_dirty) {
		struct sx__image_block *b = cache_image_block(c);

		if (!b)
			return SX_ENOMEM;
		sx__image_block_unref(c->image_block);
		c->image_block = b;
		c->images_dirty = false;
	}
	return 0;
}

/* A snapshot patched from last with the replaced NodeInfos swapped in
 * (the node tree did not change, so names and order are the same). NULL
 * with *fallback set when that does not apply (then the list is built from
 * scratch); NULL with *fallback clear on OOM. */
static struct sx_snapshot *patch_snapshot(struct sx_cache *c, bool *fallback)
{
	const struct sx_snapshot *last = c->last;
	struct sx_node_info **list, **changed;
	uint32_t nchanged = 0;

	*fallback = true;
	if (!last || c->tree_dirty || c->replaced_overflow || last->nnodes != c->tree_size)
		return NULL;
	list = malloc(((size_t)last->nnodes + 1) * sizeof(*list));
	changed = malloc(((size_t)c->nreplaced + 1) * sizeof(*changed));
	if (!list || !changed) {
		free(list);
		free(changed);
		return NULL;
	}
	memcpy(list, last->nodes, (size_t)last->nnodes * sizeof(*list));
	for (uint32_t i = 0; i < c->nreplaced; i++) {
		int at = sx_snapshot_find(last, c->replaced[i]);
		struct sx_node_info *ni = at >= 0 ? sx__cache_node_info(c, c->replaced[i]) : NULL;

		if (at < 0)
			continue; /* node-less NodeInfo: not in snapshots */
		if (!ni || !ni->node) {
			free(list);
			free(changed);
			return NULL;
		}
		if (list[at] == ni)
			continue; /* replaced twice, already swapped in */
		list[at] = ni;
		changed[nchanged++] = ni;
	}
	*fallback = false;
	return sx__snapshot_patch(last, c->generation, list, changed, nchanged, c->groups,
				  c->image_block);
}

static void clear_replaced(struct sx_cache *c)
{
	c->tree_dirty = false;
	c->replaced_overflow = false;
	c->nreplaced = 0;
}

/* The node list in node-tree order, each with a reference. */
static struct sx_node_info **full_list(struct sx_cache *c, uint32_t *n)
{
	sx_str *names = sx_calloc(c->tree_size, sizeof(*names));
	struct sx_node_info **list = sx_calloc(c->tree_size, sizeof(*list));
	uint32_t k;

	*n = 0;
	if (!names || !list) {
		free(names);
		free(list);
		return NULL;
	}
	k = tree_list(c, names);
	for (uint32_t i = 0; i < k; i++) {
		struct sx_node_info *ni = sx__cache_node_info(c, names[i]);

		if (ni && ni->node)
			list[(*n)++] = sx_node_info_ref(ni);
	}
	free(names);
	return list;
}

/* Patches the last snapshot when the node tree did not change (only the
 * replaced NodeInfos differ, and the name index is shared); builds it from
 * scratch otherwise. */
static struct sx_snapshot *build_snapshot(struct sx_cache *c)
{
	struct sx_node_info **list;
	struct sx_snapshot *s;
	uint32_t n = 0;
	bool fallback;

	if (c->derived_broken && sx__cache_rebuild_derived(c) < 0)
		return NULL;
	if (refresh_shared(c) < 0)
		return NULL;
	s = patch_snapshot(c, &fallback);
	if (!s && fallback) {
		list = full_list(c, &n);
		if (!list)
			return NULL;
		s = sx__snapshot_build(c->generation, list, n, c->groups, c->image_block, NULL);
	}
	if (s) {
		sx__snapshot_set_used_pvcs(s, c->used_pvcs_block);
		clear_replaced(c);
	}
	return s;
}

struct sx_snapshot *sx_cache_snapshot(struct sx_cache *c)
{
	struct sx_snapshot *s;

	pthread_mutex_lock(&c->mu);
	if (!c->last || c->last->generation != c->generation) {
		s = build_snapshot(c);
		if (s) {
			sx_snapshot_unref(c->last);
			c->last = s;
		}
	}
	s = sx_snapshot_ref(c->last);
	if (c->last && c->last->generation != c->generation) {
		/* building failed: never hand out a stale view */
		sx_snapshot_unref(s);
		s = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	return s;
}

uint64_t sx_cache_generation(struct sx_cache *c)
{
	uint64_t g;

	pthread_mutex_lock(&c->mu);
	g = c->generation;
	pthread_mutex_unlock(&c->mu);
	return g;
}
