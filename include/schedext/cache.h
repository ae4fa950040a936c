/* The cache: nodes, pods (bound, pending, assumed) and the other kinds,
 * with per-node NodeInfo sums (node_info.h), and immutable snapshots for
 * scheduling cycles (snapshot.h); upstream's pkg/scheduler/backend/cache.
 *
 * Threads: one writer at a time (the state-file loader, the watch, the bind
 * path) — every mutating call takes the cache's mutex, so they may come from
 * any thread. Readers never lock NodeInfos: they take a snapshot with
 * sx_cache_snapshot(), which is immutable and reference counted, and read it
 * while updates continue.
 *
 * Copy on write: a NodeInfo shared with a snapshot (refcount > 1) is cloned
 * before the cache mutates it, so building a snapshot only copies pointers of
 * the NodeInfos that changed since the previous snapshot.
 */
#ifndef SCHEDEXT_CACHE_H
#define SCHEDEXT_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/model.h"
#include "schedext/snapshot.h"

struct sx_cache;

/* ---------- cache ---------- */

struct sx_cache *sx_cache_new(void);
void sx_cache_free(struct sx_cache *cache);

/* Adds or replaces an object (the cache takes over the object's reference,
 * whether it succeeds or not). Pods: an unbound pod is stored as pending; a
 * bound one is counted on its node (once the node exists); a pod that was
 * assumed is confirmed. Terminal pods (Succeeded/Failed) are removed. */
int sx_cache_upsert(struct sx_cache *cache, struct sx_object *obj);

/* Deletes by key (namespace SX_STR_EMPTY for cluster kinds). SX_ENOENT when
 * absent. Deleting an assumed pod releases its resources. */
int sx_cache_delete(struct sx_cache *cache, enum sx_kind kind, sx_str ns, const char *name);

/* Relist reconciliation: makes the kind's contents equal objs[0..n): adds or
 * replaces each (taking their references), deletes every other object of
 * that kind (assumed pods whose binding is still in flight are kept). */
int sx_cache_replace_all(struct sx_cache *cache, enum sx_kind kind, struct sx_object *objs,
			 uint32_t n);

/* Applies objs[0..n) atomically: all or nothing (the state-file loader).
 * References are taken over in every case. */
int sx_cache_load(struct sx_cache *cache, struct sx_object *objs, uint32_t n);

/* Assumed pods (upstream backend/cache cacheImpl.AssumePod, FinishBinding,
 * ForgetPod, cleanupAssumedPods). assume: the pod (pending or unknown) is
 * counted on `node` at once; SX_EEXIST when already bound/assumed elsewhere
 * (assuming the same pod UID on the same node again returns 0: idempotent
 * bind). confirm is implicit when a bound pod arrives by upsert. forget:
 * releases an assumed pod (bind failure); SX_ENOENT when not assumed. */
int sx_cache_assume(struct sx_cache *cache, const struct sx_pod *pod, sx_str node);
int sx_cache_finish_binding(struct sx_cache *cache, sx_str ns, const char *name);
int sx_cache_forget(struct sx_cache *cache, sx_str ns, const char *name);
/* Drops assumed pods whose binding finished more than ttl_s seconds ago
 * without confirmation (ttl 0 = never). Returns how many. */
int sx_cache_expire_assumed(struct sx_cache *cache, double ttl_s);

/* A new reference to the current pod object (NULL when absent); node set to
 * where it is counted (bound or assumed), SX_STR_EMPTY when pending. */
const struct sx_pod *sx_cache_get_pod(struct sx_cache *cache, sx_str ns, const char *name,
				      sx_str *node, bool *assumed);
/* A new reference to the node object, or
 * NULL when the node is unknown; release it with sx_node_unref(). */
const struct sx_node *sx_cache_get_node(struct sx_cache *cache, const char *name);

/* Snapshot of the current state (refcount 1 for the caller). Cheap when
 * nothing changed (returns the previous one with a new reference). */
struct sx_snapshot *sx_cache_snapshot(struct sx_cache *cache);

/* Global generation: bumped on every change. */
uint64_t sx_cache_generation(struct sx_cache *cache);

/* Visits every object of a kind under the cache lock, sorted by
 * (namespace, name). For pods, node is where it is counted. The callback must
 * not call back into the cache. */
typedef void (*sx_cache_visit_fn)(void *ctx, const struct sx_object *obj, sx_str node,
				  bool assumed);
void sx_cache_visit(struct sx_cache *cache, enum sx_kind kind, sx_cache_visit_fn fn, void *ctx);

struct sx_cache_stats {
	uint32_t nodes;
	uint32_t pods; /* all pods */
	uint32_t bound_pods;
	uint32_t pending_pods;
	uint32_t assumed_pods;
	uint32_t objects[SX_KIND_COUNT];
};
void sx_cache_stats(struct sx_cache *cache, struct sx_cache_stats *out);

/* Pod events for the scheduling queue (standalone mode): called under the
 * cache lock after each pod/node change; must not call into the cache. */
struct sx_cache_listener {
	void (*pod_changed)(void *ctx, const struct sx_pod *old_pod, const struct sx_pod *new_pod);
	void (*node_changed)(void *ctx, const struct sx_node *old_node,
			     const struct sx_node *new_node);
	void *ctx;
	/* (optional) Any other kind added (old NULL), updated, or
	 * deleted (new NULL): the storage kinds' cluster events. */
	void (*object_changed)(void *ctx, enum sx_kind kind, const void *old_obj,
			       const void *new_obj);
};
void sx_cache_set_listener(struct sx_cache *cache, const struct sx_cache_listener *l);

#endif /* SCHEDEXT_CACHE_H */
