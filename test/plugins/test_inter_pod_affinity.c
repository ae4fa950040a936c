/* Direct tests of InterPodAffinity: args validation, AddPod/RemovePod
 * on a cloned cycle state (the nominated-pods / preemption path), and the
 * per-node memo behind PreFilter and PreScore following the cache (pods
 * added and removed, node labels, namespace labels for namespaceSelector,
 * older snapshots, cycles on two threads). */
#include <pthread.h>
#include <stdio.h>

#include "plugin_util.h"
#include "../../plugins/slots.h"

extern const struct sx_plugin sx_plugin_inter_pod_affinity;
#define P sx_plugin_inter_pod_affinity

static void test_args(void)
{
	struct sx_error err = {0};
	cJSON *bad = cJSON_Parse("{\"hardPodAffinityWeight\": 101}");
	cJSON *ok = cJSON_Parse(
		"{\"hardPodAffinityWeight\": 0, \"ignorePreferredTermsOfExistingPods\": true}");
	void *self = P.init(bad, NULL, &err);
	CHECK(self == NULL);
	CHECK_STR(err.msg, "hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]");
	self = P.init(ok, NULL, &err);
	CHECK(self != NULL);
	P.destroy(self);
	cJSON_Delete(bad);
	cJSON_Delete(ok);
}

#define ANTI_POD(name, node)                                                                       \
	"{\"metadata\":{\"name\":\"" name                                                          \
	"\",\"namespace\":\"default\",\"labels\":{\"app\":\"db\"}},"                               \
	"\"spec\":{" node "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"                     \
	"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"   \
	"[{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"zone\"}]}}}}"

static void test_add_remove_on_clone(void)
{
	char buf[256];
	struct sx_cache *c = sx_cache_new();
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"a\",\"labels\":{\"zone\":\"z1\"}}}");
	tu_add(c, "Node", "{\"metadata\":{\"name\":\"b\",\"labels\":{\"zone\":\"z2\"}}}");
	struct sx_snapshot *snap = sx_cache_snapshot(c);
	struct sx_pod *pod = tu_pod(ANTI_POD("incoming", ""));
	struct sx_pod *other = tu_pod(ANTI_POD("nominated", "\"nodeName\":\"a\","));
	void *self = P.init(NULL, NULL, &(struct sx_error){0});
	struct sx_cycle_state cs = {.snap = snap};

	CHECK_STR(tu_status(P.pre_filter(self, &cs, pod, NULL), buf, sizeof(buf)), "Success");
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");
	struct sx_cycle_state clone = {.snap = snap};
	clone.slots[SX_SLOT_inter_pod_affinity] =
		P.state_clone(cs.slots[SX_SLOT_inter_pod_affinity]);
	CHECK_STR(
		tu_status(P.add_pod(self, &clone, pod, other, tu_ni(snap, "a")), buf, sizeof(buf)),
		"Success");
	/* Both directions match: the incoming pod's own anti-affinity wins. */
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Unschedulable: node(s) didn't match pod anti-affinity rules");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "b")), buf, sizeof(buf)),
		  "Success");
	/* The original state is untouched by the clone's AddPod. */
	CHECK_STR(tu_status(P.filter(self, &cs, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.remove_pod(self, &clone, pod, other, tu_ni(snap, "a")), buf,
			    sizeof(buf)),
		  "Success");
	CHECK_STR(tu_status(P.filter(self, &clone, pod, tu_ni(snap, "a")), buf, sizeof(buf)),
		  "Success");

	P.state_free(clone.slots[SX_SLOT_inter_pod_affinity]);
	P.state_free(cs.slots[SX_SLOT_inter_pod_affinity]);
	P.destroy(self);
	sx_pod_unref(pod);
	sx_pod_unref(other);
	sx_snapshot_unref(snap);
	sx_cache_free(c);
}

#define NODE(name, zone) "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"zone\":\"" zone "\"}}}"
#define NS(name, team)	 "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"team\":\"" team "\"}}}"
#define BARE(name, ns, app, node)                                                                  \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\",\"labels\":{\"app\":\"" app \
	"\"}},"                                                                                    \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}"
/* Required affinity to app=db of default or red-ns in the same zone,
 * preferred (weight 10)
 * anti-affinity to app=db pods of namespaces labelled team=red. */
