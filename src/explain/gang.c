/* Why a member of a pod group is pending (explain.h sx_explain_gang): the
 * group's pending members placed as the 1.37 pod-group cycle places them
 * (upstream pkg/scheduler/algorithm_podgroup.go, through
 * sx_pod_group_algorithm in its dry-run mode: each member sees the ones
 * placed before it in a private copy of the snapshot, nothing is assumed
 * in the cache and no Reserve runs), then how many fit, where, which member
 * stopped the group and why on each node, which were not tried, and the
 * group's verdict in GangScheduling's words. Members are in upstream's
 * order as far as the cluster shows it: priority, then creation time, then
 * name (the queue's first-attempt times are not in the cluster). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/explain.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/podgroup.h"
#include "schedext/registry.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

struct members {
	sx_str ns, group;
	uint32_t n, cap, scheduled;
	const struct sx_pod **pods; /* references */
	bool failed;
};

static void collect(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct members *c = ctx;
	const struct sx_pod *p = obj->obj;

	if (p->meta.ns != c->ns || p->scheduling_group != c->group || c->failed)
		return;
	if (node != SX_STR_EMPTY) {
		c->scheduled++;
		return;
	}
	if (p->deleting)
		return;
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 16;
		const struct sx_pod **a = realloc(c->pods, cap * sizeof(*a));

		if (!a) {
			c->failed = true;
			return;
		}
		c->pods = a;
		c->cap = cap;
	}
	c->pods[c->n++] = sx_pod_ref(p);
}

static int member_order(const void *a, const void *b)
{
	const struct sx_pod *x = *(const struct sx_pod *const *)a;
	const struct sx_pod *y = *(const struct sx_pod *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->meta.creation_ts != y->meta.creation_ts)
		return x->meta.creation_ts < y->meta.creation_ts ? -1 : 1;
	return strcmp(x->meta.name, y->meta.name);
}

struct dry {
	struct sx_pool *pool;
};

static int dry_schedule(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
			struct sx_snapshot *snap, struct sx_cycle_result *res)
{
	const struct dry *d = ctx;
	uint64_t rng = 0x5eed;
	struct sx_cycle_opts o = {.snap = snap,
				  .mode = SX_CYCLE_FULL,
				  .percentage = 100,
				  .rng = &rng,
				  .pool = d->pool,
				  .skip_pre_enqueue = true};

	return sx_schedule(prof, pod, &o, res);
}

/* The profile's PlacementFeasible plugins, or GangScheduling's words when
 * it has none (kubectl-schedext runs 1.37's defaults, where GenericWorkload
 * is off: a cluster with PodGroups runs the gate on). GangScheduling's hook
 * reads no instance state. */
static bool has_placement_feasible(const struct sx_profile *prof)
{
	for (unsigned i = 0; i < prof->n[SX_PT_PERMIT]; i++)
		if (prof->points[SX_PT_PERMIT][i].plugin->placement_feasible)
			return true;
	return false;
}

static struct sx_status *gang_words(void *ctx, const struct sx_pod_group *pg,
				    struct sx_placement_progress p)
{
	int idx = sx_plugin_index("GangScheduling");
	const struct sx_plugin *gang = idx >= 0 ? sx_plugins[idx] : NULL;

	if (!gang || !gang->placement_feasible)
		return NULL;
	return sx_status_set_plugin(gang->placement_feasible(NULL, pg, p), gang->name);
}

static const struct sx_pod_group *find_group(const struct sx_snapshot *snap, sx_str ns, sx_str name)
{
	for (uint32_t i = 0; i < snap->npod_groups; i++)
		if (snap->pod_groups[i]->meta.ns == ns &&
		    strcmp(snap->pod_groups[i]->meta.name, sx_str_get(name)) == 0)
			return snap->pod_groups[i];
	return NULL;
}

/* Each node's rejection of a member that did not fit, in snapshot order. */
static void write_nodes_text(struct sx_buf *b, const struct sx_pg_member *m)
{
	char msg[1024];

	for (uint32_t i = 0; m->res.statuses && i < m->res.num_all_nodes; i++) {
		const struct sx_status *st = m->res.statuses[i];

		if (st)
			sx_buf_printf(b, "              %-24s %s: %s\n",
				      sx_str_get(m->snap->nodes[i]->name),
				      st->plugin ? st->plugin : "?",
				      sx_status_message(st, msg, sizeof(msg)));
	}
}

