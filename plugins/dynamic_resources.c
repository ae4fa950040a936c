/* DynamicResources (pkg/scheduler/framework/plugins/dynamicresources,
 * kube-scheduler 1.34, structured parameters, default gates: see
 * include/schedext/dra_alloc.h): every claim of the pod must exist
 * (PreEnqueue), allocated claims must be usable on the node and the
 * others allocatable there (PreFilter/Filter); Reserve holds the
 * allocation in flight, PreBind writes status.allocation and
 * status.reservedFor, PostFilter deallocates a claim reserved for no pod.
 * Device selectors are CEL programs from a compile cache. */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/cel.h"
#include "schedext/dra.h"
#include "schedext/dra_alloc.h"
#include "schedext/handle.h"
#include "schedext/leader.h"
#include "schedext/plugin.h"
#include "schedext/plugin_args.h"
#include "schedext/selector.h"
#include "slots.h"

#define NAME		 "DynamicResources"
#define RESERVED_FOR_MAX 256 /* ResourceClaimReservedForMaxSize */
#define BIND_RETRIES	 5   /* retry.DefaultRetry steps */

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_unsatisfied =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, "cannot allocate all claims");
static struct sx_status reject_timed_out = SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME,
							    "timed out trying to allocate devices");
static struct sx_status reject_not_available = SX_STATUS_STATIC(
	SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, "resourceclaim not available on the node");

struct dra_self {
	uint64_t filter_timeout_ns; /* 0 = none */
	/* bindingTimeout: how long PreBind may wait for device binding
	 * conditions; 0 = not set (its gates are off). The configuration
	 * defaults it to 10m when they are on (src/framework/config_dra.c). */
	uint64_t binding_timeout_ns;
	struct sx_cel_cache *cel;
	struct sx_handle *handle;	  /* the profile's (may be NULL: no API client) */
	struct sx_dra_claims *claims;	  /* the handle's tracker, or own_claims */
	struct sx_dra_claims *own_claims; /* without a shared tracker (tests); owned */
	/* The profile's gates (SX_DRA_GATES_KEY; 1.37's defaults when absent). */
	struct sx_dra_features features;
	bool taint_rules; /* DRADeviceTaintRules */
};

/* The profile's API client (upstream Handle.ClientSet); NULL in explain,
 * the extender and tests: claims are then kept in memory only. */
static struct sx_kube *api(const struct dra_self *self)
{
	struct sx_handle_env env;

	sx_handle_env(self->handle, &env);
	return env.kube;
}

/* One pod claim. */
struct pclaim {
	const struct sx_dra_object *claim; /* reference */
	bool to_allocate;
	int alloc_ix; /* index among the claims to allocate, or -1 */
};

struct dra_state {
	atomic_int clones; /* references beyond the cycle's own (state_clone) */
	uint32_t n;
	struct pclaim *c;
	uint32_t nalloc;
	struct sx_dra_claim_in *in;
	struct sx_dra_index *ix;
	struct sx_dra_allocated *allocated, *inflight;
	struct sx_dra_alloc_env env;
	struct sx_dra_prep *prep;	   /* the claims validated once for every node */
	_Atomic uint64_t unavailable;	   /* bit i: claim i unusable on some node (PostFilter) */
	struct sx_dra_claim_out *reserved; /* [nalloc], Reserve's allocation */
	sx_str reserved_node;
};

/* ---------- args ---------- */

/* DynamicResourcesArgs as read (plugin_args.h). */
struct dra_args {
	char *filter_timeout;  /* NULL: absent, or not a string */
	bool given;	       /* filterTimeout present and not null */
	char *binding_timeout; /* NULL: absent, or not a string */
	bool binding_given;
};

static const struct sx_arg dra_fields[] = {
	{.name = "filterTimeout",
	 .type = SX_ARG_STRING,
	 .max = 64,
	 .flags = SX_ARG_LENIENT,
	 .offset = offsetof(struct dra_args, filter_timeout)},
	{.name = "filterTimeout", .type = SX_ARG_GIVEN, .offset = offsetof(struct dra_args, given)},
	{.name = "bindingTimeout",
	 .type = SX_ARG_STRING,
	 .max = 64,
	 .flags = SX_ARG_LENIENT,
	 .offset = offsetof(struct dra_args, binding_timeout)},
	{.name = "bindingTimeout",
	 .type = SX_ARG_GIVEN,
	 .offset = offsetof(struct dra_args, binding_given)},
};

/* bindingTimeout in seconds (0: not given); ValidateDynamicResourcesArgs
 * wants at least one second. -1 with err on a bad value. */
static double binding_timeout_s(const struct dra_args *a, struct sx_error *err)
{
	double secs;

	if (!a->binding_given)
		return 0;
	if (!a->binding_timeout || sx_parse_duration(a->binding_timeout, &secs) < 0 ||
	    secs > 9.2e9) {
		sx_error_set(err, SX_EINVAL, "bindingTimeout: invalid duration");
		return -1;
	}
	if (secs < 1) {
		sx_error_set(err, SX_EINVAL,
			     "bindingTimeout: Invalid value: \"%s\": must be at "
			     "least 1 second",
			     a->binding_timeout);
		return -1;
	}
	return secs;
}

