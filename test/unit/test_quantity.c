/* resource.Quantity parsing: a table of apimachinery ParseQuantity results, the
 * conversions' rounding, overflow and garbage. */
#include "harness.h"

#include <stdlib.h>

#include "schedext/common.h"
#include "schedext/quantity.h"

/* Decimal string of an exact nano count. */
static const char *nano_str(sx_nano v, char buf[64])
{
	char tmp[64];
	char *p = tmp + sizeof(tmp);
	unsigned __int128 u =
		v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;

	*--p = '\0';
	do {
		*--p = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	strcpy(buf, p);
	return buf;
}

struct qcase {
	const char *s;
	int rc;		  /* parse result */
	const char *nano; /* exact value in nano-units */
	int milli_rc;
	int64_t milli;
	int value_rc;
	int64_t value;
};

#define OK(s, nano, milli, value)                                                                  \
	{                                                                                          \
		s, 0, nano, 0, milli, 0, value                                                     \
	}
#define BAD(s, rc)                                                                                 \
	{                                                                                          \
		s, rc, NULL, 0, 0, 0, 0                                                            \
	}

static const struct qcase table[] = {
	/* what ParseQuantity, MilliValue and Value give, row by row */
	OK("1", "1000000000", 1000, 1),
	OK("100m", "100000000", 100, 1),
	OK("0.1", "100000000", 100, 1),
	OK(".5", "500000000", 500, 1),
	OK("5.", "5000000000", 5000, 5),
	OK("1.5", "1500000000", 1500, 2),
	OK("2.0001", "2000100000", 2001, 3),
	OK("0.1m", "100000", 1, 1),
	OK("1n", "1", 1, 1),
	OK("0.5n", "1", 1, 1),
	OK("1e3", "1000000000000", 1000000, 1000),
	OK("1E3", "1000000000000", 1000000, 1000),
	OK("1e+3", "1000000000000", 1000000, 1000),
	OK("1e-3", "1000000", 1, 1),
	OK("1k", "1000000000000", 1000000, 1000),
	BAD("1K", SX_EINVAL),
	OK("1Ki", "1024000000000", 1024000, 1024),
	OK("1M", "1000000000000000", 1000000000, 1000000),
	OK("1Mi", "1048576000000000", 1048576000, 1048576),
	OK("123Mi", "128974848000000000", 128974848000, 128974848),
	OK("129M", "129000000000000000", 129000000000, 129000000),
	OK("129e6", "129000000000000000", 129000000000, 129000000),
	OK("1.5Gi", "1610612736000000000", 1610612736000, 1610612736),
	OK("1.1Gi", "1181116006400000000", 1181116006400, 1181116007),
	OK("500m", "500000000", 500, 1),
	OK("12.34567k", "12345670000000", 12345670, 12346),
	{"1E", 0, "1000000000000000000000000000", SX_ETOOBIG, 0, 0, 1000000000000000000},
	OK("+2", "2000000000", 2000, 2),
	OK("-100m", "-100000000", -100, -1),
	BAD("1 Gi", SX_EINVAL),
	BAD("1Gb", SX_EINVAL),
	BAD("1mi", SX_EINVAL),
	BAD("0x10", SX_EINVAL),
	BAD("1e", SX_EINVAL),
	BAD("", SX_EINVAL),
	/* zeros */
	OK("0", "0", 0, 0),
	OK("-0", "0", 0, 0),
	OK("000", "0", 0, 0),
	OK("0.000", "0", 0, 0),
	OK("0Gi", "0", 0, 0),
	OK("0e400", "0", 0, 0),
	/* every suffix */
	OK("1u", "1000", 1, 1),
	OK("1G", "1000000000000000000", 1000000000000, 1000000000),
	OK("1T", "1000000000000000000000", 1000000000000000, 1000000000000),
	OK("1P", "1000000000000000000000000", 1000000000000000000, 1000000000000000),
	OK("1Gi", "1073741824000000000", 1073741824000, 1073741824),
	OK("1Ti", "1099511627776000000000", 1099511627776000, 1099511627776),
	OK("1Pi", "1125899906842624000000000", 1125899906842624000, 1125899906842624),
	{"7Ei", 0, "8070450532247928832000000000", SX_ETOOBIG, 0, 0, 8070450532247928832},
	{"9E", 0, "9000000000000000000000000000", SX_ETOOBIG, 0, 0, 9000000000000000000},
	/* fractions, exponents, rounding up */
	OK("2E-6", "2000", 1, 1),
	OK("1e-0", "1000000000", 1000, 1),
	OK("1e03", "1000000000000", 1000000, 1000),
	OK("12.5m", "12500000", 13, 1),
	OK("0.5Ki", "512000000000", 512000, 512),
	OK("0.1Ki", "102400000000", 102400, 103),
	OK("1.0000000001Ki", "1024000000103", 1024001, 1025),
	OK("1.0000000001", "1000000001", 1001, 2),
	OK("3.000000000000000000001", "3000000001", 3001, 4),
	OK("0.0000000000000000000000000000001", "1", 1, 1),
	OK("1e-400", "1", 1, 1),
	OK("1000000000000000000000000000000e-30", "1000000000", 1000, 1),
	OK("00012", "12000000000", 12000, 12),
	OK("1.G", "1000000000000000000", 1000000000000, 1000000000),
	OK("-1.5", "-1500000000", -1500, -2),
	OK("-0.5n", "-1", -1, -1),
	{"9223372036854775807", 0, "9223372036854775807000000000", SX_ETOOBIG, 0, 0, INT64_MAX},
	{"9223372036854775.807k", 0, "9223372036854775807000000000", SX_ETOOBIG, 0, 0, INT64_MAX},
	/* magnitude overflow */
	BAD("9223372036854775808", SX_ETOOBIG),
	BAD("9223372036854775807.000000001", SX_ETOOBIG),
	BAD("-9223372036854775808", SX_ETOOBIG),
	BAD("8Ei", SX_ETOOBIG),
	BAD("9.3E", SX_ETOOBIG),
	BAD("1e400", SX_ETOOBIG),
	BAD("1e99999999999999999999", SX_ETOOBIG),
	BAD("100000000000000000000000000000000000000000000000000", SX_ETOOBIG),
	/* garbage */
	BAD("1.1.M", SX_EINVAL),
	BAD("1+1.0M", SX_EINVAL),
	BAD("aoeu", SX_EINVAL),
	BAD(".5i", SX_EINVAL),
	BAD("1i", SX_EINVAL),
	BAD(" 1", SX_EINVAL),
	BAD("1 ", SX_EINVAL),
	BAD("+", SX_EINVAL),
	BAD("-", SX_EINVAL),
	BAD(".", SX_EINVAL),
	BAD("k", SX_EINVAL),
	BAD("Mi", SX_EINVAL),
	BAD("1e3.5", SX_EINVAL),
	BAD("1ee3", SX_EINVAL),
	BAD("--1", SX_EINVAL),
	BAD("1e+-3", SX_EINVAL),
	BAD("1m3", SX_EINVAL),
	BAD("1Kib", SX_EINVAL),
	BAD("1,5", SX_EINVAL),
	BAD("1e-", SX_EINVAL),
};

static void test_table(void)
{
	char buf[64];

	for (size_t i = 0; i < SX_ARRAY_SIZE(table); i++) {
		const struct qcase *c = &table[i];
		sx_nano q = 12345;
		int64_t v = 0;
		int rc = sx_quantity_parse(c->s, strlen(c->s), &q);

		if (rc != c->rc) {
			sx_test_fail(__FILE__, __LINE__, "parse(\"%s\") = %d, expected %d", c->s,
				     rc, c->rc);
			continue;
		}
		if (rc)
			continue;
		if (strcmp(nano_str(q, buf), c->nano) != 0)
			sx_test_fail(__FILE__, __LINE__, "parse(\"%s\") = %s nano, expected %s",
				     c->s, buf, c->nano);
		rc = sx_quantity_milli(q, &v);
		if (rc != c->milli_rc || (rc == 0 && c->milli && v != c->milli))
			sx_test_fail(__FILE__, __LINE__,
				     "milli(\"%s\") = %d/%" PRId64 ", expected %d/%" PRId64, c->s,
				     rc, v, c->milli_rc, c->milli);
		rc = sx_quantity_value(q, &v);
		if (rc != c->value_rc || (rc == 0 && v != c->value))
			sx_test_fail(__FILE__, __LINE__,
				     "value(\"%s\") = %d/%" PRId64 ", expected %d/%" PRId64, c->s,
				     rc, v, c->value_rc, c->value);
	}
	CHECK(SX_ARRAY_SIZE(table) >= 45);
}

/* Parsing takes a length: the bytes after it are not read. */
static void test_length_bound(void)
{
	sx_nano q = 0;
	int64_t v = 0;

	CHECK_INT(sx_quantity_parse("250mXYZ", 4, &q), 0);
	CHECK_INT(sx_quantity_milli(q, &v), 0);
	CHECK_INT(v, 250);
	CHECK_INT(sx_quantity_parse("1Gi", 2, &q), 0); /* reads "1G" */
	CHECK_INT(sx_quantity_value(q, &v), 0);
	CHECK_INT(v, 1000000000);
	CHECK_INT(sx_quantity_parse("2\0"
				    "5",
				    3, &q),
		  SX_EINVAL);
	CHECK_INT(sx_quantity_parse(NULL, 0, &q), SX_EINVAL);
}

/* Summing before converting (as PodRequests adds Quantities): two 0.5m make 1m. */
static void test_sum_then_convert(void)
{
	sx_nano a = 0, b = 0;
	int64_t v = 0;

	CHECK_INT(sx_quantity_parse("0.5m", 4, &a), 0);
	CHECK_INT(sx_quantity_parse("0.5m", 4, &b), 0);
	CHECK_INT(sx_quantity_milli(a + b, &v), 0);
	CHECK_INT(v, 1);
	CHECK_INT(sx_quantity_milli(a, &v), 0);
	CHECK_INT(v, 1);
}

/* A very long digit string is linear work, never a loop on the exponent. */
static void test_long_inputs(void)
{
	size_t n = 100000;
	char *s = malloc(n + 8);
	sx_nano q = 0;
	int64_t v = 0;

	memset(s, '0', n);
	s[0] = '0';
	s[1] = '.';
	s[n - 1] = '1';
	CHECK_INT(sx_quantity_parse(s, n, &q), 0);
	CHECK_INT(sx_quantity_value(q, &v), 0);
	CHECK_INT(v, 1);
	memset(s, '9', n);
	CHECK_INT(sx_quantity_parse(s, n, &q), SX_ETOOBIG);
	/* 9.99...e0 rounds up to 10 units; 10^20 is too big */
	memcpy(s + n, "e-99999", 7);
	CHECK_INT(sx_quantity_parse(s, n + 7, &q), 0);
	CHECK_INT(sx_quantity_value(q, &v), 0);
	CHECK_INT(v, 10);
	memcpy(s + n, "e-99980", 7);
	CHECK_INT(sx_quantity_parse(s, n + 7, &q), SX_ETOOBIG);
	/* an exponent beyond any clamp still makes the long number tiny */
	s = realloc(s, n + 40);
	memcpy(s + n, "e-99999999999999999999999", 25);
	CHECK_INT(sx_quantity_parse(s, n + 25, &q), 0);
	CHECK_INT(sx_quantity_value(q, &v), 0);
	CHECK_INT(v, 1);
	memcpy(s + n, "e+99999999999999999999999", 25);
	CHECK_INT(sx_quantity_parse(s, n + 25, &q), SX_ETOOBIG);
	free(s);
}

SX_TESTS(SX_TEST(test_table), SX_TEST(test_length_bound), SX_TEST(test_sum_then_convert),
	 SX_TEST(test_long_inputs))
