/* The preemption engine (upstream
 * pkg/scheduler/framework/preemption and plugins/defaultpreemption), shared
 * by the DefaultPreemption PostFilter plugin (standalone scheduler) and the
 * extender `preempt` verb.
 *
 * Everything here is a dry run on private copies: NodeInfos are cloned,
 * cycle states are cloned, the snapshot is never modified. Deleting the
 * victims is the caller's business (sx_preempt_apply_fn, in the profile's
 * handle environment, handle.h), so this module does not depend on the
 * kube client.
 *
 * Threads: every function may be called from any thread; concurrent calls
 * need distinct cycle states (the input state is only read and cloned).
 */
#ifndef SCHEDEXT_PREEMPTION_H
#define SCHEDEXT_PREEMPTION_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/framework.h"
#include "schedext/handle.h"

struct cJSON;
struct sx_extenders;

/* ---------- victims of one node ---------- */

/* The pods to evict on one node, most important first (higher priority,
 * then earlier start), and how many of them violate a PodDisruptionBudget.
 * `pods` holds references (sx_pod_ref); sx_victims_free drops them. */
struct sx_victims {
	uint32_t n;
	const struct sx_pod **pods;
	uint32_t num_pdb_violations;
};
void sx_victims_free(struct sx_victims *v);

/* Whether evicting pods[0..n), in that order, violates a
 * PodDisruptionBudget of snap (filterPodsWithPDBViolation: each matching
 * budget's disruptionsAllowed is decremented per pod; a pod that drives one
 * below zero violates it). violating[i] is set per pod. 0 or SX_ENOMEM. */
int sx_preempt_mark_pdb_violations(const struct sx_snapshot *snap, const struct sx_pod *const *pods,
				   uint32_t n, bool *violating);

/* util.MoreImportantPod: higher priority, or equal priority and earlier
 * status.startTime (an unset start time counts as "now", i.e. latest). */
bool sx_pod_more_important(const struct sx_pod *a, const struct sx_pod *b);

/* SelectVictimsOnNode (defaultpreemption/default_preemption.go) for `pod` on node `ni`:
 * removes the potential victims from a copy of ni (and runs the PreFilter
 * RemovePod extensions on a clone of cs), checks the pod fits with the
 * nominated pods (two-pass filter), then reprieves victims — PDB-violating
 * ones first, then the others, each group most important first — keeping
 * every pod that can be added back.
 *
 * potential_victims: NULL = every preemption unit on the node with a
 * priority strictly lower than the pod's (DefaultPreemption; upstream's
 * DomainVictims, src/framework/victim_units.h): a unit is one pod, or, with
 * GenericWorkload from 1.37, every scheduled pod of a PodGroup whose disruptionMode
 * is All, on any node, with the group's priority (a pod of a PodGroup
 * always counts with its group's priority). Only the node's own copy
 * changes; the group's pods elsewhere go through the PreFilter
 * RemovePod/AddPod extensions with their node as the snapshot has it. A
 * unit is reprieved or evicted whole, units ordered as MoreImportantVictim
 * (priority, pod groups before lone pods, larger groups first, then start
 * time). Otherwise exactly these pods (the extender verb: kube-scheduler's
 * proposal; pods not on the node are ignored), one unit each. snap gives
 * the PodDisruptionBudgets (snap->pdbs) and the PodGroups; nom may be
 * NULL. out->pods may then hold pods of other nodes: evicting the
 * candidate evicts them all.
 *
 * Returns NULL on success with *out filled (out->n may be 0 only when the
 * caller passed potential victims that are all reprieved); otherwise the
 * failure and *out empty:
 *   UnschedulableAndUnresolvable "No preemption victims found for incoming pod"
 *     when there is nothing to remove,
 *   the filter status when the pod does not fit even without the victims,
 *   Error when an AddPod/RemovePod extension fails or memory runs out.
 * The caller frees the status and sx_victims_free(out). */
struct sx_status *
sx_preempt_select_victims_on_node(const struct sx_profile *prof, const struct sx_cycle_state *cs,
				  const struct sx_pod *pod, const struct sx_node_info *ni,
				  const struct sx_snapshot *snap,
				  const struct sx_pod *const *potential_victims, uint32_t n,
				  const struct sx_nominator *nom, struct sx_victims *out);

