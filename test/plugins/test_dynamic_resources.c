/* DynamicResources: PreFilter, Filter, Reserve and Unreserve over a table
 * shaped like upstream's dynamicresources_test.go (claims missing, being
 * deleted, in use, for another owner, classes missing, allocated on
 * another node, no devices, a successful allocation). */
#include "plugin_util.h"
#include "schedext/config.h"
#include "schedext/dra_alloc.h"
#include "schedext/handle.h"
#include "schedext/features.h"
#include "schedext/framework.h"

extern const struct sx_plugin sx_plugin_dynamic_resources;

#define NODE(n)                                                                                    \
	"{\"metadata\":{\"name\":\"" n "\",\"labels\":{\"kubernetes.io/hostname\":\"" n "\"}},"    \
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"110\"}}}"
#define CLASS                                                                                      \
	"{\"metadata\":{\"name\":\"class\"},\"spec\":{\"selectors\":[{\"cel\":{\"expression\":"    \
	"\"device.driver == 'd.example.com'\"}}]}}"
#define SLICE                                                                                      \
	"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\",\"nodeName\":"      \
	"\"worker\","                                                                              \
	"\"pool\":{\"name\":\"worker\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{"  \
	"\"name\":\"dev-1\"}]}}"
#define REQ                                                                                        \
	"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"req-1\",\"exactly\":{"                   \
	"\"deviceClassName\":\"class\"}}]}}"
#define ALLOC_ON(node)                                                                             \
	"\"allocation\":{\"devices\":{\"results\":[{\"request\":\"req-1\",\"driver\":\"d.example." \
	"com\","                                                                                   \
	"\"pool\":\"" node                                                                         \
	"\",\"device\":\"dev-1\"}]},\"nodeSelector\":{\"nodeSelectorTerms\":[{\"matchFields\":"    \
	"[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"" node "\"]}]}]}}"

struct tcase {
	const char *name;
	const char *claim;     /* ResourceClaim JSON (namespace default), or NULL */
	const char *pod_claim; /* the pod's spec.resourceClaims[0] */
	const char *status;    /* the pod's status, or NULL */
	bool no_class;
	const char *pre_filter;			  /* expected PreFilter status */
	const char *filter_worker, *filter_other; /* expected Filter statuses */
};

static const struct tcase cases[] = {
	{"empty", NULL, NULL, NULL, false, "Skip", NULL, NULL},
	{"claim-reference-missing", NULL, "{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}",
	 NULL, false,
	 "UnschedulableAndUnresolvable: resourceclaim.resource.k8s.io \"my-claim\" not found", NULL,
	 NULL},
	{"deleted-claim",
	 "{\"metadata\":{\"name\":\"my-claim\",\"namespace\":\"default\",\"uid\":\"c1\","
	 "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}," REQ "}",
	 "{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}", NULL, false,
	 "UnschedulableAndUnresolvable: resourceclaim \"my-claim\" is being deleted", NULL, NULL},
	{"template-not-created-yet", NULL, "{\"name\":\"r\",\"resourceClaimTemplateName\":\"t\"}",
	 NULL, false,
	 "UnschedulableAndUnresolvable: pod \"default/my-pod\": ResourceClaim not created yet",
	 NULL, NULL},
	{"template-claim-of-other-pod",
	 "{\"metadata\":{\"name\":\"gen\",\"namespace\":\"default\",\"uid\":\"c2\","
	 "\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"x\",\"uid\":\"other\",\"controller\":"
	 "true}]}," REQ "}",
	 "{\"name\":\"r\",\"resourceClaimTemplateName\":\"t\"}",
	 "{\"resourceClaimStatuses\":[{\"name\":\"r\",\"resourceClaimName\":\"gen\"}]}", false,
	 "UnschedulableAndUnresolvable: ResourceClaim default/gen was not created for pod "
	 "default/my-pod "
	 "(pod is not owner)",
	 NULL, NULL},
	{"template-claim-not-generated", NULL,
	 "{\"name\":\"r\",\"resourceClaimTemplateName\":\"t\"}",
	 "{\"resourceClaimStatuses\":[{\"name\":\"r\"}]}", false, "Skip", NULL, NULL},
	{"missing-class",
	 "{\"metadata\":{\"name\":\"my-claim\",\"namespace\":\"default\",\"uid\":\"c3\"}," REQ "}",
	 "{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}", NULL, true,
	 "UnschedulableAndUnresolvable: request req-1: device class class does not exist", NULL,
	 NULL},
	{"allocated-claim-other-node",
	 "{\"metadata\":{\"name\":\"my-claim\",\"namespace\":\"default\",\"uid\":\"c4\"}," REQ
	 ",\"status\":{" ALLOC_ON("other") "}}",
	 "{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}", NULL, false, "Success",
	 "UnschedulableAndUnresolvable: resourceclaim not available on the node", "Success"},
	{"structured-allocation",
	 "{\"metadata\":{\"name\":\"my-claim\",\"namespace\":\"default\",\"uid\":\"c5\"}," REQ "}",
	 "{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}", NULL, false, "Success", "Success",
	 "UnschedulableAndUnresolvable: cannot allocate all claims"},
};

