/* Streaming JSON scanner (json_scan.h).
 *
 * The hot loop is the string body: eight bytes at a time are tested for a
 * quote, a backslash, a control character or a non-ASCII byte, and only
 * those stop the fast path. Nesting is tracked on a small stack of closing
 * bytes, so hostile depth costs no recursion.
 */
#include "schedext/json_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define ONES 0x0101010101010101ull
#define HIGH 0x8080808080808080ull

size_t sx_utf8_seq(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2, cp = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		n = 3, cp = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return n;
}

const char *sx_json_type_name(enum sx_json_type t)
{
	switch (t) {
	case SX_JSON_OBJECT:
		return "object";
	case SX_JSON_ARRAY:
		return "array";
	case SX_JSON_STRING:
		return "string";
	case SX_JSON_NUMBER:
		return "number";
	case SX_JSON_BOOL:
		return "boolean";
	default:
		return "null";
	}
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

/* Offset of the first byte in p[0..n) that ends the fast path of a string
 * (a quote, a backslash, a control character or a non-ASCII byte), or n.
 * Sixteen bytes at a time with SSE2 (x86-64 baseline), else eight. */
static size_t plain_run(const char *p, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i space = _mm_set1_epi8(0x20);

	for (; n - i >= 16; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		/* signed: bytes >= 0x80 are negative, so below 0x20 as well */
		__m128i m = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
			_mm_cmplt_epi8(x, space));
		unsigned mask = (unsigned)_mm_movemask_epi8(m);

		if (mask)
			return i + (size_t)__builtin_ctz(mask);
	}
#endif
	for (; n - i >= 8; i += 8) {
		uint64_t x, q, b, t;

		memcpy(&x, p + i, 8);
		q = x ^ (ONES * '"');
		b = x ^ (ONES * '\\');
		t = (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((x - ONES * 0x20) & ~x) | x) & HIGH;
		if (t) /* the lowest flagged byte is a true match (borrows run upward) */
			return i + (size_t)__builtin_ctzll(t) / 8;
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
			return i;
	}
	return n;
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 4 hex digits at p as a code unit, or -1. */
static long hex4(const char *p, const char *end)
{
	long v = 0;
	int i, h;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		h = hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* p at a backslash: past the escape, or NULL. Surrogates must pair, as
 * cJSON requires. */
static const char *scan_escape(const char *p, const char *end)
{
	long hi, lo;

	if (end - p < 2)
		return NULL;
	switch (p[1]) {
	case '"':
	case '\\':
	case '/':
	case 'b':
	case 'f':
	case 'n':
	case 'r':
	case 't':
		return p + 2;
	case 'u':
		break;
	default:
		return NULL;
	}
	hi = hex4(p + 2, end);
	if (hi < 0 || (hi >= 0xDC00 && hi <= 0xDFFF))
		return NULL;
	if (hi < 0xD800 || hi > 0xDBFF)
		return p + 6;
	if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
		return NULL;
	lo = hex4(p + 8, end);
	if (lo < 0xDC00 || lo > 0xDFFF)
		return NULL;
	return p + 12;
}

/* p at '"': past the closing quote, or NULL. */
static const char *scan_string(const char *p, const char *end, bool *escaped)
{
	size_t n;

	p++;
	for (;;) {
		p += plain_run(p, (size_t)(end - p));
		if (p >= end)
			return NULL;
		if (*p == '"')
			return p + 1;
		if (*p == '\\') {
			*escaped = true;
			p = scan_escape(p, end);
			if (!p)
				return NULL;
		} else if ((unsigned char)*p < 0x20) {
			return NULL;
		} else if ((unsigned char)*p >= 0x80) {
			n = sx_utf8_seq((const unsigned char *)p, (const unsigned char *)end);
			if (!n)
				return NULL;
			p += n;
		}
	}
}

static const char *scan_digits(const char *p, const char *end)
{
	const char *s = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* A number per RFC 8259 shorter than SX_JSON_MAX_NUMBER: past it, or NULL. */
static const char *scan_number(const char *p, const char *end)
{
	const char *s = p;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = scan_digits(p, end)))
		return NULL;
	if (p < end && *p == '.' && !(p = scan_digits(p + 1, end)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = scan_digits(p, end)))
			return NULL;
	}
	return p - s < SX_JSON_MAX_NUMBER ? p : NULL;
}

static const char *scan_literal(const char *p, const char *end, const char *lit, size_t n)
{
	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0 ? p + n : NULL;
}

