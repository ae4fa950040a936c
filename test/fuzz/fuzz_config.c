/* The KubeSchedulerConfiguration loader (--config), YAML or JSON bytes.
 * Invariant: a loaded configuration has a first profile; a rejected one
 * says why. */
#include "fuzz.h"
#include "schedext/framework.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_error err = {0};
	struct sx_config *cfg;

	fuzz_init();
	cfg = sx_config_parse((const char *)data, size, &err);
	if (!cfg) {
		FUZZ_CHECK(err.msg[0] != '\0', "rejected without a message");
		return 0;
	}
	FUZZ_CHECK(sx_config_profile(cfg, NULL) != NULL, "no profile");
	sx_config_free(cfg);
	return 0;
}