static char *pod_json(const struct tcase *t, char *buf, size_t len)
{
	snprintf(
		buf, len,
		"{\"metadata\":{\"name\":\"my-pod\",\"namespace\":\"default\",\"uid\":\"pod-uid\"},"
		"\"spec\":{\"containers\":[]%s%s%s}%s%s%s}",
		t->pod_claim ? ",\"resourceClaims\":[" : "", t->pod_claim ? t->pod_claim : "",
		t->pod_claim ? "]" : "", t->status ? ",\"status\":" : "",
		t->status ? t->status : "", "");
	return buf;
}

static void run(const struct tcase *t, void *self, struct sx_dra_claims *m)
{
	struct sx_cache *c = sx_cache_new();
	char buf[2048], st[512];
	struct sx_pod *pod = tu_pod(pod_json(t, buf, sizeof(buf)));
	struct sx_snapshot *snap;
	struct sx_cycle_state *cs;
	struct sx_node_set *result = NULL;
	struct sx_status *pf;

	tu_add(c, "Node", NODE("worker"));
	tu_add(c, "Node", NODE("other"));
	tu_add(c, "ResourceSlice", SLICE);
	if (!t->no_class)
		tu_add(c, "DeviceClass", CLASS);
	if (t->claim)
		tu_add(c, "ResourceClaim", t->claim);
	snap = sx_cache_snapshot(c);
	cs = sx_cycle_state_new(snap);
	pf = sx_plugin_dynamic_resources.pre_filter(self, cs, pod, &result);
	if (strcmp(tu_status(pf, st, sizeof(st)), t->pre_filter) != 0)
		sx_test_fail(__FILE__, __LINE__, "%s: PreFilter %s, want %s", t->name, st,
			     t->pre_filter);
	if (t->filter_worker) {
		tu_status(sx_plugin_dynamic_resources.filter(self, cs, pod, tu_ni(snap, "worker")),
			  st, sizeof(st));
		if (strcmp(st, t->filter_worker))
			sx_test_fail(__FILE__, __LINE__, "%s: Filter(worker) %s", t->name, st);
		tu_status(sx_plugin_dynamic_resources.filter(self, cs, pod, tu_ni(snap, "other")),
			  st, sizeof(st));
		if (strcmp(st, t->filter_other))
			sx_test_fail(__FILE__, __LINE__, "%s: Filter(other) %s", t->name, st);
	}
	if (t->filter_worker && !strcmp(t->filter_worker, "Success")) {
		/* Reserve holds the allocation in flight; Unreserve drops it. */
		CHECK(sx_plugin_dynamic_resources.reserve(self, cs, pod, sx_intern("worker")) ==
		      NULL);
		CHECK(sx_dra_pending_has(m, strstr(t->claim, "c5") ? "c5" : "c4") ==
		      (strstr(t->claim, "c5") != NULL));
		sx_plugin_dynamic_resources.unreserve(self, cs, pod, sx_intern("worker"));
		CHECK(!sx_dra_pending_has(m, "c5"));
	}
	free(result);
	sx_cycle_state_free(NULL, cs);
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	sx_cache_free(c);
}

