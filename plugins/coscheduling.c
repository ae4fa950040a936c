/* Coscheduling (QueueSort, PreFilter, PostFilter, Reserve/Unreserve,
 * Permit): scheduler-plugins' gang scheduling for clusters without the
 * Workload API, over its PodGroup CRD scheduling.x-k8s.io/v1alpha1
 * (workload.h, struct sx_cosched_group). A pod joins the group named by
 * its label scheduling.x-k8s.io/pod-group in its namespace. Out of tree:
 * in the registry, in no default profile; a profile enables it (with
 * queueSort in place of PrioritySort, as scheduler-plugins' sample
 * configuration does). Followed upstream:
 * kubernetes-sigs/scheduler-plugins pkg/coscheduling/coscheduling.go
 * (New, Less, PreFilter, PostFilter, Permit, Reserve, Unreserve,
 * EventsToRegister), pkg/coscheduling/core/core.go (PodGroupManager:
 * PreFilter, Permit, GetCreationTimestamp, CalculateAssignedPods,
 * CheckClusterResource, getNodeResource, BackoffPodGroup) and
 * pkg/util/podgroup.go (GetWaitTimeDuration).
 *
 * The pods of each group, and which are assumed or bound, come from the
 * member tracker GangScheduling uses (gang_members.h, fed by the handle's
 * Pod and PodGroup events): upstream's pod lister by label is its member
 * count, CalculateAssignedPods its assumed-or-bound count. Waiting at
 * Permit is the framework's (binding_cycle.h): the quorum allows every
 * waiting member; the timer (the PodGroup's scheduleTimeoutSeconds, else
 * permitWaitingTimeSeconds) rejects one, whose Unreserve rejects the
 * rest, so a group binds whole or not at all.
 *
 * Args: CoschedulingArgs permitWaitingTimeSeconds (default 60) and
 * podGroupBackoffSeconds (default 0: no backoff; negative refused), as
 * scheduler-plugins apis/config/v1 defaults.go.
 *
 * Where no front end feeds pods (the extender, explain) the plugin gates
 * nothing, as GangScheduling.
 *
 * ActivateSiblings: the first member to wait at Permit moves its siblings
 * to activeQ through the handle's activate (PodsToActivate), so members
 * refused at PreFilter before the group was complete are tried again.
 *
 * PostBind writes the PodGroup's status as scheduler-plugins did before
 * its PodGroup controller took it over (PodGroupManager.PostBind of
 * pkg/coscheduling/core): scheduled counts the members bound (or being
 * bound), phase turns Scheduling, then Scheduled at minMember, with
 * scheduleStartTime set when it first turns Scheduling; patched (the
 * status subresource) only when the phase changes, so a cluster without
 * the controller still sees its gangs' progress.
 *
 * Differences: CheckClusterResource's "resource gap: %v" prints upstream's
 * Go map of Quantity structs; here the remaining quantities are written
 * in their canonical form (map[cpu:4 pods:2]).
 *
 * Threads: every hook may run on any thread; the tracker and the
 * permitted/backed-off lists have their own mutexes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include "schedext/plugin.h"
#include "schedext/binding_cycle.h"
#include "schedext/buf.h"
#include "schedext/handle.h"
#include "schedext/kube.h"
#include "schedext/node_info.h"
#include "schedext/plugin_args.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"
#include "gang_members.h"

#define COSCHED_NAME		    "Coscheduling"
#define DEFAULT_PERMIT_WAITING_S    60
#define DEFAULT_POD_GROUP_BACKOFF_S 0
#define COSCHED_MAX_EXPIRING	    4096

/* A group name with an expiry (upstream's go-cache entries). */
struct expiring {
	sx_str ns, name;
	double until; /* sx_now_s() */
};

struct expiring_set {
	uint32_t n;
	struct expiring e[COSCHED_MAX_EXPIRING];
};

