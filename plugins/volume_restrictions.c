/* VolumeRestrictions (PreFilter + AddPod/RemovePod, Filter): in-tree disks
 * a node's pods already mount, and ReadWriteOncePod claims already in use
 * anywhere in the cluster (upstream
 * volumerestrictions/volume_restrictions.go, 1.34).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/plugin.h"
#include "slots.h"

#define REASON_DISK "node(s) had no available disk"
#define REASON_RWOP                                                                                \
	"node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "      \
	"already in-use by another pod"
#define NAME "VolumeRestrictions"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_disk_conflict =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_DISK);
static struct sx_status reject_rwop_conflict =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_RWOP);

/* PreFilter state: the pod's ReadWriteOncePod claim names and how many
 * references scheduled pods hold on them. Owned by the cycle's slot. */
struct rwop_state {
	int64_t conflicts;
	uint32_t n;
	sx_str claims[]; /* flexible array */
};

static struct rwop_state *rwop_new(uint32_t cap)
{
	struct rwop_state *s = malloc(sizeof(*s) + (size_t)cap * sizeof(s->claims[0]));

	if (s) {
		s->conflicts = 0;
		s->n = 0;
	}
	return s;
}

static void *state_clone_volume_restrictions(const void *state)
{
	const struct rwop_state *src = state;
	struct rwop_state *dst = rwop_new(src->n);

	if (!dst)
		return NULL;
	memcpy(dst, src, sizeof(*src) + (size_t)src->n * sizeof(src->claims[0]));
	return dst;
}

static void state_free_volume_restrictions(void *state)
{
	free(state);
}

static bool has_claim(const struct rwop_state *s, sx_str claim)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->claims[i] == claim)
			return true;
	return false;
}

/* needsRestrictionsCheck: the sources two pods may conflict on. */
static bool needs_check(const struct sx_volume *v)
{
	return v->source == SX_VSRC_GCE_PD || v->source == SX_VSRC_AWS_EBS ||
	       v->source == SX_VSRC_RBD || v->source == SX_VSRC_ISCSI;
}

static bool monitors_overlap(const struct sx_volume *a, const struct sx_volume *b)
{
	for (uint32_t i = 0; i < a->nmonitors; i++)
		for (uint32_t j = 0; j < b->nmonitors; j++)
			if (a->monitors[i] == b->monitors[j])
				return true;
	return false;
}

/* Do volumes v (of the incoming pod) and e (of a pod on the node)
 * conflict? (isVolumeConflict, per pair) */
static bool volumes_conflict(const struct sx_volume *v, const struct sx_volume *e)
{
	bool both_ro = v->read_only && e->read_only;

	if (v->source != e->source || v->id != e->id)
		return false;
	switch (v->source) {
	case SX_VSRC_GCE_PD:
	case SX_VSRC_ISCSI:
		return !both_ro;
	case SX_VSRC_AWS_EBS:
		return true;
	case SX_VSRC_RBD:
		return v->pool == e->pool && !both_ro && monitors_overlap(v, e);
	default:
		return false;
	}
}

/* satisfyVolumeConflicts: none of pod's disks is mounted by `on` in a
 * conflicting way. */
static bool pod_conflicts_with(const struct sx_pod *pod, const struct sx_pod *on)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		if (!needs_check(&pod->volumes[i]))
			continue;
		for (uint32_t j = 0; j < on->nvolumes; j++)
			if (volumes_conflict(&pod->volumes[i], &on->volumes[j]))
				return true;
	}
	return false;
}

/* The pod's RWOP claims (persistentVolumeClaim volumes only, as upstream);
 * a missing claim is UnschedulableAndUnresolvable. */
