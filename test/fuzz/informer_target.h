/* Shared by the watch and list targets: the bytes of one response body,
 * replayed into a Node informer and into a Pod informer over a cache that
 * already holds a node and a pod (sx_informer_replay_*). Invariants: a
 * rejected LIST page leaves the cache unchanged; after any stream or
 * accepted page the cache equals its recount from scratch. */
#include <string.h>

#include "fuzz.h"
#include "recount.h"
#include "schedext/cache.h"
#include "schedext/informer.h"
#include "schedext/state.h"

static const char base[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"},\"status\":"
	"{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},\"images\":"
	"[{\"names\":[\"x:1\"],\"sizeBytes\":5},{\"sizeBytes\":7}]}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\"},"
	"\"spec\":{\"nodeName\":\"a\",\"containers\":[{\"name\":\"c\",\"ports\":[{"
	"\"containerPort\":"
	"80,\"hostPort\":80}],\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":"
	"{\"phase\":\"Running\"}}]}";

static void replay_into(enum sx_kind kind, const uint8_t *data, size_t size)
{
	struct sx_error err = {0};
	struct sx_cache *c = sx_cache_new();
	const char *diff;
	uint64_t gen0;
	char rv[128];
	int rc;

	FUZZ_CHECK(sx_state_load_buffer(c, "base", base, sizeof(base) - 1, &err) == 0, "%s",
		   err.msg);
	gen0 = sx_cache_generation(c);
	rc = REPLAY(c, kind, (const char *)data, size, rv, sizeof(rv));
	if (rc != 0 && REPLAY_ATOMIC)
		FUZZ_CHECK(sx_cache_generation(c) == gen0, "rejected page changed the cache");
	diff = sx_recount_check(c);
	FUZZ_CHECK(diff == NULL, "%s after %s replay: %s", sx_kind_name(kind),
		   rc ? "rejected" : "accepted", diff);
	sx_cache_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_init();
	replay_into(SX_KIND_NODE, data, size);
	replay_into(SX_KIND_POD, data, size);
	return 0;
}