struct cosched {
	struct sx_handle *h; /* borrowed: outlives the instance */
	int64_t permit_waiting_s;
	int64_t backoff_s;
	double wall_offset; /* wall-clock seconds minus sx_now_s() at init */
	struct sx_gang_members m;
	pthread_mutex_t mu; /* guards permitted and backed_off */
	/* PostBind's count and patch, one member at a time, so that the
	 * patches reach the API server in the order of the counts (upstream
	 * holds the manager's lock across PostBind) */
	pthread_mutex_t post_bind_mu;
	struct expiring_set permitted;	/* passed the minResources check (permittedPG) */
	struct expiring_set backed_off; /* failed recently (backedOffPG) */
};

struct cosched_args {
	int64_t permit_waiting_s, backoff_s;
};

static const struct sx_arg cosched_fields[] = {
	{.name = "permitWaitingTimeSeconds",
	 .type = SX_ARG_INT64,
	 .offset = offsetof(struct cosched_args, permit_waiting_s),
	 .def = DEFAULT_PERMIT_WAITING_S,
	 .min = INT64_MIN,
	 .max = INT64_MAX,
	 .type_desc = "an integer"},
	{.name = "podGroupBackoffSeconds",
	 .type = SX_ARG_INT64,
	 .offset = offsetof(struct cosched_args, backoff_s),
	 .def = DEFAULT_POD_GROUP_BACKOFF_S,
	 .min = INT64_MIN,
	 .max = INT64_MAX,
	 .type_desc = "an integer"},
};

/* ---------- the expiring sets (under s->mu) ---------- */

static struct expiring *set_find(struct expiring_set *set, sx_str ns, sx_str name, double now)
{
	for (uint32_t i = 0; i < set->n;) {
		if (set->e[i].until <= now) {
			set->e[i] = set->e[--set->n];
			continue;
		}
		if (set->e[i].ns == ns && set->e[i].name == name)
			return &set->e[i];
		i++;
	}
	return NULL;
}

static void set_add(struct expiring_set *set, sx_str ns, sx_str name, double until, double now)
{
	struct expiring *e = set_find(set, ns, name, now);

	if (!e && set->n < COSCHED_MAX_EXPIRING)
		e = &set->e[set->n++];
	if (e)
		*e = (struct expiring){ns, name, until};
}

static void set_delete(struct expiring_set *set, sx_str ns, sx_str name)
{
	for (uint32_t i = 0; i < set->n; i++)
		if (set->e[i].ns == ns && set->e[i].name == name) {
			set->e[i] = set->e[--set->n];
			return;
		}
}

/* ---------- the pod's group ---------- */

static const struct sx_cosched_group *group_obj(const struct sx_gang_group *g)
{
	return g ? g->obj : NULL;
}

/* The handle's object events: the tracker follows pods and PodGroups. */
static void object_coscheduling(void *self, enum sx_kind kind, const void *old_obj,
				const void *new_obj)
{
	struct cosched *s = self;

	sx_gang_members_event(&s->m, kind, old_obj, new_obj);
}

/* ---------- QueueSort ---------- */

/* GetCreationTimestamp: the PodGroup's creation time for a member of an
 * existing group, else the time the pod was queued (wall clock). */
static double creation_time(struct cosched *s, const struct sx_queued_pod *qp)
{
	sx_str name = sx_gang_group_of(&s->m, qp->pod);
	double t = qp->timestamp + s->wall_offset;

	if (name == SX_STR_EMPTY)
		return t;
	sx_gang_members_lock(&s->m);
	const struct sx_cosched_group *pg =
		group_obj(sx_gang_members_find(&s->m, qp->pod->meta.ns, name));
	if (pg)
		t = (double)pg->meta.creation_ts;
	sx_gang_members_unlock(&s->m);
	return t;
}

/* Coscheduling.Less: priority, then the group's (or pod's) creation time,
 * then "<namespace>/<name>" of the pods. */
