/* The structured-parameters allocator of Dynamic Resource Allocation, as
 * kube-scheduler's allocator
 * (staging/src/k8s.io/dynamic-resource-allocation/structured, the
 * "incubating" one for the gates in sx_dra_features): DRAAdminAccess,
 * DRAPrioritizedList, DRADeviceTaints (with DeviceTaintRules in env) and
 * DRAPartitionableDevices (shared counters, per-device node selection)
 * and DRAConsumableCapacity (devices allocated many times by capacity,
 * dra_capacity.c) as the caller's gates say (without partitionable
 * devices, devices that consume counters are never picked and slices
 * using perDeviceNodeSelection or sharedCounters are ignored);
 * DRADeviceBindingConditions (devices with binding conditions are picked
 * only with it, their conditions copied into the results).
 *
 * Pieces:
 *  - sx_dra_index: the snapshot's ResourceSlices indexed by node name and
 *    by pool (built once per slice set, shared, thread-safe to read);
 *  - sx_dra_allocated: the set of devices in use (allocated claims plus
 *    allocations in flight);
 *  - sx_dra_allocate(): the backtracking search for one node, in
 *    upstream's order (claims, requests, subrequests in order; pools
 *    sorted by driver then pool name, those offering devices with
 *    binding conditions last, slices by name, devices in order),
 *    so the same inputs give the same allocation.
 *
 * Device selectors are evaluated by a callback so the allocator does not
 * depend on the CEL module; results are memoized per (slice object,
 * device, expression) because they do not depend on the node. Filter's
 * feasibility answers are remembered per node across cycles while their
 * inputs stay the same (sx_dra_allocate_feasible, dra_memo.c).
 */
#ifndef SCHEDEXT_DRA_ALLOC_H
#define SCHEDEXT_DRA_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/cache.h"
#include "schedext/dra.h"

struct sx_dra_index;
struct sx_dra_allocated;

#define SX_DRA_ERR_LEN 512

/* ---------- selector evaluation ---------- */

enum sx_dra_match {
	SX_DRA_NO_MATCH = 0,
	SX_DRA_MATCH = 1,
	SX_DRA_COMPILE_ERROR = -1, /* message in err: the compiler's text */
	SX_DRA_RUNTIME_ERROR = -2, /* message in err: the evaluator's text */
};

/* Evaluates one selector expression against a device of `driver`. Called
 * concurrently from Filter threads. */
typedef int (*sx_dra_match_fn)(void *ctx, const char *expr, sx_str driver, sx_str pool,
			       const struct sx_dra_device *dev, char *err, size_t errlen);

/* ---------- the slice index ---------- */

/* Indexes snap's ResourceSlices. NULL on OOM. Refcounted, immutable. */
struct sx_dra_index *sx_dra_index_new(const struct sx_snapshot *snap);
struct sx_dra_index *sx_dra_index_ref(struct sx_dra_index *ix);
void sx_dra_index_unref(struct sx_dra_index *ix);
/* The shared index lives in the claims tracker: sx_dra_index_get below. */

/* ---------- devices in use ---------- */

/* Refcounted; new() holds one reference, free() drops one. Read-only
 * once shared. */
struct sx_dra_allocated *sx_dra_allocated_new(void);
struct sx_dra_allocated *sx_dra_allocated_ref(struct sx_dra_allocated *a);
void sx_dra_allocated_free(struct sx_dra_allocated *a);
/* A copy holding one reference; NULL on OOM. */
struct sx_dra_allocated *sx_dra_allocated_clone(const struct sx_dra_allocated *a);
/* Adds a device; 0 or SX_ENOMEM. */
int sx_dra_allocated_add(struct sx_dra_allocated *a, sx_str driver, sx_str pool, sx_str device);
bool sx_dra_allocated_has(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
			  sx_str device);
/* DRAConsumableCapacity: a share of a device allocated with
 * allowMultipleAllocations (its consumed capacity names[i] values[i],
 * names interned) and the questions about shares. A device shared is not
 * "in use" for sx_dra_allocated_has; with the gate off the allocator
 * treats it as if it were. 0 or SX_ENOMEM. */
int sx_dra_allocated_add_shared(struct sx_dra_allocated *a, sx_str driver, sx_str pool,
				sx_str device, const sx_str *names, const sx_nano *values,
				uint32_t n);
bool sx_dra_allocated_shared(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
			     sx_str device);
/* Whether any device of a has shares (a NULL set has none). */
bool sx_dra_allocated_any_shared(const struct sx_dra_allocated *a);
sx_nano sx_dra_allocated_consumed(const struct sx_dra_allocated *a, sx_str driver, sx_str pool,
				  sx_str device, sx_str cap);
