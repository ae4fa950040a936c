/* Interned strings: ids, lookups, the well-known strings, growth across
 * chunks, concurrent interning with lock-free readers, and lock-free lookups
 * while the table grows. */
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "schedext/intern.h"

static void test_empty_is_zero(void)
{
	CHECK_INT(sx_intern(""), SX_STR_EMPTY);
	CHECK_INT(sx_intern_n("abc", 0), SX_STR_EMPTY);
	CHECK_INT(sx_intern_n(NULL, 0), SX_STR_EMPTY);
	CHECK_INT(sx_intern(NULL), SX_STR_EMPTY);
	CHECK_INT(sx_intern_lookup_n("", 0), SX_STR_EMPTY);
	CHECK_STR(sx_str_get(SX_STR_EMPTY), "");
	CHECK_INT(sx_str_len(SX_STR_EMPTY), 0);
}

static void test_equal_strings_equal_ids(void)
{
	char buf[] = "app.kubernetes.io/name";
	sx_str a = sx_intern("app.kubernetes.io/name");
	sx_str b = sx_intern(buf);
	sx_str c = sx_intern_n("app.kubernetes.io/name-extra", 22);
	sx_str d = sx_intern("app.kubernetes.io/Name");

	CHECK(a != SX_STR_INVALID && a != SX_STR_EMPTY);
	CHECK_INT(a, b);
	CHECK_INT(a, c);
	CHECK(a != d);
	CHECK_STR(sx_str_get(a), "app.kubernetes.io/name");
	CHECK_INT(sx_str_len(a), 22);
	/* the id does not depend on the caller's buffer */
	buf[0] = 'X';
	CHECK_STR(sx_str_get(a), "app.kubernetes.io/name");
}

static void test_embedded_nul(void)
{
	sx_str a = sx_intern_n("a\0b", 3);
	sx_str b = sx_intern("a");

	CHECK(a != b);
	CHECK_INT(sx_str_len(a), 3);
	CHECK(memcmp(sx_str_get(a), "a\0b", 4) == 0);
	CHECK_INT(sx_intern_n("a\0b", 3), a);
}

static void test_lookup_does_not_add(void)
{
	size_t before = sx_intern_count();
	sx_str id;

	CHECK_INT(sx_intern_lookup_n("never-interned-xyz", 18), SX_STR_INVALID);
	CHECK_INT(sx_intern_count(), before);
	id = sx_intern("now-interned-xyz");
	CHECK_INT(sx_intern_count(), before + 1);
	CHECK_INT(sx_intern_lookup_n("now-interned-xyz", 16), id);
	CHECK_INT(sx_intern_lookup_n("now-interned-xy", 15), SX_STR_INVALID);
	CHECK_INT(sx_intern_count(), before + 1);
}

static void test_unknown_ids(void)
{
	CHECK_STR(sx_str_get(SX_STR_INVALID), "");
	CHECK_INT(sx_str_len(SX_STR_INVALID), 0);
	CHECK_STR(sx_str_get((sx_str)sx_intern_count() + 10), "");
	CHECK_STR(sx_str_get((sx_str)1u << 31), "");
}

static void test_well_known(void)
{
	static const struct {
		sx_str *id;
		const char *s;
	} known[] = {
		{&SX_S_CPU, "cpu"},
		{&SX_S_MEMORY, "memory"},
		{&SX_S_EPHEMERAL_STORAGE, "ephemeral-storage"},
		{&SX_S_PODS, "pods"},
		{&SX_S_HOSTNAME, "kubernetes.io/hostname"},
		{&SX_S_ZONE, "topology.kubernetes.io/zone"},
		{&SX_S_REGION, "topology.kubernetes.io/region"},
		{&SX_S_ZONE_BETA, "failure-domain.beta.kubernetes.io/zone"},
		{&SX_S_REGION_BETA, "failure-domain.beta.kubernetes.io/region"},
		{&SX_S_DEFAULT, "default"},
		{&SX_S_DEFAULT_SCHEDULER, "default-scheduler"},
		{&SX_S_TCP, "TCP"},
		{&SX_S_UDP, "UDP"},
		{&SX_S_SCTP, "SCTP"},
		{&SX_S_UNSCHEDULABLE_TAINT, "node.kubernetes.io/unschedulable"},
		{&SX_S_METADATA_NAME, "metadata.name"},
	};
	sx_str cpu = SX_S_CPU;

	sx_intern_init(); /* idempotent */
	CHECK_INT(SX_S_CPU, cpu);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		CHECK(*known[i].id != SX_STR_EMPTY);
		CHECK_STR(sx_str_get(*known[i].id), known[i].s);
		CHECK_INT(sx_intern(known[i].s), *known[i].id);
	}
}

/* Enough strings to grow the hash table several times and fill a few of
 * the entry chunks. */