/* filterTimeout (default 10s) in seconds, or -1 when it is not a Go
 * duration a time.Duration holds (about 292 years). */
static double filter_timeout_s(const struct dra_args *a)
{
	double secs = 10;

	if (!a->given)
		return secs;
	if (!a->filter_timeout || sx_parse_duration(a->filter_timeout, &secs) < 0 || secs < 0 ||
	    secs > 9.2e9)
		return -1;
	return secs;
}

/* gates[name], or def when the gate is not named. */
static bool gate(const cJSON *gates, const char *name, bool def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(gates, name);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

static void read_gates(struct dra_self *s, const cJSON *args)
{
	const cJSON *g = cJSON_IsObject(args)
				 ? cJSON_GetObjectItemCaseSensitive(args, SX_DRA_GATES_KEY)
				 : NULL;

	s->features.admin_access = gate(g, "DRAAdminAccess", true);
	s->features.prioritized_list = gate(g, "DRAPrioritizedList", true);
	s->features.device_taints = gate(g, "DRADeviceTaints", true);
	s->features.partitionable = gate(g, "DRAPartitionableDevices", true);
	s->taint_rules = s->features.device_taints && gate(g, "DRADeviceTaintRules", true);
}

static void *init_dynamic_resources(const struct cJSON *args, struct sx_handle *h,
				    struct sx_error *err)
{
	struct dra_self *s = calloc(1, sizeof(*s));
	struct sx_arg_errors e = {0};
	struct dra_args a = {0};
	double secs;

	if (!s) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (!sx_args_is_object(args, "DynamicResourcesArgs", err) ||
	    sx_args_read(args, dra_fields, SX_ARRAY_SIZE(dra_fields), &a, &e, err) < 0) {
		sx_args_free(dra_fields, SX_ARRAY_SIZE(dra_fields), &a);
		free(s);
		return NULL;
	}
	secs = filter_timeout_s(&a);
	if (secs < 0)
		sx_error_set(err, SX_EINVAL, "filterTimeout: invalid duration");
	else
		s->filter_timeout_ns = (uint64_t)(secs * 1e9);
	if (secs >= 0 && (secs = binding_timeout_s(&a, err)) >= 0)
		s->binding_timeout_ns = (uint64_t)(secs * 1e9);
	sx_args_free(dra_fields, SX_ARRAY_SIZE(dra_fields), &a);
	if (secs < 0) {
		free(s);
		return NULL;
	}
	s->handle = h;
	s->claims = h ? h->dra : NULL;
	if (!s->claims)
		s->claims = s->own_claims = sx_dra_claims_new();
	read_gates(s, args);
	s->cel = sx_cel_cache_new(10); /* upstream: cel.NewCache(10) */
	if (!s->cel || !s->claims) {
		sx_cel_cache_free(s->cel);
		sx_dra_claims_free(s->own_claims);
		free(s);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	return s;
}

static void destroy_dynamic_resources(void *self)
{
	struct dra_self *s = self;

	if (!s)
		return;
	sx_cel_cache_free(s->cel);
	sx_dra_claims_free(s->own_claims);
	free(s);
}

static void write_args_dynamic_resources(const void *self, struct sx_jw *w)
{
	const struct dra_self *s = self;
	char d[64];

	sx_format_duration((double)s->filter_timeout_ns / 1e9, d, sizeof(d));
	sx_jw_kstr(w, "filterTimeout", d);
	if (s->binding_timeout_ns) {
		sx_format_duration((double)s->binding_timeout_ns / 1e9, d, sizeof(d));
		sx_jw_kstr(w, "bindingTimeout", d);
	}
}

/* ---------- CEL ---------- */

static int match_cel(void *ctx, const char *expr, sx_str driver, sx_str pool,
		     const struct sx_dra_device *dev, char *err, size_t errlen)
{
	struct dra_self *s = ctx;
	struct sx_cel_attr attrs[64];
	struct sx_cel_capacity caps[64];
	struct sx_cel_device d = {sx_str_get(driver), attrs, 0, caps, 0};
	struct sx_cel_program *p = sx_cel_cache_get(s->cel, expr, strlen(expr), err, errlen);
	bool result = false;
	int rc;

	(void)pool;
	if (!p)
		return SX_DRA_COMPILE_ERROR;
	for (uint32_t i = 0; i < dev->nattrs && i < 64; i++) {
		const struct sx_dra_attr *a = &dev->attrs[i];

		attrs[d.n_attrs++] = (struct sx_cel_attr){a->name, (enum sx_cel_attr_type)a->type,
							  a->i, a->b, a->s};
	}
	for (uint32_t i = 0; i < dev->ncaps && i < 64; i++)
		caps[d.n_caps++] = (struct sx_cel_capacity){dev->caps[i].name, dev->caps[i].value};
	rc = sx_cel_eval_device(p, &d, &result, NULL, err, errlen);
	sx_cel_program_unref(p);
	if (rc < 0)
		return SX_DRA_RUNTIME_ERROR;
	return result ? SX_DRA_MATCH : SX_DRA_NO_MATCH;
}

/* ---------- claims of a pod ---------- */

/* resourceclaim.Name: the claim's name (NULL: none generated, skip) or an
 * error in err. */
static int claim_name(const struct sx_pod *pod, const struct sx_pod_claim *pc, const char **name,
		      bool *check_owner, char *err, size_t len)
{
	*check_owner = false;
	if (pc->claim_name) {
		*name = pc->claim_name;
		return 0;
	}
	if (pc->template_name) {
		if (!pc->has_status) {
			snprintf(err, len, "pod \"%s/%s\": ResourceClaim not created yet",
				 sx_str_get(pod->meta.ns), pod->meta.name);
			return -1;
		}
		*name = pc->status_claim;
		*check_owner = true;
		return 0;
	}
	snprintf(err, len,
		 "pod \"%s/%s\", spec.resourceClaim %s: none of the supported fields are set",
		 sx_str_get(pod->meta.ns), pod->meta.name, pc->name);
	return -1;
}

/* The checks of foreachPodResourceClaim on one found claim. */
static int check_claim(const struct sx_pod *pod, const struct sx_dra_object *c, bool check_owner,
		       char *err, size_t len)
{
	if (c->u.claim.deleting) {
		snprintf(err, len, "resourceclaim \"%s\" is being deleted", c->meta.name);
		return -1;
	}
	if (check_owner && (c->meta.ns != pod->meta.ns || !c->u.claim.owner_uid ||
			    c->u.claim.owner_kind != sx_intern("Pod") || !pod->meta.uid ||
			    strcmp(c->u.claim.owner_uid, pod->meta.uid) != 0)) {
		snprintf(err, len,
			 "ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)",
			 sx_str_get(c->meta.ns), c->meta.name, sx_str_get(pod->meta.ns),
			 pod->meta.name);
		return -1;
	}
	return 0;
}

static struct sx_status *unresolvable(const char *msg)
{
	return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s", msg);
}

static struct sx_status *pre_enqueue_dynamic_resources(void *self, const struct sx_pod *pod)
{
	struct dra_self *ds = self;
	char err[512];

	for (uint32_t i = 0; i < pod->nresource_claims; i++) {
		const struct sx_dra_object *c;
		const char *name;
		bool owner;
		int known;

		if (claim_name(pod, &pod->resource_claims[i], &name, &owner, err, sizeof(err)) < 0)
			return unresolvable(err);
		if (!name)
			continue;
		known = sx_dra_claim_known(ds->claims, pod->meta.ns, name, &c);
		if (known < 0)
			return NULL; /* not tracked here: PreFilter checks */
		if (!known)
			return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					     "resourceclaim.resource.k8s.io \"%s\" not found",
					     name);
		known = check_claim(pod, c, owner, err, sizeof(err));
		sx_dra_unref(c);
		if (known < 0)
			return unresolvable(err);
	}
	return NULL;
}

/* ---------- state ---------- */

static void state_free_dynamic_resources(void *state)
{
	struct dra_state *s = state;

	if (!s || atomic_fetch_sub(&s->clones, 1) > 0)
		return;
	for (uint32_t i = 0; s->c && i < s->n; i++)
		sx_dra_unref(s->c[i].claim);
	for (uint32_t i = 0; s->reserved && i < s->nalloc; i++)
		sx_dra_claim_out_clear(&s->reserved[i]);
	free(s->reserved);
	free(s->c);
	sx_dra_prep_free(s->prep);
	free(s->in);
	sx_dra_index_unref(s->ix);
	sx_dra_allocated_free(s->allocated);
	sx_dra_allocated_free(s->inflight);
	free(s);
}

/* Filter never writes the state but the unavailable bits; clones (the
 * nominated-pods pass, preemption) share it as upstream's Clone does. */
static void *state_clone_dynamic_resources(const void *state)
{
	struct dra_state *s = (struct dra_state *)state;

	if (s)
		atomic_fetch_add(&s->clones, 1);
	return s;
}

static const struct sx_dra_object *get_class(void *ctx, const char *name)
{
	return sx_snapshot_find_dra(ctx, SX_KIND_DEVICE_CLASS, SX_STR_EMPTY, sx_intern(name));
}

static bool reserved_for(const struct sx_dra_object *c, const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < c->u.claim.nreserved; i++)
		if (c->u.claim.reserved[i].uid && pod->meta.uid &&
		    strcmp(c->u.claim.reserved[i].uid, pod->meta.uid) == 0)
			return true;
	return false;
}

