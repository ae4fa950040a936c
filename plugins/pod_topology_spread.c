/* PodTopologySpread — PreFilter (+AddPod/RemovePod), Filter, PreScore,
 * Score, NormalizeScore (upstream podtopologyspread/filtering.go, scoring.go).
 *
 * PreFilter counts, per hard constraint, the matching pods of every domain
 * (topology value) over the eligible nodes and keeps the two smallest
 * domains ("critical paths"), so Filter is O(constraints) per node.
 * PreScore does the same for the soft constraints over the domains of the
 * feasible nodes; Score combines them with upstream's log-based weights.
 *
 * Pods without constraints get the plugin's default constraints (system
 * defaults or the args' list) with a selector deduced from the Services,
 * ReplicationController, ReplicaSet or StatefulSet selecting the pod.
 *
 * PreFilter's counts come from a process-wide memo of each node's
 * contribution keyed by NodeInfo generation ("per-node count memo"
 * below), so a cycle recounts only the nodes that changed; it has its own
 * mutex and a bounded size.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/plugin.h"
#include "schedext/selector.h"
#include "pod_hints.h"
#include "schedext/status.h"

#include "topology_map.h"
#include "topology_spread_args.h"
#include "slots.h"
#include "state_pair.h"

#define REASON_NOT_MATCH     "node(s) didn't match pod topology spread constraints"
#define REASON_MISSING_LABEL REASON_NOT_MATCH " (missing required label)"
#define NAME		     "PodTopologySpread"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_missing_label =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_MISSING_LABEL);
static struct sx_status reject_skew = SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_NOT_MATCH);

/* ---------- compiled selectors ---------- */

/* A label selector as the plugin evaluates it: a nil labelSelector matches
 * nothing; requirements are ANDed. `eq[i]` stores the value of reqs[i] when
 * the plugin made that requirement (matchLabelKeys, map selectors);
 * otherwise reqs[i].values is borrowed from the pod or controller, which
 * outlive the cycle. */
struct csel {
	bool nothing;
	uint32_t n;
	struct sx_requirement *reqs;
	sx_str *eq;
};

struct constraint {
	int32_t max_skew;
	sx_str key;
	int32_t min_domains; /* >= 1 */
	bool honor_affinity;
	bool honor_taints;
	bool self_match; /* PreFilter: sel matches the incoming pod's labels */
	struct csel sel;
};

struct cset {
	uint32_t n;
	struct constraint *v;
};

struct cpath {
	sx_str value;
	int64_t num;
};

/* PreFilter result (hard constraints). */
struct filter_state {
	struct pts_memo_set *memo; /* the instance's memos (borrowed; may be NULL) */
	struct cset cs;
	struct tmap *counts;	  /* [cs.n]: topology value -> matching pods */
	struct cpath (*paths)[2]; /* [cs.n]: the two domains with fewest pods */
};

/* PreScore result (soft constraints). */
struct score_state {
	struct cset cs;
	struct tmap ignored; /* names of feasible nodes lacking a constraint key */
	struct tmap *counts; /* [cs.n]: domain -> matching pods (hostname: unused) */
	double *weights;     /* [cs.n] */
};

static void csel_free(struct csel *s)
{
	free(s->reqs);
	free(s->eq);
	memset(s, 0, sizeof(*s));
}

static int csel_reserve(struct csel *s, uint32_t n)
{
	s->reqs = sx_calloc(n + 1, sizeof(*s->reqs));
	s->eq = sx_calloc(n + 1, sizeof(*s->eq));
	if (s->reqs && s->eq)
		return 0;
	csel_free(s); /* callers do not free a selector they failed to fill */
	return SX_ENOMEM;
}

static void csel_add_eq(struct csel *s, sx_str key, sx_str value)
{
	uint32_t i = s->n++;
	s->eq[i] = value;
	s->reqs[i] = (struct sx_requirement){
		.key = key, .op = SX_OP_EQUALS, .nvalues = 1, .values = &s->eq[i]};
}

static int csel_clone(struct csel *dst, const struct csel *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->nothing = src->nothing;
	if (csel_reserve(dst, src->n) < 0) {
		csel_free(dst);
		return SX_ENOMEM;
	}
	for (uint32_t i = 0; i < src->n; i++) {
		dst->reqs[i] = src->reqs[i];
		dst->eq[i] = src->eq[i];
		if (src->reqs[i].values == &src->eq[i])
			dst->reqs[i].values = &dst->eq[i];
	}
	dst->n = src->n;
	return 0;
}

static bool csel_matches(const struct csel *s, const struct sx_labels *labels)
{
	if (s->nothing)
		return false;
	for (uint32_t i = 0; i < s->n; i++)
		if (!sx_requirement_matches(&s->reqs[i], labels))
			return false;
	return true;
}

/* Pods on ni matched by s in namespace ns, terminating pods excluded. An
 * empty selector ({}) counts nothing (upstream's selector.Empty() check). */
static int64_t count_matching(const struct sx_node_info *ni, const struct csel *s, sx_str ns)
{
	int64_t count = 0;
	if (!s->nothing && s->n == 0)
		return 0;
	if (s->nothing || !sx_node_info_ns(ni, ns))
		return 0; /* no pod of ns here: skip the pod list */
	for (uint32_t i = 0; i < ni->npods; i++) {
		const struct sx_pod *p = ni->pods[i];
		if (p->deleting || p->meta.ns != ns)
			continue;
		if (csel_matches(s, &p->meta.labels))
			count++;
	}
	return count;
}

/* The constraint's labelSelector with `key = value` ANDed for each of its
 * matchLabelKeys the pod has. A nil selector stays "nothing". */
static int csel_from_constraint(struct csel *s, const struct sx_spread_constraint *c,
				const struct sx_pod *pod)
{
	const struct sx_label_selector *base = c->selector;
	sx_str v;
	memset(s, 0, sizeof(*s));
	if (!base) {
		s->nothing = true;
		return 0;
	}
	if (csel_reserve(s, base->nreqs + c->nmatch_label_keys) < 0)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < c->nmatch_label_keys; i++)
		if (sx_labels_get(&pod->meta.labels, c->match_label_keys[i], &v))
			csel_add_eq(s, c->match_label_keys[i], v);
	for (uint32_t i = 0; i < base->nreqs; i++)
		s->reqs[s->n++] = base->reqs[i];
	return 0;
}

