/* The extender bind verb: raw request bodies (NodeNames and Nodes modes). */
#define VERB	    sx_extender_bind
#define VERB_WRITES 1
#include "extender_target.h"