static char *kobj(const struct sx_dra_object *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", sx_str_get(c->meta.ns), c->meta.name);
	return buf;
}

/* Collects the pod's claims into s (PreFilter's first half). */
static struct sx_status *collect(struct dra_self *self, struct dra_state *s,
				 const struct sx_snapshot *snap, const struct sx_pod *pod)
{
	char err[512];

	s->c = calloc(pod->nresource_claims + 1, sizeof(*s->c));
	if (!s->c)
		return sx_status_oom();
	for (uint32_t i = 0; i < pod->nresource_claims; i++) {
		const struct sx_dra_object *c;
		const char *name;
		bool owner;

		if (claim_name(pod, &pod->resource_claims[i], &name, &owner, err, sizeof(err)) < 0)
			return unresolvable(err);
		if (!name)
			continue;
		c = sx_dra_claim_current(self->claims,
					 sx_snapshot_find_dra(snap, SX_KIND_RESOURCE_CLAIM,
							      pod->meta.ns, sx_intern(name)),
					 pod->meta.ns, name);
		if (!c)
			return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					     "resourceclaim.resource.k8s.io \"%s\" not found",
					     name);
		s->c[s->n++] = (struct pclaim){c, false, -1};
		if (check_claim(pod, c, owner, err, sizeof(err)) < 0)
			return unresolvable(err);
	}
	return NULL;
}