static void test_table(void)
{
	struct sx_error err = {0};
	struct sx_dra_claims *m = sx_dra_claims_new();
	struct sx_handle *h = sx_handle_new(NULL, m);
	void *self = sx_plugin_dynamic_resources.init(NULL, h, &err);

	CHECK(self != NULL);
	for (size_t i = 0; self && i < sizeof(cases) / sizeof(cases[0]); i++)
		run(&cases[i], self, m);
	sx_plugin_dynamic_resources.destroy(self);
	sx_handle_free(h);
	sx_dra_claims_free(m);
}

static void test_args(void)
{
	/* not a duration, not a string, beyond a time.Duration, negative */
	static const char *const bad[] = {"{\"filterTimeout\":\"soon\"}", "{\"filterTimeout\":10}",
					  "{\"filterTimeout\":\"1e300h\"}",
					  "{\"filterTimeout\":\"-1s\"}"};
	static const char *const ok[] = {"{\"filterTimeout\":\"0s\"}", "{\"filterTimeout\":null}",
					 "{}", "null"};

	for (size_t i = 0; i < SX_ARRAY_SIZE(bad); i++) {
		struct sx_error err = {0};
		cJSON *args = cJSON_Parse(bad[i]);

		CHECK(sx_plugin_dynamic_resources.init(args, NULL, &err) == NULL);
		CHECK_STR(err.msg, "filterTimeout: invalid duration");
		cJSON_Delete(args);
	}
	for (size_t i = 0; i < SX_ARRAY_SIZE(ok); i++) {
		struct sx_error err = {0};
		cJSON *args = cJSON_Parse(ok[i]);
		void *self = sx_plugin_dynamic_resources.init(args, NULL, &err);

		CHECK(self != NULL);
		sx_plugin_dynamic_resources.destroy(self);
		cJSON_Delete(args);
	}
}

/* src/framework/config_dra.c: the args the configuration hands the plugin. */
cJSON *sx__config_dra_args(const cJSON *args, const struct sx_features *f, struct sx_error *err);

/* Filter(worker) for one claim of class "class" over objects objs (kind,
 * JSON pairs, NULL-terminated) under release 1.<r>'s gates: the args the
 * configuration makes, and a handle for a profile of that release. */
static void gated_filter(int r, const char *const *objs, const char *want)
{
	struct sx_profile prof = {0};
	struct sx_handle *h = sx_handle_new(&prof, NULL);
	struct sx_error err = {0};
	struct sx_cache *c = sx_cache_new();
	struct sx_pod *pod =
		tu_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\","
		       "\"uid\":\"pu\"},\"spec\":{\"containers\":[],\"resourceClaims\":"
		       "[{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}]}}");
	cJSON *args;
	void *self;
	struct sx_snapshot *snap;
	struct sx_cycle_state *cs;
	struct sx_node_set *result = NULL;
	char st[256];

	sx_features_init(&prof.features, r);
	args = sx__config_dra_args(NULL, &prof.features, &err);
	self = sx_plugin_dynamic_resources.init(args, h, &err);
	CHECK(self != NULL);
	tu_add(c, "Node", NODE("worker"));
	tu_add(c, "DeviceClass", CLASS);
	for (int i = 0; objs[i]; i += 2)
		tu_add(c, objs[i], objs[i + 1]);
	tu_add(c, "ResourceClaim",
	       "{\"metadata\":{\"name\":\"my-claim\",\"namespace\":"
	       "\"default\",\"uid\":\"c9\"}," REQ "}");
	snap = sx_cache_snapshot(c);
	cs = sx_cycle_state_new(snap);
	CHECK(sx_plugin_dynamic_resources.pre_filter(self, cs, pod, &result) == NULL);
	tu_status(sx_plugin_dynamic_resources.filter(self, cs, pod, tu_ni(snap, "worker")), st,
		  sizeof(st));
	if (strcmp(st, want))
		sx_test_fail(__FILE__, __LINE__, "1.%d: Filter %s, want %s", r, st, want);
	free(result);
	sx_cycle_state_free(NULL, cs);
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	sx_cache_free(c);
	sx_plugin_dynamic_resources.destroy(self);
	sx_handle_free(h);
	cJSON_Delete(args);
}

