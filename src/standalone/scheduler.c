/* The standalone scheduling loop (upstream pkg/scheduler/schedule_one.go scheduleOne):
 * one scheduling cycle at a time on the loop thread; binding cycles on a
 * pool of bind workers; events through a bounded, rate-limited sender; leadership
 * gating every write. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedext/batch.h"
#include "schedext/cache.h"
#include "schedext/extender_client.h"
#include "schedext/framework.h"
#include "schedext/informer.h"
#include "schedext/kube.h"
#include "schedext/leader.h"
#include "schedext/metrics.h"
#include "schedext/preemption.h"
#include "schedext/queue.h"
#include "schedext/scheduler.h"
#include "schedext/handle.h"
#include "schedext/podgroup.h"
#include "schedext/hmap.h"

#include "events.h"
#include "podgroup_cycle.h"
#include "preempter.h"
#include "schedext/framework_metrics.h"
#include "sched_metrics.h"
#include "schedext/binding_cycle.h"
#include "schedext/fit_error.h"
#include "schedext/post_filter.h"
#include "schedext/binder.h"
#include "schedext/registry.h"
#include "schedext/dra_alloc.h"

#define DEFAULT_BIND_WORKERS 8
/* The pool grows past its size while every binder is busy: a PreBind may
 * wait for volumes up to bindTimeoutSeconds, and binding cycles must not
 * queue behind it (upstream runs each in its own goroutine). Bounded, so
 * a slow API server cannot make it spawn hundreds of threads (each with
 * its stack and malloc arena): binding round trips beyond that many wait
 * their turn. */
/* A binding is one API round trip: the bind workers' throughput is at most
 * MAX_BIND_WORKERS / the API server's latency (16 threads: 717 pods/s with
 * 20 ms bindings, 64: 1,818; e2e.py scale, 5,000 nodes / 10,000 pods).
 * Upstream's one goroutine per binding has no such cap. 48 more threads
 * cost ~7 MB of peak RSS now that bind jobs hold no snapshot. */
#define MAX_BIND_WORKERS 64
/* How long the event senders may go on after SIGTERM: kube-scheduler's
 * broadcaster drops its queue at exit, so a short grace only sends what
 * the client's rate allows by then; the rest is counted and logged. */
#define EVENTS_GRACE_S 2.0
/* Pods remembered as "status patch failure already logged"; past that
 * many in one outage, further pods' failures go to the verbose level. */
#define PATCH_LOG_MAX	  12288
#define SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* ---------- the scheduler ---------- */

struct bind_job {
	struct bind_job *next;
	struct sx_binding b;	/* what the binding cycle owns (binding_cycle.h) */
	double start;		/* attempt start, for e2e latency */
	uint32_t attempts;	/* the pod's scheduling attempts, this one included */
	double initial_attempt; /* when it first entered activeQ (SLI) */
};

struct sx_scheduler {
	struct sx_sched_metrics met; /* handles into o.metrics (all NULL without) */
	uint32_t cur_attempts;	     /* the popped pod's, for its bind job */
	double cur_initial_attempt;
	struct sx_scheduler_opts o;
	struct sx_queue *q;
	struct sx_kube *event_kube, *lease_kube; /* owned when created here */
	struct sx_leader *leader;
	struct sx_events *ev;
	pthread_t loop;
	atomic_bool stop;
	/* bind workers: the threads that run binding cycles */
	pthread_mutex_t bmu;
	pthread_cond_t bcond;
	struct bind_job *jobs_head, *jobs_tail;
	bool bstop;
	unsigned nworkers, max_workers;
	unsigned nidle, njobs;		   /* workers waiting for a job; jobs queued */
	unsigned nrunning;		   /* binding cycles running (scheduler_goroutines) */
	pthread_t *workers;		   /* [max_workers] */
	struct sx_binder binder;	   /* assume/bind/finish, through the profiles' handles */
	struct sx_event_recorder recorder; /* the handles' EventRecorder: emit */
	struct sx_handle_env env;	   /* what the profiles' handles get (sx_config_attach) */
	struct sx_pg_loop pg;		   /* the pod-group cycle's view of the loop */
	/* loop-thread state */
	uint32_t next_start;
	uint64_t rng;
	/* The scheduling cycle count (SchedulingQueue.SchedulingCycle: one
	 * per popped pod) and each profile's opportunistic batch (batch.h;
	 * NULL where the OpportunisticBatching gate is off), by the index of
	 * the profile in the configuration. */
	int64_t cycle;
	struct sx_batch **batch;
	double last_gauges;
	struct sx_nominated_set *cur_nom; /* the running cycle's nominations */
	struct sx_nominator nom_proxy;	  /* for DefaultPreemption: reads cur_nom */
	struct sx_preempter *preempter;	  /* evicts victims off the loop thread */
	struct sx_informers *own_inf;	  /* started on leadership (delayCacheUntilActive) */
	/* Pods whose failed status patch was logged at the default level
	 * since the last successful one: hash of uid -> 1, at most
	 * PATCH_LOG_MAX. */
	pthread_mutex_t plmu;
	struct sx_hmap patch_logged;
};

static bool leading(struct sx_scheduler *s)
{
	return !s->o.leader_elect || sx_leader_is_leader(s->leader);
}

/* ---------- events and metrics (events.c, sched_metrics.c) ---------- */

/* A former leader writes nothing, events included. */
static void emit(struct sx_scheduler *s, const struct sx_pod *pod, const char *type,
		 const char *reason, const char *action, const char *message, const char *component)
{
	if (leading(s))
		sx_events_emit(s->ev, pod, type, reason, action, message, component);
}

/* The profiles' EventRecorder (handle.h): the event sender, as emit. */
static void record_event(void *ctx, const char *component, const struct sx_pod *pod,
			 const char *type, const char *reason, const char *action,
			 const char *message)
{
	emit(ctx, pod, type, reason, action, message, component);
}

static void count_attempt(struct sx_scheduler *s, const struct sx_profile *prof, const char *result,
			  double start)
{
	sx_sched_metrics_attempt(&s->met, prof, result, start);
}

