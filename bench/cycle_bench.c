/* In-process benchmark: ingest of a state file, memory, and scheduling
 * cycles per second with the default profile (each scheduled pod is assumed
 * in the cache, so later cycles see it, as in kube-scheduler).
 *
 *   cycle_bench --state FILE [--extra-state FILE] [--pending FILE --label NAME] [--threads N]
 *   cycle_bench --state FILE --pending FILE --latency [--gap-us US] [--threads N]
 *   cycle_bench --state FILE [--extra-state FILE] --pending A --label NAME
 *               --compare B --compare-label NAME2 --rounds R [--threads N]
 *
 * --latency reports the p50/p99 of single Filter and PreScore+Score passes
 * over 500 named nodes (the extender's nodeCacheCapable work per request);
 * --extra-state loads a second state file on top (the volumes mix's claims
 * and PVs); each cycle that selects a node also runs Reserve there, as the
 * scheduler does (VolumeBinding assumes its bindings);
 * --gap-us keeps the caller busy that long between passes (a request's
 * HTTP share), so idle pool workers may go to sleep as in the server.
 * --homogeneous N runs N pods of one Deployment-like template (a
 * ReplicaSet's pods: same labels, requests and host port 8080, so a node
 * takes one) with opportunistic batching off, then on, R rounds back to
 * back, as 1.35 with PodTopologySpread's default constraints cleared (the
 * shape upstream's batching serves: the default profile signs no pod,
 * batch.h), and prints both rates and the hints taken; with
 * --default-profile, as the default profile of the default release, which
 * signs no pod (the cost of batching where it cannot help).
 * --compare runs mix A then mix B R times in one process, on one loaded
 * cluster (each run's pods are forgotten afterwards, each run gets a fresh
 * configuration, so plugin state such as VolumeBinding's assume cache
 * starts empty), and prints B's rate as a fraction of A's: the median of
 * the per-round ratios. On a shared VM the machine's speed drifts by tens
 * of percent over seconds, so two mixes measured in separate processes a
 * minute apart compare the machine as much as the mixes; back to back,
 * round by round, the drift mostly cancels.
 * With SX_PERF_CTL=FIFO, writes enable/disable around the measured cycles
 * for `perf record -D -1 --control=fifo:FIFO`.
 *
 * Prints `bench <metric> <value> <unit> key=value...` lines. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "schedext/batch.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/pool.h"
#include "schedext/state.h"
#include "schedext/binding_cycle.h" /* after the headers it needs */

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* CPU time of the whole process (all threads), seconds: less sensitive to
 * other load on the machine than wall time. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *d = malloc((size_t)n + 1);
	if (d && fread(d, 1, (size_t)n, f) != (size_t)n) {
		free(d);
		d = NULL;
	}
	fclose(f);
	if (d) {
		d[n] = 0;
		*len = (size_t)n;
	}
	return d;
}

/* Decodes the pending pods of a List file. */
static struct sx_pod **load_pending(const char *path, uint32_t *n)
{
	size_t len;
	char *data = slurp(path, &len);
	cJSON *root = data ? cJSON_ParseWithLength(data, len) : NULL;
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items"), *it;
	struct sx_pod **pods = calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof(*pods));
	*n = 0;
	cJSON_ArrayForEach(it, items)
	{
		struct sx_error err = {0};
		struct sx_pod *pod = sx_decode_pod(it, &err);
		if (pod)
			pods[(*n)++] = pod;
	}
	cJSON_Delete(root);
	free(data);
	return pods;
}

/* perf record --control=fifo:CTL: with SX_PERF_CTL=CTL set, only the
 * measured cycles are profiled (not the load or the teardown). */
static void perf_ctl(const char *cmd)
{
	const char *path = getenv("SX_PERF_CTL");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fputs(cmd, f);
		fclose(f);
	}
}

static uint32_t sx_cache_snapshot_nodes(struct sx_cache *cache)
{
	struct sx_cache_stats st;
	sx_cache_stats(cache, &st);
	return st.nodes;
}

/* Schedules pods[0..n) one cycle after another with cfg's default
 * profile; each pod placed is assumed in the cache and Reserved there, as
 * the scheduler does (VolumeBinding assumes its bindings). placed[i]
 * (optional) says whether pods[i] was assumed. Returns how many were. */