/* ---------- default selector (helper.DefaultSelector) ---------- */

static void merge_map(struct csel *s, const struct sx_labels *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		uint32_t j;
		for (j = 0; j < s->n && s->reqs[j].key != m->items[i].key; j++)
			;
		if (j < s->n)
			s->eq[j] = m->items[i].value;
		else
			csel_add_eq(s, m->items[i].key, m->items[i].value);
	}
}

static const struct sx_generic *find_controller(const struct sx_snapshot *snap,
						const struct sx_pod *pod,
						const struct sx_owner_ref *owner, enum sx_kind kind)
{
	const char *name = sx_str_get(owner->name);
	for (uint32_t i = 0; i < snap->ncontrollers; i++) {
		const struct sx_generic *g = snap->controllers[i];
		if (g->kind == kind && g->meta.ns == pod->meta.ns &&
		    strcmp(g->meta.name, name) == 0)
			return g;
	}
	return NULL;
}

static enum sx_kind owner_kind(const struct sx_owner_ref *owner)
{
	const char *k = sx_str_get(owner->kind);
	if (strcmp(k, "ReplicationController") == 0)
		return SX_KIND_REPLICATION_CONTROLLER;
	if (strcmp(k, "ReplicaSet") == 0)
		return SX_KIND_REPLICA_SET;
	if (strcmp(k, "StatefulSet") == 0)
		return SX_KIND_STATEFUL_SET;
	return SX_KIND_UNKNOWN;
}

/* Union of the selectors of the Services selecting the pod, plus its
 * controlling RC (map merge), ReplicaSet or StatefulSet (requirements
 * appended). */
static int default_selector(struct csel *s, const struct sx_pod *pod,
			    const struct sx_snapshot *snap)
{
	const struct sx_owner_ref *owner = sx_pod_controller(pod);
	const struct sx_generic *ctl = NULL;
	uint32_t cap = 0;

	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < snap->nservices; i++)
		if (snap->services[i]->meta.ns == pod->meta.ns)
			cap += snap->services[i]->map_selector.n;
	if (owner && owner_kind(owner) != SX_KIND_UNKNOWN)
		ctl = find_controller(snap, pod, owner, owner_kind(owner));
	if (ctl)
		cap += ctl->map_selector.n + (ctl->selector ? ctl->selector->nreqs : 0);
	if (csel_reserve(s, cap) < 0)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < snap->nservices; i++) {
		const struct sx_generic *svc = snap->services[i];
		if (svc->meta.ns != pod->meta.ns || !svc->has_map_selector)
			continue;
		if (sx_map_selector_matches(&svc->map_selector, &pod->meta.labels))
			merge_map(s, &svc->map_selector);
	}
	if (ctl && ctl->kind == SX_KIND_REPLICATION_CONTROLLER)
		merge_map(s, &ctl->map_selector);
	else if (ctl && ctl->selector)
		for (uint32_t i = 0; i < ctl->selector->nreqs; i++)
			s->reqs[s->n++] = ctl->selector->reqs[i];
	return 0;
}

/* ---------- constraint sets ---------- */

static void cset_free(struct cset *cs)
{
	for (uint32_t i = 0; i < cs->n; i++)
		csel_free(&cs->v[i].sel);
	free(cs->v);
	cs->v = NULL;
	cs->n = 0;
}

static int cset_clone(struct cset *dst, const struct cset *src)
{
	dst->n = 0;
	dst->v = sx_calloc(src->n + 1, sizeof(*dst->v));
	if (!dst->v)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < src->n; i++) {
		dst->v[i] = src->v[i];
		if (csel_clone(&dst->v[i].sel, &src->v[i].sel) < 0)
			return SX_ENOMEM;
		dst->n++;
	}
	return 0;
}

static void constraint_init(struct constraint *c, int32_t max_skew, sx_str key, int32_t min_domains,
			    uint8_t aff, uint8_t taint)
{
	c->max_skew = max_skew;
	c->key = key;
	c->min_domains = min_domains > 0 ? min_domains : 1;
	c->honor_affinity = aff != SX_POLICY_IGNORE;
	c->honor_taints = taint == SX_POLICY_HONOR;
}

/* The pod's own constraints with whenUnsatisfiable == when. */
static int pod_constraints(struct cset *cs, const struct sx_pod *pod, uint8_t when)
{
	cs->n = 0;
	cs->v = sx_calloc(pod->nspread + 1, sizeof(*cs->v));
	if (!cs->v)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < pod->nspread; i++) {
		const struct sx_spread_constraint *c = &pod->spread[i];
		if (c->when_unsatisfiable != when)
			continue;
		struct constraint *d = &cs->v[cs->n];
		constraint_init(d, c->max_skew, c->topology_key, c->min_domains,
				c->node_affinity_policy, c->node_taints_policy);
		if (csel_from_constraint(&d->sel, c, pod) < 0)
			return SX_ENOMEM;
		cs->n++;
	}
	return 0;
}

/* The args' default constraints with whenUnsatisfiable == when, all using
 * the pod's default selector; none when that selector is empty. */
static int default_constraints(struct cset *cs, const struct sx_pts_args *a,
			       const struct sx_pod *pod, const struct sx_snapshot *snap,
			       uint8_t when)
{
	struct csel sel;
	uint32_t n = 0;
	cs->n = 0;
	cs->v = NULL;
	for (uint32_t i = 0; i < a->n; i++)
		n += a->v[i].when == when;
	if (n == 0)
		return 0;
	if (default_selector(&sel, pod, snap) < 0) {
		csel_free(&sel);
		return SX_ENOMEM;
	}
	if (sel.n == 0) {
		csel_free(&sel);
		return 0;
	}
	cs->v = sx_calloc(n, sizeof(*cs->v));
	for (uint32_t i = 0; cs->v && i < a->n; i++) {
		const struct sx_pts_dconstraint *d = &a->v[i];
		if (d->when != when)
			continue;
		constraint_init(&cs->v[cs->n], d->max_skew, d->key, d->min_domains, d->aff_policy,
				d->taint_policy);
		if (csel_clone(&cs->v[cs->n].sel, &sel) < 0)
			break;
		cs->n++;
	}
	csel_free(&sel);
	return cs->v && cs->n == n ? 0 : SX_ENOMEM;
}

