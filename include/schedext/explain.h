/* `schedext explain` and POST /debug/explain: one scheduling cycle over
 * every candidate node (percentage 100), reported per node and per plugin
 * (a fixed format, README "Explain a scheduling decision": pod, profile, numNodes, feasibleNodes,
 * selectedNode, message, preFilter, filter, scores; podGroup for a member of
 * a pod group when opts->cache is given). */
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
	/* Read (never written) for a member of a pod group: its group's
	 * pending members and how many are scheduled; NULL = no group report. */
	struct sx_cache *cache;
};

/* Runs the cycle and appends the report to out. 0, or negative on
 * allocation failure. */
int sx_explain(const struct sx_explain_opts *opts, const struct sx_pod *pod, struct sx_buf *out);

/* For a member of a pod group whose group object is in snap - the
 * Workload API's PodGroup (spec.schedulingGroup), or, where prof enables
 * Coscheduling, scheduler-plugins' PodGroup (the label
 * scheduling.x-k8s.io/pod-group): its group's pending members (from
 * cache, read only) placed as the 1.37 pod-group cycle would, as a dry run
 * (src/explain/gang.c): how many fit and where, which member was rejected
 * and why on each node, which were not tried, and the group's verdict in
 * GangScheduling's or Coscheduling's words (a Coscheduling group also
 * shows its members bound and waiting at Permit, its minMember, its Permit
 * timeout and its phase). Appends a text section, or a JSON object (the
 * "podGroup" member of sx_explain's report). Returns 1 when written, 0
 * when pod is no such member, negative on allocation failure. */
struct sx_cache;
/* The name of the group the views above would report pod under, or
 * SX_STR_EMPTY; *cosched says it is Coscheduling's. */
sx_str sx_explain_group_of(const struct sx_profile *prof, const struct sx_pod *pod, bool *cosched);
int sx_explain_gang(struct sx_cache *cache, const struct sx_snapshot *snap,
		    const struct sx_profile *prof, const struct sx_pod *pod, struct sx_pool *pool,
		    bool text, struct sx_buf *out);
/* The same dry run, for its verdict only: *status (owned) is NULL when the
 * group would be scheduled now, else the group's status. Returns as
 * sx_explain_gang. */
int sx_explain_gang_status(struct sx_cache *cache, const struct sx_snapshot *snap,
			   const struct sx_profile *prof, const struct sx_pod *pod,
			   struct sx_pool *pool, struct sx_status **status);

#endif /* SCHEDEXT_EXPLAIN_H */