static void test_growth(void)
{
	enum { N = 50000 };
	sx_str *ids = malloc(N * sizeof(*ids));
	size_t bytes = sx_intern_bytes();
	char buf[32];
	int bad = 0;

	for (int i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "growth-%d", i);
		ids[i] = sx_intern_n(buf, (size_t)n);
	}
	CHECK(sx_intern_bytes() > bytes);
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "growth-%d", i);
		if (strcmp(sx_str_get(ids[i]), buf) != 0 || sx_intern(buf) != ids[i])
			bad++;
	}
	CHECK_INT(bad, 0);
	free(ids);
}

static void test_long_string(void)
{
	size_t n = 1 << 20;
	char *s = malloc(n);
	sx_str id;

	memset(s, 'x', n);
	id = sx_intern_n(s, n);
	CHECK(id != SX_STR_INVALID);
	CHECK_INT(sx_str_len(id), n);
	CHECK(memcmp(sx_str_get(id), s, n) == 0);
	CHECK_INT(sx_intern_n(s, n), id);
	free(s);
}

enum { THREADS = 8, SHARED = 4000, UNIQUE = 2000 };

struct worker {
	int index;
	sx_str shared[SHARED];
	int bad;
};

/* Every thread interns the same strings (in its own order) plus its own
 * unique ones, and resolves ids right away without any lock. */
static void *intern_worker(void *arg)
{
	struct worker *w = arg;
	char buf[48];

	for (int k = 0; k < SHARED; k++) {
		int i = (k * 7 + w->index * 613) % SHARED;
		int n = snprintf(buf, sizeof(buf), "mt-shared-%d", i);

		w->shared[i] = sx_intern_n(buf, (size_t)n);
		if (strcmp(sx_str_get(w->shared[i]), buf) != 0)
			w->bad++;
		n = snprintf(buf, sizeof(buf), "mt-unique-%d-%d", w->index, k % UNIQUE);
		sx_str u = sx_intern_n(buf, (size_t)n);
		if (sx_str_len(u) != (size_t)n || strcmp(sx_str_get(u), buf) != 0)
			w->bad++;
	}
	return NULL;
}

static void test_threads(void)
{
	static struct worker w[THREADS];
	pthread_t th[THREADS];
	size_t before = sx_intern_count();
	int mismatched = 0, bad = 0;

	for (int t = 0; t < THREADS; t++) {
		w[t].index = t;
		w[t].bad = 0;
		CHECK_INT(pthread_create(&th[t], NULL, intern_worker, &w[t]), 0);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < THREADS; t++) {
		bad += w[t].bad;
		for (int i = 0; i < SHARED; i++)
			if (w[t].shared[i] != w[0].shared[i])
				mismatched++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(mismatched, 0);
	/* every distinct string got exactly one id */
	CHECK_INT(sx_intern_count() - before, SHARED + THREADS * UNIQUE);
}

/* Lock-free lookups while another thread interns (and grows the table):
 * a string interned before the lookups started is always found with its
 * id; one being interned concurrently is found with its id or not at all. */
struct lookup_arg {
	sx_str known[SHARED];
	_Atomic int stop;
	int bad;
};

static void *lookup_worker(void *arg)
{
	struct lookup_arg *a = arg;
	char buf[48];

	while (!atomic_load(&a->stop)) {
		for (int i = 0; i < SHARED; i++) {
			int n = snprintf(buf, sizeof(buf), "lk-known-%d", i);

			if (sx_intern_lookup_n(buf, (size_t)n) != a->known[i])
				a->bad++;
			n = snprintf(buf, sizeof(buf), "lk-new-%d", i);
			sx_str id = sx_intern_lookup_n(buf, (size_t)n);
			if (id != SX_STR_INVALID && strcmp(sx_str_get(id), buf) != 0)
				a->bad++;
		}
	}
	return NULL;
}

static void test_lookup_while_interning(void)
{
	static struct lookup_arg a;
	pthread_t th;
	char buf[48];

	for (int i = 0; i < SHARED; i++) {
		int n = snprintf(buf, sizeof(buf), "lk-known-%d", i);

		a.known[i] = sx_intern_n(buf, (size_t)n);
	}
	CHECK_INT(pthread_create(&th, NULL, lookup_worker, &a), 0);
	for (int i = 0; i < 20000; i++) { /* several table doublings */
		int n = snprintf(buf, sizeof(buf), i < SHARED ? "lk-new-%d" : "lk-more-%d", i);

		sx_intern_n(buf, (size_t)n);
	}
	atomic_store(&a.stop, 1);
	pthread_join(th, NULL);
	CHECK_INT(a.bad, 0);
	CHECK(sx_intern_lookup_n("lk-new-3", 8) != SX_STR_INVALID);
}

SX_TESTS(SX_TEST(test_empty_is_zero), SX_TEST(test_equal_strings_equal_ids),
	 SX_TEST(test_embedded_nul), SX_TEST(test_lookup_does_not_add), SX_TEST(test_unknown_ids),
	 SX_TEST(test_well_known), SX_TEST(test_growth), SX_TEST(test_long_string),
	 SX_TEST(test_threads), SX_TEST(test_lookup_while_interning))