static struct sx_status *collect_rwop(const struct sx_snapshot *snap, const struct sx_pod *pod,
				      struct rwop_state *s)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		const struct sx_pvc *pvc;

		if (v->source != SX_VSRC_PVC)
			continue;
		pvc = sx_snapshot_find_pvc(snap, pod->meta.ns, v->claim);
		if (!pvc)
			return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					     "persistentvolumeclaim \"%s\" not found",
					     sx_str_get(v->claim));
		if ((pvc->access_modes & SX_ACCESS_RWOP) && !has_claim(s, v->claim))
			s->claims[s->n++] = v->claim;
	}
	for (uint32_t i = 0; i < s->n; i++)
		s->conflicts += sx_snapshot_pvc_in_use(snap, pod->meta.ns, s->claims[i]);
	return NULL;
}

/* Skip when the pod has no conflict-prone disk and none of its RWOP claims
 * is in use. */
static struct sx_status *pre_filter_volume_restrictions(void *self, struct sx_cycle_state *cs,
							const struct sx_pod *pod,
							struct sx_node_set **result)
{
	struct rwop_state *s = rwop_new(pod->nvolumes);
	struct sx_status *st;
	bool check = false;

	if (!s)
		return sx_status_oom();
	for (uint32_t i = 0; i < pod->nvolumes; i++)
		check |= needs_check(&pod->volumes[i]);
	st = collect_rwop(cs->snap, pod, s);
	if (st || (!check && s->conflicts == 0)) {
		free(s);
		return st ? st : sx_status_new(SX_SKIP, NULL);
	}
	free(cs->slots[SX_SLOT_volume_restrictions]);
	cs->slots[SX_SLOT_volume_restrictions] = s;
	return NULL;
}

/* References of `other` on the pod's RWOP claims (claim names only, as
 * upstream's conflictingPVCRefCountForPod). */
static int64_t rwop_refs(const struct rwop_state *s, const struct sx_pod *other)
{
	int64_t n = 0;

	for (uint32_t i = 0; i < other->nvolumes; i++)
		n += other->volumes[i].source == SX_VSRC_PVC &&
		     has_claim(s, other->volumes[i].claim);
	return n;
}

static struct sx_status *add_pod_volume_restrictions(void *self, struct sx_cycle_state *cs,
						     const struct sx_pod *pod,
						     const struct sx_pod *added,
						     const struct sx_node_info *ni)
{
	struct rwop_state *s = cs->slots[SX_SLOT_volume_restrictions];

	if (!s)
		return sx_status_new(SX_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from "
					       "cycleState");
	s->conflicts += rwop_refs(s, added);
	return NULL;
}

static struct sx_status *remove_pod_volume_restrictions(void *self, struct sx_cycle_state *cs,
							const struct sx_pod *pod,
							const struct sx_pod *removed,
							const struct sx_node_info *ni)
{
	struct rwop_state *s = cs->slots[SX_SLOT_volume_restrictions];

	if (!s)
		return sx_status_new(SX_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from "
					       "cycleState");
	s->conflicts -= rwop_refs(s, removed);
	return NULL;
}

static struct sx_status *filter_volume_restrictions(void *self, const struct sx_cycle_state *cs,
						    const struct sx_pod *pod,
						    const struct sx_node_info *ni)
{
	const struct rwop_state *s = cs->slots[SX_SLOT_volume_restrictions];

	for (uint32_t i = 0; i < ni->npods; i++)
		if (pod_conflicts_with(pod, ni->pods[i]))
			return &reject_disk_conflict;
	if (!s)
		return sx_status_new(SX_ERROR, "cannot read \"PreFilterVolumeRestrictions\" from "
					       "cycleState");
	if (s->conflicts > 0)
		return &reject_rwop_conflict;
	return NULL;
}

/* ---------- the numbers behind a rejection (explainers) ---------- */

/* The in-tree source of a conflict-prone volume, as the pod spec names it. */
static const char *source_name(uint8_t source)
{
	switch (source) {
	case SX_VSRC_GCE_PD:
		return "gcePersistentDisk";
	case SX_VSRC_AWS_EBS:
		return "awsElasticBlockStore";
	case SX_VSRC_RBD:
		return "rbd";
	default:
		return "iscsi";
	}
}

