/* DefaultPreemption and the preemption engine, with cases transcribed from
 * upstream plugins/defaultpreemption/default_preemption_test.go
 * (TestPostFilter, TestDryRunPreemption, TestSelectBestCandidate,
 * TestPodEligibleToPreemptOthers) and args validation. Clusters are built
 * through the cache; profiles through the configuration loader.
 *
 * Upstream's epochTimeN are N nanoseconds; start times here are N seconds
 * (status.startTime has second resolution), which keeps every ordering. */
/* Positional pod tables leave trailing fields zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/features.h"
#include "schedext/framework.h"
#include "schedext/handle.h"
#include "schedext/preemption.h"
#include "../../plugins/slots.h"
#include "schedext/registry.h"

#define LOW	  0
#define MID	  100
#define HIGH	  1000
#define VERY_HIGH 10000
#define NEG	  (-100)

/* Resource sets of the upstream tests: cpu millicores and memory bytes. */
#define SMALL	   100
#define MEDIUM	   200
#define LARGE	   300
#define VERY_LARGE 500

/* ---------- cluster building ---------- */

struct pod_spec {
	const char *name;
	const char *node; /* NULL = pending */
	int priority;
	int res;	    /* cpu "<res>m", memory "<res>"; 0 = no requests */
	const char *labels; /* JSON members, e.g. "\"app\":\"foo\"" */
	int start;	    /* startTime seconds since the epoch; 0 = unset */
	const char *extra;  /* extra spec members */
	const char *nominated;
	bool deleting;
	bool never;
	bool preempted; /* DisruptionTarget True / PreemptionByScheduler */
	int mem;	/* memory when it differs from res */
};

static struct sx_pod *make_pod(const struct pod_spec *s)
{
	char json[4096], res[160] = "", start[96] = "", node[128] = "", nom[128] = "";
	struct sx_error err = {0};
	if (s->res)
		snprintf(res, sizeof(res),
			 ",\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%d\"}}",
			 s->res, s->mem ? s->mem : s->res);
	if (s->start)
		snprintf(start, sizeof(start), "\"startTime\":\"1970-01-01T00:00:%02dZ\"",
			 s->start);
	if (s->nominated)
		snprintf(nom, sizeof(nom), "%s\"nominatedNodeName\":\"%s\"", s->start ? "," : "",
			 s->nominated);
	if (s->node)
		snprintf(node, sizeof(node), "\"nodeName\":\"%s\",", s->node);
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
		 "\"labels\":{%s}%s},\"spec\":{%s\"priority\":%d,%s%s\"containers\":"
		 "[{\"name\":\"c\"%s}]},\"status\":{%s%s%s%s}}",
		 s->name, s->name, s->labels ? s->labels : "",
		 s->deleting ? ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"" : "", node,
		 s->priority, s->never ? "\"preemptionPolicy\":\"Never\"," : "",
		 s->extra ? s->extra : "", res, start, nom,
		 s->preempted && (s->start || s->nominated) ? "," : "",
		 s->preempted ? "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":"
				"\"True\",\"reason\":\"PreemptionByScheduler\"}]"
			      : "");
	cJSON *j = cJSON_Parse(json);
	struct sx_pod *pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	if (!pod)
		fprintf(stderr, "decode %s: %s %s\n", s->name, err.path, err.msg);
	CHECK(pod != NULL);
	return pod;
}

static void add_json(struct sx_cache *cache, const char *json, const char *kind)
{
	struct sx_error err = {0};
	struct sx_object obj;
	cJSON *j = cJSON_Parse(json);
	CHECK(j != NULL);
	CHECK_INT(sx_decode_object(j, kind, &obj, &err), 0);
	cJSON_Delete(j);
	CHECK_INT(sx_cache_upsert(cache, &obj), 0);
}

/* node "name[/zone]" with cpu <res>m, memory <res>, pods <pods>. */
static void add_node(struct sx_cache *cache, const char *spec, int res, int pods)
{
	char name[64], labels[192], json[768];
	const char *slash = strchr(spec, '/');
	snprintf(name, sizeof(name), "%.*s", slash ? (int)(slash - spec) : (int)strlen(spec), spec);
	if (slash)
		snprintf(labels, sizeof(labels), "\"hostname\":\"%s\",\"zone\":\"%s\"", name,
			 slash + 1);
	else
		snprintf(labels, sizeof(labels), "\"hostname\":\"%s\"", name);
	snprintf(json, sizeof(json),
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},\"status\":"
		 "{\"capacity\":{\"cpu\":\"%dm\",\"memory\":\"%d\",\"pods\":\"%d\"},"
		 "\"allocatable\":{\"cpu\":\"%dm\",\"memory\":\"%d\",\"pods\":\"%d\"}}}",
		 name, labels, res, res, pods, res, res, pods);
	add_json(cache, json, "Node");
}

static void add_pod(struct sx_cache *cache, const struct pod_spec *s)
{
	struct sx_object obj = {SX_KIND_POD, make_pod(s)};
	CHECK_INT(sx_cache_upsert(cache, &obj), 0);
}

static void add_pdb(struct sx_cache *cache, const char *name, const char *match, int allowed)
{
	char json[512];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":"
		 "{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"selector\":"
		 "{\"matchLabels\":{%s}}},\"status\":{\"disruptionsAllowed\":%d}}",
		 name, match, allowed);
	add_json(cache, json, "PodDisruptionBudget");
}

/* A configuration whose only profile enables `plugins` (JSON list items). */
static struct sx_config *make_config_gates(const char *plugins, const char *dp_args,
					   const char *gates, int minor)
{
	struct sx_features feat;
	char json[2048];
	struct sx_error err = {0};
	snprintf(json, sizeof(json),
		 "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
		 "\"KubeSchedulerConfiguration\",\"profiles\":[{\"schedulerName\":"
		 "\"default-scheduler\",\"plugins\":{\"multiPoint\":{\"disabled\":[{\"name\":"
		 "\"*\"}],\"enabled\":[%s,{\"name\":\"DefaultPreemption\"}]}},\"pluginConfig\":"
		 "[{\"name\":\"DefaultPreemption\",\"args\":%s}]}]}",
		 plugins, dp_args ? dp_args : "{}");
	sx_features_init(&feat, minor);
	if (gates)
		CHECK_INT(sx_features_set(&feat, gates, &err), 0);
	struct sx_config *cfg = sx_config_parse_for(json, strlen(json), &feat, &err);
	if (!cfg)
		fprintf(stderr, "config: %s %s\n", err.path, err.msg);
	CHECK(cfg != NULL);
	return cfg;
}

static struct sx_config *make_config(const char *plugins, const char *dp_args)
{
	return make_config_gates(plugins, dp_args, NULL, SX_RELEASE_DEFAULT);
}

#define FIT "{\"name\":\"NodeResourcesFit\"}"

/* One test world: cache, snapshot, profile, PreFilter state of the pod. */
struct world {
	struct sx_cache *cache;
	struct sx_snapshot *snap;
	struct sx_config *cfg;
	const struct sx_profile *prof;
	struct sx_pod *pod;
	struct sx_cycle_state *cs;
};

static void world_start(struct world *w, const char *plugins, const char *args)
{
	memset(w, 0, sizeof(*w));
	w->cache = sx_cache_new();
	w->cfg = make_config(plugins, args);
	w->prof = w->cfg ? w->cfg->profiles[0] : NULL;
}

