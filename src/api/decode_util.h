/* Internal to the decoders (src/decode*.c): the shapes every decoder repeats,
 * so that each one reads as a list of its fields.
 *
 *   - an array field whose elements fill a freshly allocated C array,
 *   - a walk over an array's elements (no allocation, or storage the caller
 *     made),
 *   - an optional sub-object decoded by a callback,
 *   - the two error messages every decoder produces.
 *
 * Paths follow decode_internal.h: a failing element i of field "key" gets
 * "key[i]" prefixed to the element decoder's own path.
 */
#ifndef SCHEDEXT_DECODE_UTIL_H
#define SCHEDEXT_DECODE_UTIL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"

/* Sets err "out of memory" (no path); returns SX_ENOMEM. */
int sx_dec_oom(struct sx_error *err);
/* Sets err "expected object, got <type>" (no path); returns SX_EINVAL. */
int sx_dec_not_object(struct sx_error *err, const cJSON *j);

/* A zeroed struct of `size` bytes to decode the JSON object json into;
 * NULL with err set (no path) when json is not an object or memory runs
 * out. The caller frees it. */
void *sx_dec_new(const cJSON *json, size_t size, struct sx_error *err);

/* A string value of at most SX_DECODE_MAX_STRING bytes (no path set on
 * error); *out points into s. */
int sx_dec_string_value(const cJSON *s, const char **out, struct sx_error *err);

/* Decodes one JSON value j into elem (zeroed storage of the element type, or
 * NULL when the caller walks without storage); arg is the caller's context.
 * Returns 0, or a negative code with err set relative to j. */
typedef int (*sx_dec_item_fn)(const cJSON *j, void *elem, void *arg, struct sx_error *err);

/* Calls fn on every element of arr (NULL: none) in order, elem being
 * base + i * size (NULL when base is NULL). The first failure stops the walk
 * and gets "key[i]" prefixed. sx_dec_each_object first fails non-object
 * elements with "expected object, got <type>". Returns 0 or that code. */
int sx_dec_each(const cJSON *arr, const char *key, void *base, size_t size, sx_dec_item_fn fn,
		void *arg, struct sx_error *err);
int sx_dec_each_object(const cJSON *arr, const char *key, void *base, size_t size,
		       sx_dec_item_fn fn, void *arg, struct sx_error *err);

/* Array field obj[key] (sx_dec_array limits) into a zeroed C array of its
 * length: stores the array in *items and the length in *n before decoding
 * the elements with fn (so a free of the owner on error sees them all), then
 * walks it as sx_dec_each / sx_dec_each_object. Absent or null: *items NULL,
 * *n 0. Allocation failure: *items NULL, *n 0, SX_ENOMEM. The owner frees
 * *items whatever the result. Use the macros: they pass the element size and
 * take `items` as the address of a typed pointer (T **). */
int sx_dec_items_(const cJSON *obj, const char *key, size_t size, void *items, uint32_t *n,
		  sx_dec_item_fn fn, void *arg, struct sx_error *err);
int sx_dec_objects_(const cJSON *obj, const char *key, size_t size, void *items, uint32_t *n,
		    sx_dec_item_fn fn, void *arg, struct sx_error *err);
#define sx_dec_items(obj, key, items, n, fn, arg, err)                                             \
	sx_dec_items_((obj), (key), sizeof(**(items)), (items), (n), (fn), (arg), (err))
#define sx_dec_objects(obj, key, items, n, fn, arg, err)                                           \
	sx_dec_objects_((obj), (key), sizeof(**(items)), (items), (n), (fn), (arg), (err))

/* Optional sub-object obj[key] (sx_dec_object checks): when present, calls
 * fn(value, elem, arg, err) and prefixes "key" to its error path. Absent or
 * null: 0 without calling fn. */
int sx_dec_sub(const cJSON *obj, const char *key, sx_dec_item_fn fn, void *elem, void *arg,
	       struct sx_error *err);

/* metadata into meta, and checks that spec and status, when present, are
 * objects (decode_misc.c). */
struct sx_meta;
int sx_dec_head(const cJSON *json, struct sx_meta *meta, struct sx_error *err);
/* The interned metadata.name of a decoded meta, into *id (objects other
 * kinds find by name id: Node, CSINode); SX_ETOOBIG when the string table
 * is full (*id then "") (decode_misc.c). */
int sx_dec_name_id(const struct sx_meta *meta, sx_str *id, struct sx_error *err);

#endif /* SCHEDEXT_DECODE_UTIL_H */
