/* NodeVolumeLimits (PreFilter, Filter): CSI attach limits from
 * CSINode.spec.drivers[].allocatable.count (upstream
 * nodevolumelimits/csi.go, 1.34). The in-tree EBS/GCE/Azure
 * limits plugins are gone since 1.32; in-tree volumes count against their
 * CSI driver when migration applies on the node.
 *
 * A volume is identified as driver + handle, upstream's "<driver>/<handle>":
 * a PV's CSI handle, an in-tree id as csi-translation-lib renders it, or,
 * for a claim with no usable PV, the claim itself (upstream's random-prefix
 * handle, unique per claim).
 *
 * VolumeLimitScaling (Alpha, off, in 1.35 and 1.36; Beta, on, in 1.37):
 * a driver whose CSIDriver says preventPodSchedulingIfMissing must be
 * installed on the node (listed in its CSINode) for the pod's volumes of
 * that driver, checked before the limits: "<driver> CSI driver is not
 * installed on the node", Unschedulable (csi.go Filter, as upstream's
 * nodevolumelimits/AGENTS.md describes it). A CSINode update that adds a
 * driver or raises a count requeues (isSchedulableAfterCSINodeUpdated).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"
#include "schedext/snapshot.h"
#include "schedext/vec.h"
#include "slots.h"

#define REASON_MAX_COUNT "node(s) exceed max volume count"
#define NAME		 "NodeVolumeLimits"

/* Filter's rejections, the same for every node (no allocation per node). */
static struct sx_status reject_max_count =
	SX_STATUS_STATIC(SX_UNSCHEDULABLE, NAME, REASON_MAX_COUNT);

/* The plugin instance: whether VolumeLimitScaling is on. */
struct nvl_plugin {
	bool scaling;
};

static void *init_node_volume_limits(const struct cJSON *args, struct sx_handle *h,
				     struct sx_error *err)
{
	struct nvl_plugin *p = calloc(1, sizeof(*p));
	struct sx_features f = sx_handle_features(h);

	SX_UNUSED(args);
	if (!p) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	p->scaling = sx_feature_enabled(&f, SX_FEATURE_VOLUME_LIMIT_SCALING);
	return p;
}

static void destroy_node_volume_limits(void *self)
{
	free(self);
}

enum handle_kind {
	H_HANDLE, /* a: the volume handle */
	H_CLAIM,  /* a/b: namespace/claim of an unbound claim */
	H_GCE,	  /* a: zone ("UNSPECIFIED" inline), b: disk name */
};

struct vol_id {
	sx_str driver;
	uint8_t kind; /* enum handle_kind */
	sx_str a, b;
};

/* A small set of volume ids (per node and pod: a handful). */
struct vol_set {
	uint32_t n, cap;
	struct vol_id *v;
	struct vol_id inline_buf[16];
};

static void set_init(struct vol_set *s)
{
	s->n = 0;
	s->cap = 16;
	s->v = s->inline_buf;
}

static void set_free(struct vol_set *s)
{
	if (s->v != s->inline_buf)
		free(s->v);
}

static bool same_id(const struct vol_id *x, const struct vol_id *y)
{
	return x->driver == y->driver && x->kind == y->kind && x->a == y->a && x->b == y->b;
}

static int set_find(const struct vol_set *s, const struct vol_id *id)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (same_id(&s->v[i], id))
			return (int)i;
	return -1;
}

static int set_add(struct vol_set *s, const struct vol_id *id)
{
	if (set_find(s, id) >= 0)
		return 0;
	if (s->n == s->cap) {
		struct vol_id *p = malloc((size_t)s->cap * 2 * sizeof(*p));

		if (!p)
			return SX_ENOMEM;
		memcpy(p, s->v, (size_t)s->n * sizeof(*p));
		set_free(s);
		s->v = p;
		s->cap *= 2;
	}
	s->v[s->n++] = *id;
	return 0;
}

static void set_remove_at(struct vol_set *s, uint32_t i)
{
	s->v[i] = s->v[--s->n];
}

