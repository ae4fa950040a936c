/* The scheduling queue of the standalone scheduler (upstream backend/queue/scheduling_queue.go):
 * activeQ (a heap ordered by the profiles' QueueSort), backoffQ (a heap by
 * backoff expiry), unschedulablePods (failed pods waiting for a cluster
 * event, and pods gated by PreEnqueue), the in-flight set (popped pods) and
 * the nominator (node -> pods nominated to it by preemption).
 *
 * Which pods enter: spec.schedulerName names a profile of the config, no
 * spec.nodeName, not being deleted, not terminal (eventhandlers.go responsibleForPod). A pod
 * that becomes bound or deleted leaves every place.
 *
 * Cluster events and queueing hints (scheduling_queue.go isPodWorthRequeuing, 1.34 with
 * SchedulerQueueingHints GA): a pod that failed remembers its rejector
 * plugins (the plugins whose statuses rejected it, Pending ones apart).
 * An event moves an unschedulable pod only when a registration of one of
 * its rejectors (plugin.h: `.events`) matches the event and its hint says
 * Queue: to activeQ at once for a Pending rejector, else after backoff.
 * A pod without rejectors (an error) moves on any event. Events arriving
 * while pods are in flight are kept and replayed when such a pod fails.
 * Pods gated by SchedulingGates move only through their own updates.
 * Unschedulable pods older than 5 minutes are flushed after backoff.
 *
 * SchedulerPopFromBackoffQ (beta, on in 1.34): when activeQ is empty, pop
 * takes the head of the backoff heap of rejected pods even before its
 * backoff ends (never an error-backoff pod); backoff expiry and "now" are
 * compared in whole seconds, and pods of one second are ordered by
 * QueueSort.
 *
 * Threads: every function may be called from any thread (one mutex). The
 * cache listener calls the event functions under the cache lock, so the
 * queue never calls into the cache. sx_queue_pop blocks on a condition
 * variable. Time comes from a clock function (sx_now_s by default) so tests
 * can drive backoff deterministically.
 */
#ifndef SCHEDEXT_QUEUE_H
#define SCHEDEXT_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/framework.h"

struct sx_queue;

/* How long a pod may stay in unschedulablePods (DefaultPodMaxInUnschedulablePodsDuration). */
#define SX_QUEUE_UNSCHEDULABLE_MAX_S 300.0

/* cfg must outlive the queue (profiles: schedulerName, QueueSort of the
 * first profile, PreEnqueue; backoff settings). NULL on failure. */
struct sx_queue *sx_queue_new(const struct sx_config *cfg);
/* Frees every entry. No thread may be blocked in pop (close first). */
void sx_queue_free(struct sx_queue *q);
/* Replaces the clock (tests). now() returns seconds on any monotonic scale. */
void sx_queue_set_clock(struct sx_queue *q, double (*now)(void *ctx), void *ctx);

/* initial * 2^(count-1) capped at max; 0 for count 0 or max 0. */
double sx_queue_backoff_duration(double initial_s, double max_s, uint32_t count);

/* ---------- events (from the cache listener or tests) ---------- */

/* A pod appeared or changed (old may be NULL). Adds, updates, or removes
 * it (bound/deleting/terminal/not ours). A bound pod also counts as a
 * cluster event. */
void sx_queue_pod_update(struct sx_queue *q, const struct sx_pod *old_pod,
			 const struct sx_pod *new_pod);
/* A pod was deleted: leaves every place and the nominator; cluster event. */
void sx_queue_pod_delete(struct sx_queue *q, const struct sx_pod *pod);
/* A node was added/updated (or deleted, node NULL: no move). */
void sx_queue_node_event(struct sx_queue *q, const struct sx_node *old_node,
			 const struct sx_node *new_node);
/* Moves every unschedulable pod after backoff (a wildcard event; the
 * name is its label for logs/metrics). */
void sx_queue_move_all(struct sx_queue *q, const char *event);
/* An event on another resource (storage, DRA kinds): old/new typed as
 * plugin.h says (struct sx_object); both may be NULL. Objects are not kept
 * for in-flight replay (hints then see NULL objects and are not called:
 * Queue). */
void sx_queue_cluster_event(struct sx_queue *q, enum sx_event_resource res, uint32_t action,
			    const void *old_obj, const void *new_obj);
/* AssignedPodDelete for an assumed pod whose binding failed; the pod
 * itself is skipped when skip_self (its failure was a rejection). */
