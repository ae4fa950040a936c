/* Allocation-failure sweep: linked with -Wl,--wrap for malloc,
 * calloc, realloc, strdup, strndup, asprintf and vasprintf (see the
 * Makefile) and with cJSON's hooks pointed at the wrapper, so the N-th
 * allocation of the calling thread fails. Each scenario is first run with
 * counting only (its allocation count T and its reference result), then
 * for every N in 1..T with the N-th allocation failing. For each N:
 *
 *   - no crash, no leak (LeakSanitizer checks after each run in ASan
 *     builds);
 *   - the result is an error (HTTP 4xx/5xx {"error"} or a non-empty
 *     "Error", an Error status, a negative return with a message) or
 *     exactly the reference result; never a different success;
 *   - the cache equals a recount from scratch (test/recount.h), and a
 *     rejected change left it as it was.
 *
 * Scenarios: each extender verb (both node modes), one scheduling cycle of
 * a pod touching every default plugin, one with claims of each kind
 * VolumeBinding handles (with Reserve and Unreserve), one state-file load,
 * one watch event of each kind for nodes and pods, one binding cycle. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

#include "harness.h"
#include "recount.h"
#include "schedext/binder.h"
#include "schedext/handle.h"
#include "schedext/binding_cycle.h"
#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/extender.h"
#include "schedext/framework.h"
#include "schedext/informer.h"
#include "schedext/registry.h"
#include "schedext/state.h"
#include "schedext/status.h"

/* ---------- the failing allocator ---------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

static long fail_at; /* 0: off; else the allocation number that fails */
static long allocs;  /* allocations of the armed thread so far */
static int failed;   /* the armed allocation did fail */
static pthread_t armed_thread;

static bool fail_now(void)
{
	if (!fail_at || !pthread_equal(pthread_self(), armed_thread))
		return false;
	if (++allocs != fail_at)
		return false;
	failed = 1;
	return true;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (fail_now()) {
		*out = NULL;
		return -1;
	}
	return __real_vasprintf(out, fmt, ap);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = __wrap_vasprintf(out, fmt, ap);
	va_end(ap);
	return rc;
}

static void arm(long n)
{
	armed_thread = pthread_self();
	allocs = 0;
	failed = 0;
	fail_at = n;
}

static long disarm(void)
{
	fail_at = 0;
	return allocs;
}

/* ---------- fixture ---------- */

static const char cluster[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\",\"labels\":{\"topology.kubernetes.io/"
	"zone\":\"z1\","
	"\"kubernetes.io/hostname\":\"a\"}},\"spec\":{\"taints\":[{\"key\":\"t\",\"value\":\"v\","
	"\"effect\":\"PreferNoSchedule\"}]},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":"
	"\"8Gi\","
	"\"pods\":\"110\"},\"images\":[{\"names\":[\"nginx:1\"],\"sizeBytes\":1000000},{"
	"\"sizeBytes\":1}]}},"
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\",\"labels\":{\"topology.kubernetes.io/"
	"zone\":\"z2\","
	"\"kubernetes.io/hostname\":\"b\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"}}},"
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"c\",\"labels\":{\"topology.kubernetes.io/"
	"zone\":\"z1\","
	"\"kubernetes.io/hostname\":\"c\"}},\"spec\":{\"unschedulable\":true},"
	"\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"4Gi\",\"pods\":\"110\"}}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"low\",\"namespace\":\"default\",\"uid\":\"u-"
	"low\","
	"\"labels\":{\"app\":\"x\"}},\"spec\":{\"nodeName\":\"b\",\"priority\":0,\"containers\":"
	"[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"hostPort\":80}],\"resources\":"
	"{\"requests\":{\"cpu\":\"1500m\"}}}]},\"status\":{\"phase\":\"Running\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"mid\",\"namespace\":\"default\",\"uid\":\"u-"
	"mid\","
	"\"labels\":{\"app\":\"y\"}},\"spec\":{\"nodeName\":\"a\",\"priority\":5,\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}}]},\"status\":{\"phase\":"
	"\"Running\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"pend\",\"namespace\":\"default\",\"uid\":\"u-"
	"pend\"},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
	"]}";

