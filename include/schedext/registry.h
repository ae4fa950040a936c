/* The plugin registry: every built-in plugin, in plugins/plugins.def order,
 * which is kube-scheduler's default multiPoint order. A plugin's registry
 * index is its cycle state slot. Implemented in src/framework/registry.c,
 * the only file (with plugins/slots.h) that reads plugins.def.
 *
 * Threads: the registry is constant; any thread may read it.
 */
#ifndef SCHEDEXT_REGISTRY_H
#define SCHEDEXT_REGISTRY_H

#include "schedext/common.h"
#include "schedext/intern.h"
#include "schedext/status.h"

struct sx_plugin;
struct sx_pod;

/* The registry, in plugins.def order (NULL-terminated). */
extern const struct sx_plugin *const sx_plugins[];
extern const unsigned sx_plugin_count;
/* Registry index of a plugin by name, or -1. */
int sx_plugin_index(const char *name);
/* Registry index of a descriptor (pointer comparison). */
int sx_plugin_index_of(const struct sx_plugin *p);

#endif /* SCHEDEXT_REGISTRY_H */
