/* The functions of the DRA selector environment this evaluator supports:
 * operators, string functions, and the Kubernetes quantity and semver
 * libraries, with cel-go's runtime errors ("integer overflow", "division
 * by zero", "no such key: x", ...). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cel_int.h"
#include "schedext/common.h"

static struct cel_val v_bool(bool b)
{
	return (struct cel_val){.kind = K_BOOL, .b = b};
}

static struct cel_val v_int(int64_t i)
{
	return (struct cel_val){.kind = K_INT, .i = i};
}

static struct cel_val v_uint(uint64_t u)
{
	return (struct cel_val){.kind = K_UINT, .u = u};
}

static struct cel_val v_double(double d)
{
	return (struct cel_val){.kind = K_DOUBLE, .d = d};
}

static struct cel_val v_qty(sx_nano q)
{
	return (struct cel_val){.kind = K_QTY, .q = q};
}

static char op_char(const struct cel_node *n)
{
	return n->name[1]; /* "_+_" → '+' */
}

/* ---- arithmetic ---- */

static struct cel_val int_arith(struct cel_eval *ev, const struct cel_node *n,
				const struct cel_val *a)
{
	int64_t x = a[0].i, y = a[1].i, r = 0;
	bool over = false;

	switch (op_char(n)) {
	case '+':
		over = __builtin_add_overflow(x, y, &r);
		break;
	case '-':
		over = __builtin_sub_overflow(x, y, &r);
		break;
	case '*':
		over = __builtin_mul_overflow(x, y, &r);
		break;
	case '/':
	case '%':
		if (y == 0)
			return cel_err(ev,
				       op_char(n) == '/' ? "division by zero" : "modulus by zero");
		if (x == INT64_MIN && y == -1)
			over = true;
		else
			r = op_char(n) == '/' ? x / y : x % y;
		break;
	}
	if (over)
		return cel_err(ev, "integer overflow");
	return v_int(r);
}

static struct cel_val uint_arith(struct cel_eval *ev, const struct cel_node *n,
				 const struct cel_val *a)
{
	uint64_t x = a[0].u, y = a[1].u, r = 0;
	bool over = false;

	switch (op_char(n)) {
	case '+':
		over = __builtin_add_overflow(x, y, &r);
		break;
	case '-':
		over = __builtin_sub_overflow(x, y, &r);
		break;
	case '*':
		over = __builtin_mul_overflow(x, y, &r);
		break;
	case '/':
	case '%':
		if (y == 0)
			return cel_err(ev,
				       op_char(n) == '/' ? "division by zero" : "modulus by zero");
		r = op_char(n) == '/' ? x / y : x % y;
		break;
	}
	if (over)
		return cel_err(ev, "unsigned integer overflow");
	return v_uint(r);
}

static struct cel_val double_arith(struct cel_eval *ev, const struct cel_node *n,
				   const struct cel_val *a)
{
	double x = a[0].d, y = a[1].d;

	switch (op_char(n)) {
	case '+':
		return v_double(x + y);
	case '-':
		return v_double(x - y);
	case '*':
		return v_double(x * y);
	default:
		return v_double(x / y);
	}
}

static struct cel_val negate(struct cel_eval *ev, const struct cel_node *n, const struct cel_val *a)
{
	if (a[0].kind == K_DOUBLE)
		return v_double(-a[0].d);
	if (a[0].i == INT64_MIN)
		return cel_err(ev, "integer overflow");
	return v_int(-a[0].i);
}

static struct cel_val logical_not(struct cel_eval *ev, const struct cel_node *n,
				  const struct cel_val *a)
{
	return v_bool(!a[0].b);
}

static struct cel_val concat(struct cel_eval *ev, const struct cel_node *n, const struct cel_val *a)
{
	struct cel_val r = {.kind = a[0].kind};

	if (a[0].kind == K_LIST) {
		size_t cnt = a[0].l.n + a[1].l.n;
		struct cel_val *items =
			cel_arena_alloc(&ev->arena, (cnt ? cnt : 1) * sizeof(*items));

		if (!items)
			return cel_oom(ev);
		if (a[0].l.n)
			memcpy(items, a[0].l.items, a[0].l.n * sizeof(*items));
		if (a[1].l.n)
			memcpy(items + a[0].l.n, a[1].l.items, a[1].l.n * sizeof(*items));
		r.l.items = items;
		r.l.n = cnt;
		return r;
	}
	char *p = cel_arena_alloc(&ev->arena, a[0].s.n + a[1].s.n + 1);

