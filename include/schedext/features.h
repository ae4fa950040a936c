/* Feature gates and the emulated release: which kube-scheduler release's
 * defaults run (1.35, 1.36 or 1.37; --emulated-version) and the gates
 * turned on or off on top of them (--feature-gates), validated as
 * component-base's featuregate does. Implemented in
 * src/framework/features.c.
 *
 * A gate's default, stage and lock depend on the release, as upstream's
 * versioned specs do (pkg/features/kube_features.go and the scheduler's
 * own feature list: {Version: "1.36", Default: true, PreRelease: Beta}):
 * the spec in force at a release is the last one whose version is not
 * after it; before the first one the gate is PreAlpha (off, not
 * settable).
 *
 * A struct sx_features is a plain value: the configuration owns one, and
 * every profile carries a copy (config.h), so plugins ask their profile,
 * never a process-wide global. Immutable once the configuration is built;
 * any thread may read it.
 */
#ifndef SCHEDEXT_FEATURES_H
#define SCHEDEXT_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/common.h"

struct sx_buf;
struct sx_jw;

/* Upstream's gate names, alphabetical as in upstream's table; AllAlpha and
 * AllBeta are component-base's two special gates. */
#define SX_FEATURE_LIST(X)                                                                         \
	X(ALL_ALPHA, "AllAlpha")                                                                   \
	X(ALL_BETA, "AllBeta")                                                                     \
	X(COMPOSITE_POD_GROUP, "CompositePodGroup")                                                \
	X(DRA_ADMIN_ACCESS, "DRAAdminAccess")                                                      \
	X(DRA_CONSUMABLE_CAPACITY, "DRAConsumableCapacity")                                        \
	X(DRA_DERIVED_ATTRIBUTES, "DRADerivedAttributes")                                          \
	X(DRA_DEVICE_BINDING_CONDITIONS, "DRADeviceBindingConditions")                             \
	X(DRA_DEVICE_COMPATIBILITY_GROUPS, "DRADeviceCompatibilityGroups")                         \
	X(DRA_DEVICE_TAINT_RULES, "DRADeviceTaintRules")                                           \
	X(DRA_DEVICE_TAINTS, "DRADeviceTaints")                                                    \
	X(DRA_EXTENDED_RESOURCE, "DRAExtendedResource")                                            \
	X(DRA_FRACTIONAL_CAPACITY_RANGE, "DRAFractionalCapacityRange")                             \
	X(DRA_LIST_TYPE_ATTRIBUTES, "DRAListTypeAttributes")                                       \
	X(DRA_NODE_ALLOCATABLE_RESOURCES, "DRANodeAllocatableResources")                           \
	X(DRA_OPTIONAL_NODE_OPERATIONS, "DRAOptionalNodeOperations")                               \
	X(DRA_PARTITIONABLE_DEVICES, "DRAPartitionableDevices")                                    \
	X(DRA_PRIORITIZED_LIST, "DRAPrioritizedList")                                              \
	X(DRA_RESOURCE_CLAIM_DEVICE_STATUS, "DRAResourceClaimDeviceStatus")                        \
	X(DRA_SCHEDULER_FILTER_TIMEOUT, "DRASchedulerFilterTimeout")                               \
	X(DRA_WORKLOAD_RESOURCE_CLAIMS, "DRAWorkloadResourceClaims")                               \
	X(DYNAMIC_RESOURCE_ALLOCATION, "DynamicResourceAllocation")                                \
	X(GANG_SCHEDULING, "GangScheduling")                                                       \
	X(GENERIC_WORKLOAD, "GenericWorkload")                                                     \
	X(IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING,                                           \
	  "InPlacePodLevelResourcesVerticalScaling")                                               \
	X(IN_PLACE_POD_VERTICAL_SCALING, "InPlacePodVerticalScaling")                              \
	X(IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION,                                      \
	  "InPlacePodVerticalScalingSchedulerPreemption")                                          \
	X(INTER_POD_AFFINITY_HOSTNAME_FAST_PATH, "InterPodAffinityHostnameFastPath")               \
	X(MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD, "MatchLabelKeysInPodTopologySpread")            \
	X(NODE_DECLARED_FEATURES, "NodeDeclaredFeatures")                                          \
	X(NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD, "NodeInclusionPolicyInPodTopologySpread")  \
	X(NOMINATED_NODE_NAME_FOR_EXPECTATION, "NominatedNodeNameForExpectation")                  \
	X(OPPORTUNISTIC_BATCHING, "OpportunisticBatching")                                         \
	X(POD_GROUP_PREEMPTION_POLICY, "PodGroupPreemptionPolicy")                                 \
	X(POD_LEVEL_RESOURCES, "PodLevelResources")                                                \
	X(SCHEDULER_ASYNC_API_CALLS, "SchedulerAsyncAPICalls")                                     \
	X(SCHEDULER_ASYNC_PREEMPTION, "SchedulerAsyncPreemption")                                  \
	X(SCHEDULER_POP_FROM_BACKOFF_Q, "SchedulerPopFromBackoffQ")                                \
	X(SCHEDULER_PRE_QUEUEING_HINTS, "SchedulerPreQueueingHints")                               \
	X(STORAGE_CAPACITY_SCORING, "StorageCapacityScoring")                                      \
	X(TAINT_TOLERATION_COMPARISON_OPERATORS, "TaintTolerationComparisonOperators")             \
	X(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, "TopologyAwareWorkloadScheduling")                   \
	X(VOLUME_ATTRIBUTES_CLASS, "VolumeAttributesClass")                                        \
	X(VOLUME_LIMIT_SCALING, "VolumeLimitScaling")                                              \
	X(WORKLOAD_AWARE_PREEMPTION, "WorkloadAwarePreemption")                                    \
	X(WORKLOAD_WITH_JOB, "WorkloadWithJob")

