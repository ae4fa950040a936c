/* The volume binder's scheduling half (upstream volumebinding/binder.go):
 * the assume cache, GetPodVolumeClaims, FindPodVolumes (bound claims' PV
 * node affinity, static matching of delayed-binding claims to available
 * PVs, the provisioning check with CSIStorageCapacity) and
 * AssumePodVolumes. The API half (PreBind) is in volume_prebind.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/hmap.h"
#include "schedext/selector.h"
#include "volume_binder.h"

#define NO_PROVISIONER "kubernetes.io/no-provisioner"

/* ---------- resourceVersions ---------- */

/* Compares two resourceVersions as upstream's assume cache and binder do
 * (integers); <0, 0, >0. Unparsable ones compare equal only when equal. */
int vb_rv_cmp(const char *a, const char *b)
{
	char *ea, *eb;
	unsigned long long x, y;

	if (!a || !b)
		return (a != NULL) - (b != NULL);
	x = strtoull(a, &ea, 10);
	y = strtoull(b, &eb, 10);
	if (*a && *b && !*ea && !*eb)
		return (x > y) - (x < y);
	return strcmp(a, b) != 0;
}

/* ---------- the assume cache ---------- */

/* Assumptions per table: far above any cluster's volumes in flight, so
 * only a runaway stream of them meets it (assume then fails). */
#define ASSUME_MAX (1u << 20)

struct assumed {
	char *key;   /* PV name, or "ns/name" of a PVC */
	char rv[32]; /* the API object's resourceVersion it was assumed on */
	/* PV: the assumed claimRef */
	sx_str claim_ns, claim_name;
	char *claim_uid;
	/* PVC: the assumed selected node */
	sx_str selected_node;
};

/* Two tables keyed by sx_hash_str(key) (hmap.h), entries struct assumed. */
struct vb_assume {
	pthread_mutex_t mu;
	struct sx_hmap pv, pvc;
};

struct vb_assume *vb_assume_new(void)
{
	struct vb_assume *a = sx_calloc(1, sizeof(*a));

	if (a) {
		pthread_mutex_init(&a->mu, NULL);
		sx_hmap_init(&a->pv, ASSUME_MAX);
		sx_hmap_init(&a->pvc, ASSUME_MAX);
	}
	return a;
}

static void assumed_free(struct assumed *e)
{
	free(e->key);
	free(e->claim_uid);
	free(e);
}

static void table_free(struct sx_hmap *table)
{
	struct sx_hmap_slot *s;

	for (uint32_t i = 0; (s = sx_hmap_next(table, &i));)
		assumed_free(sx_hmap_ptr(s));
	sx_hmap_clear(table);
}

