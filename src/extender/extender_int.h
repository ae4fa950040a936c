/* Internal to src/extender/: what the verbs' files share. */
#ifndef SCHEDEXT_EXTENDER_INT_H
#define SCHEDEXT_EXTENDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

#include "schedext/common.h"
#include "schedext/intern.h"

struct cJSON;
struct sx_buf;
struct sx_extender;
struct sx_node;
struct sx_pod;
struct sx_snapshot;
struct sx_verb_log;

/* ---------- ExtenderArgs (filter, prioritize): extender_args.c ---------- */

/* Where a requested node came from: its name and, for Nodes mode, the
 * item's raw bytes in the request (echoed unchanged when it passes). */
struct req_node {
	const char *name;
	size_t name_len;
	sx_str id;          /* SX_STR_INVALID when unknown to the interner */
	int at;             /* snapshot index or -1 */
	bool dup;           /* same name earlier in the request */
	const char *raw;    /* Nodes mode: item span */
	size_t raw_len;
};

struct ext_args {
	char *norm;            /* the body re-printed, when it had to be normalised */
	struct sx_pod *pod;
	bool nodes_mode;       /* full Nodes (nodeCacheCapable: false) */
	uint32_t n;
	struct req_node *nodes;
	struct sx_node **decoded; /* Nodes mode: the items not in the cache, owned */
	uint32_t ndecoded;
	struct sx_snapshot *snap; /* the view used (owned reference) */
	char *strs;            /* decoded escaped strings the nodes point into, owned */
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

/* Writes the error reply {"error": fmt...} to out, notes it in log, and
 * returns status. */
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

int sx_ext_fail(struct sx_buf *out, struct sx_verb_log *log, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* schedext_schedule_attempts_total{verb,result} += 1 (no metrics: no-op). */
void sx_ext_count_attempt(const struct sx_extender *ex, const char *verb, const char *result);

/* Envelope lookup in a cJSON object (preempt, bind), any letter case.
 * *out = NULL for absent or null. False (with err) when the key appears
 * twice. */
bool sx_ext_env_get(const struct cJSON *obj, const char *key, const struct cJSON **out,
		    char *err, size_t errlen);
/* "object", "array", "string", "number", "boolean" or "null". */
const char *sx_ext_type_name(const struct cJSON *j);
/* Decodes the Pod key of a cJSON envelope. NULL with the reply written
 * and *status set. */
struct sx_pod *sx_ext_decode_pod_key(const struct cJSON *root, struct sx_buf *out,
				     struct sx_verb_log *log, int *status);

#endif /* SCHEDEXT_EXTENDER_INT_H */
