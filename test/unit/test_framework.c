/* Whole-cycle tests of the runtime with test plugins: FitError wording,
 * numFeasibleNodesToFind, rotating start, tie-breaking, nominated pods,
 * PreFilterResult, Permit wait/allow/reject/timeout, Unreserve order. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "../../plugins/slots.h"
#include "schedext/cache.h"
#include "schedext/decode.h"
#include "schedext/framework.h"
#include "schedext/pool.h"
#include "schedext/selector.h"
#include "schedext/binding_cycle.h"
#include "schedext/registry.h"

/* ---------- test plugins ---------- */

static struct sx_status *false_filter(void *self, const struct sx_cycle_state *cs,
				      const struct sx_pod *pod, const struct sx_node_info *ni)
{
	return sx_status_new(SX_UNSCHEDULABLE, "Node(s) failed Filter plugin %s",
			     (const char *)self);
}

static struct sx_status *true_filter(void *self, const struct sx_cycle_state *cs,
				     const struct sx_pod *pod, const struct sx_node_info *ni)
{
	return NULL;
}

/* Fails nodes whose name ends in an odd digit, with a reason per parity. */
static struct sx_status *odd_filter(void *self, const struct sx_cycle_state *cs,
				    const struct sx_pod *pod, const struct sx_node_info *ni)
{
	const char *name = sx_str_get(ni->name);
	int last = name[strlen(name) - 1] - '0';
	if (last % 2)
		return sx_status_new(SX_UNSCHEDULABLE, "Insufficient cpu");
	return NULL;
}