/* PreFilter's "persistentvolumeclaim ... not found": the pod's volume that
 * names the missing claim (the first, as collect_rwop stops there). */
static void explain_missing_claim(const struct sx_snapshot *snap, const struct sx_pod *pod,
				  struct sx_detail *d)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		if (v->source != SX_VSRC_PVC || sx_snapshot_find_pvc(snap, pod->meta.ns, v->claim))
			continue;
		sx_detail_text(d, "volume %s: claim %s/%s is not in the cluster",
			       sx_str_get(v->name), sx_str_get(pod->meta.ns), sx_str_get(v->claim));
		sx_detail_str(d, "volume", sx_str_get(v->name));
		sx_detail_str(d, "claim", sx_str_get(v->claim));
		return;
	}
}

/* Filter's disk conflict on ni: the pod's volume and the pod on the node
 * that mounts the same disk (satisfyVolumeConflicts, pair by pair). */
static void explain_disk(const struct sx_pod *pod, const struct sx_node_info *ni,
			 struct sx_detail *d)
{
	char key[512];

	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		if (!needs_check(v))
			continue;
		for (uint32_t k = 0; k < ni->npods; k++)
			for (uint32_t j = 0; j < ni->pods[k]->nvolumes; j++) {
				if (!volumes_conflict(v, &ni->pods[k]->volumes[j]))
					continue;
				sx_pod_key(ni->pods[k], key, sizeof(key));
				sx_detail_text(d, "volume %s: %s %s mounted by pod %s",
					       sx_str_get(v->name), source_name(v->source),
					       sx_str_get(v->id), key);
				sx_detail_str(d, "volume", sx_str_get(v->name));
				sx_detail_str(d, "disk", sx_str_get(v->id));
				sx_detail_str(d, "mountedBy", key);
				return;
			}
	}
}

/* A scheduled pod of the pod's namespace using one of its ReadWriteOncePod
 * claims (the first in node order); *at gets its node, *claim the claim. */
static const struct sx_pod *rwop_user(const struct sx_snapshot *snap, const struct sx_pod *pod,
				      const struct rwop_state *s, const struct sx_node_info **at,
				      sx_str *claim)
{
	for (uint32_t n = 0; n < snap->nnodes; n++)
		for (uint32_t k = 0; k < snap->nodes[n]->npods; k++) {
			const struct sx_pod *o = snap->nodes[n]->pods[k];
			if (o->meta.ns != pod->meta.ns)
				continue;
			for (uint32_t j = 0; j < o->nvolumes; j++)
				if (o->volumes[j].source == SX_VSRC_PVC &&
				    has_claim(s, o->volumes[j].claim)) {
					*at = snap->nodes[n];
					*claim = o->volumes[j].claim;
					return o;
				}
		}
	return NULL;
}

/* Filter's ReadWriteOncePod conflict: which claim, and which pod uses it
 * where (upstream counts PVC references of every scheduled pod,
 * volume_restrictions.go calPreFilterState). A claim held only by a
 * nominated pod names no pod. */
static void explain_rwop(const struct sx_cycle_state *cs, const struct sx_pod *pod,
			 struct sx_detail *d)
{
	const struct rwop_state *s = cs->slots[SX_SLOT_volume_restrictions];
	const struct sx_node_info *at = NULL;
	const struct sx_pod *user;
	sx_str claim = SX_STR_EMPTY;
	char key[512];

	if (!s || s->n == 0)
		return;
	user = rwop_user(cs->snap, pod, s, &at, &claim);
	if (!user) {
		sx_detail_text(d, "ReadWriteOncePod claim %s", sx_str_get(s->claims[0]));
		sx_detail_str(d, "claim", sx_str_get(s->claims[0]));
		return;
	}
	sx_pod_key(user, key, sizeof(key));
	sx_detail_text(d, "ReadWriteOncePod claim %s in use by pod %s on node %s",
		       sx_str_get(claim), key, sx_str_get(at->name));
	sx_detail_str(d, "claim", sx_str_get(claim));
	sx_detail_str(d, "usedBy", key);
	sx_detail_str(d, "node", sx_str_get(at->name));
}

