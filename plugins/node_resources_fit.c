/* NodeResourcesFit (upstream
 * pkg/scheduler/framework/plugins/noderesources/fit.go): does the node have
 * room for the pod's requests, and how full would it be (LeastAllocated,
 * MostAllocated, RequestedToCapacityRatio).
 *
 * The pod's effective request is computed once at decode (pod->request,
 * pod->nonzero_*); PreFilter only narrows the scalar resources to the ones
 * Filter must check (non-zero, scalar, not ignored), PreScore the per-resource
 * request vector of the scoring strategy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/dra.h"
#include "schedext/dra_alloc.h"
#include "schedext/handle.h"
#include "resource_allocation.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"
#include "schedext/plugin_args.h"
#include "schedext/snapshot.h"
#include "slots.h"

#define MAX_IGNORED 256

/* The plugin instance (read-only after init). */
struct fit {
	uint32_t nignored;
	sx_str *ignored; /* ignoredResources (extended resource names) */
	uint32_t ngroups;
	char **groups; /* ignoredResourceGroups (prefixes before '/') */
	struct sx_ra_scorer sc;
	bool dra_extended; /* DRAExtendedResource: DeviceClasses serve extended resources */
	/* The handle's DRA manager (borrowed, may be NULL): the queueing
	 * hints ask it which extended resources a DeviceClass serves. */
	struct sx_dra_claims *dra;
};

/* The cycle state slot (owned by the cycle, freed by state_free). */
struct fit_state {
	bool prefiltered;
	uint32_t nscalar; /* scalar requests Filter checks */
	struct sx_scalar *scalar;
	/* bit i: scalar[i] is an extended resource a DeviceClass serves; a node
	 * without it leaves it to DynamicResources */
	uint64_t dra_backed;
	bool prescored;
	int64_t pod_reqs[SX_RA_MAX_RESOURCES]; /* per scoringStrategy.resources */
	struct sx_ra_dra *dra;		       /* draPreScoreState (a reference), or NULL */
};

/* ---------- args ---------- */

/* NodeResourcesFitArgs as read (plugin_args.h); freed by sx_args_free. */
struct shape_arg {
	int32_t utilization, score;
};

struct fit_args {
	char **ignored; /* ignoredResources */
	uint32_t nignored;
	char **groups; /* ignoredResourceGroups */
	uint32_t ngroups;
	struct strategy_arg {
		int32_t type; /* enum sx_ra_strategy (LeastAllocated when absent) */
		struct sx_ra_resource_arg *res;
		uint32_t nres;
		struct shape_arg *shape; /* requestedToCapacityRatio.shape */
		uint32_t nshape;
		bool rtcr; /* requestedToCapacityRatio given */
	} ss;
	bool has_ss;
};

static void check_ignored(const char *s, const char *path, struct sx_arg_errors *e)
{
	char msg[512];

	if (!sx_qualified_name_ok(s, msg, sizeof(msg)))
		sx_arg_errors_add(e, path, "Invalid value: \"%s\": %s", s, msg);
}

static void check_group(const char *s, const char *path, struct sx_arg_errors *e)
{
	if (strchr(s, '/'))
		sx_arg_errors_add(
			e, path, "Invalid value: \"%s\": resource group name can't contain '/'", s);
	check_ignored(s, path, e);
}

static const struct sx_arg ignored_elem[] = {
	{.type = SX_ARG_STRING,
	 .max = 316,
	 .flags = SX_ARG_REQUIRED,
	 .type_err = "must be a string",
	 .check = check_ignored},
};

static const struct sx_arg group_elem[] = {
	{.type = SX_ARG_STRING,
	 .max = 316,
	 .flags = SX_ARG_REQUIRED,
	 .type_err = "must be a string",
	 .check = check_group},
};

static const struct sx_arg shape_fields[] = {
	{.name = "utilization",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct shape_arg, utilization),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_NULL_IS_VALUE},
	{.name = "score",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct shape_arg, score),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_NULL_IS_VALUE},
};

static const struct sx_arg shape_elem[] = {
	{.type = SX_ARG_OBJECT,
	 .type_err = "must be {utilization: int, score: int}",
	 .sub = shape_fields,
	 .nsub = SX_ARRAY_SIZE(shape_fields)},
};

