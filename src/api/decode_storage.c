/* The storage kinds (what upstream's volume plugins read): PersistentVolume,
 * PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
 * CSIStorageCapacity, VolumeAttachment, and the volumes of a pod spec.
 * Only the fields the volume plugins and the volume binder read are kept.
 *
 * Bad input the API server would have rejected (an unknown access mode or
 * volume mode, a negative capacity or attach count, a malformed node
 * affinity) fails the object with the field's path, so the loader and the
 * informers can name object and field.
 */
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/decode.h"

/* ---------- shared pieces ---------- */

/* The metadata.annotations map (NULL when absent), type-checked. */
static int annotations(const cJSON *json, const cJSON **out, struct sx_error *err)
{
	int rc = sx_dec_object(sx_dec_get(json, "metadata"), "annotations", out, err);

	if (rc < 0)
		sx_error_prefix(err, "metadata");
	return rc;
}

/* Annotation `key` interned (SX_STR_EMPTY when absent); path
 * metadata.annotations.<key> on error. */
static int annotation(const cJSON *ann, const char *key, sx_str *out, struct sx_error *err)
{
	int rc = sx_dec_intern(ann, key, out, err);

	if (rc < 0) {
		sx_error_prefix(err, "annotations");
		sx_error_prefix(err, "metadata");
	}
	return rc;
}

/* metadata.deletionTimestamp set? */
static int deleting(const cJSON *json, bool *out, struct sx_error *err)
{
	int64_t t;
	int rc = sx_dec_time(sx_dec_get(json, "metadata"), "deletionTimestamp", &t, out, err);

	if (rc < 0)
		sx_error_prefix(err, "metadata");
	return rc;
}

/* A storage quantity field obj[key] in bytes (non-negative). */
static int storage_quantity(const cJSON *obj, const char *key, int64_t *out, bool *present,
			    struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	sx_nano q;
	int rc;

	*out = 0;
	if (present)
		*present = false;
	if (!v)
		return 0;
	rc = sx_dec_quantity_value(v, true, &q, err);
	if (rc == 0 && sx_quantity_value(q, out) < 0)
		rc = sx_error_set(err, SX_ETOOBIG, "quantity out of range");
	if (rc < 0) {
		sx_error_prefix(err, key);
		return rc;
	}
	if (present)
		*present = true;
	return 0;
}

/* map obj[key] (a ResourceList) -> its "storage" entry in bytes. */
static int storage_of(const cJSON *obj, const char *key, int64_t *out, bool *present,
		      struct sx_error *err)
{
	const cJSON *map;
	int rc = sx_dec_object(obj, key, &map, err);

	*out = 0;
	*present = false;
	if (rc < 0 || !map)
		return rc;
	rc = storage_quantity(map, "storage", out, present, err);
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

static const char *const access_mode_names[] = {
	"ReadWriteOnce",
	"ReadOnlyMany",
	"ReadWriteMany",
	"ReadWriteOncePod",
};

/* One accessModes entry, OR-ed into *(uint8_t *)arg. */
static int decode_access_mode(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string_value(j, &s, err);

	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < sizeof(access_mode_names) / sizeof(access_mode_names[0]); i++) {
		if (strcmp(s, access_mode_names[i]) == 0) {
			*(uint8_t *)arg |= (uint8_t)(1u << i);
			return 0;
		}
	}
	return sx_error_set(err, SX_EINVAL, "unsupported access mode \"%.64s\"", s);
}

static int access_modes(const cJSON *spec, uint8_t *out, struct sx_error *err)
{
	const cJSON *arr;
	uint32_t n;
	int rc = sx_dec_array(spec, "accessModes", &arr, &n, err);

	*out = 0;
	if (rc < 0 || !arr)
		return rc;
	return sx_dec_each(arr, "accessModes", NULL, 0, decode_access_mode, out, err);
}

static int volume_mode(const cJSON *spec, uint8_t *out, struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(spec, "volumeMode", &s, err);

	*out = SX_VOLUME_FILESYSTEM;
	if (rc < 0 || !s || strcmp(s, "Filesystem") == 0)
		return rc;
	if (strcmp(s, "Block") == 0) {
		*out = SX_VOLUME_BLOCK;
		return 0;
	}
	sx_error_set(err, SX_EINVAL, "unsupported volume mode \"%.64s\"", s);
	sx_error_prefix(err, "volumeMode");
	return SX_EINVAL;
}

