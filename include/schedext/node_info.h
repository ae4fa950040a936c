/* NodeInfo: the per-node sums plugins read (pods, requested resources,
 * ports, images, volumes, namespaces), upstream's framework.NodeInfo
 * (pkg/scheduler/framework/types.go). Built and mutated by the cache
 * (src/cache/node_info.c); immutable once a snapshot holds it.
 */
#ifndef SCHEDEXT_NODE_INFO_H
#define SCHEDEXT_NODE_INFO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/model.h"

struct sx_pvc_ref {
	sx_str ns;
	sx_str name;
	int32_t count;
};

/* Per-node sums plugins need. Immutable once in a snapshot. */
struct sx__pods_block;

struct sx_node_info {
	atomic_int refcount;
	uint64_t generation; /* cache generation of the last change */
	sx_str name;
	const struct sx_node *node; /* NULL while pods reference an unknown node */
	uint32_t npods;
	/* Σ pod.request (scalar owned); right after npods so that what
	 * NodeResourcesFit's Filter reads of a NodeInfo (node, npods, cpu,
	 * memory, ephemeral storage) is in its first cache line. */
	struct sx_resources requested;
	const struct sx_pod **pods; /* bound and assumed pods on the node (pods_block's array) */
	uint32_t naffinity;
	const struct sx_pod **affinity_pods; /* podAffinity or podAntiAffinity set */
	uint32_t nanti;
	const struct sx_pod **required_anti_pods; /* required anti-affinity non-empty */
	int64_t nonzero_milli_cpu;		  /* Σ pod.nonzero_milli_cpu */
	int64_t nonzero_memory;
	uint32_t nports;
	struct sx_host_port *used_ports; /* multiset: one entry per claim */
	uint32_t npvcs;
	struct sx_pvc_ref *pvcs;					/* PVCRefCounts */
	uint32_t cap_pods, cap_affinity, cap_anti, cap_ports, cap_pvcs; /* internal */
	/* Pods per namespace, so plugins
	 * skip nodes holding nothing their terms can select. Unordered. */
	uint32_t nns, cap_ns;
	struct sx_ns_count *ns_counts;
	uint32_t naffinity_any_ns; /* affinity pods with a term that may select another namespace */
	uint32_t nanti_any_ns;	   /* required-anti pods with such a required anti term */
	/* Bloom filter of node->images' names (one bit per name,
	 * sx_node_info_image_bit), valid while image_bloom_node == node: lets
	 * ImageLocality skip the image walk on nodes lacking the pod's images. */
	const struct sx_node *image_bloom_node;
	uint64_t image_bloom[2];
	/* Node->images flattened: each name once with the size of
	 * the first image listing it, sorted by name; valid with the filter
	 * (image_bloom_node == node). Shared between clones. */
	struct sx_node_images *images;
	/* Holder of `pods` and of the references on them, shared
	 * between a NodeInfo and its clones (internal, node_info.c). */
	struct sx__pods_block *pods_block;
};

/* See sx_node_info.images. */
struct sx_node_images {
	atomic_int refcount;
	uint32_t n;
	struct sx_node_image {
		sx_str name;
		int64_t size;
	} e[];
};

/* Size of the first image of ni's node listing `name`, -1 when
 * none does (what a walk over node->images returns). */
int64_t sx_node_info_image_size(const struct sx_node_info *ni, sx_str name);

/* The bloom bit of image name id: word (bit >> 6), bit (bit & 63). */
static inline unsigned sx_node_info_image_bit(sx_str name)
{
	return (unsigned)(((uint64_t)name * 0x9E3779B97F4A7C15ull) >> 57);
}

/* False when ni's node certainly lists no image named `name`. */
static inline bool sx_node_info_may_have_image(const struct sx_node_info *ni, sx_str name)
{
	unsigned bit = sx_node_info_image_bit(name);

	if (ni->image_bloom_node != ni->node)
		return true; /* filter stale or never computed */
	return (ni->image_bloom[bit >> 6] >> (bit & 63)) & 1;
}

/* Pods of one namespace on a NodeInfo. */
struct sx_ns_count {
	sx_str ns;
	uint32_t pods;	   /* all pods of ns */
	uint32_t affinity; /* of which in affinity_pods */
	uint32_t anti;	   /* of which in required_anti_pods */
};

/* Counts of namespace ns on ni; NULL when ni has no pod of ns. */
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
/* Is this host port claim free on the node? (upstream framework.HostPortInfo
 * CheckConflict: 0.0.0.0 conflicts with every IP of the same port and protocol) */
bool sx_node_info_port_conflicts(const struct sx_node_info *ni, const struct sx_host_port *p);

#endif /* SCHEDEXT_NODE_INFO_H */