/* Adds the non-admin-access results of an allocation: a result with a
 * shareID as a share, the others whole. */
int sx_dra_allocated_add_allocation(struct sx_dra_allocated *a,
				    const struct sx_dra_allocation *alloc);

/* ---------- allocation ---------- */

struct sx_dra_features {
	bool admin_access;     /* DRAAdminAccess (1.34: beta, on) */
	bool prioritized_list; /* DRAPrioritizedList (1.34: beta, on) */
	bool device_taints;    /* DRADeviceTaints (1.36 beta on, 1.37 GA) */
	bool partitionable;    /* DRAPartitionableDevices (1.36 beta on) */
	bool consumable;       /* DRAConsumableCapacity (1.36 beta on) */
	/* DeviceBindingAndStatus: DRADeviceBindingConditions and
	 * DRAResourceClaimDeviceStatus (1.36 beta on): devices with binding
	 * conditions may be picked, bindsToNode narrows the node selector */
	bool binding;
};

/* A claim to allocate: its identity (for messages) and spec. */
struct sx_dra_claim_in {
	const char *ns, *name;
	const struct sx_dra_claim_spec *spec;
};

/* Everything the allocator reads; all borrowed. */
struct sx_dra_alloc_env {
	struct sx_dra_features features;
	const struct sx_dra_index *index;
	const struct sx_dra_allocated *allocated;
	const struct sx_dra_allocated *allocated2; /* a second set (may be NULL) */
	/* Class lookup by name: NULL when the class does not exist. */
	const struct sx_dra_object *(*get_class)(void *ctx, const char *name);
	void *class_ctx;
	sx_dra_match_fn match;
	void *match_ctx;
	uint64_t deadline_ns; /* sx_now_ns() limit (filterTimeout); 0 = none */
	/* DeviceTaintRules whose taints apply to the devices they select, as
	 * if they were in the slices (DRADeviceTaintRules; none when off). */
	const struct sx_device_taint_rule *const *taint_rules;
	uint32_t ntaint_rules;
};

/* A device picked for a request. */
struct sx_dra_pick {
	char request[128]; /* "req" or "req/sub" (names are DNS labels) */
	sx_str driver, pool, device;
	bool admin_access;		   /* set from adminAccess: true */
	const struct sx_dra_object *slice; /* where it came from (borrowed) */
	const struct sx_dra_exact *req;	   /* the (sub)request: its tolerations go
					    * into the result (borrowed from the claim) */
	const struct sx_dra_device *dev;   /* in slice */
	/* DRAConsumableCapacity: a share of a device allowing multiple
	 * allocations, its ID (filled only when results are wanted) and what
	 * it consumes (sx_dra_consumed of req and dev). */
	bool shared;
	char share_id[37];
};

struct sx_dra_claim_out {
	uint32_t npicks;
	struct sx_dra_pick picks[SX_DRA_ALLOCATION_RESULTS_MAX];
	/* Configs in upstream order: class configs once per class (requests
	 * listed), then the claim's; opaque JSON borrowed from class/claim. */
	uint32_t nconfig;
	struct sx_dra_out_config {
		uint8_t source;	    /* enum sx_dra_config_source */
		uint32_t nrequests; /* 0 = every request */
		const char *requests[SX_DRA_ALLOCATION_RESULTS_MAX];
		const char *opaque;
	} * config;
	/* The allocation's node selector: node_name set = matchFields on
	 * metadata.name; else nterm requirements of one term (labels and
	 * fields, from slice selectors), none = every node. */
	sx_str node_name;
	uint32_t nexprs, nfields;
	const struct sx_requirement *exprs[16], *fields[16];
};

enum sx_dra_alloc_rc {
	SX_DRA_ALLOCATED = 1,
	SX_DRA_UNSATISFIED = 0,
	SX_DRA_TIMEOUT = -1000,	    /* filterTimeout expired */
	SX_DRA_NODE_FAILED = -1001, /* ErrFailedAllocationOnNode: message in err */
	SX_DRA_FATAL = -1002,	    /* broken claim/class/selector: message in err */
};

/* Allocates claims[0..n) for node. On SX_DRA_ALLOCATED out[0..n) are
 * filled (free with sx_dra_claim_out_clear). Thread-safe: any number of
 * calls may run at once on one env. */
int sx_dra_allocate(const struct sx_dra_alloc_env *env, const struct sx_node *node,
		    const struct sx_dra_claim_in *claims, uint32_t n, struct sx_dra_claim_out *out,
		    char *err, size_t errlen);
void sx_dra_claim_out_clear(struct sx_dra_claim_out *out);

