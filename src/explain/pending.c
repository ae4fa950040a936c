/* Whole-cluster pending report (include/schedext/pending.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/explain.h"
#include "schedext/pending.h"
#include "schedext/post_filter.h"

#define TEXT_NAMES_PER_GROUP 10

/* One pending pod's verdict. */
struct verdict {
	const struct sx_pod *pod; /* reference */
	const char *plugin;	  /* static plugin name; NULL = fits now */
	char *reason;		  /* the blocking reason, or "schedulable now" */
	char *message;		  /* FitError text, NULL when it fits */
	sx_str node;		  /* where it would go when it fits */
	uint32_t rejected, num_nodes;
};

struct collect {
	const struct sx_config *cfg;
	const char *ns;
	uint32_t n, cap;
	struct verdict *v;
	bool failed;
};

static void collect_pod(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct collect *c = ctx;
	const struct sx_pod *pod = obj->obj;

	if (node != SX_STR_EMPTY || assumed || pod->deleting || c->failed)
		return;
	if (c->ns && strcmp(sx_str_get(pod->meta.ns), c->ns) != 0)
		return;
	if (!sx_config_profile(c->cfg, sx_str_get(pod->scheduler_name)))
		return; /* another scheduler's pod */
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 64;
		struct verdict *v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			c->failed = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct verdict){.pod = sx_pod_ref(pod), .node = SX_STR_EMPTY};
}

/* (plugin, reason) rejecting the most nodes; ties: the smaller pair. */
struct tally {
	const char *plugin, *reason;
	uint32_t n;
};

static void count_reason(struct tally *t, uint32_t *nt, uint32_t max, const char *plugin,
			 const char *reason, uint32_t by)
{
	for (uint32_t i = 0; i < *nt; i++) {
		if (t[i].plugin == plugin && strcmp(t[i].reason, reason) == 0) {
			t[i].n += by;
			return;
		}
	}
	if (*nt < max)
		t[(*nt)++] = (struct tally){plugin, reason, by};
}

static bool tally_better(const struct tally *a, const struct tally *b)
{
	int c;
	if (a->n != b->n)
		return a->n > b->n;
	c = strcmp(a->plugin ? a->plugin : "", b->plugin ? b->plugin : "");
	return c ? c < 0 : strcmp(a->reason, b->reason) < 0;
}

#define MAX_DISTINCT_REASONS 256

/* The blocking reason of a failed cycle into v. */
static int blocking_reason(const struct sx_cycle_result *res, struct verdict *v)
{
	struct tally t[MAX_DISTINCT_REASONS];
	uint32_t nt = 0, best = 0;
	char msg[2048];

	if (res->pre_filter) {
		v->plugin = res->pre_filter->plugin;
		v->rejected = res->num_all_nodes;
		v->reason = strdup(sx_status_message(res->pre_filter, msg, sizeof(msg)));
		return v->reason ? 0 : SX_ENOMEM;
	}
	for (uint32_t i = 0; i < res->num_all_nodes; i++) {
		const struct sx_status *st =
			res->statuses[i] ? res->statuses[i] : res->absent_status;
		if (!st)
			continue;
		v->rejected++;
		for (unsigned r = 0; r < st->nreasons; r++)
			count_reason(t, &nt, MAX_DISTINCT_REASONS, st->plugin, st->reasons[r], 1);
	}
	for (uint32_t i = 1; i < nt; i++)
		if (tally_better(&t[i], &t[best]))
			best = i;
	v->plugin = nt ? t[best].plugin : NULL;
	v->reason = strdup(nt ? t[best].reason : "no node fits");
	return v->reason ? 0 : SX_ENOMEM;
}

static int judge(const struct sx_config *cfg, struct sx_pool *pool, const struct sx_snapshot *snap,
		 struct verdict *v)
{
	const struct sx_profile *prof = sx_config_profile(cfg, sx_str_get(v->pod->scheduler_name));
	uint64_t rng = 0x5eed;
	struct sx_cycle_opts opts = {
		.snap = snap, .mode = SX_CYCLE_FULL, .percentage = 100, .rng = &rng, .pool = pool};
	struct sx_cycle_result res;
	char msg[2048];
	int rc = sx_schedule(prof, v->pod, &opts, &res);

