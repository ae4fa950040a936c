/* The cache (include/schedext/cache.h; upstream pkg/scheduler/backend/cache/cache.go).
 *
 * Ownership:
 *  1. The cache holds one reference on every stored object, on every
 *     NodeInfo in `nodes`, on its current kind/image blocks and on the last
 *     snapshot it built.
 *  2. A NodeInfo whose refcount is above 1 is shared with a snapshot: it is
 *     cloned (copy on write) before any change, always under the mutex.
 *  3. A pod entry keeps the pod as the API server last showed it (`pod`) and,
 *     while a binding is in flight, the copy the scheduler assumed
 *     (`assumed`); `node` says where the entry is counted.
 *
 * Generation: bumped on every change a snapshot can see (nodes, pods that
 * count on a node, other kinds). Pending pods count nowhere, so their
 * updates leave it alone and the previous snapshot stays valid.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"
#include "schedext/vec.h"

static void touch(struct sx_cache *c)
{
	c->generation = sx__next_generation();
}

/* ---------- construction ---------- */

struct sx_cache *sx_cache_new(void)
{
	struct sx_cache *c = sx_calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return NULL;
	}
	for (int g = 0; g < SX__G_COUNT; g++)
		c->group_dirty[g] = true;
	c->images_dirty = true;
	c->tree_dirty = true;
	touch(c);
	return c;
}

static void free_pod_entry(struct pod_entry *e)
{
	sx_pod_unref(e->pod);
	sx_pod_unref(e->assumed);
	free(e);
}

void sx_cache_free(struct sx_cache *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->pods.cap; i++)
		if (c->pods.slots[i].key)
			free_pod_entry(c->pods.slots[i].value);
	sx__map_free(&c->pods);
	for (uint32_t i = 0; i < c->nodes.cap; i++)
		if (c->nodes.slots[i].key)
			sx_node_info_unref(c->nodes.slots[i].value);
	sx__map_free(&c->nodes);
	for (int k = 0; k < SX_KIND_COUNT; k++) {
		for (uint32_t i = 0; i < c->kinds[k].cap; i++) {
			struct sx_object o = {(enum sx_kind)k, c->kinds[k].slots[i].value};

			if (c->kinds[k].slots[i].key)
				sx_object_unref(&o);
		}
		sx__map_free(&c->kinds[k]);
	}
	for (int g = 0; g < SX__G_COUNT; g++)
		sx__kind_block_unref(c->groups[g]);
	for (uint32_t z = 0; z < c->nzones; z++)
		free(c->zones[z].names);
	free(c->zones);
	free(c->images);
	free(c->replaced);
	sx__image_block_unref(c->image_block);
	sx__pvc_set_free(&c->used_pvcs);
	sx__pvc_block_unref(c->used_pvcs_block);
	sx_snapshot_unref(c->last);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* ---------- node tree ---------- */

static void zone_of(const struct sx_node *node, sx_str *region, sx_str *zone)
{
	*region = *zone = SX_STR_EMPTY;
	if (!sx_labels_get(&node->meta.labels, SX_S_ZONE_BETA, zone))
		sx_labels_get(&node->meta.labels, SX_S_ZONE, zone);
	if (!sx_labels_get(&node->meta.labels, SX_S_REGION_BETA, region))
		sx_labels_get(&node->meta.labels, SX_S_REGION, region);
}

static struct zone *find_zone(struct sx_cache *c, sx_str region, sx_str zone)
{
	for (uint32_t z = 0; z < c->nzones; z++)
		if (c->zones[z].region == region && c->zones[z].zone == zone)
			return &c->zones[z];
	return NULL;
}

static int tree_add(struct sx_cache *c, const struct sx_node *node)
{
	sx_str region, zname;
	struct zone *z;

	zone_of(node, &region, &zname);
	z = find_zone(c, region, zname);
	if (!z) {
		if (sx_vec_reserve(c->zones, c->cap_zones, c->nzones + 1, 4) < 0)
			return SX_ENOMEM;
		z = &c->zones[c->nzones++];
		*z = (struct zone){.region = region, .zone = zname};
	}
	if (sx_vec_reserve(z->names, z->cap, z->n + 1, 8) < 0)
		return SX_ENOMEM;
	z->names[z->n++] = node->name_id;
	c->tree_size++;
	c->tree_dirty = true;
	return 0;
}

