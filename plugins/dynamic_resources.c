/* DynamicResources (pkg/scheduler/framework/plugins/dynamicresources,
 * kube-scheduler 1.34, structured parameters, default gates: see
 * include/schedext/dra_alloc.h): every claim of the pod must exist
 * (PreEnqueue), allocated claims must be usable on the node and the
 * others allocatable there (PreFilter/Filter); Reserve holds the
 * allocation in flight, PreBind writes status.allocation and
 * status.reservedFor, PostFilter deallocates a claim reserved for no pod.
 * Device selectors are CEL programs from a compile cache. With
 * DRADeviceBindingConditions, PreBind then waits on a bind worker for the
 * devices' binding conditions (wait_binding_conditions: every 5 s as
 * upstream, at once when a claim changes in the live cache; it ends at
 * once on shutdown or cancellation, through the instance's waiter,
 * handle_waiter.h). */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/buf.h"
#include "schedext/cel.h"
#include "schedext/config.h"
#include "schedext/dra.h"
#include "schedext/dra_alloc.h"
#include "schedext/handle.h"
#include "schedext/leader.h"
#include "schedext/metrics.h"
#include "schedext/plugin.h"
#include "schedext/plugin_args.h"
#include "schedext/selector.h"
#include "resource_allocation.h"
#include "dra_match.h"
#include "handle_waiter.h"
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

static struct sx_status reject_stale_ext =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, "cannot schedule extended resource claim");

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
	/* PreBind's wait for binding conditions, woken by claim changes, the
	 * environment going away and cancellation (handle_waiter.h); owned */
	struct sx_waiter *waiter;
	/* The profile's gates (sx_handle_features). */
	struct sx_dra_features features;
	bool taint_rules; /* DRADeviceTaintRules */
	bool extended;	  /* DRAExtendedResource */
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

/* DRAExtendedResource: at most EXT_MAX extended resources of a pod are
 * served by DRA; the special claim differs by which of them the node
 * lacks (a mask), each variant prepared once in PreFilter. */
#define EXT_MAX 4

struct ext_variant {
	struct sx_dra_object *claim; /* in memory: "<extended-resources>" */
	cJSON *create;		     /* the object to create (no name, no uid) */
	cJSON *mappings;	     /* status.extendedResourceClaimStatus.requestMappings */
	struct sx_dra_claim_in *in;  /* the pod's claims to allocate, then this one */
	struct sx_dra_prep *prep;
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
	struct sx_dra_prep *prep;     /* the claims validated once for every node */
	_Atomic uint64_t unavailable; /* bit i: claim i unusable on some node (PostFilter) */
	uint64_t binding_stale;	      /* bit i: claim i's binding conditions failed or timed out */
	struct sx_dra_claim_out *reserved; /* [nalloc + 1], Reserve's allocation */
	sx_str reserved_node;
	/* DRAExtendedResource */
	uint32_t next;
	sx_str ext_res[EXT_MAX];
	const char *ext_cls[EXT_MAX];
	struct ext_variant var[1u << EXT_MAX];	 /* [mask], mask 0 unused */
	unsigned ext_mask;			 /* Reserve's node: the variant used */
	char ext_uid[64];			 /* the in-memory claim's uid (in flight) */
	const struct sx_dra_object *ext_created; /* PreBind: the claim created */
	/* a special claim of the pod from an earlier attempt (a reference):
	 * Filter rejects every node, PostFilter deletes it */
	const struct sx_dra_object *ext_stale;
	/* Score (prioritized lists): per snapshot node, Filter's score + 1
	 * (0: none); NULL when no claim has a firstAvailable request */
	_Atomic int64_t *node_score;
	uint32_t nnodes;
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

/* The profile's gates (sx_handle_features: the default release's without
 * a handle), as upstream's New reads them from its feature.Features. */
static void read_gates(struct dra_self *s, const struct sx_handle *h)
{
	struct sx_features f = sx_handle_features(h);

	s->features.admin_access = sx_feature_enabled(&f, SX_FEATURE_DRA_ADMIN_ACCESS);
	s->features.prioritized_list = sx_feature_enabled(&f, SX_FEATURE_DRA_PRIORITIZED_LIST);
	s->features.device_taints = sx_feature_enabled(&f, SX_FEATURE_DRA_DEVICE_TAINTS);
	s->features.partitionable = sx_feature_enabled(&f, SX_FEATURE_DRA_PARTITIONABLE_DEVICES);
	s->features.consumable = sx_feature_enabled(&f, SX_FEATURE_DRA_CONSUMABLE_CAPACITY);
	s->extended = sx_feature_enabled(&f, SX_FEATURE_DRA_EXTENDED_RESOURCE);
	s->features.binding = sx_feature_enabled(&f, SX_FEATURE_DRA_DEVICE_BINDING_CONDITIONS) &&
			      sx_feature_enabled(&f, SX_FEATURE_DRA_RESOURCE_CLAIM_DEVICE_STATUS);
	s->taint_rules = s->features.device_taints &&
			 sx_feature_enabled(&f, SX_FEATURE_DRA_DEVICE_TAINT_RULES);
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
	read_gates(s, h);
	/* upstream: cel.NewCache(10, cel.Features{EnableConsumableCapacity}) */
	s->cel = sx_cel_cache_new_features(10, s->features.consumable);
	s->waiter = sx_waiter_new(h, 1ull << SX_KIND_RESOURCE_CLAIM);
	if (!s->cel || !s->claims || !s->waiter) {
		sx_waiter_free(s->waiter);
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
	sx_waiter_free(s->waiter);
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
	const struct dra_self *s = ctx;

	return sx_dra_cel_match(s->cel, expr, driver, pool, dev, err, errlen);
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
	for (uint32_t i = 0; s->reserved && i <= s->nalloc; i++)
		sx_dra_claim_out_clear(&s->reserved[i]);
	for (unsigned m = 1; m < (1u << EXT_MAX); m++) {
		sx_dra_prep_free(s->var[m].prep);
		free(s->var[m].in);
		sx_dra_unref(s->var[m].claim);
		cJSON_Delete(s->var[m].create);
		cJSON_Delete(s->var[m].mappings);
	}
	sx_dra_unref(s->ext_created);
	sx_dra_unref(s->ext_stale);
	free((void *)s->node_score);
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
	if (s->nalloc) {
		s->prep = sx_dra_prepare(&s->env, s->in, s->nalloc);
		if (!s->prep)
			return sx_status_oom();
		sx_dra_prep_memo(s->prep);
	}
	return NULL;
}

/* ---------- extended resources backed by DRA ---------- */

/* preFilterExtendedResources: the pod's extended resources (non-zero)
 * that a DeviceClass serves. */
static struct sx_status *ext_collect(struct dra_state *s, const struct sx_snapshot *snap,
				     const struct sx_pod *pod)
{
	const struct sx_resources *r = &pod->request;

	for (uint32_t i = 0; i < r->nscalar; i++) {
		const char *name = sx_str_get(r->scalar[i].name);
		const struct sx_dra_object *cls;

		if (r->scalar[i].value == 0 ||
		    (!sx_is_extended_resource_name(name) &&
		     strncmp(name, SX_DRA_CLASS_PREFIX, strlen(SX_DRA_CLASS_PREFIX)) != 0))
			continue;
		cls = sx_dra_class_for_resource(snap, name);
		if (!cls)
			continue;
		if (s->next == EXT_MAX)
			return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					     "more than %d extended resources backed by DRA",
					     EXT_MAX);
		s->ext_res[s->next] = r->scalar[i].name;
		s->ext_cls[s->next++] = cls->meta.name;
	}
	if (s->next)
		snprintf(s->ext_uid, sizeof(s->ext_uid), "extended-resources/%s", pod->meta.uid);
	/* findExtendedResourceClaim: the special claim the pod controls, made
	 * by an earlier attempt whose binding failed; its allocation may be
	 * stale, so it is deleted (PostFilter) rather than reused */
	for (uint32_t i = 0; s->next && pod->meta.uid && i < snap->nresource_claims; i++) {
		const struct sx_dra_object *c = snap->resource_claims[i];

		if (c->meta.ns == pod->meta.ns && c->u.claim.extended && c->u.claim.owner_uid &&
		    strcmp(sx_str_get(c->u.claim.owner_kind), "Pod") == 0 &&
		    strcmp(c->u.claim.owner_uid, pod->meta.uid) == 0) {
			s->ext_stale = sx_dra_ref(c);
			break;
		}
	}
	return NULL;
}

/* One variant of the special claim: the resources of mask (the node
 * lacks them), in memory and prepared with the pod's claims. */
static struct sx_status *ext_variant(struct dra_state *s, const struct sx_pod *pod, unsigned mask)
{
	struct ext_variant *v = &s->var[mask];
	sx_str res[EXT_MAX];
	const char *cls[EXT_MAX];
	struct sx_error err = {0};
	uint32_t n = 0;
	cJSON *mem, *md;