	if (!p)
		return cel_oom(ev);
	memcpy(p, a[0].s.p, a[0].s.n);
	memcpy(p + a[0].s.n, a[1].s.p, a[1].s.n);
	p[a[0].s.n + a[1].s.n] = '\0';
	r.s.p = p;
	r.s.n = a[0].s.n + a[1].s.n;
	return r;
}

/* ---- ordering ---- */

static int cmp_double(double x, double y)
{
	return x < y ? -1 : x > y ? 1 : 0;
}

/* -1/0/1, or 2 when unordered (NaN). */
static int order(const struct cel_val *a, const struct cel_val *b)
{
	if ((a->kind == K_DOUBLE && isnan(a->d)) || (b->kind == K_DOUBLE && isnan(b->d)))
		return 2;
	switch (a->kind) {
	case K_BOOL:
		return (int)a->b - (int)b->b;
	case K_STRING:
	case K_BYTES: {
		size_t m = a->s.n < b->s.n ? a->s.n : b->s.n;
		int c = m ? memcmp(a->s.p, b->s.p, m) : 0;

		if (c)
			return c < 0 ? -1 : 1;
		return a->s.n < b->s.n ? -1 : a->s.n > b->s.n;
	}
	case K_INT:
		if (b->kind == K_INT)
			return a->i < b->i ? -1 : a->i > b->i;
		if (b->kind == K_UINT)
			return a->i < 0 ? -1 : (uint64_t)a->i < b->u ? -1 : (uint64_t)a->i > b->u;
		if (b->d < -9223372036854775808.0)
			return 1;
		if (b->d >= 9223372036854775808.0)
			return -1;
		return cmp_double((double)a->i, b->d);
	case K_UINT:
		if (b->kind == K_UINT)
			return a->u < b->u ? -1 : a->u > b->u;
		if (b->kind == K_INT)
			return -order(b, a);
		if (b->d < 0)
			return 1;
		if (b->d >= 18446744073709551616.0)
			return -1;
		return cmp_double((double)a->u, b->d);
	case K_DOUBLE:
		if (b->kind == K_DOUBLE)
			return cmp_double(a->d, b->d);
		return -order(b, a);
	default:
		return 2;
	}
}

static struct cel_val compare(struct cel_eval *ev, const struct cel_node *n,
			      const struct cel_val *a)
{
	int c = order(&a[0], &a[1]);
	bool eq = n->name[2] == '=';

	if (c == 2)
		return cel_err(ev, "NaN values cannot be ordered");
	if (op_char(n) == '<')
		return v_bool(c < 0 || (eq && c == 0));
	return v_bool(c > 0 || (eq && c == 0));
}

static struct cel_val equality(struct cel_eval *ev, const struct cel_node *n,
			       const struct cel_val *a)
{
	struct cel_val r = cel_equals(ev, &a[0], &a[1]);

	if (r.kind == K_BOOL && n->name[1] == '!')
		r.b = !r.b;
	return r;
}

static struct cel_val in(struct cel_eval *ev, const struct cel_node *n, const struct cel_val *a)
{
	struct cel_val out;

	if (a[1].kind == K_MAP) {
		if (a[0].kind != K_STRING)
			return v_bool(false);
		return v_bool(cel_map_find(ev, &a[1], a[0].s.p, a[0].s.n, true, &out));
	}
	if (a[1].kind != K_LIST)
		return cel_err(ev, "no such overload");
	/* cel-go: true if any element is equal, else the first error */
	struct cel_val err = {.kind = K_BOOL};

	for (size_t i = 0; i < a[1].l.n; i++) {
		struct cel_val r = cel_equals(ev, &a[0], &a[1].l.items[i]);

		if (r.kind == K_BOOL && r.b)
			return r;
		if (r.kind == K_ERR && err.kind != K_ERR)
			err = r;
	}
	return err.kind == K_ERR ? err : v_bool(false);
}

/* ---- strings ---- */

static struct cel_val size_fn(struct cel_eval *ev, const struct cel_node *n,
			      const struct cel_val *a)
{
	switch (a[0].kind) {
	case K_STRING:
		return v_int((int64_t)cel_utf8_len(a[0].s.p, a[0].s.n));
	case K_BYTES:
		return v_int((int64_t)a[0].s.n);
	case K_LIST:
		return v_int((int64_t)a[0].l.n);
	default:
		return v_int((int64_t)cel_map_size(ev, &a[0]));
	}
}

static bool name_eq(const struct cel_node *n, const char *s)
{
	return n->name_len == strlen(s) && memcmp(n->name, s, n->name_len) == 0;
}

