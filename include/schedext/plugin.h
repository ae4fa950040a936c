/* The plugin API: one const descriptor per plugin (plugins/<name>.c), listed
 * in plugins/plugins.def, which only the registry (registry.h) and
 * plugins/slots.h read. Semantics follow kube-scheduler's framework
 * (k8s.io/kube-scheduler/framework interface.go). A NULL hook means "not implemented at this
 * extension point"; the runtime flattens enabled hooks into per-point arrays
 * at profile construction, so cycles never test for NULL.
 *
 * Threads: filter() and score() are called concurrently for different nodes
 * of one cycle; they may read (never write) the cycle state slots. Every
 * other hook runs on the cycle's thread. `self` is the plugin instance made
 * by init() from its args; it is shared by all cycles of the profile and is
 * read-only after init.
 *
 * Statuses: return NULL for Success, else sx_status_new(...). The runtime
 * sets status->plugin.
 */
#ifndef SCHEDEXT_PLUGIN_H
#define SCHEDEXT_PLUGIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/model.h"
#include "schedext/status.h"

struct sx_buf;
struct sx_detail;
struct sx_jw;

struct cJSON;
struct sx_handle;
struct sx_nominator;
struct sx_preempt_result;
struct sx_profile;

#define SX_MAX_NODE_SCORE	     100
#define SX_MIN_NODE_SCORE	     0
#define SX_MAX_EXTENDER_PRIORITY     10
#define SX_MAX_CUSTOM_PRIORITY_SCORE 10

/* Upper bound on registered plugins (cycle state slots). */
#define SX_MAX_PLUGINS 48

/* Per-cycle state (kube-scheduler's CycleState). Owned and freed by the
 * cycle. Slot i belongs to the plugin with registry index i (a plugin foo
 * of plugins/ finds its index as SX_SLOT_foo in plugins/slots.h); a plugin stores
 * what its PreFilter/PreScore computed there and frees it through its
 * state_free hook. */
struct sx_cycle_state {
	void *slots[SX_MAX_PLUGINS];
	const struct sx_snapshot *snap;		/* the cycle's snapshot (borrowed) */
	bool skip_filter[SX_MAX_PLUGINS];	/* PreFilter returned Skip */
	bool skip_score[SX_MAX_PLUGINS];	/* PreScore returned Skip */
	bool skip_pre_bind[SX_MAX_PLUGINS];	/* PreBindPreFlight returned Skip */
	bool parallel_pre_bind[SX_MAX_PLUGINS]; /* PreBindPreFlight allowed parallel */
	bool record_plugin_metrics;		/* a sampled cycle: every plugin call is timed */
	/* The binding was cancelled while in PreBind (preemption; upstream
	 * cancels PreBind's context): a PreBind that waits gives up. Set by
	 * sx_handle_cancel_pre_bind from any thread. */
	atomic_bool pre_bind_cancelled;
};

/* A plugin's slot in cs, zero-allocated with size bytes on first use (the
 * plugin's state_free frees it); NULL when out of memory. */
void *sx_cycle_state_slot(struct sx_cycle_state *cs, unsigned slot, size_t size);

/* What a PreFilter may narrow the candidates to (PreFilterResult). */
struct sx_node_set {
	uint32_t n;
	sx_str *names;
};

/* A (node, score) pair for NormalizeScore. */
struct sx_node_score {
	sx_str node;
	int64_t score;
};

/* A pod in the queue, for QueueSort. */
struct sx_queued_pod {
	const struct sx_pod *pod;
	double timestamp; /* when it was (re)added to the queue, sx_now_s() */
};

/* A PostFilter run that changes nothing (explain, pending, what-if): no
 * pod is evicted, no claim deallocated, nothing written to the API server
 * and no metric counted; plugins answer what they would do. What a real
 * run takes from the profile's handle (handle.h) comes from here
 * instead. */
struct sx_post_filter_dry_run {
	const struct sx_profile *profile;     /* the profile running PostFilter */
	const struct sx_nominator *nominator; /* nominated pods; NULL = none */
	/* Out: DefaultPreemption's whole answer (victims, the lower-priority
	 * nominations it clears), moved here when it runs; zeroed by the
	 * caller, who frees it with sx_preempt_result_free. */
	struct sx_preempt_result *preemption;
};

