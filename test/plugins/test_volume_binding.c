/* VolumeBinding beyond the Filter tables (test/fixtures/VolumeBinding):
 * its args, and Reserve/Unreserve through the real runtime — the assume
 * cache hides a PV chosen by one pod from the next cycles until Unreserve,
 * and the smallest fitting PV is the one assumed. */
#include "../../plugins/slots.h"
#include "../../plugins/volume_binder.h"
#include "plugin_util.h"
#include "schedext/binding_cycle.h"
#include "schedext/config.h"
#include "schedext/features.h"
#include "schedext/framework.h"

/* The profile of release 1.<minor> (0: the default release). */
static struct sx_config *config_with_args_at(int minor, const char *args, struct sx_error *err)
{
	char buf[1024];
	struct sx_features f;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
		 "\"KubeSchedulerConfiguration\",\"profiles\":[{\"schedulerName\":\"s\","
		 "\"plugins\":{\"multiPoint\":{\"enabled\":[{\"name\":\"VolumeBinding\"}],"
		 "\"disabled\":[{\"name\":\"*\"}]}},\"pluginConfig\":[{\"name\":\"VolumeBinding\","
		 "\"args\":%s}]}]}",
		 args);
	sx_features_init(&f, minor ? minor : SX_RELEASE_DEFAULT);
	return sx_config_parse_for(buf, strlen(buf), &f, err);
}

static struct sx_config *config_with_args(const char *args, struct sx_error *err)
{
	return config_with_args_at(0, args, err);
}

static void test_args(void)
{
	struct sx_error err = {0};
	struct sx_config *cfg = config_with_args("{\"bindTimeoutSeconds\":30}", &err);
	char msg[1024];

	CHECK(cfg != NULL);
	sx_config_free(cfg);
	cfg = config_with_args("{\"bindTimeoutSeconds\":-1}", &err);
	CHECK(cfg == NULL);
	CHECK(strstr(sx_error_string(&err, msg, sizeof(msg)),
		     "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should "
		     "not "
		     "be a negative value") != NULL);
	memset(&err, 0, sizeof(err));
	/* shape needs StorageCapacityScoring: off up to 1.36 */
	cfg = config_with_args_at(36, "{\"shape\":[{\"utilization\":0,\"score\":0}]}", &err);
	CHECK(cfg == NULL);
	CHECK(strstr(sx_error_string(&err, msg, sizeof(msg)),
		     "unexpected field `shape`, remove it or turn on the feature gate "
		     "StorageCapacityScoring") != NULL);
	/* a type error, a number no int64 holds, and shape: null (absent) */
	static const char *const bad[] = {"{\"bindTimeoutSeconds\":\"30\"}",
					  "{\"bindTimeoutSeconds\":1e999}",
					  "{\"bindTimeoutSeconds\":2.5}"};
	for (size_t i = 0; i < SX_ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		cfg = config_with_args(bad[i], &err);
		CHECK(cfg == NULL);
		CHECK(strstr(sx_error_string(&err, msg, sizeof(msg)),
			     "bindTimeoutSeconds: Invalid value: must be an integer") != NULL);
		sx_config_free(cfg);
	}
	cfg = config_with_args("{\"bindTimeoutSeconds\":null,\"shape\":null}", &err);
	CHECK(cfg != NULL);
	sx_config_free(cfg);
}

/* 1.37 (StorageCapacityScoring on): shape is accepted, defaulted to
 * {0, 10}, {100, 0} and validated as validateFunctionShape. */
static void test_args_scoring(void)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{"{}", NULL},
		{"{\"shape\":[{\"utilization\":0,\"score\":0},{\"utilization\":100,\"score\":10}]}",
		 NULL},
		{"{\"shape\":[{\"utilization\":50,\"score\":1},{\"utilization\":50,\"score\":2}]}",
		 "shape[1].utilization: Invalid value: 50: utilization values must be sorted in "
		 "increasing order"},
		{"{\"shape\":[{\"utilization\":101,\"score\":11}]}",
		 "[shape[0].utilization: Invalid value: 101: not in valid range [0, 100], "
		 "shape[0].score: Invalid value: 11: not in valid range [0, 10]]"},
		{"{\"shape\":{}}", "shape: must be a list"},
	};
	char msg[1024];

	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct sx_error err = {0};
		struct sx_config *cfg = config_with_args_at(37, cases[i].args, &err);

		if (!cases[i].want) {
			CHECK(cfg != NULL);
		} else {
			CHECK(cfg == NULL);
			CHECK(strstr(sx_error_string(&err, msg, sizeof(msg)), cases[i].want) !=
			      NULL);
			if (!strstr(msg, cases[i].want))
				fprintf(stderr, "got %s\n", msg);
		}
		sx_config_free(cfg);
	}
}

#define LOCAL_PV(name, size)                                                                       \
	"{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"storageClassName\":\"local\","          \
	"\"capacity\":{\"storage\":\"" size "\"},\"accessModes\":[\"ReadWriteOnce\"],"             \
	"\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{"          \
	"\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}},"       \
	"\"status\":{\"phase\":\"Available\"}}"