void vb_assume_free(struct vb_assume *a)
{
	if (!a)
		return;
	table_free(&a->pv);
	table_free(&a->pvc);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static void pvc_key(char *buf, size_t len, sx_str ns, const char *name)
{
	snprintf(buf, len, "%s/%s", sx_str_get(ns), name);
}

static bool key_eq(uint64_t val, const void *key)
{
	return strcmp(((const struct assumed *)(uintptr_t)val)->key, key) == 0;
}

/* The slot of key in table (a->mu held), or NULL. */
static struct sx_hmap_slot *find_slot(struct sx_hmap *table, const char *key)
{
	return table->n ? sx_hmap_find(table, sx_hash_str(key), key_eq, key) : NULL;
}

static void drop(struct sx_hmap *table, struct sx_hmap_slot *s)
{
	struct assumed *e = sx_hmap_ptr(s);

	sx_hmap_del_slot(table, s);
	assumed_free(e);
}

/* The entry valid for an API object at resourceVersion rv, or NULL. A
 * newer API object replaces the assumption (the informer's update). */
static struct assumed *lookup(struct sx_hmap *table, const char *key, const char *rv)
{
	struct sx_hmap_slot *s = find_slot(table, key);

	if (!s)
		return NULL;
	if (vb_rv_cmp(rv, ((struct assumed *)sx_hmap_ptr(s))->rv) > 0) {
		drop(table, s);
		return NULL;
	}
	return sx_hmap_ptr(s);
}

/* Assume: stores e (taking it) unless an assumption on a newer object is
 * there ("out of sync"). */
static int store(struct sx_hmap *table, struct assumed *e, const char *what, struct sx_error *err)
{
	struct sx_hmap_slot *s = find_slot(table, e->key);
	int rc;

	if (s) {
		const struct assumed *old = sx_hmap_ptr(s);

		if (vb_rv_cmp(e->rv, old->rv) < 0) {
			sx_error_set(err, SX_ECONFLICT,
				     "%s \"%s\" is out of sync (stored: %s, assume: %s)", what,
				     e->key, old->rv, e->rv);
			assumed_free(e);
			return SX_ECONFLICT;
		}
		drop(table, s);
	}
	rc = sx_hmap_add(table, sx_hash_str(e->key), e);
	if (rc < 0) {
		assumed_free(e);
		return sx_error_set(err, rc,
				    rc == SX_ENOMEM ? "out of memory" : "too many assumed volumes");
	}
	return 0;
}

/* Restore: back to the API object. */
static void restore(struct sx_hmap *table, const char *key)
{
	struct sx_hmap_slot *s = find_slot(table, key);

	if (s)
		drop(table, s);
}

/* ---------- matching helpers ---------- */

/* volume.CheckNodeAffinity: the PV's required node affinity against a node
 * known only by its labels (matchFields see an empty name). */
bool vb_pv_node_affinity_matches(const struct sx_pv *pv, const struct sx_node *node)
{
	const struct sx_node_selector *sel = pv->node_affinity;

	if (!sel)
		return true;
	for (uint32_t t = 0; t < sel->nterms; t++) {
		const struct sx_node_selector_term *term = &sel->terms[t];
		bool ok = term->nexprs + term->nfields > 0;

		for (uint32_t i = 0; ok && i < term->nexprs; i++)
			ok = sx_node_requirement_matches(&term->exprs[i], node);
		for (uint32_t i = 0; ok && i < term->nfields; i++) {
			const struct sx_requirement *r = &term->fields[i];
			bool in = r->nvalues == 1 && r->values[0] == SX_STR_EMPTY;

			ok = r->op == SX_OP_IN ? in : r->op == SX_OP_NOT_IN ? !in : false;
		}
		if (ok)
			return true;
	}
	return false;
}

/* IsVolumeBoundToClaim on the effective claimRef. */
static bool bound_to_claim(const struct vb_pv *v, const struct vb_claim *c)
{
	const struct sx_pvc *pvc = c->pvc;

	if (!v->has_claim_ref || v->claim_ns != pvc->meta.ns || v->claim_name != c->name)
		return false;
	return !v->claim_uid || !*v->claim_uid ||
	       (pvc->meta.uid && strcmp(v->claim_uid, pvc->meta.uid) == 0);
}

/* ---------- PreFilter: the pod's claims ---------- */

void vb_state_clear(struct vb_state *st)
{
	for (uint32_t i = 0; i < st->nunbound; i++) {
		for (uint32_t j = 0; j < st->unbound[i].ncand; j++)
			free(st->unbound[i].cand[j].owned_uid);
		free(st->unbound[i].cand);
	}
	free(st->bound);
	free(st->unbound);
	vb_volumes_clear(&st->vols);
	st->bound = st->unbound = NULL;
	st->nbound = st->nunbound = 0;
}

static bool is_claim_volume(const struct sx_volume *v)
{
	return v->source == SX_VSRC_PVC || v->source == SX_VSRC_EPHEMERAL;
}

/* podHasPVCs: the lookup errors of one claim, or NULL. */
static struct sx_status *check_claim(const struct sx_snapshot *snap, const struct sx_pod *pod,
				     const struct sx_volume *v, const struct sx_pvc **out)
{
	const struct sx_pvc *pvc = sx_snapshot_find_pvc(snap, pod->meta.ns, v->claim);
	const char *name = sx_str_get(v->claim);
	enum sx_code c = SX_UNSCHEDULABLE_AND_UNRESOLVABLE;

	*out = pvc;
	if (!pvc && v->source == SX_VSRC_EPHEMERAL)
		return sx_status_new(c,
				     "waiting for ephemeral volume controller to create the "
				     "persistentvolumeclaim \"%s\"",
				     name);
	if (!pvc)
		return sx_status_new(c, "persistentvolumeclaim \"%s\" not found", name);
	if (pvc->phase == SX_PVC_LOST)
		return sx_status_new(c,
				     "persistentvolumeclaim \"%s\" bound to non-existent "
				     "persistentvolume \"%s\"",
				     name, sx_str_get(pvc->volume_name));
	if (pvc->deleting)
		return sx_status_new(c, "persistentvolumeclaim \"%s\" is being deleted", name);
	if (v->source == SX_VSRC_EPHEMERAL && /* VolumeIsForPod: IsControlledBy */
	    (!pvc->controller_uid ||
	     strcmp(pvc->controller_uid, pod->meta.uid ? pod->meta.uid : "") != 0))
		return sx_status_new(c,
				     "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
				     sx_str_get(pvc->meta.ns), pvc->meta.name,
				     sx_str_get(pod->meta.ns), pod->meta.name);
	return NULL;
}

/* IsDelayBindingMode: 1 delayed, 0 immediate, <0 with err (mode unset). */
static int delay_binding(const struct sx_snapshot *snap, const struct sx_pvc *pvc,
			 struct sx_error *err)
{
	const struct sx_storage_class *sc;

	if (pvc->storage_class == SX_STR_EMPTY)
		return 0;
	sc = sx_snapshot_find_storage_class(snap, pvc->storage_class);
	if (!sc)
		return 0;
	if (sc->binding_mode == SX_BINDING_UNSET)
		return sx_error_set(err, SX_EINVAL,
				    "VolumeBindingMode not set for StorageClass \"%s\"",
				    sx_str_get(pvc->storage_class));
	return sc->binding_mode == SX_BINDING_WAIT_FOR_FIRST_CONSUMER;
}

/* The claim's selected node, with its assumption. */
static sx_str selected_node(struct vb_assume *a, const struct sx_pvc *pvc)
{
	char key[512];
	struct assumed *e;
	sx_str node = pvc->selected_node;

	pvc_key(key, sizeof(key), pvc->meta.ns, pvc->meta.name);
	pthread_mutex_lock(&a->mu);
	e = lookup(&a->pvc, key, pvc->meta.resource_version);
	if (e)
		node = e->selected_node;
	pthread_mutex_unlock(&a->mu);
	return node;
}

/* The node-independent half of FindMatchingVolume's checks, in its order:
 * may v ever be returned for claim c? */
static bool candidate(const struct vb_pv *v, const struct vb_claim *c)
{
	const struct sx_pv *pv = v->pv;
	const struct sx_pvc *pvc = c->pvc;

	if (v->has_claim_ref && !bound_to_claim(v, c))
		return false;
	if (pv->capacity_storage < pvc->request_storage || pv->volume_mode != pvc->volume_mode ||
	    pv->deleting)
		return false;
	if (bound_to_claim(v, c))
		return true; /* pre-bound: returned whatever its phase */
	return pv->phase == SX_PV_AVAILABLE &&
	       (!pvc->selector || sx_selector_matches(pvc->selector, &pv->meta.labels)) &&
	       pv->storage_class == pvc->storage_class && pv->vac == pvc->vac &&
	       (pvc->access_modes & ~pv->access_modes) == 0;
}

/* The PV with its assumption (a->mu held); *uid the assumed claim uid. */
static struct vb_pv effective(struct vb_assume *a, const struct sx_pv *pv, const char **uid)
{
	struct assumed *e = lookup(&a->pv, pv->meta.name, pv->meta.resource_version);
	struct vb_pv v = {pv, pv->has_claim_ref, pv->claim_ns, pv->claim_name, pv->claim_uid, NULL};

	*uid = NULL;
	if (e) {
		v.has_claim_ref = true;
		v.claim_ns = e->claim_ns;
		v.claim_name = e->claim_name;
		v.claim_uid = *uid = e->claim_uid;
	}
	return v;
}

/* Fills c->cand from the PVs of its class (ListPVs, assumptions applied). */
static int candidates(struct vb_assume *a, const struct sx_snapshot *snap, struct vb_claim *c)
{
	uint32_t n;
	const struct sx_pv *const *pvs = sx_snapshot_pvs_by_class(snap, c->pvc->storage_class, &n);
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		const char *uid;
		struct vb_pv v = effective(a, pvs[i], &uid);

		if (!candidate(&v, c))
			continue;
		if (!c->cand && !(c->cand = sx_calloc(n - i, sizeof(*c->cand))))
			rc = SX_ENOMEM;
		else if (uid && !(v.claim_uid = v.owned_uid = sx_strdup(uid)))
			rc = SX_ENOMEM;
		else
			c->cand[c->ncand++] = v;
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* What checkVolumeProvisions reads of the class, looked up once. */
static void provisioning(const struct sx_snapshot *snap, struct vb_claim *c)
{
	const struct sx_csi_driver *driver;
	const char *prov;

	c->sc = sx_snapshot_find_storage_class(snap, c->pvc->storage_class);
	if (!c->sc)
		return;
	prov = sx_str_get(c->sc->provisioner);
	c->provisioner = *prov && strcmp(prov, NO_PROVISIONER) != 0;
	driver = sx_snapshot_find_csi_driver(snap, c->sc->provisioner);
	c->capacity = c->pvc->has_request && driver && driver->storage_capacity;
	if (c->capacity)
		c->caps = sx_snapshot_capacities_by_class(snap, c->pvc->storage_class, &c->ncaps);
}

/* byPVCSize: by requested storage, the pod's order among equals (Go's
 * sort.Sort is an insertion sort at these sizes). */
static void sort_by_size(struct vb_claim *c, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct vb_claim x = c[i];
		uint32_t j = i;

		for (; j > 0 && c[j - 1].pvc->request_storage > x.pvc->request_storage; j--)
			c[j] = c[j - 1];
		c[j] = x;
	}
}

/* See vb_claim.single. */
static const struct sx_requirement *single_requirement(const struct sx_pv *pv)
{
	const struct sx_node_selector *sel = pv ? pv->node_affinity : NULL;

	if (!sel || sel->nterms != 1 || sel->terms[0].nexprs != 1 || sel->terms[0].nfields != 0)
		return NULL;
	return &sel->terms[0].exprs[0];
}

/* GetPodVolumeClaims after podHasPVCs' checks. */
static struct sx_status *classify(struct vb_assume *a, const struct sx_snapshot *snap,
				  const struct sx_pod *pod, struct vb_state *st)
{
	struct sx_error err = {0};
	bool immediate = false;

	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		const struct sx_pvc *pvc;
		int delay;

		if (!is_claim_volume(v))
			continue;
		pvc = sx_snapshot_find_pvc(snap, pod->meta.ns, v->claim);
		if (vb_fully_bound(pvc)) {
			const struct sx_pv *pv = sx_snapshot_find_pv(snap, pvc->volume_name);

			st->bound[st->nbound++] = (struct vb_claim){
				.pvc = pvc, .pv = pv, .single = single_requirement(pv)};
			continue;
		}
		delay = delay_binding(snap, pvc, &err);
		if (delay < 0)
			return sx_status_new(SX_ERROR, "%s", err.msg);
		if (delay && pvc->volume_name == SX_STR_EMPTY)
			st->unbound[st->nunbound++] = (struct vb_claim){
				.pvc = pvc,
				.selected_node = selected_node(a, pvc),
				.name = sx_intern_lookup_n(pvc->meta.name, strlen(pvc->meta.name))};
		else
			immediate = true;
	}
	if (immediate)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
				     "pod has unbound immediate PersistentVolumeClaims");
	for (uint32_t i = 0; i < st->nunbound; i++) {
		if (candidates(a, snap, &st->unbound[i]) < 0)
			return sx_status_new(SX_ERROR, "out of memory");
		provisioning(snap, &st->unbound[i]);
	}
	sort_by_size(st->unbound, st->nunbound);
	return NULL;
}

