/* The structured allocator (src/dra/dra_*.c) against upstream's
 * allocator test table, transcribed in
 * test/fixtures/DRAAllocator/allocator_test.cases (made by gen.py there):
 * same allocations (results in order, configs, node selector) and the
 * same errors (substring, as upstream's table checks them). Selectors are
 * answered from the table's precomputed truth table, so this tests the
 * allocator alone. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/decode.h"
#include "schedext/dra.h"
#include "schedext/dra_alloc.h"
#include "schedext/quantity.h"

#define CASES "test/fixtures/DRAAllocator/allocator_test.cases"

struct tcase {
	const cJSON *j;
	struct sx_node *node;
	uint32_t nclasses, nslices, nclaims;
	struct sx_dra_object *classes[16], *slices[64], *claims[8];
	const cJSON *selectors;
};

static const struct sx_dra_object *get_class(void *ctx, const char *name)
{
	struct tcase *t = ctx;

	for (uint32_t i = 0; i < t->nclasses; i++)
		if (strcmp(t->classes[i]->meta.name, name) == 0)
			return t->classes[i];
	return NULL;
}

static int match(void *ctx, const char *expr, sx_str driver, sx_str pool,
		 const struct sx_dra_device *dev, char *err, size_t errlen)
{
	struct tcase *t = ctx;
	const cJSON *row = cJSON_GetObjectItemCaseSensitive(t->selectors, expr), *v;
	char key[512];

	snprintf(key, sizeof(key), "%s/%s/%s", sx_str_get(driver), sx_str_get(pool),
		 sx_str_get(dev->name));
	v = cJSON_GetObjectItemCaseSensitive(row, key);
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? SX_DRA_MATCH : SX_DRA_NO_MATCH;
	if (cJSON_IsObject(v) && cJSON_GetObjectItem(v, "compileError")) {
		snprintf(err, errlen, "%s", cJSON_GetObjectItem(v, "compileError")->valuestring);
		return SX_DRA_COMPILE_ERROR;
	}
	if (cJSON_IsObject(v) && cJSON_GetObjectItem(v, "runtimeError")) {
		snprintf(err, errlen, "%s", cJSON_GetObjectItem(v, "runtimeError")->valuestring);
		return SX_DRA_RUNTIME_ERROR;
	}
	sx_test_fail(__FILE__, __LINE__, "no selector answer for %s on %s", expr, key);
	return SX_DRA_NO_MATCH;
}

static struct sx_dra_object *decode(const cJSON *j, const char *name)
{
	struct sx_error err = {0};
	struct sx_object o;

	if (sx_decode_object(j, NULL, &o, &err) < 0) {
		sx_test_fail(__FILE__, __LINE__, "%s: decode: %s: %s", name, err.path, err.msg);
		return NULL;
	}
	return o.obj;
}

/* The snapshot keeps ResourceSlices sorted by name (snapshot.h), so the
 * allocator sees a pool's slices in name order, as upstream's buildPool
 * sorts them (pools_experimental.go, sortSlicesByName); the table lists
 * them in any order, and some rows reuse a name (stable). */
static void sort_slices(struct tcase *t)
{
	for (uint32_t i = 1; i < t->nslices; i++) {
		struct sx_dra_object *s = t->slices[i];
		uint32_t k = i;

		for (; k > 0 && strcmp(t->slices[k - 1]->meta.name, s->meta.name) > 0; k--)
			t->slices[k] = t->slices[k - 1];
		t->slices[k] = s;
	}
}

static bool load(struct tcase *t, const char *name)
{
	const cJSON *e;
	struct sx_error err = {0};
	const cJSON *node = cJSON_GetObjectItem(t->j, "node");

	if (cJSON_IsObject(node)) {
		t->node = sx_decode_node(node, &err);
		if (!t->node)
			return false;
	}
#define LOAD(key, arr, n, max)                                                                     \
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(t->j, key))                                      \
	{                                                                                          \
		if (t->n == (max) || !(t->arr[t->n] = decode(e, name)))                            \
			return false;                                                              \
		t->n++;                                                                            \
	}
	LOAD("classes", classes, nclasses, 16)
	LOAD("slices", slices, nslices, 64)
	LOAD("claims", claims, nclaims, 8)
#undef LOAD
	sort_slices(t);
	return true;
}

static void unload(struct tcase *t)
{
	for (uint32_t i = 0; i < t->nclasses; i++)
		sx_dra_unref(t->classes[i]);
	for (uint32_t i = 0; i < t->nslices; i++)
		sx_dra_unref(t->slices[i]);
	for (uint32_t i = 0; i < t->nclaims; i++)
		sx_dra_unref(t->claims[i]);
	sx_node_unref(t->node);
}

/* ---------- canonical node selectors ---------- */

static const char *const op_names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "In"};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "E:key op v1,v2" with values sorted. */
static char *req_text(char kind, const char *key, const char *op, const char **vals, int n)
{
	char buf[1024];
	int w = snprintf(buf, sizeof(buf), "%c:%s %s ", kind, key, op);

	qsort(vals, n, sizeof(*vals), cmp_str);
	for (int i = 0; i < n; i++)
		w += snprintf(buf + w, sizeof(buf) - w, "%s%s", i ? "," : "", vals[i]);
	return strdup(buf);
}

static void join(char **items, int n, char *out, size_t len)
{
	size_t w = 0;

	qsort(items, n, sizeof(*items), cmp_str);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		w += snprintf(out + w, len - w, "%s;", items[i]);
		free(items[i]);
	}
}

