/* The operators' page (/ui) and the JSON endpoints it reads besides
 * POST /debug/explain: GET /debug/explain?pod=NS/NAME (a pod of the cache;
 * a bound one answers {"pod","boundNode"} as kubectl schedext why does),
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
/* body: the what-if edits of `kubectl schedext what-if`, applied in the
 * order given (members in order, then entries), at most 16 in all:
 *   {"addNodes":[{"like":"NODE","count":N}],   N copies of a node (1..1000)
 *    "removeNodes":["NODE"], "drain":["NODE"], "cordon":["NODE"],
 *    "addPods":[{"like":"NS/NAME","count":N}],  N pending copies of a pod
 *    "scale":[{"deployment":"NS/NAME","replicas":N}]}
 * then the pods the edits made pending (the cluster's pending pods when
 * they made none) are placed; unknown members are a 400. The cluster is
 * re-read: the --state files merged in order, else a LIST through
 * ex->kube. */
unsigned sx_ui_whatif(const struct sx_extender *ex, const char *const *states, unsigned nstates,
		      const char *body, size_t len, double budget_s, struct sx_buf *b);
/* GET /debug/whatif: what the edits may name, read as POST reads the
 * cluster: {"live":false with --state (true: a live cluster, which the
 * page refreshes), "nodes":[{"name","unschedulable","taints":["k=v:Effect"]}],
 * "pods":[{"pod":"NS/NAME","node":NODE|null}],
 * "deployments":[{"deployment":"NS/NAME","replicas":N}]}. */
unsigned sx_ui_whatif_choices(const struct sx_extender *ex, const char *const *states,
			      unsigned nstates, struct sx_buf *b);

#endif