static void update_gauges(struct sx_scheduler *s)
{
	struct sx_queue_lengths l;
	double now = sx_now_s();
	uint32_t binding;

	if (!s->o.metrics || now - s->last_gauges < 1.0)
		return;
	s->last_gauges = now;
	sx_queue_lengths(s->q, &l);
	pthread_mutex_lock(&s->bmu);
	binding = s->njobs + s->nrunning;
	pthread_mutex_unlock(&s->bmu);
	sx_sched_metrics_gauges(&s->met, &l, binding, leading(s));
	sx_sched_metrics_queue(&s->met, s->q, s->o.cfg);
}

/* ---------- failures (schedule_one.go handleSchedulingFailure) ---------- */

/* Whether a failed status patch of pod is logged at the default level:
 * the first failure of each pod is; its retries while the API server
 * stays unreachable go to -v=4 (kube-scheduler's handleSchedulingFailure
 * logs each, but retries a pod after its backoff, while schedext's
 * retries of the same pods filled logs with thousands of lines). A
 * successful patch ends the outage: the next one logs each pod again. */
static bool patch_failure_is_new(struct sx_scheduler *s, const struct sx_pod *pod)
{
	uint64_t h = sx_hash_str(pod->meta.uid ? pod->meta.uid : pod->meta.name);
	bool is_new = false;

	pthread_mutex_lock(&s->plmu);
	/* full (or out of memory): the pod's failure goes to -v=4 */
	if (!sx_hmap_get(&s->patch_logged, h))
		is_new = sx_hmap_put(&s->patch_logged, h, 1) == 0;
	pthread_mutex_unlock(&s->plmu);
	return is_new;
}

static void patch_succeeded(struct sx_scheduler *s)
{
	pthread_mutex_lock(&s->plmu);
	if (sx_hmap_count(&s->patch_logged))
		sx_hmap_clear(&s->patch_logged);
	pthread_mutex_unlock(&s->plmu);
}

static void patch_status(struct sx_scheduler *s, const struct sx_pod *pod, bool rejected,
			 const char *msg, const char *nom)
{
	struct sx_error err = {0};

	if (sx_kube_patch_pod_status(
		    s->o.kube, sx_str_get(pod->meta.ns), pod->meta.name, "PodScheduled", "False",
		    rejected ? "Unschedulable" : "SchedulerError", msg, nom, &err) == 0)
		patch_succeeded(s);
	else
		sx_log(patch_failure_is_new(s, pod) ? 1 : 4, "patching status of %s/%s: %s",
		       sx_str_get(pod->meta.ns), pod->meta.name, err.msg);
}

/* Condition, event, nomination and requeue for a failed attempt. msg is the
 * FitError text or the error; nominated: SX_STR_EMPTY = leave it, unless
 * clear_nominated (binding failures clear it: CLEAR_IF_SET when the pod
 * had one, CLEAR_NOMINATED also when the binding cycle set it). */
enum { KEEP_NOMINATED, CLEAR_IF_SET, CLEAR_NOMINATED };

static void handle_failure_rej(struct sx_scheduler *s, const struct sx_profile *prof,
			       const struct sx_pod *pod, const char *msg, bool rejected,
			       sx_str nominated, int clear_nominated, double start,
			       const struct sx_rejectors *rej)
{
	struct sx_rejectors any = {rejected ? SX_REJ_ANY : 0, 0};
	const char *nom = NULL;

	if (!rej || !rejected)
		rej = &any;

	count_attempt(s, prof, rejected ? "unschedulable" : "error", start);
	if (!leading(s)) { /* a former leader writes nothing */
		sx_queue_requeue_rejectors(s->q, pod, rej);
		return;
	}
	sx_log(2, "scheduling %s/%s failed: %s", sx_str_get(pod->meta.ns), pod->meta.name, msg);
	if (nominated != SX_STR_EMPTY) {
		sx_queue_nominate(s->q, pod, nominated);
		nom = sx_str_get(nominated);
	} else if ((clear_nominated == CLEAR_IF_SET && pod->nominated_node != SX_STR_EMPTY) ||
		   clear_nominated == CLEAR_NOMINATED) {
		sx_queue_nominate(s->q, pod, SX_STR_EMPTY);
		nom = "";
	}
	sx_handle_event(prof->handle, pod, "Warning", "FailedScheduling", "Scheduling", msg);
	patch_status(s, pod, rejected, msg, nom);
	sx_queue_requeue_rejectors(s->q, pod, rej);
}

/* A failure whose rejectors are unknown (SX_REJ_ANY when rejected). */
static void handle_failure(struct sx_scheduler *s, const struct sx_profile *prof,
			   const struct sx_pod *pod, const char *msg, bool rejected,
			   sx_str nominated, bool clear_nominated, double start)
{
	handle_failure_rej(s, prof, pod, msg, rejected, nominated, clear_nominated, start, NULL);
}

/* "0/1 nodes are available: 1 <reason>." for Reserve/Permit rejections. */
static char *one_node_message(struct sx_status *st)
{
	struct sx_status *statuses[1] = {st};
	struct sx_cycle_result r = {.num_all_nodes = 1, .statuses = statuses};

	return sx_fit_error_message(&r, NULL);
}

static void fail_status(struct sx_scheduler *s, const struct sx_profile *prof,
			const struct sx_pod *pod, struct sx_status *st, bool clear_nominated,
			bool nominated_now, double start)
{
	char buf[2048];
	bool rejected = sx_status_is_rejected(st);
	char *msg = rejected ? one_node_message(st) : NULL;
	struct sx_rejectors rej = {0, 0};

	sx_rejectors_add_status(&rej, st);
	if (!msg)
		sx_status_message(st, buf, sizeof(buf));
	handle_failure_rej(s, prof, pod, msg ? msg : buf, rejected, SX_STR_EMPTY,
			   !clear_nominated ? KEEP_NOMINATED
			   : nominated_now  ? CLEAR_NOMINATED
					    : CLEAR_IF_SET,
			   start, &rej);
	free(msg);
}