	for (uint32_t k = 0; k < s->next; k++)
		if (mask >> k & 1) {
			res[n] = s->ext_res[k];
			cls[n++] = s->ext_cls[k];
		}
	v->create = sx_dra_extended_claim_json(pod, res, cls, n, &v->mappings);
	if (!v->create)
		return NULL; /* no container asks for a whole device: nothing to allocate */
	mem = cJSON_Duplicate(v->create, true);
	md = mem ? cJSON_GetObjectItem(mem, "metadata") : NULL;
	if (!md)
		goto oom;
	cJSON_AddStringToObject(md, "name", "<extended-resources>");
	cJSON_AddStringToObject(md, "uid", s->ext_uid);
	v->claim = sx_decode_dra(mem, SX_KIND_RESOURCE_CLAIM, &err);
	cJSON_Delete(mem);
	v->in = calloc(s->nalloc + 1, sizeof(*v->in));
	if (!v->claim || !v->in)
		goto oom;
	memcpy(v->in, s->in, s->nalloc * sizeof(*v->in));
	v->in[s->nalloc] = (struct sx_dra_claim_in){sx_str_get(v->claim->meta.ns),
						    v->claim->meta.name, &v->claim->u.claim.spec};
	v->prep = sx_dra_prepare(&s->env, v->in, s->nalloc + 1);
	if (!v->prep)
		return sx_status_oom();
	sx_dra_prep_memo(v->prep);
	return NULL;
oom:
	return sx_status_oom();
}

/* filterExtendedResources: the variant for node (the extended resources
 * it does not advertise; 0 when it advertises all of them). */
static unsigned ext_mask(const struct dra_state *s, const struct sx_node *node)
{
	unsigned m = 0;

	for (uint32_t k = 0; node && k < s->next; k++)
		if (sx_resources_get(&node->allocatable, s->ext_res[k]) == 0 &&
		    s->var[1u << k].prep)
			m |= 1u << k;
	return m;
}

/* The prepared allocation for node and how many claims it allocates. */
static const struct sx_dra_prep *prep_for(const struct dra_state *s, const struct sx_node *node,
					  unsigned *mask, uint32_t *nout)
{
	*mask = ext_mask(s, node);
	*nout = s->nalloc + (*mask ? 1 : 0);
	return *mask ? s->var[*mask].prep : s->prep;
}

static int claim_ready(const struct sx_dra_object *c, char *msg, size_t len);

/* An allocated claim whose devices' binding conditions failed, or did not
 * come within bindingTimeout of allocationTimestamp (Filter's
 * isClaimReadyForBinding and isClaimTimeout): unavailable on every node,
 * so PostFilter deallocates it and the next attempt allocates anew. The
 * same for every node, so decided once in PreFilter. */
static bool binding_stale(const struct dra_self *ds, const struct sx_dra_object *c)
{
	const struct sx_dra_allocation *a = c->u.claim.allocation;
	uint64_t timeout_s =
		(ds->binding_timeout_ns ? ds->binding_timeout_ns : 600ull * 1000000000ull) /
		1000000000ull;
	char msg[256];
	int ready = claim_ready(c, msg, sizeof(msg));
	bool conds = false;

	if (ready < 0)
		return true;
	if (ready == 1 || !a->has_timestamp)
		return false;
	for (uint32_t i = 0; i < a->nresults; i++)
		conds |= a->results[i].nbind_conds > 0;
	return conds && a->timestamp + (int64_t)timeout_s < (int64_t)time(NULL);
}

static struct sx_status *pre_filter_dynamic_resources(void *self, struct sx_cycle_state *cs,
						      const struct sx_pod *pod,
						      struct sx_node_set **result)
{
	struct dra_self *ds = self;
	struct dra_state *s;
	struct sx_status *st;

	if (pod->nresource_claims == 0 && !(ds->extended && pod->request.nscalar))
		return sx_status_new(SX_SKIP, NULL);
	s = sx_cycle_state_slot(cs, SX_SLOT_dynamic_resources, sizeof(*s));
	if (!s)
		return sx_status_oom();
	st = collect(self, s, cs->snap, pod);
	if (!st && ds->extended)
		st = ext_collect(s, cs->snap, pod);
	if (st)
		return st;
	if (s->n == 0 && s->next == 0)
		return sx_status_new(SX_SKIP, NULL);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;

		if (c->u.claim.allocation) {
			if (c->u.claim.nreserved >= RESERVED_FOR_MAX && !reserved_for(c, pod))
				return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
						     "resourceclaim in use");
			if (ds->features.binding && binding_stale(ds, c))
				s->binding_stale |= 1ull << (i & 63);
			continue;
		}
		s->c[i].to_allocate = true;
		s->c[i].alloc_ix = (int)s->nalloc++;
		st = check_requests(self, cs->snap, c);
		if (st)
			return st;
	}
	for (uint32_t i = 0; !s->node_score && i < s->n; i++)
		for (uint32_t r = 0; r < s->c[i].claim->u.claim.spec.nrequests; r++)
			if (s->c[i].claim->u.claim.spec.requests[r].nsub && !s->node_score) {
				s->nnodes = cs->snap->nnodes;
				s->node_score = calloc(s->nnodes + 1, sizeof(*s->node_score));
				if (!s->node_score)
					return sx_status_oom();
			}
	if (!s->nalloc && !s->next)
		return NULL;
	st = prepare_allocator(self, s, cs->snap);
	for (unsigned m = 1; !st && m < (1u << s->next); m++)
		st = ext_variant(s, pod, m);
	return st;
}

