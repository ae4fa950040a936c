/* Runs the upstream-transcribed plugin tables in test/fixtures/<Plugin>/
 * (format: test/fixtures/README.md) through the real runtime with a
 * profile that enables only the plugin under test. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/registry.h"

#define FIXTURE_DIR "test/fixtures"

static int cases_run;

/* The release and gates a case runs with: "emulatedVersion" ("1.35") and
 * "featureGates" ("A=true,B=false") of the case, else of the file, else the
 * defaults (SX_RELEASE_DEFAULT). */
static bool case_features(const cJSON *root, const cJSON *tc, struct sx_features *f)
{
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(tc, "emulatedVersion");
	const cJSON *gates = cJSON_GetObjectItemCaseSensitive(tc, "featureGates");
	struct sx_error err = {0};
	int minor = SX_RELEASE_DEFAULT;

	if (!ver)
		ver = cJSON_GetObjectItemCaseSensitive(root, "emulatedVersion");
	if (!gates)
		gates = cJSON_GetObjectItemCaseSensitive(root, "featureGates");
	if (cJSON_IsString(ver) && sx_features_parse_release(ver->valuestring, &minor, &err) < 0) {
		sx_test_fail(__FILE__, __LINE__, "emulatedVersion: %s", err.msg);
		return false;
	}
	sx_features_init(f, minor);
	if (cJSON_IsString(gates) && sx_features_set(f, gates->valuestring, &err) < 0) {
		sx_test_fail(__FILE__, __LINE__, "featureGates: %s", err.msg);
		return false;
	}
	return true;
}

static struct sx_config *single_plugin_config(const char *plugin, const cJSON *args,
					      const struct sx_features *f)
{
	struct sx_buf b;
	struct sx_error err = {0};
	sx_buf_init(&b);
	sx_buf_puts(&b, "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\","
			"\"kind\":\"KubeSchedulerConfiguration\",\"profiles\":[{"
			"\"schedulerName\":\"default-scheduler\",\"plugins\":{\"multiPoint\":"
			"{\"enabled\":[{\"name\":");
	sx_json_str(&b, plugin);
	sx_buf_puts(&b, "}],\"disabled\":[{\"name\":\"*\"}]}}");
	if (args) {
		char *a = cJSON_PrintUnformatted(args);
		sx_buf_puts(&b, ",\"pluginConfig\":[{\"name\":");
		sx_json_str(&b, plugin);
		sx_buf_printf(&b, ",\"args\":%s}]", a ? a : "null");
		free(a);
	}
	sx_buf_puts(&b, "}]}");
	struct sx_config *cfg = sx_config_parse_for(b.data, b.len, f, &err);
	if (!cfg)
		sx_test_fail(__FILE__, __LINE__, "config for %s: %s (%s)", plugin, err.msg,
			     err.path);
	sx_buf_free(&b);
	return cfg;
}

