/* GangScheduling (PreEnqueue, Reserve/Unreserve, Permit): all-or-nothing
 * for pods of a PodGroup with a gang scheduling policy
 * (pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go of
 * 1.37, GangScheduling.PreEnqueue, Permit, EventsToRegister; pod groups
 * without a parent CompositePodGroup). Enabled in the default profile
 * only with the GangScheduling and GenericWorkload gates (config.c).
 *
 * PreEnqueue holds a member back until its PodGroup exists and at least
 * gang.minCount pods of the group exist; Permit makes each member Wait
 * until minCount members are assumed or bound, then allows every waiting
 * member of the group (the handle's waiting pods, binding_cycle.h). A
 * member that waits longer than 5 minutes (permitTimeoutDuration) is
 * rejected by the waiting-pod timer: "rejected due to timeout after
 * waiting 5m0s at plugin GangScheduling".
 *
 * The pod group state (upstream's PodGroupManager: PodGroups and
 * PodGroupStates; gang_members.h, shared with Coscheduling) is kept per
 * instance from the handle's object events
 * (PodGroup and Pod kinds), so PreEnqueue, which runs under the cache's
 * and the queue's locks, never reads the cache. Assumed members are
 * marked at Reserve and unmarked at Unreserve (the cache assumes a pod
 * just before Reserve and forgets it after Unreserve), bound ones by
 * spec.nodeName: ScheduledPodsCount is both.
 *
 * Only the standalone loop feeds the handle's pod events; where nothing
 * does (the extender, explain, what-if) the plugin gates nothing: as an
 * extender, kube-scheduler's own GangScheduling has run already.
 *
 * Test hook: SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS in the environment, read
 * once at init, replaces the 5-minute Permit timeout (upstream has no
 * argument for it); for tests only.
 *
 * PlacementFeasible serves the pod-group cycle (podgroup.h): it enforces
 * minCount while the group's members are placed one after another.
 *
 * Not here: Activate of the other members at Permit (the queue has no
 * Activate), CompositePodGroup hierarchies.
 *
 * Threads: every hook may run on any thread; the state has its own mutex
 * (gang_members.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/plugin.h"
#include "schedext/binding_cycle.h"
#include "schedext/handle.h"
#include "schedext/workload.h"
#include "gang_members.h"

#define GANG_NAME	  "GangScheduling"
#define PERMIT_TIMEOUT_MS (5ull * 60 * 1000) /* permitTimeoutDuration */

struct gang {
	struct sx_handle *h; /* borrowed: outlives the instance */
	uint64_t timeout_ms;
	/* The pod group state, shared with Coscheduling (gang_members.h). A
	 * front end feeds the handle's pod events (the standalone loop
	 * delivers every pod, each before its own PreEnqueue). Without one
	 * (the extender, explain) there is no pod group state (m.fed false),
	 * and the plugin gates nothing: as an extender, kube-scheduler's own
	 * GangScheduling has gated the pod already. */
	struct sx_gang_members m;
};

/* The handle's object events (upstream: the PodGroup informer and the
 * pod group manager's AddPodGroupMember/DeletePodGroupMember). */
static void object_gang_scheduling(void *self, enum sx_kind kind, const void *old_obj,
				   const void *new_obj)
{
	struct gang *s = self;

	sx_gang_members_event(&s->m, kind, old_obj, new_obj);
}

static const struct sx_pod_group *group_obj(const struct sx_gang_group *g)
{
	return g ? g->obj : NULL;
}

/* GangScheduling.PreEnqueue (hierarchies disabled). */
static struct sx_status *pre_enqueue_gang_scheduling(void *self, const struct sx_pod *pod)
{
	struct gang *s = self;
	struct sx_status *st = NULL;
	const struct sx_gang_group *g;
	const struct sx_pod_group *pg;

	if (pod->scheduling_group == SX_STR_EMPTY)
		return NULL;
	sx_gang_members_lock(&s->m);
	g = sx_gang_members_find(&s->m, pod->meta.ns, pod->scheduling_group);
	pg = group_obj(g);
	if (!s->m.fed)
		st = NULL;
	else if (!pg)
		st = sx_status_new(
			SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			"waiting for pods's pod group \"%s\" to appear in scheduling queue",
			sx_str_get(pod->scheduling_group));
	else if (pg->spec.policy == SX_GROUP_POLICY_GANG && g->n < (uint32_t)pg->spec.min_count)
		st = sx_status_new(
			SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			"waiting for minCount pods from a gang to appear in scheduling queue");
	sx_gang_members_unlock(&s->m);
	return st;
}

