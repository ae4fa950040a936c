#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>

#include "schedext/intern.h"

int sx_test_failures;
const char *sx_test_current;

void sx_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "FAIL %s: %s:%d: ", sx_test_current, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	sx_test_failures++;
}

char *sx_test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *data = malloc((size_t)n + 1);
	if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		data = NULL;
	}
	fclose(f);
	if (data) {
		data[n] = 0;
		if (len)
			*len = (size_t)n;
	}
	return data;
}

int sx_test_main(int argc, char **argv, const char *suite, const struct sx_test_case *cases,
		 size_t n)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;
	sx_intern_init();
	for (size_t i = 0; i < n; i++) {
		if (only && !strstr(cases[i].name, only))
			continue;
		sx_test_current = cases[i].name;
		sx_test_failures = 0;
		cases[i].fn();
		if (sx_test_failures) {
			failed++;
			fprintf(stderr, "not ok - %s\n", cases[i].name);
		} else {
			passed++;
		}
	}
	printf("%s: %d passed, %d failed\n", suite, passed, failed);
	return failed ? 1 : 0;
}
