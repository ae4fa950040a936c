/* LIST response pages ({"metadata":{...},"items":[...]}), decoded and
 * reconciled into the cache as a Node and a Pod relist does. */
#define REPLAY	      sx_informer_replay_list
#define REPLAY_ATOMIC 1
#include "informer_target.h"
