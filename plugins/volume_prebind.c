/* The volume binder's binding half (upstream binder.go BindPodVolumes):
 * the API writes of the assumed bindings, then the wait until the PV
 * controller (static) or the provisioner and PV controller (dynamic)
 * finished, read from the live cache in the profile's handle (handle.h;
 * the standalone loop attaches both). Runs on a bind worker, never on
 * the scheduling thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/handle.h"
#include "schedext/kube.h"
#include "handle_waiter.h"
#include "volume_binder.h"

#define POLL_NS 1000000000ull /* upstream polls every second */

/* ---------- bindAPIUpdate ---------- */

static struct sx_status *api_error(const struct sx_error *err)
{
	return sx_status_new(SX_ERROR, "%s", err->msg);
}

static struct sx_status *api_update(struct sx_kube *kube, sx_str node, struct vb_volumes *v)
{
	struct sx_error err = {0};

	for (uint32_t i = 0; i < v->nstatic; i++) {
		struct vb_binding *b = &v->statics[i];
		struct sx_kube_claim_ref ref = {
			sx_str_get(b->pvc->meta.ns),
			b->pvc->meta.name,
			b->pvc->meta.uid,
			b->pvc->meta.resource_version,
		};

		sx_log(2, "binding volume %s to claim %s/%s", b->pv->meta.name, ref.ns, ref.name);
		if (sx_kube_bind_pv(kube, b->pv->meta.name, b->rv, &ref, b->set_bbc, b->rv,
				    sizeof(b->rv), &err) < 0)
			return api_error(&err);
	}
	for (uint32_t i = 0; i < v->ndynamic; i++) {
		const struct sx_pvc *pvc = v->dynamic[i];

		sx_log(2, "claim %s/%s: provisioning on node %s", sx_str_get(pvc->meta.ns),
		       pvc->meta.name, sx_str_get(node));
		if (sx_kube_annotate_pvc(kube, sx_str_get(pvc->meta.ns), pvc->meta.name,
					 v->dynamic_rv[i], VB_ANN_SELECTED_NODE, sx_str_get(node),
					 v->dynamic_rv[i], sizeof(v->dynamic_rv[i]), &err) < 0)
			return api_error(&err);
	}
	return NULL;
}

/* ---------- checkBindings ---------- */

enum { NOT_YET = 0, DONE = 1, FAILED = -1 };

static const struct sx_pvc *find_pvc(const struct sx_snapshot *snap, const struct sx_pvc *pvc)
{
	return sx_snapshot_find_pvc(snap, pvc->meta.ns, sx_intern(pvc->meta.name));
}

static int affinity_error(const struct sx_pv *pv, const struct sx_node *node, char *msg, size_t len)
{
	snprintf(msg, len,
		 "pv \"%s\" node affinity doesn't match node \"%s\": no matching "
		 "NodeSelectorTerms",
		 pv->meta.name, node->meta.name);
	return FAILED;
}

static int check_static(const struct sx_snapshot *snap, const struct sx_node *node,
			const struct vb_binding *b, char *msg, size_t len)
{
	const struct sx_pv *pv = sx_snapshot_find_pv(snap, sx_intern(b->pv->meta.name));
	const struct sx_pvc *pvc = find_pvc(snap, b->pvc);

	if (!pv || !pvc) {
		snprintf(msg, len, "failed to check binding: could not find %s \"%s%s%s\"",
			 pv ? "v1.PersistentVolumeClaim" : "v1.PersistentVolume",
			 pv ? sx_str_get(b->pvc->meta.ns) : b->pv->meta.name, pv ? "/" : "",
			 pv ? b->pvc->meta.name : "");
		return FAILED;
	}
	if (vb_rv_cmp(b->rv, pv->meta.resource_version) > 0)
		return NOT_YET; /* the cache has not seen our write yet */
	if (!vb_pv_node_affinity_matches(pv, node))
		return affinity_error(pv, node, msg, len);
	if (!pv->has_claim_ref || !pv->claim_uid || !*pv->claim_uid) {
		snprintf(msg, len, "ClaimRef got reset for pv \"%s\"", pv->meta.name);
		return FAILED;
	}
	return vb_fully_bound(pvc) ? DONE : NOT_YET;
}

/* Did the claim lose all its annotations (upstream tells a nil map)? */
static bool no_annotations(const struct sx_pvc *pvc)
{
	return !pvc->bind_completed && !pvc->bound_by_controller &&
	       pvc->storage_provisioner == SX_STR_EMPTY &&
	       pvc->beta_storage_provisioner == SX_STR_EMPTY;
}

