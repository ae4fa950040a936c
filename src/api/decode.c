/* Decoding building blocks: typed field readers with error paths, metadata,
 * label and node selectors, node affinity, resource lists in exact nano
 * units, RFC 3339 times, and the kind dispatcher (decode.h).
 */
#include "schedext/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/quantity.h"
#include "schedext/dra.h"

/* ---------- typed field readers ---------- */

const char *sx_dec_type_name(const cJSON *j)
{
	if (!j || cJSON_IsNull(j))
		return "null";
	if (cJSON_IsBool(j))
		return "boolean";
	if (cJSON_IsNumber(j))
		return "number";
	if (cJSON_IsString(j))
		return "string";
	if (cJSON_IsArray(j))
		return "array";
	if (cJSON_IsObject(j))
		return "object";
	return "invalid";
}

const cJSON *sx_dec_get(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!obj || !cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v || cJSON_IsNull(v))
		return NULL;
	return v;
}

int sx_dec_type_error(struct sx_error *err, const char *key, const char *want, const cJSON *got)
{
	sx_error_set(err, SX_EINVAL, "expected %s, got %s", want, sx_dec_type_name(got));
	sx_error_prefix(err, key);
	return SX_EINVAL;
}

int sx_dec_object(const cJSON *obj, const char *key, const cJSON **out, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	if (!cJSON_IsObject(v))
		return sx_dec_type_error(err, key, "object", v);
	if (cJSON_GetArraySize(v) > SX_DECODE_MAX_ITEMS) {
		sx_error_set(err, SX_ETOOBIG, "more than %d entries", SX_DECODE_MAX_ITEMS);
		sx_error_prefix(err, key);
		return SX_ETOOBIG;
	}
	*out = v;
	return 0;
}

int sx_dec_array(const cJSON *obj, const char *key, const cJSON **out, uint32_t *n,
		 struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	int size;

	*out = NULL;
	*n = 0;
	if (!v)
		return 0;
	if (!cJSON_IsArray(v))
		return sx_dec_type_error(err, key, "array", v);
	size = cJSON_GetArraySize(v);
	if (size > SX_DECODE_MAX_ITEMS) {
		sx_error_set(err, SX_ETOOBIG, "more than %d items", SX_DECODE_MAX_ITEMS);
		sx_error_prefix(err, key);
		return SX_ETOOBIG;
	}
	*out = v;
	*n = (uint32_t)size;
	return 0;
}

/* ---------- shared decoder shapes (decode_util.h) ---------- */

int sx_dec_oom(struct sx_error *err)
{
	return sx_error_set(err, SX_ENOMEM, "out of memory");
}

int sx_dec_not_object(struct sx_error *err, const cJSON *j)
{
	return sx_error_set(err, SX_EINVAL, "expected object, got %s", sx_dec_type_name(j));
}

void *sx_dec_new(const cJSON *json, size_t size, struct sx_error *err)
{
	void *p;

	if (!cJSON_IsObject(json)) {
		sx_dec_not_object(err, json);
		return NULL;
	}
	p = sx_calloc(1, size);
	if (!p)
		sx_dec_oom(err);
	return p;
}

static int walk(const cJSON *arr, const char *key, bool objects, void *base, size_t size,
		sx_dec_item_fn fn, void *arg, struct sx_error *err)
{
	const cJSON *it;
	uint32_t i = 0;

	cJSON_ArrayForEach(it, arr) {
		void *elem = base ? (char *)base + (size_t)i * size : NULL;
		int rc = objects && !cJSON_IsObject(it) ? sx_dec_not_object(err, it)
						       : fn(it, elem, arg, err);

		if (rc < 0) {
			sx_error_prefixf(err, "[%u]", i);
			sx_error_prefix(err, key);
			return rc;
		}
		i++;
	}
	return 0;
}

int sx_dec_each(const cJSON *arr, const char *key, void *base, size_t size, sx_dec_item_fn fn,
		void *arg, struct sx_error *err)
{
	return walk(arr, key, false, base, size, fn, arg, err);
}

int sx_dec_each_object(const cJSON *arr, const char *key, void *base, size_t size,
		       sx_dec_item_fn fn, void *arg, struct sx_error *err)
{
	return walk(arr, key, true, base, size, fn, arg, err);
}

