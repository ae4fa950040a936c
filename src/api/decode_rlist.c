/* Resource lists in exact nano units: arithmetic and the decoding of
 * quantities and resource maps (decode_internal.h). */
#include "schedext/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "decode_util.h"
#include "schedext/quantity.h"
#include "schedext/vec.h"

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
	if (sx_vec_reserve(l->items, l->cap, l->n + 1, 8) < 0)
		return SX_ENOMEM;
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

int sx_dec_rlist(const cJSON *obj, const char *key, bool nonneg, struct sx_rlist *l, bool *present,
		 struct sx_error *err)
{
	const cJSON *map, *it;
	int rc = sx_dec_object(obj, key, &map, err);

	sx_rlist_clear(l);
	if (present)
		*present = map != NULL;
	if (rc < 0 || !map)
		return rc;
	cJSON_ArrayForEach(it, map)
	{
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

int sx_rlist_to_resources(const struct sx_rlist *l, struct sx_resources *out, struct sx_error *err)
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