/* Removes the node from its zone keeping the order of the others; an empty
 * zone leaves the zone list (also order-preserving). */
static void tree_remove(struct sx_cache *c, const struct sx_node *node)
{
	sx_str region, zname;
	struct zone *z;

	zone_of(node, &region, &zname);
	z = find_zone(c, region, zname);
	if (!z)
		return;
	for (uint32_t i = 0; i < z->n; i++) {
		if (z->names[i] != node->name_id)
			continue;
		memmove(&z->names[i], &z->names[i + 1], (z->n - i - 1) * sizeof(sx_str));
		z->n--;
		c->tree_size--;
		c->tree_dirty = true;
		break;
	}
	if (z->n == 0) {
		uint32_t at = (uint32_t)(z - c->zones);

		free(z->names);
		memmove(z, z + 1, (c->nzones - at - 1) * sizeof(*z));
		c->nzones--;
	}
}

/* Round-robin over zones: 1st node of every zone, then the 2nd, ... */
/* ---------- image counts ---------- */

static struct image_slot *image_slot(struct sx_cache *c, sx_str name)
{
	uint32_t mask = c->image_cap - 1, j = (name * 2654435761u) & mask;

	while (c->images[j].name != SX_STR_EMPTY && c->images[j].name != name)
		j = (j + 1) & mask;
	return &c->images[j];
}

static int images_grow(struct sx_cache *c)
{
	struct image_slot *old = c->images;
	uint32_t old_cap = c->image_cap, cap = old_cap ? old_cap * 2 : 64;

	c->images = sx_calloc(cap, sizeof(*c->images));
	if (!c->images) {
		c->images = old;
		return SX_ENOMEM;
	}
	c->image_cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].name != SX_STR_EMPTY)
			*image_slot(c, old[i].name) = old[i];
	free(old);
	return 0;
}

/* Adds sign to the count of every name the node lists (once per node). */
static int images_apply(struct sx_cache *c, const struct sx_node *node, int sign)
{
	size_t total = 0, k = 0;
	sx_str *names;

	for (uint32_t i = 0; i < node->nimages; i++)
		total += node->images[i].nnames;
	if (total == 0)
		return 0;
	names = malloc(total * sizeof(*names));
	if (!names)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < node->nimages; i++)
		for (uint32_t j = 0; j < node->images[i].nnames; j++)
			names[k++] = node->images[i].names[j];
	k = sx__unique_ids(names, k);
	for (size_t i = 0; i < k; i++) {
		struct image_slot *s;

		if (names[i] == SX_STR_EMPTY || names[i] == SX_STR_INVALID)
			continue;
		if ((uint64_t)(c->image_n + 1) * 2 > c->image_cap && images_grow(c) < 0) {
			free(names); /* partly applied: the caller marks it broken */
			return SX_ENOMEM;
		}
		s = image_slot(c, names[i]);
		if (s->name == SX_STR_EMPTY) {
			s->name = names[i];
			c->image_n++;
		}
		s->nodes += sign;
	}
	free(names);
	c->images_dirty = true;
	return 0;
}

/* Node status updates rarely change images: skip the recount then. */
static bool same_images(const struct sx_node *a, const struct sx_node *b)
{
	if (a->nimages != b->nimages)
		return false;
	for (uint32_t i = 0; i < a->nimages; i++) {
		const struct sx_image *x = &a->images[i], *y = &b->images[i];

		/* An image with no names has names == NULL: memcmp(NULL,
		 * NULL, 0) is undefined, so compare only non-empty lists. */
		if (x->nnames != y->nnames ||
		    (x->nnames && memcmp(x->names, y->names, x->nnames * sizeof(sx_str)) != 0))
			return false;
	}
	return true;
}

/* ---------- NodeInfos ---------- */

