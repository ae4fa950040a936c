/* Placing pods one after another with assume, and the what-if report
 * (include/schedext/whatif.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/decode.h"
#include "schedext/intern.h"
#include "schedext/post_filter.h"
#include "schedext/whatif.h"

#define TEXT_NAMES_PER_GROUP 10

void sx_placements_free(struct sx_placements *p)
{
	for (uint32_t i = 0; i < p->nmsgs; i++)
		free(p->msgs[i]);
	free(p->msgs);
	for (uint32_t i = 0; i < p->n; i++) {
		free(p->v[i].pod);
		for (uint32_t k = 0; k < p->v[i].nvictims; k++)
			free(p->v[i].victims[k]);
		free(p->v[i].victims);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* ---------- the what-if scheduling queue ----------
 *
 * kube-scheduler pops its activeQ in the order of the profile's QueueSort
 * (PrioritySort: upstream queuesort/priority_sort.go Less, higher priority
 * first, then the earlier queued timestamp). What-if queues every pod at
 * once, so a pod's creationTimestamp stands for the time it was queued and
 * the order the pods were named in breaks the remaining ties. A pod that no
 * node fits runs PostFilter as the scheduler would (a dry run of the shared
 * FitError path); when DefaultPreemption nominates a node, the victims are
 * evicted from the what-if cache and queued again as pending pods, and the
 * preemptor is placed on the nominated node (upstream's next attempt tries
 * that node first: evaluateNominatedNode). Pods nominated in the cluster
 * (status.nominatedNodeName) are honoured by every other pod's Filter.
 */

struct entry {
	char *key;		  /* "ns/name" */
	const struct sx_pod *pod; /* the pending object (reference) */
	uint32_t seq;		  /* arrival in the what-if queue: the last tie-break */
	int64_t row;		  /* its row of the report, -1 before its first attempt */
};

struct nomination {
	sx_str node;
	const struct sx_pod *pod; /* reference */
	bool on;
};

struct sim {
	struct sx_cache *cache;
	const struct sx_cluster_doc *doc;
	const struct sx_profile *prof;
	struct sx_cycle_opts base;
	struct sx_placements *out;
	uint32_t ne, cape, nh, nn, capn, capv, attempts, max_attempts;
	struct entry *e;
	uint32_t *heap; /* entry indices, a binary min-heap by pops_before */
	struct nomination *nom;
	struct sx_nominator nominator;
};

/* QueueSort's Less, then arrival order: a strict total order. */
static bool pops_before(const struct sim *s, uint32_t a, uint32_t b)
{
	const struct entry *x = &s->e[a], *y = &s->e[b];
	struct sx_queued_pod qx = {x->pod, (double)x->pod->meta.creation_ts};
	struct sx_queued_pod qy = {y->pod, (double)y->pod->meta.creation_ts};

	if (sx_queue_less(s->prof, &qx, &qy))
		return true;
	if (sx_queue_less(s->prof, &qy, &qx))
		return false;
	return x->seq < y->seq;
}

static void heap_push(struct sim *s, uint32_t ei)
{
	uint32_t i = s->nh++;

	s->heap[i] = ei;
	while (i > 0 && pops_before(s, s->heap[i], s->heap[(i - 1) / 2])) {
		uint32_t up = (i - 1) / 2, t = s->heap[up];
		s->heap[up] = s->heap[i];
		s->heap[i] = t;
		i = up;
	}
}

