/* The framework handle: what a profile's plugins may use of the process
 * they run in, one per profile (upstream framework.Handle,
 * pkg/scheduler/framework/interface.go, built per profile by
 * runtime.NewFramework in pkg/scheduler/framework/runtime/framework.go).
 *
 * Ownership:
 *   1. The profile owns its handle: config.c makes it before the
 *      profile's plugins' init, which receives it and may keep the
 *      pointer, and frees it after their destroy.
 *   2. The handle owns its preemption evaluator state and its listener
 *      table; it borrows the DRA claims tracker (owned by the
 *      configuration, shared by its profiles as upstream's one
 *      SharedDRAManager per scheduler) and everything in sx_handle_env.
 *   3. A front end that runs real cycles (the standalone loop) attaches
 *      its environment with sx_handle_attach before its first cycle and
 *      detaches it before what it points at goes away. Without one
 *      (explain, the extender) the handle has no API client, no binder
 *      and no applier: plugins answer as dry runs.
 *
 * Threads: every function may be called from any thread. Listeners are
 * registered from plugin init and removed in destroy (the profile's
 * construction and teardown, no cycle running); events may arrive on any
 * thread, under the cache's and the queue's locks, so a listener must be
 * quick and must not call back into the cache or the queue.
 */
#ifndef SCHEDEXT_HANDLE_H
#define SCHEDEXT_HANDLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/features.h"
#include "schedext/model.h"
#include "schedext/status.h"

struct sx_binder;
struct sx_binding;
struct sx_cache;
struct sx_dra_claims;
struct sx_extenders;
struct sx_kube;
struct sx_metrics;
struct sx_nominator;
struct sx_pod;
struct sx_pool;
struct sx_preempt_result;
struct sx_preemption_eval;
struct sx_profile;
struct sx_waiting_pod;

/* Carries out a successful preemption (preemption.h): evicts the
 * victims, marking the preemptor running in ev (sx_preemption_begin)
 * until they are gone. NULL or an Error status (its message becomes the
 * PostFilter error). Called by DefaultPreemption on the cycle's thread. */
typedef struct sx_status *(*sx_preempt_apply_fn)(void *ctx, struct sx_preemption_eval *ev,
						 const struct sx_pod *preemptor,
						 const struct sx_preempt_result *r);

/* Carries out a successful group preemption (podgroup.h,
 * sx_pg_preempt_result): evicts the victims, marking the group running in
 * ev under sx_pg_preemption_key until they are gone. NULL or an Error
 * status. Called by DefaultPreemption's PodGroupPostFilter on the cycle's
 * thread. */
struct sx_pod_group;
struct sx_pg_preempt_result;
typedef struct sx_status *(*sx_preempt_apply_group_fn)(void *ctx, struct sx_preemption_eval *ev,
						       const struct sx_pod_group *pg,
						       const struct sx_pod *const *members,
						       uint32_t nmembers,
						       const struct sx_pg_preempt_result *r);

/* upstream events.EventRecorder.Eventf: one Event about pod, reported by
 * component (the profile's schedulerName: upstream makes one recorder
 * per profile). */
struct sx_event_recorder {
	void (*record)(void *ctx, const char *component, const struct sx_pod *pod, const char *type,
		       const char *reason, const char *action, const char *message);
	void *ctx;
};

/* What a front end lends the profiles (all borrowed; NULL = none). */
struct sx_handle_env {
	struct sx_cache *cache; /* the live cache (informer listers) */
	struct sx_kube *kube;	/* Handle.ClientSet */
	/* The front end's binder (binder.h): how DefaultBinder POSTs the
	 * Binding (upstream's goes through Handle.ClientSet) and how the
	 * binding cycle finishes or forgets the assumed pod. */
	const struct sx_binder *binder;
	const struct sx_nominator *nominator;	  /* Handle.PodNominator */
	struct sx_extenders *extenders;		  /* Handle.Extenders (preempt and bind verbs) */
	const struct sx_event_recorder *recorder; /* Handle.EventRecorder (sx_handle_event) */
	struct sx_metrics *metrics;		  /* frameworkImpl.metricsRecorder's registry */
	struct sx_pool *pool;			  /* Handle.Parallelizer */
	sx_preempt_apply_fn apply;		  /* the evaluator's eviction; NULL: dry run */
	void *apply_ctx;
	sx_preempt_apply_group_fn apply_group; /* group preemption's; NULL: dry run */
	uint64_t seed;			       /* preemption's candidate offsets; 0 = offset 0 */
	/* Moves the pending pod ns/name, unschedulable or backing off, to
	 * activeQ (upstream framework.PodsToActivate, which the scheduling
	 * cycle hands to SchedulingQueue.Activate); NULL: nothing to move. */
	void (*activate)(void *ctx, sx_str ns, const char *name);
	void *activate_ctx;
};