static const struct sx_arg rtcr_fields[] = {
	{.name = "shape",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct strategy_arg, shape),
	 .max = SX_RA_MAX_SHAPE,
	 .flags = SX_ARG_WHOLE,
	 .type_err = "must be a list",
	 .sub = shape_elem,
	 .nsub = 1,
	 .elem_size = sizeof(struct shape_arg),
	 .count = offsetof(struct strategy_arg, nshape)},
};

static const char *const strategy_types[] = {"LeastAllocated", "MostAllocated",
					     "RequestedToCapacityRatio", NULL};

static const struct sx_arg strategy_fields[] = {
	{.name = "type",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct strategy_arg, type),
	 .def = -1,
	 .max = 64,
	 .type_err = "must be a string",
	 .values = strategy_types},
	SX_RA_RESOURCES_ARG("resources", struct strategy_arg, res, nres),
	/* the shape's fields are read in place: rtcr_fields' offsets are the strategy's */
	{.name = "requestedToCapacityRatio",
	 .type = SX_ARG_OBJECT,
	 .offset = 0,
	 .flags = SX_ARG_PRESENCE,
	 .type_err = "must be an object",
	 .sub = rtcr_fields,
	 .nsub = SX_ARRAY_SIZE(rtcr_fields),
	 .count = offsetof(struct strategy_arg, rtcr)},
};

static const struct sx_arg fit_fields[] = {
	{.name = "ignoredResources",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct fit_args, ignored),
	 .max = MAX_IGNORED,
	 .flags = SX_ARG_TOO_MANY_IS_TYPE,
	 .type_err = "must be a list of at most 256 strings",
	 .sub = ignored_elem,
	 .nsub = 1,
	 .elem_size = sizeof(char *),
	 .count = offsetof(struct fit_args, nignored)},
	{.name = "ignoredResourceGroups",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct fit_args, groups),
	 .max = MAX_IGNORED,
	 .flags = SX_ARG_TOO_MANY_IS_TYPE,
	 .type_err = "must be a list of at most 256 strings",
	 .sub = group_elem,
	 .nsub = 1,
	 .elem_size = sizeof(char *),
	 .count = offsetof(struct fit_args, ngroups)},
	{.name = "scoringStrategy",
	 .type = SX_ARG_OBJECT,
	 .offset = offsetof(struct fit_args, ss),
	 .flags = SX_ARG_PRESENCE,
	 .type_err = "must be an object",
	 .sub = strategy_fields,
	 .nsub = SX_ARRAY_SIZE(strategy_fields),
	 .count = offsetof(struct fit_args, has_ss)},
};

static void destroy_node_resources_fit(void *self)
{
	struct fit *f = self;

	if (!f)
		return;
	for (uint32_t i = 0; i < f->ngroups; i++)
		free(f->groups[i]);
	free(f->groups);
	free(f->ignored);
	sx_ra_dra_destroy(&f->sc);
	free(f);
}

/* Upstream validateFunctionShape; points are stored scaled ×10. */
static void set_shape(struct sx_ra_scorer *sc, const struct strategy_arg *ss,
		      struct sx_arg_errors *el)
{
	const struct shape_arg *p = ss->shape;
	char path[64];
	uint32_t n = ss->nshape;

	if (n == 0) {
		sx_arg_errors_add(el, "scoringStrategy.shape",
				  "Required value: at least one point must be specified");
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		if (p[i - 1].utilization >= p[i].utilization) {
			snprintf(path, sizeof(path), "scoringStrategy.shape[%u].utilization", i);
			sx_arg_errors_add(el, path,
					  "Invalid value: %d: utilization values must be sorted in "
					  "increasing order",
					  p[i].utilization);
			break;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		if (p[i].utilization < 0 || p[i].utilization > 100) {
			snprintf(path, sizeof(path), "scoringStrategy.shape[%u].utilization", i);
			sx_arg_errors_add(el, path,
					  "Invalid value: %d: not in valid range [0, 100]",
					  p[i].utilization);
		}
		if (p[i].score < 0 || p[i].score > SX_MAX_CUSTOM_PRIORITY_SCORE) {
			snprintf(path, sizeof(path), "scoringStrategy.shape[%u].score", i);
			sx_arg_errors_add(el, path, "Invalid value: %d: not in valid range [0, %d]",
					  p[i].score, SX_MAX_CUSTOM_PRIORITY_SCORE);
		}
		sc->shape[i].utilization = p[i].utilization;
		/* The shape's 0..10 scores are scaled to the 0..100 node score range. */
		sc->shape[i].score =
			(int64_t)p[i].score * (SX_MAX_NODE_SCORE / SX_MAX_CUSTOM_PRIORITY_SCORE);
	}
	sc->nshape = n;
}

/* The scoring strategy from what was read, with upstream's validation. */
static int set_strategy(struct sx_ra_scorer *sc, const struct fit_args *a, struct sx_arg_errors *el,
			struct sx_error *err)
{
	char path[64];