/* Takes the snapshot and runs PreFilter for the pod. */
static void world_ready(struct world *w, const struct pod_spec *pod)
{
	sx_pod_unref(w->pod);
	if (w->cs)
		sx_cycle_state_free(w->prof, w->cs);
	if (!w->snap)
		w->snap = sx_cache_snapshot(w->cache);
	w->pod = make_pod(pod);
	w->cs = sx_cycle_state_new(w->snap);
	struct sx_status *st = sx_run_pre_filter(w->prof, w->cs, w->pod);
	CHECK(sx_status_is_success(st));
	sx_status_free(st);
}

static void world_end(struct world *w)
{
	if (w->cs)
		sx_cycle_state_free(w->prof, w->cs);
	sx_pod_unref(w->pod);
	sx_snapshot_unref(w->snap);
	sx_config_free(w->cfg);
	sx_cache_free(w->cache);
}

static int node_index(const struct sx_snapshot *snap, const char *name)
{
	return sx_snapshot_find(snap, sx_intern(name));
}

/* Snapshot indices sorted by node name (upstream's test order). */
static uint32_t sorted_nodes(const struct sx_snapshot *snap, uint32_t *out)
{
	for (uint32_t i = 0; i < snap->nnodes; i++)
		out[i] = i;
	for (uint32_t i = 1; i < snap->nnodes; i++)
		for (uint32_t j = i; j > 0 && strcmp(sx_str_get(snap->nodes[out[j]]->name),
						     sx_str_get(snap->nodes[out[j - 1]]->name)) < 0;
		     j--) {
			uint32_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return snap->nnodes;
}

static void victims_str(const struct sx_victims *v, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "[");
	for (uint32_t i = 0; i < v->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
				       v->pods[i]->meta.name);
	if (at < len)
		snprintf(buf + at, len - at, "]/%u", v->num_pdb_violations);
}

/* "node1[p1]/0 node2[p2]/0": candidates sorted by node name, victims most
 * important first, then the number of PDB violations. */
static const char *cands_str(const struct sx_preempt_candidate *c, uint32_t n)
{
	static char out[1024];
	uint32_t order[32];
	size_t at = 0;
	out[0] = 0;
	for (uint32_t i = 0; i < n && i < 32; i++)
		order[i] = i;
	for (uint32_t i = 1; i < n && i < 32; i++)
		for (uint32_t j = i; j > 0 && strcmp(sx_str_get(c[order[j]].node),
						     sx_str_get(c[order[j - 1]].node)) < 0;
		     j--) {
			uint32_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (uint32_t i = 0; i < n && i < 32 && at < sizeof(out); i++) {
		char v[256];
		victims_str(&c[order[i]].victims, v, sizeof(v));
		at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%s%s", i ? " " : "",
				       sx_str_get(c[order[i]].node), v);
	}
	return out;
}

/* Dry run over every node (sorted by name) with the given offset. */
static const char *dry_run(struct world *w, const struct sx_preempt_args *args, uint32_t offset)
{
	uint32_t pot[32];
	struct sx_preempt_candidate *c = NULL;
	uint32_t nc = 0, n = sorted_nodes(w->snap, pot);
	struct sx_status **st = calloc(w->snap->nnodes, sizeof(*st));
	struct sx_status *err = NULL;
	CHECK_INT(sx_preempt_dry_run(w->prof, w->cs, w->pod, w->snap, pot, n, offset,
				     sx_preempt_num_candidates(args, n), NULL, &c, &nc, st, &err),
		  0);
	const char *s = cands_str(c, nc);
	sx_preempt_candidates_free(c, nc);
	for (uint32_t i = 0; i < w->snap->nnodes; i++)
		sx_status_free(st[i]);
	free(st);
	sx_status_free(err);
	return s;
}

/* ---------- TestPostFilter (through the plugin) ---------- */

static char applied[256];

static struct sx_status *record_apply(void *ctx, struct sx_preemption_eval *ev,
				      const struct sx_pod *preemptor,
				      const struct sx_preempt_result *r)
{
	victims_str(&r->victims, applied, sizeof(applied));
	return NULL;
}

/* Runs the DefaultPreemption PostFilter with per-node codes ("U" =
 * Unschedulable, "X" = UnschedulableAndUnresolvable, "-" = no status). */
static struct sx_status *post_filter(struct world *w, const char *codes, sx_str *nominated)
{
	struct sx_status *statuses[16] = {0};
	struct sx_post_filter_result res = {SX_STR_EMPTY};
	struct sx_handle_env env = {.apply = record_apply};
	const struct sx_plugin *p = sx_plugins[SX_SLOT_default_preemption];
	char name[16];
	applied[0] = 0;
	for (unsigned i = 0; codes[i]; i++) {
		snprintf(name, sizeof(name), "node%u", i + 1);
		int at = node_index(w->snap, name);
		CHECK(at >= 0);
		if (at >= 0 && codes[i] != '-')
			statuses[at] =
				sx_status_new(codes[i] == 'U' ? SX_UNSCHEDULABLE
							      : SX_UNSCHEDULABLE_AND_UNRESOLVABLE,
					      NULL);
	}
	sx_handle_attach(w->prof->handle, &env);
	struct sx_filtered_status f = {w->snap, statuses};
	struct sx_status *st = p->post_filter(w->prof->instances[SX_SLOT_default_preemption], w->cs,
					      w->pod, &f, &res);
	for (unsigned i = 0; i < 16; i++)
		sx_status_free(statuses[i]);
	*nominated = res.nominated_node;
	return st;
}

static const char *msg_of(const struct sx_status *st)
{
	static char buf[1024];
	return st ? sx_status_message(st, buf, sizeof(buf)) : "(success)";
}

static void test_post_filter_higher_priority(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", 1000, 1);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH});
	struct sx_status *st = post_filter(&w, "U", &nom);
	CHECK(st == NULL);
	CHECK_STR(sx_str_get(nom), "node1");
	CHECK_STR(applied, "[p1]/0");
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_tied_priority(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", 1000, 1);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
	world_ready(&w, &(struct pod_spec){.name = "p"});
	struct sx_status *st = post_filter(&w, "U", &nom);
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
	CHECK_STR(msg_of(st), "preemption: 0/1 nodes are available: 1 No preemption victims "
			      "found for incoming pod.");
	CHECK_INT(nom, SX_STR_EMPTY);
	CHECK_STR(applied, "");
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_respects_statuses(void)
{
	/* "preemption should respect filteredNodesStatuses" and "... absent
	 * NodeToStatusReader entry meaning UnschedulableAndUnresolvable". */
	static const char *const codes[] = {"X", "-"};
	for (int i = 0; i < 2; i++) {
		struct world w;
		sx_str nom;
		world_start(&w, FIT, NULL);
		add_node(w.cache, "node1", 1000, 1);
		add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
		world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH});
		struct sx_status *st = post_filter(&w, codes[i], &nom);
		CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
		CHECK_STR(msg_of(st), "preemption: 0/1 nodes are available: 1 Preemption is not "
				      "helpful for scheduling.");
		sx_status_free(st);
		world_end(&w);
	}
}

