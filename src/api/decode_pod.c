/* v1.Pod decoding (staging/src/k8s.io/api/core/v1/types.go; requests as
 * component-helpers/resource/helpers.go PodRequests).
 *
 * Besides copying fields, the decoder derives what every consumer would
 * otherwise recompute: the effective request (exact nano sums, converted
 * once), its non-zero scoring variant, the host ports claimed and the PVC
 * names used.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/decode.h"
#include "schedext/dra.h"
#include "schedext/vec.h"

/* 100m cpu and 200Mi memory for containers without such a request key
 * (scheduler util DefaultMilliCPURequest / DefaultMemoryRequest). */
#define NONZERO_CPU_NANO ((sx_nano)100 * 1000000)
#define NONZERO_MEM_NANO ((sx_nano)209715200 * SX_NANO_PER_UNIT)

/* State shared by the container decoders of one pod. */
struct pod_ctx {
	struct sx_pod *pod;
	const cJSON *statuses;	    /* status.containerStatuses */
	const cJSON *init_statuses; /* status.initContainerStatuses */
	bool resize_infeasible;	    /* PodResizePending/Infeasible condition */
	bool disruption_seen;	    /* a DisruptionTarget condition was read */
	uint32_t ports_cap;
	struct sx_rlist *eff;	   /* per container: requests used for sums */
	struct sx_rlist *init_eff; /* per init container */
	struct sx_rlist pod_level; /* spec.resources.requests */
	struct sx_rlist overhead;  /* spec.overhead */
	/* Pod-level resize state (InPlacePodLevelResourcesVerticalScaling):
	 * status.resources.requests and status.allocatedResources. */
	struct sx_rlist status_req, status_alloc;
	bool has_status_res, has_status_req, has_status_alloc;
	/* The container aggregate comes from the pod-level status (1.37's
	 * AggregateContainerRequests): the spec-only container lists, kept
	 * before the container statuses are applied. */
	bool pod_status_aggregate;
	struct sx_rlist *spec_eff, *spec_init_eff;
	/* 1.37 otherwise (PR 140047): the spec, allocated and actuated
	 * requests are summed apart over the containers, then the max taken
	 * (per container lists below; spec_eff as above). */
	bool max_of_sums;
	struct sx_rlist *alloc_eff, *alloc_init_eff, *act_eff, *act_init_eff;
};

/* How pods are decoded for the configuration in force
 * (sx_decode_set_pod_resources): the InPlacePodLevelResourcesVerticalScaling
 * gate and the release. Set before informers start; read on the decoding
 * threads. */
static atomic_bool in_place_pod_level = true;
static atomic_int pod_resources_release = 37;

void sx_decode_set_pod_resources(bool in_place_pod_level_resize, int release_minor)
{
	atomic_store(&in_place_pod_level, in_place_pod_level_resize);
	atomic_store(&pod_resources_release, release_minor);
}

/* A string field that must be one of names[0..n) (or absent: *out = dflt). */
static int container_needs(const cJSON *j, uint8_t *needs, struct sx_error *err);
static int decode_spec_needs(const cJSON *spec, struct sx_pod *pod, struct sx_error *err);

static int decode_enum(const cJSON *obj, const char *key, const char *const *names, int n, int dflt,
		       uint8_t *out, struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(obj, key, &s, err);

	*out = (uint8_t)dflt;
	if (rc < 0 || !s)
		return rc;
	for (int i = 0; i < n; i++) {
		if (names[i] && strcmp(s, names[i]) == 0) {
			*out = (uint8_t)i;
			return 0;
		}
	}
	sx_error_set(err, SX_EINVAL, "unknown %s \"%.64s\"", key, s);
	sx_error_prefix(err, key);
	return SX_EINVAL;
}

static const char *const effect_names[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};

/* ---------- metadata ---------- */

static int decode_owner(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_owner_ref *o = elem;
	int rc = sx_dec_intern(j, "kind", &o->kind, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "name", &o->name, err);
	if (rc == 0)
		rc = sx_dec_strdup(j, "uid", &o->uid, err);
	if (rc == 0)
		rc = sx_dec_bool(j, "controller", &o->controller, err);
	return rc;
}

static int decode_pod_metadata(const cJSON *json, struct sx_pod *pod, struct sx_error *err)
{
	const cJSON *md;
	int rc = sx_dec_meta(json, &pod->meta, err);

	if (rc < 0)
		return rc;
	md = sx_dec_get(json, "metadata");
	rc = sx_dec_time(md, "deletionTimestamp", &(int64_t){0}, &pod->deleting, err);
	if (rc == 0)
		rc = sx_dec_objects(md, "ownerReferences", &pod->owners, &pod->nowners,
				    decode_owner, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "metadata");
	return rc;
}

/* ---------- affinity ---------- */

static int decode_pod_affinity_term(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pod_affinity_term *t = elem;
	int rc = sx_dec_selector_field(j, "labelSelector", &t->selector, err);

	if (rc == 0)
		rc = sx_dec_str_list(j, "namespaces", &t->nnamespaces, &t->namespaces, err);
	if (rc == 0)
		rc = sx_dec_selector_field(j, "namespaceSelector", &t->ns_selector, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "topologyKey", &t->topology_key, err);
	if (rc == 0)
		rc = sx_dec_str_list(j, "matchLabelKeys", &t->nmatch_label_keys,
				     &t->match_label_keys, err);
	if (rc == 0)
		rc = sx_dec_str_list(j, "mismatchLabelKeys", &t->nmismatch_label_keys,
				     &t->mismatch_label_keys, err);
	return rc;
}

static int decode_weighted_term(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_weighted_pod_affinity_term *t = elem;
	int rc = sx_dec_int32(j, "weight", &t->weight, NULL, err);

	if (rc == 0)
		rc = sx_dec_sub(j, "podAffinityTerm", decode_pod_affinity_term, &t->term, NULL,
				err);
	return rc;
}

/* affinity[key] as a pod (anti-)affinity; *out NULL when absent. */
static int decode_pod_affinity(const cJSON *aff, const char *key, struct sx_pod_affinity **out,
			       struct sx_error *err)
{
	const cJSON *j;
	int rc = sx_dec_object(aff, key, &j, err);

