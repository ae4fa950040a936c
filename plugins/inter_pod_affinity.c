/* InterPodAffinity — PreFilter (+AddPod/RemovePod), Filter, PreScore, Score,
 * NormalizeScore (upstream interpodaffinity/filtering.go, scoring.go).
 *
 * PreFilter counts, per topology pair (key, value), the existing pods whose
 * required anti-affinity matches the incoming pod, and the existing pods
 * matching the incoming pod's required affinity / anti-affinity terms, so
 * that Filter is O(terms + node labels) per node. PreScore folds every
 * preferred term (the pod's and the existing pods') into one score per
 * topology pair; Score sums the pairs of the node.
 *
 * matchLabelKeys / mismatchLabelKeys are applied at match time (`key in
 * (owner's value)` / `key notin (owner's value)` for keys the term's owner
 * has), which is what the API server merges into labelSelector; doing it
 * again on an already merged selector is harmless.
 *
 * The node walks of PreFilter and PreScore are served from a process-wide
 * memo of each node's contributions keyed by NodeInfo generation
 * ("per-node contribution memo" below) when they cover many nodes, so a
 * cycle re-evaluates only the nodes that changed; it has its own mutex
 * and a bounded size.
 */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/plugin.h"
#include "schedext/selector.h"
#include "pod_hints.h"
#include "schedext/status.h"

#include "topology_map.h"
#include "schedext/plugin_args.h"
#include "slots.h"
#include "state_pair.h"

#define REASON_AFFINITY	     "node(s) didn't match pod affinity rules"
#define REASON_ANTI	     "node(s) didn't match pod anti-affinity rules"
#define REASON_EXISTING_ANTI "node(s) didn't satisfy existing pods anti-affinity rules"
#define NAME		     "InterPodAffinity"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_affinity =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_AFFINITY);
static struct sx_status reject_anti_affinity =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_ANTI);
static struct sx_status reject_existing_anti_affinity =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_EXISTING_ANTI);

struct memo_set;

struct args {
	int32_t hard_pod_affinity_weight;
	bool ignore_preferred_of_existing;
	struct memo_set *memo; /* this instance's count memos (owned) */
};

/* One term of the incoming pod with its namespace selector resolved into
 * the namespace set (as upstream does through the Namespace lister). */
struct term {
	const struct sx_pod_affinity_term *t; /* borrowed from the incoming pod */
	int32_t weight;			      /* preferred terms; 0 for required */
	bool all_ns;			      /* namespaceSelector: {} */
	uint32_t nns;
	sx_str *ns; /* owned */
};

struct terms {
	uint32_t n;
	struct term *v;
};

/* PreFilter result; AddPod/RemovePod mutate the counters of a clone. */
struct filter_state {
	struct memo_set *memo;		   /* the instance's memos (borrowed) */
	const struct sx_pod *pod;	   /* the incoming pod (borrowed) */
	const struct sx_labels *ns_labels; /* its Namespace's labels; NULL = unknown */
	struct terms aff, anti;		   /* its required terms */
	struct tmap existing_anti;	   /* pairs of existing pods' anti terms matching pod */
	struct tmap affinity;		   /* pairs of pods matching all affinity terms */
	struct tmap anti_counts;	   /* pairs of pods matching an anti term */
};

/* PreScore result. */
struct score_state {
	struct tmap scores; /* topology pair -> summed weight */
	uint32_t nkeys;	    /* distinct topology keys in scores */
	sx_str *keys;
};

static const struct sx_labels no_labels = {0, NULL};

/* ---------- args ---------- */

static const struct sx_arg ipa_args[] = {
	{.name = "hardPodAffinityWeight",
	 .type = SX_ARG_INT,
	 .offset = offsetof(struct args, hard_pod_affinity_weight),
	 .def = 1,
	 .min = 0,
	 .max = 100,
	 .type_desc = "an integer",
	 .range_desc = "[0-100]"},
	{.name = "ignorePreferredTermsOfExistingPods",
	 .type = SX_ARG_BOOL,
	 .offset = offsetof(struct args, ignore_preferred_of_existing),
	 .type_desc = "a boolean"},
};

static struct memo_set *memo_set_new(void);
static void memo_set_free(struct memo_set *ms);

