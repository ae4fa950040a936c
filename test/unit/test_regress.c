/* Regression tests for bugs found by fuzzing. Each test names the
 * input that used to misbehave; the fuzz corpus replay (test/fuzz/regressions)
 * covers the raw inputs, these check the behaviour in words. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/state.h"

/* A JSON document followed by NUL bytes: the trailing-garbage scan used
 * strchr(" \t\r\n", c), which matches the terminator, so it walked past the
 * end of the buffer (heap-buffer-overflow under ASan). The buffer is exactly
 * the document's length, as a file or a network body is. */
static void test_json_then_nul_bytes(void)
{
	static const char doc[] = "{\"kind\":\"Pod\"}";
	size_t n = sizeof(doc) - 1 + 3;
	char *buf = malloc(n); /* no terminator: ASan sees any over-read */
	struct sx_error err = {0};

	memcpy(buf, doc, sizeof(doc) - 1);
	memset(buf + sizeof(doc) - 1, 0, 3);
	CHECK(sx_parse_documents(buf, n, &err) == NULL);
	CHECK_STR(err.msg, "JSON line 1 column 15: syntax error");
	/* whitespace, then NUL: points at the NUL */
	memcpy(buf, "[1] \n\0\0", 7);
	CHECK(sx_parse_documents(buf, 7, &err) == NULL);
	CHECK_STR(err.msg, "JSON line 2 column 1: syntax error");
	/* whitespace only after the document is still fine */
	memcpy(buf, "[1]  \r\n\t", 8);
	cJSON *d = sx_parse_documents(buf, 8, &err);
	CHECK(d != NULL);
	cJSON_Delete(d);
	free(buf);
}

/* The same through the state-file loader, which is where a user meets it. */
static void test_state_file_then_nul_bytes(void)
{
	static const char doc[] = "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}";
	size_t n = sizeof(doc) - 1 + 1;
	char *buf = malloc(n);
	struct sx_cache *c = sx_cache_new();
	struct sx_error err = {0};

	memcpy(buf, doc, sizeof(doc) - 1);
	buf[n - 1] = '\0';
	CHECK(sx_state_load_buffer(c, "nul.json", buf, n, &err) < 0);
	free(buf);
	sx_cache_free(c);
}

static struct sx_node *node_from(const char *json)
{
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);
	struct sx_node *n = j ? sx_decode_node(j, &err) : NULL;

	cJSON_Delete(j);
	CHECK(n != NULL);
	return n;
}

/* A node carrying an image entry with no names, updated: same_images called
 * memcmp(NULL, NULL, 0), undefined behaviour (UBSan: null pointer passed as
 * argument declared nonnull). */
static void test_node_update_image_without_names(void)
{
	static const char node[] =
		"{\"metadata\":{\"name\":\"n1\"},\"status\":{\"images\":"
		"[{\"sizeBytes\":10},{\"names\":[\"redis:7\"],\"sizeBytes\":5}]}}";
	struct sx_cache *c = sx_cache_new();
	struct sx_object o = {SX_KIND_NODE, node_from(node)};
	struct sx_snapshot *s;

	CHECK_INT(sx_cache_upsert(c, &o), 0);
	o.obj = node_from(node); /* MODIFIED with the same images */
	CHECK_INT(sx_cache_upsert(c, &o), 0);
	s = sx_cache_snapshot(c);
	CHECK_INT(sx_snapshot_image_nodes(s, sx_intern("redis:7")), 1);
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_json_then_nul_bytes), SX_TEST(test_state_file_then_nul_bytes),
	 SX_TEST(test_node_update_image_without_names))
