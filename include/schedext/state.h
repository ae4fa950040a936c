/* State files (--state FILE): a v1 List (as `kubectl get nodes,pods -A -o
 * json` prints) or a multi-document YAML/JSON stream of objects, loaded
 * into the cache all or nothing. */
#ifndef SCHEDEXT_STATE_H
#define SCHEDEXT_STATE_H

#include <stddef.h>

#include "schedext/cache.h"
#include "schedext/common.h"

/* Loads path into cache. Unknown kinds are skipped with one warning each
 * (logged). On a malformed file nothing is loaded and err says
 * "<file>: items[3] (pod default/web-1): spec.containers[0]...: <msg>".
 * Returns 0 or negative. */
int sx_state_load_file(struct sx_cache *cache, const char *path, struct sx_error *err);
int sx_state_load_buffer(struct sx_cache *cache, const char *name, const char *data, size_t len,
			 struct sx_error *err);

/* Loads already parsed documents (as sx_parse_documents returns them: an
 * array of objects or Lists); same rules and messages as the file form.
 * docs stays the caller's. */
struct cJSON;
int sx_state_load_documents(struct sx_cache *cache, const char *name, const struct cJSON *docs,
			    struct sx_error *err);
/* The whole file (at most 1 GiB, pipes included), NUL-terminated; caller
 * frees. NULL with err naming the file. */
char *sx_state_read_file(const char *path, size_t *len, struct sx_error *err);

#endif /* SCHEDEXT_STATE_H */
