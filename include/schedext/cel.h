/* CEL device selectors of Dynamic Resource Allocation (resource.k8s.io/v1
 * DeviceClass and ResourceClaim `selectors[].cel.expression`), with
 * kube-scheduler 1.34 semantics for the subset listed in src/cel/README.md;
 * anything outside it is a compile error saying so.
 *
 * Life cycle:
 *  1. sx_cel_compile() parses and type-checks one expression into an
 *     immutable program, or returns NULL and a message worded as upstream
 *     ("compilation failed: ERROR: <input>:1:5: ...").
 *  2. sx_cel_eval_device() evaluates a program against one device. A
 *     program is read-only after compile: any number of threads may
 *     evaluate it at once. Each evaluation is bounded by upstream's
 *     runtime cost limit (CELSelectorExpressionMaxCost = 1,000,000).
 *  3. Programs are reference counted: sx_cel_program_unref() drops the
 *     caller's reference and frees the program with the last one.
 *
 * A compile cache (sx_cel_cache) maps expression strings to programs as
 * upstream's cel.Cache does; failed compilations are cached too.
 *
 * Messages for the scheduler's status text follow the structured
 * allocator: "class <name>: selector #<i>: CEL compile error: <msg>" and
 * "... CEL runtime error: <msg>"; this module returns <msg> only.
 */
#ifndef SCHEDEXT_CEL_H
#define SCHEDEXT_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/quantity.h"

struct sx_cel_program;
struct sx_cel_cache;

/* Upstream limits (k8s.io/api/resource/v1). */
#define SX_CEL_MAX_EXPR_LEN  10240    /* CELSelectorExpressionMaxLength */
#define SX_CEL_MAX_COST	     1000000u /* CELSelectorExpressionMaxCost */
#define SX_CEL_MAX_RECURSION 250      /* cel-go parser default */
#define SX_CEL_ERR_LEN	     512      /* enough for any message */

enum sx_cel_attr_type {
	SX_CEL_ATTR_INT,
	SX_CEL_ATTR_BOOL,
	SX_CEL_ATTR_STRING,
	SX_CEL_ATTR_VERSION, /* semver text, parsed at evaluation as upstream */
};

/* One device attribute, as in ResourceSlice devices[].attributes. */
struct sx_cel_attr {
	const char *name; /* qualified name: "id" (driver's domain) or "domain/id" */
	enum sx_cel_attr_type type;
	int64_t i;     /* SX_CEL_ATTR_INT */
	bool b;	       /* SX_CEL_ATTR_BOOL */
	const char *s; /* SX_CEL_ATTR_STRING, SX_CEL_ATTR_VERSION; NUL-terminated */
};

/* One device capacity entry (devices[].capacity[name].value). */
struct sx_cel_capacity {
	const char *name; /* qualified name, as for attributes */
	sx_nano value;
};

/* The `device` variable. Borrowed for the duration of one evaluation. */
struct sx_cel_device {
	const char *driver; /* NULL is treated as "" */
	const struct sx_cel_attr *attrs;
	size_t n_attrs;
	const struct sx_cel_capacity *caps;
	size_t n_caps;
	/* device.allowMultipleAllocations (cel.Device.AllowMultipleAllocations,
	 * DRAConsumableCapacity): false when the device does not set it */
	bool allow_multiple;
};

/* Compiles expr[0..len) (need not be NUL-terminated). Returns a program
 * holding one reference, or NULL with a NUL-terminated message in err
 * (truncated to errlen; err may be NULL). Thread-safe. */
struct sx_cel_program *sx_cel_compile(const char *expr, size_t len, char *err, size_t errlen);

/* Takes / drops a reference; unref of NULL is a no-op. Thread-safe. */
struct sx_cel_program *sx_cel_program_ref(struct sx_cel_program *p);
void sx_cel_program_unref(struct sx_cel_program *p);

/* The expression text the program was compiled from (NUL-terminated,
 * owned by the program). */
const char *sx_cel_program_expr(const struct sx_cel_program *p);

/* Evaluates p against dev. Returns 0 and sets *result, or SX_EINVAL for a
 * runtime error (missing key, overflow, cost limit, bad version attribute,
 * ...) with the message in err, or SX_ENOMEM ("out of memory": transient,
 * *result is false and says nothing). Never modifies p; safe to call
 * concurrently on one program. *cost (may be NULL) receives the actual
 * cost spent. dev and its strings are only read, during the call. */
int sx_cel_eval_device(const struct sx_cel_program *p, const struct sx_cel_device *dev,
		       bool *result, uint64_t *cost, char *err, size_t errlen);

/* As sx_cel_eval_device, with another runtime cost limit (upstream's
 * Options.CostLimit). */
int sx_cel_eval_device_limit(const struct sx_cel_program *p, const struct sx_cel_device *dev,
			     uint64_t limit, bool *result, uint64_t *cost, char *err,
			     size_t errlen);

/* A thread-safe cache of at most max_entries compile results (LRU).
 * NULL on allocation failure. Free with sx_cel_cache_free(); programs
 * handed out stay valid until their holders unref them. */
struct sx_cel_cache *sx_cel_cache_new(size_t max_entries);
/* The same, its programs compiled with DRAConsumableCapacity's
 * device.allowMultipleAllocations declared (upstream cel.Features,
 * EnableConsumableCapacity) when consumable. */
struct sx_cel_cache *sx_cel_cache_new_features(size_t max_entries, bool consumable);
void sx_cel_cache_free(struct sx_cel_cache *c);

/* Returns a referenced program for expr (compiling it on a miss), or NULL
 * with the (cached) compile error in err. A failure for lack of memory is
 * reported ("out of memory") but not cached. The caller unrefs the
 * result. */
struct sx_cel_program *sx_cel_cache_get(struct sx_cel_cache *c, const char *expr, size_t len,
					char *err, size_t errlen);

/* Number of compilations the cache performed (misses), for tests. */
uint64_t sx_cel_cache_misses(const struct sx_cel_cache *c);

#endif /* SCHEDEXT_CEL_H */