/* status.phase among names[1..n) (index 0 = absent); an unknown phase
 * reads as absent (a newer server's phase must not fail the object). */
static int phase(const cJSON *json, const char *const *names, int n, uint8_t *out,
		 struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(sx_dec_get(json, "status"), "phase", &s, err);

	*out = 0;
	if (rc < 0) {
		sx_error_prefix(err, "status");
		return rc;
	}
	for (int i = 1; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			*out = (uint8_t)i;
	return 0;
}

/* ---------- volume sources (pod volumes and PVs) ---------- */

static const struct {
	const char *key;    /* the source's field in a Volume / PV spec */
	uint8_t source;	    /* enum sx_volume_source */
	const char *id_key; /* the field identifying the disk */
} sources[] = {
	{"csi", SX_VSRC_CSI, "driver"},
	{"gcePersistentDisk", SX_VSRC_GCE_PD, "pdName"},
	{"awsElasticBlockStore", SX_VSRC_AWS_EBS, "volumeID"},
	{"azureDisk", SX_VSRC_AZURE_DISK, "diskURI"},
	{"azureFile", SX_VSRC_AZURE_FILE, "shareName"},
	{"cinder", SX_VSRC_CINDER, "volumeID"},
	{"vsphereVolume", SX_VSRC_VSPHERE, "volumePath"},
	{"portworxVolume", SX_VSRC_PORTWORX, "volumeID"},
	{"rbd", SX_VSRC_RBD, "image"},
	{"iscsi", SX_VSRC_ISCSI, "iqn"},
};
#define NSOURCES (sizeof(sources) / sizeof(sources[0]))

/* The first known source present in obj: its index in sources[] and
 * value, or -1. */
static int find_source(const cJSON *obj, const cJSON **val, struct sx_error *err)
{
	for (size_t i = 0; i < NSOURCES; i++) {
		int rc = sx_dec_object(obj, sources[i].key, val, err);

		if (rc < 0)
			return rc;
		if (*val)
			return (int)i;
	}
	return -1;
}

/* rbd.pool (default "rbd") and rbd.monitors. */
static int decode_rbd(const cJSON *src, struct sx_volume *vol, struct sx_error *err)
{
	int rc = sx_dec_intern(src, "pool", &vol->pool, err);

	if (rc == 0 && !sx_dec_get(src, "pool"))
		vol->pool = sx_intern("rbd");
	if (rc == 0)
		rc = sx_dec_str_list(src, "monitors", &vol->nmonitors, &vol->monitors, err);
	return rc;
}

/* The claim of a generic ephemeral volume: <pod>-<volume>. */
static int ephemeral_claim(const struct sx_pod *pod, sx_str vname, sx_str *out,
			   struct sx_error *err)
{
	const char *p = pod->meta.name ? pod->meta.name : "";
	size_t a = strlen(p), b = sx_str_len(vname);
	char *s = malloc(a + b + 2);

	if (!s)
		return sx_dec_oom(err);
	memcpy(s, p, a);
	s[a] = '-';
	memcpy(s + a + 1, sx_str_get(vname), b + 1);
	*out = sx_intern_n(s, a + b + 1);
	free(s);
	if (*out == SX_STR_INVALID)
		return sx_error_set(err, SX_ETOOBIG, "string table full");
	return 0;
}

/* The in-tree or CSI source of a pod volume. */
static int decode_volume_source(const cJSON *j, struct sx_volume *vol, struct sx_error *err)
{
	const cJSON *src;
	int i = find_source(j, &src, err), rc;

	if (i < -1)
		return i;
	if (i < 0)
		return 0;
	vol->source = sources[i].source;
	rc = sx_dec_intern(src, sources[i].id_key, &vol->id, err);
	if (rc == 0)
		rc = sx_dec_bool(src, "readOnly", &vol->read_only, err);
	if (rc == 0 && vol->source == SX_VSRC_RBD)
		rc = decode_rbd(src, vol, err);
	if (rc < 0)
		sx_error_prefix(err, sources[i].key);
	return rc;
}

/* An image volume (image.reference, what ImageLocality looks up on the
 * node): 1 when j is one, 0 when not, <0 on error. */
static int decode_image_volume(const cJSON *j, struct sx_volume *vol, struct sx_error *err)
{
	const cJSON *img;
	const char *ref = NULL;
	int rc = sx_dec_object(j, "image", &img, err);

	if (rc < 0 || !img)
		return rc;
	rc = sx_dec_string(img, "reference", &ref, err);
	if (rc < 0) {
		sx_error_prefix(err, "image");
		return rc;
	}
	vol->source = SX_VSRC_IMAGE;
	vol->id = sx_normalized_image(ref ? ref : "", ref ? strlen(ref) : 0);
	if (vol->id == SX_STR_INVALID) {
		vol->id = SX_STR_EMPTY;
		sx_error_set(err, SX_ETOOBIG, "string table full");
		sx_error_prefix(err, "image.reference");
		return SX_ETOOBIG;
	}
	return 1;
}

int sx_decode_volume(const cJSON *j, struct sx_volume *vol, const struct sx_pod *pod,
		     struct sx_error *err)
{
	const cJSON *pvc, *eph;
	int rc = sx_dec_intern(j, "name", &vol->name, err);

	if (rc == 0)
		rc = sx_dec_object(j, "persistentVolumeClaim", &pvc, err);
	if (rc == 0)
		rc = sx_dec_object(j, "ephemeral", &eph, err);
	if (rc < 0)
		return rc;
	if (pvc) {
		vol->source = SX_VSRC_PVC;
		rc = sx_dec_intern(pvc, "claimName", &vol->claim, err);
		if (rc == 0)
			rc = sx_dec_bool(pvc, "readOnly", &vol->read_only, err);
		if (rc < 0)
			sx_error_prefix(err, "persistentVolumeClaim");
		return rc;
	}
	if (eph) {
		vol->source = SX_VSRC_EPHEMERAL;
		return ephemeral_claim(pod, vol->name, &vol->claim, err);
	}
	rc = decode_image_volume(j, vol, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	return decode_volume_source(j, vol, err);
}

/* An in-tree id as the CSI volume handle (csi-translation-lib): EBS
 * "aws://zone/vol-1" becomes "vol-1"; other ids are kept. */
static sx_str translated_handle(uint8_t source, sx_str id)
{
	const char *s = sx_str_get(id), *slash;

	if (source != SX_VSRC_AWS_EBS || strncmp(s, "aws://", 6) != 0)
		return id;
	slash = strrchr(s, '/');
	return sx_intern(slash + 1);
}

/* The PV's source: CSI driver + handle, or an in-tree id. */
static int decode_pv_source(const cJSON *spec, struct sx_pv *pv, struct sx_error *err)
{
	const cJSON *src;
	sx_str id;
	int i = find_source(spec, &src, err), rc;

	if (i < -1)
		return i;
	if (i < 0)
		return 0;
	pv->source = sources[i].source;
	if (pv->source == SX_VSRC_CSI) {
		rc = sx_dec_intern(src, "driver", &pv->csi_driver, err);
		if (rc == 0)
			rc = sx_dec_intern(src, "volumeHandle", &pv->volume_handle, err);
	} else {
		rc = sx_dec_intern(src, sources[i].id_key, &id, err);
		if (rc == 0)
			pv->volume_handle = translated_handle(pv->source, id);
	}
	if (rc < 0)
		sx_error_prefix(err, sources[i].key);
	return rc;
}

/* ---------- PersistentVolume ---------- */

/* spec.claimRef (elem: the sx_pv). */
static int decode_claim_ref(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pv *pv = elem;
	int rc = sx_dec_intern(j, "namespace", &pv->claim_ns, err);

	pv->has_claim_ref = true;
	if (rc == 0)
		rc = sx_dec_intern(j, "name", &pv->claim_name, err);
	if (rc == 0)
		rc = sx_dec_strdup(j, "uid", &pv->claim_uid, err);
	return rc;
}

static int decode_pv_affinity(const cJSON *spec, struct sx_pv *pv, struct sx_error *err)
{
	const cJSON *na, *req;
	int rc = sx_dec_object(spec, "nodeAffinity", &na, err);

	if (rc < 0 || !na || !(req = sx_dec_get(na, "required")))
		return rc;
	pv->node_affinity = sx_dec_node_selector(req, err);
	if (!pv->node_affinity) {
		sx_error_prefix(err, "nodeAffinity.required");
		return err->code < 0 ? err->code : SX_EINVAL;
	}
	return 0;
}

static int decode_pv_spec(const cJSON *spec, struct sx_pv *pv, struct sx_error *err)
{
	int rc = sx_dec_intern(spec, "storageClassName", &pv->storage_class, err);

	if (rc == 0)
		rc = sx_dec_intern(spec, "volumeAttributesClassName", &pv->vac, err);
	if (rc == 0)
		rc = decode_pv_affinity(spec, pv, err);
	if (rc == 0)
		rc = sx_dec_sub(spec, "claimRef", decode_claim_ref, pv, NULL, err);
	if (rc == 0)
		rc = storage_of(spec, "capacity", &pv->capacity_storage, &pv->has_capacity, err);
	if (rc == 0)
		rc = access_modes(spec, &pv->access_modes, err);
	if (rc == 0)
		rc = volume_mode(spec, &pv->volume_mode, err);
	if (rc == 0)
		rc = decode_pv_source(spec, pv, err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

static int decode_pv_meta(const cJSON *json, struct sx_pv *pv, struct sx_error *err)
{
	static const char *const phases[] = {"",      "Pending",  "Available",
					     "Bound", "Released", "Failed"};
	const cJSON *ann;
	sx_str beta = SX_STR_EMPTY, bbc = SX_STR_EMPTY;
	int rc = annotations(json, &ann, err);

	if (rc == 0)
		rc = annotation(ann, "volume.beta.kubernetes.io/storage-class", &beta, err);
	if (rc == 0 && sx_dec_get(ann, "volume.beta.kubernetes.io/storage-class"))
		pv->storage_class = beta;
	if (rc == 0)
		rc = annotation(ann, "pv.kubernetes.io/bound-by-controller", &bbc, err);
	pv->bound_by_controller = bbc != SX_STR_EMPTY && strcmp(sx_str_get(bbc), "yes") == 0;
	if (rc == 0)
		rc = annotation(ann, "pv.kubernetes.io/provisioned-by", &pv->provisioned_by, err);
	if (rc == 0)
		rc = deleting(json, &pv->deleting, err);
	return rc < 0 ? rc : phase(json, phases, 6, &pv->phase, err);
}

struct sx_pv *sx_decode_pv(const cJSON *json, struct sx_error *err)
{
	struct sx_pv *pv = sx_dec_new(json, sizeof(*pv), err);
	int rc;

	if (!pv)
		return NULL;
	atomic_init(&pv->refcount, 1);
	rc = sx_dec_head(json, &pv->meta, err);
	if (rc == 0)
		rc = decode_pv_spec(sx_dec_get(json, "spec"), pv, err);
	if (rc == 0)
		rc = decode_pv_meta(json, pv, err);
	if (rc < 0) {
		sx_pv_free(pv);
		return NULL;
	}
	return pv;
}

/* ---------- PersistentVolumeClaim ---------- */

static int decode_pvc_spec(const cJSON *spec, struct sx_pvc *pvc, struct sx_error *err)
{
	const cJSON *res;
	int rc = sx_dec_intern(spec, "volumeName", &pvc->volume_name, err);

	if (rc == 0)
		rc = sx_dec_intern(spec, "storageClassName", &pvc->storage_class, err);
	pvc->has_storage_class = sx_dec_get(spec, "storageClassName") != NULL;
	if (rc == 0)
		rc = sx_dec_intern(spec, "volumeAttributesClassName", &pvc->vac, err);
	if (rc == 0)
		rc = access_modes(spec, &pvc->access_modes, err);
	pvc->read_write_once_pod = pvc->access_modes & SX_ACCESS_RWOP;
	if (rc == 0)
		rc = volume_mode(spec, &pvc->volume_mode, err);
	if (rc == 0)
		rc = sx_dec_selector_field(spec, "selector", &pvc->selector, err);
	pvc->has_data_source = sx_dec_get(spec, "dataSource") || sx_dec_get(spec, "dataSourceRef");
	if (rc == 0)
		rc = sx_dec_object(spec, "resources", &res, err);
	if (rc == 0) {
		rc = storage_of(res, "requests", &pvc->request_storage, &pvc->has_request, err);
		if (rc < 0)
			sx_error_prefix(err, "resources");
	}
	if (rc < 0)
		sx_error_prefix(err, "spec");
	return rc;
}

/* The uid of the controller ownerReference (arg: the sx_pvc). */
static int decode_pvc_owner(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_pvc *pvc = arg;
	bool controller;
	int rc = sx_dec_bool(j, "controller", &controller, err);

	if (rc < 0 || !controller || pvc->controller_uid)
		return rc;
	return sx_dec_strdup(j, "uid", &pvc->controller_uid, err);
}

static int decode_pvc_annotations(const cJSON *json, struct sx_pvc *pvc, struct sx_error *err)
{
	const cJSON *ann;
	sx_str beta;
	int rc = annotations(json, &ann, err);

	if (rc == 0)
		rc = annotation(ann, "volume.beta.kubernetes.io/storage-class", &beta, err);
	if (rc == 0 && sx_dec_get(ann, "volume.beta.kubernetes.io/storage-class")) {
		pvc->storage_class = beta;
		pvc->has_storage_class = true;
	}
	if (rc == 0)
		rc = annotation(ann, "volume.kubernetes.io/selected-node", &pvc->selected_node,
				err);
	if (rc == 0)
		rc = annotation(ann, "volume.kubernetes.io/storage-provisioner",
				&pvc->storage_provisioner, err);
	if (rc == 0)
		rc = annotation(ann, "volume.beta.kubernetes.io/storage-provisioner",
				&pvc->beta_storage_provisioner, err);
	pvc->bind_completed = sx_dec_get(ann, "pv.kubernetes.io/bind-completed") != NULL;
	pvc->bound_by_controller = sx_dec_get(ann, "pv.kubernetes.io/bound-by-controller") != NULL;
	return rc;
}

static int decode_pvc_meta(const cJSON *json, struct sx_pvc *pvc, struct sx_error *err)
{
	static const char *const phases[] = {"", "Pending", "Bound", "Lost"};
	const cJSON *md = sx_dec_get(json, "metadata"), *owners;
	uint32_t n;
	int rc = decode_pvc_annotations(json, pvc, err);

	if (rc == 0)
		rc = deleting(json, &pvc->deleting, err);
	if (rc == 0) {
		rc = sx_dec_array(md, "ownerReferences", &owners, &n, err);
		if (rc == 0)
			rc = sx_dec_each_object(owners, "ownerReferences", NULL, 0,
						decode_pvc_owner, pvc, err);
		if (rc < 0)
			sx_error_prefix(err, "metadata");
	}
	if (rc == 0)
		rc = phase(json, phases, 4, &pvc->phase, err);
	pvc->bound = pvc->phase == SX_PVC_BOUND;
	return rc;
}

struct sx_pvc *sx_decode_pvc(const cJSON *json, struct sx_error *err)
{
	struct sx_pvc *pvc = sx_dec_new(json, sizeof(*pvc), err);
	int rc;

	if (!pvc)
		return NULL;
	atomic_init(&pvc->refcount, 1);
	rc = sx_dec_head(json, &pvc->meta, err);
	if (rc == 0)
		rc = decode_pvc_spec(sx_dec_get(json, "spec"), pvc, err);
	if (rc == 0)
		rc = decode_pvc_meta(json, pvc, err);
	if (rc < 0) {
		sx_pvc_free(pvc);
		return NULL;
	}
	return pvc;
}

/* ---------- StorageClass ---------- */

/* One matchLabelExpressions entry {key, values} as an In requirement. */
static int decode_topology_req(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_requirement *r = elem;
	int rc = sx_dec_intern(j, "key", &r->key, err);

	r->op = SX_OP_IN;
	return rc < 0 ? rc : sx_dec_str_list(j, "values", &r->nvalues, &r->values, err);
}

/* One TopologySelectorTerm as a node selector term. */
static int decode_topology_term(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_node_selector_term *t = elem;

	return sx_dec_objects(j, "matchLabelExpressions", &t->exprs, &t->nexprs,
			      decode_topology_req, NULL, err);
}

static int decode_allowed_topologies(const cJSON *json, struct sx_storage_class *sc,
				     struct sx_error *err)
{
	const cJSON *arr;
	uint32_t n;
	int rc = sx_dec_array(json, "allowedTopologies", &arr, &n, err);

	if (rc < 0 || n == 0)
		return rc;
	sc->allowed_topologies = sx_calloc(1, sizeof(*sc->allowed_topologies));
	if (!sc->allowed_topologies)
		return sx_dec_oom(err);
	return sx_dec_objects(json, "allowedTopologies", &sc->allowed_topologies->terms,
			      &sc->allowed_topologies->nterms, decode_topology_term, NULL, err);
}

static int decode_binding_mode(const cJSON *json, struct sx_storage_class *sc, struct sx_error *err)
{
	const char *mode;
	int rc = sx_dec_string(json, "volumeBindingMode", &mode, err);

	if (rc < 0 || !mode)
		return rc;
	if (strcmp(mode, "Immediate") == 0) {
		sc->binding_mode = SX_BINDING_IMMEDIATE;
	} else if (strcmp(mode, "WaitForFirstConsumer") == 0) {
		sc->binding_mode = SX_BINDING_WAIT_FOR_FIRST_CONSUMER;
		sc->wait_for_first_consumer = true;
	} else {
		sx_error_set(err, SX_EINVAL, "unsupported volume binding mode \"%.64s\"", mode);
		sx_error_prefix(err, "volumeBindingMode");
		return SX_EINVAL;
	}
	return 0;
}

struct sx_storage_class *sx_decode_storage_class(const cJSON *json, struct sx_error *err)
{
	struct sx_storage_class *sc = sx_dec_new(json, sizeof(*sc), err);
	int rc;

	if (!sc)
		return NULL;
	atomic_init(&sc->refcount, 1);
	rc = sx_dec_meta(json, &sc->meta, err);
	if (rc == 0)
		rc = sx_dec_intern(json, "provisioner", &sc->provisioner, err);
	if (rc == 0)
		rc = decode_binding_mode(json, sc, err);
	if (rc == 0)
		rc = decode_allowed_topologies(json, sc, err);
	if (rc < 0) {
		sx_storage_class_free(sc);
		return NULL;
	}
	return sc;
}

/* ---------- CSINode ---------- */

/* A driver's allocatable (elem: the sx_csi_driver_info). */
static int decode_driver_allocatable(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_csi_driver_info *d = elem;
	int rc = sx_dec_int32(j, "count", &d->allocatable_count, &d->has_count, err);

	if (rc == 0 && d->allocatable_count < 0) {
		sx_error_set(err, SX_EINVAL, "must be non-negative, got %d", d->allocatable_count);
		sx_error_prefix(err, "count");
		return SX_EINVAL;
	}
	return rc;
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

/* storage.alpha.kubernetes.io/migrated-plugins: comma-separated names. */
static int decode_migrated(const cJSON *json, struct sx_csi_node *csi, struct sx_error *err)
{
	static const char key[] = "storage.alpha.kubernetes.io/migrated-plugins";
	const cJSON *ann;
	sx_str v;
	const char *s, *p;
	uint32_t n = 1;
	int rc = annotations(json, &ann, err);

	if (rc == 0)
		rc = annotation(ann, key, &v, err);
	if (rc < 0 || v == SX_STR_EMPTY)
		return rc;
	s = sx_str_get(v);
	for (p = s; *p; p++)
		n += *p == ',';
	csi->migrated = sx_calloc(n, sizeof(*csi->migrated));
	if (!csi->migrated)
		return sx_dec_oom(err);
	for (p = s;;) {
		size_t len = strcspn(p, ",");

		if (len > 0)
			csi->migrated[csi->nmigrated++] = sx_intern_n(p, len);
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

struct sx_csi_node *sx_decode_csi_node(const cJSON *json, struct sx_error *err)
{
	struct sx_csi_node *csi = sx_dec_new(json, sizeof(*csi), err);
	int rc;

	if (!csi)
		return NULL;
	atomic_init(&csi->refcount, 1);
	rc = sx_dec_head(json, &csi->meta, err);
	if (rc == 0)
		rc = sx_dec_name_id(&csi->meta, &csi->name_id, err);
	if (rc == 0) {
		rc = sx_dec_objects(sx_dec_get(json, "spec"), "drivers", &csi->drivers,
				    &csi->ndrivers, decode_driver, NULL, err);
		if (rc < 0)
			sx_error_prefix(err, "spec");
	}
	if (rc == 0)
		rc = decode_migrated(json, csi, err);
	if (rc < 0) {
		sx_csi_node_free(csi);
		return NULL;
	}
	return csi;
}

/* ---------- CSIDriver, CSIStorageCapacity, VolumeAttachment ---------- */

struct sx_csi_driver *sx_decode_csi_driver(const cJSON *json, struct sx_error *err)
{
	struct sx_csi_driver *d = sx_dec_new(json, sizeof(*d), err);
	const cJSON *spec;
	int rc;

	if (!d)
		return NULL;
	atomic_init(&d->refcount, 1);
	rc = sx_dec_head(json, &d->meta, err);
	spec = sx_dec_get(json, "spec");
	if (rc == 0)
		rc = sx_dec_bool(spec, "attachRequired", &d->attach_required, err);
	if (rc == 0 && !sx_dec_get(spec, "attachRequired"))
		d->attach_required = true; /* the API default */
	if (rc == 0)
		rc = sx_dec_bool(spec, "storageCapacity", &d->storage_capacity, err);
	if (rc == 0)
		rc = sx_dec_bool(spec, "preventPodSchedulingIfMissing", &d->prevent_if_missing,
				 err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	if (rc == 0)
		d->name_id = sx_intern(d->meta.name ? d->meta.name : "");
	if (rc < 0) {
		sx_csi_driver_free(d);
		return NULL;
	}
	return d;
}

struct sx_csi_capacity *sx_decode_csi_capacity(const cJSON *json, struct sx_error *err)
{
	struct sx_csi_capacity *c = sx_dec_new(json, sizeof(*c), err);
	int rc;

	if (!c)
		return NULL;
	atomic_init(&c->refcount, 1);
	rc = sx_dec_meta(json, &c->meta, err);
	if (rc == 0)
		rc = sx_dec_intern(json, "storageClassName", &c->storage_class, err);
	if (rc == 0)
		rc = sx_dec_selector_field(json, "nodeTopology", &c->node_topology, err);
	if (rc == 0)
		rc = storage_quantity(json, "capacity", &c->capacity, &c->has_capacity, err);
	if (rc == 0)
		rc = storage_quantity(json, "maximumVolumeSize", &c->maximum_volume_size,
				      &c->has_max_size, err);
	if (rc < 0) {
		sx_csi_capacity_free(c);
		return NULL;
	}
	return c;
}

/* spec.source (elem: the attachment). */
static int decode_va_source(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_intern(j, "persistentVolumeName",
			     &((struct sx_volume_attachment *)elem)->pv_name, err);
}

struct sx_volume_attachment *sx_decode_volume_attachment(const cJSON *json, struct sx_error *err)
{
	struct sx_volume_attachment *va = sx_dec_new(json, sizeof(*va), err);
	const cJSON *spec;
	int rc;

	if (!va)
		return NULL;
	atomic_init(&va->refcount, 1);
	rc = sx_dec_head(json, &va->meta, err);
	spec = sx_dec_get(json, "spec");
	if (rc == 0)
		rc = sx_dec_intern(spec, "attacher", &va->attacher, err);
	if (rc == 0)
		rc = sx_dec_intern(spec, "nodeName", &va->node_name, err);
	if (rc == 0)
		rc = sx_dec_sub(spec, "source", decode_va_source, va, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "spec");
	if (rc == 0) {
		rc = sx_dec_bool(sx_dec_get(json, "status"), "attached", &va->attached, err);
		if (rc < 0)
			sx_error_prefix(err, "status");
	}
	if (rc < 0) {
		sx_volume_attachment_free(va);
		return NULL;
	}
	return va;
}
