/* The framework handle (handle.h): a profile's environment, attached by
 * the front end, and the cluster events its plugin instances listen to
 * (upstream frameworkImpl, pkg/scheduler/framework/runtime/framework.go). */
#include "schedext/handle.h"

#include <stdlib.h>
#include <string.h>

#include "schedext/common.h"
#include "schedext/config.h"
#include "schedext/dra_alloc.h"
#include "schedext/preemption.h"

struct sx_handle *sx_handle_new(const struct sx_profile *prof, struct sx_dra_claims *dra)
{
	struct sx_handle *h = sx_calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->preemption = sx_preemption_eval_new();
	if (!h->preemption) {
		free(h);
		return NULL;
	}
	h->profile = prof;
	h->dra = dra;
	pthread_mutex_init(&h->mu, NULL);
	pthread_mutex_init(&h->waiting_mu, NULL);
	return h;
}

void sx_handle_free(struct sx_handle *h)
{
	if (!h)
		return;
	sx_preemption_eval_free(h->preemption);
	pthread_mutex_destroy(&h->waiting_mu);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/* The listeners hear of the change with the lock held: registration is
 * over before any environment comes or goes, and a listener only wakes
 * its own waiters. */
void sx_handle_attach(struct sx_handle *h, const struct sx_handle_env *env)
{
	pthread_mutex_lock(&h->mu);
	if (env)
		h->env = *env;
	else
		memset(&h->env, 0, sizeof(h->env));
	sx_preemption_eval_seed(h->preemption, h->env.seed);
	for (unsigned i = 0; i < h->nlisteners; i++)
		if (h->listeners[i].env_changed)
			h->listeners[i].env_changed(h->listeners[i].self);
	pthread_mutex_unlock(&h->mu);
}

void sx_handle_env(const struct sx_handle *h, struct sx_handle_env *out)
{
	struct sx_handle *m = (struct sx_handle *)h; /* the lock only */

	if (!h) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&m->mu);
	*out = h->env;
	pthread_mutex_unlock(&m->mu);
}

int sx_handle_listen(struct sx_handle *h, const struct sx_handle_listener *l)
{
	int rc = 0;

	pthread_mutex_lock(&h->mu);
	if (h->nlisteners < SX_HANDLE_MAX_LISTENERS)
		h->listeners[h->nlisteners++] = *l;
	else
		rc = SX_ENOMEM;
	pthread_mutex_unlock(&h->mu);
	return rc;
}

void sx_handle_unlisten(struct sx_handle *h, const void *self)
{
	pthread_mutex_lock(&h->mu);
	for (unsigned i = 0; i < h->nlisteners;) {
		if (h->listeners[i].self == self)
			h->listeners[i] = h->listeners[--h->nlisteners];
		else
			i++;
	}
	pthread_mutex_unlock(&h->mu);
}

void sx_handle_object_event(struct sx_handle *h, enum sx_kind kind, const void *old_obj,
			    const void *new_obj)
{
	uint64_t bit = 1ull << kind;

	pthread_mutex_lock(&h->mu);
	for (unsigned i = 0; i < h->nlisteners; i++)
		if ((h->listeners[i].kinds & bit) && h->listeners[i].object)
			h->listeners[i].object(h->listeners[i].self, kind, old_obj, new_obj);
	pthread_mutex_unlock(&h->mu);
}

void sx_config_attach(const struct sx_config *cfg, const struct sx_handle_env *env)
{
	/* Tracking first: the claims the caller replays next must land. */
	sx_dra_track_claims(cfg->dra, env && env->cache);
	for (unsigned i = 0; i < cfg->nprofiles; i++)
		sx_handle_attach(cfg->profiles[i]->handle, env);
}

void sx_config_object_event(const struct sx_config *cfg, enum sx_kind kind, const void *old_obj,
			    const void *new_obj)
{
	if (kind == SX_KIND_RESOURCE_CLAIM)
		sx_dra_claim_event(cfg->dra, old_obj, new_obj); /* DynamicResources' PreEnqueue */
	else if (kind == SX_KIND_DEVICE_CLASS)
		sx_dra_class_event(cfg->dra, old_obj, new_obj); /* NodeResourcesFit's hints */
	for (unsigned i = 0; i < cfg->nprofiles; i++)
		sx_handle_object_event(cfg->profiles[i]->handle, kind, old_obj, new_obj);
}

struct sx_features sx_handle_features(const struct sx_handle *h)
{
	struct sx_features f;

	if (h && h->profile)
		return h->profile->features;
	sx_features_init(&f, SX_RELEASE_DEFAULT);
	return f;
}

void sx_handle_event(const struct sx_handle *h, const struct sx_pod *pod, const char *type,
		     const char *reason, const char *action, const char *message)
{
	struct sx_handle_env env;

	sx_handle_env(h, &env);
	if (env.recorder && env.recorder->record)
		env.recorder->record(env.recorder->ctx,
				     h->profile ? h->profile->scheduler_name : "", pod, type,
				     reason, action, message);
}

void sx_handle_wake(struct sx_handle *h)
{
	pthread_mutex_lock(&h->mu);
	for (unsigned i = 0; i < h->nlisteners; i++)
		if (h->listeners[i].env_changed)
			h->listeners[i].env_changed(h->listeners[i].self);
	pthread_mutex_unlock(&h->mu);
}
