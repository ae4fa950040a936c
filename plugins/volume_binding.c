/* VolumeBinding — PreFilter, Filter, PreScore, Score, Reserve, PreBind
 * (+Unreserve) (upstream
 * volumebinding/volume_binding.go). PreFilter sorts the pod's claims into
 * bound and unbound delayed-binding ones (rejecting missing, lost,
 * deleting and unbound immediate claims); Filter runs FindPodVolumes for
 * the node; Reserve assumes the chosen bindings; PreBind makes them
 * through the API server and waits for the PV controller. Scoring needs
 * the StorageCapacityScoring gate (Alpha, off, to 1.36; Beta, on, in
 * 1.37): without it PreScore says Skip; with it Score maps each storage
 * class's utilisation on the node through the args' shape (default
 * 0% -> 10, 100% -> 0: the most free capacity wins; scorer.go).
 * The binder itself is in volume_binder.c and volume_prebind.c. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "handle_waiter.h"
#include "schedext/plugin_args.h"
#include "slots.h"
#include "resource_allocation.h"
#include "volume_binder.h"

#define DEFAULT_BIND_TIMEOUT_S 600

extern const struct sx_plugin sx_plugin_volume_binding;

#define NREASONS 4

struct vb_plugin {
	int64_t timeout_s;	  /* bindTimeoutSeconds */
	struct vb_assume *assume; /* the profile's assume cache */
	struct sx_handle *handle; /* the profile's (may be NULL) */
	struct sx_waiter *waiter; /* PreBind's wait on the handle's cache */
	/* Filter's rejections, one shared status per set of reasons (index:
	 * enum vb_reason bits), so rejecting thousands of nodes allocates
	 * nothing. */
	struct sx_status *rejected[1u << NREASONS];
	struct sx_status *skip; /* shared Skip for pods without claims */
	/* StorageCapacityScoring: the scorer's shape (scores ×10, as
	 * helper.FunctionShape), nshape 0 when the gate is off. */
	uint32_t nshape;
	struct sx_shape_point shape[SX_RA_MAX_SHAPE];
};

/* VolumeBindingArgs as read (plugin_args.h). */
struct vb_args {
	int64_t timeout_s;
	bool shape; /* given: only valid with StorageCapacityScoring */
};

static const struct sx_arg vb_fields[] = {
	{.name = "bindTimeoutSeconds",
	 .type = SX_ARG_INT64,
	 .offset = offsetof(struct vb_args, timeout_s),
	 .def = DEFAULT_BIND_TIMEOUT_S,
	 .min = INT64_MIN,
	 .max = INT64_MAX,
	 .type_desc = "an integer"},
	{.name = "shape", .type = SX_ARG_GIVEN, .offset = offsetof(struct vb_args, shape)},
};

/* With StorageCapacityScoring: shape is a list of {utilization, score}. */
struct vb_shape_arg {
	int32_t utilization, score;
};

struct vb_scoring_args {
	int64_t timeout_s;
	struct vb_shape_arg *shape;
	uint32_t nshape;
};

static const struct sx_arg vb_shape_fields[] = {
	{.name = "utilization",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct vb_shape_arg, utilization),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_NULL_IS_VALUE},
	{.name = "score",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct vb_shape_arg, score),
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_NULL_IS_VALUE},
};

static const struct sx_arg vb_shape_elem[] = {
	{.type = SX_ARG_OBJECT,
	 .type_err = "must be {utilization: int, score: int}",
	 .sub = vb_shape_fields,
	 .nsub = SX_ARRAY_SIZE(vb_shape_fields)},
};

static const struct sx_arg vb_scoring_fields[] = {
	{.name = "bindTimeoutSeconds",
	 .type = SX_ARG_INT64,
	 .offset = offsetof(struct vb_scoring_args, timeout_s),
	 .def = DEFAULT_BIND_TIMEOUT_S,
	 .min = INT64_MIN,
	 .max = INT64_MAX,
	 .type_desc = "an integer"},
	{.name = "shape",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct vb_scoring_args, shape),
	 .max = SX_RA_MAX_SHAPE,
	 .flags = SX_ARG_WHOLE,
	 .type_err = "must be a list",
	 .sub = vb_shape_elem,
	 .nsub = 1,
	 .elem_size = sizeof(struct vb_shape_arg),
	 .count = offsetof(struct vb_scoring_args, nshape)},
};