	v->num_nodes = res.num_all_nodes;
	if (rc < 0) {
		sx_cycle_result_free(&res);
		return rc;
	}
	bool fits = res.selected >= 0;
	if (fits) {
		v->node = snap->nodes[res.selected]->name;
		v->reason = strdup("schedulable now");
	} else if (res.error) {
		v->plugin = res.error->plugin;
		v->reason = strdup(sx_status_message(res.error, msg, sizeof(msg)));
		v->message = strdup(v->reason ? v->reason : "");
	} else {
		/* The FailedScheduling message, PostFilter's words included, made
		 * as the standalone scheduler makes it (a dry run). */
		struct sx_fit_outcome fo = {0};

		rc = blocking_reason(&res, v);
		if (rc == 0 && sx_fit_error_post_filter(prof, v->pod, &res, true, NULL, &fo) == 0)
			v->message = strdup(fo.message);
		sx_fit_outcome_free(&fo);
	}
	sx_cycle_result_free(&res);
	return rc < 0 || !v->reason || (!fits && !v->message) ? SX_ENOMEM : 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct verdict *x = a, *y = b;
	int c = strcmp(x->plugin ? x->plugin : "", y->plugin ? y->plugin : "");
	char kx[512], ky[512];
	if (c)
		return c;
	c = strcmp(x->reason, y->reason);
	if (c)
		return c;
	return strcmp(sx_pod_key(x->pod, kx, sizeof(kx)), sx_pod_key(y->pod, ky, sizeof(ky)));
}

static bool same_group(const struct verdict *a, const struct verdict *b)
{
	return a->plugin == b->plugin && strcmp(a->reason, b->reason) == 0;
}

/* Group boundaries [start[i], start[i+1]) of the sorted verdicts, ordered
 * by size (descending), then by (plugin, reason). */
struct group {
	uint32_t start, n;
};

static int cmp_size(const void *a, const void *b, void *ctx)
{
	const struct group *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static struct group *make_groups(const struct verdict *v, uint32_t n, uint32_t *ng)
{
	struct group *g = calloc(n + 1, sizeof(*g));
	*ng = 0;
	for (uint32_t i = 0; g && i < n; i++) {
		if (*ng && same_group(&v[g[*ng - 1].start], &v[i]))
			g[*ng - 1].n++;
		else
			g[(*ng)++] = (struct group){i, 1};
	}
	if (g)
		qsort_r(g, *ng, sizeof(*g), cmp_size, NULL);
	return g;
}

static void write_json(struct sx_buf *b, const struct verdict *v, uint32_t n, uint32_t skipped,
		       const struct group *g, uint32_t ng)
{
	char key[512];
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	sx_jw_kint(&w, "pods", n + skipped);
	if (skipped)
		sx_jw_kint(&w, "notEvaluated", skipped);
	sx_jw_karray(&w, "groups");
	for (uint32_t i = 0; i < ng; i++) {
		const struct verdict *first = &v[g[i].start];
		sx_jw_object(&w);
		sx_jw_key(&w, "plugin");
		sx_jw_str_or_null(&w, first->plugin);
		sx_jw_kstr(&w, "reason", first->reason);
		sx_jw_kint(&w, "count", g[i].n);
		sx_jw_karray(&w, "pods");
		for (uint32_t j = g[i].start; j < g[i].start + g[i].n; j++) {
			sx_jw_object(&w);
			sx_jw_kstr(&w, "pod", sx_pod_key(v[j].pod, key, sizeof(key)));
			sx_jw_kint(&w, "nodesRejected", v[j].rejected);
			sx_jw_kint(&w, "numNodes", v[j].num_nodes);
			sx_jw_key(&w, "message");
			sx_jw_str_or_null(&w, v[j].message);
			sx_jw_key(&w, "node");
			sx_jw_str_or_null(&w,
					  v[j].node != SX_STR_EMPTY ? sx_str_get(v[j].node) : NULL);
			sx_jw_end_object(&w);
		}
		sx_jw_end_array(&w);
		sx_jw_end_object(&w);
	}
	sx_jw_end_array(&w);
	sx_jw_end_object(&w);
	sx_buf_putc(b, '\n');
}

static void write_text(struct sx_buf *b, const struct verdict *v, uint32_t n, uint32_t skipped,
		       const struct group *g, uint32_t ng)
{
	char key[512];
	sx_buf_printf(b, "%u pending pod(s)\n", n + skipped);
	if (skipped)
		sx_buf_printf(b, "%u pod(s) not evaluated within the time budget\n", skipped);
	if (ng)
		sx_buf_printf(b, "\n%-6s %-28s %s\n", "PODS", "PLUGIN", "REASON");
	for (uint32_t i = 0; i < ng; i++) {
		const struct verdict *first = &v[g[i].start];
		uint32_t shown = g[i].n < TEXT_NAMES_PER_GROUP ? g[i].n : TEXT_NAMES_PER_GROUP;
		sx_buf_printf(b, "%-6u %-28s %s\n", g[i].n, first->plugin ? first->plugin : "-",
			      first->reason);
		sx_buf_puts(b, "       ");
		for (uint32_t j = 0; j < shown; j++) {
			sx_buf_puts(b, j ? ", " : "");
			sx_buf_puts(b, sx_pod_key(v[g[i].start + j].pod, key, sizeof(key)));
		}
		if (g[i].n > shown)
			sx_buf_printf(b, " and %u more", g[i].n - shown);
		sx_buf_putc(b, '\n');
	}
}

static void verdicts_free(struct collect *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		sx_pod_unref(c->v[i].pod);
		free(c->v[i].reason);
		free(c->v[i].message);
	}
	free(c->v);
}

