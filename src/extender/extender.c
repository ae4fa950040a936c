/* The extender verbs (reference extender-protocol.md §4-5).
 *
 * Request decoding: the envelope keys (Pod, Nodes, NodeNames, ...) match in
 * any letter case (Go's decoder does); a key given twice in different case
 * is rejected rather than guessed. Keys inside Pod/Node objects are the
 * decoders' business (case-sensitive). `null` equals absent.
 *
 * Replies are written with buf.h in kube-scheduler's PascalCase.
 */
#include "schedext/extender.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/framework.h"
#include "schedext/json_scan.h"
#include "schedext/kube.h"
#include "schedext/metrics.h"
#include "schedext/preemption.h"
#include "schedext/selector.h"
#include "schedext/status.h"

/* ---------- request parsing ---------- */

/* One pass over the body: UTF-8 validity, no NUL bytes, nesting depth
 * (counted outside strings). cJSON checks the grammar afterwards. */
static bool prescan(const char *body, size_t len, char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)body, *end = p + len;
	bool in_str = false;
	int depth = 0;
	size_t n;

	while (p < end) {
		if (*p == 0) {
			snprintf(err, errlen, "malformed JSON: NUL byte at offset %zu",
				 (size_t)(p - (const unsigned char *)body));
			return false;
		}
		n = sx_utf8_seq(p, end);
		if (!n) {
			snprintf(err, errlen, "invalid UTF-8 at offset %zu",
				 (size_t)(p - (const unsigned char *)body));
			return false;
		}
		if (n == 1 && in_str && *p == '\\' && p + 1 < end && p[1] < 0x80) {
			p += 2;
			continue;
		}
		if (n == 1 && *p == '"')
			in_str = !in_str;
		else if (n == 1 && !in_str && (*p == '{' || *p == '['))
			depth++;
		else if (n == 1 && !in_str && (*p == '}' || *p == ']'))
			depth--;
		if (depth > SX_REQ_MAX_DEPTH) {
			snprintf(err, errlen, "JSON nesting deeper than %d levels", SX_REQ_MAX_DEPTH);
			return false;
		}
		p += n;
	}
	return true;
}

struct cJSON *sx_request_parse(const char *body, size_t len, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *root;

	if (len == 0) {
		snprintf(err, errlen, "empty request body");
		return NULL;
	}
	if (!prescan(body, len, err, errlen))
		return NULL;
	root = cJSON_ParseWithLengthOpts(body, len, &end, false);
	if (!root) {
		size_t off = end && end >= body ? (size_t)(end - body) : 0;
		snprintf(err, errlen, "malformed JSON at offset %zu", off);
		return NULL;
	}
	while (end && end < body + len && strchr(" \t\r\n", *end))
		end++;
	if (end && end < body + len) {
		snprintf(err, errlen, "malformed JSON: trailing data at offset %zu",
			 (size_t)(end - body));
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

void sx_reply_error(struct sx_buf *out, const char *msg)
{
	sx_buf_reset(out);
	sx_buf_puts(out, "{\"error\":");
	sx_json_str(out, msg);
	sx_buf_puts(out, "}\n");
}

/* Formats an error reply and returns the status. */
__attribute__((format(printf, 4, 5))) static int fail(struct sx_buf *out, struct sx_verb_log *log,
						      int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sx_reply_error(out, msg);
	snprintf(log->result, sizeof(log->result), "error: %.110s", msg);
	return status;
}

/* Envelope lookup, any letter case. *out = NULL for absent or null. Returns
 * false (with err) when the key appears twice. */
static bool env_get(const cJSON *obj, const char *key, const cJSON **out, char *err, size_t errlen)
{
	const cJSON *it, *found = NULL;

	for (it = obj ? obj->child : NULL; it; it = it->next) {
		if (!it->string || strcasecmp(it->string, key) != 0)
			continue;
		if (found) {
			snprintf(err, errlen, "duplicate key %s", key);
			return false;
		}
		found = it;
	}
	*out = cJSON_IsNull(found) ? NULL : found;
	return true;
}

static const char *type_name(const cJSON *j)
{
	if (cJSON_IsObject(j))
		return "object";
	if (cJSON_IsArray(j))
		return "array";
	if (cJSON_IsString(j))
		return "string";
	if (cJSON_IsNumber(j))
		return "number";
	if (cJSON_IsBool(j))
		return "boolean";
	return "null";
}

/* Decodes the Pod key of an envelope. NULL with the reply written. */
static struct sx_pod *decode_pod_key(const cJSON *root, struct sx_buf *out,
				     struct sx_verb_log *log, int *status)
{
	struct sx_error err = { 0 };
	const cJSON *pj;
	struct sx_pod *pod;
	char msg[256], ebuf[600];

	if (!env_get(root, "Pod", &pj, msg, sizeof(msg))) {
		*status = fail(out, log, 400, "%s", msg);
		return NULL;
	}
	if (!pj) {
		*status = fail(out, log, 400, "missing Pod");
		return NULL;
	}
	if (!cJSON_IsObject(pj)) {
		*status = fail(out, log, 400, "Pod: expected object, got %s", type_name(pj));
		return NULL;
	}
	pod = sx_decode_pod(pj, &err);
	if (!pod) {
		*status = fail(out, log, 400, "Pod.%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
		return NULL;
	}
	sx_pod_key(pod, log->pod, sizeof(log->pod));
	return pod;
}

static void count_attempt(const struct sx_extender *ex, const char *verb, const char *result)
{
	char labels[96];

	if (!ex->metrics)
		return;
	snprintf(labels, sizeof(labels), "verb=\"%s\",result=\"%s\"", verb, result);
	sx_metrics_inc(ex->metrics, "schedext_schedule_attempts_total", labels, 1);
}

/* ---------- filter / prioritize: the shared ExtenderArgs ---------- */

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
	const cJSON *item;  /* Nodes mode: fallback when no span */
};

struct ext_args {
	cJSON *root;
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

static void ext_args_free(struct ext_args *a)
{
	uint32_t i;

	if (a->decoded)
		for (i = 0; i < a->ndecoded; i++)
			sx_node_unref(a->decoded[i]);
	free(a->decoded);
	free(a->nodes);
	free(a->strs);
	sx_pod_unref(a->pod);
	sx_snapshot_unref(a->snap);
	cJSON_Delete(a->root);
}

/* --- locating raw item spans in the body (Nodes mode echo) --- */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* p at '"': returns past the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past one JSON value at p (already validated by cJSON), or NULL. */
static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;

	p = skip_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == '"')
		return skip_string(p, end);
	if (*p != '{' && *p != '[') {
		while (p < end && !strchr(",}] \t\r\n", *p))
			p++;
		return p;
	}
	for (; p < end; p++) {
		if (*p == '"') {
			p = skip_string(p, end);
			if (!p)
				return NULL;
			p--;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				return p + 1;
		}
	}
	return NULL;
}

/* p at '{': finds the value of the member whose raw key equals key
 * (case-insensitively when ci). Returns its start or NULL. First match, as
 * cJSON's lookups do; callers cross-check the item count. */
static const char *find_member(const char *p, const char *end, const char *key, bool ci)
{
	size_t klen = strlen(key);
	const char *k, *ke;

	p = skip_ws(p + 1, end);
	while (p < end && *p == '"') {
		k = p + 1;
		ke = skip_string(p, end);
		if (!ke)
			return NULL;
		p = skip_ws(ke, end);
		if (p >= end || *p != ':')
			return NULL;
		p = skip_ws(p + 1, end);
		if ((size_t)(ke - 1 - k) == klen &&
		    (ci ? strncasecmp(k, key, klen) : strncmp(k, key, klen)) == 0)
			return p;
		p = skip_value(p, end);
		if (!p)
			return NULL;
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
	}
	return NULL;
}

/* Records the raw span of every element of Nodes.items. False when the
 * layout does not match cJSON's view (escaped keys, ...): callers then
 * re-print from the tree. */
static bool find_item_spans(const char *body, size_t len, struct ext_args *a)
{
	const char *end = body + len, *p = skip_ws(body, end), *v;
	uint32_t i = 0;

	if (p >= end || *p != '{' || !(p = find_member(p, end, "Nodes", true)) || *p != '{')
		return false;
	if (!(p = find_member(p, end, "items", false)) || *p != '[')
		return false;
	p = skip_ws(p + 1, end);
	while (p < end && *p != ']') {
		v = skip_value(p, end);
		if (!v || i >= a->n)
			return false;
		a->nodes[i].raw = p;
		a->nodes[i].raw_len = (size_t)(v - p);
		i++;
		p = skip_ws(v, end);
		if (p < end && *p == ',')
			p = skip_ws(p + 1, end);
	}
	return i == a->n;
}

/* Orders unknown names by bytes, then by position. */
static int cmp_req_name(const void *pa, const void *pb)
{
	const struct req_node *a = *(const struct req_node *const *)pa;
	const struct req_node *b = *(const struct req_node *const *)pb;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);

	if (c)
		return c;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Marks later repeats among names unknown to the snapshot: sorted, so
 * O(u log u) even for a hostile body of only unknown names. */
static int mark_unknown_dups(struct ext_args *a, uint32_t nunknown)
{
	struct req_node **u = sx_calloc((size_t)nunknown + 1, sizeof(*u));
	uint32_t i, k = 0;

	if (!u)
		return SX_ENOMEM;
	for (i = 0; i < a->n; i++)
		if (a->nodes[i].at < 0)
			u[k++] = &a->nodes[i];
	qsort(u, k, sizeof(*u), cmp_req_name);
	for (i = 1; i < k; i++)
		u[i]->dup = u[i]->name_len == u[i - 1]->name_len &&
			    memcmp(u[i]->name, u[i - 1]->name, u[i]->name_len) == 0;
	free(u);
	return 0;
}

/* Resolves snapshot indices and marks later duplicates. Known names are
 * deduplicated by snapshot index (one byte per node): the pairwise name
 * comparison it replaces was most of a 500-name request's time. */
static int resolve_nodes(struct ext_args *a)
{
	uint8_t *seen = sx_calloc((size_t)a->snap->nnodes + 1, 1);
	uint32_t i, nunknown = 0;
	int rc = 0;

	if (!seen)
		return SX_ENOMEM;
	for (i = 0; i < a->n; i++) {
		struct req_node *rn = &a->nodes[i];

		rn->at = rn->id == SX_STR_INVALID ? -1 : sx_snapshot_find(a->snap, rn->id);
		if (rn->at < 0) {
			nunknown++;
			continue;
		}
		rn->dup = seen[rn->at];
		seen[rn->at] = 1;
	}
	free(seen);
	if (nunknown > 1)
		rc = mark_unknown_dups(a, nunknown);
	return rc;
}

static int parse_node_names(const cJSON *names, struct ext_args *a, struct sx_buf *out,
			    struct sx_verb_log *log)
{
	const cJSON *it;
	uint32_t i = 0;
	int n = cJSON_GetArraySize(names);

	if (!cJSON_IsArray(names))
		return fail(out, log, 400, "NodeNames: expected array, got %s", type_name(names));
	a->nodes = sx_calloc((size_t)n + 1, sizeof(*a->nodes));
	if (!a->nodes)
		return fail(out, log, 500, "out of memory");
	cJSON_ArrayForEach(it, names) {
		if (!cJSON_IsString(it))
			return fail(out, log, 400, "NodeNames[%u]: expected string, got %s", i,
				    type_name(it));
		a->nodes[i].name = it->valuestring;
		a->nodes[i].name_len = strlen(it->valuestring);
		a->nodes[i].id = sx_intern_lookup_n(it->valuestring, a->nodes[i].name_len);
		i++;
	}
	a->n = i;
	return 0;
}

/* A string member of obj, or NULL. */
static const char *str_member(const cJSON *obj, const char *key)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(j) ? j->valuestring : NULL;
}