static int constraints_for(struct cset *cs, const struct sx_pts_args *a, const struct sx_pod *pod,
			   const struct sx_snapshot *snap, uint8_t when)
{
	if (pod->nspread > 0)
		return pod_constraints(cs, pod, when);
	return default_constraints(cs, a, pod, snap, when);
}

static bool node_has_all_keys(const struct sx_node *node, const struct cset *cs)
{
	sx_str v;
	for (uint32_t i = 0; i < cs->n; i++)
		if (!sx_node_label(node, cs->v[i].key, &v))
			return false;
	return true;
}

/* Node inclusion policies of each constraint, evaluated once per node. */
struct inclusion {
	bool affinity_ok;
	bool taints_ok;
};

static struct inclusion node_inclusion(const struct cset *cs, const struct sx_pod *pod,
				       const struct sx_node *node)
{
	struct inclusion in = {true, true};
	bool need_aff = false, need_taints = false;
	for (uint32_t i = 0; i < cs->n; i++) {
		need_aff |= cs->v[i].honor_affinity;
		need_taints |= cs->v[i].honor_taints;
	}
	if (need_aff)
		in.affinity_ok = sx_pod_matches_node_selector_and_affinity(pod, node);
	if (need_taints)
		in.taints_ok = !sx_find_untolerated_taint(
			node->taints, node->ntaints, pod->tolerations, pod->ntolerations,
			(1u << SX_EFFECT_NO_SCHEDULE) | (1u << SX_EFFECT_NO_EXECUTE));
	return in;
}

static bool included(const struct constraint *c, const struct inclusion *in)
{
	return (!c->honor_affinity || in->affinity_ok) && (!c->honor_taints || in->taints_ok);
}

/* ---------- state ---------- */

static void filter_state_free(void *p)
{
	struct filter_state *f = p;

	if (!f)
		return;
	for (uint32_t i = 0; f->counts && i < f->cs.n; i++)
		tmap_free(&f->counts[i]);
	free(f->counts);
	free(f->paths);
	cset_free(&f->cs);
	free(f);
}

static void score_state_free(void *p)
{
	struct score_state *s = p;

	if (!s)
		return;
	for (uint32_t i = 0; s->counts && i < s->cs.n; i++)
		tmap_free(&s->counts[i]);
	free(s->counts);
	free(s->weights);
	tmap_free(&s->ignored);
	cset_free(&s->cs);
	free(s);
}

static void *filter_state_clone(const void *p)
{
	const struct filter_state *f = p;
	struct filter_state *c = sx_calloc(1, sizeof(*c));
	uint32_t n = f->cs.n;
	if (!c)
		return NULL;
	c->counts = sx_calloc(n + 1, sizeof(*c->counts));
	c->paths = sx_calloc(n + 1, sizeof(*c->paths));
	if (cset_clone(&c->cs, &f->cs) < 0 || !c->counts || !c->paths)
		goto out_free;
	memcpy(c->paths, f->paths, sizeof(*c->paths) * n);
	for (uint32_t i = 0; i < n; i++)
		if (tmap_clone(&c->counts[i], &f->counts[i]) < 0)
			goto out_free;
	return c;
out_free:
	filter_state_free(c);
	return NULL;
}

static void *score_state_clone(const void *p)
{
	const struct score_state *s = p;
	struct score_state *c = sx_calloc(1, sizeof(*c));
	uint32_t n = s->cs.n;
	if (!c)
		return NULL;
	c->counts = sx_calloc(n + 1, sizeof(*c->counts));
	c->weights = sx_calloc(n + 1, sizeof(*c->weights));
	if (cset_clone(&c->cs, &s->cs) < 0 || !c->counts || !c->weights ||
	    tmap_clone(&c->ignored, &s->ignored) < 0)
		goto out_free;
	memcpy(c->weights, s->weights, sizeof(*c->weights) * n);
	for (uint32_t i = 0; i < n; i++)
		if (tmap_clone(&c->counts[i], &s->counts[i]) < 0)
			goto out_free;
	return c;
out_free:
	score_state_free(c);
	return NULL;
}

SX_STATE_PAIR_HOOKS(pod_topology_spread)

/* ---------- PreFilter ---------- */

/* criticalPaths.update: keeps the two domains with the fewest pods. */
static void paths_update(struct cpath p[2], sx_str value, int64_t num)
{
	int i = value == p[0].value ? 0 : value == p[1].value ? 1 : -1;
	if (i >= 0) {
		p[i].num = num;
		if (p[0].num > p[1].num) {
			struct cpath t = p[0];
			p[0] = p[1];
			p[1] = t;
		}
	} else if (num < p[0].num) {
		p[1] = p[0];
		p[0].value = value;
		p[0].num = num;
	} else if (num < p[1].num) {
		p[1].value = value;
		p[1].num = num;
	}
}

