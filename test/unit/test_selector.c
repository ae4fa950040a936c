/* Label selectors, node selector terms, node affinity, tolerations
 * (labels/selector.go, nodeaffinity.go), and the label/resource lookups of model.h. */
#include "harness.h"

#include "schedext/common.h"
#include "schedext/intern.h"
#include "schedext/model.h"
#include "schedext/selector.h"

#define MAXL 16

/* A label set built by hand: items sorted by key id, as the decoder does. */
struct lset {
	struct sx_label items[MAXL];
	struct sx_labels set;
};

/* kv: "k1", "v1", "k2", "v2", ..., NULL */
static struct sx_labels *mk_labels(struct lset *l, const char *const *kv)
{
	uint32_t n = 0;

	for (; kv && kv[0]; kv += 2) {
		struct sx_label x = {sx_intern(kv[0]), sx_intern(kv[1])};
		uint32_t i = n++;

		while (i > 0 && l->items[i - 1].key > x.key) {
			l->items[i] = l->items[i - 1];
			i--;
		}
		l->items[i] = x;
	}
	l->set.n = n;
	l->set.items = l->items;
	return &l->set;
}

#define LABELS(l, ...) mk_labels(l, (const char *const[]){__VA_ARGS__, NULL})
#define NO_LABELS(l)   mk_labels(l, NULL)

/* A requirement over comma-separated values ("" = none). */
struct rq {
	sx_str vals[MAXL];
	struct sx_requirement r;
};

static struct sx_requirement *mk_req(struct rq *q, const char *key, enum sx_sel_op op,
				     const char *csv)
{
	uint32_t n = 0;

	while (csv && *csv) {
		const char *comma = strchr(csv, ',');
		size_t len = comma ? (size_t)(comma - csv) : strlen(csv);

		q->vals[n++] = sx_intern_n(csv, len);
		csv = comma ? comma + 1 : NULL;
	}
	q->r.key = sx_intern(key);
	q->r.op = (uint8_t)op;
	q->r.nvalues = n;
	q->r.values = q->vals;
	return &q->r;
}

static void test_labels_get(void)
{
	struct lset l;
	struct sx_labels *ls = LABELS(&l, "zone", "a", "app", "web", "empty", "", "tier", "db");
	sx_str v = 42;

	CHECK(!sx_labels_get(NULL, sx_intern("app"), &v));
	CHECK_INT(v, SX_STR_EMPTY); /* absent: "" */

	for (uint32_t i = 1; i < ls->n; i++)
		CHECK(ls->items[i - 1].key < ls->items[i].key);
	CHECK(sx_labels_get(ls, sx_intern("app"), &v));
	CHECK_STR(sx_str_get(v), "web");
	CHECK(sx_labels_get(ls, sx_intern("tier"), &v));
	CHECK_STR(sx_str_get(v), "db");
	CHECK(sx_labels_get(ls, sx_intern("empty"), &v));
	CHECK_INT(v, SX_STR_EMPTY);
	CHECK(sx_labels_get(ls, sx_intern("zone"), NULL));
	CHECK(!sx_labels_get(ls, sx_intern("missing"), &v));
	CHECK(!sx_labels_get(NO_LABELS(&l), sx_intern("app"), &v));
	CHECK(!sx_labels_get(NULL, sx_intern("app"), &v));
}

