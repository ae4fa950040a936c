/* Prometheus registry: definitions, label series, histogram buckets and the
 * exact exposition text. */
#include <stdlib.h>

#include "harness.h"
#include "schedext/buf.h"
#include "schedext/common.h"
#include "schedext/features.h"
#include "schedext/framework_metrics.h"
#include "schedext/metrics.h"

static void test_counter_and_gauge(void)
{
	struct sx_metrics *m = sx_metrics_new();
	struct sx_buf b;

	sx_buf_init(&b);
	CHECK_INT(sx_metrics_define(m, "req_total", SX_METRIC_COUNTER, "Requests.", NULL, 0), 0);
	CHECK_INT(sx_metrics_define(m, "req_total", SX_METRIC_COUNTER, "again", NULL, 0),
		  SX_EEXIST);
	CHECK_INT(sx_metrics_define(m, "nodes", SX_METRIC_GAUGE, "Nodes.", NULL, 0), 0);
	sx_metrics_inc(m, "req_total", "verb=\"filter\",code=\"200\"", 2);
	sx_metrics_inc(m, "req_total", "verb=\"filter\",code=\"200\"", 1);
	sx_metrics_inc(m, "req_total", "verb=\"bind\",code=\"400\"", 1);
	sx_metrics_inc(m, "undefined_total", NULL, 1); /* ignored */
	sx_metrics_observe(m, "req_total", NULL, 1);   /* wrong type: ignored */
	sx_metrics_set(m, "nodes", NULL, 6);
	sx_metrics_set(m, "nodes", NULL, 5);
	CHECK(sx_metrics_value(m, "req_total", "verb=\"filter\",code=\"200\"") == 3);
	CHECK(sx_metrics_value(m, "nodes", "") == 5);
	sx_metrics_render(m, &b);
	CHECK_STR(sx_buf_cstr(&b), "# HELP req_total Requests.\n"
				   "# TYPE req_total counter\n"
				   "req_total{verb=\"filter\",code=\"200\"} 3\n"
				   "req_total{verb=\"bind\",code=\"400\"} 1\n"
				   "# HELP nodes Nodes.\n"
				   "# TYPE nodes gauge\n"
				   "nodes 5\n");
	sx_buf_free(&b);
	sx_metrics_free(m);
}

static void test_histogram(void)
{
	static const double bounds[] = {0.01, 0.1, 1};
	struct sx_metrics *m = sx_metrics_new();
	struct sx_buf b;

	sx_buf_init(&b);
	CHECK_INT(sx_metrics_define(m, "lat_seconds", SX_METRIC_HISTOGRAM, "Latency.", bounds, 3),
		  0);
	sx_metrics_observe(m, "lat_seconds", "verb=\"filter\"", 0.005);
	sx_metrics_observe(m, "lat_seconds", "verb=\"filter\"", 0.05);
	sx_metrics_observe(m, "lat_seconds", "verb=\"filter\"", 0.1); /* le is inclusive */
	sx_metrics_observe(m, "lat_seconds", "verb=\"filter\"", 7);
	sx_metrics_render(m, &b);
	CHECK_STR(sx_buf_cstr(&b), "# HELP lat_seconds Latency.\n"
				   "# TYPE lat_seconds histogram\n"
				   "lat_seconds_bucket{verb=\"filter\",le=\"0.01\"} 1\n"
				   "lat_seconds_bucket{verb=\"filter\",le=\"0.1\"} 3\n"
				   "lat_seconds_bucket{verb=\"filter\",le=\"1\"} 3\n"
				   "lat_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 4\n"
				   "lat_seconds_sum{verb=\"filter\"} 7.155\n"
				   "lat_seconds_count{verb=\"filter\"} 4\n");
	CHECK(sx_metrics_value(m, "lat_seconds", "verb=\"filter\"") == 4);
	sx_buf_free(&b);
	sx_metrics_free(m);
}

