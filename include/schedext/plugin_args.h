/* Plugin arguments: a declarative table of scalar fields read by one shared
 * routine (in the spirit of nginx's ngx_command_t), and the collector of
 * field errors every plugin's validation uses, so that all plugins word
 * their argument errors alike, as upstream's field.ErrorList does:
 * "path: detail" for one, "[path: detail, path: detail]" for several.
 * Implemented in src/framework/plugin_args.c. Thread-safe (no state).
 */
#ifndef SCHEDEXT_PLUGIN_ARGS_H
#define SCHEDEXT_PLUGIN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"

struct cJSON;

/* ---------- field errors ---------- */

struct sx_arg_errors {
	unsigned n;
	char all[512]; /* "path: detail" entries joined by ", " (cut at 511 bytes) */
};

/* Adds "path: <fmt...>" (path NULL or "": just the detail). */
void sx_arg_errors_add(struct sx_arg_errors *e, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 0 when no error was added; else SX_EINVAL with err's message the one
 * entry, or every entry in brackets. */
int sx_arg_errors_finish(const struct sx_arg_errors *e, struct sx_error *err);

/* ---------- declarative scalar fields ---------- */

enum sx_arg_type {
	SX_ARG_INT,   /* int32_t: an integral number, then checked against [min, max] */
	SX_ARG_INT32, /* int32_t: an integral number within int32 (a type error otherwise) */
	SX_ARG_BOOL,  /* bool */
};

/* One field of an args object. */
struct sx_arg {
	const char *name;       /* JSON key (case-sensitive); absent or null = default */
	enum sx_arg_type type;
	size_t offset;          /* offsetof the destination in the plugin's args struct */
	int64_t def;            /* default (bool: 0 or 1) */
	int64_t min, max;       /* integers: inclusive valid range */
	const char *type_desc;  /* "an integer", "a 32-bit integer", "a boolean" */
	const char *range_desc; /* "[0, 100]", "[0, inf)", ... */
};

/* Reads json (an object, or NULL/null for all defaults) into dst per the
 * table. A value of the wrong type fails at once with "<name>: Invalid
 * value: must be <type_desc>" in err; values out of range are added to e
 * as "<name>: Invalid value: <v>: not in valid range <range_desc>" for the
 * caller to finish after its own checks. Returns 0 or SX_EINVAL. */
int sx_args_read(const struct cJSON *json, const struct sx_arg *table, size_t n, void *dst,
		 struct sx_arg_errors *e, struct sx_error *err);

#endif /* SCHEDEXT_PLUGIN_ARGS_H */