/* Decodes every object of a JSON array into objs (kind from the item or `kind`). */
static int decode_list(const cJSON *list, const char *kind, struct sx_object *objs, uint32_t *n,
		       const char *what)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, list)
	{
		struct sx_error err = {0};
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(item, "kind");
		if (sx_decode_object(item, cJSON_IsString(k) ? NULL : kind, &objs[*n], &err) < 0) {
			sx_test_fail(__FILE__, __LINE__, "decode %s: %s at %s", what, err.msg,
				     err.path);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

static struct sx_cache *build_cache(const cJSON *tc)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(tc, "nodes");
	const cJSON *pods = cJSON_GetObjectItemCaseSensitive(tc, "pods");
	const cJSON *others = cJSON_GetObjectItemCaseSensitive(tc, "objects");
	uint32_t cap = (uint32_t)(cJSON_GetArraySize(nodes) + cJSON_GetArraySize(pods) +
				  cJSON_GetArraySize(others)) +
		       1;
	struct sx_object *objs = calloc(cap, sizeof(*objs));
	uint32_t n = 0;
	struct sx_cache *cache = sx_cache_new();
	int rc = decode_list(nodes, "Node", objs, &n, "node");
	if (!rc)
		rc = decode_list(pods, "Pod", objs, &n, "pod");
	if (!rc)
		rc = decode_list(others, NULL, objs, &n, "object");
	if (rc) {
		for (uint32_t i = 0; i < n; i++)
			sx_object_unref(&objs[i]);
		n = 0;
	}
	if (sx_cache_load(cache, objs, n) < 0)
		sx_test_fail(__FILE__, __LINE__, "cache load failed");
	free(objs);
	return cache;
}

static void check_status(const char *tcname, const char *node, const struct sx_status *got,
			 const cJSON *want)
{
	if (!want || cJSON_IsNull(want)) {
		if (got) {
			char msg[1024];
			sx_test_fail(__FILE__, __LINE__,
				     "[%s] node %s: expected success, got %s: %s", tcname, node,
				     sx_code_name(got->code),
				     sx_status_message(got, msg, sizeof(msg)));
		}
		return;
	}
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(want, "code");
	const cJSON *reasons = cJSON_GetObjectItemCaseSensitive(want, "reasons");
	if (!got) {
		sx_test_fail(__FILE__, __LINE__, "[%s] node %s: expected %s, got success", tcname,
			     node, cJSON_IsString(code) ? code->valuestring : "?");
		return;
	}
	if (cJSON_IsString(code) && strcmp(code->valuestring, sx_code_name(got->code)) != 0)
		sx_test_fail(__FILE__, __LINE__, "[%s] node %s: code %s, expected %s", tcname, node,
			     sx_code_name(got->code), code->valuestring);
	if (!reasons)
		return;
	int nr = cJSON_GetArraySize(reasons);
	if (nr != (int)got->nreasons) {
		char msg[1024];
		sx_test_fail(__FILE__, __LINE__,
			     "[%s] node %s: reasons \"%s\", expected %d reasons", tcname, node,
			     sx_status_message(got, msg, sizeof(msg)), nr);
		return;
	}
	for (int r = 0; r < nr; r++) {
		const cJSON *w = cJSON_GetArrayItem(reasons, r);
		if (!cJSON_IsString(w) || strcmp(w->valuestring, got->reasons[r]) != 0)
			sx_test_fail(__FILE__, __LINE__,
				     "[%s] node %s: reason \"%s\", expected \"%s\"", tcname, node,
				     got->reasons[r], cJSON_IsString(w) ? w->valuestring : "?");
	}
}

/* Does the expected status say Skip (a PreFilter outcome the cycle result
 * does not show)? */
static bool wants_skip(const cJSON *want)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(want, "code");

	return cJSON_IsString(code) && strcmp(code->valuestring, "Skip") == 0;
}

/* Calls the plugin's PreFilter directly and checks it returns Skip. */
static void check_skip(const char *tcname, const char *plugin, const struct sx_profile *prof,
		       const struct sx_snapshot *snap, const struct sx_pod *pod)
{
	int idx = sx_plugin_index(plugin);
	struct sx_cycle_state *cs = sx_cycle_state_new(snap);
	struct sx_node_set *set = NULL;
	struct sx_status *st;

	if (idx < 0 || !cs || !sx_plugins[idx]->pre_filter) {
		sx_test_fail(__FILE__, __LINE__, "[%s] no PreFilter to expect Skip from", tcname);
		sx_cycle_state_free(prof, cs);
		return;
	}
	st = sx_plugins[idx]->pre_filter(prof->instances[idx], cs, pod, &set);
	if (sx_status_code(st) != SX_SKIP)
		sx_test_fail(__FILE__, __LINE__, "[%s] PreFilter %s, expected Skip", tcname,
			     sx_code_name(sx_status_code(st)));
	sx_status_free(st);
	free(set);
	sx_cycle_state_free(prof, cs);
}

