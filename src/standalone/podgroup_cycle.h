/* The standalone loop's pod-group cycle (podgroup_cycle.c). Internal to
 * src/standalone/: scheduler.c hands it the loop's steps it reuses. */
#ifndef SCHEDEXT_STANDALONE_PODGROUP_CYCLE_H
#define SCHEDEXT_STANDALONE_PODGROUP_CYCLE_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/queue.h"

struct sx_sched_metrics;

struct sx_nominator;

struct sx_binder;
struct sx_cache;
struct sx_cycle_result;
struct sx_features;
struct sx_kube;
struct sx_metrics;
struct sx_pg_member;
struct sx_pg_preempt_result;
struct sx_pod_group;
struct sx_profile;
struct sx_scheduler;
struct sx_status;
struct sx_snapshot;

/* What the pod-group cycle uses of the loop (set once by scheduler.c). */
struct sx_pg_loop {
	struct sx_scheduler *s;
	struct sx_queue *q;
	struct sx_cache *cache;
	const struct sx_binder *binder;
	struct sx_kube *kube;
	struct sx_metrics *metrics;
	const struct sx_sched_metrics *met; /* the loop's metric handles */
	bool (*leading)(struct sx_scheduler *s);
	/* One member's filter and score with the loop's cycle options (no
	 * PostFilter); returns as sx_schedule. */
	int (*schedule)(void *s, const struct sx_profile *prof, const struct sx_pod *pod,
			struct sx_snapshot *snap, struct sx_cycle_result *res);
	/* The loop's assume, Reserve, Permit and binding cycle for a member the
	 * group placed on res->selected (takes res->state). */
	void (*bind)(struct sx_scheduler *s, const struct sx_profile *prof,
		     const struct sx_pod *pod, struct sx_snapshot *snap,
		     struct sx_cycle_result *res, double start, uint32_t attempts,
		     double initial_attempt);
	/* The loop's FailureHandler: event, PodScheduled condition, nomination
	 * cleared when clear_nominated, requeue with the rejectors. */
	void (*fail)(struct sx_scheduler *s, const struct sx_profile *prof,
		     const struct sx_pod *pod, const char *msg, bool rejected, bool clear_nominated,
		     double start, const struct sx_rejectors *rej);
	/* The same with a nomination (group preemption's). */
	void (*fail_nominated)(struct sx_scheduler *s, const struct sx_profile *prof,
			       const struct sx_pod *pod, const char *msg, sx_str nominated,
			       double start, const struct sx_rejectors *rej);
	/* Writes the PodGroupInitiallyScheduled condition; NULL: patched
	 * through kube while leading (tests observe it here). */
	void (*condition)(struct sx_scheduler *s, const struct sx_pod_group *pg, bool ok,
			  const char *reason, const char *msg);
	/* The loop's tie-break random state (placements, as nodes). */
	uint64_t *rng;
	/* The nominator of the running cycle (the queue's nominations). */
	const struct sx_nominator *(*nominator)(struct sx_scheduler *s);
};

/* Does the popped item go through the pod-group cycle (a member of a pod
 * group, its profile with GenericWorkload)? */
bool sx_pg_wants(const struct sx_queue_item *it);
/* scheduleOnePodGroup for the popped member it (a reference the caller
 * keeps): pops the rest of its group, runs the algorithm on the loop
 * thread, binds the group or rejects it whole, writes the
 * PodGroupInitiallyScheduled condition. */
void sx_pg_schedule(const struct sx_pg_loop *l, struct sx_queue_item *it);

/* validatePodGroup: do the members m[0..n) (queued, in order) and the
 * group's members bound or assumed in snap share the first one's
 * schedulerName, the PodGroup's priority and one preemption policy (the
 * PodGroup's with PodGroupPreemptionPolicy in f, else the first one's)?
 * false with upstream's words in msg otherwise. */
bool sx_pg_validate(const struct sx_pg_member *m, uint32_t n, const struct sx_pod_group *pg,
		    const struct sx_snapshot *snap, const struct sx_features *f, char *msg,
		    size_t len);

/* What the cycle decided for the group (upstream podGroupAlgorithmResult
 * after applyPodGroupPostFilterResult). */
struct sx_pg_outcome {
	const struct sx_status *group;	       /* the group's status (NULL: Success) */
	const struct sx_status *algorithm;     /* the algorithm's, before PodGroupPostFilter */
	bool waiting;			       /* waitingOnPreemption */
	const struct sx_pg_preempt_result *pf; /* its nominations (when waiting) */
};

/* submitPodGroupAlgorithmResult for m[0..n) (items[i] popped with m[i]):
 * with a Success every placed member goes to its binding cycle, the rest
 * are rejected; otherwise every member is rejected: with its own error
 * (an Error group) or FitError (it did not fit), a placed one with the
 * group's status (and its nomination when waiting on preemption), one
 * never tried with the algorithm's status. Then the PodGroupInitiallyScheduled
 * condition (never True to False) and
 * scheduler_podgroup_schedule_attempts_total{result} with result
 * scheduled, unschedulable, waiting_on_preemption or error. algo_s < 0:
 * no algorithm duration to observe. */
void sx_pg_submit(const struct sx_pg_loop *l, struct sx_queue_item *items, struct sx_pg_member *m,
		  uint32_t n, const struct sx_pod_group *pg, const struct sx_pg_outcome *o,
		  double start, double algo_s);

#endif /* SCHEDEXT_STANDALONE_PODGROUP_CYCLE_H */