static int count_node(struct filter_state *f, const struct sx_pod *pod,
		      const struct sx_node_info *ni)
{
	const struct sx_node *node = ni->node;
	sx_str v;
	if (!node || !node_has_all_keys(node, &f->cs))
		return 0;
	struct inclusion in = node_inclusion(&f->cs, pod, node);
	for (uint32_t i = 0; i < f->cs.n; i++) {
		const struct constraint *c = &f->cs.v[i];
		if (!included(c, &in))
			continue;
		sx_node_label(node, c->key, &v);
		if (tmap_add(&f->counts[i], v, count_matching(ni, &c->sel, pod->meta.ns)) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* ---------- per-node count memo ----------
 * PreFilter's counts are sums over every node of what the node contributes
 * (its domain and its matching pods), and from one cycle to the next
 * almost every NodeInfo is the same object. A NodeInfo's generation
 * identifies its content process-wide (every change takes a new one from
 * one global counter; a clone keeps its original's, with the same
 * content), so the memo keeps, per (namespace, constraints), each snapshot
 * index's generation and contribution and the per-domain sums, and only
 * recomputes the nodes whose generation differs. Its results are those of
 * count_node over the whole snapshot, inserted in the same order (each
 * domain at its first eligible node), so the maps and critical paths are
 * identical. It serves pods whose inclusion policies are true on every
 * node (no node selector or required node affinity, or nodeAffinityPolicy
 * Ignore; nodeTaintsPolicy Ignore): the default constraints' case.
 *
 * Threads: cycles of any thread (extender requests run them concurrently);
 * one mutex, held for one walk over the snapshot's nodes. Memory: at most
 * MEMO_ENTRIES entries (least recently used replaced), each 8 + 8 * nc
 * bytes per node plus its domains; rebuilt when its domain table outgrows
 * the nodes it has seen. */
#define MEMO_ENTRIES 8
#define MEMO_MAX_C   4
#define MEMO_NONE    UINT32_MAX

struct memo_dom {
	sx_str value;
	uint32_t nodes; /* eligible nodes of the domain */
	uint32_t stamp; /* walk that last listed it */
	int64_t pods;	/* their matching pods */
};

struct memo_doms {
	uint32_t n, cap;
	struct memo_dom *v;
	struct tmap idx; /* value -> index in v */
	uint32_t norder;
	uint32_t *order; /* [cap]: domains of this walk, by first eligible node */
};

struct memo {
	uint64_t last_use; /* 0: empty */
	sx_str ns;
	uint32_t nc;
	sx_str key[MEMO_MAX_C];
	struct csel sel[MEMO_MAX_C]; /* deep copies (values in eq or vals) */
	sx_str *vals[MEMO_MAX_C];    /* owned copies of borrowed requirement values */
	uint32_t cap, used;	     /* node slots allocated / holding a generation */
	uint64_t *gen;		     /* [cap]; 0 = nothing counted */
	uint32_t *dom;		     /* [cap * nc]: domain index or MEMO_NONE */
	uint32_t *cnt;		     /* [cap * nc]: matching pods counted */
	uint32_t stamp;
	struct memo_doms d[MEMO_MAX_C];
};

/* The memos of one plugin instance, shared by its concurrent cycles. */
struct pts_memo_set {
	pthread_mutex_t mu;
	uint64_t clock;
	struct memo e[MEMO_ENTRIES];
};

static void memo_clear(struct memo *m)
{
	for (uint32_t i = 0; i < MEMO_MAX_C; i++) {
		free(m->d[i].v);
		free(m->d[i].order);
		tmap_free(&m->d[i].idx);
		csel_free(&m->sel[i]);
		free(m->vals[i]);
	}
	free(m->gen);
	free(m->dom);
	free(m->cnt);
	memset(m, 0, sizeof(*m));
}

static struct pts_memo_set *memo_set_new(void)
{
	struct pts_memo_set *ms = sx_calloc(1, sizeof(*ms));

	if (ms && pthread_mutex_init(&ms->mu, NULL) != 0) {
		free(ms);
		ms = NULL;
	}
	return ms;
}

static void memo_set_free(struct pts_memo_set *ms)
{
	if (!ms)
		return;
	for (uint32_t j = 0; j < MEMO_ENTRIES; j++)
		memo_clear(&ms->e[j]);
	pthread_mutex_destroy(&ms->mu);
	free(ms);
}

static bool csel_equal(const struct csel *a, const struct csel *b)
{
	if (a->nothing != b->nothing || a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct sx_requirement *x = &a->reqs[i], *y = &b->reqs[i];
		if (x->key != y->key || x->op != y->op || x->nvalues != y->nvalues ||
		    (x->nvalues && memcmp(x->values, y->values, sizeof(*x->values) * x->nvalues)))
			return false;
	}
	return true;
}

static bool memo_matches(const struct memo *m, const struct cset *cs, sx_str ns)
{
	if (!m->last_use || m->ns != ns || m->nc != cs->n)
		return false;
	for (uint32_t i = 0; i < cs->n; i++)
		if (m->key[i] != cs->v[i].key || !csel_equal(&m->sel[i], &cs->v[i].sel))
			return false;
	return true;
}

/* Makes m the memo of (cs, ns), empty. */
static int memo_init(struct memo *m, const struct cset *cs, sx_str ns)
{
	memo_clear(m);
	m->ns = ns;
	m->nc = cs->n;
	for (uint32_t i = 0; i < cs->n; i++) {
		const struct csel *src = &cs->v[i].sel;
		uint32_t nv = 0, at = 0;
		m->key[i] = cs->v[i].key;
		if (csel_clone(&m->sel[i], src) < 0)
			goto out_clear;
		for (uint32_t j = 0; j < src->n; j++)
			nv += src->reqs[j].nvalues;
		m->vals[i] = malloc(sizeof(sx_str) * (nv + 1));
		if (!m->vals[i])
			goto out_clear;
		for (uint32_t j = 0; j < src->n; j++) {
			struct sx_requirement *r = &m->sel[i].reqs[j];
			if (r->values == &m->sel[i].eq[j] || r->nvalues == 0)
				continue;
			memcpy(&m->vals[i][at], r->values, sizeof(sx_str) * r->nvalues);
			r->values = &m->vals[i][at];
			at += r->nvalues;
		}
	}
	m->last_use = 1;
	return 0;
out_clear:
	memo_clear(m);
	return SX_ENOMEM;
}

static int memo_grow(struct memo *m, uint32_t n)
{
	uint32_t cap = m->cap ? m->cap : 64, nc = m->nc ? m->nc : 1;
	while (cap < n)
		cap *= 2;
	uint64_t *gen = realloc(m->gen, sizeof(*gen) * cap);
	if (gen)
		m->gen = gen;
	uint32_t *dom = realloc(m->dom, sizeof(*dom) * cap * nc);
	if (dom)
		m->dom = dom;
	uint32_t *cnt = realloc(m->cnt, sizeof(*cnt) * cap * nc);
	if (cnt)
		m->cnt = cnt;
	if (!gen || !dom || !cnt)
		return SX_ENOMEM;
	memset(m->gen + m->cap, 0, sizeof(*gen) * (cap - m->cap));
	m->cap = cap;
	return 0;
}

/* Index of domain `value` of constraint i, added when new. */
static int64_t memo_domain(struct memo_doms *d, sx_str value)
{
	int64_t slot = tmap_find(&d->idx, value);
	if (slot >= 0)
		return d->idx.vals[slot];
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 8;
		struct memo_dom *v = realloc(d->v, sizeof(*v) * cap);
		if (v)
			d->v = v;
		uint32_t *order = realloc(d->order, sizeof(*order) * cap);
		if (order)
			d->order = order;
		if (!v || !order)
			return SX_ENOMEM;
		d->cap = cap;
	}
	if (tmap_add(&d->idx, value, d->n) < 0)
		return SX_ENOMEM;
	d->v[d->n] = (struct memo_dom){.value = value};
	return d->n++;
}

/* Takes node slot k's contribution out of the sums. */
static void memo_drop(struct memo *m, uint32_t k)
{
	if (m->gen[k] == 0)
		return;
	for (uint32_t i = 0; i < m->nc; i++) {
		uint32_t d = m->dom[k * m->nc + i];
		if (d == MEMO_NONE)
			continue;
		m->d[i].v[d].nodes--;
		m->d[i].v[d].pods -= m->cnt[k * m->nc + i];
	}
	m->gen[k] = 0;
}

/* Counts ni into node slot k (count_node with every inclusion true). */
static int memo_count(struct memo *m, const struct cset *cs, uint32_t k,
		      const struct sx_node_info *ni)
{
	const struct sx_node *node = ni->node;
	bool eligible = node && node_has_all_keys(node, cs);
	sx_str v;
	for (uint32_t i = 0; i < m->nc; i++) {
		uint32_t at = k * m->nc + i;
		m->dom[at] = MEMO_NONE;
		if (!eligible)
			continue;
		sx_node_label(node, cs->v[i].key, &v);
		int64_t d = memo_domain(&m->d[i], v);
		if (d < 0)
			return SX_ENOMEM;
		m->dom[at] = (uint32_t)d;
		m->cnt[at] = (uint32_t)count_matching(ni, &cs->v[i].sel, m->ns);
		m->d[i].v[d].nodes++;
		m->d[i].v[d].pods += m->cnt[at];
	}
	m->gen[k] = ni->generation;
	return 0;
}

/* Brings m up to snap and lists each constraint's domains in the order of
 * their first eligible node. */
static int memo_sync(struct memo *m, const struct cset *cs, const struct sx_snapshot *snap)
{
	struct sx_node_info *const *nodes = snap->nodes;
	uint32_t n = snap->nnodes, nc = m->nc, left = 0;
	if (n > m->cap && memo_grow(m, n) < 0)
		return SX_ENOMEM;
	for (uint32_t k = n; k < m->used; k++)
		memo_drop(m, k);
	/* Every node, by generation: almost all are the ones counted before. */
	const uint64_t *gen = m->gen;
	for (uint32_t k = 0; k < n; k++) {
		if (k + 8 < n)
			__builtin_prefetch(nodes[k + 8]);
		if (gen[k] == nodes[k]->generation)
			continue;
		memo_drop(m, k);
		if (memo_count(m, cs, k, nodes[k]) < 0) {
			m->used = n > m->used ? n : m->used;
			return SX_ENOMEM;
		}
	}
	m->used = n;
	/* The domains holding an eligible node, in the order of their first
	 * one: from the front until each has been seen (a few nodes for
	 * zones, every node for hostnames). */
	if (++m->stamp == 0)
		m->stamp = 1;
	for (uint32_t i = 0; i < nc; i++) {
		m->d[i].norder = 0;
		for (uint32_t j = 0; j < m->d[i].n; j++)
			left += m->d[i].v[j].nodes > 0;
	}
	for (uint32_t k = 0; k < n && left > 0; k++) {
		for (uint32_t i = 0; i < nc; i++) {
			uint32_t d = m->dom[k * nc + i];
			struct memo_doms *md = &m->d[i];
			if (d == MEMO_NONE || md->v[d].stamp == m->stamp)
				continue;
			md->v[d].stamp = m->stamp;
			md->order[md->norder++] = d;
			left--;
		}
	}
	return 0;
}

/* Can the memo count this pod's constraints (see above)? */
static bool memo_applies(const struct cset *cs, const struct sx_pod *pod)
{
	const struct sx_node_affinity *na = pod->affinity ? pod->affinity->node_affinity : NULL;
	bool any_node_rule = pod->node_selector.n > 0 || (na && na->required);
	if (cs->n > MEMO_MAX_C)
		return false;
	for (uint32_t i = 0; i < cs->n; i++)
		if (cs->v[i].honor_taints || (cs->v[i].honor_affinity && any_node_rule))
			return false;
	return true;
}

/* f->counts from the memo; 1 when it does not apply or failed (the caller
 * counts node by node), 0 done, SX_ENOMEM. */
static int memo_counts(struct filter_state *f, const struct sx_pod *pod,
		       const struct sx_snapshot *snap)
{
	struct pts_memo_set *ms = f->memo;
	struct memo *m = NULL, *lru;
	int rc = 0;
	if (!ms || !memo_applies(&f->cs, pod))
		return 1;
	lru = &ms->e[0];
	pthread_mutex_lock(&ms->mu);
	for (uint32_t j = 0; j < MEMO_ENTRIES && !m; j++) {
		if (memo_matches(&ms->e[j], &f->cs, pod->meta.ns))
			m = &ms->e[j];
		else if (ms->e[j].last_use < lru->last_use)
			lru = &ms->e[j];
	}
	/* A domain table grown past its nodes (node churn on hostname keys):
	 * start again. */
	for (uint32_t i = 0; m && i < m->nc; i++)
		if (m->d[i].n > 2 * m->cap + 64) {
			lru = m;
			m = NULL;
		}
	if (!m) {
		m = lru;
		if (memo_init(m, &f->cs, pod->meta.ns) < 0) {
			rc = 1;
			goto out_unlock;
		}
	}
	m->last_use = ++ms->clock;
	if (memo_sync(m, &f->cs, snap) < 0) {
		memo_clear(m);
		rc = 1;
		goto out_unlock;
	}
	for (uint32_t i = 0; i < m->nc; i++) {
		const struct memo_doms *md = &m->d[i];
		for (uint32_t j = 0; j < md->norder; j++) {
			const struct memo_dom *d = &md->v[md->order[j]];
			if (tmap_add(&f->counts[i], d->value, d->pods) < 0) {
				rc = SX_ENOMEM;
				goto out_unlock;
			}
		}
	}
out_unlock:
	pthread_mutex_unlock(&ms->mu);
	return rc;
}

static int build_filter_state(struct filter_state *f, const struct sx_pod *pod,
			      const struct sx_snapshot *snap)
{
	uint32_t n = f->cs.n;
	int rc;
	f->counts = sx_calloc(n + 1, sizeof(*f->counts));
	f->paths = sx_calloc(n + 1, sizeof(*f->paths));
	if (!f->counts || !f->paths)
		return SX_ENOMEM;
	rc = memo_counts(f, pod, snap);
	if (rc < 0)
		return rc;
	for (uint32_t k = 0; rc == 1 && k < snap->nnodes; k++)
		if (count_node(f, pod, snap->nodes[k]) < 0)
			return SX_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct cpath *p = f->paths[i];
		const struct tmap *m = &f->counts[i];
		p[0] = p[1] = (struct cpath){SX_STR_EMPTY, INT32_MAX};
		for (uint32_t j = 0; j < m->cap; j++)
			if (m->used[j])
				paths_update(p, (sx_str)m->keys[j], m->vals[j]);
	}
	return 0;
}

static struct sx_status *pre_filter_pod_topology_spread(void *self, struct sx_cycle_state *cs,
							const struct sx_pod *pod,
							struct sx_node_set **result)
{
	struct sx_state_pair *st = slot(cs);
	struct filter_state *f = sx_calloc(1, sizeof(*f));
	if (!st || !f || constraints_for(&f->cs, self, pod, cs->snap, SX_DO_NOT_SCHEDULE) < 0)
		goto out_nomem;
	f->memo = ((const struct sx_pts_args *)self)->memo;
	filter_state_free(st->f);
	st->f = NULL;
	if (f->cs.n == 0) {
		filter_state_free(f);
		return sx_status_new(SX_SKIP, NULL);
	}
	for (uint32_t i = 0; i < f->cs.n; i++)
		f->cs.v[i].self_match = csel_matches(&f->cs.v[i].sel, &pod->meta.labels);
	if (build_filter_state(f, pod, cs->snap) < 0)
		goto out_nomem;
	st->f = f;
	return NULL;
out_nomem:
	filter_state_free(f);
	return sx_status_oom();
}

/* preFilterState.updateWithPod: ±1 for each constraint matching p on ni. */
static struct sx_status *update_with_pod(struct sx_cycle_state *cs, const struct sx_pod *pod,
					 const struct sx_pod *p, const struct sx_node_info *ni,
					 int64_t delta)
{
	struct sx_state_pair *st = cs->slots[SX_SLOT_pod_topology_spread];
	struct filter_state *f = st ? st->f : NULL;
	const struct sx_node *node = ni->node;
	sx_str v;
	if (!f)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreFilterPodTopologySpread\" from cycleState: not found");
	if (p->meta.ns != pod->meta.ns || !node || !node_has_all_keys(node, &f->cs))
		return NULL;
	struct inclusion in = node_inclusion(&f->cs, pod, node);
	for (uint32_t i = 0; i < f->cs.n; i++) {
		const struct constraint *c = &f->cs.v[i];
		if (!included(c, &in) || !csel_matches(&c->sel, &p->meta.labels))
			continue;
		sx_node_label(node, c->key, &v);
		if (tmap_add(&f->counts[i], v, delta) < 0)
			return sx_status_oom();
		paths_update(f->paths[i], v, tmap_get(&f->counts[i], v));
	}
	return NULL;
}

