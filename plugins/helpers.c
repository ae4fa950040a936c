/* Helpers shared by several plugins (upstream pkg/scheduler/framework/
 * plugins/helper). Stateless and thread-safe. */
#include <stdbool.h>
#include <stdint.h>

#include "schedext/plugin.h"

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
