/* Informers: the watch feed of the cache (client-go tools/cache/reflector.go).
 *
 * They sit above the API client (they issue its LIST and WATCH requests)
 * and below everything that reads the cache: each decoded object is
 * applied to the cache by the informer's own thread.
 */
#ifndef SCHEDEXT_INFORMER_H
#define SCHEDEXT_INFORMER_H

#include "schedext/cache.h"
#include "schedext/common.h"

struct sx_kube;
struct sx_informers;

/* Starts one informer per modelled kind (client-go's Reflector.ListAndWatch):
 * LIST as the reflector does (resourceVersion=0 first, from the API
 * server's watch cache; paginated where the server paginates; a consistent
 * paginated read once an RV is refused), then WATCH with bookmarks; relist
 * on 410 at the last RV seen; reconnect with jittered
 * backoff; a kind the server does not serve (404/403) is reported once and
 * counts as synced. Returns NULL on failure. */
struct sx_informers *sx_informers_start(struct sx_kube *kube, struct sx_cache *cache,
					struct sx_error *err);
/* True once every initial LIST has been applied to the cache. */
bool sx_informers_synced(const struct sx_informers *inf);
/* Number of watch restarts so far (for /metrics). */
unsigned long sx_informers_restarts(const struct sx_informers *inf);
/* Stops the threads (in-flight requests aborted) and frees. Accepts NULL. */
void sx_informers_stop(struct sx_informers *inf);

/* Replay entry points for tests, the fuzz targets and the allocation
 * sweep: the production code paths without a connection. _watch feeds a
 * WATCH response body (newline-delimited events) for kind through the same
 * line splitter and event handler as a live stream; _list decodes one LIST
 * response page and reconciles the kind as a relist does. rv receives the
 * resume point (may be NULL). 0, or negative when the stream or page is
 * broken (then the informer would re-list or back off). */
int sx_informer_replay_watch(struct sx_cache *cache, enum sx_kind kind, const char *data,
			     size_t len, char *rv, size_t rvlen);
int sx_informer_replay_list(struct sx_cache *cache, enum sx_kind kind, const char *data, size_t len,
			    char *rv, size_t rvlen);

/* The collections the informers list and watch, in order: path (e.g.
 * "/api/v1/pods") and the percent-encoded field selector or NULL. Used by
 * one-shot listers (kubectl schedext) so both see the same kinds. */
unsigned sx_informer_nkinds(void);
const char *sx_informer_kind_path(unsigned i, const char **field_selector);

#endif