/* ---------- CSI migration (csi-translation-lib, 1.34 gates) ---------- */

/* isCSIMigrationOn: EBS, GCE PD, Azure Disk and Cinder migration is GA;
 * Portworx needs the node's migrated-plugins annotation; the others
 * (Azure File, vSphere) are not counted by this plugin. */
static bool migration_on(const struct sx_csi_node *csi, enum sx_volume_source src)
{
	if (!csi)
		return false;
	switch (src) {
	case SX_VSRC_AWS_EBS:
	case SX_VSRC_GCE_PD:
	case SX_VSRC_AZURE_DISK:
	case SX_VSRC_CINDER:
		return true;
	case SX_VSRC_PORTWORX:
		return sx_csi_node_migrated(csi, sx_volume_source_plugin(src));
	default:
		return false;
	}
}

static sx_str unspecified(void)
{
	return sx_intern("UNSPECIFIED");
}

/* The CSI id of an in-tree source with disk id `id`; zone applies to GCE
 * (the PV's zone label, UNSPECIFIED inline). */
static struct vol_id translated(enum sx_volume_source src, sx_str id, sx_str zone)
{
	struct vol_id v = {sx_intern(sx_volume_source_csi_driver(src)), H_HANDLE, id, 0};

	if (src == SX_VSRC_GCE_PD) {
		v.kind = H_GCE;
		v.a = zone;
		v.b = id;
	}
	return v;
}

/* ---------- resolving volumes ---------- */

/* A volume id of the pod as PreFilter resolved it, counted on a node
 * unless `mig` (an in-tree source, SX_VSRC_OTHER for none) is not migrated
 * to CSI there. */
struct vol_cand {
	struct vol_id id;
	uint8_t mig; /* enum sx_volume_source */
};

/* PreFilter state: the pod's claims, PVs and classes looked up once, not
 * on every node. Immutable after PreFilter; clones share it (refcount). */
struct nvl_state {
	atomic_int refcount;
	struct sx_status *err; /* resolving failed: Filter returns a copy */
	uint32_t n, cap;
	struct vol_cand *v;
};

struct resolve_ctx {
	const struct sx_snapshot *snap;
	const struct sx_csi_node *csi; /* unused when cands is set */
	const struct sx_pod *pod;
	bool new_pod;
	struct vol_set *out;
	struct nvl_state *cands; /* PreFilter: every id with its condition */
};

static int cands_push(struct nvl_state *s, const struct vol_id *id, enum sx_volume_source mig)
{
	if (sx_vec_reserve(s->v, s->cap, s->n + 1, 4) < 0)
		return SX_ENOMEM;
	s->v[s->n++] = (struct vol_cand){*id, (uint8_t)mig};
	return 0;
}

/* Counts id on the node when `mig` is SX_VSRC_OTHER or migrated there;
 * in PreFilter, records it with that condition. */
static int add_id(struct resolve_ctx *c, const struct vol_id *id, enum sx_volume_source mig)
{
	if (c->cands)
		return cands_push(c->cands, id, mig);
	if (mig != SX_VSRC_OTHER && !migration_on(c->csi, mig))
		return 0;
	return set_add(c->out, id);
}

/* getCSIDriverInfoFromSC: the class's driver, the claim as handle. */
static int from_class(struct resolve_ctx *c, const struct sx_pvc *pvc, sx_str claim)
{
	const struct sx_storage_class *sc;
	enum sx_volume_source src;
	struct vol_id v = {0, H_CLAIM, c->pod->meta.ns, claim};

	if (pvc->storage_class == SX_STR_EMPTY)
		return 0; /* Immediate binding: bound before scheduling */
	sc = sx_snapshot_find_storage_class(c->snap, pvc->storage_class);
	if (!sc)
		return 0;
	src = sx_volume_source_from_plugin(sx_str_get(sc->provisioner));
	if (src != SX_VSRC_OTHER && !c->cands && !migration_on(c->csi, src))
		return 0;
	v.driver = src != SX_VSRC_OTHER ? sx_intern(sx_volume_source_csi_driver(src))
					: sc->provisioner;
	return add_id(c, &v, src);
}