static struct sx_status *add_pod_pod_topology_spread(void *self, struct sx_cycle_state *cs,
						     const struct sx_pod *pod,
						     const struct sx_pod *added,
						     const struct sx_node_info *ni)
{
	return update_with_pod(cs, pod, added, ni, 1);
}

static struct sx_status *remove_pod_pod_topology_spread(void *self, struct sx_cycle_state *cs,
							const struct sx_pod *pod,
							const struct sx_pod *removed,
							const struct sx_node_info *ni)
{
	return update_with_pod(cs, pod, removed, ni, -1);
}

/* ---------- Filter ---------- */

static struct sx_status *filter_pod_topology_spread(void *self, const struct sx_cycle_state *cs,
						    const struct sx_pod *pod,
						    const struct sx_node_info *ni)
{
	const struct sx_state_pair *st = slot_const(cs);
	const struct filter_state *f = st ? st->f : NULL;
	sx_str v;
	if (!ni->node)
		return sx_status_new(SX_ERROR, "node not found");
	if (!f)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreFilterPodTopologySpread\" from cycleState: not found");
	for (uint32_t i = 0; i < f->cs.n; i++) {
		const struct constraint *c = &f->cs.v[i];
		if (!sx_node_label(ni->node, c->key, &v))
			return &reject_missing_label;
		/* Fewer eligible domains than minDomains: the global minimum is 0. */
		int64_t min = f->paths[i][0].num;
		if (f->counts[i].n < (uint32_t)c->min_domains)
			min = 0;
		int64_t skew = tmap_get(&f->counts[i], v) + (c->self_match ? 1 : 0) - min;
		if (skew > c->max_skew)
			return &reject_skew;
	}
	return NULL;
}

