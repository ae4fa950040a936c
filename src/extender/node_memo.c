/* Validated Node items kept for byte comparison (node_memo.h). Copies are
 * allocated and evicted entries freed outside the lock. */
#include "schedext/node_memo.h"

#include "schedext/common.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NFIELDS 3
/* Most entries in one bucket: bounds a lookup to this many memcmp. */
#define MAX_CHAIN 8

struct memo_ent {
	struct memo_ent *chain;	      /* next of the same bucket */
	struct memo_ent *prev, *next; /* recency list, most recent first */
	uint64_t key;
	size_t len;
	int64_t off[NFIELDS][2]; /* field start and end, from the item's start */
	enum sx_json_type type[NFIELDS];
	bool escaped[NFIELDS];
	char bytes[];
};

struct sx_node_memo {
	pthread_mutex_t mu;
	struct memo_ent **buckets;
	uint32_t mask;
	uint32_t n, max_entries;
	size_t bytes, budget;
	struct memo_ent *head, *tail;
	uint64_t hits, misses;
};

struct sx_node_memo *sx_node_memo_new(size_t budget, uint32_t max_entries)
{
	struct sx_node_memo *m = calloc(1, sizeof(*m));
	uint32_t nb = 16;

	if (!m)
		return NULL;
	while (nb < max_entries && nb < (1u << 24))
		nb <<= 1;
	m->buckets = calloc(nb, sizeof(*m->buckets));
	if (!m->buckets || pthread_mutex_init(&m->mu, NULL)) {
		free(m->buckets);
		free(m);
		return NULL;
	}
	m->mask = nb - 1;
	m->budget = budget;
	m->max_entries = max_entries;
	return m;
}

void sx_node_memo_free(struct sx_node_memo *m)
{
	struct memo_ent *e, *next;

	if (!m)
		return;
	for (e = m->head; e; e = next) {
		next = e->next;
		free(e);
	}
	pthread_mutex_destroy(&m->mu);
	free(m->buckets);
	free(m);
}

/* The key of an item: the hash of its first SX_NODE_MEMO_PREFIX bytes.
 * Collisions are harmless (node_memo.h). */
static uint64_t prefix_key(const char *p)
{
	return sx_hash_bytes(p, SX_NODE_MEMO_PREFIX);
}

static struct sx_json_val field_of(const struct memo_ent *e, int i, const char *base)
{
	struct sx_json_val v = {.type = SX_JSON_NONE};

	if (e->type[i] == SX_JSON_NONE)
		return v;
	v.type = e->type[i];
	v.p = base + e->off[i][0];
	v.end = base + e->off[i][1];
	v.escaped = e->escaped[i];
	return v;
}

static void set_field(struct memo_ent *e, int i, const struct sx_json_val *v, const char *base)
{
	e->type[i] = v->type;
	e->escaped[i] = v->escaped;
	e->off[i][0] = v->type == SX_JSON_NONE ? 0 : v->p - base;
	e->off[i][1] = v->type == SX_JSON_NONE ? 0 : v->end - base;
}

/* Recency list; the lock is held. */
static void unlink_recent(struct sx_node_memo *m, struct memo_ent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		m->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		m->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_recent(struct sx_node_memo *m, struct memo_ent *e)
{
	e->next = m->head;
	e->prev = NULL;
	if (m->head)
		m->head->prev = e;
	m->head = e;
	if (!m->tail)
		m->tail = e;
}

/* The kept entry equal to the len bytes at p, or NULL; the lock is held. */
static struct memo_ent *find(struct sx_node_memo *m, uint64_t key, const char *p, size_t avail)
{
	for (struct memo_ent *e = m->buckets[key & m->mask]; e; e = e->chain)
		if (e->key == key && e->len <= avail && memcmp(e->bytes, p, e->len) == 0)
			return e;
	return NULL;
}

/* Entries of key's bucket; the lock is held. */
static unsigned chain_len(const struct sx_node_memo *m, uint64_t key)
{
	unsigned n = 0;

	for (const struct memo_ent *e = m->buckets[key & m->mask]; e; e = e->chain)
		n++;
	return n;
}

size_t sx_node_memo_match(struct sx_node_memo *m, const char *p, const char *end,
			  struct sx_node_memo_fields *f)
{
	struct memo_ent *e;
	size_t len = 0;
	uint64_t key;

	if (!m || end - p < SX_NODE_MEMO_PREFIX)
		return 0;
	key = prefix_key(p);
	pthread_mutex_lock(&m->mu);
	e = find(m, key, p, (size_t)(end - p));
	if (e) {
		unlink_recent(m, e);
		push_recent(m, e);
		f->name = field_of(e, 0, p);
		f->uid = field_of(e, 1, p);
		f->rv = field_of(e, 2, p);
		len = e->len;
		m->hits++;
	} else {
		m->misses++;
	}
	pthread_mutex_unlock(&m->mu);
	return len;
}

/* Takes the least recent entry out of the table; the lock is held. */
static struct memo_ent *evict_oldest(struct sx_node_memo *m)
{
	struct memo_ent *e = m->tail, **pp;

	for (pp = &m->buckets[e->key & m->mask]; *pp != e; pp = &(*pp)->chain)
		;
	*pp = e->chain;
	unlink_recent(m, e);
	m->n--;
	m->bytes -= e->len;
	return e;
}

void sx_node_memo_add(struct sx_node_memo *m, const char *p, size_t len,
		      const struct sx_node_memo_fields *f)
{
	struct memo_ent *e, *gone = NULL, *next;
	uint64_t key;

	if (!m || len < SX_NODE_MEMO_PREFIX || len > m->budget || !m->max_entries)
		return;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return;
	memcpy(e->bytes, p, len);
	e->len = len;
	e->key = key = prefix_key(p);
	set_field(e, 0, &f->name, p);
	set_field(e, 1, &f->uid, p);
	set_field(e, 2, &f->rv, p);
	pthread_mutex_lock(&m->mu);
	/* Kept meanwhile by another request; or a bucket already full: items
	 * sharing a prefix (a hostile body of items padded alike) would
	 * otherwise make every lookup memcmp its way down one long chain. */
	if (find(m, key, p, len) || chain_len(m, key) >= MAX_CHAIN) {
		pthread_mutex_unlock(&m->mu);
		free(e);
		return;
	}
	while (m->n && (m->n >= m->max_entries || m->bytes + len > m->budget)) {
		struct memo_ent *old = evict_oldest(m);

		old->next = gone;
		gone = old;
	}
	e->chain = m->buckets[key & m->mask];
	m->buckets[key & m->mask] = e;
	push_recent(m, e);
	m->n++;
	m->bytes += len;
	pthread_mutex_unlock(&m->mu);
	for (; gone; gone = next) {
		next = gone->next;
		free(gone);
	}
}

void sx_node_memo_stats(struct sx_node_memo *m, uint32_t *entries, uint64_t *hits, uint64_t *misses)
{
	pthread_mutex_lock(&m->mu);
	*entries = m->n;
	*hits = m->hits;
	*misses = m->misses;
	pthread_mutex_unlock(&m->mu);
}
