/* Operator tools over a whole cluster: the cluster as a document (a dump,
 * or one short-lived LIST of the live API server), "what if" edits of it,
 * and placing pods one after another with assume, as the scheduler would.
 *
 * Ownership: a struct sx_cluster_doc owns its cJSON items; every function
 * that takes a doc leaves it the caller's. Nothing here is thread-safe:
 * one doc, one caller. Nothing here ever writes to the API server.
 */
#ifndef SCHEDEXT_WHATIF_H
#define SCHEDEXT_WHATIF_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/framework.h"

struct cJSON;
struct sx_kube;
struct sx_pool;

/* Upper bound of copies one --add-node/--pods FILExN or --scale asks for. */
#define SX_WHATIF_MAX_COPIES 100000u

struct sx_cluster_doc {
	struct cJSON *items; /* array of objects, each with its "kind" */
	/* sx_cluster_doc_read warns about unknown fields of Pods and Nodes
	 * (sx_state_warn_fields) unless quiet: a file read again later. */
	bool quiet;
};

/* Reads a state file (a v1 List or a stream of objects or Lists, JSON or
 * YAML) into doc, after what it holds already (doc zeroed: empty). 0, or
 * negative with err naming the file; on error doc is freed. */
int sx_cluster_doc_read(struct sx_cluster_doc *doc, const char *path, struct sx_error *err);
/* Lists every kind the informers watch (plus apps/v1 Deployments) from the
 * API server, page by page; kinds the server does not serve are skipped. */
int sx_cluster_doc_list(struct sx_cluster_doc *doc, struct sx_kube *kube, struct sx_error *err);
void sx_cluster_doc_free(struct sx_cluster_doc *doc);
/* The object of that kind and name (ns NULL for cluster kinds), or NULL. */
struct cJSON *sx_cluster_doc_find(const struct sx_cluster_doc *doc, const char *kind,
				  const char *ns, const char *name);
/* Loads the doc into a fresh cache (all or nothing). */
int sx_cluster_doc_load(const struct sx_cluster_doc *doc, struct sx_cache *cache,
			struct sx_error *err);

/* A Pod or Node a user wrote (explain --pod, what-if --pods/--add-node),
 * checked as kube-apiserver checks a create with field validation Strict
 * (KEP-2885): every field must exist in the v1 type, and the object must
 * decode (quantities, selectors). 0, or negative with err =
 * "pod default/web: spec.containers[0].resources.requests.cpu: invalid
 * quantity \"1x5\"" or "pod default/web: strict decoding error: unknown
 * field \"spec.contianers\"" (the caller prefixes the file). */
int sx_input_check(const struct cJSON *obj, const char *kind, struct sx_error *err);

/* ---------- what-if edits ---------- */

struct sx_whatif {
	struct sx_cluster_doc *doc;
	/* Names in use ("Kind/ns/name"), so N copies are checked in O(N),
	 * built on first use; private to whatif.c. */
	struct sx_name_set *names;
	/* Pods to place, in order (names "ns/name"); filled by the edits below. */
	uint32_t npending, cap;
	char **pending;
	char summary[1024]; /* what was changed, one clause per edit */
	/* Pods added by --pods and --scale: one template per edit, decoded
	 * copy after copy straight into the cache by sx_whatif_load, never
	 * held as N JSON trees (100,000 copies took 3.5 KB each: 900 MB).
	 * Private to whatif.c. */
	struct sx_whatif_gen *gens;
	uint32_t ngens;
};

/* Each edit returns 0 or negative with err saying which argument is wrong. */
/* N copies of the Node in obj (JSON or YAML text of one Node), named
 * <name>, <name>-2, ... (N > 1). */
int sx_whatif_add_node(struct sx_whatif *w, const char *text, size_t len, uint32_t copies,
		       struct sx_error *err);
/* Removes the node; every pod bound to it is re-placed (DaemonSet pods
 * and mirror pods go with the node). */
int sx_whatif_remove_node(struct sx_whatif *w, const char *node, struct sx_error *err);
/* kubectl drain: cordon the node; its pods (not DaemonSet or mirror pods)
 * are evicted and re-placed. */