static void selector_of_out(const struct sx_dra_claim_out *o, char *out, size_t len)
{
	char *items[40];
	int n = 0;

	if (o->node_name != SX_STR_EMPTY) {
		const char *v = sx_str_get(o->node_name);

		items[n++] = req_text('F', "metadata.name", "In", &v, 1);
	}
	for (int pass = 0; pass < 2; pass++) {
		uint32_t cnt = pass ? o->nfields : o->nexprs;

		for (uint32_t i = 0; i < cnt; i++) {
			const struct sx_requirement *r = pass ? o->fields[i] : o->exprs[i];
			const char *vals[16];

			for (uint32_t k = 0; k < r->nvalues && k < 16; k++)
				vals[k] = sx_str_get(r->values[k]);
			items[n++] = req_text(pass ? 'F' : 'E', sx_str_get(r->key), op_names[r->op],
					      vals, (int)r->nvalues);
		}
	}
	join(items, n, out, len);
}

static void selector_of_json(const cJSON *sel, char *out, size_t len)
{
	const cJSON *term = cJSON_GetArrayItem(cJSON_GetObjectItem(sel, "nodeSelectorTerms"), 0),
		    *r;
	char *items[40];
	int n = 0;

	for (int pass = 0; pass < 2; pass++)
		cJSON_ArrayForEach(
			r, cJSON_GetObjectItem(term, pass ? "matchFields" : "matchExpressions"))
		{
			const char *vals[16];
			const cJSON *v;
			int k = 0;

			cJSON_ArrayForEach(v, cJSON_GetObjectItem(r, "values")) vals[k++] =
				v->valuestring;
			items[n++] = req_text(
				pass ? 'F' : 'E', cJSON_GetObjectItem(r, "key")->valuestring,
				cJSON_GetObjectItem(r, "operator")->valuestring, vals, k);
		}
	join(items, n, out, len);
}

/* ---------- comparing ---------- */

static void check_config(const char *name, uint32_t ci, const struct sx_dra_claim_out *o,
			 const cJSON *want)
{
	const cJSON *c;
	uint32_t i = 0;

	if ((uint32_t)cJSON_GetArraySize(want) != o->nconfig) {
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %u configs, want %d", name, ci,
			     o->nconfig, cJSON_GetArraySize(want));
		return;
	}
	cJSON_ArrayForEach(c, want)
	{
		const struct sx_dra_out_config *g = &o->config[i++];
		const cJSON *reqs = cJSON_GetArrayItem(c, 1), *r;
		cJSON *opaque = cJSON_Parse(g->opaque ? g->opaque : "null");
		uint32_t k = 0;
		bool ok = strcmp(cJSON_GetArrayItem(c, 0)->valuestring,
				 g->source == SX_DRA_FROM_CLASS ? "FromClass" : "FromClaim") == 0 &&
			  (uint32_t)cJSON_GetArraySize(reqs) == g->nrequests &&
			  cJSON_Compare(opaque, cJSON_GetArrayItem(c, 2), true);

		cJSON_ArrayForEach(r, reqs) ok =
			ok && strcmp(r->valuestring, g->requests[k++]) == 0;
		if (!ok)
			sx_test_fail(__FILE__, __LINE__, "%s: claim %u: config %u differs", name,
				     ci, i - 1);
		cJSON_Delete(opaque);
	}
}

/* A result's tolerations: the request's, in order (upstream's
 * deviceAllocationResult(..., tolerations...)). */
static void check_tolerations(const char *name, uint32_t ci, const struct sx_dra_pick *p,
			      const cJSON *want)
{
	static const char *const effects[] = {"None", "NoSchedule", "NoExecute", "None"};
	uint32_t n = p->req ? p->req->ntolerations : 0, k = 0;
	const cJSON *t;

	if ((uint32_t)cJSON_GetArraySize(want) != n) {
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %s has %u tolerations, want %d",
			     name, ci, sx_str_get(p->device), n, cJSON_GetArraySize(want));
		return;
	}
	cJSON_ArrayForEach(t, want)
	{
		const struct sx_dra_toleration *g = &p->req->tolerations[k++];
		const cJSON *key = cJSON_GetObjectItem(t, "key"),
			    *value = cJSON_GetObjectItem(t, "value");
		const cJSON *op = cJSON_GetObjectItem(t, "operator"),
			    *eff = cJSON_GetObjectItem(t, "effect");

		if (strcmp(sx_str_get(g->key), key ? key->valuestring : "") ||
		    strcmp(sx_str_get(g->value), value ? value->valuestring : "") ||
		    strcmp(g->op == SX_DRA_TOL_EXISTS ? "Exists" : "Equal", op->valuestring) ||
		    g->has_effect != (eff != NULL) ||
		    (eff && strcmp(effects[g->effect], eff->valuestring)))
			sx_test_fail(__FILE__, __LINE__, "%s: claim %u: toleration %u differs",
				     name, ci, k - 1);
	}
}

/* Upstream's share IDs: internal.GenerateShareID, uuid.NewUUID of
 * k8s.io/apimachinery/pkg/util/uuid, google/uuid New: a random version 4
 * UUID in canonical lower-case form (8-4-4-4-12, RFC 4122 variant). */
static bool uuid_v4(const char *id)
{
	if (strlen(id) != 36 || id[14] != '4' || !strchr("89ab", id[19]))
		return false;
	for (int i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? id[i] != '-'
							      : !strchr("0123456789abcdef", id[i]))
			return false;
	return true;
}