#define WEB                                                                                        \
	"{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"labels\":{\"app\":\"web\"}}," \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],\"affinity\":{"               \
	"\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":" \
	"{\"matchLabels\":{\"app\":\"db\"}},\"namespaces\":[\"default\",\"red-ns\"],"              \
	"\"topologyKey\":\"zone\"}]},"                                                             \
	"\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":"   \
	"10,"                                                                                      \
	"\"podAffinityTerm\":{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},"               \
	"\"namespaceSelector\":{\"matchLabels\":{\"team\":\"red\"}},\"topologyKey\":\"zone\"}}]}}" \
	"}}"
/* An existing pod whose required anti-affinity rejects app=web pods of
 * namespaces labelled team=blue on its node's zone. */
#define GUARD(name, node)                                                                          \
	"{\"metadata\":{\"name\":\"" name                                                          \
	"\",\"namespace\":\"ops\",\"labels\":{\"app\":\"guard\"}},"                                \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"   \
	"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"   \
	"[{\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},\"namespaceSelector\":"           \
	"{\"matchLabels\":{\"team\":\"blue\"}},\"topologyKey\":\"zone\"}]}}}}"

/* PreFilter and Filter, then PreScore and Score, on nodes a and b of snap:
 * "a:ok/-10 b:affinity" (Filter's verdict, then the raw score of a
 * feasible node, or skip when PreScore skipped). Every other node takes part in the cycle too. */
static const char *verdicts(const struct sx_snapshot *snap, const struct sx_pod *pod, char *out,
			    size_t len)
{
	void *self = P.init(NULL, NULL, &(struct sx_error){0});
	struct sx_cycle_state cs = {.snap = snap};
	struct sx_status *st = P.pre_filter(self, &cs, pod, NULL);
	const char *names[] = {"a", "b"};
	size_t at = 0;

	out[0] = '\0';
	CHECK(st == NULL);
	sx_status_free(st);
	st = P.pre_score(self, &cs, pod, snap->nodes, snap->nnodes);
	bool skip = st && st->code == SX_SKIP;
	CHECK(st == NULL || skip);
	sx_status_free(st);
	for (int i = 0; i < 2; i++) {
		const struct sx_node_info *ni = tu_ni(snap, names[i]);
		struct sx_status *f = P.filter(self, &cs, pod, ni);
		int64_t score = 0;
		at += snprintf(out + at, len - at, "%s%s:", i ? " " : "", names[i]);
		if (f) {
			at += snprintf(out + at, len - at, "%s",
				       strstr(f->reasons[0], "existing") ? "existing-anti"
				       : strstr(f->reasons[0], "anti")	 ? "anti"
									 : "affinity");
			sx_status_free(f);
			continue;
		}
		if (skip) {
			at += snprintf(out + at, len - at, "ok/skip");
			continue;
		}
		sx_status_free(P.score(self, &cs, pod, ni, &score));
		at += snprintf(out + at, len - at, "ok/%lld", (long long)score);
	}
	P.state_free(cs.slots[SX_SLOT_inter_pod_affinity]);
	P.destroy(self);
	return out;
}

/* Nodes a (zone z1), b (z2) and 70 others (z9), so that PreScore's walk
 * covers enough nodes for the memo. */
static struct sx_cache *memo_cluster(void)
{
	struct sx_cache *c = sx_cache_new();
	char name[32], json[128];

	tu_add(c, "Namespace", NS("default", "blue"));
	tu_add(c, "Namespace", NS("red-ns", "red"));
	tu_add(c, "Node", NODE("a", "z1"));
	tu_add(c, "Node", NODE("b", "z2"));
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "n%02d", i);
		snprintf(json, sizeof(json),
			 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"zone\":\"z9\"}}}", name);
		tu_add(c, "Node", json);
	}
	return c;
}

static void test_memo_follows_cache(void)
{
	char buf[256];
	struct sx_cache *c = memo_cluster();
	struct sx_pod *web = tu_pod(WEB);
	struct sx_snapshot *s1, *s2, *s;

	tu_add(c, "Pod", BARE("db-1", "default", "db", "a"));
	s1 = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s1, web, buf, sizeof(buf)), "a:ok/skip b:affinity");
	/* A db pod of a team=red namespace on b: b fits, scored down. */
	tu_add(c, "Pod", BARE("db-2", "red-ns", "db", "b"));
	s2 = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s2, web, buf, sizeof(buf)), "a:ok/0 b:ok/-10");
	CHECK_STR(verdicts(s1, web, buf, sizeof(buf)), "a:ok/skip b:affinity");
	/* The pod removed from a. */
	CHECK_INT(sx_cache_delete(c, SX_KIND_POD, sx_intern("default"), "db-1"), 0);
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:affinity b:ok/-10");
	sx_snapshot_unref(s);
	/* a moves into b's zone. */
	tu_add(c, "Node", NODE("a", "z2"));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:ok/-10 b:ok/-10");
	sx_snapshot_unref(s);
	/* red-ns is relabelled: the incoming pod's namespaceSelector no longer
	 * selects it. */
	tu_add(c, "Namespace", NS("red-ns", "green"));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:ok/skip b:ok/skip");
	sx_snapshot_unref(s);
	/* A guard pod whose namespaceSelector selects team=blue: the incoming
	 * pod's namespace (default) is blue, so z2 is closed to it... */
	tu_add(c, "Pod", GUARD("guard", "b"));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:existing-anti b:existing-anti");
	sx_snapshot_unref(s);
	/* ...until default is relabelled. */
	tu_add(c, "Namespace", NS("default", "yellow"));
	s = sx_cache_snapshot(c);
	CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:ok/skip b:ok/skip");
	sx_snapshot_unref(s);
	/* The first snapshots still say what they said. */
	CHECK_STR(verdicts(s2, web, buf, sizeof(buf)), "a:ok/0 b:ok/-10");
	CHECK_STR(verdicts(s1, web, buf, sizeof(buf)), "a:ok/skip b:affinity");

	sx_pod_unref(web);
	sx_snapshot_unref(s1);
	sx_snapshot_unref(s2);
	sx_cache_free(c);
}