static void test_series_cap_and_escape(void)
{
	struct sx_metrics *m = sx_metrics_new();
	char labels[64], esc[32];

	sx_metrics_define(m, "x_total", SX_METRIC_COUNTER, "X.", NULL, 0);
	for (int i = 0; i < SX_METRICS_MAX_SERIES + 10; i++) {
		snprintf(labels, sizeof(labels), "i=\"%d\"", i);
		sx_metrics_inc(m, "x_total", labels, 1);
	}
	CHECK(sx_metrics_value(m, "x_total", "i=\"0\"") == 1);
	snprintf(labels, sizeof(labels), "i=\"%d\"", SX_METRICS_MAX_SERIES + 5);
	CHECK(sx_metrics_value(m, "x_total", labels) == 0); /* past the cap: dropped */
	CHECK_STR(sx_metrics_label_escape("a\"b\\c\nd", esc, sizeof(esc)), "a\\\"b\\\\c\\nd");
	sx_metrics_free(m);
}

/* A touched series renders at 0 (a histogram with empty buckets) and
 * keeps counting from there; touching again changes nothing. */
static void test_touch(void)
{
	static const double b[] = {1, 2};
	struct sx_metrics *m = sx_metrics_new();
	struct sx_buf out;

	sx_metrics_define(m, "c_total", SX_METRIC_COUNTER, "c", NULL, 0);
	sx_metrics_define(m, "h", SX_METRIC_HISTOGRAM, "h", b, 2);
	sx_metrics_touch(m, "c_total", "r=\"x\"");
	sx_metrics_touch(m, "h", NULL);
	sx_metrics_touch(m, "unknown", NULL);
	sx_metrics_inc(m, "c_total", "r=\"x\"", 2);
	sx_metrics_touch(m, "c_total", "r=\"x\"");
	sx_buf_init(&out);
	sx_metrics_render(m, &out);
	CHECK_STR(out.data,
		  "# HELP c_total c\n# TYPE c_total counter\nc_total{r=\"x\"} 2\n"
		  "# HELP h h\n# TYPE h histogram\nh_bucket{le=\"1\"} 0\nh_bucket{le=\"2\"} 0\n"
		  "h_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n");
	sx_buf_free(&out);
	sx_metrics_free(m);
}

/* component-base's help annotations (opts.go markDeprecated, then
 * annotateStabilityLevel) and registry.go shouldHide for a 1.37 binary. */
static void test_kube_stability(void)
{
	struct sx_metrics *m = sx_metrics_new();
	struct sx_buf b;

	sx_buf_init(&b);
	CHECK_INT(sx_metrics_define_kube(m, "a_total", SX_METRIC_COUNTER, SX_STABILITY_BETA, NULL,
					 "A.", NULL, 0),
		  0);
	CHECK_INT(sx_metrics_define_kube(m, "b_total", SX_METRIC_COUNTER, SX_STABILITY_ALPHA,
					 "1.37.0", "B.", NULL, 0),
		  0);
	CHECK_INT(sx_metrics_define_kube(m, "c_total", SX_METRIC_COUNTER, SX_STABILITY_NONE, NULL,
					 "C.", NULL, 0),
		  0);
	sx_metrics_render(m, &b);
	CHECK_STR(sx_buf_cstr(&b), "# HELP a_total [BETA] A.\n# TYPE a_total counter\n"
				   "# HELP b_total [ALPHA] (Deprecated since 1.37.0) B.\n"
				   "# TYPE b_total counter\n"
				   "# HELP c_total C.\n# TYPE c_total counter\n");
	sx_buf_free(&b);
	sx_metrics_free(m);
	CHECK(!sx_fw_metrics_hidden(NULL));
	CHECK(!sx_fw_metrics_hidden("1.37.0")); /* deprecated this release: shown */
	CHECK(sx_fw_metrics_hidden("1.36.0"));	/* a release before: hidden */
	CHECK(!sx_fw_metrics_hidden("1.38.0"));
}