static struct sx_status *check_class(const struct sx_snapshot *snap, const char *cls,
				     const char *req)
{
	if (!cls || !*cls)
		return sx_status_new(SX_ERROR, "request %s: unsupported request type", req);
	if (!get_class((void *)snap, cls))
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "request %s: device class %s does not exist", req, cls);
	return NULL;
}

/* PreFilter's checks of a claim that needs allocating. */
static struct sx_status *check_requests(struct dra_self *self, const struct sx_snapshot *snap,
					const struct sx_dra_object *c)
{
	const struct sx_dra_claim_spec *spec = &c->u.claim.spec;
	struct sx_status *st = NULL;
	char buf[512], k[320];

	if (sx_dra_pending_has(self->claims, c->meta.uid))
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "resource claim %s is in the process of being allocated",
				     kobj(c, k, sizeof(k)));
	for (uint32_t r = 0; !st && r < spec->nrequests; r++) {
		const struct sx_dra_request *req = &spec->requests[r];

		if (req->has_exactly) {
			st = check_class(snap, req->exactly.class_name, req->name);
			continue;
		}
		if (req->nsub == 0)
			return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					     "resource claim %s, request %s: unknown request type",
					     kobj(c, k, sizeof(k)), req->name);
		for (uint32_t i = 0; !st && i < req->nsub; i++) {
			snprintf(buf, sizeof(buf), "%s/%s", req->name,
				 req->first_available[i].name);
			st = check_class(snap, req->first_available[i].class_name, buf);
		}
	}
	return st;
}

static struct sx_status *prepare_allocator(struct dra_self *self, struct dra_state *s,
					   const struct sx_snapshot *snap)
{
	s->in = calloc(s->nalloc + 1, sizeof(*s->in));
	s->allocated = sx_dra_allocated_base(self->claims, snap);
	s->inflight = sx_dra_inflight(self->claims, snap);
	s->ix = sx_dra_index_get(self->claims, snap);
	if (!s->in || !s->allocated || !s->inflight || !s->ix)
		return sx_status_oom();
	for (uint32_t i = 0; i < s->n; i++)
		if (s->c[i].to_allocate)
			s->in[s->c[i].alloc_ix] = (struct sx_dra_claim_in){
				sx_str_get(s->c[i].claim->meta.ns), s->c[i].claim->meta.name,
				&s->c[i].claim->u.claim.spec};
	s->env = (struct sx_dra_alloc_env){
		.features = self->features,
		.index = s->ix,
		.allocated = s->allocated,
		.allocated2 = s->inflight,
		.get_class = get_class,
		.class_ctx = (void *)snap,
		.match = match_cel,
		.match_ctx = self,
	};
	if (self->taint_rules) {
		s->env.taint_rules =
			(const struct sx_device_taint_rule *const *)snap->device_taint_rules;
		s->env.ntaint_rules = snap->ndevice_taint_rules;
	}
	s->prep = sx_dra_prepare(&s->env, s->in, s->nalloc);
	return s->prep ? NULL : sx_status_oom();
}

static struct sx_status *pre_filter_dynamic_resources(void *self, struct sx_cycle_state *cs,
						      const struct sx_pod *pod,
						      struct sx_node_set **result)
{
	struct dra_state *s;
	struct sx_status *st;
	char k[320];

	if (pod->nresource_claims == 0)
		return sx_status_new(SX_SKIP, NULL);
	s = sx_cycle_state_slot(cs, SX_SLOT_dynamic_resources, sizeof(*s));
	if (!s)
		return sx_status_oom();
	st = collect(self, s, cs->snap, pod);
	if (st)
		return st;
	if (s->n == 0)
		return sx_status_new(SX_SKIP, NULL);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;

		if (c->u.claim.allocation) {
			if (c->u.claim.nreserved >= RESERVED_FOR_MAX && !reserved_for(c, pod))
				return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
						     "resourceclaim in use");
			continue;
		}
		s->c[i].to_allocate = true;
		s->c[i].alloc_ix = (int)s->nalloc++;
		st = check_requests(self, cs->snap, c);
		if (st)
			return st;
	}
	(void)k;
	if (s->nalloc)
		return prepare_allocator(self, s, cs->snap);
	return NULL;
}

/* ---------- Filter ---------- */

