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

/* ---------- declarative fields ---------- */

enum sx_arg_type {
	SX_ARG_INT,    /* int32_t: an integral number, then checked against [min, max] */
	SX_ARG_INT32,  /* int32_t: an integral number within int32 (a type error otherwise) */
	SX_ARG_BOOL,   /* bool */
	SX_ARG_INT64,  /* int64_t: an integral number, then checked against [min, max] */
	SX_ARG_ENUM,   /* int32_t: the index of a string among values[] */
	SX_ARG_STRING, /* char *: a copy (sx_args_free frees it) */
	SX_ARG_OBJECT, /* a struct at offset: the object's fields per sub[] */
	SX_ARG_LIST,   /* an array: elements read per elem[0] into a calloc'ed array at
			* offset (a pointer), their number at count (a uint32_t) */
	SX_ARG_DECODE, /* the value, as it is, to decode() (a typed decoder) */
	SX_ARG_GIVEN,  /* bool: the key is given (not absent, not null), any type */
};

/* Flags of a field. */
#define SX_ARG_REQUIRED	     0x1 /* absent or null is a type error */
#define SX_ARG_NULL_IS_VALUE 0x2 /* null is a value (of the wrong type), not absent */
#define SX_ARG_LENIENT	     0x4 /* a value of the wrong type reads as the default */
#define SX_ARG_WHOLE                                                                               \
	0x8			     /* LIST: any type error inside element i is                   \
				      * "<path>[i]: <elem type_err>" */
#define SX_ARG_TOO_MANY_IS_TYPE 0x10 /* LIST: more than max elements is a type error */
#define SX_ARG_PRESENCE		0x20 /* OBJECT: a bool at count is set when present */
#define SX_ARG_SOFT		0x40 /* a type error is added to e (the read goes on) */
#define SX_ARG_AT_MOST		0x80 /* LIST: elements beyond max are left unread */
#define SX_ARG_TRUNCATE                                                                            \
	0x100 /* INT32: any number, truncated toward zero (beyond                                  \
	       * int32: INT32_MIN, as the x86 conversion gives) */
#define SX_ARG_QUIET                                                                               \
	0x200 /* ENUM: an unsupported value or one of the wrong type                               \
	       * is stored as SX_ARG_ENUM_BAD without an error (the                                \
	       * caller words it); absent stores def */

/* ENUM: what an unsupported value stores. */
#define SX_ARG_ENUM_BAD (-2)

struct sx_arg_errors;

/* One field of an args object. The first eight members are the scalar
 * kinds' (positional initializers); the others, by name, the new kinds'. */
struct sx_arg {
	const char *name; /* JSON key (case-sensitive); absent or null = default */
	enum sx_arg_type type;
	size_t offset;		/* offsetof the destination in the enclosing struct */
	int64_t def;		/* default (bool: 0 or 1; ENUM: an index, or -1: "" is
				 * read, unless SX_ARG_QUIET) */
	int64_t min, max;	/* integers: inclusive valid range; STRING: most bytes
				 * (0: any); LIST: most elements; ENUM: most bytes of
				 * the value quoted in the error (0: all) */
	const char *type_desc;	/* "an integer", "a 32-bit integer", "a boolean" */
	const char *range_desc; /* "[0, 100]", "[0, inf)", ... */
	/* the new kinds */
	unsigned flags;		   /* SX_ARG_REQUIRED, ... */
	const char *type_err;	   /* the detail of a type error ("must be a list"); the
				    * scalar kinds without it say "Invalid value: must be
				    * <type_desc>" */
	const char *const *values; /* ENUM: the supported values, NULL-terminated */
	const struct sx_arg *sub;  /* OBJECT: its fields; LIST: sub[0] reads one element
				    * (its name and offset unused) */
	size_t nsub;
	size_t elem_size; /* LIST: bytes per element */
	size_t count;	  /* LIST: offsetof the uint32_t count; OBJECT with
			   * SX_ARG_PRESENCE: offsetof the bool */
	/* STRING, each element of a list of strings: adds validation errors
	 * for s at path to e (upstream's validation, after decoding). */
	void (*check)(const char *s, const char *path, struct sx_arg_errors *e);
	/* DECODE: decodes v (never NULL or null) into field; 0, or an error
	 * in err (its path is prefixed with the field's). */
	int (*decode)(const struct cJSON *v, void *field, struct sx_error *err);
	void (*release)(void *field); /* DECODE: frees what decode stored */
};

/* Reads json (an object, or NULL/null for all defaults) into dst per the
 * table. A value of the wrong type fails at once with "<name>: Invalid
 * value: must be <type_desc>" (or "<path>: <type_err>") in err; values out
 * of range, unsupported ENUM values ("<path>: Unsupported value: \"v\":
 * supported values: \"a\", \"b\"") and check() findings are added to e
 * for the caller to finish after its own checks. Nested paths read
 * "a.b[2].c". An OBJECT absent or null leaves its struct as dst held it;
 * each element of a list of objects starts from its fields' defaults.
 * Returns 0, SX_EINVAL or SX_ENOMEM; what was read before a failure is
 * still in dst (sx_args_free frees it either way). */
int sx_args_read(const struct cJSON *json, const struct sx_arg *table, size_t n, void *dst,
		 struct sx_arg_errors *e, struct sx_error *err);

/* Frees the strings, lists and decoded values sx_args_read stored in dst
 * per the table (dst itself stays). */
void sx_args_free(const struct sx_arg *table, size_t n, void *dst);

/* The value of field name of json as compact JSON text (caller frees), for
 * args that /configz shows as given; NULL when absent, null or out of
 * memory. */
char *sx_args_raw(const struct cJSON *json, const char *name);

/* False, with "<kind> must be an object" in err, when json is given and
 * not an object (null counts as absent). */
bool sx_args_is_object(const struct cJSON *json, const char *kind, struct sx_error *err);

#endif /* SCHEDEXT_PLUGIN_ARGS_H */
