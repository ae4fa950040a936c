/* The binder (binder.h): assume -> bind through the API with the UID as
 * precondition -> finish or forget. */
#include "schedext/binder.h"

#include <stdio.h>
#include <string.h>

#include "schedext/cache.h"
#include "schedext/kube.h"
#include "schedext/leader.h"
#include "schedext/model.h"

int sx_binder_assume(const struct sx_binder *b, const struct sx_pod *pod, sx_str node)
{
	return b->cache ? sx_cache_assume(b->cache, pod, node) : 0;
}

void sx_binder_done(const struct sx_binder *b, sx_str ns, const char *name, bool bound)
{
	if (!b->cache)
		return;
	if (bound)
		sx_cache_finish_binding(b->cache, ns, name);
	else
		sx_cache_forget(b->cache, ns, name);
}

struct sx_status *sx_binder_post(const struct sx_binder *b, const char *ns, const char *name,
				 const char *uid, const char *node)
{
	struct sx_error err = {0};

	if (!b->kube || sx_kube_bind(b->kube, ns, name, uid, node, &err) == 0)
		return NULL;
	return sx_status_new(SX_ERROR, "%s", err.msg[0] ? err.msg : "binding failed");
}

struct sx_status *sx_binder_post_pod(const struct sx_binder *b, const struct sx_pod *pod,
				     sx_str node)
{
	struct sx_status *st;
	char same[300];

	if (!b)
		return sx_status_new(SX_ERROR, "no binder configured");
	if (b->post)
		return b->post(b->ctx, pod, node);
	/* A former leader writes nothing. */
	if (b->leader && !sx_leader_is_leader(b->leader))
		return sx_status_new(SX_ERROR, "not the leader: binding of %s/%s abandoned",
				     sx_str_get(pod->meta.ns), pod->meta.name);
	st = sx_binder_post(b, sx_str_get(pod->meta.ns), pod->meta.name, pod->meta.uid,
			    sx_str_get(node));
	snprintf(same, sizeof(same), "is already assigned to node \"%s\"", sx_str_get(node));
	if (st && st->nreasons && strstr(st->reasons[0], same)) {
		sx_status_free(st);
		return NULL;
	}
	return st;
}

struct sx_status *sx_binder_bind(const struct sx_binder *b, const struct sx_pod *pod,
				 const char *ns, const char *name, const char *uid, sx_str node)
{
	bool assumed = pod && sx_binder_assume(b, pod, node) == 0;
	struct sx_status *st = sx_binder_post(b, ns, name, uid, sx_str_get(node));

	if (assumed)
		sx_binder_done(b, pod->meta.ns, name, st == NULL);
	return st;
}
