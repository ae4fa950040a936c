/* Plugin status objects (upstream k8s.io/kube-scheduler/framework interface.go Status). */
#include "schedext/status.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/common.h"

static const char *const code_names[] = {
#define SX_CODE_NAME(sym, str) [sym] = str,
	SX_CODES(SX_CODE_NAME)
#undef SX_CODE_NAME
};

/* The shared Error returned when a status cannot be allocated. */
static char oom_reason[] = "out of memory";
static struct sx_status oom = {.code = SX_ERROR, .nreasons = 1, .reasons = {oom_reason}};

/* Allocations still to fail (sx_status_fail_next_allocs). */
static atomic_uint fail_next;

struct sx_status *sx_status_oom(void)
{
	return &oom;
}

void sx_status_fail_next_allocs(unsigned n)
{
	atomic_store(&fail_next, n);
}

/* True when the test hook asks this allocation to fail (takes one). */
static bool injected_failure(void)
{
	unsigned n = atomic_load_explicit(&fail_next, memory_order_relaxed);

	while (n > 0)
		if (atomic_compare_exchange_weak(&fail_next, &n, n - 1))
			return true;
	return false;
}

static struct sx_status *status_alloc(void)
{
	if (injected_failure())
		return NULL;
	return calloc(1, sizeof(struct sx_status));
}

struct sx_status *sx_status_set_plugin(struct sx_status *st, const char *plugin)
{
	if (st && st != &oom && !st->shared)
		st->plugin = plugin;
	return st;
}

struct sx_status *sx_status_share(struct sx_status *st, const char *plugin)
{
	if (!st || st == &oom)
		return &oom;
	st->plugin = plugin;
	st->shared = true;
	return st;
}

void sx_status_unshare(struct sx_status *st)
{
	if (!st || st == &oom)
		return;
	st->shared = false;
	sx_status_free(st);
}

const char *sx_code_name(enum sx_code code)
{
	if ((unsigned)code >= SX_ARRAY_SIZE(code_names))
		return "Unknown";
	return code_names[code];
}

/* True when fmt's only conversions are %s (and %%): nearly every reason
 * string, formatted for each rejected node on the filter hot path. */
static bool only_string_conversions(const char *fmt)
{
	for (const char *p = fmt; (p = strchr(p, '%')); p += 2)
		if (p[1] != 's' && p[1] != '%')
			return false;
	return true;
}

/* fmt with %s conversions only, in one allocation (vasprintf is ~10x
 * slower); NULL arguments print as glibc does. */
static char *format_strings(const char *fmt, va_list ap)
{
	va_list ap2;
	size_t len = 0, off = 0;
	const char *p;
	char *out;

	va_copy(ap2, ap);
	for (p = fmt; *p; p++) {
		if (*p != '%') {
			len++;
		} else if (*++p == '%') {
			len++;
		} else {
			const char *a = va_arg(ap2, const char *);
			len += strlen(a ? a : "(null)");
		}
	}
	va_end(ap2);
	if (!(out = malloc(len + 1)))
		return NULL;
	for (p = fmt; *p; p++) {
		if (*p != '%') {
			out[off++] = *p;
		} else if (*++p == '%') {
			out[off++] = '%';
		} else {
			const char *a = va_arg(ap, const char *);
			size_t n;

			a = a ? a : "(null)";
			n = strlen(a);
			memcpy(out + off, a, n);
			off += n;
		}
	}
	out[off] = '\0';
	return out;
}

/* Formats a reason into a new heap string; NULL on failure. */
static char *format_reason(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (only_string_conversions(fmt))
		return format_strings(fmt, ap);
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

struct sx_status *sx_status_new(enum sx_code code, const char *fmt, ...)
{
	struct sx_status *st = status_alloc();
	va_list ap;

	if (!st)
		return &oom;
	st->code = code;
	if (!fmt)
		return st;
	va_start(ap, fmt);
	st->reasons[0] = format_reason(fmt, ap);
	va_end(ap);
	if (!st->reasons[0]) {
		free(st);
		return &oom;
	}
	st->nreasons = 1;
	return st;
}

/* A reason that cannot be allocated is dropped: the code still says what
 * happened, and callers cannot do better on OOM. */
void sx_status_add_reason(struct sx_status *st, const char *fmt, ...)
{
	va_list ap;
	char *r;

	if (!st || st == &oom || st->shared || !fmt || st->nreasons >= SX_STATUS_MAX_REASONS)
		return;
	va_start(ap, fmt);
	r = format_reason(fmt, ap);
	va_end(ap);
	if (r)
		st->reasons[st->nreasons++] = r;
}

struct sx_status *sx_status_clone(const struct sx_status *st)
{
	struct sx_status *c;

	if (!st || st == &oom)
		return (struct sx_status *)st;
	c = status_alloc();
	if (!c)
		return &oom;
	c->code = st->code;
	c->plugin = st->plugin;
	for (unsigned i = 0; i < st->nreasons; i++) {
		c->reasons[i] = sx_strdup(st->reasons[i]);
		if (!c->reasons[i]) {
			sx_status_free(c);
			return &oom;
		}
		c->nreasons = i + 1;
	}
	return c;
}

void sx_status_free(struct sx_status *st)
{
	if (!st || st == &oom || st->shared)
		return;
	for (unsigned i = 0; i < st->nreasons; i++)
		free(st->reasons[i]);
	free(st);
}

/* Appends s to buf (len bytes, NUL-terminated at off), truncating at
 * len - 1; returns the new end. */
static size_t append_trunc(char *buf, size_t len, size_t off, const char *s)
{
	size_t n = strlen(s);

	if (off >= len - 1)
		return off;
	if (n > len - 1 - off)
		n = len - 1 - off;
	memcpy(buf + off, s, n);
	buf[off + n] = '\0';
	return off + n;
}

/* Truncates at len - 1 bytes; an empty string for NULL or no reasons. */
const char *sx_status_message(const struct sx_status *st, char *buf, size_t len)
{
	size_t off = 0;

	if (!buf || len == 0)
		return buf;
	buf[0] = '\0';
	if (!st)
		return buf;
	/* Plain copies: the extender writes one message per rejected node. */
	for (unsigned i = 0; i < st->nreasons && off < len - 1; i++) {
		if (i)
			off = append_trunc(buf, len, off, ", ");
		off = append_trunc(buf, len, off, st->reasons[i] ? st->reasons[i] : "(null)");
	}
	return buf;
}

struct sx_status *sx_status_as_error(struct sx_status *st, const char *fmt, const char *plugin)
{
	char msg[1024];
	struct sx_status *err;
	sx_status_message(st, msg, sizeof(msg));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	err = sx_status_new(SX_ERROR, fmt, plugin, msg);
#pragma GCC diagnostic pop
	sx_status_set_plugin(err, plugin);
	sx_status_free(st);
	return err;
}
