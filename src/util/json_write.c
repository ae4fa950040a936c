/* The streaming JSON writer over struct sx_buf (include/schedext/buf.h):
 * the one place that decides where commas and colons go. Every JSON answer
 * schedext serves or prints is written through it.
 *
 * State is two bit sets indexed by depth (does the container have a member
 * yet; is it an object) and a "key written, value due" flag, so a writer
 * is a few words on the caller's stack and costs one branch per value.
 * Each key or value is one append to the buffer (comma, quotes, colon
 * and all) when it needs no escape: replies of thousands of names cost
 * what hand-placed literals cost. */
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

/* Before a value: whether a comma is due (the array or top level has a
 * member already); -1 when a value is not allowed here (inside an object
 * a value must follow its key). */
static inline int before_value(struct sx_jw *w)
{
	int comma;

	if (w->after_key) {
		w->after_key = false;
		return 0;
	}
	if (w->is_obj & bit(w->depth)) {
		fail(w);
		return -1;
	}
	comma = (w->more & bit(w->depth)) != 0;
	w->more |= bit(w->depth);
	return comma;
}

/* Bytes written as they are inside a JSON string (sx_json_strn's rule). */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* [,]"s"[:] in one append when s needs no escape (names, keys, most
 * values), else through sx_json_strn. */
static void put_str(struct sx_jw *w, int comma, const char *s, size_t n, bool colon)
{
	size_t i = 0;
	char *p;

	while (i < n && plain((unsigned char)s[i]))
		i++;
	if (i < n) {
		if (comma)
			sx_buf_putc(w->b, ',');
		sx_json_strn(w->b, s, n);
		if (colon)
			sx_buf_putc(w->b, ':');
		return;
	}
	if (!(p = sx_buf_grow(w->b, (size_t)comma + n + 2 + colon)))
		return;
	if (comma)
		*p++ = ',';
	*p++ = '"';
	memcpy(p, s, n);
	p += n;
	*p++ = '"';
	if (colon)
		*p = ':';
}

/* [,]text in one append. */
static void put_raw(struct sx_jw *w, int comma, const char *text, size_t n)
{
	char *p = sx_buf_grow(w->b, (size_t)comma + n);

	if (!p)
		return;
	if (comma)
		*p++ = ',';
	memcpy(p, text, n);
}

void sx_jw_keyn(struct sx_jw *w, const char *key, size_t n)
{
	int comma;

	if (!(w->is_obj & bit(w->depth)) || w->after_key) {
		fail(w);
		return;
	}
	comma = (w->more & bit(w->depth)) != 0;
	w->more |= bit(w->depth);
	put_str(w, comma, key, n, true);
	w->after_key = true;
}

static void open_container(struct sx_jw *w, char c, bool obj)
{
	int comma = before_value(w);

	if (comma < 0)
		return;
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
	put_raw(w, comma, &c, 1);
}

static void close_container(struct sx_jw *w, char c, bool obj)
{
	if (!w->depth || w->after_key || !(w->is_obj & bit(w->depth)) != !obj) {
		fail(w);
		return;
	}
	w->depth--;
	put_raw(w, 0, &c, 1);
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
	int comma = before_value(w);

	if (comma >= 0)
		put_str(w, comma, s, n, false);
}

void sx_jw_str(struct sx_jw *w, const char *s)
{
	sx_jw_strn(w, s ? s : "", s ? strlen(s) : 0);
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

/* Digits of u, sign when neg, at the end of tmp[24]: their start. */
static char *digits(char tmp[24], uint64_t u, bool neg)
{
	char *p = tmp + 24;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		*--p = '-';
	return p;
}

void sx_jw_int(struct sx_jw *w, int64_t v)
{
	int comma = before_value(w);
	char tmp[24], *p;

	if (comma < 0)
		return;
	/* the magnitude as unsigned, so INT64_MIN is exact */
	p = digits(tmp, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, v < 0);
	put_raw(w, comma, p, (size_t)(tmp + sizeof(tmp) - p));
}

void sx_jw_uint(struct sx_jw *w, uint64_t v)
{
	int comma = before_value(w);
	char tmp[24], *p;

	if (comma < 0)
		return;
	p = digits(tmp, v, false);
	put_raw(w, comma, p, (size_t)(tmp + sizeof(tmp) - p));
}

void sx_jw_doublef(struct sx_jw *w, const char *fmt, double v)
{
	int comma = before_value(w);
	char tmp[64];
	int n;

	if (comma < 0)
		return;
	n = isfinite(v) ? snprintf(tmp, sizeof(tmp), fmt, v) : -1;
	if (n < 0 || (size_t)n >= sizeof(tmp))
		put_raw(w, comma, "null", 4);
	else
		put_raw(w, comma, tmp, (size_t)n);
}

void sx_jw_double(struct sx_jw *w, double v)
{
	sx_jw_doublef(w, "%g", v);
}

void sx_jw_bool(struct sx_jw *w, bool v)
{
	int comma = before_value(w);

	if (comma >= 0)
		put_raw(w, comma, v ? "true" : "false", v ? 4 : 5);
}

void sx_jw_null(struct sx_jw *w)
{
	int comma = before_value(w);

	if (comma >= 0)
		put_raw(w, comma, "null", 4);
}

void sx_jw_raw(struct sx_jw *w, const char *json, size_t n)
{
	int comma = before_value(w);

	if (comma >= 0)
		put_raw(w, comma, json, n);
}
