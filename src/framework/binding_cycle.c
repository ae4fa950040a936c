/* Reserve, Permit (with waiting pods), PreBind, Bind, PostBind, and the
 * binding cycle that runs them (upstream pkg/scheduler/schedule_one.go
 * schedulingCycle, bindingCycle, handleBindingCycleError;
 * pkg/scheduler/framework/runtime/framework.go RunPreBindPreFlights,
 * RunPreBindPlugins, WaitOnPermit). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/binder.h"
#include "schedext/binding_cycle.h"
#include "schedext/config.h"
#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/framework_metrics.h"
#include "schedext/handle.h"
#include "schedext/kube.h"
#include "schedext/leader.h"
#include "schedext/metrics.h"
#include "schedext/snapshot.h"

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

void sx_permit_timeout_message(char *buf, size_t len, uint64_t timeout_ms, const char *plugin)
{
	char dur[64];

	go_duration(dur, sizeof(dur), timeout_ms);
	snprintf(buf, len, "rejected due to timeout after waiting %s at plugin %s", dur, plugin);
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

static void finish_locked(struct sx_waiting_pod *wp, enum sx_code code, const char *plugin,
			  const char *msg)
{
	if (wp->done)
		return;
	wp->result = sx_status_set_plugin(sx_status_new(code, "%s", msg), plugin);
	wp->done = true;
	pthread_cond_broadcast(&wp->cond);
}

static void reject_locked(struct sx_waiting_pod *wp, const char *plugin, const char *msg)
{
	finish_locked(wp, SX_UNSCHEDULABLE, plugin, msg);
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
			char msg[256];
			sx_permit_timeout_message(msg, sizeof(msg), p->timeout_ms, p->name);
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

/* Ends the wait of the pod with uid in h's profile with a status of
 * code; true when it was waiting. */
static bool finish_waiting(struct sx_handle *h, enum sx_code code, const char *plugin,
			   const char *uid, const char *msg)
{
	bool found = false;

	if (!h || !uid)
		return false;
	pthread_mutex_lock(&h->waiting_mu);
	for (struct sx_waiting_pod *wp = h->waiting; wp && !found; wp = wp->next) {
		if (!wp->pod->meta.uid || strcmp(wp->pod->meta.uid, uid) != 0)
			continue;
		pthread_mutex_lock(&wp->lock);
		found = !wp->done;
		finish_locked(wp, code, plugin, msg);
		pthread_mutex_unlock(&wp->lock);
	}
	pthread_mutex_unlock(&h->waiting_mu);
	return found;
}

/* upstream waitingPod.Preempt: the waiting pod ends with an Error (not a
 * rejection), so it goes back to the queue with backoff rather than
 * among the unschedulable pods; WaitOnPermit words it as upstream's
 * "waiting on permit for pod: <msg>". */
bool sx_handle_preempt_waiting(struct sx_handle *h, const char *plugin, const char *uid,
			       const char *msg)
{
	char full[256];

	snprintf(full, sizeof(full), "waiting on permit for pod: %s", msg);
	return finish_waiting(h, SX_ERROR, plugin, uid, full);
}

