/* The scheduling.k8s.io/v1beta1 Workload and PodGroup decoders
 * (workload.h): metadata, the spec fields scheduling reads, with the same
 * type checks and limits as every other kind (decode.c's field readers);
 * status is only checked to be an object. Fields follow
 * staging/src/k8s.io/api/scheduling/v1beta1/types.go (WorkloadSpec,
 * PodGroupTemplate, PodGroupSpec, PodGroupSchedulingPolicy,
 * GangSchedulingPolicy, DisruptionMode, PodGroupSchedulingConstraints,
 * WorkloadReference). Also their frees (reference counting: model.c).
 * And scheduler-plugins' PodGroup CRD, scheduling.x-k8s.io/v1alpha1
 * (kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1/types.go:
 * PodGroupSpec minMember, minResources, scheduleTimeoutSeconds;
 * PodGroupStatus phase and counts).
 *
 * Ownership: each object is allocated here and owned by the caller
 * (reference count 1, released with sx_workload_unref/sx_pod_group_unref).
 */
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/workload.h"

/* schedulingPolicy.gang (elem: the spec): minCount is required and
 * positive (GangSchedulingPolicy, +k8s:minimum=1). */
static int decode_gang(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_group_spec *s = elem;
	bool present = false;
	int64_t v = 0;
	int rc = sx_dec_int64(j, "minCount", 1, INT32_MAX, &v, &present, err);

	(void)arg;
	if (rc == 0 && !present) {
		sx_error_set(err, SX_EINVAL, "required value");
		sx_error_prefix(err, "minCount");
		return SX_EINVAL;
	}
	s->min_count = (int32_t)v;
	s->policy = SX_GROUP_POLICY_GANG;
	return rc;
}

static int decode_basic(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_group_spec *s = elem;

	(void)j, (void)arg, (void)err;
	s->policy = SX_GROUP_POLICY_BASIC;
	return 0;
}

static int decode_policy(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	int rc = sx_dec_sub(j, "basic", decode_basic, elem, arg, err);

	if (rc == 0)
		rc = sx_dec_sub(j, "gang", decode_gang, elem, arg, err);
	return rc;
}

static int decode_topology(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	(void)arg;
	return sx_dec_intern(j, "key", elem, err);
}

static int decode_constraints(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_group_spec *s = elem;

	return sx_dec_objects(j, "topology", &s->topology, &s->ntopology, decode_topology, arg,
			      err);
}

static int decode_disruption(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_group_spec *s = elem;

	(void)arg, (void)err;
	if (sx_dec_get(j, "all"))
		s->disruption = SX_DISRUPTION_ALL;
	else if (sx_dec_get(j, "single"))
		s->disruption = SX_DISRUPTION_SINGLE;
	return 0;
}

/* The fields a PodGroupTemplate and a PodGroupSpec share. */
static int decode_group_spec(const cJSON *j, struct sx_group_spec *s, struct sx_error *err)
{
	const char *policy = NULL;
	int64_t prio = 0;
	int rc = sx_dec_sub(j, "schedulingPolicy", decode_policy, s, NULL, err);

	if (rc == 0)
		rc = sx_dec_sub(j, "schedulingConstraints", decode_constraints, s, NULL, err);
	if (rc == 0)
		rc = sx_dec_sub(j, "disruptionMode", decode_disruption, s, NULL, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "priorityClassName", &s->priority_class, err);
	if (rc == 0)
		rc = sx_dec_int64(j, "priority", INT32_MIN, INT32_MAX, &prio, &s->has_priority,
				  err);
	s->priority = (int32_t)prio;
	if (rc == 0)
		rc = sx_dec_string(j, "preemptionPolicy", &policy, err);
	if (rc == 0 && policy) {
		s->has_preemption_policy = true;
		s->preempt_never = strcmp(policy, "Never") == 0;
	}
	return rc;
}

static void group_spec_clear(struct sx_group_spec *s)
{
	free(s->topology);
	s->topology = NULL;
	s->ntopology = 0;
}

/* ---------- Workload ---------- */

static int decode_template(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pod_group_template *t = elem;
	int rc = sx_dec_intern(j, "name", &t->name, err);

	(void)arg;
	if (rc == 0)
		rc = decode_group_spec(j, &t->spec, err);
	return rc;
}

static int decode_controller(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_workload *w = elem;
	int rc = sx_dec_intern(j, "apiGroup", &w->controller_api_group, err);

	(void)arg;
	if (rc == 0)
		rc = sx_dec_intern(j, "kind", &w->controller_kind, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "name", &w->controller_name, err);
	return rc;
}

void sx_workload_free(struct sx_workload *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->ntemplates; i++)
		group_spec_clear(&w->templates[i].spec);
	free(w->templates);
	sx_meta_clear(&w->meta);
	free(w);
}

struct sx_workload *sx_decode_workload(const cJSON *json, struct sx_error *err)
{
	struct sx_workload *w = sx_dec_new(json, sizeof(*w), err);
	const cJSON *spec;
	int rc;

	if (!w)
		return NULL;
	atomic_init(&w->refcount, 1);
	rc = sx_dec_head(json, &w->meta, err);
	spec = sx_dec_get(json, "spec");
	if (rc == 0)
		rc = sx_dec_sub(spec, "controllerRef", decode_controller, w, NULL, err);
	if (rc == 0)
		rc = sx_dec_objects(spec, "podGroupTemplates", &w->templates, &w->ntemplates,
				    decode_template, NULL, err);
	if (rc < 0) {
		sx_error_prefix(err, "spec");
		sx_workload_free(w);
		return NULL;
	}
	return w;
}

