/* DefaultPreemption — PostFilter (upstream defaultpreemption/default_preemption.go): when a pod
 * fits nowhere, find the node where evicting the fewest, least important
 * lower-priority pods lets it fit, nominate it and have the victims
 * evicted. The work is done by the preemption engine (src/preemption.c);
 * evicting goes through the applier in the profile's handle environment
 * (handle.h), so this plugin never talks to the API server.
 * Asynchronous preemption (1.33+, on in 1.34): the applier evicts off the
 * scheduling thread and PreEnqueue holds the preemptor back meanwhile. */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "schedext/buf.h"
#include "schedext/handle.h"
#include "schedext/features.h"
#include "schedext/podgroup.h"
#include "schedext/preemption.h"
#include "slots.h"

/* The instance (upstream DefaultPreemption: its args and fh). */
struct dp_self {
	struct sx_preempt_args args;
	struct sx_handle *handle; /* the profile's; NULL (tests): no environment */
};

static void *init_default_preemption(const cJSON *json, struct sx_handle *h, struct sx_error *err)
{
	struct dp_self *s = sx_calloc(1, sizeof(*s));
	if (!s) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (sx_preempt_args_parse(json, &s->args, err) < 0) {
		free(s);
		return NULL;
	}
	s->handle = h;
	return s;
}

static void destroy_default_preemption(void *self)
{
	free(self);
}

static void write_args_default_preemption(const void *self, struct sx_jw *w)
{
	const struct dp_self *s = self;

	sx_jw_kint(w, "minCandidateNodesPercentage", s->args.min_candidate_nodes_percentage);
	sx_jw_kint(w, "minCandidateNodesAbsolute", s->args.min_candidate_nodes_absolute);
}

/* The profile's evaluator state (handle.h); NULL without a handle. */
static struct sx_preemption_eval *evaluator(const void *self)
{
	const struct dp_self *s = self;

	return s && s->handle ? s->handle->preemption : NULL;
}

/* Hands a successful result to the applier; its failure becomes the
 * PostFilter error ("preemption: <err>"), as prepareCandidate's does. */
static struct sx_status *apply(const struct sx_handle_env *env, struct sx_preemption_eval *ev,
			       const struct sx_pod *pod, const struct sx_preempt_result *r)
{
	char msg[1024];
	struct sx_status *st = env->apply ? env->apply(env->apply_ctx, ev, pod, r) : NULL;
	struct sx_status *out;
	if (sx_status_is_success(st)) {
		sx_status_free(st);
		return NULL;
	}
	out = sx_status_new(SX_ERROR, "preemption: %s", sx_status_message(st, msg, sizeof(msg)));
	sx_status_free(st);
	return out;
}

/* A dry run (filtered->dry_run) finds the same victims as a real one
 * with the caller's profile and nominator and a fixed candidate offset of
 * 0 (upstream picks it at random), hands the whole answer to the caller
 * and evicts nothing; a real run takes them from the preemption
 * environment and has the applier evict. */
static struct sx_status *post_filter_default_preemption(void *self, struct sx_cycle_state *cs,
							const struct sx_pod *pod,
							const struct sx_filtered_status *filtered,
							struct sx_post_filter_result *result)
{
	const struct sx_post_filter_dry_run *dry = filtered->dry_run;
	const struct dp_self *dp = self;
	struct sx_preemption_eval *ev = evaluator(self);
	struct sx_handle_env env;
	struct sx_preempt_result r;
	uint64_t rng;
	sx_handle_env(dp->handle, &env);
	/* upstream Evaluator.Handle: the PostFilter knows its profile (none
	 * only for an instance made without a handle). */
	const struct sx_profile *prof = dry	     ? dry->profile
					: dp->handle ? dp->handle->profile
						     : NULL;
	if (!prof)
		return sx_status_new(SX_ERROR, "preemption: profile not registered with the "
					       "preemption environment");
	struct sx_preempt_input in = {
		.snap = filtered->snap,
		.statuses = filtered->statuses,
		.nominator = dry ? dry->nominator : env.nominator,
		.args = &dp->args,
		.offset = -1,
		.rng = !dry && sx_preemption_next_rng(ev, &rng) ? &rng : NULL,
		.extenders = dry ? NULL : env.extenders,
	};
	sx_preempt(prof, cs, pod, &in, &r);
	struct sx_status *st = r.status;
	r.status = NULL;
	result->nominated_node = r.nominated_node;
	if (dry) {
		if (dry->preemption) {
			sx_preempt_result_free(dry->preemption);
			*dry->preemption = r;
		} else {
			sx_preempt_result_free(&r);
		}
		return st;
	}
	if (!st && r.nominated_node != SX_STR_EMPTY) {
		st = apply(&env, ev, pod, &r);
		sx_preemption_count(ev, st ? 0 : r.victims.n);
		if (st)
			result->nominated_node = SX_STR_EMPTY;
	} else {
		sx_preemption_count(ev, 0);
	}
	sx_preempt_result_free(&r);
	return st;
}