static void *init_inter_pod_affinity(const cJSON *json, struct sx_handle *h, struct sx_error *err)
{
	struct args *a = sx_calloc(1, sizeof(*a));
	struct sx_arg_errors e = {0};

	if (!a) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (sx_args_read(json, ipa_args, SX_ARRAY_SIZE(ipa_args), a, &e, err) < 0 ||
	    sx_arg_errors_finish(&e, err) < 0) {
		free(a);
		return NULL;
	}
	a->memo = memo_set_new();
	if (!a->memo) {
		free(a);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	return a;
}

static void destroy_inter_pod_affinity(void *self)
{
	struct args *a = self;

	if (a)
		memo_set_free(a->memo);
	free(a);
}

static void write_args_inter_pod_affinity(const void *self, struct sx_jw *w)
{
	const struct args *a = self;

	sx_jw_kint(w, "hardPodAffinityWeight", a->hard_pod_affinity_weight);
	sx_jw_kbool(w, "ignorePreferredTermsOfExistingPods", a->ignore_preferred_of_existing);
}

/* ---------- term matching ---------- */

static bool has_label_value(const struct sx_labels *labels, sx_str key, sx_str value)
{
	sx_str v;
	return sx_labels_get(labels, key, &v) && v == value;
}

/* labelSelector of t, with matchLabelKeys/mismatchLabelKeys taken from the
 * term's owner, matches target's labels. A nil selector matches nothing
 * (and the API server does not merge label keys into it). */
static bool term_selects(const struct sx_pod_affinity_term *t, const struct sx_labels *owner,
			 const struct sx_labels *target)
{
	sx_str v;
	if (!sx_selector_matches(t->selector, target))
		return false;
	for (uint32_t i = 0; i < t->nmatch_label_keys; i++)
		if (sx_labels_get(owner, t->match_label_keys[i], &v) &&
		    !has_label_value(target, t->match_label_keys[i], v))
			return false;
	for (uint32_t i = 0; i < t->nmismatch_label_keys; i++)
		if (sx_labels_get(owner, t->mismatch_label_keys[i], &v) &&
		    has_label_value(target, t->mismatch_label_keys[i], v))
			return false;
	return true;
}

/* An incoming-pod term (namespaces resolved) matches target. */
static bool term_matches(const struct term *tm, const struct sx_pod *owner,
			 const struct sx_pod *target)
{
	bool ns_ok = tm->all_ns;
	for (uint32_t i = 0; !ns_ok && i < tm->nns; i++)
		ns_ok = tm->ns[i] == target->meta.ns;
	return ns_ok && term_selects(tm->t, &owner->meta.labels, &target->meta.labels);
}

/* An existing pod's term matches the incoming pod, whose namespace has the
 * labels ns_labels (NULL = unknown namespace: empty label set). */
static bool existing_term_matches(const struct sx_pod_affinity_term *t, const struct sx_pod *owner,
				  const struct sx_pod *target, const struct sx_labels *ns_labels)
{
	bool ns_ok = false;
	if (t->nnamespaces == 0 && !t->ns_selector)
		ns_ok = target->meta.ns == owner->meta.ns;
	for (uint32_t i = 0; !ns_ok && i < t->nnamespaces; i++)
		ns_ok = t->namespaces[i] == target->meta.ns;
	if (!ns_ok && t->ns_selector)
		ns_ok = sx_selector_matches(t->ns_selector, ns_labels ? ns_labels : &no_labels);
	return ns_ok && term_selects(t, &owner->meta.labels, &target->meta.labels);
}

static bool matches_all_terms(const struct terms *ts, const struct sx_pod *owner,
			      const struct sx_pod *target)
{
	if (ts->n == 0)
		return false;
	for (uint32_t i = 0; i < ts->n; i++)
		if (!term_matches(&ts->v[i], owner, target))
			return false;
	return true;
}

/* ---------- incoming pod terms ---------- */

static void terms_free(struct terms *ts)
{
	for (uint32_t i = 0; i < ts->n; i++)
		free(ts->v[i].ns);
	free(ts->v);
	ts->v = NULL;
	ts->n = 0;
}

/* Namespace set of t for owner: the listed namespaces plus those whose
 * labels match namespaceSelector; only the owner's when neither is set. */
static int resolve_namespaces(struct term *tm, const struct sx_pod *owner,
			      const struct sx_snapshot *snap)
{
	const struct sx_pod_affinity_term *t = tm->t;
	if (t->ns_selector && t->ns_selector->nreqs == 0)
		tm->all_ns = true;
	uint32_t cap = t->nnamespaces + 1;
	if (t->ns_selector && !tm->all_ns)
		cap += snap->nnamespaces;
	tm->ns = malloc(sizeof(*tm->ns) * cap);
	if (!tm->ns)
		return SX_ENOMEM;
	if (t->nnamespaces == 0 && !t->ns_selector)
		tm->ns[tm->nns++] = owner->meta.ns;
	for (uint32_t i = 0; i < t->nnamespaces; i++)
		tm->ns[tm->nns++] = t->namespaces[i];
	if (!t->ns_selector || tm->all_ns)
		return 0;
	for (uint32_t i = 0; i < snap->nnamespaces; i++) {
		const struct sx_generic *ns = snap->namespaces[i];
		if (!sx_selector_matches(t->ns_selector, &ns->meta.labels))
			continue;
		sx_str id = sx_intern_lookup_n(ns->meta.name, strlen(ns->meta.name));
		if (id != SX_STR_INVALID)
			tm->ns[tm->nns++] = id;
	}
	return 0;
}

static int terms_build(struct terms *ts, const struct sx_pod *pod, const struct sx_snapshot *snap,
		       const struct sx_pod_affinity_term *req, uint32_t nreq,
		       const struct sx_weighted_pod_affinity_term *pref, uint32_t npref)
{
	uint32_t n = nreq + npref;
	ts->n = 0;
	ts->v = n ? sx_calloc(n, sizeof(*ts->v)) : NULL;
	if (n && !ts->v)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct term *tm = &ts->v[ts->n++];
		tm->t = i < nreq ? &req[i] : &pref[i - nreq].term;
		tm->weight = i < nreq ? 0 : pref[i - nreq].weight;
		if (resolve_namespaces(tm, pod, snap) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

static int terms_clone(struct terms *dst, const struct terms *src)
{
	dst->n = 0;
	dst->v = src->n ? sx_calloc(src->n, sizeof(*dst->v)) : NULL;
	if (src->n && !dst->v)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < src->n; i++) {
		struct term *d = &dst->v[dst->n++];
		*d = src->v[i];
		d->ns = malloc(sizeof(*d->ns) * (src->v[i].nns + 1));
		if (!d->ns)
			return SX_ENOMEM;
		memcpy(d->ns, src->v[i].ns, sizeof(*d->ns) * src->v[i].nns);
	}
	return 0;
}

/* ---------- per-node contribution memo ----------
 * PreFilter's three counters and PreScore's scores are sums over nodes of
 * what each node's pods contribute, and from one cycle to the next almost
 * every NodeInfo is the same object. A NodeInfo's generation identifies
 * its content process-wide (every change takes a new one from one global
 * counter; a clone keeps its original's, with the same content), so a memo
 * entry keeps, for one incoming-pod signature (namespace, labels, its
 * Namespace's labels, its terms with their resolved namespace sets, the
 * hard weight), each snapshot index's generation and contributions
 * (map, topology pair, delta) and the sums over all nodes; a cycle
 * recomputes only the nodes whose generation differs. A node is computed
 * by the same per-pod code as the walks below, into scratch maps; the
 * namespace pre-checks only ever skip work whose result is zero, so the
 * sums equal the walks' maps at every key (keys whose sum fell back to 0
 * stay, with 0: Filter and Score only look keys up, and `live` counts
 * non-zero values). PreScore's topology keys are those recorded by at
 * least one contribution, counted per key.
 *
 * Threads: cycles of any thread (extender requests run them concurrently);
 * one mutex, held for one walk over the snapshot's nodes. Memory: at most
 * MEMO_ENTRIES entries (least recently used replaced), each 16 bytes per
 * node plus its contributions (compacted when half is garbage), its sums
 * and a reference on the pod whose terms are its key. */
#define MEMO_ENTRIES 8
#define MEMO_MAPS    4 /* existing_anti, affinity, anti_counts, scores */
#define MAP_SCORES   3

struct contrib {
	uint64_t pair;
	int64_t delta;
	uint32_t map;
};

/* What an entry sums, and so what its key is made of. */
enum memo_kind {
	MK_TERMS,    /* PreFilter: the pod's required terms against existing pods
		      * (key: the terms, and the pod's labels when a term has
		      * match/mismatchLabelKeys) */
	MK_EXISTING, /* PreFilter: existing pods' required anti terms against
		      * the pod (key: its namespace, labels, Namespace's labels) */
	MK_SCORE,    /* PreScore (key: all of the above, the hard weight) */
};

struct memo_key {
	enum memo_kind kind;
	const struct sx_pod *pod; /* reference held: its labels and terms */
	bool has_ns_labels;
	struct sx_labels ns_labels; /* items owned */
	struct terms a, b;	    /* required aff/anti, or preferred aff/anti */
	int64_t hard;
	bool all_pods; /* PreScore over every pod, not only affinity pods */
};

struct memo {
	uint64_t last_use; /* 0: empty */
	struct memo_key key;
	uint32_t cap, used;
	uint64_t *gen;	     /* [cap]; 0: nothing counted */
	uint32_t *off, *len; /* [cap]: the node's contributions in pool */
	struct contrib *pool;
	uint32_t npool, cap_pool, live_pool;
	struct tmap sums[MEMO_MAPS];
	struct tmap keyrefs; /* topology key -> contributions to scores under it */
};

/* An entry is made for a key only when the same key hash is among the
 * last MEMO_SEEN misses: a pod whose key is its own (a StatefulSet pod's
 * unique label in an MK_EXISTING key) costs a walk, not a walk and an
 * entry. */
#define MEMO_SEEN 16

/* The memos of one plugin instance, shared by its concurrent cycles. */
struct memo_set {
	pthread_mutex_t mu;
	uint64_t clock;
	struct memo e[MEMO_ENTRIES];
	uint64_t seen[MEMO_SEEN];
	uint32_t seen_at;
};

static void memo_clear(struct memo *m)
{
	sx_pod_unref((struct sx_pod *)m->key.pod);
	free(m->key.ns_labels.items);
	terms_free(&m->key.a);
	terms_free(&m->key.b);
	for (uint32_t i = 0; i < MEMO_MAPS; i++)
		tmap_free(&m->sums[i]);
	tmap_free(&m->keyrefs);
	free(m->gen);
	free(m->off);
	free(m->len);
	free(m->pool);
	memset(m, 0, sizeof(*m));
}

static struct memo_set *memo_set_new(void)
{
	struct memo_set *ms = sx_calloc(1, sizeof(*ms));

	if (ms && pthread_mutex_init(&ms->mu, NULL) != 0) {
		free(ms);
		ms = NULL;
	}
	return ms;
}

static void memo_set_free(struct memo_set *ms)
{
	if (!ms)
		return;
	for (uint32_t j = 0; j < MEMO_ENTRIES; j++)
		memo_clear(&ms->e[j]);
	pthread_mutex_destroy(&ms->mu);
	free(ms);
}

static bool strs_equal(const sx_str *a, uint32_t na, const sx_str *b, uint32_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, sizeof(*a) * na) == 0);
}