#define CANNOT "UnschedulableAndUnresolvable: cannot allocate all claims"

/* The profile's release decides the allocator's taint gates: 1.35 has
 * neither DRADeviceTaints nor DRADeviceTaintRules, 1.36 only the first
 * (beta on; rules beta off), 1.37 both (GA). dev-1 carries a NoSchedule
 * taint in its slice, dev-2 one from a DeviceTaintRule. */
static void test_taint_gates(void)
{
	static const char *const want[] = {"Success", "Success", CANNOT};
	static const char *const objs[] = {
		"ResourceSlice",
		"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\","
		"\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"devices\":[{\"name\":\"dev-1\",\"taints\":[{\"key\":"
		"\"broken\",\"effect\":\"NoSchedule\"}]},{\"name\":\"dev-2\"}]}}",
		"DeviceTaintRule",
		"{\"metadata\":{\"name\":\"rule\"},\"spec\":{\"deviceSelector\":{\"device\":"
		"\"dev-2\"},\"taint\":{\"key\":\"maintenance\",\"effect\":\"NoExecute\"}}}",
		NULL,
	};

	for (int r = 35; r <= 37; r++)
		gated_filter(r, objs, want[r - 35]);
}

/* DRAPartitionableDevices (beta on from 1.36): a partition consuming
 * counters of its pool's shared counter set; without the gate neither the
 * counter slice nor the partition is used. */
static void test_partitionable_gate(void)
{
	static const char *const want[] = {CANNOT, "Success", "Success"};
	static const char *const objs[] = {
		"ResourceSlice",
		"{\"metadata\":{\"name\":\"parts\"},\"spec\":{\"driver\":\"d.example.com\","
		"\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		"\"resourceSliceCount\":2},\"devices\":[{\"name\":\"half-0\",\"consumesCounters\":"
		"[{\"counterSet\":\"gpu\",\"counters\":{\"memory\":{\"value\":\"40Gi\"}}}]}]}}",
		"ResourceSlice",
		"{\"metadata\":{\"name\":\"counters\"},\"spec\":{\"driver\":\"d.example.com\","
		"\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		"\"resourceSliceCount\":2},\"sharedCounters\":[{\"name\":\"gpu\",\"counters\":"
		"{\"memory\":{\"value\":\"80Gi\"}}}]}}",
		NULL,
	};

	for (int r = 35; r <= 37; r++)
		gated_filter(r, objs, want[r - 35]);
}

/* A device attribute of no type this release knows (`{}`) or a list
 * (DRAListTypeAttributes, alpha and off in 1.37) fails the class's CEL
 * selector on that device, as upstream's getAttributeValue does
 * (cel/compile.go), and Filter reports the error. */
static void test_unsupported_attribute(void)
{
	static const char *const empty[] = {
		"ResourceSlice",
		"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\","
		"\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"devices\":[{\"name\":\"dev-1\",\"attributes\":"
		"{\"numa\":{}}}]}}",
		NULL,
	};
	static const char *const list[] = {
		"ResourceSlice",
		"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\","
		"\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"devices\":[{\"name\":\"dev-1\",\"attributes\":"
		"{\"model\":{\"string\":\"a\"},\"numa\":{\"ints\":[0,1]}}}]}}",
		NULL,
	};

	gated_filter(37, empty,
		     "Error: class class: selector #0 on device d.example.com/worker/dev-1: CEL "
		     "runtime error: attribute numa: unsupported attribute value");
	gated_filter(37, list,
		     "Error: class class: selector #0 on device d.example.com/worker/dev-1: CEL "
		     "runtime error: attribute numa: unsupported attribute value");
}