bool sx_handle_reject_waiting(struct sx_handle *h, const char *plugin, const char *uid,
			      const char *msg)
{
	return finish_waiting(h, SX_UNSCHEDULABLE, plugin, uid, msg);
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

/* One PreBind call, its status as RunPreBindPlugins reports it. */
static struct sx_status *pre_bind_one(const struct sx_enabled *e, struct sx_cycle_state *cs,
				      const struct sx_pod *pod, sx_str node)
{
	struct sx_status *st = e->plugin->pre_bind(e->self, cs, pod, node);

	if (sx_status_is_success(st)) {
		sx_status_free(st);
		return NULL;
	}
	if (sx_status_is_rejected(st))
		return sx_status_set_plugin(st, e->plugin->name);
	return sx_status_as_error(st, "running PreBind plugin \"%s\": %s", e->plugin->name);
}

struct pre_bind_task {
	pthread_t thread;
	bool started;
	const struct sx_enabled *e;
	struct sx_cycle_state *cs;
	const struct sx_pod *pod;
	sx_str node;
	struct sx_status *st;
};

static void *pre_bind_thread(void *arg)
{
	struct pre_bind_task *t = arg;

	t->st = pre_bind_one(t->e, t->cs, t->pod, t->node);
	return NULL;
}

/* RunPreBindPlugins: the plugins PreBindPreFlight did not skip. Those
 * that allowed parallel start first, each on a thread of its own; the
 * others run in order on this thread until one fails; then every
 * started one is joined. The failure reported is the first in the
 * profile's order (upstream 1.36 runs the parallel plugins beside the
 * sequential chain and waits for all). */
struct sx_status *sx_run_pre_bind(const struct sx_profile *prof, struct sx_cycle_state *cs,
				  const struct sx_pod *pod, sx_str node)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_BIND];
	unsigned n = prof->n[SX_PT_PRE_BIND];
	struct pre_bind_task task[SX_MAX_PLUGINS];
	struct sx_status *st = NULL;
	unsigned nrun = 0;

	memset(task, 0, sizeof(task[0]) * n);
	for (unsigned i = 0; i < n; i++)
		nrun += !cs->skip_pre_bind[e[i].index];
	for (unsigned i = 0; i < n && nrun > 1; i++) { /* alone, one runs here */
		if (cs->skip_pre_bind[e[i].index] || !cs->parallel_pre_bind[e[i].index])
			continue;
		task[i] = (struct pre_bind_task){.e = &e[i], .cs = cs, .pod = pod, .node = node};
		task[i].started =
			pthread_create(&task[i].thread, NULL, pre_bind_thread, &task[i]) == 0;
		/* Without a thread it runs in order below. */
	}
	for (unsigned i = 0; i < n; i++) {
		if (cs->skip_pre_bind[e[i].index] || task[i].started)
			continue;
		task[i].st = pre_bind_one(&e[i], cs, pod, node);
		if (task[i].st)
			break;
	}
	for (unsigned i = 0; i < n; i++) {
		if (task[i].started)
			pthread_join(task[i].thread, NULL);
		if (!st)
			st = task[i].st;
		else
			sx_status_free(task[i].st);
	}
	return st;
}

/* RunPreBindPreFlights: Success when some PreBind plugin has work, Skip
 * when none has, an Error when one failed (a rejection is one too: it
 * is not a valid answer there). Records the skipped plugins and, from
 * 1.36, those that allow parallel. */