/* PostFilter input: the per-node statuses of the failed attempt. */
struct sx_filtered_status {
	const struct sx_snapshot *snap;
	struct sx_status *const
		*statuses; /* indexed like snap->nodes; NULL = passed/not evaluated */
	const struct sx_post_filter_dry_run *dry_run; /* NULL = a real run */
};

struct sx_post_filter_result {
	sx_str nominated_node; /* SX_STR_EMPTY = none */
};

/* ---------- cluster events and queueing hints (EnqueueExtensions) ----------
 *
 * How a plugin says which cluster changes may make a pod it rejected
 * schedulable (upstream EnqueueExtensions.EventsToRegister). A plugin lists
 * (resource, actions, hint) rows in a const table ending with SX_EVENTS_END
 * and points its descriptor's `.events` at it:
 *
 *	static const struct sx_event_reg events_foo[] = {
 *		{ SX_RES_NODE, SX_ACT_ADD | SX_ACT_UPDATE_NODE_LABEL, hint_node_foo },
 *		{ SX_RES_POD, SX_ACT_DELETE, NULL },	// NULL hint = always Queue
 *		SX_EVENTS_END,
 *	};
 *
 * `.events == NULL` means "interested in every event" (upstream: a plugin
 * without EnqueueExtensions); a table holding only SX_EVENTS_END means "no
 * event ever helps". Only plugins enabled at PreEnqueue, PreFilter, Filter,
 * Reserve or Permit are consulted, and only for pods they rejected.
 *
 * A hint is called by the scheduling queue, under its lock, on whichever
 * thread delivered the event (informer, bind worker, scheduling loop): it must
 * be quick, must not block or call into the queue or the cache, and may
 * only read `self` (the profile's instance, as for filter). `pod` is the
 * unschedulable pod. old_obj/new_obj are the event's objects, typed by
 * resource: struct sx_pod for the pod resources, struct sx_node for
 * SX_RES_NODE, struct sx_object for the others; old_obj is NULL for Add,
 * new_obj NULL for Delete. Return SX_QUEUE when the change may make the
 * pod schedulable, SX_QUEUE_SKIP when it surely does not.
 */

/* upstream fwk.EventResource */
enum sx_event_resource {
	SX_RES_NONE = 0,	/* terminates an events table */
	SX_RES_POD,		/* registrations: matches both kinds below */
	SX_RES_ASSIGNED_POD,	/* incoming events: a pod with spec.nodeName */
	SX_RES_UNSCHEDULED_POD, /* incoming events: a pod without it */
	SX_RES_NODE,
	SX_RES_PV,
	SX_RES_PVC,
	SX_RES_STORAGE_CLASS,
	SX_RES_CSI_NODE,
	SX_RES_CSI_DRIVER,
	SX_RES_CSI_STORAGE_CAPACITY,
	SX_RES_VOLUME_ATTACHMENT,
	SX_RES_RESOURCE_CLAIM,
	SX_RES_RESOURCE_SLICE,
	SX_RES_DEVICE_CLASS,
	SX_RES_POD_GROUP, /* scheduling.k8s.io PodGroup (workload.h) */
	/* scheduling.x-k8s.io PodGroup (workload.h; scheduler-plugins
	 * Coscheduling.EventsToRegister's GVK "podgroups.v1alpha1.scheduling.x-k8s.io") */
	SX_RES_COSCHED_POD_GROUP,
	SX_RES_WILDCARD, /* "*": matches every resource */
	SX_RES_COUNT
};