struct sx_status *vb_pod_claims(struct vb_assume *a, const struct sx_snapshot *snap,
				const struct sx_pod *pod, struct vb_state *st)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		const struct sx_pvc *pvc;
		struct sx_status *bad;

		if (!is_claim_volume(v))
			continue;
		n++;
		bad = check_claim(snap, pod, v, &pvc);
		if (bad)
			return bad;
	}
	st->skip = n == 0;
	if (st->skip)
		return NULL;
	st->bound = sx_calloc(n, sizeof(*st->bound));
	st->unbound = sx_calloc(n, sizeof(*st->unbound));
	if (!st->bound || !st->unbound)
		return sx_status_new(SX_ERROR, "out of memory");
	return classify(a, snap, pod, st);
}

/* ---------- Filter: FindPodVolumes ---------- */

void vb_volumes_clear(struct vb_volumes *v)
{
	free(v->statics);
	free(v->dynamic);
	free(v->dynamic_rv);
	memset(v, 0, sizeof(*v));
}

static bool excluded(const struct sx_pv *const *chosen, uint32_t n, const struct sx_pv *pv)
{
	for (uint32_t i = 0; i < n; i++)
		if (chosen[i] == pv)
			return true;
	return false;
}

/* volume.FindMatchingVolume on the scheduler path over the claim's
 * candidates: a PV pre-bound to the claim (NULL when its node affinity
 * fails), else the smallest available one whose affinity matches. */
