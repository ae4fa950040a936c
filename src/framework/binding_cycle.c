/* Reserve, Permit (with waiting pods), PreBind, Bind, PostBind
 * (upstream pkg/scheduler/schedule_one.go schedulingCycle, bindingCycle). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/framework.h"
#include "schedext/binding_cycle.h"
#include "schedext/handle.h"

#define MAX_PERMIT_TIMEOUT_MS (15ull * 60 * 1000) /* maxTimeout = 15 minutes */

typedef struct sx_status *(*node_hook_fn)(void *self, struct sx_cycle_state *cs,
					  const struct sx_pod *pod, sx_str node);

static node_hook_fn node_hook(const struct sx_plugin *p, enum sx_point pt)
{
	switch (pt) {
	case SX_PT_RESERVE:
		return p->reserve;
	case SX_PT_PRE_BIND:
		return p->pre_bind;
	case SX_PT_BIND:
		return p->bind;
	default:
		return NULL;
	}
}

/* Runs one point's hooks in order; the first failure stops (rejections keep
 * their code, others become Error "running <What> plugin ..."). Skip passes
 * to the next plugin (Bind); *all_skipped tells whether nobody acted. */
static struct sx_status *run_node_point(const struct sx_profile *prof, enum sx_point pt,
					struct sx_cycle_state *cs, const struct sx_pod *pod,
					sx_str node, const char *error_fmt, bool *all_skipped)
{
	const struct sx_enabled *e = prof->points[pt];
	*all_skipped = true;
	for (unsigned i = 0; i < prof->n[pt]; i++) {
		node_hook_fn fn = node_hook(e[i].plugin, pt);
		struct sx_status *st = fn ? fn(e[i].self, cs, pod, node) : NULL;
		if (!fn || sx_status_code(st) == SX_SKIP) {
			sx_status_free(st);
			continue;
		}
		*all_skipped = false;
		if (sx_status_is_success(st)) {
			sx_status_free(st);
			if (pt == SX_PT_BIND)
				return NULL; /* the first binder that binds is final */
			continue;
		}
		if (sx_status_is_rejected(st)) {
			return sx_status_set_plugin(st, e[i].plugin->name);
		}
		return sx_status_as_error(st, error_fmt, e[i].plugin->name);
	}
	return NULL;
}

struct sx_status *sx_run_reserve(const struct sx_profile *prof, struct sx_cycle_state *cs,
				 const struct sx_pod *pod, sx_str node)
{
	bool skipped;
	return run_node_point(prof, SX_PT_RESERVE, cs, pod, node,
			      "running Reserve plugin \"%s\": %s", &skipped);
}

void sx_run_unreserve(const struct sx_profile *prof, struct sx_cycle_state *cs,
		      const struct sx_pod *pod, sx_str node)
{
	const struct sx_enabled *e = prof->points[SX_PT_RESERVE];
	for (unsigned i = prof->n[SX_PT_RESERVE]; i-- > 0;)
		if (e[i].plugin->unreserve)
			e[i].plugin->unreserve(e[i].self, cs, pod, node);
}

/* ---------- waiting pods ---------- */

struct pending_plugin {
	const char *name;
	uint64_t deadline_ns;
	uint64_t timeout_ms;
};

struct sx_waiting_pod {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char pod_name[256];
	unsigned npending;
	struct pending_plugin pending[SX_MAX_PLUGINS];
	struct sx_status *result; /* set when rejected */
	bool done;
	/* On the profile's handle's waiting list (h->waiting_mu guards the
	 * links) from sx_run_permit to sx_waiting_pod_free. */
	struct sx_handle *handle;
	const struct sx_pod *pod; /* a reference, for the iterators */
	struct sx_waiting_pod *next, **pprev;
};