/* Index of the cached node this request item is a copy of (same name, uid
 * and non-empty resourceVersion), or -1. kube-scheduler sends the Nodes of
 * its own informer, normally the very objects in our cache: those need no
 * decode and no private snapshot, which were most of a 500-node request. */
static int cached_copy(const cJSON *item, const struct sx_snapshot *snap, struct req_node *rn)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(item, "metadata");
	const char *name = str_member(meta, "name"), *rv = str_member(meta, "resourceVersion");
	const char *uid = str_member(meta, "uid");
	const struct sx_node *cached;
	int at;

	if (!name || !name[0] || !rv || !rv[0])
		return -1;
	rn->name = name;
	rn->name_len = strlen(name);
	rn->id = sx_intern_lookup_n(name, rn->name_len);
	at = rn->id == SX_STR_INVALID ? -1 : sx_snapshot_find(snap, rn->id);
	cached = at >= 0 ? snap->nodes[at]->node : NULL;
	if (!cached || !cached->meta.resource_version ||
	    strcmp(cached->meta.resource_version, rv) != 0 ||
	    strcmp(cached->meta.uid ? cached->meta.uid : "", uid ? uid : "") != 0)
		return -1;
	return at;
}

static int parse_nodes(const cJSON *nodes, const char *body, size_t len, struct ext_args *a,
		       const struct sx_snapshot *base, struct sx_buf *out, struct sx_verb_log *log)
{
	struct sx_error err = { 0 };
	const cJSON *items, *it;
	char ebuf[600];
	uint32_t i = 0;
	int n;

	if (!cJSON_IsObject(nodes))
		return fail(out, log, 400, "Nodes: expected object, got %s", type_name(nodes));
	items = cJSON_GetObjectItemCaseSensitive(nodes, "items");
	if (cJSON_IsNull(items) || !items)
		items = NULL;
	else if (!cJSON_IsArray(items))
		return fail(out, log, 400, "Nodes.items: expected array, got %s", type_name(items));
	n = items ? cJSON_GetArraySize(items) : 0;
	a->nodes = sx_calloc((size_t)n + 1, sizeof(*a->nodes));
	a->decoded = sx_calloc((size_t)n + 1, sizeof(*a->decoded));
	if (!a->nodes || !a->decoded)
		return fail(out, log, 500, "out of memory");
	cJSON_ArrayForEach(it, items) {
		if (!cJSON_IsObject(it))
			return fail(out, log, 400, "Nodes.items[%u]: expected object, got %s", i,
				    type_name(it));
		a->nodes[i].item = it;
		if (cached_copy(it, base, &a->nodes[i]) >= 0) {
			a->n = ++i;
			continue;
		}
		a->decoded[a->ndecoded] = sx_decode_node(it, &err);
		if (!a->decoded[a->ndecoded])
			return fail(out, log, 400, "Nodes.items[%u].%s", i,
				    sx_error_string(&err, ebuf, sizeof(ebuf)));
		a->nodes[i].name = a->decoded[a->ndecoded]->meta.name;
		a->nodes[i].name_len = strlen(a->nodes[i].name);
		a->nodes[i].id = a->decoded[a->ndecoded]->name_id;
		a->ndecoded++;
		a->n = ++i;
	}
	if (!find_item_spans(body, len, a))
		for (i = 0; i < a->n; i++)
			a->nodes[i].raw = NULL;
	return 0;
}