static void test_op_in_notin(void)
{
	struct lset l;
	struct rq q;
	struct sx_requirement *in = mk_req(&q, "app", SX_OP_IN, "web,db");

	CHECK(sx_requirement_matches(in, LABELS(&l, "app", "web")));
	CHECK(sx_requirement_matches(in, LABELS(&l, "app", "db", "x", "y")));
	CHECK(!sx_requirement_matches(in, LABELS(&l, "app", "cache")));
	CHECK(!sx_requirement_matches(in, LABELS(&l, "other", "web")));
	CHECK(!sx_requirement_matches(in, NO_LABELS(&l)));

	struct rq q2;
	struct sx_requirement *notin = mk_req(&q2, "app", SX_OP_NOT_IN, "web");
	CHECK(!sx_requirement_matches(notin, LABELS(&l, "app", "web")));
	CHECK(sx_requirement_matches(notin, LABELS(&l, "app", "db")));
	CHECK(sx_requirement_matches(notin, LABELS(&l, "other", "web"))); /* absent key */
	CHECK(sx_requirement_matches(notin, NO_LABELS(&l)));

	/* Invalid: In/NotIn need values. */
	CHECK(!sx_requirement_matches(mk_req(&q, "app", SX_OP_IN, ""), LABELS(&l, "app", "web")));
	CHECK(!sx_requirement_matches(mk_req(&q, "app", SX_OP_NOT_IN, ""), NO_LABELS(&l)));
	/* An empty label value is a value like any other. */
	in = mk_req(&q, "app", SX_OP_IN, "x");
	q.vals[q.r.nvalues++] = SX_STR_EMPTY;
	CHECK(sx_requirement_matches(in, LABELS(&l, "app", "")));
	CHECK(!sx_requirement_matches(in, NO_LABELS(&l)));
}

static void test_op_exists_equals(void)
{
	struct lset l;
	struct rq q;
	struct sx_requirement *ex = mk_req(&q, "gpu", SX_OP_EXISTS, "");

	CHECK(sx_requirement_matches(ex, LABELS(&l, "gpu", "")));
	CHECK(sx_requirement_matches(ex, LABELS(&l, "gpu", "nvidia")));
	CHECK(!sx_requirement_matches(ex, LABELS(&l, "cpu", "x")));

	struct rq q2;
	struct sx_requirement *dne = mk_req(&q2, "gpu", SX_OP_DOES_NOT_EXIST, "");
	CHECK(!sx_requirement_matches(dne, LABELS(&l, "gpu", "")));
	CHECK(sx_requirement_matches(dne, LABELS(&l, "cpu", "x")));
	CHECK(sx_requirement_matches(dne, NO_LABELS(&l)));

	struct rq q3;
	struct sx_requirement *eq = mk_req(&q3, "app", SX_OP_EQUALS, "web");
	CHECK(sx_requirement_matches(eq, LABELS(&l, "app", "web")));
	CHECK(!sx_requirement_matches(eq, LABELS(&l, "app", "web2")));
	CHECK(!sx_requirement_matches(eq, NO_LABELS(&l)));
	/* matchLabels {app: ""} needs the key present with an empty value. */
	eq = mk_req(&q3, "app", SX_OP_EQUALS, "");
	q3.vals[0] = SX_STR_EMPTY;
	q3.r.nvalues = 1;
	CHECK(sx_requirement_matches(eq, LABELS(&l, "app", "")));
	CHECK(!sx_requirement_matches(eq, NO_LABELS(&l)));
	CHECK(!sx_requirement_matches(NULL, NO_LABELS(&l)));
}

static void test_op_gt_lt(void)
{
	struct lset l;
	struct rq q;
	struct sx_requirement *gt = mk_req(&q, "cores", SX_OP_GT, "4");

	CHECK(sx_requirement_matches(gt, LABELS(&l, "cores", "8")));
	CHECK(sx_requirement_matches(gt, LABELS(&l, "cores", "+5")));
	CHECK(sx_requirement_matches(gt, LABELS(&l, "cores", "0010")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", "4")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", "-8")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", "eight")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", "8.5")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", " 8")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", "")));
	CHECK(!sx_requirement_matches(gt, LABELS(&l, "cores", "99999999999999999999")));
	CHECK(!sx_requirement_matches(gt, NO_LABELS(&l)));
	CHECK(sx_requirement_matches(gt, LABELS(&l, "cores", "9223372036854775807")));

	struct rq q2;
	struct sx_requirement *lt = mk_req(&q2, "cores", SX_OP_LT, "0");
	CHECK(sx_requirement_matches(lt, LABELS(&l, "cores", "-1")));
	CHECK(sx_requirement_matches(lt, LABELS(&l, "cores", "-9223372036854775808")));
	CHECK(!sx_requirement_matches(lt, LABELS(&l, "cores", "0")));
	CHECK(!sx_requirement_matches(lt, LABELS(&l, "cores", "1")));

	/* The requirement value must be one integer. */
	CHECK(!sx_requirement_matches(mk_req(&q, "cores", SX_OP_GT, "x"),
				      LABELS(&l, "cores", "8")));
	CHECK(!sx_requirement_matches(mk_req(&q, "cores", SX_OP_GT, "1,2"),
				      LABELS(&l, "cores", "8")));
	CHECK(!sx_requirement_matches(mk_req(&q, "cores", SX_OP_LT, ""), LABELS(&l, "cores", "8")));
	CHECK(!sx_requirement_matches(mk_req(&q, "cores", SX_OP_LT, "1e3"),
				      LABELS(&l, "cores", "8")));
}