	*out = NULL;
	if (rc < 0 || !j)
		return rc;
	*out = sx_calloc(1, sizeof(**out));
	if (!*out)
		return sx_dec_oom(err);
	rc = sx_dec_objects(j, "requiredDuringSchedulingIgnoredDuringExecution", &(*out)->required,
			    &(*out)->nrequired, decode_pod_affinity_term, NULL, err);
	if (rc == 0)
		rc = sx_dec_objects(j, "preferredDuringSchedulingIgnoredDuringExecution",
				    &(*out)->preferred, &(*out)->npreferred, decode_weighted_term,
				    NULL, err);
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

static int decode_affinity(const cJSON *spec, struct sx_pod *pod, struct sx_error *err)
{
	const cJSON *aff, *na;
	struct sx_affinity *a;
	int rc = sx_dec_object(spec, "affinity", &aff, err);

	if (rc < 0 || !aff)
		return rc;
	a = pod->affinity = sx_calloc(1, sizeof(*a));
	if (!a)
		return sx_dec_oom(err);
	rc = sx_dec_object(aff, "nodeAffinity", &na, err);
	if (rc == 0 && na) {
		a->node_affinity = sx_decode_node_affinity(na, err);
		if (!a->node_affinity) {
			sx_error_prefix(err, "nodeAffinity");
			rc = err->code;
		}
	}
	if (rc == 0)
		rc = decode_pod_affinity(aff, "podAffinity", &a->pod_affinity, err);
	if (rc == 0)
		rc = decode_pod_affinity(aff, "podAntiAffinity", &a->pod_anti_affinity, err);
	if (rc < 0)
		sx_error_prefix(err, "affinity");
	return rc;
}

/* ---------- tolerations and spread ---------- */

static int decode_toleration(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	static const char *const ops[] = {"Equal", "Exists", "Lt", "Gt"};
	struct sx_toleration *t = elem;
	const char *op;
	int rc = sx_dec_intern(j, "key", &t->key, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "value", &t->value, err);
	if (rc == 0)
		rc = sx_dec_string(j, "operator", &op, err);
	/* "" is Equal, like an absent operator. */
	if (rc == 0 && op && *op)
		rc = decode_enum(j, "operator", ops, 4, SX_TOL_EQUAL, &t->op, err);
	if (rc == 0)
		rc = decode_enum(j, "effect", effect_names, 4, SX_EFFECT_NONE, &t->effect, err);
	if (rc == 0)
		rc = sx_dec_int64(j, "tolerationSeconds", INT64_MIN, INT64_MAX,
				  &t->toleration_seconds, &t->has_seconds, err);
	return rc;
}

static int decode_spread(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	static const char *const unsat[] = {"DoNotSchedule", "ScheduleAnyway"};
	static const char *const policies[] = {NULL, "Honor", "Ignore"};
	struct sx_spread_constraint *c = elem;
	int rc = sx_dec_int32(j, "maxSkew", &c->max_skew, NULL, err);

	if (rc == 0)
		rc = sx_dec_intern(j, "topologyKey", &c->topology_key, err);
	if (rc == 0)
		rc = decode_enum(j, "whenUnsatisfiable", unsat, 2, SX_DO_NOT_SCHEDULE,
				 &c->when_unsatisfiable, err);
	if (rc == 0)
		rc = decode_enum(j, "nodeAffinityPolicy", policies, 3, SX_POLICY_DEFAULT,
				 &c->node_affinity_policy, err);
	if (rc == 0)
		rc = decode_enum(j, "nodeTaintsPolicy", policies, 3, SX_POLICY_DEFAULT,
				 &c->node_taints_policy, err);
	if (rc == 0)
		rc = sx_dec_int32(j, "minDomains", &c->min_domains, NULL, err);
	if (rc == 0)
		rc = sx_dec_selector_field(j, "labelSelector", &c->selector, err);
	if (rc == 0)
		rc = sx_dec_str_list(j, "matchLabelKeys", &c->nmatch_label_keys,
				     &c->match_label_keys, err);
	return rc;
}

/* ---------- containers ---------- */

static int add_port(struct pod_ctx *ctx, sx_str ip, uint8_t proto, uint16_t port,
		    struct sx_error *err)
{
	struct sx_pod *pod = ctx->pod;

	if (sx_vec_reserve(pod->ports, ctx->ports_cap, pod->nports + 1, 4) < 0)
		return sx_dec_oom(err);
	pod->ports[pod->nports++] =
		(struct sx_host_port){.ip = ip, .protocol = proto, .port = port};
	return 0;
}

/* The container whose ports are read: claimed only for regular containers
 * and sidecars. */
struct port_args {
	struct pod_ctx *ctx;
	bool counted;
};

/* One containerPort entry (arg: struct port_args); claims a host port when
 * counted. */
static int decode_port(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	static const char *const protos[] = {"TCP", "UDP", "SCTP"};
	struct pod_ctx *ctx = ((struct port_args *)arg)->ctx;
	bool counted = ((struct port_args *)arg)->counted;
	int64_t cport = 0, hport = 0;
	uint8_t proto = SX_PROTO_TCP;
	sx_str ip = SX_STR_EMPTY;
	int rc = sx_dec_int64(j, "containerPort", INT32_MIN, INT32_MAX, &cport, NULL, err);

	if (rc == 0)
		rc = sx_dec_int64(j, "hostPort", INT32_MIN, INT32_MAX, &hport, NULL, err);
	if (rc == 0)
		rc = decode_enum(j, "protocol", protos, 3, SX_PROTO_TCP, &proto, err);
	if (rc == 0)
		rc = sx_dec_intern(j, "hostIP", &ip, err);
	if (rc < 0)
		return rc;
	/* API defaulting: with hostNetwork the host port is the container port. */
	if (ctx->pod->host_network && hport == 0)
		hport = cport;
	if (hport > 65535) {
		sx_error_set(err, SX_EINVAL, "port %lld out of range", (long long)hport);
		sx_error_prefix(err, ctx->pod->host_network && !sx_dec_get(j, "hostPort")
					     ? "containerPort"
					     : "hostPort");
		return SX_EINVAL;
	}
	if (!counted || hport <= 0) /* port <= 0 claims nothing */
		return 0;
	return add_port(ctx, ip, proto, (uint16_t)hport, err);
}

static int decode_ports(const cJSON *j, struct pod_ctx *ctx, bool counted, struct sx_error *err)
{
	struct port_args args = {ctx, counted};
	const cJSON *arr;
	uint32_t n;
	int rc = sx_dec_array(j, "ports", &arr, &n, err);

	return rc < 0 ? rc : sx_dec_each_object(arr, "ports", NULL, 0, decode_port, &args, err);
}

/* The status entry (and its index) for container `name` in arr. */
static const cJSON *find_status(const cJSON *arr, const char *name, uint32_t *idx)
{
	const cJSON *it;
	uint32_t i = 0;

	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *n = sx_dec_get(it, "name");

		if (cJSON_IsString(n) && n->valuestring && strcmp(n->valuestring, name) == 0) {
			*idx = i;
			return it;
		}
		i++;
	}
	return NULL;
}