static void write_nodes_json(struct sx_buf *b, const struct sx_pg_member *m)
{
	char msg[1024];
	bool first = true;

	sx_buf_puts(b, ",\"nodes\":{");
	for (uint32_t i = 0; m->res.statuses && i < m->res.num_all_nodes; i++) {
		const struct sx_status *st = m->res.statuses[i];

		if (!st)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_key(b, sx_str_get(m->snap->nodes[i]->name));
		sx_buf_puts(b, "{\"plugin\":");
		sx_json_str(b, st->plugin ? st->plugin : "");
		sx_buf_puts(b, ",\"reason\":");
		sx_json_str(b, sx_status_message(st, msg, sizeof(msg)));
		sx_buf_putc(b, '}');
	}
	sx_buf_putc(b, '}');
}

static const char *policy_name(const struct sx_pod_group *pg)
{
	return pg->spec.policy == SX_GROUP_POLICY_GANG	  ? "gang"
	       : pg->spec.policy == SX_GROUP_POLICY_BASIC ? "basic"
							  : "none";
}

static void write_text(struct sx_buf *b, const struct sx_pod_group *pg, const struct members *c,
		       const struct sx_pg_member *m, const struct sx_status *group)
{
	char msg[2048];
	uint32_t fit = 0;

	sx_buf_printf(b, "\nPod group:  %s/%s (%s", sx_str_get(pg->meta.ns), pg->meta.name,
		      policy_name(pg));
	if (pg->spec.policy == SX_GROUP_POLICY_GANG)
		sx_buf_printf(b, ", minCount %d", pg->spec.min_count);
	sx_buf_printf(b, ")\nMembers:    %u pending, %u scheduled already\n", c->n, c->scheduled);
	for (uint32_t i = 0; i < c->n; i++)
		fit += m[i].scheduled;
	sx_buf_printf(b, "Fit:        %u of %u pending", fit, c->n);
	for (uint32_t i = 0, k = 0; i < c->n; i++)
		if (m[i].scheduled)
			sx_buf_printf(b, "%s %s -> %s", k++ ? "," : ":", m[i].pod->meta.name,
				      sx_str_get(m[i].node));
	sx_buf_putc(b, '\n');
	for (uint32_t i = 0; i < c->n; i++) {
		if (!m[i].evaluated || m[i].scheduled)
			continue;
		sx_buf_printf(b, "Rejected:   %s: %s\n", m[i].pod->meta.name,
			      m[i].res.message ? m[i].res.message
					       : sx_status_message(m[i].status, msg, sizeof(msg)));
		write_nodes_text(b, &m[i]);
	}
	for (uint32_t i = 0, k = 0; i < c->n; i++)
		if (!m[i].evaluated)
			sx_buf_printf(b, "%s%s", k++ ? ", " : "Not tried:  ", m[i].pod->meta.name);
	for (uint32_t i = 0; i < c->n; i++)
		if (!m[i].evaluated) {
			sx_buf_putc(b, '\n');
			break;
		}
	if (sx_status_is_success(group))
		sx_buf_puts(b, "Group:      schedulable now: the members that fit bind together\n");
	else
		sx_buf_printf(b, "Group:      %s: %s\n", sx_code_name(sx_status_code(group)),
			      sx_status_message(group, msg, sizeof(msg)));
}