/* Fails nodes whose number is a multiple of 3; counts its calls. */
static atomic_uint third_calls, pass_calls;
static struct sx_status *third_filter(void *self, const struct sx_cycle_state *cs,
				      const struct sx_pod *pod, const struct sx_node_info *ni)
{
	const char *name = sx_str_get(ni->name);
	atomic_fetch_add(&third_calls, 1);
	if (atoi(strrchr(name, '-') + 1) % 3 == 0)
		return sx_status_new(SX_UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had a third");
	return NULL;
}

static struct sx_status *counting_filter(void *self, const struct sx_cycle_state *cs,
					 const struct sx_pod *pod, const struct sx_node_info *ni)
{
	atomic_fetch_add(&pass_calls, 1);
	return NULL;
}

/* Rejects a node that holds a pod labelled blocker=true. */
static struct sx_status *blocker_filter(void *self, const struct sx_cycle_state *cs,
					const struct sx_pod *pod, const struct sx_node_info *ni)
{
	sx_str v;
	for (uint32_t i = 0; i < ni->npods; i++)
		if (sx_labels_get(&ni->pods[i]->meta.labels, sx_intern("blocker"), &v))
			return sx_status_new(SX_UNSCHEDULABLE, "blocked");
	return NULL;
}

static struct sx_status *false_pre_filter(void *self, struct sx_cycle_state *cs,
					  const struct sx_pod *pod, struct sx_node_set **result)
{
	return sx_status_new(SX_UNSCHEDULABLE, "Node(s) failed PreFilter plugin FalsePreFilter");
}

/* Narrows the nodes to node-1 and node-2. */
static struct sx_status *narrow_pre_filter(void *self, struct sx_cycle_state *cs,
					   const struct sx_pod *pod, struct sx_node_set **result)
{
	struct sx_node_set *set = calloc(1, sizeof(*set));
	set->names = calloc(2, sizeof(sx_str));
	set->names[set->n++] = sx_intern("node-1");
	set->names[set->n++] = sx_intern("node-2");
	*result = set;
	return NULL;
}

static struct sx_status *empty_pre_filter(void *self, struct sx_cycle_state *cs,
					  const struct sx_pod *pod, struct sx_node_set **result)
{
	*result = calloc(1, sizeof(**result));
	return NULL;
}

static struct sx_status *zero_score(void *self, const struct sx_cycle_state *cs,
				    const struct sx_pod *pod, const struct sx_node_info *ni,
				    int64_t *score)
{
	*score = 0;
	return NULL;
}

static struct sx_status *bad_score(void *self, const struct sx_cycle_state *cs,
				   const struct sx_pod *pod, const struct sx_node_info *ni,
				   int64_t *score)
{
	*score = 101;
	return NULL;
}

static char order_log[256];

static struct sx_status *reserve_log(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, sx_str node)
{
	strcat(order_log, "R");
	strcat(order_log, (const char *)self);
	return strcmp((const char *)self, "3") == 0 ? sx_status_new(SX_UNSCHEDULABLE, "no room")
						    : NULL;
}

static void unreserve_log(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
			  sx_str node)
{
	strcat(order_log, "U");
	strcat(order_log, (const char *)self);
}

static struct sx_status *permit_wait(void *self, struct sx_cycle_state *cs,
				     const struct sx_pod *pod, sx_str node, uint64_t *timeout_ms)
{
	*timeout_ms = (uint64_t)(uintptr_t)self;
	return sx_status_new(SX_WAIT, NULL);
}

static struct sx_status *bind_skip(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				   sx_str node)
{
	strcat(order_log, "S");
	return sx_status_new(SX_SKIP, NULL);
}

static struct sx_status *bind_ok(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				 sx_str node)
{
	strcat(order_log, "B");
	return NULL;
}

static struct sx_status *bind_fail(void *self, struct sx_cycle_state *cs, const struct sx_pod *pod,
				   sx_str node)
{
	return sx_status_new(SX_ERROR, "conflict");
}

static const struct sx_plugin p_bind_skip = {.name = "Skipper", .bind = bind_skip};
static const struct sx_plugin p_bind_ok = {.name = "Binder", .bind = bind_ok};
static const struct sx_plugin p_bind_fail = {.name = "Failer", .bind = bind_fail};

static const struct sx_plugin p_false1 = {.name = "FalseFilter-1", .filter = false_filter};
static const struct sx_plugin p_false2 = {.name = "FalseFilter-2", .filter = false_filter};
static const struct sx_plugin p_true = {.name = "TrueFilter", .filter = true_filter};
static const struct sx_plugin p_odd = {.name = "OddFilter", .filter = odd_filter};
static const struct sx_plugin p_blocker = {.name = "Blocker", .filter = blocker_filter};
static const struct sx_plugin p_third = {.name = "ThirdFilter", .filter = third_filter};
static const struct sx_plugin p_counting = {.name = "Counting", .filter = counting_filter};
static const struct sx_plugin p_false_pre = {.name = "FalsePreFilter",
					     .pre_filter = false_pre_filter};
static const struct sx_plugin p_narrow = {.name = "Narrow", .pre_filter = narrow_pre_filter};
static const struct sx_plugin p_empty = {.name = "Empty", .pre_filter = empty_pre_filter};
static const struct sx_plugin p_zero = {.name = "ZeroScore", .score = zero_score};
static const struct sx_plugin p_bad = {.name = "BadScore", .score = bad_score};
static const struct sx_plugin p_reserve = {
	.name = "Reserver", .reserve = reserve_log, .unreserve = unreserve_log};
static const struct sx_plugin p_permit = {.name = "Waiter", .permit = permit_wait};

/* ---------- fixtures ---------- */

struct profile_builder {
	struct sx_profile prof;
	struct sx_enabled items[SX_PT_COUNT][8];
	int next_slot;
};

static void add(struct profile_builder *b, enum sx_point pt, const struct sx_plugin *p, void *self)
{
	if (!b->next_slot)
		b->next_slot = sx_plugin_count;
	b->items[pt][b->prof.n[pt]] = (struct sx_enabled){p, b->next_slot++, self, 1};
	b->prof.points[pt] = b->items[pt];
	b->prof.n[pt]++;
	b->prof.percentage_of_nodes_to_score = -1;
	b->prof.scheduler_name = "test";
}

static struct sx_pod *make_pod(const char *name, int priority, const char *labels)
{
	char json[1024];
	struct sx_error err = {0};
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
		 "\"labels\":{%s}},\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\"}]}}",
		 name, name, labels ? labels : "", priority);
	cJSON *j = cJSON_Parse(json);
	struct sx_pod *pod = sx_decode_pod(j, &err);
	cJSON_Delete(j);
	CHECK(pod != NULL);
	return pod;
}

/* A cache with nodes node-0 .. node-(n-1). */
static struct sx_cache *make_cluster(int n)
{
	struct sx_cache *cache = sx_cache_new();
	for (int i = 0; i < n; i++) {
		char json[512];
		struct sx_error err = {0};
		snprintf(json, sizeof(json),
			 "{\"metadata\":{\"name\":\"node-%d\",\"labels\":{\"kubernetes.io/"
			 "hostname\":"
			 "\"node-%d\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":"
			 "\"8Gi\","
			 "\"pods\":\"110\"}}}",
			 i, i);
		cJSON *j = cJSON_Parse(json);
		struct sx_object obj = {SX_KIND_NODE, sx_decode_node(j, &err)};
		cJSON_Delete(j);
		CHECK(obj.obj != NULL);
		CHECK_INT(sx_cache_upsert(cache, &obj), 0);
	}
	return cache;
}