static void test_selector_null_vs_empty(void)
{
	struct lset l;
	struct sx_label_selector empty = {0, NULL};
	struct rq q[2];
	struct sx_requirement reqs[2];
	struct sx_label_selector sel = {2, reqs};

	CHECK(!sx_selector_matches(NULL, LABELS(&l, "app", "web")));
	CHECK(!sx_selector_matches(NULL, NO_LABELS(&l)));
	CHECK(sx_selector_matches(&empty, LABELS(&l, "app", "web")));
	CHECK(sx_selector_matches(&empty, NO_LABELS(&l)));

	reqs[0] = *mk_req(&q[0], "app", SX_OP_EQUALS, "web");
	reqs[1] = *mk_req(&q[1], "tier", SX_OP_NOT_IN, "cache");
	CHECK(sx_selector_matches(&sel, LABELS(&l, "app", "web")));
	CHECK(sx_selector_matches(&sel, LABELS(&l, "app", "web", "tier", "fe")));
	CHECK(!sx_selector_matches(&sel, LABELS(&l, "app", "web", "tier", "cache")));
	CHECK(!sx_selector_matches(&sel, LABELS(&l, "tier", "fe")));
}

static void test_map_selector(void)
{
	struct lset s, l;

	CHECK(sx_map_selector_matches(NO_LABELS(&s), LABELS(&l, "a", "1")));
	CHECK(sx_map_selector_matches(NULL, NO_LABELS(&l)));
	CHECK(sx_map_selector_matches(LABELS(&s, "a", "1"), LABELS(&l, "a", "1", "b", "2")));
	CHECK(sx_map_selector_matches(LABELS(&s, "a", "1", "b", "2"),
				      LABELS(&l, "b", "2", "a", "1")));
	CHECK(!sx_map_selector_matches(LABELS(&s, "a", "1", "b", "2"), LABELS(&l, "a", "1")));
	CHECK(!sx_map_selector_matches(LABELS(&s, "a", "1"), LABELS(&l, "a", "2")));
	CHECK(!sx_map_selector_matches(LABELS(&s, "a", ""), NO_LABELS(&l)));
	CHECK(sx_map_selector_matches(LABELS(&s, "a", ""), LABELS(&l, "a", "")));
}

static void mk_node(struct sx_node *n, struct lset *l, const char *name, const char *zone)
{
	memset(n, 0, sizeof(*n));
	n->meta.name = (char *)name;
	n->name_id = sx_intern(name);
	n->meta.labels =
		*LABELS(l, "kubernetes.io/hostname", name, "topology.kubernetes.io/zone", zone);
	sx_node_index_labels(n);
}