static void test_post_filter_one_node(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", 1000, 1);
	add_node(w.cache, "node2", 1000, 1);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", HIGH});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", LOW});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = MID});
	struct sx_status *st = post_filter(&w, "UU", &nom);
	CHECK(st == NULL);
	CHECK_STR(sx_str_get(nom), "node2");
	CHECK_STR(applied, "[p2]/0");
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_min_highest_priority_with_pdbs(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", 1000, 1);
	add_node(w.cache, "node2", 1000, 1);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", HIGH, 0, "\"pdb\":\"non-violating\""});
	add_pod(w.cache, &(struct pod_spec){"p2", "node1", LOW, 0, "\"pdb\":\"violating\""});
	add_pod(w.cache, &(struct pod_spec){"p3", "node2", MID, 0, "\"pdb\":\"violating\""});
	add_pdb(w.cache, "violating-pdb", "\"pdb\":\"violating\"", 0);
	add_pdb(w.cache, "non-violating-pdb", "\"pdb\":\"non-violating\"", 2147483647);
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = VERY_HIGH});
	struct sx_status *st = post_filter(&w, "UU", &nom);
	CHECK(st == NULL);
	CHECK_STR(sx_str_get(nom), "node2");
	CHECK_STR(applied, "[p3]/1");
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_not_enough_resources(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	/* nodeRes: cpu 200m, memory 400 */
	add_json(w.cache,
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node1\"},\"status\":"
		 "{\"allocatable\":{\"cpu\":\"200m\",\"memory\":\"400\",\"pods\":\"32\"}}}",
		 "Node");
	add_json(w.cache,
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node2\"},\"status\":"
		 "{\"allocatable\":{\"cpu\":\"200m\",\"memory\":\"400\",\"pods\":\"32\"}}}",
		 "Node");
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", 0});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	struct sx_status *st = post_filter(&w, "UU", &nom);
	CHECK_STR(msg_of(st), "preemption: 0/2 nodes are available: 2 Insufficient cpu.");
	CHECK_INT(nom, SX_STR_EMPTY);
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_mixed_reasons(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", 1000, 1);
	add_json(w.cache,
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node2\"},\"status\":"
		 "{\"allocatable\":{\"cpu\":\"200m\",\"memory\":\"400\",\"pods\":\"32\"}}}",
		 "Node");
	add_node(w.cache, "node3", 1000, 1);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", HIGH});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", 0});
	add_pod(w.cache, &(struct pod_spec){"p3", "node3", HIGH});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	struct sx_status *st = post_filter(&w, "UUU", &nom);
	CHECK_STR(msg_of(st), "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No "
			      "preemption victims found for incoming pod.");
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_mixed_unresolvable(void)
{
	struct world w;
	sx_str nom;
	const char *node =
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"node%d\"},\"status\":"
		"{\"allocatable\":{\"cpu\":\"200m\",\"memory\":\"400\",\"pods\":\"32\"}}}";
	char json[256];
	world_start(&w, FIT, NULL);
	for (int i = 1; i <= 4; i++) {
		snprintf(json, sizeof(json), node, i);
		add_json(w.cache, json, "Node");
	}
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", 0});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	struct sx_status *st = post_filter(&w, "UU-X", &nom);
	CHECK_STR(msg_of(st), "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 "
			      "Preemption is not helpful for scheduling.");
	sx_status_free(st);
	world_end(&w);
}

static void test_post_filter_not_eligible(void)
{
	struct world w;
	sx_str nom;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", 1000, 1);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .never = true});
	struct sx_status *st = post_filter(&w, "U", &nom);
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
	CHECK_STR(msg_of(st), "preemption: not eligible due to preemptionPolicy=Never.");
	CHECK_STR(applied, "");
	sx_status_free(st);
	world_end(&w);
}

/* ---------- the TestPlugin cases: AddPod/RemovePod errors ---------- */

static struct sx_status *tp_remove(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				   const struct sx_pod *removed, const struct sx_node_info *ni)
{
	sx_str v;
	if (sx_labels_get(&ni->node->meta.labels, sx_intern("error"), &v) &&
	    strcmp(sx_str_get(v), "true") == 0)
		return sx_status_new(SX_ERROR, "failed to remove pod: %s", pod->meta.name);
	return NULL;
}

static struct sx_status *tp_pre_filter(void *self, struct sx_cycle_state *cs,
				       const struct sx_pod *pod, struct sx_node_set **result)
{
	return NULL;
}

static const struct sx_plugin test_plugin = {
	.name = "test-plugin", .pre_filter = tp_pre_filter, .remove_pod = tp_remove};

static void test_post_filter_extension_errors(void)
{
	static const char *const nodes[] = {
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"node1\","
		"\"labels\":{\"error\":\"true\"}},\"status\":{"
		"\"allocatable\":{\"cpu\":\"300m\",\"memory\":\"300\","
		"\"pods\":\"32\"}}}",
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"node2\"},"
		"\"status\":{\"allocatable\":{\"cpu\":\"300m\",\"memory\":"
		"\"300\",\"pods\":\"32\"}}}"};
	for (int both = 0; both < 2; both++) {
		struct world w;
		struct sx_enabled pre[8];
		struct sx_profile prof;
		struct sx_preempt_result r;
		world_start(&w, FIT, NULL);
		add_json(w.cache, nodes[0], "Node");
		add_pod(w.cache, &(struct pod_spec){"p1", "node1", 0});
		if (both) {
			add_json(w.cache, nodes[1], "Node");
			add_pod(w.cache, &(struct pod_spec){"p2", "node2", 0, MEDIUM});
		}
		/* The configured profile plus test-plugin at PreFilter. */
		prof = *w.prof;
		memcpy(pre, prof.points[SX_PT_PRE_FILTER],
		       sizeof(pre[0]) * prof.n[SX_PT_PRE_FILTER]);
		pre[prof.n[SX_PT_PRE_FILTER]] =
			(struct sx_enabled){&test_plugin, sx_plugin_count, NULL, 1};
		prof.points[SX_PT_PRE_FILTER] = pre;
		prof.n[SX_PT_PRE_FILTER]++;
		w.prof = &prof;
		world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
		struct sx_status *st[2] = {sx_status_new(SX_UNSCHEDULABLE, NULL),
					   sx_status_new(SX_UNSCHEDULABLE, NULL)};
		struct sx_preempt_input in = {.snap = w.snap, .statuses = st, .offset = 0};
		CHECK_INT(sx_preempt(&prof, w.cs, w.pod, &in, &r), 0);
		if (!both) {
			CHECK_INT(sx_status_code(r.status), SX_ERROR);
			/* upstream quotes the plugin name (%q): see the report */
			CHECK(strncmp(msg_of(r.status),
				      "preemption: running RemovePod on PreFilter plugin ",
				      50) == 0);
			CHECK(strstr(msg_of(r.status), "test-plugin") != NULL);
			CHECK(strstr(msg_of(r.status), ": failed to remove pod: p") != NULL);
			CHECK_INT(r.mode, SX_NOMINATE_NOOP);
		} else {
			CHECK(r.status == NULL);
			CHECK_STR(sx_str_get(r.nominated_node), "node2");
			CHECK_INT(r.victims.n, 1);
		}
		sx_preempt_result_free(&r);
		sx_status_free(st[0]);
		sx_status_free(st[1]);
		world_end(&w);
	}
}

/* ---------- TestDryRunPreemption ---------- */

static void two_nodes(struct world *w)
{
	add_node(w->cache, "node1", VERY_LARGE, 32);
	add_node(w->cache, "node2", VERY_LARGE, 32);
}

static void test_dry_run_both_nodes(void)
{
	struct world w;
	world_start(&w, FIT, NULL);
	two_nodes(&w);
	add_pod(w.cache, &(struct pod_spec){"p1", "node1", MID, LARGE});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", MID, LARGE});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_STR(dry_run(&w, NULL, 0), "node1[p1]/0 node2[p2]/0");
	/* "... other pods running are higher priority, no preemption would happen" */
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = LOW, .res = LARGE});
	CHECK_STR(dry_run(&w, NULL, 0), "");
	world_end(&w);
}