static const struct vb_pv *find_matching(const struct vb_claim *c, const struct sx_node *node,
					 const struct sx_pv *const *chosen, uint32_t nchosen)
{
	const struct vb_pv *best = NULL;

	for (uint32_t i = 0; i < c->ncand; i++) {
		const struct vb_pv *v = &c->cand[i];
		const struct sx_pv *pv = v->pv;

		if (excluded(chosen, nchosen, pv))
			continue;
		if (bound_to_claim(v, c))
			return vb_pv_node_affinity_matches(pv, node) ? v : NULL;
		if (best && best->pv->capacity_storage <= pv->capacity_storage)
			continue; /* cannot win: skip the affinity check */
		if (vb_pv_node_affinity_matches(pv, node))
			best = v;
	}
	return best;
}

/* findMatchingVolumes: binds what it can; the rest go to provisioning.
 * False when some claim found no PV. */
static bool match_claims(const struct vb_state *st, const struct sx_node *node,
			 const struct vb_claim **todo, uint32_t ntodo, struct vb_volumes *out,
			 const struct vb_claim **unmatched, uint32_t *nunmatched)
{
	const struct sx_pv *chosen[64], **ch = chosen;
	uint32_t nchosen = 0;
	bool found = true;

	if (ntodo > SX_ARRAY_SIZE(chosen) && !(ch = malloc(ntodo * sizeof(*ch))))
		return false;
	for (uint32_t i = 0; i < ntodo; i++) {
		const struct vb_pv *v = find_matching(todo[i], node, ch, nchosen);

		if (!v) {
			unmatched[(*nunmatched)++] = todo[i];
			found = false;
			continue;
		}
		ch[nchosen++] = v->pv;
		if (out) {
			struct vb_binding *b = &out->statics[out->nstatic++];

			b->pv = v->pv;
			b->pvc = todo[i]->pvc;
			/* GetBindVolumeToClaim */
			b->set_bbc = !bound_to_claim(v, todo[i]) && !v->pv->bound_by_controller;
			b->dirty = b->set_bbc || !v->has_claim_ref || !v->claim_uid ||
				   !b->pvc->meta.uid || strcmp(v->claim_uid, b->pvc->meta.uid) != 0;
		}
	}
	if (ch != chosen)
		free(ch);
	return found;
}

