/* Growable buffer and streaming JSON helpers. */
#include "schedext/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sx_buf_init(struct sx_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void sx_buf_free(struct sx_buf *b)
{
	free(b->data);
	sx_buf_init(b);
}

/* Keeps the allocation; clears the contents and the failure flag. */
void sx_buf_reset(struct sx_buf *b)
{
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

/* Makes room for n more bytes plus a NUL; false (and failed set) when the
 * allocation fails or the size overflows. */
static bool reserve(struct sx_buf *b, size_t n)
{
	size_t need, ncap;
	char *nd;

	if (b->failed)
		return false;
	if (n > SIZE_MAX - b->len - 1)
		goto fail;
	need = b->len + n + 1;
	if (need <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	nd = realloc(b->data, ncap);
	if (!nd)
		goto fail;
	b->data = nd;
	b->cap = ncap;
	return true;
fail:
	b->failed = true;
	return false;
}

void sx_buf_put(struct sx_buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

char *sx_buf_grow_slow(struct sx_buf *b, size_t n)
{
	char *p;

	if (!reserve(b, n))
		return NULL;
	p = b->data + b->len;
	b->len += n;
	b->data[b->len] = '\0';
	return p;
}

void sx_buf_puts(struct sx_buf *b, const char *s)
{
	sx_buf_put(b, s, strlen(s));
}

void sx_buf_putc(struct sx_buf *b, char c)
{
	sx_buf_put(b, &c, 1);
}

void sx_buf_printf(struct sx_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sx_buf_int(struct sx_buf *b, int64_t v)
{
	char tmp[24];
	char *p = tmp + sizeof(tmp);
	/* Work on the magnitude as unsigned so INT64_MIN is exact. */
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	sx_buf_put(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* NULL when the buffer failed; an allocated "" when it is empty. */
char *sx_buf_take(struct sx_buf *b, size_t *len)
{
	char *d;

	if (b->failed) {
		sx_buf_free(b);
		if (len)
			*len = 0;
		return NULL;
	}
	if (!b->data) {
		d = calloc(1, 1);
		if (len)
			*len = 0;
		return d;
	}
	d = b->data;
	if (len)
		*len = b->len;
	sx_buf_init(b);
	return d;
}

/* Always a valid string ("" when empty or failed). */
const char *sx_buf_cstr(struct sx_buf *b)
{
	if (b->failed || !b->data)
		return "";
	return b->data;
}

/* Length of the valid UTF-8 sequence at s[0..n) (2..4), or 0 when the bytes
 * there are not one (overlong, surrogate, beyond U+10FFFF, truncated). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	if (c == 0xE0)
		lo = 0xA0; /* overlong */
	else if (c == 0xED)
		hi = 0x9F; /* surrogates */
	else if (c == 0xF0)
		lo = 0x90; /* overlong */
	else if (c == 0xF4)
		hi = 0x8F; /* > U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

/* Escape for an ASCII byte, or NULL when it is written as is. */
static const char *ascii_escape(unsigned char c, char tmp[8])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	default:
		if (c >= 0x20)
			return NULL;
		snprintf(tmp, 8, "\\u%04x", c);
		return tmp;
	}
}

/* Bytes written as they are: printable ASCII other than '"' and '\\'. */
static inline bool plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

void sx_json_strn(struct sx_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	char tmp[8];

	sx_buf_putc(b, '"');
	while (i < n) {
		/* Runs of plain bytes (all of a node name) are copied in bulk. */
		size_t start = i, len;

		while (i < n && plain_byte(u[i]))
			i++;
		sx_buf_put(b, s + start, i - start);
		if (i == n)
			break;
		if (u[i] < 0x80) {
			sx_buf_puts(b, ascii_escape(u[i], tmp));
			i++;
		} else if ((len = utf8_seq_len(u + i, n - i)) == 0) {
			sx_buf_puts(b, "\\ufffd");
			i++;
		} else {
			sx_buf_put(b, s + i, len);
			i += len;
		}
	}
	sx_buf_putc(b, '"');
}

void sx_json_str(struct sx_buf *b, const char *s)
{
	if (!s)
		s = "";
	sx_json_strn(b, s, strlen(s));
}

void sx_json_key(struct sx_buf *b, const char *key)
{
	sx_json_str(b, key);
	sx_buf_putc(b, ':');
}
