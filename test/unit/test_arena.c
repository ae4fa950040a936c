/* Arenas (arena.h): alignment, zeroing, large requests, many blocks,
 * overflow; the ASan build checks that nothing leaks or overlaps. */
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "schedext/arena.h"

static void test_alloc_and_free(void)
{
	struct sx_arena *a = sx_arena_new();
	unsigned char *prev = NULL;

	CHECK(a != NULL);
	for (int i = 0; i < 5000; i++) {
		size_t n = (size_t)(i % 97) + 1;
		unsigned char *p = sx_arena_alloc(a, n);

		CHECK(p != NULL);
		CHECK((uintptr_t)p % alignof(max_align_t) == 0);
		memset(p, 0xab, n);
		CHECK(p != prev);
		prev = p;
	}
	int64_t *z = sx_arena_calloc(a, 100000, sizeof(int64_t)); /* a block of its own */
	CHECK(z != NULL);
	for (int i = 0; z && i < 100000; i++)
		if (z[i] != 0) {
			CHECK(z[i] == 0);
			break;
		}
	CHECK(sx_arena_alloc(a, 0) != NULL);
	CHECK(sx_arena_calloc(a, SIZE_MAX / 2, 4) == NULL);
	sx_arena_free(a);
	sx_arena_free(NULL);
}

SX_TESTS(SX_TEST(test_alloc_and_free))
