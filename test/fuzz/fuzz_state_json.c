/* The state-file loader, JSON seeds (a v1 List, kubectl get -o json). */
#include "state_target.h"