/* getCSIDriverInfo: from the bound PV, else from the class. */
static int from_claim(struct resolve_ctx *c, const struct sx_pvc *pvc, sx_str claim)
{
	const struct sx_pv *pv = pvc->volume_name == SX_STR_EMPTY
					 ? NULL
					 : sx_snapshot_find_pv(c->snap, pvc->volume_name);
	struct vol_id v;
	sx_str zone = 0;

	if (!pv)
		return from_class(c, pvc, claim);
	if (pv->source == SX_VSRC_CSI) {
		if (pv->csi_driver == SX_STR_EMPTY || pv->volume_handle == SX_STR_EMPTY)
			return 0;
		v = (struct vol_id){pv->csi_driver, H_HANDLE, pv->volume_handle, 0};
		return add_id(c, &v, SX_VSRC_OTHER);
	}
	if (!sx_volume_source_csi_driver(pv->source))
		return 0;
	if (!c->cands && !migration_on(c->csi, pv->source))
		return 0;
	if (!sx_labels_get(&pv->meta.labels, SX_S_ZONE, &zone) &&
	    !sx_labels_get(&pv->meta.labels, SX_S_ZONE_BETA, &zone))
		zone = unspecified();
	v = translated(pv->source, pv->volume_handle, zone);
	return add_id(c, &v, pv->source);
}

/* An inline in-tree volume, counted when migrated on the node. */
static int from_inline(struct resolve_ctx *c, const struct sx_volume *vol)
{
	struct vol_id v;
	sx_str id = vol->id;

	if (!sx_volume_source_csi_driver(vol->source))
		return 0;
	if (!c->cands && !migration_on(c->csi, vol->source))
		return 0; /* not counted: the id need not be made */
	if (vol->source == SX_VSRC_AWS_EBS && strncmp(sx_str_get(id), "aws://", 6) == 0)
		id = sx_intern(strrchr(sx_str_get(id), '/') + 1);
	v = translated(vol->source, id, unspecified());
	return add_id(c, &v, vol->source);
}

/* filterAttachableVolumes for one claim-backed volume. 0, or *st set. */
static int resolve_claim(struct resolve_ctx *c, const struct sx_volume *vol, struct sx_status **st)
{
	const struct sx_pod *pod = c->pod;
	const struct sx_pvc *pvc;

	if (vol->claim == SX_STR_EMPTY) {
		*st = sx_status_new(SX_ERROR, "PersistentVolumeClaim had no name");
		return -1;
	}
	pvc = sx_snapshot_find_pvc(c->snap, pod->meta.ns, vol->claim);
	if (!pvc) {
		if (c->new_pod)
			*st = sx_status_new(
				SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				"looking up PVC %s/%s: persistentvolumeclaim \"%s\" not "
				"found",
				sx_str_get(pod->meta.ns), sx_str_get(vol->claim),
				sx_str_get(vol->claim));
		return c->new_pod ? -1 : 0;
	}
	if (vol->source == SX_VSRC_EPHEMERAL && (!pvc->controller_uid || !pod->meta.uid ||
						 strcmp(pvc->controller_uid, pod->meta.uid))) {
		*st = sx_status_new(SX_ERROR,
				    "PVC %s/%s was not created for pod %s/%s (pod is not "
				    "owner)",
				    sx_str_get(pod->meta.ns), sx_str_get(vol->claim),
				    sx_str_get(pod->meta.ns), pod->meta.name ? pod->meta.name : "");
		return -1;
	}
	return from_claim(c, pvc, vol->claim);
}

/* Every attachable volume of c->pod into c->out; a status on failure. */
static struct sx_status *resolve_pod(struct resolve_ctx *c)
{
	struct sx_status *st = NULL;

	for (uint32_t i = 0; i < c->pod->nvolumes; i++) {
		const struct sx_volume *vol = &c->pod->volumes[i];
		int rc = vol->source == SX_VSRC_PVC || vol->source == SX_VSRC_EPHEMERAL
				 ? resolve_claim(c, vol, &st)
				 : from_inline(c, vol);

		if (rc < 0)
			return st ? st : sx_status_oom();
	}
	return NULL;
}

