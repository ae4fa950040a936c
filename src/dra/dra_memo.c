/* Filter results of the allocator remembered across scheduling cycles
 * (sx_dra_allocate_feasible, dra_alloc.h). Not upstream: kube-scheduler
 * runs the allocator for every node a pod is filtered on. The decisions
 * stay the same because a result is reused only when every input the
 * search reads is provably the same:
 *
 *  - the slices, their devices and the CEL results: the memo belongs to
 *    one index (struct sx_dra_index, one slice set);
 *  - the claims to allocate, their classes and the gates: a signature of
 *    every field the search reads (sig_put_prep), compared byte for byte
 *    and numbered once per index;
 *  - the node: only indexes whose slices all name their node (no
 *    allNodes, nodeSelector or per-device selection) have a memo, so a
 *    node's devices depend on its name alone; DeviceTaintRules turn the
 *    memo off;
 *  - the devices in use of the node's pools: their exact list from both
 *    sets of the env (whole devices only: sets with shares, or a pool
 *    with more devices in use than sx__dra_pool_devs lists, are not
 *    remembered).
 *
 * Only "allocated" and "cannot allocate" are remembered (a timeout or an
 * error is not), and only feasibility: callers that need the picks (score
 * of prioritized lists, Reserve) run the search.
 *
 * The fast path: each entry keeps stamps of the two sets it was last
 * checked against (struct sx__dra_stamp). A set has a number no other
 * set has and lists the pools of its last changes, so when the sets are
 * those (the claims tracker changes its set in place while no cycle
 * holds it) and none of those changes is of the node's pool, its devices
 * in use are the same and the entry answers without looking them up
 * (still_valid).
 *
 * Ownership: the memo is part of its index and freed with it. Threads:
 * rows are read and written by concurrent Filter calls under striped
 * locks; the signature table under its own. */
#include "dra_alloc_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAYS	  2    /* claim signatures remembered per node */
#define KEY_WORDS 7    /* per pool: count, then the devices in use */
#define SIG_MAX	  32   /* signatures per index (then the oldest goes) */
#define SIG_BYTES 4096 /* a longer signature is not remembered */
#define LOCKS	  16

struct fentry {
	uint32_t sig; /* 0 = empty */
	uint8_t allocated;
	uint8_t nkey;
	uint32_t key[KEY_WORDS];
	/* the env's sets when the key was last compared (the fast path) */
	struct sx__dra_stamp stamp[2];
};

struct sig {
	uint32_t id; /* 0 = empty slot */
	uint32_t len;
	unsigned char *bytes;
};

struct sx__dra_fmemo {
	pthread_mutex_t sig_mu; /* guards next_id, next_slot, sigs */
	uint32_t next_id, next_slot;
	struct sig sigs[SIG_MAX];
	pthread_mutex_t locks[LOCKS]; /* row r: locks[r % LOCKS] */
	uint32_t nrows;
	struct fentry *rows; /* [nrows * WAYS], most recent first */
};

struct sx__dra_fmemo *sx__dra_fmemo_new(uint32_t nspans)
{
	struct sx__dra_fmemo *m = sx_calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->rows = sx_calloc((size_t)nspans * WAYS, sizeof(*m->rows));
	if (!m->rows) {
		free(m);
		return NULL;
	}
	m->nrows = nspans;
	m->next_id = 1;
	pthread_mutex_init(&m->sig_mu, NULL);
	for (int i = 0; i < LOCKS; i++)
		pthread_mutex_init(&m->locks[i], NULL);
	return m;
}

void sx__dra_fmemo_free(struct sx__dra_fmemo *m)
{
	if (!m)
		return;
	for (int i = 0; i < SIG_MAX; i++)
		free(m->sigs[i].bytes);
	for (int i = 0; i < LOCKS; i++)
		pthread_mutex_destroy(&m->locks[i]);
	pthread_mutex_destroy(&m->sig_mu);
	free(m->rows);
	free(m);
}

/* ---------- the claims' signature ---------- */

struct sigbuf {
	size_t n;
	bool over;
	unsigned char b[SIG_BYTES];
};

