/* Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass,
 * ResourceSlice, ResourceClaim and ResourceClaimTemplate, decoded into
 * compact immutable structs (model.h conventions: refcounted, published
 * once, replaced on update).
 *
 * All four kinds share struct sx_dra_object (kind tag + meta + a union),
 * so the cache's kind switches need one line for them. Every string and
 * array of an object is owned by it and freed with its last reference.
 * Driver, pool and device names are interned (they key allocated-device
 * sets); attribute and request names are plain owned strings.
 *
 * Thread safety: decoders may run concurrently; objects are read-only
 * after decode and may be read from any thread.
 */
#ifndef SCHEDEXT_DRA_H
#define SCHEDEXT_DRA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/common.h"
#include "schedext/intern.h"
#include "schedext/model.h"
#include "schedext/quantity.h"

struct cJSON;

/* API limits (k8s.io/api/resource/v1) the allocator relies on. */
#define SX_DRA_ALLOCATION_RESULTS_MAX 32 /* AllocationResultsMaxSize */
#define SX_DRA_FINALIZER	      "resource.kubernetes.io/delete-protection"

/* The first four match enum sx_cel_attr_type (the CEL bridge casts). */
enum sx_dra_attr_type {
	SX_DRA_ATTR_INT,
	SX_DRA_ATTR_BOOL,
	SX_DRA_ATTR_STRING,
	SX_DRA_ATTR_VERSION,
	/* No value this release knows: `{}` (a newer apiserver's attribute
	 * type, its field dropped on the way); upstream's "unsupported
	 * attribute value". */
	SX_DRA_ATTR_NONE,
	/* DRAListTypeAttributes (alpha): ints, bools, strings, versions */
	SX_DRA_ATTR_INTS,
	SX_DRA_ATTR_BOOLS,
	SX_DRA_ATTR_STRINGS,
	SX_DRA_ATTR_VERSIONS,
};

/* devices[].attributes[name]: name as written in the slice ("model" or
 * "domain/model"); at most one value (DeviceAttribute: int, bool,
 * string, version, or a list ints, bools, strings, versions). */
struct sx_dra_attr {
	const char *name;
	uint8_t type; /* enum sx_dra_attr_type */
	bool b;
	int64_t i;
	const char *s;	/* string and version values */
	uint32_t nlist; /* list types: the values (may be 0: `[]`) */
	union {
		const int64_t *ints;
		const bool *bools;
		char *const *strs; /* strings, versions */
	} list;
};

/* A single value of a type this release compares (int, bool, string,
 * version): what matchAttribute and distinctAttribute can use without
 * DRAListTypeAttributes. */
static inline bool sx_dra_attr_scalar(const struct sx_dra_attr *a)
{
	return a->type <= SX_DRA_ATTR_VERSION;
}

/* A quantity and whether it was written with a binary suffix (Ki..Ei):
 * resource.Quantity's format, which its canonical string keeps. */
struct sx_dra_qty {
	sx_nano v;
	bool binary;
};

/* capacity[name].requestPolicy (CapacityRequestPolicy, DRAConsumableCapacity). */
struct sx_dra_cap_policy {
	bool has_default;
	struct sx_dra_qty def;
	uint32_t nvalid;
	struct sx_dra_qty *valid; /* validValues, ascending */
	bool has_range;		  /* validRange */
	bool has_min, has_max, has_step;
	struct sx_dra_qty min, max, step;
};

struct sx_dra_capacity {
	const char *name;
	sx_str name_id; /* interned name */
	sx_nano value;
	bool binary;			  /* value's format */
	struct sx_dra_cap_policy *policy; /* NULL = none */
};

/* One named quantity: capacity.requests[name] of a request,
 * consumedCapacity[name] of a result. */
struct sx_dra_named_qty {
	const char *name;
	struct sx_dra_qty q;
};

/* DeviceTaint effects; an effect this release does not know is kept as
 * SX_DRA_EFFECT_OTHER and, as the API says consumers must, acts like None
 * (k8s.io/api/resource/v1 DeviceTaint.Effect). */