static uint32_t run_pods(struct sx_cache *cache, const struct sx_config *cfg, struct sx_pod **pods,
			 uint32_t n, struct sx_pool *pool, bool *placed)
{
	const struct sx_profile *prof = sx_config_profile(cfg, NULL);
	uint32_t next = 0, scheduled = 0;
	uint64_t rng = 1;

	for (uint32_t i = 0; prof && i < n; i++) {
		struct sx_snapshot *snap = sx_cache_snapshot(cache);
		struct sx_cycle_opts opts = {.snap = snap,
					     .mode = SX_CYCLE_FULL,
					     .percentage = -1,
					     .global_percentage = cfg->percentage_of_nodes_to_score,
					     .next_start_index = &next,
					     .rng = &rng,
					     .pool = pool};
		struct sx_cycle_result res;
		bool ok = false;

		sx_schedule(prof, pods[i], &opts, &res);
		if (res.selected >= 0) {
			sx_str node = snap->nodes[res.selected]->name;

			ok = sx_cache_assume(cache, pods[i], node) == 0;
			sx_status_free(sx_run_reserve(prof, res.state, pods[i], node));
			scheduled++;
		}
		if (placed)
			placed[i] = ok;
		sx_cycle_result_free(&res);
		sx_snapshot_unref(snap);
	}
	return scheduled;
}

static void bench_cycles(struct sx_cache *cache, const struct sx_config *cfg, const char *path,
			 const char *label, unsigned threads)
{
	uint32_t n;
	struct sx_pod **pods = load_pending(path, &n);
	struct sx_pool *pool = threads > 1 ? sx_pool_new(threads - 1) : NULL;
	perf_ctl("enable\n");
	double t0 = sx_now_s(), c0 = cpu_s();
	uint32_t scheduled = run_pods(cache, cfg, pods, n, pool, NULL);
	double dt = sx_now_s() - t0, dc = cpu_s() - c0;
	perf_ctl("disable\n");
	printf("bench cycle_%s %.0f pods/s nodes=%u pending=%u scheduled=%u unschedulable=%u "
	       "threads=%u cpu_us_per_pod=%.0f\n",
	       label, n / (dt > 0 ? dt : 1e-9), sx_cache_snapshot_nodes(cache), n, scheduled,
	       n - scheduled, threads, n ? dc * 1e6 / n : 0.0);
	for (uint32_t i = 0; i < n; i++)
		sx_pod_unref(pods[i]);
	free(pods);
	sx_pool_free(pool);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run of pods[0..n) through fresh plugin state; the scheduled pods
 * are forgotten afterwards, so the next run starts from the same cluster.
 * Returns pods/s; *cpu_us CPU microseconds per pod, *scheduled how many
 * were placed (the same in every round when the rounds do the same work). */
static double compare_run(struct sx_cache *cache, struct sx_pod **pods, uint32_t n,
			  unsigned threads, double *cpu_us, uint32_t *scheduled)
{
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_default(&err);
	struct sx_pool *pool = threads > 1 ? sx_pool_new(threads - 1) : NULL;
	bool *placed = calloc(n ? n : 1, sizeof(*placed));
	double t0 = sx_now_s(), c0 = cpu_s(), dt;

	*scheduled = cfg && placed ? run_pods(cache, cfg, pods, n, pool, placed) : 0;
	dt = sx_now_s() - t0;
	*cpu_us = n ? (cpu_s() - c0) * 1e6 / n : 0;
	for (uint32_t i = 0; placed && i < n; i++)
		if (placed[i])
			sx_cache_forget(cache, pods[i]->meta.ns, pods[i]->meta.name);
	free(placed);
	sx_pool_free(pool);
	sx_config_free(cfg);
	return n / (dt > 0 ? dt : 1e-9);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { MAX_ROUNDS = 50 };

static void bench_compare(struct sx_cache *cache, const char *path_a, const char *label_a,
			  const char *path_b, const char *label_b, int rounds, unsigned threads)
{
	uint32_t na, nb;
	struct sx_pod **a = load_pending(path_a, &na), **b = load_pending(path_b, &nb);
	double ra[MAX_ROUNDS], rb[MAX_ROUNDS], ratio[MAX_ROUNDS], ca[MAX_ROUNDS], cb[MAX_ROUNDS];

	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	uint32_t sa = 0, sb = 0;
	bool same = true;

	for (int r = 0; r < rounds; r++) {
		uint32_t xa, xb;

		ra[r] = compare_run(cache, a, na, threads, &ca[r], &xa);
		rb[r] = compare_run(cache, b, nb, threads, &cb[r], &xb);
		same = same && (r == 0 || (xa == sa && xb == sb));
		sa = xa;
		sb = xb;
		ratio[r] = rb[r] / ra[r];
		fprintf(stderr,
			"round %d: %s %.0f pods/s (%u scheduled), %s %.0f pods/s (%u), ratio "
			"%.3f\n",
			r, label_a, ra[r], xa, label_b, rb[r], xb, ratio[r]);
	}
	double lo = ratio[0], hi = ratio[0];
	for (int r = 1; r < rounds; r++) {
		lo = ratio[r] < lo ? ratio[r] : lo;
		hi = ratio[r] > hi ? ratio[r] : hi;
	}
	printf("bench cycle_%s_of_%s %.3f ratio rounds=%d min=%.3f max=%.3f %s=%.0f %s=%.0f "
	       "%s_cpu_us_per_pod=%.0f %s_cpu_us_per_pod=%.0f scheduled=%u/%u,%u/%u%s threads=%u "
	       "(medians, back to back)\n",
	       label_b, label_a, median(ratio, rounds), rounds, lo, hi, label_a, median(ra, rounds),
	       label_b, median(rb, rounds), label_a, median(ca, rounds), label_b,
	       median(cb, rounds), sa, na, sb, nb, same ? "" : " ROUNDS_DIFFER", threads);
	for (uint32_t i = 0; i < na; i++)
		sx_pod_unref(a[i]);
	for (uint32_t i = 0; i < nb; i++)
		sx_pod_unref(b[i]);
	free(a);
	free(b);
}

/* A ReplicaSet's pod, name web-<i>. */
static struct sx_pod *homogeneous_pod(uint32_t i)
{
	char buf[1024];
	struct sx_error err = {0};
	struct sx_pod *pod;
	cJSON *j;

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"web-%u\",\"namespace\":\"bench\",\"uid\":\"web-%u\","
		 "\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"5d4f8c\"},"
		 "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		 "\"name\":\"web-5d4f8c\",\"uid\":\"rs-web\",\"controller\":true}]},"
		 "\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.27\","
		 "\"ports\":[{\"containerPort\":8080,\"hostPort\":8080}],"
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}}",
		 i, i);
	j = cJSON_Parse(buf);
	pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	return pod;
}

