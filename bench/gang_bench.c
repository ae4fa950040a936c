/* In-process benchmark of the pod-group cycle (GenericWorkload), after
 * upstream's scheduler_perf gang scheduling workloads (5,000 nodes, gangs
 * of 3, upstream's thresholds 8 / 10 / 12 ms per attempt at 1,000 / 2,000 /
 * 3,000 gangs): one attempt is the pod-group algorithm over the gang's
 * members (each filtered, scored and tentatively assumed, PlacementFeasible
 * after each, everything undone) plus the final assume of every member, as
 * the standalone loop's cycle does before the binding cycles (which run on
 * other threads and are not timed; here each member is marked bound at once).
 * The same number of pods without a group is then scheduled one by one on a
 * fresh cluster: plain pods/s beside gang pods/s.
 *
 *   gang_bench [--nodes N] [--gangs G] [--size S] [--threads T]
 *
 * Nodes are generated here (32 cpu, 128 Gi, 110 pods, 3 zones), members
 * request 1 cpu / 1 Gi. Prints `bench <metric> <value> <unit> key=value...`. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedext/binder.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/podgroup.h"
#include "schedext/pool.h"
#include "schedext/snapshot.h"
#include "schedext/workload.h"

/* CPU time of the whole process (all threads), seconds. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add(struct sx_cache *c, const char *json)
{
	struct sx_error err = {0};
	struct sx_object obj = {0};
	cJSON *j = cJSON_Parse(json);

	if (!j || sx_decode_object(j, NULL, &obj, &err) < 0 || sx_cache_upsert(c, &obj) < 0) {
		fprintf(stderr, "gang_bench: cannot add %s: %s\n", json, err.msg);
		exit(1);
	}
	cJSON_Delete(j);
}

static void add_nodes(struct sx_cache *c, unsigned n)
{
	char buf[512];

	for (unsigned i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%05u\",\"labels\":{"
			 "\"kubernetes.io/hostname\":\"node-%05u\","
			 "\"topology.kubernetes.io/zone\":\"zone-%u\"}},"
			 "\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"128Gi\","
			 "\"pods\":\"110\"}}}",
			 i, i, i % 3);
		add(c, buf);
	}
}

static struct sx_pod *make_pod(const char *name, const char *group)
{
	char buf[600], sg[128] = "";
	struct sx_error err = {0};
	cJSON *j;
	struct sx_pod *p;

	if (group)
		snprintf(sg, sizeof(sg), "\"schedulingGroup\":{\"podGroupName\":\"%s\"},", group);
	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"bench\",\"uid\":\"uid-%s\"},"
		 "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
		 "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
		 name, name, sg);
	j = cJSON_Parse(buf);
	p = j ? sx_decode_pod(j, &err) : NULL;
	cJSON_Delete(j);
	if (!p) {
		fprintf(stderr, "gang_bench: pod: %s\n", err.msg);
		exit(1);
	}
	return p;
}

struct loop {
	struct sx_pool *pool;
	const struct sx_config *cfg;
	uint32_t next_start;
	uint64_t rng;
};

static int schedule(void *ctx, const struct sx_profile *prof, const struct sx_pod *pod,
		    struct sx_snapshot *snap, struct sx_cycle_result *res)
{
	struct loop *l = ctx;
	struct sx_cycle_opts o = {.snap = snap,
				  .mode = SX_CYCLE_FULL,
				  .percentage = -1,
				  .global_percentage = l->cfg->percentage_of_nodes_to_score,
				  .next_start_index = &l->next_start,
				  .rng = &l->rng,
				  .pool = l->pool,
				  .skip_pre_enqueue = true};

	return sx_schedule(prof, pod, &o, res);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Assume and bind at once (the binding cycle is not timed). */
static void bind_now(const struct sx_binder *b, const struct sx_pod *pod, sx_str node)
{
	if (sx_binder_assume(b, pod, node) == 0)
		sx_binder_done(b, pod->meta.ns, pod->meta.name, true);
}