/* The same in two steps, so a scheduling cycle validates requests, looks
 * classes up and interns selectors once rather than per node: prepare
 * (env and claims are borrowed until the prep is freed; NULL on OOM), then
 * allocate per node (thread-safe on one prep). results false skips the
 * configs, node selector and the picks' request names (Filter only needs
 * feasibility); timeout_ns
 * (0 = none) replaces env's deadline: it runs from the search's first
 * clock check, 64 steps in, so the many searches that end sooner never
 * read the clock. */
struct sx_dra_prep;
struct sx_dra_prep *sx_dra_prepare(const struct sx_dra_alloc_env *env,
				   const struct sx_dra_claim_in *claims, uint32_t n);
int sx_dra_allocate_prepared(const struct sx_dra_prep *p, const struct sx_node *node,
			     uint64_t timeout_ns, bool results, struct sx_dra_claim_out *out,
			     char *err, size_t errlen);
void sx_dra_prep_free(struct sx_dra_prep *p);

/* Filter's question, whether p's claims can be allocated on node, with
 * sx_dra_allocate_prepared's return (results false, no output), answered
 * from the results of earlier cycles when every input of the search is
 * provably the same (dra_memo.c says which) and remembered for later
 * ones. sx_dra_prep_memo (after sx_dra_prepare, before the prep is
 * shared) lets a prep use that memo; without it each call searches.
 * Thread-safe on one prep, like sx_dra_allocate_prepared. */
void sx_dra_prep_memo(struct sx_dra_prep *p);
int sx_dra_allocate_feasible(const struct sx_dra_prep *p, const struct sx_node *node,
			     uint64_t timeout_ns, char *err, size_t errlen);

/* ---------- why a node's devices do not fit (explainers only) ----------
 *
 * Not upstream: the allocator only says "cannot allocate all claims".
 * sx_dra_diagnose looks, on one node, at each request in the allocator's
 * order (a firstAvailable list: its first subrequest) and at every
 * candidate device of it alone, in the order of the allocator's checks
 * (allocator_incubating.go, allocateOne and allocateDevice): in use,
 * selectors, per-device node selection, gates, taints, capacity, shared
 * counters; and reports the first request with fewer usable devices than
 * it needs. */
enum sx_dra_why {
	SX_DRA_WHY_IN_USE,   /* allocated to another claim */
	SX_DRA_WHY_SELECTOR, /* a class or request selector is false */
	SX_DRA_WHY_NODE,     /* perDeviceNodeSelection excludes the node */
	SX_DRA_WHY_GATE,     /* binding conditions or counters with the gate off */
	SX_DRA_WHY_TAINT,    /* an untolerated NoSchedule/NoExecute taint */
	SX_DRA_WHY_CAPACITY, /* its capacity left is less than asked */
	SX_DRA_WHY_COUNTERS, /* its shared counters are exhausted */
	SX_DRA_WHY_FITS,     /* usable alone */
	SX_DRA_WHY_COUNT
};
#define SX_DRA_DIAG_LISTED 6
struct sx_dra_diag {
	bool found;	   /* a request is short of devices (else they fit only one by one) */
	uint32_t claim;	   /* its claim (index into the prepared claims) */
	char request[128]; /* "req" or "req/sub" */
	int needs;	   /* devices it needs (allocationMode All: every match) */
	uint32_t ndevices; /* candidate devices looked at */
	uint32_t count[SX_DRA_WHY_COUNT];
	uint32_t nlisted; /* the first devices that did not fit */
	struct {
		sx_str pool, device;
		uint8_t why;
		char detail[96]; /* the taint, the selector, the counter */
	} listed[SX_DRA_DIAG_LISTED];
	uint32_t nskipped;	 /* pools skipped (incomplete or invalid) */
	sx_str skipped_pool;	 /* the first of them */
	bool skipped_incomplete; /* it lacks slices (else invalid) */
};
/* Fills d for node; 0, or a negative with err set (the node's error). */
int sx_dra_diagnose(const struct sx_dra_prep *p, const struct sx_node *node, struct sx_dra_diag *d,
		    char *err, size_t errlen);

/* upstream NodeMatches for a slice/device: nodeName, allNodes, selector. */
bool sx_dra_node_matches(const struct sx_node *node, sx_str node_name, bool all_nodes,
			 const struct sx_node_selector *sel);