/* A share (upstream's withConsumedCapacity(&fixedShareID, consumed)):
 * any share ID of upstream's format (the table, as upstream's, replaces
 * the random value), the consumed capacity as the result's strings. */
static void check_share(const char *name, uint32_t ci, const struct sx_dra_pick *p,
			const cJSON *want)
{
	struct sx_dra_named_qty q[16];
	uint32_t n;
	const cJSON *c;
	char buf[64];

	if (cJSON_IsNull(want))
		want = NULL; /* a row naming binding conditions, not a share */
	if (p->shared != (want != NULL) || (want && !uuid_v4(p->share_id))) {
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %s shared %d (id \"%s\"), want %d",
			     name, ci, sx_str_get(p->device), p->shared, p->share_id, want != NULL);
		return;
	}
	if (!want)
		return;
	n = sx_dra_consumed(p->req, p->driver, p->dev, q, 16);
	if ((int)n != cJSON_GetArraySize(cJSON_GetObjectItem(want, "consumed"))) {
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %s consumes %u capacities, want %d",
			     name, ci, sx_str_get(p->device), n,
			     cJSON_GetArraySize(cJSON_GetObjectItem(want, "consumed")));
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		c = cJSON_GetObjectItem(cJSON_GetObjectItem(want, "consumed"), q[i].name);
		sx_dra_qty_string(q[i].q, buf, sizeof(buf));
		if (!c || strcmp(c->valuestring, buf))
			sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %s consumes %s %s, want %s",
				     name, ci, sx_str_get(p->device), q[i].name, buf,
				     c ? c->valuestring : "nothing");
	}
}

/* The device's binding conditions copied into the result
 * (deviceRequestAllocationResultWithBindingConditions); none when the row
 * does not name them. */
static void check_strs(const char *name, uint32_t ci, const char *what, char *const *got,
		       uint32_t n, const cJSON *want)
{
	uint32_t k = 0;
	const cJSON *w;

	if ((int)n != cJSON_GetArraySize(want)) {
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %u %s, want %d", name, ci, n, what,
			     cJSON_GetArraySize(want));
		return;
	}
	cJSON_ArrayForEach(w, want) if (strcmp(got[k++], w->valuestring))
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %s %s, want %s", name, ci, what,
			     got[k - 1], w->valuestring);
}

static void check_binding(const char *name, uint32_t ci, const struct sx_dra_pick *p,
			  const cJSON *want)
{
	check_strs(name, ci, "bindingConditions", p->dev->bind_conds, p->dev->nbind_conds,
		   cJSON_GetObjectItem(want, "conditions"));
	check_strs(name, ci, "bindingFailureConditions", p->dev->bind_fail, p->dev->nbind_fail,
		   cJSON_GetObjectItem(want, "failure"));
}

static void check_claim(const char *name, uint32_t ci, const struct sx_dra_claim_out *o,
			const cJSON *want)
{
	const cJSON *results = cJSON_GetObjectItem(want, "results"), *r;
	const cJSON *sel = cJSON_GetObjectItem(want, "nodeSelector");
	char got_sel[2048], want_sel[2048] = "";
	uint32_t i = 0;

	if ((uint32_t)cJSON_GetArraySize(results) != o->npicks) {
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: %u devices, want %d", name, ci,
			     o->npicks, cJSON_GetArraySize(results));
		return;
	}
	cJSON_ArrayForEach(r, results)
	{
		const struct sx_dra_pick *p = &o->picks[i++];

		check_tolerations(name, ci, p, cJSON_GetArrayItem(r, 5));
		check_share(name, ci, p, cJSON_GetArrayItem(r, 6));
		for (uint32_t k = 0; p->shared && k + 1 < i; k++)
			if (o->picks[k].shared && !strcmp(o->picks[k].share_id, p->share_id))
				sx_test_fail(__FILE__, __LINE__, "%s: claim %u: share ID %s twice",
					     name, ci, p->share_id);
		check_binding(name, ci, p, cJSON_GetArrayItem(r, 7));
		if (strcmp(p->request, cJSON_GetArrayItem(r, 0)->valuestring) ||
		    strcmp(sx_str_get(p->driver), cJSON_GetArrayItem(r, 1)->valuestring) ||
		    strcmp(sx_str_get(p->pool), cJSON_GetArrayItem(r, 2)->valuestring) ||
		    strcmp(sx_str_get(p->device), cJSON_GetArrayItem(r, 3)->valuestring) ||
		    p->admin_access != cJSON_IsTrue(cJSON_GetArrayItem(r, 4)))
			sx_test_fail(__FILE__, __LINE__,
				     "%s: claim %u result %u: got %s %s/%s/%s%s", name, ci, i - 1,
				     p->request, sx_str_get(p->driver), sx_str_get(p->pool),
				     sx_str_get(p->device), p->admin_access ? " admin" : "");
	}
	selector_of_out(o, got_sel, sizeof(got_sel));
	if (cJSON_IsObject(sel))
		selector_of_json(sel, want_sel, sizeof(want_sel));
	if (strcmp(got_sel, want_sel) != 0)
		sx_test_fail(__FILE__, __LINE__, "%s: claim %u: node selector %s, want %s", name,
			     ci, got_sel, want_sel);
	check_config(name, ci, o, cJSON_GetObjectItem(want, "config"));
}

/* Filter's question (sx_dra_allocate_feasible) answers as the search
 * did, asked twice: the second answer may come from the memo. */
