/* Error reports, allocation helpers, serial numbers, clocks and logging. */
#include "schedext/common.h"

#include <malloc.h>
#include <unistd.h>

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sx_log_verbosity = 1;

/* sx_serial's last number (process-wide by design). */
static _Atomic uint64_t last_serial;

uint64_t sx_serial(void)
{
	return atomic_fetch_add(&last_serial, 1) + 1;
}

int sx_error_set(struct sx_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->path[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* Prepends component to err->path in place. The result is truncated at the
 * end (the leftmost components, which name the object, are worth keeping). */
void sx_error_prefix(struct sx_error *err, const char *component)
{
	char tmp[sizeof(err->path)];
	size_t cap = sizeof(tmp) - 1, n, c, sep;

	if (!err || !component || !*component)
		return;
	sep = (err->path[0] == '\0' || err->path[0] == '[') ? 0 : 1;
	c = strlen(component);
	n = c < cap ? c : cap;
	memcpy(tmp, component, n);
	if (sep && n < cap)
		tmp[n++] = '.';
	c = strlen(err->path);
	if (c > cap - n)
		c = cap - n;
	memcpy(tmp + n, err->path, c);
	tmp[n + c] = '\0';
	memcpy(err->path, tmp, sizeof(tmp));
}

void sx_error_prefixf(struct sx_error *err, const char *fmt, ...)
{
	char comp[128];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(comp, sizeof(comp), fmt, ap);
	va_end(ap);
	sx_error_prefix(err, comp);
}

const char *sx_error_string(const struct sx_error *err, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (!err)
		snprintf(buf, len, "unknown error");
	else if (err->path[0])
		snprintf(buf, len, "%s: %s", err->path, err->msg);
	else
		snprintf(buf, len, "%s", err->msg);
	return buf;
}

void *sx_calloc(size_t n, size_t size)
{
	/* calloc(0, x) may return NULL; callers treat NULL as OOM, so ask for 1. */
	if (n == 0 || size == 0)
		return calloc(1, 1);
	return calloc(n, size);
}

char *sx_strdup(const char *s)
{
	return s ? sx_strndup(s, strlen(s)) : NULL;
}

/* Copies at most n bytes, stopping early at a NUL. */
char *sx_strndup(const char *s, size_t n)
{
	char *p;
	const char *nul;

	if (!s)
		return NULL;
	nul = memchr(s, '\0', n);
	if (nul)
		n = (size_t)(nul - s);
	p = malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

uint64_t sx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec sx_deadline_after_ns(uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000u);
	ts.tv_nsec += (long)(ns % 1000000000u);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

struct timespec sx_deadline_after_s(double s)
{
	return sx_deadline_after_ns(s > 0 ? (uint64_t)(s * 1e9) : 0);
}

double sx_now_s(void)
{
	return (double)sx_now_ns() / 1e9;
}

static char level_letter(int level)
{
	switch (level) {
	case 0:
		return 'E';
	case 1:
		return 'I';
	default:
		return 'D';
	}
}

/* One line per call: "E1121 12:54:27.123456 message" (klog-like), written
 * with a single fprintf so concurrent lines do not interleave. */
void sx_log(int level, const char *fmt, ...)
{
	char msg[1024];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	size_t n;

	if (level > sx_log_verbosity)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	if (n > 0 && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld %s\n", level_letter(level), tm.tm_mon + 1,
		tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000, msg);
}

/* glibc gives each thread that allocates its own arena, up to 8 per core,
 * so the peak depended on which threads happened to allocate during the
 * initial lists. Even two arenas left it to chance (standalone, 5000 nodes
 * and 5000 pods: 40-50 MB over runs, and 37-66 MB with one arena alone):
 * memory freed in one arena is not reused by threads of the other, and
 * glibc raises its mmap threshold to the size of every large block freed,
 * so page-sized bodies and arrays later land in the heap and pin it. One
 * arena per four cores (the threads' tcaches take most small blocks
 * without the lock) and a fixed threshold made it 43.4-43.9 MB. The cost:
 * every block above the threshold is mapped fresh, so large buffers that
 * recur per request are pooled (bufpool.h). */
void sx_malloc_bound(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	mallopt(M_ARENA_MAX, cores > 4 ? (int)(cores / 4) : 1);
	mallopt(M_MMAP_THRESHOLD, SX_MMAP_THRESHOLD);
}
