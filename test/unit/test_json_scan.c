/* The streaming JSON scanner: grammar (valid, malformed, truncated), depth
 * limits, lazy containers, strings with escapes, and agreement with cJSON
 * (whatever the scanner accepts, cJSON parses to the same strings). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/common.h"
#include "schedext/json_scan.h"

/* Validates the whole text as one document. */
static bool valid(const char *s, size_t len, int max_depth)
{
	struct sx_json_cur c;
	struct sx_json_val v;

	sx_json_doc(&c, s, len, max_depth);
	if (sx_json_next(&c, &v) != 1 || !sx_json_finish(&c))
		return false;
	return sx_json_next(&c, &v) == 0;
}

static bool valid_str(const char *s)
{
	return valid(s, strlen(s), 64);
}

/* cJSON's verdict on the same text (one value, whitespace around). */
static bool cjson_ok(const char *s, size_t len)
{
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(s, len, &end, false);

	if (!j)
		return false;
	while (end < s + len && strchr(" \t\r\n", *end))
		end++;
	cJSON_Delete(j);
	return end == s + len;
}

static void test_valid(void)
{
	static const char *const ok[] = {
		"{}",
		"[]",
		" { } ",
		"0",
		"-0",
		"1.5e+10",
		"-12.25E-3",
		"true",
		"false",
		"null",
		"\"\"",
		"\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\"",
		"\"\\u00e9\\u20AC\"",
		"\"\\ud83d\\ude00\"",
		"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
		"{\"a\":[1,{\"b\":null}],\"c\":\"[{\"}",
		"[[[[]]]]",
		"\r\n\t[1 , 2\n]\t",
		"{\"\":\"\"}",
		"12345678901234567890",
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(ok); i++) {
		if (!valid_str(ok[i]))
			sx_test_fail(__FILE__, __LINE__, "rejected valid %s", ok[i]);
		CHECK(cjson_ok(ok[i], strlen(ok[i])));
	}
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"",
		" ",
		"{",
		"}",
		"[",
		"[1,]",
		"[,1]",
		"{\"a\"}",
		"{\"a\":}",
		"{\"a\":1,}",
		"{a:1}",
		"{\"a\" 1}",
		"[1 2]",
		"01",
		"1.",
		".5",
		"-",
		"+1",
		"1e",
		"1e+",
		"0x10",
		"tru",
		"nul",
		"truex",
		"True",
		"NaN",
		"\"abc",
		"\"\\x\"",
		"\"\\u12\"",
		"\"\\u12G4\"",
		"\"a\tb\"",
		"\"\\ud800\"",
		"\"\\udc00\"",
		"\"\\ud800\\u0041\"",
		"\"\\ud800x\"",
		"{} x",
		"1 2",
		"[1]]",
		"{\"a\":1}}",
		"\xef\xbb\xbf{}",
		"\"\xc3\x28\"",
		"\"\xc0\xaf\"",
		"\"\xed\xa0\x80\"",
		"\"\xf4\x90\x80\x80\"",
		"\"\xe2\x82\"",
		"[\x01]",
		"['a']",
		"{\"a\":1 \"b\":2}",
		"[1,\n",
		"/* */ {}",
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(bad); i++)
		if (valid_str(bad[i]))
			sx_test_fail(__FILE__, __LINE__, "accepted malformed #%zu %s", i, bad[i]);
	CHECK(!valid("[0\0]", 4, 64));
	CHECK(!valid("\"a\0b\"", 5, 64));
}

/* Every prefix of a valid text is rejected, and never read past. */
static void test_truncated(void)
{
	const char *doc = "{\"k\":[1,-2.5e3,true,false,null,\"s\\u00e9\\n\",{\"x\":[]}],\"z\":{}}";
	size_t n = strlen(doc);

	CHECK(valid(doc, n, 64));
	for (size_t i = 0; i < n; i++) {
		char *copy = malloc(i + 1); /* exact size: ASan catches overreads */

		memcpy(copy, doc, i);
		if (valid(copy, i, 64))
			sx_test_fail(__FILE__, __LINE__, "accepted prefix of %zu bytes", i);
		free(copy);
	}
}

static void test_depth(void)
{
	char deep[600];

	memset(deep, '[', 300);
	memset(deep + 300, ']', 300);
	CHECK(valid(deep + 236, 128, 64));  /* 64 levels */
	CHECK(!valid(deep + 235, 130, 64)); /* 65 */
	CHECK(!valid(deep, 600, 1000));	    /* capped at SX_JSON_DEPTH_CAP */
	CHECK(valid(deep + 300 - SX_JSON_DEPTH_CAP, 2 * SX_JSON_DEPTH_CAP, 1000));
	/* depth counts the containers around a skipped value too */
	CHECK(sx_json_skip("[[]]", "[[]]" + 4, 62, 64) != NULL);
	CHECK(sx_json_skip("[[]]", "[[]]" + 4, 63, 64) == NULL);
	/* unbalanced hostile input without recursion */
	char *big = malloc(100000);
	memset(big, '[', 100000);
	CHECK(!valid(big, 100000, 64));
	CHECK(!valid(big, 100000, SX_JSON_DEPTH_CAP));
	free(big);
}