/* One run of pods[0..n) with batching on or off (a fresh 1.35
 * configuration each time); placed pods are forgotten afterwards. */
static double batch_run(struct sx_cache *cache, struct sx_pod **pods, uint32_t n, unsigned threads,
			bool dflt, bool on, double *cpu_us, uint32_t *scheduled, int64_t *hints)
{
	static const char conf[] =
		"{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
		"\"KubeSchedulerConfiguration\",\"profiles\":[{\"schedulerName\":"
		"\"default-scheduler\",\"pluginConfig\":[{\"name\":\"PodTopologySpread\","
		"\"args\":{\"defaultingType\":\"List\"}}]}]}";
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_config *cfg;
	const struct sx_profile *prof;
	struct sx_pool *pool = threads > 1 ? sx_pool_new(threads - 1) : NULL;
	struct sx_batch *b = NULL;
	bool *placed = calloc(n ? n : 1, sizeof(*placed));
	uint32_t next = 0;
	uint64_t rng = 1;
	double t0, c0, dt;

	sx_features_init(&f, dflt ? SX_RELEASE_DEFAULT : 35);
	cfg = dflt ? sx_config_default_for(&f, &err)
		   : sx_config_parse_for(conf, sizeof(conf) - 1, &f, &err);
	prof = cfg ? cfg->profiles[0] : NULL;
	if (prof && on)
		b = sx_batch_new(prof, NULL, false);
	*scheduled = 0;
	t0 = sx_now_s();
	c0 = cpu_s();
	for (uint32_t i = 0; prof && placed && i < n; i++) {
		struct sx_snapshot *snap = sx_cache_snapshot(cache);
		struct sx_cycle_opts opts = {.snap = snap,
					     .mode = SX_CYCLE_FULL,
					     .percentage = -1,
					     .global_percentage = cfg->percentage_of_nodes_to_score,
					     .next_start_index = &next,
					     .rng = &rng,
					     .pool = pool,
					     .batch = b,
					     .cycle = i + 1};
		struct sx_cycle_result res;

		sx_schedule(prof, pods[i], &opts, &res);
		if (res.selected >= 0) {
			placed[i] = sx_cache_assume(cache, pods[i],
						    snap->nodes[res.selected]->name) == 0;
			(*scheduled)++;
		}
		sx_cycle_result_free(&res);
		sx_snapshot_unref(snap);
	}
	dt = sx_now_s() - t0;
	*cpu_us = n ? (cpu_s() - c0) * 1e6 / n : 0;
	*hints = b ? sx_batch_batched(b) : 0;
	for (uint32_t i = 0; placed && i < n; i++)
		if (placed[i])
			sx_cache_forget(cache, pods[i]->meta.ns, pods[i]->meta.name);
	free(placed);
	sx_batch_free(b);
	sx_pool_free(pool);
	sx_config_free(cfg);
	return n / (dt > 0 ? dt : 1e-9);
}

