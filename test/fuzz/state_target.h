/* The state-file loader (--state) over a cache already holding a small
 * cluster; the input is the file's bytes. Invariants: a rejected file
 * leaves the cache unchanged (all or nothing); an accepted one leaves a
 * cache equal to its recount from scratch. */
#include <string.h>

#include "fuzz.h"
#include "recount.h"
#include "schedext/cache.h"
#include "schedext/state.h"

static const char base[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"},\"status\":{\"allocatable\":"
	"{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},\"images\":[{\"names\":[\"x:1\"],"
	"\"sizeBytes\":5}]}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\"},"
	"\"spec\":{\"nodeName\":\"a\",\"containers\":[{\"name\":\"c\",\"resources\":"
	"{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_error err = {0};
	struct sx_cache *c;
	uint64_t gen0;
	const char *diff;

	fuzz_init();
	c = sx_cache_new();
	FUZZ_CHECK(sx_state_load_buffer(c, "base", base, sizeof(base) - 1, &err) == 0, "%s",
		   err.msg);
	gen0 = sx_cache_generation(c);
	if (sx_state_load_buffer(c, "fuzz", (const char *)data, size, &err) != 0) {
		FUZZ_CHECK(sx_cache_generation(c) == gen0, "rejected file changed the cache");
		FUZZ_CHECK(err.msg[0] != '\0', "rejected without a message");
	} else {
		diff = sx_recount_check(c);
		FUZZ_CHECK(diff == NULL, "after load: %s", diff);
	}
	sx_cache_free(c);
	return 0;
}
