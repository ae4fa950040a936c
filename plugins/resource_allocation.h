/* Resource-to-score machinery shared by NodeResourcesFit and
 * NodeResourcesBalancedAllocation (upstream noderesources/
 * resource_allocation.go, least_allocated.go, most_allocated.go,
 * requested_to_capacity_ratio.go, helper/shape_score.go), plus the
 * resource-name predicates both need. Not a plugin.
 *
 * Everything here is stateless after construction: a struct sx_ra_scorer is
 * built once by a plugin's init() and only read by its hooks, so any thread
 * may call the scoring functions concurrently (its CEL cache and DRA
 * tracker lock themselves).
 *
 * With DRAExtendedResource, an extended resource a node does not advertise
 * is scored by the devices the DeviceClass serving it has on the node
 * (upstream resource_allocation.go getDRAPreScoredParams,
 * calculateDRAExtendedResourceAllocatableRequest): PreScore gathers the
 * classes, slice index and devices in use once (struct sx_ra_dra), Score
 * counts per node.
 */
#ifndef SCHEDEXT_PLUGINS_RESOURCE_ALLOCATION_H
#define SCHEDEXT_PLUGINS_RESOURCE_ALLOCATION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/dra_alloc.h"
#include "schedext/model.h"
#include "schedext/plugin.h"
#include "schedext/plugin_args.h"

struct cJSON;

/* Bound on configured resources and shape points (untrusted config). */
#define SX_RA_MAX_RESOURCES 64
#define SX_RA_MAX_SHAPE	    64

enum sx_ra_strategy {
	SX_RA_LEAST_ALLOCATED,
	SX_RA_MOST_ALLOCATED,
	SX_RA_REQUESTED_TO_CAPACITY_RATIO,
	SX_RA_BALANCED, /* std-dev of the fractions (BalancedAllocation) */
};

/* One point of the RequestedToCapacityRatio shape, score already scaled
 * from 0..10 to 0..100. */
struct sx_shape_point {
	int64_t utilization;
	int64_t score;
};

struct sx_ra_scorer {
	enum sx_ra_strategy strategy;
	/* true: node side uses Requested for cpu/memory and the pod's actual
	 * requests (BalancedAllocation); false: NonZeroRequested and the pod's
	 * non-zero cpu/memory (Fit). */
	bool use_requested;
	/* SX_RA_BALANCED from 1.36 on: score the change in balance placing the
	 * pod causes (with the pod against without it), not the balance after
	 * placing it (upstream balanced_allocation.go balancedResourceScorer
	 * after kubernetes PR 135573). */
	bool balance_change;
	/* DRAExtendedResource is on: SignPod refuses every pod (upstream's
	 * Fit.SignPod and BalancedAllocation.SignPod). */
	bool no_sign;
	uint32_t nresources;
	struct sx_resource_weight resources[SX_RA_MAX_RESOURCES];
	uint8_t kind[SX_RA_MAX_RESOURCES]; /* internal: resolved resource kind */
	uint32_t nshape;
	struct sx_shape_point shape[SX_RA_MAX_SHAPE];
	/* DRAExtendedResource: extended resources a node does not advertise
	 * are scored by the devices DeviceClasses give them (upstream
	 * resourceAllocationScorer.enableDRAExtendedResource, draManager,
	 * celCache). dra: the handle's DRA manager or own_dra (made when the
	 * handle has none, owned); cel: owned. Set by sx_ra_dra_init. */
	bool dra_extended;
	struct sx_dra_claims *dra, *own_dra;
	struct sx_cel_cache *cel;
};

/* ---------- resource names (upstream v1helper / schedutil) ---------- */

/* Extended resource: not native (contains '/', not in *kubernetes.io/),
 * not "requests."-prefixed, and a valid qualified name once prefixed. */
bool sx_is_extended_resource_name(const char *name);
/* Extended, hugepages-..., ...kubernetes.io/... or attachable-volumes-... */
bool sx_is_scalar_resource_name(const char *name);
/* IsQualifiedName (label names): true when valid; otherwise writes
 * upstream's first error message into msg. */
bool sx_qualified_name_ok(const char *name, char *msg, size_t len);

/* ---------- extended resources backed by DRA ---------- */

struct sx_handle;
struct sx_snapshot;
/* Turns DRA scoring on when DRAExtendedResource is on for h's profile
 * (tracker: h's, or one of its own). 0 or SX_ENOMEM. */
int sx_ra_dra_init(struct sx_ra_scorer *sc, struct sx_handle *h);
/* Frees what sx_ra_dra_init made. */
void sx_ra_dra_destroy(struct sx_ra_scorer *sc);

/* upstream draPreScoreState: for each configured resource the DeviceClass
 * serving it (borrowed from the snapshot, which the cycle holds), the
 * snapshot's slice index and the devices in use (claims allocated, in
 * flight and assumed). Refcounted (cycle-state clones share it),
 * read-only. */
struct sx_ra_dra {
	atomic_int refcount;
	struct sx_dra_index *ix;
	struct sx_dra_allocated *base, *inflight;
	struct sx_cel_cache *cel; /* the scorer's (borrowed) */
	const struct sx_dra_object *cls[SX_RA_MAX_RESOURCES];
};
/* getDRAPreScoredParams: NULL in *out when DRA scoring is off or no
 * configured resource is an extended resource a DeviceClass serves.
 * 0 or SX_ENOMEM. */
