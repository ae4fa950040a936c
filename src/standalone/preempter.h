/* Asynchronous preemption for the standalone loop (upstream preemption.go
 * prepareCandidateAsync, SchedulerAsyncPreemption on in 1.34): one worker thread
 * carries out the preemptions DefaultPreemption decided, off the
 * scheduling thread, as upstream's prepareCandidateAsync goroutine. */
#ifndef SCHEDEXT_STANDALONE_PREEMPTER_H
#define SCHEDEXT_STANDALONE_PREEMPTER_H

#include "schedext/kube.h"
#include "schedext/preemption.h"
#include "schedext/queue.h"

struct sx_preempter;

/* Called on the worker once a victim is preempted (the Preempted event):
 * the preemptor's type ("pod" or "PodGroup"), its UID and the node
 * ("cluster" for a pod group: its domain is the whole cluster); its
 * DELETE succeeded (in_memory NULL), or in_memory says how it was
 * preempted without one (the in_memory_fn's answer). */
typedef void (*sx_preempted_fn)(void *ctx, const struct sx_pod *victim, const char *type,
				const char *uid, const char *node, const char *in_memory);

/* Before a victim's DisruptionTarget and DELETE: preempts it in the
 * scheduler's memory when its binding cycle has not bound it yet (waiting
 * at Permit, in PreBind: upstream Executor.PreemptPod). NULL when it has
 * to be deleted, else what the Preempted event appends ("" for none). */
typedef const char *(*sx_in_memory_fn)(void *ctx, const struct sx_pod *victim,
				       const struct sx_pod *preemptor);

/* kube, q, ctx and metrics must outlive the preempter; in_memory may be
 * NULL. metrics (may be NULL): each preemption's run is observed as
 * upstream's goroutine (preemption.go prepareCandidateAsync):
 * scheduler_preemption_goroutines_duration_seconds{result} and
 * scheduler_preemption_goroutines_execution_total{result}, result
 * "success" or "error" (a family the registry lacks is ignored). NULL on
 * failure. */
struct sx_metrics;
struct sx_preempter *sx_preempter_start(struct sx_kube *kube, struct sx_queue *q,
					sx_preempted_fn on_preempted, sx_in_memory_fn in_memory,
					void *ctx, struct sx_metrics *metrics);

/* Queues the preemption of r (references taken; r may be freed after).
 * The preemptor is marked running in ev, the evaluator of its profile's
 * handle (sx_preemption_begin; ev must outlive the preempter), before this
 * returns. Then, on the worker: the lower-priority nominations on the node
 * are cleared (queue and status.nominatedNodeName), each victim not yet
 * terminating is preempted in memory (in_memory) or gets the DisruptionTarget condition (True,
 * PreemptionByScheduler, "<schedulerName>: preempting to accommodate a
 * higher priority pod") by a status PATCH and is then deleted with its UID
 * as precondition (NotFound counts as done); sx_preemption_end comes
 * before the last victim's deletion. A failure activates the preemptor
 * again (upstream: Activate after a failed goroutine). Returns 0 or
 * SX_ENOMEM. */
int sx_preempter_submit(struct sx_preempter *p, struct sx_preemption_eval *ev,
			const struct sx_pod *preemptor, const struct sx_preempt_result *r);

/* The same for a pod group's preemption (podgroup.h): the group is marked
 * running under sx_pg_preemption_key; the DisruptionTarget message says
 * "higher priority PodGroup"; no nomination is cleared (the domain is the
 * cluster, not a node); a failure activates every member again. */
struct sx_pod_group;
struct sx_pg_preempt_result;
int sx_preempter_submit_group(struct sx_preempter *p, struct sx_preemption_eval *ev,
			      const struct sx_pod_group *pg, const struct sx_pod *const *members,
			      uint32_t nmembers, const struct sx_pg_preempt_result *r);

/* Finishes the queued preemptions, then stops the worker. */
void sx_preempter_stop(struct sx_preempter *p);

#endif /* SCHEDEXT_STANDALONE_PREEMPTER_H */
