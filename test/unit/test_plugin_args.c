/* The shared plugin-argument reader and field-error collector
 * (plugin_args.h): defaults, type errors, collected range errors and the
 * one/several wording; the structured kinds (enums, nested objects, lists
 * of strings and of objects, decoded values) and their flags. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/plugin_args.h"

struct demo {
	int32_t weight;
	int32_t count;
	bool flag;
};

static const struct sx_arg demo_args[] = {
	{.name = "weight",
	 .type = SX_ARG_INT,
	 .offset = offsetof(struct demo, weight),
	 .def = 1,
	 .min = 0,
	 .max = 100,
	 .type_desc = "an integer",
	 .range_desc = "[0-100]"},
	{.name = "count",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct demo, count),
	 .def = 7,
	 .min = 0,
	 .max = INT32_MAX,
	 .type_desc = "a 32-bit integer",
	 .range_desc = "[0, inf)"},
	{.name = "flag",
	 .type = SX_ARG_BOOL,
	 .offset = offsetof(struct demo, flag),
	 .def = 1,
	 .type_desc = "a boolean"},
};

/* Reads json; returns the error text ("" when valid). */
static const char *read_demo(const char *json, struct demo *d, char *buf, size_t len)
{
	struct sx_arg_errors e = {0};
	struct sx_error err = {0};
	cJSON *j = json ? cJSON_Parse(json) : NULL;
	int rc = sx_args_read(j, demo_args, SX_ARRAY_SIZE(demo_args), d, &e, &err);

	if (rc == 0)
		rc = sx_arg_errors_finish(&e, &err);
	cJSON_Delete(j);
	return rc ? sx_error_string(&err, buf, len) : "";
}

static void test_defaults_and_values(void)
{
	struct demo d;
	char b[600];

	CHECK_STR(read_demo(NULL, &d, b, sizeof(b)), "");
	CHECK_INT(d.weight, 1);
	CHECK_INT(d.count, 7);
	CHECK(d.flag);
	CHECK_STR(read_demo("{\"weight\":5,\"count\":null,\"flag\":false}", &d, b, sizeof(b)), "");
	CHECK_INT(d.weight, 5);
	CHECK_INT(d.count, 7);
	CHECK(!d.flag);
}

static void test_errors(void)
{
	struct demo d;
	char b[600];

	CHECK_STR(read_demo("{\"weight\":1.5}", &d, b, sizeof(b)),
		  "weight: Invalid value: must be an integer");
	CHECK_STR(read_demo("{\"count\":1e10}", &d, b, sizeof(b)),
		  "count: Invalid value: must be a 32-bit integer");
	CHECK_STR(read_demo("{\"flag\":1}", &d, b, sizeof(b)),
		  "flag: Invalid value: must be a boolean");
	CHECK_STR(read_demo("{\"weight\":1e10}", &d, b, sizeof(b)),
		  "weight: Invalid value: 10000000000: not in valid range [0-100]");
	CHECK_STR(read_demo("{\"weight\":101,\"count\":-1}", &d, b, sizeof(b)),
		  "[weight: Invalid value: 101: not in valid range [0-100], "
		  "count: Invalid value: -1: not in valid range [0, inf)]");
}

/* ---------- the structured kinds ---------- */

struct item {
	char *name;
	int32_t weight;
};

struct nested {
	int32_t mode, level;
	struct {
		int32_t depth;
		int32_t lenient;
	} obj;
	bool has_obj;
	char *label;
	struct item *items;
	uint32_t nitems;
	char **tags;
	uint32_t ntags;
	int32_t *decoded;
	bool given;
};

static void check_tag(const char *s, const char *path, struct sx_arg_errors *e)
{
	if (strchr(s, ' '))
		sx_arg_errors_add(e, path, "Invalid value: \"%s\": no spaces", s);
}

/* DECODE: a number, boxed; "bad" for any other value. */
static int decode_box(const cJSON *v, void *field, struct sx_error *err)
{
	int32_t **box = field;

	if (!cJSON_IsNumber(v))
		return sx_error_set(err, SX_EINVAL, "bad");
	*box = malloc(sizeof(**box));
	if (!*box)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	**box = (int32_t)v->valuedouble;
	return 0;
}

static void release_box(void *field)
{
	int32_t **box = field;

	free(*box);
	*box = NULL;
}

