/* The binding cycle's extension points, run one plugin after another on
 * the cycle's thread: Reserve/Unreserve, Permit and waiting pods,
 * PreBind, Bind, PostBind (upstream schedule_one.go bindingCycle). Implemented
 * in src/framework/binding_cycle.c.
 *
 * Threads: the sx_run_* calls run on the thread that owns the cycle
 * state; a waiting pod may be allowed or rejected from any thread.
 */
#ifndef SCHEDEXT_BINDING_CYCLE_H
#define SCHEDEXT_BINDING_CYCLE_H

#include "schedext/common.h"
#include "schedext/status.h"

struct sx_cycle_state;
struct sx_pod;
struct sx_profile;

struct sx_status *sx_run_reserve(const struct sx_profile *prof, struct sx_cycle_state *cs,
				 const struct sx_pod *pod, sx_str node);
/* Unreserve of every Reserve plugin in reverse order. */
void sx_run_unreserve(const struct sx_profile *prof, struct sx_cycle_state *cs,
		      const struct sx_pod *pod, sx_str node);

/* Permit. On Wait, *waiting is a new waiting pod (see below). */
struct sx_waiting_pod;
struct sx_status *sx_run_permit(const struct sx_profile *prof, struct sx_cycle_state *cs,
				const struct sx_pod *pod, sx_str node,
				struct sx_waiting_pod **waiting);
/* Blocks until every waiting plugin allowed (NULL), one rejected, or a
 * timer fired (Unschedulable "rejected due to timeout after waiting <d> at
 * plugin <name>"). */
struct sx_status *sx_waiting_pod_wait(struct sx_waiting_pod *wp);
void sx_waiting_pod_allow(struct sx_waiting_pod *wp, const char *plugin);
void sx_waiting_pod_reject(struct sx_waiting_pod *wp, const char *plugin, const char *msg);
/* Frees wp and takes it off its profile's handle's waiting pods. */
void sx_waiting_pod_free(struct sx_waiting_pod *wp);

/* Calls fn for every pod waiting at Permit in h's profile (upstream
 * Handle.IterateOverWaitingPods), under the handle's waiting lock: fn may
 * allow or reject wp, must not free it nor start another Permit. The pod
 * is the one Permit ran for (borrowed for the call). */
struct sx_handle;
typedef void (*sx_waiting_pod_fn)(void *ctx, struct sx_waiting_pod *wp, const struct sx_pod *pod);
void sx_handle_iterate_waiting(struct sx_handle *h, sx_waiting_pod_fn fn, void *ctx);

struct sx_status *sx_run_pre_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
				  const struct sx_pod *pod, sx_str node);
/* Bind plugins in order (Skip -> next); all Skip -> Skip status. */
struct sx_status *sx_run_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
			      const struct sx_pod *pod, sx_str node);
void sx_run_post_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
		      const struct sx_pod *pod, sx_str node);

#endif /* SCHEDEXT_BINDING_CYCLE_H */
