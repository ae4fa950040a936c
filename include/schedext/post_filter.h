/* The PostFilter extension point (runtime/framework.go RunPostFilterPlugins) and the
 * FitError path every front end shares: the standalone scheduler's
 * FailedScheduling message and what explain, pending and what-if report
 * are made by the same calls. Implemented in src/framework/post_filter.c;
 * runs on the cycle's thread.
 */
#ifndef SCHEDEXT_POST_FILTER_H
#define SCHEDEXT_POST_FILTER_H

#include <stdbool.h>

#include "schedext/preemption.h"
#include "schedext/status.h"

struct sx_cycle_result;
struct sx_cycle_state;
struct sx_filtered_status;
struct sx_nominator;
struct sx_pod;
struct sx_post_filter_result;
struct sx_profile;

/* PostFilter plugins in order (RunPostFilterPlugins): Success stops and fills
 * *result (returns NULL); UnschedulableAndUnresolvable stops; another
 * non-rejected code stops as Error; Unschedulable collects its reasons,
 * keeps its nomination (when it makes one) and goes on. Returns the final
 * status (Unschedulable with every collected reason, plugin = the first
 * rejector), owned by the caller; its message is the FitError's
 * PostFilterMsg. Without PostFilter plugins: Unschedulable, no reasons
 * (callers check prof->n[SX_PT_POST_FILTER] first, as upstream). The
 * nomination is in result->nominated_node (SX_STR_EMPTY = none).
 */
struct sx_status *sx_run_post_filter(const struct sx_profile *prof, struct sx_cycle_state *cs,
				     const struct sx_pod *pod,
				     const struct sx_filtered_status *filtered,
				     struct sx_post_filter_result *result);

/* What a cycle in which no node fits comes to (upstream schedule_one.go
 * schedulePod's FitError branch, then FitError.Error). */
struct sx_fit_outcome {
	bool ran; /* PostFilter ran (the profile has PostFilter plugins) */
	struct sx_status
		*status;       /* its final status; NULL = a plugin succeeded or it did not run */
	const char *plugin;    /* the plugin that succeeded, else status->plugin; NULL = none */
	sx_str nominated_node; /* SX_STR_EMPTY = none */
	/* Dry runs: DefaultPreemption's answer (victims, nominations it
	 * clears; empty when it did not run). Its own status is not kept:
	 * its reasons are part of `status`. */
	struct sx_preempt_result preemption;
	char *message; /* the FailedScheduling message: FitError text and PostFilterMsg */
};

/* For `pod` whose cycle `res` (FULL mode, no Error) found no node: runs
 * PostFilter over every node's status (the PreFilter rejection for all
 * nodes after one; the absent status for nodes not evaluated) and writes
 * the message into *out (zeroed here). dry_run: nothing is evicted,
 * deallocated, written or counted, DefaultPreemption uses prof, nominator
 * and offset 0, and out->preemption holds its answer; otherwise the
 * plugins act through the environment in the profile's handle
 * (handle.h). A pod a PreEnqueue
 * plugin rejects never reaches a cycle upstream, so PostFilter does not
 * run for it. Returns 0 or SX_ENOMEM; free *out with sx_fit_outcome_free. */
int sx_fit_error_post_filter(const struct sx_profile *prof, const struct sx_pod *pod,
			     const struct sx_cycle_result *res, bool dry_run,
			     const struct sx_nominator *nominator, struct sx_fit_outcome *out);
void sx_fit_outcome_free(struct sx_fit_outcome *out);

#endif /* SCHEDEXT_POST_FILTER_H */
