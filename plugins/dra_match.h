/* Device selector evaluation shared by the plugins that read DRA devices
 * (DynamicResources' allocator, the scorers of extended resources backed
 * by DRA in resource_allocation.c): a struct sx_dra_match_fn over the CEL
 * module. Implemented in plugins/helpers.c. Thread-safe: the CEL cache
 * has its own lock, evaluation allocates nothing shared. */
#ifndef SCHEDEXT_PLUGINS_DRA_MATCH_H
#define SCHEDEXT_PLUGINS_DRA_MATCH_H

#include <stddef.h>

#include "schedext/dra_alloc.h"

/* sx_dra_match_fn with ctx a struct sx_cel_cache *: compiles expr (cached)
 * and evaluates it against dev of driver. SX_DRA_MATCH, SX_DRA_NO_MATCH,
 * or SX_DRA_COMPILE_ERROR / SX_DRA_RUNTIME_ERROR with err set. */
int sx_dra_cel_match(void *cel_cache, const char *expr, sx_str driver, sx_str pool,
		     const struct sx_dra_device *dev, char *err, size_t errlen);

#endif /* SCHEDEXT_PLUGINS_DRA_MATCH_H */
