/* Opportunistic batching (feature gate OpportunisticBatching; upstream
 * pkg/scheduler/framework/runtime/batch.go OpportunisticBatch and the
 * SignPod part of runtime/framework.go): consecutive pods with the same
 * signature reuse the previous cycle's sorted feasible nodes, so a pod
 * of a Deployment or Job can skip Filter and Score over the cluster.
 *
 * 1. Signing (SignPod): every PreFilter, Filter, PreScore and Score
 *    plugin of the profile signs the pod (struct sx_plugin.sign); one
 *    plugin without the hook, or any extender configured, turns
 *    signatures off for the profile (computeBatchablePlugins); one plugin
 *    that cannot sign a pod leaves that pod without a signature.
 * 2. Storing (StoreScheduleResults), after a cycle chose a node: the
 *    other feasible nodes, sorted by score, become the batch state of the
 *    pod's signature, unless the pod took the hinted node.
 * 3. Hinting (GetNodeHint), in the next cycle, after PreFilter: the
 *    state is used only by the very next cycle, for a pod of the same
 *    signature, within 500 ms (maxBatchAge); its first node is the hint,
 *    which the cycle filters alone (as a nominated node) and, when it
 *    passes, takes without scoring. Before that the node chosen last is
 *    filtered again: 1.35 and 1.36 drop the state when the pod would
 *    still fit there (node_not_full); 1.37 scores it again and puts it
 *    back among the candidates (refreshHintCandidates, rescoreHintedNode).
 *
 * The scheduler_batch_* metrics carry upstream's names, labels and values.
 *
 * Ownership and threads: a batch belongs to one front end's scheduling
 * loop (one per profile) and is used only on that loop's thread; it
 * borrows its profile and metrics registry. Signatures live in the
 * caller's buffer. */
#ifndef SCHEDEXT_BATCH_H
#define SCHEDEXT_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/buf.h"
#include "schedext/intern.h"

struct sx_cycle_result;
struct sx_cycle_state;
struct sx_metrics;
struct sx_nominator;
struct sx_pod;
struct sx_profile;

struct sx_batch;

/* A batch for prof (its release decides 1.35/1.36 or 1.37 behaviour);
 * extenders: the configuration calls extenders (signatures off, as
 * upstream). m may be NULL (no metrics). NULL when out of memory. Logs
 * once why signatures are off, as upstream does. */
struct sx_batch *sx_batch_new(const struct sx_profile *prof, struct sx_metrics *m, bool extenders);
void sx_batch_free(struct sx_batch *b);

/* Touches p's scheduler_batch_* series at 0 in m (the results and the
 * flush reasons of p's release, the histograms' first labels), so that
 * /metrics lists them before the first cycle. */
void sx_batch_zero_series(struct sx_metrics *m, const struct sx_profile *p);

/* Whether the profile signs pods at all. */
bool sx_batch_signs(const struct sx_batch *b);

/* SignPod: the pod's signature into sig (reset first); false when the
 * pod has none (signatures off, or a plugin cannot sign it). Each
 * plugin's call is timed (plugin_execution_duration_seconds, extension
 * point Sign); with record (a sampled cycle) the whole point too. */
bool sx_batch_sign(const struct sx_batch *b, const struct sx_pod *pod, struct sx_buf *sig,
		   bool record);

/* GetNodeHint for a cycle numbered cycle (the queue's count of popped
 * pods) whose PreFilter ran into cs: the hinted node, or SX_STR_EMPTY.
 * sig NULL: the pod has no signature. */
sx_str sx_batch_hint(struct sx_batch *b, const struct sx_pod *pod, const struct sx_buf *sig,
		     struct sx_cycle_state *cs, int64_t cycle);

/* StoreScheduleResults after res chose a node (res->selected >= 0):
 * hint is what sx_batch_hint gave this cycle. rng: tie-break state
 * (NULL: the batch's own). */
void sx_batch_store(struct sx_batch *b, const struct sx_buf *sig, sx_str hint,
		    const struct sx_cycle_result *res, int64_t cycle, uint64_t *rng);

/* Pods that took their hint so far (upstream's batchedPods, for tests). */
int64_t sx_batch_batched(const struct sx_batch *b);
/* Nodes left in the state (0: none). */
uint32_t sx_batch_remaining(const struct sx_batch *b);
/* The nodes left in the state, in hint order, into out[0..max); returns
 * how many there are. Tests. */
uint32_t sx_batch_nodes(const struct sx_batch *b, sx_str *out, uint32_t max);
/* The clock (seconds) deciding maxBatchAge; NULL: sx_now_s. Tests. */
void sx_batch_set_clock(struct sx_batch *b, double (*now)(void));

#endif /* SCHEDEXT_BATCH_H */
