/* A minimal test harness: each test file defines `static void test_x(void)`
 * functions and lists them in SX_TESTS(...). Checks record failures and keep
 * going; the program prints "N passed, N failed" and exits non-zero on any
 * failure. */
#ifndef SCHEDEXT_TEST_HARNESS_H
#define SCHEDEXT_TEST_HARNESS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

extern int sx_test_failures; /* failures in the current test */
extern const char *sx_test_current;

void sx_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			sx_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                      \
	} while (0)

#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long sx_a_ = (long long)(a), sx_b_ = (long long)(b);                          \
		if (sx_a_ != sx_b_)                                                                \
			sx_test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a,    \
				     sx_a_, #b, sx_b_);                                            \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *sx_a_ = (a), *sx_b_ = (b);                                             \
		if (!sx_a_ || !sx_b_ || strcmp(sx_a_, sx_b_) != 0)                                 \
			sx_test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a,      \
				     sx_a_ ? sx_a_ : "(null)", sx_b_ ? sx_b_ : "(null)");          \
	} while (0)

struct sx_test_case {
	const char *name;
	void (*fn)(void);
};

int sx_test_main(int argc, char **argv, const char *suite, const struct sx_test_case *cases,
		 size_t n);

#define SX_TEST(fn)                                                                                \
	{                                                                                          \
#fn, fn                                                                            \
	}
#define SX_TESTS(...)                                                                              \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		static const struct sx_test_case cases[] = {__VA_ARGS__};                          \
		return sx_test_main(argc, argv, __FILE__, cases,                                   \
				    sizeof(cases) / sizeof(cases[0]));                             \
	}

/* Reads a whole file (test fixtures); caller frees. NULL on failure. */
char *sx_test_read_file(const char *path, size_t *len);

#endif