static struct sx_cycle_result run(const struct sx_profile *prof, struct sx_cache *cache,
				  const struct sx_pod *pod, struct sx_cycle_opts *opts)
{
	struct sx_cycle_result res;
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	opts->snap = snap;
	if (!opts->percentage)
		opts->percentage = -1;
	CHECK_INT(sx_schedule(prof, pod, opts, &res), 0);
	sx_snapshot_unref(snap); /* the cache keeps the snapshot alive */
	return res;
}

/* ---------- tests ---------- */

static void test_num_feasible_nodes(void)
{
	CHECK_INT(sx_num_feasible_nodes_to_find(0, 10), 10);
	CHECK_INT(sx_num_feasible_nodes_to_find(0, 99), 99);
	CHECK_INT(sx_num_feasible_nodes_to_find(0, 1000), 420);
	CHECK_INT(sx_num_feasible_nodes_to_find(0, 5000), 500);
	CHECK_INT(sx_num_feasible_nodes_to_find(0, 6000), 300);
	CHECK_INT(sx_num_feasible_nodes_to_find(40, 6000), 2400);
	CHECK_INT(sx_num_feasible_nodes_to_find(5, 150), 100);
	CHECK_INT(sx_num_feasible_nodes_to_find(100, 6000), 6000);
}

static void test_fit_error_all_fail(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_false1, "FalseFilter-1");
	struct sx_cache *cache = make_cluster(3);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(res.selected, -1);
	CHECK_STR(res.message,
		  "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1.");
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_fit_error_sorted_as_strings(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_odd, NULL);
	add(&b, SX_PT_FILTER, &p_false2, "FalseFilter-2");
	struct sx_cache *cache = make_cluster(22);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	/* 11 odd nodes fail OddFilter, 11 even ones FalseFilter-2: "11 I" < "11 N". */
	CHECK_STR(res.message, "0/22 nodes are available: 11 Insufficient cpu, 11 Node(s) failed "
			       "Filter plugin FalseFilter-2.");
	sx_cycle_result_free(&res);
	sx_cache_free(cache);

	cache = make_cluster(12);
	struct profile_builder b2 = {0};
	add(&b2, SX_PT_FILTER, &p_odd, NULL);
	add(&b2, SX_PT_FILTER, &p_false2, "Insufficient memory");
	res = run(&b2.prof, cache, pod, &opts);
	CHECK(res.message && strstr(res.message, "6 Insufficient cpu, 6 Node(s) failed"));
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_fit_error_pre_filter(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_PRE_FILTER, &p_false_pre, NULL);
	add(&b, SX_PT_FILTER, &p_true, NULL);
	struct sx_cache *cache = make_cluster(3);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	CHECK(res.pre_filter != NULL);
	CHECK_STR(res.pre_filter->plugin, "FalsePreFilter");
	CHECK_STR(res.message,
		  "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.");
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_pre_filter_result(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_PRE_FILTER, &p_narrow, NULL);
	add(&b, SX_PT_FILTER, &p_odd, NULL);
	struct sx_cache *cache = make_cluster(4);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	/* node-1 fails OddFilter, node-2 passes; node-0 and node-3 are absent. */
	CHECK_INT(res.nfeasible, 1);
	CHECK(res.selected >= 0);
	sx_cycle_result_free(&res);

	struct profile_builder b2 = {0};
	add(&b2, SX_PT_PRE_FILTER, &p_narrow, NULL);
	add(&b2, SX_PT_FILTER, &p_false1, "FalseFilter-1");
	res = run(&b2.prof, cache, pod, &opts);
	CHECK_STR(res.message, "0/4 nodes are available: 2 Node(s) failed Filter plugin "
			       "FalseFilter-1, 2 node(s) didn't satisfy plugin(s) [Narrow].");
	sx_cycle_result_free(&res);

	struct profile_builder b3 = {0};
	add(&b3, SX_PT_PRE_FILTER, &p_empty, NULL);
	add(&b3, SX_PT_FILTER, &p_true, NULL);
	res = run(&b3.prof, cache, pod, &opts);
	CHECK(res.pre_filter != NULL);
	CHECK_STR(res.message, "0/4 nodes are available: node(s) didn't satisfy plugin Empty.");
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_rotating_start_and_early_stop(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_true, NULL);
	add(&b, SX_PT_SCORE, &p_zero, NULL);
	struct sx_cache *cache = make_cluster(200);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	uint32_t next = 0;
	struct sx_cycle_opts opts = {.next_start_index = &next};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	/* 200 nodes: 50 - 200/125 = 49% = 98 -> at least 100 nodes. */
	CHECK_INT(res.nfeasible, 100);
	CHECK_INT(next, 100);
	sx_cycle_result_free(&res);
	res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(next, 0);
	sx_cycle_result_free(&res);
	/* Without score plugins only one feasible node is needed. */
	struct profile_builder b2 = {0};
	add(&b2, SX_PT_FILTER, &p_true, NULL);
	next = 7;
	res = run(&b2.prof, cache, pod, &opts);
	CHECK_INT(res.nfeasible, 1);
	CHECK_INT(next, 8);
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_parallel_filter_matches_sequential(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_odd, NULL);
	struct sx_cache *cache = make_cluster(500);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_pool *pool = sx_pool_new(4);
	struct sx_cycle_opts opts = {.percentage = 100, .pool = pool, .mode = SX_CYCLE_FILTER_ONLY};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(res.nfeasible, 250);
	uint32_t failed = 0;
	for (uint32_t i = 0; i < res.num_all_nodes; i++)
		failed += res.statuses[i] != NULL;
	CHECK_INT(failed, 250);
	sx_cycle_result_free(&res);
	sx_pool_free(pool);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

