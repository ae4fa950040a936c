/* The HTTP server's buffer pool (bufpool.h): a buffer handed back is
 * handed out again (best fit), and the slot and byte bounds hold. */
#include <stdlib.h>

#include "harness.h"
#include "schedext/bufpool.h"

static void test_reuse_best_fit(void)
{
	struct sx_bufpool p;
	struct sx_buf a, b, c;
	char *big, *small;

	CHECK_INT(sx_bufpool_init(&p, 4, 1 << 20), 0);
	sx_buf_init(&a);
	sx_buf_init(&b);
	sx_buf_init(&c);
	sx_bufpool_take(&p, &a, 4096);
	sx_bufpool_take(&p, &b, 1024);
	CHECK(a.cap == 4096 && b.cap == 1024 && a.len == 0 && a.data[0] == '\0');
	big = a.data;
	small = b.data;
	sx_bufpool_give_buf(&p, &a);
	sx_bufpool_give_buf(&p, &b);
	CHECK(a.data == NULL && b.data == NULL);
	CHECK_INT(p.n, 2);
	CHECK_INT(p.kept, 4096 + 1024);
	/* the smallest that fits */
	sx_bufpool_take(&p, &c, 1000);
	CHECK(c.data == small && c.cap == 1024);
	sx_buf_put(&c, "hello", 5);
	CHECK_STR(sx_buf_cstr(&c), "hello");
	sx_bufpool_give_buf(&p, &c);
	sx_bufpool_take(&p, &c, 2000);
	CHECK(c.data == big && c.len == 0);
	/* none fits: a new allocation of the size asked */
	sx_bufpool_take(&p, &a, 8192);
	CHECK(a.data != NULL && a.data != small && a.cap == 8192);
	sx_buf_free(&a);
	sx_buf_free(&c);
	sx_bufpool_destroy(&p);
}

static void test_bounds(void)
{
	struct sx_bufpool p;
	char *d[4];

	CHECK_INT(sx_bufpool_init(&p, 2, 10000), 0);
	for (int i = 0; i < 4; i++)
		d[i] = malloc(1000 * (size_t)(i + 1));
	sx_bufpool_give(&p, d[0], 1000);
	sx_bufpool_give(&p, d[1], 2000);
	CHECK_INT(p.n, 2);
	/* full: a larger one displaces the smallest */
	sx_bufpool_give(&p, d[2], 3000);
	CHECK_INT(p.n, 2);
	CHECK_INT(p.kept, 5000);
	/* over the budget: freed, not kept */
	sx_bufpool_give(&p, d[3], 40000);
	CHECK_INT(p.kept, 5000);
	sx_bufpool_give(&p, NULL, 0);
	sx_bufpool_destroy(&p);
}

SX_TESTS(SX_TEST(test_reuse_best_fit), SX_TEST(test_bounds))