/* In-place resize (InPlacePodVerticalScaling, beta-on 1.33): a container
 * whose status reports resources counts the per-resource max of its spec
 * request (dropped when the resize is Infeasible), the actuated requests and
 * the allocated resources. */
static int apply_status_resources(struct pod_ctx *ctx, bool init, const char *name,
				  struct sx_rlist *eff, struct sx_error *err)
{
	const char *key = init ? "initContainerStatuses" : "containerStatuses";
	const cJSON *arr = init ? ctx->init_statuses : ctx->statuses, *cs, *res;
	struct sx_rlist actual = {0}, alloc = {0};
	uint32_t idx;
	int rc;

	if (!arr || !name || !(cs = find_status(arr, name, &idx)) || !cJSON_IsObject(cs))
		return 0;
	rc = sx_dec_object(cs, "resources", &res, err);
	if (rc < 0 || !res)
		goto out;
	rc = sx_dec_rlist(res, "requests", true, &actual, NULL, err);
	if (rc < 0) {
		sx_error_prefix(err, "resources");
		goto out;
	}
	rc = sx_dec_rlist(cs, "allocatedResources", true, &alloc, NULL, err);
	if (rc < 0)
		goto out;
	if (ctx->resize_infeasible)
		sx_rlist_clear(eff);
	if (sx_rlist_merge(eff, &actual, SX_RL_MAX) < 0 ||
	    sx_rlist_merge(eff, &alloc, SX_RL_MAX) < 0)
		rc = sx_dec_oom(err);
out:
	if (rc < 0) {
		sx_error_prefixf(err, "[%u]", idx);
		sx_error_prefix(err, key);
		sx_error_prefix(err, "status");
	}
	sx_rlist_clear(&actual);
	sx_rlist_clear(&alloc);
	return rc;
}

/* 1.37's per-container lists (component-helpers/resource helpers.go
 * containerAllocatedRequests and containerActuatedRequests): allocated is
 * the status' allocatedResources, else the spec (nothing on an Infeasible
 * resize); actuated is the status' resources.requests, else its
 * allocatedResources, else the same fallback. */
static int status_lists(struct pod_ctx *ctx, bool init, const char *name,
			const struct sx_rlist *spec, struct sx_rlist *alloc, struct sx_rlist *act,
			struct sx_error *err)
{
	const char *key = init ? "initContainerStatuses" : "containerStatuses";
	const cJSON *arr = init ? ctx->init_statuses : ctx->statuses, *cs = NULL, *res = NULL;
	bool has_alloc = false, has_req = false;
	uint32_t idx = 0;
	int rc = 0;

	if (arr && name)
		cs = find_status(arr, name, &idx);
	if (cs && cJSON_IsObject(cs)) {
		has_alloc = sx_dec_get(cs, "allocatedResources") != NULL;
		rc = sx_dec_rlist(cs, "allocatedResources", true, alloc, NULL, err);
		if (rc == 0)
			rc = sx_dec_object(cs, "resources", &res, err);
		if (rc == 0 && res) {
			has_req = sx_dec_get(res, "requests") != NULL;
			rc = sx_dec_rlist(res, "requests", true, act, NULL, err);
			if (rc < 0)
				sx_error_prefix(err, "resources");
		}
		if (rc < 0) {
			sx_error_prefixf(err, "[%u]", idx);
			sx_error_prefix(err, key);
			sx_error_prefix(err, "status");
			return rc;
		}
	}
	if (!has_req && has_alloc)
		rc = sx_rlist_copy(act, alloc);
	else if (!has_req && !ctx->resize_infeasible)
		rc = sx_rlist_copy(act, spec);
	if (rc == 0 && !has_alloc && !ctx->resize_infeasible)
		rc = sx_rlist_copy(alloc, spec);
	return rc < 0 ? sx_dec_oom(err) : 0;
}

/* Copies of the spec lists (before statuses change them) into
 * spec_eff/spec_init_eff. */
static int keep_spec_lists(struct pod_ctx *ctx, struct sx_error *err)
{
	const struct sx_pod *pod = ctx->pod;
	int rc = 0;

	ctx->spec_eff = sx_calloc(pod->ncontainers + 1, sizeof(*ctx->spec_eff));
	ctx->spec_init_eff = sx_calloc(pod->ninit + 1, sizeof(*ctx->spec_init_eff));
	if (!ctx->spec_eff || !ctx->spec_init_eff)
		return sx_dec_oom(err);
	for (uint32_t i = 0; rc == 0 && i < pod->ncontainers; i++)
		rc = sx_rlist_copy(&ctx->spec_eff[i], &ctx->eff[i]);
	for (uint32_t i = 0; rc == 0 && i < pod->ninit; i++)
		rc = sx_rlist_copy(&ctx->spec_init_eff[i], &ctx->init_eff[i]);
	return rc < 0 ? sx_dec_oom(err) : 0;
}

/* 1.37: the allocated and actuated lists of every container and init
 * container (each looked up in the statuses, sidecar or not). */