static bool less_coscheduling(void *self, const struct sx_queued_pod *a,
			      const struct sx_queued_pod *b)
{
	struct cosched *s = self;
	char ka[512], kb[512];
	double ta, tb;

	if (a->pod->priority != b->pod->priority)
		return a->pod->priority > b->pod->priority;
	ta = creation_time(s, a);
	tb = creation_time(s, b);
	if (ta != tb)
		return ta < tb;
	snprintf(ka, sizeof(ka), "%s/%s", sx_str_get(a->pod->meta.ns), a->pod->meta.name);
	snprintf(kb, sizeof(kb), "%s/%s", sx_str_get(b->pod->meta.ns), b->pod->meta.name);
	return strcmp(ka, kb) < 0;
}

/* ---------- PreFilter ---------- */

/* The resources CheckClusterResource asks for: minResources plus pods =
 * minMember. */
struct want_entry {
	sx_str name;
	int64_t v; /* cpu in millicores */
};

struct want {
	uint32_t n;
	struct want_entry r[4 + 64];
};

static void want_put(struct want *w, sx_str name, int64_t v)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->r[i].name == name) {
			w->r[i].v = v;
			return;
		}
	if (w->n < sizeof(w->r) / sizeof(w->r[0])) {
		w->r[w->n].name = name;
		w->r[w->n++].v = v;
	}
}

/* A ResourceList's value as Quantity.String writes it for whole units
 * (cpu: cores, or millicores when not whole). */
static void put_quantity(struct sx_buf *b, sx_str name, int64_t v)
{
	if (name == SX_S_CPU && v % 1000 != 0)
		sx_buf_printf(b, "%lldm", (long long)v);
	else
		sx_buf_printf(b, "%lld", (long long)(name == SX_S_CPU ? v / 1000 : v));
}

/* getNodeResource: what is left on ni once the group's own pods are
 * taken off it. */
static int64_t node_left(const struct sx_node_info *ni, sx_str name, const struct cosched *s,
			 sx_str ns, sx_str group)
{
	int64_t alloc = sx_resources_get(&ni->node->allocatable, name);
	int64_t used = name == SX_S_PODS ? ni->npods : sx_resources_get(&ni->requested, name);

	for (uint32_t i = 0; i < ni->npods; i++) {
		const struct sx_pod *p = ni->pods[i];

		if (p->meta.ns != ns || sx_gang_group_of(&s->m, p) != group)
			continue;
		used -= name == SX_S_PODS ? 1 : sx_resources_get(&p->request, name);
	}
	return alloc - used;
}

/* CheckClusterResource: nodes in order, each taking off what it has
 * left, until nothing is wanted. NULL, or the Unschedulable status with
 * the gap. */
static struct sx_status *check_cluster_resource(const struct cosched *s,
						const struct sx_snapshot *snap, struct want *w,
						sx_str ns, sx_str group)
{
	struct sx_buf b;
	struct sx_status *st;

	for (uint32_t i = 0; snap && i < snap->nnodes && w->n; i++) {
		const struct sx_node_info *ni = snap->nodes[i];

		if (!ni || !ni->node)
			continue;
		for (uint32_t j = 0; j < w->n;) {
			w->r[j].v -= node_left(ni, w->r[j].name, s, ns, group);
			if (w->r[j].v <= 0) {
				w->r[j] = w->r[--w->n];
				continue;
			}
			j++;
		}
	}
	if (w->n == 0)
		return NULL;
	/* Go prints a map's keys sorted */
	for (uint32_t i = 1; i < w->n; i++)
		for (uint32_t j = i;
		     j > 0 && strcmp(sx_str_get(w->r[j - 1].name), sx_str_get(w->r[j].name)) > 0;
		     j--) {
			struct want_entry t = w->r[j];
			w->r[j] = w->r[j - 1];
			w->r[j - 1] = t;
		}
	sx_buf_init(&b);
	sx_buf_puts(&b, "resource gap: map[");
	for (uint32_t i = 0; i < w->n; i++) {
		sx_buf_printf(&b, "%s%s:", i ? " " : "", sx_str_get(w->r[i].name));
		put_quantity(&b, w->r[i].name, w->r[i].v);
	}
	sx_buf_putc(&b, ']');
	sx_buf_putc(&b, '\0');
	st = b.failed ? sx_status_new(SX_ERROR, "out of memory")
		      : sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", b.data);
	sx_buf_free(&b);
	return st;
}

