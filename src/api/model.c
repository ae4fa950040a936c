/* The object model: reference counting, freeing, kind names and pod helpers.
 *
 * Every free function here accepts partially built objects: decoders
 * calloc an object, fill it field by field and call the same free on error,
 * so each array count is set right after its allocation and zeroed entries
 * must free cleanly.
 */
#include "schedext/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/decode.h"
#include "schedext/dra.h"
#include "schedext/workload.h"
#include "decode_internal.h"

/* ---------- sub-structure frees (shared with the decoders) ---------- */

void sx_requirements_free(struct sx_requirement *reqs, uint32_t n)
{
	if (!reqs)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(reqs[i].values);
	free(reqs);
}

void sx_label_selector_free(struct sx_label_selector *sel)
{
	if (!sel)
		return;
	sx_requirements_free(sel->reqs, sel->nreqs);
	free(sel);
}

void sx_node_selector_term_clear(struct sx_node_selector_term *term)
{
	sx_requirements_free(term->exprs, term->nexprs);
	sx_requirements_free(term->fields, term->nfields);
	memset(term, 0, sizeof(*term));
}

void sx_node_selector_free(struct sx_node_selector *sel)
{
	if (!sel)
		return;
	for (uint32_t i = 0; sel->terms && i < sel->nterms; i++)
		sx_node_selector_term_clear(&sel->terms[i]);
	free(sel->terms);
	free(sel);
}

void sx_node_affinity_free(struct sx_node_affinity *na)
{
	if (!na)
		return;
	sx_node_selector_free(na->required);
	for (uint32_t i = 0; na->preferred && i < na->npreferred; i++)
		sx_node_selector_term_clear(&na->preferred[i].preference);
	free(na->preferred);
	free(na);
}

void sx_pod_affinity_term_clear(struct sx_pod_affinity_term *t)
{
	sx_label_selector_free(t->selector);
	free(t->namespaces);
	sx_label_selector_free(t->ns_selector);
	free(t->match_label_keys);
	free(t->mismatch_label_keys);
	memset(t, 0, sizeof(*t));
}

void sx_pod_affinity_free(struct sx_pod_affinity *pa)
{
	if (!pa)
		return;
	for (uint32_t i = 0; pa->required && i < pa->nrequired; i++)
		sx_pod_affinity_term_clear(&pa->required[i]);
	free(pa->required);
	for (uint32_t i = 0; pa->preferred && i < pa->npreferred; i++)
		sx_pod_affinity_term_clear(&pa->preferred[i].term);
	free(pa->preferred);
	free(pa);
}

void sx_affinity_free(struct sx_affinity *a)
{
	if (!a)
		return;
	sx_node_affinity_free(a->node_affinity);
	sx_pod_affinity_free(a->pod_affinity);
	sx_pod_affinity_free(a->pod_anti_affinity);
	free(a);
}

void sx_meta_clear(struct sx_meta *m)
{
	free(m->name); /* uid and resource_version too (sx_dec_meta) */
	free(m->labels.items);
	free(m->raw);
	memset(m, 0, sizeof(*m));
}

static void containers_free(struct sx_container *c, uint32_t n)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < n; i++) {
		free(c[i].requests.scalar);
		free(c[i].limits.scalar);
	}
	free(c);
}

/* ---------- whole objects ---------- */

struct sx_pod *sx_pod_assumed_on(const struct sx_pod *pod, sx_str node)
{
	struct sx_pod *v = malloc(sizeof(*v));

	if (!v)
		return NULL;
	memcpy(v, pod, sizeof(*v));
	atomic_init(&v->refcount, 1);
	v->node_name = node;
	v->view_of = sx_pod_ref(pod->view_of ? pod->view_of : pod);
	return v;
}

void sx_pod_free(struct sx_pod *pod)
{
	if (!pod)
		return;
	if (pod->view_of) { /* its fields are the viewed pod's */
		sx_pod_unref(pod->view_of);
		free(pod);
		return;
	}
	sx_meta_clear(&pod->meta);
	for (uint32_t i = 0; pod->owners && i < pod->nowners; i++)
		free(pod->owners[i].uid);
	free(pod->owners);
	free(pod->node_selector.items);
	sx_affinity_free(pod->affinity);
	free(pod->tolerations);
	for (uint32_t i = 0; pod->spread && i < pod->nspread; i++) {
		sx_label_selector_free(pod->spread[i].selector);
		free(pod->spread[i].match_label_keys);
	}
	free(pod->spread);
	containers_free(pod->containers, pod->ncontainers);
	containers_free(pod->init_containers, pod->ninit);
	free(pod->overhead.scalar);
	free(pod->request.scalar);
	free(pod->ports);
	free(pod->pvcs);
	for (uint32_t i = 0; pod->volumes && i < pod->nvolumes; i++)
		free(pod->volumes[i].monitors);
	free(pod->volumes);
	free(pod->gates);
	sx_pod_resource_claims_free(pod);
	free(pod);
}