static void run_filter(const char *tcname, const struct sx_profile *prof,
		       const struct sx_snapshot *snap, const struct sx_pod *pod,
		       const cJSON *expect)
{
	struct sx_cycle_result res;
	struct sx_cycle_opts opts = {.snap = snap, .mode = SX_CYCLE_FILTER_ONLY, .percentage = 100};
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(expect, "preFilter");
	const cJSON *filter = cJSON_GetObjectItemCaseSensitive(expect, "filter"), *want;
	CHECK_INT(sx_schedule(prof, pod, &opts, &res), 0);
	if (res.error) {
		char msg[1024];
		sx_test_fail(__FILE__, __LINE__, "[%s] unexpected error: %s", tcname,
			     sx_status_message(res.error, msg, sizeof(msg)));
	}
	if (pre)
		check_status(tcname, "(preFilter)", res.pre_filter, wants_skip(pre) ? NULL : pre);
	cJSON_ArrayForEach(want, filter)
	{
		int at = sx_snapshot_find(snap, sx_intern(want->string));
		if (at < 0) {
			sx_test_fail(__FILE__, __LINE__, "[%s] unknown node %s", tcname,
				     want->string);
			continue;
		}
		const struct sx_status *got = res.pre_filter ? res.pre_filter : res.statuses[at];
		check_status(tcname, want->string, got, want);
	}
	sx_cycle_result_free(&res);
}

static void check_scores(const char *tcname, const struct sx_snapshot *snap,
			 const struct sx_cycle_result *res, const cJSON *want, bool raw)
{
	const cJSON *w;
	cJSON_ArrayForEach(w, want)
	{
		int at = sx_snapshot_find(snap, sx_intern(w->string));
		int pos = -1;
		for (uint32_t i = 0; at >= 0 && i < res->nfeasible; i++)
			if (res->feasible[i] == (uint32_t)at)
				pos = (int)i;
		if (pos < 0 || res->nscore_plugins == 0) {
			sx_test_fail(__FILE__, __LINE__, "[%s] node %s not scored", tcname,
				     w->string);
			continue;
		}
		bool skipped = res->score_skipped[0];
		if (cJSON_IsNull(w)) {
			if (!skipped)
				sx_test_fail(__FILE__, __LINE__, "[%s] node %s: expected no score",
					     tcname, w->string);
			continue;
		}
		int64_t got = (raw ? res->raw : res->normalized)[(size_t)pos * res->nscore_plugins];
		if (skipped || !cJSON_IsNumber(w) || got != (int64_t)w->valuedouble)
			sx_test_fail(__FILE__, __LINE__,
				     "[%s] node %s: %s score %lld%s, expected %g", tcname,
				     w->string, raw ? "raw" : "normalized", (long long)got,
				     skipped ? " (skipped)" : "", w->valuedouble);
	}
}

static void run_score(const char *tcname, const struct sx_profile *prof,
		      const struct sx_snapshot *snap, const struct sx_pod *pod, const cJSON *expect)
{
	struct sx_cycle_result res;
	struct sx_cycle_opts opts = {.snap = snap, .mode = SX_CYCLE_SCORE_ONLY, .percentage = 100};
	const cJSON *scores = cJSON_GetObjectItemCaseSensitive(expect, "scores");
	const cJSON *raw = cJSON_GetObjectItemCaseSensitive(expect, "raw");
	CHECK_INT(sx_schedule(prof, pod, &opts, &res), 0);
	if (res.error) {
		char msg[1024];
		sx_test_fail(__FILE__, __LINE__, "[%s] unexpected error: %s", tcname,
			     sx_status_message(res.error, msg, sizeof(msg)));
	} else {
		if (scores)
			check_scores(tcname, snap, &res, scores, false);
		if (raw)
			check_scores(tcname, snap, &res, raw, true);
	}
	sx_cycle_result_free(&res);
}