/* One pending allocation of device dev (pool p, driver d.example.com). */
static void pend(struct sx_dra_claims *m, const char *uid, const char *dev)
{
	static struct sx_dra_claim_out out; /* large: not on the stack */

	memset(&out, 0, sizeof(out));
	out.npicks = 1;
	out.picks[0].driver = sx_intern("d.example.com");
	out.picks[0].pool = sx_intern("p");
	out.picks[0].device = sx_intern(dev);
	CHECK(sx_dra_pending_add(m, uid, &out) == 0);
}

static bool has_dev(const struct sx_dra_allocated *a, const char *dev)
{
	return sx_dra_allocated_has(a, sx_intern("d.example.com"), sx_intern("p"), sx_intern(dev));
}

/* The devices in flight: one read-only set shared by the cycles until a
 * pending allocation comes or goes; a set taken earlier keeps what it saw. */
static void test_inflight_shared(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_dra_allocated *a, *b, *d;
	struct sx_dra_claims *m = sx_dra_claims_new();

	pend(m, "u1", "dev-1");
	a = sx_dra_inflight(m, snap);
	b = sx_dra_inflight(m, snap);
	CHECK(a != NULL && a == b);
	CHECK(has_dev(a, "dev-1") && !has_dev(a, "dev-2"));
	CHECK(sx_dra_pending_has(m, "u1") && !sx_dra_pending_has(m, "u2"));
	pend(m, "u2", "dev-2");
	sx_dra_allocated_free(b);
	b = sx_dra_inflight(m, snap);
	CHECK(b != a && has_dev(b, "dev-1") && has_dev(b, "dev-2"));
	CHECK(!has_dev(a, "dev-2")); /* frozen at its PreFilter */
	CHECK(sx_dra_pending_remove(m, "u1"));
	CHECK(!sx_dra_pending_remove(m, "u1"));
	d = sx_dra_inflight(m, snap);
	CHECK(!has_dev(d, "dev-1") && has_dev(d, "dev-2"));
	CHECK(has_dev(b, "dev-1"));
	CHECK(sx_dra_pending_remove(m, "u2"));
	sx_dra_allocated_free(a);
	sx_dra_allocated_free(b);
	sx_dra_allocated_free(d);
	d = sx_dra_inflight(m, snap);
	CHECK(!has_dev(d, "dev-2"));
	sx_dra_allocated_free(d);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
	sx_dra_claims_free(m);
}

/* The set of a cycle that ended is brought up to date for the next one
 * (the same set, with the allocations added since), one a cycle still
 * holds is left as it was; after a removal, or more additions than the
 * tracker lists, the next set is made anew. Each set has exactly the
 * devices pending when it was taken. */
static void test_inflight_updated(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_dra_allocated *a, *b, *d;
	struct sx_dra_claims *m = sx_dra_claims_new();
	char uid[32], dev[32];

	pend(m, "u1", "dev-1");
	a = sx_dra_inflight(m, snap);
	sx_dra_allocated_free(a); /* its cycle ended */
	pend(m, "u2", "dev-2");
	b = sx_dra_inflight(m, snap);
	CHECK(b == a && has_dev(b, "dev-1") && has_dev(b, "dev-2") && !has_dev(b, "dev-3"));
	pend(m, "u3", "dev-3"); /* b still held */
	d = sx_dra_inflight(m, snap);
	CHECK(d != b && has_dev(d, "dev-1") && has_dev(d, "dev-2") && has_dev(d, "dev-3"));
	CHECK(!has_dev(b, "dev-3"));
	sx_dra_allocated_free(b);
	sx_dra_allocated_free(d);
	CHECK(sx_dra_pending_remove(m, "u2"));
	pend(m, "u4", "dev-4");
	d = sx_dra_inflight(m, snap);
	CHECK(has_dev(d, "dev-1") && !has_dev(d, "dev-2") && has_dev(d, "dev-3") &&
	      has_dev(d, "dev-4"));
	sx_dra_allocated_free(d);
	for (int i = 5; i < 80; i++) {
		snprintf(uid, sizeof(uid), "u%d", i);
		snprintf(dev, sizeof(dev), "dev-%d", i);
		pend(m, uid, dev);
	}
	d = sx_dra_inflight(m, snap);
	CHECK(has_dev(d, "dev-1") && !has_dev(d, "dev-2") && has_dev(d, "dev-5") &&
	      has_dev(d, "dev-79") && !has_dev(d, "dev-80"));
	sx_dra_allocated_free(d);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
	sx_dra_claims_free(m);
}

