/* Growable buffer and JSON string escaping. */
#include "harness.h"

#include <stdlib.h>

#include "schedext/buf.h"

static void test_put_and_grow(void)
{
	struct sx_buf b;
	size_t len = 0;
	char *s;

	sx_buf_init(&b);
	CHECK_STR(sx_buf_cstr(&b), "");
	sx_buf_puts(&b, "hello");
	sx_buf_putc(&b, ' ');
	sx_buf_put(&b, "world!!", 5);
	CHECK_STR(sx_buf_cstr(&b), "hello world");
	CHECK_INT(b.len, 11);
	for (int i = 0; i < 10000; i++)
		sx_buf_putc(&b, 'x');
	CHECK_INT(b.len, 10011);
	CHECK(b.cap > b.len);
	CHECK_INT(b.data[b.len], 0);
	CHECK(!b.failed);
	s = sx_buf_take(&b, &len);
	CHECK_INT(len, 10011);
	CHECK(strncmp(s, "hello worldxxx", 14) == 0);
	free(s);
	CHECK(b.data == NULL && b.len == 0);
	sx_buf_free(&b);
}

static void test_printf_reset(void)
{
	struct sx_buf b;

	sx_buf_init(&b);
	sx_buf_printf(&b, "%s=%d", "n", 42);
	sx_buf_printf(&b, ",%05.1f", 2.5);
	CHECK_STR(sx_buf_cstr(&b), "n=42,002.5");
	sx_buf_reset(&b);
	CHECK_INT(b.len, 0);
	CHECK_STR(sx_buf_cstr(&b), "");
	sx_buf_printf(&b, "%0300d", 7);
	CHECK_INT(b.len, 300);
	CHECK_INT(b.data[299], '7');
	sx_buf_free(&b);
}

static void test_take_empty(void)
{
	struct sx_buf b;
	size_t len = 99;
	char *s;

	sx_buf_init(&b);
	s = sx_buf_take(&b, &len);
	CHECK(s != NULL);
	CHECK_STR(s, "");
	CHECK_INT(len, 0);
	free(s);
	/* a failed buffer gives NULL and is released */
	sx_buf_puts(&b, "abc");
	b.failed = true;
	sx_buf_puts(&b, "ignored");
	CHECK_INT(b.len, 3);
	CHECK_STR(sx_buf_cstr(&b), "");
	CHECK(sx_buf_take(&b, &len) == NULL);
	CHECK_INT(len, 0);
	sx_buf_free(&b);
}

static void test_int(void)
{
	struct sx_buf b;

	sx_buf_init(&b);
	sx_buf_int(&b, 0);
	sx_buf_putc(&b, ' ');
	sx_buf_int(&b, -42);
	sx_buf_putc(&b, ' ');
	sx_buf_int(&b, INT64_MAX);
	sx_buf_putc(&b, ' ');
	sx_buf_int(&b, INT64_MIN);
	CHECK_STR(sx_buf_cstr(&b), "0 -42 9223372036854775807 -9223372036854775808");
	sx_buf_free(&b);
}

static const char *json(struct sx_buf *b, const char *s, size_t n)
{
	sx_buf_reset(b);
	sx_json_strn(b, s, n);
	return sx_buf_cstr(b);
}

#define J(b, lit) json(b, lit, sizeof(lit) - 1)