static void sig_put(struct sigbuf *s, const void *p, size_t n)
{
	if (s->over || n > SIG_BYTES - s->n) {
		s->over = true;
		return;
	}
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void sig_u64(struct sigbuf *s, uint64_t v)
{
	sig_put(s, &v, sizeof(v));
}

/* A string with its length; NULL differs from "". */
static void sig_str(struct sigbuf *s, const char *str)
{
	sig_u64(s, str ? strlen(str) : UINT64_MAX);
	if (str)
		sig_put(s, str, strlen(str));
}

static void sig_strs(struct sigbuf *s, char *const *v, uint32_t n)
{
	sig_u64(s, n);
	for (uint32_t i = 0; i < n; i++)
		sig_str(s, v[i]);
}

/* The fields of struct sx_dra_exact: a new one must be added here (or
 * said not to be read by the search), which the size check recalls. */
#if UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(struct sx_dra_exact) == 88, "sig_put_exact: a field was added");
_Static_assert(sizeof(struct sx_dra_toleration) == 24, "sig_put_exact: a field was added");
_Static_assert(sizeof(struct sx_dra_constraint) == 32, "sig_put_prep: a field was added");
#endif

static void sig_put_exact(struct sigbuf *s, const struct sx_dra_exact *r)
{
	sig_str(s, r->name);
	sig_str(s, r->class_name);
	sig_strs(s, r->selectors, r->nselectors);
	sig_u64(s, r->mode);
	sig_u64(s, r->bad_mode);
	sig_str(s, r->mode_name);
	sig_u64(s, (uint64_t)r->count);
	sig_u64(s, r->has_admin_access);
	sig_u64(s, r->admin_access);
	sig_u64(s, r->ntolerations);
	for (uint32_t i = 0; i < r->ntolerations; i++) {
		const struct sx_dra_toleration *t = &r->tolerations[i];

		sig_u64(s, ((uint64_t)t->key << 32) | t->value);
		sig_u64(s, ((uint64_t)t->op << 16) | ((uint64_t)t->has_effect << 8) | t->effect);
		sig_u64(s, t->has_seconds);
		sig_u64(s, (uint64_t)t->seconds);
	}
	sig_u64(s, r->has_capacity);
	sig_u64(s, r->ncapreq);
	for (uint32_t i = 0; i < r->ncapreq; i++) {
		sig_str(s, r->capreq[i].name);
		sig_u64(s, (uint64_t)r->capreq[i].q.v);
		sig_u64(s, r->capreq[i].q.binary);
	}
}

/* Everything of the prepared claims the search reads: the gates, each
 * request as prepared (subrequests, the class's selectors), the
 * constraints. Not the claims' names: they only appear in errors, which
 * are not remembered. */
static void sig_put_prep(struct sigbuf *s, const struct sx_dra_prep *p)
{
	const struct sx_dra_features *f = &p->env.features;

	sig_u64(s, (uint64_t)f->admin_access | (uint64_t)f->prioritized_list << 1 |
			   (uint64_t)f->device_taints << 2 | (uint64_t)f->partitionable << 3 |
			   (uint64_t)f->consumable << 4 | (uint64_t)f->binding << 5);
	sig_u64(s, p->a.nclaims);
	for (uint32_t ci = 0; ci < p->a.nclaims; ci++) {
		const struct sx_dra_claim_spec *spec = p->a.claims[ci].spec;

		sig_u64(s, spec->nrequests);
		for (uint32_t ri = 0; ri < spec->nrequests; ri++) {
			const struct rreq *rq = &p->a.reqs[ci][ri];

			sig_str(s, spec->requests[ri].name);
			sig_u64(s, spec->requests[ri].has_exactly);
			sig_u64(s, spec->requests[ri].nsub);
			sig_u64(s, ((uint64_t)rq->sub << 32) | rq->n);
			for (uint32_t k = 0; k < rq->n; k++) {
				const struct rdata *rd = &rq->rd[k];

				sig_u64(s, rd->parent != NULL);
				sig_put_exact(s, rd->req);
				sig_str(s, rd->cls->meta.name);
				sig_strs(s, rd->cls->u.cls.selectors, rd->cls->u.cls.nselectors);
			}
		}
		sig_u64(s, spec->nconstraints);
		for (uint32_t i = 0; i < spec->nconstraints; i++) {
			sig_strs(s, spec->constraints[i].requests, spec->constraints[i].nrequests);
			sig_str(s, spec->constraints[i].match_attribute);
			sig_str(s, spec->constraints[i].distinct_attribute);
		}
	}
}

/* The number of signature b[0..n) in m, given one when new (m->sig_mu). */
static uint32_t sig_id(struct sx__dra_fmemo *m, const unsigned char *b, size_t n)
{
	struct sig *slot;
	unsigned char *copy;

	for (int i = 0; i < SIG_MAX; i++)
		if (m->sigs[i].id && m->sigs[i].len == n && memcmp(m->sigs[i].bytes, b, n) == 0)
			return m->sigs[i].id;
	copy = malloc(n ? n : 1);
	if (!copy || m->next_id == UINT32_MAX) {
		free(copy);
		return 0;
	}
	memcpy(copy, b, n);
	slot = &m->sigs[m->next_slot];
	m->next_slot = (m->next_slot + 1) % SIG_MAX;
	free(slot->bytes);
	/* a new number: rows of the signature it replaces never match again */
	*slot = (struct sig){m->next_id++, (uint32_t)n, copy};
	return slot->id;
}

void sx_dra_prep_memo(struct sx_dra_prep *p)
{
	struct sx__dra_fmemo *m = p->env.index ? p->env.index->fmemo : NULL;
	struct sigbuf s; /* b is written before it is read */

	s.n = 0;
	s.over = false;
	p->memo_sig = 0;
	if (!m || p->err_claim < p->a.nclaims || p->env.ntaint_rules ||
	    sx_dra_allocated_any_shared(p->env.allocated) ||
	    sx_dra_allocated_any_shared(p->env.allocated2))
		return;
	sig_put_prep(&s, p);
	if (s.over)
		return;
	pthread_mutex_lock(&m->sig_mu);
	p->memo_sig = sig_id(m, s.b, s.n);
	pthread_mutex_unlock(&m->sig_mu);
}

/* ---------- the node's devices in use ---------- */

static void sort_u32(uint32_t *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
			uint32_t t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
}

/* Appends the devices in use of pool (driver, pool) in both sets (sorted,
 * each once) to key; false when they cannot be listed or do not fit. */
static bool pool_key(const struct sx_dra_alloc_env *env, sx_str driver, sx_str pool, uint32_t *key,
		     uint8_t *nkey)
{
	const struct sx_dra_allocated *set[2] = {env->allocated, env->allocated2};
	uint32_t devs[2 * SX__DRA_POOL_DEVS], n = 0, u = 0;

	for (int i = 0; i < 2; i++) {
		const struct sx__dra_pool_devs *pd = sx__dra_allocated_pool(set[i], driver, pool);

		if (!pd)
			continue;
		if (pd->n > SX__DRA_POOL_DEVS)
			return false;
		for (uint32_t k = 0; k < pd->n; k++)
			devs[n++] = pd->dev[k];
	}
	if (n > 1)
		sort_u32(devs, n);
	for (uint32_t k = 0; k < n; k++)
		if (u == 0 || devs[k] != devs[u - 1])
			devs[u++] = devs[k];
	if (*nkey + 1 + u > KEY_WORDS)
		return false;
	key[(*nkey)++] = u;
	for (uint32_t k = 0; k < u; k++)
		key[(*nkey)++] = devs[k];
	return true;
}

/* The key of the devices in use of the pools of node span sp (pools in
 * the order of its slices); false when it cannot be made. The prep has
 * no shares in its sets (sx_dra_prep_memo). */
static bool node_key(const struct sx_dra_prep *p, const struct dra_node_span *sp, uint32_t *key,
		     uint8_t *nkey)
{
	const struct sx_dra_index *ix = p->env.index;

	*nkey = 0;
	if (sp->one_pool)
		return pool_key(&p->env, sp->driver, sp->pool, key, nkey);
	for (uint32_t i = 0; i < sp->n; i++) {
		const struct dra_slice_meta *sm = &ix->meta[ix->by_node[sp->first + i].slice];
		bool seen = false;

		for (uint32_t k = 0; k < i && !seen; k++)
			seen = ix->meta[ix->by_node[sp->first + k].slice].pool_ix == sm->pool_ix;
		if (!seen && !pool_key(&p->env, sm->driver, sm->pool, key, nkey))
			return false;
	}
	return true;
}

/* ---------- rows ---------- */

static bool same_key(const struct fentry *e, const uint32_t *key, uint8_t nkey)
{
	bool same = e->nkey == nkey;

	for (uint8_t k = 0; same && k < nkey; k++)
		same = e->key[k] == key[k];
	return same;
}

/* The fast path: the entry's key was compared when the env's sets were
 * as its stamps say, and neither set has changed the node's one pool
 * since, so the key is still the same. */
static bool still_valid(const struct sx_dra_prep *p, const struct dra_node_span *sp,
			const struct fentry *e)
{
	return sp->one_pool &&
	       sx__dra_allocated_unchanged(p->env.allocated, e->stamp[0], sp->driver, sp->pool) &&
	       sx__dra_allocated_unchanged(p->env.allocated2, e->stamp[1], sp->driver, sp->pool);
}

/* Whether row has the result for the prep's signature with its sets as
 * they are: then *rc is it, and the entry's stamps are renewed (the
 * fast path then has fewer changes to look through next time). key NULL:
 * only the fast path (still_valid); else the key is compared. */
static bool row_get(struct sx__dra_fmemo *m, const struct sx_dra_prep *p,
		    const struct dra_node_span *sp, const uint32_t *key, uint8_t nkey, int *rc)
{
	struct fentry *e = &m->rows[(size_t)sp->memo * WAYS];
	bool found = false;

	pthread_mutex_lock(&m->locks[sp->memo % LOCKS]);
	for (int w = 0; w < WAYS && !found; w++) {
		if (e[w].sig != p->memo_sig)
			continue;
		found = key ? same_key(&e[w], key, nkey) : still_valid(p, sp, &e[w]);
		if (!found)
			continue;
		*rc = e[w].allocated ? SX_DRA_ALLOCATED : SX_DRA_UNSATISFIED;
		e[w].stamp[0] = sx__dra_allocated_stamp(p->env.allocated);
		e[w].stamp[1] = sx__dra_allocated_stamp(p->env.allocated2);
	}
	pthread_mutex_unlock(&m->locks[sp->memo % LOCKS]);
	return found;
}

/* Stores a result: over the signature's entry, else first (the others
 * move down, the last one goes). */
static void row_put(struct sx__dra_fmemo *m, const struct sx_dra_prep *p,
		    const struct dra_node_span *sp, const uint32_t *key, uint8_t nkey,
		    bool allocated)
{
	struct fentry *e = &m->rows[(size_t)sp->memo * WAYS];
	int w = 0;

	pthread_mutex_lock(&m->locks[sp->memo % LOCKS]);
	while (w < WAYS - 1 && e[w].sig != p->memo_sig)
		w++;
	memmove(&e[1], &e[0], (size_t)w * sizeof(*e));
	e[0].sig = p->memo_sig;
	e[0].allocated = allocated;
	e[0].nkey = nkey;
	for (uint8_t k = 0; k < nkey; k++)
		e[0].key[k] = key[k];
	e[0].stamp[0] = sx__dra_allocated_stamp(p->env.allocated);
	e[0].stamp[1] = sx__dra_allocated_stamp(p->env.allocated2);
	pthread_mutex_unlock(&m->locks[sp->memo % LOCKS]);
}

/* ---------- entry ---------- */

static int search(const struct sx_dra_prep *p, const struct sx_node *node, uint64_t timeout_ns,
		  char *err, size_t errlen)
{
	struct sx_dra_claim_out one,
		*out = p->a.nclaims <= 1 ? &one : calloc(p->a.nclaims, sizeof(*out));
	int rc;

	if (!out) {
		snprintf(err, errlen, "out of memory");
		return SX_DRA_FATAL;
	}
	rc = sx_dra_allocate_prepared(p, node, timeout_ns, false, out, err, errlen);
	if (rc == SX_DRA_ALLOCATED)
		for (uint32_t ci = 0; ci < p->a.nclaims; ci++)
			sx_dra_claim_out_clear(&out[ci]);
	if (out != &one)
		free(out);
	return rc;
}

int sx_dra_allocate_feasible(const struct sx_dra_prep *p, const struct sx_node *node,
			     uint64_t timeout_ns, char *err, size_t errlen)
{
	struct sx__dra_fmemo *m = p->env.index ? p->env.index->fmemo : NULL;
	const struct dra_node_span *sp = NULL;
	uint32_t key[KEY_WORDS];
	uint8_t nkey = 0;
	bool memo;
	int rc;

	if (m && p->memo_sig && node)
		sp = sx__dra_node_span(p->env.index, node->name_id);
	memo = sp && !sp->no_memo;
	if (memo && row_get(m, p, sp, NULL, 0, &rc)) {
		err[0] = '\0';
		return rc;
	}
	memo = memo && node_key(p, sp, key, &nkey);
	if (memo && row_get(m, p, sp, key, nkey, &rc)) {
		err[0] = '\0';
		return rc;
	}
	rc = search(p, node, timeout_ns, err, errlen);
	if (memo && (rc == SX_DRA_ALLOCATED || rc == SX_DRA_UNSATISFIED))
		row_put(m, p, sp, key, nkey, rc == SX_DRA_ALLOCATED);
	return rc;
}