static void test_node_selector_terms(void)
{
	struct lset l;
	struct sx_node node;
	struct rq qe, qf;
	struct sx_node_selector_term empty = {0};
	struct sx_node_selector_term term = {0};

	mk_node(&node, &l, "node-7", "eu-1a");
	CHECK(!sx_node_selector_term_matches(&empty, &node));
	CHECK(!sx_node_selector_term_matches(NULL, &node));

	term.nexprs = 1;
	term.exprs = mk_req(&qe, "topology.kubernetes.io/zone", SX_OP_IN, "eu-1a,eu-1b");
	CHECK(sx_node_selector_term_matches(&term, &node));
	term.exprs = mk_req(&qe, "topology.kubernetes.io/zone", SX_OP_NOT_IN, "eu-1a");
	CHECK(!sx_node_selector_term_matches(&term, &node));
	term.exprs = mk_req(&qe, "disk", SX_OP_DOES_NOT_EXIST, "");
	CHECK(sx_node_selector_term_matches(&term, &node));

	/* matchFields metadata.name In / NotIn, ANDed with expressions */
	term.nfields = 1;
	term.fields = mk_req(&qf, "metadata.name", SX_OP_IN, "node-7");
	CHECK(sx_node_selector_term_matches(&term, &node));
	term.fields = mk_req(&qf, "metadata.name", SX_OP_IN, "node-8");
	CHECK(!sx_node_selector_term_matches(&term, &node));
	term.fields = mk_req(&qf, "metadata.name", SX_OP_NOT_IN, "node-8");
	CHECK(sx_node_selector_term_matches(&term, &node));
	term.fields = mk_req(&qf, "metadata.name", SX_OP_NOT_IN, "node-7");
	CHECK(!sx_node_selector_term_matches(&term, &node));
	/* fields only */
	term.nexprs = 0;
	term.fields = mk_req(&qf, "metadata.name", SX_OP_IN, "node-7");
	CHECK(sx_node_selector_term_matches(&term, &node));
	/* unsupported field selectors never match */
	term.fields = mk_req(&qf, "metadata.namespace", SX_OP_IN, "node-7");
	CHECK(!sx_node_selector_term_matches(&term, &node));
	term.fields = mk_req(&qf, "metadata.name", SX_OP_EXISTS, "");
	CHECK(!sx_node_selector_term_matches(&term, &node));
	term.fields = mk_req(&qf, "metadata.name", SX_OP_IN, "node-7,node-8");
	CHECK(!sx_node_selector_term_matches(&term, &node));
	/* expressions on labels never see the name field */
	term.nfields = 0;
	term.nexprs = 1;
	term.exprs = mk_req(&qe, "metadata.name", SX_OP_IN, "node-7");
	CHECK(!sx_node_selector_term_matches(&term, &node));
}

static void test_node_selector_or(void)
{
	struct lset l;
	struct sx_node node;
	struct rq q0, q1;
	struct sx_node_selector_term terms[2] = {{0}, {0}};
	struct sx_node_selector sel = {2, terms};
	struct sx_node_selector none = {0, NULL};

	mk_node(&node, &l, "n1", "eu-1b");
	terms[0].nexprs = 1;
	terms[0].exprs = mk_req(&q0, "topology.kubernetes.io/zone", SX_OP_IN, "eu-1a");
	terms[1].nfields = 1;
	terms[1].fields = mk_req(&q1, "metadata.name", SX_OP_IN, "n1");
	CHECK(sx_node_selector_matches(&sel, &node));
	terms[1].fields = mk_req(&q1, "metadata.name", SX_OP_IN, "n2");
	CHECK(!sx_node_selector_matches(&sel, &node));
	/* an empty term matches nothing, even next to others */
	terms[0].nexprs = 0;
	CHECK(!sx_node_selector_matches(&sel, &node));
	CHECK(!sx_node_selector_matches(&none, &node));
	CHECK(sx_node_selector_matches(NULL, &node));
}