/* VolumeBindingArgs with StorageCapacityScoring on: the v1 default shape
 * when none is given (SetDefaults_VolumeBindingArgs: {0, 10}, {100, 0}),
 * then ValidateVolumeBindingArgsWithOptions: the timeout, and the shape as
 * validateFunctionShape checks it. */
static int parse_scoring_args(const struct cJSON *args, struct vb_plugin *p, struct sx_error *err)
{
	struct sx_arg_errors e = {0};
	struct vb_scoring_args a = {0};
	char path[64];
	int rc = 0;

	if (!sx_args_is_object(args, "VolumeBindingArgs", err) ||
	    sx_args_read(args, vb_scoring_fields, SX_ARRAY_SIZE(vb_scoring_fields), &a, &e, err) <
		    0) {
		sx_args_free(vb_scoring_fields, SX_ARRAY_SIZE(vb_scoring_fields), &a);
		return SX_EINVAL;
	}
	p->timeout_s = a.timeout_s;
	if (a.timeout_s < 0)
		sx_arg_errors_add(
			&e, "bindTimeoutSeconds",
			"Invalid value: %lld: invalid BindTimeoutSeconds, should not be a "
			"negative value",
			(long long)a.timeout_s);
	if (a.nshape == 0) {
		p->nshape = 2;
		p->shape[0] = (struct sx_shape_point){0, SX_MAX_NODE_SCORE};
		p->shape[1] = (struct sx_shape_point){100, 0};
	}
	for (uint32_t i = 1; i < a.nshape; i++) {
		if (a.shape[i - 1].utilization >= a.shape[i].utilization) {
			snprintf(path, sizeof(path), "shape[%u].utilization", i);
			sx_arg_errors_add(&e, path,
					  "Invalid value: %d: utilization values must be sorted in "
					  "increasing order",
					  a.shape[i].utilization);
			break;
		}
	}
	for (uint32_t i = 0; i < a.nshape; i++) {
		if (a.shape[i].utilization < 0 || a.shape[i].utilization > 100) {
			snprintf(path, sizeof(path), "shape[%u].utilization", i);
			sx_arg_errors_add(&e, path,
					  "Invalid value: %d: not in valid range [0, 100]",
					  a.shape[i].utilization);
		}
		if (a.shape[i].score < 0 || a.shape[i].score > SX_MAX_CUSTOM_PRIORITY_SCORE) {
			snprintf(path, sizeof(path), "shape[%u].score", i);
			sx_arg_errors_add(&e, path, "Invalid value: %d: not in valid range [0, %d]",
					  a.shape[i].score, SX_MAX_CUSTOM_PRIORITY_SCORE);
		}
		p->shape[i].utilization = a.shape[i].utilization;
		p->shape[i].score = (int64_t)a.shape[i].score *
				    (SX_MAX_NODE_SCORE / SX_MAX_CUSTOM_PRIORITY_SCORE);
	}
	if (a.nshape)
		p->nshape = a.nshape;
	if (sx_arg_errors_finish(&e, err) < 0)
		rc = SX_EINVAL;
	sx_args_free(vb_scoring_fields, SX_ARRAY_SIZE(vb_scoring_fields), &a);
	return rc;
}

/* VolumeBindingArgs, validated as ValidateVolumeBindingArgsWithOptions
 * with StorageCapacityScoring off. */
static int parse_args(const struct cJSON *args, struct vb_plugin *p, struct sx_error *err)
{
	struct sx_arg_errors e = {0};
	struct vb_args a = {0};

	if (!sx_args_is_object(args, "VolumeBindingArgs", err) ||
	    sx_args_read(args, vb_fields, SX_ARRAY_SIZE(vb_fields), &a, &e, err) < 0)
		return SX_EINVAL;
	p->timeout_s = a.timeout_s;
	if (a.timeout_s < 0)
		return sx_error_set(err, SX_EINVAL,
				    "bindTimeoutSeconds: Invalid value: %lld: invalid "
				    "BindTimeoutSeconds, should not be a negative value",
				    (long long)a.timeout_s);
	if (a.shape)
		return sx_error_set(err, SX_EINVAL,
				    "shape: Invalid value: unexpected field `shape`, remove it or "
				    "turn on the feature gate StorageCapacityScoring");
	return 0;
}

