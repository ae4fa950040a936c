/* In-process driver of a scheduler_perf workload (bench/scheduler_perf.py
 * --mode inprocess): schedext's scheduling cycle on the workload's objects,
 * no API server, no HTTP. The runner expands upstream's
 * performance-config.yaml into a plan (JSON) of steps; this program plays
 * it against one cache and the default profile (or --config FILE):
 *
 *   {"steps":[
 *     {"op":"objects","items":[...]}           upsert (nodes, namespaces, services, ...)
 *     {"op":"pods","items":[...],"measure":B,"wait":B}
 *                                              queue the pods; wait: schedule until
 *                                              the queue is empty
 *     {"op":"churn","mode":"create|recreate","interval_ms":N,"number":N,
 *      "namespace":NS,"templates":[...]}       from now on, every interval: create one
 *                                              object per template (recreate: delete
 *                                              the one created `number` ticks ago)
 *     {"op":"delete_pods","namespace":NS,"per_second":R,"wait":B}
 *                                              delete that namespace's scheduled pods
 *     {"op":"barrier"}                         schedule until the queue is empty
 *     {"op":"sleep","ms":N}                    keep scheduling (and churning) N ms
 *   ]}
 *
 * The queue is a heap in PrioritySort order (priority, then arrival). A
 * pod that fits is assumed and Reserved (as cycle_bench does). One that
 * does not runs PostFilter as a dry run (sx_fit_error_post_filter, the
 * code the standalone scheduler's FitError path uses); when
 * DefaultPreemption names victims they are deleted from the cache at once
 * and the preemptor goes back to the queue (it is the highest-priority pod,
 * so it is next). Otherwise the pod is parked as unschedulable and not
 * retried: the workloads here never add what those pods wait for.
 * Churn is driven by the wall clock between cycles, as upstream's churn
 * goroutine ticks beside the scheduler.
 *
 * Prints one JSON object: the measured pods' scheduling times (seconds
 * from the start of the measured step), every attempt's latency in the
 * measured window, CPU seconds (whole run and measured window), VmHWM,
 * counts. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/pool.h"
#include "schedext/post_filter.h"
#include "schedext/state.h"
#include "schedext/binding_cycle.h" /* after the headers it needs */

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long vmhwm_kib(void)
{
	char line[256];
	long v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "perf_workload: out of memory\n");
		exit(1);
	}
	return q;
}

/* ---------- growable arrays ---------- */

struct dvec {
	double *v;
	size_t n, cap;
};

static void dpush(struct dvec *d, double x)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 1024;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = x;
}

/* ---------- the queue (PrioritySort) ---------- */

struct qpod {
	struct sx_pod *pod;
	uint64_t seq;
	bool measured;
	int preemptions;
};

struct heap {
	struct qpod *v;
	size_t n, cap;
};

static bool before(const struct qpod *a, const struct qpod *b)
{
	if (a->pod->priority != b->pod->priority)
		return a->pod->priority > b->pod->priority;
	return a->seq < b->seq;
}

static void heap_push(struct heap *h, struct qpod q)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	size_t i = h->n++;
	h->v[i] = q;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&h->v[i], &h->v[p]))
			break;
		struct qpod t = h->v[i];
		h->v[i] = h->v[p];
		h->v[p] = t;
		i = p;
	}
}