/* Notes that the NodeInfo of name was replaced in the map, so the next
 * snapshot takes the new one. */
static void note_replaced(struct sx_cache *c, sx_str name)
{
	if (c->replaced_overflow)
		return;
	if (c->nreplaced == c->cap_replaced) {
		uint32_t cap = c->cap_replaced ? c->cap_replaced * 2 : 16;
		sx_str *p = cap <= REPLACED_MAX ? realloc(c->replaced, cap * sizeof(*p)) : NULL;

		if (!p) {
			c->replaced_overflow = true;
			return;
		}
		c->replaced = p;
		c->cap_replaced = cap;
	}
	c->replaced[c->nreplaced++] = name;
}

/* The NodeInfo for name, private to the cache (cloned when a snapshot shares
 * it), created node-less when `create`. NULL when absent or on OOM. */
static struct sx_node_info *ni_for_write(struct sx_cache *c, sx_str name, bool create)
{
	struct sx_node_info *ni = sx__cache_node_info(c, name), *copy;

	if (!ni) {
		if (!create)
			return NULL;
		ni = sx_node_info_new(name, NULL);
		if (ni && sx__map_put(&c->nodes, sx_str_get(name), ni) < 0) {
			sx_node_info_unref(ni);
			return NULL;
		}
		if (ni)
			note_replaced(c, name);
		return ni;
	}
	if (atomic_load(&ni->refcount) == 1)
		return ni;
	copy = sx_node_info_clone(ni);
	if (!copy)
		return NULL;
	sx__map_put(&c->nodes, sx_str_get(name), copy); /* key exists: cannot fail */
	note_replaced(c, name);
	sx_node_info_unref(ni);
	return copy;
}

/* A NodeInfo with neither node nor pods has no reason to exist. */
static void ni_maybe_drop(struct sx_cache *c, struct sx_node_info *ni)
{
	if (ni->node || ni->npods > 0)
		return;
	sx__map_del(&c->nodes, sx_str_get(ni->name));
	sx_node_info_unref(ni);
}

static int count_pod(struct sx_cache *c, sx_str node, const struct sx_pod *pod)
{
	struct sx_node_info *ni = ni_for_write(c, node, true);
	int rc;

	if (!ni)
		return SX_ENOMEM;
	touch(c);
	rc = sx_node_info_add_pod(ni, pod);
	if (rc == 0 && pod->npvcs > 0) {
		c->used_pvcs_dirty = true;
		rc = sx__pvc_set_apply(&c->used_pvcs, pod, 1);
	}
	return rc;
}

static void uncount_pod(struct sx_cache *c, sx_str node, const struct sx_pod *pod)
{
	struct sx_node_info *ni = ni_for_write(c, node, false);

	if (!ni)
		return;
	if (pod->npvcs > 0 && sx_node_info_remove_pod(ni, pod) == 0) {
		c->used_pvcs_dirty = true;
		sx__pvc_set_apply(&c->used_pvcs, pod, -1);
	} else if (pod->npvcs == 0) {
		sx_node_info_remove_pod(ni, pod);
	}
	ni_maybe_drop(c, ni);
	touch(c);
}

/* ---------- listener ---------- */

static void notify_pod(struct sx_cache *c, const struct sx_pod *old, const struct sx_pod *new)
{
	if (c->listener.pod_changed)
		c->listener.pod_changed(c->listener.ctx, old, new);
}

static void notify_node(struct sx_cache *c, const struct sx_node *old, const struct sx_node *new)
{
	if (c->listener.node_changed)
		c->listener.node_changed(c->listener.ctx, old, new);
}

static void notify_object(struct sx_cache *c, enum sx_kind kind, const void *old, const void *new)
{
	if (c->listener.object_changed)
		c->listener.object_changed(c->listener.ctx, kind, old, new);
}

void sx_cache_set_listener(struct sx_cache *c, const struct sx_cache_listener *l)
{
	pthread_mutex_lock(&c->mu);
	if (l)
		c->listener = *l;
	else
		memset(&c->listener, 0, sizeof(c->listener));
	pthread_mutex_unlock(&c->mu);
}