/* The claim or disk behind each of the plugin's reasons. */
static void explain_volume_restrictions(void *self, const struct sx_cycle_state *cs,
					const struct sx_pod *pod, const struct sx_node_info *ni,
					const struct sx_status *st, struct sx_detail *d)
{
	SX_UNUSED(self);
	if (!st->nreasons || !cs->snap)
		return;
	if (!ni && strncmp(st->reasons[0], "persistentvolumeclaim ", 22) == 0)
		explain_missing_claim(cs->snap, pod, d);
	else if (ni && strcmp(st->reasons[0], REASON_DISK) == 0)
		explain_disk(pod, ni, d);
	else if (ni && strcmp(st->reasons[0], REASON_RWOP) == 0)
		explain_rwop(cs, pod, d);
}

/* ---------- queueing hints ---------- */

/* isSchedulableAfterPodDeleted: the deleted pod (same namespace) mounted
 * one of the pod's disks, or used one of its claims. */
static enum sx_hint hint_pod_volume_restrictions(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_pod *d = old_obj;

	SX_UNUSED(self);
	SX_UNUSED(new_obj);
	if (!d || d->meta.ns != pod->meta.ns)
		return SX_QUEUE_SKIP;
	if (pod_conflicts_with(pod, d))
		return SX_QUEUE;
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		if (pod->volumes[i].source != SX_VSRC_PVC)
			continue;
		for (uint32_t j = 0; j < d->nvolumes; j++)
			if (d->volumes[j].source == SX_VSRC_PVC &&
			    d->volumes[j].claim == pod->volumes[i].claim)
				return SX_QUEUE;
	}
	return SX_QUEUE_SKIP;
}

/* isSchedulableAfterPersistentVolumeClaimAdded: a claim the pod names. */
static enum sx_hint hint_pvc_volume_restrictions(void *self, const struct sx_pod *pod,
						 const void *old_obj, const void *new_obj)
{
	const struct sx_object *o = new_obj;
	const struct sx_pvc *pvc = o ? o->obj : NULL;
	sx_str name;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!pvc || pvc->meta.ns != pod->meta.ns || !pvc->meta.name)
		return SX_QUEUE_SKIP;
	/* not interned yet: no pod can name it */
	name = sx_intern_lookup_n(pvc->meta.name, strlen(pvc->meta.name));
	for (uint32_t i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == SX_VSRC_PVC && pod->volumes[i].claim == name)
			return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* Pod volumes are immutable: only deletions free a disk; with queueing
 * hints a Node/Add is the only node event (1.34). */
static const struct sx_event_reg events_volume_restrictions[] = {
	{SX_RES_POD, SX_ACT_DELETE, hint_pod_volume_restrictions},
	{SX_RES_NODE, SX_ACT_ADD, NULL},
	{SX_RES_PVC, SX_ACT_ADD, hint_pvc_volume_restrictions},
	SX_EVENTS_END,
};

/* VolumeRestrictions.SignPod: the non-synthetic volumes
 * (volume_restrictions.go). */
static struct sx_status *sign_volume_restrictions(void *self, const struct sx_pod *pod,
						  uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_VOLUMES;
	return NULL;
}

const struct sx_plugin sx_plugin_volume_restrictions = {
	.name = NAME,
	.state_clone = state_clone_volume_restrictions,
	.state_free = state_free_volume_restrictions,
	.pre_filter = pre_filter_volume_restrictions,
	.add_pod = add_pod_volume_restrictions,
	.remove_pod = remove_pod_volume_restrictions,
	.filter = filter_volume_restrictions,
	.events = events_volume_restrictions,
	.sign = sign_volume_restrictions,
	.explain = explain_volume_restrictions,
};
