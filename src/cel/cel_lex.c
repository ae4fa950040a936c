/* CEL lexer: tokens of the CEL grammar (cel-spec langdef "Syntax"),
 * string and bytes literals decoded as cel-go unescapes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_lex.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_ident_start(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int hexval(char c)
{
	if (is_digit(c))
		return c - '0';
	return (c | 0x20) - 'a' + 10;
}

static void skip_space(struct cel_lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->src[lx->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			lx->pos++;
		} else if (c == '/' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '/') {
			while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
				lx->pos++;
		} else {
			break;
		}
	}
}

static int lex_error(struct cel_lexer *lx, struct cel_token *t, const char *msg)
{
	t->kind = T_ERROR;
	t->text = msg;
	return -1;
}

/* Appends code point cp as UTF-8. */
static void put_utf8(char *out, size_t *n, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | (cp >> 6));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xe0 | (cp >> 12));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xf0 | (cp >> 18));
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/* Decodes one escape at s[*i] (just after the backslash). */
static const char *unescape_one(const char *s, size_t end, size_t *i, bool bytes, char *out,
				size_t *n)
{
	char c = s[*i];
	uint32_t cp = 0;
	int digits = 0;

	(*i)++;
	switch (c) {
	case 'a':
		out[(*n)++] = '\a';
		return NULL;
	case 'b':
		out[(*n)++] = '\b';
		return NULL;
	case 'f':
		out[(*n)++] = '\f';
		return NULL;
	case 'n':
		out[(*n)++] = '\n';
		return NULL;
	case 'r':
		out[(*n)++] = '\r';
		return NULL;
	case 't':
		out[(*n)++] = '\t';
		return NULL;
	case 'v':
		out[(*n)++] = '\v';
		return NULL;
	case '\\':
	case '\'':
	case '"':
	case '`':
	case '?':
		out[(*n)++] = c;
		return NULL;
	case 'x':
	case 'X':
		digits = 2;
		break;
	case 'u':
		digits = bytes ? -1 : 4;
		break;
	case 'U':
		digits = bytes ? -1 : 8;
		break;
	default:
		if (c >= '0' && c <= '3') {
			if (*i + 2 > end || s[*i] < '0' || s[*i] > '7' || s[*i + 1] < '0' ||
			    s[*i + 1] > '7')
				return "unable to unescape octal sequence in string";
			cp = (uint32_t)((c - '0') * 64 + (s[*i] - '0') * 8 + (s[*i + 1] - '0'));
			*i += 2;
			goto emit;
		}
		return "unable to unescape string";
	}
	if (digits < 0)
		return "unable to unescape string";
	for (int k = 0; k < digits; k++) {
		if (*i >= end || !is_hex(s[*i]))
			return "unable to unescape string";
		cp = cp * 16 + (uint32_t)hexval(s[(*i)++]);
	}
	if (cp > 0x10ffff)
		return "unable to unescape string";
	if (cp >= 0xd800 && cp < 0xe000 && !bytes)
		cp = 0xfffd; /* as Go's utf8.EncodeRune */
emit:
	if (bytes)
		out[(*n)++] = (char)cp;
	else
		put_utf8(out, n, cp);
	return NULL;
}

/* String or bytes literal starting at the quote; prefix flags given. */
static int lex_string(struct cel_lexer *lx, struct cel_token *t, bool raw, bool bytes)
{
	const char *s = lx->src;
	char q = s[lx->pos];
	bool triple = lx->pos + 2 < lx->len && s[lx->pos + 1] == q && s[lx->pos + 2] == q;
	size_t i = lx->pos + (triple ? 3 : 1);
	size_t n = 0;
	char *out = cel_arena_alloc(lx->arena, lx->len - lx->pos + 1);

	if (!out)
		return lex_error(lx, t, "out of memory");
	for (;;) {
		if (i >= lx->len)
			return lex_error(lx, t, "Syntax error: unterminated string literal");
		if (triple && i + 2 < lx->len && s[i] == q && s[i + 1] == q && s[i + 2] == q) {
			i += 3;
			break;
		}
		if (!triple && s[i] == q) {
			i++;
			break;
		}
		if (!triple && (s[i] == '\n' || s[i] == '\r'))
			return lex_error(lx, t, "Syntax error: newline in string literal");
		if (s[i] == '\r') {
			/* newlines normalize to \n, as cel-go's unescape does */
			out[n++] = '\n';
			i += i + 1 < lx->len && s[i + 1] == '\n' ? 2 : 1;
			continue;
		}
		if (s[i] == '\\' && !raw) {
			const char *e;

			i++;
			if (i >= lx->len)
				return lex_error(lx, t,
						 "Syntax error: unterminated string literal");
			e = unescape_one(s, lx->len, &i, bytes, out, &n);
			if (e)
				return lex_error(lx, t, e);
			continue;
		}
		out[n++] = s[i++];
	}
	out[n] = '\0';
	t->kind = bytes ? T_BYTES : T_STRING;
	t->str = out;
	t->str_len = n;
	lx->pos = i;
	return 0;
}