enum sx_dra_effect {
	SX_DRA_EFFECT_NONE = 0,
	SX_DRA_EFFECT_NO_SCHEDULE,
	SX_DRA_EFFECT_NO_EXECUTE,
	SX_DRA_EFFECT_OTHER,
};

/* devices[].taints[] (and the taint of a DeviceTaintRule). */
struct sx_dra_taint {
	sx_str key, value;
	uint8_t effect; /* enum sx_dra_effect */
	bool has_time_added;
	int64_t time_added; /* unix seconds */
};

/* A counter: sharedCounters[].counters[name] or
 * consumesCounters[].counters[name] (Counter.Value). */
struct sx_dra_counter {
	sx_str name;
	sx_nano value;
};

/* sharedCounters[] (CounterSet) or a device's consumesCounters[]
 * (DeviceCounterConsumption: name is its counterSet). */
struct sx_dra_counter_set {
	sx_str name;
	uint32_t ncounters;
	struct sx_dra_counter *counters;
};

enum sx_dra_toleration_op { SX_DRA_TOL_EQUAL = 0, SX_DRA_TOL_EXISTS };

/* exactly.tolerations[] / firstAvailable[].tolerations[] (DeviceToleration). */
struct sx_dra_toleration {
	sx_str key, value;
	uint8_t op; /* enum sx_dra_toleration_op; absent: Equal (API default) */
	bool has_effect;
	uint8_t effect; /* enum sx_dra_effect (not OTHER) when has_effect */
	bool has_seconds;
	int64_t seconds; /* tolerationSeconds */
};

struct sx_dra_device {
	sx_str name;
	uint32_t nattrs;
	struct sx_dra_attr *attrs; /* sorted by name */
	uint32_t ncaps;
	struct sx_dra_capacity *caps;
	/* Per-device node selection (slice perDeviceNodeSelection: true). */
	sx_str node_name; /* SX_STR_EMPTY = unset */
	bool all_nodes;
	struct sx_node_selector *node_selector; /* NULL = unset */
	uint32_t nconsumes;
	struct sx_dra_counter_set *consumes; /* consumesCounters */
	bool binding_conditions;	     /* bindingConditions non-empty */
	/* DRADeviceBindingConditions: the conditions the scheduler waits for
	 * in PreBind, those that fail it, and bindsToNode */
	uint32_t nbind_conds, nbind_fail;
	char **bind_conds, **bind_fail;
	bool binds_to_node;
	bool allow_multiple; /* allowMultipleAllocations (DRAConsumableCapacity) */
	uint32_t ntaints;
	struct sx_dra_taint *taints; /* devices[].taints (DRADeviceTaints off: ignored) */
};

struct sx_dra_slice {
	sx_str driver;
	sx_str pool;
	int64_t generation;
	int64_t slice_count; /* pool.resourceSliceCount */
	sx_str node_name;    /* SX_STR_EMPTY = unset */
	bool all_nodes;
	struct sx_node_selector *node_selector; /* NULL = unset */
	bool has_per_device;  /* perDeviceNodeSelection present (set, any value) */
	bool per_device;      /* perDeviceNodeSelection: true */
	bool shared_counters; /* sharedCounters non-empty */
	bool consumes;	      /* some device has consumesCounters */
	uint32_t ncounter_sets;
	struct sx_dra_counter_set *counter_sets; /* sharedCounters */
	uint32_t ndevices;
	struct sx_dra_device *devices;
};

struct sx_dra_class_config {
	uint32_t nrequests;
	char **requests; /* claim configs: the requests they apply to */
	char *opaque;	 /* the `opaque` object as compact JSON (driver + parameters) */
};

enum sx_dra_mode { SX_DRA_EXACT_COUNT = 0, SX_DRA_ALL };