static void bench_homogeneous(struct sx_cache *cache, uint32_t n, int rounds, unsigned threads,
			      bool dflt)
{
	struct sx_pod **pods = calloc(n ? n : 1, sizeof(*pods));
	double off[MAX_ROUNDS], on[MAX_ROUNDS], ratio[MAX_ROUNDS], coff[MAX_ROUNDS],
		con[MAX_ROUNDS];
	uint32_t soff = 0, son = 0;
	int64_t hints = 0;

	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	for (uint32_t i = 0; i < n; i++)
		pods[i] = homogeneous_pod(i);
	for (int r = 0; r < rounds; r++) {
		int64_t h0;

		off[r] = batch_run(cache, pods, n, threads, dflt, false, &coff[r], &soff, &h0);
		on[r] = batch_run(cache, pods, n, threads, dflt, true, &con[r], &son, &hints);
		ratio[r] = on[r] / off[r];
		fprintf(stderr,
			"round %d: batching off %.0f pods/s (%u scheduled), on %.0f pods/s (%u, "
			"%lld hints taken), ratio %.2f\n",
			r, off[r], soff, on[r], son, (long long)hints, ratio[r]);
	}
	const char *tag = dflt ? "_default_profile" : "";

	printf("bench cycle_homogeneous%s_batch_off %.0f pods/s nodes=%u pending=%u scheduled=%u "
	       "threads=%u cpu_us_per_pod=%.0f (median of %d, %s)\n",
	       tag, median(off, rounds), sx_cache_snapshot_nodes(cache), n, soff, threads,
	       median(coff, rounds), rounds, dflt ? "1.37's default profile" : "emulated 1.35");
	printf("bench cycle_homogeneous%s_batch_on %.0f pods/s nodes=%u pending=%u scheduled=%u "
	       "hint_used=%lld threads=%u cpu_us_per_pod=%.0f (median of %d, back to back)\n",
	       tag, median(on, rounds), sx_cache_snapshot_nodes(cache), n, son, (long long)hints,
	       threads, median(con, rounds), rounds);
	printf("bench cycle_homogeneous%s_batch_on_of_off %.2f ratio rounds=%d\n", tag,
	       median(ratio, rounds), rounds);
	for (uint32_t i = 0; i < n; i++)
		sx_pod_unref(pods[i]);
	free(pods);
}

/* Busy for us microseconds: the caller's share of a request (HTTP parse,
 * reply) between two passes, during which pool workers may go to sleep. */
static void busy_us(double us)
{
	double end = sx_now_s() + us / 1e6;

	while (sx_now_s() < end)
		;
}

/* p50/p99 of single Filter (FILTER_ONLY) and PreScore+Score (SCORE_ONLY)
 * passes over 500 named nodes, as the extender runs them for one
 * nodeCacheCapable request: a fresh window of names per call. */
static void bench_latency(struct sx_cache *cache, const struct sx_config *cfg, const char *path,
			  unsigned threads, double gap_us)
{
	enum { NAMES = 500, CALLS = 2000 };
	static const char *const mode_name[] = {"filter", "prioritize"};
	uint32_t npods;
	struct sx_pod **pods = load_pending(path, &npods);
	const struct sx_profile *prof = sx_config_profile(cfg, NULL);
	struct sx_pool *pool = threads > 1 ? sx_pool_new(threads - 1) : NULL;
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	sx_str *names = calloc(NAMES, sizeof(*names));
	double *lat = calloc(CALLS, sizeof(*lat));

	for (int m = 0; m < 2 && npods > 0 && snap->nnodes >= NAMES; m++) {
		for (uint32_t c = 0; c < CALLS; c++) {
			uint32_t base = (c * 7919u) % snap->nnodes;
			for (uint32_t k = 0; k < NAMES; k++)
				names[k] = snap->nodes[(base + k * 9u) % snap->nnodes]->name;
			busy_us(gap_us);
			double t0 = sx_now_s();
			struct sx_snapshot *s = sx_cache_snapshot(cache);
			struct sx_cycle_opts opts = {
				.snap = s,
				.mode = m == 0 ? SX_CYCLE_FILTER_ONLY : SX_CYCLE_SCORE_ONLY,
				.candidates = names,
				.ncandidates = NAMES,
				.percentage = 100,
				.global_percentage = cfg->percentage_of_nodes_to_score,
				.pool = pool};
			struct sx_cycle_result res;
			sx_schedule(prof, pods[c % npods], &opts, &res);
			sx_cycle_result_free(&res);
			sx_snapshot_unref(s);
			lat[c] = sx_now_s() - t0;
		}
		qsort(lat, CALLS, sizeof(*lat), cmp_double);
		printf("bench latency_%s_names500 %.3f ms p50 p99=%.3fms threads=%u gap_us=%.0f "
		       "calls=%u\n",
		       mode_name[m], lat[CALLS / 2] * 1e3, lat[CALLS * 99 / 100] * 1e3, threads,
		       gap_us, (unsigned)CALLS);
	}
	sx_snapshot_unref(snap);
	free(names);
	free(lat);
	for (uint32_t i = 0; i < npods; i++)
		sx_pod_unref(pods[i]);
	free(pods);
	sx_pool_free(pool);
}

