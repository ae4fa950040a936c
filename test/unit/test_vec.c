/* Growable arrays (vec.h, src/util/vec.c): doubling from the minimum,
 * requests past the capacity's range refused, allocation failure leaving
 * the array as it was (linked with --wrap=realloc, see the Makefile). */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "schedext/vec.h"

void *__real_realloc(void *p, size_t n);

static int fail_next; /* reallocations left before one fails; 0 = off */

void *__wrap_realloc(void *p, size_t n)
{
	if (fail_next > 0 && --fail_next == 0)
		return NULL;
	return __real_realloc(p, n);
}

static void test_reserve(void)
{
	uint32_t *v = NULL, cap = 0, n = 0;

	CHECK_INT(sx_vec_reserve(v, cap, 0, 8), 0); /* nothing needed */
	CHECK(v == NULL);
	for (uint32_t i = 0; i < 1000; i++) {
		CHECK_INT(sx_vec_reserve(v, cap, n + 1, 8), 0);
		v[n++] = i;
	}
	CHECK_INT(cap, 1024); /* 8, 16, ..., 1024 */
	for (uint32_t i = 0; i < n; i++)
		CHECK_INT(v[i], i);
	CHECK_INT(sx_vec_reserve(v, cap, 5000, 8), 0); /* jumps: 1024 -> 8192 */
	CHECK_INT(cap, 8192);
	CHECK_INT(v[999], 999);
	free(v);
}

static void test_limits(void)
{
	uint32_t *v = NULL, cap = 0;
	char *b = NULL;
	uint32_t bcap = 0;

	CHECK_INT(sx_vec_reserve(v, cap, (uint64_t)UINT32_MAX + 1, 8), SX_ENOMEM);
	CHECK(v == NULL);
	CHECK_INT(cap, 0);
	/* a byte count past SIZE_MAX is refused before any allocation */
	CHECK_INT(sx_vec_grow(&b, &bcap, 2000, SIZE_MAX / 1000, 1), SX_ENOMEM);
	CHECK(b == NULL);
	CHECK_INT(bcap, 0);
	/* min 0 starts at 1 */
	CHECK_INT(sx_vec_reserve(v, cap, 1, 0), 0);
	CHECK_INT(cap, 1);
	free(v);
}

static void test_alloc_failure(void)
{
	uint32_t *v = NULL, cap = 0;

	CHECK_INT(sx_vec_reserve(v, cap, 4, 4), 0);
	v[3] = 42;
	fail_next = 1;
	CHECK_INT(sx_vec_reserve(v, cap, 5, 4), SX_ENOMEM);
	CHECK(v != NULL);
	CHECK_INT(cap, 4);
	CHECK_INT(v[3], 42);
	CHECK_INT(sx_vec_reserve(v, cap, 5, 4), 0);
	CHECK_INT(cap, 8);
	CHECK_INT(v[3], 42);
	free(v);
}

SX_TESTS(SX_TEST(test_reserve), SX_TEST(test_limits), SX_TEST(test_alloc_failure))