static int max_of_sums_lists(struct pod_ctx *ctx, struct sx_error *err)
{
	const struct sx_pod *pod = ctx->pod;
	int rc = keep_spec_lists(ctx, err);

	if (rc < 0)
		return rc;
	ctx->alloc_eff = sx_calloc(pod->ncontainers + 1, sizeof(*ctx->alloc_eff));
	ctx->act_eff = sx_calloc(pod->ncontainers + 1, sizeof(*ctx->act_eff));
	ctx->alloc_init_eff = sx_calloc(pod->ninit + 1, sizeof(*ctx->alloc_init_eff));
	ctx->act_init_eff = sx_calloc(pod->ninit + 1, sizeof(*ctx->act_init_eff));
	if (!ctx->alloc_eff || !ctx->act_eff || !ctx->alloc_init_eff || !ctx->act_init_eff)
		return sx_dec_oom(err);
	for (uint32_t i = 0; rc == 0 && i < pod->ncontainers; i++)
		rc = status_lists(ctx, false, sx_str_get(pod->containers[i].name), &ctx->eff[i],
				  &ctx->alloc_eff[i], &ctx->act_eff[i], err);
	for (uint32_t i = 0; rc == 0 && i < pod->ninit; i++)
		rc = status_lists(ctx, true, sx_str_get(pod->init_containers[i].name),
				  &ctx->init_eff[i], &ctx->alloc_init_eff[i], &ctx->act_init_eff[i],
				  err);
	return rc;
}

/* Status resources of regular containers and sidecars (after the spec, so
 * that error paths name status.*). */
static int apply_statuses(struct pod_ctx *ctx, struct sx_error *err)
{
	const struct sx_pod *pod = ctx->pod;
	int rc = 0;

	/* 1.37's AggregateContainerRequests: with the gate on and both
	 * pod-level status maps set, they are the allocated and actuated
	 * aggregates, and the spec aggregate is taken without container
	 * statuses. */
	ctx->pod_status_aggregate = atomic_load(&in_place_pod_level) &&
				    atomic_load(&pod_resources_release) >= 37 &&
				    ctx->has_status_alloc && ctx->has_status_req;
	if (ctx->pod_status_aggregate && (rc = keep_spec_lists(ctx, err)) < 0)
		return rc;
	/* Otherwise, from 1.37, max of sums; a pod without statuses or a
	 * resize keeps the walk below (all three sums are the spec's). */
	ctx->max_of_sums = !ctx->pod_status_aggregate &&
			   atomic_load(&pod_resources_release) >= 37 &&
			   (ctx->statuses || ctx->init_statuses || ctx->resize_infeasible);
	if (ctx->max_of_sums)
		return max_of_sums_lists(ctx, err);

	for (uint32_t i = 0; rc == 0 && i < pod->ncontainers; i++)
		rc = apply_status_resources(ctx, false, sx_str_get(pod->containers[i].name),
					    &ctx->eff[i], err);
	for (uint32_t i = 0; rc == 0 && i < pod->ninit; i++)
		if (pod->init_containers[i].sidecar)
			rc = apply_status_resources(ctx, true,
						    sx_str_get(pod->init_containers[i].name),
						    &ctx->init_eff[i], err);
	return rc;
}

static int decode_resources(const cJSON *j, struct sx_container *c, struct sx_rlist *req,
			    struct sx_error *err)
{
	struct sx_rlist lim = {0};
	const cJSON *res;
	int rc = sx_dec_object(j, "resources", &res, err);

	if (rc < 0)
		return rc;
	rc = sx_dec_rlist(res, "requests", true, req, NULL, err);
	if (rc == 0)
		rc = sx_dec_rlist(res, "limits", true, &lim, NULL, err);
	c->has_cpu_request = sx_rlist_find(req, SX_S_CPU) != NULL;
	c->has_memory_request = sx_rlist_find(req, SX_S_MEMORY) != NULL;
	if (rc == 0) {
		rc = sx_rlist_to_resources(req, &c->requests, err);
		if (rc < 0)
			sx_error_prefix(err, "requests");
	}
	if (rc == 0) {
		rc = sx_rlist_to_resources(&lim, &c->limits, err);
		if (rc < 0)
			sx_error_prefix(err, "limits");
	}
	sx_rlist_clear(&lim);
	if (rc < 0)
		sx_error_prefix(err, "resources");
	return rc;
}

/* One of a pod's two container lists, being decoded. */
struct container_list {
	struct pod_ctx *ctx;
	bool init; /* initContainers */
	struct sx_container *items;
	struct sx_rlist *eff; /* parallel to items */
};

/* One container into elem, one of l->items (arg: struct container_list). */
static int decode_container(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	const struct container_list *l = arg;
	struct sx_container *c = elem;
	struct sx_rlist *eff = &l->eff[c - l->items];
	struct pod_ctx *ctx = l->ctx;
	bool init = l->init;
	const char *image, *restart;
	int rc = sx_dec_intern(j, "name", &c->name, err);

	if (rc == 0)
		rc = sx_dec_string(j, "image", &image, err);
	if (rc == 0 && image && *image) {
		c->image = sx_normalized_image(image, strlen(image));
		if (c->image == SX_STR_INVALID) {
			c->image = SX_STR_EMPTY;
			rc = sx_error_set(err, SX_ETOOBIG, "string table full");
			sx_error_prefix(err, "image");
		}
	}
	if (rc == 0 && init)
		rc = sx_dec_string(j, "restartPolicy", &restart, err);
	if (rc < 0)
		return rc;
	c->sidecar = init && restart && strcmp(restart, "Always") == 0;
	rc = container_needs(j, &ctx->pod->needs_features, err);
	if (rc == 0)
		rc = decode_resources(j, c, eff, err);
	if (rc == 0)
		rc = decode_ports(j, ctx, !init || c->sidecar, err);
	return rc;
}

/* What NodeDeclaredFeatures infers from one container (component-helpers
 * nodedeclaredfeatures/features: restartallcontainers and
 * volumebindmountoptions InferForScheduling): SX_POD_NEEDS_* bits. */
static int container_needs(const cJSON *j, uint8_t *needs, struct sx_error *err)
{
	const cJSON *arr, *e;
	uint32_t n;
	int rc = sx_dec_array(j, "restartPolicyRules", &arr, &n, err);

	for (uint32_t i = 0; rc == 0 && arr && i < n; i++) {
		const char *action = NULL;

		e = cJSON_GetArrayItem(arr, (int)i);
		if (!cJSON_IsObject(e))
			continue;
		rc = sx_dec_string(e, "action", &action, err);
		if (rc == 0 && action && strcmp(action, "RestartAllContainers") == 0)
			*needs |= SX_POD_NEEDS_RESTART_ALL_CONTAINERS;
	}
	if (rc == 0)
		rc = sx_dec_array(j, "volumeMounts", &arr, &n, err);
	for (uint32_t i = 0; rc == 0 && arr && i < n; i++) {
		const cJSON *opts;
		uint32_t nopts;

		e = cJSON_GetArrayItem(arr, (int)i);
		if (!cJSON_IsObject(e))
			continue;
		rc = sx_dec_array(e, "bindMountOptions", &opts, &nopts, err);
		if (rc == 0 && opts && nopts > 0)
			*needs |= SX_POD_NEEDS_VOLUME_BIND_MOUNT_OPTIONS;
	}
	return rc;
}

