/* Internal to the decoders (src/decode*.c) and src/model.c: typed JSON field
 * readers that fill struct sx_error with a path, resource-list arithmetic in
 * exact nano units, and the frees of model sub-structures.
 *
 * Path convention: a reader of field "x" that fails sets err->path to "x";
 * each caller prefixes its own component on the way up, so the top-level
 * decoder returns "spec.containers[0].resources.requests.cpu".
 */
#ifndef SCHEDEXT_DECODE_INTERNAL_H
#define SCHEDEXT_DECODE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/common.h"
#include "schedext/model.h"
#include "schedext/quantity.h"

/* ---- frees (src/model.c); all accept NULL / zeroed input ---- */
void sx_requirements_free(struct sx_requirement *reqs, uint32_t n);
void sx_node_selector_term_clear(struct sx_node_selector_term *term);
void sx_node_selector_free(struct sx_node_selector *sel);
void sx_pod_affinity_term_clear(struct sx_pod_affinity_term *t);
void sx_pod_affinity_free(struct sx_pod_affinity *pa);
void sx_affinity_free(struct sx_affinity *a);
void sx_meta_clear(struct sx_meta *m);
void sx_pod_free(struct sx_pod *pod);
void sx_node_free(struct sx_node *node);
void sx_generic_free(struct sx_generic *g);
void sx_pv_free(struct sx_pv *pv);
void sx_pvc_free(struct sx_pvc *pvc);
void sx_csi_node_free(struct sx_csi_node *csi);
void sx_storage_class_free(struct sx_storage_class *sc);
void sx_csi_driver_free(struct sx_csi_driver *d);
void sx_csi_capacity_free(struct sx_csi_capacity *c);
void sx_volume_attachment_free(struct sx_volume_attachment *va);

/* ---- field readers (src/decode.c) ----
 * All take the parent object and a key; an absent key or JSON null leaves
 * the output at its "absent" value and returns 0. */

/* "string", "number", ... for messages. */
const char *sx_dec_type_name(const cJSON *j);
/* The member, or NULL when absent or null. */
const cJSON *sx_dec_get(const cJSON *obj, const char *key);
/* Sets err "expected <want>, got <type>" at path key. */
int sx_dec_type_error(struct sx_error *err, const char *key, const char *want, const cJSON *got);

int sx_dec_object(const cJSON *obj, const char *key, const cJSON **out, struct sx_error *err);
/* Array with at most SX_DECODE_MAX_ITEMS elements; *n its size. */
int sx_dec_array(const cJSON *obj, const char *key, const cJSON **out, uint32_t *n,
		 struct sx_error *err);
/* String of at most SX_DECODE_MAX_STRING bytes; NULL when absent. */
int sx_dec_string(const cJSON *obj, const char *key, const char **out, struct sx_error *err);
int sx_dec_strdup(const cJSON *obj, const char *key, char **out, struct sx_error *err);
/* Interned; SX_STR_EMPTY when absent. */
int sx_dec_intern(const cJSON *obj, const char *key, sx_str *out, struct sx_error *err);
/* Interns a validated string value (no path set on error). */
int sx_dec_intern_value(const cJSON *s, sx_str *out, struct sx_error *err);
int sx_dec_bool(const cJSON *obj, const char *key, bool *out, struct sx_error *err);
/* A JSON integer within [min, max] (an error without a field prefix). */
int sx_dec_int64_value(const cJSON *v, int64_t min, int64_t max, int64_t *out,
		       struct sx_error *err);
/* Integer in [min, max]; *present (may be NULL) tells whether it was set. */
int sx_dec_int64(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out,
		 bool *present, struct sx_error *err);
int sx_dec_int32(const cJSON *obj, const char *key, int32_t *out, bool *present,
		 struct sx_error *err);
/* RFC 3339 timestamp field: unix seconds; *present tells whether set. */
int sx_dec_time(const cJSON *obj, const char *key, int64_t *out, bool *present,
		struct sx_error *err);