/* Sets a->snap (base, or a private view when items were decoded) and
 * resolves the requested nodes. rc: the node list's parse result. */
static int finish_args(struct ext_args *a, struct sx_snapshot *base, int rc, struct sx_buf *out,
		       struct sx_verb_log *log)
{
	log->nnodes = a->n;
	if (rc || a->ndecoded == 0) {
		a->snap = base; /* freed with a */
		if (rc)
			return rc;
	} else {
		/* Items that differ from the cache get a private view. */
		a->snap = sx_snapshot_with_nodes(base, (const struct sx_node *const *)a->decoded,
						 a->ndecoded);
		sx_snapshot_unref(base);
		if (!a->snap)
			return fail(out, log, 500, "out of memory");
	}
	if (resolve_nodes(a) < 0)
		return fail(out, log, 500, "out of memory");
	return 0;
}

/* The tree path: the whole body as one cJSON tree. */
static int parse_ext_args_tree(const struct sx_extender *ex, const char *body, size_t len,
			       struct ext_args *a, struct sx_buf *out, struct sx_verb_log *log)
{
	const cJSON *nodes, *names;
	struct sx_snapshot *base;
	char msg[256];
	int rc = 0;

	a->root = sx_request_parse(body, len, msg, sizeof(msg));
	if (!a->root)
		return fail(out, log, 400, "%s", msg);
	if (!cJSON_IsObject(a->root))
		return fail(out, log, 400, "request body must be a JSON object, got %s",
			    type_name(a->root));
	if (!env_get(a->root, "Nodes", &nodes, msg, sizeof(msg)) ||
	    !env_get(a->root, "NodeNames", &names, msg, sizeof(msg)))
		return fail(out, log, 400, "%s", msg);
	if (nodes && names)
		return fail(out, log, 400, "only one of NodeNames and Nodes may be set");
	if (!nodes && !names)
		return fail(out, log, 400, "missing NodeNames or Nodes");
	a->pod = decode_pod_key(a->root, out, log, &rc);
	if (!a->pod)
		return rc;
	a->nodes_mode = nodes != NULL;
	base = sx_cache_snapshot(ex->cache);
	if (!base)
		return fail(out, log, 500, "out of memory");
	rc = nodes ? parse_nodes(nodes, body, len, a, base, out, log)
		   : parse_node_names(names, a, out, log);
	return finish_args(a, base, rc, out, log);
}

/* --- ExtenderArgs without a tree (the common case) ---
 *
 * The body is walked once by json_scan.h: the envelope keys, Nodes.items or
 * NodeNames, and for each Node item its metadata name, uid and
 * resourceVersion. Everything else is validated and skipped. Only the Pod
 * and the Node items that differ from the cache are parsed, each from its
 * own span, and their trees are deleted right after decoding. Bodies the
 * scanner refuses (malformed, or valid JSON outside its strict subset:
 * escaped envelope keys, a BOM, lone surrogates, ...) take the tree path
 * below, which also writes every syntax error: replies never depend on the
 * path taken. */

#define SCAN_FALLBACK (-1)

/* One element of Nodes.items or NodeNames. */
struct scan_item {
	struct sx_json_val v;
	struct sx_json_val name, uid, rv; /* Node items: first metadata fields, or type NONE */
};

struct scan_key {
	struct sx_json_val v; /* first occurrence */
	unsigned count;
};

struct scan {
	struct scan_key pod, nodes, names;
	struct sx_json_val items; /* Nodes.items (first), type NONE when absent */
	struct scan_item *it;     /* its elements, or NodeNames' */
	uint32_t n, cap;
	bool claimed;             /* it holds Nodes.items or NodeNames */
};

static struct scan_item *scan_push(struct scan *s, const struct sx_json_val *v)
{
	struct scan_item *it;

	if (s->n == s->cap) {
		uint32_t ncap = s->cap ? s->cap * 2 : 512;

		it = realloc(s->it, (size_t)ncap * sizeof(*it));
		if (!it)
			return NULL;
		s->it = it;
		s->cap = ncap;
	}
	it = &s->it[s->n++];
	memset(it, 0, sizeof(*it));
	it->v = *v;
	return it;
}

/* Records the first name/uid/resourceVersion of an object metadata value
 * (cJSON's lookups take the first match). */
static int scan_meta(struct sx_json_cur *item, struct scan_item *it)
{
	struct sx_json_cur mc;
	struct sx_json_val k, v;
	int rc;

	sx_json_enter(item, &mc);
	while ((rc = sx_json_next_member(&mc, &k, &v)) == 1) {
		if (it->name.type == SX_JSON_NONE && sx_json_str_eq(&k, "name", false))
			it->name = v;
		else if (it->uid.type == SX_JSON_NONE && sx_json_str_eq(&k, "uid", false))
			it->uid = v;
		else if (it->rv.type == SX_JSON_NONE && sx_json_str_eq(&k, "resourceVersion", false))
			it->rv = v;
	}
	return rc;
}

static int scan_node_item(struct sx_json_cur *items, struct scan_item *it)
{
	struct sx_json_cur ic;
	struct sx_json_val k, v;
	bool seen = false;
	int rc;

	sx_json_enter(items, &ic);
	while ((rc = sx_json_next_member(&ic, &k, &v)) == 1) {
		if (seen || !sx_json_str_eq(&k, "metadata", false))
			continue;
		seen = true;
		if (v.type == SX_JSON_OBJECT && scan_meta(&ic, it) < 0)
			return -1;
	}
	return rc;
}

/* Elements of an array value just returned by c; Node items when nodes. */
static int scan_array(struct sx_json_cur *c, struct scan *s, bool nodes)
{
	struct sx_json_cur ac;
	struct sx_json_val v;
	struct scan_item *it;
	int rc;

	s->claimed = true;
	sx_json_enter(c, &ac);
	while ((rc = sx_json_next(&ac, &v)) == 1) {
		if (!(it = scan_push(s, &v)))
			return SX_ENOMEM;
		if (nodes && v.type == SX_JSON_OBJECT && scan_node_item(&ac, it) < 0)
			return -1;
		if (!(it->v.end = sx_json_finish(&ac)))
			return -1;
	}
	return rc;
}

