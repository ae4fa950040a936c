/* LIST pages decoded item by item (src/cache/informer.c, through
 * sx_informer_replay_list): the page's metadata wherever it sits, an
 * undecodable item skipped, and what the scanner refuses decided by cJSON
 * as before. */
#include <string.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/informer.h"

#define NODE(n) "{\"metadata\":{\"name\":\"" n "\",\"resourceVersion\":\"3\"}}"

/* Replays page as the Node LIST; returns rc, nodes in *n, the RV in rv. */
static int replay(const char *page, uint32_t *n, char *rv)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_cache_stats st;
	int rc = sx_informer_replay_list(c, SX_KIND_NODE, page, strlen(page), rv, 64);

	sx_cache_stats(c, &st);
	*n = st.nodes;
	sx_cache_free(c);
	return rc;
}

static void test_list_page_streamed(void)
{
	char rv[64];
	uint32_t n;

	/* items before metadata, as a server may send them */
	CHECK_INT(replay("{\"kind\":\"NodeList\",\"items\":[" NODE("a") "," NODE(
				 "b") "],\"metadata\":{\"resourceVersion\":\"42\"}}",
			 &n, rv),
		  0);
	CHECK_INT(n, 2);
	CHECK_STR(rv, "42");
	/* an undecodable item is skipped, the others kept */
	CHECK_INT(replay("{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" NODE(
				 "a") ",{\"metadata\":{\"name\":1}},7," NODE("b") "]}",
			 &n, rv),
		  0);
	CHECK_INT(n, 2);
	CHECK_STR(rv, "5");
	/* the first "items" counts, as cJSON's lookup */
	CHECK_INT(replay("{\"items\":[" NODE("a") "],\"items\":[" NODE("b") "," NODE("c") "]}", &n,
			 rv),
		  0);
	CHECK_INT(n, 1);
	CHECK_INT(replay("{\"items\":null,\"metadata\":{}}", &n, rv), 0);
	CHECK_INT(n, 0);
}

/* Bodies the scanner refuses keep cJSON's verdict: trailing bytes were
 * tolerated, a broken document or a wrong "items" is a malformed page. */
static void test_list_page_refused(void)
{
	char rv[64];
	uint32_t n;

	CHECK_INT(replay("{\"items\":[" NODE("a") "]} trailing", &n, rv), 0);
	CHECK_INT(n, 1);
	CHECK(replay("{\"items\":[" NODE("a") ",]}", &n, rv) < 0);
	CHECK(replay("{\"items\":\"x\"}", &n, rv) < 0);
	CHECK(replay("[" NODE("a") "]", &n, rv) < 0);
	CHECK(replay("", &n, rv) < 0);
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_list_page_streamed), SX_TEST(test_list_page_refused))