static struct qpod heap_pop(struct heap *h)
{
	struct qpod top = h->v[0];
	h->v[0] = h->v[--h->n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && before(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && before(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			break;
		struct qpod t = h->v[i];
		h->v[i] = h->v[m];
		h->v[m] = t;
		i = m;
	}
	return top;
}

/* ---------- placed and parked pods ---------- */

struct placed {
	struct sx_pod *pod; /* reference held; NULL once deleted */
	bool parked;	    /* unschedulable, never placed */
};

struct churn {
	bool recreate;
	double interval, next;
	int number; /* recreate: objects kept per template; create: max ticks (0 = no cap) */
	long ticks;
	int ntemplates;
	cJSON **templates;
	char **slots; /* recreate: [ntemplates * number] "Kind\0ns\0name" keys */
};

struct deleter {
	sx_str ns;
	double interval, next;
	size_t cursor; /* into placed[] */
	bool done;
};

struct run {
	struct sx_cache *cache;
	const struct sx_config *cfg;
	const struct sx_profile *prof;
	struct sx_pool *pool;
	struct heap q;
	struct placed *placed;
	size_t nplaced, capplaced;
	struct churn *churns;
	int nchurns;
	struct deleter *deleters;
	int ndeleters;
	uint64_t seq, rng, uid;
	uint32_t next_start;
	/* measurement */
	bool measuring;
	double t_measure0, cpu_measure0, t_last_measured, cpu_last_measured;
	size_t measured_total, measured_done;
	struct dvec times, latency;
	/* counts */
	long attempts, scheduled, parked, preemptions, victims, churn_objects, churn_deletes,
		deleted;
};

static void add_placed(struct run *r, struct sx_pod *pod, bool parked)
{
	if (r->nplaced == r->capplaced) {
		r->capplaced = r->capplaced ? r->capplaced * 2 : 4096;
		r->placed = xrealloc(r->placed, r->capplaced * sizeof(*r->placed));
	}
	r->placed[r->nplaced++] = (struct placed){.pod = pod, .parked = parked};
}

/* Forgets a placed or parked pod by key: deletes it from the cache when it
 * was placed. */
static bool remove_pod(struct run *r, sx_str ns, const char *name)
{
	for (size_t i = r->nplaced; i-- > 0;) {
		struct sx_pod *p = r->placed[i].pod;
		if (p && p->meta.ns == ns && !strcmp(p->meta.name, name)) {
			if (!r->placed[i].parked)
				sx_cache_delete(r->cache, SX_KIND_POD, ns, name);
			sx_pod_unref(p);
			r->placed[i].pod = NULL;
			return true;
		}
	}
	return false;
}

/* ---------- objects ---------- */

static void upsert_json(struct run *r, const cJSON *item)
{
	struct sx_error err = {0};
	struct sx_object obj;
	int rc = sx_decode_object(item, NULL, &obj, &err);

	if (rc == 0)
		sx_cache_upsert(r->cache, &obj);
	else if (rc != SX_ENOENT)
		fprintf(stderr, "perf_workload: decode: %s %s\n", err.msg, err.path);
}

static void queue_pod_json(struct run *r, const cJSON *item, bool measured)
{
	struct sx_error err = {0};
	struct sx_pod *pod = sx_decode_pod(item, &err);

	if (!pod) {
		fprintf(stderr, "perf_workload: pod: %s %s\n", err.msg, err.path);
		return;
	}
	heap_push(&r->q, (struct qpod){.pod = pod, .seq = r->seq++, .measured = measured});
	if (measured)
		r->measured_total++;
}

/* An object of a churn template: generateName + a counter; pods go to the
 * queue, other kinds to the cache. Writes its key into key[]. */
static void churn_create(struct run *r, const cJSON *tmpl, char *key, size_t keylen)
{
	cJSON *o = cJSON_Duplicate(tmpl, 1);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	const char *gen = sx_json_string(meta, "generateName");
	const char *kind = sx_json_string(o, "kind");
	const char *ns = sx_json_string(meta, "namespace");
	char name[256], uid[64];

	snprintf(name, sizeof(name), "%s%06llu", gen ? gen : "churn-", (unsigned long long)r->uid);
	snprintf(uid, sizeof(uid), "churn-uid-%llu", (unsigned long long)r->uid++);
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
	cJSON_AddStringToObject(meta, "uid", uid);
	if (kind && !strcmp(kind, "Pod"))
		queue_pod_json(r, o, false);
	else
		upsert_json(r, o);
	snprintf(key, keylen, "%s|%s|%s", kind ? kind : "", ns ? ns : "", name);
	r->churn_objects++;
	cJSON_Delete(o);
}

static void churn_delete(struct run *r, const char *key)
{
	char kind[64], ns[128], name[256];

	if (sscanf(key, "%63[^|]|%127[^|]|%255s", kind, ns, name) != 3 &&
	    sscanf(key, "%63[^|]||%255s", kind, name) == 2)
		ns[0] = 0;
	sx_str nsid = ns[0] ? sx_intern(ns) : SX_STR_EMPTY;
	if (!strcmp(kind, "Pod")) {
		/* Still queued: drop it from the heap. */
		for (size_t i = 0; i < r->q.n; i++) {
			struct sx_pod *p = r->q.v[i].pod;
			if (p->meta.ns == nsid && !strcmp(p->meta.name, name)) {
				sx_pod_unref(p);
				r->q.v[i] = r->q.v[--r->q.n];
				/* restore the heap property */
				struct heap tmp = r->q;
				r->q = (struct heap){0};
				for (size_t k = 0; k < tmp.n; k++)
					heap_push(&r->q, tmp.v[k]);
				free(tmp.v);
				r->churn_deletes++;
				return;
			}
		}
		if (remove_pod(r, nsid, name))
			r->churn_deletes++;
		return;
	}
	if (sx_cache_delete(r->cache, sx_kind_from_name(kind), nsid, name) == 0)
		r->churn_deletes++;
}

static void tick(struct run *r, double now)
{
	for (int c = 0; c < r->nchurns; c++) {
		struct churn *ch = &r->churns[c];
		while (now >= ch->next) {
			ch->next += ch->interval;
			if (!ch->recreate && ch->number > 0 && ch->ticks >= ch->number)
				break;
			for (int t = 0; t < ch->ntemplates; t++) {
				char key[512];
				if (ch->recreate) {
					char **slot =
						&ch->slots[t * ch->number + ch->ticks % ch->number];
					if (*slot) {
						churn_delete(r, *slot);
						free(*slot);
						*slot = NULL;
					}
					churn_create(r, ch->templates[t], key, sizeof(key));
					*slot = strdup(key);
				} else {
					churn_create(r, ch->templates[t], key, sizeof(key));
				}
			}
			ch->ticks++;
		}
	}
	for (int d = 0; d < r->ndeleters; d++) {
		struct deleter *dl = &r->deleters[d];
		while (!dl->done && now >= dl->next) {
			dl->next += dl->interval;
			while (dl->cursor < r->nplaced &&
			       (!r->placed[dl->cursor].pod || r->placed[dl->cursor].parked ||
				r->placed[dl->cursor].pod->meta.ns != dl->ns))
				dl->cursor++;
			if (dl->cursor >= r->nplaced) {
				dl->done = true;
				break;
			}
			struct sx_pod *p = r->placed[dl->cursor].pod;
			sx_cache_delete(r->cache, SX_KIND_POD, p->meta.ns, p->meta.name);
			sx_pod_unref(p);
			r->placed[dl->cursor].pod = NULL;
			r->deleted++;
		}
	}
}

/* ---------- one scheduling attempt ---------- */

static void schedule_one(struct run *r)
{
	struct qpod qp = heap_pop(&r->q);
	double t0 = sx_now_s();
	struct sx_snapshot *snap = sx_cache_snapshot(r->cache);
	struct sx_cycle_opts opts = {.snap = snap,
				     .mode = SX_CYCLE_FULL,
				     .percentage = -1,
				     .global_percentage = r->cfg->percentage_of_nodes_to_score,
				     .next_start_index = &r->next_start,
				     .rng = &r->rng,
				     .pool = r->pool};
	struct sx_cycle_result res;
	bool done = false, requeue = false;

	r->attempts++;
	sx_schedule(r->prof, qp.pod, &opts, &res);
	if (res.selected >= 0) {
		sx_str node = snap->nodes[res.selected]->name;
		if (sx_cache_assume(r->cache, qp.pod, node) == 0) {
			sx_status_free(sx_run_reserve(r->prof, res.state, qp.pod, node));
			add_placed(r, qp.pod, false);
			r->scheduled++;
			done = true;
		}
	} else if (!res.error && qp.preemptions < 3) {
		struct sx_fit_outcome out;
		if (sx_fit_error_post_filter(r->prof, qp.pod, &res, true, NULL, &out) == 0) {
			const struct sx_victims *v = &out.preemption.victims;
			if (out.preemption.nominated_node != SX_STR_EMPTY && v->n > 0) {
				r->preemptions++;
				for (uint32_t i = 0; i < v->n; i++)
					if (remove_pod(r, v->pods[i]->meta.ns,
						       v->pods[i]->meta.name))
						r->victims++;
				requeue = true;
			}
			sx_fit_outcome_free(&out);
		}
	}
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	double t1 = sx_now_s();
	if (r->measuring)
		dpush(&r->latency, t1 - t0);
	if (done && qp.measured) {
		r->measured_done++;
		dpush(&r->times, t1 - r->t_measure0);
		r->t_last_measured = t1;
		r->cpu_last_measured = cpu_s();
	}
	if (requeue) {
		qp.preemptions++;
		heap_push(&r->q, qp);
	} else if (!done) {
		add_placed(r, qp.pod, true);
		r->parked++;
	}
}

/* Schedules until the queue is empty (until = 0) or until the clock
 * passes `until`; churn and deletions tick between cycles. */
static void drive(struct run *r, double until)
{
	for (;;) {
		double now = sx_now_s();
		tick(r, now);
		if (until > 0 && now >= until)
			return;
		if (r->q.n > 0) {
			schedule_one(r);
			continue;
		}
		bool pending_deletes = false;
		for (int d = 0; d < r->ndeleters; d++)
			pending_deletes = pending_deletes || !r->deleters[d].done;
		if (until <= 0 && !pending_deletes)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print_array(const char *name, struct dvec *d, double scale)
{
	printf("\"%s\":[", name);
	for (size_t i = 0; i < d->n; i++)
		printf("%s%.6g", i ? "," : "", d->v[i] * scale);
	printf("]");
}

static char *slurp(const char *path, size_t *len)
{
	struct sx_error err = {0};
	char *d = sx_state_read_file(path, len, &err);

	if (!d)
		fprintf(stderr, "perf_workload: %s: %s\n", path, err.msg);
	return d;
}

int main(int argc, char **argv)
{
	const char *plan_path = NULL, *config_path = NULL;
	unsigned threads = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--plan"))
			plan_path = argv[i + 1];
		else if (!strcmp(argv[i], "--config"))
			config_path = argv[i + 1];
		else if (!strcmp(argv[i], "--threads"))
			threads = (unsigned)atoi(argv[i + 1]);
	}
	if (!plan_path) {
		fprintf(stderr, "usage: perf_workload --plan FILE [--config FILE] [--threads N]\n");
		return 2;
	}
	sx_intern_init();
	struct sx_error err = {0};
	struct sx_config *cfg = NULL;
	size_t len;
	if (config_path) {
		char *c = slurp(config_path, &len);
		cfg = c ? sx_config_parse(c, len, &err) : NULL;
		free(c);
	} else {
		cfg = sx_config_default(&err);
	}
	if (!cfg) {
		fprintf(stderr, "perf_workload: config: %s\n", err.msg);
		return 2;
	}
	char *data = slurp(plan_path, &len);
	cJSON *plan = data ? cJSON_ParseWithLength(data, len) : NULL;
	free(data);
	if (!plan) {
		fprintf(stderr, "perf_workload: bad plan %s\n", plan_path);
		return 2;
	}
	struct run r = {.cache = sx_cache_new(),
			.cfg = cfg,
			.prof = sx_config_profile(cfg, NULL),
			.pool = threads > 1 ? sx_pool_new(threads - 1) : NULL,
			.rng = 1};
	double t_start = sx_now_s(), cpu_start = cpu_s();
	const cJSON *step;
	cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(plan, "steps"))
	{
		const char *op = sx_json_string(step, "op");
		const cJSON *items = cJSON_GetObjectItemCaseSensitive(step, "items"), *it;
		bool wait = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "wait"));
		if (!op)
			continue;
		if (!strcmp(op, "objects")) {
			cJSON_ArrayForEach(it, items) upsert_json(&r, it);
		} else if (!strcmp(op, "pods")) {
			bool measure =
				cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "measure"));
			if (measure && !r.measuring) {
				r.measuring = true;
				r.t_measure0 = sx_now_s();
				r.cpu_measure0 = cpu_s();
			}
			cJSON_ArrayForEach(it, items) queue_pod_json(&r, it, measure);
			if (wait)
				drive(&r, 0);
		} else if (!strcmp(op, "churn")) {
			r.churns = xrealloc(r.churns, (size_t)(r.nchurns + 1) * sizeof(*r.churns));
			struct churn *ch = &r.churns[r.nchurns++];
			const cJSON *tm = cJSON_GetObjectItemCaseSensitive(step, "templates");
			memset(ch, 0, sizeof(*ch));
			ch->recreate =
				!strcmp(sx_json_string(step, "mode") ?: "create", "recreate");
			ch->interval = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
					       step, "interval_ms")) /
				       1000.0;
			if (!(ch->interval > 0))
				ch->interval = 0.5;
			ch->number = (int)cJSON_GetNumberValue(
				cJSON_GetObjectItemCaseSensitive(step, "number"));
			if (ch->number <= 0 && ch->recreate)
				ch->number = 1;
			ch->ntemplates = cJSON_GetArraySize(tm);
			ch->templates = calloc((size_t)ch->ntemplates + 1, sizeof(*ch->templates));
			for (int t = 0; t < ch->ntemplates; t++)
				ch->templates[t] = cJSON_GetArrayItem(tm, t);
			if (ch->recreate)
				ch->slots = calloc((size_t)ch->ntemplates * ch->number + 1,
						   sizeof(char *));
			ch->next = sx_now_s() + ch->interval;
		} else if (!strcmp(op, "delete_pods")) {
			r.deleters = xrealloc(r.deleters,
					      (size_t)(r.ndeleters + 1) * sizeof(*r.deleters));
			struct deleter *dl = &r.deleters[r.ndeleters++];
			double rate = cJSON_GetNumberValue(
				cJSON_GetObjectItemCaseSensitive(step, "per_second"));
			*dl = (struct deleter){
				.ns = sx_intern(sx_json_string(step, "namespace") ?: ""),
				.interval = rate > 0 ? 1.0 / rate : 0,
				.next = sx_now_s()};
			if (wait)
				drive(&r, 0);
		} else if (!strcmp(op, "barrier")) {
			drive(&r, 0);
		} else if (!strcmp(op, "sleep")) {
			double ms =
				cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(step, "ms"));
			drive(&r, sx_now_s() + ms / 1000.0);
		}
	}
	drive(&r, 0);
	double t_end = sx_now_s(), cpu_end = cpu_s();
	struct sx_cache_stats st;
	sx_cache_stats(r.cache, &st);
	qsort(r.latency.v, r.latency.n, sizeof(double), cmp_double);
	double window = r.measured_done ? r.t_last_measured - r.t_measure0 : 0;
	printf("{\"nodes\":%u,\"pods_in_cache\":%u,\"measured\":%zu,\"measured_scheduled\":%zu,"
	       "\"measure_seconds\":%.6f,\"cpu_seconds_measured\":%.4f,\"cpu_seconds_total\":%.4f,"
	       "\"wall_seconds_total\":%.3f,\"vmhwm_kib\":%ld,\"threads\":%u,\"attempts\":%ld,"
	       "\"scheduled\":%ld,\"unschedulable\":%ld,\"preemptions\":%ld,\"victims\":%ld,"
	       "\"churn_objects\":%ld,\"churn_deletes\":%ld,\"deleted\":%ld,",
	       st.nodes, st.pods, r.measured_total, r.measured_done, window,
	       r.measured_done ? r.cpu_last_measured - r.cpu_measure0 : 0.0, cpu_end - cpu_start,
	       t_end - t_start, vmhwm_kib(), threads, r.attempts, r.scheduled, r.parked,
	       r.preemptions, r.victims, r.churn_objects, r.churn_deletes, r.deleted);
	print_array("times", &r.times, 1);
	printf(",");
	print_array("attempt_latency_ms", &r.latency, 1000);
	printf("}\n");
	/* teardown */
	while (r.q.n)
		sx_pod_unref(heap_pop(&r.q).pod);
	free(r.q.v);
	for (size_t i = 0; i < r.nplaced; i++)
		if (r.placed[i].pod)
			sx_pod_unref(r.placed[i].pod);
	free(r.placed);
	for (int c = 0; c < r.nchurns; c++) {
		for (int k = 0;
		     r.churns[c].slots && k < r.churns[c].ntemplates * r.churns[c].number; k++)
			free(r.churns[c].slots[k]);
		free(r.churns[c].slots);
		free(r.churns[c].templates);
	}
	free(r.churns);
	free(r.deleters);
	free(r.times.v);
	free(r.latency.v);
	cJSON_Delete(plan);
	sx_pool_free(r.pool);
	sx_cache_free(r.cache);
	sx_config_free(cfg);
	return 0;
}