/* upstream fwk.ActionType (1.34 names): bits, combined with |. */
enum sx_action {
	SX_ACT_ADD = 1u << 0,
	SX_ACT_DELETE = 1u << 1,
	SX_ACT_UPDATE_NODE_ALLOCATABLE = 1u << 2,
	SX_ACT_UPDATE_NODE_LABEL = 1u << 3,
	SX_ACT_UPDATE_NODE_TAINT = 1u << 4, /* taints, or spec.unschedulable cleared */
	SX_ACT_UPDATE_NODE_CONDITION = 1u << 5,
	SX_ACT_UPDATE_NODE_ANNOTATION = 1u << 6,
	SX_ACT_UPDATE_POD_LABEL = 1u << 7,
	SX_ACT_UPDATE_POD_SCALE_DOWN = 1u << 8, /* some resource request went down */
	SX_ACT_UPDATE_POD_TOLERATION = 1u << 9,
	SX_ACT_UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1u << 10,
	SX_ACT_UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1u << 11,
	SX_ACT_UPDATE_NODE_DECLARED_FEATURE = 1u << 12, /* status.declaredFeatures (1.36) */
	SX_ACT_ALL = (1u << 13) - 1,
	/* Any update; as an incoming action: "an update none of the specific
	 * ones describes", matched only by registrations holding every bit. */
	SX_ACT_UPDATE = SX_ACT_ALL & ~(SX_ACT_ADD | SX_ACT_DELETE),
};

enum sx_hint { SX_QUEUE_SKIP = 0, SX_QUEUE = 1 };

typedef enum sx_hint (*sx_hint_fn)(void *self, const struct sx_pod *pod, const void *old_obj,
				   const void *new_obj);

/* One registration (upstream ClusterEventWithHint). */
struct sx_event_reg {
	uint8_t resource; /* enum sx_event_resource */
	uint32_t actions; /* enum sx_action bits */
	sx_hint_fn hint;  /* NULL = SX_QUEUE */
};
#define SX_EVENTS_END                                                                              \
	{                                                                                          \
		SX_RES_NONE, 0, NULL                                                               \
	}

/* An incoming cluster event (a resource and one action, or SX_ACT_UPDATE). */
struct sx_cluster_event {
	uint8_t resource; /* enum sx_event_resource */
	uint32_t action;
	const char *label; /* custom label ("UnschedulableTimeout"), or NULL */
};

/* upstream ClusterEvent.Match: a registration matches an incoming event
 * when it is a wildcard, or its resource equals the event's (SX_RES_POD
 * covering assigned and unscheduled pods) and the event's action bits are
 * all among the registered ones. Implemented in src/framework/events.c. */
bool sx_event_matches(const struct sx_event_reg *reg, const struct sx_cluster_event *ev);
/* The specific update actions between two versions of a pod / node
 * (upstream PodSchedulingPropertiesChange / NodeSchedulingPropertiesChange):
 * a bit set, 0 when none applies (then the event is SX_ACT_UPDATE for pods;
 * nodes with no bit produce no event). */
uint32_t sx_pod_update_actions(const struct sx_pod *old_pod, const struct sx_pod *new_pod);
uint32_t sx_node_update_actions(const struct sx_node *old_node, const struct sx_node *new_node);
/* upstream ClusterEvent.Label(): "NodeAdd", "AssignedPodDelete",
 * "NodeUpdateNodeLabel", or the custom label. Returns buf. */
const char *sx_event_label(const struct sx_cluster_event *ev, char *buf, size_t len);
/* Name of one action bit ("UpdateNodeLabel") or of a resource ("Node"). */
const char *sx_action_name(uint32_t action);
const char *sx_event_resource_name(unsigned resource);

/* Label-set equality (interned, sorted: a plain array comparison). */
bool sx_labels_equal(const struct sx_labels *a, const struct sx_labels *b);

/* PlacementProgress (k8s.io/kube-scheduler framework, 1.37): how far the
 * pod-group cycle is in placing a group's members. */
struct sx_placement_progress {
	int32_t remaining; /* members not evaluated yet in this cycle */
	int32_t scheduled; /* members scheduled before the cycle and in it so far */
};

struct sx_pod_group;
struct sx_pg_preempt_input;
struct sx_pg_preempt_result;
struct sx_snapshot;

/* Placement (k8s.io/kube-scheduler framework, 1.37, topology-aware
 * workload scheduling): a named set of nodes the pod-group cycle may place
 * a group on. Names and the node array are owned (sx_pg_placements_free). */
struct sx_pg_placement {
	char *name;
	uint32_t nnodes;
	sx_str *nodes; /* node names, in the snapshot's order */
};
struct sx_pg_placements {
	uint32_t n;
	struct sx_pg_placement *v;
};
void sx_pg_placements_free(struct sx_pg_placements *p);