static bool selector_equal(const struct sx_label_selector *a, const struct sx_label_selector *b)
{
	if (!a || !b)
		return a == b;
	if (a->nreqs != b->nreqs)
		return false;
	for (uint32_t i = 0; i < a->nreqs; i++) {
		const struct sx_requirement *x = &a->reqs[i], *y = &b->reqs[i];
		if (x->key != y->key || x->op != y->op ||
		    !strs_equal(x->values, x->nvalues, y->values, y->nvalues))
			return false;
	}
	return true;
}

static bool labels_equal(const struct sx_labels *a, const struct sx_labels *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->items[i].key != b->items[i].key || a->items[i].value != b->items[i].value)
			return false;
	return true;
}

static bool terms_equal(const struct terms *x, const struct terms *y)
{
	if (x->n != y->n)
		return false;
	for (uint32_t i = 0; i < x->n; i++) {
		const struct term *a = &x->v[i], *b = &y->v[i];
		const struct sx_pod_affinity_term *s = a->t, *t = b->t;
		if (a->weight != b->weight || a->all_ns != b->all_ns ||
		    !strs_equal(a->ns, a->nns, b->ns, b->nns) ||
		    s->topology_key != t->topology_key ||
		    !selector_equal(s->selector, t->selector) ||
		    !selector_equal(s->ns_selector, t->ns_selector) ||
		    !strs_equal(s->namespaces, s->nnamespaces, t->namespaces, t->nnamespaces) ||
		    !strs_equal(s->match_label_keys, s->nmatch_label_keys, t->match_label_keys,
				t->nmatch_label_keys) ||
		    !strs_equal(s->mismatch_label_keys, s->nmismatch_label_keys,
				t->mismatch_label_keys, t->nmismatch_label_keys))
			return false;
	}
	return true;
}

static bool terms_use_labels(const struct terms *ts)
{
	for (uint32_t i = 0; i < ts->n; i++)
		if (ts->v[i].t->nmatch_label_keys || ts->v[i].t->nmismatch_label_keys)
			return true;
	return false;
}

/* Does the key depend on the pod's labels (beyond its terms)? */
static bool key_uses_labels(const struct memo_key *k)
{
	return k->kind != MK_TERMS || terms_use_labels(&k->a) || terms_use_labels(&k->b);
}

static bool memo_key_equal(const struct memo_key *k, const struct memo_key *q)
{
	if (k->kind != q->kind || k->hard != q->hard || k->all_pods != q->all_pods)
		return false;
	if (k->kind != MK_TERMS &&
	    (k->pod->meta.ns != q->pod->meta.ns || k->has_ns_labels != q->has_ns_labels ||
	     (k->has_ns_labels && !labels_equal(&k->ns_labels, &q->ns_labels))))
		return false;
	if (k->kind != MK_EXISTING && (!terms_equal(&k->a, &q->a) || !terms_equal(&k->b, &q->b)))
		return false;
	return !key_uses_labels(k) || labels_equal(&k->pod->meta.labels, &q->pod->meta.labels);
}

static uint64_t hash_mix(uint64_t h, uint64_t v)
{
	return tmap_hash(h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2)));
}

/* A hash of what memo_key_equal compares (collisions only cost an entry). */
static uint64_t memo_key_hash(const struct memo_key *q)
{
	uint64_t h = hash_mix(q->kind, (uint64_t)q->hard << 1 | q->all_pods);
	if (q->kind != MK_TERMS) {
		h = hash_mix(h, q->pod->meta.ns);
		for (uint32_t i = 0; q->has_ns_labels && i < q->ns_labels.n; i++)
			h = hash_mix(h, tmap_pair(q->ns_labels.items[i].key,
						  q->ns_labels.items[i].value));
	}
	for (uint32_t t = 0; q->kind != MK_EXISTING && t < 2; t++) {
		const struct terms *ts = t ? &q->b : &q->a;
		for (uint32_t i = 0; i < ts->n; i++) {
			const struct sx_pod_affinity_term *pt = ts->v[i].t;
			h = hash_mix(h, tmap_pair(pt->topology_key, (sx_str)ts->v[i].weight));
			for (uint32_t j = 0; pt->selector && j < pt->selector->nreqs; j++)
				h = hash_mix(h, tmap_pair(pt->selector->reqs[j].key,
							  pt->selector->reqs[j].nvalues
								  ? pt->selector->reqs[j].values[0]
								  : 0));
			for (uint32_t j = 0; j < ts->v[i].nns; j++)
				h = hash_mix(h, ts->v[i].ns[j]);
		}
	}
	if (key_uses_labels(q))
		for (uint32_t i = 0; i < q->pod->meta.labels.n; i++)
			h = hash_mix(h, tmap_pair(q->pod->meta.labels.items[i].key,
						  q->pod->meta.labels.items[i].value));
	return h;
}

/* Makes m the (empty) memo of q, copying what q borrows. */
static int memo_init(struct memo *m, const struct memo_key *q)
{
	memo_clear(m);
	m->key = (struct memo_key){.kind = q->kind,
				   .has_ns_labels = q->has_ns_labels,
				   .hard = q->hard,
				   .all_pods = q->all_pods};
	m->key.pod = sx_pod_ref(q->pod);
	if (q->has_ns_labels && q->ns_labels.n) {
		m->key.ns_labels.items = malloc(sizeof(struct sx_label) * q->ns_labels.n);
		if (!m->key.ns_labels.items)
			goto out_clear;
		memcpy(m->key.ns_labels.items, q->ns_labels.items,
		       sizeof(struct sx_label) * q->ns_labels.n);
		m->key.ns_labels.n = q->ns_labels.n;
	}
	if (terms_clone(&m->key.a, &q->a) < 0 || terms_clone(&m->key.b, &q->b) < 0)
		goto out_clear;
	m->last_use = 1;
	return 0;
out_clear:
	memo_clear(m);
	return SX_ENOMEM;
}

static int memo_grow(struct memo *m, uint32_t n)
{
	uint32_t cap = m->cap ? m->cap : 64;
	while (cap < n)
		cap *= 2;
	uint64_t *gen = realloc(m->gen, sizeof(*gen) * cap);
	if (gen)
		m->gen = gen;
	uint32_t *off = realloc(m->off, sizeof(*off) * cap);
	if (off)
		m->off = off;
	uint32_t *len = realloc(m->len, sizeof(*len) * cap);
	if (len)
		m->len = len;
	if (!gen || !off || !len)
		return SX_ENOMEM;
	memset(m->gen + m->cap, 0, sizeof(*gen) * (cap - m->cap));
	m->cap = cap;
	return 0;
}

/* Adds (mult 1) or takes out (-1) contribution c from the sums. */
static int memo_apply(struct memo *m, const struct contrib *c, int64_t mult)
{
	if (tmap_add(&m->sums[c->map], c->pair, c->delta * mult) < 0)
		return SX_ENOMEM;
	if (c->map == MAP_SCORES && tmap_add(&m->keyrefs, c->pair >> 32, mult) < 0)
		return SX_ENOMEM;
	return 0;
}