static void run_case(const char *plugin, const cJSON *root, const cJSON *file_args, const cJSON *tc)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(tc, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(tc, "args");
	const cJSON *expect = cJSON_GetObjectItemCaseSensitive(tc, "expect");
	const char *tcname = cJSON_IsString(name) ? name->valuestring : "?";
	struct sx_error err = {0};
	struct sx_features f;
	if (!case_features(root, tc, &f))
		return;
	struct sx_config *cfg = single_plugin_config(plugin, args ? args : file_args, &f);
	if (!cfg)
		return;
	struct sx_pod *pod = sx_decode_pod(cJSON_GetObjectItemCaseSensitive(tc, "pod"), &err);
	if (!pod) {
		sx_test_fail(__FILE__, __LINE__, "[%s] pod: %s at %s", tcname, err.msg, err.path);
		sx_config_free(cfg);
		return;
	}
	struct sx_cache *cache = build_cache(tc);
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	const struct sx_profile *prof = sx_config_profile(cfg, NULL);
	if (cJSON_GetObjectItemCaseSensitive(expect, "filter") ||
	    cJSON_GetObjectItemCaseSensitive(expect, "preFilter"))
		run_filter(tcname, prof, snap, pod, expect);
	if (wants_skip(cJSON_GetObjectItemCaseSensitive(expect, "preFilter")))
		check_skip(tcname, plugin, prof, snap, pod);
	if (cJSON_GetObjectItemCaseSensitive(expect, "scores") ||
	    cJSON_GetObjectItemCaseSensitive(expect, "raw"))
		run_score(tcname, prof, snap, pod, expect);
	cases_run++;
	sx_snapshot_unref(snap);
	sx_cache_free(cache);
	sx_pod_unref(pod);
	sx_config_free(cfg);
}

static void run_file(const char *path)
{
	size_t len;
	char *data = sx_test_read_file(path, &len);
	cJSON *root = data ? cJSON_ParseWithLength(data, len) : NULL;
	const cJSON *plugin = cJSON_GetObjectItemCaseSensitive(root, "plugin");
	const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases"), *tc;
	if (!cJSON_IsString(plugin) || !cJSON_IsArray(cases)) {
		sx_test_fail(__FILE__, __LINE__, "%s: not a fixture file", path);
	} else {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
		int before = sx_test_failures;
		cJSON_ArrayForEach(tc, cases) run_case(plugin->valuestring, root, args, tc);
		if (sx_test_failures != before)
			fprintf(stderr, "  in %s\n", path);
	}
	cJSON_Delete(root);
	free(data);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.json under test/fixtures/<dir>/ except state/ (cache fixtures). */
static void test_plugin_fixtures(void)
{
	DIR *top = opendir(FIXTURE_DIR);
	struct dirent *d;
	char *paths[4096];
	unsigned n = 0;
	CHECK(top != NULL);
	while (top && (d = readdir(top)) != NULL && n < 4096) {
		if (d->d_name[0] == '.' || strcmp(d->d_name, "state") == 0)
			continue;
		char dir[512];
		snprintf(dir, sizeof(dir), FIXTURE_DIR "/%s", d->d_name);
		DIR *sub = opendir(dir);
		struct dirent *f;
		while (sub && (f = readdir(sub)) != NULL && n < 4096) {
			size_t l = strlen(f->d_name);
			if (l > 5 && strcmp(f->d_name + l - 5, ".json") == 0) {
				char *p = malloc(strlen(dir) + l + 2);
				sprintf(p, "%s/%s", dir, f->d_name);
				paths[n++] = p;
			}
		}
		if (sub)
			closedir(sub);
	}
	if (top)
		closedir(top);
	qsort(paths, n, sizeof(*paths), cmp_str);
	for (unsigned i = 0; i < n; i++) {
		run_file(paths[i]);
		free(paths[i]);
	}
	printf("fixture cases run: %d\n", cases_run);
}

SX_TESTS(SX_TEST(test_plugin_fixtures))