static void test_dry_run_lower_priority_small_stays(void)
{
	struct world w;
	world_start(&w, FIT, NULL);
	two_nodes(&w);
	add_pod(w.cache, &(struct pod_spec){"p1.1", "node1", LOW, SMALL});
	add_pod(w.cache, &(struct pod_spec){"p1.2", "node1", MID, LARGE});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", MID, LARGE});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_STR(dry_run(&w, NULL, 0), "node1[p1.2]/0 node2[p2]/0");
	world_end(&w);
}

static void test_dry_run_mixed_priorities(void)
{
	struct world w;
	world_start(&w, FIT, NULL);
	two_nodes(&w);
	add_pod(w.cache, &(struct pod_spec){"p1.1", "node1", MID, SMALL});
	add_pod(w.cache, &(struct pod_spec){"p1.2", "node1", LOW, SMALL});
	add_pod(w.cache, &(struct pod_spec){"p1.3", "node1", MID, MEDIUM});
	add_pod(w.cache, &(struct pod_spec){"p1.4", "node1", HIGH, SMALL});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", HIGH, LARGE});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_STR(dry_run(&w, NULL, 0), "node1[p1.3,p1.2]/0");
	world_end(&w);
}

static void test_dry_run_later_start_time(void)
{
	struct world w;
	world_start(&w, FIT, NULL);
	two_nodes(&w);
	add_pod(w.cache, &(struct pod_spec){"p1.1", "node1", LOW, SMALL, NULL, 5});
	add_pod(w.cache, &(struct pod_spec){"p1.2", "node1", LOW, SMALL, NULL, 4});
	add_pod(w.cache, &(struct pod_spec){"p1.3", "node1", MID, MEDIUM, NULL, 3});
	add_pod(w.cache, &(struct pod_spec){"p1.4", "node1", HIGH, SMALL, NULL, 2});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", HIGH, LARGE, NULL, 1});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_STR(dry_run(&w, NULL, 0), "node1[p1.3,p1.1]/0");
	world_end(&w);
}

static void test_dry_run_anti_affinity(void)
{
	struct world w;
	world_start(&w, FIT ",{\"name\":\"InterPodAffinity\"}", NULL);
	two_nodes(&w);
	add_pod(w.cache,
		&(struct pod_spec){
			"p1.1", "node1", LOW, SMALL, "\"foo\":\"\"", 0,
			"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringScheduling"
			"IgnoredDuringExecution\":[{\"labelSelector\":{\"matchExpressions\":"
			"[{\"key\":\"foo\",\"operator\":\"Exists\"}]},\"topologyKey\":"
			"\"hostname\"}]}},"});
	add_pod(w.cache, &(struct pod_spec){"p1.2", "node1", MID, SMALL});
	add_pod(w.cache, &(struct pod_spec){"p1.3", "node1", HIGH, SMALL});
	add_pod(w.cache, &(struct pod_spec){"p2", "node2", HIGH, SMALL});
	world_ready(&w,
		    &(struct pod_spec){
			    .name = "p", .priority = HIGH, .res = SMALL, .labels = "\"foo\":\"\""});
	CHECK_STR(dry_run(&w, NULL, 0), "node1[p1.1]/0");
	world_end(&w);
}

static void test_dry_run_topology_spread(void)
{
	struct world w;
	world_start(&w, "{\"name\":\"PodTopologySpread\"}", NULL);
	add_node(w.cache, "node-a/zone1", VERY_LARGE, 32);
	add_node(w.cache, "node-b/zone1", VERY_LARGE, 32);
	add_node(w.cache, "node-x/zone2", VERY_LARGE, 32);
	add_pod(w.cache, &(struct pod_spec){"pod-a1", "node-a", MID, 0, "\"foo\":\"\""});
	add_pod(w.cache, &(struct pod_spec){"pod-a2", "node-a", LOW, 0, "\"foo\":\"\""});
	add_pod(w.cache, &(struct pod_spec){"pod-b1", "node-b", LOW, 0, "\"foo\":\"\""});
	add_pod(w.cache, &(struct pod_spec){"pod-x1", "node-x", HIGH, 0, "\"foo\":\"\""});
	add_pod(w.cache, &(struct pod_spec){"pod-x2", "node-x", HIGH, 0, "\"foo\":\"\""});
	world_ready(&w,
		    &(struct pod_spec){
			    .name = "p",
			    .priority = HIGH,
			    .labels = "\"foo\":\"\"",
			    .extra = "\"topologySpreadConstraints\":[{\"maxSkew\":1,"
				     "\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
				     "\"DoNotSchedule\",\"labelSelector\":{\"matchExpressions\":"
				     "[{\"key\":\"foo\",\"operator\":\"Exists\"}]}},{\"maxSkew\":1,"
				     "\"topologyKey\":\"hostname\",\"whenUnsatisfiable\":"
				     "\"DoNotSchedule\",\"labelSelector\":{\"matchExpressions\":"
				     "[{\"key\":\"foo\",\"operator\":\"Exists\"}]}}],"});
	CHECK_STR(dry_run(&w, NULL, 0), "node-a[pod-a2]/0 node-b[pod-b1]/0");
	world_end(&w);
}

static void test_dry_run_same_pdb(void)
{
	struct world w;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", VERY_LARGE, 32);
	add_pod(w.cache, &(struct pod_spec){"p1.1", "node1", MID, MEDIUM, "\"app\":\"foo\""});
	add_pod(w.cache, &(struct pod_spec){"p1.2", "node1", MID, MEDIUM, "\"app\":\"foo\""});
	add_pdb(w.cache, "pdb", "\"app\":\"foo\"", 1);
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = VERY_LARGE});
	const char *got = dry_run(&w, NULL, 0);
	/* Both victims, one PDB violation; equal importance keeps node order. */
	CHECK(strcmp(got, "node1[p1.1,p1.2]/1") == 0 || strcmp(got, "node1[p1.2,p1.1]/1") == 0);
	world_end(&w);
}

static void five_nodes(struct world *w, const int *prio, const char *const *labels)
{
	char name[16];
	for (int i = 1; i <= 5; i++) {
		snprintf(name, sizeof(name), "node%d", i);
		add_node(w->cache, name, VERY_LARGE, 32);
	}
	static const char *const pods[] = {"p1", "p2", "p3", "p4", "p5"};
	static const char *const nodes[] = {"node1", "node2", "node3", "node4", "node5"};
	for (int i = 0; i < 5; i++)
		add_pod(w->cache, &(struct pod_spec){pods[i], nodes[i], prio[i], LARGE,
						     labels ? labels[i] : NULL});
}

/* Upstream draws the offsets with Go's rand seeded 4 (4, then 1, then 3);
 * they are given explicitly here. */
static void test_dry_run_args_limit(void)
{
	const struct sx_preempt_args args = {40, 1};
	static const int all_mid[] = {MID, MID, MID, MID, MID};
	static const int some_high[] = {MID, VERY_HIGH, MID, MID, VERY_HIGH};
	struct world w;
	world_start(&w, FIT, NULL);
	five_nodes(&w, all_mid, NULL);
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_INT(sx_preempt_num_candidates(&args, 5), 2);
	CHECK_STR(dry_run(&w, &args, 4), "node1[p1]/0 node5[p5]/0");
	/* "preemption offset across multiple scheduling cycles and wrap around" */
	CHECK_STR(dry_run(&w, &args, 1), "node2[p2]/0 node3[p3]/0");
	CHECK_STR(dry_run(&w, &args, 3), "node4[p4]/0 node5[p5]/0");
	world_end(&w);

	world_start(&w, FIT, NULL);
	five_nodes(&w, some_high, NULL);
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_STR(dry_run(&w, &args, 4), "node1[p1]/0 node3[p3]/0");
	world_end(&w);
}

