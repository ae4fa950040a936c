/* The binding cycle: its extension points, run one plugin after another
 * on the cycle's thread (Reserve/Unreserve, Permit and waiting pods,
 * PreBind, Bind, PostBind), and its orchestration (upstream
 * schedule_one.go schedulingCycle from assume on, bindingCycle,
 * handleBindingCycleError): sx_reserve_and_permit on the scheduling
 * thread, sx_binding_run on a bind worker. A front end only submits
 * bindings and handles their outcome. Implemented in
 * src/framework/binding_cycle.c.
 *
 * Threads: the sx_run_* calls and sx_binding_run run on the thread that
 * owns the cycle state; a waiting pod may be allowed or rejected, and a
 * binding in PreBind cancelled, from any thread.
 */
#ifndef SCHEDEXT_BINDING_CYCLE_H
#define SCHEDEXT_BINDING_CYCLE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "schedext/common.h"
#include "schedext/status.h"

struct sx_binder;
struct sx_cycle_state;
struct sx_pod;
struct sx_profile;
struct sx_snapshot;

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
/* That timeout's words for a wait of timeout_ms at plugin (Go's
 * Duration.String of the wait), for views that predict it. */
void sx_permit_timeout_message(char *buf, size_t len, uint64_t timeout_ms, const char *plugin);
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

/* ---------- orchestration ---------- */

/* Reserve, then Permit, for a pod the caller assumed on node with binder
 * (upstream schedulingCycle after assume). NULL: go on to the binding
 * cycle (*waiting set when a Permit plugin asked to wait). Otherwise the
 * failure (Reserve's or Permit's status), after Unreserve and the
 * assumed pod forgotten. */
struct sx_status *sx_reserve_and_permit(const struct sx_profile *prof,
					const struct sx_binder *binder, struct sx_cycle_state *cs,
					const struct sx_pod *pod, sx_str node,
					struct sx_waiting_pod **waiting);

/* One binding cycle. The front end fills the first fields, then hands it
 * to sx_binding_run on a worker; the binding owns them afterwards. */
struct sx_binding {
	const struct sx_profile *prof;
	const struct sx_pod *pod;	/* a reference */
	sx_str node;			/* the suggested host */
	struct sx_cycle_state *cs;	/* trimmed to the binding-cycle plugins */
	struct sx_snapshot *snap;	/* a reference for cs->snap, or NULL */
	struct sx_waiting_pod *waiting; /* from sx_reserve_and_permit, or NULL */
	/* Set by sx_binding_run: */
	bool nominated; /* status.nominatedNodeName was set to node */
	/* While in PreBind: on its profile's handle's list (sx_handle_cancel_pre_bind). */
	struct sx_handle *handle;
	atomic_int pre_bind; /* 0 before, 1 in PreBind, 2 past it (prebound), 3 cancelled */
	char cancel_msg[96];
	struct sx_binding *next, **pprev;
};

/* Runs b's binding cycle: NominatedNodeName for expectation (the
 * profile's gate), WaitOnPermit, PreBindPreFlight and PreBind, the binder
 * extenders or the Bind plugins, then on success the binding finished in
 * the cache, the Scheduled event (the handle's recorder) and PostBind;
 * NULL. On failure: Unreserve, the assumed pod forgotten, and the status
 * (rejected at Permit, or an Error). The environment is the profile's
 * handle's (binder, extenders, API client, recorder, metrics). */
struct sx_status *sx_binding_run(struct sx_binding *b);

/* Frees what b owns (cycle state, snapshot, waiting pod, pod reference);
 * not b itself. */
void sx_binding_release(struct sx_binding *b);

/* Cancels the binding cycle of the pod with uid in h's profile while it
 * is in PreBind (upstream podInPreBind.CancelPod): its binding fails with
 * Error "<msg>" after PreBind. true when cancelled (also when it already
 * was), false when no binding of that pod is in PreBind. */
bool sx_handle_cancel_pre_bind(struct sx_handle *h, const char *uid, const char *msg);

/* Rejects the pod with uid waiting at Permit in h's profile as preempted
 * (upstream waitingPod.Preempt): it goes back to the queue with backoff,
 * not to the unschedulable pods. true when it was waiting. */
bool sx_handle_preempt_waiting(struct sx_handle *h, const char *plugin, const char *uid,
			       const char *msg);
/* Rejects the pod with uid waiting at Permit in h's profile (upstream
 * waitingPod.Reject, as preemption did before 1.36): Unschedulable
 * "<msg>" from plugin. true when it was waiting. */
bool sx_handle_reject_waiting(struct sx_handle *h, const char *plugin, const char *uid,
			      const char *msg);

#endif /* SCHEDEXT_BINDING_CYCLE_H */