/* Allocates the pod's claims for node into out[nalloc] (cleared by the
 * caller on SX_DRA_ALLOCATED). A Filter status, or NULL on success. */
static struct sx_status *allocate(struct dra_self *self, const struct dra_state *s,
				  const struct sx_node *node, bool results,
				  struct sx_dra_claim_out *out)
{
	char err[SX_DRA_ERR_LEN];
	int rc;

	rc = sx_dra_allocate_prepared(s->prep, node, self->filter_timeout_ns, results, out, err,
				      sizeof(err));
	switch (rc) {
	case SX_DRA_ALLOCATED:
		return NULL;
	case SX_DRA_UNSATISFIED:
		return &reject_unsatisfied;
	case SX_DRA_TIMEOUT:
		return &reject_timed_out;
	case SX_DRA_NODE_FAILED:
		return unresolvable(err);
	default:
		return sx_status_new(SX_ERROR, "%s", err);
	}
}

static struct sx_status *filter_dynamic_resources(void *self, const struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  const struct sx_node_info *ni)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	uint64_t unavailable = 0;
	struct sx_status *st = NULL;

	if (!s || s->n == 0)
		return NULL;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_allocation *a = s->c[i].claim->u.claim.allocation;

		if (a && a->node_selector && !sx_node_selector_matches(a->node_selector, ni->node))
			unavailable |= 1ull << (i & 63);
	}
	if (s->nalloc) {
		struct sx_dra_claim_out one,
			*out = s->nalloc == 1 ? &one : calloc(s->nalloc, sizeof(*out));

		if (!out)
			return sx_status_oom();
		st = allocate(self, s, ni->node, false, out);
		if (out != &one)
			free(out);
		if (st)
			return st;
	}
	if (unavailable) {
		atomic_fetch_or(&((struct dra_state *)s)->unavailable, unavailable);
		return &reject_not_available;
	}
	return NULL;
}

/* ---------- PostFilter ---------- */

/* PostFilter's deallocation: clears the claim's status under its uid and
 * resourceVersion preconditions (upstream dynamicresources.go PostFilter,
 * the UpdateStatus of a claim with no reservation). */
static struct sx_status *deallocate_claim(struct sx_kube *kube, const struct sx_dra_object *c,
					  char *msg, size_t len)
{
	static const char *const cleared[] = {"reservedFor", "allocation", "devices"};
	struct sx_buf b;
	struct sx_jw w;
	int rc;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kobject(&w, "metadata");
	sx_jw_kstr(&w, "uid", c->meta.uid);
	sx_jw_kstr(&w, "resourceVersion", c->meta.resource_version);
	sx_jw_end_object(&w);
	sx_jw_kobject(&w, "status");
	for (size_t i = 0; i < sizeof(cleared) / sizeof(cleared[0]); i++) {
		sx_jw_key(&w, cleared[i]);
		sx_jw_null(&w);
	}
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	if (b.failed) {
		sx_buf_free(&b);
		return sx_status_new(SX_ERROR, "out of memory");
	}
	rc = sx_dra_patch_claim(kube, sx_str_get(c->meta.ns), c->meta.name, true, b.data, NULL, msg,
				len);
	sx_buf_free(&b);
	if (rc < 0)
		return sx_status_new(SX_ERROR, "%s", msg);
	return sx_status_new(SX_UNSCHEDULABLE, "deallocation of ResourceClaim completed");
}

static struct sx_status *post_filter_dynamic_resources(void *self, struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       const struct sx_filtered_status *filtered,
						       struct sx_post_filter_result *result)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	uint64_t bits = s ? atomic_load(&s->unavailable) : 0;
	struct sx_kube *kube = api(self);
	char msg[512];

	/* getStateData fails when PreFilter never ran (an earlier PreFilter
	 * plugin returned UnschedulableAndUnresolvable): upstream
	 * dynamicresources.go PostFilter returns that error, CycleState.Read's
	 * "not found", and RunPostFilterPlugins stops there with an Error. A
	 * PreFilter that ran but found no claims said Skip (upstream wrote an
	 * empty state first). */
	if (!s && !cs->skip_filter[SX_SLOT_dynamic_resources])
		return sx_status_new(SX_ERROR, "not found");
	if (!s || s->n == 0)
		return sx_status_new(SX_UNSCHEDULABLE, "no new claims to deallocate");
	for (uint32_t i = 0; i < s->n && i < 64; i++) {
		const struct sx_dra_object *c = s->c[i].claim;

		if (!(bits >> i & 1))
			continue;
		if (c->u.claim.nreserved > 1 ||
		    (c->u.claim.nreserved == 1 && !reserved_for(c, pod)))
			continue;
		if (filtered->dry_run) /* what the real run would answer, nothing written */
			return sx_status_new(SX_UNSCHEDULABLE,
					     "deallocation of ResourceClaim completed");
		if (!kube)
			break;
		return deallocate_claim(kube, c, msg, sizeof(msg));
	}
	return sx_status_new(SX_UNSCHEDULABLE, "still not schedulable");
}

/* ---------- Reserve / Unreserve ---------- */

