/* Asynchronous preemption: a job queue and one worker thread (see
 * preempter.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "preempter.h"
#include "schedext/podgroup.h"
#include "schedext/workload.h"

#include "schedext/common.h"
#include "schedext/metrics.h"

#define REASON_PREEMPTION "PreemptionByScheduler"

struct job {
	struct job *next;
	const struct sx_pod *preemptor; /* a group's first member */
	/* A pod group's preemption: its key in ev, its UID, its members. */
	bool group;
	char key[600];
	char *group_uid;
	uint32_t nmembers;
	const struct sx_pod **members;
	struct sx_preemption_eval *ev; /* the profile's evaluator (its handle's) */
	sx_str node;
	uint32_t nvictims, nlower;
	const struct sx_pod **victims; /* then the lower nominated pods */
};

struct sx_preempter {
	struct sx_kube *kube;
	struct sx_queue *q;
	sx_preempted_fn on_preempted;
	sx_in_memory_fn in_memory;
	void *ctx;
	/* the goroutine families, resolved at start (NULL when absent) */
	struct sx_metric *goroutine_duration, *goroutine_executions;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stop;
	pthread_t thread;
};

static void job_free(struct job *j)
{
	for (uint32_t i = 0; i < j->nvictims + j->nlower; i++)
		sx_pod_unref(j->victims[i]);
	free(j->victims);
	for (uint32_t i = 0; i < j->nmembers; i++)
		sx_pod_unref(j->members[i]);
	free(j->members);
	free(j->group_uid);
	sx_pod_unref(j->preemptor);
	free(j);
}

/* The Preempted event's preemptor: the PodGroup (its UID, on node
 * "cluster": its domain is the whole cluster) or the pod and its node. */
static void notify(struct sx_preempter *p, const struct job *j, const struct sx_pod *v,
		   const char *in_memory)
{
	if (j->group)
		p->on_preempted(p->ctx, v, "PodGroup", j->group_uid ? j->group_uid : "", "cluster",
				in_memory);
	else
		p->on_preempted(p->ctx, v, "pod",
				j->preemptor->meta.uid ? j->preemptor->meta.uid : "",
				sx_str_get(j->node), in_memory);
}

/* PreemptPod: DisruptionTarget first, then the DELETE. 0 when the victim
 * is deleted (or preempted in memory), 1 when it was gone already (no
 * deletion event will follow), < 0 on failure. */
static int evict(struct sx_preempter *p, const struct job *j, const struct sx_pod *v)
{
	struct sx_error err = {0};
	const char *ns = sx_str_get(v->meta.ns);
	const char *in_memory = p->in_memory ? p->in_memory(p->ctx, v, j->preemptor) : NULL;
	char msg[400];
	int rc;

	if (in_memory) {
		if (p->on_preempted)
			notify(p, j, v, in_memory);
		return 0;
	}
	snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority %s",
		 sx_str_get(j->preemptor->scheduler_name), j->group ? "PodGroup" : "pod");
	rc = sx_kube_patch_pod_status(p->kube, ns, v->meta.name, "DisruptionTarget", "True",
				      REASON_PREEMPTION, msg, NULL, &err);
	if (rc == 0)
		rc = sx_kube_delete_pod(p->kube, ns, v->meta.name, v->meta.uid, &err);
	if (rc == SX_ENOENT)
		return 1;
	if (rc < 0) {
		sx_log(0, "preempting %s/%s for %s/%s: %s", ns, v->meta.name,
		       sx_str_get(j->preemptor->meta.ns), j->preemptor->meta.name, err.msg);
		return rc;
	}
	if (p->on_preempted)
		notify(p, j, v, NULL);
	return 0;
}

static void clear_lower(struct sx_preempter *p, const struct job *j)
{
	struct sx_error err = {0};

	for (uint32_t i = 0; i < j->nlower; i++) {
		const struct sx_pod *lp = j->victims[j->nvictims + i];

		sx_queue_nominate(p->q, lp, SX_STR_EMPTY);
		if (sx_kube_patch_pod_status(p->kube, sx_str_get(lp->meta.ns), lp->meta.name, NULL,
					     NULL, NULL, NULL, "", &err) < 0)
			sx_log(1, "clearing the nomination of %s/%s: %s", sx_str_get(lp->meta.ns),
			       lp->meta.name, err.msg);
	}
}

static void run(struct sx_preempter *p, const struct job *j)
{
	double start = sx_now_s();
	int failed = 0, last = 0;

	clear_lower(p, j);
	for (uint32_t i = 0; i + 1 < j->nvictims; i++)
		if (!j->victims[i]->deleting && evict(p, j, j->victims[i]) < 0)
			failed = 1;
	sx_preemption_end(j->ev, j->group ? j->key : j->preemptor->meta.uid);
	if (j->nvictims && !j->victims[j->nvictims - 1]->deleting)
		last = evict(p, j, j->victims[j->nvictims - 1]);
	if (last < 0)
		failed = 1;
	/* The last victim's deletion event is what retries the preemptor
	 * (the hints skip the earlier ones while the preemption runs); when
	 * that victim was gone already no event comes, so activate it. */
	if (failed || last > 0)
		sx_queue_activate(p->q, j->preemptor);
	if (p->goroutine_duration || p->goroutine_executions) {
		const char *labels = failed ? "result=\"error\"" : "result=\"success\"";
		sx_metric_observe(p->goroutine_duration, labels, sx_now_s() - start);
		sx_metric_inc(p->goroutine_executions, labels, 1);
	}
	for (uint32_t i = 1; (failed || last > 0) && i < j->nmembers; i++)
		sx_queue_activate(p->q, j->members[i]);
}