/* capacitySufficient and nodeHasAccess over the class's capacities. */
/* capacitySufficient and nodeHasAccess over the class's capacities. */
static bool enough_capacity(const struct vb_claim *c, const struct sx_node *node)
{
	for (uint32_t i = 0; c->capacity && i < c->ncaps; i++) {
		const struct sx_csi_capacity *cap = c->caps[i];
		bool has_limit = cap->has_max_size || cap->has_capacity;
		int64_t limit = cap->has_max_size ? cap->maximum_volume_size : cap->capacity;

		if (has_limit && limit >= c->pvc->request_storage && cap->node_topology &&
		    sx_selector_matches(cap->node_topology, &node->meta.labels))
			return true;
	}
	return !c->capacity;
}

/* checkVolumeProvisions. Returns the reason bits, or <0 with err. */
static int check_provisions(const struct sx_node *node, const struct vb_claim **todo,
			    uint32_t ntodo, struct vb_volumes *out, struct sx_error *err)
{
	for (uint32_t i = 0; i < ntodo; i++) {
		const struct vb_claim *c = todo[i];
		const struct sx_pvc *pvc = c->pvc;

		if (pvc->storage_class == SX_STR_EMPTY)
			return sx_error_set(err, SX_EINVAL, "no class for claim \"%s/%s\"",
					    sx_str_get(pvc->meta.ns), pvc->meta.name);
		if (!c->sc)
			return sx_error_set(err, SX_ENOENT, "failed to find storage class \"%s\"",
					    sx_str_get(pvc->storage_class));
		if (!c->provisioner)
			return VB_BIND_CONFLICT;
		if (c->sc->allowed_topologies &&
		    !sx_node_selector_matches(c->sc->allowed_topologies, node))
			return VB_BIND_CONFLICT;
		if (!enough_capacity(c, node))
			return VB_NO_SPACE;
		if (out)
			out->dynamic[out->ndynamic++] = pvc;
	}
	return 0;
}