static uint32_t heap_pop(struct sim *s)
{
	uint32_t top = s->heap[0], i = 0;

	s->heap[0] = s->heap[--s->nh];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i, t;
		if (l < s->nh && pops_before(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->nh && pops_before(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return top;
		t = s->heap[m];
		s->heap[m] = s->heap[i];
		s->heap[i] = t;
		i = m;
	}
}

/* Queues the pending pod `key` (its object from the cache). 0, SX_ENOENT
 * when the cache has no such pod, SX_ENOMEM. */
static int enqueue(struct sim *s, const char *key)
{
	const char *slash = strchr(key, '/');
	sx_str node = SX_STR_EMPTY;
	bool assumed = false;
	const struct sx_pod *pod;

	if (!slash)
		return SX_ENOENT;
	pod = sx_cache_get_pod(s->cache, sx_intern_n(key, (size_t)(slash - key)), slash + 1, &node,
			       &assumed);
	if (!pod)
		return SX_ENOENT;
	if (s->ne == s->cape) {
		uint32_t cap = s->cape ? 2 * s->cape : 64;
		struct entry *e = realloc(s->e, cap * sizeof(*e));
		uint32_t *h = e ? realloc(s->heap, cap * sizeof(*h)) : NULL;
		if (e)
			s->e = e;
		if (!h) {
			sx_pod_unref(pod);
			return SX_ENOMEM;
		}
		s->heap = h;
		s->cape = cap;
	}
	s->e[s->ne] = (struct entry){strdup(key), pod, s->ne, -1};
	if (!s->e[s->ne].key) {
		sx_pod_unref(pod);
		return SX_ENOMEM;
	}
	heap_push(s, s->ne++);
	return 0;
}

/* ---------- nominated pods ---------- */

static uint32_t nominated_for_node(void *ctx, sx_str node, const struct sx_pod **out, uint32_t max)
{
	const struct sim *s = ctx;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nn && n < max; i++)
		if (s->nom[i].on && s->nom[i].node == node)
			out[n++] = s->nom[i].pod;
	return n;
}

static int nominate(struct sim *s, const struct sx_pod *pod, sx_str node)
{
	if (s->nn == s->capn) {
		uint32_t cap = s->capn ? 2 * s->capn : 16;
		struct nomination *v = realloc(s->nom, cap * sizeof(*v));
		if (!v)
			return SX_ENOMEM;
		s->nom = v;
		s->capn = cap;
	}
	s->nom[s->nn++] = (struct nomination){node, sx_pod_ref(pod), true};
	s->nominator.none = false;
	return 0;
}

/* The pod's nomination ends: it was placed, or a preemption cleared it. */
static void drop_nomination(struct sim *s, const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < s->nn; i++)
		if (s->nom[i].on && s->nom[i].pod->meta.ns == pod->meta.ns &&
		    strcmp(s->nom[i].pod->meta.name, pod->meta.name) == 0)
			s->nom[i].on = false;
}

struct collect_nominated {
	struct sim *s;
	int rc;
};

static void collect_nominated(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct collect_nominated *c = ctx;
	const struct sx_pod *pod = obj->obj;

	if (c->rc == 0 && node == SX_STR_EMPTY && !assumed && !pod->deleting &&
	    pod->nominated_node != SX_STR_EMPTY)
		c->rc = nominate(c->s, pod, pod->nominated_node);
}

/* ---------- one attempt ---------- */

static int add_row(struct sim *s, struct entry *e)
{
	struct sx_placements *p = s->out;

	if (p->n == s->capv) {
		uint32_t cap = s->capv ? 2 * s->capv : 64;
		struct sx_placement *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return SX_ENOMEM;
		p->v = v;
		s->capv = cap;
	}
	p->v[p->n] = (struct sx_placement){.pod = strdup(e->key), .node = SX_STR_EMPTY};
	if (!p->v[p->n].pod)
		return SX_ENOMEM;
	e->row = p->n++;
	return 0;
}

/* One cycle on the cache's current state, restricted to `only` when it is
 * not SX_STR_EMPTY; on success the pod is assumed there and *node set.
 * Otherwise *res holds the failed cycle (caller frees) and *node is empty. */
static int cycle(struct sim *s, const struct sx_pod *pod, sx_str only, struct sx_snapshot **snap,
		 struct sx_cycle_result *res, sx_str *node)
{
	struct sx_cycle_opts opts = s->base;
	int rc;

	*node = SX_STR_EMPTY;
	*snap = sx_cache_snapshot(s->cache);
	if (!*snap) {
		memset(res, 0, sizeof(*res));
		return SX_ENOMEM;
	}
	opts.snap = *snap;
	opts.nominator = s->nominator.none ? NULL : &s->nominator;
	if (only != SX_STR_EMPTY) {
		opts.candidates = &only;
		opts.ncandidates = 1;
	}
	rc = sx_schedule(s->prof, pod, &opts, res);
	if (rc == 0 && res->selected >= 0) {
		*node = (*snap)->nodes[res->selected]->name;
		rc = sx_cache_assume(s->cache, pod, *node);
		drop_nomination(s, pod);
	}
	return rc;
}

/* Sets row's message to a shared copy of msg (NULL: none). The last
 * messages are searched first: pods of one kind that do not fit follow
 * each other. */
static int set_message(struct sx_placements *p, struct sx_placement *row, const char *msg)
{
	row->message = NULL;
	if (!msg)
		return 0;
	for (uint32_t i = p->nmsgs, k = 0; i > 0 && k < 64; i--, k++)
		if (strcmp(p->msgs[i - 1], msg) == 0) {
			row->message = p->msgs[i - 1];
			return 0;
		}
	if (p->nmsgs == p->capmsgs) {
		uint32_t cap = p->capmsgs ? 2 * p->capmsgs : 16;
		char **v = realloc(p->msgs, cap * sizeof(*v));
		if (!v)
			return SX_ENOMEM;
		p->msgs = v;
		p->capmsgs = cap;
	}
	if (!(p->msgs[p->nmsgs] = strdup(msg)))
		return SX_ENOMEM;
	row->message = p->msgs[p->nmsgs++];
	return 0;
}