static void test_pod_node_selector_and_affinity(void)
{
	struct lset l, ns;
	struct sx_node node;
	struct sx_pod pod;
	struct rq q;
	struct sx_node_selector_term term = {0};
	struct sx_node_selector required = {1, &term};
	struct sx_node_affinity na = {0};
	struct sx_affinity aff = {0};

	mk_node(&node, &l, "n1", "eu-1a");
	memset(&pod, 0, sizeof(pod));
	CHECK(sx_pod_matches_node_selector_and_affinity(&pod, &node));

	pod.node_selector = *LABELS(&ns, "topology.kubernetes.io/zone", "eu-1a");
	CHECK(sx_pod_matches_node_selector_and_affinity(&pod, &node));
	pod.node_selector = *LABELS(&ns, "topology.kubernetes.io/zone", "eu-1b");
	CHECK(!sx_pod_matches_node_selector_and_affinity(&pod, &node));

	/* affinity without required terms is no constraint */
	pod.node_selector = *NO_LABELS(&ns);
	pod.affinity = &aff;
	CHECK(sx_pod_matches_node_selector_and_affinity(&pod, &node));
	aff.node_affinity = &na;
	CHECK(sx_pod_matches_node_selector_and_affinity(&pod, &node));

	na.required = &required;
	term.nexprs = 1;
	term.exprs = mk_req(&q, "kubernetes.io/hostname", SX_OP_IN, "n1,n2");
	CHECK(sx_pod_matches_node_selector_and_affinity(&pod, &node));
	/* both must hold */
	pod.node_selector = *LABELS(&ns, "disk", "ssd");
	CHECK(!sx_pod_matches_node_selector_and_affinity(&pod, &node));
	pod.node_selector = *NO_LABELS(&ns);
	term.exprs = mk_req(&q, "kubernetes.io/hostname", SX_OP_IN, "n2");
	CHECK(!sx_pod_matches_node_selector_and_affinity(&pod, &node));
	/* required with no terms matches nothing */
	required.nterms = 0;
	CHECK(!sx_pod_matches_node_selector_and_affinity(&pod, &node));
}

static struct sx_toleration tol(const char *key, int op, const char *value, int effect)
{
	struct sx_toleration t = {
		sx_intern(key), sx_intern(value), (uint8_t)op, (uint8_t)effect, false, 0};
	return t;
}

static struct sx_taint taint(const char *key, const char *value, int effect)
{
	struct sx_taint t = {sx_intern(key), sx_intern(value), (uint8_t)effect};
	return t;
}

/* The cases of k8s.io/api core/v1 TestTolerationToleratesTaint, plus the
 * wildcard rules of core/v1 toleration.go ToleratesTaint. */
static void test_toleration_tolerates(void)
{
	struct sx_taint t;
	struct sx_toleration o;

	/* same key and effect, Exists, taint without value */
	t = taint("foo", "", SX_EFFECT_NO_SCHEDULE);
	o = tol("foo", SX_TOL_EXISTS, "", SX_EFFECT_NO_SCHEDULE);
	CHECK(sx_toleration_tolerates(&o, &t));
	/* same key and effect, Exists, taint with a value */
	t = taint("foo", "bar", SX_EFFECT_NO_SCHEDULE);
	CHECK(sx_toleration_tolerates(&o, &t));
	/* empty key with Exists matches every taint of that effect */
	o = tol("", SX_TOL_EXISTS, "", SX_EFFECT_NO_SCHEDULE);
	CHECK(sx_toleration_tolerates(&o, &t));
	/* same key, effect and value, Equal */
	o = tol("foo", SX_TOL_EQUAL, "bar", SX_EFFECT_NO_SCHEDULE);
	CHECK(sx_toleration_tolerates(&o, &t));
	/* same key and effect, different values, Equal */
	o = tol("foo", SX_TOL_EQUAL, "value1", SX_EFFECT_NO_SCHEDULE);
	CHECK(!sx_toleration_tolerates(&o, &t));
	/* same key and value, different effects */
	o = tol("foo", SX_TOL_EQUAL, "bar", SX_EFFECT_NO_EXECUTE);
	CHECK(!sx_toleration_tolerates(&o, &t));

	/* empty effect matches every effect */
	o = tol("foo", SX_TOL_EQUAL, "bar", SX_EFFECT_NONE);
	CHECK(sx_toleration_tolerates(&o, &t));
	t.effect = SX_EFFECT_NO_EXECUTE;
	CHECK(sx_toleration_tolerates(&o, &t));
	t.effect = SX_EFFECT_PREFER_NO_SCHEDULE;
	CHECK(sx_toleration_tolerates(&o, &t));
	/* tolerate everything: empty key, Exists, empty effect */
	o = tol("", SX_TOL_EXISTS, "", SX_EFFECT_NONE);
	t = taint("anything", "v", SX_EFFECT_NO_EXECUTE);
	CHECK(sx_toleration_tolerates(&o, &t));
	/* different key */
	o = tol("other", SX_TOL_EXISTS, "", SX_EFFECT_NONE);
	CHECK(!sx_toleration_tolerates(&o, &t));
	/* Equal with empty value against a valued taint */
	o = tol("anything", SX_TOL_EQUAL, "", SX_EFFECT_NONE);
	CHECK(!sx_toleration_tolerates(&o, &t));
	t.value = SX_STR_EMPTY;
	CHECK(sx_toleration_tolerates(&o, &t));
	/* the cordon taint */
	o = tol("node.kubernetes.io/unschedulable", SX_TOL_EXISTS, "", SX_EFFECT_NO_SCHEDULE);
	t = taint("node.kubernetes.io/unschedulable", "", SX_EFFECT_NO_SCHEDULE);
	CHECK(t.key == SX_S_UNSCHEDULABLE_TAINT);
	CHECK(sx_toleration_tolerates(&o, &t));
	CHECK(!sx_toleration_tolerates(NULL, &t));
}