/* Filter runs plugin by plugin over batches of nodes: every node's
 * verdict is still the first failing plugin in profile order, and each
 * plugin runs exactly on the nodes that passed the ones before it (37
 * nodes: not a whole number of batches), alone or with 4 workers. */
static void test_batched_filter_verdicts(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_odd, NULL);
	add(&b, SX_PT_FILTER, &p_third, NULL);
	add(&b, SX_PT_FILTER, &p_counting, NULL);
	struct sx_cache *cache = make_cluster(37);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	for (int workers = 0; workers <= 4; workers += 4) {
		struct sx_pool *pool = workers ? sx_pool_new((unsigned)workers) : NULL;
		struct sx_cycle_opts opts = {
			.percentage = 100, .pool = pool, .mode = SX_CYCLE_FILTER_ONLY};
		atomic_store(&third_calls, 0);
		atomic_store(&pass_calls, 0);
		struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
		CHECK_INT(res.nfeasible, 12); /* even, not a multiple of 3: 2, 4, 8, ..., 34 */
		CHECK_INT(atomic_load(&third_calls), 19); /* the even ones */
		CHECK_INT(atomic_load(&pass_calls), 12);
		for (uint32_t i = 0; i < res.num_all_nodes; i++) {
			const struct sx_status *st = res.statuses[i];
			int k = atoi(strrchr(sx_str_get(res.state->snap->nodes[i]->name), '-') + 1);
			if (k % 2) {
				CHECK_STR(st ? st->plugin : "", "OddFilter");
				CHECK_STR(st && st->nreasons ? st->reasons[0] : "",
					  "Insufficient cpu");
			} else if (k % 3 == 0) {
				CHECK_STR(st ? st->plugin : "", "ThirdFilter");
				CHECK_INT(st ? (int)st->code : -1,
					  SX_UNSCHEDULABLE_AND_UNRESOLVABLE);
			} else {
				CHECK(st == NULL);
			}
		}
		sx_cycle_result_free(&res);
		sx_pool_free(pool);
	}
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

/* One thread keeps exactly the first `want` passing nodes in order: a
 * batch's nodes past the quota count as never filtered. 200 nodes want
 * 100 feasible; the even ones pass, so node-198 (position 198) is the
 * 100th and node-199, in the same batch, was not evaluated. */