/* PodGroupAssignments: a feasible placement and what the group's cycle
 * proposed in it (the members placed there, and their nodes). */
struct sx_pg_assignments {
	const struct sx_pg_placement *placement;
	uint32_t nproposed;
	const struct sx_pod *const *pods;
	const sx_str *nodes;
	int32_t scheduled_before; /* members bound or assumed before the cycle */
	/* The snapshot the placements were generated from, without any member
	 * of this cycle assumed: the placement's NodeInfos are looked up here
	 * (upstream PodGroupAssignments.Placement.Nodes). */
	const struct sx_snapshot *snap;
};

struct sx_plugin {
	const char *name;
	/* Parses args (the pluginConfig entry's `args`, NULL for defaults) into a
	 * plugin instance, given the profile's handle (handle.h; upstream's
	 * PluginFactory gets framework.Handle), which the instance may keep:
	 * it outlives the instance. NULL with err set on invalid args. Plugins
	 * without args or environment may leave init NULL (self is then
	 * NULL). h may be NULL (tests): no environment. */
	void *(*init)(const struct cJSON *args, struct sx_handle *h, struct sx_error *err);
	void (*destroy)(void *self);
	/* Plugins with args: the args object the instance runs with, every
	 * default applied, as /configz shows it (upstream's v1 field names and
	 * kind args_kind, e.g. "NodeResourcesFitArgs"): writes each field as a
	 * member of the args object w has open (the caller writes the braces,
	 * kind and apiVersion). */
	const char *args_kind;
	void (*write_args)(const void *self, struct sx_jw *w);

	/* Per-cycle state management for the plugin's slot. clone is needed
	 * by the nominated-pods pass and preemption (the state is mutated by
	 * add_pod/remove_pod on the clone). */
	void *(*state_clone)(const void *state);
	void (*state_free)(void *state);

	/* QueueSort: true when a should be popped before b. */
	bool (*less)(void *self, const struct sx_queued_pod *a, const struct sx_queued_pod *b);

	/* PreEnqueue: non-success gates the pod. */
	struct sx_status *(*pre_enqueue)(void *self, const struct sx_pod *pod);

	/* PreFilter: may set *result (allocated, owned by the caller) to narrow
	 * the nodes; Skip disables this plugin's filter/add_pod/remove_pod. */
	struct sx_status *(*pre_filter)(void *self, struct sx_cycle_state *cs,
					const struct sx_pod *pod, struct sx_node_set **result);
	/* PreFilterExtensions: update the plugin's slot for `added`/`removed`
	 * having been added to / removed from node ni; ni already reflects the
	 * change (as upstream: the NodeInfo is modified first). */
	struct sx_status *(*add_pod)(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, const struct sx_pod *added,
				     const struct sx_node_info *ni);
	struct sx_status *(*remove_pod)(void *self, struct sx_cycle_state *cs,
					const struct sx_pod *pod, const struct sx_pod *removed,
					const struct sx_node_info *ni);

	struct sx_status *(*filter)(void *self, const struct sx_cycle_state *cs,
				    const struct sx_pod *pod, const struct sx_node_info *ni);

	struct sx_status *(*post_filter)(void *self, struct sx_cycle_state *cs,
					 const struct sx_pod *pod,
					 const struct sx_filtered_status *filtered,
					 struct sx_post_filter_result *result);

	/* PreScore over the feasible nodes; Skip disables this plugin's score. */
	struct sx_status *(*pre_score)(void *self, struct sx_cycle_state *cs,
				       const struct sx_pod *pod, struct sx_node_info *const *nodes,
				       uint32_t n);
	struct sx_status *(*score)(void *self, const struct sx_cycle_state *cs,
				   const struct sx_pod *pod, const struct sx_node_info *ni,
				   int64_t *score);
	struct sx_status *(*normalize_score)(void *self, const struct sx_cycle_state *cs,
					     const struct sx_pod *pod, struct sx_node_score *scores,
					     uint32_t n);

