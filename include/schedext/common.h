/* Common definitions: error codes, error reports with a field path,
 * small allocation helpers.
 *
 * Conventions (see ../shared/STYLE.md):
 *  - actions return 0 or a negative SX_E* code;
 *  - predicates return bool;
 *  - constructors return a pointer or NULL.
 */
#ifndef SCHEDEXT_COMMON_H
#define SCHEDEXT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define SX_VERSION "0.1.0"

/* Negative error codes returned by actions. */
#define SX_OK	     0
#define SX_EINVAL    (-22) /* malformed input (a field of the wrong type, range) */
#define SX_ENOMEM    (-12) /* allocation failed */
#define SX_ENOENT    (-2)  /* object not found */
#define SX_EEXIST    (-17) /* object already present */
#define SX_ETOOBIG   (-27) /* input over a configured limit */
#define SX_EIO	     (-5)  /* I/O or network failure */
#define SX_ECONFLICT (-39) /* conflicting state (e.g. assumed on another node) */

/* A decode/validation error: what went wrong and where.
 * `path` is a JSON-path-like location, e.g. "items[3].spec.tolerations[0].effect".
 * Both strings are NUL-terminated and truncated to fit. */
struct sx_error {
	int code;
	char msg[512];
	char path[256];
};

/* Sets err (when non-NULL) from a printf-style message; returns code. */
int sx_error_set(struct sx_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends a path component to err->path: "spec" + "containers[0]" ->
 * "spec.containers[0]". Components starting with '[' are joined without dot. */
void sx_error_prefix(struct sx_error *err, const char *component);
void sx_error_prefixf(struct sx_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Formats "path: msg" (or just msg when path is empty) into buf. */
const char *sx_error_string(const struct sx_error *err, char *buf, size_t len);

/* Allocation helpers: abort on OOM is NOT done; they return NULL like malloc. */
void *sx_calloc(size_t n, size_t size);
char *sx_strdup(const char *s);
char *sx_strndup(const char *s, size_t n);

/* A number no earlier call in the process returned (from 1; any thread):
 * identities that must never repeat, unlike addresses. */
uint64_t sx_serial(void);

/* Monotonic clock in nanoseconds / seconds as double. */
uint64_t sx_now_ns(void);
double sx_now_s(void);

/* The CLOCK_REALTIME instant ns nanoseconds from now, as
 * pthread_cond_timedwait wants its deadline (normalised timespec). */
struct timespec sx_deadline_after_ns(uint64_t ns);
/* The same, s seconds (>= 0) from now. */
struct timespec sx_deadline_after_s(double s);

/* Logging: level 0 = errors, 1 = info, 2 = per request (-v=2). */
extern int sx_log_verbosity;
void sx_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define SX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SX_UNUSED(x)	 ((void)(x))

/* v is an integer an int64_t holds. The range is tested before the
 * conversion, which is undefined behaviour for inf (JSON "1e999"), NaN or
 * any value out of range. */
static inline bool sx_double_is_int64(double v)
{
	return v >= -9.2e18 && v <= 9.2e18 && v == (double)(int64_t)v;
}

/* The process's malloc settings (src/util/common.c): a bounded number of
 * arenas and a fixed mmap threshold, glibc's initial one. Called first
 * thing by serve, and by bench/perf_check.c to measure as serve runs. */
#define SX_MMAP_THRESHOLD (128 * 1024)
void sx_malloc_bound(void);

/* The project's one hash function (src/util/hmap.c): 64 bits of n bytes,
 * word at a time, finished with a full avalanche, so any subset of its
 * bits makes a bucket index. Deterministic (no per-process seed); the
 * tables it feeds are bounded (hmap.h). */
uint64_t sx_hash_bytes(const void *p, size_t n);

/* sx_hash_bytes of a NUL-terminated string (without the NUL). */
static inline uint64_t sx_hash_str(const char *s)
{
	return sx_hash_bytes(s, strlen(s));
}

#endif /* SCHEDEXT_COMMON_H */