static void write_json(struct sx_buf *b, const struct sx_pod_group *pg, const struct members *c,
		       const struct sx_pg_member *m, const struct sx_status *group)
{
	char msg[2048];
	bool first = true;

	sx_buf_puts(b, "{\"name\":");
	sx_json_str(b, pg->meta.name);
	sx_buf_puts(b, ",\"policy\":");
	sx_json_str(b, policy_name(pg));
	sx_buf_printf(b, ",\"minCount\":%d,\"pending\":%u,\"scheduledAlready\":%u",
		      pg->spec.policy == SX_GROUP_POLICY_GANG ? pg->spec.min_count : 1, c->n,
		      c->scheduled);
	sx_buf_puts(b, ",\"fit\":{");
	for (uint32_t i = 0; i < c->n; i++) {
		if (!m[i].scheduled)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_key(b, m[i].pod->meta.name);
		sx_json_str(b, sx_str_get(m[i].node));
	}
	sx_buf_puts(b, "},\"rejected\":[");
	first = true;
	for (uint32_t i = 0; i < c->n; i++) {
		if (!m[i].evaluated || m[i].scheduled)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_buf_puts(b, "{\"pod\":");
		sx_json_str(b, m[i].pod->meta.name);
		sx_buf_puts(b, ",\"message\":");
		sx_json_str(b, m[i].res.message ? m[i].res.message
						: sx_status_message(m[i].status, msg, sizeof(msg)));
		write_nodes_json(b, &m[i]);
		sx_buf_putc(b, '}');
	}
	sx_buf_puts(b, "],\"notTried\":[");
	first = true;
	for (uint32_t i = 0; i < c->n; i++) {
		if (m[i].evaluated)
			continue;
		if (!first)
			sx_buf_putc(b, ',');
		first = false;
		sx_json_str(b, m[i].pod->meta.name);
	}
	sx_buf_puts(b, "],\"status\":");
	sx_json_str(b, sx_code_name(sx_status_code(group)));
	sx_buf_puts(b, ",\"message\":");
	sx_json_str(b, sx_status_message(group, msg, sizeof(msg)));
	sx_buf_putc(b, '}');
}

/* Runs the dry run; out NULL: only *status is wanted. */
static int run_gang(struct sx_cache *cache, const struct sx_snapshot *snap,
		    const struct sx_profile *prof, const struct sx_pod *pod, struct sx_pool *pool,
		    bool text, struct sx_buf *out, struct sx_status **status)
{
	struct members c = {.ns = pod->meta.ns, .group = pod->scheduling_group};
	const struct sx_pod_group *pg;
	struct sx_pg_member *m = NULL;
	struct sx_status *group = NULL;
	struct dry d = {pool};
	int rc = 1;

	if (!cache || !snap || pod->scheduling_group == SX_STR_EMPTY)
		return 0;
	pg = find_group(snap, pod->meta.ns, pod->scheduling_group);
	if (!pg)
		return 0;
	sx_cache_visit(cache, SX_KIND_POD, collect, &c);
	if (c.failed || !(m = calloc(c.n ? c.n : 1, sizeof(*m)))) {
		rc = SX_ENOMEM;
		goto out;
	}
	qsort(c.pods, c.n, sizeof(*c.pods), member_order);
	for (uint32_t i = 0; i < c.n; i++)
		m[i].pod = c.pods[i];
	struct sx_pg_algorithm a = {.prof = prof,
				    .pg = pg,
				    .base = snap,
				    .scheduled_before = (int32_t)c.scheduled,
				    .schedule = dry_schedule,
				    .ctx = &d,
				    .feasible = has_placement_feasible(prof) ? NULL : gang_words};
	group = sx_pod_group_algorithm(&a, m, c.n);
	if (out && text)
		write_text(out, pg, &c, m, group);
	else if (out)
		write_json(out, pg, &c, m, group);
out:
	if (status && rc > 0) {
		*status = group;
		group = NULL;
	}
	sx_status_free(group);
	if (m)
		sx_pg_members_free(m, c.n);
	for (uint32_t i = 0; i < c.n; i++)
		sx_pod_unref(c.pods[i]);
	free(c.pods);
	free(m);
	return rc;
}

int sx_explain_gang(struct sx_cache *cache, const struct sx_snapshot *snap,
		    const struct sx_profile *prof, const struct sx_pod *pod, struct sx_pool *pool,
		    bool text, struct sx_buf *out)
{
	return run_gang(cache, snap, prof, pod, pool, text, out, NULL);
}

int sx_explain_gang_status(struct sx_cache *cache, const struct sx_snapshot *snap,
			   const struct sx_profile *prof, const struct sx_pod *pod,
			   struct sx_pool *pool, struct sx_status **status)
{
	*status = NULL;
	return run_gang(cache, snap, prof, pod, pool, false, NULL, status);
}