/* PodGroupPostFilter (default_preemption.go): the group's preemption
 * (podgroup.h) and, when it found victims, their eviction through the
 * handle's group applier. */
static struct sx_status *
pod_group_post_filter_default_preemption(void *self, const struct sx_pg_preempt_input *in,
					 struct sx_pg_preempt_result *out)
{
	const struct dp_self *dp = self;
	struct sx_handle_env env;
	struct sx_status *st, *ap;
	char msg[1024];

	sx_pod_group_preempt(in, out);
	st = out->status;
	out->status = NULL;
	if (st)
		return st;
	sx_handle_env(dp ? dp->handle : NULL, &env);
	if (!env.apply_group)
		return NULL;
	ap = env.apply_group(env.apply_ctx, evaluator(self), in->pg, in->pods, in->npods, out);
	if (sx_status_is_success(ap))
		return NULL;
	st = sx_status_new(SX_ERROR, "pod group preemption: %s",
			   sx_status_message(ap, msg, sizeof(msg)));
	sx_status_free(ap);
	return st;
}

/* Is the pod a member of a pod group whose preemption is running? */
static bool group_running(const void *self, const struct sx_pod *pod)
{
	const struct dp_self *dp = self;
	char key[600];

	if (pod->scheduling_group == SX_STR_EMPTY || !dp || !dp->handle || !dp->handle->profile ||
	    !sx_feature_enabled(&dp->handle->profile->features, SX_FEATURE_GENERIC_WORKLOAD))
		return false;
	return sx_preemption_running(
		evaluator(self),
		sx_pg_preemption_key(pod->meta.ns, pod->scheduling_group, key, sizeof(key)));
}

/* PreEnqueue: the preemptor (or its group) waits until its victims are
 * being deleted. */
static struct sx_status *pre_enqueue_default_preemption(void *self, const struct sx_pod *pod)
{
	if (group_running(self, pod))
		return sx_status_new(
			SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			"waiting for the preemption for this pod group to be finished");
	if (!sx_preemption_running(evaluator(self), pod->meta.uid))
		return NULL;
	return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
			     "waiting for the preemption for this pod to be finished");
}

/* isPodSchedulableAfterPodDeletion: a deletion (of a victim) helps once
 * the preemption has let go of the pod. */
static enum sx_hint hint_pod_default_preemption(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	return sx_preemption_running(evaluator(self), pod->meta.uid) || group_running(self, pod)
		       ? SX_QUEUE_SKIP
		       : SX_QUEUE;
}

static const struct sx_event_reg events_default_preemption[] = {
	{SX_RES_POD, SX_ACT_DELETE, hint_pod_default_preemption},
	SX_EVENTS_END,
};

const struct sx_plugin sx_plugin_default_preemption = {
	.name = "DefaultPreemption",
	.init = init_default_preemption,
	.destroy = destroy_default_preemption,
	.args_kind = "DefaultPreemptionArgs",
	.write_args = write_args_default_preemption,
	.pre_enqueue = pre_enqueue_default_preemption,
	.post_filter = post_filter_default_preemption,
	.pod_group_post_filter = pod_group_post_filter_default_preemption,
	.events = events_default_preemption,
};