void sx_queue_assigned_pod_deleted(struct sx_queue *q, const struct sx_pod *pod, bool skip_self);
/* ForceActivate: the pod (unschedulable or backing off) goes to activeQ
 * through PreEnqueue. */
void sx_queue_activate(struct sx_queue *q, const struct sx_pod *pod);
/* The same for the pod ns/name (SchedulingQueue.Activate of
 * PodsToActivate); nothing when it is not pending there. */
void sx_queue_activate_name(struct sx_queue *q, sx_str ns, const char *name);

/* ---------- the scheduling side ---------- */

struct sx_queue_item {
	const struct sx_pod *pod;	  /* new reference, caller unrefs */
	const struct sx_profile *profile; /* the pod's profile */
	uint32_t attempts;		  /* pops so far, this one included */
	double initial_attempt;		  /* when the pod first entered activeQ */
	double timestamp;		  /* when it was last queued */
};

/* Moves completed backoffs to activeQ and flushes unschedulable pods older
 * than SX_QUEUE_UNSCHEDULABLE_MAX_S. pop calls it; tests call it after
 * advancing their clock. */
void sx_queue_flush(struct sx_queue *q);

/* Pops the best pod of activeQ into *out (it becomes in flight). Waits at
 * most timeout_s (0: do not wait). Returns 0, SX_ENOENT on timeout, or
 * SX_EIO once the queue is closed. */
int sx_queue_pop(struct sx_queue *q, double timeout_s, struct sx_queue_item *out);

/* Rejector plugins of a failed attempt: bit i = registry index i. */
#define SX_REJ_EXTENDER (1ull << 63) /* pseudo-plugin "Extender": any event */
#define SX_REJ_ANY	(1ull << 62) /* unknown rejector: any event */
struct sx_rejectors {
	uint64_t unschedulable; /* rejected (Unschedulable[AndUnresolvable]) */
	uint64_t pending;	/* returned Pending */
};
/* Adds the plugin of a rejected or Pending status (by name; "Extender" and
 * unknown names set their bits). Success/Error statuses add nothing. */
void sx_rejectors_add_status(struct sx_rejectors *r, const struct sx_status *st);
/* Every rejector of a failed cycle (PreFilter rejection, node statuses,
 * the absent-node status). */
void sx_rejectors_from_result(struct sx_rejectors *r, const struct sx_cycle_result *res);

/* The attempt of an in-flight pod failed (AddUnschedulableIfNotPresent):
 * rejected = the failure was Unschedulable (not an error). The pod (its
 * latest object) goes to unschedulablePods, or to backoffQ when a move
 * happened while it was in flight or it failed with an error. Dropped when
 * it was deleted or bound meanwhile. Returns 0, SX_ENOENT when dropped. */
int sx_queue_requeue(struct sx_queue *q, const struct sx_pod *pod, bool rejected);
/* Same with the attempt's rejectors (AddUnschedulableIfNotPresent): none
 * (rej NULL or empty) = an error, after backoff; otherwise the events seen
 * while the pod was in flight are replayed through the rejectors' hints:
 * activeQ, backoffQ or unschedulablePods. sx_queue_requeue(rejected)
 * passes SX_REJ_ANY. */
int sx_queue_requeue_rejectors(struct sx_queue *q, const struct sx_pod *pod,
			       const struct sx_rejectors *rej);
/* The in-flight pod is done (bound, or dropped). */
void sx_queue_done(struct sx_queue *q, const struct sx_pod *pod);
/* Puts an in-flight pod straight back to activeQ without counting an
 * attempt (e.g. popped just as leadership was lost). */
void sx_queue_return(struct sx_queue *q, const struct sx_pod *pod);

/* ---------- pod groups (queue_group.c) ---------- */

/* The popped pod is a member of a pod group (spec.schedulingGroup): every
 * other member waiting in activeQ, backoffQ or unschedulablePods (not
 * gated) is popped too (upstream podGroupInfoForPod / PopSpecificPod).
 * *out (free() it; unref each pod) gets the popped item and theirs, in
 * upstream's member order (priority, highest first, then first time
 * queued); all members take the group's attempt count and backoff counts
 * (the highest among them), so the group backs off as one entity.
 * Returns 0 or SX_ENOMEM (nothing popped). */
int sx_queue_pop_group(struct sx_queue *q, const struct sx_queue_item *popped,
		       struct sx_queue_item **out, uint32_t *n);

