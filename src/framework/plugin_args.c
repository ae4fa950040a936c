/* Plugin arguments: the shared field-error collector and the reader of
 * declarative scalar-field tables (plugin_args.h). */
#include "schedext/plugin_args.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
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

static void store(const struct sx_arg *a, void *dst, int64_t v)
{
	char *p = (char *)dst + a->offset;

	if (a->type == SX_ARG_BOOL)
		*(bool *)p = v != 0;
	else
		*(int32_t *)p = (int32_t)v;
}

int sx_args_read(const cJSON *json, const struct sx_arg *table, size_t n, void *dst,
		 struct sx_arg_errors *e, struct sx_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct sx_arg *a = &table[i];
		const cJSON *v = cJSON_IsObject(json) ? cJSON_GetObjectItemCaseSensitive(json, a->name)
						      : NULL;
		int64_t x;

		store(a, dst, a->def);
		if (!v || cJSON_IsNull(v))
			continue;
		if (a->type == SX_ARG_BOOL ? !cJSON_IsBool(v) : !integral(v, a->type == SX_ARG_INT32))
			return sx_error_set(err, SX_EINVAL, "%s: Invalid value: must be %s", a->name,
					    a->type_desc);
		x = a->type == SX_ARG_BOOL ? cJSON_IsTrue(v) : (int64_t)v->valuedouble;
		store(a, dst, x);
		if (a->type != SX_ARG_BOOL && (x < a->min || x > a->max))
			sx_arg_errors_add(e, a->name, "Invalid value: %lld: not in valid range %s",
					  (long long)x, a->range_desc);
	}
	return 0;
}
