/* One extender verb over a fixed small cluster (included by
 * fuzz_extender_<verb>.c with VERB set). The body is the raw HTTP request
 * body, as the server hands it to the verb.
 *
 * Invariants: the reply is exactly one JSON value; a non-200 reply is
 * {"error": "..."}; filter, prioritize and preempt never change the cache;
 * a bind that fails (non-200, or a non-empty "Error") leaves the cache
 * unchanged, and after a successful bind the cache equals its recount. */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "recount.h"
#include "schedext/buf.h"
#include "schedext/cache.h"
#include "schedext/extender.h"
#include "schedext/framework.h"
#include "schedext/state.h"

#ifndef VERB
#error "define VERB (sx_extender_filter, ...)"
#endif
#ifndef VERB_WRITES
#define VERB_WRITES 0
#endif

static const char cluster[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\",\"labels\":{\"zone\":\"z1\","
	"\"kubernetes.io/hostname\":\"a\"}},\"spec\":{\"taints\":[{\"key\":\"t\",\"value\":\"v\","
	"\"effect\":\"NoSchedule\"}]},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":"
	"\"8Gi\","
	"\"pods\":\"110\"},\"images\":[{\"names\":[\"nginx:1\"],\"sizeBytes\":1000000}]}},"
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\",\"labels\":{\"zone\":\"z2\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"110\"}}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"low\",\"namespace\":\"default\",\"uid\":\"u-"
	"low\","
	"\"labels\":{\"app\":\"x\"}},\"spec\":{\"nodeName\":\"b\",\"priority\":0,\"containers\":"
	"[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"hostPort\":80}],\"resources\":"
	"{\"requests\":{\"cpu\":\"1500m\"}}}]},\"status\":{\"phase\":\"Running\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"mid\",\"namespace\":\"default\",\"uid\":\"u-"
	"mid\"},"
	"\"spec\":{\"nodeName\":\"b\",\"priority\":5,\"containers\":[{\"name\":\"c\",\"resources\":"
	"{\"requests\":{\"cpu\":\"200m\"}}}]},\"status\":{\"phase\":\"Running\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"pend\",\"namespace\":\"default\",\"uid\":\"u-"
	"pend\"},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
	","
	"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"pdb\",\"namespace\":"
	"\"default\"},"
	"\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"x\"}}},\"status\":{"
	"\"disruptionsAllowed\":0}}"
	"]}";

static struct sx_cache *cache;
static struct sx_config *cfg;
static struct sx_extender ex;

static void load_cluster(void)
{
	struct sx_error err = {0};

	if (cache)
		sx_cache_free(cache);
	cache = sx_cache_new();
	FUZZ_CHECK(sx_state_load_buffer(cache, "cluster", cluster, sizeof(cluster) - 1, &err) == 0,
		   "%s", err.msg);
	ex.cache = cache;
}

static void setup(void)
{
	struct sx_error err = {0};

	fuzz_init();
	cfg = sx_config_default(&err);
	FUZZ_CHECK(cfg != NULL, "%s", err.msg);
	ex.cfg = cfg;
	ex.profile = sx_config_profile(cfg, NULL);
	load_cluster();
}

static void check_reply(int status, const struct sx_buf *out, uint64_t gen0)
{
	cJSON *j = cJSON_ParseWithLength(out->data, out->len);
	const cJSON *e;
	bool failed;

	FUZZ_CHECK(j != NULL, "reply is not JSON: %.*s", (int)out->len, out->data);
	if (status != 200) {
		e = cJSON_GetObjectItemCaseSensitive(j, "error");
		FUZZ_CHECK(cJSON_IsString(e) && e->valuestring[0], "status %d without error",
			   status);
	}
	e = cJSON_GetObjectItemCaseSensitive(j, "Error");
	failed = status != 200 || (cJSON_IsString(e) && e->valuestring[0]);
	cJSON_Delete(j);
	if (!VERB_WRITES || failed) {
		FUZZ_CHECK(sx_cache_generation(cache) == gen0, "cache changed (status %d)", status);
		return;
	}
	if (sx_cache_generation(cache) != gen0) {
		const char *diff = sx_recount_check(cache);

		FUZZ_CHECK(diff == NULL, "after bind: %s", diff);
		load_cluster(); /* the next input starts from the same cluster */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_verb_log log;
	struct sx_buf out;
	uint64_t gen0;
	int status;

	if (!cfg)
		setup();
	sx_buf_init(&out);
	memset(&log, 0, sizeof(log));
	gen0 = sx_cache_generation(cache);
	status = VERB(&ex, (const char *)data, size, &out, &log);
	FUZZ_CHECK(status >= 200 && status < 600, "status %d", status);
	check_reply(status, &out, gen0);
	sx_buf_free(&out);
	return 0;
}
