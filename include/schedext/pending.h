/* "Why are my pods pending?" for a whole cluster: every pending pod runs
 * one scheduling cycle over every node, and pods are grouped by what blocks
 * them: the plugin and reason string that reject the most nodes (or the
 * PreEnqueue/PreFilter rejection). Nothing is changed. */
#ifndef SCHEDEXT_PENDING_H
#define SCHEDEXT_PENDING_H

#include <stdbool.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/framework.h"

struct sx_pool;

struct sx_pending_opts {
	const struct sx_config *cfg; /* profiles: a pod of no served profile is skipped */
	struct sx_pool *pool;	     /* may be NULL */
	const char *ns;		     /* only this namespace; NULL = all */
	bool text;		     /* table instead of JSON */
	/* sx_now_s() after which the remaining pods are not evaluated (a
	 * served request's budget); 0 = evaluate them all. */
	double deadline;
};

/* Appends the report: JSON {"pods":N,"groups":[{"plugin","reason","count",
 * "pods":[{"pod","nodesRejected","numNodes","message","node"}]}]}, groups by
 * count (descending) then plugin and reason; pods that fit now form the
 * group with plugin null and reason "schedulable now". Pods left when the
 * deadline passes are counted in "notEvaluated" (present only then) and
 * belong to no group. 0 or SX_ENOMEM. */
int sx_pending_report(struct sx_cache *cache, const struct sx_pending_opts *o, struct sx_buf *out);

#endif /* SCHEDEXT_PENDING_H */