/* The gated families of 1.37 follow the configuration's gates. */
static void test_scheduler_families_gated(void)
{
	struct sx_features f;
	struct sx_error err = {0};
	struct sx_metrics *on = sx_metrics_new(), *off = sx_metrics_new();
	struct sx_buf a, b;

	sx_buf_init(&a);
	sx_buf_init(&b);
	sx_features_init(&f, 37);
	sx_fw_metrics_define(on, &f);
	CHECK_INT(sx_features_set(&f, "SchedulerAsyncPreemption=false", &err), 0);
	sx_fw_metrics_define(off, &f);
	sx_metrics_render(on, &a);
	sx_metrics_render(off, &b);
	CHECK(strstr(sx_buf_cstr(&a), "# TYPE scheduler_preemption_goroutines_duration_seconds "));
	CHECK(!strstr(sx_buf_cstr(&b), "scheduler_preemption_goroutines_duration_seconds"));
	CHECK(strstr(sx_buf_cstr(&a),
		     "# TYPE dynamic_resource_allocation_resourceclaim_creates_total counter"));
	CHECK(strstr(sx_buf_cstr(&a), "# HELP scheduler_cache_size [ALPHA] "));
	CHECK(!strstr(sx_buf_cstr(&a), "scheduler_scheduler_cache_size"));
	sx_buf_free(&a);
	sx_buf_free(&b);
	sx_metrics_free(on);
	sx_metrics_free(off);
}

/* Handles: declared once, found again, updated without a name lookup. */
static void test_handles(void)
{
	struct sx_metrics *m = sx_metrics_new();
	struct sx_metric *c, *h;
	const double b[] = {1};
	struct sx_buf out;

	sx_buf_init(&out);
	c = sx_metrics_family(m, "c_total", SX_METRIC_COUNTER, "C.", NULL, 0);
	CHECK(c != NULL);
	CHECK(sx_metrics_family(m, "c_total", SX_METRIC_COUNTER, "again", NULL, 0) == c);
	CHECK(sx_metrics_family(m, "c_total", SX_METRIC_GAUGE, "clash", NULL, 0) == NULL);
	CHECK(sx_metrics_find(m, "c_total") == c);
	CHECK(sx_metrics_find(m, "nope") == NULL);
	CHECK(sx_metrics_family(NULL, "x", SX_METRIC_GAUGE, "x", NULL, 0) == NULL);
	h = sx_metrics_family(m, "h", SX_METRIC_HISTOGRAM, "H.", b, 1);
	sx_metric_inc(c, "r=\"a\"", 2);
	sx_metric_inc(c, "r=\"a\"", 1);
	sx_metric_observe(h, NULL, 0.5);
	sx_metric_observe(c, NULL, 0.5); /* wrong type: ignored */
	sx_metric_inc(NULL, NULL, 1);	 /* no handle: ignored */
	CHECK(sx_metrics_value(m, "c_total", "r=\"a\"") == 3);
	CHECK(sx_metric_value(h, NULL) == 1);
	CHECK(sx_metric_value(NULL, NULL) == 0);
	sx_metrics_render(m, &out);
	CHECK_STR(sx_buf_cstr(&out),
		  "# HELP c_total C.\n# TYPE c_total counter\nc_total{r=\"a\"} 3\n"
		  "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\n"
		  "h_bucket{le=\"+Inf\"} 1\nh_sum 0.5\nh_count 1\n");
	sx_buf_free(&out);
	sx_metrics_free(m);
}

SX_TESTS(SX_TEST(test_handles), SX_TEST(test_counter_and_gauge), SX_TEST(test_histogram),
	 SX_TEST(test_series_cap_and_escape), SX_TEST(test_touch), SX_TEST(test_kube_stability),
	 SX_TEST(test_scheduler_families_gated))