	sc->strategy = (enum sx_ra_strategy)a->ss.type;
	if (sx_ra_set_resources(sc, a->ss.res, a->ss.nres, "scoringStrategy.resources", err) < 0)
		return SX_ENOMEM;
	for (uint32_t i = 0; i < sc->nresources; i++) {
		int64_t w = sc->resources[i].weight;

		if (w <= 0 || w > 100) {
			snprintf(path, sizeof(path), "scoringStrategy.resources[%u].weight", i);
			sx_arg_errors_add(el, path,
					  "Invalid value: %lld: resource weight of %s not in valid "
					  "range (0, 100]",
					  (long long)w, sx_str_get(sc->resources[i].name));
		}
	}
	if (a->ss.rtcr)
		set_shape(sc, &a->ss, el);
	/* Upstream would dereference a nil shape here; refuse it clearly. */
	else if (a->has_ss && sc->strategy == SX_RA_REQUESTED_TO_CAPACITY_RATIO)
		sx_arg_errors_add(el, "scoringStrategy.shape",
				  "Required value: at least one point must be specified");
	return 0;
}

/* Moves what was read into f (the ignored names interned, the groups'
 * strings taken over). */
static int set_ignored(struct fit *f, struct fit_args *a, struct sx_error *err)
{
	f->ignored = a->nignored ? calloc(a->nignored, sizeof(*f->ignored)) : NULL;
	if (a->nignored && !f->ignored)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < a->nignored; i++)
		f->ignored[i] = sx_intern(a->ignored[i]);
	f->nignored = a->nignored;
	f->groups = a->groups;
	f->ngroups = a->ngroups;
	a->groups = NULL;
	a->ngroups = 0;
	return 0;
}

static void write_args_node_resources_fit(const void *self, struct sx_jw *w)
{
	static const char *const types[] = {"LeastAllocated", "MostAllocated",
					    "RequestedToCapacityRatio"};
	const struct fit *f = self;

	/* upstream omits empty lists (omitempty) */
	if (f->nignored) {
		sx_jw_karray(w, "ignoredResources");
		for (uint32_t i = 0; i < f->nignored; i++)
			sx_jw_str(w, sx_str_get(f->ignored[i]));
		sx_jw_end_array(w);
	}
	if (f->ngroups) {
		sx_jw_karray(w, "ignoredResourceGroups");
		for (uint32_t i = 0; i < f->ngroups; i++)
			sx_jw_str(w, f->groups[i]);
		sx_jw_end_array(w);
	}
	sx_jw_kobject(w, "scoringStrategy");
	sx_jw_kstr(w, "type", types[f->sc.strategy]);
	sx_ra_write_args(w, &f->sc);
	sx_jw_end_object(w);
}

static void *init_node_resources_fit(const struct cJSON *args, struct sx_handle *h,
				     struct sx_error *err)
{
	struct fit *f = calloc(1, sizeof(*f));
	struct sx_arg_errors el = {0};
	struct fit_args a = {0};

	if (!f) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	if (!sx_args_is_object(args, "NodeResourcesFitArgs", err) ||
	    sx_args_read(args, fit_fields, SX_ARRAY_SIZE(fit_fields), &a, &el, err) < 0 ||
	    set_ignored(f, &a, err) < 0 || set_strategy(&f->sc, &a, &el, err) < 0 ||
	    sx_arg_errors_finish(&el, err) < 0)
		goto out_free;
	sx_args_free(fit_fields, SX_ARRAY_SIZE(fit_fields), &a);
	{
		struct sx_features ft = sx_handle_features(h);

		f->dra_extended = sx_feature_enabled(&ft, SX_FEATURE_DRA_EXTENDED_RESOURCE);
		f->sc.no_sign = f->dra_extended;
		f->dra = h ? h->dra : NULL;
		if (sx_ra_dra_init(&f->sc, h) < 0) {
			sx_error_set(err, SX_ENOMEM, "out of memory");
			goto out_free;
		}
	}
	return f;
out_free:
	sx_args_free(fit_fields, SX_ARRAY_SIZE(fit_fields), &a);
	destroy_node_resources_fit(f);
	return NULL;
}