/* ---------- binding cycle (binding_cycle.c sx_binding_run) ---------- */

static void free_job(struct bind_job *j)
{
	sx_binding_release(&j->b);
	free(j);
}

/* The outcome of a binding cycle (schedule_one.go: the end of
 * bindingCycle, handleBindingCycleError after Unreserve and forget). */
static void run_job(struct sx_scheduler *s, struct bind_job *j)
{
	struct sx_status *st = sx_binding_run(&j->b);
	const struct sx_profile *prof = j->b.prof;
	const struct sx_pod *pod = j->b.pod;

	if (!st) {
		count_attempt(s, prof, "scheduled", j->start);
		sx_sched_metrics_scheduled(&s->met, j->attempts, j->initial_attempt);
		sx_queue_done(s->q, pod);
		return;
	}
	/* AssignedPodDelete of the assumed pod (on its node, as upstream's
	 * assumedPod: the hints of pods waiting for room there look at its
	 * node); after a rejection it comes after the pod is requeued and
	 * skips it (upstream defers it: the pod's own failure must not count
	 * as an event that may help it). */
	const struct sx_pod *assumed = sx_pod_assumed_on(pod, j->b.node);

	if (!sx_status_is_rejected(st))
		sx_queue_assigned_pod_deleted(s->q, assumed ? assumed : pod, false);
	fail_status(s, prof, pod, st, true, j->b.nominated, j->start);
	if (sx_status_is_rejected(st))
		sx_queue_assigned_pod_deleted(s->q, assumed ? assumed : pod, true);
	sx_pod_unref(assumed);
	sx_status_free(st);
}

static void *bind_worker(void *arg)
{
	struct sx_scheduler *s = arg;

	pthread_setname_np(pthread_self(), "sx-bind"); /* per-thread CPU in bench/e2e.py */

	for (bool ran = false;; ran = true) {
		struct bind_job *j;

		pthread_mutex_lock(&s->bmu);
		if (ran)
			s->nrunning--;
		s->nidle++;
		while (!s->jobs_head && !s->bstop)
			pthread_cond_wait(&s->bcond, &s->bmu);
		s->nidle--;
		j = s->jobs_head;
		if (j) {
			s->jobs_head = j->next;
			if (!s->jobs_head)
				s->jobs_tail = NULL;
			s->njobs--;
			s->nrunning++;
		}
		pthread_mutex_unlock(&s->bmu);
		if (!j)
			break;
		run_job(s, j);
		free_job(j);
	}
	return NULL;
}

static void submit_job(struct sx_scheduler *s, struct bind_job *j)
{
	pthread_mutex_lock(&s->bmu);
	if (s->jobs_tail)
		s->jobs_tail->next = j;
	else
		s->jobs_head = j;
	s->jobs_tail = j;
	s->njobs++;
	if (s->njobs > s->nidle && s->nworkers < s->max_workers &&
	    pthread_create(&s->workers[s->nworkers], NULL, bind_worker, s) == 0)
		s->nworkers++;
	pthread_cond_signal(&s->bcond);
	pthread_mutex_unlock(&s->bmu);
}

/* ---------- scheduling cycle (schedule_one.go schedulingCycle) ---------- */

/* Assume, Reserve, Permit, then hand the binding cycle to the bind workers.
 * Takes res->state. */
static void assume_and_bind(struct sx_scheduler *s, const struct sx_profile *prof,
			    const struct sx_pod *pod, struct sx_snapshot *snap,
			    struct sx_cycle_result *res, double start)
{
	sx_str node = snap->nodes[res->selected]->name;
	struct sx_waiting_pod *waiting = NULL;
	struct bind_job *j;
	struct sx_status *st;
	char msg[600];

	if (sx_binder_assume(&s->binder, pod, node) < 0) {
		snprintf(msg, sizeof(msg), "pod %s/%s is already assumed or bound in the cache",
			 sx_str_get(pod->meta.ns), pod->meta.name);
		handle_failure(s, prof, pod, msg, false, SX_STR_EMPTY, false, start);
		return;
	}
	sx_queue_assumed(s->q, pod);
	st = sx_reserve_and_permit(prof, &s->binder, res->state, pod, node, &waiting);
	if (st) {
		fail_status(s, prof, pod, st, false, false, start);
		sx_status_free(st);
		return;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		sx_waiting_pod_free(waiting);
		sx_run_unreserve(prof, res->state, pod, node);
		sx_binder_done(&s->binder, pod->meta.ns, pod->meta.name, false);
		handle_failure(s, prof, pod, "out of memory", false, SX_STR_EMPTY, false, start);
		return;
	}
	/* The job keeps only what the binding cycle reads: the slots of
	 * plugins with binding-cycle hooks and, only when one remains, the
	 * snapshot they may read (VolumeBinding, DynamicResources with
	 * claims). Holding every cycle's snapshot made the peak RSS follow
	 * the API server's latency (one snapshot per job in flight). */
	bool keep_snap = sx_cycle_state_trim_for_binding(res->state);
	j->b = (struct sx_binding){.prof = prof,
				   .pod = sx_pod_ref(pod),
				   .node = node,
				   .cs = res->state,
				   .snap = keep_snap ? sx_snapshot_ref(snap) : NULL,
				   .waiting = waiting};
	j->start = start;
	j->attempts = s->cur_attempts;
	j->initial_attempt = s->cur_initial_attempt;
	res->state = NULL;
	submit_job(s, j);
}

/* FitError path: PostFilter (preemption), then the failure handler. The
 * message is made by sx_fit_error_post_filter, the one explain, pending
 * and what-if report. */
