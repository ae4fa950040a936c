/* The scheduling.k8s.io/v1beta1 Workload API kinds the scheduler reads:
 * Workload (its pod group templates) and PodGroup (one runtime group of
 * pods, what GangScheduling counts members against), as 1.37 serves them
 * (staging/src/k8s.io/api/scheduling/v1beta1/types.go). A pod joins a
 * group through spec.schedulingGroup.podGroupName (struct sx_pod,
 * scheduling_group). Decoded in src/api/decode_workload.c; frees and
 * reference counting in the same file.
 *
 * Fields modelled are those scheduling needs: the scheduling policy
 * (basic, or gang with minCount), schedulingConstraints.topology keys,
 * disruptionMode, priorityClassName/priority, preemptionPolicy and, on a
 * PodGroup, workloadRef and parentCompositePodGroupName, metadata.generation
 * and the status of the PodGroupInitiallyScheduled condition. Resource
 * claims and the rest of status are not modelled.
 *
 * Ownership: objects are reference counted from 1 and immutable once
 * published, as every kind of model.h; any thread may read them.
 */
#ifndef SCHEDEXT_WORKLOAD_H
#define SCHEDEXT_WORKLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/model.h"

struct cJSON;

/* PodGroupSchedulingPolicy: exactly one of basic and gang (the API server
 * validates the union; a decoded object with neither is kept as is). */
enum sx_group_policy { SX_GROUP_POLICY_NONE = 0, SX_GROUP_POLICY_BASIC, SX_GROUP_POLICY_GANG };
/* DisruptionMode (PodGroup: defaulted to Single by the API server). */
enum sx_disruption_mode { SX_DISRUPTION_UNSET = 0, SX_DISRUPTION_SINGLE, SX_DISRUPTION_ALL };

/* What a PodGroupTemplate and a PodGroup spec share. */
struct sx_group_spec {
	uint8_t policy;	    /* enum sx_group_policy */
	uint8_t disruption; /* enum sx_disruption_mode */
	bool has_priority;
	bool preempt_never; /* preemptionPolicy == Never */
	bool has_preemption_policy;
	int32_t min_count;     /* gang.minCount (0 unless gang) */
	int32_t priority;      /* priority, when has_priority */
	sx_str priority_class; /* priorityClassName */
	uint32_t ntopology;    /* schedulingConstraints.topology[].key */
	sx_str *topology;
};

struct sx_pod_group_template {
	sx_str name;
	struct sx_group_spec spec;
};

struct sx_workload {
	atomic_int refcount;
	struct sx_meta meta;
	sx_str controller_kind, controller_name, controller_api_group; /* spec.controllerRef */
	uint32_t ntemplates;					       /* spec.podGroupTemplates */
	struct sx_pod_group_template *templates;
};

struct sx_pod_group {
	atomic_int refcount;
	struct sx_meta meta;
	struct sx_group_spec spec;
	sx_str workload_name;	 /* spec.workloadRef.workloadName */
	sx_str template_name;	 /* spec.workloadRef.templateName */
	sx_str parent_composite; /* spec.parentCompositePodGroupName */
	int64_t generation;	 /* metadata.generation (0 when absent) */
	/* status.conditions[type=PodGroupInitiallyScheduled].status: 1 True,
	 * 0 False, -1 absent (the pod-group cycle never turns True back). */
	int8_t initially_scheduled;
};

/* scheduler-plugins' PodGroup CRD, scheduling.x-k8s.io/v1alpha1
 * (kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1/types.go,
 * PodGroupSpec and PodGroupStatus), for clusters before the Workload API:
 * pods join it with the label scheduling.x-k8s.io/pod-group, and the
 * Coscheduling plugin (plugins/coscheduling.c) schedules them as a gang.
 * Same kind string as struct sx_pod_group; its kinds.def row is
 * COSCHED_POD_GROUP. */
#define SX_COSCHED_POD_GROUP_LABEL "scheduling.x-k8s.io/pod-group"

struct sx_cosched_group {
	atomic_int refcount;
	struct sx_meta meta;
	int32_t min_member;		  /* spec.minMember */
	bool has_schedule_timeout;	  /* spec.scheduleTimeoutSeconds set */
	int32_t schedule_timeout_seconds; /* spec.scheduleTimeoutSeconds */
	bool has_min_resources;		  /* spec.minResources set */
	struct sx_resources min_resources;
	/* status (what the plugin writes without a controller) */
	sx_str phase; /* status.phase ("Pending", "Scheduling", "Scheduled", ...) */
	int32_t scheduled, running, succeeded, failed;
	bool has_schedule_start; /* status.scheduleStartTime set */
};

struct sx_workload *sx_decode_workload(const struct cJSON *json, struct sx_error *err);
struct sx_pod_group *sx_decode_pod_group(const struct cJSON *json, struct sx_error *err);
void sx_workload_free(struct sx_workload *w);
void sx_pod_group_free(struct sx_pod_group *g);
struct sx_workload *sx_workload_ref(const struct sx_workload *w);
void sx_workload_unref(const struct sx_workload *w);
struct sx_pod_group *sx_pod_group_ref(const struct sx_pod_group *g);
void sx_pod_group_unref(const struct sx_pod_group *g);
struct sx_cosched_group *sx_decode_cosched_group(const struct cJSON *json, struct sx_error *err);
void sx_cosched_group_free(struct sx_cosched_group *g);
struct sx_cosched_group *sx_cosched_group_ref(const struct sx_cosched_group *g);
void sx_cosched_group_unref(const struct sx_cosched_group *g);

#endif /* SCHEDEXT_WORKLOAD_H */