/* ---------- cycle state ---------- */

static void state_free_node_resources_fit(void *state)
{
	struct fit_state *s = state;

	if (!s)
		return;
	free(s->scalar);
	sx_ra_dra_unref(s->dra);
	free(s);
}

static void *state_clone_node_resources_fit(const void *state)
{
	const struct fit_state *s = state;
	struct fit_state *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *s;
	c->scalar = NULL;
	if (s->nscalar) {
		c->scalar = malloc(s->nscalar * sizeof(*c->scalar));
		if (!c->scalar) {
			free(c);
			return NULL;
		}
		memcpy(c->scalar, s->scalar, s->nscalar * sizeof(*c->scalar));
	}
	sx_ra_dra_ref(c->dra);
	return c;
}

/* The plugin's slot, created on first use (PreFilter or PreScore). */
static struct fit_state *state_get(struct sx_cycle_state *cs)
{
	return sx_cycle_state_slot(cs, SX_SLOT_node_resources_fit, sizeof(struct fit_state));
}

/* ---------- PreFilter / Filter ---------- */

/* Is this extended resource to be skipped by the ignore lists? */
static bool ignored(const struct fit *f, sx_str name)
{
	const char *s, *slash;

	for (uint32_t i = 0; i < f->nignored; i++)
		if (f->ignored[i] == name)
			return true;
	if (f->ngroups == 0)
		return false;
	s = sx_str_get(name);
	slash = strchr(s, '/');
	for (uint32_t i = 0; i < f->ngroups; i++) {
		size_t n = slash ? (size_t)(slash - s) : strlen(s);

		if (strlen(f->groups[i]) == n && strncmp(f->groups[i], s, n) == 0)
			return true;
	}
	return false;
}

static struct sx_status *pre_filter_node_resources_fit(void *self, struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       struct sx_node_set **result)
{
	const struct fit *f = self;
	const struct sx_resources *r = &pod->request;
	struct fit_state *s = state_get(cs);

	SX_UNUSED(result);
	if (!s)
		return sx_status_oom();
	free(s->scalar);
	s->scalar = r->nscalar ? malloc(r->nscalar * sizeof(*s->scalar)) : NULL;
	s->nscalar = 0;
	s->dra_backed = 0;
	if (r->nscalar && !s->scalar)
		return sx_status_oom();
	for (uint32_t i = 0; i < r->nscalar; i++) {
		const char *name = sx_str_get(r->scalar[i].name);

		if (r->scalar[i].value == 0 || !sx_is_scalar_resource_name(name))
			continue;
		if (sx_is_extended_resource_name(name) && ignored(f, r->scalar[i].name))
			continue;
		/* fit.go, fitsRequest: an extended resource backed by DRA
		 * (schedutil.IsDRAExtendedResourceName, a DeviceClass for it)
		 * is DynamicResources' on a node that does not advertise it */
		if (f->dra_extended && s->nscalar < 64 &&
		    (sx_is_extended_resource_name(name) ||
		     strncmp(name, SX_DRA_CLASS_PREFIX, strlen(SX_DRA_CLASS_PREFIX)) == 0) &&
		    sx_dra_class_for_resource(cs->snap, name))
			s->dra_backed |= 1ull << s->nscalar;
		s->scalar[s->nscalar++] = r->scalar[i];
	}
	s->prefiltered = true;
	return NULL;
}

/* The rejections without a scalar resource, shared (no allocation on the
 * nodes Filter rejects): [unresolvable][reason bits], bit 0 "Too many
 * pods", then cpu, memory and ephemeral-storage, in the order check()
 * appends them. */
#define FIT_PODS "Too many pods"
#define FIT_CPU	 "Insufficient cpu"
#define FIT_MEM	 "Insufficient memory"
#define FIT_EPH	 "Insufficient ephemeral-storage"
#define FIT_REJECT(code_, n_, ...)                                                                 \
	{                                                                                          \
		.code = (code_), .plugin = "NodeResourcesFit", .nreasons = (n_),                   \
		.reasons = {__VA_ARGS__}, .shared = true                                           \
	}