/* ---------- PreFilter / Filter ---------- */

/* IsInlineMigratable: an in-tree source csi-translation-lib translates. */
static bool inline_migratable(const struct sx_volume *v)
{
	return v->source != SX_VSRC_PVC && v->source != SX_VSRC_EPHEMERAL &&
	       sx_volume_source_csi_driver(v->source) != NULL;
}

static bool counts_volumes(const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];

		if (v->source == SX_VSRC_PVC || v->source == SX_VSRC_EPHEMERAL ||
		    inline_migratable(v))
			return true;
	}
	return false;
}

static void state_free_node_volume_limits(void *state)
{
	struct nvl_state *s = state;

	if (!s || atomic_fetch_sub(&s->refcount, 1) != 1)
		return;
	sx_status_free(s->err);
	free(s->v);
	free(s);
}

static void *state_clone_node_volume_limits(const void *state)
{
	struct nvl_state *s = (struct nvl_state *)state;

	atomic_fetch_add(&s->refcount, 1);
	return s;
}

/* Skip unless the pod has a claim, a generic ephemeral volume or a
 * migratable in-tree inline volume. Otherwise resolves them into the
 * state; a failure (a missing claim) is Filter's answer on every node, as
 * upstream finds it there. */
static struct sx_status *pre_filter_node_volume_limits(void *self, struct sx_cycle_state *cs,
						       const struct sx_pod *pod,
						       struct sx_node_set **result)
{
	struct nvl_state *s;
	struct resolve_ctx c = {cs->snap, NULL, pod, true, NULL, NULL};

	if (!counts_volumes(pod))
		return sx_status_new(SX_SKIP, NULL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return sx_status_new(SX_ERROR, "out of memory");
	atomic_init(&s->refcount, 1);
	c.cands = s;
	s->err = resolve_pod(&c);
	state_free_node_volume_limits(cs->slots[SX_SLOT_node_volume_limits]);
	cs->slots[SX_SLOT_node_volume_limits] = s;
	return NULL;
}

/* Volumes attached by VolumeAttachments of the node, not already counted
 * from its pods, per driver (added to counts of driver `driver`). */
static int64_t attachments_of(const struct sx_snapshot *snap, sx_str node, sx_str driver,
			      const struct vol_set *attached)
{
	uint32_t n;
	const struct sx_volume_attachment *const *vas =
		sx_snapshot_attachments_on_node(snap, node, &n);
	int64_t count = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct sx_pv *pv;
		struct vol_id v;

		if (vas[i]->attacher != driver || vas[i]->pv_name == SX_STR_EMPTY)
			continue;
		pv = sx_snapshot_find_pv(snap, vas[i]->pv_name);
		if (!pv || pv->source != SX_VSRC_CSI)
			continue;
		v = (struct vol_id){vas[i]->attacher, H_HANDLE, pv->volume_handle, 0};
		count += set_find(attached, &v) < 0;
	}
	return count;
}

static int64_t count_driver(const struct vol_set *s, sx_str driver)
{
	int64_t n = 0;

	for (uint32_t i = 0; i < s->n; i++)
		n += s->v[i].driver == driver;
	return n;
}

/* attached + new > limit for a driver with a limit? */
static bool over_limit(const struct sx_csi_node *csi, const struct sx_snapshot *snap, sx_str node,
		       const struct vol_set *fresh, const struct vol_set *attached)
{
	for (uint32_t i = 0; i < fresh->n; i++) {
		const struct sx_csi_driver_info *d = sx_csi_node_driver(csi, fresh->v[i].driver);
		int64_t total;

		if (!d || !d->has_count)
			continue;
		total = count_driver(attached, d->name) + count_driver(fresh, d->name) +
			attachments_of(snap, node, d->name, attached);
		if (total > d->allocatable_count)
			return true;
	}
	return false;
}