static const char *const reason_text[] = {
	"node(s) didn't match PersistentVolume's node affinity",
	"node(s) didn't find available persistent volumes to bind",
	"node(s) did not have enough free storage",
	"node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
};

/* UnschedulableAndUnresolvable with the reasons of the set bits, in
 * FindPodVolumes' order. */
static struct sx_status *reasons_status(unsigned reasons)
{
	struct sx_status *st = sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NULL);

	for (unsigned i = 0; i < NREASONS; i++)
		if (reasons & (1u << i))
			sx_status_add_reason(st, "%s", reason_text[i]);
	return st;
}

static void destroy_volume_binding(void *self)
{
	struct vb_plugin *p = self;

	if (!p)
		return;
	for (unsigned r = 1; r < SX_ARRAY_SIZE(p->rejected); r++)
		sx_status_unshare(p->rejected[r]);
	sx_status_unshare(p->skip);
	vb_assume_free(p->assume);
	sx_waiter_free(p->waiter);
	free(p);
}

static void write_args_volume_binding(const void *self, struct sx_jw *w)
{
	const struct vb_plugin *p = self;

	sx_jw_kint(w, "bindTimeoutSeconds", p->timeout_s);
	if (p->nshape == 0)
		return;
	sx_jw_karray(w, "shape");
	for (uint32_t i = 0; i < p->nshape; i++) {
		sx_jw_object(w);
		sx_jw_kint(w, "utilization", p->shape[i].utilization);
		sx_jw_kint(w, "score",
			   p->shape[i].score / (SX_MAX_NODE_SCORE / SX_MAX_CUSTOM_PRIORITY_SCORE));
		sx_jw_end_object(w);
	}
	sx_jw_end_array(w);
}

/* The shared statuses; false when one could not be made whole. */
static bool make_statuses(struct vb_plugin *p)
{
	const char *name = sx_plugin_volume_binding.name;
	bool ok;

	p->skip = sx_status_share(sx_status_new(SX_SKIP, NULL), name);
	ok = p->skip != sx_status_oom();
	for (unsigned r = 1; r < SX_ARRAY_SIZE(p->rejected); r++) {
		p->rejected[r] = sx_status_share(reasons_status(r), name);
		ok = ok && p->rejected[r] != sx_status_oom() &&
		     p->rejected[r]->nreasons == (unsigned)__builtin_popcount(r);
	}
	return ok;
}

/* Is StorageCapacityScoring on for the profile (the release's default
 * without a handle)? */
static bool scoring_gate(const struct sx_handle *h)
{
	struct sx_features f = sx_handle_features(h);

	return sx_feature_enabled(&f, SX_FEATURE_STORAGE_CAPACITY_SCORING);
}

static void *init_volume_binding(const struct cJSON *args, struct sx_handle *h,
				 struct sx_error *err)
{
	struct vb_plugin *p = sx_calloc(1, sizeof(*p));