void sx_node_free(struct sx_node *node)
{
	if (!node)
		return;
	sx_meta_clear(&node->meta);
	free(node->taints);
	free(node->allocatable.scalar);
	free(node->capacity.scalar);
	for (uint32_t i = 0; node->images && i < node->nimages; i++)
		free(node->images[i].names);
	free(node->images);
	free(node->conditions);
	free(node->declared_features);
	free(node);
}

void sx_generic_free(struct sx_generic *g)
{
	if (!g)
		return;
	sx_meta_clear(&g->meta);
	free(g->map_selector.items);
	sx_label_selector_free(g->selector);
	free(g);
}

void sx_pv_free(struct sx_pv *pv)
{
	if (!pv)
		return;
	sx_meta_clear(&pv->meta);
	sx_node_selector_free(pv->node_affinity);
	free(pv->claim_uid);
	free(pv);
}

void sx_pvc_free(struct sx_pvc *pvc)
{
	if (!pvc)
		return;
	sx_meta_clear(&pvc->meta);
	sx_label_selector_free(pvc->selector);
	free(pvc->controller_uid);
	free(pvc);
}

void sx_csi_node_free(struct sx_csi_node *csi)
{
	if (!csi)
		return;
	sx_meta_clear(&csi->meta);
	for (uint32_t i = 0; csi->drivers && i < csi->ndrivers; i++)
		free(csi->drivers[i].topology_keys);
	free(csi->drivers);
	free(csi->migrated);
	free(csi);
}

void sx_storage_class_free(struct sx_storage_class *sc)
{
	if (!sc)
		return;
	sx_meta_clear(&sc->meta);
	sx_node_selector_free(sc->allowed_topologies);
	free(sc);
}

void sx_csi_driver_free(struct sx_csi_driver *d)
{
	if (!d)
		return;
	sx_meta_clear(&d->meta);
	free(d);
}

void sx_csi_capacity_free(struct sx_csi_capacity *c)
{
	if (!c)
		return;
	sx_meta_clear(&c->meta);
	sx_label_selector_free(c->node_topology);
	free(c);
}

void sx_volume_attachment_free(struct sx_volume_attachment *va)
{
	if (!va)
		return;
	sx_meta_clear(&va->meta);
	free(va);
}

void sx_device_taint_rule_free(struct sx_device_taint_rule *r)
{
	if (!r)
		return;
	sx_meta_clear(&r->meta);
	free(r);
}

/* ---------- reference counting ---------- */

/* Returns true when the caller dropped the last reference. An unref below
 * zero is a use-after-free in the making: stop right there. */
static bool drop_ref(atomic_int *rc)
{
	int old = atomic_fetch_sub_explicit(rc, 1, memory_order_acq_rel);

	if (old <= 0) {
		fprintf(stderr, "schedext: model object refcount underflow\n");
		abort();
	}
	return old == 1;
}

static void take_ref(atomic_int *rc)
{
	atomic_fetch_add_explicit(rc, 1, memory_order_relaxed);
}

#define SX_DEFINE_REF(type, fn_ref, fn_unref, fn_free)                                             \
	struct type *fn_ref(const struct type *o)                                                  \
	{                                                                                          \
		struct type *m = (struct type *)o;                                                 \
		if (m)                                                                             \
			take_ref(&m->refcount);                                                    \
		return m;                                                                          \
	}                                                                                          \
	void fn_unref(const struct type *o)                                                        \
	{                                                                                          \
		struct type *m = (struct type *)o;                                                 \
		if (m && drop_ref(&m->refcount))                                                   \
			fn_free(m);                                                                \
	}

