/* The volume binder behind the VolumeBinding plugin (upstream's
 * volumebinding/binder.go and its assume caches): classifying a pod's
 * claims, FindPodVolumes for one node, assuming the chosen bindings and
 * performing them through the API server (upstream volumebinding/binder.go).
 *
 * Threads: vb_find runs concurrently for different nodes of one cycle and
 * only reads. The assume cache (struct vb_assume) has its own mutex: the
 * scheduling thread reads it in PreFilter and writes it in Reserve, binder
 * threads write it in PreBind and Unreserve.
 */
#ifndef SCHEDEXT_PLUGINS_VOLUME_BINDER_H
#define SCHEDEXT_PLUGINS_VOLUME_BINDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/plugin.h"
#include "schedext/selector.h"

#define VB_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"

/* FindPodVolumes reasons, in upstream's order of appending (bit order). */
enum vb_reason {
	VB_NODE_CONFLICT = 1u << 0, /* a bound PV's node affinity does not match */
	VB_BIND_CONFLICT = 1u << 1, /* no PV to bind and nothing to provision */
	VB_NO_SPACE = 1u << 2,	    /* CSIStorageCapacity says no */
	VB_PV_MISSING = 1u << 3,    /* a bound claim's PV does not exist */
};

/* A claim of the pod as PreFilter saw it, with the assume cache applied. */
struct vb_claim {
	const struct sx_pvc *pvc; /* the snapshot's object */
	sx_str name;		  /* pvc's name if interned (PV claimRefs are), else invalid */
	sx_str selected_node;	  /* effective volume.kubernetes.io/selected-node */
	const struct sx_pv *pv;	  /* bound claims: their PV, NULL when missing */
	/* Bound claims: the PV's node affinity when it is one term of one
	 * label requirement (zonal and local PVs), which Filter checks on
	 * every node without walking the selector; NULL otherwise. */
	const struct sx_requirement *single;
	/* Unbound claims: the PVs of the class that pass every check of
	 * FindMatchingVolume but the node's (affinity, PVs chosen for other
	 * claims), in the class's order (ListPVs). */
	uint32_t ncand;
	struct vb_pv *cand;
	/* Unbound claims, for checkVolumeProvisions: the class (NULL when
	 * missing), whether it has a provisioner, and the CSIStorageCapacities
	 * to consult (capacity: the driver publishes capacity and the claim
	 * requests storage). */
	const struct sx_storage_class *sc;
	bool provisioner;
	bool capacity;
	uint32_t ncaps;
	const struct sx_csi_capacity *const *caps;
};

/* A PV of a delayed-binding class, with the assume cache applied. */
struct vb_pv {
	const struct sx_pv *pv;
	bool has_claim_ref; /* effective spec.claimRef */
	sx_str claim_ns, claim_name;
	const char *claim_uid; /* NULL or "" = no uid */
	char *owned_uid;       /* claim_uid's storage when assumed */
};

/* A chosen static binding (BindingInfo). */
struct vb_binding {
	const struct sx_pv *pv;
	const struct sx_pvc *pvc;
	bool dirty;   /* the claimRef or annotation changes (assumed) */
	bool set_bbc; /* add pv.kubernetes.io/bound-by-controller */
	char rv[32];  /* PV resourceVersion the write must start from / wrote */
};

/* PodVolumes for one node. */
struct vb_volumes {
	uint32_t nstatic;
	struct vb_binding *statics;
	uint32_t ndynamic;
	const struct sx_pvc **dynamic;
	char (*dynamic_rv)[32]; /* [ndynamic]: claim RV to start from / wrote */
};

/* The cycle state slot (stateData). Shared by clones (refcount); only
 * Reserve/PreBind/Unreserve, which run on one cycle at a time, write the
 * reserved part. */
struct vb_state {
	atomic_int refcount;
	bool skip; /* pod has no claims */
	uint32_t nbound, nunbound;
	struct vb_claim *bound;	  /* fully bound claims */
	struct vb_claim *unbound; /* unbound claims of WaitForFirstConsumer classes, by size */
	/* Reserve */
	bool reserved, all_bound;
	sx_str node;
	struct vb_volumes vols;
};

/* The assume cache: in-memory PV claimRefs and PVC selected-node
 * annotations over the API objects, each valid while the API object's
 * resourceVersion is not newer than the one it was assumed on. */
struct vb_assume;
struct vb_assume *vb_assume_new(void);
void vb_assume_free(struct vb_assume *a);

/* ---------- PreFilter ---------- */