/* scheduler_queued_entities{queue,type} and the pod-group queues of
 * scheduler_pending_pods (upstream metrics.go QueuedEntities,
 * IncompletePodGroupPods, PendingPodGroupPods): per place, pods that are
 * members of no group, and groups (each counted once per place);
 * incomplete = members held back by GangScheduling's PreEnqueue until
 * their group can be scheduled; pending = members waiting while their
 * group's cycle is in flight. */
enum { SX_QUEUE_ACTIVE, SX_QUEUE_BACKOFF, SX_QUEUE_UNSCHEDULABLE, SX_QUEUE_GATED, SX_QUEUE_PLACES };
struct sx_queue_entities {
	uint32_t pods[SX_QUEUE_PLACES], groups[SX_QUEUE_PLACES];
	uint32_t incomplete, pending;
};
void sx_queue_entities(struct sx_queue *q, struct sx_queue_entities *out);

/* Wakes and fails every pop; further pops return SX_EIO. */
void sx_queue_close(struct sx_queue *q);

struct sx_queue_lengths {
	uint32_t active, backoff, unschedulable, gated, in_flight;
};
void sx_queue_lengths(struct sx_queue *q, struct sx_queue_lengths *out);
/* Counters since creation (bench, metrics). */
struct sx_queue_stats {
	uint64_t events;       /* cluster events handled */
	uint64_t moved;	       /* pods moved out of unschedulablePods by events */
	uint64_t hint_calls;   /* queueing hint functions called */
	uint64_t backoff_pops; /* pops from backoffQ with activeQ empty */
};
void sx_queue_stats(struct sx_queue *q, struct sx_queue_stats *out);

/* scheduler_queue_incoming_pods_total{queue,event}: fn is called once per
 * (queue, event) pair seen so far, under the queue lock (fn must not call
 * back into the queue). queue is "active", "backoff", "unschedulable" or
 * "gated"; event is upstream's label ("PodAdd", "ScheduleAttemptFailure",
 * "BackoffComplete", "UnschedulableTimeout", "ForceActivate", "PodUpdate",
 * or a cluster event such as "NodeAdd"). */
#define SX_QUEUE_MAX_INCOMING 128
typedef void (*sx_queue_incoming_fn)(void *ctx, const char *queue, const char *event, uint64_t n);
void sx_queue_incoming(struct sx_queue *q, sx_queue_incoming_fn fn, void *ctx);

/* scheduler_unschedulable_pods{plugin,profile}: per profile index and
 * registry index of plugin, how many pods in unschedulablePods that plugin
 * rejected (a pod counts for every plugin that rejected it). counts has
 * nprofiles * SX_MAX_PLUGINS entries, filled here. */
void sx_queue_unschedulable_by_plugin(struct sx_queue *q, uint32_t *counts, unsigned nprofiles);
/* SchedulerPopFromBackoffQ (default on); tests of plain backoff turn it off. */
void sx_queue_set_pop_from_backoff(struct sx_queue *q, bool on);

/* Where the pod is: "active", "backoff", "unschedulable", "gated",
 * "inflight", or NULL when absent (tests, debug). */
const char *sx_queue_where(struct sx_queue *q, sx_str ns, const char *name);
/* Backoff expiry of a queued pod (its clock), or -1. */
double sx_queue_backoff_expiry(struct sx_queue *q, sx_str ns, const char *name);

/* ---------- nominator (backend/queue/nominator.go) ---------- */

/* Nominates pod to node (SX_STR_EMPTY clears). Bound pods are not added. */
void sx_queue_nominate(struct sx_queue *q, const struct sx_pod *pod, sx_str node);
/* The in-flight pod was assumed on a node (upstream Scheduler.assume):
 * its nomination is dropped (DeleteNominatedPodIfExists) and, until it
 * leaves flight (done or requeued), updates of it nominate it no more
 * (upstream ignores the updates of assumed pods): the binding cycle's
 * own status.nominatedNodeName must not count it twice on its node. */
void sx_queue_assumed(struct sx_queue *q, const struct sx_pod *pod);

/* An immutable copy of the nominations with references held: its `nom`
 * serves the cycle's two-pass filter (pods_for_node returns the latest
 * objects of the pods nominated to a node). Free with
 * sx_nominated_set_free. NULL on OOM. */
struct sx_nominated_set {
	struct sx_nominator nom;
	uint32_t n;
	struct sx_nominated_entry {
		sx_str node;
		const struct sx_pod *pod;
	} * items;
};
struct sx_nominated_set *sx_queue_nominated(struct sx_queue *q);
void sx_nominated_set_free(struct sx_nominated_set *set);

#endif /* SCHEDEXT_QUEUE_H */