static bool has_limits(const struct sx_csi_node *csi)
{
	for (uint32_t i = 0; csi && i < csi->ndrivers; i++)
		if (csi->drivers[i].has_count)
			return true;
	return false;
}

/* The volumes of the node's pods; a status on failure. */
static struct sx_status *attached_volumes(struct resolve_ctx *c, const struct sx_node_info *ni)
{
	struct sx_status *st;

	c->new_pod = false;
	for (uint32_t i = 0; i < ni->npods; i++) {
		if (ni->pods[i]->nvolumes == 0)
			continue;
		c->pod = ni->pods[i];
		st = resolve_pod(c);
		if (st)
			return st;
	}
	return NULL;
}

/* The pod's volumes counted on a node with CSINode csi: PreFilter's ids
 * whose in-tree source is migrated there; a status on failure. */
static struct sx_status *fresh_volumes(const struct nvl_state *s, struct resolve_ctx *c)
{
	if (!s)
		return resolve_pod(c); /* no PreFilter state: look them up here */
	if (s->err)
		return sx_status_clone(s->err);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct vol_cand *v = &s->v[i];

		if (v->mig != SX_VSRC_OTHER && !migration_on(c->csi, v->mig))
			continue;
		if (set_add(c->out, &v->id) < 0)
			return sx_status_oom();
	}
	return NULL;
}

/* VolumeLimitScaling: the first driver of the pod's volumes that asks
 * for presence (preventPodSchedulingIfMissing) and that the node's
 * CSINode does not list; NULL when none. */
static struct sx_status *missing_driver(const struct sx_snapshot *snap,
					const struct sx_csi_node *csi, const struct vol_set *fresh)
{
	for (uint32_t i = 0; i < fresh->n; i++) {
		sx_str driver = fresh->v[i].driver;
		const struct sx_csi_driver *d = sx_snapshot_find_csi_driver(snap, driver);

		if (!d || !d->prevent_if_missing || sx_csi_node_driver(csi, driver))
			continue;
		return sx_status_new(SX_UNSCHEDULABLE, "%s CSI driver is not installed on the node",
				     sx_str_get(driver));
	}
	return NULL;
}

/* The node's attach limits against the pod's volumes that are new there
 * (the pod has volumes and the node a CSINode with a limit), after the
 * presence of the drivers that ask for it (VolumeLimitScaling). */
static struct sx_status *check_limits(const struct nvl_plugin *p, const struct nvl_state *s,
				      const struct sx_cycle_state *cs, const struct sx_pod *pod,
				      const struct sx_node_info *ni, sx_str node,
				      const struct sx_csi_node *csi)
{
	struct vol_set fresh, attached;
	struct resolve_ctx c = {cs->snap, csi, pod, true, &fresh, NULL};
	struct sx_status *st;

	set_init(&fresh);
	set_init(&attached);
	st = fresh_volumes(s, &c);
	if (!st && fresh.n && p->scaling)
		st = missing_driver(cs->snap, csi, &fresh);
	if (st || fresh.n == 0 || !has_limits(csi))
		goto out;
	c.out = &attached;
	st = attached_volumes(&c, ni);
	if (st)
		goto out;
	for (uint32_t i = fresh.n; i-- > 0;) /* one attachment serves every pod */
		if (set_find(&attached, &fresh.v[i]) >= 0)
			set_remove_at(&fresh, i);
	if (over_limit(csi, cs->snap, node, &fresh, &attached))
		st = &reject_max_count;
out:
	set_free(&fresh);
	set_free(&attached);
	return st;
}

static struct sx_status *filter_node_volume_limits(void *self, const struct sx_cycle_state *cs,
						   const struct sx_pod *pod,
						   const struct sx_node_info *ni)
{
	const struct nvl_plugin *p = self;
	const struct nvl_state *s = cs->slots[SX_SLOT_node_volume_limits];
	sx_str node;
	const struct sx_csi_node *csi;

	if (pod->nvolumes == 0)
		return NULL;
	node = ni->node ? ni->node->name_id : ni->name;
	csi = sx_snapshot_find_csi_node(cs->snap, node);
	if (s && !s->err && !has_limits(csi) && (!p || !p->scaling))
		return NULL; /* nothing counted here: the volumes need not be listed */
	return check_limits(p ? p : &(struct nvl_plugin){0}, s, cs, pod, ni, node, csi);
}