#define CLAIM(name)                                                                                \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"" name "-u\","   \
	"\"resourceVersion\":\"7\"},\"spec\":{\"storageClassName\":\"local\",\"accessModes\":"     \
	"[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"5Gi\"}}}}"
#define POD(name, claim)                                                                           \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"},\"spec\":{"               \
	"\"containers\":[{\"name\":\"c\",\"image\":\"x\"}],\"volumes\":[{\"name\":\"v\","          \
	"\"persistentVolumeClaim\":{\"claimName\":\"" claim "\"}}]}}"

static struct sx_cache *local_cluster(void)
{
	struct sx_cache *c = sx_cache_new();

	tu_add(c, "Node",
	       "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"kubernetes.io/hostname\":"
	       "\"n1\"}}}");
	tu_add(c, "StorageClass",
	       "{\"metadata\":{\"name\":\"local\"},\"provisioner\":"
	       "\"kubernetes.io/no-provisioner\",\"volumeBindingMode\":"
	       "\"WaitForFirstConsumer\"}");
	tu_add(c, "PersistentVolume", LOCAL_PV("pv-big", "20Gi"));
	tu_add(c, "PersistentVolume", LOCAL_PV("pv-small", "10Gi"));
	tu_add(c, "PersistentVolumeClaim", CLAIM("c1"));
	tu_add(c, "PersistentVolumeClaim", CLAIM("c2"));
	tu_add(c, "PersistentVolumeClaim", CLAIM("c3"));
	return c;
}

/* Runs a cycle of pod on snap; on success Reserve on its node. Returns the
 * cycle state (caller frees) and the status of n1 in *st. */
static struct sx_cycle_state *cycle(const struct sx_profile *prof, struct sx_snapshot *snap,
				    const struct sx_pod *pod, bool reserve, char *st, size_t len)
{
	struct sx_cycle_result res;
	struct sx_cycle_opts opts = {.snap = snap, .mode = SX_CYCLE_FULL, .percentage = 100};
	struct sx_cycle_state *cs;

	CHECK_INT(sx_schedule(prof, pod, &opts, &res), 0);
	tu_status(sx_status_clone(res.statuses ? res.statuses[0] : NULL), st, len);
	if (reserve && res.selected >= 0)
		CHECK(sx_run_reserve(prof, res.state, pod, snap->nodes[res.selected]->name) ==
		      NULL);
	cs = res.state;
	res.state = NULL;
	sx_cycle_result_free(&res);
	return cs;
}

static const char *reserved_pv(const struct sx_cycle_state *cs)
{
	const struct vb_state *st = cs ? cs->slots[SX_SLOT_volume_binding] : NULL;

	return st && st->reserved && st->vols.nstatic == 1 ? st->vols.statics[0].pv->meta.name
							   : "(none)";
}

static void test_assume_and_revert(void)
{
	struct sx_error err = {0};
	struct sx_config *cfg = config_with_args("{}", &err);
	const struct sx_profile *prof = sx_config_profile(cfg, NULL);
	struct sx_cache *cache = local_cluster();
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	struct sx_pod *a = tu_pod(POD("a", "c1")), *b = tu_pod(POD("b", "c2"));
	struct sx_pod *c = tu_pod(POD("c", "c3"));
	struct sx_cycle_state *ca, *cb, *cc;
	char st[512];

	ca = cycle(prof, snap, a, true, st, sizeof(st));
	CHECK_STR(st, "Success");
	CHECK_STR(reserved_pv(ca), "pv-small"); /* the smallest that fits */
	cb = cycle(prof, snap, b, true, st, sizeof(st));
	CHECK_STR(st, "Success");
	CHECK_STR(reserved_pv(cb), "pv-big"); /* pv-small is assumed by a */
	cc = cycle(prof, snap, c, false, st, sizeof(st));
	CHECK_STR(st, "UnschedulableAndUnresolvable: node(s) didn't find available persistent "
		      "volumes to bind");
	sx_cycle_state_free(prof, cc);
	sx_run_unreserve(prof, ca, a, sx_intern("n1")); /* a's binding failed */
	cc = cycle(prof, snap, c, true, st, sizeof(st));
	CHECK_STR(st, "Success");
	CHECK_STR(reserved_pv(cc), "pv-small");
	/* PreBind outside the standalone loop has no API server. */
	CHECK_STR(tu_status(sx_run_pre_bind(prof, cb, b, sx_intern("n1")), st, sizeof(st)),
		  "Error: running PreBind plugin \"VolumeBinding\": binding volumes: no API server "
		  "to bind volumes with");
	sx_run_unreserve(prof, cb, b, sx_intern("n1"));
	sx_run_unreserve(prof, cc, c, sx_intern("n1"));
	sx_cycle_state_free(prof, ca);
	sx_cycle_state_free(prof, cb);
	sx_cycle_state_free(prof, cc);
	sx_pod_unref(a);
	sx_pod_unref(b);
	sx_pod_unref(c);
	sx_snapshot_unref(snap);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* A pod without claims: Skip at PreFilter, nothing to reserve or bind. */
static void test_no_claims(void)
{
	struct sx_error err = {0};
	struct sx_config *cfg = config_with_args("null", &err);
	const struct sx_profile *prof = sx_config_profile(cfg, NULL);
	struct sx_cache *cache = local_cluster();
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	struct sx_pod *p = tu_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},"
				  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
	struct sx_cycle_state *cs;
	char st[256];

	cs = cycle(prof, snap, p, true, st, sizeof(st));
	CHECK_STR(st, "Success");
	CHECK(cs && cs->skip_filter[SX_SLOT_volume_binding]);
	CHECK(sx_run_pre_bind(prof, cs, p, sx_intern("n1")) == NULL);
	sx_run_unreserve(prof, cs, p, sx_intern("n1"));
	sx_cycle_state_free(prof, cs);
	sx_pod_unref(p);
	sx_snapshot_unref(snap);
	sx_cache_free(cache);
	sx_config_free(cfg);
}

