/* Kubernetes API client (libcurl) and informers feeding the cache
 * (reference kube-api.md §1-3, §6-8).
 *
 * Threads: a client may be used from any thread (requests are serialized
 * per call on their own curl handles; the QPS limiter is shared). Informers
 * run on their own threads and write to the cache through its API.
 */
#ifndef SCHEDEXT_KUBE_H
#define SCHEDEXT_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "schedext/cache.h"
#include "schedext/common.h"

struct sx_kube;
struct sx_informers;

struct sx_kube_opts {
	const char *kubeconfig; /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config (kube-api.md §1.1) */
	const char *context;    /* NULL: current-context */
	double qps;             /* default 50 */
	int burst;              /* default 100 */
	const char *user_agent; /* default "schedext/<version>" */
};

/* Loads credentials and prepares a client; does not contact the server.
 * NULL with err naming the file/field on failure. */
struct sx_kube *sx_kube_new(const struct sx_kube_opts *opts, struct sx_error *err);
void sx_kube_free(struct sx_kube *kube);
/* Server URL (for the "connected to" log line). */
const char *sx_kube_server(const struct sx_kube *kube);

/* A raw request. body may be NULL. On return *status is the HTTP status
 * (0 when no response), *resp the body (caller frees; may be NULL). Retries
 * 429 (Retry-After) and 5xx with backoff, re-reads a rotated token on 401.
 * Returns 0 when a response was received, negative on transport failure
 * (err->msg says why, e.g. the TLS verification error). */
int sx_kube_request(struct sx_kube *kube, const char *method, const char *path,
		    const char *content_type, const char *body, size_t body_len, long *status,
		    char **resp, size_t *resp_len, struct sx_error *err);

/* POST /api/v1/namespaces/{ns}/pods/{name}/binding with metadata.uid as a
 * precondition. 0 on 201; otherwise negative with err->msg = the API
 * server's Status message (e.g. "pods \"x\" is already assigned to node
 * \"y\""). */
int sx_kube_bind(struct sx_kube *kube, const char *ns, const char *name, const char *uid,
		 const char *node, struct sx_error *err);

/* Starts one informer per modelled kind (kube-api.md §2-3): paginated LIST,
 * then WATCH with bookmarks; relist on 410; reconnect with jittered
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

#endif /* SCHEDEXT_KUBE_H */