static void check_feasible(const char *name, const struct sx_dra_alloc_env *env,
			   const struct sx_node *node, const struct sx_dra_claim_in *in, uint32_t n,
			   int want)
{
	struct sx_dra_prep *p = sx_dra_prepare(env, in, n);
	char err[SX_DRA_ERR_LEN];

	CHECK(p != NULL);
	if (!p)
		return;
	sx_dra_prep_memo(p);
	for (int round = 0; round < 2; round++) {
		int rc = sx_dra_allocate_feasible(p, node, 0, err, sizeof(err));

		if (rc != want)
			sx_test_fail(__FILE__, __LINE__, "%s: feasible, call %d: rc %d, want %d",
				     name, round + 1, rc, want);
	}
	sx_dra_prep_free(p);
}

static int run_case(const cJSON *j, const char *name)
{
	struct tcase t = {.j = j, .selectors = cJSON_GetObjectItem(j, "selectors")};
	const cJSON *features = cJSON_GetObjectItem(j, "features"), *dev;
	const cJSON *expect = cJSON_GetObjectItem(j, "expect"),
		    *error = cJSON_GetObjectItem(j, "error");
	struct sx_dra_claim_in in[8];
	struct sx_dra_claim_out out[8];
	struct sx_snapshot snap = {0};
	struct sx_dra_allocated *allocated = sx_dra_allocated_new();
	struct sx_dra_index *ix;
	char err[SX_DRA_ERR_LEN];
	int rc;

	if (cJSON_IsTrue(cJSON_GetObjectItem(features, "listTypeAttributes")))
		sx_test_fail(__FILE__, __LINE__, "%s: needs DRAListTypeAttributes (not built)",
			     name);
	if (!load(&t, name)) {
		unload(&t);
		sx_dra_allocated_free(allocated);
		return 1;
	}
	snap.nresource_slices = t.nslices;
	snap.resource_slices = (const struct sx_dra_object **)t.slices;
	ix = sx_dra_index_new(&snap);
	cJSON_ArrayForEach(dev, cJSON_GetObjectItem(j, "allocated"))
		sx_dra_allocated_add(allocated, sx_intern(cJSON_GetArrayItem(dev, 0)->valuestring),
				     sx_intern(cJSON_GetArrayItem(dev, 1)->valuestring),
				     sx_intern(cJSON_GetArrayItem(dev, 2)->valuestring));
	/* upstream's allocatedCapacityDevices: shares allocated before */
	cJSON_ArrayForEach(dev, cJSON_GetObjectItem(j, "allocatedCapacity"))
	{
		const cJSON *c;
		sx_str names[8];
		sx_nano values[8];
		uint32_t n = 0;

		cJSON_ArrayForEach(c, cJSON_GetArrayItem(dev, 3))
		{
			names[n] = sx_intern(c->string);
			CHECK(sx_quantity_parse(c->valuestring, strlen(c->valuestring),
						&values[n]) == 0);
			n++;
		}
		sx_dra_allocated_add_shared(
			allocated, sx_intern(cJSON_GetArrayItem(dev, 0)->valuestring),
			sx_intern(cJSON_GetArrayItem(dev, 1)->valuestring),
			sx_intern(cJSON_GetArrayItem(dev, 2)->valuestring), names, values, n);
	}
	struct sx_dra_alloc_env env = {
		.features = {cJSON_IsTrue(cJSON_GetObjectItem(features, "adminAccess")),
			     cJSON_IsTrue(cJSON_GetObjectItem(features, "prioritizedList")),
			     cJSON_IsTrue(cJSON_GetObjectItem(features, "deviceTaints")),
			     cJSON_IsTrue(cJSON_GetObjectItem(features, "partitionableDevices")),
			     cJSON_IsTrue(cJSON_GetObjectItem(features, "consumableCapacity")),
			     cJSON_IsTrue(cJSON_GetObjectItem(features, "deviceBindingAndStatus"))},
		.index = ix,
		.allocated = allocated,
		.get_class = get_class,
		.class_ctx = &t,
		.match = match,
		.match_ctx = &t,
	};
	for (uint32_t i = 0; i < t.nclaims; i++)
		in[i] = (struct sx_dra_claim_in){NULL, t.claims[i]->meta.name,
						 &t.claims[i]->u.claim.spec};
	rc = sx_dra_allocate(&env, t.node, in, t.nclaims, out, err, sizeof(err));
	check_feasible(name, &env, t.node, in, t.nclaims, rc);
	if (cJSON_IsString(error)) {
		if (rc >= 0 || !strstr(err, error->valuestring))
			sx_test_fail(__FILE__, __LINE__, "%s: rc %d err \"%s\", want error \"%s\"",
				     name, rc, err, error->valuestring);
	} else if (!cJSON_IsArray(expect)) {
		if (rc != SX_DRA_UNSATISFIED && !(rc == SX_DRA_ALLOCATED && t.nclaims == 0))
			sx_test_fail(__FILE__, __LINE__, "%s: rc %d (%s), want no allocation", name,
				     rc, err);
	} else if (rc != SX_DRA_ALLOCATED) {
		sx_test_fail(__FILE__, __LINE__, "%s: rc %d (%s), want an allocation", name, rc,
			     err);
	} else {
		for (uint32_t i = 0; i < t.nclaims; i++)
			check_claim(name, i, &out[i], cJSON_GetArrayItem(expect, (int)i));
	}
	if (rc == SX_DRA_ALLOCATED)
		for (uint32_t i = 0; i < t.nclaims; i++)
			sx_dra_claim_out_clear(&out[i]);
	sx_dra_index_unref(ix);
	sx_dra_allocated_free(allocated);
	unload(&t);
	return 0;
}

