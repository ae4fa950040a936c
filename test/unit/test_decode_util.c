/* The shared decoder shapes (src/decode_util.h): array fields into C arrays,
 * walks, optional sub-objects, and their error paths at the edges (wrong
 * types, nulls, arrays over the limit, failing elements). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/api/decode_internal.h"
#include "../../src/api/decode_util.h"
#include "harness.h"
#include "test_decode_parse.h"
#include "schedext/decode.h"

struct item {
	int32_t v;
	int index; /* order of the call that filled it */
};

struct calls {
	int n;
	const void *last_elem;
};

/* {v: int}; fails on v == 13 with a path "v". */
static int item_fn(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	struct calls *c = arg;
	struct item *it = elem;
	int rc;

	c->last_elem = elem;
	if (it)
		it->index = c->n;
	c->n++;
	if (!cJSON_IsObject(j))
		return sx_error_set(err, SX_EINVAL, "callback saw a non-object");
	rc = sx_dec_int32(j, "v", it ? &it->v : &(int32_t){0}, NULL, err);
	if (rc == 0 && it && it->v == 13) {
		sx_error_set(err, SX_EINVAL, "unlucky");
		sx_error_prefix(err, "v");
		return SX_EINVAL;
	}
	return rc;
}

static void test_objects_ok(void)
{
	cJSON *j = parse("{'xs':[{'v':1},{'v':2},{}]}");
	struct calls c = {0};
	struct sx_error err = {0};
	struct item *items = (void *)1;
	uint32_t n = 99;

	CHECK_INT(sx_dec_objects(j, "xs", &items, &n, item_fn, &c, &err), 0);
	CHECK_INT(n, 3);
	CHECK_INT(c.n, 3);
	CHECK(items != NULL);
	CHECK_INT(items[0].v, 1);
	CHECK_INT(items[1].v, 2);
	CHECK_INT(items[2].v, 0);
	CHECK_INT(items[2].index, 2);
	CHECK(c.last_elem == &items[2]);
	free(items);
	cJSON_Delete(j);
}

static void test_objects_absent_null_empty(void)
{
	cJSON *j = parse("{'a':null,'e':[]}");
	struct calls c = {0};
	struct sx_error err = {0};
	struct item *items = (void *)1;
	uint32_t n = 99;

	CHECK_INT(sx_dec_objects(j, "missing", &items, &n, item_fn, &c, &err), 0);
	CHECK(items == NULL);
	CHECK_INT(n, 0);
	items = (void *)1;
	CHECK_INT(sx_dec_objects(j, "a", &items, &n, item_fn, &c, &err), 0);
	CHECK(items == NULL);
	CHECK_INT(n, 0);
	/* present but empty: storage exists (callers tell "present" that way) */
	CHECK_INT(sx_dec_objects(j, "e", &items, &n, item_fn, &c, &err), 0);
	CHECK(items != NULL);
	CHECK_INT(n, 0);
	CHECK_INT(c.n, 0);
	free(items);
	/* not an object at all: absent */
	CHECK_INT(sx_dec_objects(NULL, "a", &items, &n, item_fn, &c, &err), 0);
	CHECK(items == NULL);
	cJSON_Delete(j);
}

static void test_objects_errors(void)
{
	static const struct {
		const char *json, *path, *msg;
		int calls;
	} cases[] = {
		{"{'xs':{}}", "xs", "expected array, got object", 0},
		{"{'xs':'a'}", "xs", "expected array, got string", 0},
		{"{'xs':[{},null]}", "xs[1]", "expected object, got null", 1},
		{"{'xs':[5]}", "xs[0]", "expected object, got number", 0},
		{"{'xs':[[]]}", "xs[0]", "expected object, got array", 0},
		{"{'xs':[{'v':1},{'v':'2'}]}", "xs[1].v", "expected integer, got string", 2},
		{"{'xs':[{},{},{'v':13},{'v':'never read'}]}", "xs[2].v", "unlucky", 3},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		cJSON *j = parse(cases[i].json);
		struct calls c = {0};
		struct sx_error err = {0};
		struct item *items = NULL;
		uint32_t n = 0;

		CHECK_INT(sx_dec_objects(j, "xs", &items, &n, item_fn, &c, &err), SX_EINVAL);
		CHECK_STR(err.path, cases[i].path);
		CHECK_STR(err.msg, cases[i].msg);
		CHECK_INT(c.n, cases[i].calls);
		/* a failing element leaves the whole array counted for the free */
		if (c.n || strchr(cases[i].path, '[')) {
			CHECK(items != NULL);
			CHECK_INT(n, (uint32_t)cJSON_GetArraySize(cJSON_GetObjectItem(j, "xs")));
		} else {
			CHECK(items == NULL);
			CHECK_INT(n, 0);
		}
		free(items);
		cJSON_Delete(j);
	}
}

