/* Item-by-item List decoding (src/api/json_items.c) and the state loader
 * using it (src/cache/state.c): the split keeps cJSON's view of the
 * document, and a state file loaded streaming gives the same objects and
 * the same messages as its whole tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/state.h"

#define NODE(n) "{\"kind\":\"Node\",\"metadata\":{\"name\":\"" n "\"}}"
#define POD(n, cpu)                                                                                \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" n "\",\"namespace\":\"default\"},"           \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"" cpu    \
	"\"}}}]}}"

static int split(const char *text, struct sx_json_list *l)
{
	return sx_json_list_split(text, strlen(text), SX_DECODE_MAX_DEPTH, l);
}

/* kubectl prints items before kind: the head holds the rest either way. */
static void test_split_members(void)
{
	static const char doc[] = " {\"apiVersion\":\"v1\",\"items\":[1, {\"a\":[2]} ,\"x\"],"
				  "\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"7\"}} \n";
	struct sx_json_list l;
	struct sx_json_items it;
	cJSON *item;
	const char *at;

	CHECK_INT(split(doc, &l), 0);
	CHECK_STR(sx_json_string(l.head, "kind"), "List");
	CHECK(cJSON_GetObjectItemCaseSensitive(l.head, "items") == NULL);
	CHECK_INT(cJSON_GetArraySize(l.head), 3);
	CHECK(l.items != NULL);
	CHECK_INT((int)l.items_len, (int)strlen("[1, {\"a\":[2]} ,\"x\"]"));
	sx_json_items_start(&it, l.items, l.items_len);
	CHECK_INT(sx_json_items_next(&it, &item, &at), 1);
	CHECK(cJSON_IsNumber(item) && item->valueint == 1 && *at == '1');
	cJSON_Delete(item);
	CHECK_INT(sx_json_items_next(&it, &item, &at), 1);
	CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(item, "a")) && *at == '{');
	cJSON_Delete(item);
	CHECK_INT(sx_json_items_next(&it, &item, NULL), 1);
	CHECK_STR(cJSON_GetStringValue(item), "x");
	cJSON_Delete(item);
	CHECK_INT(sx_json_items_next(&it, &item, NULL), 0);
	CHECK(item == NULL);
	CHECK(sx_json_items_pos(&it) == l.items + l.items_len);
	sx_json_list_free(&l);
}

/* Keys as cJSON sees them: escapes resolved, the first duplicate wins, an
 * "items" that is no array stays in the head. */
static void test_split_keys(void)
{
	struct sx_json_list l;

	CHECK_INT(split("{\"it\\u0065ms\":[1],\"items\":[2,3],\"k\\\"\":1}", &l), 0);
	CHECK_INT((int)l.items_len, 3); /* [1] */
	CHECK(cJSON_GetObjectItemCaseSensitive(l.head, "k\"") != NULL);
	CHECK_INT(cJSON_GetArraySize(l.head), 1);
	sx_json_list_free(&l);

	CHECK_INT(split("{\"items\":null,\"items\":[2]}", &l), 0);
	CHECK(l.items == NULL);
	CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(l.head, "items")));
	CHECK_INT(cJSON_GetArraySize(l.head), 1);
	sx_json_list_free(&l);

	CHECK_INT(split("{\"kind\":\"PodList\"}", &l), 0);
	CHECK(l.items == NULL);
	sx_json_list_free(&l);
}

/* {"a":[[...]]} with depth containers in all. */
static const char *nested(char *buf, int depth)
{
	int n = sprintf(buf, "{\"a\":");

	for (int i = 1; i < depth; i++)
		buf[n++] = '[';
	for (int i = 1; i < depth; i++)
		buf[n++] = ']';
	buf[n++] = '}';
	buf[n] = '\0';
	return buf;
}

/* What the scanner refuses is the caller's to parse whole. */
static void test_split_refuses(void)
{
	static const char *bad[] = {
		"[1]", "{\"items\":[1,]}", "{\"a\":1} {}",	     "{\"a\":1",
		"",    "\xEF\xBB\xBF{}",   "{\"items\":[{\"a\":}]}",
	};
	char deep[200];
	struct sx_json_list l;

	for (size_t k = 0; k < SX_ARRAY_SIZE(bad); k++) {
		CHECK_INT(split(bad[k], &l), SX_EINVAL);
		CHECK(l.head == NULL);
	}
	CHECK_INT(sx_json_list_split("{\"a\":1}\0", 8, SX_DECODE_MAX_DEPTH, &l), SX_EINVAL);
	/* exactly SX_DECODE_MAX_DEPTH levels pass, one more does not */
	CHECK_INT(split(nested(deep, SX_DECODE_MAX_DEPTH), &l), 0);
	sx_json_list_free(&l);
	CHECK_INT(split(nested(deep, SX_DECODE_MAX_DEPTH + 1), &l), SX_EINVAL);
}