/* A pod touching every default plugin: requests, host port, node
 * affinity, tolerations, inter-pod (anti-)affinity, spread, image. */
#define RICH_POD                                                                                   \
	"{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u-p\",\"labels\":"      \
	"{\"app\":\"x\"}},\"spec\":{\"priority\":100,\"containers\":[{\"name\":\"c\",\"image\":"   \
	"\"nginx:1\",\"ports\":[{\"containerPort\":81,\"hostPort\":81}],\"resources\":"            \
	"{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}],\"tolerations\":[{\"key\":\"t\","  \
	"\"operator\":\"Exists\"}],\"affinity\":{\"nodeAffinity\":{"                               \
	"\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"             \
	"\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/"                                 \
	"zone\",\"operator\":\"Exists\"}]}]},"                                                     \
	"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":3,\"preference\":{"      \
	"\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","      \
	"\"values\":[\"z1\"]}]}}]},\"podAntiAffinity\":{"                                          \
	"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":5,\"podAffinityTerm\":{" \
	"\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}},\"topologyKey\":"                     \
	"\"kubernetes.io/hostname\"}}]},\"podAffinity\":{"                                         \
	"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":2,\"podAffinityTerm\":{" \
	"\"labelSelector\":{\"matchLabels\":{\"app\":\"y\"}},\"topologyKey\":"                     \
	"\"topology.kubernetes.io/zone\"}}]}},\"topologySpreadConstraints\":[{\"maxSkew\":1,"      \
	"\"topologyKey\":\"topology.kubernetes.io/"                                                \
	"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\","                                         \
	"\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}}}]}}"

struct fixture {
	struct sx_cache *cache;
	struct sx_config *cfg;
	struct sx_extender ex;
};

static struct sx_config *cfg_default; /* made once; configs are read-only */

static void fixture_init(struct fixture *f)
{
	struct sx_error err = {0};

	memset(f, 0, sizeof(*f));
	f->cache = sx_cache_new();
	CHECK_INT(sx_state_load_buffer(f->cache, "cluster", cluster, strlen(cluster), &err), 0);
	f->ex.cache = f->cache;
	f->ex.cfg = cfg_default;
	f->ex.profile = sx_config_profile(cfg_default, NULL);
}

static void fixture_free(struct fixture *f)
{
	sx_cache_free(f->cache);
}

static const char *scenario; /* for debuggers: the scenario being swept */
static int leaks;
static int wrong; /* violations in the current scenario */

/* Records a violation for allocation n of scenario what (first few only). */
static void violation(const char *what, long n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void violation(const char *what, long n, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (++wrong <= (getenv("FAILALLOC_ALL") ? 100000 : 3))
		sx_test_fail(__FILE__, __LINE__, "%s, allocation %ld failing: %s", what, n, msg);
}

/* LeakSanitizer after every run with FAILALLOC_ALL (pinpoints N; slow),
 * else once per scenario (end_scenario). A leak stays reported by every
 * later check, so only the first is counted. */
static void leak_check(const char *what, long n)
{
	if (!leaks && LEAK_CHECK()) {
		leaks++;
		violation(what, n, "leak (LeakSanitizer report above)");
	}
}

static void after_run(struct sx_cache *cache, const char *what, long n)
{
	const char *diff = sx_recount_check(cache);

	if (diff)
		violation(what, n, "cache differs from its recount: %s", diff);
	if (getenv("FAILALLOC_ALL"))
		leak_check(what, n);
}

/* ---------- extender verbs ---------- */

typedef int (*verb_fn)(const struct sx_extender *, const char *, size_t, struct sx_buf *,
		       struct sx_verb_log *);

static bool reply_is_error(int status, const struct sx_buf *out)
{
	if (out->failed) /* the server answers 500 {"error":"out of memory"} */
		return true;
	cJSON *j = cJSON_ParseWithLength(out->data, out->len);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, status == 200 ? "Error" : "error");
	bool is = cJSON_IsString(e) && e->valuestring[0];

	cJSON_Delete(j);
	return is;
}