/* ---------- PodGroup ---------- */

static int decode_workload_ref(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pod_group *g = elem;
	int rc = sx_dec_intern(j, "workloadName", &g->workload_name, err);

	(void)arg;
	if (rc == 0)
		rc = sx_dec_intern(j, "templateName", &g->template_name, err);
	return rc;
}

void sx_pod_group_free(struct sx_pod_group *g)
{
	if (!g)
		return;
	group_spec_clear(&g->spec);
	sx_meta_clear(&g->meta);
	free(g);
}

/* metadata.generation and the PodGroupInitiallyScheduled condition's status
 * (what the pod-group cycle needs to write the condition as upstream's
 * updatePodGroupCondition does); malformed entries are ignored. */
static void decode_group_status(const cJSON *json, struct sx_pod_group *g)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(json, "metadata");
	const cJSON *gen = md ? cJSON_GetObjectItemCaseSensitive(md, "generation") : NULL;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(json, "status");
	const cJSON *conds = st ? cJSON_GetObjectItemCaseSensitive(st, "conditions") : NULL;
	const cJSON *c;

	g->initially_scheduled = -1;
	if (cJSON_IsNumber(gen))
		g->generation = (int64_t)gen->valuedouble;
	if (!cJSON_IsArray(conds))
		return;
	cJSON_ArrayForEach(c, conds)
	{
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
		const cJSON *status = cJSON_GetObjectItemCaseSensitive(c, "status");

		if (cJSON_IsString(type) &&
		    strcmp(type->valuestring, "PodGroupInitiallyScheduled") == 0 &&
		    cJSON_IsString(status))
			g->initially_scheduled = strcmp(status->valuestring, "True") == 0 ? 1 : 0;
	}
}

struct sx_pod_group *sx_decode_pod_group(const cJSON *json, struct sx_error *err)
{
	struct sx_pod_group *g = sx_dec_new(json, sizeof(*g), err);
	const cJSON *spec;
	int rc;

	if (!g)
		return NULL;
	atomic_init(&g->refcount, 1);
	rc = sx_dec_head(json, &g->meta, err);
	decode_group_status(json, g);
	spec = sx_dec_get(json, "spec");
	if (rc == 0 && spec) {
		rc = decode_group_spec(spec, &g->spec, err);
		if (rc == 0)
			rc = sx_dec_sub(spec, "workloadRef", decode_workload_ref, g, NULL, err);
		if (rc == 0)
			rc = sx_dec_intern(spec, "parentCompositePodGroupName",
					   &g->parent_composite, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc < 0) {
		sx_pod_group_free(g);
		return NULL;
	}
	return g;
}

/* ---------- scheduling.x-k8s.io/v1alpha1 PodGroup ---------- */

void sx_cosched_group_free(struct sx_cosched_group *g)
{
	if (!g)
		return;
	free(g->min_resources.scalar);
	sx_meta_clear(&g->meta);
	free(g);
}

static int decode_cosched_spec(const cJSON *spec, struct sx_cosched_group *g, struct sx_error *err)
{
	struct sx_rlist l = {0};
	int rc = sx_dec_int32(spec, "minMember", &g->min_member, NULL, err);

	if (rc == 0)
		rc = sx_dec_int32(spec, "scheduleTimeoutSeconds", &g->schedule_timeout_seconds,
				  &g->has_schedule_timeout, err);
	if (rc == 0)
		rc = sx_dec_rlist(spec, "minResources", true, &l, &g->has_min_resources, err);
	if (rc == 0 && g->has_min_resources) {
		rc = sx_rlist_to_resources(&l, &g->min_resources, err);
		if (rc < 0)
			sx_error_prefix(err, "minResources");
	}
	sx_rlist_clear(&l);
	return rc;
}

static int decode_cosched_status(const cJSON *st, struct sx_cosched_group *g, struct sx_error *err)
{
	int rc = sx_dec_intern(st, "phase", &g->phase, err);

	if (rc == 0)
		rc = sx_dec_int32(st, "scheduled", &g->scheduled, NULL, err);
	if (rc == 0)
		rc = sx_dec_int32(st, "running", &g->running, NULL, err);
	if (rc == 0)
		rc = sx_dec_int32(st, "succeeded", &g->succeeded, NULL, err);
	if (rc == 0)
		rc = sx_dec_int32(st, "failed", &g->failed, NULL, err);
	if (rc == 0) {
		int64_t t;

		rc = sx_dec_time(st, "scheduleStartTime", &t, &g->has_schedule_start, err);
	}
	return rc;
}

struct sx_cosched_group *sx_decode_cosched_group(const cJSON *json, struct sx_error *err)
{
	struct sx_cosched_group *g = sx_dec_new(json, sizeof(*g), err);
	const cJSON *spec, *st;
	int rc;

	if (!g)
		return NULL;
	atomic_init(&g->refcount, 1);
	rc = sx_dec_head(json, &g->meta, err);
	if (rc == 0)
		rc = sx_dec_object(json, "spec", &spec, err);
	if (rc == 0 && spec) {
		rc = decode_cosched_spec(spec, g, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc == 0)
		rc = sx_dec_object(json, "status", &st, err);
	if (rc == 0 && st) {
		rc = decode_cosched_status(st, g, err);
		if (rc < 0)
			sx_error_prefix(err, "status");
	}
	if (rc < 0) {
		sx_cosched_group_free(g);
		return NULL;
	}
	return g;
}
