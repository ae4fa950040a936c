/* The extender verbs (k8s.io/kube-scheduler/extender/v1 types): filter,
 * prioritize, preempt, bind. Each takes a request body and writes the whole
 * reply (success or {"error": "..."}) into `out`, returning the HTTP status
 * to send. Replies are streamed with buf.h, never built as cJSON trees.
 *
 * Threads: every function may be called concurrently from any number of
 * server threads; the extender context is read-only after setup (the cache
 * and the kube client do their own locking).
 */
#ifndef SCHEDEXT_EXTENDER_H
#define SCHEDEXT_EXTENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"

struct cJSON;
struct sx_buf;
struct sx_cache;
struct sx_config;
struct sx_kube;
struct sx_metric;
struct sx_metrics;
struct sx_pool;
struct sx_profile;

/* Limits against hostile requests (beyond the server's body limit). */
#define SX_REQ_MAX_DEPTH 64 /* JSON nesting */

struct sx_node_memo;

struct sx_extender {
	struct sx_cache *cache;		  /* shared, not owned */
	const struct sx_config *cfg;	  /* for the global percentage */
	const struct sx_profile *profile; /* --extender-profile */
	struct sx_pool *pool;		  /* Filter/Score fan-out; NULL = serial */
	struct sx_kube *kube;		  /* NULL: bind in the cache only (--state) */
	struct sx_metrics *metrics;	  /* /metrics' registry; may be NULL */
	/* schedext_extender_verb_requests_total's handle (metrics.h), or
	 * NULL: served verbs are not counted */
	struct sx_metric *verb_requests;
	/* Node items of full-Node bodies validated before (node_memo.h); NULL
	 * scans every item in full. Owned by whoever built the extender. */
	struct sx_node_memo *node_memo;
};

/* What one call did, for the per-request log line and metrics. */
struct sx_verb_log {
	char pod[256];	  /* "ns/name", or "" when not decoded */
	uint32_t nnodes;  /* nodes in the request */
	char result[128]; /* "3 passed, 2 failed", "bound to node-a", the error ... */
};

int sx_extender_filter(const struct sx_extender *ex, const char *body, size_t len,
		       struct sx_buf *out, struct sx_verb_log *log);
int sx_extender_prioritize(const struct sx_extender *ex, const char *body, size_t len,
			   struct sx_buf *out, struct sx_verb_log *log);
int sx_extender_preempt(const struct sx_extender *ex, const char *body, size_t len,
			struct sx_buf *out, struct sx_verb_log *log);
int sx_extender_bind(const struct sx_extender *ex, const char *body, size_t len, struct sx_buf *out,
		     struct sx_verb_log *log);

/* Parses an untrusted request body: valid UTF-8, nesting at most
 * SX_REQ_MAX_DEPTH, exactly one JSON value (whitespace around it allowed).
 * Returns the tree (caller deletes) or NULL with a message in err. */
struct cJSON *sx_request_parse(const char *body, size_t len, char *err, size_t errlen);

/* Writes {"error":"msg"} into out (reset first). */
void sx_reply_error(struct sx_buf *out, const char *msg);

/* Score mapping of prioritize (documented in the README): a node's weighted
 * framework total becomes total * 10 / max_total over the candidates
 * (integer division; 0 when max_total <= 0; negatives clamp to 0). */
int64_t sx_extender_score(int64_t total, int64_t max_total);

#endif /* SCHEDEXT_EXTENDER_H */