static void sweep_verb(const char *what, verb_fn fn, const char *body)
{
	struct fixture f;
	struct sx_verb_log log;
	struct sx_buf ref, out;
	int ref_status, status;
	long total;
	uint64_t gen0;

	scenario = what;
	fixture_init(&f);
	sx_buf_init(&ref);
	arm(LONG_MAX);
	ref_status = fn(&f.ex, body, strlen(body), &ref, &log);
	total = disarm();
	fixture_free(&f);
	CHECK(ref_status == 200 && !reply_is_error(ref_status, &ref));
	for (long n = 1; n <= total; n++) {
		fixture_init(&f);
		sx_buf_init(&out);
		memset(&log, 0, sizeof(log));
		gen0 = sx_cache_generation(f.cache);
		arm(n);
		status = fn(&f.ex, body, strlen(body), &out, &log);
		disarm();
		if (status != 200 && status != 500 && !out.failed)
			violation(what, n, "HTTP %d (want 500 on out of memory): %.*s", status,
				  (int)(out.len > 200 ? 200 : out.len), out.data ? out.data : "");
		if (reply_is_error(status, &out)) {
			if (sx_cache_generation(f.cache) != gen0)
				violation(what, n, "an error reply changed the cache");
		} else if (status != ref_status || out.len != ref.len ||
			   memcmp(out.data, ref.data, ref.len) != 0) {
			violation(what, n, "success differing from the reference: %.*s",
				  (int)(out.len > 300 ? 300 : out.len), out.data ? out.data : "");
		}
		sx_buf_free(&out);
		after_run(f.cache, what, n);
		fixture_free(&f);
	}
	sx_buf_free(&ref);
	leak_check(what, total);
	printf("  %s: %ld allocations swept, %d violations\n", what, total, wrong);
	wrong = 0;
}

static void test_extender_verbs(void)
{
	static const char nodes[] =
		"\"Nodes\":{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":"
		"{\"topology.kubernetes.io/"
		"zone\":\"z1\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\","
		"\"memory\":\"8Gi\",\"pods\":\"110\"}}},{\"metadata\":{\"name\":\"n\"},\"status\":"
		"{\"allocatable\":{\"cpu\":\"1\",\"pods\":\"9\"}}}]}";

	sweep_verb("filter NodeNames", sx_extender_filter,
		   "{\"Pod\":" RICH_POD ",\"NodeNames\":[\"a\",\"b\",\"c\",\"zz\"]}");
	sweep_verb("filter Nodes", sx_extender_filter,
		   "{\"Pod\":" RICH_POD
		   ",\"Nodes\":{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"a\","
		   "\"labels\":{\"topology.kubernetes.io/"
		   "zone\":\"z1\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\","
		   "\"pods\":\"110\"}}},{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":"
		   "{\"cpu\":\"1\",\"pods\":\"9\"}}}]}}");
	sweep_verb("prioritize NodeNames", sx_extender_prioritize,
		   "{\"Pod\":" RICH_POD ",\"NodeNames\":[\"a\",\"b\",\"zz\"]}");
	{
		char body[4096];

		snprintf(body, sizeof(body), "{\"Pod\":%s,%s}", RICH_POD, nodes);
		sweep_verb("prioritize Nodes", sx_extender_prioritize, body);
	}
	sweep_verb(
		"preempt", sx_extender_preempt,
		"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u-p\"},"
		"\"spec\":{\"priority\":100,\"containers\":[{\"name\":\"c\",\"resources\":{"
		"\"requests\":"
		"{\"cpu\":\"1500m\"}}}]}},\"NodeNameToMetaVictims\":{\"b\":{\"Pods\":[{\"UID\":\"u-"
		"low\"}],"
		"\"NumPDBViolations\":0},\"a\":{\"Pods\":[{\"UID\":\"u-mid\"}]}}}");
	sweep_verb("bind", sx_extender_bind,
		   "{\"PodName\":\"pend\",\"PodNamespace\":\"default\",\"PodUID\":\"u-pend\","
		   "\"Node\":\"a\"}");
}

