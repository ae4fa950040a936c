/* PodTopologySpreadArgs: the plugin's default constraints (defaultingType
 * System or List, defaultConstraints), read and validated once by the
 * plugin's init. Not a plugin. Read-only after sx_pts_args_read, so any
 * thread may read the result.
 */
#ifndef SCHEDEXT_PLUGINS_TOPOLOGY_SPREAD_ARGS_H
#define SCHEDEXT_PLUGINS_TOPOLOGY_SPREAD_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/common.h"
#include "schedext/intern.h"

struct cJSON;

/* A default constraint from PodTopologySpreadArgs (no selector: it is
 * deduced per pod). */
struct sx_pts_dconstraint {
	int32_t max_skew;
	sx_str key;
	uint8_t when;	      /* enum sx_unsatisfiable */
	int32_t min_domains;  /* 0 = unset */
	uint8_t aff_policy;   /* enum sx_inclusion_policy */
	uint8_t taint_policy; /* enum sx_inclusion_policy */
};

struct pts_memo_set;

struct sx_pts_args {
	bool system_defaulted; /* defaultingType: System */
	uint32_t n;
	struct sx_pts_dconstraint *v;
	/* PodTopologySpread's count memos of this instance (owned by
	 * plugins/pod_topology_spread.c; NULL: count node by node). */
	struct pts_memo_set *memo;
};

/* "Honor", "Ignore" (index: enum sx_inclusion_policy - 1), NULL. */
extern const char *const sx_pts_policies[];

/* Reads json (PodTopologySpreadArgs, NULL/null for the defaults) into a
 * (zeroed): System defaulting keeps the two built-in constraints. Returns
 * 0, or an error in err (upstream's field.ErrorList wording) with a left
 * empty. The caller frees a->v. */
int sx_pts_args_read(const struct cJSON *json, struct sx_pts_args *a, struct sx_error *err);

#endif /* SCHEDEXT_PLUGINS_TOPOLOGY_SPREAD_ARGS_H */