static void test_find_untolerated(void)
{
	struct sx_taint taints[3] = {
		taint("soft", "", SX_EFFECT_PREFER_NO_SCHEDULE),
		taint("dedicated", "gpu", SX_EFFECT_NO_SCHEDULE),
		taint("evict", "", SX_EFFECT_NO_EXECUTE),
	};
	struct sx_toleration tols[2] = {
		tol("dedicated", SX_TOL_EQUAL, "gpu", SX_EFFECT_NO_SCHEDULE),
		tol("evict", SX_TOL_EXISTS, "", SX_EFFECT_NONE),
	};
	unsigned filter = (1u << SX_EFFECT_NO_SCHEDULE) | (1u << SX_EFFECT_NO_EXECUTE);
	unsigned prefer = 1u << SX_EFFECT_PREFER_NO_SCHEDULE;

	CHECK(sx_find_untolerated_taint(taints, 3, NULL, 0, filter) == &taints[1]);
	CHECK(sx_find_untolerated_taint(taints, 3, tols, 1, filter) == &taints[2]);
	CHECK(sx_find_untolerated_taint(taints, 3, tols, 2, filter) == NULL);
	CHECK(sx_find_untolerated_taint(taints, 3, tols, 2, 0) == NULL); /* default mask */
	CHECK(sx_find_untolerated_taint(taints, 3, NULL, 0, 0) == &taints[1]);
	CHECK(sx_find_untolerated_taint(taints, 3, tols, 2, prefer) == &taints[0]);
	CHECK(sx_find_untolerated_taint(NULL, 0, tols, 2, filter) == NULL);
	CHECK(sx_tolerations_tolerate(tols, 2, &taints[2]));
	CHECK(!sx_tolerations_tolerate(tols, 2, &taints[0]));
	CHECK(!sx_tolerations_tolerate(NULL, 0, &taints[1]));
}

static void test_resources_get(void)
{
	struct sx_scalar sc[2];
	struct sx_resources r = {1500, 2048, 4096, 110, 2, sc};
	sx_str gpu = sx_intern("nvidia.com/gpu"), hp = sx_intern("hugepages-2Mi");

	sc[0].name = gpu < hp ? gpu : hp;
	sc[0].value = gpu < hp ? 4 : 1024;
	sc[1].name = gpu < hp ? hp : gpu;
	sc[1].value = gpu < hp ? 1024 : 4;
	CHECK_INT(sx_resources_get(&r, SX_S_CPU), 1500);
	CHECK_INT(sx_resources_get(&r, SX_S_MEMORY), 2048);
	CHECK_INT(sx_resources_get(&r, SX_S_EPHEMERAL_STORAGE), 4096);
	CHECK_INT(sx_resources_get(&r, SX_S_PODS), 110);
	CHECK_INT(sx_resources_get(&r, gpu), 4);
	CHECK_INT(sx_resources_get(&r, hp), 1024);
	CHECK_INT(sx_resources_get(&r, sx_intern("example.com/foo")), 0);
	CHECK_INT(sx_resources_get(NULL, SX_S_CPU), 0);
}