/* ---------- Filter ---------- */

/* The Filter status of the allocator's answer rc (err: its message). */
static struct sx_status *alloc_status(int rc, const char *err)
{
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

/* Allocates the pod's claims for node into out[nalloc] (cleared by the
 * caller on SX_DRA_ALLOCATED). A Filter status, or NULL on success. */
static struct sx_status *allocate(struct dra_self *self, const struct sx_dra_prep *prep,
				  const struct sx_node *node, bool results,
				  struct sx_dra_claim_out *out)
{
	char err[SX_DRA_ERR_LEN];

	return alloc_status(sx_dra_allocate_prepared(prep, node, self->filter_timeout_ns, results,
						     out, err, sizeof(err)),
			    err);
}

/* Whether the pod's claims can be allocated on node, nothing kept: the
 * allocator may answer from earlier cycles (sx_dra_allocate_feasible). */
static struct sx_status *feasible(struct dra_self *self, const struct sx_dra_prep *prep,
				  const struct sx_node *node)
{
	char err[SX_DRA_ERR_LEN];

	return alloc_status(
		sx_dra_allocate_feasible(prep, node, self->filter_timeout_ns, err, sizeof(err)),
		err);
}

/* ---------- Score (prioritized lists) ---------- */

/* computeScore for one claim: FirstAvailableDeviceRequestMaxSize (8)
 * less the index of each firstAvailable subrequest that got a device.
 * got(i, r, k): whether subrequest k of request r got one. */
#define FIRST_AVAILABLE_MAX 8

static int64_t claim_score(const struct sx_dra_claim_spec *spec,
			   bool (*got)(const void *ctx, const struct sx_dra_request *r, uint32_t k),
			   const void *ctx)
{
	int64_t score = 0;

	for (uint32_t r = 0; r < spec->nrequests; r++) {
		const struct sx_dra_request *req = &spec->requests[r];

		if (req->has_exactly)
			continue;
		for (uint32_t k = 0; k < req->nsub; k++)
			if (got(ctx, req, k))
				score += FIRST_AVAILABLE_MAX - (int64_t)k;
	}
	return score;
}

/* An allocation made before: its results name "req/sub". */
static bool got_allocated(const void *ctx, const struct sx_dra_request *r, uint32_t k)
{
	const struct sx_dra_allocation *a = ctx;
	size_t rl = strlen(r->name);

	for (uint32_t i = 0; i < a->nresults; i++) {
		const char *n = a->results[i].request;

		if (n && strncmp(n, r->name, rl) == 0 && n[rl] == '/' &&
		    strcmp(n + rl + 1, r->first_available[k].name) == 0)
			return true;
	}
	return false;
}

/* This Filter's allocation: a pick's request is the subrequest itself. */
static bool got_picked(const void *ctx, const struct sx_dra_request *r, uint32_t k)
{
	const struct sx_dra_claim_out *o = ctx;

	for (uint32_t i = 0; i < o->npicks; i++)
		if (o->picks[i].req == &r->first_available[k])
			return true;
	return false;
}

static void record_score(struct dra_state *s, const struct sx_snapshot *snap,
			 const struct sx_node_info *ni, const struct sx_dra_claim_out *out)
{
	int ix = ni->node ? sx_snapshot_find(snap, ni->node->name_id) : -1;
	int64_t score = 0;

	if (ix < 0 || (uint32_t)ix >= s->nnodes)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;

		if (s->c[i].to_allocate)
			score += out ? claim_score(&c->u.claim.spec, got_picked,
						   &out[s->c[i].alloc_ix])
				     : 0;
		else if (c->u.claim.allocation)
			score +=
				claim_score(&c->u.claim.spec, got_allocated, c->u.claim.allocation);
	}
	atomic_store(&s->node_score[ix], score + 1);
}

static struct sx_status *pre_score_dynamic_resources(void *self, struct sx_cycle_state *cs,
						     const struct sx_pod *pod,
						     struct sx_node_info *const *nodes, uint32_t n)
{
	const struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];

	/* nothing to prefer without a prioritized list */
	return s && s->node_score ? NULL : sx_status_new(SX_SKIP, NULL);
}

static struct sx_status *score_dynamic_resources(void *self, const struct sx_cycle_state *cs,
						 const struct sx_pod *pod,
						 const struct sx_node_info *ni, int64_t *score)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	int ix;

	*score = 0;
	if (!s || !s->node_score || !ni->node)
		return NULL;
	ix = sx_snapshot_find(cs->snap, ni->node->name_id);
	if (ix >= 0 && (uint32_t)ix < s->nnodes && atomic_load(&s->node_score[ix]) > 0)
		*score = atomic_load(&s->node_score[ix]) - 1;
	return NULL;
}

static struct sx_status *normalize_score_dynamic_resources(void *self,
							   const struct sx_cycle_state *cs,
							   const struct sx_pod *pod,
							   struct sx_node_score *scores, uint32_t n)
{
	sx_default_normalize_score(SX_MAX_NODE_SCORE, false, scores, n);
	return NULL;
}

static struct sx_status *filter_dynamic_resources(void *self, const struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  const struct sx_node_info *ni)
{
	struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	uint64_t unavailable = 0;
	struct sx_status *st = NULL;
	const struct sx_dra_prep *prep;
	unsigned mask;
	uint32_t nout;

	if (!s || (s->n == 0 && s->next == 0))
		return NULL;
	if (s->ext_stale) /* filterExtendedResources: the claim of a prior cycle */
		return &reject_stale_ext;
	unavailable = s->binding_stale;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_allocation *a = s->c[i].claim->u.claim.allocation;

		if (a && a->node_selector && !sx_node_selector_matches(a->node_selector, ni->node))
			unavailable |= 1ull << (i & 63);
	}
	prep = prep_for(s, ni->node, &mask, &nout);
	if (prep && !s->node_score) {
		st = feasible(self, prep, ni->node);
		if (st)
			return st;
	} else if (prep) {
		struct sx_dra_claim_out one, *out = nout == 1 ? &one : calloc(nout, sizeof(*out));

		if (!out)
			return sx_status_oom();
		st = allocate(self, prep, ni->node, false, out);
		if (!st && s->node_score)
			record_score(s, cs->snap, ni, out);
		if (out != &one)
			free(out);
		if (st)
			return st;
	} else if (s->node_score) {
		record_score(s, cs->snap, ni, NULL);
	}
	if (unavailable) {
		atomic_fetch_or(&((struct dra_state *)s)->unavailable, unavailable);
		return &reject_not_available;
	}
	return NULL;
}

/* ---------- PostFilter ---------- */

/* deleteClaim: the builtin finalizer removed (a merge patch of the other
 * finalizers, guarded by the claim's uid), then the claim deleted; a
 * claim already gone is fine. 0 or a negative with msg set. */