static int alloc_walk(const cJSON *obj, const char *key, bool objects, size_t size, void *items,
		      uint32_t *n, sx_dec_item_fn fn, void *arg, struct sx_error *err)
{
	const cJSON *arr;
	uint32_t cnt;
	void *p = NULL;
	int rc = sx_dec_array(obj, key, &arr, &cnt, err);

	*n = 0;
	if (rc == 0 && arr && !(p = sx_calloc(cnt, size)))
		rc = sx_dec_oom(err);
	/* items is a T **: store through memcpy, not as a void **. */
	memcpy(items, &p, sizeof(p));
	if (rc < 0 || !arr)
		return rc;
	*n = cnt;
	return walk(arr, key, objects, p, size, fn, arg, err);
}

int sx_dec_items_(const cJSON *obj, const char *key, size_t size, void *items, uint32_t *n,
		  sx_dec_item_fn fn, void *arg, struct sx_error *err)
{
	return alloc_walk(obj, key, false, size, items, n, fn, arg, err);
}

int sx_dec_objects_(const cJSON *obj, const char *key, size_t size, void *items, uint32_t *n,
		    sx_dec_item_fn fn, void *arg, struct sx_error *err)
{
	return alloc_walk(obj, key, true, size, items, n, fn, arg, err);
}

int sx_dec_sub(const cJSON *obj, const char *key, sx_dec_item_fn fn, void *elem, void *arg,
	       struct sx_error *err)
{
	const cJSON *v;
	int rc = sx_dec_object(obj, key, &v, err);

	if (rc < 0 || !v)
		return rc;
	rc = fn(v, elem, arg, err);
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

/* Checks a string value's length; no path. */
static int check_string(const cJSON *v, struct sx_error *err)
{
	if (strlen(v->valuestring) > SX_DECODE_MAX_STRING)
		return sx_error_set(err, SX_ETOOBIG, "string longer than %d bytes",
				    SX_DECODE_MAX_STRING);
	return 0;
}

int sx_dec_string(const cJSON *obj, const char *key, const char **out, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	int rc;

	*out = NULL;
	if (!v)
		return 0;
	if (!cJSON_IsString(v) || !v->valuestring)
		return sx_dec_type_error(err, key, "string", v);
	rc = check_string(v, err);
	if (rc < 0) {
		sx_error_prefix(err, key);
		return rc;
	}
	*out = v->valuestring;
	return 0;
}

int sx_dec_strdup(const cJSON *obj, const char *key, char **out, struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(obj, key, &s, err);

	*out = NULL;
	if (rc < 0)
		return rc;
	*out = sx_strdup(s ? s : "");
	if (!*out)
		return sx_dec_oom(err);
	return 0;
}

int sx_dec_string_value(const cJSON *s, const char **out, struct sx_error *err)
{
	int rc;

	if (!cJSON_IsString(s) || !s->valuestring)
		return sx_error_set(err, SX_EINVAL, "expected string, got %s",
				    sx_dec_type_name(s));
	rc = check_string(s, err);
	if (rc < 0)
		return rc;
	*out = s->valuestring;
	return 0;
}

int sx_dec_intern_value(const cJSON *s, sx_str *out, struct sx_error *err)
{
	const char *v;
	int rc = sx_dec_string_value(s, &v, err);

	if (rc < 0)
		return rc;
	*out = sx_intern(v);
	if (*out == SX_STR_INVALID)
		return sx_error_set(err, SX_ETOOBIG, "string table full");
	return 0;
}

int sx_dec_intern(const cJSON *obj, const char *key, sx_str *out, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	int rc;

	*out = SX_STR_EMPTY;
	if (!v)
		return 0;
	rc = sx_dec_intern_value(v, out, err);
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

int sx_dec_bool(const cJSON *obj, const char *key, bool *out, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);

	*out = false;
	if (!v)
		return 0;
	if (!cJSON_IsBool(v))
		return sx_dec_type_error(err, key, "boolean", v);
	*out = cJSON_IsTrue(v);
	return 0;
}

int sx_dec_int64(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out,
		 bool *present, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);
	double d;