/* A node's topology labels are read from the node itself
 * (sx_node_label): every requirement gives the same answer as on
 * meta.labels, for present, empty and absent labels of each key. */
static void test_node_label_topology(void)
{
	static const char *const keys[] = {"kubernetes.io/hostname", "topology.kubernetes.io/zone",
					   "topology.kubernetes.io/region", "disk",
					   "failure-domain.beta.kubernetes.io/zone"};
	static const struct {
		enum sx_sel_op op;
		const char *csv;
	} reqs[] = {{SX_OP_IN, "n1,eu-1a"}, {SX_OP_IN, "other"}, {SX_OP_NOT_IN, "eu-1a"},
		    {SX_OP_NOT_IN, "x"},    {SX_OP_EXISTS, ""},	 {SX_OP_DOES_NOT_EXIST, ""},
		    {SX_OP_GT, "3"},	    {SX_OP_LT, "9"},	 {SX_OP_IN, ""}};
	struct lset l;
	struct sx_node node;
	struct rq q;
	sx_str v = SX_STR_EMPTY;

	for (int shape = 0; shape < 3; shape++) {
		memset(&node, 0, sizeof(node));
		if (shape == 0) /* hostname, zone, an empty region, a beta zone */
			node.meta.labels = *LABELS(
				&l, "kubernetes.io/hostname", "n1", "topology.kubernetes.io/zone",
				"eu-1a", "topology.kubernetes.io/region", "",
				"failure-domain.beta.kubernetes.io/zone", "eu-1a");
		else if (shape == 1) /* numeric values, no zone */
			node.meta.labels = *LABELS(&l, "kubernetes.io/hostname", "5", "disk", "7");
		else
			node.meta.labels = *NO_LABELS(&l);
		sx_node_index_labels(&node);
		for (size_t k = 0; k < SX_ARRAY_SIZE(keys); k++) {
			sx_str key = sx_intern(keys[k]);
			sx_str a = SX_STR_INVALID, b = SX_STR_INVALID;
			CHECK_INT(sx_node_label(&node, key, &a),
				  sx_labels_get(&node.meta.labels, key, &b));
			CHECK_INT(a, b);
			for (size_t r = 0; r < SX_ARRAY_SIZE(reqs); r++) {
				const struct sx_requirement *req =
					mk_req(&q, keys[k], reqs[r].op, reqs[r].csv);
				CHECK_INT(sx_node_requirement_matches(req, &node),
					  sx_requirement_matches(req, &node.meta.labels));
			}
		}
	}
	memset(&node, 0, sizeof(node));
	node.meta.labels = *LABELS(&l, "topology.kubernetes.io/zone", "eu-1b");
	sx_node_index_labels(&node);
	CHECK(sx_node_label(&node, SX_S_ZONE, &v));
	CHECK_STR(sx_str_get(v), "eu-1b");
	CHECK(!sx_node_label(&node, SX_S_HOSTNAME, &v));
	CHECK(!sx_node_requirement_matches(NULL, &node));
}

/* Lt and Gt (TaintTolerationComparisonOperators): the cases of upstream
 * core/v1 toleration_test.go TestTolerationToleratesTaint with the gate,
 * and TestCompareNumericValues through ToleratesTaint (key and effect
 * equal); without the gate (compare false) Lt and Gt tolerate nothing. */