/* Existing pods' required anti-affinity on most nodes (the memo of
 * existing_anti): guards in zone z9 and, for a while, on b. Each state is
 * asked twice: a key is memoized from its second sighting on. */
static void test_memo_existing_anti(void)
{
	char buf[256], name[32], json[512];
	struct sx_cache *c = memo_cluster();
	struct sx_pod *web = tu_pod(WEB);
	struct sx_snapshot *s1, *s;

	tu_add(c, "Pod", BARE("db-1", "default", "db", "a"));
	tu_add(c, "Pod", BARE("db-2", "default", "db", "b"));
	tu_add(c, "Pod", BARE("db-3", "default", "db", "n00"));
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "n%02d", i);
		snprintf(json, sizeof(json), GUARD("guard-%s", "%s"), name, name);
		tu_add(c, "Pod", json);
	}
	tu_add(c, "Pod", GUARD("guard-b", "b"));
	s1 = sx_cache_snapshot(c);
	for (int i = 0; i < 2; i++)
		CHECK_STR(verdicts(s1, web, buf, sizeof(buf)), "a:ok/skip b:existing-anti");
	CHECK_INT(sx_cache_delete(c, SX_KIND_POD, sx_intern("ops"), "guard-b"), 0);
	s = sx_cache_snapshot(c);
	for (int i = 0; i < 2; i++)
		CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:ok/skip b:ok/skip");
	sx_snapshot_unref(s);
	tu_add(c, "Node", NODE("b", "z9"));
	s = sx_cache_snapshot(c);
	for (int i = 0; i < 2; i++)
		CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:ok/skip b:existing-anti");
	sx_snapshot_unref(s);
	tu_add(c, "Namespace", NS("default", "yellow"));
	s = sx_cache_snapshot(c);
	for (int i = 0; i < 2; i++)
		CHECK_STR(verdicts(s, web, buf, sizeof(buf)), "a:ok/skip b:ok/skip");
	sx_snapshot_unref(s);
	CHECK_STR(verdicts(s1, web, buf, sizeof(buf)), "a:ok/skip b:existing-anti");

	sx_pod_unref(web);
	sx_snapshot_unref(s1);
	sx_cache_free(c);
}

/* Cycles on two threads, each on its own snapshot, share the memo (what
 * the extender's concurrent requests do); under TSan this checks its
 * locking. */
struct racer {
	const struct sx_snapshot *snap;
	const struct sx_pod *pod;
	const char *want;
	int bad;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char buf[256];

	for (int i = 0; i < 100; i++)
		if (strcmp(verdicts(r->snap, r->pod, buf, sizeof(buf)), r->want) != 0)
			r->bad++;
	return NULL;
}

static void test_memo_concurrent(void)
{
	struct sx_cache *c = memo_cluster();
	struct sx_pod *web = tu_pod(WEB);
	pthread_t t;

	tu_add(c, "Pod", BARE("db-1", "default", "db", "a"));
	struct racer r1 = {sx_cache_snapshot(c), web, "a:ok/skip b:affinity", 0};
	tu_add(c, "Pod", BARE("db-2", "red-ns", "db", "b"));
	struct racer r2 = {sx_cache_snapshot(c), web, "a:ok/0 b:ok/-10", 0};
	CHECK_INT(pthread_create(&t, NULL, race, &r1), 0);
	race(&r2);
	pthread_join(t, NULL);
	CHECK_INT(r1.bad, 0);
	CHECK_INT(r2.bad, 0);
	sx_snapshot_unref(r1.snap);
	sx_snapshot_unref(r2.snap);
	sx_pod_unref(web);
	sx_cache_free(c);
}

SX_TESTS(SX_TEST(test_args), SX_TEST(test_add_remove_on_clone), SX_TEST(test_memo_follows_cache),
	 SX_TEST(test_memo_existing_anti), SX_TEST(test_memo_concurrent))
