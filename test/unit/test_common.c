/* Error reports with field paths, allocation helpers, clocks. */
#include "harness.h"

#include <stdlib.h>

#include "schedext/common.h"

static void test_error_path(void)
{
	struct sx_error err;
	char buf[512];

	CHECK_INT(sx_error_set(&err, SX_EINVAL, "unknown effect %s", "\"Sometimes\""), SX_EINVAL);
	CHECK_INT(err.code, SX_EINVAL);
	CHECK_STR(sx_error_string(&err, buf, sizeof(buf)), "unknown effect \"Sometimes\"");
	sx_error_prefix(&err, "effect");
	sx_error_prefixf(&err, "[%d]", 0);
	sx_error_prefix(&err, "tolerations");
	sx_error_prefix(&err, "spec");
	sx_error_prefixf(&err, "items[%d]", 3);
	CHECK_STR(err.path, "items[3].spec.tolerations[0].effect");
	CHECK_STR(sx_error_string(&err, buf, sizeof(buf)),
		  "items[3].spec.tolerations[0].effect: unknown effect \"Sometimes\"");
	sx_error_prefix(&err, "");
	sx_error_prefix(&err, NULL);
	CHECK_STR(err.path, "items[3].spec.tolerations[0].effect");
	/* a NULL report is allowed */
	CHECK_INT(sx_error_set(NULL, SX_ENOMEM, "x"), SX_ENOMEM);
	sx_error_prefix(NULL, "x");
}

static void test_error_truncation(void)
{
	struct sx_error err;
	char comp[400];

	sx_error_set(&err, SX_ETOOBIG, "%01000d", 1);
	CHECK_INT(strlen(err.msg), sizeof(err.msg) - 1);
	memset(comp, 'a', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = '\0';
	sx_error_prefix(&err, "tail");
	for (int i = 0; i < 10; i++)
		sx_error_prefix(&err, comp);
	CHECK_INT(strlen(err.path), sizeof(err.path) - 1);
	CHECK(err.path[0] == 'a');
}

static void test_alloc_helpers(void)
{
	char *s = sx_strdup("pod-1");
	char *t = sx_strndup("namespace/name", 9);
	char *u = sx_strndup("ab\0cd", 5);
	void *z = sx_calloc(0, 8);

	CHECK_STR(s, "pod-1");
	CHECK_STR(t, "namespace");
	CHECK_STR(u, "ab");
	CHECK(z != NULL);
	CHECK(sx_strdup(NULL) == NULL);
	free(s);
	free(t);
	free(u);
	free(z);
}

static void test_clock_and_log(void)
{
	uint64_t a = sx_now_ns(), b = sx_now_ns();
	int saved = sx_log_verbosity;

	CHECK(b >= a);
	CHECK(sx_now_s() > 0);
	sx_log_verbosity = -1; /* silences even errors */
	sx_log(0, "not printed %d", 1);
	sx_log_verbosity = saved;
}

SX_TESTS(SX_TEST(test_error_path), SX_TEST(test_error_truncation), SX_TEST(test_alloc_helpers),
	 SX_TEST(test_clock_and_log))