static void test_dry_run_looks_past_pdb_violations(void)
{
	const struct sx_preempt_args args = {40, 2};
	static const int all_mid[] = {MID, MID, MID, MID, MID};
	static const char *const labels[] = {"\"app\":\"foo\"", "\"app\":\"foo\"", NULL, NULL,
					     "\"app\":\"foo\""};
	struct world w;
	world_start(&w, FIT, NULL);
	five_nodes(&w, all_mid, labels);
	add_pdb(w.cache, "pdb", "\"app\":\"foo\"", 0);
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	CHECK_STR(dry_run(&w, &args, 4), "node1[p1]/1 node3[p3]/0 node5[p5]/1");
	world_end(&w);
}

/* ---------- TestSelectBestCandidate ---------- */

struct best_case {
	const char *name;
	int nnodes;
	int pod_res;
	int pod_prio;
	struct pod_spec pods[12];
	const char *expected; /* any of these (space separated) */
};

#define P(n, node, prio, res, start)                                                               \
	{                                                                                          \
		n, node, prio, res, NULL, start                                                    \
	}

static const struct best_case best_cases[] = {
	{"a pod that fits on both nodes when lower priority pods are preempted",
	 2,
	 LARGE,
	 HIGH,
	 {P("p1", "node1", MID, LARGE, 0), P("p2", "node2", MID, LARGE, 0)},
	 "node1 node2"},
	{"node with min highest priority pod is picked",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", MID, MEDIUM, 0), P("p1.2", "node1", MID, LARGE, 0),
	  P("p2.1", "node2", MID, MEDIUM, 0), P("p2.2", "node2", LOW, MEDIUM, 0),
	  P("p3.1", "node3", LOW, MEDIUM, 0), P("p3.2", "node3", LOW, MEDIUM, 0)},
	 "node3"},
	{"when highest priorities are the same, minimum sum of priorities is picked",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", MID, MEDIUM, 0), P("p1.2", "node1", MID, LARGE, 0),
	  P("p2.1", "node2", MID, LARGE, 0), P("p2.2", "node2", LOW, MEDIUM, 0),
	  P("p3.1", "node3", MID, MEDIUM, 0), P("p3.2", "node3", MID, MEDIUM, 0)},
	 "node2"},
	{"when highest priority and sum are the same, minimum number of pods is picked",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", MID, SMALL, 0), P("p1.2", "node1", NEG, SMALL, 0),
	  P("p1.3", "node1", MID, SMALL, 0), P("p1.4", "node1", NEG, SMALL, 0),
	  P("p2.1", "node2", MID, LARGE, 0), P("p2.2", "node2", NEG, MEDIUM, 0),
	  P("p3.1", "node3", MID, MEDIUM, 0), P("p3.2", "node3", NEG, SMALL, 0),
	  P("p3.3", "node3", LOW, SMALL, 0)},
	 "node2"},
	{"sum of adjusted priorities is considered",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", MID, SMALL, 0), P("p1.2", "node1", NEG, SMALL, 0),
	  P("p1.3", "node1", NEG, SMALL, 0), P("p2.1", "node2", MID, LARGE, 0),
	  P("p2.2", "node2", NEG, MEDIUM, 0), P("p3.1", "node3", MID, MEDIUM, 0),
	  P("p3.2", "node3", NEG, SMALL, 0), P("p3.3", "node3", LOW, SMALL, 0)},
	 "node2"},
	{"non-overlapping lowest high priority, sum priorities, and number of pods",
	 4,
	 VERY_LARGE,
	 VERY_HIGH,
	 {P("p1.1", "node1", MID, SMALL, 0), P("p1.2", "node1", LOW, SMALL, 0),
	  P("p1.3", "node1", LOW, SMALL, 0), P("p2.1", "node2", HIGH, LARGE, 0),
	  P("p3.1", "node3", MID, MEDIUM, 0), P("p3.2", "node3", LOW, SMALL, 0),
	  P("p3.3", "node3", LOW, SMALL, 0), P("p3.4", "node3", LOW, MEDIUM, 0),
	  P("p4.1", "node4", MID, MEDIUM, 0), P("p4.2", "node4", MID, SMALL, 0),
	  P("p4.3", "node4", MID, SMALL, 0), P("p4.4", "node4", NEG, SMALL, 0)},
	 "node1"},
	{"same priority, same number of victims, different start time for each node's pod",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", MID, MEDIUM, 2), P("p1.2", "node1", MID, MEDIUM, 2),
	  P("p2.1", "node2", MID, MEDIUM, 3), P("p2.2", "node2", MID, MEDIUM, 3),
	  P("p3.1", "node3", MID, MEDIUM, 1), P("p3.2", "node3", MID, MEDIUM, 1)},
	 "node2"},
	{"same priority, same number of victims, different start time for all pods",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", MID, MEDIUM, 4), P("p1.2", "node1", MID, MEDIUM, 2),
	  P("p2.1", "node2", MID, MEDIUM, 5), P("p2.2", "node2", MID, MEDIUM, 1),
	  P("p3.1", "node3", MID, MEDIUM, 3), P("p3.2", "node3", MID, MEDIUM, 6)},
	 "node3"},
	{"different priority, same number of victims, different start time for all pods",
	 3,
	 VERY_LARGE,
	 HIGH,
	 {P("p1.1", "node1", LOW, MEDIUM, 4), P("p1.2", "node1", MID, MEDIUM, 2),
	  P("p2.1", "node2", MID, MEDIUM, 6), P("p2.2", "node2", LOW, MEDIUM, 1),
	  P("p3.1", "node3", LOW, MEDIUM, 3), P("p3.2", "node3", MID, MEDIUM, 5)},
	 "node2"},
};

static void test_select_best_candidate(void)
{
	for (size_t k = 0; k < SX_ARRAY_SIZE(best_cases); k++) {
		const struct best_case *c = &best_cases[k];
		struct world w;
		struct sx_preempt_candidate *cands = NULL;
		uint32_t nc = 0, pot[8];
		char name[16];
		world_start(&w, FIT, NULL);
		for (int i = 1; i <= c->nnodes; i++) {
			snprintf(name, sizeof(name), "node%d", i);
			add_node(w.cache, name, VERY_LARGE, 32);
		}
		for (int i = 0; i < 12 && c->pods[i].name; i++)
			add_pod(w.cache, &c->pods[i]);
		world_ready(&w, &(struct pod_spec){
					.name = "p", .priority = c->pod_prio, .res = c->pod_res});
		uint32_t n = sorted_nodes(w.snap, pot);
		struct sx_status **st = calloc(n, sizeof(*st));
		CHECK_INT(sx_preempt_dry_run(w.prof, w.cs, w.pod, w.snap, pot, n, 0,
					     sx_preempt_num_candidates(NULL, n), NULL, &cands, &nc,
					     st, NULL),
			  0);
		int best = sx_preempt_pick_one(cands, nc);
		CHECK(best >= 0);
		const char *got = best >= 0 ? sx_str_get(cands[best].node) : "";
		const char *hit = strstr(c->expected, got);
		if (!hit || !got[0])
			fprintf(stderr, "case \"%s\": picked %s, want %s (%s)\n", c->name, got,
				c->expected, cands_str(cands, nc));
		CHECK(hit != NULL && got[0]);
		sx_preempt_candidates_free(cands, nc);
		for (uint32_t i = 0; i < n; i++)
			sx_status_free(st[i]);
		free(st);
		world_end(&w);
	}
}