static const char *const modes[] = {"Alpha", "Beta", NULL};

static const struct sx_arg item_fields[] = {
	{.name = "name",
	 .type = SX_ARG_STRING,
	 .offset = offsetof(struct item, name),
	 .max = 8,
	 .flags = SX_ARG_REQUIRED,
	 .type_err = "must be a short string"},
	{.name = "weight",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct item, weight),
	 .def = 1,
	 .min = 1,
	 .max = 9,
	 .type_err = "must be an integer",
	 .range_desc = "[1, 9]"},
};

static const struct sx_arg item_elem[] = {
	{.type = SX_ARG_OBJECT, .type_err = "must be an object", .sub = item_fields, .nsub = 2},
};

static const struct sx_arg tag_elem[] = {
	{.type = SX_ARG_STRING,
	 .flags = SX_ARG_REQUIRED,
	 .type_err = "must be a string",
	 .check = check_tag},
};

static const struct sx_arg obj_fields[] = {
	{.name = "depth",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct nested, obj.depth) - offsetof(struct nested, obj),
	 .def = 2,
	 .min = 0,
	 .max = 5,
	 .flags = SX_ARG_NULL_IS_VALUE,
	 .type_desc = "a 32-bit integer",
	 .range_desc = "[0, 5]"},
	{.name = "lenient",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct nested, obj.lenient) - offsetof(struct nested, obj),
	 .def = 4,
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_LENIENT},
};

static const struct sx_arg nested_args[] = {
	{.name = "mode",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct nested, mode),
	 .def = 1,
	 .type_err = "must be a string",
	 .values = modes},
	{.name = "level",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct nested, level),
	 .def = -1,
	 .max = 4,
	 .type_err = "must be a string",
	 .values = modes},
	{.name = "obj",
	 .type = SX_ARG_OBJECT,
	 .offset = offsetof(struct nested, obj),
	 .flags = SX_ARG_PRESENCE,
	 .type_err = "must be an object",
	 .sub = obj_fields,
	 .nsub = 2,
	 .count = offsetof(struct nested, has_obj)},
	{.name = "label",
	 .type = SX_ARG_STRING,
	 .offset = offsetof(struct nested, label),
	 .max = 4,
	 .type_err = "must be a string of at most 4 bytes"},
	{.name = "items",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct nested, items),
	 .max = 3,
	 .type_err = "must be a list",
	 .sub = item_elem,
	 .nsub = 1,
	 .elem_size = sizeof(struct item),
	 .count = offsetof(struct nested, nitems)},
	{.name = "tags",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct nested, tags),
	 .max = 2,
	 .flags = SX_ARG_TOO_MANY_IS_TYPE | SX_ARG_WHOLE,
	 .type_err = "must be at most 2 strings",
	 .sub = tag_elem,
	 .nsub = 1,
	 .elem_size = sizeof(char *),
	 .count = offsetof(struct nested, ntags)},
	{.name = "box",
	 .type = SX_ARG_DECODE,
	 .offset = offsetof(struct nested, decoded),
	 .decode = decode_box,
	 .release = release_box},
	{.name = "given", .type = SX_ARG_GIVEN, .offset = offsetof(struct nested, given)},
};

/* Reads json into d (preset: obj.depth 99); returns the error text. d's
 * strings and lists stay for the caller to look at and free. */
static const char *read_nested(const char *json, struct nested *d, char *buf, size_t len)
{
	struct sx_arg_errors e = {0};
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);
	int rc;

	CHECK(j != NULL);
	memset(d, 0, sizeof(*d));
	d->obj.depth = 99;
	rc = sx_args_read(j, nested_args, SX_ARRAY_SIZE(nested_args), d, &e, &err);
	if (rc == 0)
		rc = sx_arg_errors_finish(&e, &err);
	cJSON_Delete(j);
	return rc ? sx_error_string(&err, buf, len) : "";
}