/* The driver whose limit the pod's new volumes pass, with the counts
 * check_limits compared: volumes already attached to the node (its pods'
 * and VolumeAttachments') plus the pod's new ones, against the CSINode's
 * allocatable count (upstream nodevolumelimits/csi.go, CSILimits.Filter). */
static void explain_on_node(void *self, const struct sx_cycle_state *cs, const struct sx_pod *pod,
			    const struct sx_node_info *ni, const struct sx_status *st,
			    struct sx_detail *d)
{
	const struct nvl_state *s = cs->slots[SX_SLOT_node_volume_limits];
	sx_str node = ni->node ? ni->node->name_id : ni->name;
	const struct sx_csi_node *csi = sx_snapshot_find_csi_node(cs->snap, node);
	struct vol_set fresh, attached;
	struct resolve_ctx c = {cs->snap, csi, pod, true, &fresh, NULL};
	struct sx_status *err;

	if (st->nreasons == 0 || strcmp(st->reasons[0], reject_max_count.reasons[0]) != 0)
		return;
	set_init(&fresh);
	set_init(&attached);
	err = fresh_volumes(s, &c);
	c.out = &attached;
	if (!err && has_limits(csi))
		err = attached_volumes(&c, ni);
	for (uint32_t i = fresh.n; !err && i-- > 0;)
		if (set_find(&attached, &fresh.v[i]) >= 0)
			set_remove_at(&fresh, i);
	for (uint32_t i = 0; !err && i < fresh.n; i++) {
		const struct sx_csi_driver_info *drv = sx_csi_node_driver(csi, fresh.v[i].driver);
		if (!drv || !drv->has_count)
			continue;
		int64_t on_node = count_driver(&attached, drv->name) +
				  attachments_of(cs->snap, node, drv->name, &attached);
		int64_t wanted = count_driver(&fresh, drv->name);
		if (on_node + wanted <= drv->allocatable_count)
			continue;
		sx_detail_text(d, "driver %s: %lld attached + %lld new > limit %lld",
			       sx_str_get(drv->name), (long long)on_node, (long long)wanted,
			       (long long)drv->allocatable_count);
		sx_detail_str(d, "driver", sx_str_get(drv->name));
		sx_detail_int(d, "attached", on_node);
		sx_detail_int(d, "new", wanted);
		sx_detail_int(d, "limit", drv->allocatable_count);
		break;
	}
	sx_status_free(err);
	set_free(&fresh);
	set_free(&attached);
}

static void explain_node_volume_limits(void *self, const struct sx_cycle_state *cs,
				       const struct sx_pod *pod, const struct sx_node_info *ni,
				       const struct sx_status *st, struct sx_detail *d)
{
	if (ni) /* nothing behind a PreFilter rejection */
		explain_on_node(self, cs, pod, ni, st, d);
}

/* ---------- queueing hints ---------- */

/* isSchedulableAfterPodDeleted: a scheduled pod with a claim, an ephemeral
 * or a migratable inline volume went away. */
static enum sx_hint hint_pod_node_volume_limits(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	const struct sx_pod *d = old_obj;

	SX_UNUSED(self);
	SX_UNUSED(pod);
	SX_UNUSED(new_obj);
	if (!d || d->nvolumes == 0 || d->node_name == SX_STR_EMPTY)
		return SX_QUEUE_SKIP;
	return counts_volumes(d) ? SX_QUEUE : SX_QUEUE_SKIP;
}

