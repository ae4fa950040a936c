/* Plugin status (upstream k8s.io/kube-scheduler/framework interface.go Status, Code).
 *
 * A status is heap allocated; NULL means Success, so the hot path of a
 * passing Filter allocates nothing. The message is the reasons joined by
 * ", ". Ownership: whoever receives a status frees it with sx_status_free().
 *
 * NULL only ever means Success: a status that cannot be allocated is the
 * shared, preallocated Error "out of memory" (sx_status_oom()), which is
 * never freed and never modified (free, add_reason and set_plugin ignore
 * it), as Redis keeps shared error objects.
 */
#ifndef SCHEDEXT_STATUS_H
#define SCHEDEXT_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#define SX_CODES(X)                                                                                \
	X(SX_SUCCESS, "Success")                                                                   \
	X(SX_ERROR, "Error")                                                                       \
	X(SX_UNSCHEDULABLE, "Unschedulable")                                                       \
	X(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable")                       \
	X(SX_WAIT, "Wait")                                                                         \
	X(SX_SKIP, "Skip")                                                                         \
	X(SX_PENDING, "Pending")

enum sx_code {
#define SX_CODE_ENUM(sym, str) sym,
	SX_CODES(SX_CODE_ENUM)
#undef SX_CODE_ENUM
};

const char *sx_code_name(enum sx_code code);

#define SX_STATUS_MAX_REASONS 16

struct sx_status {
	enum sx_code code;
	const char *plugin; /* static plugin name, set by the runtime; may be NULL */
	unsigned nreasons;
	char *reasons[SX_STATUS_MAX_REASONS];
	bool shared; /* see sx_status_share() */
};

/* New status with one reason (printf format; NULL fmt = no reason).
 * Never NULL: on allocation failure, the shared sx_status_oom(). */
struct sx_status *sx_status_new(enum sx_code code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends a reason (ignored past SX_STATUS_MAX_REASONS). */
void sx_status_add_reason(struct sx_status *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* NULL for NULL; the shared sx_status_oom() when the copy cannot be made. */
struct sx_status *sx_status_clone(const struct sx_status *st);
void sx_status_free(struct sx_status *st);

/* The shared Error status "out of memory": never NULL, never freed. */
struct sx_status *sx_status_oom(void);
/* Sets st->plugin (the runtime names the plugin that returned st); a NULL
 * or the shared status is left alone. Returns st. */
struct sx_status *sx_status_set_plugin(struct sx_status *st, const char *plugin);

/* Makes st shared, attributed to plugin: like the out-of-memory status,
 * sx_status_free, add_reason and set_plugin then leave it alone, so a
 * plugin can return the same immutable rejection from any thread for
 * every node it rejects that way (no allocation per node). The plugin
 * keeps it for its lifetime and releases it with sx_status_unshare().
 * Returns st (the shared out-of-memory status when st is NULL). */
struct sx_status *sx_status_share(struct sx_status *st, const char *plugin);
/* Frees a status made by sx_status_share (NULL ignored). */
void sx_status_unshare(struct sx_status *st);

/* Initializer of a status that never varies, for a plugin to return for
 * every node it rejects that way without allocating: shared from the
 * start (as by sx_status_share, never unshared) and attributed to
 * `plugin`, which must be the plugin's registered name.
 *
 *	static struct sx_status rejected =
 *		SX_STATUS_STATIC(SX_UNSCHEDULABLE, "NodePorts", REASON_PORTS);
 *	...
 *	return &rejected;
 */
#define SX_STATUS_STATIC(code_, plugin_, reason_)                                                  \
	{                                                                                          \
		.code = (code_), .plugin = (plugin_), .nreasons = 1, .reasons = {(reason_)},       \
		.shared = true                                                                     \
	}

/* Test hook: the next n status allocations fail (as on out of memory), so
 * tests can show that such a failure reads as Error, never as Success. */
void sx_status_fail_next_allocs(unsigned n);

static inline enum sx_code sx_status_code(const struct sx_status *st)
{
	return st ? st->code : SX_SUCCESS;
}
static inline bool sx_status_is_success(const struct sx_status *st)
{
	return st == NULL || st->code == SX_SUCCESS;
}
static inline bool sx_status_is_rejected(const struct sx_status *st)
{
	return st &&
	       (st->code == SX_UNSCHEDULABLE || st->code == SX_UNSCHEDULABLE_AND_UNRESOLVABLE);
}
/* Turns a failed status into an Error whose message is fmt with the plugin
 * name and the original message (fmt takes two %s, in that order), e.g.
 * "running Reserve plugin \"%s\": %s". Takes st; returns the new status. */
struct sx_status *sx_status_as_error(struct sx_status *st, const char *fmt, const char *plugin);
/* Reasons joined with ", " into buf; returns buf. */
const char *sx_status_message(const struct sx_status *st, char *buf, size_t len);

#endif /* SCHEDEXT_STATUS_H */