/* A special byte at every offset of strings of every length up to 70:
 * covers the 16- and 8-byte fast paths and the byte tail. */
static void test_string_offsets(void)
{
	static const struct {
		const char *ins;
		bool ok;
	} specials[] = {
		{"\\n", true},	{"\xc3\xa9", true}, {"\\u00e9", true}, {"\x01", false},
		{"\x7f", true}, {"\xc3", false},    {"\"", false},     {"\\", false},
	};
	char buf[128];

	for (size_t len = 0; len <= 70; len++) {
		for (size_t at = 0; at <= len; at++) {
			for (size_t k = 0; k < SX_ARRAY_SIZE(specials); k++) {
				size_t n = 0, il = strlen(specials[k].ins);

				buf[n++] = '"';
				memset(buf + n, 'a', at);
				n += at;
				memcpy(buf + n, specials[k].ins, il);
				n += il;
				memset(buf + n, 'c', len - at); /* backslash-c is no escape */
				n += len - at;
				buf[n++] = '"';
				char *exact = malloc(n);
				memcpy(exact, buf, n);
				if (valid(exact, n, 64) != specials[k].ok)
					sx_test_fail(__FILE__, __LINE__,
						     "len %zu at %zu special %zu", len, at, k);
				free(exact);
			}
		}
	}
}

/* Long numbers: some cJSON 1.7 releases cut a number at 63 bytes and fail,
 * so 64+ are refused (callers fall back to cJSON itself). */
static void test_numbers(void)
{
	char num[80];

	memset(num, '1', sizeof(num));
	CHECK(valid(num, 63, 64));
	CHECK(!valid(num, 64, 64));
	CHECK(cjson_ok(num, 63));
}

static void test_cursor(void)
{
	const char *doc = " {\"Pod\": {\"a\":[1,2]}, \"Names\": [\"x\", \"y\\u0041\"], \"n\": 7 } ";
	struct sx_json_cur c, obj, arr;
	struct sx_json_val v, k;
	char buf[8];

	sx_json_doc(&c, doc, strlen(doc), 64);
	CHECK_INT(sx_json_next(&c, &v), 1);
	CHECK_INT(v.type, SX_JSON_OBJECT);
	CHECK(v.end == NULL);
	sx_json_enter(&c, &obj);
	/* Pod: left unentered, skipped by the next call */
	CHECK_INT(sx_json_next_member(&obj, &k, &v), 1);
	CHECK(sx_json_str_eq(&k, "pod", true));
	CHECK(!sx_json_str_eq(&k, "pod", false));
	CHECK_INT(v.type, SX_JSON_OBJECT);
	const char *pod = v.p;
	CHECK(sx_json_finish(&obj) == pod + strlen("{\"a\":[1,2]}"));
	CHECK_INT(sx_json_next_member(&obj, &k, &v), 1);
	CHECK(sx_json_str_eq(&k, "Names", false));
	sx_json_enter(&obj, &arr);
	CHECK_INT(sx_json_next(&arr, &v), 1);
	CHECK_INT(v.type, SX_JSON_STRING);
	CHECK(!v.escaped);
	CHECK_INT(sx_json_next(&arr, &v), 1);
	CHECK(v.escaped);
	CHECK_INT(sx_json_unescape(&v, buf, sizeof(buf)), 2);
	CHECK(memcmp(buf, "yA", 2) == 0);
	CHECK_INT(sx_json_next(&arr, &v), 0);
	CHECK_INT(sx_json_next(&arr, &v), 0); /* stays closed */
	CHECK(obj.last.end != NULL && obj.last.end[-1] == ']');
	CHECK_INT(sx_json_next_member(&obj, &k, &v), 1);
	CHECK_INT(v.type, SX_JSON_NUMBER);
	CHECK_INT(v.end - v.p, 1);
	CHECK_INT(sx_json_next_member(&obj, &k, &v), 0);
	CHECK_INT(sx_json_next(&c, &v), 0); /* only whitespace after the object */

	/* a child abandoned midway: the parent re-validates the whole value */
	sx_json_doc(&c, "[[1,2,3],4]", 11, 64);
	CHECK_INT(sx_json_next(&c, &v), 1);
	sx_json_enter(&c, &obj);
	CHECK_INT(sx_json_next(&obj, &v), 1);
	sx_json_enter(&obj, &arr);
	CHECK_INT(sx_json_next(&arr, &v), 1);
	CHECK_INT(sx_json_next(&obj, &v), 1);
	CHECK_INT(v.type, SX_JSON_NUMBER);
	CHECK_INT(sx_json_next(&obj, &v), 0);
	CHECK_INT(sx_json_next(&c, &v), 0);

	/* malformed inside an entered container: -1 and stays failed */
	sx_json_doc(&c, "{\"a\":[1,,2]}", 12, 64);
	CHECK_INT(sx_json_next(&c, &v), 1);
	sx_json_enter(&c, &obj);
	CHECK_INT(sx_json_next_member(&obj, &k, &v), 1);
	CHECK_INT(sx_json_next_member(&obj, &k, &v), -1);
	CHECK(obj.bad != NULL);
	CHECK_INT(sx_json_next_member(&obj, &k, &v), -1);

	/* trailing data after the document */
	sx_json_doc(&c, "{} {}", 5, 64);
	CHECK_INT(sx_json_next(&c, &v), 1);
	CHECK_INT(sx_json_next(&c, &v), -1);

	/* misuse: members of an array, entering a scalar */
	sx_json_doc(&c, "[1]", 3, 64);
	CHECK_INT(sx_json_next(&c, &v), 1);
	sx_json_enter(&c, &arr);
	CHECK_INT(sx_json_next_member(&arr, &k, &v), -1);
	sx_json_doc(&c, "1", 1, 64);
	CHECK_INT(sx_json_next(&c, &v), 1);
	sx_json_enter(&c, &arr);
	CHECK_INT(sx_json_next(&arr, &v), -1);
	/* depth limit applies to lazily returned containers */
	sx_json_doc(&c, "[[]]", 4, 1);
	CHECK_INT(sx_json_next(&c, &v), 1);
	sx_json_enter(&c, &arr);
	CHECK_INT(sx_json_next(&arr, &v), -1);
}