/* Coscheduling.PreFilter / PodGroupManager.PreFilter: a member of a group
 * that failed recently, that has fewer pods than minMember, or whose
 * minResources the cluster cannot hold is UnschedulableAndUnresolvable
 * (no preemption for it). */
static struct sx_status *pre_filter_coscheduling(void *self, struct sx_cycle_state *cs,
						 const struct sx_pod *pod,
						 struct sx_node_set **result)
{
	struct cosched *s = self;
	sx_str group = sx_gang_group_of(&s->m, pod);
	const struct sx_cosched_group *pg;
	const struct sx_gang_group *g;
	struct want w = {0};
	uint32_t npods;
	int32_t min_member;
	double now = sx_now_s();
	bool backed_off, permitted;

	if (group == SX_STR_EMPTY)
		return NULL;
	sx_gang_members_lock(&s->m);
	g = sx_gang_members_find(&s->m, pod->meta.ns, group);
	pg = group_obj(g);
	if (!s->m.fed || !pg) {
		sx_gang_members_unlock(&s->m);
		return NULL;
	}
	npods = g->n;
	min_member = pg->min_member;
	if (pg->has_min_resources) {
		const struct sx_resources *r = &pg->min_resources;

		if (r->milli_cpu)
			want_put(&w, SX_S_CPU, r->milli_cpu);
		if (r->memory)
			want_put(&w, SX_S_MEMORY, r->memory);
		if (r->ephemeral_storage)
			want_put(&w, SX_S_EPHEMERAL_STORAGE, r->ephemeral_storage);
		for (uint32_t i = 0; i < r->nscalar; i++)
			if (r->scalar[i].value)
				want_put(&w, r->scalar[i].name, r->scalar[i].value);
		want_put(&w, SX_S_PODS, min_member);
	}
	sx_gang_members_unlock(&s->m);

	pthread_mutex_lock(&s->mu);
	backed_off = set_find(&s->backed_off, pod->meta.ns, group, now) != NULL;
	permitted = set_find(&s->permitted, pod->meta.ns, group, now) != NULL;
	pthread_mutex_unlock(&s->mu);
	if (backed_off)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "podGroup %s/%s failed recently", sx_str_get(pod->meta.ns),
				     sx_str_get(group));
	if (npods < (uint32_t)(min_member > 0 ? min_member : 0))
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "pre-filter pod %s cannot find enough sibling pods, current "
				     "pods number: %u, minMember of group: %d",
				     pod->meta.name, npods, min_member);
	if (!w.n || permitted)
		return NULL;
	struct sx_status *st = check_cluster_resource(s, cs->snap, &w, pod->meta.ns, group);
	if (st)
		return st;
	pthread_mutex_lock(&s->mu);
	set_add(&s->permitted, pod->meta.ns, group, now + (double)s->permit_waiting_s, now);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---------- PostFilter ---------- */

/* Coscheduling.PostFilter: a member that fits nowhere rejects the
 * group's members waiting at Permit, unless the group already has its
 * quorum or misses it by at most 10%; then backs the group off
 * (podGroupBackoffSeconds) when all its pods exist. */
static struct sx_status *post_filter_coscheduling(void *self, struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  const struct sx_filtered_status *filtered,
						  struct sx_post_filter_result *result)
{
	struct cosched *s = self;
	sx_str group = sx_gang_group_of(&s->m, pod);
	const struct sx_gang_group *g;
	const struct sx_cosched_group *pg;
	uint32_t assigned = 0, npods = 0;
	int32_t min_member = 0;