static struct cel_val str_test(struct cel_eval *ev, const struct cel_node *n,
			       const struct cel_val *a)
{
	const char *s = a[0].s.p, *t = a[1].s.p;
	size_t sn = a[0].s.n, tn = a[1].s.n;

	if (name_eq(n, "startsWith"))
		return v_bool(tn <= sn && memcmp(s, t, tn) == 0);
	if (name_eq(n, "endsWith"))
		return v_bool(tn <= sn && memcmp(s + sn - tn, t, tn) == 0);
	return v_bool(tn == 0 || memmem(s, sn, t, tn) != NULL);
}

static struct cel_val str_case(struct cel_eval *ev, const struct cel_node *n,
			       const struct cel_val *a)
{
	bool lower = n->name[0] == 'l';
	char *p = cel_arena_alloc(&ev->arena, a[0].s.n + 1);
	struct cel_val r = {.kind = K_STRING};

	if (!p)
		return cel_oom(ev);
	for (size_t i = 0; i < a[0].s.n; i++) {
		char c = a[0].s.p[i];

		if (lower && c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		else if (!lower && c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		p[i] = c;
	}
	p[a[0].s.n] = '\0';
	r.s.p = p;
	r.s.n = a[0].s.n;
	return r;
}

static struct cel_val matches(struct cel_eval *ev, const struct cel_node *n,
			      const struct cel_val *a)
{
	regex_t local;
	const regex_t *re = n->re;
	regmatch_t m[1];
	char msg[256];
	int rc;

	if (memchr(a[0].s.p, '\0', a[0].s.n) && !re)
		return cel_err(ev, "matches: NUL bytes are not supported by this evaluator");
	if (!re) {
		if (cel_regex_compile(a[1].s.p, a[1].s.n, &local, msg, sizeof(msg)) != 0)
			return strcmp(msg, "out of memory") ? cel_err(ev, "%s", msg) : cel_oom(ev);
		re = &local;
	}
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)a[0].s.n;
	rc = regexec(re, a[0].s.p ? a[0].s.p : "", 1, m, REG_STARTEND);
	if (re == &local)
		regfree(&local);
	return v_bool(rc == 0);
}

/* ---- quantity (k8s.io/apiserver/pkg/cel/library/quantity.go) ---- */

static const char *quantity_error(const char *s, size_t n, int rc)
{
	size_t i = 0;
	bool digits = false;

	if (rc == SX_ETOOBIG)
		return "quantity too large for this evaluator";
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); i++)
		digits = true;
	if (!digits)
		goto format;
	while (i < n && strchr("eEinumkKMGTP", s[i]) && s[i])
		i++;
	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == n)
		return "unable to parse quantity's suffix";
format:
	return "quantities must match the regular expression "
	       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
}

static struct cel_val quantity_fn(struct cel_eval *ev, const struct cel_node *n,
				  const struct cel_val *a)
{
	sx_nano q;
	int rc = sx_quantity_parse(a[0].s.p, a[0].s.n, &q);

	if (name_eq(n, "isQuantity"))
		return v_bool(rc == 0);
	if (rc != 0)
		return cel_err(ev, "%s", quantity_error(a[0].s.p, a[0].s.n, rc));
	return v_qty(q);
}

static int qcmp(const struct cel_val *a)
{
	return a[0].q < a[1].q ? -1 : a[0].q > a[1].q;
}

static int scmp(const struct cel_val *a)
{
	return cel_semver_cmp(&a[0].v, &a[1].v);
}

static struct cel_val ordered(struct cel_eval *ev, const struct cel_node *n,
			      const struct cel_val *a)
{
	int c = a[0].kind == K_QTY ? qcmp(a) : scmp(a);

	if (name_eq(n, "compareTo"))
		return v_int(c);
	if (name_eq(n, "isGreaterThan"))
		return v_bool(c > 0);
	return v_bool(c < 0);
}

static struct cel_val qty_arith(struct cel_eval *ev, const struct cel_node *n,
				const struct cel_val *a)
{
	sx_nano y = a[1].kind == K_QTY ? a[1].q : (sx_nano)a[1].i * SX_NANO_PER_UNIT;
	sx_nano r;
	bool over = n->name[0] == 'a' ? __builtin_add_overflow(a[0].q, y, &r)
				      : __builtin_sub_overflow(a[0].q, y, &r);

	if (over)
		return cel_err(ev, "quantity overflow");
	return v_qty(r);
}

