/* Decoding building blocks (the bottom of the decoders): typed field
 * readers with error paths, the shared decoder shapes of decode_util.h,
 * metadata, and RFC 3339 times. Calls nothing above it; the kind
 * dispatcher is decode_kind.c, the per-kind decoders decode_<kind>.c,
 * selectors decode_selector.c, resource lists decode_rlist.c.
 */
#include "schedext/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/quantity.h"

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

	cJSON_ArrayForEach(it, arr)
	{
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
		return sx_error_set(err, SX_EINVAL, "expected string, got %s", sx_dec_type_name(s));
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

int sx_dec_int64_value(const cJSON *v, int64_t min, int64_t max, int64_t *out, struct sx_error *err)
{
	double d;

	*out = 0;
	if (!cJSON_IsNumber(v))
		return sx_error_set(err, SX_EINVAL, "expected integer, got %s",
				    sx_dec_type_name(v));
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d))
		return sx_error_set(err, SX_EINVAL, "expected integer, got %g", d);
	/* (double)INT64_MAX rounds up to 2^63, so compare strictly there. */
	if (d < (double)min || d > (double)max || d >= 9223372036854775808.0)
		return sx_error_set(err, SX_EINVAL, "integer %.0f out of range", d);
	*out = (int64_t)d;
	return 0;
}

int sx_dec_int64(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t *out,
		 bool *present, struct sx_error *err)
{
	const cJSON *v = sx_dec_get(obj, key);

	*out = 0;
	if (present)
		*present = false;
	if (!v)
		return 0;
	if (sx_dec_int64_value(v, min, max, out, err) < 0) {
		sx_error_prefix(err, key);
		return SX_EINVAL;
	}
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
	cJSON_ArrayForEach(it, map)
	{
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

/* name, uid and resourceVersion ("" when absent) in one block at name
 * (sx_meta_clear frees it): a pod's three short strings cost one
 * allocation instead of three. Checks and messages as sx_dec_strdup, in
 * the same order, namespace between name and uid. */
static int meta_strings(const cJSON *md, struct sx_meta *out, struct sx_error *err)
{
	const char *name, *uid = NULL, *rv = NULL;
	size_t ln, lu, lr;
	int rc = sx_dec_string(md, "name", &name, err);

	if (rc == 0)
		rc = sx_dec_intern(md, "namespace", &out->ns, err);
	if (rc == 0)
		rc = sx_dec_string(md, "uid", &uid, err);
	if (rc == 0)
		rc = sx_dec_string(md, "resourceVersion", &rv, err);
	if (rc < 0)
		return rc;
	name = name ? name : "";
	uid = uid ? uid : "";
	rv = rv ? rv : "";
	ln = strlen(name) + 1;
	lu = strlen(uid) + 1;
	lr = strlen(rv) + 1;
	out->name = malloc(ln + lu + lr);
	if (!out->name)
		return sx_dec_oom(err);
	out->uid = out->name + ln;
	out->resource_version = out->uid + lu;
	memcpy(out->name, name, ln);
	memcpy(out->uid, uid, lu);
	memcpy(out->resource_version, rv, lr);
	return 0;
}

int sx_dec_meta(const cJSON *obj, struct sx_meta *out, struct sx_error *err)
{
	const cJSON *md;
	int rc = sx_dec_object(obj, "metadata", &md, err);

	if (rc < 0)
		return rc;
	rc = meta_strings(md, out, err);
	if (rc == 0)
		rc = sx_dec_time(md, "creationTimestamp", &out->creation_ts, NULL, err);
	if (rc == 0)
		rc = sx_dec_labels(md, "labels", &out->labels, NULL, err);
	if (rc < 0)
		sx_error_prefix(err, "metadata");
	return rc;
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
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
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

const char *sx_json_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

bool sx_kind_is_list(const char *kind)
{
	size_t n = kind ? strlen(kind) : 0;

	return n >= 4 && strcmp(kind + n - 4, "List") == 0;
}