SX_DEFINE_REF(sx_pod, sx_pod_ref, sx_pod_unref, sx_pod_free)
SX_DEFINE_REF(sx_node, sx_node_ref, sx_node_unref, sx_node_free)
SX_DEFINE_REF(sx_generic, sx_generic_ref, sx_generic_unref, sx_generic_free)
SX_DEFINE_REF(sx_pv, sx_pv_ref, sx_pv_unref, sx_pv_free)
SX_DEFINE_REF(sx_pvc, sx_pvc_ref, sx_pvc_unref, sx_pvc_free)
SX_DEFINE_REF(sx_csi_node, sx_csi_node_ref, sx_csi_node_unref, sx_csi_node_free)
SX_DEFINE_REF(sx_storage_class, sx_storage_class_ref, sx_storage_class_unref, sx_storage_class_free)
SX_DEFINE_REF(sx_csi_driver, sx_csi_driver_ref, sx_csi_driver_unref, sx_csi_driver_free)
SX_DEFINE_REF(sx_csi_capacity, sx_csi_capacity_ref, sx_csi_capacity_unref, sx_csi_capacity_free)
SX_DEFINE_REF(sx_volume_attachment, sx_volume_attachment_ref, sx_volume_attachment_unref,
	      sx_volume_attachment_free)
SX_DEFINE_REF(sx_device_taint_rule, sx_device_taint_rule_ref, sx_device_taint_rule_unref,
	      sx_device_taint_rule_free)
SX_DEFINE_REF(sx_workload, sx_workload_ref, sx_workload_unref, sx_workload_free)
SX_DEFINE_REF(sx_pod_group, sx_pod_group_ref, sx_pod_group_unref, sx_pod_group_free)
SX_DEFINE_REF(sx_cosched_group, sx_cosched_group_ref, sx_cosched_group_unref, sx_cosched_group_free)

/* ---------- kinds (generated from kinds.def) ---------- */

#define NAMESPACED true
#define CLUSTER	   false
static const struct sx_kind_desc kind_descs[SX_KIND_COUNT] = {
	[SX_KIND_UNKNOWN] = {.kind = "Unknown"},
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, ...)                                    \
	[SX_KIND_##ID] = {.kind = KIND,                                                            \
			  .group = GROUP,                                                          \
			  .version = VERSION,                                                      \
			  .resource = RESOURCE,                                                    \
			  .path = SX_KIND_PATH(GROUP, VERSION, RESOURCE),                          \
			  .namespaced = SCOPE},
#include "schedext/kinds.def"
};
#undef NAMESPACED
#undef CLUSTER

const struct sx_kind_desc *sx_kind_desc(enum sx_kind kind)
{
	if (kind <= SX_KIND_UNKNOWN || kind >= SX_KIND_COUNT)
		return NULL;
	return &kind_descs[kind];
}

const char *sx_kind_name(enum sx_kind kind)
{
	if ((unsigned)kind >= SX_KIND_COUNT)
		return kind_descs[SX_KIND_UNKNOWN].kind;
	return kind_descs[kind].kind;
}

enum sx_kind sx_kind_from_name(const char *kind)
{
	return sx_kind_lookup(NULL, kind);
}

/* The group of an apiVersion: "" for "v1", "apps" for "apps/v1". */
static bool group_is(const char *api_version, const char *group)
{
	const char *slash = strchr(api_version, '/');
	size_t n = slash ? (size_t)(slash - api_version) : 0;

	return strlen(group) == n && strncmp(api_version, group, n) == 0;
}

enum sx_kind sx_kind_lookup(const char *api_version, const char *kind)
{
	enum sx_kind first = SX_KIND_UNKNOWN;

	if (!kind)
		return SX_KIND_UNKNOWN;
	for (int k = SX_KIND_UNKNOWN + 1; k < SX_KIND_COUNT; k++) {
		if (strcmp(kind, kind_descs[k].kind) != 0)
			continue;
		if (!api_version || !*api_version || group_is(api_version, kind_descs[k].group))
			return (enum sx_kind)k;
		if (first == SX_KIND_UNKNOWN)
			first = (enum sx_kind)k;
	}
	/* A group no row has (an older or aliased one): the kind's first row,
	 * as before kinds were keyed by group. */
	return first;
}

const struct sx_meta *sx_object_meta(const struct sx_object *o)
{
	if (!o || !o->obj)
		return NULL;
	switch (o->kind) {
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, ...)                              \
	case SX_KIND_##ID:                                                                         \
		return &((const struct TYPE *)o->obj)->meta;
#include "schedext/kinds.def"
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		break;
	}
	return NULL;
}