/* ---------- claims in flight and assumed (dra_claims.c) ----------
 *
 * One tracker per scheduler (upstream's SharedDRAManager, made once in
 * pkg/scheduler/scheduler.go New and handed to every profile): the
 * configuration owns it and every profile's handle borrows it, so two
 * profiles never allocate one device twice. Thread-safe. An allocation
 * made by Reserve is "pending" until PreBind finishes (upstream
 * inFlightAllocations): its devices are in use and other pods needing the
 * claim wait. After PreBind wrote the claim, the written object is
 * "assumed" (upstream's assume cache) until the snapshot holds that
 * resourceVersion or newer. */

struct sx_dra_claims;
/* An empty tracker (not tracking claims by name); NULL when out of memory. */
struct sx_dra_claims *sx_dra_claims_new(void);
/* Frees it and every reference it holds. */
void sx_dra_claims_free(struct sx_dra_claims *m);

/* A device of a pending allocation; a share (DRAConsumableCapacity)
 * keeps what it consumes (its first SX_DRA_SHARE_CAPS capacities). */
#define SX_DRA_SHARE_CAPS 16
struct sx_dra_devref {
	sx_str driver, pool, device;
	bool admin_access;
	bool shared;
	uint32_t ncons;
	sx_str cons_name[SX_DRA_SHARE_CAPS];
	sx_nano cons_value[SX_DRA_SHARE_CAPS];
};

/* Records a pending allocation of claim uid (devices copied). 0 or SX_ENOMEM. */
int sx_dra_pending_add(struct sx_dra_claims *m, const char *uid,
		       const struct sx_dra_claim_out *out);
/* Drops it; true when there was one. */
bool sx_dra_pending_remove(struct sx_dra_claims *m, const char *uid);
bool sx_dra_pending_has(struct sx_dra_claims *m, const char *uid);
/* Stores the claim as written through the API (a reference is taken). */
void sx_dra_assume(struct sx_dra_claims *m, const struct sx_dra_object *claim);
/* Forgets the assumed object of claim uid. */
void sx_dra_assume_drop(struct sx_dra_claims *m, const char *uid);
/* The claim to use for the snapshot's object `snap_claim` (or for a claim
 * missing from the snapshot, NULL, found by ns/name): the assumed one when
 * newer, else snap_claim. A new reference (NULL when neither exists).
 * Assumed objects the snapshot caught up with are dropped. */
const struct sx_dra_object *sx_dra_claim_current(struct sx_dra_claims *m,
						 const struct sx_dra_object *snap_claim, sx_str ns,
						 const char *name);
/* The devices allocated by the snapshot's claims: shared by every
 * snapshot with the same claim objects (one cached per tracker); a new
 * reference, NULL on OOM. */
struct sx_dra_allocated *sx_dra_allocated_base(struct sx_dra_claims *m,
					       const struct sx_snapshot *snap);
/* The devices in use beyond that base: allocations pending and the
 * assumed claims' (written but not yet in snap; the others are dropped).
 * A new reference to a read-only set, shared by the cycles until the next
 * pending allocation comes or goes; NULL on OOM. */
struct sx_dra_allocated *sx_dra_inflight(struct sx_dra_claims *m, const struct sx_snapshot *snap);
/* sx_dra_index_new of snap, or the tracker's cached index when its
 * ResourceSlices are the same objects (a new reference; NULL on OOM). */
struct sx_dra_index *sx_dra_index_get(struct sx_dra_claims *m, const struct sx_snapshot *snap);

/* ---------- the API (dra_claims.c) ----------
 * Through the profile's API client (handle.h); kube NULL (explain,
 * extender, tests) fails with msg "no API client". All calls may run on
 * any thread. They return 0, SX_ECONFLICT on HTTP 409, SX_ENOENT on 404,
 * other negatives with msg set to the API server's message. */
struct sx_kube;
/* JSON merge patch of .../resourceclaims/{name}[/status]; *out (may be
 * NULL) receives the decoded result. */
int sx_dra_patch_claim(struct sx_kube *kube, const char *ns, const char *name, bool status,
		       const char *body, struct sx_dra_object **out, char *msg, size_t len);
int sx_dra_get_claim(struct sx_kube *kube, const char *ns, const char *name,
		     struct sx_dra_object **out, char *msg, size_t len);
/* POST .../resourceclaims (body: the object, generateName allowed). */
int sx_dra_create_claim(struct sx_kube *kube, const char *ns, const char *body,
			struct sx_dra_object **out, char *msg, size_t len);
/* DELETE .../resourceclaims/{name}; a claim already gone is 0. */
int sx_dra_delete_claim(struct sx_kube *kube, const char *ns, const char *name, char *msg,
			size_t len);
/* PATCH /api/v1/namespaces/{ns}/pods/{name}/status, a strategic merge
 * patch (DRAExtendedResource: status.extendedResourceClaimStatus). */
