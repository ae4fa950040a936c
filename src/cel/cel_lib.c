/* Library helpers: semantic versions as github.com/blang/semver/v4 parses
 * and orders them, and RE2 patterns translated to POSIX extended regular
 * expressions for the subset whose match/no-match answer is the same.
 *
 * The translation assumes the C locale (bytes); schedext never calls
 * setlocale. Every character class becomes an explicit byte set, and any
 * construct that cannot be mapped faithfully is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_int.h"

/* ---- semver ---- */

static bool only(const char *s, size_t n, const char *set)
{
	if (set[0] == '0' && !set[10]) { /* DIGITS */
		for (size_t i = 0; i < n; i++)
			if (s[i] < '0' || s[i] > '9')
				return false;
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

#define DIGITS "0123456789"
#define ALNUM  "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"

/* strconv.ParseUint(s, 10, 64) */
static int parse_u64(const char *s, size_t n, uint64_t *out, char *err, size_t errlen)
{
	uint64_t v = 0;

	if (n == 0) {
		snprintf(err, errlen, "strconv.ParseUint: parsing \"\": invalid syntax");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10) {
			snprintf(err, errlen,
				 "strconv.ParseUint: parsing \"%.*s\": value out of range", (int)n,
				 s);
			return -1;
		}
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_number(const char *s, size_t n, const char *what, const char *What, uint64_t *out,
			char *err, size_t errlen)
{
	if (!only(s, n, DIGITS)) {
		snprintf(err, errlen, "Invalid character(s) found in %s number \"%.*s\"", what,
			 (int)n, s);
		return -1;
	}
	if (n > 1 && s[0] == '0') {
		snprintf(err, errlen, "%s number must not contain leading zeroes \"%.*s\"", What,
			 (int)n, s);
		return -1;
	}
	return parse_u64(s, n, out, err, errlen);
}

static int check_prerelease(const char *s, size_t n, char *err, size_t errlen)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		const char *p = s + start;
		size_t len = i - start;
		uint64_t dummy;

		if (i < n && s[i] != '.')
			continue;
		start = i + 1;
		if (len == 0) {
			snprintf(err, errlen, "Prerelease is empty");
			return -1;
		}
		if (only(p, len, DIGITS)) {
			if (len > 1 && p[0] == '0') {
				snprintf(err, errlen,
					 "Numeric PreRelease version must not contain leading "
					 "zeroes \"%.*s\"",
					 (int)len, p);
				return -1;
			}
			if (parse_u64(p, len, &dummy, err, errlen) != 0)
				return -1;
		} else if (!only(p, len, ALNUM)) {
			snprintf(err, errlen, "Invalid character(s) found in prerelease \"%.*s\"",
				 (int)len, p);
			return -1;
		}
	}
	return 0;
}

static int check_build(const char *s, size_t n, char *err, size_t errlen)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (i == start) {
			snprintf(err, errlen, "Build meta data is empty");
			return -1;
		}
		if (!only(s + start, i - start, ALNUM)) {
			snprintf(err, errlen,
				 "Invalid character(s) found in build meta data \"%.*s\"",
				 (int)(i - start), s + start);
			return -1;
		}
		start = i + 1;
	}
	return 0;
}

/* blang/semver Parse. */
static int semver_strict(const char *s, size_t n, struct cel_semver *v, char *err, size_t errlen)
{
	const char *d1, *d2, *patch, *plus, *dash;
	size_t pn;

	memset(v, 0, sizeof(*v));
	if (n == 0) {
		snprintf(err, errlen, "Version string empty");
		return -1;
	}
	d1 = memchr(s, '.', n);
	d2 = d1 ? memchr(d1 + 1, '.', (size_t)(s + n - d1 - 1)) : NULL;
	if (!d2) {
		snprintf(err, errlen, "No Major.Minor.Patch elements found");
		return -1;
	}
	if (parse_number(s, (size_t)(d1 - s), "major", "Major", &v->major, err, errlen) ||
	    parse_number(d1 + 1, (size_t)(d2 - d1 - 1), "minor", "Minor", &v->minor, err, errlen))
		return -1;
	patch = d2 + 1;
	pn = (size_t)(s + n - patch);
	plus = memchr(patch, '+', pn);
	if (plus) {
		if (check_build(plus + 1, (size_t)(s + n - plus - 1), err, errlen))
			return -1;
		pn = (size_t)(plus - patch);
	}
	dash = memchr(patch, '-', pn);
	if (dash) {
		v->pre = dash + 1;
		v->pre_len = (uint32_t)(patch + pn - dash - 1);
		pn = (size_t)(dash - patch);
	}
	if (parse_number(patch, pn, "patch", "Patch", &v->patch, err, errlen))
		return -1;
	if (dash && check_prerelease(v->pre, v->pre_len, err, errlen))
		return -1;
	return 0;
}