	*out = 0;
	if (present)
		*present = false;
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v))
		return sx_dec_type_error(err, key, "integer", v);
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d)) {
		sx_error_set(err, SX_EINVAL, "expected integer, got %g", d);
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	/* (double)INT64_MAX rounds up to 2^63, so compare strictly there. */
	if (d < (double)min || d > (double)max || d >= 9223372036854775808.0) {
		sx_error_set(err, SX_EINVAL, "integer %.0f out of range", d);
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	*out = (int64_t)d;
	if (present)
		*present = true;
	return 0;
}

int sx_dec_int32(const cJSON *obj, const char *key, int32_t *out, bool *present,
		 struct sx_error *err)
{
	int64_t v;
	int rc = sx_dec_int64(obj, key, INT32_MIN, INT32_MAX, &v, present, err);

	*out = (int32_t)v;
	return rc;
}

int sx_dec_time(const cJSON *obj, const char *key, int64_t *out, bool *present,
		struct sx_error *err)
{
	const char *s;
	int rc = sx_dec_string(obj, key, &s, err);

	*out = 0;
	if (present)
		*present = false;
	if (rc < 0 || !s)
		return rc;
	if (sx_parse_time(s, out) < 0) {
		sx_error_set(err, SX_EINVAL, "invalid time \"%.64s\"", s);
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
	if (present)
		*present = true;
	return 0;
}

static int intern_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_intern_value(j, elem, err);
}

int sx_dec_str_list(const cJSON *obj, const char *key, uint32_t *n, sx_str **out,
		    struct sx_error *err)
{
	int rc = sx_dec_items(obj, key, out, n, intern_item, NULL, err);

	if (rc < 0) { /* a failed list leaves nothing behind */
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

/* Orders labels by key id, then by position so that the last duplicate can
 * be kept (JSON allows duplicate keys; Go's decoder keeps the last). */
struct label_pos {
	struct sx_label l;
	uint32_t pos;
};

static int label_pos_cmp(const void *a, const void *b)
{
	const struct label_pos *x = a, *y = b;

	if (x->l.key != y->l.key)
		return x->l.key < y->l.key ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int labels_from_map(const cJSON *map, struct sx_labels *out, struct sx_error *err)
{
	uint32_t n = (uint32_t)cJSON_GetArraySize(map), i = 0, w = 0;
	struct label_pos *tmp = sx_calloc(n, sizeof(*tmp));
	const cJSON *it;
	int rc = 0;

	if (!tmp)
		return sx_dec_oom(err);
	cJSON_ArrayForEach(it, map) {
		if (!it->string) { /* only hand-built trees lack member names */
			rc = sx_error_set(err, SX_EINVAL, "member without a name");
			goto out_free;
		}
		if (strlen(it->string) > SX_DECODE_MAX_STRING) {
			rc = sx_error_set(err, SX_ETOOBIG, "key longer than %d bytes",
					  SX_DECODE_MAX_STRING);
			goto out_free;
		}
		tmp[i].l.key = sx_intern(it->string);
		if (tmp[i].l.key == SX_STR_INVALID) {
			rc = sx_error_set(err, SX_ETOOBIG, "string table full");
			goto out_free;
		}
		rc = sx_dec_intern_value(it, &tmp[i].l.value, err);
		if (rc < 0) {
			sx_error_prefix(err, it->string);
			goto out_free;
		}
		tmp[i].pos = i;
		i++;
	}
	qsort(tmp, n, sizeof(*tmp), label_pos_cmp);
	out->items = sx_calloc(n, sizeof(*out->items));
	if (!out->items) {
		rc = sx_dec_oom(err);
		goto out_free;
	}
	for (i = 0; i < n; i++) {
		if (i + 1 < n && tmp[i + 1].l.key == tmp[i].l.key)
			continue;
		out->items[w++] = tmp[i].l;
	}
	out->n = w;
out_free:
	free(tmp);
	return rc;
}

int sx_dec_labels(const cJSON *obj, const char *key, struct sx_labels *out, bool *present,
		  struct sx_error *err)
{
	const cJSON *map;
	int rc = sx_dec_object(obj, key, &map, err);

	out->n = 0;
	out->items = NULL;
	if (present)
		*present = map != NULL;
	if (rc < 0 || !map)
		return rc;
	rc = labels_from_map(map, out, err);
	if (rc < 0)
		sx_error_prefix(err, key);
	return rc;
}

int sx_dec_meta(const cJSON *obj, struct sx_meta *out, struct sx_error *err)
{
	const cJSON *md;
	int rc = sx_dec_object(obj, "metadata", &md, err);

	if (rc < 0)
		return rc;
	rc = sx_dec_strdup(md, "name", &out->name, err);
	if (rc == 0)
		rc = sx_dec_intern(md, "namespace", &out->ns, err);
	if (rc == 0)
		rc = sx_dec_strdup(md, "uid", &out->uid, err);
	if (rc == 0)
		rc = sx_dec_strdup(md, "resourceVersion", &out->resource_version, err);
	if (rc == 0)
		rc = sx_dec_time(md, "creationTimestamp", &out->creation_ts, NULL, err);
	if (rc == 0)
		rc = sx_dec_labels(md, "labels", &out->labels, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "metadata");
	return rc;
}

/* ---------- selectors ---------- */

static const char *const op_names[] = {
	[SX_OP_IN] = "In",
	[SX_OP_NOT_IN] = "NotIn",
	[SX_OP_EXISTS] = "Exists",
	[SX_OP_DOES_NOT_EXIST] = "DoesNotExist",
	[SX_OP_GT] = "Gt",
	[SX_OP_LT] = "Lt",
};

/* One {key, operator, values} expression into elem (struct sx_requirement);
 * *(bool *)node allows the node selector operators Gt/Lt. */
static int decode_requirement(const cJSON *j, void *elem, void *node, struct sx_error *err)
{
	struct sx_requirement *req = elem;
	int nops = *(bool *)node ? SX_OP_LT + 1 : SX_OP_DOES_NOT_EXIST + 1;
	const char *op;
	int rc = sx_dec_intern(j, "key", &req->key, err);

	if (rc < 0)
		return rc;
	rc = sx_dec_string(j, "operator", &op, err);
	if (rc < 0)
		return rc;
	for (req->op = 0; op && req->op < nops; req->op++)
		if (strcmp(op, op_names[req->op]) == 0)
			break;
	if (!op || req->op == nops) {
		sx_error_set(err, SX_EINVAL, "unknown operator \"%.64s\"", op ? op : "");
		sx_error_prefix(err, "operator");
		return SX_EINVAL;
	}
	return sx_dec_str_list(j, "values", &req->nvalues, &req->values, err);
}

/* Appends the requirements of array obj[key] to *reqs (count *n). */
static int decode_requirements(const cJSON *obj, const char *key, bool node,
			       struct sx_requirement **reqs, uint32_t *n, struct sx_error *err)
{
	const cJSON *arr;
	uint32_t cnt, old = *n;
	int rc = sx_dec_array(obj, key, &arr, &cnt, err);

	if (rc < 0 || !arr || cnt == 0)
		return rc;
	if (old + cnt > SX_DECODE_MAX_ITEMS) {
		sx_error_set(err, SX_ETOOBIG, "more than %d requirements", SX_DECODE_MAX_ITEMS);
		sx_error_prefix(err, key);
		return SX_ETOOBIG;
	}
	struct sx_requirement *grown = realloc(*reqs, (old + cnt) * sizeof(**reqs));
	if (!grown)
		return sx_dec_oom(err);
	*reqs = grown;
	memset(grown + old, 0, cnt * sizeof(*grown));
	*n = old + cnt; /* counted before decoding so that a free sees them */
	return sx_dec_each_object(arr, key, grown + old, sizeof(*grown), decode_requirement, &node,
				  err);
}

/* matchLabels into SX_OP_EQUALS requirements. */
static int decode_match_labels(const cJSON *j, struct sx_label_selector *sel, struct sx_error *err)
{
	struct sx_labels ml;
	int rc = sx_dec_labels(j, "matchLabels", &ml, NULL, err);

	if (rc < 0 || ml.n == 0) {
		free(ml.items);
		return rc;
	}
	sel->reqs = sx_calloc(ml.n, sizeof(*sel->reqs));
	if (!sel->reqs) {
		free(ml.items);
		return sx_dec_oom(err);
	}
	for (uint32_t i = 0; i < ml.n; i++) {
		struct sx_requirement *r = &sel->reqs[sel->nreqs++];

		r->key = ml.items[i].key;
		r->op = SX_OP_EQUALS;
		r->values = sx_calloc(1, sizeof(sx_str));
		if (!r->values) {
			free(ml.items);
			return sx_dec_oom(err);
		}
		r->nvalues = 1;
		r->values[0] = ml.items[i].value;
	}
	free(ml.items);
	return 0;
}

/* A present selector value j (non-null) into a new selector. */
static struct sx_label_selector *decode_selector_value(const cJSON *j, struct sx_error *err)
{
	struct sx_label_selector *sel;

	sel = sx_dec_new(j, sizeof(*sel), err);
	if (!sel)
		return NULL;
	if (decode_match_labels(j, sel, err) < 0 ||
	    decode_requirements(j, "matchExpressions", false, &sel->reqs, &sel->nreqs, err) < 0) {
		sx_label_selector_free(sel);
		return NULL;
	}
	return sel;
}

struct sx_label_selector *sx_decode_label_selector(const cJSON *json, struct sx_error *err)
{
	struct sx_error tmp;

	if (!err)
		err = &tmp;
	if (!json || cJSON_IsNull(json)) {
		sx_error_set(err, SX_EINVAL, "expected object, got null");
		return NULL;
	}
	return decode_selector_value(json, err);
}

int sx_dec_selector_field(const cJSON *obj, const char *key, struct sx_label_selector **out,
			  struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	*out = decode_selector_value(v, err);
	if (!*out) {
		sx_error_prefix(err, key);
		return err ? err->code : SX_EINVAL;
	}
	return 0;
}

int sx_dec_node_selector_term(const cJSON *j, struct sx_node_selector_term *term,
			      struct sx_error *err)
{
	int rc;

	if (!cJSON_IsObject(j))
		return sx_dec_not_object(err, j);
	rc = decode_requirements(j, "matchExpressions", true, &term->exprs, &term->nexprs, err);
	if (rc == 0)
		rc = decode_requirements(j, "matchFields", true, &term->fields, &term->nfields,
					 err);
	return rc;
}

static int node_selector_term_item(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_node_selector_term(j, elem, err);
}

struct sx_node_selector *sx_dec_node_selector(const cJSON *j, struct sx_error *err)
{
	struct sx_node_selector *sel;

	sel = sx_dec_new(j, sizeof(*sel), err);
	if (!sel)
		return NULL;
	if (sx_dec_objects(j, "nodeSelectorTerms", &sel->terms, &sel->nterms,
			   node_selector_term_item, NULL, err) < 0) {
		sx_node_selector_free(sel);
		return NULL;
	}
	return sel;
}

/* A v1.PreferredSchedulingTerm into elem. */
static int decode_preferred_term(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct sx_preferred_scheduling_term *t = elem;
	int rc = sx_dec_int32(j, "weight", &t->weight, NULL, err);

	if (rc == 0)
		rc = sx_dec_sub(j, "preference", node_selector_term_item, &t->preference, NULL,
				err);
	return rc;
}

struct sx_node_affinity *sx_decode_node_affinity(const cJSON *json, struct sx_error *err)
{
	static const char req_key[] = "requiredDuringSchedulingIgnoredDuringExecution";
	struct sx_node_affinity *na;
	const cJSON *req;
	struct sx_error tmp;

	if (!err)
		err = &tmp;
	na = sx_dec_new(json, sizeof(*na), err);
	if (!na)
		return NULL;
	req = sx_dec_get(json, req_key);
	if (req) {
		na->required = sx_dec_node_selector(req, err);
		if (!na->required) {
			sx_error_prefix(err, req_key);
			goto out_free;
		}
	}
	if (sx_dec_objects(json, "preferredDuringSchedulingIgnoredDuringExecution",
			   &na->preferred, &na->npreferred, decode_preferred_term, NULL, err) < 0)
		goto out_free;
	return na;
out_free:
	sx_node_affinity_free(na);
	return NULL;
}

/* ---------- resource lists ---------- */

void sx_rlist_clear(struct sx_rlist *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* Index of the first entry with name >= name. */
static uint32_t rlist_lower(const struct sx_rlist *l, sx_str name)
{
	uint32_t lo = 0, hi = l->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (l->items[mid].name < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct sx_rentry *sx_rlist_find(const struct sx_rlist *l, sx_str name)
{
	uint32_t i = rlist_lower(l, name);

	return i < l->n && l->items[i].name == name ? &l->items[i] : NULL;
}

int sx_rlist_apply(struct sx_rlist *l, sx_str name, sx_nano q, int op)
{
	uint32_t i = rlist_lower(l, name);

	if (i < l->n && l->items[i].name == name) {
		struct sx_rentry *e = &l->items[i];

		if (op == SX_RL_ADD)
			e->q += q;
		else if (op == SX_RL_SET || q > e->q)
			e->q = q;
		return 0;
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 8;
		struct sx_rentry *grown = realloc(l->items, cap * sizeof(*grown));

		if (!grown)
			return SX_ENOMEM;
		l->items = grown;
		l->cap = cap;
	}
	memmove(&l->items[i + 1], &l->items[i], (l->n - i) * sizeof(*l->items));
	/* A new key under MAX starts from an implicit zero. */
	l->items[i].name = name;
	l->items[i].q = (op == SX_RL_MAX && q < 0) ? 0 : q;
	l->n++;
	return 0;
}

int sx_rlist_merge(struct sx_rlist *dst, const struct sx_rlist *src, int op)
{
	for (uint32_t i = 0; i < src->n; i++)
		if (sx_rlist_apply(dst, src->items[i].name, src->items[i].q, op) < 0)
			return SX_ENOMEM;
	return 0;
}

int sx_rlist_copy(struct sx_rlist *dst, const struct sx_rlist *src)
{
	sx_rlist_clear(dst);
	return sx_rlist_merge(dst, src, SX_RL_SET);
}

int sx_dec_quantity_value(const cJSON *v, bool nonneg, sx_nano *out, struct sx_error *err)
{
	char numbuf[64];
	const char *s;
	size_t len;
	int rc;

	if (cJSON_IsString(v) && v->valuestring) {
		s = v->valuestring;
		len = strlen(s);
		if (len > SX_DECODE_MAX_STRING)
			return sx_error_set(err, SX_ETOOBIG, "string longer than %d bytes",
					    SX_DECODE_MAX_STRING);
		/* Kubernetes trims surrounding whitespace before parsing. */
		while (len && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
			s++, len--;
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
			       s[len - 1] == '\r'))
			len--;
	} else if (cJSON_IsNumber(v)) {
		/* cJSON kept only the double: print it back the way cJSON
		 * would, shortest form that round-trips. */
		snprintf(numbuf, sizeof(numbuf), "%.15g", v->valuedouble);
		if (strtod(numbuf, NULL) != v->valuedouble)
			snprintf(numbuf, sizeof(numbuf), "%.17g", v->valuedouble);
		s = numbuf;
		len = strlen(numbuf);
	} else {
		return sx_error_set(err, SX_EINVAL, "expected quantity (string or number), got %s",
				    sx_dec_type_name(v));
	}
	rc = sx_quantity_parse(s, len, out);
	if (rc == SX_ETOOBIG)
		return sx_error_set(err, SX_ETOOBIG, "quantity \"%.*s\" out of range",
				    (int)(len > 64 ? 64 : len), s);
	if (rc < 0)
		return sx_error_set(err, SX_EINVAL, "invalid quantity \"%.*s\"",
				    (int)(len > 64 ? 64 : len), s);
	if (nonneg && *out < 0)
		return sx_error_set(err, SX_EINVAL, "negative quantity \"%.*s\"",
				    (int)(len > 64 ? 64 : len), s);
	return 0;
}

int sx_dec_rlist(const cJSON *obj, const char *key, bool nonneg, struct sx_rlist *l,
		 bool *present, struct sx_error *err)
{
	const cJSON *map, *it;
	int rc = sx_dec_object(obj, key, &map, err);

	sx_rlist_clear(l);
	if (present)
		*present = map != NULL;
	if (rc < 0 || !map)
		return rc;
	cJSON_ArrayForEach(it, map) {
		sx_nano q;
		sx_str name;

		if (!it->string)
			rc = sx_error_set(err, SX_EINVAL, "member without a name");
		else if (strlen(it->string) > SX_DECODE_MAX_STRING)
			rc = sx_error_set(err, SX_ETOOBIG, "key longer than %d bytes",
					  SX_DECODE_MAX_STRING);
		else if ((name = sx_intern(it->string)) == SX_STR_INVALID)
			rc = sx_error_set(err, SX_ETOOBIG, "string table full");
		else if ((rc = sx_dec_quantity_value(it, nonneg, &q, err)) < 0)
			sx_error_prefix(err, it->string);
		else if (sx_rlist_apply(l, name, q, SX_RL_SET) < 0)
			rc = sx_dec_oom(err);
		if (rc < 0) {
			sx_error_prefix(err, key);
			sx_rlist_clear(l);
			return rc;
		}
	}
	return 0;
}

int sx_rlist_to_resources(const struct sx_rlist *l, struct sx_resources *out,
			  struct sx_error *err)
{
	uint32_t nscalar = 0;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < l->n; i++) {
		sx_str name = l->items[i].name;

		if (name != SX_S_CPU && name != SX_S_MEMORY && name != SX_S_EPHEMERAL_STORAGE &&
		    name != SX_S_PODS)
			nscalar++;
	}
	if (nscalar) {
		out->scalar = sx_calloc(nscalar, sizeof(*out->scalar));
		if (!out->scalar)
			return sx_dec_oom(err);
	}
	for (uint32_t i = 0; i < l->n; i++) {
		const struct sx_rentry *e = &l->items[i];
		int64_t *dst;
		int rc;

		if (e->name == SX_S_CPU)
			dst = &out->milli_cpu;
		else if (e->name == SX_S_MEMORY)
			dst = &out->memory;
		else if (e->name == SX_S_EPHEMERAL_STORAGE)
			dst = &out->ephemeral_storage;
		else if (e->name == SX_S_PODS)
			dst = &out->pods;
		else {
			out->scalar[out->nscalar].name = e->name;
			dst = &out->scalar[out->nscalar++].value;
		}
		rc = e->name == SX_S_CPU ? sx_quantity_milli(e->q, dst)
					 : sx_quantity_value(e->q, dst);
		if (rc < 0) {
			free(out->scalar);
			memset(out, 0, sizeof(*out));
			sx_error_set(err, SX_ETOOBIG, "quantity out of range");
			sx_error_prefix(err, sx_str_get(e->name));
			return SX_ETOOBIG;
		}
	}
	return 0;
}

/* ---------- time ---------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

/* Reads exactly n digits at *p. */
static bool digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

static bool expect(const char **p, const char *set)
{
	if (**p == '\0' || !strchr(set, **p))
		return false;
	(*p)++;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dm[m - 1];
}

int sx_parse_time(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p = s;

	if (!s || !digits(&p, 4, &y) || !expect(&p, "-") || !digits(&p, 2, &mo) ||
	    !expect(&p, "-") || !digits(&p, 2, &d) || !expect(&p, "Tt") || !digits(&p, 2, &h) ||
	    !expect(&p, ":") || !digits(&p, 2, &mi) || !expect(&p, ":") || !digits(&p, 2, &sec))
		return SX_EINVAL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return SX_EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (!digits(&p, 2, &oh) || !expect(&p, ":") || !digits(&p, 2, &om))
			return SX_EINVAL;
	} else {
		return SX_EINVAL;
	}
	if (*p != '\0' || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
	    mi > 59 || sec > 59 || oh > 23 || om > 59)
		return SX_EINVAL;
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec -
	       sign * (oh * 3600 + om * 60);
	return 0;
}

/* ---------- dispatch ---------- */

int sx_decode_object(const cJSON *json, const char *kind, struct sx_object *out,
		     struct sx_error *err)
{
	struct sx_error tmp;
	enum sx_kind k;

	if (!err)
		err = &tmp;
	out->kind = SX_KIND_UNKNOWN;
	out->obj = NULL;
	if (!cJSON_IsObject(json))
		return sx_dec_not_object(err, json);
	if (!kind) {
		int rc = sx_dec_string(json, "kind", &kind, err);

		if (rc < 0)
			return rc;
		if (!kind) {
			sx_error_set(err, SX_EINVAL, "missing kind");
			sx_error_prefix(err, "kind");
			return SX_EINVAL;
		}
	}
	k = sx_kind_from_name(kind);
	switch (k) {
	case SX_KIND_POD:
		out->obj = sx_decode_pod(json, err);
		break;
	case SX_KIND_NODE:
		out->obj = sx_decode_node(json, err);
		break;
	case SX_KIND_PV:
		out->obj = sx_decode_pv(json, err);
		break;
	case SX_KIND_PVC:
		out->obj = sx_decode_pvc(json, err);
		break;
	case SX_KIND_CSI_NODE:
		out->obj = sx_decode_csi_node(json, err);
		break;
	case SX_KIND_DEVICE_CLASS: case SX_KIND_RESOURCE_SLICE:
	case SX_KIND_RESOURCE_CLAIM: case SX_KIND_CLAIM_TEMPLATE:
		out->obj = sx_decode_dra(json, k, err);
		break;
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		return sx_error_set(err, SX_ENOENT, "unknown kind %.64s", kind);
	default:
		out->obj = sx_decode_generic(json, k, err);
		break;
	}
	if (!out->obj)
		return err->code < 0 ? err->code : SX_EINVAL;
	out->kind = k;
	return 0;
}