/* podHasPVCs + GetPodVolumeClaims on the cycle snapshot. Returns NULL and
 * fills st (skip set when the pod has no claim), or a rejection/error. */
struct sx_status *vb_pod_claims(struct vb_assume *a, const struct sx_snapshot *snap,
				const struct sx_pod *pod, struct vb_state *st);
/* Explainers: the claims behind "pod has unbound immediate
 * PersistentVolumeClaims" (name, storage class, binding mode) into d. */
void vb_explain_immediate(const struct sx_snapshot *snap, const struct sx_pod *pod,
			  struct sx_detail *d);
void vb_state_clear(struct vb_state *st);

/* ---------- Filter ---------- */

/* FindPodVolumes for node. Returns 0 and the reasons (enum vb_reason
 * bits) in *reasons; with out non-NULL, the chosen volumes (free with
 * vb_volumes_clear). Negative with err set on an error (Error status). */
int vb_find(const struct vb_state *st, const struct sx_snapshot *snap, const struct sx_node *node,
	    unsigned *reasons, struct vb_volumes *out, struct sx_error *err);
void vb_volumes_clear(struct vb_volumes *v);
/* volume.CheckNodeAffinity: the PV's required node affinity against node. */
bool vb_pv_node_affinity_matches(const struct sx_pv *pv, const struct sx_node *node);

/* A bound claim's PV node affinity on node: the single In requirement of
 * a zonal or local PV inline (Filter runs it on every node it visits),
 * anything else through the selector walk. */
static inline bool vb_bound_claim_fits(const struct vb_claim *c, const struct sx_node *node)
{
	const struct sx_requirement *r = c->single;
	sx_str v;

	if (!r)
		return vb_pv_node_affinity_matches(c->pv, node);
	if (r->op != SX_OP_IN)
		return sx_node_requirement_matches(r, node);
	if (!sx_node_label(node, r->key, &v))
		return false;
	for (uint32_t i = 0; i < r->nvalues; i++) /* no values: never matches */
		if (r->values[i] == v)
			return true;
	return false;
}

/* checkBoundClaims, vb_find's first step: the reason bits of the first
 * bound claim whose PV is missing or whose node affinity node fails; all
 * of vb_find when the pod has no unbound claim. */
static inline unsigned vb_check_bound(const struct vb_state *st, const struct sx_node *node)
{
	for (uint32_t i = 0; i < st->nbound; i++) {
		const struct vb_claim *c = &st->bound[i];

		if (!c->pv)
			return VB_PV_MISSING;
		if (!vb_bound_claim_fits(c, node))
			return VB_NODE_CONFLICT;
	}
	return 0;
}

/* ---------- Reserve / Unreserve ---------- */

/* AssumePodVolumes: records the bindings and provisionings of st->vols in
 * the assume cache. *all_bound when every claim of the pod is already
 * bound (nothing to do). */
int vb_assume_volumes(struct vb_assume *a, const struct sx_snapshot *snap, const struct sx_pod *pod,
		      sx_str node, struct vb_volumes *v, bool *all_bound, struct sx_error *err);
/* RevertAssumedPodVolumes. */
void vb_revert(struct vb_assume *a, const struct vb_volumes *v);

/* ---------- PreBind ---------- */

/* A VolumeBinding instance waits through a struct sx_waiter
 * (handle_waiter.h) listening for PVs and PVCs on the profile's handle
 * (NULL: none; every bind then fails "no API server"). */
struct sx_handle;
struct sx_waiter;

/* BindPodVolumes: the API writes through h's client, then waits
 * (polling h's live cache, woken by w) until every claim is
 * bound and usable, at most timeout_s seconds, or until *cancelled
 * (woken through w: "binding volumes: context canceled"). NULL on
 * success, else an Error status ("binding volumes: ..."). */
struct sx_status *vb_bind(struct sx_handle *h, struct sx_waiter *w, const atomic_bool *cancelled,
			  const struct sx_pod *pod, sx_str node, struct vb_volumes *v,
			  int64_t timeout_s);

/* ---------- shared helpers ---------- */

/* resourceVersions compared as integers (as upstream): <0, 0, >0. */
int vb_rv_cmp(const char *a, const char *b);
/* The PV controller finished binding the claim (isPVCFullyBound). */
static inline bool vb_fully_bound(const struct sx_pvc *pvc)
{
	return pvc->volume_name != SX_STR_EMPTY && pvc->bind_completed;
}

#endif /* SCHEDEXT_PLUGINS_VOLUME_BINDER_H */
