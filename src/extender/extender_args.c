/* The reader of every extender request body (extender_int.h): the
 * envelope scan with its normalise-once fallback, shared by the four
 * verbs, and the ExtenderArgs of filter and prioritize (upstream
 * staging/src/k8s.io/kube-scheduler/extender/v1/types.go): one streaming
 * scan of the body (json_scan.h),
 * the Pod and the Node items not in the cache decoded from their spans,
 * and the requested nodes resolved against the cache's snapshot.
 *
 * The envelope keys (Pod, Nodes, NodeNames) match in any letter case (Go's
 * decoder does); a key given twice in different case is rejected rather
 * than guessed. Keys inside Pod/Node objects are the decoders' business
 * (case-sensitive). `null` equals absent.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender_int.h"
#include "schedext/node_memo.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/extender.h"
#include "schedext/intern.h"
#include "schedext/json_scan.h"
#include "schedext/vec.h"

void sx_ext_args_free(struct ext_args *a)
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
	cJSON_free(a->norm);
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
			return sx_ext_fail(out, log, 500, "out of memory");
	}
	if (resolve_nodes(a) < 0)
		return sx_ext_fail(out, log, 500, "out of memory");
	return 0;
}

/* ---------- the scanner ----------
 *
 * The body is walked once by json_scan.h: the envelope keys, Nodes.items or
 * NodeNames, and for each Node item its metadata name, uid and
 * resourceVersion. Everything else is validated and skipped. Only the Pod
 * and the Node items that differ from the cache are parsed, each from its
 * own span, and their trees are deleted right after decoding. A body the
 * scanner refuses (malformed, or valid JSON outside its strict subset: a
 * BOM, raw control characters, an escaped Nodes or items key, ...) is
 * normalised once (normalise() below) and scanned again; normalising also
 * writes every syntax error. */

#define SCAN_NOT_OBJECT (-2) /* a valid text whose root is not an object */

/* One element of Nodes.items or NodeNames. */
struct scan_item {
	struct sx_json_val v;
	struct sx_json_val name, uid, rv; /* Node items: first metadata fields, or type NONE */
};

struct scan {
	struct sx_ext_key pod, nodes, names;
	struct sx_json_val items; /* Nodes.items (first), type NONE when absent */
	struct scan_item *it;	  /* its elements, or NodeNames' */
	uint32_t n, cap;
	bool claimed;		   /* it holds Nodes.items or NodeNames */
	struct sx_node_memo *memo; /* Node items validated before; may be NULL */
};

static struct scan_item *scan_push(struct scan *s, const struct sx_json_val *v)
{
	struct scan_item *it;

	if (sx_vec_reserve(s->it, s->cap, s->n + 1, 512) < 0)
		return NULL;
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
		else if (it->rv.type == SX_JSON_NONE &&
			 sx_json_str_eq(&k, "resourceVersion", false))
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

/* A Node item byte-identical to one validated before: its fields from
 * the memo, the cursor moved past it unscanned. False when none is. */
static bool scan_node_memo(struct sx_json_cur *ac, struct sx_node_memo *memo, struct scan_item *it)
{
	struct sx_node_memo_fields f;
	size_t n = sx_node_memo_match(memo, it->v.p, ac->end, &f);

	if (!n)
		return false;
	it->name = f.name;
	it->uid = f.uid;
	it->rv = f.rv;
	it->v.end = sx_json_consume_known(ac, it->v.p + n);
	return true;
}

/* A Node item scanned in full: its fields, validated, kept in the memo. */
static int scan_node_full(struct sx_json_cur *ac, struct sx_node_memo *memo, struct scan_item *it)
{
	struct sx_node_memo_fields f;

	if (scan_node_item(ac, it) < 0 || !(it->v.end = sx_json_finish(ac)))
		return -1;
	f = (struct sx_node_memo_fields){it->name, it->uid, it->rv};
	sx_node_memo_add(memo, it->v.p, (size_t)(it->v.end - it->v.p), &f);
	return 0;
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
		if (nodes && v.type == SX_JSON_OBJECT) {
			if (!scan_node_memo(&ac, s->memo, it) &&
			    scan_node_full(&ac, s->memo, it) < 0)
				return -1;
		} else if (!(it->v.end = sx_json_finish(&ac))) {
			return -1;
		}
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
		if (!sx_json_str_eq(&k, "items", false))
			continue;
		if (k.escaped)
			return SX_EXT_SCAN_FALLBACK; /* items are echoed as normalised */
		if (s->items.type != SX_JSON_NONE)
			continue;
		s->items = v;
		if (v.type == SX_JSON_ARRAY && (rc = scan_array(&nc, s, true)) != 0)
			return rc;
	}
	return rc;
}