/* Takes node slot k's contributions out of the sums. */
static int memo_drop(struct memo *m, uint32_t k)
{
	if (m->gen[k] == 0)
		return 0;
	for (uint32_t j = 0; j < m->len[k]; j++)
		if (memo_apply(m, &m->pool[m->off[k] + j], -1) < 0)
			return SX_ENOMEM;
	m->live_pool -= m->len[k];
	m->gen[k] = 0;
	m->len[k] = 0;
	return 0;
}

/* Appends the used slots of scratch map `map` (zero values too: a key
 * recorded) as contributions, and empties it. */
static int memo_take(struct memo *m, struct tmap *scratch, uint32_t map)
{
	for (uint32_t i = 0; i < scratch->cap; i++) {
		if (!scratch->used[i])
			continue;
		if (m->npool == m->cap_pool) {
			uint32_t cap = m->cap_pool ? m->cap_pool * 2 : 1024;
			struct contrib *p = cap ? realloc(m->pool, sizeof(*p) * cap) : NULL;
			if (!p)
				return SX_ENOMEM;
			m->pool = p;
			m->cap_pool = cap;
		}
		m->pool[m->npool++] = (struct contrib){scratch->keys[i], scratch->vals[i], map};
	}
	if (scratch->cap)
		memset(scratch->used, 0, scratch->cap);
	scratch->n = scratch->live = 0;
	return 0;
}

/* Moves every node's contributions to the front of the pool, in node order. */
static int memo_compact(struct memo *m)
{
	struct contrib *p = malloc(sizeof(*p) * (m->live_pool + 1024));
	uint32_t at = 0;
	if (!p)
		return SX_ENOMEM;
	for (uint32_t k = 0; k < m->used; k++) {
		if (m->gen[k] == 0)
			continue;
		memcpy(p + at, m->pool + m->off[k], sizeof(*p) * m->len[k]);
		m->off[k] = at;
		at += m->len[k];
	}
	free(m->pool);
	m->pool = p;
	m->npool = at;
	m->cap_pool = m->live_pool + 1024;
	return 0;
}

/* What one node contributes, into the scratch maps (the walks' per-node
 * bodies, below). */
typedef int (*memo_node_fn)(void *ctx, const struct sx_node_info *ni, struct tmap *scratch);

/* Brings m up to snap and leaves the sums in m->sums. */
static int memo_sync(struct memo *m, const struct sx_snapshot *snap, memo_node_fn fn, void *ctx)
{
	struct tmap scratch[MEMO_MAPS] = {{0}};
	uint32_t n = snap->nnodes;
	int rc = 0;
	if (n > m->cap && memo_grow(m, n) < 0)
		return SX_ENOMEM;
	for (uint32_t k = n; k < m->used; k++)
		if (memo_drop(m, k) < 0)
			return SX_ENOMEM;
	if (m->used > n)
		m->used = n;
	for (uint32_t k = 0; k < n && rc == 0; k++) {
		const struct sx_node_info *ni = snap->nodes[k];
		if (k + 8 < n)
			__builtin_prefetch(snap->nodes[k + 8]);
		if (m->gen[k] == ni->generation)
			continue;
		if (k >= m->used) {
			m->gen[k] = 0;
			m->used = k + 1;
		}
		rc = memo_drop(m, k);
		if (rc == 0)
			rc = fn(ctx, ni, scratch);
		uint32_t start = m->npool;
		for (uint32_t i = 0; rc == 0 && i < MEMO_MAPS; i++)
			rc = memo_take(m, &scratch[i], i);
		for (uint32_t j = start; rc == 0 && j < m->npool; j++)
			rc = memo_apply(m, &m->pool[j], 1);
		if (rc == 0) {
			m->off[k] = start;
			m->len[k] = m->npool - start;
			m->live_pool += m->len[k];
			m->gen[k] = ni->generation;
		}
	}
	if (n > m->used)
		m->used = n;
	for (uint32_t i = 0; i < MEMO_MAPS; i++)
		tmap_free(&scratch[i]);
	if (rc == 0 && m->npool > 2 * m->live_pool + 4096)
		rc = memo_compact(m);
	return rc;
}

/* Runs q's memo over snap and hands it to `out` under the lock; 1 when the
 * memo could not be used (the caller walks the nodes itself), 0 or
 * SX_ENOMEM from out. */
static int memo_run(struct memo_set *ms, const struct memo_key *q, const struct sx_snapshot *snap,
		    memo_node_fn fn, void *ctx, int (*out)(void *ctx, const struct memo *m))
{
	struct memo *m = NULL, *lru;
	int rc;

	if (!ms)
		return 1; /* an instance without memos (tests): walk */
	lru = &ms->e[0];
	pthread_mutex_lock(&ms->mu);
	for (uint32_t j = 0; j < MEMO_ENTRIES && !m; j++) {
		if (ms->e[j].last_use && memo_key_equal(&ms->e[j].key, q))
			m = &ms->e[j];
		else if (ms->e[j].last_use < lru->last_use)
			lru = &ms->e[j];
	}
	if (!m) {
		uint64_t h = memo_key_hash(q);
		bool seen = false;
		for (uint32_t j = 0; j < MEMO_SEEN && !seen; j++)
			seen = ms->seen[j] == h;
		if (!seen)
			ms->seen[ms->seen_at++ % MEMO_SEEN] = h;
		else if (memo_init(lru, q) == 0)
			m = lru;
	}
	rc = m ? 0 : 1;
	if (m) {
		m->last_use = ++ms->clock;
		rc = memo_sync(m, snap, fn, ctx);
		if (rc < 0) {
			memo_clear(m);
			rc = 1;
		} else {
			rc = out(ctx, m);
		}
	}
	pthread_mutex_unlock(&ms->mu);
	return rc;
}

/* ---------- state ---------- */

static void filter_state_free(void *p)
{
	struct filter_state *f = p;

	if (!f)
		return;
	terms_free(&f->aff);
	terms_free(&f->anti);
	tmap_free(&f->existing_anti);
	tmap_free(&f->affinity);
	tmap_free(&f->anti_counts);
	free(f);
}

static void score_state_free(void *p)
{
	struct score_state *s = p;

	if (!s)
		return;
	tmap_free(&s->scores);
	free(s->keys);
	free(s);
}

static void *filter_state_clone(const void *p)
{
	const struct filter_state *f = p;
	struct filter_state *c = sx_calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pod = f->pod;
	c->ns_labels = f->ns_labels;
	if (terms_clone(&c->aff, &f->aff) < 0 || terms_clone(&c->anti, &f->anti) < 0 ||
	    tmap_clone(&c->existing_anti, &f->existing_anti) < 0 ||
	    tmap_clone(&c->affinity, &f->affinity) < 0 ||
	    tmap_clone(&c->anti_counts, &f->anti_counts) < 0) {
		filter_state_free(c);
		return NULL;
	}
	return c;
}

static void *score_state_clone(const void *p)
{
	const struct score_state *s = p;
	struct score_state *c = sx_calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->keys = malloc(sizeof(*c->keys) * (s->nkeys + 1));
	if (!c->keys || tmap_clone(&c->scores, &s->scores) < 0) {
		score_state_free(c);
		return NULL;
	}
	memcpy(c->keys, s->keys, sizeof(*c->keys) * s->nkeys);
	c->nkeys = s->nkeys;
	return c;
}

SX_STATE_PAIR_HOOKS(inter_pod_affinity)

/* ---------- PreFilter counters ---------- */