static int alloc_volumes(struct vb_volumes *out, uint32_t n)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	out->statics = sx_calloc(n, sizeof(*out->statics));
	out->dynamic = sx_calloc(n, sizeof(*out->dynamic));
	out->dynamic_rv = sx_calloc(n, sizeof(*out->dynamic_rv));
	if (!out->statics || !out->dynamic || !out->dynamic_rv) {
		vb_volumes_clear(out);
		return SX_ENOMEM;
	}
	return 0;
}

/* The unbound claims: selected-node fast path, matching, provisioning. */
static int find_unbound(const struct vb_state *st, const struct sx_snapshot *snap,
			const struct sx_node *node, struct vb_volumes *out, struct sx_error *err)
{
	const struct vb_claim *buf[32], **match = buf, **prov;
	uint32_t nmatch = 0, nprov = 0, n = st->nunbound;
	unsigned reasons = 0;
	int rc;

	if (2 * n > SX_ARRAY_SIZE(buf) && !(match = malloc(2 * n * sizeof(*match))))
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	prov = match + n;
	for (uint32_t i = 0; i < n; i++) {
		const struct vb_claim *c = &st->unbound[i];

		if (c->selected_node == SX_STR_EMPTY)
			match[nmatch++] = c;
		else if (c->selected_node != node->name_id) {
			reasons = VB_BIND_CONFLICT; /* fast path: provisioned elsewhere */
			goto out;
		} else
			prov[nprov++] = c;
	}
	if (nmatch && !match_claims(st, node, match, nmatch, out, prov, &nprov))
		reasons = VB_BIND_CONFLICT;
	if (nprov) {
		rc = check_provisions(node, prov, nprov, out, err);
		reasons = rc < 0 ? 0 : (unsigned)rc;
		if (rc < 0)
			goto fail;
	}
out:
	if (match != buf)
		free(match);
	return (int)reasons;
fail:
	if (match != buf)
		free(match);
	return rc;
}

