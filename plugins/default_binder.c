/* DefaultBinder (Bind): binds through the binder the front end put in the
 * cycle state (binder.h: an API server Binding POST, or cache-only);
 * upstream defaultbinder/default_binder.go. Any failure is an Error status carrying the
 * binder's message. */
#include "schedext/binder.h"
#include "schedext/plugin.h"

static struct sx_status *bind_default_binder(void *self, struct sx_cycle_state *cs,
					     const struct sx_pod *pod, sx_str node)
{
	struct sx_status *st = sx_binder_post_pod(cs ? cs->binder : NULL, pod, node);

	if (st && st->code == SX_SUCCESS) {
		sx_status_free(st);
		return NULL;
	}
	/* A binder may only succeed or fail; never let a stray code (Skip
	 * would mean "next binder") leak out of the default one. */
	if (st && st != sx_status_oom())
		st->code = SX_ERROR;
	return st;
}

const struct sx_plugin sx_plugin_default_binder = {
	.name = "DefaultBinder",
	.bind = bind_default_binder,
};