/* ---------- DefaultPreemptionArgs ---------- */

struct sx_preempt_args {
	int32_t min_candidate_nodes_percentage; /* default 10 */
	int32_t min_candidate_nodes_absolute;	/* default 100 */
};
#define SX_PREEMPT_ARGS_DEFAULT ((struct sx_preempt_args){10, 100})

/* Parses and validates DefaultPreemptionArgs (NULL json = defaults) as
 * upstream ValidateDefaultPreemptionArgs. Returns 0 or SX_EINVAL with err
 * set, e.g. "minCandidateNodesPercentage: Invalid value: 101: not in valid
 * range [0, 100]". */
int sx_preempt_args_parse(const struct cJSON *json, struct sx_preempt_args *out,
			  struct sx_error *err);

/* calculateNumCandidates: max(n * percentage / 100, absolute), at most n. */
uint32_t sx_preempt_num_candidates(const struct sx_preempt_args *args, uint32_t n);

/* ---------- eligibility ---------- */

/* PodEligibleToPreemptOthers. nominated_code is the code of the status of
 * the pod's nominated node in this attempt (SX_UNSCHEDULABLE_AND_UNRESOLVABLE
 * when the node has no status). Returns true, or false with *reason set to
 * upstream's text ("not eligible due to preemptionPolicy=Never." or "not
 * eligible due to a terminating pod on the nominated node.").
 * A pod "terminating because of preemption" has a deletionTimestamp and,
 * as its first DisruptionTarget condition, True/PreemptionByScheduler.
 * groups (GenericWorkload): a pod of a PodGroup counts with the group's
 * priority (NewPodVictim). */
bool sx_preempt_pod_eligible(const struct sx_pod *pod, const struct sx_snapshot *snap,
			     enum sx_code nominated_code, bool groups, const char **reason);

/* ---------- candidates ---------- */

struct sx_preempt_candidate {
	sx_str node;
	struct sx_victims victims;
};
void sx_preempt_candidates_free(struct sx_preempt_candidate *c, uint32_t n);

/* DryRunPreemption over potential[] (snapshot indices), in the order
 * potential[(offset + i) % npotential], sequentially; stops once at least
 * one candidate without PDB violations exists and the candidates number at
 * least num_candidates. *cands (caller frees with
 * sx_preempt_candidates_free) lists the non-violating candidates, then the
 * violating ones, each in visiting order. node_status[snap index] receives
 * the failure of each node that produced no candidate (caller frees the
 * statuses; array of snap->nnodes, zeroed by the caller). If *first_error
 * is non-NULL on return it is the first Error met (caller frees).
 * Returns 0 or SX_ENOMEM. */
int sx_preempt_dry_run(const struct sx_profile *prof, const struct sx_cycle_state *cs,
		       const struct sx_pod *pod, const struct sx_snapshot *snap,
		       const uint32_t *potential, uint32_t npotential, uint32_t offset,
		       uint32_t num_candidates, const struct sx_nominator *nom,
		       struct sx_preempt_candidate **cands, uint32_t *ncands,
		       struct sx_status **node_status, struct sx_status **first_error);

/* pickOneNodeForPreemption: index of the best candidate by fewest PDB
 * violations, lowest highest-priority victim, smallest sum of (priority +
 * 2^31), fewest victims, latest earliest-start-time among the
 * highest-priority victims, then the first. -1 when n == 0. */
int sx_preempt_pick_one(const struct sx_preempt_candidate *c, uint32_t n);

/* ---------- the whole PostFilter (Evaluator.Preempt) ---------- */

enum sx_nominating_mode {
	SX_NOMINATE_NOOP,     /* leave status.nominatedNodeName as it is */
	SX_NOMINATE_OVERRIDE, /* set it to nominated_node (SX_STR_EMPTY = clear) */
};

struct sx_preempt_input {
	const struct sx_snapshot *snap;
	/* Per snapshot node: the node's status in the failed attempt; NULL =
	 * no explicit status, which counts as `absent`. */
	struct sx_status *const *statuses;
	/* Status of nodes without one; NULL = UnschedulableAndUnresolvable
	 * (upstream's default). After a PreFilter rejection pass that status. */
	const struct sx_status *absent;
	const struct sx_nominator *nominator; /* may be NULL */
	const struct sx_preempt_args *args;   /* NULL = defaults */
	int64_t offset;			      /* >= 0: fixed dry-run offset (tests) */
	uint64_t *rng;			      /* offset < 0: random state (in/out); NULL = 0 */
	struct sx_extenders *extenders; /* their preempt verbs prune candidates; NULL = none */
};