/* ExactDeviceRequest, or one DeviceSubRequest of firstAvailable. */
struct sx_dra_exact {
	char *name;	  /* the request's (or subrequest's) own name */
	char *class_name; /* NULL = missing */
	uint32_t nselectors;
	char **selectors; /* CEL expressions; NULL entry = selector without cel */
	uint8_t mode;	  /* enum sx_dra_mode */
	bool bad_mode;	  /* allocationMode not ExactCount/All */
	char *mode_name;  /* as written when bad_mode */
	int64_t count;
	bool has_admin_access;
	bool admin_access;
	uint32_t ntolerations;
	struct sx_dra_toleration *tolerations;
	bool has_capacity; /* capacity set (DRAConsumableCapacity) */
	uint32_t ncapreq;
	struct sx_dra_named_qty *capreq; /* capacity.requests */
};

struct sx_dra_request {
	char *name;
	bool has_exactly;
	struct sx_dra_exact exactly;
	uint32_t nsub;
	struct sx_dra_exact *first_available;
};

struct sx_dra_constraint {
	uint32_t nrequests;
	char **requests;
	char *match_attribute;	  /* NULL = not this type */
	char *distinct_attribute; /* NULL = not this type (DRAConsumableCapacity) */
};

struct sx_dra_claim_spec {
	uint32_t nrequests;
	struct sx_dra_request *requests;
	uint32_t nconstraints;
	struct sx_dra_constraint *constraints;
	uint32_t nconfig;
	struct sx_dra_class_config *config;
};

struct sx_dra_result {
	char *request; /* "req" or "req/sub" */
	sx_str driver, pool, device;
	bool has_admin_access, admin_access;
	char *share_id;			  /* NULL = not shared (DRAConsumableCapacity) */
	uint32_t nbind_conds, nbind_fail; /* bindingConditions, bindingFailureConditions */
	char **bind_conds, **bind_fail;
	uint32_t nconsumed;
	struct sx_dra_named_qty *consumed; /* consumedCapacity */
};

enum sx_dra_config_source { SX_DRA_FROM_CLASS = 0, SX_DRA_FROM_CLAIM };

struct sx_dra_alloc_config {
	uint8_t source; /* enum sx_dra_config_source */
	uint32_t nrequests;
	char **requests;
	char *opaque;
};

struct sx_dra_allocation {
	uint32_t nresults;
	struct sx_dra_result *results;
	uint32_t nconfig;
	struct sx_dra_alloc_config *config;
	struct sx_node_selector *node_selector; /* NULL = every node */
	/* allocationTimestamp (DRADeviceBindingConditions), unix seconds */
	bool has_timestamp;
	int64_t timestamp;
};

struct sx_dra_consumer {
	char *api_group;
	char *resource;
	char *name;
	char *uid;
};

/* status.devices[].conditions[] (DRAResourceClaimDeviceStatus) */
struct sx_dra_condition {
	char *type;
	bool is_true; /* status "True" */
	char *reason, *message;
};

/* status.devices[] (AllocatedDeviceStatus) */
struct sx_dra_device_status {
	sx_str driver, pool, device;
	uint32_t nconds;
	struct sx_dra_condition *conds;
};

struct sx_dra_claim {
	struct sx_dra_claim_spec spec;
	uint32_t ndevice_status;
	struct sx_dra_device_status *device_status; /* status.devices */
	struct sx_dra_allocation *allocation;	    /* NULL = not allocated */
	uint32_t nreserved;
	struct sx_dra_consumer *reserved; /* status.reservedFor */
	bool deleting;
	bool has_finalizer; /* SX_DRA_FINALIZER among metadata.finalizers */
	/* metadata.annotations[SX_DRA_EXTENDED_ANNOTATION] == "true": the
	 * special claim of a pod's extended resources (DRAExtendedResource) */
	bool extended;
	uint32_t nfinalizers;
	char **finalizers; /* metadata.finalizers */
	sx_str owner_kind; /* controller owner, SX_STR_EMPTY = none */
	char *owner_uid;
};