/* Decoded strings equal cJSON's valuestring, NUL cut included. */
static void test_unescape(void)
{
	static const char *const strs[] = {
		"\"plain\"",
		"\"\"",
		"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
		"\"\\u0041\\u00e9\\u20ac\"",
		"\"\\uD83D\\uDE00!\"",
		"\"ab\\u0000cd\"",
		"\"\\u0000\"",
		"\"caf\xc3\xa9\\n\"",
		"\"\\u07FF\\u0800\\uFFFF\"",
	};
	char buf[64];

	for (size_t i = 0; i < SX_ARRAY_SIZE(strs); i++) {
		struct sx_json_cur c;
		struct sx_json_val v;
		cJSON *j = cJSON_Parse(strs[i]);
		size_t n;

		sx_json_doc(&c, strs[i], strlen(strs[i]), 64);
		CHECK_INT(sx_json_next(&c, &v), 1);
		CHECK(j && cJSON_IsString(j));
		n = sx_json_unescape(&v, buf, sizeof(buf));
		CHECK_INT(n, strlen(j->valuestring));
		CHECK(memcmp(buf, j->valuestring, n) == 0);
		CHECK(sx_json_str_eq(&v, j->valuestring, false));
		/* a short buffer gets a prefix, the length stays full */
		CHECK_INT(sx_json_unescape(&v, buf, 1), n);
		cJSON_Delete(j);
	}
	struct sx_json_val k = {SX_JSON_STRING, "\"Pod\\u0000x\"", NULL, true};
	k.end = k.p + strlen(k.p);
	CHECK(sx_json_str_eq(&k, "Pod", false)); /* as cJSON's C string sees it */
	CHECK(!sx_json_str_eq(&k, "Podx", false));
	struct sx_json_val num = {SX_JSON_NUMBER, "1", NULL, false};
	num.end = num.p + 1;
	CHECK(!sx_json_str_eq(&num, "1", false));
	CHECK_STR(sx_json_type_name(SX_JSON_BOOL), "boolean");
	CHECK_STR(sx_json_type_name(SX_JSON_NULL), "null");
}

/* Deterministic mutations of a valid text: no crash, no overread, and
 * whatever the scanner accepts cJSON accepts too. */
static void test_mutations(void)
{
	const char *doc = "{\"Pod\":{\"metadata\":{\"name\":\"p\\u00e9\",\"labels\":{\"a\":\"b\"}},"
			  "\"spec\":{\"priority\":-5,\"x\":[1.5e3,true,null,\"\\ud83d\\ude00\"]}},"
			  "\"NodeNames\":[\"n1\",\"n2\"]}";
	static const char alphabet[] = "{}[]\",:\\u0aeE.-+ \x01\x80\xc3\xff"
				       "tfn";
	size_t n = strlen(doc);
	unsigned seed = 7;
	int accepted = 0;

	for (int round = 0; round < 20000; round++) {
		char *m = malloc(n + 1);
		size_t len = n;

		memcpy(m, doc, n);
		for (int k = 0; k < 1 + round % 3; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % n;

			seed = seed * 1103515245u + 12345u;
			if ((seed >> 16) % 5 == 0)
				len = at; /* truncate */
			else
				m[at] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		if (valid(m, len, 64)) {
			accepted++;
			if (!cjson_ok(m, len))
				sx_test_fail(__FILE__, __LINE__,
					     "scanner accepts what cJSON refuses: %.*s", (int)len,
					     m);
		}
		free(m);
	}
	CHECK(accepted > 0);
}

SX_TESTS(SX_TEST(test_valid), SX_TEST(test_malformed), SX_TEST(test_truncated), SX_TEST(test_depth),
	 SX_TEST(test_numbers), SX_TEST(test_string_offsets), SX_TEST(test_cursor),
	 SX_TEST(test_unescape), SX_TEST(test_mutations))