/* The constraint Filter failed and its numbers, as Filter computes them
 * (upstream podtopologyspread/filtering.go, PodTopologySpread.Filter):
 * matching pods in the node's domain, plus one when the pod matches its
 * own selector, minus the smallest count among the eligible domains (0
 * when there are fewer than minDomains), against maxSkew. */
static void explain_pod_topology_spread(void *self, const struct sx_cycle_state *cs,
					const struct sx_pod *pod, const struct sx_node_info *ni,
					const struct sx_status *st, struct sx_detail *d)
{
	const struct sx_state_pair *sp = slot_const(cs);
	const struct filter_state *f = sp ? sp->f : NULL;
	sx_str v;

	if (!f || !ni || !ni->node)
		return;
	for (uint32_t i = 0; i < f->cs.n; i++) {
		const struct constraint *c = &f->cs.v[i];
		const char *key = sx_str_get(c->key);
		if (!sx_node_label(ni->node, c->key, &v)) {
			sx_detail_text(d, "topologyKey %s: node has no %s label", key, key);
			sx_detail_str(d, "topologyKey", key);
			sx_detail_str(d, "domain", NULL);
			return;
		}
		bool few = f->counts[i].n < (uint32_t)c->min_domains;
		int64_t min = few ? 0 : f->paths[i][0].num;
		int64_t match = tmap_get(&f->counts[i], v), self_match = c->self_match ? 1 : 0;
		int64_t skew = match + self_match - min;
		if (skew <= c->max_skew)
			continue;
		char min_text[300];
		if (few)
			snprintf(min_text, sizeof(min_text), "0 (%u domain(s), minDomains %d)",
				 f->counts[i].n, c->min_domains);
		else
			snprintf(min_text, sizeof(min_text), "%lld in %s", (long long)min,
				 sx_str_get(f->paths[i][0].value));
		sx_detail_text(
			d, "%s=%s: %lld matching pod(s)%s, minimum %s: skew %lld > maxSkew %d", key,
			sx_str_get(v), (long long)match, self_match ? " + this one" : "", min_text,
			(long long)skew, c->max_skew);
		sx_detail_str(d, "topologyKey", key);
		sx_detail_str(d, "domain", sx_str_get(v));
		sx_detail_int(d, "matchingPods", match);
		sx_detail_int(d, "selfMatch", self_match);
		sx_detail_int(d, "minMatchingPods", min);
		sx_detail_int(d, "skew", skew);
		sx_detail_int(d, "maxSkew", c->max_skew);
		return;
	}
}