static const struct sx_pod_affinity *pod_aff(const struct sx_pod *p)
{
	return p->affinity ? p->affinity->pod_affinity : NULL;
}

static const struct sx_pod_affinity *pod_anti(const struct sx_pod *p)
{
	return p->affinity ? p->affinity->pod_anti_affinity : NULL;
}

/* existing_anti += mult for each required anti-affinity term of `existing`
 * matching the incoming pod. */
static int update_existing_anti(struct filter_state *f, const struct sx_pod *existing,
				const struct sx_node *node, int64_t mult)
{
	const struct sx_pod_affinity *a = pod_anti(existing);
	sx_str v;
	for (uint32_t i = 0; a && i < a->nrequired; i++) {
		const struct sx_pod_affinity_term *t = &a->required[i];
		if (!existing_term_matches(t, existing, f->pod, f->ns_labels))
			continue;
		if (sx_node_label(node, t->topology_key, &v) &&
		    tmap_add(&f->existing_anti, tmap_pair(t->topology_key, v), mult) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* affinity += mult on each term's pair when `existing` matches all the
 * incoming pod's required affinity terms. */
static int update_affinity(struct filter_state *f, const struct sx_pod *existing,
			   const struct sx_node *node, int64_t mult)
{
	sx_str v;
	if (!matches_all_terms(&f->aff, f->pod, existing))
		return 0;
	for (uint32_t i = 0; i < f->aff.n; i++) {
		sx_str key = f->aff.v[i].t->topology_key;
		if (sx_node_label(node, key, &v) &&
		    tmap_add(&f->affinity, tmap_pair(key, v), mult) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* anti_counts += mult for each incoming anti term matching `existing`. */
static int update_anti(struct filter_state *f, const struct sx_pod *existing,
		       const struct sx_node *node, int64_t mult)
{
	sx_str v;
	for (uint32_t i = 0; i < f->anti.n; i++) {
		const struct term *tm = &f->anti.v[i];
		if (!term_matches(tm, f->pod, existing))
			continue;
		if (sx_node_label(node, tm->t->topology_key, &v) &&
		    tmap_add(&f->anti_counts, tmap_pair(tm->t->topology_key, v), mult) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* ---------- namespace pre-checks ----------
 * Terms select pods of known namespaces only, so a node holding no pod of
 * those namespaces cannot change any counter: these checks skip it without
 * touching its pods. They only ever skip work whose result is zero. */

/* ni may hold a pod matched by one of ts's terms. */
static bool node_has_term_ns(const struct sx_node_info *ni, const struct terms *ts)
{
	for (uint32_t i = 0; i < ts->n; i++) {
		if (ts->v[i].all_ns)
			return ni->npods > 0;
		for (uint32_t j = 0; j < ts->v[i].nns; j++)
			if (sx_node_info_ns(ni, ts->v[i].ns[j]))
				return true;
	}
	return false;
}

/* One of ni's affinity pods may have a term selecting a pod of ns. */
static bool node_affinity_may_select(const struct sx_node_info *ni, sx_str ns)
{
	const struct sx_ns_count *c;
	if (ni->naffinity_any_ns > 0)
		return true;
	c = sx_node_info_ns(ni, ns);
	return c && c->affinity > 0;
}

/* Same for the required anti-affinity terms of ni's pods. */
static bool node_anti_may_select(const struct sx_node_info *ni, sx_str ns)
{
	const struct sx_ns_count *c;
	if (ni->nanti_any_ns > 0)
		return true;
	c = sx_node_info_ns(ni, ns);
	return c && c->anti > 0;
}

/* One node's share of existing_anti (the body of the first walk below). */
static int count_node_existing(struct filter_state *f, const struct sx_node_info *ni)
{
	if (!node_anti_may_select(ni, f->pod->meta.ns))
		return 0;
	for (uint32_t j = 0; ni->node && j < ni->nanti; j++)
		if (update_existing_anti(f, ni->required_anti_pods[j], ni->node, 1) < 0)
			return SX_ENOMEM;
	return 0;
}

/* One node's share of affinity and anti_counts (the second walk's body). */
static int count_node_terms(struct filter_state *f, const struct sx_node_info *ni)
{
	if (!node_has_term_ns(ni, &f->aff) && !node_has_term_ns(ni, &f->anti))
		return 0;
	for (uint32_t j = 0; ni->node && j < ni->npods; j++) {
		if (update_affinity(f, ni->pods[j], ni->node, 1) < 0 ||
		    update_anti(f, ni->pods[j], ni->node, 1) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* Either body into the memo's scratch maps (0 existing_anti, 1 affinity,
 * 2 anti_counts). */
static int memo_count_node(struct filter_state *f, const struct sx_node_info *ni,
			   struct tmap *scratch, bool existing)
{
	struct filter_state g = {.pod = f->pod,
				 .ns_labels = f->ns_labels,
				 .aff = f->aff,
				 .anti = f->anti,
				 .existing_anti = scratch[0],
				 .affinity = scratch[1],
				 .anti_counts = scratch[2]};
	int rc = existing ? count_node_existing(&g, ni) : count_node_terms(&g, ni);
	scratch[0] = g.existing_anti;
	scratch[1] = g.affinity;
	scratch[2] = g.anti_counts;
	return rc;
}

static int memo_count_existing(void *ctx, const struct sx_node_info *ni, struct tmap *scratch)
{
	return memo_count_node(ctx, ni, scratch, true);
}

static int memo_count_terms(void *ctx, const struct sx_node_info *ni, struct tmap *scratch)
{
	return memo_count_node(ctx, ni, scratch, false);
}

static int memo_existing_out(void *ctx, const struct memo *m)
{
	struct filter_state *f = ctx;
	return tmap_clone(&f->existing_anti, &m->sums[0]);
}

static int memo_terms_out(void *ctx, const struct memo *m)
{
	struct filter_state *f = ctx;
	if (tmap_clone(&f->affinity, &m->sums[1]) < 0 ||
	    tmap_clone(&f->anti_counts, &m->sums[2]) < 0)
		return SX_ENOMEM;
	return 0;
}

/* The memo of kind over snap into f; 1 when not used (walk instead). */
static int count_by_memo(struct filter_state *f, const struct sx_snapshot *snap,
			 enum memo_kind kind)
{
	struct memo_key q = {.kind = kind,
			     .pod = f->pod,
			     .has_ns_labels = f->ns_labels != NULL,
			     .a = f->aff,
			     .b = f->anti};
	if (f->ns_labels)
		q.ns_labels = *f->ns_labels;
	if (kind == MK_EXISTING)
		return memo_run(f->memo, &q, snap, memo_count_existing, f, memo_existing_out);
	return memo_run(f->memo, &q, snap, memo_count_terms, f, memo_terms_out);
}

static int count_existing(struct filter_state *f, const struct sx_snapshot *snap)
{
	/* No required-anti pod anywhere can select the pod's namespace: every
	 * node fails node_anti_may_select, skip touching them. */
	uint32_t nanti =
		sx_snapshot_may_select_anti(snap, f->pod->meta.ns) ? snap->nwith_required_anti : 0;
	int rc = 1;
	/* Walks over a good part of the nodes: the memo's sums for a fraction
	 * of the work. */
	if (nanti >= 64 && nanti >= snap->nnodes / 4)
		rc = count_by_memo(f, snap, MK_EXISTING);
	if (rc < 0)
		return rc;
	for (uint32_t k = 0; rc == 1 && k < nanti; k++) {
		sx_snapshot_prefetch(snap, snap->with_required_anti, nanti, k);
		if (count_node_existing(f, snap->nodes[snap->with_required_anti[k]]) < 0)
			return SX_ENOMEM;
	}
	if (f->aff.n == 0 && f->anti.n == 0)
		return 0;
	rc = snap->nnodes >= 64 ? count_by_memo(f, snap, MK_TERMS) : 1;
	if (rc <= 0)
		return rc;
	for (uint32_t k = 0; k < snap->nnodes; k++) {
		sx_snapshot_prefetch(snap, NULL, snap->nnodes, k);
		if (count_node_terms(f, snap->nodes[k]) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

static struct sx_status *pre_filter_inter_pod_affinity(void *self, struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       struct sx_node_set **result)
{
	const struct sx_pod_affinity *a = pod_aff(pod), *aa = pod_anti(pod);
	struct sx_state_pair *st = slot(cs);
	struct filter_state *f = sx_calloc(1, sizeof(*f));
	if (!st || !f)
		goto out_nomem;
	f->memo = ((const struct args *)self)->memo;
	f->pod = pod;
	f->ns_labels = sx_snapshot_namespace_labels(cs->snap, pod->meta.ns);
	if (terms_build(&f->aff, pod, cs->snap, a ? a->required : NULL, a ? a->nrequired : 0, NULL,
			0) < 0 ||
	    terms_build(&f->anti, pod, cs->snap, aa ? aa->required : NULL, aa ? aa->nrequired : 0,
			NULL, 0) < 0 ||
	    count_existing(f, cs->snap) < 0)
		goto out_nomem;
	filter_state_free(st->f);
	st->f = NULL;
	if (f->existing_anti.live == 0 && f->aff.n == 0 && f->anti.n == 0) {
		filter_state_free(f);
		return sx_status_new(SX_SKIP, NULL);
	}
	st->f = f;
	return NULL;
out_nomem:
	filter_state_free(f);
	return sx_status_oom();
}

static struct sx_status *update_with_pod(struct sx_cycle_state *cs, const struct sx_pod *p,
					 const struct sx_node_info *ni, int64_t mult)
{
	struct sx_state_pair *st = cs->slots[SX_SLOT_inter_pod_affinity];
	if (!st || !st->f)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
	if (!ni->node)
		return NULL;
	if (update_existing_anti(st->f, p, ni->node, mult) < 0 ||
	    update_affinity(st->f, p, ni->node, mult) < 0 ||
	    update_anti(st->f, p, ni->node, mult) < 0)
		return sx_status_oom();
	return NULL;
}

static struct sx_status *add_pod_inter_pod_affinity(void *self, struct sx_cycle_state *cs,
						    const struct sx_pod *pod,
						    const struct sx_pod *added,
						    const struct sx_node_info *ni)
{
	return update_with_pod(cs, added, ni, 1);
}

static struct sx_status *remove_pod_inter_pod_affinity(void *self, struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       const struct sx_pod *removed,
						       const struct sx_node_info *ni)
{
	return update_with_pod(cs, removed, ni, -1);
}

/* ---------- Filter ---------- */

static bool satisfies_affinity(const struct filter_state *f, const struct sx_node *node)
{
	bool pods_exist = true;
	sx_str v;
	for (uint32_t i = 0; i < f->aff.n; i++) {
		sx_str key = f->aff.v[i].t->topology_key;
		if (!sx_node_label(node, key, &v))
			return false; /* every topology key must exist on the node */
		if (tmap_get(&f->affinity, tmap_pair(key, v)) <= 0)
			pods_exist = false;
	}
	if (pods_exist)
		return true;
	/* The first pod of a group with affinity to itself: no pod in the
	 * cluster matches yet, and the pod matches its own terms. */
	return f->affinity.live == 0 && matches_all_terms(&f->aff, f->pod, f->pod);
}

static bool satisfies_anti(const struct filter_state *f, const struct sx_node *node)
{
	sx_str v;
	for (uint32_t i = 0; i < f->anti.n; i++) {
		sx_str key = f->anti.v[i].t->topology_key;
		if (sx_node_label(node, key, &v) &&
		    tmap_get(&f->anti_counts, tmap_pair(key, v)) > 0)
			return false;
	}
	return true;
}

static bool satisfies_existing_anti(const struct filter_state *f, const struct sx_node *node)
{
	if (f->existing_anti.live == 0)
		return true;
	const struct sx_labels *l = &node->meta.labels;
	for (uint32_t i = 0; i < l->n; i++)
		if (tmap_get(&f->existing_anti, tmap_pair(l->items[i].key, l->items[i].value)) > 0)
			return false;
	return true;
}

static struct sx_status *filter_inter_pod_affinity(void *self, const struct sx_cycle_state *cs,
						   const struct sx_pod *pod,
						   const struct sx_node_info *ni)
{
	const struct sx_state_pair *st = slot_const(cs);
	if (!ni->node)
		return sx_status_new(SX_ERROR, "node not found");
	if (!st || !st->f)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
	if (!satisfies_affinity(st->f, ni->node))
		return &reject_affinity;
	if (!satisfies_anti(st->f, ni->node))
		return &reject_anti_affinity;
	if (!satisfies_existing_anti(st->f, ni->node))
		return &reject_existing_anti_affinity;
	return NULL;
}

/* ---------- the numbers behind a rejection ---------- */

/* A pod on a node in domain key=value that matches the incoming pod's
 * term tm (anti: its anti-affinity), or NULL. */
static const struct sx_pod *pod_in_domain(const struct sx_snapshot *snap, sx_str key, sx_str value,
					  const struct term *tm, const struct sx_pod *pod)
{
	sx_str v;

	for (uint32_t n = 0; snap && n < snap->nnodes; n++) {
		const struct sx_node_info *ni = snap->nodes[n];
		if (!ni->node || !sx_node_label(ni->node, key, &v) || v != value)
			continue;
		for (uint32_t i = 0; i < ni->npods; i++)
			if (term_matches(tm, pod, ni->pods[i]))
				return ni->pods[i];
	}
	return NULL;
}

/* An existing pod in domain key=value whose required anti-affinity term
 * (of that topology key) selects the incoming pod; *term its index. */
static const struct sx_pod *anti_owner(const struct filter_state *f, const struct sx_snapshot *snap,
				       sx_str key, sx_str value, uint32_t *term)
{
	sx_str v;

	for (uint32_t n = 0; snap && n < snap->nnodes; n++) {
		const struct sx_node_info *ni = snap->nodes[n];
		if (!ni->node || !sx_node_label(ni->node, key, &v) || v != value)
			continue;
		for (uint32_t i = 0; i < ni->nanti; i++) {
			const struct sx_pod *e = ni->required_anti_pods[i];
			const struct sx_pod_affinity *a = pod_anti(e);
			for (uint32_t t = 0; a && t < a->nrequired; t++)
				if (a->required[t].topology_key == key &&
				    existing_term_matches(&a->required[t], e, f->pod,
							  f->ns_labels)) {
					*term = t;
					return e;
				}
		}
	}
	return NULL;
}

static void explain_domain(struct sx_detail *d, uint32_t term, sx_str key, const sx_str *value,
			   int64_t count, const struct sx_pod *pod)
{
	char pk[512];

	sx_detail_int(d, "term", term);
	sx_detail_str(d, "topologyKey", sx_str_get(key));
	sx_detail_str(d, "domain", value ? sx_str_get(*value) : NULL);
	sx_detail_int(d, "matchingPods", count);
	if (pod)
		sx_detail_str(d, "pod", sx_pod_key(pod, pk, sizeof(pk)));
}

/* Which term and which existing pod, as Filter decides (upstream
 * interpodaffinity/filtering.go: satisfyPodAffinity, satisfyPodAntiAffinity,
 * satisfyExistingPodsAntiAffinity). */
static void explain_inter_pod_affinity(void *self, const struct sx_cycle_state *cs,
				       const struct sx_pod *pod, const struct sx_node_info *ni,
				       const struct sx_status *st, struct sx_detail *d)
{
	const struct sx_state_pair *sp = slot_const(cs);
	const struct filter_state *f = sp ? sp->f : NULL;
	const struct sx_node *node = ni ? ni->node : NULL;
	char pk[512];
	sx_str v;

	if (!f || !node || !st->nreasons)
		return;
	if (strcmp(st->reasons[0], REASON_AFFINITY) == 0) {
		for (uint32_t i = 0; i < f->aff.n; i++) {
			sx_str key = f->aff.v[i].t->topology_key;
			const char *k = sx_str_get(key);
			if (!sx_node_label(node, key, &v)) {
				sx_detail_text(d, "affinity term %u: node has no %s label", i, k);
				if (!d->n)
					explain_domain(d, i, key, NULL, 0, NULL);
			} else if (tmap_get(&f->affinity, tmap_pair(key, v)) <= 0) {
				sx_detail_text(
					d, "affinity term %u: no pod matching the terms in %s=%s",
					i, k, sx_str_get(v));
				if (!d->n)
					explain_domain(d, i, key, &v, 0, NULL);
			}
		}
	} else if (strcmp(st->reasons[0], REASON_ANTI) == 0) {
		for (uint32_t i = 0; i < f->anti.n; i++) {
			sx_str key = f->anti.v[i].t->topology_key;
			int64_t n;
			if (!sx_node_label(node, key, &v) ||
			    (n = tmap_get(&f->anti_counts, tmap_pair(key, v))) <= 0)
				continue;
			const struct sx_pod *e =
				pod_in_domain(cs->snap, key, v, &f->anti.v[i], pod);
			sx_detail_text(d,
				       "anti-affinity term %u: %lld matching pod(s) in %s=%s%s%s",
				       i, (long long)n, sx_str_get(key), sx_str_get(v),
				       e ? ", e.g. " : "", e ? sx_pod_key(e, pk, sizeof(pk)) : "");
			explain_domain(d, i, key, &v, n, e);
			return;
		}
	} else if (strcmp(st->reasons[0], REASON_EXISTING_ANTI) == 0) {
		const struct sx_labels *l = &node->meta.labels;
		for (uint32_t i = 0; i < l->n; i++) {
			sx_str key = l->items[i].key;
			uint32_t t = 0;
			int64_t n = tmap_get(&f->existing_anti, tmap_pair(key, l->items[i].value));
			if (n <= 0)
				continue;
			const struct sx_pod *e =
				anti_owner(f, cs->snap, key, l->items[i].value, &t);
			if (e)
				sx_detail_text(
					d, "%s's anti-affinity term %u selects this pod in %s=%s",
					sx_pod_key(e, pk, sizeof(pk)), t, sx_str_get(key),
					sx_str_get(l->items[i].value));
			else
				sx_detail_text(
					d,
					"an existing pod's anti-affinity selects this pod in %s=%s",
					sx_str_get(key), sx_str_get(l->items[i].value));
			explain_domain(d, t, key, &l->items[i].value, n, e);
			return;
		}
	}
}

/* ---------- PreScore / Score ---------- */

struct scorer {
	const struct args *args;
	const struct sx_pod *pod;
	const struct sx_labels *ns_labels;
	struct terms pref_aff, pref_anti;
	struct score_state *s;
};

static int record(struct score_state *s, sx_str key, sx_str value, int64_t delta)
{
	uint32_t i;
	for (i = 0; i < s->nkeys && s->keys[i] != key; i++)
		;
	if (i == s->nkeys) {
		sx_str *keys = realloc(s->keys, sizeof(*keys) * (s->nkeys + 1));
		if (!keys)
			return SX_ENOMEM;
		s->keys = keys;
		s->keys[s->nkeys++] = key;
	}
	return tmap_add(&s->scores, tmap_pair(key, value), delta);
}

/* weight × mult on the term's pair of node, when `matched` is true. */
static int add_term(struct score_state *s, bool matched, sx_str key, int64_t weight,
		    const struct sx_node *node, int64_t mult)
{
	sx_str v;
	if (!matched || !sx_node_label(node, key, &v))
		return 0;
	return record(s, key, v, weight * mult);
}

/* The incoming pod's preferred terms against the existing pod. */
static int score_incoming_terms(struct scorer *sc, const struct terms *ts,
				const struct sx_pod *existing, const struct sx_node *node,
				int64_t mult)
{
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct term *tm = &ts->v[i];
		if (add_term(sc->s, term_matches(tm, sc->pod, existing), tm->t->topology_key,
			     tm->weight, node, mult) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* The existing pod's preferred terms against the incoming pod. */
static int score_existing_terms(struct scorer *sc, const struct sx_pod_affinity *a,
				const struct sx_pod *existing, const struct sx_node *node,
				int64_t mult)
{
	for (uint32_t i = 0; a && i < a->npreferred; i++) {
		const struct sx_pod_affinity_term *t = &a->preferred[i].term;
		bool m = existing_term_matches(t, existing, sc->pod, sc->ns_labels);
		if (add_term(sc->s, m, t->topology_key, a->preferred[i].weight, node, mult) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

static int process_existing_pod(struct scorer *sc, const struct sx_pod *existing,
				const struct sx_node *node)
{
	if (node->meta.labels.n == 0)
		return 0;
	if (score_incoming_terms(sc, &sc->pref_aff, existing, node, 1) < 0 ||
	    score_incoming_terms(sc, &sc->pref_anti, existing, node, -1) < 0)
		return SX_ENOMEM;
	const struct sx_pod_affinity *a = pod_aff(existing);
	int64_t hard = sc->args->hard_pod_affinity_weight;
	for (uint32_t i = 0; hard > 0 && a && i < a->nrequired; i++) {
		const struct sx_pod_affinity_term *t = &a->required[i];
		bool m = existing_term_matches(t, existing, sc->pod, sc->ns_labels);
		if (add_term(sc->s, m, t->topology_key, hard, node, 1) < 0)
			return SX_ENOMEM;
	}
	if (score_existing_terms(sc, a, existing, node, 1) < 0 ||
	    score_existing_terms(sc, pod_anti(existing), existing, node, -1) < 0)
		return SX_ENOMEM;
	return 0;
}

/* One node's share of the scores (the body of scan_nodes' walk). */
static int score_node(struct scorer *sc, const struct sx_node_info *ni, bool all)
{
	if (!node_affinity_may_select(ni, sc->pod->meta.ns) &&
	    (!all ||
	     (!node_has_term_ns(ni, &sc->pref_aff) && !node_has_term_ns(ni, &sc->pref_anti))))
		return 0;
	uint32_t np = all ? ni->npods : ni->naffinity;
	const struct sx_pod *const *pods = all ? ni->pods : ni->affinity_pods;
	for (uint32_t j = 0; ni->node && j < np; j++)
		if (process_existing_pod(sc, pods[j], ni->node) < 0)
			return SX_ENOMEM;
	return 0;
}

struct memo_scan {
	struct scorer *sc;
	bool all;
};

/* score_node into the memo's scratch scores. */
static int memo_score_node(void *ctx, const struct sx_node_info *ni, struct tmap *scratch)
{
	const struct memo_scan *ms = ctx;
	struct score_state g = {.scores = scratch[MAP_SCORES]};
	struct scorer sc = *ms->sc;
	sc.s = &g;
	int rc = score_node(&sc, ni, ms->all);
	scratch[MAP_SCORES] = g.scores;
	free(g.keys);
	return rc;
}

static int memo_scores_out(void *ctx, const struct memo *m)
{
	struct score_state *s = ((const struct memo_scan *)ctx)->sc->s;
	const struct tmap *r = &m->keyrefs;
	if (tmap_clone(&s->scores, &m->sums[MAP_SCORES]) < 0)
		return SX_ENOMEM;
	s->keys = malloc(sizeof(*s->keys) * (r->n + 1));
	if (!s->keys)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < r->cap; i++)
		if (r->used[i] && r->vals[i] > 0)
			s->keys[s->nkeys++] = (sx_str)r->keys[i];
	return 0;
}

static int scan_nodes(struct scorer *sc, const struct sx_snapshot *snap, bool all)
{
	uint32_t n = all ? snap->nnodes : snap->nwith_affinity;
	/* Without preferred terms of its own, only nodes passing
	 * node_affinity_may_select count: none when no affinity pod anywhere
	 * can select the pod's namespace (the common case for plain pods). */
	if (!all && !sx_snapshot_may_select_affinity(snap, sc->pod->meta.ns))
		return 0;
	/* A walk over a good part of the nodes: the memo's sums instead. */
	if (n >= 64 && n >= snap->nnodes / 4) {
		struct memo_key q = {.kind = MK_SCORE,
				     .pod = sc->pod,
				     .has_ns_labels = sc->ns_labels != NULL,
				     .a = sc->pref_aff,
				     .b = sc->pref_anti,
				     .hard = sc->args->hard_pod_affinity_weight,
				     .all_pods = all};
		struct memo_scan ms = {sc, all};
		if (sc->ns_labels)
			q.ns_labels = *sc->ns_labels;
		int rc = memo_run(sc->args->memo, &q, snap, memo_score_node, &ms, memo_scores_out);
		if (rc <= 0)
			return rc;
		tmap_free(&sc->s->scores);
		free(sc->s->keys);
		sc->s->keys = NULL;
		sc->s->nkeys = 0;
	}
	for (uint32_t k = 0; k < n; k++) {
		sx_snapshot_prefetch(snap, all ? NULL : snap->with_affinity, n, k);
		const struct sx_node_info *ni = snap->nodes[all ? k : snap->with_affinity[k]];
		if (score_node(sc, ni, all) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

static struct sx_status *pre_score_inter_pod_affinity(void *self, struct sx_cycle_state *cs,
						      const struct sx_pod *pod,
						      struct sx_node_info *const *nodes, uint32_t n)
{
	const struct sx_pod_affinity *a = pod_aff(pod), *aa = pod_anti(pod);
	bool has_pref = (a && a->npreferred > 0) || (aa && aa->npreferred > 0);
	struct scorer sc = {.args = self, .pod = pod};
	struct sx_state_pair *st;
	int rc;

	if (sc.args->ignore_preferred_of_existing && !has_pref)
		return sx_status_new(SX_SKIP, NULL);
	st = slot(cs);
	sc.s = sx_calloc(1, sizeof(*sc.s));
	sc.ns_labels = sx_snapshot_namespace_labels(cs->snap, pod->meta.ns);
	rc = st && sc.s ? 0 : SX_ENOMEM;
	if (rc == 0)
		rc = terms_build(&sc.pref_aff, pod, cs->snap, NULL, 0, a ? a->preferred : NULL,
				 a ? a->npreferred : 0);
	if (rc == 0)
		rc = terms_build(&sc.pref_anti, pod, cs->snap, NULL, 0, aa ? aa->preferred : NULL,
				 aa ? aa->npreferred : 0);
	if (rc == 0)
		rc = scan_nodes(&sc, cs->snap, has_pref);
	terms_free(&sc.pref_aff);
	terms_free(&sc.pref_anti);
	if (rc < 0) {
		score_state_free(sc.s);
		return sx_status_oom();
	}
	score_state_free(st->s);
	st->s = NULL;
	if (sc.s->nkeys == 0) {
		score_state_free(sc.s);
		return sx_status_new(SX_SKIP, NULL);
	}
	st->s = sc.s;
	return NULL;
}

static struct sx_status *score_inter_pod_affinity(void *self, const struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  const struct sx_node_info *ni, int64_t *score)
{
	const struct sx_state_pair *st = slot_const(cs);
	const struct score_state *s = st ? st->s : NULL;
	sx_str v;
	*score = 0;
	if (!s)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreScoreInterPodAffinity\" from cycleState: not found");
	if (!ni->node)
		return sx_status_new(SX_ERROR, "node not found");
	for (uint32_t i = 0; i < s->nkeys; i++)
		if (sx_node_label(ni->node, s->keys[i], &v))
			*score += tmap_get(&s->scores, tmap_pair(s->keys[i], v));
	return NULL;
}

/* Min-max normalisation to [0, 100], truncating like Go's int64(float64). */
static struct sx_status *normalize_score_inter_pod_affinity(void *self,
							    const struct sx_cycle_state *cs,
							    const struct sx_pod *pod,
							    struct sx_node_score *scores,
							    uint32_t n)
{
	const struct sx_state_pair *st = slot_const(cs);
	const struct score_state *s = st ? st->s : NULL;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	if (!s || s->nkeys == 0)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (scores[i].score > hi)
			hi = scores[i].score;
		if (scores[i].score < lo)
			lo = scores[i].score;
	}
	for (uint32_t i = 0; i < n; i++) {
		double f = 0;
		if (hi - lo > 0)
			f = (double)SX_MAX_NODE_SCORE *
			    ((double)(scores[i].score - lo) / (double)(hi - lo));
		scores[i].score = (int64_t)f;
	}
	return NULL;
}

/* InterPodAffinity.SignPod (interpodaffinity/plugin.go): a pod with
 * pod (anti-)affinity is not signable; others sign their labels (the
 * existing pods' terms select them), unless ignorePreferredTermsOfExistingPods
 * is set (TestPodAffinitySignature). */
static struct sx_status *sign_inter_pod_affinity(void *self, const struct sx_pod *pod,
						 uint32_t *signers)
{
	const struct args *a = self;
	const struct sx_affinity *af = pod->affinity;

	if (af && (af->pod_affinity || af->pod_anti_affinity))
		return sx_status_new(SX_UNSCHEDULABLE, "pods with pod affinity are not signable");
	if (!a->ignore_preferred_of_existing)
		*signers |= SX_SIGNER_LABELS;
	return NULL;
}

const struct sx_plugin sx_plugin_inter_pod_affinity = {
	.name = NAME,
	.init = init_inter_pod_affinity,
	.destroy = destroy_inter_pod_affinity,
	.args_kind = "InterPodAffinityArgs",
	.write_args = write_args_inter_pod_affinity,
	.state_clone = state_clone_inter_pod_affinity,
	.state_free = state_free_inter_pod_affinity,
	.pre_filter = pre_filter_inter_pod_affinity,
	.add_pod = add_pod_inter_pod_affinity,
	.remove_pod = remove_pod_inter_pod_affinity,
	.filter = filter_inter_pod_affinity,
	.pre_score = pre_score_inter_pod_affinity,
	.score = score_inter_pod_affinity,
	.normalize_score = normalize_score_inter_pod_affinity,
	.events = sx_events_inter_pod_affinity,
	.explain = explain_inter_pod_affinity,
	.sign = sign_inter_pod_affinity,
};