static int lex_number(struct cel_lexer *lx, struct cel_token *t)
{
	const char *s = lx->src;
	size_t i = lx->pos;
	bool is_float = false;

	if (s[i] == '0' && i + 1 < lx->len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		uint64_t v = 0;
		bool over = false;

		i += 2;
		if (i >= lx->len || !is_hex(s[i]))
			return lex_error(lx, t, "Syntax error: invalid hex literal");
		for (; i < lx->len && is_hex(s[i]); i++) {
			if (v > UINT64_MAX / 16)
				over = true;
			v = v * 16 + (uint64_t)hexval(s[i]);
		}
		t->u = v;
		t->overflow = over;
		goto suffix;
	}
	while (i < lx->len && is_digit(s[i]))
		i++;
	if (i + 1 < lx->len && s[i] == '.' && is_digit(s[i + 1])) {
		is_float = true;
		i++;
		while (i < lx->len && is_digit(s[i]))
			i++;
	}
	if (i < lx->len && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;

		if (j < lx->len && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < lx->len && is_digit(s[j])) {
			is_float = true;
			i = j;
			while (i < lx->len && is_digit(s[i]))
				i++;
		}
	}
	if (is_float) {
		char buf[128];
		size_t n = i - lx->pos;

		if (n >= sizeof(buf))
			return lex_error(lx, t, "Syntax error: invalid double literal");
		memcpy(buf, s + lx->pos, n);
		buf[n] = '\0';
		t->kind = T_DOUBLE;
		t->d = strtod(buf, NULL);
		lx->pos = i;
		return 0;
	}
	{
		uint64_t v = 0;
		bool over = false;

		for (size_t k = lx->pos; k < i; k++) {
			unsigned dg = (unsigned)(s[k] - '0');

			if (v > (UINT64_MAX - dg) / 10)
				over = true;
			v = v * 10 + dg;
		}
		t->u = v;
		t->overflow = over;
	}
suffix:
	if (i < lx->len && (s[i] == 'u' || s[i] == 'U')) {
		t->kind = T_UINT;
		i++;
	} else {
		t->kind = T_INT;
	}
	lx->pos = i;
	return 0;
}

static const struct {
	const char *text;
	enum cel_tok kind;
} puncts[] = {
	{"&&", T_AND},	 {"||", T_OR},	    {"==", T_EQ},    {"!=", T_NE},     {"<=", T_LE},
	{">=", T_GE},	 {"<", T_LT},	    {">", T_GT},     {"(", T_LPAREN},  {")", T_RPAREN},
	{"[", T_LBRACK}, {"]", T_RBRACK},   {"{", T_LBRACE}, {"}", T_RBRACE},  {".", T_DOT},
	{",", T_COMMA},	 {"?", T_QUESTION}, {":", T_COLON},  {"!", T_NOT},     {"-", T_MINUS},
	{"+", T_PLUS},	 {"*", T_STAR},	    {"/", T_SLASH},  {"%", T_PERCENT},
};

static int lex_ident(struct cel_lexer *lx, struct cel_token *t)
{
	const char *s = lx->src;
	size_t i = lx->pos;

	while (i < lx->len && (is_ident_start(s[i]) || is_digit(s[i])))
		i++;
	/* string prefixes: r, b, rb, br (any case) directly followed by a quote */
	if (i < lx->len && (s[i] == '"' || s[i] == '\'') && i - lx->pos <= 2) {
		bool raw = false, bytes = false, ok = true;

		for (size_t k = lx->pos; k < i; k++) {
			char c = (char)(s[k] | 0x20);

			if (c == 'r' && !raw)
				raw = true;
			else if (c == 'b' && !bytes)
				bytes = true;
			else
				ok = false;
		}
		if (ok) {
			lx->pos = i;
			return lex_string(lx, t, raw, bytes);
		}
	}
	t->kind = T_IDENT;
	t->len = i - lx->pos;
	if (t->len == 2 && memcmp(s + lx->pos, "in", 2) == 0)
		t->kind = T_IN;
	lx->pos = i;
	return 0;
}

int cel_lex_next(struct cel_lexer *lx, struct cel_token *t)
{
	const char *s = lx->src;

	memset(t, 0, sizeof(*t));
	skip_space(lx);
	t->pos = (uint32_t)lx->pos;
	t->text = s + lx->pos;
	if (lx->pos >= lx->len) {
		t->kind = T_EOF;
		return 0;
	}
	if (s[lx->pos] == '"' || s[lx->pos] == '\'')
		return lex_string(lx, t, false, false);
	if (is_digit(s[lx->pos]) ||
	    (s[lx->pos] == '.' && lx->pos + 1 < lx->len && is_digit(s[lx->pos + 1])))
		return lex_number(lx, t);
	if (is_ident_start(s[lx->pos]))
		return lex_ident(lx, t);
	for (size_t k = 0; k < sizeof(puncts) / sizeof(puncts[0]); k++) {
		size_t n = strlen(puncts[k].text);

		if (lx->pos + n <= lx->len && memcmp(s + lx->pos, puncts[k].text, n) == 0) {
			t->kind = puncts[k].kind;
			t->len = n;
			lx->pos += n;
			return 0;
		}
	}
	t->len = 1;
	return lex_error(lx, t, "Syntax error: token recognition error");
}
