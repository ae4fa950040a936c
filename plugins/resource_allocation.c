/* Resource-to-score machinery shared by NodeResourcesFit and
 * NodeResourcesBalancedAllocation. See resource_allocation.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resource_allocation.h"
#include "dra_match.h"
#include "schedext/cel.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "schedext/snapshot.h"
#include "schedext/buf.h"

/* Resolved kinds of a configured resource name (sx_ra_scorer.kind). */
enum ra_kind { RA_CPU, RA_MEMORY, RA_EPHEMERAL, RA_SCALAR, RA_OTHER };

#define MAX_UTILIZATION 100

/* ---------- resource names ---------- */

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* [A-Za-z0-9] */
static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..n) */
static bool name_part_ok(const char *s, size_t n)
{
	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* RFC 1123 subdomain: dot-separated labels [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool subdomain_ok(const char *s, size_t n)
{
	size_t start = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!lower_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		if (i == start || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
			return false;
		start = i + 1;
	}
	return true;
}

#define NAME_FMT_MSG                                                                               \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and "            \
	"end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "                   \
	"'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"                   \
	"[A-Za-z0-9]')"
#define DNS1123_SUBDOMAIN_MSG                                                                      \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "                  \
	"characters, '-' or '.', and must start and end with an alphanumeric character "           \
	"(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*"                   \
	"[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

bool sx_qualified_name_ok(const char *name, char *msg, size_t len)
{
	const char *slash = strchr(name, '/');
	const char *part = name;

	if (slash && strchr(slash + 1, '/')) {
		snprintf(msg, len,
			 "a qualified name " NAME_FMT_MSG " with an optional DNS "
			 "subdomain prefix and '/' (e.g. 'example.com/MyName')");
		return false;
	}
	if (slash) {
		size_t plen = (size_t)(slash - name);

		if (plen == 0) {
			snprintf(msg, len, "prefix part must be non-empty");
			return false;
		}
		if (plen > 253) {
			snprintf(msg, len, "prefix part must be no more than 253 characters");
			return false;
		}
		if (!subdomain_ok(name, plen)) {
			snprintf(msg, len, "prefix part " DNS1123_SUBDOMAIN_MSG);
			return false;
		}
		part = slash + 1;
	}
	if (*part == '\0') {
		snprintf(msg, len, "name part must be non-empty");
		return false;
	}
	if (strlen(part) > 63) {
		snprintf(msg, len, "name part must be no more than 63 characters");
		return false;
	}
	if (!name_part_ok(part, strlen(part))) {
		snprintf(msg, len, "name part " NAME_FMT_MSG);
		return false;
	}
	return true;
}

static bool is_prefixed_native(const char *name)
{
	return strstr(name, "kubernetes.io/") != NULL;
}

bool sx_is_extended_resource_name(const char *name)
{
	char buf[320], msg[8];

	/* Native: no '/' at all, or in the kubernetes.io namespace. */
	if (!strchr(name, '/') || is_prefixed_native(name) || has_prefix(name, "requests."))
		return false;
	if (snprintf(buf, sizeof(buf), "requests.%s", name) >= (int)sizeof(buf))
		return false;
	return sx_qualified_name_ok(buf, msg, sizeof(msg));
}

bool sx_is_scalar_resource_name(const char *name)
{
	return sx_is_extended_resource_name(name) || has_prefix(name, "hugepages-") ||
	       is_prefixed_native(name) || has_prefix(name, "attachable-volumes-");
}

/* ---------- lookups ---------- */

/* Scalar entry of r named `name`; *exists tells absent from 0. */
static int64_t scalar_get(const struct sx_resources *r, sx_str name, bool *exists)
{
	for (uint32_t i = 0; i < r->nscalar; i++) {
		if (r->scalar[i].name == name) {
			if (exists)
				*exists = true;
			return r->scalar[i].value;
		}
	}
	if (exists)
		*exists = false;
	return 0;
}

static enum ra_kind resolve_kind(sx_str name)
{
	const char *s = sx_str_get(name);

	if (strcmp(s, "cpu") == 0)
		return RA_CPU;
	if (strcmp(s, "memory") == 0)
		return RA_MEMORY;
	if (strcmp(s, "ephemeral-storage") == 0)
		return RA_EPHEMERAL;
	return sx_is_scalar_resource_name(s) ? RA_SCALAR : RA_OTHER;
}

/* Saturating add: requests are non-negative in practice, but hostile input
 * must not hit signed overflow. */
static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return a > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* ---------- scoring ---------- */

void sx_ra_pod_requests(const struct sx_ra_scorer *sc, const struct sx_pod *pod, int64_t *out)
{
	for (uint32_t i = 0; i < sc->nresources; i++) {
		sx_str name = sc->resources[i].name;

		switch (sc->kind[i]) {
		case RA_CPU:
			out[i] = sc->use_requested ? pod->request.milli_cpu
						   : pod->fit_score_milli_cpu;
			break;
		case RA_MEMORY:
			out[i] = sc->use_requested ? pod->request.memory : pod->fit_score_memory;
			break;
		case RA_EPHEMERAL:
			out[i] = pod->request.ephemeral_storage;
			break;
		default:
			out[i] = name == SX_S_PODS ? pod->request.pods
						   : scalar_get(&pod->request, name, NULL);
			break;
		}
	}
}

bool sx_ra_all_zero(const int64_t *reqs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (reqs[i] != 0)
			return false;
	return true;
}

/* The node's requested amount of resource i, without the pod: the
 * "allocated" vector of upstream's 1.36 balancedResourceScorer. Only read
 * for resources node_alloc_req scores. */
static int64_t node_requested(const struct sx_ra_scorer *sc, uint32_t i,
			      const struct sx_node_info *ni)
{
	switch (sc->kind[i]) {
	case RA_CPU:
		return sc->use_requested ? ni->requested.milli_cpu : ni->nonzero_milli_cpu;
	case RA_MEMORY:
		return sc->use_requested ? ni->requested.memory : ni->nonzero_memory;
	case RA_EPHEMERAL:
		return ni->requested.ephemeral_storage;
	case RA_SCALAR:
		return scalar_get(&ni->requested, sc->resources[i].name, NULL);
	default:
		return 0;
	}
}

/* The DRA side of resource i on ni (calculateDRAExtendedResourceAllocatableRequest):
 * devices of the serving class on the node and how many are in use;
 * (0, 0) when no class serves it or a selector fails. */
__attribute__((noinline)) static void dra_alloc_req(const struct sx_ra_dra *dra, uint32_t i,
						    const struct sx_node *node, int64_t *capacity,
						    int64_t *allocated)
{
	*capacity = 0;
	*allocated = 0;
	if (!dra->cls[i])
		return;
	if (sx_dra_class_devices(dra->ix, dra->base, dra->inflight, node, dra->cls[i],
				 sx_dra_cel_match, dra->cel, capacity, allocated) < 0) {
		*capacity = 0;
		*allocated = 0;
	}
}

/* (allocatable, requested-including-pod) of resource i on ni; (0, 0) means
 * "not scored" (upstream calculateResourceAllocatableRequest). The node's
 * requested amount without the pod is *req - pod_req when *alloc != 0.
 * Static so that sx_ra_score's loop inlines it (a call per node and
 * resource showed in perf-check); sx_ra_alloc_request exports it. */
static inline void node_alloc_req(const struct sx_ra_scorer *sc, uint32_t i,
				  const struct sx_node_info *ni, int64_t pod_req,
				  const struct sx_ra_dra *dra, int64_t *alloc, int64_t *req)
{
	const struct sx_resources *al = &ni->node->allocatable;
	bool exists;

	*alloc = 0;
	*req = 0;
	if (pod_req == 0 && sc->kind[i] == RA_SCALAR)
		return;
	switch (sc->kind[i]) {
	case RA_CPU:
		*alloc = al->milli_cpu;
		*req = add_sat(sc->use_requested ? ni->requested.milli_cpu : ni->nonzero_milli_cpu,
			       pod_req);
		return;
	case RA_MEMORY:
		*alloc = al->memory;
		*req = add_sat(sc->use_requested ? ni->requested.memory : ni->nonzero_memory,
			       pod_req);
		return;
	case RA_EPHEMERAL:
		*alloc = al->ephemeral_storage;
		*req = add_sat(ni->requested.ephemeral_storage, pod_req);
		return;
	case RA_SCALAR:
		*alloc = scalar_get(al, sc->resources[i].name, &exists);
		if (*alloc == 0 && sc->dra_extended && dra) {
			int64_t allocated;

			/* not the device plugin's: the devices backing it */
			dra_alloc_req(dra, i, ni->node, alloc, &allocated);
			if (*alloc > 0) {
				*req = add_sat(allocated, pod_req);
				return;
			}
		}
		if (exists)
			*req = add_sat(scalar_get(&ni->requested, sc->resources[i].name, NULL),
				       pod_req);
		else
			*alloc = 0;
		return;
	default:
		return;
	}
}

void sx_ra_node_usage(const struct sx_ra_scorer *sc, const struct sx_node_info *ni,
		      const int64_t *group_reqs, int64_t *alloc, int64_t *used)
{
	for (uint32_t i = 0; i < sc->nresources; i++) {
		int64_t req;
		bool scored;

		node_alloc_req(sc, i, ni, group_reqs[i], NULL, &alloc[i], &req);
		/* A scalar is scored when the node has it and the group asks
		 * for it (node_alloc_req then sets either figure). */
		scored = sc->kind[i] == RA_SCALAR ? (alloc[i] != 0 || req != 0)
						  : sc->kind[i] != RA_OTHER;
		used[i] = scored ? node_requested(sc, i, ni) : 0;
	}
}

void sx_ra_alloc_request(const struct sx_ra_scorer *sc, uint32_t i, const struct sx_node_info *ni,
			 int64_t pod_req, const struct sx_ra_dra *dra, int64_t *alloc, int64_t *req)
{
	node_alloc_req(sc, i, ni, pod_req, dra, alloc, req);
}

/* x * 100 / d for x >= 0, d > 0, exact: in 64 bits when x * 100 cannot
 * overflow (always, for real quantities), else in 128 (a libgcc call per
 * node and resource that showed in profiles). */
static int64_t scale_div(int64_t x, int64_t d)
{
	if (x >= 0 && x <= INT64_MAX / SX_MAX_NODE_SCORE)
		return x * SX_MAX_NODE_SCORE / d;
	return (int64_t)((__int128)x * SX_MAX_NODE_SCORE / d);
}

int64_t sx_ra_least_requested(int64_t requested, int64_t capacity)
{
	if (capacity == 0 || requested > capacity)
		return 0;
	return scale_div(capacity - requested, capacity);
}

int64_t sx_ra_most_requested(int64_t requested, int64_t capacity)
{
	if (capacity == 0)
		return 0;
	/* requested may exceed capacity because of the non-zero defaults. */
	if (requested > capacity)
		requested = capacity;
	return scale_div(requested, capacity);
}

int64_t sx_broken_linear(const struct sx_shape_point *shape, uint32_t n, int64_t p)
{
	for (uint32_t i = 0; i < n; i++) {
		if (p > shape[i].utilization)
			continue;
		if (i == 0)
			return shape[0].score;
		return shape[i - 1].score +
		       (shape[i].score - shape[i - 1].score) * (p - shape[i - 1].utilization) /
			       (shape[i].utilization - shape[i - 1].utilization);
	}
	return shape[n - 1].score;
}

static int64_t rtcr_resource(const struct sx_ra_scorer *sc, int64_t requested, int64_t capacity)
{
	int64_t u = MAX_UTILIZATION;

	if (capacity != 0 && requested <= capacity)
		u = (int64_t)((__int128)requested * MAX_UTILIZATION / capacity);
	return sx_broken_linear(sc->shape, sc->nshape, u);
}

int64_t sx_ra_balance(const int64_t *requested, const int64_t *allocatable, uint32_t n)
{
	double fractions[SX_RA_MAX_RESOURCES], total = 0, std = 0;
	uint32_t nf = 0;

	for (uint32_t i = 0; i < n; i++) {
		double f;

		if (allocatable[i] == 0)
			continue;
		f = (double)requested[i] / (double)allocatable[i];
		if (f > 1)
			f = 1;
		total += f;
		fractions[nf++] = f;
	}
	if (nf == 2) {
		std = fabs((fractions[0] - fractions[1]) / 2);
	} else if (nf > 2) {
		double mean = total / (double)nf, sum = 0;

		for (uint32_t i = 0; i < nf; i++)
			sum = sum + (fractions[i] - mean) * (fractions[i] - mean);
		std = sqrt(sum / (double)nf);
	}
	return (int64_t)((1 - std) * (double)SX_MAX_NODE_SCORE);
}

int64_t sx_ra_combine(const struct sx_ra_scorer *sc, const int64_t *requested,
		      const int64_t *allocatable)
{
	__int128 node_score = 0;
	int64_t weight_sum = 0;

	if (sc->strategy == SX_RA_BALANCED)
		return sx_ra_balance(requested, allocatable, sc->nresources);
	for (uint32_t i = 0; i < sc->nresources; i++) {
		int64_t w = sc->resources[i].weight, s;

		if (allocatable[i] == 0)
			continue;
		if (sc->strategy == SX_RA_LEAST_ALLOCATED) {
			s = sx_ra_least_requested(requested[i], allocatable[i]);
		} else if (sc->strategy == SX_RA_MOST_ALLOCATED) {
			s = sx_ra_most_requested(requested[i], allocatable[i]);
		} else {
			/* RequestedToCapacityRatio: only resources scoring > 0 count. */
			s = rtcr_resource(sc, requested[i], allocatable[i]);
			if (s <= 0)
				continue;
		}
		node_score += (__int128)s * w;
		weight_sum += w;
	}
	if (weight_sum == 0)
		return 0;
	if (sc->strategy == SX_RA_REQUESTED_TO_CAPACITY_RATIO)
		return (int64_t)round((double)node_score / (double)weight_sum);
	/* Same truncated quotient in 64 bits (no libgcc call) when it fits,
	 * which bounded weights always give. */
	if (node_score >= INT64_MIN && node_score <= INT64_MAX)
		return (int64_t)node_score / weight_sum;
	return (int64_t)(node_score / weight_sum);
}

/* Upstream balancedResourceScorer (1.36): both balances are in
 * [MaxNodeScore/2, MaxNodeScore], their difference in [-50, 50]; the sum
 * brings it back to [50, 100], integer arithmetic as upstream's int64. */
int64_t sx_ra_balance_change(int64_t with_pod, int64_t without_pod)
{
	return SX_MAX_NODE_SCORE / 2 + (SX_MAX_NODE_SCORE / 2 + with_pod - without_pod) / 2;
}

int sx_ra_score(const struct sx_ra_scorer *sc, const struct sx_node_info *ni,
		const int64_t *pod_reqs, const struct sx_ra_dra *dra, int64_t *score)
{
	/* Not zero-initialised: node_alloc_req sets entries [0, nresources),
	 * the only ones read, and clearing 1 KiB per node per plugin showed up
	 * as the top cost of scoring. */
	int64_t requested[SX_RA_MAX_RESOURCES], allocatable[SX_RA_MAX_RESOURCES];

	*score = 0;
	if (sc->nresources == 0)
		return SX_EINVAL;
	if (ni->node == NULL)
		return 0;
	for (uint32_t i = 0; i < sc->nresources; i++)
		node_alloc_req(sc, i, ni, pod_reqs[i], dra, &allocatable[i], &requested[i]);
	if (sc->strategy == SX_RA_BALANCED && sc->balance_change) {
		int64_t allocated[SX_RA_MAX_RESOURCES];

		/* The node without the pod: the same resources, the pod's
		 * request taken back out (what it was before add_sat). */
		for (uint32_t i = 0; i < sc->nresources; i++)
			allocated[i] = allocatable[i] ? node_requested(sc, i, ni) : 0;
		/* a resource scored by its DRA devices: the devices in use */
		for (uint32_t i = 0; dra && i < sc->nresources; i++)
			if (allocatable[i] && dra->cls[i] && sc->kind[i] == RA_SCALAR &&
			    !scalar_get(&ni->node->allocatable, sc->resources[i].name, NULL))
				allocated[i] = requested[i] - pod_reqs[i];
		*score =
			sx_ra_balance_change(sx_ra_balance(requested, allocatable, sc->nresources),
					     sx_ra_balance(allocated, allocatable, sc->nresources));
		return 0;
	}
	*score = sx_ra_combine(sc, requested, allocatable);
	return 0;
}

/* ---------- args ---------- */

/* ---------- extended resources backed by DRA ---------- */

int sx_ra_dra_init(struct sx_ra_scorer *sc, struct sx_handle *h)
{
	struct sx_features f = sx_handle_features(h);

	sc->dra_extended = sx_feature_enabled(&f, SX_FEATURE_DRA_EXTENDED_RESOURCE);
	if (!sc->dra_extended)
		return 0;
	/* upstream: a CEL cache of 10 compiled class selectors */
	sc->cel = sx_cel_cache_new_features(
		10, sx_feature_enabled(&f, SX_FEATURE_DRA_CONSUMABLE_CAPACITY));
	sc->dra = h ? h->dra : NULL;
	if (!sc->dra)
		sc->dra = sc->own_dra = sx_dra_claims_new();
	return sc->cel && sc->dra ? 0 : SX_ENOMEM;
}

void sx_ra_dra_destroy(struct sx_ra_scorer *sc)
{
	sx_cel_cache_free(sc->cel);
	sx_dra_claims_free(sc->own_dra);
	sc->cel = NULL;
	sc->dra = sc->own_dra = NULL;
}

struct sx_ra_dra *sx_ra_dra_ref(struct sx_ra_dra *d)
{
	if (d)
		atomic_fetch_add(&d->refcount, 1);
	return d;
}

void sx_ra_dra_unref(struct sx_ra_dra *d)
{
	if (!d || atomic_fetch_sub(&d->refcount, 1) > 1)
		return;
	sx_dra_index_unref(d->ix);
	sx_dra_allocated_free(d->base);
	sx_dra_allocated_free(d->inflight);
	free(d);
}

/* schedutil.IsDRAExtendedResourceName: an extended resource name, or the
 * implicit name of a class. */
static bool dra_extended_name(const char *name)
{
	return sx_is_extended_resource_name(name) ||
	       strncmp(name, SX_DRA_CLASS_PREFIX, strlen(SX_DRA_CLASS_PREFIX)) == 0;
}

int sx_ra_dra_prescore(const struct sx_ra_scorer *sc, const struct sx_snapshot *snap,
		       struct sx_ra_dra **out)
{
	const struct sx_dra_object *cls[SX_RA_MAX_RESOURCES] = {0};
	bool any = false;
	struct sx_ra_dra *d;

	*out = NULL;
	if (!sc->dra_extended || !snap)
		return 0;
	for (uint32_t i = 0; i < sc->nresources; i++) {
		const char *name = sx_str_get(sc->resources[i].name);

		if (sc->kind[i] != RA_SCALAR || !dra_extended_name(name))
			continue;
		cls[i] = sx_dra_class_for_resource(snap, name);
		any |= cls[i] != NULL;
	}
	if (!any)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return SX_ENOMEM;
	atomic_init(&d->refcount, 1);
	memcpy(d->cls, cls, sizeof(cls));
	d->cel = sc->cel;
	/* GatherAllocatedState: the claims' allocations plus those in flight */
	d->ix = sx_dra_index_get(sc->dra, snap);
	d->base = sx_dra_allocated_base(sc->dra, snap);
	d->inflight = sx_dra_inflight(sc->dra, snap);
	if (!d->ix || !d->base || !d->inflight) {
		sx_ra_dra_unref(d);
		return SX_ENOMEM;
	}
	*out = d;
	return 0;
}

void sx_ra_default_resources(struct sx_ra_scorer *sc)
{
	sc->nresources = 2;
	sc->resources[0] = (struct sx_resource_weight){SX_S_CPU, 1};
	sc->resources[1] = (struct sx_resource_weight){SX_S_MEMORY, 1};
	sc->kind[0] = RA_CPU;
	sc->kind[1] = RA_MEMORY;
}

void sx_ra_write_args(struct sx_jw *w, const struct sx_ra_scorer *sc)
{
	sx_jw_karray(w, "resources");
	for (uint32_t i = 0; i < sc->nresources; i++) {
		sx_jw_object(w);
		sx_jw_kstr(w, "name", sx_str_get(sc->resources[i].name));
		sx_jw_kint(w, "weight", sc->resources[i].weight);
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
	if (sc->strategy != SX_RA_REQUESTED_TO_CAPACITY_RATIO)
		return;
	sx_jw_kobject(w, "requestedToCapacityRatio");
	sx_jw_karray(w, "shape");
	for (uint32_t i = 0; i < sc->nshape; i++) {
		sx_jw_object(w);
		sx_jw_kint(w, "utilization", sc->shape[i].utilization);
		sx_jw_kint(w, "score",
			   sc->shape[i].score / (SX_MAX_NODE_SCORE / SX_MAX_CUSTOM_PRIORITY_SCORE));
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
	sx_jw_end_object(w);
}

static const struct sx_arg resource_fields[] = {
	{.name = "name",
	 .type = SX_ARG_STRING,
	 .offset = offsetof(struct sx_ra_resource_arg, name),
	 .max = 253,
	 .flags = SX_ARG_REQUIRED,
	 .type_err = "must be a string of at most 253 characters"},
	{.name = "weight",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct sx_ra_resource_arg, weight),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .type_err = "must be an integer"},
};

const struct sx_arg sx_ra_resource_elem[1] = {
	{.type = SX_ARG_OBJECT,
	 .type_err = "must be an object",
	 .sub = resource_fields,
	 .nsub = SX_ARRAY_SIZE(resource_fields)},
};

int sx_ra_set_resources(struct sx_ra_scorer *sc, const struct sx_ra_resource_arg *r, uint32_t n,
			const char *path, struct sx_error *err)
{
	if (n == 0) {
		sx_ra_default_resources(sc);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		sc->resources[i].name = sx_intern(r[i].name);
		if (sc->resources[i].name == SX_STR_INVALID) {
			sx_error_set(err, SX_ENOMEM, "cannot intern resource name");
			sx_error_prefixf(err, "%s[%u]", path, i);
			return SX_ENOMEM;
		}
		sc->resources[i].weight = r[i].weight == 0 ? 1 : r[i].weight;
		sc->kind[i] = (uint8_t)resolve_kind(sc->resources[i].name);
	}
	sc->nresources = n;
	return 0;
}