struct sx_dra_class {
	uint32_t nselectors;
	char **selectors;
	uint32_t nconfig;
	struct sx_dra_class_config *config; /* requests unused */
	char *extended_resource_name;	    /* NULL = unset (DRAExtendedResource) */
};

/* DRAExtendedResource (k8s.io/api/resource/v1): the implicit extended
 * resource name of every class is this prefix and its name; the claim the
 * scheduler creates for a pod's extended resources carries the
 * annotation. */
#define SX_DRA_CLASS_PREFIX	   "deviceclass.resource.kubernetes.io/"
#define SX_DRA_EXTENDED_ANNOTATION "resource.kubernetes.io/extended-resource-claim"

struct sx_dra_object {
	atomic_int refcount;
	uint8_t kind; /* SX_KIND_DEVICE_CLASS ... SX_KIND_CLAIM_TEMPLATE */
	struct sx_meta meta;
	sx_str name_id; /* interned meta.name */
	union {
		struct sx_dra_class cls;
		struct sx_dra_slice slice;
		struct sx_dra_claim claim;     /* ResourceClaim */
		struct sx_dra_claim_spec tmpl; /* ResourceClaimTemplate spec.spec */
	} u;
	void *arena; /* internal: every allocation of the object */
};

/* Any of the four kinds (kind from the caller, as sx_decode_object). NULL
 * with err set (path relative to the object) on invalid input. */
struct sx_dra_object *sx_decode_dra(const struct cJSON *json, enum sx_kind kind,
				    struct sx_error *err);
struct sx_dra_object *sx_dra_ref(const struct sx_dra_object *o);
void sx_dra_unref(const struct sx_dra_object *o);
/* resource.k8s.io/v1 DeviceTaintRule: one taint for every device its
 * selector matches (staging/src/k8s.io/api/resource/v1/types.go,
 * DeviceTaintRule). kube-scheduler watches it, with the DRADeviceTaintRules
 * feature gate, through the ResourceSlice tracker that patches the taint
 * into the slices it hands the allocator
 * (staging/src/k8s.io/dynamic-resource-allocation/resourceslice/tracker,
 * Tracker.syncSlice; pkg/scheduler/scheduler.go, New). Decoded and cached
 * here; status.conditions are not modelled. */
struct sx_device_taint_rule {
	atomic_int refcount;
	struct sx_meta meta;
	/* spec.deviceSelector: absent selects no device; present, each unset
	 * field (SX_STR_EMPTY) matches any driver, pool, device. */
	bool has_selector;
	sx_str driver, pool, device;
	/* spec.taint. Effects are "NoSchedule", "NoExecute" and "None";
	 * consumers treat an unknown one as "None" (upstream DeviceTaint.Effect),
	 * so the decoder keeps whatever string it is given. */
	sx_str key, value, effect;
	bool has_time_added;
	int64_t time_added; /* unix seconds */
};
struct sx_device_taint_rule *sx_decode_device_taint_rule(const struct cJSON *json,
							 struct sx_error *err);
void sx_device_taint_rule_free(struct sx_device_taint_rule *r);
struct sx_device_taint_rule *sx_device_taint_rule_ref(const struct sx_device_taint_rule *r);
void sx_device_taint_rule_unref(const struct sx_device_taint_rule *r);

/* True for the four DRA kinds. */
bool sx_kind_is_dra(enum sx_kind kind);

/* Pod spec.resourceClaims joined with status.resourceClaimStatuses
 * (decode_pod.c calls these). */
int sx_dec_pod_resource_claims(const struct cJSON *pod_json, struct sx_pod *pod,
			       struct sx_error *err);
void sx_pod_resource_claims_free(struct sx_pod *pod);

/* An attribute of a device by fully qualified name ("domain/id"), with
 * upstream's lookup: the exact key first, then "id" when domain is the
 * device's driver. NULL when absent. */
const struct sx_dra_attr *sx_dra_lookup_attr(const struct sx_dra_device *dev, sx_str driver,
					     const char *qualified);

#endif /* SCHEDEXT_DRA_H */
