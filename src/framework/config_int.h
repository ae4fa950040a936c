/* Between config.c and config_component.c (not for other modules). */
#ifndef SCHEDEXT_FRAMEWORK_CONFIG_INT_H
#define SCHEDEXT_FRAMEWORK_CONFIG_INT_H

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
/* Frees what sx_config_read_component stored (not cfg itself). */
void sx_config_component_free(struct sx_config *cfg);

#endif /* SCHEDEXT_FRAMEWORK_CONFIG_INT_H */
