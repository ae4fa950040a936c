/* `schedext explain` and POST /debug/explain: one scheduling cycle over
 * every candidate node (percentage 100), reported per node and per plugin
 * (a fixed format, README "Explain a scheduling decision": pod, profile, numNodes, feasibleNodes,
 * selectedNode, message, preFilter, filter, scores). */
#ifndef SCHEDEXT_EXPLAIN_H
#define SCHEDEXT_EXPLAIN_H

#include <stdbool.h>

#include "schedext/buf.h"
#include "schedext/framework.h"

struct sx_explain_opts {
	const struct sx_profile *profile;
	const struct sx_snapshot *snap;
	const sx_str *nodes; /* --nodes candidates; NULL = every node */
	uint32_t nnodes;
	struct sx_pool *pool;		      /* may be NULL */
	const struct sx_nominator *nominator; /* may be NULL */
	bool text;			      /* readable table instead of JSON */
};

/* Runs the cycle and appends the report to out. 0, or negative on
 * allocation failure. */
int sx_explain(const struct sx_explain_opts *opts, const struct sx_pod *pod, struct sx_buf *out);

#endif /* SCHEDEXT_EXPLAIN_H */
