/* Helpers for direct plugin tests: build a snapshot from JSON literals
 * through the real decoder and cache, and call plugin hooks with a zeroed
 * cycle state. Header-only (static) so each test binary stays one file. */
#ifndef SCHEDEXT_TEST_PLUGIN_UTIL_H
#define SCHEDEXT_TEST_PLUGIN_UTIL_H

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/intern.h"
#include "schedext/plugin.h"
#include "schedext/status.h"

/* A pod decoded from JSON (refcount 1, caller unrefs); NULL + failed CHECK
 * on bad input. */
static inline struct sx_pod *tu_pod(const char *json)
{
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);
	struct sx_pod *pod;

	sx_intern_init();
	CHECK(j != NULL);
	pod = j ? sx_decode_pod(j, &err) : NULL;
	if (!pod)
		sx_test_fail(__FILE__, __LINE__, "decode pod: %s: %s", err.path, err.msg);
	cJSON_Delete(j);
	return pod;
}

/* Adds an object of `kind` ("Node", "Pod") from JSON to the cache. */
static inline void tu_add(struct sx_cache *c, const char *kind, const char *json)
{
	struct sx_error err = {0};
	struct sx_object obj = {0};
	cJSON *j = cJSON_Parse(json);

	sx_intern_init();
	CHECK(j != NULL);
	if (!j)
		return;
	if (sx_decode_object(j, kind, &obj, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "decode %s: %s: %s", kind, err.path, err.msg);
	else
		CHECK_INT(sx_cache_upsert(c, &obj), 0);
	cJSON_Delete(j);
}

/* The NodeInfo named `name` in snap (NULL + failed CHECK when absent). */
static inline const struct sx_node_info *tu_ni(const struct sx_snapshot *snap, const char *name)
{
	int i = sx_snapshot_find(snap, sx_intern(name));

	CHECK(i >= 0);
	return i >= 0 ? snap->nodes[i] : NULL;
}

/* The status's code and first reason as "Code: reason" ("Success" for NULL)
 * into buf; frees the status. */
static inline const char *tu_status(struct sx_status *st, char *buf, size_t len)
{
	if (!st)
		snprintf(buf, len, "Success");
	else
		snprintf(buf, len, "%s%s%s", sx_code_name(st->code), st->nreasons ? ": " : "",
			 st->nreasons ? st->reasons[0] : "");
	sx_status_free(st);
	return buf;
}

#endif
