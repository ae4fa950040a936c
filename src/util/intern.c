/* Interned strings.
 *
 * Writers (sx_intern_n) take one mutex and use an open-addressing hash table
 * string -> id. Readers (sx_str_get/sx_str_len) take no lock: entries live in
 * a two-level array whose chunks never move once allocated (chunk c holds
 * ids [2^(c+10) - 1024, 2^(c+11) - 1024)), and the number of published ids is
 * an atomic stored with release order after the entry is written. So an id
 * handed out by one thread can be resolved by any thread that received it.
 *
 * Lookups (sx_intern_lookup_n, one per node name of an extender request)
 * take no lock either: a slot is one 64-bit atomic (hash, id + 1) stored with
 * release order after its entry is published, and a grown table is filled
 * before its pointer is published. A lookup racing an insert may miss the
 * new string, as it would had it taken the lock first.
 *
 * Nothing is ever freed: the strings live for the life of the process and
 * stay reachable from the globals here (so leak checkers stay quiet). Tables
 * replaced by growth are kept too (a reader may still be probing one); they
 * sum to less than the current table.
 */
#include "schedext/intern.h"

#include "schedext/common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BASE_BITS 10
#define CHUNK_BASE	((uint64_t)1 << CHUNK_BASE_BITS)
#define NCHUNKS		23 /* enough for 2^32 ids */
#define BLOCK_SIZE	((size_t)64 << 10)

struct entry {
	const char *s; /* NUL-terminated copy */
	uint32_t len;
};

/* Open-addressing table of slots (hash << 32 | id + 1), 0 = empty. */
struct table {
	size_t cap; /* power of two */
	_Atomic uint64_t slots[];
};

static _Atomic(struct entry *) chunks[NCHUNKS];
static atomic_uint_fast32_t nids; /* published ids */
static atomic_size_t nbytes;	  /* string bytes, NULs included */

/* Everything below is protected by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct table *) table; /* published with release order */
static char *block;		      /* bump allocator for string copies */
static size_t block_left;
static char **blocks; /* every block, kept reachable */
static size_t nblocks, blocks_cap;

static pthread_once_t base_once = PTHREAD_ONCE_INIT;
static pthread_once_t known_once = PTHREAD_ONCE_INIT;

sx_str SX_S_CPU, SX_S_MEMORY, SX_S_EPHEMERAL_STORAGE, SX_S_PODS;
sx_str SX_S_HOSTNAME, SX_S_ZONE, SX_S_REGION, SX_S_ZONE_BETA, SX_S_REGION_BETA;
sx_str SX_S_DEFAULT, SX_S_DEFAULT_SCHEDULER, SX_S_TCP, SX_S_UDP, SX_S_SCTP;
sx_str SX_S_UNSCHEDULABLE_TAINT;
sx_str SX_S_METADATA_NAME;

/* The project's hash (sx_hash_bytes), its low 32 bits kept in a slot. */
static uint32_t hash_bytes(const char *s, size_t len)
{
	return (uint32_t)sx_hash_bytes(s, len);
}

/* Chunk index and offset of id. */
static void locate(uint32_t id, unsigned *chunk, uint64_t *off)
{
	uint64_t x = (uint64_t)id + CHUNK_BASE;
	unsigned bit = 63u - (unsigned)__builtin_clzll(x);

	*chunk = bit - CHUNK_BASE_BITS;
	*off = x - ((uint64_t)1 << bit);
}

static const struct entry *entry_of(uint32_t id)
{
	unsigned c;
	uint64_t off;
	struct entry *chunk;

	if (id >= atomic_load_explicit(&nids, memory_order_acquire))
		return NULL;
	locate(id, &c, &off);
	chunk = atomic_load_explicit(&chunks[c], memory_order_acquire);
	return chunk ? &chunk[off] : NULL;
}

/* Keeps an allocation reachable from a global. Locked. */
static int remember(char *p)
{
	if (nblocks == blocks_cap) {
		size_t ncap = blocks_cap ? blocks_cap * 2 : 64;
		char **nb = realloc(blocks, ncap * sizeof(*nb));

		if (!nb)
			return -1;
		blocks = nb;
		blocks_cap = ncap;
	}
	blocks[nblocks++] = p;
	return 0;
}

