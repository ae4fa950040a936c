/* Plugin arguments: the shared field-error collector and the reader of
 * declarative field tables (plugin_args.h). */
#include "schedext/plugin_args.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sx_arg_errors_add(struct sx_arg_errors *e, const char *path, const char *fmt, ...)
{
	size_t len = strlen(e->all);
	va_list ap;

	if (e->n++ && len + 2 < sizeof(e->all)) {
		memcpy(e->all + len, ", ", 3);
		len += 2;
	}
	if (path && path[0] && len < sizeof(e->all))
		len += (size_t)snprintf(e->all + len, sizeof(e->all) - len, "%s: ", path);
	if (len >= sizeof(e->all))
		return;
	va_start(ap, fmt);
	vsnprintf(e->all + len, sizeof(e->all) - len, fmt, ap);
	va_end(ap);
}

int sx_arg_errors_finish(const struct sx_arg_errors *e, struct sx_error *err)
{
	if (e->n == 0)
		return 0;
	return sx_error_set(err, SX_EINVAL, e->n > 1 ? "[%s]" : "%s", e->all);
}

/* An integral JSON number (within int32 when narrow). */
static bool integral(const cJSON *v, bool narrow)
{
	if (!cJSON_IsNumber(v) || !sx_double_is_int64(v->valuedouble))
		return false;
	return !narrow || (v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX);
}

static void store(const struct sx_arg *a, void *field, int64_t v)
{
	if (a->type == SX_ARG_BOOL)
		*(bool *)field = v != 0;
	else if (a->type == SX_ARG_INT64)
		*(int64_t *)field = v;
	else
		*(int32_t *)field = (int32_t)v;
}

/* "<path>: <type_err>", or the scalar kinds' wording without one. */
static int type_error(const struct sx_arg *a, const char *path, struct sx_arg_errors *e,
		      struct sx_error *err)
{
	if (a->flags & SX_ARG_SOFT) {
		sx_arg_errors_add(e, path, "%s", a->type_err);
		return 0;
	}
	if (a->type_err) {
		sx_error_set(err, SX_EINVAL, "%s", a->type_err);
		sx_error_prefix(err, path);
		return SX_EINVAL;
	}
	return sx_error_set(err, SX_EINVAL, "%s: Invalid value: must be %s", path, a->type_desc);
}

/* Does v have the JSON type a reads? */
static bool type_ok(const struct sx_arg *a, const cJSON *v)
{
	switch (a->type) {
	case SX_ARG_INT:
	case SX_ARG_INT64:
		return integral(v, false);
	case SX_ARG_INT32:
		return (a->flags & SX_ARG_TRUNCATE) ? cJSON_IsNumber(v) : integral(v, true);
	case SX_ARG_BOOL:
		return cJSON_IsBool(v);
	case SX_ARG_ENUM:
	case SX_ARG_STRING:
		return cJSON_IsString(v);
	case SX_ARG_OBJECT:
		return cJSON_IsObject(v);
	case SX_ARG_LIST:
		return cJSON_IsArray(v);
	case SX_ARG_DECODE:
	case SX_ARG_GIVEN:
		return true;
	}
	return false;
}

static int read_field(const struct sx_arg *a, const cJSON *v, void *field, const char *path,
		      struct sx_arg_errors *e, struct sx_error *err);