	if (!p || !(p->assume = vb_assume_new()) ||
	    !(p->waiter = sx_waiter_new(h, 1ull << SX_KIND_PV | 1ull << SX_KIND_PVC))) {
		if (p)
			vb_assume_free(p->assume);
		free(p);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	p->handle = h;
	if ((scoring_gate(h) ? parse_scoring_args(args, p, err) : parse_args(args, p, err)) < 0) {
		destroy_volume_binding(p);
		return NULL;
	}
	if (!make_statuses(p)) {
		destroy_volume_binding(p);
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	return p;
}

/* ---------- the cycle state (shared by clones, as upstream's Clone) ---------- */

static void *state_clone_volume_binding(const void *state)
{
	struct vb_state *st = (struct vb_state *)state;

	atomic_fetch_add(&st->refcount, 1);
	return st;
}

static void state_free_volume_binding(void *state)
{
	struct vb_state *st = state;

	if (atomic_fetch_sub(&st->refcount, 1) != 1)
		return;
	vb_state_clear(st);
	free(st);
}

static struct vb_state *get_state(const struct sx_cycle_state *cs)
{
	return cs->slots[SX_SLOT_volume_binding];
}

/* ---------- PreFilter / Filter ---------- */

static struct sx_status *pre_filter_volume_binding(void *self, struct sx_cycle_state *cs,
						   const struct sx_pod *pod,
						   struct sx_node_set **result)
{
	struct vb_plugin *p = self;
	struct vb_state *st;
	struct sx_status *bad;
	uint32_t i = 0;

	while (i < pod->nvolumes && pod->volumes[i].source != SX_VSRC_PVC &&
	       pod->volumes[i].source != SX_VSRC_EPHEMERAL)
		i++;
	if (i == pod->nvolumes)
		return p->skip; /* no claim: nothing to do in any later point */
	st = sx_cycle_state_slot(cs, SX_SLOT_volume_binding, sizeof(*st));
	if (!st)
		return sx_status_new(SX_ERROR, "out of memory");
	if (atomic_load(&st->refcount) == 0)
		atomic_store(&st->refcount, 1); /* new slot */
	vb_state_clear(st);
	bad = vb_pod_claims(p->assume, cs->snap, pod, st);
	if (bad)
		return bad;
	return st->skip ? sx_status_new(SX_SKIP, NULL) : NULL;
}

static struct sx_status *filter_volume_binding(void *self, const struct sx_cycle_state *cs,
					       const struct sx_pod *pod,
					       const struct sx_node_info *ni)
{
	const struct vb_plugin *p = self;
	const struct vb_state *st = get_state(cs);
	struct sx_error err; /* set by vb_find when it fails: no 772-byte clear per node */
	unsigned reasons;

	if (!st || st->skip)
		return NULL;
	if (st->nunbound == 0) { /* bound claims only: no matching, no error */
		reasons = vb_check_bound(st, ni->node);
		return reasons ? p->rejected[reasons] : NULL;
	}
	err.msg[0] = '\0';
	if (vb_find(st, cs->snap, ni->node, &reasons, NULL, &err) < 0)
		return sx_status_new(SX_ERROR, "%s", err.msg);
	return reasons ? p->rejected[reasons] : NULL;
}

/* Which bound claim's PersistentVolume the node fails, and the first
 * requirement of its node affinity the node fails, term by term
 * (checkBoundClaims in upstream volumebinding/binder.go). Unbound claims
 * (FindMatchingVolume's search) get no detail. */
static void explain_volume_binding(void *self, const struct sx_cycle_state *cs,
				   const struct sx_pod *pod, const struct sx_node_info *ni,
				   const struct sx_status *st, struct sx_detail *d)
{
	const struct vb_state *vs = get_state(cs);
	char req[400];
	sx_str v;

	if (!ni) { /* the PreFilter rejection */
		if (st->nreasons &&
		    strcmp(st->reasons[0], "pod has unbound immediate PersistentVolumeClaims") == 0)
			vb_explain_immediate(cs->snap, pod, d);
		return;
	}
	if (!vs || vs->skip || !ni->node || st->nreasons == 0 ||
	    strcmp(st->reasons[0], reason_text[0]) != 0)
		return;
	for (uint32_t i = 0; i < vs->nbound; i++) {
		const struct vb_claim *c = &vs->bound[i];
		const struct sx_node_selector *sel = c->pv ? c->pv->node_affinity : NULL;
		if (!c->pv || vb_bound_claim_fits(c, ni->node))
			continue;
		sx_detail_str(d, "persistentVolume", c->pv->meta.name);
		sx_detail_str(d, "claim", c->pvc ? c->pvc->meta.name : NULL);
		for (uint32_t t = 0; sel && t < sel->nterms && t < 4; t++)
			for (uint32_t e = 0; e < sel->terms[t].nexprs; e++) {
				const struct sx_requirement *r = &sel->terms[t].exprs[e];
				if (sx_node_requirement_matches(r, ni->node))
					continue;
				sx_requirement_string(r, req, sizeof(req));
				if (sx_node_label(ni->node, r->key, &v))
					sx_detail_text(d, "PersistentVolume %s: %s, node has %s=%s",
						       c->pv->meta.name, req, sx_str_get(r->key),
						       sx_str_get(v));
				else
					sx_detail_text(
						d, "PersistentVolume %s: %s, node has no %s label",
						c->pv->meta.name, req, sx_str_get(r->key));
				break;
			}
		if (!d->text[0])
			sx_detail_text(d, "PersistentVolume %s's node affinity", c->pv->meta.name);
		return;
	}
}

/* ---------- PreScore / Score (StorageCapacityScoring) ---------- */

/* Without the gate, Skip. With it, upstream's PreScore passes even for a
 * pod without claims (hasStaticBindings || EnableStorageCapacityScoring),
 * whose Score is then 0 on every node. A cycle that ran no PreFilter (the
 * extender's prioritize) gets the pod's claims here, as PreFilter reads
 * them; claims PreFilter would reject score 0. */
static struct sx_status *pre_score_volume_binding(void *self, struct sx_cycle_state *cs,
						  const struct sx_pod *pod,
						  struct sx_node_info *const *nodes, uint32_t n)
{
	const struct vb_plugin *p = self;
	struct sx_status *st;

	if (!p->nshape)
		return sx_status_new(SX_SKIP, NULL);
	if (cs->slots[SX_SLOT_volume_binding])
		return NULL;
	st = pre_filter_volume_binding(self, cs, pod, NULL);
	if (st && st->code != SX_SKIP && cs->slots[SX_SLOT_volume_binding]) {
		struct vb_state *vs = cs->slots[SX_SLOT_volume_binding];

		vb_state_clear(vs);
		vs->skip = true;
	}
	if (st && st->code == SX_ERROR && st == sx_status_oom())
		return st;
	sx_status_free(st);
	return NULL;
}

/* One storage class's requested and capacity on the node (StorageResource). */
struct class_res {
	sx_str class;
	int64_t requested, capacity;
};

static struct class_res *class_of(struct class_res *cr, uint32_t *n, sx_str class)
{
	for (uint32_t i = 0; i < *n; i++)
		if (cr[i].class == class)
			return &cr[i];
	cr[*n] = (struct class_res){class, 0, 0};
	return &cr[(*n)++];
}

/* The CSIStorageCapacity checkVolumeProvisions chose for the claim on node
 * (hasEnoughCapacity: the first with enough room whose topology the node
 * matches); NULL when the driver tracks no capacity. */
static const struct sx_csi_capacity *
chosen_capacity(const struct vb_state *st, const struct sx_pvc *pvc, const struct sx_node *node)
{
	for (uint32_t i = 0; i < st->nunbound; i++) {
		const struct vb_claim *c = &st->unbound[i];

		if (c->pvc != pvc || !c->capacity)
			continue;
		for (uint32_t k = 0; k < c->ncaps; k++) {
			const struct sx_csi_capacity *cap = c->caps[k];
			bool has_limit = cap->has_max_size || cap->has_capacity;
			int64_t limit =
				cap->has_max_size ? cap->maximum_volume_size : cap->capacity;

			if (has_limit && limit >= pvc->request_storage && cap->node_topology &&
			    sx_selector_matches(cap->node_topology, &node->meta.labels))
				return cap;
		}
	}
	return NULL;
}

/* buildScorerFunction: each class's utilisation requested * 100 /
 * capacity (100 when capacity is 0 or exceeded) through the shape, the
 * classes' mean rounded half away from zero. */
static int64_t score_classes(const struct vb_plugin *p, const struct class_res *cr, uint32_t n)
{
	int64_t sum = 0;

	if (n == 0)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		int64_t u = 100;

		if (cr[i].capacity != 0 && cr[i].requested <= cr[i].capacity)
			u = (int64_t)((__int128)cr[i].requested * 100 / cr[i].capacity);
		sum += sx_broken_linear(p->shape, p->nshape, u);
	}
	return (int64_t)llround((double)sum / (double)n);
}

/* Can FindPodVolumes give this pod anything to score: a claim with PVs
 * to bind (a static binding), or one whose driver tracks capacity (a
 * provision with a chosen CSIStorageCapacity)? Otherwise every node
 * scores 0 and FindPodVolumes need not run again per node. */
static bool scorable(const struct vb_state *st)
{
	for (uint32_t i = 0; i < st->nunbound; i++)
		if (st->unbound[i].ncand || st->unbound[i].capacity)
			return true;
	return false;
}

/* Score (volume_binding.go): the node's PodVolumes grouped by class:
 * static bindings (the PV's class; the claim's request against the PV's
 * capacity) when there are any, else the dynamic provisions (the claim's
 * class; the requests summed against the chosen CSIStorageCapacity's
 * capacity, provisions without one left out). A node Filter rejected has
 * no PodVolumes: 0. */
static struct sx_status *score_volume_binding(void *self, const struct sx_cycle_state *cs,
					      const struct sx_pod *pod,
					      const struct sx_node_info *ni, int64_t *score)
{
	const struct vb_plugin *p = self;
	const struct vb_state *st = get_state(cs);
	struct class_res buf[8], *cr = buf;
	struct vb_volumes vols;
	struct sx_error err;
	unsigned reasons = 0;
	uint32_t n = 0;

	*score = 0;
	/* Bound claims only: FindPodVolumes makes no bindings and no
	 * provisions, so no class is scored (and nothing is allocated). */
	if (!p->nshape || !st || st->skip || st->nunbound == 0 || !ni->node || !scorable(st))
		return NULL;
	err.msg[0] = '\0';
	if (vb_find(st, cs->snap, ni->node, &reasons, &vols, &err) < 0)
		return sx_status_new(SX_ERROR, "%s", err.msg);
	if (reasons) {
		vb_volumes_clear(&vols);
		return NULL;
	}
	if (vols.nstatic + vols.ndynamic > SX_ARRAY_SIZE(buf) &&
	    !(cr = malloc((vols.nstatic + vols.ndynamic) * sizeof(*cr)))) {
		vb_volumes_clear(&vols);
		return sx_status_oom();
	}
	if (vols.nstatic) {
		for (uint32_t i = 0; i < vols.nstatic; i++) {
			struct class_res *c = class_of(cr, &n, vols.statics[i].pv->storage_class);

			c->requested += vols.statics[i].pvc->request_storage;
			c->capacity += vols.statics[i].pv->capacity_storage;
		}
	} else {
		for (uint32_t i = 0; i < vols.ndynamic; i++) {
			const struct sx_pvc *pvc = vols.dynamic[i];
			const struct sx_csi_capacity *cap = chosen_capacity(st, pvc, ni->node);
			struct class_res *c;

			if (!cap)
				continue;
			c = class_of(cr, &n, pvc->storage_class);
			c->capacity = cap->has_capacity ? cap->capacity : 0;
			c->requested += pvc->request_storage;
		}
	}
	*score = score_classes(p, cr, n);
	if (cr != buf)
		free(cr);
	vb_volumes_clear(&vols);
	return NULL;
}

/* ---------- Reserve / Unreserve / PreBind ---------- */

static struct sx_status *reserve_volume_binding(void *self, struct sx_cycle_state *cs,
						const struct sx_pod *pod, sx_str node)
{
	struct vb_plugin *p = self;
	struct vb_state *st = cs->slots[SX_SLOT_volume_binding];
	struct sx_error err = {0};
	unsigned reasons = 0;
	int at;

	if (!st || st->skip) {
		if (st)
			st->all_bound = true;
		return NULL;
	}
	at = sx_snapshot_find(cs->snap, node);
	vb_volumes_clear(&st->vols);
	st->reserved = false;
	st->all_bound = true; /* no volumes for the node: nothing to bind */
	if (at < 0 ||
	    vb_find(st, cs->snap, cs->snap->nodes[at]->node, &reasons, &st->vols, &err) < 0 ||
	    reasons) {
		vb_volumes_clear(&st->vols);
		return err.msg[0] ? sx_status_new(SX_ERROR, "%s", err.msg) : NULL;
	}
	if (vb_assume_volumes(p->assume, cs->snap, pod, node, &st->vols, &st->all_bound, &err) < 0)
		return sx_status_new(SX_ERROR, "%s", err.msg);
	st->reserved = true;
	st->node = node;
	return NULL;
}

static void unreserve_volume_binding(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, sx_str node)
{
	struct vb_plugin *p = self;
	struct vb_state *st = cs->slots[SX_SLOT_volume_binding];

	if (!st || !st->reserved || st->node != node)
		return;
	vb_revert(p->assume, &st->vols);
	if (!st->all_bound)
		sx_log(2, "pod %s/%s: assumed volume bindings reverted", sx_str_get(pod->meta.ns),
		       pod->meta.name);
}

/* upstream VolumeBinding.PreBindPreFlight: Skip when every claim is
 * bound (or the pod has none), an Error when Reserve made no plan for
 * this node, else Success; its PreBind may run beside the others
 * (AllowParallel, 1.36). */
static struct sx_status *pre_bind_pre_flight_volume_binding(void *self, struct sx_cycle_state *cs,
							    const struct sx_pod *pod, sx_str node,
							    bool *allow_parallel)
{
	const struct vb_state *st = cs->slots[SX_SLOT_volume_binding];

	if (!st || st->skip || st->all_bound)
		return sx_status_new(SX_SKIP, NULL);
	if (!st->reserved || st->node != node)
		return sx_status_new(SX_ERROR, "no pod volumes found for node \"%s\"",
				     sx_str_get(node));
	*allow_parallel = true;
	return NULL;
}

static struct sx_status *pre_bind_volume_binding(void *self, struct sx_cycle_state *cs,
						 const struct sx_pod *pod, sx_str node)
{
	const struct vb_plugin *p = self;
	struct vb_state *st = cs->slots[SX_SLOT_volume_binding];
	struct sx_status *res;

	if (!st || st->skip || st->all_bound)
		return NULL;
	if (!st->reserved || st->node != node)
		return sx_status_new(SX_ERROR, "no pod volumes found for node \"%s\"",
				     sx_str_get(node));
	sx_log(2, "binding volumes of pod %s/%s", sx_str_get(pod->meta.ns), pod->meta.name);
	res = vb_bind(p->handle, p->waiter, &cs->pre_bind_cancelled, pod, node, &st->vols,
		      p->timeout_s);
	if (res)
		sx_log(2, "binding volumes of pod %s/%s failed", sx_str_get(pod->meta.ns),
		       pod->meta.name);
	return res;
}

/* ---------- cluster events (EventsToRegister, 1.34 with queueing hints) ---------- */

static bool requirements_equal(const struct sx_requirement *a, const struct sx_requirement *b,
			       uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].nvalues != b[i].nvalues)
			return false;
		for (uint32_t v = 0; v < a[i].nvalues; v++)
			if (a[i].values[v] != b[i].values[v])
				return false;
	}
	return true;
}