static bool qty_int(sx_nano q, int64_t *out)
{
	sx_nano v;

	if (q % SX_NANO_PER_UNIT != 0)
		return false;
	v = q / SX_NANO_PER_UNIT;
	if (v > INT64_MAX || v < INT64_MIN)
		return false;
	*out = (int64_t)v;
	return true;
}

/* resource.Quantity.AsApproximateFloat64: mantissa * 10^exponent with
 * the shortest mantissa of the exact value. */
static double qty_float(sx_nano q)
{
	int e = -9;
	double pow = 1;

	if (q == 0)
		return 0;
	while (q % 10 == 0) {
		q /= 10;
		e++;
	}
	for (int k = 0; k < (e < 0 ? -e : e); k++)
		pow *= 10;
	return e < 0 ? (double)q * (1.0 / pow) : (double)q * pow;
}

static struct cel_val qty_conv(struct cel_eval *ev, const struct cel_node *n,
			       const struct cel_val *a)
{
	int64_t i = 0;
	bool ok = qty_int(a[0].q, &i);

	if (name_eq(n, "sign"))
		return v_int(a[0].q < 0 ? -1 : a[0].q > 0);
	if (name_eq(n, "isInteger"))
		return v_bool(ok);
	if (name_eq(n, "asApproximateFloat"))
		return v_double(qty_float(a[0].q));
	if (!ok)
		return cel_err(ev, "cannot convert value to integer");
	return v_int(i);
}

/* ---- semver (k8s.io/apiserver/pkg/cel/library/semverlib.go) ---- */

static struct cel_val semver_fn(struct cel_eval *ev, const struct cel_node *n,
				const struct cel_val *a)
{
	struct cel_val r = {.kind = K_SEMVER};
	bool normalize = n->nargs == 2 && a[1].b;
	char msg[256];
	int rc =
		cel_semver_parse(a[0].s.p, a[0].s.n, normalize, &r.v, msg, sizeof(msg), &ev->arena);

	if (rc != 0 && strcmp(msg, "out of memory") == 0)
		return cel_oom(ev);
	if (name_eq(n, "isSemver"))
		return v_bool(rc == 0);
	if (rc != 0)
		return strcmp(msg, "out of memory") ? cel_err(ev, "%s", msg) : cel_oom(ev);
	return r;
}

static struct cel_val semver_part(struct cel_eval *ev, const struct cel_node *n,
				  const struct cel_val *a)
{
	if (n->name[0] == 'p')
		return v_int((int64_t)a[0].v.patch);
	if (n->name[1] == 'a')
		return v_int((int64_t)a[0].v.major);
	return v_int((int64_t)a[0].v.minor);
}

/* ---- conversions (cel-go's ConvertToType) ---- */

static struct cel_val to_int(struct cel_eval *ev, const struct cel_node *n, const struct cel_val *a)
{
	char buf[64];
	char *end;
	long long v;

	switch (a[0].kind) {
	case K_INT:
		return a[0];
	case K_UINT:
		if (a[0].u > INT64_MAX)
			return cel_err(ev, "integer overflow");
		return v_int((int64_t)a[0].u);
	case K_DOUBLE:
		if (isnan(a[0].d) || a[0].d <= -9223372036854775808.0 ||
		    a[0].d >= 9223372036854775808.0)
			return cel_err(ev, "integer overflow");
		return v_int((int64_t)a[0].d);
	default:
		break;
	}
	if (a[0].s.n == 0 || a[0].s.n >= sizeof(buf) || memchr(a[0].s.p, '\0', a[0].s.n))
		goto bad;
	memcpy(buf, a[0].s.p, a[0].s.n);
	buf[a[0].s.n] = '\0';
	if (!(buf[0] == '-' || buf[0] == '+' || (buf[0] >= '0' && buf[0] <= '9')))
		goto bad;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (*end || end == buf || (end == buf + 1 && (buf[0] == '-' || buf[0] == '+')))
		goto bad;
	if (errno == ERANGE)
		return cel_err(ev, "strconv.ParseInt: parsing \"%s\": value out of range", buf);
	return v_int(v);
bad:
	return cel_err(ev, "strconv.ParseInt: parsing \"%.*s\": invalid syntax", (int)a[0].s.n,
		       a[0].s.p);
}

