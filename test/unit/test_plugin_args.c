/* The shared plugin-argument reader and field-error collector
 * (plugin_args.h): defaults, type errors, collected range errors and the
 * one/several wording. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <string.h>

#include "harness.h"
#include "schedext/plugin_args.h"

struct demo {
	int32_t weight;
	int32_t count;
	bool flag;
};

static const struct sx_arg demo_args[] = {
	{ "weight", SX_ARG_INT, offsetof(struct demo, weight), 1, 0, 100, "an integer", "[0-100]" },
	{ "count", SX_ARG_INT32, offsetof(struct demo, count), 7, 0, INT32_MAX, "a 32-bit integer",
	  "[0, inf)" },
	{ "flag", SX_ARG_BOOL, offsetof(struct demo, flag), 1, 0, 0, "a boolean", NULL },
};

/* Reads json; returns the error text ("" when valid). */
static const char *read_demo(const char *json, struct demo *d, char *buf, size_t len)
{
	struct sx_arg_errors e = { 0 };
	struct sx_error err = { 0 };
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

SX_TESTS(SX_TEST(test_defaults_and_values), SX_TEST(test_errors))
