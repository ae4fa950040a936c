/* CEL device selector expressions (DeviceClass/ResourceClaim selectors).
 * Invariants: compiling is deterministic (same program or same message);
 * a rejected expression has a message; an accepted one evaluates twice to
 * the same answer, within the cost limit unless it reports the overrun. */
#include <string.h>

#include "fuzz.h"
#include "schedext/cel.h"

static const struct sx_cel_attr attrs[] = {
	{.name = "model", .type = SX_CEL_ATTR_STRING, .s = "a100"},
	{.name = "cores", .type = SX_CEL_ATTR_INT, .i = 108},
	{.name = "healthy", .type = SX_CEL_ATTR_BOOL, .b = true},
	{.name = "version", .type = SX_CEL_ATTR_VERSION, .s = "1.2.3-rc.1"},
	{.name = "other.example.com/pcie", .type = SX_CEL_ATTR_STRING, .s = "gen4"},
};

static const struct sx_cel_capacity caps[] = {
	{.name = "memory", .value = (sx_nano)40 * 1073741824 * SX_NANO_PER_UNIT},
};

static const struct sx_cel_device dev = {
	.driver = "dra.example.com",
	.attrs = attrs,
	.n_attrs = sizeof(attrs) / sizeof(attrs[0]),
	.caps = caps,
	.n_caps = 1,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char e1[SX_CEL_ERR_LEN] = "", e2[SX_CEL_ERR_LEN] = "";
	struct sx_cel_program *p, *q;
	bool r1 = false, r2 = false;
	uint64_t c1 = 0, c2 = 0;
	int rc1, rc2;

	fuzz_init();
	p = sx_cel_compile((const char *)data, size, e1, sizeof(e1));
	q = sx_cel_compile((const char *)data, size, e2, sizeof(e2));
	FUZZ_CHECK(!p == !q, "compiled once only");
	if (!p) {
		FUZZ_CHECK(e1[0] != '\0', "rejected without a message");
		FUZZ_CHECK(strcmp(e1, e2) == 0, "two messages: %s / %s", e1, e2);
		return 0;
	}
	rc1 = sx_cel_eval_device(p, &dev, &r1, &c1, e1, sizeof(e1));
	rc2 = sx_cel_eval_device(q, &dev, &r2, &c2, e2, sizeof(e2));
	FUZZ_CHECK(rc1 == rc2 && c1 == c2, "rc %d/%d cost %llu/%llu", rc1, rc2,
		   (unsigned long long)c1, (unsigned long long)c2);
	if (rc1 == 0) {
		FUZZ_CHECK(r1 == r2, "two answers");
		FUZZ_CHECK(c1 <= SX_CEL_MAX_COST, "cost %llu over the limit",
			   (unsigned long long)c1);
	} else {
		FUZZ_CHECK(e1[0] != '\0' && strcmp(e1, e2) == 0, "messages %s / %s", e1, e2);
	}
	sx_cel_program_unref(p);
	sx_cel_program_unref(q);
	return 0;
}
