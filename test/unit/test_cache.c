/* Cache, NodeInfo, snapshots and the state-file loader. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/state.h"

/* ---------- helpers: objects from printf'd JSON ---------- */

static cJSON *parse_json(const char *fmt, va_list ap)
{
	char buf[8192];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	return cJSON_Parse(buf);
}

static struct sx_pod *make_pod(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct sx_pod *make_pod(const char *fmt, ...)
{
	struct sx_error err = {0};
	struct sx_pod *pod;
	va_list ap;
	cJSON *j;

	va_start(ap, fmt);
	j = parse_json(fmt, ap);
	va_end(ap);
	CHECK(j != NULL);
	pod = sx_decode_pod(j, &err);
	if (!pod)
		sx_test_fail(__FILE__, __LINE__, "decode pod: %s: %s", err.path, err.msg);
	cJSON_Delete(j);
	return pod;
}

static struct sx_node *make_node(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct sx_node *make_node(const char *fmt, ...)
{
	struct sx_error err = {0};
	struct sx_node *node;
	va_list ap;
	cJSON *j;

	va_start(ap, fmt);
	j = parse_json(fmt, ap);
	va_end(ap);
	CHECK(j != NULL);
	node = sx_decode_node(j, &err);
	if (!node)
		sx_test_fail(__FILE__, __LINE__, "decode node: %s: %s", err.path, err.msg);
	cJSON_Delete(j);
	return node;
}

/* A node in zone (region r, zone z; NULL = no label). */
static struct sx_node *zoned_node(const char *name, const char *region, const char *zone)
{
	char labels[512];

	snprintf(labels, sizeof(labels), "\"kubernetes.io/hostname\":\"%s\"%s%s%s%s%s%s", name,
		 region ? ",\"topology.kubernetes.io/region\":\"" : "", region ? region : "",
		 region ? "\"" : "", zone ? ",\"topology.kubernetes.io/zone\":\"" : "",
		 zone ? zone : "", zone ? "\"" : "");
	return make_node(
		"{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},"
		"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
		name, labels);
}

static struct sx_pod *simple_pod(const char *ns, const char *name, const char *uid,
				 const char *node, const char *cpu)
{
	return make_pod(
		"{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\"},"
		"\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\","
		"\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"100Mi\"}}}]},"
		"\"status\":{\"phase\":\"%s\"}}",
		name, ns, uid, node ? node : "", cpu, node ? "Running" : "Pending");
}

static int upsert_pod(struct sx_cache *c, struct sx_pod *p)
{
	struct sx_object o = {SX_KIND_POD, p};

	return sx_cache_upsert(c, &o);
}

static int upsert_node(struct sx_cache *c, struct sx_node *n)
{
	struct sx_object o = {SX_KIND_NODE, n};

	return sx_cache_upsert(c, &o);
}

static const struct sx_node_info *snap_node(const struct sx_snapshot *s, const char *name)
{
	int i = sx_snapshot_find(s, sx_intern(name));

	return i < 0 ? NULL : s->nodes[i];
}

static void setup(void)
{
	sx_intern_init();
	sx_log_verbosity = -1; /* keep test output quiet */
}

/* ---------- NodeInfo ---------- */

static void test_node_info_ports(void)
{
	struct sx_pod *p;
	struct sx_node_info *ni;
	struct sx_host_port q;

	setup();
	p = make_pod("{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"},\"spec\":{"
		     "\"containers\":["
		     "{\"name\":\"c\",\"image\":\"x\",\"ports\":[{\"containerPort\":80,"
		     "\"hostPort\":8080,"
		     "\"hostIP\":\"10.0.0.1\"},{\"containerPort\":53,\"hostPort\":53,\"protocol\":"
		     "\"UDP\"}]}]}}");
	ni = sx_node_info_new(sx_intern("n"), NULL);
	CHECK_INT(sx_node_info_add_pod(ni, p), 0);
	CHECK_INT(ni->nports, 2);
	q = (struct sx_host_port){sx_intern("10.0.0.1"), SX_PROTO_TCP, 8080};
	CHECK(sx_node_info_port_conflicts(ni, &q));
	q.ip = sx_intern("10.0.0.2"); /* another IP: free */
	CHECK(!sx_node_info_port_conflicts(ni, &q));
	q.ip = sx_intern("0.0.0.0"); /* every address: conflicts with 10.0.0.1 */
	CHECK(sx_node_info_port_conflicts(ni, &q));
	q.ip = SX_STR_EMPTY;
	CHECK(sx_node_info_port_conflicts(ni, &q));
	q.protocol = SX_PROTO_UDP; /* other protocol */
	CHECK(!sx_node_info_port_conflicts(ni, &q));
	q = (struct sx_host_port){sx_intern("192.168.1.1"), SX_PROTO_UDP, 53};
	CHECK(sx_node_info_port_conflicts(ni, &q)); /* used on 0.0.0.0 */
	q.protocol = SX_PROTO_SCTP;
	CHECK(!sx_node_info_port_conflicts(ni, &q));
	CHECK_INT(sx_node_info_remove_pod(ni, p), 0);
	CHECK_INT(ni->nports, 0);
	CHECK_INT(sx_node_info_remove_pod(ni, p), SX_ENOENT);
	sx_node_info_unref(ni);
	sx_pod_unref(p);
}

static void test_node_info_sums_and_clone(void)
{
	struct sx_pod *a, *b;
	struct sx_node_info *ni, *c;
	sx_str gpu;

	setup();
	gpu = sx_intern("nvidia.com/gpu");
	a = make_pod(
		"{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"},\"spec\":{\"containers\":["
		"{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"250m\","
		"\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"}}}],\"volumes\":[{\"name\":\"v\","
		"\"persistentVolumeClaim\":{\"claimName\":\"data\"}}]}}");
	b = make_pod(
		"{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\"},\"spec\":{\"containers\":["
		"{\"name\":\"c\",\"image\":\"x\"}],\"volumes\":[{\"name\":\"v\","
		"\"persistentVolumeClaim\":{\"claimName\":\"data\"}}],\"affinity\":{"
		"\"podAntiAffinity\":"
		"{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{},"
		"\"topologyKey\":\"kubernetes.io/hostname\"}]}}}}");
	ni = sx_node_info_new(sx_intern("n"), NULL);
	CHECK_INT(sx_node_info_add_pod(ni, a), 0);
	CHECK_INT(sx_node_info_add_pod(ni, b), 0);
	CHECK_INT(ni->npods, 2);
	CHECK_INT(ni->requested.milli_cpu, 250);
	CHECK_INT(ni->requested.memory, 1073741824);
	CHECK_INT(sx_resources_get(&ni->requested, gpu), 1);
	CHECK_INT(ni->nonzero_milli_cpu, 350);		       /* b gets the 100m default */
	CHECK_INT(ni->nonzero_memory, 1073741824 + 209715200); /* and 200Mi */
	CHECK_INT(ni->naffinity, 1);
	CHECK_INT(ni->nanti, 1);
	CHECK_INT(ni->npvcs, 1);
	CHECK_INT(ni->pvcs[0].count, 2);
	CHECK_STR(sx_str_get(ni->pvcs[0].name), "data");
	CHECK_INT(ni->nns, 1);
	CHECK_INT(sx_node_info_ns(ni, sx_intern("ns"))->pods, 2);
	CHECK_INT(sx_node_info_ns(ni, sx_intern("ns"))->affinity, 1);
	CHECK_INT(sx_node_info_ns(ni, sx_intern("ns"))->anti, 1);
	CHECK(sx_node_info_ns(ni, sx_intern("other")) == NULL);
	CHECK_INT(ni->naffinity_any_ns + ni->nanti_any_ns, 0); /* b's term is local */

	c = sx_node_info_clone(ni);
	CHECK_INT(sx_node_info_remove_pod(ni, a), 0);
	CHECK_INT(ni->requested.nscalar, 0); /* zero entries are dropped */
	CHECK_INT(ni->requested.milli_cpu, 0);
	CHECK_INT(ni->pvcs[0].count, 1);
	CHECK_INT(sx_node_info_remove_pod(ni, b), 0);
	CHECK_INT(ni->naffinity + ni->nanti + ni->npvcs + ni->npods + ni->nns, 0);
	/* the clone is untouched */
	CHECK_INT(c->npods, 2);
	CHECK_INT(sx_node_info_ns(c, sx_intern("ns"))->pods, 2);
	CHECK_INT(sx_resources_get(&c->requested, gpu), 1);
	CHECK_INT(c->pvcs[0].count, 2);
	sx_node_info_unref(c);
	sx_node_info_unref(ni);
	sx_pod_unref(a);
	sx_pod_unref(b);
}