/* The victim's pending object: a pod placed earlier in this what-if is
 * forgotten (its pending object comes back); a pod bound in the cluster is
 * deleted and decoded again from the document without spec.nodeName, as
 * the pending pod its controller would make. SX_ENOENT when the document
 * lacks it (then it is only deleted). */
static int make_pending(struct sim *s, const struct sx_pod *v)
{
	char name[256];
	sx_str node = SX_STR_EMPTY;
	bool assumed = false;
	const struct sx_pod *cur =
		sx_cache_get_pod(s->cache, v->meta.ns, v->meta.name, &node, &assumed);
	struct sx_error err = {0};
	cJSON *json, *spec;
	struct sx_pod *pod;

	sx_pod_unref(cur);
	if (assumed)
		return sx_cache_forget(s->cache, v->meta.ns, v->meta.name);
	snprintf(name, sizeof(name), "%s", v->meta.name);
	json = s->doc ? sx_cluster_doc_find(s->doc, "Pod", sx_str_get(v->meta.ns), name) : NULL;
	json = json ? cJSON_Duplicate(json, true) : NULL;
	spec = cJSON_GetObjectItemCaseSensitive(json, "spec");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
	cJSON_DeleteItemFromObjectCaseSensitive(json, "status");
	pod = json ? sx_decode_pod(json, &err) : NULL;
	cJSON_Delete(json);
	sx_cache_delete(s->cache, SX_KIND_POD, v->meta.ns, name);
	if (!pod)
		return err.code == SX_ENOMEM ? SX_ENOMEM : SX_ENOENT;
	return sx_cache_upsert(s->cache, &(struct sx_object){SX_KIND_POD, pod});
}

static void free_victims(struct sx_placement *row)
{
	for (uint32_t k = 0; k < row->nvictims; k++)
		free(row->victims[k]);
	free(row->victims);
	row->victims = NULL;
	row->nvictims = 0;
}

/* Queues a victim again: its entry when it was placed in this what-if,
 * else a new one. */
static int requeue(struct sim *s, const char *key)
{
	for (uint32_t i = 0; i < s->ne; i++)
		if (strcmp(s->e[i].key, key) == 0) {
			heap_push(s, i);
			return 0;
		}
	return enqueue(s, key);
}

/* Evicts the victims of a successful preemption by entry ei (they become
 * pending and queued), clears the nominations DefaultPreemption clears,
 * then places the preemptor on the nominated node. */
static int preempt(struct sim *s, uint32_t ei, const struct sx_fit_outcome *fo)
{
	const struct sx_preempt_result *pr = &fo->preemption;
	struct sx_placement *row = &s->out->v[s->e[ei].row];
	struct sx_cycle_result res;
	struct sx_snapshot *snap = NULL;
	char key[512];
	sx_str node = SX_STR_EMPTY;
	int rc = 0;

	for (uint32_t i = 0; i < pr->nlower_nominated; i++)
		drop_nomination(s, pr->lower_nominated[i]);
	free_victims(row);
	row->victims = calloc(pr->victims.n + 1, sizeof(*row->victims));
	if (!row->victims)
		return SX_ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < pr->victims.n; i++) {
		const struct sx_pod *v = pr->victims.pods[i];
		sx_pod_key(v, key, sizeof(key));
		if (!(row->victims[row->nvictims] = strdup(key)))
			return SX_ENOMEM;
		row->nvictims++;
		rc = make_pending(s, v);
		if (rc == 0)
			rc = requeue(s, key);
		if (rc == SX_ENOENT)
			rc = 0; /* gone for good: nothing to queue */
	}
	if (rc < 0)
		return rc;
	rc = cycle(s, s->e[ei].pod, fo->nominated_node, &snap, &res, &node);
	row->node = node;
	if (rc == 0 && node != SX_STR_EMPTY)
		rc = set_message(s->out, row, NULL);
	else if (rc == 0) /* the node did not take it: it stays nominated there */
		rc = nominate(s, s->e[ei].pod, fo->nominated_node);
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	return rc;
}