static void fit_error(struct sx_scheduler *s, const struct sx_profile *prof,
		      const struct sx_pod *pod, struct sx_cycle_result *res, double start)
{
	struct sx_fit_outcome fo;
	struct sx_rejectors rej = {0, 0};
	char buf[2048];
	int rc = sx_fit_error_post_filter(prof, pod, res, false, NULL, &fo);

	if (fo.status && !sx_status_is_rejected(fo.status))
		sx_log(0, "PostFilter for %s/%s: %s", sx_str_get(pod->meta.ns), pod->meta.name,
		       sx_status_message(fo.status, buf, sizeof(buf)));
	if (fo.ran)
		sx_metric_inc(s->met.preemption_attempts, NULL, 1);
	sx_rejectors_from_result(&rej, res);
	handle_failure_rej(s, prof, pod,
			   rc == 0	  ? fo.message
			   : res->message ? res->message
					  : "out of memory",
			   true, fo.nominated_node, false, start, &rej);
	sx_fit_outcome_free(&fo);
}

/* The loop's options of a full scheduling cycle (snapshot and nominator
 * are the caller's). */
static struct sx_cycle_opts cycle_opts(struct sx_scheduler *s)
{
	return (struct sx_cycle_opts){
		.mode = SX_CYCLE_FULL,
		.percentage = -1,
		.global_percentage = s->o.cfg->percentage_of_nodes_to_score,
		.next_start_index = &s->next_start,
		.rng = &s->rng,
		.pool = s->o.pool,
		.skip_pre_enqueue = true,
		.ext = s->o.extenders,
		.extenders = sx_extenders_affect_search(s->o.extenders),
	};
}

static void run_cycle(struct sx_scheduler *s, const struct sx_profile *prof,
		      const struct sx_pod *pod, double start)
{
	struct sx_snapshot *snap = sx_cache_snapshot(s->o.cache);
	struct sx_cycle_result res;
	struct sx_cycle_opts opts = cycle_opts(s);
	double t0 = sx_now_s();
	char buf[2048];
	int rc;

	memset(&res, 0, sizeof(res));
	for (unsigned i = 0; s->batch && i < s->o.cfg->nprofiles; i++)
		if (s->o.cfg->profiles[i] == prof)
			opts.batch = s->batch[i];
	opts.cycle = s->cycle;
	s->cur_nom = sx_queue_nominated(s->q);
	opts.snap = snap;
	opts.nominator = s->cur_nom ? &s->cur_nom->nom : NULL;
	rc = snap ? sx_schedule(prof, pod, &opts, &res) : SX_ENOMEM;
	sx_metric_observe(s->met.algorithm_duration, NULL, sx_now_s() - t0);
	if (rc < 0)
		handle_failure(s, prof, pod, "out of memory", false, SX_STR_EMPTY, false, start);
	else if (res.selected >= 0)
		assume_and_bind(s, prof, pod, snap, &res, start);
	else if (res.error)
		handle_failure(s, prof, pod, sx_status_message(res.error, buf, sizeof(buf)),
			       sx_status_is_rejected(res.error), SX_STR_EMPTY, false, start);
	else
		fit_error(s, prof, pod, &res, start);
	if (snap)
		sx_cycle_result_free(&res); /* filled by sx_schedule in every case */
	sx_nominated_set_free(s->cur_nom);
	s->cur_nom = NULL;
	sx_snapshot_unref(snap);
}

/* ---------- the pod-group cycle's steps (podgroup_cycle.h) ---------- */

static int pg_schedule_member(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
			      struct sx_snapshot *snap, struct sx_cycle_result *res)
{
	struct sx_scheduler *s = ctx;
	struct sx_cycle_opts opts = cycle_opts(s);

	opts.snap = snap;
	opts.nominator = s->cur_nom ? &s->cur_nom->nom : NULL;
	memset(res, 0, sizeof(*res));
	return sx_schedule(prof, pod, &opts, res);
}

static void pg_bind(struct sx_scheduler *s, const struct sx_profile *prof, const struct sx_pod *pod,
		    struct sx_snapshot *snap, struct sx_cycle_result *res, double start,
		    uint32_t attempts, double initial_attempt)
{
	s->cur_attempts = attempts;
	s->cur_initial_attempt = initial_attempt;
	assume_and_bind(s, prof, pod, snap, res, start);
}

static void pg_fail(struct sx_scheduler *s, const struct sx_profile *prof, const struct sx_pod *pod,
		    const char *msg, bool rejected, bool clear_nominated, double start,
		    const struct sx_rejectors *rej)
{
	handle_failure_rej(s, prof, pod, msg, rejected, SX_STR_EMPTY, clear_nominated, start, rej);
}

static void pg_fail_nominated(struct sx_scheduler *s, const struct sx_profile *prof,
			      const struct sx_pod *pod, const char *msg, sx_str nominated,
			      double start, const struct sx_rejectors *rej)
{
	handle_failure_rej(s, prof, pod, msg, true, nominated, false, start, rej);
}

static const struct sx_nominator *pg_nominator(struct sx_scheduler *s)
{
	return s->cur_nom ? &s->cur_nom->nom : NULL;
}

static void schedule_group(struct sx_scheduler *s, struct sx_queue_item *it)
{
	s->cur_nom = sx_queue_nominated(s->q);
	sx_pg_schedule(&s->pg, it);
	sx_nominated_set_free(s->cur_nom);
	s->cur_nom = NULL;
}

static void schedule_one(struct sx_scheduler *s, struct sx_queue_item *it)
{
	const struct sx_pod *pod = it->pod, *cur;
	double start = sx_now_s();
	sx_str node = SX_STR_EMPTY;
	bool assumed = false;
	char msg[600];

	if (pod->deleting) {
		snprintf(msg, sizeof(msg), "skip schedule deleting pod: %s/%s",
			 sx_str_get(pod->meta.ns), pod->meta.name);
		sx_handle_event(it->profile->handle, pod, "Warning", "FailedScheduling",
				"Scheduling", msg);
		sx_queue_done(s->q, pod);
		return;
	}
	cur = sx_cache_get_pod(s->o.cache, pod->meta.ns, pod->meta.name, &node, &assumed);
	if (!cur || assumed || node != SX_STR_EMPTY || cur->deleting) {
		sx_pod_unref(cur); /* gone, already bound or assumed: drop silently */
		sx_queue_done(s->q, pod);
		return;
	}
	s->cur_attempts = it->attempts;
	s->cur_initial_attempt = it->initial_attempt;
	run_cycle(s, it->profile, cur, start);
	sx_pod_unref(cur);
}