static int delete_claim(struct sx_kube *kube, const struct sx_dra_object *c, char *msg, size_t len)
{
	const char *ns = sx_str_get(c->meta.ns);
	int rc = 0;

	if (c->u.claim.has_finalizer) {
		cJSON *patch = cJSON_CreateObject(),
		      *md = cJSON_AddObjectToObject(patch, "metadata"),
		      *fin = cJSON_AddArrayToObject(md, "finalizers");
		char *body;

		cJSON_AddStringToObject(md, "uid", c->meta.uid ? c->meta.uid : "");
		for (uint32_t i = 0; fin && i < c->u.claim.nfinalizers; i++)
			if (strcmp(c->u.claim.finalizers[i], SX_DRA_FINALIZER) != 0)
				cJSON_AddItemToArray(fin,
						     cJSON_CreateString(c->u.claim.finalizers[i]));
		body = cJSON_PrintUnformatted(patch);
		cJSON_Delete(patch);
		rc = body ? sx_dra_patch_claim(kube, ns, c->meta.name, false, body, NULL, msg, len)
			  : SX_ENOMEM;
		cJSON_free(body);
		if (rc == SX_ENOENT)
			return 0;
		if (rc < 0)
			return rc;
	}
	return sx_dra_delete_claim(kube, ns, c->meta.name, msg, len);
}

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
	if (!s || (s->n == 0 && !s->ext_stale))
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
	if (s->ext_stale) {
		/* the special claim of a prior cycle is deleted, its finalizer
		 * removed first (dynamicresources.go PostFilter, deleteClaim) */
		if (!filtered->dry_run && kube &&
		    delete_claim(kube, s->ext_stale, msg, sizeof(msg)) < 0)
			return sx_status_new(SX_ERROR, "%s", msg);
		return sx_status_new(SX_UNSCHEDULABLE, "deletion of ResourceClaim completed");
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
	const struct sx_node *n = node_of(cs, node);
	const struct sx_dra_prep *prep;
	struct sx_status *st;
	uint32_t nout;

	if (!s)
		return NULL;
	prep = prep_for(s, n, &s->ext_mask, &nout);
	if (!prep)
		return NULL;
	s->reserved = calloc(s->nalloc + 1, sizeof(*s->reserved));
	if (!s->reserved)
		return sx_status_oom();
	st = allocate(self, prep, n, true, s->reserved);
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
	if (s->ext_mask && sx_dra_pending_add(ds->claims, s->ext_uid, &s->reserved[s->nalloc]) < 0)
		return sx_status_new(SX_ERROR,
				     "internal error, couldn't signal allocation for claim %s",
				     "<extended-resources>");
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

	if (s && s->ext_mask)
		sx_dra_pending_remove(ds->claims, s->ext_uid);
	if (s && s->ext_created && kube) {
		/* unreserveExtendedResourceClaim: the claim written is deleted */
		const struct sx_dra_object *c = s->ext_created;

		if (sx_dra_delete_claim(kube, sx_str_get(c->meta.ns), c->meta.name, msg,
					sizeof(msg)) < 0)
			sx_log(1, "DynamicResources: delete %s/%s: %s", sx_str_get(c->meta.ns),
			       c->meta.name, msg);
	}
	for (uint32_t i = 0; s && i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;
		cJSON *patch, *md, *stj;
		char *body;

		if (c == s->ext_created)
			continue;
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
			 const struct sx_dra_claim_out *alloc, bool stamp)
{
	cJSON *patch = cJSON_CreateObject(), *md, *stj;
	char *body;

	md = cJSON_AddObjectToObject(patch, "metadata");
	cJSON_AddStringToObject(md, "uid", c->meta.uid ? c->meta.uid : "");
	cJSON_AddStringToObject(md, "resourceVersion",
				c->meta.resource_version ? c->meta.resource_version : "");
	stj = cJSON_AddObjectToObject(patch, "status");
	if (alloc) {
		cJSON *aj = sx_dra_allocation_json(alloc);

		/* bindClaim: with DRADeviceBindingConditions and
		 * DRAResourceClaimDeviceStatus the allocation is stamped */
		if (aj && stamp) {
			char ts[32];
			time_t now = time(NULL);
			struct tm tm;

			gmtime_r(&now, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
			cJSON_AddStringToObject(aj, "allocationTimestamp", ts);
		}
		cJSON_AddItemToObject(stj, "allocation", aj);
	}
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
		body = status_body(c, pod, alloc, self->features.binding);
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

/* dynamic_resource_allocation_resourceclaim_creates_total{status,
 * admin_access}: one per Create call of the special claim, "success" or
 * "failure" (dynamicresources.go createExtendedResourceClaimInAPI; the
 * family and its labels are resourceclaim/metrics ResourceClaimCreate).
 * The special claim's requests never ask for admin access, so
 * admin_access is always "false". */
static void claim_create_metric(struct dra_self *ds, const char *status)
{
	struct sx_handle_env env;
	char labels[64];

	sx_handle_env(ds->handle, &env);
	if (!env.metrics)
		return;
	snprintf(labels, sizeof(labels), "status=\"%s\",admin_access=\"false\"", status);
	sx_metrics_inc(env.metrics, "dynamic_resource_allocation_resourceclaim_creates_total",
		       labels, 1);
}

/* PreBind of the special claim (bindClaim, createExtendedResourceClaimInAPI,
 * patchPodExtendedResourceClaimStatus): created under a generated name,
 * its allocation and reservation written as any claim's, then the pod's
 * status.extendedResourceClaimStatus. */
static struct sx_status *bind_extended(struct dra_self *ds, struct sx_kube *kube,
				       struct dra_state *s, const struct sx_pod *pod)
{
	struct ext_variant *v = &s->var[s->ext_mask];
	struct sx_dra_object *created = NULL;
	struct sx_status *st;
	cJSON *patch, *ers;
	char msg[512], *body = cJSON_PrintUnformatted(v->create);
	int rc;

	rc = body ? sx_dra_create_claim(kube, sx_str_get(pod->meta.ns), body, &created, msg,
					sizeof(msg))
		  : SX_ENOMEM;
	cJSON_free(body);
	claim_create_metric(ds, rc < 0 ? "failure" : "success");
	if (rc < 0) {
		sx_dra_pending_remove(ds->claims, s->ext_uid);
		return sx_status_new(SX_ERROR, "create claim for extended resources %s/%s: %s",
				     sx_str_get(pod->meta.ns), "<extended-resources>", msg);
	}
	s->ext_created = sx_dra_ref(created);
	s->c[s->n++] = (struct pclaim){created, true, (int)s->nalloc};
	st = bind_claim(ds, kube, s, s->n - 1, pod);
	sx_dra_pending_remove(ds->claims, s->ext_uid);
	if (st)
		return st;
	patch = cJSON_CreateObject();
	ers = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "status"),
				      "extendedResourceClaimStatus");
	if (ers) {
		cJSON_AddItemToObject(ers, "requestMappings", cJSON_Duplicate(v->mappings, true));
		cJSON_AddStringToObject(ers, "resourceClaimName", s->c[s->n - 1].claim->meta.name);
	}
	body = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	rc = body ? sx_dra_patch_pod_status(kube, sx_str_get(pod->meta.ns), pod->meta.name, body,
					    msg, sizeof(msg))
		  : SX_ENOMEM;
	cJSON_free(body);
	if (rc < 0)
		return sx_status_new(SX_ERROR, "update pod %s/%s ExtendedResourceClaimStatus: %s",
				     sx_str_get(pod->meta.ns), pod->meta.name, msg);
	return NULL;
}

/* ---------- binding conditions (DRADeviceBindingConditions) ---------- */

static const struct sx_dra_device_status *device_status(const struct sx_dra_object *c,
							const struct sx_dra_result *r)
{
	for (uint32_t i = 0; i < c->u.claim.ndevice_status; i++) {
		const struct sx_dra_device_status *d = &c->u.claim.device_status[i];

		if (d->device == r->device && d->driver == r->driver && d->pool == r->pool)
			return d;
	}
	return NULL;
}

static const struct sx_dra_condition *find_cond(const struct sx_dra_device_status *d,
						const char *type)
{
	for (uint32_t i = 0; d && i < d->nconds; i++)
		if (d->conds[i].type && strcmp(d->conds[i].type, type) == 0)
			return &d->conds[i];
	return NULL;
}

/* isClaimReadyForBinding: 1 ready, 0 not yet, -1 a failure condition is
 * true (message in msg). */
static int claim_ready(const struct sx_dra_object *c, char *msg, size_t len)
{
	const struct sx_dra_allocation *a = c->u.claim.allocation;

	if (!a)
		return 0;
	for (uint32_t i = 0; i < a->nresults; i++) {
		const struct sx_dra_result *r = &a->results[i];
		const struct sx_dra_device_status *d;

		if (r->nbind_conds == 0)
			continue;
		d = device_status(c, r);
		if (!d)
			return 0;
		for (uint32_t k = 0; k < r->nbind_fail; k++) {
			const struct sx_dra_condition *f = find_cond(d, r->bind_fail[k]);

			if (f && f->is_true) {
				snprintf(msg, len,
					 "claim %s binding failed: reason=%s, message=\"%s\"",
					 c->meta.name, f->reason ? f->reason : "",
					 f->message ? f->message : "");
				return -1;
			}
		}
		for (uint32_t k = 0; k < r->nbind_conds; k++) {
			const struct sx_dra_condition *t = find_cond(d, r->bind_conds[k]);

			if (!t || !t->is_true)
				return 0;
		}
	}
	return 1;
}

static bool claim_has_binding_conditions(const struct sx_dra_object *c)
{
	const struct sx_dra_allocation *a = c->u.claim.allocation;

	for (uint32_t i = 0; a && i < a->nresults; i++)
		if (a->results[i].nbind_conds)
			return true;
	return false;
}

/* scheduler_dra_bindingconditions_*: per driver with binding conditions,
 * once per attempt, status success / failure / timeout. */
static void binding_metrics(struct dra_self *ds, const struct dra_state *s, const char *status,
			    double secs)
{
	struct sx_handle_env env;
	sx_str seen[16];
	uint32_t nseen = 0;
	char labels[512], e1[300], e2[300];
	const char *prof =
		ds->handle && ds->handle->profile ? ds->handle->profile->scheduler_name : "";

	sx_handle_env(ds->handle, &env);
	if (!env.metrics)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_allocation *a = s->c[i].claim->u.claim.allocation;

		for (uint32_t k = 0; a && k < a->nresults; k++) {
			bool dup = false;

			if (!a->results[k].nbind_conds)
				continue;
			for (uint32_t j = 0; j < nseen; j++)
				dup |= seen[j] == a->results[k].driver;
			if (dup || nseen == 16)
				continue;
			seen[nseen++] = a->results[k].driver;
			snprintf(labels, sizeof(labels),
				 "profile=\"%s\",driver=\"%s\",status=\"%s\"",
				 sx_metrics_label_escape(prof ? prof : "", e1, sizeof(e1)),
				 sx_metrics_label_escape(sx_str_get(a->results[k].driver), e2,
							 sizeof(e2)),
				 status);
			sx_metrics_inc(env.metrics,
				       "scheduler_dra_bindingconditions_allocations_total", labels,
				       1);
			sx_metrics_observe(env.metrics,
					   "scheduler_dra_bindingconditions_wait_duration_seconds",
					   labels, secs);
		}
	}
}

