/* The cache's string-keyed hash map and small shared helpers. */
#include "cache_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/common.h"
#include "schedext/dra.h"
#include "schedext/workload.h"

static atomic_uint_fast64_t generation_counter;

uint64_t sx__next_generation(void)
{
	return (uint64_t)atomic_fetch_add(&generation_counter, 1) + 1;
}

/* Slot holding key, or the empty slot where it would go. */
static uint32_t probe(const struct sx__map *m, const char *key, uint64_t h)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)h & mask;

	while (m->slots[i].key) {
		if (m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0)
			return i;
		i = (i + 1) & mask;
	}
	return i;
}

void *sx__map_get(const struct sx__map *m, const char *key)
{
	uint32_t i;

	if (m->cap == 0)
		return NULL;
	i = probe(m, key, sx_hash_str(key));
	return m->slots[i].key ? m->slots[i].value : NULL;
}

static int grow(struct sx__map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 16;
	struct sx__map_slot *old = m->slots;
	uint32_t old_cap = m->cap;

	if (cap < m->cap)
		return SX_ENOMEM;
	m->slots = sx_calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return SX_ENOMEM;
	}
	m->cap = cap;
	for (uint32_t j = 0; j < old_cap; j++)
		if (old[j].key)
			m->slots[probe(m, old[j].key, old[j].hash)] = old[j];
	free(old);
	return 0;
}

int sx__map_put(struct sx__map *m, const char *key, void *value)
{
	uint64_t h = sx_hash_str(key);
	uint32_t i;
	char *copy;

	/* keep the load factor under 3/4 */
	if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->cap * 3 && grow(m) < 0)
		return SX_ENOMEM;
	i = probe(m, key, h);
	if (m->slots[i].key) {
		m->slots[i].value = value;
		return 0;
	}
	copy = sx_strdup(key);
	if (!copy)
		return SX_ENOMEM;
	m->slots[i] = (struct sx__map_slot){copy, h, value};
	m->n++;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void *sx__map_del(struct sx__map *m, const char *key)
{
	uint32_t mask, i, j;
	void *value;

	if (m->cap == 0)
		return NULL;
	mask = m->cap - 1;
	i = probe(m, key, sx_hash_str(key));
	if (!m->slots[i].key)
		return NULL;
	value = m->slots[i].value;
	free(m->slots[i].key);
	m->slots[i].key = NULL;
	m->n--;
	for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		uint32_t home = (uint32_t)m->slots[j].hash & mask;

		/* move j back to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].key = NULL;
		i = j;
	}
	return value;
}

void sx__map_free(struct sx__map *m)
{
	for (uint32_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

const char *sx__object_key(char *buf, size_t len, sx_str ns, const char *name)
{
	int w;

	if (!name)
		name = "";
	if (ns == SX_STR_EMPTY)
		w = snprintf(buf, len, "%s", name);
	else
		w = snprintf(buf, len, "%s/%s", sx_str_get(ns), name);
	return (w < 0 || (size_t)w >= len) ? NULL : buf;
}

/* ---------- objects of any kind ---------- */

void sx__object_ref(const struct sx_object *o)
{
	switch (o->kind) {
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, ...)                         \
	case SX_KIND_##ID:                                                                         \
		sx_##REF##_ref(o->obj);                                                            \
		break;
#include "schedext/kinds.def"
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		break;
	}
}

/* Order by (namespace, name, kind): the snapshot arrays' order. */
int sx__object_cmp(const struct sx_object *a, const struct sx_object *b)
{
	const struct sx_meta *ma = sx_object_meta(a), *mb = sx_object_meta(b);
	int c;

	if (ma->ns != mb->ns) {
		c = strcmp(sx_str_get(ma->ns), sx_str_get(mb->ns));
		if (c)
			return c;
	}
	c = strcmp(ma->name ? ma->name : "", mb->name ? mb->name : "");
	if (c)
		return c;
	return (int)a->kind - (int)b->kind;
}

/* The CACHE column of kinds.def. */
int sx__kind_group(enum sx_kind kind)
{
	switch (kind) {
#define CACHE_OWN		 -1
#define CACHE_JOIN(G)		 SX__G_##G
#define CACHE_GROUP(G, FIELD, T) SX__G_##G
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, ...)          \
	case SX_KIND_##ID:                                                                         \
		return CACHE;
#include "schedext/kinds.def"
#undef CACHE_OWN
#undef CACHE_JOIN
#undef CACHE_GROUP
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		break;
	}
	return -1;
}
