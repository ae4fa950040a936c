/* The streaming JSON writer over struct sx_buf (include/schedext/buf.h):
 * the one place that decides where commas and colons go. Every JSON answer
 * schedext serves or prints is written through it.
 *
 * State is two bit sets indexed by depth (does the container have a member
 * yet; is it an object) and a "key written, value due" flag, so a writer
 * is a few words on the caller's stack and costs one branch per value. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"

void sx_jw_init(struct sx_jw *w, struct sx_buf *b)
{
	memset(w, 0, sizeof(*w));
	w->b = b;
}

void sx_jw_init_in(struct sx_jw *w, struct sx_buf *b, bool has_members)
{
	sx_jw_init(w, b);
	w->depth = 1;
	w->is_obj = 2;
	w->more = has_members ? 2 : 0;
}

static inline uint64_t bit(unsigned depth)
{
	return (uint64_t)1 << depth;
}

static inline void fail(struct sx_jw *w)
{
	w->b->failed = true;
}

/* Before a value: the comma when the array or top level has one already;
 * inside an object a value must follow its key. */
static inline void before_value(struct sx_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->is_obj & bit(w->depth)) {
		fail(w);
		return;
	}
	if (w->more & bit(w->depth))
		sx_buf_putc(w->b, ',');
	w->more |= bit(w->depth);
}

void sx_jw_keyn(struct sx_jw *w, const char *key, size_t n)
{
	if (!(w->is_obj & bit(w->depth)) || w->after_key) {
		fail(w);
		return;
	}
	if (w->more & bit(w->depth))
		sx_buf_putc(w->b, ',');
	w->more |= bit(w->depth);
	sx_json_strn(w->b, key, n);
	sx_buf_putc(w->b, ':');
	w->after_key = true;
}

void sx_jw_key(struct sx_jw *w, const char *key)
{
	sx_jw_keyn(w, key, strlen(key));
}

static void open_container(struct sx_jw *w, char c, bool obj)
{
	before_value(w);
	if (w->depth + 1 >= SX_JW_MAX_DEPTH) {
		fail(w);
		return;
	}
	w->depth++;
	w->more &= ~bit(w->depth);
	if (obj)
		w->is_obj |= bit(w->depth);
	else
		w->is_obj &= ~bit(w->depth);
	sx_buf_putc(w->b, c);
}

static void close_container(struct sx_jw *w, char c, bool obj)
{
	if (!w->depth || w->after_key || !(w->is_obj & bit(w->depth)) != !obj) {
		fail(w);
		return;
	}
	w->depth--;
	sx_buf_putc(w->b, c);
}

void sx_jw_object(struct sx_jw *w)
{
	open_container(w, '{', true);
}

void sx_jw_end_object(struct sx_jw *w)
{
	close_container(w, '}', true);
}

void sx_jw_array(struct sx_jw *w)
{
	open_container(w, '[', false);
}

void sx_jw_end_array(struct sx_jw *w)
{
	close_container(w, ']', false);
}

void sx_jw_strn(struct sx_jw *w, const char *s, size_t n)
{
	before_value(w);
	sx_json_strn(w->b, s, n);
}

void sx_jw_str(struct sx_jw *w, const char *s)
{
	before_value(w);
	sx_json_str(w->b, s);
}

void sx_jw_str_or_null(struct sx_jw *w, const char *s)
{
	if (s)
		sx_jw_str(w, s);
	else
		sx_jw_null(w);
}

void sx_jw_strf(struct sx_jw *w, const char *fmt, ...)
{
	char small[128], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		fail(w);
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sx_jw_strn(w, small, (size_t)n);
		return;
	}
	if (!(big = malloc((size_t)n + 1))) {
		fail(w);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sx_jw_strn(w, big, (size_t)n);
	free(big);
}

void sx_jw_int(struct sx_jw *w, int64_t v)
{
	before_value(w);
	sx_buf_int(w->b, v);
}

void sx_jw_uint(struct sx_jw *w, uint64_t v)
{
	before_value(w);
	sx_buf_printf(w->b, "%llu", (unsigned long long)v);
}

void sx_jw_doublef(struct sx_jw *w, const char *fmt, double v)
{
	before_value(w);
	if (!isfinite(v)) {
		sx_buf_puts(w->b, "null");
		return;
	}
	sx_buf_printf(w->b, fmt, v);
}

void sx_jw_double(struct sx_jw *w, double v)
{
	sx_jw_doublef(w, "%g", v);
}

void sx_jw_bool(struct sx_jw *w, bool v)
{
	before_value(w);
	sx_buf_puts(w->b, v ? "true" : "false");
}

void sx_jw_null(struct sx_jw *w)
{
	before_value(w);
	sx_buf_puts(w->b, "null");
}

void sx_jw_raw(struct sx_jw *w, const char *json, size_t n)
{
	before_value(w);
	sx_buf_put(w->b, json, n);
}

void sx_jw_kstr(struct sx_jw *w, const char *key, const char *s)
{
	sx_jw_key(w, key);
	sx_jw_str(w, s);
}

void sx_jw_kint(struct sx_jw *w, const char *key, int64_t v)
{
	sx_jw_key(w, key);
	sx_jw_int(w, v);
}

void sx_jw_kbool(struct sx_jw *w, const char *key, bool v)
{
	sx_jw_key(w, key);
	sx_jw_bool(w, v);
}

void sx_jw_kdouble(struct sx_jw *w, const char *key, double v)
{
	sx_jw_key(w, key);
	sx_jw_double(w, v);
}

void sx_jw_kobject(struct sx_jw *w, const char *key)
{
	sx_jw_key(w, key);
	sx_jw_object(w);
}

void sx_jw_karray(struct sx_jw *w, const char *key)
{
	sx_jw_key(w, key);
	sx_jw_array(w);
}
