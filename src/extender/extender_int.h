/* Internal to src/extender/: what the verbs' files share. */
#ifndef SCHEDEXT_EXTENDER_INT_H
#define SCHEDEXT_EXTENDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

#include "schedext/common.h"
#include "schedext/intern.h"
#include "schedext/json_scan.h"

struct sx_buf;
struct sx_extender;
struct sx_node;
struct sx_pod;
struct sx_snapshot;
struct sx_verb_log;

/* ---------- request bodies, every verb: extender_args.c ----------
 *
 * One reader for every body: the streaming scanner (json_scan.h) walks the
 * envelope (the root object) and hands each member to the verb; a body
 * outside the scanner's subset is normalised once (parsed and re-printed
 * compactly) and scanned again, so syntax errors have one text. */

/* The scanner refuses the text: normalise it and scan again. */
#define SX_EXT_SCAN_FALLBACK (-1)

/* A key of a request object, matched in any letter case (Go's decoder
 * does): its first value and how often it came. A value that is null
 * counts as absent, but still as a duplicate. */
struct sx_ext_key {
	struct sx_json_val v; /* first occurrence, consumed (v.end set) */
	unsigned count;
};

/* The verb's view of one envelope member. Returns 0 to go on, SX_ENOMEM,
 * -1 when malformed, or SX_EXT_SCAN_FALLBACK. */
typedef int (*sx_ext_member_fn)(void *ctx, struct sx_json_cur *env, const struct sx_json_val *key,
				const struct sx_json_val *v);

struct sx_ext_scanner {
	sx_ext_member_fn member;
	void (*reset)(void *ctx); /* forgets what a refused scan recorded */
	void *ctx;
	char *norm;	  /* the body re-printed, when it had to be normalised (cJSON_free) */
	const char *text; /* what was scanned: the body or norm; spans point into it */
	size_t len;
};

/* Scans body with sc->member (sc zeroed but for member, reset and ctx).
 * Returns 0, or the HTTP status of the error reply written to out (syntax,
 * a root that is not an object, out of memory). Either way the caller
 * frees sc->norm with cJSON_free, after the last use of a span. */
int sx_ext_scan(struct sx_ext_scanner *sc, const char *body, size_t len, struct sx_buf *out,
		struct sx_verb_log *log);

/* When k matches names[i] (any letter case), counts it in keys[i] and keeps
 * its first value, consumed. Returns 0, or -1 when that value is
 * malformed. */
int sx_ext_key_take(struct sx_json_cur *c, const char *const *names, struct sx_ext_key *keys,
		    size_t n, const struct sx_json_val *k, const struct sx_json_val *v);

/* The ctx of a verb whose envelope is a few keys (preempt, bind): each
 * member goes through sx_ext_key_take. */
struct sx_ext_envelope {
	const char *const *names;
	struct sx_ext_key *keys; /* [n], zeroed */
	size_t n;
};

/* sx_ext_member_fn and reset of a struct sx_ext_envelope ctx. */
int sx_ext_envelope_member(void *ctx, struct sx_json_cur *env, const struct sx_json_val *key,
			   const struct sx_json_val *v);
void sx_ext_envelope_reset(void *ctx);

/* True when the key is absent or null. */
static inline bool sx_ext_key_absent(const struct sx_ext_key *k)
{
	return k->count == 0 || k->v.type == SX_JSON_NULL;
}

/* Iterates the object or array span v (a value the scanner has consumed:
 * it cannot fail) from its first member or element with c. */
void sx_ext_span_enter(const struct sx_json_val *v, struct sx_json_cur *doc, struct sx_json_cur *c);

/* The string value v decoded as cJSON would (cut at a NUL), NUL-terminated,
 * in malloc'ed memory (free()); NULL when memory runs out. */
char *sx_ext_str_dup(const struct sx_json_val *v);

/* Decodes the Pod key of an envelope. NULL with the reply written and
 * *status set. */
struct sx_pod *sx_ext_decode_pod(const struct sx_ext_key *pod, struct sx_buf *out,
				 struct sx_verb_log *log, int *status);

/* Decodes a pod from its object span (v consumed); NULL with err. */
struct sx_pod *sx_ext_pod_from_span(const struct sx_json_val *v, struct sx_error *err);

/* ---------- ExtenderArgs (filter, prioritize): extender_args.c ---------- */

/* Where a requested node came from: its name and, for Nodes mode, the
 * item's raw bytes in the request (echoed unchanged when it passes). */
struct req_node {
	const char *name;
	size_t name_len;
	sx_str id;	 /* SX_STR_INVALID when unknown to the interner */
	int at;		 /* snapshot index or -1 */
	bool dup;	 /* same name earlier in the request */
	const char *raw; /* Nodes mode: item span */
	size_t raw_len;
};

struct ext_args {
	char *norm; /* the body re-printed, when it had to be normalised */
	struct sx_pod *pod;
	bool nodes_mode; /* full Nodes (nodeCacheCapable: false) */
	uint32_t n;
	struct req_node *nodes;
	struct sx_node **decoded; /* Nodes mode: the items not in the cache, owned */
	uint32_t ndecoded;
	struct sx_snapshot *snap; /* the view used (owned reference) */
	char *strs;		  /* decoded escaped strings the nodes point into, owned */
	size_t strs_len, strs_cap;
};

/* Reads an ExtenderArgs body into a (zeroed by the caller). The streaming
 * scanner is the only reader; a body outside its subset is normalised once
 * (parsed and re-printed compactly) and scanned again. Returns 0, or the
 * HTTP status of the error reply already written to out. Free a with
 * sx_ext_args_free either way. */
int sx_ext_args_parse(const struct sx_extender *ex, const char *body, size_t len,
		      struct ext_args *a, struct sx_buf *out, struct sx_verb_log *log);
void sx_ext_args_free(struct ext_args *a);

/* ---------- shared by the verbs: extender.c ---------- */

/* sx_request_parse's message when memory ran out (cJSON says NULL for a
 * malformed body and for a failed allocation alike). */
#define SX_EXT_OUT_OF_MEMORY "out of memory"

/* The HTTP status of a failed sx_request_parse: 500 when memory ran out. */
static inline int sx_ext_parse_status(const char *msg)
{
	return strcmp(msg, SX_EXT_OUT_OF_MEMORY) == 0 ? 500 : 400;
}

/* The HTTP status of a decode error: 500 when memory ran out. */
static inline int sx_ext_decode_status(const struct sx_error *err)
{
	return err->code == SX_ENOMEM ? 500 : 400;
}

/* Writes the error reply {"error": fmt...} to out, notes it in log, and
 * returns status. */
int sx_ext_fail(struct sx_buf *out, struct sx_verb_log *log, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* schedext_schedule_attempts_total{verb,result} += 1 (no metrics: no-op). */
void sx_ext_count_attempt(const struct sx_extender *ex, const char *verb, const char *result);

#endif /* SCHEDEXT_EXTENDER_INT_H */