static void test_structured_values(void)
{
	struct nested d;
	char b[600];

	CHECK_STR(read_nested("{\"level\":\"Alpha\"}", &d, b, sizeof(b)), "");
	CHECK_INT(d.mode, 1);
	CHECK_INT(d.level, 0);
	CHECK(!d.has_obj);
	CHECK_INT(d.obj.depth, 99); /* an absent object leaves its struct */
	CHECK(d.items == NULL && d.nitems == 0 && d.decoded == NULL && !d.given);
	CHECK_STR(read_nested("{\"mode\":\"Alpha\",\"level\":\"Beta\",\"obj\":{\"lenient\":\"x\"},"
			      "\"label\":\"abcd\",\"items\":[{\"name\":\"a\"},{\"name\":\"b\","
			      "\"weight\":3}],"
			      "\"tags\":[\"x\",\"y\"],\"box\":42,\"given\":[]}",
			      &d, b, sizeof(b)),
		  "");
	CHECK_INT(d.mode, 0);
	CHECK_INT(d.level, 1);
	CHECK(d.has_obj);
	CHECK_INT(d.obj.depth, 2);
	CHECK_INT(d.obj.lenient, 4); /* the wrong type reads as the default */
	CHECK_STR(d.label, "abcd");
	CHECK_INT(d.nitems, 2);
	CHECK_STR(d.items[0].name, "a");
	CHECK_INT(d.items[0].weight, 1);
	CHECK_STR(d.items[1].name, "b");
	CHECK_INT(d.items[1].weight, 3);
	CHECK_INT(d.ntags, 2);
	CHECK_STR(d.tags[1], "y");
	CHECK(d.decoded && *d.decoded == 42);
	CHECK(d.given);
	sx_args_free(nested_args, SX_ARRAY_SIZE(nested_args), &d);
	CHECK(d.label == NULL && d.items == NULL && d.nitems == 0 && d.tags == NULL &&
	      d.decoded == NULL);
}

static void test_structured_errors(void)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{"{\"mode\":5}", "mode: must be a string"},
		{"{\"mode\":\"Gamma\",\"level\":\"Alpha\"}",
		 "mode: Unsupported value: \"Gamma\": supported values: \"Alpha\", \"Beta\""},
		{"{}", "level: Unsupported value: \"\": supported values: \"Alpha\", \"Beta\""},
		{"{\"level\":\"Gammadelta\"}",
		 "level: Unsupported value: \"Gamm\": supported values: \"Alpha\", \"Beta\""},
		{"{\"level\":\"Beta\",\"obj\":[]}", "obj: must be an object"},
		{"{\"level\":\"Beta\",\"obj\":{\"depth\":null}}",
		 "obj.depth: Invalid value: must be a 32-bit integer"},
		{"{\"level\":\"Beta\",\"obj\":{\"depth\":7}}",
		 "obj.depth: Invalid value: 7: not in valid range [0, 5]"},
		{"{\"level\":\"Beta\",\"label\":\"abcde\"}",
		 "label: must be a string of at most 4 bytes"},
		{"{\"level\":\"Beta\",\"items\":{}}", "items: must be a list"},
		{"{\"level\":\"Beta\",\"items\":[{},{},{},{}]}",
		 "items: Too many: 4: must have at most 3 items"},
		{"{\"level\":\"Beta\",\"items\":[{\"name\":\"a\"},7]}",
		 "items[1]: must be an object"},
		{"{\"level\":\"Beta\",\"items\":[{\"name\":null}]}",
		 "items[0].name: must be a short string"},
		{"{\"level\":\"Beta\",\"items\":[{\"name\":\"a\",\"weight\":1.5}]}",
		 "items[0].weight: must be an integer"},
		{"{\"level\":\"Beta\",\"items\":[{\"name\":\"a\",\"weight\":10},{\"name\":\"b\","
		 "\"weight\":0}]}",
		 "[items[0].weight: Invalid value: 10: not in valid range [1, 9], "
		 "items[1].weight: Invalid value: 0: not in valid range [1, 9]]"},
		{"{\"level\":\"Beta\",\"tags\":[\"a\",\"b\",\"c\"]}",
		 "tags: must be at most 2 strings"},
		{"{\"level\":\"Beta\",\"tags\":[\"a\",null]}", "tags[1]: must be a string"},
		{"{\"level\":\"Beta\",\"tags\":[\"a b\",\"c d\"]}",
		 "[tags[0]: Invalid value: \"a b\": no spaces, tags[1]: Invalid value: \"c d\": no "
		 "spaces]"},
		{"{\"level\":\"Beta\",\"box\":\"x\"}", "box: bad"},
	};
	struct sx_error err = {0};
	struct nested d;
	char b[600];
	cJSON *j;

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		CHECK_STR(read_nested(cases[i].json, &d, b, sizeof(b)), cases[i].want);
		sx_args_free(nested_args, SX_ARRAY_SIZE(nested_args),
			     &d); /* what was read before */
	}
	CHECK(sx_args_is_object(NULL, "DemoArgs", &err));
	j = cJSON_Parse("[1]");
	CHECK(!sx_args_is_object(j, "DemoArgs", &err));
	CHECK_STR(sx_error_string(&err, b, sizeof(b)), "DemoArgs must be an object");
	cJSON_Delete(j);
}

