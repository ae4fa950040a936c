/* State files (--state FILE): a v1 List (as `kubectl get nodes,pods -A -o
 * json` prints) or a multi-document YAML/JSON stream of objects, loaded
 * into the cache all or nothing. */
#ifndef SCHEDEXT_STATE_H
#define SCHEDEXT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "schedext/cache.h"
#include "schedext/common.h"

/* Loads path into cache. Unknown kinds are skipped with one warning each
 * (logged); so are unknown fields of Pods and Nodes (sx_state_warn_fields). On a malformed file
 * nothing is loaded and err says
 * "<file>: items[3] (pod default/web-1): spec.containers[0]...: <msg>".
 * Returns 0 or negative. */
int sx_state_load_file(struct sx_cache *cache, const char *path, struct sx_error *err);
int sx_state_load_buffer(struct sx_cache *cache, const char *name, const char *data, size_t len,
			 struct sx_error *err);

/* Loads already parsed documents (as sx_parse_documents returns them: an
 * array of objects or Lists); same rules and messages as the file form,
 * but no unknown-field warnings (whoever read the file gave them). docs
 * stays the caller's. */
struct cJSON;
int sx_state_load_documents(struct sx_cache *cache, const char *name, const struct cJSON *docs,
			    struct sx_error *err);
/* The whole file (at most 1 GiB, pipes included), NUL-terminated; caller
 * frees. NULL with err naming the file. */
char *sx_state_read_file(const char *path, size_t *len, struct sx_error *err);

/* Unknown fields of a dump, as kubectl's field validation "Warn" reports
 * them (a dump's cluster may be newer than schedext's v1 types): one
 * logged warning per kind and field path, indices dropped,
 *   warning: FILE: items[3] (pod shop/web-1): unknown field "spec.newField"
 * at most SX_FIELD_WARNINGS_MAX per set. kind NULL: nothing checked. */
#define SX_FIELD_WARNINGS_MAX 64
struct sx_field_warnings {
	char *seen[SX_FIELD_WARNINGS_MAX];
	uint32_t n;
};
void sx_state_warn_fields(struct sx_field_warnings *w, const char *file, const char *where,
			  const struct cJSON *item, const char *kind);
void sx_field_warnings_free(struct sx_field_warnings *w);

#endif /* SCHEDEXT_STATE_H */