#define BINDING_POLL_NS 5000000000ull /* upstream BindingConditionPollInterval */

/* Did one of the claims with binding conditions change in the live cache
 * since *seen (references, updated)? A driver's status write then is
 * worth reading at once rather than at the next poll. */
static bool claims_changed(struct dra_self *ds, const struct dra_state *s,
			   const struct sx_dra_object **seen)
{
	bool changed = false;

	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim, *now = NULL;

		if (!claim_has_binding_conditions(c) ||
		    sx_dra_claim_known(ds->claims, c->meta.ns, c->meta.name, &now) <= 0)
			continue;
		if (now != seen[i]) {
			changed |= seen[i] != NULL;
			sx_dra_unref(seen[i]);
			seen[i] = now;
		} else {
			sx_dra_unref(now);
		}
	}
	return changed;
}

/* isPodReadyForBinding: reads each claim with binding conditions again
 * through the API; 1 ready, 0 not yet, -1 failed (msg set). */
static int read_ready(struct sx_kube *kube, struct dra_state *s, char *msg, size_t len)
{
	int ready = 1;

	for (uint32_t i = 0; ready == 1 && i < s->n; i++) {
		struct sx_dra_object *fresh = NULL;
		const struct sx_dra_object *c = s->c[i].claim;

		if (!claim_has_binding_conditions(c))
			continue;
		if (sx_dra_get_claim(kube, sx_str_get(c->meta.ns), c->meta.name, &fresh, msg, len) <
		    0)
			return -2;
		sx_dra_unref(s->c[i].claim); /* Unreserve works with the claim read */
		s->c[i].claim = fresh;
		ready = claim_ready(fresh, msg, len);
	}
	return ready;
}

/* PreBind's wait (upstream PreBind: wait.PollUntilContextTimeout every 5s,
 * at once first, up to bindingTimeout; isPodReadyForBinding reads each
 * claim again). Also read at once when one of the claims changes in the
 * live cache. The wait ends at once, "context canceled", when the
 * scheduler stops (the cache is detached) or preemption cancels the
 * PreBind (upstream: PreBind's context is cancelled). An Error status
 * sends the pod back to the queue. */
