/* The FitError message, worded exactly as kube-scheduler
 * (upstream pkg/scheduler/framework/types.go, FitError.Error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/buf.h"
#include "schedext/framework.h"
#include "schedext/fit_error.h"
#include "schedext/vec.h"

struct reason_count {
	const char *reason;
	uint32_t count;
};

struct histogram {
	struct reason_count *items;
	uint32_t n, cap;
	bool failed;
};

static void count_reason(struct histogram *h, const char *reason, uint32_t times)
{
	for (uint32_t i = 0; i < h->n; i++) {
		if (strcmp(h->items[i].reason, reason) == 0) {
			h->items[i].count += times;
			return;
		}
	}
	if (sx_vec_reserve(h->items, h->cap, h->n + 1, 16) < 0) {
		h->failed = true;
		return;
	}
	h->items[h->n++] = (struct reason_count){reason, times};
}

static void count_status(struct histogram *h, const struct sx_status *st, uint32_t times)
{
	for (unsigned r = 0; st && r < st->nreasons; r++)
		count_reason(h, st->reasons[r], times);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<count> <reason>" entries sorted as plain strings, joined by ", ". */
static void write_histogram(struct sx_buf *b, const struct histogram *h)
{
	char **entries = calloc(h->n ? h->n : 1, sizeof(*entries));
	if (!entries) {
		b->failed = true;
		return;
	}
	for (uint32_t i = 0; i < h->n; i++) {
		if (asprintf(&entries[i], "%u %s", h->items[i].count, h->items[i].reason) < 0)
			entries[i] = NULL;
	}
	qsort(entries, h->n, sizeof(*entries), cmp_str);
	for (uint32_t i = 0; i < h->n; i++) {
		sx_buf_puts(b, i ? ", " : " ");
		sx_buf_puts(b, entries[i] ? entries[i] : "");
		free(entries[i]);
	}
	free(entries);
}

char *sx_fit_error_message(const struct sx_cycle_result *res, const char *post_filter_msg)
{
	struct sx_buf b;
	sx_buf_init(&b);
	sx_buf_printf(&b, "0/%u nodes are available:", res->num_all_nodes);
	if (res->pre_filter) {
		char msg[2048];
		sx_buf_printf(&b, " %s.", sx_status_message(res->pre_filter, msg, sizeof(msg)));
	} else {
		struct histogram h = {0};
		uint32_t explicit_count = 0;
		for (uint32_t i = 0; i < res->num_all_nodes; i++) {
			if (!res->statuses[i])
				continue;
			explicit_count++;
			count_status(&h, res->statuses[i], 1);
		}
		if (res->absent_status && explicit_count < res->num_all_nodes)
			count_status(&h, res->absent_status, res->num_all_nodes - explicit_count);
		if (h.n) {
			write_histogram(&b, &h);
			sx_buf_putc(&b, '.');
		}
		if (h.failed)
			b.failed = true;
		free(h.items);
	}
	if (post_filter_msg && *post_filter_msg) {
		sx_buf_putc(&b, ' ');
		sx_buf_puts(&b, post_filter_msg);
	}
	if (b.failed) {
		sx_buf_free(&b);
		return NULL;
	}
	return sx_buf_take(&b, NULL);
}