static void test_json_escapes(void)
{
	struct sx_buf b;

	sx_buf_init(&b);
	CHECK_STR(J(&b, ""), "\"\"");
	CHECK_STR(J(&b, "plain"), "\"plain\"");
	CHECK_STR(J(&b, "a\"b\\c"), "\"a\\\"b\\\\c\"");
	CHECK_STR(J(&b, "\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
	CHECK_STR(J(&b, "\x01\x1f"), "\"\\u0001\\u001f\"");
	CHECK_STR(J(&b, "a\0b"), "\"a\\u0000b\"");
	CHECK_STR(J(&b, "/<>&\x7f"), "\"/<>&\x7f\"");
	sx_buf_reset(&b);
	sx_json_str(&b, NULL);
	CHECK_STR(sx_buf_cstr(&b), "\"\"");
	sx_buf_reset(&b);
	sx_json_key(&b, "nodeNames");
	sx_json_str(&b, "n1");
	CHECK_STR(sx_buf_cstr(&b), "\"nodeNames\":\"n1\"");
	sx_buf_free(&b);
}

static void test_json_utf8(void)
{
	struct sx_buf b;

	sx_buf_init(&b);
	/* valid sequences pass through: é, €, U+10348, U+10FFFF */
	CHECK_STR(J(&b, "\xc3\xa9\xe2\x82\xac\xf0\x90\x8d\x88\xf4\x8f\xbf\xbf"),
		  "\"\xc3\xa9\xe2\x82\xac\xf0\x90\x8d\x88\xf4\x8f\xbf\xbf\"");
	/* lone continuation byte, bad lead bytes */
	CHECK_STR(J(&b, "a\x80z"), "\"a\\ufffdz\"");
	CHECK_STR(J(&b, "\xff\xfe"), "\"\\ufffd\\ufffd\"");
	/* overlong encodings of '/' and NUL */
	CHECK_STR(J(&b, "\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	CHECK_STR(J(&b, "\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"");
	/* a UTF-16 surrogate, and beyond U+10FFFF */
	CHECK_STR(J(&b, "\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_STR(J(&b, "\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* truncated sequence at the end and before ASCII */
	CHECK_STR(J(&b, "x\xe2\x82"), "\"x\\ufffd\\ufffd\"");
	CHECK_STR(J(&b, "\xe2\x82x"), "\"\\ufffd\\ufffdx\"");
	sx_buf_free(&b);
}

/* The writer places commas and colons; compact output. */
static void test_jw_shapes(void)
{
	struct sx_buf b;
	struct sx_jw w;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kstr(&w, "name", "a\"b");
	sx_jw_karray(&w, "items");
	sx_jw_int(&w, -3);
	sx_jw_uint(&w, 18446744073709551615ull);
	sx_jw_object(&w);
	sx_jw_end_object(&w);
	sx_jw_array(&w);
	sx_jw_end_array(&w);
	sx_jw_null(&w);
	sx_jw_raw(&w, "{\"x\":1}", 7);
	sx_jw_end_array(&w);
	sx_jw_kbool(&w, "ok", true);
	sx_jw_kdouble(&w, "qps", 0.5);
	sx_jw_key(&w, "nan");
	sx_jw_double(&w, 0.0 / 0.0);
	sx_jw_key(&w, "d");
	sx_jw_strf(&w, "%gs", 2.5);
	sx_jw_kobject(&w, "empty");
	sx_jw_end_object(&w);
	sx_jw_end_object(&w);
	CHECK(!b.failed);
	CHECK_STR(sx_buf_cstr(&b), "{\"name\":\"a\\\"b\",\"items\":[-3,18446744073709551615,{},[],"
				   "null,{\"x\":1}],\"ok\":true,\"qps\":0.5,\"nan\":null,"
				   "\"d\":\"2.5s\",\"empty\":{}}");
	/* a long formatted string is escaped whole */
	sx_buf_reset(&b);
	sx_jw_init(&w, &b);
	sx_jw_strf(&w, "%0200d\"", 7);
	CHECK_INT(b.len, 204);
	CHECK_STR(b.data + 199, "07\\\"\"");
	/* members added to an object someone else opened */
	sx_buf_reset(&b);
	sx_buf_puts(&b, "{\"kind\":\"X\"");
	sx_jw_init_in(&w, &b, true);
	sx_jw_kint(&w, "n", 1);
	sx_buf_putc(&b, '}');
	CHECK_STR(sx_buf_cstr(&b), "{\"kind\":\"X\",\"n\":1}");
	/* keys and values that need escapes, after members that do not */
	sx_buf_reset(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_kint(&w, "plain", INT64_MIN);
	sx_jw_kstr(&w, "node\n\"1\"", "caf\xc3\xa9\x01");
	sx_jw_end_object(&w);
	CHECK_STR(sx_buf_cstr(&b), "{\"plain\":-9223372036854775808,\"node\\n\\\"1\\\"\":"
				   "\"caf\xc3\xa9\\u0001\"}");
	sx_buf_free(&b);
}

/* Misuse marks the buffer failed instead of writing malformed JSON. */
static void test_jw_misuse(void)
{
	struct sx_buf b;
	struct sx_jw w;

	sx_buf_init(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_str(&w, "value without key");
	CHECK(b.failed);
	sx_buf_reset(&b);
	sx_jw_init(&w, &b);
	sx_jw_end_array(&w);
	CHECK(b.failed);
	sx_buf_reset(&b);
	sx_jw_init(&w, &b);
	sx_jw_array(&w);
	sx_jw_key(&w, "k");
	CHECK(b.failed);
	sx_buf_reset(&b);
	sx_jw_init(&w, &b);
	sx_jw_object(&w);
	sx_jw_end_array(&w);
	CHECK(b.failed);
	sx_buf_reset(&b);
	sx_jw_init(&w, &b);
	for (int i = 0; i < 100; i++)
		sx_jw_array(&w);
	CHECK(b.failed);
	CHECK(b.len < SX_JW_MAX_DEPTH);
	sx_buf_free(&b);
}

SX_TESTS(SX_TEST(test_jw_shapes), SX_TEST(test_jw_misuse), SX_TEST(test_put_and_grow),
	 SX_TEST(test_printf_reset), SX_TEST(test_take_empty), SX_TEST(test_int),
	 SX_TEST(test_json_escapes), SX_TEST(test_json_utf8))