static int read_table(const cJSON *json, const struct sx_arg *table, size_t n, void *dst,
		      const char *path, struct sx_arg_errors *e, struct sx_error *err)
{
	char sub[256];
	int rc;

	for (size_t i = 0; i < n; i++) {
		const struct sx_arg *a = &table[i];
		const cJSON *v = cJSON_IsObject(json)
					 ? cJSON_GetObjectItemCaseSensitive(json, a->name)
					 : NULL;

		if (path[0])
			snprintf(sub, sizeof(sub), "%s.%s", path, a->name);
		else
			snprintf(sub, sizeof(sub), "%s", a->name);
		rc = read_field(a, v, (char *)dst + a->offset, sub, e, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int read_enum(const struct sx_arg *a, const char *s, void *field, const char *path,
		     struct sx_arg_errors *e)
{
	char supported[256] = "";
	size_t len = 0;
	int i;

	for (i = 0; a->values[i]; i++)
		if (strcmp(s, a->values[i]) == 0) {
			*(int32_t *)field = i;
			return 0;
		}
	*(int32_t *)field = SX_ARG_ENUM_BAD;
	if (a->flags & SX_ARG_QUIET)
		return 0;
	for (i = 0; a->values[i] && len < sizeof(supported); i++)
		len += (size_t)snprintf(supported + len, sizeof(supported) - len, "%s\"%s\"",
					i ? ", " : "", a->values[i]);
	sx_arg_errors_add(e, path, "Unsupported value: \"%.*s\": supported values: %s",
			  a->max > 0 ? (int)a->max : INT_MAX, s, supported);
	return 0;
}

/* A number truncated toward zero into int32 (out of range: INT32_MIN). */
static int64_t truncated(double d)
{
	if (!(d > (double)INT32_MIN - 1 && d < (double)INT32_MAX + 1))
		return INT32_MIN;
	return (int64_t)d;
}

/* The scalar defaults of an object's fields (a list element before it is
 * read, or when it is not an object). */
static void store_defaults(const struct sx_arg *table, size_t n, void *dst)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].type <= SX_ARG_ENUM)
			store(&table[i], (char *)dst + table[i].offset, table[i].def);
}

static int read_string(const struct sx_arg *a, const char *s, void *field, const char *path,
		       struct sx_arg_errors *e, struct sx_error *err)
{
	char **dst = field;

	if (a->max > 0 && strlen(s) > (size_t)a->max)
		return SX_EINVAL; /* the caller words it as a type error */
	if (a->check)
		a->check(s, path, e);
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : sx_error_set(err, SX_ENOMEM, "out of memory");
}

static int read_list(const struct sx_arg *a, const cJSON *v, void *field, const char *path,
		     struct sx_arg_errors *e, struct sx_error *err)
{
	const struct sx_arg *el = &a->sub[0];
	uint32_t *count = (uint32_t *)((char *)field - a->offset + a->count);
	int size = cJSON_GetArraySize(v);
	char sub[256];
	const cJSON *it;
	char *arr;
	int rc, i = 0;