static void test_upstream_table(void)
{
	size_t len;
	char *data = sx_test_read_file(CASES, &len);
	cJSON *root = data ? cJSON_Parse(data) : NULL;
	const cJSON *c;
	int n = 0, before;

	CHECK(root != NULL);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases"))
	{
		const char *name = cJSON_GetObjectItem(c, "name")->valuestring;

		before = sx_test_failures;
		run_case(c, name);
		if (sx_test_failures != before)
			printf("  case %s failed\n", name);
		n++;
	}
	printf("allocator table cases run: %d\n", n);
	cJSON_Delete(root);
	free(data);
}

/* ---------- DeviceTaintRules ---------- */

static const struct sx_dra_object *rule_class(void *ctx, const char *name)
{
	return ctx;
}

static int match_all(void *ctx, const char *expr, sx_str driver, sx_str pool,
		     const struct sx_dra_device *dev, char *err, size_t errlen)
{
	return SX_DRA_MATCH;
}

/* Allocates one device of claim `claim` under rule `rule` (NULL: none):
 * the device's name, or "" when nothing fits. */
static const char *alloc_with_rule(const char *rule, const char *claim, bool taints, char *buf)
{
	struct sx_error err = {0};
	cJSON *rj = rule ? cJSON_Parse(rule) : NULL;
	cJSON *sj = cJSON_Parse(
		"{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"s\"},"
		"\"spec\":{\"driver\":\"driver-a\",\"nodeName\":\"node-1\","
		"\"pool\":{\"name\":\"pool-1\",\"generation\":1,\"resourceSliceCount\":1},"
		"\"devices\":[{\"name\":\"device-1\"},{\"name\":\"device-2\"}]}}");
	cJSON *cj = cJSON_Parse(claim);
	cJSON *kj = cJSON_Parse("{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"class-a\"}}");
	cJSON *nj = cJSON_Parse("{\"metadata\":{\"name\":\"node-1\"}}");
	struct sx_device_taint_rule *r = rj ? sx_decode_device_taint_rule(rj, &err) : NULL;
	struct sx_dra_object *sl = decode(sj, "rules"), *cl = decode(cj, "rules"),
			     *cls = decode(kj, "rules");
	struct sx_node *node = sx_decode_node(nj, &err);
	const struct sx_dra_object *slices[1] = {sl};
	const struct sx_device_taint_rule *rules[1] = {r};
	struct sx_snapshot snap = {.nresource_slices = 1, .resource_slices = slices};
	struct sx_dra_index *ix = sx_dra_index_new(&snap);
	struct sx_dra_allocated *allocated = sx_dra_allocated_new();
	struct sx_dra_alloc_env env = {
		.features = {.device_taints = taints},
		.index = ix,
		.allocated = allocated,
		.get_class = rule_class,
		.class_ctx = cls,
		.match = match_all,
		.taint_rules = rules,
		.ntaint_rules = r ? 1 : 0,
	};
	struct sx_dra_claim_in in = {NULL, "claim-0", &cl->u.claim.spec};
	struct sx_dra_claim_out out;
	char msg[SX_DRA_ERR_LEN];

	buf[0] = '\0';
	CHECK(!rule || r != NULL);
	if (sx_dra_allocate(&env, node, &in, 1, &out, msg, sizeof(msg)) == SX_DRA_ALLOCATED) {
		snprintf(buf, 64, "%s", sx_str_get(out.picks[0].device));
		sx_dra_claim_out_clear(&out);
	}
	sx_dra_index_unref(ix);
	sx_dra_allocated_free(allocated);
	sx_device_taint_rule_unref(r);
	sx_dra_unref(sl);
	sx_dra_unref(cl);
	sx_dra_unref(cls);
	sx_node_unref(node);
	cJSON_Delete(rj);
	cJSON_Delete(sj);
	cJSON_Delete(cj);
	cJSON_Delete(kj);
	cJSON_Delete(nj);
	return buf;
}

#define RULE(sel, effect)                                                                          \
	"{\"metadata\":{\"name\":\"r\"},\"spec\":{" sel                                            \
	"\"taint\":{\"key\":\"k\",\"value\":\"v\","                                                \
	"\"effect\":\"" effect "\"}}}"
#define CLAIM(tol)                                                                                 \
	"{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"claim-0\"},\"spec\":{\"devices\":"   \
	"{\"requests\":[{\"name\":\"req-0\",\"exactly\":{\"deviceClassName\":\"class-a\"" tol      \
	"}}]}}}"

/* A DeviceTaintRule taints the devices its selector picks, as if the
 * taint were in the slice (resourceslice tracker); the request's
 * tolerations apply to it; effect None and rules without a selector do
 * nothing; DRADeviceTaints off ignores them all. */
