/* Kubeconfig files (YAML or JSON bytes), parsed from memory as
 * sx_kubeconfig_load does after reading the file. Invariants: a resolved
 * config has an http(s) server without a trailing '/', a context and a
 * namespace; client cert and key come together; an exec plugin is only
 * recorded (its command resolved), never run; a rejection says why. */
#include <string.h>

#include "fuzz.h"
#include "schedext/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_error err = {0};
	struct sx_kube_config cfg;
	size_t n;

	fuzz_init();
	if (sx_kubeconfig_parse((const char *)data, size, "/fuzz/kubeconfig", NULL, &cfg, &err) !=
	    0) {
		FUZZ_CHECK(err.msg[0] != '\0', "rejected without a message");
		return 0;
	}
	FUZZ_CHECK(cfg.server && (strncmp(cfg.server, "https://", 8) == 0 ||
				  strncmp(cfg.server, "http://", 7) == 0),
		   "server");
	n = strlen(cfg.server);
	FUZZ_CHECK(n == 0 || cfg.server[n - 1] != '/', "trailing slash in %s", cfg.server);
	FUZZ_CHECK(cfg.context && cfg.namespace && cfg.namespace[0] && cfg.source, "context");
	FUZZ_CHECK(!(cfg.cert_file || cfg.cert_data) == !(cfg.key_file || cfg.key_data),
		   "cert without key");
	FUZZ_CHECK(!cfg.token_file || cfg.token_file[0] == '/', "relative token file");
	/* Parsing records an exec plugin, it never runs it (the client does). */
	FUZZ_CHECK(!cfg.exec || (cfg.exec->command && cfg.exec->command[0] &&
				 cfg.exec->api_version && cfg.exec->user && cfg.exec->source),
		   "exec stanza without its command or apiVersion");
	FUZZ_CHECK(!cfg.exec || !strchr(cfg.exec->command, '/') || cfg.exec->command[0] == '/',
		   "relative exec command %s", cfg.exec ? cfg.exec->command : "");
	sx_kube_config_clear(&cfg);
	return 0;
}
