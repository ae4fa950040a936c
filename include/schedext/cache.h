/* The cache: nodes, pods (bound, pending, assumed) and the other kinds,
 * with per-node NodeInfo sums, and immutable snapshots for scheduling cycles
 * (upstream pkg/scheduler/backend/cache).
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

struct sx_cache;

struct sx_pvc_ref {
	sx_str ns;
	sx_str name;
	int32_t count;
};

/* Per-node sums plugins need. Immutable once in a snapshot. */
struct sx__pods_block;

struct sx_node_info {
	atomic_int refcount;
	uint64_t generation;         /* cache generation of the last change */
	sx_str name;
	const struct sx_node *node;  /* NULL while pods reference an unknown node */
	uint32_t npods;
	/* Σ pod.request (scalar owned); right after npods so that what
	 * NodeResourcesFit's Filter reads of a NodeInfo (node, npods, cpu,
	 * memory, ephemeral storage) is in its first cache line. */
	struct sx_resources requested;
	const struct sx_pod **pods;  /* bound and assumed pods on the node (pods_block's array) */
	uint32_t naffinity;
	const struct sx_pod **affinity_pods;     /* podAffinity or podAntiAffinity set */
	uint32_t nanti;
	const struct sx_pod **required_anti_pods; /* required anti-affinity non-empty */
	int64_t nonzero_milli_cpu;               /* Σ pod.nonzero_milli_cpu */
	int64_t nonzero_memory;
	uint32_t nports;
	struct sx_host_port *used_ports;         /* multiset: one entry per claim */
	uint32_t npvcs;
	struct sx_pvc_ref *pvcs;                 /* PVCRefCounts */
	uint32_t cap_pods, cap_affinity, cap_anti, cap_ports, cap_pvcs; /* internal */
	/* (appended for the cycle's fast paths) Pods per namespace, so plugins
	 * skip nodes holding nothing their terms can select. Unordered. */
	uint32_t nns, cap_ns;
	struct sx_ns_count *ns_counts;
	uint32_t naffinity_any_ns; /* affinity pods with a term that may select another namespace */
	uint32_t nanti_any_ns;     /* required-anti pods with such a required anti term */
	/* (appended) Bloom filter of node->images' names (one bit per name,
	 * sx_node_info_image_bit), valid while image_bloom_node == node: lets
	 * ImageLocality skip the image walk on nodes lacking the pod's images. */
	const struct sx_node *image_bloom_node;
	uint64_t image_bloom[2];
	/* (appended) node->images flattened: each name once with the size of
	 * the first image listing it, sorted by name; valid with the filter
	 * (image_bloom_node == node). Shared between clones. */
	struct sx_node_images *images;
	/* (appended) Holder of `pods` and of the references on them, shared
	 * between a NodeInfo and its clones (internal, node_info.c). */
	struct sx__pods_block *pods_block;
};

/* (appended) See sx_node_info.images. */
struct sx_node_images {
	atomic_int refcount;
	uint32_t n;
	struct sx_node_image { sx_str name; int64_t size; } e[];
};

/* (appended) Size of the first image of ni's node listing `name`, -1 when
 * none does (what a walk over node->images returns). */
int64_t sx_node_info_image_size(const struct sx_node_info *ni, sx_str name);

/* (appended) The bloom bit of image name id: word (bit >> 6), bit (bit & 63). */
static inline unsigned sx_node_info_image_bit(sx_str name)
{
	return (unsigned)(((uint64_t)name * 0x9E3779B97F4A7C15ull) >> 57);
}

/* (appended) False when ni's node certainly lists no image named `name`. */
static inline bool sx_node_info_may_have_image(const struct sx_node_info *ni, sx_str name)
{
	unsigned bit = sx_node_info_image_bit(name);

	if (ni->image_bloom_node != ni->node)
		return true; /* filter stale or never computed */
	return (ni->image_bloom[bit >> 6] >> (bit & 63)) & 1;
}

/* (appended) Pods of one namespace on a NodeInfo. */
struct sx_ns_count {
	sx_str ns;
	uint32_t pods;     /* all pods of ns */
	uint32_t affinity; /* of which in affinity_pods */
	uint32_t anti;     /* of which in required_anti_pods */
};

/* (appended) Counts of namespace ns on ni; NULL when ni has no pod of ns. */
const struct sx_ns_count *sx_node_info_ns(const struct sx_node_info *ni, sx_str ns);

struct sx_node_info *sx_node_info_ref(const struct sx_node_info *ni);
void sx_node_info_unref(const struct sx_node_info *ni);

/* Standalone NodeInfo building blocks (used by preemption dry-runs and the
 * nominated-pods pass, on private copies). new() returns refcount 1. */