/* One scheduling attempt of entry ei. */
static int attempt(struct sim *s, uint32_t ei)
{
	struct entry *e = &s->e[ei];
	struct sx_fit_outcome fo = {0};
	struct sx_cycle_result res;
	struct sx_snapshot *snap;
	struct sx_placement *row;
	char msg[2048];
	sx_str node;
	int rc = e->row < 0 ? add_row(s, e) : 0;

	if (rc < 0)
		return rc;
	rc = cycle(s, e->pod, SX_STR_EMPTY, &snap, &res, &node);
	row = &s->out->v[e->row];
	row->node = node;
	if (rc == 0 && node != SX_STR_EMPTY)
		rc = set_message(s->out, row, NULL);
	else if (rc == 0 && res.error)
		rc = set_message(s->out, row, sx_status_message(res.error, msg, sizeof(msg)));
	else if (rc == 0)
		rc = sx_fit_error_post_filter(s->prof, e->pod, &res, true, &s->nominator, &fo);
	if (rc == 0 && fo.message)
		rc = set_message(s->out, row, fo.message);
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	if (rc == 0 && fo.ran && !fo.status && fo.nominated_node != SX_STR_EMPTY)
		rc = preempt(s, ei, &fo);
	sx_fit_outcome_free(&fo);
	return rc;
}

static void sim_free(struct sim *s)
{
	for (uint32_t i = 0; i < s->ne; i++) {
		free(s->e[i].key);
		sx_pod_unref(s->e[i].pod);
	}
	for (uint32_t i = 0; i < s->nn; i++)
		sx_pod_unref(s->nom[i].pod);
	free(s->e);
	free(s->heap);
	free(s->nom);
}

int sx_place_pods(struct sx_cache *cache, const struct sx_cluster_doc *doc,
		  const struct sx_config *cfg, const struct sx_profile *prof, struct sx_pool *pool,
		  char *const *pods, uint32_t n, double deadline, struct sx_placements *out)
{
	uint32_t next_start = 0;
	uint64_t rng = 0x5eed;
	struct sim s = {
		.cache = cache,
		.doc = doc,
		.prof = prof,
		.out = out,
		.base = {.mode = SX_CYCLE_FULL,
			 .percentage = -1,
			 .global_percentage = cfg->percentage_of_nodes_to_score,
			 .next_start_index = &next_start,
			 .rng = &rng,
			 .pool = pool},
	};
	struct collect_nominated cn = {&s, 0};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	s.nominator = (struct sx_nominator){nominated_for_node, &s, true};
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		rc = enqueue(&s, pods[i]) == SX_ENOMEM ? SX_ENOMEM : 0;
	sx_cache_visit(cache, SX_KIND_POD, collect_nominated, &cn);
	rc = rc ? rc : cn.rc;
	/* Every preemption places a pod of a priority above all it evicts, so
	 * the queue drains; the bound only guards against a plugin that keeps
	 * nominating without making room. */
	s.max_attempts = 16 * (n + 16);
	while (rc == 0 && s.nh > 0) {
		if ((deadline && sx_now_s() >= deadline) || s.attempts++ >= s.max_attempts) {
			out->not_evaluated = s.nh;
			break;
		}
		rc = attempt(&s, heap_pop(&s));
	}
	for (uint32_t i = 0; i < out->n; i++)
		out->placed += out->v[i].node != SX_STR_EMPTY;
	sim_free(&s);
	return rc;
}

/* ---------- report ---------- */

struct count {
	const char *key;
	uint32_t n;
	uint32_t first; /* first placement with this key */
};

static int cmp_key_then_first(const void *a, const void *b)
{
	const struct count *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->first > y->first) - (x->first < y->first);
}

/* Distinct node names (placed) or messages (not placed) with counts,
 * sorted by key. Caller frees; *n set. NULL only when out of memory. */
static struct count *tally(const struct sx_placements *p, bool placed, uint32_t *n)
{
	struct count *c = calloc(p->n + 1, sizeof(*c));
	uint32_t m = 0;

	*n = 0;
	for (uint32_t i = 0; c && i < p->n; i++) {
		const struct sx_placement *x = &p->v[i];
		if ((x->node != SX_STR_EMPTY) == placed)
			c[m++] = (struct count){placed ? sx_str_get(x->node) : x->message, 1, i};
	}
	if (!c)
		return NULL;
	qsort(c, m, sizeof(*c), cmp_key_then_first);
	for (uint32_t i = 0; i < m; i++) {
		if (*n && strcmp(c[*n - 1].key, c[i].key) == 0)
			c[*n - 1].n++;
		else
			c[(*n)++] = c[i];
	}
	return c;
}

