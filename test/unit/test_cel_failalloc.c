/* CEL under allocation failure: linked with -Wl,--wrap for the allocator
 * (as test_failalloc.c; see the Makefile) so the N-th allocation of this
 * thread fails. Every scenario (compile + evaluate one expression, and the
 * compile cache) runs once counting its allocations T and recording its
 * reference answer, then for every N in 1..T with allocation N failing:
 * no crash, no leak (LeakSanitizer in ASan builds), and the answer is
 * either the reference or "out of memory" (SX_ENOMEM / NULL), never a
 * different verdict; a failure for lack of memory is never cached. */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

#include "harness.h"
#include "schedext/cel.h"
#include "schedext/common.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

static long fail_at; /* 0: off, LONG_MAX: count only, else the failing allocation */
static long allocs;
static pthread_t armed_thread;

static bool fail_now(void)
{
	if (!fail_at || !pthread_equal(pthread_self(), armed_thread))
		return false;
	return ++allocs == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (fail_now()) {
		*out = NULL;
		return -1;
	}
	return __real_vasprintf(out, fmt, ap);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = __wrap_vasprintf(out, fmt, ap);
	va_end(ap);
	return rc;
}

static void arm(long n)
{
	armed_thread = pthread_self();
	allocs = 0;
	fail_at = n;
}

static long disarm(void)
{
	fail_at = 0;
	return allocs;
}

/* 40 attributes: more than fit the evaluator's stack tables. */
static struct sx_cel_attr attrs[40];
static char names[40][16];
static const struct sx_cel_capacity caps[] = {
	{.name = "memory", .value = (sx_nano)40 * 1073741824 * SX_NANO_PER_UNIT},
};
static struct sx_cel_device dev = {
	.driver = "dra.example.com", .attrs = attrs, .caps = caps, .n_caps = 1};

static void setup_device(void)
{
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "a%d", i);
		attrs[i] = (struct sx_cel_attr){.name = names[i], .type = SX_CEL_ATTR_INT, .i = i};
	}
	attrs[0] = (struct sx_cel_attr){.name = "model", .type = SX_CEL_ATTR_STRING, .s = "a100"};
	attrs[1] = (struct sx_cel_attr){.name = "v", .type = SX_CEL_ATTR_VERSION, .s = "1.2.3"};
	attrs[2] = (struct sx_cel_attr){
		.name = "other.example.com/x", .type = SX_CEL_ATTR_BOOL, .b = true};
	dev.n_attrs = 40;
}

static const char *const exprs[] = {
	"device.attributes[\"dra.example.com\"].model == \"a100\" && "
	"device.attributes[\"dra.example.com\"].a39 == 39",
	"has(device.attributes[\"dra.example.com\"].a7) && "
	"!has(device.attributes[\"dra.example.com\"].zz)",
	"cel.bind(d, device.attributes[device.driver], d.v.isLessThan(semver(\"v2\", true)) && "
	"d.model.matches(\"^a[0-9]+$\"))",
	"device.attributes[\"dra.example.com\"].model + \"-\" + "
	"string(size(device.attributes[\"dra.example.com\"])) == \"a100-39\"",
	"[1, 2, 3].map(x, x * 2).filter(y, y > 2) == [4, 6] && device.attributes.exists_one(k, k "
	"== \"other.example.com\")",
	"device.capacity[\"dra.example.com\"].memory.sub(quantity(\"1Gi\")).isGreaterThan(quantity("
	"\"38Gi\"))",
	"device.attributes[\"dra.example.com\"].model.matches(device.attributes[\"dra.example."
	"com\"].model.upperAscii().lowerAscii())",
	"device.attributes[\"dra.example.com\"].missing == 1",
	"1 +",
};

struct answer {
	bool compiled;
	int rc;
	bool result;
	char msg[SX_CEL_ERR_LEN];
};

static void run(const char *e, struct answer *a)
{
	struct sx_cel_program *p = sx_cel_compile(e, strlen(e), a->msg, sizeof(a->msg));

	a->compiled = p != NULL;
	a->rc = 0;
	a->result = false;
	if (p)
		a->rc = sx_cel_eval_device(p, &dev, &a->result, NULL, a->msg, sizeof(a->msg));
	sx_cel_program_unref(p);
}

static void test_compile_and_eval(void)
{
	long points = 0;

	setup_device();
	for (size_t k = 0; k < SX_ARRAY_SIZE(exprs); k++) {
		struct answer ref, got;
		long total;

		arm(LONG_MAX);
		run(exprs[k], &ref);
		total = disarm();
		CHECK(total > 0);
		points += total;
		for (long n = 1; n <= total; n++) {
			arm(n);
			run(exprs[k], &got);
			disarm();
			if ((LEAK_CHECK() != 0))
				sx_test_fail(__FILE__, __LINE__, "expr %zu, allocation %ld: leak",
					     k, n);
			if (got.compiled != ref.compiled) {
				if (got.compiled || strcmp(got.msg, "out of memory") != 0)
					sx_test_fail(__FILE__, __LINE__,
						     "expr %zu, allocation %ld: %s", k, n, got.msg);
				continue;
			}
			if (got.rc == SX_ENOMEM) {
				CHECK_STR(got.msg, "out of memory");
				continue;
			}
			if (got.rc != ref.rc || got.result != ref.result ||
			    (got.rc && strcmp(got.msg, ref.msg) != 0))
				sx_test_fail(__FILE__, __LINE__,
					     "expr %zu, allocation %ld: rc %d %d \"%s\", want rc "
					     "%d %d \"%s\"",
					     k, n, got.rc, got.result, got.msg, ref.rc, ref.result,
					     ref.msg);
		}
	}
	printf("cel failalloc: %ld allocation points over %zu expressions\n", points,
	       SX_ARRAY_SIZE(exprs));
}

static void test_cache(void)
{
	const char *e = "device.attributes[\"dra.example.com\"].model == \"a100\"";
	char err[SX_CEL_ERR_LEN];
	long total;

	for (long n = 1;; n++) {
		struct sx_cel_cache *c = sx_cel_cache_new(4);
		struct sx_cel_program *p;
		bool r = false;

		arm(n);
		p = c ? sx_cel_cache_get(c, e, strlen(e), err, sizeof(err)) : NULL;
		total = disarm();
		if (c && !p) {
			CHECK_STR(err, "out of memory");
			/* not cached: the next lookup compiles and succeeds */
			p = sx_cel_cache_get(c, e, strlen(e), err, sizeof(err));
			CHECK(p != NULL);
		}
		if (p) {
			CHECK_INT(sx_cel_eval_device(p, &dev, &r, NULL, err, sizeof(err)), 0);
			CHECK(r);
		}
		sx_cel_program_unref(p);
		sx_cel_cache_free(c);
		if ((LEAK_CHECK() != 0))
			sx_test_fail(__FILE__, __LINE__, "cache, allocation %ld: leak", n);
		if (total < n)
			break; /* allocation n was never reached: every point covered */
	}
}

SX_TESTS(SX_TEST(test_compile_and_eval), SX_TEST(test_cache))