/* DRAConsumableCapacity in flight: a share reserved by one pod (its
 * claim pending until PreBind) leaves the device, but not its consumed
 * capacity, to the next pod's cycle. nic-0 has 10 of bandwidth; each
 * claim asks 6. */
static void test_consumable_inflight(void)
{
	static const char *const objs[] = {
		"ResourceSlice",
		"{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\","
		"\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		"\"resourceSliceCount\":1},\"devices\":[{\"name\":\"nic-0\","
		"\"allowMultipleAllocations"
		"\":true,\"capacity\":{\"bandwidth\":{\"value\":\"10\"}}}]}}",
		NULL,
	};
	static const char *const claim_fmt =
		"{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		"\"spec\":{\"devices\":{\"requests\":[{\"name\":\"req-1\",\"exactly\":{"
		"\"deviceClassName\":\"class\",\"capacity\":{\"requests\":{\"bandwidth\":\"6\"}}}}]"
		"}}}";
	struct sx_profile prof = {0};
	struct sx_dra_claims *m = sx_dra_claims_new();
	struct sx_handle *h = sx_handle_new(&prof, m);
	struct sx_error err = {0};
	struct sx_cache *c = sx_cache_new();
	char buf[512], st[256];
	void *self;

	sx_features_init(&prof.features, 37);
	self = sx_plugin_dynamic_resources.init(NULL, h, &err);
	CHECK(self != NULL);
	tu_add(c, "Node", NODE("worker"));
	tu_add(c, "DeviceClass", CLASS);
	tu_add(c, objs[0], objs[1]);
	snprintf(buf, sizeof(buf), claim_fmt, "a", "ca");
	tu_add(c, "ResourceClaim", buf);
	snprintf(buf, sizeof(buf), claim_fmt, "b", "cb");
	tu_add(c, "ResourceClaim", buf);
	for (int i = 0; i < 2; i++) {
		char pj[512];
		struct sx_snapshot *snap = sx_cache_snapshot(c);
		struct sx_cycle_state *cs = sx_cycle_state_new(snap);
		struct sx_node_set *result = NULL;
		struct sx_pod *pod;

		snprintf(
			pj, sizeof(pj),
			"{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"default\",\"uid\":"
			"\"pu%d\"},\"spec\":{\"containers\":[],\"resourceClaims\":[{\"name\":\"r\","
			"\"resourceClaimName\":\"%s\"}]}}",
			i, i, i ? "b" : "a");
		pod = tu_pod(pj);
		CHECK(sx_plugin_dynamic_resources.pre_filter(self, cs, pod, &result) == NULL);
		tu_status(sx_plugin_dynamic_resources.filter(self, cs, pod, tu_ni(snap, "worker")),
			  st, sizeof(st));
		/* the first share fits; the second, with 6 of 10 in flight, does not */
		CHECK_STR(st, i ? "UnschedulableAndUnresolvable: cannot allocate all claims"
				: "Success");
		if (i == 0) {
			CHECK(sx_plugin_dynamic_resources.reserve(self, cs, pod,
								  sx_intern("worker")) == NULL);
			CHECK(sx_dra_pending_has(m, "ca"));
		}
		free(result);
		sx_cycle_state_free(NULL, cs);
		sx_snapshot_unref(snap);
		sx_pod_unref(pod);
	}
	{
		struct sx_snapshot *snap = sx_cache_snapshot(c);
		struct sx_dra_allocated *a = sx_dra_inflight(m, snap);
		sx_str drv = sx_intern("d.example.com"), pool = sx_intern("worker");

		CHECK(sx_dra_allocated_shared(a, drv, pool, sx_intern("nic-0")));
		CHECK(!sx_dra_allocated_has(a, drv, pool, sx_intern("nic-0")));
		CHECK(sx_dra_allocated_consumed(a, drv, pool, sx_intern("nic-0"),
						sx_intern("bandwidth")) == 6 * (sx_nano)1000000000);
		sx_dra_allocated_free(a);
		sx_snapshot_unref(snap);
	}
	/* the pending share goes */
	CHECK(sx_dra_pending_remove(m, "ca"));
	{
		struct sx_snapshot *snap = sx_cache_snapshot(c);
		struct sx_dra_allocated *a = sx_dra_inflight(m, snap);

		CHECK(!sx_dra_allocated_shared(a, sx_intern("d.example.com"), sx_intern("worker"),
					       sx_intern("nic-0")));
		sx_dra_allocated_free(a);
		sx_snapshot_unref(snap);
	}
	sx_plugin_dynamic_resources.destroy(self);
	sx_handle_free(h);
	sx_cache_free(c);
	sx_dra_claims_free(m);
}