static struct sx_status *wait_binding_conditions(struct dra_self *ds, struct sx_kube *kube,
						 struct sx_cycle_state *cs, struct dra_state *s,
						 const struct sx_pod *pod, sx_str node)
{
	/* 10 minutes when no configuration gave one (the plugin built alone) */
	uint64_t start = sx_waiter_now_ns(),
		 deadline = start + (ds->binding_timeout_ns ? ds->binding_timeout_ns
							    : 600ull * 1000000000ull),
		 gen = sx_waiter_gen(ds->waiter), next_poll = start;
	const struct sx_dra_object **seen;
	struct sx_status *st = NULL;
	bool need = false;
	char msg[512];

	for (uint32_t i = 0; i < s->n; i++)
		need |= claim_has_binding_conditions(s->c[i].claim);
	if (!need)
		return NULL;
	seen = calloc(s->n, sizeof(*seen));
	if (!seen)
		return sx_status_oom();
	claims_changed(ds, s, seen);
	sx_log(2,
	       "DynamicResources: waiting for binding conditions for device on node %s (pod %s/%s)",
	       sx_str_get(node), sx_str_get(pod->meta.ns), pod->meta.name);
	while (!st) {
		uint64_t now = sx_waiter_now_ns();
		int ready;

		if (now >= next_poll) {
			ready = read_ready(kube, s, msg, sizeof(msg));
			now = sx_waiter_now_ns();
			next_poll = now + BINDING_POLL_NS;
			if (ready == 1) {
				binding_metrics(ds, s, "success", (now - start) / 1e9);
				break;
			}
			if (ready < 0) {
				binding_metrics(ds, s, "failure", (now - start) / 1e9);
				st = sx_status_new(SX_ERROR, "%s", msg);
				break;
			}
		}
		if (now >= deadline) {
			binding_metrics(ds, s, "timeout", (now - start) / 1e9);
			st = sx_status_new(SX_ERROR, "device binding timeout");
			break;
		}
		if (!sx_waiter_wait(ds->waiter, &gen, next_poll < deadline ? next_poll : deadline,
				    NULL) ||
		    atomic_load(&cs->pre_bind_cancelled))
			st = sx_status_new(SX_ERROR, "context canceled");
		else if (claims_changed(ds, s, seen))
			next_poll = 0;
	}
	for (uint32_t i = 0; i < s->n; i++)
		sx_dra_unref(seen[i]);
	free(seen);
	return st;
}

/* upstream DynamicResources.PreBindPreFlight: Skip when the pod has no
 * claims and no special claim of extended resources to create (or the
 * plugin is off), else Success. Its PreBind stays in order with the
 * others. */
static struct sx_status *pre_bind_pre_flight_dynamic_resources(void *self,
							       struct sx_cycle_state *cs,
							       const struct sx_pod *pod,
							       sx_str node, bool *allow_parallel)
{
	const struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];

	if (!s || (s->n == 0 && !s->ext_mask))
		return sx_status_new(SX_SKIP, NULL);
	return NULL;
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
	if (s && !st && s->ext_mask && kube)
		st = bind_extended(ds, kube, s, pod);
	if (s && !st && kube && ds->features.binding)
		st = wait_binding_conditions(ds, kube, cs, s, pod, node);
	return st;
}

/* ---------- explain ---------- */

/* A claim's name for an operator: ns/name, or "extended resources" for
 * the special claim of DRAExtendedResource. */
static const char *claim_label(const struct sx_dra_claim_in *in, char *buf, size_t len)
{
	if (in->name && strcmp(in->name, "<extended-resources>") == 0)
		snprintf(buf, len, "extended resources");
	else
		snprintf(buf, len, "%s/%s", in->ns ? in->ns : "", in->name ? in->name : "");
	return buf;
}

/* A device as the operator finds it: its name, pool/name when the pool is
 * not named after the node. */
static const char *device_label(sx_str pool, sx_str dev, const struct sx_node *node, char *buf,
				size_t len)
{
	if (node && pool == node->name_id)
		snprintf(buf, len, "%s", sx_str_get(dev));
	else
		snprintf(buf, len, "%s/%s", sx_str_get(pool), sx_str_get(dev));
	return buf;
}

/* The allocation the pod's claims would get on node (out[nout], cleared
 * by the caller) and the claims it is for; false when it cannot. */
static bool explain_allocate(const struct dra_state *s, const struct sx_node *node,
			     struct sx_dra_claim_out **out, const struct sx_dra_claim_in **in,
			     uint32_t *nout)
{
	char err[SX_DRA_ERR_LEN];
	unsigned mask;
	const struct sx_dra_prep *prep = prep_for(s, node, &mask, nout);

	*in = mask ? s->var[mask].in : s->in;
	*out = calloc(*nout + 1, sizeof(**out));
	if (!*out)
		return false;
	if (*nout && (!prep || sx_dra_allocate_prepared(prep, node, 0, true, *out, err,
							sizeof(err)) != SX_DRA_ALLOCATED)) {
		free(*out);
		*out = NULL;
		return false;
	}
	return true;
}

static void free_outs(struct sx_dra_claim_out *out, uint32_t n)
{
	for (uint32_t i = 0; out && i < n; i++)
		sx_dra_claim_out_clear(&out[i]);
	free(out);
}

cJSON *sx_dra_explain_devices(const struct sx_cycle_state *cs, const struct sx_node *node)
{
	const struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	const struct sx_dra_claim_in *in;
	struct sx_dra_claim_out *out;
	char k[320];
	uint32_t nout;
	cJSON *arr;

	if (!s || (s->n == 0 && s->next == 0) || !explain_allocate(s, node, &out, &in, &nout))
		return NULL;
	arr = cJSON_CreateArray();
	for (uint32_t i = 0; arr && i < s->n; i++) {
		const struct sx_dra_object *c = s->c[i].claim;
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "claim", kobj(c, k, sizeof(k)));
		cJSON_AddBoolToObject(o, "allocatedBefore", !s->c[i].to_allocate);
		if (s->c[i].to_allocate)
			cJSON_AddItemToObject(o, "allocation",
					      sx_dra_allocation_json(&out[s->c[i].alloc_ix]));
		cJSON_AddItemToArray(arr, o);
	}
	if (arr && nout > s->nalloc) {
		/* the special claim of extended resources, made in PreBind */
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "claim", claim_label(&in[s->nalloc], k, sizeof(k)));
		cJSON_AddBoolToObject(o, "allocatedBefore", false);
		cJSON_AddItemToObject(o, "allocation", sx_dra_allocation_json(&out[s->nalloc]));
		cJSON_AddItemToArray(arr, o);
	}
	free_outs(out, nout);
	return arr;
}

/* One pick as the operator reads it: "request -> device", with what
 * kind of device it is: a partition (it consumes a counter set of the
 * pool) or a share of a device allocated many times (what it
 * consumes). */
static void pick_phrase(struct sx_buf *b, const struct sx_dra_pick *p, const struct sx_node *node)
{
	char dv[300], q[64];

	sx_buf_printf(b, "%s -> %s", p->request,
		      device_label(p->pool, p->device, node, dv, sizeof(dv)));
	if (p->dev && p->dev->nconsumes)
		sx_buf_printf(b, " (partition of %s)", sx_str_get(p->dev->consumes[0].name));
	if (p->shared) {
		struct sx_dra_named_qty c[8];
		uint32_t n = sx_dra_consumed(p->req, p->driver, p->dev, c, 8);

		sx_buf_puts(b, " (share");
		for (uint32_t i = 0; i < n; i++) {
			sx_dra_qty_string(c[i].q, q, sizeof(q));
			sx_buf_printf(b, "%s %s %s", i ? "," : ":", c[i].name, q);
		}
		sx_buf_putc(b, ')');
	}
}

int sx_dra_explain_node(const struct sx_cycle_state *cs, const struct sx_node *node,
			struct sx_buf *b)
{
	const struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	const struct sx_dra_claim_in *in;
	struct sx_dra_claim_out *out;
	uint32_t nout, shown = 0;
	char k[320];