static void test_batched_filter_quota(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_odd, NULL);
	add(&b, SX_PT_SCORE, &p_zero, NULL);
	struct sx_cache *cache = make_cluster(200);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	uint32_t next = 0, evaluated = 0, failed = 0;
	struct sx_cycle_opts opts = {.next_start_index = &next};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(res.nfeasible, 100);
	CHECK_INT(next, 199);
	for (uint32_t i = 0; i < res.num_all_nodes; i++) {
		evaluated += res.evaluated[i];
		failed += res.statuses[i] != NULL;
	}
	CHECK_INT(evaluated, 199);
	CHECK_INT(failed, 99);
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_tie_breaking(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_true, NULL);
	add(&b, SX_PT_SCORE, &p_zero, NULL);
	struct sx_cache *cache = make_cluster(10);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	bool seen[10] = {false};
	int distinct = 0;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		uint64_t rng = seed;
		struct sx_cycle_opts opts = {.rng = &rng};
		struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
		CHECK(res.selected >= 0 && res.selected < 10);
		if (res.selected >= 0 && !seen[res.selected]) {
			seen[res.selected] = true;
			distinct++;
		}
		sx_cycle_result_free(&res);
	}
	CHECK_INT(distinct, 10); /* every tied node gets picked for some seed */
	/* The same seed gives the same choice. */
	uint64_t r1 = 42, r2 = 42;
	struct sx_cycle_opts o1 = {.rng = &r1}, o2 = {.rng = &r2};
	struct sx_cycle_result a = run(&b.prof, cache, pod, &o1);
	struct sx_cycle_result c = run(&b.prof, cache, pod, &o2);
	CHECK_INT(a.selected, c.selected);
	sx_cycle_result_free(&a);
	sx_cycle_result_free(&c);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

static void test_invalid_score(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_true, NULL);
	add(&b, SX_PT_SCORE, &p_bad, NULL);
	struct sx_cache *cache = make_cluster(2);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_cycle_opts opts = {0};
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	CHECK(res.error != NULL);
	char msg[512];
	CHECK_STR(sx_status_message(res.error, msg, sizeof(msg)),
		  "plugin \"BadScore\" returns an invalid score 101, it should in the range of [0, "
		  "100] after normalizing");
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

/* Nominator returning one pod for node-0. */
static const struct sx_pod *nominated_pod;
static uint32_t nominated_for(void *ctx, sx_str node, const struct sx_pod **out, uint32_t max)
{
	if (node != sx_intern("node-0") || max == 0)
		return 0;
	out[0] = nominated_pod;
	return 1;
}

static void test_nominated_pods(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_blocker, NULL);
	struct sx_cache *cache = make_cluster(1);
	struct sx_pod *pod = make_pod("p", 10, NULL);
	struct sx_nominator nom = {.pods_for_node = nominated_for};
	struct sx_cycle_opts opts = {.nominator = &nom};
	/* A higher-priority blocker nominated to node-0 counts as present. */
	nominated_pod = make_pod("high", 100, "\"blocker\":\"true\"");
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(res.selected, -1);
	CHECK_STR(res.message, "0/1 nodes are available: 1 blocked.");
	sx_cycle_result_free(&res);
	sx_pod_unref(nominated_pod);
	/* A lower-priority one does not. */
	nominated_pod = make_pod("low", 1, "\"blocker\":\"true\"");
	res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(res.selected, 0);
	sx_cycle_result_free(&res);
	sx_pod_unref(nominated_pod);
	/* The pod itself, nominated, is not counted twice. */
	nominated_pod = pod;
	res = run(&b.prof, cache, pod, &opts);
	CHECK_INT(res.selected, 0);
	sx_cycle_result_free(&res);
	sx_pod_unref(pod);
	sx_cache_free(cache);
}

/* A status that cannot be allocated reads as Error, never as Success
 * (NULL): the nominated-pods pass of a node whose nominated blocker
 * rejects it must not let the node through when that rejection's status
 * cannot be made. */