/* DRAConsumableCapacity per release: 1.35 (alpha, off) refuses a claim
 * with capacity requests in the allocator's words, 1.36 and 1.37 (beta,
 * on) share the device. */
static void test_consumable_gate(void)
{
	static const char *const want[] = {
		"Error: claim default/my-claim, request req-1: has capacity requests, but the "
		"DRAConsumableCapacity feature is disabled",
		"Success", "Success"};

	for (int r = 35; r <= 37; r++) {
		struct sx_profile prof = {0};
		struct sx_handle *h = sx_handle_new(&prof, NULL);
		struct sx_error err = {0};
		struct sx_cache *c = sx_cache_new();
		struct sx_pod *pod =
			tu_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\","
			       "\"uid\":\"pu\"},\"spec\":{\"containers\":[],\"resourceClaims\":"
			       "[{\"name\":\"r\",\"resourceClaimName\":\"my-claim\"}]}}");
		struct sx_snapshot *snap;
		struct sx_cycle_state *cs;
		struct sx_node_set *result = NULL;
		char st[512];
		void *self;

		sx_features_init(&prof.features, r);
		self = sx_plugin_dynamic_resources.init(NULL, h, &err);
		tu_add(c, "Node", NODE("worker"));
		tu_add(c, "DeviceClass", CLASS);
		tu_add(c, "ResourceSlice",
		       "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\","
		       "\"nodeName\":\"worker\",\"pool\":{\"name\":\"worker\",\"generation\":1,"
		       "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"nic\","
		       "\"allowMultipleAllocations\":true,\"capacity\":{\"bw\":{\"value\":\"10\"}}}"
		       "]}}");
		tu_add(c, "ResourceClaim",
		       "{\"metadata\":{\"name\":\"my-claim\",\"namespace\":\"default\",\"uid\":"
		       "\"c1\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"req-1\","
		       "\"exactly\":"
		       "{\"deviceClassName\":\"class\",\"capacity\":{\"requests\":{\"bw\":\"4\"}}}}"
		       "]}}}");
		snap = sx_cache_snapshot(c);
		cs = sx_cycle_state_new(snap);
		CHECK(sx_plugin_dynamic_resources.pre_filter(self, cs, pod, &result) == NULL);
		tu_status(sx_plugin_dynamic_resources.filter(self, cs, pod, tu_ni(snap, "worker")),
			  st, sizeof(st));
		if (strcmp(st, want[r - 35]))
			sx_test_fail(__FILE__, __LINE__, "1.%d: Filter %s, want %s", r, st,
				     want[r - 35]);
		free(result);
		sx_cycle_state_free(NULL, cs);
		sx_snapshot_unref(snap);
		sx_pod_unref(pod);
		sx_cache_free(c);
		sx_plugin_dynamic_resources.destroy(self);
		sx_handle_free(h);
	}
}

/* Score for prioritized lists (dynamicresources.go Score, computeScore,
 * NormalizeScore): node "fast" has a device of the first subrequest's kind
 * (8 points), node "slow" only one of the second (7); normalized to the
 * best, 100 and 87. A pod without firstAvailable requests skips Score. */