/* ---------- random operations checked against a model ---------- */

#define RN_NODES 8
#define RN_PODS	 120

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

enum { API_NONE, API_PENDING, API_BOUND };

struct model_pod {
	int api;
	int api_node;			      /* when API_BOUND */
	int assumed_node;		      /* -1 = not assumed */
	int uid;			      /* generation of the UID */
	struct sx_pod *api_obj, *assumed_obj; /* model's references */
};

struct model {
	bool node_exists[RN_NODES];
	struct model_pod pods[RN_PODS];
};

static char node_names[RN_NODES][24];

static struct sx_pod *random_pod(int i, int uid, int node, const char *phase)
{
	char ports[128] = "", pvc[160] = "", aff[300] = "", scalar[64] = "";

	if (rnd(4) == 0)
		snprintf(ports, sizeof(ports),
			 ",\"ports\":[{\"containerPort\":80,\"hostPort\":%u%s}]", 8000 + rnd(3),
			 rnd(2) ? ",\"hostIP\":\"10.0.0.1\"" : "");
	if (rnd(4) == 0)
		snprintf(pvc, sizeof(pvc),
			 ",\"volumes\":[{\"name\":\"v\",\"persistentVolumeClaim\":"
			 "{\"claimName\":\"claim-%u\"}}]",
			 rnd(3));
	if (rnd(5) == 0)
		snprintf(aff, sizeof(aff),
			 ",\"affinity\":{\"%s\":{\"%s\":[{\"labelSelector\":{},"
			 "\"topologyKey\":\"kubernetes.io/hostname\"%s}]}}",
			 rnd(2) ? "podAntiAffinity" : "podAffinity",
			 rnd(2) ? "requiredDuringSchedulingIgnoredDuringExecution"
				: "preferredDuringSchedulingIgnoredDuringExecution",
			 rnd(2) ? ",\"namespaces\":[\"shop\"]" : ""); /* any-namespace counts */
	if (aff[0] && strstr(aff, "preferred")) /* preferred terms wrap the term */
		snprintf(aff, sizeof(aff),
			 ",\"affinity\":{\"podAntiAffinity\":{"
			 "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":5,"
			 "\"podAffinityTerm\":{\"topologyKey\":\"kubernetes.io/hostname\"}}]}}");
	if (rnd(3) == 0)
		snprintf(scalar, sizeof(scalar), ",\"example.com/r%u\":\"%u\"", rnd(2), 1 + rnd(3));
	return make_pod(
		"{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"%s\",\"uid\":\"u%d-%d\"},"
		"\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"img\","
		"\"resources\":{\"requests\":{\"cpu\":\"%um\",\"memory\":\"%uMi\"%s}}%s}]%s%s},"
		"\"status\":{\"phase\":\"%s\"}}",
		i, i % 2 ? "default" : "shop", i, uid, node >= 0 ? node_names[node] : "",
		rnd(4) ? 10 * (1 + rnd(50)) : 0, 1 + rnd(512), scalar, ports, pvc, aff, phase);
}

static int counted_node(const struct model_pod *m)
{
	if (m->assumed_node >= 0)
		return m->assumed_node;
	return m->api == API_BOUND ? m->api_node : -1;
}

static const struct sx_pod *model_visible(const struct model_pod *m)
{
	return m->assumed_node >= 0 ? m->assumed_obj : m->api_obj;
}

static void set_ref(struct sx_pod **slot, struct sx_pod *p)
{
	sx_pod_unref(*slot);
	*slot = p ? sx_pod_ref(p) : NULL;
}

static int port_count(const struct sx_node_info *ni, const struct sx_host_port *p)
{
	int n = 0;

	for (uint32_t i = 0; i < ni->nports; i++)
		n += ni->used_ports[i].ip == p->ip && ni->used_ports[i].port == p->port &&
		     ni->used_ports[i].protocol == p->protocol;
	return n;
}