static void test_objects_too_long(void)
{
	cJSON *j = cJSON_CreateObject(), *xs = cJSON_AddArrayToObject(j, "xs");
	struct calls c = {0};
	struct sx_error err = {0};
	struct item *items = (void *)1;
	uint32_t n = 99;

	for (int i = 0; i < SX_DECODE_MAX_ITEMS; i++)
		cJSON_AddItemToArray(xs, cJSON_CreateObject());
	CHECK_INT(sx_dec_objects(j, "xs", &items, &n, item_fn, &c, &err), 0);
	CHECK_INT(n, SX_DECODE_MAX_ITEMS);
	free(items);
	cJSON_AddItemToArray(xs, cJSON_CreateObject());
	c.n = 0;
	CHECK_INT(sx_dec_objects(j, "xs", &items, &n, item_fn, &c, &err), SX_ETOOBIG);
	CHECK_STR(err.path, "xs");
	CHECK_STR(err.msg, "more than 10000 items");
	CHECK(items == NULL);
	CHECK_INT(n, 0);
	CHECK_INT(c.n, 0);
	cJSON_Delete(j);
}

/* The element decoder, not the helper, judges element types. */
static int string_fn(const cJSON *j, void *elem, void *arg, struct sx_error *err)
{
	return sx_dec_string_value(j, elem, err);
}

static void test_items_any_type(void)
{
	cJSON *j = parse("{'ok':['a','b'],'bad':['a',null],'num':[1]}");
	struct sx_error err = {0};
	const char **s = NULL;
	uint32_t n = 0;

	CHECK_INT(sx_dec_items(j, "ok", &s, &n, string_fn, NULL, &err), 0);
	CHECK_INT(n, 2);
	CHECK_STR(s[1], "b");
	free(s);
	CHECK_INT(sx_dec_items(j, "bad", &s, &n, string_fn, NULL, &err), SX_EINVAL);
	CHECK_STR(err.path, "bad[1]");
	CHECK_STR(err.msg, "expected string, got null");
	free(s);
	CHECK_INT(sx_dec_items(j, "num", &s, &n, string_fn, NULL, &err), SX_EINVAL);
	CHECK_STR(err.path, "num[0]");
	CHECK_STR(err.msg, "expected string, got number");
	free(s);
	cJSON_Delete(j);
}

static void test_string_value(void)
{
	struct sx_error err = {0};
	const char *out = NULL;
	char *big = malloc(SX_DECODE_MAX_STRING + 2);
	cJSON *j;

	memset(big, 'a', SX_DECODE_MAX_STRING + 1);
	big[SX_DECODE_MAX_STRING] = '\0';
	j = cJSON_CreateString(big);
	CHECK_INT(sx_dec_string_value(j, &out, &err), 0);
	CHECK(out == j->valuestring);
	cJSON_Delete(j);
	big[SX_DECODE_MAX_STRING] = 'a';
	big[SX_DECODE_MAX_STRING + 1] = '\0';
	j = cJSON_CreateString(big);
	out = NULL;
	CHECK_INT(sx_dec_string_value(j, &out, &err), SX_ETOOBIG);
	CHECK_STR(err.msg, "string longer than 65536 bytes");
	CHECK_STR(err.path, "");
	CHECK(out == NULL);
	cJSON_Delete(j);
	free(big);
	CHECK_INT(sx_dec_string_value(NULL, &out, &err), SX_EINVAL);
	CHECK_STR(err.msg, "expected string, got null");
}

static void test_each(void)
{
	cJSON *j = parse("[{'v':1},{'v':2},7]");
	struct calls c = {0};
	struct sx_error err = {0};
	struct item items[3] = {0};

	/* NULL array: nothing to walk */
	CHECK_INT(sx_dec_each(NULL, "xs", items, sizeof(*items), item_fn, &c, &err), 0);
	CHECK_INT(c.n, 0);
	/* without storage the callback gets NULL */
	CHECK_INT(sx_dec_each_object(j, "xs", NULL, 0, item_fn, &c, &err), SX_EINVAL);
	CHECK(c.last_elem == NULL);
	CHECK_INT(c.n, 2);
	CHECK_STR(err.path, "xs[2]");
	CHECK_STR(err.msg, "expected object, got number");
	/* sx_dec_each hands non-objects to the callback */
	c.n = 0;
	CHECK_INT(sx_dec_each(j, "xs", items, sizeof(*items), item_fn, &c, &err), SX_EINVAL);
	CHECK_INT(c.n, 3);
	CHECK_STR(err.path, "xs[2]");
	CHECK_STR(err.msg, "callback saw a non-object");
	CHECK_INT(items[1].v, 2);
	CHECK(c.last_elem == &items[2]);
	cJSON_Delete(j);
}