static void test_status_alloc_failure_is_error(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_FILTER, &p_blocker, NULL);
	struct sx_cache *cache = make_cluster(1);
	struct sx_snapshot *snap = sx_cache_snapshot(cache);
	struct sx_pod *pod = make_pod("p", 10, NULL);
	struct sx_nominator nom = {.pods_for_node = nominated_for};
	struct sx_cycle_state *cs = sx_cycle_state_new(snap);
	struct sx_status *st;

	nominated_pod = make_pod("high", 100, "\"blocker\":\"true\"");
	sx_status_fail_next_allocs(1);
	st = sx_run_filters_with_nominated(&b.prof, cs, pod, snap->nodes[0], &nom);
	sx_status_fail_next_allocs(0);
	CHECK(st != NULL);
	CHECK_INT(sx_status_code(st), SX_ERROR);
	CHECK_STR(st->reasons[0], "running \"Blocker\" filter plugin: out of memory");
	sx_status_free(st);
	sx_status_free(sx_status_oom()); /* the shared status survives a free */
	CHECK_INT(sx_status_code(sx_status_oom()), SX_ERROR);

	/* The whole cycle: the node is not selected, the cycle errs. */
	struct sx_cycle_opts opts = {.nominator = &nom};
	sx_status_fail_next_allocs(1);
	struct sx_cycle_result res = run(&b.prof, cache, pod, &opts);
	sx_status_fail_next_allocs(0);
	CHECK_INT(res.selected, -1);
	CHECK(res.error != NULL);
	CHECK_INT(sx_status_code(res.error), SX_ERROR);
	sx_cycle_result_free(&res);

	/* Clones and errors made from the shared status stay Errors. */
	CHECK(sx_status_clone(sx_status_oom()) == sx_status_oom());
	st = sx_status_new(SX_UNSCHEDULABLE, "x");
	sx_status_fail_next_allocs(1);
	st = sx_status_as_error(st, "%s: %s", "P");
	sx_status_fail_next_allocs(0);
	CHECK(st == sx_status_oom());
	CHECK(st->plugin == NULL); /* never written */

	sx_cycle_state_free(&b.prof, cs);
	sx_pod_unref(nominated_pod);
	sx_pod_unref(pod);
	sx_snapshot_unref(snap);
	sx_cache_free(cache);
}

static void test_unreserve_reverse_order(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_RESERVE, &p_reserve, "1");
	add(&b, SX_PT_RESERVE, &p_reserve, "2");
	add(&b, SX_PT_RESERVE, &p_reserve, "3");
	add(&b, SX_PT_RESERVE, &p_reserve, "4");
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_cycle_state *cs = sx_cycle_state_new(NULL);
	order_log[0] = 0;
	struct sx_status *st = sx_run_reserve(&b.prof, cs, pod, sx_intern("node-0"));
	CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
	CHECK_STR(st ? st->plugin : NULL, "Reserver");
	sx_run_unreserve(&b.prof, cs, pod, sx_intern("node-0"));
	/* Reserve stops at the third; Unreserve runs for all four, in reverse. */
	CHECK_STR(order_log, "R1R2R3U4U3U2U1");
	sx_status_free(st);
	sx_cycle_state_free(&b.prof, cs);
	sx_pod_unref(pod);
}

static void test_bind_order(void)
{
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct profile_builder b = {0};
	char msg[256];
	add(&b, SX_PT_BIND, &p_bind_skip, NULL);
	add(&b, SX_PT_BIND, &p_bind_ok, NULL);
	add(&b, SX_PT_BIND, &p_bind_skip, NULL);
	order_log[0] = 0;
	CHECK(sx_run_bind(&b.prof, NULL, pod, sx_intern("n")) == NULL);
	CHECK_STR(order_log, "SB"); /* the first binder that binds is final */
	struct profile_builder b2 = {0};
	add(&b2, SX_PT_BIND, &p_bind_skip, NULL);
	struct sx_status *st = sx_run_bind(&b2.prof, NULL, pod, sx_intern("n"));
	CHECK_INT(sx_status_code(st), SX_SKIP);
	sx_status_free(st);
	struct profile_builder b3 = {0};
	add(&b3, SX_PT_BIND, &p_bind_fail, NULL);
	st = sx_run_bind(&b3.prof, NULL, pod, sx_intern("n"));
	CHECK_INT(sx_status_code(st), SX_ERROR);
	CHECK_STR(sx_status_message(st, msg, sizeof(msg)),
		  "running Bind plugin \"Failer\": conflict");
	sx_status_free(st);
	sx_pod_unref(pod);
}

struct allow_arg {
	struct sx_waiting_pod *wp;
	bool reject;
};

static void *allow_later(void *arg)
{
	struct allow_arg *a = arg;
	usleep(20000);
	if (a->reject)
		sx_waiting_pod_reject(a->wp, "Waiter", "denied by test");
	else
		sx_waiting_pod_allow(a->wp, "Waiter");
	return NULL;
}

