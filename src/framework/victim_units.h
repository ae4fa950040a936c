/* Preemption units (upstream pkg/scheduler/framework/preemption/types.go:
 * Victim, NewPodVictim, NewVictim, DomainVictim and its AffectedNodes,
 * getCrossNodesVictims; podgrouppreemption.go moreImportantVictim; util.go
 * FilterVictimsWithPDBViolation, GetPodPriority), shared by single-pod
 * preemption (preemption.c, DefaultPreemption's PostFilter) and group
 * preemption (podgroup_preemption.c, its PodGroupPostFilter).
 *
 * A unit is what preemption evicts at once: one pod, or, for a pod of a
 * PodGroup whose disruptionMode is All, every scheduled pod of that group
 * anywhere in the snapshot (the nodes they run on are the unit's affected
 * nodes). Its priority is its PodGroup's when the pod has one (with pod
 * groups on, upstream's pgLister), else the pod's.
 *
 * Ownership: a unit's arrays are owned by the unit array
 * (sx_victim_units_free); the pods are borrowed from the snapshot the
 * units were collected from. Threads: no state; any thread.
 */
#ifndef SCHEDEXT_FRAMEWORK_VICTIM_UNITS_H
#define SCHEDEXT_FRAMEWORK_VICTIM_UNITS_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/model.h"

struct sx_snapshot;
struct sx_pod_group;

struct sx_victim_unit {
	const struct sx_pod **pods; /* borrowed from the snapshot; &one_pod for a lone pod */
	sx_str *nodes;		    /* each pod's node; &one_node for a lone pod */
	/* A lone pod's storage: one unit per pod per node is the common case,
	 * so it costs no allocation (units are never copied by value). */
	const struct sx_pod *one_pod;
	sx_str one_node;
	uint32_t n;
	int32_t priority;
	bool group;	     /* pods of a pod group (NewPodVictim: its PodGroup key type) */
	bool whole;	     /* every pod of a PodGroup with disruptionMode All */
	int64_t earliest;    /* earliest start time of its pods (unset: latest) */
	uint32_t violations; /* its pods violating a PDB (sx_victim_units_mark_pdbs) */
	bool preempt;	     /* the caller's mark */
};

/* The PodGroup (ns, name) of snap, or NULL. */
const struct sx_pod_group *sx_victim_pod_group(const struct sx_snapshot *snap, sx_str ns,
					       sx_str name);

/* GetPodPriority: the priority of p's PodGroup when it has one in snap,
 * else p's. */
int32_t sx_victim_pod_priority(const struct sx_snapshot *snap, const struct sx_pod *p);

/* MoreImportantVictim with pod groups on: higher priority; then a unit of
 * pod-group pods before a lone pod; between two of those the larger; then
 * the earlier start. Without pod groups every unit is a lone pod, which
 * leaves util.MoreImportantPod (priority, then start). */
bool sx_victim_unit_more_important(const struct sx_victim_unit *a, const struct sx_victim_unit *b);
/* Stable: most important first. */
void sx_victim_units_sort(struct sx_victim_unit **u, uint32_t n);

/* getCrossNodesVictims over the nodes at snapshot indexes at[0..nat) (at
 * NULL: every node), in node then pod order: one unit per pod, except that
 * the pods of a PodGroup with disruptionMode All form one unit, collected
 * from the whole snapshot. groups false (pod groups off: no pgLister):
 * every pod is its own unit with its own priority. 0 or SX_ENOMEM (*out
 * NULL); free with sx_victim_units_free. */
int sx_victim_units_collect(const struct sx_snapshot *snap, const uint32_t *at, uint32_t nat,
			    bool groups, struct sx_victim_unit **out, uint32_t *nout);
/* One unit per pod of pods[0..n) (on node): priority the pod's. */
int sx_victim_units_of_pods(const struct sx_pod *const *pods, uint32_t n, sx_str node,
			    struct sx_victim_unit **out, uint32_t *nout);
void sx_victim_units_free(struct sx_victim_unit *u, uint32_t n);

/* FilterVictimsWithPDBViolation over pot[0..npot) in that order: each
 * unit's violations counts its pods that drive a PodDisruptionBudget's
 * disruptionsAllowed below zero. 0 or SX_ENOMEM. */
int sx_victim_units_mark_pdbs(const struct sx_snapshot *snap, struct sx_victim_unit **pot,
			      uint32_t npot);

#endif /* SCHEDEXT_FRAMEWORK_VICTIM_UNITS_H */