	if (!s || (s->n == 0 && s->next == 0))
		return 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (!s->c[i].to_allocate)
			sx_buf_printf(b, "%s%s already allocated", shown++ ? "; " : "",
				      kobj(s->c[i].claim, k, sizeof(k)));
	if (!explain_allocate(s, node, &out, &in, &nout))
		return 0;
	for (uint32_t ci = 0; ci < nout; ci++) {
		sx_buf_printf(b, "%s%s: ", shown++ ? "; " : "", claim_label(&in[ci], k, sizeof(k)));
		for (uint32_t i = 0; i < out[ci].npicks; i++) {
			if (i)
				sx_buf_puts(b, ", ");
			pick_phrase(b, &out[ci].picks[i], node);
		}
	}
	free_outs(out, nout);
	return (int)shown;
}

static const char *const why_words[SX_DRA_WHY_COUNT] = {
	[SX_DRA_WHY_IN_USE] = "in use",
	[SX_DRA_WHY_SELECTOR] = "selector false",
	[SX_DRA_WHY_NODE] = "not for this node",
	[SX_DRA_WHY_GATE] = "not usable",
	[SX_DRA_WHY_TAINT] = "tainted",
	[SX_DRA_WHY_CAPACITY] = "capacity exhausted",
	[SX_DRA_WHY_COUNTERS] = "counters exhausted",
};

static const char *const why_members[SX_DRA_WHY_COUNT] = {
	[SX_DRA_WHY_IN_USE] = "inUse",
	[SX_DRA_WHY_SELECTOR] = "selectorFalse",
	[SX_DRA_WHY_NODE] = "notForNode",
	[SX_DRA_WHY_GATE] = "gateOff",
	[SX_DRA_WHY_TAINT] = "tainted",
	[SX_DRA_WHY_CAPACITY] = "capacityExhausted",
	[SX_DRA_WHY_COUNTERS] = "countersExhausted",
};

/* Why Filter's "cannot allocate all claims" on this node: the first
 * request of the pod's claims short of devices there, and why each
 * device did not fit (sx_dra_diagnose). A claim allocated for other
 * nodes: which claim. */
/* The PreFilter rejection's names: the claim not found, the device
 * class missing (read back from upstream's words, which name them). */
static void explain_pre_filter(const struct sx_pod *pod, const char *reason, struct sx_detail *d)
{
	char a[256], b[256];

	if (sscanf(reason, "resourceclaim.resource.k8s.io \"%255[^\"]\" not found", a) == 1) {
		sx_detail_text(d, "claim %s/%s is not in the cluster", sx_str_get(pod->meta.ns), a);
		sx_detail_str(d, "claim", a);
		sx_detail_str(d, "namespace", sx_str_get(pod->meta.ns));
	} else if (sscanf(reason, "request %255s device class %255s does not exist", a, b) == 2) {
		a[strcspn(a, ":")] = '\0';
		sx_detail_text(d, "request %s: DeviceClass %s is not in the cluster", a, b);
		sx_detail_str(d, "request", a);
		sx_detail_str(d, "deviceClass", b);
	}
}

static void explain_dynamic_resources(void *self, const struct sx_cycle_state *cs,
				      const struct sx_pod *pod, const struct sx_node_info *ni,
				      const struct sx_status *st, struct sx_detail *d)
{
	const struct dra_state *s = cs->slots[SX_SLOT_dynamic_resources];
	const struct sx_dra_prep *prep;
	const struct sx_dra_claim_in *in;
	struct sx_dra_diag g;
	char err[SX_DRA_ERR_LEN], k[320], dv[300];
	unsigned mask;
	uint32_t nout;
	struct sx_buf b;

	if (!ni && st->nreasons) {
		explain_pre_filter(pod, st->reasons[0], d);
		return;
	}
	if (!s || !ni || !ni->node)
		return;
	if (s->ext_stale) {
		kobj(s->ext_stale, k, sizeof(k));
		sx_detail_text(d,
			       "claim %s for the extended resources is left from an earlier "
			       "attempt: PostFilter deletes it",
			       k);
		sx_detail_str(d, "claim", k);
		return;
	}
	for (uint32_t i = 0; i < s->n && i < 64; i++)
		if (s->binding_stale >> i & 1) {
			kobj(s->c[i].claim, k, sizeof(k));
			sx_detail_text(d,
				       "claim %s: its devices' binding conditions failed or timed "
				       "out, PostFilter deallocates it",
				       k);
			sx_detail_str(d, "claim", k);
			return;
		}
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sx_dra_allocation *a = s->c[i].claim->u.claim.allocation;

		if (a && a->node_selector &&
		    !sx_node_selector_matches(a->node_selector, ni->node)) {
			kobj(s->c[i].claim, k, sizeof(k));
			sx_detail_text(d, "claim %s is allocated for other nodes", k);
			sx_detail_str(d, "claim", k);
			return;
		}
	}
	prep = prep_for(s, ni->node, &mask, &nout);
	in = mask ? s->var[mask].in : s->in;
	if (!prep || !nout)
		return;
	if (sx_dra_diagnose(prep, ni->node, &g, err, sizeof(err)) < 0) {
		sx_detail_text(d, "%s", err);
		return;
	}
	if (g.found && g.ndevices == 0 && g.nskipped == 0)
		return; /* the node publishes no device: the reason says enough */
	if (!g.found) {
		sx_detail_text(d, "each request has a device that fits alone, not all of them "
				  "together (constraints, counters or capacity shared)");
		return;
	}
	claim_label(&in[g.claim], k, sizeof(k));
	sx_buf_init(&b);
	sx_buf_printf(&b, "claim %s, request %s needs %d, %u of %u device(s) fit", k, g.request,
		      g.needs, g.count[SX_DRA_WHY_FITS], g.ndevices);
	for (uint32_t i = 0; i < g.nlisted; i++) {
		sx_buf_printf(&b, "%s %s %s", i ? ";" : ":",
			      device_label(g.listed[i].pool, g.listed[i].device, ni->node, dv,
					   sizeof(dv)),
			      why_words[g.listed[i].why]);
		if (g.listed[i].detail[0])
			sx_buf_printf(&b, g.listed[i].why == SX_DRA_WHY_TAINT ? " %s" : " (%s)",
				      g.listed[i].detail);
	}
	if (g.ndevices - g.count[SX_DRA_WHY_FITS] > g.nlisted)
		sx_buf_printf(&b, "; and %u more",
			      g.ndevices - g.count[SX_DRA_WHY_FITS] - g.nlisted);
	if (g.nskipped)
		sx_buf_printf(&b, "; pool %s skipped (%s)", sx_str_get(g.skipped_pool),
			      g.skipped_incomplete ? "incomplete" : "invalid");
	sx_detail_text(d, "%s", b.failed || !b.data ? "" : b.data);
	sx_buf_free(&b);
	sx_detail_str(d, "claim", k);
	sx_detail_str(d, "request", g.request);
	sx_detail_int(d, "needs", g.needs);
	sx_detail_int(d, "fit", g.count[SX_DRA_WHY_FITS]);
	for (uint32_t i = 0; i < g.nlisted; i++)
		if (g.listed[i].why == SX_DRA_WHY_TAINT) {
			sx_detail_str(d, "taint", g.listed[i].detail);
			break;
		}
	for (unsigned w = 0; w < SX_DRA_WHY_FITS; w++) {
		sx_str names[SX_DRA_DIAG_LISTED];
		uint32_t n = 0;

		for (uint32_t i = 0; i < g.nlisted; i++)
			if (g.listed[i].why == w)
				names[n++] =
					sx_intern(device_label(g.listed[i].pool, g.listed[i].device,
							       ni->node, dv, sizeof(dv)));
		if (n)
			sx_detail_strs(d, why_members[w], names, n);
	}
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