static int check_dynamic(const struct sx_snapshot *snap, const struct sx_node *node,
			 const struct sx_pvc *claim, const char *rv, char *msg, size_t len)
{
	const struct sx_pvc *pvc = find_pvc(snap, claim);
	const struct sx_pv *pv;

	if (!pvc) {
		snprintf(msg, len,
			 "failed to check provisioning pvc: could not find "
			 "v1.PersistentVolumeClaim \"%s/%s\"",
			 sx_str_get(claim->meta.ns), claim->meta.name);
		return FAILED;
	}
	if (vb_rv_cmp(rv, pvc->meta.resource_version) > 0)
		return NOT_YET;
	if (pvc->selected_node != node->name_id) {
		/* the provisioner gives a claim back by removing the annotation */
		snprintf(msg, len,
			 pvc->selected_node == SX_STR_EMPTY && no_annotations(pvc)
				 ? "selectedNode annotation reset for PVC \"%s\""
				 : "provisioning failed for PVC \"%s\"",
			 pvc->meta.name);
		return FAILED;
	}
	if (pvc->volume_name != SX_STR_EMPTY) {
		pv = sx_snapshot_find_pv(snap, pvc->volume_name);
		if (!pv)
			return NOT_YET; /* the PV may not have reached the cache yet */
		if (!vb_pv_node_affinity_matches(pv, node))
			return affinity_error(pv, node, msg, len);
	}
	return vb_fully_bound(pvc) ? DONE : NOT_YET;
}

/* checkBindings against the live cache. */
static int check_bindings(struct sx_cache *cache, const struct sx_pod *pod, sx_str node_name,
			  const struct vb_volumes *v, char *msg, size_t len)
{
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	const struct sx_pod *cur;
	const struct sx_node *node;
	sx_str where = SX_STR_EMPTY;
	bool assumed = false;
	int at, rc = DONE;

	if (!snap) {
		snprintf(msg, len, "out of memory");
		return FAILED;
	}
	at = sx_snapshot_find(snap, node_name);
	node = at >= 0 ? snap->nodes[at]->node : NULL;
	cur = sx_cache_get_pod(cache, pod->meta.ns, pod->meta.name, &where, &assumed);
	if (!node) {
		snprintf(msg, len, "failed to get node \"%s\": node \"%s\" not found",
			 sx_str_get(node_name), sx_str_get(node_name));
		rc = FAILED;
	} else if (!cur) {
		snprintf(msg, len, "pod does not exist any more: pod \"%s\" not found",
			 pod->meta.name);
		rc = FAILED;
	}
	for (uint32_t i = 0; rc == DONE && i < v->nstatic; i++)
		rc = check_static(snap, node, &v->statics[i], msg, len);
	for (uint32_t i = 0; rc == DONE && i < v->ndynamic; i++)
		rc = check_dynamic(snap, node, v->dynamic[i], v->dynamic_rv[i], msg, len);
	sx_pod_unref(cur);
	sx_snapshot_unref(snap);
	return rc;
}

/* ---------- the wait ---------- */

/* Sleeps until something changed in the cache, a second passed or the
 * deadline; false when the environment went away (shutdown). */
static bool wait_change(struct sx_waiter *w, uint64_t *gen, uint64_t deadline,
			struct sx_cache **cache)
{
	uint64_t until = sx_waiter_now_ns() + POLL_NS;

	return sx_waiter_wait(w, gen, until > deadline ? deadline : until, cache);
}

struct sx_status *vb_bind(struct sx_handle *h, struct sx_waiter *w, const atomic_bool *cancelled,
			  const struct sx_pod *pod, sx_str node, struct vb_volumes *v,
			  int64_t timeout_s)
{
	uint64_t deadline = sx_waiter_now_ns() + (uint64_t)timeout_s * 1000000000ull,
		 gen = sx_waiter_gen(w);
	struct sx_handle_env env;
	struct sx_cache *cache;
	struct sx_status *st;
	char msg[768];

	sx_handle_env(h, &env);
	if (!env.kube || !env.cache)
		return sx_status_new(SX_ERROR,
				     "binding volumes: no API server to bind volumes with");
	st = api_update(env.kube, node, v);
	if (st)
		return st;
	for (;;) {
		if (!wait_change(w, &gen, deadline, &cache))
			return sx_status_new(SX_ERROR, "binding volumes: scheduler shutting down");
		if (cancelled && atomic_load(cancelled)) /* PreBind's context cancelled */
			return sx_status_new(SX_ERROR, "binding volumes: context canceled");
		if (sx_waiter_now_ns() >= deadline)
			return sx_status_new(SX_ERROR,
					     "binding volumes: context deadline exceeded");
		switch (check_bindings(cache, pod, node, v, msg, sizeof(msg))) {
		case DONE:
			sx_log(2, "all claims of pod %s/%s are bound", sx_str_get(pod->meta.ns),
			       pod->meta.name);
			return NULL;
		case FAILED:
			return sx_status_new(SX_ERROR, "binding volumes: %s", msg);
		default:
			break;
		}
	}
}