/* Allocates n bytes from the string arena (big strings get their own
 * allocation); NULL on failure. Locked. */
static char *arena_alloc(size_t n)
{
	char *p;

	if (n > BLOCK_SIZE / 4 || n > block_left) {
		p = malloc(n > BLOCK_SIZE / 4 ? n : BLOCK_SIZE);
		if (!p || remember(p) != 0) {
			free(p);
			return NULL;
		}
		if (n > BLOCK_SIZE / 4)
			return p;
		block = p;
		block_left = BLOCK_SIZE;
	}
	p = block;
	block += n;
	block_left -= n;
	return p;
}

/* Copies s into the arena with a terminating NUL. Locked. */
static char *store_string(const char *s, size_t len)
{
	char *p = arena_alloc(len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static uint64_t slot_make(uint32_t hash, sx_str id)
{
	return (uint64_t)hash << 32 | (uint64_t)(id + 1);
}

/* Index of the slot for (s, hash) in t: the matching one or the empty one
 * where it belongs. Any thread; t must have an empty slot. */
static size_t probe(const struct table *t, const char *s, size_t len, uint32_t hash)
{
	size_t mask = t->cap - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		uint64_t v = atomic_load_explicit(&t->slots[i], memory_order_acquire);
		const struct entry *e;

		if (v == 0)
			return i;
		if ((uint32_t)(v >> 32) != hash)
			continue;
		e = entry_of((uint32_t)v - 1);
		if (e && e->len == len && memcmp(e->s, s, len) == 0)
			return i;
	}
}

/* Doubles the hash table; 0 or -1 on allocation failure. Locked. */
static int grow_table(void)
{
	struct table *old = atomic_load_explicit(&table, memory_order_relaxed);
	size_t ocap = old ? old->cap : 0, ncap = ocap ? ocap * 2 : 1024;
	struct table *nt = calloc(1, sizeof(*nt) + ncap * sizeof(nt->slots[0]));

	if (!nt)
		return -1;
	if (old && remember((char *)old) != 0) {
		free(nt);
		return -1;
	}
	nt->cap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		uint64_t v = atomic_load_explicit(&old->slots[i], memory_order_relaxed);

		if (v == 0)
			continue;
		for (size_t j = (v >> 32) & (ncap - 1);; j = (j + 1) & (ncap - 1)) {
			if (atomic_load_explicit(&nt->slots[j], memory_order_relaxed) == 0) {
				atomic_store_explicit(&nt->slots[j], v, memory_order_relaxed);
				break;
			}
		}
	}
	atomic_store_explicit(&table, nt, memory_order_release);
	return 0;
}

/* Appends a new entry and publishes it; returns its id or SX_STR_INVALID.
 * Locked. */
static sx_str append_entry(const char *copy, size_t len)
{
	uint32_t id = (uint32_t)atomic_load_explicit(&nids, memory_order_relaxed);
	unsigned c;
	uint64_t off;
	struct entry *chunk;

	if (id == SX_STR_INVALID)
		return SX_STR_INVALID;
	locate(id, &c, &off);
	if (c >= NCHUNKS)
		return SX_STR_INVALID;
	chunk = atomic_load_explicit(&chunks[c], memory_order_relaxed);
	if (!chunk) {
		chunk = calloc((size_t)CHUNK_BASE << c, sizeof(*chunk));
		if (!chunk)
			return SX_STR_INVALID;
		atomic_store_explicit(&chunks[c], chunk, memory_order_release);
	}
	chunk[off].s = copy;
	chunk[off].len = (uint32_t)len;
	atomic_store_explicit(&nids, id + 1, memory_order_release);
	return id;
}

static void base_init(void)
{
	/* Id 0 is "" and is never in the hash table (callers short-cut len 0). */
	append_entry("", 0);
}