/* Go's time.Duration String() for whole milliseconds: "10s", "1m30s", "500ms". */
static void go_duration(char *buf, size_t len, uint64_t ms)
{
	if (ms < 1000) {
		snprintf(buf, len, ms ? "%llums" : "0s", (unsigned long long)ms);
		return;
	}
	uint64_t h = ms / 3600000, m = (ms / 60000) % 60, s = (ms / 1000) % 60, frac = ms % 1000;
	char sec[32];
	if (frac) {
		snprintf(sec, sizeof(sec), "%llu.%03llu", (unsigned long long)s,
			 (unsigned long long)frac);
		char *end = sec + strlen(sec);
		while (end[-1] == '0')
			*--end = 0;
	} else {
		snprintf(sec, sizeof(sec), "%llu", (unsigned long long)s);
	}
	if (h)
		snprintf(buf, len, "%lluh%llum%ss", (unsigned long long)h, (unsigned long long)m,
			 sec);
	else if (m)
		snprintf(buf, len, "%llum%ss", (unsigned long long)m, sec);
	else
		snprintf(buf, len, "%ss", sec);
}

static struct sx_waiting_pod *waiting_pod_new(const struct sx_pod *pod)
{
	struct sx_waiting_pod *wp = calloc(1, sizeof(*wp));
	if (!wp)
		return NULL;
	pthread_mutex_init(&wp->lock, NULL);
	pthread_cond_init(&wp->cond, NULL);
	snprintf(wp->pod_name, sizeof(wp->pod_name), "%s", pod->meta.name);
	return wp;
}

struct sx_status *sx_run_permit(const struct sx_profile *prof, struct sx_cycle_state *cs,
				const struct sx_pod *pod, sx_str node,
				struct sx_waiting_pod **waiting)
{
	const struct sx_enabled *e = prof->points[SX_PT_PERMIT];
	struct pending_plugin pending[SX_MAX_PLUGINS];
	unsigned npending = 0;
	*waiting = NULL;
	for (unsigned i = 0; i < prof->n[SX_PT_PERMIT]; i++) {
		uint64_t timeout_ms = 0;
		struct sx_status *st = e[i].plugin->permit(e[i].self, cs, pod, node, &timeout_ms);
		enum sx_code code = sx_status_code(st);
		if (code == SX_SUCCESS) {
			sx_status_free(st);
		} else if (sx_status_is_rejected(st)) {
			return sx_status_set_plugin(st, e[i].plugin->name);
		} else if (code == SX_WAIT) {
			if (timeout_ms > MAX_PERMIT_TIMEOUT_MS)
				timeout_ms = MAX_PERMIT_TIMEOUT_MS;
			pending[npending++] = (struct pending_plugin){
				e[i].plugin->name, sx_now_ns() + timeout_ms * 1000000ull,
				timeout_ms};
			sx_status_free(st);
		} else {
			return sx_status_as_error(st, "running Permit plugin \"%s\": %s",
						  e[i].plugin->name);
		}
	}
	if (npending == 0)
		return NULL;
	struct sx_waiting_pod *wp = waiting_pod_new(pod);
	if (!wp)
		return sx_status_oom();
	memcpy(wp->pending, pending, sizeof(pending[0]) * npending);
	wp->npending = npending;
	if (prof->handle) {
		struct sx_handle *h = prof->handle;

		wp->handle = h;
		wp->pod = sx_pod_ref(pod);
		pthread_mutex_lock(&h->waiting_mu);
		wp->next = h->waiting;
		if (h->waiting)
			h->waiting->pprev = &wp->next;
		wp->pprev = &h->waiting;
		h->waiting = wp;
		pthread_mutex_unlock(&h->waiting_mu);
	}
	*waiting = wp;
	return sx_status_new(SX_WAIT,
			     "one or more plugins asked to wait and no plugin rejected pod \"%s\"",
			     pod->meta.name);
}

static void reject_locked(struct sx_waiting_pod *wp, const char *plugin, const char *msg)
{
	if (wp->done)
		return;
	wp->result = sx_status_set_plugin(sx_status_new(SX_UNSCHEDULABLE, "%s", msg), plugin);
	wp->done = true;
	pthread_cond_broadcast(&wp->cond);
}