/* Array of strings, interned. */
int sx_dec_str_list(const cJSON *obj, const char *key, uint32_t *n, sx_str **out,
		    struct sx_error *err);
/* Map string -> string, sorted by key id (duplicate keys: the last wins). */
int sx_dec_labels(const cJSON *obj, const char *key, struct sx_labels *out, bool *present,
		  struct sx_error *err);
/* metadata: name, namespace, uid, resourceVersion, creationTimestamp, labels. */
int sx_dec_meta(const cJSON *obj, struct sx_meta *out, struct sx_error *err);
/* A label selector field (NULL pointer when absent or null). */
int sx_dec_selector_field(const cJSON *obj, const char *key, struct sx_label_selector **out,
			  struct sx_error *err);
/* v1.NodeSelectorTerm fields into term. */
int sx_dec_node_selector_term(const cJSON *j, struct sx_node_selector_term *term,
			      struct sx_error *err);
/* v1.NodeSelector {nodeSelectorTerms: [...]} */
struct sx_node_selector *sx_dec_node_selector(const cJSON *j, struct sx_error *err);

/* ---- resource lists in exact nano units ---- */

struct sx_rentry {
	sx_str name;
	sx_nano q;
};

/* Sorted by name id; owned items. */
struct sx_rlist {
	uint32_t n, cap;
	struct sx_rentry *items;
};

void sx_rlist_clear(struct sx_rlist *l);
/* Pointer to the entry for name, or NULL. */
struct sx_rentry *sx_rlist_find(const struct sx_rlist *l, sx_str name);
/* Adds (op 0), takes the max (op 1) or sets (op 2) name's value; the key is
 * created when missing. */
enum { SX_RL_ADD, SX_RL_MAX, SX_RL_SET };
int sx_rlist_apply(struct sx_rlist *l, sx_str name, sx_nano q, int op);
/* Applies every entry of src to dst with op. */
int sx_rlist_merge(struct sx_rlist *dst, const struct sx_rlist *src, int op);
int sx_rlist_copy(struct sx_rlist *dst, const struct sx_rlist *src);

/* A quantity value (JSON string or number). Rejects negatives when
 * nonneg. Error path empty (the caller's key). */
int sx_dec_quantity_value(const cJSON *v, bool nonneg, sx_nano *out, struct sx_error *err);
/* A map name -> quantity at obj[key] into l (replacing its contents). */
int sx_dec_rlist(const cJSON *obj, const char *key, bool nonneg, struct sx_rlist *l, bool *present,
		 struct sx_error *err);
/* Converts to integers (cpu milli, the rest value); scalar sorted by id. */
int sx_rlist_to_resources(const struct sx_rlist *l, struct sx_resources *out, struct sx_error *err);

/* ---- kinds (src/decode_misc.c) ---- */
struct sx_generic *sx_decode_generic(const cJSON *json, enum sx_kind kind, struct sx_error *err);
struct sx_pv *sx_decode_pv(const cJSON *json, struct sx_error *err);
struct sx_pvc *sx_decode_pvc(const cJSON *json, struct sx_error *err);
struct sx_csi_node *sx_decode_csi_node(const cJSON *json, struct sx_error *err);

/* ---- storage kinds (src/decode_storage.c) ---- */
struct sx_storage_class *sx_decode_storage_class(const cJSON *json, struct sx_error *err);
struct sx_csi_driver *sx_decode_csi_driver(const cJSON *json, struct sx_error *err);
struct sx_csi_capacity *sx_decode_csi_capacity(const cJSON *json, struct sx_error *err);
struct sx_volume_attachment *sx_decode_volume_attachment(const cJSON *json, struct sx_error *err);
/* One pod.spec.volumes entry into vol (pod: its metadata.name is set). */
int sx_decode_volume(const cJSON *j, struct sx_volume *vol, const struct sx_pod *pod,
		     struct sx_error *err);

/* Image name normalisation (imagelocality): appends ":latest" when the
 * name has no tag or digest. Interned. */
sx_str sx_normalized_image(const char *name, size_t len);

#endif /* SCHEDEXT_DECODE_INTERNAL_H */
