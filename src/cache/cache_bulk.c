/* Bulk changes to the cache (cache.h): a load that applies a whole set of
 * objects under one lock hold or none of them, and a relist
 * (sx_cache_replace_all) that also deletes what the list no longer shows.
 * Built on the single-object writers of cache.c (cache_int.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "schedext/common.h"

/* A new reference to the API object stored under o's key, or obj NULL. */
static struct sx_object stored_object(struct sx_cache *c, const struct sx_object *o)
{
	const struct sx_meta *m = sx_object_meta(o);
	char buf[SX__KEY_MAX];
	const char *key = sx__object_key(buf, sizeof(buf), m->ns, m->name);
	struct sx_object r = {o->kind, NULL};
	const struct pod_entry *e;
	const struct sx_node_info *ni;

	if (o->kind == SX_KIND_POD) {
		e = sx__map_get(&c->pods, key);
		r.obj = e ? (void *)e->pod : NULL;
	} else if (o->kind == SX_KIND_NODE) {
		ni = sx__cache_node_info(c, ((const struct sx_node *)o->obj)->name_id);
		r.obj = ni ? (void *)ni->node : NULL;
	} else {
		r.obj = sx__map_get(&c->kinds[o->kind], key);
	}
	if (r.obj)
		sx__object_ref(&r);
	return r;
}

/* Undoes the first n upserts of a failed load: each key gets back its
 * previous object (prev) or is deleted (loaded names it). */
static void unload(struct sx_cache *c, struct sx_object *prev, struct sx_object *loaded, uint32_t n)
{
	while (n-- > 0) {
		const struct sx_meta *m = sx_object_meta(&loaded[n]);

		if (prev[n].obj)
			sx__cache_upsert_locked(c, &prev[n]);
		else
			sx__cache_delete_locked(c, loaded[n].kind, m->ns, m->name);
		sx_object_unref(&loaded[n]);
	}
}

int sx_cache_load(struct sx_cache *c, struct sx_object *objs, uint32_t n)
{
	struct sx_object *prev = NULL, *loaded = NULL;
	uint32_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++)
		rc = sx__cache_validate(&objs[i]);
	if (rc == 0) {
		/* what each key held, to undo a load that fails half-way */
		prev = sx_calloc((size_t)n + 1, sizeof(*prev));
		loaded = sx_calloc((size_t)n + 1, sizeof(*loaded));
		rc = prev && loaded ? 0 : SX_ENOMEM;
	}
	if (rc < 0) {
		for (i = 0; i < n; i++)
			sx_object_unref(&objs[i]);
		free(prev);
		free(loaded);
		return rc;
	}
	/* one lock hold: no snapshot can see a half-loaded state */
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < n && rc == 0; i++) {
		prev[i] = stored_object(c, &objs[i]);
		loaded[i] = objs[i];
		sx__object_ref(&loaded[i]);
		rc = sx__cache_upsert_locked(c, &objs[i]);
	}
	if (rc < 0) {
		unload(c, prev, loaded, i);
		for (; i < n; i++)
			sx_object_unref(&objs[i]);
	} else {
		for (i = 0; i < n; i++) {
			sx_object_unref(&prev[i]);
			sx_object_unref(&loaded[i]);
		}
	}
	pthread_mutex_unlock(&c->mu);
	free(prev);
	free(loaded);
	return rc;
}

/* ---------- replace_all ---------- */

/* Keys of every stored object of `kind` (pods: entries with an API object
 * that is not an assumed one in flight). Caller frees each and the array. */
static char **stored_keys(struct sx_cache *c, enum sx_kind kind, uint32_t *n)
{
	const struct sx__map *m = kind == SX_KIND_POD	 ? &c->pods
				  : kind == SX_KIND_NODE ? &c->nodes
							 : &c->kinds[kind];
	char **keys = sx_calloc(m->n, sizeof(*keys));

	*n = 0;
	for (uint32_t i = 0; keys && i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		if (kind == SX_KIND_NODE && !((struct sx_node_info *)m->slots[i].value)->node)
			continue;
		keys[*n] = sx_strdup(m->slots[i].key);
		if (!keys[*n]) { /* a partial list would keep deleted objects */
			while (*n > 0)
				free(keys[--*n]);
			free(keys);
			return NULL;
		}
		(*n)++;
	}
	return keys;
}

/* The relist no longer shows this pod: forget it, except for an assumed
 * one whose binding is in flight (it loses its API object only). */
static void drop_missing_pod(struct sx_cache *c, const char *key)
{
	struct pod_entry *e = sx__map_get(&c->pods, key);

	if (!e)
		return;
	if (!e->assumed) {
		sx__cache_remove_entry(c, key, e);
		return;
	}
	sx_pod_unref(e->pod);
	e->pod = NULL;
}

int sx_cache_replace_all(struct sx_cache *c, enum sx_kind kind, struct sx_object *objs, uint32_t n)
{
	struct sx__map listed = {0};
	uint32_t nkeys = 0;
	char **keys;
	int rc = 0;

	if (kind <= SX_KIND_UNKNOWN || kind >= SX_KIND_COUNT)
		rc = SX_EINVAL;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		const struct sx_meta *m = objs[i].kind == kind ? sx_object_meta(&objs[i]) : NULL;
		char buf[SX__KEY_MAX];
		const char *key = m ? sx__object_key(buf, sizeof(buf), m->ns, m->name) : NULL;

		rc = (sx__cache_validate(&objs[i]) < 0 || !key)
			     ? SX_EINVAL
			     : sx__map_put(&listed, key, &listed);
	}
	if (rc < 0) {
		sx__map_free(&listed);
		for (uint32_t i = 0; i < n; i++)
			sx_object_unref(&objs[i]);
		return rc;
	}
	pthread_mutex_lock(&c->mu);
	keys = stored_keys(c, kind, &nkeys);
	for (uint32_t i = 0; i < nkeys; i++) {
		if (sx__map_get(&listed, keys[i]))
			continue;
		if (kind == SX_KIND_POD)
			drop_missing_pod(c, keys[i]);
		else if (kind == SX_KIND_NODE)
			sx__cache_delete_node(c, keys[i]);
		else
			sx__cache_delete_other(c, kind, keys[i]);
	}
	for (uint32_t i = 0; i < n; i++) {
		int r = sx__cache_upsert_locked(c, &objs[i]);

		if (r < 0 && rc == 0)
			rc = r;
	}
	pthread_mutex_unlock(&c->mu);
	for (uint32_t i = 0; i < nkeys; i++)
		free(keys[i]);
	free(keys);
	sx__map_free(&listed);
	return keys ? rc : SX_ENOMEM;
}