/* Recomputes one node's sums from the model and compares with ni. */
static void check_node(const struct model *m, int n, const struct sx_node_info *ni)
{
	struct sx_node_info *want = sx_node_info_new(sx_intern(node_names[n]), NULL);

	for (int i = 0; i < RN_PODS; i++)
		if (counted_node(&m->pods[i]) == n)
			sx_node_info_add_pod(want, model_visible(&m->pods[i]));
	CHECK_INT(ni->npods, want->npods);
	CHECK_INT(ni->requested.milli_cpu, want->requested.milli_cpu);
	CHECK_INT(ni->requested.memory, want->requested.memory);
	CHECK_INT(ni->requested.nscalar, want->requested.nscalar);
	for (uint32_t k = 0; k < want->requested.nscalar && k < ni->requested.nscalar; k++) {
		CHECK_INT(ni->requested.scalar[k].name, want->requested.scalar[k].name);
		CHECK_INT(ni->requested.scalar[k].value, want->requested.scalar[k].value);
	}
	CHECK_INT(ni->nonzero_milli_cpu, want->nonzero_milli_cpu);
	CHECK_INT(ni->nonzero_memory, want->nonzero_memory);
	CHECK_INT(ni->naffinity, want->naffinity);
	CHECK_INT(ni->nanti, want->nanti);
	CHECK_INT(ni->nports, want->nports);
	for (uint32_t k = 0; k < want->nports; k++) /* multiset equality */
		CHECK_INT(port_count(ni, &want->used_ports[k]),
			  port_count(want, &want->used_ports[k]));
	CHECK_INT(ni->nns, want->nns);
	for (uint32_t k = 0; k < want->nns; k++) {
		const struct sx_ns_count *got = sx_node_info_ns(ni, want->ns_counts[k].ns);

		CHECK(got != NULL);
		if (!got)
			continue;
		CHECK_INT(got->pods, want->ns_counts[k].pods);
		CHECK_INT(got->affinity, want->ns_counts[k].affinity);
		CHECK_INT(got->anti, want->ns_counts[k].anti);
	}
	CHECK_INT(ni->naffinity_any_ns, want->naffinity_any_ns);
	CHECK_INT(ni->nanti_any_ns, want->nanti_any_ns);
	CHECK_INT(ni->npvcs, want->npvcs);
	for (uint32_t k = 0; k < want->npvcs; k++) {
		bool found = false;

		for (uint32_t q = 0; q < ni->npvcs; q++)
			if (ni->pvcs[q].ns == want->pvcs[k].ns &&
			    ni->pvcs[q].name == want->pvcs[k].name) {
				CHECK_INT(ni->pvcs[q].count, want->pvcs[k].count);
				found = true;
			}
		CHECK(found);
	}
	sx_node_info_unref(want);
}

/* The snapshot's per-namespace totals equal the sums over its NodeInfos. */
static void check_ns_totals(const struct sx_snapshot *s)
{
	uint64_t aff_any = 0, anti_any = 0;
	uint32_t nonzero = 0;

	CHECK(s->has_ns_totals);
	for (uint32_t i = 0; i < s->nnodes; i++) {
		aff_any += s->nodes[i]->naffinity_any_ns;
		anti_any += s->nodes[i]->nanti_any_ns;
	}
	CHECK_INT(s->affinity_any_ns, aff_any);
	CHECK_INT(s->anti_any_ns, anti_any);
	for (uint32_t t = 0; t < s->nns_totals; t++) {
		struct sx_ns_count sum = {.ns = s->ns_totals[t].ns};

		if (t > 0)
			CHECK(s->ns_totals[t - 1].ns < s->ns_totals[t].ns);
		for (uint32_t i = 0; i < s->nnodes; i++) {
			const struct sx_ns_count *c = sx_node_info_ns(s->nodes[i], sum.ns);

			if (c) {
				sum.pods += c->pods;
				sum.affinity += c->affinity;
				sum.anti += c->anti;
			}
		}
		CHECK_INT(s->ns_totals[t].pods, sum.pods);
		CHECK_INT(s->ns_totals[t].affinity, sum.affinity);
		CHECK_INT(s->ns_totals[t].anti, sum.anti);
		CHECK_INT(sx_snapshot_may_select_affinity(s, sum.ns),
			  sum.affinity > 0 || aff_any > 0);
		CHECK_INT(sx_snapshot_may_select_anti(s, sum.ns), sum.anti > 0 || anti_any > 0);
		nonzero += sum.pods > 0;
	}
	/* every namespace present on a node has an entry */
	for (uint32_t i = 0; i < s->nnodes; i++)
		for (uint32_t j = 0; j < s->nodes[i]->nns; j++) {
			uint32_t t = 0;

			while (t < s->nns_totals &&
			       s->ns_totals[t].ns != s->nodes[i]->ns_counts[j].ns)
				t++;
			CHECK(t < s->nns_totals);
		}
	(void)nonzero;
}

static void check_all(struct sx_cache *c, const struct model *m)
{
	struct sx_snapshot *s = sx_cache_snapshot(c);
	struct sx_cache_stats st;
	uint32_t nodes = 0, pods = 0, assumed = 0, pending = 0;

	for (int n = 0; n < RN_NODES; n++) {
		const struct sx_node_info *ni = snap_node(s, node_names[n]);

		CHECK((ni != NULL) == m->node_exists[n]);
		if (ni)
			check_node(m, n, ni);
		nodes += m->node_exists[n];
	}
	CHECK_INT(s->nnodes, nodes);
	check_ns_totals(s);
	for (int i = 0; i < RN_PODS; i++) {
		const struct model_pod *p = &m->pods[i];

		if (p->api == API_NONE && p->assumed_node < 0)
			continue;
		pods++;
		assumed += p->assumed_node >= 0;
		pending += p->assumed_node < 0 && p->api == API_PENDING;
	}
	sx_cache_stats(c, &st);
	CHECK_INT(st.nodes, nodes);
	CHECK_INT(st.pods, pods);
	CHECK_INT(st.assumed_pods, assumed);
	CHECK_INT(st.pending_pods, pending);
	sx_snapshot_unref(s);
}

static void random_op(struct sx_cache *c, struct model *m)
{
	int i = (int)rnd(RN_PODS), n = (int)rnd(RN_NODES), op = (int)rnd(100);
	struct model_pod *p = &m->pods[i];
	char name[16];
	struct sx_pod *pod;
	int rc;

	snprintf(name, sizeof(name), "p%d", i);
	if (op < 8) { /* node add/update */
		upsert_node(c, zoned_node(node_names[n], "eu", n % 3 ? "eu-a" : "eu-b"));
		m->node_exists[n] = true;
	} else if (op < 12) { /* node delete (its pods stay counted, node-less) */
		rc = sx_cache_delete(c, SX_KIND_NODE, SX_STR_EMPTY, node_names[n]);
		CHECK_INT(rc, m->node_exists[n] ? 0 : SX_ENOENT);
		m->node_exists[n] = false;
	} else if (op < 45) { /* bound pod (maybe onto a node not yet known) */
		if (rnd(6) == 0)
			p->uid++;
		pod = random_pod(i, p->uid, n, "Running");
		if (p->assumed_node >= 0)
			set_ref(&p->assumed_obj, NULL);
		p->assumed_node = -1; /* confirmed, or a new UID replaced it */
		p->api = API_BOUND;
		p->api_node = n;
		set_ref(&p->api_obj, pod);
		CHECK_INT(upsert_pod(c, pod), 0);
	} else if (op < 60) { /* pending pod */
		pod = random_pod(i, p->uid, -1, "Pending");
		if (p->assumed_node >= 0 && (p->api == API_BOUND)) {
			/* unreachable in the model: assumed implies not bound */
		}
		p->api = API_PENDING;
		set_ref(&p->api_obj, pod);
		CHECK_INT(upsert_pod(c, pod), 0);
	} else if (op < 65) { /* terminal */
		pod = random_pod(i, p->uid, rnd(2) ? n : -1, rnd(2) ? "Succeeded" : "Failed");
		p->api = API_NONE;
		p->assumed_node = -1;
		set_ref(&p->api_obj, NULL);
		set_ref(&p->assumed_obj, NULL);
		CHECK_INT(upsert_pod(c, pod), 0);
	} else if (op < 75) { /* delete */
		rc = sx_cache_delete(c, SX_KIND_POD, sx_intern(i % 2 ? "default" : "shop"), name);
		CHECK_INT(rc, (p->api != API_NONE || p->assumed_node >= 0) ? 0 : SX_ENOENT);
		p->api = API_NONE;
		p->assumed_node = -1;
		set_ref(&p->api_obj, NULL);
		set_ref(&p->assumed_obj, NULL);
	} else if (op < 90) { /* assume */
		int cur = counted_node(p);
		int want;

		pod = random_pod(i, p->uid, -1, "Pending");
		rc = sx_cache_assume(c, pod, sx_intern(node_names[n]));
		if (cur < 0)
			want = 0;
		else
			want = cur == n ? 0 : SX_EEXIST;
		CHECK_INT(rc, want);
		if (cur < 0) {
			p->assumed_node = n;
			set_ref(&p->assumed_obj, pod);
		}
		sx_pod_unref(pod);
		if (rc == 0 && rnd(2))
			CHECK_INT(sx_cache_finish_binding(c, sx_intern(i % 2 ? "default" : "shop"),
							  name),
				  p->assumed_node >= 0 ? 0 : SX_ENOENT);
	} else { /* forget */
		rc = sx_cache_forget(c, sx_intern(i % 2 ? "default" : "shop"), name);
		CHECK_INT(rc, p->assumed_node >= 0 ? 0 : SX_ENOENT);
		p->assumed_node = -1;
		set_ref(&p->assumed_obj, NULL);
	}
}

