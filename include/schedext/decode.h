/* Decoding Kubernetes JSON into the model (model.h).
 *
 * The decode interface is the only place JSON meets the model: decoders take
 * a parsed cJSON subtree, validate every field they read (types, ranges,
 * sizes), and return a freshly allocated object with refcount 1 owned by the
 * caller. On error they return NULL / negative and fill err with the field
 * path relative to the object ("spec.containers[0].resources.requests.cpu")
 * and a message; nothing is allocated on failure.
 *
 * Keys inside Kubernetes objects are matched case-sensitively. Unknown keys
 * are ignored by the decoders; sx_decode_check_fields reports them. `null`
 * equals absent.
 *
 * Thread safety: decoders may run concurrently (interning is thread-safe).
 */
#ifndef SCHEDEXT_DECODE_H
#define SCHEDEXT_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include "schedext/common.h"
#include "schedext/json_scan.h"
#include "schedext/model.h"

struct cJSON;

/* Limits against absurd input: each array or map in an object. */
#define SX_DECODE_MAX_ITEMS  10000
#define SX_DECODE_MAX_STRING (64 * 1024)
/* Deepest nesting of a document sx_parse_documents accepts. */
#define SX_DECODE_MAX_DEPTH 64

struct sx_pod *sx_decode_pod(const struct cJSON *json, struct sx_error *err);
struct sx_node *sx_decode_node(const struct cJSON *json, struct sx_error *err);

/* Any modelled kind. `kind` is the kind string (from the object or, for
 * list items, from the list's kind minus "List"); NULL means read the
 * object's own "kind". The object's own "apiVersion", when it has one,
 * picks among kinds of the same string in several groups (sx_kind_lookup).
 * Returns 0 and fills *out; SX_ENOENT (with err set to "unknown kind X")
 * when the kind is not modelled; other negatives on error. */
int sx_decode_object(const struct cJSON *json, const char *kind, struct sx_object *out,
		     struct sx_error *err);
/* The same, for an object known to be of kind `k` (an informer's items,
 * which carry no kind of their own). */
int sx_decode_object_as(const struct cJSON *json, enum sx_kind k, struct sx_object *out,
			struct sx_error *err);

/* From now on sx_decode_object keeps the JSON of objects of `kind` in
 * meta.raw (on = false stops it). Used when extenders are configured;
 * costs one serialization per decoded object. Thread-safe. */
void sx_decode_keep_raw(enum sx_kind kind, bool on);

/* How pod requests are derived from then on (component-helpers/resource
 * PodRequests as the scheduler calls it, framework/types.go
 * computePodResourceRequest): in_place_pod_level_resize is the
 * InPlacePodLevelResourcesVerticalScaling gate (pod-level
 * status.resources / status.allocatedResources count while a pod-level
 * resize is in flight), release_minor the emulated release (37: the
 * container aggregate comes from the pod-level status when both maps are
 * set). Process-wide, as the scheduler's feature gate is; set it from the
 * configuration before any pod is decoded. Defaults: on, 37. */
void sx_decode_set_pod_resources(bool in_place_pod_level_resize, int release_minor);

/* Building blocks, also used by the configuration loader (NodeAffinityArgs
 * addedAffinity, default spread constraints). */
struct sx_node_affinity *sx_decode_node_affinity(const struct cJSON *json, struct sx_error *err);
void sx_node_affinity_free(struct sx_node_affinity *na);
struct sx_label_selector *sx_decode_label_selector(const struct cJSON *json, struct sx_error *err);
void sx_label_selector_free(struct sx_label_selector *sel);

/* Unknown fields (decode_fields.c). The decoders ignore keys they do not
 * read; this checks an object against the field names of its v1 type, as
 * kube-apiserver's field validation does (KEP-2885):
 *   SX_FIELDS_STRICT  the first unknown field fails: SX_EINVAL, err =
 *                     `strict decoding error: unknown field "spec.contianers"`;
 *   SX_FIELDS_WARN    fn(ctx, path) for each unknown field path, in document
 *                     order (fn returning nonzero stops the walk); returns
 *                     how many were reported;
 *   SX_FIELDS_IGNORE  nothing (returns 0).
 * Pods and Nodes are checked (status, probes, security contexts and volume
 * sources' own fields are not: written by the cluster or free-form); other
 * kinds return 0. Matching is case-sensitive, as the apiserver's. */
enum sx_field_validation { SX_FIELDS_IGNORE, SX_FIELDS_WARN, SX_FIELDS_STRICT };
typedef int (*sx_unknown_field_fn)(void *ctx, const char *path);
int sx_decode_check_fields(const struct cJSON *json, enum sx_kind kind,
			   enum sx_field_validation mode, sx_unknown_field_fn fn, void *ctx,
			   struct sx_error *err);

/* Parses an RFC 3339 timestamp to unix seconds; SX_EINVAL on garbage. */
int sx_parse_time(const char *s, int64_t *out);

/* Parses a document from memory: JSON, or YAML (libyaml, converted to the
 * equivalent JSON tree; YAML 1.1 scalars: quoted stay strings, plain ones
 * become numbers/bools/null when they look like it). Returns a cJSON ARRAY
 * holding every document of the stream (a JSON file gives one), owned by the
 * caller, or NULL with err set (msg names line/column). */
struct cJSON *sx_parse_documents(const char *data, size_t len, struct sx_error *err);

/* A List document decoded item by item (json_items.c): LIST responses and
 * state files never become one tree.
 *
 * sx_json_list_split walks text (one JSON object, whitespace around it)
 * with the streaming scanner, validating all of it, and parses every member
 * but the first "items" into head (as cJSON would: keys unescaped, duplicates
 * kept in order). When that first "items" is an array, its text is left in
 * items/items_len for sx_json_items_*; otherwise it is in head like the
 * rest. Returns 0; SX_EINVAL when text is not one object nested at most
 * max_depth deep that the scanner accepts (the caller then parses it whole
 * with cJSON, for cJSON's verdict and error position); SX_ENOMEM. On error
 * nothing is left to free. */
struct sx_json_list {
	struct cJSON *head; /* owned: sx_json_list_free */
	const char *items;  /* points into text, or NULL */
	size_t items_len;
};
int sx_json_list_split(const char *text, size_t len, int max_depth, struct sx_json_list *out);
void sx_json_list_free(struct sx_json_list *l);

/* Iterates the elements of an array text (as split leaves it, so already
 * validated): sx_json_items_next returns 1 with *item the next element
 * parsed alone (the caller deletes it) and *at (may be NULL) its first
 * byte, 0 after the last, SX_EINVAL when malformed, SX_ENOMEM.
 * sx_json_items_pos is how far the text has been read. The iterator holds
 * pointers into itself: do not copy it while iterating. */
struct sx_json_items {
	struct sx_json_cur doc, arr;
};
void sx_json_items_start(struct sx_json_items *it, const char *items, size_t len);
int sx_json_items_next(struct sx_json_items *it, struct cJSON **item, const char **at);
const char *sx_json_items_pos(const struct sx_json_items *it);

/* obj[key] when it is a string, else NULL (obj may be NULL). */
const char *sx_json_string(const struct cJSON *obj, const char *key);
/* "List" or "<Kind>List": a list document whose items are objects. */
bool sx_kind_is_list(const char *kind);

#endif /* SCHEDEXT_DECODE_H */