/* A scalar at p (not whitespace): sets v and returns past it, or NULL. */
static const char *scan_scalar(const char *p, const char *end, struct sx_json_val *v)
{
	v->p = p;
	v->escaped = false;
	switch (*p) {
	case '"':
		v->type = SX_JSON_STRING;
		v->end = scan_string(p, end, &v->escaped);
		break;
	case 't':
		v->type = SX_JSON_BOOL;
		v->end = scan_literal(p, end, "true", 4);
		break;
	case 'f':
		v->type = SX_JSON_BOOL;
		v->end = scan_literal(p, end, "false", 5);
		break;
	case 'n':
		v->type = SX_JSON_NULL;
		v->end = scan_literal(p, end, "null", 4);
		break;
	default:
		v->type = SX_JSON_NUMBER;
		v->end = scan_number(p, end);
		break;
	}
	return v->end;
}

const char *sx_json_skip(const char *p, const char *end, int depth, int max_depth)
{
	char stack[SX_JSON_DEPTH_CAP]; /* closing byte of each container opened here */
	struct sx_json_val v;
	int top = 0;

	if (max_depth > SX_JSON_DEPTH_CAP)
		max_depth = SX_JSON_DEPTH_CAP;
value:
	p = skip_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == '{' || *p == '[') {
		if (depth + top + 1 > max_depth)
			return NULL;
		stack[top++] = *p == '{' ? '}' : ']';
		p = skip_ws(p + 1, end);
		if (p < end && *p == stack[top - 1]) {
			top--;
			p++;
			goto after;
		}
		if (stack[top - 1] == '}')
			goto key;
		goto value;
	}
	p = scan_scalar(p, end, &v);
	if (!p)
		return NULL;
after:
	if (top == 0)
		return p;
	p = skip_ws(p, end);
	if (p >= end)
		return NULL;
	if (*p == stack[top - 1]) {
		top--;
		p++;
		goto after;
	}
	if (*p != ',')
		return NULL;
	p = skip_ws(p + 1, end);
	if (stack[top - 1] == ']')
		goto value;
key:
	if (p >= end || *p != '"' || !(p = scan_string(p, end, &v.escaped)))
		return NULL;
	p = skip_ws(p, end);
	if (p >= end || *p != ':')
		return NULL;
	p++;
	goto value;
}

/* ---------- cursors ---------- */

void sx_json_doc(struct sx_json_cur *c, const char *text, size_t len, int max_depth)
{
	memset(c, 0, sizeof(*c));
	c->p = text;
	c->end = text + len;
	c->max_depth = max_depth < SX_JSON_DEPTH_CAP ? max_depth : SX_JSON_DEPTH_CAP;
}

static int fail(struct sx_json_cur *c, const char *at)
{
	c->bad = at ? at : c->p;
	c->closed = true;
	return -1;
}

const char *sx_json_finish(struct sx_json_cur *c)
{
	const char *e;

	if (c->bad || !c->started)
		return NULL;
	if (c->last.end)
		return c->last.end;
	e = sx_json_skip(c->last.p, c->end, c->depth, c->max_depth);
	if (!e) {
		fail(c, c->last.p);
		return NULL;
	}
	c->last.end = e;
	c->p = e;
	return e;
}

const char *sx_json_consume_known(struct sx_json_cur *c, const char *end)
{
	c->last.end = end;
	c->p = end;
	return end;
}

/* Reads the value at c->p (whitespace skipped): containers only their
 * opening byte. Returns 1 or -1. */
static int read_value(struct sx_json_cur *c, struct sx_json_val *v)
{
	const char *p = skip_ws(c->p, c->end);

	if (p >= c->end)
		return fail(c, p);
	if (*p == '{' || *p == '[') {
		if (c->depth + 1 > c->max_depth)
			return fail(c, p);
		v->type = *p == '{' ? SX_JSON_OBJECT : SX_JSON_ARRAY;
		v->p = p;
		v->end = NULL;
		v->escaped = false;
	} else if (!scan_scalar(p, c->end, v)) {
		return fail(c, p);
	}
	c->p = v->end ? v->end : p;
	c->last = *v;
	c->started = true;
	return 1;
}

/* Closes c at p (its closing byte) and resumes the parent. */
static int close_at(struct sx_json_cur *c, const char *p)
{
	c->p = p + 1;
	c->closed = true;
	if (c->parent) {
		c->parent->p = c->p;
		c->parent->last.end = c->p;
	}
	return 0;
}