/* isSchedulableAfterPVCAdded: a claim of the pod (ephemeral included). */
static enum sx_hint hint_pvc_node_volume_limits(void *self, const struct sx_pod *pod,
						const void *old_obj, const void *new_obj)
{
	const struct sx_object *o = new_obj;
	const struct sx_pvc *pvc = o ? o->obj : NULL;
	sx_str name;

	SX_UNUSED(self);
	SX_UNUSED(old_obj);
	if (!pvc || pvc->meta.ns != pod->meta.ns || !pvc->meta.name)
		return SX_QUEUE_SKIP;
	name = sx_intern_lookup_n(pvc->meta.name, strlen(pvc->meta.name));
	for (uint32_t i = 0; i < pod->npvcs; i++)
		if (pod->pvcs[i] == name)
			return SX_QUEUE;
	return SX_QUEUE_SKIP;
}

/* isSchedulableAfterVolumeAttachmentDeleted, without the claim lister:
 * the pod has a claim, or an inline volume of the attacher's driver. */
static enum sx_hint hint_va_node_volume_limits(void *self, const struct sx_pod *pod,
					       const void *old_obj, const void *new_obj)
{
	const struct sx_object *o = old_obj;
	const struct sx_volume_attachment *va = o ? o->obj : NULL;

	SX_UNUSED(self);
	SX_UNUSED(new_obj);
	if (!va)
		return SX_QUEUE;
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		const char *driver = sx_volume_source_csi_driver(v->source);

		if (v->source == SX_VSRC_PVC || v->source == SX_VSRC_EPHEMERAL)
			return SX_QUEUE;
		if (driver && strcmp(driver, sx_str_get(va->attacher)) == 0)
			return SX_QUEUE;
	}
	return SX_QUEUE_SKIP;
}

/* isSchedulableAfterCSINodeUpdated: a driver appeared, or its
 * allocatable count grew (a count appearing lifts a limit too). */
static enum sx_hint hint_csi_node_node_volume_limits(void *self, const struct sx_pod *pod,
						     const void *old_obj, const void *new_obj)
{
	const struct sx_object *oo = old_obj, *no = new_obj;
	const struct sx_csi_node *o = oo ? oo->obj : NULL, *n = no ? no->obj : NULL;

	SX_UNUSED(self);
	SX_UNUSED(pod);
	if (!o || !n)
		return SX_QUEUE;
	for (uint32_t i = 0; i < n->ndrivers; i++) {
		const struct sx_csi_driver_info *nd = &n->drivers[i];
		const struct sx_csi_driver_info *od = sx_csi_node_driver(o, nd->name);

		if (!od || (od->has_count && !nd->has_count) ||
		    (od->has_count && nd->has_count &&
		     nd->allocatable_count > od->allocatable_count))
			return SX_QUEUE;
	}
	return SX_QUEUE_SKIP;
}

static const struct sx_event_reg events_node_volume_limits[] = {
	{SX_RES_CSI_NODE, SX_ACT_ADD, NULL},
	{SX_RES_CSI_NODE, SX_ACT_UPDATE, hint_csi_node_node_volume_limits},
	{SX_RES_POD, SX_ACT_DELETE, hint_pod_node_volume_limits},
	{SX_RES_PVC, SX_ACT_ADD, hint_pvc_node_volume_limits},
	{SX_RES_VOLUME_ATTACHMENT, SX_ACT_DELETE, hint_va_node_volume_limits},
	SX_EVENTS_END,
};

/* NodeVolumeLimits (CSILimits).SignPod: the non-synthetic volumes (csi.go). */
static struct sx_status *sign_node_volume_limits(void *self, const struct sx_pod *pod,
						 uint32_t *signers)
{
	(void)self;
	(void)pod;
	*signers |= SX_SIGNER_VOLUMES;
	return NULL;
}

const struct sx_plugin sx_plugin_node_volume_limits = {
	.name = NAME,
	.init = init_node_volume_limits,
	.destroy = destroy_node_volume_limits,
	.state_clone = state_clone_node_volume_limits,
	.state_free = state_free_node_volume_limits,
	.pre_filter = pre_filter_node_volume_limits,
	.filter = filter_node_volume_limits,
	.events = events_node_volume_limits,
	.explain = explain_node_volume_limits,
	.sign = sign_node_volume_limits,
};