static void test_pick_one_empty(void)
{
	CHECK_INT(sx_preempt_pick_one(NULL, 0), -1);
}

/* ---------- TestPodEligibleToPreemptOthers ---------- */

static void test_eligibility(void)
{
	struct world w;
	const char *reason;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", VERY_LARGE, 32);
	add_pod(w.cache, &(struct pod_spec){.name = "p-terminating",
					    .node = "node1",
					    .priority = LOW,
					    .deleting = true,
					    .preempted = true});
	/* terminating for another reason: does not block (podTerminatingByPreemption) */
	add_node(w.cache, "node2", VERY_LARGE, 32);
	add_pod(w.cache,
		&(struct pod_spec){
			.name = "p-leaving", .node = "node2", .priority = LOW, .deleting = true});
	w.snap = sx_cache_snapshot(w.cache);

	/* "Pod with nominated node": its status UnschedulableAndUnresolvable */
	struct sx_pod *pod =
		make_pod(&(struct pod_spec){.name = "p", .priority = HIGH, .nominated = "node1"});
	CHECK(sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE_AND_UNRESOLVABLE, false,
				      &reason));
	/* "Pod with nominated node, but without nominated node status" */
	CHECK(!sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, false, &reason));
	CHECK_STR(reason, "not eligible due to a terminating pod on the nominated node.");
	sx_pod_unref(pod);
	pod = make_pod(&(struct pod_spec){.name = "p", .priority = HIGH, .nominated = "node2"});
	CHECK(sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, false, &reason));
	sx_pod_unref(pod);
	/* "Pod without nominated node" */
	pod = make_pod(&(struct pod_spec){.name = "p", .priority = HIGH});
	CHECK(sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, false, &reason));
	CHECK(reason == NULL);
	sx_pod_unref(pod);
	/* "Pod with 'PreemptNever' preemption policy" */
	pod = make_pod(&(struct pod_spec){.name = "p", .priority = HIGH, .never = true});
	CHECK(!sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, false, &reason));
	CHECK_STR(reason, "not eligible due to preemptionPolicy=Never.");
	sx_pod_unref(pod);
	/* A terminating pod of higher priority does not block. */
	pod = make_pod(&(struct pod_spec){.name = "p", .priority = LOW - 1, .nominated = "node1"});
	CHECK(sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, false, &reason));
	sx_pod_unref(pod);
	world_end(&w);
}

/* ---------- victims that are whole pod groups ----------
 *
 * The pod-group rows of upstream test/integration/scheduler/preemption
 * preemption_test.go TestPreemption (genericWorkloadEnabled: the victim
 * units of default_preemption.go SelectVictimsOnNode, DomainVictim and its
 * AffectedNodes in framework/preemption/types.go): a plain pod preempting
 * on node1 takes a PodGroup with disruptionMode All whole, its pods on
 * other nodes included. node1 has cpu 500m, memory 500, 32 pods; the
 * existing pods were bound by the scheduler there, here they are bound in
 * the cluster; the preemptor's nodeSelector node=node1 (node2) makes the
 * other node UnschedulableAndUnresolvable, so the dry run looks at its
 * node only. */

#define WORKLOAD_GATES "GenericWorkload=true"
#define IN_PG(g)       "\"schedulingGroup\":{\"podGroupName\":\"" g "\"},"

static void add_pod_group(struct sx_cache *cache, const char *name, int priority, const char *mode)
{
	char json[512];

	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
		 "\"spec\":{\"schedulingPolicy\":{\"basic\":{}},\"priority\":%d,"
		 "\"disruptionMode\":{\"%s\":{}}}}",
		 name, name, priority, mode);
	add_json(cache, json, "PodGroup");
}

static void world_start_release(struct world *w, const char *gates, int minor)
{
	memset(w, 0, sizeof(*w));
	w->cache = sx_cache_new();
	w->cfg = make_config_gates(FIT, NULL, gates, minor);
	w->prof = w->cfg ? w->cfg->profiles[0] : NULL;
}

static void world_start_gates(struct world *w, const char *gates)
{
	world_start_release(w, gates, SX_RELEASE_DEFAULT);
}

/* The dry run on one node only. */
static const char *dry_run_on(struct world *w, const char *node)
{
	uint32_t pot[1] = {(uint32_t)node_index(w->snap, node)};
	struct sx_preempt_candidate *c = NULL;
	uint32_t nc = 0;
	struct sx_status *st[8] = {0}, *err = NULL;

	CHECK_INT(sx_preempt_dry_run(w->prof, w->cs, w->pod, w->snap, pot, 1, 0, 1, NULL, &c, &nc,
				     st, &err),
		  0);
	const char *out = cands_str(c, nc);
	sx_preempt_candidates_free(c, nc);
	for (uint32_t i = 0; i < 8; i++)
		sx_status_free(st[i]);
	sx_status_free(err);
	return out;
}

/* "pod group victim across multiple nodes, pod-group-as-victim enabled" */
static void add_group_across_nodes(struct world *w)
{
	add_node(w->cache, "node1", 500, 32);
	add_node(w->cache, "node2", 500, 32);
	add_pod_group(w->cache, "pg1", LOW, "all");
	add_pod(w->cache, &(struct pod_spec){"pod-group-victim-1", "node1", LOW, 500,
					     .extra = IN_PG("pg1"), .mem = 200});
	add_pod(w->cache, &(struct pod_spec){"pod-group-victim-2", "node2", LOW, 500,
					     .extra = IN_PG("pg1"), .mem = 200});
}

static void test_group_victim_across_nodes(void)
{
	struct world w;
	sx_str nominated;

	world_start_gates(&w, WORKLOAD_GATES);
	add_group_across_nodes(&w);
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 500, .mem = 200});
	CHECK_STR(dry_run_on(&w, "node1"), "node1[pod-group-victim-1,pod-group-victim-2]/0");
	/* through DefaultPreemption's PostFilter: node2 fails NodeAffinity
	 * (UnschedulableAndUnresolvable), the applier gets both pods */
	struct sx_status *st = post_filter(&w, "UX", &nominated);
	CHECK(st == NULL);
	CHECK_STR(sx_str_get(nominated), "node1");
	CHECK_STR(applied, "[pod-group-victim-1,pod-group-victim-2]/0");
	sx_status_free(st);
	world_end(&w);
}

/* derived: without pod groups (GenericWorkload off, upstream's pgLister
 * nil: NewPodVictim of every pod) the same cluster loses one pod. */
static void test_group_victim_gate_off(void)
{
	struct world w;

	world_start_gates(&w, NULL);
	add_group_across_nodes(&w);
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 500, .mem = 200});
	CHECK_STR(dry_run_on(&w, "node1"), "node1[pod-group-victim-1]/0");
	world_end(&w);
}

/* derived: 1.36 (GenericWorkload on) judged every pod by its own
 * priority, one victim per pod (DomainVictims came with 1.37). */
static void test_group_victim_136(void)
{
	struct world w;

	world_start_release(&w, WORKLOAD_GATES, 36);
	add_group_across_nodes(&w);
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 500, .mem = 200});
	CHECK_STR(dry_run_on(&w, "node1"), "node1[pod-group-victim-1]/0");
	world_end(&w);
}

