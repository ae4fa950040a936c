/* DefaultBinder (Bind): binds through its profile's handle, whose binder
 * POSTs the Binding to the API server (binder.h; cache-only without one),
 * as upstream's DefaultBinder binds through Handle.ClientSet
 * (defaultbinder/default_binder.go, DefaultBinder.Bind). Any failure is
 * an Error status carrying the binder's message.
 *
 * self is the handle (read-only; its environment is read under its lock
 * by sx_handle_env), or a marker when built without one. */
#include "schedext/binder.h"
#include "schedext/handle.h"
#include "schedext/plugin.h"

/* The instance of a DefaultBinder built without a handle (tests): it
 * has no binder. */
static const char no_handle;

static void *init_default_binder(const struct cJSON *args, struct sx_handle *h,
				 struct sx_error *err)
{
	(void)args;
	(void)err;
	return h ? (void *)h : (void *)&no_handle;
}

static struct sx_status *bind_default_binder(void *self, struct sx_cycle_state *cs,
					     const struct sx_pod *pod, sx_str node)
{
	struct sx_handle_env env;
	struct sx_status *st;

	(void)cs;
	sx_handle_env(self == &no_handle ? NULL : self, &env);
	st = sx_binder_post_pod(env.binder, pod, node);
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
	.init = init_default_binder,
	.bind = bind_default_binder,
};