int sx_whatif_drain(struct sx_whatif *w, const char *node, struct sx_error *err);
/* kubectl cordon: spec.unschedulable = true. */
int sx_whatif_cordon(struct sx_whatif *w, const char *node, struct sx_error *err);
/* N copies of the Pod in text, named <name>, <name>-2, ... (pending). */
int sx_whatif_add_pods(struct sx_whatif *w, const char *text, size_t len, uint32_t copies,
		       struct sx_error *err);
/* Scales ns/deployment to replicas: the pod template is repeated for the
 * replicas above spec.replicas (pending pods <deployment>-whatif-<i>). */
int sx_whatif_scale(struct sx_whatif *w, const char *ns, const char *deployment, uint32_t replicas,
		    struct sx_error *err);
/* Queues the pods of the cluster that are pending now (no nodeName, not
 * terminal, not being deleted) and belong to a profile of cfg, in
 * document order: what-if's pods when the edits create none (--add-node,
 * --cordon: "would my pending pods fit then?"). */
int sx_whatif_add_cluster_pending(struct sx_whatif *w, const struct sx_config *cfg);
/* Loads the edited cluster into a fresh cache: the document
 * (sx_cluster_doc_load, all or nothing), then the pods the edits added.
 * 0, or negative with err set. */
int sx_whatif_load(struct sx_whatif *w, struct sx_cache *cache, struct sx_error *err);
void sx_whatif_free(struct sx_whatif *w);

/* ---------- placing pods one after another ---------- */

struct sx_placement {
	char *pod;   /* "ns/name" */
	sx_str node; /* SX_STR_EMPTY: did not fit */
	/* when it did not fit: the FailedScheduling message (one of the
	 * placements' msgs, shared by every row that says the same) */
	const char *message;
	uint32_t nvictims;
	char **victims; /* "ns/name" of the pods its preemption evicted */
};

struct sx_placements {
	uint32_t n, placed;
	uint32_t not_evaluated; /* pods left when the deadline passed */
	struct sx_placement *v;
	/* The distinct messages, owned: 100,000 pods that do not fit mostly
	 * say the same few hundred bytes. */
	uint32_t nmsgs, capmsgs;
	char **msgs;
};
void sx_placements_free(struct sx_placements *p);

/* Schedules the named pending pods of cache with prof as the scheduler
 * does: popped in the order of the profile's QueueSort (PrioritySort:
 * higher priority first, then the earlier creationTimestamp standing for
 * the queue's timestamp, then the order given), each assumed before the
 * next, with percentageOfNodesToScore of cfg, a rotating start index and
 * a fixed tie-break seed so runs repeat. Pods nominated in the cluster
 * (pending, status.nominatedNodeName) are honoured. A pod no node fits
 * runs PostFilter as a dry run; when DefaultPreemption would nominate a
 * node, its victims are evicted from cache and become pending (decoded
 * again from doc without spec.nodeName; doc may be NULL: then they are
 * only deleted) and queued, and the pod is placed on that node. pool may
 * be NULL. Once sx_now_s() passes deadline (0 = none), the pods still
 * queued are only counted in not_evaluated. Rows are in the order of the
 * pods' first attempts; each pod has one row, its last outcome.
 * 0 or SX_ENOMEM. */
int sx_place_pods(struct sx_cache *cache, const struct sx_cluster_doc *doc,
		  const struct sx_config *cfg, const struct sx_profile *prof, struct sx_pool *pool,
		  char *const *pods, uint32_t n, double deadline, struct sx_placements *out);

/* The what-if report: JSON ({"summary","pods","placed","unschedulable",
 * ["notEvaluated" when the deadline cut it short,] "byNode":{node:count},
 * "placements":[{pod,node,message[,"victims":[pod...] when it preempted]}]})
 * or text (a "Preempted" section lists who evicted whom). */
void sx_placements_write(struct sx_buf *b, const struct sx_placements *p, const char *summary,
			 bool text);

#endif /* SCHEDEXT_WHATIF_H */