/* "pod group occupying a single node, pod-group-as-victim enabled" */
static void test_group_victim_single_node(void)
{
	struct world w;

	world_start_gates(&w, WORKLOAD_GATES);
	add_node(w.cache, "node1", 500, 32);
	add_pod_group(w.cache, "pg-single", LOW, "all");
	add_pod(w.cache, &(struct pod_spec){"pod-group-victim-1", "node1", LOW, 200,
					    .extra = IN_PG("pg-single"), .mem = 100});
	add_pod(w.cache, &(struct pod_spec){"pod-group-victim-2", "node1", LOW, 200,
					    .extra = IN_PG("pg-single"), .mem = 100});
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 300, .mem = 200});
	CHECK_STR(dry_run_on(&w, "node1"), "node1[pod-group-victim-1,pod-group-victim-2]/0");
	world_end(&w);
}

/* "multiple victim pod groups, only subset selected for preemption": the
 * medium group is reprieved whole, the low one goes whole. */
static void test_group_victims_subset(void)
{
	struct world w;

	world_start_gates(&w, WORKLOAD_GATES);
	add_node(w.cache, "node1", 500, 32);
	add_node(w.cache, "node2", 500, 32);
	add_pod_group(w.cache, "pg-low", LOW, "all");
	add_pod_group(w.cache, "pg-medium", MID, "all");
	add_pod(w.cache, &(struct pod_spec){"pg-low-node1", "node1", LOW, 200,
					    .extra = IN_PG("pg-low"), .mem = 100});
	add_pod(w.cache, &(struct pod_spec){"pg-low-node2", "node2", LOW, 200,
					    .extra = IN_PG("pg-low"), .mem = 100});
	add_pod(w.cache, &(struct pod_spec){"pg-medium-node1", "node1", MID, 200,
					    .extra = IN_PG("pg-medium"), .mem = 100});
	add_pod(w.cache, &(struct pod_spec){"pg-medium-node2", "node2", MID, 200,
					    .extra = IN_PG("pg-medium"), .mem = 100});
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 300, .mem = 100});
	CHECK_STR(dry_run_on(&w, "node1"), "node1[pg-low-node1,pg-low-node2]/0");
	world_end(&w);
}

/* "unsuccessful pod group preemption when freeing lower priority group is
 * insufficient": nothing is a candidate. */
static void test_group_victim_insufficient(void)
{
	struct world w;
	struct sx_victims v;

	world_start_gates(&w, WORKLOAD_GATES);
	add_node(w.cache, "node1", 500, 32);
	add_node(w.cache, "node2", 1000, 32);
	add_pod_group(w.cache, "pg-victim", LOW, "all");
	add_pod(w.cache, &(struct pod_spec){"unpreemptible-pod", "node2", HIGH, 500, .mem = 200});
	add_pod(w.cache, &(struct pod_spec){"pg-victim-1", "node2", LOW, 150,
					    .extra = IN_PG("pg-victim"), .mem = 100});
	add_pod(w.cache, &(struct pod_spec){"pg-victim-2", "node2", LOW, 150,
					    .extra = IN_PG("pg-victim"), .mem = 100});
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 600, .mem = 200});
	CHECK_STR(dry_run_on(&w, "node2"), "");
	struct sx_status *st = sx_preempt_select_victims_on_node(
		w.prof, w.cs, w.pod, w.snap->nodes[node_index(w.snap, "node2")], w.snap, NULL, 0,
		NULL, &v);
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
	CHECK_STR(msg_of(st), "Insufficient cpu");
	sx_status_free(st);
	world_end(&w);
}

/* "pod group victim across multiple nodes, DisruptionModeSingle enabled":
 * only the member on node1 goes. */
static void test_group_victim_disruption_single(void)
{
	struct world w;

	world_start_gates(&w, WORKLOAD_GATES);
	add_node(w.cache, "node1", 500, 32);
	add_node(w.cache, "node2", 500, 32);
	add_pod_group(w.cache, "pg-single-multi", LOW, "single");
	add_pod(w.cache, &(struct pod_spec){"pg-single-multi-node1", "node1", LOW, 500,
					    .extra = IN_PG("pg-single-multi"), .mem = 200});
	add_pod(w.cache, &(struct pod_spec){"pg-single-multi-node2", "node2", LOW, 500,
					    .extra = IN_PG("pg-single-multi"), .mem = 200});
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 500, .mem = 200});
	CHECK_STR(dry_run_on(&w, "node1"), "node1[pg-single-multi-node1]/0");
	world_end(&w);
}

/* derived (default_preemption.go isPreemptionAllowedAcrossAllVictimNodes,
 * GetPodPriority): a victim's priority is its PodGroup's, not the pod's:
 * a pod of priority LOW in a group of priority VERY_HIGH is no victim of
 * a HIGH pod. */
static void test_group_victim_group_priority(void)
{
	struct world w;
	struct sx_victims v;

	world_start_gates(&w, WORKLOAD_GATES);
	add_node(w.cache, "node1", 500, 32);
	add_pod_group(w.cache, "pg-vip", VERY_HIGH, "single");
	add_pod(w.cache, &(struct pod_spec){"vip-member", "node1", LOW, 500,
					    .extra = IN_PG("pg-vip"), .mem = 200});
	world_ready(&w, &(struct pod_spec){
				.name = "preemptor-pod", .priority = HIGH, .res = 500, .mem = 200});
	struct sx_status *st = sx_preempt_select_victims_on_node(
		w.prof, w.cs, w.pod, w.snap->nodes[0], w.snap, NULL, 0, NULL, &v);
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE_AND_UNRESOLVABLE);
	CHECK_STR(msg_of(st), "No preemption victims found for incoming pod");
	sx_status_free(st);
	world_end(&w);
}

/* derived (default_preemption.go PodEligibleToPreemptOthers on
 * NewPodVictim, as upstream's row "Preemptor group is not eligible if
 * nominated node has terminating pod belonging to a pod group of lower
 * priority" for a group preemptor): a terminating pod of priority HIGH in
 * a PodGroup of priority LOW blocks a MID preemptor with pod groups on,
 * not without. */
static void test_eligibility_group_priority(void)
{
	struct world w;
	const char *reason;

	world_start_gates(&w, WORKLOAD_GATES);
	add_node(w.cache, "node1", VERY_LARGE, 32);
	add_pod_group(w.cache, "victim-pg", LOW, "all");
	add_pod(w.cache, &(struct pod_spec){.name = "victim",
					    .node = "node1",
					    .priority = HIGH,
					    .extra = IN_PG("victim-pg"),
					    .deleting = true,
					    .preempted = true});
	w.snap = sx_cache_snapshot(w.cache);
	struct sx_pod *pod =
		make_pod(&(struct pod_spec){.name = "p", .priority = MID, .nominated = "node1"});
	CHECK(!sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, true, &reason));
	CHECK_STR(reason, "not eligible due to a terminating pod on the nominated node.");
	CHECK(sx_preempt_pod_eligible(pod, w.snap, SX_UNSCHEDULABLE, false, &reason));
	sx_pod_unref(pod);
	world_end(&w);
}

/* default_preemption.go PostFilter: with pod groups on, a member of a pod
 * group does not preempt pod by pod (its group's PodGroupPostFilter does);
 * without GenericWorkload it does (derived). */