struct sx_preempt_result {
	/* PostFilter status exactly as DefaultPreemption returns it: NULL on
	 * success; otherwise Unschedulable or Error whose message starts with
	 * "preemption: " (e.g. "preemption: 0/3 nodes are available: 3 No
	 * preemption victims found for incoming pod."). */
	struct sx_status *status;
	enum sx_nominating_mode mode;
	sx_str nominated_node;
	struct sx_victims victims; /* on success: what to evict, most important first */
	/* On success: pods nominated to that node with a lower priority than
	 * the preemptor, whose nomination upstream clears (references held). */
	uint32_t nlower_nominated;
	const struct sx_pod **lower_nominated;
};
void sx_preempt_result_free(struct sx_preempt_result *r);

/* Runs eligibility, candidate search, dry run and selection for `pod`
 * whose scheduling attempt failed (cs: the attempt's cycle state after
 * PreFilter). Nothing is evicted. Always fills *out; returns 0 or
 * SX_ENOMEM. */
int sx_preempt(const struct sx_profile *prof, const struct sx_cycle_state *cs,
	       const struct sx_pod *pod, const struct sx_preempt_input *in,
	       struct sx_preempt_result *out);

/* Convenience for a failed sx_schedule() result: statuses, absent status
 * (the PreFilter rejection when there was one) and the state come from res. */
int sx_preempt_for_result(const struct sx_profile *prof, const struct sx_pod *pod,
			  const struct sx_cycle_result *res, const struct sx_nominator *nom,
			  const struct sx_preempt_args *args, uint64_t *rng,
			  struct sx_preempt_result *out);

/* ---------- the evaluator's state (one per profile, in its handle) ----------
 *
 * Upstream keeps these in the DefaultPreemption plugin's
 * preemption.Evaluator (pkg/scheduler/framework/preemption/preemption.go):
 * here the profile's handle owns them (handle.h), so the applier, which
 * only sees the handle, can release a preemptor. Any thread;
 * src/framework/preempting.c. */
struct sx_preemption_eval *sx_preemption_eval_new(void); /* NULL when out of memory */
void sx_preemption_eval_free(struct sx_preemption_eval *ev);

/* Restarts the dry-run offsets from seed (0: offset 0 always). */
void sx_preemption_eval_seed(struct sx_preemption_eval *ev, uint64_t seed);
/* A fresh random state for one PostFilter run's dry-run offset: false
 * (state untouched; use offset 0) when the seed is 0 or ev NULL. */
bool sx_preemption_next_rng(struct sx_preemption_eval *ev, uint64_t *state);

/* Asynchronous preemption (SchedulerAsyncPreemption, beta and on in
 * 1.34): the victims are evicted off the scheduling thread. The applier
 * marks the preemptor with sx_preemption_begin before it returns and
 * calls sx_preemption_end once every victim but the last is gone (before
 * deleting the last one, so that deletion's event finds the preemptor
 * released). Meanwhile DefaultPreemption's PreEnqueue gates the
 * preemptor: UnschedulableAndUnresolvable "waiting for the preemption for
 * this pod to be finished". ev NULL: begin fails (SX_EINVAL), running is
 * false. */
int sx_preemption_begin(struct sx_preemption_eval *ev, const char *preemptor_uid);
void sx_preemption_end(struct sx_preemption_eval *ev, const char *preemptor_uid);
bool sx_preemption_running(struct sx_preemption_eval *ev, const char *preemptor_uid);

/* Counted by the DefaultPreemption plugin: attempts (PostFilter runs) and
 * victims chosen by successful ones. */
void sx_preemption_count(struct sx_preemption_eval *ev, uint32_t victims);
uint64_t sx_preemption_attempts(const struct sx_preemption_eval *ev);
uint64_t sx_preemption_victims(const struct sx_preemption_eval *ev);

#endif /* SCHEDEXT_PREEMPTION_H */
