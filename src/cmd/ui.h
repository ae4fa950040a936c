/* The operators' page (/ui) and the JSON endpoints it reads besides
 * POST /debug/explain: GET /debug/explain?pod=NS/NAME (a pod of the cache),
 * GET /debug/pending[?namespace=NS], POST /debug/whatif. Each returns the
 * HTTP code and appends the body (errors as {"error":"..."}). */
#ifndef SCHEDEXT_CMD_UI_H
#define SCHEDEXT_CMD_UI_H

#include <stddef.h>

#include "schedext/buf.h"
#include "schedext/extender.h"

/* The page: one self-contained HTML document (no external assets). */
unsigned sx_ui_page(struct sx_buf *b);
unsigned sx_ui_explain_pod(const struct sx_extender *ex, const char *key, struct sx_buf *b);
/* budget_s: evaluation time; pods beyond it are counted as not evaluated. */
unsigned sx_ui_pending(const struct sx_extender *ex, const char *ns, double budget_s,
		       struct sx_buf *b);
/* body: {"addNodes":[{"like":"NODE","count":N}]} (at most 16 entries, N in
 * 1..1000): N copies of an existing node, then the cluster's pending pods
 * are placed. The cluster is re-read: the --state files merged in order,
 * else a LIST through
 * ex->kube. */
unsigned sx_ui_whatif(const struct sx_extender *ex, const char *const *states, unsigned nstates,
		      const char *body, size_t len, double budget_s, struct sx_buf *b);

#endif
