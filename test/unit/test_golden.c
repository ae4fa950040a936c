/* Replays real kube-scheduler decisions recorded on random clusters
 * (../shared/k8s/golden/<version>/seed-N.json beside the repository; its
 * README says how they were recorded): for each file, the profile its
 * kube-scheduler reported, the release it ran (1.35.7 as
 * --emulated-version 1.35, 1.36.3 as 1.36), its initial cluster, then
 * each pending pod in turn against the initial cluster plus the earlier
 * bound pods on their recorded nodes. Every step must agree:
 *   - the verdict (bound or unschedulable);
 *   - for a bound step, our set of best-scored nodes equals the recorded
 *     bestNodes (kube-scheduler picks one of them at random; one feasible
 *     node is not scored and is its own set);
 *   - for an unschedulable step, the FailedScheduling message, whole,
 *     PostFilter (preemption) text included.
 * The cycle is the explainer's (src/explain/explain.c): percentage 100,
 * every feasible node scored, PostFilter as a dry run.
 *
 * Without the folder (a clone without ../shared) the test prints one SKIP
 * line and passes. GOLDEN_DIR overrides the folder; GOLDEN_VERBOSE=1
 * prints each disagreeing step's per-plugin scores. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/intern.h"
#include "schedext/node_info.h"
#include "schedext/plugin.h"
#include "schedext/post_filter.h"
#include "schedext/snapshot.h"
#include "schedext/state.h"
#include "schedext/status.h"

static const char *golden_dir(void)
{
	const char *d = getenv("GOLDEN_DIR");
	return d && *d ? d : "../shared/k8s/golden";
}

static bool verbose(void)
{
	const char *v = getenv("GOLDEN_VERBOSE");
	return v && *v && strcmp(v, "0") != 0;
}

struct tally {
	int steps, agree, verdict, best, message;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Our best-scored nodes: the feasible nodes sharing the top total (the
 * one feasible node when only one is). Names sorted; caller frees the
 * array (names belong to the intern table). */
static const char **best_nodes(const struct sx_snapshot *snap, const struct sx_cycle_result *res,
			       uint32_t *n)
{
	const char **out = calloc(res->nfeasible + 1, sizeof(*out));
	int64_t top = INT64_MIN;
	*n = 0;
	if (!out)
		return NULL;
	if (res->nfeasible == 1 || !res->totals) {
		for (uint32_t i = 0; i < res->nfeasible; i++)
			out[(*n)++] = sx_str_get(snap->nodes[res->feasible[i]]->name);
	} else {
		for (uint32_t i = 0; i < res->nfeasible; i++)
			if (res->totals[i] > top)
				top = res->totals[i];
		for (uint32_t i = 0; i < res->nfeasible; i++)
			if (res->totals[i] == top)
				out[(*n)++] = sx_str_get(snap->nodes[res->feasible[i]]->name);
	}
	qsort(out, *n, sizeof(*out), cmp_str);
	return out;
}

static void print_scores(const struct sx_snapshot *snap, const struct sx_cycle_result *res,
			 const cJSON *recorded)
{
	for (uint32_t i = 0; i < res->nfeasible && res->totals; i++) {
		const char *name = sx_str_get(snap->nodes[res->feasible[i]]->name);
		bool rec = false;
		const cJSON *r;
		cJSON_ArrayForEach(r, recorded) rec |=
			cJSON_IsString(r) && !strcmp(r->valuestring, name);
		fprintf(stderr, "      %s%-10s total %3lld:", rec ? "*" : " ", name,
			(long long)res->totals[i]);
		for (uint32_t p = 0; p < res->nscore_plugins; p++)
			fprintf(stderr, " %s=%lld/%lld", res->score_plugins[p].plugin->name,
				(long long)res->raw[i * res->nscore_plugins + p],
				(long long)res->normalized[i * res->nscore_plugins + p]);
		fprintf(stderr, "\n");
	}
}

static bool same_set(const char **ours, uint32_t n, const cJSON *recorded)
{
	uint32_t m = (uint32_t)cJSON_GetArraySize(recorded), k = 0;
	const char **theirs;
	const cJSON *r;
	bool same = n == m;
	if (!same)
		return false;
	theirs = calloc(m + 1, sizeof(*theirs));
	if (!theirs)
		return false;
	cJSON_ArrayForEach(r, recorded) theirs[k++] = cJSON_IsString(r) ? r->valuestring : "";
	qsort(theirs, m, sizeof(*theirs), cmp_str);
	for (uint32_t i = 0; same && i < n; i++)
		same = strcmp(ours[i], theirs[i]) == 0;
	free(theirs);
	return same;
}