/* One envelope member (sx_ext_member_fn). */
static int scan_member(void *ctx, struct sx_json_cur *env, const struct sx_json_val *k,
		       const struct sx_json_val *v)
{
	struct scan *s = ctx;
	struct sx_ext_key *key;

	if (sx_json_str_eq(k, "Pod", true))
		key = &s->pod;
	else if (sx_json_str_eq(k, "Nodes", true) && k->escaped)
		return SX_EXT_SCAN_FALLBACK; /* items are echoed as normalised */
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

/* The tree of a consumed object span, to hand to a decoder (the caller
 * deletes it). The span is valid JSON: NULL (err set) means out of
 * memory. */
static cJSON *span_tree(const struct sx_json_val *v, struct sx_error *err)
{
	cJSON *j = cJSON_ParseWithLength(v->p, (size_t)(v->end - v->p));

	if (!j)
		sx_error_set(err, SX_ENOMEM, "out of memory");
	return j;
}

/* Decodes one Node item from its span. */
static struct sx_node *decode_node_span(const struct sx_json_val *v, struct sx_error *err)
{
	cJSON *j = span_tree(v, err);
	struct sx_node *node = j ? sx_decode_node(j, err) : NULL;

	cJSON_Delete(j);
	return node;
}

static int scan_parse_nodes(const struct scan *s, size_t body_len, struct ext_args *a,
			    const struct sx_snapshot *base, struct sx_buf *out,
			    struct sx_verb_log *log)
{
	struct sx_error err = {0};
	char ebuf[600];
	uint32_t i, n;

	if (s->nodes.v.type != SX_JSON_OBJECT)
		return sx_ext_fail(out, log, 400, "Nodes: expected object, got %s",
				   sx_json_type_name(s->nodes.v.type));
	if (s->items.type != SX_JSON_NONE && s->items.type != SX_JSON_NULL &&
	    s->items.type != SX_JSON_ARRAY)
		return sx_ext_fail(out, log, 400, "Nodes.items: expected array, got %s",
				   sx_json_type_name(s->items.type));
	n = s->items.type == SX_JSON_ARRAY ? s->n : 0;
	a->nodes = sx_calloc((size_t)n + 1, sizeof(*a->nodes));
	a->decoded = sx_calloc((size_t)n + 1, sizeof(*a->decoded));
	if (!a->nodes || !a->decoded)
		return sx_ext_fail(out, log, 500, "out of memory");
	for (i = 0; i < n; i++) {
		const struct scan_item *it = &s->it[i];
		struct req_node *rn = &a->nodes[i];
		struct sx_node *node;

		if (it->v.type != SX_JSON_OBJECT)
			return sx_ext_fail(out, log, 400,
					   "Nodes.items[%u]: expected object, got %s", i,
					   sx_json_type_name(it->v.type));
		rn->raw = it->v.p;
		rn->raw_len = (size_t)(it->v.end - it->v.p);
		a->n = i + 1;
		if (scan_cached_copy(a, body_len, it, base, rn) >= 0)
			continue;
		node = decode_node_span(&it->v, &err);
		if (!node)
			return sx_ext_fail(out, log, err.code == SX_ENOMEM ? 500 : 400,
					   "Nodes.items[%u].%s", i,
					   sx_error_string(&err, ebuf, sizeof(ebuf)));
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
		return sx_ext_fail(out, log, 400, "NodeNames: expected array, got %s",
				   sx_json_type_name(s->names.v.type));
	a->nodes = sx_calloc((size_t)s->n + 1, sizeof(*a->nodes));
	if (!a->nodes)
		return sx_ext_fail(out, log, 500, "out of memory");
	for (i = 0; i < s->n; i++) {
		struct req_node *rn = &a->nodes[i];

		if (s->it[i].v.type != SX_JSON_STRING)
			return sx_ext_fail(out, log, 400, "NodeNames[%u]: expected string, got %s",
					   i, sx_json_type_name(s->it[i].v.type));
		if (!scan_str(a, body_len, &s->it[i].v, &rn->name, &rn->name_len))
			return sx_ext_fail(out, log, 500, "out of memory");
		rn->id = sx_intern_lookup_n(rn->name, rn->name_len);
		a->n = i + 1;
	}
	return 0;
}

struct sx_pod *sx_ext_pod_from_span(const struct sx_json_val *v, struct sx_error *err)
{
	cJSON *j = span_tree(v, err);
	struct sx_pod *pod = j ? sx_decode_pod(j, err) : NULL;

	cJSON_Delete(j);
	return pod;
}

struct sx_pod *sx_ext_decode_pod(const struct sx_ext_key *key, struct sx_buf *out,
				 struct sx_verb_log *log, int *status)
{
	struct sx_error err = {0};
	struct sx_pod *pod;
	char ebuf[600];

	if (key->count > 1) {
		*status = sx_ext_fail(out, log, 400, "duplicate key Pod");
		return NULL;
	}
	if (sx_ext_key_absent(key)) {
		*status = sx_ext_fail(out, log, 400, "missing Pod");
		return NULL;
	}
	if (key->v.type != SX_JSON_OBJECT) {
		*status = sx_ext_fail(out, log, 400, "Pod: expected object, got %s",
				      sx_json_type_name(key->v.type));
		return NULL;
	}
	pod = sx_ext_pod_from_span(&key->v, &err);
	if (!pod) {
		*status = sx_ext_fail(out, log, sx_ext_decode_status(&err), "Pod.%s",
				      sx_error_string(&err, ebuf, sizeof(ebuf)));
		return NULL;
	}
	sx_pod_key(pod, log->pod, sizeof(log->pod));
	return pod;
}

/* ExtenderArgs from a scanned body, checked in the order kube-scheduler's
 * decoder would fail: envelope keys, then the Pod, then the node list. */
static int scan_ext_args(const struct sx_extender *ex, const struct scan *s, size_t len,
			 struct ext_args *a, struct sx_buf *out, struct sx_verb_log *log)
{
	struct sx_snapshot *base;
	bool nodes, names;
	int rc = 0;

	if (s->nodes.count > 1)
		return sx_ext_fail(out, log, 400, "duplicate key Nodes");
	if (s->names.count > 1)
		return sx_ext_fail(out, log, 400, "duplicate key NodeNames");
	nodes = s->nodes.count && s->nodes.v.type != SX_JSON_NULL;
	names = s->names.count && s->names.v.type != SX_JSON_NULL;
	if (nodes && names)
		return sx_ext_fail(out, log, 400, "only one of NodeNames and Nodes may be set");
	if (!nodes && !names)
		return sx_ext_fail(out, log, 400, "missing NodeNames or Nodes");
	a->pod = sx_ext_decode_pod(&s->pod, out, log, &rc);
	if (!a->pod)
		return rc;
	a->nodes_mode = nodes;
	base = sx_cache_snapshot(ex->cache);
	if (!base)
		return sx_ext_fail(out, log, 500, "out of memory");
	rc = nodes ? scan_parse_nodes(s, len, a, base, out, log)
		   : scan_parse_names(s, len, a, out, log);
	return finish_args(a, base, rc, out, log);
}

/* ---------- the envelope scan, every verb ---------- */

/* cJSON prints a number beyond the double range (1e999, or 400 digits) as
 * null: such numbers become 1e999 or -1e999 again, which read back as the
 * same infinity, so a normalised body means what the body meant. Values
 * only; nesting is bounded by sx_request_parse. False when memory ran
 * out. */
static bool keep_infinities(cJSON *j)
{
	cJSON *it, *next, *raw;
	size_t n;

	for (it = j->child; it; it = next) {
		next = it->next;
		if (cJSON_IsNumber(it) && isinf(it->valuedouble)) {
			raw = cJSON_CreateRaw(it->valuedouble < 0 ? "-1e999" : "1e999");
			n = it->string ? strlen(it->string) + 1 : 0;
			if (raw && n && (raw->string = cJSON_malloc(n)) != NULL)
				memcpy(raw->string, it->string, n); /* the key stays */
			if (!raw || (n && !raw->string) ||
			    !cJSON_ReplaceItemViaPointer(j, it, raw)) {
				cJSON_Delete(raw);
				return false;
			}
		} else if (it->child && !keep_infinities(it)) {
			return false;
		}
	}
	return true;
}

/* Re-prints a body the scanner refused, compactly, into *norm: once parsed
 * by cJSON, the text is inside the scanner's subset (no BOM, control
 * characters escaped, keys and strings decoded and re-escaped). The syntax
 * errors are sx_request_parse's. Returns 0 or the HTTP status of the reply
 * written. */
static int normalise(const char *body, size_t len, char **norm, struct sx_buf *out,
		     struct sx_verb_log *log)
{
	char msg[256];
	cJSON *root = sx_request_parse(body, len, msg, sizeof(msg));

	if (!root)
		return sx_ext_fail(out, log, sx_ext_parse_status(msg), "%s", msg);
	*norm = keep_infinities(root) ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	if (!*norm)
		return sx_ext_fail(out, log, 500, "out of memory");
	return 0;
}

/* Walks the whole text, each envelope member through sc->member. 0,
 * SX_ENOMEM, SCAN_NOT_OBJECT (*root set) or SX_EXT_SCAN_FALLBACK. */
static int scan_envelope(struct sx_ext_scanner *sc, const char *text, size_t len,
			 enum sx_json_type *root)
{
	struct sx_json_cur doc, env;
	struct sx_json_val r, k, v;
	int rc;

	sx_json_doc(&doc, text, len, SX_REQ_MAX_DEPTH);
	if (sx_json_next(&doc, &r) != 1)
		return SX_EXT_SCAN_FALLBACK;
	if (r.type != SX_JSON_OBJECT) {
		*root = r.type;
		return sx_json_next(&doc, &v) == 0 ? SCAN_NOT_OBJECT : SX_EXT_SCAN_FALLBACK;
	}
	sx_json_enter(&doc, &env);
	while ((rc = sx_json_next_member(&env, &k, &v)) == 1)
		if ((rc = sc->member(sc->ctx, &env, &k, &v)) != 0)
			return rc == SX_ENOMEM ? rc : SX_EXT_SCAN_FALLBACK;
	if (rc < 0 || sx_json_next(&doc, &r) != 0)
		return SX_EXT_SCAN_FALLBACK;
	return 0;
}

int sx_ext_scan(struct sx_ext_scanner *sc, const char *body, size_t len, struct sx_buf *out,
		struct sx_verb_log *log)
{
	enum sx_json_type root = SX_JSON_NONE;
	int rc = scan_envelope(sc, body, len, &root);

	sc->text = body;
	sc->len = len;
	if (rc == SX_EXT_SCAN_FALLBACK) {
		sc->reset(sc->ctx);
		rc = normalise(body, len, &sc->norm, out, log);
		if (rc)
			return rc;
		sc->text = sc->norm;
		sc->len = strlen(sc->norm);
		rc = scan_envelope(sc, sc->text, sc->len, &root);
	}
	if (rc == 0)
		return 0;
	if (rc == SX_ENOMEM)
		return sx_ext_fail(out, log, 500, "out of memory");
	if (rc == SCAN_NOT_OBJECT)
		return sx_ext_fail(out, log, 400, "request body must be a JSON object, got %s",
				   sx_json_type_name(root));
	/* a normalised text is always inside the subset */
	return sx_ext_fail(out, log, 500, "request body unreadable after normalising");
}

int sx_ext_key_take(struct sx_json_cur *c, const char *const *names, struct sx_ext_key *keys,
		    size_t n, const struct sx_json_val *k, const struct sx_json_val *v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sx_json_str_eq(k, names[i], true))
			break;
	if (i == n || keys[i].count++)
		return 0;
	keys[i].v = *v;
	return (keys[i].v.end = sx_json_finish(c)) ? 0 : -1;
}

int sx_ext_envelope_member(void *ctx, struct sx_json_cur *env, const struct sx_json_val *key,
			   const struct sx_json_val *v)
{
	struct sx_ext_envelope *e = ctx;

	return sx_ext_key_take(env, e->names, e->keys, e->n, key, v);
}

void sx_ext_envelope_reset(void *ctx)
{
	struct sx_ext_envelope *e = ctx;

	memset(e->keys, 0, e->n * sizeof(*e->keys));
}

void sx_ext_span_enter(const struct sx_json_val *v, struct sx_json_cur *doc, struct sx_json_cur *c)
{
	struct sx_json_val self;

	sx_json_doc(doc, v->p, (size_t)(v->end - v->p), SX_JSON_DEPTH_CAP);
	sx_json_next(doc, &self);
	sx_json_enter(doc, c);
}

char *sx_ext_str_dup(const struct sx_json_val *v)
{
	size_t raw = (size_t)(v->end - v->p) - 2, n;
	char *s = malloc(raw + 1);

	if (!s)
		return NULL;
	n = sx_json_unescape(v, s, raw);
	s[n] = '\0';
	return s;
}

static void args_reset(void *ctx)
{
	struct scan *s = ctx;
	struct sx_node_memo *memo = s->memo;

	free(s->it);
	memset(s, 0, sizeof(*s));
	s->memo = memo;
}

int sx_ext_args_parse(const struct sx_extender *ex, const char *body, size_t len,
		      struct ext_args *a, struct sx_buf *out, struct sx_verb_log *log)
{
	struct scan s = {.memo = ex->node_memo};
	struct sx_ext_scanner sc = {.member = scan_member, .reset = args_reset, .ctx = &s};
	int rc = sx_ext_scan(&sc, body, len, out, log);

	a->norm = sc.norm;
	if (rc == 0)
		rc = scan_ext_args(ex, &s, sc.len, a, out, log);
	free(s.it);
	return rc;
}
