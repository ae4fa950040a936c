/* The binder: the one way a pod gets bound, for both front ends
 * (upstream defaultbinder/default_binder.go, extender.go HTTPExtender.Bind). A binding is
 *   1. assume: the pod is counted on the node in the cache,
 *   2. bind: a Binding is POSTed to the API server with the pod's UID as
 *      precondition (without an API server the cache's word is final),
 *   3. finish on success, forget on failure.
 * The extender's /bind runs all three (sx_binder_bind). In the standalone
 * scheduler the binding cycle (binding_cycle.c) assumes before Reserve and
 * finishes or forgets after the binding cycle, and DefaultBinder runs
 * step 2 (sx_binder_post_pod) with the binder of its profile's handle
 * (handle.h). No binder is process-global. "Binder" names only this;
 * the threads that run binding cycles are bind workers.
 * Implemented in src/framework/binder.c.
 *
 * Threads: a binder is read-only once set up; any thread may bind.
 */
#ifndef SCHEDEXT_BINDER_H
#define SCHEDEXT_BINDER_H

#include <stdbool.h>

#include "schedext/common.h"
#include "schedext/intern.h"
#include "schedext/status.h"

struct sx_cache;
struct sx_kube;
struct sx_leader;
struct sx_pod;

struct sx_binder {
	struct sx_cache *cache;	  /* assume/finish/forget here; NULL: no bookkeeping */
	struct sx_kube *kube;	  /* POST Bindings here; NULL: cache-only */
	struct sx_leader *leader; /* step 2 only while it leads; NULL: always */
	/* Step 2 replaced, for unit tests that have no API server: NULL on
	 * success, else the failure. NULL: the API server (kube). */
	struct sx_status *(*post)(void *ctx, const struct sx_pod *pod, sx_str node);
	void *ctx;
};

/* Step 1: 0, or negative when the pod is already assumed or bound. */
int sx_binder_assume(const struct sx_binder *b, const struct sx_pod *pod, sx_str node);
/* Step 3: finishes the binding (bound) or forgets the assumed pod. */
void sx_binder_done(const struct sx_binder *b, sx_str ns, const char *name, bool bound);

/* Step 2 through the API server: POST the Binding ns/name -> node with
 * uid as precondition. NULL when bound (always without an API server),
 * else an Error carrying the API server's message. */
struct sx_status *sx_binder_post(const struct sx_binder *b, const char *ns, const char *name,
				 const char *uid, const char *node);
/* Step 2 for DefaultBinder: b->post, or, while b's leader leads (Error
 * "not the leader: binding of NS/NAME abandoned" otherwise),
 * sx_binder_post of the pod's identity; "already assigned to node
 * \"<node>\"" is success (an earlier attempt got through). b NULL: Error
 * "no binder configured". */
struct sx_status *sx_binder_post_pod(const struct sx_binder *b, const struct sx_pod *pod,
				     sx_str node);

/* Steps 1-3 (the extender's /bind): pod is the cached pod (NULL when the
 * cache does not know it: then nothing is assumed). NULL when bound. */
struct sx_status *sx_binder_bind(const struct sx_binder *b, const struct sx_pod *pod,
				 const char *ns, const char *name, const char *uid, sx_str node);

#endif /* SCHEDEXT_BINDER_H */