struct sx_node_info *sx_node_info_new(sx_str name, const struct sx_node *node);
struct sx_node_info *sx_node_info_clone(const struct sx_node_info *ni);
int sx_node_info_add_pod(struct sx_node_info *ni, const struct sx_pod *pod);
/* Removes the pod with the same namespace/name; SX_ENOENT when absent,
 * SX_ENOMEM when a pod list shared with clones could not be copied. */
int sx_node_info_remove_pod(struct sx_node_info *ni, const struct sx_pod *pod);
/* Replaces the node object (ref taken on the new one). */
void sx_node_info_set_node(struct sx_node_info *ni, const struct sx_node *node);
/* Is this host port claim free on the node? (upstream HostPortInfo.CheckConflict) */
bool sx_node_info_port_conflicts(const struct sx_node_info *ni, const struct sx_host_port *p);

/* Immutable view of the cluster for one or more scheduling cycles. */
struct sx_snapshot {
	atomic_int refcount;
	uint64_t generation;
	uint32_t nnodes;
	struct sx_node_info **nodes;  /* only NodeInfos with a node; node-tree order */
	uint32_t nwith_affinity;
	uint32_t *with_affinity;      /* indices into nodes of nodes having affinity pods */
	uint32_t nwith_required_anti;
	uint32_t *with_required_anti;
	/* name -> index (open addressing; internal layout) */
	uint32_t index_cap;
	uint32_t *index;              /* UINT32_MAX = empty slot */
	/* image name -> number of nodes listing it */
	uint32_t image_cap;
	struct sx_image_count { sx_str name; uint32_t nodes; } *image_counts;
	/* Other kinds, each array sorted by (namespace, name) */
	uint32_t nnamespaces;
	const struct sx_generic **namespaces;
	uint32_t nservices;
	const struct sx_generic **services;
	uint32_t ncontrollers;        /* ReplicationControllers, ReplicaSets, StatefulSets */
	const struct sx_generic **controllers;
	uint32_t npdbs;
	const struct sx_generic **pdbs;
	uint32_t nstorage_classes;
	const struct sx_generic **storage_classes;
	uint32_t npvs;
	const struct sx_pv **pvs;
	uint32_t npvcs;
	const struct sx_pvc **pvcs;
	uint32_t ncsi_nodes;
	const struct sx_csi_node **csi_nodes;
	/* (appended) resource.k8s.io/v1 kinds (dra.h), same order */
	uint32_t ndevice_classes;
	const struct sx_dra_object **device_classes;
	uint32_t nresource_slices;
	const struct sx_dra_object **resource_slices;
	uint32_t nresource_claims;
	const struct sx_dra_object **resource_claims;
	uint32_t nclaim_templates;
	const struct sx_dra_object **claim_templates;
	void *internal;               /* shared immutable parts, owned */
	/* (appended) Σ over nodes of their ns_counts, sorted by ns (entries
	 * may be all zero), and of naffinity_any_ns / nanti_any_ns: lets a
	 * plugin skip a scan over every node when no pod anywhere can match.
	 * Valid only when has_ns_totals (snapshots built by the cache). */
	bool has_ns_totals;
	uint32_t nns_totals;
	struct sx_ns_count *ns_totals;
	uint64_t affinity_any_ns, anti_any_ns;
	/* (appended) Storage kinds, each sorted by (namespace, name). */
	uint32_t ncsi_drivers;
	const struct sx_csi_driver **csi_drivers;
	uint32_t ncsi_capacities;
	const struct sx_csi_capacity **csi_capacities;
	uint32_t nvolume_attachments;
	const struct sx_volume_attachment **volume_attachments;
};

/* (appended) For loops over many nodes of a snapshot that read each
 * node's labels (PreFilter/PreScore scans): call at step k of a walk over
 * list[0..n) (snapshot indices; list NULL = 0..n-1) to start loading the
 * NodeInfo 8 steps ahead, its node 4 ahead and the node's labels 2 ahead,
 * so the misses of successive nodes overlap instead of queueing. */
static inline void sx_snapshot_prefetch(const struct sx_snapshot *snap, const uint32_t *list,
					uint32_t n, uint32_t k)
{
	const struct sx_node_info *ni;

	if (k + 8 < n)
		__builtin_prefetch(snap->nodes[list ? list[k + 8] : k + 8]);
	if (k + 4 < n) {
		ni = snap->nodes[list ? list[k + 4] : k + 4];
		__builtin_prefetch(ni->node);
		__builtin_prefetch(ni->ns_counts);
	}
	if (k + 2 < n) {
		ni = snap->nodes[list ? list[k + 2] : k + 2];
		if (ni->node)
			__builtin_prefetch(ni->node->meta.labels.items);
	}
}

