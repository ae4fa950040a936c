/* Who may read the operations and debug endpoints (src/cmd/authz.c):
 * kube-scheduler's delegated authentication and authorization.
 *
 * With a cluster, a request's bearer token is checked with a TokenReview
 * (no token: the user system:anonymous in system:unauthenticated), and the
 * user's access to the path with a SubjectAccessReview of the
 * non-resource URL (verb: the lowercased HTTP method), both against the
 * API server and both cached for 10 seconds, as kube-scheduler's
 * delegating authenticator and authorizer do. Without a cluster (--state)
 * there is no one to ask: only loopback clients are served unless remote
 * access was enabled explicitly. Paths in the always-allow list (default
 * /healthz, /readyz, /livez) are served to anyone; the extender verbs are
 * never checked here (mutual TLS guards them).
 *
 * Thread-safe: MHD's threads call sx_authz_check concurrently. Tokens are
 * kept only in memory for the cache and never logged.
 */
#ifndef SCHEDEXT_CMD_AUTHZ_H
#define SCHEDEXT_CMD_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>

struct sx_kube;
struct sockaddr;
struct sx_authz;

#define SX_AUTHZ_DEFAULT_ALLOW "/healthz,/readyz,/livez"

struct sx_authz_opts {
	struct sx_kube *kube;	  /* NULL: no cluster (loopback only) */
	const char *always_allow; /* comma-separated paths; NULL = the default */
	bool allow_remote;	  /* without a cluster: serve non-loopback clients too */
};

struct sx_authz *sx_authz_new(const struct sx_authz_opts *opts);
void sx_authz_free(struct sx_authz *a);

/* 0 when the request may proceed; otherwise 401 or 403 with msg set.
 * authorization: the Authorization header or NULL; peer: the client
 * address or NULL. */
unsigned sx_authz_check(struct sx_authz *a, const char *path, const char *method,
			const char *authorization, const struct sockaddr *peer, char *msg,
			size_t msglen);

#endif