/* Reserve/Unreserve: the pod is assumed in the cache from just before
 * Reserve until it is bound or forgotten after Unreserve (upstream
 * counts assumed pods in PodGroupState.AssumedPods). */
static struct sx_status *reserve_gang_scheduling(void *self, struct sx_cycle_state *cs,
						 const struct sx_pod *pod, sx_str node)
{
	struct gang *s = self;

	sx_gang_members_assume(&s->m, pod, true);
	return NULL;
}

static void unreserve_gang_scheduling(void *self, struct sx_cycle_state *cs,
				      const struct sx_pod *pod, sx_str node)
{
	struct gang *s = self;

	sx_gang_members_assume(&s->m, pod, false);
}

/* GangScheduling.Permit / permitPodGroup. */
static struct sx_status *permit_gang_scheduling(void *self, struct sx_cycle_state *cs,
						const struct sx_pod *pod, sx_str node,
						uint64_t *timeout_ms)
{
	struct gang *s = self;
	const struct sx_gang_group *g;
	const struct sx_pod_group *pg;
	uint32_t scheduled = 0;
	int32_t min_count = 0;
	bool gang;

	if (pod->scheduling_group == SX_STR_EMPTY)
		return NULL;
	sx_gang_members_lock(&s->m);
	g = sx_gang_members_find(&s->m, pod->meta.ns, pod->scheduling_group);
	pg = group_obj(g);
	if (!s->m.fed) {
		sx_gang_members_unlock(&s->m);
		return NULL;
	}
	if (!pg) {
		sx_gang_members_unlock(&s->m);
		return sx_status_new(
			SX_ERROR,
			"failed to get podGroup %s/%s: podgroup.scheduling.k8s.io \"%s\" "
			"not found",
			sx_str_get(pod->meta.ns), sx_str_get(pod->scheduling_group),
			sx_str_get(pod->scheduling_group));
	}
	gang = pg->spec.policy == SX_GROUP_POLICY_GANG;
	min_count = pg->spec.min_count;
	scheduled = sx_gang_group_scheduled(g);
	sx_gang_members_unlock(&s->m);
	if (!gang)
		return NULL;
	if (scheduled < (uint32_t)min_count) {
		*timeout_ms = s->timeout_ms;
		return sx_status_new(SX_WAIT,
				     "waiting for minCount pods from a gang to be scheduled");
	}
	/* The quorum is met: allow every waiting member of the gang. */
	sx_gang_members_settle_waiting(&s->m, s->h, pod->meta.ns, pod->scheduling_group, GANG_NAME,
				       NULL);
	return NULL;
}

/* GangScheduling.PlacementFeasible (1.37, with getMinCount: a basic
 * policy counts as minCount 1): Unschedulable once the remaining members
 * cannot make up minCount, Wait until they have, Success after. */
static struct sx_status *placement_feasible_gang_scheduling(void *self,
							    const struct sx_pod_group *pg,
							    struct sx_placement_progress p)
{
	int32_t min_count = pg->spec.policy == SX_GROUP_POLICY_GANG ? pg->spec.min_count : 1;

	(void)self;
	if (p.remaining + p.scheduled < min_count)
		return sx_status_new(
			SX_UNSCHEDULABLE,
			"minCount (%d) cannot be satisfied: %d scheduled, %d remaining", min_count,
			p.scheduled, p.remaining);
	if (p.scheduled < min_count)
		return sx_status_new(
			SX_WAIT, "minCount (%d) is not yet satisfied: %d scheduled, %d remaining",
			min_count, p.scheduled, p.remaining);
	return NULL;
}

/* isSchedulableAfterPodAdded: an added pod of the same group may complete
 * the gang's minCount. */
