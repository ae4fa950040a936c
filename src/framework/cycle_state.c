/* The cycle state every plugin's slot lives in (new, slot, clone, free)
 * and how many feasible nodes a cycle looks for (upstream
 * schedule_one.go numFeasibleNodesToFind). Split from framework.c, which runs the
 * cycle itself. */
#include <stdlib.h>
#include <string.h>

#include "schedext/framework.h"
#include "schedext/registry.h"

#define MIN_FEASIBLE_NODES_TO_FIND    100
#define MIN_FEASIBLE_NODES_PERCENTAGE 5

uint32_t sx_num_feasible_nodes_to_find(int percentage, uint32_t n)
{
	if (n < MIN_FEASIBLE_NODES_TO_FIND)
		return n;
	int64_t p = percentage;
	if (p <= 0) {
		p = 50 - (int64_t)n / 125;
		if (p < MIN_FEASIBLE_NODES_PERCENTAGE)
			p = MIN_FEASIBLE_NODES_PERCENTAGE;
	}
	if (p >= 100)
		return n;
	uint64_t k = (uint64_t)n * (uint64_t)p / 100;
	return k < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : (uint32_t)k;
}

/* ---------- cycle state ---------- */

struct sx_cycle_state *sx_cycle_state_new(const struct sx_snapshot *snap)
{
	struct sx_cycle_state *cs = calloc(1, sizeof(*cs));
	if (cs)
		cs->snap = snap;
	return cs;
}

void *sx_cycle_state_slot(struct sx_cycle_state *cs, unsigned slot, size_t size)
{
	if (!cs->slots[slot])
		cs->slots[slot] = sx_calloc(1, size);
	return cs->slots[slot];
}

struct sx_cycle_state *sx_cycle_state_clone(const struct sx_profile *prof,
					    const struct sx_cycle_state *cs)
{
	struct sx_cycle_state *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *cs;
	/* No slot of c may alias cs's: a failed clone frees c's slots. */
	memset(c->slots, 0, sizeof(c->slots));
	for (unsigned i = 0; i < sx_plugin_count; i++) {
		if (!cs->slots[i])
			continue;
		const struct sx_plugin *p = sx_plugins[i];
		c->slots[i] = p->state_clone ? p->state_clone(cs->slots[i]) : NULL;
		if (!c->slots[i] && p->state_clone) {
			sx_cycle_state_free(prof, c);
			return NULL;
		}
	}
	return c;
}

void sx_cycle_state_free(const struct sx_profile *prof, struct sx_cycle_state *cs)
{
	(void)prof;
	if (!cs)
		return;
	for (unsigned i = 0; i < sx_plugin_count; i++)
		if (cs->slots[i] && sx_plugins[i]->state_free)
			sx_plugins[i]->state_free(cs->slots[i]);
	free(cs);
}

/* The binding cycle's hooks (schedule_one.go bindingCycle, and
 * Unreserve on its failure path). */
static bool in_binding_cycle(const struct sx_plugin *p)
{
	return p->unreserve || p->permit || p->pre_bind || p->bind || p->post_bind;
}

bool sx_cycle_state_trim_for_binding(struct sx_cycle_state *cs)
{
	bool kept = false;

	for (unsigned i = 0; i < sx_plugin_count; i++) {
		const struct sx_plugin *p = sx_plugins[i];

		if (!cs->slots[i])
			continue;
		if (in_binding_cycle(p)) {
			kept = true;
			continue;
		}
		if (p->state_free)
			p->state_free(cs->slots[i]);
		cs->slots[i] = NULL;
	}
	if (!kept)
		cs->snap = NULL;
	return kept;
}