#define FIT_ROW(c)                                                                                 \
	{                                                                                          \
		{.code = SX_SUCCESS}, FIT_REJECT(c, 1, FIT_PODS), FIT_REJECT(c, 1, FIT_CPU),       \
			FIT_REJECT(c, 2, FIT_PODS, FIT_CPU), FIT_REJECT(c, 1, FIT_MEM),            \
			FIT_REJECT(c, 2, FIT_PODS, FIT_MEM), FIT_REJECT(c, 2, FIT_CPU, FIT_MEM),   \
			FIT_REJECT(c, 3, FIT_PODS, FIT_CPU, FIT_MEM), FIT_REJECT(c, 1, FIT_EPH),   \
			FIT_REJECT(c, 2, FIT_PODS, FIT_EPH), FIT_REJECT(c, 2, FIT_CPU, FIT_EPH),   \
			FIT_REJECT(c, 3, FIT_PODS, FIT_CPU, FIT_EPH),                              \
			FIT_REJECT(c, 2, FIT_MEM, FIT_EPH),                                        \
			FIT_REJECT(c, 3, FIT_PODS, FIT_MEM, FIT_EPH),                              \
			FIT_REJECT(c, 3, FIT_CPU, FIT_MEM, FIT_EPH),                               \
			FIT_REJECT(c, 4, FIT_PODS, FIT_CPU, FIT_MEM, FIT_EPH)                      \
	}
static struct sx_status fit_rejected[2][16] = {FIT_ROW(SX_UNSCHEDULABLE),
					       FIT_ROW(SX_UNSCHEDULABLE_AND_UNRESOLVABLE)};

/* Does req not fit in alloc - used (computed in 128 bits)? *unresolvable
 * when req alone exceeds alloc (1.34: preemption cannot help). */
static bool insufficient(int64_t req, int64_t alloc, int64_t used, bool *unresolvable)
{
	if (req <= 0 || (__int128)req <= (__int128)alloc - used)
		return false;
	if (req > alloc)
		*unresolvable = true;
	return true;
}

/* Appends "Insufficient <what>" when req does not fit in alloc - used;
 * *unresolvable is set when req alone exceeds alloc (1.34: preemption
 * cannot help). */
static void check(struct sx_status **st, const char *what, int64_t req, int64_t alloc, int64_t used,
		  bool *unresolvable)
{
	if (!insufficient(req, alloc, used, unresolvable))
		return;
	if (!*st)
		*st = sx_status_new(SX_UNSCHEDULABLE, "Insufficient %s", what);
	else
		sx_status_add_reason(*st, "Insufficient %s", what);
}

