/* Internals of the scheduling cycle shared by framework.c (PreFilter,
 * the parallel Filter, the cycle) and score_phase.c (PreScore, Score,
 * NormalizeScore, host selection): the per-thread evaluation counts and
 * the sampled plugin timings both phases use. */
#ifndef SCHEDEXT_FRAMEWORK_INT_H
#define SCHEDEXT_FRAMEWORK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "schedext/framework.h"
#include "schedext/framework_metrics.h"

/* ---------- metrics (include/schedext/framework_metrics.h) ---------- */

/* Filter and Score calls counted on the calling thread and published once
 * per chunk: a shared counter per call would bounce between the threads. */
extern _Thread_local uint32_t sx__tl_evals[2][SX_MAX_PLUGINS];
extern _Thread_local uint64_t sx__tl_evals_used[2]; /* bit p: sx__tl_evals[.][p] > 0 */
enum { EV_FILTER, EV_SCORE };

_Static_assert(SX_MAX_PLUGINS <= 64, "sx__tl_evals_used has a bit per plugin");

static inline void count_eval(int which, unsigned plugin)
{
	sx__tl_evals[which][plugin]++;
	sx__tl_evals_used[which] |= 1ull << plugin;
}

/* Publishes this thread's counts of `which` (once per chunk). */
void sx__flush_evals(const struct sx_profile *prof, int which, enum sx_ext_point ep);

/* Start of a timed call: 0 (not timed) unless the cycle is sampled. */
static inline uint64_t plugin_clock(const struct sx_cycle_state *cs)
{
	return cs->record_plugin_metrics ? sx_fw_metrics_ticks() : 0;
}

static inline void plugin_done(uint64_t t0, int plugin, enum sx_ext_point ep,
			       const struct sx_status *st)
{
	if (t0)
		sx_fw_metrics_plugin(plugin, ep, sx_status_code(st), sx_fw_metrics_ticks() - t0);
}

/* Ends a call timed from t (0: not timed) and returns the start of the
 * next: the plugins of one node share each clock read. */
static inline uint64_t plugin_lap(uint64_t t, int plugin, enum sx_ext_point ep,
				  const struct sx_status *st)
{
	uint64_t now;

	if (!t)
		return 0;
	now = sx_fw_metrics_ticks();
	sx_fw_metrics_plugin(plugin, ep, sx_status_code(st), now - t);
	return now;
}

/* ---------- the score phase (score_phase.c) ---------- */

/* PreScore, parallel Score and NormalizeScore over res->feasible: fills
 * res->raw, normalized and totals; NULL or the failing status. */
struct sx_status *sx__score_nodes(const struct sx_profile *prof, struct sx_cycle_state *cs,
				  const struct sx_pod *pod, const struct sx_cycle_opts *opts,
				  struct sx_cycle_result *res);
/* selectHost: the snapshot index of a best total (ties by reservoir
 * sampling with rng), -1 with no feasible node. */
int sx__select_host(const struct sx_cycle_result *res, uint64_t *rng);
/* One step of that reservoir sampling: should the ties-th candidate with
 * the best total seen so far replace the current pick (probability
 * 1/ties)? rng NULL: a fixed seed. Every candidate among equal totals is
 * then picked with the same chance, as upstream's random Randomizer per
 * score (selectHost, findBestPlacement). */
bool sx__tie_pick(uint64_t *rng, uint64_t ties);

#endif /* SCHEDEXT_FRAMEWORK_INT_H */