/* Gangs: the verdict of each pod group, once per group (sx_explain_gang_status). */
struct gang_verdict {
	sx_str ns, group;
	bool cosched;		  /* scheduler-plugins' PodGroup (Coscheduling) */
	int rc;			  /* 1: a member of a group in the snapshot */
	struct sx_status *status; /* NULL: schedulable now */
};

struct gangs {
	uint32_t n, cap;
	struct gang_verdict *g;
};

static const struct gang_verdict *gang_of(struct gangs *gs, struct sx_cache *cache,
					  const struct sx_profile *prof, struct sx_pool *pool,
					  const struct sx_snapshot *snap, const struct sx_pod *pod,
					  sx_str group, bool cosched)
{
	struct gang_verdict *v;

	for (uint32_t i = 0; i < gs->n; i++)
		if (gs->g[i].ns == pod->meta.ns && gs->g[i].group == group &&
		    gs->g[i].cosched == cosched)
			return &gs->g[i];
	if (gs->n == gs->cap) {
		uint32_t cap = gs->cap ? gs->cap * 2 : 8;
		struct gang_verdict *g = realloc(gs->g, cap * sizeof(*g));

		if (!g)
			return NULL;
		gs->g = g;
		gs->cap = cap;
	}
	v = &gs->g[gs->n];
	*v = (struct gang_verdict){pod->meta.ns, group, cosched, 0, NULL};
	v->rc = sx_explain_gang_status(cache, snap, prof, pod, pool, &v->status);
	if (v->rc < 0)
		return NULL;
	gs->n++;
	return v;
}

/* A member of a gang that cannot be scheduled now is blocked by its group:
 * the gating plugin (GangScheduling, or Coscheduling) with the group's
 * words (its own FitError stays its message when it does not fit by
 * itself). */
static int judge_gang(struct gangs *gs, struct sx_cache *cache, const struct sx_pending_opts *o,
		      const struct sx_snapshot *snap, struct verdict *v)
{
	const struct sx_profile *prof =
		sx_config_profile(o->cfg, sx_str_get(v->pod->scheduler_name));
	const struct gang_verdict *g;
	char msg[2048];
	bool cosched;
	sx_str group = sx_explain_group_of(prof, v->pod, &cosched);

	if (group == SX_STR_EMPTY)
		return 0;
	g = gang_of(gs, cache, prof, o->pool, snap, v->pod, group, cosched);
	if (!g)
		return SX_ENOMEM;
	if (g->rc <= 0 || !g->status)
		return 0;
	sx_status_message(g->status, msg, sizeof(msg));
	free(v->reason);
	v->reason = strdup(msg);
	v->plugin = cosched ? "Coscheduling" : "GangScheduling";
	if (!v->message)
		v->message = strdup(msg);
	v->node = SX_STR_EMPTY;
	return v->reason && v->message ? 0 : SX_ENOMEM;
}

int sx_pending_report(struct sx_cache *cache, const struct sx_pending_opts *o, struct sx_buf *out)
{
	struct gangs gs = {0};
	struct collect c = {.cfg = o->cfg, .ns = o->ns};
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	struct group *g = NULL;
	uint32_t ng = 0, judged = 0;
	int rc = snap ? 0 : SX_ENOMEM;

	if (rc == 0)
		sx_cache_visit(cache, SX_KIND_POD, collect_pod, &c);
	if (c.failed)
		rc = SX_ENOMEM;
	/* pods in the cache's order; past the deadline the rest are counted */
	for (; rc == 0 && judged < c.n && (!o->deadline || sx_now_s() < o->deadline); judged++) {
		rc = judge(o->cfg, o->pool, snap, &c.v[judged]);
		if (rc == 0)
			rc = judge_gang(&gs, cache, o, snap, &c.v[judged]);
	}
	if (rc == 0) {
		if (judged) /* c.v is NULL when nothing is pending */
			qsort(c.v, judged, sizeof(*c.v), cmp_group);
		g = make_groups(c.v, judged, &ng);
		rc = g ? 0 : SX_ENOMEM;
	}
	if (rc == 0 && o->text)
		write_text(out, c.v, judged, c.n - judged, g, ng);
	else if (rc == 0)
		write_json(out, c.v, judged, c.n - judged, g, ng);
	free(g);
	for (uint32_t i = 0; i < gs.n; i++)
		sx_status_free(gs.g[i].status);
	free(gs.g);
	verdicts_free(&c);
	sx_snapshot_unref(snap);
	return rc;
}
