/* A small open-addressing hash map from a 64-bit key to an int64 count,
 * private to the plugins that keep per-cycle topology counters
 * (InterPodAffinity, PodTopologySpread). Keys are usually a topology pair
 * packed as (key id << 32 | value id), or a single interned id.
 *
 * Entries are never deleted: `n` counts keys ever inserted (Go's len() of a
 * map whose entries are only incremented) and `live` counts keys whose value
 * is non-zero (Go's len() of a map that deletes entries reaching zero).
 *
 * Threads: writers need exclusive access; any number of concurrent readers
 * (Filter/Score) are fine once the map is built.
 */
#ifndef SCHEDEXT_PLUGINS_TOPOLOGY_MAP_H
#define SCHEDEXT_PLUGINS_TOPOLOGY_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/common.h"
#include "schedext/intern.h"

struct tmap {
	uint32_t cap;  /* slots, a power of two; 0 = nothing allocated */
	uint32_t n;    /* keys present */
	uint32_t live; /* keys with a non-zero value */
	uint64_t *keys;
	int64_t *vals;
	uint8_t *used;
};

static inline uint64_t tmap_pair(sx_str key, sx_str value)
{
	return ((uint64_t)key << 32) | value;
}

static inline uint32_t tmap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (uint32_t)k;
}

static inline void tmap_free(struct tmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* Slot of key, or -1 when absent. */
static inline int64_t tmap_find(const struct tmap *m, uint64_t key)
{
	if (m->cap == 0)
		return -1;
	uint32_t mask = m->cap - 1;
	for (uint32_t i = tmap_hash(key) & mask;; i = (i + 1) & mask) {
		if (!m->used[i])
			return -1;
		if (m->keys[i] == key)
			return i;
	}
}

static inline int64_t tmap_get(const struct tmap *m, uint64_t key)
{
	int64_t i = tmap_find(m, key);
	return i < 0 ? 0 : m->vals[i];
}

static inline bool tmap_has(const struct tmap *m, uint64_t key)
{
	return tmap_find(m, key) >= 0;
}

static inline void tmap_put_slot(struct tmap *m, uint64_t key, int64_t val)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = tmap_hash(key) & mask;
	while (m->used[i])
		i = (i + 1) & mask;
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
}

/* Resizes to cap slots (a power of two larger than 2n). */
static inline int tmap_rehash(struct tmap *m, uint32_t cap)
{
	struct tmap old = *m;
	m->keys = malloc(sizeof(*m->keys) * cap);
	m->vals = malloc(sizeof(*m->vals) * cap);
	m->used = calloc(cap, 1);
	if (!m->keys || !m->vals || !m->used) {
		free(m->keys);
		free(m->vals);
		free(m->used);
		*m = old;
		return SX_ENOMEM;
	}
	m->cap = cap;
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.used[i])
			tmap_put_slot(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
	free(old.used);
	return 0;
}

/* Adds delta to key's value, inserting the key (even with delta 0). */
static inline int tmap_add(struct tmap *m, uint64_t key, int64_t delta)
{
	int64_t i = tmap_find(m, key);
	if (i >= 0) {
		int64_t before = m->vals[i];
		m->vals[i] += delta;
		if (before == 0 && m->vals[i] != 0)
			m->live++;
		else if (before != 0 && m->vals[i] == 0)
			m->live--;
		return 0;
	}
	if ((uint64_t)(m->n + 1) * 2 > m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 16;
		if (cap == 0 || tmap_rehash(m, cap) < 0)
			return SX_ENOMEM;
	}
	tmap_put_slot(m, key, delta);
	m->n++;
	if (delta != 0)
		m->live++;
	return 0;
}

/* Deep copy of src into dst (dst is overwritten, not freed). */
static inline int tmap_clone(struct tmap *dst, const struct tmap *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->cap == 0)
		return 0;
	dst->keys = malloc(sizeof(*dst->keys) * src->cap);
	dst->vals = malloc(sizeof(*dst->vals) * src->cap);
	dst->used = malloc(src->cap);
	if (!dst->keys || !dst->vals || !dst->used) {
		tmap_free(dst);
		return SX_ENOMEM;
	}
	memcpy(dst->keys, src->keys, sizeof(*dst->keys) * src->cap);
	memcpy(dst->vals, src->vals, sizeof(*dst->vals) * src->cap);
	memcpy(dst->used, src->used, src->cap);
	dst->cap = src->cap;
	dst->n = src->n;
	dst->live = src->live;
	return 0;
}

#endif /* SCHEDEXT_PLUGINS_TOPOLOGY_MAP_H */
