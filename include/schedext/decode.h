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
 * are ignored. `null` equals absent.
 *
 * Thread safety: decoders may run concurrently (interning is thread-safe).
 */
#ifndef SCHEDEXT_DECODE_H
#define SCHEDEXT_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include "schedext/common.h"
#include "schedext/model.h"

struct cJSON;

/* Limits against absurd input: each array or map in an object. */
#define SX_DECODE_MAX_ITEMS 10000
#define SX_DECODE_MAX_STRING (64 * 1024)

struct sx_pod *sx_decode_pod(const struct cJSON *json, struct sx_error *err);
struct sx_node *sx_decode_node(const struct cJSON *json, struct sx_error *err);

/* Any modelled kind. `kind` is the kind string (from the object or, for
 * list items, from the list's kind minus "List"); NULL means read the
 * object's own "kind". Returns 0 and fills *out; SX_ENOENT (with err set to
 * "unknown kind X") when the kind is not modelled; other negatives on error. */
int sx_decode_object(const struct cJSON *json, const char *kind, struct sx_object *out,
		     struct sx_error *err);

/* From now on sx_decode_object keeps the JSON of objects of `kind` in
 * meta.raw (on = false stops it). Used when extenders are configured;
 * costs one serialization per decoded object. Thread-safe. */
void sx_decode_keep_raw(enum sx_kind kind, bool on);

/* Building blocks, also used by the configuration loader (NodeAffinityArgs
 * addedAffinity, default spread constraints). */
struct sx_node_affinity *sx_decode_node_affinity(const struct cJSON *json, struct sx_error *err);
void sx_node_affinity_free(struct sx_node_affinity *na);
struct sx_label_selector *sx_decode_label_selector(const struct cJSON *json, struct sx_error *err);
void sx_label_selector_free(struct sx_label_selector *sel);

/* Parses an RFC 3339 timestamp to unix seconds; SX_EINVAL on garbage. */
int sx_parse_time(const char *s, int64_t *out);

/* Parses a document from memory: JSON, or YAML (libyaml, converted to the
 * equivalent JSON tree; YAML 1.1 scalars: quoted stay strings, plain ones
 * become numbers/bools/null when they look like it). Returns a cJSON ARRAY
 * holding every document of the stream (a JSON file gives one), owned by the
 * caller, or NULL with err set (msg names line/column). */
struct cJSON *sx_parse_documents(const char *data, size_t len, struct sx_error *err);

/* obj[key] when it is a string, else NULL (obj may be NULL). */
const char *sx_json_string(const struct cJSON *obj, const char *key);
/* "List" or "<Kind>List": a list document whose items are objects. */
bool sx_kind_is_list(const char *kind);

#endif /* SCHEDEXT_DECODE_H */