static struct cel_val to_uint(struct cel_eval *ev, const struct cel_node *n,
			      const struct cel_val *a)
{
	char buf[64];
	char *end;
	unsigned long long v;

	switch (a[0].kind) {
	case K_UINT:
		return a[0];
	case K_INT:
		if (a[0].i < 0)
			return cel_err(ev, "unsigned integer overflow");
		return v_uint((uint64_t)a[0].i);
	case K_DOUBLE:
		if (isnan(a[0].d) || a[0].d < 0 || a[0].d >= 18446744073709551616.0)
			return cel_err(ev, "unsigned integer overflow");
		return v_uint((uint64_t)a[0].d);
	default:
		break;
	}
	if (a[0].s.n == 0 || a[0].s.n >= sizeof(buf) || memchr(a[0].s.p, '\0', a[0].s.n))
		goto bad;
	memcpy(buf, a[0].s.p, a[0].s.n);
	buf[a[0].s.n] = '\0';
	if (!(buf[0] >= '0' && buf[0] <= '9'))
		goto bad;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (*end)
		goto bad;
	if (errno == ERANGE)
		return cel_err(ev, "strconv.ParseUint: parsing \"%s\": value out of range", buf);
	return v_uint(v);
bad:
	return cel_err(ev, "strconv.ParseUint: parsing \"%.*s\": invalid syntax", (int)a[0].s.n,
		       a[0].s.p);
}

static struct cel_val to_double(struct cel_eval *ev, const struct cel_node *n,
				const struct cel_val *a)
{
	char buf[128];
	char *end;
	double d;

	switch (a[0].kind) {
	case K_DOUBLE:
		return a[0];
	case K_INT:
		return v_double((double)a[0].i);
	case K_UINT:
		return v_double((double)a[0].u);
	default:
		break;
	}
	if (a[0].s.n == 0 || a[0].s.n >= sizeof(buf) || memchr(a[0].s.p, '\0', a[0].s.n))
		goto bad;
	memcpy(buf, a[0].s.p, a[0].s.n);
	buf[a[0].s.n] = '\0';
	/* decimal forms and inf/nan only: Go's hex floats and underscores are
	 * not C's */
	for (size_t i = 0; i < a[0].s.n; i++)
		if (!strchr("0123456789+-.eEinftyaINFTYA", buf[i]))
			goto bad;
	errno = 0;
	d = strtod(buf, &end);
	if (*end || end == buf)
		goto bad;
	if (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL))
		return cel_err(ev, "strconv.ParseFloat: parsing \"%s\": value out of range", buf);
	return v_double(d);
bad:
	return cel_err(ev, "strconv.ParseFloat: parsing \"%.*s\": invalid syntax", (int)a[0].s.n,
		       a[0].s.p);
}

/* Go's fmt %g (cel-go's string(double)): the shortest digits that read
 * back as d, exponent form below 1e-4 and from 1e6 on. */
static int format_double(double d, char *out, size_t len)
{
	char tmp[40];
	int prec, exp;

	if (isnan(d))
		return snprintf(out, len, "NaN");
	if (isinf(d))
		return snprintf(out, len, d > 0 ? "+Inf" : "-Inf");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	exp = atoi(strchr(tmp, 'e') + 1);
	if (exp < -4 || exp >= 6)
		return snprintf(out, len, "%s", tmp);
	return snprintf(out, len, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
}

static struct cel_val to_string(struct cel_eval *ev, const struct cel_node *n,
				const struct cel_val *a)
{
	struct cel_val r = {.kind = K_STRING};
	char buf[64];
	char *p;
	int len = 0;

	switch (a[0].kind) {
	case K_STRING:
		return a[0];
	case K_BYTES:
		if (!cel_utf8_valid(a[0].s.p, a[0].s.n))
			return cel_err(ev, "invalid UTF-8 in bytes, cannot convert to string");
		r.s = a[0].s;
		return r;
	case K_BOOL:
		len = snprintf(buf, sizeof(buf), "%s", a[0].b ? "true" : "false");
		break;
	case K_INT:
		len = snprintf(buf, sizeof(buf), "%lld", (long long)a[0].i);
		break;
	case K_UINT:
		len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)a[0].u);
		break;
	default:
		len = format_double(a[0].d, buf, sizeof(buf));
		break;
	}
	p = cel_arena_alloc(&ev->arena, (size_t)len + 1);
	if (!p)
		return cel_oom(ev);
	memcpy(p, buf, (size_t)len + 1);
	r.s.p = p;
	r.s.n = (size_t)len;
	return r;
}

