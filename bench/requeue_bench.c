/* Requeues per cluster event with 5,000 unschedulable pods:
 * every pod failed on a 1-cpu node for NodeResourcesFit (its rejectors
 * come from a real cycle), then one node event is delivered and the pods
 * it moved out of unschedulablePods are counted. Before queueing hints
 * every node event moved all of them (`before=`). One line per event:
 *   bench queue_requeues_<event> <moved> pods/event unschedulable=N
 *         before=N hint_calls=H us=T
 * Usage: requeue_bench [--pods N] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedext/cache.h"
#include "schedext/config.h"
#include "schedext/decode.h"
#include "schedext/framework.h"
#include "schedext/queue.h"

static double fake_now = 1000;

static double clock_fn(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static void *decode(const char *json, bool node)
{
	struct sx_error err = {0};
	cJSON *j = cJSON_Parse(json);
	void *o = node ? (void *)sx_decode_node(j, &err) : (void *)sx_decode_pod(j, &err);

	cJSON_Delete(j);
	if (!o) {
		fprintf(stderr, "requeue_bench: decode: %s\n", err.msg);
		exit(1);
	}
	return o;
}

static struct sx_node *make_node(const char *name, const char *cpu, const char *zone)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"zone\":\"%s\"}},\"status\":"
		 "{\"allocatable\":{\"cpu\":\"%s\",\"memory\":\"64Gi\",\"pods\":\"110\"}}}",
		 name, zone, cpu);
	return decode(buf, true);
}

static struct sx_pod *make_pod(unsigned i)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"metadata\":{\"name\":\"p%05u\",\"namespace\":\"bench\",\"uid\":\"u%u\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}]}}",
		 i, i);
	return decode(buf, false);
}

/* The rejectors of one real failed cycle on the small node. */
static struct sx_rejectors rejectors(const struct sx_config *cfg, struct sx_node *small)
{
	struct sx_cache *cache = sx_cache_new();
	struct sx_object obj = {SX_KIND_NODE, sx_node_ref(small)};
	struct sx_cycle_opts opts = {.mode = SX_CYCLE_FULL, .percentage = 100};
	struct sx_cycle_result res;
	struct sx_rejectors r = {0, 0};
	struct sx_pod *pod = make_pod(0);

	sx_cache_upsert(cache, &obj);
	opts.snap = sx_cache_snapshot(cache);
	if (sx_schedule(cfg->profiles[0], pod, &opts, &res) == 0)
		sx_rejectors_from_result(&r, &res);
	sx_cycle_result_free(&res);
	sx_snapshot_unref(opts.snap);
	sx_cache_free(cache);
	sx_pod_unref(pod);
	return r;
}

static struct sx_queue *fill(const struct sx_config *cfg, unsigned n,
			     const struct sx_rejectors *rej)
{
	struct sx_queue *q = sx_queue_new(cfg);
	struct sx_queue_item it;

	sx_queue_set_clock(q, clock_fn, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct sx_pod *pod = make_pod(i);

		sx_queue_pod_update(q, NULL, pod);
		sx_pod_unref(pod);
	}
	while (sx_queue_pop(q, 0, &it) == 0) {
		sx_queue_requeue_rejectors(q, it.pod, rej);
		sx_pod_unref(it.pod);
	}
	return q;
}

static void measure(const struct sx_config *cfg, unsigned n, const struct sx_rejectors *rej,
		    const char *label, const struct sx_node *old_node,
		    const struct sx_node *new_node)
{
	struct sx_queue *q = fill(cfg, n, rej);
	struct sx_queue_stats a, b;
	struct sx_queue_lengths l;
	double t0, dt;

	sx_queue_lengths(q, &l);
	sx_queue_stats(q, &a);
	t0 = sx_now_s();
	sx_queue_node_event(q, old_node, new_node);
	dt = sx_now_s() - t0;
	sx_queue_stats(q, &b);
	printf("bench queue_requeues_%s %llu pods/event unschedulable=%u before=%u "
	       "hint_calls=%llu us=%.0f\n",
	       label, (unsigned long long)(b.moved - a.moved), l.unschedulable, l.unschedulable,
	       (unsigned long long)(b.hint_calls - a.hint_calls), dt * 1e6);
	sx_queue_free(q);
}

int main(int argc, char **argv)
{
	struct sx_error err = {0};
	unsigned n = 5000;
	struct sx_config *cfg;
	struct sx_node *small, *relabeled, *tiny, *big;
	struct sx_rejectors rej;

	for (int i = 1; i + 1 < argc; i += 2)
		if (strcmp(argv[i], "--pods") == 0)
			n = (unsigned)atoi(argv[i + 1]);
	sx_intern_init();
	cfg = sx_config_default(&err);
	if (!cfg) {
		fprintf(stderr, "requeue_bench: %s\n", err.msg);
		return 1;
	}
	small = make_node("small", "1", "a");
	relabeled = make_node("small", "1", "b");
	tiny = make_node("tiny", "1", "a");
	big = make_node("big", "64", "a");
	rej = rejectors(cfg, small);
	measure(cfg, n, &rej, "node_label_update", small, relabeled);
	measure(cfg, n, &rej, "node_add_too_small", NULL, tiny);
	measure(cfg, n, &rej, "node_add_fitting", NULL, big);
	sx_node_unref(small);
	sx_node_unref(relabeled);
	sx_node_unref(tiny);
	sx_node_unref(big);
	sx_config_free(cfg);
	return 0;
}