static void test_taint_rules(void)
{
	char buf[64];
	CHECK_STR(alloc_with_rule(NULL, CLAIM(""), true, buf), "device-1");
	CHECK_STR(alloc_with_rule("{\"metadata\":{\"name\":\"r\"},\"spec\":{\"deviceSelector\":{"
				  "\"device\":\"device-1\"},\"taint\":{\"key\":\"k\",\"effect\":"
				  "\"NoSchedule\"}}}",
				  CLAIM(""), true, buf),
		  "device-2");
	CHECK_STR(alloc_with_rule(RULE("", "NoExecute"), CLAIM(""), true, buf), "device-1");
	CHECK_STR(
		alloc_with_rule(RULE("\"deviceSelector\":{},", "NoExecute"), CLAIM(""), true, buf),
		"");
	CHECK_STR(
		alloc_with_rule(RULE("\"deviceSelector\":{\"driver\":\"driver-b\"},", "NoExecute"),
				CLAIM(""), true, buf),
		"device-1");
	CHECK_STR(alloc_with_rule(RULE("\"deviceSelector\":{\"pool\":\"pool-1\"},", "NoSchedule"),
				  CLAIM(""), true, buf),
		  "");
	CHECK_STR(alloc_with_rule(RULE("", "None"), CLAIM(""), true, buf), "device-1");
	CHECK_STR(alloc_with_rule(RULE("\"deviceSelector\":{},", "None"), CLAIM(""), true, buf),
		  "device-1");
	CHECK_STR(
		alloc_with_rule(RULE("\"deviceSelector\":{\"device\":\"device-1\"},", "NoExecute"),
				CLAIM(""), true, buf),
		"device-2");
	CHECK_STR(alloc_with_rule(
			  RULE("\"deviceSelector\":{\"driver\":\"driver-a\",\"pool\":\"pool-1\","
			       "\"device\":\"device-1\"},",
			       "NoSchedule"),
			  CLAIM(",\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":"
				"\"v\"}]"),
			  true, buf),
		  "device-1");
	CHECK_STR(alloc_with_rule(RULE("\"deviceSelector\":{},", "NoSchedule"),
				  CLAIM(",\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\","
					"\"value\":\"w\"}]"),
				  true, buf),
		  "");
	CHECK_STR(alloc_with_rule(RULE("\"deviceSelector\":{},", "NoSchedule"),
				  CLAIM(",\"tolerations\":[{\"operator\":\"Exists\",\"effect\":"
					"\"NoExecute\"}]"),
				  true, buf),
		  "");
	CHECK_STR(alloc_with_rule(RULE("\"deviceSelector\":{},", "NoSchedule"), CLAIM(""), false,
				  buf),
		  "device-1");
}

/* ---------- Filter results across cycles (dra_memo.c) ---------- */

#define MEMO_SLICE(node, ndev)                                                                     \
	"{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"" node "\"},"                        \
	"\"spec\":{\"driver\":\"driver-a\",\"nodeName\":\"" node "\",\"pool\":{\"name\":"          \
	"\"" node "\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":" ndev "}}"
#define MEMO_CLAIM(count, sel)                                                                     \
	"{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"claim-0\"},\"spec\":{\"devices\":"   \
	"{\"requests\":[{\"name\":\"req-0\",\"exactly\":{\"deviceClassName\":\"class-a\","         \
	"\"count\":" count sel "}}]}}}"

/* A selector "false" matches nothing, any other everything. */
static int match_memo(void *ctx, const char *expr, sx_str driver, sx_str pool,
		      const struct sx_dra_device *dev, char *err, size_t errlen)
{
	return strcmp(expr, "false") == 0 ? SX_DRA_NO_MATCH : SX_DRA_MATCH;
}

struct memo_env {
	struct sx_dra_object *slices[2], *cls, *claims[3];
	struct sx_node *nodes[2];
	struct sx_dra_index *ix;
	struct sx_dra_allocated *set[2];
};

static sx_str dev_name(int i)
{
	char b[16];

	snprintf(b, sizeof(b), "dev-%d", i);
	return sx_intern(b);
}

/* What Filter answers for claim c on node n (0: cannot allocate, 1: can),
 * with set[0] and set[1] in use; each question on a new prep, as each
 * cycle makes one. */
static int memo_ask(struct memo_env *m, int c, int n)
{
	struct sx_dra_alloc_env env = {
		.index = m->ix,
		.allocated = m->set[0],
		.allocated2 = m->set[1],
		.get_class = rule_class,
		.class_ctx = m->cls,
		.match = match_memo,
	};
	struct sx_dra_claim_in in = {"default", "claim-0", &m->claims[c]->u.claim.spec};
	struct sx_dra_prep *p = sx_dra_prepare(&env, &in, 1);
	char err[SX_DRA_ERR_LEN];
	int rc;

	if (!p)
		return -1;
	sx_dra_prep_memo(p);
	rc = sx_dra_allocate_feasible(p, m->nodes[n], 0, err, sizeof(err));
	sx_dra_prep_free(p);
	return rc;
}

/* Sets set[k] to devices dev-<from>..dev-<to - 1> of node-1's pool. */
static void memo_use(struct memo_env *m, int k, int from, int to)
{
	sx_dra_allocated_free(m->set[k]);
	m->set[k] = sx_dra_allocated_new();
	for (int i = from; i < to; i++)
		sx_dra_allocated_add(m->set[k], sx_intern("driver-a"), sx_intern("node-1"),
				     dev_name(i));
}

/* node-1: dev-0..dev-7, node-2: dev-0; claims: 2 devices, 2 devices of
 * a selector matching none, 7 devices. */