static void print_set(const char *label, const char **names, uint32_t n)
{
	fprintf(stderr, "    %s [", label);
	for (uint32_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? " " : "", names[i]);
	fprintf(stderr, "]\n");
}

/* Binds a copy of the step's pod to `node` in the cache. */
static int bind_pod(struct sx_cache *cache, const cJSON *pod, const char *node)
{
	struct sx_error err = {0};
	struct sx_object obj;
	cJSON *copy = cJSON_Duplicate(pod, true);
	cJSON *spec = copy ? cJSON_GetObjectItemCaseSensitive(copy, "spec") : NULL;
	int rc;
	if (!spec) {
		cJSON_Delete(copy);
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
	cJSON_AddStringToObject(spec, "nodeName", node);
	rc = sx_decode_object(copy, "Pod", &obj, &err);
	cJSON_Delete(copy);
	if (rc < 0) {
		fprintf(stderr, "    bind: %s\n", err.msg);
		return rc;
	}
	return sx_cache_upsert(cache, &obj);
}

/* One step: schedule, compare, and bind when the recording bound. */
static void replay_step(const struct sx_profile *prof, struct sx_cache *cache, const cJSON *step,
			int k, struct tally *t)
{
	const cJSON *podj = cJSON_GetObjectItemCaseSensitive(step, "pod");
	const char *outcome = sx_json_string(step, "outcome");
	const char *node = sx_json_string(step, "node");
	const cJSON *best = cJSON_GetObjectItemCaseSensitive(step, "bestNodes");
	const char *message = sx_json_string(step, "message");
	struct sx_error err = {0};
	struct sx_pod *pod = sx_decode_pod(podj, &err);
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	struct sx_cycle_result res;
	uint64_t rng = 0x5eed;
	bool bound = outcome && strcmp(outcome, "bound") == 0, ok = false;
	const char *name =
		pod ? sx_json_string(cJSON_GetObjectItemCaseSensitive(podj, "metadata"), "name")
		    : "?";

	t->steps++;
	if (!pod || !snap) {
		sx_test_fail(__FILE__, __LINE__, "step %d: pod: %s", k, err.msg);
		goto out;
	}
	struct sx_cycle_opts opts = {
		.snap = snap,
		.mode = SX_CYCLE_FULL,
		.percentage = 100,
		.rng = &rng,
		.always_score = true,
	};
	if (sx_schedule(prof, pod, &opts, &res) < 0) {
		sx_test_fail(__FILE__, __LINE__, "step %d: out of memory", k);
		sx_cycle_result_free(&res);
		goto out;
	}
	bool ours_bound = res.selected >= 0 && !res.error;
	if (ours_bound != bound) {
		fprintf(stderr, "  step %d %s: verdict %s, recorded %s%s%s\n", k, name,
			ours_bound ? "bound" : "unschedulable", outcome ? outcome : "?",
			res.message ? ": ours " : "", res.message ? res.message : "");
		if (message)
			fprintf(stderr, "    recorded: %s\n", message);
	} else if (bound) {
		uint32_t n = 0;
		const char **ours = best_nodes(snap, &res, &n);
		t->verdict++;
		if (ours && same_set(ours, n, best)) {
			ok = true;
		} else {
			char *rec = cJSON_PrintUnformatted(best);
			fprintf(stderr, "  step %d %s: best nodes differ; recorded %s\n", k, name,
				rec ? rec : "?");
			if (ours)
				print_set("ours", ours, n);
			free(rec);
			if (verbose())
				print_scores(snap, &res, best);
		}
		free(ours);
	} else {
		struct sx_fit_outcome fo = {.nominated_node = SX_STR_EMPTY};
		t->verdict++;
		if (res.error) {
			char buf[512];
			fprintf(stderr, "  step %d %s: error %s\n", k, name,
				sx_status_message(res.error, buf, sizeof(buf)));
		} else if (sx_fit_error_post_filter(prof, pod, &res, true, NULL, &fo) < 0) {
			sx_test_fail(__FILE__, __LINE__, "step %d: out of memory", k);
		} else if (fo.message && message && strcmp(fo.message, message) == 0) {
			ok = true;
		} else {
			fprintf(stderr,
				"  step %d %s: message differs\n    ours:     %s\n    recorded: "
				"%s\n",
				k, name, fo.message ? fo.message : "(none)",
				message ? message : "(none)");
		}
		sx_fit_outcome_free(&fo);
	}
	if (ok) {
		t->agree++;
		if (bound)
			t->best++;
		else
			t->message++;
	}
	sx_cycle_result_free(&res);
out:
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	if (bound && node && bind_pod(cache, podj, node) < 0)
		sx_test_fail(__FILE__, __LINE__, "step %d: cannot bind %s to %s", k, name, node);
}

/* Replays one file; adds to *t. */
static void replay_file(const char *path, int minor, struct tally *t)
{
	size_t len = 0;
	char *data = sx_test_read_file(path, &len);
	cJSON *doc = data ? cJSON_ParseWithLength(data, len) : NULL;
	struct sx_error err = {0};
	struct sx_features f;
	struct sx_config *cfg = NULL;
	struct sx_cache *cache = NULL;
	struct tally ft = {0};
	char *cfgjson = NULL;
	cJSON *docs = NULL;
	const cJSON *step;
	int k = 0;

	free(data);
	if (!doc) {
		sx_test_fail(__FILE__, __LINE__, "%s: cannot read", path);
		return;
	}
	sx_features_init(&f, minor);
	cfgjson = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(doc, "config"));
	cfg = cfgjson ? sx_config_parse_for(cfgjson, strlen(cfgjson), &f, &err) : NULL;
	if (!cfg) {
		sx_test_fail(__FILE__, __LINE__, "%s: config: %s", path, err.msg);
		goto out;
	}
	sx_config_set_pod_decoding(cfg); /* pods decode as this release's scheduler */
	cache = sx_cache_new();
	docs = cJSON_CreateArray();
	cJSON_AddItemReferenceToArray(docs, cJSON_GetObjectItemCaseSensitive(doc, "initial"));
	if (sx_state_load_documents(cache, path, docs, &err) < 0) {
		sx_test_fail(__FILE__, __LINE__, "%s: initial: %s", path, err.msg);
		goto out;
	}
	fprintf(stderr, "%s\n", path);
	cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(doc, "steps"))
		replay_step(cfg->profiles[0], cache, step, k++, &ft);
	fprintf(stderr,
		"  %d/%d steps agree (bound: %d/%d best-node sets; unschedulable: %d "
		"messages)\n",
		ft.agree, ft.steps, ft.best, ft.verdict - ft.message, ft.message);
	if (ft.agree != ft.steps)
		sx_test_fail(__FILE__, __LINE__, "%s: %d of %d steps disagree", path,
			     ft.steps - ft.agree, ft.steps);
	t->steps += ft.steps;
	t->agree += ft.agree;
