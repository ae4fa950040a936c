/* resource.Quantity parsing (upstream staging/src/k8s.io/apimachinery/
 * pkg/api/resource/quantity.go, ParseQuantity).
 *
 * The scanner follows apimachinery's parseQuantityString: an optional sign,
 * digits, an optional "." and digits, then a suffix made of the letters
 * "eEinumkKMGTP", an optional sign and digits. The suffix must then be one
 * of the known decimal/binary suffixes or an exponent ("e3", "E-6").
 * The number needs at least one digit (the grammar in quantity.go's head): ".5", "5." and
 * "1.G" are accepted, while "+", "." or a bare "k" are rejected (upstream
 * reads those as zero; the API server never emits them, so nothing that a
 * cluster holds is refused).
 *
 * The value is computed exactly from the digit string: digits x 2^bin x
 * 10^(exp + 9) nano-units, with any non-zero remainder below one nano-unit
 * rounded away from zero (upstream rounds with inf.RoundUp). Nothing loops
 * on the exponent, so "1e999999" costs as much as "1e9".
 */
#include "schedext/quantity.h"

#include <string.h>

#include "schedext/common.h"

/* 2^63-1 units in nano-units: the largest magnitude we accept. */
#define MAX_NANO ((sx_nano)INT64_MAX * SX_NANO_PER_UNIT)
/* Exponents are clamped here: far beyond any input length, so a clamped
 * exponent still overflows (or rounds to one nano-unit) like the real one. */
#define EXP_CLAMP 1000000000000000L

struct scan {
	bool negative;
	const char *digits; /* integer digits then fraction digits, '.' skipped */
	size_t nint, nfrac;
	const char *suffix;
	size_t nsuffix;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static size_t span_digits(const char *s, size_t i, size_t len)
{
	while (i < len && is_digit(s[i]))
		i++;
	return i;
}

/* Splits s into sign, number and suffix; false when the shape is wrong. */
static bool scan_quantity(const char *s, size_t len, struct scan *sc)
{
	size_t i = 0, j;

	memset(sc, 0, sizeof(*sc));
	if (i < len && (s[i] == '+' || s[i] == '-'))
		sc->negative = s[i++] == '-';
	j = span_digits(s, i, len);
	sc->digits = s + i;
	sc->nint = j - i;
	i = j;
	if (i < len && s[i] == '.') {
		j = span_digits(s, i + 1, len);
		sc->nfrac = j - i - 1;
		i = j;
	}
	sc->suffix = s + i;
	while (i < len && strchr("eEinumkKMGTP", s[i]))
		i++;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		i++;
	i = span_digits(s, i, len);
	sc->nsuffix = (size_t)(s + i - sc->suffix);
	return i == len;
}

/* Reads a signed exponent ("3", "+3", "-03"), clamped to +-EXP_CLAMP;
 * false when it has no digits or junk. */
static bool parse_exponent(const char *s, size_t n, long *out)
{
	size_t i = 0;
	bool neg = false;
	long v = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i == n)
		return false;
	for (; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		if (v < EXP_CLAMP)
			v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

/* Decodes the suffix into a power of ten and a power of two. */
static bool interpret_suffix(const char *s, size_t n, long *exp10, unsigned *exp2)
{
	static const struct {
		const char *name;
		long exp10;
		unsigned exp2;
	} table[] = {
		{"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
		{"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
		{"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
		{"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
	};

	*exp10 = 0;
	*exp2 = 0;
	for (size_t i = 0; i < SX_ARRAY_SIZE(table); i++) {
		if (strlen(table[i].name) == n && memcmp(table[i].name, s, n) == 0) {
			*exp10 = table[i].exp10;
			*exp2 = table[i].exp2;
			return true;
		}
	}
	if (n > 1 && (s[0] == 'e' || s[0] == 'E'))
		return parse_exponent(s + 1, n - 1, exp10);
	return false;
}

/* Digit k (0 = least significant) of the digit string of sc. */
static int digit_at(const struct scan *sc, size_t ndig, size_t k)
{
	size_t idx = ndig - 1 - k;		     /* index in integer+fraction digits */
	size_t pos = idx < sc->nint ? idx : idx + 1; /* skip the '.' */

	return sc->digits[pos] - '0';
}

/* Adds d x 10^p to *acc; false on overflow past MAX_NANO. */
static bool add_scaled(sx_nano *acc, int d, long p)
{
	sx_nano term = d;

	if (d == 0)
		return true;
	if (p > 28)
		return false;
	for (long i = 0; i < p; i++)
		term *= 10;
	*acc += term;
	return *acc <= MAX_NANO;
}

/* nano = ceil_away(D x 2^exp2 x 10^shift) where D is the digit string.
 * The product D x 2^exp2 is formed digit by digit from the least
 * significant end (carry < 10 x 2^60); product digit k lands at 10^(k +
 * shift), and digits that land below 10^0 only mark a remainder. */
static int scale_digits(const struct scan *sc, unsigned exp2, long shift, sx_nano *out)
{
	size_t ndig = sc->nint + sc->nfrac;
	unsigned __int128 carry = 0, mult = (unsigned __int128)1 << exp2;
	bool remainder = false;
	sx_nano acc = 0;
	size_t k = 0;

	for (; k < ndig || carry; k++) {
		unsigned __int128 t = carry;
		int d;

		if (k < ndig)
			t += (unsigned __int128)digit_at(sc, ndig, k) * mult;
		d = (int)(t % 10);
		carry = t / 10;
		if ((long)k + shift < 0)
			remainder |= d != 0;
		else if (!add_scaled(&acc, d, (long)k + shift))
			return SX_ETOOBIG;
	}
	if (remainder)
		acc++;
	if (acc > MAX_NANO)
		return SX_ETOOBIG;
	*out = acc;
	return 0;
}

/* True when every digit of the number is 0. */
static bool all_zero(const struct scan *sc)
{
	for (size_t i = 0; i < sc->nint; i++)
		if (sc->digits[i] != '0')
			return false;
	for (size_t i = 0; i < sc->nfrac; i++)
		if (sc->digits[sc->nint + 1 + i] != '0')
			return false;
	return true;
}

int sx_quantity_parse(const char *s, size_t len, sx_nano *out)
{
	struct scan sc;
	long exp10;
	unsigned exp2;
	long shift;
	sx_nano v;
	int rc;

	if (!s || len == 0)
		return SX_EINVAL;
	if (!scan_quantity(s, len, &sc) || sc.nint + sc.nfrac == 0)
		return SX_EINVAL;
	if (!interpret_suffix(sc.suffix, sc.nsuffix, &exp10, &exp2))
		return SX_EINVAL;
	if (all_zero(&sc)) {
		*out = 0;
		return 0;
	}
	shift = exp10 + 9 - (long)sc.nfrac;
	rc = scale_digits(&sc, exp2, shift, &v);
	if (rc)
		return rc;
	*out = sc.negative ? -v : v;
	return 0;
}

/* q / div rounded away from zero, checked against int64. */
static int div_away(sx_nano q, sx_nano div, int64_t *out)
{
	sx_nano r = q / div;

	if (q % div > 0)
		r++;
	else if (q % div < 0)
		r--;
	if (r > INT64_MAX || r < INT64_MIN)
		return SX_ETOOBIG;
	*out = (int64_t)r;
	return 0;
}

int sx_quantity_milli(sx_nano q, int64_t *out)
{
	return div_away(q, 1000000, out);
}

int sx_quantity_value(sx_nano q, int64_t *out)
{
	return div_away(q, SX_NANO_PER_UNIT, out);
}