static int decode_containers(const cJSON *spec, const char *key, struct pod_ctx *ctx,
			     struct sx_error *err)
{
	bool init = strcmp(key, "initContainers") == 0;
	struct sx_container **cs = init ? &ctx->pod->init_containers : &ctx->pod->containers;
	uint32_t *n = init ? &ctx->pod->ninit : &ctx->pod->ncontainers, cnt;
	struct sx_rlist **eff = init ? &ctx->init_eff : &ctx->eff;
	const cJSON *arr;
	int rc = sx_dec_array(spec, key, &arr, &cnt, err);

	if (rc < 0 || !arr)
		return rc;
	*cs = sx_calloc(cnt, sizeof(**cs));
	*eff = sx_calloc(cnt, sizeof(**eff));
	if (!*cs || !*eff)
		return sx_dec_oom(err);
	*n = cnt;
	struct container_list l = {ctx, init, *cs, *eff};
	return sx_dec_each_object(arr, key, *cs, sizeof(**cs), decode_container, &l, err);
}

/* ---------- effective requests ---------- */

/* reqs with the non-zero defaults for keys in `defaults` that it lacks. */
static int with_defaults(const struct sx_rlist *reqs, const struct sx_rlist *defaults,
			 struct sx_rlist *out)
{
	if (sx_rlist_copy(out, reqs) < 0)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < defaults->n; i++)
		if (!sx_rlist_find(out, defaults->items[i].name) &&
		    sx_rlist_apply(out, defaults->items[i].name, defaults->items[i].q, SX_RL_SET) <
			    0)
			return SX_ENOMEM;
	return 0;
}

/* PodRequests' three steps into *total: containers summed, init containers walked in
 * order with the running sidecar sum, then the per-resource max. `defaults`
 * (may be empty) are applied to every container lacking those keys. */
static int aggregate_lists(const struct sx_pod *pod, const struct sx_rlist *eff,
			   const struct sx_rlist *init_eff, const struct sx_rlist *defaults,
			   struct sx_rlist *total)
{
	struct sx_rlist sidecars = {0}, init_max = {0}, r = {0}, usage = {0};
	int rc = 0;

	sx_rlist_clear(total);
	for (uint32_t i = 0; rc == 0 && i < pod->ncontainers; i++) {
		rc = with_defaults(&eff[i], defaults, &r);
		if (rc == 0)
			rc = sx_rlist_merge(total, &r, SX_RL_ADD);
	}
	for (uint32_t i = 0; rc == 0 && i < pod->ninit; i++) {
		rc = with_defaults(&init_eff[i], defaults, &r);
		if (rc == 0 && pod->init_containers[i].sidecar) {
			rc = sx_rlist_merge(total, &r, SX_RL_ADD);
			if (rc == 0)
				rc = sx_rlist_merge(&sidecars, &r, SX_RL_ADD);
			if (rc == 0)
				rc = sx_rlist_merge(&init_max, &sidecars, SX_RL_MAX);
		} else if (rc == 0) {
			rc = sx_rlist_copy(&usage, &r);
			if (rc == 0)
				rc = sx_rlist_merge(&usage, &sidecars, SX_RL_ADD);
			if (rc == 0)
				rc = sx_rlist_merge(&init_max, &usage, SX_RL_MAX);
		}
	}
	if (rc == 0)
		rc = sx_rlist_merge(total, &init_max, SX_RL_MAX);
	sx_rlist_clear(&sidecars);
	sx_rlist_clear(&init_max);
	sx_rlist_clear(&r);
	sx_rlist_clear(&usage);
	return rc;
}

/* The container aggregate: over the lists with container statuses
 * applied, or, when the pod-level status gives it (1.37's
 * AggregateContainerRequests), max(spec aggregate, status.resources.requests,
 * status.allocatedResources), without the spec on an Infeasible resize. */
static int aggregate(const struct pod_ctx *ctx, const struct sx_rlist *defaults,
		     struct sx_rlist *total)
{
	int rc;

	struct sx_rlist sum = {0};

	if (ctx->max_of_sums) {
		/* helpers.go AggregateContainerRequests: max(spec, actuated,
		 * allocated) of the sums, the spec left out on an Infeasible
		 * resize */
		rc = aggregate_lists(ctx->pod, ctx->spec_eff, ctx->spec_init_eff, defaults, total);
		if (rc == 0 && ctx->resize_infeasible)
			sx_rlist_clear(total);
		if (rc == 0)
			rc = aggregate_lists(ctx->pod, ctx->act_eff, ctx->act_init_eff, defaults,
					     &sum);
		if (rc == 0)
			rc = sx_rlist_merge(total, &sum, SX_RL_MAX);
		if (rc == 0)
			rc = aggregate_lists(ctx->pod, ctx->alloc_eff, ctx->alloc_init_eff,
					     defaults, &sum);
		if (rc == 0)
			rc = sx_rlist_merge(total, &sum, SX_RL_MAX);
		sx_rlist_clear(&sum);
		return rc;
	}
	if (!ctx->pod_status_aggregate)
		return aggregate_lists(ctx->pod, ctx->eff, ctx->init_eff, defaults, total);
	rc = aggregate_lists(ctx->pod, ctx->spec_eff, ctx->spec_init_eff, defaults, total);
	if (rc == 0 && ctx->resize_infeasible)
		sx_rlist_clear(total);
	if (rc == 0)
		rc = sx_rlist_merge(total, &ctx->status_req, SX_RL_MAX);
	if (rc == 0)
		rc = sx_rlist_merge(total, &ctx->status_alloc, SX_RL_MAX);
	return rc;
}

/* cpu, memory and hugepages-* are the pod-level resources. */
static bool pod_level_resource(sx_str name)
{
	return name == SX_S_CPU || name == SX_S_MEMORY ||
	       strncmp(sx_str_get(name), "hugepages-", 10) == 0;
}

/* Steps 4-5 on top of aggregate(). */
static int pod_requests(const struct pod_ctx *ctx, const struct sx_rlist *pod_level,
			const struct sx_rlist *overhead, const struct sx_rlist *defaults,
			struct sx_rlist *total)
{
	int rc = aggregate(ctx, defaults, total);

