/* The members of pod groups, as the gang plugins count them: which pods
 * of each (namespace, group) exist, which are assumed (Reserve until bound
 * or forgotten) and which are bound, and the group's object once it
 * appears. Shared by GangScheduling (the Workload API's PodGroup, pods
 * joining through spec.schedulingGroup.podGroupName) and Coscheduling
 * (scheduler-plugins' PodGroup CRD, pods joining through the label
 * scheduling.x-k8s.io/pod-group): upstream's PodGroupManager state
 * (pkg/scheduler/framework/plugins/gangscheduling, PodGroupState) and
 * scheduler-plugins' pod lister by label (pkg/coscheduling/core,
 * PodGroupManager.PreFilter and CalculateAssignedPods). Implemented in
 * plugins/gang_members.c; also the walk over a group's pods waiting at
 * Permit (allow or reject them all).
 *
 * Fed by the handle's object events (sx_gang_members_event, from a
 * plugin's listener): Pod events and the group kind's. `fed` is set by
 * the first Pod event: a front end that never delivers pods (the
 * extender, explain) leaves it false, and the plugins then gate nothing.
 *
 * Ownership: the tracker owns its groups, members and a reference to each
 * group object. Threads: every function takes the tracker's mutex, except
 * sx_gang_members_find and the reads of what it returns, which need the
 * caller to hold it (sx_gang_members_lock/unlock).
 */
#ifndef SCHEDEXT_PLUGINS_GANG_MEMBERS_H
#define SCHEDEXT_PLUGINS_GANG_MEMBERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/model.h"

struct sx_handle;

struct sx_gang_member {
	char *key;  /* the pod's UID, or its name when it has none (state files) */
	char *name; /* the pod's name */
	bool assumed, bound;
};

struct sx_gang_group {
	sx_str ns, name;
	const void *obj; /* a reference to the group object; NULL until it appears */
	int32_t binds;	 /* members bound, as PostBind counts them (sx_gang_group_add_bind) */
	uint32_t n, cap;
	struct sx_gang_member *m;
};

struct sx_gang_members {
	pthread_mutex_t mu;
	enum sx_kind group_kind; /* SX_KIND_POD_GROUP or SX_KIND_COSCHED_POD_GROUP */
	sx_str label;		 /* the label naming a pod's group; SX_STR_EMPTY: schedulingGroup */
	bool fed;		 /* a Pod event arrived */
	uint32_t n, cap;
	struct sx_gang_group *g;
};

/* group_kind's objects are the groups; label (NULL: the pod's
 * spec.schedulingGroup.podGroupName) names a pod's group. 0 or SX_ENOMEM. */
int sx_gang_members_init(struct sx_gang_members *t, enum sx_kind group_kind, const char *label);
void sx_gang_members_destroy(struct sx_gang_members *t);

/* The group a pod belongs to: SX_STR_EMPTY when none. */
sx_str sx_gang_group_of(const struct sx_gang_members *t, const struct sx_pod *pod);

/* A handle object event (handle.h): Pods and group_kind's objects. */
void sx_gang_members_event(struct sx_gang_members *t, enum sx_kind kind, const void *old_obj,
			   const void *new_obj);
/* Marks pod assumed (Reserve) or not (Unreserve) in its group. */
void sx_gang_members_assume(struct sx_gang_members *t, const struct sx_pod *pod, bool assumed);

void sx_gang_members_lock(struct sx_gang_members *t);
void sx_gang_members_unlock(struct sx_gang_members *t);
/* Under the lock: the group (ns, name), or NULL. */
const struct sx_gang_group *sx_gang_members_find(const struct sx_gang_members *t, sx_str ns,
						 sx_str name);
/* Its members assumed or bound (upstream ScheduledPodsCount; Coscheduling's
 * CalculateAssignedPods counts the same pods, those with a node). */
uint32_t sx_gang_group_scheduled(const struct sx_gang_group *g);

/* Under the lock: one more member of group (ns, name) bound; the count
 * starts from floor when it is higher (the count the group object last
 * showed). Returns the new count; 0 when the group is unknown. */
int32_t sx_gang_group_add_bind(struct sx_gang_members *t, sx_str ns, sx_str name, int32_t floor);

/* Allows (msg NULL) or rejects with msg, in the name of plugin, every pod
 * of group (ns, name) waiting at Permit in h's profile. */
void sx_gang_members_settle_waiting(const struct sx_gang_members *t, struct sx_handle *h, sx_str ns,
				    sx_str name, const char *plugin, const char *msg);

#endif /* SCHEDEXT_PLUGINS_GANG_MEMBERS_H */
