/* The other modelled kinds: Namespace, Service, ReplicationController,
 * ReplicaSet, StatefulSet, PodDisruptionBudget, StorageClass (one generic
 * struct), PersistentVolume, PersistentVolumeClaim and CSINode. Only the
 * fields the scheduler's plugins read are kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/decode.h"

/* IntOrString (PDB minAvailable/maxUnavailable): an integer or "N%". */
static int decode_int_or_percent(const cJSON *obj, const char *key, bool *has, bool *percent,
				 int32_t *out, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	const char *s;
	char *end;
	long n;

	*has = *percent = false;
	*out = 0;
	if (!v)
		return 0;
	if (cJSON_IsNumber(v)) {
		*has = true;
		return sx_dec_int32(obj, key, out, NULL, err);
	}
	if (!cJSON_IsString(v) || !v->valuestring)
		return sx_dec_type_error(err, key, "integer or percentage", v);
	s = v->valuestring;
	errno = 0;
	n = strtol(s, &end, 10);
	if (end == s || *s < '0' || *s > '9' || strcmp(end, "%") != 0 || errno || n > INT32_MAX) {
		sx_error_set(err, SX_EINVAL, "invalid percentage \"%.64s\"", s);
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	*has = *percent = true;
	*out = (int32_t)n;
	return 0;
}

static int decode_pdb(const cJSON *json, struct sx_generic *g, struct sx_error *err)
{
	const cJSON *spec = sx_dec_get(json, "spec"), *status = sx_dec_get(json, "status");
	int rc = decode_int_or_percent(spec, "minAvailable", &g->has_min_available,
				       &g->min_available_percent, &g->min_available, err);

	if (rc == 0)
		rc = decode_int_or_percent(spec, "maxUnavailable", &g->has_max_unavailable,
					   &g->max_unavailable_percent, &g->max_unavailable, err);
	if (rc < 0) {
		sx_error_prefix(err, "spec");
		return rc;
	}
	rc = sx_dec_int32(status, "disruptionsAllowed", &g->disruptions_allowed, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "status");
	return rc;
}

static int decode_storage_class(const cJSON *json, struct sx_generic *g, struct sx_error *err)
{
	const char *mode;
	int rc = sx_dec_intern(json, "provisioner", &g->provisioner, err);

	if (rc == 0)
		rc = sx_dec_string(json, "volumeBindingMode", &mode, err);
	if (rc == 0)
		g->wait_for_first_consumer = mode && strcmp(mode, "WaitForFirstConsumer") == 0;
	return rc;
}

/* The kind-specific part of a generic object; json's spec/status are
 * type-checked by the caller. */
static int decode_generic_body(const cJSON *json, struct sx_generic *g, struct sx_error *err)
{
	const cJSON *spec = sx_dec_get(json, "spec");
	int rc = 0;

	switch (g->kind) {
	case SX_KIND_SERVICE:
	case SX_KIND_REPLICATION_CONTROLLER:
		/* A null/absent selector selects nothing; {} selects all. */
		rc = sx_dec_labels(spec, "selector", &g->map_selector, &g->has_map_selector, err);
		break;
	case SX_KIND_REPLICA_SET:
	case SX_KIND_STATEFUL_SET:
	case SX_KIND_PDB:
		rc = sx_dec_selector_field(spec, "selector", &g->selector, err);
		break;
	case SX_KIND_STORAGE_CLASS:
		return decode_storage_class(json, g, err);
	default:
		return 0;
	}
	if (rc < 0) {
		sx_error_prefix(err, "spec");
		return rc;
	}
	return g->kind == SX_KIND_PDB ? decode_pdb(json, g, err) : 0;
}

/* metadata into meta, and checks that spec and status, when present, are
 * objects. */
static int decode_head(const cJSON *json, struct sx_meta *meta, struct sx_error *err)
{
	const cJSON *o;
	int rc = sx_dec_meta(json, meta, err);

	if (rc == 0)
		rc = sx_dec_object(json, "spec", &o, err);
	return rc < 0 ? rc : sx_dec_object(json, "status", &o, err);
}

struct sx_generic *sx_decode_generic(const cJSON *json, enum sx_kind kind, struct sx_error *err)
{
	struct sx_generic *g;
	int rc;

	g = sx_dec_new(json, sizeof(*g), err);
	if (!g)
		return NULL;
	atomic_init(&g->refcount, 1);
	g->kind = (uint8_t)kind;
	rc = decode_head(json, &g->meta, err);
	if (rc == 0)
		rc = decode_generic_body(json, g, err);
	if (rc < 0) {
		sx_generic_free(g);
		return NULL;
	}
	return g;
}

/* spec.claimRef (elem: the sx_pv). */
static int decode_claim_ref(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pv *pv = elem;
	int rc = sx_dec_intern(j, "namespace", &pv->claim_ns, err);

	return rc < 0 ? rc : sx_dec_intern(j, "name", &pv->claim_name, err);
}

/* spec.csi (elem: the sx_pv). */
static int decode_pv_csi(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_intern(j, "driver", &((struct sx_pv *)elem)->csi_driver, err);
}

static int decode_pv_spec(const cJSON *spec, struct sx_pv *pv, struct sx_error *err)
{
	const cJSON *na, *req;
	struct sx_rlist cap = { 0 };
	int rc = sx_dec_intern(spec, "storageClassName", &pv->storage_class, err);

	if (rc == 0)
		rc = sx_dec_object(spec, "nodeAffinity", &na, err);
	if (rc == 0 && na && (req = sx_dec_get(na, "required"))) {
		pv->node_affinity = sx_dec_node_selector(req, err);
		if (!pv->node_affinity) {
			sx_error_prefix(err, "nodeAffinity.required");
			rc = err->code;
		}
	}
	if (rc == 0)
		rc = sx_dec_sub(spec, "claimRef", decode_claim_ref, pv, NULL, err);
	if (rc == 0)
		rc = sx_dec_sub(spec, "csi", decode_pv_csi, pv, NULL, err);
	if (rc == 0)
		rc = sx_dec_rlist(spec, "capacity", true, &cap, NULL, err);
	if (rc == 0) {
		struct sx_rentry *e = sx_rlist_find(&cap, sx_intern("storage"));

		if (e && sx_quantity_value(e->q, &pv->capacity_storage) < 0) {
			rc = sx_error_set(err, SX_ETOOBIG, "quantity out of range");
			sx_error_prefix(err, "capacity.storage");
		}
	}
	sx_rlist_clear(&cap);
	return rc;
}

struct sx_pv *sx_decode_pv(const cJSON *json, struct sx_error *err)
{
	const cJSON *spec;
	struct sx_pv *pv;
	int rc;

	pv = sx_dec_new(json, sizeof(*pv), err);
	if (!pv)
		return NULL;
	atomic_init(&pv->refcount, 1);
	rc = decode_head(json, &pv->meta, err);
	if (rc == 0) {
		spec = sx_dec_get(json, "spec");
		rc = decode_pv_spec(spec, pv, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc < 0) {
		sx_pv_free(pv);
		return NULL;
	}
	return pv;
}

/* One spec.accessModes entry (elem: the sx_pvc). */
static int decode_access_mode(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	if (!cJSON_IsString(j) || !j->valuestring)
		return sx_error_set(err, SX_EINVAL, "expected string, got %s", sx_dec_type_name(j));
	if (strcmp(j->valuestring, "ReadWriteOncePod") == 0)
		((struct sx_pvc *)arg)->read_write_once_pod = true;
	return 0;
}

static int decode_pvc_spec(const cJSON *spec, struct sx_pvc *pvc, struct sx_error *err)
{
	struct sx_rlist req = { 0 };
	const cJSON *res, *modes;
	uint32_t n;
	int rc = sx_dec_intern(spec, "volumeName", &pvc->volume_name, err);

	if (rc == 0)
		rc = sx_dec_intern(spec, "storageClassName", &pvc->storage_class, err);
	pvc->has_storage_class = sx_dec_get(spec, "storageClassName") != NULL;
	if (rc == 0)
		rc = sx_dec_array(spec, "accessModes", &modes, &n, err);
	if (rc == 0)
		rc = sx_dec_each(modes, "accessModes", NULL, 0, decode_access_mode, pvc, err);
	if (rc == 0)
		rc = sx_dec_object(spec, "resources", &res, err);
	if (rc == 0) {
		rc = sx_dec_rlist(res, "requests", true, &req, NULL, err);
		if (rc < 0)
			sx_error_prefix(err, "resources");
	}
	if (rc == 0) {
		struct sx_rentry *e = sx_rlist_find(&req, sx_intern("storage"));

		if (e && sx_quantity_value(e->q, &pvc->request_storage) < 0) {
			rc = sx_error_set(err, SX_ETOOBIG, "quantity out of range");
			sx_error_prefix(err, "resources.requests.storage");
		}
	}
	sx_rlist_clear(&req);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

static int decode_pvc_rest(const cJSON *json, struct sx_pvc *pvc, struct sx_error *err)
{
	const cJSON *md = sx_dec_get(json, "metadata"), *ann;
	const char *phase;
	int rc = sx_dec_object(md, "annotations", &ann, err);

	if (rc == 0)
		rc = sx_dec_intern(ann, "volume.kubernetes.io/selected-node", &pvc->selected_node,
				   err);
	if (rc < 0) {
		if (ann)
			sx_error_prefix(err, "annotations");
		sx_error_prefix(err, "metadata");
		return rc;
	}
	rc = sx_dec_string(sx_dec_get(json, "status"), "phase", &phase, err);
	if (rc < 0) {
		sx_error_prefix(err, "status");
		return rc;
	}
	pvc->bound = phase && strcmp(phase, "Bound") == 0;
	return 0;
}

struct sx_pvc *sx_decode_pvc(const cJSON *json, struct sx_error *err)
{
	struct sx_pvc *pvc;
	int rc;

	pvc = sx_dec_new(json, sizeof(*pvc), err);
	if (!pvc)
		return NULL;
	atomic_init(&pvc->refcount, 1);
	rc = decode_head(json, &pvc->meta, err);
	if (rc == 0)
		rc = decode_pvc_spec(sx_dec_get(json, "spec"), pvc, err);
	if (rc == 0)
		rc = decode_pvc_rest(json, pvc, err);
	if (rc < 0) {
		sx_pvc_free(pvc);
		return NULL;
	}
	return pvc;
}

/* A driver's allocatable (elem: the sx_csi_driver_info). */
static int decode_driver_allocatable(const cJSON *j, void *elem, void *arg,
				     struct sx_error *err)
{
	struct sx_csi_driver_info *d = elem;

	return sx_dec_int32(j, "count", &d->allocatable_count, &d->has_count, err);
}

static int decode_driver(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_csi_driver_info *d = elem;
	int rc = sx_dec_intern(j, "name", &d->name, err);

	if (rc == 0)
		rc = sx_dec_sub(j, "allocatable", decode_driver_allocatable, d, NULL, err);
	if (rc == 0)
		rc = sx_dec_str_list(j, "topologyKeys", &d->ntopology_keys, &d->topology_keys, err);
	return rc;
}

struct sx_csi_node *sx_decode_csi_node(const cJSON *json, struct sx_error *err)
{
	struct sx_csi_node *csi;
	int rc;

	csi = sx_dec_new(json, sizeof(*csi), err);
	if (!csi)
		return NULL;
	atomic_init(&csi->refcount, 1);
	rc = decode_head(json, &csi->meta, err);
	if (rc == 0) {
		rc = sx_dec_objects(sx_dec_get(json, "spec"), "drivers", &csi->drivers,
				    &csi->ndrivers, decode_driver, NULL, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc < 0) {
		sx_csi_node_free(csi);
		return NULL;
	}
	return csi;
}