	sx_gang_members_lock(&s->m);
	g = group == SX_STR_EMPTY ? NULL : sx_gang_members_find(&s->m, pod->meta.ns, group);
	pg = group_obj(g);
	if (pg) {
		assigned = sx_gang_group_scheduled(g);
		npods = g->n;
		min_member = pg->min_member;
	}
	sx_gang_members_unlock(&s->m);
	if (!pg)
		return sx_status_new(SX_UNSCHEDULABLE, "can not find pod group");
	if ((int64_t)assigned >= min_member)
		return sx_status_new(SX_UNSCHEDULABLE, NULL);
	/* notAssignedPercentage in float32, as upstream */
	if ((float)(min_member - (int32_t)assigned) / (float)min_member <= 0.1f)
		return sx_status_new(SX_UNSCHEDULABLE, NULL);
	sx_gang_members_settle_waiting(&s->m, s->h, pod->meta.ns, group, COSCHED_NAME,
				       "optimistic rejection in PostFilter");
	pthread_mutex_lock(&s->mu);
	if (s->backoff_s > 0 && (int64_t)npods >= min_member) {
		double now = sx_now_s();

		set_add(&s->backed_off, pod->meta.ns, group, now + (double)s->backoff_s, now);
	}
	set_delete(&s->permitted, pod->meta.ns, group);
	pthread_mutex_unlock(&s->mu);
	return sx_status_new(SX_UNSCHEDULABLE,
			     "PodGroup %s/%s gets rejected due to Pod %s is unschedulable even "
			     "after PostFilter",
			     sx_str_get(pod->meta.ns), sx_str_get(group), pod->meta.name);
}

/* ---------- Reserve, Unreserve, Permit ---------- */

/* Coscheduling.Reserve does nothing upstream; here it marks the pod
 * assumed in the tracker, which is what upstream's snapshot shows
 * CalculateAssignedPods (the cache assumes the pod just before Reserve). */
static struct sx_status *reserve_coscheduling(void *self, struct sx_cycle_state *cs,
					      const struct sx_pod *pod, sx_str node)
{
	struct cosched *s = self;

	sx_gang_members_assume(&s->m, pod, true);
	return NULL;
}

/* Coscheduling.Unreserve: a member that failed after Reserve (its Permit
 * timed out or was rejected, its binding failed) rejects every member
 * still waiting, and the group must pass minResources again. */
static void unreserve_coscheduling(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				   sx_str node)
{
	struct cosched *s = self;
	sx_str group = sx_gang_group_of(&s->m, pod);
	bool found;

	sx_gang_members_assume(&s->m, pod, false);
	if (group == SX_STR_EMPTY)
		return;
	sx_gang_members_lock(&s->m);
	found = group_obj(sx_gang_members_find(&s->m, pod->meta.ns, group)) != NULL;
	sx_gang_members_unlock(&s->m);
	if (!found)
		return;
	sx_gang_members_settle_waiting(&s->m, s->h, pod->meta.ns, group, COSCHED_NAME,
				       "rejection in Unreserve");
	pthread_mutex_lock(&s->mu);
	set_delete(&s->permitted, pod->meta.ns, group);
	pthread_mutex_unlock(&s->mu);
}

/* PodGroupManager.ActivateSiblings: every other pod of the group goes to
 * activeQ (names copied under the tracker's lock, moved after it). */
static void activate_siblings(struct cosched *s, const struct sx_pod *pod, sx_str group)
{
	struct sx_handle_env env;
	const struct sx_gang_group *g;
	char **names = NULL;
	uint32_t n = 0;

	sx_handle_env(s->h, &env);
	if (!env.activate)
		return;
	sx_gang_members_lock(&s->m);
	g = sx_gang_members_find(&s->m, pod->meta.ns, group);
	if (g && (names = calloc(g->n ? g->n : 1, sizeof(*names))) != NULL)
		for (uint32_t i = 0; i < g->n; i++)
			if (strcmp(g->m[i].name, pod->meta.name) != 0 &&
			    (names[n] = strdup(g->m[i].name)) != NULL)
				n++;
	sx_gang_members_unlock(&s->m);
	for (uint32_t i = 0; i < n; i++) {
		env.activate(env.activate_ctx, pod->meta.ns, names[i]);
		free(names[i]);
	}
	free(names);
}