int main(int argc, char **argv)
{
	const char *state = NULL, *extra = NULL, *pending = NULL, *label = "plain";
	const char *compare = NULL, *compare_label = "other";
	int rounds = 5;
	unsigned threads = 2;
	bool latency = false;
	double gap_us = 0;
	uint32_t homogeneous = 0;
	bool default_profile = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--latency")) {
			latency = true;
			continue;
		}
		if (!strcmp(argv[i], "--default-profile")) {
			default_profile = true;
			continue;
		}
		if (i + 1 >= argc)
			break;
		if (!strcmp(argv[i], "--gap-us"))
			gap_us = atof(argv[++i]);
		else if (!strcmp(argv[i], "--state"))
			state = argv[++i];
		else if (!strcmp(argv[i], "--extra-state"))
			extra = argv[++i];
		else if (!strcmp(argv[i], "--pending"))
			pending = argv[++i];
		else if (!strcmp(argv[i], "--label"))
			label = argv[++i];
		else if (!strcmp(argv[i], "--threads"))
			threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--compare"))
			compare = argv[++i];
		else if (!strcmp(argv[i], "--compare-label"))
			compare_label = argv[++i];
		else if (!strcmp(argv[i], "--homogeneous"))
			homogeneous = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
	}
	if (!state) {
		fprintf(stderr,
			"usage: cycle_bench --state FILE [--extra-state FILE] [--pending FILE "
			"--label NAME [--compare FILE --compare-label NAME --rounds N]] "
			"[--threads N] [--latency [--gap-us US]]\n");
		return 2;
	}
	sx_intern_init();
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_default(&err);
	struct sx_cache *cache = sx_cache_new();
	long rss0 = rss_kib();
	double t0 = sx_now_s();
	if (sx_state_load_file(cache, state, &err) < 0) {
		fprintf(stderr, "load: %s %s\n", err.msg, err.path);
		return 1;
	}
	if (extra && sx_state_load_file(cache, extra, &err) < 0) {
		fprintf(stderr, "load %s: %s %s\n", extra, err.msg, err.path);
		return 1;
	}
	double load_s = sx_now_s() - t0;
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	double snap_s = sx_now_s() - t0 - load_s;
	struct sx_cache_stats st;
	sx_cache_stats(cache, &st);
	/* The JSON trees are freed; hand their pages back so RSS shows the model. */
	malloc_trim(0);
	long rss = rss_kib();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (!pending && !homogeneous) {
		printf("bench ingest_state_file %.2f s nodes=%u pods=%u (parse+decode+apply, 1 "
		       "thread)\n",
		       load_s, st.nodes, st.pods);
		printf("bench first_snapshot %.1f ms nodes=%u\n", snap_s * 1000, st.nodes);
		printf("bench rss_after_load %.1f MB nodes=%u pods=%u peak_during_load=%.1fMB\n",
		       (rss - rss0) / 1024.0, st.nodes, st.pods, ru.ru_maxrss / 1024.0);
		printf("bench bytes_per_pod %.0f B (rss after load / (pods + nodes*30))\n",
		       (rss - rss0) * 1024.0 / (st.pods + st.nodes * 30.0));
		printf("bench intern_strings %zu count bytes=%zu\n", sx_intern_count(),
		       sx_intern_bytes());
	}
	sx_snapshot_unref(snap);
	if (homogeneous)
		bench_homogeneous(cache, homogeneous, rounds, threads, default_profile);
	else if (pending && compare)
		bench_compare(cache, pending, label, compare, compare_label, rounds, threads);
	else if (pending && latency)
		bench_latency(cache, cfg, pending, threads, gap_us);
	else if (pending)
		bench_cycles(cache, cfg, pending, label, threads);
	sx_cache_free(cache);
	sx_config_free(cfg);
	return 0;
}
