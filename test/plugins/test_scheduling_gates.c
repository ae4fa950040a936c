/* SchedulingGates, PrioritySort and DefaultBinder: the hookless-state
 * plugins, called directly. */
#include "plugin_util.h"
#include "schedext/binder.h"
#include "schedext/handle.h"
#include "schedext/registry.h"

extern const struct sx_plugin sx_plugin_scheduling_gates, sx_plugin_priority_sort,
	sx_plugin_default_binder;

static void test_gates(void)
{
	char buf[256];
	struct sx_pod *gated = tu_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[],"
				      "\"schedulingGates\":[{\"name\":\"a\"},{\"name\":\"b/c\"},"
				      "{\"name\":\"d\"}]}}");
	struct sx_pod *free_pod = tu_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");

	CHECK_STR(tu_status(sx_plugin_scheduling_gates.pre_enqueue(NULL, gated), buf, sizeof(buf)),
		  "UnschedulableAndUnresolvable: waiting for scheduling gates: [a b/c d]");
	CHECK(sx_plugin_scheduling_gates.pre_enqueue(NULL, free_pod) == NULL);
	sx_pod_unref(gated);
	sx_pod_unref(free_pod);
}

/* The explain hook: the gates left, as a phrase and an array; nothing
 * for a node (SchedulingGates rejects before any node is filtered). */
static void test_gates_explain(void)
{
	struct sx_pod *gated =
		tu_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[],"
		       "\"schedulingGates\":[{\"name\":\"a\"},{\"name\":\"b/c\"}]}}");
	struct sx_status *st = sx_plugin_scheduling_gates.pre_enqueue(NULL, gated);
	struct sx_node_info ni = {0};
	struct sx_detail d = {0};

	sx_plugin_scheduling_gates.explain(NULL, NULL, gated, NULL, st, &d);
	CHECK_STR(d.text, "2 scheduling gate(s) left: a, b/c");
	CHECK_INT(d.n, 1);
	CHECK_STR(d.members[0].name, "gates");
	CHECK(d.members[0].len == 11 &&
	      memcmp(d.json + d.members[0].off, "[\"a\",\"b/c\"]", 11) == 0);
	memset(&d, 0, sizeof(d));
	sx_plugin_scheduling_gates.explain(NULL, NULL, gated, &ni, st, &d);
	CHECK(d.n == 0 && d.text[0] == '\0');
	sx_status_free(st);
	sx_pod_unref(gated);
}

/* The detail helpers truncate rather than fail: at most SX_DETAIL_MAX
 * members, and a value that does not fit what is left of the shared
 * buffer is null. */
static void test_detail_bounds(void)
{
	static char big[sizeof(((struct sx_detail *)0)->json)];
	struct sx_detail d = {0};

	memset(big, 'x', sizeof(big));
	big[0] = '"';
	big[sizeof(big) - 2] = '"';
	sx_detail_int(&d, "n", 42);
	sx_detail_json(&d, "big", big, sizeof(big) - 1); /* one byte more than is left */
	CHECK_INT(d.n, 2);
	CHECK(d.members[1].len == 4 && memcmp(d.json + d.members[1].off, "null", 4) == 0);
	for (int i = 0; i < SX_DETAIL_MAX + 2; i++)
		sx_detail_str(&d, "s", "v");
	CHECK_INT(d.n, SX_DETAIL_MAX);
	CHECK(memcmp(d.json + d.members[2].off, "\"v\"", 3) == 0);
	CHECK(memcmp(d.json, "42", 2) == 0);
}

static void test_priority_sort(void)
{
	struct sx_pod *hi = tu_pod("{\"metadata\":{\"name\":\"h\"},\"spec\":{\"priority\":10}}");
	struct sx_pod *lo = tu_pod("{\"metadata\":{\"name\":\"l\"},\"spec\":{}}");
	struct sx_queued_pod a = {hi, 5.0}, b = {lo, 1.0}, c = {lo, 2.0}, d = {lo, 2.0};
	bool (*less)(void *, const struct sx_queued_pod *, const struct sx_queued_pod *) =
		sx_plugin_priority_sort.less;

	CHECK(less(NULL, &a, &b)); /* higher priority first, even if later */
	CHECK(!less(NULL, &b, &a));
	CHECK(less(NULL, &b, &c)); /* equal priority: earlier first */
	CHECK(!less(NULL, &c, &b));
	CHECK(!less(NULL, &c, &d) && !less(NULL, &d, &c)); /* ties unordered */
	sx_pod_unref(hi);
	sx_pod_unref(lo);
}

static int bound;

static struct sx_status *fake_binder(void *ctx, const struct sx_pod *pod, sx_str node)
{
	bound++;
	if (node == sx_intern("bad"))
		return sx_status_new(SX_UNSCHEDULABLE, "pods \"p\" is forbidden");
	return NULL;
}

static void test_default_binder(void)
{
	char buf[256];
	struct sx_pod *pod = tu_pod("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");
	const struct sx_binder binder = {.post = fake_binder};
	struct sx_cycle_state cs = {0};
	/* DefaultBinder binds with the binder of its profile's handle. */
	struct sx_handle *h = sx_handle_new(NULL, NULL);
	void *self = sx_plugin_default_binder.init(NULL, h, NULL);

	sx_handle_attach(h, &(struct sx_handle_env){.binder = &binder});
	CHECK(sx_plugin_default_binder.bind(self, &cs, pod, sx_intern("good")) == NULL);
	CHECK_STR(tu_status(sx_plugin_default_binder.bind(self, &cs, pod, sx_intern("bad")), buf,
			    sizeof(buf)),
		  "Error: pods \"p\" is forbidden");
	CHECK_INT(bound, 2);
	sx_handle_attach(h, NULL);
	CHECK_STR(tu_status(sx_plugin_default_binder.bind(self, &cs, pod, sx_intern("good")), buf,
			    sizeof(buf)),
		  "Error: no binder configured");
	/* A binder without an API server or cache binds at once. */
	sx_handle_attach(h, &(struct sx_handle_env){.binder = &(const struct sx_binder){0}});
	CHECK(sx_plugin_default_binder.bind(self, &cs, pod, sx_intern("good")) == NULL);
	/* Built without a handle (explain-style tests): no binder. */
	CHECK_STR(tu_status(sx_plugin_default_binder.bind(
				    sx_plugin_default_binder.init(NULL, NULL, NULL), &cs, pod,
				    sx_intern("good")),
			    buf, sizeof(buf)),
		  "Error: no binder configured");
	sx_handle_free(h);
	sx_pod_unref(pod);
}

SX_TESTS(SX_TEST(test_gates), SX_TEST(test_gates_explain), SX_TEST(test_detail_bounds),
	 SX_TEST(test_priority_sort), SX_TEST(test_default_binder))
