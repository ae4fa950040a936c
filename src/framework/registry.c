/* The plugin registry, generated from plugins/plugins.def. */
#include <string.h>

#include "schedext/plugin.h"
#include "schedext/registry.h"

#define SX_PLUGIN(n) extern const struct sx_plugin sx_plugin_##n;
#include "../../plugins/plugins.def"
#undef SX_PLUGIN

const struct sx_plugin *const sx_plugins[] = {
#define SX_PLUGIN(n) &sx_plugin_##n,
#include "../../plugins/plugins.def"
#undef SX_PLUGIN
	NULL,
};

#define NPLUGINS (sizeof(sx_plugins) / sizeof(sx_plugins[0]) - 1)

const unsigned sx_plugin_count = NPLUGINS;

_Static_assert(NPLUGINS <= SX_MAX_PLUGINS, "raise SX_MAX_PLUGINS");

int sx_plugin_index(const char *name)
{
	for (unsigned i = 0; i < NPLUGINS; i++)
		if (strcmp(sx_plugins[i]->name, name) == 0)
			return (int)i;
	return -1;
}

int sx_plugin_index_of(const struct sx_plugin *p)
{
	for (unsigned i = 0; i < NPLUGINS; i++)
		if (sx_plugins[i] == p)
			return (int)i;
	return -1;
}