static void test_permit_wait_allow_reject_timeout(void)
{
	struct profile_builder b = {0};
	add(&b, SX_PT_PERMIT, &p_permit, (void *)(uintptr_t)5000);
	struct sx_pod *pod = make_pod("p", 0, NULL);
	struct sx_waiting_pod *wp = NULL;
	char msg[256];
	for (int reject = 0; reject < 2; reject++) {
		struct sx_status *st = sx_run_permit(&b.prof, NULL, pod, sx_intern("n"), &wp);
		CHECK_INT(sx_status_code(st), SX_WAIT);
		CHECK_STR(sx_status_message(st, msg, sizeof(msg)),
			  "one or more plugins asked to wait and no plugin rejected pod \"p\"");
		sx_status_free(st);
		CHECK(wp != NULL);
		struct allow_arg a = {wp, reject};
		pthread_t t;
		pthread_create(&t, NULL, allow_later, &a);
		st = sx_waiting_pod_wait(wp);
		pthread_join(t, NULL);
		if (reject) {
			CHECK_INT(sx_status_code(st), SX_UNSCHEDULABLE);
			CHECK_STR(sx_status_message(st, msg, sizeof(msg)), "denied by test");
			CHECK_STR(st ? st->plugin : NULL, "Waiter");
		} else {
			CHECK(st == NULL);
		}
		sx_status_free(st);
		sx_waiting_pod_free(wp);
	}
	/* Timeout: 50ms. */
	struct profile_builder b2 = {0};
	add(&b2, SX_PT_PERMIT, &p_permit, (void *)(uintptr_t)50);
	struct sx_status *st = sx_run_permit(&b2.prof, NULL, pod, sx_intern("n"), &wp);
	sx_status_free(st);
	st = sx_waiting_pod_wait(wp);
	CHECK_STR(sx_status_message(st, msg, sizeof(msg)),
		  "rejected due to timeout after waiting 50ms at plugin Waiter");
	sx_status_free(st);
	sx_waiting_pod_free(wp);
	sx_pod_unref(pod);
}

static void test_default_config_profile(void)
{
	struct sx_error err = {0};
	struct sx_config *cfg = sx_config_default(&err);
	CHECK(cfg != NULL);
	const struct sx_profile *p = sx_config_profile(cfg, NULL);
	CHECK_STR(p->scheduler_name, "default-scheduler");
	CHECK_INT(cfg->parallelism, 16);
	CHECK(sx_profile_has(p, SX_PT_FILTER, "TaintToleration"));
	CHECK(sx_profile_has(p, SX_PT_QUEUE_SORT, "PrioritySort"));
	CHECK(sx_profile_has(p, SX_PT_BIND, "DefaultBinder"));
	CHECK(sx_profile_has(p, SX_PT_PRE_ENQUEUE, "SchedulingGates"));
	for (unsigned i = 0; i < p->n[SX_PT_SCORE]; i++) {
		const struct sx_enabled *e = &p->points[SX_PT_SCORE][i];
		if (!strcmp(e->plugin->name, "TaintToleration"))
			CHECK_INT(e->weight, 3);
		if (!strcmp(e->plugin->name, "NodeAffinity") ||
		    !strcmp(e->plugin->name, "InterPodAffinity") ||
		    !strcmp(e->plugin->name, "PodTopologySpread"))
			CHECK_INT(e->weight, 2);
		if (!strcmp(e->plugin->name, "ImageLocality"))
			CHECK_INT(e->weight, 1);
	}
	/* Filter order is the multiPoint order. */
	CHECK_STR(p->points[SX_PT_FILTER][0].plugin->name, "NodeUnschedulable");
	sx_config_free(cfg);
}

static struct sx_config *parse(const char *yaml, struct sx_error *err)
{
	memset(err, 0, sizeof(*err));
	return sx_config_parse(yaml, strlen(yaml), err);
}

