/* The cycle state of a plugin whose PreFilter and PreScore each leave one
 * part of it (InterPodAffinity, PodTopologySpread): cloned and freed part
 * by part through the plugin's own part functions. Internal to plugins/;
 * implemented in helpers.c. Not thread-safe: a state belongs to its cycle.
 */
#ifndef SCHEDEXT_PLUGINS_STATE_PAIR_H
#define SCHEDEXT_PLUGINS_STATE_PAIR_H

struct sx_cycle_state;

/* f: what PreFilter computed, s: what PreScore computed; either may be NULL. */
struct sx_state_pair {
	void *f;
	void *s;
};

struct sx_state_pair_ops {
	void *(*clone_f)(const void *f); /* NULL on allocation failure */
	void (*free_f)(void *f);
	void *(*clone_s)(const void *s);
	void (*free_s)(void *s);
};

/* A deep copy of st (parts cloned by ops), or NULL on allocation failure. */
void *sx_state_pair_clone(const struct sx_state_pair_ops *ops, const struct sx_state_pair *st);
/* Frees both parts and st; NULL is a no-op. */
void sx_state_pair_free(const struct sx_state_pair_ops *ops, struct sx_state_pair *st);
/* The pair in the plugin's slot, zero-allocated on first use; NULL on OOM. */
struct sx_state_pair *sx_state_pair_slot(struct sx_cycle_state *cs, unsigned slot);

/* The hooks of plugin `name` over its pair, from its part functions
 * filter_state_clone/filter_state_free/score_state_clone/score_state_free
 * (in scope where used): the ops table `parts`, state_clone_<name>,
 * state_free_<name>, and slot()/slot_const() for its cycle-state slot
 * SX_SLOT_<name> (slots.h). */
#define SX_STATE_PAIR_HOOKS(name)                                                                  \
	static const struct sx_state_pair_ops parts = {                                            \
		filter_state_clone,                                                                \
		filter_state_free,                                                                 \
		score_state_clone,                                                                 \
		score_state_free,                                                                  \
	};                                                                                         \
	static void *state_clone_##name(const void *p)                                             \
	{                                                                                          \
		return sx_state_pair_clone(&parts, p);                                             \
	}                                                                                          \
	static void state_free_##name(void *p)                                                     \
	{                                                                                          \
		sx_state_pair_free(&parts, p);                                                     \
	}                                                                                          \
	static struct sx_state_pair *slot(struct sx_cycle_state *cs)                               \
	{                                                                                          \
		return sx_state_pair_slot(cs, SX_SLOT_##name);                                     \
	}                                                                                          \
	static const struct sx_state_pair *slot_const(const struct sx_cycle_state *cs)             \
	{                                                                                          \
		return cs->slots[SX_SLOT_##name];                                                  \
	}

#endif /* SCHEDEXT_PLUGINS_STATE_PAIR_H */