/* ---------- one scheduling cycle ---------- */

static struct sx_pod *decode_pod(const char *json)
{
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);
	struct sx_pod *p = sx_decode_pod(j, &err);

	cJSON_Delete(j);
	CHECK(p != NULL);
	return p;
}

struct cycle_out {
	int rc;
	bool error;
	int selected;
	uint32_t nfeasible;
	int64_t total0;
};

static struct cycle_out run_cycle(struct fixture *f, const struct sx_pod *pod, long n)
{
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res;
	struct cycle_out o = {0};
	struct sx_snapshot *snap;

	arm(n);
	snap = sx_cache_snapshot(f->cache);
	if (!snap) {
		disarm();
		o.error = true;
		return o;
	}
	opts.snap = snap;
	opts.percentage = 100;
	o.rc = sx_schedule(f->ex.profile, pod, &opts, &res);
	disarm();
	o.error = o.rc < 0 || res.error != NULL;
	o.selected = res.selected;
	o.nfeasible = res.nfeasible;
	o.total0 = res.totals && res.nfeasible ? res.totals[0] : -1;
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	return o;
}

static void test_scheduling_cycle(void)
{
	struct sx_pod *pod = decode_pod(RICH_POD);
	struct fixture f;
	struct cycle_out ref, o;
	long total;

	fixture_init(&f);
	ref = run_cycle(&f, pod, LONG_MAX);
	total = allocs;
	fixture_free(&f);
	CHECK(!ref.error && ref.selected >= 0);
	for (long n = 1; n <= total; n++) {
		fixture_init(&f);
		o = run_cycle(&f, pod, n);
		if (!o.error && (o.selected != ref.selected || o.nfeasible != ref.nfeasible ||
				 o.total0 != ref.total0))
			violation("scheduling cycle", n,
				  "success differing from the reference: selected %d (want %d), "
				  "%u feasible (want %u), total %lld (want %lld)",
				  o.selected, ref.selected, o.nfeasible, ref.nfeasible,
				  (long long)o.total0, (long long)ref.total0);
		after_run(f.cache, "scheduling cycle", n);
		fixture_free(&f);
	}
	sx_pod_unref(pod);
	leak_check("scheduling cycle", total);
	printf("  scheduling cycle: %ld allocations swept, %d violations\n", total, wrong);
	wrong = 0;
}

/* ---------- one state-file load ---------- */

static void test_state_load(void)
{
	struct sx_cache_stats ref, st;
	struct sx_error err;
	struct fixture f;
	long total;
	int rc;

	fixture_init(&f); /* load the cluster again on top of an empty cache */
	sx_cache_free(f.cache);
	f.cache = sx_cache_new();
	arm(LONG_MAX);
	rc = sx_state_load_buffer(f.cache, "state", cluster, strlen(cluster), &err);
	total = disarm();
	CHECK_INT(rc, 0);
	sx_cache_stats(f.cache, &ref);
	fixture_free(&f);
	for (long n = 1; n <= total; n++) {
		struct sx_cache *c = sx_cache_new();

		memset(&err, 0, sizeof(err));
		arm(n);
		rc = sx_state_load_buffer(c, "state", cluster, strlen(cluster), &err);
		disarm();
		if (rc < 0) {
			struct sx_cache_stats empty = {0};

			sx_cache_stats(c, &st);
			if (memcmp(&st, &empty, sizeof(st)) != 0)
				violation("state load", n, "a failed load left objects behind");
			if (!err.msg[0])
				violation("state load", n, "failed without a message");
		} else {
			sx_cache_stats(c, &st);
			if (memcmp(&st, &ref, sizeof(st)) != 0)
				violation("state load", n, "success with different contents");
		}
		after_run(c, "state load", n);
		sx_cache_free(c);
	}
	leak_check("state load", total);
	printf("  state load: %ld allocations swept, %d violations\n", total, wrong);
	wrong = 0;
}