enum sx_feature {
#define SX_FEATURE_ENUM(id, name) SX_FEATURE_##id,
	SX_FEATURE_LIST(SX_FEATURE_ENUM)
#undef SX_FEATURE_ENUM
		SX_FEATURE_COUNT
};

/* component-base's featuregate.prerelease values. */
enum sx_prerelease { SX_PRE_ALPHA, SX_ALPHA, SX_BETA, SX_GA, SX_DEPRECATED };

/* The releases schedext can emulate (minor versions of 1.x). */
#define SX_RELEASE_MIN	   35
#define SX_RELEASE_MAX	   37
#define SX_RELEASE_DEFAULT 37

/* A gate's spec in force at one release. */
struct sx_feature_spec {
	bool def;
	enum sx_prerelease stage;
	bool locked; /* LockToDefault */
};

struct sx_features {
	int release;	  /* minor version of 1.x, SX_RELEASE_MIN..SX_RELEASE_MAX */
	uint64_t enabled; /* bit per enum sx_feature: the value in force */
	uint64_t set;	  /* bit per gate named by --feature-gates */
};

/* The defaults of release 1.<minor> (no gate set). minor must be in range. */
void sx_features_init(struct sx_features *f, int minor);

/* Is the gate on? (featureGate.Enabled) */
bool sx_feature_enabled(const struct sx_features *f, enum sx_feature id);
/* The emulated release's minor version (37 for 1.37). */
int sx_release(const struct sx_features *f);

/* Upstream's name of a gate ("NodeDeclaredFeatures"). */
const char *sx_feature_name(enum sx_feature id);
/* "PRE-ALPHA", "ALPHA", "BETA", "" (GA), "DEPRECATED": upstream's
 * prerelease strings. */
const char *sx_prerelease_name(enum sx_prerelease p);
/* The spec of gate id at release 1.<minor>. */
struct sx_feature_spec sx_feature_spec_at(enum sx_feature id, int minor);

/* Parses an --emulated-version value ("1.36", "kube=1.36", several
 * comma-separated as the flag repeats) into *minor, with
 * component-base's compatibility registry's errors ("patch version not
 * allowed, got: kube=1.36.1", "emulation version 1.34 is not between
 * [1.35, 1.37]", ...). 0 or SX_EINVAL. */
int sx_features_parse_release(const char *value, int *minor, struct sx_error *err);

/* Applies an --feature-gates value ("A=true,B=false", optionally
 * "kube:A=true"; several flags joined by commas) on top of f's release
 * defaults, as featureGate.Set does: "missing bool value for A",
 * "invalid value of A=x, err: strconv.ParseBool: parsing \"x\": invalid
 * syntax", "unrecognized feature gate: A", "cannot set feature gate A to
 * false, feature is locked to true", "cannot set feature gate A to true,
 * feature is PreAlpha at emulated version 1.35" (several of the last two:
 * "[e1, e2]"). On error f is unchanged. Setting a GA or Deprecated gate
 * logs upstream's warning. An enabled gate whose dependency is off
 * (GangScheduling needs GenericWorkload, WorkloadAwarePreemption and
 * WorkloadWithJob need GangScheduling / GenericWorkload) is refused:
 * "feature GangScheduling depends on GenericWorkload, which is disabled". */
int sx_features_set(struct sx_features *f, const char *value, struct sx_error *err);

/* "A=true,B=false": the gates whose value differs from the release's
 * default, by name ("" when none). Returns buf. */
const char *sx_features_diff(const struct sx_features *f, char *buf, size_t len);

/* Appends "\"emulatedVersion\":\"1.37\",\"featureGates\":{\"A\":true}" (the
 * gates that differ from the release's defaults) for /configz. */
void sx_features_write_json(struct sx_buf *b, const struct sx_features *f);
/* The same two members through a writer inside an open object. */
void sx_features_write_jw(struct sx_jw *w, const struct sx_features *f);

#endif /* SCHEDEXT_FEATURES_H */