/* A plugin instance's interest in cluster objects (upstream: the
 * informer event handlers a plugin registers through
 * Handle.SharedInformerFactory). */
struct sx_handle_listener {
	uint64_t kinds; /* bit (1 << enum sx_kind) per kind of interest */
	/* An object of one of those kinds was added (old NULL), changed or
	 * deleted (new NULL) in the cache. */
	void (*object)(void *self, enum sx_kind kind, const void *old_obj, const void *new_obj);
	/* The environment was attached or detached (waiters look again). */
	void (*env_changed)(void *self);
	void *self;
};

#define SX_HANDLE_MAX_LISTENERS 8

struct sx_handle {
	const struct sx_profile *profile;      /* the profile served (its owner) */
	struct sx_dra_claims *dra;	       /* Handle.SharedDRAManager; borrowed, may be NULL */
	struct sx_preemption_eval *preemption; /* owned: the evaluator's running set, rng, counts */
	pthread_mutex_t mu;		       /* guards env and listeners */
	struct sx_handle_env env;
	unsigned nlisteners;
	struct sx_handle_listener listeners[SX_HANDLE_MAX_LISTENERS];
	/* The pods waiting at Permit (upstream frameworkImpl.waitingPods):
	 * linked by binding_cycle.c from sx_run_permit until
	 * sx_waiting_pod_free; walked with sx_handle_iterate_waiting
	 * (binding_cycle.h). */
	pthread_mutex_t waiting_mu;
	struct sx_waiting_pod *waiting;
	/* The bindings in PreBind (upstream podsInPreBindMap), linked by
	 * binding_cycle.c under waiting_mu; preemption may cancel them
	 * (sx_handle_cancel_pre_bind). */
	struct sx_binding *pre_binding;
};

/* The release and gates plugins of h follow: its profile's, or the
 * default release's when there is no handle or profile (plugins built
 * directly by tests). */
struct sx_features sx_handle_features(const struct sx_handle *h);

/* A handle for prof with an empty environment; NULL when out of memory.
 * dra is borrowed (NULL: DynamicResources tracks nothing in flight). */
struct sx_handle *sx_handle_new(const struct sx_profile *prof, struct sx_dra_claims *dra);
void sx_handle_free(struct sx_handle *h);

/* Installs (env NULL: removes) the front end's environment (copied) and
 * tells every listener (env_changed). */
void sx_handle_attach(struct sx_handle *h, const struct sx_handle_env *env);
/* A copy of the current environment (zeroed when none; h may be NULL). */
void sx_handle_env(const struct sx_handle *h, struct sx_handle_env *out);

/* Records an Event about pod through the recorder of h's environment,
 * as h's profile (upstream Handle.EventRecorder().Eventf); nothing
 * without a recorder (explain, the extender) or a handle. */
void sx_handle_event(const struct sx_handle *h, const struct sx_pod *pod, const char *type,
		     const char *reason, const char *action, const char *message);

/* Tells every listener to look again (their env_changed), as when the
 * environment changes: a waiting PreBind notices its cancellation. */
void sx_handle_wake(struct sx_handle *h);

/* Registers / removes a listener (matched by self). 0, or SX_ENOMEM when
 * the table is full. */
int sx_handle_listen(struct sx_handle *h, const struct sx_handle_listener *l);
void sx_handle_unlisten(struct sx_handle *h, const void *self);

/* Delivers a cache change to the listeners interested in kind. */
void sx_handle_object_event(struct sx_handle *h, enum sx_kind kind, const void *old_obj,
			    const void *new_obj);

/* ---------- every profile of a configuration ---------- */

struct sx_config;

/* Attaches env to every profile's handle (NULL: detaches) and has the
 * configuration's DRA claims tracker follow the live cache's claims by
 * name while attached (env->cache set). */
void sx_config_attach(const struct sx_config *cfg, const struct sx_handle_env *env);

/* A cache change, as the cache listener reports it (informer.h): the
 * DRA claims tracker hears of ResourceClaims, then every profile's
 * handle delivers it to its listeners. */
void sx_config_object_event(const struct sx_config *cfg, enum sx_kind kind, const void *old_obj,
			    const void *new_obj);

#endif /* SCHEDEXT_HANDLE_H */