/* The Nodes object just returned by env: finds items. */
static int scan_nodes(struct sx_json_cur *env, struct scan *s)
{
	struct sx_json_cur nc;
	struct sx_json_val k, v;
	int rc;

	sx_json_enter(env, &nc);
	while ((rc = sx_json_next_member(&nc, &k, &v)) == 1) {
		if (k.escaped)
			return -1; /* the tree path finds "items" and echoes as before */
		if (s->items.type != SX_JSON_NONE || !sx_json_str_eq(&k, "items", false))
			continue;
		s->items = v;
		if (v.type == SX_JSON_ARRAY && (rc = scan_array(&nc, s, true)) != 0)
			return rc;
	}
	return rc;
}

/* One envelope member. */
static int scan_member(struct sx_json_cur *env, struct scan *s, const struct sx_json_val *k,
		       const struct sx_json_val *v)
{
	struct scan_key *key;

	if (k->escaped)
		return -1; /* the tree path compares decoded keys */
	if (sx_json_str_eq(k, "Pod", true))
		key = &s->pod;
	else if (sx_json_str_eq(k, "Nodes", true))
		key = &s->nodes;
	else if (sx_json_str_eq(k, "NodeNames", true))
		key = &s->names;
	else
		return 0;
	if (key->count++)
		return 0;
	key->v = *v;
	if (key == &s->pod)
		return (key->v.end = sx_json_finish(env)) ? 0 : -1;
	if (s->claimed)
		return 0; /* both forms: an error once the body is known valid */
	if (key == &s->nodes && v->type == SX_JSON_OBJECT)
		return scan_nodes(env, s);
	if (key == &s->names && v->type == SX_JSON_ARRAY)
		return scan_array(env, s, false);
	return 0;
}

/* Walks the whole body. 0, SX_ENOMEM, or -1 for the tree path. */
static int scan_body(const char *body, size_t len, struct scan *s)
{
	struct sx_json_cur doc, env;
	struct sx_json_val root, k, v;
	int rc;

	sx_json_doc(&doc, body, len, SX_REQ_MAX_DEPTH);
	if (sx_json_next(&doc, &root) != 1 || root.type != SX_JSON_OBJECT)
		return -1;
	sx_json_enter(&doc, &env);
	while ((rc = sx_json_next_member(&env, &k, &v)) == 1)
		if ((rc = scan_member(&env, s, &k, &v)) != 0)
			return rc;
	if (rc < 0 || sx_json_next(&doc, &root) != 0)
		return -1;
	return 0;
}

/* A string value decoded as cJSON would (cut at a NUL): points into the
 * body when it has no escape, else into a->strs. False when v is not a
 * string or memory runs out. */
static bool scan_str(struct ext_args *a, size_t body_len, const struct sx_json_val *v,
		     const char **p, size_t *n)
{
	size_t raw;

	if (v->type != SX_JSON_STRING)
		return false;
	raw = (size_t)(v->end - v->p) - 2;
	if (!v->escaped) {
		*p = v->p + 1;
		*n = raw;
		return true;
	}
	if (!a->strs) { /* decoded strings never outgrow the body */
		a->strs = malloc(body_len + 1);
		a->strs_cap = body_len + 1;
		if (!a->strs)
			return false;
	}
	if (a->strs_cap - a->strs_len < raw)
		return false;
	*p = a->strs + a->strs_len;
	*n = sx_json_unescape(v, a->strs + a->strs_len, raw);
	a->strs_len += *n;
	return true;
}