/* Loads text both ways: streaming (sx_state_load_buffer) and as one tree
 * (sx_parse_documents + sx_state_load_documents); same result, message and
 * contents. */
static void same_both_ways(const char *text, int want_rc, const char *want_msg)
{
	struct sx_cache *a = sx_cache_new(), *b = sx_cache_new();
	struct sx_error ea = {0}, eb = {0};
	struct sx_cache_stats sa, sb;
	cJSON *docs = sx_parse_documents(text, strlen(text), &eb);
	int ra = sx_state_load_buffer(a, "s.json", text, strlen(text), &ea);
	int rb;

	if (docs) {
		rb = sx_state_load_documents(b, "s.json", docs, &eb);
	} else {
		char msg[600];

		sx_error_string(&eb, msg, sizeof(msg));
		rb = sx_error_set(&eb, eb.code, "s.json: %s", msg);
	}
	cJSON_Delete(docs);
	if (ra != want_rc || rb != want_rc)
		sx_test_fail(__FILE__, __LINE__, "%.60s: rc %d / %d, want %d (%s)", text, ra, rb,
			     want_rc, ea.msg);
	CHECK_STR(ea.msg, eb.msg);
	if (want_msg)
		CHECK_STR(ea.msg, want_msg);
	sx_cache_stats(a, &sa);
	sx_cache_stats(b, &sb);
	CHECK_INT(sa.nodes, sb.nodes);
	CHECK_INT(sa.pods, sb.pods);
	sx_cache_free(a);
	sx_cache_free(b);
}

static void test_state_streamed_like_tree(void)
{
	same_both_ways("{\"items\":[" NODE("n1") "," POD("p1", "1") "],\"kind\":\"List\"}", 0,
		       NULL);
	same_both_ways("{\"kind\":\"NodeList\",\"items\":[{\"metadata\":{\"name\":\"n1\"}}]}", 0,
		       NULL);
	same_both_ways("{\"kind\":\"List\",\"items\":[" NODE("n1") ",1]}", SX_EINVAL,
		       "s.json: items[1]: expected an object");
	same_both_ways(
		"{\"kind\":\"List\",\"items\":[" NODE("n1") "," POD("p1", "x") "]}", SX_EINVAL,
		"s.json: items[1] (pod default/p1): spec.containers[0].resources.requests.cpu: "
		"invalid quantity \"x\"");
	/* a syntax error after a bad item: the syntax error, as the tree says */
	same_both_ways("{\"kind\":\"List\",\"items\":[" POD("p1", "x") ",{\"a\":}]}", SX_EINVAL,
		       "s.json: JSON line 1 column 166: syntax error");
	same_both_ways("{\"kind\":\"List\",\"items\":{}}", SX_EINVAL,
		       "s.json: items: expected an array");
	same_both_ways("{\"kind\":\"List\",\"items\":null}", 0, NULL);
	same_both_ways("{\"kind\":\"List\"}", 0, NULL);
	same_both_ways(NODE("n1"), 0, NULL);
	same_both_ways("{\"kind\":\"Node\",\"items\":[1],\"metadata\":{\"name\":\"n\"}}", 0, NULL);
	same_both_ways("{\"items\":[" NODE("n1") "]}", SX_EINVAL, NULL); /* no kind */
	same_both_ways("{\"kind\":\"List\",\"items\":[{\"kind\":\"Widget\"}," NODE("n1") "]}", 0,
		       NULL);
	same_both_ways("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{}}]}",
		       SX_EINVAL, "s.json: items[0] (node): metadata.name: missing name");
	same_both_ways("\xEF\xBB\xBF \r\n{\"kind\":\"List\",\"items\":[" NODE("n1") "]}", 0, NULL);
	same_both_ways("[" NODE("n1") "]", SX_EINVAL, "s.json: documents[0]: expected an object");
}

/* A file on disk is mapped and read item by item; pages are given back as
 * it goes. The same objects as from the buffer. */
static void test_state_file_mapped(void)
{
	char path[] = "/tmp/test_json_items_XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct sx_cache *c = sx_cache_new();
	struct sx_error err = {0};
	struct sx_cache_stats st;

	CHECK(f != NULL);
	fputs("{\"apiVersion\":\"v1\",\"items\":[", f);
	for (int i = 0; i < 3000; i++)
		fprintf(f,
			"%s{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\",\"namespace\":\"d\"},"
			"\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}]}}",
			i ? "," : "", i);
	fputs("," NODE("n1") "],\"kind\":\"List\",\"metadata\":{}}", f);
	fclose(f);
	CHECK_INT(sx_state_load_file(c, path, &err), 0);
	sx_cache_stats(c, &st);
	CHECK_INT(st.nodes, 1);
	CHECK_INT(st.pods, 3000);
	sx_cache_free(c);
	unlink(path);
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_split_members), SX_TEST(test_split_keys), SX_TEST(test_split_refuses),
	 SX_TEST(test_state_streamed_like_tree), SX_TEST(test_state_file_mapped))
