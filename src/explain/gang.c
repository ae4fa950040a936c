/* Why a member of a pod group is pending (explain.h sx_explain_gang), for
 * both gang APIs: the Workload API's PodGroup (GangScheduling, the 1.37
 * pod-group cycle) and scheduler-plugins' PodGroup CRD (Coscheduling). The
 * group's pending members are placed as the pod-group cycle places them
 * (upstream pkg/scheduler/algorithm_podgroup.go, through
 * sx_pod_group_algorithm in its dry-run mode: each member sees the ones
 * placed before it in a private copy of the snapshot, nothing is assumed
 * in the cache and no Reserve runs), then how many fit, where, which member
 * stopped the group and why on each node, which were not tried, and the
 * group's verdict in the words of the plugin that gates it. Members are in
 * upstream's order as far as the cluster shows it: priority, then creation
 * time, then name (the queue's first-attempt times are not in the
 * cluster).
 *
 * A Coscheduling gang has no pod-group cycle: its members go through their
 * own cycles one after another, each waits at Permit until the members
 * with a node reach minMember, and the timer or a member that fits nowhere
 * rejects the waiting ones. Placing the members in order with each seeing
 * the ones before is what those cycles do, so the same dry run answers it;
 * the verdict is then the words the scheduler would write
 * (kubernetes-sigs/scheduler-plugins pkg/coscheduling/core/core.go
 * PodGroupManager.PreFilter, pkg/coscheduling/coscheduling.go PostFilter
 * and Permit, the framework's Permit timeout): fewer pods than minMember
 * stops every member at PreFilter; a member that fits nowhere rejects the
 * group unless the members with a node miss minMember by at most 10%;
 * otherwise the members that fit wait until the timeout
 * (scheduleTimeoutSeconds, else permitWaitingTimeSeconds). A member bound
 * counts as bound; one the cache holds assumed (the standalone scheduler's
 * /debug/explain) is waiting at Permit or binding. The PodGroup's recent
 * failure (podGroupBackoffSeconds) and minResources are the plugin's own
 * state: they show where the plugin is fed (the standalone scheduler's
 * PreFilter rejects the members), not in a dump.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schedext/explain.h"
#include "schedext/binding_cycle.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/podgroup.h"
#include "schedext/registry.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

#define COSCHED_PLUGIN		 "Coscheduling"
#define COSCHED_DEFAULT_PERMIT_S 60 /* CoschedulingArgs permitWaitingTimeSeconds */
#define COSCHED_REJECT_FRACTION	 0.1f

/* The pod's group, whichever API made it: exactly one of pg and cg. */
struct group_view {
	sx_str ns, name;
	const struct sx_pod_group *pg;	   /* the Workload API's (snapshot's) */
	const struct sx_cosched_group *cg; /* Coscheduling's (snapshot's) */
	sx_str label;			   /* cg: the label naming a pod's group */
	int64_t timeout_s;		   /* cg: how long a member waits at Permit */
	const char *timeout_from;	   /* cg: which setting says so */
	const struct sx_pod *asked;	   /* the pod the report is about */
};

struct members {
	const struct group_view *v;
	uint32_t n, cap;
	uint32_t scheduled; /* bound or assumed */
	uint32_t bound;
	uint32_t total; /* every pod of the group, deleting ones too (Coscheduling's lister) */
	const struct sx_pod **pods; /* references */
	bool failed;
};

static sx_str group_of(const struct group_view *v, const struct sx_pod *p)
{
	sx_str name;

	if (v->label == SX_STR_EMPTY)
		return p->scheduling_group;
	return sx_labels_get(&p->meta.labels, v->label, &name) ? name : SX_STR_EMPTY;
}

