/* Between config.c and config_component.c (not for other modules). */
#ifndef SCHEDEXT_FRAMEWORK_CONFIG_INT_H
#define SCHEDEXT_FRAMEWORK_CONFIG_INT_H

#include "schedext/features.h"
#include "schedext/framework.h"

struct cJSON;

/* Reads the component part of root (strict top-level keys, clientConnection,
 * leaderElection, delayCacheUntilActive, extenders) into cfg. Adds the
 * extenders' ignoredByScheduler resources to every profile's
 * NodeResourcesFit args in root, so call it before the profiles are built.
 * Errors carry the field path. */
int sx_config_read_component(struct cJSON *root, struct sx_config *cfg, struct sx_error *err);
/* Fails with `<key>: unknown field "<key>"` on a key of obj not in known
 * (NULL-terminated): the configuration's fields are strict. */
int sx__config_strict(const struct cJSON *obj, const char *const *known, struct sx_error *err);
/* An optional string field into *out (freed first); absent, null or ""
 * leave NULL; "<key>: expected a string" otherwise. */
int sx__config_str(const struct cJSON *obj, const char *key, char **out, struct sx_error *err);
/* Strict decoding (config_strict.c): 0, or SX_EINVAL with "strict
 * decoding error: unknown field \"a.b\", ..." naming every key of root,
 * at any depth and in pluginConfig args, that release 1.<release>'s v1
 * types do not have. */
int sx__config_strict_decode(const struct cJSON *root, int release, struct sx_error *err);
/* DynamicResourcesArgs as the gates leave them (config_strict.c): a copy
 * of args (NULL: none given) with the gate-dependent defaults added
 * (SetDefaults_DynamicResourcesArgs), for the plugin's init; NULL with
 * err on a field its gate forbids (ValidateDynamicResourcesArgs) or out
 * of memory. The caller deletes the copy. */
struct cJSON *sx__config_dra_args(const struct cJSON *args, const struct sx_features *f,
				  struct sx_error *err);
/* Frees what sx_config_read_component stored (not cfg itself). */
void sx_config_component_free(struct sx_config *cfg);

#endif /* SCHEDEXT_FRAMEWORK_CONFIG_INT_H */
