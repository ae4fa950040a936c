/* The state-file loader, YAML seeds (multi-document streams). */
#include "state_target.h"