static bool span_is(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* cached_copy for a scanned item. */
static int scan_cached_copy(struct ext_args *a, size_t body_len, const struct scan_item *it,
			    const struct sx_snapshot *snap, struct req_node *rn)
{
	const char *rv, *uid = "";
	size_t rv_len, uid_len = 0;
	const struct sx_node *cached;
	int at;

	if (!scan_str(a, body_len, &it->name, &rn->name, &rn->name_len) || !rn->name_len ||
	    !scan_str(a, body_len, &it->rv, &rv, &rv_len) || !rv_len)
		return -1;
	if (it->uid.type == SX_JSON_STRING && !scan_str(a, body_len, &it->uid, &uid, &uid_len))
		return -1;
	rn->id = sx_intern_lookup_n(rn->name, rn->name_len);
	at = rn->id == SX_STR_INVALID ? -1 : sx_snapshot_find(snap, rn->id);
	cached = at >= 0 ? snap->nodes[at]->node : NULL;
	if (!cached || !cached->meta.resource_version ||
	    !span_is(rv, rv_len, cached->meta.resource_version) ||
	    !span_is(uid, uid_len, cached->meta.uid ? cached->meta.uid : ""))
		return -1;
	return at;
}

/* Decodes one Node item from its span. */
static struct sx_node *decode_node_span(const struct sx_json_val *v, struct sx_error *err)
{
	cJSON *j = cJSON_ParseWithLength(v->p, (size_t)(v->end - v->p));
	struct sx_node *node;

	if (!j) {
		sx_error_set(err, SX_ENOMEM, "out of memory");
		return NULL;
	}
	node = sx_decode_node(j, err);
	cJSON_Delete(j);
	return node;
}

static int scan_parse_nodes(const struct scan *s, size_t body_len, struct ext_args *a,
			    const struct sx_snapshot *base, struct sx_buf *out,
			    struct sx_verb_log *log)
{
	struct sx_error err = { 0 };
	char ebuf[600];
	uint32_t i, n;

	if (s->nodes.v.type != SX_JSON_OBJECT)
		return fail(out, log, 400, "Nodes: expected object, got %s",
			    sx_json_type_name(s->nodes.v.type));
	if (s->items.type != SX_JSON_NONE && s->items.type != SX_JSON_NULL &&
	    s->items.type != SX_JSON_ARRAY)
		return fail(out, log, 400, "Nodes.items: expected array, got %s",
			    sx_json_type_name(s->items.type));
	n = s->items.type == SX_JSON_ARRAY ? s->n : 0;
	a->nodes = sx_calloc((size_t)n + 1, sizeof(*a->nodes));
	a->decoded = sx_calloc((size_t)n + 1, sizeof(*a->decoded));
	if (!a->nodes || !a->decoded)
		return fail(out, log, 500, "out of memory");
	for (i = 0; i < n; i++) {
		const struct scan_item *it = &s->it[i];
		struct req_node *rn = &a->nodes[i];
		struct sx_node *node;

		if (it->v.type != SX_JSON_OBJECT)
			return fail(out, log, 400, "Nodes.items[%u]: expected object, got %s", i,
				    sx_json_type_name(it->v.type));
		rn->raw = it->v.p;
		rn->raw_len = (size_t)(it->v.end - it->v.p);
		a->n = i + 1;
		if (scan_cached_copy(a, body_len, it, base, rn) >= 0)
			continue;
		node = decode_node_span(&it->v, &err);
		if (!node)
			return fail(out, log, err.code == SX_ENOMEM ? 500 : 400, "Nodes.items[%u].%s",
				    i, sx_error_string(&err, ebuf, sizeof(ebuf)));
		a->decoded[a->ndecoded++] = node;
		rn->name = node->meta.name;
		rn->name_len = strlen(rn->name);
		rn->id = node->name_id;
	}
	return 0;
}

static int scan_parse_names(const struct scan *s, size_t body_len, struct ext_args *a,
			    struct sx_buf *out, struct sx_verb_log *log)
{
	uint32_t i;

	if (s->names.v.type != SX_JSON_ARRAY)
		return fail(out, log, 400, "NodeNames: expected array, got %s",
			    sx_json_type_name(s->names.v.type));
	a->nodes = sx_calloc((size_t)s->n + 1, sizeof(*a->nodes));
	if (!a->nodes)
		return fail(out, log, 500, "out of memory");
	for (i = 0; i < s->n; i++) {
		struct req_node *rn = &a->nodes[i];

		if (s->it[i].v.type != SX_JSON_STRING)
			return fail(out, log, 400, "NodeNames[%u]: expected string, got %s", i,
				    sx_json_type_name(s->it[i].v.type));
		if (!scan_str(a, body_len, &s->it[i].v, &rn->name, &rn->name_len))
			return fail(out, log, 500, "out of memory");
		rn->id = sx_intern_lookup_n(rn->name, rn->name_len);
		a->n = i + 1;
	}
	return 0;
}

/* The Pod of a scanned envelope, parsed from its span. */
static struct sx_pod *scan_decode_pod(const struct scan *s, struct sx_buf *out,
				      struct sx_verb_log *log, int *status)
{
	struct sx_error err = { 0 };
	struct sx_pod *pod;
	char ebuf[600];
	cJSON *j;

	if (s->pod.count > 1) {
		*status = fail(out, log, 400, "duplicate key Pod");
		return NULL;
	}
	if (!s->pod.count || s->pod.v.type == SX_JSON_NULL) {
		*status = fail(out, log, 400, "missing Pod");
		return NULL;
	}
	if (s->pod.v.type != SX_JSON_OBJECT) {
		*status = fail(out, log, 400, "Pod: expected object, got %s",
			       sx_json_type_name(s->pod.v.type));
		return NULL;
	}
	j = cJSON_ParseWithLength(s->pod.v.p, (size_t)(s->pod.v.end - s->pod.v.p));
	if (!j) {
		*status = fail(out, log, 500, "out of memory");
		return NULL;
	}
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	if (!pod) {
		*status = fail(out, log, 400, "Pod.%s", sx_error_string(&err, ebuf, sizeof(ebuf)));
		return NULL;
	}
	sx_pod_key(pod, log->pod, sizeof(log->pod));
	return pod;
}

/* parse_ext_args over a scanned body, in the tree path's order of checks. */
static int scan_ext_args(const struct sx_extender *ex, const struct scan *s, size_t len,
			 struct ext_args *a, struct sx_buf *out, struct sx_verb_log *log)
{
	struct sx_snapshot *base;
	bool nodes, names;
	int rc = 0;

	if (s->nodes.count > 1)
		return fail(out, log, 400, "duplicate key Nodes");
	if (s->names.count > 1)
		return fail(out, log, 400, "duplicate key NodeNames");
	nodes = s->nodes.count && s->nodes.v.type != SX_JSON_NULL;
	names = s->names.count && s->names.v.type != SX_JSON_NULL;
	if (nodes && names)
		return fail(out, log, 400, "only one of NodeNames and Nodes may be set");
	if (!nodes && !names)
		return fail(out, log, 400, "missing NodeNames or Nodes");
	a->pod = scan_decode_pod(s, out, log, &rc);
	if (!a->pod)
		return rc;
	a->nodes_mode = nodes;
	base = sx_cache_snapshot(ex->cache);
	if (!base)
		return fail(out, log, 500, "out of memory");
	rc = nodes ? scan_parse_nodes(s, len, a, base, out, log)
		   : scan_parse_names(s, len, a, out, log);
	return finish_args(a, base, rc, out, log);
}

/* Parses ExtenderArgs into a. Returns 0 or the HTTP status of the error
 * reply already written. */
static int parse_ext_args(const struct sx_extender *ex, const char *body, size_t len,
			  struct ext_args *a, struct sx_buf *out, struct sx_verb_log *log)
{
	struct scan s = { 0 };
	int rc = scan_body(body, len, &s);

	if (rc == 0)
		rc = scan_ext_args(ex, &s, len, a, out, log);
	else if (rc == SX_ENOMEM)
		rc = fail(out, log, 500, "out of memory");
	else
		rc = parse_ext_args_tree(ex, body, len, a, out, log);
	free(s.it);
	return rc;
}


/* Runs the cycle over the known, distinct requested nodes. */
static int run_cycle(const struct sx_extender *ex, struct ext_args *a, enum sx_cycle_mode mode,
		     struct sx_cycle_result *res)
{
	sx_str *cand = sx_calloc(a->n + 1, sizeof(*cand));
	struct sx_cycle_opts opts = { 0 };
	uint32_t i, n = 0;
	int rc;

	if (!cand)
		return SX_ENOMEM;
	for (i = 0; i < a->n; i++)
		if (a->nodes[i].at >= 0 && !a->nodes[i].dup)
			cand[n++] = a->nodes[i].id;
	opts.snap = a->snap;
	opts.mode = mode;
	opts.candidates = cand;
	opts.ncandidates = n;
	opts.percentage = 100;
	opts.global_percentage = ex->cfg ? ex->cfg->percentage_of_nodes_to_score : 0;
	opts.pool = ex->pool;
	rc = sx_schedule(ex->profile, a->pod, &opts, res);
	free(cand);
	return rc;
}

/* The status a requested node failed with, NULL when it passed. */
static const struct sx_status *filter_status(const struct sx_cycle_result *res,
					     const bool *feasible, int at)
{
	if (res->pre_filter)
		return res->pre_filter;
	if (feasible[at])
		return NULL;
	if (res->statuses[at])
		return res->statuses[at];
	return res->absent_status;
}

/* A failure map entry: "name": "reason". */
static void put_failure(struct sx_buf *out, bool *first, const struct req_node *rn,
			const char *reason)
{
	if (!*first)
		sx_buf_putc(out, ',');
	*first = false;
	sx_json_strn(out, rn->name, rn->name_len);
	sx_buf_putc(out, ':');
	sx_json_str(out, reason);
}

#define UNKNOWN_NODE_REASON "node(s) not found in the schedext cache"

/* Writes one failure map: unresolvable or not. Returns the count. */
static uint32_t put_failures(struct sx_buf *out, const struct ext_args *a,
			     const struct sx_cycle_result *res, const bool *feasible,
			     bool unresolvable)
{
	const struct sx_status *st;
	char msg[1024];
	bool first = true;
	uint32_t i, n = 0;

	sx_buf_putc(out, '{');
	for (i = 0; i < a->n; i++) {
		const struct req_node *rn = &a->nodes[i];

		if (rn->dup)
			continue;
		if (rn->at < 0) {
			if (!unresolvable)
				put_failure(out, &first, rn, UNKNOWN_NODE_REASON), n++;
			continue;
		}
		st = filter_status(res, feasible, rn->at);
		if (!st)
			continue;
		if ((st->code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE) != unresolvable)
			continue;
		sx_status_message(st, msg, sizeof(msg));
		put_failure(out, &first, rn, msg[0] ? msg : sx_code_name(st->code));
		n++;
	}
	sx_buf_putc(out, '}');
	return n;
}

/* The passing nodes in the form they came in. Returns the count. */
static uint32_t put_passing(struct sx_buf *out, const struct ext_args *a, const bool *feasible,
			    bool pre_rejected)
{
	uint32_t i, n = 0;
	char *printed;

	sx_buf_puts(out, a->nodes_mode ? "{\"Nodes\":{\"metadata\":{},\"items\":[" : "{\"NodeNames\":[");
	for (i = 0; i < a->n; i++) {
		const struct req_node *rn = &a->nodes[i];

		if (rn->dup || rn->at < 0 || pre_rejected || !feasible[rn->at])
			continue;
		if (n++)
			sx_buf_putc(out, ',');
		if (!a->nodes_mode) {
			sx_json_strn(out, rn->name, rn->name_len);
		} else if (rn->raw) {
			sx_buf_put(out, rn->raw, rn->raw_len);
		} else {
			printed = cJSON_PrintUnformatted(rn->item);
			if (!printed)
				out->failed = true;
			else
				sx_buf_puts(out, printed);
			free(printed);
		}
	}
	sx_buf_puts(out, a->nodes_mode ? "]},\"NodeNames\":null" : "],\"Nodes\":null");
	return n;
}

int sx_extender_filter(const struct sx_extender *ex, const char *body, size_t len,
		       struct sx_buf *out, struct sx_verb_log *log)
{
	struct ext_args a = { 0 };
	struct sx_cycle_result res = { 0 };
	bool *feasible = NULL;
	char msg[1024];
	uint32_t i, npass, nfail;
	int rc;

	rc = parse_ext_args(ex, body, len, &a, out, log);
	if (rc)
		goto out;
	if (run_cycle(ex, &a, SX_CYCLE_FILTER_ONLY, &res) < 0 ||
	    !(feasible = sx_calloc(a.snap->nnodes + 1, sizeof(bool)))) {
		rc = fail(out, log, 500, "out of memory");
		goto out;
	}
	if (res.error) {
		/* A plugin error fails the whole call (protocol §4.2 Error). */
		sx_buf_puts(out, "{\"Error\":");
		sx_json_str(out, sx_status_message(res.error, msg, sizeof(msg)));
		sx_buf_puts(out, "}\n");
		snprintf(log->result, sizeof(log->result), "error: %.110s", msg);
		count_attempt(ex, "filter", "error");
		rc = 200;
		goto out;
	}
	for (i = 0; i < res.nfeasible; i++)
		feasible[res.feasible[i]] = true;
	npass = put_passing(out, &a, feasible, res.pre_filter != NULL);
	sx_buf_puts(out, ",\"FailedNodes\":");
	nfail = put_failures(out, &a, &res, feasible, false);
	sx_buf_puts(out, ",\"FailedAndUnresolvableNodes\":");
	nfail += put_failures(out, &a, &res, feasible, true);
	sx_buf_puts(out, ",\"Error\":\"\"}\n");
	snprintf(log->result, sizeof(log->result), "%u passed, %u failed", npass, nfail);
	count_attempt(ex, "filter", npass ? "scheduled" : "unschedulable");
	rc = 200;
out:
	free(feasible);
	sx_cycle_result_free(&res);
	ext_args_free(&a);
	return rc;
}

int64_t sx_extender_score(int64_t total, int64_t max_total)
{
	if (max_total <= 0 || total <= 0)
		return 0;
	if (total >= max_total)
		return SX_MAX_EXTENDER_PRIORITY;
	/* total < max_total here, and totals stay far below INT64_MAX / 10
	 * (Σ 100 × weight over a few dozen plugins). */
	return total * SX_MAX_EXTENDER_PRIORITY / max_total;
}

int sx_extender_prioritize(const struct sx_extender *ex, const char *body, size_t len,
			   struct sx_buf *out, struct sx_verb_log *log)
{
	struct ext_args a = { 0 };
	struct sx_cycle_result res = { 0 };
	int64_t *total = NULL, max = 0;
	char msg[1024];
	uint32_t i, n = 0;
	int rc;

	rc = parse_ext_args(ex, body, len, &a, out, log);
	if (rc)
		goto out;
	if (run_cycle(ex, &a, SX_CYCLE_SCORE_ONLY, &res) < 0 ||
	    !(total = sx_calloc(a.snap->nnodes + 1, sizeof(int64_t)))) {
		rc = fail(out, log, 500, "out of memory");
		goto out;
	}
	if (res.error || res.pre_filter) {
		/* Prioritize errors are ignored by kube-scheduler (§5.2): a non-200. */
		rc = fail(out, log, 500, "scoring failed: %s",
			  sx_status_message(res.error ? res.error : res.pre_filter, msg, sizeof(msg)));
		goto out;
	}
	for (i = 0; res.totals && i < res.nfeasible; i++) {
		total[res.feasible[i]] = res.totals[i];
		if (res.totals[i] > max)
			max = res.totals[i];
	}
	sx_buf_putc(out, '[');
	for (i = 0; i < a.n; i++) {
		const struct req_node *rn = &a.nodes[i];

		if (rn->dup)
			continue;
		if (n++)
			sx_buf_putc(out, ',');
		sx_buf_puts(out, "{\"Host\":");
		sx_json_strn(out, rn->name, rn->name_len);
		sx_buf_puts(out, ",\"Score\":");
		sx_buf_int(out, rn->at >= 0 ? sx_extender_score(total[rn->at], max) : 0);
		sx_buf_putc(out, '}');
	}
	sx_buf_puts(out, "]\n");
	snprintf(log->result, sizeof(log->result), "%u scored, max total %lld", n, (long long)max);
	rc = 200;
out:
	free(total);
	sx_cycle_result_free(&res);
	ext_args_free(&a);
	return rc;
}

/* ---------- preempt ---------- */

/* The victims kube-scheduler proposes are checked by the shared engine
 * (preemption.h, SelectVictimsOnNode with the given pods): the pod must fit
 * without them, and those not needed are reprieved as DefaultPreemption
 * does. */

/* The pod with this uid counted on the node, or NULL. */
static const struct sx_pod *pod_on_node(const struct sx_node_info *ni, const char *uid)
{
	uint32_t i;

	for (i = 0; uid && uid[0] && i < ni->npods; i++)
		if (ni->pods[i]->meta.uid && strcmp(ni->pods[i]->meta.uid, uid) == 0)
			return ni->pods[i];
	return NULL;
}

/* Reads one victims entry ({Pods, NumPDBViolations}) into v. Unknown UIDs
 * are skipped: they hold nothing in our view, so evicting them cannot help
 * the pod fit here. Returns 0 or an HTTP status with the reply written. */
static int parse_victims(const cJSON *entry, bool meta, const struct sx_node_info *ni,
			 const struct sx_pod **v, uint32_t *nv, struct sx_buf *out,
			 struct sx_verb_log *log)
{
	const cJSON *pods, *it, *uid, *num;
	struct sx_error err = { 0 };
	char msg[256], ebuf[600];
	const char *name = entry->string;
	uint32_t i = 0;

	if (!cJSON_IsObject(entry))
		return fail(out, log, 400, "victims of node %.200s: expected object, got %s", name,
			    type_name(entry));
	if (!env_get(entry, "Pods", &pods, msg, sizeof(msg)) ||
	    !env_get(entry, "NumPDBViolations", &num, msg, sizeof(msg)))
		return fail(out, log, 400, "victims of node %.200s: %s", name, msg);
	if (num && (!cJSON_IsNumber(num) || num->valuedouble != (double)(int64_t)num->valuedouble ||
		    num->valuedouble < 0 || num->valuedouble > 1e15))
		return fail(out, log, 400, "victims of node %.200s: NumPDBViolations: expected a non-negative integer", name);
	if (pods && !cJSON_IsArray(pods))
		return fail(out, log, 400, "victims of node %.200s: Pods: expected array, got %s", name,
			    type_name(pods));
	*nv = 0;
	cJSON_ArrayForEach(it, pods) {
		struct sx_pod *full = NULL;
		const char *u = NULL;

		if (!cJSON_IsObject(it))
			return fail(out, log, 400, "victims of node %.200s: Pods[%u]: expected object", name, i);
		if (meta) {
			if (!env_get(it, "UID", &uid, msg, sizeof(msg)))
				return fail(out, log, 400, "victims of node %.200s: Pods[%u]: %s", name, i, msg);
			if (!cJSON_IsString(uid))
				return fail(out, log, 400, "victims of node %.200s: Pods[%u].UID: expected string", name, i);
			u = uid->valuestring;
		} else {
			full = sx_decode_pod(it, &err);
			if (!full)
				return fail(out, log, 400, "victims of node %.200s: Pods[%u].%s", name, i,
					    sx_error_string(&err, ebuf, sizeof(ebuf)));
			u = full->meta.uid;
		}
		if (ni && (v[*nv] = pod_on_node(ni, u)) != NULL)
			(*nv)++; /* duplicates are harmless: the engine walks the node's pods */
		sx_pod_unref(full);
		i++;
	}
	return 0;
}

struct preempt_req {
	cJSON *root;
	struct sx_pod *pod;
	const cJSON *map;
	bool meta;
	struct sx_snapshot *snap;
	struct sx_cycle_state *cs0;
};

/* "node":{"Pods":[{"UID":...}...],"NumPDBViolations":n}, victims most
 * important first as the engine orders them. */
static void put_meta_victims(struct sx_buf *out, const char *node, const struct sx_victims *v,
			     bool *first)
{
	uint32_t i;

	if (!*first)
		sx_buf_putc(out, ',');
	*first = false;
	sx_json_str(out, node);
	sx_buf_puts(out, ":{\"Pods\":[");
	for (i = 0; i < v->n; i++) {
		if (i)
			sx_buf_putc(out, ',');
		sx_buf_puts(out, "{\"UID\":");
		sx_json_str(out, v->pods[i]->meta.uid ? v->pods[i]->meta.uid : "");
		sx_buf_putc(out, '}');
	}
	sx_buf_puts(out, "],\"NumPDBViolations\":");
	sx_buf_int(out, v->num_pdb_violations);
	sx_buf_putc(out, '}');
}

/* Victims for one node entry; false when the node is dropped (unknown, the
 * pod does not fit even without the victims, or none is needed). */
static bool preempt_node(const struct sx_extender *ex, const struct preempt_req *r,
			 const struct sx_node_info *ni, const struct sx_pod *const *v,
			 uint32_t nv, struct sx_victims *out)
{
	struct sx_status *st;

	memset(out, 0, sizeof(*out));
	if (!ni || nv == 0)
		return false;
	st = sx_preempt_select_victims_on_node(ex->profile, r->cs0, r->pod, ni, r->snap, v, nv,
					       NULL, out);
	if (st) {
		sx_status_free(st);
		return false;
	}
	if (out->n == 0) {
		sx_victims_free(out); /* kube-scheduler rejects a node without victims */
		return false;
	}
	return true;
}

static int parse_preempt(const struct sx_extender *ex, const char *body, size_t len,
			 struct preempt_req *r, struct sx_buf *out, struct sx_verb_log *log)
{
	const cJSON *full, *meta;
	char msg[256];
	int rc = 0;

	r->root = sx_request_parse(body, len, msg, sizeof(msg));
	if (!r->root)
		return fail(out, log, 400, "%s", msg);
	if (!cJSON_IsObject(r->root))
		return fail(out, log, 400, "request body must be a JSON object, got %s",
			    type_name(r->root));
	if (!env_get(r->root, "NodeNameToVictims", &full, msg, sizeof(msg)) ||
	    !env_get(r->root, "NodeNameToMetaVictims", &meta, msg, sizeof(msg)))
		return fail(out, log, 400, "%s", msg);
	if (full && meta)
		return fail(out, log, 400, "only one of NodeNameToVictims and NodeNameToMetaVictims may be set");
	if (!full && !meta)
		return fail(out, log, 400, "missing NodeNameToMetaVictims or NodeNameToVictims");
	r->map = meta ? meta : full;
	r->meta = meta != NULL;
	if (!cJSON_IsObject(r->map))
		return fail(out, log, 400, "%s: expected object, got %s",
			    meta ? "NodeNameToMetaVictims" : "NodeNameToVictims", type_name(r->map));
	r->pod = decode_pod_key(r->root, out, log, &rc);
	if (!r->pod)
		return rc;
	log->nnodes = (uint32_t)cJSON_GetArraySize(r->map);
	r->snap = sx_cache_snapshot(ex->cache);
	r->cs0 = r->snap ? sx_cycle_state_new(r->snap) : NULL;
	if (!r->cs0)
		return fail(out, log, 500, "out of memory");
	return 0;
}

static void preempt_req_free(const struct sx_extender *ex, struct preempt_req *r)
{
	if (r->cs0)
		sx_cycle_state_free(ex->profile, r->cs0);
	sx_snapshot_unref(r->snap);
	sx_pod_unref(r->pod);
	cJSON_Delete(r->root);
}

int sx_extender_preempt(const struct sx_extender *ex, const char *body, size_t len,
			struct sx_buf *out, struct sx_verb_log *log)
{
	struct preempt_req r = { 0 };
	const struct sx_pod **v = NULL;
	struct sx_victims vict;
	struct sx_status *st;
	const cJSON *entry;
	bool first = true, pre_ok;
	uint32_t nv, nnodes = 0;
	int rc, at;

	rc = parse_preempt(ex, body, len, &r, out, log);
	if (rc)
		goto out;
	st = sx_run_pre_filter(ex->profile, r.cs0, r.pod);
	pre_ok = sx_status_is_success(st) || sx_status_code(st) == SX_SKIP;
	sx_status_free(st);
	sx_buf_puts(out, "{\"NodeNameToMetaVictims\":{");
	cJSON_ArrayForEach(entry, r.map) {
		const struct sx_node_info *ni = NULL;
		sx_str id = sx_intern_lookup_n(entry->string, strlen(entry->string));
		uint32_t cap = (uint32_t)cJSON_GetArraySize(cJSON_GetObjectItem(entry, "Pods"));

		at = id == SX_STR_INVALID ? -1 : sx_snapshot_find(r.snap, id);
		ni = at >= 0 ? r.snap->nodes[at] : NULL;
		free(v);
		v = sx_calloc(cap + 1, sizeof(*v));
		if (!v) {
			rc = fail(out, log, 500, "out of memory");
			goto out;
		}
		rc = parse_victims(entry, r.meta, ni, v, &nv, out, log);
		if (rc)
			goto out;
		if (!pre_ok || !preempt_node(ex, &r, ni, v, nv, &vict))
			continue;
		put_meta_victims(out, entry->string, &vict, &first);
		sx_victims_free(&vict);
		nnodes++;
	}
	sx_buf_puts(out, "}}\n");
	snprintf(log->result, sizeof(log->result), "%u of %u nodes kept", nnodes, log->nnodes);
	count_attempt(ex, "preempt", nnodes ? "preemption" : "unschedulable");
	rc = 200;
out:
	free(v);
	preempt_req_free(ex, &r);
	return rc;
}

/* ---------- bind ---------- */

struct bind_args {
	const char *name, *ns, *uid, *node;
};

static int parse_bind(const cJSON *root, struct bind_args *b, struct sx_buf *out,
		      struct sx_verb_log *log)
{
	static const char *const keys[] = { "PodName", "PodNamespace", "PodUID", "Node" };
	const char **dst[] = { &b->name, &b->ns, &b->uid, &b->node };
	const cJSON *j;
	char msg[256];
	unsigned i;

	if (!cJSON_IsObject(root))
		return fail(out, log, 400, "request body must be a JSON object, got %s", type_name(root));
	for (i = 0; i < SX_ARRAY_SIZE(keys); i++) {
		if (!env_get(root, keys[i], &j, msg, sizeof(msg)))
			return fail(out, log, 400, "%s", msg);
		if (!j)
			return fail(out, log, 400, "missing %s", keys[i]);
		if (!cJSON_IsString(j))
			return fail(out, log, 400, "%s: expected string, got %s", keys[i], type_name(j));
		if (strlen(j->valuestring) > 253 && i != 2)
			return fail(out, log, 400, "%s: longer than 253 characters", keys[i]);
		*dst[i] = j->valuestring;
	}
	if (!b->name[0] || !b->node[0])
		return fail(out, log, 400, "%s: must not be empty", b->name[0] ? "Node" : "PodName");
	if (!b->ns[0])
		b->ns = "default";
	snprintf(log->pod, sizeof(log->pod), "%s/%s", b->ns, b->name);
	log->nnodes = 1;
	return 0;
}

/* Writes {"Error": msg} (msg "" = bound). */
static int bind_reply(struct sx_buf *out, struct sx_verb_log *log, const char *msg,
		      const struct bind_args *b)
{
	sx_buf_puts(out, "{\"Error\":");
	sx_json_str(out, msg);
	sx_buf_puts(out, "}\n");
	if (msg[0])
		snprintf(log->result, sizeof(log->result), "error: %.110s", msg);
	else
		snprintf(log->result, sizeof(log->result), "bound to %.100s", b->node);
	return 200;
}

/* Binds through the API server (live cluster) with the pod assumed in the
 * cache meanwhile; returns the bind_reply status. */
static int bind_live(const struct sx_extender *ex, const struct bind_args *b,
		     const struct sx_pod *pod, sx_str ns, sx_str node, struct sx_buf *out,
		     struct sx_verb_log *log)
{
	struct sx_error err = { 0 };
	bool assumed = pod && sx_cache_assume(ex->cache, pod, node) == 0;

	if (sx_kube_bind(ex->kube, b->ns, b->name, b->uid, b->node, &err) < 0) {
		if (assumed)
			sx_cache_forget(ex->cache, ns, b->name);
		return bind_reply(out, log, err.msg[0] ? err.msg : "binding failed", b);
	}
	if (assumed)
		sx_cache_finish_binding(ex->cache, ns, b->name);
	return bind_reply(out, log, "", b);
}

static bool node_known(struct sx_cache *cache, const char *name)
{
	const struct sx_node *n = sx_cache_get_node(cache, name);

	sx_node_unref(n);
	return n != NULL;
}

int sx_extender_bind(const struct sx_extender *ex, const char *body, size_t len,
		     struct sx_buf *out, struct sx_verb_log *log)
{
	struct bind_args b = { 0 };
	const struct sx_pod *pod = NULL;
	char msg[1024];
	sx_str ns, node, cur = SX_STR_EMPTY;
	bool assumed = false;
	cJSON *root;
	int rc;

	root = sx_request_parse(body, len, msg, sizeof(msg));
	if (!root)
		return fail(out, log, 400, "%s", msg);
	rc = parse_bind(root, &b, out, log);
	if (rc)
		goto out;
	ns = sx_intern(b.ns);
	node = sx_intern(b.node);
	if (ns == SX_STR_INVALID || node == SX_STR_INVALID) {
		rc = fail(out, log, 500, "string table full");
		goto out;
	}
	pod = sx_cache_get_pod(ex->cache, ns, b.name, &cur, &assumed);
	if (pod && b.uid[0] && pod->meta.uid && strcmp(pod->meta.uid, b.uid) != 0) {
		snprintf(msg, sizeof(msg),
			 "Precondition failed: UID in precondition: %.100s, UID in object meta: %.100s",
			 b.uid, pod->meta.uid);
		rc = bind_reply(out, log, msg, &b);
	} else if (pod && cur == node) {
		rc = bind_reply(out, log, "", &b); /* idempotent repeat */
	} else if (pod && cur != SX_STR_EMPTY) {
		snprintf(msg, sizeof(msg), "pods \"%.253s\" is already assigned to node \"%.253s\"",
			 b.name, sx_str_get(cur));
		rc = bind_reply(out, log, msg, &b);
	} else if (ex->kube) {
		rc = bind_live(ex, &b, pod, ns, node, out, log);
	} else if (!pod) {
		snprintf(msg, sizeof(msg), "pods \"%.253s\" not found", b.name);
		rc = bind_reply(out, log, msg, &b);
	} else if (!node_known(ex->cache, b.node)) {
		snprintf(msg, sizeof(msg), "nodes \"%.253s\" not found", b.node);
		rc = bind_reply(out, log, msg, &b);
	} else if ((rc = sx_cache_assume(ex->cache, pod, node)) < 0) {
		snprintf(msg, sizeof(msg), "cannot assume pod %.253s/%.253s on node %.253s (error %d)",
			 b.ns, b.name, b.node, rc);
		rc = bind_reply(out, log, msg, &b);
	} else {
		sx_cache_finish_binding(ex->cache, ns, b.name);
		rc = bind_reply(out, log, "", &b);
	}
	count_attempt(ex, "bind", strstr(log->result, "error") ? "error" : "bound");
out:
	sx_pod_unref(pod);
	cJSON_Delete(root);
	return rc;
}