	for (uint32_t i = 0; rc == 0 && i < pod_level->n; i++)
		if (pod_level_resource(pod_level->items[i].name))
			rc = sx_rlist_apply(total, pod_level->items[i].name, pod_level->items[i].q,
					    SX_RL_SET);
	if (rc == 0)
		rc = sx_rlist_merge(total, overhead, SX_RL_ADD);
	return rc;
}

static bool pod_level_set(const struct sx_rlist *pod_level)
{
	for (uint32_t i = 0; i < pod_level->n; i++)
		if (pod_level_resource(pod_level->items[i].name))
			return true;
	return false;
}

/* NodeResourcesFit's score request (noderesources/resource_allocation.go
 * calculatePodResourceRequest): upstream builds that
 * scorer without the PodLevelResources option, so it sums the containers'
 * requests with non-zero cpu/memory defaults (plus overhead) even when
 * spec.resources sets pod-level requests. Only cpu and memory are kept:
 * the other resources are the same unless hugepages are requested at pod
 * level and scored. */
static int fit_score_requests(struct pod_ctx *ctx, bool pl, struct sx_error *err)
{
	struct sx_rlist defaults = {0}, r = {0}, none = {0};
	struct sx_pod *pod = ctx->pod;
	struct sx_rentry *cpu, *mem;
	int64_t v = 0;
	int rc;

	pod->fit_score_milli_cpu = pod->nonzero_milli_cpu;
	pod->fit_score_memory = pod->nonzero_memory;
	if (!pl)
		return 0;
	rc = sx_rlist_apply(&defaults, SX_S_CPU, NONZERO_CPU_NANO, SX_RL_SET);
	if (rc == 0)
		rc = sx_rlist_apply(&defaults, SX_S_MEMORY, NONZERO_MEM_NANO, SX_RL_SET);
	if (rc == 0)
		rc = pod_requests(ctx, &none, &ctx->overhead, &defaults, &r);
	if (rc < 0) {
		rc = sx_dec_oom(err);
		goto out;
	}
	cpu = sx_rlist_find(&r, SX_S_CPU);
	mem = sx_rlist_find(&r, SX_S_MEMORY);
	if (cpu && sx_quantity_milli(cpu->q, &v) < 0)
		rc = sx_error_set(err, SX_ETOOBIG, "total cpu request out of range");
	pod->fit_score_milli_cpu = cpu ? v : 0;
	if (rc == 0 && mem && sx_quantity_value(mem->q, &v) < 0)
		rc = sx_error_set(err, SX_ETOOBIG, "total memory request out of range");
	pod->fit_score_memory = mem ? v : 0;
out:
	sx_rlist_clear(&defaults);
	sx_rlist_clear(&r);
	return rc;
}

/* The effective request and its non-zero variant (PodRequests, and
 * pkg/scheduler/util/pod_resources.go GetNonzeroRequests):
 * defaults apply to every container, or, with pod-level requests, only for
 * cpu/memory missing from the whole pod total. */