static void test_sub(void)
{
	cJSON *j = parse("{'s':{'v':1},'n':null,'a':[],'bad':{'v':13}}");
	struct calls c = {0};
	struct sx_error err = {0};
	struct item it = {0};

	CHECK_INT(sx_dec_sub(j, "s", item_fn, &it, &c, &err), 0);
	CHECK_INT(it.v, 1);
	CHECK(c.last_elem == &it);
	CHECK_INT(sx_dec_sub(j, "n", item_fn, &it, &c, &err), 0);
	CHECK_INT(sx_dec_sub(j, "missing", item_fn, &it, &c, &err), 0);
	CHECK_INT(c.n, 1);
	CHECK_INT(sx_dec_sub(j, "a", item_fn, &it, &c, &err), SX_EINVAL);
	CHECK_STR(err.path, "a");
	CHECK_STR(err.msg, "expected object, got array");
	CHECK_INT(sx_dec_sub(j, "bad", item_fn, &it, &c, &err), SX_EINVAL);
	CHECK_STR(err.path, "bad.v");
	CHECK_STR(err.msg, "unlucky");
	cJSON_Delete(j);

	/* an object with more members than the limit */
	j = cJSON_CreateObject();
	cJSON *big = cJSON_AddObjectToObject(j, "big");
	char key[16];
	for (int i = 0; i <= SX_DECODE_MAX_ITEMS; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		cJSON_AddNumberToObject(big, key, i);
	}
	c.n = 0;
	CHECK_INT(sx_dec_sub(j, "big", item_fn, &it, &c, &err), SX_ETOOBIG);
	CHECK_STR(err.path, "big");
	CHECK_STR(err.msg, "more than 10000 entries");
	CHECK_INT(c.n, 0);
	cJSON_Delete(j);
}

static void test_new(void)
{
	struct sx_error err = {0};
	cJSON *j = parse("{'a':['x']}");
	struct item *it = sx_dec_new(j, sizeof(*it), &err);

	CHECK(it != NULL);
	if (it)
		CHECK_INT(it->v, 0);
	free(it);
	CHECK(sx_dec_new(cJSON_GetObjectItem(j, "a"), sizeof(*it), &err) == NULL);
	CHECK_STR(err.msg, "expected object, got array");
	CHECK_STR(err.path, "");
	CHECK(sx_dec_new(NULL, sizeof(*it), &err) == NULL);
	CHECK_STR(err.msg, "expected object, got null");
	CHECK_INT(sx_dec_oom(&err), SX_ENOMEM);
	CHECK_STR(err.msg, "out of memory");
	cJSON_Delete(j);
}

/* A failing string list leaves nothing behind (its callers rely on it). */
static void test_str_list_failure(void)
{
	cJSON *j = parse("{'l':['a',{}],'ok':['a','b']}");
	struct sx_error err = {0};
	sx_str *out = (void *)1;
	uint32_t n = 99;

	CHECK_INT(sx_dec_str_list(j, "l", &n, &out, &err), SX_EINVAL);
	CHECK(out == NULL);
	CHECK_INT(n, 0);
	CHECK_STR(err.path, "l[1]");
	CHECK_STR(err.msg, "expected string, got object");
	CHECK_INT(sx_dec_str_list(j, "ok", &n, &out, &err), 0);
	CHECK_INT(n, 2);
	CHECK_STR(sx_str_get(out[1]), "b");
	free(out);
	cJSON_Delete(j);
}

SX_TESTS(SX_TEST(test_objects_ok), SX_TEST(test_objects_absent_null_empty),
	 SX_TEST(test_objects_errors), SX_TEST(test_objects_too_long), SX_TEST(test_items_any_type),
	 SX_TEST(test_string_value), SX_TEST(test_each), SX_TEST(test_sub), SX_TEST(test_new),
	 SX_TEST(test_str_list_failure))