out:
	cJSON_Delete(docs);
	sx_cache_free(cache);
	sx_config_free(cfg);
	free(cfgjson);
	cJSON_Delete(doc);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every seed-*.json of <golden>/<version>, in name order. */
static void replay_version(const char *version, int minor)
{
	char dir[4096], path[4096 + 256];
	char *names[64];
	uint32_t n = 0;
	struct tally t = {0};
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", golden_dir(), version);
	d = opendir(dir);
	if (!d) {
		sx_test_fail(__FILE__, __LINE__, "%s: missing", dir);
		return;
	}
	while ((e = readdir(d)) && n < 64)
		if (!strncmp(e->d_name, "seed-", 5) && strstr(e->d_name, ".json"))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_name);
	CHECK(n > 0);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		replay_file(path, minor, &t);
		free(names[i]);
	}
	printf("golden %s (--emulated-version 1.%d): %d/%d steps agree in %u files\n", version,
	       minor, t.agree, t.steps, n);
}

static bool present(void)
{
	struct stat st;
	if (stat(golden_dir(), &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	printf("SKIP: %s absent (recorded kube-scheduler decisions; CI has ../shared beside the "
	       "clone)\n",
	       golden_dir());
	return false;
}

static void test_golden_1_35(void)
{
	if (present())
		replay_version("1.35.7", 35);
}

static void test_golden_1_36(void)
{
	if (present())
		replay_version("1.36.3", 36);
}

SX_TESTS(SX_TEST(test_golden_1_35), SX_TEST(test_golden_1_36))