/* delayCacheUntilActive: a standby fills no cache (no LIST, no watch)
 * until it leads; then the informers start and scheduling waits for their
 * sync like at startup. A failed start is retried every second. */
static void start_cache_when_leading(struct sx_scheduler *s)
{
	struct sx_error err = {0};

	sx_log(1, "standalone scheduler: delayCacheUntilActive: the cache fills once leading");
	while (!atomic_load(&s->stop) && !leading(s))
		usleep(100000);
	while (!atomic_load(&s->stop) && !s->own_inf) {
		s->own_inf = sx_informers_start(s->o.kube, s->o.cache, &err);
		if (!s->own_inf) {
			sx_log(0, "standalone scheduler: cannot start informers: %s", err.msg);
			usleep(1000000);
		}
	}
	if (s->own_inf)
		sx_log(1, "standalone scheduler: leading: informers started");
}

static void *loop_thread(void *arg)
{
	struct sx_scheduler *s = arg;
	const struct sx_informers *inf = s->o.inf;
	int said = -1; /* what the last "standalone scheduler:" line said */

	pthread_setname_np(pthread_self(), "sx-loop");

	if (s->o.delay_cache_until_active) {
		start_cache_when_leading(s);
		inf = s->own_inf;
	}
	while (!atomic_load(&s->stop) && inf && !sx_informers_synced(inf))
		usleep(50000);
	while (!atomic_load(&s->stop)) {
		struct sx_queue_item it;
		int rc;

		update_gauges(s);
		/* Said when it changes, as the loop sees it: the lease may be
		 * held before the cache synced, or lost and won back. */
		if ((int)leading(s) != said) {
			said = leading(s);
			sx_log(1, "standalone scheduler: %s",
			       said ? "scheduling" : "not leading: waiting for the lease");
		}
		if (!said) {
			usleep(100000);
			continue;
		}
		rc = sx_queue_pop(s->q, 0.5, &it);
		if (rc == SX_EIO)
			break;
		if (rc < 0)
			continue;
		s->cycle++; /* every pop starts a cycle, skipped pods too */
		if (leading(s) && sx_pg_wants(&it))
			schedule_group(s, &it);
		else if (leading(s))
			schedule_one(s, &it);
		else
			sx_queue_return(s->q, it.pod);
		sx_pod_unref(it.pod);
	}
	return NULL;
}

/* ---------- preemption hooks ---------- */

/* DefaultPreemption reads nominations through this proxy: the running
 * cycle's set on the loop thread, none elsewhere (extender requests). */
static uint32_t proxy_pods_for_node(void *ctx, sx_str node, const struct sx_pod **out, uint32_t max)
{
	struct sx_scheduler *s = ctx;

	if (!pthread_equal(pthread_self(), s->loop) || !s->cur_nom)
		return 0;
	return s->cur_nom->nom.pods_for_node(s->cur_nom->nom.ctx, node, out, max);
}

/* The Preempted event, on the preempter's thread. */
static void on_preempted(void *ctx, const struct sx_pod *victim, const char *type, const char *uid,
			 const char *node, const char *in_memory)
{
	struct sx_scheduler *s = ctx;
	char msg[600];

	snprintf(msg, sizeof(msg), "Preempted by %s %s on node %s%s", type, uid, node,
		 in_memory ? in_memory : "");
	emit(s, victim, "Normal", "Preempted", "Preempting", msg, "schedext");
}

/* A victim whose binding cycle has not bound it yet is preempted in
 * memory, not deleted (upstream Executor.PreemptPod; the waiting pods
 * and the pods in PreBind are looked up across profiles, as upstream's
 * one waitingPods map): from 1.36 a pod waiting at Permit ends its
 * binding cycle with an Error (back to the queue with backoff) and one in
 * PreBind has it cancelled; before, a waiting pod is rejected
 * ("preempted") and one in PreBind deleted. */
static const char *preempt_in_memory(void *ctx, const struct sx_pod *victim,
				     const struct sx_pod *preemptor)
{
	struct sx_scheduler *s = ctx;
	const struct sx_config *cfg = s->o.cfg;
	const struct sx_profile *pp = sx_config_profile(cfg, sx_str_get(preemptor->scheduler_name));
	bool v136 = sx_release(pp ? &pp->features : &cfg->features) >= 36;

	for (unsigned i = 0; i < cfg->nprofiles; i++) {
		struct sx_handle *h = cfg->profiles[i]->handle;

		if (v136 && sx_handle_preempt_waiting(h, "DefaultPreemption", victim->meta.uid,
						      "preempted"))
			return " (in kube-scheduler memory).";
		if (!v136 &&
		    sx_handle_reject_waiting(h, "DefaultPreemption", victim->meta.uid, "preempted"))
			return "";
		if (v136 && sx_handle_cancel_pre_bind(h, victim->meta.uid,
						      "preempted by DefaultPreemption"))
			return " (in kube-scheduler memory).";
	}
	return NULL;
}

/* Hands the preemption to the preempter (asynchronous preemption, 1.34's
 * default; preemption.go prepareCandidateAsync): the preemptor is gated by
 * DefaultPreemption's PreEnqueue until its victims are going. */
/* The handle's PodsToActivate (Coscheduling's ActivateSiblings). */
static void activate_pod(void *ctx, sx_str ns, const char *name)
{
	struct sx_scheduler *s = ctx;

	sx_queue_activate_name(s->q, ns, name);
}

static struct sx_status *apply_preemption(void *ctx, struct sx_preemption_eval *ev,
					  const struct sx_pod *preemptor,
					  const struct sx_preempt_result *r)
{
	struct sx_scheduler *s = ctx;

	if (!leading(s))
		return sx_status_new(SX_ERROR, "not the leader");
	if (sx_preempter_submit(s->preempter, ev, preemptor, r) < 0)
		return sx_status_new(SX_ERROR, "out of memory");
	sx_metric_observe(s->met.preemption_victims, NULL, r->victims.n);
	return NULL;
}