void sx_object_unref(struct sx_object *o)
{
	if (!o || !o->obj)
		return;
	switch (o->kind) {
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, ...)                         \
	case SX_KIND_##ID:                                                                         \
		sx_##REF##_unref(o->obj);                                                          \
		break;
#include "schedext/kinds.def"
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		break;
	}
	o->obj = NULL;
}

/* ---------- pod helpers ---------- */

bool sx_pod_has_affinity(const struct sx_pod *pod)
{
	return pod->affinity && (pod->affinity->pod_affinity || pod->affinity->pod_anti_affinity);
}

bool sx_pod_has_required_anti_affinity(const struct sx_pod *pod)
{
	return pod->affinity && pod->affinity->pod_anti_affinity &&
	       pod->affinity->pod_anti_affinity->nrequired > 0;
}

const struct sx_owner_ref *sx_pod_controller(const struct sx_pod *pod)
{
	for (uint32_t i = 0; i < pod->nowners; i++)
		if (pod->owners[i].controller)
			return &pod->owners[i];
	return NULL;
}

const char *sx_pod_key(const struct sx_pod *pod, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	snprintf(buf, len, "%s/%s", sx_str_get(pod->meta.ns), pod->meta.name ? pod->meta.name : "");
	return buf;
}

bool sx_pod_has_volume_source(const struct sx_pod *pod, enum sx_volume_source src)
{
	for (uint32_t i = 0; i < pod->nvolumes; i++)
		if (pod->volumes[i].source == src)
			return true;
	return false;
}

/* ---------- storage helpers ---------- */

/* In-tree plugins migrated to CSI (csi-translation-lib). */
static const struct {
	uint8_t source;
	const char *plugin;
	const char *driver;
} migratable[] = {
	{SX_VSRC_GCE_PD, "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
	{SX_VSRC_AWS_EBS, "kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
	{SX_VSRC_AZURE_DISK, "kubernetes.io/azure-disk", "disk.csi.azure.com"},
	{SX_VSRC_AZURE_FILE, "kubernetes.io/azure-file", "file.csi.azure.com"},
	{SX_VSRC_CINDER, "kubernetes.io/cinder", "cinder.csi.openstack.org"},
	{SX_VSRC_VSPHERE, "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
	{SX_VSRC_PORTWORX, "kubernetes.io/portworx-volume", "pxd.portworx.com"},
};
#define NMIGRATABLE (sizeof(migratable) / sizeof(migratable[0]))

const char *sx_volume_source_plugin(enum sx_volume_source src)
{
	for (size_t i = 0; i < NMIGRATABLE; i++)
		if (migratable[i].source == src)
			return migratable[i].plugin;
	return NULL;
}

const char *sx_volume_source_csi_driver(enum sx_volume_source src)
{
	for (size_t i = 0; i < NMIGRATABLE; i++)
		if (migratable[i].source == src)
			return migratable[i].driver;
	return NULL;
}

enum sx_volume_source sx_volume_source_from_plugin(const char *plugin)
{
	for (size_t i = 0; plugin && i < NMIGRATABLE; i++)
		if (strcmp(migratable[i].plugin, plugin) == 0)
			return (enum sx_volume_source)migratable[i].source;
	return SX_VSRC_OTHER;
}

const struct sx_csi_driver_info *sx_csi_node_driver(const struct sx_csi_node *csi, sx_str name)
{
	for (uint32_t i = 0; csi && i < csi->ndrivers; i++)
		if (csi->drivers[i].name == name)
			return &csi->drivers[i];
	return NULL;
}

bool sx_csi_node_migrated(const struct sx_csi_node *csi, const char *plugin)
{
	sx_str id = plugin ? sx_intern_lookup_n(plugin, strlen(plugin)) : SX_STR_INVALID;

	for (uint32_t i = 0; csi && id != SX_STR_INVALID && i < csi->nmigrated; i++)
		if (csi->migrated[i] == id)
			return true;
	return false;
}

void sx_node_index_labels(struct sx_node *node)
{
	const sx_str keys[SX_TOPO_COUNT] = {[SX_TOPO_HOSTNAME] = SX_S_HOSTNAME,
					    [SX_TOPO_ZONE] = SX_S_ZONE,
					    [SX_TOPO_REGION] = SX_S_REGION};

	node->topo_has = 0;
	for (int k = 0; k < SX_TOPO_COUNT; k++)
		if (sx_labels_get(&node->meta.labels, keys[k], &node->topo[k]))
			node->topo_has |= (uint8_t)(1u << k);
}