static void test_prioritized_score(void)
{
	static const char *const cls =
		"{\"metadata\":{\"name\":\"class\"},\"spec\":{\"selectors\":[{\"cel\":{"
		"\"expression\":\"device.driver == 'd.example.com'\"}}]}}";
	struct sx_profile prof = {0};
	struct sx_dra_claims *m = sx_dra_claims_new();
	struct sx_handle *h = sx_handle_new(&prof, m);
	struct sx_error err = {0};
	struct sx_cache *c = sx_cache_new();
	struct sx_pod *pod =
		tu_pod("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"pu\"},"
		       "\"spec\":{\"containers\":[],\"resourceClaims\":[{\"name\":\"r\","
		       "\"resourceClaimName\":\"c\"}]}}");
	struct sx_snapshot *snap;
	struct sx_cycle_state *cs;
	struct sx_node_set *result = NULL;
	struct sx_node_score scores[2];
	const char *nodes[2] = {"fast", "slow"};
	void *self;
	char buf[1024];

	sx_features_init(&prof.features, 37);
	self = sx_plugin_dynamic_resources.init(NULL, h, &err);
	tu_add(c, "Node", NODE("fast"));
	tu_add(c, "Node", NODE("slow"));
	tu_add(c, "DeviceClass", cls);
	for (int i = 0; i < 2; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"s-%s\"},\"spec\":{\"driver\":\"d.example.com\","
			 "\"nodeName\":\"%s\",\"pool\":{\"name\":\"%s\",\"generation\":1,"
			 "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"dev\",\"attributes\":{"
			 "\"kind\":{\"string\":\"%s\"}}}]}}",
			 nodes[i], nodes[i], nodes[i], i ? "b" : "a");
		tu_add(c, "ResourceSlice", buf);
	}
	tu_add(c, "ResourceClaim",
	       "{\"metadata\":{\"name\":\"c\",\"namespace\":\"default\",\"uid\":\"cu\"},"
	       "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"firstAvailable\":["
	       "{\"name\":\"a\",\"deviceClassName\":\"class\",\"selectors\":[{\"cel\":{"
	       "\"expression\":\"device.attributes['d.example.com'].kind == 'a'\"}}]},"
	       "{\"name\":\"b\",\"deviceClassName\":\"class\",\"selectors\":[{\"cel\":{"
	       "\"expression\":\"device.attributes['d.example.com'].kind == 'b'\"}}]}]}]}}}");
	snap = sx_cache_snapshot(c);
	cs = sx_cycle_state_new(snap);
	CHECK(sx_plugin_dynamic_resources.pre_filter(self, cs, pod, &result) == NULL);
	for (int i = 0; i < 2; i++)
		CHECK(sx_plugin_dynamic_resources.filter(self, cs, pod, tu_ni(snap, nodes[i])) ==
		      NULL);
	CHECK(sx_plugin_dynamic_resources.pre_score(self, cs, pod, NULL, 0) == NULL);
	for (int i = 0; i < 2; i++) {
		scores[i].node = sx_intern(nodes[i]);
		CHECK(sx_plugin_dynamic_resources.score(self, cs, pod, tu_ni(snap, nodes[i]),
							&scores[i].score) == NULL);
	}
	CHECK_INT(scores[0].score, 8);
	CHECK_INT(scores[1].score, 7);
	CHECK(sx_plugin_dynamic_resources.normalize_score(self, cs, pod, scores, 2) == NULL);
	CHECK_INT(scores[0].score, 100);
	CHECK_INT(scores[1].score, 87);
	free(result);
	sx_cycle_state_free(NULL, cs);
	sx_snapshot_unref(snap);
	sx_pod_unref(pod);
	sx_cache_free(c);
	sx_plugin_dynamic_resources.destroy(self);
	sx_handle_free(h);
	sx_dra_claims_free(m);
}

SX_TESTS(SX_TEST(test_taint_gates), SX_TEST(test_partitionable_gate), SX_TEST(test_table),
	 SX_TEST(test_unsupported_attribute), SX_TEST(test_args), SX_TEST(test_inflight_shared),
	 SX_TEST(test_inflight_updated), SX_TEST(test_consumable_inflight),
	 SX_TEST(test_prioritized_score), SX_TEST(test_consumable_gate))
