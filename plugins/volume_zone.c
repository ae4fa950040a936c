/* VolumeZone (PreFilter, Filter): the zone/region labels of the PVs bound
 * to the pod's claims must match the node's (upstream
 * volumezone/volume_zone.go, 1.34).
 */
#include <stdlib.h>
#include <string.h>

#include "schedext/plugin.h"
#include "schedext/vec.h"
#include "slots.h"

#define REASON_CONFLICT "node(s) had no available volume zone"
#define NAME		"VolumeZone"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_zone_conflict =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, NAME, REASON_CONFLICT);
#define MAX_ZONES 64 /* values of one label value split on "__" */

/* The four topology labels, in upstream's order (beta zone, beta region,
 * GA zone, GA region). */
static sx_str topology_label(unsigned i)
{
	switch (i) {
	case 0:
		return SX_S_ZONE_BETA;
	case 1:
		return SX_S_REGION_BETA;
	case 2:
		return SX_S_ZONE;
	default:
		return SX_S_REGION;
	}
}

/* translateToGALabel */
static sx_str ga_label(sx_str key)
{
	if (key == SX_S_REGION_BETA)
		return SX_S_REGION;
	if (key == SX_S_ZONE_BETA)
		return SX_S_ZONE;
	return key;
}

/* One PV topology requirement: label key and the set of allowed values. */
struct pv_topology {
	sx_str key;
	uint32_t nvalues;
	sx_str values[MAX_ZONES];
};

/* PreFilter state. Immutable after PreFilter (clone shares nothing). */
struct zone_state {
	uint32_t n, cap;
	struct pv_topology *items;
};

static void state_free_volume_zone(void *state)
{
	struct zone_state *s = state;

	if (s)
		free(s->items);
	free(s);
}

static void *state_clone_volume_zone(const void *state)
{
	const struct zone_state *src = state;
	struct zone_state *dst = calloc(1, sizeof(*dst));

	if (!dst)
		return NULL;
	dst->items = malloc((size_t)(src->n ? src->n : 1) * sizeof(*dst->items));
	if (!dst->items) {
		free(dst);
		return NULL;
	}
	memcpy(dst->items, src->items, (size_t)src->n * sizeof(*dst->items));
	dst->n = dst->cap = src->n;
	return dst;
}

/* LabelZonesToSet: value split on "__", each part trimmed; false when a
 * part is empty (upstream logs and ignores the label) or too many. */
static bool zones_to_set(const char *value, struct pv_topology *t)
{
	const char *p = value;

	t->nvalues = 0;
	for (;;) {
		const char *end = strstr(p, "__"), *a = p, *b;

		b = end ? end : p + strlen(p);
		while (a < b && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r'))
			b--;
		if (a == b || t->nvalues == MAX_ZONES)
			return false;
		t->values[t->nvalues++] = sx_intern_n(a, (size_t)(b - a));
		if (!end)
			return true;
		p = end + 2;
	}
}

static int push_topology(struct zone_state *s, const struct pv_topology *t)
{
	if (sx_vec_reserve(s->items, s->cap, s->n + 1, 4) < 0)
		return SX_ENOMEM;
	s->items[s->n++] = *t;
	return 0;
}

/* The PV's topology labels into s. */
static int add_pv(struct zone_state *s, const struct sx_pv *pv)
{
	struct pv_topology t;
	sx_str value;

	for (unsigned k = 0; k < 4; k++) {
		t.key = topology_label(k);
		if (!sx_labels_get(&pv->meta.labels, t.key, &value))
			continue;
		if (!zones_to_set(sx_str_get(value), &t))
			continue; /* unparsable: ignored, as upstream */
		if (push_topology(s, &t) < 0)
			return SX_ENOMEM;
	}
	return 0;
}

/* An unbound claim: fine when its class binds WaitForFirstConsumer. */
static struct sx_status *check_unbound(const struct sx_snapshot *snap, const struct sx_pvc *pvc)
{
	const struct sx_storage_class *sc;

	if (pvc->storage_class == SX_STR_EMPTY)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "PersistentVolumeClaim had no pv name and storageClass name");
	sc = sx_snapshot_find_storage_class(snap, pvc->storage_class);
	if (!sc)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "storageclass.storage.k8s.io \"%s\" not found",
				     sx_str_get(pvc->storage_class));
	if (sc->binding_mode == SX_BINDING_UNSET)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "VolumeBindingMode not set for StorageClass \"%s\"",
				     sx_str_get(pvc->storage_class));
	if (sc->binding_mode == SX_BINDING_WAIT_FOR_FIRST_CONSUMER)
		return NULL;
	return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name");
}

/* getPVbyPod for one persistentVolumeClaim volume. */
static struct sx_status *add_claim(const struct sx_snapshot *snap, const struct sx_pod *pod,
				   sx_str claim, struct zone_state *s)
{
	const struct sx_pvc *pvc;
	const struct sx_pv *pv;

	if (claim == SX_STR_EMPTY)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "PersistentVolumeClaim had no name");
	pvc = sx_snapshot_find_pvc(snap, pod->meta.ns, claim);
	if (!pvc)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "persistentvolumeclaim \"%s\" not found", sx_str_get(claim));
	if (pvc->volume_name == SX_STR_EMPTY)
		return check_unbound(snap, pvc);
	pv = sx_snapshot_find_pv(snap, pvc->volume_name);
	if (!pv)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "persistentvolume \"%s\" not found",
				     sx_str_get(pvc->volume_name));
	return add_pv(s, pv) < 0 ? sx_status_oom() : NULL;
}