/* ---------- pods ---------- */

static bool same_uid(const struct sx_pod *a, const struct sx_pod *b)
{
	const char *x = a->meta.uid ? a->meta.uid : "", *y = b->meta.uid ? b->meta.uid : "";

	return strcmp(x, y) == 0;
}

static bool is_terminal(const struct sx_pod *pod)
{
	return pod->phase == SX_PHASE_SUCCEEDED || pod->phase == SX_PHASE_FAILED;
}

static void release_assumed(struct sx_cache *c, struct pod_entry *e)
{
	uncount_pod(c, e->node, e->assumed);
	sx_pod_unref(e->assumed);
	e->assumed = NULL;
	e->node = SX_STR_EMPTY;
	e->binding_finished = false;
}

/* Uncounts and frees the entry stored under key. */
void sx__cache_remove_entry(struct sx_cache *c, const char *key, struct pod_entry *e)
{
	const struct sx_pod *old = sx_pod_ref(sx__pod_entry_visible(e));

	if (e->assumed)
		release_assumed(c, e);
	else if (e->node != SX_STR_EMPTY)
		uncount_pod(c, e->node, e->pod);
	sx__map_del(&c->pods, key);
	free_pod_entry(e);
	notify_pod(c, old, NULL);
	sx_pod_unref(old);
}

static struct pod_entry *entry_for(struct sx_cache *c, const char *key)
{
	struct pod_entry *e = sx__map_get(&c->pods, key);

	if (e)
		return e;
	e = sx_calloc(1, sizeof(*e));
	if (e && sx__map_put(&c->pods, key, e) < 0) {
		free(e);
		e = NULL;
	}
	return e;
}

/* Stores pod (reference taken over) as the entry's API object, counting it
 * on its node when bound. The entry is not assumed. */
static int set_api_pod(struct sx_cache *c, struct pod_entry *e, const struct sx_pod *pod)
{
	if (e->node != SX_STR_EMPTY)
		uncount_pod(c, e->node, e->pod);
	sx_pod_unref(e->pod);
	e->pod = pod;
	e->node = SX_STR_EMPTY;
	if (pod->node_name == SX_STR_EMPTY)
		return 0;
	e->node = pod->node_name;
	if (count_pod(c, pod->node_name, pod) < 0) {
		/* not counted anywhere: say so (pending) rather than claim a
		 * node that does not hold it; the caller's ENOMEM makes the
		 * informer re-list, which counts it again */
		e->node = SX_STR_EMPTY;
		return SX_ENOMEM;
	}
	return 0;
}

static int upsert_pod(struct sx_cache *c, const struct sx_pod *pod)
{
	char buf[SX__KEY_MAX];
	const char *key = sx__object_key(buf, sizeof(buf), pod->meta.ns, pod->meta.name);
	struct pod_entry *e;
	const struct sx_pod *old;
	int rc;

	e = sx__map_get(&c->pods, key);
	if (is_terminal(pod)) {
		if (e)
			sx__cache_remove_entry(c, key, e);
		sx_pod_unref(pod);
		return 0;
	}
	e = entry_for(c, key);
	if (!e) {
		sx_pod_unref(pod);
		return SX_ENOMEM;
	}
	old = sx_pod_ref(sx__pod_entry_visible(e));
	if (e->assumed && same_uid(e->assumed, pod) && pod->node_name == SX_STR_EMPTY) {
		/* the API still shows it pending: the binding is in flight */
		sx_pod_unref(e->pod);
		e->pod = pod;
		rc = 0;
	} else {
		if (e->assumed) /* confirmed (or replaced by a new UID) */
			release_assumed(c, e);
		rc = set_api_pod(c, e, pod);
	}
	notify_pod(c, old, sx__pod_entry_visible(e));
	sx_pod_unref(old);
	return rc;
}

static int delete_pod(struct sx_cache *c, const char *key)
{
	struct pod_entry *e = sx__map_get(&c->pods, key);

	if (!e)
		return SX_ENOENT;
	sx__cache_remove_entry(c, key, e);
	return 0;
}