/* ---------- one watch event of each kind ---------- */

struct dump {
	struct sx_buf b;
};

static void dump_obj(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct dump *d = ctx;
	const struct sx_meta *m = sx_object_meta(obj);

	sx_buf_printf(&d->b, "%d %s/%s@%s on %s%s\n", obj->kind, sx_str_get(m->ns), m->name,
		      m->resource_version ? m->resource_version : "", sx_str_get(node),
		      assumed ? " assumed" : "");
}

static char *dump_cache(struct sx_cache *c)
{
	struct dump d;

	sx_buf_init(&d.b);
	sx_cache_visit(c, SX_KIND_NODE, dump_obj, &d);
	sx_cache_visit(c, SX_KIND_POD, dump_obj, &d);
	return d.b.data ? d.b.data : strdup("");
}

struct objs {
	struct sx_object v[64];
	uint32_t n;
};

static void collect_obj(void *ctx, const struct sx_object *obj, sx_str node, bool assumed)
{
	struct objs *o = ctx;

	if (o->n < 64) {
		o->v[o->n] = (struct sx_object){obj->kind, sx_recount_obj_ref(obj)};
		o->n++;
	}
}

/* What the informer does after a broken stream: list the kind again (here
 * from the reference cache, which holds what the server has) and
 * reconcile. */
static void relist(struct sx_cache *c, struct sx_cache *server, enum sx_kind kind)
{
	struct objs o = {.n = 0};

	sx_cache_visit(server, kind, collect_obj, &o);
	CHECK_INT(sx_cache_replace_all(c, kind, o.v, o.n), 0);
}

static void sweep_event(const char *what, enum sx_kind kind, const char *event)
{
	struct fixture f;
	struct sx_cache *server;
	char *ref, *got;
	int ref_rc, rc;
	long total;

	scenario = what;
	fixture_init(&f);
	arm(LONG_MAX);
	ref_rc = sx_informer_replay_watch(f.cache, kind, event, strlen(event), NULL, 0);
	total = disarm();
	ref = dump_cache(f.cache);
	server = f.cache; /* the reference: what a re-list returns */
	for (long n = 1; n <= total; n++) {
		struct fixture g;

		fixture_init(&g);
		arm(n);
		rc = sx_informer_replay_watch(g.cache, kind, event, strlen(event), NULL, 0);
		disarm();
		if (rc == 0 && ref_rc != 0)
			violation(what, n, "broken stream accepted");
		/* rc < 0: the stream is broken and the informer re-lists; a
		 * partly applied event must be repaired by that. */
		if (rc != 0 && ref_rc == 0)
			relist(g.cache, server, kind);
		got = dump_cache(g.cache);
		if (ref_rc == 0 && strcmp(got, ref) != 0)
			violation(what, n, "%s, the cache differs:\n%s\nwant:\n%s",
				  rc ? "after the re-list" : "event accepted", got, ref);
		free(got);
		after_run(g.cache, what, n);
		fixture_free(&g);
	}
	fixture_free(&f);
	free(ref);
	leak_check(what, total);
	printf("  %s: %ld allocations swept, %d violations\n", what, total, wrong);
	wrong = 0;
}