/* (appended) False when no NodeInfo of snap holds an affinity pod (resp. a
 * required-anti-affinity pod) whose terms could select a pod of namespace
 * ns: node_affinity_may_select-style checks fail on every node. True when
 * unknown. */
bool sx_snapshot_may_select_affinity(const struct sx_snapshot *snap, sx_str ns);
bool sx_snapshot_may_select_anti(const struct sx_snapshot *snap, sx_str ns);

/* Index of the node named `name`, or -1. */
int sx_snapshot_find(const struct sx_snapshot *snap, sx_str name);
/* Number of nodes listing image `name` (ImageStates.NumNodes). */
uint32_t sx_snapshot_image_nodes(const struct sx_snapshot *snap, sx_str name);
/* Labels of namespace `ns`, or NULL when unknown. */
const struct sx_labels *sx_snapshot_namespace_labels(const struct sx_snapshot *snap, sx_str ns);

/* ---- storage listers (what upstream's volume plugins list) ----
 * Objects and arrays belong to the snapshot: valid while the caller holds
 * it, never freed by the caller. Lookups return NULL (n 0) when absent. */
/* PVC namespace/name. */
const struct sx_pvc *sx_snapshot_find_pvc(const struct sx_snapshot *snap, sx_str ns, sx_str name);
/* PV, StorageClass, CSINode (by node name), CSIDriver by name. */
const struct sx_pv *sx_snapshot_find_pv(const struct sx_snapshot *snap, sx_str name);
const struct sx_storage_class *sx_snapshot_find_storage_class(const struct sx_snapshot *snap,
							      sx_str name);
const struct sx_csi_node *sx_snapshot_find_csi_node(const struct sx_snapshot *snap, sx_str name);
/* (appended) A DRA object of kind (DeviceClass: ns SX_STR_EMPTY), or NULL. */
struct sx_dra_object;
const struct sx_dra_object *sx_snapshot_find_dra(const struct sx_snapshot *snap, enum sx_kind kind,
						 sx_str ns, sx_str name);
const struct sx_csi_driver *sx_snapshot_find_csi_driver(const struct sx_snapshot *snap,
							sx_str name);
/* Every PV whose (effective) storage class is cls (SX_STR_EMPTY: PVs
 * without a class), ordered by name; *n their count. */
const struct sx_pv *const *sx_snapshot_pvs_by_class(const struct sx_snapshot *snap, sx_str cls,
						    uint32_t *n);
/* CSIStorageCapacities of storage class cls (any namespace). */
const struct sx_csi_capacity *const *sx_snapshot_capacities_by_class(
	const struct sx_snapshot *snap, sx_str cls, uint32_t *n);
/* VolumeAttachments whose spec.nodeName is node. */
const struct sx_volume_attachment *const *sx_snapshot_attachments_on_node(
	const struct sx_snapshot *snap, sx_str node, uint32_t *n);
/* Is claim ns/name used by a pod bound or assumed to a node
 * (StorageInfos().IsPVCUsedByPods)? */
bool sx_snapshot_pvc_in_use(const struct sx_snapshot *snap, sx_str ns, sx_str name);

/* A private copy of snap whose nodes named in `nodes` use these node
 * objects (pods and sums still from snap; nodes unknown to snap get an empty
 * NodeInfo). Used for extender requests with full Node objects
 * (nodeCacheCapable: false). Returns refcount 1 or NULL. */
struct sx_snapshot *sx_snapshot_with_nodes(const struct sx_snapshot *snap,
					   const struct sx_node *const *nodes, uint32_t n);

struct sx_snapshot *sx_snapshot_ref(const struct sx_snapshot *snap);
void sx_snapshot_unref(const struct sx_snapshot *snap);

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

/* Assumed pods (backend/cache/cache.go AssumePod). assume: the pod (pending or unknown) is
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
/* (clarified by the cache author) A new reference to the node object, or
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
	uint32_t pods;          /* all pods */
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
	void (*node_changed)(void *ctx, const struct sx_node *old_node, const struct sx_node *new_node);
	void *ctx;
	/* (appended, optional) Any other kind added (old NULL), updated, or
	 * deleted (new NULL): the storage kinds' cluster events. */
	void (*object_changed)(void *ctx, enum sx_kind kind, const void *old_obj,
			       const void *new_obj);
};
void sx_cache_set_listener(struct sx_cache *cache, const struct sx_cache_listener *l);

#endif /* SCHEDEXT_CACHE_H */