/* The same for a pod group (Executor.actuatePodGroupPreemption), with the
 * workload preemption metrics of upstream metrics.go. */
static struct sx_status *apply_group_preemption(void *ctx, struct sx_preemption_eval *ev,
						const struct sx_pod_group *pg,
						const struct sx_pod *const *members, uint32_t n,
						const struct sx_pg_preempt_result *r)
{
	struct sx_scheduler *s = ctx;

	if (!leading(s))
		return sx_status_new(SX_ERROR, "not the leader");
	if (sx_preempter_submit_group(s->preempter, ev, pg, members, n, r) < 0)
		return sx_status_new(SX_ERROR, "out of memory");
	sx_metric_observe(s->met.preemption_victims, NULL, r->nvictims);
	sx_metric_observe(s->met.wl_preemption_victims, NULL, r->nvictims);
	sx_metric_observe(s->met.wl_disruptions, "preemptor=\"PodGroup\"", r->ngroup_units);
	return NULL;
}

/* ---------- cache listener ---------- */

static void on_pod(void *ctx, const struct sx_pod *old_pod, const struct sx_pod *new_pod)
{
	struct sx_scheduler *s = ctx;
	const struct sx_pod *p = new_pod ? new_pod : old_pod;
	uint64_t t0 = sx_fw_metrics_now();

	/* Plugins tracking pods (GangScheduling's pod groups) first, so the
	 * PreEnqueue the queue runs next sees this pod. */
	sx_config_object_event(s->o.cfg, SX_KIND_POD, old_pod, new_pod);
	if (new_pod)
		sx_queue_pod_update(s->q, old_pod, new_pod);
	else if (old_pod)
		sx_queue_pod_delete(s->q, old_pod);
	if (p)
		sx_sched_metrics_event(
			&s->met, p->node_name != SX_STR_EMPTY ? "AssignedPod" : "UnscheduledPod",
			old_pod, new_pod, sx_fw_metrics_now() - t0);
}

static void on_node(void *ctx, const struct sx_node *old_node, const struct sx_node *new_node)
{
	struct sx_scheduler *s = ctx;
	uint64_t t0 = sx_fw_metrics_now();

	sx_queue_node_event(s->q, old_node, new_node);
	sx_sched_metrics_event(&s->met, "Node", old_node, new_node, sx_fw_metrics_now() - t0);
}

/* The event resource of a kind: its EVENT column in kinds.def (upstream
 * fwk.EventResource; pkg/scheduler/eventhandlers.go, addAllEventHandlers,
 * registers a handler per resource some plugin asks for); SX_RES_NONE for
 * kinds no plugin registers for (Service, Namespace, ...). Pods and
 * nodes take on_pod and on_node instead. */
static enum sx_event_resource event_resource(enum sx_kind kind)
{
	switch (kind) {
#define EVENT(RES) SX_RES_##RES
#define NO_EVENT   SX_RES_NONE
#define SX_KIND(ID, KIND, GROUP, VERSION, RESOURCE, SCOPE, TYPE, REF, DECODE, CACHE, KEY,          \
		EVENT_COL, ...)                                                                    \
	case SX_KIND_##ID:                                                                         \
		return EVENT_COL;
#include "schedext/kinds.def"
#undef EVENT
#undef NO_EVENT
	case SX_KIND_UNKNOWN:
	case SX_KIND_COUNT:
		break;
	}
	return SX_RES_NONE;
}

/* Do DeviceTaintRules taint devices (DRADeviceTaints and
 * DRADeviceTaintRules on in the configuration's release; upstream's
 * tracker watches the rules only then)? */
static bool taint_rules_on(const struct sx_config *cfg)
{
	return sx_feature_enabled(&cfg->features, SX_FEATURE_DRA_DEVICE_TAINTS) &&
	       sx_feature_enabled(&cfg->features, SX_FEATURE_DRA_DEVICE_TAINT_RULES);
}

/* Another kind changed (storage, DRA): the profiles' handles hear of it
 * (VolumeBinding's waiting PreBinds, DynamicResources' claims), then a
 * cluster event for the queue's hints, objects as struct sx_object
 * (plugin.h); kinds no plugin registers for (Service, Namespace, ...)
 * move nothing. */
static void on_object(void *ctx, enum sx_kind kind, const void *old_obj, const void *new_obj)
{
	struct sx_scheduler *s = ctx;
	enum sx_event_resource res = event_resource(kind);
	struct sx_object o = {kind, (void *)old_obj}, n = {kind, (void *)new_obj};
	uint32_t action = !old_obj ? SX_ACT_ADD : !new_obj ? SX_ACT_DELETE : SX_ACT_UPDATE;

	sx_config_object_event(s->o.cfg, kind, old_obj, new_obj);
	if (kind == SX_KIND_DEVICE_TAINT_RULE && taint_rules_on(s->o.cfg)) {
		/* upstream's ResourceSlice tracker (dynamic-resource-allocation
		 * resourceslice/tracker) folds the rules into the slices and
		 * reports the slices whose taints changed as updated: one
		 * ResourceSlice update carries it here (the objects are the
		 * rules, o.kind says so; no hint reads them). */
		res = SX_RES_RESOURCE_SLICE;
		action = SX_ACT_UPDATE;
	}
	if (res == SX_RES_NONE)
		return;
	sx_queue_cluster_event(s->q, res, action, old_obj ? &o : NULL, new_obj ? &n : NULL);
}

static void visit_claim(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct sx_scheduler *s = ctx;

	sx_config_object_event(s->o.cfg, SX_KIND_RESOURCE_CLAIM, NULL, obj->obj);
}

/* Objects the informers listed before the listener was installed, for
 * the plugins that track them (the gang plugins' pod groups, both kinds:
 * their member trackers hear of them as added). */
static void visit_object(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct sx_scheduler *s = ctx;

	sx_config_object_event(s->o.cfg, obj->kind, NULL, obj->obj);
}