	if (a->max > 0 && size > a->max && (a->flags & SX_ARG_AT_MOST))
		size = (int)a->max;
	else if (a->max > 0 && size > a->max) {
		if (a->flags & SX_ARG_TOO_MANY_IS_TYPE)
			return type_error(a, path, e, err);
		sx_error_set(err, SX_EINVAL, "Too many: %d: must have at most %lld items", size,
			     (long long)a->max);
		sx_error_prefix(err, path);
		return SX_EINVAL;
	}
	arr = sx_calloc((size_t)size + 1, a->elem_size);
	if (!arr)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	*(void **)field = arr;
	*count = 0;
	for (it = v->child; it && i < size; it = it->next) {
		char *elem = arr + (size_t)i * a->elem_size;

		snprintf(sub, sizeof(sub), "%s[%d]", path, i);
		if (el->type == SX_ARG_OBJECT)
			store_defaults(el->sub, el->nsub, elem);
		rc = read_field(el, it, elem, sub, e, err);
		*count = (uint32_t)++i;
		if (rc == SX_EINVAL && (a->flags & SX_ARG_WHOLE))
			return type_error(el, sub, e, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* One field: v is its value (NULL when absent), field where it goes. */
static int read_field(const struct sx_arg *a, const cJSON *v, void *field, const char *path,
		      struct sx_arg_errors *e, struct sx_error *err)
{
	bool absent = !v || (cJSON_IsNull(v) && !(a->flags & SX_ARG_NULL_IS_VALUE));
	int64_t x;
	int rc;

	bool quiet = a->flags & SX_ARG_QUIET;

	if (a->type <= SX_ARG_ENUM && (a->type != SX_ARG_ENUM || a->def >= 0 || quiet))
		store(a, field, a->def);
	if (absent && (a->flags & SX_ARG_REQUIRED))
		return type_error(a, path, e, err);
	if (absent && a->type == SX_ARG_ENUM && a->def < 0 && !quiet)
		return read_enum(a, "", field, path, e);
	if (absent)
		return 0;
	if (!type_ok(a, v) && a->type == SX_ARG_ENUM && quiet)
		store(a, field, SX_ARG_ENUM_BAD);
	if (!type_ok(a, v))
		return (a->flags & (SX_ARG_LENIENT | SX_ARG_QUIET)) ? 0
								    : type_error(a, path, e, err);
	switch (a->type) {
	case SX_ARG_INT:
	case SX_ARG_INT32:
	case SX_ARG_INT64:
	case SX_ARG_BOOL:
		if (a->type == SX_ARG_BOOL)
			x = cJSON_IsTrue(v);
		else if (a->flags & SX_ARG_TRUNCATE)
			x = truncated(v->valuedouble);
		else
			x = (int64_t)v->valuedouble;
		store(a, field, x);
		if (a->type != SX_ARG_BOOL && (x < a->min || x > a->max))
			sx_arg_errors_add(e, path, "Invalid value: %lld: not in valid range %s",
					  (long long)x, a->range_desc);
		return 0;
	case SX_ARG_ENUM:
		return read_enum(a, v->valuestring, field, path, e);
	case SX_ARG_STRING:
		rc = read_string(a, v->valuestring, field, path, e, err);
		return rc == SX_EINVAL ? type_error(a, path, e, err) : rc;
	case SX_ARG_OBJECT:
		if (a->flags & SX_ARG_PRESENCE)
			*(bool *)((char *)field - a->offset + a->count) = true;
		return read_table(v, a->sub, a->nsub, field, path, e, err);
	case SX_ARG_LIST:
		return read_list(a, v, field, path, e, err);
	case SX_ARG_DECODE:
		rc = a->decode(v, field, err);
		if (rc)
			sx_error_prefix(err, path);
		return rc;
	case SX_ARG_GIVEN:
		*(bool *)field = true;
		return 0;
	}
	return 0;
}

int sx_args_read(const cJSON *json, const struct sx_arg *table, size_t n, void *dst,
		 struct sx_arg_errors *e, struct sx_error *err)
{
	return read_table(json, table, n, dst, "", e, err);
}

static void free_field(const struct sx_arg *a, void *field)
{
	char *arr;
	uint32_t n;

	switch (a->type) {
	case SX_ARG_STRING:
		free(*(char **)field);
		*(char **)field = NULL;
		break;
	case SX_ARG_OBJECT:
		sx_args_free(a->sub, a->nsub, field);
		break;
	case SX_ARG_LIST:
		arr = *(char **)field;
		n = *(uint32_t *)((char *)field - a->offset + a->count);
		for (uint32_t i = 0; arr && i < n; i++)
			free_field(&a->sub[0], arr + (size_t)i * a->elem_size);
		free(arr);
		*(char **)field = NULL;
		*(uint32_t *)((char *)field - a->offset + a->count) = 0;
		break;
	case SX_ARG_DECODE:
		if (a->release)
			a->release(field);
		break;
	default:
		break;
	}
}

void sx_args_free(const struct sx_arg *table, size_t n, void *dst)
{
	for (size_t i = 0; i < n; i++)
		free_field(&table[i], (char *)dst + table[i].offset);
}

char *sx_args_raw(const cJSON *json, const char *name)
{
	const cJSON *v = cJSON_IsObject(json) ? cJSON_GetObjectItemCaseSensitive(json, name) : NULL;

	return v && !cJSON_IsNull(v) ? cJSON_PrintUnformatted(v) : NULL;
}

bool sx_args_is_object(const cJSON *json, const char *kind, struct sx_error *err)
{
	if (!json || cJSON_IsNull(json) || cJSON_IsObject(json))
		return true;
	sx_error_set(err, SX_EINVAL, "%s must be an object", kind);
	return false;
}