int sx_ra_dra_prescore(const struct sx_ra_scorer *sc, const struct sx_snapshot *snap,
		       struct sx_ra_dra **out);
struct sx_ra_dra *sx_ra_dra_ref(struct sx_ra_dra *d);
void sx_ra_dra_unref(struct sx_ra_dra *d);

/* ---------- scoring ---------- */

/* The pod's request for each configured resource, into out[nresources]. */
void sx_ra_pod_requests(const struct sx_ra_scorer *sc, const struct sx_pod *pod, int64_t *out);
/* True when every entry of reqs[0..n) is 0. */
bool sx_ra_all_zero(const int64_t *reqs, uint32_t n);
/* Node score for a pod whose per-resource requests are pod_reqs. Returns 0
 * and sets *score, or SX_EINVAL when no resources are configured (upstream
 * "resources not found"). */
int sx_ra_score(const struct sx_ra_scorer *sc, const struct sx_node_info *ni,
		const int64_t *pod_reqs, const struct sx_ra_dra *dra, int64_t *score);
/* calculateResourceAllocatableRequest of resource i (exposed for tests):
 * (allocatable, requested including pod_req); (0, 0) = not scored. */
void sx_ra_alloc_request(const struct sx_ra_scorer *sc, uint32_t i, const struct sx_node_info *ni,
			 int64_t pod_req, const struct sx_ra_dra *dra, int64_t *alloc,
			 int64_t *req);

/* One node's share of a placement's score (upstream
 * calculateNodeAllocatableRequest as the placement score calls it): for
 * each configured resource, the node's allocatable into alloc[i] and what
 * its pods already request into used[i] (non-zero requests for cpu and
 * memory, as Fit scores nodes), both 0 where the resource is not scored: a
 * scalar resource the node lacks, or one group_reqs[i] does not ask for. */
void sx_ra_node_usage(const struct sx_ra_scorer *sc, const struct sx_node_info *ni,
		      const int64_t *group_reqs, int64_t *alloc, int64_t *used);

/* Strategy primitives, exposed for direct tests. */
int64_t sx_ra_least_requested(int64_t requested, int64_t capacity);
int64_t sx_ra_most_requested(int64_t requested, int64_t capacity);
/* helper.BuildBrokenLinearFunction evaluated at p; n >= 1. */
int64_t sx_broken_linear(const struct sx_shape_point *shape, uint32_t n, int64_t p);
/* Combines per-resource (requested, allocatable) vectors; entries with
 * allocatable 0 are ignored. */
int64_t sx_ra_combine(const struct sx_ra_scorer *sc, const int64_t *requested,
		      const int64_t *allocatable);
/* The balance of fractions requested[i]/allocatable[i] over n resources,
 * (1 - std) * 100 truncated (upstream balancedResourceScore). */
int64_t sx_ra_balance(const int64_t *requested, const int64_t *allocatable, uint32_t n);
/* 1.36's BalancedAllocation score from the balance with and without the
 * pod: 50 + (50 + with - without) / 2, in 50..100, 75 = no change. */
int64_t sx_ra_balance_change(int64_t with_pod, int64_t without_pod);

/* ---------- args ---------- */

/* One entry of a `resources` list ({name, weight}) as the table reader
 * reads it (plugin_args.h). */
struct sx_ra_resource_arg {
	char *name;
	int32_t weight;
};

/* The table field of a `resources` list named key, into a
 * struct sx_ra_resource_arg array at offsetof(st, arr) with its length
 * at offsetof(st, n). Type errors: "<path>: must be a list", "Too many",
 * "<path>[i]: must be an object", "<path>[i].name: must be a string of at
 * most 253 characters", "<path>[i].weight: must be an integer". */
#define SX_RA_RESOURCES_ARG(key, st, arr, n)                                                       \
	{                                                                                          \
		.name = key, .type = SX_ARG_LIST, .offset = offsetof(st, arr),                     \
		.max = SX_RA_MAX_RESOURCES, .type_err = "must be a list",                          \
		.sub = sx_ra_resource_elem, .nsub = 1,                                             \
		.elem_size = sizeof(struct sx_ra_resource_arg), .count = offsetof(st, n)           \
	}
extern const struct sx_arg sx_ra_resource_elem[1];

/* Sets sc->resources from the n entries read (none: the defaults below;
 * weight 0 or absent becomes 1, as the v1 defaults do). path names the list
 * in errors. Returns 0 or SX_ENOMEM (a name the interner cannot hold). */
int sx_ra_set_resources(struct sx_ra_scorer *sc, const struct sx_ra_resource_arg *r, uint32_t n,
			const char *path, struct sx_error *err);
/* Sets the default resources {cpu:1, memory:1}. */
void sx_ra_default_resources(struct sx_ra_scorer *sc);

struct sx_buf;
/* /configz: ,"resources":[{"name","weight"}...] and, for
 * RequestedToCapacityRatio, ,"requestedToCapacityRatio":{"shape":[...]}
 * with the scores back on upstream's 0..10 scale. */
void sx_ra_write_args(struct sx_jw *w, const struct sx_ra_scorer *sc);

#endif /* SCHEDEXT_PLUGINS_RESOURCE_ALLOCATION_H */