/* Positions c before its next item: 1 (c->p at the item), 0 closed, -1. */
static int advance(struct sx_json_cur *c)
{
	const char *p;
	bool first = !c->started;

	if (c->closed)
		return c->bad ? -1 : 0;
	if (c->started && !sx_json_finish(c))
		return -1;
	p = skip_ws(c->p, c->end);
	if (c->close == 0) { /* document: one value, then only whitespace */
		if (first)
			return 1;
		if (p != c->end)
			return fail(c, p);
		c->closed = true;
		return 0;
	}
	if (p < c->end && *p == c->close)
		return close_at(c, p);
	if (!first) {
		if (p >= c->end || *p != ',')
			return fail(c, p);
		p++;
	}
	c->p = p;
	return 1;
}

int sx_json_next(struct sx_json_cur *c, struct sx_json_val *v)
{
	int rc = advance(c);

	if (rc <= 0)
		return rc;
	if (c->close == '}')
		return fail(c, c->p); /* misuse: objects have members */
	return read_value(c, v);
}

int sx_json_next_member(struct sx_json_cur *c, struct sx_json_val *key, struct sx_json_val *v)
{
	const char *p;
	int rc = advance(c);

	if (rc <= 0)
		return rc;
	p = skip_ws(c->p, c->end);
	if (c->close != '}' || p >= c->end || *p != '"')
		return fail(c, p);
	if (!scan_scalar(p, c->end, key))
		return fail(c, p);
	p = skip_ws(key->end, c->end);
	if (p >= c->end || *p != ':')
		return fail(c, p);
	c->p = p + 1;
	return read_value(c, v);
}

void sx_json_enter(struct sx_json_cur *c, struct sx_json_cur *child)
{
	memset(child, 0, sizeof(*child));
	child->end = c->end;
	child->max_depth = c->max_depth;
	child->depth = c->depth + 1;
	child->parent = c;
	if (c->closed || !c->started || c->last.end ||
	    (c->last.type != SX_JSON_OBJECT && c->last.type != SX_JSON_ARRAY)) {
		fail(child, c->p); /* nothing open to enter */
		return;
	}
	child->p = c->last.p + 1;
	child->close = c->last.type == SX_JSON_OBJECT ? '}' : ']';
}

/* ---------- strings ---------- */

/* Appends the UTF-8 of cp at dst[n] (bytes past cap dropped); returns the
 * new length. */
static size_t put_utf8(char *dst, size_t cap, size_t n, uint32_t cp)
{
	static const unsigned char lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
	size_t k = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4, i;

	for (i = 0; i < k; i++, n++) {
		unsigned shift = (unsigned)(6 * (k - 1 - i));
		unsigned char b = i == 0 ? (unsigned char)(lead[k] | cp >> shift)
					 : (unsigned char)(0x80 | ((cp >> shift) & 0x3F));

		if (n < cap)
			dst[n] = (char)b;
	}
	return n;
}

size_t sx_json_unescape(const struct sx_json_val *s, char *dst, size_t cap)
{
	const char *p = s->p + 1, *e = s->end - 1;
	size_t n = 0, len = (size_t)(e - p);
	uint32_t cp;
	char ch;

	if (!s->escaped) {
		memcpy(dst, p, len < cap ? len : cap);
		return len;
	}
	while (p < e) {
		if (*p != '\\') {
			if (n < cap)
				dst[n] = *p;
			n++, p++;
			continue;
		}
		ch = p[1];
		p += 2;
		switch (ch) {
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			cp = (uint32_t)hex4(p, e);
			p += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				cp = 0x10000 +
				     (((cp & 0x3FF) << 10) | ((uint32_t)hex4(p + 2, e) & 0x3FF));
				p += 6;
			}
			break;
		default:
			cp = (unsigned char)ch;
			break; /* " \ / */
		}
		if (cp == 0)
			return n; /* a C string ends here */
		n = put_utf8(dst, cap, n, cp);
	}
	return n;
}

bool sx_json_str_eq(const struct sx_json_val *s, const char *lit, bool nocase)
{
	size_t l = strlen(lit), n;
	char small[64], *buf = small;
	bool eq;

	if (s->type != SX_JSON_STRING)
		return false;
	if (!s->escaped) {
		if ((size_t)(s->end - s->p - 2) != l)
			return false;
		return (nocase ? strncasecmp(s->p + 1, lit, l) : memcmp(s->p + 1, lit, l)) == 0;
	}
	if (l >= sizeof(small) && !(buf = malloc(l + 1)))
		return false;
	n = sx_json_unescape(s, buf, l);
	eq = n == l && (nocase ? strncasecmp(buf, lit, l) : memcmp(buf, lit, l)) == 0;
	if (buf != small)
		free(buf);
	return eq;
}