static void collect(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct members *c = ctx;
	const struct sx_pod *p = obj->obj;

	if (p->meta.ns != c->v->ns || group_of(c->v, p) != c->v->name || c->failed)
		return;
	c->total++;
	if (node != SX_STR_EMPTY) {
		c->scheduled++;
		c->bound += !assumed;
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

/* Coscheduling's QueueSort (Coscheduling.Less): priority, then the
 * PodGroup's creation time - the same for every member - then
 * "<namespace>/<name>". */
static int cosched_order(const void *a, const void *b)
{
	const struct sx_pod *x = *(const struct sx_pod *const *)a;
	const struct sx_pod *y = *(const struct sx_pod *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return strcmp(x->meta.name, y->meta.name);
}

struct dry {
	struct sx_pool *pool;
	const struct group_view *v;
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

/* Coscheduling's Permit quorum as the dry run's PlacementFeasible: the
 * members with a node (bound, assumed, placed so far) reach minMember, or
 * the rest wait (the verdict's words come after the run: cosched_verdict). */
static struct sx_status *cosched_quorum(void *ctx, const struct sx_pod_group *pg,
					struct sx_placement_progress p)
{
	const struct dry *d = ctx;

	if (p.scheduled >= d->v->cg->min_member)
		return NULL;
	return sx_status_set_plugin(sx_status_new(SX_WAIT, NULL), COSCHED_PLUGIN);
}

static const struct sx_pod_group *find_group(const struct sx_snapshot *snap, sx_str ns, sx_str name)
{
	for (uint32_t i = 0; i < snap->npod_groups; i++)
		if (snap->pod_groups[i]->meta.ns == ns &&
		    strcmp(snap->pod_groups[i]->meta.name, sx_str_get(name)) == 0)
			return snap->pod_groups[i];
	return NULL;
}

static const struct sx_cosched_group *find_cosched(const struct sx_snapshot *snap, sx_str ns,
						   sx_str name)
{
	for (uint32_t i = 0; i < snap->ncosched_pod_groups; i++)
		if (snap->cosched_pod_groups[i]->meta.ns == ns &&
		    strcmp(snap->cosched_pod_groups[i]->meta.name, sx_str_get(name)) == 0)
			return snap->cosched_pod_groups[i];
	return NULL;
}

/* CoschedulingArgs' permitWaitingTimeSeconds as the profile's instance
 * holds it (what /configz shows: its write_args). */
static int64_t cosched_permit_wait(const struct sx_profile *prof)
{
	int idx = sx_plugin_index(COSCHED_PLUGIN);
	int64_t v = COSCHED_DEFAULT_PERMIT_S;
	struct sx_buf b;
	struct sx_jw w;
	cJSON *args, *item;

	if (idx < 0 || !prof->instances[idx] || !sx_plugins[idx]->write_args)
		return v;
	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_plugins[idx]->write_args(prof->instances[idx], &w);
	sx_jw_end_object(&w);
	args = b.failed ? NULL : cJSON_ParseWithLength(b.data, b.len);
	item = cJSON_GetObjectItemCaseSensitive(args, "permitWaitingTimeSeconds");
	if (cJSON_IsNumber(item))
		v = (int64_t)item->valuedouble;
	cJSON_Delete(args);
	sx_buf_free(&b);
	return v;
}

sx_str sx_explain_group_of(const struct sx_profile *prof, const struct sx_pod *pod, bool *cosched)
{
	sx_str label, name;

	*cosched = false;
	if (pod->scheduling_group != SX_STR_EMPTY)
		return pod->scheduling_group;
	if (!prof || !sx_profile_has(prof, SX_PT_PERMIT, COSCHED_PLUGIN))
		return SX_STR_EMPTY;
	label = sx_intern(SX_COSCHED_POD_GROUP_LABEL);
	if (label == SX_STR_INVALID || !sx_labels_get(&pod->meta.labels, label, &name))
		return SX_STR_EMPTY;
	*cosched = true;
	return name;
}

/* The pod's group in snap: 1 and *v filled, 0 when it is in none. */
static int resolve(const struct sx_snapshot *snap, const struct sx_profile *prof,
		   const struct sx_pod *pod, struct group_view *v)
{
	bool cosched;

	*v = (struct group_view){.ns = pod->meta.ns, .label = SX_STR_EMPTY, .asked = pod};
	v->name = sx_explain_group_of(prof, pod, &cosched);
	if (v->name == SX_STR_EMPTY)
		return 0;
	if (!cosched) {
		v->pg = find_group(snap, pod->meta.ns, v->name);
		return v->pg != NULL;
	}
	/* Coscheduling gates nothing for a pod whose PodGroup does not exist
	 * (PodGroupManager.PreFilter) */
	v->cg = find_cosched(snap, pod->meta.ns, v->name);
	if (!v->cg)
		return 0;
	v->label = sx_intern(SX_COSCHED_POD_GROUP_LABEL);
	/* GetWaitTimeDuration */
	if (v->cg->has_schedule_timeout && v->cg->schedule_timeout_seconds != 0) {
		v->timeout_s = v->cg->schedule_timeout_seconds;
		v->timeout_from = "scheduleTimeoutSeconds";
	} else {
		v->timeout_s = cosched_permit_wait(prof);
		v->timeout_from = "permitWaitingTimeSeconds";
	}
	return 1;
}

/* PodGroupManager.PreFilter's sibling count: every pod carrying the label
 * counts; fewer than minMember stops each member before any node. */
static struct sx_status *cosched_pre_filter(const struct group_view *v, const struct members *c)
{
	if (c->total >= (uint32_t)(v->cg->min_member > 0 ? v->cg->min_member : 0))
		return NULL;
	return sx_status_set_plugin(
		sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			      "pre-filter pod %s cannot find enough sibling pods, current "
			      "pods number: %u, minMember of group: %d",
			      v->asked->meta.name, c->total, v->cg->min_member),
		COSCHED_PLUGIN);
}

/* A Coscheduling gang short of its quorum: the first member that fits
 * nowhere runs PostFilter, which rejects the group unless the members with
 * a node by then miss minMember by at most 10% (notAssignedPercentage);
 * otherwise the members that fit wait at Permit until the timeout. */
static struct sx_status *cosched_verdict(const struct group_view *v, const struct members *c,
					 const struct sx_pg_member *m)
{
	int32_t min = v->cg->min_member, assigned = (int32_t)c->scheduled;
	char msg[512];

	for (uint32_t i = 0; i < c->n; i++) {
		if (!m[i].evaluated)
			break;
		if (m[i].scheduled) {
			assigned++;
			continue;
		}
		if (assigned >= min ||
		    (float)(min - assigned) / (float)min <= COSCHED_REJECT_FRACTION)
			break;
		return sx_status_set_plugin(
			sx_status_new(SX_UNSCHEDULABLE,
				      "PodGroup %s/%s gets rejected due to Pod %s is unschedulable "
				      "even after PostFilter",
				      sx_str_get(v->ns), sx_str_get(v->name), m[i].pod->meta.name),
			COSCHED_PLUGIN);
	}
	sx_permit_timeout_message(msg, sizeof(msg),
				  v->timeout_s > 0 ? (uint64_t)v->timeout_s * 1000u : 0,
				  COSCHED_PLUGIN);
	return sx_status_set_plugin(sx_status_new(SX_UNSCHEDULABLE, "%s", msg), COSCHED_PLUGIN);
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

static void write_nodes_json(struct sx_jw *w, const struct sx_pg_member *m)
{
	char msg[1024];

	sx_jw_kobject(w, "nodes");
	for (uint32_t i = 0; m->res.statuses && i < m->res.num_all_nodes; i++) {
		const struct sx_status *st = m->res.statuses[i];

		if (!st)
			continue;
		sx_jw_kobject(w, sx_str_get(m->snap->nodes[i]->name));
		sx_jw_kstr(w, "plugin", st->plugin ? st->plugin : "");
		sx_jw_kstr(w, "reason", sx_status_message(st, msg, sizeof(msg)));
		sx_jw_end_object(w);
	}
	sx_jw_end_object(w);
}

static const char *policy_name(const struct sx_pod_group *pg)
{
	return pg->spec.policy == SX_GROUP_POLICY_GANG	  ? "gang"
	       : pg->spec.policy == SX_GROUP_POLICY_BASIC ? "basic"
							  : "none";
}

/* The lines naming the group and counting its members. */
static void write_head_text(struct sx_buf *b, const struct group_view *v, const struct members *c)
{
	const struct sx_cosched_group *cg = v->cg;

	if (v->pg) {
		sx_buf_printf(b, "\nPod group:  %s/%s (%s", sx_str_get(v->ns), v->pg->meta.name,
			      policy_name(v->pg));
		if (v->pg->spec.policy == SX_GROUP_POLICY_GANG)
			sx_buf_printf(b, ", minCount %d", v->pg->spec.min_count);
		sx_buf_printf(b, ")\nMembers:    %u pending, %u scheduled already\n", c->n,
			      c->scheduled);
		return;
	}
	sx_buf_printf(b, "\nPod group:  %s/%s (%s, minMember %d)\n", sx_str_get(v->ns),
		      cg->meta.name, COSCHED_PLUGIN, cg->min_member);
	sx_buf_printf(b, "Members:    %u pending, %u bound, %u waiting at Permit\n", c->n, c->bound,
		      c->scheduled - c->bound);
	sx_buf_printf(b, "Timeout:    a member waits at Permit up to %llds (%s)\n",
		      (long long)v->timeout_s, v->timeout_from);
	if (cg->phase != SX_STR_EMPTY)
		sx_buf_printf(b, "Phase:      %s, %d scheduled\n", sx_str_get(cg->phase),
			      cg->scheduled);
}

static void write_text(struct sx_buf *b, const struct group_view *v, const struct members *c,
		       const struct sx_pg_member *m, const struct sx_status *group)
{
	char msg[2048];
	uint32_t fit = 0;

	write_head_text(b, v, c);
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

static void write_head_json(struct sx_jw *w, const struct group_view *v, const struct members *c)
{
	const struct sx_cosched_group *cg = v->cg;

	if (v->pg) {
		sx_jw_kstr(w, "name", v->pg->meta.name);
		sx_jw_kstr(w, "policy", policy_name(v->pg));
		sx_jw_kint(w, "minCount",
			   v->pg->spec.policy == SX_GROUP_POLICY_GANG ? v->pg->spec.min_count : 1);
		sx_jw_kint(w, "pending", c->n);
		sx_jw_kint(w, "scheduledAlready", c->scheduled);
		return;
	}
	sx_jw_kstr(w, "name", cg->meta.name);
	sx_jw_kstr(w, "plugin", COSCHED_PLUGIN);
	sx_jw_kint(w, "minMember", cg->min_member);
	sx_jw_kint(w, "pending", c->n);
	sx_jw_kint(w, "bound", c->bound);
	sx_jw_kint(w, "waitingAtPermit", c->scheduled - c->bound);
	sx_jw_kint(w, "timeoutSeconds", v->timeout_s);
	sx_jw_kstr(w, "timeoutFrom", v->timeout_from);
	sx_jw_key(w, "phase");
	sx_jw_str_or_null(w, cg->phase != SX_STR_EMPTY ? sx_str_get(cg->phase) : NULL);
	sx_jw_kint(w, "scheduled", cg->scheduled);
}

static void write_json(struct sx_buf *b, const struct group_view *v, const struct members *c,
		       const struct sx_pg_member *m, const struct sx_status *group)
{
	char msg[2048];
	struct sx_jw w;

	sx_jw_init(&w, b);
	sx_jw_object(&w);
	write_head_json(&w, v, c);
	sx_jw_kobject(&w, "fit");
	for (uint32_t i = 0; i < c->n; i++)
		if (m[i].scheduled)
			sx_jw_kstr(&w, m[i].pod->meta.name, sx_str_get(m[i].node));
	sx_jw_end_object(&w);
	sx_jw_karray(&w, "rejected");
	for (uint32_t i = 0; i < c->n; i++) {
		if (!m[i].evaluated || m[i].scheduled)
			continue;
		sx_jw_object(&w);
		sx_jw_kstr(&w, "pod", m[i].pod->meta.name);
		sx_jw_kstr(&w, "message",
			   m[i].res.message ? m[i].res.message
					    : sx_status_message(m[i].status, msg, sizeof(msg)));
		write_nodes_json(&w, &m[i]);
		sx_jw_end_object(&w);
	}
	sx_jw_end_array(&w);
	sx_jw_karray(&w, "notTried");
	for (uint32_t i = 0; i < c->n; i++)
		if (!m[i].evaluated)
			sx_jw_str(&w, m[i].pod->meta.name);
	sx_jw_end_array(&w);
	sx_jw_kstr(&w, "status", sx_code_name(sx_status_code(group)));
	sx_jw_kstr(&w, "message", sx_status_message(group, msg, sizeof(msg)));
	sx_jw_end_object(&w);
}

/* The dry run over the members; the group's status. */
static struct sx_status *place(const struct sx_snapshot *snap, const struct sx_profile *prof,
			       const struct group_view *v, const struct members *c,
			       struct sx_pg_member *m, struct dry *d)
{
	struct sx_status *group;
	struct sx_pg_algorithm a = {.prof = prof,
				    .pg = v->pg,
				    .base = snap,
				    .scheduled_before = (int32_t)c->scheduled,
				    .schedule = dry_schedule,
				    .ctx = d};

	if (v->pg) {
		a.feasible = has_placement_feasible(prof) ? NULL : gang_words;
		return sx_pod_group_algorithm(&a, m, c->n);
	}
	group = cosched_pre_filter(v, c);
	if (group)
		return group;
	a.feasible = cosched_quorum;
	group = sx_pod_group_algorithm(&a, m, c->n);
	if (sx_status_code(group) != SX_UNSCHEDULABLE || (int32_t)c->scheduled >= v->cg->min_member)
		return group;
	sx_status_free(group);
	return cosched_verdict(v, c, m);
}

/* Runs the dry run; out NULL: only *status is wanted. */
static int run_gang(struct sx_cache *cache, const struct sx_snapshot *snap,
		    const struct sx_profile *prof, const struct sx_pod *pod, struct sx_pool *pool,
		    bool text, struct sx_buf *out, struct sx_status **status)
{
	struct group_view v;
	struct members c = {.v = &v};
	struct sx_pg_member *m = NULL;
	struct sx_status *group = NULL;
	struct dry d = {pool, &v};
	int rc = 1;

	if (!cache || !snap || !resolve(snap, prof, pod, &v))
		return 0;
	sx_cache_visit(cache, SX_KIND_POD, collect, &c);
	if (c.failed || !(m = calloc(c.n ? c.n : 1, sizeof(*m)))) {
		rc = SX_ENOMEM;
		goto out;
	}
	qsort(c.pods, c.n, sizeof(*c.pods), v.cg ? cosched_order : member_order);
	for (uint32_t i = 0; i < c.n; i++)
		m[i].pod = c.pods[i];
	group = place(snap, prof, &v, &c, m, &d);
	if (out && text)
		write_text(out, &v, &c, m, group);
	else if (out)
		write_json(out, &v, &c, m, group);
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