	struct sx_status *(*reserve)(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, sx_str node);
	void (*unreserve)(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
			  sx_str node);
	/* Permit: Wait sets *timeout_ms. */
	struct sx_status *(*permit)(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				    sx_str node, uint64_t *timeout_ms);
	/* PreBindPreFlight (upstream PreBindPlugin.PreBindPreFlight): Skip
	 * when PreBind has nothing to do for pod on node (it is then not
	 * called), Success when it has (*allow_parallel: it may run beside
	 * the other PreBind plugins, kube-scheduler 1.36), Error on failure.
	 * NULL: Success, sequential. Runs on the binding cycle's thread. */
	struct sx_status *(*pre_bind_pre_flight)(void *self, struct sx_cycle_state *cs,
						 const struct sx_pod *pod, sx_str node,
						 bool *allow_parallel);
	/* PreBind: a plugin that allowed parallel runs on a thread of its own,
	 * beside the others; it may only touch its own slot of cs. */
	struct sx_status *(*pre_bind)(void *self, struct sx_cycle_state *cs,
				      const struct sx_pod *pod, sx_str node);
	/* Bind: Skip declines (next binder). */
	struct sx_status *(*bind)(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				  sx_str node);
	void (*post_bind)(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
			  sx_str node);

	/* PlacementFeasible (pod-group cycle, 1.37): may the group still meet
	 * its constraints given progress? Success: met; Wait: not yet, go on;
	 * Unschedulable: it cannot, stop. Run for the profile's Permit
	 * plugins that have it (upstream: GangScheduling only). */
	struct sx_status *(*placement_feasible)(void *self, const struct sx_pod_group *pg,
						struct sx_placement_progress progress);

	/* PlacementGenerate (1.37, TopologyAwareWorkloadScheduling): the
	 * candidate placements of pg among snap's nodes, appended to out;
	 * none (Success, nothing added): this plugin has no opinion. */
	struct sx_status *(*placement_generate)(void *self, const struct sx_pod_group *pg,
						const struct sx_snapshot *snap,
						struct sx_pg_placements *out);
	/* PlacementScore (1.37): *score of one feasible placement; then
	 * NormalizePlacementScore (may be NULL) over every placement's. */
	struct sx_status *(*placement_score)(void *self, const struct sx_pod_group *pg,
					     const struct sx_pg_assignments *a, int64_t *score);
	struct sx_status *(*normalize_placement_score)(void *self, const struct sx_pod_group *pg,
						       int64_t *scores, uint32_t n);

	/* PodGroupPostFilter (1.37): when a pod group's cycle fails, make
	 * room for the group (podgroup.h, struct sx_pg_preempt_input); fills
	 * out, returns its status (NULL: the group may be retried where out
	 * nominates it). Runs on the pod-group cycle's thread. */
	struct sx_status *(*pod_group_post_filter)(void *self, const struct sx_pg_preempt_input *in,
						   struct sx_pg_preempt_result *out);

	/* EventsToRegister: see "cluster events and queueing hints" above.
	 * NULL = every event may help. */
	const struct sx_event_reg *events;

	/* Explainers only, never while scheduling: the numbers behind this
	 * plugin's Filter rejection `st` of ni (which taint, label or count),
	 * read from the cycle state cs its Filter read; fills d (zeroed by
	 * the caller) through sx_detail_*, or leaves it empty. ni NULL: st
	 * is this plugin's PreEnqueue or PreFilter rejection of the whole
	 * cycle (cs as PreFilter left it). See "the numbers behind a
	 * rejection" below. */
	void (*explain)(void *self, const struct sx_cycle_state *cs, const struct sx_pod *pod,
			const struct sx_node_info *ni, const struct sx_status *st,
			struct sx_detail *d);
	/* SignPlugin.SignPod (opportunistic batching, batch.h): ORs into
	 * *signers the SX_SIGNER_* parts of the pod its PreFilter, Filter,
	 * PreScore and Score read, and returns NULL; or returns a status
	 * (Unschedulable, upstream's words) when it cannot sign this pod.
	 * A plugin at one of those points without this hook turns
	 * signatures off for its whole profile, as upstream's
	 * computeBatchablePlugins does. Runs on the cycle's thread. */
	struct sx_status *(*sign)(void *self, const struct sx_pod *pod, uint32_t *signers);
};