static struct sx_status *filter_node_resources_fit(void *self, const struct sx_cycle_state *cs,
						   const struct sx_pod *pod,
						   const struct sx_node_info *ni)
{
	const struct fit_state *s = cs->slots[SX_SLOT_node_resources_fit];
	const struct sx_resources *req = &pod->request, *used = &ni->requested, *al;
	struct sx_status *st = NULL;
	bool unresolvable = false;

	SX_UNUSED(self);
	if (!s || !s->prefiltered)
		return sx_status_new(
			SX_ERROR,
			"error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
	if (!ni->node)
		return sx_status_new(SX_ERROR, "node not found");
	al = &ni->node->allocatable;
	if (s->nscalar == 0) { /* the common case: a shared status, no allocation */
		unsigned bits = (int64_t)ni->npods + 1 > al->pods;

		bits |= (unsigned)insufficient(req->milli_cpu, al->milli_cpu, used->milli_cpu,
					       &unresolvable)
			<< 1;
		bits |= (unsigned)insufficient(req->memory, al->memory, used->memory, &unresolvable)
			<< 2;
		bits |= (unsigned)insufficient(req->ephemeral_storage, al->ephemeral_storage,
					       used->ephemeral_storage, &unresolvable)
			<< 3;
		return bits ? &fit_rejected[unresolvable][bits] : NULL;
	}
	if ((int64_t)ni->npods + 1 > al->pods)
		st = sx_status_new(SX_UNSCHEDULABLE, "Too many pods");
	if (req->milli_cpu == 0 && req->memory == 0 && req->ephemeral_storage == 0 &&
	    s->nscalar == 0)
		goto out;
	check(&st, "cpu", req->milli_cpu, al->milli_cpu, used->milli_cpu, &unresolvable);
	check(&st, "memory", req->memory, al->memory, used->memory, &unresolvable);
	check(&st, "ephemeral-storage", req->ephemeral_storage, al->ephemeral_storage,
	      used->ephemeral_storage, &unresolvable);
	for (uint32_t i = 0; i < s->nscalar; i++) {
		sx_str name = s->scalar[i].name;

		if ((s->dra_backed >> (i & 63) & 1) && i < 64 && sx_resources_get(al, name) == 0)
			continue;
		check(&st, sx_str_get(name), s->scalar[i].value, sx_resources_get(al, name),
		      sx_resources_get(used, name), &unresolvable);
	}
out:
	if (st && unresolvable)
		st->code = SX_UNSCHEDULABLE_AND_UNRESOLVABLE;
	return st;
}

/* ---------- PreScore / Score ---------- */

static struct sx_status *pre_score_node_resources_fit(void *self, struct sx_cycle_state *cs,
						      const struct sx_pod *pod,
						      struct sx_node_info *const *nodes, uint32_t n)
{
	const struct fit *f = self;
	struct fit_state *s = state_get(cs);

	SX_UNUSED(nodes);
	SX_UNUSED(n);
	if (!s)
		return sx_status_oom();
	sx_ra_pod_requests(&f->sc, pod, s->pod_reqs);
	sx_ra_dra_unref(s->dra);
	s->dra = NULL;
	if (sx_ra_dra_prescore(&f->sc, cs->snap, &s->dra) < 0)
		return sx_status_oom();
	s->prescored = true;
	return NULL;
}

static struct sx_status *score_node_resources_fit(void *self, const struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  const struct sx_node_info *ni, int64_t *score)
{
	const struct fit *f = self;
	const struct fit_state *s = cs->slots[SX_SLOT_node_resources_fit];
	int64_t local[SX_RA_MAX_RESOURCES];
	const int64_t *reqs = local;

	struct sx_ra_dra *dra = NULL;
	int rc;

	/* Without PreScore (as upstream) the request vector and the DRA
	 * state are computed here. */
	if (s && s->prescored) {
		reqs = s->pod_reqs;
	} else {
		sx_ra_pod_requests(&f->sc, pod, local);
		if (sx_ra_dra_prescore(&f->sc, cs->snap, &dra) < 0)
			return sx_status_oom();
	}
	rc = sx_ra_score(&f->sc, ni, reqs, s && s->prescored ? s->dra : dra, score);
	if (dra)
		sx_ra_dra_unref(dra);
	if (rc < 0)
		return sx_status_new(SX_ERROR, "resources not found");
	return NULL;
}

/* ---------- queueing hints (upstream fit.go EventsToRegister) ---------- */

/* a + b for quantities (never negative), clamped: hostile figures summed
 * over many pods or nodes must not overflow. */
static int64_t add_clamped(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* PlacementScore (1.37, TopologyAwareWorkloadScheduling): upstream
 * noderesources placement_bin_packing.go ScorePlacement, which the 1.37
 * NodeResourcesFit carries (fit.go implements PlacementScorePlugin; the
 * default multiPoint therefore enables it at placementScore, weight 1).
 * The scoring strategy of Fit's args over the placement's nodes taken as
 * one: requested is every proposed member's (non-zero) request plus what
 * the nodes' pods already request, allocatable the nodes' sum. Members
 * proposed on a node the snapshot lacks are skipped, as upstream. No
 * NormalizePlacementScore. */
static struct sx_status *placement_score_node_resources_fit(void *self,
							    const struct sx_pod_group *pg,
							    const struct sx_pg_assignments *a,
							    int64_t *score)
{
	const struct fit *f = self;
	int64_t group[SX_RA_MAX_RESOURCES] = {0}, requested[SX_RA_MAX_RESOURCES];
	int64_t alloc[SX_RA_MAX_RESOURCES] = {0}, one[SX_RA_MAX_RESOURCES];
	int64_t used[SX_RA_MAX_RESOURCES];
	uint32_t n = f->sc.nresources;

	(void)pg;
	for (uint32_t j = 0; j < a->nproposed; j++) {
		if (a->snap && sx_snapshot_find(a->snap, a->nodes[j]) < 0)
			continue;
		sx_ra_pod_requests(&f->sc, a->pods[j], one);
		for (uint32_t i = 0; i < n; i++)
			group[i] = add_clamped(group[i], one[i]);
	}
	memcpy(requested, group, sizeof(group));
	for (uint32_t k = 0; a->snap && a->placement && k < a->placement->nnodes; k++) {
		int idx = sx_snapshot_find(a->snap, a->placement->nodes[k]);

		if (idx < 0 || !a->snap->nodes[idx]->node)
			continue;
		sx_ra_node_usage(&f->sc, a->snap->nodes[idx], group, one, used);
		for (uint32_t i = 0; i < n; i++) {
			alloc[i] = add_clamped(alloc[i], one[i]);
			requested[i] = add_clamped(requested[i], used[i]);
		}
	}
	*score = sx_ra_combine(&f->sc, requested, alloc);
	return NULL;
}

/* shouldDelegateResourceToDRA (fit.go): with DRAExtendedResource, a
 * resource the node does not advertise that a DeviceClass serves is
 * DynamicResources' business. Without a DRA manager that tracks classes
 * (upstream: draManager nil) every such resource is delegated. */
static bool delegated_to_dra(const struct fit *f, sx_str name, const struct sx_node *node)
{
	int backed;

	if (!f->dra_extended || sx_resources_get(&node->allocatable, name) > 0)
		return false;
	backed = sx_dra_resource_backed(f->dra, sx_str_get(name));
	return backed != 0;
}

/* Does the pod's request fit the node's allocatable alone (isFit: Fits on
 * an empty NodeInfo of the node, no resources ignored)? */
static bool fits_empty_node(const struct fit *f, const struct sx_pod *pod,
			    const struct sx_node *node)
{
	const struct sx_resources *req = &pod->request, *al = &node->allocatable;

	if (al->pods < 1)
		return false;
	if (req->milli_cpu > al->milli_cpu || req->memory > al->memory ||
	    req->ephemeral_storage > al->ephemeral_storage)
		return false;
	for (uint32_t i = 0; i < req->nscalar; i++) {
		sx_str name = req->scalar[i].name;

		if (req->scalar[i].value == 0 || !sx_is_scalar_resource_name(sx_str_get(name)))
			continue;
		if (delegated_to_dra(f, name, node))
			continue;
		if (req->scalar[i].value > sx_resources_get(al, name))
			return false;
	}
	return true;
}

/* haveAnyRequestedResourcesIncreased: pods, or a resource the pod asks
 * for, grew; or one the pod asks for is now DynamicResources'. */
static bool requested_increased(const struct fit *f, const struct sx_pod *pod,
				const struct sx_node *o, const struct sx_node *n)
{
	const struct sx_resources *req = &pod->request, *a = &o->allocatable, *b = &n->allocatable;

	if (b->pods > a->pods)
		return true;
	if ((req->milli_cpu > 0 && b->milli_cpu > a->milli_cpu) ||
	    (req->memory > 0 && b->memory > a->memory) ||
	    (req->ephemeral_storage > 0 && b->ephemeral_storage > a->ephemeral_storage))
		return true;
	for (uint32_t i = 0; i < req->nscalar; i++) {
		sx_str name = req->scalar[i].name;

		if (req->scalar[i].value == 0)
			continue;
		if (sx_resources_get(b, name) > sx_resources_get(a, name) ||
		    delegated_to_dra(f, name, n))
			return true;
	}
	return false;
}

/* isSchedulableAfterNodeChange: a node added or grown where the pod fits. */
static enum sx_hint hint_node_node_resources_fit(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_node *o = old_obj, *n = new_obj;

	if (!n || !fits_empty_node(self, pod, n))
		return SX_QUEUE_SKIP;
	if (!o)
		return SX_QUEUE;
	return requested_increased(self, pod, o, n) ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* A resource the target pod requests went down on the other pod. */
static bool scaled_down_for(const struct sx_pod *target, const struct sx_pod *o,
			    const struct sx_pod *n)
{
	const struct sx_resources *t = &target->request, *a = &o->request, *b = &n->request;

	if ((t->milli_cpu > 0 && b->milli_cpu < a->milli_cpu) ||
	    (t->memory > 0 && b->memory < a->memory) ||
	    (t->ephemeral_storage > 0 && b->ephemeral_storage < a->ephemeral_storage))
		return true;
	for (uint32_t i = 0; i < t->nscalar; i++) {
		sx_str name = t->scalar[i].name;

		if (t->scalar[i].value > 0 && sx_resources_get(b, name) < sx_resources_get(a, name))
			return true;
	}
	return false;
}

/* isSchedulableAfterPodEvent: a scheduled (or nominated) pod deleted, or a
 * pod's requests scaled down (the target itself, or one on a node). */
static enum sx_hint hint_pod_node_resources_fit(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	const struct sx_pod *o = old_obj, *n = new_obj;

	SX_UNUSED(self);
	if (!n)
		return (o->node_name == SX_STR_EMPTY && o->nominated_node == SX_STR_EMPTY)
			       ? SX_QUEUE_SKIP
			       : SX_QUEUE;
	if (!o)
		return SX_QUEUE_SKIP;
	if (n->meta.uid && pod->meta.uid && strcmp(n->meta.uid, pod->meta.uid) == 0)
		return SX_QUEUE; /* the pod itself asks for less now */
	if (n->node_name == SX_STR_EMPTY)
		return SX_QUEUE_SKIP;
	return scaled_down_for(pod, o, n) ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* InPlacePodVerticalScaling is beta (on) in 1.34: UpdatePodScaleDown too;
 * with queueing hints only Add and UpdateNodeAllocatable for nodes. */
/* Does the pod request resource `name` (resource.PodRequests has it,
 * whatever the amount)? */
static bool pod_requests(const struct sx_pod *pod, const char *name)
{
	const struct sx_resources *r = &pod->request;

	for (uint32_t i = 0; i < r->nscalar; i++)
		if (strcmp(sx_str_get(r->scalar[i].name), name) == 0)
			return true;
	return false;
}

/* isSchedulableAfterDeviceClassEvent (fit.go): a class added under the
 * implicit name the pod asks for (deviceclass.resource.kubernetes.io/
 * <class>), or added or changed to serve, by extendedResourceName, one
 * the pod asks for. An update keeping extendedResourceName changes
 * nothing here. Registered only with DRAExtendedResource upstream; with
 * the gate off the hint skips, the same for the queue. */
static enum sx_hint hint_class_node_resources_fit(void *self, const struct sx_pod *pod,
						  const void *old_obj, const void *new_obj)
{
	const struct fit *f = self;
	const struct sx_object *o = old_obj, *n = new_obj;
	const struct sx_dra_object *oc = o ? o->obj : NULL, *nc = n ? n->obj : NULL;
	const char *ern = nc ? nc->u.cls.extended_resource_name : NULL;
	char implicit[512];

	if (!f || !f->dra_extended || !nc)
		return SX_QUEUE_SKIP;
	if (oc) {
		const char *old_ern = oc->u.cls.extended_resource_name;

		if (strcmp(old_ern ? old_ern : "", ern ? ern : "") == 0)
			return SX_QUEUE_SKIP;
	} else {
		snprintf(implicit, sizeof(implicit), "%s%s", SX_DRA_CLASS_PREFIX,
			 nc->meta.name ? nc->meta.name : "");
		if (pod_requests(pod, implicit))
			return SX_QUEUE;
	}
	return ern && pod_requests(pod, ern) ? SX_QUEUE : SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_node_resources_fit[] = {
	{SX_RES_POD, SX_ACT_DELETE | SX_ACT_UPDATE_POD_SCALE_DOWN, hint_pod_node_resources_fit},
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_ALLOCATABLE, hint_node_node_resources_fit},
	{SX_RES_DEVICE_CLASS, SX_ACT_ADD | SX_ACT_UPDATE, hint_class_node_resources_fit},
	SX_EVENTS_END,
};

/* Fit.SignPod (noderesources/fit.go): the requests and overheads;
 * not signable while DRAExtendedResource is on, as upstream. */
static struct sx_status *sign_node_resources_fit(void *self, const struct sx_pod *pod,
						 uint32_t *signers)
{
	const struct fit *f = self;

	(void)pod;
	if (f->sc.no_sign)
		return sx_status_new(SX_UNSCHEDULABLE,
				     "signature disabled when dra extended resources enabled");
	*signers |= SX_SIGNER_RESOURCES;
	return NULL;
}

const struct sx_plugin sx_plugin_node_resources_fit = {
	.name = "NodeResourcesFit",
	.init = init_node_resources_fit,
	.destroy = destroy_node_resources_fit,
	.args_kind = "NodeResourcesFitArgs",
	.write_args = write_args_node_resources_fit,
	.state_clone = state_clone_node_resources_fit,
	.state_free = state_free_node_resources_fit,
	.pre_filter = pre_filter_node_resources_fit,
	.filter = filter_node_resources_fit,
	.pre_score = pre_score_node_resources_fit,
	.score = score_node_resources_fit,
	.placement_score = placement_score_node_resources_fit,
	.events = events_node_resources_fit,
	.sign = sign_node_resources_fit,
};