static void test_random_sequences(void)
{
	static struct model m;
	struct sx_cache *c;
	struct sx_snapshot *held = NULL;

	setup();
	for (int n = 0; n < RN_NODES; n++)
		snprintf(node_names[n], sizeof(node_names[n]), "node-%d", n);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		memset(&m, 0, sizeof(m));
		for (int i = 0; i < RN_PODS; i++)
			m.pods[i].assumed_node = -1;
		rng_state = 0x9e3779b97f4a7c15ULL * seed;
		c = sx_cache_new();
		for (int op = 1; op <= 3000; op++) {
			random_op(c, &m);
			if (op % 7 == 0) { /* keep a snapshot alive: forces copy on write */
				sx_snapshot_unref(held);
				held = sx_cache_snapshot(c);
			}
			if (op % 50 == 0)
				check_all(c, &m);
			if (sx_test_failures)
				break;
		}
		check_all(c, &m);
		sx_snapshot_unref(held);
		held = NULL;
		sx_cache_free(c);
		for (int i = 0; i < RN_PODS; i++) {
			set_ref(&m.pods[i].api_obj, NULL);
			set_ref(&m.pods[i].assumed_obj, NULL);
		}
	}
}

/* ---------- pods before nodes, node deletion ---------- */

static void test_pod_before_node(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
	const struct sx_node_info *ni;
	sx_str node;
	bool assumed;
	const struct sx_pod *got;

	setup();
	CHECK_INT(upsert_pod(c, simple_pod("default", "early", "u1", "late-node", "300m")), 0);
	s = sx_cache_snapshot(c);
	CHECK_INT(s->nnodes, 0);
	sx_snapshot_unref(s);
	got = sx_cache_get_pod(c, sx_intern("default"), "early", &node, &assumed);
	CHECK(got != NULL);
	CHECK_STR(sx_str_get(node), "late-node");
	CHECK(!assumed);
	sx_pod_unref(got);

	CHECK_INT(upsert_node(c, zoned_node("late-node", "eu", "eu-a")), 0);
	s = sx_cache_snapshot(c);
	ni = snap_node(s, "late-node");
	CHECK(ni != NULL && ni->node != NULL);
	CHECK_INT(ni ? ni->npods : 0, 1);
	CHECK_INT(ni ? ni->requested.milli_cpu : 0, 300);
	sx_snapshot_unref(s);

	/* deleting the node keeps the pod counted; it is back with the node */
	CHECK_INT(sx_cache_delete(c, SX_KIND_NODE, SX_STR_EMPTY, "late-node"), 0);
	CHECK(sx_cache_get_node(c, "late-node") == NULL);
	s = sx_cache_snapshot(c);
	CHECK_INT(s->nnodes, 0);
	sx_snapshot_unref(s);
	CHECK_INT(upsert_node(c, zoned_node("late-node", "eu", "eu-a")), 0);
	s = sx_cache_snapshot(c);
	ni = snap_node(s, "late-node");
	CHECK_INT(ni ? ni->requested.milli_cpu : 0, 300);
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

/* ---------- assumed pods ---------- */

static void test_assume_confirm_forget(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_pod *pending;
	struct sx_snapshot *s;
	sx_str a, b, node, def;
	bool assumed;
	const struct sx_pod *got;

	setup();
	a = sx_intern("node-a");
	b = sx_intern("node-b");
	def = sx_intern("default");
	upsert_node(c, zoned_node("node-a", NULL, NULL));
	upsert_node(c, zoned_node("node-b", NULL, NULL));
	pending = simple_pod("default", "web", "u1", NULL, "500m");
	CHECK_INT(upsert_pod(c, sx_pod_ref(pending)), 0);

	CHECK_INT(sx_cache_assume(c, pending, a), 0);
	CHECK_INT(sx_cache_assume(c, pending, a), 0);	      /* idempotent */
	CHECK_INT(sx_cache_assume(c, pending, b), SX_EEXIST); /* elsewhere */
	got = sx_cache_get_pod(c, def, "web", &node, &assumed);
	CHECK(assumed);
	CHECK_INT(node, a);
	sx_pod_unref(got);
	s = sx_cache_snapshot(c);
	CHECK_INT(snap_node(s, "node-a")->requested.milli_cpu, 500);
	sx_snapshot_unref(s);

	/* a pending update while the binding is in flight keeps it assumed */
	CHECK_INT(upsert_pod(c, simple_pod("default", "web", "u1", NULL, "500m")), 0);
	got = sx_cache_get_pod(c, def, "web", &node, &assumed);
	CHECK(assumed);
	sx_pod_unref(got);

	/* the watch shows it bound elsewhere: confirmed there */
	CHECK_INT(sx_cache_finish_binding(c, def, "web"), 0);
	CHECK_INT(upsert_pod(c, simple_pod("default", "web", "u1", "node-b", "500m")), 0);
	got = sx_cache_get_pod(c, def, "web", &node, &assumed);
	CHECK(!assumed);
	CHECK_INT(node, b);
	sx_pod_unref(got);
	s = sx_cache_snapshot(c);
	CHECK_INT(snap_node(s, "node-a")->requested.milli_cpu, 0);
	CHECK_INT(snap_node(s, "node-b")->requested.milli_cpu, 500);
	sx_snapshot_unref(s);
	CHECK_INT(sx_cache_forget(c, def, "web"), SX_ENOENT);

	/* forget returns an assumed pod to pending */
	CHECK_INT(upsert_pod(c, simple_pod("default", "api", "u2", NULL, "200m")), 0);
	got = sx_cache_get_pod(c, def, "api", NULL, NULL);
	CHECK_INT(sx_cache_assume(c, got, a), 0);
	sx_pod_unref(got);
	CHECK_INT(sx_cache_forget(c, def, "api"), 0);
	got = sx_cache_get_pod(c, def, "api", &node, &assumed);
	CHECK(got != NULL && !assumed && node == SX_STR_EMPTY);
	sx_pod_unref(got);

	/* deleting an assumed pod releases it */
	got = sx_cache_get_pod(c, def, "api", NULL, NULL);
	CHECK_INT(sx_cache_assume(c, got, a), 0);
	sx_pod_unref(got);
	CHECK_INT(sx_cache_delete(c, SX_KIND_POD, def, "api"), 0);
	s = sx_cache_snapshot(c);
	CHECK_INT(snap_node(s, "node-a")->npods, 0);
	sx_snapshot_unref(s);

	/* expiry: only finished bindings, only with a TTL */
	CHECK_INT(sx_cache_assume(c, pending, a), SX_EEXIST); /* "web" is bound on b */
	got = simple_pod("default", "job", "u3", NULL, "100m");
	CHECK_INT(sx_cache_assume(c, got, a), 0); /* unknown pod: assumed only */
	CHECK_INT(sx_cache_expire_assumed(c, 0), 0);
	CHECK_INT(sx_cache_expire_assumed(c, 1e-9), 0); /* binding not finished */
	CHECK_INT(sx_cache_finish_binding(c, def, "job"), 0);
	CHECK_INT(sx_cache_expire_assumed(c, 1e-9) + sx_cache_expire_assumed(c, 1e-9), 1);
	CHECK(sx_cache_get_pod(c, def, "job", NULL, NULL) == NULL);
	sx_pod_unref(got);
	sx_pod_unref(pending);
	sx_cache_free(c);
}

/* ---------- snapshots ---------- */

static void test_snapshot_isolation_and_reuse(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s1, *s2, *s3;
	const struct sx_node_info *a1;

	setup();
	upsert_node(c, zoned_node("n1", "r", "z1"));
	upsert_node(c, zoned_node("n2", "r", "z2"));
	upsert_pod(c, simple_pod("default", "p1", "u1", "n1", "100m"));
	s1 = sx_cache_snapshot(c);
	a1 = snap_node(s1, "n1");
	CHECK_INT(a1->requested.milli_cpu, 100);

	/* nothing changed: the same snapshot; a pending pod changes nothing */
	s2 = sx_cache_snapshot(c);
	CHECK(s1 == s2);
	sx_snapshot_unref(s2);
	upsert_pod(c, simple_pod("default", "pending", "u9", NULL, "100m"));
	s2 = sx_cache_snapshot(c);
	CHECK(s1 == s2);
	sx_snapshot_unref(s2);

	upsert_pod(c, simple_pod("default", "p2", "u2", "n1", "250m"));
	s2 = sx_cache_snapshot(c);
	CHECK(s1 != s2);
	CHECK(s2->generation > s1->generation);
	CHECK_INT(a1->requested.milli_cpu, 100); /* s1 did not change */
	CHECK_INT(a1->npods, 1);
	CHECK_INT(snap_node(s2, "n1")->requested.milli_cpu, 350);
	CHECK(snap_node(s2, "n1") != a1);		   /* copied on write */
	CHECK(snap_node(s2, "n2") == snap_node(s1, "n2")); /* unchanged: shared */
	CHECK(s2->namespaces == s1->namespaces);

	/* a namespace changes the shared arrays, not the NodeInfos */
	{
		struct sx_error err;
		cJSON *j = cJSON_Parse("{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"shop\","
				       "\"labels\":{\"team\":\"a\"}}}");
		struct sx_object o;
		sx_str v = SX_STR_EMPTY;

		CHECK_INT(sx_decode_object(j, NULL, &o, &err), 0);
		cJSON_Delete(j);
		CHECK_INT(sx_cache_upsert(c, &o), 0);
		s3 = sx_cache_snapshot(c);
		CHECK_INT(s3->nnamespaces, 1);
		CHECK(snap_node(s3, "n1") == snap_node(s2, "n1"));
		CHECK(sx_labels_get(sx_snapshot_namespace_labels(s3, sx_intern("shop")),
				    sx_intern("team"), &v));
		CHECK_STR(sx_str_get(v), "a");
		CHECK(sx_snapshot_namespace_labels(s3, sx_intern("default")) == NULL);
		CHECK(sx_snapshot_namespace_labels(s2, sx_intern("shop")) == NULL);
		sx_snapshot_unref(s3);
	}
	sx_snapshot_unref(s1);
	sx_snapshot_unref(s2);
	sx_cache_free(c);
}

static bool has_pod(const struct sx_node_info *ni, const char *name)
{
	for (uint32_t i = 0; i < ni->npods; i++)
		if (strcmp(ni->pods[i]->meta.name, name) == 0)
			return true;
	return false;
}

/* Clones share their pod list; appends past the shared length land in
 * place for the first clone only, every other change copies: each
 * NodeInfo keeps seeing exactly its own pods, whatever dies first. */
static void test_node_info_shared_pods(void)
{
	struct sx_pod *p[6];
	struct sx_node_info *a, *b, *c;
	char name[16];

	setup();
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		p[i] = simple_pod("default", name, name, "n", "10m");
	}
	a = sx_node_info_new(sx_intern("n"), NULL);
	CHECK_INT(sx_node_info_add_pod(a, p[0]), 0);
	CHECK_INT(sx_node_info_add_pod(a, p[1]), 0);
	b = sx_node_info_clone(a);
	c = sx_node_info_clone(a);
	CHECK(b->pods == a->pods);		     /* shared */
	CHECK_INT(sx_node_info_add_pod(b, p[2]), 0); /* in place */
	CHECK(b->pods == a->pods);
	CHECK_INT(sx_node_info_add_pod(c, p[3]), 0); /* slot taken by b: copy */
	CHECK(c->pods != a->pods);
	CHECK_INT(sx_node_info_add_pod(a, p[4]), 0); /* a too must copy */
	CHECK(a->pods != b->pods);
	CHECK_INT(a->npods, 3);
	CHECK_INT(b->npods, 3);
	CHECK_INT(c->npods, 3);
	CHECK(has_pod(a, "p4") && !has_pod(a, "p2") && !has_pod(a, "p3"));
	CHECK(has_pod(b, "p2") && !has_pod(b, "p4"));
	CHECK(has_pod(c, "p3") && !has_pod(c, "p2"));
	CHECK_INT(b->requested.milli_cpu, 30);
	/* removal from a shared list copies; the sharer keeps its pods */
	sx_node_info_unref(a);
	a = sx_node_info_clone(b);
	CHECK_INT(sx_node_info_remove_pod(a, p[0]), 0);
	CHECK_INT(a->npods, 2);
	CHECK(!has_pod(a, "p0") && has_pod(b, "p0"));
	CHECK_INT(sx_node_info_remove_pod(a, p[0]), SX_ENOENT);
	/* the appender dies first: the survivor reuses the slot */
	sx_node_info_unref(c);
	c = sx_node_info_clone(b);
	CHECK_INT(sx_node_info_add_pod(c, p[5]), 0);
	sx_node_info_unref(c);
	CHECK_INT(sx_node_info_add_pod(b, p[4]), 0);
	CHECK_INT(b->npods, 4);
	CHECK(has_pod(b, "p4") && !has_pod(b, "p5"));
	for (int i = 0; i < 6; i++)
		sx_pod_unref(p[i]); /* NodeInfos keep their own references */
	CHECK(has_pod(b, "p2"));
	sx_node_info_unref(a);
	sx_node_info_unref(b);
}

