/* The PostFilter extension point (reference plugins.md §1.11).
 * Implemented in src/framework/post_filter.c; runs on the cycle's thread.
 */
#ifndef SCHEDEXT_POST_FILTER_H
#define SCHEDEXT_POST_FILTER_H

#include "schedext/status.h"

struct sx_cycle_state;
struct sx_filtered_status;
struct sx_pod;
struct sx_post_filter_result;
struct sx_profile;

/* PostFilter plugins in order (plugins.md §1.11): Success stops and fills
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

#endif /* SCHEDEXT_POST_FILTER_H */