static int derive_requests(struct pod_ctx *ctx, struct sx_error *err)
{
	const struct sx_rlist *pod_level = &ctx->pod_level, *overhead = &ctx->overhead;
	struct sx_rlist total = {0}, defaults = {0}, nonzero = {0}, none = {0}, resized = {0};
	struct sx_pod *pod = ctx->pod;
	bool pl = pod_level_set(pod_level);
	const struct sx_rlist *nz = &total;
	int64_t v = 0;
	int rc = 0;

	/* PodRequests with InPlacePodLevelResourcesVerticalScaling: while
	 * status.resources is reported, the pod-level requests are
	 * max(spec, status.resources.requests, status.allocatedResources), the
	 * spec dropped on an Infeasible resize (effectivePodLevelResources). */
	if (pl && atomic_load(&in_place_pod_level) && ctx->has_status_res) {
		if (!ctx->resize_infeasible)
			rc = sx_rlist_copy(&resized, pod_level);
		if (rc == 0)
			rc = sx_rlist_merge(&resized, &ctx->status_req, SX_RL_MAX);
		if (rc == 0)
			rc = sx_rlist_merge(&resized, &ctx->status_alloc, SX_RL_MAX);
		pod_level = &resized;
	}
	if (rc == 0)
		rc = pod_requests(ctx, pl ? pod_level : &none, overhead, &none, &total);

	if (rc == 0 && (!pl || !sx_rlist_find(&total, SX_S_CPU)))
		rc = sx_rlist_apply(&defaults, SX_S_CPU, NONZERO_CPU_NANO, SX_RL_SET);
	if (rc == 0 && (!pl || !sx_rlist_find(&total, SX_S_MEMORY)))
		rc = sx_rlist_apply(&defaults, SX_S_MEMORY, NONZERO_MEM_NANO, SX_RL_SET);
	if (rc == 0 && defaults.n) {
		rc = pod_requests(ctx, pl ? pod_level : &none, overhead, &defaults, &nonzero);
		nz = &nonzero;
	}
	if (rc < 0) {
		rc = sx_dec_oom(err);
		goto out;
	}
	rc = sx_rlist_to_resources(&total, &pod->request, err);
	if (rc == 0) {
		struct sx_rentry *cpu = sx_rlist_find(nz, SX_S_CPU);
		struct sx_rentry *mem = sx_rlist_find(nz, SX_S_MEMORY);

		if (cpu && sx_quantity_milli(cpu->q, &v) < 0)
			rc = sx_error_set(err, SX_ETOOBIG, "total cpu request out of range");
		pod->nonzero_milli_cpu = cpu ? v : 0;
		if (rc == 0 && mem && sx_quantity_value(mem->q, &v) < 0)
			rc = sx_error_set(err, SX_ETOOBIG, "total memory request out of range");
		pod->nonzero_memory = mem ? v : 0;
	} else {
		/* Path names the resource; say it is the pod total. */
		char res[sizeof(err->path)];

		memcpy(res, err->path, sizeof(res));
		sx_error_set(err, SX_ETOOBIG, "total %.64s request out of range", res);
	}
	if (rc == 0)
		rc = fit_score_requests(ctx, pl, err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
out:
	sx_rlist_clear(&total);
	sx_rlist_clear(&defaults);
	sx_rlist_clear(&nonzero);
	sx_rlist_clear(&resized);
	return rc;
}

/* ---------- volumes and gates ---------- */

/* One volume into elem (arg: the pod); a PVC or generic ephemeral volume
 * also appends its claim to pod->pvcs. */
static int decode_volume(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pod *pod = arg;
	struct sx_volume *vol = elem;
	int rc = sx_decode_volume(j, vol, pod, err);

	if (rc == 0 && (vol->source == SX_VSRC_PVC || vol->source == SX_VSRC_EPHEMERAL))
		pod->pvcs[pod->npvcs++] = vol->claim;
	return rc;
}

static int decode_volumes(const cJSON *spec, struct sx_pod *pod, struct sx_error *err)
{
	const cJSON *arr;
	uint32_t n;
	int rc = sx_dec_array(spec, "volumes", &arr, &n, err);

	if (rc < 0 || !arr)
		return rc;
	pod->pvcs = sx_calloc(n, sizeof(*pod->pvcs));
	if (!pod->pvcs)
		return sx_dec_oom(err);
	return sx_dec_objects(spec, "volumes", &pod->volumes, &pod->nvolumes, decode_volume, pod,
			      err);
}

static int decode_gate(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_intern(j, "name", elem, err);
}

/* ---------- spec and status ---------- */

/* spec.schedulingGroup (core/v1 PodSchedulingGroup; elem: the sx_str). */
static int decode_scheduling_group(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	(void)arg;
	return sx_dec_intern(j, "podGroupName", elem, err);
}

static int decode_scalars(const cJSON *spec, struct sx_pod *pod, struct sx_error *err)
{
	const char *policy;
	int rc = sx_dec_intern(spec, "nodeName", &pod->node_name, err);

	if (rc == 0)
		rc = sx_dec_intern(spec, "schedulerName", &pod->scheduler_name, err);
	if (rc == 0 && pod->scheduler_name == SX_STR_EMPTY)
		pod->scheduler_name = SX_S_DEFAULT_SCHEDULER;
	if (rc == 0)
		rc = sx_dec_int32(spec, "priority", &pod->priority, NULL, err);
	if (rc == 0)
		rc = sx_dec_string(spec, "preemptionPolicy", &policy, err);
	if (rc == 0)
		pod->preempt_never = policy && strcmp(policy, "Never") == 0;
	if (rc == 0)
		rc = sx_dec_sub(spec, "schedulingGroup", decode_scheduling_group,
				&pod->scheduling_group, NULL, err);
	if (rc == 0)
		rc = sx_dec_bool(spec, "hostNetwork", &pod->host_network, err);
	if (rc == 0)
		rc = decode_spec_needs(spec, pod, err);
	if (rc == 0)
		rc = sx_dec_labels(spec, "nodeSelector", &pod->node_selector, NULL, err);
	return rc;
}

/* One status.conditions entry (arg: the pod_ctx): notes an Infeasible
 * resize. */
static int decode_condition(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct pod_ctx *ctx = arg;
	const char *type, *reason;
	int rc = sx_dec_string(j, "type", &type, err);

	if (rc == 0)
		rc = sx_dec_string(j, "reason", &reason, err);
	if (rc == 0 && type && reason && strcmp(type, "PodResizePending") == 0 &&
	    strcmp(reason, "Infeasible") == 0)
		ctx->resize_infeasible = true;
	if (rc == 0 && type && strcmp(type, "DisruptionTarget") == 0 && !ctx->disruption_seen) {
		const char *status;

		/* the first DisruptionTarget decides (podTerminatingByPreemption) */
		ctx->disruption_seen = true;
		rc = sx_dec_string(j, "status", &status, err);
		ctx->pod->preemption_target = rc == 0 && status && strcmp(status, "True") == 0 &&
					      reason &&
					      strcmp(reason, "PreemptionByScheduler") == 0;
	}
	return rc;
}

/* Pod-level resize state: status.resources.requests and
 * status.allocatedResources (core/v1 PodStatus, read by
 * component-helpers/resource PodRequests when
 * InPlacePodLevelResourcesVerticalScaling is on). */
static int decode_pod_status_resources(const cJSON *status, struct pod_ctx *ctx,
				       struct sx_error *err)
{
	const cJSON *res;
	int rc = sx_dec_object(status, "resources", &res, err);

	ctx->has_status_res = rc == 0 && res;
	if (rc == 0 && res) {
		ctx->has_status_req = sx_dec_get(res, "requests") != NULL;
		rc = sx_dec_rlist(res, "requests", true, &ctx->status_req, NULL, err);
		if (rc < 0)
			sx_error_prefix(err, "resources");
	}
	if (rc == 0) {
		ctx->has_status_alloc = sx_dec_get(status, "allocatedResources") != NULL;
		rc = sx_dec_rlist(status, "allocatedResources", true, &ctx->status_alloc, NULL,
				  err);
	}
	return rc;
}

/* Reads status fields that the spec decode depends on (resize state). */
static int decode_status_pre(const cJSON *status, struct pod_ctx *ctx, struct sx_error *err)
{
	const cJSON *conds;
	uint32_t n;
	int rc = sx_dec_array(status, "containerStatuses", &ctx->statuses, &n, err);

	if (rc == 0)
		rc = sx_dec_array(status, "initContainerStatuses", &ctx->init_statuses, &n, err);
	if (rc == 0)
		rc = sx_dec_array(status, "conditions", &conds, &n, err);
	if (rc == 0)
		rc = sx_dec_each_object(conds, "conditions", NULL, 0, decode_condition, ctx, err);
	if (rc == 0)
		rc = decode_pod_status_resources(status, ctx, err);
	if (rc < 0)
		sx_error_prefix(err, "status");
	return rc;
}

static int decode_status(const cJSON *status, struct sx_pod *pod, struct sx_error *err)
{
	static const char *const phases[] = {"Unknown", "Pending", "Running", "Succeeded",
					     "Failed"};
	int rc = decode_enum(status, "phase", phases, 5, SX_PHASE_UNKNOWN, &pod->phase, err);

	if (rc == 0)
		rc = sx_dec_intern(status, "nominatedNodeName", &pod->nominated_node, err);
	if (rc == 0)
		rc = sx_dec_time(status, "startTime", &pod->start_time, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "status");
	return rc;
}

/* The pod-level inferences of NodeDeclaredFeatures
 * (usernamespaceshostnetwork: hostNetwork with hostUsers false) and the
 * ephemeral containers' volume mounts (volumebindmountoptions), which
 * nothing else decodes. */
static int decode_spec_needs(const cJSON *spec, struct sx_pod *pod, struct sx_error *err)
{
	const cJSON *host_users = sx_dec_get(spec, "hostUsers"), *arr;
	uint32_t n;
	int rc;

	if (host_users && !cJSON_IsNull(host_users) && !cJSON_IsBool(host_users))
		return sx_dec_type_error(err, "hostUsers", "boolean", host_users);
	if (pod->host_network && cJSON_IsFalse(host_users))
		pod->needs_features |= SX_POD_NEEDS_USERNS_HOST_NETWORK;
	rc = sx_dec_array(spec, "ephemeralContainers", &arr, &n, err);
	for (uint32_t i = 0; rc == 0 && arr && i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(arr, (int)i);
		uint8_t needs = 0;

		if (!cJSON_IsObject(e))
			continue;
		rc = container_needs(e, &needs, err);
		pod->needs_features |= needs & SX_POD_NEEDS_VOLUME_BIND_MOUNT_OPTIONS;
		if (rc < 0)
			sx_error_prefixf(err, "ephemeralContainers[%u]", i);
	}
	return rc;
}

static int decode_spec(const cJSON *spec, struct pod_ctx *ctx, struct sx_error *err)
{
	struct sx_rlist *pod_level = &ctx->pod_level, *overhead = &ctx->overhead;
	struct sx_pod *pod = ctx->pod;
	const cJSON *res;
	int rc = decode_scalars(spec, pod, err);

	if (rc == 0)
		rc = decode_affinity(spec, pod, err);
	if (rc == 0)
		rc = sx_dec_objects(spec, "tolerations", &pod->tolerations, &pod->ntolerations,
				    decode_toleration, NULL, err);
	if (rc == 0)
		rc = sx_dec_objects(spec, "topologySpreadConstraints", &pod->spread, &pod->nspread,
				    decode_spread, NULL, err);
	if (rc == 0)
		rc = decode_containers(spec, "containers", ctx, err);
	if (rc == 0)
		rc = decode_containers(spec, "initContainers", ctx, err);
	if (rc == 0)
		rc = sx_dec_rlist(spec, "overhead", true, overhead, &pod->has_overhead, err);
	if (rc == 0) {
		rc = sx_rlist_to_resources(overhead, &pod->overhead, err);
		if (rc < 0)
			sx_error_prefix(err, "overhead");
	}
	if (rc == 0)
		rc = sx_dec_object(spec, "resources", &res, err);
	if (rc == 0 && res) {
		rc = sx_dec_rlist(res, "requests", true, pod_level, NULL, err);
		if (rc < 0)
			sx_error_prefix(err, "resources");
	}
	if (rc == 0)
		rc = decode_volumes(spec, pod, err);
	if (rc == 0)
		rc = sx_dec_objects(spec, "schedulingGates", &pod->gates, &pod->ngates, decode_gate,
				    NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

static void ctx_clear(struct pod_ctx *ctx)
{
	for (uint32_t i = 0; ctx->eff && i < ctx->pod->ncontainers; i++)
		sx_rlist_clear(&ctx->eff[i]);
	for (uint32_t i = 0; ctx->init_eff && i < ctx->pod->ninit; i++)
		sx_rlist_clear(&ctx->init_eff[i]);
	for (uint32_t i = 0; ctx->spec_eff && i < ctx->pod->ncontainers; i++)
		sx_rlist_clear(&ctx->spec_eff[i]);
	for (uint32_t i = 0; ctx->spec_init_eff && i < ctx->pod->ninit; i++)
		sx_rlist_clear(&ctx->spec_init_eff[i]);
	free(ctx->eff);
	free(ctx->init_eff);
	for (uint32_t i = 0; ctx->alloc_eff && i < ctx->pod->ncontainers; i++)
		sx_rlist_clear(&ctx->alloc_eff[i]);
	for (uint32_t i = 0; ctx->act_eff && i < ctx->pod->ncontainers; i++)
		sx_rlist_clear(&ctx->act_eff[i]);
	for (uint32_t i = 0; ctx->alloc_init_eff && i < ctx->pod->ninit; i++)
		sx_rlist_clear(&ctx->alloc_init_eff[i]);
	for (uint32_t i = 0; ctx->act_init_eff && i < ctx->pod->ninit; i++)
		sx_rlist_clear(&ctx->act_init_eff[i]);
	free(ctx->spec_eff);
	free(ctx->spec_init_eff);
	free(ctx->alloc_eff);
	free(ctx->act_eff);
	free(ctx->alloc_init_eff);
	free(ctx->act_init_eff);
	sx_rlist_clear(&ctx->pod_level);
	sx_rlist_clear(&ctx->overhead);
	sx_rlist_clear(&ctx->status_req);
	sx_rlist_clear(&ctx->status_alloc);
}

struct sx_pod *sx_decode_pod(const cJSON *json, struct sx_error *err)
{
	struct pod_ctx ctx = {0};
	const cJSON *spec, *status;
	struct sx_error tmp;
	struct sx_pod *pod;
	int rc;

	if (!err)
		err = &tmp;
	pod = ctx.pod = sx_dec_new(json, sizeof(*pod), err);
	if (!pod)
		return NULL;
	atomic_init(&pod->refcount, 1);
	pod->scheduler_name = SX_S_DEFAULT_SCHEDULER;
	rc = decode_pod_metadata(json, pod, err);
	if (rc == 0)
		rc = sx_dec_object(json, "spec", &spec, err);
	if (rc == 0)
		rc = sx_dec_object(json, "status", &status, err);
	if (rc == 0)
		rc = decode_status_pre(status, &ctx, err);
	if (rc == 0)
		rc = decode_spec(spec, &ctx, err);
	if (rc == 0)
		rc = apply_statuses(&ctx, err);
	if (rc == 0)
		rc = derive_requests(&ctx, err);
	if (rc == 0)
		rc = decode_status(status, pod, err);
	if (rc == 0)
		rc = sx_dec_pod_resource_claims(json, pod, err);
	ctx_clear(&ctx);
	if (rc < 0) {
		sx_pod_free(pod);
		return NULL;
	}
	return pod;
}