static enum sx_hint hint_pod_added_gang_scheduling(void *self, const struct sx_pod *pod,
						   const void *old_obj, const void *new_obj)
{
	const struct sx_pod *added = new_obj;

	if (pod->scheduling_group == SX_STR_EMPTY || !added ||
	    added->scheduling_group == SX_STR_EMPTY)
		return SX_QUEUE_SKIP;
	return added->meta.ns == pod->meta.ns && added->scheduling_group == pod->scheduling_group
		       ? SX_QUEUE
		       : SX_QUEUE_SKIP;
}

/* The PodGroup of a PodGroup event's object (struct sx_object, plugin.h). */
static const struct sx_pod_group *event_group(const void *obj)
{
	const struct sx_object *o = obj;

	return o && o->kind == SX_KIND_POD_GROUP ? o->obj : NULL;
}

static bool own_group(const struct sx_pod *pod, const struct sx_pod_group *g)
{
	return g && pod->scheduling_group != SX_STR_EMPTY && g->meta.ns == pod->meta.ns &&
	       strcmp(g->meta.name, sx_str_get(pod->scheduling_group)) == 0;
}

/* isSchedulableAfterPodGroupAdded: the pod's own PodGroup appeared. */
static enum sx_hint hint_group_added_gang_scheduling(void *self, const struct sx_pod *pod,
						     const void *old_obj, const void *new_obj)
{
	return own_group(pod, event_group(new_obj)) ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* isSchedulableAfterPodGroupUpdated: only a lower minCount of the pod's
 * own gang may help (a non-gang policy on either side is unexpected and
 * requeues). */
static enum sx_hint hint_group_updated_gang_scheduling(void *self, const struct sx_pod *pod,
						       const void *old_obj, const void *new_obj)
{
	const struct sx_pod_group *o = event_group(old_obj), *n = event_group(new_obj);

	if (!o || !own_group(pod, n))
		return SX_QUEUE_SKIP;
	if (o->spec.policy != SX_GROUP_POLICY_GANG || n->spec.policy != SX_GROUP_POLICY_GANG)
		return SX_QUEUE;
	return n->spec.min_count < o->spec.min_count ? SX_QUEUE : SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_gang_scheduling[] = {
	{SX_RES_UNSCHEDULED_POD, SX_ACT_ADD, hint_pod_added_gang_scheduling},
	{SX_RES_ASSIGNED_POD, SX_ACT_ADD, hint_pod_added_gang_scheduling},
	{SX_RES_POD_GROUP, SX_ACT_ADD, hint_group_added_gang_scheduling},
	{SX_RES_POD_GROUP, SX_ACT_UPDATE, hint_group_updated_gang_scheduling},
	SX_EVENTS_END,
};

static void *init_gang_scheduling(const struct cJSON *args, struct sx_handle *h,
				  struct sx_error *err)
{
	struct gang *s = calloc(1, sizeof(*s));
	const char *t = getenv("SCHEDEXT_TEST_GANG_PERMIT_TIMEOUT_MS");

	if (!s) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	s->h = h;
	s->timeout_ms = t && *t ? strtoull(t, NULL, 10) : PERMIT_TIMEOUT_MS;
	if (sx_gang_members_init(&s->m, SX_KIND_POD_GROUP, NULL) < 0) {
		free(s);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (h) {
		struct sx_handle_listener l = {
			.kinds = (1ull << SX_KIND_POD) | (1ull << SX_KIND_POD_GROUP),
			.object = object_gang_scheduling,
			.self = s,
		};
		if (sx_handle_listen(h, &l) < 0) {
			sx_gang_members_destroy(&s->m);
			free(s);
			sx_error_set(err, SX_ENOMEM, "GangScheduling: too many handle listeners");
			return NULL;
		}
	}
	return s;
}

static void destroy_gang_scheduling(void *self)
{
	struct gang *s = self;

	if (!s)
		return;
	if (s->h)
		sx_handle_unlisten(s->h, s);
	sx_gang_members_destroy(&s->m);
	free(s);
}

const struct sx_plugin sx_plugin_gang_scheduling = {
	.name = GANG_NAME,
	.init = init_gang_scheduling,
	.destroy = destroy_gang_scheduling,
	.pre_enqueue = pre_enqueue_gang_scheduling,
	.reserve = reserve_gang_scheduling,
	.unreserve = unreserve_gang_scheduling,
	.permit = permit_gang_scheduling,
	.placement_feasible = placement_feasible_gang_scheduling,
	.events = events_gang_scheduling,
};
