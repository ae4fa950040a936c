/* Helpers shared by several plugins (upstream pkg/scheduler/framework/
 * plugins/helper). Stateless and thread-safe. */
#include <stdbool.h>
#include <stdint.h>

#include <stdlib.h>

#include "schedext/plugin.h"
#include "state_pair.h"

/* Scales scores to [0, max_priority] relative to the highest one (integer
 * division, as upstream); with reverse, the highest raw score gets 0. When
 * every score is 0 (or negative) nothing is scaled: reverse makes them all
 * max_priority, otherwise they are left as they are. */
void sx_default_normalize_score(int64_t max_priority, bool reverse, struct sx_node_score *scores,
				uint32_t n)
{
	int64_t max_count = 0;

	for (uint32_t i = 0; i < n; i++)
		if (scores[i].score > max_count)
			max_count = scores[i].score;
	if (max_count == 0) {
		if (reverse)
			for (uint32_t i = 0; i < n; i++)
				scores[i].score = max_priority;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t s = max_priority * scores[i].score / max_count;
		scores[i].score = reverse ? max_priority - s : s;
	}
}

void sx_state_pair_free(const struct sx_state_pair_ops *ops, struct sx_state_pair *st)
{
	if (!st)
		return;
	if (st->f)
		ops->free_f(st->f);
	if (st->s)
		ops->free_s(st->s);
	free(st);
}

void *sx_state_pair_clone(const struct sx_state_pair_ops *ops, const struct sx_state_pair *st)
{
	struct sx_state_pair *c = sx_calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if ((st->f && !(c->f = ops->clone_f(st->f))) || (st->s && !(c->s = ops->clone_s(st->s)))) {
		sx_state_pair_free(ops, c);
		return NULL;
	}
	return c;
}

struct sx_state_pair *sx_state_pair_slot(struct sx_cycle_state *cs, unsigned slot)
{
	return sx_cycle_state_slot(cs, slot, sizeof(struct sx_state_pair));
}