static struct sx_status *run_pre_bind_pre_flights(const struct sx_profile *prof,
						  struct sx_cycle_state *cs,
						  const struct sx_pod *pod, sx_str node)
{
	const struct sx_enabled *e = prof->points[SX_PT_PRE_BIND];
	bool parallel_ok = sx_release(&prof->features) >= 36, any = false;

	for (unsigned i = 0; i < prof->n[SX_PT_PRE_BIND]; i++) {
		const struct sx_plugin *p = e[i].plugin;
		bool parallel = false;
		struct sx_status *st =
			p->pre_bind_pre_flight
				? p->pre_bind_pre_flight(e[i].self, cs, pod, node, &parallel)
				: NULL;
		enum sx_code code = sx_status_code(st);

		if (code == SX_SUCCESS) {
			any = true;
			cs->parallel_pre_bind[e[i].index] = parallel_ok && parallel;
		} else if (code == SX_SKIP) {
			cs->skip_pre_bind[e[i].index] = true;
		} else if (code == SX_ERROR || st == sx_status_oom()) {
			return sx_status_as_error(st, "running PreBindPreFlight \"%s\": %s",
						  p->name);
		} else {
			sx_status_free(st);
			return sx_status_new(
				SX_ERROR,
				"PreBindPreFlight %s returned \"%s\", which is "
				"unsupported. It is supposed to return Success, Skip, or "
				"Error status",
				p->name, sx_code_name(code));
		}
		sx_status_free(st);
	}
	return any ? NULL : sx_status_new(SX_SKIP, NULL);
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

/* ---------- orchestration (schedule_one.go) ---------- */

static uint64_t point_start(void)
{
	return sx_fw_metrics_now();
}

static void point_end(const struct sx_profile *prof, enum sx_ext_point ep,
		      const struct sx_status *st, uint64_t t0)
{
	sx_fw_metrics_point(prof, ep, sx_status_code(st), sx_fw_metrics_now() - t0);
}

struct sx_status *sx_reserve_and_permit(const struct sx_profile *prof,
					const struct sx_binder *binder, struct sx_cycle_state *cs,
					const struct sx_pod *pod, sx_str node,
					struct sx_waiting_pod **waiting)
{
	uint64_t t0 = point_start();
	struct sx_status *st = sx_run_reserve(prof, cs, pod, node);

	*waiting = NULL;
	point_end(prof, SX_EP_RESERVE, st, t0);
	if (!st) {
		t0 = point_start();
		st = sx_run_permit(prof, cs, pod, node, waiting);
		point_end(prof, SX_EP_PERMIT, st, t0);
		if (st && st->code == SX_WAIT && *waiting) {
			sx_status_free(st);
			st = NULL;
		}
	}
	if (st) {
		sx_run_unreserve(prof, cs, pod, node);
		sx_binder_done(binder, pod->meta.ns, pod->meta.name, false);
		sx_waiting_pod_free(*waiting);
		*waiting = NULL;
	}
	return st;
}

/* The binding is cancellable from here until mark_prebound. */
static void enter_pre_bind(struct sx_binding *b)
{
	struct sx_handle *h = b->prof->handle;

	atomic_store(&b->pre_bind, 1);
	if (!h)
		return;
	b->handle = h;
	pthread_mutex_lock(&h->waiting_mu);
	b->next = h->pre_binding;
	if (h->pre_binding)
		h->pre_binding->pprev = &b->next;
	b->pprev = &h->pre_binding;
	h->pre_binding = b;
	pthread_mutex_unlock(&h->waiting_mu);
}

/* upstream podInPreBind.MarkPrebound: false when it was cancelled. */
static bool mark_prebound(struct sx_binding *b)
{
	int expect = 1;
	bool ok = atomic_compare_exchange_strong(&b->pre_bind, &expect, 2);

	if (b->handle) {
		pthread_mutex_lock(&b->handle->waiting_mu);
		*b->pprev = b->next;
		if (b->next)
			b->next->pprev = b->pprev;
		pthread_mutex_unlock(&b->handle->waiting_mu);
		b->handle = NULL;
	}
	return ok;
}

bool sx_handle_cancel_pre_bind(struct sx_handle *h, const char *uid, const char *msg)
{
	bool done = false, woke = false;

	if (!h || !uid)
		return false;
	pthread_mutex_lock(&h->waiting_mu);
	for (struct sx_binding *b = h->pre_binding; b && !done; b = b->next) {
		int expect = 1;

		if (!b->pod->meta.uid || strcmp(b->pod->meta.uid, uid) != 0)
			continue;
		/* The message is written before the state says cancelled. */
		if (atomic_load(&b->pre_bind) == 1)
			snprintf(b->cancel_msg, sizeof(b->cancel_msg), "%s", msg);
		done = atomic_compare_exchange_strong(&b->pre_bind, &expect, 3) || expect == 3;
		if (done && b->cs) {
			atomic_store(&b->cs->pre_bind_cancelled, true);
			woke = true;
		}
	}
	pthread_mutex_unlock(&h->waiting_mu);
	if (woke) /* a PreBind waiting for the cache looks again, and gives up */
		sx_handle_wake(h);
	return done;
}

/* NominatedNodeNameForExpectation (schedule_one.go bindingCycle): when a
 * PreBind plugin has work (PreBindPreFlight) or the pod will wait on
 * Permit, the pod's status.nominatedNodeName names the node it is about
 * to be bound to, for other components (the cluster autoscaler). A failed
 * patch does not stop the binding. */
static struct sx_status *pre_flight_and_nominate(struct sx_binding *b,
						 const struct sx_handle_env *env)
{
	const struct sx_profile *prof = b->prof;
	bool nnn =
		sx_feature_enabled(&prof->features, SX_FEATURE_NOMINATED_NODE_NAME_FOR_EXPECTATION);
	struct sx_status *st;
	struct sx_error err = {0};

	if (!nnn && sx_release(&prof->features) < 36)
		return NULL; /* every PreBind plugin runs, in order */
	st = run_pre_bind_pre_flights(prof, b->cs, b->pod, b->node);
	if (st && st->code != SX_SKIP)
		return st;
	if (nnn && (!st || b->waiting) && b->pod->nominated_node != b->node && env->kube &&
	    (!env->binder || !env->binder->leader || sx_leader_is_leader(env->binder->leader))) {
		if (sx_kube_patch_pod_status(env->kube, sx_str_get(b->pod->meta.ns),
					     b->pod->meta.name, NULL, NULL, NULL, NULL,
					     sx_str_get(b->node), &err) == 0)
			b->nominated = true;
		else
			sx_log(1,
			       "failed to update the nominated node name of %s/%s to %s in the "
			       "binding cycle: %s",
			       sx_str_get(b->pod->meta.ns), b->pod->meta.name, sx_str_get(b->node),
			       err.msg);
	}
	sx_status_free(st);
	return NULL;
}

static struct sx_status *wait_on_permit(struct sx_binding *b, const struct sx_handle_env *env)
{
	double t0 = sx_now_s();
	struct sx_status *st;

	if (!b->waiting)
		return NULL;
	st = sx_waiting_pod_wait(b->waiting);
	if (env->metrics)
		sx_metrics_observe(env->metrics, "scheduler_permit_wait_duration_seconds",
				   st ? "result=\"reject\"" : "result=\"success\"",
				   sx_now_s() - t0);
	return st;
}

static struct sx_status *pre_bind(struct sx_binding *b)
{
	uint64_t t0 = point_start();
	struct sx_status *st;

	enter_pre_bind(b);
	st = sx_run_pre_bind(b->prof, b->cs, b->pod, b->node);
	if (!mark_prebound(b)) {
		/* Preempted while in PreBind (upstream CancelPod's cause). */
		sx_status_free(st);
		st = sx_status_new(SX_ERROR, "%s", b->cancel_msg);
	}
	point_end(b->prof, SX_EP_PRE_BIND, st, t0);
	return st;
}

/* sched.bind: an interested binder extender, else the Bind plugins. */
static struct sx_status *bind(struct sx_binding *b, const struct sx_handle_env *env)
{
	struct sx_status *st = NULL;
	bool bound = false;
	uint64_t t0;

	if (env->extenders)
		st = sx_extenders_bind(env->extenders, b->pod, b->node, &bound);
	if (st || bound)
		return st;
	t0 = point_start();
	st = sx_run_bind(b->prof, b->cs, b->pod, b->node);
	point_end(b->prof, SX_EP_BIND, st, t0);
	if (st && st->code == SX_SKIP) {
		sx_status_free(st);
		st = sx_status_new(SX_ERROR, "no bind plugin bound pod \"%s\"", b->pod->meta.name);
	}
	return st;
}

struct sx_status *sx_binding_run(struct sx_binding *b)
{
	const struct sx_profile *prof = b->prof;
	const struct sx_pod *pod = b->pod;
	struct sx_handle_env env;
	struct sx_status *st;
	char msg[600];
	uint64_t t0;

	sx_handle_env(prof->handle, &env);
	st = pre_flight_and_nominate(b, &env);
	if (!st)
		st = wait_on_permit(b, &env);
	if (!st)
		st = pre_bind(b);
	if (!st)
		st = bind(b, &env);
	if (st) {
		/* handleBindingCycleError */
		sx_run_unreserve(prof, b->cs, pod, b->node);
		if (env.binder)
			sx_binder_done(env.binder, pod->meta.ns, pod->meta.name, false);
		return st;
	}
	/* finishBinding, then PostBind */
	if (env.binder)
		sx_binder_done(env.binder, pod->meta.ns, pod->meta.name, true);
	snprintf(msg, sizeof(msg), "Successfully assigned %s/%s to %s", sx_str_get(pod->meta.ns),
		 pod->meta.name, sx_str_get(b->node));
	sx_log(2, "%s", msg);
	sx_handle_event(prof->handle, pod, "Normal", "Scheduled", "Binding", msg);
	t0 = point_start();
	sx_run_post_bind(prof, b->cs, pod, b->node);
	point_end(prof, SX_EP_POST_BIND, NULL, t0);
	return NULL;
}

void sx_binding_release(struct sx_binding *b)
{
	sx_cycle_state_free(b->prof, b->cs);
	sx_snapshot_unref(b->snap);
	sx_waiting_pod_free(b->waiting);
	sx_pod_unref(b->pod);
	b->cs = NULL;
	b->snap = NULL;
	b->waiting = NULL;
	b->pod = NULL;
}