/* ---------- PreScore / Score ---------- */

/* Domains of the feasible nodes, ignored nodes and per-constraint weights
 * (initPreScoreState). */
static int init_score_state(struct score_state *s, struct sx_node_info *const *nodes, uint32_t n,
			    bool require_all)
{
	uint32_t nc = s->cs.n, nignored = 0;
	sx_str v;
	s->counts = sx_calloc(nc + 1, sizeof(*s->counts));
	s->weights = sx_calloc(nc + 1, sizeof(*s->weights));
	if (!s->counts || !s->weights)
		return SX_ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		const struct sx_node *node = nodes[k]->node;
		if (!node)
			continue;
		if (require_all && !node_has_all_keys(node, &s->cs)) {
			if (tmap_add(&s->ignored, nodes[k]->name, 1) < 0)
				return SX_ENOMEM;
			nignored++;
			continue;
		}
		for (uint32_t i = 0; i < nc; i++) {
			if (s->cs.v[i].key == SX_S_HOSTNAME)
				continue;
			if (!sx_node_label(node, s->cs.v[i].key, &v))
				v = SX_STR_EMPTY;
			if (tmap_add(&s->counts[i], v, 0) < 0)
				return SX_ENOMEM;
		}
	}
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t size = s->cs.v[i].key == SX_S_HOSTNAME ? n - nignored : s->counts[i].n;
		s->weights[i] = log((double)size + 2);
	}
	return 0;
}

/* Adds the matching pods of every snapshot node to the domains counted. */
static void count_domains(struct score_state *s, const struct sx_pod *pod,
			  const struct sx_snapshot *snap, bool require_all)
{
	sx_str v;
	for (uint32_t k = 0; k < snap->nnodes; k++) {
		const struct sx_node_info *ni = snap->nodes[k];
		if (!ni->node || (require_all && !node_has_all_keys(ni->node, &s->cs)))
			continue;
		struct inclusion in = node_inclusion(&s->cs, pod, ni->node);
		for (uint32_t i = 0; i < s->cs.n; i++) {
			const struct constraint *c = &s->cs.v[i];
			if (!included(c, &in))
				continue;
			if (!sx_node_label(ni->node, c->key, &v))
				v = SX_STR_EMPTY;
			int64_t slot_i = tmap_find(&s->counts[i], v);
			if (slot_i >= 0)
				s->counts[i].vals[slot_i] +=
					count_matching(ni, &c->sel, pod->meta.ns);
		}
	}
}

static struct sx_status *pre_score_pod_topology_spread(void *self, struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       struct sx_node_info *const *nodes,
						       uint32_t n)
{
	const struct sx_pts_args *a = self;
	bool require_all = pod->nspread > 0 || !a->system_defaulted;
	struct sx_state_pair *st;
	struct score_state *s;

	if (cs->snap->nnodes == 0)
		return sx_status_new(SX_SKIP, NULL);
	st = slot(cs);
	s = sx_calloc(1, sizeof(*s));
	if (!st || !s || constraints_for(&s->cs, a, pod, cs->snap, SX_SCHEDULE_ANYWAY) < 0)
		goto out_nomem;
	score_state_free(st->s);
	st->s = NULL;
	if (s->cs.n == 0) {
		score_state_free(s);
		return sx_status_new(SX_SKIP, NULL);
	}
	if (init_score_state(s, nodes, n, require_all) < 0)
		goto out_nomem;
	count_domains(s, pod, cs->snap, require_all);
	st->s = s;
	return NULL;
out_nomem:
	score_state_free(s);
	return sx_status_oom();
}