int sx_cache_assume(struct sx_cache *c, const struct sx_pod *pod, sx_str node)
{
	char buf[SX__KEY_MAX];
	const char *key = sx__object_key(buf, sizeof(buf), pod->meta.ns, pod->meta.name);
	struct pod_entry *e;
	int rc = 0;

	if (!key || node == SX_STR_EMPTY || node == SX_STR_INVALID)
		return SX_EINVAL;
	pthread_mutex_lock(&c->mu);
	e = sx__map_get(&c->pods, key);
	if (e && (e->assumed || e->node != SX_STR_EMPTY)) {
		/* idempotent for the same pod on the same node */
		rc = (same_uid(sx__pod_entry_visible(e), pod) && e->node == node) ? 0 : SX_EEXIST;
		goto out;
	}
	e = entry_for(c, key);
	rc = e ? count_pod(c, node, pod) : SX_ENOMEM;
	if (rc < 0)
		goto out;
	e->assumed = sx_pod_ref(pod);
	e->node = node;
	notify_pod(c, e->pod, pod);
out:
	if (e && !e->pod && !e->assumed) { /* a fresh entry that failed */
		sx__map_del(&c->pods, key);
		free_pod_entry(e);
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

static struct pod_entry *assumed_entry(struct sx_cache *c, sx_str ns, const char *name, char *buf,
				       const char **key)
{
	struct pod_entry *e;

	*key = sx__object_key(buf, SX__KEY_MAX, ns, name);
	e = *key ? sx__map_get(&c->pods, *key) : NULL;
	return (e && e->assumed) ? e : NULL;
}

int sx_cache_finish_binding(struct sx_cache *c, sx_str ns, const char *name)
{
	char buf[SX__KEY_MAX];
	const char *key;
	struct pod_entry *e;

	pthread_mutex_lock(&c->mu);
	e = assumed_entry(c, ns, name, buf, &key);
	if (e) {
		e->binding_finished = true;
		e->finished_at = sx_now_s();
	}
	pthread_mutex_unlock(&c->mu);
	return e ? 0 : SX_ENOENT;
}

/* Releases an assumed pod; it falls back to pending when the API knows it. */
static void forget_locked(struct sx_cache *c, const char *key, struct pod_entry *e)
{
	const struct sx_pod *old;

	if (!e->pod) {
		sx__cache_remove_entry(c, key, e);
		return;
	}
	old = sx_pod_ref(e->assumed);
	release_assumed(c, e);
	notify_pod(c, old, e->pod);
	sx_pod_unref(old);
}

int sx_cache_forget(struct sx_cache *c, sx_str ns, const char *name)
{
	char buf[SX__KEY_MAX];
	const char *key;
	struct pod_entry *e;

	pthread_mutex_lock(&c->mu);
	e = assumed_entry(c, ns, name, buf, &key);
	if (e)
		forget_locked(c, key, e);
	pthread_mutex_unlock(&c->mu);
	return e ? 0 : SX_ENOENT;
}

int sx_cache_expire_assumed(struct sx_cache *c, double ttl_s)
{
	double now = sx_now_s();
	char **keys;
	int n = 0;

	if (ttl_s <= 0)
		return 0;
	pthread_mutex_lock(&c->mu);
	/* collect first: removals move slots of the open-addressing map */
	keys = sx_calloc(c->pods.n, sizeof(*keys));
	for (uint32_t i = 0; keys && i < c->pods.cap; i++) {
		const struct pod_entry *e = c->pods.slots[i].value;

		if (!c->pods.slots[i].key || !e->assumed || !e->binding_finished ||
		    now - e->finished_at <= ttl_s)
			continue;
		keys[n] = sx_strdup(c->pods.slots[i].key);
		if (keys[n])
			n++;
	}
	for (int i = 0; i < n; i++) {
		forget_locked(c, keys[i], sx__map_get(&c->pods, keys[i]));
		free(keys[i]);
	}
	pthread_mutex_unlock(&c->mu);
	free(keys);
	return n;
}

const struct sx_pod *sx_cache_get_pod(struct sx_cache *c, sx_str ns, const char *name, sx_str *node,
				      bool *assumed)
{
	char buf[SX__KEY_MAX];
	const char *key = sx__object_key(buf, sizeof(buf), ns, name);
	struct pod_entry *e;
	const struct sx_pod *pod = NULL;

	pthread_mutex_lock(&c->mu);
	e = key ? sx__map_get(&c->pods, key) : NULL;
	if (e)
		pod = sx_pod_ref(sx__pod_entry_visible(e));
	if (node)
		*node = e ? e->node : SX_STR_EMPTY;
	if (assumed)
		*assumed = e && e->assumed;
	pthread_mutex_unlock(&c->mu);
	return pod;
}

/* ---------- nodes ---------- */

/* The tree order becomes the map's order. */
int sx__cache_rebuild_derived(struct sx_cache *c)
{
	for (uint32_t z = 0; z < c->nzones; z++)
		free(c->zones[z].names);
	c->nzones = 0;
	c->tree_size = 0;
	for (uint32_t i = 0; i < c->image_cap; i++)
		c->images[i].nodes = 0;
	c->tree_dirty = true;
	c->images_dirty = true;
	for (uint32_t i = 0; i < c->nodes.cap; i++) {
		const struct sx_node_info *ni = c->nodes.slots[i].value;

		if (!c->nodes.slots[i].key || !ni->node)
			continue;
		if (tree_add(c, ni->node) < 0 || images_apply(c, ni->node, 1) < 0)
			return SX_ENOMEM; /* still broken: retried next time */
	}
	c->derived_broken = false;
	return 0;
}

static int upsert_node(struct sx_cache *c, const struct sx_node *node)
{
	struct sx_node_info *ni = ni_for_write(c, node->name_id, true);
	const struct sx_node *old;
	sx_str r0, z0, r1, z1;
	int rc = 0;

	if (!ni) {
		sx_node_unref(node);
		return SX_ENOMEM;
	}
	old = sx_node_ref(ni->node);
	sx_node_info_set_node(ni, node);
	sx_node_unref(node); /* set_node took its own reference */
	if (old) {
		if (!same_images(old, node) &&
		    (images_apply(c, old, -1) < 0 || images_apply(c, node, 1) < 0))
			rc = SX_ENOMEM;
		zone_of(old, &r0, &z0);
		zone_of(node, &r1, &z1);
		if (r0 != r1 || z0 != z1) {
			tree_remove(c, old);
			if (tree_add(c, node) < 0)
				rc = SX_ENOMEM;
		}
	} else {
		c->nnode_objects++;
		rc = tree_add(c, node);
		if (rc == 0)
			rc = images_apply(c, node, 1);
	}
	if (rc < 0)
		c->derived_broken = true;
	touch(c);
	notify_node(c, old, node);
	sx_node_unref(old);
	return rc;
}

int sx__cache_delete_node(struct sx_cache *c, const char *name)
{
	sx_str id = sx_intern_lookup_n(name, strlen(name));
	struct sx_node_info *ni = id == SX_STR_INVALID ? NULL : sx__cache_node_info(c, id);
	const struct sx_node *old;

	if (!ni || !ni->node)
		return SX_ENOENT;
	old = sx_node_ref(ni->node);
	tree_remove(c, old);
	if (images_apply(c, old, -1) < 0)
		c->derived_broken = true;
	c->nnode_objects--;
	ni = ni_for_write(c, id, false);
	if (ni) {
		/* pods stay counted on a node-less NodeInfo until they go */
		sx_node_info_set_node(ni, NULL);
		ni_maybe_drop(c, ni);
	}
	touch(c);
	notify_node(c, old, NULL);
	sx_node_unref(old);
	return 0;
}

const struct sx_node *sx_cache_get_node(struct sx_cache *c, const char *name)
{
	sx_str id = sx_intern_lookup_n(name, strlen(name));
	struct sx_node_info *ni;
	const struct sx_node *node = NULL;

	pthread_mutex_lock(&c->mu);
	ni = id == SX_STR_INVALID ? NULL : sx__cache_node_info(c, id);
	if (ni)
		node = sx_node_ref(ni->node);
	pthread_mutex_unlock(&c->mu);
	return node;
}

/* ---------- other kinds ---------- */

static int upsert_other(struct sx_cache *c, struct sx_object *o)
{
	const struct sx_meta *m = sx_object_meta(o);
	char buf[SX__KEY_MAX];
	const char *key = sx__object_key(buf, sizeof(buf), m->ns, m->name);
	struct sx_object old = {o->kind, sx__map_get(&c->kinds[o->kind], key)};

	if (sx__map_put(&c->kinds[o->kind], key, o->obj) < 0) {
		sx_object_unref(o);
		return SX_ENOMEM;
	}
	notify_object(c, o->kind, old.obj, o->obj);
	sx_object_unref(&old);
	c->group_dirty[sx__kind_group(o->kind)] = true;
	touch(c);
	return 0;
}

int sx__cache_delete_other(struct sx_cache *c, enum sx_kind kind, const char *key)
{
	struct sx_object old = {kind, sx__map_del(&c->kinds[kind], key)};

	if (!old.obj)
		return SX_ENOENT;
	notify_object(c, kind, old.obj, NULL);
	sx_object_unref(&old);
	c->group_dirty[sx__kind_group(kind)] = true;
	touch(c);
	return 0;
}

/* ---------- dispatch ---------- */

/* Checks an object before anything is applied: kind, name, key size. */
int sx__cache_validate(const struct sx_object *o)
{
	const struct sx_meta *m;
	char buf[SX__KEY_MAX];

	if (!o || !o->obj || o->kind <= SX_KIND_UNKNOWN || o->kind >= SX_KIND_COUNT)
		return SX_EINVAL;
	m = sx_object_meta(o);
	if (!m || !m->name || !m->name[0] || !sx__object_key(buf, sizeof(buf), m->ns, m->name))
		return SX_EINVAL;
	if (o->kind == SX_KIND_NODE) {
		const struct sx_node *n = o->obj;

		if (n->name_id == SX_STR_EMPTY || n->name_id == SX_STR_INVALID)
			return SX_EINVAL;
	}
	return 0;
}

/* Takes over o's reference. */
int sx__cache_upsert_locked(struct sx_cache *c, struct sx_object *o)
{
	if (sx__cache_validate(o) < 0) {
		sx_object_unref(o);
		return SX_EINVAL;
	}
	switch (o->kind) {
	case SX_KIND_POD:
		return upsert_pod(c, o->obj);
	case SX_KIND_NODE:
		return upsert_node(c, o->obj);
	default:
		return upsert_other(c, o);
	}
}

int sx__cache_delete_locked(struct sx_cache *c, enum sx_kind kind, sx_str ns, const char *name)
{
	char buf[SX__KEY_MAX];
	const char *key = sx__object_key(buf, sizeof(buf), ns, name);

	if (!key || kind <= SX_KIND_UNKNOWN || kind >= SX_KIND_COUNT)
		return SX_ENOENT;
	switch (kind) {
	case SX_KIND_POD:
		return delete_pod(c, key);
	case SX_KIND_NODE:
		return sx__cache_delete_node(c, name);
	default:
		return sx__cache_delete_other(c, kind, key);
	}
}

int sx_cache_upsert(struct sx_cache *c, struct sx_object *obj)
{
	int rc;

	pthread_mutex_lock(&c->mu);
	rc = sx__cache_upsert_locked(c, obj);
	pthread_mutex_unlock(&c->mu);
	return rc;
}

int sx_cache_delete(struct sx_cache *c, enum sx_kind kind, sx_str ns, const char *name)
{
	int rc;

	if (!name)
		return SX_ENOENT;
	pthread_mutex_lock(&c->mu);
	rc = sx__cache_delete_locked(c, kind, ns, name);
	pthread_mutex_unlock(&c->mu);
	return rc;
}