/* Snapshots patched from the previous one hold only the swapped NodeInfos
 * and a reference on the previous chain (flattened now and then): every
 * snapshot kept alive must keep seeing its own sums, across flattening. */
static void test_snapshot_chain(void)
{
	enum { NODES = 6, ROUNDS = 300, KEEP = 16 };
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *kept[KEEP] = {0};
	int64_t want[KEEP][NODES];
	char name[32];

	setup();
	for (int n = 0; n < NODES; n++) {
		snprintf(name, sizeof(name), "n%d", n);
		upsert_node(c, zoned_node(name, "r", "z"));
	}
	for (int r = 0; r < ROUNDS && !sx_test_failures; r++) {
		struct sx_snapshot *s = sx_cache_snapshot(c);
		struct sx_pod *p;
		int k = r % KEEP;

		CHECK(s != NULL);
		CHECK_INT(s->nnodes, NODES);
		if (kept[k]) { /* still as it was when taken */
			for (int n = 0; n < NODES; n++)
				CHECK_INT(kept[k]->nodes[n]->requested.milli_cpu, want[k][n]);
			sx_snapshot_unref(kept[k]);
		}
		kept[k] = s;
		for (int n = 0; n < NODES; n++)
			want[k][n] = s->nodes[n]->requested.milli_cpu;
		check_ns_totals(s);
		snprintf(name, sizeof(name), "p%d", r);
		if (r % 3 == 0) /* required anti-affinity, another namespace */
			p = make_pod("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns%d\","
				     "\"uid\":\"%s\",\"labels\":{\"app\":\"a\"}},\"spec\":{"
				     "\"affinity\":{\"podAntiAffinity\":{"
				     "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
				     "\"labelSelector\":{\"matchLabels\":{\"app\":\"a\"}},"
				     "\"topologyKey\":\"kubernetes.io/hostname\"}]}},"
				     "\"containers\":[{\"name\":\"c\",\"image\":\"x\","
				     "\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}",
				     name, r % 5, name);
		else
			p = simple_pod("default", name, name, NULL, "10m");
		snprintf(name, sizeof(name), "n%d", (r * 7) % NODES);
		CHECK_INT(sx_cache_assume(c, p, sx_intern(name)), 0);
		sx_pod_unref(p);
	}
	{
		struct sx_snapshot *s = sx_cache_snapshot(c);
		int64_t total = 0;

		for (int n = 0; n < NODES; n++)
			total += s->nodes[n]->requested.milli_cpu;
		CHECK_INT(total, (int64_t)ROUNDS * 10);
		sx_snapshot_unref(s);
	}
	for (int k = 0; k < KEEP; k++)
		sx_snapshot_unref(kept[k]);
	sx_cache_free(c);
}