void sx_waiting_pod_allow(struct sx_waiting_pod *wp, const char *plugin)
{
	pthread_mutex_lock(&wp->lock);
	for (unsigned i = 0; i < wp->npending; i++) {
		if (strcmp(wp->pending[i].name, plugin) == 0) {
			wp->pending[i] = wp->pending[--wp->npending];
			break;
		}
	}
	if (wp->npending == 0 && !wp->done) {
		wp->done = true;
		pthread_cond_broadcast(&wp->cond);
	}
	pthread_mutex_unlock(&wp->lock);
}

void sx_waiting_pod_reject(struct sx_waiting_pod *wp, const char *plugin, const char *msg)
{
	pthread_mutex_lock(&wp->lock);
	reject_locked(wp, plugin, msg);
	pthread_mutex_unlock(&wp->lock);
}

/* Index of the pending plugin with the earliest deadline. */
static unsigned earliest(const struct sx_waiting_pod *wp)
{
	unsigned best = 0;
	for (unsigned i = 1; i < wp->npending; i++)
		if (wp->pending[i].deadline_ns < wp->pending[best].deadline_ns)
			best = i;
	return best;
}

struct sx_status *sx_waiting_pod_wait(struct sx_waiting_pod *wp)
{
	struct sx_status *result;
	pthread_mutex_lock(&wp->lock);
	while (!wp->done) {
		const struct pending_plugin *p = &wp->pending[earliest(wp)];
		uint64_t now = sx_now_ns();
		if (now >= p->deadline_ns) {
			char dur[64], msg[256];
			go_duration(dur, sizeof(dur), p->timeout_ms);
			snprintf(msg, sizeof(msg),
				 "rejected due to timeout after waiting %s at plugin %s", dur,
				 p->name);
			reject_locked(wp, p->name, msg);
			break;
		}
		struct timespec ts = sx_deadline_after_ns(p->deadline_ns - now);
		pthread_cond_timedwait(&wp->cond, &wp->lock, &ts);
	}
	result = wp->result;
	wp->result = NULL;
	pthread_mutex_unlock(&wp->lock);
	return result;
}

void sx_waiting_pod_free(struct sx_waiting_pod *wp)
{
	if (!wp)
		return;
	if (wp->handle) {
		pthread_mutex_lock(&wp->handle->waiting_mu);
		*wp->pprev = wp->next;
		if (wp->next)
			wp->next->pprev = wp->pprev;
		pthread_mutex_unlock(&wp->handle->waiting_mu);
		sx_pod_unref(wp->pod);
	}
	sx_status_free(wp->result);
	pthread_cond_destroy(&wp->cond);
	pthread_mutex_destroy(&wp->lock);
	free(wp);
}

void sx_handle_iterate_waiting(struct sx_handle *h, sx_waiting_pod_fn fn, void *ctx)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->waiting_mu);
	for (struct sx_waiting_pod *wp = h->waiting; wp; wp = wp->next)
		fn(ctx, wp, wp->pod);
	pthread_mutex_unlock(&h->waiting_mu);
}

/* ---------- binding ---------- */

struct sx_status *sx_run_pre_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
				  const struct sx_pod *pod, sx_str node)
{
	bool skipped;
	return run_node_point(prof, SX_PT_PRE_BIND, cs, pod, node,
			      "running PreBind plugin \"%s\": %s", &skipped);
}

struct sx_status *sx_run_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
			      const struct sx_pod *pod, sx_str node)
{
	bool skipped;
	struct sx_status *st = run_node_point(prof, SX_PT_BIND, cs, pod, node,
					      "running Bind plugin \"%s\": %s", &skipped);
	if (!st && skipped)
		return sx_status_new(SX_SKIP, NULL);
	return st;
}

void sx_run_post_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
		      const struct sx_pod *pod, sx_str node)
{
	const struct sx_enabled *e = prof->points[SX_PT_POST_BIND];
	for (unsigned i = 0; i < prof->n[SX_PT_POST_BIND]; i++)
		e[i].plugin->post_bind(e[i].self, cs, pod, node);
}