static struct cel_val to_bool(struct cel_eval *ev, const struct cel_node *n,
			      const struct cel_val *a)
{
	static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};

	if (a[0].kind == K_BOOL)
		return a[0];
	for (size_t i = 0; i < 6; i++) {
		if (strlen(yes[i]) == a[0].s.n && memcmp(yes[i], a[0].s.p, a[0].s.n) == 0)
			return v_bool(true);
		if (strlen(no[i]) == a[0].s.n && memcmp(no[i], a[0].s.p, a[0].s.n) == 0)
			return v_bool(false);
	}
	return cel_err(ev, "strconv.ParseBool: parsing \"%.*s\": invalid syntax", (int)a[0].s.n,
		       a[0].s.p);
}

static struct cel_val to_bytes(struct cel_eval *ev, const struct cel_node *n,
			       const struct cel_val *a)
{
	struct cel_val r = a[0];

	r.kind = K_BYTES;
	return r;
}

static struct cel_val identity(struct cel_eval *ev, const struct cel_node *n,
			       const struct cel_val *a)
{
	return a[0];
}

/* ---- the table, grouped by name (the checker relies on it) ---- */

#define OV(nm, mem, n, a0, a1, a2, res, cost, fn)                                                  \
	{                                                                                          \
		nm, mem, n, {A_##a0, A_##a1, A_##a2}, K_##res, C_##cost, fn                        \
	}
#define ORD(nm)                                                                                    \
	OV(nm, 0, 2, BOOL, BOOL, NONE, BOOL, ONE, compare),                                        \
		OV(nm, 0, 2, INT, INT, NONE, BOOL, ONE, compare),                                  \
		OV(nm, 0, 2, INT, UINT, NONE, BOOL, ONE, compare),                                 \
		OV(nm, 0, 2, INT, DOUBLE, NONE, BOOL, ONE, compare),                               \
		OV(nm, 0, 2, UINT, INT, NONE, BOOL, ONE, compare),                                 \
		OV(nm, 0, 2, UINT, UINT, NONE, BOOL, ONE, compare),                                \
		OV(nm, 0, 2, UINT, DOUBLE, NONE, BOOL, ONE, compare),                              \
		OV(nm, 0, 2, DOUBLE, INT, NONE, BOOL, ONE, compare),                               \
		OV(nm, 0, 2, DOUBLE, UINT, NONE, BOOL, ONE, compare),                              \
		OV(nm, 0, 2, DOUBLE, DOUBLE, NONE, BOOL, ONE, compare),                            \
		OV(nm, 0, 2, STRING, STRING, NONE, BOOL, CMP, compare),                            \
		OV(nm, 0, 2, BYTES, BYTES, NONE, BOOL, CMP, compare)
#define ARITH(nm)                                                                                  \
	OV(nm, 0, 2, INT, INT, NONE, INT, ONE, int_arith),                                         \
		OV(nm, 0, 2, UINT, UINT, NONE, UINT, ONE, uint_arith),                             \
		OV(nm, 0, 2, DOUBLE, DOUBLE, NONE, DOUBLE, ONE, double_arith)

const struct cel_overload cel_overloads[] = {
	OV("_==_", 0, 2, ANY, ANY, NONE, BOOL, CMP, equality),
	OV("_!=_", 0, 2, ANY, ANY, NONE, BOOL, CMP, equality),
	OV("@in", 0, 2, ANY, ANY, NONE, BOOL, IN, in),
	ORD("_<_"),
	ORD("_<=_"),
	ORD("_>_"),
	ORD("_>=_"),
	ARITH("_+_"),
	OV("_+_", 0, 2, STRING, STRING, NONE, STRING, CONCAT, concat),
	OV("_+_", 0, 2, BYTES, BYTES, NONE, BYTES, CONCAT, concat),
	OV("_+_", 0, 2, LIST, LIST, NONE, LIST, CONCAT, concat),
	ARITH("_-_"),
	ARITH("_*_"),
	ARITH("_/_"),
	OV("_%_", 0, 2, INT, INT, NONE, INT, ONE, int_arith),
	OV("_%_", 0, 2, UINT, UINT, NONE, UINT, ONE, uint_arith),
	OV("-_", 0, 1, INT, NONE, NONE, INT, ONE, negate),
	OV("-_", 0, 1, DOUBLE, NONE, NONE, DOUBLE, ONE, negate),
	OV("!_", 0, 1, BOOL, NONE, NONE, BOOL, ONE, logical_not),
	OV("size", 0, 1, STRING, NONE, NONE, INT, ONE, size_fn),
	OV("size", 0, 1, BYTES, NONE, NONE, INT, ONE, size_fn),
	OV("size", 0, 1, LIST, NONE, NONE, INT, ONE, size_fn),
	OV("size", 0, 1, MAP, NONE, NONE, INT, ONE, size_fn),
	OV("size", 1, 1, STRING, NONE, NONE, INT, ONE, size_fn),
	OV("size", 1, 1, BYTES, NONE, NONE, INT, ONE, size_fn),
	OV("size", 1, 1, LIST, NONE, NONE, INT, ONE, size_fn),
	OV("size", 1, 1, MAP, NONE, NONE, INT, ONE, size_fn),
	OV("startsWith", 1, 2, STRING, STRING, NONE, BOOL, ARG1, str_test),
	OV("endsWith", 1, 2, STRING, STRING, NONE, BOOL, ARG1, str_test),
	OV("contains", 1, 2, STRING, STRING, NONE, BOOL, CONTAINS, str_test),
	OV("matches", 1, 2, STRING, STRING, NONE, BOOL, MATCHES, matches),
	OV("matches", 0, 2, STRING, STRING, NONE, BOOL, MATCHES, matches),
	OV("lowerAscii", 1, 1, STRING, NONE, NONE, STRING, ARG0, str_case),
	OV("upperAscii", 1, 1, STRING, NONE, NONE, STRING, ARG0, str_case),
	OV("quantity", 0, 1, STRING, NONE, NONE, QTY, ARG0, quantity_fn),
	OV("isQuantity", 0, 1, STRING, NONE, NONE, BOOL, ARG0, quantity_fn),
	OV("sign", 0, 1, QTY, NONE, NONE, INT, ONE, qty_conv),
	OV("isGreaterThan", 1, 2, QTY, QTY, NONE, BOOL, ONE, ordered),
	OV("isGreaterThan", 1, 2, SEMVER, SEMVER, NONE, BOOL, ONE, ordered),
	OV("isLessThan", 1, 2, QTY, QTY, NONE, BOOL, ONE, ordered),
	OV("isLessThan", 1, 2, SEMVER, SEMVER, NONE, BOOL, ONE, ordered),
	OV("compareTo", 1, 2, QTY, QTY, NONE, INT, ONE, ordered),
	OV("compareTo", 1, 2, SEMVER, SEMVER, NONE, INT, ONE, ordered),
	OV("add", 1, 2, QTY, QTY, NONE, QTY, ONE, qty_arith),
	OV("add", 1, 2, QTY, INT, NONE, QTY, ONE, qty_arith),
	OV("sub", 1, 2, QTY, QTY, NONE, QTY, ONE, qty_arith),
	OV("sub", 1, 2, QTY, INT, NONE, QTY, ONE, qty_arith),
	OV("asInteger", 1, 1, QTY, NONE, NONE, INT, ONE, qty_conv),
	OV("asApproximateFloat", 1, 1, QTY, NONE, NONE, DOUBLE, ONE, qty_conv),
	OV("isInteger", 1, 1, QTY, NONE, NONE, BOOL, ONE, qty_conv),
	OV("semver", 0, 1, STRING, NONE, NONE, SEMVER, ARG0, semver_fn),
	OV("semver", 0, 2, STRING, BOOL, NONE, SEMVER, ARG0, semver_fn),
	OV("isSemver", 0, 1, STRING, NONE, NONE, BOOL, ARG0, semver_fn),
	OV("isSemver", 0, 2, STRING, BOOL, NONE, BOOL, ARG0, semver_fn),
	OV("int", 0, 1, INT, NONE, NONE, INT, ONE, to_int),
	OV("int", 0, 1, UINT, NONE, NONE, INT, ONE, to_int),
	OV("int", 0, 1, DOUBLE, NONE, NONE, INT, ONE, to_int),
	OV("int", 0, 1, STRING, NONE, NONE, INT, ONE, to_int),
	OV("uint", 0, 1, INT, NONE, NONE, UINT, ONE, to_uint),
	OV("uint", 0, 1, UINT, NONE, NONE, UINT, ONE, to_uint),
	OV("uint", 0, 1, DOUBLE, NONE, NONE, UINT, ONE, to_uint),
	OV("uint", 0, 1, STRING, NONE, NONE, UINT, ONE, to_uint),
	OV("double", 0, 1, INT, NONE, NONE, DOUBLE, ONE, to_double),
	OV("double", 0, 1, UINT, NONE, NONE, DOUBLE, ONE, to_double),
	OV("double", 0, 1, DOUBLE, NONE, NONE, DOUBLE, ONE, to_double),
	OV("double", 0, 1, STRING, NONE, NONE, DOUBLE, ONE, to_double),
	OV("string", 0, 1, STRING, NONE, NONE, STRING, ONE, to_string),
	OV("string", 0, 1, BYTES, NONE, NONE, STRING, ONE, to_string),
	OV("string", 0, 1, BOOL, NONE, NONE, STRING, ONE, to_string),
	OV("string", 0, 1, INT, NONE, NONE, STRING, ONE, to_string),
	OV("string", 0, 1, UINT, NONE, NONE, STRING, ONE, to_string),
	OV("string", 0, 1, DOUBLE, NONE, NONE, STRING, ONE, to_string),
	OV("bool", 0, 1, BOOL, NONE, NONE, BOOL, ONE, to_bool),
	OV("bool", 0, 1, STRING, NONE, NONE, BOOL, ONE, to_bool),
	OV("bytes", 0, 1, BYTES, NONE, NONE, BYTES, ONE, to_bytes),
	OV("bytes", 0, 1, STRING, NONE, NONE, BYTES, ONE, to_bytes),
	OV("dyn", 0, 1, ANY, NONE, NONE, DYN, ONE, identity),
	OV("major", 1, 1, SEMVER, NONE, NONE, INT, ONE, semver_part),
	OV("minor", 1, 1, SEMVER, NONE, NONE, INT, ONE, semver_part),
	OV("patch", 1, 1, SEMVER, NONE, NONE, INT, ONE, semver_part),
};

const size_t cel_n_overloads = sizeof(cel_overloads) / sizeof(cel_overloads[0]);

static uint64_t tenth(uint64_t n)
{
	return (n + 9) / 10;
}

uint64_t cel_call_cost(const struct cel_overload *ov, const struct cel_val *a)
{
	uint64_t x, y;

	switch (ov->cost) {
	case C_ONE:
		return 1;
	case C_CMP:
		x = cel_val_size(NULL, &a[0]);
		y = cel_val_size(NULL, &a[1]);
		return tenth(x < y ? x : y);
	case C_CONCAT:
		if (a[0].kind == K_LIST)
			return 1;
		return tenth(cel_val_size(NULL, &a[0]) + cel_val_size(NULL, &a[1]));
	case C_ARG0:
		return tenth(cel_val_size(NULL, &a[0]));
	case C_ARG1:
		return tenth(cel_val_size(NULL, &a[1]));
	case C_CONTAINS:
		return tenth(cel_val_size(NULL, &a[0])) * tenth(cel_val_size(NULL, &a[1]));
	case C_MATCHES:
		return tenth(1 + cel_val_size(NULL, &a[0])) * ((cel_val_size(NULL, &a[1]) + 3) / 4);
	case C_IN:
		return a[1].kind == K_LIST ? a[1].l.n : 1;
	}
	return 1;
}

/* Functions of upstream's environment outside this evaluator's subset:
 * rejected by name so the message says so. */
static const char *const unsupported[] = {
	"all",
	"exists",
	"exists_one",
	"map",
	"filter",
	"type",
	"duration",
	"timestamp",
	"split",
	"join",
	"replace",
	"indexOf",
	"lastIndexOf",
	"substring",
	"trim",
	"charAt",
	"format",
	"quote",
	"reverse",
	"find",
	"findAll",
	"url",
	"isURL",
	"ip",
	"isIP",
	"cidr",
	"isCIDR",
	"isSorted",
	"sum",
	"min",
	"max",
	"mul",
	"div",
	"divInt",
	"includes",
	"getHours",
	"getMinutes",
	"getSeconds",
	"getFullYear",
	"getMonth",
	"getDayOfMonth",
	"getDayOfWeek",
	"getDayOfYear",
	"getDate",
	"getMilliseconds",
	"optMap",
	"optFlatMap",
	"hasValue",
	"value",
	"or",
	"orValue",
	"of",
	"none",
	"flatten",
	"slice",
	"distinct",
	"sort",
	"sortBy",
	"range",
	"first",
	"last",
	"base64",
	"math",
	"strings",
	"sets",
	"lists",
	"encode",
	"decode",
	"abs",
	"ceil",
	"floor",
	"round",
	"trunc",
	"sqrt",
	"greatest",
	"least",
	"contains_all",
	"intersects",
	"equivalent",
	"transformList",
	"transformMap",
	"transformMapEntry",
	"compare",
	"semverCompare",
};

bool cel_unsupported_function(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
		if (strlen(unsupported[i]) == len && memcmp(unsupported[i], name, len) == 0)
			return true;
	return false;
}
