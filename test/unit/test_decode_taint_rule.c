/* resource.k8s.io/v1 DeviceTaintRule (src/api/decode_taint_rule.c): the
 * decoder's fields and errors, and rules reaching the cache and its
 * snapshot through the informer's LIST and WATCH paths. */
#include <string.h>

#include "harness.h"
#include "schedext/cache.h"
#include "schedext/common.h"
#include "schedext/decode.h"
#include "schedext/dra.h"
#include "schedext/informer.h"
#include "schedext/snapshot.h"
#include "unit/test_decode_parse.h"

static struct sx_device_taint_rule *dec(const char *text, struct sx_error *err)
{
	cJSON *j = parse(text);
	struct sx_object o;
	int rc = sx_decode_object(j, NULL, &o, err);

	cJSON_Delete(j);
	return rc == 0 ? o.obj : NULL;
}

static void test_fields(void)
{
	struct sx_error err = {0};
	struct sx_device_taint_rule *r = dec(
		"{'kind':'DeviceTaintRule','apiVersion':'resource.k8s.io/v1',"
		"'metadata':{'name':'gpu-maintenance','resourceVersion':'4'},"
		"'spec':{'deviceSelector':{'driver':'gpu.example.com','pool':'node-a'},"
		"'taint':{'key':'example.com/maintenance','value':'planned','effect':'NoExecute',"
		"'timeAdded':'2026-01-02T03:04:05Z'}},'status':{'conditions':[]}}",
		&err);

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_STR(r->meta.name, "gpu-maintenance");
	CHECK(r->has_selector);
	CHECK_STR(sx_str_get(r->driver), "gpu.example.com");
	CHECK_STR(sx_str_get(r->pool), "node-a");
	CHECK(r->device == SX_STR_EMPTY);
	CHECK_STR(sx_str_get(r->key), "example.com/maintenance");
	CHECK_STR(sx_str_get(r->value), "planned");
	CHECK_STR(sx_str_get(r->effect), "NoExecute");
	CHECK(r->has_time_added);
	CHECK(r->time_added == 1767323045);
	sx_device_taint_rule_unref(r);

	/* no selector: no device; an effect this version does not know is kept */
	r = dec("{'kind':'DeviceTaintRule','metadata':{'name':'r'},"
		"'spec':{'taint':{'key':'k','effect':'Drain'}}}",
		&err);
	CHECK(r != NULL);
	if (r) {
		CHECK(!r->has_selector);
		CHECK_STR(sx_str_get(r->effect), "Drain");
		CHECK(!r->has_time_added);
		sx_device_taint_rule_unref(r);
	}
}

static void expect_error(const char *text, const char *path)
{
	struct sx_error err = {0};

	CHECK(dec(text, &err) == NULL);
	CHECK_STR(err.path, path);
}

static void test_errors(void)
{
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},'spec':{}}", "spec.taint");
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},"
		     "'spec':{'taint':{'effect':'NoSchedule'}}}",
		     "spec.taint.key");
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},"
		     "'spec':{'taint':{'key':'k'}}}",
		     "spec.taint.effect");
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},"
		     "'spec':{'taint':{'key':1,'effect':'None'}}}",
		     "spec.taint.key");
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},"
		     "'spec':{'deviceSelector':{'pool':[]},'taint':{'key':'k','effect':'None'}}}",
		     "spec.deviceSelector.pool");
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},"
		     "'spec':{'taint':{'key':'k','effect':'None','timeAdded':'yesterday'}}}",
		     "spec.taint.timeAdded");
	expect_error("{'kind':'DeviceTaintRule','metadata':{'name':'r'},'spec':[]}", "spec");
}

#define RULE(name, effect)                                                                         \
	"{\"kind\":\"DeviceTaintRule\",\"metadata\":{\"name\":\"" name "\","                       \
	"\"resourceVersion\":\"9\"},\"spec\":{\"taint\":{\"key\":\"k\",\"effect\":\"" effect       \
	"\"}}}"

static uint32_t cached(struct sx_cache *c)
{
	struct sx_cache_stats st;

	sx_cache_stats(c, &st);
	return st.objects[SX_KIND_DEVICE_TAINT_RULE];
}

/* LIST, then WATCH events: the informer's own paths into the cache. */
static void test_informer(void)
{
	static const char list[] = "{\"kind\":\"DeviceTaintRuleList\",\"metadata\":"
				   "{\"resourceVersion\":\"10\"},\"items\":[" RULE(
					   "a", "NoSchedule") "," RULE("b", "None") "]}";
	static const char watch[] = "{\"type\":\"MODIFIED\",\"object\":" RULE(
		"a", "NoExecute") "}\n{\"type\":\"DELETED\",\"object\":" RULE("b", "None") "}\n";
	struct sx_cache *c = sx_cache_new();
	struct sx_snapshot *s;
	char rv[64];

	CHECK_INT(sx_informer_replay_list(c, SX_KIND_DEVICE_TAINT_RULE, list, strlen(list), rv,
					  sizeof(rv)),
		  0);
	CHECK_STR(rv, "10");
	CHECK_INT(cached(c), 2);
	CHECK_INT(sx_informer_replay_watch(c, SX_KIND_DEVICE_TAINT_RULE, watch, strlen(watch), rv,
					   sizeof(rv)),
		  0);
	CHECK_INT(cached(c), 1);
	s = sx_cache_snapshot(c);
	CHECK_INT(s->ndevice_taint_rules, 1);
	if (s->ndevice_taint_rules == 1) {
		CHECK_STR(s->device_taint_rules[0]->meta.name, "a");
		CHECK_STR(sx_str_get(s->device_taint_rules[0]->effect), "NoExecute");
	}
	sx_snapshot_unref(s);
	sx_cache_free(c);
}

static void setup_suite(void) __attribute__((constructor));
static void setup_suite(void)
{
	sx_intern_init();
	sx_log_verbosity = -1;
}

SX_TESTS(SX_TEST(test_fields), SX_TEST(test_errors), SX_TEST(test_informer))
