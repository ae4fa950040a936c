/* A growable byte buffer and the project's one JSON writer: replies,
 * /configz, explain's JSON and the page's /debug answers are written
 * straight into a buffer through struct sx_jw, never built as cJSON trees.
 *
 * Allocation failures are sticky: after one, the buffer is marked failed
 * (buf->failed) and further writes are ignored, so callers check once at
 * the end.
 */
#ifndef SCHEDEXT_BUF_H
#define SCHEDEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sx_buf {
	char *data; /* NUL-terminated when len > 0 or after sx_buf_cstr */
	size_t len;
	size_t cap;
	bool failed;
};

void sx_buf_init(struct sx_buf *b);
void sx_buf_free(struct sx_buf *b);
void sx_buf_reset(struct sx_buf *b);
void sx_buf_put(struct sx_buf *b, const char *s, size_t n);
void sx_buf_puts(struct sx_buf *b, const char *s);
void sx_buf_putc(struct sx_buf *b, char c);
void sx_buf_printf(struct sx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sx_buf_int(struct sx_buf *b, int64_t v);
/* Appends n bytes for the caller to fill: their address, or NULL (and
 * failed set) when the buffer cannot grow. Inline while they fit. */
char *sx_buf_grow_slow(struct sx_buf *b, size_t n);
static inline char *sx_buf_grow(struct sx_buf *b, size_t n)
{
	char *p;

	if (b->failed || n >= b->cap - b->len)
		return sx_buf_grow_slow(b, n);
	p = b->data + b->len;
	b->len += n;
	b->data[b->len] = '\0';
	return p;
}
/* Takes ownership of the data (caller frees); the buffer is reset. */
char *sx_buf_take(struct sx_buf *b, size_t *len);
const char *sx_buf_cstr(struct sx_buf *b);

/* JSON string literal with escapes (control chars, quotes, backslash;
 * invalid UTF-8 bytes replaced by U+FFFD). */
void sx_json_str(struct sx_buf *b, const char *s);
void sx_json_strn(struct sx_buf *b, const char *s, size_t n);
/* "key": */
void sx_json_key(struct sx_buf *b, const char *key);

/* The streaming JSON writer (src/util/json_write.c). It places the commas
 * and colons itself: a caller says begin/end of objects and arrays, keys
 * and values, and the writer puts ',' before every member but the first of
 * its container. Output is compact (no spaces), strings escaped as
 * sx_json_strn does. Nesting deeper than SX_JW_MAX_DEPTH, a value where a
 * key is due or an end without its begin mark the buffer failed (b->failed)
 * rather than write malformed JSON. Not thread-safe: one writer per buffer.
 *
 * A writer may also start inside a container written by someone else
 * (sx_jw_init_in): plugins' write_args add members to the args object
 * /configz already opened. */
#define SX_JW_MAX_DEPTH 64

struct sx_jw {
	struct sx_buf *b;
	uint64_t more;	 /* bit d: the container at depth d has a member already */
	uint64_t is_obj; /* bit d: the container at depth d is an object */
	unsigned depth;	 /* open containers; 0 = top level */
	bool after_key;	 /* a key was written; its value is due */
};

void sx_jw_init(struct sx_jw *w, struct sx_buf *b);
/* A writer inside an already open object that has (has_members) or has not
 * members yet; its sx_jw_end_object must not be called for that object. */
void sx_jw_init_in(struct sx_jw *w, struct sx_buf *b, bool has_members);

void sx_jw_object(struct sx_jw *w);
void sx_jw_end_object(struct sx_jw *w);
void sx_jw_array(struct sx_jw *w);
void sx_jw_end_array(struct sx_jw *w);
void sx_jw_keyn(struct sx_jw *w, const char *key, size_t n);

void sx_jw_str(struct sx_jw *w, const char *s);		/* NULL writes "" */
void sx_jw_str_or_null(struct sx_jw *w, const char *s); /* NULL writes null */
void sx_jw_strn(struct sx_jw *w, const char *s, size_t n);
void sx_jw_strf(struct sx_jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sx_jw_int(struct sx_jw *w, int64_t v);
void sx_jw_uint(struct sx_jw *w, uint64_t v);
/* printf's %g (as the Go encoder writes small floats); null for NaN/Inf. */
void sx_jw_double(struct sx_jw *w, double v);
/* A number in printf's format fmt (e.g. "%.4f"); null for NaN/Inf. */
void sx_jw_doublef(struct sx_jw *w, const char *fmt, double v);
void sx_jw_bool(struct sx_jw *w, bool v);
void sx_jw_null(struct sx_jw *w);
/* A value that is JSON text already (a verbatim request item, a document
 * printed elsewhere); the caller vouches for it. */
void sx_jw_raw(struct sx_jw *w, const char *json, size_t n);

/* key + value in one call; inline so that a literal key's length is
 * known at compile time */
static inline void sx_jw_key(struct sx_jw *w, const char *key)
{
	sx_jw_keyn(w, key, strlen(key));
}
static inline void sx_jw_kstr(struct sx_jw *w, const char *key, const char *s)
{
	sx_jw_keyn(w, key, strlen(key));
	sx_jw_str(w, s);
}
static inline void sx_jw_kint(struct sx_jw *w, const char *key, int64_t v)
{
	sx_jw_keyn(w, key, strlen(key));
	sx_jw_int(w, v);
}
static inline void sx_jw_kbool(struct sx_jw *w, const char *key, bool v)
{
	sx_jw_keyn(w, key, strlen(key));
	sx_jw_bool(w, v);
}
static inline void sx_jw_kdouble(struct sx_jw *w, const char *key, double v)
{
	sx_jw_keyn(w, key, strlen(key));
	sx_jw_double(w, v);
}
static inline void sx_jw_kobject(struct sx_jw *w, const char *key)
{
	sx_jw_keyn(w, key, strlen(key));
	sx_jw_object(w);
}
static inline void sx_jw_karray(struct sx_jw *w, const char *key)
{
	sx_jw_keyn(w, key, strlen(key));
	sx_jw_array(w);
}

#endif /* SCHEDEXT_BUF_H */