int sx_dra_patch_pod_status(struct sx_kube *kube, const char *ns, const char *name,
			    const char *body, char *msg, size_t len);

/* Claims by namespace/name for PreEnqueue, fed from the live cache's
 * events (sx_config_attach turns tracking on, handle.h). */
void sx_dra_track_claims(struct sx_dra_claims *m, bool on);
void sx_dra_claim_event(struct sx_dra_claims *m, const struct sx_dra_object *old_claim,
			const struct sx_dra_object *new_claim);
/* -1 when not tracking; 0 absent; 1 present (*out: a new reference). */
int sx_dra_claim_known(struct sx_dra_claims *m, sx_str ns, const char *name,
		       const struct sx_dra_object **out);
/* The DeviceClasses likewise (upstream's DeviceClassResolver, for the
 * queueing hints of NodeResourcesFit, which may not take a snapshot). */
void sx_dra_class_event(struct sx_dra_claims *m, const struct sx_dra_object *old_class,
			const struct sx_dra_object *new_class);
/* Does a DeviceClass serve extended resource `name` (explicitly, or as
 * deviceclass.resource.kubernetes.io/<class>)? -1 when m is NULL or not
 * tracking; 0 no; 1 yes. */
int sx_dra_resource_backed(struct sx_dra_claims *m, const char *name);

/* For explain (plugins/dynamic_resources.c): the pod's claims after a
 * cycle cs, each {"claim", "allocatedBefore", "allocation"} with the
 * devices that would be allocated on node; NULL when DynamicResources did
 * not run or cannot allocate there. Caller deletes. */
struct sx_cycle_state;
struct cJSON *sx_dra_explain_devices(const struct sx_cycle_state *cs, const struct sx_node *node);
/* The same in the operator's words, appended to b: per claim, each
 * request and the device it would get ("default/c: gpu -> gpu-0"), a
 * partition with its counter set, a share with what it consumes; claims
 * allocated before say so. How many claims it named (0: nothing). */
struct sx_buf;
int sx_dra_explain_node(const struct sx_cycle_state *cs, const struct sx_node *node,
			struct sx_buf *b);

/* What request req consumes of each capacity of dev (of driver): the
 * entries of a result's consumedCapacity, names as the device spells
 * them (dra_capacity.c). Returns how many (at most max). */
uint32_t sx_dra_consumed(const struct sx_dra_exact *req, sx_str driver,
			 const struct sx_dra_device *dev, struct sx_dra_named_qty *out,
			 uint32_t max);
/* resource.Quantity's canonical string of q. */
void sx_dra_qty_string(struct sx_dra_qty q, char *buf, size_t len);

/* ---------- extended resources backed by DRA (dra_extended.c) ---------- */

/* The DeviceClass serving extended resource `name` (explicitly through
 * spec.extendedResourceName, or deviceclass.resource.kubernetes.io/<class>),
 * or NULL. */
const struct sx_dra_object *sx_dra_class_for_resource(const struct sx_snapshot *snap,
						      const char *name);
/* How many devices of class cls serve node (*capacity) and how many of
 * them are in use in a or a2 (*allocated; either may be NULL): every
 * ResourceSlice of ix, whatever its pool's generation, filtered by node
 * (nodeName, allNodes, nodeSelector; per device with
 * perDeviceNodeSelection) and by the class's selectors (upstream
 * noderesources resource_allocation.go calculateDRAResourceTotals, the
 * scorers' view of an extended resource backed by DRA). 0, or -1 when a
 * selector fails to evaluate (both counts 0). Thread-safe. */
int sx_dra_class_devices(const struct sx_dra_index *ix, const struct sx_dra_allocated *a,
			 const struct sx_dra_allocated *a2, const struct sx_node *node,
			 const struct sx_dra_object *cls, sx_dra_match_fn match, void *mctx,
			 int64_t *capacity, int64_t *allocated);
/* The special ResourceClaim (generateName, pod owner, annotation, one
 * request per container and resource) for pod's extended resources
 * res[0..n), served by the classes named cls[0..n), without name and uid;
 * *mappings: the pod's status.extendedResourceClaimStatus.requestMappings.
 * NULL when nothing is requested or out of memory. */
struct cJSON *sx_dra_extended_claim_json(const struct sx_pod *pod, const sx_str *res,
					 const char *const *cls, uint32_t n,
					 struct cJSON **mappings);

/* The allocation as resource.k8s.io/v1 AllocationResult JSON (dra_result.c);
 * NULL on OOM. */
struct cJSON *sx_dra_allocation_json(const struct sx_dra_claim_out *o);

#endif /* SCHEDEXT_DRA_ALLOC_H */