/* semverlib.go normalizeAndParse: strip "v", drop leading zeros of the
 * first three parts, fill missing minor/patch with 0. */
static int semver_normalize(const char *s, size_t n, struct cel_semver *v, char *err, size_t errlen,
			    struct cel_arena *a)
{
	char *out = cel_arena_alloc(a, n + 8);
	size_t o = 0, parts = 0, i = 0;

	if (!out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (n && s[0] == 'v')
		i = 1;
	while (parts < 3) {
		size_t end = i;

		if (parts < 2)
			while (end < n && s[end] != '.')
				end++;
		else
			end = n;
		const char *p = s + i;
		size_t len = end - i;

		if (len > 1) {
			while (len && *p == '0') {
				p++;
				len--;
			}
			if (len == 0 || !(*p >= '0' && *p <= '9')) {
				out[o++] = '0';
			}
		}
		memcpy(out + o, p, len);
		o += len;
		parts++;
		if (end >= n)
			break;
		out[o++] = '.';
		i = end + 1;
	}
	if (parts < 3) {
		/* the last part given may not carry prerelease or build data */
		for (size_t k = o; k > 0 && out[k - 1] != '.'; k--) {
			if (out[k - 1] == '+' || out[k - 1] == '-') {
				snprintf(err, errlen,
					 "short version cannot contain PreRelease/Build meta data");
				return -1;
			}
		}
		while (parts++ < 3) {
			memcpy(out + o, ".0", 2);
			o += 2;
		}
	}
	return semver_strict(out, o, v, err, errlen);
}

int cel_semver_parse(const char *s, size_t n, bool normalize, struct cel_semver *out, char *err,
		     size_t errlen, struct cel_arena *a)
{
	if (normalize)
		return semver_normalize(s, n, out, err, errlen, a);
	return semver_strict(s, n, out, err, errlen);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* One prerelease identifier each: numbers < strings, numbers by value,
 * strings bytewise. */
static int cmp_pre_part(const char *a, size_t an, const char *b, size_t bn)
{
	bool anum = only(a, an, DIGITS), bnum = only(b, bn, DIGITS);
	int c;

	if (anum && bnum) {
		uint64_t x = 0, y = 0;
		char e[8];

		parse_u64(a, an, &x, e, sizeof(e));
		parse_u64(b, bn, &y, e, sizeof(e));
		return cmp_u64(x, y);
	}
	if (anum != bnum)
		return anum ? -1 : 1;
	c = memcmp(a, b, an < bn ? an : bn);
	if (c)
		return c < 0 ? -1 : 1;
	return cmp_u64(an, bn);
}

int cel_semver_cmp(const struct cel_semver *a, const struct cel_semver *b)
{
	size_t i = 0, j = 0;
	int c;

	if ((c = cmp_u64(a->major, b->major)) || (c = cmp_u64(a->minor, b->minor)) ||
	    (c = cmp_u64(a->patch, b->patch)))
		return c;
	if (!a->pre_len && !b->pre_len)
		return 0;
	if (!a->pre_len)
		return 1;
	if (!b->pre_len)
		return -1;
	while (i < a->pre_len && j < b->pre_len) {
		size_t ie = i, je = j;

		while (ie < a->pre_len && a->pre[ie] != '.')
			ie++;
		while (je < b->pre_len && b->pre[je] != '.')
			je++;
		c = cmp_pre_part(a->pre + i, ie - i, b->pre + j, je - j);
		if (c)
			return c;
		i = ie + 1;
		j = je + 1;
	}
	if (i < a->pre_len)
		return 1;
	if (j < b->pre_len)
		return -1;
	return 0;
}

/* ---- regular expressions ---- */

#define CEL_REGEX_MAX 10240 /* pattern bytes; literal ones are bounded by the expression */

struct rx {
	const char *p;
	size_t n, i;
	char *out;
	size_t o, cap;
	bool dotall;
	bool icase;
	/* expanded size per group depth, and of the last atom, for repeats */
	uint64_t size[102];
	uint64_t last;
	int depth;
	char *err;
	size_t errlen;
};

/* Multi-byte UTF-8 sequence (one code point ≥ U+0080). */
#define RX_U8                                                                                      \
	"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf][\x80-\xbf]|[\xf0-\xf4][\x80-\xbf][\x80-"    \
	"\xbf][\x80-\xbf]"

static int rx_fail(struct rx *r, const char *fmt, const char *what, size_t wn)
{
	snprintf(r->err, r->errlen, fmt, (int)wn, what);
	return -1;
}

static int rx_unsupported(struct rx *r, size_t at, size_t len)
{
	return rx_fail(r, "regular expression syntax `%.*s` is not supported by this evaluator",
		       r->p + at, len);
}

static void emit(struct rx *r, const char *s, size_t n)
{
	if (r->o + n < r->cap) {
		memcpy(r->out + r->o, s, n);
		r->o += n;
	} else {
		r->o = r->cap; /* marks overflow */
	}
}

static void emits(struct rx *r, const char *s)
{
	emit(r, s, strlen(s));
}

/* A byte set over ASCII 1..127 as one bracket expression, plus, when
 * multibyte, an alternative for every non-ASCII code point. */
static void emit_set(struct rx *r, const bool set[128], bool multibyte)
{
	static const char special[] = "]-^[";
	bool any = false;
	char c;

	for (int k = 1; k < 128; k++)
		any |= set[k];
	if (multibyte)
		emits(r, "(");
	if (any) {
		emits(r, "[");
		if (set[']'])
			emits(r, "]");
		else if (set['-'])
			emits(r, "-");
		for (int k = 1; k < 128; k++) {
			if (!set[k] || strchr(special, k))
				continue;
			int e = k;

			while (e + 1 < 128 && set[e + 1] && !strchr(special, e + 1))
				e++;
			c = (char)k;
			emit(r, &c, 1);
			if (e - k >= 2)
				emits(r, "-");
			if (e > k) {
				c = (char)e;
				emit(r, &c, 1);
			}
			if (e - k == 1) {
				/* two chars: both emitted */
			}
			k = e;
		}
		if (set['['])
			emits(r, "[");
		if (set['^']) {
			/* never first: ']' , '-' or another member precedes it */
			bool alone = true;

			for (int k = 1; k < 128; k++)
				if (set[k] && k != '^')
					alone = false;
			if (alone) {
				r->o--; /* drop the '[' */
				emits(r, "\\^");
				goto close_done;
			}
			emits(r, "^");
		}
		if (set['-'] && set[']'])
			emits(r, "-");
		emits(r, "]");
	}
close_done:
	if (multibyte) {
		if (any)
			emits(r, "|");
		emits(r, RX_U8 ")");
	}
}

static void set_range(bool set[128], int lo, int hi)
{
	for (int k = lo; k <= hi && k < 128; k++)
		if (k > 0)
			set[k] = true;
}

/* \d \s \w into set; false for anything else. */
static bool perl_class(char c, bool set[128])
{
	switch (c) {
	case 'd':
		set_range(set, '0', '9');
		return true;
	case 's':
		set['\t'] = set['\n'] = set['\f'] = set['\r'] = set[' '] = true;
		return true;
	case 'w':
		set_range(set, '0', '9');
		set_range(set, 'A', 'Z');
		set_range(set, 'a', 'z');
		set['_'] = true;
		return true;
	}
	return false;
}

static int escape_char(char c)
{
	switch (c) {
	case 'a':
		return '\a';
	case 'f':
		return '\f';
	case 't':
		return '\t';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 'v':
		return '\v';
	}
	if ((c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) ||
	    (c >= 0x7b && c <= 0x7e))
		return c; /* escaped punctuation */
	return -1;
}

static const char *const posix_classes[] = {
	"alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
	"lower", "print", "punct", "space", "upper", "word",  "xdigit",
};

static void posix_class(int idx, bool set[128])
{
	for (int k = 1; k < 128; k++) {
		bool in = false;

		switch (idx) {
		case 0:
			in = (k >= '0' && k <= '9') || (k >= 'A' && k <= 'Z') ||
			     (k >= 'a' && k <= 'z');
			break;
		case 1:
			in = (k >= 'A' && k <= 'Z') || (k >= 'a' && k <= 'z');
			break;
		case 2:
			in = true;
			break;
		case 3:
			in = k == ' ' || k == '\t';
			break;
		case 4:
			in = k < 32 || k == 127;
			break;
		case 5:
			in = k >= '0' && k <= '9';
			break;
		case 6:
			in = k > 32 && k < 127;
			break;
		case 7:
			in = k >= 'a' && k <= 'z';
			break;
		case 8:
			in = k >= 32 && k < 127;
			break;
		case 9:
			in = k > 32 && k < 127 &&
			     !((k >= '0' && k <= '9') || (k >= 'A' && k <= 'Z') ||
			       (k >= 'a' && k <= 'z'));
			break;
		case 10:
			in = k == ' ' || (k >= '\t' && k <= '\r');
			break;
		case 11:
			in = k >= 'A' && k <= 'Z';
			break;
		case 12:
			in = (k >= '0' && k <= '9') || (k >= 'A' && k <= 'Z') ||
			     (k >= 'a' && k <= 'z') || k == '_';
			break;
		case 13:
			in = (k >= '0' && k <= '9') || (k >= 'A' && k <= 'F') ||
			     (k >= 'a' && k <= 'f');
			break;
		}
		if (in)
			set[k] = true;
	}
}

/* One class member (a char, an escape) at r->i; -2 for a class escape
 * already merged into set. */
static int class_atom(struct rx *r, bool set[128])
{
	size_t at = r->i;
	unsigned char c = (unsigned char)r->p[r->i++];
	int e;

	if (c >= 0x80)
		return rx_unsupported(r, at, 1) - 1;
	if (c != '\\')
		return c;
	if (r->i >= r->n)
		return rx_fail(r,
			       "error parsing regexp: trailing backslash at end of expression%.*s",
			       "", 0) -
		       1;
	c = (unsigned char)r->p[r->i++];
	if (perl_class((char)c, set))
		return -2;
	e = escape_char((char)c);
	if (e < 0)
		return rx_unsupported(r, at, 2) - 1;
	return e;
}

static int parse_class(struct rx *r)
{
	bool set[128] = {false};
	bool neg = false, first = true;
	size_t start = r->i - 1;

	if (r->i < r->n && r->p[r->i] == '^') {
		neg = true;
		r->i++;
	}
	for (;;) {
		int lo, hi;

		if (r->i >= r->n)
			return rx_fail(r, "error parsing regexp: missing closing ]: `%.*s`",
				       r->p + start, r->n - start);
		if (r->p[r->i] == ']' && !first) {
			r->i++;
			break;
		}
		first = false;
		if (r->p[r->i] == '[' && r->i + 1 < r->n && r->p[r->i + 1] == ':') {
			const char *end = strstr(r->p + r->i, ":]");
			size_t k;

			for (k = 0; end && k < sizeof(posix_classes) / sizeof(posix_classes[0]);
			     k++) {
				size_t len = strlen(posix_classes[k]);

				if ((size_t)(end - (r->p + r->i + 2)) == len &&
				    memcmp(r->p + r->i + 2, posix_classes[k], len) == 0)
					break;
			}
			if (!end || k == sizeof(posix_classes) / sizeof(posix_classes[0]))
				return rx_unsupported(r, r->i, 2);
			posix_class((int)k, set);
			r->i = (size_t)(end - r->p) + 2;
			continue;
		}
		lo = class_atom(r, set);
		if (lo == -2)
			continue;
		if (lo < 0)
			return -1;
		hi = lo;
		if (r->i + 1 < r->n && r->p[r->i] == '-' && r->p[r->i + 1] != ']') {
			r->i++;
			hi = class_atom(r, set);
			if (hi == -2)
				return rx_unsupported(r, start, r->i - start);
			if (hi < 0)
				return -1;
			if (hi < lo)
				return rx_fail(r,
					       "error parsing regexp: invalid character class "
					       "range: `%.*s`",
					       r->p + start, r->i - start);
		}
		set_range(set, lo, hi);
	}
	if (neg) {
		for (int k = 1; k < 128; k++)
			set[k] = !set[k];
		emit_set(r, set, true);
	} else {
		emit_set(r, set, false);
	}
	return 0;
}

/* {n}, {n,}, {n,m} at r->i (on '{'): 1 when one was copied, 0 when the
 * brace is a literal, -1 on error. */
static int parse_repeat(struct rx *r)
{
	size_t i = r->i + 1;
	long lo = -1, hi = -1;
	char *end;

	if (i >= r->n || r->p[i] < '0' || r->p[i] > '9')
		return 0;
	lo = strtol(r->p + i, &end, 10);
	i = (size_t)(end - r->p);
	if (i < r->n && r->p[i] == ',') {
		i++;
		if (i < r->n && r->p[i] >= '0' && r->p[i] <= '9') {
			hi = strtol(r->p + i, &end, 10);
			i = (size_t)(end - r->p);
		}
	} else {
		hi = lo;
	}
	if (i >= r->n || r->p[i] != '}')
		return 0;
	if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo))
		return rx_fail(r, "error parsing regexp: invalid repeat count: `%.*s`", r->p + r->i,
			       i + 1 - r->i);
	/* POSIX regcomp expands counted repetitions and nested ones multiply:
	 * bound the expanded size instead of modelling RE2's size limit. */
	{
		uint64_t bound = (uint64_t)(hi > lo ? hi : lo);

		r->size[r->depth] += r->last * (bound ? bound - 1 : 0);
		r->last *= bound ? bound : 1;
		if (r->size[r->depth] > 2000 || r->last > 2000)
			return rx_fail(r,
				       "regular expression syntax `%.*s`: repetitions expanding to "
				       "over 2000 atoms are not supported by this evaluator",
				       r->p + r->i, i + 1 - r->i);
	}
	emit(r, r->p + r->i, i + 1 - r->i);
	r->i = i + 1;
	return 1;
}

