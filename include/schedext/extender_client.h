/* Calling scheduler extenders from the standalone scheduler: the
 * `extenders:` stanza of KubeSchedulerConfiguration and the HTTP client
 * that speaks the verbs to them, as kube-scheduler does (extender/v1
 * types, now from the client side; upstream
 * pkg/scheduler/extender.go, schedule_one.go findNodesThatPassExtenders and
 * prioritizeNodes, preemption.go callExtenders, schedule_one.go bind).
 *
 * Threads: a struct sx_extenders is immutable after sx_extenders_new except
 * for its connection cache (a curl handle per extender per thread, kept
 * alive for reuse, under a mutex), so any thread may call the verbs at
 * once. Filter/prioritize run on the scheduling thread, bind on binder
 * threads, preempt inside PostFilter.
 */
#ifndef SCHEDEXT_EXTENDER_CLIENT_H
#define SCHEDEXT_EXTENDER_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schedext/common.h"
#include "schedext/model.h"

struct cJSON;
struct sx_snapshot;
struct sx_status;
struct sx_cycle_result;
struct sx_preempt_candidate;
struct sx_metrics;

/* ---------- configuration (apis/config/v1 Extender) ---------- */

struct sx_extender_tls {
	bool insecure;
	char *server_name;
	char *cert_file, *key_file, *ca_file;
	char *cert_data, *key_data, *ca_data; /* PEM, base64-decoded from the file */
	size_t cert_len, key_len, ca_len;
};

struct sx_managed_resource {
	char *name;
	bool ignored_by_scheduler;
};

struct sx_extender_cfg {
	char *url_prefix; /* as written; also the extender's name */
	char *filter_verb, *preempt_verb, *prioritize_verb, *bind_verb; /* NULL = not called */
	int64_t weight;
	bool enable_https;
	bool has_tls;
	struct sx_extender_tls tls;
	double http_timeout_s; /* 0 in the file = the default 5 s */
	bool node_cache_capable;
	unsigned nmanaged;
	struct sx_managed_resource *managed;
	bool ignorable;
};

/* Parses and validates the `extenders` list (NULL or null = none). Errors
 * carry the path below "extenders" ("[0].weight: Invalid value: 0: must
 * have a positive weight applied to it"). *out is owned by the caller. */
int sx_extender_cfg_parse(const struct cJSON *list, struct sx_extender_cfg **out, unsigned *n,
			  struct sx_error *err);
void sx_extender_cfgs_free(struct sx_extender_cfg *cfgs, unsigned n);

/* ---------- runtime ---------- */

struct sx_extenders;

/* One client per configured extender, ordered as kube-scheduler orders
 * them: non-ignorable ones first, then ignorable ones, each group in
 * configuration order. NULL (err set) when a TLS file cannot be read;
 * cfgs must outlive the result. n == 0 gives NULL without an error. */
struct sx_extenders *sx_extenders_new(const struct sx_extender_cfg *cfgs, unsigned n,
				      struct sx_metrics *metrics, struct sx_error *err);
void sx_extenders_free(struct sx_extenders *x);

/* hasExtenderFilters || an extender prioritizes: the cycle then looks for
 * numFeasibleNodesToFind nodes instead of stopping at the first. */
bool sx_extenders_affect_search(const struct sx_extenders *x);
/* Some extender would take part for this pod (IsInterested). */
bool sx_extenders_interested(const struct sx_extenders *x, const struct sx_pod *pod);

/* findNodesThatPassExtenders on res (a FULL cycle after Filter): narrows
 * res->feasible in place, records FailedNodes / FailedAndUnresolvableNodes
 * as Unschedulable / UnschedulableAndUnresolvable statuses, and nodes an
 * extender dropped without a reason as UnschedulableAndUnresolvable
 * without one. A non-ignorable extender's failure sets res->error (Error
 * with upstream's text). Returns 0, or SX_ENOMEM. */
int sx_extenders_filter(struct sx_extenders *x, const struct sx_pod *pod,
			struct sx_cycle_result *res);

/* prioritizeNodes' extender part: every interested prioritizer is called
 * (in parallel) with the feasible nodes; Score × weight × (100 / 10) is
 * added to res->totals. Failures only cost that extender's scores. */
void sx_extenders_prioritize(struct sx_extenders *x, const struct sx_pod *pod,
			     struct sx_cycle_result *res);

/* extendersBinding: the first interested binder binds the pod. *bound
 * false: no extender took it (use the Bind plugins). Returns NULL when
 * bound, or an Error status with the extender's error. An ignorable
 * binder's failure falls through (*bound false). */
struct sx_status *sx_extenders_bind(struct sx_extenders *x, const struct sx_pod *pod, sx_str node,
				    bool *bound);

/* callExtenders of the preemption evaluator: each interested extender
 * with a preempt verb prunes or changes the candidates (*cands replaced,
 * victims resolved against snap). Returns NULL, or an Error status. */
struct sx_status *sx_extenders_preempt(struct sx_extenders *x, const struct sx_pod *pod,
				       const struct sx_snapshot *snap,
				       struct sx_preempt_candidate **cands, uint32_t *ncands);

#endif /* SCHEDEXT_EXTENDER_CLIENT_H */