/* Skip when no bound PV of the pod carries a zone/region label. */
static struct sx_status *pre_filter_volume_zone(void *self, struct sx_cycle_state *cs,
						const struct sx_pod *pod,
						struct sx_node_set **result)
{
	struct zone_state *s = calloc(1, sizeof(*s));
	struct sx_status *st = NULL;

	if (!s)
		return sx_status_oom();
	for (uint32_t i = 0; i < pod->nvolumes && !st; i++)
		if (pod->volumes[i].source == SX_VSRC_PVC)
			st = add_claim(cs->snap, pod, pod->volumes[i].claim, s);
	if (st || s->n == 0) {
		state_free_volume_zone(s);
		return st ? st : sx_status_new(SX_SKIP, NULL);
	}
	state_free_volume_zone(cs->slots[SX_SLOT_volume_zone]);
	cs->slots[SX_SLOT_volume_zone] = s;
	return NULL;
}

static bool has_value(const struct pv_topology *t, sx_str v)
{
	for (uint32_t i = 0; i < t->nvalues; i++)
		if (t->values[i] == v)
			return true;
	return false;
}

static struct sx_status *filter_volume_zone(void *self, const struct sx_cycle_state *cs,
					    const struct sx_pod *pod, const struct sx_node_info *ni)
{
	const struct zone_state *s = cs->slots[SX_SLOT_volume_zone];
	const struct sx_node *node = ni->node;
	bool constrained = false;
	sx_str v;

	if (pod->nvolumes == 0 || !s || !node)
		return NULL;
	for (unsigned k = 0; k < 4 && !constrained; k++)
		constrained = sx_node_label(node, topology_label(k), &v);
	if (!constrained)
		return NULL; /* single-zone clusters: nodes without topology labels */
	for (uint32_t i = 0; i < s->n; i++) {
		const struct pv_topology *t = &s->items[i];

		if ((!sx_node_label(node, t->key, &v) &&
		     !sx_node_label(node, ga_label(t->key), &v)) ||
		    !has_value(t, v))
			return &reject_zone_conflict;
	}
	return NULL;
}

/* ---------- queueing hints ---------- */

static sx_str lookup(const char *s)
{
	return s ? sx_intern_lookup_n(s, strlen(s)) : SX_STR_INVALID;
}

/* IsPVCRequestedFromPod: a claim of the pod's persistentVolumeClaim volumes. */
static enum sx_hint hint_pvc_volume_zone(void *self, const struct sx_pod *pod, const void *old_obj,
					 const void *new_obj)
{
	const struct sx_object *o = new_obj;
	const struct sx_pvc *pvc = o ? o->obj : NULL;
	sx_str name;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!pvc || pvc->meta.ns != pod->meta.ns)
		return SX_QUEUE_SKIP;
	name = lookup(pvc->meta.name);
	for (uint32_t i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == SX_VSRC_PVC && pod->volumes[i].claim == name)
			return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* isSchedulableAfterStorageClassAdded: only a WaitForFirstConsumer class. */
static enum sx_hint hint_sc_volume_zone(void *self, const struct sx_pod *pod, const void *old_obj,
					const void *new_obj)
{
	const struct sx_object *o = new_obj;
	const struct sx_storage_class *sc = o ? o->obj : NULL;

	SX_UNUSED(self);
	SX_UNUSED(pod);
	SX_UNUSED(old_obj);
	return sc && sc->wait_for_first_consumer ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* isSchedulableAfterPersistentVolumeChange: an added PV, or a change of
 * its topology labels. */
static enum sx_hint hint_pv_volume_zone(void *self, const struct sx_pod *pod, const void *old_obj,
					const void *new_obj)
{
	const struct sx_object *o = old_obj, *n = new_obj;
	const struct sx_pv *old_pv = o ? o->obj : NULL, *new_pv = n ? n->obj : NULL;
	sx_str a = SX_STR_EMPTY, b = SX_STR_EMPTY;

	SX_UNUSED(self);
	SX_UNUSED(pod);
	if (!old_pv || !new_pv)
		return SX_QUEUE;
	for (unsigned k = 0; k < 4; k++) {
		bool ha = sx_labels_get(&old_pv->meta.labels, topology_label(k), &a);
		bool hb = sx_labels_get(&new_pv->meta.labels, topology_label(k), &b);

		if (ha != hb || (ha && a != b))
			return SX_QUEUE;
	}
	return SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_volume_zone[] = {
	{SX_RES_STORAGE_CLASS, SX_ACT_ADD, hint_sc_volume_zone},
	{SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL | SX_ACT_UPDATE_NODE_TAINT, NULL},
	{SX_RES_PVC, SX_ACT_ADD | SX_ACT_UPDATE, hint_pvc_volume_zone},
	{SX_RES_PV, SX_ACT_ADD | SX_ACT_UPDATE, hint_pv_volume_zone},
	SX_EVENTS_END,
};

/* VolumeZone.SignPod: the non-synthetic volumes (volume_zone.go). */
static struct sx_status *sign_volume_zone(void *self, const struct sx_pod *pod, uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_VOLUMES;
	return NULL;
}

const struct sx_plugin sx_plugin_volume_zone = {
	.name = NAME,
	.state_clone = state_clone_volume_zone,
	.state_free = state_free_volume_zone,
	.pre_filter = pre_filter_volume_zone,
	.filter = filter_volume_zone,
	.events = events_volume_zone,
	.sign = sign_volume_zone,
};
