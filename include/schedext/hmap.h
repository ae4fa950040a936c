/* The project's hash table: open addressing with linear probing and
 * backward-shift deletion (no tombstones), growing by doubling at a load
 * factor of 3/4, bounded by a maximum entry count the owner sets, so no
 * input can make a table grow without limit.
 *
 * A slot is two 64-bit words, a key and a value; a value of 0 marks an
 * empty slot, so stored values are never 0 (pointers, counts above 0,
 * ids + 1). Two ways to key a table:
 *
 *  - integer keys (interned sx_str ids, a pair of ids as SX_HMAP_PAIR):
 *    sx_hmap_get/put/del compare the key word alone;
 *  - keys the caller hashes (strings): the key word holds the key's hash
 *    (sx_hash_bytes, sx_hash_str), the value points at the caller's entry,
 *    which holds the key, and an eq callback confirms a match
 *    (sx_hmap_find, sx_hmap_add, sx_hmap_del_slot).
 *
 * The hash of the whole project is sx_hash_bytes (common.h): 64 bits,
 * word at a time, used for strings too. A table places a key word by
 * Fibonacci hashing (its top bits after a multiply), so integer keys need
 * no hash of their own.
 *
 * A zeroed struct is not usable: sx_hmap_init sets the bound. Not
 * thread-safe: the owner locks. Slot pointers returned are valid until
 * the next insertion (which may grow the table) or deletion (which may
 * move entries); do not insert or delete while iterating. */
#ifndef SCHEDEXT_HMAP_H
#define SCHEDEXT_HMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/common.h"

struct sx_hmap_slot {
	uint64_t key;
	uint64_t val; /* 0 = empty */
};

struct sx_hmap {
	struct sx_hmap_slot *slots; /* NULL until the first insertion */
	uint32_t cap;		    /* a power of two, or 0 */
	uint32_t n;		    /* entries */
	uint32_t max;		    /* bound on n */
	uint8_t shift;		    /* 64 - log2(cap) */
};

/* The largest bound a table accepts (its slots stay under 2^31). */
#define SX_HMAP_MAX_LIMIT (1u << 30)

/* Two 32-bit ids as one integer key. */
#define SX_HMAP_PAIR(a, b) ((uint64_t)(uint32_t)(a) << 32 | (uint32_t)(b))

/* An empty table holding at most max entries (clamped to
 * 1..SX_HMAP_MAX_LIMIT). Allocates nothing. */
void sx_hmap_init(struct sx_hmap *m, uint32_t max);
/* Frees the slots (not what values point to); m is empty again, with the
 * same bound. */
void sx_hmap_clear(struct sx_hmap *m);
/* dst (not initialised) becomes a copy of src: one allocation, no rehash.
 * 0 or SX_ENOMEM (dst is then empty). */
int sx_hmap_clone(struct sx_hmap *dst, const struct sx_hmap *src);

static inline uint32_t sx_hmap_count(const struct sx_hmap *m)
{
	return m->n;
}

/* ---------- integer keys ---------- */

/* The slot holding key, or NULL. */
struct sx_hmap_slot *sx_hmap_slot(const struct sx_hmap *m, uint64_t key);
/* The value of key, or 0. */
static inline uint64_t sx_hmap_get(const struct sx_hmap *m, uint64_t key)
{
	const struct sx_hmap_slot *s = m->n ? sx_hmap_slot(m, key) : NULL;

	return s ? s->val : 0;
}
/* Inserts or replaces key's value (val != 0). 0, SX_EINVAL (val 0),
 * SX_ETOOBIG (a new key in a full table) or SX_ENOMEM; m is unchanged on
 * error. */
int sx_hmap_put(struct sx_hmap *m, uint64_t key, uint64_t val);
/* Removes key; its value, or 0 when absent. */
uint64_t sx_hmap_del(struct sx_hmap *m, uint64_t key);

/* ---------- keys the caller hashes ---------- */

/* Whether the entry stored as val has key (the caller's key type). */
typedef bool sx_hmap_eq_fn(uint64_t val, const void *key);

/* The slot whose key word is hash and whose entry eq accepts, or NULL. */
struct sx_hmap_slot *sx_hmap_find(const struct sx_hmap *m, uint64_t hash, sx_hmap_eq_fn *eq,
				  const void *key);
/* The entry pointer of sx_hmap_find's slot, or NULL. */
static inline void *sx_hmap_find_ptr(const struct sx_hmap *m, uint64_t hash, sx_hmap_eq_fn *eq,
				     const void *key)
{
	const struct sx_hmap_slot *s = m->n ? sx_hmap_find(m, hash, eq, key) : NULL;

	return s ? (void *)(uintptr_t)s->val : NULL;
}
/* Adds an entry under hash without looking for an equal one (the caller
 * found none). 0, SX_EINVAL (entry NULL), SX_ETOOBIG or SX_ENOMEM. */
int sx_hmap_add(struct sx_hmap *m, uint64_t hash, const void *entry);

/* ---------- either ---------- */

/* Removes the entry in slot s (from sx_hmap_slot or sx_hmap_find). */
void sx_hmap_del_slot(struct sx_hmap *m, struct sx_hmap_slot *s);

/* Iteration: for (uint32_t i = 0; (s = sx_hmap_next(m, &i));) ... visits
 * every entry once, in no particular order. */
static inline struct sx_hmap_slot *sx_hmap_next(const struct sx_hmap *m, uint32_t *i)
{
	for (; *i < m->cap; (*i)++)
		if (m->slots[*i].val)
			return &m->slots[(*i)++];
	return NULL;
}

static inline void *sx_hmap_ptr(const struct sx_hmap_slot *s)
{
	return (void *)(uintptr_t)s->val;
}

#endif /* SCHEDEXT_HMAP_H */