/* ---------- the lenient flags ---------- */

struct loose_item {
	int32_t n;
	int32_t pick; /* index in modes, -1 absent, SX_ARG_ENUM_BAD */
};

struct loose {
	struct loose_item *items;
	uint32_t nitems;
};

static const struct sx_arg loose_fields[] = {
	{.name = "n",
	 .type = SX_ARG_INT32,
	 .offset = offsetof(struct loose_item, n),
	 .def = 3,
	 .min = INT32_MIN,
	 .max = INT32_MAX,
	 .flags = SX_ARG_LENIENT | SX_ARG_TRUNCATE},
	{.name = "pick",
	 .type = SX_ARG_ENUM,
	 .offset = offsetof(struct loose_item, pick),
	 .def = -1,
	 .flags = SX_ARG_QUIET,
	 .values = modes},
};

static const struct sx_arg loose_elem[] = {
	{.type = SX_ARG_OBJECT, .flags = SX_ARG_LENIENT, .sub = loose_fields, .nsub = 2},
};

static const struct sx_arg loose_args[] = {
	{.name = "items",
	 .type = SX_ARG_LIST,
	 .offset = offsetof(struct loose, items),
	 .max = 2,
	 .flags = SX_ARG_SOFT | SX_ARG_AT_MOST,
	 .type_err = "Invalid value: must be a list",
	 .sub = loose_elem,
	 .nsub = 1,
	 .elem_size = sizeof(struct loose_item),
	 .count = offsetof(struct loose, nitems)},
};

/* SX_ARG_SOFT, AT_MOST, LENIENT, TRUNCATE, QUIET; list elements start
 * from their defaults. */
static void test_lenient_flags(void)
{
	struct sx_arg_errors e = {0};
	struct sx_error err = {0};
	struct loose d = {0};
	cJSON *j = cJSON_Parse("{\"items\":[{\"n\":2.7,\"pick\":\"Beta\"},"
			       "{\"n\":\"x\",\"pick\":\"Gamma\"},{\"n\":1}]}");
	char b[600];

	CHECK_INT(sx_args_read(j, loose_args, 1, &d, &e, &err), 0);
	CHECK_INT(e.n, 0);
	CHECK_INT(d.nitems, 2); /* the third is beyond max: unread */
	CHECK_INT(d.items[0].n, 2);
	CHECK_INT(d.items[0].pick, 1);
	CHECK_INT(d.items[1].n, 3);
	CHECK_INT(d.items[1].pick, SX_ARG_ENUM_BAD);
	sx_args_free(loose_args, 1, &d);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"items\":[7,{\"n\":-1e300,\"pick\":5}]}");
	CHECK_INT(sx_args_read(j, loose_args, 1, &d, &e, &err), 0);
	CHECK_INT(d.items[0].n, 3);
	CHECK_INT(d.items[0].pick, -1);
	CHECK_INT(d.items[1].n, INT32_MIN);
	CHECK_INT(d.items[1].pick, SX_ARG_ENUM_BAD);
	sx_args_free(loose_args, 1, &d);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"items\":{}}");
	CHECK_INT(sx_args_read(j, loose_args, 1, &d, &e, &err), 0);
	CHECK_INT(sx_arg_errors_finish(&e, &err), SX_EINVAL);
	CHECK_STR(sx_error_string(&err, b, sizeof(b)), "items: Invalid value: must be a list");
	cJSON_Delete(j);
}

SX_TESTS(SX_TEST(test_defaults_and_values), SX_TEST(test_errors), SX_TEST(test_structured_values),
	 SX_TEST(test_structured_errors), SX_TEST(test_lenient_flags))