/* Coscheduling.Permit / PodGroupManager.Permit: Success once the members
 * assigned a node (this one included) reach minMember, allowing the
 * waiting ones; Wait otherwise, for the PodGroup's scheduleTimeoutSeconds
 * or permitWaitingTimeSeconds (GetWaitTimeDuration). */
static struct sx_status *permit_coscheduling(void *self, struct sx_cycle_state *cs,
					     const struct sx_pod *pod, sx_str node,
					     uint64_t *timeout_ms)
{
	struct cosched *s = self;
	sx_str group = sx_gang_group_of(&s->m, pod);
	const struct sx_gang_group *g;
	const struct sx_cosched_group *pg;
	uint32_t assigned = 0;
	int64_t wait_s = s->permit_waiting_s;
	int32_t min_member = 0;
	bool fed;

	if (group == SX_STR_EMPTY)
		return NULL;
	sx_gang_members_lock(&s->m);
	fed = s->m.fed;
	g = sx_gang_members_find(&s->m, pod->meta.ns, group);
	pg = group_obj(g);
	if (pg) {
		const char *self_key =
			pod->meta.uid && pod->meta.uid[0] ? pod->meta.uid : pod->meta.name;

		/* the others with a node; this pod counts as one more */
		for (uint32_t i = 0; i < g->n; i++)
			assigned += (g->m[i].assumed || g->m[i].bound) &&
				    strcmp(g->m[i].key, self_key) != 0;
		min_member = pg->min_member;
		if (pg->has_schedule_timeout && pg->schedule_timeout_seconds != 0)
			wait_s = pg->schedule_timeout_seconds;
	}
	sx_gang_members_unlock(&s->m);
	if (!fed)
		return NULL;
	if (!pg)
		return sx_status_new(SX_UNSCHEDULABLE, "PodGroup not found");
	if ((int64_t)assigned + 1 >= min_member) {
		sx_gang_members_settle_waiting(&s->m, s->h, pod->meta.ns, group, COSCHED_NAME,
					       NULL);
		return NULL;
	}
	/* Only the 0th member activates its siblings (upstream: it would be
	 * wasteful for every member to). */
	if (assigned == 0)
		activate_siblings(s, pod, group);
	*timeout_ms = wait_s > 0 ? (uint64_t)wait_s * 1000u : 0;
	return sx_status_new(SX_WAIT, NULL);
}

/* PodGroupManager.PostBind: the PodGroup's phase and scheduled count. */
static void post_bind_coscheduling(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				   sx_str node)
{
	struct cosched *s = self;
	sx_str group = sx_gang_group_of(&s->m, pod);
	const struct sx_gang_group *g;
	const struct sx_cosched_group *pg;
	struct sx_handle_env env;
	struct sx_error err = {0};
	const char *phase = NULL;
	int32_t scheduled = 0;
	bool start = false;

	if (group == SX_STR_EMPTY)
		return;
	sx_handle_env(s->h, &env);
	if (!env.kube)
		return;
	pthread_mutex_lock(&s->post_bind_mu);
	sx_gang_members_lock(&s->m);
	g = sx_gang_members_find(&s->m, pod->meta.ns, group);
	pg = group_obj(g);
	if (pg) {
		/* Status.Scheduled++ of the group as this plugin last counted it
		 * (upstream's cached copy), or as the object shows it */
		int32_t before = g->binds > pg->scheduled ? g->binds : pg->scheduled;
		const char *was = before == 0		     ? sx_str_get(pg->phase)
				  : before >= pg->min_member ? "Scheduled"
							     : "Scheduling";

		scheduled = sx_gang_group_add_bind(&s->m, pod->meta.ns, group, pg->scheduled);
		phase = scheduled >= pg->min_member ? "Scheduled" : "Scheduling";
		start = !pg->has_schedule_start && before == 0 && strcmp(phase, "Scheduling") == 0;
		if (strcmp(was, phase) == 0)
			phase = NULL;
	}
	sx_gang_members_unlock(&s->m);
	if (phase && sx_kube_patch_cosched_group_status(env.kube, sx_str_get(pod->meta.ns),
							sx_str_get(group), phase, scheduled, start,
							&err) < 0)
		sx_log(1, "Coscheduling: patching PodGroup %s/%s status: %s",
		       sx_str_get(pod->meta.ns), sx_str_get(group), err.msg);
	pthread_mutex_unlock(&s->post_bind_mu);
}