static void visit_pod(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct sx_scheduler *s = ctx;

	sx_config_object_event(s->o.cfg, SX_KIND_POD, NULL, obj->obj);
	if (!assumed && node == SX_STR_EMPTY)
		sx_queue_pod_update(s->q, NULL, obj->obj);
}

/* ---------- start / stop ---------- */

static void lease_namespace(const char *given, char *out, size_t len)
{
	FILE *f;

	if (given && *given) {
		snprintf(out, len, "%s", given);
		return;
	}
	snprintf(out, len, "kube-system");
	f = fopen(SA_NAMESPACE_FILE, "r");
	if (f) {
		char buf[254] = "";

		if (fgets(buf, sizeof(buf), f) && buf[0]) {
			buf[strcspn(buf, "\r\n \t")] = '\0';
			if (buf[0])
				snprintf(out, len, "%s", buf);
		}
		fclose(f);
	}
}

/* Separate clients for events and leases (own rate limiters). */
static int make_clients(struct sx_scheduler *s, struct sx_error *err)
{
	struct sx_kube_opts ko;

	if (!s->o.kube_opts) {
		s->event_kube = s->lease_kube = NULL;
		return 0;
	}
	/* As kube-scheduler's createClients: the event client has the default
	 * User-Agent, leader election's gets "/leader-election". */
	ko = *s->o.kube_opts;
	ko.user_agent = NULL;
	ko.user_agent_role = NULL;
	s->event_kube = sx_kube_new(&ko, err);
	if (!s->event_kube)
		return err->code ? err->code : SX_EINVAL;
	if (s->o.leader_elect) {
		ko.user_agent_role = "leader-election";
		s->lease_kube = sx_kube_new(&ko, err);
		if (!s->lease_kube)
			return err->code ? err->code : SX_EINVAL;
	}
	return 0;
}

static int start_leader(struct sx_scheduler *s, struct sx_error *err)
{
	char ns[254];
	struct sx_leader_opts lo = {
		.kube = s->lease_kube ? s->lease_kube : s->o.kube,
		.name = s->o.lease_name,
		.lease_duration_s = s->o.lease_duration_s,
		.renew_deadline_s = s->o.renew_deadline_s,
		.retry_period_s = s->o.retry_period_s,
	};

	if (!s->o.leader_elect)
		return 0;
	lease_namespace(s->o.lease_namespace, ns, sizeof(ns));
	lo.ns = ns;
	s->leader = sx_leader_start(&lo, err);
	return s->leader ? 0 : (err->code ? err->code : SX_EINVAL);
}

static int start_threads(struct sx_scheduler *s, struct sx_error *err)
{
	s->nworkers = s->o.bind_workers ? s->o.bind_workers : DEFAULT_BIND_WORKERS;
	s->max_workers = s->nworkers > MAX_BIND_WORKERS ? s->nworkers : MAX_BIND_WORKERS;
	s->workers = calloc(s->max_workers, sizeof(*s->workers));
	if (!s->workers)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	for (unsigned i = 0; i < s->nworkers; i++) {
		if (pthread_create(&s->workers[i], NULL, bind_worker, s) != 0) {
			s->nworkers = i;
			return sx_error_set(err, SX_ENOMEM, "cannot start bind workers");
		}
	}
	s->ev = sx_events_start(
		&(struct sx_events_opts){.kube = s->event_kube ? s->event_kube : s->o.kube,
					 .metrics = s->o.metrics},
		err);
	if (!s->ev)
		return err->code;
	if (pthread_create(&s->loop, NULL, loop_thread, s) != 0) {
		sx_events_stop(s->ev, 0);
		s->ev = NULL;
		return sx_error_set(err, SX_ENOMEM, "cannot start the scheduling thread");
	}
	return 1; /* everything running */
}

static void reject_at_shutdown(void *ctx, struct sx_waiting_pod *wp, const struct sx_pod *pod)
{
	sx_waiting_pod_reject(wp, NULL, "scheduler is shutting down");
}

/* Shutdown, once the loop is joined (every waiting pod exists by then: the
 * loop runs Permit): a binding waiting at Permit would hold stop_workers
 * up to its timeout (a Coscheduling gang waits a minute by default), where
 * kube-scheduler's process just exits. The waiting pods are rejected, so
 * their bindings run Unreserve and bind nothing. */
static void reject_waiting(struct sx_scheduler *s)
{
	for (unsigned i = 0; i < s->o.cfg->nprofiles; i++)
		sx_handle_iterate_waiting(s->o.cfg->profiles[i]->handle, reject_at_shutdown, NULL);
}

static void stop_workers(struct sx_scheduler *s)
{
	pthread_mutex_lock(&s->bmu);
	s->bstop = true;
	pthread_cond_broadcast(&s->bcond);
	pthread_mutex_unlock(&s->bmu);
	for (unsigned i = 0; i < s->nworkers; i++) /* no job submitted any more */
		pthread_join(s->workers[i], NULL);
	free(s->workers);
	s->workers = NULL;
	s->nworkers = 0;
}

/* Shutdown's first step: the profiles lose the live cache and the
 * preemption applier (waiting volume PreBinds give up, no preemption
 * starts) but keep the API client and the binder, so the bindings in
 * flight still write their claims and Bindings. */
static void detach_cache(struct sx_scheduler *s)
{
	struct sx_handle_env env = s->env;

	env.cache = NULL;
	env.apply = NULL;
	env.apply_group = NULL;
	env.apply_ctx = NULL;
	sx_config_attach(s->o.cfg, &env);
}

static void free_scheduler(struct sx_scheduler *s)
{
	sx_preempter_stop(s->preempter);
	s->preempter = NULL;
	stop_workers(s);
	sx_leader_stop(s->leader);
	sx_kube_free(s->event_kube);
	sx_kube_free(s->lease_kube);
	sx_queue_free(s->q);
	pthread_mutex_destroy(&s->bmu);
	pthread_cond_destroy(&s->bcond);
	sx_hmap_clear(&s->patch_logged);
	pthread_mutex_destroy(&s->plmu);
	for (unsigned i = 0; s->batch && i < s->o.cfg->nprofiles; i++)
		sx_batch_free(s->batch[i]);
	free(s->batch);
	free(s);
}