static void emit_literal(struct rx *r, unsigned char c)
{
	char buf[4];

	if (strchr(".[]()*+?{}|^$\\", c) && c) {
		buf[0] = '\\';
		buf[1] = (char)c;
		emit(r, buf, 2);
		return;
	}
	buf[0] = (char)c;
	emit(r, buf, 1);
}

static size_t utf8_seq(const char *p, size_t n)
{
	unsigned char c = (unsigned char)p[0];
	size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;

	if (!len || len > n)
		return 0;
	for (size_t k = 1; k < len; k++)
		if (((unsigned char)p[k] & 0xc0) != 0x80)
			return 0;
	return len;
}

static int rx_flags(struct rx *r)
{
	if (r->n >= 4 && memcmp(r->p, "(?i)", 4) == 0) {
		r->icase = true;
		r->i = 4;
	} else if (r->n >= 4 && memcmp(r->p, "(?s)", 4) == 0) {
		r->dotall = true;
		r->i = 4;
	}
	return 0;
}

/* One more atom at the current depth; returns true (a quantifier may follow). */
static bool rx_atom(struct rx *r)
{
	r->last = 1;
	r->size[r->depth]++;
	return true;
}

static int translate(struct rx *r)
{
	bool atom = false;  /* a quantifier may follow */
	bool quant = false; /* the previous item was a quantifier */
	int depth = 0;

	rx_flags(r);
	while (r->i < r->n) {
		size_t at = r->i;
		unsigned char c = (unsigned char)r->p[r->i];

		if (c == '*' || c == '+' || c == '?' || (c == '{' && atom)) {
			int rep = 1;

			if (quant)
				return rx_fail(r,
					       "error parsing regexp: invalid nested repetition "
					       "operator: `%.*s`",
					       r->p + at - 1, 2);
			if (!atom) {
				if (c == '{')
					goto literal;
				return rx_fail(r,
					       "error parsing regexp: missing argument to "
					       "repetition operator: `%.*s`",
					       r->p + at, 1);
			}
			if (c == '{') {
				rep = parse_repeat(r);
				if (rep < 0)
					return -1;
				if (rep == 0)
					goto literal;
			} else {
				emit(r, (const char *)&c, 1);
				r->i++;
			}
			if (r->i < r->n && r->p[r->i] == '?')
				r->i++; /* non-greedy: same match/no-match answer */
			quant = true;
			atom = false;
			continue;
		}
		quant = false;
		if (c == '(') {
			if (++depth > 100)
				return rx_unsupported(r, at, 1);
			r->depth = depth;
			r->size[depth] = 0;
			r->i++;
			if (r->i < r->n && r->p[r->i] == '?') {
				if (r->i + 1 < r->n && r->p[r->i + 1] == ':') {
					r->i += 2;
				} else if (r->i + 2 < r->n &&
					   (r->p[r->i + 1] == 'P' || r->p[r->i + 1] == '<')) {
					const char *gt = memchr(r->p + r->i, '>', r->n - r->i);

					if (!gt)
						return rx_unsupported(r, at, 2);
					r->i = (size_t)(gt - r->p) + 1;
				} else {
					return rx_unsupported(r, at, 3 < r->n - at ? 3 : r->n - at);
				}
			}
			emits(r, "(");
			atom = false;
			continue;
		}
		if (c == ')') {
			if (--depth < 0)
				return rx_fail(r, "error parsing regexp: unexpected ): `%.*s`",
					       r->p, r->n);
			r->last = r->size[depth + 1] ? r->size[depth + 1] : 1;
			r->depth = depth;
			r->size[depth] += r->last;
			emits(r, ")");
			r->i++;
			atom = true;
			continue;
		}
		if (c == '|' || c == '^' || c == '$') {
			emit(r, (const char *)&c, 1);
			r->i++;
			atom = false;
			continue;
		}
		if (c == '.') {
			bool set[128] = {false};

			set_range(set, 1, 127);
			if (!r->dotall)
				set['\n'] = false;
			emit_set(r, set, true);
			r->i++;
			atom = rx_atom(r);
			continue;
		}
		if (c == '[') {
			r->i++;
			if (parse_class(r) != 0)
				return -1;
			atom = rx_atom(r);
			continue;
		}
		if (c == '\\') {
			bool set[128] = {false};
			char e;
			int lit;

			if (r->i + 1 >= r->n)
				return rx_fail(r,
					       "error parsing regexp: trailing backslash at end of "
					       "expression%.*s",
					       "", 0);
			e = r->p[r->i + 1];
			r->i += 2;
			if (e == 'b' || e == 'B') {
				emit(r, r->p + at, 2);
				atom = false;
				continue;
			}
			if (e == 'A' || e == 'z') {
				emits(r, e == 'A' ? "^" : "$");
				atom = false;
				continue;
			}
			if (perl_class(e, set)) {
				emit_set(r, set, false);
				atom = rx_atom(r);
				continue;
			}
			if (e == 'D' || e == 'S' || e == 'W') {
				perl_class((char)(e + 32), set);
				for (int k = 1; k < 128; k++)
					set[k] = !set[k];
				emit_set(r, set, true);
				atom = rx_atom(r);
				continue;
			}
			lit = escape_char(e);
			if (lit < 0)
				return rx_unsupported(r, at, 2);
			emit_literal(r, (unsigned char)lit);
			atom = rx_atom(r);
			continue;
		}
		if (c >= 0x80) {
			size_t len = utf8_seq(r->p + r->i, r->n - r->i);

			if (!len)
				return rx_fail(r, "error parsing regexp: invalid UTF-8: `%.*s`",
					       r->p, r->n);
			if (r->icase)
				return rx_unsupported(r, at, len);
			emits(r, "(");
			emit(r, r->p + r->i, len);
			emits(r, ")");
			r->i += len;
			atom = rx_atom(r);
			continue;
		}
	literal:
		if (c == 0)
			return rx_unsupported(r, at, 1);
		emit_literal(r, c);
		r->i++;
		atom = rx_atom(r);
	}
	if (depth != 0)
		return rx_fail(r, "error parsing regexp: missing closing ): `%.*s`", r->p, r->n);
	return 0;
}

int cel_regex_compile(const char *pat, size_t n, regex_t *re, char *err, size_t errlen)
{
	struct rx r = {.p = pat, .n = n, .err = err, .errlen = errlen};
	int rc;

	if (n > CEL_REGEX_MAX) {
		snprintf(err, errlen, "error parsing regexp: expression too large");
		return -1;
	}
	r.cap = n * 80 + 64;
	r.out = malloc(r.cap);
	if (!r.out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (translate(&r) != 0) {
		free(r.out);
		return -1;
	}
	if (r.o >= r.cap) {
		free(r.out);
		snprintf(err, errlen, "regular expression too large");
		return -1;
	}
	r.out[r.o] = '\0';
	rc = regcomp(re, r.out, REG_EXTENDED | REG_NOSUB | (r.icase ? REG_ICASE : 0));
	free(r.out);
	if (rc != 0) {
		snprintf(err, errlen, "error parsing regexp: invalid or unsupported pattern `%.*s`",
			 (int)n, pat);
		return -1;
	}
	return 0;
}
