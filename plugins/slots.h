/* Registry index of every plugin, generated from plugins.def beside this
 * file: plugin foo owns cycle state slot SX_SLOT_foo (cs->slots[SX_SLOT_foo]).
 * Internal to plugins/ and their tests; the framework uses sx_plugin_count
 * and sx_plugin_index (schedext/registry.h).
 */
#ifndef SCHEDEXT_PLUGINS_SLOTS_H
#define SCHEDEXT_PLUGINS_SLOTS_H

enum sx_plugin_slot {
#define SX_PLUGIN(n) SX_SLOT_##n,
#include "plugins.def"
#undef SX_PLUGIN
	SX_SLOT_COUNT
};

#endif /* SCHEDEXT_PLUGINS_SLOTS_H */
