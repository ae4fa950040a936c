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
 * its DELETE succeeded (in_memory NULL), or in_memory says how it was
 * preempted without one (the in_memory_fn's answer). */
typedef void (*sx_preempted_fn)(void *ctx, const struct sx_pod *victim,
				const struct sx_pod *preemptor, sx_str node, const char *in_memory);

/* Before a victim's DisruptionTarget and DELETE: preempts it in the
 * scheduler's memory when its binding cycle has not bound it yet (waiting
 * at Permit, in PreBind: upstream Executor.PreemptPod). NULL when it has
 * to be deleted, else what the Preempted event appends ("" for none). */
typedef const char *(*sx_in_memory_fn)(void *ctx, const struct sx_pod *victim,
				       const struct sx_pod *preemptor);

/* kube, q and ctx must outlive the preempter; in_memory may be NULL.
 * NULL on failure. */
struct sx_preempter *sx_preempter_start(struct sx_kube *kube, struct sx_queue *q,
					sx_preempted_fn on_preempted, sx_in_memory_fn in_memory,
					void *ctx);

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

/* Finishes the queued preemptions, then stops the worker. */
void sx_preempter_stop(struct sx_preempter *p);

#endif /* SCHEDEXT_STANDALONE_PREEMPTER_H */