static bool topologies_equal(const struct sx_node_selector *a, const struct sx_node_selector *b)
{
	if (!a || !b)
		return a == b;
	if (a->nterms != b->nterms)
		return false;
	for (uint32_t t = 0; t < a->nterms; t++)
		if (a->terms[t].nexprs != b->terms[t].nexprs ||
		    !requirements_equal(a->terms[t].exprs, b->terms[t].exprs, a->terms[t].nexprs))
			return false;
	return true;
}

static const void *event_obj(const void *o)
{
	return o ? ((const struct sx_object *)o)->obj : NULL;
}

/* isSchedulableAfterStorageClassChange: a new class, or allowedTopologies
 * changed (the binding mode is immutable). */
static enum sx_hint hint_storage_class_volume_binding(void *self, const struct sx_pod *pod,
						      const void *old_obj, const void *new_obj)
{
	const struct sx_storage_class *o = event_obj(old_obj), *n = event_obj(new_obj);

	if (!o || !n)
		return SX_QUEUE;
	return topologies_equal(o->allowed_topologies, n->allowed_topologies) ? SX_QUEUE_SKIP
									      : SX_QUEUE;
}

/* isSchedulableAfterPersistentVolumeClaimChange: a claim of the pod. */
static enum sx_hint hint_pvc_volume_binding(void *self, const struct sx_pod *pod,
					    const void *old_obj, const void *new_obj)
{
	const struct sx_pvc *n = event_obj(new_obj);

	if (!n || n->meta.ns != pod->meta.ns)
		return n ? SX_QUEUE_SKIP : SX_QUEUE;
	for (uint32_t i = 0; i < pod->nvolumes; i++)
		if ((pod->volumes[i].source == SX_VSRC_PVC ||
		     pod->volumes[i].source == SX_VSRC_EPHEMERAL) &&
		    strcmp(sx_str_get(pod->volumes[i].claim), n->meta.name) == 0)
			return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* isSchedulableAfterCSINodeChange: a new CSINode, or its migrated plugins
 * changed. */
static enum sx_hint hint_csi_node_volume_binding(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_csi_node *o = event_obj(old_obj), *n = event_obj(new_obj);

	if (!o || !n)
		return SX_QUEUE;
	if (o->nmigrated != n->nmigrated)
		return SX_QUEUE;
	for (uint32_t i = 0; i < o->nmigrated; i++)
		if (o->migrated[i] != n->migrated[i])
			return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* isSchedulableAfterCSIDriverChange: storage capacity turned off for a
 * driver of the pod's inline CSI volumes. */
static enum sx_hint hint_csi_driver_volume_binding(void *self, const struct sx_pod *pod,
						   const void *old_obj, const void *new_obj)
{
	const struct sx_csi_driver *o = event_obj(old_obj), *n = event_obj(new_obj);

	if (!o || !n)
		return SX_QUEUE;
	for (uint32_t i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == SX_VSRC_CSI && pod->volumes[i].id == n->name_id &&
		    o->storage_capacity && !n->storage_capacity)
			return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* volumeLimit: maximumVolumeSize, else capacity; false when neither. */
static bool volume_limit(const struct sx_csi_capacity *c, int64_t *limit)
{
	*limit = c->has_max_size ? c->maximum_volume_size : c->capacity;
	return c->has_max_size || c->has_capacity;
}

/* isSchedulableAfterCSIStorageCapacityChange: new, or its limit grew. */
static enum sx_hint hint_capacity_volume_binding(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_csi_capacity *o = event_obj(old_obj), *n = event_obj(new_obj);
	int64_t ol, nl;

	if (!o || !n)
		return SX_QUEUE;
	if (volume_limit(n, &nl) && (!volume_limit(o, &ol) || nl > ol))
		return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_volume_binding[] = {
	{SX_RES_STORAGE_CLASS, SX_ACT_ADD | SX_ACT_UPDATE, hint_storage_class_volume_binding},
	{SX_RES_PVC, SX_ACT_ADD | SX_ACT_UPDATE, hint_pvc_volume_binding},
	{SX_RES_PV, SX_ACT_ADD | SX_ACT_UPDATE, NULL},
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL, NULL},
	{SX_RES_CSI_NODE, SX_ACT_ADD | SX_ACT_UPDATE, hint_csi_node_volume_binding},
	{SX_RES_CSI_DRIVER, SX_ACT_UPDATE, hint_csi_driver_volume_binding},
	{SX_RES_CSI_STORAGE_CAPACITY, SX_ACT_ADD | SX_ACT_UPDATE, hint_capacity_volume_binding},
	SX_EVENTS_END,
};

/* VolumeBinding.SignPod: the non-synthetic volumes (volume_binding.go). */
static struct sx_status *sign_volume_binding(void *self, const struct sx_pod *pod,
					     uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_VOLUMES;
	return NULL;
}

const struct sx_plugin sx_plugin_volume_binding = {
	.name = "VolumeBinding",
	.init = init_volume_binding,
	.destroy = destroy_volume_binding,
	.args_kind = "VolumeBindingArgs",
	.write_args = write_args_volume_binding,
	.state_clone = state_clone_volume_binding,
	.state_free = state_free_volume_binding,
	.pre_filter = pre_filter_volume_binding,
	.filter = filter_volume_binding,
	.pre_score = pre_score_volume_binding,
	.score = score_volume_binding,
	.reserve = reserve_volume_binding,
	.unreserve = unreserve_volume_binding,
	.pre_bind_pre_flight = pre_bind_pre_flight_volume_binding,
	.pre_bind = pre_bind_volume_binding,
	.events = events_volume_binding,
	.explain = explain_volume_binding,
	.sign = sign_volume_binding,
};