static void test_config_profiles(void)
{
	struct sx_error err;
	struct sx_config *cfg = parse("apiVersion: kubescheduler.config.k8s.io/v1\n"
				      "kind: KubeSchedulerConfiguration\n"
				      "percentageOfNodesToScore: 30\n"
				      "leaderElection: {leaderElect: false}\n"
				      "profiles:\n"
				      "- schedulerName: only-taints\n"
				      "  plugins:\n"
				      "    multiPoint:\n"
				      "      enabled: [{name: TaintToleration, weight: 7}]\n"
				      "      disabled: [{name: '*'}]\n"
				      "- schedulerName: no-image\n"
				      "  plugins:\n"
				      "    score:\n"
				      "      disabled: [{name: ImageLocality}]\n"
				      "      enabled: [{name: NodeResourcesFit, weight: 5}]\n",
				      &err);
	CHECK(cfg != NULL);
	if (!cfg) {
		fprintf(stderr, "%s at %s\n", err.msg, err.path);
		return;
	}
	CHECK_INT(cfg->percentage_of_nodes_to_score, 30);
	const struct sx_profile *p = sx_config_profile(cfg, "only-taints");
	CHECK_INT(p->n[SX_PT_FILTER], 1);
	CHECK_INT(p->n[SX_PT_SCORE], 1);
	CHECK_INT(p->points[SX_PT_SCORE][0].weight, 7);
	CHECK(sx_profile_has(p, SX_PT_QUEUE_SORT, "PrioritySort"));
	p = sx_config_profile(cfg, "no-image");
	CHECK(!sx_profile_has(p, SX_PT_SCORE, "ImageLocality"));
	/* NodeResourcesFit, overridden at score, comes first with its weight. */
	CHECK_STR(p->points[SX_PT_SCORE][0].plugin->name, "NodeResourcesFit");
	CHECK_INT(p->points[SX_PT_SCORE][0].weight, 5);
	sx_config_free(cfg);

	cfg = parse("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
		    "profiles:\n- schedulerName: a\n  plugins:\n    filter:\n      enabled: "
		    "[{name: Bogus}]\n",
		    &err);
	CHECK(cfg == NULL);
	CHECK_STR(err.path, "profiles[0].plugins.filter.enabled[0]");
	CHECK_STR(err.msg, "name: Invalid value: \"Bogus\": unknown plugin");
	cfg = parse("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
		    "profiles:\n- schedulerName: a\n- schedulerName: a\n",
		    &err);
	CHECK(cfg == NULL);
	CHECK_STR(err.msg, "schedulerName: Duplicate value: \"a\"");
	cfg = parse("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
		    "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, "
		    "weight: -1}]\n",
		    &err);
	CHECK(cfg == NULL);
	cfg = parse("apiVersion: v1\nkind: Pod\n", &err);
	CHECK(cfg == NULL);
	CHECK_STR(err.msg, "apiVersion: must be \"kubescheduler.config.k8s.io/v1\"");
}

/* A bind job keeps the slots of binding-cycle plugins only, and the
 * snapshot only while one of them has state (the snapshot of every job in
 * flight made the peak RSS follow the API server's latency). */
static void test_trim_for_binding(void)
{
	const struct sx_snapshot *snap = (const struct sx_snapshot *)&snap; /* never read */
	struct sx_cycle_state *cs = sx_cycle_state_new(snap);

	/* NodePorts: Filter state only. */
	CHECK(sx_cycle_state_slot(cs, SX_SLOT_node_ports, 64) != NULL);
	CHECK(!sx_cycle_state_trim_for_binding(cs));
	CHECK(cs->slots[SX_SLOT_node_ports] == NULL);
	CHECK(cs->snap == NULL);
	sx_cycle_state_free(NULL, cs);

	/* DynamicResources with claims: PreBind and Unreserve read it. */
	cs = sx_cycle_state_new(snap);
	CHECK(sx_cycle_state_slot(cs, SX_SLOT_node_ports, 64) != NULL);
	CHECK(sx_cycle_state_slot(cs, SX_SLOT_dynamic_resources, 4096) != NULL);
	CHECK(sx_cycle_state_trim_for_binding(cs));
	CHECK(cs->slots[SX_SLOT_node_ports] == NULL);
	CHECK(cs->slots[SX_SLOT_dynamic_resources] != NULL);
	CHECK(cs->snap == snap);
	sx_cycle_state_free(NULL, cs);
}

SX_TESTS(SX_TEST(test_num_feasible_nodes), SX_TEST(test_trim_for_binding),
	 SX_TEST(test_fit_error_all_fail), SX_TEST(test_fit_error_sorted_as_strings),
	 SX_TEST(test_fit_error_pre_filter), SX_TEST(test_pre_filter_result),
	 SX_TEST(test_rotating_start_and_early_stop),
	 SX_TEST(test_parallel_filter_matches_sequential), SX_TEST(test_batched_filter_verdicts),
	 SX_TEST(test_batched_filter_quota), SX_TEST(test_tie_breaking),
	 SX_TEST(test_invalid_score), SX_TEST(test_nominated_pods),
	 SX_TEST(test_status_alloc_failure_is_error), SX_TEST(test_unreserve_reverse_order),
	 SX_TEST(test_bind_order), SX_TEST(test_permit_wait_allow_reject_timeout),
	 SX_TEST(test_default_config_profile), SX_TEST(test_config_profiles))