static const struct sx_node *node_of(const struct sx_cycle_state *cs, sx_str name)
{
	int i = sx_snapshot_find(cs->snap, name);

	return i < 0 ? NULL : cs->snap->nodes[i]->node;
}

static struct sx_status *reserve_dynamic_resources(void *self, struct sx_cycle_state *cs,
						   const struct sx_pod *pod, sx_str node)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	struct dra_self *ds = self;
	struct sx_status *st;

	if (!s || s->nalloc == 0)
		return NULL;
	s->reserved = calloc(s->nalloc, sizeof(*s->reserved));
	if (!s->reserved)
		return sx_status_oom();
	st = allocate(self, s, node_of(cs, node), true, s->reserved);
	if (st) {
		free(s->reserved);
		s->reserved = NULL;
		sx_status_free(st);
		return sx_status_new(SX_ERROR, "claim allocation not found for node");
	}
	s->reserved_node = node;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;

		if (s->c[i].to_allocate &&
		    sx_dra_pending_add(ds->claims, c->meta.uid, &s->reserved[s->c[i].alloc_ix]) < 0)
			return sx_status_new(
				SX_ERROR, "internal error, couldn't signal allocation for claim %s",
				c->meta.name);
	}
	return NULL;
}

/* The reservedFor list as JSON, plus pod when add is set, minus it when not. */
static cJSON *reserved_json(const struct sx_dra_object *c, const struct sx_pod *pod, bool add)
{
	cJSON *arr = cJSON_CreateArray();

	for (uint32_t i = 0; arr && i < c->u.claim.nreserved; i++) {
		const struct sx_dra_consumer *r = &c->u.claim.reserved[i];
		cJSON *o;

		if (!add && r->uid && pod->meta.uid && strcmp(r->uid, pod->meta.uid) == 0)
			continue;
		o = cJSON_CreateObject();
		if (r->api_group)
			cJSON_AddStringToObject(o, "apiGroup", r->api_group);
		cJSON_AddStringToObject(o, "resource", r->resource ? r->resource : "");
		cJSON_AddStringToObject(o, "name", r->name ? r->name : "");
		cJSON_AddStringToObject(o, "uid", r->uid ? r->uid : "");
		cJSON_AddItemToArray(arr, o);
	}
	if (arr && add) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "resource", "pods");
		cJSON_AddStringToObject(o, "name", pod->meta.name ? pod->meta.name : "");
		cJSON_AddStringToObject(o, "uid", pod->meta.uid ? pod->meta.uid : "");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void unreserve_dynamic_resources(void *self, struct sx_cycle_state *cs,
					const struct sx_pod *pod, sx_str node)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	struct dra_self *ds = self;
	struct sx_kube *kube = api(ds);
	char msg[512];

	for (uint32_t i = 0; s && i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;
		cJSON *patch, *md, *stj;
		char *body;

		if (sx_dra_pending_remove(ds->claims, c->meta.uid))
			sx_dra_assume_drop(ds->claims, c->meta.uid);
		if (!c->u.claim.allocation || !reserved_for(c, pod) || !kube)
			continue;
		patch = cJSON_CreateObject();
		md = cJSON_AddObjectToObject(patch, "metadata");
		cJSON_AddStringToObject(md, "uid", c->meta.uid ? c->meta.uid : "");
		stj = cJSON_AddObjectToObject(patch, "status");
		cJSON_AddItemToObject(stj, "reservedFor", reserved_json(c, pod, false));
		body = cJSON_PrintUnformatted(patch);
		cJSON_Delete(patch);
		if (body && sx_dra_patch_claim(kube, sx_str_get(c->meta.ns), c->meta.name, true,
					       body, NULL, msg, sizeof(msg)) < 0)
			sx_log(1, "DynamicResources: unreserve %s/%s: %s", sx_str_get(c->meta.ns),
			       c->meta.name, msg);
		cJSON_free(body);
	}
}

/* ---------- PreBind ---------- */

static char *status_body(const struct sx_dra_object *c, const struct sx_pod *pod,
			 const struct sx_dra_claim_out *alloc)
{
	cJSON *patch = cJSON_CreateObject(), *md, *stj;
	char *body;

	md = cJSON_AddObjectToObject(patch, "metadata");
	cJSON_AddStringToObject(md, "uid", c->meta.uid ? c->meta.uid : "");
	cJSON_AddStringToObject(md, "resourceVersion",
				c->meta.resource_version ? c->meta.resource_version : "");
	stj = cJSON_AddObjectToObject(patch, "status");
	if (alloc)
		cJSON_AddItemToObject(stj, "allocation", sx_dra_allocation_json(alloc));
	cJSON_AddItemToObject(stj, "reservedFor", reserved_json(c, pod, true));
	body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	return body;
}

/* Adds the delete-protection finalizer in a normal update (upstream does
 * so before writing an allocation): 0, or negative with msg. *c becomes
 * the updated claim. */
