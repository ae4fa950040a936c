/* The extender prioritize verb: raw request bodies (NodeNames and Nodes modes). */
#define VERB	    sx_extender_prioritize
#define VERB_WRITES 0
#include "extender_target.h"