/* ---------- queueing hints ---------- */

extern const struct sx_plugin sx_plugin_volume_binding;

static struct sx_object decoded(const char *kind, const char *json)
{
	struct sx_error err = {0};
	struct sx_object obj = {0};
	cJSON *j = cJSON_Parse(json);

	if (!j || sx_decode_object(j, kind, &obj, &err) < 0)
		sx_test_fail(__FILE__, __LINE__, "decode %s: %s", kind, err.msg);
	cJSON_Delete(j);
	return obj;
}

/* The hint VolumeBinding registered for resource (SX_QUEUE for a NULL
 * hint, -1 when not registered). */
static int hint(enum sx_event_resource res, const struct sx_pod *pod, struct sx_object *o,
		struct sx_object *n)
{
	for (const struct sx_event_reg *r = sx_plugin_volume_binding.events; r->resource; r++)
		if (r->resource == res)
			return r->hint ? (int)r->hint(NULL, pod, o, n) : SX_QUEUE;
	return -1;
}

static void test_hints(void)
{
	struct sx_pod *p = tu_pod(POD("a", "c1"));
	struct sx_object c1 = decoded("PersistentVolumeClaim", CLAIM("c1"));
	struct sx_object c2 = decoded("PersistentVolumeClaim", CLAIM("c2"));
	struct sx_object sc1 = decoded(
		"StorageClass", "{\"metadata\":{\"name\":\"z\"},"
				"\"provisioner\":\"p\",\"volumeBindingMode\":\"Immediate\"}");
	struct sx_object sc2 = decoded(
		"StorageClass", "{\"metadata\":{\"name\":\"z\"},"
				"\"provisioner\":\"p\",\"volumeBindingMode\":\"Immediate\","
				"\"allowedTopologies\":[{\"matchLabelExpressions\":[{\"key\":"
				"\"zone\",\"values\":[\"a\"]}]}]}");
	struct sx_object cap1 =
		decoded("CSIStorageCapacity", "{\"metadata\":{\"name\":\"c\","
					      "\"namespace\":\"n\"},\"storageClassName\":\"z\","
					      "\"capacity\":\"10Gi\"}");
	struct sx_object cap2 =
		decoded("CSIStorageCapacity", "{\"metadata\":{\"name\":\"c\","
					      "\"namespace\":\"n\"},\"storageClassName\":\"z\","
					      "\"capacity\":\"20Gi\"}");

	CHECK_INT(hint(SX_RES_PVC, p, NULL, &c1), SX_QUEUE);	 /* the pod's claim */
	CHECK_INT(hint(SX_RES_PVC, p, &c2, &c2), SX_QUEUE_SKIP); /* another claim */
	CHECK_INT(hint(SX_RES_STORAGE_CLASS, p, NULL, &sc1), SX_QUEUE);
	CHECK_INT(hint(SX_RES_STORAGE_CLASS, p, &sc1, &sc1), SX_QUEUE_SKIP);
	CHECK_INT(hint(SX_RES_STORAGE_CLASS, p, &sc1, &sc2), SX_QUEUE); /* allowedTopologies */
	CHECK_INT(hint(SX_RES_CSI_STORAGE_CAPACITY, p, &cap1, &cap2), SX_QUEUE); /* grew */
	CHECK_INT(hint(SX_RES_CSI_STORAGE_CAPACITY, p, &cap2, &cap1), SX_QUEUE_SKIP);
	CHECK_INT(hint(SX_RES_PV, p, NULL, NULL), SX_QUEUE);
	CHECK_INT(hint(SX_RES_VOLUME_ATTACHMENT, p, NULL, NULL), -1);
	sx_object_unref(&c1);
	sx_object_unref(&c2);
	sx_object_unref(&sc1);
	sx_object_unref(&sc2);
	sx_object_unref(&cap1);
	sx_object_unref(&cap2);
	sx_pod_unref(p);
}

SX_TESTS(SX_TEST(test_args), SX_TEST(test_args_scoring), SX_TEST(test_assume_and_revert),
	 SX_TEST(test_no_claims), SX_TEST(test_hints))