int vb_find(const struct vb_state *st, const struct sx_snapshot *snap, const struct sx_node *node,
	    unsigned *reasons, struct vb_volumes *out, struct sx_error *err)
{
	int rc;

	*reasons = vb_check_bound(st, node);
	if (out && alloc_volumes(out, st->nunbound) < 0)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	if (st->nunbound == 0)
		return 0;
	rc = find_unbound(st, snap, node, out, err);
	if (rc < 0) {
		if (out)
			vb_volumes_clear(out);
		return rc;
	}
	*reasons |= (unsigned)rc;
	return 0;
}

/* ---------- Reserve / Unreserve ---------- */

/* arePodVolumesBound. */
static bool pod_volumes_bound(const struct sx_snapshot *snap, const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		const struct sx_pvc *pvc;

		if (!is_claim_volume(v))
			continue;
		pvc = sx_snapshot_find_pvc(snap, pod->meta.ns, v->claim);
		if (!pvc || !vb_fully_bound(pvc))
			return false;
	}
	return true;
}

static void copy_rv(char dst[32], const char *rv)
{
	snprintf(dst, 32, "%s", rv ? rv : "");
}

static struct assumed *new_entry(const char *key, const char *rv)
{
	struct assumed *e = sx_calloc(1, sizeof(*e));

	if (e && !(e->key = sx_strdup(key))) {
		free(e);
		return NULL;
	}
	if (e)
		copy_rv(e->rv, rv);
	return e;
}

/* Assumes one binding's PV claimRef (a->mu held). */
static int assume_pv(struct vb_assume *a, struct vb_binding *b, struct sx_error *err)
{
	const struct sx_pvc *pvc = b->pvc;
	struct assumed *e;

	copy_rv(b->rv, b->pv->meta.resource_version);
	if (!b->dirty)
		return 0;
	e = new_entry(b->pv->meta.name, b->rv);
	if (!e || (pvc->meta.uid && !(e->claim_uid = sx_strdup(pvc->meta.uid)))) {
		if (e)
			assumed_free(e);
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	}
	e->claim_ns = pvc->meta.ns;
	e->claim_name = sx_intern(pvc->meta.name);
	return store(&a->pv, e, "v1.PersistentVolume", err);
}

/* Assumes one claim's selected node (a->mu held). */
static int assume_pvc(struct vb_assume *a, const struct sx_pvc *pvc, sx_str node, char rv[32],
		      struct sx_error *err)
{
	char key[512];
	struct assumed *e;

	pvc_key(key, sizeof(key), pvc->meta.ns, pvc->meta.name);
	copy_rv(rv, pvc->meta.resource_version);
	e = new_entry(key, rv);
	if (!e)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	e->selected_node = node;
	return store(&a->pvc, e, "v1.PersistentVolumeClaim", err);
}