static void *worker(void *arg)
{
	struct sx_preempter *p = arg;

	pthread_setname_np(pthread_self(), "sx-preempt");
	for (;;) {
		struct job *j;

		pthread_mutex_lock(&p->mu);
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cond, &p->mu);
		j = p->head;
		if (j) {
			p->head = j->next;
			if (!p->head)
				p->tail = NULL;
		}
		pthread_mutex_unlock(&p->mu);
		if (!j)
			return NULL;
		run(p, j);
		job_free(j);
	}
}

struct sx_preempter *sx_preempter_start(struct sx_kube *kube, struct sx_queue *q,
					sx_preempted_fn on_preempted, sx_in_memory_fn in_memory,
					void *ctx, struct sx_metrics *metrics)
{
	struct sx_preempter *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	*p = (struct sx_preempter){
		.kube = kube,
		.q = q,
		.on_preempted = on_preempted,
		.in_memory = in_memory,
		.ctx = ctx,
		.goroutine_duration = sx_metrics_find(
			metrics, "scheduler_preemption_goroutines_duration_seconds"),
		.goroutine_executions = sx_metrics_find(
			metrics, "scheduler_preemption_goroutines_execution_total")};
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (pthread_create(&p->thread, NULL, worker, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cond);
		free(p);
		return NULL;
	}
	return p;
}

static struct job *job_new(const struct sx_pod *preemptor, const struct sx_preempt_result *r)
{
	struct job *j = calloc(1, sizeof(*j));
	uint32_t n = r->victims.n + r->nlower_nominated;

	if (!j || !(j->victims = calloc(n ? n : 1, sizeof(*j->victims)))) {
		free(j);
		return NULL;
	}
	j->preemptor = sx_pod_ref(preemptor);
	j->node = r->nominated_node;
	j->nvictims = r->victims.n;
	j->nlower = r->nlower_nominated;
	for (uint32_t i = 0; i < r->victims.n; i++)
		j->victims[i] = sx_pod_ref(r->victims.pods[i]);
	for (uint32_t i = 0; i < r->nlower_nominated; i++)
		j->victims[r->victims.n + i] = sx_pod_ref(r->lower_nominated[i]);
	return j;
}

static void enqueue(struct sx_preempter *p, struct job *j)
{
	pthread_mutex_lock(&p->mu);
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->mu);
}

int sx_preempter_submit(struct sx_preempter *p, struct sx_preemption_eval *ev,
			const struct sx_pod *preemptor, const struct sx_preempt_result *r)
{
	struct job *j = job_new(preemptor, r);

	if (!j)
		return SX_ENOMEM;
	j->ev = ev;
	if (sx_preemption_begin(ev, preemptor->meta.uid) == SX_ENOMEM) {
		job_free(j);
		return SX_ENOMEM;
	}
	enqueue(p, j);
	return 0;
}

int sx_preempter_submit_group(struct sx_preempter *p, struct sx_preemption_eval *ev,
			      const struct sx_pod_group *pg, const struct sx_pod *const *members,
			      uint32_t nmembers, const struct sx_pg_preempt_result *r)
{
	struct job *j = nmembers ? calloc(1, sizeof(*j)) : NULL;

	if (!j)
		return SX_ENOMEM;
	j->group = true;
	j->ev = ev;
	j->preemptor = sx_pod_ref(members[0]);
	j->nvictims = r->nvictims;
	j->victims = calloc(r->nvictims ? r->nvictims : 1, sizeof(*j->victims));
	j->members = calloc(nmembers, sizeof(*j->members));
	j->group_uid = sx_strdup(pg->meta.uid ? pg->meta.uid : "");
	if (!j->victims || !j->members || !j->group_uid) {
		j->nvictims = 0;
		job_free(j);
		return SX_ENOMEM;
	}
	for (uint32_t i = 0; i < r->nvictims; i++)
		j->victims[i] = sx_pod_ref(r->victims[i]);
	for (uint32_t i = 0; i < nmembers; i++)
		j->members[j->nmembers++] = sx_pod_ref(members[i]);
	sx_pg_preemption_key(pg->meta.ns, sx_intern(pg->meta.name), j->key, sizeof(j->key));
	if (sx_preemption_begin(ev, j->key) == SX_ENOMEM) {
		job_free(j);
		return SX_ENOMEM;
	}
	enqueue(p, j);
	return 0;
}

void sx_preempter_stop(struct sx_preempter *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cond);
	free(p);
}