static bool same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* status.devices equal: the same devices with the same conditions (type,
 * status, reason, message) in the same order. */
static bool same_device_status(const struct sx_dra_claim *a, const struct sx_dra_claim *b)
{
	if (a->ndevice_status != b->ndevice_status)
		return false;
	for (uint32_t i = 0; i < a->ndevice_status; i++) {
		const struct sx_dra_device_status *x = &a->device_status[i],
						  *y = &b->device_status[i];

		if (x->driver != y->driver || x->pool != y->pool || x->device != y->device ||
		    x->nconds != y->nconds)
			return false;
		for (uint32_t j = 0; j < x->nconds; j++)
			if (!same_str(x->conds[j].type, y->conds[j].type) ||
			    x->conds[j].is_true != y->conds[j].is_true ||
			    !same_str(x->conds[j].reason, y->conds[j].reason) ||
			    !same_str(x->conds[j].message, y->conds[j].message))
				return false;
	}
	return true;
}

/* apiequality.Semantic.DeepEqual of the two statuses, on what the model
 * keeps: allocation (results, timestamp), reservedFor, devices. */
static bool same_status(const struct sx_dra_object *a, const struct sx_dra_object *b)
{
	const struct sx_dra_allocation *x = a->u.claim.allocation, *y = b->u.claim.allocation;

	if (!x != !y || a->u.claim.nreserved != b->u.claim.nreserved ||
	    !same_device_status(&a->u.claim, &b->u.claim))
		return false;
	if (x && (x->has_timestamp != y->has_timestamp || x->timestamp != y->timestamp))
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

/* foreachPodResourceClaim for the hints: 1 when every claim of pod
 * exists, is not being deleted and (generated from a template) is the
 * pod's, *uses set when one of them has UID uid (may be NULL); 0 when one
 * is not (the pod stays unschedulable); -1 when claims are not tracked by
 * name here (explain, tests without a live cache): the caller falls back
 * to matching by name. Reads the claims tracker (its own lock), not the
 * cache. */
static int pod_claims_ok(const struct dra_self *ds, const struct sx_pod *pod, const char *uid,
			 bool *uses)
{
	char err[256];

	for (uint32_t i = 0; i < pod->nresource_claims; i++) {
		const struct sx_dra_object *c;
		const char *name;
		bool owner;
		int known;

		if (claim_name(pod, &pod->resource_claims[i], &name, &owner, err, sizeof(err)) < 0)
			return 0;
		if (!name)
			continue;
		known = sx_dra_claim_known(ds->claims, pod->meta.ns, name, &c);
		if (known <= 0)
			return known;
		known = check_claim(pod, c, owner, err, sizeof(err));
		if (uses && uid && c->meta.uid && strcmp(c->meta.uid, uid) == 0)
			*uses = true;
		sx_dra_unref(c);
		if (known < 0)
			return 0;
	}
	return 1;
}

/* isSchedulableAfterClaimChange: the pod's claims must all be there; a
 * deallocation may free devices for anyone; otherwise only the pod's own
 * claims matter, created or with a changed status. Deletes are not
 * registered (new_obj is never NULL from the queue). */
static enum sx_hint hint_claim_dynamic_resources(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_object *o = old_obj, *n = new_obj;
	const struct sx_dra_object *oc = o ? o->obj : NULL, *nc = n ? n->obj : NULL;
	bool uses = false;
	int ok;

	if (!nc)
		return SX_QUEUE;
	ok = pod_claims_ok(self, pod, nc->meta.uid, &uses);
	if (ok == 0)
		return SX_QUEUE_SKIP;
	if (ok < 0)
		uses = pod_uses_claim(pod, nc);
	if (oc && oc->u.claim.allocation && !nc->u.claim.allocation)
		return SX_QUEUE; /* deallocated: devices became free */
	if (!uses)
		return SX_QUEUE_SKIP;
	if (!oc)
		return SX_QUEUE;
	return same_status(oc, nc) ? SX_QUEUE_SKIP : SX_QUEUE;
}

/* isSchedulableAfterPodChange: the pod itself, now with every claim it
 * references existing (a generated claim's name landed in its status). */
static enum sx_hint hint_pod_dynamic_resources(void *self, const struct sx_pod *pod,
					       const void *old_obj, const void *new_obj)
{
	const struct sx_pod *np = new_obj;
	const char *name;
	bool owner;
	char err[256];
	int ok;

	(void)old_obj;
	if (!np || !np->meta.uid || !pod->meta.uid || strcmp(np->meta.uid, pod->meta.uid) != 0)
		return SX_QUEUE_SKIP;
	ok = pod_claims_ok(self, np, NULL, NULL);
	if (ok >= 0)
		return ok ? SX_QUEUE : SX_QUEUE_SKIP;
	for (uint32_t i = 0; i < np->nresource_claims; i++)
		if (claim_name(np, &np->resource_claims[i], &name, &owner, err, sizeof(err)) < 0)
			return SX_QUEUE_SKIP;
	return SX_QUEUE;
}

/* EventsToRegister (dynamicresources.go): with queueing hints, nodes
 * added or changing labels or allocatable (1.34 on: a device plugin's
 * resource going away hands an extended resource to DRA); claims and the
 * pod's generated claim through hints; every DeviceClass and ResourceSlice
 * change. DeviceTaintRule changes come as ResourceSlice updates, as
 * upstream's slice tracker reports them (scheduler.c, on_object). */
static const struct sx_event_reg events_dynamic_resources[] = {
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL | SX_ACT_UPDATE_NODE_ALLOCATABLE, NULL},
	{SX_RES_RESOURCE_CLAIM, SX_ACT_ADD | SX_ACT_UPDATE, hint_claim_dynamic_resources},
	{SX_RES_POD, SX_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM, hint_pod_dynamic_resources},
	{SX_RES_DEVICE_CLASS, SX_ACT_ADD | SX_ACT_UPDATE, NULL},
	{SX_RES_RESOURCE_SLICE, SX_ACT_ADD | SX_ACT_UPDATE, NULL},
	SX_EVENTS_END,
};

/* DynamicResources.SignPod (dynamicresources.go): a pod with resource
 * claims is not signable; others add nothing. */
static struct sx_status *sign_dynamic_resources(void *self, const struct sx_pod *pod,
						uint32_t *signers)
{
	(void)self;
	(void)signers;
	if (pod->nresource_claims > 0)
		return sx_status_new(SX_UNSCHEDULABLE,
				     "pods with dra resource claims are not signable");
	return NULL;
}

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
	.pre_bind_pre_flight = pre_bind_pre_flight_dynamic_resources,
	.pre_bind = pre_bind_dynamic_resources,
	.pre_score = pre_score_dynamic_resources,
	.score = score_dynamic_resources,
	.normalize_score = normalize_score_dynamic_resources,
	.events = events_dynamic_resources,
	.sign = sign_dynamic_resources,
	.explain = explain_dynamic_resources,
};