static sx_str intern_locked(const char *s, size_t len)
{
	uint32_t hash = hash_bytes(s, len);
	struct table *t = atomic_load_explicit(&table, memory_order_relaxed);
	uint64_t v;
	size_t at;
	char *copy;
	sx_str id;

	if ((!t || (atomic_load_explicit(&nids, memory_order_relaxed) + 1) * 2 > t->cap)) {
		if (grow_table() != 0)
			return SX_STR_INVALID;
		t = atomic_load_explicit(&table, memory_order_relaxed);
	}
	at = probe(t, s, len, hash);
	v = atomic_load_explicit(&t->slots[at], memory_order_relaxed);
	if (v)
		return (uint32_t)v - 1;
	if (len >= UINT32_MAX || atomic_load(&nbytes) + len + 1 > SX_INTERN_MAX_BYTES)
		return SX_STR_INVALID;
	copy = store_string(s, len);
	if (!copy)
		return SX_STR_INVALID;
	id = append_entry(copy, len);
	if (id == SX_STR_INVALID)
		return id; /* the copy stays in the arena; harmless */
	/* after append_entry's release store of nids: a reader that sees the
	 * slot sees the entry */
	atomic_store_explicit(&t->slots[at], slot_make(hash, id), memory_order_release);
	atomic_fetch_add(&nbytes, len + 1);
	return id;
}

sx_str sx_intern_n(const char *s, size_t len)
{
	sx_str id;

	pthread_once(&base_once, base_init);
	if (len == 0)
		return SX_STR_EMPTY;
	if (!s)
		return SX_STR_INVALID;
	pthread_mutex_lock(&lock);
	id = intern_locked(s, len);
	pthread_mutex_unlock(&lock);
	return id;
}

sx_str sx_intern(const char *s)
{
	return s ? sx_intern_n(s, strlen(s)) : SX_STR_EMPTY;
}

sx_str sx_intern_lookup_n(const char *s, size_t len)
{
	const struct table *t;
	uint64_t v;

	pthread_once(&base_once, base_init);
	if (len == 0)
		return SX_STR_EMPTY;
	if (!s)
		return SX_STR_INVALID;
	t = atomic_load_explicit(&table, memory_order_acquire);
	if (!t)
		return SX_STR_INVALID;
	v = atomic_load_explicit(&t->slots[probe(t, s, len, hash_bytes(s, len))],
				 memory_order_acquire);
	return v ? (uint32_t)v - 1 : SX_STR_INVALID;
}

const char *sx_str_get(sx_str id)
{
	const struct entry *e = entry_of(id);

	return e ? e->s : "";
}

size_t sx_str_len(sx_str id)
{
	const struct entry *e = entry_of(id);

	return e ? e->len : 0;
}

size_t sx_intern_count(void)
{
	pthread_once(&base_once, base_init);
	return (size_t)atomic_load(&nids);
}

size_t sx_intern_bytes(void)
{
	return atomic_load(&nbytes);
}

static void known_init(void)
{
	SX_S_CPU = sx_intern("cpu");
	SX_S_MEMORY = sx_intern("memory");
	SX_S_EPHEMERAL_STORAGE = sx_intern("ephemeral-storage");
	SX_S_PODS = sx_intern("pods");
	SX_S_HOSTNAME = sx_intern("kubernetes.io/hostname");
	SX_S_ZONE = sx_intern("topology.kubernetes.io/zone");
	SX_S_REGION = sx_intern("topology.kubernetes.io/region");
	SX_S_ZONE_BETA = sx_intern("failure-domain.beta.kubernetes.io/zone");
	SX_S_REGION_BETA = sx_intern("failure-domain.beta.kubernetes.io/region");
	SX_S_DEFAULT = sx_intern("default");
	SX_S_DEFAULT_SCHEDULER = sx_intern("default-scheduler");
	SX_S_TCP = sx_intern("TCP");
	SX_S_UDP = sx_intern("UDP");
	SX_S_SCTP = sx_intern("SCTP");
	SX_S_UNSCHEDULABLE_TAINT = sx_intern("node.kubernetes.io/unschedulable");
	SX_S_METADATA_NAME = sx_intern("metadata.name");
}

void sx_intern_init(void)
{
	pthread_once(&known_once, known_init);
}