static int add_finalizer(struct sx_kube *kube, const struct sx_dra_object **c, char *msg,
			 size_t len)
{
	cJSON *patch = cJSON_CreateObject(), *md, *fin;
	struct sx_dra_object *updated = NULL;
	char *body;
	int rc;

	md = cJSON_AddObjectToObject(patch, "metadata");
	cJSON_AddStringToObject(md, "uid", (*c)->meta.uid ? (*c)->meta.uid : "");
	cJSON_AddStringToObject(md, "resourceVersion",
				(*c)->meta.resource_version ? (*c)->meta.resource_version : "");
	fin = cJSON_AddArrayToObject(md, "finalizers");
	for (uint32_t i = 0; i < (*c)->u.claim.nfinalizers; i++)
		cJSON_AddItemToArray(fin, cJSON_CreateString((*c)->u.claim.finalizers[i]));
	cJSON_AddItemToArray(fin, cJSON_CreateString(SX_DRA_FINALIZER));
	body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	rc = body ? sx_dra_patch_claim(kube, sx_str_get((*c)->meta.ns), (*c)->meta.name, false,
				       body, &updated, msg, len)
		  : SX_ENOMEM;
	cJSON_free(body);
	if (rc == 0) {
		sx_dra_unref(*c);
		*c = updated;
	}
	return rc;
}

/* upstream bindClaim: writes allocation (when this cycle made one) and the
 * reservation, retrying conflicts on a fresh copy. */
static struct sx_status *bind_claim(struct dra_self *self, struct sx_kube *kube,
				    struct dra_state *s, uint32_t i, const struct sx_pod *pod)
{
	const struct sx_dra_object *c = sx_dra_ref(s->c[i].claim), *fresh;
	const struct sx_dra_claim_out *alloc =
		s->c[i].to_allocate ? &s->reserved[s->c[i].alloc_ix] : NULL;
	struct sx_status *st = NULL;
	struct sx_dra_object *updated = NULL;
	char msg[512], k[320];
	int rc = SX_ECONFLICT;

	for (int attempt = 0; rc == SX_ECONFLICT && attempt < BIND_RETRIES; attempt++) {
		char *body;

		if (attempt > 0) {
			rc = sx_dra_get_claim(kube, sx_str_get(c->meta.ns), c->meta.name, &updated,
					      msg, sizeof(msg));
			if (rc < 0) {
				st = sx_status_new(SX_ERROR,
						   "get updated claim %s after conflict: %s",
						   kobj(c, k, sizeof(k)), msg);
				break;
			}
			fresh = updated;
			updated = NULL;
			sx_dra_unref(c);
			c = fresh;
		}
		if (c->u.claim.deleting) {
			st = sx_status_new(SX_ERROR, "claim %s got deleted in the meantime",
					   kobj(c, k, sizeof(k)));
			break;
		}
		if (alloc && c->u.claim.allocation) {
			st = sx_status_new(SX_ERROR,
					   "claim %s got allocated elsewhere in the meantime",
					   kobj(c, k, sizeof(k)));
			break;
		}
		if (alloc && !c->u.claim.has_finalizer) {
			rc = add_finalizer(kube, &c, msg, sizeof(msg));
			if (rc == SX_ECONFLICT)
				continue;
			if (rc < 0) {
				st = sx_status_new(SX_ERROR, "add finalizer to claim %s: %s",
						   kobj(c, k, sizeof(k)), msg);
				break;
			}
		}
		body = status_body(c, pod, alloc);
		rc = body ? sx_dra_patch_claim(kube, sx_str_get(c->meta.ns), c->meta.name, true,
					       body, &updated, msg, sizeof(msg))
			  : SX_ENOMEM;
		cJSON_free(body);
	}
	if (!st && rc < 0)
		st = sx_status_new(SX_ERROR, "%s to claim %s: %s",
				   alloc ? "add allocation and reservation" : "add reservation",
				   kobj(c, k, sizeof(k)), msg);
	if (!st && updated) {
		sx_dra_assume(self->claims, updated);
		sx_dra_unref(s->c[i].claim);
		s->c[i].claim = sx_dra_ref(updated);
	}
	sx_dra_unref(updated);
	sx_dra_unref(c);
	return st;
}

static struct sx_status *pre_bind_dynamic_resources(void *self, struct sx_cycle_state *cs,
						    const struct sx_pod *pod, sx_str node)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	struct dra_self *ds = self;
	struct sx_kube *kube = s ? api(ds) : NULL;
	struct sx_status *st = NULL;

	for (uint32_t i = 0; s && !st && i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;

		if (reserved_for(c, pod))
			continue;
		if (!kube) {
			/* No API (explain, extender): the allocation stays in flight. */
			continue;
		}
		st = bind_claim(ds, kube, s, i, pod);
		if (s->c[i].to_allocate)
			sx_dra_pending_remove(ds->claims, c->meta.uid);
	}
	return st;
}

/* ---------- explain ---------- */

