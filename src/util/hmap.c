/* The project's hash function and hash table (hmap.h, common.h).
 *
 * sx_hash_bytes reads 8 bytes at a time (the tail of 1..7 bytes with two
 * overlapping reads, as wyhash does), folds each word in with a multiply
 * and an xor-shift, and ends with MurmurHash3's fmix64 so every output
 * bit depends on every input bit. Each step is a bijection of the state,
 * so equal-length inputs differing in one word never collide.
 *
 * The table is linear probing over one slot array; a key word's home is
 * the top log2(cap) bits of key * 2^64/phi (Fibonacci hashing), which
 * spreads consecutive ids and pairs of ids as well as full hashes.
 * Deletion shifts the following cluster back (no tombstones), so a
 * lookup never walks more than the cluster its key lies in.
 *
 * No state of its own; a table is its owner's, locked by its owner. */
#include "schedext/hmap.h"

#include <stdlib.h>
#include <string.h>

#define GOLDEN 0x9E3779B97F4A7C15ull
#define MULT   0xBF58476D1CE4E5B9ull

static inline uint64_t fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDull;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ull;
	h ^= h >> 33;
	return h;
}

static inline uint64_t fold(uint64_t h, uint64_t w)
{
	h = (h ^ w) * MULT;
	return h ^ (h >> 32);
}

uint64_t sx_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = (uint64_t)n * GOLDEN, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = fold(h, w);
	}
	if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		h = fold(h, (uint64_t)a << 32 | b);
	} else if (n > 0) {
		h = fold(h, (uint64_t)s[0] << 16 | (uint64_t)s[n >> 1] << 8 | s[n - 1]);
	}
	return fmix64(h);
}

/* ---------- the table ---------- */

#define MIN_CAP 16u

static inline uint32_t home(const struct sx_hmap *m, uint64_t key)
{
	return (uint32_t)((key * GOLDEN) >> m->shift);
}

void sx_hmap_init(struct sx_hmap *m, uint32_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max == 0 ? 1 : max > SX_HMAP_MAX_LIMIT ? SX_HMAP_MAX_LIMIT : max;
}

void sx_hmap_clear(struct sx_hmap *m)
{
	uint32_t max = m->max;

	free(m->slots);
	sx_hmap_init(m, max);
}

int sx_hmap_clone(struct sx_hmap *dst, const struct sx_hmap *src)
{
	*dst = *src;
	if (!src->cap)
		return 0;
	dst->slots = malloc((size_t)src->cap * sizeof(*src->slots));
	if (!dst->slots) {
		sx_hmap_init(dst, src->max);
		return SX_ENOMEM;
	}
	memcpy(dst->slots, src->slots, (size_t)src->cap * sizeof(*src->slots));
	return 0;
}

/* The slot of the first entry with key word key that eq accepts (any
 * when eq is NULL), or the empty slot ending its cluster. cap > 0. */
static inline uint32_t probe(const struct sx_hmap *m, uint64_t key, sx_hmap_eq_fn *eq,
			     const void *ekey)
{
	uint32_t mask = m->cap - 1, i = home(m, key);

	for (;; i = (i + 1) & mask) {
		const struct sx_hmap_slot *s = &m->slots[i];

		if (!s->val || (s->key == key && (!eq || eq(s->val, ekey))))
			return i;
	}
}

struct sx_hmap_slot *sx_hmap_slot(const struct sx_hmap *m, uint64_t key)
{
	uint32_t i;

	if (!m->n)
		return NULL;
	i = probe(m, key, NULL, NULL);
	return m->slots[i].val ? &m->slots[i] : NULL;
}

struct sx_hmap_slot *sx_hmap_find(const struct sx_hmap *m, uint64_t hash, sx_hmap_eq_fn *eq,
				  const void *key)
{
	uint32_t i;

	if (!m->n)
		return NULL;
	i = probe(m, hash, eq, key);
	return m->slots[i].val ? &m->slots[i] : NULL;
}

/* Rehashes into cap slots; 0 or SX_ENOMEM (m unchanged). */
static int resize(struct sx_hmap *m, uint32_t cap)
{
	struct sx_hmap bigger = *m;

	bigger.slots = calloc(cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return SX_ENOMEM;
	bigger.cap = cap;
	bigger.shift = (uint8_t)(64 - __builtin_ctz(cap));
	for (uint32_t j = 0; j < m->cap; j++) {
		uint32_t mask = cap - 1, i;

		if (!m->slots[j].val)
			continue;
		for (i = home(&bigger, m->slots[j].key); bigger.slots[i].val; i = (i + 1) & mask)
			;
		bigger.slots[i] = m->slots[j];
	}
	free(m->slots);
	*m = bigger;
	return 0;
}

/* Room for one more entry: SX_ETOOBIG at the bound, else grows past a
 * load of 3/4. */
static int reserve_one(struct sx_hmap *m)
{
	if (m->n >= m->max)
		return SX_ETOOBIG;
	if ((uint64_t)(m->n + 1) * 4 <= (uint64_t)m->cap * 3)
		return 0;
	return resize(m, m->cap ? m->cap * 2 : MIN_CAP); /* max <= 2^30: cap <= 2^31 */
}

static void fill(struct sx_hmap *m, uint64_t key, uint64_t val)
{
	uint32_t mask = m->cap - 1, i = home(m, key);

	while (m->slots[i].val)
		i = (i + 1) & mask;
	m->slots[i] = (struct sx_hmap_slot){key, val};
	m->n++;
}

int sx_hmap_put(struct sx_hmap *m, uint64_t key, uint64_t val)
{
	struct sx_hmap_slot *s;
	int rc;

	if (!val)
		return SX_EINVAL;
	s = sx_hmap_slot(m, key);
	if (s) {
		s->val = val;
		return 0;
	}
	if ((rc = reserve_one(m)) < 0)
		return rc;
	fill(m, key, val);
	return 0;
}

int sx_hmap_add(struct sx_hmap *m, uint64_t hash, const void *entry)
{
	int rc;

	if (!entry)
		return SX_EINVAL;
	if ((rc = reserve_one(m)) < 0)
		return rc;
	fill(m, hash, (uint64_t)(uintptr_t)entry);
	return 0;
}

void sx_hmap_del_slot(struct sx_hmap *m, struct sx_hmap_slot *s)
{
	uint32_t mask = m->cap - 1, i = (uint32_t)(s - m->slots), j;

	m->slots[i].val = 0;
	m->n--;
	for (j = (i + 1) & mask; m->slots[j].val; j = (j + 1) & mask) {
		uint32_t h = home(m, m->slots[j].key);

		/* j stays unless its home lies cyclically in (i, j] */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].val = 0;
		i = j;
	}
}

uint64_t sx_hmap_del(struct sx_hmap *m, uint64_t key)
{
	struct sx_hmap_slot *s = sx_hmap_slot(m, key);
	uint64_t val;

	if (!s)
		return 0;
	val = s->val;
	sx_hmap_del_slot(m, s);
	return val;
}