/* ---------- EventsToRegister ---------- */

static const struct sx_event_reg events_coscheduling[] = {
	{SX_RES_POD, SX_ACT_ADD, NULL},
	{SX_RES_COSCHED_POD_GROUP, SX_ACT_ADD | SX_ACT_UPDATE, NULL},
	SX_EVENTS_END,
};

/* ---------- args, init ---------- */

static void *init_coscheduling(const struct cJSON *args, struct sx_handle *h, struct sx_error *err)
{
	struct cosched_args a = {0};
	struct sx_arg_errors e = {0};
	struct cosched *s;
	struct timespec wall;

	if (!sx_args_is_object(args, "CoschedulingArgs", err) ||
	    sx_args_read(args, cosched_fields, SX_ARRAY_SIZE(cosched_fields), &a, &e, err) < 0 ||
	    sx_arg_errors_finish(&e, err) < 0)
		return NULL;
	/* New: a negative backoff is refused */
	if (a.backoff_s < 0) {
		sx_error_set(err, SX_EINVAL, "parse arguments failed");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	s->h = h;
	s->permit_waiting_s = a.permit_waiting_s;
	s->backoff_s = a.backoff_s;
	clock_gettime(CLOCK_REALTIME, &wall);
	s->wall_offset = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9 - sx_now_s();
	if (sx_gang_members_init(&s->m, SX_KIND_COSCHED_POD_GROUP, SX_COSCHED_POD_GROUP_LABEL) <
	    0) {
		free(s);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->post_bind_mu, NULL);
	if (h) {
		struct sx_handle_listener l = {
			.kinds = (1ull << SX_KIND_POD) | (1ull << SX_KIND_COSCHED_POD_GROUP),
			.object = object_coscheduling,
			.self = s,
		};
		if (sx_handle_listen(h, &l) < 0) {
			sx_gang_members_destroy(&s->m);
			pthread_mutex_destroy(&s->mu);
			pthread_mutex_destroy(&s->post_bind_mu);
			free(s);
			sx_error_set(err, SX_ENOMEM, "Coscheduling: too many handle listeners");
			return NULL;
		}
	}
	return s;
}

static void destroy_coscheduling(void *self)
{
	struct cosched *s = self;

	if (!s)
		return;
	if (s->h)
		sx_handle_unlisten(s->h, s);
	sx_gang_members_destroy(&s->m);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->post_bind_mu);
	free(s);
}

static void write_args_coscheduling(const void *self, struct sx_jw *w)
{
	const struct cosched *s = self;

	sx_jw_kint(w, "permitWaitingTimeSeconds", s->permit_waiting_s);
	sx_jw_kint(w, "podGroupBackoffSeconds", s->backoff_s);
}

const struct sx_plugin sx_plugin_coscheduling = {
	.name = COSCHED_NAME,
	.init = init_coscheduling,
	.destroy = destroy_coscheduling,
	.args_kind = "CoschedulingArgs",
	.write_args = write_args_coscheduling,
	.less = less_coscheduling,
	.pre_filter = pre_filter_coscheduling,
	.post_filter = post_filter_coscheduling,
	.reserve = reserve_coscheduling,
	.unreserve = unreserve_coscheduling,
	.permit = permit_coscheduling,
	.post_bind = post_bind_coscheduling,
	.events = events_coscheduling,
};