static struct sx_status *score_pod_topology_spread(void *self, const struct sx_cycle_state *cs,
						   const struct sx_pod *pod,
						   const struct sx_node_info *ni, int64_t *score)
{
	const struct sx_state_pair *st = slot_const(cs);
	const struct score_state *s = st ? st->s : NULL;
	double total = 0;
	sx_str v;
	*score = 0;
	if (!s)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreScorePodTopologySpread\" from cycleState: not found");
	if (!ni->node || tmap_has(&s->ignored, ni->name))
		return NULL;
	for (uint32_t i = 0; i < s->cs.n; i++) {
		const struct constraint *c = &s->cs.v[i];
		if (!sx_node_label(ni->node, c->key, &v))
			continue;
		int64_t cnt = c->key == SX_S_HOSTNAME ? count_matching(ni, &c->sel, pod->meta.ns)
						      : tmap_get(&s->counts[i], v);
		total += (double)cnt * s->weights[i] + (double)(c->max_skew - 1);
	}
	*score = (int64_t)round(total);
	return NULL;
}

/* Fewer matching pods score higher; ignored nodes score 0. */
static struct sx_status *normalize_score_pod_topology_spread(void *self,
							     const struct sx_cycle_state *cs,
							     const struct sx_pod *pod,
							     struct sx_node_score *scores,
							     uint32_t n)
{
	const struct sx_state_pair *st = slot_const(cs);
	const struct score_state *s = st ? st->s : NULL;
	int64_t lo = INT64_MAX, hi = 0;
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (tmap_has(&s->ignored, scores[i].node))
			continue;
		if (scores[i].score < lo)
			lo = scores[i].score;
		if (scores[i].score > hi)
			hi = scores[i].score;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (tmap_has(&s->ignored, scores[i].node))
			scores[i].score = 0;
		else if (hi == 0)
			scores[i].score = SX_MAX_NODE_SCORE;
		else
			scores[i].score = SX_MAX_NODE_SCORE * (hi + lo - scores[i].score) / hi;
	}
	return NULL;
}

/* ---------- args ---------- */

static void *init_pod_topology_spread(const struct cJSON *json, struct sx_handle *h,
				      struct sx_error *err)
{
	struct sx_pts_args *a = sx_calloc(1, sizeof(*a));

	if (!a) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (sx_pts_args_read(json, a, err) < 0) {
		free(a);
		return NULL;
	}
	a->memo = memo_set_new();
	if (!a->memo) {
		free(a->v);
		free(a);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	return a;
}

static void destroy_pod_topology_spread(void *self)
{
	struct sx_pts_args *a = self;
	if (!a)
		return;
	memo_set_free(a->memo);
	free(a->v);
	free(a);
}

/* System defaulting keeps no constraints in the args (upstream applies
 * its built-in ones at run time), List shows them. */
static void write_args_pod_topology_spread(const void *self, struct sx_jw *w)
{
	const struct sx_pts_args *a = self;

	if (a->system_defaulted) {
		sx_jw_kstr(w, "defaultingType", "System");
		return;
	}
	sx_jw_karray(w, "defaultConstraints");
	for (uint32_t i = 0; i < a->n; i++) {
		const struct sx_pts_dconstraint *d = &a->v[i];

		sx_jw_object(w);
		sx_jw_kint(w, "maxSkew", d->max_skew);
		sx_jw_kstr(w, "topologyKey", sx_str_get(d->key));
		sx_jw_kstr(w, "whenUnsatisfiable",
			   d->when == SX_DO_NOT_SCHEDULE ? "DoNotSchedule" : "ScheduleAnyway");
		if (d->min_domains)
			sx_jw_kint(w, "minDomains", d->min_domains);
		if (d->aff_policy)
			sx_jw_kstr(w, "nodeAffinityPolicy", sx_pts_policies[d->aff_policy - 1]);
		if (d->taint_policy)
			sx_jw_kstr(w, "nodeTaintsPolicy", sx_pts_policies[d->taint_policy - 1]);
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
	sx_jw_kstr(w, "defaultingType", "List");
}

/* PodTopologySpread.SignPod (podtopologyspread/plugin.go): spreading is
 * not local to a pod and a node, so a pod with constraints, its own or
 * the default ones (System defaulting included), is not signable. */
static struct sx_status *sign_pod_topology_spread(void *self, const struct sx_pod *pod,
						  uint32_t *signers)
{
	const struct sx_pts_args *a = self;

	(void)signers;
	if (pod->nspread > 0)
		return sx_status_new(SX_UNSCHEDULABLE,
				     "pods with topology constraints are not signable");
	if (a->system_defaulted || a->n > 0)
		return sx_status_new(SX_UNSCHEDULABLE,
				     "pods with default topology constraints are not signable");
	return NULL;
}

const struct sx_plugin sx_plugin_pod_topology_spread = {
	.name = NAME,
	.init = init_pod_topology_spread,
	.destroy = destroy_pod_topology_spread,
	.args_kind = "PodTopologySpreadArgs",
	.write_args = write_args_pod_topology_spread,
	.state_clone = state_clone_pod_topology_spread,
	.state_free = state_free_pod_topology_spread,
	.pre_filter = pre_filter_pod_topology_spread,
	.add_pod = add_pod_pod_topology_spread,
	.remove_pod = remove_pod_pod_topology_spread,
	.filter = filter_pod_topology_spread,
	.pre_score = pre_score_pod_topology_spread,
	.score = score_pod_topology_spread,
	.normalize_score = normalize_score_pod_topology_spread,
	.events = sx_events_pod_topology_spread,
	.explain = explain_pod_topology_spread,
	.sign = sign_pod_topology_spread,
};