static void revert_locked(struct vb_assume *a, const struct vb_volumes *v, uint32_t nstatic,
			  uint32_t ndynamic)
{
	char key[512];

	for (uint32_t i = 0; i < nstatic; i++)
		if (v->statics[i].dirty)
			restore(&a->pv, v->statics[i].pv->meta.name);
	for (uint32_t i = 0; i < ndynamic; i++) {
		pvc_key(key, sizeof(key), v->dynamic[i]->meta.ns, v->dynamic[i]->meta.name);
		restore(&a->pvc, key);
	}
}

int vb_assume_volumes(struct vb_assume *a, const struct sx_snapshot *snap, const struct sx_pod *pod,
		      sx_str node, struct vb_volumes *v, bool *all_bound, struct sx_error *err)
{
	uint32_t i, j = 0;
	int rc = 0;

	*all_bound = pod_volumes_bound(snap, pod);
	if (*all_bound)
		return 0;
	pthread_mutex_lock(&a->mu);
	for (i = 0; i < v->nstatic && rc == 0; i++)
		rc = assume_pv(a, &v->statics[i], err);
	if (rc < 0)
		i--; /* the failed one assumed nothing */
	for (; rc == 0 && j < v->ndynamic; j++)
		rc = assume_pvc(a, v->dynamic[j], node, v->dynamic_rv[j], err);
	if (rc < 0) {
		if (j > 0)
			j--;
		revert_locked(a, v, i, j);
	}
	pthread_mutex_unlock(&a->mu);
	return rc;
}

void vb_revert(struct vb_assume *a, const struct vb_volumes *v)
{
	pthread_mutex_lock(&a->mu);
	revert_locked(a, v, v->nstatic, v->ndynamic);
	pthread_mutex_unlock(&a->mu);
}

void vb_explain_immediate(const struct sx_snapshot *snap, const struct sx_pod *pod,
			  struct sx_detail *d)
{
	static const char *const modes[] = {NULL, "Immediate", "WaitForFirstConsumer"};
	struct sx_error err = {0};

	for (uint32_t i = 0; i < pod->nvolumes; i++) {
		const struct sx_volume *v = &pod->volumes[i];
		const struct sx_pvc *pvc;
		const struct sx_storage_class *sc;
		const char *mode;

		if (!is_claim_volume(v))
			continue;
		pvc = sx_snapshot_find_pvc(snap, pod->meta.ns, v->claim);
		if (!pvc || vb_fully_bound(pvc) ||
		    (delay_binding(snap, pvc, &err) > 0 && pvc->volume_name == SX_STR_EMPTY))
			continue;
		sc = pvc->storage_class != SX_STR_EMPTY
			     ? sx_snapshot_find_storage_class(snap, pvc->storage_class)
			     : NULL;
		mode = sc && sc->binding_mode < 3 ? modes[sc->binding_mode] : NULL;
		if (pvc->volume_name != SX_STR_EMPTY)
			sx_detail_text(d, "claim %s: volumeName %s, not Bound yet", pvc->meta.name,
				       sx_str_get(pvc->volume_name));
		else if (pvc->storage_class == SX_STR_EMPTY)
			sx_detail_text(d, "claim %s: no storageClassName, binds Immediate",
				       pvc->meta.name);
		else if (!sc)
			sx_detail_text(d, "claim %s: storageClass %s not found, binds Immediate",
				       pvc->meta.name, sx_str_get(pvc->storage_class));
		else
			sx_detail_text(d, "claim %s: storageClass %s, volumeBindingMode %s",
				       pvc->meta.name, sx_str_get(pvc->storage_class), mode);
		if (d->n)
			continue; /* JSON: the first claim only */
		sx_detail_str(d, "claim", pvc->meta.name);
		sx_detail_str(d, "storageClass",
			      pvc->storage_class != SX_STR_EMPTY ? sx_str_get(pvc->storage_class)
								 : NULL);
		sx_detail_str(d, "volumeBindingMode", sc ? mode : "Immediate");
		if (pvc->volume_name != SX_STR_EMPTY)
			sx_detail_str(d, "volumeName", sx_str_get(pvc->volume_name));
	}
}
