/* The extender filter verb: raw request bodies (NodeNames and Nodes modes). */
#define VERB	    sx_extender_filter
#define VERB_WRITES 0
#include "extender_target.h"