/* One batch per profile whose OpportunisticBatching gate is on
 * (schedule_one.go asks the gate before GetNodeHint and
 * StoreScheduleResults); extenders turn signatures off (batch.h). */
static int make_batches(struct sx_scheduler *s)
{
	const struct sx_config *cfg = s->o.cfg;

	s->batch = calloc(cfg->nprofiles + 1, sizeof(*s->batch));
	if (!s->batch)
		return SX_ENOMEM;
	for (unsigned i = 0; i < cfg->nprofiles; i++) {
		const struct sx_profile *prof = cfg->profiles[i];

		if (!sx_feature_enabled(&prof->features, SX_FEATURE_OPPORTUNISTIC_BATCHING))
			continue;
		s->batch[i] = sx_batch_new(prof, s->o.metrics, cfg->nextenders > 0);
		if (!s->batch[i])
			return SX_ENOMEM;
	}
	return 0;
}

int sx_scheduler_start(const struct sx_scheduler_opts *opts, struct sx_scheduler **out,
		       struct sx_error *err)
{
	struct sx_scheduler *s = calloc(1, sizeof(*s));
	struct sx_cache_listener l;
	int rc;

	*out = NULL;
	if (!s)
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	s->o = *opts;
	s->rng = sx_now_ns() | 1;
	pthread_mutex_init(&s->bmu, NULL);
	pthread_cond_init(&s->bcond, NULL);
	pthread_mutex_init(&s->plmu, NULL);
	sx_hmap_init(&s->patch_logged, PATCH_LOG_MAX);
	if (!opts->cache || !opts->cfg || !opts->kube) {
		free_scheduler(s);
		return sx_error_set(err, SX_EINVAL, "--standalone needs a cluster (--kubeconfig)");
	}
	s->q = sx_queue_new(opts->cfg);
	if (s->q)
		s->preempter = sx_preempter_start(opts->kube, s->q, on_preempted, preempt_in_memory,
						  s, opts->metrics);
	rc = s->preempter ? make_clients(s, err) : sx_error_set(err, SX_ENOMEM, "out of memory");
	if (rc == 0)
		rc = start_leader(s, err);
	if (rc < 0) {
		free_scheduler(s);
		return rc;
	}
	sx_sched_metrics_define(opts->metrics, opts->cfg, &s->met);
	rc = make_batches(s);
	if (rc < 0) {
		free_scheduler(s);
		return sx_error_set(err, SX_ENOMEM, "out of memory");
	}
	/* A former leader binds nothing (sx_binder_post_pod). */
	s->binder =
		(struct sx_binder){.cache = opts->cache, .kube = opts->kube, .leader = s->leader};
	s->recorder = (struct sx_event_recorder){.record = record_event, .ctx = s};
	s->nom_proxy = (struct sx_nominator){.pods_for_node = proxy_pods_for_node, .ctx = s};
	s->pg = (struct sx_pg_loop){.s = s,
				    .q = s->q,
				    .cache = opts->cache,
				    .binder = &s->binder,
				    .kube = opts->kube,
				    .metrics = opts->metrics,
				    .met = &s->met,
				    .leading = leading,
				    .schedule = pg_schedule_member,
				    .bind = pg_bind,
				    .fail = pg_fail,
				    .fail_nominated = pg_fail_nominated,
				    .rng = &s->rng,
				    .nominator = pg_nominator};
	s->env = (struct sx_handle_env){.cache = opts->cache,
					.kube = opts->kube,
					.binder = &s->binder,
					.nominator = &s->nom_proxy,
					.extenders = opts->extenders,
					.recorder = &s->recorder,
					.metrics = opts->metrics,
					.pool = opts->pool,
					.apply = apply_preemption,
					.apply_group = apply_group_preemption,
					.apply_ctx = s,
					.activate = activate_pod,
					.activate_ctx = s,
					.seed = sx_now_ns()};
	l = (struct sx_cache_listener){on_pod, on_node, s, on_object};
	/* Before the listener (claims are tracked from the first event) and
	 * before the loop (its first cycle may run at once). */
	sx_config_attach(opts->cfg, &s->env);
	sx_cache_set_listener(opts->cache, &l);
	sx_cache_visit(opts->cache, SX_KIND_RESOURCE_CLAIM, visit_claim, s);
	/* the classes NodeResourcesFit's hints read (the claims tracker) */
	sx_cache_visit(opts->cache, SX_KIND_DEVICE_CLASS, visit_object, s);
	/* before their pods */
	sx_cache_visit(opts->cache, SX_KIND_POD_GROUP, visit_object, s);
	sx_cache_visit(opts->cache, SX_KIND_COSCHED_POD_GROUP, visit_object, s);
	sx_cache_visit(opts->cache, SX_KIND_POD, visit_pod, s);
	rc = start_threads(s, err);
	if (rc < 0) {
		sx_cache_set_listener(opts->cache, NULL);
		sx_config_attach(opts->cfg, NULL);
		free_scheduler(s);
		return rc;
	}
	*out = s;
	return 0;
}

void sx_scheduler_stop(struct sx_scheduler *s)
{
	if (!s)
		return;
	atomic_store(&s->stop, true);
	sx_queue_close(s->q);
	pthread_join(s->loop, NULL);
	sx_informers_stop(s->own_inf); /* no cache event reaches the listener after this */
	s->own_inf = NULL;
	sx_preempter_stop(s->preempter); /* its events go out before events_stop */
	s->preempter = NULL;
	detach_cache(s); /* waiting volume PreBinds give up */
	reject_waiting(s);
	stop_workers(s); /* in-flight bindings finish first */
	sx_cache_set_listener(s->o.cache, NULL);
	sx_config_attach(s->o.cfg, NULL);
	sx_events_stop(s->ev, EVENTS_GRACE_S);
	free_scheduler(s);
}