static void memo_setup(struct memo_env *m)
{
	static const char *const slices[2] = {
		MEMO_SLICE("node-1",
			   "[{\"name\":\"dev-0\"},{\"name\":\"dev-1\"},{\"name\":"
			   "\"dev-2\"},{\"name\":\"dev-3\"},{\"name\":\"dev-4\"},{"
			   "\"name\":\"dev-5\"},{\"name\":\"dev-6\"},{\"name\":\"dev-7\"}]"),
		MEMO_SLICE("node-2", "[{\"name\":\"dev-0\"}]")};
	static const char *const claims[3] = {
		MEMO_CLAIM("2", ""),
		MEMO_CLAIM("2", ",\"selectors\":[{\"cel\":{\"expression\":\"false\"}}]"),
		MEMO_CLAIM("7", "")};
	struct sx_snapshot snap = {.nresource_slices = 2};
	struct sx_error err = {0};

	for (int i = 0; i < 2; i++) {
		cJSON *sj = cJSON_Parse(slices[i]);
		char nb[64];

		snprintf(nb, sizeof(nb), "{\"metadata\":{\"name\":\"node-%d\"}}", i + 1);
		cJSON *nj = cJSON_Parse(nb);

		m->slices[i] = decode(sj, "memo");
		m->nodes[i] = sx_decode_node(nj, &err);
		cJSON_Delete(sj);
		cJSON_Delete(nj);
	}
	for (int i = 0; i < 3; i++) {
		cJSON *cj = cJSON_Parse(claims[i]);

		m->claims[i] = decode(cj, "memo");
		cJSON_Delete(cj);
	}
	cJSON *kj = cJSON_Parse("{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"class-a\"}}");
	m->cls = decode(kj, "memo");
	cJSON_Delete(kj);
	snap.resource_slices = (const struct sx_dra_object **)m->slices;
	m->ix = sx_dra_index_new(&snap);
}

static void memo_teardown(struct memo_env *m)
{
	sx_dra_index_unref(m->ix);
	for (int i = 0; i < 2; i++) {
		sx_dra_allocated_free(m->set[i]);
		sx_dra_unref(m->slices[i]);
		sx_node_unref(m->nodes[i]);
	}
	for (int i = 0; i < 3; i++)
		sx_dra_unref(m->claims[i]);
	sx_dra_unref(m->cls);
}

/* A result is reused only for the same claims, node and devices in use:
 * each question below has the answer the search gives, whatever the
 * questions before it left in the memo. */
static void test_filter_memo(void)
{
	struct memo_env m = {0};

	memo_setup(&m);
	memo_use(&m, 0, 0, 0);
	memo_use(&m, 1, 0, 0);

	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	/* another claim (its selector differs), another node */
	CHECK_INT(memo_ask(&m, 1, 0), SX_DRA_UNSATISFIED);
	CHECK_INT(memo_ask(&m, 0, 1), SX_DRA_UNSATISFIED);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	/* devices in use, from either set */
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	memo_use(&m, 0, 0, 1);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	memo_use(&m, 1, 1, 2);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_UNSATISFIED);
	memo_use(&m, 0, 0, 0);
	memo_use(&m, 1, 0, 0);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	/* the same devices in use, claims differing in their count */
	memo_use(&m, 0, 0, 3);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_UNSATISFIED);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	/* 6 of 8 leave two */
	memo_use(&m, 0, 0, 3);
	memo_use(&m, 1, 3, 6);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	memo_use(&m, 1, 2, 7);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_UNSATISFIED);
	/* more than the pool's list of devices in use holds */
	memo_use(&m, 1, 0, 0);
	memo_use(&m, 0, 0, 6);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	memo_use(&m, 0, 0, 7);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_UNSATISFIED);
	memo_use(&m, 0, 1, 8);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_UNSATISFIED);
	memo_use(&m, 0, 0, 0);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);

	memo_teardown(&m);
}

/* A pending allocation of dev on node's pool through tracker t. */
static void memo_pend(struct sx_dra_claims *t, const char *uid, const char *node, int dev)
{
	static struct sx_dra_claim_out out; /* large: not on the stack */

	memset(&out, 0, sizeof(out));
	out.npicks = 1;
	out.picks[0].driver = sx_intern("driver-a");
	out.picks[0].pool = sx_intern(node);
	out.picks[0].device = dev_name(dev);
	CHECK(sx_dra_pending_add(t, uid, &out) == 0);
}

/* A new cycle's sets from tracker t (the previous ones released first,
 * unless hold: a cycle still holds them). */
static void memo_cycle(struct memo_env *m, struct sx_dra_claims *t, const struct sx_snapshot *snap,
		       struct sx_dra_allocated **held)
{
	for (int k = 0; k < 2; k++) {
		if (held)
			held[k] = m->set[k];
		else
			sx_dra_allocated_free(m->set[k]);
	}
	m->set[0] = sx_dra_allocated_base(t, snap);
	m->set[1] = sx_dra_inflight(t, snap);
}

/* The sets of the claims tracker change between cycles (in place while
 * no cycle holds them): a result is reused without comparing the
 * devices in use only while its pool did not change, and every answer is
 * the search's. */