/* The pod parts plugins sign (upstream's signer names,
 * staging/src/k8s.io/kube-scheduler/framework signers: the key each
 * fragment is stored under). Each part is encoded once per pod, however
 * many plugins ask for it (batch.c). */
enum sx_signer {
	SX_SIGNER_NODE_NAME = 1u << 0,	   /* v1.Pod.Spec.NodeName */
	SX_SIGNER_TOLERATIONS = 1u << 1,   /* v1.Pod.Spec.Tolerations */
	SX_SIGNER_NODE_AFFINITY = 1u << 2, /* v1.Pod.Spec.Affinity.NodeAffinity */
	SX_SIGNER_NODE_SELECTOR = 1u << 3, /* v1.Pod.Spec.Affinity.NodeSelector */
	SX_SIGNER_HOST_PORTS = 1u << 4,	   /* v1.Pod.Spec.HostPorts() */
	SX_SIGNER_RESOURCES = 1u << 5,	   /* v1.Pod.Spec.ContainerRequestsAndOverheads() */
	SX_SIGNER_VOLUMES = 1u << 6,	   /* v1.Pod.Spec.Volumes.NonSyntheticSources() */
	SX_SIGNER_IMAGE_NAMES = 1u << 7,   /* v1.Pod.Spec.CanonicalImageNames() */
	SX_SIGNER_LABELS = 1u << 8,	   /* v1.Pod.Labels */
	SX_SIGNER_FEATURES = 1u << 9,	   /* v1.Pod.Spec.RequiredFeatures() */
};

/* ---------- helpers shared by plugins ---------- */

/* Go's strings for resource names in reasons ("Insufficient cpu"). */
/* Default scoring resources {cpu:1, memory:1}. */
struct sx_resource_weight {
	sx_str name;
	int64_t weight;
};

/* ---------- added by the default-plugins engineer ---------- */

/* Upstream helper.DefaultNormalizeScore: scales scores[] in place to
 * [0, max_priority] by the highest score (integer division); reverse maps the
 * highest to 0. All-zero scores stay 0, or become max_priority with reverse.
 * Thread-safe, no allocation. Implemented in plugins/helpers.c. */
void sx_default_normalize_score(int64_t max_priority, bool reverse, struct sx_node_score *scores,
				uint32_t n);

/* ---------- the numbers behind a rejection (explainers) ----------
 *
 * A Filter status says what failed with kube-scheduler's words, never
 * which taint, label or count (one status serves every node it rejects,
 * and since upstream PR 134740 a status names no taint). explain, why and
 * the page ask the rejecting plugin's `explain` hook for them: a phrase
 * for text output ("taint dedicated=gpu:NoSchedule") and a few members
 * of the JSON "detail" object ({"taint":"dedicated=gpu:NoSchedule"}).
 * Filled by the sx_detail_* helpers (plugins/helpers.c), which truncate
 * rather than fail: members' values share one bounded buffer, and a value
 * that does not fit is null. */
#define SX_DETAIL_MAX 10
struct sx_detail {
	char text[600];
	unsigned n;
	uint32_t used; /* bytes of json[] taken */
	struct {
		char name[24];
		uint32_t off, len; /* the member's value as JSON text in json[] */
	} members[SX_DETAIL_MAX];
	char json[4096];
};
/* Appends to the text phrase, printf-style ("; " between calls). */
void sx_detail_text(struct sx_detail *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Members: a string (NULL: null), an integer, an array of strings, a
 * JSON value the caller built (json: len bytes of valid JSON). */
void sx_detail_str(struct sx_detail *d, const char *name, const char *value);
void sx_detail_int(struct sx_detail *d, const char *name, int64_t value);
void sx_detail_strs(struct sx_detail *d, const char *name, const sx_str *values, uint32_t n);
void sx_detail_json(struct sx_detail *d, const char *name, const char *json, size_t len);
/* "key=value:Effect" as kubectl prints a taint ("key:Effect" without a value). */
const char *sx_taint_string(const struct sx_taint *t, char *buf, size_t len);
/* "key In [a, b]", "key Exists", "key=value" (SX_OP_EQUALS): a requirement
 * as a reader would write it. */
const char *sx_requirement_string(const struct sx_requirement *r, char *buf, size_t len);

#endif /* SCHEDEXT_PLUGIN_H */