static void test_watch_events(void)
{
	static const char pod_obj[] =
		"{\"metadata\":{\"name\":\"pend\",\"namespace\":\"default\",\"uid\":\"u-pend\","
		"\"resourceVersion\":\"7\",\"labels\":{\"app\":\"z\"}},\"spec\":{\"nodeName\":"
		"\"a\","
		"\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":9,\"hostPort\":9}],"
		"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}"
		"}";
	static const char node_obj[] =
		"{\"metadata\":{\"name\":\"b\",\"resourceVersion\":\"8\",\"labels\":{\"x\":\"y\"}},"
		"\"status\":{\"allocatable\":{\"cpu\":\"3\",\"pods\":\"9\"},\"images\":[{\"names\":"
		"[\"redis:7\"],\"sizeBytes\":5}]}}";
	char ev[2048];

	snprintf(
		ev, sizeof(ev), "{\"type\":\"ADDED\",\"object\":%s}\n",
		"{\"metadata\":{\"name\":\"new\",\"namespace\":\"default\",\"uid\":\"u-new\","
		"\"resourceVersion\":\"9\"},\"spec\":{\"nodeName\":\"b\",\"containers\":[{\"name\":"
		"\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]},\"status\":{\"phase\":"
		"\"Running\"}}");
	sweep_event("watch pod ADDED", SX_KIND_POD, ev);
	snprintf(ev, sizeof(ev), "{\"type\":\"MODIFIED\",\"object\":%s}\n", pod_obj);
	sweep_event("watch pod MODIFIED (bound)", SX_KIND_POD, ev);
	sweep_event("watch pod DELETED", SX_KIND_POD,
		    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"low\","
		    "\"namespace\":\"default\",\"resourceVersion\":\"10\"}}}\n");
	sweep_event(
		"watch node ADDED", SX_KIND_NODE,
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"d\",\"resourceVersion\":"
		"\"11\"},\"status\":{\"allocatable\":{\"cpu\":\"1\"}}}}\n");
	snprintf(ev, sizeof(ev), "{\"type\":\"MODIFIED\",\"object\":%s}\n", node_obj);
	sweep_event("watch node MODIFIED", SX_KIND_NODE, ev);
	sweep_event("watch node DELETED", SX_KIND_NODE,
		    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}\n");
	sweep_event(
		"watch BOOKMARK", SX_KIND_POD,
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n");
	sweep_event("watch ERROR", SX_KIND_NODE,
		    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":"
		    "\"too old\"}}\n");
}

/* ---------- one scheduling cycle with volumes (VolumeBinding) ---------- */

/* Claims of every kind VolumeBinding handles: bound to a zonal PV, static
 * (a local PV on a), provisioned (WaitForFirstConsumer with a provisioner). */
static const char volumes[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"StorageClass\",\"apiVersion\":\"storage.k8s.io/"
	"v1\",\"metadata\":{\"name\":\"local\"},"
	"\"provisioner\":\"kubernetes.io/"
	"no-provisioner\",\"volumeBindingMode\":\"WaitForFirstConsumer\"},"
	"{\"kind\":\"StorageClass\",\"apiVersion\":\"storage.k8s.io/"
	"v1\",\"metadata\":{\"name\":\"zonal\"},"
	"\"provisioner\":\"csi.x\",\"volumeBindingMode\":\"WaitForFirstConsumer\"},"
	"{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-local\",\"resourceVersion\":"
	"\"3\"},"
	"\"spec\":{\"storageClassName\":\"local\",\"capacity\":{\"storage\":\"5Gi\"},"
	"\"accessModes\":"
	"[\"ReadWriteOnce\"],\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
	"\"matchExpressions\":"
	"[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"a\"]}]}]}}},"
	"\"status\":{\"phase\":\"Available\"}},"
	"{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-zonal\",\"resourceVersion\":"
	"\"4\"},"
	"\"spec\":{\"storageClassName\":\"zonal\",\"capacity\":{\"storage\":\"5Gi\"},\"claimRef\":"
	"{\"namespace\":\"default\",\"name\":\"c-bound\"},\"nodeAffinity\":{\"required\":{"
	"\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"topology.kubernetes.io/zone\","
	"\"operator\":\"In\",\"values\":[\"z1\"]}]}]}}},\"status\":{\"phase\":\"Bound\"}},"
	"{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c-bound\",\"namespace\":"
	"\"default\","
	"\"uid\":\"u-cb\",\"resourceVersion\":\"5\",\"annotations\":{\"pv.kubernetes.io/"
	"bind-completed\":"
	"\"yes\"}},\"spec\":{\"storageClassName\":\"zonal\",\"volumeName\":\"pv-zonal\"},"
	"\"status\":{\"phase\":\"Bound\"}},"
	"{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c-static\",\"namespace\":"
	"\"default\",\"uid\":\"u-cs\",\"resourceVersion\":\"6\"},\"spec\":{\"storageClassName\":"
	"\"local\","
	"\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}},"
	"{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"c-dyn\",\"namespace\":"
	"\"default\","
	"\"uid\":\"u-cd\",\"resourceVersion\":\"7\"},\"spec\":{\"storageClassName\":\"zonal\","
	"\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}"
	"]}";

/* A cycle, then Reserve and Unreserve on the chosen node (the assume
 * cache, shared by every run through the profile, is empty again after). */
static struct cycle_out run_volume_cycle(struct fixture *f, const struct sx_pod *pod, long n)
{
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res;
	struct cycle_out o = {0};
	struct sx_snapshot *snap = sx_cache_snapshot(f->cache);

	arm(n);
	opts.snap = snap;
	opts.percentage = 100;
	o.rc = sx_schedule(f->ex.profile, pod, &opts, &res);
	o.error = o.rc < 0 || res.error != NULL;
	if (!o.error && res.selected >= 0) {
		sx_str node = snap->nodes[res.selected]->name;
		struct sx_status *st = sx_run_reserve(f->ex.profile, res.state, pod, node);

		o.error = st != NULL;
		sx_status_free(st);
		sx_run_unreserve(f->ex.profile, res.state, pod, node);
	}
	disarm();
	o.selected = res.selected;
	o.nfeasible = res.nfeasible;
	sx_cycle_result_free(&res);
	sx_snapshot_unref(snap);
	return o;
}

static void volume_fixture(struct fixture *f)
{
	struct sx_error err = {0};

	fixture_init(f);
	CHECK_INT(sx_state_load_buffer(f->cache, "volumes", volumes, strlen(volumes), &err), 0);
}

static void test_volume_cycle(void)
{
	struct sx_pod *pod = decode_pod(
		"{\"metadata\":{\"name\":\"v\",\"namespace\":\"default\",\"uid\":\"u-v\"},\"spec\":"
		"{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]"
		","
		"\"volumes\":[{\"name\":\"a\",\"persistentVolumeClaim\":{\"claimName\":\"c-bound\"}"
		"},"
		"{\"name\":\"b\",\"persistentVolumeClaim\":{\"claimName\":\"c-static\"}},"
		"{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":\"c-dyn\"}}]}}");
	struct fixture f;
	struct cycle_out ref, o;
	long total;

	volume_fixture(&f);
	ref = run_volume_cycle(&f, pod, LONG_MAX);
	total = allocs;
	fixture_free(&f);
	CHECK(!ref.error && ref.selected >= 0 && ref.nfeasible == 1); /* only a: PVs on a, in z1 */
	for (long n = 1; n <= total; n++) {
		volume_fixture(&f);
		o = run_volume_cycle(&f, pod, n);
		if (!o.error && (o.selected != ref.selected || o.nfeasible != ref.nfeasible))
			violation("volume cycle", n,
				  "success differing from the reference: selected %d (want %d), "
				  "%u feasible (want %u)",
				  o.selected, ref.selected, o.nfeasible, ref.nfeasible);
		after_run(f.cache, "volume cycle", n);
		fixture_free(&f);
	}
	sx_pod_unref(pod);
	leak_check("volume cycle", total);
	printf("  volume cycle: %ld allocations swept, %d violations\n", total, wrong);
	wrong = 0;
}

/* ---------- one binding cycle ---------- */

static struct sx_status *cache_binder(void *ctx, const struct sx_pod *pod, sx_str node)
{
	return NULL; /* the API server accepted the Binding */
}

static const struct sx_binder accepting_binder = {.post = cache_binder};

/* Assume, Reserve, Permit, PreBind, Bind, finish, PostBind; on any error
 * Unreserve and forget, as the binding cycle does. Returns the error or
 * NULL. */
static bool binding_cycle(struct fixture *f, const struct sx_pod *pod, sx_str node, long n)
{
	const struct sx_profile *prof = f->ex.profile;
	struct sx_snapshot *snap = sx_cache_snapshot(f->cache);
	struct sx_cycle_state *cs = sx_cycle_state_new(snap);
	struct sx_waiting_pod *wp = NULL;
	struct sx_status *st = NULL;
	bool assumed = false;

	/* DefaultBinder binds through the profile's handle. */
	sx_handle_attach(prof->handle, &(struct sx_handle_env){.binder = &accepting_binder});
	arm(n);
	if (!cs || sx_cache_assume(f->cache, pod, node) != 0)
		st = sx_status_new(SX_ERROR, "assume failed");
	else
		assumed = true;
	if (!st)
		st = sx_run_reserve(prof, cs, pod, node);
	if (!st)
		st = sx_run_permit(prof, cs, pod, node, &wp);
	if (!st && wp)
		st = sx_waiting_pod_wait(wp);
	if (!st)
		st = sx_run_pre_bind(prof, cs, pod, node);
	if (!st)
		st = sx_run_bind(prof, cs, pod, node);
	if (!st && sx_cache_finish_binding(f->cache, pod->meta.ns, pod->meta.name) != 0)
		st = sx_status_new(SX_ERROR, "finish binding failed");
	if (!st) {
		sx_run_post_bind(prof, cs, pod, node);
	} else {
		sx_run_unreserve(prof, cs, pod, node);
		if (assumed)
			sx_cache_forget(f->cache, pod->meta.ns, pod->meta.name);
	}
	disarm();
	sx_handle_attach(prof->handle, NULL);
	if (wp)
		sx_waiting_pod_free(wp);
	if (cs)
		sx_cycle_state_free(prof, cs);
	sx_snapshot_unref(snap);
	if (st && st->code == SX_SUCCESS) {
		sx_status_free(st);
		st = NULL;
	}
	sx_status_free(st);
	return st == NULL;
}

static void test_binding_cycle(void)
{
	struct sx_pod *pod =
		decode_pod("{\"metadata\":{\"name\":\"pend\",\"namespace\":\"default\","
			   "\"uid\":\"u-pend\"},\"spec\":{\"containers\":[{\"name\":\"c\","
			   "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
	sx_str node = sx_intern("a");
	struct fixture f;
	long total;
	bool ok, assumed;
	sx_str where;

	fixture_init(&f);
	CHECK(binding_cycle(&f, pod, node, LONG_MAX));
	total = allocs;
	fixture_free(&f);
	for (long n = 1; n <= total; n++) {
		const struct sx_pod *p;

		fixture_init(&f);
		ok = binding_cycle(&f, pod, node, n);
		p = sx_cache_get_pod(f.cache, pod->meta.ns, "pend", &where, &assumed);
		if (ok && (!p || where != node || !assumed))
			violation("binding cycle", n, "bound but the pod is not assumed on a");
		if (!ok && p && where != SX_STR_EMPTY)
			violation("binding cycle", n, "failed but the pod stays on %s",
				  sx_str_get(where));
		if (p)
			sx_pod_unref(p);
		after_run(f.cache, "binding cycle", n);
		fixture_free(&f);
	}
	sx_pod_unref(pod);
	leak_check("binding cycle", total);
	printf("  binding cycle: %ld allocations swept, %d violations\n", total, wrong);
	wrong = 0;
}

/* ---------- setup ---------- */

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	static cJSON_Hooks hooks = {__wrap_malloc, free};
	struct sx_error err = {0};

	setvbuf(stdout, NULL, _IOLBF, 0);
	cJSON_InitHooks(&hooks);
	sx_intern_init();
	sx_log_verbosity = -1;
	cfg_default = sx_config_default(&err);
}

SX_TESTS(SX_TEST(test_state_load), SX_TEST(test_watch_events), SX_TEST(test_extender_verbs),
	 SX_TEST(test_scheduling_cycle), SX_TEST(test_volume_cycle), SX_TEST(test_binding_cycle))