static void test_filter_memo_tracker(void)
{
	struct memo_env m = {0};
	struct sx_dra_claims *t = sx_dra_claims_new();
	struct sx_snapshot snap = {0};
	struct sx_dra_allocated *held[2];
	char uid[32];

	memo_setup(&m);
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	memo_pend(t, "u0", "node-1", 0);
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	memo_pend(t, "u1", "node-1", 1);
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_UNSATISFIED);
	CHECK_INT(memo_ask(&m, 0, 0), SX_DRA_ALLOCATED);
	/* another pool changes: node-1's answers stay */
	memo_pend(t, "u2", "node-2", 0);
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_UNSATISFIED);
	CHECK_INT(memo_ask(&m, 0, 1), SX_DRA_UNSATISFIED);
	/* a cycle holds the sets: the next ones are copies */
	memo_pend(t, "u3", "node-1", 2);
	memo_cycle(&m, t, &snap, held);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_UNSATISFIED);
	sx_dra_allocated_free(held[0]);
	sx_dra_allocated_free(held[1]);
	/* removals; more changes elsewhere than a set keeps */
	CHECK(sx_dra_pending_remove(t, "u1"));
	CHECK(sx_dra_pending_remove(t, "u3"));
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	memo_pend(t, "u4", "node-1", 4);
	for (int i = 0; i < 40; i++) {
		snprintf(uid, sizeof(uid), "x%d", i);
		memo_pend(t, uid, "node-2", 10 + i);
	}
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_UNSATISFIED);
	CHECK(sx_dra_pending_remove(t, "u4"));
	memo_cycle(&m, t, &snap, NULL);
	CHECK_INT(memo_ask(&m, 2, 0), SX_DRA_ALLOCATED);
	memo_teardown(&m);
	sx_dra_claims_free(t);
}

/* ---------- pools with binding conditions last ---------- */

#define BSLICE(name, pool, dev, extra)                                                             \
	"{\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"" name "\"},"                        \
	"\"spec\":{\"driver\":\"driver-a\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"" pool     \
	"\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"" dev "\"" extra   \
	"}]}}"

/* The device one exactCount request of class-a gets from the slices
 * (pool/device), "" when none fits. */
static const char *alloc_from(const char *const *slice_json, uint32_t n, bool binding, char *buf)
{
	cJSON *kj = cJSON_Parse("{\"kind\":\"DeviceClass\",\"metadata\":{\"name\":\"class-a\"}}");
	cJSON *cj = cJSON_Parse(CLAIM(""));
	cJSON *nj = cJSON_Parse("{\"metadata\":{\"name\":\"node-1\"}}");
	struct sx_error err = {0};
	struct sx_dra_object *sl[4], *cl = decode(cj, "binds"), *cls = decode(kj, "binds");
	struct sx_node *node = sx_decode_node(nj, &err);
	struct sx_snapshot snap = {.nresource_slices = n,
				   .resource_slices = (const struct sx_dra_object **)sl};
	struct sx_dra_allocated *allocated = sx_dra_allocated_new();
	struct sx_dra_index *ix;
	struct sx_dra_claim_in in = {NULL, "claim-0", &cl->u.claim.spec};
	struct sx_dra_claim_out out;
	char msg[SX_DRA_ERR_LEN];

	for (uint32_t i = 0; i < n; i++) {
		cJSON *sj = cJSON_Parse(slice_json[i]);

		sl[i] = decode(sj, "binds");
		cJSON_Delete(sj);
	}
	ix = sx_dra_index_new(&snap);
	struct sx_dra_alloc_env env = {
		.features = {.binding = binding},
		.index = ix,
		.allocated = allocated,
		.get_class = rule_class,
		.class_ctx = cls,
		.match = match_all,
	};
	buf[0] = '\0';
	if (sx_dra_allocate(&env, node, &in, 1, &out, msg, sizeof(msg)) == SX_DRA_ALLOCATED) {
		snprintf(buf, 64, "%s/%s", sx_str_get(out.picks[0].pool),
			 sx_str_get(out.picks[0].device));
		sx_dra_claim_out_clear(&out);
	}
	sx_dra_index_unref(ix);
	sx_dra_allocated_free(allocated);
	for (uint32_t i = 0; i < n; i++)
		sx_dra_unref(sl[i]);
	sx_dra_unref(cl);
	sx_dra_unref(cls);
	sx_node_unref(node);
	cJSON_Delete(kj);
	cJSON_Delete(cj);
	cJSON_Delete(nj);
	return buf;
}

/* derived: upstream's GatherPools puts pools offering a device with
 * binding conditions after the others (pools_experimental.go,
 * poolHasBindingConditions), so the first fit is a device usable at
 * once even when its pool sorts later; between two such pools, and
 * between two plain ones, the order stays by pool name. */
static void test_binding_pools_last(void)
{
	const char *mixed[] = {
		BSLICE("s1", "pool-1", "device-1", ",\"bindingConditions\":[\"Ready\"]"),
		BSLICE("s2", "pool-2", "device-2", "")};
	const char *both[] = {
		BSLICE("s1", "pool-1", "device-1", ",\"bindingConditions\":[\"Ready\"]"),
		BSLICE("s2", "pool-2", "device-2", ",\"bindingConditions\":[\"Ready\"]")};
	const char *plain[] = {BSLICE("s1", "pool-1", "device-1", ""),
			       BSLICE("s2", "pool-2", "device-2", "")};
	char buf[64];

	CHECK_STR(alloc_from(mixed, 2, true, buf), "pool-2/device-2");
	CHECK_STR(alloc_from(both, 2, true, buf), "pool-1/device-1");
	CHECK_STR(alloc_from(plain, 2, true, buf), "pool-1/device-1");
	/* without DRADeviceBindingConditions such devices are never picked */
	CHECK_STR(alloc_from(both, 2, false, buf), "");
}

SX_TESTS(SX_TEST(test_upstream_table), SX_TEST(test_taint_rules), SX_TEST(test_binding_pools_last),
	 SX_TEST(test_filter_memo), SX_TEST(test_filter_memo_tracker))