static void test_group_member_not_eligible(void)
{
	struct world w;
	sx_str nominated;
	const char *member = "p-member";

	for (int on = 1; on >= 0; on--) {
		world_start_gates(&w, on ? WORKLOAD_GATES : NULL);
		add_node(w.cache, "node1", 500, 32);
		add_pod(w.cache, &(struct pod_spec){"low", "node1", LOW, 500});
		world_ready(&w, &(struct pod_spec){.name = member,
						   .priority = HIGH,
						   .res = 500,
						   .extra = IN_PG("pg")});
		struct sx_status *st = post_filter(&w, "U", &nominated);
		if (on) {
			CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
			CHECK_STR(msg_of(st), "preemption: not eligible due to workload aware "
					      "preemption enabled");
			CHECK_STR(applied, "");
		} else {
			CHECK(st == NULL);
			CHECK_STR(applied, "[low]/0");
		}
		sx_status_free(st);
		world_end(&w);
	}
}

/* ---------- the extender entry point ---------- */

static void test_select_victims_given_list(void)
{
	struct world w;
	struct sx_victims v;
	world_start(&w, FIT, NULL);
	add_node(w.cache, "node1", VERY_LARGE, 32);
	add_pod(w.cache, &(struct pod_spec){"a", "node1", LOW, SMALL, NULL, 1});
	add_pod(w.cache, &(struct pod_spec){"b", "node1", MID, LARGE, NULL, 2});
	add_pod(w.cache, &(struct pod_spec){"c", "node1", MID, SMALL, NULL, 3});
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = HIGH, .res = LARGE});
	const struct sx_node_info *ni = w.snap->nodes[node_index(w.snap, "node1")];
	char buf[128];

	/* All lower-priority pods: b (mid) must go; c then a are reprieved. */
	struct sx_status *st = sx_preempt_select_victims_on_node(w.prof, w.cs, w.pod, ni, w.snap,
								 NULL, 0, NULL, &v);
	CHECK(st == NULL);
	victims_str(&v, buf, sizeof(buf));
	CHECK_STR(buf, "[b]/0");
	sx_victims_free(&v);

	/* A proposal of {a, c} cannot make room: the node fails with the filter's reason. */
	struct sx_pod *a = make_pod(&(struct pod_spec){"a", "node1"});
	struct sx_pod *c = make_pod(&(struct pod_spec){"c", "node1"});
	const struct sx_pod *given[] = {a, c};
	st = sx_preempt_select_victims_on_node(w.prof, w.cs, w.pod, ni, w.snap, given, 2, NULL, &v);
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
	CHECK_STR(msg_of(st), "Insufficient cpu, Insufficient memory");
	CHECK_INT(v.n, 0);
	sx_status_free(st);

	/* No pod of lower priority. */
	world_ready(&w, &(struct pod_spec){.name = "p", .priority = LOW, .res = LARGE});
	st = sx_preempt_select_victims_on_node(w.prof, w.cs, w.pod, ni, w.snap, NULL, 0, NULL, &v);
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE_AND_UNRESOLVABLE);
	CHECK_STR(msg_of(st), "No preemption victims found for incoming pod");
	sx_status_free(st);
	sx_pod_unref(a);
	sx_pod_unref(c);
	world_end(&w);
}

/* ---------- args ---------- */

static void check_args(const char *json, int rc, const char *msg)
{
	struct sx_preempt_args a;
	struct sx_error err = {0};
	cJSON *j = json ? cJSON_Parse(json) : NULL;
	CHECK_INT(sx_preempt_args_parse(j, &a, &err), rc);
	if (msg)
		CHECK_STR(err.msg, msg);
	cJSON_Delete(j);
}

static void test_args(void)
{
	struct sx_preempt_args a;
	CHECK_INT(sx_preempt_args_parse(NULL, &a, NULL), 0);
	CHECK_INT(a.min_candidate_nodes_percentage, 10);
	CHECK_INT(a.min_candidate_nodes_absolute, 100);
	CHECK_INT(sx_preempt_num_candidates(&a, 1000), 100);
	CHECK_INT(sx_preempt_num_candidates(&a, 5000), 500);
	CHECK_INT(sx_preempt_num_candidates(&a, 50), 50);
	check_args("{\"minCandidateNodesPercentage\":50,\"minCandidateNodesAbsolute\":0}", 0, NULL);
	check_args("{\"minCandidateNodesPercentage\":-1}", SX_EINVAL,
		   "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]");
	check_args("{\"minCandidateNodesPercentage\":101}", SX_EINVAL,
		   "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]");
	check_args("{\"minCandidateNodesAbsolute\":-1}", SX_EINVAL,
		   "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)");
	check_args(
		"{\"minCandidateNodesPercentage\":0,\"minCandidateNodesAbsolute\":0}", SX_EINVAL,
		"[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time "
		"as minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: "
		"cannot be zero at the same time as minCandidateNodesPercentage]");
	check_args("{\"minCandidateNodesAbsolute\":\"x\"}", SX_EINVAL,
		   "minCandidateNodesAbsolute: Invalid value: must be a 32-bit integer");

	/* The configuration loader rejects bad args through the plugin. */
	struct sx_error err = {0};
	const char *cfg = "{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\",\"kind\":"
			  "\"KubeSchedulerConfiguration\",\"profiles\":[{\"pluginConfig\":[{"
			  "\"name\":\"DefaultPreemption\",\"args\":{\"minCandidateNodesAbsolute\":"
			  "-1}}]}]}";
	CHECK(sx_config_parse(cfg, strlen(cfg), &err) == NULL);
	CHECK(strstr(err.msg, "minCandidateNodesAbsolute: Invalid value: -1") != NULL);
	/* ... and the default profile has the plugin at PostFilter. */
	struct sx_config *def = sx_config_default(&err);
	CHECK(def != NULL);
	if (def)
		CHECK(sx_profile_has(def->profiles[0], SX_PT_POST_FILTER, "DefaultPreemption"));
	sx_config_free(def);
}

SX_TESTS(SX_TEST(test_post_filter_higher_priority), SX_TEST(test_post_filter_tied_priority),
	 SX_TEST(test_post_filter_respects_statuses), SX_TEST(test_post_filter_one_node),
	 SX_TEST(test_post_filter_min_highest_priority_with_pdbs),
	 SX_TEST(test_post_filter_not_enough_resources), SX_TEST(test_post_filter_mixed_reasons),
	 SX_TEST(test_post_filter_mixed_unresolvable), SX_TEST(test_post_filter_not_eligible),
	 SX_TEST(test_post_filter_extension_errors), SX_TEST(test_dry_run_both_nodes),
	 SX_TEST(test_dry_run_lower_priority_small_stays), SX_TEST(test_dry_run_mixed_priorities),
	 SX_TEST(test_dry_run_later_start_time), SX_TEST(test_dry_run_anti_affinity),
	 SX_TEST(test_dry_run_topology_spread), SX_TEST(test_dry_run_same_pdb),
	 SX_TEST(test_dry_run_args_limit), SX_TEST(test_dry_run_looks_past_pdb_violations),
	 SX_TEST(test_select_best_candidate), SX_TEST(test_pick_one_empty),
	 SX_TEST(test_eligibility), SX_TEST(test_select_victims_given_list), SX_TEST(test_args),
	 SX_TEST(test_group_victim_across_nodes), SX_TEST(test_group_victim_gate_off),
	 SX_TEST(test_group_victim_136), SX_TEST(test_group_victim_single_node),
	 SX_TEST(test_group_victims_subset), SX_TEST(test_group_victim_insufficient),
	 SX_TEST(test_group_victim_disruption_single), SX_TEST(test_group_victim_group_priority),
	 SX_TEST(test_eligibility_group_priority), SX_TEST(test_group_member_not_eligible))