static void test_toleration_compare_ops(void)
{
	static const struct {
		uint8_t op;
		const char *tol, *taint;
		bool want;
	} cmp[] = {
		/* TestTolerationToleratesTaint */
		{SX_TOL_GT, "950", "800", false},
		{SX_TOL_GT, "750", "950", true},
		{SX_TOL_LT, "800", "950", false},
		{SX_TOL_LT, "950", "800", true},
		{SX_TOL_GT, "950", "950", false},
		{SX_TOL_GT, "950", "high", false},
		{SX_TOL_GT, "-100", "-200", false},
		{SX_TOL_GT, "9223372036854775806", "100", false},
		/* TestCompareNumericValues */
		{SX_TOL_GT, "100", "200", true},
		{SX_TOL_GT, "200", "100", false},
		{SX_TOL_GT, "100", "100", false},
		{SX_TOL_GT, "-100", "-50", true},
		{SX_TOL_GT, "-50", "-100", false},
		{SX_TOL_GT, "0", "1", true},
		{SX_TOL_GT, "9223372036854775806", "9223372036854775807", true},
		{SX_TOL_LT, "200", "100", true},
		{SX_TOL_LT, "100", "200", false},
		{SX_TOL_LT, "100", "100", false},
		{SX_TOL_LT, "-50", "-100", true},
		{SX_TOL_LT, "-100", "-50", false},
		{SX_TOL_LT, "0", "-1", true},
		{SX_TOL_GT, "abc", "100", false},
		{SX_TOL_GT, "", "100", false},
		{SX_TOL_GT, "0100", "200", false},
		{SX_TOL_GT, "+100", "200", false},
		{SX_TOL_GT, "100.5", "200", false},
		{SX_TOL_GT, "-", "100", false},
		{SX_TOL_GT, "100", "xyz", false},
		{SX_TOL_GT, "100", "", false},
		{SX_TOL_GT, "100", "0200", false},
		{SX_TOL_LT, "100", "+200", false},
		{SX_TOL_LT, "100", " 200 ", false},
		{SX_TOL_GT, "0", "0", false},
		{SX_TOL_LT, "0", "0", false},
		{SX_TOL_GT, "0", "9223372036854775807", true},
		{SX_TOL_LT, "0", "-9223372036854775808", true},
		/* ours: beyond int64 is no integer */
		{SX_TOL_GT, "0", "9223372036854775808", false},
		{SX_TOL_LT, "0", "-9223372036854775809", false},
	};

	for (size_t i = 0; i < SX_ARRAY_SIZE(cmp); i++) {
		const char *key = "node.kubernetes.io/sla";
		struct sx_taint t = taint(key, cmp[i].taint, SX_EFFECT_NO_SCHEDULE);
		struct sx_toleration o = tol(key, cmp[i].op, cmp[i].tol, SX_EFFECT_NO_SCHEDULE);

		if (sx_toleration_tolerates_ops(&o, &t, true) != cmp[i].want)
			sx_test_fail(__FILE__, __LINE__, "%s %s against taint %s: expected %d",
				     cmp[i].op == SX_TOL_LT ? "Lt" : "Gt", cmp[i].tol, cmp[i].taint,
				     cmp[i].want);
		/* the gate off: no match, whatever the values */
		CHECK(!sx_toleration_tolerates_ops(&o, &t, false));
		CHECK(!sx_toleration_tolerates(&o, &t));
	}
}

SX_TESTS(SX_TEST(test_labels_get), SX_TEST(test_node_label_topology), SX_TEST(test_op_in_notin),
	 SX_TEST(test_op_exists_equals), SX_TEST(test_op_gt_lt),
	 SX_TEST(test_selector_null_vs_empty), SX_TEST(test_map_selector),
	 SX_TEST(test_node_selector_terms), SX_TEST(test_node_selector_or),
	 SX_TEST(test_pod_node_selector_and_affinity), SX_TEST(test_toleration_tolerates),
	 SX_TEST(test_toleration_compare_ops), SX_TEST(test_find_untolerated),
	 SX_TEST(test_resources_get))