static void write_json(struct sx_buf *b, const struct sx_placements *p, const char *summary)
{
	uint32_t nn = 0;
	struct count *by_node = tally(p, true, &nn);

	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "summary", summary);
	sx_jw_kint(&w, "pods", p->n + p->not_evaluated);
	sx_jw_kint(&w, "placed", p->placed);
	sx_jw_kint(&w, "unschedulable", p->n - p->placed);
	if (p->not_evaluated)
		sx_jw_kint(&w, "notEvaluated", p->not_evaluated);
	sx_jw_kobject(&w, "byNode");
	for (uint32_t i = 0; by_node && i < nn; i++)
		sx_jw_kint(&w, by_node[i].key, by_node[i].n);
	sx_jw_end_object(&w);
	sx_jw_karray(&w, "placements");
	for (uint32_t i = 0; i < p->n; i++) {
		const struct sx_placement *x = &p->v[i];
		sx_jw_object(&w);
		sx_jw_kstr(&w, "pod", x->pod);
		sx_jw_key(&w, "node");
		sx_jw_str_or_null(&w, x->node != SX_STR_EMPTY ? sx_str_get(x->node) : NULL);
		sx_jw_key(&w, "message");
		sx_jw_str_or_null(&w, x->message);
		if (x->nvictims) {
			sx_jw_karray(&w, "victims");
			for (uint32_t k = 0; k < x->nvictims; k++)
				sx_jw_str(&w, x->victims[k]);
			sx_jw_end_array(&w);
		}
		sx_jw_end_object(&w);
	}
	sx_jw_end_array(&w);
	sx_jw_end_object(&w);
	sx_buf_putc(b, '\n');
	if (!by_node)
		b->failed = true;
	free(by_node);
}

/* The pods of one "did not fit" group, at most TEXT_NAMES_PER_GROUP. */
static void write_group_names(struct sx_buf *b, const struct sx_placements *p, const char *msg,
			      uint32_t total)
{
	uint32_t shown = 0;
	sx_buf_puts(b, "    ");
	for (uint32_t i = 0; i < p->n && shown < TEXT_NAMES_PER_GROUP; i++) {
		if (p->v[i].node != SX_STR_EMPTY || strcmp(p->v[i].message, msg) != 0)
			continue;
		sx_buf_puts(b, shown++ ? ", " : "");
		sx_buf_puts(b, p->v[i].pod);
	}
	if (total > shown)
		sx_buf_printf(b, " and %u more", total - shown);
	sx_buf_putc(b, '\n');
}

/* "Preempted: N pod(s)", then per preemptor the pods it evicted. */
static void write_preempted(struct sx_buf *b, const struct sx_placements *p)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->n; i++)
		n += p->v[i].nvictims;
	if (n)
		sx_buf_printf(b, "\nPreempted: %u pod(s)\n", n);
	for (uint32_t i = 0; i < p->n; i++) {
		const struct sx_placement *x = &p->v[i];
		for (uint32_t k = 0; k < x->nvictims; k++)
			sx_buf_printf(b, "%s%s", k ? ", " : "", x->victims[k]);
		if (x->nvictims)
			sx_buf_printf(b, " by %s (%s)\n", x->pod,
				      x->node != SX_STR_EMPTY ? sx_str_get(x->node) : "not placed");
	}
}

static void write_text(struct sx_buf *b, const struct sx_placements *p, const char *summary)
{
	uint32_t nn = 0, nm = 0;
	struct count *by_node = tally(p, true, &nn);
	struct count *by_msg = tally(p, false, &nm);

	sx_buf_printf(b, "What if: %s\n", summary && *summary ? summary : "no change");
	sx_buf_printf(b, "Placed %u of %u pod(s).\n", p->placed, p->n + p->not_evaluated);
	if (p->not_evaluated)
		sx_buf_printf(b, "%u pod(s) not evaluated within the time budget.\n",
			      p->not_evaluated);
	if (nn)
		sx_buf_printf(b, "\n%-40s %s\n", "NODE", "PODS");
	for (uint32_t i = 0; by_node && i < nn; i++)
		sx_buf_printf(b, "%-40s %u\n", by_node[i].key, by_node[i].n);
	if (nm)
		sx_buf_printf(b, "\nDid not fit: %u pod(s)\n", p->n - p->placed);
	for (uint32_t i = 0; by_msg && i < nm; i++) {
		sx_buf_printf(b, "  %u pod(s): %s\n", by_msg[i].n, by_msg[i].key);
		write_group_names(b, p, by_msg[i].key, by_msg[i].n);
	}
	write_preempted(b, p);
	if (!by_node || !by_msg)
		b->failed = true;
	free(by_node);
	free(by_msg);
}

void sx_placements_write(struct sx_buf *b, const struct sx_placements *p, const char *summary,
			 bool text)
{
	if (text)
		write_text(b, p, summary);
	else
		write_json(b, p, summary);
}
