/* The hash table and the hash function (hmap.h, src/util/hmap.c):
 * integer and string keys, insert, lookup, replace, delete with backward
 * shift, growth, iteration, clone, the entry bound, and allocation
 * failure (linked with --wrap=malloc,calloc, see the Makefile: the armed
 * allocation fails and leaves the table as it was). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/hmap.h"

/* ---------- failing allocator ---------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);

static int fail_next; /* allocations left before one fails; 0 = off */

static bool fail_now(void)
{
	return fail_next > 0 && --fail_next == 0;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

/* ---------- hash ---------- */

static void test_hash(void)
{
	char a[64], b[64];

	CHECK(sx_hash_str("") == sx_hash_bytes("", 0));
	CHECK(sx_hash_str("node-1") == sx_hash_bytes("node-1xyz", 6));
	CHECK(sx_hash_str("node-1") != sx_hash_str("node-2"));
	CHECK(sx_hash_str("a") != sx_hash_str("b"));
	CHECK(sx_hash_bytes("\0", 1) != sx_hash_bytes("", 0));
	CHECK(sx_hash_bytes("\0\0", 2) != sx_hash_bytes("\0", 1));
	/* every length 0..40, every byte position: one changed byte changes
	 * the hash, and the low bits too (bucket indexes) */
	for (size_t n = 1; n <= 40; n++) {
		memset(a, 'x', n);
		memcpy(b, a, n);
		for (size_t i = 0; i < n; i++) {
			b[i] = 'y';
			CHECK(sx_hash_bytes(a, n) != sx_hash_bytes(b, n));
			CHECK((sx_hash_bytes(a, n) & 0xffff) != (sx_hash_bytes(b, n) & 0xffff));
			b[i] = 'x';
		}
		CHECK(sx_hash_bytes(a, n) != sx_hash_bytes(a, n - 1));
	}
	/* distinct names spread over 256 buckets */
	unsigned buckets[256] = {0}, most = 0;

	for (int i = 0; i < 25600; i++) {
		snprintf(a, sizeof(a), "worker-%d", i);
		buckets[sx_hash_str(a) & 255]++;
	}
	for (int i = 0; i < 256; i++)
		most = buckets[i] > most ? buckets[i] : most;
	CHECK(most < 160);
}

/* ---------- integer keys ---------- */

static void test_int_keys(void)
{
	struct sx_hmap m;
	uint32_t i, seen = 0;
	uint64_t sum = 0;
	struct sx_hmap_slot *s;

	sx_hmap_init(&m, 100000);
	CHECK_INT(sx_hmap_count(&m), 0);
	CHECK_INT(sx_hmap_get(&m, 7), 0);
	CHECK(sx_hmap_slot(&m, 7) == NULL);
	CHECK_INT(sx_hmap_del(&m, 7), 0);
	CHECK_INT(sx_hmap_put(&m, 1, 0), SX_EINVAL);
	for (uint32_t k = 0; k < 10000; k++)
		CHECK_INT(sx_hmap_put(&m, SX_HMAP_PAIR(k % 7, k), k + 1), 0);
	CHECK_INT(sx_hmap_count(&m), 10000);
	CHECK(m.cap >= 10000 * 4 / 3 && (m.cap & (m.cap - 1)) == 0);
	for (uint32_t k = 0; k < 10000; k++)
		CHECK_INT(sx_hmap_get(&m, SX_HMAP_PAIR(k % 7, k)), k + 1);
	CHECK_INT(sx_hmap_get(&m, SX_HMAP_PAIR(1, 0)), 0);
	/* replace */
	CHECK_INT(sx_hmap_put(&m, SX_HMAP_PAIR(3, 3), 99), 0);
	CHECK_INT(sx_hmap_get(&m, SX_HMAP_PAIR(3, 3)), 99);
	CHECK_INT(sx_hmap_count(&m), 10000);
	/* delete every other one; the rest stay reachable */
	for (uint32_t k = 0; k < 10000; k += 2)
		CHECK(sx_hmap_del(&m, SX_HMAP_PAIR(k % 7, k)) != 0);
	CHECK_INT(sx_hmap_count(&m), 5000);
	for (uint32_t k = 0; k < 10000; k++)
		CHECK_INT(sx_hmap_get(&m, SX_HMAP_PAIR(k % 7, k)) != 0, k % 2 == 1);
	/* iterate */
	for (i = 0; (s = sx_hmap_next(&m, &i));) {
		seen++;
		sum += (uint32_t)s->key;
	}
	CHECK_INT(seen, 5000);
	CHECK_INT(sum, 5000ull * 5000); /* 1 + 3 + ... + 9999 */
	/* counts through the slot */
	s = sx_hmap_slot(&m, SX_HMAP_PAIR(1, 1));
	CHECK(s != NULL);
	if (s)
		sx_hmap_del_slot(&m, s);
	CHECK_INT(sx_hmap_get(&m, SX_HMAP_PAIR(1, 1)), 0);
	sx_hmap_clear(&m);
	CHECK_INT(sx_hmap_count(&m), 0);
	CHECK_INT(m.max, 100000);
	CHECK_INT(sx_hmap_put(&m, 0, 5), 0); /* key 0 is a key like any other */
	CHECK_INT(sx_hmap_get(&m, 0), 5);
	sx_hmap_clear(&m);
}

/* Keys that share a home slot and wrap around the end of the array: the
 * backward shift keeps each reachable. */
static void test_collisions(void)
{
	struct sx_hmap m;
	uint64_t keys[12];
	uint32_t n = 0;

	sx_hmap_init(&m, 12);
	CHECK_INT(sx_hmap_put(&m, 1, 1), 0); /* cap 16 */
	/* find 12 keys whose home is one of the last two slots */
	for (uint64_t k = 2; n < 11; k++)
		if ((uint32_t)((k * 0x9E3779B97F4A7C15ull) >> m.shift) >= 14)
			keys[n++] = k;
	for (uint32_t i = 0; i < n; i++)
		CHECK_INT(sx_hmap_put(&m, keys[i], keys[i]), 0);
	CHECK_INT(m.cap, 16);
	for (uint32_t d = 0; d < n; d++) {
		CHECK_INT(sx_hmap_del(&m, keys[d]), keys[d]);
		for (uint32_t i = d + 1; i < n; i++)
			CHECK_INT(sx_hmap_get(&m, keys[i]), keys[i]);
		CHECK_INT(sx_hmap_get(&m, 1), 1);
	}
	sx_hmap_clear(&m);
}

/* ---------- string keys ---------- */

struct item {
	char name[32];
	int value;
};

static bool item_eq(uint64_t val, const void *key)
{
	return strcmp(((const struct item *)(uintptr_t)val)->name, key) == 0;
}

static void test_string_keys(void)
{
	enum { N = 3000 };
	struct item *items = calloc(N, sizeof(*items));
	struct sx_hmap m, copy;
	char key[32];

	sx_hmap_init(&m, N);
	CHECK(sx_hmap_find_ptr(&m, sx_hash_str("x"), item_eq, "x") == NULL);
	CHECK_INT(sx_hmap_add(&m, 1, NULL), SX_EINVAL);
	for (int i = 0; items && i < N; i++) {
		snprintf(items[i].name, sizeof(items[i].name), "ns-%d/claim-%d", i % 13, i);
		items[i].value = i;
		CHECK_INT(sx_hmap_add(&m, sx_hash_str(items[i].name), &items[i]), 0);
	}
	CHECK_INT(sx_hmap_count(&m), N);
	/* the bound */
	CHECK_INT(sx_hmap_add(&m, 5, &items[0]), SX_ETOOBIG);
	CHECK_INT(sx_hmap_put(&m, 5, 5), SX_ETOOBIG);
	CHECK_INT(sx_hmap_count(&m), N);
	for (int i = 0; items && i < N; i++) {
		const struct item *it;

		snprintf(key, sizeof(key), "ns-%d/claim-%d", i % 13, i);
		it = sx_hmap_find_ptr(&m, sx_hash_str(key), item_eq, key);
		CHECK(it == &items[i]);
	}
	/* a same-hash entry with another key is not a match */
	CHECK(sx_hmap_find_ptr(&m, sx_hash_str("ns-0/claim-0"), item_eq, "ns-0/claim-1") == NULL);
	/* clone: equal and independent */
	CHECK_INT(sx_hmap_clone(&copy, &m), 0);
	for (int i = 0; items && i < N; i += 2) {
		struct sx_hmap_slot *s =
			sx_hmap_find(&m, sx_hash_str(items[i].name), item_eq, items[i].name);

		CHECK(s != NULL);
		if (s)
			sx_hmap_del_slot(&m, s);
	}
	CHECK_INT(sx_hmap_count(&m), N / 2);
	CHECK_INT(sx_hmap_count(&copy), N);
	for (int i = 0; items && i < N; i++) {
		CHECK_INT(sx_hmap_find_ptr(&m, sx_hash_str(items[i].name), item_eq,
					   items[i].name) != NULL,
			  i % 2);
		CHECK(sx_hmap_find_ptr(&copy, sx_hash_str(items[i].name), item_eq, items[i].name) ==
		      &items[i]);
	}
	sx_hmap_clear(&copy);
	sx_hmap_clear(&m);
	free(items);
}

/* A bound of 0 or beyond the limit is clamped; a table at its bound still
 * replaces and deletes. */
static void test_bound(void)
{
	struct sx_hmap m;

	sx_hmap_init(&m, 0);
	CHECK_INT(m.max, 1);
	sx_hmap_init(&m, UINT32_MAX);
	CHECK_INT(m.max, SX_HMAP_MAX_LIMIT);
	sx_hmap_init(&m, 3);
	for (uint64_t k = 1; k <= 3; k++)
		CHECK_INT(sx_hmap_put(&m, k, k), 0);
	CHECK_INT(sx_hmap_put(&m, 4, 4), SX_ETOOBIG);
	CHECK_INT(sx_hmap_put(&m, 2, 20), 0);
	CHECK_INT(sx_hmap_get(&m, 2), 20);
	CHECK_INT(sx_hmap_del(&m, 1), 1);
	CHECK_INT(sx_hmap_put(&m, 4, 4), 0);
	CHECK_INT(sx_hmap_count(&m), 3);
	CHECK(m.cap <= 16);
	sx_hmap_clear(&m);
}

/* Every growth and every clone has one allocation; failing it leaves the
 * table as it was. */
static void test_alloc_failure(void)
{
	struct sx_hmap m, copy;
	uint32_t k;

	sx_hmap_init(&m, 1000);
	fail_next = 1;
	CHECK_INT(sx_hmap_put(&m, 1, 1), SX_ENOMEM);
	CHECK_INT(sx_hmap_count(&m), 0);
	CHECK(m.slots == NULL);
	for (k = 1; k <= 12; k++) /* cap 16 holds 12 */
		CHECK_INT(sx_hmap_put(&m, k, k), 0);
	CHECK_INT(m.cap, 16);
	fail_next = 1;
	CHECK_INT(sx_hmap_put(&m, 13, 13), SX_ENOMEM);
	fail_next = 1;
	CHECK_INT(sx_hmap_add(&m, 13, &m), SX_ENOMEM);
	CHECK_INT(m.cap, 16);
	CHECK_INT(sx_hmap_count(&m), 12);
	for (k = 1; k <= 12; k++)
		CHECK_INT(sx_hmap_get(&m, k), k);
	CHECK_INT(sx_hmap_put(&m, 5, 50), 0); /* a replacement needs no room */
	fail_next = 1;
	CHECK_INT(sx_hmap_clone(&copy, &m), SX_ENOMEM);
	CHECK_INT(sx_hmap_count(&copy), 0);
	CHECK(copy.slots == NULL);
	fail_next = 0;
	CHECK_INT(sx_hmap_put(&m, 13, 13), 0);
	CHECK_INT(m.cap, 32);
	sx_hmap_clear(&m);
	sx_hmap_clear(&copy);
}

SX_TESTS(SX_TEST(test_hash), SX_TEST(test_int_keys), SX_TEST(test_collisions),
	 SX_TEST(test_string_keys), SX_TEST(test_bound), SX_TEST(test_alloc_failure))