int main(int argc, char **argv)
{
	unsigned nodes = 5000, gangs = 1000, size = 3, threads = 2;
	struct sx_features feat;
	struct sx_error err = {0};

	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--nodes"))
			nodes = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--gangs"))
			gangs = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size"))
			size = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads"))
			threads = (unsigned)atoi(argv[++i]);
	}
	if (!nodes || !gangs || !size || size > 64) {
		fprintf(stderr, "usage: gang_bench [--nodes N] [--gangs G] [--size S<=64] "
				"[--threads T]\n");
		return 2;
	}
	sx_intern_init();
	sx_features_init(&feat, SX_RELEASE_DEFAULT);
	if (sx_features_set(&feat, "GenericWorkload=true", &err) < 0)
		return fprintf(stderr, "gang_bench: %s\n", err.msg), 1;
	struct sx_config *cfg = sx_config_default_for(&feat, &err);
	if (!cfg)
		return fprintf(stderr, "gang_bench: %s\n", err.msg), 1;
	const struct sx_profile *prof = sx_config_profile(cfg, "default-scheduler");
	struct loop l = {
		.pool = threads > 1 ? sx_pool_new(threads - 1) : NULL, .cfg = cfg, .rng = 0x5eed};
	struct sx_cache *cache = sx_cache_new();
	struct sx_binder binder = {.cache = cache};
	double *attempt = calloc(gangs, sizeof(*attempt));
	unsigned scheduled = 0, groups_ok = 0;
	char name[64], buf[512];

	add_nodes(cache, nodes);
	for (unsigned g = 0; g < gangs; g++) {
		snprintf(buf, sizeof(buf),
			 "{\"kind\":\"PodGroup\",\"apiVersion\":\"scheduling.k8s.io/v1beta1\","
			 "\"metadata\":{\"name\":\"gang-%u\",\"namespace\":\"bench\"},"
			 "\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":%u}}}}",
			 g, size);
		add(cache, buf);
	}
	struct sx_snapshot *groups = sx_cache_snapshot(cache);
	double t_all = sx_now_s(), cpu_all = cpu_s();
	for (unsigned g = 0; g < gangs; g++) {
		struct sx_pg_member m[64] = {{0}};
		const struct sx_pod_group *pg = NULL;
		char gname[32];

		snprintf(gname, sizeof(gname), "gang-%u", g);
		for (uint32_t i = 0; i < groups->npod_groups && !pg; i++)
			if (!strcmp(groups->pod_groups[i]->meta.name, gname))
				pg = groups->pod_groups[i];
		for (unsigned i = 0; i < size; i++) {
			snprintf(name, sizeof(name), "gang-%u-%u", g, i);
			m[i].pod = make_pod(name, gname);
		}
		struct sx_pg_algorithm a = {.prof = prof,
					    .pg = pg,
					    .cache = cache,
					    .binder = &binder,
					    .schedule = schedule,
					    .ctx = &l};
		double t0 = sx_now_s();
		struct sx_status *st = sx_pod_group_algorithm(&a, m, size);
		if (!st) {
			groups_ok++;
			for (unsigned i = 0; i < size; i++)
				if (m[i].scheduled) {
					bind_now(&binder, m[i].pod, m[i].node);
					scheduled++;
				}
		}
		attempt[g] = (sx_now_s() - t0) * 1000.0;
		sx_status_free(st);
		sx_pg_members_free(m, size);
		for (unsigned i = 0; i < size; i++)
			sx_pod_unref(m[i].pod);
	}
	double gang_s = sx_now_s() - t_all, gang_cpu = cpu_s() - cpu_all;
	sx_snapshot_unref(groups);

	/* The same pods without a group, one cycle each, on a fresh cluster. */
	struct sx_cache *plain = sx_cache_new();
	struct sx_binder pb = {.cache = plain};
	unsigned plain_ok = 0;

	add_nodes(plain, nodes);
	double t_plain = sx_now_s();
	for (unsigned k = 0; k < gangs * size; k++) {
		struct sx_snapshot *snap = sx_cache_snapshot(plain);
		struct sx_cycle_result res;
		struct sx_pod *p;

		snprintf(name, sizeof(name), "plain-%u", k);
		p = make_pod(name, NULL);
		memset(&res, 0, sizeof(res));
		if (schedule(&l, prof, p, snap, &res) == 0 && res.selected >= 0) {
			bind_now(&pb, p, snap->nodes[res.selected]->name);
			plain_ok++;
		}
		sx_cycle_result_free(&res);
		sx_snapshot_unref(snap);
		sx_pod_unref(p);
	}
	double plain_s = sx_now_s() - t_plain;

	double mean = 0;
	for (unsigned g = 0; g < gangs; g++)
		mean += attempt[g];
	mean /= gangs;
	qsort(attempt, gangs, sizeof(*attempt), cmp_double);
	printf("bench podgroup_attempt_nodes%u_gangs%u %.3f ms p50=%.3f p99=%.3f "
	       "cpu_per_attempt=%.3fms nodes=%u gangs=%u size=%u threads=%u scheduled_groups=%u\n",
	       nodes, gangs, mean, attempt[gangs / 2], attempt[(gangs * 99) / 100],
	       gang_cpu * 1000.0 / gangs, nodes, gangs, size, threads, groups_ok);
	printf("bench podgroup_pods_per_s_nodes%u_gangs%u %.0f pods/s plain=%.0f nodes=%u "
	       "gang_pods=%u plain_pods=%u\n",
	       nodes, gangs, scheduled / gang_s, plain_ok / plain_s, nodes, scheduled, plain_ok);
	free(attempt);
	sx_cache_free(plain);
	sx_cache_free(cache);
	sx_pool_free(l.pool);
	sx_config_free(cfg);
	return groups_ok == gangs ? 0 : 1;
}
