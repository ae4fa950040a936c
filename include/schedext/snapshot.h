/* Snapshots: the immutable, reference-counted view of the cluster one or
 * more scheduling cycles read (upstream's internal/cache Snapshot and the
 * listers of framework.Handle: pkg/scheduler/backend/cache/snapshot.go),
 * with lookups by name for the storage and DRA kinds. Built by the cache
 * (src/cache/snapshot.c); lookups in src/cache/snapshot_lookup.c.
 */
#ifndef SCHEDEXT_SNAPSHOT_H
#define SCHEDEXT_SNAPSHOT_H

#include "schedext/node_info.h"

/* Immutable view of the cluster for one or more scheduling cycles. */
struct sx_snapshot {
	atomic_int refcount;
	uint64_t generation;
	uint32_t nnodes;
	struct sx_node_info **nodes; /* only NodeInfos with a node; node-tree order */
	uint32_t nwith_affinity;
	uint32_t *with_affinity; /* indices into nodes of nodes having affinity pods */
	uint32_t nwith_required_anti;
	uint32_t *with_required_anti;
	/* name -> index (open addressing; internal layout) */
	uint32_t index_cap;
	uint32_t *index; /* UINT32_MAX = empty slot */
	/* image name -> number of nodes listing it */
	uint32_t image_cap;
	struct sx_image_count {
		sx_str name;
		uint32_t nodes;
	} * image_counts;
	/* Other kinds: for each CACHE_GROUP(G, field, T) row of kinds.def,
	 * `uint32_t nfield; const struct T **field;` (namespaces, services,
	 * controllers (ReplicationControllers, ReplicaSets, StatefulSets),
	 * pdbs, pvs, pvcs, storage_classes, csi_nodes, device_classes,
	 * resource_slices, resource_claims, claim_templates, csi_drivers,
	 * csi_capacities, volume_attachments, ...), each array sorted by
	 * (namespace, name, kind). */
#define SNAPSHOT_FIELDS_CACHE_OWN
#define SNAPSHOT_FIELDS_CACHE_JOIN(G)
#define SNAPSHOT_FIELDS_CACHE_GROUP(G, FIELD, T)                                                   \
	uint32_t n##FIELD;                                                                         \
	const struct T **FIELD;
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, ...)          \
	SNAPSHOT_FIELDS_##CACHE
#include "schedext/kinds.def"
#undef SNAPSHOT_FIELDS_CACHE_OWN
#undef SNAPSHOT_FIELDS_CACHE_JOIN
#undef SNAPSHOT_FIELDS_CACHE_GROUP
	void *internal; /* shared immutable parts, owned */
	/* Σ over nodes of their ns_counts, sorted by ns (entries
	 * may be all zero), and of naffinity_any_ns / nanti_any_ns: lets a
	 * plugin skip a scan over every node when no pod anywhere can match.
	 * Valid only when has_ns_totals (snapshots built by the cache). */
	bool has_ns_totals;
	uint32_t nns_totals;
	struct sx_ns_count *ns_totals;
	uint64_t affinity_any_ns, anti_any_ns;
};

/* For loops over many nodes of a snapshot that read each
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

/* False when no NodeInfo of snap holds an affinity pod (resp. a
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

/* ---- storage listers (the PVC, PV, StorageClass, CSINode, CSIDriver and
 * CSIStorageCapacity listers the volume plugins take from framework.Handle) ----
 * Objects and arrays belong to the snapshot: valid while the caller holds
 * it, never freed by the caller. Lookups return NULL (n 0) when absent. */
/* PVC namespace/name. */
const struct sx_pvc *sx_snapshot_find_pvc(const struct sx_snapshot *snap, sx_str ns, sx_str name);
/* PV, StorageClass, CSINode (by node name), CSIDriver by name. */
const struct sx_pv *sx_snapshot_find_pv(const struct sx_snapshot *snap, sx_str name);
const struct sx_storage_class *sx_snapshot_find_storage_class(const struct sx_snapshot *snap,
							      sx_str name);
const struct sx_csi_node *sx_snapshot_find_csi_node(const struct sx_snapshot *snap, sx_str name);
/* A DRA object of kind (DeviceClass: ns SX_STR_EMPTY), or NULL. */
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
const struct sx_csi_capacity *const *sx_snapshot_capacities_by_class(const struct sx_snapshot *snap,
								     sx_str cls, uint32_t *n);
/* VolumeAttachments whose spec.nodeName is node. */
const struct sx_volume_attachment *const *
sx_snapshot_attachments_on_node(const struct sx_snapshot *snap, sx_str node, uint32_t *n);
/* Is claim ns/name used by a pod bound or assumed to a node
 * (StorageInfos().IsPVCUsedByPods)? */
bool sx_snapshot_pvc_in_use(const struct sx_snapshot *snap, sx_str ns, sx_str name);

/* A private copy of snap whose nodes named in `nodes` use these node
 * objects (pods and sums still from snap; nodes unknown to snap get an empty
 * NodeInfo). Used for extender requests with full Node objects
 * (nodeCacheCapable: false). Returns refcount 1 or NULL. */
struct sx_snapshot *sx_snapshot_with_nodes(const struct sx_snapshot *snap,
					   const struct sx_node *const *nodes, uint32_t n);

/* A private copy of snap where pod is counted on node (its NodeInfo cloned,
 * the pod added; everything else shared): what a dry run assumes without
 * touching the cache (the pod-group explainer). NULL on OOM or when the
 * node is not in snap. */
struct sx_snapshot *sx_snapshot_with_pod(const struct sx_snapshot *snap, const struct sx_pod *pod,
					 sx_str node);
/* A private copy of snap where pods[i] is no longer counted on nodes[i]
 * (each touched NodeInfo cloned once; a pod not on its node is ignored):
 * what group preemption removes before it schedules the preemptor group.
 * NULL on OOM. */
struct sx_snapshot *sx_snapshot_without_pods(const struct sx_snapshot *snap,
					     const struct sx_pod *const *pods, const sx_str *nodes,
					     uint32_t n);
/* A private copy of snap with only the nodes named in names[0..n) (those
 * snap has; in names' order), everything else shared: a pod group's
 * placement (upstream Snapshot.AssumePlacement, the nodes listed while a
 * placement is assumed). NULL on OOM. */
struct sx_snapshot *sx_snapshot_in_placement(const struct sx_snapshot *snap, const sx_str *names,
					     uint32_t n);
struct sx_snapshot *sx_snapshot_ref(const struct sx_snapshot *snap);
void sx_snapshot_unref(const struct sx_snapshot *snap);

#endif /* SCHEDEXT_SNAPSHOT_H */