static void test_snapshot_images_and_with_nodes(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s, *w;
	struct sx_node *n2, *n3;
	const struct sx_node *list[2];
	const char *imgs =
		"\"images\":[{\"names\":[\"nginx:1.25\",\"docker.io/library/nginx@sha256:aa\"],"
		"\"sizeBytes\":100},{\"names\":[\"nginx:1.25\"],\"sizeBytes\":100}]";

	setup();
	upsert_node(c, make_node("{\"metadata\":{\"name\":\"n1\"},\"status\":{%s}}", imgs));
	upsert_node(c, make_node("{\"metadata\":{\"name\":\"n2\"},\"status\":{%s}}", imgs));
	upsert_node(c, make_node("{\"metadata\":{\"name\":\"n3\"},\"status\":{\"images\":[]}}"));
	upsert_pod(c, simple_pod("default", "p", "u", "n2", "1"));
	s = sx_cache_snapshot(c);
	CHECK_INT(sx_snapshot_image_nodes(s, sx_intern("nginx:1.25")), 2); /* once per node */
	CHECK_INT(sx_snapshot_image_nodes(s, sx_intern("docker.io/library/nginx@sha256:aa")), 2);
	CHECK_INT(sx_snapshot_image_nodes(s, sx_intern("redis:7")), 0);

	/* an extender request with full Node objects */
	n2 = make_node("{\"metadata\":{\"name\":\"n2\",\"labels\":{\"x\":\"y\"}},\"status\":{}}");
	n3 = make_node("{\"metadata\":{\"name\":\"n9\"},\"status\":{%s}}", imgs);
	list[0] = n2;
	list[1] = n3;
	w = sx_snapshot_with_nodes(s, list, 2);
	CHECK(w != NULL);
	CHECK_INT(w->nnodes, 4);
	CHECK(snap_node(w, "n2")->node == n2);
	CHECK_INT(snap_node(w, "n2")->requested.milli_cpu, 1000); /* pods kept */
	CHECK_INT(snap_node(w, "n9")->npods, 0);
	CHECK(snap_node(w, "n1") == snap_node(s, "n1"));
	CHECK_INT(sx_snapshot_image_nodes(w, sx_intern("nginx:1.25")), 2); /* n1 and n9 */
	CHECK(snap_node(s, "n2")->node != n2); /* the cache's snapshot is untouched */
	sx_node_unref(n2);
	sx_node_unref(n3);
	sx_snapshot_unref(w);

	/* a node losing its images updates the counts */
	upsert_node(c, make_node("{\"metadata\":{\"name\":\"n1\"},\"status\":{}}"));
	sx_snapshot_unref(s);
	s = sx_cache_snapshot(c);
	CHECK_INT(sx_snapshot_image_nodes(s, sx_intern("nginx:1.25")), 1);
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

static void check_order(struct sx_cache *c, const char *want)
{
	struct sx_snapshot *s = sx_cache_snapshot(c);
	char got[256] = "";

	for (uint32_t i = 0; i < s->nnodes; i++) {
		if (i)
			strcat(got, ",");
		strcat(got, sx_str_get(s->nodes[i]->name));
	}
	CHECK_STR(got, want);
	sx_snapshot_unref(s);
}

static void test_node_tree_order(void)
{
	struct sx_cache *c = sx_cache_new();

	setup();
	upsert_node(c, zoned_node("a1", "r1", "za"));
	upsert_node(c, zoned_node("a2", "r1", "za"));
	upsert_node(c, zoned_node("b1", "r1", "zb"));
	upsert_node(c, zoned_node("c1", "r2", "za")); /* same zone name, other region */
	upsert_node(c, zoned_node("b2", "r1", "zb"));
	upsert_node(c, zoned_node("a3", "r1", "za"));
	upsert_node(c, zoned_node("x1", NULL, NULL)); /* the "" zone */
	check_order(c, "a1,b1,c1,x1,a2,b2,a3");
	/* a relabelled node moves to the end of its new zone */
	upsert_node(c, zoned_node("a1", "r1", "zb"));
	check_order(c, "a2,b1,c1,x1,a3,b2,a1");
	/* the deprecated beta label wins over the GA one */
	upsert_node(c, make_node("{\"metadata\":{\"name\":\"c1\",\"labels\":{"
				 "\"failure-domain.beta.kubernetes.io/region\":\"r1\","
				 "\"failure-domain.beta.kubernetes.io/zone\":\"za\","
				 "\"topology.kubernetes.io/region\":\"r2\","
				 "\"topology.kubernetes.io/zone\":\"za\"}}}"));
	check_order(c, "a2,b1,x1,a3,b2,c1,a1");
	sx_cache_delete(c, SX_KIND_NODE, SX_STR_EMPTY, "b1");
	sx_cache_delete(c, SX_KIND_NODE, SX_STR_EMPTY, "x1");
	check_order(c, "a2,b2,a3,a1,c1");
	CHECK_INT(sx_cache_delete(c, SX_KIND_NODE, SX_STR_EMPTY, "x1"), SX_ENOENT);
	sx_cache_free(c);
}

/* ---------- replace_all, load, visit ---------- */

struct visit_log {
	char text[1024];
};

static void visit_cb(void *ctx, const struct sx_object *o, sx_str node, bool assumed)
{
	struct visit_log *l = ctx;
	const struct sx_meta *m = sx_object_meta(o);
	size_t n = strlen(l->text);

	snprintf(l->text + n, sizeof(l->text) - n, "%s%s%s%s@%s%s ", sx_str_get(m->ns),
		 m->ns ? "/" : "", m->name, "", sx_str_get(node), assumed ? "(assumed)" : "");
}

static const char *visit_str(struct sx_cache *c, enum sx_kind kind, struct visit_log *l)
{
	l->text[0] = '\0';
	sx_cache_visit(c, kind, visit_cb, l);
	return l->text;
}

static void test_replace_all(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_object objs[3];
	struct visit_log l;
	struct sx_pod *inflight;

	setup();
	upsert_node(c, zoned_node("n1", NULL, NULL));
	upsert_node(c, zoned_node("n2", NULL, NULL));
	upsert_node(c, zoned_node("n3", NULL, NULL));
	upsert_pod(c, simple_pod("default", "a", "ua", "n1", "100m"));
	upsert_pod(c, simple_pod("default", "b", "ub", "n1", "100m"));
	upsert_pod(c, simple_pod("shop", "c", "uc", NULL, "100m"));
	inflight = simple_pod("shop", "d", "ud", NULL, "100m");
	upsert_pod(c, sx_pod_ref(inflight));
	CHECK_INT(sx_cache_assume(c, inflight, sx_intern("n2")), 0);

	objs[0] = (struct sx_object){SX_KIND_NODE, zoned_node("n2", NULL, NULL)};
	objs[1] = (struct sx_object){SX_KIND_NODE, zoned_node("n4", NULL, NULL)};
	CHECK_INT(sx_cache_replace_all(c, SX_KIND_NODE, objs, 2), 0);
	CHECK_STR(visit_str(c, SX_KIND_NODE, &l), "n2@n2 n4@n4 ");

	objs[0] = (struct sx_object){SX_KIND_POD, simple_pod("default", "b", "ub", "n2", "100m")};
	objs[1] = (struct sx_object){SX_KIND_POD, simple_pod("default", "e", "ue", "n4", "100m")};
	CHECK_INT(sx_cache_replace_all(c, SX_KIND_POD, objs, 2), 0);
	/* a and c are gone; d stays assumed (binding in flight) */
	CHECK_STR(visit_str(c, SX_KIND_POD, &l), "default/b@n2 default/e@n4 shop/d@n2(assumed) ");
	{
		struct sx_snapshot *s = sx_cache_snapshot(c);

		CHECK_INT(snap_node(s, "n2")->npods, 2);
		CHECK_INT(snap_node(s, "n4")->npods, 1);
		sx_snapshot_unref(s);
	}
	/* a wrong kind in the list is rejected before anything changes */
	objs[0] = (struct sx_object){SX_KIND_POD, simple_pod("default", "z", "uz", "n2", "1m")};
	objs[1] = (struct sx_object){SX_KIND_NODE, zoned_node("n5", NULL, NULL)};
	CHECK_INT(sx_cache_replace_all(c, SX_KIND_POD, objs, 2), SX_EINVAL);
	CHECK_STR(visit_str(c, SX_KIND_POD, &l), "default/b@n2 default/e@n4 shop/d@n2(assumed) ");
	sx_pod_unref(inflight);
	sx_cache_free(c);
}

static void test_load_all_or_nothing(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_object objs[3];
	struct sx_cache_stats st;
	struct sx_pod *noname;

	setup();
	noname = make_pod("{\"metadata\":{\"namespace\":\"default\"},\"spec\":{}}");
	objs[0] = (struct sx_object){SX_KIND_NODE, zoned_node("n1", NULL, NULL)};
	objs[1] = (struct sx_object){SX_KIND_POD, simple_pod("default", "a", "ua", "n1", "1")};
	objs[2] = (struct sx_object){SX_KIND_POD, noname};
	CHECK_INT(sx_cache_load(c, objs, 3), SX_EINVAL);
	sx_cache_stats(c, &st);
	CHECK_INT(st.nodes + st.pods, 0);

	objs[0] = (struct sx_object){SX_KIND_NODE, zoned_node("n1", NULL, NULL)};
	objs[1] = (struct sx_object){SX_KIND_POD, simple_pod("default", "a", "ua", "n1", "1")};
	CHECK_INT(sx_cache_load(c, objs, 2), 0);
	sx_cache_stats(c, &st);
	CHECK_INT(st.nodes, 1);
	CHECK_INT(st.bound_pods, 1);
	sx_cache_free(c);
}

/* ---------- state files ---------- */

static void test_state_files(void)
{
	static const struct {
		const char *file;
		int rc;
		const char *msg;
	} cases[] = {
		{"list.json", 0, NULL},
		{"stream.yaml", 0, NULL},
		{"bad-quantity.json", SX_EINVAL,
		 "test/fixtures/state/bad-quantity.json: items[1] (pod default/web-1): "
		 "spec.containers[0].resources.requests.cpu: invalid quantity \"2x\""},
		{"bad-stream.yaml", SX_EINVAL,
		 "test/fixtures/state/bad-stream.yaml: documents[2] (node worker-2): "
		 "spec.taints[0].effect: unknown effect \"Sometimes\""},
		{"missing-kind.json", SX_EINVAL,
		 "test/fixtures/state/missing-kind.json: items[0]: kind: missing kind"},
		{"no-name.yaml", SX_EINVAL,
		 "test/fixtures/state/no-name.yaml: documents[0] (namespace): metadata.name: "
		 "missing name"},
		{"not-object.yaml", SX_EINVAL,
		 "test/fixtures/state/not-object.yaml: documents[1]: expected an object"},
		{"list-in-stream.yaml", SX_EINVAL,
		 "test/fixtures/state/list-in-stream.yaml: documents[1].items[0] (node n2): "
		 "spec.taints[0].effect: unknown effect \"Bad\""},
		{"items-not-array.json", SX_EINVAL,
		 "test/fixtures/state/items-not-array.json: items: expected an array"},
		{"bad-syntax.yaml", SX_EINVAL,
		 "test/fixtures/state/bad-syntax.yaml: YAML line 3 column 1: did not find "
		 "expected ',' or ']'"},
		{"missing.json", SX_EIO,
		 "test/fixtures/state/missing.json: No such file or directory"},
	};

	setup();
	for (size_t i = 0; i < SX_ARRAY_SIZE(cases); i++) {
		struct sx_cache *c = sx_cache_new();
		struct sx_error err = {0};
		struct sx_cache_stats st;
		char path[256];
		int rc;

		snprintf(path, sizeof(path), "test/fixtures/state/%s", cases[i].file);
		rc = sx_state_load_file(c, path, &err);
		if (rc != cases[i].rc)
			sx_test_fail(__FILE__, __LINE__, "%s: rc %d, want %d (%s)", cases[i].file,
				     rc, cases[i].rc, err.msg);
		sx_cache_stats(c, &st);
		if (cases[i].msg) {
			CHECK_STR(err.msg, cases[i].msg);
			CHECK_INT(st.nodes + st.pods, 0); /* nothing half-applied */
		}
		sx_cache_free(c);
	}
}

static void test_state_contents(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_error err = {0};
	struct sx_cache_stats st;
	struct sx_snapshot *s;

	setup();
	CHECK_INT(sx_state_load_file(c, "test/fixtures/state/list.json", &err), 0);
	sx_cache_stats(c, &st);
	CHECK_INT(st.nodes, 2);
	CHECK_INT(st.bound_pods, 2);
	CHECK_INT(st.pending_pods, 1);
	CHECK_INT(st.objects[SX_KIND_NAMESPACE], 0);
	s = sx_cache_snapshot(c);
	CHECK_INT(snap_node(s, "worker-1")->requested.milli_cpu, 600);
	sx_snapshot_unref(s);
	sx_cache_free(c);

	c = sx_cache_new();
	CHECK_INT(sx_state_load_file(c, "test/fixtures/state/stream.yaml", &err), 0);
	sx_cache_stats(c, &st);
	CHECK_INT(st.nodes, 1);
	CHECK_INT(st.pods, 1);
	CHECK_INT(st.objects[SX_KIND_NAMESPACE], 1);
	CHECK_INT(st.objects[SX_KIND_SERVICE], 1);
	CHECK_INT(st.objects[SX_KIND_REPLICA_SET], 1);
	s = sx_cache_snapshot(c);
	CHECK_INT(s->ncontrollers, 1);
	CHECK_INT(s->nservices, 1);
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

static void test_demo_cluster(void)
{
	struct sx_cache *c = sx_cache_new();
	struct sx_error err = {0};
	struct sx_cache_stats st;

	setup();
	CHECK_INT(sx_state_load_file(c, "extender-config/demo-cluster.yaml", &err), 0);
	if (err.msg[0])
		sx_test_fail(__FILE__, __LINE__, "%s", err.msg);
	sx_cache_stats(c, &st);
	CHECK(st.nodes >= 6);
	CHECK(st.bound_pods >= 12);
	sx_cache_free(c);
}

/* ---------- concurrency (meaningful under SANITIZE=thread) ---------- */

static atomic_bool writer_done;

static void *writer(void *arg)
{
	struct sx_cache *c = arg;

	for (int i = 0; i < 400; i++) {
		char name[32];

		snprintf(name, sizeof(name), "p%d", i % 40);
		if (i % 3 == 2)
			sx_cache_delete(c, SX_KIND_POD, sx_intern("default"), name);
		else
			upsert_pod(c, simple_pod("default", name, "u", i % 2 ? "n1" : "n2", "10m"));
	}
	atomic_store(&writer_done, true);
	return NULL;
}

static void test_concurrent_snapshots(void)
{
	struct sx_cache *c = sx_cache_new();
	pthread_t t;
	struct sx_snapshot *old = NULL;

	setup();
	upsert_node(c, zoned_node("n1", "r", "a"));
	upsert_node(c, zoned_node("n2", "r", "b"));
	atomic_store(&writer_done, false);
	pthread_create(&t, NULL, writer, c);
	/* at least one snapshot, even when the writer finishes first */
	for (bool done = false; !done;) {
		done = atomic_load(&writer_done);
		struct sx_snapshot *s = sx_cache_snapshot(c);

		/* every snapshot is self-consistent: 10m per counted pod */
		for (uint32_t i = 0; i < s->nnodes; i++)
			CHECK_INT(s->nodes[i]->requested.milli_cpu,
				  10 * (int64_t)s->nodes[i]->npods);
		sx_snapshot_unref(old);
		old = s;
	}
	pthread_join(t, NULL);
	if (!old) /* the writer finished before the first look */
		old = sx_cache_snapshot(c);
	sx_cache_free(c); /* snapshots outlive the cache */
	CHECK_INT(old->nnodes, 2);
	sx_snapshot_unref(old);
}

SX_TESTS(SX_TEST(test_node_info_ports), SX_TEST(test_node_info_sums_and_clone),
	 SX_TEST(test_random_sequences), SX_TEST(test_pod_before_node),
	 SX_TEST(test_assume_confirm_forget), SX_TEST(test_snapshot_isolation_and_reuse),
	 SX_TEST(test_snapshot_chain), SX_TEST(test_node_info_shared_pods),
	 SX_TEST(test_snapshot_images_and_with_nodes), SX_TEST(test_node_tree_order),
	 SX_TEST(test_replace_all), SX_TEST(test_load_all_or_nothing), SX_TEST(test_state_files),
	 SX_TEST(test_state_contents), SX_TEST(test_demo_cluster),
	 SX_TEST(test_concurrent_snapshots))