cJSON *sx_dra_explain_devices(const struct sx_cycle_state *cs, const struct sx_node *node)
{
	const struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	struct sx_dra_claim_out *out;
	char err[SX_DRA_ERR_LEN], k[320];
	cJSON *arr;

	if (!s || s->n == 0)
		return NULL;
	out = calloc(s->nalloc + 1, sizeof(*out));
	arr = cJSON_CreateArray();
	if (!out || !arr ||
	    (s->nalloc && sx_dra_allocate_prepared(s->prep, node, 0, true, out, err, sizeof(err)) !=
				  SX_DRA_ALLOCATED)) {
		free(out);
		cJSON_Delete(arr);
		return NULL;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "claim", kobj(c, k, sizeof(k)));
		cJSON_AddBoolToObject(o, "allocatedBefore", !s->c[i].to_allocate);
		if (s->c[i].to_allocate)
			cJSON_AddItemToObject(o, "allocation",
					      sx_dra_allocation_json(&out[s->c[i].alloc_ix]));
		cJSON_AddItemToArray(arr, o);
	}
	for (uint32_t i = 0; i < s->nalloc; i++)
		sx_dra_claim_out_clear(&out[i]);
	free(out);
	return arr;
}

/* ---------- queueing hints ---------- */

static bool pod_uses_claim(const struct sx_pod *pod, const struct sx_dra_object *c)
{
	if (c->meta.ns != pod->meta.ns)
		return false;
	for (uint32_t i = 0; i < pod->nresource_claims; i++) {
		const struct sx_pod_claim *pc = &pod->resource_claims[i];
		const char *name = pc->claim_name ? pc->claim_name : pc->status_claim;

		if (name && strcmp(name, c->meta.name) == 0)
			return true;
	}
	return false;
}

static bool same_status(const struct sx_dra_object *a, const struct sx_dra_object *b)
{
	const struct sx_dra_allocation *x = a->u.claim.allocation, *y = b->u.claim.allocation;

	if (!x != !y || a->u.claim.nreserved != b->u.claim.nreserved)
		return false;
	if (x && x->nresults != y->nresults)
		return false;
	for (uint32_t i = 0; x && i < x->nresults; i++)
		if (x->results[i].device != y->results[i].device ||
		    x->results[i].pool != y->results[i].pool)
			return false;
	for (uint32_t i = 0; i < a->u.claim.nreserved; i++)
		if (strcmp(a->u.claim.reserved[i].uid ? a->u.claim.reserved[i].uid : "",
			   b->u.claim.reserved[i].uid ? b->u.claim.reserved[i].uid : ""))
			return false;
	return true;
}

/* isSchedulableAfterClaimChange (the claim is matched by name: the hint
 * may not look claims up in the cache). */
static enum sx_hint hint_claim_dynamic_resources(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_object *o = old_obj, *n = new_obj;
	const struct sx_dra_object *oc = o ? o->obj : NULL, *nc = n ? n->obj : NULL;

	if (!nc)
		return SX_QUEUE;
	if (oc && oc->u.claim.allocation && !nc->u.claim.allocation)
		return SX_QUEUE; /* deallocated: devices became free */
	if (!pod_uses_claim(pod, nc))
		return SX_QUEUE_SKIP;
	if (!oc)
		return SX_QUEUE;
	return same_status(oc, nc) ? SX_QUEUE_SKIP : SX_QUEUE;
}

/* isSchedulableAfterPodChange */
static enum sx_hint hint_pod_dynamic_resources(void *self, const struct sx_pod *pod,
					       const void *old_obj, const void *new_obj)
{
	const struct sx_pod *np = new_obj;
	const char *name;
	bool owner;
	char err[256];

	if (!np || !np->meta.uid || !pod->meta.uid || strcmp(np->meta.uid, pod->meta.uid) != 0)
		return SX_QUEUE_SKIP;
	for (uint32_t i = 0; i < np->nresource_claims; i++)
		if (claim_name(np, &np->resource_claims[i], &name, &owner, err, sizeof(err)) < 0)
			return SX_QUEUE_SKIP;
	return SX_QUEUE;
}

static const struct sx_event_reg events_dynamic_resources[] = {
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL, NULL},
	{SX_RES_RESOURCE_CLAIM, SX_ACT_ADD | SX_ACT_UPDATE, hint_claim_dynamic_resources},
	{SX_RES_POD, SX_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM, hint_pod_dynamic_resources},
	{SX_RES_DEVICE_CLASS, SX_ACT_ADD | SX_ACT_UPDATE, NULL},
	{SX_RES_RESOURCE_SLICE, SX_ACT_ADD | SX_ACT_UPDATE, NULL},
	SX_EVENTS_END,
};

const struct sx_plugin sx_plugin_dynamic_resources = {
	.name = NAME,
	.init = init_dynamic_resources,
	.destroy = destroy_dynamic_resources,
	.args_kind = "DynamicResourcesArgs",
	.write_args = write_args_dynamic_resources,
	.state_clone = state_clone_dynamic_resources,
	.state_free = state_free_dynamic_resources,
	.pre_enqueue = pre_enqueue_dynamic_resources,
	.pre_filter = pre_filter_dynamic_resources,
	.filter = filter_dynamic_resources,
	.post_filter = post_filter_dynamic_resources,
	.reserve = reserve_dynamic_resources,
	.unreserve = unreserve_dynamic_resources,
	.pre_bind = pre_bind_dynamic_resources,
	.events = events_dynamic_resources,
};
